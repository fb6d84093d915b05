/* tsl_model_tune (include/tessel/tune.h): the per-layer tuning loop of `tunecli tune
 * MODEL` over the graph of a loaded model, for applications and the Python module. */
#include "tessel/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/api_internal.h"
#include "models/compile.h"
#include "models/node_kernels_binary.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/records.h"
#include "tuner/tune.h"

/* At most this many distinct layers are tuned (the largest zoo model has < 60). */
#define TSL_MODEL_TUNE_MAX_LAYERS 256

tsl_model_tune_opts tsl_model_tune_opts_default(void) {
  tsl_model_tune_opts o = {.trials = 32, .early_stopping = 16, .threads = 0, .timeout_s = 0, .seed = 1,
                           .verbose = false};
  return o;
}

static tsl_status check_opts(const tsl_model_tune_opts *o) {
  if (o->trials < 1) return tsl_error(TSL_ERR_INVALID, "tsl_model_tune: trials %d, want >= 1", o->trials);
  if (o->early_stopping < 0)
    return tsl_error(TSL_ERR_INVALID, "tsl_model_tune: early_stopping %d, want >= 0", o->early_stopping);
  if (o->threads < 0 || o->threads > TSL_MAX_THREADS)
    return tsl_error(TSL_ERR_INVALID, "tsl_model_tune: threads %d, want 0..%d", o->threads, TSL_MAX_THREADS);
  if (!(o->timeout_s >= 0) || isinf(o->timeout_s))
    return tsl_error(TSL_ERR_INVALID, "tsl_model_tune: timeout_s %g, want a finite number >= 0", o->timeout_s);
  return TSL_OK;
}

/* The distinct family workloads of g for `target`, as the graph compiler looks them up
 * in records: the conv layers after its passes, then the bitserial convs. *n gets the
 * count (at most max); only[i] the one conv algorithm ws[i]'s compiled form runs, -1 for
 * any (tsl_conv_layer.only_algo). */
static tsl_status model_workloads(const tsl_graph *g, const char *target, tsl_workload *ws, int *only, int max,
                                  int *n) {
  *n = 0;
  tsl_conv_layer *layers = calloc((size_t)max, sizeof *layers);
  if (!layers) return tsl_error(TSL_ERR_NOMEM, "tsl_model_tune: out of memory");
  int nc = 0;
  tsl_status st = tsl_graph_conv_layers(g, target, layers, max, &nc);
  if (nc > max) nc = max;
  for (int i = 0; st == TSL_OK && i < nc; i++) {
    ws[i] = layers[i].workload;
    tsl_workload_fix(&ws[i]);
    only[i] = layers[i].only_algo;
  }
  free(layers);
  if (st != TSL_OK) return st;
  /* bitserial convs: their workloads need the shapes inferred, on a copy */
  tsl_graph *work = NULL;
  st = tsl_graph_clone(g, &work);
  if (st == TSL_OK) st = tsl_graph_infer_shapes(work);
  int *nodes = calloc((size_t)max, sizeof *nodes);
  if (st == TSL_OK && !nodes) st = tsl_error(TSL_ERR_NOMEM, "tsl_model_tune: out of memory");
  if (st == TSL_OK) {
    int nb = tsl_binary_model_workloads(work, ws + nc, nodes, max - nc);
    for (int i = 0; i < nb; i++) only[nc + i] = -1;
    nc += nb;
  }
  free(nodes);
  tsl_graph_free(work);
  if (st == TSL_OK) *n = nc;
  return st;
}

static void add_result(tsl_model_tune_summary *s, const tsl_tune_result *r) {
  s->trials += r->trials;
  s->measured += r->measured;
  s->errors += r->errors;
  if (!r->found) return;
  s->tuned++;
  s->tuned_seconds += r->best_cost;
  if (isfinite(r->default_cost)) s->default_seconds += r->default_cost;
}

tsl_status tsl_model_tune(const tsl_model *m, const char *target, const char *records,
                          const tsl_model_tune_opts *opts, tsl_model_tune_summary *out) {
  if (!m || !records) return tsl_error(TSL_ERR_INVALID, "tsl_model_tune: NULL %s", m ? "records path" : "model");
  tsl_model_tune_opts o = opts ? *opts : tsl_model_tune_opts_default();
  tsl_status st = check_opts(&o);
  if (st != TSL_OK) return st;
  if (!target) target = "host";
  tsl_tune_opts to = tsl_tune_opts_default();
  to.trials = o.trials;
  to.early_stopping = o.early_stopping;
  to.seed = o.seed;
  to.measure.threads = o.threads;
  to.records_path = records;
  to.log = o.verbose ? stderr : NULL;
  if (o.timeout_s > 0) to.deadline = tsl_time_now() + o.timeout_s;
  tsl_target t;
  st = tsl_target_parse(target, &t);
  if (st == TSL_OK) st = tsl_tune_check_target(&t, &to.measure); /* before any work */
  if (st != TSL_OK) return st;

  tsl_workload *ws = calloc(TSL_MODEL_TUNE_MAX_LAYERS, sizeof *ws);
  int *only = calloc(TSL_MODEL_TUNE_MAX_LAYERS, sizeof *only);
  if (!ws || !only) {
    free(ws);
    free(only);
    return tsl_error(TSL_ERR_NOMEM, "tsl_model_tune: out of memory");
  }
  int n = 0;
  st = model_workloads(tsl_model_graph(m), target, ws, only, TSL_MODEL_TUNE_MAX_LAYERS, &n);
  if (st == TSL_OK && n == 0) st = tsl_error(TSL_ERR_NOT_FOUND, "tsl_model_tune: the model has no convolution to tune");
  tsl_records *db = NULL;
  if (st == TSL_OK) st = tsl_records_new(&db);
  if (st == TSL_OK) st = tsl_records_load(db, records, false, o.verbose ? stderr : NULL);
  to.db = db;
  tsl_model_tune_summary s = {.layers = n};
  char prefix[32];
  to.progress_prefix = prefix;
  for (int i = 0; st == TSL_OK && i < n; i++) {
    snprintf(prefix, sizeof prefix, "[%d/%d]", i + 1, n);
    tsl_tune_result r;
    to.only_algo = only[i];
    tsl_status lst = tsl_tune_workload(&t, &ws[i], &to, &r);
    if (lst == TSL_OK) add_result(&s, &r);
    else if (lst == TSL_ERR_IO || lst == TSL_ERR_NOMEM) st = lst; /* the file or memory: stop */
    else if (o.verbose) fprintf(stderr, "tsl_model_tune: layer %d of %d: %s\n", i + 1, n, tsl_last_error());
  }
  tsl_records_free(db);
  free(ws);
  free(only);
  if (st == TSL_OK) tsl_clear_error(); /* a failed layer's message is not the call's */
  if (st == TSL_OK && out) *out = s;
  return st;
}
