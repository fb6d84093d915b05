/* IR expressions and intrinsics -> LLVM values (see codegen/llvm.h for the
 * semantics each lowering implements). */
#include <string.h>

#include "codegen/llvm_internal.h"
#include "codegen/llvm_math.h"

#define MULTIPLE_CAP ((int64_t)1 << 20)

/* ---- small helpers ---- */

static bool const_int_operand(const tsl_expr *e, int64_t *v) {
  if (tsl_expr_is_const_int(e, v)) return true;
  return e->kind == TSL_E_BROADCAST && tsl_expr_is_const_int(e->broadcast.value, v);
}

/* An integer constant of type t (scalar or vector splat). */
static LLVMValueRef const_int(LLVMTypeRef t, int64_t v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, (unsigned long long)v, 0);
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef lanes[n];
  LLVMValueRef x = LLVMConstInt(LLVMGetElementType(t), (unsigned long long)v, 0);
  for (unsigned i = 0; i < n; i++) lanes[i] = x;
  return LLVMConstVector(lanes, n);
}

LLVMValueRef cg_splat(cg *c, LLVMValueRef v, int lanes) {
  if (lanes <= 1) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)lanes);
  LLVMValueRef poison = LLVMGetPoison(vt);
  LLVMValueRef one = LLVMBuildInsertElement(c->b, poison, v, LLVMConstInt(c->t_i32, 0, 0), "");
  return LLVMBuildShuffleVector(c->b, one, poison, LLVMConstNull(LLVMVectorType(c->t_i32, (unsigned)lanes)),
                                "splat");
}

tsl_status cg_intrinsic(cg *c, const char *name, LLVMTypeRef *overloads, int noverloads,
                        LLVMValueRef *args, int nargs, LLVMValueRef *out) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (id == 0) return cg_fail(c, "LLVM has no intrinsic %s", name);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, overloads, (size_t)noverloads);
  LLVMTypeRef ft = LLVMIntrinsicGetType(c->ctx, id, overloads, (size_t)noverloads);
  *out = LLVMBuildCall2(c->b, ft, fn, args, (unsigned)nargs, "");
  return TSL_OK;
}

static tsl_status intrinsic1(cg *c, const char *name, LLVMValueRef a, LLVMValueRef *out) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(c, name, &t, 1, &a, 1, out);
}

static tsl_status intrinsic2(cg *c, const char *name, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *out) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[2] = {a, b};
  return cg_intrinsic(c, name, &t, 1, args, 2, out);
}

tsl_status cg_type(const cg *c, tsl_type t, LLVMTypeRef *out) {
  LLVMTypeRef s = NULL;
  char buf[32];
  switch ((tsl_type_code)t.code) {
  case TSL_TYPE_BOOL: s = c->t_i1; break;
  case TSL_TYPE_INT:
  case TSL_TYPE_UINT:
    if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) s = LLVMIntTypeInContext(c->ctx, t.bits);
    break;
  case TSL_TYPE_FLOAT:
    if (t.bits == 16) s = LLVMHalfTypeInContext(c->ctx);
    else if (t.bits == 32) s = LLVMFloatTypeInContext(c->ctx);
    else if (t.bits == 64) s = LLVMDoubleTypeInContext(c->ctx);
    break;
  case TSL_TYPE_HANDLE: s = c->t_ptr; break;
  }
  if (!s || t.lanes < 1) return cg_fail(c, "type %s has no LLVM equivalent", tsl_type_str(t, buf, sizeof buf));
  *out = t.lanes > 1 ? LLVMVectorType(s, t.lanes) : s;
  return TSL_OK;
}

int64_t cg_known_multiple(const cg *c, const tsl_expr *e) {
  int64_t a, b;
  switch (e->kind) {
  case TSL_E_INT: {
    if (e->int_value == 0) return MULTIPLE_CAP;
    uint64_t u = (uint64_t)e->int_value;
    uint64_t low = u & (~u + 1);
    return low >= (uint64_t)MULTIPLE_CAP ? MULTIPLE_CAP : (int64_t)low;
  }
  case TSL_E_VAR: {
    for (int i = c->nvars - 1; i >= 0; i--)
      if (c->vars[i].var == e) return c->vars[i].multiple;
    return 1;
  }
  case TSL_E_ADD:
  case TSL_E_SUB:
    a = cg_known_multiple(c, e->bin.a);
    b = cg_known_multiple(c, e->bin.b);
    return a < b ? a : b;
  case TSL_E_MUL:
    a = cg_known_multiple(c, e->bin.a) * cg_known_multiple(c, e->bin.b);
    return a > MULTIPLE_CAP ? MULTIPLE_CAP : a;
  case TSL_E_CAST:
    return tsl_type_is_intlike(e->un.a->type) && e->un.a->type.bits <= e->type.bits
               ? cg_known_multiple(c, e->un.a) : 1;
  case TSL_E_BROADCAST: return cg_known_multiple(c, e->broadcast.value);
  case TSL_E_CALL:
    if (e->call.op == TSL_CALL_SHL && e->call.nargs == 2 && tsl_expr_is_const_int(e->call.args[1], &b) &&
        b >= 0 && b < 21) {
      a = cg_known_multiple(c, e->call.args[0]) << b;
      return a > MULTIPLE_CAP ? MULTIPLE_CAP : a;
    }
    return 1;
  default: return 1;
  }
}

