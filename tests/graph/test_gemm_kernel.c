/* Fully connected layers through the graph compiler: Gemm (transA / transB 0 or 1,
 * alpha, beta, biases of every broadcast shape) and MatMul nodes with a constant weight,
 * few rows (the packed GEMV, models/passes/pack_dense.h) and more (the default
 * schedule), at 1 and 2 threads, against a naive double-precision product written here. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "models/compile.h"
#include "models/graph.h"
#include "runtime/graph_executor.h"
#include "runtime/module.h"
#include "target/target.h"
#include "tessel/runtime.h"

typedef struct gemm_case {
  int64_t M, K, N;
  bool ta, tb;
  double alpha, beta;
  int bias_ndim;     /* -1: no bias input */
  int64_t bias[2];   /* its shape (each extent the output's or 1) */
} gemm_case;

/* Deterministic values in [-1, 1): a linear congruential sequence. */
static void fill(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0);
  }
}

static tsl_tensor *constant(int ndim, const int64_t *shape, uint32_t seed) {
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  fill(t->data, tsl_tensor_numel(t), seed);
  return t;
}

/* y[m, n] = alpha * sum_k A'[m, k] B'[k, n] + beta * C[m, n] in double, A' and B' the
 * stored matrices transposed where ta / tb say, C broadcast (numpy rules). */
static void reference(const gemm_case *c, const float *a, const float *b, const float *bias, double *y) {
  for (int64_t m = 0; m < c->M; m++)
    for (int64_t n = 0; n < c->N; n++) {
      double s = 0.0;
      for (int64_t k = 0; k < c->K; k++) {
        double av = c->ta ? a[k * c->M + m] : a[m * c->K + k];
        double bv = c->tb ? b[n * c->K + k] : b[k * c->N + n];
        s += av * bv;
      }
      double v = c->alpha * s;
      if (c->bias_ndim >= 0) {
        int64_t bm = 0, bn = 0, cn = c->bias_ndim >= 1 ? c->bias[c->bias_ndim - 1] : 1;
        if (c->bias_ndim == 2 && c->bias[0] != 1) bm = m;
        if (cn != 1) bn = n;
        v += c->beta * bias[bm * cn + bn];
      }
      y[m * c->N + n] = v;
    }
}

/* The graph compiler packs in panels of the host's f32 lanes (8 with AVX2, 16 with
 * AVX-512), or of 8 or 4 columns where the lanes do not divide the width: a width packs
 * when one of them divides it (1000 classes: 8-wide panels at 16 lanes). */
static bool packs_on_host(int64_t N) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  int64_t lanes = tsl_target_f32_lanes(&t);
  return N % lanes == 0 || N % 8 == 0 || N % 4 == 0;
}

/* Compiles g (layout passes on unless plain), runs it at `threads`, compares output 0
 * with want (relative to its largest magnitude) and says whether a packed dense kernel
 * ran. */
static void run_and_check(const tsl_graph *g, bool plain, int threads, const float *in, int64_t in_n, const double *want,
                          int64_t n, bool *packed) {
  int saved = tsl_get_num_threads();
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(threads), TSL_OK);
  tsl_compile_options o = {0};
  o.no_layout = plain;
  tsl_graph_plan *plan = NULL;
  tsl_graph_ctx *ctx = NULL;
  tsl_status st = tsl_graph_compile(g, &o, &plan, NULL);
  CU_ASSERT_EQUAL(st, TSL_OK);
  if (st == TSL_OK) st = tsl_graph_ctx_new(plan, &ctx);
  *packed = false;
  for (int i = 0; st == TSL_OK && i < tsl_graph_plan_num_steps(plan); i++)
    *packed |= strncmp(tsl_kernel_name(tsl_graph_plan_step_kernel(plan, i)), "dense_packed", 12) == 0;
  if (st == TSL_OK) {
    memcpy(tsl_graph_ctx_input(ctx, 0), in, (size_t)in_n * sizeof *in);
    st = tsl_graph_run(ctx, NULL);
    CU_ASSERT_EQUAL(st, TSL_OK);
  }
  if (st == TSL_OK) {
    const float *y = tsl_graph_ctx_output(ctx, 0);
    double mag = 0.0, err = 0.0;
    for (int64_t i = 0; i < n; i++) mag = fmax(mag, fabs(want[i]));
    for (int64_t i = 0; i < n; i++) err = fmax(err, isfinite(y[i]) ? fabs(y[i] - want[i]) : INFINITY);
    CU_ASSERT(err <= 1e-5 * (mag > 0.0 ? mag : 1.0));
  }
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(plan);
  tsl_set_num_threads(saved);
}

