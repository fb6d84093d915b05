/* Lowered programs run through the JIT and compared with naive references
 * (tests/ref/): default schedules and a few hand-written ones. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_ops.h"
#include "ref/ref_rows.h"
#include "sched_tests.h"

/* Lowers p with the schedule text (NULL: the default schedule) and runs it on data. */
static bool lower_and_run(tsl_te_program *p, const char *text, const char *name, void *const *data) {
  tsl_schedule *s = NULL;
  tsl_status rc = text ? tsl_schedule_from_text(p, text, &s) : tsl_schedule_create(p, &s);
  tsl_func *f = NULL;
  if (rc == TSL_OK) rc = tsl_lower(s, name, &f);
  tsl_schedule_free(s);
  if (rc != TSL_OK) {
    fprintf(stderr, "\n%s: %s\n", name, tsl_last_error());
    return false;
  }
  return st_run(f, data);
}

static void check_matmul(const char *text, const char *name) {
  st_arena a = st_arena_begin();
  const int64_t M = 13, N = 17, K = 19;
  float *A = st_alloc_f32(M * K), *B = st_alloc_f32(K * N), *C = st_alloc_f32(M * N), *R = st_alloc_f32(M * N);
  ref_fill_uniform(A, M * K, 1, -1.0f, 1.0f);
  ref_fill_uniform(B, K * N, 2, -1.0f, 1.0f);
  for (int64_t i = 0; i < M * N; i++) C[i] = NAN; /* every element must be written */
  ref_matmul(M, N, K, A, B, R);
  CU_ASSERT_TRUE(lower_and_run(st_matmul(M, N, K), text, name, (void *[]){A, B, C}));
  CU_ASSERT_TRUE(ref_max_rel_error(C, R, M * N) < 1e-5);
  free(A);
  free(B);
  free(C);
  free(R);
  st_arena_end(a);
}

static void test_matmul_default_matches_reference(void) { check_matmul(NULL, "mm_default"); }

static void test_matmul_tiled_vectorized_parallel_matches_reference(void) {
  check_matmul("split(C, j, 8)\n"
               "split(C, i, 4)\n"
               "reorder(C, i.outer, j.outer, i.inner, k, j.inner)\n"
               "vectorize(C, j.inner)\n"
               "unroll(C, i.inner)\n"
               "parallel(C, i.outer)\n",
               "mm_tiled");
}

static void check_conv(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t pad,
                       int64_t stride, const char *text, const char *name) {
  st_arena a = st_arena_begin();
  ref_conv2d_params prm = {N, C, H, W, K, R, S, stride, stride, pad, pad, pad, pad, 1, 1, 1};
  int64_t OH = ref_conv2d_out_h(&prm), OW = ref_conv2d_out_w(&prm);
  int64_t nd = N * C * H * W, nw = K * C * R * S, no = N * K * OH * OW;
  float *d = st_alloc_f32(nd), *w = st_alloc_f32(nw), *o = st_alloc_f32(no), *r = st_alloc_f32(no);
  ref_fill_uniform(d, nd, 3, -1.0f, 1.0f);
  ref_fill_uniform(w, nw, 4, -1.0f, 1.0f);
  ref_conv2d_nchw(&prm, d, w, NULL, r);
  tsl_te_program *p = st_conv_padded(N, C, H, W, K, R, S, pad, stride);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[2], OH);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[3], OW);
  CU_ASSERT_TRUE(lower_and_run(p, text, name, (void *[]){d, w, o}));
  CU_ASSERT_TRUE(ref_max_rel_error(o, r, no) < 1e-5);
  free(d);
  free(w);
  free(o);
  free(r);
  st_arena_end(a);
}

static void test_conv_padded_default_matches_reference(void) {
  check_conv(1, 3, 9, 11, 4, 3, 3, 1, 1, NULL, "conv_p1s1");
  check_conv(2, 2, 7, 6, 3, 3, 3, 0, 1, NULL, "conv_p0s1");
}

static void test_conv_padding_wider_than_kernel_with_stride(void) {
  /* class 6: padding >= kernel with stride > 1; whole output rows read only padding */
  check_conv(1, 2, 5, 7, 2, 3, 3, 3, 2, NULL, "conv_p3s2");
  check_conv(1, 2, 6, 6, 2, 2, 2, 1, 2, NULL, "conv_even_kernel");
}

/* shared/cases C01: output width 13, x vectorized by 8 (reduction loops outside the
 * lanes) and by 16 (reduction loops inside the lanes); every buffer ends at a guard page
 * so an access past any end faults. */
