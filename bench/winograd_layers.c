/* bench/winograd_layers: tessel's Winograd F(2x2), F(4x4), F(6x6) (default configs of
 * ops/conv2d/winograd_schedule.h) against tessel's direct NCHW[x]c convolution (its
 * default config; ops/conv2d/conv2d_select.h picks Winograd for these layers) and
 * oneDNN's direct and Winograd convolutions, on resnet18's 3x3 stride-1 layers, in one
 * process. A benchmark, not a test: nothing here runs in the test suite.
 *
 *   winograd_layers [--rounds R] [--repeat N] [--min-ms MS] [--layers 56,28,14,7]
 *                   [--knobs nr_tiles=56,mr=6,nr=16,order=0,ucx=0,pad=1,rows=1] [--threads T]
 *
 * Layers: N1, C = K = 64 at 56x56, 128 at 28x28, 256 at 14x14, 512 at 7x7, pad 1, bias +
 * relu fused. tessel uses NCHW[x]c with x = the target's f32 lanes; Winograd weights are
 * kernel-transformed once (not timed). oneDNN 2.x (Debian's libdnnl-dev): forward
 * inference, formats `any`, bias and relu as post-op, reorders not timed; its Winograd
 * exists for AVX-512 only and is reported "n/a" elsewhere.
 *
 * GFLOP/s always counts the DIRECT convolution's FLOPs, 2*N*K*C*3*3*OH*OW per call, so
 * the figures compare time; a Winograd figure above the FMA peak means fewer operations.
 * Timing: R interleaved rounds of N samples per implementation (tsl_time_callback, each
 * sample at least MS ms of back-to-back calls); the table shows the median sample and the
 * best in brackets. Every output is checked against oneDNN's direct one ("BAD" past the
 * Winograd error bound times 10).
 *
 * --threads T (default 1): tessel's pool and oneDNN's OpenMP run T threads; at T > 1 the
 * Winograd kernels keep their template's default `parallel` knob (at 1: none), so the
 * table shows the default decomposition's scaling (run it at 1 and at T side by side).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dnnl_conv.h"
#include "codegen/build.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "ops/conv2d/conv2d_select.h"
#include "ops/conv2d/winograd_schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"

enum { NIMPL = 6, MAX_SAMPLES = 512 };
static const char *const impl_names[NIMPL] = {"tsl direct", "tsl F(2)", "tsl F(4)", "tsl F(6)", "dnnl direct",
                                              "dnnl wino"};

typedef struct layer {
  int64_t C, HW;
} layer;

typedef struct impl {
  bool ok;
  const tsl_kernel *k;
  tsl_module *mod;
  void *ptrs[5], *args[5];
  int nargs;
  float *out;   /* NCHW[x]c (tessel) */
  float *extra; /* the transformed weights (tessel) */
  bench_dnnl_conv dn; /* oneDNN (bench/dnnl_conv.h) */
  double samples[MAX_SAMPLES];
  int nsamples;
} impl;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static float *falloc(int64_t n) {
  float *p = bench_conv_alloc_floats(n);
  if (!p) {
    fprintf(stderr, "winograd_layers: out of memory\n");
    exit(1);
  }
  return p;
}

/* Layer L with block X (1 for oneDNN's NCHW): 3x3, stride 1, pad 1, bias + relu. */
static tsl_conv2d_layer conv_layer(const layer *L, int64_t X) {
  tsl_conv2d_layer d = {.N = 1, .C = L->C, .H = L->HW, .W = L->HW, .K = L->C, .R = 3, .S = 3, .stride_h = 1,
                        .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                        .dilation_h = 1, .dilation_w = 1, .groups = 1, .act = 1, .block = X};
  return d;
}

static void pack(const float *src, int64_t C, int64_t HW, int64_t X, float *dst) {
  for (int64_t c = 0; c < C; c++)
    for (int64_t i = 0; i < HW; i++) dst[((c / X) * HW + i) * X + c % X] = src[c * HW + i];
}

/* ---- tessel ---- */

static bool tsl_fail(const char *what) {
  fprintf(stderr, "winograd_layers: %s: %s\n", what, tsl_last_error());
  return false;
}

