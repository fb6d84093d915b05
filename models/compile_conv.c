/* Blocked convolutions through the tuner's dispatch, weights transformed once
 * (compile_conv.h). */
#include "models/compile_conv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ir/arena.h"
#include "models/passes/fuse_conv.h"
#include "models/compile.h"
#include "models/compile_expand_dw.h"
#include "models/passes/fuse_channel_scale.h"
#include "models/passes/layout.h"
#include "schedule/schedule.h"
#include "ops/conv2d/winograd_schedule.h"
#include "tessel/runtime.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/dispatch.h"
#include "tuner/runner.h"

struct tsl_conv_cache_entry {
  char *key;              /* the family key, or "weights:..." for a weight program */
  const tsl_kernel *kernel;
  tsl_conv2d_algo algo;   /* conv kernels */
  int ninputs;            /* the kernel's arguments: inputs then the output */
  int ndims[6];
  int64_t shapes[6][TSL_MAX_NDIM];
  char label[120];
  tsl_dispatch_info *info; /* conv kernels: what the dispatch chose (malloc'd) */
};

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static tsl_conv_cache_entry *cache_find(tsl_conv_lowering *cl, const char *key) {
  for (int i = 0; i < cl->ncache; i++)
    if (strcmp(cl->cache[i]->key, key) == 0) return cl->cache[i];
  return NULL;
}

/* A new zeroed entry for key. Entries do not move: lower_one holds its conv kernel's
 * entry while tsl_conv_lowering_weights adds the weight program's. */
static tsl_status cache_add(tsl_conv_lowering *cl, const char *key, tsl_conv_cache_entry **out) {
  *out = NULL;
  if (cl->ncache == cl->capcache) {
    int cap = cl->capcache ? 2 * cl->capcache : 32;
    tsl_conv_cache_entry **n = realloc(cl->cache, (size_t)cap * sizeof *n);
    if (!n) return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    cl->cache = n;
    cl->capcache = cap;
  }
  tsl_conv_cache_entry *e = calloc(1, sizeof *e);
  if (!e || !(e->key = strdup(key))) {
    free(e);
    return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  }
  cl->cache[cl->ncache++] = e;
  *out = e;
  return TSL_OK;
}

void tsl_conv_lowering_clear(tsl_conv_lowering *cl) {
  for (int i = 0; cl && i < cl->ncache; i++) {
    free(cl->cache[i]->key);
    free(cl->cache[i]->info);
    free(cl->cache[i]);
  }
  if (cl) free(cl->cache);
  if (cl) {
    cl->cache = NULL;
    cl->ncache = cl->capcache = 0;
    free(cl->intensity);
    cl->intensity = NULL;
    cl->nintensity = cl->capintensity = 0;
  }
}

