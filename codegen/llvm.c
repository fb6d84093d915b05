/* IR functions and statements -> LLVM: the kernel function, loops, parallel
 * outlining, allocation, control flow (see codegen/llvm.h). */
#include "codegen/llvm.h"

#include <llvm-c/Analysis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel_abi.h"
#include "codegen/llvm_internal.h"

/* ---- context helpers ---- */

tsl_status cg_fail(const cg *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tsl_error(TSL_ERR_CODEGEN, "codegen %s: %s", c->func->name, msg);
}

static void *grow(void *p, int *cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int n = *cap ? *cap * 2 : 16;
  while (n < need) n *= 2;
  void *q = realloc(p, (size_t)n * elem);
  if (!q) {
    /* Like the IR arenas: no partial-failure path for a few bytes of bookkeeping. */
    fprintf(stderr, "tessel codegen: out of memory\n");
    abort();
  }
  *cap = n;
  return q;
}

void cg_push_var(cg *c, const tsl_expr *var, LLVMValueRef value, int64_t multiple) {
  c->vars = grow(c->vars, &c->capvars, c->nvars + 1, sizeof *c->vars);
  c->vars[c->nvars++] = (cg_var){var, value, multiple < 1 ? 1 : multiple};
}

void cg_pop_vars(cg *c, int n) { c->nvars -= n; }

static int64_t pow2_floor(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v && p < 4096) p *= 2;
  return p;
}

void cg_push_buf(cg *c, const tsl_buffer *buf, LLVMValueRef ptr, int64_t align) {
  c->bufs = grow(c->bufs, &c->capbufs, c->nbufs + 1, sizeof *c->bufs);
  c->bufs[c->nbufs++] = (cg_buf){buf, ptr, pow2_floor(align)};
}

void cg_pop_bufs(cg *c, int n) { c->nbufs -= n; }

static const cg_var *find_var(const cg *c, const tsl_expr *var) {
  for (int i = c->nvars - 1; i >= 0; i--)
    if (c->vars[i].var == var) return &c->vars[i];
  return NULL;
}

static const cg_buf *find_buf(const cg *c, const tsl_buffer *buf) {
  for (int i = c->nbufs - 1; i >= 0; i--)
    if (c->bufs[i].buf == buf) return &c->bufs[i];
  return NULL;
}

tsl_status cg_lookup_var(const cg *c, const tsl_expr *var, const cg_var **out) {
  if (!(*out = find_var(c, var))) return cg_fail(c, "variable %s is not bound here", var->var.name);
  return TSL_OK;
}

tsl_status cg_lookup_buf(const cg *c, const tsl_buffer *buf, const cg_buf **out) {
  if (!(*out = find_buf(c, buf)))
    return cg_fail(c, "buffer %s is neither an argument nor allocated here", buf->name);
  return TSL_OK;
}

static LLVMAttributeRef enum_attr(cg *c, const char *name, uint64_t value) {
  return LLVMCreateEnumAttribute(c->ctx, LLVMGetEnumAttributeKindForName(name, strlen(name)), value);
}

/* Bytes spanned by a buffer: (largest element offset + 1) * element size; 0 for an
 * empty buffer, -1 when that overflows int64. */
static int64_t buffer_bytes(const tsl_buffer *b) {
  int64_t span = 1, term;
  for (int i = 0; i < b->ndim; i++) {
    if (b->shape[i] <= 0) return 0;
    int64_t stride = b->strides ? (b->strides[i] < 0 ? 0 : b->strides[i]) : 1;
    if (b->strides) {
      if (__builtin_mul_overflow(b->shape[i] - 1, stride, &term) || __builtin_add_overflow(span, term, &span))
        return -1;
    } else if (__builtin_mul_overflow(span, b->shape[i], &span)) {
      return -1;
    }
  }
  int64_t bytes;
  if (__builtin_mul_overflow(span, (int64_t)tsl_type_bytes(tsl_type_element(b->dtype)), &bytes)) return -1;
  return bytes;
}

/* noalias nonnull align(n) dereferenceable(bytes) on pointer parameter i: buffers
 * never alias each other (ir.h) and arrive aligned with their whole extent. */
