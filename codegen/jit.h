/* Just-in-time compilation of lowered kernels for the machine tessel runs on
 * (LLVM ORC LLJIT), registering them in a runtime module (runtime/module.h).
 *
 * One tsl_jit is meant to compile many kernels (an autotuner compiles thousands):
 * it keeps one LLJIT session and one optimization target machine, and gives every
 * kernel a unique symbol. Each kernel's code belongs to the module it was
 * registered in: the first compile into a module makes that module an owner of the
 * JIT (tsl_module_set_owner), so freeing the module frees its kernels' machine code
 * and drops its reference to the JIT. The JIT is destroyed when the caller's
 * reference (tsl_jit_free) and every such module are gone. So an application that
 * wants one thing to free calls tsl_jit_free right after its last compile and later
 * frees only the module; a tuner keeps its JIT and frees each candidate's module.
 * A module must take kernels from one JIT only, and nothing else may set its owner.
 *
 * Thread safety: compiles on one tsl_jit are serialized by a lock (use several JITs
 * to compile in parallel); modules may be freed from any thread.
 */
#ifndef TESSEL_CODEGEN_JIT_H
#define TESSEL_CODEGEN_JIT_H

#include "ir/ir.h"
#include "runtime/module.h"
#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_jit tsl_jit;

/* A JIT compiling for target t (copied), which must run on this machine: the host,
 * or a named target of the host's architecture whose every feature the host has
 * (features the host lacks are also switched off, so a -mcpu= override cannot bring
 * them back). Generated code calls tsl_parallel_for, tsl_kernel_alloc and
 * tsl_kernel_free (defined at their addresses in this process) and libm/libc
 * functions (resolved in the process).
 * Errors: TSL_ERR_UNSUPPORTED when t cannot run here (the message names the target
 * and the missing architecture or feature; cross targets are compiled ahead of
 * time instead), TSL_ERR_CODEGEN when LLVM cannot create the session,
 * TSL_ERR_INVALID for NULL arguments, TSL_ERR_NOMEM. */
tsl_status tsl_jit_new(const tsl_target *t, tsl_jit **out);

/* Drops the caller's reference; the JIT is destroyed once no module compiled by it
 * remains either. NULL is a no-op. */
void tsl_jit_free(tsl_jit *j);

/* The target the JIT compiles for. */
const tsl_target *tsl_jit_target(const tsl_jit *j);

/* Compiles f (lowered, storage-flattened IR) to machine code and adds it to module
 * m as kernel f->name, with the signature from f->args (tsl_codegen_kernel_sig:
 * buffers PTR; scalars I32/I64/F32/F64/PTR by type). The LLVM symbol is f->name
 * sanitized to [A-Za-z0-9_], suffixed "_N" when this JIT already used it or the
 * process defines it. Pipeline: IR emission, verification, "default<O3>", machine
 * code (at lookup). compile_seconds (may be NULL) receives the wall time of all of
 * it in seconds. Makes m an owner of the JIT (see the top of this file).
 * Errors: TSL_ERR_CODEGEN (emission, verification, optimization or machine code
 * failed; the message says which and why), TSL_ERR_UNSUPPORTED (argument types),
 * TSL_ERR_INVALID (NULL arguments, or f->name already in m), TSL_ERR_NOMEM. */
tsl_status tsl_jit_compile(tsl_jit *j, const tsl_func *f, tsl_module *m, double *compile_seconds);

/* A compiled kernel as a relocatable object file: what tsl_jit_add_object needs to
 * register it again without lowering or LLVM (the build cache, codegen/build.h). */
typedef struct tsl_jit_object {
  void *data;       /* the object file's bytes (malloc'd; tsl_jit_object_free) */
  size_t size;      /* bytes */
  char symbol[256]; /* the kernel's global symbol in the object */
  tsl_kernel_sig sig;
} tsl_jit_object;

/* Frees o->data and clears o. NULL is a no-op. */
void tsl_jit_object_free(tsl_jit_object *o);

/* tsl_jit_compile that also hands back the kernel's object (when obj is non-NULL):
 * obj->data is set only when the kernel went through the on-disk object cache (the
 * cache is enabled and the JIT has a cache context), since only then does an object
 * file exist; otherwise obj is cleared (data NULL). The caller frees obj with
 * tsl_jit_object_free. Errors: as tsl_jit_compile; obj is cleared on error. */
tsl_status tsl_jit_compile_object(tsl_jit *j, const tsl_func *f, tsl_module *m, double *compile_seconds,
                                  tsl_jit_object *obj);

/* Adds a ready object (made by tsl_jit_compile_object for a JIT of the same context,
 * see tsl_jit_cache_ctx) to module m as kernel `name` with obj->sig, linking
 * obj->symbol, exactly as tsl_jit_compile would have (m becomes an owner of the JIT;
 * the object's code is freed with m). The symbol cannot be renamed inside an object:
 * when this JIT already uses obj->symbol (or the process defines it), nothing is added
 * and *added is false (compile the kernel instead); otherwise *added is true. The
 * object's bytes are copied. Errors: TSL_ERR_INVALID (NULL arguments, an empty object,
 * or `name` already in m), TSL_ERR_CODEGEN (LLVM refused or could not link the
 * object; the message says which), TSL_ERR_NOMEM; errors of tsl_module_add_kernel. */
tsl_status tsl_jit_add_object(tsl_jit *j, tsl_module *m, const char *name, const tsl_jit_object *obj, bool *added);

/* The JIT context string of the on-disk caches (codegen/jit_cache.h
 * tsl_jit_cache_context of the JIT's target), owned by the JIT; NULL when the JIT has
 * none (out of memory at creation), in which case it uses no cache. */
const char *tsl_jit_cache_ctx(const tsl_jit *j);

#ifdef __cplusplus
}
#endif
#endif
