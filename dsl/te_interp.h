/* A direct interpreter of tensor expressions: the meaning of a TE program, point by
 * point, with no schedule, no lowering and no code generation.
 *
 * `tunecli run-op` and the tuner's correctness check compare compiled kernels with it.
 * Floats are evaluated in float64 (so the interpreter is the more accurate side of any
 * comparison) and rounded to the stage's dtype when stored; integers exactly in 64 bits
 * with the ir.h semantics: floor division and modulo, division by zero gives 0, wrap to
 * the type's width, float-to-integer casts truncate and saturate (NaN gives 0). It is
 * slow (a tree walk per element): use it on small shapes.
 */
#ifndef TESSEL_DSL_TE_INTERP_H
#define TESSEL_DSL_TE_INTERP_H

#include "dsl/te.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime dtype that holds elements of IR type t (lanes ignored; bool is stored
 * in 8 bits): the dtype of a tensor tsl_te_interpret takes for a buffer of type t. */
tsl_dtype tsl_te_dtype(tsl_type t);

/* Evaluates every stage of p.
 * inputs[i]: a runtime tensor with p->inputs[i]'s dtype and shape (any strides).
 * outputs[k]: a runtime tensor with p->outputs[k]'s dtype and shape; overwritten.
 * Errors: TSL_ERR_INVALID when a tensor's dtype or shape does not match (naming it) or a
 * read falls outside its tensor (naming the stage), TSL_ERR_UNSUPPORTED for f16
 * arithmetic or an intrinsic it does not evaluate (prefetch), TSL_ERR_NOMEM. */
tsl_status tsl_te_interpret(const tsl_te_program *p, const tsl_tensor *const *inputs, tsl_tensor *const *outputs);

#ifdef __cplusplus
}
#endif
#endif
