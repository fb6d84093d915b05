/* Resize past a following 1x1 conv (sink_resize.h). */
#include "models/passes/sink_resize.h"

#include <stdio.h>
#include <string.h>

#include "models/passes/fuse_conv.h"
#include "models/passes/uses.h"

static bool all_equal(const tsl_node *n, const char *attr, int64_t v) {
  int k;
  const int64_t *a = tsl_node_attr_ints(n, attr, &k);
  for (int i = 0; a && i < k; i++)
    if (a[i] != v) return false;
  return true;
}

/* Whether Resize node r scales H and W only, upsampling, in a mode whose weights sum to 1. */
static bool upsampling_resize(const tsl_graph *g, const tsl_node *r) {
  if (r->op != TSL_OP_RESIZE || r->n_inputs < 1 || r->inputs[0] < 0) return false;
  const tsl_value *x = &g->values[r->inputs[0]], *y = &g->values[r->outputs[0]];
  const tsl_attr *m = tsl_node_attr(r, "mode"), *s = tsl_node_attr(r, "scales");
  if (x->ndim != 4 || y->ndim != 4 || !tsl_dtype_equal(x->dtype, TSL_DTYPE_F32)) return false;
  if (m && m->kind == TSL_ATTR_STRING && strcmp(m->s, "linear") != 0 && strcmp(m->s, "nearest") != 0) return false;
  if (s && (s->kind != TSL_ATTR_FLOATS || s->n != 4 || s->floats[0] != 1.0 || s->floats[1] != 1.0)) return false;
  return x->shape[0] == y->shape[0] && x->shape[1] == y->shape[1] &&
         y->shape[2] * y->shape[3] > x->shape[2] * x->shape[3];
}

/* Whether conv node c is a plain 1x1 conv of input v narrowing (or keeping) the channels. */
static bool plain_1x1_conv(const tsl_graph *g, const tsl_node *c, int v) {
  if (c->op != TSL_OP_CONV || c->n_inputs < 2 || c->n_inputs > 3 || c->inputs[0] != v || c->n_outputs != 1) return false;
  const tsl_value *w = &g->values[c->inputs[1]];
  const tsl_attr *pad = tsl_node_attr(c, "auto_pad");
  if (!w->constant || w->ndim != 4 || w->shape[2] != 1 || w->shape[3] != 1 || w->shape[0] > w->shape[1]) return false;
  if (pad && pad->kind == TSL_ATTR_STRING && strcmp(pad->s, "NOTSET") != 0 && strcmp(pad->s, "VALID") != 0) return false;
  return tsl_node_attr_int(c, "group", 1) == 1 && all_equal(c, "strides", 1) && all_equal(c, "pads", 0) &&
         !tsl_node_attr(c, TSL_ATTR_ACTIVATION) && !tsl_pass_is_graph_output(g, c->outputs[0]);
}

static tsl_status rewrite(tsl_graph *g, int i, bool *dead, void *ctx, bool *done) {
  (void)ctx;
  if (!upsampling_resize(g, &g->nodes[i])) return TSL_OK;
  int r = g->nodes[i].outputs[0], c = tsl_pass_single_user(g, r, dead);
  if (c < 0 || !plain_1x1_conv(g, &g->nodes[c], r)) return TSL_OK;
  int ins[3] = {g->nodes[i].inputs[0], g->nodes[c].inputs[1], g->nodes[c].n_inputs > 2 ? g->nodes[c].inputs[2] : -1};
  int conv, t, resize, y = g->nodes[c].outputs[0];
  char name[256]; /* copied: adding a node may move the nodes */
  snprintf(name, sizeof name, "%s", g->nodes[c].name);
  tsl_status st = tsl_graph_add_value(g, NULL, &t);
  if (st == TSL_OK) st = tsl_graph_add_node(g, TSL_OP_CONV, name, g->nodes[c].n_inputs, ins, 1, &t, &conv);
  if (st == TSL_OK) st = tsl_pass_copy_attrs(g, c, conv);
  if (st == TSL_OK) st = tsl_graph_infer_node(g, conv);
  if (st == TSL_OK) st = tsl_pass_add_replacement(g, y, "resized", TSL_OP_RESIZE, 1, &t, &resize, NULL);
  if (st == TSL_OK) st = tsl_pass_copy_attrs(g, i, resize);
  if (st == TSL_OK) st = tsl_graph_set_attr_ints(g, resize, "sizes", 4, g->values[y].shape);
  if (st == TSL_OK) st = tsl_graph_infer_node(g, resize);
  if (st != TSL_OK) return st;
  dead[i] = dead[c] = true;
  *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_sink_resize(tsl_graph *g, int *moved) {
  return tsl_pass_rewrite_each(g, "sink_resize", rewrite, NULL, moved);
}