tsl_status tsl_conv_node_layer(const tsl_graph *g, int node, tsl_conv2d_layer *d) {
  const tsl_node *n = &g->nodes[node];
  tsl_conv2d_params p;
  tsl_status st = tsl_node_conv2d_params(g, n, &p);
  if (st != TSL_OK) return st;
  if (n->n_inputs < 2 || n->inputs[0] < 0 || n->inputs[1] < 0)
    return tsl_error(TSL_ERR_INVALID, "compile: conv %s without data or weight", n->name);
  const tsl_value *x = &g->values[n->inputs[0]], *w = &g->values[n->inputs[1]], *y = &g->values[n->outputs[0]];
  /* plain data: a stem conv reading its NCHW input directly (models/passes/layout.h) */
  bool plain_in = x->layout.kind == TSL_LAYOUT_PLAIN;
  if (!w->constant || w->ndim != 4 || x->ndim != 4 || y->ndim != 4 ||
      (x->layout.kind != TSL_LAYOUT_NCHWC && !plain_in) || y->layout.kind != TSL_LAYOUT_NCHWC ||
      (!plain_in && x->layout.block != y->layout.block))
    return tsl_error(TSL_ERR_INVALID, "compile: conv %s is not a blocked conv with a constant OIHW weight", n->name);
  bool has_bias = n->n_inputs > 2 && n->inputs[2] >= 0;
  if (has_bias && (!g->values[n->inputs[2]].constant || tsl_tensor_numel(g->values[n->inputs[2]].constant) != w->shape[0]))
    return tsl_error(TSL_ERR_INVALID, "compile: conv %s has a bias that is not a constant of K values", n->name);
  memset(d, 0, sizeof *d);
  d->N = x->shape[0];
  d->C = x->shape[1];
  d->H = x->shape[2];
  d->W = x->shape[3];
  d->K = w->shape[0];
  d->R = w->shape[2];
  d->S = w->shape[3];
  d->stride_h = p.strides[0];
  d->stride_w = p.strides[1];
  d->pad_top = p.pads[0];
  d->pad_left = p.pads[1];
  d->pad_bottom = p.pads[2];
  d->pad_right = p.pads[3];
  d->dilation_h = p.dilations[0];
  d->dilation_w = p.dilations[1];
  d->groups = p.group;
  d->block = y->layout.block;
  d->data_block = plain_in ? 1 : 0;
  d->has_residual = n->n_inputs > 3 && n->inputs[3] >= 0;
  int act = (int)tsl_node_attr_int(n, TSL_ATTR_ACTIVATION, TSL_ACT_NONE);
  double lo = tsl_node_attr_float(n, TSL_ATTR_CLIP_MIN, -INFINITY), hi = tsl_node_attr_float(n, TSL_ATTR_CLIP_MAX, INFINITY);
  if (act == TSL_ACT_CLIP && lo == 0.0 && isinf(hi) && hi > 0) act = TSL_ACT_RELU;
  d->act = act;
  d->clip_min = 0.0;
  d->clip_max = 6.0;
  if (act == TSL_ACT_CLIP) {
    /* an absent bound is the largest float: the same on every finite value */
    d->clip_min = isfinite(lo) ? lo : -3.4028234663852886e38;
    d->clip_max = isfinite(hi) ? hi : 3.4028234663852886e38;
  }
  const tsl_activation *fn = NULL;
  double fattrs[TSL_ACTIVATION_MAX_ATTRS];
  if ((st = tsl_node_fused_function(g, n, &fn, fattrs)) != TSL_OK) return st;
  if (fn) {
    d->act = TSL_ACT_NONE;
    if ((st = tsl_epilogue_make(fn->onnx_op, fn->nattrs, fattrs, 0, &d->epilogue)) != TSL_OK) return st;
  }
  if (w->shape[1] * d->groups != d->C)
    return tsl_error(TSL_ERR_INVALID, "compile: conv %s: weight %lld channels x %lld groups != C %lld", n->name,
                     (long long)w->shape[1], (long long)d->groups, (long long)d->C);
  return tsl_conv2d_layer_check(d);
}

const tsl_kernel *tsl_conv_lowering_cached(tsl_conv_lowering *cl, const char *key, const tsl_dispatch_info **info) {
  tsl_conv_cache_entry *e = cache_find(cl, key);
  if (info) *info = e ? e->info : NULL;
  return e ? e->kernel : NULL;
}

tsl_status tsl_conv_lowering_cache(tsl_conv_lowering *cl, const char *key, const tsl_kernel *k,
                                   const tsl_dispatch_info *info) {
  tsl_conv_cache_entry *e = NULL;
  tsl_status st = cache_add(cl, key, &e);
  if (st == TSL_OK) e->kernel = k;
  if (st == TSL_OK && info && !(e->info = malloc(sizeof *e->info)))
    st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  if (st == TSL_OK && info) *e->info = *info;
  return st;
}

/* Compiles program p with schedule s as `name` into the lowering's module. */
static tsl_status build(tsl_conv_lowering *cl, const tsl_schedule *s, const char *name, const tsl_kernel **out) {
  tsl_status st = tsl_build(s, name, cl->jit, cl->module, NULL, NULL);
  return st == TSL_OK ? tsl_module_get_kernel(cl->module, name, out) : st;
}

struct tsl_kernel_intensity {
  const tsl_kernel *kernel;
  double flops_per_byte;
};

/* tsl_program_flops of p over the bytes of its outputs; -1 when they are empty. */
static double program_flops_per_byte(const tsl_te_program *p) {
  double bytes = 0.0;
  for (int i = 0; i < p->noutputs; i++) {
    const tsl_buffer *b = p->outputs[i]->buf;
    bytes += (double)tsl_buffer_numel(b) * (double)tsl_type_bytes(b->dtype);
  }
  return bytes > 0.0 ? tsl_program_flops(p) / bytes : -1.0;
}

