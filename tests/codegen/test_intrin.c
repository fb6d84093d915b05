/* Codegen of every intrinsic (ir.h tsl_intrinsic), scalar and 4/8/16 lanes,
 * checked against plain C / libm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/codegen/cg_util.h"

#define N 64

static tsl_expr *call1(tsl_intrinsic op, tsl_expr *a) { return tsl_call(op, a->type, 1, &a); }
static tsl_expr *call2(tsl_intrinsic op, tsl_expr *a, tsl_expr *b) {
  tsl_expr *args[2] = {a, b};
  return tsl_call(op, a->type, 2, args);
}

/* ---- fma ---- */

static tsl_expr *f_fma(tsl_expr *const *x, int lanes) {
  (void)lanes;
  tsl_expr *args[3] = {x[0], x[1], x[2]};
  return tsl_call(TSL_CALL_FMA, x[0]->type, 3, args);
}

static void test_fma_rounds_once(void) {
  float *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *c = cg_alloc(N * 4), *o = cg_alloc(CG_NREGIONS * N * 4);
  double *a2 = cg_alloc(N * 8), *b2 = cg_alloc(N * 8), *c2 = cg_alloc(N * 8), *o2 = cg_alloc(CG_NREGIONS * N * 8);
  for (int i = 0; i < N; i++) {
    /* (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24 with one rounding, 0 with two. */
    a[i] = b[i] = 1.0f + ldexpf(1.0f, -12) * (float)(1 + i % 3);
    c[i] = -(1.0f + ldexpf(1.0f, -11) * (float)(1 + i % 3));
    a2[i] = b2[i] = 1.0 + ldexp(1.0, -27) * (1 + i % 5);
    c2[i] = -(1.0 + ldexp(1.0, -26) * (1 + i % 5));
  }
  tsl_type tf[3] = {TSL_F32, TSL_F32, TSL_F32}, td[3] = {TSL_F64, TSL_F64, TSL_F64};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("fma_f", 3, tf, TSL_F32, N, f_fma), 3, (void *[]){a, b, c}, o),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel("fma_d", 3, td, TSL_F64, N, f_fma), 3, (void *[]){a2, b2, c2}, o2), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o[r * N + i], fmaf(a[i], b[i], c[i]));
      CU_ASSERT_EQUAL(o2[r * N + i], fma(a2[i], b2[i], c2[i]));
    }
  CU_ASSERT_EQUAL(o[0], ldexpf(1.0f, -24));
  free(a), free(b), free(c), free(o), free(a2), free(b2), free(c2), free(o2);
}

/* ---- popcount ---- */

static int naive_popcount(uint64_t x, int bits) {
  int n = 0;
  for (int i = 0; i < bits; i++) n += (int)((x >> i) & 1);
  return n;
}

static tsl_expr *f_popcount(tsl_expr *const *x, int lanes) { (void)lanes; return call1(TSL_CALL_POPCOUNT, x[0]); }

static void test_popcount_u64x8_i32_u8(void) {
  uint64_t *a = cg_alloc(N * 8), *o = cg_alloc(CG_NREGIONS * N * 8);
  int32_t *b = cg_alloc(N * 4), *ob = cg_alloc(CG_NREGIONS * N * 4);
  uint8_t *c = cg_alloc(N), *oc = cg_alloc(CG_NREGIONS * N);
  for (int i = 0; i < N; i++) {
    a[i] = i == 0 ? ~0ull : (uint64_t)i * 0x9E3779B97F4A7C15ull;
    b[i] = i == 0 ? -1 : i * 2654435 - 7;
    c[i] = (uint8_t)(i * 37);
  }
  tsl_type t64 = TSL_U64, t32 = TSL_I32, t8 = TSL_U8;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("popc64", 1, &t64, TSL_U64, N, f_popcount), 1, (void *[]){a}, o),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("popc32", 1, &t32, TSL_I32, N, f_popcount), 1, (void *[]){b}, ob),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("popc8", 1, &t8, TSL_U8, N, f_popcount), 1, (void *[]){c}, oc),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o[r * N + i], (uint64_t)naive_popcount(a[i], 64));
      CU_ASSERT_EQUAL(ob[r * N + i], naive_popcount((uint32_t)b[i], 32));
      CU_ASSERT_EQUAL(oc[r * N + i], naive_popcount(c[i], 8));
    }
  free(a), free(o), free(b), free(ob), free(c), free(oc);
}

