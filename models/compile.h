/* tessel — the graph compiler: a model graph to a plan of JIT-compiled kernel calls.
 *
 *   graph -> passes (models/passes/: fold constants, fold batch-norm into convs, fuse
 *            conv + bias + activation (+ residual add), layout NCHW[x]c)
 *         -> convolutions (models/compile_conv.h): each layer's family workload
 *            (ops/conv2d/algorithms_conv.h) through the tuner's dispatch: the best record's
 *            algorithm + config, else tsl_conv2d_select's algorithm with its
 *            template's default config; weights transformed once by the algorithm's
 *            weight program; identical layers share one kernel
 *         -> the other nodes: one workload per node (models/node_kernels.h: the
 *            node's operator text with its shapes); identical workloads share one
 *            kernel: DSL instantiate -> default schedule -> tsl_build (JIT)
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
#include "ops/conv2d/conv2d_select.h"
#include "ops/conv2d/expand_depthwise.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"
#include "ops/workload.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One distinct convolution layer of a model as the compiler builds it. */
typedef struct tsl_conv_layer {
  tsl_workload workload; /* its family workload: the records key (ops/conv2d/algorithms_conv.h) */
  tsl_conv2d_layer desc;  /* the layer (true channel counts, fused epilogue, block); for a
                             fused pair its depthwise conv */
  bool fused;            /* an expand 1x1 + depthwise pair the compiler fuses: workload is
                            the fused workload (ops/conv2d/expand_depthwise.h), fused_desc
                            the pair, node its depthwise node */
  tsl_expand_dw_layer fused_desc;
  char node[128];        /* the first node with this workload */
  int count;             /* nodes with this workload */
  int only_algo;         /* -1: every algorithm of the family can compute the compiled layer;
                            else the one conv algorithm (tsl_conv2d_algo) its compiled form
                            runs (a channel scale read inside the GEMM 1x1 kernel,
                            models/passes/fuse_channel_scale.h): tune and dispatch only it
                            (tsl_tune_opts.only_algo, tsl_dispatch_schedule_conv_algo). A
                            layer whose family workload itself admits fewer algorithms (the
                            plain-NCHW stem conv: grouped only, tsl_conv2d_algo_applies)
                            keeps -1: tsl_algorithms_for already lists only those. */
} tsl_conv_layer;

/* The distinct conv layers of g compiled for `target` (NULL: "host") after the passes
 * (batch-norm folding, epilogue fusion, NCHW[x]c layout): exactly the family workloads
 * tsl_graph_compile looks up in a records file, in graph order, one entry per distinct
 * (workload, only_algo): a workload both channel-scaled and not is listed twice. An
 * expand 1x1 + depthwise pair the compiler fuses (default options, models/
 * compile_expand_dw.h) is ONE entry, its fused workload (at the depthwise node's place;
 * fused set), whatever its activations (table functions are the fused workload's
 * epilogues), and neither conv is listed. Writes up to max into out, the number of
 * distinct layers into *n (may exceed max).
 * Errors: those of the target, the passes and shape inference; TSL_ERR_INVALID for a
 * malformed conv node. */
tsl_status tsl_graph_conv_layers(const tsl_graph *g, const char *target, tsl_conv_layer *out, int max, int *n);

