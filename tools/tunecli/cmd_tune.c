/* tunecli tune-op / tune: measure candidates of every algorithm of a workload (one
 * operator, or every convolution of a model) and append the records (tuner/tune.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/target.h"
#include "ir/arena.h"
#include "models/graph.h"
#include "models/onnx.h"
#include "models/zoo.h"
#include "op_args.h"
#include "tuner/peak.h"
#include "tuner/tune.h"
#include "tunecli.h"

typedef struct tune_cli {
  tsl_tune_opts o;
  const char *records;
  const char *target;
  double timeout_s;
  bool peak;
} tune_cli;

static bool num(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

/* Parses the tuning options in argv (all of them must be tuning options). */
static bool parse_tune_opts(const char *cmd, int argc, char **argv, tune_cli *c) {
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--cache-flush") == 0) {
      c->o.measure.time.cache_flush = true;
      continue;
    }
    if (strcmp(a, "--no-peak") == 0) {
      c->peak = false;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "tunecli %s: error: unknown option '%s' or missing value (see tunecli help)\n", cmd, a);
      return false;
    }
    const char *v = argv[++i];
    double x = 0;
    bool ok = true;
    if (strcmp(a, "--trials") == 0 && (ok = num(v, 1, 1e7, &x))) c->o.trials = (int)x;
    else if (strcmp(a, "--early-stopping") == 0 && (ok = num(v, 0, 1e7, &x))) c->o.early_stopping = (int)x;
    else if (strcmp(a, "--number") == 0 && (ok = num(v, 1, 1e9, &x))) c->o.measure.time.number = (int)x;
    else if (strcmp(a, "--repeat") == 0 && (ok = num(v, 1, TSL_RECORD_MAX_COSTS, &x))) c->o.measure.time.repeat = (int)x;
    else if (strcmp(a, "--min-repeat-ms") == 0 && (ok = num(v, 0, 1e6, &x))) c->o.measure.time.min_repeat_ms = x;
    else if (strcmp(a, "--cooldown") == 0 && (ok = num(v, 0, 60, &x))) c->o.measure.time.cooldown_s = x;
    else if (strcmp(a, "--timeout") == 0 && (ok = num(v, 1, 1e7, &x))) c->timeout_s = x;
    else if (strcmp(a, "--build-timeout") == 0 && (ok = num(v, 0.1, 3600, &x))) c->o.measure.build_timeout_s = x;
    else if (strcmp(a, "--run-timeout") == 0 && (ok = num(v, 0.1, 3600, &x))) c->o.measure.run_timeout_s = x;
    else if (strcmp(a, "--threads") == 0 && (ok = num(v, 1, 256, &x))) c->o.measure.threads = (int)x;
    else if (strcmp(a, "--batch") == 0 && (ok = num(v, 1, 64, &x))) c->o.batch = (int)x;
    else if (strcmp(a, "--seed") == 0 && (ok = num(v, 0, 1e15, &x))) c->o.seed = (uint64_t)x;
    else if (strcmp(a, "--records") == 0) c->records = v;
    else if (strcmp(a, "--target") == 0) c->target = v;
    else if (strcmp(a, "--template") == 0) c->o.only_template = v;
    else if (strcmp(a, "--search") == 0) ok = tsl_search_kind_parse(v, &c->o.search);
    else ok = false;
    if (!ok) {
      fprintf(stderr, "tunecli %s: error: bad option '%s %s' (see tunecli help)\n", cmd, a, v);
      return false;
    }
  }
  return true;
}

static void tune_cli_init(tune_cli *c) {
  memset(c, 0, sizeof *c);
  c->o = tsl_tune_opts_default();
  c->records = "tessel_records.jsonl";
  c->target = "host";
  c->peak = true;
}

