/* The application API (include/tessel/tessel.h) over the graph, the compiler and the
 * graph executor. */
#include "tessel/tessel.h"

#include <stdlib.h>
#include <string.h>

#include "models/api_internal.h"
#include "models/compile.h"
#include "models/graph.h"
#include "models/onnx.h"
#include "models/zoo.h"
#include "runtime/claim_policy.h"
#include "runtime/graph_executor.h"
#include "runtime/parallel.h"

struct tsl_model {
  tsl_graph *graph;
};

struct tsl_compiled {
  tsl_graph_plan *plan;
  tsl_compile_stats stats;
  int num_threads; /* tsl_compile_opts.num_threads: 0 for the process-wide setting */
};

struct tsl_context {
  const tsl_compiled *compiled;
  tsl_graph_ctx *ctx;
};

/* Zoo models are built with this seed: the weights of "resnet18" are the same in every
 * program that loads it. */
#define TSL_API_ZOO_SEED 1

static bool is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n >= 5 && strcmp(s + n - 5, ".onnx") == 0);
}

tsl_status tsl_model_load(const char *source, tsl_model **out) {
  if (!source || !out) return tsl_error(TSL_ERR_INVALID, "tsl_model_load: NULL argument");
  *out = NULL;
  tsl_graph *g = NULL;
  tsl_status st = is_path(source) ? tsl_graph_load_onnx(source, &g) : tsl_zoo_build(source, TSL_API_ZOO_SEED, &g);
  if (st != TSL_OK) return st;
  tsl_model *m = calloc(1, sizeof *m);
  if (!m) {
    tsl_graph_free(g);
    return tsl_error(TSL_ERR_NOMEM, "tsl_model_load: out of memory");
  }
  m->graph = g;
  *out = m;
  return TSL_OK;
}

const tsl_graph *tsl_model_graph(const tsl_model *m) { return m->graph; }

void tsl_model_free(tsl_model *m) {
  if (!m) return;
  tsl_graph_free(m->graph);
  free(m);
}

int tsl_model_num_inputs(const tsl_model *m) { return m ? m->graph->n_inputs : 0; }
int tsl_model_num_outputs(const tsl_model *m) { return m ? m->graph->n_outputs : 0; }

static tsl_status model_io_info(const tsl_model *m, bool input, int i, const char **name, tsl_dtype *dtype,
                                int *ndim, int64_t *shape) {
  const char *what = input ? "input" : "output";
  if (!m) return tsl_error(TSL_ERR_INVALID, "tsl_model_%s_info: NULL model", what);
  int n = input ? m->graph->n_inputs : m->graph->n_outputs;
  if (i < 0 || i >= n)
    return tsl_error(TSL_ERR_INVALID, "tsl_model_%s_info: index %d out of range (the model has %d %ss)", what, i, n,
                     what);
  const tsl_value *v = &m->graph->values[input ? m->graph->inputs[i] : m->graph->outputs[i]];
  if (name) *name = v->name;
  if (dtype) *dtype = v->dtype;
  if (ndim) *ndim = v->ndim;
  if (shape) memcpy(shape, v->shape, sizeof v->shape);
  return TSL_OK;
}

tsl_status tsl_model_input_info(const tsl_model *m, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                int64_t *shape) {
  return model_io_info(m, true, i, name, dtype, ndim, shape);
}

tsl_status tsl_model_output_info(const tsl_model *m, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                 int64_t *shape) {
  return model_io_info(m, false, i, name, dtype, ndim, shape);
}

tsl_status tsl_model_set_batch(tsl_model *m, int64_t batch) {
  if (!m) return tsl_error(TSL_ERR_INVALID, "tsl_model_set_batch: NULL model");
  if (batch < 1) return tsl_error(TSL_ERR_INVALID, "tsl_model_set_batch: batch %lld (must be >= 1)", (long long)batch);
  tsl_graph *g = NULL; /* a copy: on failure the model stays as it was */
  tsl_status st = tsl_graph_clone(m->graph, &g);
  if (st == TSL_OK) st = tsl_graph_set_batch(g, batch);
  if (st != TSL_OK) {
    tsl_graph_free(g);
    return st;
  }
  tsl_graph_free(m->graph);
  m->graph = g;
  return TSL_OK;
}

tsl_compile_opts tsl_compile_opts_default(void) {
  return (tsl_compile_opts){
      .target = NULL, .records = NULL, .verbose = false, .no_auto_schedule = false, .num_threads = 0,
      .no_claim_outputs = false};
}

