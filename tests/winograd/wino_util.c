/* Helpers of the winograd suite: see wino_util.h. */
#include "winograd/wino_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "ref/ref_conv64.h"
#include "ref/ref_ops.h"
#include "runtime/module.h"
#include "tessel/runtime.h"
#include "tessel/tensor.h"

/* act 2 clips to [-0.25, 0.25]: random outputs fall on both sides */
static const double clip_lo = -0.25, clip_hi = 0.25;

int wino_r(const wino_case *c) { return c->r > 0 ? c->r : 3; }

const char *wino_case_str(const wino_case *c, char *buf, size_t n) {
  char f[32];
  if (wino_r(c) == 3) snprintf(f, sizeof f, "%d", c->m);
  else snprintf(f, sizeof f, "%d,%dx%d", c->m, wino_r(c), wino_r(c));
  snprintf(buf, n, "F(%s) N%lld C%lld %lldx%lld K%lld pad %lld,%lld,%lld,%lld act %d%s lanes %lld", f,
           (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->K, (long long)c->pt,
           (long long)c->pl, (long long)c->pb, (long long)c->pr, c->act, c->residual ? " +residual" : "",
           (long long)c->lanes);
  return buf;
}

static ref_conv2d_params params_of(const wino_case *c) {
  int64_t r = wino_r(c);
  ref_conv2d_params p = {c->N, c->C, c->H, c->W, c->K, r, r, 1, 1, c->pt, c->pl, c->pb, c->pr, 1, 1, 1};
  return p;
}

void wino_data_make(const wino_case *c, double scale, uint64_t seed, wino_data *d) {
  ref_conv2d_params p = params_of(c);
  d->data_pad_fill = 0.0f;
  d->OH = ref_conv2d_out_h(&p);
  d->OW = ref_conv2d_out_w(&p);
  int64_t nin = c->N * c->C * c->H * c->W, nw = c->K * c->C * wino_r(c) * wino_r(c), nout = c->N * c->K * d->OH * d->OW;
  d->in = malloc(sizeof(float) * (size_t)nin);
  d->w = malloc(sizeof(float) * (size_t)nw);
  d->bias = malloc(sizeof(float) * (size_t)c->K);
  d->res = c->residual ? malloc(sizeof(float) * (size_t)nout) : NULL;
  d->ref = malloc(sizeof(double) * (size_t)nout);
  ref_fill_uniform(d->in, nin, seed, (float)-scale, (float)scale);
  ref_fill_uniform(d->w, nw, seed + 1, -1.0f, 1.0f);
  ref_fill_uniform(d->bias, c->K, seed + 2, -1.0f, 1.0f);
  if (d->res) ref_fill_uniform(d->res, nout, seed + 3, -1.0f, 1.0f);
  ref_conv2d_nchw_f64(&p, d->in, d->w, d->bias, d->ref);
  d->ref_scale = 0.0;
  for (int64_t i = 0; i < nout; i++) {
    double y = d->ref[i] + (d->res ? (double)d->res[i] : 0.0);
    if (fabs(y) > d->ref_scale) d->ref_scale = fabs(y);
    if (c->act == 1) y = y > 0.0 ? y : 0.0;
    if (c->act == 2) y = y < clip_lo ? clip_lo : y > clip_hi ? clip_hi : y;
    d->ref[i] = y;
  }
}

void wino_data_free(wino_data *d) {
  free(d->in);
  free(d->w);
  free(d->bias);
  free(d->res);
  free(d->ref);
  memset(d, 0, sizeof *d);
}

/* NCHW (C channels) -> NCHW[x]c with CB = ceil(C / X) blocks, `fill` in the padding. */
static void pack(const float *src, int64_t N, int64_t C, int64_t HW, int64_t X, float fill, float *dst) {
  int64_t CB = (C + X - 1) / X;
  for (int64_t i = 0; i < N * CB * HW * X; i++) dst[i] = fill;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < HW; i++) dst[((n * CB + c / X) * HW + i) * X + c % X] = src[(n * C + c) * HW + i];
}

static tsl_tensor *tensor(int ndim, const int64_t *shape) {
  tsl_tensor *t = NULL;
  if (tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t) != TSL_OK) return NULL;
  return t;
}

