/* 1x1 convs of unpacked unipolar levels as lookup-table convs (lut_conv.h). */
#include "models/passes/lut_conv.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/passes/fuse_conv.h"
#include "models/passes/layout.h"
#include "ops/binary/lutconv.h"

/* The attributes a rewritten conv may carry (anything else keeps the conv). */
static const char *const known_attrs[] = {"kernel_shape",        "strides",          "pads",
                                          "dilations",           "group",            "auto_pad",
                                          TSL_ATTR_ACTIVATION,   TSL_ATTR_CLIP_MIN,  TSL_ATTR_CLIP_MAX,
                                          "tsl_blocked_weights"};

static bool f32_constant(const tsl_tensor *t, int ndim) {
  return t && t->ndim == ndim && tsl_dtype_equal(t->dtype, TSL_DTYPE_F32);
}

/* The unpack node whose output conv n reads, when n is a conv to rewrite; else -1. */
static int rewritable(const tsl_graph *g, const tsl_node *n) {
  if (n->op != TSL_OP_CONV || n->n_outputs != 1 || n->n_inputs < 2 || n->n_inputs > 4 || n->inputs[0] < 0 ||
      n->inputs[1] < 0 || (n->n_inputs == 4 && n->inputs[3] >= 0))
    return -1;
  for (int a = 0; a < n->n_attrs; a++) {
    bool known = false;
    for (size_t k = 0; k < sizeof known_attrs / sizeof known_attrs[0]; k++)
      known = known || strcmp(n->attrs[a].name, known_attrs[k]) == 0;
    if (!known) return -1;
  }
  int64_t act = tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE);
  tsl_conv2d_params cp;
  if (tsl_node_conv2d_params(g, n, &cp) != TSL_OK) {
    tsl_clear_error(); /* a malformed conv is the conv lowering's to report */
    return -1;
  }
  if (cp.group != 1 || cp.kernel[0] != 1 || cp.kernel[1] != 1 || cp.strides[0] != 1 || cp.strides[1] != 1 ||
      cp.dilations[0] != 1 || cp.dilations[1] != 1 || cp.pads[0] || cp.pads[1] || cp.pads[2] || cp.pads[3] ||
      (act != TSL_ACT_NONE && act != TSL_ACT_RELU && act != TSL_ACT_CLIP))
    return -1;
  const tsl_value *x = &g->values[n->inputs[0]], *y = &g->values[n->outputs[0]];
  const tsl_tensor *w = g->values[n->inputs[1]].constant;
  const tsl_tensor *b = n->n_inputs >= 3 && n->inputs[2] >= 0 ? g->values[n->inputs[2]].constant : NULL;
  if (!f32_constant(w, 4) || w->shape[2] != 1 || w->shape[3] != 1 || x->ndim != 4 || w->shape[1] != x->shape[1])
    return -1;
  if (n->n_inputs >= 3 && n->inputs[2] >= 0 && (!f32_constant(b, 1) || b->shape[0] != w->shape[0])) return -1;
  if (y->layout.kind != TSL_LAYOUT_NCHWC || y->layout.block < 1 || y->ndim != 4 || y->shape[1] != w->shape[0])
    return -1;
  /* the unpack (blocked, or plain: read as it is by a conv of few channels), or the plain
   * one through a layout transform to blocked */
  int u = x->producer;
  if (u < 0) return -1;
  if (g->nodes[u].op == TSL_OP_IDENTITY && tsl_node_attr_int(&g->nodes[u], TSL_ATTR_LAYOUT_TRANSFORM, 0) == 1 &&
      g->nodes[u].n_inputs == 1 && g->nodes[u].inputs[0] >= 0 &&
      g->values[g->nodes[u].inputs[0]].layout.kind == TSL_LAYOUT_PLAIN) {
    u = g->values[g->nodes[u].inputs[0]].producer;
    if (u < 0) return -1;
  }
  const tsl_node *un = &g->nodes[u];
  const tsl_attr *k = tsl_node_attr(un, "kernel");
  if (un->op != TSL_OP_BINARY || un->n_inputs != 1 || un->inputs[0] < 0 || !k || k->kind != TSL_ATTR_STRING ||
      (strcmp(k->s, "bitunpack_unipolar64") != 0 && strcmp(k->s, "bitunpack_unipolar64_nchwc") != 0))
    return -1;
  const tsl_value *planes = &g->values[un->inputs[0]];
  if (planes->ndim != 5 || tsl_node_attr_int(un, "C", -1) != w->shape[1]) return -1;
  return u;
}

static float f32_at(const tsl_tensor *t, int64_t i) {
  return tsl_tensor_is_contiguous(t) ? ((const float *)t->data)[i] : (float)tsl_tensor_get_f64(t, i);
}

