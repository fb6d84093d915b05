/* Lowering: a scheduled tensor-expression program -> a loop-nest IR kernel.
 *
 * The pipeline follows TVM's ScheduleOps + lowering passes (and Halide's Lower.cpp for
 * the debug printing):
 *   1. inline every compute_inline stage into its readers (substitution of its body),
 *   2. bound inference over the attach tree (schedule/bound.c),
 *   3. one loop nest per stage, leaves in loop order, split/fuse relations turned into
 *      index expressions, reductions as an init store of the combiner identity just
 *      above the outermost reduction loop followed by out = combine(out, source) under
 *      the reduction condition, intermediate compute_root stages wrapped in an
 *      allocation (TSL_BUF_LOCAL) that encloses their producer and consumers,
 *   4. the IR passes in order: guard_loads, storage_flatten, simplify, unroll, vectorize,
 *      simplify (ir/passes/).
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

/* Lowers s to the kernel `kernel_name`. The kernel's arguments are the program's inputs,
 * then its outputs, in the program's order: one TSL_BUF_ARG buffer per tensor (same
 * name, dtype and shape), and every load and store of that tensor in the kernel names
 * that same tsl_buffer object, so args[i].buf identifies the i-th tensor. The body is
 * flattened (one element-offset index per access, row-major) and carries no unrolled or
 * vectorized loops any more (they became copies and vector lanes).
 * The IR is built in the current arena; the schedule is not changed.
 * Errors: TSL_ERR_INVALID for an empty name, a program that fails tsl_te_check, or an
 * input/output listed twice; TSL_ERR_SCHEDULE for an unroll or vectorize beyond the
 * limits of ir/passes/unroll.h and vectorize.h. *out is NULL on error. */
tsl_status tsl_lower(const tsl_schedule *s, const char *kernel_name, tsl_func **out);

#ifdef __cplusplus
}
#endif
#endif
