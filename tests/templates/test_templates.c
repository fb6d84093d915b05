/* Schedule templates (ops/<family>/) and the peak kernels (tuner/peak.h).
 *
 * The matmul template's kernels are compared with tests/ref's naive float64 matmul on
 * odd shapes (extents that divide none of the blocks, extents smaller than one block or
 * one vector), with the hand-tuned default knobs and with knob sets that switch on each
 * structural option; the peak kernels with the same arithmetic done by C's fmaf.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "ref/ref_ops.h"
#include "runtime/module.h"
#include "schedule/lower.h"
#include "ops/matmul/matmul_schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/peak.h"

static tsl_jit *jit;
static tsl_target host;

static int suite_init(void) {
  if (tsl_target_parse("host", &host) != TSL_OK) return 1;
  return tsl_jit_new(&host, &jit) != TSL_OK;
}

static int suite_clean(void) {
  tsl_jit_free(jit);
  jit = NULL;
  return 0;
}

static float *alloc_floats(int64_t n) {
  size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) & ~(size_t)63;
  float *p = aligned_alloc(64, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

static tsl_te_program *matmul_program(int64_t M, int64_t N, int64_t K) {
  int64_t sa[2] = {M, K}, sb[2] = {K, N};
  const int64_t *shapes[2] = {sa, sb};
  int ndims[2] = {2, 2};
  tsl_te_program *p = NULL;
  return tsl_op_instantiate("matmul", 2, shapes, ndims, 0, NULL, &p) == TSL_OK ? p : NULL;
}

/* Runs the template (knobs NULL = defaults) on M x N x K and returns the relative error
 * against ref_matmul, or +inf (printing why) when anything failed. */
static double template_error(int64_t M, int64_t N, int64_t K, const tsl_matmul_knobs *knobs) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  double err = INFINITY;
  tsl_schedule *s = NULL;
  tsl_module *m = NULL;
  float *A = alloc_floats(M * K), *B = alloc_floats(K * N), *C = alloc_floats(M * N), *R = alloc_floats(M * N);
  tsl_te_program *p = matmul_program(M, N, K);
  tsl_status st = p ? TSL_OK : TSL_ERR_INVALID;
  if (st == TSL_OK) st = tsl_matmul_schedule(p, &host, knobs, &s);
  if (st == TSL_OK) st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, "matmul_tpl", jit, m, NULL, NULL);
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_module_get_kernel(m, "matmul_tpl", &k);
  if (st == TSL_OK && A && B && C && R) {
    ref_fill_uniform(A, M * K, 7, -1.0f, 1.0f);
    ref_fill_uniform(B, K * N, 8, -1.0f, 1.0f);
    for (int64_t i = 0; i < M * N; i++) C[i] = NAN; /* every element must be written */
    void *pa = A, *pb = B, *pc = C;
    void *args[3] = {&pa, &pb, &pc};
    st = tsl_kernel_call(k, args, 3);
    if (st == TSL_OK) {
      ref_matmul(M, N, K, A, B, R);
      err = ref_max_rel_error(C, R, M * N);
    }
  }
  if (st != TSL_OK)
    printf("\n  matmul %lldx%lldx%lld: %s\n", (long long)M, (long long)N, (long long)K, tsl_last_error());
  else if (!(err < 1e-5)) printf("\n  matmul %lldx%lldx%lld: relative error %g\n", (long long)M, (long long)N,
                                 (long long)K, err);
  free(A);
  free(B);
  free(C);
  free(R);
  tsl_module_free(m);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return err;
}

/* ---- matmul template ---- */

