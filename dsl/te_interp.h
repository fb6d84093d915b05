/* A direct interpreter of tensor expressions: the meaning of a TE program, point by
 * point, with no schedule, no lowering and no code generation.
 *
 * `tunecli run-op` and the tuner's correctness check compare compiled kernels with it.
 * Floats are evaluated in float64 (so the interpreter is the more accurate side of any
 * comparison), integers exactly in int64 with the ir.h semantics (floor division and
 * modulo, wrap-around to the type's width on casts and stores). It is slow (a tree walk
 * per element): use it on small shapes.
 */
#ifndef TESSEL_DSL_TE_INTERP_H
#define TESSEL_DSL_TE_INTERP_H

#include "dsl/te.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Evaluates every stage of p.
 * inputs[i]: the elements of p->inputs[i], row-major, as doubles (integers exact).
 * outputs[k]: room for tsl_buffer_numel(p->outputs[k]->buf) doubles, row-major.
 * Errors: TSL_ERR_INVALID when a read falls outside its tensor or an integer division
 * by zero happens (naming the stage), TSL_ERR_UNSUPPORTED for an intrinsic it does not
 * evaluate (prefetch), TSL_ERR_NOMEM. */
tsl_status tsl_te_interpret(const tsl_te_program *p, const double *const *inputs, double **outputs);

#ifdef __cplusplus
}
#endif
#endif
