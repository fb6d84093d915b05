/* Loops that transpose (llvm_internal.h, cg_transpose_match): L iterations of a loop whose
 * vector lanes read L strided rows become L contiguous row loads, an L x L transpose by
 * shufflevector and L stores. */
#include <math.h>
#include <string.h>

#include "codegen/llvm_internal.h"
#include "ir/analysis.h"
#include "ir/passes/vectorize.h"

/* At most this many lanes (an L x L block in L registers of L lanes, and at most two
 * native vector registers per row): wider blocks spill. */
#define MAX_TRANSPOSE_LANES 16

/* Whether e is +0 on every lane (an int zero or a float +0.0, or a broadcast of one):
 * the bits of the zero rows the transpose stores for lanes that are off. */
static bool is_zero(const tsl_expr *e) {
  if (e->kind == TSL_E_BROADCAST) return is_zero(e->broadcast.value);
  if (e->kind == TSL_E_INT) return e->int_value == 0;
  return e->kind == TSL_E_FLOAT && e->float_value == 0.0 && !signbit(e->float_value);
}

/* Whether e reads no memory (constants, variables and arithmetic of those; any other
 * kind counts as a read): such an expression that does not use w has one value for the
 * whole loop, so evaluating it once per block (before the block's stores) is the same. */
static bool reads_no_memory(const tsl_expr *e) {
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return true;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN: case TSL_E_MAX:
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE: case TSL_E_AND:
  case TSL_E_OR:
    return reads_no_memory(e->bin.a) && reads_no_memory(e->bin.b);
  case TSL_E_NOT: case TSL_E_CAST: return reads_no_memory(e->un.a);
  case TSL_E_SELECT:
    return reads_no_memory(e->select.cond) && reads_no_memory(e->select.t) && reads_no_memory(e->select.f);
  case TSL_E_BROADCAST: return reads_no_memory(e->broadcast.value);
  case TSL_E_RAMP: return reads_no_memory(e->ramp.base) && reads_no_memory(e->ramp.stride);
  default: return false;
  }
}

/* The lanes of predicate e in m when they are constants (cg_lane_predicate), else all on
 * (m is written only on success: a failed match may leave partial lanes). */
static bool constant_lanes(const tsl_expr *e, int lanes, bool *m) {
  bool tmp[TSL_VECTORIZE_MAX_LANES];
  bool ok = cg_lane_predicate(e, lanes, tmp);
  for (int j = 0; j < lanes; j++) m[j] = ok ? tmp[j] : true;
  return ok;
}

/* The constant step of e from loop variable v to v + 1, when e's difference simplifies
 * to a constant (e affine in v); false otherwise. */
static bool step_of(const tsl_expr *e, const tsl_expr *v, int64_t *step) {
  tsl_expr *var = (tsl_expr *)v, *next = tsl_add(var, tsl_int(v->type, 1));
  tsl_expr *moved = tsl_substitute((tsl_expr *)e, 1, &var, &next);
  return tsl_expr_is_const_int(tsl_simplify(tsl_sub(moved, (tsl_expr *)e), NULL), step);
}

