/* Codegen of arithmetic, comparisons, logic, select, casts, broadcast/ramp and let,
 * each run through the JIT in scalar and 4/8/16-lane regions and checked against
 * plain C. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/target.h"
#include "tests/codegen/cg_util.h"

#define N 64 /* elements per region */

/* ---- integer + - * wrap ---- */

static tsl_expr *f_mul_sub_add(tsl_expr *const *x, int lanes) {
  (void)lanes;
  return tsl_sub(tsl_mul(x[0], x[1]), tsl_add(x[0], x[1]));
}

static void test_int_add_sub_mul_wrap_i32_i8_i64(void) {
  int32_t *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *o = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) {
    a[i] = (int32_t)((i * 2654435761u) ^ (i & 1 ? 0x80000000u : 0));
    b[i] = i % 3 == 0 ? INT32_MAX : (int32_t)(i * 40503u) - 70000;
  }
  tsl_type t32[2] = {TSL_I32, TSL_I32};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("wrap_i32", 2, t32, TSL_I32, N, f_mul_sub_add), 2,
                                     (void *[]){a, b}, o), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      uint32_t ua = (uint32_t)a[i], ub = (uint32_t)b[i];
      CU_ASSERT_EQUAL(o[r * N + i], (int32_t)(ua * ub - (ua + ub)));
    }
  int8_t a8[N] __attribute__((aligned(64))), b8[N] __attribute__((aligned(64)));
  int8_t o8[CG_NREGIONS * N] __attribute__((aligned(64)));
  for (int i = 0; i < N; i++) {
    a8[i] = (int8_t)(i * 7 - 100);
    b8[i] = (int8_t)(127 - i * 5);
  }
  tsl_type t8[2] = {TSL_I8, TSL_I8};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("wrap_i8", 2, t8, TSL_I8, N, f_mul_sub_add), 2,
                                     (void *[]){a8, b8}, o8), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      uint8_t ua = (uint8_t)a8[i], ub = (uint8_t)b8[i];
      CU_ASSERT_EQUAL(o8[r * N + i], (int8_t)(uint8_t)(ua * ub - (ua + ub)));
    }
  int64_t *a64 = cg_alloc(N * 8), *b64 = cg_alloc(N * 8), *o64 = cg_alloc(CG_NREGIONS * N * 8);
  for (int i = 0; i < N; i++) {
    a64[i] = i % 5 == 0 ? INT64_MAX - i : (int64_t)(i * 0x9E3779B97F4A7C15ull);
    b64[i] = i % 7 == 0 ? INT64_MIN + i : i * 1000003 - 31;
  }
  tsl_type t64[2] = {TSL_I64, TSL_I64};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("wrap_i64", 2, t64, TSL_I64, N, f_mul_sub_add), 2,
                                     (void *[]){a64, b64}, o64), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      uint64_t ua = (uint64_t)a64[i], ub = (uint64_t)b64[i];
      CU_ASSERT_EQUAL(o64[r * N + i], (int64_t)(ua * ub - (ua + ub)));
    }
  free(a), free(b), free(o), free(a64), free(b64), free(o64);
}

/* ---- floor division and modulo ---- */

static tsl_expr *f_div(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_div(x[0], x[1]); }
static tsl_expr *f_mod(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_mod(x[0], x[1]); }

/* Every sign combination, divisors +-1, INT_MIN operands, INT_MIN / -1 (wraps). */
static void divmod_operands(int64_t lo, int64_t hi, int64_t *a, int64_t *b) {
  static const int64_t as[] = {-7, -6, -5, -1, 0, 1, 5, 6, 7, 100, -100, 13, -13};
  static const int64_t bs[] = {-3, -2, -1, 1, 2, 3, 7, -7, 4, -4};
  int k = 0;
  for (size_t i = 0; i < sizeof as / sizeof as[0]; i++)
    for (size_t j = 0; j < sizeof bs / sizeof bs[0] && k < N; j++, k++) {
      a[k] = as[i];
      b[k] = bs[j];
    }
  int64_t tail[][2] = {{lo, -1}, {lo, 1}, {lo, 2}, {lo, 3}, {hi, -1}, {hi, 2}, {hi, lo}, {lo, lo}, {-1, lo}, {1, lo},
                       {lo + 1, hi}, {0, lo}};
  for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++) {
    a[N - 1 - i] = tail[i][0];
    b[N - 1 - i] = tail[i][1];
  }
  (void)k;
}

static void check_divmod_type(tsl_type t, int64_t lo, int64_t hi) {
  int64_t a[N], b[N];
  divmod_operands(lo, hi, a, b);
  int bytes = t.bits / 8;
  void *pa = cg_alloc((size_t)N * bytes), *pb = cg_alloc((size_t)N * bytes);
  void *od = cg_alloc((size_t)CG_NREGIONS * N * bytes), *om = cg_alloc((size_t)CG_NREGIONS * N * bytes);
  for (int i = 0; i < N; i++) {
    if (bytes == 4) ((int32_t *)pa)[i] = (int32_t)a[i], ((int32_t *)pb)[i] = (int32_t)b[i];
    else ((int64_t *)pa)[i] = a[i], ((int64_t *)pb)[i] = b[i];
  }
  tsl_type ts[2] = {t, t};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("floordiv", 2, ts, t, N, f_div), 2, (void *[]){pa, pb}, od),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("floormod", 2, ts, t, N, f_mod), 2, (void *[]){pa, pb}, om),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      int64_t want_d = ref_floor_div(a[i], b[i]), want_m = ref_floor_mod(a[i], b[i]);
      int64_t got_d = bytes == 4 ? ((int32_t *)od)[r * N + i] : ((int64_t *)od)[r * N + i];
      int64_t got_m = bytes == 4 ? ((int32_t *)om)[r * N + i] : ((int64_t *)om)[r * N + i];
      if (bytes == 4) want_d = (int32_t)(uint32_t)want_d, want_m = (int32_t)(uint32_t)want_m;
      CU_ASSERT_EQUAL(got_d, want_d);
      CU_ASSERT_EQUAL(got_m, want_m);
    }
  free(pa), free(pb), free(od), free(om);
}

