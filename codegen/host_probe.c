/* Host detection through LLVM: the definition of target/host_probe.h's seam. */
#include "target/host_probe.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdio.h>
#include <string.h>

tsl_status tsl_target_probe_host(tsl_target *t) {
  char *triple = LLVMGetDefaultTargetTriple();
  char *cpu = LLVMGetHostCPUName();
  char *features = LLVMGetHostCPUFeatures();
  size_t features_len = strlen(features);
  snprintf(t->triple, sizeof t->triple, "%s", triple);
  snprintf(t->cpu, sizeof t->cpu, "%s", cpu);
  snprintf(t->features, sizeof t->features, "%s", features);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  if (features_len >= sizeof t->features)
    return tsl_error(TSL_ERR_UNSUPPORTED, "target host: feature string of %zu bytes is too long", features_len);
  return TSL_OK;
}
