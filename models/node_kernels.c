/* Graph nodes as DSL operator texts with literal shapes (node_kernels.h). */
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
#include "ops/nn/resize.h"

void tsl_nk_put_clip_open(tsl_text_buf *b, double lo, double hi) {
  if (isfinite(hi)) tsl_text_put(b, "min(");
  if (isfinite(lo)) tsl_text_put(b, "max(");
}

void tsl_nk_put_clip_close(tsl_text_buf *b, double lo, double hi) {
  if (isfinite(lo)) {
    tsl_text_put(b, ", ");
    tsl_text_put_float(b, lo);
    tsl_text_put(b, ")");
  }
  if (isfinite(hi)) {
    tsl_text_put(b, ", ");
    tsl_text_put_float(b, hi);
    tsl_text_put(b, ")");
  }
}

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
  if (st != TSL_OK) return tsl_nk_node_err(g, node, st, tsl_last_error());
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

int64_t tsl_nk_numel(const tsl_value *v) {
  int64_t n = 1;
  for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
  return n;
}

/* Declares input parameter i as `xI: f32[dims]`. */
static void put_param(tsl_text_buf *b, const tsl_node_kernel *k, int a) {
  tsl_text_put(b, "%sx%d: f32[", a ? ", " : "", a);
  for (int d = 0; d < k->ndims[a]; d++) tsl_text_put(b, "%s%lld", d ? ", " : "", (long long)k->shapes[a][d]);
  tsl_text_put(b, "]");
}

void tsl_nk_put_header(tsl_text_buf *b, tsl_node_kernel *k) {
  tsl_text_put(b, "op %s(", k->op_name);
  for (int a = 0; a < k->ninputs; a++) put_param(b, k, a);
  tsl_text_put(b, ")\n");
}

/* "i0, i1, ..." and the where clause "i0 < D0, ..." of a rank-nd stage. */
static void put_axes(tsl_text_buf *b, int nd) {
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
}
static void put_where(tsl_text_buf *b, int nd, const int64_t *dims) {
  tsl_text_put(b, "\n    where ");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d < %lld", d ? ", " : "", d, (long long)dims[d]);
  tsl_text_put(b, "\n");
}

/* Reads input `a` of rank ra broadcast (numpy rules) against output axes i0..i(nd-1). */
static void put_bcast_read(tsl_text_buf *b, const tsl_node_kernel *k, int a, int nd, const int64_t *out) {
  tsl_text_put(b, "x%d[", a);
  int ra = k->ndims[a];
  for (int d = 0; d < ra; d++) {
    int od = nd - ra + d;
    if (k->shapes[a][d] == 1 && out[od] != 1) tsl_text_put(b, "%s0", d ? ", " : "");
    else tsl_text_put(b, "%si%d", d ? ", " : "", od);
  }
  tsl_text_put(b, "]");
}

/* ---- convolution with its fused epilogue ---- */

