/* Internal to ops/nn: the generated operators of the nn family (ops/op_call.h), one
 * text function each, collected in generators.c. Arguments are inputs then outputs;
 * "blocked" means NCHW[x]c (ops/op_text.h). Each checks its call and returns
 * TSL_ERR_INVALID / TSL_ERR_UNSUPPORTED naming itself and the attribute or argument. */
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

/* "pool2d": max or mean over a 2-D window of an NCHW image, plain or blocked (input and
 * output alike). Attributes: "mode" ("max" or "avg"), "kernel" (2), "strides" (2,
 * default 1 1), "dilations" (2, default 1 1), "pads" (4: top, left, bottom, right;
 * default 0), "count_include_pad" (avg: the divisor counts the padding too). A max
 * ignores the padding; the mean divides by the window's taps inside the input (or the
 * padded input). */
tsl_status tsl_pool2d_text(const tsl_op_call *c, tsl_op_text *t);

/* "global_avgpool": the mean over every axis past the channels: plain [N, C, ...] into
 * [N, C, 1, ...] (or [N, C]); blocked [N, C, H, W] into blocked [N, C, 1, 1] or plain
 * [N, C] (or [N, C, 1, 1]). */
tsl_status tsl_global_avgpool_text(const tsl_op_call *c, tsl_op_text *t);

/* "elemwise": attribute "op" = "relu", "clip" (attributes "min", "max"; an absent bound
 * is infinite), "add", "mul" or "div" (two inputs). Plain: numpy broadcasting of the
 * inputs (rank 0: a scalar) to the output's shape, flat when no input broadcasts.
 * Blocked: every argument blocked and of the output's shape, flat over the stored
 * elements (f(0) = 0: relu, add, mul, a clip around 0). */
tsl_status tsl_elemwise_text(const tsl_op_call *c, tsl_op_text *t);

/* "activation": f(x) of the activation table's row whose ONNX name is attribute
 * "function" (ops/nn/activation.h), its float attributes by their names (defaults from
 * the row); plain or blocked, one input and an output stored alike. */
tsl_status tsl_activation_text(const tsl_op_call *c, tsl_op_text *t);

/* "concat": the inputs one after another along attribute "axis" (negative: from the
 * end), all of the output's rank. Blocked: along the channels (axis 1) only. */
tsl_status tsl_concat_text(const tsl_op_call *c, tsl_op_text *t);

/* "split": one plain input cut along attribute "axis" into the outputs, in order (their
 * extents along the axis add up to the input's). */
tsl_status tsl_split_text(const tsl_op_call *c, tsl_op_text *t);

/* "slice": ONNX Slice with attributes "starts", optional "axes" and "steps" (as many
 * each; "ends" is the output's shape). Blocked: a run of channels (steps 1, the other
 * axes whole). */
tsl_status tsl_slice_text(const tsl_op_call *c, tsl_op_text *t);

/* "transpose": attribute "perm" (output axis d is input axis perm[d]; absent: the axes
 * reversed); plain. */
tsl_status tsl_transpose_text(const tsl_op_call *c, tsl_op_text *t);

/* "pad": constant padding; attribute "pads" (the begins of every axis, then the ends;
 * negative crops), "value" (finite, default 0); plain. */
tsl_status tsl_pad_text(const tsl_op_call *c, tsl_op_text *t);

/* "batch_norm": inference batch norm of x [N, C, ...] with scale, bias, mean, var (each
 * C values, plain), attribute "epsilon" (default 1e-5); x and the output plain or
 * blocked. */
tsl_status tsl_batch_norm_text(const tsl_op_call *c, tsl_op_text *t);

/* "channel_shuffle": ShuffleNet's shuffle of an NCHW image in attribute "group" groups;
 * plain or blocked. */
tsl_status tsl_channel_shuffle_text(const tsl_op_call *c, tsl_op_text *t);

#endif
