/* Peak fp32 FMA throughput and STREAM triad bandwidth with kernels built directly
 * as loop IR and compiled by tessel's own JIT (see peak.h). */
#include "tuner/peak.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/jit.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "tessel/runtime.h"

enum { PEAK_MAX_CHAINS = 64, TRIAD_MAX_BLOCKS = 1024 };

/* Iterations of the FMA loop per call: ~2e8 FLOPs at 8 lanes x 12 chains, a few
 * milliseconds; the time evaluator repeats calls up to min_repeat_ms. */
#define PEAK_FMA_ITERS ((int64_t)1 << 20)

tsl_peak_opts tsl_peak_opts_default(void) {
  tsl_peak_opts o;
  o.threads = 0;
  o.repeat = 7;
  o.min_repeat_ms = 50.0;
  o.triad_bytes = (int64_t)128 << 20;
  return o;
}

int tsl_peak_chains(const tsl_target *t) {
  /* 16 vector registers on x86 below AVX-512: 12 accumulators plus m and a leave
   * room for the loop; 32 registers elsewhere (AVX-512 zmm, AArch64 v0-v31). */
  return tsl_target_vector_registers(t) >= 32 ? 24 : 12;
}

static tsl_expr *vec_at(tsl_buffer *b, tsl_expr *base, int lanes) {
  tsl_expr *ix = lanes == 1 ? base : tsl_ramp(base, tsl_i64(1), lanes);
  return tsl_load(b, 1, &ix, NULL);
}

static tsl_stmt *vec_store(tsl_buffer *b, tsl_expr *base, int lanes, tsl_expr *value) {
  tsl_expr *ix = lanes == 1 ? base : tsl_ramp(base, tsl_i64(1), lanes);
  return tsl_store(b, 1, &ix, value, NULL);
}

static tsl_expr *splat(float v, int lanes) {
  return lanes == 1 ? tsl_f32(v) : tsl_broadcast(tsl_f32(v), lanes);
}

tsl_func *tsl_peak_fma_func(const char *name, int lanes, int chains, bool parallel, int threads) {
  if (lanes < 1 || chains < 1 || chains > PEAK_MAX_CHAINS || threads < 1) {
    fprintf(stderr, "tsl_peak_fma_func: invalid lanes %d, chains %d, threads %d\n", lanes, chains, threads);
    abort();
  }
  tsl_type vf = tsl_type_with_lanes(TSL_F32, lanes);
  int64_t nout = parallel ? threads : 1;
  int64_t pshape = 3 * (int64_t)lanes, oshape = nout * lanes, ashape = (int64_t)chains * lanes;
  tsl_buffer *params = tsl_buffer_new("params", TSL_F32, 1, &pshape, TSL_BUF_ARG);
  tsl_buffer *out = tsl_buffer_new("out", TSL_F32, 1, &oshape, TSL_BUF_ARG);
  tsl_buffer *acc = tsl_buffer_new("acc", TSL_F32, 1, &ashape, TSL_BUF_LOCAL);
  params->align = out->align = 64;
  acc->align = 64;
  tsl_expr *iters = tsl_var("iters", TSL_I64);
  tsl_expr *row = tsl_var("row", TSL_I64);
  tsl_expr *it = tsl_var("it", TSL_I64);
  tsl_expr *m = tsl_var("m", vf), *a = tsl_var("a", vf);

  tsl_stmt **init = tsl_alloc(sizeof(tsl_stmt *) * (size_t)chains);
  tsl_stmt **step = tsl_alloc(sizeof(tsl_stmt *) * (size_t)chains);
  tsl_expr *p0 = vec_at(params, tsl_i64(0), lanes);
  tsl_expr *sum = NULL;
  for (int c = 0; c < chains; c++) {
    tsl_expr *off = tsl_i64((int64_t)c * lanes);
    init[c] = vec_store(acc, off, lanes, tsl_add(p0, splat((float)c, lanes)));
    tsl_expr *args[3] = {vec_at(acc, off, lanes), m, a};
    step[c] = vec_store(acc, off, lanes, tsl_call(TSL_CALL_FMA, vf, 3, args));
    tsl_expr *v = vec_at(acc, off, lanes);
    sum = sum ? tsl_add(sum, v) : v;
  }
  tsl_stmt *loop = tsl_for(it, tsl_i64(0), iters, TSL_FOR_SERIAL, tsl_seq(chains, step));
  tsl_stmt *body_parts[3] = {tsl_seq(chains, init), loop,
                             vec_store(out, tsl_mul(row, tsl_i64(lanes)), lanes, sum)};
  tsl_stmt *body = tsl_seq(3, body_parts);
  body = tsl_let_stmt(m, vec_at(params, tsl_i64(lanes), lanes), body);
  body = tsl_let_stmt(a, vec_at(params, tsl_i64(2 * (int64_t)lanes), lanes), body);
  body = tsl_allocate(acc, body);
  body = parallel ? tsl_for(row, tsl_i64(0), tsl_i64(threads), TSL_FOR_PARALLEL, body)
                  : tsl_let_stmt(row, tsl_i64(0), body);
  tsl_arg args[3] = {{true, params, NULL}, {true, out, NULL}, {false, NULL, iters}};
  return tsl_func_new(name, 3, args, body);
}