static void buffer_param_attrs(cg *c, LLVMValueRef fn, unsigned i, const tsl_buffer *buf, int64_t align) {
  LLVMAddAttributeAtIndex(fn, i + 1, enum_attr(c, "noalias", 0));
  LLVMAddAttributeAtIndex(fn, i + 1, enum_attr(c, "nonnull", 0));
  LLVMAddAttributeAtIndex(fn, i + 1, enum_attr(c, "align", (uint64_t)pow2_floor(align)));
  int64_t bytes = buffer_bytes(buf);
  if (bytes > 0) LLVMAddAttributeAtIndex(fn, i + 1, enum_attr(c, "dereferenceable", (uint64_t)bytes));
}

static LLVMValueRef runtime_fn(cg *c, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned n) {
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
  if (fn) return fn;
  fn = LLVMAddFunction(c->mod, name, LLVMFunctionType(ret, params, n, 0));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, enum_attr(c, "nounwind", 0));
  if (strcmp(name, "tsl_kernel_alloc") == 0) {
    LLVMAddAttributeAtIndex(fn, LLVMAttributeReturnIndex, enum_attr(c, "noalias", 0));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeReturnIndex, enum_attr(c, "align", 64));
  }
  return fn;
}

static LLVMValueRef call_fn(cg *c, LLVMValueRef fn, LLVMValueRef *args, unsigned n) {
  return LLVMBuildCall2(c->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
}

static void free_heap(cg *c, LLVMValueRef p) {
  LLVMTypeRef pt = c->t_ptr;
  LLVMValueRef fn = runtime_fn(c, "tsl_kernel_free", c->t_void, &pt, 1);
  call_fn(c, fn, &p, 1);
}

/* if (failed) { free every live workspace; return rc; } -- then continue. */
static void fail_branch(cg *c, LLVMValueRef failed, LLVMValueRef rc) {
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "fail");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ok");
  LLVMBuildCondBr(c->b, failed, fail, ok);
  LLVMPositionBuilderAtEnd(c->b, fail);
  for (int i = c->nheap - 1; i >= 0; i--) free_heap(c, c->heap[i]);
  LLVMBuildRet(c->b, rc);
  LLVMPositionBuilderAtEnd(c->b, ok);
}

static LLVMValueRef entry_alloca(cg *c, LLVMTypeRef t, unsigned align, const char *name) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(c->b);
  LLVMPositionBuilderAtEnd(c->b, c->allocas);
  LLVMValueRef a = LLVMBuildAlloca(c->b, t, name);
  if (align) LLVMSetAlignment(a, align); /* else the type's preferred alignment */
  LLVMPositionBuilderAtEnd(c->b, here);
  return a;
}

/* ---- statements ---- */

static tsl_status cg_stmt(cg *c, const tsl_stmt *s);

/* for (i = lo; i < hi; i++) with i of lo's type; the body callback binds what it
 * needs from i. */
typedef tsl_status (*loop_body_fn)(cg *c, LLVMValueRef i, const void *arg);

static tsl_status counted_loop(cg *c, LLVMValueRef lo, LLVMValueRef hi, bool is_signed, bool known_nonempty,
                               const char *name, loop_body_fn body, const void *arg) {
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(c->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->ctx, c->fn, name);
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "loop.end");
  LLVMIntPredicate lt = is_signed ? LLVMIntSLT : LLVMIntULT;
  if (known_nonempty) LLVMBuildBr(c->b, head);
  else LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, lt, lo, hi, ""), head, exit);
  LLVMPositionBuilderAtEnd(c->b, head);
  LLVMValueRef i = LLVMBuildPhi(c->b, LLVMTypeOf(lo), name);
  CG_TRY(body(c, i, arg));
  LLVMValueRef one = LLVMConstInt(LLVMTypeOf(lo), 1, 0);
  LLVMValueRef next = is_signed ? LLVMBuildNSWAdd(c->b, i, one, "") : LLVMBuildAdd(c->b, i, one, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(c->b);
  LLVMBuildCondBr(c->b, LLVMBuildICmp(c->b, lt, next, hi, ""), head, exit);
  LLVMValueRef vals[2] = {lo, next};
  LLVMBasicBlockRef blocks[2] = {pre, latch};
  LLVMAddIncoming(i, vals, blocks, 2);
  LLVMPositionBuilderAtEnd(c->b, exit);
  return TSL_OK;
}