static tsl_status note_intensity(tsl_conv_lowering *cl, const tsl_kernel *k, double flops_per_byte) {
  for (int i = 0; i < cl->nintensity; i++)
    if (cl->intensity[i].kernel == k) return TSL_OK;
  if (cl->nintensity == cl->capintensity) {
    int cap = cl->capintensity ? 2 * cl->capintensity : 32;
    struct tsl_kernel_intensity *n = realloc(cl->intensity, (size_t)cap * sizeof *n);
    if (!n) return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    cl->intensity = n;
    cl->capintensity = cap;
  }
  cl->intensity[cl->nintensity++] = (struct tsl_kernel_intensity){k, flops_per_byte};
  return TSL_OK;
}

double tsl_conv_lowering_flops_per_byte(const tsl_conv_lowering *cl, const tsl_kernel *k) {
  for (int i = 0; cl && k && i < cl->nintensity; i++)
    if (cl->intensity[i].kernel == k) return cl->intensity[i].flops_per_byte;
  return -1.0;
}

tsl_status tsl_conv_lowering_build(tsl_conv_lowering *cl, const tsl_schedule *s, const char *name,
                                   const tsl_kernel **out) {
  tsl_status st = cl->build_kernel ? cl->build_kernel(cl->build_ctx, s, name, out) : build(cl, s, name, out);
  if (st == TSL_OK && s && s->program) st = note_intensity(cl, *out, program_flops_per_byte(s->program));
  return st;
}

/* The channel-scaled GEMM 1x1 program of layer d (has_channel_scale) in *prog and its
 * schedule in *s (replacing the dispatched one): the dispatched config when the dispatch
 * chose gemm1x1 for the unscaled layer (its records and knobs hold: the same template
 * and space), else the template's default. */
static tsl_status scaled_program(const tsl_conv_lowering *cl, const tsl_conv2d_layer *d, tsl_conv2d_algo chosen,
                                 tsl_dispatch_info *info, tsl_te_program **prog, tsl_schedule **s) {
  tsl_te_program *p = NULL;
  tsl_status st = tsl_conv2d_algo_instantiate(d, TSL_CONV2D_GEMM_1X1, cl->target, &p, NULL);
  const tsl_template *tpl = st == TSL_OK ? tsl_conv2d_algo_template(p) : NULL;
  if (st == TSL_OK && !tpl) st = tsl_error(TSL_ERR_NOT_FOUND, "compile: no template schedules %s", p->name);
  tsl_config_space space;
  tsl_config c;
  if (st == TSL_OK) st = tpl->space(p, cl->target, &space);
  if (st == TSL_OK && chosen == TSL_CONV2D_GEMM_1X1) c = info->record.config;
  else if (st == TSL_OK) st = tpl->default_config(p, cl->target, &space, &c);
  tsl_schedule *ns = NULL;
  if (st == TSL_OK) st = tpl->apply(p, cl->target, &space, &c, &ns);
  if (st != TSL_OK) return st;
  tsl_schedule_free(*s);
  *s = ns;
  *prog = p;
  info->tuned = info->tuned && chosen == TSL_CONV2D_GEMM_1X1;
  snprintf(info->template_name, sizeof info->template_name, "%s", tpl->name);
  return TSL_OK;
}

void tsl_conv_lowering_count(tsl_conv_lowering *cl, const tsl_dispatch_info *info, const char *key) {
  cl->kernels++;
  if (info->tuned) cl->tuned++;
  if (info->tuned && tsl_record_is_static(&info->record) && !cl->tuned_static++)
    snprintf(cl->static_model, sizeof cl->static_model, "%s", info->record.cost_model);
  if (!info->tuned && cl->records) {
    if (!cl->missed) snprintf(cl->missed_key, sizeof cl->missed_key, "%s", key);
    cl->missed++;
  }
}

/* The conv kernel of family workload w (dispatched and built once per key); with
 * `scaled` (the layer with has_channel_scale), the channel-scaled GEMM 1x1 kernel of it
 * (scaled_program). */
