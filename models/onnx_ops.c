/* ONNX operators that become graph nodes: one handler per op type, each checking the
 * attributes its opset defines and mapping the node to the canonical form of graph.h
 * (constant parameter inputs become attributes, auto_pad becomes pads, old Softmax
 * becomes Reshape-Softmax-Reshape). Semantics per opset: onnx/docs/Changelog.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/onnx_internal.h"
#include "ops/conv2d/conv2d_layer.h"
#include "ops/nn/activation.h"

/* Creates the values named `out_names` (NULL name: anonymous) and a node reading `in`. */
static tsl_status emit(onnx_ctx *c, tsl_op op, const char *name, int n_in, const int *in, int n_out,
                       const char *const *out_names, int *node) {
  int outs[64];
  if (n_out > 64) return onnx_err(c, TSL_ERR_UNSUPPORTED, "%d outputs", n_out);
  for (int k = 0; k < n_out; k++) {
    const char *vn = out_names[k] && out_names[k][0] ? out_names[k] : NULL;
    if (vn && tsl_graph_find_value(c->g, vn) >= 0) return onnx_err(c, TSL_ERR_INVALID, "output '%s' is defined twice", vn);
    tsl_status st = tsl_graph_add_value(c->g, vn, &outs[k]);
    if (st != TSL_OK) return onnx_wrap(c, st);
  }
  tsl_status st = tsl_graph_add_node(c->g, op, name, n_in, in, n_out, outs, node);
  return st == TSL_OK ? st : onnx_wrap(c, st);
}

/* The common case: the ONNX node's inputs 0..n_in-1 and its first output. Input 0, the
 * data, is required by every operator (and read by the handlers after emitting); the
 * others may be omitted where shape inference allows it. */
static tsl_status emit_simple(onnx_ctx *c, tsl_op op, int n_in, int *node) {
  int in[64]; /* a Concat of 64 inputs (DenseNet's widest has 32) */
  if (n_in > 64) return onnx_err(c, TSL_ERR_UNSUPPORTED, "%d inputs (at most 64)", n_in);
  for (int k = 0; k < n_in; k++) {
    tsl_status st = k == 0 ? onnx_required_input(c, k, &in[k]) : onnx_input(c, k, &in[k]);
    if (st != TSL_OK) return st;
  }
  const char *out = c->node->output[0];
  if (!out || !out[0]) return onnx_err(c, TSL_ERR_INVALID, "output 0 has no name");
  char name[32];
  const char *nn = c->node->name && c->node->name[0] ? c->node->name : NULL;
  if (!nn) snprintf(name, sizeof name, "%s_%d", c->node->op_type, c->node_index);
  return emit(c, op, nn ? nn : name, n_in, in, 1, &out, node);
}

static tsl_status finish(onnx_ctx *c, int node) {
  tsl_status st = tsl_graph_infer_node(c->g, node);
  return st == TSL_OK ? st : onnx_wrap(c, st);
}

static tsl_status need_inputs(onnx_ctx *c, int lo, int hi) {
  int n = onnx_n_inputs(c);
  if (n < lo || n > hi) return onnx_err(c, TSL_ERR_INVALID, "%d inputs (expected %d..%d)", n, lo, hi);
  return TSL_OK;
}

/* Optional outputs past `used` must be unnamed (they only exist in training). */
static tsl_status no_outputs_past(onnx_ctx *c, size_t used, const char *what) {
  for (size_t k = used; k < c->node->n_output; k++)
    if (c->node->output[k] && c->node->output[k][0])
      return onnx_err(c, TSL_ERR_UNSUPPORTED, "output %zu ('%s', %s) is not supported", k, c->node->output[k], what);
  return TSL_OK;
}

static tsl_status copy_int(onnx_ctx *c, int node, const char *name) {
  if (!onnx_attr(c, name)) return TSL_OK;
  int64_t v;
  tsl_status st = onnx_attr_int(c, name, 0, &v);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(c->g, node, name, v);
  return st;
}

static tsl_status copy_float(onnx_ctx *c, int node, const char *name) {
  if (!onnx_attr(c, name)) return TSL_OK;
  double v;
  tsl_status st = onnx_attr_float(c, name, 0, &v);
  if (st == TSL_OK) st = tsl_graph_set_attr_float(c->g, node, name, v);
  return st;
}

static tsl_status copy_ints(onnx_ctx *c, int node, const char *name) {
  if (!onnx_attr(c, name)) return TSL_OK;
  int n;
  const int64_t *v;
  tsl_status st = onnx_attr_ints(c, name, &n, &v);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, name, n, v);
  return st;
}

/* Replaces auto_pad SAME_UPPER / SAME_LOWER / VALID by explicit pads: output extent
 * ceil(in / stride), the total padding split with the extra pixel at the end (UPPER)
 * or the beginning (LOWER) (tsl_window_same_pads). */
