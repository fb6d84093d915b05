/* x86-64: named targets, LLVM initialization, vector width, function attributes. */
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "codegen/target_backend.h"

/* The x86-64 micro-architecture levels v3 and v4 (psABI), with their features
 * spelled out so that a JIT request can be checked against the host feature by
 * feature. Cache sizes are those of the common parts of each class (Haswell..Zen 3
 * client cores: 32 KiB L1d / 512 KiB L2; Skylake-SP..Zen 4 servers: 48 KiB / 1 MiB)
 * and only steer tiling defaults. */
static const tsl_target_preset x86_presets[] = {
    {"x86-64-avx2", "x86_64-pc-linux-gnu", "x86-64-v3",
     "+sse,+sse2,+sse3,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,"
     "+lzcnt,+movbe,+xsave",
     32 * 1024, 512 * 1024},
    {"x86-64-avx512", "x86_64-pc-linux-gnu", "x86-64-v4",
     "+sse,+sse2,+sse3,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,"
     "+lzcnt,+movbe,+xsave,+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl",
     48 * 1024, 1024 * 1024},
};

static bool x86_matches_triple(const char *triple) {
  return strncmp(triple, "x86_64", 6) == 0 || strncmp(triple, "amd64", 5) == 0;
}

static void x86_init_once(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser();
}

static void x86_initialize_llvm(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, x86_init_once);
}

static int x86_vector_bits(const tsl_target *t) {
  if (tsl_feature_string_has(t->features, "avx512f")) return 512;
  if (tsl_feature_string_has(t->features, "avx")) return 256;
  return 128;
}

/* Without "min-legal-vector-width", LLVM splits 512-bit vector IR into 256-bit
 * halves on CPUs tuned to prefer 256-bit vectors (Skylake-SP, x86-64-v4); the
 * schedule chose the width on purpose, so keep it legal. */
static void x86_function_attributes(LLVMValueRef fn, const tsl_target *t) {
  char width[16];
  snprintf(width, sizeof width, "%d", x86_vector_bits(t));
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
  LLVMAttributeRef a = LLVMCreateStringAttribute(ctx, "min-legal-vector-width", 22, width,
                                                 (unsigned)strlen(width));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
  LLVMAttributeRef p = LLVMCreateStringAttribute(ctx, "prefer-vector-width", 19, width,
                                                 (unsigned)strlen(width));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, p);
}

const tsl_target_backend tsl_target_backend_x86 = {
    .arch = TSL_ARCH_X86_64,
    .arch_name = "x86_64",
    .presets = x86_presets,
    .npresets = (int)(sizeof x86_presets / sizeof x86_presets[0]),
    .matches_triple = x86_matches_triple,
    .initialize_llvm = x86_initialize_llvm,
    .vector_bits = x86_vector_bits,
    .function_attributes = x86_function_attributes,
};