static tsl_status make_conv(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_conv2d_params p;
  tsl_status st = tsl_node_conv2d_params(g, n, &p);
  if (st != TSL_OK) return st;
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *w = tsl_nk_in_val(g, n, 1), *bias = tsl_nk_in_val(g, n, 2), *res = tsl_nk_in_val(g, n, 3);
  const tsl_value *y = &g->values[n->outputs[0]];
  tsl_nk_add_arg(k, n->inputs[0], 4, x->shape);
  tsl_nk_add_arg(k, n->inputs[1], 4, w->shape);
  if (bias) tsl_nk_add_arg(k, n->inputs[2], 1, bias->shape);
  if (res) tsl_nk_add_arg(k, n->inputs[3], 4, res->shape);
  k->ninputs = k->nargs;
  tsl_nk_add_arg(k, n->outputs[0], 4, y->shape);
  int64_t H = x->shape[2], W = x->shape[3], M = w->shape[0], CG = w->shape[1];
  int64_t MG = M / p.group;
  int64_t pt = p.pads[0], pl = p.pads[1], pb = p.pads[2], pr = p.pads[3];
  int act = (int)tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE);
  double lo = tsl_node_attr_float(n, TSL_ATTR_CLIP_MIN, -INFINITY), hi = tsl_node_attr_float(n, TSL_ATTR_CLIP_MAX, INFINITY);
  snprintf(k->label, sizeof k->label, "conv2d_%s%lldx%lld_s%lld_p%lld%s%s%s",
           p.group == 1 ? "" : CG == 1 && MG == 1 ? "dw_" : "g_", (long long)p.kernel[0], (long long)p.kernel[1],
           (long long)p.strides[0], (long long)pt, bias ? "_bias" : "", res ? "_add" : "",
           act == TSL_ACT_RELU ? "_relu" : act == TSL_ACT_CLIP ? "_clip" : "");
  tsl_nk_put_header(b, k);
  bool padded = pt || pl || pb || pr;
  const char *src = "x0";
  if (padded) {
    tsl_text_put(b, "  pad[n, c, y, x] = select(y >= %lld && y < %lld && x >= %lld && x < %lld, x0[n, c, y - %lld, x - %lld], 0.0)\n"
             "    where y < %lld, x < %lld\n",
          (long long)pt, (long long)(H + pt), (long long)pl, (long long)(W + pl), (long long)pt, (long long)pl,
          (long long)(H + pt + pb), (long long)(W + pl + pr));
    src = "pad";
  }
  char cidx[96];
  if (p.group == 1) snprintf(cidx, sizeof cidx, "c");
  else if (CG == 1 && MG == 1) snprintf(cidx, sizeof cidx, "m + c");
  else snprintf(cidx, sizeof cidx, "(m / %lld) * %lld + c", (long long)MG, (long long)CG);
  bool epilogue = bias || res || act != TSL_ACT_NONE;
  tsl_text_put(b, "  @tag(\"conv2d\")\n  %s[n, m, y, x] = sum(c, r, s: %s[n, %s, y*%lld + r*%lld, x*%lld + s*%lld] * x1[m, c, r, s])\n"
           "    where y < %lld, x < %lld\n",
        epilogue ? "acc" : "out", src, cidx, (long long)p.strides[0], (long long)p.dilations[0], (long long)p.strides[1],
        (long long)p.dilations[1], (long long)y->shape[2], (long long)y->shape[3]);
  if (!epilogue) return TSL_OK;
  tsl_text_put(b, "  out[n, m, y, x] = ");
  if (act == TSL_ACT_RELU) tsl_text_put(b, "max(");
  if (act == TSL_ACT_CLIP) tsl_nk_put_clip_open(b, lo, hi);
  tsl_text_put(b, "acc[n, m, y, x]");
  if (bias) tsl_text_put(b, " + x2[m]");
  if (res) tsl_text_put(b, " + x%d[n, m, y, x]", bias ? 3 : 2);
  if (act == TSL_ACT_RELU) tsl_text_put(b, ", 0.0)");
  if (act == TSL_ACT_CLIP) tsl_nk_put_clip_close(b, lo, hi);
  tsl_text_put(b, "\n");
  return TSL_OK;
}

/* ---- pooling ---- */

tsl_status tsl_nk_make_pool(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_conv2d_params p;
  tsl_status st = tsl_node_conv2d_params(g, n, &p);
  if (st != TSL_OK) return st;
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  int64_t s[TSL_MAX_NDIM];
  tsl_nk_add_arg(k, n->inputs[0], tsl_value_storage_shape(x, s), s);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], tsl_value_storage_shape(y, s), s);
  /* an element is [n, c, y, x], or [n, cb, y, x, c] in NCHW[x]c: the window moves over
   * y and x only, so a blocked pool is the plain one with the lane index c carried along */
  bool blocked = y->layout.kind == TSL_LAYOUT_NCHWC;
  const char *nc = blocked ? "n, cb" : "n, c", *lane = blocked ? ", c" : "";
  long long H = x->shape[2], W = x->shape[3], pt = p.pads[0], pl = p.pads[1];
  long long sh = p.strides[0], sw = p.strides[1], dh = p.dilations[0], dw = p.dilations[1];
  bool is_max = n->op == TSL_OP_MAX_POOL;
  snprintf(k->label, sizeof k->label, "%s%s_%lldx%lld_s%lld_p%lld", is_max ? "maxpool" : "avgpool",
           blocked ? "_nchwc" : "", (long long)p.kernel[0], (long long)p.kernel[1], sh, pt);
  tsl_nk_put_header(b, k);
  char yy[64], xx[64], cond[512];
  snprintf(yy, sizeof yy, "y*%lld + r*%lld", sh, dh);
  snprintf(xx, sizeof xx, "x*%lld + s*%lld", sw, dw);
  snprintf(cond, sizeof cond, "%s >= %lld && %s < %lld && %s >= %lld && %s < %lld", yy, pt, yy, H + pt, xx, pl, xx, W + pl);
  tsl_text_put(b, "  %s[%s, y, x%s] = %s(r, s: select(%s, x0[%s, %s - %lld, %s - %lld%s], %s))\n"
                  "    where y < %lld, x < %lld, r < %lld, s < %lld\n",
               is_max ? "out" : "acc", nc, lane, is_max ? "max" : "sum", cond, nc, yy, pt, xx, pl, lane,
               is_max ? "-inf" : "0.0", (long long)y->shape[2], (long long)y->shape[3], (long long)p.kernel[0],
               (long long)p.kernel[1]);
  if (is_max) return TSL_OK;
  /* the divisor: window positions inside the input, or inside the padded input */
  long long hb = p.count_include_pad ? -pt : 0, he = p.count_include_pad ? H + p.pads[2] : H;
  long long wb = p.count_include_pad ? -pl : 0, we = p.count_include_pad ? W + p.pads[3] : W;
  tsl_text_put(b, "  out[%s, y, x%s] = acc[%s, y, x%s] / f32((min(y*%lld - %lld + %lld, %lld) - max(y*%lld - %lld, %lld)) *"
                  " (min(x*%lld - %lld + %lld, %lld) - max(x*%lld - %lld, %lld)))\n",
               nc, lane, nc, lane, sh, pt, (long long)p.kernel[0], he, sh, pt, hb, sw, pl, (long long)p.kernel[1], we, sw,
               pl, wb);
  return TSL_OK;
}

