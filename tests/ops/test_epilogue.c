/* Activation epilogues (ops/epilogue.h) in the conv algorithms: every function of the
 * activation table after the direct conv (plain x = 1, full blocks of 8, K = 24 in blocks
 * of 16: the lane guard), the functions the modern CNNs use through every algorithm at 8
 * and 16 lanes, with and without residual, each against the naive conv reference followed
 * by the function of tests/ref/ref_activation.h (conv_check); the transcendental ones
 * after depthwise and grouped convs (the window template's epilogue pass) with residuals,
 * lane guards and tiles with tails. Also the workload key of an epilogue, the
 * rewrite's errors, and a stage epilogue with and without zero_padding. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/conv_check.h"
#include "ops/epilogue.h"
#include "ops/ops_util.h"
#include "ops/registry.h"
#include "schedule/schedule.h"
#include "tessel/tensor.h"

/* A 3x3 pad-1 layer, C 16 -> K 24 (not a multiple of 16: padding lanes at x = 16). */
static const conv_case c3 = {1, 16, 10, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0.0, 0.0, false};
static const conv_case c3_res = {1, 16, 10, 9, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0.0, 0.0, true};
static const conv_case c1 = {1, 16, 6, 7, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0.0, 0.0, false};
static const conv_case cdw = {1, 24, 9, 8, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24, 0, 0.0, 0.0, false};
static const conv_case cg = {1, 16, 8, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0.0, 0.0, false};

/* Log and Reciprocal amplify the f32 rounding of a conv output near 0 without bound (the
 * reference convolves in double): their layers get a bias of 5, outputs in about [2, 8]. */
static const float bias5[64] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
                                5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
                                5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};

static bool check_fn(const conv_case *c, tsl_conv2d_algo a, int64_t x, const char *fn, int nattrs, double a0,
                     double a1, int nrandom) {
  conv_check_opts o = conv_opts(nrandom, 77);
  if (strcmp(fn, "Log") == 0 || strcmp(fn, "Reciprocal") == 0) o.bias = bias5;
  o.block = x;
  o.function = fn;
  o.nfattrs = nattrs;
  o.fattrs[0] = a0;
  o.fattrs[1] = a1;
  bool ok = conv_check(c, a, &o);
  if (!ok) printf("  (%s through %s at x = %lld)\n", fn, tsl_conv2d_algo_name(a), (long long)x);
  return ok;
}

static void test_every_table_function_after_the_direct_conv(void) {
  int n = 0;
  const tsl_activation *t = tsl_activation_list(&n);
  CU_ASSERT(n >= 20);
  const int64_t blocks[3] = {1, 8, 16};
  for (int i = 0; i < n; i++)
    for (int b = 0; b < 3; b++) CU_ASSERT(check_fn(&c3, TSL_CONV2D_DIRECT, blocks[b], t[i].onnx_op, 0, 0, 0, 0));
}

/* The functions of MobileNetV3, EfficientNet, ConvNeXt and friends, with the constants
 * their exports carry (HardSigmoid 1/6, 1/2; LeakyRelu 0.1). */
static const struct {
  const char *fn;
  int nattrs;
  double a0, a1;
} model_fns[] = {
    {"Sigmoid", 0, 0, 0},       {"Swish", 0, 0, 0},  {"HardSigmoid", 2, 1.0 / 6.0, 0.5},
    {"HardSwish", 0, 0, 0},     {"Gelu", 0, 0, 0},   {"LeakyRelu", 1, 0.1, 0},
    {"Tanh", 0, 0, 0},          {"Elu", 1, 0.5, 0},
};

static void every_model_function(const conv_case *c, tsl_conv2d_algo a, int nrandom) {
  const int64_t blocks[2] = {8, 16};
  for (size_t f = 0; f < sizeof model_fns / sizeof model_fns[0]; f++)
    for (int b = 0; b < 2; b++)
      CU_ASSERT(check_fn(c, a, blocks[b], model_fns[f].fn, model_fns[f].nattrs, model_fns[f].a0, model_fns[f].a1,
                         f == 0 ? nrandom : 0));
}

