/* The f32 exp, log and tanh of codegen/llvm_math.h (straight-line IR, no libm call),
 * scalar and at 4, 8 and 16 lanes, against libm in double precision rounded to f32:
 * a dense sweep of each function's range in ulp, its special values, subnormals, and
 * the overflow / underflow edges. exp has two 2^n paths (vscalefps with AVX-512 at the
 * vector's width, the bit trick elsewhere): every kernel runs on each compile path this
 * host offers (math_paths), so both are checked at every lane count on an AVX-512 host. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/machine.h"
#include "target/target.h"
#include "tests/codegen/cg_util.h"

/* values per sweep: a multiple of 16 */
#define NSWEEP 4096

static tsl_expr *call1(tsl_intrinsic op, tsl_expr *a) { return tsl_call(op, a->type, 1, &a); }
static tsl_expr *f_exp(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_EXP, x[0]); }
static tsl_expr *f_log(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_LOG, x[0]); }
static tsl_expr *f_tanh(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_TANH, x[0]); }
static tsl_expr *f_erf(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_ERF, x[0]); }

/* Distance in units in the last place between two finite floats of one sign. */
static double ulps(float got, float want) {
  if (got == want) return 0;
  int32_t a, b;
  memcpy(&a, &got, 4);
  memcpy(&b, &want, 4);
  if ((a < 0) != (b < 0)) return fabs((double)got - want) / ldexp(1.0, -149); /* across 0: in subnormal steps */
  return fabs((double)a - (double)b);
}

/* The ways a kernel is compiled here: the host JIT; a JIT for x86-64-avx2 when the host
 * runs it and is not it (AVX2 code: exp's bit trick); on a host with AVX-512F the host
 * narrowed to 256 bits (f->vector_bits, a schedule's vector_width: the bit trick with the
 * host's CPU). */
typedef struct math_path {
  const char *name;
  tsl_jit *jit;
  int vector_bits; /* 0: the JIT's own */
} math_path;
enum { MAX_PATHS = 3 };
static math_path paths[MAX_PATHS];
static int npaths;
static tsl_jit *avx2_jit;

static int math_suite_init(void) {
  if (cg_suite_init() != 0) return 1;
  const tsl_target *host = tsl_jit_target(cg_jit);
  npaths = 0;
  paths[npaths++] = (math_path){"host", cg_jit, 0};
  tsl_target t;
  char a[512], b[512];
  if (host->arch == TSL_ARCH_X86_64 && tsl_target_parse("x86-64-avx2", &t) == TSL_OK &&
      tsl_target_runs_on_host(&t, NULL) &&
      strcmp(tsl_target_str(host, a, sizeof a), tsl_target_str(&t, b, sizeof b)) != 0) {
    if (tsl_jit_new(&t, &avx2_jit) != TSL_OK) {
      fprintf(stderr, "codegen math tests: no x86-64-avx2 JIT: %s\n", tsl_last_error());
      return 1;
    }
    paths[npaths++] = (math_path){"avx2", avx2_jit, 0};
  }
  if (host->arch == TSL_ARCH_X86_64 && tsl_target_has_feature(host, "avx512f"))
    paths[npaths++] = (math_path){"host256", cg_jit, 256};
  tsl_clear_error();
  return 0;
}

static int math_suite_clean(void) {
  tsl_jit_free(avx2_jit);
  avx2_jit = NULL;
  npaths = 0;
  return cg_suite_clean();
}

/* fn on x[0..n) through every path: out[(p*CG_NREGIONS + r)*n + i] for path p and region
 * r (cg_lanes_kernel); malloc'd, free(). */
static float *run_paths(const char *name, cg_expr_fn fn, const float *x, int n) {
  float *in = cg_alloc((size_t)n * 4), *out = cg_alloc((size_t)npaths * CG_NREGIONS * n * 4);
  memcpy(in, x, (size_t)n * 4);
  tsl_type t = TSL_F32;
  for (int p = 0; p < npaths; p++) {
    char kname[64];
    snprintf(kname, sizeof kname, "%s_%s", name, paths[p].name);
    tsl_func *f = cg_lanes_kernel(kname, 1, &t, TSL_F32, n, fn);
    f->vector_bits = paths[p].vector_bits;
    tsl_status st = cg_run_lanes_on(paths[p].jit, f, 1, (void *[]){in}, out + (size_t)p * CG_NREGIONS * n);
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  }
  free(in);
  return out;
}

/* Runs fn on x[0..n) at every region of every path and returns the largest error in
 * ulp against ref rounded to f32; special results (inf, NaN, exact zero) must match
 * exactly (counted as 1e9 ulp otherwise). */