static tsl_status serial_body(cg *c, LLVMValueRef i, const void *arg) {
  const tsl_stmt *s = arg;
  cg_push_var(c, s->loop.var, i, 1);
  tsl_status st = cg_stmt(c, s->loop.body);
  cg_pop_vars(c, 1);
  return st;
}

/* One block of a transposing loop (llvm_internal.h, cg_transpose): i counts blocks. */
typedef struct transpose_arg {
  const cg_transpose *t;
  LLVMValueRef min;
} transpose_arg;

static tsl_status transpose_body(cg *c, LLVMValueRef i, const void *arg) {
  const transpose_arg *a = arg;
  LLVMValueRef w0 = LLVMBuildAdd(
      c->b, a->min, LLVMBuildMul(c->b, i, LLVMConstInt(LLVMTypeOf(i), (unsigned long long)a->t->lanes, 0), ""), "");
  return cg_transpose_block(c, a->t, w0);
}

static tsl_status serial_for(cg *c, const tsl_stmt *s) {
  LLVMValueRef min, extent;
  CG_TRY(cg_expr(c, s->loop.min, &min));
  CG_TRY(cg_expr(c, s->loop.extent, &extent));
  bool is_signed = tsl_type_is_int(s->loop.var->type);
  int64_t n;
  bool is_const = tsl_expr_is_const_int(s->loop.extent, &n);
  if (is_const && (n == 0 || (is_signed && n < 0))) return TSL_OK;
  LLVMValueRef end = LLVMBuildAdd(c->b, min, extent, "");
  cg_transpose t;
  if (cg_transpose_match(c, s, &t)) {
    /* whole blocks of L iterations transposed, the last extent mod L as the loop was */
    int64_t blocks = t.extent / t.lanes;
    LLVMTypeRef it = LLVMTypeOf(min);
    transpose_arg a = {&t, min};
    CG_TRY(counted_loop(c, LLVMConstInt(it, 0, 0), LLVMConstInt(it, (unsigned long long)blocks, 0), is_signed, true,
                        "transpose", transpose_body, &a));
    if (t.extent % t.lanes == 0) return TSL_OK;
    LLVMValueRef rest = LLVMBuildAdd(c->b, min, LLVMConstInt(it, (unsigned long long)(blocks * t.lanes), 0), "");
    return counted_loop(c, rest, end, is_signed, true, s->loop.var->var.name, serial_body, s);
  }
  return counted_loop(c, min, end, is_signed, is_const, s->loop.var->var.name, serial_body, s);
}

/* ---- parallel loops ---- */

typedef struct capture_set {
  const cg *c;
  const cg_var **vars;
  int nvars, capvars;
  const cg_buf **bufs;
  int nbufs, capbufs;
} capture_set;

static void capture_var(capture_set *cs, const tsl_expr *v) {
  const cg_var *b = find_var(cs->c, v);
  if (!b) return; /* bound inside the body (or unbound: reported when emitted) */
  for (int i = 0; i < cs->nvars; i++)
    if (cs->vars[i]->var == v) return;
  cs->vars = grow(cs->vars, &cs->capvars, cs->nvars + 1, sizeof *cs->vars);
  cs->vars[cs->nvars++] = b;
}

static void capture_buf(capture_set *cs, const tsl_buffer *buf) {
  const cg_buf *b = find_buf(cs->c, buf);
  if (!b) return; /* allocated inside the body */
  for (int i = 0; i < cs->nbufs; i++)
    if (cs->bufs[i]->buf == buf) return;
  cs->bufs = grow(cs->bufs, &cs->capbufs, cs->nbufs + 1, sizeof *cs->bufs);
  cs->bufs[cs->nbufs++] = b;
}

