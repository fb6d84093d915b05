/* Per-architecture pieces of code generation (internal to codegen/).
 *
 * codegen/llvm.c is target independent; everything that differs between
 * architectures lives behind this small table, one instance per file
 * (target_x86.c, target_arm.c): the named targets of the architecture, how LLVM's
 * backend for it is initialized, the vector width implied by a feature string, and
 * function attributes the backend needs to honour the schedule's vector width.
 */
#ifndef TESSEL_CODEGEN_TARGET_BACKEND_H
#define TESSEL_CODEGEN_TARGET_BACKEND_H

#include <llvm-c/Core.h>
#include <stdbool.h>
#include <stdint.h>

#include "codegen/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A named target of an architecture (target.h lists them). */
typedef struct tsl_target_preset {
  const char *name;
  const char *triple;
  const char *cpu;
  const char *features; /* every feature the kernels may use, spelled out ("+x,+y") so
                           that tsl_target_runs_on_host can check them one by one */
  int64_t l1d_bytes;
  int64_t l2_bytes;
} tsl_target_preset;

typedef struct tsl_target_backend {
  tsl_arch arch;
  const char *arch_name; /* "x86_64", "aarch64" */
  const tsl_target_preset *presets;
  int npresets;
  /* Does an LLVM triple belong to this architecture? */
  bool (*matches_triple)(const char *triple);
  /* Registers LLVM's target, MC layer and asm printer; idempotent, thread-safe. */
  void (*initialize_llvm)(void);
  /* Native vector register width in bits implied by t->features. */
  int (*vector_bits)(const tsl_target *t);
  /* Adds attributes to a generated function so that the backend keeps the
   * vector width the schedule chose (may do nothing). */
  void (*function_attributes)(LLVMValueRef fn, const tsl_target *t);
} tsl_target_backend;

extern const tsl_target_backend tsl_target_backend_x86;
extern const tsl_target_backend tsl_target_backend_arm;

/* The backend of an architecture (never NULL for a valid tsl_arch). */
const tsl_target_backend *tsl_target_backend_of(tsl_arch arch);
/* The backend whose architecture an LLVM triple names, or NULL. */
const tsl_target_backend *tsl_target_backend_for_triple(const char *triple);

/* Is `feature` (without '+') enabled ("+feature") in a comma-separated LLVM
 * feature string? */
bool tsl_feature_string_has(const char *features, const char *feature);

#ifdef __cplusplus
}
#endif
#endif