static void test_floor_div_mod_variable_divisor_all_signs(void) {
  check_divmod_type(TSL_I32, INT32_MIN, INT32_MAX);
  check_divmod_type(TSL_I64, INT64_MIN, INT64_MAX);
}

/* One kernel: out[(k*4 + r)*N + i] = a[i] (div|mod) d_k, constant d_k, region r. */
static const int32_t const_divisors[] = {4, 1, 3, 7, 64, -1, -4, -3};
#define NDIV ((int)(sizeof const_divisors / sizeof const_divisors[0]))

static tsl_func *const_divisor_kernel(bool is_mod) {
  tsl_buffer *a = cg_buf("a", TSL_I32, N), *out = cg_buf("out", TSL_I32, (int64_t)NDIV * CG_NREGIONS * N);
  tsl_stmt *loops[NDIV * CG_NREGIONS];
  for (int k = 0; k < NDIV; k++)
    for (int r = 0; r < CG_NREGIONS; r++) {
      int L = cg_region_lanes[r];
      tsl_expr *io = tsl_var("io", TSL_I64), *base = tsl_mul(io, tsl_i64(L));
      tsl_expr *d = cg_bc(tsl_i32(const_divisors[k]), L), *x = cg_ldv(a, base, L);
      tsl_expr *v = is_mod ? tsl_mod(x, d) : tsl_div(x, d);
      loops[k * CG_NREGIONS + r] = tsl_for(io, tsl_i64(0), tsl_i64(N / L), TSL_FOR_SERIAL,
                                           cg_stv(out, tsl_add(tsl_i64((k * CG_NREGIONS + r) * N), base), L, v));
    }
  return cg_func(is_mod ? "cmod" : "cdiv", 2, (tsl_buffer *[]){a, out}, tsl_seq(NDIV * CG_NREGIONS, loops));
}

static void test_floor_div_mod_constant_divisors(void) {
  int32_t *a = cg_alloc(N * 4), *od = cg_alloc((size_t)NDIV * CG_NREGIONS * N * 4),
          *om = cg_alloc((size_t)NDIV * CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i - N / 2 - (i % 3) * 1000;
  a[0] = INT32_MIN;
  a[1] = INT32_MAX;
  a[2] = INT32_MIN + 1;
  void *p[2] = {a, od}, *q[2] = {a, om};
  void *args[2] = {&p[0], &p[1]}, *margs[2] = {&q[0], &q[1]};
  CU_ASSERT_EQUAL_FATAL(cg_run(const_divisor_kernel(false), args), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run(const_divisor_kernel(true), margs), TSL_OK);
  for (int k = 0; k < NDIV; k++)
    for (int r = 0; r < CG_NREGIONS; r++)
      for (int i = 0; i < N; i++) {
        int idx = (k * CG_NREGIONS + r) * N + i;
        CU_ASSERT_EQUAL(od[idx], (int32_t)(uint32_t)ref_floor_div(a[i], const_divisors[k]));
        CU_ASSERT_EQUAL(om[idx], (int32_t)(uint32_t)ref_floor_mod(a[i], const_divisors[k]));
      }
  free(a), free(od), free(om);
}

static void test_unsigned_div_mod_is_plain(void) {
  uint32_t *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *od = cg_alloc(CG_NREGIONS * N * 4),
           *om = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) {
    a[i] = 0xFFFFFFFFu - (uint32_t)i * 77777u;
    b[i] = (uint32_t)(i % 9 + 1) * (i % 2 ? 1u : 0x10001u);
  }
  tsl_type ts[2] = {TSL_U32, TSL_U32};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("udiv", 2, ts, TSL_U32, N, f_div), 2, (void *[]){a, b}, od),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("umod", 2, ts, TSL_U32, N, f_mod), 2, (void *[]){a, b}, om),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(od[r * N + i], a[i] / b[i]);
      CU_ASSERT_EQUAL(om[r * N + i], a[i] % b[i]);
    }
  free(a), free(b), free(od), free(om);
}

/* ---- floats ---- */

static tsl_expr *f_float_mix(tsl_expr *const *x, int lanes) {
  (void)lanes;
  return tsl_div(tsl_mul(tsl_add(x[0], x[1]), tsl_sub(x[0], x[1])), x[1]);
}

static void test_float_add_sub_mul_div_ieee(void) {
  float *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *o = cg_alloc(CG_NREGIONS * N * 4);
  double *a64 = cg_alloc(N * 8), *b64 = cg_alloc(N * 8), *o64 = cg_alloc(CG_NREGIONS * N * 8);
  for (int i = 0; i < N; i++) {
    a[i] = (float)(i * 0.37 - 7.1);
    b[i] = i == 5 ? 0.0f : (float)(1.0 / (i + 0.3));
    a64[i] = i * 0.37 - 7.1;
    b64[i] = i == 5 ? 0.0 : 1.0 / (i + 0.3);
  }
  tsl_type ts[2] = {TSL_F32, TSL_F32}, td[2] = {TSL_F64, TSL_F64};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("fmix", 2, ts, TSL_F32, N, f_float_mix), 2, (void *[]){a, b}, o),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel("dmix", 2, td, TSL_F64, N, f_float_mix), 2, (void *[]){a64, b64}, o64), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      float s = a[i] + b[i], d = a[i] - b[i], p = s * d, want = p / b[i];
      double s2 = a64[i] + b64[i], d2 = a64[i] - b64[i], p2 = s2 * d2, want2 = p2 / b64[i];
      CU_ASSERT(same_float(o[r * N + i], want));
      CU_ASSERT(same_float(o64[r * N + i], want2));
    }
  free(a), free(b), free(o), free(a64), free(b64), free(o64);
}

