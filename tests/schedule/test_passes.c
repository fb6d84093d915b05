/* The unroll and vectorize passes on hand-built loops, checked structurally and by
 * running the result through the JIT against plain C loops. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/passes/simplify.h"
#include "ir/passes/unroll.h"
#include "ir/passes/vectorize.h"
#include "sched_tests.h"

static tsl_buffer *buf1(const char *name, int64_t n) { return tsl_buffer_new(name, TSL_F32, 1, &n, TSL_BUF_ARG); }
static tsl_expr *ld(tsl_buffer *b, tsl_expr *i) { return tsl_load(b, 1, &i, NULL); }
static tsl_stmt *st(tsl_buffer *b, tsl_expr *i, tsl_expr *v) { return tsl_store(b, 1, &i, v, NULL); }
static tsl_expr *v64(const char *name) { return tsl_var(name, TSL_I64); }
static tsl_expr *c64(int64_t v) { return tsl_i64(v); }
static tsl_stmt *loop(tsl_expr *v, int64_t n, tsl_for_kind k, tsl_stmt *body) {
  return tsl_for(v, c64(0), c64(n), k, body);
}

static tsl_func *func_in_out(const char *name, tsl_buffer *in, tsl_buffer *out, tsl_stmt *body) {
  tsl_arg args[2] = {{true, in, NULL}, {true, out, NULL}};
  return tsl_func_new(name, 2, args, body);
}

static void fill(float *x, int64_t n, float scale) {
  for (int64_t i = 0; i < n; i++) x[i] = scale * (float)((i * 37) % 101) - 20.0f;
}

/* ---- unroll ---- */

static void test_unroll_replicates_body_with_the_index(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 4), *out = buf1("out", 4);
  tsl_expr *i = v64("i");
  tsl_stmt *s = loop(i, 4, TSL_FOR_UNROLLED, st(out, i, tsl_mul(ld(in, i), tsl_f32(2.0f))));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_unroll(s, TSL_UNROLL_MAX_ITERATIONS, &r), TSL_OK);
  st_counts c = st_count(r);
  CU_ASSERT_EQUAL(c.loops, 0);
  CU_ASSERT_EQUAL(c.stores, 4);
  float *x = st_alloc_f32(4), *y = st_alloc_f32(4);
  fill(x, 4, 1.0f);
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out("unroll4", in, out, r), (void *[]){x, y}));
  for (int k = 0; k < 4; k++) CU_ASSERT_EQUAL(y[k], 2.0f * x[k]);
  free(x);
  free(y);
  st_arena_end(a);
}

static void test_unroll_copies_get_fresh_binders(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 15), *out = buf1("out", 15);
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_expr *idx = tsl_add(tsl_mul(i, c64(5)), j);
  tsl_stmt *body = st(out, idx, tsl_add(ld(in, idx), tsl_cast(TSL_F32, i)));
  tsl_stmt *s = loop(i, 3, TSL_FOR_UNROLLED, loop(j, 5, TSL_FOR_SERIAL, body));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_unroll(s, TSL_UNROLL_MAX_ITERATIONS, &r), TSL_OK);
  st_counts c = st_count(r);
  CU_ASSERT_EQUAL(c.loops, 3);
  CU_ASSERT_EQUAL(c.unrolled, 0);
  CU_ASSERT_TRUE(st_binders_unique(r));
  float *x = st_alloc_f32(15), *y = st_alloc_f32(15);
  fill(x, 15, 0.5f);
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out("unroll_nested", in, out, r), (void *[]){x, y}));
  for (int k = 0; k < 15; k++) CU_ASSERT_EQUAL(y[k], x[k] + (float)(k / 5));
  free(x);
  free(y);
  st_arena_end(a);
}

static void test_unroll_extent_zero_leaves_nothing(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *out = buf1("out", 4);
  tsl_expr *i = v64("i");
  tsl_stmt *s = loop(i, 0, TSL_FOR_UNROLLED, st(out, i, tsl_f32(1.0f)));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_unroll(s, 16, &r), TSL_OK);
  CU_ASSERT_EQUAL(st_count(r).stores, 0);
  CU_ASSERT_EQUAL(st_count(r).loops, 0);
  st_arena_end(a);
}

