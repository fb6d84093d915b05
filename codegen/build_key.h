/* The key of a kernel in the level-1 build cache (codegen/jit_cache.h): what decides
 * the lowered kernel, written as one canonical text and hashed, so that tsl_build can
 * find the kernel's object before it lowers anything.
 *
 * The text is complete by construction rather than by printing conventions: it walks
 * every field of the structures lowering reads, namely the schedule's program (inputs,
 * outputs and every stage of it), every stage of the schedule (its op with axes, body,
 * tag and inputs; its iters with domains and annotations; relations; attachment;
 * storage alignment; prefetches), and the step list. Float constants are written as
 * their IEEE bits (and %a), integers in full, strings with their length, variables and
 * buffers by identity (numbered in order of first appearance, with their name, type,
 * shape, strides, alignment and kind at first appearance). An expression kind it does
 * not know makes the key fail (no level-1 caching) rather than be skipped.
 *
 * Besides that it holds the kernel name, the lowering options, the JIT context
 * (tsl_jit_cache_ctx: target, CPU, features, LLVM and tessel versions) and the
 * identity of the tessel code (tsl_build_code_id), so that a rebuilt tessel whose
 * lowering may differ never uses an entry another build made.
 */
#ifndef TESSEL_CODEGEN_BUILD_KEY_H
#define TESSEL_CODEGEN_BUILD_KEY_H

#include "codegen/jit_cache.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The identity of the tessel code in this process: "gnu-build-id:<hex>" of the loaded
 * ELF object (executable or shared library) that contains tsl_build, read from its
 * NT_GNU_BUILD_ID note in memory (dl_iterate_phdr; no file I/O). The linker computes
 * the build id over the linked output, so any change of the code (or of the compiler
 * or flags that built it) gives another id. Without a build-id note, "file:<size>:<hash>"
 * of the object's file contents (/proc/self/exe for the main program, read once). Computed once per process; the
 * string is static. NULL when neither is available: then the level-1 cache is off, as
 * entries could not be told apart from those of other builds. */
const char *tsl_build_code_id(void);

/* The canonical text of kernel `name` built from s with opts under JIT context ctx
 * (see the top of this file), malloc'd (caller frees). Errors: TSL_ERR_INVALID for NULL arguments or a node the writer
 * does not know, TSL_ERR_UNSUPPORTED without a code identity, TSL_ERR_NOMEM. */
tsl_status tsl_build_key_text(const tsl_schedule *s, const char *name, const tsl_lower_options *opts,
                              const char *ctx, char **out);

/* The 128-bit key of that text (tsl_jit_cache_key_of of the text under ctx).
 * Errors: as tsl_build_key_text. */
tsl_status tsl_build_cache_key(const tsl_schedule *s, const char *name, const tsl_lower_options *opts,
                               const char *ctx, tsl_jit_cache_key *out);

#ifdef __cplusplus
}
#endif
#endif
