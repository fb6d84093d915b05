/* Channel shuffle recognition (channel_shuffle.h). */
#include "models/passes/channel_shuffle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/passes/uses.h"

/* Node i is the first Reshape of a shuffle: *group and the final Reshape's id. */
static bool match(const tsl_graph *g, int i, const bool *dead, int64_t *group, int *last) {
  const tsl_node *r1 = &g->nodes[i];
  if (r1->op != TSL_OP_RESHAPE || r1->n_inputs < 1 || r1->inputs[0] < 0) return false;
  const tsl_value *x = &g->values[r1->inputs[0]], *a = &g->values[r1->outputs[0]];
  if (x->ndim != 4 || a->ndim != 5 || a->shape[0] != x->shape[0] || a->shape[1] * a->shape[2] != x->shape[1] ||
      a->shape[3] != x->shape[2] || a->shape[4] != x->shape[3])
    return false;
  int t = tsl_pass_single_user(g, r1->outputs[0], dead);
  if (t < 0 || g->nodes[t].op != TSL_OP_TRANSPOSE) return false;
  int np;
  const int64_t *perm = tsl_node_attr_ints(&g->nodes[t], "perm", &np);
  static const int64_t want[5] = {0, 2, 1, 3, 4};
  if (!perm || np != 5 || memcmp(perm, want, sizeof want) != 0) return false;
  int r2 = tsl_pass_single_user(g, g->nodes[t].outputs[0], dead);
  if (r2 < 0 || g->nodes[r2].op != TSL_OP_RESHAPE) return false;
  const tsl_value *y = &g->values[g->nodes[r2].outputs[0]];
  if (y->ndim != 4 || memcmp(y->shape, x->shape, sizeof y->shape) != 0) return false;
  *group = a->shape[1];
  *last = r2;
  return true;
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  int64_t group;
  int last, node, y;
  if (!match(g, i, dead, &group, &last)) return TSL_OK;
  int x = g->nodes[i].inputs[0];
  tsl_status st = tsl_pass_add_replacement(g, g->nodes[last].outputs[0], "shuffled", TSL_OP_CHANNEL_SHUFFLE, 1, &x,
                                           &node, &y);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "group", group);
  if (st != TSL_OK) return st;
  g->values[y].dtype = g->values[x].dtype;
  g->values[y].ndim = 4;
  memcpy(g->values[y].shape, g->values[x].shape, sizeof g->values[y].shape);
  dead[i] = dead[last] = true;
  *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_channel_shuffle(tsl_graph *g, int *found) {
  return tsl_pass_rewrite_each(g, "channel_shuffle", rewrite, NULL, found);
}