static tsl_status make_global_pool(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  if (x->ndim < 3) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "global pooling needs rank >= 3");
  int64_t nc = x->shape[0] * x->shape[1], hw = tsl_nk_numel(x) / (nc ? nc : 1);
  int64_t view_in[2] = {nc, hw}, view_out[1] = {nc};
  tsl_nk_add_arg(k, n->inputs[0], 2, view_in);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], 1, view_out);
  snprintf(k->label, sizeof k->label, "global_avgpool");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  acc[i] = sum(j: x0[i, j])\n  out[i] = acc[i] / %lld\n", (long long)hw);
  return TSL_OK;
}

/* ---- elementwise ---- */

static bool same_shape(const tsl_value *a, const tsl_value *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

static tsl_status make_elemwise(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *y = &g->values[n->outputs[0]];
  bool flat = true;
  int nin = n->op == TSL_OP_RELU || n->op == TSL_OP_CLIP ? 1 : 2;
  for (int i = 0; i < nin; i++) flat &= same_shape(tsl_nk_in_val(g, n, i), y);
  int64_t total = tsl_nk_numel(y);
  for (int i = 0; i < nin; i++) {
    const tsl_value *v = tsl_nk_in_val(g, n, i);
    if (flat) tsl_nk_add_arg(k, n->inputs[i], 1, &total);
    else if (v->ndim == 0) tsl_nk_add_arg(k, n->inputs[i], 1, (const int64_t[]){1});
    else tsl_nk_add_arg(k, n->inputs[i], v->ndim, v->shape);
  }
  k->ninputs = nin;
  int nd = flat ? 1 : y->ndim;
  const int64_t *od = flat ? &total : y->shape;
  tsl_nk_add_arg(k, n->outputs[0], nd, od);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[");
  put_axes(b, nd);
  tsl_text_put(b, "] = ");
  const char *opname = "";
  switch (n->op) {
  case TSL_OP_RELU:
    opname = "relu";
    tsl_text_put(b, "max(");
    put_bcast_read(b, k, 0, nd, od);
    tsl_text_put(b, ", 0.0)");
    break;
  case TSL_OP_CLIP: {
    opname = "clip";
    double lo = tsl_node_attr_float(n, "min", -INFINITY), hi = tsl_node_attr_float(n, "max", INFINITY);
    tsl_nk_put_clip_open(b, lo, hi);
    put_bcast_read(b, k, 0, nd, od);
    tsl_nk_put_clip_close(b, lo, hi);
    break;
  }
  default:
    opname = n->op == TSL_OP_ADD ? "add" : n->op == TSL_OP_MUL ? "mul" : "div";
    put_bcast_read(b, k, 0, nd, od);
    tsl_text_put(b, " %s ", n->op == TSL_OP_ADD ? "+" : n->op == TSL_OP_MUL ? "*" : "/");
    put_bcast_read(b, k, 1, nd, od);
    break;
  }
  snprintf(k->label, sizeof k->label, "%s%s", opname, flat ? "" : "_bcast");
  put_where(b, nd, od);
  return TSL_OK;
}

/* f(x) of a tsl.Activation node, flat over the elements */
tsl_status tsl_nk_put_activation(const tsl_graph *g, int node, const char *operand, tsl_node_kernel *k,
                                 tsl_text_buf *b) {
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  tsl_status st = tsl_node_activation(g, &g->nodes[node], &a, attrs);
  if (st != TSL_OK) return st;
  tsl_activation_put_dsl(a, operand, attrs, b);
  snprintf(k->label, sizeof k->label, "%s", a->label);
  return TSL_OK;
}

static tsl_status make_activation(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  int64_t total = tsl_nk_numel(&g->values[n->outputs[0]]);
  tsl_nk_add_arg(k, n->inputs[0], 1, &total);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], 1, &total);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[i0] = ");
  tsl_status st = tsl_nk_put_activation(g, node, "x0[i0]", k, b);
  if (st == TSL_OK) put_where(b, 1, &total);
  return st;
}

