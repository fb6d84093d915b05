/* Bitserial convs of narrow bit planes over their window's taps packed into words
 * (bit_im2col.h). */
#include "models/passes/bit_im2col.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The convs the pass rewrites: data [N, B, CW, H, W] and weight [CW, R, S, K]. */
static const char *const kernels[] = {"bitserial_conv2d_unipolar64_packed",      "bitserial_conv2d_unipolar64_requant",
                                      "bitserial_conv2d_unipolar64_requant_add", "bitserial_conv2d_unipolar64_requant_nhwc",
                                      "bitserial_conv2d_unipolar64_requant_add_nhwc"};

/* The conv's parameters the rewrite replaces (the rest are copied). */
static bool window_param(const char *name) {
  return strcmp(name, "C") == 0 || strcmp(name, "stride_h") == 0 || strcmp(name, "stride_w") == 0 ||
         strcmp(name, "pad_h") == 0 || strcmp(name, "pad_w") == 0;
}

static int64_t words_of(int64_t C, int64_t R, int64_t S) {
  int64_t T = 64 / C;
  return (R * S + T - 1) / T;
}

tsl_status tsl_bit_im2col_weight(const uint64_t *w, int64_t C, int64_t R, int64_t S, int64_t K, uint64_t *out) {
  if (!w || !out) return tsl_error(TSL_ERR_INVALID, "bit im2col weight: NULL pointer");
  if (C < 1 || C > 32 || R < 1 || S < 1 || K < 1)
    return tsl_error(TSL_ERR_INVALID, "bit im2col weight: C = %lld (1..32), R = %lld, S = %lld, K = %lld (>= 1)",
                     (long long)C, (long long)R, (long long)S, (long long)K);
  int64_t T = 64 / C, words = words_of(C, R, S);
  uint64_t mask = (C == 64 ? ~0ull : (1ull << C) - 1);
  memset(out, 0, (size_t)(words * K) * sizeof *out);
  for (int64_t t = 0; t < R * S; t++)
    for (int64_t k = 0; k < K; k++) out[(t / T) * K + k] |= (w[t * K + k] & mask) << ((t % T) * C);
  return TSL_OK;
}

/* Whether node n is a conv to rewrite. */
static bool rewritable(const tsl_graph *g, const tsl_node *n) {
  const tsl_attr *k = tsl_node_attr(n, "kernel");
  /* (a name the new nodes can extend whole: the tuner finds the conv by it) */
  if (n->op != TSL_OP_BINARY || !k || k->kind != TSL_ATTR_STRING || n->n_outputs != 1 || n->n_inputs < 4 ||
      n->n_inputs > 8 || !n->name || strlen(n->name) >= 256)
    return false;
  bool known = false;
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) known = known || strcmp(k->s, kernels[i]) == 0;
  if (!known) return false;
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] < 0) return false;
  for (int a = 0; a < n->n_attrs; a++)
    if (strcmp(n->attrs[a].name, "kernel") != 0 && n->attrs[a].kind != TSL_ATTR_INT) return false;
  const tsl_value *x = &g->values[n->inputs[0]];
  const tsl_tensor *w = g->values[n->inputs[1]].constant;
  int64_t C = tsl_node_attr_int(n, "C", -1);
  if (x->ndim != 5 || x->shape[2] != 1 || !w || w->ndim != 4 || w->shape[0] != 1 ||
      !tsl_dtype_equal(w->dtype, TSL_DTYPE_U64) || !tsl_tensor_is_contiguous(w) || C < 1 || C > 32)
    return false;
  int64_t R = w->shape[1], S = w->shape[2];
  return R * S > 1 && words_of(C, R, S) < R * S;
}

/* Conv node c over its window's packed taps: the im2col node, the packed weight and the
 * 1x1 conv, which takes over the old output's readers. */