/* w [K, C, 1, 1] as [ceil(C/4) * 4, ceil(K/x) * x] (zero-padded) and the bias as
 * [ceil(K/x) * x], added as constants; *wt and *bt their value ids. */
static tsl_status lut_constants(tsl_graph *g, const tsl_node *n, int64_t x, int *wt, int *bt) {
  const tsl_tensor *w = g->values[n->inputs[1]].constant;
  const tsl_tensor *b = n->n_inputs >= 3 && n->inputs[2] >= 0 ? g->values[n->inputs[2]].constant : NULL;
  int64_t K = w->shape[0], C = w->shape[1], CG = (C + 3) / 4 * 4, KP = (K + x - 1) / x * x;
  int64_t ws[2] = {CG, KP}, bs[1] = {KP};
  tsl_tensor *tw = NULL, *tb = NULL;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, 2, ws, &tw);
  if (st == TSL_OK) st = tsl_tensor_new(TSL_DTYPE_F32, 1, bs, &tb);
  if (st != TSL_OK) {
    tsl_tensor_free(tw);
    return st;
  }
  float *pw = tw->data, *pb = tb->data; /* zeroed */
  for (int64_t k = 0; k < K; k++) {
    for (int64_t c = 0; c < C; c++) pw[c * KP + k] = f32_at(w, k * C + c);
    pb[k] = b ? f32_at(b, k) : 0.0f;
  }
  char name[300];
  snprintf(name, sizeof name, "%s.lut_weight", n->name);
  st = tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, tw, wt);
  if (st != TSL_OK) {
    tsl_tensor_free(tb);
    return st;
  }
  snprintf(name, sizeof name, "%s.lut_bias", n->name);
  return tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, tb, bt);
}

/* Conv node c (reading unpack node u) as the lookup-table conv. */
static tsl_status rewrite(tsl_graph *g, int c, int u) {
  int64_t x = g->values[g->nodes[c].outputs[0]].layout.block;
  int wt, bt, out, node;
  tsl_status st = lut_constants(g, &g->nodes[c], x, &wt, &bt);
  char vname[300];
  snprintf(vname, sizeof vname, "%s.lut", g->values[g->nodes[c].outputs[0]].name);
  if (st == TSL_OK) st = tsl_graph_add_value(g, tsl_graph_find_value(g, vname) >= 0 ? NULL : vname, &out);
  if (st != TSL_OK) return st;
  const tsl_node *n = &g->nodes[c];
  int ins[3] = {g->nodes[u].inputs[0], wt, bt}, y = n->outputs[0];
  int64_t K = g->values[n->inputs[1]].constant->shape[0], act = tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE);
  /* an absent Clip bound is the largest float (as the conv lowering's, compile_conv.c) */
  double lo = tsl_node_attr_float(n, TSL_ATTR_CLIP_MIN, -INFINITY), hi = tsl_node_attr_float(n, TSL_ATTR_CLIP_MAX, INFINITY);
  lo = isfinite(lo) ? lo : -FLT_MAX;
  hi = isfinite(hi) ? hi : FLT_MAX;
  char name[256];
  snprintf(name, sizeof name, "%s", n->name);
  if ((st = tsl_graph_add_node(g, TSL_OP_BINARY, name, 3, ins, 1, &out, &node)) != TSL_OK) return st;
  st = tsl_graph_set_attr_string(g, node, "kernel", TSL_LUTCONV_OP);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "K", K);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "X", x);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "act", act);
  if (st == TSL_OK && act == TSL_ACT_CLIP) st = tsl_graph_set_attr_float(g, node, "clip_min", lo);
  if (st == TSL_OK && act == TSL_ACT_CLIP) st = tsl_graph_set_attr_float(g, node, "clip_max", hi);
  if (st != TSL_OK) return st;
  g->values[out].layout = g->values[y].layout;
  if ((st = tsl_graph_infer_node(g, node)) != TSL_OK) return st;
  return tsl_graph_replace_uses(g, y, out);
}

tsl_status tsl_pass_lut_conv(tsl_graph *g, int *rewritten) {
  if (rewritten) *rewritten = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "lookup-table conv pass: NULL graph");
  int count = 0, n0 = g->n_nodes;
  tsl_status st = TSL_OK;
  for (int c = 0; c < n0 && st == TSL_OK; c++) {
    int u = rewritable(g, &g->nodes[c]);
    if (u < 0) continue;
    if ((st = rewrite(g, c, u)) == TSL_OK) count++;
  }
  /* sorted first: pruning walks the nodes in order (the new nodes were appended) */
  if (st == TSL_OK && count > 0) st = tsl_graph_toposort(g);
  if (st == TSL_OK && count > 0) st = tsl_graph_prune(g);
  if (st == TSL_OK && rewritten) *rewritten = count;
  return st;
}