/* ---- a * b + c in one expression: one rounding where the target has FMA ---- */

static tsl_expr *f_mul_add(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_add(tsl_mul(x[0], x[1]), x[2]); }
static tsl_expr *f_add_mul(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_add(x[2], tsl_mul(x[0], x[1])); }
static tsl_expr *f_mul_sub(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_sub(tsl_mul(x[0], x[1]), x[2]); }
static tsl_expr *f_sub_mul(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_sub(x[2], tsl_mul(x[0], x[1])); }

/* The target fuses a multiply into the add or subtract that consumes it (llvm.h):
 * a = b = 1 + e (e = 2^-13) make a * b = 1 + 2e + e^2, whose last term a separate
 * rounding drops; c = -+(1 + 2e) cancels the rest (element 0 for the add forms,
 * element 1 for the subtract forms), so a fused result is +-e^2 and an unfused one 0.
 * The other elements take ordinary values. Checked against C's fmaf / fma (one
 * rounding) in the scalar and the 4/8/16-lane regions, f32 and f64 (e = 2^-27). */
static void check_contraction(tsl_type t) {
  bool f64 = t.bits == 64;
  double e = f64 ? ldexp(1.0, -27) : ldexp(1.0, -13);
  size_t sz = f64 ? 8 : 4;
  void *in[3] = {cg_alloc(N * sz), cg_alloc(N * sz), cg_alloc(N * sz)};
  for (int i = 0; i < N; i++) {
    double sign = i % 8 < 4 ? 1.0 : -1.0, a = 1.0 + e;
    double c = i % 4 == 0 ? -sign * (1.0 + 2.0 * e) : i % 4 == 1 ? sign * (1.0 + 2.0 * e) : i * 0.37 - 9.0;
    double v[3] = {sign * a, i % 4 < 2 ? a : 1.0 / (i + 0.3), c};
    for (int k = 0; k < 3; k++) {
      if (f64) ((double *)in[k])[i] = v[k];
      else ((float *)in[k])[i] = (float)v[k];
    }
  }
  const tsl_target *host = tsl_jit_target(cg_jit);
  bool fused = host->arch != TSL_ARCH_X86_64 || tsl_target_has_feature(host, "fma");
  cg_expr_fn fns[4] = {f_mul_add, f_add_mul, f_mul_sub, f_sub_mul};
  double *o = cg_alloc(4 * CG_NREGIONS * N * 8);
  tsl_type ts[3] = {t, t, t};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel_multi("contract", 3, ts, t, N, 4, fns), 3, in, o), TSL_OK);
  int wrong = 0, cancelled_to_zero = 0;
  for (int k = 0; k < 4; k++)
    for (int r = 0; r < CG_NREGIONS; r++)
      for (int i = 0; i < N; i++) {
        size_t at = ((size_t)k * CG_NREGIONS + (size_t)r) * N + (size_t)i;
        double got, want;
        if (f64) {
          const double *x = in[0], *y = in[1], *z = in[2];
          double zz = k == 2 ? -z[i] : z[i], xx = k == 3 ? -x[i] : x[i];
          want = fused ? fma(xx, y[i], zz) : xx * y[i] + zz;
          got = ((double *)o)[at];
        } else {
          const float *x = in[0], *y = in[1], *z = in[2];
          float zz = k == 2 ? -z[i] : z[i], xx = k == 3 ? -x[i] : x[i];
          want = fused ? fmaf(xx, y[i], zz) : (float)(xx * y[i]) + zz;
          got = ((float *)o)[at];
        }
        if (got != want && wrong++ < 4)
          fprintf(stderr, "contract %s form %d region %d element %d: got %a, want %a\n", f64 ? "f64" : "f32", k, r,
                  i, got, want);
        if (i % 4 == (k < 2 ? 0 : 1) && got == 0.0) cancelled_to_zero++;
      }
  CU_ASSERT_EQUAL(wrong, 0);
  /* the inputs tell the two apart: fused, no cancelling element is 0 */
  if (fused) CU_ASSERT_EQUAL(cancelled_to_zero, 0);
  free(in[0]), free(in[1]), free(in[2]), free(o);
}
static void test_mul_add_in_one_expression_rounds_once_f32(void) { check_contraction(TSL_F32); }
static void test_mul_add_in_one_expression_rounds_once_f64(void) { check_contraction(TSL_F64); }

/* The same with a product that is the same in every lane, as the vectorizer and the
 * simplifier leave it: broadcast(a[i] * b[i]) against c[i*16 + j], in the scalar
 * region (a[i] * b[i] inline) and the 4/8/16-lane ones; every region must give C's
 * fmaf for all four forms, so scalar and vector code round alike (ir.h). */