static void free_expr_walk(capture_set *cs, const tsl_expr *e) {
  if (!e) return;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: return;
  case TSL_E_VAR: capture_var(cs, e); return;
  case TSL_E_NOT: case TSL_E_CAST: free_expr_walk(cs, e->un.a); return;
  case TSL_E_SELECT:
    free_expr_walk(cs, e->select.cond);
    free_expr_walk(cs, e->select.t);
    free_expr_walk(cs, e->select.f);
    return;
  case TSL_E_BROADCAST: free_expr_walk(cs, e->broadcast.value); return;
  case TSL_E_RAMP:
    free_expr_walk(cs, e->ramp.base);
    free_expr_walk(cs, e->ramp.stride);
    return;
  case TSL_E_LOAD:
    capture_buf(cs, e->load.buf);
    for (int i = 0; i < e->load.nindex; i++) free_expr_walk(cs, e->load.index[i]);
    free_expr_walk(cs, e->load.predicate);
    return;
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++) free_expr_walk(cs, e->call.args[i]);
    return;
  case TSL_E_LET:
    free_expr_walk(cs, e->let.value);
    free_expr_walk(cs, e->let.body);
    return;
  case TSL_E_REDUCE:
    free_expr_walk(cs, e->reduce.source);
    free_expr_walk(cs, e->reduce.condition);
    return;
  default:
    free_expr_walk(cs, e->bin.a);
    free_expr_walk(cs, e->bin.b);
    return;
  }
}

static void free_stmt_walk(capture_set *cs, const tsl_stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case TSL_S_FOR:
    free_expr_walk(cs, s->loop.min);
    free_expr_walk(cs, s->loop.extent);
    free_stmt_walk(cs, s->loop.body);
    return;
  case TSL_S_STORE:
    capture_buf(cs, s->store.buf);
    for (int i = 0; i < s->store.nindex; i++) free_expr_walk(cs, s->store.index[i]);
    free_expr_walk(cs, s->store.value);
    free_expr_walk(cs, s->store.predicate);
    return;
  case TSL_S_ALLOCATE: free_stmt_walk(cs, s->allocate.body); return;
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) free_stmt_walk(cs, s->seq.stmts[i]);
    return;
  case TSL_S_IF:
    free_expr_walk(cs, s->if_.cond);
    free_stmt_walk(cs, s->if_.then_case);
    free_stmt_walk(cs, s->if_.else_case);
    return;
  case TSL_S_LET:
    free_expr_walk(cs, s->let.value);
    free_stmt_walk(cs, s->let.body);
    return;
  case TSL_S_EVALUATE: free_expr_walk(cs, s->evaluate.value); return;
  }
}

/* What belongs to the function being emitted; swapped out while an outlined task
 * is emitted, since values of one LLVM function cannot be used in another. */
typedef struct fn_state {
  LLVMValueRef fn;
  LLVMBasicBlockRef allocas, insert;
  cg_var *vars;
  int nvars, capvars;
  cg_buf *bufs;
  int nbufs, capbufs;
  LLVMValueRef *heap;
  int nheap, capheap;
} fn_state;

static void enter_function(cg *c, fn_state *saved, LLVMValueRef fn) {
  *saved = (fn_state){c->fn, c->allocas, LLVMGetInsertBlock(c->b), c->vars, c->nvars, c->capvars,
                      c->bufs, c->nbufs, c->capbufs, c->heap, c->nheap, c->capheap};
  c->fn = fn;
  c->vars = NULL;
  c->nvars = c->capvars = 0;
  c->bufs = NULL;
  c->nbufs = c->capbufs = 0;
  c->heap = NULL;
  c->nheap = c->capheap = 0;
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, enum_attr(c, "nounwind", 0));
  c->backend->function_attributes(fn, c->target);
  c->allocas = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(c->ctx, fn, "body");
  LLVMPositionBuilderAtEnd(c->b, body);
}

/* Ends the current function with `return 0` and restores the enclosing one. */
static void leave_function(cg *c, const fn_state *saved, bool emitted) {
  if (emitted) {
    LLVMBuildRet(c->b, LLVMConstInt(c->t_i32, 0, 0));
    LLVMPositionBuilderAtEnd(c->b, c->allocas);
    LLVMBuildBr(c->b, LLVMGetNextBasicBlock(c->allocas));
  }
  free(c->vars);
  free(c->bufs);
  free(c->heap);
  c->fn = saved->fn;
  c->allocas = saved->allocas;
  c->vars = saved->vars;
  c->nvars = saved->nvars;
  c->capvars = saved->capvars;
  c->bufs = saved->bufs;
  c->nbufs = saved->nbufs;
  c->capbufs = saved->capbufs;
  c->heap = saved->heap;
  c->nheap = saved->nheap;
  c->capheap = saved->capheap;
  if (saved->insert) LLVMPositionBuilderAtEnd(c->b, saved->insert);
}