tsl_func *tsl_peak_triad_func(const char *name, int64_t n, int lanes, bool parallel) {
  if (lanes < 1 || n < lanes || n % lanes != 0) {
    fprintf(stderr, "tsl_peak_triad_func: n %lld is not a positive multiple of %d lanes\n", (long long)n, lanes);
    abort();
  }
  tsl_type vf = tsl_type_with_lanes(TSL_F32, lanes);
  tsl_buffer *b = tsl_buffer_new("b", TSL_F32, 1, &n, TSL_BUF_ARG);
  tsl_buffer *c = tsl_buffer_new("c", TSL_F32, 1, &n, TSL_BUF_ARG);
  tsl_buffer *a = tsl_buffer_new("a", TSL_F32, 1, &n, TSL_BUF_ARG);
  a->align = b->align = c->align = 64;
  tsl_expr *s = tsl_var("s", TSL_F32);
  tsl_expr *v = tsl_var("v", TSL_I64);
  tsl_expr *base = tsl_mul(v, tsl_i64(lanes));
  tsl_expr *sv = lanes == 1 ? s : tsl_broadcast(s, lanes);
  tsl_expr *fargs[3] = {sv, vec_at(c, base, lanes), vec_at(b, base, lanes)};
  tsl_stmt *store = vec_store(a, base, lanes, tsl_call(TSL_CALL_FMA, vf, 3, fargs));
  int64_t nv = n / lanes;
  tsl_stmt *body;
  if (parallel) {
    int64_t nb = nv < TRIAD_MAX_BLOCKS ? nv : TRIAD_MAX_BLOCKS;
    tsl_expr *blk = tsl_var("blk", TSL_I64);
    /* block blk covers vectors [blk*nv/nb, (blk+1)*nv/nb) */
    tsl_expr *lo = tsl_div(tsl_mul(blk, tsl_i64(nv)), tsl_i64(nb));
    tsl_expr *hi = tsl_div(tsl_mul(tsl_add(blk, tsl_i64(1)), tsl_i64(nv)), tsl_i64(nb));
    body = tsl_for(blk, tsl_i64(0), tsl_i64(nb), TSL_FOR_PARALLEL,
                   tsl_for(v, lo, tsl_sub(hi, lo), TSL_FOR_SERIAL, store));
  } else {
    body = tsl_for(v, tsl_i64(0), tsl_i64(nv), TSL_FOR_SERIAL, store);
  }
  tsl_arg args[4] = {{true, b, NULL}, {true, c, NULL}, {true, a, NULL}, {false, NULL, s}};
  return tsl_func_new(name, 4, args, body);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Compiles f into m and returns its median and least seconds per call. */
static tsl_status time_func(tsl_jit *jit, tsl_module *m, const tsl_func *f, void *const *args, int nargs,
                            const tsl_peak_opts *o, double *seconds, double *best) {
  tsl_status st = tsl_jit_compile(jit, f, m, NULL);
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_module_get_kernel(m, f->name, &k);
  if (st != TSL_OK) return st;
  double *costs = malloc(sizeof(double) * (size_t)o->repeat);
  if (!costs) return tsl_error(TSL_ERR_NOMEM, "peak: out of memory");
  tsl_time_opts to = tsl_time_opts_default();
  to.repeat = o->repeat;
  to.min_repeat_ms = o->min_repeat_ms;
  st = tsl_time_kernel(k, args, nargs, &to, costs);
  if (st == TSL_OK) {
    *seconds = median_of(costs, o->repeat);
    *best = costs[0]; /* sorted by median_of */
  }
  free(costs);
  return st;
}

static tsl_status measure_fma(tsl_jit *jit, tsl_module *m, const tsl_target *t, const tsl_peak_opts *o,
                              int threads, tsl_peak *out) {
  int lanes = tsl_target_f32_lanes(t), chains = tsl_peak_chains(t);
  size_t pbytes = ((size_t)3 * (size_t)lanes * sizeof(float) + 63) & ~(size_t)63;
  size_t obytes = ((size_t)threads * (size_t)lanes * sizeof(float) + 63) & ~(size_t)63;
  float *params = aligned_alloc(64, pbytes), *res = aligned_alloc(64, obytes);
  tsl_status st = TSL_OK;
  if (!params || !res) st = tsl_error(TSL_ERR_NOMEM, "peak: out of memory");
  if (st == TSL_OK) {
    /* acc -> acc*(1 - 2^-20) + 2^-20 converges to 1: no overflow, no denormals. */
    for (int l = 0; l < lanes; l++) {
      params[l] = 1.0f + 0.125f * (float)l;
      params[lanes + l] = 1.0f - 0x1p-20f;
      params[2 * lanes + l] = 0x1p-20f;
    }
    int64_t iters = PEAK_FMA_ITERS;
    void *pp = params, *pr = res;
    void *args[3] = {&pp, &pr, &iters};
    double flops_per_call = 2.0 * (double)lanes * chains * (double)iters;
    for (int par = 0; par < 2 && st == TSL_OK; par++) {
      tsl_func *f = tsl_peak_fma_func(par ? "tsl_peak_fma_all" : "tsl_peak_fma_1", lanes, chains, par, threads);
      double sec = 0.0, best = 0.0;
      st = time_func(jit, m, f, args, 3, o, &sec, &best);
      if (st != TSL_OK) break;
      double flops = flops_per_call * (par ? threads : 1) * 1e-9;
      *(par ? &out->fma_gflops_all : &out->fma_gflops_1) = flops / sec;
      *(par ? &out->fma_gflops_all_best : &out->fma_gflops_1_best) = flops / best;
    }
  }
  free(params);
  free(res);
  return st;
}

static tsl_status measure_triad(tsl_jit *jit, tsl_module *m, const tsl_target *t, const tsl_peak_opts *o,
                                tsl_peak *out) {
  int lanes = tsl_target_f32_lanes(t);
  int64_t n = o->triad_bytes / (int64_t)sizeof(float) / lanes * lanes;
  size_t bytes = ((size_t)n * sizeof(float) + 4095) & ~(size_t)4095;
  float *a = aligned_alloc(4096, bytes), *b = aligned_alloc(4096, bytes), *c = aligned_alloc(4096, bytes);
  tsl_status st = TSL_OK;
  if (!a || !b || !c) st = tsl_error(TSL_ERR_NOMEM, "peak: cannot allocate 3 x %lld bytes for the triad",
                                     (long long)bytes);
  if (st == TSL_OK) {
    for (int64_t i = 0; i < n; i++) {
      a[i] = 0.0f;
      b[i] = 1.0f;
      c[i] = 2.0f;
    }
    float s = 3.0f;
    void *pb = b, *pc = c, *pa = a;
    void *args[4] = {&pb, &pc, &pa, &s};
    double bytes_per_call = 3.0 * (double)n * sizeof(float);
    for (int par = 0; par < 2 && st == TSL_OK; par++) {
      tsl_func *f = tsl_peak_triad_func(par ? "tsl_peak_triad_all" : "tsl_peak_triad_1", n, lanes, par);
      double sec = 0.0, best = 0.0;
      st = time_func(jit, m, f, args, 4, o, &sec, &best);
      if (st != TSL_OK) break;
      *(par ? &out->triad_gbs_all : &out->triad_gbs_1) = bytes_per_call / sec * 1e-9;
      *(par ? &out->triad_gbs_all_best : &out->triad_gbs_1_best) = bytes_per_call / best * 1e-9;
    }
    out->triad_bytes = n * (int64_t)sizeof(float);
  }
  free(a);
  free(b);
  free(c);
  return st;
}

tsl_status tsl_peak_measure(const tsl_target *t, const tsl_peak_opts *opts, tsl_peak *out) {
  if (!t || !out) return tsl_error(TSL_ERR_INVALID, "peak: NULL target or result");
  tsl_peak_opts o = opts ? *opts : tsl_peak_opts_default();
  if (o.repeat < 1) return tsl_error(TSL_ERR_INVALID, "peak: repeat %d (must be >= 1)", o.repeat);
  if (!(o.min_repeat_ms >= 0.0))
    return tsl_error(TSL_ERR_INVALID, "peak: min_repeat_ms %g (must be >= 0)", o.min_repeat_ms);
  if (o.threads < 0 || o.threads > TSL_MAX_THREADS)
    return tsl_error(TSL_ERR_INVALID, "peak: threads %d (must be 0..%d)", o.threads, TSL_MAX_THREADS);
  int lanes = tsl_target_f32_lanes(t);
  if (o.triad_bytes < 0 || (o.triad_bytes > 0 && o.triad_bytes < (int64_t)sizeof(float) * lanes))
    return tsl_error(TSL_ERR_INVALID, "peak: triad_bytes %lld (must be 0 or at least one %d-lane vector)",
                     (long long)o.triad_bytes, lanes);
  memset(out, 0, sizeof *out);
  out->lanes = lanes;
  out->chains = tsl_peak_chains(t);
  out->threads = o.threads ? o.threads : tsl_get_num_threads();

  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_jit *jit = NULL;
  tsl_module *m = NULL;
  tsl_status st = tsl_jit_new(t, &jit);
  if (st == TSL_OK) st = tsl_module_new(&m);
  /* the all-core kernels need the pool at `threads`; restored below */
  int pool_threads = tsl_get_num_threads();
  if (st == TSL_OK) st = tsl_set_num_threads(out->threads);
  if (st == TSL_OK) st = measure_fma(jit, m, t, &o, out->threads, out);
  if (st == TSL_OK && o.triad_bytes > 0) st = measure_triad(jit, m, t, &o, out);
  tsl_set_num_threads(pool_threads);
  tsl_module_free(m);
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return st;
}