bool cg_transpose_match(const cg *c, const tsl_stmt *s, cg_transpose *t) {
  memset(t, 0, sizeof *t);
  if (s->kind != TSL_S_FOR) return false;
  int64_t extent;
  const tsl_stmt *st = s->loop.body;
  if (s->kind != TSL_S_FOR || s->loop.for_kind != TSL_FOR_SERIAL || !tsl_expr_is_const_int(s->loop.extent, &extent) ||
      st->kind != TSL_S_STORE || st->store.predicate || st->store.nindex != 1)
    return false;
  const tsl_expr *si = st->store.index[0], *v = st->store.value;
  int64_t one;
  int L = si->type.lanes;
  if (si->kind != TSL_E_RAMP || !tsl_expr_is_const_int(si->ramp.stride, &one) || one != 1 || L < 2 ||
      !reads_no_memory(si->ramp.base) ||
      L > MAX_TRANSPOSE_LANES || (L & (L - 1)) != 0 || extent < L || tsl_type_is_bool(st->store.buf->dtype) ||
      (int64_t)L * st->store.buf->dtype.bits > 2 * (int64_t)c->target->vector_bits)
    return false;
  bool sel[TSL_VECTORIZE_MAX_LANES], pred[TSL_VECTORIZE_MAX_LANES];
  for (int j = 0; j < L; j++) sel[j] = pred[j] = true;
  if (v->kind == TSL_E_SELECT) {
    /* lanes off the condition read 0: a layout transform's c < C, fixed per lane or
     * (the last channel block of several) the same for every iteration of the loop */
    const tsl_expr *cond = v->select.cond;
    if (cond->type.lanes != L || !is_zero(v->select.f)) return false;
    if (!constant_lanes(cond, L, sel)) {
      if (tsl_expr_uses_var(cond, s->loop.var) || !reads_no_memory(cond)) return false;
      t->cond = cond;
    }
    v = v->select.t;
  }
  if (v->kind != TSL_E_LOAD || v->load.nindex != 1 || v->load.buf == st->store.buf ||
      tsl_type_is_bool(v->load.buf->dtype) || v->load.buf->dtype.code != st->store.buf->dtype.code ||
      v->load.buf->dtype.bits != st->store.buf->dtype.bits)
    return false;
  const tsl_expr *li = v->load.index[0];
  int64_t stride, step;
  if (li->kind != TSL_E_RAMP || li->type.lanes != L || !tsl_expr_is_const_int(li->ramp.stride, &stride) ||
      stride == 1 || stride == 0)
    return false;
  const tsl_expr *lp = v->load.predicate;
  if (lp && (lp->type.lanes != L || !tsl_type_is_bool(lp->type))) return false;
  if (lp && !constant_lanes(lp, L, pred)) {
    if (tsl_expr_uses_var(lp, s->loop.var) || !reads_no_memory(lp)) return false;
    t->pred = lp;
  }
  /* lane c of iteration w + j reads row c at element j: the load's base steps by one */
  if (tsl_expr_uses_var(li->ramp.stride, s->loop.var) || !reads_no_memory(li->ramp.base) ||
      !step_of(li->ramp.base, s->loop.var, &step) || step != 1)
    return false;
  t->loop = s;
  t->store = st;
  t->load = v;
  t->lanes = L;
  t->stride = stride;
  t->extent = extent;
  for (int j = 0; j < L; j++) t->on[j] = sel[j] && pred[j];
  return true;
}

