/* Kernels of nodes in the blocked layout NCHW[x]c (node_kernels.h): registry operators
 * for convolutions and layout transforms, generated texts for the rest. Padding lanes
 * (channels past C in the last block) are written as zero. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/node_kernels_internal.h"
#include "models/passes/fuse_conv.h"
#include "models/passes/layout.h"
#include "ops/nn/activation.h"

int tsl_value_storage_shape(const tsl_value *v, int64_t shape[TSL_MAX_NDIM]) {
  if (v->layout.kind == TSL_LAYOUT_NCHWC && v->ndim == 4 && v->layout.block > 0) {
    int64_t x = v->layout.block;
    shape[0] = v->shape[0];
    shape[1] = (v->shape[1] + x - 1) / x;
    shape[2] = v->shape[2];
    shape[3] = v->shape[3];
    shape[4] = x;
    return 5;
  }
  for (int d = 0; d < v->ndim; d++) shape[d] = v->shape[d];
  return v->ndim < 0 ? 0 : v->ndim;
}

static void add_storage_arg(tsl_node_kernel *k, const tsl_graph *g, int value) {
  int64_t s[TSL_MAX_NDIM];
  int nd = tsl_value_storage_shape(&g->values[value], s);
  tsl_nk_add_arg(k, value, nd, s);
}

/* Registry op with integer params; the key lists the op, the argument shapes and params. */
static void key_of(tsl_node_kernel *k, tsl_text_buf *b) {
  tsl_text_put(b, "%s(", k->registry_op);
  for (int a = 0; a < k->nargs; a++) {
    tsl_text_put(b, "%s", a ? "; " : "");
    for (int d = 0; d < k->ndims[a]; d++) tsl_text_put(b, "%s%lld", d ? "x" : "", (long long)k->shapes[a][d]);
  }
  for (int p = 0; p < k->nparams; p++) {
    if (k->params[p].kind == TSL_DSL_PARAM_INT) tsl_text_put(b, ", %s=%lld", k->params[p].name, (long long)k->params[p].i);
    else tsl_text_put(b, ", %s=%.9g", k->params[p].name, k->params[p].f);
  }
  tsl_text_put(b, ")");
}

static void iparam(tsl_node_kernel *k, const char *name, int64_t v) { k->params[k->nparams++] = tsl_dsl_int_param(name, v); }

static tsl_status make_transform(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  if (x->ndim != 4) return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "a layout transform of a non-image value");
  add_storage_arg(k, g, n->inputs[0]);
  k->ninputs = 1;
  add_storage_arg(k, g, n->outputs[0]);
  if (y->layout.kind == TSL_LAYOUT_NCHWC && x->layout.kind == TSL_LAYOUT_PLAIN) {
    k->registry_op = "nchw_to_nchwc";
    iparam(k, "block", y->layout.block);
  } else if (y->layout.kind == TSL_LAYOUT_PLAIN && x->layout.kind == TSL_LAYOUT_NCHWC) {
    k->registry_op = "nchwc_to_nchw";
    iparam(k, "channels", x->shape[1]);
  } else {
    k->registry_op = "nchwc_reblock";
    iparam(k, "channels", x->shape[1]);
    iparam(k, "block", y->layout.block);
  }
  snprintf(k->label, sizeof k->label, "%s", k->registry_op);
  key_of(k, b);
  return TSL_OK;
}

/* "select(cb*X + c < C, E, 0.0)" around E when C is not a multiple of X. */
static void put_lane_guard_open(tsl_text_buf *b, int64_t C, int64_t X) {
  if (C % X) tsl_text_put(b, "select(cb*%lld + c < %lld, ", (long long)X, (long long)C);
}
static void put_lane_guard_close(tsl_text_buf *b, int64_t C, int64_t X) {
  if (C % X) tsl_text_put(b, ", 0.0)");
}

static tsl_status make_global_pool(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  int64_t s[TSL_MAX_NDIM];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  tsl_value_storage_shape(x, s);
  if (g->values[n->outputs[0]].layout.kind != TSL_LAYOUT_NCHWC) {
    /* plain [N, C] (or [N, C, 1, 1]) result: the channel's lane is picked per element */
    int64_t vin[4] = {s[0], s[1], s[2] * s[3], s[4]}, vout[2] = {s[0], x->shape[1]};
    tsl_nk_add_arg(k, n->inputs[0], 4, vin);
    k->ninputs = 1;
    tsl_nk_add_arg(k, n->outputs[0], 2, vout);
    snprintf(k->label, sizeof k->label, "global_avgpool_nchwc_to_nchw");
    tsl_nk_put_header(b, k);
    tsl_text_put(b, "  acc[n, cb, c] = sum(j: x0[n, cb, j, c])\n"
                    "  out[n, ch] = acc[n, ch / %lld, ch %% %lld] / %lld\n    where n < %lld, ch < %lld\n",
                 (long long)s[4], (long long)s[4], (long long)vin[2], (long long)s[0], (long long)x->shape[1]);
    return TSL_OK;
  }
  int64_t vin[3] = {s[0] * s[1], s[2] * s[3], s[4]}, vout[2] = {s[0] * s[1], s[4]};
  tsl_nk_add_arg(k, n->inputs[0], 3, vin);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], 2, vout);
  snprintf(k->label, sizeof k->label, "global_avgpool_nchwc");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  acc[i, c] = sum(j: x0[i, j, c])\n  out[i, c] = acc[i, c] / %lld\n", (long long)vin[1]);
  return TSL_OK;
}

