/* Layout selection and propagation into NCHW[x]c (layout.h). */
#include "models/passes/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/passes/fuse_channel_scale.h"
#include "ops/conv2d/conv2d_select.h"

static bool is_image(const tsl_value *v) {
  return v->ndim == 4 && !v->constant && tsl_dtype_equal(v->dtype, TSL_DTYPE_F32);
}

static bool is_blocked(const tsl_value *v) { return v->layout.kind == TSL_LAYOUT_NCHWC; }

static bool const_or_absent(const tsl_graph *g, const tsl_node *n, int i) {
  return i >= n->n_inputs || n->inputs[i] < 0 || g->values[n->inputs[i]].constant;
}

static bool conv_blockable(const tsl_graph *g, const tsl_node *n) {
  if (n->n_inputs < 2 || n->inputs[0] < 0 || !is_image(&g->values[n->inputs[0]])) return false;
  const tsl_value *w = &g->values[n->inputs[1]];
  if (!w->constant || w->ndim != 4 || !const_or_absent(g, n, 2)) return false;
  /* a fused residual of any group count: the residual families (ops/conv2d/algorithms_conv.h) */
  bool residual = n->n_inputs > 3 && n->inputs[3] >= 0;
  if (residual && !is_image(&g->values[n->inputs[3]])) return false;
  return is_image(&g->values[n->outputs[0]]);
}

/* Whether input k of blocked conv n reads a plain image as it is (no transform before it):
 * the data of a layer with few input channels, which the grouped algorithm reduces over
 * the true channels one broadcast value per tap (tsl_conv2d_reads_plain_data). A channel
 * scale's kernels read the data blocked; fuse_channel_scale runs after this pass and takes
 * only blocked images, so the channel-scale test here guards a reordering of the passes. */
static bool conv_reads_plain(const tsl_graph *g, const tsl_node *n, int k, int block) {
  if (n->op != TSL_OP_CONV || k != 0 || tsl_conv_channel_scale(n) >= 0) return false;
  const tsl_value *x = &g->values[n->inputs[0]];
  return x->layout.kind == TSL_LAYOUT_PLAIN &&
         tsl_conv2d_reads_plain_data(x->shape[1], tsl_node_attr_int(n, "group", 1), block);
}

/* Whether node n can run blocked with its image inputs blocked. */
static bool blockable(const tsl_graph *g, const tsl_node *n) {
  if (n->n_outputs != 1) return false;
  /* a global mean reads the blocked layout and writes a plain [N, C] (keepdims 0) */
  if ((tsl_node_is_spatial_mean(g, n) || n->op == TSL_OP_GLOBAL_AVERAGE_POOL) && n->inputs[0] >= 0 &&
      is_image(&g->values[n->inputs[0]]))
    return true;
  if (!is_image(&g->values[n->outputs[0]])) return false;
  const tsl_value *y = &g->values[n->outputs[0]];
  switch (n->op) {
  case TSL_OP_CONV: return conv_blockable(g, n);
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL:
  case TSL_OP_GLOBAL_AVERAGE_POOL:
  case TSL_OP_RELU:
  case TSL_OP_ACTIVATION: /* padding lanes: written 0 where f(0) != 0 (ops/nn/elemwise_generated.c) */
  case TSL_OP_IDENTITY:
  case TSL_OP_DROPOUT:
  case TSL_OP_CHANNEL_SHUFFLE: return is_image(&g->values[n->inputs[0]]);
  case TSL_OP_REDUCE_MEAN: /* 4-D output: keepdims */
    return tsl_node_is_spatial_mean(g, n) && is_image(&g->values[n->inputs[0]]);
  case TSL_OP_BATCH_NORM: return is_image(&g->values[n->inputs[0]]) && n->n_inputs == 5;
  case TSL_OP_LAYER_NORM: /* over the channels only (a pass's, passes/channels_first.h) */
    return is_image(&g->values[n->inputs[0]]) && tsl_node_attr_int(n, "axis", -1) == 1 &&
           tsl_node_attr_int(n, TSL_ATTR_NORM_END, 4) == 2;
  case TSL_OP_CLIP: {
    double lo = tsl_node_attr_float(n, "min", -INFINITY), hi = tsl_node_attr_float(n, "max", INFINITY);
    return is_image(&g->values[n->inputs[0]]) && lo <= 0.0 && hi >= 0.0; /* padding lanes stay 0 */
  }
  case TSL_OP_ADD:
  case TSL_OP_SUB:
  case TSL_OP_MUL:
  case TSL_OP_DIV:
    /* images that broadcast on any axis (a squeeze-excitation scale [N, C, 1, 1]):
     * ops/nn elemwise guards the padding lanes where it must; the same shape: flat */
    for (int k = 0; k < n->n_inputs; k++) {
      const tsl_value *v = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
      if (!v || !is_image(v)) return false;
      for (int d = 0; d < 4; d++)
        if (v->shape[d] != y->shape[d] && v->shape[d] != 1) return false;
    }
    return n->n_inputs == 2;
  case TSL_OP_PRELU: {
    /* a constant slope that varies along the channels only (read per lane) */
    const tsl_value *x = &g->values[n->inputs[0]], *s = &g->values[n->inputs[1]];
    bool ok = is_image(x) && s->constant && s->ndim <= 4;
    for (int d = 0; ok && d < s->ndim; d++) ok = s->shape[d] == 1 || 4 - s->ndim + d == 1;
    return ok;
  }
  case TSL_OP_CONCAT:
    if (tsl_node_attr_int(n, "axis", 0) != 1 && tsl_node_attr_int(n, "axis", 0) != -3) return false;
    /* fall through - the channels of images */
  case TSL_OP_CHANNEL_GATHER:
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] < 0 || !is_image(&g->values[n->inputs[k]])) return false;
    return true;
  case TSL_OP_SLICE: {
    int ns, na, nst;
    const int64_t *axes = tsl_node_attr_ints(n, "axes", &na), *steps = tsl_node_attr_ints(n, "steps", &nst);
    tsl_node_attr_ints(n, "starts", &ns);
    if (!is_image(&g->values[n->inputs[0]])) return false;
    for (int i = 0; i < ns; i++) {
      int64_t ax = axes ? axes[i] : i;
      if (steps && steps[i] != 1) return false;
      if (ax != 1 && ax != -3) {
        /* a full slice of another axis changes nothing there */
        const tsl_value *x = &g->values[n->inputs[0]];
        int a = (int)(ax < 0 ? ax + 4 : ax);
        if (a < 0 || a > 3 || x->shape[a] != y->shape[a]) return false;
      }
    }
    return true;
  }
  default: return false;
  }
}

