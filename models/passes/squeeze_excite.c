/* Squeeze-excitation gate as one node (squeeze_excite.h). */
#include "models/passes/squeeze_excite.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/passes/fuse_channel_scale.h"
#include "models/passes/fuse_conv.h"
#include "models/passes/uses.h"
#include "ops/nn/activation.h"

static bool blocked_image(const tsl_value *v, int block) {
  return !v->constant && v->ndim == 4 && v->layout.kind == TSL_LAYOUT_NCHWC && v->layout.block == block &&
         tsl_dtype_equal(v->dtype, TSL_DTYPE_F32);
}

static const tsl_tensor *f32_const(const tsl_graph *g, int v) {
  const tsl_tensor *t = v >= 0 ? g->values[v].constant : NULL;
  return t && tsl_dtype_equal(t->dtype, TSL_DTYPE_F32) ? t : NULL;
}

/* Whether value `in` ([N, cin, 1, 1], blocked) is read by exactly one node, a conv
 * cin -> cout of the kind the kernel computes (squeeze_excite.h); that conv's id, or -1. */
static int small_conv(const tsl_graph *g, int in, int64_t cin, const bool *dead) {
  const tsl_value *iv = &g->values[in];
  if (tsl_pass_is_graph_output(g, in) || iv->ndim != 4 || iv->shape[1] != cin || iv->shape[2] != 1 ||
      iv->shape[3] != 1)
    return -1;
  int c = tsl_pass_single_user(g, in, dead);
  if (c < 0) return -1;
  const tsl_node *n = &g->nodes[c];
  if (n->op != TSL_OP_CONV || n->n_inputs < 2 || n->n_inputs > 3 || n->inputs[0] != in || n->n_outputs != 1 ||
      tsl_conv_channel_scale(n) >= 0 || tsl_node_attr_int(n, "group", 1) != 1)
    return -1;
  const tsl_tensor *w = f32_const(g, n->inputs[1]);
  int bias = n->n_inputs > 2 ? n->inputs[2] : -1;
  const tsl_tensor *b = f32_const(g, bias);
  if (!w || w->ndim != 4 || w->shape[1] != cin || w->shape[2] != 1 || w->shape[3] != 1 || w->shape[0] < 1 ||
      !tsl_tensor_is_contiguous(w) || (bias >= 0 && (!b || tsl_tensor_numel(b) != w->shape[0])))
    return -1;
  tsl_conv2d_params p;
  if (tsl_node_conv2d_params(g, n, &p) != TSL_OK || p.pads[0] || p.pads[1] || p.pads[2] || p.pads[3]) return -1;
  const tsl_value *y = &g->values[n->outputs[0]];
  if (y->ndim != 4 || y->shape[0] != iv->shape[0] || y->shape[1] != w->shape[0] || y->shape[2] != 1 ||
      y->shape[3] != 1)
    return -1;
  return c;
}

/* Sets conv `conv`'s fused function (fuse_conv.h) on node `se` as attributes `which`,
 * WHICH_attr0, WHICH_attr1 (graph.h tsl.SqueezeExcite); none: nothing. */
static tsl_status copy_function(tsl_graph *g, int conv, int se, const char *which) {
  const tsl_node *n = &g->nodes[conv];
  char a0[32], a1[32];
  snprintf(a0, sizeof a0, "%s_attr0", which);
  snprintf(a1, sizeof a1, "%s_attr1", which);
  int64_t kind = tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE);
  if (kind == TSL_ACT_NONE) return TSL_OK;
  if (kind == TSL_ACT_RELU) return tsl_graph_set_attr_string(g, se, which, "Relu");
  if (kind == TSL_ACT_CLIP) {
    double lo = tsl_node_attr_float(n, TSL_ATTR_CLIP_MIN, -INFINITY), hi = tsl_node_attr_float(n, TSL_ATTR_CLIP_MAX, INFINITY);
    tsl_status st = tsl_graph_set_attr_string(g, se, which, "Clip");
    if (st == TSL_OK) st = tsl_graph_set_attr_float(g, se, a0, lo);
    if (st == TSL_OK) st = tsl_graph_set_attr_float(g, se, a1, hi);
    return st;
  }
  const tsl_activation *fn;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  tsl_status st = tsl_node_fused_function(g, n, &fn, attrs);
  if (st != TSL_OK) return st;
  if (!fn) return tsl_error(TSL_ERR_INVALID, "squeeze_excite: conv %s: activation kind %lld", n->name, (long long)kind);
  /* the name outlives the call: the table's string */
  st = tsl_graph_set_attr_string(g, se, which, fn->onnx_op);
  if (st == TSL_OK && fn->nattrs > 0) st = tsl_graph_set_attr_float(g, se, a0, attrs[0]);
  if (st == TSL_OK && fn->nattrs > 1) st = tsl_graph_set_attr_float(g, se, a1, attrs[1]);
  return st;
}

