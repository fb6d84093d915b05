/* Readers of a value (uses.h). */
#include "models/passes/uses.h"

int tsl_pass_count_uses(const tsl_graph *g, int v, const bool *dead) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead && dead[i]) continue;
    for (int k = 0; k < g->nodes[i].n_inputs; k++) n += g->nodes[i].inputs[k] == v;
  }
  for (int o = 0; o < g->n_outputs; o++) n += g->outputs[o] == v;
  return n;
}

int tsl_pass_single_user(const tsl_graph *g, int v, const bool *dead) {
  for (int o = 0; o < g->n_outputs; o++)
    if (g->outputs[o] == v) return -1;
  int user = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead && dead[i]) continue;
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) {
        if (user >= 0) return -1;
        user = i;
      }
  }
  return user;
}
