/* Pass: loop partitioning on likely conditions (Halide's PartitionLoops, TVM's
 * LoopPartition), and removal of the likely hints.
 *
 * Lowering guards tails with `if (likely(cond))` (a split whose factor does not divide
 * its extent, the domain of a stage computed at another's loop). For each serial,
 * parallel or unrolled loop `for (v, min, extent)` of constant bounds, every likely
 * condition in its body that is linear in v, `a*v + rest  <cmp>  0`, is solved for the
 * values of v where it holds whatever the other variables in it take within their loop
 * ranges (interval analysis; a constant bound is needed). The intersection [lo, hi) of
 * those ranges, when it is a proper non-empty part of the loop, splits the loop into a
 * prologue [min, lo), a main loop [lo, hi) in which those ifs are replaced by their
 * then-branch, and an epilogue [hi, min + extent) that keeps them (loop kinds kept; the
 * copies get fresh variables). When the conditions hold on the whole loop the ifs are
 * simply dropped. The pieces' inner loops are partitioned the same way, with the narrower
 * ranges (an epilogue of one iteration makes its inner conditions constant).
 * Vectorized loops are not partitioned: a tail there stays a lane mask.
 *
 * With partition false nothing is cut. In both cases every likely(c) becomes c, so later
 * passes see plain conditions.
 */
#ifndef TESSEL_IR_PASSES_LOOP_PARTITION_H
#define TESSEL_IR_PASSES_LOOP_PARTITION_H

#include <stdbool.h>

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

tsl_stmt *tsl_pass_loop_partition(tsl_stmt *s, bool partition);

#ifdef __cplusplus
}
#endif
#endif