static bool fail(const wino_case *c, const char *what) {
  char b[160];
  printf("\n  %s: %s: %s\n", wino_case_str(c, b, sizeof b), what, tsl_last_error());
  return false;
}

static int64_t lanes_for(tsl_jit *jit, const wino_case *c) {
  const tsl_target *tg = tsl_jit_target(jit);
  return c->lanes > 0 ? c->lanes : tsl_target_f32_lanes(tg);
}

bool wino_kernel_build(tsl_jit *jit, const wino_case *c, const tsl_winograd_transform *T,
                       const tsl_winograd_knobs *knobs, wino_kernel *wk) {
  memset(wk, 0, sizeof *wk);
  wk->c = *c;
  wk->X = lanes_for(jit, c);
  tsl_arena *arena = tsl_arena_new();
  wk->arena = arena;
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_conv2d_layer w = {.N = c->N, .C = c->C, .H = c->H, .W = c->W, .K = c->K, .R = wino_r(c), .S = wino_r(c),
                         .stride_h = 1, .stride_w = 1, .pad_top = c->pt, .pad_left = c->pl,
                         .pad_bottom = c->pb, .pad_right = c->pr, .dilation_h = 1, .dilation_w = 1,
                         .groups = 1, .block = wk->X, .act = c->act, .clip_min = clip_lo,
                         .clip_max = clip_hi, .has_residual = c->residual};
  tsl_schedule *s = NULL;
  bool ok = tsl_winograd_instantiate(&w, c->m, T, &wk->conv, &wk->wt) == TSL_OK || fail(c, "instantiate");
  if (ok && tsl_winograd_schedule(wk->conv, tsl_jit_target(jit), knobs, &s) != TSL_OK) ok = fail(c, "schedule");
  if (ok && tsl_module_new(&wk->mod) != TSL_OK) ok = fail(c, "module");
  if (ok && tsl_build(s, "winograd_test", jit, wk->mod, NULL, NULL) != TSL_OK) ok = fail(c, "build");
  if (ok && tsl_module_get_kernel(wk->mod, "winograd_test", &wk->k) != TSL_OK) ok = fail(c, "kernel");
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  if (!ok) wk->k = NULL;
  return ok;
}

void wino_kernel_free(wino_kernel *wk) {
  tsl_module_free(wk->mod);
  if (wk->arena) tsl_arena_free(wk->arena);
  memset(wk, 0, sizeof *wk);
}