static void test_C20_unroll_limit_is_a_clear_error(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *out = buf1("out", 100000);
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_stmt *r = NULL;
  tsl_stmt *big = loop(i, 100000, TSL_FOR_UNROLLED, st(out, i, tsl_f32(1.0f)));
  CU_ASSERT_EQUAL(tsl_pass_unroll(big, TSL_UNROLL_MAX_ITERATIONS, &r), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "loop i of extent 100000"));
  /* each loop is small, their product is not */
  tsl_expr *idx = tsl_add(tsl_mul(i, c64(64)), j);
  tsl_stmt *nested = loop(i, 64, TSL_FOR_UNROLLED, loop(j, 64, TSL_FOR_UNROLLED, st(out, idx, tsl_f32(1.0f))));
  CU_ASSERT_EQUAL(tsl_pass_unroll(nested, 1024, &r), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "4096 copies"));
  CU_ASSERT_EQUAL(tsl_pass_unroll(nested, 4096, &r), TSL_OK);
  CU_ASSERT_EQUAL(tsl_pass_unroll(nested, 0, &r), TSL_ERR_INVALID);
  st_arena_end(a);
}

/* ---- vectorize ---- */

/* for y < 16: for xo < ceil(13 / lanes): for xi < lanes (vectorized):
 *   if (xo*lanes + xi < 13) out[y*13 + xo*lanes + xi] = in[...] * 3 + 1 */
static tsl_stmt *guarded_tail(tsl_buffer *in, tsl_buffer *out, int lanes) {
  tsl_expr *y = v64("y"), *xo = v64("xo"), *xi = v64("xi");
  tsl_expr *x = tsl_add(tsl_mul(xo, c64(lanes)), xi);
  tsl_expr *idx = tsl_add(tsl_mul(y, c64(13)), x);
  tsl_stmt *body = tsl_if(tsl_lt(x, c64(13)),
                          st(out, idx, tsl_add(tsl_mul(ld(in, idx), tsl_f32(3.0f)), tsl_f32(1.0f))), NULL);
  return loop(y, 16, TSL_FOR_SERIAL,
              loop(xo, (13 + lanes - 1) / lanes, TSL_FOR_SERIAL, loop(xi, lanes, TSL_FOR_VECTORIZED, body)));
}

static void check_tail_kernel(int lanes) {
  st_arena a = st_arena_begin();
  const int64_t n = 16 * 13; /* 832 bytes: ends exactly at the guard page */
  tsl_buffer *in = buf1("in", n), *out = buf1("out", n);
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(guarded_tail(in, out, lanes), &r), TSL_OK);
  st_counts c = st_count(r);
  CU_ASSERT_EQUAL(c.vectorized, 0);
  CU_ASSERT_EQUAL(c.loops, 2);
  CU_ASSERT_EQUAL(c.vector_stores, 1);
  CU_ASSERT_EQUAL(c.predicated_stores, 1);
  CU_ASSERT_EQUAL(c.vector_loads, 1);
  CU_ASSERT_EQUAL(c.predicated_loads, 1);
  float *x = st_alloc_guarded(n), *y = st_alloc_guarded(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(y);
  fill(x, n, 0.25f);
  char name[32];
  snprintf(name, sizeof name, "tail13_by%d", lanes);
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out(name, in, out, r), (void *[]){x, y}));
  int bad = 0;
  for (int64_t k = 0; k < n; k++) bad += y[k] != x[k] * 3.0f + 1.0f;
  CU_ASSERT_EQUAL(bad, 0);
  st_free_guarded(x, n);
  st_free_guarded(y, n);
  st_arena_end(a);
}

static void test_C01_vectorize_width13_by8_guarded_tail(void) { check_tail_kernel(8); }
static void test_C01_vectorize_width13_by16_guarded_tail(void) { check_tail_kernel(16); }