/* ---- shifts and bitwise ---- */

static tsl_expr *f_shl(tsl_expr *const *x, int lanes) { (void)lanes; return call2(TSL_CALL_SHL, x[0], x[1]); }
static tsl_expr *f_shr(tsl_expr *const *x, int lanes) { (void)lanes; return call2(TSL_CALL_SHR, x[0], x[1]); }
/* A scalar i64 amount for a vector of i32: takes the value's type and lanes. */
static tsl_expr *f_shr_scalar_amount(tsl_expr *const *x, int lanes) {
  (void)lanes;
  tsl_expr *args[2] = {x[0], tsl_i64(5)};
  return tsl_call(TSL_CALL_SHR, x[0]->type, 2, args);
}

static void test_shift_arithmetic_logical_and_scalar_amount(void) {
  int32_t *a = cg_alloc(N * 4), *s = cg_alloc(N * 4), *oi = cg_alloc(3 * CG_NREGIONS * N * 4),
          *ou = cg_alloc(2 * CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i % 2 ? -(i * 1234567) : i * 7654321, s[i] = i % 32;
  tsl_type ti[2] = {TSL_I32, TSL_I32}, tu[2] = {TSL_U32, TSL_U32};
  cg_expr_fn fi[3] = {f_shl, f_shr, f_shr_scalar_amount}, fu[2] = {f_shl, f_shr};
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel_multi("shift_i", 2, ti, TSL_I32, N, 3, fi), 2, (void *[]){a, s}, oi), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel_multi("shift_u", 2, tu, TSL_U32, N, 2, fu), 2, (void *[]){a, s}, ou), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      uint32_t u = (uint32_t)a[i];
      /* arithmetic shift by hand: floor(a / 2^s) */
      int32_t sra = (int32_t)ref_floor_div(a[i], (int64_t)1 << s[i]);
      CU_ASSERT_EQUAL(oi[(0 * CG_NREGIONS + r) * N + i], (int32_t)(u << s[i]));
      CU_ASSERT_EQUAL(oi[(1 * CG_NREGIONS + r) * N + i], sra);
      CU_ASSERT_EQUAL(oi[(2 * CG_NREGIONS + r) * N + i], (int32_t)ref_floor_div(a[i], 32));
      CU_ASSERT_EQUAL((uint32_t)ou[(0 * CG_NREGIONS + r) * N + i], u << s[i]);
      CU_ASSERT_EQUAL((uint32_t)ou[(1 * CG_NREGIONS + r) * N + i], u >> s[i]);
    }
  free(a), free(s), free(oi), free(ou);
}

static tsl_expr *f_bitwise(tsl_expr *const *x, int lanes) {
  (void)lanes;
  return call2(TSL_CALL_BIT_XOR, call2(TSL_CALL_BIT_AND, x[0], x[1]),
               call2(TSL_CALL_BIT_OR, call1(TSL_CALL_BIT_NOT, x[0]), x[1]));
}

static void test_bitwise_and_or_xor_not_int_and_bool(void) {
  uint32_t *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *o = cg_alloc(CG_NREGIONS * N * 4);
  uint8_t *ba = cg_alloc(N), *bb = cg_alloc(N), *ob = cg_alloc(CG_NREGIONS * N);
  for (int i = 0; i < N; i++) {
    a[i] = (uint32_t)i * 0x01010101u ^ 0xF0F00F0Fu, b[i] = ~(uint32_t)i * 2654435761u;
    ba[i] = i & 1, bb[i] = (i >> 1) & 1;
  }
  tsl_type tu[2] = {TSL_U32, TSL_U32}, tb[2] = {TSL_BOOL, TSL_BOOL};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("bits_u", 2, tu, TSL_U32, N, f_bitwise), 2, (void *[]){a, b}, o),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel("bits_b", 2, tb, TSL_BOOL, N, f_bitwise), 2, (void *[]){ba, bb}, ob), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o[r * N + i], (a[i] & b[i]) ^ (~a[i] | b[i]));
      CU_ASSERT_EQUAL(ob[r * N + i], ((ba[i] & bb[i]) ^ ((!ba[i]) | bb[i])) & 1);
    }
  free(a), free(b), free(o), free(ba), free(bb), free(ob);
}