/* One Gemm node; checked at 1 and 2 threads; packed when expect_packed and the host's
 * lanes divide N. */
static void check_gemm(const gemm_case *c, bool plain, bool expect_packed) {
  expect_packed = expect_packed && packs_on_host(c->N);
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("gemm", &g), TSL_OK);
  int64_t as[2] = {c->ta ? c->K : c->M, c->ta ? c->M : c->K}, bs[2] = {c->tb ? c->N : c->K, c->tb ? c->K : c->N};
  int x, ins[3], y, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "a", TSL_DTYPE_F32, 2, as, &x), TSL_OK);
  tsl_tensor *b = constant(2, bs, 7), *bias = c->bias_ndim >= 0 ? constant(c->bias_ndim, c->bias, 11) : NULL;
  float *a = malloc((size_t)(c->M * c->K) * sizeof *a);
  double *want = malloc((size_t)(c->M * c->N) * sizeof *want);
  CU_ASSERT_FATAL(a && want);
  fill(a, c->M * c->K, 3);
  reference(c, a, b->data, bias ? bias->data : NULL, want);
  ins[0] = x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, "b", b, &ins[1]), TSL_OK);
  if (bias) CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, "c", bias, &ins[2]), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, "y", &y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_GEMM, "fc", bias ? 3 : 2, ins, 1, &y, &node), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_set_attr_int(g, node, "transA", c->ta), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_set_attr_int(g, node, "transB", c->tb), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_set_attr_float(g, node, "alpha", c->alpha), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_set_attr_float(g, node, "beta", c->beta), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  for (int threads = 1; threads <= 2; threads++) {
    bool packed;
    run_and_check(g, plain, threads, a, c->M * c->K, want, c->M * c->N, &packed);
    CU_ASSERT_EQUAL(packed, expect_packed);
  }
  free(a);
  free(want);
  tsl_graph_free(g);
}

static void test_gemm_one_row_transposed_weight_odd_k_is_packed(void) {
  /* torch's Linear: transB = 1, bias [N]; K odd */
  gemm_case c = {1, 37, 48, false, true, 1.0, 1.0, 1, {48, 0}};
  check_gemm(&c, false, true);
  c.N = c.bias[0] = 1000; /* a classifier's width: 125 vectors, 4 per block with a tail block */
  c.K = 129;
  CU_ASSERT(packs_on_host(c.N)); /* at 8 lanes and at 16 (in 8-wide panels) */
  check_gemm(&c, false, true);
  c.N = c.bias[0] = 1002; /* no panel of 4 or more divides it: the plain kernel */
  CU_ASSERT(!packs_on_host(c.N));
  check_gemm(&c, false, true);
}

static void test_gemm_rows_transposed_input_alpha_beta_full_bias_is_packed(void) {
  gemm_case c = {3, 9, 16, true, false, 0.5, 2.0, 2, {3, 16}};
  check_gemm(&c, false, true);
}

static void test_gemm_bias_broadcast_shapes_row_column_and_scalar(void) {
  gemm_case row = {2, 11, 80, false, true, 1.0, -0.75, 2, {1, 80}};
  check_gemm(&row, false, true);
  gemm_case col = {4, 3, 32, true, true, 1.25, 1.0, 2, {4, 1}};
  check_gemm(&col, false, true);
  gemm_case one = {1, 7, 16, false, false, 1.0, 3.0, 1, {1, 0}};
  check_gemm(&one, false, true);
}