/* A new f32 constant holding `rows` x `cols` values, element (r, j) read from
 * src[r * src_cols + j] (src[j * src_cols + r] when `transpose`; zeros without src); j
 * a channel, padded with zeros to whole blocks of x: stored [rows, CB, x] (`blocks_outer`
 * false; x = 1: [rows, cols] plainly) or [CB, rows, x] (true). Its value id in *id. */
static tsl_status add_blocked(tsl_graph *g, const tsl_tensor *src, int64_t rows, int64_t cols, int64_t src_cols,
                              bool transpose, int64_t x, bool blocks_outer, int *id) {
  int64_t cb = (cols + x - 1) / x, shape[3] = {blocks_outer ? cb : rows, blocks_outer ? rows : cb, x};
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, 3, shape, &t);
  if (st != TSL_OK) return st;
  float *d = t->data;
  memset(d, 0, (size_t)tsl_tensor_numel(t) * sizeof *d);
  for (int64_t r = 0; src && r < rows; r++)
    for (int64_t j = 0; j < cols; j++) {
      int64_t at = blocks_outer ? ((j / x) * rows + r) * x + j % x : r * cb * x + j;
      d[at] = (float)tsl_tensor_get_f64(src, transpose ? j * src_cols + r : r * src_cols + j);
    }
  return tsl_graph_add_constant(g, NULL, t, id);
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  const tsl_node *pool = &g->nodes[i];
  if ((pool->op != TSL_OP_GLOBAL_AVERAGE_POOL && !tsl_node_is_spatial_mean(g, pool)) || pool->n_inputs != 1 ||
      pool->n_outputs != 1 || pool->inputs[0] < 0)
    return TSL_OK;
  int x = pool->inputs[0], p = pool->outputs[0];
  const tsl_value *xv = &g->values[x];
  int block = xv->layout.block;
  if (!blocked_image(xv, block) || !blocked_image(&g->values[p], block)) return TSL_OK;
  int64_t N = xv->shape[0], C = xv->shape[1];
  int c1 = small_conv(g, p, C, dead);
  if (c1 < 0) return TSL_OK;
  int h = g->nodes[c1].outputs[0];
  int64_t S = g->values[h].shape[1];
  if (C * S > TSL_SQUEEZE_EXCITE_MAX_WEIGHTS) return TSL_OK;
  int c2 = small_conv(g, h, S, dead);
  if (c2 < 0) return TSL_OK;
  int s = g->nodes[c2].outputs[0];
  const tsl_value *sv = &g->values[s];
  if (!blocked_image(sv, block) || sv->shape[0] != N || sv->shape[1] != C) return TSL_OK;
  /* the constants, channels padded to whole blocks: W1 [CB, S, x] (each block's weights
   * for all S together: the first layer's loop runs over s inside the blocks), B1 [1, S, 1],
   * W2t [S, CB, x] (W2 transposed), B2 [1, CB, x] */
  int ins[5] = {x, -1, -1, -1, -1};
  const tsl_node *n1 = &g->nodes[c1], *n2 = &g->nodes[c2];
  const tsl_tensor *w1 = f32_const(g, n1->inputs[1]), *w2 = f32_const(g, n2->inputs[1]);
  const tsl_tensor *b1 = n1->n_inputs > 2 ? f32_const(g, n1->inputs[2]) : NULL;
  const tsl_tensor *b2 = n2->n_inputs > 2 ? f32_const(g, n2->inputs[2]) : NULL;
  tsl_status st = add_blocked(g, w1, S, C, C, false, block, true, &ins[1]);
  if (st == TSL_OK) st = add_blocked(g, b1, 1, S, S, false, 1, false, &ins[2]);
  if (st == TSL_OK) st = add_blocked(g, w2, S, C, S, true, block, false, &ins[3]);
  if (st == TSL_OK) st = add_blocked(g, b2, 1, C, C, false, block, false, &ins[4]);
  int node, y;
  if (st == TSL_OK) st = tsl_pass_add_replacement(g, s, "se", TSL_OP_SQUEEZE_EXCITE, 5, ins, &node, &y);
  if (st == TSL_OK) st = copy_function(g, c1, node, "hidden");
  if (st == TSL_OK) st = copy_function(g, c2, node, "gate");
  if (st != TSL_OK) return st;
  tsl_value *yv = &g->values[y];
  const tsl_value *old = &g->values[s];
  yv->dtype = old->dtype;
  yv->ndim = 4;
  memcpy(yv->shape, old->shape, sizeof yv->shape);
  yv->layout = old->layout;
  dead[i] = dead[c1] = dead[c2] = *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_squeeze_excite(tsl_graph *g, int *fused) {
  return tsl_pass_rewrite_each(g, "squeeze_excite", rewrite, NULL, fused);
}