static void check_c01(const char *text, const char *name) {
  st_arena a = st_arena_begin();
  ref_conv2d_params prm = {1, 4, 4, 13, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const int64_t nd = 4 * 4 * 13, nw = 4 * 4 * 3 * 3, no = 4 * 4 * 13;
  float *d = st_alloc_guarded(nd), *w = st_alloc_guarded(nw), *o = st_alloc_guarded(no), *r = st_alloc_f32(no);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  ref_fill_uniform(d, nd, 5, -1.0f, 1.0f);
  ref_fill_uniform(w, nw, 6, -1.0f, 1.0f);
  ref_conv2d_nchw(&prm, d, w, NULL, r);
  CU_ASSERT_TRUE(lower_and_run(st_conv_padded(1, 4, 4, 13, 4, 3, 3, 1, 1), text, name, (void *[]){d, w, o}));
  CU_ASSERT_TRUE(ref_max_rel_error(o, r, no) < 1e-5);
  st_free_guarded(d, nd);
  st_free_guarded(w, nw);
  st_free_guarded(o, no);
  free(r);
  st_arena_end(a);
}

static void test_C01_conv_width13_vectorized_by8(void) {
  check_c01("compute_inline(padded)\nsplit(out, x, 8)\n"
            "reorder(out, x.outer, rc, ry, rx, x.inner)\nvectorize(out, x.inner)\n",
            "c01_by8");
}

static void test_C01_conv_width13_vectorized_by16(void) {
  check_c01("compute_inline(padded)\nsplit(out, x, 16)\nvectorize(out, x.inner)\n", "c01_by16");
}

static void test_C08_row_max_propagates_nan(void) {
  const int64_t M = 6, N = 21;
  const char *scheds[2] = {NULL, "split(rmax, i, 4)\nvectorize(rmax, i.inner)\n"};
  for (int v = 0; v < 2; v++) {
    st_arena a = st_arena_begin();
    float *A = st_alloc_f32(M * N), *o = st_alloc_f32(M), *r = st_alloc_f32(M);
    ref_fill_uniform(A, M * N, 7, -5.0f, 5.0f);
    A[1 * N + 0] = NAN;      /* first of the window */
    A[2 * N + 10] = NAN;     /* a middle one */
    A[3 * N + N - 1] = NAN;  /* the last */
    for (int64_t j = 0; j < N; j++) {
      A[4 * N + j] = NAN;       /* all NaN */
      A[5 * N + j] = -INFINITY; /* the identity itself */
    }
    ref_row_max(M, N, A, r);
    CU_ASSERT_TRUE(lower_and_run(st_row_max(M, N), scheds[v], v ? "rmax_vec" : "rmax", (void *[]){A, o}));
    for (int64_t i = 0; i < M; i++) {
      if (isnan(r[i])) {
        CU_ASSERT_TRUE(isnan(o[i]));
      } else {
        CU_ASSERT_EQUAL(o[i], r[i]);
      }
    }
    free(A);
    free(o);
    free(r);
    st_arena_end(a);
  }
}

static void test_elemwise_chain_inlined_root_and_vectorized(void) {
  const int64_t M = 5, N = 13;
  const char *scheds[3] = {NULL, "", "compute_inline(B)\nsplit(out, j, 8)\nvectorize(out, j.inner)\nparallel(out, i)\n"};
  const char *names[3] = {"chain_default", "chain_root", "chain_vec"};
  for (int v = 0; v < 3; v++) {
    st_arena a = st_arena_begin();
    float *A = st_alloc_f32(M * N), *o = st_alloc_f32(M * N);
    ref_fill_uniform(A, M * N, 8, -3.0f, 3.0f);
    CU_ASSERT_TRUE(lower_and_run(st_elemwise_chain(M, N), scheds[v], names[v], (void *[]){A, o}));
    int bad = 0;
    for (int64_t i = 0; i < M * N; i++) bad += o[i] != A[i] * 2.0f + 1.0f;
    CU_ASSERT_EQUAL(bad, 0);
    free(A);
    free(o);
    st_arena_end(a);
  }
}

static void test_row_center_uses_allocated_intermediate(void) {
  st_arena a = st_arena_begin();
  const int64_t M = 4, N = 7;
  float *A = st_alloc_f32(M * N), *o = st_alloc_f32(M * N), *r = st_alloc_f32(M * N);
  ref_fill_uniform(A, M * N, 9, -1.0f, 1.0f);
  ref_row_center(M, N, A, r);
  CU_ASSERT_TRUE(lower_and_run(st_row_center(M, N), NULL, "row_center", (void *[]){A, o}));
  CU_ASSERT_TRUE(ref_max_rel_error(o, r, M * N) < 1e-5);
  free(A);
  free(o);
  free(r);
  st_arena_end(a);
}

/* B[i] = A[i] * 2 over 10 points, out[i] = B[i + 3] + B[i + 5] over 4: only B[3..8] is
 * needed, so the compute_root B is realized over that region, stored from its origin. */
static void test_root_stage_realizes_only_the_region_read(void) {
  st_arena a = st_arena_begin();
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){10});
  tsl_iter_var *bx = tsl_te_axes(1, (int64_t[]){10}, (const char *[]){"i"});
  tsl_te_tensor *B =
      tsl_te_compute("B", 1, bx, tsl_mul(tsl_te_read(A, 1, (tsl_expr *[]){bx[0].var}), tsl_f32(2.0f)), NULL);
  tsl_iter_var *ox = tsl_te_axes(1, (int64_t[]){4}, (const char *[]){"i"});
  tsl_expr *i = ox[0].var;
  tsl_expr *sum = tsl_add(tsl_te_read(B, 1, (tsl_expr *[]){tsl_add(i, tsl_i64(3))}),
                          tsl_te_read(B, 1, (tsl_expr *[]){tsl_add(i, tsl_i64(5))}));
  tsl_te_tensor *out = tsl_te_compute("out", 1, ox, sum, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  tsl_te_program *p = tsl_te_program_new("window", 1, &A, 1, &out);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_new(p, &s), TSL_OK);
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower(s, "window", &f), TSL_OK);
  tsl_schedule_free(s);
  st_counts c = st_count(f->body);
  CU_ASSERT_EQUAL(c.allocates, 1);
  CU_ASSERT_EQUAL(f->body->kind, TSL_S_ALLOCATE);
  if (f->body->kind == TSL_S_ALLOCATE) CU_ASSERT_EQUAL(f->body->allocate.buf->shape[0], 6);
  float *x = st_alloc_f32(10), *y = st_alloc_f32(4);
  for (int k = 0; k < 10; k++) x[k] = (float)(k * k);
  CU_ASSERT_TRUE(st_run(f, (void *[]){x, y}));
  for (int k = 0; k < 4; k++) CU_ASSERT_EQUAL(y[k], 2.0f * x[k + 3] + 2.0f * x[k + 5]);
  free(x);
  free(y);
  st_arena_end(a);
}

