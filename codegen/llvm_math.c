/* f32 exp, log, tanh and erf as LLVM IR; f64 erf through libm (llvm_math.h). */
#include "codegen/llvm_math.h"

#include <stdio.h>

#include "target/arch.h"
#include "target/target.h"

typedef struct mth {
  cg *c;
  int lanes;
  LLVMTypeRef f, i; /* f32 and i32, scalar or <lanes x> */
} mth;

static LLVMValueRef fc(const mth *m, double v) { return cg_splat(m->c, LLVMConstReal(LLVMFloatTypeInContext(m->c->ctx), v), m->lanes); }
static LLVMValueRef ic(const mth *m, long long v) { return cg_splat(m->c, LLVMConstInt(m->c->t_i32, (unsigned long long)v, 1), m->lanes); }
static LLVMValueRef fadd(const mth *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(m->c->b, a, b, ""); }
static LLVMValueRef fsub(const mth *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(m->c->b, a, b, ""); }
static LLVMValueRef fmul(const mth *m, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(m->c->b, a, b, ""); }

static tsl_status call1(const mth *m, const char *name, LLVMValueRef a, LLVMValueRef *out) {
  LLVMTypeRef t = m->f;
  return cg_intrinsic(m->c, name, &t, 1, &a, 1, out);
}
static tsl_status call2(const mth *m, const char *name, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *out) {
  LLVMTypeRef t = m->f;
  LLVMValueRef args[2] = {a, b};
  return cg_intrinsic(m->c, name, &t, 1, args, 2, out);
}
/* a * b + c, fused */
static tsl_status fma3(const mth *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c, LLVMValueRef *out) {
  LLVMTypeRef t = m->f;
  LLVMValueRef args[3] = {a, b, c};
  return cg_intrinsic(m->c, "llvm.fma", &t, 1, args, 3, out);
}
/* Horner: coef[0] * x^(n-1) + ... + coef[n-1] */
static tsl_status horner(const mth *m, LLVMValueRef x, const double *coef, int n, LLVMValueRef *out) {
  LLVMValueRef p = fc(m, coef[0]);
  for (int k = 1; k < n; k++) CG_TRY(fma3(m, p, x, fc(m, coef[k]), &p));
  *out = p;
  return TSL_OK;
}
static LLVMValueRef as_float(const mth *m, LLVMValueRef v) { return LLVMBuildBitCast(m->c->b, v, m->f, ""); }
static LLVMValueRef as_int(const mth *m, LLVMValueRef v) { return LLVMBuildBitCast(m->c->b, v, m->i, ""); }
static LLVMValueRef isnan_(const mth *m, LLVMValueRef x) { return LLVMBuildFCmp(m->c->b, LLVMRealUNO, x, x, ""); }

static void init(mth *m, cg *c, int lanes) {
  m->c = c;
  m->lanes = lanes;
  LLVMTypeRef f32 = LLVMFloatTypeInContext(c->ctx);
  m->f = lanes > 1 ? LLVMVectorType(f32, (unsigned)lanes) : f32;
  m->i = lanes > 1 ? LLVMVectorType(c->t_i32, (unsigned)lanes) : c->t_i32;
}

/* x86 with AVX-512 at m's width (16 lanes: AVX-512F; 8 and 4: AVX-512VL): the suffix of
 * its intrinsics' names (".512", ".256", ".128"), else NULL. */
static const char *avx512_suffix(const mth *m) {
  const cg *c = m->c;
  if (!c->target || !c->backend || c->backend->arch != TSL_ARCH_X86_64) return NULL;
  if (m->lanes == 16 && tsl_target_has_feature(c->target, "avx512f")) return ".512";
  if ((m->lanes == 8 || m->lanes == 4) && tsl_target_has_feature(c->target, "avx512vl"))
    return m->lanes == 8 ? ".256" : ".128";
  return NULL;
}
/* y 2^floor(n) in one rounding (AVX-512 vscalefps, sfx from avx512_suffix): overflow to
 * inf and gradual underflow as for a correctly rounded product; NaN in, NaN out. */
static tsl_status avx512_scalef(const mth *m, const char *sfx, LLVMValueRef y, LLVMValueRef n, LLVMValueRef *out) {
  char name[48];
  snprintf(name, sizeof name, "llvm.x86.avx512.mask.scalef.ps%s", sfx);
  LLVMContextRef ctx = m->c->ctx;
  LLVMValueRef all = LLVMConstAllOnes(m->lanes == 16 ? LLVMInt16TypeInContext(ctx) : LLVMInt8TypeInContext(ctx));
  /* y, n, pass-through, lane mask (all), and at 16 lanes the rounding: 4, the current mode */
  LLVMValueRef args[5] = {y, n, LLVMGetUndef(m->f), all, LLVMConstInt(m->c->t_i32, 4, 0)};
  return cg_intrinsic(m->c, name, NULL, 0, args, m->lanes == 16 ? 5 : 4, out);
}