static void test_model_functions_direct_and_im2col(void) {
  every_model_function(&c3, TSL_CONV2D_DIRECT, 2);
  every_model_function(&c3_res, TSL_CONV2D_DIRECT, 0);
  every_model_function(&c3, TSL_CONV2D_IM2COL, 1);
  every_model_function(&c3_res, TSL_CONV2D_IM2COL, 0);
}

static void test_model_functions_gemm1x1(void) { every_model_function(&c1, TSL_CONV2D_GEMM_1X1, 2); }

static void test_model_functions_depthwise_and_grouped(void) {
  every_model_function(&cdw, TSL_CONV2D_DEPTHWISE, 2);
  every_model_function(&cg, TSL_CONV2D_GROUPED, 1);
  every_model_function(&c3_res, TSL_CONV2D_GROUPED, 0);
}

/* The transcendental functions (exp, log, tanh, erf), which the window template computes
 * in a pass over the row of tiles instead of in the register tile (epilogue_pass,
 * ops/conv2d/conv_common.h). */
static const char *const transcendental_fns[] = {"Sigmoid", "Swish", "Gelu", "Tanh", "Elu", "Mish", "Softplus"};

/* Tiles with tails in every part (5 x 4 outputs of cdw, 8 x 8 of cg: 2 rows, 3 columns;
 * 3 channel blocks at 8 lanes in pairs), each pad mode and both loop orders. */
static const char *const tail_knobs[] = {"tile=10203,pad_mode=1,loop_order=1", "tile=20103,pad_mode=2",
                                         "tile=10302,pad_mode=0,loop_order=1"};

static bool check_knobs(const conv_case *c, tsl_conv2d_algo a, int64_t x, const char *fn, const char *knobs) {
  conv_check_opts o = conv_opts(0, 91);
  o.block = x;
  o.function = fn;
  o.knobs = knobs;
  o.skip_default = knobs != NULL;
  bool ok = conv_check(c, a, &o);
  if (!ok) printf("  (%s through %s at x = %lld, %s)\n", fn, tsl_conv2d_algo_name(a), (long long)x, knobs ? knobs : "default");
  return ok;
}

static void test_transcendental_epilogue_pass_depthwise_and_grouped(void) {
  static const conv_case cdw_res = {1, 24, 9, 8, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24, 0, 0.0, 0.0, true};
  static const conv_case cdw_s1 = {1, 20, 7, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 20, 0, 0.0, 0.0, false};
  static const conv_case cg_res = {1, 16, 8, 8, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0.0, 0.0, true};
  const conv_case *dw[3] = {&cdw, &cdw_res, &cdw_s1}, *gr[2] = {&cg, &cg_res};
  const int64_t blocks[2] = {8, 16};
  for (size_t f = 0; f < sizeof transcendental_fns / sizeof transcendental_fns[0]; f++)
    for (int b = 0; b < 2; b++) {
      const char *fn = transcendental_fns[f];
      for (int i = 0; i < 3; i++) CU_ASSERT(check_knobs(dw[i], TSL_CONV2D_DEPTHWISE, blocks[b], fn, NULL));
      for (int i = 0; i < 2; i++) CU_ASSERT(check_knobs(gr[i], TSL_CONV2D_GROUPED, blocks[b], fn, NULL));
      const char *knobs = tail_knobs[f % 3];
      CU_ASSERT(check_knobs(&cdw_res, TSL_CONV2D_DEPTHWISE, blocks[b], fn, knobs));
      CU_ASSERT(check_knobs(&cg_res, TSL_CONV2D_GROUPED, blocks[b], fn, knobs));
    }
}

/* The row buffer (a stage tagged "cache", copy of the accumulators) exists in the default
 * depthwise and grouped schedules exactly when the epilogue is transcendental. */