tsl_status tsl_model_compile_with(const tsl_model *m, const tsl_compile_opts *opts, tsl_compiled **out) {
  tsl_compile_opts o = opts ? *opts : tsl_compile_opts_default();
  if (!m || !out) return tsl_error(TSL_ERR_INVALID, "tsl_model_compile: NULL argument");
  *out = NULL;
  if (o.num_threads < 0 || o.num_threads > TSL_MAX_THREADS)
    return tsl_error(TSL_ERR_INVALID, "tsl_model_compile: num_threads %d (allowed 1..%d, or 0 for the process-wide "
                     "setting)", o.num_threads, TSL_MAX_THREADS);
  tsl_compiled *c = calloc(1, sizeof *c);
  if (!c) return tsl_error(TSL_ERR_NOMEM, "tsl_model_compile: out of memory");
  c->num_threads = o.num_threads;
  tsl_compile_options co = {
      .target = o.target, .records = o.records, .verbose = o.verbose, .no_auto_schedule = o.no_auto_schedule,
      .no_claim_outputs = o.no_claim_outputs};
  /* records are looked up with the thread count the runs will use */
  int prev = o.num_threads ? tsl_parallel_set_local_threads(o.num_threads) : 0;
  tsl_status st = tsl_graph_compile(m->graph, &co, &c->plan, &c->stats);
  if (o.num_threads) tsl_parallel_set_local_threads(prev);
  if (st != TSL_OK) {
    free(c);
    return st;
  }
  *out = c;
  return TSL_OK;
}

tsl_status tsl_model_compile(const tsl_model *m, const char *target, const char *records, tsl_compiled **out) {
  return tsl_model_compile_verbose(m, target, records, false, out);
}

tsl_status tsl_model_compile_verbose(const tsl_model *m, const char *target, const char *records, bool verbose,
                                     tsl_compiled **out) {
  tsl_compile_opts o = tsl_compile_opts_default();
  o.target = target;
  o.records = records;
  o.verbose = verbose;
  return tsl_model_compile_with(m, &o, out);
}

int tsl_compiled_num_threads(const tsl_compiled *c) { return c ? c->num_threads : 0; }

tsl_status tsl_compiled_input_index(const tsl_compiled *c, const char *name, int *i) {
  if (!c) return tsl_error(TSL_ERR_INVALID, "tsl_compiled_input_index: NULL compiled model");
  return tsl_graph_plan_find_input(c->plan, name, i);
}

tsl_status tsl_compiled_output_index(const tsl_compiled *c, const char *name, int *i) {
  if (!c) return tsl_error(TSL_ERR_INVALID, "tsl_compiled_output_index: NULL compiled model");
  return tsl_graph_plan_find_output(c->plan, name, i);
}

void tsl_compiled_free(tsl_compiled *c) {
  if (!c) return;
  tsl_graph_plan_free(c->plan);
  free(c);
}

int tsl_compiled_num_inputs(const tsl_compiled *c) { return c ? tsl_graph_plan_num_inputs(c->plan) : 0; }
int tsl_compiled_num_outputs(const tsl_compiled *c) { return c ? tsl_graph_plan_num_outputs(c->plan) : 0; }

static tsl_status io_info(const tsl_compiled *c, bool input, int i, const char **name, tsl_dtype *dtype, int *ndim,
                          int64_t *shape, size_t *bytes) {
  int n = input ? tsl_compiled_num_inputs(c) : tsl_compiled_num_outputs(c);
  if (!c || i < 0 || i >= n)
    return tsl_error(TSL_ERR_INVALID, "tsl_compiled_%s_info: index %d out of range (the model has %d)",
                     input ? "input" : "output", i, n);
  tsl_graph_io_info info = input ? tsl_graph_plan_input_info(c->plan, i) : tsl_graph_plan_output_info(c->plan, i);
  if (name) *name = info.name;
  if (dtype) *dtype = info.dtype;
  if (ndim) *ndim = info.ndim;
  if (shape) memcpy(shape, info.shape, sizeof info.shape);
  if (bytes) *bytes = (size_t)info.bytes;
  return TSL_OK;
}

tsl_status tsl_compiled_input_info(const tsl_compiled *c, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                   int64_t *shape, size_t *bytes) {
  return io_info(c, true, i, name, dtype, ndim, shape, bytes);
}

tsl_status tsl_compiled_output_info(const tsl_compiled *c, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                    int64_t *shape, size_t *bytes) {
  return io_info(c, false, i, name, dtype, ndim, shape, bytes);
}

int64_t tsl_compiled_activation_bytes(const tsl_compiled *c) { return c ? c->stats.planned_peak_bytes : 0; }
int64_t tsl_compiled_weight_bytes(const tsl_compiled *c) { return c ? c->stats.constant_bytes : 0; }
int tsl_compiled_num_steps(const tsl_compiled *c) { return c ? c->stats.steps : 0; }
int tsl_compiled_num_kernels(const tsl_compiled *c) { return c ? c->stats.kernels : 0; }
int tsl_compiled_num_tuned_kernels(const tsl_compiled *c) { return c ? c->stats.records_used : 0; }
int tsl_compiled_num_claimed_outputs(const tsl_compiled *c) { return c ? c->stats.claimed_outputs : 0; }

tsl_status tsl_context_new(const tsl_compiled *c, tsl_context **out) {
  if (!c || !out) return tsl_error(TSL_ERR_INVALID, "tsl_context_new: NULL argument");
  tsl_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return tsl_error(TSL_ERR_NOMEM, "tsl_context_new: out of memory");
  tsl_status st = tsl_graph_ctx_new(c->plan, &ctx->ctx);
  if (st != TSL_OK) {
    free(ctx);
    return st;
  }
  ctx->compiled = c;
  if (c->num_threads) tsl_graph_ctx_set_num_threads(ctx->ctx, c->num_threads);
  *out = ctx;
  return TSL_OK;
}

