/* Graph pass: the constant weight of a fully connected layer with few rows, re-laid once
 * for a GEMV that streams it contiguously.
 *
 * A Gemm (any transA / transB, alpha, beta, bias) or a 2-D-weight MatMul whose B is an
 * f32 constant, whose output has at most TSL_PACK_DENSE_MAX_ROWS rows M and a column
 * count N that a panel width x divides (x = `block` when it divides N, else the widest
 * power of two below it, at least 4, that does: 1000 classes take 8 at 16 lanes),
 * gets B as the constant
 *     P[ob, k, o] = B'[k, ob*x + o]     (shape [N/x, K, x])
 * where B' is the [K, N] matrix the node multiplies by (B, or B transposed when transB),
 * the node attribute TSL_ATTR_PACKED_DENSE = x, and transB = 0: the node still
 * computes what it did, now reading P (the layout of the operator library's
 * dense_packed, ops/nn/nn.c, and its weight_to_dense). Its kernel
 * (models/node_kernels.h) then streams x-wide column panels of P, each one
 * contiguous K x x run of memory, with register accumulators over k, the panels on
 * the thread pool (ops/nn/nn_schedule.h, dense_packed.gemv). Measured on this
 * project's Zen 3 host (1 x 1280 -> 1000, weights from DRAM, 1 thread): ~0.33 ms packed
 * against ~0.55 ms reading rows of the [K, N] transpose, ~0.61 ms for column blocks of
 * it on the pool (a 4 KB stride per row defeats the hardware prefetch).
 *
 * With more rows the dense template would stream the weight once per row, so those (and
 * column counts no panel divides, which would need a padded output) keep their weight, which
 * the layout pass (models/passes/layout.h) then stores [K, N], and the default schedule.
 * Runs before the layout pass, with its block (tsl_graph_optimize, models/compile.h), so
 * a packed weight is copied once, not transposed first.
 */
#ifndef TESSEL_MODELS_PASSES_PACK_DENSE_H
#define TESSEL_MODELS_PASSES_PACK_DENSE_H

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Node attribute (int): the node's B input is packed [N/x, K, x] with x its value. */
#define TSL_ATTR_PACKED_DENSE "tsl_packed_dense"

/* Most output rows (batch of a classifier) whose weight is packed. */
#define TSL_PACK_DENSE_MAX_ROWS 4

/* Packs in place (see above) with x = block (the target's f32 vector lanes); *packed
 * (may be NULL) receives the number of nodes rewritten. Shapes must be inferred (nodes
 * with unknown shapes are left alone). No node or value id changes; the packed weights
 * are new constants (a B read by other nodes too stays for them).
 * Errors: TSL_ERR_INVALID (NULL graph, block < 1), TSL_ERR_NOMEM. */
tsl_status tsl_pass_pack_dense(tsl_graph *g, int block, int *packed);

#ifdef __cplusplus
}
#endif
#endif