static double max_ulps(const char *name, cg_expr_fn fn, double (*ref)(double), const float *x, int n) {
  float *out = run_paths(name, fn, x, n);
  double worst = 0;
  for (int p = 0; p < npaths; p++) {
    double worst_p = 0;
    for (int r = 0; r < CG_NREGIONS; r++)
      for (int i = 0; i < n; i++) {
        float want = (float)ref((double)x[i]), got = out[((size_t)p * CG_NREGIONS + r) * n + i];
        double e;
        if (isnan(want) || isnan(got)) e = isnan(want) && isnan(got) ? 0 : 1e9;
        else if (isinf(want) || isinf(got) || want == 0 || got == 0)
          e = got == want || fabs((double)got - want) <= ldexp(1.0, -149) ? 0 : 1e9;
        else e = ulps(got, want);
        if (e > worst_p) worst_p = e;
      }
    if (getenv("TSL_TEST_VERBOSE")) fprintf(stderr, "%s %s: %g ulp\n", name, paths[p].name, worst_p);
    worst = fmax(worst, worst_p);
  }
  free(out);
  return worst;
}

/* n values from lo to hi, evenly spaced */
static void sweep(float *x, int n, double lo, double hi) {
  for (int i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * i / (n - 1));
}

/* exp within 1 ulp on every path; on an AVX-512F host the 16-lane kernel's 2^n is a
 * vscalefps and the one narrowed to 256 bits has none. */
static void test_f32_exp_within_1_ulp_and_ieee_edges(void) {
  enum { M = 1 << 16 };
  float *x = malloc(M * 4);
  sweep(x, M, -87.0, 88.5);
  CU_ASSERT(max_ulps("exp_sweep", f_exp, exp, x, M) <= 1.0);
  sweep(x, NSWEEP, -104.5, -87.0); /* subnormal results (ulp: the subnormal step) and 0 */
  CU_ASSERT(max_ulps("exp_subnormal", f_exp, exp, x, NSWEEP) <= 1.0);
  sweep(x, NSWEEP, 88.0, 89.5); /* the largest results and overflow */
  CU_ASSERT(max_ulps("exp_overflow", f_exp, exp, x, NSWEEP) <= 1.0);
  sweep(x, NSWEEP, -1.0, 1.0);
  CU_ASSERT(max_ulps("exp_small", f_exp, exp, x, NSWEEP) <= 1.0);
  /* edges: subnormal results, underflow to 0, overflow to inf, specials */
  static const float edge[32] = {0.0f,   -0.0f,  INFINITY, -INFINITY, NAN,    88.72f,  88.73f,  89.0f,
                                 100.0f, 1e30f,  -87.33f,  -87.34f,   -90.0f, -95.0f,  -100.0f, -103.0f,
                                 -103.9f, -104.0f, -105.0f, -150.0f, -1e30f, 1e-30f, -1e-30f, 1e-45f,
                                 0.5f,   -0.5f,  0.6931472f, -0.6931472f, 20.0f, -20.0f, 44.0f, -44.0f};
  CU_ASSERT(max_ulps("exp_edge", f_exp, exp, edge, 32) <= 1.0);
  free(x);
  const tsl_target *host = tsl_jit_target(cg_jit);
  if (host->arch != TSL_ARCH_X86_64 || !tsl_target_has_feature(host, "avx512f")) return;
  tsl_type t = TSL_F32;
  for (int narrow = 0; narrow < 2; narrow++) {
    tsl_func *f = cg_lanes_kernel(narrow ? "exp_asm_256" : "exp_asm", 1, &t, TSL_F32, 16, f_exp);
    f->vector_bits = narrow ? 256 : 0;
    char *text = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_codegen_asm(f, host, &text), TSL_OK);
    CU_ASSERT_EQUAL(strstr(text, "vscalefps") != NULL, !narrow);
    if (!narrow) CU_ASSERT_PTR_NOT_NULL(strstr(text, "%zmm"));
    free(text);
  }
}

static void test_f32_log_within_2_ulp_and_ieee_edges(void) {
  float *x = malloc(NSWEEP * 4);
  sweep(x, NSWEEP, 0.5, 2.0);
  CU_ASSERT(max_ulps("log_near1", f_log, log, x, NSWEEP) <= 2.0);
  for (int i = 0; i < NSWEEP; i++) x[i] = (float)ldexp(1.0 + (i % 97) / 97.0, i % 250 - 125); /* 2^-125 .. 2^124 */
  CU_ASSERT(max_ulps("log_wide", f_log, log, x, NSWEEP) <= 2.0);
  static const float edge[32] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -1e-30f, 1.0f,
                                 1e-45f, 1e-40f, 1.17549435e-38f, 1.1754942e-38f, FLT_MAX, 2.0f, 0.5f, 0.70710677f,
                                 0.7071068f, 1.0000001f, 0.99999994f, 10.0f, 1e10f, 1e-10f, 3.0f, 7.0f,
                                 1e20f, 1e-20f, 123.456f, 0.001f, 65536.0f, 1.5f, 1.4142135f, 1.4142137f};
  CU_ASSERT(max_ulps("log_edge", f_log, log, edge, 32) <= 2.0);
  free(x);
}

