/* Graph pass: fuse a convolution with what follows it — a residual Add and an
 * activation (Relu, or Clip as in ReLU6) — so one kernel computes
 *     y = act(conv(x, w) + bias + residual)
 * in one pass over the output (the fused epilogue of TVM's and ONNX Runtime's conv
 * kernels; He et al.'s residual blocks end exactly in conv -> add -> relu).
 *
 * After the pass a Conv node may carry:
 *   input 3            the residual, a value of the conv output's shape (input 2, the
 *                      bias, is then present too, possibly -1 for none);
 *   TSL_ATTR_ACTIVATION  int: TSL_ACT_NONE, TSL_ACT_RELU or TSL_ACT_CLIP;
 *   TSL_ATTR_CLIP_MIN / TSL_ATTR_CLIP_MAX  floats, the Clip bounds (+-inf when absent).
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

enum { TSL_ACT_NONE = 0, TSL_ACT_RELU = 1, TSL_ACT_CLIP = 2 };

/* Fuses in place; *fused (may be NULL) receives the number of nodes folded into convs.
 * Value and node ids change (the graph is pruned and re-sorted).
 * Errors: TSL_ERR_NOMEM, TSL_ERR_INVALID (a malformed graph). */
tsl_status tsl_pass_fuse_conv(tsl_graph *g, int *fused);

#ifdef __cplusplus
}
#endif
#endif