/* A table read at a data-dependent index, out[p, k] = T[k, f(I[p, k])] (a lookup-table
 * conv's or a gather's), with T computed at an outer loop of its reader: bound inference
 * bounds the index by what f leaves of I's values (a mask & 3, a clamp to [0, 3]: 4 of
 * the table's 8 entries), not by a base loaded from I where T is realized (which did not
 * compile). I holds values outside [0, 3] for the clamp to act on. */
static void test_table_at_data_dependent_index_computed_at_outer_loop(void) {
  for (int form = 0; form < 2; form++) {
    st_arena a = st_arena_begin();
    enum { P = 5, K = 8, M = 8 };
    tsl_te_tensor *W = tsl_te_placeholder("W", TSL_F32, 2, (int64_t[]){K, M});
    tsl_te_tensor *I = tsl_te_placeholder("I", TSL_I32, 2, (int64_t[]){P, K});
    tsl_iter_var *tx = tsl_te_axes(2, (int64_t[]){K, M}, (const char *[]){"k", "m"});
    tsl_expr *w = tsl_te_read(W, 2, (tsl_expr *[]){tx[0].var, tx[1].var});
    tsl_te_tensor *T = tsl_te_compute("T", 2, tx, tsl_add(tsl_mul(w, tsl_f32(2.0f)), tsl_f32(1.0f)), NULL);
    tsl_iter_var *ox = tsl_te_axes(2, (int64_t[]){P, K}, (const char *[]){"p", "k"});
    tsl_expr *v = tsl_te_read(I, 2, (tsl_expr *[]){ox[0].var, ox[1].var});
    tsl_expr *m = form == 0 ? tsl_call(TSL_CALL_BIT_AND, TSL_I32, 2, (tsl_expr *[]){v, tsl_i32(3)})
                            : tsl_min(tsl_max(v, tsl_i32(0)), tsl_i32(3));
    tsl_te_tensor *out = tsl_te_compute("out", 2, ox, tsl_te_read(T, 2, (tsl_expr *[]){ox[1].var, tsl_cast(TSL_I64, m)}), NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    tsl_te_program *p = tsl_te_program_new("table", 2, (tsl_te_tensor *[]){W, I}, 1, &out);
    tsl_schedule *s = NULL;
    tsl_func *f = NULL;
    tsl_status st = tsl_schedule_from_text(p, "split(out, k, 4)\nreorder(out, k.outer, p, k.inner)\ncompute_at(T, out, k.outer)\n", &s);
    if (st == TSL_OK) st = tsl_lower(s, "table", &f);
    tsl_schedule_free(s);
    if (st != TSL_OK) fprintf(stderr, "\ntable form %d: %s\n", form, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    /* per k.outer: its 4 rows, each over the index's interval [0, 3] (not all 8 entries) */
    const tsl_buffer *tb = st_find_allocation(f->body, "T");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tb);
    CU_ASSERT_EQUAL(tb->ndim, 2);
    CU_ASSERT_EQUAL(tb->shape[0], 4);
    CU_ASSERT_EQUAL(tb->shape[1], 4);
    float *wv = st_alloc_f32(K * M), *y = st_alloc_f32(P * K);
    int32_t iv[P * K];
    ref_fill_uniform(wv, K * M, 7, -1.0f, 1.0f);
    for (int i = 0; i < P * K; i++) iv[i] = (i * 7) % 11 - 3; /* -3 .. 7 */
    CU_ASSERT_TRUE(st_run(f, (void *[]){wv, iv, y}));
    for (int pp = 0; pp < P; pp++)
      for (int k = 0; k < K; k++) {
        int32_t x = iv[pp * K + k];
        int idx = form == 0 ? (x & 3) : x < 0 ? 0 : x > 3 ? 3 : x;
        CU_ASSERT_EQUAL(y[pp * K + k], wv[k * M + idx] * 2.0f + 1.0f);
      }
    free(wv);
    free(y);
    st_arena_end(a);
  }
}

/* The padding stage kept compute_root with stride 2: the last padded rows and columns
 * are never read, and the realized region leaves them out. */
static void test_conv_root_padding_stage_with_stride(void) {
  check_conv(1, 2, 8, 8, 3, 3, 3, 1, 2, "", "conv_root_pad");
  check_conv(1, 2, 7, 9, 2, 3, 3, 2, 1, "split(padded, x, 4)\nvectorize(padded, x.inner)\n", "conv_root_pad_vec");
}

/* out[i] = sum(k in [1, 7): A[k] where k <= i): a reduction condition and a reduction
 * axis that does not start at 0. */
static void test_reduction_condition_and_axis_min(void) {
  st_arena a = st_arena_begin();
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ox = tsl_te_axes(1, (int64_t[]){8}, (const char *[]){"i"});
  tsl_iter_var k = tsl_te_reduce_axis("k", 1, 6);
  tsl_expr *src = tsl_te_read(A, 1, (tsl_expr *[]){k.var});
  tsl_te_tensor *out = tsl_te_compute("out", 1, ox, tsl_te_sum(src, 1, &k, tsl_le(k.var, ox[0].var)), NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  tsl_te_program *p = tsl_te_program_new("prefix", 1, &A, 1, &out);
  float *x = st_alloc_f32(8), *y = st_alloc_f32(8);
  for (int j = 0; j < 8; j++) x[j] = (float)(1 << j);
  const char *scheds[2] = {NULL, "split(out, k, 4)\nsplit(out, i, 4)\nvectorize(out, i.inner)\n"};
  for (int v = 0; v < 2; v++) {
    memset(y, 0xff, 8 * sizeof *y);
    CU_ASSERT_TRUE(lower_and_run(p, scheds[v], v ? "prefix_vec" : "prefix", (void *[]){x, y}));
    for (int i = 0; i < 8; i++) {
      float want = 0.0f;
      for (int j = 1; j < 7; j++)
        if (j <= i) want += x[j];
      CU_ASSERT_EQUAL(y[i], want);
    }
  }
  free(x);
  free(y);
  st_arena_end(a);
}

/* Two outputs, the second reading the first: both are arguments, in program order. */
static void test_output_read_by_another_output(void) {
  st_arena a = st_arena_begin();
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){3, 5});
  tsl_iter_var *bx = tsl_te_axes(2, (int64_t[]){3, 5}, (const char *[]){"i", "j"});
  tsl_expr *av = tsl_te_read(A, 2, (tsl_expr *[]){bx[0].var, bx[1].var});
  tsl_te_tensor *B = tsl_te_compute("B", 2, bx, tsl_add(av, tsl_f32(1.0f)), "elemwise");
  tsl_iter_var *cx = tsl_te_axes(2, (int64_t[]){3, 5}, (const char *[]){"i", "j"});
  tsl_expr *bv = tsl_te_read(B, 2, (tsl_expr *[]){cx[0].var, cx[1].var});
  tsl_te_tensor *C = tsl_te_compute("C", 2, cx, tsl_mul(bv, bv), "elemwise");
  CU_ASSERT_PTR_NOT_NULL_FATAL(C);
  tsl_te_program *p = tsl_te_program_new("two_out", 1, &A, 2, (tsl_te_tensor *[]){B, C});
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_create(p, &s), TSL_OK);
  CU_ASSERT_EQUAL(s->nsteps, 0); /* B is an output: not inlined */
  tsl_func *f = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_lower(s, "two_out", &f), TSL_OK);
  tsl_schedule_free(s);
  CU_ASSERT_EQUAL_FATAL(f->nargs, 3);
  CU_ASSERT_STRING_EQUAL(f->args[1].buf->name, "B");
  CU_ASSERT_STRING_EQUAL(f->args[2].buf->name, "C");
  CU_ASSERT_EQUAL(st_count(f->body).allocates, 0);
  float *x = st_alloc_f32(15), *b = st_alloc_f32(15), *c = st_alloc_f32(15);
  ref_fill_uniform(x, 15, 10, -2.0f, 2.0f);
  CU_ASSERT_TRUE(st_run(f, (void *[]){x, b, c}));
  int bad = 0;
  for (int k = 0; k < 15; k++) bad += b[k] != x[k] + 1.0f || c[k] != (x[k] + 1.0f) * (x[k] + 1.0f);
  CU_ASSERT_EQUAL(bad, 0);
  free(x);
  free(b);
  free(c);
  st_arena_end(a);
}