/* Same-shape elementwise: flat over the stored elements (f(0) = 0 keeps the padding). */
static tsl_status make_elemwise(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  int64_t s[TSL_MAX_NDIM];
  int nd = tsl_value_storage_shape(&g->values[n->outputs[0]], s);
  int64_t total = 1;
  for (int d = 0; d < nd; d++) total *= s[d];
  int nin = n->op == TSL_OP_ADD || n->op == TSL_OP_MUL ? 2 : 1;
  for (int i = 0; i < nin; i++) tsl_nk_add_arg(k, n->inputs[i], 1, &total);
  k->ninputs = nin;
  tsl_nk_add_arg(k, n->outputs[0], 1, &total);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[i] = ");
  if (n->op == TSL_OP_RELU) {
    tsl_text_put(b, "max(x0[i], 0.0)");
  } else if (n->op == TSL_OP_CLIP) {
    double lo = tsl_node_attr_float(n, "min", -INFINITY), hi = tsl_node_attr_float(n, "max", INFINITY);
    tsl_nk_put_clip_open(b, lo, hi);
    tsl_text_put(b, "x0[i]");
    tsl_nk_put_clip_close(b, lo, hi);
  } else {
    tsl_text_put(b, "x0[i] %s x1[i]", n->op == TSL_OP_ADD ? "+" : "*");
  }
  tsl_text_put(b, "\n");
  snprintf(k->label, sizeof k->label, "%s_nchwc", tsl_op_name(n->op));
  return TSL_OK;
}

/* Whether every input of n has its output's shape (a flat elementwise kernel). */
static bool same_storage(const tsl_graph *g, const tsl_node *n) {
  const tsl_value *y = &g->values[n->outputs[0]];
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] < 0 || memcmp(g->values[n->inputs[i]].shape, y->shape, sizeof y->shape) != 0) return false;
  return true;
}

/* Add / Mul / Div whose inputs broadcast (a squeeze-excitation scale): ops/nn's
 * binary_nchwc. */
static tsl_status make_broadcast(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  for (int i = 0; i < n->n_inputs; i++) tsl_nk_call_arg(&c, k, g, n->inputs[i]);
  c.ninputs = n->n_inputs;
  tsl_nk_call_arg(&c, k, g, n->outputs[0]);
  tsl_op_call_set_string(&c, "function", n->op == TSL_OP_ADD ? "add" : n->op == TSL_OP_MUL ? "mul" : "div");
  return tsl_nk_generate(g, node, "binary_nchwc", &c, k, b);
}

/* f(x) in the blocked layout: flat when f(0) = 0 or the blocks are full, else with the
 * padding lanes written as 0 (a channel-guarded view [N, C/x, H*W, x]). */
static tsl_status make_activation(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  tsl_status st = tsl_node_activation(g, n, &a, attrs);
  if (st != TSL_OK) return st;
  int64_t s[TSL_MAX_NDIM], C = g->values[n->outputs[0]].shape[1];
  tsl_value_storage_shape(&g->values[n->outputs[0]], s);
  int64_t X = s[4], v[4] = {s[0], s[1], s[2] * s[3], s[4]}, total = v[0] * v[1] * v[2] * v[3];
  bool guard = C % X && !tsl_activation_keeps_zero(a, attrs);
  tsl_nk_add_arg(k, n->inputs[0], guard ? 4 : 1, guard ? v : &total);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], guard ? 4 : 1, guard ? v : &total);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[%s] = ", guard ? "n, cb, i, c" : "i");
  if (guard) put_lane_guard_open(b, C, X);
  st = tsl_nk_put_activation(g, node, guard ? "x0[n, cb, i, c]" : "x0[i]", k, b);
  if (guard) {
    put_lane_guard_close(b, C, X);
    tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)v[0], (long long)v[1],
               (long long)v[2], (long long)v[3]);
  } else {
    tsl_text_put(b, "\n    where i < %lld\n", (long long)total);
  }
  size_t len = strlen(k->label);
  snprintf(k->label + len, sizeof k->label - len, "_nchwc");
  return st;
}