tsl_status cg_index_i64(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  if (!tsl_type_is_intlike(e->type)) return cg_fail(c, "index is not an integer");
  LLVMValueRef v;
  CG_TRY(cg_expr(c, e, &v));
  if (e->type.bits < 64) {
    LLVMTypeRef t = e->type.lanes > 1 ? LLVMVectorType(c->t_i64, e->type.lanes) : c->t_i64;
    v = tsl_type_is_int(e->type) ? LLVMBuildSExt(c->b, v, t, "") : LLVMBuildZExt(c->b, v, t, "");
  }
  *out = v;
  return TSL_OK;
}

/* ---- arithmetic ---- */

/* Floor division / modulo of signed integers (ir.h contract), see llvm.h. */
static tsl_status floor_divmod(cg *c, const tsl_expr *e, LLVMValueRef a, LLVMValueRef b, bool is_mod,
                               LLVMValueRef *out) {
  LLVMTypeRef t = LLVMTypeOf(a);
  int64_t d = 0;
  bool is_const = const_int_operand(e->bin.b, &d);
  if (is_const && d > 0 && (d & (d - 1)) == 0) {
    int k = __builtin_ctzll((unsigned long long)d);
    *out = is_mod ? LLVMBuildAnd(c->b, a, const_int(t, d - 1), "fmod")
                  : LLVMBuildAShr(c->b, a, const_int(t, k), "fdiv");
    return TSL_OK;
  }
  if (is_const && d == -1) {
    *out = is_mod ? const_int(t, 0) : LLVMBuildSub(c->b, const_int(t, 0), a, "fdiv");
    return TSL_OK;
  }
  LLVMValueRef zero = const_int(t, 0);
  LLVMValueRef minus_one = NULL, is_zero = NULL, safe_b = b;
  if (!is_const) {
    /* b == -1 avoids the INT_MIN / -1 trap; b == 0 gives 0 (ir.h contract) */
    minus_one = LLVMBuildICmp(c->b, LLVMIntEQ, b, const_int(t, -1), "");
    is_zero = LLVMBuildICmp(c->b, LLVMIntEQ, b, zero, "");
    safe_b = LLVMBuildSelect(c->b, LLVMBuildOr(c->b, minus_one, is_zero, ""), const_int(t, 1), b, "");
  }
  LLVMValueRef q = LLVMBuildSDiv(c->b, a, safe_b, "");
  LLVMValueRef r = LLVMBuildSRem(c->b, a, safe_b, "");
  LLVMValueRef adj;
  if (is_const && d > 0) {
    adj = LLVMBuildICmp(c->b, LLVMIntSLT, r, zero, "");
  } else {
    LLVMValueRef nonzero = LLVMBuildICmp(c->b, LLVMIntNE, r, zero, "");
    LLVMValueRef signs_differ = LLVMBuildICmp(c->b, LLVMIntSLT, LLVMBuildXor(c->b, r, b, ""), zero, "");
    adj = LLVMBuildAnd(c->b, nonzero, signs_differ, "");
  }
  if (is_mod) {
    *out = LLVMBuildAdd(c->b, r, LLVMBuildSelect(c->b, adj, b, zero, ""), "fmod");
  } else {
    LLVMValueRef fq = LLVMBuildAdd(c->b, q, LLVMBuildSExt(c->b, adj, t, ""), "");
    *out = minus_one ? LLVMBuildSelect(c->b, minus_one, LLVMBuildSub(c->b, zero, a, ""), fq, "fdiv") : fq;
  }
  if (is_zero) *out = LLVMBuildSelect(c->b, is_zero, zero, *out, "");
  return TSL_OK;
}

/* The x86 max/min intrinsic (maxps/minps, maxpd/minpd: b where either is NaN, b where
 * both are zero) for a's vector type on target c, or NULL: 4, 8 and 16 f32 lanes, 2, 4
 * and 8 f64 lanes, at the widths the target's features give (AVX for 256 bits,
 * AVX-512F for 512). */
static const char *x86_min_max_intrinsic(const cg *c, bool is_max, LLVMTypeRef t) {
  if (!c->target || !c->backend || c->backend->arch != TSL_ARCH_X86_64) return NULL;
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return NULL;
  LLVMTypeKind ek = LLVMGetTypeKind(LLVMGetElementType(t));
  if (ek != LLVMFloatTypeKind && ek != LLVMDoubleTypeKind) return NULL;
  bool f64 = ek == LLVMDoubleTypeKind;
  unsigned bits = LLVMGetVectorSize(t) * (f64 ? 64u : 32u);
  if (bits == 128) {
    if (f64) return is_max ? "llvm.x86.sse2.max.pd" : "llvm.x86.sse2.min.pd";
    return is_max ? "llvm.x86.sse.max.ps" : "llvm.x86.sse.min.ps";
  }
  if (bits == 256 && tsl_target_has_feature(c->target, "avx")) {
    if (f64) return is_max ? "llvm.x86.avx.max.pd.256" : "llvm.x86.avx.min.pd.256";
    return is_max ? "llvm.x86.avx.max.ps.256" : "llvm.x86.avx.min.ps.256";
  }
  if (bits == 512 && tsl_target_has_feature(c->target, "avx512f")) {
    if (f64) return is_max ? "llvm.x86.avx512.max.pd.512" : "llvm.x86.avx512.min.pd.512";
    return is_max ? "llvm.x86.avx512.max.ps.512" : "llvm.x86.avx512.min.ps.512";
  }
  return NULL;
}