static void test_epilogue_pass_only_for_transcendental_functions(void) {
  const char *fns[4] = {"Swish", "Gelu", "HardSwish", "LeakyRelu"};
  const bool want[4] = {true, true, false, false};
  const tsl_conv2d_algo algos[2] = {TSL_CONV2D_DEPTHWISE, TSL_CONV2D_GROUPED};
  const conv_case *cases[2] = {&cdw, &cg};
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  for (int a = 0; a < 2; a++)
    for (int f = 0; f < 4; f++) {
      tsl_conv2d_layer d = conv_case_layer(cases[a], 8);
      CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make(fns[f], 0, NULL, 0, &d.epilogue), TSL_OK);
      tsl_te_program *conv = NULL;
      tsl_schedule *s = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, algos[a], ops_target(), &conv, NULL), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_schedule(conv, algos[a], ops_target(), &s), TSL_OK);
      bool row = false;
      for (int i = 0; i < s->nstages; i++) row |= s->stages[i]->op->tag && strcmp(s->stages[i]->op->tag, "cache") == 0;
      if (row != want[f]) printf("\n  %s after %s: row buffer %d\n", fns[f], tsl_conv2d_algo_name(algos[a]), row);
      CU_ASSERT_EQUAL(row, want[f]);
      tsl_schedule_free(s);
    }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_model_functions_winograd(void) {
  every_model_function(&c3, TSL_CONV2D_WINOGRAD_F2, 0);
  every_model_function(&c3, TSL_CONV2D_WINOGRAD_F4, 0);
  every_model_function(&c3_res, TSL_CONV2D_WINOGRAD_F4, 0);
  every_model_function(&c3, TSL_CONV2D_WINOGRAD_F6, 0);
}

/* The family key gains "+NAME(attrs)[channels=K]" only with an epilogue; relu stays. */
static void test_epilogue_is_part_of_the_workload_key(void) {
  tsl_conv2d_layer d = conv_case_layer(&c3, 16);
  tsl_workload w;
  char *plain = NULL, *relu = NULL, *sig = NULL, *swish = NULL, *swish2 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &plain), TSL_OK);
  d.act = 1;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &relu), TSL_OK);
  d.act = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Sigmoid", 0, NULL, 0, &d.epilogue), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &sig), TSL_OK);
  double alpha = 1.0;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Swish", 1, &alpha, 0, &d.epilogue), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &swish), TSL_OK);
  alpha = 1.5;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Swish", 1, &alpha, 0, &d.epilogue), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &swish2), TSL_OK);
  if (plain && relu && sig && swish && swish2) {
    CU_ASSERT_PTR_NULL(strchr(plain, '+'));
    CU_ASSERT_PTR_NULL(strchr(relu, '+'));
    CU_ASSERT_PTR_NOT_NULL(strstr(relu, "act=1"));
    /* K = 24 in blocks of 16: Sigmoid (f(0) = 1/2) is guarded, Swish (f(0) = 0) is not */
    size_t n = strlen(plain);
    CU_ASSERT(strncmp(sig, plain, n) == 0 && strcmp(sig + n, "+Sigmoid[channels=24]") == 0);
    CU_ASSERT(strncmp(swish, plain, n) == 0 && strcmp(swish + n, "+Swish(alpha=1)") == 0);
    CU_ASSERT(strcmp(swish2 + n, "+Swish(alpha=1.5)") == 0);
    /* the family workload reads back to the same layer, epilogue included */
    tsl_conv2d_layer back;
    CU_ASSERT_EQUAL(tsl_conv2d_layer_of_workload(&w, &back), TSL_OK);
    CU_ASSERT(back.epilogue.fn == d.epilogue.fn && back.epilogue.attrs[0] == 1.5);
  }
  free(plain), free(relu), free(sig), free(swish), free(swish2);
}