static void test_vectorize_whole_extent_13_lanes(void) {
  st_arena a = st_arena_begin();
  const int64_t n = 16 * 13;
  tsl_buffer *in = buf1("in", n), *out = buf1("out", n);
  tsl_expr *y = v64("y"), *x = v64("x");
  tsl_expr *idx = tsl_add(tsl_mul(y, c64(13)), x);
  tsl_stmt *s = loop(y, 16, TSL_FOR_SERIAL,
                     loop(x, 13, TSL_FOR_VECTORIZED, st(out, idx, tsl_sub(ld(in, idx), tsl_cast(TSL_F32, x)))));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(s, &r), TSL_OK);
  r = tsl_pass_simplify(r);
  st_counts c = st_count(r);
  CU_ASSERT_EQUAL(c.loops, 1);
  CU_ASSERT_EQUAL(c.vector_stores, 1);
  CU_ASSERT_EQUAL(c.predicated_stores + c.predicated_loads, 0);
  float *xi = st_alloc_guarded(n), *yo = st_alloc_guarded(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(xi);
  fill(xi, n, 1.0f);
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out("lanes13", in, out, r), (void *[]){xi, yo}));
  int bad = 0;
  for (int64_t k = 0; k < n; k++) bad += yo[k] != xi[k] - (float)(k % 13);
  CU_ASSERT_EQUAL(bad, 0);
  st_free_guarded(xi, n);
  st_free_guarded(yo, n);
  st_arena_end(a);
}

static void test_vectorize_keeps_inner_serial_reduction(void) {
  st_arena a = st_arena_begin();
  const int64_t M = 3, N = 8, K = 5;
  tsl_buffer *A = buf1("A", M * K), *B = buf1("B", K * N), *C = buf1("C", M * N);
  tsl_expr *i = v64("i"), *j = v64("j"), *k = v64("k");
  tsl_expr *ci = tsl_add(tsl_mul(i, c64(N)), j);
  tsl_expr *prod = tsl_mul(ld(A, tsl_add(tsl_mul(i, c64(K)), k)), ld(B, tsl_add(tsl_mul(k, c64(N)), j)));
  tsl_stmt *upd = st(C, ci, tsl_add(ld(C, ci), prod));
  tsl_stmt *body = tsl_seq2(st(C, ci, tsl_f32(0.0f)), loop(k, K, TSL_FOR_SERIAL, upd));
  tsl_stmt *s = loop(i, M, TSL_FOR_SERIAL, loop(j, N, TSL_FOR_VECTORIZED, body));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(s, &r), TSL_OK);
  st_counts c = st_count(r);
  CU_ASSERT_EQUAL(c.loops, 2);
  CU_ASSERT_EQUAL(c.serial, 2);
  CU_ASSERT_EQUAL(c.vector_stores, 2);
  CU_ASSERT_EQUAL(c.predicated_stores, 0);
  float *a_ = st_alloc_f32(M * K), *b_ = st_alloc_f32(K * N), *c_ = st_alloc_f32(M * N);
  fill(a_, M * K, 0.5f);
  fill(b_, K * N, 0.25f);
  tsl_arg args[3] = {{true, A, NULL}, {true, B, NULL}, {true, C, NULL}};
  CU_ASSERT_TRUE_FATAL(st_run(tsl_func_new("vec_mm", 3, args, r), (void *[]){a_, b_, c_}));
  for (int64_t ii = 0; ii < M; ii++)
    for (int64_t jj = 0; jj < N; jj++) {
      float acc = 0.0f; /* same order of float additions as the kernel */
      for (int64_t kk = 0; kk < K; kk++) acc = acc + a_[ii * K + kk] * b_[kk * N + jj];
      CU_ASSERT_EQUAL(c_[ii * N + jj], acc);
    }
  free(a_);
  free(b_);
  free(c_);
  st_arena_end(a);
}

static void test_vectorize_scalarizes_same_address_store(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 8), *out = buf1("out", 1);
  tsl_expr *x = v64("x");
  tsl_stmt *s = loop(x, 8, TSL_FOR_VECTORIZED, st(out, c64(0), ld(in, x)));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(s, &r), TSL_OK);
  st_counts c = st_count(r);
  CU_ASSERT_EQUAL(c.loops, 1);
  CU_ASSERT_EQUAL(c.serial, 1);
  CU_ASSERT_EQUAL(c.vector_stores, 0);
  float *xi = st_alloc_f32(8), *yo = st_alloc_f32(1);
  fill(xi, 8, 1.0f);
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out("scalarized", in, out, r), (void *[]){xi, yo}));
  CU_ASSERT_EQUAL(yo[0], xi[7]); /* the last iteration's store wins, as in the loop */
  free(xi);
  free(yo);
  st_arena_end(a);
}

