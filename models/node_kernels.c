/* Graph nodes as DSL operator texts with literal shapes (node_kernels.h): each node is
 * mapped to a generated operator of ops/ (ops/op_call.h) and a call holding its tensor
 * arguments and the attributes that generator reads. */
#include "models/node_kernels.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/node_kernels_internal.h"
#include "models/node_kernels_binary.h"
#include "models/passes/fuse_conv.h"
#include "models/passes/layout.h"
#include "models/passes/pack_dense.h"
#include "ops/nn/activation.h"
#include "ops/nn/generators.h"
#include "ops/nn/resize.h"

tsl_status tsl_nk_node_err(const tsl_graph *g, int node, tsl_status st, const char *why) {
  const tsl_node *n = &g->nodes[node];
  return tsl_error(st, "compile: node %s (%s): %s", n->name, tsl_op_name(n->op), why);
}

const tsl_value *tsl_nk_in_val(const tsl_graph *g, const tsl_node *n, int i) {
  return i < n->n_inputs && n->inputs[i] >= 0 ? &g->values[n->inputs[i]] : NULL;
}

/* Adds argument `value` seen with shape dims[0..nd). */
void tsl_nk_add_arg(tsl_node_kernel *k, int value, int nd, const int64_t *dims) {
  int a = k->nargs++;
  k->values[a] = value;
  k->ndims[a] = nd;
  for (int d = 0; d < nd; d++) k->shapes[a][d] = dims[d];
}

void tsl_nk_call_arg(tsl_op_call *c, tsl_node_kernel *k, const tsl_graph *g, int value) {
  const tsl_value *v = &g->values[value];
  int block = v->layout.kind == TSL_LAYOUT_NCHWC ? v->layout.block : 0;
  if (tsl_op_call_add_tensor(c, v->ndim, v->shape, block) >= 0) k->values[k->nargs++] = value;
}

tsl_status tsl_nk_generate(const tsl_graph *g, int node, const char *name, const tsl_op_call *c,
                           tsl_node_kernel *k, tsl_text_buf *b) {
  if (k->nargs != c->nargs) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "too many tensor arguments");
  tsl_op_text t;
  tsl_status st = tsl_op_generate(name, c, &t);
  if (st != TSL_OK) {
    char why[1024]; /* tsl_last_error's buffer is the one the new message is written into */
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_nk_node_err(g, node, st, why);
  }
  for (int a = 0; a < t.nargs; a++) {
    k->ndims[a] = t.ndims[a];
    memcpy(k->shapes[a], t.views[a], sizeof t.views[a]);
  }
  k->ninputs = c->ninputs;
  snprintf(k->label, sizeof k->label, "%s", t.label);
  free(b->s);
  *b = t.text;
  return TSL_OK;
}

static int64_t numel(const tsl_value *v) {
  int64_t n = 1;
  for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
  return n;
}

/* ---- node -> (generator, call): the attributes the generators of ops/ read ---- */

/* Adds node n's first `nin` inputs that are present (nin < 0: all; an absent optional
 * input is skipped: the call's attributes say which are there), then its first `nout`
 * outputs (nout < 0: all). */
static void call_args(tsl_op_call *c, tsl_node_kernel *k, const tsl_graph *g, const tsl_node *n, int nin, int nout) {
  int ni = nin < 0 || nin > n->n_inputs ? n->n_inputs : nin, no = nout < 0 || nout > n->n_outputs ? n->n_outputs : nout;
  for (int i = 0; i < ni; i++)
    if (n->inputs[i] >= 0) tsl_nk_call_arg(c, k, g, n->inputs[i]);
  c->ninputs = c->nargs;
  for (int i = 0; i < no; i++) tsl_nk_call_arg(c, k, g, n->outputs[i]);
}

/* Copies node n's list attribute `name` (a literal) into c when n has it. */
static void copy_ints(tsl_op_call *c, const tsl_node *n, const char *name) {
  int m;
  const int64_t *v = tsl_node_attr_ints(n, name, &m);
  if (v) tsl_op_call_set_ints(c, name, m, v);
}

/* The window attributes of a Conv or pool node, checked (tsl_node_conv2d_params). */
static tsl_status set_window(tsl_op_call *c, const tsl_graph *g, const tsl_node *n, tsl_conv2d_params *p) {
  tsl_status st = tsl_node_conv2d_params(g, n, p);
  if (st != TSL_OK) return st;
  tsl_op_call_set_ints(c, "strides", 2, p->strides);
  tsl_op_call_set_ints(c, "dilations", 2, p->dilations);
  tsl_op_call_set_ints(c, "pads", 4, p->pads);
  return TSL_OK;
}