wino_result wino_kernel_run(wino_kernel *wk, const wino_data *d, int threads, float **out) {
  wino_result r = {false, INFINITY, INFINITY, false};
  if (out) *out = NULL;
  const wino_case *c = &wk->c;
  if (!wk->k) return r;
  tsl_arena *prev = tsl_arena_set_current(wk->arena);
  int64_t X = wk->X, CB = (c->C + X - 1) / X, KB = (c->K + X - 1) / X, kr = wino_r(c), a = c->m + kr - 1, OH = d->OH, OW = d->OW;
  const int64_t sw[4] = {c->K, c->C, kr, kr}, su[5] = {a, a, KB, CB * X, X}, sd[5] = {c->N, CB, c->H, c->W, X},
                sb[2] = {KB, X}, so[5] = {c->N, KB, OH, OW, X};
  tsl_tensor *tw = tensor(4, sw), *tu = tensor(5, su), *td = tensor(5, sd), *tb = tensor(2, sb), *to = tensor(5, so);
  tsl_tensor *tr = c->residual ? tensor(5, so) : NULL;
  bool ok = (tw && tu && td && tb && to && (tr || !c->residual)) || fail(c, "tensors");
  if (ok) {
    memcpy(tw->data, d->w, sizeof(float) * (size_t)(c->K * c->C * kr * kr));
    /* the kernel transform in float64 (the interpreter), rounded once to float32 */
    ok = tsl_te_interpret(wk->wt, (const tsl_tensor *const *)&tw, &tu) == TSL_OK || fail(c, "kernel transform");
  }
  if (ok) {
    pack(d->in, c->N, c->C, c->H * c->W, X, d->data_pad_fill, td->data);
    memset(tb->data, 0, tsl_tensor_nbytes(tb));
    memcpy(tb->data, d->bias, sizeof(float) * (size_t)c->K);
    if (tr) pack(d->res, c->N, c->K, OH * OW, X, 0.0f, tr->data);
    float *o = to->data;
    for (int64_t i = 0; i < tsl_tensor_numel(to); i++) o[i] = NAN; /* every element must be written */
    tsl_tensor *args[5] = {td, tu, tb, tr ? tr : to, to};
    int before = tsl_get_num_threads();
    if (tsl_set_num_threads(threads) != TSL_OK) ok = fail(c, "threads");
    if (ok && tsl_kernel_call_tensors(wk->k, args, tr ? 5 : 4) != TSL_OK) ok = fail(c, "run");
    tsl_set_num_threads(before);
  }
  if (ok) {
    int64_t nout = c->N * c->K * OH * OW;
    float *got = malloc(sizeof(float) * (size_t)nout);
    const float *o = to->data;
    r.pad_channels_zero = true;
    for (int64_t n = 0; n < c->N; n++)
      for (int64_t k = 0; k < KB * X; k++)
        for (int64_t i = 0; i < OH * OW; i++) {
          float v = o[((n * KB + k / X) * OH * OW + i) * X + k % X];
          if (k < c->K) got[(n * c->K + k) * OH * OW + i] = v;
          else if (v != 0.0f) r.pad_channels_zero = false;
        }
    double worst = 0.0;
    for (int64_t i = 0; i < nout; i++) {
      double e = isfinite(got[i]) ? fabs((double)got[i] - d->ref[i]) : INFINITY;
      if (!(e <= worst)) worst = e;
    }
    r.max_err = worst / (d->ref_scale > 0.0 ? d->ref_scale : 1.0);
    r.rms_err = ref_rms_rel_error_f64(got, d->ref, nout);
    r.ok = true;
    free(got);
    if (out) {
      *out = malloc(tsl_tensor_nbytes(to));
      memcpy(*out, to->data, tsl_tensor_nbytes(to));
    }
  }
  tsl_tensor_free(tw);
  tsl_tensor_free(tu);
  tsl_tensor_free(td);
  tsl_tensor_free(tb);
  tsl_tensor_free(tr);
  tsl_tensor_free(to);
  tsl_arena_set_current(prev);
  return r;
}

wino_result wino_run(tsl_jit *jit, const wino_case *c, const wino_data *d, const tsl_winograd_transform *T,
                     const tsl_winograd_knobs *knobs, int threads, float **out) {
  wino_kernel wk;
  wino_result r = {false, INFINITY, INFINITY, false};
  if (out) *out = NULL;
  if (wino_kernel_build(jit, c, T, knobs, &wk)) r = wino_kernel_run(&wk, d, threads, out);
  wino_kernel_free(&wk);
  return r;
}

wino_result wino_check(tsl_jit *jit, const wino_case *c, const tsl_winograd_knobs *knobs, uint64_t seed) {
  wino_data d;
  wino_data_make(c, 1.0, seed, &d);
  wino_result r = wino_run(jit, c, &d, NULL, knobs, 1, NULL);
  wino_data_free(&d);
  if (r.ok && (!(r.max_err <= tsl_winograd_error_bound_r(c->m, wino_r(c))) || !r.pad_channels_zero)) {
    char b[160];
    printf("\n  %s: error %.3g (bound %.1g)%s\n", wino_case_str(c, b, sizeof b), r.max_err,
           tsl_winograd_error_bound_r(c->m, wino_r(c)), r.pad_channels_zero ? "" : ", padded output channels not 0");
    if (knobs)
      printf("    knobs nr_tiles %lld mr %lld nr %lld order %d unroll_cx %d pad_at %d rows %d parallel %d\n",
             (long long)knobs->nr_tiles, (long long)knobs->mr, (long long)knobs->nr,
             knobs->gemm_order, knobs->unroll_cx, knobs->pad_at, knobs->row_buffers, knobs->parallel);
  }
  return r;
}

int wino_host_jit_new(tsl_jit **jit) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK) return 1;
  return tsl_jit_new(&t, jit) != TSL_OK;
}

int wino_jit_free(tsl_jit **jit) {
  tsl_jit_free(*jit);
  *jit = NULL;
  return 0;
}