static void test_mul_add_with_broadcast_product_rounds_once(void) {
  enum { ROWS = 16, ROW = 16 };
  float *a = cg_alloc(ROWS * 4), *b = cg_alloc(ROWS * 4), *cv = cg_alloc(ROWS * ROW * 4);
  float *o = cg_alloc(4 * CG_NREGIONS * ROWS * ROW * 4);
  double e = ldexp(1.0, -13);
  for (int i = 0; i < ROWS; i++) {
    double sign = i % 2 ? -1.0 : 1.0;
    a[i] = (float)(sign * (1.0 + e));
    b[i] = i % 4 < 2 ? (float)(1.0 + e) : (float)(1.0 / (i + 0.3));
    for (int j = 0; j < ROW; j++)
      cv[i * ROW + j] = (float)(j == 0 ? -sign * (1.0 + 2.0 * e) : j == 1 ? sign * (1.0 + 2.0 * e) : j * 0.37 - 3.0);
  }
  tsl_buffer *A = cg_buf("a", TSL_F32, ROWS), *B = cg_buf("b", TSL_F32, ROWS), *C = cg_buf("c", TSL_F32, ROWS * ROW);
  tsl_buffer *O = cg_buf("out", TSL_F32, 4 * CG_NREGIONS * ROWS * ROW);
  tsl_stmt *loops[4 * CG_NREGIONS];
  for (int k = 0; k < 4; k++)
    for (int r = 0; r < CG_NREGIONS; r++) {
      int lanes = cg_region_lanes[r];
      tsl_expr *io = tsl_var("io", TSL_I64), *base = tsl_mul(io, tsl_i64(lanes));
      tsl_expr *row = tsl_div(base, tsl_i64(ROW));
      tsl_expr *prod = cg_bc(tsl_mul(cg_ld(A, row), cg_ld(B, row)), lanes), *z = cg_ldv(C, base, lanes);
      tsl_expr *v = k == 0 ? tsl_add(prod, z) : k == 1 ? tsl_add(z, prod) : k == 2 ? tsl_sub(prod, z) : tsl_sub(z, prod);
      tsl_expr *at = tsl_add(tsl_i64((int64_t)(k * CG_NREGIONS + r) * ROWS * ROW), base);
      loops[k * CG_NREGIONS + r] =
          tsl_for(io, tsl_i64(0), tsl_i64(ROWS * ROW / lanes), TSL_FOR_SERIAL, cg_stv(O, at, lanes, v));
    }
  tsl_func *f = cg_func("contract_bcast", 4, (tsl_buffer *[]){A, B, C, O}, tsl_seq(4 * CG_NREGIONS, loops));
  void *pa = a, *pb = b, *pc = cv, *po = o;
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&pa, &pb, &pc, &po}), TSL_OK);
  const tsl_target *host = tsl_jit_target(cg_jit);
  bool fused = host->arch != TSL_ARCH_X86_64 || tsl_target_has_feature(host, "fma");
  int wrong = 0;
  for (int k = 0; k < 4; k++)
    for (int r = 0; r < CG_NREGIONS; r++)
      for (int i = 0; i < ROWS * ROW; i++) {
        float x = k == 3 ? -a[i / ROW] : a[i / ROW], y = b[i / ROW], z = k == 2 ? -cv[i] : cv[i];
        float want = fused ? fmaf(x, y, z) : (float)(x * y) + z;
        float got = o[(k * CG_NREGIONS + r) * ROWS * ROW + i];
        if (got != want && wrong++ < 4)
          fprintf(stderr, "contract broadcast form %d region %d element %d: got %a, want %a\n", k, r, i, got, want);
      }
  CU_ASSERT_EQUAL(wrong, 0);
  free(a), free(b), free(cv), free(o);
}

/* ---- min / max ---- */

static tsl_expr *f_min(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_min(x[0], x[1]); }
static tsl_expr *f_max(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_max(x[0], x[1]); }

static void test_min_max_integer_signedness(void) {
  int32_t *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *o1 = cg_alloc(CG_NREGIONS * N * 4),
          *o2 = cg_alloc(CG_NREGIONS * N * 4), *o3 = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) {
    a[i] = i % 4 == 0 ? -1 : i * 1000 - 20000;
    b[i] = i % 3 == 0 ? INT32_MIN : 5 - i;
  }
  tsl_type ti[2] = {TSL_I32, TSL_I32}, tu[2] = {TSL_U32, TSL_U32};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("smin", 2, ti, TSL_I32, N, f_min), 2, (void *[]){a, b}, o1),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("smax", 2, ti, TSL_I32, N, f_max), 2, (void *[]){a, b}, o2),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("umin", 2, tu, TSL_U32, N, f_min), 2, (void *[]){a, b}, o3),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o1[r * N + i], a[i] < b[i] ? a[i] : b[i]);
      CU_ASSERT_EQUAL(o2[r * N + i], a[i] > b[i] ? a[i] : b[i]);
      uint32_t ua = (uint32_t)a[i], ub = (uint32_t)b[i];
      CU_ASSERT_EQUAL((uint32_t)o3[r * N + i], ua < ub ? ua : ub);
    }
  free(a), free(b), free(o1), free(o2), free(o3);
}

/* Float min and max at 1, 4, 8 and 16 lanes, f32 and f64 (x86: minps/maxps at 128, 256
 * and 512 bits, minpd/maxpd at 256 and 512, the rest the generic compare and select):
 * NaN in either operand and in both (+NaN and -NaN: the same bits at every width),
 * infinities. */
static double nan_case_a(int i) { return i % 5 == 1 ? NAN : i % 11 == 4 ? INFINITY : (double)(i - 30) * 0.25; }
static double nan_case_b(int i) { return i % 7 == 2 ? -NAN : i % 3 == 0 ? -INFINITY : (double)(20 - i) * 0.5; }
static double elem(const void *p, bool f64, int i) { return f64 ? ((const double *)p)[i] : ((const float *)p)[i]; }

static void check_min_max_propagate_nan(tsl_type t) {
  bool f64 = t.bits == 64;
  size_t es = f64 ? 8 : 4;
  void *a = cg_alloc(N * es), *b = cg_alloc(N * es), *omin = cg_alloc(CG_NREGIONS * N * es),
       *omax = cg_alloc(CG_NREGIONS * N * es);
  for (int i = 0; i < N; i++) {
    if (f64) ((double *)a)[i] = nan_case_a(i), ((double *)b)[i] = nan_case_b(i);
    else ((float *)a)[i] = (float)nan_case_a(i), ((float *)b)[i] = (float)nan_case_b(i);
  }
  tsl_type ts[2] = {t, t};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("fmin", 2, ts, t, N, f_min), 2, (void *[]){a, b}, omin), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("fmax", 2, ts, t, N, f_max), 2, (void *[]){a, b}, omax), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      double x = nan_case_a(i), y = nan_case_b(i);
      bool nan = isnan(x) || isnan(y);
      CU_ASSERT(same_float(elem(omin, f64, r * N + i), nan ? NAN : (x < y ? x : y)));
      CU_ASSERT(same_float(elem(omax, f64, r * N + i), nan ? NAN : (x > y ? x : y)));
      /* every width gives the same bits (where both are NaN, +NaN and -NaN: b's) */
      CU_ASSERT(memcmp((char *)omin + (size_t)(r * N + i) * es, (char *)omin + (size_t)i * es, es) == 0);
      CU_ASSERT(memcmp((char *)omax + (size_t)(r * N + i) * es, (char *)omax + (size_t)i * es, es) == 0);
    }
  free(a), free(b), free(omin), free(omax);
}