static tsl_status conv_kernel(tsl_conv_lowering *cl, const tsl_workload *w, const tsl_conv2d_layer *scaled,
                              tsl_conv_cache_entry **out) {
  char *wkey = NULL, *key = NULL;
  tsl_status st = tsl_workload_key_of(w, &wkey);
  if (st != TSL_OK) return st;
  size_t klen = strlen(wkey) + 32;
  if ((key = malloc(klen))) snprintf(key, klen, "%s%s", wkey, scaled ? "+channel_scale" : "");
  free(wkey);
  if (!key) return tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  if ((*out = cache_find(cl, key))) {
    free(key);
    return TSL_OK;
  }
  double t0 = tsl_time_now();
  tsl_arena *arena = cl->kernel_arena ? cl->kernel_arena : tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *prog = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  /* a channel-scaled layer runs the GEMM 1x1 algorithm only: its best record of that
   * algorithm (the others' records cannot be used for it) */
  st = scaled ? tsl_dispatch_schedule_conv_algo(cl->records, cl->target, w, TSL_CONV2D_GEMM_1X1, cl->warn, &prog, &s,
                                                &info)
              : tsl_dispatch_schedule_any(cl->records, cl->target, w, cl->warn, &prog, &s, &info);
  tsl_conv2d_algo algo = TSL_CONV2D_DIRECT;
  if (st == TSL_OK && !tsl_conv2d_algo_of_op(info.op_workload.op, &algo))
    st = tsl_error(TSL_ERR_INVALID, "compile: the dispatch chose %s, no conv algorithm", info.op_workload.op);
  if (st == TSL_OK && scaled) {
    st = scaled_program(cl, scaled, algo, &info, &prog, &s);
    algo = TSL_CONV2D_GEMM_1X1;
  }
  if (st == TSL_OK && prog->noutputs != 1)
    st = tsl_error(TSL_ERR_INVALID, "compile: conv program %s has %d outputs", info.op_workload.op, prog->noutputs);
  if (st == TSL_OK && prog->ninputs + 1 > 6)
    st = tsl_error(TSL_ERR_INVALID, "compile: conv program %s has %d inputs", info.op_workload.op, prog->ninputs);
  char name[160];
  snprintf(name, sizeof name, "conv_%s%s_%lldx%lld__%08llx", tsl_conv2d_algo_name(algo), scaled ? "_scale" : "",
           (long long)w->shapes[1][2],
           (long long)w->shapes[1][3], (unsigned long long)(hash_str(key) & 0xffffffffu));
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_conv_lowering_build(cl, s, name, &k);
  tsl_conv_cache_entry *e = NULL;
  if (st == TSL_OK) st = cache_add(cl, key, &e);
  if (st == TSL_OK) {
    e->kernel = k;
    e->algo = algo;
    e->ninputs = prog->ninputs;
    for (int i = 0; i <= prog->ninputs; i++) {
      const tsl_buffer *b = i < prog->ninputs ? prog->inputs[i]->buf : prog->outputs[0]->buf;
      e->ndims[i] = b->ndim;
      memcpy(e->shapes[i], b->shape, sizeof(int64_t) * (size_t)b->ndim);
    }
    snprintf(e->label, sizeof e->label, "%.80s%s", info.template_name, info.tuned ? " (tuned)" : "");
    if ((e->info = malloc(sizeof *e->info))) *e->info = info;
    else st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
  }
  if (st == TSL_OK) tsl_conv_lowering_count(cl, &info, key);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  if (arena != cl->kernel_arena) tsl_arena_free(arena);
  free(key);
  cl->build_seconds += tsl_time_now() - t0;
  *out = e;
  return st;
}

