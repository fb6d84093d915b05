/* Graph pass: layer normalization written out in elementary operators (ONNX before
 * opset 17 has no LayerNormalization; PyTorch exports F.layer_norm at opset 13 as
 *
 *   mean = ReduceMean(x, axes, keepdims 1)      d  = Sub(x, mean)
 *   sq   = Pow(d, 2)  (or Mul(d, d))            var = ReduceMean(sq, axes, keepdims 1)
 *   sd   = Sqrt(Add(var, eps))                  n  = Div(d, sd)  (or Mul(d, Reciprocal(sd)))
 *   y    = Add(Mul(n, gamma), beta)             (gamma and beta optional)
 *
 * with Add and Mul in either operand order) becomes one LayerNormalization node (graph.h)
 * with axis = the first reduced axis, epsilon = eps, Scale = gamma (ones when absent) and
 * B = beta: one kernel (ops/nn layer_norm) instead of nine, reading x twice instead of
 * the nine kernels' fifteen tensor passes.
 *
 * Matched for any rank when the reduced axes are adjacent: the trailing ones (torch's
 * F.layer_norm: axis -1 in ConvNeXt's blocks and transformers), or a block inside, as the
 * channels of NCHW data that the original ConvNeXt's "channels_first" LayerNorm reduces
 * (axes [1], gamma [C, 1, 1]: then tsl_norm_end marks the end of the block); eps and
 * gamma/beta must be constants (eps a scalar >= 0; gamma and beta varying along the
 * reduced axes only, without changing the shape), and no value inside the pattern may be
 * read elsewhere or be a graph output (d is read by exactly the square and the
 * normalization). Anything else stays as it is.
 */
#ifndef TESSEL_MODELS_PASSES_LAYER_NORM_H
#define TESSEL_MODELS_PASSES_LAYER_NORM_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites in place; *found (may be NULL) receives the number of layer norms made.
 * Value and node ids change (the graph is pruned). Errors: TSL_ERR_INVALID (NULL g),
 * TSL_ERR_NOMEM. */
tsl_status tsl_pass_layer_norm(tsl_graph *g, int *found);

#ifdef __cplusplus
}
#endif
#endif