typedef struct tsl_compile_options {
  const char *target;  /* target string (target/target.h); NULL = "host" */
  const char *records; /* tuning records file (tuner/records.h): each NCHW[x]c conv
                          takes its best record's algorithm and config through
                          tsl_dispatch_schedule_any (tuner/dispatch.h); layers without
                          one take the default and ONE warning line per model names
                          how many missed and the first missed key (every layer's own
                          line with `verbose`); NULL = default schedules, no warning */
  bool no_passes;      /* compile the graph as given (for checking the passes) */
  bool no_layout;      /* keep every tensor in plain NCHW (skip layout selection) */
  bool verbose;        /* the dispatch's per-layer "no tuning record" lines on stderr */
  bool no_auto_schedule; /* kernels with a reduction and no template (reductions, softmax,
                            norms, pools written as node text) keep the generic default
                            schedule (ops/nn/default_schedule.h); false (the default): they
                            get the auto-scheduler's schedule (tuner/autosched.h: an OP.auto
                            record of a registry operator, else its deterministic default) */
  bool binary_nchw;    /* binary operators on NCHW tensors only: keep binarized nets' i32
                          residual streams NCHW and their f32 inputs plain (skip the passes
                          models/passes/binary_channels_last.h and binary_read_blocked.h;
                          for comparing the two) */
  bool no_lut_conv;    /* keep 1x1 convs of unpacked unipolar levels dense (skip the pass
                          models/passes/lut_conv.h, which otherwise runs with binary_nchw
                          too; TSL_LUT_CONV=none in the environment does the same, for A/B
                          measurements) */
  const tsl_records *records_db; /* records held in memory, used instead of the `records`
                                    file when non-NULL (not owned, not modified): the
                                    in-situ pass compiles model variants from them */
  bool no_missed_warning; /* no "no tuning record" line for layers without a record (a
                             plan that leaves some layers at their default on purpose: the
                             in-situ pass's final-plan check) */
  bool no_claim_outputs; /* no claimed outputs (runtime/graph_executor.h
                            tsl_graph_plan_claim_output; models/plan_build.h
                            TSL_CLAIM_MAX_FLOPS_PER_BYTE): for comparing */
  int fuse_expand_dw;  /* expand 1x1 conv + depthwise conv pairs (models/compile_expand_dw.h):
                          0 fused where the size rule says it pays (the default; the
                          environment variable TSL_FUSE_EXPAND_DW=all or =none overrides it,
                          for A/B measurements), 1 every matching pair, -1 none */
} tsl_compile_options;

/* The expand/depthwise fusion mode (tsl_conv_lowering.fuse_expand_dw) of option value
 * `opt` (tsl_compile_options.fuse_expand_dw, tsl_aot_model_options.fuse_expand_dw): the
 * option when set (1 all, -1 none), else the environment variable TSL_FUSE_EXPAND_DW
 * ("all" 1, "none" -1), else 0 (the size rule). */
int tsl_compile_fuse_expand_dw_mode(int opt);

/* One conv kernel call of a compiled plan and what the dispatch chose for it. */
typedef struct tsl_conv_step {
  int step;               /* index among the plan's steps (tsl_graph_run's step_seconds) */
  char node[128];         /* the conv node (after the passes) */
  tsl_dispatch_info info; /* algorithm, template, config; info.record.workload is the
                             layer's family workload key, the records key */
} tsl_conv_step;

