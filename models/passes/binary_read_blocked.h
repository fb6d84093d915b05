/* Graph pass: binary operators read the blocked f32 tensor of their producer.
 *
 * The operators that take f32 activations into the binary domain (bitpack_bipolar32/64,
 * bitpack_unipolar32/64, quantize_unipolar_i32_nhwc: ops/binary/binary.c) read NCHW. After
 * layout selection (passes/layout.h) their input is often a layout transform from the
 * blocked NCHW[x]c output of an f32 conv or pool (a binarized net's stem), a whole copy
 * with a transpose of every pixel's x channels. Each of these operators has a blocked
 * twin (OP_nchwc, quantize_unipolar_i32_nchwc_nhwc) that reads the NCHW[x]c tensor with
 * its true channel count C (the block's tail past C ignored) and gives the same integers.
 * The pass switches a node to its twin where its f32 input is such a transform (attribute
 * tsl_layout_transform) from a 4-D blocked value to a plain one (for a pack, with a block
 * that divides its word: 4, 8 or 16 channels into 32 or 64 bits), and prunes the
 * transforms nobody reads any more. Results are bit-identical: each activation goes
 * through the same comparisons.
 *
 * The other direction, where a binarized net returns to f32 (bsqueezenet1_1's unpack
 * before its f32 classifier): a bitunpack_unipolar64 whose output is read only by a
 * transform to blocked NCHW[x]c (a block dividing the word: 4, 8 or 16 lanes on the
 * targets, any divisor of 64 accepted) becomes
 * bitunpack_unipolar64_nchwc writing the blocked tensor itself (attribute X = the block;
 * its output value takes the blocked layout and the transform's readers), the same
 * levels bit for bit with the block's tail zero. bsqueezenet1_1 on AVX-512 (Zen 5), 1
 * thread: unpack 0.016 ms + transform 0.042 ms -> 0.004 ms. */
#ifndef TESSEL_MODELS_PASSES_BINARY_READ_BLOCKED_H
#define TESSEL_MODELS_PASSES_BINARY_READ_BLOCKED_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites g in place: the switched nodes' `kernel`, input and attribute `C` (an unpack:
 * `kernel`, attribute `X`, its output's layout and readers); the graph
 * is pruned when a node was switched (node and value ids then change). *switched (may be
 * NULL) receives the number of nodes switched. Errors: TSL_ERR_INVALID (NULL graph);
 * those of tsl_graph_set_node_inputs, tsl_graph_set_attr_*, shape inference
 * (tsl_graph_infer_node) and tsl_graph_prune. */
tsl_status tsl_pass_binary_read_blocked(tsl_graph *g, int *switched);

#ifdef __cplusplus
}
#endif
#endif