/* The table function fused into node n (models/passes/fuse_conv.h), if any, as the
 * generator's "epilogue" attributes (ops/epilogue.h). */
static tsl_status set_fused_function(tsl_op_call *c, const tsl_graph *g, const tsl_node *n) {
  const tsl_activation *fn;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  tsl_status st = tsl_node_fused_function(g, n, &fn, attrs);
  if (st == TSL_OK && fn) tsl_op_call_set_epilogue(c, fn, attrs);
  return st;
}

/* A convolution with its fused epilogue (models/passes/fuse_conv.h): bias, residual,
 * Relu, Clip or a function of the activation table. */
static tsl_status make_conv(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  tsl_conv2d_params p;
  tsl_status st = set_window(&c, g, n, &p);
  if (st != TSL_OK) return st;
  call_args(&c, k, g, n, 4, 1);
  tsl_op_call_set_int(&c, "group", p.group);
  tsl_op_call_set_int(&c, "bias", tsl_nk_in_val(g, n, 2) != NULL);
  tsl_op_call_set_int(&c, "residual", tsl_nk_in_val(g, n, 3) != NULL);
  int act = (int)tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE);
  if (act == TSL_ACT_RELU) tsl_op_call_set_string(&c, "activation", "relu");
  if (act == TSL_ACT_CLIP) {
    tsl_op_call_set_string(&c, "activation", "clip");
    tsl_op_call_set_float(&c, "clip_min", tsl_node_attr_float(n, TSL_ATTR_CLIP_MIN, -INFINITY));
    tsl_op_call_set_float(&c, "clip_max", tsl_node_attr_float(n, TSL_ATTR_CLIP_MAX, INFINITY));
  }
  if ((st = set_fused_function(&c, g, n)) != TSL_OK) return st;
  return tsl_nk_generate(g, node, "conv2d", &c, k, b);
}

/* The squeeze-excitation gate (graph.h tsl.SqueezeExcite): its functions' names and
 * attributes passed on as the generator reads them (ops/nn/generators.h). */
static tsl_status make_squeeze_excite(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 5, 1);
  static const char *const names[2][3] = {{"hidden", "hidden_attr0", "hidden_attr1"},
                                          {"gate", "gate_attr0", "gate_attr1"}};
  for (int f = 0; f < 2; f++) {
    const tsl_attr *fn = tsl_node_attr(n, names[f][0]);
    if (!fn) continue;
    if (fn->kind != TSL_ATTR_STRING) return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "a function name is not a string");
    tsl_op_call_set_string(&c, names[f][0], fn->s);
    for (int a = 1; a < 3; a++)
      if (tsl_node_attr(n, names[f][a])) tsl_op_call_set_float(&c, names[f][a], tsl_node_attr_float(n, names[f][a], 0.0));
  }
  return tsl_nk_generate(g, node, "squeeze_excite", &c, k, b);
}

/* MaxPool or AveragePool, plain or blocked (the generator reads the arguments' layout). */
static tsl_status make_pool(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  tsl_conv2d_params p;
  tsl_status st = set_window(&c, g, n, &p);
  if (st != TSL_OK) return st;
  call_args(&c, k, g, n, 1, 1);
  tsl_op_call_set_string(&c, "mode", n->op == TSL_OP_MAX_POOL ? "max" : "avg");
  tsl_op_call_set_ints(&c, "kernel", 2, p.kernel);
  tsl_op_call_set_int(&c, "count_include_pad", p.count_include_pad);
  return tsl_nk_generate(g, node, "pool2d", &c, k, b);
}

/* GlobalAveragePool, and a ReduceMean over the spatial axes. */
static tsl_status make_global_pool(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  tsl_op_call c = {0};
  call_args(&c, k, g, &g->nodes[node], 1, 1);
  return tsl_nk_generate(g, node, "global_avgpool", &c, k, b);
}