static void test_matmul_default_knobs_odd_shapes_match_reference(void) {
  /* 1x1x1; smaller than one vector and one register block; primes that divide no
   * block; just above a block; the benchmark's odd 1000 is covered by a scaled-down
   * relative (k blocks of 250 need K = 1000, rows and columns stay small). */
  static const int64_t shapes[][3] = {{1, 1, 1},   {1, 13, 7},   {13, 1, 5},    {7, 9, 3},   {5, 7, 300},
                                      {17, 33, 65}, {50, 37, 29}, {97, 101, 103}, {6, 16, 256}, {31, 24, 1000}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    CU_ASSERT(template_error(shapes[i][0], shapes[i][1], shapes[i][2], NULL) < 1e-5);
}

static tsl_matmul_knobs small_blocks(void) {
  tsl_matmul_knobs k = tsl_matmul_default_knobs(&host, 45, 50, 70);
  /* blocks that leave tails on every axis of a 45 x 50 x 70 product */
  k.mr = 4;
  k.nr = 2 * k.vec;
  k.kc = 16;
  k.mc = 12;
  k.nc = 2 * k.nr;
  k.ku = 3;
  return k;
}

static void test_matmul_every_option_with_tails_matches_reference(void) {
  const int64_t M = 45, N = 50, K = 70;
  for (int variant = 0; variant < 12; variant++) {
    tsl_matmul_knobs k = small_blocks();
    k.pack_b = (tsl_matmul_pack)(variant % 3);
    k.pack_a = (variant / 3) % 2 == 1;
    k.cache_c = variant >= 6;
    k.parallel = variant % 2 == 0;
    double err = template_error(M, N, K, &k);
    if (!(err < 1e-5)) printf("  (variant %d: pack_b %d pack_a %d cache_c %d)\n", variant, (int)k.pack_b, k.pack_a,
                              k.cache_c);
    CU_ASSERT(err < 1e-5);
  }
}

static void test_matmul_scalar_and_single_row_blocks_match_reference(void) {
  tsl_matmul_knobs k = small_blocks();
  k.vec = 1;
  k.nr = 3;
  k.nc = 9;
  CU_ASSERT(template_error(11, 10, 9, &k) < 1e-5);
  k = small_blocks();
  k.mr = 1;
  k.mc = 1;
  k.kc = 1;
  k.ku = 1;
  CU_ASSERT(template_error(3, 19, 5, &k) < 1e-5);
}

static void test_matmul_knobs_larger_than_shape_are_clamped(void) {
  tsl_matmul_knobs k = tsl_matmul_default_knobs(&host, 1024, 1024, 1024);
  k.cache_c = true;
  k.pack_a = true;
  CU_ASSERT(template_error(3, 5, 2, &k) < 1e-5);
}

static void test_matmul_parallel_two_threads_equals_one(void) {
  int saved = tsl_get_num_threads();
  CU_ASSERT_EQUAL(tsl_set_num_threads(2), TSL_OK);
  CU_ASSERT(template_error(61, 43, 37, NULL) < 1e-5);
  tsl_matmul_knobs k = small_blocks();
  k.cache_c = true;
  k.pack_b = TSL_MATMUL_PACK_BLOCK;
  CU_ASSERT(template_error(61, 43, 37, &k) < 1e-5);
  tsl_set_num_threads(saved);
}

static void test_matmul_default_knobs_are_valid(void) {
  static const int64_t shapes[][3] = {
      {1, 1, 1}, {256, 256, 256}, {1000, 1000, 1000}, {1024, 1024, 1024}, {7, 3000, 5}, {64, 64, 20000}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    int64_t M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
    tsl_matmul_knobs k = tsl_matmul_default_knobs(&host, M, N, K);
    CU_ASSERT_EQUAL(tsl_matmul_knobs_check(&k, M, N, K), TSL_OK);
    CU_ASSERT_EQUAL(k.nr % k.vec, 0);
    CU_ASSERT_EQUAL(k.vec, tsl_target_f32_lanes(&host)); /* 8 with AVX2, 16 with AVX-512 */
  }
  /* a long K takes k blocks (balanced: 20000 = 80 x 250, no tail), a short one the
   * whole-K register blocks */
  tsl_matmul_knobs k = tsl_matmul_default_knobs(&host, 64, 64, 20000);
  CU_ASSERT(!k.cache_c && k.kc >= 16 && k.kc < 20000 && 20000 % k.kc == 0);
  CU_ASSERT(tsl_matmul_default_knobs(&host, 64, 64, 256).cache_c);
  /* N = 1000 in 16-column panels: the column blocks leave no idle panel in the tail */
  k = tsl_matmul_default_knobs(&host, 1000, 1000, 1000);
  if (k.nc < 1000 && 1000 % k.nc) CU_ASSERT(k.nc / k.nr == (1000 % k.nc + k.nr - 1) / k.nr);
}

static void test_matmul_invalid_knobs_refused(void) {
  tsl_matmul_knobs base = tsl_matmul_default_knobs(&host, 64, 64, 64);
  tsl_matmul_knobs k = base;
  k.mr = 0;
  CU_ASSERT_EQUAL(tsl_matmul_knobs_check(&k, 64, 64, 64), TSL_ERR_INVALID);
  CU_ASSERT(strstr(tsl_last_error(), "mr") != NULL);
  k = base;
  k.nr = k.vec + 1;
  CU_ASSERT_EQUAL(tsl_matmul_knobs_check(&k, 64, 64, 64), TSL_ERR_INVALID);
  CU_ASSERT(strstr(tsl_last_error(), "multiple of vec") != NULL);
  k = base;
  k.mr = 6;
  k.mc = 10;
  CU_ASSERT_EQUAL(tsl_matmul_knobs_check(&k, 64, 64, 64), TSL_ERR_INVALID);
  k = base;
  k.pack_b = (tsl_matmul_pack)7;
  CU_ASSERT_EQUAL(tsl_matmul_knobs_check(&k, 64, 64, 64), TSL_ERR_INVALID);
  k = base;
  k.ku = -1;
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_schedule *s = (tsl_schedule *)1;
  CU_ASSERT_EQUAL(tsl_matmul_schedule(matmul_program(64, 64, 64), &host, &k, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_matmul_template_refuses_other_programs(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  /* dense reads weight[o, k] (B transposed); with O == K the shapes alone would pass */
  int64_t sd[2] = {8, 16}, sw[2] = {16, 16};
  const int64_t *shapes[2] = {sd, sw};
  int ndims[2] = {2, 2};
  tsl_te_program *dense = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("dense", 2, shapes, ndims, 0, NULL, &dense), TSL_OK);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_matmul_schedule(dense, &host, NULL, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT(strstr(tsl_last_error(), "sum(k: A[i, k] * B[k, j])") != NULL);
  int64_t sx[4] = {1, 2, 5, 5}, sk[4] = {3, 2, 3, 3};
  const int64_t *cshapes[2] = {sx, sk};
  int cnd[2] = {4, 4};
  tsl_te_program *conv = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("conv2d_nchw", 2, cshapes, cnd, 0, NULL, &conv), TSL_OK);
  CU_ASSERT_EQUAL(tsl_matmul_schedule(conv, &host, NULL, &s), TSL_ERR_INVALID);
  int64_t M, N, K;
  CU_ASSERT_EQUAL(tsl_matmul_shape(NULL, &M, &N, &K), TSL_ERR_INVALID);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* A schedule is data: its printed steps replayed on the same program lower to the same
 * loop IR. */
static void test_matmul_schedule_text_replays_to_same_ir(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = matmul_program(37, 29, 300);
  tsl_matmul_knobs variants[2] = {tsl_matmul_default_knobs(&host, 37, 29, 300), small_blocks()};
  variants[1].cache_c = true;
  variants[1].pack_a = true;
  for (int v = 0; v < 2; v++) {
    tsl_schedule *s = NULL, *r = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_matmul_schedule(p, &host, &variants[v], &s), TSL_OK);
    char *text = tsl_schedule_to_string(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(strstr(text, "split(C, ") != NULL);
    CU_ASSERT_EQUAL(tsl_schedule_from_text(p, text, &r), TSL_OK);
    tsl_func *f1 = NULL, *f2 = NULL;
    CU_ASSERT_EQUAL(tsl_lower(s, "a", &f1), TSL_OK);
    if (r) CU_ASSERT_EQUAL(tsl_lower(r, "a", &f2), TSL_OK);
    /* buffers compare by identity in tsl_stmt_equal and each lowering makes its own:
     * compare the printed IR */
    char *t1 = f1 ? tsl_stmt_to_string(f1->body) : NULL, *t2 = f2 ? tsl_stmt_to_string(f2->body) : NULL;
    CU_ASSERT(t1 && t2 && strcmp(t1, t2) == 0);
    free(t1);
    free(t2);
    free(text);
    tsl_schedule_free(s);
    tsl_schedule_free(r);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* ---- peak kernels ---- */

static const tsl_kernel *compile(tsl_module *m, tsl_func *f) {
  const tsl_kernel *k = NULL;
  if (tsl_jit_compile(jit, f, m, NULL) != TSL_OK || tsl_module_get_kernel(m, f->name, &k) != TSL_OK) {
    printf("\n  %s: %s\n", f->name, tsl_last_error());
    return NULL;
  }
  return k;
}

static void test_peak_fma_kernel_equals_fmaf_chains(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int lanes = tsl_target_f32_lanes(&host), chains = tsl_peak_chains(&host), threads = 3;
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  float *params = alloc_floats(3 * lanes), *out = alloc_floats(threads * lanes);
  for (int l = 0; l < lanes; l++) {
    params[l] = 0.5f + 0.25f * (float)l;
    params[lanes + l] = 0.999f - 0.001f * (float)l;
    params[2 * lanes + l] = 0.0078125f * (float)(l + 1);
  }
  int64_t iters = 1000;
  for (int par = 0; par < 2; par++) {
    tsl_func *f = tsl_peak_fma_func(par ? "peak_fma_par" : "peak_fma_one", lanes, chains, par, threads);
    const tsl_kernel *k = compile(m, f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    void *pp = params, *po = out;
    void *args[3] = {&pp, &po, &iters};
    CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 3), TSL_OK);
    int rows = par ? threads : 1;
    for (int l = 0; l < lanes; l++) {
      float sum = 0.0f;
      for (int c = 0; c < chains; c++) {
        float acc = params[l] + (float)c;
        for (int64_t i = 0; i < iters; i++) acc = fmaf(acc, params[lanes + l], params[2 * lanes + l]);
        sum = c ? sum + acc : acc;
      }
      for (int r = 0; r < rows; r++) CU_ASSERT_EQUAL(out[r * lanes + l], sum);
    }
  }
  free(params);
  free(out);
  tsl_module_free(m);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_peak_triad_kernel_equals_fmaf(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int lanes = tsl_target_f32_lanes(&host);
  /* fewer vectors than the 1024 blocks, then more (uneven blocks) */
  int64_t sizes[2] = {(int64_t)lanes * 37, (int64_t)lanes * 5003};
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  for (int si = 0; si < 2; si++) {
    int64_t n = sizes[si];
    float *a = alloc_floats(n), *b = alloc_floats(n), *c = alloc_floats(n);
    ref_fill_uniform(b, n, 3, -2.0f, 2.0f);
    ref_fill_uniform(c, n, 4, -2.0f, 2.0f);
    for (int par = 0; par < 2; par++) {
      char name[32];
      snprintf(name, sizeof name, "triad_%d_%d", si, par);
      const tsl_kernel *k = compile(m, tsl_peak_triad_func(name, n, lanes, par));
      CU_ASSERT_PTR_NOT_NULL_FATAL(k);
      for (int64_t i = 0; i < n; i++) a[i] = NAN;
      float s = 1.75f;
      void *pb = b, *pc = c, *pa = a;
      void *args[4] = {&pb, &pc, &pa, &s};
      CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 4), TSL_OK);
      int64_t bad = 0;
      for (int64_t i = 0; i < n; i++) bad += a[i] != fmaf(s, c[i], b[i]);
      CU_ASSERT_EQUAL(bad, 0);
    }
    free(a);
    free(b);
    free(c);
  }
  tsl_module_free(m);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_peak_measure_reports_positive_figures(void) {
  tsl_peak_opts o = tsl_peak_opts_default();
  o.repeat = 1;
  o.min_repeat_ms = 1.0;
  o.threads = 2;
  o.triad_bytes = (int64_t)1 << 20;
  int saved = tsl_get_num_threads();
  tsl_peak p;
  CU_ASSERT_EQUAL_FATAL(tsl_peak_measure(&host, &o, &p), TSL_OK);
  CU_ASSERT(p.fma_gflops_1 > 0.0 && p.fma_gflops_all > 0.0);
  CU_ASSERT(p.triad_gbs_1 > 0.0 && p.triad_gbs_all > 0.0);
  CU_ASSERT(p.fma_gflops_1_best >= p.fma_gflops_1 && p.fma_gflops_all_best >= p.fma_gflops_all);
  CU_ASSERT(p.triad_gbs_1_best >= p.triad_gbs_1 && p.triad_gbs_all_best >= p.triad_gbs_all);
  CU_ASSERT_EQUAL(p.threads, 2);
  CU_ASSERT_EQUAL(p.lanes, tsl_target_f32_lanes(&host));
  CU_ASSERT_EQUAL(p.triad_bytes, (int64_t)1 << 20);
  CU_ASSERT_EQUAL(tsl_get_num_threads(), saved); /* the pool's count is restored */
}

static void test_peak_measure_rejects_bad_options(void) {
  tsl_peak p;
  tsl_peak_opts o = tsl_peak_opts_default();
  o.repeat = 0;
  CU_ASSERT_EQUAL(tsl_peak_measure(&host, &o, &p), TSL_ERR_INVALID);
  CU_ASSERT(strstr(tsl_last_error(), "repeat") != NULL);
  o = tsl_peak_opts_default();
  o.min_repeat_ms = -1.0;
  CU_ASSERT_EQUAL(tsl_peak_measure(&host, &o, &p), TSL_ERR_INVALID);
  o = tsl_peak_opts_default();
  o.threads = -3;
  CU_ASSERT_EQUAL(tsl_peak_measure(&host, &o, &p), TSL_ERR_INVALID);
  o = tsl_peak_opts_default();
  o.triad_bytes = 3;
  CU_ASSERT_EQUAL(tsl_peak_measure(&host, &o, &p), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_peak_measure(NULL, &o, &p), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_peak_measure(&host, NULL, NULL), TSL_ERR_INVALID);
}

void tsl_tests_templates(void) {
  CU_pSuite s = CU_add_suite("templates_matmul", suite_init, suite_clean);
  CU_add_test(s, "test_matmul_default_knobs_odd_shapes_match_reference",
              test_matmul_default_knobs_odd_shapes_match_reference);
  CU_add_test(s, "test_matmul_every_option_with_tails_matches_reference",
              test_matmul_every_option_with_tails_matches_reference);
  CU_add_test(s, "test_matmul_scalar_and_single_row_blocks_match_reference",
              test_matmul_scalar_and_single_row_blocks_match_reference);
  CU_add_test(s, "test_matmul_knobs_larger_than_shape_are_clamped", test_matmul_knobs_larger_than_shape_are_clamped);
  CU_add_test(s, "test_matmul_parallel_two_threads_equals_one", test_matmul_parallel_two_threads_equals_one);
  CU_add_test(s, "test_matmul_default_knobs_are_valid", test_matmul_default_knobs_are_valid);
  CU_add_test(s, "test_matmul_invalid_knobs_refused", test_matmul_invalid_knobs_refused);
  CU_add_test(s, "test_matmul_template_refuses_other_programs", test_matmul_template_refuses_other_programs);
  CU_add_test(s, "test_matmul_schedule_text_replays_to_same_ir", test_matmul_schedule_text_replays_to_same_ir);
  CU_pSuite p = CU_add_suite("templates_peak", suite_init, suite_clean);
  CU_add_test(p, "test_peak_fma_kernel_equals_fmaf_chains", test_peak_fma_kernel_equals_fmaf_chains);
  CU_add_test(p, "test_peak_triad_kernel_equals_fmaf", test_peak_triad_kernel_equals_fmaf);
  CU_add_test(p, "test_peak_measure_reports_positive_figures", test_peak_measure_reports_positive_figures);
  CU_add_test(p, "test_peak_measure_rejects_bad_options", test_peak_measure_rejects_bad_options);
}
