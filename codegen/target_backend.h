/* Per-architecture pieces of code generation (internal to codegen/).
 *
 * codegen/llvm.c is target independent; everything that differs between
 * architectures in what LLVM needs lives behind this small table, one instance per
 * file (target_x86.c, target_arm.c): how LLVM's backend for it is initialized and
 * function attributes the backend needs to honour the schedule's vector width. The
 * LLVM-free facts of each architecture (named targets, triples, the vector width a
 * feature string implies) are target/arch.h.
 */
#ifndef TESSEL_CODEGEN_TARGET_BACKEND_H
#define TESSEL_CODEGEN_TARGET_BACKEND_H

#include <llvm-c/Core.h>

#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_target_backend {
  tsl_arch arch;
  /* Registers LLVM's target, MC layer and asm printer; idempotent, thread-safe. */
  void (*initialize_llvm)(void);
  /* Adds attributes to a generated function so that the backend keeps the
   * vector width the schedule chose (may do nothing). */
  void (*function_attributes)(LLVMValueRef fn, const tsl_target *t);
} tsl_target_backend;

extern const tsl_target_backend tsl_target_backend_x86;
extern const tsl_target_backend tsl_target_backend_arm;

/* The backend of an architecture (never NULL for a valid tsl_arch). */
const tsl_target_backend *tsl_target_backend_of(tsl_arch arch);

#ifdef __cplusplus
}
#endif
#endif