static tsl_status make_elemwise(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  bool unary = n->op == TSL_OP_RELU || n->op == TSL_OP_CLIP;
  call_args(&c, k, g, n, unary ? 1 : 2, 1);
  const char *op = n->op == TSL_OP_RELU  ? "relu"
                   : n->op == TSL_OP_CLIP ? "clip"
                   : n->op == TSL_OP_ADD  ? "add"
                   : n->op == TSL_OP_SUB  ? "sub"
                   : n->op == TSL_OP_MUL  ? "mul"
                                          : "div";
  tsl_op_call_set_string(&c, "op", op);
  if (n->op == TSL_OP_CLIP) {
    tsl_op_call_set_float(&c, "min", tsl_node_attr_float(n, "min", -INFINITY));
    tsl_op_call_set_float(&c, "max", tsl_node_attr_float(n, "max", INFINITY));
  }
  return tsl_nk_generate(g, node, "elemwise", &c, k, b);
}

/* A tsl.Activation node: the row of ops/nn/activation.h and its attribute values. */
static tsl_status make_activation(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  tsl_status st = tsl_node_activation(g, n, &a, attrs);
  if (st != TSL_OK) return st;
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  tsl_op_call_set_string(&c, "function", a->onnx_op);
  for (int i = 0; i < a->nattrs; i++) tsl_op_call_set_float(&c, a->attr[i], attrs[i]);
  return tsl_nk_generate(g, node, "activation", &c, k, b);
}

/* Concat and Split: every input / output, the node's axis. */
static tsl_status make_concat_split(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  bool concat = n->op == TSL_OP_CONCAT;
  call_args(&c, k, g, n, concat ? -1 : 1, concat ? 1 : -1);
  tsl_op_call_set_int(&c, "axis", tsl_node_attr_int(n, "axis", 0));
  return tsl_nk_generate(g, node, concat ? "concat" : "split", &c, k, b);
}

static tsl_status make_slice(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  copy_ints(&c, n, "starts");
  copy_ints(&c, n, "axes");
  copy_ints(&c, n, "steps");
  return tsl_nk_generate(g, node, "slice", &c, k, b);
}

static tsl_status make_transpose(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  copy_ints(&c, n, "perm");
  return tsl_nk_generate(g, node, "transpose", &c, k, b);
}

static tsl_status make_pad(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  copy_ints(&c, n, "pads");
  tsl_op_call_set_float(&c, "value", tsl_node_attr_float(n, "value", 0.0));
  return tsl_nk_generate(g, node, "pad", &c, k, b);
}

static tsl_status make_batch_norm(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, -1, 1);
  tsl_op_call_set_float(&c, "epsilon", tsl_node_attr_float(n, "epsilon", 1e-5));
  return tsl_nk_generate(g, node, "batch_norm", &c, k, b);
}

/* A one-input generator whose only attribute is the node's integer `attr` (dflt when
 * absent): channel_shuffle (group), space_to_depth (blocksize). */
static tsl_status make_int_attr_op(const tsl_graph *g, int node, const char *gen, const char *attr, int64_t dflt,
                                   tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  tsl_op_call_set_int(&c, attr, tsl_node_attr_int(n, attr, dflt));
  return tsl_nk_generate(g, node, gen, &c, k, b);
}

/* tsl.ChannelGather: the node's pieces, one call attribute each ("piece0", ...). */
static tsl_status make_channel_gather(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, -1, 1);
  int m;
  const int64_t *v = tsl_node_attr_ints(n, "pieces", &m);
  if (!v || m % 6 != 0 || m / 6 < 1 || m / 6 > TSL_CHANNEL_GATHER_MAX_PIECES)
    return tsl_nk_node_err(g, node, TSL_ERR_INVALID,
                           "ints attribute 'pieces' must hold 1..TSL_CHANNEL_GATHER_MAX_PIECES pieces of 6 integers");
  tsl_op_call_set_int(&c, "npieces", m / 6);
  for (int p = 0; p < m / 6; p++) tsl_op_call_set_ints(&c, tsl_channel_gather_piece_name(p), 6, v + 6 * p);
  return tsl_nk_generate(g, node, "channel_gather", &c, k, b);
}

/* Gemm, or MatMul by a 2-D weight, whose weight the graph passes packed [N/Y, K, Y]
 * (models/passes/pack_dense.h): the GEMV form "dense_packed". */
static tsl_status make_dense_packed(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b, bool ta,
                                    double alpha, double beta, bool bias) {
  tsl_op_call c = {0};
  call_args(&c, k, g, &g->nodes[node], bias ? 3 : 2, 1);
  tsl_op_call_set_int(&c, "transA", ta);
  tsl_op_call_set_float(&c, "alpha", alpha);
  tsl_op_call_set_float(&c, "beta", beta);
  tsl_status st = set_fused_function(&c, g, &g->nodes[node]);
  return st == TSL_OK ? tsl_nk_generate(g, node, "dense_packed", &c, k, b) : st;
}