static void test_gemm_without_bias_scales_by_alpha(void) {
  gemm_case c = {1, 33, 64, false, false, -1.5, 1.0, -1, {0, 0}};
  check_gemm(&c, false, true);
  c.alpha = 1.0; /* the product alone: the dense stage is the kernel's output */
  check_gemm(&c, false, true);
}

static void test_gemm_columns_off_the_vector_width_take_the_default_schedule(void) {
  gemm_case c = {2, 5, 13, false, true, 1.0, 1.0, 2, {1, 13}};
  check_gemm(&c, false, false);
  gemm_case narrow = {1, 6, 3, true, true, 2.0, 0.5, 1, {3, 0}};
  check_gemm(&narrow, false, false);
}

static void test_gemm_many_rows_and_plain_compiles_take_the_default_schedule(void) {
  gemm_case rows = {6, 11, 40, false, true, 1.0, 1.0, 1, {40, 0}};
  check_gemm(&rows, false, false);
  gemm_case plain = {1, 37, 24, false, true, 1.0, 1.0, 1, {24, 0}};
  check_gemm(&plain, true, false);
}

/* MatMul [1, M, K] x constant [K, N]: packed for M <= 4, the default schedule above. */
static void check_matmul(int64_t M, int64_t K, int64_t N, bool expect_packed) {
  expect_packed = expect_packed && packs_on_host(N);
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("matmul", &g), TSL_OK);
  int64_t as[3] = {1, M, K}, bs[2] = {K, N};
  int x, ins[2], y, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "a", TSL_DTYPE_F32, 3, as, &x), TSL_OK);
  tsl_tensor *b = constant(2, bs, 5);
  float *a = malloc((size_t)(M * K) * sizeof *a);
  double *want = malloc((size_t)(M * N) * sizeof *want);
  CU_ASSERT_FATAL(a && want);
  fill(a, M * K, 9);
  gemm_case c = {M, K, N, false, false, 1.0, 0.0, -1, {0, 0}};
  reference(&c, a, b->data, NULL, want);
  ins[0] = x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, "b", b, &ins[1]), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, "y", &y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_MATMUL, "mm", 2, ins, 1, &y, &node), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  for (int threads = 1; threads <= 2; threads++) {
    bool packed;
    run_and_check(g, false, threads, a, M * K, want, M * N, &packed);
    CU_ASSERT_EQUAL(packed, expect_packed);
  }
  free(a);
  free(want);
  tsl_graph_free(g);
}

static void test_matmul_constant_weight_few_rows_is_packed(void) {
  check_matmul(2, 10, 16, true);
  check_matmul(5, 10, 16, false);
}

void tsl_tests_graph_gemm_kernel(void) {
  CU_pSuite s = CU_add_suite("graph_gemm_kernel", NULL, NULL);
  CU_add_test(s, "gemm_one_row_transposed_weight_odd_k_is_packed", test_gemm_one_row_transposed_weight_odd_k_is_packed);
  CU_add_test(s, "gemm_rows_transposed_input_alpha_beta_full_bias_is_packed",
              test_gemm_rows_transposed_input_alpha_beta_full_bias_is_packed);
  CU_add_test(s, "gemm_bias_broadcast_shapes_row_column_and_scalar", test_gemm_bias_broadcast_shapes_row_column_and_scalar);
  CU_add_test(s, "gemm_without_bias_scales_by_alpha", test_gemm_without_bias_scales_by_alpha);
  CU_add_test(s, "gemm_columns_off_the_vector_width_take_the_default_schedule",
              test_gemm_columns_off_the_vector_width_take_the_default_schedule);
  CU_add_test(s, "gemm_many_rows_and_plain_compiles_take_the_default_schedule",
              test_gemm_many_rows_and_plain_compiles_take_the_default_schedule);
  CU_add_test(s, "matmul_constant_weight_few_rows_is_packed", test_matmul_constant_weight_few_rows_is_packed);
}