typedef struct par_body_arg {
  const tsl_stmt *s;
  LLVMValueRef min;
} par_body_arg;

static tsl_status parallel_iteration(cg *c, LLVMValueRef r, const void *arg) {
  const par_body_arg *p = arg;
  LLVMValueRef off = r;
  if (LLVMTypeOf(p->min) != c->t_i64) off = LLVMBuildTrunc(c->b, r, LLVMTypeOf(p->min), "");
  cg_push_var(c, p->s->loop.var, LLVMBuildAdd(c->b, p->min, off, p->s->loop.var->var.name), 1);
  tsl_status st = cg_stmt(c, p->s->loop.body);
  cg_pop_vars(c, 1);
  return st;
}

/* The outlined body: int32_t NAME_bodyK(int64_t begin, int64_t end, T min,
 * captures...) with buffer pointers as noalias parameters (inlining into the task
 * turns them into alias scopes, which pointers loaded from the closure would lack). */
static tsl_status emit_parallel_body(cg *c, LLVMValueRef fn, const tsl_stmt *s, const capture_set *cs) {
  fn_state saved;
  enter_function(c, &saved, fn);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, enum_attr(c, "alwaysinline", 0));
  unsigned p = 3;
  for (int i = 0; i < cs->nbufs; i++, p++) {
    buffer_param_attrs(c, fn, p, cs->bufs[i]->buf, cs->bufs[i]->align);
    cg_push_buf(c, cs->bufs[i]->buf, LLVMGetParam(fn, p), cs->bufs[i]->align);
  }
  for (int i = 0; i < cs->nvars; i++, p++) cg_push_var(c, cs->vars[i]->var, LLVMGetParam(fn, p), cs->vars[i]->multiple);
  par_body_arg arg = {s, LLVMGetParam(fn, 2)};
  tsl_status st = counted_loop(c, LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), true, false, s->loop.var->var.name,
                               parallel_iteration, &arg);
  leave_function(c, &saved, st == TSL_OK);
  return st;
}

/* The task the runtime calls: unpacks the closure struct and calls the body. */
static void emit_parallel_task(cg *c, LLVMValueRef task, LLVMValueRef body, LLVMTypeRef closure_t, int nfields) {
  LLVMBasicBlockRef here = LLVMGetInsertBlock(c->b);
  LLVMSetLinkage(task, LLVMInternalLinkage);
  LLVMAddAttributeAtIndex(task, LLVMAttributeFunctionIndex, enum_attr(c, "nounwind", 0));
  c->backend->function_attributes(task, c->target);
  LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, task, "entry"));
  LLVMValueRef args[nfields + 2];
  args[0] = LLVMGetParam(task, 0);
  args[1] = LLVMGetParam(task, 1);
  LLVMValueRef closure = LLVMGetParam(task, 2);
  for (int i = 0; i < nfields; i++) {
    LLVMValueRef field = LLVMBuildStructGEP2(c->b, closure_t, closure, (unsigned)i, "");
    args[i + 2] = LLVMBuildLoad2(c->b, LLVMStructGetTypeAtIndex(closure_t, (unsigned)i), field, "");
  }
  LLVMBuildRet(c->b, call_fn(c, body, args, (unsigned)nfields + 2));
  LLVMPositionBuilderAtEnd(c->b, here);
}