static tsl_status resolve_auto_pad(onnx_ctx *c, int node) {
  char mode[32];
  tsl_status st = onnx_attr_string(c, "auto_pad", "NOTSET", mode, sizeof mode);
  if (st != TSL_OK || strcmp(mode, "NOTSET") == 0) return st;
  const tsl_node *n = &c->g->nodes[node];
  const tsl_value *x = &c->g->values[n->inputs[0]];
  if (x->ndim != 4) return TSL_OK; /* shape inference reports the rank */
  int64_t pads[4] = {0, 0, 0, 0};
  if (strcmp(mode, "VALID") != 0) {
    bool upper = strcmp(mode, "SAME_UPPER") == 0;
    if (!upper && strcmp(mode, "SAME_LOWER") != 0)
      return onnx_err(c, TSL_ERR_INVALID, "auto_pad '%s' (expected NOTSET, SAME_UPPER, SAME_LOWER, VALID)", mode);
    tsl_conv2d_params p;
    if ((st = tsl_node_conv2d_params(c->g, n, &p)) != TSL_OK) return onnx_wrap(c, st);
    if (p.kernel[0] < 1 || p.kernel[1] < 1 || x->shape[2] < 1 || x->shape[3] < 1)
      return TSL_OK; /* reported by shape inference */
    for (int i = 0; i < 2 && st == TSL_OK; i++)
      st = tsl_window_same_pads(x->shape[2 + i], p.kernel[i], p.strides[i], p.dilations[i], upper, &pads[i],
                                &pads[i + 2]);
    if (st != TSL_OK) {
      char why[256];
      snprintf(why, sizeof why, "%s", tsl_last_error()); /* onnx_err records a new message */
      return onnx_err(c, st, "auto_pad %s: %s", mode, why);
    }
  }
  st = tsl_graph_set_attr_ints(c->g, node, "pads", 4, pads);
  return st == TSL_OK ? st : onnx_wrap(c, st);
}

/* ---- handlers ---- */

static tsl_status h_conv(onnx_ctx *c) {
  static const char *const ok[] = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 2, 3);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_CONV, onnx_n_inputs(c), &node);
  if (st == TSL_OK) st = copy_ints(c, node, "kernel_shape");
  if (st == TSL_OK) st = copy_ints(c, node, "strides");
  if (st == TSL_OK) st = copy_ints(c, node, "pads");
  if (st == TSL_OK) st = copy_ints(c, node, "dilations");
  if (st == TSL_OK) st = copy_int(c, node, "group");
  if (st == TSL_OK) st = resolve_auto_pad(c, node);
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_pool(onnx_ctx *c, tsl_op op) {
  static const char *const max_ok[] = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
                                       "strides", NULL};
  static const char *const avg_ok[] = {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides",
                                       NULL};
  tsl_status st = onnx_check_attrs(c, op == TSL_OP_MAX_POOL ? max_ok : avg_ok);
  if (st == TSL_OK) st = need_inputs(c, 1, 1);
  if (st == TSL_OK) st = no_outputs_past(c, 1, "argmax indices");
  int node;
  if (st == TSL_OK) st = emit_simple(c, op, 1, &node);
  if (st == TSL_OK) st = copy_ints(c, node, "kernel_shape");
  if (st == TSL_OK) st = copy_ints(c, node, "strides");
  if (st == TSL_OK) st = copy_ints(c, node, "pads");
  if (st == TSL_OK) st = copy_ints(c, node, "dilations");
  if (st == TSL_OK) st = copy_int(c, node, "ceil_mode");
  if (st == TSL_OK) st = copy_int(c, node, "count_include_pad");
  if (st == TSL_OK) st = resolve_auto_pad(c, node);
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_maxpool(onnx_ctx *c) { return h_pool(c, TSL_OP_MAX_POOL); }
static tsl_status h_avgpool(onnx_ctx *c) { return h_pool(c, TSL_OP_AVERAGE_POOL); }

/* Opset 6 says test mode with is_test = 1 (default 0: training); opset 14 says
 * training with training_mode = 1. */
static tsl_status h_batchnorm(onnx_ctx *c) {
  static const char *const ok[] = {"epsilon", "momentum", "spatial", "training_mode", NULL};
  static const char *const v6[] = {"epsilon", "momentum", "spatial", "is_test", NULL};
  tsl_status st = onnx_check_attrs(c, c->opset < 7 ? v6 : ok);
  int64_t training = 0, spatial = 1, is_test = 1;
  if (st == TSL_OK && c->opset < 7) st = onnx_attr_int(c, "is_test", 0, &is_test);
  if (st == TSL_OK) st = onnx_attr_int(c, "training_mode", !is_test, &training);
  if (st == TSL_OK) st = onnx_attr_int(c, "spatial", 1, &spatial);
  if (st == TSL_OK && training) st = onnx_err(c, TSL_ERR_UNSUPPORTED, "training mode is not supported");
  if (st == TSL_OK && spatial != 1) st = onnx_err(c, TSL_ERR_UNSUPPORTED, "spatial=0 (per-element statistics) is not supported");
  if (st == TSL_OK) st = need_inputs(c, 5, 5);
  if (st == TSL_OK) st = no_outputs_past(c, 1, "training statistics");
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_BATCH_NORM, 5, &node);
  if (st == TSL_OK) st = copy_float(c, node, "epsilon");
  return st == TSL_OK ? finish(c, node) : st;
}