/* Whether v is a float constant (scalar or vector) with no NaN element. */
static bool constant_without_nan(LLVMValueRef v) {
  if (!LLVMIsConstant(v)) return false;
  LLVMTypeRef t = LLVMTypeOf(v);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  unsigned n = vec ? LLVMGetVectorSize(t) : 1;
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef e = vec ? LLVMGetAggregateElement(v, i) : v;
    LLVMBool lost;
    if (!e || !LLVMIsAConstantFP(e)) return false;
    double d = LLVMConstRealGetDouble(e, &lost);
    if (d != d) return false;
  }
  return true;
}

/* Float max (or min) of a and b, NaN-propagating (ir.h; the sign of a zero result is
 * unspecified, as with C's fmax). Where both are NaN the result is b's NaN on every path
 * below, so a vector body and its scalar tail agree bit for bit.
 *
 * On x86 at a native vector width: m = maxps(b, a), whose result is its second operand
 * a where either is NaN, so a's NaN propagates; then a select of b where b is NaN. The
 * select stays apart from the max because the max is the target's intrinsic: written as
 * a compare and two selects, LLVM merges the selects into one select on an or of two
 * compares (a compare of a, an unordered compare, an or of masks, a blend). In a
 * reduction acc = max(acc, x) (a = acc, as reductions write it) the chain through acc is
 * then one max and one blend; the compare of x is off it. A max-pool step of 9 taps
 * (squeezenet1_1's 3x3 pools, AVX-512) spent about 5 cycles per tap in the merged form.
 * A constant a with no NaN needs no select: maxps(a, b) is b where b is NaN (a ReLU's
 * max(x, 0) is one maxps).
 *
 * Elsewhere (other widths, scalars, other architectures): a compare and select of b
 * where b > a (b < a for min), else a, then a select of b where b is NaN; a NaN-free
 * constant goes to a, where the NaN select is left out: select(a > b, a, b), which x86
 * matches as one maxps (b where either is NaN). llvm.maximum, which also orders -0 below
 * +0, expands to 5 instructions on AVX-512 (a sign test to a mask register, two blends,
 * an unordered compare, the max): a max-pool's chain of 9 maxima ran 1.6x slower
 * vectorized than scalar with it. */
static tsl_status float_min_max(cg *c, bool is_max, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *out) {
  if (LLVMIsConstant(b) && !LLVMIsConstant(a)) {
    LLVMValueRef t = a;
    a = b;
    b = t;
  }
  LLVMRealPredicate gt = is_max ? LLVMRealOGT : LLVMRealOLT;
  const char *x86 = x86_min_max_intrinsic(c, is_max, LLVMTypeOf(a));
  /* the 512-bit forms take a rounding mode: 4, the current one */
  int nargs = x86 && strstr(x86, ".512") ? 3 : 2;
  LLVMValueRef mode = LLVMConstInt(c->t_i32, 4, 0);
  if (constant_without_nan(a)) {
    if (!x86) {
      *out = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, gt, a, b, ""), a, b, "");
      return TSL_OK;
    }
    LLVMValueRef args[3] = {a, b, mode};
    return cg_intrinsic(c, x86, NULL, 0, args, nargs, out);
  }
  LLVMValueRef m;
  if (x86) {
    LLVMValueRef args[3] = {b, a, mode};
    CG_TRY(cg_intrinsic(c, x86, NULL, 0, args, nargs, &m));
  } else {
    m = LLVMBuildSelect(c->b, LLVMBuildFCmp(c->b, gt, b, a, ""), b, a, "");
  }
  LLVMValueRef b_nan = LLVMBuildFCmp(c->b, LLVMRealUNO, b, b, "");
  *out = LLVMBuildSelect(c->b, b_nan, b, m, "");
  return TSL_OK;
}