/* Gemm: its bias C is an argument only where beta is not 0. */
static tsl_status make_gemm(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  bool ta = tsl_node_attr_int(n, "transA", 0) != 0, tb = tsl_node_attr_int(n, "transB", 0) != 0;
  double alpha = tsl_node_attr_float(n, "alpha", 1.0), beta = tsl_node_attr_float(n, "beta", 1.0);
  bool bias = tsl_nk_in_val(g, n, 2) && beta != 0.0;
  if (tsl_node_attr_int(n, TSL_ATTR_PACKED_DENSE, 0)) return make_dense_packed(g, node, k, b, ta, alpha, beta, bias);
  tsl_op_call c = {0};
  call_args(&c, k, g, n, bias ? 3 : 2, 1);
  tsl_op_call_set_int(&c, "transA", ta);
  tsl_op_call_set_int(&c, "transB", tb);
  tsl_op_call_set_float(&c, "alpha", alpha);
  tsl_op_call_set_float(&c, "beta", beta);
  tsl_status st = set_fused_function(&c, g, n);
  return st == TSL_OK ? tsl_nk_generate(g, node, "gemm", &c, k, b) : st;
}

static tsl_status make_matmul(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  if (tsl_nk_in_val(g, n, 0)->ndim >= 2 && tsl_node_attr_int(n, TSL_ATTR_PACKED_DENSE, 0))
    return make_dense_packed(g, node, k, b, false, 1.0, 1.0, false);
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 2, 1);
  tsl_status st = set_fused_function(&c, g, n);
  return st == TSL_OK ? tsl_nk_generate(g, node, "matmul", &c, k, b) : st;
}

static tsl_status make_softmax(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  int64_t axis = tsl_node_attr_int(n, "axis", -1);
  tsl_op_call_set_int(&c, "axis", axis < 0 ? axis + g->values[n->inputs[0]].ndim : axis);
  return tsl_nk_generate(g, node, "softmax", &c, k, b);
}

/* ReduceSum/Mean/Max/Min over any axes (the spatial mean keeps make_global_pool) */
static tsl_status make_reduce(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  bool red[TSL_MAX_NDIM];
  int64_t axes[TSL_MAX_NDIM];
  int na = 0;
  tsl_status st = tsl_node_reduce_axes(g, n, red, NULL);
  if (st != TSL_OK) return st;
  for (int d = 0; d < g->values[n->inputs[0]].ndim; d++)
    if (red[d]) axes[na++] = d;
  tsl_op_call c = {0};
  call_args(&c, k, g, n, 1, 1);
  tsl_op_call_set_ints(&c, "axes", na, axes);
  tsl_op_call_set_string(&c, "function", n->op == TSL_OP_REDUCE_MEAN ? "mean" : n->op == TSL_OP_REDUCE_SUM ? "sum"
                                          : n->op == TSL_OP_REDUCE_MAX ? "max" : "min");
  return tsl_nk_generate(g, node, "reduce", &c, k, b);
}

/* LayerNormalization (plain, or over the channels of NCHW[x]c) and Pow: inputs, outputs
 * and attributes as they are */
static tsl_status make_norm_or_pow(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  call_args(&c, k, g, n, -1, -1);
  if (n->op == TSL_OP_POW) {
    if (n->n_inputs == 1) tsl_op_call_set_float(&c, "exponent", tsl_node_attr_float(n, "exponent", 1.0));
    return tsl_nk_generate(g, node, "pow", &c, k, b);
  }
  int rank = g->values[n->inputs[0]].ndim;
  int64_t axis = tsl_node_attr_int(n, "axis", -1);
  tsl_op_call_set_int(&c, "axis", axis < 0 ? axis + rank : axis);
  tsl_op_call_set_int(&c, "end", tsl_node_attr_int(n, TSL_ATTR_NORM_END, rank));
  tsl_op_call_set_float(&c, "epsilon", tsl_node_attr_float(n, "epsilon", 1e-5));
  return tsl_nk_generate(g, node, "layer_norm", &c, k, b);
}

/* ---- Resize, PRelu, Pad's reading modes: generated (ops/nn/generators.h) ---- */