/* A unary operator without attributes: Relu, GlobalAveragePool, Identity, MatMul... */
static tsl_status plain(onnx_ctx *c, tsl_op op, int n_in) {
  static const char *const none[] = {NULL};
  tsl_status st = onnx_check_attrs(c, none);
  if (st == TSL_OK) st = need_inputs(c, n_in, n_in);
  int node;
  if (st == TSL_OK) st = emit_simple(c, op, n_in, &node);
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_relu(onnx_ctx *c) { return plain(c, TSL_OP_RELU, 1); }
static tsl_status h_gap(onnx_ctx *c) { return plain(c, TSL_OP_GLOBAL_AVERAGE_POOL, 1); }
static tsl_status h_identity(onnx_ctx *c) { return plain(c, TSL_OP_IDENTITY, 1); }
static tsl_status h_matmul(onnx_ctx *c) { return plain(c, TSL_OP_MATMUL, 2); }
/* Add, Sub, Mul, Div, Pow. Before opset 7 they broadcast only when `broadcast` is set, aligning
 * B with A at `axis` (default: B's dimensions trailing A's); that is numpy's rule when
 * B trails, which is all tessel accepts of the legacy form. */
static tsl_status binary(onnx_ctx *c, tsl_op op) {
  if (c->opset >= 7) return plain(c, op, 2);
  static const char *const ok[] = {"broadcast", "axis", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 2, 2);
  int64_t bcast = 0, axis;
  int a, b;
  if (st == TSL_OK) st = onnx_attr_int(c, "broadcast", 0, &bcast);
  if (st == TSL_OK) st = onnx_required_input(c, 0, &a);
  if (st == TSL_OK) st = onnx_required_input(c, 1, &b);
  if (st != TSL_OK) return st;
  int ra = c->g->values[a].ndim, rb = c->g->values[b].ndim;
  if ((st = onnx_attr_int(c, "axis", ra - rb, &axis)) != TSL_OK) return st;
  if (bcast && axis != ra - rb)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "legacy broadcast of B (rank %d) at axis %lld of A (rank %d) is not supported",
                    rb, (long long)axis, ra);
  int node;
  st = emit_simple(c, op, 2, &node);
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_add(onnx_ctx *c) { return binary(c, TSL_OP_ADD); }
static tsl_status h_mul(onnx_ctx *c) { return binary(c, TSL_OP_MUL); }
static tsl_status h_div(onnx_ctx *c) { return binary(c, TSL_OP_DIV); }
static tsl_status h_sub(onnx_ctx *c) { return binary(c, TSL_OP_SUB); }

/* A constant f32 scalar input (Clip bounds, Pad value); *present false if omitted. */
static tsl_status const_scalar(onnx_ctx *c, int k, const char *what, double *v, bool *present) {
  int id;
  tsl_status st = onnx_input(c, k, &id);
  *present = false;
  if (st != TSL_OK || id < 0) return st;
  const tsl_tensor *t = c->g->values[id].constant;
  if (!t) return onnx_err(c, TSL_ERR_UNSUPPORTED, "%s input '%s' must be a constant", what, c->g->values[id].name);
  if (tsl_tensor_numel(t) != 1 || t->ndim > 1)
    return onnx_err(c, TSL_ERR_INVALID, "%s must be a scalar", what);
  if (tsl_dtype_equal(t->dtype, TSL_DTYPE_F32)) *v = *(const float *)t->data;
  else if (tsl_dtype_equal(t->dtype, TSL_DTYPE_F64)) *v = *(const double *)t->data;
  else return onnx_err(c, TSL_ERR_UNSUPPORTED, "%s of type %s (f32 only)", what, tsl_dtype_str(t->dtype));
  *present = true;
  return TSL_OK;
}

static tsl_status h_clip(onnx_ctx *c) {
  static const char *const old_ok[] = {"min", "max", NULL};
  static const char *const none[] = {NULL};
  bool old = c->opset < 11;
  tsl_status st = onnx_check_attrs(c, old ? old_ok : none);
  if (st == TSL_OK) st = need_inputs(c, 1, old ? 1 : 3);
  double lo = -INFINITY, hi = INFINITY;
  bool has_lo = false, has_hi = false;
  if (st == TSL_OK && old) {
    has_lo = onnx_attr(c, "min") != NULL;
    has_hi = onnx_attr(c, "max") != NULL;
    st = onnx_attr_float(c, "min", -INFINITY, &lo);
    if (st == TSL_OK) st = onnx_attr_float(c, "max", INFINITY, &hi);
  } else if (st == TSL_OK) {
    st = const_scalar(c, 1, "min", &lo, &has_lo);
    if (st == TSL_OK) st = const_scalar(c, 2, "max", &hi, &has_hi);
  }
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_CLIP, 1, &node);
  if (st == TSL_OK && has_lo) st = tsl_graph_set_attr_float(c->g, node, "min", lo);
  if (st == TSL_OK && has_hi) st = tsl_graph_set_attr_float(c->g, node, "max", hi);
  return st == TSL_OK ? finish(c, node) : st;
}

/* ReduceMean/Sum/Max/Min: axes an attribute before opset 18 (ReduceSum: 13), an optional
 * constant input after, with noop_with_empty_axes; no axes means every axis, or with
 * noop_with_empty_axes the input unchanged (an Identity node). */