static tsl_status emit_arith(cg *c, const tsl_expr *e, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *out) {
  tsl_type t = e->type;
  bool fl = tsl_type_is_float(t), is_signed = tsl_type_is_int(t);
  if (fl && t.bits == 16) return cg_fail(c, "%s on f16 (a storage type; cast to f32)", tsl_expr_kind_name(e->kind));
  int64_t d;
  switch (e->kind) {
  case TSL_E_ADD: *out = fl ? LLVMBuildFAdd(c->b, a, b, "") : LLVMBuildAdd(c->b, a, b, ""); return TSL_OK;
  case TSL_E_SUB: *out = fl ? LLVMBuildFSub(c->b, a, b, "") : LLVMBuildSub(c->b, a, b, ""); return TSL_OK;
  case TSL_E_MUL: *out = fl ? LLVMBuildFMul(c->b, a, b, "") : LLVMBuildMul(c->b, a, b, ""); return TSL_OK;
  case TSL_E_DIV:
  case TSL_E_MOD: {
    bool is_mod = e->kind == TSL_E_MOD;
    if (fl) {
      if (is_mod) return cg_fail(c, "mod on floats");
      *out = LLVMBuildFDiv(c->b, a, b, "");
      return TSL_OK;
    }
    if (const_int_operand(e->bin.b, &d) && d == 0)
      return cg_fail(c, "%s by the constant 0", is_mod ? "modulo" : "division");
    if (is_signed) return floor_divmod(c, e, a, b, is_mod, out);
    if (const_int_operand(e->bin.b, &d)) {
      *out = is_mod ? LLVMBuildURem(c->b, a, b, "") : LLVMBuildUDiv(c->b, a, b, "");
      return TSL_OK;
    }
    /* a variable divisor may be 0 at run time: the result is then 0 (ir.h contract) */
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(b));
    LLVMValueRef is_zero = LLVMBuildICmp(c->b, LLVMIntEQ, b, zero, "");
    LLVMValueRef safe_b = LLVMBuildSelect(c->b, is_zero, const_int(LLVMTypeOf(b), 1), b, "");
    LLVMValueRef r = is_mod ? LLVMBuildURem(c->b, a, safe_b, "") : LLVMBuildUDiv(c->b, a, safe_b, "");
    *out = LLVMBuildSelect(c->b, is_zero, zero, r, "");
    return TSL_OK;
  }
  case TSL_E_MIN:
    if (fl) return float_min_max(c, false, a, b, out);
    return intrinsic2(c, is_signed ? "llvm.smin" : "llvm.umin", a, b, out);
  case TSL_E_MAX:
    if (fl) return float_min_max(c, true, a, b, out);
    return intrinsic2(c, is_signed ? "llvm.smax" : "llvm.umax", a, b, out);
  default: return cg_fail(c, "not an arithmetic node: %s", tsl_expr_kind_name(e->kind));
  }
}

static tsl_status emit_compare(cg *c, const tsl_expr *e, LLVMValueRef a, LLVMValueRef b, LLVMValueRef *out) {
  tsl_type t = e->bin.a->type;
  if (tsl_type_is_float(t)) {
    LLVMRealPredicate p;
    switch (e->kind) {
    case TSL_E_EQ: p = LLVMRealOEQ; break;
    case TSL_E_NE: p = LLVMRealUNE; break; /* NaN != x is true: NE == !EQ */
    case TSL_E_LT: p = LLVMRealOLT; break;
    case TSL_E_LE: p = LLVMRealOLE; break;
    case TSL_E_GT: p = LLVMRealOGT; break;
    default: p = LLVMRealOGE; break;
    }
    *out = LLVMBuildFCmp(c->b, p, a, b, "");
    return TSL_OK;
  }
  bool s = tsl_type_is_int(t);
  LLVMIntPredicate p;
  switch (e->kind) {
  case TSL_E_EQ: p = LLVMIntEQ; break;
  case TSL_E_NE: p = LLVMIntNE; break;
  case TSL_E_LT: p = s ? LLVMIntSLT : LLVMIntULT; break;
  case TSL_E_LE: p = s ? LLVMIntSLE : LLVMIntULE; break;
  case TSL_E_GT: p = s ? LLVMIntSGT : LLVMIntUGT; break;
  default: p = s ? LLVMIntSGE : LLVMIntUGE; break;
  }
  *out = LLVMBuildICmp(c->b, p, a, b, "");
  return TSL_OK;
}

