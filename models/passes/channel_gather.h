/* Graph pass: compose chains of channel selections — channel Concat, channel Slice,
 * tsl.ChannelShuffle and tsl.ChannelGather — into tsl.ChannelGather nodes (graph.h)
 * that read the chain's first inputs directly. ShuffleNet V2's Concat -> ChannelShuffle
 * -> Slice, Slice becomes two gathers each writing half the channels from the branch
 * outputs: the concatenated and shuffled tensors are never written (a third of the
 * bytes, half the kernels).
 *
 * A selection's output is composed into its readers when every reader is a selection and
 * it is not a graph output; a node is rewritten when at least one input composes and the
 * composed map takes at most 4 affine pieces (ops/nn/generators.h; a piece that picks
 * lanes costs about a gather per output vector), else it keeps its operator. Selections read 4-D f32 images only.
 */
#ifndef TESSEL_MODELS_PASSES_CHANNEL_GATHER_H
#define TESSEL_MODELS_PASSES_CHANNEL_GATHER_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites in place; *found (may be NULL) receives the number of gathers made. Value and
 * node ids change (the graph is sorted and pruned). Errors: TSL_ERR_NOMEM, those of
 * tsl_graph_toposort / tsl_graph_prune. */
tsl_status tsl_pass_channel_gather(tsl_graph *g, int *found);

#ifdef __cplusplus
}
#endif
#endif