/* ---- data movement ---- */

/* outer x axis x inner view of value v around axis `axis`. */
void tsl_nk_view3(const tsl_value *v, int axis, int64_t out[3]) {
  out[0] = out[2] = 1;
  out[1] = v->shape[axis];
  for (int d = 0; d < axis; d++) out[0] *= v->shape[d];
  for (int d = axis + 1; d < v->ndim; d++) out[2] *= v->shape[d];
}

static int norm_axis(int64_t a, int nd) { return (int)(a < 0 ? a + nd : a); }

static tsl_status make_concat(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *y = &g->values[n->outputs[0]];
  int axis = norm_axis(tsl_node_attr_int(n, "axis", 0), y->ndim);
  if (n->n_inputs + 1 > TSL_NODE_KERNEL_MAX_ARGS) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "too many inputs");
  int64_t v[3];
  for (int i = 0; i < n->n_inputs; i++) {
    tsl_nk_view3(tsl_nk_in_val(g, n, i), axis, v);
    tsl_nk_add_arg(k, n->inputs[i], 3, v);
  }
  k->ninputs = n->n_inputs;
  tsl_nk_view3(y, axis, v);
  tsl_nk_add_arg(k, n->outputs[0], 3, v);
  snprintf(k->label, sizeof k->label, "concat%d", n->n_inputs);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[o, a, i] = ");
  int64_t off = 0;
  for (int i = 0; i < n->n_inputs; i++) {
    int64_t len = k->shapes[i][1];
    if (i + 1 < n->n_inputs)
      tsl_text_put(b, "select(a >= %lld && a < %lld, x%d[o, a - %lld, i], ", (long long)off, (long long)(off + len), i,
            (long long)off);
    else
      tsl_text_put(b, "select(a >= %lld, x%d[o, a - %lld, i], 0.0)", (long long)off, i, (long long)off);
    off += len;
  }
  for (int i = 0; i + 1 < n->n_inputs; i++) tsl_text_put(b, ")");
  tsl_text_put(b, "\n    where o < %lld, a < %lld, i < %lld\n", (long long)v[0], (long long)v[1], (long long)v[2]);
  return TSL_OK;
}

static tsl_status make_split(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  int axis = norm_axis(tsl_node_attr_int(n, "axis", 0), x->ndim);
  if (n->n_outputs + 1 > TSL_NODE_KERNEL_MAX_ARGS) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "too many outputs");
  int64_t v[3];
  tsl_nk_view3(x, axis, v);
  tsl_nk_add_arg(k, n->inputs[0], 3, v);
  k->ninputs = 1;
  for (int i = 0; i < n->n_outputs; i++) {
    tsl_nk_view3(&g->values[n->outputs[i]], axis, v);
    tsl_nk_add_arg(k, n->outputs[i], 3, v);
  }
  snprintf(k->label, sizeof k->label, "split%d", n->n_outputs);
  tsl_nk_put_header(b, k);
  int64_t off = 0;
  for (int i = 0; i < n->n_outputs; i++) {
    const int64_t *s = k->shapes[1 + i];
    tsl_text_put(b, "  @output\n  y%d[o, a, i] = x0[o, a + %lld, i]\n    where o < %lld, a < %lld, i < %lld\n", i, (long long)off,
          (long long)s[0], (long long)s[1], (long long)s[2]);
    off += s[1];
  }
  return TSL_OK;
}

