/* The f32 exp of generated code on NEON (4 lanes; codegen/llvm_math.c's generic path, no
 * vscalefps): graphs of one Exp, Sigmoid or Swish node compiled ahead of time for armv8 and
 * run by the aarch64 device app under qemu, against the functions in double precision on
 * a dense sweep of [-110, 95] (subnormal results, underflow to 0, overflow to +inf) and
 * the special values (+-0, +-inf, NaN, subnormal inputs, +-1e30, +-FLT_MAX). Bounds as
 * tests/codegen/test_math.c checks them on x86: exp within 1 ulp (subnormal results in
 * subnormal steps); Sigmoid and Swish within 4 x 2^-24 relative wherever the value's
 * magnitude is at least 2^-100 and within 2^-100 absolute below; NaN and infinities exact. */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cross_util.h"
#include "graph/graph_util.h"

enum { N = 16 * 16 * 16 };

static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static double swish_d(double x) { return x / (1.0 + exp(-x)); }

/* The error of got against want in the function's bound's unit: for exp, ulps (the
 * subnormal step below FLT_MIN); for the logistic, relative error over 2^-24 where
 * |want| >= 2^-100, and 0 or 1e9 below (within 2^-100 absolute or not). NaN and infinite
 * results must match exactly (1e9 otherwise). */
static double error_of(bool is_exp, float got, double want_d) {
  float want = (float)want_d;
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : 1e9;
  if (isinf(want) || isinf(got)) return got == want ? 0 : 1e9;
  if (is_exp) {
    double step = fabs((double)want) < FLT_MIN ? 0x1p-149 : ldexp(1.0, ilogb(want) - 23);
    return fabs((double)got - (double)want) / step;
  }
  double a = fabs((double)got - want_d);
  if (fabs(want_d) >= 0x1p-100) return a / fabs(want_d) * 0x1p24;
  return a <= 0x1p-100 ? 0 : 1e9;
}

/* x -> fn(x) on 1x16x16x16 under qemu; the largest error (error_of) over in[]. */
static double run_fn(const char *fn, const char *name, const float *in, double (*ref)(double)) {
  tsl_graph *g;
  int x, node;
  int64_t xs[4] = {1, 16, 16, 16};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new(name, &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, xs, &x), TSL_OK);
  int y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", fn), TSL_OK);
  if (strcmp(fn, "Swish") == 0) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "alpha", 1.0), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  float *got = malloc(N * 4);
  CU_ASSERT_FATAL(got != NULL);
  double worst = 1e9;
  int rc = cross_aot_run_under_qemu(g, name, in, N, got, N);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc == 0) {
    worst = 0;
    for (int i = 0; i < N; i++) worst = fmax(worst, error_of(ref == exp, got[i], ref((double)in[i])));
    printf("\n  %s armv8 AOT under qemu vs float64: %.3g %s", fn, worst, ref == exp ? "ulp" : "x 2^-24 relative");
  }
  free(got);
  tsl_graph_free(g);
  return worst;
}

static void test_aot_armv8_exp_sigmoid_swish_under_qemu_within_bounds(void) {
  if (!cross_device_app_ready()) return;
  static const float edge[32] = {0.0f,    -0.0f,   INFINITY, -INFINITY, NAN,      1e-45f,  -1e-45f, -1e-40f,
                                 1e30f,   -1e30f,  FLT_MAX,  -FLT_MAX,  88.72f,   88.73f,  -87.33f, -87.34f,
                                 -103.9f, -104.0f, -105.0f,  -150.0f,   89.0f,    100.0f,  -88.72f, -88.73f,
                                 -92.0f,  17.0f,   -17.0f,   0.5f,      -0.5f,    1e-20f,  0.6931472f, -0.6931472f};
  float *in = malloc(N * 4);
  CU_ASSERT_FATAL(in != NULL);
  memcpy(in, edge, sizeof edge);
  for (int i = 32; i < N; i++) in[i] = (float)(-110.0 + 205.0 * (i - 32) / (N - 33));
  CU_ASSERT(run_fn("Exp", "math_exp", in, exp) <= 1.0);
  CU_ASSERT(run_fn("Sigmoid", "math_sigmoid", in, sigmoid_d) <= 4.0);
  CU_ASSERT(run_fn("Swish", "math_swish", in, swish_d) <= 4.0);
  free(in);
}

void tsl_tests_cross_math(void);
void tsl_tests_cross_math(void) {
  CU_pSuite s = CU_add_suite("cross_math", NULL, NULL);
  CU_add_test(s, "aot_armv8_exp_sigmoid_swish_under_qemu_within_bounds",
              test_aot_armv8_exp_sigmoid_swish_under_qemu_within_bounds);
}