static void test_min_max_float_propagate_nan(void) { check_min_max_propagate_nan(TSL_F32); }
static void test_min_max_f64_propagate_nan(void) { check_min_max_propagate_nan(TSL_F64); }

/* A constant operand (a ReLU's max(x, 0), a clip's min(6, x)) in either position: the
 * variable operand's NaN still propagates (codegen puts the constant first, where its
 * NaN test folds away). */
static tsl_expr *lanes_const(double v, int lanes) {
  tsl_expr *c = tsl_float(TSL_F32, v);
  return lanes > 1 ? tsl_broadcast(c, lanes) : c;
}
static tsl_expr *f_max_x0(tsl_expr *const *x, int lanes) { return tsl_max(x[0], lanes_const(0.0, lanes)); }
static tsl_expr *f_max_0x(tsl_expr *const *x, int lanes) { return tsl_max(lanes_const(0.0, lanes), x[0]); }
static tsl_expr *f_min_6x(tsl_expr *const *x, int lanes) { return tsl_min(lanes_const(6.0, lanes), x[0]); }

static void test_min_max_float_constant_operand_propagates_nan(void) {
  enum { NF = 3 };
  float *a = cg_alloc(N * 4), *o = cg_alloc(NF * CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i % 5 == 1 ? NAN : i % 7 == 3 ? INFINITY : (float)(i - 30) * 0.5f;
  tsl_type ts[1] = {TSL_F32};
  const cg_expr_fn fns[NF] = {f_max_x0, f_max_0x, f_min_6x};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel_multi("fconst", 1, ts, TSL_F32, N, NF, fns), 1, (void *[]){a}, o),
                        TSL_OK);
  for (int k = 0; k < NF; k++)
    for (int r = 0; r < CG_NREGIONS; r++)
      for (int i = 0; i < N; i++) {
        float want = isnan(a[i]) ? NAN : k < 2 ? (a[i] > 0 ? a[i] : 0) : (a[i] < 6 ? a[i] : 6);
        CU_ASSERT(same_float(o[(k * CG_NREGIONS + r) * N + i], want));
      }
  free(a), free(o);
}

/* A constant operand that is NaN (or a vector constant with one NaN lane) makes every
 * result NaN: only a NaN-free constant may skip the NaN test of the other operand. */
static tsl_expr *lanes_const_nan_lane(int lanes) {
  if (lanes == 1) return tsl_float(TSL_F32, NAN);
  /* lane 1 NaN, the others 2.0: select(ramp == 1, NaN, 2) folds to a vector constant */
  return tsl_select(tsl_eq(tsl_ramp(tsl_i32(0), tsl_i32(1), lanes), tsl_broadcast(tsl_i32(1), lanes)),
                    tsl_broadcast(tsl_float(TSL_F32, NAN), lanes), tsl_broadcast(tsl_float(TSL_F32, 2.0), lanes));
}
static tsl_expr *f_max_nan_x(tsl_expr *const *x, int lanes) { return tsl_max(lanes_const_nan_lane(lanes), x[0]); }
static tsl_expr *f_min_x_nan(tsl_expr *const *x, int lanes) { return tsl_min(x[0], lanes_const_nan_lane(lanes)); }

static void test_min_max_float_nan_constant_operand(void) {
  enum { NF = 2 };
  float *a = cg_alloc(N * 4), *o = cg_alloc(NF * CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i % 5 == 1 ? NAN : i % 7 == 3 ? -INFINITY : (float)(i - 30) * 0.5f;
  tsl_type ts[1] = {TSL_F32};
  const cg_expr_fn fns[NF] = {f_max_nan_x, f_min_x_nan};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel_multi("fnanc", 1, ts, TSL_F32, N, NF, fns), 1, (void *[]){a}, o),
                        TSL_OK);
  for (int k = 0; k < NF; k++)
    for (int r = 0; r < CG_NREGIONS; r++) {
      int lanes = cg_region_lanes[r];
      for (int i = 0; i < N; i++) {
        bool c_nan = lanes == 1 || i % lanes == 1;
        float want = c_nan || isnan(a[i]) ? NAN : k == 0 ? (a[i] > 2.0f ? a[i] : 2.0f) : (a[i] < 2.0f ? a[i] : 2.0f);
        CU_ASSERT(same_float(o[(k * CG_NREGIONS + r) * N + i], want));
      }
    }
  free(a), free(o);
}

/* ---- comparisons: all six in one value, bit k set when comparison k holds ---- */

static tsl_expr *f_cmp_bits(tsl_expr *const *x, int lanes) {
  tsl_expr *(*cmp[6])(tsl_expr *, tsl_expr *) = {tsl_eq, tsl_ne, tsl_lt, tsl_le, tsl_gt, tsl_ge};
  tsl_expr *sum = cg_bc(tsl_i32(0), lanes);
  for (int k = 0; k < 6; k++)
    sum = tsl_add(sum, tsl_select(cmp[k](x[0], x[1]), cg_bc(tsl_i32(1 << k), lanes), cg_bc(tsl_i32(0), lanes)));
  return sum;
}

static int32_t ref_cmp_bits(int lt, int eq, int gt) {
  /* eq ne lt le gt ge; unordered (all 0) gives only NE */
  return (eq ? 1 : 0) | (!eq ? 2 : 0) | (lt ? 4 : 0) | (lt || eq ? 8 : 0) | (gt ? 16 : 0) | (gt || eq ? 32 : 0);
}

