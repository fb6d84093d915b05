/* Channels-last chains computed channels-first (channels_first.h). */
#include "models/passes/channels_first.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/passes/uses.h"

enum { MAX_CHAIN = 64 };

static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

static bool transposes(const tsl_graph *g, const tsl_node *n, const int64_t *perm) {
  int np;
  const int64_t *p = tsl_node_attr_ints(n, "perm", &np);
  return n->op == TSL_OP_TRANSPOSE && n->n_inputs == 1 && p && np == 4 && memcmp(p, perm, 4 * sizeof *p) == 0 &&
         g->values[n->inputs[0]].ndim == 4;
}

/* Constant p holds one value per channel of NHWC data with c channels (or one value):
 * every extent 1 but the last, which is c or 1. */
static bool per_channel(const tsl_graph *g, int p, int64_t c) {
  const tsl_value *v = &g->values[p];
  if (!v->constant || !tsl_dtype_equal(v->dtype, TSL_DTYPE_F32) || v->ndim > 4) return false;
  for (int d = 0; d + 1 < v->ndim; d++)
    if (v->shape[d] != 1) return false;
  return v->ndim == 0 || v->shape[v->ndim - 1] == 1 || v->shape[v->ndim - 1] == c;
}

/* The chain after Transpose t1 up to the Transpose back (*t2): its nodes in chain[],
 * their count, or -1 when the values do not form such a chain. */
static int walk(const tsl_graph *g, int t1, const bool *dead, int *chain, int *t2) {
  int v = g->nodes[t1].outputs[0], n = 0;
  int64_t c = g->values[g->nodes[t1].inputs[0]].shape[1];
  for (;;) {
    int u = tsl_pass_single_user(g, v, dead);
    if (u < 0 || n >= MAX_CHAIN || g->nodes[u].n_outputs != 1) return -1;
    const tsl_node *un = &g->nodes[u];
    if (un->op == TSL_OP_TRANSPOSE) {
      *t2 = u;
      return transposes(g, un, to_nchw) && !tsl_pass_is_graph_output(g, un->outputs[0]) ? n : -1;
    }
    int other = tsl_pass_other_input(un, v);
    switch (un->op) {
    case TSL_OP_LAYER_NORM: {
      int64_t axis = tsl_node_attr_int(un, "axis", -1);
      bool last = (axis == -1 || axis == 3) && tsl_node_attr_int(un, TSL_ATTR_NORM_END, 4) == 4;
      if (un->inputs[0] != v || !last || !per_channel(g, un->inputs[1], c) ||
          (un->n_inputs > 2 && un->inputs[2] >= 0 && !per_channel(g, un->inputs[2], c)))
        return -1;
      break;
    }
    case TSL_OP_MATMUL: {
      const tsl_value *w = &g->values[un->inputs[1]];
      if (un->inputs[0] != v || !w->constant || w->ndim != 2 || w->shape[0] != c ||
          !tsl_dtype_equal(w->dtype, TSL_DTYPE_F32))
        return -1;
      c = w->shape[1];
      break;
    }
    case TSL_OP_ADD:
    case TSL_OP_MUL:
      if (other < 0 || other == v || !per_channel(g, other, c)) return -1;
      break;
    case TSL_OP_ACTIVATION:
    case TSL_OP_RELU:
    case TSL_OP_CLIP:
      if (un->n_inputs != 1) return -1;
      break;
    default: return -1;
    }
    chain[n++] = u;
    v = un->outputs[0];
  }
}

/* A new f32 constant of shape dims[nd] holding data (numel values). */
static tsl_status new_const(tsl_graph *g, int nd, const int64_t *dims, const float *data, int *out) {
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, nd, dims, &t);
  if (st != TSL_OK) return st;
  memcpy(t->data, data, (size_t)tsl_tensor_numel(t) * sizeof(float));
  return tsl_graph_add_constant(g, NULL, t, out);
}

/* Per-channel constant p as [k, 1, 1] (three_d) or [k] (n values: k, or 1 repeated k times
 * when `expand`). */
