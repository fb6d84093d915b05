/* tunecli tune-op / tune: measure candidates of every algorithm of a workload (one
 * operator, or every convolution of a model) and append the records (tuner/tune.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/arena.h"
#include "models/compile.h"
#include "models/graph.h"
#include "models/insitu.h"
#include "insitu_print.h"
#include "models/node_kernels_binary.h"
#include "models/onnx.h"
#include "models/zoo.h"
#include "busy.h"
#include "op_args.h"
#include "target/target.h"
#include "tuner/cost_static.h"
#include "tuner/peak.h"
#include "tuner/remote.h"
#include "tessel/tessel.h"
#include "tuner/autosched.h"
#include "tuner/tune.h"
#include "tunecli.h"
#include "ops/user/user_template.h"

typedef struct tune_cli {
  tsl_tune_opts o;
  const char *records;
  const char *target;
  double timeout_s;
  bool peak;
  bool e2e; /* tune MODEL: end-to-end latency tuned vs default at the end */
  bool insitu; /* tune MODEL: verify the per-layer choice inside the model (models/insitu.h) */
  int insitu_per_algo; /* tune MODEL: isolated configs per algorithm verified in the model; 0 = the pass's default */
  int insitu_window;   /* tune MODEL: the final-plan check's window; -1 = the pass's default, 0 = no check */
  const char *layers; /* tune MODEL: "I,J,..." 1-based distinct layers to tune; NULL = all */
  const char *cost;   /* --cost static|measured; NULL = static when the target cannot run
                         here and no --device is given, else measured */
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
    if (strcmp(a, "--static-shadow-held") == 0) {
      c->o.shadow_held = true;
      continue;
    }
    if (strcmp(a, "--no-e2e") == 0) {
      c->e2e = false;
      continue;
    }
    if (strcmp(a, "--no-insitu") == 0 && strcmp(cmd, "tune") == 0) {
      c->insitu = false;
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
    else if (strcmp(a, "--device") == 0) c->o.measure.device = v; /* tuner/remote.h */
    else if (strcmp(a, "--key") == 0) c->o.measure.key = v;
    else if (strcmp(a, "--template") == 0) c->o.only_template = v;
    else if (strcmp(a, "--static-shadow") == 0) c->o.shadow_static_path = v;
    else if (strcmp(a, "--prefilter") == 0 && (ok = num(v, 1, 64, &x))) c->o.prefilter = (int)x;
    else if (strcmp(a, "--cost") == 0 && (ok = strcmp(v, "static") == 0 || strcmp(v, "measured") == 0)) c->cost = v;
    else if (strcmp(a, "--layers") == 0 && strcmp(cmd, "tune") == 0) c->layers = v;
    else if (strcmp(a, "--insitu-per-algo") == 0 && strcmp(cmd, "tune") == 0 && (ok = num(v, 1, 31, &x)))
      c->insitu_per_algo = (int)x;
    else if (strcmp(a, "--insitu-window") == 0 && strcmp(cmd, "tune") == 0 && (ok = num(v, 0, TSL_INSITU_MAX_WINDOW, &x)))
      c->insitu_window = (int)x;
    else if (strcmp(a, "--search") == 0) ok = tsl_search_kind_parse(v, &c->o.search);
    else ok = false;
    if (!ok) {
      fprintf(stderr, "tunecli %s: error: bad option '%s %s' (see tunecli help)\n", cmd, a, v);
      return false;
    }
  }
  return true;
}

/* Settles the cost source (--cost, or its default: static when t, of another
 * architecture, cannot run here and no --device is given) and what a static run leaves out (the peak, the in-situ pass; the
 * end-to-end comparison unless t runs here). */
static void settle_cost(tune_cli *c, const tsl_target *t) {
  bool runs_here = tsl_target_runs_on_host(t, NULL);
  /* the default is static for another architecture only: a target of this one that
   * lacks a feature (AVX-512 on an AVX2 machine) stays refused unless --cost static is
   * asked for (shared/cases C12: a clear error, the message names --cost static) */
  tsl_target host;
  bool other_arch = tsl_target_detected_host(&host) != TSL_OK || host.arch != t->arch;
  c->o.measure.cost_static =
      c->cost ? strcmp(c->cost, "static") == 0 : (!c->o.measure.device && !runs_here && other_arch);
  if (!c->o.measure.cost_static) return;
  c->peak = false;
  c->insitu = false; /* it measures in the model: its records would not be estimates */
  if (!runs_here) c->e2e = false;
}