static void test_compare_signed_unsigned_and_nan_ordered(void) {
  int32_t *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *os = cg_alloc(CG_NREGIONS * N * 4),
          *ou = cg_alloc(CG_NREGIONS * N * 4), *of = cg_alloc(CG_NREGIONS * N * 4);
  float *fa = cg_alloc(N * 4), *fb = cg_alloc(N * 4);
  for (int i = 0; i < N; i++) {
    a[i] = i % 4 == 0 ? -1 : i % 4 == 1 ? i : 7;
    b[i] = i % 3 == 0 ? 7 : 1 - i;
    fa[i] = i % 6 == 0 ? NAN : (float)(i % 5);
    fb[i] = i % 8 == 3 ? NAN : (float)(i % 3);
  }
  fa[1] = -0.0f, fb[1] = 0.0f;
  tsl_type ti[2] = {TSL_I32, TSL_I32}, tu[2] = {TSL_U32, TSL_U32}, tf[2] = {TSL_F32, TSL_F32};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("cmp_s", 2, ti, TSL_I32, N, f_cmp_bits), 2, (void *[]){a, b}, os),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("cmp_u", 2, tu, TSL_I32, N, f_cmp_bits), 2, (void *[]){a, b}, ou),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel("cmp_f", 2, tf, TSL_I32, N, f_cmp_bits), 2, (void *[]){fa, fb}, of), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(os[r * N + i], ref_cmp_bits(a[i] < b[i], a[i] == b[i], a[i] > b[i]));
      uint32_t ua = (uint32_t)a[i], ub = (uint32_t)b[i];
      CU_ASSERT_EQUAL(ou[r * N + i], ref_cmp_bits(ua < ub, ua == ub, ua > ub));
      CU_ASSERT_EQUAL(of[r * N + i], ref_cmp_bits(fa[i] < fb[i], fa[i] == fb[i], fa[i] > fb[i]));
    }
  CU_ASSERT_EQUAL(of[6], 2); /* NaN vs x: only NE holds */
  CU_ASSERT_EQUAL(of[1], 1 | 8 | 32); /* -0 == +0 */
  free(a), free(b), free(os), free(ou), free(of), free(fa), free(fb);
}

/* ---- and / or / not on bool buffers ---- */

static tsl_expr *f_logic(tsl_expr *const *x, int lanes) {
  tsl_expr *one = cg_bc(tsl_i32(1), lanes), *zero = cg_bc(tsl_i32(0), lanes);
  tsl_expr *v = tsl_select(tsl_and(x[0], x[1]), one, zero);
  v = tsl_add(v, tsl_select(tsl_or(x[0], x[1]), tsl_add(one, one), zero));
  return tsl_add(v, tsl_select(tsl_not(x[0]), cg_bc(tsl_i32(4), lanes), zero));
}

static void test_and_or_not_on_bool_buffers(void) {
  uint8_t *a = cg_alloc(N), *b = cg_alloc(N);
  int32_t *o = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i & 1, b[i] = (i >> 1) & 1;
  tsl_type tb[2] = {TSL_BOOL, TSL_BOOL};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("logic", 2, tb, TSL_I32, N, f_logic), 2, (void *[]){a, b}, o),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++)
      CU_ASSERT_EQUAL(o[r * N + i], (a[i] && b[i]) + 2 * (a[i] || b[i]) + 4 * !a[i]);
  free(a), free(b), free(o);
}

/* ---- select ---- */

static tsl_expr *f_select_vec(tsl_expr *const *x, int lanes) {
  (void)lanes;
  return tsl_select(tsl_lt(x[0], x[1]), tsl_mul(x[0], x[0]), x[1]);
}

static void test_select_vector_condition_and_scalar_condition(void) {
  float *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *o = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = (float)(i % 9) - 4, b[i] = (float)(i % 4) - 1;
  tsl_type tf[2] = {TSL_F32, TSL_F32};
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel("select_v", 2, tf, TSL_F32, N, f_select_vec), 2, (void *[]){a, b}, o), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(o[r * N + i], a[i] < b[i] ? a[i] * a[i] : b[i]);

  /* A scalar condition (on the loop variable) choosing between whole vectors. */
  tsl_buffer *in = cg_buf("in", TSL_F32, N), *out = cg_buf("out", TSL_F32, N);
  tsl_expr *io = tsl_var("io", TSL_I64), *base = tsl_mul(io, tsl_i64(8));
  tsl_expr *v = tsl_select(tsl_lt(io, tsl_i64(3)), cg_ldv(in, base, 8), cg_bc(tsl_f32(-1.0f), 8));
  tsl_func *f = cg_func("select_s", 2, (tsl_buffer *[]){in, out},
                        tsl_for(io, tsl_i64(0), tsl_i64(N / 8), TSL_FOR_SERIAL, cg_stv(out, base, 8, v)));
  void *p[2] = {a, o};
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&p[0], &p[1]}), TSL_OK);
  for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(o[i], i < 24 ? a[i] : -1.0f);
  free(a), free(b), free(o);
}

/* ---- casts ---- */

typedef struct cast_case {
  tsl_type from, to;
} cast_case;
static tsl_type cast_to;
static tsl_expr *f_cast(tsl_expr *const *x, int lanes) { (void)lanes; return tsl_cast(cast_to, x[0]); }

/* Runs x -> cast(to, x) in every region; out holds CG_NREGIONS * N elements of `to`. */
static tsl_status run_cast(tsl_type from, tsl_type to, void *in, void *out) {
  cast_to = to;
  return cg_run_lanes(cg_lanes_kernel("cast", 1, &from, to, N, f_cast), 1, (void *[]){in}, out);
}

