/* The unroll and vectorize passes on hand-built loops, checked structurally and by
 * running the result through the JIT against plain C loops. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/passes/loop_partition.h"
#include "ir/passes/native_vectors.h"
#include "ir/passes/simplify.h"
#include "ir/passes/unroll.h"
#include "ir/passes/vectorize.h"
#include "sched_tests.h"
#include "tessel/runtime.h"

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

static void test_vectorize_refuses_same_address_store(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 8), *out = buf1("out", 1);
  tsl_expr *x = v64("x");
  tsl_stmt *s = loop(x, 8, TSL_FOR_VECTORIZED, st(out, c64(0), ld(in, x)));
  tsl_stmt *r = NULL;
  /* never a silent serial loop: the schedule asked for lanes */
  CU_ASSERT_EQUAL(tsl_pass_vectorize(s, &r), TSL_ERR_SCHEDULE);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "vectorize: loop x cannot run on vector lanes: a store writes one "
                                                  "address from every lane"));
  st_arena_end(a);
}

/* The simplifier pins x to 0 under `if (x < 1)`, leaving a store with one address under a
 * lane mask: at most one lane is active, so it becomes one scalar store run when any
 * lane is. */
static void test_vectorize_single_lane_mask_store(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 8), *out = buf1("out", 4);
  tsl_expr *x = v64("x");
  tsl_stmt *body = tsl_if(tsl_lt(x, c64(1)), st(out, c64(2), tsl_add(ld(in, c64(0)), tsl_f32(1.0f))), NULL);
  tsl_stmt *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(loop(x, 8, TSL_FOR_VECTORIZED, body), &r), TSL_OK);
  CU_ASSERT_EQUAL(st_count(r).loops, 0);
  float *xi = st_alloc_f32(8), *yo = st_alloc_f32(4);
  fill(xi, 8, 1.0f);
  CU_ASSERT_TRUE_FATAL(st_run(func_in_out("one_lane", in, out, r), (void *[]){xi, yo}));
  CU_ASSERT_EQUAL(yo[2], xi[0] + 1.0f);
  CU_ASSERT_EQUAL(yo[0], 0.0f);
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

/* ---- loop partitioning ---- */

static tsl_expr *likely(tsl_expr *c) { return tsl_call(TSL_CALL_LIKELY, TSL_BOOL, 1, &c); }

static bool has_likely_or_if(const tsl_stmt *s) {
  char *t = tsl_stmt_to_string(s);
  bool r = strstr(t, "likely") || strstr(t, "if (");
  free(t);
  return r;
}

/* out[v*4 + w] = in[v*4 + w] + 1 for v < 10, w < 4, guarded by v*4 + w < 37: the
 * guard holds for every w exactly when v <= 8. */
static tsl_stmt *tail_nest(tsl_buffer *in, tsl_buffer *out, tsl_expr *v, tsl_expr *w, tsl_expr *cond) {
  tsl_expr *i = tsl_add(tsl_mul(v, c64(4)), w);
  tsl_stmt *body = tsl_if(likely(cond), st(out, i, tsl_add(ld(in, i), tsl_f32(1.0f))), NULL);
  return loop(v, 10, TSL_FOR_SERIAL, loop(w, 4, TSL_FOR_SERIAL, body));
}