static tsl_status parallel_for(cg *c, const tsl_stmt *s) {
  LLVMValueRef min, extent;
  CG_TRY(cg_expr(c, s->loop.min, &min));
  CG_TRY(cg_expr(c, s->loop.extent, &extent));
  bool is_signed = tsl_type_is_int(s->loop.var->type);
  if (LLVMTypeOf(extent) != c->t_i64)
    extent = is_signed ? LLVMBuildSExt(c->b, extent, c->t_i64, "") : LLVMBuildZExt(c->b, extent, c->t_i64, "");

  capture_set cs = {.c = c};
  free_stmt_walk(&cs, s->loop.body);
  int nfields = 1 + cs.nbufs + cs.nvars;
  LLVMTypeRef fields[nfields], body_params[nfields + 2];
  LLVMValueRef values[nfields];
  fields[0] = LLVMTypeOf(min);
  values[0] = min;
  for (int i = 0; i < cs.nbufs; i++) {
    fields[1 + i] = c->t_ptr;
    values[1 + i] = cs.bufs[i]->ptr;
  }
  for (int i = 0; i < cs.nvars; i++) {
    fields[1 + cs.nbufs + i] = LLVMTypeOf(cs.vars[i]->value);
    values[1 + cs.nbufs + i] = cs.vars[i]->value;
  }
  body_params[0] = body_params[1] = c->t_i64;
  for (int i = 0; i < nfields; i++) body_params[i + 2] = fields[i];

  char name[320];
  int k = c->ntasks++;
  snprintf(name, sizeof name, "%s_par%d_body", c->symbol, k);
  LLVMValueRef body = LLVMAddFunction(c->mod, name, LLVMFunctionType(c->t_i32, body_params, (unsigned)nfields + 2, 0));
  LLVMTypeRef task_params[3] = {c->t_i64, c->t_i64, c->t_ptr};
  snprintf(name, sizeof name, "%s_par%d", c->symbol, k);
  LLVMValueRef task = LLVMAddFunction(c->mod, name, LLVMFunctionType(c->t_i32, task_params, 3, 0));

  static const char *const fixed[3] = {"begin", "end", "min"};
  for (unsigned i = 0; i < 3; i++) {
    LLVMSetValueName2(LLVMGetParam(body, i), fixed[i], strlen(fixed[i]));
    if (i < 2) LLVMSetValueName2(LLVMGetParam(task, i), fixed[i], strlen(fixed[i]));
  }
  LLVMSetValueName2(LLVMGetParam(task, 2), "closure", 7);
  for (int i = 0; i < cs.nbufs; i++)
    LLVMSetValueName2(LLVMGetParam(body, 3 + (unsigned)i), cs.bufs[i]->buf->name, strlen(cs.bufs[i]->buf->name));
  for (int i = 0; i < cs.nvars; i++) {
    const char *vn = cs.vars[i]->var->var.name;
    LLVMSetValueName2(LLVMGetParam(body, 3 + (unsigned)(cs.nbufs + i)), vn, strlen(vn));
  }

  LLVMTypeRef closure_t = LLVMStructTypeInContext(c->ctx, fields, (unsigned)nfields, 0);
  /* The layout's own alignment: a captured vector may need 64 bytes. */
  LLVMValueRef closure = entry_alloca(c, closure_t, 0, "closure");
  for (int i = 0; i < nfields; i++)
    LLVMBuildStore(c->b, values[i], LLVMBuildStructGEP2(c->b, closure_t, closure, (unsigned)i, ""));

  tsl_status st = emit_parallel_body(c, body, s, &cs);
  free(cs.vars);
  free(cs.bufs);
  CG_TRY(st);
  emit_parallel_task(c, task, body, closure_t, nfields);

  LLVMTypeRef launch_params[3] = {c->t_ptr, c->t_ptr, c->t_i64};
  LLVMValueRef launch = runtime_fn(c, "tsl_parallel_for", c->t_i32, launch_params, 3);
  LLVMValueRef args[3] = {task, closure, extent};
  LLVMValueRef rc = call_fn(c, launch, args, 3);
  fail_branch(c, LLVMBuildICmp(c->b, LLVMIntNE, rc, LLVMConstInt(c->t_i32, 0, 0), ""), rc);
  return TSL_OK;
}

/* ---- other statements ---- */

