/* Internal to the graph compilers (models/plan_build.h): the convolutions of a graph in the
 * NCHW[x]c layout, built through the tuner's dispatch (tuner/dispatch.h).
 *
 * For each blocked Conv node (models/passes/layout.h: TSL_ATTR_BLOCKED_WEIGHTS; OIHW
 * weight and bias constants, fused activation / residual attributes):
 *   - the layer (tsl_conv2d_layer) and its family workload (ops/conv2d/algorithms_conv.h: the
 *     key records are stored under);
 *   - tsl_dispatch_schedule_any: the best record's algorithm and config, else the
 *     algorithm tsl_conv2d_select picks with its template's default config;
 *   - the kernel, JIT-compiled once per distinct family workload;
 *   - the weight pre-transform (re-layout, Winograd kernel transform, GEMM packing): the
 *     algorithm's weight program, compiled and run ONCE here; its output and the
 *     zero-padded bias replace the node's weight and bias constants.
 */
#ifndef TESSEL_MODELS_COMPILE_CONV_H
#define TESSEL_MODELS_COMPILE_CONV_H

#include <stdbool.h>
#include <stdio.h>

#include "codegen/jit.h"
#include "ir/arena.h"
#include "models/graph.h"
#include "models/node_kernels.h"
#include "ops/conv2d/conv2d_layer.h"
#include "runtime/module.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"

typedef struct tsl_conv_cache_entry tsl_conv_cache_entry;

typedef struct tsl_conv_lowering {
  /* in */
  tsl_jit *jit;
  tsl_module *module;
  const tsl_target *target;
  const tsl_records *records; /* NULL: default schedules, no warnings */
  FILE *warn;                 /* per-layer "no tuning record" lines (verbose), or NULL */
  /* optional (NULL: JIT-compile into module): makes the conv kernels instead, e.g. the
   * AOT compiler (models/aot_model.c) lowers them for a cross target and returns a
   * stand-in kernel carrying the name; weight programs still JIT-compile into module
   * and run here. kernel_arena (optional): the arena the conv programs, schedules and
   * kernels are made in, kept by the caller (by default a temporary one per kernel). */
  tsl_status (*build_kernel)(void *build_ctx, const tsl_schedule *s, const char *name, const tsl_kernel **out);
  void *build_ctx;
  tsl_arena *kernel_arena;
  /* optional: an array of the graph's node count (zeroed by the caller); each conv
   * node's entry receives what the dispatch chose for it (valid until
   * tsl_conv_lowering_clear) */
  const tsl_dispatch_info **node_info;
  /* optional: an array of the graph's node count (zeroed by the caller). When set, an
   * expand 1x1 conv whose only reader is a depthwise conv is fused into it where that
   * pays (models/compile_expand_dw.h): the depthwise node's step computes both, the
   * expand node's entry is set true and it gets no step (the caller skips it). NULL: no
   * fusion. */
  bool *fused_away;
  int fuse_expand_dw; /* which pairs: 0 where tsl_expand_dw_pays, 1 all, -1 none */
  /* out */
  int layers;          /* conv nodes built */
  int tuned;           /* of which a record chose the schedule */
  int tuned_static;    /* of which a static cost model estimate (tuner/cost_static.h) */
  char static_model[32]; /* that model's version (the first such record's) */
  int missed;          /* records given, but none matched the layer */
  char missed_key[1024]; /* the first family key that missed */
  int kernels;         /* distinct conv kernels built */
  int fused;           /* expand + depthwise pairs fused into one step */
  double build_seconds;
  double weight_seconds; /* weight pre-transforms (compile + run) */
  /* private: entries allocated one by one, so a pointer to one stays valid while
   * others are added (a layer holds its conv kernel's entry across its weight
   * program's) */
  tsl_conv_cache_entry **cache;
  int ncache, capcache;
  /* every kernel tsl_conv_lowering_build made, with its floating-point operations per
   * output byte (tsl_conv_lowering_flops_per_byte) */
  struct tsl_kernel_intensity *intensity;
  int nintensity, capintensity;
} tsl_conv_lowering;

