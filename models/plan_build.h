/* Internal to the graph compilers: the one plan builder of the JIT (models/compile.c)
 * and the AOT (models/aot_model.c) compilers.
 *
 * From an optimized graph (tsl_graph_optimize) it makes the plan both run:
 *   - the convolutions first, through models/compile_conv.h (dispatch, weight
 *     pre-transforms; g gains the transformed weights);
 *   - every other node's kernel (models/node_kernels.h), one per distinct workload
 *     text: a bitserial conv's record or template default, a registry operator, or the
 *     node's DSL text, scheduled by ops/nn/default_schedule.h, and built the way the
 *     conv lowering builds its kernels (its build_kernel hook: JIT-compiled into its
 *     module, or lowered for a target by the AOT compiler);
 *   - the steps in node order; value lifetimes over the steps; optionally concat
 *     elision (a channel concat whose inputs write straight into its buffer);
 *   - memory planning (models/passes/plan_memory.h) of the activations;
 *   - the plan itself, written to a sink: activations, the constants kernels read (and
 *     constant graph outputs), views (aliases, elided-concat slices), steps (a conv's
 *     label names its template), inputs and outputs under the names of the graph as
 *     given.
 * What differs between the compilers is only the sink (a tsl_graph_plan, or a
 * tsl_model_writer for a model file) and the kernel build hook.
 */
#ifndef TESSEL_MODELS_PLAN_BUILD_H
#define TESSEL_MODELS_PLAN_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "models/compile.h"
#include "models/compile_conv.h"
#include "models/graph.h"
#include "runtime/module.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

/* Where the plan goes. Each call means what runtime/graph_executor.h's
 * tsl_graph_plan_add_* call of the same name means (buffers numbered from 0 in the
 * order added across constant, activation and view; offsets and sizes in bytes);
 * `constant` takes t (compact) whether it succeeds or not; `io` declares a graph input
 * (output false) or output. */
typedef struct tsl_plan_sink {
  void *self;
  tsl_status (*constant)(void *self, tsl_tensor *t, int *buf);
  tsl_status (*activation)(void *self, int64_t offset, int64_t bytes, int *buf);
  tsl_status (*view)(void *self, int base, int64_t offset, int64_t bytes, int *buf);
  tsl_status (*step)(void *self, const tsl_kernel *k, const char *label, int nargs, const int *bufs);
  tsl_status (*io)(void *self, bool output, const char *name, int buf, tsl_dtype dt, int ndim, const int64_t *shape);
  /* optional (NULL: none): tsl_graph_plan_claim_output of argument `arg` of step `step`
   * (steps numbered from 0 in the order added) */
  tsl_status (*claim)(void *self, int step, int arg);
} tsl_plan_sink;

/* Claimed outputs (runtime/graph_executor.h tsl_graph_plan_claim_output): a kernel whose
 * floating-point operations per output byte (tsl_conv_lowering_flops_per_byte) are
 * below this has its outputs claimed where the buffer allows and where the output is at
 * least as large as each activation the kernel reads (a stride-2 pool, reading 4x its
 * output, measured no better claimed: 0.055 -> 0.064 ms). Measured at 2 threads on
 * znver5 (session 37, docs/capi.md "Claimed outputs"): a 3x3 depthwise conv (4.5-6
 * FLOP/byte) on 14 x 14 x 576 went 0.034 -> 0.020 ms with its claim, and MobileNetV2/V3,
 * LRASPP and ShuffleNetV2 4-8% faster end to end; claiming every kernel (1x1 GEMMs at
 * 8-300, 7x7 depthwise at 24.5) made ResNet-18 and ConvNeXt 2-7% slower, zeroing bytes
 * the compute-bound kernels had no trouble writing. */
#define TSL_CLAIM_MAX_FLOPS_PER_BYTE 8.0

typedef struct tsl_plan_kernel tsl_plan_kernel;

typedef struct tsl_plan_builder {
  /* in: the conv lowering's inputs (jit, module, target, records, warn, build_kernel
   * hook and its context, kernel_arena) serve every kernel of the plan; its counters
   * count the convs (and bitserial convs scheduled by a record as tuned) */
  tsl_conv_lowering convs;
  const char *who;         /* prefix of error messages: "compile", "aot compile" */
  bool elide_concats;      /* concat elision (plan_build.c); the JIT compiler's, the AOT
                              compiler's files keep every concat kernel */
  bool want_conv_steps;    /* fill conv_steps */
  bool claim_outputs;      /* claim the outputs of low-intensity kernels through
                              sink->claim (TSL_CLAIM_MAX_FLOPS_PER_BYTE) */
  /* out */
  int claimed;             /* step outputs claimed */
  int kernels;             /* distinct kernels built for the other nodes */
  bool auto_schedule;      /* kernels with a reduction and no template: the auto-scheduler's
                              schedule (models/compile.h, tsl_compile_options) */
  int auto_kernels;        /* of which scheduled by the auto-scheduler (no template) */
  double build_seconds;    /* building them */
  int steps;               /* kernel calls per run */
  int64_t activation_bytes; /* all activations, unplanned */
  int64_t arena_bytes;     /* the planned peak (tsl_pass_plan_memory) */
  int64_t constant_bytes;  /* constants written to the sink */
  tsl_conv_step *conv_steps; /* want_conv_steps: every conv step (malloc'd; the caller's) */
  int nconv_steps;
  /* private: the kernels built, by workload text */
  tsl_plan_kernel *cache;
  int ncache, capcache;
} tsl_plan_builder;

/* Builds the plan of g (the optimized graph; its convs' weights are replaced, see
 * compile_conv.h) into sink; orig is the graph as given, whose input and output names
 * the plan keeps (passes may rename the values). b is zeroed by the caller, then its
 * inputs set. Errors (messages prefixed with b->who, naming the node): those of the
 * conv lowering, tsl_node_kernel_make, instantiation, scheduling and the build hook;
 * TSL_ERR_INVALID (a graph output no node computes), those of the sink, TSL_ERR_NOMEM. */
tsl_status tsl_plan_build(tsl_plan_builder *b, tsl_graph *g, const tsl_graph *orig, const tsl_plan_sink *sink);

/* Frees the builder's private state and its conv lowering's (not conv_steps, nor the
 * jit, module or records it was given). */
void tsl_plan_builder_clear(tsl_plan_builder *b);

#endif
