/* Expand 1x1 + depthwise fusion at conv lowering (compile_expand_dw.h). */
#include "models/compile_expand_dw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv2d/expand_depthwise.h"
#include "models/passes/fuse_channel_scale.h"
#include "models/passes/layout.h"
#include "ops/conv2d/algorithms_conv.h"
#include "models/passes/uses.h"
#include "tessel/runtime.h"

static bool blocked_conv(const tsl_graph *g, int node) {
  const tsl_node *n = node >= 0 ? &g->nodes[node] : NULL;
  return n && n->op == TSL_OP_CONV && tsl_node_attr_int(n, TSL_ATTR_BLOCKED_WEIGHTS, 0) &&
         tsl_conv_channel_scale(n) < 0;
}

static tsl_expand_dw_act act_of(const tsl_conv2d_layer *l) {
  tsl_expand_dw_act a;
  memset(&a, 0, sizeof a);
  a.act = l->act;
  a.clip_min = l->clip_min;
  a.clip_max = l->clip_max;
  a.fn = l->epilogue;
  return a;
}

/* Whether depthwise node `dw` and the producer of its data form a fusable pair (the
 * header's rule): *expand the producer, *d the fused layer, *le / *ld the two layers. */
static bool match(const tsl_graph *g, int dw, const tsl_target *t, int mode, int *expand, tsl_expand_dw_layer *d,
                  tsl_conv2d_layer *le, tsl_conv2d_layer *ld) {
  if (!blocked_conv(g, dw)) return false;
  if (tsl_conv_node_layer(g, dw, ld) != TSL_OK) {
    tsl_clear_error(); /* not a pair: tsl_lower_convs reports the node's own error */
    return false;
  }
  if (ld->groups != ld->C || ld->K != ld->C || ld->dilation_h != 1 || ld->dilation_w != 1 || ld->has_residual ||
      ld->data_block)
    return false;
  int v = g->nodes[dw].inputs[0], e = g->values[v].producer;
  if (!blocked_conv(g, e) || tsl_pass_single_user(g, v, NULL) != dw) return false;
  if (tsl_conv_node_layer(g, e, le) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  if (le->R != 1 || le->S != 1 || le->stride_h != 1 || le->stride_w != 1 || le->pad_top || le->pad_left ||
      le->pad_bottom || le->pad_right || le->groups != 1 || le->has_residual || le->data_block || le->K != ld->C ||
      le->block != ld->block || le->N != ld->N || le->H != ld->H || le->W != ld->W)
    return false;
  tsl_expand_dw_layer f = {le->N,        le->C,        le->H,          le->W,           le->K,
                           ld->R,        ld->S,        ld->stride_h,   ld->stride_w,    ld->pad_top,
                           ld->pad_left, ld->pad_bottom, ld->pad_right, ld->block,      act_of(le),
                           act_of(ld)};
  if (tsl_expand_dw_check(&f) != TSL_OK) {
    tsl_clear_error(); /* a pair the fused kernel does not take runs unfused */
    return false;
  }
  if (mode == 0 && !tsl_expand_dw_pays(&f, t)) return false;
  *expand = e;
  *d = f;
  return true;
}

/* The kernel of d (built once per key), what chose its schedule (*info) and its
 * program's argument shapes. The workload's schedule comes from the records as a conv's
 * does (tsl_dispatch_schedule: the best record of the fused template, else its default). */
static tsl_status fused_kernel(tsl_conv_lowering *cl, const tsl_expand_dw_layer *d, const tsl_kernel **k,
                               const tsl_dispatch_info **info, tsl_node_kernel *step) {
  tsl_workload w;
  char *key = NULL;
  tsl_status st = tsl_expand_dw_workload(d, &w);
  if (st == TSL_OK) st = tsl_workload_key_of(&w, &key);
  if (st != TSL_OK) return st;
  double t0 = tsl_time_now();
  tsl_arena *arena = cl->kernel_arena ? cl->kernel_arena : tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info di;
  *k = tsl_conv_lowering_cached(cl, key, info);
  if (*k) st = tsl_workload_instantiate(&w, &p); /* for the shapes */
  else st = tsl_dispatch_schedule(cl->records, cl->target, &w, cl->warn, &p, &s, &di);
  if (st == TSL_OK && p->ninputs + 1 > TSL_NODE_KERNEL_MAX_ARGS)
    st = tsl_error(TSL_ERR_INVALID, "expand_depthwise: %d arguments", p->ninputs + 1);
  for (int a = 0; st == TSL_OK && a <= p->ninputs; a++) {
    const tsl_buffer *b = a < p->ninputs ? p->inputs[a]->buf : p->outputs[0]->buf;
    step->ndims[a] = b->ndim;
    memcpy(step->shapes[a], b->shape, sizeof(int64_t) * (size_t)b->ndim);
  }
  if (st == TSL_OK && !*k) {
    uint64_t h = 1469598103934665603ull;
    for (const char *c = key; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    char name[96];
    snprintf(name, sizeof name, "expand_dw_%lldx%lld_s%lld__%08llx", (long long)d->R, (long long)d->S,
             (long long)d->stride_h, (unsigned long long)(h & 0xffffffffu));
    st = tsl_conv_lowering_build(cl, s, name, k);
    if (st == TSL_OK) st = tsl_conv_lowering_cache(cl, key, *k, &di);
    if (st == TSL_OK) tsl_conv_lowering_cached(cl, key, info);
    if (st == TSL_OK) tsl_conv_lowering_count(cl, &di, key);
  }
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  if (arena != cl->kernel_arena) tsl_arena_free(arena);
  free(key);
  cl->build_seconds += tsl_time_now() - t0;
  return st;
}

/* A [EB, X] bias tensor: node n's bias (input 2, K values) zero-padded; zeros without. */
static tsl_status padded_bias(const tsl_graph *g, const tsl_node *n, int64_t K, int ndim, const int64_t *shape,
                              tsl_tensor **out) {
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, out);
  const tsl_tensor *b = n->n_inputs > 2 && n->inputs[2] >= 0 ? g->values[n->inputs[2]].constant : NULL;
  if (st == TSL_OK && b && tsl_tensor_numel(*out) < K) st = tsl_error(TSL_ERR_INVALID, "the bias does not fit");
  for (int64_t k = 0; st == TSL_OK && b && k < K; k++) ((float *)(*out)->data)[k] = (float)tsl_tensor_get_f64(b, k);
  return st;
}

/* The layer as its family workload states it (what the weight programs are made from). */
static tsl_status family_of(const tsl_conv2d_layer *l, tsl_conv2d_layer *fam) {
  tsl_workload w;
  tsl_status st = tsl_conv2d_family_workload(l, &w);
  return st == TSL_OK ? tsl_conv2d_layer_of_workload(&w, fam) : st;
}

/* Adds tensor t (consumed, also on error: tsl_graph_add_constant frees it) as a constant
 * of g; *id its value. */
static tsl_status add_const(tsl_graph *g, tsl_tensor *t, int *id) { return tsl_graph_add_constant(g, NULL, t, id); }

static tsl_status lower_pair(tsl_graph *g, tsl_conv_lowering *cl, int dw, int ex, const tsl_expand_dw_layer *d,
                             const tsl_conv2d_layer *le, const tsl_conv2d_layer *ld, tsl_node_kernel *step,
                             const tsl_kernel **kernel) {
  memset(step, 0, sizeof *step);
  const tsl_kernel *k = NULL;
  const tsl_dispatch_info *info = NULL;
  tsl_conv2d_layer fe, fd;
  tsl_status st = fused_kernel(cl, d, &k, &info, step);
  if (st == TSL_OK) st = family_of(le, &fe);
  if (st == TSL_OK) st = family_of(ld, &fd);
  tsl_tensor *t[4] = {NULL, NULL, NULL, NULL};
  const tsl_node *ne = &g->nodes[ex], *nd = &g->nodes[dw];
  if (st == TSL_OK) st = tsl_conv_lowering_weights(cl, &fe, TSL_CONV2D_GEMM_1X1, g->values[ne->inputs[1]].constant, &t[0]);
  if (st == TSL_OK) st = padded_bias(g, ne, le->K, step->ndims[2], step->shapes[2], &t[1]);
  if (st == TSL_OK) st = tsl_conv_lowering_weights(cl, &fd, TSL_CONV2D_DEPTHWISE, g->values[nd->inputs[1]].constant, &t[2]);
  if (st == TSL_OK) st = padded_bias(g, nd, ld->K, step->ndims[4], step->shapes[4], &t[3]);
  /* the transformed weights hold the bytes of the program's inputs 1 and 3: OIHW[x]i[x]o
   * with R = S = 1 (weight_to_nchwc's [E/x, C/x, 1, 1, x, x]) and [E/x, (1,) R, S, x] */
  for (int i = 0; st == TSL_OK && i < 4; i += 2) {
    int64_t want = 1;
    for (int a = 0; a < step->ndims[i + 1]; a++) want *= step->shapes[i + 1][a];
    if (tsl_tensor_numel(t[i]) != want)
      st = tsl_error(TSL_ERR_INVALID, "the %s weight's layout is not the fused kernel's", i ? "depthwise" : "expand");
  }
  int ids[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; i++) {
    if (st == TSL_OK) st = add_const(g, t[i], &ids[i]);
    else tsl_tensor_free(t[i]);
  }
  if (st != TSL_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st, "compile: node %s (Conv, fused with %s): %s", g->nodes[dw].name, g->nodes[ex].name, why);
  }
  ne = &g->nodes[ex];
  nd = &g->nodes[dw];
  step->kind = TSL_NODE_KERNEL;
  step->ninputs = 5;
  step->nargs = 6;
  int values[6] = {ne->inputs[0], ids[0], ids[1], ids[2], ids[3], nd->outputs[0]};
  memcpy(step->values, values, sizeof values);
  snprintf(step->label, sizeof step->label, "expand_depthwise_nchwc%s (fused %.60s)",
           info && info->tuned ? " (tuned)" : "", ne->name ? ne->name : "");
  if (cl->node_info) cl->node_info[dw] = info;
  *kernel = k;
  cl->fused++;
  cl->layers += 2;
  return TSL_OK;
}

