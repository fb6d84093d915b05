/* The graph compiler driver (compile.h). */
#include "models/compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "ops/registry.h"
#include "dsl/parser.h"
#include "dsl/te.h"
#include "ir/arena.h"
#include "models/compile_conv.h"
#include "ops/nn/default_schedule.h"
#include "models/node_kernels.h"
#include "models/node_kernels_binary.h"
#include "models/passes/binary_channels_last.h"
#include "models/passes/binary_read_blocked.h"
#include "models/passes/bit_im2col.h"
#include "models/passes/lut_conv.h"
#include "models/passes/channel_gather.h"
#include "models/passes/channel_shuffle.h"
#include "models/passes/channels_first.h"
#include "models/passes/fold_batch_norm.h"
#include "models/passes/fold_constants.h"
#include "models/passes/fuse_channel_scale.h"
#include "models/passes/fuse_conv.h"
#include "models/passes/fuse_gelu.h"
#include "models/passes/layer_norm.h"
#include "models/passes/fuse_gating.h"
#include "models/passes/sink_resize.h"
#include "models/passes/squeeze_excite.h"
#include "models/passes/plan_memory.h"
#include "models/passes/layout.h"
#include "models/passes/pack_dense.h"
#include "models/passes/phase_conv.h"
#include "models/plan_build.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/records.h"

static bool debug_on(void) {
  const char *d = getenv("TSL_DEBUG");
  return d && strstr(d, "compile");
}

int tsl_compile_fuse_expand_dw_mode(int opt) {
  if (opt) return opt > 0 ? 1 : -1;
  const char *e = getenv("TSL_FUSE_EXPAND_DW");
  if (e && strcmp(e, "all") == 0) return 1;
  if (e && strcmp(e, "none") == 0) return -1;
  return 0;
}

/* Whether the lookup-table conv pass runs: not with the option no_lut_conv, nor with the
 * environment variable TSL_LUT_CONV=none (for A/B measurements). */
static bool lut_conv_on(bool no_lut_conv) {
  const char *e = getenv("TSL_LUT_CONV");
  return !no_lut_conv && !(e && strcmp(e, "none") == 0);
}

/* tsl_graph_optimize; binary_nchw skips the binary channels-last and blocked-read passes,
 * lut = false the lookup-table conv pass. */
static tsl_status optimize(tsl_graph *g, int block, bool binary_nchw, bool lut, tsl_compile_stats *stats) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "graph optimize: NULL graph");
  tsl_compile_stats local;
  if (!stats) stats = &local;
  stats->nodes_before = g->n_nodes;
  tsl_status st = tsl_pass_fold_constants(g, &stats->constants_folded);
  int gelus = 0;
  if (st == TSL_OK) st = tsl_pass_layer_norm(g, &stats->layer_norms);
  if (st == TSL_OK) st = tsl_pass_fuse_gelu(g, &gelus);
  stats->layer_norms += gelus;
  /* before conv fusion: the 1x1 convs it makes take their residual Add */
  if (st == TSL_OK && block > 0) st = tsl_pass_channels_first(g, &stats->channels_first);
  if (st == TSL_OK) st = tsl_pass_fold_batch_norm(g, &stats->batch_norms_folded);
  /* before conv fusion: the Add after the moved conv becomes the other conv's residual */
  if (st == TSL_OK) st = tsl_pass_sink_resize(g, &stats->resizes_sunk);
  int gated = 0;
  if (st == TSL_OK) st = tsl_pass_fuse_gating(g, &gated);
  if (st == TSL_OK) st = tsl_pass_fuse_conv(g, block, &stats->nodes_fused);
  stats->nodes_fused += gated;
  if (st == TSL_OK) st = tsl_pass_channel_shuffle(g, &stats->channel_shuffles);
  if (st == TSL_OK) st = tsl_pass_channel_gather(g, &stats->channel_gathers);
  /* after conv fusion (the conv keeps its activation and residual), before layout
   * selection (which then blocks the phases for the stride-1 conv) */
  stats->phase_convs = 0;
  if (st == TSL_OK && block > 0) st = tsl_pass_phase_conv(g, block, &stats->phase_convs);
  /* packing first: the layout pass then leaves the packed weights alone instead of
   * transposing them for the packing to copy again */
  if (st == TSL_OK && block > 0) st = tsl_pass_pack_dense(g, block, NULL);
  if (st == TSL_OK && block > 0) st = tsl_pass_select_layout(g, block, &stats->layout_transforms);
  /* after layout selection and conv fusion: a blocked kernel taking the convs' functions */
  int excites = 0;
  if (st == TSL_OK && block > 0) st = tsl_pass_squeeze_excite(g, &excites);
  stats->nodes_fused += 2 * excites;
  /* after layout selection: it folds into blocked convs only */
  int scaled = 0;
  if (st == TSL_OK && block > 0) st = tsl_pass_fuse_channel_scale(g, &scaled);
  stats->nodes_fused += scaled;
  stats->binary_channels_last = 0;
  if (st == TSL_OK && !binary_nchw) st = tsl_pass_binary_channels_last(g, &stats->binary_channels_last);
  /* after the channels-last pass: its quantize_unipolar_i32_nhwc has a blocked twin */
  stats->binary_blocked_reads = 0;
  if (st == TSL_OK && !binary_nchw) st = tsl_pass_binary_read_blocked(g, &stats->binary_blocked_reads);
  /* after the channels-last pass (its _nhwc convs are rewritten alike) */
  stats->bit_im2col_convs = 0;
  if (st == TSL_OK) st = tsl_pass_bit_im2col(g, &stats->bit_im2col_convs);
  /* after layout selection (the conv's blocked output) and the blocked-read pass (which
   * makes the unpack write the conv's blocked input) */
  stats->lut_convs = 0;
  if (st == TSL_OK && lut && block > 0) st = tsl_pass_lut_conv(g, &stats->lut_convs);
  stats->nodes_after = g->n_nodes;
  return st;
}

