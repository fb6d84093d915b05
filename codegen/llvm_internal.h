/* State shared by the IR -> LLVM emitter's two halves (internal to codegen/):
 * llvm.c (functions, statements, parallel outlining) and llvm_expr.c (expressions
 * and intrinsics). */
#ifndef TESSEL_CODEGEN_LLVM_INTERNAL_H
#define TESSEL_CODEGEN_LLVM_INTERNAL_H

#include <llvm-c/Core.h>

#include "codegen/llvm.h"
#include "codegen/target_backend.h"
#include "ir/passes/vectorize.h"

/* A bound variable: its LLVM value in the current function and the largest power
 * of two its value is known to be a multiple of (for load/store alignment). */
typedef struct cg_var {
  const tsl_expr *var;
  LLVMValueRef value;
  int64_t multiple;
} cg_var;

/* A buffer visible in the current function: pointer to element 0, its alignment. */
typedef struct cg_buf {
  const tsl_buffer *buf;
  LLVMValueRef ptr;
  int64_t align;
} cg_buf;

typedef struct cg {
  const tsl_func *func;
  const tsl_target *target;
  const tsl_target_backend *backend;
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  const char *symbol; /* the kernel's LLVM symbol; outlined tasks derive their names */
  int ntasks;

  /* The function being emitted. Allocas go to the end of `allocas` (the entry
   * block, which branches to the body once the function is complete). */
  LLVMValueRef fn;
  LLVMBasicBlockRef allocas;
  cg_var *vars;
  int nvars, capvars;
  cg_buf *bufs;
  int nbufs, capbufs;
  /* Workspaces from tsl_kernel_alloc live at this point: every failure return
   * frees them (innermost first). */
  LLVMValueRef *heap;
  int nheap, capheap;

  LLVMTypeRef t_i1, t_i8, t_i32, t_i64, t_ptr, t_void;
} cg;

#define CG_TRY(x)                        \
  do {                                   \
    tsl_status cg_try_st_ = (x);         \
    if (cg_try_st_ != TSL_OK) return cg_try_st_; \
  } while (0)

/* Errors name the kernel: "codegen <name>: <why>". */
tsl_status cg_fail(const cg *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* LLVM type of an IR type (vectors for lanes > 1; bool is i1 in registers). */
tsl_status cg_type(const cg *c, tsl_type t, LLVMTypeRef *out);
/* Memory type of one scalar buffer element (bool is stored as one byte, i8). */
tsl_status cg_mem_type(const cg *c, tsl_type elem, LLVMTypeRef *out);

tsl_status cg_lookup_var(const cg *c, const tsl_expr *var, const cg_var **out);
tsl_status cg_lookup_buf(const cg *c, const tsl_buffer *buf, const cg_buf **out);
void cg_push_var(cg *c, const tsl_expr *var, LLVMValueRef value, int64_t multiple);
void cg_pop_vars(cg *c, int n);
void cg_push_buf(cg *c, const tsl_buffer *buf, LLVMValueRef ptr, int64_t align);
void cg_pop_bufs(cg *c, int n);

/* Call an LLVM intrinsic by name with its overload types. */
tsl_status cg_intrinsic(cg *c, const char *name, LLVMTypeRef *overloads, int noverloads,
                        LLVMValueRef *args, int nargs, LLVMValueRef *out);

/* The largest power of two (capped at 2^20) that the integer expression's value is
 * known to be a multiple of; 1 when nothing is known. */
int64_t cg_known_multiple(const cg *c, const tsl_expr *e);

/* Emit an expression in the current block. */
tsl_status cg_expr(cg *c, const tsl_expr *e, LLVMValueRef *out);
/* Emit a scalar or vector index expression widened to i64 (sign-extended for
 * signed types, zero-extended for unsigned). */
tsl_status cg_index_i64(cg *c, const tsl_expr *e, LLVMValueRef *out);
/* Splat a scalar value to `lanes` lanes. */
LLVMValueRef cg_splat(cg *c, LLVMValueRef v, int lanes);

/* Loads and stores (llvm_mem.c). */
tsl_status cg_load(cg *c, const tsl_expr *e, LLVMValueRef *out);
/* A vector load whose index is a sum of scalar terms and per-lane constants (what a
 * gather with a fixed lane pattern lowers to once the loops that set the pattern are
 * unrolled: ShuffleNet's channel interleave, a stride-2 row), unpredicated or under a
 * predicate fixed per lane (a layout transform's `c < C`: off lanes read 0), as
 * contiguous loads of the at most 4 windows of one vector width the on lanes fall in,
 * and shuffles (llvm_lane_window.c); *out = NULL when the load is not of that form (the
 * caller gathers). Every window lies between two on lanes' addresses, so no load leaves
 * the lanes' buffer. */
tsl_status cg_load_lane_windows(cg *c, const tsl_expr *e, LLVMValueRef *out);
tsl_status cg_store(cg *c, const tsl_stmt *s);
/* The lanes of a predicate that uses no variable and no memory (comparisons of constant
 * lane expressions, and/or/not of those) in m; false otherwise (llvm_lane_window.c). */
bool cg_lane_predicate(const tsl_expr *e, int lanes, bool *m);

/* A serial loop over w of constant extent E >= L whose body is one store of a whole
 * vector of L lanes (L a power of two) at out[ramp(o(w), 1, L)] of
 * data[ramp(i(w), S, L)] (S a constant other than 0 and 1), where i(w + 1) = i(w) + 1,
 * the load's lanes on or off by a predicate or by a select of one against 0, either
 * constant per lane or not depending on w (a layout transform between NCHW and
 * NCHW[x]c: lane c reads channel c's row at pixel w; the last block's c < C). Every L
 * consecutive iterations read an L x L block whose row c is contiguous:
 * data[i(w0) + c*S + j], j < L. The indices, the condition and the predicate read no
 * memory; L <= 16 lanes of at most two native registers. llvm_transpose.c. */
typedef struct cg_transpose {
  const tsl_stmt *loop, *store;
  const tsl_expr *load;
  int lanes;
  int64_t stride, extent;
  bool on[TSL_VECTORIZE_MAX_LANES]; /* lanes that may read (the others store 0) */
  /* a select condition and a load predicate that are not lane constants but do not
   * change with w (NULL: none), evaluated per block */
  const tsl_expr *cond, *pred;
} cg_transpose;
/* Whether loop s is of that form (*t then describes it). */
bool cg_transpose_match(const cg *c, const tsl_stmt *s, cg_transpose *t);
/* Iterations w0 .. w0 + L - 1 of the matched loop: L contiguous loads of the on rows, an
 * L x L transpose by shufflevector (log2 L stages of 2-input shuffles), L stores of
 * whole vectors at the loop's own store addresses. Reads exactly the elements those
 * iterations read. */
tsl_status cg_transpose_block(cg *c, const cg_transpose *t, LLVMValueRef w0);
/* Address of the first lane of a load (for prefetch). */
tsl_status cg_load_address(cg *c, const tsl_expr *load, LLVMValueRef *out);

#endif
