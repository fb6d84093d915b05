/* Graph pass: GELU written out in elementary operators becomes one activation.
 *
 *   Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)  ->  Gelu(x)   (Hendrycks & Gimpel 2016,
 *                                                     "Gaussian Error Linear Units")
 *
 * as PyTorch exports nn.GELU() (approximate "none") at opsets below 20, which have no
 * Gelu operator. Accepted spellings: x / sqrt 2 as Div(x, 1.41421...) or Mul(x, 0.70710...);
 * Add and Mul in either operand order; the product of x, (1 + erf) and 0.5 in any
 * association (x * A * 0.5, 0.5 * A * x, x * (A * 0.5), (x * 0.5) * A). Constants must be
 * scalars within 1e-6 (relative) of their values. The last Mul becomes one tsl.Activation
 * "Gelu" (ops/nn/activation.h): one kernel instead of five. Matched only where no
 * intermediate value has another reader and the result is not a graph output.
 */
#ifndef TESSEL_MODELS_PASSES_FUSE_GELU_H
#define TESSEL_MODELS_PASSES_FUSE_GELU_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fuses in place; *fused (may be NULL) receives the number of GELUs made. Value and node
 * ids change (the graph is pruned). Errors: TSL_ERR_INVALID (NULL g), TSL_ERR_NOMEM. */
tsl_status tsl_pass_fuse_gelu(tsl_graph *g, int *fused);

#ifdef __cplusplus
}
#endif
#endif