tsl_status tsl_conv_lowering_weights(tsl_conv_lowering *cl, const tsl_conv2d_layer *d, tsl_conv2d_algo a,
                                     const tsl_tensor *w, tsl_tensor **out) {
  double t0 = tsl_time_now();
  *out = NULL;
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *conv = NULL, *wp = NULL;
  tsl_status st = tsl_conv2d_algo_instantiate(d, a, NULL, &conv, &wp);
  if (st == TSL_OK && (!wp || wp->ninputs != 1 || wp->noutputs != 1))
    st = tsl_error(TSL_ERR_INVALID, "compile: algorithm %s has no one-in one-out weight program", tsl_conv2d_algo_name(a));
  float *oihw = NULL;
  tsl_tensor *t = NULL;
  if (st == TSL_OK) {
    const tsl_buffer *in = wp->inputs[0]->buf, *o = wp->outputs[0]->buf;
    /* the key: the weight program's name and shapes */
    char key[256];
    size_t len = (size_t)snprintf(key, sizeof key, "weights:%s:%s", tsl_conv2d_algo_name(a), wp->name);
    for (int i = 0; i < in->ndim && len < sizeof key; i++)
      len += (size_t)snprintf(key + len, sizeof key - len, "%s%lld", i ? "x" : ":", (long long)in->shape[i]);
    for (int i = 0; i < o->ndim && len < sizeof key; i++)
      len += (size_t)snprintf(key + len, sizeof key - len, "%s%lld", i ? "x" : "->", (long long)o->shape[i]);
    /* and its int parameters (the shapes do not state a block-diagonal weight's groups) */
    for (int i = 0; i < wp->nparams && len < sizeof key; i++)
      if (wp->params[i].kind == TSL_DSL_PARAM_INT)
        len += (size_t)snprintf(key + len, sizeof key - len, ",%s=%lld", wp->params[i].name,
                                (long long)wp->params[i].i);
    tsl_conv_cache_entry *e = cache_find(cl, key);
    if (!e) {
      tsl_schedule *s = NULL;
      bool wino = a == TSL_CONV2D_WINOGRAD_F2 || a == TSL_CONV2D_WINOGRAD_F4 || a == TSL_CONV2D_WINOGRAD_F6;
      st = wino ? tsl_winograd_weight_schedule(wp, cl->target, &s) : tsl_schedule_create(wp, &s);
      char name[96];
      snprintf(name, sizeof name, "weights_%s__%08llx", tsl_conv2d_algo_name(a),
               (unsigned long long)(hash_str(key) & 0xffffffffu));
      const tsl_kernel *k = NULL;
      if (st == TSL_OK) st = build(cl, s, name, &k);
      tsl_schedule_free(s);
      if (st == TSL_OK) st = cache_add(cl, key, &e);
      if (st == TSL_OK) e->kernel = k;
    }
    /* OIHW, zero-padded to the channel counts the program reads */
    int64_t K = in->shape[0], CG = in->shape[1], R = in->shape[2], S = in->shape[3];
    int64_t wK = w->shape[0], wC = w->shape[1];
    if (st == TSL_OK && (in->ndim != 4 || K < wK || CG < wC || R != w->shape[2] || S != w->shape[3]))
      st = tsl_error(TSL_ERR_INVALID, "compile: weight program input does not hold the OIHW weight");
    /* kernels assume the runtime's 64-byte aligned tensors */
    size_t bytes = ((size_t)(K * CG * R * S) * sizeof *oihw + 63) / 64 * 64;
    if (st == TSL_OK && !(oihw = aligned_alloc(64, bytes))) st = tsl_error(TSL_ERR_NOMEM, "compile: out of memory");
    if (oihw) memset(oihw, 0, bytes);
    /* compact f32 weights (what the importer and the passes make) are read directly;
     * anything else element by element through the dtype-generic accessor */
    const float *wf = w->dtype.code == TSL_DT_FLOAT && w->dtype.bits == 32 && tsl_tensor_is_contiguous(w)
                          ? (const float *)w->data
                          : NULL;
    for (int64_t k = 0; st == TSL_OK && k < wK; k++)
      for (int64_t c = 0; c < wC; c++) {
        float *dst = &oihw[(k * CG + c) * R * S];
        int64_t src = (k * wC + c) * R * S;
        if (wf) memcpy(dst, wf + src, (size_t)(R * S) * sizeof *dst);
        else
          for (int64_t i = 0; i < R * S; i++) dst[i] = (float)tsl_tensor_get_f64(w, src + i);
      }
    if (st == TSL_OK) st = tsl_tensor_new(TSL_DTYPE_F32, o->ndim, o->shape, &t);
    if (st == TSL_OK) {
      void *ptrs[2] = {oihw, t->data};
      void *args[2] = {&ptrs[0], &ptrs[1]};
      st = tsl_kernel_call(e->kernel, args, 2);
    }
  }
  free(oihw);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  if (st != TSL_OK) tsl_tensor_free(t);
  else *out = t;
  cl->weight_seconds += tsl_time_now() - t0;
  return st;
}

/* The view [A, CB, B, X, Y] of transformed weight wt (input channels blocked by x) in
 * which input channel cb*x + c sits at axes 1 and 3 (conv_weight_channel_scale,
 * ops/nn/layout.c): OIHW[x]i[y]o (direct: 6-D; gemm1x1: 4-D, R = S = 1) and the
 * layouts with the input channel unblocked on axis 1 (im2col, grouped with groups 1:
 * 5-D [K/y, C, R, S, y]; when x does not divide C, as [K/y, 1, 1, C, R*S*y]). */
