/* Graph pass: channels-last chains computed channels-first.
 *
 * ConvNeXt (torchvision) runs the pointwise part of each block on NHWC data:
 *
 *   Transpose(0,2,3,1) -> LayerNorm over C -> MatMul [C, 4C] -> Add bias -> GELU
 *                      -> MatMul [4C, C] -> Add bias -> Transpose(0,3,1,2) -> Mul gamma
 *
 * and its LayerNorm2d is Transpose, LayerNorm, Transpose. Between the two transposes every
 * operator works per pixel along the channel axis, so the chain is the same computation on
 * the NCHW data it came from, with the channel axis at 1:
 *
 *   LayerNorm over the last axis   -> LayerNormalization over axis 1 (tsl_norm_end 2)
 *   MatMul with a constant [C, K]  -> a 1x1 Conv with the weight [K, C, 1, 1], and the
 *   (+ Add of a constant [K])         bias [K] when an Add of a per-channel constant follows
 *   Add / Mul of a constant [K]    -> the same with the constant as [K, 1, 1]
 *   activations, Relu, Clip        -> unchanged
 *
 * and both transposes go. A Mul by a per-channel constant right after the chain's last
 * 1x1 conv (ConvNeXt's layer scale) is folded into that conv's weight and bias. The layout
 * pass then keeps the whole block in NCHW[x]c: the 1x1 convs run the operator library's
 * conv algorithms instead of a plain matmul, and no data is transposed.
 *
 * A chain is rewritten only when it starts at a Transpose (0,2,3,1) of a 4-D value, ends at
 * a Transpose (0,3,1,2), every value in between has exactly one reader, and the end is not
 * a graph output; anything else stays. Weights are new constants (the originals are
 * pruned when nothing else reads them).
 */
#ifndef TESSEL_MODELS_PASSES_CHANNELS_FIRST_H
#define TESSEL_MODELS_PASSES_CHANNELS_FIRST_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites in place; *chains (may be NULL) receives the number of chains rewritten. Value
 * and node ids change (the graph is re-sorted and pruned). Errors: TSL_ERR_INVALID (NULL
 * g), TSL_ERR_NOMEM. */
tsl_status tsl_pass_channels_first(tsl_graph *g, int *chains);

#ifdef __cplusplus
}
#endif
#endif
