/* Loads and stores: contiguous vectors, gathers/scatters, predication, alignment. */
#include "codegen/llvm_internal.h"

tsl_status cg_mem_type(const cg *c, tsl_type elem, LLVMTypeRef *out) {
  if (tsl_type_is_bool(elem)) {
    *out = c->t_i8;
    return TSL_OK;
  }
  return cg_type(c, tsl_type_element(elem), out);
}

typedef enum access_kind {
  ACC_SCALAR, /* one element */
  ACC_DENSE,  /* ramp of stride 1: one contiguous vector */
  ACC_SPLAT,  /* broadcast index, unpredicated load: one element, splatted */
  ACC_GATHER  /* any other vector index: a vector of addresses */
} access_kind;

typedef struct access {
  access_kind kind;
  LLVMTypeRef elem; /* element type in memory */
  int lanes;
  LLVMValueRef addr; /* pointer, or vector of pointers for ACC_GATHER */
  unsigned align;    /* bytes */
  LLVMValueRef mask; /* i1 / <lanes x i1> predicate, or NULL */
  bool is_bool;
} access;

static bool dense_ramp(const tsl_expr *idx) {
  int64_t s;
  return idx->kind == TSL_E_RAMP && tsl_expr_is_const_int(idx->ramp.stride, &s) && s == 1;
}

/* The buffer's alignment where the element offset is provably a multiple of it,
 * else the largest power of two the offset is known to be a multiple of (at least
 * one element). */
static unsigned access_align(const cg *c, const cg_buf *cb, const tsl_expr *offset, int64_t elem_bytes) {
  int64_t a = elem_bytes * cg_known_multiple(c, offset);
  if (a > cb->align) a = cb->align;
  if (a < elem_bytes) a = elem_bytes;
  return (unsigned)a;
}

static LLVMValueRef address(cg *c, const access *a, LLVMValueRef base, LLVMValueRef offset, bool predicated) {
  /* A masked-off lane may hold an out-of-bounds offset: no inbounds claim then. */
  return predicated ? LLVMBuildGEP2(c->b, a->elem, base, &offset, 1, "")
                    : LLVMBuildInBoundsGEP2(c->b, a->elem, base, &offset, 1, "");
}

static tsl_status prepare(cg *c, const char *what, const tsl_buffer *buf, int nindex, tsl_expr *const *index,
                          const tsl_expr *pred, bool allow_splat, access *a) {
  if (nindex != 1)
    return cg_fail(c, "%s %s with %d indices (storage flattening must leave one)", what, buf->name, nindex);
  const cg_buf *cb;
  CG_TRY(cg_lookup_buf(c, buf, &cb));
  CG_TRY(cg_mem_type(c, buf->dtype, &a->elem));
  a->is_bool = tsl_type_is_bool(buf->dtype);
  int64_t elem_bytes = (int64_t)tsl_type_bytes(tsl_type_element(buf->dtype));
  const tsl_expr *idx = index[0];
  a->lanes = idx->type.lanes;
  a->mask = NULL;
  bool predicated = pred != NULL;
  LLVMValueRef off;
  if (a->lanes == 1) {
    a->kind = ACC_SCALAR;
    CG_TRY(cg_index_i64(c, idx, &off));
    a->addr = address(c, a, cb->ptr, off, predicated);
    a->align = access_align(c, cb, idx, elem_bytes);
  } else if (dense_ramp(idx)) {
    a->kind = ACC_DENSE;
    CG_TRY(cg_index_i64(c, idx->ramp.base, &off));
    a->addr = address(c, a, cb->ptr, off, predicated);
    a->align = access_align(c, cb, idx->ramp.base, elem_bytes);
  } else if (allow_splat && !predicated && idx->kind == TSL_E_BROADCAST) {
    a->kind = ACC_SPLAT;
    CG_TRY(cg_index_i64(c, idx->broadcast.value, &off));
    a->addr = address(c, a, cb->ptr, off, false);
    a->align = access_align(c, cb, idx->broadcast.value, elem_bytes);
  } else {
    a->kind = ACC_GATHER;
    CG_TRY(cg_index_i64(c, idx, &off));
    a->addr = address(c, a, cb->ptr, off, predicated);
    a->align = (unsigned)elem_bytes;
  }
  if (pred) {
    if (!tsl_type_is_bool(pred->type) || pred->type.lanes != a->lanes)
      return cg_fail(c, "%s %s: predicate must be bool with %d lanes", what, buf->name, a->lanes);
    CG_TRY(cg_expr(c, pred, &a->mask));
  }
  return TSL_OK;
}

static LLVMValueRef all_true(cg *c, int lanes) { return LLVMConstAllOnes(LLVMVectorType(c->t_i1, (unsigned)lanes)); }

