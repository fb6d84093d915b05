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

/* "resize": ONNX Resize (resize.c). Input x of any rank, output y (its extents are the
 * output sizes). Attributes: "mode" ("nearest" | "linear": N-linear over the resized
 * axes), "coordinate_transformation_mode" (half_pixel, pytorch_half_pixel,
 * align_corners, asymmetric, tf_half_pixel_for_nn, half_pixel_symmetric), "nearest_mode"
 * (round_prefer_floor, round_prefer_ceil, floor, ceil, or "simple": floor where the axis
 * is upsampled, ceil where downsampled, as opset-10 Resize and Upsample), "scale_num" and
 * "scale_den" (ints, one per axis: each axis' scale as an exact ratio, see
 * ops/nn/resize.h). x and y may each be NCHW[x]c (rank 4, one block; N and C not
 * resized). */
tsl_status tsl_resize_text(const tsl_op_call *c, tsl_op_text *t);


/* "pad_mode": ONNX Pad in mode "reflect", "edge" or "wrap" (attribute "mode"; pad_modes.c).
 * Attribute "pads" (ints, 2 x rank: begins then ends, negative ones crop first); one
 * plain input, one plain output. */
tsl_status tsl_pad_mode_text(const tsl_op_call *c, tsl_op_text *t);

/* "prelu": y = x < 0 ? slope * x : x (prelu.c). Inputs x and slope (plain, unidirectionally
 * broadcast to x), output y in x's layout; x may be NCHW[x]c when the slope varies along
 * the channels only. */
tsl_status tsl_prelu_text(const tsl_op_call *c, tsl_op_text *t);

#endif
