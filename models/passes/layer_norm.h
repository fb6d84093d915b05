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
 * Matched for any rank, when the reduced axes are the trailing ones (a LayerNorm over
 * axis..rank-1: axis -1 in ConvNeXt and transformers), eps and gamma/beta are constants
 * (eps a scalar >= 0; gamma and beta broadcasting to the normalized axes without changing
 * the shape), and no value inside the pattern is read elsewhere or is a graph output
 * (d is read by exactly the square and the normalization). Anything else stays as it is.
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