static tsl_status make_slice(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  int64_t start[TSL_MAX_NDIM] = {0}, step[TSL_MAX_NDIM];
  for (int d = 0; d < TSL_MAX_NDIM; d++) step[d] = 1;
  int ns, na, nst;
  const int64_t *starts = tsl_node_attr_ints(n, "starts", &ns), *axes = tsl_node_attr_ints(n, "axes", &na);
  const int64_t *steps = tsl_node_attr_ints(n, "steps", &nst);
  for (int i = 0; i < ns; i++) {
    int ax = axes ? norm_axis(axes[i], x->ndim) : i;
    int64_t dim = x->shape[ax], st = starts[i], sp = steps ? steps[i] : 1;
    if (st < 0) st += dim;
    if (sp > 0) st = st < 0 ? 0 : st > dim ? dim : st;
    else st = st < 0 ? 0 : st > dim - 1 ? dim - 1 : st;
    start[ax] = st;
    step[ax] = sp;
  }
  tsl_nk_add_arg(k, n->inputs[0], x->ndim, x->shape);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], y->ndim, y->shape);
  snprintf(k->label, sizeof k->label, "slice");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[");
  put_axes(b, y->ndim);
  tsl_text_put(b, "] = x0[");
  for (int d = 0; d < y->ndim; d++) tsl_text_put(b, "%s%lld + i%d*%lld", d ? ", " : "", (long long)start[d], d, (long long)step[d]);
  tsl_text_put(b, "]");
  put_where(b, y->ndim, y->shape);
  return TSL_OK;
}

static tsl_status make_transpose(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  int np;
  const int64_t *perm = tsl_node_attr_ints(n, "perm", &np);
  int nd = x->ndim, src_axis[TSL_MAX_NDIM];
  for (int d = 0; d < nd; d++) src_axis[d] = -1;
  for (int d = 0; d < nd; d++) {
    int pd = perm && np == nd ? (int)perm[d] : nd - 1 - d; /* output axis d is input axis pd */
    src_axis[pd] = d;
  }
  tsl_nk_add_arg(k, n->inputs[0], nd, x->shape);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], y->ndim, y->shape);
  snprintf(k->label, sizeof k->label, "transpose");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[");
  put_axes(b, nd);
  tsl_text_put(b, "] = x0[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", src_axis[d]);
  tsl_text_put(b, "]");
  put_where(b, nd, y->shape);
  return TSL_OK;
}

static tsl_status make_pad(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0), *y = &g->values[n->outputs[0]];
  int np;
  const int64_t *pads = tsl_node_attr_ints(n, "pads", &np);
  double value = tsl_node_attr_float(n, "value", 0.0);
  if (!isfinite(value)) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "a non-finite padding value");
  tsl_nk_add_arg(k, n->inputs[0], x->ndim, x->shape);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], y->ndim, y->shape);
  snprintf(k->label, sizeof k->label, "pad");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[");
  put_axes(b, y->ndim);
  tsl_text_put(b, "] = select(");
  for (int d = 0; d < x->ndim; d++)
    tsl_text_put(b, "%si%d >= %lld && i%d < %lld", d ? " && " : "", d, (long long)pads[d], d, (long long)(pads[d] + x->shape[d]));
  tsl_text_put(b, ", x0[");
  for (int d = 0; d < x->ndim; d++) tsl_text_put(b, "%si%d - %lld", d ? ", " : "", d, (long long)pads[d]);
  tsl_text_put(b, "], ");
  tsl_text_put_float(b, value);
  tsl_text_put(b, ")");
  put_where(b, y->ndim, y->shape);
  return TSL_OK;
}

static tsl_status make_batch_norm(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  if (x->ndim < 2 || n->n_inputs != 5) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "batch norm needs rank >= 2 and 5 inputs");
  double eps = tsl_node_attr_float(n, "epsilon", 1e-5);
  int64_t v[3];
  tsl_nk_view3(x, 1, v);
  tsl_nk_add_arg(k, n->inputs[0], 3, v);
  for (int i = 1; i < 5; i++) {
    const tsl_value *p = tsl_nk_in_val(g, n, i);
    if (!p || tsl_nk_numel(p) != v[1]) return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "a parameter is not of the channel count");
    tsl_nk_add_arg(k, n->inputs[i], 1, &v[1]);
  }
  k->ninputs = 5;
  tsl_nk_add_arg(k, n->outputs[0], 3, v);
  snprintf(k->label, sizeof k->label, "batch_norm");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[o, c, i] = (x0[o, c, i] - x3[c]) / sqrt(x4[c] + ");
  tsl_text_put_float(b, eps);
  tsl_text_put(b, ") * x1[c] + x2[c]\n");
  return TSL_OK;
}

