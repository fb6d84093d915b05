/* Layer normalization recognition (layer_norm.h). */
#include "models/passes/layer_norm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/passes/uses.h"

/* One match: the input x, the axis, eps, scale and bias values (-1: absent), the value
 * the pattern ends with and its nodes (to mark dead). */
typedef struct ln_match {
  int x, axis, last, scale, bias, end; /* normalized axes axis..last-1 */
  double eps;
  int nodes[10], nnodes;
} ln_match;

/* A ReduceMean with keepdims over the adjacent axes *axis..*last-1 of its input. */
static bool block_mean(const tsl_graph *g, int r, int *axis, int *last) {
  const tsl_node *n = &g->nodes[r];
  bool red[TSL_MAX_NDIM];
  int count, first = -1;
  if (n->op != TSL_OP_REDUCE_MEAN || n->n_inputs != 1 || tsl_node_attr_int(n, "keepdims", 1) != 1 ||
      tsl_node_reduce_axes(g, n, red, &count) != TSL_OK || count == 0)
    return false;
  int rank = g->values[n->inputs[0]].ndim;
  for (int d = 0; d < rank && first < 0; d++)
    if (red[d]) first = d;
  for (int d = 0; d < rank; d++)
    if (red[d] != (d >= first && d < first + count)) return false;
  *axis = first;
  *last = first + count;
  return true;
}

/* Is node q the square of d: Pow(d) with exponent 2, Pow(d, 2) or Mul(d, d)? */
static bool squares(const tsl_graph *g, int q, int d) {
  const tsl_node *n = &g->nodes[q];
  double e;
  if (n->op == TSL_OP_MUL) return n->n_inputs == 2 && n->inputs[0] == d && n->inputs[1] == d;
  if (n->op != TSL_OP_POW || n->inputs[0] != d) return false;
  if (n->n_inputs == 1) return tsl_node_attr_float(n, "exponent", 0.0) == 2.0;
  return tsl_pass_const_scalar(g, n->inputs[1], &e) && e == 2.0 && g->values[n->inputs[1]].ndim <= g->values[d].ndim;
}

/* Constant p (numpy-aligned to x) varies along x's axes axis..last-1 only, without
 * changing x's shape. */
static bool fits_axes(const tsl_graph *g, int p, int x, int axis, int last) {
  const tsl_value *pv = &g->values[p], *xv = &g->values[x];
  if (!pv->constant || !tsl_dtype_equal(pv->dtype, TSL_DTYPE_F32) || pv->ndim > xv->ndim) return false;
  for (int i = 0; i < pv->ndim; i++) {
    int xd = xv->ndim - pv->ndim + i;
    if (pv->shape[i] != 1 && (xd < axis || xd >= last || pv->shape[i] != xv->shape[xd])) return false;
  }
  return true;
}

static void add_node(ln_match *m, int node) { m->nodes[m->nnodes++] = node; }

/* The readers of d: exactly the square q and one other node *norm. */
static bool square_and_norm(const tsl_graph *g, int d, const bool *dead, int *q, int *norm) {
  int readers[4], nr = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead[i]) continue;
    bool reads = false;
    for (int k = 0; k < g->nodes[i].n_inputs; k++) reads |= g->nodes[i].inputs[k] == d;
    if (reads && nr < 4) readers[nr++] = i;
    else if (reads) return false;
  }
  if (nr != 2 || tsl_pass_is_graph_output(g, d)) return false;
  int k = squares(g, readers[0], d) ? 0 : 1;
  *q = readers[k];
  *norm = readers[1 - k];
  return squares(g, *q, d);
}

/* x / sd as Div(d, sd) or Mul(d, Reciprocal(sd)), node `norm` reading d. */
static bool normalizes(const tsl_graph *g, int norm, int d, int sd, const bool *dead, ln_match *m) {
  const tsl_node *n = &g->nodes[norm];
  int u = tsl_pass_single_user(g, sd, dead);
  if (n->op == TSL_OP_DIV) return u == norm && n->inputs[0] == d && n->inputs[1] == sd;
  if (n->op != TSL_OP_MUL || !tsl_pass_is_function(g, u, "Reciprocal")) return false;
  int rs = g->nodes[u].outputs[0];
  if (tsl_pass_single_user(g, rs, dead) != norm || tsl_pass_other_input(n, rs) != d) return false;
  add_node(m, u);
  return true;
}