tsl_status tsl_nk_make_resize(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  const tsl_attr *scales = tsl_node_attr(n, "scales");
  int64_t num[TSL_MAX_NDIM], den[TSL_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) { /* scale = out / in unless the model gave scales */
    num[d] = y->shape[d], den[d] = x->shape[d];
    if (scales && tsl_resize_scale_ratio(scales->floats[d], &num[d], &den[d]) != TSL_OK) {
      char why[256]; /* copied: the error is rewritten from it */
      snprintf(why, sizeof why, "%s", tsl_last_error());
      return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, why);
    }
  }
  tsl_op_call c = {0};
  tsl_nk_call_arg(&c, k, g, n->inputs[0]);
  c.ninputs = 1;
  tsl_nk_call_arg(&c, k, g, n->outputs[0]);
  tsl_op_call_set_ints(&c, "scale_num", x->ndim, num);
  tsl_op_call_set_ints(&c, "scale_den", x->ndim, den);
  static const char *const strings[] = {"mode", "coordinate_transformation_mode", "nearest_mode"};
  for (int i = 0; i < 3; i++) {
    const tsl_attr *a = tsl_node_attr(n, strings[i]);
    if (a && a->kind == TSL_ATTR_STRING) tsl_op_call_set_string(&c, strings[i], a->s);
  }
  return tsl_nk_generate(g, node, "resize", &c, k, b);
}

tsl_status tsl_nk_make_prelu(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *s = tsl_nk_in_val(g, n, 1);
  tsl_op_call c = {0};
  tsl_nk_call_arg(&c, k, g, n->inputs[0]);
  if (s->ndim == 0) { /* a scalar slope: one element */
    if (tsl_op_call_add_tensor(&c, 1, (const int64_t[]){1}, 0) >= 0) k->values[k->nargs++] = n->inputs[1];
  } else {
    tsl_nk_call_arg(&c, k, g, n->inputs[1]);
  }
  c.ninputs = 2;
  tsl_nk_call_arg(&c, k, g, n->outputs[0]);
  return tsl_nk_generate(g, node, "prelu", &c, k, b);
}

static tsl_status make_pad_mode(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  int np;
  const int64_t *pads = tsl_node_attr_ints(n, "pads", &np);
  tsl_op_call c = {0};
  tsl_nk_call_arg(&c, k, g, n->inputs[0]);
  c.ninputs = 1;
  tsl_nk_call_arg(&c, k, g, n->outputs[0]);
  if (!tsl_op_call_set_ints(&c, "pads", np, pads))
    return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "more pads than a generated operator takes");
  tsl_op_call_set_string(&c, "mode", tsl_node_attr(n, "mode")->s);
  return tsl_nk_generate(g, node, "pad_mode", &c, k, b);
}

/* Pad in a mode other than constant (reflect, edge, wrap) */
static bool pad_reads_input(const tsl_node *n) {
  const tsl_attr *m = tsl_node_attr(n, "mode");
  return m && m->kind == TSL_ATTR_STRING && strcmp(m->s, "constant") != 0;
}