static void test_vectorize_extent_limits(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *out = buf1("out", 100);
  tsl_expr *x = v64("x");
  tsl_stmt *r = NULL;
  tsl_stmt *wide = loop(x, TSL_VECTORIZE_MAX_LANES + 1, TSL_FOR_VECTORIZED, st(out, x, tsl_f32(1.0f)));
  CU_ASSERT_EQUAL(tsl_pass_vectorize(wide, &r), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "vectorize: loop x"));
  /* extent 1: the body with x = min; extent 0: nothing */
  tsl_stmt *one = tsl_for(x, c64(5), c64(1), TSL_FOR_VECTORIZED, st(out, x, tsl_f32(1.0f)));
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(one, &r), TSL_OK);
  CU_ASSERT_EQUAL(r->kind, TSL_S_STORE);
  int64_t v = -1;
  CU_ASSERT_TRUE(tsl_expr_is_const_int(r->store.index[0], &v));
  CU_ASSERT_EQUAL(v, 5);
  tsl_stmt *none = loop(x, 0, TSL_FOR_VECTORIZED, st(out, x, tsl_f32(1.0f)));
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(none, &r), TSL_OK);
  CU_ASSERT_EQUAL(st_count(r).stores, 0);
  st_arena_end(a);
}

static void test_vectorize_select_with_nan_max(void) {
  st_arena a = st_arena_begin();
  /* out[x] = max(in[x], 0) lane-wise: the IR max propagates NaN in every lane */
  tsl_buffer *in = buf1("in", 16), *out = buf1("out", 16);
  tsl_expr *x = v64("x");
  tsl_stmt *s = loop(x, 16, TSL_FOR_VECTORIZED, st(out, x, tsl_max(ld(in, x), tsl_f32(0.0f))));
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(s, &r), TSL_OK);
  CU_ASSERT_EQUAL(st_count(r).vector_stores, 1);
  float *xi = st_alloc_f32(16), *yo = st_alloc_f32(16);
  fill(xi, 16, 1.0f);
  xi[0] = NAN;
  xi[7] = NAN;
  xi[15] = NAN;
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out("vec_relu_nan", in, out, r), (void *[]){xi, yo}));
  for (int k = 0; k < 16; k++) {
    if (isnan(xi[k])) {
      CU_ASSERT_TRUE(isnan(yo[k]));
    } else {
      CU_ASSERT_EQUAL(yo[k], xi[k] > 0.0f ? xi[k] : 0.0f);
    }
  }
  free(xi);
  free(yo);
  st_arena_end(a);
}

static int cleanup(void) {
  st_jit_release();
  return 0;
}

void tsl_tests_schedule_passes(void) {
  CU_pSuite s = CU_add_suite("schedule/passes", NULL, cleanup);
  CU_add_test(s, "test_unroll_replicates_body_with_the_index", test_unroll_replicates_body_with_the_index);
  CU_add_test(s, "test_unroll_copies_get_fresh_binders", test_unroll_copies_get_fresh_binders);
  CU_add_test(s, "test_unroll_extent_zero_leaves_nothing", test_unroll_extent_zero_leaves_nothing);
  CU_add_test(s, "test_C20_unroll_limit_is_a_clear_error", test_C20_unroll_limit_is_a_clear_error);
  CU_add_test(s, "test_C01_vectorize_width13_by8_guarded_tail", test_C01_vectorize_width13_by8_guarded_tail);
  CU_add_test(s, "test_C01_vectorize_width13_by16_guarded_tail", test_C01_vectorize_width13_by16_guarded_tail);
  CU_add_test(s, "test_vectorize_whole_extent_13_lanes", test_vectorize_whole_extent_13_lanes);
  CU_add_test(s, "test_vectorize_keeps_inner_serial_reduction", test_vectorize_keeps_inner_serial_reduction);
  CU_add_test(s, "test_vectorize_scalarizes_same_address_store", test_vectorize_scalarizes_same_address_store);
  CU_add_test(s, "test_vectorize_extent_limits", test_vectorize_extent_limits);
  CU_add_test(s, "test_vectorize_select_with_nan_max", test_vectorize_select_with_nan_max);
}