/* ---- abs ---- */

static tsl_expr *f_abs(tsl_expr *const *x, int lanes) { (void)lanes; return call1(TSL_CALL_ABS, x[0]); }

static void test_abs_int_wraps_float_clears_sign(void) {
  int32_t *a = cg_alloc(N * 4), *oa = cg_alloc(CG_NREGIONS * N * 4);
  float *f = cg_alloc(N * 4), *of = cg_alloc(CG_NREGIONS * N * 4);
  for (int i = 0; i < N; i++) a[i] = i * 99991 - 3000000, f[i] = (float)(i - 32) / 3.0f;
  a[0] = INT32_MIN, a[1] = INT32_MAX;
  f[0] = -0.0f, f[1] = -INFINITY, f[2] = NAN;
  tsl_type ti = TSL_I32, tf = TSL_F32;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("abs_i", 1, &ti, TSL_I32, N, f_abs), 1, (void *[]){a}, oa),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("abs_f", 1, &tf, TSL_F32, N, f_abs), 1, (void *[]){f}, of),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      int32_t want = a[i] == INT32_MIN ? INT32_MIN : a[i] < 0 ? -a[i] : a[i];
      CU_ASSERT_EQUAL(oa[r * N + i], want);
      float fw = f[i] < 0 ? -f[i] : f[i];
      CU_ASSERT(same_float(of[r * N + i], fw));
      CU_ASSERT(!signbit(of[r * N + i]));
    }
  free(a), free(oa), free(f), free(of);
}

/* ---- math functions ---- */

static tsl_expr *f_exp(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_EXP, x[0]); }
static tsl_expr *f_log(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_LOG, x[1]); }
static tsl_expr *f_sqrt(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_SQRT, x[1]); }
static tsl_expr *f_tanh(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_TANH, x[0]); }
static tsl_expr *f_pow(tsl_expr *const *x, int l) { (void)l; return call2(TSL_CALL_POW, x[1], x[0]); }

static bool close_rel(double got, double want, double rel) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= rel * fabs(want) + 1e-300;
}

static void test_exp_log_sqrt_tanh_pow_match_libm(void) {
  float *x = cg_alloc(N * 4), *p = cg_alloc(N * 4), *o = cg_alloc(5 * CG_NREGIONS * N * 4);
  double *xd = cg_alloc(N * 8), *pd = cg_alloc(N * 8), *od = cg_alloc(5 * CG_NREGIONS * N * 8);
  for (int i = 0; i < N; i++) {
    xd[i] = (i - 32) * 0.37;
    pd[i] = i == 0 ? 0.0 : i == 1 ? -1.0 : 0.01 + i * 0.73;
    x[i] = (float)xd[i], p[i] = (float)pd[i];
  }
  cg_expr_fn fns[5] = {f_exp, f_log, f_sqrt, f_tanh, f_pow};
  tsl_type tf[2] = {TSL_F32, TSL_F32}, td[2] = {TSL_F64, TSL_F64};
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel_multi("math_f", 2, tf, TSL_F32, N, 5, fns), 2, (void *[]){x, p}, o),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(
      cg_run_lanes(cg_lanes_kernel_multi("math_d", 2, td, TSL_F64, N, 5, fns), 2, (void *[]){xd, pd}, od), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      double want_f[5] = {exp(x[i]), log(p[i]), sqrt(p[i]), tanh(x[i]), pow(p[i], x[i])};
      double want_d[5] = {exp(xd[i]), log(pd[i]), sqrt(pd[i]), tanh(xd[i]), pow(pd[i], xd[i])};
      for (int k = 0; k < 5; k++) {
        CU_ASSERT(close_rel(o[(k * CG_NREGIONS + r) * N + i], (float)want_f[k], 3e-7));
        CU_ASSERT(close_rel(od[(k * CG_NREGIONS + r) * N + i], want_d[k], 1e-15));
      }
    }
  free(x), free(p), free(o), free(xd), free(pd), free(od);
}