tsl_status tsl_node_kernel_make(const tsl_graph *g, int node, tsl_node_kernel *out) {
  if (!g || !out || node < 0 || node >= g->n_nodes) return tsl_error(TSL_ERR_INVALID, "compile: bad node");
  memset(out, 0, sizeof *out);
  const tsl_node *n = &g->nodes[node];
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && g->values[n->inputs[i]].ndim < 0)
      return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "an input has no inferred shape");
  for (int i = 0; i < n->n_outputs; i++) {
    const tsl_value *v = &g->values[n->outputs[i]];
    if (v->ndim < 0) return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "an output has no inferred shape");
    if (numel(v) == 0) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "an empty output tensor");
  }
  bool transform = n->op == TSL_OP_IDENTITY && tsl_node_attr_int(n, TSL_ATTR_LAYOUT_TRANSFORM, 0);
  bool blocked = g->values[n->outputs[0]].layout.kind == TSL_LAYOUT_NCHWC && n->op != TSL_OP_IDENTITY &&
                 n->op != TSL_OP_DROPOUT;
  /* a global mean from the blocked layout straight into a plain [N, C] result */
  blocked |= (tsl_node_is_spatial_mean(g, n) || n->op == TSL_OP_GLOBAL_AVERAGE_POOL) && n->n_inputs > 0 &&
             n->inputs[0] >= 0 && g->values[n->inputs[0]].layout.kind == TSL_LAYOUT_NCHWC;
  if (blocked && !transform) {
    tsl_status st = tsl_nk_check_nchwc(g, node);
    if (st != TSL_OK) return st;
  }
  switch (n->op) {
  case TSL_OP_IDENTITY:
    if (transform) break; /* a registry kernel, below */
    /* fall through */
  case TSL_OP_RESHAPE:
  case TSL_OP_FLATTEN:
  case TSL_OP_DROPOUT:
    out->kind = TSL_NODE_ALIAS;
    out->values[0] = n->inputs[0];
    out->values[1] = n->outputs[0];
    out->nargs = 2;
    out->ninputs = 1;
    snprintf(out->label, sizeof out->label, "alias");
    return TSL_OK;
  default:
    break;
  }
  snprintf(out->op_name, sizeof out->op_name, "k");
  tsl_text_buf b = {0};
  tsl_status st;
  switch (n->op) {
  case TSL_OP_IDENTITY: st = tsl_nk_make_transform(g, node, out, &b); break;
  case TSL_OP_CONV: st = make_conv(g, node, out, &b); break;
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL: st = make_pool(g, node, out, &b); break;
  case TSL_OP_GLOBAL_AVERAGE_POOL: st = make_global_pool(g, node, out, &b); break;
  case TSL_OP_REDUCE_MEAN:
    st = tsl_node_is_spatial_mean(g, n) ? make_global_pool(g, node, out, &b) : make_reduce(g, node, out, &b);
    break;
  case TSL_OP_REDUCE_SUM:
  case TSL_OP_REDUCE_MAX:
  case TSL_OP_REDUCE_MIN: st = make_reduce(g, node, out, &b); break;
  case TSL_OP_POW:
  case TSL_OP_LAYER_NORM: st = make_norm_or_pow(g, node, out, &b); break;
  case TSL_OP_RELU:
  case TSL_OP_CLIP:
  case TSL_OP_SUB:
  case TSL_OP_ADD:
  case TSL_OP_MUL:
  case TSL_OP_DIV: st = make_elemwise(g, node, out, &b); break;
  case TSL_OP_ACTIVATION: st = make_activation(g, node, out, &b); break;
  case TSL_OP_CONCAT:
  case TSL_OP_SPLIT: st = make_concat_split(g, node, out, &b); break;
  case TSL_OP_SLICE: st = make_slice(g, node, out, &b); break;
  case TSL_OP_TRANSPOSE: st = make_transpose(g, node, out, &b); break;
  case TSL_OP_SPACE_TO_DEPTH: st = make_int_attr_op(g, node, "space_to_depth", "blocksize", 0, out, &b); break;
  case TSL_OP_PAD: st = pad_reads_input(n) ? make_pad_mode(g, node, out, &b) : make_pad(g, node, out, &b); break;
  case TSL_OP_RESIZE: st = tsl_nk_make_resize(g, node, out, &b); break;
  case TSL_OP_PRELU: st = tsl_nk_make_prelu(g, node, out, &b); break;
  case TSL_OP_GEMM: st = make_gemm(g, node, out, &b); break;
  case TSL_OP_MATMUL: st = make_matmul(g, node, out, &b); break;
  case TSL_OP_SOFTMAX: st = make_softmax(g, node, out, &b); break;
  case TSL_OP_BATCH_NORM: st = make_batch_norm(g, node, out, &b); break;
  case TSL_OP_CHANNEL_SHUFFLE: st = make_int_attr_op(g, node, "channel_shuffle", "group", 1, out, &b); break;
  case TSL_OP_CHANNEL_GATHER: st = make_channel_gather(g, node, out, &b); break;
  case TSL_OP_SQUEEZE_EXCITE: st = make_squeeze_excite(g, node, out, &b); break;
  case TSL_OP_BINARY: st = tsl_nk_make_binary(g, node, out, &b); break;
  default: st = tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "no kernel computes this operator (fold it first)"); break;
  }
  if (st == TSL_OK && b.oom) st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  if (st != TSL_OK) {
    free(b.s);
    return st;
  }
  out->kind = TSL_NODE_KERNEL;
  out->text = b.s;
  return TSL_OK;
}

void tsl_node_kernel_clear(tsl_node_kernel *k) {
  if (!k) return;
  free(k->text);
  k->text = NULL;
}
