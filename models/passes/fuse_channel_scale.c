/* Squeeze-excitation channel scale folded into the next conv (fuse_channel_scale.h). */
#include "models/passes/fuse_channel_scale.h"

#include "models/passes/layout.h"
#include "models/passes/uses.h"

static bool blocked_image(const tsl_value *v, int64_t block) {
  return !v->constant && v->ndim == 4 && v->layout.kind == TSL_LAYOUT_NCHWC && v->layout.block == block;
}

/* Whether conv node c can take a per-(image, channel) scale of its data. */
static bool conv_fits(const tsl_graph *g, const tsl_node *c) {
  int64_t block = tsl_node_attr_int(c, TSL_ATTR_BLOCKED_WEIGHTS, 0);
  if (c->op != TSL_OP_CONV || block < 1 || c->n_inputs < 2 || c->n_inputs > 4 || c->inputs[0] < 0 ||
      c->inputs[1] < 0 || tsl_node_attr_int(c, "group", 1) != 1 || tsl_node_attr(c, TSL_ATTR_CHANNEL_SCALE))
    return false;
  const tsl_value *w = &g->values[c->inputs[1]], *x = &g->values[c->inputs[0]];
  if (!w->constant || w->ndim != 4 || w->shape[2] != 1 || w->shape[3] != 1 || !blocked_image(x, block) ||
      x->shape[1] != w->shape[1])
    return false;
  /* scaling the weight (K x C per image) must cost less than scaling the image (C x H x W) */
  if (w->shape[0] >= x->shape[2] * x->shape[3]) return false;
  if (x->shape[0] == 1) return true;
  /* several images: the GEMM 1x1 kernel scales per image (stride 1, no padding) */
  tsl_conv2d_params p;
  if (tsl_node_conv2d_params(g, c, &p) != TSL_OK) return false;
  return p.strides[0] == 1 && p.strides[1] == 1 && !p.pads[0] && !p.pads[1] && !p.pads[2] && !p.pads[3];
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  const tsl_node *conv = &g->nodes[i];
  if (!conv_fits(g, conv)) return TSL_OK;
  int m = conv->inputs[0], mul = g->values[m].producer;
  if (mul < 0 || dead[mul] || g->nodes[mul].op != TSL_OP_MUL || g->nodes[mul].n_inputs != 2 ||
      tsl_pass_single_user(g, m, dead) != i)
    return TSL_OK;
  const tsl_value *mv = &g->values[m];
  for (int k = 0; k < 2; k++) {
    int x = g->nodes[mul].inputs[1 - k], s = g->nodes[mul].inputs[k];
    if (x < 0 || s < 0 || !blocked_image(&g->values[x], mv->layout.block) ||
        !blocked_image(&g->values[s], mv->layout.block))
      continue;
    const tsl_value *xv = &g->values[x], *sv = &g->values[s];
    bool ok = sv->shape[0] == mv->shape[0] && sv->shape[1] == mv->shape[1] && sv->shape[2] == 1 && sv->shape[3] == 1;
    for (int d = 0; ok && d < 4; d++) ok = xv->shape[d] == mv->shape[d];
    if (!ok) continue;
    int ins[5] = {x, conv->inputs[1], conv->n_inputs > 2 ? conv->inputs[2] : -1,
                  conv->n_inputs > 3 ? conv->inputs[3] : -1, s};
    tsl_status st = tsl_graph_set_node_inputs(g, i, 5, ins);
    if (st == TSL_OK) st = tsl_graph_set_attr_int(g, i, TSL_ATTR_CHANNEL_SCALE, 1);
    if (st != TSL_OK) return st;
    dead[mul] = *done = true;
    return TSL_OK;
  }
  return TSL_OK;
}

tsl_status tsl_pass_fuse_channel_scale(tsl_graph *g, int *fused) {
  return tsl_pass_rewrite_each(g, "fuse_channel_scale", rewrite, NULL, fused);
}

int tsl_conv_channel_scale(const tsl_node *n) {
  return n->op == TSL_OP_CONV && n->n_inputs > 4 && tsl_node_attr_int(n, TSL_ATTR_CHANNEL_SCALE, 0) ? n->inputs[4]
                                                                                                   : -1;
}