/* The line a static run starts with (after the model was found usable). */
static void note_static(const tune_cli *c, const tsl_target *t) {
  if (!c->o.measure.cost_static) return;
  int cores = 0;
  const tsl_cpu_figures *fig = tsl_cost_static_figures(t, &cores);
  fprintf(stderr,
          "tunecli: costs are estimates of the static cost model %s for %s as %s (%d cores; no candidate runs; "
          "docs/cost_static.md)%s\n",
          TSL_COST_STATIC_MODEL, t->cpu, fig->machine, c->o.measure.threads > 0 ? c->o.measure.threads : cores,
          c->cost ? "" : ": the target's architecture cannot run here and no --device was given");
  fflush(stderr);
}

static void tune_cli_init(tune_cli *c) {
  memset(c, 0, sizeof *c);
  c->o = tsl_tune_opts_default();
  c->records = "tessel_records.jsonl";
  c->target = "host";
  c->peak = true;
  c->e2e = true;
  c->insitu = true;
  c->insitu_window = -1;
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
  char label[144]; /* node name (< 128) + " (+more)" */
  char shape[160];
  tsl_tune_result res;
  bool failed;
  int only_algo; /* tsl_conv_layer.only_algo: -1, or the one algorithm its compiled form runs */
} layer_row;

/* estimated: the costs are the static cost model's (--cost static): the table and the sum
 * say so, and the trials were estimated, not measured. */
static void print_table(const layer_row *rows, int n, double peak_gflops, bool estimated) {
  printf("\n%-4s %-28s %-34s %-22s %10s %9s %7s %8s\n", "#", "layer", "shape", "algorithm",
         estimated ? "est. (us)" : "time (us)", "GFLOP/s", "% peak", "speedup");
  double sum_best = 0, sum_default = 0;
  int no_default = 0; /* layers whose default was not measured: the sums are not compared */
  int failed = 0;     /* layers without a successful candidate: not in the sums */
  bool any_effective = false;
  for (int i = 0; i < n; i++) {
    const tsl_tune_result *r = &rows[i].res;
    if (rows[i].failed || !r->found) {
      printf("%-4d %-28.28s %-34.34s %s\n", i, rows[i].label, rows[i].shape, "(no candidate succeeded)");
      failed++;
      continue;
    }
    double gf = r->flops / r->best_cost * 1e-9;
    double speedup = isfinite(r->default_cost) ? r->default_cost / r->best_cost : NAN;
    /* a fast algorithm's GFLOP/s are "effective" (the direct convolution's FLOPs over
     * its time): no fraction of the machine's peak */
    char pct[16];
    bool effective = strstr(r->algorithm, "winograd") != NULL;
    if (effective) snprintf(pct, sizeof pct, "eff.");
    else if (peak_gflops > 0 && gf <= peak_gflops) snprintf(pct, sizeof pct, "%.1f%%", 100 * gf / peak_gflops);
    else snprintf(pct, sizeof pct, "-");
    any_effective |= effective;
    const char *algo = strchr(r->algorithm, '.'); /* FAMILY.ALGO: the family is the layer's */
    /* no default measured (tune-op --template T, or no default succeeded): no speedup */
    char sp[16] = "-";
    if (isfinite(speedup)) snprintf(sp, sizeof sp, "%.2fx", speedup);
    printf("%-4d %-28.28s %-34.34s %-22.22s %10.1f %9.2f %7s %8s\n", i, rows[i].label, rows[i].shape,
           algo ? algo + 1 : r->algorithm, r->best_cost * 1e6, gf, pct, sp);
    printf("     config %s\n", r->config_str);
    sum_best += r->best_cost;
    if (isfinite(r->default_cost)) sum_default += r->default_cost;
    else no_default++;
  }
  double compile = 0;
  int trials = 0, measured = 0, errors = 0;
  for (int i = 0; i < n; i++) {
    compile += rows[i].res.compile_s;
    trials += rows[i].res.trials;
    measured += rows[i].res.measured;
    errors += rows[i].res.errors;
  }
  if (peak_gflops > 0)
    printf("%% peak: of %.1f GFLOP/s, this machine's fp32 FMA peak (tunecli peak; the largest measured so far)%s\n",
           peak_gflops, any_effective ? "; eff.: Winograd's effective GFLOP/s (direct FLOPs / time), not a fraction of peak" : "");
  if (failed == n && n > 0) {
    printf("\nno layer has a successful candidate (%d trials, %d errors): the errors are in the log above and in the "
           "records file\n", trials, errors);
    return;
  }
  if (failed)
    printf("\n%d of %d layers have no successful candidate (their errors are in the log above and in the records "
           "file) and are not in the sums\n", failed, n);
  char vs[96];
  if (no_default) snprintf(vs, sizeof vs, "default not measured for %d of them", no_default);
  else snprintf(vs, sizeof vs, "default %.3f ms (%.2fx)", sum_default * 1e3, sum_best > 0 ? sum_default / sum_best : NAN);
  printf("\nsum of layer %s: tuned %.3f ms, %s; %d trials (%d %s now, %d errors), JIT compile %.1f s\n",
         estimated ? "estimates (static cost model)" : "times", sum_best * 1e3, vs, trials, measured,
         estimated ? "estimated" : "measured", errors, compile);
}

