/* `tunecli report --model`: default vs tuned, per layer and end to end (report_model.h). */
#include "report_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_args.h"
#include "tessel/runtime.h"
#include "tessel/tessel.h"

static double min_of(const double *x, int n) {
  double m = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] < m) m = x[i];
  return m;
}

/* Splits a step label "NODE [TEMPLATE]" into its node and template ("" when none). */
static void split_label(const char *label, char *node, size_t nn, char *tpl, size_t nt) {
  const char *br = strstr(label, " [");
  size_t len = br ? (size_t)(br - label) : strlen(label);
  snprintf(node, nn, "%.*s", (int)len, label);
  tpl[0] = '\0';
  if (br) {
    const char *end = strchr(br + 2, ']');
    snprintf(tpl, nt, "%.*s", (int)(end ? end - (br + 2) : (long)strlen(br + 2)), br + 2);
  }
}

/* The node index of every step of c in t->nodes (added when new); variant 0/1 says
 * which template field a conv step fills. -1 when out of memory. */
static int map_steps(const tsl_compiled *c, int variant, report_model_times *t, int *cap, int *map) {
  int ns = tsl_compiled_num_steps(c);
  for (int s = 0; s < ns; s++) {
    char node[128], tpl[96];
    split_label(tsl_compiled_step_label(c, s), node, sizeof node, tpl, sizeof tpl);
    int i = 0;
    while (i < t->nnodes && strcmp(t->nodes[i].node, node) != 0) i++;
    if (i == t->nnodes) {
      if (t->nnodes == *cap) {
        int nc = *cap ? 2 * *cap : 64;
        report_node_time *nn = realloc(t->nodes, (size_t)nc * sizeof *nn);
        if (!nn) return -1;
        t->nodes = nn;
        *cap = nc;
      }
      memset(&t->nodes[i], 0, sizeof t->nodes[i]);
      snprintf(t->nodes[i].node, sizeof t->nodes[i].node, "%s", node);
      t->nodes[i].default_s = t->nodes[i].tuned_s = NAN;
      t->nnodes++;
    }
    if (tpl[0]) {
      t->nodes[i].conv = true;
      snprintf(variant ? t->nodes[i].tpl_tuned : t->nodes[i].tpl_default, sizeof t->nodes[i].tpl_tuned, "%s", tpl);
    }
    map[s] = i;
  }
  return 0;
}

/* Random inputs (seeded, in [-1, 1)) for every input of c, set on ctx. */
static tsl_status set_inputs(const tsl_compiled *c, tsl_context *ctx) {
  tsl_status st = TSL_OK;
  for (int i = 0; i < tsl_compiled_num_inputs(c) && st == TSL_OK; i++) {
    int ndim = 0;
    int64_t shape[TSL_MAX_NDIM];
    tsl_dtype dt;
    size_t bytes = 0;
    tsl_tensor *in = NULL;
    st = tsl_compiled_input_info(c, i, NULL, &dt, &ndim, shape, &bytes);
    if (st == TSL_OK) st = tsl_tensor_new(dt, ndim, shape, &in);
    if (st == TSL_OK) st = tsl_tensor_fill_random(in, (uint64_t)i + 1, -1.0, 1.0);
    if (st == TSL_OK) st = tsl_context_set_input(ctx, i, in->data, bytes);
    tsl_tensor_free(in);
  }
  return st;
}