static tsl_status allocate(cg *c, const tsl_stmt *s) {
  const tsl_buffer *buf = s->allocate.buf;
  int64_t bytes = buffer_bytes(buf);
  if (bytes < 0) return cg_fail(c, "allocate %s: size does not fit in 64 bits", buf->name);
  tsl_status st;
  if (bytes <= TSL_CODEGEN_STACK_LIMIT) {
    LLVMTypeRef t = LLVMArrayType2(c->t_i8, (uint64_t)(bytes > 0 ? bytes : 1));
    cg_push_buf(c, buf, entry_alloca(c, t, 64, buf->name), 64);
    st = cg_stmt(c, s->allocate.body);
    cg_pop_bufs(c, 1);
    return st;
  }
  LLVMTypeRef i64 = c->t_i64;
  LLVMValueRef alloc = runtime_fn(c, "tsl_kernel_alloc", c->t_ptr, &i64, 1);
  LLVMValueRef size = LLVMConstInt(c->t_i64, (unsigned long long)bytes, 0);
  LLVMValueRef p = call_fn(c, alloc, &size, 1);
  fail_branch(c, LLVMBuildIsNull(c->b, p, ""), LLVMConstInt(c->t_i32, TSL_KERNEL_ERR_ALLOC, 0));
  c->heap = grow(c->heap, &c->capheap, c->nheap + 1, sizeof *c->heap);
  c->heap[c->nheap++] = p;
  cg_push_buf(c, buf, p, 64);
  st = cg_stmt(c, s->allocate.body);
  cg_pop_bufs(c, 1);
  c->nheap--;
  if (st == TSL_OK) free_heap(c, p);
  return st;
}

static tsl_status if_stmt(cg *c, const tsl_stmt *s) {
  LLVMValueRef cond;
  if (!tsl_type_is_bool(s->if_.cond->type) || s->if_.cond->type.lanes != 1)
    return cg_fail(c, "if condition must be a scalar bool");
  CG_TRY(cg_expr(c, s->if_.cond, &cond));
  LLVMBasicBlockRef then_b = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "then");
  LLVMBasicBlockRef else_b = s->if_.else_case ? LLVMAppendBasicBlockInContext(c->ctx, c->fn, "else") : NULL;
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "endif");
  LLVMBuildCondBr(c->b, cond, then_b, else_b ? else_b : join);
  LLVMPositionBuilderAtEnd(c->b, then_b);
  CG_TRY(cg_stmt(c, s->if_.then_case));
  LLVMBuildBr(c->b, join);
  if (else_b) {
    LLVMPositionBuilderAtEnd(c->b, else_b);
    CG_TRY(cg_stmt(c, s->if_.else_case));
    LLVMBuildBr(c->b, join);
  }
  LLVMPositionBuilderAtEnd(c->b, join);
  return TSL_OK;
}

static tsl_status cg_stmt(cg *c, const tsl_stmt *s) {
  LLVMValueRef v;
  switch (s->kind) {
  case TSL_S_FOR:
    /* Vectorized/unrolled loops should have been rewritten by the passes; if one
     * arrives anyway it is still a correct serial loop. */
    return s->loop.for_kind == TSL_FOR_PARALLEL ? parallel_for(c, s) : serial_for(c, s);
  case TSL_S_STORE: return cg_store(c, s);
  case TSL_S_ALLOCATE: return allocate(c, s);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) CG_TRY(cg_stmt(c, s->seq.stmts[i]));
    return TSL_OK;
  case TSL_S_IF: return if_stmt(c, s);
  case TSL_S_LET: {
    CG_TRY(cg_expr(c, s->let.value, &v));
    cg_push_var(c, s->let.var, v, cg_known_multiple(c, s->let.value));
    tsl_status st = cg_stmt(c, s->let.body);
    cg_pop_vars(c, 1);
    return st;
  }
  case TSL_S_EVALUATE: return cg_expr(c, s->evaluate.value, &v);
  }
  return cg_fail(c, "unknown statement kind %d", (int)s->kind);
}

/* ---- the kernel ---- */

static LLVMTypeRef abi_llvm_type(const cg *c, tsl_arg_type t) {
  switch (t) {
  case TSL_ARG_I32: return c->t_i32;
  case TSL_ARG_I64: return c->t_i64;
  case TSL_ARG_F32: return LLVMFloatTypeInContext(c->ctx);
  case TSL_ARG_F64: return LLVMDoubleTypeInContext(c->ctx);
  default: return c->t_ptr;
  }
}