/* The fp32 FMA peak for "% of peak": the per-machine peak file's (the largest of every
 * measurement so far, tuner/peak.h), measured once (best sample) when it has none;
 * 0 when unknown. */
static double measure_peak(const tsl_target *t, int threads) {
  double g = 0;
  if (tsl_peak_lookup(t, threads, &g) == TSL_OK) return g;
  tsl_clear_error();
  tsl_peak_opts po = tsl_peak_opts_default();
  po.repeat = 5;
  po.min_repeat_ms = 20;
  po.triad_bytes = 0;
  po.threads = threads;
  tsl_peak p;
  if (tsl_peak_measure(t, &po, &p) != TSL_OK) return 0;
  g = threads == 1 ? p.fma_gflops_1_best : p.fma_gflops_all_best;
  if (tsl_peak_store(t, threads, g) != TSL_OK) tsl_clear_error();
  return g;
}

/* A warning when other processes (or the hypervisor) kept a tenth of a CPU or more busy
 * on average during a span of in-model timing (busy.h): the choices it made
 * (`what`) may not hold on the quiet machine. */
static void warn_busy(const tsl_busy_span *sp, const char *span, const char *what) {
  double others, steal;
  if (!tsl_busy_end(sp, &others, &steal) || (others < 0.1 && steal < 0.1)) return;
  printf("warning: during the %s other processes kept %.2f CPUs busy on average and the hypervisor took %.2f "
         "(of %ld): %s reflect that load; tune on a quiet machine, or rerun (docs/records.md, \"In-model records\")\n",
         span, others, steal, sysconf(_SC_NPROCESSORS_ONLN), what);
}

/* The model end to end, compiled with the default schedules and with the records (and,
 * when `isolated` is given, with those isolated records only: the choice before the
 * in-situ pass), run alternately in this process (the machine's load hits all alike):
 * medians. */
