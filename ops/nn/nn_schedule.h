/* Schedule templates for the non-convolution operators of the operator library
 * (ops/nn/nn.c, layout.c): elementwise / injective ones, the packed dense layer and
 * softmax.
 *
 * elementwise  flatten_nchwc, flatten and the layout transforms (the graph's batch norm,
 *              broadcasting, concat and shuffle are generated operators, ops/op_call.h): the default schedule (injective intermediates inlined), the
 *              output's leading axes fused and run in parallel, its last axis vectorized
 *              (split by the target's lanes when longer). Memory bound: the knobs only
 *              switch the vectorization and the parallel loop.
 * dense_packed out[b, o] = sum_k data[b, k] w[o, k]: per (b, block of ob_block output
 *              vectors): ob_block accumulator vectors over k (k unrolled by k_unroll), one
 *              broadcast of data and ob_block weight vectors per k: a GEMV streaming the
 *              weights once, with ob_block independent FMA chains.
 * softmax      per row (parallel): the max, exp(x - max) (vectorized), the sum, the
 *              division (vectorized), each row's intermediates in a small buffer.
 */
#ifndef TESSEL_OPS_NN_NN_SCHEDULE_H
#define TESSEL_OPS_NN_NN_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_elementwise_knobs {
  bool vectorize; /* the output's last axis on vector lanes */
  bool parallel;  /* the output's leading axes (up to three, fused) on the thread pool */
} tsl_elementwise_knobs;

/* Both true. */
tsl_elementwise_knobs tsl_elementwise_default_knobs(void);

/* The elementwise schedule of any program with one output (k NULL: defaults). Errors:
 * TSL_ERR_INVALID for a program without exactly one computed output; a refused step. */
tsl_status tsl_elementwise_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_elementwise_knobs *k,
                                    tsl_schedule **out);

typedef struct tsl_dense_knobs {
  int64_t ob_block; /* output vectors per accumulator tile (unrolled), >= 1 */
  int64_t k_unroll; /* unroll of the reduction, >= 1 */
  bool parallel;
} tsl_dense_knobs;

/* Defaults: ob_block 4 (capped by the output's blocks: 4 independent FMA chains keep a
 * GEMV's loads, not its FMAs, the limit), k_unroll 4, parallel. */
tsl_dense_knobs tsl_dense_default_knobs(const tsl_te_program *p);

/* The dense_packed schedule (k NULL: defaults). Errors: TSL_ERR_INVALID when p is not a
 * dense_packed program or a knob is < 1; a refused step. */
tsl_status tsl_dense_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_dense_knobs *k,
                              tsl_schedule **out);

/* The softmax schedule. Errors: TSL_ERR_INVALID when p is not a softmax program. */
tsl_status tsl_softmax_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out);

/* The schedule of any operator of this library by registry name, with its template's
 * default knobs: the convolution and pooling templates for their ops, the templates
 * above for the rest (what tests and the graph compiler use without tuning). Errors:
 * TSL_ERR_NOT_FOUND for an operator that is not the library's; the template's errors. */
tsl_status tsl_oplib_default_schedule(const char *op, const tsl_te_program *p, const tsl_target *t,
                                      tsl_schedule **out);

/* Generic-interface templates: "<op>.elementwise" for each elementwise op above,
 * "dense_packed.gemv" and "softmax.rows". */
const tsl_template *tsl_nn_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
