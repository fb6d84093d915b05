/* The kernel ABI: what a lowered function (ir/ir.h tsl_func) becomes as a kernel,
 * without LLVM — its runtime signature, its symbol name and its return codes. The
 * emitter (codegen/llvm.h) implements it; the JIT, the AOT compiler and the graph
 * compilers register kernels with the runtime by it.
 *
 * Kernel ABI: f becomes `int32_t symbol(args...)`; buffer args are pointers marked
 * noalias nonnull align(64) dereferenceable(size); scalar args are passed as
 * int64_t (64-bit int/uint), int32_t (narrower int/uint and bool, truncated inside),
 * float, double, or void* (handles). f16 and vector scalars cannot be arguments.
 */
#ifndef TESSEL_CODEGEN_KERNEL_ABI_H
#define TESSEL_CODEGEN_KERNEL_ABI_H

#include <stddef.h>

#include "ir/ir.h"
#include "runtime/module.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel returns when a workspace allocation failed. */
#define TSL_KERNEL_ERR_ALLOC 1

/* Writes f's kernel symbol into buf: `name` with every character outside
 * [A-Za-z0-9_] replaced by '_' (and a leading '_' if it would start with a digit or
 * be empty), truncated to n-1 bytes. Returns buf. */
char *tsl_codegen_symbol_name(const char *name, char *buf, size_t n);

/* The runtime signature of f's kernel (one entry per f->args, see the ABI above).
 * Errors: TSL_ERR_UNSUPPORTED for an argument type the ABI cannot pass (f16, vector,
 * more than TSL_MAX_KERNEL_ARGS arguments). */
tsl_status tsl_codegen_kernel_sig(const tsl_func *f, tsl_kernel_sig *sig);

#ifdef __cplusplus
}
#endif
#endif