static tsl_status h_reduce(onnx_ctx *c, tsl_op op) {
  static const char *const old_ok[] = {"axes", "keepdims", NULL};
  static const char *const new_ok[] = {"keepdims", "noop_with_empty_axes", NULL};
  bool old = c->opset < (op == TSL_OP_REDUCE_SUM ? 13 : 18);
  tsl_status st = onnx_check_attrs(c, old ? old_ok : new_ok);
  if (st == TSL_OK) st = need_inputs(c, 1, old ? 1 : 2);
  int64_t axes[TSL_MAX_NDIM], noop = 0;
  int n = -1;
  if (st == TSL_OK && old) {
    const int64_t *v;
    st = onnx_attr_ints(c, "axes", &n, &v);
    if (st == TSL_OK && !v) n = -1;
    if (st == TSL_OK && n > TSL_MAX_NDIM) st = onnx_err(c, TSL_ERR_INVALID, "%d axes", n);
    for (int i = 0; st == TSL_OK && i < n; i++) axes[i] = v[i];
  } else if (st == TSL_OK) {
    st = onnx_const_ints(c, 1, "axes", axes, TSL_MAX_NDIM, &n);
    if (st == TSL_OK) st = onnx_attr_int(c, "noop_with_empty_axes", 0, &noop);
  }
  int node;
  if (st == TSL_OK && noop && n <= 0) { /* no axes: the input as it is */
    st = emit_simple(c, TSL_OP_IDENTITY, 1, &node);
    return st == TSL_OK ? finish(c, node) : st;
  }
  if (st == TSL_OK) st = emit_simple(c, op, 1, &node);
  if (st == TSL_OK && n <= 0) { /* no axes: every axis */
    n = c->g->values[c->g->nodes[node].inputs[0]].ndim;
    for (int i = 0; i < n; i++) axes[i] = i;
  }
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, "axes", n, axes);
  if (st == TSL_OK) st = copy_int(c, node, "keepdims");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_reduce_mean(onnx_ctx *c) { return h_reduce(c, TSL_OP_REDUCE_MEAN); }
static tsl_status h_reduce_sum(onnx_ctx *c) { return h_reduce(c, TSL_OP_REDUCE_SUM); }
static tsl_status h_reduce_max(onnx_ctx *c) { return h_reduce(c, TSL_OP_REDUCE_MAX); }
static tsl_status h_reduce_min(onnx_ctx *c) { return h_reduce(c, TSL_OP_REDUCE_MIN); }

/* Pow (opsets 1, 7, 12, 13, 15: the exponent's type may differ from the base's from
 * 12 on). A constant scalar exponent that does not raise the rank becomes the attribute
 * "exponent" (graph.h), whatever its numeric type. */
static tsl_status h_pow(onnx_ctx *c) {
  const tsl_tensor *y = onnx_const_input(c, 1);
  int x;
  tsl_status st = onnx_required_input(c, 0, &x);
  if (st != TSL_OK) return st;
  if (!y || tsl_tensor_numel(y) != 1 || y->ndim > c->g->values[x].ndim) return binary(c, TSL_OP_POW);
  static const char *const none[] = {NULL};
  static const char *const v1[] = {"broadcast", "axis", NULL};
  st = onnx_check_attrs(c, c->opset < 7 ? v1 : none);
  if (st == TSL_OK) st = need_inputs(c, 2, 2);
  if (st == TSL_OK && y->dtype.code == TSL_DT_BOOL)
    st = onnx_err(c, TSL_ERR_UNSUPPORTED, "an exponent of type %s", tsl_dtype_str(y->dtype));
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_POW, 1, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_float(c->g, node, "exponent", tsl_tensor_get_f64(y, 0));
  return st == TSL_OK ? finish(c, node) : st;
}