static tsl_status rewrite(tsl_graph *g, int c) {
  const tsl_node *n = &g->nodes[c];
  const tsl_tensor *w = g->values[n->inputs[1]].constant;
  int64_t C = tsl_node_attr_int(n, "C", -1), R = w->shape[1], S = w->shape[2], K = w->shape[3];
  int64_t T = 64 / C, words = words_of(C, R, S), used = 64 * (words - 1) + (R * S - (words - 1) * T) * C;
  int64_t window[7] = {C,
                       R,
                       S,
                       tsl_node_attr_int(n, "stride_h", 1),
                       tsl_node_attr_int(n, "stride_w", 1),
                       tsl_node_attr_int(n, "pad_h", 0),
                       tsl_node_attr_int(n, "pad_w", 0)};
  static const char *const window_names[7] = {"C", "R", "S", "stride_h", "stride_w", "pad_h", "pad_w"};
  char name[320], node_name[256];
  snprintf(node_name, sizeof node_name, "%s", n->name);
  /* the packed weight */
  int64_t ws[4] = {words, 1, 1, K};
  tsl_tensor *tw = NULL;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_U64, 4, ws, &tw);
  if (st == TSL_OK) st = tsl_bit_im2col_weight(w->data, C, R, S, K, tw->data);
  int wid = -1;
  snprintf(name, sizeof name, "%s.im2col_weight", node_name);
  if (st == TSL_OK) st = tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, tw, &wid);
  else tsl_tensor_free(tw);
  if (st != TSL_OK) return st;
  /* the im2col node */
  int cols = -1, im = -1, x = g->nodes[c].inputs[0];
  snprintf(name, sizeof name, "%.256s.im2col", g->values[x].name ? g->values[x].name : node_name);
  if ((st = tsl_graph_add_value(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, &cols)) != TSL_OK) return st;
  snprintf(name, sizeof name, "%s.im2col", node_name);
  if ((st = tsl_graph_add_node(g, TSL_OP_BINARY, name, 1, &x, 1, &cols, &im)) != TSL_OK) return st;
  st = tsl_graph_set_attr_string(g, im, "kernel", "bit_im2col_unipolar64");
  for (int i = 0; i < 7 && st == TSL_OK; i++) st = tsl_graph_set_attr_int(g, im, window_names[i], window[i]);
  if (st == TSL_OK) st = tsl_graph_infer_node(g, im);
  if (st != TSL_OK) return st;
  /* the 1x1 conv: the old inputs but data and weight, the old parameters but the window's */
  n = &g->nodes[c];
  int ins[8], nin = n->n_inputs, out = -1, node = -1, y = n->outputs[0];
  for (int i = 0; i < nin && i < 8; i++) ins[i] = n->inputs[i];
  ins[0] = cols;
  ins[1] = wid;
  snprintf(name, sizeof name, "%.256s.cols", g->values[y].name ? g->values[y].name : node_name);
  if ((st = tsl_graph_add_value(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, &out)) != TSL_OK) return st;
  if ((st = tsl_graph_add_node(g, TSL_OP_BINARY, node_name, nin, ins, 1, &out, &node)) != TSL_OK) return st;
  n = &g->nodes[c];
  st = tsl_graph_set_attr_string(g, node, "kernel", tsl_node_attr(n, "kernel")->s);
  for (int a = 0; a < g->nodes[c].n_attrs && st == TSL_OK; a++) {
    const tsl_attr *at = &g->nodes[c].attrs[a];
    if (at->kind == TSL_ATTR_INT && !window_param(at->name)) st = tsl_graph_set_attr_int(g, node, at->name, at->i);
  }
  if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "C", used);
  if (st != TSL_OK) return st;
  g->values[out].layout = g->values[y].layout;
  if ((st = tsl_graph_infer_node(g, node)) != TSL_OK) return st;
  return tsl_graph_replace_uses(g, y, out);
}

tsl_status tsl_pass_bit_im2col(tsl_graph *g, int *rewritten) {
  if (rewritten) *rewritten = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "bit im2col pass: NULL graph");
  const char *e = getenv("TSL_BIT_IM2COL");
  if (e && strcmp(e, "none") == 0) return TSL_OK;
  int count = 0, n0 = g->n_nodes;
  tsl_status st = TSL_OK;
  for (int c = 0; c < n0 && st == TSL_OK; c++) {
    if (!rewritable(g, &g->nodes[c])) continue;
    if ((st = rewrite(g, c)) == TSL_OK) count++;
  }
  /* sorted first: pruning walks the nodes in order (the new nodes were appended) */
  if (st == TSL_OK && count > 0) st = tsl_graph_toposort(g);
  if (st == TSL_OK && count > 0) st = tsl_graph_prune(g);
  if (st == TSL_OK && rewritten) *rewritten = count;
  return st;
}
