/* Internal to ops/nn: the generated operators of the nn family (ops/op_call.h), one
 * text function each, collected in generators.c. */
#ifndef TESSEL_OPS_NN_GENERATORS_H
#define TESSEL_OPS_NN_GENERATORS_H

#include "ops/op_call.h"

/* "softmax": out = exp(x - max) / sum(exp(x - max)) along attribute "axis" (0..ndim-1);
 * one input, one output of the same shape; viewed as outer x axis x inner. */
tsl_status tsl_softmax_text(const tsl_op_call *c, tsl_op_text *t);

/* "reduce": out = f over the axes of attribute "axes" (ints, each in 0..ndim-1, no
 * repeats; every axis when absent) of the one input, f = attribute "function": "sum",
 * "mean" (sum / count), "max" or "min" (NaN-propagating); plain layouts. The output
 * holds the kept extents in order (keepdims or not: same bytes). Adjacent kept or
 * reduced axes are merged: a reduction over the last axis of [N, H, W, C] reads
 * [N*H*W, C]. */
tsl_status tsl_reduce_text(const tsl_op_call *c, tsl_op_text *t);

/* "layer_norm": ONNX LayerNormalization over the axes "axis".."end"-1 of input 0
 * (attributes "axis" in 0..ndim-1, "end" in axis+1..ndim, default ndim: the trailing
 * axes as ONNX has it; float "epsilon"): per index of the other axes, mean and biased
 * variance over the normalized ones in one kernel, out = (x - mean) /
 * sqrt(var + epsilon) * scale + bias; inputs x, scale, [bias], scale and bias
 * broadcasting (numpy, right-aligned) to the normalized axes; outputs y and optionally
 * the mean and 1 / sqrt(var + epsilon) of each row. Plain layouts, or NCHW[x]c data
 * normalized over its channels (axis 1, end 2; scale and bias plain [C]; one output,
 * its padding lanes zero). */
tsl_status tsl_layer_norm_text(const tsl_op_call *c, tsl_op_text *t);

/* "pow": ONNX Pow in f32. One input and the float attribute "exponent": x^e written
 * without pow() where a cheaper form is exact or correctly rounded (e = 1, 2: x*x,
 * 0.5: sqrt(x), -1: 1/x, 0: 1); 3: x*x*x; any other e: pow(x, e). Two inputs: pow(x, y)
 * with numpy broadcasting of both to the output. Plain layouts. */
tsl_status tsl_pow_text(const tsl_op_call *c, tsl_op_text *t);

/* ---- helpers of the generators (axes.c) ---- */

/* Groups the axes dims[0..nd) by class cls[d] (a bit mask, e.g. "reduced" or "operand k
 * broadcasts here"): extent-1 axes are dropped (only index 0 exists there) and adjacent
 * axes of one class merged. Writes the groups' extents and classes; returns their
 * count, at least 1 (a single group of extent 1, class 0, when every axis is 1). */
int tsl_gen_group_axes(int nd, const int64_t *dims, const unsigned *cls, int64_t *gdims, unsigned *gcls);

/* Writes "<prefix>0, 0, <prefix>2, ..." for groups 0..n: "0" where gcls & zero_mask. */
void tsl_gen_put_index(tsl_text_buf *b, const char *prefix, int n, const unsigned *gcls, unsigned zero_mask);

/* The view of an operand over groups: 1 where gcls & bcast_mask, else the extent. */
void tsl_gen_operand_view(int n, const int64_t *gdims, const unsigned *gcls, unsigned bcast_mask, int64_t *view);

#endif