/* A Resize of the H and W of an image: it reads its input in either layout and writes
 * either (ops/nn/generators.h), so it never needs a transform itself. */
static bool resize_any_layout(const tsl_graph *g, const tsl_node *n) {
  if (n->op != TSL_OP_RESIZE || !is_image(&g->values[n->inputs[0]]) || !is_image(&g->values[n->outputs[0]]))
    return false;
  const tsl_value *x = &g->values[n->inputs[0]], *y = &g->values[n->outputs[0]];
  int ns;
  const double *scales = NULL;
  const tsl_attr *a = tsl_node_attr(n, "scales");
  if (a && a->kind == TSL_ATTR_FLOATS) scales = a->floats, ns = a->n;
  for (int d = 0; d < 2; d++)
    if (x->shape[d] != y->shape[d] || (scales && (ns != 4 || scales[d] != 1.0))) return false;
  return true;
}

/* Whether value v should be blocked for its consumers: not a graph output (read plain by
 * the caller) and every node reading it runs blocked. */
static bool consumers_blocked(const tsl_graph *g, int v) {
  for (int o = 0; o < g->n_outputs; o++)
    if (g->outputs[o] == v) return false;
  bool any = false;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) {
        if (!blockable(g, &g->nodes[i])) return false;
        any = true;
      }
  return any;
}

/* The value holding v in layout `to` (a transform node reading v, made once). */
static tsl_status transform_of(tsl_graph *g, int v, bool to_blocked, int block, int *cache, int *out,
                               int *count) {
  if (cache[v] >= 0) {
    *out = cache[v];
    return TSL_OK;
  }
  char name[300];
  snprintf(name, sizeof name, "%s.%s", g->values[v].name, to_blocked ? "nchwc" : "nchw");
  int t, node;
  tsl_status st = tsl_graph_add_value(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, &t);
  if (st != TSL_OK) return st;
  tsl_value *tv = &g->values[t];
  const tsl_value *sv = &g->values[v];
  tv->dtype = sv->dtype;
  tv->ndim = sv->ndim;
  memcpy(tv->shape, sv->shape, sizeof tv->shape);
  tv->layout = to_blocked ? (tsl_layout){TSL_LAYOUT_NCHWC, block} : (tsl_layout){TSL_LAYOUT_PLAIN, 0};
  if ((st = tsl_graph_add_node(g, TSL_OP_IDENTITY, NULL, 1, &v, 1, &t, &node)) != TSL_OK) return st;
  if ((st = tsl_graph_set_attr_int(g, node, TSL_ATTR_LAYOUT_TRANSFORM, 1)) != TSL_OK) return st;
  cache[v] = t;
  *out = t;
  (*count)++;
  return TSL_OK;
}

/* Gemm with a constant transposed B (a linear layer's [out, in] weight): B transposed
 * once here so the kernel reads rows of B contiguously along the vectorized output. */