/* LayerNormalization (opset 17), with its optional Mean and InvStdDev outputs. */
static tsl_status h_layer_norm(onnx_ctx *c) {
  static const char *const ok[] = {"axis", "epsilon", "stash_type", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  int64_t stash = 1;
  if (st == TSL_OK) st = onnx_attr_int(c, "stash_type", 1, &stash);
  if (st == TSL_OK && stash != 1)
    st = onnx_err(c, TSL_ERR_UNSUPPORTED, "stash_type %lld (only 1: statistics in f32)", (long long)stash);
  if (st == TSL_OK) st = need_inputs(c, 2, 3);
  int in[3], n_in = onnx_n_inputs(c), n_out = 0, node;
  for (int k = 0; st == TSL_OK && k < n_in; k++) st = k < 2 ? onnx_required_input(c, k, &in[k]) : onnx_input(c, k, &in[k]);
  if (st == TSL_OK && n_in == 3 && in[2] < 0) n_in = 2;
  const char *names[3];
  for (size_t k = 0; k < c->node->n_output && k < 3; k++) {
    names[k] = c->node->output[k];
    if (names[k] && names[k][0]) n_out = (int)k + 1; /* up to the last named one */
  }
  if (st == TSL_OK && (c->node->n_output > 3 || !names[0] || !names[0][0]))
    st = onnx_err(c, TSL_ERR_INVALID, "outputs Y (named), Mean and InvStdDev expected");
  char nm[32];
  snprintf(nm, sizeof nm, "LayerNormalization_%d", c->node_index);
  const char *name = c->node->name && c->node->name[0] ? c->node->name : nm;
  if (st == TSL_OK) st = emit(c, TSL_OP_LAYER_NORM, name, n_in, in, n_out, names, &node);
  if (st == TSL_OK) st = copy_int(c, node, "axis");
  if (st == TSL_OK) st = copy_float(c, node, "epsilon");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_concat(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  int n = onnx_n_inputs(c);
  if (st == TSL_OK && (n < 1 || n != (int)c->node->n_input)) st = onnx_err(c, TSL_ERR_INVALID, "Concat needs all its inputs");
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_CONCAT, n, &node);
  if (st == TSL_OK) st = copy_int(c, node, "axis");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_gemm(onnx_ctx *c) {
  /* Opset 6's `broadcast` allowed C to broadcast, which opset 7 made the rule. */
  static const char *const ok[] = {"alpha", "beta", "transA", "transB", NULL};
  static const char *const v6[] = {"alpha", "beta", "transA", "transB", "broadcast", NULL};
  tsl_status st = onnx_check_attrs(c, c->opset < 7 ? v6 : ok);
  if (st == TSL_OK) st = need_inputs(c, 2, 3);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_GEMM, onnx_n_inputs(c), &node);
  if (st == TSL_OK) st = copy_float(c, node, "alpha");
  if (st == TSL_OK) st = copy_float(c, node, "beta");
  if (st == TSL_OK) st = copy_int(c, node, "transA");
  if (st == TSL_OK) st = copy_int(c, node, "transB");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_flatten(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 1, 1);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_FLATTEN, 1, &node);
  if (st == TSL_OK) st = copy_int(c, node, "axis");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_space_to_depth(onnx_ctx *c) {
  static const char *const ok[] = {"blocksize", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 1, 1);
  int64_t bs = 0;
  if (st == TSL_OK) st = onnx_attr_int(c, "blocksize", 0, &bs);
  if (st == TSL_OK && bs < 1)
    st = onnx_err(c, TSL_ERR_INVALID, "SpaceToDepth: attribute 'blocksize' is required and must be >= 1 (got %lld)",
                  (long long)bs);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_SPACE_TO_DEPTH, 1, &node);
  if (st == TSL_OK) st = copy_int(c, node, "blocksize");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_transpose(onnx_ctx *c) {
  static const char *const ok[] = {"perm", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 1, 1);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_TRANSPOSE, 1, &node);
  if (st == TSL_OK) st = copy_ints(c, node, "perm");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_reshape(onnx_ctx *c) {
  static const char *const ok[] = {"allowzero", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 2, 2);
  int64_t shape[64];
  int n = -1;
  if (st == TSL_OK) st = onnx_const_ints(c, 1, "shape", shape, 64, &n);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_RESHAPE, 1, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, "shape", n, shape);
  if (st == TSL_OK) st = copy_int(c, node, "allowzero");
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_slice(onnx_ctx *c) {
  static const char *const old_ok[] = {"starts", "ends", "axes", NULL};
  static const char *const none[] = {NULL};
  bool old = c->opset < 10;
  tsl_status st = onnx_check_attrs(c, old ? old_ok : none);
  if (st == TSL_OK) st = need_inputs(c, old ? 1 : 3, old ? 1 : 5);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_SLICE, 1, &node);
  if (st == TSL_OK && old) {
    st = copy_ints(c, node, "starts");
    if (st == TSL_OK) st = copy_ints(c, node, "ends");
    if (st == TSL_OK) st = copy_ints(c, node, "axes");
  } else if (st == TSL_OK) {
    static const char *const names[] = {"starts", "ends", "axes", "steps"};
    for (int k = 1; k <= 4 && st == TSL_OK; k++) {
      int64_t v[TSL_MAX_NDIM];
      int n;
      st = onnx_const_ints(c, k, names[k - 1], v, TSL_MAX_NDIM, &n);
      if (st == TSL_OK && n >= 0) st = tsl_graph_set_attr_ints(c->g, node, names[k - 1], n, v);
    }
  }
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_split(onnx_ctx *c) {
  static const char *const v2[] = {"axis", "split", NULL};
  static const char *const v13[] = {"axis", NULL};
  static const char *const v18[] = {"axis", "num_outputs", NULL};
  tsl_status st = onnx_check_attrs(c, c->opset < 13 ? v2 : c->opset < 18 ? v13 : v18);
  if (st == TSL_OK) st = need_inputs(c, 1, c->opset < 13 ? 1 : 2);
  int n_out = (int)c->node->n_output;
  if (st == TSL_OK && n_out > 64) st = onnx_err(c, TSL_ERR_UNSUPPORTED, "%d outputs", n_out);
  int64_t split[64];
  int ns = -1;
  if (st == TSL_OK && c->opset < 13) {
    const int64_t *v;
    st = onnx_attr_ints(c, "split", &ns, &v);
    if (st == TSL_OK && !v) ns = -1;
    for (int i = 0; st == TSL_OK && i < ns; i++) split[i] = v[i];
  } else if (st == TSL_OK) {
    st = onnx_const_ints(c, 1, "split", split, 64, &ns);
  }
  int64_t axis = 0, num_outputs = 0;
  if (st == TSL_OK) st = onnx_attr_int(c, "axis", 0, &axis);
  if (st == TSL_OK) st = onnx_attr_int(c, "num_outputs", 0, &num_outputs);
  int x;
  if (st == TSL_OK) st = onnx_required_input(c, 0, &x);
  if (st != TSL_OK) return st;
  if (ns < 0 && num_outputs > 0) {
    /* Opset 18: chunks of ceil(extent / num_outputs), the last one smaller. */
    const tsl_value *xv = &c->g->values[x];
    int64_t a = axis < 0 ? axis + xv->ndim : axis;
    if (num_outputs != n_out || a < 0 || a >= xv->ndim)
      return onnx_err(c, TSL_ERR_INVALID, "num_outputs %lld with %d outputs, axis %lld", (long long)num_outputs, n_out,
                      (long long)axis);
    int64_t chunk = (xv->shape[a] + num_outputs - 1) / num_outputs, left = xv->shape[a];
    for (int k = 0; k < n_out; k++) {
      split[k] = left < chunk ? left : chunk;
      left -= split[k];
    }
    ns = n_out;
  }
  const char *names[64];
  for (int k = 0; k < n_out; k++) names[k] = c->node->output[k];
  int node;
  char nm[32];
  snprintf(nm, sizeof nm, "Split_%d", c->node_index);
  st = emit(c, TSL_OP_SPLIT, c->node->name && c->node->name[0] ? c->node->name : nm, 1, &x, n_out, names, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(c->g, node, "axis", axis);
  if (st == TSL_OK && ns >= 0) st = tsl_graph_set_attr_ints(c->g, node, "split", ns, split);
  return st == TSL_OK ? finish(c, node) : st;
}

/* Opset < 13 Softmax normalizes over all axes from `axis` on ("coerced to 2-D"); the
 * canonical form has one axis, so a non-last axis becomes Reshape-Softmax-Reshape. */
static tsl_status h_softmax(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st == TSL_OK) st = need_inputs(c, 1, 1);
  int64_t axis;
  if (st == TSL_OK) st = onnx_attr_int(c, "axis", c->opset < 13 ? 1 : -1, &axis);
  int x;
  if (st == TSL_OK) st = onnx_required_input(c, 0, &x);
  if (st != TSL_OK) return st;
  const tsl_value *xv = &c->g->values[x];
  int r = xv->ndim;
  int64_t a = axis < 0 ? axis + r : axis;
  int node;
  if (c->opset >= 13 || a == r - 1 || a < 0 || a >= r) {
    st = emit_simple(c, TSL_OP_SOFTMAX, 1, &node);
    if (st == TSL_OK) st = tsl_graph_set_attr_int(c->g, node, "axis", axis);
    return st == TSL_OK ? finish(c, node) : st;
  }
  int64_t outer = 1, inner = 1, orig[TSL_MAX_NDIM];
  for (int d = 0; d < r; d++) {
    orig[d] = xv->shape[d];
    *(d < a ? &outer : &inner) *= xv->shape[d];
  }
  int64_t flat[2] = {outer, inner};
  char base[200], nm[256];
  const char *out = c->node->output[0];
  if (!out || !out[0]) return onnx_err(c, TSL_ERR_INVALID, "output 0 has no name");
  snprintf(base, sizeof base, "%s", c->node->name && c->node->name[0] ? c->node->name : out);
  int mid1, mid2;
  snprintf(nm, sizeof nm, "%s/coerce2d", base);
  st = emit(c, TSL_OP_RESHAPE, nm, 1, &x, 1, (const char *const[]){NULL}, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, "shape", 2, flat);
  if (st == TSL_OK) st = finish(c, node);
  if (st != TSL_OK) return st;
  mid1 = c->g->nodes[node].outputs[0];
  snprintf(nm, sizeof nm, "%s/softmax2d", base);
  st = emit(c, TSL_OP_SOFTMAX, nm, 1, &mid1, 1, (const char *const[]){NULL}, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(c->g, node, "axis", 1);
  if (st == TSL_OK) st = finish(c, node);
  if (st != TSL_OK) return st;
  mid2 = c->g->nodes[node].outputs[0];
  snprintf(nm, sizeof nm, "%s/restore", base);
  st = emit(c, TSL_OP_RESHAPE, nm, 1, &mid2, 1, &out, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, "shape", r, orig);
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_dropout(onnx_ctx *c) {
  static const char *const v6[] = {"ratio", "is_test", NULL};
  static const char *const old_ok[] = {"ratio", "seed", NULL};
  static const char *const new_ok[] = {"seed", NULL};
  tsl_status st = onnx_check_attrs(c, c->opset < 7 ? v6 : c->opset < 12 ? old_ok : new_ok);
  int64_t is_test = 1;
  if (st == TSL_OK && c->opset < 7) st = onnx_attr_int(c, "is_test", 0, &is_test);
  if (st == TSL_OK && !is_test) st = onnx_err(c, TSL_ERR_UNSUPPORTED, "training mode (is_test = 0) is not supported");
  if (st == TSL_OK) st = need_inputs(c, 1, c->opset < 12 ? 1 : 3);
  if (st == TSL_OK && c->opset >= 12 && onnx_n_inputs(c) == 3) {
    const tsl_tensor *t = onnx_const_input(c, 2);
    if (!t || t->dtype.code != TSL_DT_BOOL || tsl_tensor_numel(t) != 1)
      st = onnx_err(c, TSL_ERR_UNSUPPORTED, "training_mode must be a constant boolean");
    else if (*(const uint8_t *)t->data)
      st = onnx_err(c, TSL_ERR_UNSUPPORTED, "training mode is not supported");
  }
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_DROPOUT, 1, &node);
  if (st == TSL_OK) st = finish(c, node);
  if (st == TSL_OK && c->node->n_output > 1 && c->node->output[1] && c->node->output[1][0]) {
    /* Inference keeps every element: the mask is all true, known at import. */
    const tsl_value *x = &c->g->values[c->g->nodes[node].inputs[0]];
    tsl_tensor *mask;
    st = tsl_tensor_new(TSL_DTYPE_BOOL, x->ndim, x->shape, &mask);
    if (st != TSL_OK) return onnx_wrap(c, st);
    memset(mask->data, 1, tsl_tensor_nbytes(mask));
    st = onnx_define_const(c, 1, mask);
  }
  return st;
}

static tsl_status h_pad(onnx_ctx *c) {
  static const char *const old_ok[] = {"mode", "pads", "value", NULL};
  static const char *const new_ok[] = {"mode", NULL};
  bool old = c->opset < 11;
  tsl_status st = onnx_check_attrs(c, old ? old_ok : new_ok);
  if (st == TSL_OK) st = need_inputs(c, old ? 1 : 2, old ? 1 : 4);
  int x;
  if (st == TSL_OK) st = onnx_required_input(c, 0, &x);
  if (st != TSL_OK) return st;
  int r = c->g->values[x].ndim;
  int64_t pads[2 * TSL_MAX_NDIM] = {0};
  int np = -1;
  double value = 0;
  bool has_value = false;
  if (old) {
    const int64_t *v;
    st = onnx_attr_ints(c, "pads", &np, &v);
    if (st == TSL_OK && np > 2 * TSL_MAX_NDIM) st = onnx_err(c, TSL_ERR_INVALID, "%d pads", np);
    for (int i = 0; st == TSL_OK && i < np; i++) pads[i] = v[i];
    if (st == TSL_OK) st = onnx_attr_float(c, "value", 0, &value);
    has_value = true;
  } else {
    int64_t raw[2 * TSL_MAX_NDIM], axes[TSL_MAX_NDIM];
    int na = -1;
    st = onnx_const_ints(c, 1, "pads", raw, 2 * TSL_MAX_NDIM, &np);
    if (st == TSL_OK) st = const_scalar(c, 2, "constant_value", &value, &has_value);
    if (st == TSL_OK && c->opset >= 18) st = onnx_const_ints(c, 3, "axes", axes, TSL_MAX_NDIM, &na);
    if (st == TSL_OK && na >= 0) {
      /* Opset 18: pads only for the listed axes, zero elsewhere. */
      if (np != 2 * na) return onnx_err(c, TSL_ERR_INVALID, "%d pads for %d axes", np, na);
      for (int i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r) return onnx_err(c, TSL_ERR_INVALID, "pad axis %lld out of range", (long long)axes[i]);
        pads[a] = raw[i];
        pads[a + r] = raw[i + na];
      }
      np = 2 * r;
    } else {
      for (int i = 0; i < np; i++) pads[i] = raw[i];
    }
  }
  char mode[32];
  if (st == TSL_OK) st = onnx_attr_string(c, "mode", "constant", mode, sizeof mode);
  bool wrap = c->opset >= 19; /* opset 19 added "wrap" */
  if (st == TSL_OK && strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") &&
      (!wrap || strcmp(mode, "wrap")))
    st = onnx_err(c, TSL_ERR_INVALID, "mode '%s' (opset %lld defines constant, reflect, edge%s)", mode,
                  (long long)c->opset, wrap ? ", wrap" : "");
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_PAD, 1, &node);
  if (st == TSL_OK && np >= 0) st = tsl_graph_set_attr_ints(c->g, node, "pads", np, pads);
  if (st == TSL_OK && has_value) st = tsl_graph_set_attr_float(c->g, node, "value", value);
  if (st == TSL_OK) st = tsl_graph_set_attr_string(c->g, node, "mode", mode);
  return st == TSL_OK ? finish(c, node) : st;
}