tsl_status report_model_measure(const char *model, const char *target, const char *records, int runs,
                                report_model_times *out) {
  memset(out, 0, sizeof *out);
  if (runs < 1) return tsl_error(TSL_ERR_INVALID, "report: --runs must be >= 1 (got %d)", runs);
  tsl_model *m = NULL;
  tsl_compiled *c[2] = {NULL, NULL};
  tsl_context *ctx[2] = {NULL, NULL};
  int *map[2] = {NULL, NULL}, ns[2] = {0, 0}, cap = 0;
  double *step_s[2] = {NULL, NULL}, *node_s[2] = {NULL, NULL}, *e2e[2] = {NULL, NULL};
  tsl_status st = tsl_model_load(model, &m);
  for (int k = 0; k < 2 && st == TSL_OK; k++) {
    st = tsl_model_compile(m, target, k ? records : NULL, &c[k]);
    if (st == TSL_OK) st = tsl_context_new(c[k], &ctx[k]);
    /* both plans claim alike on every run (the automatic choice could differ) */
    if (st == TSL_OK) st = tsl_context_set_claims(ctx[k], TSL_CLAIMS_ALWAYS);
    if (st == TSL_OK) st = set_inputs(c[k], ctx[k]);
    if (st != TSL_OK) break;
    ns[k] = tsl_compiled_num_steps(c[k]);
    map[k] = malloc((size_t)(ns[k] ? ns[k] : 1) * sizeof *map[k]);
    step_s[k] = malloc((size_t)(ns[k] ? ns[k] : 1) * sizeof *step_s[k]);
    e2e[k] = malloc((size_t)runs * sizeof *e2e[k]);
    if (!map[k] || !step_s[k] || !e2e[k] || map_steps(c[k], k, out, &cap, map[k]) != 0)
      st = tsl_error(TSL_ERR_NOMEM, "report: out of memory");
  }
  for (int k = 0; k < 2 && st == TSL_OK; k++) {
    node_s[k] = calloc((size_t)out->nnodes * (size_t)runs + 1, sizeof *node_s[k]);
    if (!node_s[k]) st = tsl_error(TSL_ERR_NOMEM, "report: out of memory");
    for (int w = 0; w < 2 && st == TSL_OK; w++) st = tsl_context_run(ctx[k]);
  }
  for (int r = 0; r < runs && st == TSL_OK; r++)
    for (int j = 0; j < 2 && st == TSL_OK; j++) {
      int k = (r + j) % 2; /* rotate which goes first */
      double t0 = tsl_time_now();
      st = tsl_context_run_profiled(ctx[k], step_s[k]);
      e2e[k][r] = tsl_time_now() - t0;
      for (int s = 0; s < ns[k] && st == TSL_OK; s++) node_s[k][(size_t)map[k][s] * (size_t)runs + (size_t)r] += step_s[k][s];
    }
  if (st == TSL_OK) {
    bool present[2];
    for (int i = 0; i < out->nnodes; i++) {
      present[0] = present[1] = false;
      for (int k = 0; k < 2; k++)
        for (int s = 0; s < ns[k]; s++) present[k] |= map[k][s] == i;
      /* the fastest run: the load of a shared machine only ever slows a run down
         (tuner/records.h, tsl_record_cost) */
      out->nodes[i].default_s = present[0] ? min_of(node_s[0] + (size_t)i * (size_t)runs, runs) : NAN;
      out->nodes[i].tuned_s = present[1] ? min_of(node_s[1] + (size_t)i * (size_t)runs, runs) : NAN;
    }
    out->runs = runs;
    out->threads = tsl_get_num_threads();
    out->e2e_default_s = tunecli_median_sort(e2e[0], runs); /* sorted: [0] is the fastest */
    out->e2e_default_min_s = e2e[0][0];
    out->e2e_tuned_s = tunecli_median_sort(e2e[1], runs);
    out->e2e_tuned_min_s = e2e[1][0];
    out->kernels = tsl_compiled_num_kernels(c[1]);
    out->tuned_kernels = tsl_compiled_num_tuned_kernels(c[1]);
  } else {
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error()); /* tsl_error reuses its buffer */
    st = tsl_error(st, "report: model %s: %s", model, why);
  }
  for (int k = 0; k < 2; k++) {
    free(map[k]);
    free(step_s[k]);
    free(node_s[k]);
    free(e2e[k]);
    tsl_context_free(ctx[k]);
    tsl_compiled_free(c[k]);
  }
  tsl_model_free(m);
  if (st != TSL_OK) report_model_times_clear(out);
  return st;
}

void report_model_times_clear(report_model_times *t) {
  free(t->nodes);
  memset(t, 0, sizeof *t);
}
