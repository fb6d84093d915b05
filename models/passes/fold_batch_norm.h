/* Graph pass: fold inference batch normalization into the convolution before it.
 *
 * BatchNormalization(Conv(x, W, b)) = Conv(x, W', b') with, per output channel m,
 *     s = scale[m] / sqrt(var[m] + eps),   W'[m] = W[m] * s,
 *     b'[m] = (b[m] - mean[m]) * s + B[m]
 * (Ioffe and Szegedy, "Batch Normalization", ICML 2015, section 3.2: at inference the
 * normalization is a fixed affine map). Folded only when the conv's weight, bias and
 * the batch-norm parameters are constants and the conv's output feeds nothing else; the
 * arithmetic is done in double and rounded once to f32. Batch norms left standing are
 * computed by their own kernel.
 */
#ifndef TESSEL_MODELS_PASSES_FOLD_BATCH_NORM_H
#define TESSEL_MODELS_PASSES_FOLD_BATCH_NORM_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Folds in place; *folded (may be NULL) receives the number of batch norms removed.
 * Value and node ids change (the graph is pruned). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_pass_fold_batch_norm(tsl_graph *g, int *folded);

#ifdef __cplusplus
}
#endif
#endif