/* PRelu: from opset 7 the slope broadcasts (numpy, unidirectionally) to X; opset 6's
 * slope is a scalar or one value per channel, the latter a [C] tensor (old PyTorch
 * exports), reshaped here to [C, 1, ..] so that the canonical form broadcasts. */
static tsl_status h_prelu(onnx_ctx *c) {
  int x, slope;
  tsl_status st = need_inputs(c, 2, 2);
  if (st == TSL_OK) st = onnx_required_input(c, 0, &x);
  if (st == TSL_OK) st = onnx_required_input(c, 1, &slope);
  if (st != TSL_OK) return st;
  const tsl_value *xv = &c->g->values[x], *sv = &c->g->values[slope];
  if (c->opset >= 7 || sv->ndim != 1 || xv->ndim < 3 || sv->shape[0] != xv->shape[1] || sv->shape[0] == 1)
    return plain(c, TSL_OP_PRELU, 2);
  static const char *const none[] = {NULL};
  if ((st = onnx_check_attrs(c, none)) != TSL_OK) return st;
  int64_t shape[TSL_MAX_NDIM];
  int rank = xv->ndim - 1; /* [C, 1, ..] against X's axes from 1 on */
  shape[0] = sv->shape[0];
  for (int d = 1; d < rank; d++) shape[d] = 1;
  const char *out = c->node->output[0];
  if (!out || !out[0]) return onnx_err(c, TSL_ERR_INVALID, "output 0 has no name");
  char name[300];
  snprintf(name, sizeof name, "%s/per_channel_slope", c->node->name && c->node->name[0] ? c->node->name : out);
  int node, in[2] = {x, -1};
  st = emit(c, TSL_OP_RESHAPE, name, 1, &slope, 1, (const char *const[]){NULL}, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, "shape", rank, shape);
  if (st == TSL_OK) st = finish(c, node);
  if (st != TSL_OK) return st;
  in[1] = c->g->nodes[node].outputs[0];
  snprintf(name, sizeof name, "%s", c->node->name && c->node->name[0] ? c->node->name : out);
  st = emit(c, TSL_OP_PRELU, name, 2, in, 1, &out, &node);
  return st == TSL_OK ? finish(c, node) : st;
}