/* exp(x) = 2^n * e^r with n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2]
 * (ln 2 in two parts so that n ln 2 is exact), e^r = 1 + r + r^2 P(r) with Cephes
 * expf's P, evaluated as one Horner chain of 7 fmas.
 * x is first clamped to [-104, 89] (beyond it the result is 0 or +inf anyway) so that
 * a NaN passes: by compare-and-select (one max/min instruction each on x86), on AArch64
 * by llvm.maximum/minimum (fmax/fmin); n then lies in [-150, 128]. n comes from
 * t = x log2(e) + M in one fma, M = 1.5 2^23 + 254: t's unit in the last place is 1, so
 * the fma rounds to the nearest integer, n = t - M exactly, and t's bits are bits(M) + n.
 * 2^n: on x86 with AVX-512 (avx512_suffix) one vscalefps, which rounds once; elsewhere
 * two normal factors 2^(n>>1) and 2^(n - (n>>1)) whose bits come from t's: with
 * bits(M) = 254 mod 1024, (bits(t) >> 1) << 23 is the first and (bits(t) << 23) minus
 * the first the second (mod 2^32). Both give overflow to +inf, gradual underflow (the
 * last product rounds once into the subnormals) and NaN through the arithmetic.
 * 14 vector instructions with vscalefps, 19 without (Cephes' form with a float-to-int
 * conversion and a NaN select took 25). */
tsl_status cg_math_exp_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out) {
  mth m;
  init(&m, c, lanes);
  static const double p[] = {1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                             1.6666665459e-1, 5.0000001201e-1, 1.0,             1.0};
  /* the bit trick below needs the clamp to [-104, 89]: n in [-150, 128] keeps 254 + n
   * in [0, 512) and both factors' exponent fields in [1, 254] (normal, finite) */
  const double magic = 12583166.0; /* 1.5 2^23 + 254 */
  LLVMBuilderRef b = c->b;
  LLVMValueRef xc, t, n, r, y;
  if (c->backend && c->backend->arch == TSL_ARCH_AARCH64) { /* NEON's fmax/fmin propagate NaN */
    CG_TRY(call2(&m, "llvm.maximum", x, fc(&m, -104.0), &xc));
    CG_TRY(call2(&m, "llvm.minimum", xc, fc(&m, 89.0), &xc));
  } else {
    xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, fc(&m, -104.0), ""), fc(&m, -104.0), x, "");
    xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, xc, fc(&m, 89.0), ""), fc(&m, 89.0), xc, "");
  }
  CG_TRY(fma3(&m, xc, fc(&m, 1.44269504088896341), fc(&m, magic), &t));
  n = fsub(&m, t, fc(&m, magic));
  CG_TRY(fma3(&m, n, fc(&m, -0.693359375), xc, &r));
  CG_TRY(fma3(&m, n, fc(&m, 2.12194440e-4), r, &r));
  CG_TRY(horner(&m, r, p, 8, &y));
  const char *sfx = avx512_suffix(&m);
  if (sfx) return avx512_scalef(&m, sfx, y, n, out);
  LLVMValueRef u = as_int(&m, t);
  LLVMValueRef p1 = LLVMBuildShl(b, LLVMBuildLShr(b, u, ic(&m, 1), ""), ic(&m, 23), "");
  LLVMValueRef p2 = LLVMBuildSub(b, LLVMBuildShl(b, u, ic(&m, 23), ""), p1, "");
  *out = fmul(&m, fmul(&m, y, as_float(&m, p1)), as_float(&m, p2));
  return TSL_OK;
}

/* log(x) = e ln 2 + log(mant) with x = mant 2^e, mant in [sqrt(1/2), sqrt(2)) and
 * log(1 + z) = z - z^2/2 + z^3 P(z) for z = mant - 1 (Cephes logf); subnormal x is
 * scaled by 2^23 first. */
