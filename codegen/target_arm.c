/* AArch64: named targets, LLVM initialization, vector width.
 *
 * Nothing else differs from the generic codegen: LLVM already selects the NEON
 * sequences the kernels need (vector popcount as cnt + uaddlp/uadalp, or udot with
 * +dotprod; fma as fmla), so no intrinsic is lowered differently here. */
#include <llvm-c/Target.h>
#include <pthread.h>
#include <string.h>

#include "codegen/target_backend.h"

/* Cortex-A53 (Raspberry Pi 3 class): 32 KiB L1d, 512 KiB shared L2.
 * Cortex-A76 (Raspberry Pi 5 class, v8.2-A with dotprod): 64 KiB L1d, 512 KiB L2. */
static const tsl_target_preset arm_presets[] = {
    {"armv8", "aarch64-linux-gnu", "cortex-a53", "+neon,+fp-armv8", 32 * 1024, 512 * 1024},
    {"armv8.2-a+dotprod", "aarch64-linux-gnu", "cortex-a76",
     "+neon,+fp-armv8,+v8.2a,+dotprod,+fullfp16", 64 * 1024, 512 * 1024},
};

static bool arm_matches_triple(const char *triple) {
  return strncmp(triple, "aarch64", 7) == 0 || strncmp(triple, "arm64", 5) == 0;
}

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

/* SVE's width is only known at run time; NEON's 128 bits is what schedules use. */
static int arm_vector_bits(const tsl_target *t) {
  (void)t;
  return 128;
}

static void arm_function_attributes(LLVMValueRef fn, const tsl_target *t) {
  (void)fn;
  (void)t;
}

const tsl_target_backend tsl_target_backend_arm = {
    .arch = TSL_ARCH_AARCH64,
    .arch_name = "aarch64",
    .presets = arm_presets,
    .npresets = (int)(sizeof arm_presets / sizeof arm_presets[0]),
    .matches_triple = arm_matches_triple,
    .initialize_llvm = arm_initialize_llvm,
    .vector_bits = arm_vector_bits,
    .function_attributes = arm_function_attributes,
};