static tsl_status emit_kernel(cg *c) {
  const tsl_func *f = c->func;
  tsl_kernel_sig sig;
  CG_TRY(tsl_codegen_kernel_sig(f, &sig));
  if (!f->body) return cg_fail(c, "no body");
  LLVMTypeRef params[TSL_MAX_KERNEL_ARGS + 1];
  for (int i = 0; i < sig.nargs; i++) params[i] = abi_llvm_type(c, sig.args[i]);
  LLVMValueRef fn = LLVMAddFunction(c->mod, c->symbol, LLVMFunctionType(c->t_i32, params, (unsigned)sig.nargs, 0));
  fn_state saved;
  enter_function(c, &saved, fn);
  tsl_status st = TSL_OK;
  for (int i = 0; i < f->nargs && st == TSL_OK; i++) {
    const tsl_arg *a = &f->args[i];
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)i);
    LLVMSetValueName2(p, a->is_buffer ? a->buf->name : a->var->var.name,
                      strlen(a->is_buffer ? a->buf->name : a->var->var.name));
    if (a->is_buffer) {
      int64_t align = a->buf->align > 0 ? a->buf->align : 64;
      buffer_param_attrs(c, fn, (unsigned)i, a->buf, align);
      cg_push_buf(c, a->buf, p, align);
      continue;
    }
    LLVMTypeRef t;
    st = cg_type(c, a->var->type, &t);
    if (st != TSL_OK) break;
    if (tsl_type_is_bool(a->var->type)) p = LLVMBuildICmp(c->b, LLVMIntNE, p, LLVMConstInt(c->t_i32, 0, 0), "");
    else if (tsl_type_is_intlike(a->var->type) && a->var->type.bits < 32) p = LLVMBuildTrunc(c->b, p, t, "");
    cg_push_var(c, a->var, p, 1);
  }
  if (st == TSL_OK) st = cg_stmt(c, f->body);
  leave_function(c, &saved, st == TSL_OK);
  return st;
}

tsl_status tsl_codegen_verify(LLVMModuleRef m, const char *what) {
  char *msg = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
    tsl_status st = tsl_error(TSL_ERR_CODEGEN, "%s: invalid LLVM module: %s", what, msg ? msg : "");
    LLVMDisposeMessage(msg);
    return st;
  }
  LLVMDisposeMessage(msg);
  return TSL_OK;
}

tsl_status tsl_codegen_emit(const tsl_func *f, const tsl_target *t, LLVMContextRef ctx, const char *symbol,
                            const char *data_layout, LLVMModuleRef *out) {
  if (!f || !t || !ctx || !out) return tsl_error(TSL_ERR_INVALID, "codegen: NULL argument");
  const tsl_target_backend *be = tsl_target_backend_of(t->arch);
  if (!be) return tsl_error(TSL_ERR_UNSUPPORTED, "codegen %s: target %s has no backend", f->name, t->name);
  tsl_target narrowed;
  if (f->vector_bits && f->vector_bits != t->vector_bits) {
    /* the schedule's vector_width: compile for the narrower ISA (target.h) */
    if (tsl_target_with_vector_bits(t, f->vector_bits, &narrowed) != TSL_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", tsl_last_error());
      return tsl_error(TSL_ERR_UNSUPPORTED, "codegen %s: vector_width(%d): %s", f->name, f->vector_bits, why);
    }
    t = &narrowed;
  }
  char sym[256];
  if (!symbol) symbol = tsl_codegen_symbol_name(f->name, sym, sizeof sym);
  cg c = {.func = f, .target = t, .backend = be, .ctx = ctx, .symbol = symbol};
  c.t_i1 = LLVMInt1TypeInContext(ctx);
  c.t_i8 = LLVMInt8TypeInContext(ctx);
  c.t_i32 = LLVMInt32TypeInContext(ctx);
  c.t_i64 = LLVMInt64TypeInContext(ctx);
  c.t_ptr = LLVMPointerTypeInContext(ctx, 0);
  c.t_void = LLVMVoidTypeInContext(ctx);
  c.mod = LLVMModuleCreateWithNameInContext(symbol, ctx);
  LLVMSetTarget(c.mod, t->triple);
  if (data_layout) LLVMSetDataLayout(c.mod, data_layout);
  c.b = LLVMCreateBuilderInContext(ctx);
  tsl_status st = emit_kernel(&c);
  LLVMDisposeBuilder(c.b);
  if (st == TSL_OK) {
    char what[300];
    snprintf(what, sizeof what, "codegen %s", f->name);
    st = tsl_codegen_verify(c.mod, what);
  }
  if (st != TSL_OK) {
    LLVMDisposeModule(c.mod);
    return st;
  }
  *out = c.mod;
  return TSL_OK;
}