static void test_f32_tanh_within_2_ulp_and_saturates(void) {
  float *x = malloc(NSWEEP * 4);
  sweep(x, NSWEEP, -10.0, 10.0);
  CU_ASSERT(max_ulps("tanh_sweep", f_tanh, tanh, x, NSWEEP) <= 2.0);
  sweep(x, NSWEEP, -0.7, 0.7); /* both sides of the 0.625 switch */
  CU_ASSERT(max_ulps("tanh_small", f_tanh, tanh, x, NSWEEP) <= 2.0);
  static const float edge[16] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 1e-45f,
                                 0.625f, -0.625f, 0.62499994f, 44.0f, 100.0f, -100.0f, 1e30f, 9.0f};
  CU_ASSERT(max_ulps("tanh_edge", f_tanh, tanh, edge, 16) <= 2.0);
  free(x);
}

/* erf is tessel's own piecewise polynomial (llvm_math.c): within 1 ulp on a dense sweep
 * and at both sides of its pieces' borders (0.875, 2.25, the clamp at 4), odd, exactly
 * +-1 beyond 4; f64 erf is libm's, lane by lane. */
static void test_f32_erf_within_1_ulp_and_f64_is_libm(void) {
  enum { M = 1 << 16 };
  float *x = malloc(M * 4);
  sweep(x, M, -6.0, 6.0);
  CU_ASSERT(max_ulps("erf_sweep", f_erf, erf, x, M) <= 1.0);
  sweep(x, NSWEEP, -1e-3, 1e-3);
  CU_ASSERT(max_ulps("erf_small", f_erf, erf, x, NSWEEP) <= 1.0);
  static const float edge[32] = {0.0f,  -0.0f, INFINITY, -INFINITY, NAN,     1e-45f,    -1e-40f,  1e-30f,
                                 0.875f, 0.87499994f, -0.875f, 2.25f, 2.2499998f, -2.25f, 3.92f, 4.0f,
                                 4.0000005f, 3.9999998f, -4.0f, 5.0f, -5.0f, 1e30f, -1e30f, 0.5f,
                                 -1.0f, 1.5f, 3.0f, 1e-5f, 0.1f, 10.0f, FLT_MAX, -FLT_MAX};
  CU_ASSERT(max_ulps("erf_edge", f_erf, erf, edge, 32) <= 1.0);
  /* odd, and exactly +-1 from 4 on */
  float *in = cg_alloc(16 * 4), *out = cg_alloc(CG_NREGIONS * 16 * 4);
  for (int i = 0; i < 16; i++) in[i] = i < 8 ? 0.3f * (float)i + 0.01f : -in[i - 8];
  in[7] = 4.0f;
  in[15] = -4.0f;
  tsl_type t = TSL_F32, d = TSL_F64;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("erf_odd", 1, &t, TSL_F32, 16, f_erf), 1, (void *[]){in}, out),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(out[r * 16 + i], -out[r * 16 + i + 8]);
  CU_ASSERT(out[7] == 1.0f && out[15] == -1.0f);
  double *xd = cg_alloc(16 * 8), *od = cg_alloc(CG_NREGIONS * 16 * 8);
  for (int i = 0; i < 16; i++) xd[i] = (i - 8) * 0.37 + 1e-3;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("erf_d", 1, &d, TSL_F64, 16, f_erf), 1, (void *[]){xd}, od),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < 16; i++) CU_ASSERT_EQUAL(od[r * 16 + i], erf(xd[i]));
  free(x), free(in), free(out), free(xd), free(od);
}

/* The logistic's forms as Sigmoid and Swish write them (ops/nn/activation.c), with the
 * f32 exp above and a division, against the same formulas in double precision: within
 * 4 x 2^-24 relative wherever the value's magnitude is at least 2^-100 (2.0 x 2^-24
 * measured for sigmoid, 2.7 for swish), within 2^-100 absolute below that (where
 * exp(-x) overflows f32 the division gives 0 and the reference is below 2^-118), sigmoid
 * within 2^-23 absolute; sigmoid(-inf) = 0, swish(-inf) = NaN as the formula evaluates. */
static tsl_expr *fc_(double v, int l) { return cg_bc(tsl_float(TSL_F32, v), l); }
static tsl_expr *one_plus_exp_neg(tsl_expr *x, int l) {
  return tsl_add(fc_(1.0, l), call1(TSL_CALL_EXP, tsl_mul(x, fc_(-1.0, l))));
}
static tsl_expr *f_sigmoid(tsl_expr *const *x, int l) { return tsl_div(fc_(1.0, l), one_plus_exp_neg(x[0], l)); }
static tsl_expr *f_swish(tsl_expr *const *x, int l) { return tsl_div(x[0], one_plus_exp_neg(x[0], l)); }
static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static double swish_d(double x) { return x / (1.0 + exp(-x)); }