static tsl_status make_batch_norm(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  int64_t s[TSL_MAX_NDIM], C = x->shape[1];
  tsl_value_storage_shape(x, s);
  int64_t v[4] = {s[0], s[1], s[2] * s[3], s[4]};
  tsl_nk_add_arg(k, n->inputs[0], 4, v);
  for (int i = 1; i < 5; i++) {
    if (tsl_nk_numel(tsl_nk_in_val(g, n, i)) != C)
      return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "a parameter is not of the channel count");
    tsl_nk_add_arg(k, n->inputs[i], 1, &C);
  }
  k->ninputs = 5;
  tsl_nk_add_arg(k, n->outputs[0], 4, v);
  snprintf(k->label, sizeof k->label, "batch_norm_nchwc");
  tsl_nk_put_header(b, k);
  char ch[96];
  snprintf(ch, sizeof ch, "min(cb*%lld + c, %lld)", (long long)s[4], (long long)(C - 1));
  tsl_text_put(b, "  out[n, cb, i, c] = ");
  put_lane_guard_open(b, C, s[4]);
  tsl_text_put(b, "(x0[n, cb, i, c] - x3[%s]) / sqrt(x4[%s] + ", ch, ch);
  tsl_text_put_float(b, tsl_node_attr_float(n, "epsilon", 1e-5));
  tsl_text_put(b, ") * x1[%s] + x2[%s]", ch, ch);
  put_lane_guard_close(b, C, s[4]);
  tsl_text_put(b, "\n");
  return TSL_OK;
}

/* Channel concat: output channel ch = cb*X + c comes from input i at ch - offset_i. */
static tsl_status make_concat(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  if (n->n_inputs + 1 > TSL_NODE_KERNEL_MAX_ARGS) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "too many inputs");
  const tsl_value *y = &g->values[n->outputs[0]];
  int64_t s[TSL_MAX_NDIM], X = y->layout.block;
  bool aligned = true;
  for (int i = 0; i < n->n_inputs; i++) {
    const tsl_value *v = tsl_nk_in_val(g, n, i);
    tsl_value_storage_shape(v, s);
    int64_t view[4] = {s[0], s[1], s[2] * s[3], s[4]};
    tsl_nk_add_arg(k, n->inputs[i], 4, view);
    aligned &= v->shape[1] % X == 0;
  }
  k->ninputs = n->n_inputs;
  tsl_value_storage_shape(y, s);
  int64_t view[4] = {s[0], s[1], s[2] * s[3], s[4]};
  tsl_nk_add_arg(k, n->outputs[0], 4, view);
  snprintf(k->label, sizeof k->label, "concat%d_nchwc", n->n_inputs);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[n, cb, i, c] = ");
  int64_t off = 0;
  for (int a = 0; a < n->n_inputs; a++) {
    int64_t C = g->values[n->inputs[a]].shape[1];
    bool last = a + 1 == n->n_inputs;
    if (aligned) {
      /* whole blocks: block index arithmetic only */
      int64_t ob = off / X, nb = C / X;
      if (!last) tsl_text_put(b, "select(cb < %lld, ", (long long)(ob + nb));
      tsl_text_put(b, "x%d[n, min(max(cb - %lld, 0), %lld), i, c]", a, (long long)ob, (long long)(nb - 1));
    } else {
      char idx[128];
      snprintf(idx, sizeof idx, "min(max(cb*%lld + c - %lld, 0), %lld)", (long long)X, (long long)off, (long long)(C - 1));
      tsl_text_put(b, "select(cb*%lld + c < %lld, x%d[n, %s / %lld, i, %s %% %lld], ", (long long)X, (long long)(off + C), a,
                   idx, (long long)X, idx, (long long)X);
      if (last) tsl_text_put(b, "0.0)");
    }
    if (!last && aligned) tsl_text_put(b, ", ");
    off += C;
  }
  for (int a = 0; a + 1 < n->n_inputs; a++) tsl_text_put(b, ")");
  tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)view[0], (long long)view[1],
               (long long)view[2], (long long)view[3]);
  return TSL_OK;
}