/* Squeeze and Unsqueeze of a computed value: a Reshape (a view) to the new shape. */
static tsl_status squeeze(onnx_ctx *c, bool unsqueeze) {
  tsl_status st = need_inputs(c, 1, c->opset < 13 ? 1 : 2);
  int x, r, node;
  int64_t shape[TSL_MAX_NDIM];
  if (st == TSL_OK) st = onnx_required_input(c, 0, &x);
  if (st == TSL_OK) st = onnx_squeeze_shape(c, unsqueeze, c->g->values[x].ndim, c->g->values[x].shape, &r, shape);
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_RESHAPE, 1, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(c->g, node, "shape", r, shape);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(c->g, node, "allowzero", 1);
  return st == TSL_OK ? finish(c, node) : st;
}

static tsl_status h_squeeze(onnx_ctx *c) { return squeeze(c, false); }
static tsl_status h_unsqueeze(onnx_ctx *c) { return squeeze(c, true); }

tsl_status onnx_emit_simple(onnx_ctx *c, tsl_op op, int n_in, int *node) { return emit_simple(c, op, n_in, node); }
tsl_status onnx_finish_node(onnx_ctx *c, int node) { return finish(c, node); }

typedef struct handler {
  const char *op_type;
  tsl_status (*fn)(onnx_ctx *c);
} handler;

