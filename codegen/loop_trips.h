/* Trip counts of the loops of optimized LLVM IR, read from each loop's latch, for
 * tools that must know how often a block of machine code runs without running it (the
 * static cost model, tuner/cost_static.h).
 *
 * A loop is found by its back edge: a conditional branch in block L (the latch) to a
 * block H (the header) that comes at or before L in the function's block order (LLVM
 * lays out a loop's blocks after its header). Its trip count (executions of the latch)
 * is read from the canonical induction the O3 pipeline leaves: the branch condition is
 * `icmp PRED X, C` with C a constant and X either the header's phi `iv = phi [S,
 * outside], [iv + D, latch]` or that phi plus D, S and D constants; solving PRED for the
 * first exit gives the count (ScalarEvolution's computeExitLimit for the constant
 * case, without SCEV: the C API has none). Anything else (bounds from arguments, as in
 * a parallel task's chunk [begin, end), or a non-unit compare) is "unknown" (-1).
 */
#ifndef TESSEL_CODEGEN_LOOP_TRIPS_H
#define TESSEL_CODEGEN_LOOP_TRIPS_H

#include <llvm-c/Core.h>
#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_llvm_loop {
  char function[128]; /* the function's name */
  char header[128];   /* the header block's name ("" when unnamed) */
  int64_t trip;       /* executions of the latch per entry into the loop; -1 unknown */
} tsl_llvm_loop;

/* Every loop (back edge) of every function defined in m, in function then block order,
 * into *out (malloc'd; the caller frees it) and *n. Two back edges to one header count
 * once (the first one's count). Errors: TSL_ERR_INVALID (NULL arguments),
 * TSL_ERR_NOMEM. */
tsl_status tsl_llvm_loop_trips(LLVMModuleRef m, tsl_llvm_loop **out, int *n);

#ifdef __cplusplus
}
#endif
#endif