/* The one walk over the pairs of g that lowering and marking share: for each
 * depthwise node in node order that matches (match()) with neither node in a pair
 * already, visit(ctx, dw, expand, fused layer, expand layer, depthwise layer); a
 * visit's error stops the walk. n0 nodes are walked (a visit may add constants). */
typedef tsl_status (*pair_visit)(void *ctx, int dw, int ex, const tsl_expand_dw_layer *d, const tsl_conv2d_layer *le,
                                 const tsl_conv2d_layer *ld);

static tsl_status each_pair(const tsl_graph *g, const tsl_target *t, int mode, pair_visit visit, void *ctx) {
  int n0 = g->n_nodes;
  bool *taken = calloc((size_t)(n0 ? n0 : 1), sizeof *taken);
  if (!taken) return tsl_error(TSL_ERR_NOMEM, "expand/depthwise fusion: out of memory");
  tsl_status st = TSL_OK;
  for (int dw = 0; dw < n0 && mode >= 0 && st == TSL_OK; dw++) {
    int ex;
    tsl_expand_dw_layer d;
    tsl_conv2d_layer le, ld;
    if (!match(g, dw, t, mode, &ex, &d, &le, &ld) || taken[ex] || taken[dw]) continue;
    taken[ex] = taken[dw] = true;
    st = visit(ctx, dw, ex, &d, &le, &ld);
  }
  free(taken);
  return st;
}