tsl_status cg_transpose_block(cg *c, const cg_transpose *t, LLVMValueRef w0) {
  int L = t->lanes;
  const tsl_buffer *src = t->load->load.buf, *dst = t->store->store.buf;
  const cg_buf *sb, *db;
  CG_TRY(cg_lookup_buf(c, src, &sb));
  CG_TRY(cg_lookup_buf(c, dst, &db));
  LLVMTypeRef elem;
  CG_TRY(cg_mem_type(c, src->dtype, &elem));
  LLVMTypeRef vt = LLVMVectorType(elem, (unsigned)L);
  unsigned align = (unsigned)tsl_type_bytes(tsl_type_element(src->dtype));
  /* the rows: lane c's reads of iterations w0 .. w0 + L - 1, contiguous */
  LLVMValueRef base;
  cg_push_var(c, t->loop->loop.var, w0, 1);
  tsl_status st = cg_index_i64(c, t->load->load.index[0]->ramp.base, &base);
  cg_pop_vars(c, 1);
  CG_TRY(st);
  /* lanes on or off at run time (the same for every iteration): a row is read whole or
   * not at all (a masked load of all or none of its elements) */
  LLVMValueRef mask = NULL, m;
  if (t->cond) {
    CG_TRY(cg_expr(c, t->cond, &mask));
  }
  if (t->pred) {
    CG_TRY(cg_expr(c, t->pred, &m));
    mask = mask ? LLVMBuildAnd(c->b, mask, m, "") : m;
  }
  LLVMValueRef rows[TSL_VECTORIZE_MAX_LANES];
  for (int r = 0; r < L; r++) {
    if (!t->on[r]) {
      rows[r] = LLVMConstNull(vt);
      continue;
    }
    LLVMValueRef off = LLVMBuildAdd(c->b, base, LLVMConstInt(c->t_i64, (unsigned long long)(t->stride * r), 1), "");
    if (!mask) {
      LLVMValueRef addr = LLVMBuildInBoundsGEP2(c->b, elem, sb->ptr, &off, 1, "");
      rows[r] = LLVMBuildLoad2(c->b, vt, addr, "");
      LLVMSetAlignment(rows[r], align);
      continue;
    }
    /* an off row's address may lie outside the buffer: no inbounds claim */
    LLVMValueRef addr = LLVMBuildGEP2(c->b, elem, sb->ptr, &off, 1, "");
    LLVMValueRef on = LLVMBuildExtractElement(c->b, mask, LLVMConstInt(c->t_i32, (unsigned long long)r, 0), "");
    LLVMTypeRef ov[2] = {vt, c->t_ptr};
    LLVMValueRef args[4] = {addr, LLVMConstInt(c->t_i32, align, 0), cg_splat(c, on, L), LLVMConstNull(vt)};
    CG_TRY(cg_intrinsic(c, "llvm.masked.load", ov, 2, args, 4, &rows[r]));
  }
  /* transpose: stages of half-width h = L/2 .. 1 pair rows i and i + h (i & h == 0);
   * row i takes the even h-blocks of both, row i + h the odd ones. After the last stage
   * row j holds element j of every input row. */
  for (int h = L / 2; h >= 1; h /= 2) {
    LLVMValueRef lo[TSL_VECTORIZE_MAX_LANES], hi[TSL_VECTORIZE_MAX_LANES];
    for (int p = 0; p < L; p++) {
      int q = p / (2 * h), off = p % (2 * h);
      lo[p] = LLVMConstInt(c->t_i32, (unsigned long long)(off < h ? 2 * q * h + off : L + 2 * q * h + off - h), 0);
      hi[p] = LLVMConstInt(c->t_i32, (unsigned long long)(off < h ? 2 * q * h + h + off : L + 2 * q * h + off), 0);
    }
    LLVMValueRef mlo = LLVMConstVector(lo, (unsigned)L), mhi = LLVMConstVector(hi, (unsigned)L);
    LLVMValueRef next[TSL_VECTORIZE_MAX_LANES];
    for (int i = 0; i < L; i++) {
      if (i & h) continue;
      next[i] = LLVMBuildShuffleVector(c->b, rows[i], rows[i + h], mlo, "");
      next[i + h] = LLVMBuildShuffleVector(c->b, rows[i], rows[i + h], mhi, "");
    }
    memcpy(rows, next, sizeof(LLVMValueRef) * (size_t)L);
  }
  /* the stores of iterations w0 + j, each where the loop would have stored it */
  unsigned salign = (unsigned)tsl_type_bytes(tsl_type_element(dst->dtype));
  for (int j = 0; j < L; j++) {
    LLVMValueRef w = LLVMBuildAdd(c->b, w0, LLVMConstInt(LLVMTypeOf(w0), (unsigned long long)j, 0), "");
    LLVMValueRef off;
    cg_push_var(c, t->loop->loop.var, w, 1);
    st = cg_index_i64(c, t->store->store.index[0]->ramp.base, &off);
    cg_pop_vars(c, 1);
    CG_TRY(st);
    LLVMValueRef addr = LLVMBuildInBoundsGEP2(c->b, elem, db->ptr, &off, 1, "");
    LLVMValueRef s = LLVMBuildStore(c->b, rows[j], addr);
    LLVMSetAlignment(s, salign);
  }
  return TSL_OK;
}
