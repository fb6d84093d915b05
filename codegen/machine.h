/* LLVM target machines, the optimization pipeline, and text output (LLVM IR,
 * assembly) for any target, including cross targets that cannot run here. */
#ifndef TESSEL_CODEGEN_MACHINE_H
#define TESSEL_CODEGEN_MACHINE_H

#include <llvm-c/TargetMachine.h>
#include <stdbool.h>

#include "codegen/loop_trips.h"
#include "ir/ir.h"
#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A target machine for t (PIC, aggressive code generation; the JIT code model when
 * for_jit). extra_features (may be NULL or "") is appended to t->features: the JIT
 * uses it to switch off features the host lacks. The caller disposes *out
 * (LLVMDisposeTargetMachine). Errors: TSL_ERR_CODEGEN when LLVM does not know the
 * triple. */
tsl_status tsl_codegen_target_machine(const tsl_target *t, const char *extra_features, bool for_jit,
                                      LLVMTargetMachineRef *out);

/* The features this machine's CPU lacks, as "-a,-b,..." (from LLVM's host feature
 * string; "" when it lacks none), malloc'd (the caller frees it), or NULL when out of
 * memory. The JIT appends it to a non-host target's features so that the target's CPU
 * (possibly from -mcpu=) cannot enable them, and so does a kernel's own feature list
 * (a schedule's vector_width, codegen/target_x86.c). */
char *tsl_codegen_host_missing_features(void);

/* The data layout string of tm (malloc'd; the caller frees it), or NULL when out of
 * memory. */
char *tsl_codegen_data_layout(LLVMTargetMachineRef tm);

/* Optimizes m in place with LLVM's new pass manager, pipeline "default<O3>" (a
 * fixed string: user text never reaches LLVMRunPasses, whose parser aborts on
 * malformed pipelines), using tm's cost model. Errors: TSL_ERR_CODEGEN. */
tsl_status tsl_codegen_optimize(LLVMModuleRef m, LLVMTargetMachineRef tm, const char *what);

/* LLVM IR text of f compiled for t, before (optimized=false) or after the O3
 * pipeline. *text is malloc'd; the caller frees it with free().
 * Errors: as tsl_codegen_emit, and TSL_ERR_NOMEM. */
tsl_status tsl_codegen_llvm_ir(const tsl_func *f, const tsl_target *t, bool optimized,
                               char **text);

/* Assembly of f compiled (O3) for t, any target (cross targets included). Emitted
 * from a clone of the optimized module, since emission mutates it. *text is
 * malloc'd; the caller frees it. Errors: as tsl_codegen_emit, TSL_ERR_CODEGEN when
 * the target machine refuses to emit. */
tsl_status tsl_codegen_asm(const tsl_func *f, const tsl_target *t, char **text);

/* As tsl_codegen_asm, with LLVM's verbose comments (each block's IR name "%name" on its
 * label line, loop headers marked "=>This Inner Loop Header: Depth=D" or "=>This Loop
 * Header", enclosing loops as "Parent Loop BBf_n Depth=D"), and in *loops and *nloops
 * (malloc'd, the caller frees *loops) every loop of the optimized IR the assembly was
 * generated from with its trip count (codegen/loop_trips.h): what the static cost model
 * (tuner/cost_static.h) reads. Errors: as tsl_codegen_asm, TSL_ERR_INVALID (NULL loops
 * or nloops), TSL_ERR_NOMEM. */
tsl_status tsl_codegen_asm_loops(const tsl_func *f, const tsl_target *t, char **text, tsl_llvm_loop **loops,
                                 int *nloops);

#ifdef __cplusplus
}
#endif
#endif
