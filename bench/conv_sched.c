/* bench/conv_sched: NCHW convolutions given as schedule text against oneDNN, one thread,
 * in one process (issue 16: the auto-scheduled conv2d against our hand template and the
 * best peer). A benchmark, not a test.
 *
 *   conv_sched --layer C,HxW,K,RxS,s,p [--file OPS.tsl] [--rounds R] [--repeat N]
 *              [--min-ms MS] LABEL=OP:SCHEDULE ...
 *
 * Each candidate LABEL=OP:SCHEDULE is operator OP (an op of --file, else a built-in
 * operator with the parameters stride_h/w and pad_top/left/bottom/right, e.g. conv2d)
 * instantiated with data 1 x C x H x W and weight K x C x R x S,
 * scheduled by the text in file SCHEDULE (the form `tunecli show --records` prints;
 * "-" for the operator's default schedule), built for the host. The operator must
 * compute the layer (stride s, padding p on every side, no bias, no activation): each
 * output is checked against oneDNN's (max error relative to the output's magnitude,
 * "BAD" past 1e-3). oneDNN: convolution_direct, formats `any` (its blocked layout),
 * inputs reordered once, OpenMP at one thread (bench/dnnl_conv.h).
 *
 * Timing: R interleaved rounds of N samples per implementation (tsl_time_callback, each
 * sample at least MS ms of back-to-back calls; defaults 5 x 11 x 1 ms); the figure is
 * the median and the best sample, in ms and GFLOP/s (2*K*OH*OW*C*R*S FLOPs per call),
 * and the ratio of the median to oneDNN's (oneDNN's ms / the candidate's ms).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dnnl_conv.h"
#include "codegen/build.h"
#include "dsl/parser.h"
#include "ir/arena.h"
#include "ops/registry.h"
#include "runtime/module.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"

enum { MAX_CANDS = 8, MAX_SAMPLES = 512 };

typedef struct cand {
  char label[64], op[64];
  const char *sched; /* file, or "-" */
  const tsl_kernel *kernel;
  float *buf[3];
  void *ptrs[3];
  void *args[3];
  double err;
  bool ok;
} cand;

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
    free(t);
    t = NULL;
  }
  if (t) t[n] = '\0';
  fclose(f);
  return t;
}

static int32_t cand_run(void *ctx) {
  cand *c = ctx;
  return tsl_kernel_call(c->kernel, c->args, 3) == TSL_OK ? 0 : 1;
}

/* The program of c->op at layer d: from the DSL module when it has the op, else the
 * registry. */
static tsl_status cand_program(const cand *c, const tsl_dsl_module *mod, const tsl_conv2d_layer *d,
                               tsl_te_program **p) {
  const int64_t ds[4] = {d->N, d->C, d->H, d->W}, ws[4] = {d->K, d->C, d->R, d->S};
  const int64_t *shapes[2] = {ds, ws};
  const int nd[2] = {4, 4};
  const tsl_dsl_op *def = mod ? tsl_dsl_module_find(mod, c->op) : NULL;
  if (def) return tsl_dsl_instantiate(def, 2, shapes, nd, 0, NULL, p);
  const tsl_dsl_param_value params[6] = {
      tsl_dsl_int_param("stride_h", d->stride_h), tsl_dsl_int_param("stride_w", d->stride_w),
      tsl_dsl_int_param("pad_top", d->pad_top),   tsl_dsl_int_param("pad_left", d->pad_left),
      tsl_dsl_int_param("pad_bottom", d->pad_bottom), tsl_dsl_int_param("pad_right", d->pad_right)};
  return tsl_op_instantiate(c->op, 2, shapes, nd, 6, params, p);
}