static tsl_status make_channel_shuffle(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *x = tsl_nk_in_val(g, n, 0);
  int64_t G = tsl_node_attr_int(n, "group", 1), C = x->shape[1];
  int64_t v[3] = {x->shape[0], C, x->shape[2] * x->shape[3]};
  tsl_nk_add_arg(k, n->inputs[0], 3, v);
  k->ninputs = 1;
  tsl_nk_add_arg(k, n->outputs[0], 3, v);
  snprintf(k->label, sizeof k->label, "channel_shuffle_g%lld", (long long)G);
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  out[n, c, i] = x0[n, (c %% %lld) * %lld + c / %lld, i]\n    where n < %lld, c < %lld, i < %lld\n", (long long)G,
               (long long)(C / G), (long long)G, (long long)v[0], (long long)v[1], (long long)v[2]);
  return TSL_OK;
}

/* ---- matrix products and softmax ---- */

/* Gemm's epilogue after the product stage acc of rank `ndim` (output extents `shape`):
 * out = acc * alpha + C * beta, C (argument 2, present when k has 3 inputs) broadcast. */
static void put_gemm_epilogue(tsl_text_buf *b, const tsl_node_kernel *k, double alpha, double beta, int ndim,
                              const int64_t *shape) {
  tsl_text_put(b, ndim == 3 ? "  out[i0, i1, i2] = acc[i0, i1, i2]" : "  out[i0, i1] = acc[i0, i1]");
  if (alpha != 1.0) {
    tsl_text_put(b, " * ");
    tsl_text_put_float(b, alpha);
  }
  if (k->ninputs == 3) {
    tsl_text_put(b, " + ");
    put_bcast_read(b, k, 2, ndim, shape);
    if (beta != 1.0) {
      tsl_text_put(b, " * ");
      tsl_text_put_float(b, beta);
    }
  }
  tsl_text_put(b, "\n");
}

/* A product whose weight the graph passes packed [N/Y, K, Y] (models/passes/pack_dense.h):
 * the operator library's dense_packed form, acc[i0, i1, i2] = sum(k: a[i0, k] w[i1, k, i2])
 * over the output viewed [M, N/Y, Y], with the Gemm epilogue (alpha, beta times a bias
 * broadcast to [M, N], seen [M or 1, N/Y or 1, Y or 1]). The "dense_packed" tag gives it
 * the dense template's GEMV schedule (ops/nn/default_schedule.h). a: [M, K], or [K, M]
 * with ta; c NULL without a bias. */
static tsl_status make_dense_packed(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b, int64_t M,
                                    bool ta, double alpha, double beta, const tsl_value *c) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *w = tsl_nk_in_val(g, n, 1);
  if (w->ndim != 3) return tsl_nk_node_err(g, node, TSL_ERR_INVALID, "a packed weight is not [N/Y, K, Y]");
  int64_t OB = w->shape[0], K = w->shape[1], Y = w->shape[2];
  tsl_nk_add_arg(k, n->inputs[0], 2, ta ? (const int64_t[]){K, M} : (const int64_t[]){M, K});
  tsl_nk_add_arg(k, n->inputs[1], 3, w->shape);
  if (c && beta != 0.0) {
    int64_t cm = c->ndim == 2 ? c->shape[0] : 1, cn = c->ndim >= 1 ? c->shape[c->ndim - 1] : 1;
    bool full = cn == OB * Y;
    tsl_nk_add_arg(k, n->inputs[2], 3, (const int64_t[]){cm, full ? OB : 1, full ? Y : 1});
  }
  k->ninputs = k->nargs;
  int64_t view[3] = {M, OB, Y};
  tsl_nk_add_arg(k, n->outputs[0], 3, view);
  snprintf(k->label, sizeof k->label, "dense_packed%s", k->ninputs == 3 ? "_bias" : "");
  tsl_nk_put_header(b, k);
  bool epi = k->ninputs == 3 || alpha != 1.0;
  tsl_text_put(b, "  @tag(\"dense_packed\")\n  %s[i0, i1, i2] = sum(k: x0[%s] * x1[i1, k, i2])\n"
           "    where i0 < %lld, i1 < %lld, i2 < %lld, k < %lld\n",
        epi ? "acc" : "out", ta ? "k, i0" : "i0, k", (long long)M, (long long)OB, (long long)Y, (long long)K);
  if (epi) put_gemm_epilogue(b, k, alpha, beta, 3, view);
  return TSL_OK;
}

