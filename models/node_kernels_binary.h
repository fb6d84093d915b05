/* tessel — graph nodes of binary (bitserial) networks: the tsl.Binary operator.
 *
 * A tsl.Binary node (TSL_OP_BINARY) runs one operator of the registry's binary family
 * (ops/binary/binary.c, docs/binary.md): its STRING attribute "kernel" names the operator
 * (e.g. "bitserial_conv2d_unipolar64_packed"), every other INT or FLOAT attribute is a
 * scalar parameter of that operator under the same name (C, stride_h, bits, ...). Its
 * inputs are the operator's tensor inputs in order (packed weights, glue shifts and
 * biases are u64 / i32 constants), its outputs the operator's outputs; values between
 * binary nodes are u64 bit planes or i32 levels, not f32, and always in the plain layout.
 * Shapes and dtypes come from instantiating the operator (the DSL's own shape rules).
 *
 * The models built from these nodes are in models/zoo_binary.h.
 */
#ifndef TESSEL_MODELS_NODE_KERNELS_BINARY_H
#define TESSEL_MODELS_NODE_KERNELS_BINARY_H

#include <stdbool.h>
#include <stdio.h>

#include "dsl/te.h"
#include "models/graph.h"
#include "models/node_kernels_internal.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/status.h"
#include "tuner/records.h"
#include "ops/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shape inference of tsl.Binary node `node` (called by tsl_graph_infer_node): checks the
 * "kernel" attribute names a binary-family operator, instantiates it with the inputs'
 * shapes and the node's parameters, and sets the outputs' dtypes and shapes.
 * Errors: TSL_ERR_INVALID naming the node (no or unknown "kernel", an input without a
 * shape, a count or shape the operator refuses: its assert message is kept). */
tsl_status tsl_binary_infer_node(tsl_graph *g, int node);

/* The node kernel of tsl.Binary node `node` (called by tsl_node_kernel_make): a registry
 * kernel (k->registry_op, k->params) with the text `b` as its workload key.
 * Errors: as tsl_binary_infer_node; TSL_ERR_UNSUPPORTED for more than 16 parameters. */
tsl_status tsl_nk_make_binary(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);

/* Whether registry operator `op` is a bitserial convolution scheduled by the bitserial
 * template (ops/binary/bitserial.h). */
bool tsl_binary_is_bitserial(const char *op);

/* Whether registry operator `op` is a channels-last glue operator of the binary residual
 * stream (bitpack_unipolar64_i32_nhwc, binary_global_avgpool_i32_nhwc: reductions along
 * the contiguous channel axis), scheduled by tsl_binary_glue_schedule instead of the
 * auto-scheduler. */
bool tsl_binary_is_stream_glue(const char *op);

/* Whether registry operator `op` is a pack of blocked f32 NCHW[x]c (bitpack_*_nchwc,
 * passes/binary_read_blocked.h), scheduled by tsl_binary_glue_schedule. */
bool tsl_binary_is_blocked_pack(const char *op);

/* Whether registry operator `op` is the unpack writing blocked f32 NCHW[x]c
 * (bitunpack_unipolar64_nchwc, passes/binary_read_blocked.h), scheduled by
 * tsl_binary_glue_schedule. */
bool tsl_binary_is_blocked_unpack(const char *op);

/* Whether registry operator `op` is scheduled by tsl_binary_glue_schedule (a stream glue
 * operator, a blocked pack or the blocked unpack) instead of the auto-scheduler. */
bool tsl_binary_has_hand_schedule(const char *op);

/* The schedule of stream glue operator or blocked pack `op` (program p) for target t.
 * A blocked pack: its stage part (per pixel and lane j of a block, the bits of the word's
 * channels in that lane) computed at each pixel of out, the block's lanes vectorized
 * (contiguous loads), out's rows in parallel. The blocked unpack: q computed at each
 * pixel of out, the lanes of both stages vectorized, out's channel blocks in parallel
 * (bsqueezenet1_1's 512 x 13 x 13 unpack, AVX-512, 1 thread: 0.043 ms under the
 * default schedule, 0.026 with a per-lane word index, 0.004 with the word shared by a block). The stream glue: the pack's loops as
 * written with the output rows (y) outermost and in parallel, LLVM vectorizing the inner
 * channel reduction (bresnet18, 8 packs, load ~11: 0.16 -> 0.05 ms at 1 thread, 0.39 ->
 * 0.055 at 2, against the default schedule's rfactor'ed reduction; the auto-scheduler's
 * vectorizes the pixels, stride-C loads, 0.30 / 0.99); the average pool's default
 * schedule. Errors: the schedule's. */
tsl_status tsl_binary_glue_schedule(const char *op, const tsl_te_program *p, const tsl_target *t,
                                    tsl_schedule **out);

/* The program (current arena) and schedule (caller frees) of a binary registry kernel
 * nk: for a bitserial convolution the best record of db (NULL: none) for its workload,
 * else the bitserial template's default config (one warning line on `warn` when db is
 * given and has no record); the default schedule for the other binary operators.
 * *tuned tells whether a record was used. Errors: those of the instantiation, the
 * dispatch (tuner/dispatch.h) and the schedule. */
tsl_status tsl_binary_node_schedule(const tsl_records *db, const tsl_target *t, const tsl_node_kernel *nk,
                                    FILE *warn, tsl_te_program **prog, tsl_schedule **s, bool *tuned);

/* The distinct bitserial-conv workloads of g's tsl.Binary nodes (shapes inferred), as the
 * graph compiler looks them up in tuning records (after the pass
 * models/passes/binary_channels_last.h, on a copy of g), for `tunecli tune MODEL`: up to max
 * into out, the node id of each one's first occurrence into nodes[i]. Returns the count. */
int tsl_binary_model_workloads(const tsl_graph *g, tsl_workload *out, int *nodes, int max);

#ifdef __cplusplus
}
#endif
#endif
