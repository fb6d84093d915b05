/* GELU recognition (fuse_gelu.h). */
#include "models/passes/fuse_gelu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/passes/uses.h"

static bool near(double v, double want) { return fabs(v - want) <= 1e-6 * fabs(want); }

/* The other input of two-input node `node` (of op `op`) beside v when it is a constant
 * scalar near `want`. */
static bool times_const(const tsl_graph *g, int node, tsl_op op, int v, double want) {
  double c;
  if (node < 0 || g->nodes[node].op != op) return false;
  int o = tsl_pass_other_input(&g->nodes[node], v);
  if (op == TSL_OP_DIV && g->nodes[node].inputs[0] != v) return false; /* v / c, not c / v */
  return tsl_pass_const_scalar(g, o, &c) && near(c, want) && g->values[o].ndim <= g->values[v].ndim;
}

/* Matches the pattern around Erf node e: *x its input, *end the value it ends with, the
 * pattern's nodes in nodes[*n]. */
static bool match(const tsl_graph *g, int e, const bool *dead, int *x, int *end, int *nodes, int *n) {
  if (!tsl_pass_is_function(g, e, "Erf")) return false;
  int s = g->nodes[e].inputs[0], sn = g->values[s].producer;
  if (sn < 0 || tsl_pass_single_user(g, s, dead) != e || g->nodes[sn].n_inputs != 2) return false;
  *x = -1;
  for (int k = 0; k < 2 && *x < 0; k++) {
    int cand = g->nodes[sn].inputs[k];
    if (times_const(g, sn, TSL_OP_DIV, cand, sqrt(2.0)) || times_const(g, sn, TSL_OP_MUL, cand, sqrt(0.5))) *x = cand;
  }
  int a = tsl_pass_single_user_op(g, g->nodes[e].outputs[0], TSL_OP_ADD, dead);
  if (*x < 0 || a < 0 || !times_const(g, a, TSL_OP_ADD, g->nodes[e].outputs[0], 1.0)) return false;
  int av = g->nodes[a].outputs[0], m1 = tsl_pass_single_user_op(g, av, TSL_OP_MUL, dead);
  if (m1 < 0) return false;
  int o = tsl_pass_other_input(&g->nodes[m1], av), m1v = g->nodes[m1].outputs[0], last = -1, h = -1;
  if (o == *x) { /* (x * A) * 0.5 */
    last = tsl_pass_single_user_op(g, m1v, TSL_OP_MUL, dead);
    if (!times_const(g, last, TSL_OP_MUL, m1v, 0.5)) return false;
  } else if (times_const(g, m1, TSL_OP_MUL, av, 0.5)) { /* (A * 0.5) * x */
    last = tsl_pass_single_user_op(g, m1v, TSL_OP_MUL, dead);
    if (last < 0 || tsl_pass_other_input(&g->nodes[last], m1v) != *x) return false;
  } else { /* (x * 0.5) * A */
    h = o >= 0 ? g->values[o].producer : -1;
    if (!times_const(g, h, TSL_OP_MUL, *x, 0.5) || tsl_pass_single_user(g, o, dead) != m1) return false;
    last = m1;
  }
  *end = g->nodes[last].outputs[0];
  int pattern[6] = {sn, e, a, m1, last, h};
  *n = 0;
  for (int k = 0; k < 6; k++)
    if (pattern[k] >= 0) nodes[(*n)++] = pattern[k];
  return !tsl_pass_is_graph_output(g, *end); /* its name is the model's */
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  int x, end, nodes[6], n, node;
  if (!match(g, i, dead, &x, &end, nodes, &n)) return TSL_OK;
  tsl_status st = tsl_pass_add_replacement(g, end, "gelu", TSL_OP_ACTIVATION, 1, &x, &node, NULL);
  if (st == TSL_OK) st = tsl_graph_set_attr_string(g, node, "function", "Gelu");
  if (st == TSL_OK) st = tsl_graph_infer_node(g, node);
  if (st != TSL_OK) return st;
  for (int k = 0; k < n; k++) dead[nodes[k]] = true;
  *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_fuse_gelu(tsl_graph *g, int *fused) {
  return tsl_pass_rewrite_each(g, "fuse_gelu", rewrite, NULL, fused);
}
