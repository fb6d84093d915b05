/* The static cost model (tuner/cost_static.h) against hand-computed cycle counts, its
 * records (cost_source) and the tuner's refusal without a device or a usable model.
 *
 * Hand computations (per iteration of the loop body, from the vendors' published
 * latencies and throughputs; the bounds leave room for llvm-mca's pipeline model):
 *   FMA chain: every FMA depends on the previous one (one accumulator), so an iteration
 *   of K FMAs takes K x the FMA latency: 4 cycles on Zen 3 (AMD Software Optimization
 *   Guide for Family 19h, VFMADD*PS latency 4) and on Neoverse N1 (Arm Neoverse N1
 *   Software Optimization Guide, FMLA latency 4).
 *   Load-bound loop: out = a + b on whole vectors, 2 loads + 1 store + 1 add per
 *   vector; Zen 3 stores one 256-bit vector a cycle (and loads two): 1 cycle per vector
 *   (llvm-mca's Zen 3 model gives 1.5-1.6: the upper bound is 2x); Neoverse N1 has two
 *   load/store pipelines for the 3 memory operations: 1.5 cycles.
 * Neoverse N1, not Cortex-A76: LLVM 19 models the A76 (and A72) with its Cortex-A57
 * scheduling model (2 uops per register-offset load: 5 cycles for that loop), which is
 * what the tool then says (docs/cost_static.md, limits).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/conv2d/conv2d_select.h"
#include "tuner/dispatch.h"
#include "tuner/cost_static.h"
#include "tuner/ir_features.h"
#include "tuner/mca.h"
#include "tuner/records.h"
#include "tuner/tune.h"
#include "tuner_tests.h"
#include "tuner_util.h"

/* The two CPUs of the hand computations, each with features it has: "host -mcpu=znver3" on
 * an AVX-512 machine compiles AVX-512 code, which znver3's scheduling model cannot time. */
static const char *const cpus[2] = {"x86-64-avx2 -mcpu=znver3", "armv8 -mcpu=neoverse-n1"};
static const double fma_latency[2] = {4, 4};
static const double store_bound[2] = {1.0, 1.5}; /* cycles per vector of out = a + b */
static const double store_upper[2] = {2.0, 1.5}; /* accepted: up to this times the hand count */

static bool model_here(const tsl_target *t) {
  if (tsl_cost_static_check(t) == TSL_OK) return true;
  fprintf(stderr, "\n  (skipped: %s)\n", tsl_last_error());
  return false;
}

static bool parse(int k, tsl_target *t) {
  if (tsl_target_parse(cpus[k], t) != TSL_OK) return false;
  return model_here(t);
}

/* An FMA chain block in t's syntax: k dependent FMAs on one accumulator. */
static void fma_block(const tsl_target *t, int k, char *buf, size_t n) {
  buf[0] = '\0';
  for (int i = 0; i < k; i++)
    strncat(buf, t->arch == TSL_ARCH_AARCH64 ? "fmla v0.4s, v1.4s, v2.4s\n" : "vfmadd231ps %ymm1, %ymm2, %ymm0\n",
            n - strlen(buf) - 1);
}

static void test_fma_chain_block_is_k_latencies(void) {
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    if (!parse(c, &t)) continue;
    for (int k = 1; k <= 8; k *= 2) {
      char block[1024];
      fma_block(&t, k, block, sizeof block);
      double cyc = 0;
      CU_ASSERT_EQUAL_FATAL(tsl_cost_static_block_cycles(&t, block, &cyc), TSL_OK);
      double want = k * fma_latency[c];
      CU_ASSERT(cyc >= 0.9 * want && cyc <= 1.15 * want);
      if (!(cyc >= 0.9 * want && cyc <= 1.15 * want))
        fprintf(stderr, "\n  %s: %d-FMA chain %.3g cycles, hand %.3g\n", t.cpu, k, cyc, want);
    }
  }
}

