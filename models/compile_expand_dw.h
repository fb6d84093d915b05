/* Fusing an expand 1x1 conv into the depthwise conv that is its only reader
 * (ops/conv2d/expand_depthwise.h), at conv lowering (models/compile_conv.h).
 *
 * A pair fuses when, after the graph passes (epilogues fused, layouts chosen):
 *   - the expand is a blocked conv 1x1, stride 1, no padding, groups 1, with its bias and
 *     activation epilogue (none, Relu, Clip or a table function), no residual, no channel
 *     scale, reading NCHW[x]c data;
 *   - its output is read by one node only, not a graph output, and that node is a blocked
 *     depthwise conv (groups = C = K) with dilation 1, bias and activation, no residual,
 *     no channel scale;
 *   - tsl_expand_dw_pays says so from the sizes (the expanded tensor and the depthwise
 *     output of one image together larger than L2, and the fused kernel's extra expand
 *     work on the padding and band halos small against the traffic it saves).
 * The depthwise node's step then runs the fused kernel on the expand's input, with both
 * weights transformed as the GEMM 1x1 and depthwise algorithms lay them out; the expand
 * node gets no step and its output is never allocated. The kernel's schedule is the best
 * record of the fused workload (tsl_expand_dw_workload; template
 * expand_depthwise_nchwc.band) in cl->records, else its default knobs, chosen by
 * tsl_dispatch_schedule as a conv's is (cl->node_info, the tuned/missed counts and the
 * warning line alike), whatever its activations (a function of the activation table is
 * an epilogue of the workload: the expand's on its stage `padded`).
 */
#ifndef TESSEL_MODELS_COMPILE_EXPAND_DW_H
#define TESSEL_MODELS_COMPILE_EXPAND_DW_H

#include "models/compile_conv.h"
#include "ops/conv2d/expand_depthwise.h"

/* Lowers every fusable pair of g (cl->fused_away must be set): for each, steps[dw] and
 * kernels[dw] are the fused call, cl->fused_away[expand] is true, g gains the
 * transformed weights and biases as constants (no node ids change). Nodes that do not
 * match are left to tsl_lower_convs. Errors: those of the weight transforms and the
 * build (messages name the depthwise node). */
tsl_status tsl_lower_expand_dw(tsl_graph *g, tsl_conv_lowering *cl, tsl_node_kernel *steps, const tsl_kernel **kernels);

/* Marks the nodes of g (after the graph passes, as at lowering) that tsl_lower_expand_dw
 * with the same target and mode (0: where tsl_expand_dw_pays, 1: all, -1: none) fuses
 * (one match walk serves both, so they cannot disagree): fused[i] (g->n_nodes entries)
 * is true for both convs of every pair; pairs (may be NULL; g->n_nodes entries)
 * receives at the depthwise node of each pair the fused layer (other entries are left
 * as they are). The tuner's layer list (tsl_graph_conv_layers) lists each pair as its
 * fused workload (tsl_expand_dw_workload), not as its two convs: a fused pair runs its
 * own kernel and looks up the fused workload's records only. Errors: TSL_ERR_INVALID for
 * a NULL argument, TSL_ERR_NOMEM. */
tsl_status tsl_expand_dw_mark(const tsl_graph *g, const tsl_target *t, int mode, bool *fused,
                              tsl_expand_dw_layer *pairs);

#endif