/* Loads the records file into db (warning on bad lines) and points the options at it. */
static bool open_records(const char *cmd, tune_cli *c, tsl_records **db) {
  tsl_status st = tsl_records_new(db);
  if (st == TSL_OK) st = tsl_records_load(*db, c->records, false, stderr);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  c->o.db = *db;
  c->o.records_path = c->records;
  c->o.log = stderr;
  c->o.progress_tty = isatty(fileno(stderr));
  if (c->timeout_s > 0) c->o.deadline = tsl_time_now() + c->timeout_s;
  return true;
}

typedef struct layer_row {
  char label[96];
  char shape[160];
  tsl_tune_result res;
  bool failed;
} layer_row;

static void print_table(const layer_row *rows, int n, double peak_gflops) {
  printf("\n%-4s %-28s %-34s %-22s %10s %9s %7s %8s\n", "#", "layer", "shape", "algorithm", "time (us)", "GFLOP/s",
         "% peak", "speedup");
  double sum_best = 0, sum_default = 0;
  for (int i = 0; i < n; i++) {
    const tsl_tune_result *r = &rows[i].res;
    if (rows[i].failed || !r->found) {
      printf("%-4d %-28.28s %-34.34s %s\n", i, rows[i].label, rows[i].shape, "(no candidate succeeded)");
      continue;
    }
    double gf = r->flops / r->best_cost * 1e-9;
    double speedup = isfinite(r->default_cost) ? r->default_cost / r->best_cost : NAN;
    printf("%-4d %-28.28s %-34.34s %-22.22s %10.1f %9.2f %6.1f%% %7.2fx\n", i, rows[i].label, rows[i].shape,
           r->algorithm, r->best_cost * 1e6, gf, peak_gflops > 0 ? 100 * gf / peak_gflops : NAN, speedup);
    printf("     config %s\n", r->config_str);
    sum_best += r->best_cost;
    if (isfinite(r->default_cost)) sum_default += r->default_cost;
  }
  double compile = 0;
  int trials = 0, measured = 0, errors = 0;
  for (int i = 0; i < n; i++) {
    compile += rows[i].res.compile_s;
    trials += rows[i].res.trials;
    measured += rows[i].res.measured;
    errors += rows[i].res.errors;
  }
  printf("\nsum of layer times: tuned %.3f ms, default %.3f ms (%.2fx); %d trials (%d measured now, %d errors), "
         "JIT compile %.1f s\n",
         sum_best * 1e3, sum_default * 1e3, sum_best > 0 ? sum_default / sum_best : NAN, trials, measured, errors,
         compile);
}

static double measure_peak(const tsl_target *t, int threads) {
  tsl_peak_opts po = tsl_peak_opts_default();
  po.repeat = 3;
  po.min_repeat_ms = 20;
  po.triad_bytes = 0;
  po.threads = threads;
  tsl_peak p;
  if (tsl_peak_measure(t, &po, &p) != TSL_OK) return 0;
  return threads == 1 ? p.fma_gflops_1 : p.fma_gflops_all;
}

int tunecli_tune_op(int argc, char **argv) {
  const char *cmd = "tune-op";
  op_args a;
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  int nrest = 0;
  if (!rest) return 1;
  if (!op_args_parse(cmd, argc, argv, &a, rest, &nrest)) {
    free(rest);
    op_args_free(&a);
    return 2;
  }
  if (a.file) {
    fprintf(stderr, "tunecli tune-op: error: --file ops have no schedule templates; tune a built-in operator\n");
    free(rest);
    op_args_free(&a);
    return 2;
  }
  tune_cli c;
  tune_cli_init(&c);
  c.target = a.target;
  bool ok = parse_tune_opts(cmd, nrest, rest, &c);
  free(rest);
  if (!ok) {
    op_args_free(&a);
    return 2;
  }
  tsl_target t;
  tsl_status st = tsl_target_parse(c.target, &t);
  if (st != TSL_OK) {
    op_args_free(&a);
    return tunecli_fail(cmd, st);
  }
  const int64_t *shapes[OP_ARGS_MAX_INPUTS];
  for (int i = 0; i < a.ninputs; i++) shapes[i] = a.shapes[i];
  tsl_workload w;
  st = tsl_workload_init(&w, a.name, a.ninputs, shapes, a.ndims, a.nparams, a.params);
  op_args_free(&a);
  if (st != TSL_OK) return tunecli_fail(cmd, st);
  tsl_records *db = NULL;
  if (!open_records(cmd, &c, &db)) return 1;
  layer_row row;
  memset(&row, 0, sizeof row);
  snprintf(row.label, sizeof row.label, "%s", w.op);
  size_t len = 0;
  for (int i = 0; i < w.ninputs && len < sizeof row.shape; i++)
    for (int d = 0; d < w.ndims[i] && len < sizeof row.shape; d++) {
      int k = snprintf(row.shape + len, sizeof row.shape - len, "%s%lld", d ? "x" : (i ? " " : ""),
                       (long long)w.shapes[i][d]);
      if (k > 0) len += (size_t)k;
    }
  st = tsl_tune_workload(&t, &w, &c.o, &row.res);
  tsl_records_free(db);
  if (st != TSL_OK) return tunecli_fail(cmd, st);
  double peak = c.peak ? measure_peak(&t, c.o.measure.threads > 0 ? c.o.measure.threads : tsl_get_num_threads()) : 0;
  print_table(&row, 1, peak);
  printf("records: %s\n", c.records);
  return row.res.found ? 0 : 1;
}