/* Lowered-IR kernels of `n` iterations over whole vectors of t's lanes. */
static tsl_func *kernel_fma_chain(const tsl_target *t, int64_t n) {
  int lanes = tsl_target_f32_lanes(t);
  const int64_t len = n * lanes, one = lanes;
  tsl_buffer *a = tsl_buffer_new("a", TSL_F32, 1, &len, TSL_BUF_ARG), *b = tsl_buffer_new("b", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_buffer *acc = tsl_buffer_new("acc", TSL_F32, 1, &one, TSL_BUF_ARG);
  tsl_expr *i = tsl_var("i", TSL_I64);
  tsl_expr *vi = tsl_ramp(tsl_mul(i, tsl_i64(lanes)), tsl_i64(1), lanes), *v0 = tsl_ramp(tsl_i64(0), tsl_i64(1), lanes);
  tsl_expr *args[3] = {tsl_load(a, 1, &vi, NULL), tsl_load(b, 1, &vi, NULL), tsl_load(acc, 1, &v0, NULL)};
  tsl_expr *fma = tsl_call(TSL_CALL_FMA, tsl_type_with_lanes(TSL_F32, lanes), 3, args);
  tsl_stmt *body = tsl_for(i, tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL, tsl_store(acc, 1, &v0, fma, NULL));
  tsl_arg fa[3] = {{.is_buffer = true, .buf = a}, {.is_buffer = true, .buf = b}, {.is_buffer = true, .buf = acc}};
  return tsl_func_new("fma_chain", 3, fa, body);
}

static tsl_func *kernel_add(const tsl_target *t, int64_t n) {
  int lanes = tsl_target_f32_lanes(t);
  const int64_t len = n * lanes;
  tsl_buffer *a = tsl_buffer_new("a", TSL_F32, 1, &len, TSL_BUF_ARG), *b = tsl_buffer_new("b", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_buffer *out = tsl_buffer_new("out", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_expr *i = tsl_var("i", TSL_I64);
  tsl_expr *vi = tsl_ramp(tsl_mul(i, tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *sum = tsl_add(tsl_load(a, 1, &vi, NULL), tsl_load(b, 1, &vi, NULL));
  tsl_stmt *body = tsl_for(i, tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL, tsl_store(out, 1, &vi, sum, NULL));
  tsl_arg fa[3] = {{.is_buffer = true, .buf = a}, {.is_buffer = true, .buf = b}, {.is_buffer = true, .buf = out}};
  return tsl_func_new("add", 3, fa, body);
}

/* for (o, lo, lo + 40) { if (GUARD) { FMA chain of n } else { FMA chain of n } } (both
 * inner loops named i, as the lowering names a partitioned nest's copies), or with
 * guard NULL one chain under the loop: the lowering's partition of a loop into full
 * tiles and a tail, and the same work unpartitioned. */
static tsl_func *kernel_partitioned_chain(const tsl_target *t, int64_t n, tsl_for_kind outer, int64_t lo,
                                          tsl_expr *(*guard)(tsl_expr *o)) {
  int lanes = tsl_target_f32_lanes(t);
  const int64_t len = n * lanes, one = lanes;
  tsl_buffer *a = tsl_buffer_new("a", TSL_F32, 1, &len, TSL_BUF_ARG), *b = tsl_buffer_new("b", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_buffer *acc = tsl_buffer_new("acc", TSL_F32, 1, &one, TSL_BUF_ARG);
  tsl_expr *o = tsl_var("o", TSL_I64);
  tsl_stmt *copies[2];
  for (int c = 0; c < 2; c++) {
    tsl_expr *i = tsl_var("i", TSL_I64);
    tsl_expr *vi = tsl_ramp(tsl_mul(i, tsl_i64(lanes)), tsl_i64(1), lanes), *v0 = tsl_ramp(tsl_i64(0), tsl_i64(1), lanes);
    tsl_expr *args[3] = {tsl_load(a, 1, &vi, NULL), tsl_load(b, 1, &vi, NULL), tsl_load(acc, 1, &v0, NULL)};
    tsl_expr *fma = tsl_call(TSL_CALL_FMA, tsl_type_with_lanes(TSL_F32, lanes), 3, args);
    copies[c] = tsl_for(i, tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL, tsl_store(acc, 1, &v0, fma, NULL));
  }
  tsl_stmt *inner = guard ? tsl_if(guard(o), copies[0], copies[1]) : copies[0];
  tsl_stmt *body = tsl_for(o, tsl_i64(lo), tsl_i64(40), outer, inner);
  tsl_arg fa[3] = {{.is_buffer = true, .buf = a}, {.is_buffer = true, .buf = b}, {.is_buffer = true, .buf = acc}};
  return tsl_func_new("partitioned_chain", 3, fa, body);
}

/* Guards on o in [lo, lo + 40) with lo = 5: (then-branch iterations of 40). */
static tsl_expr *g_lt(tsl_expr *o) { return tsl_lt(o, tsl_i64(35)); }                  /* 5..34: 30 */
static tsl_expr *g_le(tsl_expr *o) { return tsl_le(o, tsl_i64(34)); }   /* 30 */
static tsl_expr *g_gt(tsl_expr *o) { return tsl_gt(o, tsl_i64(34)); }   /* 35..44: 10 */
static tsl_expr *g_ge(tsl_expr *o) { return tsl_ge(o, tsl_i64(35)); }   /* 10 */
static tsl_expr *g_eq(tsl_expr *o) { return tsl_eq(o, tsl_i64(44)); }   /* the tail: 1 */
static tsl_expr *g_ne(tsl_expr *o) { return tsl_ne(o, tsl_i64(44)); }   /* 39 */
static tsl_expr *g_rev(tsl_expr *o) { return tsl_gt(tsl_i64(35), o); }  /* 35 > o: 30 */

/* Copies of a nest under `if (GUARD) ... else ...` on a loop variable run in the share
 * of the loop's iterations the guard gives them (tsl_ir_nests), for every comparison and
 * a loop that does not start at 0; the static model's memory term then brings the
 * partitioned kernel's arrays in as often as the unpartitioned one's (each copy counted
 * at the loop's whole extent brought them in twice: versions 1-4 of the model,
 * docs/cost_static.md "Partitioned nests"). The compute term is not checked here: in
 * this kernel LLVM's loop rotation leaves the inner loops' trip counts unread (their
 * latches branch to merged `endif` blocks), which the Winograd figures in the docs do
 * not share. */
static void test_partitioned_copies_count_their_share_of_the_loop(void) {
  struct {
    tsl_expr *(*guard)(tsl_expr *);
    double then_iters;
  } cases[] = {{g_lt, 30}, {g_le, 30}, {g_gt, 10}, {g_ge, 10}, {g_eq, 1}, {g_ne, 39}, {g_rev, 30}};
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tsl_ir_nest *nests = NULL;
    int nn = 0;
    CU_ASSERT_EQUAL_FATAL(tsl_ir_nests(kernel_partitioned_chain(&host, 64, TSL_FOR_SERIAL, 5, cases[k].guard), &nests, &nn),
                          TSL_OK);
    CU_ASSERT_EQUAL(nn, 2);
    if (nn == 2) {
      CU_ASSERT_DOUBLE_EQUAL(nests[0].share[0], cases[k].then_iters / 40, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(nests[1].share[0], 1 - cases[k].then_iters / 40, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(nests[0].share[1], 1.0, 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(nests[0].extents[0], 40, 1e-12);
    }
    free(nests);
  }
  /* the unpartitioned nest: share 1 */
  tsl_ir_nest *whole = NULL;
  int nw = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_ir_nests(kernel_partitioned_chain(&host, 64, TSL_FOR_SERIAL, 0, NULL), &whole, &nw), TSL_OK);
  CU_ASSERT(nw == 1 && whole[0].share[0] == 1.0);
  free(whole);
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    if (!parse(c, &t)) continue;
    for (int kind = 0; kind < 2; kind++) {
      tsl_for_kind outer = kind == 0 ? TSL_FOR_SERIAL : TSL_FOR_PARALLEL;
      tsl_cost_static_detail part, one;
      CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(kernel_partitioned_chain(&t, 2048, outer, 0, g_lt), &t, 1, &part), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(kernel_partitioned_chain(&t, 2048, outer, 0, NULL), &t, 1, &one), TSL_OK);
      CU_ASSERT(one.l1_fill_bytes > 0);
      CU_ASSERT_DOUBLE_EQUAL(part.l1_fill_bytes, one.l1_fill_bytes, 1e-9 * one.l1_fill_bytes);
      if (fabs(part.l1_fill_bytes - one.l1_fill_bytes) > 1e-9 * one.l1_fill_bytes)
        fprintf(stderr, "\n  %s (outer %s): partitioned %.6g bytes into L1, unpartitioned %.6g\n", t.cpu,
                kind == 0 ? "serial" : "parallel", part.l1_fill_bytes, one.l1_fill_bytes);
    }
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

static void test_fma_chain_kernel_is_n_latencies(void) {
  const int64_t n = 4096;
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    if (!parse(c, &t)) continue;
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_cost_static_detail d;
    CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(kernel_fma_chain(&t, n), &t, 1, &d), TSL_OK);
    double want = (double)n * fma_latency[c];
    CU_ASSERT(d.loops >= 1);
    CU_ASSERT_EQUAL(d.loops_guessed, 0);
    CU_ASSERT(d.cycles >= 0.9 * want && d.cycles <= 1.25 * want);
    if (!(d.cycles >= 0.9 * want && d.cycles <= 1.25 * want))
      fprintf(stderr, "\n  %s: FMA chain kernel %.6g cycles, hand %.6g\n", t.cpu, d.cycles, want);
    /* one nest: the roofline is the larger of its compute and memory times */
    int cores = 0;
    double ghz = tsl_cost_static_figures(&t, &cores)->ghz;
    CU_ASSERT(fabs(d.compute_s - d.cycles / (ghz * 1e9)) <= 1e-9 * d.compute_s);
    double roof = d.compute_s > d.memory_s ? d.compute_s : d.memory_s;
    CU_ASSERT(fabs(d.seconds - roof) <= 1e-9 * d.seconds);
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
  }
}

static void test_load_bound_kernel_is_store_bound_and_its_traffic_is_the_arrays(void) {
  const int64_t n = 2048;
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    if (!parse(c, &t)) continue;
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_cost_static_detail d;
    CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(kernel_add(&t, n), &t, 1, &d), TSL_OK);
    double want = (double)n * store_bound[c];
    CU_ASSERT(d.loops >= 1);
    CU_ASSERT_EQUAL(d.loops_guessed, 0);
    CU_ASSERT(d.cycles >= 0.75 * want && d.cycles <= store_upper[c] * want);
    if (!(d.cycles >= 0.75 * want && d.cycles <= store_upper[c] * want))
      fprintf(stderr, "\n  %s: a + b kernel %.6g cycles, hand %.6g\n", t.cpu, d.cycles, want);
    /* the three arrays (larger than L1) come into L1 once each */
    double bytes = 3.0 * (double)n * tsl_target_f32_lanes(&t) * 4;
    CU_ASSERT_DOUBLE_EQUAL(d.l1_fill_bytes, bytes, 1e-6 * bytes);
    CU_ASSERT(d.seconds >= d.memory_s && d.seconds >= d.compute_s);
    /* the per-candidate cache */
    tsl_cost_static_detail again;
    CU_ASSERT_EQUAL(tsl_cost_static_func(kernel_add(&t, n), &t, 1, &again), TSL_OK);
    CU_ASSERT(again.cached);
    CU_ASSERT_DOUBLE_EQUAL(again.seconds, d.seconds, 0);
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
  }
}

/* out[r][j] = x[r][j] * w[j] over rows r (outer) and vectors j (inner): w, the weights
 * every row shares, does not depend on r. */
static tsl_func *kernel_rows_times_shared(const tsl_target *t, int64_t rows, int64_t vecs) {
  int lanes = tsl_target_f32_lanes(t);
  const int64_t len = rows * vecs * lanes, wlen = vecs * lanes;
  tsl_buffer *x = tsl_buffer_new("x", TSL_F32, 1, &len, TSL_BUF_ARG), *w = tsl_buffer_new("w", TSL_F32, 1, &wlen, TSL_BUF_ARG);
  tsl_buffer *out = tsl_buffer_new("out", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_expr *r = tsl_var("r", TSL_I64), *j = tsl_var("j", TSL_I64);
  tsl_expr *vw = tsl_ramp(tsl_mul(j, tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *vx = tsl_ramp(tsl_add(tsl_mul(r, tsl_i64(wlen)), tsl_mul(j, tsl_i64(lanes))), tsl_i64(1), lanes);
  tsl_expr *prod = tsl_mul(tsl_load(x, 1, &vx, NULL), tsl_load(w, 1, &vw, NULL));
  tsl_stmt *inner = tsl_for(j, tsl_i64(0), tsl_i64(vecs), TSL_FOR_SERIAL, tsl_store(out, 1, &vx, prod, NULL));
  tsl_stmt *body = tsl_for(r, tsl_i64(0), tsl_i64(rows), TSL_FOR_SERIAL, inner);
  tsl_arg fa[3] = {{.is_buffer = true, .buf = x}, {.is_buffer = true, .buf = w}, {.is_buffer = true, .buf = out}};
  return tsl_func_new("rows_times_shared", 3, fa, body);
}

/* The memory term's reuse (version 4): when one row's footprint (x, w and out rows)
 * fits half of L1, w comes into L1 once and x and out once per row: (2 rows + 1) row
 * vectors (version 3 charged w at every row: 3 rows). When a row does not fit, every
 * row brings w in again: 3 rows. */
static void test_shared_operand_is_brought_in_once_when_a_row_fits(void) {
  const int64_t rows = 64;
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    if (!parse(c, &t)) continue;
    double vec = 4.0 * tsl_target_f32_lanes(&t), l1 = (double)t.l1d_bytes;
    /* a row of l1/4 bytes (three arrays of l1/12) fits half of L1; 64 rows do not */
    int64_t fits = (int64_t)(l1 / 12 / vec), spills = (int64_t)(l1 / vec);
    for (int k = 0; k < 2; k++) {
      int64_t vecs = k == 0 ? fits : spills;
      double row = (double)vecs * vec;
      double want = k == 0 ? (2.0 * rows + 1) * row : 3.0 * rows * row;
      tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
      tsl_ir_nest *nests = NULL;
      int nn = 0;
      tsl_func *f = kernel_rows_times_shared(&t, rows, vecs);
      CU_ASSERT_EQUAL_FATAL(tsl_ir_nests(f, &nests, &nn), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(nn, 1);
      double got = tsl_cost_static_fill_bytes(&nests[0], l1);
      CU_ASSERT_DOUBLE_EQUAL(got, want, 1e-6 * want);
      if (fabs(got - want) > 1e-6 * want)
        fprintf(stderr, "\n  %s: %lld vectors a row: into L1 %.6g B, hand %.6g B\n", t.cpu, (long long)vecs, got, want);
      /* the whole estimate uses the same traffic */
      tsl_cost_static_detail d;
      CU_ASSERT_EQUAL(tsl_cost_static_func(f, &t, 1, &d), TSL_OK);
      CU_ASSERT_DOUBLE_EQUAL(d.l1_fill_bytes, want, 1e-6 * want);
      free(nests);
      tsl_arena_set_current(prev);
      tsl_arena_free(ar);
    }
  }
}

static void test_parallel_split_divides_by_the_cores(void) {
  tsl_target t;
  if (!parse(1, &t)) return;
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  /* for (p, 0, 8) parallel: the FMA chain kernel's loop, 8 independent rows */
  int lanes = tsl_target_f32_lanes(&t);
  const int64_t n = 512, len = 8 * n * lanes, accs = 8 * lanes;
  tsl_buffer *a = tsl_buffer_new("a", TSL_F32, 1, &len, TSL_BUF_ARG), *acc = tsl_buffer_new("acc", TSL_F32, 1, &accs, TSL_BUF_ARG);
  tsl_expr *p = tsl_var("p", TSL_I64), *i = tsl_var("i", TSL_I64);
  tsl_expr *vi = tsl_ramp(tsl_mul(tsl_add(tsl_mul(p, tsl_i64(n)), i), tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *vp = tsl_ramp(tsl_mul(p, tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *args[3] = {tsl_load(a, 1, &vi, NULL), tsl_load(a, 1, &vi, NULL), tsl_load(acc, 1, &vp, NULL)};
  tsl_expr *fma = tsl_call(TSL_CALL_FMA, tsl_type_with_lanes(TSL_F32, lanes), 3, args);
  tsl_stmt *inner = tsl_for(i, tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL, tsl_store(acc, 1, &vp, fma, NULL));
  tsl_arg fa[2] = {{.is_buffer = true, .buf = a}, {.is_buffer = true, .buf = acc}};
  tsl_func *f = tsl_func_new("par", 2, fa, tsl_for(p, tsl_i64(0), tsl_i64(8), TSL_FOR_PARALLEL, inner));
  tsl_cost_static_detail d1, d4, d3;
  CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(f, &t, 1, &d1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(f, &t, 4, &d4), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_cost_static_func(f, &t, 3, &d3), TSL_OK);
  /* the task's chunk loop has no constant trip count: its name gives the 8 rows */
  double want = 8.0 * n * fma_latency[1];
  CU_ASSERT(d1.cycles >= 0.9 * want && d1.cycles <= 1.25 * want);
  CU_ASSERT_EQUAL(d1.loops_guessed, 0);
  CU_ASSERT_DOUBLE_EQUAL(d1.parallel, 8, 0);
  CU_ASSERT_DOUBLE_EQUAL(d4.compute_s, d1.compute_s / 4, 1e-9 * d1.compute_s);
  CU_ASSERT_DOUBLE_EQUAL(d3.compute_s, d1.compute_s * 3 / 8, 1e-9 * d1.compute_s); /* ceil(8/3) = 3 rows each */
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

static void test_static_records_round_trip_and_never_beat_measured_ones(void) {
  tsl_record r;
  memset(&r, 0, sizeof r);
  snprintf(r.target, sizeof r.target, "armv8");
  snprintf(r.task, sizeof r.task, "matmul");
  snprintf(r.workload, sizeof r.workload, "matmul(A:f32[8,8],B:f32[8,8];)");
  snprintf(r.algorithm, sizeof r.algorithm, "matmul.blis");
  snprintf(r.template_name, sizeof r.template_name, "matmul.blis");
  r.space_hash = 0x1234;
  r.ncosts = 1;
  r.costs[0] = 1e-6;
  r.threads = tsl_get_num_threads();
  snprintf(r.cost_source, sizeof r.cost_source, "static");
  snprintf(r.cost_model, sizeof r.cost_model, "%s", TSL_COST_STATIC_MODEL);
  char *line = tsl_record_to_json(&r);
  CU_ASSERT_FATAL(line != NULL);
  CU_ASSERT(strstr(line, "\"cost_source\":\"static\"") != NULL);
  CU_ASSERT(strstr(line, "\"cost_model\":\"" TSL_COST_STATIC_MODEL "\"") != NULL);
  tsl_record back;
  CU_ASSERT_EQUAL_FATAL(tsl_record_from_json(line, &back), TSL_OK);
  free(line);
  CU_ASSERT(tsl_record_is_static(&back));
  CU_ASSERT_STRING_EQUAL(back.cost_model, TSL_COST_STATIC_MODEL);
  /* a measured record: no field written, none read back */
  tsl_record m = r;
  m.cost_source[0] = m.cost_model[0] = '\0';
  m.costs[0] = 5e-6; /* slower than the estimate */
  line = tsl_record_to_json(&m);
  CU_ASSERT(line && !strstr(line, "cost_source"));
  CU_ASSERT_EQUAL(tsl_record_from_json(line, &back), TSL_OK);
  free(line);
  CU_ASSERT(!tsl_record_is_static(&back));
  CU_ASSERT_EQUAL(tsl_record_from_json("{\"input\":[\"armv8\",\"matmul\",\"w\"],\"config\":{\"algorithm\":\"a\","
                                       "\"template\":\"t\",\"space_hash\":\"0000000000001234\",\"index\":0,"
                                       "\"entity\":[]},\"result\":[[1e-6],0,0,0],\"version\":0.2,"
                                       "\"cost_source\":\"guessed\"}",
                                       &back),
                  TSL_ERR_PARSE);
  /* the lookup: the measured record wins though the estimate is smaller; alone, the
   * estimate is found; a family measurement beats an exact estimate */
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_add(db, &r), TSL_OK);
  const tsl_record *best = NULL;
  tsl_match_kind match;
  CU_ASSERT_EQUAL(tsl_records_best(db, "armv8", r.workload, NULL, 0, &best, &match), TSL_OK);
  CU_ASSERT(best && tsl_record_is_static(best) && match == TSL_MATCH_EXACT);
  tsl_record fam = m;
  snprintf(fam.target, sizeof fam.target, "armv8 -mcpu=cortex-a72");
  CU_ASSERT_EQUAL(tsl_records_add(db, &fam), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_best(db, "armv8", r.workload, NULL, 0, &best, &match), TSL_OK);
  CU_ASSERT(best && !tsl_record_is_static(best) && match == TSL_MATCH_FAMILY);
  CU_ASSERT_EQUAL(tsl_records_add(db, &m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_best(db, "armv8", r.workload, NULL, 0, &best, &match), TSL_OK);
  CU_ASSERT(best && !tsl_record_is_static(best) && match == TSL_MATCH_EXACT);
  /* a measured and a static record of one config both stay through dedupe */
  tsl_records_dedupe(db);
  CU_ASSERT_EQUAL(db->n, 3);
  CU_ASSERT(tsl_records_has(db, "armv8", r.workload, "matmul.blis", 0x1234, &r.config));
  tsl_records_free(db);
}

static tsl_workload square_matmul(int64_t n) {
  const int64_t a[] = {n, n}, b[] = {n, n};
  const int64_t *shapes[] = {a, b};
  const int nd[] = {2, 2};
  tsl_workload w;
  tsl_workload_init(&w, "matmul", 2, shapes, nd, 0, NULL);
  return w;
}

static void test_tune_without_device_or_model_fails_at_once_naming_both_ways_out(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  const char *old = getenv(TSL_MCA_ENV);
  char *saved = old ? strdup(old) : NULL;
  setenv(TSL_MCA_ENV, "/nonexistent/llvm-mca", 1);
  tsl_tune_opts o = tsl_tune_opts_default();
  o.measure.cost_static = true;
  tsl_workload w = square_matmul(8);
  tsl_tune_result res;
  CU_ASSERT_EQUAL(tsl_tune_workload(&t, &w, &o, &res), TSL_ERR_UNSUPPORTED);
  const char *msg = tsl_last_error();
  CU_ASSERT(strstr(msg, "--device") != NULL);
  CU_ASSERT(strstr(msg, "llvm-mca-19") != NULL && strstr(msg, TSL_MCA_ENV) != NULL);
  CU_ASSERT(strstr(msg, "/nonexistent/llvm-mca") != NULL); /* what failed */
  /* an unknown CPU: refused, not costed with a generic model */
  if (saved) setenv(TSL_MCA_ENV, saved, 1);
  else unsetenv(TSL_MCA_ENV);
  free(saved);
  if (tsl_cost_static_check(&t) == TSL_OK) {
    CU_ASSERT_EQUAL(tsl_mca_check(t.triple, "not-a-cpu"), TSL_ERR_UNSUPPORTED);
    CU_ASSERT(strstr(tsl_last_error(), "not-a-cpu") != NULL);
  }
  /* measured, no device: the measured refusal names the static way out too */
  o.measure.cost_static = false;
  CU_ASSERT_EQUAL(tsl_tune_check_target(&t, &o.measure), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(strstr(tsl_last_error(), "--cost static") != NULL);
}

static void test_static_tune_of_a_cross_target_writes_static_records(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  if (!model_here(&t)) return;
  tsl_workload w = square_matmul(16);
  tsl_tune_opts o = tsl_tune_opts_default();
  o.measure.cost_static = true;
  o.measure.build_timeout_s = o.measure.run_timeout_s = 10;
  o.only_template = "matmul.blis"; /* not the tuner suites' injected crashing one */
  o.search = TSL_SEARCH_RANDOM;
  o.trials = 6;
  o.batch = 3;
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  o.db = db;
  tsl_tune_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&t, &w, &o, &res), TSL_OK);
  CU_ASSERT(res.found && isfinite(res.best_cost) && res.best_cost > 0);
  CU_ASSERT(db->n >= 1);
  int ok = 0;
  for (int i = 0; i < db->n; i++) {
    CU_ASSERT(tsl_record_is_static(&db->recs[i]));
    CU_ASSERT_STRING_EQUAL(db->recs[i].cost_model, TSL_COST_STATIC_MODEL);
    CU_ASSERT(strncmp(db->recs[i].device.cpu, "static model of cortex-a53", 26) == 0);
    ok += db->recs[i].error_no == TSL_MEASURE_OK;
  }
  CU_ASSERT(ok >= 1);
  /* the measured path does not resume from the estimates: armv8 cannot run here */
  o.measure.cost_static = false;
  CU_ASSERT_EQUAL(tsl_tune_workload(&t, &w, &o, &res), TSL_ERR_UNSUPPORTED);
  tsl_records_free(db);
}

static void test_prefilter_and_shadow_on_a_measured_tune(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  if (!model_here(&t)) return;
  tsl_workload w = square_matmul(32);
  tsl_tune_opts o = tsl_tune_opts_default();
  o.measure.time.repeat = 2;
  o.measure.time.min_repeat_ms = 1;
  o.measure.threads = 1;
  o.only_template = "matmul.blis";
  o.search = TSL_SEARCH_RANDOM;
  o.trials = 4;
  o.batch = 4;
  o.prefilter = 1; /* each batch of 4: the static best one is measured */
  char shadow[] = "/tmp/tessel-shadow-XXXXXX";
  int fd = mkstemp(shadow);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  o.shadow_static_path = shadow;
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  o.db = db;
  tsl_tune_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&t, &w, &o, &res), TSL_OK);
  /* the default, then 3 batches of one measurement each; estimates are not records */
  CU_ASSERT_EQUAL(res.measured, 4);
  CU_ASSERT_EQUAL(db->n, 4);
  for (int i = 0; i < db->n; i++) CU_ASSERT(!tsl_record_is_static(&db->recs[i]));
  /* every measured candidate has its static record in the shadow file */
  tsl_records *sh = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&sh), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_load(sh, shadow, true, NULL), TSL_OK);
  CU_ASSERT_EQUAL(sh->n, 4);
  for (int i = 0; i < sh->n; i++) CU_ASSERT(tsl_record_is_static(&sh->recs[i]));
  CU_ASSERT(res.static_pairs >= 2 && res.static_pairs <= 4);
  CU_ASSERT(res.static_spearman >= -1 && res.static_spearman <= 1);
  tsl_records_free(sh);
  tsl_records_free(db);
  unlink(shadow);
}

static void test_spearman_of_known_orders(void) {
  const double a[5] = {1, 2, 3, 4, 5}, up[5] = {10, 20, 30, 40, 50}, down[5] = {5, 4, 3, 2, 1};
  const double ties[4] = {1, 1, 2, 2}, x[4] = {1, 2, 3, 4};
  CU_ASSERT_DOUBLE_EQUAL(tsl_spearman(a, up, 5), 1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(tsl_spearman(a, down, 5), -1, 1e-12);
  /* ranks 1.5 1.5 3.5 3.5 against 1 2 3 4: 4 / sqrt(4 * 5) */
  CU_ASSERT_DOUBLE_EQUAL(tsl_spearman(ties, x, 4), 4 / sqrt(20.0), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(tsl_spearman(a, a, 1), 0, 0);
}

/* What the dispatch runs for w from db: its template and the cost of the record used. */
static void dispatch_pick(const tsl_records *db, const tsl_target *t, const tsl_workload *w, char *tpl, size_t n,
                          double *cost) {
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  tsl_status st = tsl_dispatch_schedule_any(db, t, w, NULL, &p, &s, &info);
  if (st != TSL_OK) printf("\n    dispatch: %s", tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  snprintf(tpl, n, "%s", st == TSL_OK ? info.template_name : "");
  *cost = st == TSL_OK ? info.cost : NAN;
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

/* The pick margin (TSL_COST_STATIC_PICK_MARGIN, docs/cost_static.md) on hand-made
 * estimates of a real conv layer (the unscaled 1x1 projection of tuner_util.h's graph):
 * the default schedule's estimate D (its default algorithm, tsl_conv2d_select's, at its
 * default config) and another algorithm's estimate E. The rule restated: E wins when E <
 * (1 - margin) D, else the default runs; without an estimate of the default, E wins;
 * measured records have no margin (the faster one wins). */
static void test_static_pick_needs_the_margin_over_the_default(void) {
  tsl_conv_layer layers[TT_SE_MAX_LAYERS];
  int n = 0, l = -1;
  tsl_graph *g = tt_se_graph(layers, &n);
  for (int i = 0; i < n; i++)
    if (layers[i].only_algo < 0 && layers[i].desc.K == TT_SE_K_OUT) l = i;
  CU_ASSERT_FATAL(l >= 0);
  const tsl_workload *w = &layers[l].workload;
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_conv2d_layer d;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_layer_of_workload(w, &d), TSL_OK);
  tsl_conv2d_algo sel = tsl_conv2d_select(&d, &t), ca;
  tsl_algo_choice algos[16];
  int na = tsl_algorithms_for(w, algos, 16, NULL), def = -1, other = -1;
  for (int a = 0; a < na && a < 16; a++) {
    bool is_sel = tsl_conv2d_algo_of_op(algos[a].op_workload.op, &ca) && ca == sel;
    if (is_sel && def < 0) def = a;
    if (!is_sel && other < 0) other = a;
  }
  if (def < 0 || other < 0) {
    printf("\n    (skipped: the layer has no second algorithm on this host)");
    tsl_graph_free(g);
    return;
  }
  const double D = 1e-4, M = TSL_COST_STATIC_PICK_MARGIN;
  struct {
    double e;        /* the other algorithm's estimate */
    bool with_def;   /* the default's estimate in the records */
    bool measured;   /* both records measured, not estimated */
    bool other_wins; /* expected */
  } cases[] = {
      {0.5 * D, true, false, true},              /* clearly better */
      {(1 - M) * D * 0.98, true, false, true},   /* just past the margin */
      {(1 - M) * D * 1.02, true, false, false},  /* just within it */
      {0.99 * D, true, false, false},            /* within the noise */
      {1.5 * D, true, false, false},             /* slower */
      {0.99 * D, false, false, true},            /* no default estimate to keep */
      {0.99 * D, true, true, true},              /* measured: the faster one, no margin */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tsl_record rd, ro;
    CU_ASSERT_TRUE_FATAL(tt_algo_record_at(w, "host", def, -1, D, NULL, &rd));
    CU_ASSERT_TRUE_FATAL(tt_algo_record_at(w, "host", other, -1, cases[k].e, NULL, &ro));
    tsl_records *db = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
    tsl_record *both[2] = {&rd, &ro};
    for (int i = 0; i < 2; i++) {
      both[i]->threads = tsl_get_num_threads();
      if (!cases[k].measured) {
        snprintf(both[i]->cost_source, sizeof both[i]->cost_source, "static");
        snprintf(both[i]->cost_model, sizeof both[i]->cost_model, "%s", TSL_COST_STATIC_MODEL);
      }
      if (i == 1 || cases[k].with_def) CU_ASSERT_EQUAL(tsl_records_add(db, both[i]), TSL_OK);
    }
    char tpl[96];
    double cost;
    dispatch_pick(db, &t, w, tpl, sizeof tpl, &cost);
    const tsl_record *want = cases[k].other_wins ? &ro : &rd;
    if (strcmp(tpl, want->template_name) != 0)
      printf("\n    case %zu: E/D %.3f ran %s, want %s", k, cases[k].e / D, tpl, want->template_name);
    CU_ASSERT_STRING_EQUAL(tpl, want->template_name);
    /* the default without a record of its own runs untuned (cost +inf) */
    if (cases[k].other_wins || cases[k].with_def) CU_ASSERT_DOUBLE_EQUAL(cost, tsl_record_cost(want), 1e-15);
    tsl_records_free(db);
  }
  tsl_graph_free(g);
}

void tsl_tests_tuner_cost_static(void) {
  CU_pSuite s = CU_add_suite("tuner_cost_static", NULL, NULL);
  CU_add_test(s, "an FMA chain block costs K FMA latencies (znver3, neoverse-n1)", test_fma_chain_block_is_k_latencies);
  CU_add_test(s, "an FMA chain kernel costs N latencies", test_fma_chain_kernel_is_n_latencies);
  CU_add_test(s, "copies of a nest under a loop's partition count their share of it",
              test_partitioned_copies_count_their_share_of_the_loop);
  CU_add_test(s, "a load-bound kernel: store throughput, arrays' traffic, cache",
              test_load_bound_kernel_is_store_bound_and_its_traffic_is_the_arrays);
  CU_add_test(s, "a shared operand comes into L1 once when a row fits",
              test_shared_operand_is_brought_in_once_when_a_row_fits);
  CU_add_test(s, "the parallel split divides by the cores", test_parallel_split_divides_by_the_cores);
  CU_add_test(s, "static records round-trip and never beat measured ones",
              test_static_records_round_trip_and_never_beat_measured_ones);
  CU_add_test(s, "tune without device or model fails at once naming both ways out",
              test_tune_without_device_or_model_fails_at_once_naming_both_ways_out);
  CU_add_test(s, "a static tune of armv8 writes static records", test_static_tune_of_a_cross_target_writes_static_records);
  CU_add_test(s, "--prefilter measures the static best of each batch; --static-shadow records estimates",
              test_prefilter_and_shadow_on_a_measured_tune);
  CU_add_test(s, "Spearman of known orders and ties", test_spearman_of_known_orders);
  CU_add_test(s, "a static pick needs the margin over the default's estimate",
              test_static_pick_needs_the_margin_over_the_default);
}