tsl_status cg_load(cg *c, const tsl_expr *e, LLVMValueRef *out) {
  if (e->type.lanes > 1 && e->load.nindex == 1 && !dense_ramp(e->load.index[0])) {
    CG_TRY(cg_load_lane_windows(c, e, out));
    if (*out) return TSL_OK;
  }
  access a;
  CG_TRY(prepare(c, "load from", e->load.buf, e->load.nindex, e->load.index, e->load.predicate, true, &a));
  LLVMTypeRef vt = a.lanes > 1 ? LLVMVectorType(a.elem, (unsigned)a.lanes) : a.elem;
  LLVMValueRef raw = NULL, align = LLVMConstInt(c->t_i32, a.align, 0);
  switch (a.kind) {
  case ACC_SCALAR:
    if (!a.mask) {
      raw = LLVMBuildLoad2(c->b, a.elem, a.addr, "");
      LLVMSetAlignment(raw, a.align);
    } else {
      /* A predicated scalar load is a branch around the load, reading 0 when off. */
      LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(c->b));
      LLVMBasicBlockRef from = LLVMGetInsertBlock(c->b);
      LLVMBasicBlockRef on = LLVMAppendBasicBlockInContext(c->ctx, fn, "pload");
      LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->ctx, fn, "pload.end");
      LLVMBuildCondBr(c->b, a.mask, on, join);
      LLVMPositionBuilderAtEnd(c->b, on);
      LLVMValueRef v = LLVMBuildLoad2(c->b, a.elem, a.addr, "");
      LLVMSetAlignment(v, a.align);
      LLVMBuildBr(c->b, join);
      LLVMPositionBuilderAtEnd(c->b, join);
      raw = LLVMBuildPhi(c->b, a.elem, "");
      LLVMValueRef vals[2] = {v, LLVMConstNull(a.elem)};
      LLVMBasicBlockRef blocks[2] = {on, from};
      LLVMAddIncoming(raw, vals, blocks, 2);
    }
    break;
  case ACC_SPLAT:
    raw = LLVMBuildLoad2(c->b, a.elem, a.addr, "");
    LLVMSetAlignment(raw, a.align);
    raw = cg_splat(c, raw, a.lanes);
    break;
  case ACC_DENSE:
    if (!a.mask) {
      raw = LLVMBuildLoad2(c->b, vt, a.addr, "");
      LLVMSetAlignment(raw, a.align);
    } else {
      LLVMTypeRef ov[2] = {vt, c->t_ptr};
      LLVMValueRef args[4] = {a.addr, align, a.mask, LLVMConstNull(vt)};
      CG_TRY(cg_intrinsic(c, "llvm.masked.load", ov, 2, args, 4, &raw));
    }
    break;
  case ACC_GATHER: {
    LLVMTypeRef ov[2] = {vt, LLVMTypeOf(a.addr)};
    LLVMValueRef args[4] = {a.addr, align, a.mask ? a.mask : all_true(c, a.lanes), LLVMConstNull(vt)};
    CG_TRY(cg_intrinsic(c, "llvm.masked.gather", ov, 2, args, 4, &raw));
    break;
  }
  }
  if (a.is_bool) raw = LLVMBuildICmp(c->b, LLVMIntNE, raw, LLVMConstNull(LLVMTypeOf(raw)), "");
  *out = raw;
  return TSL_OK;
}

tsl_status cg_store(cg *c, const tsl_stmt *s) {
  access a;
  CG_TRY(prepare(c, "store to", s->store.buf, s->store.nindex, s->store.index, s->store.predicate, false, &a));
  if (s->store.value->type.lanes != a.lanes)
    return cg_fail(c, "store to %s: value lanes %d vs index lanes %d", s->store.buf->name,
                   s->store.value->type.lanes, a.lanes);
  LLVMValueRef v;
  CG_TRY(cg_expr(c, s->store.value, &v));
  LLVMTypeRef vt = a.lanes > 1 ? LLVMVectorType(a.elem, (unsigned)a.lanes) : a.elem;
  if (a.is_bool) v = LLVMBuildZExt(c->b, v, vt, "");
  LLVMValueRef align = LLVMConstInt(c->t_i32, a.align, 0), ignored;
  switch (a.kind) {
  case ACC_SCALAR:
  case ACC_SPLAT:
    if (!a.mask) {
      LLVMSetAlignment(LLVMBuildStore(c->b, v, a.addr), a.align);
    } else {
      LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(c->b));
      LLVMBasicBlockRef on = LLVMAppendBasicBlockInContext(c->ctx, fn, "pstore");
      LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->ctx, fn, "pstore.end");
      LLVMBuildCondBr(c->b, a.mask, on, join);
      LLVMPositionBuilderAtEnd(c->b, on);
      LLVMSetAlignment(LLVMBuildStore(c->b, v, a.addr), a.align);
      LLVMBuildBr(c->b, join);
      LLVMPositionBuilderAtEnd(c->b, join);
    }
    return TSL_OK;
  case ACC_DENSE:
    if (!a.mask) {
      LLVMSetAlignment(LLVMBuildStore(c->b, v, a.addr), a.align);
      return TSL_OK;
    } else {
      LLVMTypeRef ov[2] = {vt, c->t_ptr};
      LLVMValueRef args[4] = {v, a.addr, align, a.mask};
      return cg_intrinsic(c, "llvm.masked.store", ov, 2, args, 4, &ignored);
    }
  case ACC_GATHER: {
    /* Lanes writing one address land in lane order (the last one wins). */
    LLVMTypeRef ov[2] = {vt, LLVMTypeOf(a.addr)};
    LLVMValueRef args[4] = {v, a.addr, align, a.mask ? a.mask : all_true(c, a.lanes)};
    return cg_intrinsic(c, "llvm.masked.scatter", ov, 2, args, 4, &ignored);
  }
  }
  return TSL_OK;
}

tsl_status cg_load_address(cg *c, const tsl_expr *load, LLVMValueRef *out) {
  access a;
  CG_TRY(prepare(c, "prefetch of", load->load.buf, load->load.nindex, load->load.index, NULL, true, &a));
  *out = a.kind == ACC_GATHER ? LLVMBuildExtractElement(c->b, a.addr, LLVMConstInt(c->t_i32, 0, 0), "") : a.addr;
  return TSL_OK;
}
