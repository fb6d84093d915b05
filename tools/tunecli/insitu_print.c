/* tunecli tune's report of the in-situ pass (insitu_print.h). */
#include "insitu_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *short_algo(const tsl_record *r) {
  const char *a = strchr(r->algorithm, '.'); /* FAMILY.ALGO: the family is the layer's */
  return a ? a + 1 : r->algorithm;
}

/* The in-model cost per layer: the default, the isolated records' choice and the
 * verified choice (us per call; a layer's steps all run its kernel), then sums over
 * the model's conv steps. */
void tunecli_print_insitu(const tsl_insitu_result *res, int window) {
  printf("\nin situ: per-layer cost measured inside the model (us per call, fastest of the runs; %d variants, "
         "%.1f s)\n",
         res->variants, res->seconds);
  printf("%-4s %-26s %-24s %-24s %-24s %8s\n", "#", "layer", "default", "isolated choice", "in-model choice",
         "vs dflt");
  double sum[3] = {0, 0, 0}, *rho = calloc((size_t)(res->nlayers > 0 ? res->nlayers : 1), sizeof *rho);
  int changed = 0, nrho = 0;
  for (int l = 0; l < res->nlayers && rho; l++) {
    const tsl_insitu_layer *L = &res->layers[l];
    if (L->ncand < 2) continue;
    const tsl_insitu_candidate *c3[3] = {&L->cand[0], &L->cand[L->isolated_choice], &L->cand[L->chosen]};
    char col[3][48];
    for (int k = 0; k < 3; k++) {
      snprintf(col[k], sizeof col[k], "%-12.12s %9.1f", short_algo(&c3[k]->rec), c3[k]->model_cost * 1e6);
      sum[k] += c3[k]->model_cost * L->steps;
    }
    changed += L->chosen != L->isolated_choice;
    printf("%-4d %-26.26s %-24s %-24s %-24s %7.2fx%s\n", l, L->node, col[0], col[1], col[2],
           c3[0]->model_cost / c3[2]->model_cost, L->chosen != L->isolated_choice ? "  (changed)" : "");
    if (L->checked)
      printf("     final plan (its steps and the %d after each): default %.1f us, %s %.1f us: %s\n", window,
             L->final_cost[0] * 1e6, short_algo(&L->cand[L->mixed_choice].rec), L->final_cost[1] * 1e6,
             L->chosen ? "kept" : "back to the default");
    for (int c = 1; c < L->ncand; c++)
      if (c != L->isolated_choice && c != L->chosen && (c != L->mixed_choice || !L->checked))
        printf("     also measured: %s %.1f us (isolated %.1f us)\n", short_algo(&L->cand[c].rec),
               L->cand[c].model_cost * 1e6, L->cand[c].isolated_cost * 1e6);
    if (L->rank_pairs >= 3) {
      printf("     isolated vs in-model rank: Spearman %.2f over %d candidates\n", L->rank_corr, L->rank_pairs);
      int j = nrho++;
      for (; j > 0 && rho[j - 1] > L->rank_corr; j--) rho[j] = rho[j - 1];
      rho[j] = L->rank_corr;
    }
  }
  if (nrho > 0)
    printf("isolated vs in-model rank: median Spearman %.2f over %d layers with 3+ candidates\n",
           nrho % 2 ? rho[nrho / 2] : (rho[nrho / 2 - 1] + rho[nrho / 2]) / 2, nrho);
  printf("sum over the conv steps, in the model: default %.3f ms, isolated choice %.3f ms (%.2fx), in-model choice "
         "%.3f ms (%.2fx); %d layers changed by the pass, %d in-model records written\n",
         sum[0] * 1e3, sum[1] * 1e3, sum[0] / sum[1], sum[2] * 1e3, sum[0] / sum[2], changed, res->records_written);
  if (res->checked > 0)
    printf("final-plan check: %d layers measured in the plan of every layer's choice, %d of them sent back to the "
           "default\n", res->checked, res->reverted);
  free(rho);
}

