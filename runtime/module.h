/* tessel runtime — modules: tables of compiled kernels, and how to call them.
 *
 * A module is filled either by the JIT (codegen adds each kernel's address and
 * signature, and hands over the JIT that holds the code with tsl_module_set_owner) or
 * by loading an ahead-of-time compiled shared object (tsl_module_load_so). Everything
 * after that — lookup by name, calls, timing — is the same for both.
 *
 * Kernel ABI: a kernel is a plain C function `int32_t name(args...)`. Pointer
 * arguments are tensor data pointers (64-byte aligned, not aliasing one another);
 * scalars are passed by value with the C types int32_t, int64_t, float, double. A
 * kernel returns 0 on success or a nonzero error code (e.g. a failed workspace
 * allocation).
 *
 * Calls go through libffi (Foreign Function Interface library, sourceware.org/libffi)
 * with a call interface prepared once when the kernel is added, so a call costs tens of
 * nanoseconds; callers that know the signature at compile time may call
 * tsl_kernel_fn() directly.
 *
 * Thread safety: adding kernels is not synchronised; once a module is filled, lookups
 * and calls may happen from any number of threads at once.
 */
#ifndef TESSEL_RUNTIME_MODULE_H
#define TESSEL_RUNTIME_MODULE_H

#include <stdint.h>

#include "tessel/runtime.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TSL_ARG_PTR, TSL_ARG_I32, TSL_ARG_I64, TSL_ARG_F32, TSL_ARG_F64 } tsl_arg_type;

/* Enough for the graph compiler's widest kernel: a Concat of 64 inputs and more
 * (TSL_OP_CALL_MAX_ARGS, ops/op_call.h). */
#define TSL_MAX_KERNEL_ARGS 72
/* Most arguments a runtime built without libffi (TSL_NO_FFI) can pass. */
#define TSL_NOFFI_MAX_ARGS 16

/* The argument types of a kernel, in order; the return type is always int32_t. */
typedef struct tsl_kernel_sig {
  int nargs; /* 0..TSL_MAX_KERNEL_ARGS */
  tsl_arg_type args[TSL_MAX_KERNEL_ARGS];
} tsl_kernel_sig;

/* One row of the table an AOT shared object exports (see tsl_module_load_so). */
typedef struct tsl_aot_entry {
  const char *name;
  void *fn;
  tsl_kernel_sig sig;
} tsl_aot_entry;

/* Symbol names an AOT shared object exports:
 *   const tsl_aot_entry tsl_aot_kernels[];   the kernel table
 *   const int tsl_aot_nkernels;              its number of rows */
#define TSL_AOT_KERNELS_SYMBOL "tsl_aot_kernels"
#define TSL_AOT_NKERNELS_SYMBOL "tsl_aot_nkernels"
/* And the layout of those rows, which the loader checks before reading a row:
 *   const int tsl_aot_abi;                   TSL_AOT_ABI_VERSION of the writer
 * TSL_AOT_ABI_VERSION = TSL_AOT_FORMAT * 1000 + TSL_MAX_KERNEL_ARGS (the width of a
 * row's argument array); TSL_AOT_FORMAT is raised by hand whenever tsl_aot_entry or
 * tsl_kernel_sig change otherwise. An object without the symbol (written before it
 * existed) or with another value is refused: its rows would be misread. */
#define TSL_AOT_ABI_SYMBOL "tsl_aot_abi"
#define TSL_AOT_FORMAT 1
#define TSL_AOT_ABI_VERSION (TSL_AOT_FORMAT * 1000 + TSL_MAX_KERNEL_ARGS)
/* Optional: the machine the kernels were compiled for, exported as
 *   const char tsl_aot_target[];             e.g. "aarch64 +neon,+fp-armv8,+dotprod"
 * the architecture ("x86_64" or "aarch64"), one space, then the LLVM feature string
 * ("+x" enabled, "-x" disabled, comma separated; may be empty). The loader refuses
 * an object whose architecture is not the running one or that enables a feature the
 * running CPU lacks (see tsl_cpu_has_feature). */
#define TSL_AOT_TARGET_SYMBOL "tsl_aot_target"

typedef struct tsl_module tsl_module;
typedef struct tsl_kernel tsl_kernel;

/* A short name for an argument type ("ptr", "i32", "i64", "f32", "f64"; "invalid"). */
const char *tsl_arg_type_str(tsl_arg_type t);

/* An empty module. Free with tsl_module_free. Errors: TSL_ERR_INVALID (NULL out),
 * TSL_ERR_NOMEM. */
tsl_status tsl_module_new(tsl_module **out);

/* Frees the module and its kernels, then calls the owner's release function (after
 * which the kernels' code may be gone). NULL is a no-op. */
void tsl_module_free(tsl_module *m);