static tsl_status scale_view(const tsl_tensor *wt, int64_t x, int64_t view[5]) {
  const int64_t *s = wt->shape;
  if (wt->ndim == 6 || wt->ndim == 4) {
    int64_t rs = wt->ndim == 6 ? s[2] * s[3] : 1;
    int64_t v[5] = {s[0], s[1], rs, s[wt->ndim - 2], s[wt->ndim - 1]};
    memcpy(view, v, sizeof v);
  } else if (wt->ndim == 5 && s[1] % x == 0) {
    int64_t v[5] = {s[0], s[1] / x, 1, x, s[2] * s[3] * s[4]};
    memcpy(view, v, sizeof v);
  } else if (wt->ndim == 5) {
    /* C not a multiple of x: one block of all C channels; the scale's storage NCHW[x]c of
     * one image holds channel c at flat index c, so the step reads its first C values */
    int64_t v[5] = {s[0], 1, 1, s[1], s[2] * s[3] * s[4]};
    memcpy(view, v, sizeof v);
    return TSL_OK;
  } else {
    return tsl_error(TSL_ERR_UNSUPPORTED, "the conv algorithm's weight layout has no per-input-channel axis the "
                                          "channel scale can read (%d-D)", wt->ndim);
  }
  if (view[3] != x)
    return tsl_error(TSL_ERR_INVALID, "the transformed weight blocks its input channels by %lld, the data by %lld",
                     (long long)view[3], (long long)x);
  return TSL_OK;
}

/* The one conv algorithm (tsl_conv2d_algo) conv node n of family layer fam compiles to,
 * -1 when any: a channel scale (fuse_channel_scale.h) is read inside the GEMM 1x1 kernel
 * where that algorithm applies (elsewhere a step scales the weight of any algorithm). */
static int compiled_only_algo(const tsl_node *n, const tsl_conv2d_layer *fam) {
  bool in_kernel = tsl_conv_channel_scale(n) >= 0 && tsl_conv2d_algo_applies(fam, TSL_CONV2D_GEMM_1X1, NULL);
  return in_kernel ? (int)TSL_CONV2D_GEMM_1X1 : -1;
}

