/* Graph pass: self-gated activations written as two nodes become one.
 *
 *   Mul(x, Sigmoid(x))                        -> Swish(x) (alpha 1: SiLU; Ramachandran
 *                                                et al. 2017, "Searching for Activation
 *                                                Functions"; EfficientNet, RegNetY)
 *   Mul(x, HardSigmoid(x), alpha 1/6, beta 1/2) -> HardSwish(x) (Howard et al. 2019,
 *                                                "Searching for MobileNetV3", sec. 5.2)
 *
 * (either operand order), as exporters write them before ONNX had the fused operators.
 * The gate's node becomes the fused function (a tsl.Activation, ops/nn/activation.h) and
 * the Mul goes, so the tensor is read once and written once instead of twice each. A
 * pattern is fused only when the gate's output has no other reader and the Mul's output
 * is not a graph output (its name stays the model's). A gate on another value (the
 * squeeze-excitation scale, Mul(x, Sigmoid(s))) is not this pattern and stays.
 */
#ifndef TESSEL_MODELS_PASSES_FUSE_GATING_H
#define TESSEL_MODELS_PASSES_FUSE_GATING_H

#include "models/graph.h"
#include "tessel/status.h"

/* Fuses in place; *fused (may be NULL) receives the number of Mul nodes removed. Value
 * and node ids change (the graph is sorted and pruned). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_pass_fuse_gating(tsl_graph *g, int *fused);

#endif
