/* Graph pass: the channel scale of a squeeze-excitation block folded into the next
 * convolution, so no full-tensor Mul pass remains.
 *
 * Squeeze-excitation (Hu et al. 2018, "Squeeze-and-Excitation Networks"; MobileNetV3,
 * EfficientNet, RegNetY, LR-ASPP) ends in
 *     m = Mul(x, s)          x [N, C, H, W], s [N, C, 1, 1] (the gate; either operand order)
 *     y = Conv(m, W, ...)    W [K, C, 1, 1], group 1 (the block's 1x1 projection)
 * and since conv(x * s, W)[n, k] = sum_c W[k, c] * s[n, c] * x[n, c] = conv(x, W * s[n])
 * the pass rewrites it to
 *     y = Conv(x, W, B, R, s)   input 4: the per-(image, input channel) scale s of the
 *                               data, TSL_ATTR_CHANNEL_SCALE set (bias, residual and
 *                               activation kept; B and R may be -1)
 * The blocked conv path (models/compile_conv.h) computes it without touching the image
 * twice: the GEMM 1x1 kernel scales the weight per image and output-channel tile in its
 * outer loop (conv2d_nchwc_1x1_bias_scale, ops/conv2d/conv2d_nchwc.c: K*C multiplies per
 * image instead of C*H*W, and the image is read once, by the conv); a 1x1 conv of one
 * image the GEMM does not take (strided) gets a step scaling its transformed weight
 * (conv_weight_channel_scale, ops/nn/layout.c) before the conv.
 *
 * Matched after layout selection only: a blocked 1x1 conv (TSL_ATTR_BLOCKED_WEIGHTS,
 * constant OIHW weight, group 1) reading the Mul's output as its data, the only reader of
 * it, the Mul's output no graph output, x and s blocked alike; N = 1, or any N with
 * stride 1 and no padding (the GEMM 1x1 kernel); and K < H*W: scaling the weight costs
 * K*C per image, the Mul C*H*W (on the 7 x 7 blocks of RegNetY-400MF, K = 440, and
 * EfficientNet-B0, K = 192 / 320, the scaled GEMM took 0.01-0.06 ms more than conv + Mul
 * at 1 thread: the weight pass is a stream over the cold weight the Mul does not have).
 * Otherwise the Mul stays a broadcast kernel of its own. The gate may have other readers.
 */
#ifndef TESSEL_MODELS_PASSES_FUSE_CHANNEL_SCALE_H
#define TESSEL_MODELS_PASSES_FUSE_CHANNEL_SCALE_H

#include "models/graph.h"
#include "tessel/status.h"

/* On a Conv node: int 1 when input 4 scales its data per image and input channel. */
#define TSL_ATTR_CHANNEL_SCALE "tsl_channel_scale"

/* Rewrites in place; *fused (may be NULL) receives the number of Mul nodes folded. Value
 * and node ids change (the graph is sorted and pruned). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_pass_fuse_channel_scale(tsl_graph *g, int *fused);

/* The channel scale value of Conv node n (input 4 with TSL_ATTR_CHANNEL_SCALE), or -1. */
int tsl_conv_channel_scale(const tsl_node *n);

#endif
