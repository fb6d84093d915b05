/* Graph pass: a 1x1 convolution of unpacked unipolar levels becomes a lookup-table conv
 * over the bit planes.
 *
 * Where a binarized net returns to full precision (bsqueezenet1_1's and Riptide's f32
 * classifier after the last binary layer), the conv reads bitunpack_unipolar64_nchwc's
 * levels q / (2^B - 1), q an integer of B bits, so every input channel is one of 2^B
 * values. The pass rewrites Conv(tsl.Binary bitunpack_unipolar64_nchwc(planes), w, b)
 * into tsl.Binary lutconv1x1_unipolar64_nchwc(planes, w', b') (ops/binary/lutconv.h):
 * 4 input channels' bits index a table of the 16 sums of their weight rows, an output
 * takes B * ceil(C / 4) lookups and adds instead of C multiply-adds. w' is w [K, C, 1, 1]
 * transposed to [ceil(C/4) * 4, ceil(K/x) * x] and zero-padded, b' the bias padded to
 * the same columns (zeros when the conv has none); the conv's ReLU or Clip goes with it
 * (attributes act, clip_min, clip_max), its output keeps its blocked layout and readers.
 *
 * Which convs (tsl_node_conv2d_params): 1x1, stride 1, no padding, dilation 1, one group,
 * f32 constant weight and
 * bias, no residual, no channel scale, no activation other than none, ReLU or Clip, a
 * blocked NCHW[x]c output, and no attribute the pass does not know (it keeps the conv
 * then). The unpack goes when nothing else reads it (pruned). The sums are the same real
 * numbers added in another order: results differ from the dense conv's by rounding only.
 * The unpack may be the blocked one (binary_read_blocked.h), or the plain one read
 * directly (a conv of few input channels reads plain data) or through a layout transform
 * to blocked (compile option binary_nchw): run after layout selection and
 * binary_read_blocked.h. bsqueezenet1_1's classifier (znver5, 1 thread): 0.80 -> 0.51 ms
 * (docs/binary.md, "Back to f32 by table lookup"). */
#ifndef TESSEL_MODELS_PASSES_LUT_CONV_H
#define TESSEL_MODELS_PASSES_LUT_CONV_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites in place; *rewritten (may be NULL) receives the number of convs rewritten.
 * Value and node ids change when one is (the graph is pruned and re-sorted).
 * Errors: TSL_ERR_INVALID (NULL g, a malformed graph), TSL_ERR_NOMEM. */
tsl_status tsl_pass_lut_conv(tsl_graph *g, int *rewritten);

#ifdef __cplusplus
}
#endif
#endif