static tsl_status lower_one(tsl_graph *g, int node, tsl_conv_lowering *cl, tsl_node_kernel *step,
                            tsl_node_kernel *pre, const tsl_kernel **kernel) {
  tsl_conv2d_layer layer, fam;
  memset(&fam, 0, sizeof fam);
  tsl_workload w;
  tsl_status st = tsl_conv_node_layer(g, node, &layer);
  if (st == TSL_OK) st = tsl_conv2d_family_workload(&layer, &w);
  /* the layer as its family states it: the programs are instantiated from it */
  if (st == TSL_OK) st = tsl_conv2d_layer_of_workload(&w, &fam);
  /* a channel scale (fuse_channel_scale.h): inside the GEMM 1x1 kernel where it applies,
   * else (one image) a step before the conv scaling its transformed weight */
  int scale = tsl_conv_channel_scale(&g->nodes[node]);
  tsl_conv2d_layer sfam = fam;
  sfam.has_channel_scale = true;
  bool in_kernel = st == TSL_OK && compiled_only_algo(&g->nodes[node], &fam) == (int)TSL_CONV2D_GEMM_1X1;
  if (st == TSL_OK && scale >= 0 && !in_kernel && (fam.N != 1 || !pre))
    st = tsl_error(TSL_ERR_UNSUPPORTED, "a channel scale of %lld images outside the gemm1x1 algorithm%s",
                   (long long)fam.N, pre ? "" : " (no room for its weight step)");
  tsl_conv_cache_entry *e = NULL;
  if (st == TSL_OK) st = conv_kernel(cl, &w, in_kernel ? &sfam : NULL, &e);
  tsl_tensor *wt = NULL, *bias = NULL;
  const tsl_node *n = &g->nodes[node];
  if (st == TSL_OK) st = tsl_conv_lowering_weights(cl, &fam, e->algo, g->values[n->inputs[1]].constant, &wt);
  if (st == TSL_OK) {
    /* the bias: K values zero-padded to the shape the kernel reads */
    st = tsl_tensor_new(TSL_DTYPE_F32, e->ndims[2], e->shapes[2], &bias);
    const tsl_tensor *b = n->n_inputs > 2 && n->inputs[2] >= 0 ? g->values[n->inputs[2]].constant : NULL;
    if (st == TSL_OK && b && tsl_tensor_numel(bias) < layer.K)
      st = tsl_error(TSL_ERR_INVALID, "compile: conv %s: the bias does not fit the kernel's", n->name);
    for (int64_t k = 0; st == TSL_OK && b && k < layer.K; k++) ((float *)bias->data)[k] = (float)tsl_tensor_get_f64(b, k);
  }
  int wid = -1, bid = -1, wread; /* wread: the weight the conv kernel reads */
  int64_t view[5];
  if (st == TSL_OK && scale >= 0 && !in_kernel) st = scale_view(wt, fam.block, view);
  if (st == TSL_OK) {
    char name[300];
    snprintf(name, sizeof name, "%s.%s", g->values[n->inputs[1]].name, tsl_conv2d_algo_name(e->algo));
    st = tsl_graph_add_constant(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, wt, &wid);
    wt = NULL;
  }
  if (st == TSL_OK) {
    st = tsl_graph_add_constant(g, NULL, bias, &bid);
    bias = NULL;
  }
  tsl_tensor_free(wt);
  tsl_tensor_free(bias);
  wread = wid;
  if (st == TSL_OK && scale >= 0 && !in_kernel) {
    /* the scaled weight: a value the step before the conv writes */
    char name[300];
    snprintf(name, sizeof name, "%s.scaled", g->values[wid].name);
    st = tsl_graph_add_value(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, &wread);
    if (st == TSL_OK) {
      tsl_value *v = &g->values[wread];
      v->dtype = TSL_DTYPE_F32;
      v->ndim = g->values[wid].ndim;
      memcpy(v->shape, g->values[wid].shape, sizeof v->shape);
      v->layout = (tsl_layout){TSL_LAYOUT_PLAIN, 0};
      st = tsl_node_kernel_weight_scale(g, wid, view, scale, wread, pre);
    }
  }
  if (st == TSL_OK) {
    n = &g->nodes[node];
    int ins[5] = {n->inputs[0], wid, bid, layer.has_residual ? n->inputs[3] : -1, scale};
    st = tsl_graph_set_node_inputs(g, node, scale >= 0 ? 5 : layer.has_residual ? 4 : 3, ins);
  }
  if (st != TSL_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st, "compile: node %s (Conv): %s", g->nodes[node].name, why);
  }
  n = &g->nodes[node];
  memset(step, 0, sizeof *step);
  step->kind = TSL_NODE_KERNEL;
  step->ninputs = e->ninputs;
  step->nargs = e->ninputs + 1;
  for (int a = 0; a < step->nargs; a++) {
    /* the channel-scaled kernel reads the scale last */
    step->values[a] = a == 1                              ? wread
                      : in_kernel && a == e->ninputs - 1 ? scale
                      : a < e->ninputs                   ? n->inputs[a]
                                                         : n->outputs[0];
    step->ndims[a] = e->ndims[a];
    memcpy(step->shapes[a], e->shapes[a], sizeof e->shapes[a]);
  }
  snprintf(step->label, sizeof step->label, "%.90s", e->label);
  if (cl->node_info) cl->node_info[node] = e->info;
  *kernel = e->kernel;
  cl->layers++;
  return TSL_OK;
}

tsl_status tsl_lower_convs(tsl_graph *g, tsl_conv_lowering *cl, tsl_node_kernel *steps, tsl_node_kernel *pre_steps,
                           const tsl_kernel **kernels) {
  if (!g || !cl || !steps || !kernels) return tsl_error(TSL_ERR_INVALID, "compile: NULL argument");
  int n0 = g->n_nodes;
  if (cl->fused_away) {
    tsl_status st = tsl_lower_expand_dw(g, cl, steps, kernels);
    if (st != TSL_OK) return st;
  }
  for (int i = 0; i < n0; i++) {
    const tsl_node *n = &g->nodes[i];
    if (n->op != TSL_OP_CONV || !tsl_node_attr_int(n, TSL_ATTR_BLOCKED_WEIGHTS, 0)) continue;
    if (kernels[i] || (cl->fused_away && cl->fused_away[i])) continue; /* fused */
    tsl_status st = lower_one(g, i, cl, &steps[i], pre_steps ? &pre_steps[i] : NULL, &kernels[i]);
    if (st != TSL_OK) return st;
  }
  return TSL_OK;
}