static tsl_status emit_cast(cg *c, tsl_type to, tsl_type from, LLVMValueRef v, LLVMValueRef *out) {
  char x[32], y[32];
  LLVMTypeRef dst;
  CG_TRY(cg_type(c, to, &dst));
  if (tsl_type_eq(to, from)) {
    *out = v;
    return TSL_OK;
  }
  LLVMBuilderRef b = c->b;
  bool to_int = tsl_type_is_intlike(to), from_int = tsl_type_is_intlike(from);
  if (tsl_type_is_bool(to)) {
    if (from_int) *out = LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    else if (tsl_type_is_float(from)) *out = LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    else if (from.code == TSL_TYPE_HANDLE) *out = LLVMBuildIsNotNull(b, v, "");
    else goto unsupported;
    return TSL_OK;
  }
  if (tsl_type_is_bool(from)) {
    if (to_int) *out = LLVMBuildZExt(b, v, dst, "");
    else if (tsl_type_is_float(to)) *out = LLVMBuildUIToFP(b, v, dst, "");
    else goto unsupported;
    return TSL_OK;
  }
  if (to_int && from_int) {
    if (to.bits > from.bits)
      *out = tsl_type_is_int(from) ? LLVMBuildSExt(b, v, dst, "") : LLVMBuildZExt(b, v, dst, "");
    else if (to.bits < from.bits) *out = LLVMBuildTrunc(b, v, dst, "");
    else *out = v;
    return TSL_OK;
  }
  if (tsl_type_is_float(to) && from_int) {
    *out = tsl_type_is_int(from) ? LLVMBuildSIToFP(b, v, dst, "") : LLVMBuildUIToFP(b, v, dst, "");
    return TSL_OK;
  }
  if (to_int && tsl_type_is_float(from)) {
    LLVMTypeRef ov[2] = {dst, LLVMTypeOf(v)};
    return cg_intrinsic(c, tsl_type_is_int(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ov, 2, &v, 1, out);
  }
  if (tsl_type_is_float(to) && tsl_type_is_float(from)) {
    *out = to.bits > from.bits ? LLVMBuildFPExt(b, v, dst, "") : LLVMBuildFPTrunc(b, v, dst, "");
    return TSL_OK;
  }
  if (to.code == TSL_TYPE_HANDLE && from_int && from.bits == 64) {
    *out = LLVMBuildIntToPtr(b, v, dst, "");
    return TSL_OK;
  }
  if (from.code == TSL_TYPE_HANDLE && to_int && to.bits == 64) {
    *out = LLVMBuildPtrToInt(b, v, dst, "");
    return TSL_OK;
  }
unsupported:
  return cg_fail(c, "cast from %s to %s", tsl_type_str(from, x, sizeof x), tsl_type_str(to, y, sizeof y));
}

static tsl_status emit_ramp(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  LLVMValueRef base, stride;
  CG_TRY(cg_expr(c, e->ramp.base, &base));
  int n = e->ramp.lanes;
  LLVMTypeRef et = LLVMTypeOf(base);
  LLVMValueRef lanes[n];
  int64_t s;
  bool cs = tsl_expr_is_const_int(e->ramp.stride, &s);
  for (int i = 0; i < n; i++) lanes[i] = LLVMConstInt(et, (unsigned long long)(cs ? s * i : i), 0);
  LLVMValueRef offsets = LLVMConstVector(lanes, (unsigned)n);
  if (!cs) {
    CG_TRY(cg_expr(c, e->ramp.stride, &stride));
    offsets = LLVMBuildMul(c->b, cg_splat(c, stride, n), offsets, "");
  }
  *out = LLVMBuildAdd(c->b, cg_splat(c, base, n), offsets, "ramp");
  return TSL_OK;
}

/* ---- intrinsics ---- */

static const int call_arity[TSL_CALL_COUNT_] = {
    [TSL_CALL_FMA] = 3,       [TSL_CALL_POPCOUNT] = 1,  [TSL_CALL_SHL] = 2,         [TSL_CALL_SHR] = 2,
    [TSL_CALL_BIT_AND] = 2,   [TSL_CALL_BIT_OR] = 2,    [TSL_CALL_BIT_XOR] = 2,     [TSL_CALL_BIT_NOT] = 1,
    [TSL_CALL_ABS] = 1,       [TSL_CALL_EXP] = 1,       [TSL_CALL_LOG] = 1,         [TSL_CALL_SQRT] = 1,
    [TSL_CALL_TANH] = 1,      [TSL_CALL_ERF] = 1,       [TSL_CALL_FLOOR] = 1,     [TSL_CALL_CEIL] = 1,        [TSL_CALL_ROUND] = 1,
    [TSL_CALL_POW] = 2,       [TSL_CALL_ISNAN] = 1,     [TSL_CALL_REDUCE_ADD] = 1,  [TSL_CALL_REDUCE_MAX] = 1,
    [TSL_CALL_REDUCE_MIN] = 1, [TSL_CALL_PREFETCH] = 1, [TSL_CALL_LIKELY] = 1,
};

/* Checks an intrinsic's operand types (ir.h's tsl_call does not). */
static tsl_status check_call(cg *c, const tsl_expr *e) {
  tsl_intrinsic op = e->call.op;
  const char *name = tsl_intrinsic_name(op);
  char x[32], y[32];
  if ((int)op < 0 || op >= TSL_CALL_COUNT_) return cg_fail(c, "unknown intrinsic %d", (int)op);
  if (e->call.nargs != call_arity[op])
    return cg_fail(c, "%s takes %d arguments, got %d", name, call_arity[op], e->call.nargs);
  tsl_type t = e->type, a = e->call.args[0]->type;
  switch (op) {
  case TSL_CALL_PREFETCH:
    if (e->call.args[0]->kind != TSL_E_LOAD) return cg_fail(c, "prefetch argument must be a load");
    return TSL_OK;
  case TSL_CALL_ISNAN:
    if (!tsl_type_is_float(a) || !tsl_type_is_bool(t) || t.lanes != a.lanes)
      return cg_fail(c, "isnan needs a float argument and a bool result of its lanes");
    return TSL_OK;
  case TSL_CALL_REDUCE_ADD:
  case TSL_CALL_REDUCE_MAX:
  case TSL_CALL_REDUCE_MIN:
    if (!tsl_type_eq(t, tsl_type_element(a)) || tsl_type_is_bool(a) || a.code == TSL_TYPE_HANDLE ||
        (tsl_type_is_float(a) && a.bits == 16))
      return cg_fail(c, "%s of %s must give its element type, got %s", name, tsl_type_str(a, x, sizeof x),
                     tsl_type_str(t, y, sizeof y));
    return TSL_OK;
  case TSL_CALL_SHL:
  case TSL_CALL_SHR: {
    tsl_type bt = e->call.args[1]->type;
    if (!tsl_type_is_intlike(t) || !tsl_type_eq(a, t) || !tsl_type_is_intlike(bt) ||
        (bt.lanes != 1 && bt.lanes != t.lanes))
      return cg_fail(c, "%s needs integer operands", name);
    return TSL_OK;
  }
  default: break;
  }
  for (int i = 0; i < e->call.nargs; i++)
    if (!tsl_type_eq(e->call.args[i]->type, t))
      return cg_fail(c, "%s argument %d has type %s, result %s", name, i,
                     tsl_type_str(e->call.args[i]->type, x, sizeof x), tsl_type_str(t, y, sizeof y));
  bool ok;
  switch (op) {
  case TSL_CALL_POPCOUNT: ok = tsl_type_is_intlike(t); break;
  case TSL_CALL_BIT_AND:
  case TSL_CALL_BIT_OR:
  case TSL_CALL_BIT_XOR:
  case TSL_CALL_BIT_NOT: ok = tsl_type_is_intlike(t) || tsl_type_is_bool(t); break;
  case TSL_CALL_ABS: ok = tsl_type_is_intlike(t) || (tsl_type_is_float(t) && t.bits != 16); break;
  case TSL_CALL_LIKELY: ok = true; break;
  default: ok = tsl_type_is_float(t) && t.bits != 16; break; /* fma and math functions */
  }
  if (!ok) return cg_fail(c, "%s on %s", name, tsl_type_str(t, x, sizeof x));
  return TSL_OK;
}

static tsl_status emit_reduce(cg *c, const tsl_expr *e, LLVMValueRef v, LLVMValueRef *out) {
  tsl_type a = e->call.args[0]->type;
  if (a.lanes == 1) {
    *out = v;
    return TSL_OK;
  }
  LLVMTypeRef vt = LLVMTypeOf(v);
  bool fl = tsl_type_is_float(a), s = tsl_type_is_int(a);
  switch (e->call.op) {
  case TSL_CALL_REDUCE_ADD:
    if (fl) {
      /* No reassoc flag: the reduction is ordered (lane 0 first), like the scalar
       * loop. -0.0 is the identity of fadd, so the start value adds nothing. */
      LLVMValueRef args[2] = {LLVMConstReal(LLVMGetElementType(vt), -0.0), v};
      return cg_intrinsic(c, "llvm.vector.reduce.fadd", &vt, 1, args, 2, out);
    }
    return cg_intrinsic(c, "llvm.vector.reduce.add", &vt, 1, &v, 1, out);
  case TSL_CALL_REDUCE_MAX:
    return cg_intrinsic(c, fl ? "llvm.vector.reduce.fmaximum" : s ? "llvm.vector.reduce.smax" : "llvm.vector.reduce.umax",
                        &vt, 1, &v, 1, out);
  default:
    return cg_intrinsic(c, fl ? "llvm.vector.reduce.fminimum" : s ? "llvm.vector.reduce.smin" : "llvm.vector.reduce.umin",
                        &vt, 1, &v, 1, out);
  }
}

static tsl_status emit_call(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  CG_TRY(check_call(c, e));
  tsl_intrinsic op = e->call.op;
  if (op == TSL_CALL_PREFETCH) {
    LLVMValueRef addr;
    CG_TRY(cg_load_address(c, e->call.args[0], &addr));
    LLVMValueRef args[4] = {addr, LLVMConstInt(c->t_i32, 0, 0), LLVMConstInt(c->t_i32, 3, 0),
                            LLVMConstInt(c->t_i32, 1, 0)};
    LLVMValueRef call;
    LLVMTypeRef pt = c->t_ptr;
    CG_TRY(cg_intrinsic(c, "llvm.prefetch", &pt, 1, args, 4, &call));
    LLVMTypeRef rt;
    CG_TRY(cg_type(c, e->type, &rt));
    *out = LLVMConstNull(rt);
    return TSL_OK;
  }
  LLVMValueRef a[3];
  for (int i = 0; i < e->call.nargs; i++) CG_TRY(cg_expr(c, e->call.args[i], &a[i]));
  tsl_type t = e->type;
  LLVMBuilderRef b = c->b;
  switch (op) {
  case TSL_CALL_FMA: {
    LLVMTypeRef ty = LLVMTypeOf(a[0]);
    return cg_intrinsic(c, "llvm.fma", &ty, 1, a, 3, out);
  }
  case TSL_CALL_POPCOUNT: return intrinsic1(c, "llvm.ctpop", a[0], out);
  case TSL_CALL_SHL:
  case TSL_CALL_SHR: {
    /* The amount is clamped to [0, bits - 1] first (ir.h): an LLVM shift by bits or more
     * is poison, which targets turn into different values. Then it takes the value's
     * type and lanes. */
    tsl_type bt = e->call.args[1]->type;
    LLVMValueRef amount = a[1];
    int64_t k;
    if (!(tsl_expr_is_const_int(e->call.args[1], &k) && k >= 0 && k < t.bits)) {
      LLVMTypeRef at = LLVMTypeOf(amount);
      LLVMValueRef hi = const_int(at, (int64_t)t.bits - 1); /* <= 63 fits every integer amount type */
      if (tsl_type_is_int(bt)) {
        CG_TRY(intrinsic2(c, "llvm.smin", amount, hi, &amount));
        CG_TRY(intrinsic2(c, "llvm.smax", amount, LLVMConstNull(at), &amount));
      } else {
        CG_TRY(intrinsic2(c, "llvm.umin", amount, hi, &amount));
      }
    }
    tsl_type want = tsl_type_with_lanes(t, bt.lanes);
    if (!tsl_type_eq(bt, want)) CG_TRY(emit_cast(c, want, bt, amount, &amount));
    if (bt.lanes != t.lanes) amount = cg_splat(c, amount, t.lanes);
    if (op == TSL_CALL_SHL) *out = LLVMBuildShl(b, a[0], amount, "");
    else *out = tsl_type_is_int(t) ? LLVMBuildAShr(b, a[0], amount, "") : LLVMBuildLShr(b, a[0], amount, "");
    return TSL_OK;
  }
  case TSL_CALL_BIT_AND: *out = LLVMBuildAnd(b, a[0], a[1], ""); return TSL_OK;
  case TSL_CALL_BIT_OR: *out = LLVMBuildOr(b, a[0], a[1], ""); return TSL_OK;
  case TSL_CALL_BIT_XOR: *out = LLVMBuildXor(b, a[0], a[1], ""); return TSL_OK;
  case TSL_CALL_BIT_NOT: *out = LLVMBuildNot(b, a[0], ""); return TSL_OK;
  case TSL_CALL_ABS: {
    if (tsl_type_is_float(t)) return intrinsic1(c, "llvm.fabs", a[0], out);
    if (tsl_type_is_uint(t)) {
      *out = a[0];
      return TSL_OK;
    }
    /* is_int_min_poison = false: abs(INT_MIN) wraps to INT_MIN (ir.h). */
    LLVMTypeRef ty = LLVMTypeOf(a[0]);
    LLVMValueRef args[2] = {a[0], LLVMConstInt(c->t_i1, 0, 0)};
    return cg_intrinsic(c, "llvm.abs", &ty, 1, args, 2, out);
  }
  /* f32: straight-line IR that vectorizes (llvm_math.h); f64 through LLVM's intrinsics */
  case TSL_CALL_EXP:
    if (t.code == TSL_TYPE_FLOAT && t.bits == 32) return cg_math_exp_f32(c, a[0], t.lanes, out);
    return intrinsic1(c, "llvm.exp", a[0], out);
  case TSL_CALL_LOG:
    if (t.code == TSL_TYPE_FLOAT && t.bits == 32) return cg_math_log_f32(c, a[0], t.lanes, out);
    return intrinsic1(c, "llvm.log", a[0], out);
  case TSL_CALL_SQRT: return intrinsic1(c, "llvm.sqrt", a[0], out);
  case TSL_CALL_TANH:
    if (t.code == TSL_TYPE_FLOAT && t.bits == 32) return cg_math_tanh_f32(c, a[0], t.lanes, out);
    return intrinsic1(c, "llvm.tanh", a[0], out);
  case TSL_CALL_ERF: return cg_math_erf(c, a[0], t, out);
  case TSL_CALL_FLOOR: return intrinsic1(c, "llvm.floor", a[0], out);
  case TSL_CALL_CEIL: return intrinsic1(c, "llvm.ceil", a[0], out);
  case TSL_CALL_ROUND: return intrinsic1(c, "llvm.roundeven", a[0], out);
  case TSL_CALL_POW: return intrinsic2(c, "llvm.pow", a[0], a[1], out);
  case TSL_CALL_ISNAN: *out = LLVMBuildFCmp(b, LLVMRealUNO, a[0], a[0], "isnan"); return TSL_OK;
  case TSL_CALL_REDUCE_ADD:
  case TSL_CALL_REDUCE_MAX:
  case TSL_CALL_REDUCE_MIN: return emit_reduce(c, e, a[0], out);
  case TSL_CALL_LIKELY: *out = a[0]; return TSL_OK;
  default: return cg_fail(c, "intrinsic %s has no lowering", tsl_intrinsic_name(op));
  }
}

/* ---- the dispatcher ---- */

/* The f32/f64 multiply an add or subtract operand computes: the operand itself, or the
 * scalar product a broadcast repeats (the vectorizer and the simplifier hoist a product
 * that is the same in every lane into broadcast(x*y); the scalar loop has x*y inline,
 * and both must round alike). NULL for anything else. */
static const tsl_expr *float_mul_of(const tsl_expr *e) {
  if (e->kind == TSL_E_BROADCAST) e = e->broadcast.value;
  return e->kind == TSL_E_MUL && tsl_type_is_float(e->type) && e->type.bits != 16 ? e : NULL;
}
/* An add or subtract with such a multiply as an operand (llvm.h: contraction). */
static bool contracts(const tsl_expr *e) {
  return (e->kind == TSL_E_ADD || e->kind == TSL_E_SUB) && (float_mul_of(e->bin.a) || float_mul_of(e->bin.b));
}
/* x*y + z, z + x*y, x*y - z and z - x*y as llvm.fmuladd(x, y, z), (x, y, -z) and
 * (-x, y, z): one rounding where the target has FMA, as C's #pragma STDC FP_CONTRACT ON
 * (clang's default) does within one expression. When both operands are multiplies
 * the first is fused. A broadcast product's factors are splat to the add's lanes. */
static tsl_status emit_mul_add(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  bool mul_first = float_mul_of(e->bin.a) != NULL;
  const tsl_expr *operand = mul_first ? e->bin.a : e->bin.b, *addend = mul_first ? e->bin.b : e->bin.a;
  const tsl_expr *mul = float_mul_of(operand);
  LLVMValueRef args[3];
  CG_TRY(cg_expr(c, mul->bin.a, &args[0]));
  CG_TRY(cg_expr(c, mul->bin.b, &args[1]));
  if (operand->kind == TSL_E_BROADCAST) {
    args[0] = cg_splat(c, args[0], operand->broadcast.lanes);
    args[1] = cg_splat(c, args[1], operand->broadcast.lanes);
  }
  CG_TRY(cg_expr(c, addend, &args[2]));
  if (e->kind == TSL_E_SUB) {
    int negated = mul_first ? 2 : 0; /* x*y - z: -z; z - x*y: -x */
    args[negated] = LLVMBuildFNeg(c->b, args[negated], "");
  }
  LLVMTypeRef ty = LLVMTypeOf(args[2]);
  return cg_intrinsic(c, "llvm.fmuladd", &ty, 1, args, 3, out);
}

tsl_status cg_expr(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  LLVMValueRef a, b2, x;
  LLVMTypeRef t;
  switch (e->kind) {
  case TSL_E_INT:
    CG_TRY(cg_type(c, tsl_type_element(e->type), &t));
    *out = cg_splat(c, LLVMConstInt(t, (unsigned long long)e->int_value, 0), e->type.lanes);
    return TSL_OK;
  case TSL_E_FLOAT:
    CG_TRY(cg_type(c, tsl_type_element(e->type), &t));
    *out = cg_splat(c, LLVMConstReal(t, e->float_value), e->type.lanes);
    return TSL_OK;
  case TSL_E_VAR: {
    const cg_var *v;
    CG_TRY(cg_lookup_var(c, e, &v));
    *out = v->value;
    return TSL_OK;
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN:
  case TSL_E_MAX:
    if (contracts(e)) return emit_mul_add(c, e, out);
    CG_TRY(cg_expr(c, e->bin.a, &a));
    CG_TRY(cg_expr(c, e->bin.b, &b2));
    return emit_arith(c, e, a, b2, out);
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
    CG_TRY(cg_expr(c, e->bin.a, &a));
    CG_TRY(cg_expr(c, e->bin.b, &b2));
    return emit_compare(c, e, a, b2, out);
  case TSL_E_AND:
  case TSL_E_OR:
    CG_TRY(cg_expr(c, e->bin.a, &a));
    CG_TRY(cg_expr(c, e->bin.b, &b2));
    *out = e->kind == TSL_E_AND ? LLVMBuildAnd(c->b, a, b2, "") : LLVMBuildOr(c->b, a, b2, "");
    return TSL_OK;
  case TSL_E_NOT:
    CG_TRY(cg_expr(c, e->un.a, &a));
    *out = LLVMBuildNot(c->b, a, "");
    return TSL_OK;
  case TSL_E_SELECT:
    /* Both branches are evaluated (ir.h); a scalar condition selects whole vectors. */
    CG_TRY(cg_expr(c, e->select.cond, &x));
    CG_TRY(cg_expr(c, e->select.t, &a));
    CG_TRY(cg_expr(c, e->select.f, &b2));
    *out = LLVMBuildSelect(c->b, x, a, b2, "");
    return TSL_OK;
  case TSL_E_CAST:
    CG_TRY(cg_expr(c, e->un.a, &a));
    return emit_cast(c, e->type, e->un.a->type, a, out);
  case TSL_E_BROADCAST:
    CG_TRY(cg_expr(c, e->broadcast.value, &a));
    *out = cg_splat(c, a, e->broadcast.lanes);
    return TSL_OK;
  case TSL_E_RAMP: return emit_ramp(c, e, out);
  case TSL_E_LOAD: return cg_load(c, e, out);
  case TSL_E_CALL: return emit_call(c, e, out);
  case TSL_E_LET: {
    CG_TRY(cg_expr(c, e->let.value, &a));
    cg_push_var(c, e->let.var, a, cg_known_multiple(c, e->let.value));
    tsl_status st = cg_expr(c, e->let.body, out);
    cg_pop_vars(c, 1);
    return st;
  }
  case TSL_E_REDUCE: return cg_fail(c, "a reduce node reached codegen (TE only: lower it first)");
  }
  return cg_fail(c, "unknown expression kind %d", (int)e->kind);
}
