/* Math functions LLVM has no intrinsic for, written out in LLVM IR so that they
 * vectorize: erf (ir.h TSL_CALL_ERF). */
#include <string.h>

#include "codegen/llvm_internal.h"

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
 * 0.984 ulp of glibc's double erf. A and B share one Horner loop whose coefficients
 * are chosen per lane (a select each), so a vector pays for two polynomials, not three.
 * NaN propagates (the small piece is taken for it: NaN >= 0.875 is false). */
/* Q(t), highest power first; fit error 8.9e-09 */
static const float erf_small[6] = {-6.214585155e-04f, 5.034370814e-03f, -2.679294720e-02f,
                                   1.128249690e-01f,  -3.761255443e-01f, 1.283791512e-01f};
/* A(v), highest power first; fit error 1.1e-08 */
static const float erfc_mid[10] = {-1.381103997e-03f, 2.423123689e-03f, 4.580341280e-03f, -1.934956759e-02f,
                                   1.490213349e-02f,  4.460342228e-02f, -1.387552470e-01f, 1.783950925e-01f,
                                   -1.189302057e-01f, 3.389485925e-02f};
/* B(v), highest power first; fit error 8.2e-09 */
static const float erfc_tail[10] = {-1.257580607e-05f, 1.119851731e-04f, -3.801357525e-04f, 7.482297951e-04f,
                                    -1.022859942e-03f, 1.042671734e-03f, -7.879311452e-04f, 4.178521340e-04f,
                                    -1.393084531e-04f, 2.208982733e-05f};
#define ERF_SPLIT 0.875
#define ERF_SPLIT2 2.25
#define ERF_MID 1.5
#define ERF_TAIL_MID 3.0
#define ERF_CLAMP 4.0

/* A float constant of type t (scalar or vector splat). */
static LLVMValueRef fconst(LLVMTypeRef t, double v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstReal(t, v);
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef lanes[n];
  LLVMValueRef x = LLVMConstReal(LLVMGetElementType(t), v);
  for (unsigned i = 0; i < n; i++) lanes[i] = x;
  return LLVMConstVector(lanes, n);
}

static tsl_status fma3(cg *c, LLVMValueRef a, LLVMValueRef b, LLVMValueRef d, LLVMValueRef *out) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, d};
  return cg_intrinsic(c, "llvm.fma", &t, 1, args, 3, out);
}

static tsl_status erf_f32(cg *c, LLVMValueRef x, LLVMValueRef *out) {
  LLVMBuilderRef b = c->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef a, r1, p, r2;
  CG_TRY(cg_intrinsic(c, "llvm.fabs", &t, 1, &x, 1, &a));
  /* small piece */
  LLVMValueRef x2 = LLVMBuildFMul(b, x, x, "erf.x2");
  LLVMValueRef q = fconst(t, erf_small[0]);
  for (size_t i = 1; i < sizeof erf_small / sizeof erf_small[0]; i++) CG_TRY(fma3(c, q, x2, fconst(t, erf_small[i]), &q));
  CG_TRY(fma3(c, x, q, x, &r1));
  /* the two erfc pieces: one Horner loop, coefficients chosen per lane */
  LLVMValueRef clamp = fconst(t, ERF_CLAMP);
  LLVMValueRef ac = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, a, clamp, ""), a, clamp, "erf.ac");
  LLVMValueRef tail = LLVMBuildFCmp(b, LLVMRealOGE, ac, fconst(t, ERF_SPLIT2), "erf.tail");
  LLVMValueRef v = LLVMBuildFSub(b, ac, LLVMBuildSelect(b, tail, fconst(t, ERF_TAIL_MID), fconst(t, ERF_MID), ""), "erf.v");
  p = LLVMBuildSelect(b, tail, fconst(t, erfc_tail[0]), fconst(t, erfc_mid[0]), "");
  for (size_t i = 1; i < sizeof erfc_mid / sizeof erfc_mid[0]; i++)
    CG_TRY(fma3(c, p, v, LLVMBuildSelect(b, tail, fconst(t, erfc_tail[i]), fconst(t, erfc_mid[i]), ""), &p));
  LLVMValueRef one = fconst(t, 1.0);
  r2 = LLVMBuildFSub(b, one, p, "");
  r2 = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, r2, one, ""), one, r2, "");
  LLVMValueRef cs[2] = {r2, x};
  CG_TRY(cg_intrinsic(c, "llvm.copysign", &t, 1, cs, 2, &r2));
  *out = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGE, a, fconst(t, ERF_SPLIT), ""), r2, r1, "erf");
  return TSL_OK;
}

/* erf in f64: libm's erf, lane by lane (no vector form; only the f32 path matters for
 * the models). */
static tsl_status erf_f64(cg *c, LLVMValueRef x, int lanes, LLVMValueRef *out) {
  LLVMTypeRef d = LLVMDoubleTypeInContext(c->ctx);
  LLVMTypeRef ft = LLVMFunctionType(d, &d, 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, "erf");
  if (!fn) {
    fn = LLVMAddFunction(c->mod, "erf", ft);
    LLVMSetLinkage(fn, LLVMExternalLinkage);
  }
  if (lanes == 1) {
    *out = LLVMBuildCall2(c->b, ft, fn, &x, 1, "erf");
    return TSL_OK;
  }
  LLVMValueRef r = LLVMGetPoison(LLVMTypeOf(x));
  for (int i = 0; i < lanes; i++) {
    LLVMValueRef idx = LLVMConstInt(c->t_i32, (unsigned long long)i, 0);
    LLVMValueRef e = LLVMBuildExtractElement(c->b, x, idx, "");
    LLVMValueRef y = LLVMBuildCall2(c->b, ft, fn, &e, 1, "");
    r = LLVMBuildInsertElement(c->b, r, y, idx, "");
  }
  *out = r;
  return TSL_OK;
}

tsl_status cg_erf(cg *c, LLVMValueRef x, tsl_type t, LLVMValueRef *out) {
  if (t.code == TSL_TYPE_FLOAT && t.bits == 32) return erf_f32(c, x, out);
  if (t.code == TSL_TYPE_FLOAT && t.bits == 64) return erf_f64(c, x, t.lanes, out);
  char buf[32];
  return cg_fail(c, "erf on %s (f32 and f64 only)", tsl_type_str(t, buf, sizeof buf));
}