static void test_epilogue_errors(void) {
  tsl_epilogue e;
  CU_ASSERT_EQUAL(tsl_epilogue_make("NoSuchFunction", 0, NULL, 0, &e), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_EQUAL(tsl_epilogue_make("Relu6", 0, NULL, 0, &e), TSL_ERR_UNSUPPORTED);
  double two[2] = {1, 2};
  CU_ASSERT_EQUAL(tsl_epilogue_make("Sigmoid", 1, two, 0, &e), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_epilogue_make("Sigmoid", 0, NULL, -1, &e), TSL_ERR_INVALID);
  /* a relu and a function: one activation */
  tsl_conv2d_layer d = conv_case_layer(&c3, 8);
  d.act = 1;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Tanh", 0, NULL, 0, &d.epilogue), TSL_OK);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&d), TSL_ERR_INVALID);
  /* an output stage that is the reduction itself has no epilogue stage to rewrite */
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  const int64_t a[2] = {4, 5}, b[2] = {5, 3};
  const int64_t *shapes[2] = {a, b};
  const int nd[2] = {2, 2};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL(tsl_op_instantiate("matmul", 2, shapes, nd, 0, NULL, &p), TSL_OK);
  CU_ASSERT_EQUAL(tsl_epilogue_make("Tanh", 0, NULL, 0, &e), TSL_OK);
  if (p) CU_ASSERT_EQUAL(tsl_epilogue_apply(p, &e), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_epilogue_apply(NULL, &e), TSL_ERR_INVALID);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* A stage epilogue applies f to the stage's whole body unless its maker states that the
 * stage zero-pads: an inner ReLU written as select(v > 0, v, 0) gets Sigmoid everywhere
 * (f(0) = 1/2 where v <= 0), and only with zero_padding does the select's 0 stay.
 * Interpreted (dsl/te_interp.h) against the formulas in double. */
static void test_stage_epilogue_wraps_the_body_without_zero_padding(void) {
  static const char text[] = "op relu_then_add(x: f32[N])\n"
                             "  r[i] = select(x[i] > 0.0, x[i], 0.0)\n"
                             "  y[i] = r[i] + 1.0\n";
  enum { N = 16 };
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i - 8) * 0.375f;
  tsl_epilogue sig;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Sigmoid", 0, NULL, 0, &sig), TSL_OK);
  for (int zero_padding = 0; zero_padding < 2; zero_padding++) {
    tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
    tsl_dsl_module *m = NULL;
    tsl_te_program *p = NULL;
    tsl_stage_epilogue se;
    const int64_t n[1] = {N};
    const int64_t *shapes[1] = {n};
    const int nd[1] = {1};
    tsl_tensor *tx = NULL, *ty = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(text, "relu_then_add", &m), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_op(m, 0), 1, shapes, nd, 0, NULL, &p), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_stage_epilogue_make("r", &sig, zero_padding, &se), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_epilogue_apply_stage(p, &se), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 1, n, NULL, x, &tx), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 1, n, NULL, y, &ty), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_te_interpret(p, (const tsl_tensor *const *)&tx, &ty), TSL_OK);
    for (int i = 0; i < N; i++) {
      double v = x[i] > 0 ? x[i] : 0.0;
      double want = (zero_padding && x[i] <= 0 ? 0.0 : 1.0 / (1.0 + exp(-v))) + 1.0;
      CU_ASSERT_DOUBLE_EQUAL(y[i], want, 1e-6);
    }
    tsl_tensor_free(tx);
    tsl_tensor_free(ty);
    tsl_dsl_module_free(m);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
}

void ops_tests_epilogue(CU_pSuite s) {
  CU_add_test(s, "test_every_table_function_after_the_direct_conv", test_every_table_function_after_the_direct_conv);
  CU_add_test(s, "test_model_functions_direct_and_im2col", test_model_functions_direct_and_im2col);
  CU_add_test(s, "test_model_functions_gemm1x1", test_model_functions_gemm1x1);
  CU_add_test(s, "test_model_functions_depthwise_and_grouped", test_model_functions_depthwise_and_grouped);
  CU_add_test(s, "test_model_functions_winograd", test_model_functions_winograd);
  CU_add_test(s, "test_transcendental_epilogue_pass_depthwise_and_grouped",
              test_transcendental_epilogue_pass_depthwise_and_grouped);
  CU_add_test(s, "test_epilogue_pass_only_for_transcendental_functions",
              test_epilogue_pass_only_for_transcendental_functions);
  CU_add_test(s, "test_epilogue_is_part_of_the_workload_key", test_epilogue_is_part_of_the_workload_key);
  CU_add_test(s, "test_epilogue_errors", test_epilogue_errors);
  CU_add_test(s, "test_stage_epilogue_wraps_the_body_without_zero_padding",
              test_stage_epilogue_wraps_the_body_without_zero_padding);
}