static tsl_status channel_const(tsl_graph *g, int p, int64_t k, bool three_d, bool expand, int *out) {
  const tsl_tensor *t = g->values[p].constant;
  int64_t n = tsl_tensor_numel(t), m = expand ? k : n;
  float *d = malloc((size_t)m * sizeof *d);
  if (!d) return tsl_error(TSL_ERR_NOMEM, "channels_first: out of memory");
  for (int64_t i = 0; i < m; i++) d[i] = (float)tsl_tensor_get_f64(t, n == 1 ? 0 : i);
  int64_t dims[3] = {m, 1, 1};
  tsl_status st = new_const(g, three_d && m > 1 ? 3 : 1, dims, d, out);
  free(d);
  return st;
}

/* A node of op on ins (read before *out is written); its id in *node, its new output value
 * in *out. */
static tsl_status add(tsl_graph *g, tsl_op op, const char *name, int nin, const int *ins, int *node, int *out) {
  tsl_status st = tsl_graph_add_value(g, NULL, out);
  if (st == TSL_OK) st = tsl_graph_add_node(g, op, name, nin, ins, 1, out, node);
  return st;
}

/* The 1x1 conv of MatMul node mm (weight [C, K] -> [K, C, 1, 1]), with the bias of Add
 * node `badd` (-1: none). */
static tsl_status matmul_as_conv(tsl_graph *g, int mm, int badd, int x, int *conv, int *out) {
  const tsl_tensor *w = g->values[g->nodes[mm].inputs[1]].constant;
  int64_t C = w->shape[0], K = w->shape[1], dims[4] = {K, C, 1, 1};
  float *wt = malloc((size_t)(C * K) * sizeof *wt);
  if (!wt) return tsl_error(TSL_ERR_NOMEM, "channels_first: out of memory");
  for (int64_t c = 0; c < C; c++)
    for (int64_t k = 0; k < K; k++) wt[k * C + c] = (float)tsl_tensor_get_f64(w, c * K + k);
  int ins[3] = {x, -1, -1};
  tsl_status st = new_const(g, 4, dims, wt, &ins[1]);
  free(wt);
  if (st == TSL_OK && badd >= 0) {
    int v = g->nodes[mm].outputs[0];
    st = channel_const(g, tsl_pass_other_input(&g->nodes[badd], v), K, false, true, &ins[2]);
  }
  if (st == TSL_OK) st = add(g, TSL_OP_CONV, g->nodes[mm].name, badd >= 0 ? 3 : 2, ins, conv, out);
  return st;
}

/* The chain chain[0..n) after Transpose t1, rewritten on t1's NCHW input; *out its
 * result, *conv the last node made when it is a conv (else -1). */
static tsl_status rewrite(tsl_graph *g, int t1, const int *chain, int n, int *conv, int *out) {
  int cur = g->nodes[t1].inputs[0], prev = g->nodes[t1].outputs[0]; /* NCHW and NHWC values */
  tsl_status st = TSL_OK;
  *conv = -1;
  for (int k = 0; k < n && st == TSL_OK; k++) {
    int u = chain[k], node = -1, v = g->nodes[u].outputs[0];
    int64_t c = g->values[v].shape[3];
    tsl_op op = g->nodes[u].op;
    *conv = -1;
    if (op == TSL_OP_LAYER_NORM) {
      int ins[3] = {cur, -1, -1}, nin = g->nodes[u].n_inputs > 2 && g->nodes[u].inputs[2] >= 0 ? 3 : 2;
      for (int i = 1; i < nin && st == TSL_OK; i++) st = channel_const(g, g->nodes[u].inputs[i], c, false, false, &ins[i]);
      if (st == TSL_OK) st = add(g, op, g->nodes[u].name, nin, ins, &node, &cur);
      if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, "axis", 1);
      if (st == TSL_OK) st = tsl_graph_set_attr_int(g, node, TSL_ATTR_NORM_END, 2);
      if (st == TSL_OK) st = tsl_graph_set_attr_float(g, node, "epsilon", tsl_node_attr_float(&g->nodes[u], "epsilon", 1e-5));
    } else if (op == TSL_OP_MATMUL) {
      bool bias = k + 1 < n && g->nodes[chain[k + 1]].op == TSL_OP_ADD;
      st = matmul_as_conv(g, u, bias ? chain[k + 1] : -1, cur, &node, &cur);
      if (bias) v = g->nodes[chain[++k]].outputs[0];
      if (st == TSL_OK) *conv = node;
    } else if (op == TSL_OP_ADD || op == TSL_OP_MUL) { /* both commute: the data first */
      int ins[2] = {cur, -1};
      st = channel_const(g, tsl_pass_other_input(&g->nodes[u], prev), c, true, false, &ins[1]);
      if (st == TSL_OK) st = add(g, op, g->nodes[u].name, 2, ins, &node, &cur);
    } else {
      int in = cur;
      st = add(g, op, g->nodes[u].name, 1, &in, &node, &cur);
      if (st == TSL_OK) st = tsl_pass_copy_attrs(g, u, node);
    }
    if (st == TSL_OK) st = tsl_graph_infer_node(g, node);
    prev = v;
  }
  *out = cur;
  return st;
}

