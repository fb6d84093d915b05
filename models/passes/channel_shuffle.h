/* Graph pass: recognize ShuffleNet's channel shuffle — Reshape [N, C, H, W] ->
 * [N, G, C/G, H, W], Transpose (0, 2, 1, 3, 4), Reshape back to [N, C, H, W], as
 * torch.onnx exports it — and replace the three nodes by one tsl.ChannelShuffle node
 * (graph.h). One kernel then does the permutation, in either layout: in NCHW[x]c the
 * 5-D reshapes would force transforms to plain NCHW and back around every shuffle.
 */
#ifndef TESSEL_MODELS_PASSES_CHANNEL_SHUFFLE_H
#define TESSEL_MODELS_PASSES_CHANNEL_SHUFFLE_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites in place; *found (may be NULL) receives the number of shuffles replaced.
 * Value and node ids change (the graph is pruned). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_pass_channel_shuffle(tsl_graph *g, int *found);

#ifdef __cplusplus
}
#endif
#endif
