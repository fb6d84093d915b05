/* bench/binary: one binary conv layer against the fp32 conv2d_nchw on the same shape
 * (default 1x64x56x56 -> 64, 3x3, pad 1), one thread, median of repeats. The binary
 * convs use the bitserial template's default config (schedule/templates/bitserial.h);
 * fp32 uses conv2d_nchw's default schedule. Usage: binary [C H K] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/build.h"
#include "codegen/target.h"
#include "dsl/ops/registry.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "schedule/templates/bitserial.h"
#include "schedule/templates/conv2d_select.h"
#include "tessel/runtime.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Builds p with schedule s (both owned by the caller), runs it `reps` times on buffers
 * sized from its tensors (8 bytes an element, enough for every dtype) and returns the
 * median seconds (negative on error). */
static double time_prog(tsl_jit *jit, const tsl_te_program *p, const tsl_schedule *s, int reps) {
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  double med = -1.0;
  int n = p->ninputs + p->noutputs;
  tsl_status st = n <= 8 ? tsl_module_new(&m) : tsl_error(TSL_ERR_INVALID, "bench: too many tensors");
  if (st == TSL_OK) st = tsl_build(s, "bench", jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, "bench", &k);
  void *bufs[8] = {NULL};
  void *args[8];
  for (int i = 0; i < n && st == TSL_OK; i++) {
    const tsl_buffer *b = (i < p->ninputs ? p->inputs[i] : p->outputs[i - p->ninputs])->buf;
    size_t bytes = 8;
    for (int d = 0; d < b->ndim; d++) bytes *= (size_t)b->shape[d];
    bufs[i] = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!bufs[i])
      st = tsl_error(TSL_ERR_NOMEM, "bench: out of memory");
    else
      memset(bufs[i], 0, bytes);
    args[i] = &bufs[i];
  }
  if (st == TSL_OK) {
    double times[15];
    for (int r = 0; r < reps && st == TSL_OK; r++) {
      double t0 = now();
      st = tsl_kernel_call(k, args, n);
      times[r] = now() - t0;
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    med = times[reps / 2];
  }
  if (st != TSL_OK) fprintf(stderr, "%s: %s\n", p->name, tsl_last_error());
  for (int i = 0; i < 8; i++) free(bufs[i]);
  tsl_module_free(m);
  return st == TSL_OK ? med : -1.0;
}

/* Registry op `name`, bitserial template schedule (or the default schedule), timed. */
static double time_op(tsl_jit *jit, const tsl_target *t, const char *name, int nin, const int64_t *const *shapes,
                      const int *ndims, int nparams, const tsl_dsl_param_value *params, int reps) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  double med = -1.0;
  tsl_status st = tsl_op_instantiate(name, nin, shapes, ndims, nparams, params, &p);
  if (st == TSL_OK)
    st = strncmp(name, "bitserial", 9) == 0 ? tsl_bitserial_schedule(p, t, NULL, &s) : tsl_schedule_create(p, &s);
  if (st == TSL_OK)
    med = time_prog(jit, p, s, reps);
  else
    fprintf(stderr, "%s: %s\n", name, tsl_last_error());
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return med;
}

/* The fp32 conv of the operator library (conv2d_select.h), algorithm a, default config. */
static double time_fp32_algo(tsl_jit *jit, const tsl_target *t, const tsl_conv2d_desc *d, tsl_conv2d_algo a,
                             int reps) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  double med = -1.0;
  tsl_status st = tsl_conv2d_algo_instantiate(d, a, t, &p, NULL);
  if (st == TSL_OK) st = tsl_conv2d_algo_schedule(p, a, t, &s);
  if (st == TSL_OK)
    med = time_prog(jit, p, s, reps);
  else
    fprintf(stderr, "%s: %s\n", tsl_conv2d_algo_name(a), tsl_last_error());
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return med;
}

int main(int argc, char **argv) {
  int64_t C = argc > 3 ? atoll(argv[1]) : 64, H = argc > 3 ? atoll(argv[2]) : 56, K = argc > 3 ? atoll(argv[3]) : 64;
  if (C < 1 || H < 3 || K < 1) {
    fprintf(stderr, "usage: binary [C H K] (C, K >= 1, H >= 3)\n");
    return 2;
  }
  tsl_target t;
  tsl_jit *jit;
  if (tsl_target_parse("host", &t) != TSL_OK || tsl_jit_new(&t, &jit) != TSL_OK) {
    fprintf(stderr, "binary: %s\n", tsl_last_error());
    return 1;
  }
  tsl_set_num_threads(1);
  int reps = 9, ok = 1;
  int64_t CW = (C + 63) / 64;
  int64_t fd[4] = {1, C, H, H}, fw[4] = {K, C, 3, 3}, bd[4] = {1, CW, H, H}, bw[4] = {K, CW, 3, 3},
          ud[5] = {1, 2, CW, H, H};
  const int64_t *fs[2] = {fd, fw}, *bs[2] = {bd, bw}, *us[2] = {ud, bw};
  int nd4[2] = {4, 4}, nd54[2] = {5, 4};
  tsl_dsl_param_value fp[4] = {tsl_dsl_int_param("pad_top", 1), tsl_dsl_int_param("pad_left", 1),
                               tsl_dsl_int_param("pad_bottom", 1), tsl_dsl_int_param("pad_right", 1)};
  tsl_dsl_param_value bp[3] = {tsl_dsl_int_param("C", C), tsl_dsl_int_param("pad_h", 1), tsl_dsl_int_param("pad_w", 1)};
  double tf = time_op(jit, &t, "conv2d_nchw", 2, fs, nd4, 4, fp, reps);
  double t1 = time_op(jit, &t, "bitserial_conv2d_bipolar64", 2, bs, nd4, 3, bp, reps);
  double t2 = time_op(jit, &t, "bitserial_conv2d_unipolar64", 2, us, nd54, 3, bp, reps);
  tsl_conv2d_desc d = {1, C, H, H, K, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0.0, 0.0, false, 8};
  tsl_conv2d_algo best = tsl_conv2d_select(&d, &t);
  double td = time_fp32_algo(jit, &t, &d, TSL_CONV2D_DIRECT, reps);
  double tb = best == TSL_CONV2D_DIRECT ? td : time_fp32_algo(jit, &t, &d, best, reps);
  if (tb > 0 && td > 0 && td < tb) tb = td;
  double flops = 2.0 * (double)(K * C * 9) * (double)(H * H);
  printf("layer 1x%lldx%lldx%lld -> %lld, 3x3, pad 1, 1 thread, median of %d\n", (long long)C, (long long)H,
         (long long)H, (long long)K, reps);
  printf("  fp32 conv2d_nchw (default schedule)      %9.3f ms  %6.1f GFLOP/s\n", tf * 1e3, flops / tf * 1e-9);
  printf("  fp32 direct NCHW8c (default config)      %9.3f ms  %6.1f GFLOP/s\n", td * 1e3, flops / td * 1e-9);
  printf("  fp32 %-12s (default config)         %9.3f ms  %6.1f GFLOP/s\n", tsl_conv2d_algo_name(best), tb * 1e3,
         flops / tb * 1e-9);
  printf("  bitserial bipolar 1-bit (template)       %9.3f ms  %6.1fx vs best fp32\n", t1 * 1e3, tb / t1);
  printf("  bitserial unipolar 2-bit act (template)  %9.3f ms  %6.1fx vs best fp32\n", t2 * 1e3, tb / t2);
  ok = tf > 0 && t1 > 0 && t2 > 0 && td > 0 && tb > 0;
  tsl_jit_free(jit);
  return ok ? 0 : 1;
}
