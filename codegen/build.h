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
 * stats may be NULL. Errors: those of tsl_lower and tsl_jit_compile. */
tsl_status tsl_build(const tsl_schedule *s, const char *name, tsl_jit *jit, tsl_module *m, tsl_func **func,
                     tsl_build_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
