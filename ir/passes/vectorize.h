/* Pass: loop vectorization (Halide's VectorizeLoops, TVM's VectorizeLoop).
 *
 * Every TSL_FOR_VECTORIZED loop of constant extent n (1 < n <= TSL_VECTORIZE_MAX_LANES)
 * is replaced by its body evaluated once on n lanes: the loop variable becomes
 * ramp(min, 1, n); expressions that use it become vectors (affine index arithmetic stays
 * a ramp, so contiguous accesses stay dense vector loads/stores; other indices become
 * gathers/scatters); everything else stays scalar and is broadcast where it meets a
 * vector. Inner serial loops keep running (their bounds must not use the lanes), with
 * vector bodies. An if whose condition differs between lanes becomes a predicate: the
 * stores under it are predicated and the loads under it are predicated unless interval
 * analysis proves every lane in bounds — so a guarded tail (a split whose factor does not
 * divide the extent, shared/cases C01) never touches memory past a buffer's end.
 *
 * What cannot run on lanes is an error (never a silent serial loop, so a schedule that
 * asks for vectors gets them or hears why): a store whose address is the same for every
 * lane but whose value or predicate is not, an allocation, a parallel loop or a loop
 * whose bounds vary by lane inside the body, a nested vectorized loop (the inner one is
 * vectorized first), an impure call or horizontal reduction fed by the lanes. The
 * schedule refuses the steps that would lead there (schedule.h).
 * Extent 1 loops become their body with the variable replaced by min; extent 0 loops a
 * no-op. Vectorized loops inside a loop that stays scalar are still vectorized.
 */
#ifndef TESSEL_IR_PASSES_VECTORIZE_H
#define TESSEL_IR_PASSES_VECTORIZE_H

#include "ir/ir.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The widest vector a vectorized loop may produce (lanes). */
#define TSL_VECTORIZE_MAX_LANES 64

/* *out = s with no vectorized loop left. Errors: TSL_ERR_SCHEDULE naming the loop when a
 * vectorized loop has no constant extent, more than TSL_VECTORIZE_MAX_LANES iterations,
 * or a body that cannot run on lanes (the message says what); *out is then NULL. */
tsl_status tsl_pass_vectorize(tsl_stmt *s, tsl_stmt **out);

#ifdef __cplusplus
}
#endif
#endif