static bool build(tsl_jit *jit, const tsl_schedule *s, impl *im) {
  if (tsl_module_new(&im->mod) != TSL_OK) return tsl_fail("module");
  if (tsl_build(s, "bench_conv", jit, im->mod, NULL, NULL) != TSL_OK) return tsl_fail("build");
  if (tsl_module_get_kernel(im->mod, "bench_conv", &im->k) != TSL_OK) return tsl_fail("kernel");
  for (int i = 0; i < im->nargs; i++) im->args[i] = &im->ptrs[i];
  return true;
}

/* Runs a one-input one-output program (a weight transform) on in, into out. */
static bool run_transform(tsl_jit *jit, const tsl_te_program *p, const tsl_schedule *s, float *in, float *out) {
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  bool ok = tsl_module_new(&m) == TSL_OK && tsl_build(s, "bench_weights", jit, m, NULL, NULL) == TSL_OK &&
            tsl_module_get_kernel(m, "bench_weights", &k) == TSL_OK;
  void *ptrs[2] = {in, out}, *args[2] = {&ptrs[0], &ptrs[1]};
  ok = ok && tsl_kernel_call(k, args, 2) == TSL_OK;
  (void)p;
  tsl_module_free(m);
  return ok || tsl_fail("weight transform");
}

static bool setup_direct(tsl_jit *jit, const layer *L, int64_t X, float *data, float *w, float *bias, impl *im) {
  tsl_conv2d_layer d = conv_layer(L, X);
  tsl_te_program *conv = NULL, *wt = NULL;
  tsl_schedule *s = NULL, *ws = NULL;
  if (tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_DIRECT, tsl_jit_target(jit), &conv, &wt) != TSL_OK)
    return tsl_fail("direct");
  const tsl_buffer *wb = conv->inputs[1]->buf;
  int64_t wn = 1;
  for (int i = 0; i < wb->ndim; i++) wn *= wb->shape[i];
  float *wk = im->extra = falloc(wn);
  bool ok = tsl_schedule_create(wt, &ws) == TSL_OK && run_transform(jit, wt, ws, w, wk);
  ok = ok && (tsl_conv2d_algo_schedule(conv, TSL_CONV2D_DIRECT, tsl_jit_target(jit), &s) == TSL_OK ||
              tsl_fail("direct schedule"));
  im->nargs = 4;
  im->out = falloc(L->C * L->HW * L->HW);
  im->ptrs[0] = data;
  im->ptrs[1] = wk;
  im->ptrs[2] = bias;
  im->ptrs[3] = im->out;
  ok = ok && build(jit, s, im);
  tsl_schedule_free(s);
  tsl_schedule_free(ws);
  return im->ok = ok;
}

static bool parse_knobs(const char *text, tsl_winograd_knobs *k) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) return false;
    *eq = '\0';
    long long v = atoll(eq + 1);
    if (!strcmp(tok, "nr_tiles")) k->nr_tiles = v;
    else if (!strcmp(tok, "mr")) k->mr = v;
    else if (!strcmp(tok, "nr")) k->nr = v;
    else if (!strcmp(tok, "order")) k->gemm_order = (int)v;
    else if (!strcmp(tok, "ucx")) k->unroll_cx = v != 0;
    else if (!strcmp(tok, "pad")) k->pad_at = (int)v;
    else if (!strcmp(tok, "rows")) k->row_buffers = v != 0;
    else if (!strcmp(tok, "par")) k->parallel = (int)v;
    else if (!strcmp(tok, "gat")) k->gemm_at_tiles = v != 0;
    else return false;
  }
  return true;
}

