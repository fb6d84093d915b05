/* End to end: operators written in DSL text (the built-in registry and a user op),
 * instantiated per shape, default-scheduled, lowered, JIT-compiled and run, compared
 * with the naive references in tests/ref (written separately, float64 accumulation).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "dsl/parser.h"
#include "ir/arena.h"
#include "ref/ref_ops.h"
#include "runtime/module.h"
#include "target/target.h"

static tsl_jit *jit;

static int suite_init(void) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK) return 1;
  return tsl_jit_new(&t, &jit) != TSL_OK;
}

static int suite_clean(void) {
  tsl_jit_free(jit);
  jit = NULL;
  return 0;
}

/* Builds p with its default schedule and runs it once on bufs (inputs then outputs). */
static tsl_status build_and_run(const tsl_te_program *p, const char *name, void **bufs) {
  tsl_schedule *s = NULL;
  tsl_module *m = NULL;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st == TSL_OK) st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, name, jit, m, NULL, NULL);
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_module_get_kernel(m, name, &k);
  if (st == TSL_OK) {
    void *args[8];
    int n = p->ninputs + p->noutputs;
    for (int i = 0; i < n; i++) args[i] = &bufs[i];
    st = tsl_kernel_call(k, args, n);
  }
  tsl_module_free(m);
  tsl_schedule_free(s);
  return st;
}

static float *alloc_floats(int64_t n) {
  size_t bytes = ((size_t)n * sizeof(float) + 63) & ~(size_t)63;
  float *p = aligned_alloc(64, bytes ? bytes : 64);
  if (p) memset(p, 0, bytes ? bytes : 64);
  return p;
}

/* ---- conv2d ---- */

typedef struct conv_case {
  int64_t N, C, H, W, K, R, S, sh, sw, pt, pl, pb, pr, dh, dw;
} conv_case;

/* Runs conv2d_nchw from the registry and compares with ref_conv2d_nchw; returns the
 * relative error (or +inf when the build or run failed, printing why). */
static double run_conv(const conv_case *c) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  ref_conv2d_params p = {c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->sh, c->sw, c->pt, c->pl, c->pb, c->pr,
                         c->dh, c->dw, 1};
  int64_t OH = ref_conv2d_out_h(&p), OW = ref_conv2d_out_w(&p);
  int64_t din[4] = {c->N, c->C, c->H, c->W}, dw[4] = {c->K, c->C, c->R, c->S};
  const int64_t *shapes[2] = {din, dw};
  int ndims[2] = {4, 4};
  tsl_dsl_param_value params[8] = {
      tsl_dsl_int_param("stride_h", c->sh),   tsl_dsl_int_param("stride_w", c->sw),
      tsl_dsl_int_param("pad_top", c->pt),    tsl_dsl_int_param("pad_left", c->pl),
      tsl_dsl_int_param("pad_bottom", c->pb), tsl_dsl_int_param("pad_right", c->pr),
      tsl_dsl_int_param("dilation_h", c->dh), tsl_dsl_int_param("dilation_w", c->dw)};
  tsl_te_program *prog = NULL;
  double err = INFINITY;
  tsl_status st = tsl_op_instantiate("conv2d", 2, shapes, ndims, 8, params, &prog);
  if (st != TSL_OK) {
    printf("\n  conv2d instantiate: %s\n", tsl_last_error());
  } else {
    const tsl_buffer *ob = prog->outputs[0]->buf;
    CU_ASSERT_EQUAL(ob->shape[2], OH);
    CU_ASSERT_EQUAL(ob->shape[3], OW);
    int64_t nin = c->N * c->C * c->H * c->W, nw = c->K * c->C * c->R * c->S, nout = c->N * c->K * OH * OW;
    float *in = alloc_floats(nin), *w = alloc_floats(nw), *out = alloc_floats(nout), *ref = alloc_floats(nout);
    ref_fill_uniform(in, nin, 11 + (uint64_t)nin, -1.0f, 1.0f);
    ref_fill_uniform(w, nw, 23 + (uint64_t)nw, -1.0f, 1.0f);
    for (int64_t i = 0; i < nout; i++) out[i] = NAN; /* every element must be written */
    void *bufs[3] = {in, w, out};
    st = build_and_run(prog, "e2e_conv2d", bufs);
    if (st != TSL_OK) {
      printf("\n  conv2d build/run: %s\n", tsl_last_error());
    } else {
      ref_conv2d_nchw(&p, in, w, NULL, ref);
      err = ref_max_rel_error(out, ref, nout);
    }
    free(in);
    free(w);
    free(out);
    free(ref);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return err;
}

