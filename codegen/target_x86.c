/* x86-64: LLVM initialization and function attributes (named targets, triples and
 * vector widths: target/arch.c). */
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/machine.h"
#include "codegen/target_backend.h"
#include "target/arch.h"

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

/* Without "min-legal-vector-width", LLVM splits 512-bit vector IR into 256-bit
 * halves on CPUs tuned to prefer 256-bit vectors (Skylake-SP, x86-64-v4); the
 * schedule chose the width on purpose, so keep it legal. */
static void x86_function_attributes(LLVMValueRef fn, const tsl_target *t) {
  char width[16];
  snprintf(width, sizeof width, "%d", tsl_arch_info_of(TSL_ARCH_X86_64)->vector_bits(t));
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
  LLVMAttributeRef a = LLVMCreateStringAttribute(ctx, "min-legal-vector-width", 22, width,
                                                 (unsigned)strlen(width));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
  LLVMAttributeRef p = LLVMCreateStringAttribute(ctx, "prefer-vector-width", 19, width,
                                                 (unsigned)strlen(width));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, p);
  /* A target narrowed to 256 bits (target.h tsl_target_with_vector_bits: a schedule's
   * vector_width) turns off AVX-512, which its CPU name implies; the JIT's target machine
   * was made for the whole target, so the function itself says which features it may use
   * (LLVM makes a subtarget per function from this attribute, the vectorizer's cost model
   * included). */
  if (tsl_feature_string_disables(t->features, "avx512f")) {
    /* The attribute replaces the target machine's feature string for this function, so
     * a target other than the host keeps the features the host lacks switched off, as the
     * JIT's target machine has them (codegen/jit.c): its -mcpu= could enable them (a
     * kernel compiled ahead of time for another machine then only loses features this
     * one lacks, never gains one). */
    char *missing = t->is_host ? NULL : tsl_codegen_host_missing_features();
    size_t n = strlen(t->features) + (missing ? strlen(missing) + 1 : 0) + 1;
    char *fs = malloc(n);
    if (fs) snprintf(fs, n, "%s%s%s", t->features, missing && *missing ? "," : "", missing ? missing : "");
    const char *use = fs ? fs : t->features; /* out of memory: the narrowed features alone */
    LLVMAttributeRef f = LLVMCreateStringAttribute(ctx, "target-features", 15, use, (unsigned)strlen(use));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, f);
    free(fs);
    free(missing);
  }
}

const tsl_target_backend tsl_target_backend_x86 = {
    .arch = TSL_ARCH_X86_64,
    .initialize_llvm = x86_initialize_llvm,
    .function_attributes = x86_function_attributes,
};