/* Adds kernel `name` (copied) at address `fn` with signature `sig` (copied), and
 * prepares its libffi call interface. Pointers returned by tsl_module_get_kernel stay
 * valid until tsl_module_free.
 * Errors: TSL_ERR_INVALID (NULL or empty name, NULL fn or sig, nargs outside
 * 0..TSL_MAX_KERNEL_ARGS, an unknown argument type, a name already in the module),
 * TSL_ERR_RUNTIME (libffi refused the signature), TSL_ERR_UNSUPPORTED (a runtime built
 * without libffi, -DTSL_NO_FFI as for a device without an arm64 libffi, calls kernels
 * through a direct cast and so takes only pointer/i32/i64 arguments, at most
 * TSL_NOFFI_MAX_ARGS of them), TSL_ERR_NOMEM. */
tsl_status tsl_module_add_kernel(tsl_module *m, const char *name, void *fn, const tsl_kernel_sig *sig);

/* Gives the module an owner of the kernels' code: tsl_module_free calls
 * release(owner) last (e.g. the JIT session, or the dlopen handle). A second call
 * replaces the previous owner without releasing it. */
void tsl_module_set_owner(tsl_module *m, void *owner, void (*release)(void *owner));

/* The kernel called `name`. Errors: TSL_ERR_INVALID (NULL arguments),
 * TSL_ERR_NOT_FOUND (the message names the kernel). */
tsl_status tsl_module_get_kernel(const tsl_module *m, const char *name, const tsl_kernel **out);

/* Number of kernels, and the i-th in insertion order (NULL when i is out of range). */
int tsl_module_num_kernels(const tsl_module *m);
const tsl_kernel *tsl_module_kernel_at(const tsl_module *m, int i);

const tsl_kernel_sig *tsl_kernel_signature(const tsl_kernel *k);
void *tsl_kernel_fn(const tsl_kernel *k);
const char *tsl_kernel_name(const tsl_kernel *k);

/* Calls the kernel. arg_values[i] points at the value of argument i: for a PTR
 * argument at the void* holding the data pointer, for I32 at an int32_t, and so on.
 * Errors: TSL_ERR_INVALID (NULL kernel, NULL arg_values or a NULL entry, nargs not the
 * signature's), TSL_ERR_RUNTIME ("kernel NAME returned CODE" for a nonzero return). */
tsl_status tsl_kernel_call(const tsl_kernel *k, void *const *arg_values, int nargs);

/* Times kernel `k` called with `args` (as tsl_kernel_call) with the time evaluator of
 * tsl_time_callback (include/tessel/runtime.h: the same options, growth of `number`
 * and costs in seconds per call, opts->repeat of them).
 * Errors: TSL_ERR_INVALID (NULL kernel or costs, invalid options, arguments that do
 * not match the signature), TSL_ERR_RUNTIME (a call returned nonzero: costs are then
 * unspecified), TSL_ERR_NOMEM (the flush buffer). */
tsl_status tsl_time_kernel(const tsl_kernel *k, void *const *args, int nargs, const tsl_time_opts *opts,
                           double *costs);

/* Calls a kernel whose arguments are all pointers with tensors[i]->data.
 * Errors: TSL_ERR_INVALID (a non-pointer argument in the signature, n not the
 * signature's nargs, a NULL tensor), then as tsl_kernel_call. */
tsl_status tsl_kernel_call_tensors(const tsl_kernel *k, tsl_tensor *const *tensors, int n);

/* Does the running CPU have the LLVM feature `feature` (without '+', e.g. "avx2",
 * "dotprod")? Detected at run time: cpuid (through __builtin_cpu_supports) on x86-64,
 * getauxval(AT_HWCAP/AT_HWCAP2) on AArch64 (neon, fp-armv8, crc, lse, rdm, aes, sha2,
 * fullfp16, dotprod, sve, sve2; "v8.1a"/"v8.2a" check the LSE atomics, RDM and CRC
 * features they imply). *known (may be NULL) is set to false for a feature this runtime
 * cannot detect; the result is then true (not checked). */
int tsl_cpu_has_feature(const char *feature, int *known);

/* Loads an AOT shared object with dlopen and makes a module of its kernel table (see
 * TSL_AOT_KERNELS_SYMBOL). `path` is a file path (a bare name is taken relative to the
 * current directory, never searched in the library path). The module owns the handle
 * and closes it in tsl_module_free. The object's undefined symbols (e.g.
 * tsl_parallel_for) must resolve in the process: link the application with
 * -rdynamic / export_dynamic, or link the object against the runtime.
 * Errors: TSL_ERR_INVALID (NULL arguments; the table missing, its count negative or
 * absurd, a row with a NULL name or function, a bad signature or duplicate name: the
 * message names the row), TSL_ERR_UNSUPPORTED (the object's TSL_AOT_TARGET_SYMBOL names
 * another architecture or a CPU feature this machine lacks: the message names it; also
 * a signature this build cannot call, see tsl_module_add_kernel), TSL_ERR_IO (no such file, or dlopen failed: the message
 * carries dlerror()), TSL_ERR_NOMEM. */
tsl_status tsl_module_load_so(const char *path, tsl_module **out);

#ifdef __cplusplus
}
#endif
#endif
