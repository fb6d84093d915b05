/* Strided convs as stride-1 convs over their input's phases (phase_conv.h). */
#include "models/passes/phase_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/passes/fuse_channel_scale.h"
#include "ops/conv2d/conv2d_select.h"

/* One spatial axis of the rewrite (phase_conv.h's symbols). */
typedef struct {
  int64_t extent;        /* H: the input's extent */
  int64_t phase_extent;  /* H' = ceil(H / 2) */
  int64_t taps;          /* R' */
  int64_t smin;          /* the smallest shift: tap b of the phase kernel is shift b + smin */
  int64_t pad_lo, pad_hi; /* pt', pb' */
  int64_t pad_lo_orig;   /* pt */
} phase_axis;

static int64_t floor_div2(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

/* The axis of extent H, kernel R, pads (lo, hi) at stride 2; false when it has no output
 * or the phase conv would need a negative trailing pad. */
static bool plan_axis(int64_t H, int64_t R, int64_t lo, int64_t hi, phase_axis *a) {
  if (H < 1 || R < 1 || lo < 0 || hi < 0 || H + lo + hi < R) return false;
  int64_t out = (H + lo + hi - R) / 2 + 1, smin = floor_div2(-lo), smax = floor_div2(R - 1 - lo);
  a->extent = H;
  a->phase_extent = (H + 1) / 2;
  a->taps = smax - smin + 1;
  a->smin = smin;
  a->pad_lo = -smin;
  a->pad_hi = out - 1 + a->taps - a->phase_extent - a->pad_lo;
  a->pad_lo_orig = lo;
  return a->pad_hi >= 0;
}

static bool ints_are(const tsl_node *n, const char *name, int64_t v, bool absent_ok) {
  int m;
  const int64_t *p = tsl_node_attr_ints(n, name, &m);
  if (!p) return absent_ok;
  for (int i = 0; i < m; i++)
    if (p[i] != v) return false;
  return m == 2;
}

/* Whether conv n is one to rewrite; its axes when it is. */
static bool rewritable(const tsl_graph *g, const tsl_node *n, int block, phase_axis *ay, phase_axis *ax) {
  if (n->op != TSL_OP_CONV || n->n_inputs < 2 || n->n_outputs != 1 || n->inputs[0] < 0 || n->inputs[1] < 0)
    return false;
  if (tsl_node_attr_int(n, "group", 1) != 1 || tsl_conv_channel_scale(n) >= 0) return false;
  if (!ints_are(n, "strides", 2, false) || !ints_are(n, "dilations", 1, true)) return false;
  const tsl_value *x = &g->values[n->inputs[0]];
  const tsl_tensor *w = g->values[n->inputs[1]].constant;
  if (x->ndim != 4 || x->layout.kind != TSL_LAYOUT_PLAIN || !tsl_dtype_equal(x->dtype, TSL_DTYPE_F32)) return false;
  if (!w || w->ndim != 4 || !tsl_dtype_equal(w->dtype, TSL_DTYPE_F32) || w->shape[1] != x->shape[1]) return false;
  int np;
  const int64_t *pads = tsl_node_attr_ints(n, "pads", &np);
  int64_t p[4] = {0, 0, 0, 0};
  if (pads && np != 4) return false;
  if (pads) memcpy(p, pads, sizeof p);
  if (!plan_axis(x->shape[2], w->shape[2], p[0], p[2], ay) || !plan_axis(x->shape[3], w->shape[3], p[1], p[3], ax))
    return false;
  return ay->taps == ax->taps && ay->taps >= 4 && !tsl_conv2d_reads_plain_data(4 * x->shape[1], 1, block) &&
         tsl_conv2d_prefers_winograd(4 * x->shape[1], w->shape[0], ay->taps, ax->taps);
}

/* The phase kernel w'[K, 4C, R', S'] of w[K, C, R, S] (phase_conv.h). */
static tsl_status phase_weights(const tsl_tensor *w, const phase_axis *ay, const phase_axis *ax, tsl_tensor **out) {
  int64_t K = w->shape[0], C = w->shape[1], R = w->shape[2], S = w->shape[3];
  int64_t shape[4] = {K, 4 * C, ay->taps, ax->taps};
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, 4, shape, out);
  if (st != TSL_OK) return st;
  float *d = (*out)->data;
  for (int64_t k = 0; k < K; k++)
    for (int64_t py = 0; py < 2; py++)
      for (int64_t px = 0; px < 2; px++)
        for (int64_t c = 0; c < C; c++)
          for (int64_t by = 0; by < ay->taps; by++)
            for (int64_t bx = 0; bx < ax->taps; bx++) {
              int64_t qy = 2 * (by + ay->smin) + py + ay->pad_lo_orig, qx = 2 * (bx + ax->smin) + px + ax->pad_lo_orig;
              bool in = qy >= 0 && qy < R && qx >= 0 && qx < S;
              *d++ = in ? (float)tsl_tensor_get_f64(w, ((k * C + c) * R + qy) * S + qx) : 0.0f;
            }
  return TSL_OK;
}