static bool match(const tsl_graph *g, int r1, const bool *dead, ln_match *m) {
  memset(m, 0, sizeof *m);
  int axis, last, axis2, last2;
  if (!block_mean(g, r1, &axis, &last)) return false;
  int x = g->nodes[r1].inputs[0], mean = g->nodes[r1].outputs[0];
  int s = tsl_pass_single_user_op(g, mean, TSL_OP_SUB, dead);
  if (s < 0 || g->nodes[s].inputs[0] != x || g->nodes[s].inputs[1] != mean) return false;
  int d = g->nodes[s].outputs[0], q, norm;
  if (!square_and_norm(g, d, dead, &q, &norm)) return false;
  int r2 = tsl_pass_single_user_op(g, g->nodes[q].outputs[0], TSL_OP_REDUCE_MEAN, dead);
  if (r2 < 0 || !block_mean(g, r2, &axis2, &last2) || axis2 != axis || last2 != last) return false;
  int add = tsl_pass_single_user_op(g, g->nodes[r2].outputs[0], TSL_OP_ADD, dead);
  if (add < 0 || !tsl_pass_const_scalar(g, tsl_pass_other_input(&g->nodes[add], g->nodes[r2].outputs[0]), &m->eps) ||
      !(m->eps >= 0 && isfinite(m->eps)))
    return false;
  int sq = tsl_pass_single_user(g, g->nodes[add].outputs[0], dead);
  if (!tsl_pass_is_function(g, sq, "Sqrt") || !normalizes(g, norm, d, g->nodes[sq].outputs[0], dead, m)) return false;
  int pattern[] = {r1, s, q, r2, add, sq, norm};
  for (size_t k = 0; k < sizeof pattern / sizeof pattern[0]; k++) add_node(m, pattern[k]);
  m->x = x;
  m->axis = axis;
  m->last = last;
  m->scale = m->bias = -1;
  m->end = g->nodes[norm].outputs[0];
  int mul = tsl_pass_single_user_op(g, m->end, TSL_OP_MUL, dead), p;
  if (mul >= 0 && (p = tsl_pass_other_input(&g->nodes[mul], m->end)) >= 0 && fits_axes(g, p, x, axis, last)) {
    m->scale = p;
    m->end = g->nodes[mul].outputs[0];
    add_node(m, mul);
  }
  int badd = tsl_pass_single_user_op(g, m->end, TSL_OP_ADD, dead);
  if (badd >= 0 && (p = tsl_pass_other_input(&g->nodes[badd], m->end)) >= 0 && fits_axes(g, p, x, axis, last)) {
    m->bias = p;
    m->end = g->nodes[badd].outputs[0];
    add_node(m, badd);
  }
  return !tsl_pass_is_graph_output(g, m->end); /* its name is the model's */
}

/* The layer norm's Scale or B from gamma or beta p (-1: ones): p's values with the extents
 * it has along the normalized axes (LayerNormalization aligns them to the last normalized
 * axis; p was aligned to x's last axis). */
static tsl_status norm_param(tsl_graph *g, const ln_match *m, int p, int *out) {
  const tsl_value *x = &g->values[m->x];
  int64_t dims[TSL_MAX_NDIM];
  int nd = m->last - m->axis;
  for (int d = 0; d < nd; d++) {
    int pd = p >= 0 ? g->values[p].ndim - x->ndim + m->axis + d : -1;
    dims[d] = p < 0 ? x->shape[m->axis + d] : pd >= 0 ? g->values[p].shape[pd] : 1;
  }
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, nd, dims, &t);
  if (st != TSL_OK) return st;
  for (int64_t i = 0; i < tsl_tensor_numel(t); i++)
    ((float *)t->data)[i] = p < 0 ? 1.0f : (float)tsl_tensor_get_f64(g->values[p].constant, i);
  return tsl_graph_add_constant(g, NULL, t, out);
}

static tsl_status replace(tsl_graph *g, const ln_match *m) {
  int scale, bias = -1, node;
  tsl_status st = norm_param(g, m, m->scale, &scale);
  if (st == TSL_OK && m->bias >= 0) st = norm_param(g, m, m->bias, &bias);
  if (st != TSL_OK) return st;
  int ins[3] = {m->x, scale, bias};
  if ((st = tsl_pass_add_replacement(g, m->end, "layer_norm", TSL_OP_LAYER_NORM, bias >= 0 ? 3 : 2, ins, &node, NULL)) !=
      TSL_OK)
    return st;
  if ((st = tsl_graph_set_attr_int(g, node, "axis", m->axis)) != TSL_OK) return st;
  if (m->last < g->values[m->x].ndim && (st = tsl_graph_set_attr_int(g, node, TSL_ATTR_NORM_END, m->last)) != TSL_OK)
    return st;
  if ((st = tsl_graph_set_attr_float(g, node, "epsilon", m->eps)) != TSL_OK) return st;
  return tsl_graph_infer_node(g, node);
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  ln_match m;
  if (!match(g, i, dead, &m)) return TSL_OK;
  tsl_status st = replace(g, &m);
  if (st != TSL_OK) return st;
  for (int k = 0; k < m.nnodes; k++) dead[m.nodes[k]] = true;
  *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_layer_norm(tsl_graph *g, int *found) {
  return tsl_pass_rewrite_each(g, "layer_norm", rewrite, NULL, found);
}
