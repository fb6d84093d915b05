/* Graph pass: the gate of a squeeze-excitation block as one node.
 *
 * Squeeze-excitation (Hu et al. 2018, "Squeeze-and-Excitation Networks"; MobileNetV3,
 * EfficientNet, RegNetY, LR-ASPP) computes its channel gate as
 *     p = GlobalAveragePool(x)                x [N, C, H, W] (or ReduceMean over H, W, keepdims)
 *     h = Conv(p, W1, B1) + hidden            W1 [S, C, 1, 1]; hidden fused by fuse_conv
 *                                             (Relu, Clip, SiLU, HardSwish, any table function)
 *     s = Conv(h, W2, B2) + gate              W2 [C, S, 1, 1]; gate Sigmoid, HardSigmoid,
 *                                             any table function, or none
 * three kernels, two of them convs on 1 x 1 images. The pass makes it one tsl.SqueezeExcite
 * node (graph.h; kernel ops/nn/squeeze_excite.c, "squeeze_excite"): inputs x, W1 as
 * [CB, S, x], B1 as [1, S, 1], W2 transposed to [S, CB, x], B2 as [1, CB, x] (channels
 * zero-padded to CB = ceil(C / x) whole blocks of x's layout, so both layers run on
 * vectors of lanes reading the weights in storage order; zeros for an absent bias); the functions as its "hidden"
 * and "gate" attributes; its output takes s's place (same layout). One launch instead of
 * three, and no [N, S, 1, 1] and [N, C, 1, 1] intermediates through memory.
 *
 * Matched after layout selection (the kernel is blocked only) and after fuse_conv: x and s
 * NCHW[x]c of one block, p a blocked [N, C, 1, 1] read only by the first conv, h read only
 * by the second, neither a graph output; both convs group 1 with constant f32 weights of
 * 1 x 1 windows, no padding, constant or absent bias, no residual and no channel scale
 * (fuse_channel_scale runs after). Any N, C, S (C and S need not fill a block) with C * S
 * at most TSL_SQUEEZE_EXCITE_MAX_WEIGHTS. Anything else stays as it is.
 *
 * Measured (tunecli --profile, sum of the SE kernels' per-call medians, znver5, load
 * 16-19): the gate is bound by reading its two weights, so one kernel saves launches,
 * not work (its larger sums run in parallel over slices of the blocks or hidden units,
 * ops/nn/default_schedule.c). With C * S <= 65536 the fused gates of EfficientNet-B0,
 * MobileNetV3-Large (5 of 8) and RegNetY-400MF took about what pool + fc1 + fc2 took at 1
 * and 2 threads (0.136-0.158 ms against 0.142-0.174, 0.087-0.117 against 0.091-0.114,
 * 0.138-0.144 against 0.133-0.136 at 2 threads); MobileNetV3-Large's three largest
 * (C * S = 112896, 230400: 1.8 MB of weights) took 0.05-0.09 ms each against 0.047 ms for
 * the two GEMM 1x1 convs, hence the bound.
 */
#ifndef TESSEL_MODELS_PASSES_SQUEEZE_EXCITE_H
#define TESSEL_MODELS_PASSES_SQUEEZE_EXCITE_H

#include "models/graph.h"
#include "tessel/status.h"

/* The largest C * S (weights per layer) made one kernel (see above). */
#define TSL_SQUEEZE_EXCITE_MAX_WEIGHTS 65536

/* Rewrites in place; *fused (may be NULL) receives the number of blocks made one node.
 * Value and node ids change (the graph is sorted and pruned). Errors: TSL_ERR_NOMEM,
 * TSL_ERR_INVALID (a fused function attribute of the wrong kind). */
tsl_status tsl_pass_squeeze_excite(tsl_graph *g, int *fused);

#endif
