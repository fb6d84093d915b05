/* Graph pass: layout selection — put the image tensors of a CNN in the blocked layout
 * NCHW[x]c (x = the target's f32 vector lanes; ops/nchwc.h) and propagate it, so
 * that layout transforms appear only at the graph's edges and where an operator needs
 * another layout (TVM's AlterOpLayout + layout propagation; ONNX Runtime's NCHWc
 * transformer does the same for its MLAS kernels).
 *
 * Every convolution runs blocked. Pools, global pooling, batch norms, layer norms over
 * the channels (passes/channels_first.h), Relu, Clip (when it maps 0 to 0), the
 * activations, same-shape Add and Mul, channel Concat and channel Slice run blocked
 * when one of their image inputs already is (propagation), and so do PRelu with a constant
 * slope per channel (or one for all); Identity and Dropout pass the layout through. A
 * Resize of H and W reads its input in whichever layout it has and writes blocked when
 * every reader of its output runs blocked and the output is not a graph output (the
 * segmentation head's upsampling to the input size writes plain directly, with no
 * full-resolution transform after it). Every other operator gets plain inputs. A
 * transform is an Identity node carrying TSL_ATTR_LAYOUT_TRANSFORM, from its input's
 * layout to its output's; one transform per value and direction is shared by all
 * readers. Graph inputs and outputs stay plain. A conv with few input channels (the stem
 * conv of a CNN; ops/conv2d/conv2d_select.h: tsl_conv2d_reads_plain_data) reads a plain
 * image input as it is, with no transform before it: its grouped kernel reduces over the
 * true channels, one input value per tap for all lanes, from NCHW as well as from NCHW[x]c.
 *
 * Weight pre-transforms: each blocked convolution is marked with
 * TSL_ATTR_BLOCKED_WEIGHTS = x and keeps its OIHW weight and bias constants; the graph
 * compiler replaces them at compile time by the output of the weight program of the
 * algorithm it picks for the layer (re-layout OIHW[x]i[y]o, O-blocked for grouped and
 * depthwise, Winograd kernel transform; biases as [K/x, x], zero-padded:
 * models/compile_conv.h).
 */
#ifndef TESSEL_MODELS_PASSES_LAYOUT_H
#define TESSEL_MODELS_PASSES_LAYOUT_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_ATTR_LAYOUT_TRANSFORM "tsl_layout_transform"
#define TSL_ATTR_BLOCKED_WEIGHTS "tsl_blocked_weights"

/* Selects layouts in place with channel block `block` (>= 1; 8 for AVX2). Run after
 * fusion. *transforms (may be NULL) receives the number of transform nodes inserted.
 * Value and node ids of new nodes are appended, then the graph is re-sorted.
 * Errors: TSL_ERR_INVALID (block < 1), TSL_ERR_NOMEM. */
tsl_status tsl_pass_select_layout(tsl_graph *g, int block, int *transforms);

/* Number of layout transform nodes in g. */
int tsl_graph_count_layout_transforms(const tsl_graph *g);

#ifdef __cplusplus
}
#endif
#endif