tsl_status cg_math_log_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out) {
  mth m;
  init(&m, c, lanes);
  static const double p[] = {7.0376836292e-2,  -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                             -1.6668057665e-1, 2.0000714765e-1,  -2.4999993993e-1, 3.3333331174e-1};
  LLVMBuilderRef b = c->b;
  LLVMValueRef tiny = LLVMBuildFCmp(b, LLVMRealOLT, x, fc(&m, 1.17549435e-38), "");
  LLVMValueRef xs = LLVMBuildSelect(b, tiny, fmul(&m, x, fc(&m, 8388608.0)), x, "");
  LLVMValueRef bits = as_int(&m, xs);
  LLVMValueRef e = LLVMBuildSub(b, LLVMBuildLShr(b, bits, ic(&m, 23), ""), ic(&m, 126), "");
  e = LLVMBuildSub(b, e, LLVMBuildSelect(b, tiny, ic(&m, 23), ic(&m, 0), ""), "");
  /* mant in [0.5, 1) */
  LLVMValueRef mant =
      as_float(&m, LLVMBuildOr(b, LLVMBuildAnd(b, bits, ic(&m, 0x007fffff), ""), ic(&m, 0x3f000000), ""));
  LLVMValueRef small = LLVMBuildFCmp(b, LLVMRealOLT, mant, fc(&m, 0.707106781186547524), "");
  /* mant < sqrt(1/2): z = 2 mant - 1, e - 1; else z = mant - 1 */
  LLVMValueRef z = fsub(&m, LLVMBuildSelect(b, small, fadd(&m, mant, mant), mant, ""), fc(&m, 1.0));
  e = LLVMBuildSub(b, e, LLVMBuildSelect(b, small, ic(&m, 1), ic(&m, 0), ""), "");
  LLVMValueRef ef = LLVMBuildSIToFP(b, e, m.f, "");
  LLVMValueRef pz, y, z2 = fmul(&m, z, z);
  CG_TRY(horner(&m, z, p, 9, &pz));
  y = fmul(&m, fmul(&m, pz, z), z2);             /* z^3 P(z) */
  CG_TRY(fma3(&m, ef, fc(&m, -2.12194440e-4), y, &y));
  CG_TRY(fma3(&m, z2, fc(&m, -0.5), y, &y));
  y = fadd(&m, z, y);
  CG_TRY(fma3(&m, ef, fc(&m, 0.693359375), y, &y));
  /* special values: 0 -> -inf, < 0 -> NaN, +inf -> +inf, NaN -> NaN */
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, fc(&m, 1.0 / 0.0), ""), x, y, "");
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, fc(&m, 0.0), ""), fc(&m, -1.0 / 0.0), y, "");
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealULT, x, fc(&m, 0.0), ""), fc(&m, 0.0 / 0.0), y, "log");
  *out = y;
  return TSL_OK;
}

/* tanh(x): for |x| < 0.625, x + x^3 P(x^2) (Cephes tanhf); else
 * sign(x) (1 - 2 / (e^(2|x|) + 1)), which saturates to +-1 for large |x|. */
tsl_status cg_math_tanh_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out) {
  mth m;
  init(&m, c, lanes);
  static const double p[] = {-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
                             -3.33332819422e-1};
  LLVMBuilderRef b = c->b;
  LLVMValueRef ax, e2, big, x2, ps, small;
  CG_TRY(call1(&m, "llvm.fabs", x, &ax));
  CG_TRY(cg_math_exp_f32(c, fadd(&m, ax, ax), lanes, &e2));
  big = fsub(&m, fc(&m, 1.0), LLVMBuildFDiv(b, fc(&m, 2.0), fadd(&m, e2, fc(&m, 1.0)), ""));
  CG_TRY(call2(&m, "llvm.copysign", big, x, &big));
  x2 = fmul(&m, x, x);
  CG_TRY(horner(&m, x2, p, 5, &ps));
  CG_TRY(fma3(&m, fmul(&m, ps, x2), x, x, &small));
  LLVMValueRef is_small = LLVMBuildFCmp(b, LLVMRealOLT, ax, fc(&m, 0.625), "");
  LLVMValueRef y = LLVMBuildSelect(b, is_small, small, big, "");
  *out = LLVMBuildSelect(b, isnan_(&m, x), x, y, "tanh");
  return TSL_OK;
}

/* erf in f32, three pieces, each a polynomial evaluated by Horner's rule with fma:
 *   |x| <  0.875:  erf(x) = x + x * Q(x^2)               (odd series as a correction of x,
 *                                                         fdlibm s_erf.c's form below 0.84375)
 *   |x| <  2.25:   erf(x) = 1 - A(|x| - 1.5)              A(v) ~ erfc(1.5 + v)
 *   |x| >= 2.25:   erf(x) = 1 - B(min(|x|, 4) - 3)        B(v) ~ erfc(3 + v)
 * with x's sign and the result capped at 1 (above 4 erf rounds to 1 in f32). The
 * subtractions are exact on their pieces (Sterbenz), and erfc rather than erf is fitted
 * so that rounding errors scale with the small erfc. Coefficients: Chebyshev
 * interpolants (mpmath.chebyfit, near-minimax) rounded to f32, made by
 * scripts/erf_fit.py, which documents the measurement: every f32 in [0, 5) within
 * 0.984 ulp of glibc's double erf. A and B share one Horner loop whose coefficients are
 * chosen per lane (a select each), so a vector pays for two polynomials, not three.
 * NaN propagates (the small piece is taken for it: NaN >= 0.875 is false). */