/* Whether value v is read only by one Relu node (the graph compiler fuses it). */
static bool relu_follows(const tsl_graph *g, int v) {
  int readers = 0;
  bool relu = false;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) {
        readers++;
        relu = g->nodes[i].op == TSL_OP_RELU;
      }
  return readers == 1 && relu;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The model's dense convolutions as the workloads the graph compiles them to: the
 * direct NCHW[x]c convolution with bias and fused ReLU (conv2d_nchwc_bias, x = the
 * target's f32 lanes, or C when C is smaller), each distinct one once. */
static int model_workloads(const tsl_graph *g, int lanes, tsl_workload *out, layer_row *rows, int max, int *skipped) {
  int n = 0;
  *skipped = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const tsl_node *node = &g->nodes[i];
    if (strcmp(tsl_op_name(node->op), "Conv") != 0) continue;
    tsl_conv2d_params p;
    if (tsl_node_conv2d_params(g, node, &p) != TSL_OK || node->n_inputs < 2) continue;
    const tsl_value *x = &g->values[node->inputs[0]], *wv = &g->values[node->inputs[1]];
    if (p.group != 1 || x->ndim != 4 || wv->ndim != 4) {
      (*skipped)++;
      continue;
    }
    int64_t C = x->shape[1], K = wv->shape[0];
    int64_t bx = C < lanes ? C : lanes, by = lanes;
    const int64_t data[5] = {x->shape[0], cdiv(C, bx), x->shape[2], x->shape[3], bx};
    const int64_t weight[6] = {cdiv(K, by), cdiv(C, bx), wv->shape[2], wv->shape[3], bx, by};
    const int64_t bias[2] = {cdiv(K, by), by};
    const int64_t *shapes[3] = {data, weight, bias};
    const int nd[3] = {5, 6, 2};
    tsl_dsl_param_value prm[] = {
        tsl_dsl_int_param("stride_h", p.strides[0]),     tsl_dsl_int_param("stride_w", p.strides[1]),
        tsl_dsl_int_param("pad_top", p.pads[0]),         tsl_dsl_int_param("pad_left", p.pads[1]),
        tsl_dsl_int_param("pad_bottom", p.pads[2]),      tsl_dsl_int_param("pad_right", p.pads[3]),
        tsl_dsl_int_param("dilation_h", p.dilations[0]), tsl_dsl_int_param("dilation_w", p.dilations[1]),
        tsl_dsl_int_param("act", relu_follows(g, node->outputs[0]) ? 1 : 0)};
    tsl_workload w;
    if (tsl_workload_init(&w, "conv2d_nchwc_bias", 3, shapes, nd, 9, prm) != TSL_OK) continue;
    char *key = NULL;
    if (tsl_workload_key_of(&w, &key) != TSL_OK) {
      fprintf(stderr, "tunecli tune: %s: %s\n", node->name, tsl_last_error());
      continue;
    }
    bool dup = false;
    for (int k = 0; k < n && !dup; k++) {
      char *other = NULL;
      if (tsl_workload_key_of(&out[k], &other) == TSL_OK) dup = strcmp(other, key) == 0;
      free(other);
    }
    free(key);
    if (dup || n >= max) continue;
    out[n] = w;
    tsl_workload_fix(&out[n]);
    memset(&rows[n], 0, sizeof rows[n]);
    snprintf(rows[n].label, sizeof rows[n].label, "%s", node->name);
    snprintf(rows[n].shape, sizeof rows[n].shape, "%lldx%lldx%lld->%lld k%lldx%lld s%lld p%lld",
             (long long)C, (long long)x->shape[2], (long long)x->shape[3], (long long)K, (long long)p.kernel[0],
             (long long)p.kernel[1], (long long)p.strides[0], (long long)p.pads[0]);
    n++;
  }
  return n;
}