/* Builds candidate c (its kernel named "cand<i>") with copies of src and w. */
static bool cand_setup(cand *c, int i, const tsl_dsl_module *mod, const tsl_conv2d_layer *d, tsl_jit *jit,
                       tsl_module *m, const float *src, const float *w) {
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  char *text = strcmp(c->sched, "-") == 0 ? NULL : read_text(c->sched);
  char name[32];
  snprintf(name, sizeof name, "cand%d", i);
  tsl_status st = cand_program(c, mod, d, &p);
  if (st == TSL_OK && strcmp(c->sched, "-") != 0 && !text)
    st = tsl_error(TSL_ERR_IO, "cannot read schedule file %s", c->sched);
  if (st == TSL_OK) st = text ? tsl_schedule_from_text_file(p, text, c->sched, &s) : tsl_schedule_create(p, &s);
  if (st == TSL_OK && (p->ninputs != 2 || p->noutputs != 1))
    st = tsl_error(TSL_ERR_INVALID, "operator %s has %d inputs and %d outputs (want data, weight -> out)", c->op,
                   p->ninputs, p->noutputs);
  if (st == TSL_OK) st = tsl_build(s, name, jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, name, &c->kernel);
  tsl_schedule_free(s);
  free(text);
  if (st != TSL_OK) {
    fprintf(stderr, "conv_sched: %s: %s\n", c->label, tsl_last_error());
    return false;
  }
  int64_t n[3] = {d->N * d->C * d->H * d->W, d->K * d->C * d->R * d->S,
                  d->N * d->K * tsl_conv2d_layer_out_h(d) * tsl_conv2d_layer_out_w(d)};
  for (int k = 0; k < 3; k++) {
    if (!(c->buf[k] = bench_conv_alloc_floats(n[k]))) return false;
    c->ptrs[k] = c->buf[k];
    c->args[k] = &c->ptrs[k];
  }
  memcpy(c->buf[0], src, sizeof(float) * (size_t)n[0]);
  memcpy(c->buf[1], w, sizeof(float) * (size_t)n[1]);
  c->ok = true;
  return true;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int usage(void) {
  fprintf(stderr, "usage: conv_sched --layer C,HxW,K,RxS,s,p [--file OPS.tsl] [--rounds R] [--repeat N] "
                  "[--min-ms MS] LABEL=OP:SCHEDULE ...\n");
  return 2;
}

int main(int argc, char **argv) {
  tsl_conv2d_layer d;
  memset(&d, 0, sizeof d);
  const char *file = NULL;
  int rounds = 5, repeat = 11, nc = 0;
  double min_ms = 1.0;
  bool have_layer = false;
  static cand cands[MAX_CANDS];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long long C, H, W, K, R, S, st, pad;
    if (strcmp(a, "--layer") == 0 && v &&
        sscanf(v, "%lld,%lldx%lld,%lld,%lldx%lld,%lld,%lld", &C, &H, &W, &K, &R, &S, &st, &pad) == 8) {
      d = (tsl_conv2d_layer){.N = 1, .C = C, .H = H, .W = W, .K = K, .R = R, .S = S, .stride_h = st, .stride_w = st,
                             .pad_top = pad, .pad_left = pad, .pad_bottom = pad, .pad_right = pad, .dilation_h = 1,
                             .dilation_w = 1, .groups = 1, .block = 1};
      have_layer = tsl_conv2d_layer_check(&d) == TSL_OK;
      i++;
    } else if (strcmp(a, "--file") == 0 && v) file = argv[++i];
    else if (strcmp(a, "--rounds") == 0 && v && (rounds = atoi(argv[++i])) >= 1) continue;
    else if (strcmp(a, "--repeat") == 0 && v && (repeat = atoi(argv[++i])) >= 1) continue;
    else if (strcmp(a, "--min-ms") == 0 && v && (min_ms = atof(argv[++i])) >= 0) continue;
    else {
      const char *eq = strchr(a, '='), *colon = eq ? strchr(eq, ':') : NULL;
      if (!eq || !colon || nc == MAX_CANDS || eq - a >= 64 || colon - eq - 1 >= 64 || colon == eq + 1)
        return usage();
      cand *c = &cands[nc++];
      snprintf(c->label, sizeof c->label, "%.*s", (int)(eq - a), a);
      snprintf(c->op, sizeof c->op, "%.*s", (int)(colon - eq - 1), eq + 1);
      c->sched = colon + 1;
    }
  }
  if (!have_layer || nc == 0 || rounds * repeat > MAX_SAMPLES) return usage();
  tsl_target target;
  tsl_jit *jit = NULL;
  tsl_module *m = NULL;
  tsl_dsl_module *mod = NULL;
  char *ops = file ? read_text(file) : NULL;
  if ((file && (!ops || tsl_dsl_parse(ops, file, &mod) != TSL_OK)) || tsl_target_parse("host", &target) != TSL_OK ||
      tsl_jit_new(&target, &jit) != TSL_OK || tsl_module_new(&m) != TSL_OK) {
    fprintf(stderr, "conv_sched: %s\n", ops || !file ? tsl_last_error() : "cannot read the ops file");
    return 1;
  }
  tsl_set_num_threads(1);
  omp_set_num_threads(1);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  int64_t OH = tsl_conv2d_layer_out_h(&d), OW = tsl_conv2d_layer_out_w(&d);
  int64_t nsrc = d.C * d.H * d.W, nw = d.K * d.C * d.R * d.S, nout = d.K * OH * OW;
  float *src = bench_conv_alloc_floats(nsrc), *w = bench_conv_alloc_floats(nw), *bias = bench_conv_alloc_floats(d.K), *ref = bench_conv_alloc_floats(nout);
  bench_conv_fill(src, nsrc, 11, 1.0);
  bench_conv_fill(w, nw, 23, 1.0 / sqrt((double)(d.C * d.R * d.S)));
  bench_dnnl_conv dc;
  if (!bench_dnnl_conv_setup(&dc, &d, src, w, bias) || bench_dnnl_conv_run(&dc) != 0 ||
      !bench_dnnl_conv_output_nchw(&dc, &d, ref)) {
    fprintf(stderr, "conv_sched: oneDNN failed\n");
    return 1;
  }
  double scale = 1.0;
  for (int64_t i = 0; i < nout; i++) scale = fmax(scale, fabs(ref[i]));
  for (int i = 0; i < nc; i++) {
    cand *c = &cands[i];
    if (!cand_setup(c, i, mod, &d, jit, m, src, w) || cand_run(c) != 0) {
      c->ok = false;
      continue;
    }
    for (int64_t e = 0; e < nout; e++) {
      double err = fabs(c->buf[2][e] - ref[e]) / scale;
      if (!(err <= c->err)) c->err = isnan(err) ? INFINITY : err;
    }
  }
  static double all[MAX_CANDS + 1][MAX_SAMPLES], samples[MAX_SAMPLES];
  int ns[MAX_CANDS + 1] = {0};
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i <= nc; i++) {
      tsl_time_opts to = tsl_time_opts_default();
      to.repeat = repeat;
      to.min_repeat_ms = min_ms;
      if (i < nc && !cands[i].ok) continue;
      tsl_status st = i == nc ? tsl_time_callback(bench_dnnl_conv_run, &dc, "oneDNN", &to, samples)
                              : tsl_time_callback(cand_run, &cands[i], cands[i].label, &to, samples);
      if (st != TSL_OK) continue;
      memcpy(&all[i][ns[i]], samples, sizeof(double) * (size_t)repeat);
      ns[i] += repeat;
    }
  double flops = 2.0 * (double)(d.K * OH * OW) * (double)(d.C * d.R * d.S), med[MAX_CANDS + 1] = {0};
  for (int i = 0; i <= nc; i++)
    if (ns[i]) {
      qsort(all[i], (size_t)ns[i], sizeof(double), cmp_double);
      med[i] = all[i][ns[i] / 2];
    }
  printf("bench/conv_sched: conv %lld %lldx%lld -> %lld %lldx%lld s%lld p%lld, 1 thread, %d rounds x %d samples "
         "(>= %.1f ms each)\n",
         (long long)d.C, (long long)d.H, (long long)d.W, (long long)d.K, (long long)d.R, (long long)d.S,
         (long long)d.stride_h, (long long)d.pad_top, rounds, repeat, min_ms);
  printf("%-12s %-14s %9s %9s %9s %9s %8s %s\n", "candidate", "operator", "median ms", "best ms", "GFLOP/s", "best GF/s",
         "vs oneDNN", "schedule");
  for (int i = 0; i <= nc; i++) {
    const char *label = i == nc ? "oneDNN" : cands[i].label, *op = i == nc ? "direct" : cands[i].op;
    if (!ns[i]) {
      printf("%-12s %-14s %9s\n", label, op, "failed");
      continue;
    }
    printf("%-12s %-14s %9.3f %9.3f %9.1f %9.1f %8.2fx %s%s\n", label, op, med[i] * 1e3, all[i][0] * 1e3,
           flops / med[i] * 1e-9, flops / all[i][0] * 1e-9, med[nc] / med[i], i == nc ? "" : cands[i].sched,
           i < nc && cands[i].err > 1e-3 ? " BAD" : "");
  }
  for (int i = 0; i < nc; i++)
    for (int k = 0; k < 3; k++) free(cands[i].buf[k]);
  bench_dnnl_conv_free(&dc);
  free(src);
  free(w);
  free(bias);
  free(ref);
  free(ops);
  tsl_module_free(m);
  tsl_jit_free(jit);
  tsl_dsl_module_free(mod);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return 0;
}