static bool setup_winograd(tsl_jit *jit, const layer *L, int m, int64_t X, const char *knobs, int threads,
                           float *data, float *w, float *bias, impl *im) {
  tsl_conv2d_layer wc = conv_layer(L, X);
  tsl_te_program *conv = NULL, *wt = NULL;
  tsl_schedule *s = NULL, *ws = NULL;
  if (tsl_winograd_instantiate(&wc, m, NULL, &conv, &wt) != TSL_OK) return tsl_fail("winograd");
  int64_t a = m + 2;
  float *u = im->extra = falloc(a * a * L->C * L->C);
  bool ok = (tsl_winograd_weight_schedule(wt, tsl_jit_target(jit), &ws) == TSL_OK || tsl_fail("weight schedule")) &&
            run_transform(jit, wt, ws, w, u);
  tsl_winograd_shape sh;
  tsl_winograd_knobs k;
  ok = ok && tsl_winograd_program_shape(conv, &sh) == TSL_OK;
  if (ok) {
    k = tsl_winograd_default_knobs(tsl_jit_target(jit), &sh);
    if (threads == 1) k.parallel = TSL_WINOGRAD_PAR_NONE;
    if (knobs && !parse_knobs(knobs, &k)) {
      fprintf(stderr, "winograd_layers: bad --knobs %s\n", knobs);
      exit(2);
    }
  }
  ok = ok && (tsl_winograd_schedule(conv, tsl_jit_target(jit), &k, &s) == TSL_OK || tsl_fail("winograd schedule"));
  im->nargs = 4;
  im->out = falloc(L->C * L->HW * L->HW);
  im->ptrs[0] = data;
  im->ptrs[1] = u;
  im->ptrs[2] = bias;
  im->ptrs[3] = im->out;
  ok = ok && build(jit, s, im);
  tsl_schedule_free(s);
  tsl_schedule_free(ws);
  return im->ok = ok;
}

static int32_t run_tessel(void *ctx) {
  impl *im = ctx;
  return tsl_kernel_call(im->k, im->args, im->nargs) == TSL_OK ? 0 : 1;
}

/* ---- oneDNN ---- */

/* oneDNN's convolution `alg` of layer L (bias + relu), set up by bench/dnnl_conv.h. */
static bool setup_dnnl(const layer *L, dnnl_alg_kind_t alg, float *src, float *w, float *bias, impl *im) {
  tsl_conv2d_layer d = conv_layer(L, 1);
  if (!bench_dnnl_conv_setup_alg(&im->dn, &d, alg, src, w, bias)) return false;
  im->out = falloc(L->C * L->HW * L->HW);
  return im->ok = true;
}

static void free_impl(impl *im) {
  tsl_module_free(im->mod);
  bench_dnnl_conv_free(&im->dn);
  free(im->out);
  free(im->extra);
}

/* max |a - ref| / max |ref|, a in NCHW[x]c with block X (X = 0: NCHW) */
static double max_err(const float *a, int64_t X, const float *ref, int64_t C, int64_t HW) {
  double worst = 0.0, scale = 0.0;
  for (int64_t c = 0; c < C; c++)
    for (int64_t i = 0; i < HW; i++) {
      double r = ref[c * HW + i], v = X ? a[((c / X) * HW + i) * X + c % X] : a[c * HW + i];
      if (fabs(r) > scale) scale = fabs(r);
      double e = isfinite(v) ? fabs(v - r) : INFINITY;
      if (!(e <= worst)) worst = e;
    }
  return worst / (scale > 0 ? scale : 1.0);
}