int tunecli_tune(int argc, char **argv) {
  const char *cmd = "tune";
  if (argc < 1 || argv[0][0] == '-') {
    fprintf(stderr, "tunecli tune: error: which model? a zoo name (squeezenet1_1, resnet18, ...) or an ONNX file\n");
    return 2;
  }
  const char *model = argv[0];
  tune_cli c;
  tune_cli_init(&c);
  c.o.trials = 32;
  c.o.early_stopping = 16;
  if (!parse_tune_opts(cmd, argc - 1, argv + 1, &c)) return 2;
  tsl_target t;
  tsl_status st = tsl_target_parse(c.target, &t);
  if (st != TSL_OK) return tunecli_fail(cmd, st);
  tsl_graph *g = NULL;
  bool is_file = access(model, R_OK) == 0;
  st = is_file ? tsl_graph_load_onnx(model, &g) : tsl_zoo_build(model, 1, &g);
  if (st == TSL_OK) st = tsl_graph_infer_shapes(g);
  if (st != TSL_OK) {
    tsl_graph_free(g);
    return tunecli_fail(cmd, st);
  }
  enum { MAX_LAYERS = 256 };
  tsl_workload *ws = calloc(MAX_LAYERS, sizeof *ws);
  layer_row *rows = calloc(MAX_LAYERS, sizeof *rows);
  if (!ws || !rows) {
    free(ws);
    free(rows);
    tsl_graph_free(g);
    return 1;
  }
  int skipped = 0;
  int lanes = t.vector_bits >= 64 ? t.vector_bits / 32 : 4;
  int n = model_workloads(g, lanes, ws, rows, MAX_LAYERS, &skipped);
  tsl_graph_free(g);
  fprintf(stderr, "tunecli tune: %s: %d distinct convolution workloads%s", model, n, skipped ? "" : "\n");
  if (skipped) fprintf(stderr, " (%d grouped/depthwise convolutions not tuned yet)\n", skipped);
  tsl_records *db = NULL;
  if (!open_records(cmd, &c, &db)) {
    free(ws);
    free(rows);
    return 1;
  }
  int failed = 0;
  for (int i = 0; i < n; i++) {
    fprintf(stderr, "[%d/%d] %s %s\n", i + 1, n, rows[i].label, rows[i].shape);
    st = tsl_tune_workload(&t, &ws[i], &c.o, &rows[i].res);
    if (st != TSL_OK) {
      rows[i].failed = true;
      failed++;
      fprintf(stderr, "tunecli tune: %s: %s\n", rows[i].label, tsl_last_error());
      if (st == TSL_ERR_IO) break;
    }
  }
  double peak = c.peak ? measure_peak(&t, c.o.measure.threads > 0 ? c.o.measure.threads : tsl_get_num_threads()) : 0;
  print_table(rows, n, peak);
  printf("records: %s\n", c.records);
  tsl_records_free(db);
  free(ws);
  free(rows);
  return failed == n && n > 0 ? 1 : 0;
}
