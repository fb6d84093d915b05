/* AArch64: LLVM initialization (named targets, triples and vector widths:
 * target/arch.c).
 *
 * Nothing else differs from the generic codegen: LLVM already selects the NEON
 * sequences the kernels need (vector popcount as cnt + uaddlp/uadalp, or udot with
 * +dotprod; fma as fmla), so no intrinsic is lowered differently here. */
#include <llvm-c/Target.h>
#include <pthread.h>

#include "codegen/target_backend.h"

static void arm_init_once(void) {
  LLVMInitializeAArch64TargetInfo();
  LLVMInitializeAArch64Target();
  LLVMInitializeAArch64TargetMC();
  LLVMInitializeAArch64AsmPrinter();
  LLVMInitializeAArch64AsmParser();
}

static void arm_initialize_llvm(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, arm_init_once);
}

static void arm_function_attributes(LLVMValueRef fn, const tsl_target *t) {
  (void)fn;
  (void)t;
}

const tsl_target_backend tsl_target_backend_arm = {
    .arch = TSL_ARCH_AARCH64,
    .initialize_llvm = arm_initialize_llvm,
    .function_attributes = arm_function_attributes,
};
