/* Shape inference of the reductions over any axes and of LayerNormalization over a block
 * of axes (shape_infer_internal.h, graph.h's table). */
#include <stdio.h>
#include <string.h>

#include "models/shape_infer_internal.h"

/* Axis a of a rank-r tensor in [0, r), or -1 when out of [-r, r). */
static int axis_of(int64_t a, int r) { return a < -r || a >= r ? -1 : (int)(a < 0 ? a + r : a); }

tsl_status tsl_node_reduce_axes(const tsl_graph *g, const tsl_node *node, bool reduced[TSL_MAX_NDIM], int *count) {
  int id = (int)(node - g->nodes);
  if (node->op != TSL_OP_REDUCE_MEAN && node->op != TSL_OP_REDUCE_SUM && node->op != TSL_OP_REDUCE_MAX &&
      node->op != TSL_OP_REDUCE_MIN)
    return tsl_infer_error(g, id, TSL_ERR_INVALID, "not a reduction node");
  int r = node->n_inputs > 0 && node->inputs[0] >= 0 ? g->values[node->inputs[0]].ndim : -1;
  if (r < 0) return tsl_infer_error(g, id, TSL_ERR_INVALID, "input of unknown shape");
  const tsl_attr *a = tsl_node_attr(node, "axes");
  if (a && a->kind != TSL_ATTR_INTS) return tsl_infer_error(g, id, TSL_ERR_INVALID, "attribute 'axes' must be ints");
  int n = 0;
  for (int d = 0; d < TSL_MAX_NDIM; d++) reduced[d] = !a && d < r; /* no axes: every axis */
  for (int i = 0; a && i < a->n; i++) {
    int ax = axis_of(a->ints[i], r);
    if (ax < 0 || reduced[ax])
      return tsl_infer_error(g, id, TSL_ERR_INVALID, "axis %lld %s for rank %d", (long long)a->ints[i],
                             ax < 0 ? "out of range" : "repeated", r);
    reduced[ax] = true;
  }
  for (int d = 0; d < r; d++) n += reduced[d];
  if (count) *count = n;
  return TSL_OK;
}

bool tsl_node_is_spatial_mean(const tsl_graph *g, const tsl_node *node) {
  bool red[TSL_MAX_NDIM];
  int n;
  if (node->op != TSL_OP_REDUCE_MEAN || g->values[node->inputs[0]].ndim != 4) return false;
  if (tsl_node_reduce_axes(g, node, red, &n) != TSL_OK) return false;
  return n == 2 && red[2] && red[3];
}

/* The reduced axes become 1 (keepdims) or disappear. */
tsl_status tsl_infer_reduce(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = &g->values[n->inputs[0]];
  bool red[TSL_MAX_NDIM];
  int count, nd = 0;
  int64_t y[TSL_MAX_NDIM];
  tsl_status st = tsl_node_reduce_axes(g, n, red, &count);
  if (st != TSL_OK) return st;
  int64_t keep = tsl_node_attr_int(n, "keepdims", 1);
  if (keep != 0 && keep != 1) return tsl_infer_error(g, node, TSL_ERR_INVALID, "keepdims %lld (0 or 1)", (long long)keep);
  for (int d = 0; d < x->ndim; d++) {
    if (red[d] && x->shape[d] == 0 && n->op != TSL_OP_REDUCE_SUM)
      return tsl_infer_error(g, node, TSL_ERR_UNSUPPORTED, "%s over the empty axis %d has no value", tsl_op_name(n->op), d);
    if (!red[d] || keep) y[nd++] = red[d] ? 1 : x->shape[d];
  }
  return tsl_infer_set_output(g, node, 0, nd, y);
}

/* Whether p (right-aligned to axis end) broadcasts to x[axis:end] without growing it. */
static bool broadcasts_to_axes(const tsl_value *p, const tsl_value *x, int axis, int end) {
  int span = end - axis;
  if (p->ndim > x->ndim) return false;
  for (int i = 0; i < p->ndim; i++) {
    int xd = end - p->ndim + i;
    if (i < p->ndim - span ? p->shape[i] != 1 : p->shape[i] != 1 && p->shape[i] != x->shape[xd]) return false;
  }
  return true;
}

tsl_status tsl_infer_layer_norm(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  const tsl_attr *aa = tsl_node_attr(n, "axis"), *ea = tsl_node_attr(n, "epsilon"), *na = tsl_node_attr(n, TSL_ATTR_NORM_END);
  if ((aa && aa->kind != TSL_ATTR_INT) || (ea && ea->kind != TSL_ATTR_FLOAT) || (na && na->kind != TSL_ATTR_INT))
    return tsl_infer_error(g, node, TSL_ERR_INVALID, "attributes 'axis' and '%s' must be ints, 'epsilon' a float",
                           TSL_ATTR_NORM_END);
  const tsl_value *x = &g->values[n->inputs[0]];
  int axis = axis_of(tsl_node_attr_int(n, "axis", -1), x->ndim);
  int64_t end = tsl_node_attr_int(n, TSL_ATTR_NORM_END, x->ndim), stat[TSL_MAX_NDIM], shape[TSL_MAX_NDIM];
  if (axis < 0) return tsl_infer_error(g, node, TSL_ERR_INVALID, "axis out of range for rank %d", x->ndim);
  if (end <= axis || end > x->ndim)
    return tsl_infer_error(g, node, TSL_ERR_INVALID, "%s %lld (axis %d + 1 .. rank %d)", TSL_ATTR_NORM_END,
                           (long long)end, axis, x->ndim);
  for (int k = 1; k < n->n_inputs; k++) {
    const tsl_value *p = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
    if (p && !broadcasts_to_axes(p, x, axis, (int)end))
      return tsl_infer_error(g, node, TSL_ERR_UNSUPPORTED,
                             "%s '%s' (rank %d) does not broadcast to the normalized axes %d..%d of a rank-%d input",
                             k == 1 ? "Scale" : "B", p->name, p->ndim, axis, (int)end - 1, x->ndim);
  }
  int rank = x->ndim;
  for (int d = 0; d < rank; d++) {
    shape[d] = x->shape[d];
    stat[d] = d >= axis && d < end ? 1 : x->shape[d];
  }
  tsl_status st = tsl_infer_set_output(g, node, 0, rank, shape);
  for (int k = 1; st == TSL_OK && k < n->n_outputs; k++) st = tsl_infer_set_output(g, node, k, rank, stat);
  return st;
}
