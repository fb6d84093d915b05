/* Constant folding (fold_constants.h). */
#include "models/passes/fold_constants.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/nn/activation.h"

static bool foldable(tsl_op op) {
  switch (op) {
  case TSL_OP_IDENTITY:
  case TSL_OP_DROPOUT:
  case TSL_OP_RESHAPE:
  case TSL_OP_FLATTEN:
  case TSL_OP_TRANSPOSE:
  case TSL_OP_ADD:
  case TSL_OP_SUB:
  case TSL_OP_MUL:
  case TSL_OP_DIV:
  case TSL_OP_POW:
  case TSL_OP_RELU:
  case TSL_OP_CLIP:
  case TSL_OP_ACTIVATION: return true;
  default: return false;
  }
}

/* Row-major offset in input `in` of output point idx (numpy broadcasting, rank-aligned). */
static int64_t bcast_offset(const tsl_tensor *in, int ond, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < in->ndim; d++) {
    int od = ond - in->ndim + d;
    int64_t i = in->shape[d] == 1 ? 0 : idx[od];
    off = off * in->shape[d] + i;
  }
  return off;
}

static double eval_point(const tsl_node *n, const tsl_graph *g, int ond, const int64_t *idx) {
  const tsl_tensor *a = g->values[n->inputs[0]].constant;
  double x = tsl_tensor_get_f64(a, bcast_offset(a, ond, idx));
  switch (n->op) {
  case TSL_OP_RELU: return x < 0.0 ? 0.0 : x; /* NaN stays NaN */
  case TSL_OP_CLIP: {
    double lo = tsl_node_attr_float(n, "min", -INFINITY), hi = tsl_node_attr_float(n, "max", INFINITY);
    return isnan(x) ? x : x < lo ? lo : x > hi ? hi : x;
  }
  case TSL_OP_ACTIVATION: {
    const tsl_activation *f;
    double attrs[TSL_ACTIVATION_MAX_ATTRS];
    /* checked by shape inference before any pass runs */
    return tsl_node_activation(g, n, &f, attrs) == TSL_OK ? (float)f->eval((float)x, attrs) : NAN;
  }
  case TSL_OP_POW:
    if (n->n_inputs == 1) return (float)pow((float)x, (float)tsl_node_attr_float(n, "exponent", 1.0));
    break;
  default: break;
  }
  const tsl_tensor *b = g->values[n->inputs[1]].constant;
  double y = tsl_tensor_get_f64(b, bcast_offset(b, ond, idx));
  /* f32 operations: round each operand's result as the kernel would */
  switch (n->op) {
  case TSL_OP_ADD: return (float)x + (float)y;
  case TSL_OP_SUB: return (float)x - (float)y;
  case TSL_OP_MUL: return (float)x * (float)y;
  case TSL_OP_POW: return (float)pow((float)x, (float)y);
  default: return (float)x / (float)y;
  }
}

static tsl_status fold_node(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  int out = n->outputs[0];
  const tsl_value *ov = &g->values[out];
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(ov->dtype, ov->ndim, ov->shape, &t);
  if (st != TSL_OK) return st;
  const tsl_tensor *x = g->values[n->inputs[0]].constant;
  int64_t total = tsl_tensor_numel(t);
  float *y = t->data;
  if (n->op == TSL_OP_IDENTITY || n->op == TSL_OP_DROPOUT || n->op == TSL_OP_RESHAPE || n->op == TSL_OP_FLATTEN) {
    st = tsl_tensor_copy_to(x, t->data, tsl_tensor_nbytes(t));
  } else if (n->op == TSL_OP_TRANSPOSE) {
    int np;
    const int64_t *perm = tsl_node_attr_ints(n, "perm", &np);
    int64_t idx[TSL_MAX_NDIM] = {0};
    for (int64_t e = 0; e < total; e++) {
      int64_t off = 0; /* input offset of output point idx: output axis d is input axis perm[d] */
      int64_t src[TSL_MAX_NDIM];
      for (int d = 0; d < ov->ndim; d++) src[perm && np == ov->ndim ? perm[d] : ov->ndim - 1 - d] = idx[d];
      for (int d = 0; d < x->ndim; d++) off = off * x->shape[d] + src[d];
      y[e] = (float)tsl_tensor_get_f64(x, off);
      for (int d = ov->ndim - 1; d >= 0 && ++idx[d] == ov->shape[d]; d--) idx[d] = 0;
    }
  } else {
    int64_t idx[TSL_MAX_NDIM] = {0};
    for (int64_t e = 0; e < total; e++) {
      y[e] = (float)eval_point(n, g, ov->ndim, idx);
      for (int d = ov->ndim - 1; d >= 0 && ++idx[d] == ov->shape[d]; d--) idx[d] = 0;
    }
  }
  if (st != TSL_OK) {
    tsl_tensor_free(t);
    return st;
  }
  char name[256];
  snprintf(name, sizeof name, "%s.folded", ov->name);
  int c;
  if (tsl_graph_find_value(g, name) >= 0) st = tsl_graph_add_constant(g, NULL, t, &c);
  else st = tsl_graph_add_constant(g, name, t, &c);
  if (st != TSL_OK) return st;
  return tsl_graph_replace_uses(g, out, c);
}

tsl_status tsl_pass_fold_constants(tsl_graph *g, int *folded) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "fold_constants: NULL graph");
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const tsl_node *n = &g->nodes[i];
    if (!foldable(n->op) || n->n_outputs != 1 || n->n_inputs < 1) continue;
    bool all_const = true;
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0 || !g->values[v].constant || !tsl_dtype_equal(g->values[v].dtype, TSL_DTYPE_F32)) all_const = false;
    }
    const tsl_value *ov = &g->values[n->outputs[0]];
    if (!all_const || ov->ndim < 0 || !tsl_dtype_equal(ov->dtype, TSL_DTYPE_F32)) continue;
    if (n->op == TSL_OP_ADD || n->op == TSL_OP_SUB || n->op == TSL_OP_MUL || n->op == TSL_OP_DIV) {
      if (n->n_inputs != 2) continue;
    }
    tsl_status st = fold_node(g, i);
    if (st != TSL_OK) return st;
    count++;
  }
  if (folded) *folded = count;
  return count ? tsl_graph_prune(g) : TSL_OK;
}