/* fuse then split: root indices come back through floor division and modulo. */
static void test_fused_split_loops(void) {
  const int64_t M = 5, N = 7;
  st_arena a = st_arena_begin();
  float *A = st_alloc_f32(M * N), *o = st_alloc_f32(M * N);
  ref_fill_uniform(A, M * N, 11, -3.0f, 3.0f);
  CU_ASSERT_TRUE(lower_and_run(st_elemwise_chain(M, N),
                               "compute_inline(B)\nfuse(out, i, j)\nsplit(out, i.j.fused, 8)\n"
                               "vectorize(out, i.j.fused.inner)\nparallel(out, i.j.fused.outer)\n",
                               "chain_fused", (void *[]){A, o}));
  int bad = 0;
  for (int64_t i = 0; i < M * N; i++) bad += o[i] != A[i] * 2.0f + 1.0f;
  CU_ASSERT_EQUAL(bad, 0);
  free(A);
  free(o);
  st_arena_end(a);
}

static int cleanup(void) {
  st_jit_release();
  return 0;
}

void tsl_tests_schedule_numeric(void) {
  CU_pSuite s = CU_add_suite("schedule/numeric", NULL, cleanup);
  CU_add_test(s, "test_matmul_default_matches_reference", test_matmul_default_matches_reference);
  CU_add_test(s, "test_matmul_tiled_vectorized_parallel_matches_reference",
              test_matmul_tiled_vectorized_parallel_matches_reference);
  CU_add_test(s, "test_conv_padded_default_matches_reference", test_conv_padded_default_matches_reference);
  CU_add_test(s, "test_conv_padding_wider_than_kernel_with_stride", test_conv_padding_wider_than_kernel_with_stride);
  CU_add_test(s, "test_C01_conv_width13_vectorized_by8", test_C01_conv_width13_vectorized_by8);
  CU_add_test(s, "test_C01_conv_width13_vectorized_by16", test_C01_conv_width13_vectorized_by16);
  CU_add_test(s, "test_C08_row_max_propagates_nan", test_C08_row_max_propagates_nan);
  CU_add_test(s, "test_elemwise_chain_inlined_root_and_vectorized", test_elemwise_chain_inlined_root_and_vectorized);
  CU_add_test(s, "test_row_center_uses_allocated_intermediate", test_row_center_uses_allocated_intermediate);
  CU_add_test(s, "test_root_stage_realizes_only_the_region_read", test_root_stage_realizes_only_the_region_read);
  CU_add_test(s, "test_table_at_data_dependent_index_computed_at_outer_loop",
              test_table_at_data_dependent_index_computed_at_outer_loop);
  CU_add_test(s, "test_conv_root_padding_stage_with_stride", test_conv_root_padding_stage_with_stride);
  CU_add_test(s, "test_reduction_condition_and_axis_min", test_reduction_condition_and_axis_min);
  CU_add_test(s, "test_output_read_by_another_output", test_output_read_by_another_output);
  CU_add_test(s, "test_fused_split_loops", test_fused_split_loops);
}