static const handler handlers[] = {
    {"Conv", h_conv},
    {"BatchNormalization", h_batchnorm},
    {"Relu", h_relu},
    {"Clip", h_clip},
    {"MaxPool", h_maxpool},
    {"AveragePool", h_avgpool},
    {"GlobalAveragePool", h_gap},
    {"ReduceMean", h_reduce_mean},
    {"ReduceSum", h_reduce_sum},
    {"ReduceMax", h_reduce_max},
    {"ReduceMin", h_reduce_min},
    {"Add", h_add},
    {"Sub", h_sub},
    {"Pow", h_pow},
    {"LayerNormalization", h_layer_norm},
    {"Mul", h_mul},
    {"Div", h_div},
    {"Concat", h_concat},
    {"Gemm", h_gemm},
    {"MatMul", h_matmul},
    {"Flatten", h_flatten},
    {"Reshape", h_reshape},
    {"Transpose", h_transpose},
    {"SpaceToDepth", h_space_to_depth},
    {"Slice", h_slice},
    {"Split", h_split},
    {"Softmax", h_softmax},
    {"Dropout", h_dropout},
    {"Identity", h_identity},
    {"Pad", h_pad},
    {"Resize", onnx_import_resize},
    {"Upsample", onnx_import_upsample},
    {"PRelu", h_prelu},
    {"Squeeze", h_squeeze},
    {"Unsqueeze", h_unsqueeze},
};

/* Every function of the activation table (ops/nn/activation.h): one tsl.Activation node
 * with the function's name and its float attributes, defaults written out. */
static tsl_status h_activation(onnx_ctx *c, const tsl_activation *a) {
  if (c->opset < a->since_opset)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "%s is defined from opset %d on; the model declares opset %lld",
                    a->onnx_op, a->since_opset, (long long)c->opset);
  const char *allowed[TSL_ACTIVATION_MAX_ATTRS + 1] = {NULL};
  for (int i = 0; i < a->nattrs; i++) allowed[i] = a->attr[i];
  tsl_status st = onnx_check_attrs(c, allowed);
  if (st == TSL_OK) st = need_inputs(c, 1, 1);
  double v[TSL_ACTIVATION_MAX_ATTRS];
  for (int i = 0; st == TSL_OK && i < a->nattrs; i++) st = onnx_attr_float(c, a->attr[i], a->attr_default[i], &v[i]);
  int node;
  if (st == TSL_OK) st = emit_simple(c, TSL_OP_ACTIVATION, 1, &node);
  if (st == TSL_OK) st = tsl_graph_set_attr_string(c->g, node, "function", a->onnx_op);
  for (int i = 0; st == TSL_OK && i < a->nattrs; i++) st = tsl_graph_set_attr_float(c->g, node, a->attr[i], v[i]);
  return st == TSL_OK ? finish(c, node) : st;
}

tsl_status onnx_import_op(onnx_ctx *c) {
  for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
    if (strcmp(handlers[i].op_type, c->node->op_type) == 0) return handlers[i].fn(c);
  const tsl_activation *a = tsl_activation_find(c->node->op_type);
  if (a) return h_activation(c, a);
  return TSL_ERR_NOT_FOUND;
}
