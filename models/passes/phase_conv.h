/* Graph pass: a stride-2 convolution becomes a stride-1 convolution over the phases of
 * its input (space-to-depth), so that Winograd can take it.
 *
 *   Conv(x, w)  strides 2, R x S, pads (pt, pl, pb, pr)
 *     -> Conv(S2D(x), w')  strides 1, R' x S', pads (pt', pl', pb', pr')
 *
 * S2D(x) is SpaceToDepth of blocksize 2 (ONNX), after a Pad of one zero row /
 * column where H / W is odd; H' = ceil(H / 2);
 * channel (py * 2 + px) * C + c holds x[c, 2h + py, 2w + px]. Per axis, tap q of the
 * original kernel reads input row 2y + q - pt = 2 (y + s) + p with phase p = (q - pt) mod
 * 2 and shift s = floor((q - pt) / 2); the phase kernel has R' = smax - smin + 1 taps,
 * tap b = s - smin, pad pt' = -smin and pb' = OH - 1 + R' - H' - pt' (so the output keeps
 * its OH rows); w'[k, (py * 2 + px) * C + c, by, bx] = w[k, c, qy, qx], zero where q falls
 * outside the kernel. ResNet's 7x7 stride-2 pad-3 stem on 3 channels is a 4x4 stride-1
 * conv on 12 channels at pads 2, 2, 1, 1. The MACs per output grow (16 * 4C against 49C),
 * the Winograd F(4x4, 4x4) multiplies are 49 / 16 * 4C = 12.25C per output.
 *
 * This is the polyphase decomposition of a strided convolution, the phases taken as
 * input channels of one convolution.
 *
 * A conv is rewritten when: groups 1, strides 2 x 2, no dilation, constant f32 weights,
 * a plain 4-D f32 input, no channel scale, the phase kernel square with R' >= 4 (3x3
 * phase kernels, from 5x5 stride-2 convs, are unmeasured) and tsl_conv2d_prefers_winograd
 * (4C, K, R', S') holds, the phase channels fill the graph's block well enough to be read
 * blocked (not tsl_conv2d_reads_plain_data(4C, 1, block): else the default choice would
 * be the grouped direct conv over the phases, more MACs than the original), and pb', pr'
 * >= 0 (else the last phase rows would be unread and
 * the conv is left alone). The output value, the bias, the fused activation and a fused
 * residual stay as they are.
 */
#ifndef TESSEL_MODELS_PASSES_PHASE_CONV_H
#define TESSEL_MODELS_PASSES_PHASE_CONV_H

#include "models/graph.h"
#include "tessel/status.h"

/* Rewrites in place; *rewritten (may be NULL) receives the number of convs rewritten.
 * `block` is the graph's NCHW[x]c block (the f32 lanes). New values are named
 * "<input>.phases" (and "<input>.phase_pad"), the weights "<weights>.phases". SpaceToDepth
 * writes plain NCHW; the layout pass then puts a transform into NCHW[x]c before the conv
 * (passes/layout.h). The pass runs before layout selection, so a strided conv deep in a
 * network (its input blocked later) is rewritten too, its SpaceToDepth between two
 * transforms. On an error the graph may be left part-rewritten (compilation stops). The graph is sorted afterwards (node
 * ids change). Environment: TSL_PHASE_CONV=none turns the pass off (for A/B runs).
 * Errors: TSL_ERR_NOMEM; those of shape inference on the new nodes. */
tsl_status tsl_pass_phase_conv(tsl_graph *g, int block, int *rewritten);

#endif