tsl_status tsl_graph_optimize(tsl_graph *g, int block, tsl_compile_stats *stats) {
  return optimize(g, block, false, lut_conv_on(false), stats);
}

/* ---- the JIT plan as the plan builder's sink (plan_build.h) ---- */

static tsl_status plan_constant(void *p, tsl_tensor *t, int *buf) { return tsl_graph_plan_add_constant(p, t, buf); }

static tsl_status plan_activation(void *p, int64_t offset, int64_t bytes, int *buf) {
  return tsl_graph_plan_add_activation(p, offset, bytes, buf);
}

static tsl_status plan_view(void *p, int base, int64_t offset, int64_t bytes, int *buf) {
  return tsl_graph_plan_add_view(p, base, offset, bytes, buf);
}

static tsl_status plan_step(void *p, const tsl_kernel *k, const char *label, int nargs, const int *bufs) {
  return tsl_graph_plan_add_step(p, k, label, nargs, bufs);
}

static tsl_status plan_claim(void *p, int step, int arg) { return tsl_graph_plan_claim_output(p, step, arg); }

static tsl_status plan_io(void *p, bool output, const char *name, int buf, tsl_dtype dt, int ndim, const int64_t *shape) {
  return (output ? tsl_graph_plan_add_output : tsl_graph_plan_add_input)(p, name, buf, dt, ndim, shape);
}

