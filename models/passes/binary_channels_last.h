/* Graph pass: the i32 residual streams of binarized networks channels-last.
 *
 * A binarized residual net (models/zoo_binary.h: bresnet18) carries its residual stream
 * as i32 levels between the binary blocks: written by quantize_unipolar_i32 and the
 * bitserial convs' `_requant` / `_requant_add` epilogues, read by `_requant_add` (its
 * residual `res`), bitpack_unipolar64_i32 and binary_global_avgpool_i32 (tsl.Binary
 * nodes, attribute `kernel`). Their NCHW i32 tensors are a transpose of the convs'
 * accumulator acc[n, y, x, k] (channels innermost): per output channel a strided store,
 * which LLVM emits on AVX-512 as gathers of acc. Each of these operators has a
 * channels-last twin, OP_nhwc (ops/binary/binary.c), whose i32 tensors are [N, H, W, C]
 * (the bit planes and the f32 tensors keep their layouts): the epilogue then stores along
 * k, contiguous.
 *
 * The pass switches a set of such nodes to their twins when every i32 tensor they share
 * (a stream value) is written by one of them and read only by them, through their i32
 * input, and is no graph output: a stream value is switched with its writer and all its
 * readers or not at all (the largest such set, by a fixpoint from all candidates).
 * Any binarized residual net built of these operators qualifies, whatever its depth or
 * widths; a stream value read by another operator (or a graph output) keeps its whole
 * connected set NCHW. (A switched quantize whose f32 input is a layout transform from
 * blocked NCHW[x]c then reads the blocked tensor: passes/binary_read_blocked.h.) Results
 * are bit-identical (the same integers, another order). */
#ifndef TESSEL_MODELS_PASSES_BINARY_CHANNELS_LAST_H
#define TESSEL_MODELS_PASSES_BINARY_CHANNELS_LAST_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rewrites g in place (the switched nodes' `kernel` attribute and their i32 values'
 * shapes change; node and value ids are unchanged); *switched (may be NULL) receives the
 * number of nodes switched. Errors: TSL_ERR_NOMEM, those of tsl_graph_set_attr_* and of
 * shape inference (tsl_graph_infer_node). */
tsl_status tsl_pass_binary_channels_last(tsl_graph *g, int *switched);

#ifdef __cplusplus
}
#endif
#endif