static tsl_status make_gemm(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *a = tsl_nk_in_val(g, n, 0), *w = tsl_nk_in_val(g, n, 1), *c = tsl_nk_in_val(g, n, 2), *y = &g->values[n->outputs[0]];
  bool ta = tsl_node_attr_int(n, "transA", 0) != 0, tb = tsl_node_attr_int(n, "transB", 0) != 0;
  double alpha = tsl_node_attr_float(n, "alpha", 1.0), beta = tsl_node_attr_float(n, "beta", 1.0);
  if (!isfinite(alpha) || !isfinite(beta)) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "non-finite alpha or beta");
  if (tsl_node_attr_int(n, TSL_ATTR_PACKED_DENSE, 0)) return make_dense_packed(g, node, k, b, y->shape[0], ta, alpha, beta, c);
  tsl_nk_add_arg(k, n->inputs[0], 2, a->shape);
  tsl_nk_add_arg(k, n->inputs[1], 2, w->shape);
  if (c && beta != 0.0) {
    if (c->ndim == 0) tsl_nk_add_arg(k, n->inputs[2], 1, (const int64_t[]){1});
    else tsl_nk_add_arg(k, n->inputs[2], c->ndim, c->shape);
  }
  k->ninputs = k->nargs;
  tsl_nk_add_arg(k, n->outputs[0], 2, y->shape);
  snprintf(k->label, sizeof k->label, "dense%s", k->ninputs == 3 ? "_bias" : "");
  tsl_nk_put_header(b, k);
  int64_t K = ta ? a->shape[0] : a->shape[1];
  bool epi = k->ninputs == 3 || alpha != 1.0;
  tsl_text_put(b, "  @tag(\"matmul\")\n  %s[i0, i1] = sum(k: x0[%s] * x1[%s])\n    where i0 < %lld, i1 < %lld, k < %lld\n",
        epi ? "acc" : "out", ta ? "k, i0" : "i0, k", tb ? "i1, k" : "k, i1", (long long)y->shape[0], (long long)y->shape[1],
        (long long)K);
  if (epi) put_gemm_epilogue(b, k, alpha, beta, 2, y->shape);
  return TSL_OK;
}

static tsl_status make_matmul(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_value *a = tsl_nk_in_val(g, n, 0), *w = tsl_nk_in_val(g, n, 1), *y = &g->values[n->outputs[0]];
  if (a->ndim >= 2 && tsl_node_attr_int(n, TSL_ATTR_PACKED_DENSE, 0))
    return make_dense_packed(g, node, k, b, tsl_nk_numel(a) / a->shape[a->ndim - 1], false, 1.0, 1.0, NULL);
  if (a->ndim >= 3 && w->ndim == a->ndim) {
    /* a batch of products: equal batch dimensions (ONNX's broadcast of them is not) */
    int64_t B = 1;
    for (int d = 0; d + 2 < a->ndim; d++) {
      if (a->shape[d] != w->shape[d])
        return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "MatMul batch dimensions that broadcast are not compiled");
      B *= a->shape[d];
    }
    int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = w->shape[w->ndim - 1];
    tsl_nk_add_arg(k, n->inputs[0], 3, (const int64_t[]){B, M, K});
    tsl_nk_add_arg(k, n->inputs[1], 3, (const int64_t[]){B, K, N});
    k->ninputs = 2;
    tsl_nk_add_arg(k, n->outputs[0], 3, (const int64_t[]){B, M, N});
    (void)y;
    snprintf(k->label, sizeof k->label, "batch_matmul");
    tsl_nk_put_header(b, k);
    tsl_text_put(b, "  out[bb, i, j] = sum(k: x0[bb, i, k] * x1[bb, k, j])\n");
    return TSL_OK;
  }
  if (a->ndim < 2 || w->ndim != 2)
    return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED,
                           "MatMul is compiled for A of rank >= 2 times a 2-D B, or equal batch dimensions only");
  int64_t M = tsl_nk_numel(a) / a->shape[a->ndim - 1], K = a->shape[a->ndim - 1], N = w->shape[1];
  tsl_nk_add_arg(k, n->inputs[0], 2, (const int64_t[]){M, K});
  tsl_nk_add_arg(k, n->inputs[1], 2, w->shape);
  k->ninputs = 2;
  tsl_nk_add_arg(k, n->outputs[0], 2, (const int64_t[]){M, N});
  (void)y;
  snprintf(k->label, sizeof k->label, "matmul");
  tsl_nk_put_header(b, k);
  tsl_text_put(b, "  @tag(\"matmul\")\n  out[i, j] = sum(k: x0[i, k] * x1[k, j])\n");
  return TSL_OK;
}

