/* Build: schedule -> lowered kernel -> machine code in a module, in one call (TVM's
 * `tvm.build`). Used by tunecli, the tuner's builder and the graph compiler so the path
 * from a scheduled TE to a callable kernel exists once.
 */
#ifndef TESSEL_CODEGEN_BUILD_H
#define TESSEL_CODEGEN_BUILD_H

#include "codegen/jit.h"
#include "schedule/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Wall-clock costs of one build, in seconds. */
typedef struct tsl_build_stats {
  double lower_seconds;   /* schedule -> flattened loop IR (all IR passes) */
  double compile_seconds; /* LLVM IR emission + optimization + machine code */
} tsl_build_stats;

/* Lowers s as kernel `name` (schedule/lower.h, default options with the JIT target's
 * vector width, so a vectorized loop becomes register-wide vectors) and JIT-compiles it into m
 * (codegen/jit.h). The kernel's arguments are the program's inputs then outputs, all
 * pointers. If func is non-NULL it receives the lowered IR (in the current arena).
 * stats may be NULL.
 *
 * Cache (codegen/jit_cache.h). When the cache is enabled and func is NULL, the kernel is
 * first looked up by its schedule (level 1, key: codegen/build_key.h): a hit adds the
 * stored object to m (tsl_jit_add_object) without lowering or LLVM, and
 * stats->lower_seconds is 0. A miss (or an entry whose symbol this JIT already uses)
 * lowers and compiles through tsl_jit_compile_object, whose object cache is level 2,
 * then stores the kernel at level 1. A caller asking for the lowered IR (func non-NULL)
 * always lowers. stats->compile_seconds includes the key and the lookup.
 * Errors: TSL_ERR_INVALID for NULL s, name, jit or m; those of tsl_lower, tsl_jit_compile
 * and tsl_jit_add_object. */
tsl_status tsl_build(const tsl_schedule *s, const char *name, tsl_jit *jit, tsl_module *m, tsl_func **func,
                     tsl_build_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