typedef struct lower_ctx {
  tsl_graph *g;
  tsl_conv_lowering *cl;
  tsl_node_kernel *steps;
  const tsl_kernel **kernels;
} lower_ctx;

static tsl_status lower_visit(void *ctx, int dw, int ex, const tsl_expand_dw_layer *d, const tsl_conv2d_layer *le,
                              const tsl_conv2d_layer *ld) {
  lower_ctx *c = ctx;
  tsl_status st = lower_pair(c->g, c->cl, dw, ex, d, le, ld, &c->steps[dw], &c->kernels[dw]);
  if (st == TSL_OK) c->cl->fused_away[ex] = true;
  return st;
}

tsl_status tsl_lower_expand_dw(tsl_graph *g, tsl_conv_lowering *cl, tsl_node_kernel *steps, const tsl_kernel **kernels) {
  if (!g || !cl || !cl->fused_away || !steps || !kernels)
    return tsl_error(TSL_ERR_INVALID, "compile: expand/depthwise fusion: NULL argument");
  lower_ctx c = {g, cl, steps, kernels};
  return each_pair(g, cl->target, cl->fuse_expand_dw, lower_visit, &c);
}

typedef struct mark_ctx {
  bool *fused;
  tsl_expand_dw_layer *pairs;
} mark_ctx;

static tsl_status mark_visit(void *ctx, int dw, int ex, const tsl_expand_dw_layer *d, const tsl_conv2d_layer *le,
                             const tsl_conv2d_layer *ld) {
  (void)le;
  (void)ld;
  mark_ctx *c = ctx;
  c->fused[ex] = c->fused[dw] = true;
  if (c->pairs) c->pairs[dw] = *d;
  return TSL_OK;
}

tsl_status tsl_expand_dw_mark(const tsl_graph *g, const tsl_target *t, int mode, bool *fused,
                              tsl_expand_dw_layer *pairs) {
  if (!g || !t || !fused) return tsl_error(TSL_ERR_INVALID, "expand/depthwise fusion: NULL argument");
  memset(fused, 0, (size_t)g->n_nodes * sizeof *fused);
  mark_ctx c = {fused, pairs};
  return each_pair(g, t, mode, mark_visit, &c);
}