static void test_loop_partition_splits_off_the_tail(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 40), *out = buf1("out", 40);
  tsl_expr *v = v64("v"), *w = v64("w");
  tsl_stmt *s = tail_nest(in, out, v, w, tsl_lt(tsl_add(tsl_mul(v, c64(4)), w), c64(37)));
  tsl_stmt *p = tsl_pass_loop_partition(s, true);
  /* main loop v in [0, 9) with no guard, then v = 9 keeping it */
  CU_ASSERT_EQUAL_FATAL(p->kind, TSL_S_SEQ);
  CU_ASSERT_EQUAL_FATAL(p->seq.n, 2);
  const tsl_stmt *main = p->seq.stmts[0], *tail = p->seq.stmts[1];
  int64_t mn, ext;
  CU_ASSERT_TRUE(tsl_expr_is_const_int(main->loop.min, &mn) && mn == 0);
  CU_ASSERT_TRUE(tsl_expr_is_const_int(main->loop.extent, &ext) && ext == 9);
  CU_ASSERT_FALSE(has_likely_or_if(main));
  CU_ASSERT_TRUE(tsl_expr_is_const_int(tail->loop.min, &mn) && mn == 9);
  CU_ASSERT_TRUE(tsl_expr_is_const_int(tail->loop.extent, &ext) && ext == 1);
  CU_ASSERT_TRUE(st_binders_unique(p));
  /* guarded (hints removed only) and partitioned give the same memory */
  tsl_stmt *g = tsl_pass_loop_partition(s, false);
  CU_ASSERT_EQUAL(g->kind, TSL_S_FOR);
  char *gt = tsl_stmt_to_string(g);
  CU_ASSERT_PTR_NULL(strstr(gt, "likely"));
  free(gt);
  float *x = st_alloc_f32(40), *y1 = st_alloc_f32(40), *y2 = st_alloc_f32(40);
  fill(x, 40, 1.0f);
  CU_ASSERT_TRUE(st_run(func_in_out("part_p", in, out, tsl_pass_simplify(p)), (void *[]){x, y1}));
  CU_ASSERT_TRUE(st_run(func_in_out("part_g", in, out, g), (void *[]){x, y2}));
  int bad = 0;
  for (int k = 0; k < 40; k++) bad += y1[k] != y2[k] || y1[k] != (k < 37 ? x[k] + 1.0f : 0.0f);
  CU_ASSERT_EQUAL(bad, 0);
  free(x);
  free(y1);
  free(y2);
  st_arena_end(a);
}

static void test_loop_partition_prologue_and_undecidable_guards(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 40), *out = buf1("out", 40);
  tsl_expr *v = v64("v"), *w = v64("w");
  /* a lower bound: v*4 + w >= 6 for every w when v >= 2: prologue [0, 2), main [2, 10) */
  tsl_stmt *p = tsl_pass_loop_partition(tail_nest(in, out, v, w, tsl_ge(tsl_add(tsl_mul(v, c64(4)), w), c64(6))), true);
  CU_ASSERT_EQUAL_FATAL(p->kind, TSL_S_SEQ);
  CU_ASSERT_EQUAL_FATAL(p->seq.n, 2);
  int64_t mn;
  CU_ASSERT_TRUE(has_likely_or_if(p->seq.stmts[0]));
  CU_ASSERT_TRUE(tsl_expr_is_const_int(p->seq.stmts[1]->loop.min, &mn) && mn == 2);
  CU_ASSERT_FALSE(has_likely_or_if(p->seq.stmts[1]));
  /* not linear in v (v*v): left whole, only the hint goes */
  v = v64("v");
  w = v64("w");
  p = tsl_pass_loop_partition(tail_nest(in, out, v, w, tsl_lt(tsl_mul(v, v), c64(30))), true);
  CU_ASSERT_EQUAL(p->kind, TSL_S_FOR);
  char *t = tsl_stmt_to_string(p);
  CU_ASSERT_PTR_NULL(strstr(t, "likely"));
  CU_ASSERT_PTR_NOT_NULL(strstr(t, "if ("));
  free(t);
  /* a guard that holds everywhere just disappears */
  v = v64("v");
  w = v64("w");
  p = tsl_pass_loop_partition(tail_nest(in, out, v, w, tsl_lt(tsl_add(tsl_mul(v, c64(4)), w), c64(40))), true);
  CU_ASSERT_EQUAL(p->kind, TSL_S_FOR);
  CU_ASSERT_FALSE(has_likely_or_if(p));
  st_arena_end(a);
}

/* A parallel loop is partitioned inside itself: still one parallel loop over the whole
 * range (one launch, every iteration free to run on any thread), whose body branches to
 * the guard-free steady body or to the guarded prologue / epilogue copies; the memory
 * it writes is the reference's at 1 and 2 threads. */