static void end_to_end(const char *model, const char *target, const char *records, const char *isolated,
                       int threads) {
  enum { RUNS = 31 };
  tsl_model *m = NULL;
  tsl_compiled *c[3] = {NULL, NULL, NULL};
  tsl_context *ctx[3] = {NULL, NULL, NULL};
  tsl_tensor *in = NULL;
  double compile_s[3] = {0, 0, 0}, t[3][RUNS];
  int nv = isolated ? 3 : 2;
  int prev_threads = tsl_get_num_threads();
  if (threads > 0) tsl_set_num_threads(threads);
  tsl_status st = tsl_model_load(model, &m);
  for (int k = 0; k < nv && st == TSL_OK; k++) {
    double t0 = tsl_time_now();
    st = tsl_model_compile_verbose(m, target, k == 0 ? NULL : k == 1 ? records : isolated, false, &c[k]);
    compile_s[k] = tsl_time_now() - t0;
    if (st == TSL_OK) st = tsl_context_new(c[k], &ctx[k]);
    /* the default and the tuned plans claim alike on every run (the automatic choice
     * could settle differently in each) */
    if (st == TSL_OK) st = tsl_context_set_claims(ctx[k], TSL_CLAIMS_ALWAYS);
  }
  int ndim = 0;
  int64_t shape[TSL_MAX_NDIM];
  tsl_dtype dt;
  size_t bytes = 0;
  if (st == TSL_OK) st = tsl_compiled_input_info(c[0], 0, NULL, &dt, &ndim, shape, &bytes);
  if (st == TSL_OK) st = tsl_tensor_new(dt, ndim, shape, &in);
  if (st == TSL_OK) st = tsl_tensor_fill_random(in, 1, -1.0, 1.0);
  for (int k = 0; k < nv && st == TSL_OK; k++) {
    st = tsl_context_set_input(ctx[k], 0, in->data, bytes);
    for (int w = 0; w < 2 && st == TSL_OK; w++) st = tsl_context_run(ctx[k]);
  }
  tsl_busy_span busy;
  tsl_busy_begin(&busy);
  for (int r = 0; r < RUNS && st == TSL_OK; r++)
    for (int j = 0; j < nv && st == TSL_OK; j++) {
      int k = (r + j) % nv; /* rotate which goes first */
      double t0 = tsl_time_now();
      st = tsl_context_run(ctx[k]);
      t[k][r] = tsl_time_now() - t0;
    }
  if (st == TSL_OK) {
    double d = tunecli_median_sort(t[0], RUNS), u = tunecli_median_sort(t[1], RUNS); /* sorted: [0] is the min */
    printf("end to end (%s, %d threads, %d alternating runs each): default median %.3f ms (min %.3f), tuned median "
           "%.3f ms (min %.3f): %.2fx (min %.2fx); compile default %.0f ms, tuned %.0f ms (%d of %d kernels from "
           "records)\n",
           model, tsl_get_num_threads(), RUNS, d * 1e3, t[0][0] * 1e3, u * 1e3, t[1][0] * 1e3, d / u, t[0][0] / t[1][0],
           compile_s[0] * 1e3, compile_s[1] * 1e3, tsl_compiled_num_tuned_kernels(c[1]), tsl_compiled_num_kernels(c[1]));
    if (isolated) {
      double b = tunecli_median_sort(t[2], RUNS);
      printf("  before the in-situ pass (the isolated records' choice, same runs): median %.3f ms (min %.3f): %.2fx "
             "default; in-model choice vs isolated choice %.2fx\n",
             b * 1e3, t[2][0] * 1e3, d / b, b / u);
    }
    warn_busy(&busy, "end-to-end runs", "these ratios");
    if (d / u < 0.97) /* beyond this machine's run-to-run spread of medians */
      printf("warning: with these records the model ran %.2fx the default's speed here, slower: the in-model times "
             "the choices came from were probably taken under load (see the warning above, if any); rerun the "
             "in-situ pass on a quiet machine (docs/records.md, \"In-model records\") or compile without --records\n",
             d / u);
  } else {
    fprintf(stderr, "tunecli tune: end-to-end comparison failed: %s\n", tsl_last_error());
  }
  tsl_tensor_free(in);
  for (int k = 0; k < 3; k++) {
    tsl_context_free(ctx[k]);
    tsl_compiled_free(c[k]);
  }
  tsl_model_free(m);
  tsl_set_num_threads(prev_threads);
}

/* The in-situ pass over the model (models/insitu.h); on success *isolated_path names a
 * temporary file of the isolated records alone (the choice before the pass, for the
 * end-to-end comparison; the caller unlinks it) when some in-model record was made. */