static void test_cast_float_to_int_truncates_and_saturates(void) {
  float *in = cg_alloc(N * 4);
  int32_t *oi = cg_alloc(CG_NREGIONS * N * 4);
  uint8_t *ou = cg_alloc(CG_NREGIONS * N);
  static const float special[] = {2.7f, -2.7f, 0.5f, -0.5f, 1e10f, -1e10f, NAN, 200.9f, 255.5f, 300.0f, -3.0f, -0.0f};
  for (int i = 0; i < N; i++) in[i] = i < 12 ? special[i] : (float)(i * 3.3 - 50);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F32, TSL_I32, in, oi), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F32, TSL_U8, in, ou), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      double x = in[i];
      int32_t wi = isnan(x) ? 0 : x >= 2147483648.0 ? INT32_MAX : x <= -2147483649.0 ? INT32_MIN : (int32_t)trunc(x);
      uint8_t wu = isnan(x) ? 0 : x >= 256.0 ? 255 : x <= -1.0 ? 0 : (uint8_t)trunc(x);
      CU_ASSERT_EQUAL(oi[r * N + i], wi);
      CU_ASSERT_EQUAL(ou[r * N + i], wu);
    }
  CU_ASSERT_EQUAL(oi[0], 2);
  CU_ASSERT_EQUAL(oi[1], -2);
  CU_ASSERT_EQUAL(ou[7], 200);
  free(in), free(oi), free(ou);
}

static void test_cast_int_widening_follows_source_signedness(void) {
  int8_t *i8 = cg_alloc(N);
  uint8_t *u8 = cg_alloc(N);
  int16_t *i16 = cg_alloc(N * 2);
  int32_t *o1 = cg_alloc(CG_NREGIONS * N * 4), *o2 = cg_alloc(CG_NREGIONS * N * 4);
  uint64_t *o3 = cg_alloc(CG_NREGIONS * N * 8);
  for (int i = 0; i < N; i++) i8[i] = (int8_t)(i * 9 - 128), u8[i] = (uint8_t)(255 - i * 3), i16[i] = (int16_t)(i * 997 - 30000);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_I8, TSL_I32, i8, o1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_U8, TSL_I32, u8, o2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_I16, TSL_U64, i16, o3), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o1[r * N + i], (int32_t)i8[i]);
      CU_ASSERT_EQUAL(o2[r * N + i], (int32_t)u8[i]);
      CU_ASSERT_EQUAL(o3[r * N + i], (uint64_t)(int64_t)i16[i]);
    }
  free(i8), free(u8), free(i16), free(o1), free(o2), free(o3);
}

static void test_cast_int_narrowing_truncates(void) {
  int64_t *in = cg_alloc(N * 8);
  int16_t *o = cg_alloc(CG_NREGIONS * N * 2);
  for (int i = 0; i < N; i++) in[i] = (int64_t)(i * 0x123456789ull) - 5000000000ll;
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_I64, TSL_I16, in, o), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(o[r * N + i], (int16_t)(uint16_t)(uint64_t)in[i]);
  free(in), free(o);
}

static void test_cast_int_and_uint_to_float(void) {
  int32_t *si = cg_alloc(N * 4);
  uint32_t *ui = cg_alloc(N * 4);
  float *o1 = cg_alloc(CG_NREGIONS * N * 4), *o2 = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) si[i] = i * 123457 - 3000000, ui[i] = 0xFFFFFFFFu - (uint32_t)i * 0x1000000u;
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_I32, TSL_F32, si, o1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_U32, TSL_F32, ui, o2), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o1[r * N + i], (float)si[i]);
      CU_ASSERT_EQUAL(o2[r * N + i], (float)ui[i]);
    }
  CU_ASSERT_EQUAL(o2[0], 4294967296.0f);
  free(si), free(ui), free(o1), free(o2);
}

static void test_cast_to_and_from_bool(void) {
  int32_t *si = cg_alloc(N * 4);
  float *fi = cg_alloc(N * 4), *of = cg_alloc(CG_NREGIONS * N * 4);
  uint8_t *ob1 = cg_alloc(CG_NREGIONS * N), *ob2 = cg_alloc(CG_NREGIONS * N), *bi = cg_alloc(N);
  int32_t *oi = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) {
    si[i] = i % 3 == 0 ? 0 : i * 1000 - 7;
    fi[i] = i % 4 == 0 ? 0.0f : i % 4 == 1 ? -0.0f : i % 4 == 2 ? NAN : 0.25f * i;
    bi[i] = (uint8_t)(i % 3 == 1);
  }
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_I32, TSL_BOOL, si, ob1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F32, TSL_BOOL, fi, ob2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_BOOL, TSL_F32, bi, of), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_BOOL, TSL_I32, bi, oi), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(ob1[r * N + i], si[i] != 0);
      CU_ASSERT_EQUAL(ob2[r * N + i], fi[i] != 0.0f); /* NaN != 0 is true in C too */
      CU_ASSERT_EQUAL(of[r * N + i], bi[i] ? 1.0f : 0.0f);
      CU_ASSERT_EQUAL(oi[r * N + i], bi[i] ? 1 : 0);
    }
  free(si), free(fi), free(of), free(ob1), free(ob2), free(bi), free(oi);
}

static void test_cast_between_float_widths(void) {
  double *d = cg_alloc(N * 8), *back = cg_alloc(CG_NREGIONS * N * 8);
  float *f = cg_alloc(CG_NREGIONS * N * 4), *hf = cg_alloc(CG_NREGIONS * N * 4);
  uint16_t *h = cg_alloc(CG_NREGIONS * N * 2);
  for (int i = 0; i < N; i++) d[i] = i == 0 ? 1e300 : i == 1 ? NAN : 1.0 / (i + 1) - 0.3;
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F64, TSL_F32, d, f), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F32, TSL_F64, f, back), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F32, TSL_F16, f, h), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(run_cast(TSL_F16, TSL_F32, h, hf), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT(same_float(f[r * N + i], (float)d[i]));
      CU_ASSERT(same_float(back[r * N + i], (double)f[i]));
      /* f16 keeps 11 significant bits: relative error <= 2^-11 in the normal range. */
      if (!isnan(f[i]) && !isinf(f[i]) && fabsf(f[i]) > 1e-4f)
        CU_ASSERT(fabs(hf[r * N + i] - f[i]) <= fabs(f[i]) * (1.0 / 2048));
    }
  CU_ASSERT(isinf(f[0]));
  CU_ASSERT(isinf(hf[0]));
  CU_ASSERT(isnan(hf[1]));
  CU_ASSERT_EQUAL(h[2], 0x2844); /* (float)(1/3 - 0.3) in binary16, round to nearest */
  free(d), free(back), free(f), free(hf), free(h);
}