tsl_status tsl_context_set_num_threads(tsl_context *ctx, int n) {
  if (!ctx) return tsl_error(TSL_ERR_INVALID, "tsl_context_set_num_threads: NULL context");
  if (n < 0 || n > TSL_MAX_THREADS)
    return tsl_error(TSL_ERR_INVALID, "tsl_context_set_num_threads: %d threads (allowed 1..%d, or 0 for the compiled "
                     "model's setting)", n, TSL_MAX_THREADS);
  return tsl_graph_ctx_set_num_threads(ctx->ctx, n ? n : ctx->compiled->num_threads);
}

int tsl_context_num_threads(const tsl_context *ctx) { return ctx ? tsl_graph_ctx_num_threads(ctx->ctx) : 0; }

tsl_status tsl_context_set_claims(tsl_context *ctx, tsl_claims_mode m) {
  if (!ctx) return tsl_error(TSL_ERR_INVALID, "tsl_context_set_claims: NULL context");
  tsl_status st = tsl_claims_mode_check("tsl_context_set_claims", m);
  return st == TSL_OK ? tsl_graph_ctx_set_claims(ctx->ctx, m) : st;
}

bool tsl_context_claims_next(const tsl_context *ctx) { return ctx && tsl_graph_ctx_claims_next(ctx->ctx); }

int tsl_context_claims_kept(const tsl_context *ctx) { return ctx ? tsl_graph_ctx_claims_kept(ctx->ctx) : 0; }

void tsl_context_free(tsl_context *ctx) {
  if (!ctx) return;
  tsl_graph_ctx_free(ctx->ctx);
  free(ctx);
}

tsl_status tsl_context_set_input(tsl_context *ctx, int i, const void *data, size_t bytes) {
  if (!ctx || !data) return tsl_error(TSL_ERR_INVALID, "tsl_context_set_input: NULL argument");
  size_t want;
  tsl_status st = tsl_compiled_input_info(ctx->compiled, i, NULL, NULL, NULL, NULL, &want);
  if (st != TSL_OK) return st;
  if (bytes != want)
    return tsl_error(TSL_ERR_INVALID, "tsl_context_set_input: input %d holds %zu bytes, given %zu", i, want, bytes);
  memcpy(tsl_graph_ctx_input(ctx->ctx, i), data, bytes);
  return TSL_OK;
}

tsl_status tsl_context_set_input_by_name(tsl_context *ctx, const char *name, const void *data, size_t bytes) {
  if (!ctx || !name) return tsl_error(TSL_ERR_INVALID, "tsl_context_set_input_by_name: NULL argument");
  int i;
  tsl_status st = tsl_graph_plan_find_input(ctx->compiled->plan, name, &i);
  return st == TSL_OK ? tsl_context_set_input(ctx, i, data, bytes) : st;
}

tsl_status tsl_context_run(tsl_context *ctx) {
  if (!ctx) return tsl_error(TSL_ERR_INVALID, "tsl_context_run: NULL context");
  return tsl_graph_run(ctx->ctx, NULL);
}

tsl_status tsl_context_run_profiled(tsl_context *ctx, double *step_seconds) {
  if (!ctx || !step_seconds) return tsl_error(TSL_ERR_INVALID, "tsl_context_run_profiled: NULL argument");
  return tsl_graph_run(ctx->ctx, step_seconds);
}

const char *tsl_compiled_step_label(const tsl_compiled *c, int step) {
  if (!c || step < 0 || step >= tsl_graph_plan_num_steps(c->plan)) return "";
  const char *l = tsl_graph_plan_step_label(c->plan, step);
  return l ? l : "";
}

tsl_status tsl_context_get_output(const tsl_context *ctx, int i, void *data, size_t bytes) {
  if (!ctx || !data) return tsl_error(TSL_ERR_INVALID, "tsl_context_get_output: NULL argument");
  size_t have;
  tsl_status st = tsl_compiled_output_info(ctx->compiled, i, NULL, NULL, NULL, NULL, &have);
  if (st != TSL_OK) return st;
  if (bytes != have)
    return tsl_error(TSL_ERR_INVALID, "tsl_context_get_output: output %d holds %zu bytes, given %zu", i, have, bytes);
  memcpy(data, tsl_graph_ctx_output(ctx->ctx, i), bytes);
  return TSL_OK;
}

tsl_status tsl_context_get_output_by_name(const tsl_context *ctx, const char *name, void *data, size_t bytes) {
  if (!ctx || !name) return tsl_error(TSL_ERR_INVALID, "tsl_context_get_output_by_name: NULL argument");
  int i;
  tsl_status st = tsl_graph_plan_find_output(ctx->compiled->plan, name, &i);
  return st == TSL_OK ? tsl_context_get_output(ctx, i, data, bytes) : st;
}