/* What compilation did. Sizes in bytes, times in seconds. */
typedef struct tsl_compile_stats {
  int nodes_before, nodes_after;   /* graph nodes before / after the passes */
  int constants_folded;            /* nodes evaluated at compile time */
  int batch_norms_folded;          /* BatchNormalization nodes folded into convs */
  int expand_dw_fused;             /* expand 1x1 + depthwise conv pairs run as one kernel */
  int claimed_outputs;             /* step outputs claimed before their kernel at 2+ threads
                                      (models/plan_build.h TSL_CLAIM_MAX_FLOPS_PER_BYTE) */
  int nodes_fused;                 /* Add/Relu/Clip nodes folded into conv epilogues, and gating
                                      Muls folded into Swish / HardSwish (passes/fuse_gating.h) */
  int channel_shuffles;            /* Reshape-Transpose-Reshape shuffles made one node */
  int resizes_sunk;                /* upsampling Resizes moved past their 1x1 conv */
  int channel_gathers;            /* channel selection chains composed (passes/channel_gather.h) */
  int phase_convs;                /* stride-2 convs rewritten over their input's phases (passes/phase_conv.h) */
  int layer_norms;                 /* written-out layer norms made one node, and GELUs one
                                      activation (passes/layer_norm.h, passes/fuse_gelu.h) */
  int channels_first;              /* channels-last chains run on NCHW (passes/channels_first.h) */
  int layout_transforms;           /* NCHW <-> NCHW[x]c transform nodes inserted */
  int binary_channels_last;        /* binary i32-stream nodes switched to their channels-last
                                      twins (passes/binary_channels_last.h) */
  int binary_blocked_reads;        /* binary nodes switched to read (packs, quantize) or write
                                      (the unpack) a blocked f32 tensor
                                      (passes/binary_read_blocked.h) */
  int lut_convs;                   /* 1x1 convs of unpacked unipolar levels run as lookup-table
                                      convs over the bit planes (passes/lut_conv.h) */
  int bit_im2col_convs;            /* bitserial convs of <= 32 channels run as 1x1 convs over
                                      their window's taps packed into words
                                      (passes/bit_im2col.h) */
  int steps;                       /* kernel calls per run */
  int kernels;                     /* distinct kernels built (<= steps) */
  int records_used;                /* workloads whose schedule came from the records (convs, and
                                      operators without a template tuned as OP.auto) */
  int auto_kernels;                /* kernels of operators without a template scheduled by the
                                      auto-scheduler (tuner/autosched.h: records, else its
                                      default) instead of the generic default schedule */
  int records_missed;              /* conv workloads without a matching record (records given) */
  int conv_layers;                 /* conv nodes built through the dispatch */
  int64_t activation_bytes;        /* all activation tensors, unshared */
  int64_t planned_peak_bytes;      /* the arena after memory planning */
  int64_t constant_bytes;          /* weights held by the plan */
  double pass_seconds, build_seconds, total_seconds;
  double weight_seconds;           /* conv weight pre-transforms (compile and run) */
} tsl_compile_stats;

/* Runs the graph passes on g in place (in the order above, then, when block > 0, layout
 * the packing of few-row fully connected weights into [N/x, K, x],
 * models/passes/pack_dense.h, and layout selection into NCHW[x]c with x = block,
 * models/passes/layout.h, and last the binarized nets' i32 residual streams channels-last,
 * models/passes/binary_channels_last.h, their packs and unpack reading and writing blocked
 * tensors, models/passes/binary_read_blocked.h, and their f32 1x1 convs of unpacked levels
 * as lookup-table convs, models/passes/lut_conv.h, unless TSL_LUT_CONV=none) and
 * counts what they did in stats (may be NULL). Value and node ids change.
 * Errors: those of the passes (TSL_ERR_INVALID for a malformed graph, TSL_ERR_NOMEM). */
tsl_status tsl_graph_optimize(tsl_graph *g, int block, tsl_compile_stats *stats);

/* Compiles g (not modified; shapes inferred) for opts->target into a new plan (free
 * with tsl_graph_plan_free). opts and stats may be NULL.
 * Errors: TSL_ERR_UNSUPPORTED (a node no kernel computes, a target that cannot run
 * here), TSL_ERR_IO (an unreadable records file), TSL_ERR_INVALID (malformed graph),
 * TSL_ERR_CODEGEN (a kernel failed to build: the message names the node), NOMEM. */
tsl_status tsl_graph_compile(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                             tsl_compile_stats *stats);

/* As tsl_graph_compile; also *conv_steps (malloc'd, the caller frees; NULL when the
 * plan has no conv step) receives one entry per conv kernel call of the plan, in step
 * order, and *nconv their number. Errors: as tsl_graph_compile (then *conv_steps NULL,
 * *nconv 0); TSL_ERR_INVALID for NULL conv_steps or nconv. */
tsl_status tsl_graph_compile_conv_steps(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                                        tsl_compile_stats *stats, tsl_conv_step **conv_steps, int *nconv);

#ifdef __cplusplus
}
#endif
#endif