static tsl_status compile_graph(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                                tsl_compile_stats *stats, tsl_conv_step **conv_steps, int *nconv) {
  if (!g || !out) return tsl_error(TSL_ERR_INVALID, "compile: NULL argument");
  *out = NULL;
  tsl_compile_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  tsl_compile_options o = {0};
  if (opts) o = *opts;
  double t0 = tsl_time_now();
  tsl_target target;
  const tsl_records *records = NULL; /* NULL: default schedules */
  tsl_records *owned = NULL;         /* records loaded from a file (freed at the end) */
  tsl_status st = tsl_target_parse(o.target ? o.target : "host", &target);
  if (st != TSL_OK) return st;
  if (o.records_db) {
    records = o.records_db;
  } else if (o.records) {
    if ((st = tsl_records_new(&owned)) != TSL_OK) return st;
    if ((st = tsl_records_load(owned, o.records, true, stderr)) != TSL_OK) {
      tsl_records_free(owned);
      return st;
    }
    records = owned;
  }
  tsl_graph *work = NULL;
  tsl_graph_plan *plan = NULL;
  if ((st = tsl_graph_clone(g, &work)) != TSL_OK) {
    tsl_records_free(owned);
    return st;
  }
  int block = o.no_layout ? 0 : tsl_target_f32_lanes(&target);
  if (!o.no_passes) st = optimize(work, block, o.binary_nchw, lut_conv_on(o.no_lut_conv), stats);
  else stats->nodes_before = stats->nodes_after = work->n_nodes;
  stats->pass_seconds = tsl_time_now() - t0;
  if (st == TSL_OK && debug_on()) {
    fprintf(stderr, "compile: graph after the passes\n");
    tsl_graph_print(work, stderr);
  }
  tsl_jit *jit = NULL;
  tsl_module *module = NULL;
  tsl_plan_builder pb = {.who = "compile", .elide_concats = true, .want_conv_steps = conv_steps != NULL};
  if (st == TSL_OK) st = tsl_jit_new(&target, &jit);
  if (st == TSL_OK) st = tsl_module_new(&module);
  if (st == TSL_OK) st = tsl_graph_plan_new(&plan);
  if (st == TSL_OK) {
    tsl_graph_plan_set_module(plan, module);
    pb.convs.jit = jit;
    pb.convs.module = module;
    pb.convs.target = &target;
    pb.convs.records = records;
    pb.convs.warn = o.verbose ? stderr : NULL;
    pb.convs.fuse_expand_dw = tsl_compile_fuse_expand_dw_mode(o.fuse_expand_dw);
    pb.auto_schedule = !o.no_auto_schedule;
    pb.claim_outputs = !o.no_claim_outputs;
    tsl_plan_sink sink = {plan, plan_constant, plan_activation, plan_view, plan_step, plan_io, plan_claim};
    st = tsl_plan_build(&pb, work, g, &sink);
  } else {
    tsl_module_free(module);
  }
  stats->kernels = pb.kernels + pb.convs.kernels;
  stats->conv_layers = pb.convs.layers;
  stats->expand_dw_fused = pb.convs.fused;
  stats->claimed_outputs = pb.claimed;
  stats->records_used = pb.convs.tuned;
  stats->auto_kernels = pb.auto_kernels;
  stats->records_missed = pb.convs.missed;
  stats->activation_bytes = pb.activation_bytes;
  if (st == TSL_OK && records && pb.convs.missed && !o.verbose && !o.no_missed_warning) {
    char tstr[192];
    tsl_target_str(&target, tstr, sizeof tstr);
    /* one line per model (per layer with verbose: tuner/dispatch.h's line) */
    fprintf(stderr,
            "tessel: warning: no tuning record for %d of %d distinct conv workloads on %s (first: %s); using the "
            "default schedules for them (per-layer lines: --verbose)\n",
            pb.convs.missed, pb.convs.kernels, tstr, pb.convs.missed_key);
  }
  if (st == TSL_OK) {
    char tstr[192];
    tsl_conv_lowering_note_static(&pb.convs, tsl_target_str(&target, tstr, sizeof tstr), stderr);
  }
  tsl_records_free(owned);
  stats->build_seconds = pb.build_seconds + pb.convs.build_seconds;
  stats->weight_seconds = pb.convs.weight_seconds;
  tsl_plan_builder_clear(&pb);
  tsl_jit_free(jit);
  tsl_graph_free(work);
  if (st != TSL_OK) {
    tsl_graph_plan_free(plan);
    free(pb.conv_steps);
    return st;
  }
  stats->steps = pb.steps;
  stats->planned_peak_bytes = tsl_graph_plan_arena_bytes(plan);
  stats->constant_bytes = tsl_graph_plan_constant_bytes(plan);
  stats->total_seconds = tsl_time_now() - t0;
  *out = plan;
  if (conv_steps) {
    *conv_steps = pb.conv_steps;
    *nconv = pb.nconv_steps;
  }
  return TSL_OK;
}

tsl_status tsl_graph_compile(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                             tsl_compile_stats *stats) {
  return compile_graph(g, opts, out, stats, NULL, NULL);
}

tsl_status tsl_graph_compile_conv_steps(const tsl_graph *g, const tsl_compile_options *opts, tsl_graph_plan **out,
                                        tsl_compile_stats *stats, tsl_conv_step **conv_steps, int *nconv) {
  if (!conv_steps || !nconv) return tsl_error(TSL_ERR_INVALID, "compile: NULL conv_steps");
  *conv_steps = NULL;
  *nconv = 0;
  return compile_graph(g, opts, out, stats, conv_steps, nconv);
}