static bool insitu_pass(const char *model, bool is_file, const tune_cli *c, tsl_records *db, char *isolated_path,
                        size_t n) {
  isolated_path[0] = '\0';
  tsl_graph *g = NULL;
  tsl_status st = is_file ? tsl_graph_load_onnx(model, &g) : tsl_zoo_build(model, 1, &g);
  if (st == TSL_OK) st = tsl_graph_infer_shapes(g);
  tsl_insitu_opts io = tsl_insitu_opts_default();
  char context[128];
  const char *base = strrchr(model, '/');
  snprintf(context, sizeof context, "model %s", base ? base + 1 : model);
  io.context = context;
  io.target = c->target;
  io.threads = c->o.measure.threads;
  if (c->insitu_per_algo > 0) io.per_algo = c->insitu_per_algo;
  if (c->insitu_window >= 0) io.window = c->insitu_window;
  io.records_path = c->records;
  io.log = stderr;
  tsl_insitu_result res;
  memset(&res, 0, sizeof res);
  tsl_busy_span busy;
  tsl_busy_begin(&busy);
  if (st == TSL_OK) st = tsl_insitu_verify(g, db, &io, &res);
  tsl_graph_free(g);
  if (st != TSL_OK) {
    fprintf(stderr, "tunecli tune: in-situ pass failed: %s\n", tsl_last_error());
    return false;
  }
  if (res.variants > 0) tunecli_print_insitu(&res, io.window);
  else printf("\nin situ: no tuned conv workload to verify\n");
  warn_busy(&busy, "in-situ pass", "its in-model choices");
  if (res.records_written > 0) {
    tsl_records *iso = NULL;
    st = tsl_records_new(&iso);
    for (int i = 0; st == TSL_OK && i < db->n; i++)
      if (!tsl_record_in_model(&db->recs[i])) st = tsl_records_add(iso, &db->recs[i]);
    snprintf(isolated_path, n, "/tmp/tessel-isolated-XXXXXX.jsonl");
    int fd = st == TSL_OK ? mkstemps(isolated_path, 6) : -1;
    if (fd >= 0) close(fd);
    if (fd < 0 || tsl_records_save(iso, isolated_path) != TSL_OK) {
      if (fd >= 0) unlink(isolated_path);
      isolated_path[0] = '\0';
      tsl_clear_error();
    }
    tsl_records_free(iso);
  }
  tsl_insitu_result_clear(&res);
  return true;
}

/* tune-op --schedule FILE: the file's schedule as a template of one config, checked on
 * this instance first (errors at FILE:LINE:COL before any measurement). */
static const tsl_template *start_template(const char *cmd, op_args *a) {
  char *text = tunecli_read_text_file(cmd, a->schedule_file);
  if (!text) return NULL;
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  const tsl_template *tpl = NULL;
  if (op_args_build(cmd, a)) {
    tsl_status st = tsl_user_text_template(a->name, text, a->schedule_file, &tpl);
    if (st != TSL_OK) tunecli_fail(cmd, st);
  }
  tsl_schedule_free(a->schedule);
  a->schedule = NULL;
  a->program = NULL; /* in the arena freed below */
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  free(text);
  return tpl;
}

/* A --file op's schedule block on this instance: its space and default config, so that
 * an error (at FILE:LINE:COL) stops tune-op before any measurement. */
static bool check_user_template(const char *cmd, const op_args *a, const tsl_target *t) {
  char name[96];
  snprintf(name, sizeof name, "%s%s", a->name, ".dsl");
  const tsl_template *tpl = tsl_template_find(name);
  if (!tpl) return true;
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  const int64_t *shapes[OP_ARGS_MAX_INPUTS];
  for (int i = 0; i < a->ninputs; i++) shapes[i] = a->shapes[i];
  tsl_te_program *p = NULL;
  tsl_config_space *space = calloc(1, sizeof *space);
  tsl_status st = space ? tsl_op_instantiate(a->name, a->ninputs, shapes, a->ndims, a->nparams, a->params, &p)
                        : tsl_error(TSL_ERR_NOMEM, "out of memory");
  if (st == TSL_OK) st = tpl->space(p, t, space);
  if (st != TSL_OK) fprintf(stderr, "tunecli %s: %s\n", cmd, tsl_last_error());
  else fprintf(stderr, "tunecli %s: template %s: %d knobs, %lld configs\n", cmd, tpl->name, space->nknobs,
               (long long)tsl_space_size(space));
  free(space);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return st == TSL_OK;
}