/* Builds every blocked conv of g (see above); steps[node] (an array of g->n_nodes,
 * zeroed by the caller) receives each conv node's kernel call: kind TSL_NODE_KERNEL,
 * the arguments (node inputs then output; a channel-scaled conv's scale last, see
 * models/passes/fuse_channel_scale.h) with the shapes the kernel sees, label = the
 * algorithm. *kernels[node] the kernel. pre_steps (may be NULL; like steps) receives the
 * call that must run before a conv's own, kind TSL_NODE_KERNEL with a text to build
 * (a registry operator: the channel scale of the transformed weight of a 1x1 conv the
 * GEMM does not take); untouched (zero) for the others. g gains the transformed weight
 * constants and the scaled weights' values (node inputs re-pointed; no node ids change).
 * Errors: TSL_ERR_INVALID (a malformed conv node), TSL_ERR_UNSUPPORTED (a channel scale
 * no kernel computes: several images outside the GEMM, or pre_steps NULL), those of the
 * dispatch, the build and the weight transform (messages name the node). */
tsl_status tsl_lower_convs(tsl_graph *g, tsl_conv_lowering *cl, tsl_node_kernel *steps, tsl_node_kernel *pre_steps,
                           const tsl_kernel **kernels);

/* The one line a compiled model prints when static estimates chose some of its conv
 * schedules (cl->tuned_static > 0; nothing otherwise), on f:
 *   tessel: note: N of M distinct conv workloads on TARGET use schedules picked by the
 *   static cost model (MODEL), not measured (docs/cost_static.md)
 * (one line; shown wrapped). */
void tsl_conv_lowering_note_static(const tsl_conv_lowering *cl, const char *target, FILE *f);

/* Builds schedule s as kernel `name` the way cl builds its conv kernels: through
 * cl->build_kernel when set, else JIT-compiled into cl->module (cl->jit's target).
 * *out is the kernel (owned by the module, or by the hook's caller). The graph
 * compilers build every other node's kernel through it too (models/plan_build.h).
 * Errors: those of the hook, or of tsl_build and tsl_module_get_kernel. */
tsl_status tsl_conv_lowering_build(tsl_conv_lowering *cl, const tsl_schedule *s, const char *name,
                                   const tsl_kernel **out);

/* Floating-point operations per output byte of kernel k as tsl_conv_lowering_build
 * made it: tsl_program_flops of its program (2 per multiply-add of a reduction, 1 per
 * element of any other stage) over the bytes of the program's outputs. -1 for a kernel
 * cl did not build (or whose outputs are empty). The graph compilers claim the outputs
 * of kernels below TSL_CLAIM_MAX_FLOPS_PER_BYTE (plan_build.h). */
double tsl_conv_lowering_flops_per_byte(const tsl_conv_lowering *cl, const tsl_kernel *k);

/* The layer conv node `node` states (NCHW semantics; the weight constant is OIHW): its
 * shapes, window, groups, block and fused epilogue. Errors: TSL_ERR_INVALID (not a
 * blocked conv with a constant OIHW weight, a bias that is not K constants, channel
 * counts that disagree), those of tsl_conv2d_layer_check. */
tsl_status tsl_conv_node_layer(const tsl_graph *g, int node, tsl_conv2d_layer *d);

/* Runs algorithm a's weight program for layer d (as its family workload states it: the
 * true C and K; the program reads them zero-padded to whole blocks) on the OIHW weight w;
 * *out (owned by the caller) is the conv kernel's weight input. The weight programs are
 * built once per shape (cl's cache). Errors: the algorithm's instantiation, the build,
 * a weight that does not fit the program (TSL_ERR_INVALID), TSL_ERR_NOMEM. */
tsl_status tsl_conv_lowering_weights(tsl_conv_lowering *cl, const tsl_conv2d_layer *d, tsl_conv2d_algo a,
                                     const tsl_tensor *w, tsl_tensor **out);

/* The kernel cached under key by tsl_conv_lowering_cache, or NULL; *info (info may be
 * NULL) what the dispatch chose for it, NULL when none was cached. */
const tsl_kernel *tsl_conv_lowering_cached(tsl_conv_lowering *cl, const char *key, const tsl_dispatch_info **info);

/* Caches kernel k under key (a workload key: identical layers share one kernel), with a
 * copy of info (may be NULL; valid until tsl_conv_lowering_clear). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_conv_lowering_cache(tsl_conv_lowering *cl, const char *key, const tsl_kernel *k,
                                   const tsl_dispatch_info *info);

/* Counts a kernel built from dispatch choice info for workload key: kernels, tuned
 * (tuned_static and static_model for a static estimate), missed and missed_key when
 * records were given and none matched. */
void tsl_conv_lowering_count(tsl_conv_lowering *cl, const tsl_dispatch_info *info, const char *key);

/* Frees the lowering's private state (not the jit, module or records). */
void tsl_conv_lowering_clear(tsl_conv_lowering *cl);

#endif