tsl_status tsl_graph_conv_layers(const tsl_graph *g, const char *target, tsl_conv_layer *out, int max, int *n) {
  if (!g || !n || (max > 0 && !out)) return tsl_error(TSL_ERR_INVALID, "conv layers: NULL argument");
  *n = 0;
  tsl_target t;
  tsl_status st = tsl_target_parse(target ? target : "host", &t);
  if (st != TSL_OK) return st;
  tsl_graph *work = NULL;
  if ((st = tsl_graph_clone(g, &work)) != TSL_OK) return st;
  /* the compiler's block and passes (models/compile.c) */
  int block = tsl_target_f32_lanes(&t);
  st = tsl_graph_infer_shapes(work);
  if (st == TSL_OK) st = tsl_graph_optimize(work, block, NULL);
  char **keys = calloc((size_t)(work->n_nodes ? work->n_nodes : 1), sizeof *keys);
  int *only = calloc((size_t)(work->n_nodes ? work->n_nodes : 1), sizeof *only), nk = 0;
  bool *fused = calloc((size_t)(work->n_nodes ? work->n_nodes : 1), sizeof *fused);
  tsl_expand_dw_layer *pairs = calloc((size_t)(work->n_nodes ? work->n_nodes : 1), sizeof *pairs);
  if (st == TSL_OK && (!keys || !only || !fused || !pairs)) st = tsl_error(TSL_ERR_NOMEM, "conv layers: out of memory");
  /* the pairs the compiler fuses (compile_expand_dw.h, default options): one fused
   * workload each at the depthwise node (pairs[i].N > 0), their convs no conv layers */
  if (st == TSL_OK) st = tsl_expand_dw_mark(work, &t, tsl_compile_fuse_expand_dw_mode(0), fused, pairs);
  for (int i = 0; st == TSL_OK && i < work->n_nodes; i++) {
    const tsl_node *nd = &work->nodes[i];
    if (nd->op != TSL_OP_CONV || !tsl_node_attr_int(nd, TSL_ATTR_BLOCKED_WEIGHTS, 0)) continue;
    tsl_conv2d_layer d, fam;
    tsl_workload w;
    char *key = NULL;
    bool pair = fused[i] && pairs[i].N > 0;
    if (fused[i] && !pair) continue; /* the expand of a pair */
    st = pair ? tsl_expand_dw_workload(&pairs[i], &w) : TSL_OK;
    if (st == TSL_OK) st = tsl_conv_node_layer(work, i, &d);
    if (st == TSL_OK && !pair) st = tsl_conv2d_family_workload(&d, &w);
    if (st == TSL_OK && !pair) st = tsl_conv2d_layer_of_workload(&w, &fam); /* as lower_one */
    if (st == TSL_OK) st = tsl_workload_key_of(&w, &key);
    if (st != TSL_OK) break;
    int algo = pair ? -1 : compiled_only_algo(nd, &fam), k = 0;
    while (k < nk && (strcmp(keys[k], key) != 0 || only[k] != algo)) k++;
    if (k < nk) {
      free(key);
      if (k < max) out[k].count++;
      continue;
    }
    only[nk] = algo;
    keys[nk++] = key;
    if (k < max) {
      memset(&out[k], 0, sizeof out[k]);
      out[k].workload = w;
      tsl_workload_fix(&out[k].workload);
      out[k].desc = d;
      snprintf(out[k].node, sizeof out[k].node, "%s", nd->name ? nd->name : "");
      out[k].count = 1;
      out[k].only_algo = algo;
      out[k].fused = pair;
      if (pair) out[k].fused_desc = pairs[i];
    }
  }
  for (int k = 0; keys && k < nk; k++) free(keys[k]);
  free(keys);
  free(only);
  free(fused);
  free(pairs);
  tsl_graph_free(work);
  if (st == TSL_OK) *n = nk;
  return st;
}

void tsl_conv_lowering_note_static(const tsl_conv_lowering *cl, const char *target, FILE *f) {
  if (!cl || !f || cl->tuned_static <= 0) return;
  fprintf(f,
          "tessel: note: %d of %d distinct conv workloads on %s use schedules picked by the static cost model (%s), "
          "not measured (docs/cost_static.md)\n",
          cl->tuned_static, cl->kernels, target ? target : "?", cl->static_model[0] ? cl->static_model : "?");
}
