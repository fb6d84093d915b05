/* tessel — the schedule a graph kernel gets when no tuning record covers it.
 *
 * Generic, for any program the graph compiler generates (models/node_kernels.h):
 * injective stages inlined (tsl_schedule_create), then on the output stage the
 * outermost axes fused and run in parallel on the thread pool (a flattened one-axis
 * stage: the outer loop of its vector split; a stage of fewer than 2^14 element
 * operations stays serial, below the pool's fork/join cost), and the innermost
 * spatial axis vectorized by the target's lanes when it is long enough (the tail is
 * guarded by lowering). Operator-specific templates replace it as they exist: a
 * program tagged "dense_packed" (a fully connected layer over a packed weight,
 * models/passes/pack_dense.h) gets the dense template's GEMV schedule
 * (ops/nn/nn_schedule.h, default knobs); one tagged "lutconv" (the lookup-table 1x1 conv
 * of unipolar bit planes) gets its schedule (ops/binary/lutconv.h).
 */
#ifndef TESSEL_OPS_NN_DEFAULT_SCHEDULE_H
#define TESSEL_OPS_NN_DEFAULT_SCHEDULE_H

#include <stdbool.h>

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default schedule of p for target t in *out (caller frees with
 * tsl_schedule_free). Errors: those of the schedule steps (a tessel bug), NOMEM. */
tsl_status tsl_default_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out);

/* Whether the default schedule of p is to be kept over the auto-scheduler's (models/
 * plan_build.c): a hand-written one (the dense template's GEMV for a "dense_packed"
 * program, or the squeeze-excitation gate's: output tagged "squeeze_excite",
 * ops/nn/squeeze_excite.c, its sums vectorized along the lanes with the reduction loop
 * outside the block loop, the larger ones split in parallel parts; the lookup-table conv's,
 * ops/binary/lutconv.h). */
bool tsl_default_schedule_is_hand(const tsl_te_program *p);

#ifdef __cplusplus
}
#endif
#endif