/* ConvNeXt's layer scale: y = Mul(conv, s) with s one value per channel ([K, 1, 1],
 * [1, K, 1, 1] or a scalar) becomes the conv with its weight rows and bias scaled (both
 * the pass's own constants, read by nothing else). */
static tsl_status fold_channel_scale(tsl_graph *g, int conv, const bool *dead) {
  int y = g->nodes[conv].outputs[0], m = tsl_pass_single_user_op(g, y, TSL_OP_MUL, dead);
  if (m < 0 || tsl_pass_is_graph_output(g, g->nodes[m].outputs[0])) return TSL_OK;
  int s = tsl_pass_other_input(&g->nodes[m], y);
  const tsl_value *sv = s >= 0 ? &g->values[s] : NULL;
  tsl_tensor *w = g->values[g->nodes[conv].inputs[1]].constant;
  int64_t K = w->shape[0], per = tsl_tensor_numel(w) / K;
  if (!sv || s == y || !sv->constant || !tsl_dtype_equal(sv->dtype, TSL_DTYPE_F32)) return TSL_OK;
  int64_t n = tsl_tensor_numel(sv->constant);
  bool channels = n == 1 || (sv->ndim >= 3 && sv->ndim <= 4 && sv->shape[sv->ndim - 3] == K);
  for (int d = 0; d < sv->ndim && channels; d++) channels = d == sv->ndim - 3 || sv->shape[d] == 1;
  if (!channels) return TSL_OK;
  tsl_tensor *b = g->nodes[conv].n_inputs > 2 ? g->values[g->nodes[conv].inputs[2]].constant : NULL;
  for (int64_t k = 0; k < K; k++) {
    float f = (float)tsl_tensor_get_f64(sv->constant, n == 1 ? 0 : k);
    for (int64_t i = 0; i < per; i++) ((float *)w->data)[k * per + i] *= f;
    if (b) ((float *)b->data)[k] *= f;
  }
  return tsl_graph_replace_uses(g, g->nodes[m].outputs[0], y);
}

tsl_status tsl_pass_channels_first(tsl_graph *g, int *chains) {
  if (chains) *chains = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "channels_first: NULL graph");
  int count = 0, n0 = g->n_nodes;
  /* each chain appends at most its length in nodes: room for them in the marks */
  bool *dead = calloc((size_t)(2 * n0 + 1), sizeof *dead);
  if (!dead) return tsl_error(TSL_ERR_NOMEM, "channels_first: out of memory");
  tsl_status st = TSL_OK;
  for (int i = 0; i < n0 && st == TSL_OK; i++) {
    int chain[MAX_CHAIN], t2, n, conv, y;
    if (dead[i] || !transposes(g, &g->nodes[i], to_nhwc) || g->values[g->nodes[i].inputs[0]].constant) continue;
    if ((n = walk(g, i, dead, chain, &t2)) < 0) continue;
    if ((st = rewrite(g, i, chain, n, &conv, &y)) != TSL_OK) break;
    if ((st = tsl_graph_replace_uses(g, g->nodes[t2].outputs[0], y)) != TSL_OK) break;
    dead[i] = dead[t2] = true;
    for (int k = 0; k < n; k++) dead[chain[k]] = true;
    if (conv >= 0 && (st = fold_channel_scale(g, conv, dead)) != TSL_OK) break;
    count++;
  }
  free(dead);
  if (st != TSL_OK) return st;
  if (chains) *chains = count;
  if (!count) return TSL_OK;
  if ((st = tsl_graph_toposort(g)) != TSL_OK) return st;
  return tsl_graph_prune(g);
}
