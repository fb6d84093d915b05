/* Graph pass: constant folding — evaluate at compile time the nodes whose inputs are
 * all constants, replacing their outputs by constants.
 *
 * Folded operators: the data movers Identity, Dropout, Reshape, Flatten, Transpose,
 * and the elementwise Add, Sub, Mul, Div, Pow (numpy broadcasting), Relu, Clip and the
 * activations, computed in double and rounded to f32 (the importer already folded the
 * Shape/Gather chains; what remains are parameter preparations such as a scaled
 * constant). Other nodes on constants stay and run as kernels.
 */
#ifndef TESSEL_MODELS_PASSES_FOLD_CONSTANTS_H
#define TESSEL_MODELS_PASSES_FOLD_CONSTANTS_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Folds in place; *folded (may be NULL) receives the number of nodes evaluated.
 * Value and node ids change (the graph is pruned). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_pass_fold_constants(tsl_graph *g, int *folded);

#ifdef __cplusplus
}
#endif
#endif