static tsl_status pretranspose_gemm(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  if (n->n_inputs < 2 || n->inputs[1] < 0 || !tsl_node_attr_int(n, "transB", 0)) return TSL_OK;
  const tsl_tensor *b = g->values[n->inputs[1]].constant;
  if (!b || b->ndim != 2 || !tsl_dtype_equal(b->dtype, TSL_DTYPE_F32)) return TSL_OK;
  int64_t N = b->shape[0], K = b->shape[1], shape[2] = {K, N};
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, 2, shape, &t);
  if (st != TSL_OK) return st;
  for (int64_t j = 0; j < N; j++)
    for (int64_t k = 0; k < K; k++) ((float *)t->data)[k * N + j] = (float)tsl_tensor_get_f64(b, j * K + k);
  char name[300];
  snprintf(name, sizeof name, "%s.transposed", g->values[n->inputs[1]].name);
  int id;
  if ((st = tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, t, &id)) != TSL_OK) return st;
  g->nodes[node].inputs[1] = id;
  return tsl_graph_set_attr_int(g, node, "transB", 0);
}

tsl_status tsl_pass_select_layout(tsl_graph *g, int block, int *transforms) {
  if (!g || block < 1) return tsl_error(TSL_ERR_INVALID, "select_layout: bad arguments");
  int count = 0, cap = 2 * g->n_values + 2 * g->n_nodes + 16;
  int *to_blocked = malloc((size_t)cap * sizeof *to_blocked), *to_plain = malloc((size_t)cap * sizeof *to_plain);
  if (!to_blocked || !to_plain) {
    free(to_blocked);
    free(to_plain);
    return tsl_error(TSL_ERR_NOMEM, "select_layout: out of memory");
  }
  for (int i = 0; i < cap; i++) to_blocked[i] = to_plain[i] = -1;
  tsl_status st = TSL_OK;
  int n0 = g->n_nodes;
  for (int i = 0; i < n0 && st == TSL_OK; i++) {
    const tsl_node *n = &g->nodes[i];
    if (resize_any_layout(g, n)) { /* no transform: the output as its consumers read it */
      if (consumers_blocked(g, n->outputs[0])) g->values[n->outputs[0]].layout = (tsl_layout){TSL_LAYOUT_NCHWC, block};
      continue;
    }
    bool want = false;
    if (blockable(g, n)) {
      if (n->op == TSL_OP_CONV) want = true;
      for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && is_blocked(&g->values[n->inputs[k]])) want = true;
    }
    int nin = n->n_inputs;
    for (int k = 0; k < nin && st == TSL_OK; k++) {
      int v = g->nodes[i].inputs[k];
      if (v < 0 || g->values[v].constant || g->n_values + 1 >= cap) continue;
      const tsl_value *val = &g->values[v];
      int t;
      if (want && is_image(val) && !is_blocked(val) && !conv_reads_plain(g, &g->nodes[i], k, block)) {
        if ((st = transform_of(g, v, true, block, to_blocked, &t, &count)) == TSL_OK) g->nodes[i].inputs[k] = t;
      } else if (!want && is_blocked(val)) {
        if ((st = transform_of(g, v, false, block, to_plain, &t, &count)) == TSL_OK) g->nodes[i].inputs[k] = t;
      }
    }
    if (st == TSL_OK && g->nodes[i].op == TSL_OP_GEMM) st = pretranspose_gemm(g, i);
    if (st != TSL_OK || !want) continue;
    /* the weights stay OIHW: the compiler transforms them for the algorithm it picks */
    if (g->nodes[i].op == TSL_OP_CONV && (st = tsl_graph_set_attr_int(g, i, TSL_ATTR_BLOCKED_WEIGHTS, block)) != TSL_OK)
      break;
    if (is_image(&g->values[g->nodes[i].outputs[0]]))
      g->values[g->nodes[i].outputs[0]].layout = (tsl_layout){TSL_LAYOUT_NCHWC, block};
  }
  for (int o = 0; o < g->n_outputs && st == TSL_OK; o++) {
    int v = g->outputs[o], t;
    if (is_blocked(&g->values[v]) && (st = transform_of(g, v, false, block, to_plain, &t, &count)) == TSL_OK)
      g->outputs[o] = t;
  }
  free(to_blocked);
  free(to_plain);
  if (st != TSL_OK) return st;
  if (transforms) *transforms = count;
  if ((st = tsl_graph_toposort(g)) != TSL_OK) return st;
  return tsl_graph_prune(g);
}

int tsl_graph_count_layout_transforms(const tsl_graph *g) {
  int n = 0;
  for (int i = 0; g && i < g->n_nodes; i++)
    n += g->nodes[i].op == TSL_OP_IDENTITY && tsl_node_attr_int(&g->nodes[i], TSL_ATTR_LAYOUT_TRANSFORM, 0) == 1;
  return n;
}
