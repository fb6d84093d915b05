/* Ahead-of-time compilation of a whole model (aot_model.h). The graph-to-plan steps are
 * tsl_graph_compile's (models/compile.c) — the same passes and one plan builder
 * (models/plan_build.h: the convolution lowering with its weight pre-transforms run
 * here on a host JIT, the same kernel per workload text and schedule choice for the
 * other nodes, the same lifetimes and memory planning) — so an AOT file computes what
 * the JIT plan computes; only the kernels are lowered for the target (the builder's
 * kernel hook) and collected for one shared object instead of being JIT-compiled, and
 * the plan goes to a tsl_model_writer instead of a tsl_graph_plan. */
#include "models/aot_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/aot.h"
#include "codegen/jit.h"
#include "codegen/kernel_abi.h"
#include "ops/registry.h"
#include "dsl/parser.h"
#include "dsl/te.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "models/compile_conv.h"
#include "ops/nn/default_schedule.h"
#include "models/node_kernels.h"
#include "models/node_kernels_binary.h"
#include "models/passes/plan_memory.h"
#include "models/plan_build.h"
#include "runtime/model_file.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/records.h"

typedef struct aot_compiler {
  tsl_target target;
  tsl_records *records;
  tsl_arena *arena;      /* every lowered kernel */
  const tsl_func **funcs; /* the kernels, in the order lowered (the object's table) */
  int nkernels, cap;
  tsl_module *standins; /* the kernels as the plan builder sees them: name + signature */
} aot_compiler;

/* What a stand-in kernel points at; never called (the plan is written, not run). */
static int32_t standin_fn(void) { return 1; }

/* The plan builder's kernel hook (compile_conv.h's build_kernel): lowers kernel `name`
 * for the target (in c->arena, which is also the builder's kernel_arena, so the program
 * lives on), appends it to c->funcs and hands back a stand-in with its name and
 * signature. */
static tsl_status lower_kernel(void *ctx, const tsl_schedule *s, const char *name, const tsl_kernel **out) {
  aot_compiler *c = ctx;
  if (c->nkernels == c->cap) {
    int cap = c->cap ? 2 * c->cap : 32;
    const tsl_func **nf = realloc(c->funcs, (size_t)cap * sizeof *nf);
    if (!nf) return tsl_error(TSL_ERR_NOMEM, "aot compile: out of memory");
    c->funcs = nf;
    c->cap = cap;
  }
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = c->target.vector_bits;
  tsl_func *f;
  tsl_kernel_sig sig;
  tsl_status st = tsl_lower_with(s, name, &o, &f);
  if (st == TSL_OK) st = tsl_codegen_kernel_sig(f, &sig);
  if (st == TSL_OK) st = tsl_module_add_kernel(c->standins, name, (void *)standin_fn, &sig);
  if (st != TSL_OK) return st;
  c->funcs[c->nkernels++] = f;
  return tsl_module_get_kernel(c->standins, name, out);
}

/* ---- the model file as the plan builder's sink (plan_build.h) ---- */

static tsl_status file_constant(void *w, tsl_tensor *t, int *buf) {
  tsl_status st = tsl_model_writer_add_constant(w, t, buf); /* (copies the data) */
  tsl_tensor_free(t);
  return st;
}

static tsl_status file_activation(void *w, int64_t offset, int64_t bytes, int *buf) {
  return tsl_model_writer_add_activation(w, offset, bytes, buf);
}

static tsl_status file_view(void *w, int base, int64_t offset, int64_t bytes, int *buf) {
  return tsl_model_writer_add_view(w, base, offset, bytes, buf);
}

/* a step calls the kernel by its name in the object */
static tsl_status file_step(void *w, const tsl_kernel *k, const char *label, int nargs, const int *bufs) {
  return tsl_model_writer_add_step(w, tsl_kernel_name(k), label, nargs, bufs);
}

static tsl_status file_io(void *w, bool output, const char *name, int buf, tsl_dtype dt, int ndim,
                          const int64_t *shape) {
  return (output ? tsl_model_writer_add_output : tsl_model_writer_add_input)(w, name, buf, dt, ndim, shape);
}

