/* Batch-norm folding (fold_batch_norm.h). */
#include "models/passes/fold_batch_norm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/passes/uses.h"

static const tsl_tensor *const_of(const tsl_graph *g, const tsl_node *n, int i) {
  if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
  const tsl_tensor *t = g->values[n->inputs[i]].constant;
  return t && tsl_dtype_equal(t->dtype, TSL_DTYPE_F32) ? t : NULL;
}

static tsl_status add_named_constant(tsl_graph *g, const char *base, const char *suffix, tsl_tensor *t, int *id) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  return tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, t, id);
}

/* Folds batch norm `bn` into conv `conv`; returns TSL_OK without change when a
 * parameter is not a constant of the expected shape. *done says whether it folded. */
static tsl_status fold_one(tsl_graph *g, int conv, int bn, bool *done) {
  *done = false;
  const tsl_node *c = &g->nodes[conv], *b = &g->nodes[bn];
  const tsl_tensor *w = const_of(g, c, 1), *bias = const_of(g, c, 2);
  const tsl_tensor *scale = const_of(g, b, 1), *shift = const_of(g, b, 2), *mean = const_of(g, b, 3),
                   *var = const_of(g, b, 4);
  if (!w || w->ndim != 4 || (c->n_inputs > 2 && c->inputs[2] >= 0 && !bias) || !scale || !shift || !mean || !var)
    return TSL_OK;
  int64_t M = w->shape[0], per = tsl_tensor_numel(w) / (M ? M : 1);
  if (tsl_tensor_numel(scale) != M || tsl_tensor_numel(shift) != M || tsl_tensor_numel(mean) != M ||
      tsl_tensor_numel(var) != M || (bias && tsl_tensor_numel(bias) != M) || c->n_inputs > 3)
    return TSL_OK;
  double eps = tsl_node_attr_float(b, "epsilon", 1e-5);
  tsl_tensor *nw, *nb;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, 4, w->shape, &nw);
  if (st != TSL_OK) return st;
  if ((st = tsl_tensor_new(TSL_DTYPE_F32, 1, &M, &nb)) != TSL_OK) {
    tsl_tensor_free(nw);
    return st;
  }
  float *wd = nw->data, *bd = nb->data;
  /* compact f32 weights are read directly, others through the dtype-generic accessor */
  const float *wf = w->dtype.code == TSL_DT_FLOAT && w->dtype.bits == 32 && tsl_tensor_is_contiguous(w)
                        ? (const float *)w->data
                        : NULL;
  for (int64_t m = 0; m < M; m++) {
    double s = tsl_tensor_get_f64(scale, m) / sqrt(tsl_tensor_get_f64(var, m) + eps);
    for (int64_t e = 0; e < per; e++)
      wd[m * per + e] = (float)((wf ? (double)wf[m * per + e] : tsl_tensor_get_f64(w, m * per + e)) * s);
    double b0 = bias ? tsl_tensor_get_f64(bias, m) : 0.0;
    bd[m] = (float)((b0 - tsl_tensor_get_f64(mean, m)) * s + tsl_tensor_get_f64(shift, m));
  }
  char base[200];
  snprintf(base, sizeof base, "%s", g->values[c->inputs[1]].name);
  int wid, bid;
  if ((st = add_named_constant(g, base, ".bn_folded", nw, &wid)) != TSL_OK) {
    tsl_tensor_free(nb);
    return st;
  }
  if ((st = add_named_constant(g, base, ".bn_folded_bias", nb, &bid)) != TSL_OK) return st;
  c = &g->nodes[conv];
  int ins[3] = {c->inputs[0], wid, bid};
  if ((st = tsl_graph_set_node_inputs(g, conv, 3, ins)) != TSL_OK) return st;
  if ((st = tsl_graph_replace_uses(g, g->nodes[bn].outputs[0], g->nodes[conv].outputs[0])) != TSL_OK) return st;
  *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_fold_batch_norm(tsl_graph *g, int *folded) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "fold_batch_norm: NULL graph");
  int count = 0;
  bool *dead = calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *dead);
  if (!dead) return tsl_error(TSL_ERR_NOMEM, "fold_batch_norm: out of memory");
  tsl_status st = TSL_OK;
  for (int i = 0; i < g->n_nodes && st == TSL_OK; i++) {
    const tsl_node *n = &g->nodes[i];
    if (n->op != TSL_OP_BATCH_NORM || n->n_inputs < 5 || n->n_outputs != 1 || n->inputs[0] < 0) continue;
    int x = n->inputs[0], conv = g->values[x].producer;
    if (conv < 0 || g->nodes[conv].op != TSL_OP_CONV || tsl_pass_single_user(g, x, dead) != i) continue;
    bool done;
    st = fold_one(g, conv, i, &done);
    if (st == TSL_OK && done) {
      dead[i] = true;
      count++;
    }
  }
  free(dead);
  if (st != TSL_OK) return st;
  if (folded) *folded = count;
  return count ? tsl_graph_prune(g) : TSL_OK;
}
