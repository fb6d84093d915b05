/* tessel — the graph compiler: a model graph to a plan of JIT-compiled kernel calls.
 *
 *   graph -> passes (models/passes/: fold constants, fold batch-norm into convs, fuse
 *            conv + bias + activation (+ residual add))
 *         -> one workload per node (models/node_kernels.h: the node's operator text
 *            with its shapes); identical workloads share one kernel
 *         -> kernel: DSL instantiate -> default schedule -> tsl_build (JIT)
 *         -> memory planning (models/passes/plan_memory.h) -> runtime plan
 *            (runtime/graph_executor.h), run with tsl_graph_run.
 *
 * Set TSL_DEBUG=compile to print the graph after the passes and each kernel built.
 */
#ifndef TESSEL_MODELS_COMPILE_H
#define TESSEL_MODELS_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "models/graph.h"
#include "runtime/graph_executor.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_compile_options {
  const char *target;  /* target string (codegen/target.h); NULL = "host" */
  const char *records; /* tuning records file (tuner/records.h); the direct NCHW[x]c
                          convolutions take their best record through
                          tsl_dispatch_schedule (tuner/dispatch.h), which warns on
                          stderr for a layer without one; NULL = default schedules */
  bool no_passes;      /* compile the graph as given (for checking the passes) */
  bool no_layout;      /* keep every tensor in plain NCHW (skip layout selection) */
} tsl_compile_options;

/* What compilation did. Sizes in bytes, times in seconds. */
typedef struct tsl_compile_stats {
  int nodes_before, nodes_after;   /* graph nodes before / after the passes */
  int constants_folded;            /* nodes evaluated at compile time */
  int batch_norms_folded;          /* BatchNormalization nodes folded into convs */
  int nodes_fused;                 /* Add/Relu/Clip nodes folded into conv epilogues */
  int channel_shuffles;            /* Reshape-Transpose-Reshape shuffles made one node */
  int layout_transforms;           /* NCHW <-> NCHW[x]c transform nodes inserted */
  int steps;                       /* kernel calls per run */
  int kernels;                     /* distinct kernels built (<= steps) */
  int records_used;                /* workloads whose schedule came from the records */
  int64_t activation_bytes;        /* all activation tensors, unshared */
  int64_t planned_peak_bytes;      /* the arena after memory planning */
  int64_t constant_bytes;          /* weights held by the plan */
  double pass_seconds, build_seconds, total_seconds;
} tsl_compile_stats;

/* Runs the graph passes on g in place (in the order above, then layout selection into
 * NCHW[x]c with x = block when block > 0; models/passes/layout.h) and counts what they
 * did in stats (may be NULL). Value and node ids change.
 * Errors: those of the passes (TSL_ERR_INVALID for a malformed graph, TSL_ERR_NOMEM). */
tsl_status tsl_graph_optimize(tsl_graph *g, int block, tsl_compile_stats *stats);

/* Compiles g (not modified; shapes inferred) for opts->target into a new plan (free
 * with tsl_graph_plan_free). opts and stats may be NULL.
 * Errors: TSL_ERR_UNSUPPORTED (a node no kernel computes, a target that cannot run
 * here), TSL_ERR_IO (an unreadable records file), TSL_ERR_INVALID (malformed graph),
 * TSL_ERR_CODEGEN (a kernel failed to build: the message names the node), NOMEM. */
tsl_status tsl_graph_compile(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                             tsl_compile_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
