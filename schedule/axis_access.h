/* How a stage's root axes walk memory: which axes may be vectorized (issue 16, the
 * auto-scheduler's sketch rules, tuner/sketch.h, and the generic default schedule,
 * ops/nn/default_schedule.h). After Ansor's CPU rules (Zheng et al.,
 * OSDI 2020, section 4.1, and TVM's auto_scheduler "NeedsMultilevelTiling" /
 * "vectorize the innermost contiguous spatial loop"): a vector of lanes along axis a is
 * one load or store only when every access moves by one element (or not at all) as a
 * advances; along a strided axis each lane is a separate cache line (a gather), which is
 * slower than the scalar loop.
 *
 * The accesses of a stage: its write out[axes...] (a spatial axis d moves by the
 * row-major stride of dimension d, a reduction axis by 0) and every tensor read of its
 * body, reads of injective producers inlined into it followed through their bodies
 * (the producer's axes replaced by the consumer's index expressions). A read's index
 * is flattened row-major (in the producer stage's storage_order when it has one); its
 * stride in axis a is the linear coefficient of a.
 *
 * An axis is CONTIGUOUS when at least one access moves by exactly +1 element per step of
 * the axis and every access moves by 0 or +1, or, in the last dimension only, by a
 * quotient or remainder of such an index by a positive constant (x / 2, x % 2 of a
 * transposed convolution: neighbouring lanes touch the same or the next element). A min
 * or max of two linear indices that the axes' ranges decide (min(cb*16 + c, 31) with
 * cb < 2, c < 16 is always its first operand) is that operand, as lowering's
 * simplifier makes it. Any
 * other dependence (a stride of 2 or more, a negative or non-constant stride, an index
 * read from memory, a select or an undecided min/max in an index) makes the axis STRIDED.
 */
#ifndef TESSEL_SCHEDULE_AXIS_ACCESS_H
#define TESSEL_SCHEDULE_AXIS_ACCESS_H

#include <stdbool.h>

#include "schedule/schedule.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_AXIS_ACCESS_MAX 16

/* Whether each root axis of stage st of schedule s (st->iters[0 .. st->nroot): the op's
 * spatial axes, then its reduction axes) is contiguous (above); contiguous[a] for a <
 * min(nroot, TSL_AXIS_ACCESS_MAX), the rest false. Producers count as inlined when
 * their stage in s is attached TSL_ATTACH_INLINE. Errors: TSL_ERR_INVALID (NULL
 * argument, a stage with more than TSL_AXIS_ACCESS_MAX root axes: the message names it). */
tsl_status tsl_axis_contiguous(const tsl_schedule *s, const tsl_stage *st, bool *contiguous);

/* Whether the consecutive spatial root axes first..last of st (first outermost) fused
 * into one axis make a contiguous axis (above): last is contiguous and in every access
 * each axis a of first..last-1 moves by exactly the span of one step of the axes inside
 * it (extents a+1..last times last's stride), with no quotient or other non-linear use
 * of any of them. Then fuse(first, ..., last) walks memory in unit steps: an
 * elementwise 1x256x56x56 with its rows fused is 196 vectors of 16 per channel, no
 * 56 = 3 x 16 + 8 tail per row. Errors: those of tsl_axis_contiguous; TSL_ERR_INVALID
 * when first..last are not spatial axes of st. */
tsl_status tsl_axis_fusable(const tsl_schedule *s, const tsl_stage *st, int first, int last, bool *fusable);

/* The root axes of st (bit a for st->iters[a]) on which the index of some read of
 * buffer buf by st depends (reads through inlined producers included): a producer of
 * buf attached inside a loop of st over any other axis is recomputed on every
 * iteration of that loop. 0 when st does not read buf. Errors: those of
 * tsl_axis_contiguous. */
tsl_status tsl_axis_read_deps(const tsl_schedule *s, const tsl_stage *st, const tsl_buffer *buf, unsigned *deps);

/* The same per dimension of buf: deps[d] (bit a for st->iters[a]) the root axes the
 * index of dimension d depends on in some read of buf by st; buf->ndim entries. Errors:
 * those of tsl_axis_contiguous; TSL_ERR_INVALID for more than TSL_AXIS_ACCESS_MAX
 * dimensions. */
tsl_status tsl_axis_read_dim_deps(const tsl_schedule *s, const tsl_stage *st, const tsl_buffer *buf, unsigned *deps);

#ifdef __cplusplus
}
#endif
#endif