static const double erf_small[6] = {-6.214585155e-04, 5.034370814e-03, -2.679294720e-02,
                                    1.128249690e-01,  -3.761255443e-01, 1.283791512e-01};
static const double erfc_mid[10] = {-1.381103997e-03, 2.423123689e-03,  4.580341280e-03, -1.934956759e-02,
                                    1.490213349e-02,  4.460342228e-02,  -1.387552470e-01, 1.783950925e-01,
                                    -1.189302057e-01, 3.389485925e-02};
static const double erfc_tail[10] = {-1.257580607e-05, 1.119851731e-04,  -3.801357525e-04, 7.482297951e-04,
                                     -1.022859942e-03, 1.042671734e-03,  -7.879311452e-04, 4.178521340e-04,
                                     -1.393084531e-04, 2.208982733e-05};

static tsl_status erf_f32(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out) {
  mth m;
  init(&m, c, lanes);
  LLVMBuilderRef b = c->b;
  LLVMValueRef ax, q, small, p, big;
  CG_TRY(call1(&m, "llvm.fabs", x, &ax));
  CG_TRY(horner(&m, fmul(&m, x, x), erf_small, 6, &q));
  CG_TRY(fma3(&m, x, q, x, &small));
  /* the two erfc pieces: one Horner loop, each coefficient chosen per lane */
  LLVMValueRef ac = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, ax, fc(&m, 4.0), ""), ax, fc(&m, 4.0), "");
  LLVMValueRef tail = LLVMBuildFCmp(b, LLVMRealOGE, ac, fc(&m, 2.25), "");
  LLVMValueRef v = fsub(&m, ac, LLVMBuildSelect(b, tail, fc(&m, 3.0), fc(&m, 1.5), ""));
  p = LLVMBuildSelect(b, tail, fc(&m, erfc_tail[0]), fc(&m, erfc_mid[0]), "");
  for (int k = 1; k < 10; k++)
    CG_TRY(fma3(&m, p, v, LLVMBuildSelect(b, tail, fc(&m, erfc_tail[k]), fc(&m, erfc_mid[k]), ""), &p));
  big = fsub(&m, fc(&m, 1.0), p);
  big = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, big, fc(&m, 1.0), ""), fc(&m, 1.0), big, "");
  CG_TRY(call2(&m, "llvm.copysign", big, x, &big));
  *out = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGE, ax, fc(&m, 0.875), ""), big, small, "erf");
  return TSL_OK;
}

/* erf in f64: libm's erf, lane by lane (only the f32 path matters for the models). */
static tsl_status erf_f64(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out) {
  LLVMTypeRef d = LLVMDoubleTypeInContext(c->ctx);
  LLVMTypeRef ft = LLVMFunctionType(d, &d, 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "erf");
  if (!fn) fn = LLVMAddFunction(c->mod, "erf", ft);
  if (lanes == 1) {
    *out = LLVMBuildCall2(c->b, ft, fn, &x, 1, "erf");
    return TSL_OK;
  }
  LLVMValueRef r = LLVMGetPoison(LLVMTypeOf(x));
  for (int i = 0; i < lanes; i++) {
    LLVMValueRef idx = LLVMConstInt(c->t_i32, (unsigned long long)i, 0);
    LLVMValueRef y = LLVMBuildCall2(c->b, ft, fn, (LLVMValueRef[]){LLVMBuildExtractElement(c->b, x, idx, "")}, 1, "");
    r = LLVMBuildInsertElement(c->b, r, y, idx, "");
  }
  *out = r;
  return TSL_OK;
}

tsl_status cg_math_erf(cg *c, LLVMValueRef x, tsl_type t, LLVMValueRef *out) {
  if (t.code == TSL_TYPE_FLOAT && t.bits == 32) return erf_f32(c, x, t.lanes, out);
  if (t.code == TSL_TYPE_FLOAT && t.bits == 64) return erf_f64(c, x, t.lanes, out);
  char buf[32];
  return cg_fail(c, "erf on %s (f32 and f64 only)", tsl_type_str(t, buf, sizeof buf));
}