/* Appends node `op` reading value `in` into a new value "<base><suffix>"; its id. */
static tsl_status add_step(tsl_graph *g, tsl_op op, int in, const char *base, const char *suffix, int *node,
                           int *out) {
  char name[300];
  snprintf(name, sizeof name, "%s%s", base, suffix);
  tsl_status st = tsl_graph_add_value(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, out);
  if (st == TSL_OK) st = tsl_graph_add_node(g, op, NULL, 1, &in, 1, out, node);
  return st;
}

static tsl_status infer(tsl_graph *g, tsl_status st, int node) {
  return st == TSL_OK ? tsl_graph_infer_node(g, node) : st;
}

/* The space-to-depth of value x (phase_conv.h): the value holding it. */
static tsl_status space_to_depth(tsl_graph *g, int x, const phase_axis *ay, const phase_axis *ax, int *out) {
  char base[256];
  snprintf(base, sizeof base, "%s", g->values[x].name ? g->values[x].name : "x");
  int node, v = x;
  tsl_status st = TSL_OK;
  if (ay->extent % 2 || ax->extent % 2) {
    int64_t pads[8] = {0, 0, 0, 0, 0, 0, ay->extent % 2, ax->extent % 2};
    st = add_step(g, TSL_OP_PAD, v, base, ".phase_pad", &node, &v);
    if (st == TSL_OK) st = tsl_graph_set_attr_ints(g, node, "pads", 8, pads);
    st = infer(g, st, node);
  }
  if (st == TSL_OK) st = add_step(g, TSL_OP_SPACE_TO_DEPTH, v, base, ".phases", &node, &v);
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "blocksize", 2);
  st = infer(g, st, node);
  *out = v;
  return st;
}

static tsl_status rewrite(tsl_graph *g, int node, const phase_axis *ay, const phase_axis *ax) {
  int x = g->nodes[node].inputs[0], wv = g->nodes[node].inputs[1], phases, wid;
  tsl_tensor *w2;
  tsl_status st = phase_weights(g->values[wv].constant, ay, ax, &w2);
  if (st != TSL_OK) return st;
  char name[300];
  snprintf(name, sizeof name, "%s.phases", g->values[wv].name ? g->values[wv].name : "w");
  if ((st = tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, w2, &wid)) != TSL_OK)
    return st;
  if ((st = space_to_depth(g, x, ay, ax, &phases)) != TSL_OK) return st;
  g->nodes[node].inputs[0] = phases;
  g->nodes[node].inputs[1] = wid;
  int64_t ks[2] = {ay->taps, ax->taps}, ones[2] = {1, 1};
  int64_t pads[4] = {ay->pad_lo, ax->pad_lo, ay->pad_hi, ax->pad_hi};
  if ((st = tsl_graph_set_attr_ints(g, node, "kernel_shape", 2, ks)) != TSL_OK) return st;
  if ((st = tsl_graph_set_attr_ints(g, node, "strides", 2, ones)) != TSL_OK) return st;
  /* the output keeps its shape by the choice of pb', pr' (plan_axis); not re-inferred,
   * as shape inference does not take a conv with its residual fused (4 inputs) */
  return tsl_graph_set_attr_ints(g, node, "pads", 4, pads);
}

tsl_status tsl_pass_phase_conv(tsl_graph *g, int block, int *rewritten) {
  if (rewritten) *rewritten = 0;
  if (!g || block < 1) return tsl_error(TSL_ERR_INVALID, "phase_conv: NULL graph or block < 1");
  const char *e = getenv("TSL_PHASE_CONV");
  if (e && strcmp(e, "none") == 0) return TSL_OK;
  int count = 0, n0 = g->n_nodes;
  tsl_status st = TSL_OK;
  for (int i = 0; i < n0 && st == TSL_OK; i++) {
    phase_axis ay, ax;
    if (!rewritable(g, &g->nodes[i], block, &ay, &ax)) continue;
    if ((st = rewrite(g, i, &ay, &ax)) == TSL_OK) count++;
  }
  if (st == TSL_OK && count) st = tsl_graph_toposort(g);
  if (st == TSL_OK && count) st = tsl_graph_prune(g); /* the strided conv's weights */
  if (rewritten) *rewritten = count;
  return st;
}