static void check_conv_cases(const conv_case *cases, int n) {
  for (int i = 0; i < n; i++) {
    const conv_case *c = &cases[i];
    double err = run_conv(c);
    if (!(err < 1e-5))
      printf("\n  conv N%lld C%lld %lldx%lld K%lld %lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld: error %g\n",
             (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->K, (long long)c->R,
             (long long)c->S, (long long)c->sh, (long long)c->sw, (long long)c->pt, (long long)c->pl,
             (long long)c->pb, (long long)c->pr, (long long)c->dh, (long long)c->dw, err);
    CU_ASSERT(err < 1e-5);
  }
}

/* 30 shapes: odd sizes (not multiples of 4, 8 or 16), batch > 1, 1x1 kernels, stride 1
 * and 2, padding 0..3, dilation 1..3, non-square inputs and kernels. */
static void test_conv2d_nchw_shapes(void) {
  static const conv_case cases[] = {
      /* N  C  H   W   K  R  S sh sw pt pl pb pr dh dw */
      {1, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 3, 13, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 4, 9, 11, 6, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1},
      {3, 5, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},
      {1, 17, 15, 15, 9, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
      {1, 8, 16, 16, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {2, 3, 17, 19, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 6, 21, 21, 12, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1},
      {1, 6, 21, 21, 12, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1},
      {1, 2, 23, 23, 3, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1},
      {1, 3, 12, 12, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
      {2, 5, 14, 10, 3, 3, 3, 1, 1, 3, 3, 3, 3, 3, 3},
      {1, 4, 11, 13, 5, 3, 3, 1, 2, 1, 0, 1, 0, 1, 2},
      {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},
      {1, 1, 5, 5, 1, 5, 5, 1, 1, 0, 0, 0, 0, 1, 1},
      {4, 3, 6, 6, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 33, 9, 9, 31, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 64, 7, 7, 65, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},
      {1, 7, 10, 3, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1},
      {1, 3, 8, 8, 4, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 3, 9, 14, 6, 1, 3, 1, 1, 0, 1, 0, 1, 1, 1},
      {1, 3, 14, 9, 6, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1},
      {2, 2, 5, 5, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1},
      {1, 4, 6, 6, 3, 2, 2, 4, 4, 0, 0, 0, 0, 1, 1},
      {1, 3, 10, 10, 5, 3, 3, 1, 1, 4, 4, 4, 4, 1, 1},
      {1, 16, 28, 28, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 24, 14, 14, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 9, 31, 29, 11, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1},
      {3, 2, 4, 4, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},
      {1, 5, 19, 17, 7, 3, 5, 2, 1, 2, 1, 0, 3, 2, 1},
  };
  check_conv_cases(cases, (int)(sizeof cases / sizeof cases[0]));
}

/* shared/cases C06 and its class (asymmetric, one-sided, padding >= kernel, with stride). */
static void test_C06_asymmetric_padding(void) {
  static const conv_case cases[] = {
      {1, 1, 32, 64, 1, 2, 4, 2, 1, 0, 1, 0, 2, 1, 1}, /* the case itself: output 16x64 */
      {1, 2, 9, 9, 3, 3, 3, 1, 1, 0, 2, 0, 0, 1, 1},   /* one-sided left */
      {1, 2, 9, 9, 3, 3, 3, 1, 1, 2, 0, 0, 0, 1, 1},   /* one-sided top */
      {1, 2, 9, 9, 3, 3, 3, 2, 2, 0, 0, 3, 3, 1, 1},   /* bottom/right only, >= kernel, stride 2 */
      {2, 3, 7, 8, 4, 2, 2, 2, 3, 3, 0, 1, 4, 1, 1},   /* padding > kernel, uneven strides */
  };
  double err = run_conv(&cases[0]);
  CU_ASSERT(err < 1e-5);
  check_conv_cases(cases + 1, 4);
  /* the output shape the case states */
  ref_conv2d_params p = {1, 1, 32, 64, 1, 2, 4, 2, 1, 0, 1, 0, 2, 1, 1, 1};
  CU_ASSERT_EQUAL(ref_conv2d_out_h(&p), 16);
  CU_ASSERT_EQUAL(ref_conv2d_out_w(&p), 64);
}

/* shared/cases C13: first conv of a net, C=1, 640x16, 3x3 stride 2 pad 1: deterministic,
 * no NaN, equal to the reference (NCHW here; the blocked layout comes with the
 * operator library). */
static void test_C13_first_conv_one_channel(void) {
  static const conv_case cases[] = {
      {1, 1, 640, 16, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {1, 1, 15, 640, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
      {2, 3, 33, 17, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
  };
  check_conv_cases(cases, 3);
}

/* shared/cases C02's class without Winograd: a valid (pad 0) 3x3 conv whose output is not
 * a multiple of any tile: output 1 x K x (H-2) x (W-2). */
static void test_C02_conv_pad0_output_shape(void) {
  static const conv_case cases[] = {
      {1, 8, 73, 73, 12, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1},
      {1, 5, 11, 7, 3, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1},
  };
  check_conv_cases(cases, 2);
}

/* ---- matmul ---- */

static double run_matmul(int64_t M, int64_t N, int64_t K) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int64_t sa[2] = {M, K}, sb[2] = {K, N};
  const int64_t *shapes[2] = {sa, sb};
  int ndims[2] = {2, 2};
  tsl_te_program *prog = NULL;
  double err = INFINITY;
  if (tsl_op_instantiate("matmul", 2, shapes, ndims, 0, NULL, &prog) != TSL_OK) {
    printf("\n  matmul instantiate: %s\n", tsl_last_error());
  } else {
    float *A = alloc_floats(M * K), *B = alloc_floats(K * N), *C = alloc_floats(M * N), *R = alloc_floats(M * N);
    ref_fill_uniform(A, M * K, 5, -1.0f, 1.0f);
    ref_fill_uniform(B, K * N, 6, -1.0f, 1.0f);
    for (int64_t i = 0; i < M * N; i++) C[i] = NAN;
    void *bufs[3] = {A, B, C};
    if (build_and_run(prog, "e2e_matmul", bufs) != TSL_OK) {
      printf("\n  matmul build/run: %s\n", tsl_last_error());
    } else {
      ref_matmul(M, N, K, A, B, R);
      err = ref_max_rel_error(C, R, M * N);
    }
    free(A);
    free(B);
    free(C);
    free(R);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return err;
}

static void test_matmul_shapes(void) {
  static const int64_t shapes[][3] = {
      {1, 1, 1},    {1, 7, 3},     {7, 1, 5},     {3, 5, 1},    {16, 16, 16}, {17, 13, 11},
      {100, 70, 30}, {64, 65, 63}, {31, 33, 129}, {2, 100, 9},  {128, 3, 77}, {45, 45, 45},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    double err = run_matmul(shapes[i][0], shapes[i][1], shapes[i][2]);
    if (!(err < 1e-5))
      printf("\n  matmul %lldx%lldx%lld: error %g\n", (long long)shapes[i][0], (long long)shapes[i][1],
             (long long)shapes[i][2], err);
    CU_ASSERT(err < 1e-5);
  }
}

/* ---- a user-defined operator in DSL text ---- */

static const char *user_op_text =
    "// y = relu(alpha * x + b) over rows, then a row sum\n"
    "op scaled_relu_rowsum(X: f32[M, N], b: f32[N], alpha: float = 2.0)\n"
    "  t[i, j] = max(alpha * X[i, j] + b[j], 0.0)\n"
    "  s[i] = sum(j: t[i, j])\n";

static void test_user_op_from_text(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *mod = NULL;
  tsl_status st = tsl_dsl_parse(user_op_text, "user.tsl", &mod);
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  const tsl_dsl_op *def = tsl_dsl_module_find(mod, "scaled_relu_rowsum");
  CU_ASSERT_PTR_NOT_NULL_FATAL(def);
  const int64_t M = 13, N = 37;
  int64_t sx[2] = {M, N}, sb[1] = {N};
  const int64_t *shapes[2] = {sx, sb};
  int ndims[2] = {2, 1};
  tsl_dsl_param_value alpha = tsl_dsl_float_param("alpha", 0.5);
  tsl_te_program *prog = NULL;
  st = tsl_dsl_instantiate(def, 2, shapes, ndims, 1, &alpha, &prog);
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  float *X = alloc_floats(M * N), *b = alloc_floats(N), *s = alloc_floats(M);
  ref_fill_uniform(X, M * N, 77, -2.0f, 2.0f);
  ref_fill_uniform(b, N, 78, -1.0f, 1.0f);
  void *bufs[3] = {X, b, s};
  st = build_and_run(prog, "e2e_user_op", bufs);
  CU_ASSERT_EQUAL(st, TSL_OK);
  for (int64_t i = 0; i < M && st == TSL_OK; i++) {
    double acc = 0.0;
    for (int64_t j = 0; j < N; j++) {
      double t = 0.5 * (double)X[i * N + j] + (double)b[j];
      acc += t > 0.0 ? t : 0.0;
    }
    CU_ASSERT(fabs(s[i] - acc) <= 1e-5 * fmax(1.0, fabs(acc)));
  }
  free(X);
  free(b);
  free(s);
  tsl_dsl_module_free(mod);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

void tsl_tests_e2e_dsl_compile(void);
void tsl_tests_e2e_tunecli(void);

void tsl_tests_e2e(void) {
  tsl_tests_e2e_dsl_compile();
  tsl_tests_e2e_tunecli();
  CU_pSuite s = CU_add_suite("e2e_dsl_to_jit", suite_init, suite_clean);
  CU_add_test(s, "test_conv2d_nchw_shapes", test_conv2d_nchw_shapes);
  CU_add_test(s, "test_C06_asymmetric_padding", test_C06_asymmetric_padding);
  CU_add_test(s, "test_C13_first_conv_one_channel", test_C13_first_conv_one_channel);
  CU_add_test(s, "test_C02_conv_pad0_output_shape", test_C02_conv_pad0_output_shape);
  CU_add_test(s, "test_matmul_shapes", test_matmul_shapes);
  CU_add_test(s, "test_user_op_from_text", test_user_op_from_text);
}
