/* Lowered loop IR (ir/ir.h) -> LLVM IR, through the LLVM C API.
 *
 * The emitter is target independent; architecture specifics come from
 * codegen/target_backend.h. It implements the semantics contract of ir/ir.h:
 *
 * - Integer + - * wrap (no nsw/nuw flags, except the loop counter increment).
 *   Signed DIV/MOD are floor division/modulo: sdiv/srem plus a correction when the
 *   remainder is nonzero and its sign differs from the divisor's; a positive
 *   power-of-two constant divisor becomes an arithmetic shift / mask. A variable
 *   divisor equal to -1 is handled without the sdiv (INT_MIN / -1 would trap).
 * - Float min/max are llvm.minimum/llvm.maximum (NaN propagating); integer ones are
 *   smin/smax/umin/umax.
 * - Float comparisons are ordered (a NaN operand gives false), except NE, which is
 *   unordered-or-not-equal (NaN != x is true), so NE is always the negation of EQ.
 * - Casts: int widening sign- or zero-extends by the SOURCE's signedness; float ->
 *   int truncates toward zero and saturates (llvm.fpto[su]i.sat: out-of-range values
 *   clamp to the type's range, NaN gives 0), so every target gives the same
 *   result; anything -> bool is "!= 0" (a NaN float is true, as in C).
 * - No fast-math flags. An f32/f64 add or subtract with a multiply as an operand
 *   (x*y + z, z + x*y, x*y - z, z - x*y; x*y may be the scalar product a broadcast
 *   repeats) is llvm.fmuladd: one rounding on targets with FMA (every
 *   x86-64-avx2/avx512 and armv8 target), as C's FP_CONTRACT ON (clang's default)
 *   within one expression; the IR's own fma is always fused. A product stored to a
 *   buffer and read back is rounded, so compute_inline can change the last bit.
 * - Loads/stores take one (flattened) index; a ramp of stride 1 is one contiguous
 *   vector access, any other vector index a gather/scatter; predicates become
 *   llvm.masked.{load,store,gather,scatter} (masked-off lanes read 0, memory under
 *   them is not touched). Alignment is the buffer's where the index is provably a
 *   multiple of it, else the element size.
 * - A parallel loop is outlined into `int32_t task(int64_t begin, int64_t end,
 *   void *closure)` over its iterations [begin, end) (relative to the loop's min),
 *   with every free variable and buffer pointer the body uses packed into a closure
 *   struct, and launched through tsl_parallel_for (runtime/parallel.h); a nonzero
 *   return is propagated.
 * - Allocate: a TSL_BUF_LOCAL buffer of constant size <= TSL_CODEGEN_STACK_LIMIT
 *   bytes is an alloca (64-byte aligned) in the entry block of the enclosing
 *   function (so a parallel task gets one per thread); a larger one comes from
 *   tsl_kernel_alloc and is freed after the body; if that allocation fails the
 *   kernel frees what it holds and returns TSL_KERNEL_ERR_ALLOC.
 *
 * Kernel ABI (what f becomes: its signature, symbol name and return codes):
 * codegen/kernel_abi.h.
 */
#ifndef TESSEL_CODEGEN_LLVM_H
#define TESSEL_CODEGEN_LLVM_H

#include <llvm-c/Core.h>
#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"
#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest local buffer (bytes) placed on the stack; larger ones use the heap. */
#define TSL_CODEGEN_STACK_LIMIT (64 * 1024)

/* Builds the LLVM module of f in `ctx`: the kernel function (external, named
 * `symbol`, or the sanitized f->name when symbol is NULL) and its outlined parallel
 * tasks (internal). Sets the module's triple to t->triple and its data layout to
 * `data_layout` (the target machine's, e.g. from LLVMCopyStringRepOfTargetData; may
 * be NULL, but then memory operations get the default layout's alignments). The
 * module is verified. A kernel with f->vector_bits set (a schedule's vector_width) is
 * compiled for t narrowed to that width (target.h tsl_target_with_vector_bits; on x86 a
 * per-function "target-features" attribute). On success *out is a new module the caller owns
 * (LLVMDisposeModule, or hand it to the JIT). Errors: TSL_ERR_CODEGEN naming the
 * kernel and the cause (an unbound variable or buffer, a multi-index access after
 * storage flattening, an intrinsic with wrong operands, a TE-only node, a local
 * buffer whose size overflows, verifier failure), TSL_ERR_UNSUPPORTED for argument
 * types the ABI lacks or a vector_width t does not offer. */
tsl_status tsl_codegen_emit(const tsl_func *f, const tsl_target *t, LLVMContextRef ctx,
                            const char *symbol, const char *data_layout, LLVMModuleRef *out);

/* Runs LLVM's verifier on m. Errors: TSL_ERR_CODEGEN with "<what>: invalid LLVM
 * module: <verifier message>"; never aborts. */
tsl_status tsl_codegen_verify(LLVMModuleRef m, const char *what);

#ifdef __cplusplus
}
#endif
#endif