/* A slice of channels [start, start + C_out) (other axes whole). */
static tsl_status make_slice(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  int ns, na;
  const int64_t *starts = tsl_node_attr_ints(n, "starts", &ns), *axes = tsl_node_attr_ints(n, "axes", &na);
  int64_t start = 0, C = x->shape[1], Co = y->shape[1], X = y->layout.block;
  for (int i = 0; i < ns; i++) {
    int64_t ax = axes ? axes[i] : i;
    if (ax != 1 && ax != -3) continue;
    start = starts[i] < 0 ? starts[i] + C : starts[i];
    start = start < 0 ? 0 : start > C ? C : start;
  }
  int64_t s[TSL_MAX_NDIM];
  tsl_value_storage_shape(x, s);
  int64_t vin[4] = {s[0], s[1], s[2] * s[3], s[4]};
  tsl_nk_add_arg(k, n->inputs[0], 4, vin);
  k->ninputs = 1;
  tsl_value_storage_shape(y, s);
  int64_t vout[4] = {s[0], s[1], s[2] * s[3], s[4]};
  tsl_nk_add_arg(k, n->outputs[0], 4, vout);
  snprintf(k->label, sizeof k->label, "channel_slice_nchwc");
  tsl_nk_put_header(b, k);
  if (start % X == 0 && Co % X == 0) {
    tsl_text_put(b, "  out[n, cb, i, c] = x0[n, cb + %lld, i, c]\n", (long long)(start / X));
  } else {
    char idx[96];
    snprintf(idx, sizeof idx, "min(cb*%lld + c + %lld, %lld)", (long long)X, (long long)start, (long long)(C - 1));
    tsl_text_put(b, "  out[n, cb, i, c] = select(cb*%lld + c < %lld, x0[n, %s / %lld, i, %s %% %lld], 0.0)\n", (long long)X,
                 (long long)Co, idx, (long long)X, idx, (long long)X);
  }
  tsl_text_put(b, "    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)vout[0], (long long)vout[1],
               (long long)vout[2], (long long)vout[3]);
  return TSL_OK;
}

/* Output channel ch = j*G + g reads input channel g*(C/G) + j (graph.h). */
static tsl_status make_channel_shuffle(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  int64_t G = tsl_node_attr_int(n, "group", 1), C = x->shape[1], s[TSL_MAX_NDIM];
  tsl_value_storage_shape(x, s);
  int64_t v[4] = {s[0], s[1], s[2] * s[3], s[4]}, X = s[4];
  tsl_nk_add_arg(k, n->inputs[0], 4, v);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], 4, v);
  snprintf(k->label, sizeof k->label, "channel_shuffle_nchwc_g%lld", (long long)G);
  tsl_nk_put_header(b, k);
  char ch[64], src[192];
  snprintf(ch, sizeof ch, "min(cb*%lld + c, %lld)", (long long)X, (long long)(C - 1));
  snprintf(src, sizeof src, "(%s %% %lld) * %lld + %s / %lld", ch, (long long)G, (long long)(C / G), ch, (long long)G);
  tsl_text_put(b, "  out[n, cb, i, c] = ");
  put_lane_guard_open(b, C, X);
  tsl_text_put(b, "x0[n, (%s) / %lld, i, (%s) %% %lld]", src, (long long)X, src, (long long)X);
  put_lane_guard_close(b, C, X);
  tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)v[0], (long long)v[1], (long long)v[2],
               (long long)v[3]);
  return TSL_OK;
}

tsl_status tsl_nk_make_nchwc(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  if (n->op == TSL_OP_IDENTITY && tsl_node_attr_int(n, TSL_ATTR_LAYOUT_TRANSFORM, 0))
    return make_transform(g, node, k, b);
  switch (n->op) {
  case TSL_OP_CONV:
    /* its algorithm, kernel and weights come from the tuner's dispatch */
    return tsl_nk_node_err(g, node, TSL_ERR_INVALID,
                           "a blocked conv is built by the graph compiler's conv path (models/compile_conv.h)");
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL: return tsl_nk_make_pool(g, node, k, b);
  case TSL_OP_GLOBAL_AVERAGE_POOL:
  case TSL_OP_REDUCE_MEAN: return make_global_pool(g, node, k, b);
  case TSL_OP_RELU:
  case TSL_OP_CLIP:
  case TSL_OP_ADD:
  case TSL_OP_MUL:
  case TSL_OP_DIV:
    if (n->op == TSL_OP_DIV || !same_storage(g, n)) return make_broadcast(g, node, k, b);
    return make_elemwise(g, node, k, b);
  case TSL_OP_ACTIVATION: return make_activation(g, node, k, b);
  case TSL_OP_BATCH_NORM: return make_batch_norm(g, node, k, b);
  case TSL_OP_CONCAT: return make_concat(g, node, k, b);
  case TSL_OP_SLICE: return make_slice(g, node, k, b);
  case TSL_OP_CHANNEL_SHUFFLE: return make_channel_shuffle(g, node, k, b);
  case TSL_OP_RESIZE: return tsl_nk_make_resize(g, node, k, b);
  case TSL_OP_PRELU: return tsl_nk_make_prelu(g, node, k, b);
  default: return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "no blocked (NCHW[x]c) kernel for this operator");
  }
}