static void test_loop_partition_keeps_a_parallel_loop_whole(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 40), *out = buf1("out", 40);
  tsl_expr *v = v64("v"), *w = v64("w");
  tsl_expr *i = tsl_add(tsl_mul(v, c64(4)), w);
  /* 6 <= v*4 + w < 37 for every w exactly when 2 <= v <= 8 */
  tsl_expr *cond = tsl_and(tsl_ge(i, c64(6)), tsl_lt(i, c64(37)));
  tsl_stmt *body = tsl_if(likely(cond), st(out, i, tsl_add(ld(in, i), tsl_f32(1.0f))), NULL);
  tsl_stmt *s = loop(v, 10, TSL_FOR_PARALLEL, loop(w, 4, TSL_FOR_SERIAL, body));
  tsl_stmt *p = tsl_pass_loop_partition(s, true);
  CU_ASSERT_EQUAL_FATAL(p->kind, TSL_S_FOR);
  CU_ASSERT_EQUAL(p->loop.for_kind, TSL_FOR_PARALLEL);
  int64_t mn, ext;
  CU_ASSERT_TRUE(tsl_expr_is_const_int(p->loop.min, &mn) && mn == 0);
  CU_ASSERT_TRUE(tsl_expr_is_const_int(p->loop.extent, &ext) && ext == 10);
  /* the steady branch: the inner loop without the guard */
  CU_ASSERT_EQUAL_FATAL(p->loop.body->kind, TSL_S_IF);
  CU_ASSERT_FALSE(has_likely_or_if(p->loop.body->if_.then_case));
  CU_ASSERT_PTR_NOT_NULL(p->loop.body->if_.else_case);
  CU_ASSERT_TRUE(st_binders_unique(p));
  float *x = st_alloc_f32(40), *y = st_alloc_f32(40);
  fill(x, 40, 1.0f);
  int prev = tsl_get_num_threads();
  for (int threads = 1; threads <= 2; threads++) {
    CU_ASSERT_EQUAL(tsl_set_num_threads(threads), TSL_OK);
    memset(y, 0, 40 * sizeof *y);
    char name[32];
    snprintf(name, sizeof name, "part_par%d", threads);
    CU_ASSERT_TRUE(st_run(func_in_out(name, in, out, tsl_pass_simplify(p)), (void *[]){x, y}));
    int bad = 0;
    for (int k = 0; k < 40; k++) bad += y[k] != (k >= 6 && k < 37 ? x[k] + 1.0f : 0.0f);
    CU_ASSERT_EQUAL(bad, 0);
  }
  tsl_set_num_threads(prev);
  free(x);
  free(y);
  st_arena_end(a);
}

static void test_native_vectors_split_wide_loops(void) {
  st_arena a = st_arena_begin();
  tsl_buffer *in = buf1("in", 40), *out = buf1("out", 40);
  tsl_expr *x = v64("x");
  tsl_stmt *s = loop(x, 20, TSL_FOR_VECTORIZED, st(out, x, tsl_mul(ld(in, x), tsl_f32(3.0f))));
  /* 20 f32 lanes, 256-bit registers: two unrolled vectors of 8 and a remainder of 4 */
  tsl_stmt *n = tsl_pass_native_vectors(s, 256), *u = NULL, *v = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_unroll(n, 64, &u), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_pass_vectorize(u, &v), TSL_OK);
  st_counts c = st_count(v);
  CU_ASSERT_EQUAL(c.vector_stores, 3);
  CU_ASSERT_EQUAL(c.predicated_stores, 0);
  CU_ASSERT_PTR_EQUAL(tsl_pass_native_vectors(s, 0), s);   /* no target width: unchanged */
  CU_ASSERT_PTR_EQUAL(tsl_pass_native_vectors(s, 1024), s); /* fits one register */
  float *xi = st_alloc_f32(40), *yo = st_alloc_f32(40);
  fill(xi, 40, 1.0f);
  CU_ASSERT_TRUE(st_run(func_in_out("native20", in, out, v), (void *[]){xi, yo}));
  int bad = 0;
  for (int k = 0; k < 40; k++) bad += yo[k] != (k < 20 ? xi[k] * 3.0f : 0.0f);
  CU_ASSERT_EQUAL(bad, 0);
  free(xi);
  free(yo);
  st_arena_end(a);
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
  CU_add_test(s, "test_vectorize_refuses_same_address_store", test_vectorize_refuses_same_address_store);
  CU_add_test(s, "test_vectorize_single_lane_mask_store", test_vectorize_single_lane_mask_store);
  CU_add_test(s, "test_vectorize_extent_limits", test_vectorize_extent_limits);
  CU_add_test(s, "test_vectorize_select_with_nan_max", test_vectorize_select_with_nan_max);
  CU_add_test(s, "test_loop_partition_splits_off_the_tail", test_loop_partition_splits_off_the_tail);
  CU_add_test(s, "test_loop_partition_prologue_and_undecidable_guards",
              test_loop_partition_prologue_and_undecidable_guards);
  CU_add_test(s, "test_loop_partition_keeps_a_parallel_loop_whole", test_loop_partition_keeps_a_parallel_loop_whole);
  CU_add_test(s, "test_native_vectors_split_wide_loops", test_native_vectors_split_wide_loops);
}
