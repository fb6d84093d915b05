/* Lowering: a scheduled tensor-expression program -> a loop-nest IR kernel.
 *
 * The pipeline follows TVM's ScheduleOps + lowering passes (and Halide's Lower.cpp for
 * the debug printing):
 *   1. inline every compute_inline stage into its readers (substitution of its body),
 *   2. bound inference over the attach tree (schedule/bound.c): a stage computed at a
 *      loop of another realizes exactly the region that one iteration of that loop reads,
 *   3. one loop nest per stage, leaves in loop order, every loop running from 0, split
 *      and fuse relations turned into index expressions, reductions as an init store of
 *      the combiner identity just above the outermost reduction loop followed by
 *      out = combine(out, source) under the reduction condition (a float sum of a product
 *      accumulates with one fused multiply-add, out = fma(a, b, out), in every schedule,
 *      so all schedules round alike), stages computed at a loop placed (in their
 *      allocation) at the top of that loop's body, compute_root intermediates wrapped in
 *      an allocation enclosing their producer and consumers, prefetch pragmas as
 *      prefetch evaluations at the top of their loop's body. Tails are `if
 *      (likely(cond))` guards: a split whose factor does not divide, and the domain of a
 *      stage whose region under compute_at may cross its tensor's edge,
 *   4. the IR passes in order (ir/passes/): guard_loads, storage_flatten, simplify,
 *      native_vectors, loop_partition, simplify, unroll, simplify, vectorize, simplify.
 * With the environment variable TSL_DEBUG containing "lower", the name of each step and
 * the IR after it are printed to stderr.
 */
#ifndef TESSEL_SCHEDULE_LOWER_H
#define TESSEL_SCHEDULE_LOWER_H

#include "ir/ir.h"
#include "schedule/schedule.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How tails are made (shared/cases C01, class 1). */
typedef enum tsl_tail_strategy {
  /* Loop partitioning: each loop whose guards can be decided on a range of its variable
   * is cut into a main loop without the guards and prologue/epilogue loops that keep
   * them, so the main body has no branches and no masks. */
  TSL_TAIL_PARTITION = 0,
  /* The guards stay in the innermost body (masks inside vectorized loops). */
  TSL_TAIL_GUARD = 1
} tsl_tail_strategy;

typedef struct tsl_lower_options {
  tsl_tail_strategy tail;
  /* The target's native vector register width in bits (target/target.h vector_bits):
   * a vectorized loop wider than one register of its widest element type becomes
   * unrolled register-wide vectors (plus a narrower remainder). 0: one vector as wide as
   * the loop. */
  int vector_bits;
  /* Most copies of one body that nested unrolled loops may make (class 20); <= 0 means
   * TSL_UNROLL_MAX_ITERATIONS. */
  int64_t max_unroll;
  /* true: no TSL_DEBUG=lower trace of this lowering (for lowerings made only to learn
   * whether a schedule lowers, e.g. tsl_user_schedule_lowers, or to read a candidate's
   * loop nest, the cost model's IR features; so the trace shows the kernels that are
   * built). */
  bool quiet;
} tsl_lower_options;

/* The defaults: TSL_TAIL_PARTITION, vector_bits 0, max_unroll TSL_UNROLL_MAX_ITERATIONS,
 * quiet false.
 * Partitioning is the faster tail strategy, measured through the JIT on this project's
 * x86-64 host (Zen 3, AVX2; best of 15 runs, one thread), where guarded tails put masked
 * loads and stores (microcoded vmaskmov on Zen) on every access of the main body and keep
 * accumulators out of registers:
 *   matmul 500^3, 6x16 register block + packed B panel:  4.1 ms partitioned, 158 ms guarded
 *   matmul 250^3, 4x16 unrolled + vectorized tiles:      0.65 ms partitioned, 9.6 ms guarded
 *   conv 1x32x54x54 -> 30, 3x3 pad 1, 4x8 output tiles:  3.2 ms partitioned, 35.7 ms guarded
 * Callers that compile for a target should set vector_bits from it (target/target.h). */
tsl_lower_options tsl_lower_options_default(void);

/* Lowers s to the kernel `kernel_name`. The kernel's arguments are the program's inputs,
 * then its outputs, in the program's order: one TSL_BUF_ARG buffer per tensor (same
 * name, dtype and shape), and every load and store of that tensor in the kernel names
 * that same tsl_buffer object, so args[i].buf identifies the i-th tensor. The body is
 * flattened (one element-offset index per access, row-major) and carries no unrolled or
 * vectorized loops any more (they became copies and vector lanes).
 * The IR is built in the current arena; the schedule is not changed.
 * Errors: TSL_ERR_INVALID for an empty name, a program that fails tsl_te_check, or an
 * input/output listed twice; TSL_ERR_SCHEDULE naming the stage and axis for unrolled
 * loops making more than max_unroll copies of a body, a vectorized axis of more than
 * TSL_VECTORIZE_MAX_LANES iterations, a prefetch whose region cannot be bounded, or a
 * vectorized loop that cannot run on lanes, or a vector_width step wider than
 * opts->vector_bits (when set). A vector_width step sets the width vectorized loops are
 * cut to and the kernel's tsl_func.vector_bits (codegen compiles for it). *out is NULL
 * on error.
 * tsl_lower uses tsl_lower_options_default(); opts NULL means the same. */
tsl_status tsl_lower(const tsl_schedule *s, const char *kernel_name, tsl_func **out);
tsl_status tsl_lower_with(const tsl_schedule *s, const char *kernel_name, const tsl_lower_options *opts,
                          tsl_func **out);

#ifdef __cplusplus
}
#endif
#endif