static tsl_expr *f_floor(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_FLOOR, x[0]); }
static tsl_expr *f_ceil(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_CEIL, x[0]); }
static tsl_expr *f_round(tsl_expr *const *x, int l) { (void)l; return call1(TSL_CALL_ROUND, x[0]); }

/* Round half to even by hand (values here are small, so x + 0.5 is exact). */
static double naive_round_half_even(double x) {
  double f = floor(x), diff = x - f;
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f == 0 && signbit(x) ? -0.0 : f;
  return fmod(f, 2.0) == 0 ? f : f + 1;
}

static void test_floor_ceil_round_half_to_even(void) {
  float *x = cg_alloc(N * 4), *o = cg_alloc(3 * CG_NREGIONS * N * 4);
  static const float special[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.5f, -0.0f, 1e20f, -7.25f};
  for (int i = 0; i < N; i++) x[i] = i < 10 ? special[i] : (float)(i - 40) * 0.3f;
  cg_expr_fn fns[3] = {f_floor, f_ceil, f_round};
  tsl_type t = TSL_F32;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel_multi("rounding", 1, &t, TSL_F32, N, 3, fns), 1, (void *[]){x}, o),
                        TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) {
      CU_ASSERT_EQUAL(o[(0 * CG_NREGIONS + r) * N + i], floorf(x[i]));
      CU_ASSERT_EQUAL(o[(1 * CG_NREGIONS + r) * N + i], ceilf(x[i]));
      CU_ASSERT_EQUAL(o[(2 * CG_NREGIONS + r) * N + i], (float)naive_round_half_even(x[i]));
    }
  CU_ASSERT_EQUAL(o[2 * CG_NREGIONS * N + 2], 2.0f);
  CU_ASSERT_EQUAL(o[2 * CG_NREGIONS * N + 0], 0.0f);
  CU_ASSERT(signbit(o[2 * CG_NREGIONS * N + 3])); /* round(-0.5) = -0 */
  free(x), free(o);
}

static tsl_expr *f_isnan(tsl_expr *const *x, int l) {
  (void)l;
  return tsl_call(TSL_CALL_ISNAN, tsl_type_with_lanes(TSL_BOOL, x[0]->type.lanes), 1, (tsl_expr *[]){x[0]});
}

