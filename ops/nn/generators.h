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

/* Part of "elemwise" (elemwise_generated.c asks it): out = x0 OP x1 (fname "add", "sub",
 * "mul" or "div", infix the DSL operator) on 4-D tensors in NCHW[x]c (all three with the
 * same block x), each input broadcasting numpy-style on any axis of size 1 (N, C, H or W:
 * a squeeze-excitation scale [N, C, 1, 1] times the block's activations). Viewed as
 * stored, [N, ceil(C/x), H, W, x]; the output's padding lanes are written 0 (guarded where
 * op(0, b) may not be: a broadcast channel, a division). broadcast_nchwc.c. */
tsl_status tsl_elemwise_broadcast_nchwc_text(const tsl_op_call *c, const char *fname, const char *infix,
                                             tsl_op_text *t);

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
 * is infinite), "add", "sub", "mul" or "div" (two inputs). Plain: numpy broadcasting of the
 * inputs (rank 0: a scalar) to the output's shape, flat when no input broadcasts.
 * Blocked: every argument blocked and of the output's shape, flat over the stored
 * elements (f(0) = 0: relu, add, sub, mul, a clip around 0). */
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

/* "space_to_depth": ONNX SpaceToDepth, attribute "blocksize" b dividing H and
 * W: output channel (by*b + bx)*C + c at (h, w) is x[c, h*b + by, w*b + bx]; x plain
 * [N, C, H, W], the output plain [N, C*b*b, H/b, W/b]. (A blocked output, written lane by
 * lane, ran 0.18-0.25 ms for ResNet-18's stem phases against 0.05 + 0.056 ms for this
 * kernel and the layout transform after it: not offered.) */
tsl_status tsl_space_to_depth_text(const tsl_op_call *c, tsl_op_text *t);

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

/* "channel_gather": output channels picked from the inputs (images [N, C_i, H, W] of the
 * output's N, H, W; all plain or all NCHW[x]c of one x) by affine pieces: integer
 * attribute "npieces" (1..TSL_CHANNEL_GATHER_MAX_PIECES) and attributes "piece0".. each
 * six integers (input, out_start, out_step >= 1, count >= 1, in_start, in_step): output
 * channel out_start + k*out_step = input `input`'s channel in_start + k*in_step for
 * k < count. The first piece holding a channel wins; channels no piece holds are 0.
 * Pieces of whole channel blocks copy blocks (dense vectors), the others pick lanes.
 * Errors: TSL_ERR_INVALID for a piece outside the inputs or the output, mixed layouts,
 * arguments of other N, H, W. */
#define TSL_CHANNEL_GATHER_MAX_PIECES 8
tsl_status tsl_channel_gather_text(const tsl_op_call *c, tsl_op_text *t);
/* The name of attribute "piece<p>" (a static string), NULL outside 0..MAX_PIECES-1. */
const char *tsl_channel_gather_piece_name(int p);

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

/* "squeeze_excite": the gate of a squeeze-excitation block in one kernel
 * (squeeze_excite.c): inputs x [N, C, H, W] NCHW[x]c, then plain W1 [CB, S, x], B1 [1, S, 1],
 * W2t [S, CB, x] (the second layer's weight transposed), B2 [1, CB, x], the channels
 * padded with zeros to CB = ceil(C / x) whole blocks; output [N, C, 1, 1] in x's block,
 *   out[n, c] = gate(sum_s W2t[s, c] * hidden(sum_c' W1[s, c'] * mean_hw x[n, c'] + B1[s]) + B2[c])
 * Attributes "hidden" and "gate" (strings; absent or "": identity): "Relu", "Clip" (floats
 * WHICH_attr0, WHICH_attr1: min, max) or a function of the activation table (its
 * attributes as WHICH_attr0, WHICH_attr1). Padding lanes of the output are 0. */
tsl_status tsl_squeeze_excite_text(const tsl_op_call *c, tsl_op_text *t);

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