/* ---- broadcast, ramp, let ---- */

static void test_ramp_constant_and_variable_stride(void) {
  tsl_buffer *out = cg_buf("out", TSL_I64, 2 * N);
  tsl_expr *stride = tsl_var("stride", TSL_I64);
  tsl_expr *io = tsl_var("io", TSL_I64), *jo = tsl_var("jo", TSL_I64);
  tsl_stmt *a = tsl_for(io, tsl_i64(0), tsl_i64(N / 16), TSL_FOR_SERIAL,
                        cg_stv(out, tsl_mul(io, tsl_i64(16)), 16, tsl_ramp(tsl_mul(io, tsl_i64(100)), tsl_i64(-3), 16)));
  tsl_stmt *b = tsl_for(jo, tsl_i64(0), tsl_i64(N / 4), TSL_FOR_SERIAL,
                        cg_stv(out, tsl_add(tsl_i64(N), tsl_mul(jo, tsl_i64(4))), 4,
                               tsl_add(tsl_ramp(jo, stride, 4), cg_bc(tsl_i64(7), 4))));
  tsl_arg args[2] = {{.is_buffer = true, .buf = out}, {.is_buffer = false, .var = stride}};
  tsl_func *f = tsl_func_new("ramps", 2, args, tsl_seq2(a, b));
  int64_t *o = cg_alloc(2 * N * 8), s = 11;
  void *po = o;
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&po, &s}), TSL_OK);
  for (int i = 0; i < N; i++) {
    CU_ASSERT_EQUAL(o[i], (i / 16) * 100 - 3 * (i % 16));
    CU_ASSERT_EQUAL(o[N + i], (i / 4) + 11 * (i % 4) + 7);
  }
  free(o);
}

static tsl_expr *f_let(tsl_expr *const *x, int lanes) {
  tsl_expr *t = tsl_var("t", x[0]->type);
  return tsl_let(t, tsl_mul(x[0], cg_bc(tsl_i32(3), lanes)), tsl_add(t, tsl_mul(t, t)));
}

static void test_let_expression_binds_value(void) {
  int32_t *a = cg_alloc(N * 4), *o = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i - 20;
  tsl_type t = TSL_I32;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("let_e", 1, &t, TSL_I32, N, f_let), 1, (void *[]){a}, o),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(o[r * N + i], 3 * a[i] + 9 * a[i] * a[i]);
  free(a), free(o);
}

void cg_add_expr_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_expr", cg_suite_init, cg_suite_clean);
  CU_add_test(s, "test_int_add_sub_mul_wrap_i32_i8_i64", test_int_add_sub_mul_wrap_i32_i8_i64);
  CU_add_test(s, "test_floor_div_mod_variable_divisor_all_signs", test_floor_div_mod_variable_divisor_all_signs);
  CU_add_test(s, "test_floor_div_mod_constant_divisors", test_floor_div_mod_constant_divisors);
  CU_add_test(s, "test_unsigned_div_mod_is_plain", test_unsigned_div_mod_is_plain);
  CU_add_test(s, "test_float_add_sub_mul_div_ieee", test_float_add_sub_mul_div_ieee);
  CU_add_test(s, "test_mul_add_in_one_expression_rounds_once_f32", test_mul_add_in_one_expression_rounds_once_f32);
  CU_add_test(s, "test_mul_add_in_one_expression_rounds_once_f64", test_mul_add_in_one_expression_rounds_once_f64);
  CU_add_test(s, "test_mul_add_with_broadcast_product_rounds_once", test_mul_add_with_broadcast_product_rounds_once);
  CU_add_test(s, "test_min_max_integer_signedness", test_min_max_integer_signedness);
  CU_add_test(s, "test_min_max_float_propagate_nan", test_min_max_float_propagate_nan);
  CU_add_test(s, "test_min_max_float_constant_operand_propagates_nan",
              test_min_max_float_constant_operand_propagates_nan);
  CU_add_test(s, "test_min_max_f64_propagate_nan", test_min_max_f64_propagate_nan);
  CU_add_test(s, "test_min_max_float_nan_constant_operand", test_min_max_float_nan_constant_operand);
  CU_add_test(s, "test_compare_signed_unsigned_and_nan_ordered", test_compare_signed_unsigned_and_nan_ordered);
  CU_add_test(s, "test_and_or_not_on_bool_buffers", test_and_or_not_on_bool_buffers);
  CU_add_test(s, "test_select_vector_condition_and_scalar_condition", test_select_vector_condition_and_scalar_condition);
  CU_add_test(s, "test_cast_float_to_int_truncates_and_saturates", test_cast_float_to_int_truncates_and_saturates);
  CU_add_test(s, "test_cast_int_widening_follows_source_signedness", test_cast_int_widening_follows_source_signedness);
  CU_add_test(s, "test_cast_int_narrowing_truncates", test_cast_int_narrowing_truncates);
  CU_add_test(s, "test_cast_int_and_uint_to_float", test_cast_int_and_uint_to_float);
  CU_add_test(s, "test_cast_to_and_from_bool", test_cast_to_and_from_bool);
  CU_add_test(s, "test_cast_between_float_widths", test_cast_between_float_widths);
  CU_add_test(s, "test_ramp_constant_and_variable_stride", test_ramp_constant_and_variable_stride);
  CU_add_test(s, "test_let_expression_binds_value", test_let_expression_binds_value);
}