static tsl_status make_softmax(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  tsl_op_call c = {0};
  tsl_nk_call_arg(&c, k, g, n->inputs[0]);
  c.ninputs = 1;
  tsl_nk_call_arg(&c, k, g, n->outputs[0]);
  tsl_op_call_set_int(&c, "axis", norm_axis(tsl_node_attr_int(n, "axis", -1), g->values[n->inputs[0]].ndim));
  return tsl_nk_generate(g, node, "softmax", &c, k, b);
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
    if (tsl_nk_numel(v) == 0) return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "an empty output tensor");
  }
  bool transform = n->op == TSL_OP_IDENTITY && tsl_node_attr_int(n, TSL_ATTR_LAYOUT_TRANSFORM, 0);
  bool blocked = g->values[n->outputs[0]].layout.kind == TSL_LAYOUT_NCHWC && n->op != TSL_OP_IDENTITY &&
                 n->op != TSL_OP_DROPOUT;
  /* a global mean from the blocked layout straight into a plain [N, C] result */
  blocked |= (n->op == TSL_OP_REDUCE_MEAN || n->op == TSL_OP_GLOBAL_AVERAGE_POOL) && n->n_inputs > 0 &&
             n->inputs[0] >= 0 && g->values[n->inputs[0]].layout.kind == TSL_LAYOUT_NCHWC;
  if (transform || blocked) {
    snprintf(out->op_name, sizeof out->op_name, "k");
    tsl_text_buf b = {0};
    tsl_status st = tsl_nk_make_nchwc(g, node, out, &b);
    if (st == TSL_OK && b.oom) st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    if (st != TSL_OK) {
      free(b.s);
      return st;
    }
    out->kind = TSL_NODE_KERNEL;
    out->text = b.s;
    return TSL_OK;
  }
  switch (n->op) {
  case TSL_OP_RESHAPE:
  case TSL_OP_FLATTEN:
  case TSL_OP_IDENTITY:
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
  case TSL_OP_CONV: st = make_conv(g, node, out, &b); break;
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL: st = tsl_nk_make_pool(g, node, out, &b); break;
  case TSL_OP_GLOBAL_AVERAGE_POOL:
  case TSL_OP_REDUCE_MEAN: st = make_global_pool(g, node, out, &b); break;
  case TSL_OP_RELU:
  case TSL_OP_CLIP:
  case TSL_OP_ADD:
  case TSL_OP_MUL:
  case TSL_OP_DIV: st = make_elemwise(g, node, out, &b); break;
  case TSL_OP_ACTIVATION: st = make_activation(g, node, out, &b); break;
  case TSL_OP_CONCAT: st = make_concat(g, node, out, &b); break;
  case TSL_OP_SPLIT: st = make_split(g, node, out, &b); break;
  case TSL_OP_SLICE: st = make_slice(g, node, out, &b); break;
  case TSL_OP_TRANSPOSE: st = make_transpose(g, node, out, &b); break;
  case TSL_OP_PAD: st = pad_reads_input(n) ? make_pad_mode(g, node, out, &b) : make_pad(g, node, out, &b); break;
  case TSL_OP_RESIZE: st = tsl_nk_make_resize(g, node, out, &b); break;
  case TSL_OP_PRELU: st = tsl_nk_make_prelu(g, node, out, &b); break;
  case TSL_OP_GEMM: st = make_gemm(g, node, out, &b); break;
  case TSL_OP_MATMUL: st = make_matmul(g, node, out, &b); break;
  case TSL_OP_SOFTMAX: st = make_softmax(g, node, out, &b); break;
  case TSL_OP_BATCH_NORM: st = make_batch_norm(g, node, out, &b); break;
  case TSL_OP_CHANNEL_SHUFFLE: st = make_channel_shuffle(g, node, out, &b); break;
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
