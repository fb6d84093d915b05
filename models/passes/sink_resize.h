/* Graph pass: an upsampling Resize followed by a 1x1 convolution runs the convolution
 * first, at the input's resolution, and resizes its (narrower) output:
 *     Conv1x1(Resize(x)) -> Resize(Conv1x1(x))
 * LR-ASPP's head (torchvision lraspp_mobilenet_v3_large) upsamples its 128-channel
 * 14x14 branch to 28x28 and then classifies it with a 1x1 conv to 21 classes; in this
 * order the 28x28 x 128 intermediate is never written, the conv does a quarter of the
 * work, and the Add of the other branch that followed the conv fuses into that branch's
 * conv as its residual (fuse_conv.h), so the Resize is the only pass at 28x28.
 *
 * Exact up to rounding: a 1x1 conv is an affine map per pixel, y = W x + b, and every
 * output pixel of a "linear" or "nearest" Resize is a combination of input pixels with
 * weights summing to 1 (neighbours past the edge are clamped to it, ops/nn/resize.c), so
 * Resize(W x + b) = W Resize(x) + b whatever the coordinate transform.
 *
 * Taken when: the Resize scales H and W only (N and C kept), has more output than input
 * pixels, its output is read by one conv only and is not a graph output; the conv is 1x1,
 * stride 1, no padding, group 1, has no more output than input channels, no residual or
 * fused activation, and its output is not a graph output (the new Resize takes its
 * place). Run after batch-norm folding, before conv fusion.
 */
#ifndef TESSEL_MODELS_PASSES_SINK_RESIZE_H
#define TESSEL_MODELS_PASSES_SINK_RESIZE_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites in place; *moved (may be NULL) receives the number of Resize nodes moved past
 * a conv. Value and node ids change (the graph is sorted and pruned). Errors:
 * TSL_ERR_NOMEM, those of shape inference on the new nodes (TSL_ERR_INVALID). */
tsl_status tsl_pass_sink_resize(tsl_graph *g, int *moved);

#ifdef __cplusplus
}
#endif
#endif
