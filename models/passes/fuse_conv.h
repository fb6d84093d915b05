/* Graph pass: fuse a convolution with what follows it — a residual Add and an
 * activation (Relu, Clip as in ReLU6, or any function of the activation table,
 * ops/nn/activation.h: Sigmoid, Swish, HardSwish, Gelu, LeakyRelu, ...) — so one kernel
 * computes
 *     y = act(conv(x, w) + bias + residual)
 * in one pass over the output (the fused epilogue of TVM's and ONNX Runtime's conv
 * kernels; He et al.'s residual blocks end exactly in conv -> add -> relu).
 *
 * After the pass a Conv node may carry:
 *   input 3            the residual, a value of the conv output's shape (input 2, the
 *                      bias, is then present too, possibly -1 for none);
 *   TSL_ATTR_ACTIVATION  int: TSL_ACT_NONE, TSL_ACT_RELU, TSL_ACT_CLIP or TSL_ACT_FUNCTION;
 *   TSL_ATTR_CLIP_MIN / TSL_ATTR_CLIP_MAX  floats, the Clip bounds (+-inf when absent);
 *   TSL_ATTR_ACT_FUNCTION  string, with TSL_ACT_FUNCTION: the function's ONNX name (the
 *                      tsl.Activation node's "function"), TSL_ATTR_ACT_ATTRS its float
 *                      attributes in the table's order (tsl_node_fused_function reads them).
 * A Gemm or MatMul node may carry the same three attributes for a tsl.Activation that
 * followed it (ConvNeXt's pointwise MLP: MatMul -> Gelu); Relu and Clip stay separate
 * after them. Every function of the table is elementwise, so fusing one is always legal;
 * in a blocked output whose last block is partly padding, functions with f(0) != 0 are
 * computed under the lane guard of ops/epilogue.h (padding lanes stay 0). By measurement,
 * a transcendental function (tsl_activation_transcendental: Sigmoid, Swish, Gelu, Tanh,
 * ...) after a grouped or depthwise conv stays a kernel of its own: in that template's
 * register tile it cost 27% more than the separate pass (EfficientNet-B0, 1 thread, AVX2);
 * computed outside the tile (epilogue_pass, ops/conv2d/conv_common.h: no spills) the 16
 * fused depthwise convs still took 4.1-6.2 ms against 3.7-4.8 ms for conv + Swish
 * kernels (same model, 4 interleaved --profile runs on a machine at load 6.5-7.7). At
 * 16 lanes (AVX-512) the same fusion was faster: EfficientNet-B0's depthwise + Sigmoid
 * kernels ~1.51 ms fused against ~1.67 ms separate, the model ~7.7 against ~8.25 ms
 * (1 thread, znver5, 4 alternating pairs at load ~11), while at 8 lanes it stayed 3-5%
 * slower; so the exception holds only for blocks below TSL_FUSE_TRANSCENDENTAL_MIN_BLOCK.
 * A node is fused into a conv only when the conv's output has no other reader and is
 * not a graph output, so no intermediate value is lost. Run after batch-norm folding
 * (a BatchNormalization between conv and activation blocks the pattern).
 */
#ifndef TESSEL_MODELS_PASSES_FUSE_CONV_H
#define TESSEL_MODELS_PASSES_FUSE_CONV_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_ATTR_ACTIVATION "tsl_activation"
#define TSL_ATTR_CLIP_MIN "tsl_clip_min"
#define TSL_ATTR_CLIP_MAX "tsl_clip_max"

#define TSL_ATTR_ACT_FUNCTION "tsl_act_function"
#define TSL_ATTR_ACT_ATTRS "tsl_act_attrs"

enum { TSL_ACT_NONE = 0, TSL_ACT_RELU = 1, TSL_ACT_CLIP = 2, TSL_ACT_FUNCTION = 3 };

struct tsl_activation;

/* The table function fused into node n (TSL_ATTR_ACTIVATION = TSL_ACT_FUNCTION): *fn and
 * its attribute values attrs[0..TSL_ACTIVATION_MAX_ATTRS). *fn = NULL when n carries no
 * fused function. Errors: TSL_ERR_UNSUPPORTED (a name the table does not have),
 * TSL_ERR_INVALID (attributes missing or of the wrong count). */
tsl_status tsl_node_fused_function(const tsl_graph *g, const tsl_node *n, const struct tsl_activation **fn,
                                   double *attrs);

/* The smallest layout block (f32 lanes of NCHW[x]c) at which a transcendental function
 * after a grouped or depthwise conv is fused into it (see above). */
#define TSL_FUSE_TRANSCENDENTAL_MIN_BLOCK 16

/* Fuses in place; `block` is the layout block the graph will be compiled with (its f32
 * lanes; 0 for plain NCHW), which decides the grouped/depthwise exception above; *fused
 * (may be NULL) receives the number of nodes folded into convs.
 * Value and node ids change (the graph is pruned and re-sorted).
 * Errors: TSL_ERR_NOMEM, TSL_ERR_INVALID (a malformed graph). */
tsl_status tsl_pass_fuse_conv(tsl_graph *g, int block, int *fused);

#ifdef __cplusplus
}
#endif
#endif
