/* Ahead-of-time compilation: lowered kernels -> one shared object for any target
 * (the host, or a cross target such as armv8 that cannot run here), loadable with
 * tsl_module_load_so (runtime/module.h) on a machine of that target.
 *
 * The object holds every kernel (exported under its sanitized symbol, see
 * tsl_codegen_symbol_name), their outlined parallel tasks, and the tables the loader
 * reads, emitted as LLVM IR data in the same module:
 *   tsl_aot_kernels   one tsl_aot_entry {name, function, signature} per kernel, in
 *                     the order given
 *   tsl_aot_nkernels  their number
 *   tsl_aot_target    "<arch> <LLVM features>", e.g. "aarch64 +neon,+fp-armv8,+dotprod":
 *                     the target's features plus the vector extensions its CPU model
 *                     implies (so "armv8 -mcpu=cortex-a76" records +dotprod); the loader
 *                     refuses the object on a CPU lacking one of them
 *
 * Linking: the object is linked with ld.lld-19 -shared against the target's libc and
 * libm (generated code may call memset/memcpy and expf-like functions). The runtime
 * symbols generated code calls (tsl_parallel_for, tsl_kernel_alloc, tsl_kernel_free)
 * stay undefined and resolve, at dlopen time, in the application that loads the
 * object: it links the tessel runtime and exports its symbols (-rdynamic, meson
 * export_dynamic). So kernels share the application's thread pool rather than bringing
 * their own.
 *
 * Environment: TSL_LLD names the linker (default "ld.lld-19", searched in PATH);
 * TSL_AOT_LIBDIR overrides the directory of the target's libc.so/libm.so (default
 * /usr/lib/x86_64-linux-gnu for x86-64, /usr/aarch64-linux-gnu/lib for AArch64, where
 * Debian's libc6-dev-arm64-cross puts them).
 */
#ifndef TESSEL_CODEGEN_AOT_H
#define TESSEL_CODEGEN_AOT_H

#include "ir/ir.h"
#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compiles funcs[0..n) (lowered, storage-flattened IR, as for tsl_jit_compile) for
 * target t into the shared object out_so (created or replaced). Kernel names in the
 * table are the funcs' names; symbols are the sanitized names, suffixed "_N" when two
 * collide or one would clash with a runtime symbol ("tsl_..."). Pipeline: emission,
 * verification, "default<O3>" with t's target machine, object emission from a clone of
 * the module (emission mutates it), link. A temporary object file is written next to
 * out_so and removed.
 * Errors: TSL_ERR_INVALID (NULL arguments, n < 1, a NULL or unnamed func, two funcs with
 * the same name), TSL_ERR_UNSUPPORTED (an argument type the kernel ABI lacks),
 * TSL_ERR_CODEGEN (emission, verification, optimization or object emission failed:
 * the message names the kernel or step), TSL_ERR_IO (the temporary file or the linker:
 * the message carries the linker's output), TSL_ERR_NOMEM. */
tsl_status tsl_aot_compile(const tsl_func *const *funcs, int n, const tsl_target *t, const char *out_so);

#ifdef __cplusplus
}
#endif
#endif
