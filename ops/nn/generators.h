/* Internal to ops/nn: the generated operators of the nn family (ops/op_call.h), one
 * text function each, collected in generators.c. */
#ifndef TESSEL_OPS_NN_GENERATORS_H
#define TESSEL_OPS_NN_GENERATORS_H

#include "ops/op_call.h"

/* "softmax": out = exp(x - max) / sum(exp(x - max)) along attribute "axis" (0..ndim-1);
 * one input, one output of the same shape; viewed as outer x axis x inner. */
tsl_status tsl_softmax_text(const tsl_op_call *c, tsl_op_text *t);

#endif
