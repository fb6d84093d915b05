/* tessel — ahead-of-time compilation of a whole model into one file for a device.
 *
 *   graph -> the graph compiler's passes and layout (models/compile.h: tsl_graph_optimize
 *            with the TARGET's vector lanes, e.g. NCHW4c for armv8, NCHW8c for AVX2)
 *         -> the convolutions through models/compile_conv.h as tsl_graph_compile does
 *            (each layer's best record's algorithm + config, else the default
 *            algorithm's default config, for the TARGET), their kernels LOWERED for the
 *            target instead of JIT-compiled; the weight pre-transforms (re-layout,
 *            Winograd kernel transform, GEMM packing) run here on a host JIT, once
 *         -> the other nodes: one kernel per distinct workload (models/node_kernels.h),
 *            scheduled as tsl_graph_compile schedules it, lowered for the target
 *         -> memory planning (models/passes/plan_memory.h), as tsl_graph_compile
 *         -> every kernel into one shared object (codegen/aot.h, ld.lld-19), with the
 *            plan and the constants appended (runtime/model_file.h; format docs/aot.md).
 *
 * The file runs with the runtime alone: tsl_model_file_load (runtime/model_file.h) and
 * the graph executor, e.g. the device app examples/device_app.c under qemu-aarch64.
 * The target need not run here (armv8 on an x86 workstation); "host" gives a file this
 * machine loads with the same loader.
 */
#ifndef TESSEL_MODELS_AOT_MODEL_H
#define TESSEL_MODELS_AOT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_aot_model_options {
  const char *target;  /* target string (target/target.h); NULL = "host" */
  const char *records; /* tuning records file (tuner/records.h), as for tsl_graph_compile;
                          NULL = default schedules */
  bool no_layout;      /* keep every tensor in plain NCHW */
  bool verbose;        /* per-layer "no tuning record" lines (else one line per model) */
  bool no_auto_schedule; /* kernels with a reduction and no template keep the generic
                            default schedule (models/compile.h, the same option) */
  int fuse_expand_dw;  /* expand 1x1 + depthwise fusion, as tsl_compile_options.fuse_expand_dw */
} tsl_aot_model_options;

/* What the compilation made. Bytes, seconds. */
typedef struct tsl_aot_model_stats {
  int steps;                /* kernel calls per run */
  int kernels;              /* distinct kernels in the object */
  int conv_layers;          /* conv nodes lowered through the tuner's dispatch */
  int records_used;         /* conv workloads whose schedule came from the records */
  int records_missed;       /* conv workloads without a matching record (records given) */
  int64_t arena_bytes;      /* planned peak activation memory */
  int64_t constant_bytes;   /* weights in the file */
  int64_t plan_bytes;       /* the appended plan with its constants */
  double lower_seconds;     /* passes + scheduling + lowering + weight transforms */
  double weight_seconds;    /* conv weight pre-transforms (host JIT compile and run) */
  double codegen_seconds;   /* LLVM + link (tsl_aot_compile) */
} tsl_aot_model_stats;

/* Compiles g (not modified; shapes inferred) for opts->target into the model file
 * out_so (created or replaced; removed again on failure). opts and stats may be NULL.
 * Errors: TSL_ERR_INVALID (NULL arguments, malformed graph), TSL_ERR_UNSUPPORTED (a
 * node no kernel computes, an unknown target), TSL_ERR_CODEGEN (a kernel failed to
 * lower or compile: the message names the node), TSL_ERR_IO (records unreadable, the
 * linker, writing the file), TSL_ERR_NOMEM. */
tsl_status tsl_aot_compile_model(const tsl_graph *g, const tsl_aot_model_options *opts, const char *out_so,
                                 tsl_aot_model_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