static void test_isnan(void) {
  double *x = cg_alloc(N * 8);
  uint8_t *o = cg_alloc(CG_NREGIONS * N);
  for (int i = 0; i < N; i++) x[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : i;
  tsl_type t = TSL_F64;
  CU_ASSERT_EQUAL_FATAL(cg_run_lanes(cg_lanes_kernel("isnan", 1, &t, TSL_BOOL, N, f_isnan), 1, (void *[]){x}, o), TSL_OK);
  for (int r = 0; r < CG_NREGIONS; r++)
    for (int i = 0; i < N; i++) CU_ASSERT_EQUAL(o[r * N + i], i % 3 == 0);
  free(x), free(o);
}

/* ---- horizontal reductions: out[(k*3 + w)*N + io] = reduce_k(in[ramp(io*L_w, 1, L_w)]) ---- */

static const int reduce_lanes[3] = {4, 8, 16};

static tsl_func *reduce_kernel(const char *name, tsl_type t) {
  tsl_buffer *in = cg_buf("in", t, N), *out = cg_buf("out", t, 3 * 3 * N);
  tsl_intrinsic ops[3] = {TSL_CALL_REDUCE_ADD, TSL_CALL_REDUCE_MAX, TSL_CALL_REDUCE_MIN};
  tsl_stmt *loops[9];
  for (int k = 0; k < 3; k++)
    for (int w = 0; w < 3; w++) {
      int L = reduce_lanes[w];
      tsl_expr *io = tsl_var("io", TSL_I64);
      tsl_expr *v = cg_ldv(in, tsl_mul(io, tsl_i64(L)), L);
      tsl_expr *red = tsl_call(ops[k], t, 1, &v);
      loops[k * 3 + w] = tsl_for(io, tsl_i64(0), tsl_i64(N / L), TSL_FOR_SERIAL,
                                 cg_st(out, tsl_add(tsl_i64((k * 3 + w) * N), io), red));
    }
  return cg_func(name, 2, (tsl_buffer *[]){in, out}, tsl_seq(9, loops));
}

static void test_reduce_add_float_is_ordered_and_max_min_propagate_nan(void) {
  float *in = cg_alloc(N * 4), *o = cg_alloc(9 * N * 4);
  /* 1e8 + 1 - 1e8 + 1 in lane order gives 1; any pairwise tree gives 2 or 0. */
  static const float pattern[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  for (int i = 0; i < N; i++) in[i] = pattern[i % 4] * (float)(1 + (i / 16));
  in[40] = NAN; /* in the third group of 16, fifth group of 8, eleventh of 4 */
  in[7] = 3e9f;
  void *p[2] = {in, o};
  CU_ASSERT_EQUAL_FATAL(cg_run(reduce_kernel("reduce_f", TSL_F32), (void *[]){&p[0], &p[1]}), TSL_OK);
  for (int w = 0; w < 3; w++) {
    int L = reduce_lanes[w];
    for (int io = 0; io < N / L; io++) {
      float sum = -0.0f, mx = -INFINITY, mn = INFINITY;
      bool nan = false;
      for (int l = 0; l < L; l++) {
        float v = in[io * L + l];
        sum = sum + v;
        nan |= isnan(v);
        if (v > mx) mx = v;
        if (v < mn) mn = v;
      }
      CU_ASSERT(same_float(o[(0 * 3 + w) * N + io], sum));
      CU_ASSERT(same_float(o[(1 * 3 + w) * N + io], nan ? NAN : mx));
      CU_ASSERT(same_float(o[(2 * 3 + w) * N + io], nan ? NAN : mn));
    }
  }
  CU_ASSERT_EQUAL(o[(0 * 3 + 0) * N + 0], 1.0f); /* first 4 lanes: ordered sum is 1 */
  free(in), free(o);
}

static void test_reduce_integer_wraps_and_respects_signedness(void) {
  int32_t *in = cg_alloc(N * 4), *os = cg_alloc(9 * N * 4), *ou = cg_alloc(9 * N * 4);
  for (int i = 0; i < N; i++) in[i] = i % 5 == 0 ? INT32_MAX - i : i % 5 == 1 ? -i * 1000 : i * 77;
  void *ps[2] = {in, os}, *pu[2] = {in, ou};
  CU_ASSERT_EQUAL_FATAL(cg_run(reduce_kernel("reduce_i", TSL_I32), (void *[]){&ps[0], &ps[1]}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run(reduce_kernel("reduce_u", TSL_U32), (void *[]){&pu[0], &pu[1]}), TSL_OK);
  for (int w = 0; w < 3; w++) {
    int L = reduce_lanes[w];
    for (int io = 0; io < N / L; io++) {
      uint32_t sum = 0, umx = 0, umn = UINT32_MAX;
      int32_t smx = INT32_MIN, smn = INT32_MAX;
      for (int l = 0; l < L; l++) {
        int32_t v = in[io * L + l];
        sum += (uint32_t)v;
        if (v > smx) smx = v;
        if (v < smn) smn = v;
        if ((uint32_t)v > umx) umx = (uint32_t)v;
        if ((uint32_t)v < umn) umn = (uint32_t)v;
      }
      CU_ASSERT_EQUAL((uint32_t)os[(0 * 3 + w) * N + io], sum);
      CU_ASSERT_EQUAL(os[(1 * 3 + w) * N + io], smx);
      CU_ASSERT_EQUAL(os[(2 * 3 + w) * N + io], smn);
      CU_ASSERT_EQUAL((uint32_t)ou[(1 * 3 + w) * N + io], umx);
      CU_ASSERT_EQUAL((uint32_t)ou[(2 * 3 + w) * N + io], umn);
    }
  }
  free(in), free(os), free(ou);
}

/* ---- prefetch and likely ---- */

static void test_prefetch_and_likely_keep_results(void) {
  tsl_buffer *in = cg_buf("in", TSL_F32, N + 16), *out = cg_buf("out", TSL_F32, N);
  tsl_expr *i = tsl_var("i", TSL_I64);
  tsl_expr *ahead = cg_ld(in, tsl_add(i, tsl_i64(16)));
  tsl_stmt *pf = tsl_evaluate(tsl_call(TSL_CALL_PREFETCH, TSL_I32, 1, &ahead));
  tsl_expr *x = cg_ld(in, i), *cond = tsl_gt(x, tsl_f32(0.0f));
  tsl_expr *likely = tsl_call(TSL_CALL_LIKELY, TSL_BOOL, 1, &cond);
  tsl_stmt *st = cg_st(out, i, tsl_select(likely, x, tsl_f32(0.0f)));
  tsl_expr *jo = tsl_var("jo", TSL_I64);
  tsl_expr *vahead = cg_ldv(in, tsl_add(tsl_mul(jo, tsl_i64(8)), tsl_i64(8)), 8);
  tsl_stmt *vpf = tsl_evaluate(tsl_call(TSL_CALL_PREFETCH, TSL_I32, 1, &vahead));
  tsl_stmt *body = tsl_seq2(tsl_for(i, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL, tsl_seq2(pf, st)),
                            tsl_for(jo, tsl_i64(0), tsl_i64(N / 8), TSL_FOR_SERIAL, vpf));
  float *a = cg_alloc((N + 16) * 4), *o = cg_alloc(N * 4);
  for (int k = 0; k < N + 16; k++) a[k] = (float)(k % 7) - 3;
  void *p[2] = {a, o};
  CU_ASSERT_EQUAL_FATAL(cg_run(cg_func("prefetch", 2, (tsl_buffer *[]){in, out}, body), (void *[]){&p[0], &p[1]}),
                        TSL_OK);
  for (int k = 0; k < N; k++) CU_ASSERT_EQUAL(o[k], a[k] > 0 ? a[k] : 0.0f);
  free(a), free(o);
}

void cg_add_intrinsic_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_intrinsics", cg_suite_init, cg_suite_clean);
  CU_add_test(s, "test_fma_rounds_once", test_fma_rounds_once);
  CU_add_test(s, "test_popcount_u64x8_i32_u8", test_popcount_u64x8_i32_u8);
  CU_add_test(s, "test_shift_arithmetic_logical_and_scalar_amount", test_shift_arithmetic_logical_and_scalar_amount);
  CU_add_test(s, "test_bitwise_and_or_xor_not_int_and_bool", test_bitwise_and_or_xor_not_int_and_bool);
  CU_add_test(s, "test_abs_int_wraps_float_clears_sign", test_abs_int_wraps_float_clears_sign);
  CU_add_test(s, "test_exp_log_sqrt_tanh_pow_match_libm", test_exp_log_sqrt_tanh_pow_match_libm);
  CU_add_test(s, "test_floor_ceil_round_half_to_even", test_floor_ceil_round_half_to_even);
  CU_add_test(s, "test_isnan", test_isnan);
  CU_add_test(s, "test_reduce_add_float_is_ordered_and_max_min_propagate_nan",
              test_reduce_add_float_is_ordered_and_max_min_propagate_nan);
  CU_add_test(s, "test_reduce_integer_wraps_and_respects_signedness", test_reduce_integer_wraps_and_respects_signedness);
  CU_add_test(s, "test_prefetch_and_likely_keep_results", test_prefetch_and_likely_keep_results);
}