/* A --file op without a schedule block: the auto-scheduler's sketches are its template
 * (tuner/autosched.h). */
static bool auto_template(const char *cmd, const char *op) {
  const tsl_template *tpl = NULL;
  tsl_status st = tsl_autosched_template(op, &tpl);
  if (st != TSL_OK) {
    tunecli_fail(cmd, st);
    return false;
  }
  fprintf(stderr, "tunecli %s: op %s has no schedule block: searching the auto-scheduler's sketches (template %s)\n",
          cmd, op, tpl->name);
  return true;
}

/* The starting point (--schedule) against the tuned best. */
static void print_start(const tsl_records *db, const tsl_target *t, const tsl_workload *w, const tsl_template *start,
                        const tsl_tune_result *res) {
  char *key = NULL, target[192];
  if (tsl_workload_key_of(w, &key) != TSL_OK) {
    tsl_clear_error();
    return;
  }
  tsl_target_str(t, target, sizeof target);
  const tsl_record *r = NULL;
  if (tsl_records_best(db, target, key, start->name, 0, &r, NULL) != TSL_OK) {
    tsl_clear_error();
    printf("your schedule (%s): no successful measurement (see the errors above)\n", start->name);
  } else if (res->found) {
    double c = tsl_record_cost(r);
    printf("your schedule (%s): %.1f us; the best (%s) %.1f us: %.2fx\n", start->name, c * 1e6, res->template_name,
           res->best_cost * 1e6, c / res->best_cost);
  }
  free(key);
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
  tune_cli c;
  tune_cli_init(&c);
  c.target = a.target;
  if (a.records_file) c.records = a.records_file;
  bool ok = parse_tune_opts(cmd, nrest, rest, &c);
  free(rest);
  if (!ok) {
    op_args_free(&a);
    return 2;
  }
  if (a.file && c.o.measure.device) {
    fprintf(stderr, "tunecli tune-op: error: a --file op cannot be measured on a --device (the server knows the "
                    "built-in operators only); tune it here\n");
    op_args_free(&a);
    return 2;
  }
  tsl_target t;
  tsl_status st = tsl_target_parse(c.target, &t);
  if (st == TSL_OK) settle_cost(&c, &t);
  if (st == TSL_OK) st = tsl_tune_check_target(&t, &c.o.measure); /* before any work */
  if (st == TSL_OK) note_static(&c, &t);
  if (st == TSL_OK && c.o.measure.device) st = tsl_remote_prepare(&t, &c.o.measure);
  if (st != TSL_OK) {
    op_args_free(&a);
    return tunecli_fail(cmd, st);
  }
  /* a --file op joins the registry (and its schedule block the templates); --schedule
   * FILE is one more candidate, the starting point the templates must beat */
  const tsl_template *start = NULL;
  if (!op_args_register_user_op(cmd, &a) || (a.schedule_file && !(start = start_template(cmd, &a)))) {
    op_args_free(&a);
    return 1;
  }
  if (a.file && !check_user_template(cmd, &a, &t)) {
    op_args_free(&a);
    return 1;
  }
  if (a.file && tsl_template_list(a.name, NULL, 0) == (start ? 1 : 0) && !auto_template(cmd, a.name)) {
    op_args_free(&a);
    return 1;
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
  if (st != TSL_OK) {
    tsl_records_free(db);
    return tunecli_fail(cmd, st);
  }
  double peak = c.peak ? measure_peak(&t, c.o.measure.threads > 0 ? c.o.measure.threads : tsl_get_num_threads()) : 0;
  print_table(&row, 1, peak, c.o.measure.cost_static);
  if (start) print_start(db, &t, &w, start, &row.res);
  tsl_records_free(db);
  printf("records: %s\n", c.records);
  return row.res.found ? 0 : 1;
}

/* The model's convolutions as the graph compiler builds them (models/compile.h:
 * tsl_graph_conv_layers, after batch-norm folding, epilogue fusion and the NCHW[x]c
 * layout): exactly the family workloads it looks up in the records, each distinct one
 * once, in graph order. -1 on failure (reported). */
static int model_workloads(const tsl_graph *g, const char *target, tsl_workload *out, layer_row *rows, int max) {
  tsl_conv_layer *layers = calloc((size_t)max, sizeof *layers);
  int n = 0;
  if (!layers || tsl_graph_conv_layers(g, target, layers, max, &n) != TSL_OK) {
    if (layers) fprintf(stderr, "tunecli tune: %s\n", tsl_last_error());
    free(layers);
    return -1;
  }
  if (n > max) {
    fprintf(stderr, "tunecli tune: warning: %d distinct convolutions, tuning the first %d\n", n, max);
    n = max;
  }
  for (int i = 0; i < n; i++) {
    const tsl_conv2d_layer *d = &layers[i].desc;
    out[i] = layers[i].workload;
    tsl_workload_fix(&out[i]);
    memset(&rows[i], 0, sizeof rows[i]);
    snprintf(rows[i].label, sizeof rows[i].label, "%s%s", layers[i].node, layers[i].count > 1 ? " (+more)" : "");
    rows[i].only_algo = layers[i].only_algo;
    char only[48] = "";
    if (layers[i].only_algo >= 0)
      snprintf(only, sizeof only, " %s only", tsl_conv2d_algo_name((tsl_conv2d_algo)layers[i].only_algo));
    const tsl_expand_dw_layer *f = &layers[i].fused_desc;
    if (layers[i].fused) /* an expand 1x1 + depthwise pair as one workload */
      snprintf(rows[i].shape, sizeof rows[i].shape, "%lldx%lldx%lld->%lld 1x1+dw k%lldx%lld s%lld p%lld", (long long)f->C,
               (long long)f->H, (long long)f->W, (long long)f->E, (long long)f->R, (long long)f->S,
               (long long)f->stride_h, (long long)f->pad_top);
    else
      snprintf(rows[i].shape, sizeof rows[i].shape, "%lldx%lldx%lld->%lld k%lldx%lld s%lld p%lld%s%s", (long long)d->C,
               (long long)d->H, (long long)d->W, (long long)d->K, (long long)d->R, (long long)d->S,
               (long long)d->stride_h, (long long)d->pad_top,
               d->groups > 1 ? (d->groups == d->C ? " dw" : " grp") : "", only);
  }
  free(layers);
  return n;
}

/* With --static-shadow: the static model's rank correlation with the measurements, per
 * layer and its median over the layers with at least 3 pairs. */
static void print_shadow(const tune_cli *c, const layer_row *rows, int n) {
  if (!c->o.shadow_static_path || c->o.measure.cost_static) return;
  double rho[256];
  int k = 0;
  for (int i = 0; i < n && i < 256; i++) {
    if (rows[i].failed) continue;
    printf("static vs measured %-28s Spearman %6.3f over %d candidates\n", rows[i].label, rows[i].res.static_spearman,
           rows[i].res.static_pairs);
    if (rows[i].res.static_pairs >= 3) {
      int j = k++;
      while (j > 0 && rho[j - 1] > rows[i].res.static_spearman) {
        rho[j] = rho[j - 1];
        j--;
      }
      rho[j] = rows[i].res.static_spearman;
    }
  }
  if (k > 0)
    printf("static vs measured: median Spearman %.3f over %d layers (static records: %s)\n",
           k % 2 ? rho[k / 2] : (rho[k / 2 - 1] + rho[k / 2]) / 2, k, c->o.shadow_static_path);
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
  if (st == TSL_OK) settle_cost(&c, &t);
  if (st == TSL_OK) st = tsl_tune_check_target(&t, &c.o.measure); /* before any work */
  if (st == TSL_OK) note_static(&c, &t);
  if (st == TSL_OK && c.o.measure.device) st = tsl_remote_prepare(&t, &c.o.measure);
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
  int n = model_workloads(g, c.target, ws, rows, MAX_LAYERS);
  if (n < 0) {
    tsl_graph_free(g);
    free(ws);
    free(rows);
    return 1;
  }
  int bnodes[MAX_LAYERS], nb = tsl_binary_model_workloads(g, ws + n, bnodes, MAX_LAYERS - n); /* binarized models */
  for (int i = 0; i < nb; i++, n++) {
    snprintf(rows[n].label, sizeof rows[n].label, "%s", g->nodes[bnodes[i]].name);
    snprintf(rows[n].shape, sizeof rows[n].shape, "%s", ws[n].op);
    rows[n].only_algo = -1;
  }
  tsl_graph_free(g);
  fprintf(stderr, "tunecli tune: %s: %d distinct convolution workloads\n", model, n);
  tsl_records *db = NULL;
  if (!open_records(cmd, &c, &db)) {
    free(ws);
    free(rows);
    return 1;
  }
  if (c.layers) {
    /* keep the listed layers, in the order given (from copies: any order works) */
    int k = 0;
    tsl_workload *ws0 = malloc(sizeof *ws0 * (size_t)n);
    layer_row *rows0 = malloc(sizeof *rows0 * (size_t)n);
    if (!ws0 || !rows0) {
      free(ws0);
      free(rows0);
      tsl_records_free(db);
      free(ws);
      free(rows);
      return 1;
    }
    memcpy(ws0, ws, sizeof *ws0 * (size_t)n);
    memcpy(rows0, rows, sizeof *rows0 * (size_t)n);
    for (const char *p = c.layers; *p;) {
      char *end = NULL;
      long v = strtol(p, &end, 10);
      if (end == p || v < 1 || v > n || (*end && *end != ',')) {
        fprintf(stderr, "tunecli tune: error: --layers wants 1-based layer numbers up to %d, comma-separated: '%s'\n",
                n, c.layers);
        free(ws0);
        free(rows0);
        tsl_records_free(db);
        free(ws);
        free(rows);
        return 2;
      }
      if (k < n) {
        ws[k] = ws0[v - 1];
        tsl_workload_fix(&ws[k]);
        rows[k++] = rows0[v - 1];
      }
      p = *end ? end + 1 : end;
    }
    free(ws0);
    free(rows0);
    n = k;
  }
  int failed = 0;
  double t_start = tsl_time_now();
  char prefix[32];
  c.o.progress_prefix = prefix;
  for (int i = 0; i < n; i++) {
    fprintf(stderr, "[%d/%d] %s %s\n", i + 1, n, rows[i].label, rows[i].shape);
    snprintf(prefix, sizeof prefix, "[%d/%d]", i + 1, n);
    /* the later layers at the mean pace of the layers so far */
    c.o.eta_after_s = i > 0 ? (tsl_time_now() - t_start) / i * (n - i - 1) : 0;
    c.o.only_algo = rows[i].only_algo; /* the algorithms its compiled form can run */
    st = tsl_tune_workload(&t, &ws[i], &c.o, &rows[i].res);
    if (st != TSL_OK) {
      rows[i].failed = true;
      failed++;
      fprintf(stderr, "tunecli tune: %s: %s\n", rows[i].label, tsl_last_error());
      if (st == TSL_ERR_IO) break;
    }
  }
  double peak = c.peak ? measure_peak(&t, c.o.measure.threads > 0 ? c.o.measure.threads : tsl_get_num_threads()) : 0;
  print_table(rows, n, peak, c.o.measure.cost_static);
  print_shadow(&c, rows, n);
  printf("records: %s\n", c.records);
  char isolated[64] = "";
  /* the choice verified where it runs: isolated timing keeps a kernel's weights hot,
   * the model does not (models/insitu.h) */
  if (c.insitu && failed < n && st != TSL_ERR_IO && !c.o.measure.device)
    insitu_pass(model, is_file, &c, db, isolated, sizeof isolated);
  tsl_records_free(db);
  if (c.e2e && failed < n)
    end_to_end(model, c.target, c.records, isolated[0] ? isolated : NULL, c.o.measure.threads);
  if (isolated[0]) unlink(isolated);
  free(ws);
  free(rows);
  return (failed == n && n > 0) || st == TSL_ERR_IO ? 1 : 0;
}