/* Largest relative error of fn over x[0..n) at every region where |ref| >= 2^-100, and
 * in *abs_err the largest absolute error anywhere; below 2^-100 the result must be
 * within 2^-100 of ref, and NaN and infinite results must match exactly (1e9 relative
 * otherwise). */
static double max_rel(const char *name, cg_expr_fn fn, double (*ref)(double), const float *x, int n, double *abs_err) {
  float *out = run_paths(name, fn, x, n);
  double rel = 0, ab = 0;
  for (int p = 0; p < npaths; p++) {
    double rel_p = 0, ab_p = 0;
    for (int r = 0; r < CG_NREGIONS; r++)
      for (int i = 0; i < n; i++) {
        double want = ref((double)x[i]), got = out[((size_t)p * CG_NREGIONS + r) * n + i], e = 0, a = 0;
        if (isnan(want) || isnan(got)) e = a = isnan(want) && isnan(got) ? 0 : 1e9;
        else if (isinf(want) || isinf(got)) e = a = got == want ? 0 : 1e9;
        else {
          a = fabs(got - want);
          e = fabs(want) >= 0x1p-100 ? a / fabs(want) : a <= 0x1p-100 ? 0 : 1e9;
        }
        rel_p = fmax(rel_p, e);
        ab_p = fmax(ab_p, a);
      }
    if (getenv("TSL_TEST_VERBOSE"))
      fprintf(stderr, "%s %s: %g relative (%g x 2^-24), %g absolute\n", name, paths[p].name, rel_p, rel_p * 0x1p24,
              ab_p);
    rel = fmax(rel, rel_p);
    ab = fmax(ab, ab_p);
  }
  free(out);
  *abs_err = ab;
  return rel;
}

static void test_f32_sigmoid_swish_within_bounds_and_ieee_edges(void) {
  enum { M = 1 << 16 };
  float *x = malloc(M * 4);
  static const float edge[32] = {0.0f,    -0.0f,   INFINITY, -INFINITY, NAN,     1e-45f,  -1e-45f, -1e-40f,
                                 1e30f,   -1e30f,  FLT_MAX,  -FLT_MAX,  88.72f,  -88.72f, 88.73f,  -88.73f,
                                 -87.33f, -87.34f, -89.0f,   -92.0f,    -103.9f, -104.0f, -105.0f, 104.0f,
                                 17.0f,   -17.0f,  20.0f,    -20.0f,    0.5f,    -0.5f,   1e-20f,  -1e-20f};
  struct {
    const char *name;
    cg_expr_fn fn;
    double (*ref)(double);
  } fs[2] = {{"sigmoid", f_sigmoid, sigmoid_d}, {"swish", f_swish, swish_d}};
  for (int k = 0; k < 2; k++) {
    double ab, ab2, ab3, rel = 0;
    char name[32];
    snprintf(name, sizeof name, "%s_sweep", fs[k].name);
    sweep(x, M, -110.0, 110.0);
    rel = fmax(rel, max_rel(name, fs[k].fn, fs[k].ref, x, M, &ab));
    snprintf(name, sizeof name, "%s_small", fs[k].name);
    sweep(x, M, -2.0, 2.0);
    rel = fmax(rel, max_rel(name, fs[k].fn, fs[k].ref, x, M, &ab2));
    snprintf(name, sizeof name, "%s_edge", fs[k].name);
    rel = fmax(rel, max_rel(name, fs[k].fn, fs[k].ref, edge, 32, &ab3));
    ab = fmax(ab, fmax(ab2, ab3));
    CU_ASSERT(rel <= 4 * 0x1p-24);
    if (k == 0) CU_ASSERT(ab <= 0x1p-23); /* sigmoid, absolute */
  }
  free(x);
}

void cg_add_math_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_math", math_suite_init, math_suite_clean);
  CU_add_test(s, "test_f32_exp_within_1_ulp_and_ieee_edges", test_f32_exp_within_1_ulp_and_ieee_edges);
  CU_add_test(s, "test_f32_log_within_2_ulp_and_ieee_edges", test_f32_log_within_2_ulp_and_ieee_edges);
  CU_add_test(s, "test_f32_tanh_within_2_ulp_and_saturates", test_f32_tanh_within_2_ulp_and_saturates);
  CU_add_test(s, "test_f32_erf_within_1_ulp_and_f64_is_libm", test_f32_erf_within_1_ulp_and_f64_is_libm);
  CU_add_test(s, "test_f32_sigmoid_swish_within_bounds_and_ieee_edges",
              test_f32_sigmoid_swish_within_bounds_and_ieee_edges);
}
