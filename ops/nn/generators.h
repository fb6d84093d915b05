/* Internal to ops/nn: the generated operators of the nn family (ops/op_call.h), one
 * text function each, collected in generators.c. */
#ifndef TESSEL_OPS_NN_GENERATORS_H
#define TESSEL_OPS_NN_GENERATORS_H

#include "ops/op_call.h"

/* "softmax": out = exp(x - max) / sum(exp(x - max)) along attribute "axis" (0..ndim-1);
 * one input, one output of the same shape; viewed as outer x axis x inner. */
tsl_status tsl_softmax_text(const tsl_op_call *c, tsl_op_text *t);

/* "binary_nchwc": out = x0 OP x1 (attribute "function": "add", "sub", "mul", "div") on
 * 4-D tensors in NCHW[x]c (all three with the same block x), each input broadcasting
 * numpy-style on any axis of size 1 (N, C, H or W: a squeeze-excitation scale
 * [N, C, 1, 1] times the block's activations). Viewed as stored, [N, ceil(C/x), H, W, x];
 * the output's padding lanes are written 0. */
tsl_status tsl_broadcast_nchwc_text(const tsl_op_call *c, tsl_op_text *t);

#endif