tsl_status tsl_aot_compile_model(const tsl_graph *g, const tsl_aot_model_options *opts, const char *out_so,
                                 tsl_aot_model_stats *stats) {
  if (!g || !out_so || !out_so[0]) return tsl_error(TSL_ERR_INVALID, "aot compile: NULL argument");
  tsl_aot_model_stats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  tsl_aot_model_options o = {0};
  if (opts) o = *opts;
  double t0 = tsl_time_now();
  aot_compiler c = {0};
  tsl_status st = tsl_target_parse(o.target ? o.target : "host", &c.target);
  if (st != TSL_OK) return st;
  if (o.records) {
    if ((st = tsl_records_new(&c.records)) != TSL_OK) return st;
    if ((st = tsl_records_load(c.records, o.records, true, stderr)) != TSL_OK) {
      tsl_records_free(c.records);
      return st;
    }
  }
  char tstr[256];
  tsl_target_str(&c.target, tstr, sizeof tstr);
  tsl_graph *work = NULL;
  tsl_model_writer *w = NULL;
  tsl_jit *host_jit = NULL;
  tsl_module *weights = NULL;
  tsl_target host;
  c.arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(c.arena);
  bool wrote = false;
  /* the AOT files keep every concat kernel (no elision) */
  tsl_plan_builder pb = {.who = "aot compile", .auto_schedule = !o.no_auto_schedule};
  if ((st = tsl_graph_clone(g, &work)) != TSL_OK) goto done;
  int block = o.no_layout ? 0 : tsl_target_f32_lanes(&c.target);
  if ((st = tsl_graph_optimize(work, block, NULL)) != TSL_OK) goto done;
  /* the convolutions' weight programs run here, whatever the target: a host JIT */
  if ((st = tsl_target_parse("host", &host)) != TSL_OK || (st = tsl_jit_new(&host, &host_jit)) != TSL_OK) goto done;
  if ((st = tsl_module_new(&weights)) != TSL_OK || (st = tsl_module_new(&c.standins)) != TSL_OK) goto done;
  pb.convs.jit = host_jit;
  pb.convs.module = weights;
  pb.convs.target = &c.target;
  pb.convs.records = c.records;
  pb.convs.warn = o.verbose ? stderr : NULL;
  pb.convs.fuse_expand_dw = tsl_compile_fuse_expand_dw_mode(o.fuse_expand_dw);
  pb.convs.build_kernel = lower_kernel;
  pb.convs.build_ctx = &c;
  pb.convs.kernel_arena = c.arena;
  if ((st = tsl_model_writer_new(tstr, &w)) != TSL_OK) goto done;
  /* no claimed outputs: the model file format records none */
  tsl_plan_sink sink = {w, file_constant, file_activation, file_view, file_step, file_io, NULL};
  if ((st = tsl_plan_build(&pb, work, g, &sink)) != TSL_OK) goto done;
  if (c.records && pb.convs.missed && !o.verbose)
    fprintf(stderr,
            "tessel: warning: no tuning record for %d of %d distinct conv workloads on %s (first: %s); using the "
            "default schedules for them (per-layer lines: --verbose)\n",
            pb.convs.missed, pb.convs.kernels, tstr, pb.convs.missed_key);
  tsl_conv_lowering_note_static(&pb.convs, tstr, stderr);
  if (c.nkernels == 0) {
    st = tsl_error(TSL_ERR_UNSUPPORTED, "aot compile: the model has no kernel to compile");
    goto done;
  }
  double t1 = tsl_time_now();
  stats->lower_seconds = t1 - t0;
  wrote = true;
  if ((st = tsl_aot_compile(c.funcs, c.nkernels, &c.target, out_so)) != TSL_OK) goto done;
  st = tsl_model_writer_append(w, out_so, &stats->plan_bytes);
  stats->codegen_seconds = tsl_time_now() - t1;
done:
  if (st != TSL_OK && wrote) unlink(out_so);
  stats->steps = pb.steps;
  stats->kernels = c.nkernels;
  stats->conv_layers = pb.convs.layers;
  stats->records_used = pb.convs.tuned;
  stats->records_missed = pb.convs.missed;
  stats->arena_bytes = pb.arena_bytes;
  stats->constant_bytes = pb.constant_bytes;
  stats->weight_seconds = pb.convs.weight_seconds;
  free(c.funcs);
  tsl_plan_builder_clear(&pb);
  tsl_module_free(weights);
  tsl_module_free(c.standins);
  tsl_jit_free(host_jit);
  tsl_records_free(c.records);
  tsl_model_writer_free(w);
  tsl_graph_free(work);
  tsl_arena_set_current(prev);
  tsl_arena_free(c.arena);
  return st;
}
