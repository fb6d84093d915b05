/* Target machines, the O3 pipeline, LLVM IR and assembly text. */
#include "codegen/machine.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/llvm.h"
#include "codegen/loop_trips.h"
#include "codegen/target_backend.h"

tsl_status tsl_codegen_target_machine(const tsl_target *t, const char *extra_features, bool for_jit,
                                      LLVMTargetMachineRef *out) {
  const tsl_target_backend *be = tsl_target_backend_of(t->arch);
  if (!be) return tsl_error(TSL_ERR_UNSUPPORTED, "target %s: no backend", t->name);
  be->initialize_llvm();
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &err)) {
    tsl_status st = tsl_error(TSL_ERR_CODEGEN, "target %s: LLVM has no target for triple %s: %s", t->name,
                              t->triple, err ? err : "");
    LLVMDisposeMessage(err);
    return st;
  }
  size_t n = strlen(t->features) + (extra_features ? strlen(extra_features) : 0) + 2;
  char *features = malloc(n);
  if (!features) return tsl_error(TSL_ERR_NOMEM, "target %s: out of memory", t->name);
  snprintf(features, n, "%s%s%s", t->features, extra_features && *extra_features && t->features[0] ? "," : "",
           extra_features ? extra_features : "");
  *out = LLVMCreateTargetMachine(target, t->triple, t->cpu, features, LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                 for_jit ? LLVMCodeModelJITDefault : LLVMCodeModelDefault);
  free(features);
  if (!*out) return tsl_error(TSL_ERR_CODEGEN, "target %s: LLVM refused to create a target machine", t->name);
  return TSL_OK;
}

char *tsl_codegen_data_layout(LLVMTargetMachineRef tm) {
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  char *s = LLVMCopyStringRepOfTargetData(dl);
  char *copy = strdup(s);
  LLVMDisposeMessage(s);
  LLVMDisposeTargetData(dl);
  return copy;
}

tsl_status tsl_codegen_optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *what) {
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  /* As clang -O3: the C API leaves the SLP vectorizer off by default. */
  LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, 1);
  LLVMErrorRef err = LLVMRunPasses(m, "default<O3>", tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    tsl_status st = tsl_error(TSL_ERR_CODEGEN, "%s: optimization failed: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return st;
  }
  return TSL_OK;
}

static char *copy_text(const char *s, size_t n) {
  char *t = malloc(n + 1);
  if (!t) return NULL;
  memcpy(t, s, n);
  t[n] = '\0';
  return t;
}

/* Emits and optimizes f in a fresh context; the caller disposes module, TM, ctx. */
static tsl_status build(const tsl_func *f, const tsl_target *t, bool optimized, LLVMContextRef ctx,
                        LLVMTargetMachineRef *tm, LLVMModuleRef *m) {
  if (!f || !t) return tsl_error(TSL_ERR_INVALID, "codegen: NULL function or target");
  *m = NULL;
  tsl_status st = tsl_codegen_target_machine(t, NULL, false, tm);
  if (st != TSL_OK) return st;
  char *dl = tsl_codegen_data_layout(*tm);
  if (!dl) return tsl_error(TSL_ERR_NOMEM, "codegen %s: out of memory", f->name);
  st = tsl_codegen_emit(f, t, ctx, NULL, dl, m);
  free(dl);
  if (st != TSL_OK) return st;
  if (optimized) {
    char what[300];
    snprintf(what, sizeof what, "codegen %s", f->name);
    st = tsl_codegen_optimize(*m, *tm, what);
  }
  return st;
}

tsl_status tsl_codegen_llvm_ir(const tsl_func *f, const tsl_target *t, bool optimized, char **text) {
  if (!text) return tsl_error(TSL_ERR_INVALID, "codegen: NULL text");
  *text = NULL;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMTargetMachineRef tm = NULL;
  LLVMModuleRef m = NULL;
  tsl_status st = build(f, t, optimized, ctx, &tm, &m);
  if (st == TSL_OK) {
    char *s = LLVMPrintModuleToString(m);
    *text = copy_text(s, strlen(s));
    LLVMDisposeMessage(s);
    if (!*text) st = tsl_error(TSL_ERR_NOMEM, "codegen %s: out of memory", f->name);
  }
  if (m) LLVMDisposeModule(m);
  if (tm) LLVMDisposeTargetMachine(tm);
  LLVMContextDispose(ctx);
  return st;
}

/* Assembly of f for t (verbose: with LLVM's block and loop comments), and when loops is
 * non-NULL the loop trip counts of the optimized IR it came from. */
static tsl_status emit_asm(const tsl_func *f, const tsl_target *t, bool verbose, char **text, tsl_llvm_loop **loops,
                           int *nloops) {
  if (!text) return tsl_error(TSL_ERR_INVALID, "codegen: NULL text");
  *text = NULL;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMTargetMachineRef tm = NULL;
  LLVMModuleRef m = NULL;
  tsl_status st = build(f, t, true, ctx, &tm, &m);
  if (st == TSL_OK && loops) st = tsl_llvm_loop_trips(m, loops, nloops);
  if (st == TSL_OK) {
    LLVMModuleRef clone = LLVMCloneModule(m);
    char *err = NULL;
    LLVMMemoryBufferRef buf = NULL;
    LLVMSetTargetMachineAsmVerbosity(tm, verbose);
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, clone, LLVMAssemblyFile, &err, &buf)) {
      st = tsl_error(TSL_ERR_CODEGEN, "codegen %s: assembly emission failed: %s", f->name, err ? err : "");
      LLVMDisposeMessage(err);
    } else {
      *text = copy_text(LLVMGetBufferStart(buf), LLVMGetBufferSize(buf));
      LLVMDisposeMemoryBuffer(buf);
      if (!*text) st = tsl_error(TSL_ERR_NOMEM, "codegen %s: out of memory", f->name);
    }
    LLVMDisposeModule(clone);
  }
  if (st != TSL_OK && loops) {
    free(*loops);
    *loops = NULL;
    *nloops = 0;
  }
  if (m) LLVMDisposeModule(m);
  if (tm) LLVMDisposeTargetMachine(tm);
  LLVMContextDispose(ctx);
  return st;
}

tsl_status tsl_codegen_asm(const tsl_func *f, const tsl_target *t, char **text) {
  return emit_asm(f, t, false, text, NULL, NULL);
}

tsl_status tsl_codegen_asm_loops(const tsl_func *f, const tsl_target *t, char **text, tsl_llvm_loop **loops,
                                 int *nloops) {
  if (!loops || !nloops) return tsl_error(TSL_ERR_INVALID, "codegen: NULL loops");
  *loops = NULL;
  *nloops = 0;
  return emit_asm(f, t, true, text, loops, nloops);
}

/* (machine.h) */
char *tsl_codegen_host_missing_features(void) {
  char *host = LLVMGetHostCPUFeatures();
  size_t n = strlen(host) + 1;
  char *out = malloc(n);
  if (out) {
    out[0] = '\0';
    size_t len = 0;
    for (const char *p = host; *p;) {
      const char *end = strchr(p, ',');
      size_t k = end ? (size_t)(end - p) : strlen(p);
      if (k > 1 && p[0] == '-') {
        if (len) out[len++] = ',';
        memcpy(out + len, p, k);
        len += k;
        out[len] = '\0';
      }
      p = end ? end + 1 : p + k;
    }
  }
  LLVMDisposeMessage(host);
  return out;
}