int main(int argc, char **argv) {
  int rounds = 3, repeat = 3;
  double min_ms = 30.0;
  const char *knobs = NULL, *layers_arg = "56,28,14,7";
  int threads = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--min-ms") && i + 1 < argc) min_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--knobs") && i + 1 < argc) knobs = argv[++i];
    else if (!strcmp(argv[i], "--layers") && i + 1 < argc) layers_arg = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: winograd_layers [--rounds R] [--repeat N] [--min-ms MS] [--layers 56,28,14,7] "
                      "[--knobs k=v,...] [--threads T]\n");
      return 2;
    }
  }
  if (rounds < 1 || repeat < 1 || rounds * repeat > MAX_SAMPLES) rounds = 3, repeat = 3;
  if (threads < 1 || threads > TSL_MAX_THREADS) {
    fprintf(stderr, "winograd_layers: --threads %d (allowed 1..%d)\n", threads, TSL_MAX_THREADS);
    return 2;
  }
  static const layer all[] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}};
  tsl_target t;
  tsl_jit *jit = NULL;
  if (tsl_target_parse("host", &t) != TSL_OK || tsl_jit_new(&t, &jit) != TSL_OK) {
    tsl_fail("jit");
    return 1;
  }
  tsl_set_num_threads(threads);
  omp_set_num_threads(threads);
  int64_t X = tsl_target_f32_lanes(&t);
  char tbuf[256];
  printf("bench/winograd_layers: resnet18 3x3 stride-1 layers, N1, pad 1, bias + relu, %d thread(s)\n", threads);
  printf("target %s, NCHW%lldc; GFLOP/s of the direct conv's 2*K*C*9*OH*OW FLOPs: median [best] of %d x %d "
         "samples >= %g ms\n\n",
         tsl_target_str(&t, tbuf, sizeof tbuf), (long long)X, rounds, repeat, min_ms);
  printf("  layer       ");
  for (int j = 0; j < NIMPL; j++) printf("| %-17s", impl_names[j]);
  printf("| best wino / tsl direct\n");
  for (size_t li = 0; li < sizeof all / sizeof all[0]; li++) {
    const layer *L = &all[li];
    char want[16];
    snprintf(want, sizeof want, "%lld", (long long)L->HW);
    bool listed = false;
    for (const char *p = layers_arg; p && *p;) {
      size_t n = strcspn(p, ",");
      listed |= strlen(want) == n && !strncmp(p, want, n);
      p = p[n] ? p + n + 1 : NULL;
    }
    if (!listed) continue;
    int64_t C = L->C, HW = L->HW * L->HW;
    float *src = falloc(C * HW), *w = falloc(C * C * 9), *bias = falloc(C), *data = falloc(C * HW);
    float *bias_b = falloc(C), *ref = falloc(C * HW);
    bench_conv_fill(src, C * HW, 1 + li, 1.0);
    bench_conv_fill(w, C * C * 9, 100 + li, 1.0);
    bench_conv_fill(bias, C, 200 + li, 1.0);
    memcpy(bias_b, bias, sizeof(float) * (size_t)C);
    pack(src, C, HW, X, data);
    impl im[NIMPL];
    memset(im, 0, sizeof im);
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    setup_direct(jit, L, X, data, w, bias_b, &im[0]);
    for (int m = 2; m <= 6; m += 2) setup_winograd(jit, L, m, X, knobs, threads, data, w, bias_b, &im[m / 2]);
    setup_dnnl(L, dnnl_convolution_direct, src, w, bias, &im[4]);
    setup_dnnl(L, dnnl_convolution_winograd, src, w, bias, &im[5]);
    tsl_arena_set_current(prev);
    for (int r = 0; r < rounds; r++)
      for (int j = 0; j < NIMPL; j++) {
        if (!im[j].ok) continue;
        tsl_time_opts o = tsl_time_opts_default();
        o.repeat = repeat;
        o.min_repeat_ms = min_ms;
        double *costs = im[j].samples + im[j].nsamples;
        void *ctx = j < 4 ? (void *)&im[j] : (void *)&im[j].dn;
        if (tsl_time_callback(j < 4 ? run_tessel : bench_dnnl_conv_run, ctx, impl_names[j], &o, costs) == TSL_OK)
          im[j].nsamples += repeat;
        else im[j].ok = false;
      }
    tsl_conv2d_layer dref = conv_layer(L, 1);
    bool have_ref = im[4].ok && bench_dnnl_conv_output_nchw(&im[4].dn, &dref, ref);
    double flops = 2.0 * (double)C * (double)C * 9.0 * (double)HW, gf[NIMPL] = {0};
    printf("  %3lldx%-3lld C%-4lld", (long long)L->HW, (long long)L->HW, (long long)C);
    for (int j = 0; j < NIMPL; j++) {
      if (!im[j].ok || !im[j].nsamples) {
        printf("| %-17s", "n/a");
        continue;
      }
      qsort(im[j].samples, (size_t)im[j].nsamples, sizeof(double), cmp_double);
      gf[j] = flops / im[j].samples[im[j].nsamples / 2] * 1e-9;
      double best = flops / im[j].samples[0] * 1e-9;
      bool bad = false;
      if (have_ref && j < 4) {
        double bound = j == 0 ? 1e-5 : 10.0 * tsl_winograd_error_bound(2 * j);
        bad = !(max_err(im[j].out, X, ref, C, HW) <= bound);
      }
      printf("| %6.1f [%6.1f]%s", gf[j], best, bad ? " BAD" : "    ");
    }
    double bw = fmax(gf[1], fmax(gf[2], gf[3]));
    if (gf[0] > 0 && bw > 0) printf("| %.2fx", bw / gf[0]);
    printf("\n");
    for (int j = 0; j < NIMPL; j++) free_impl(&im[j]);
    tsl_arena_free(arena);
    free(src);
    free(w);
    free(bias);
    free(bias_b);
    free(data);
    free(ref);
  }
  tsl_jit_free(jit);
  return 0;
}
