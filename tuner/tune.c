/* The tuning loop (tune.h). */
#include "tuner/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/arena.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/conv2d/conv2d_select.h"
#include "tuner/dispatch.h"
#include "tuner/cost_static.h"
#include "tuner/mca.h"
#include "tuner/remote.h"

enum { MAX_ALGOS = 16, MAX_BATCH = 64, TOP_ALGOS = 3 };
#define PROMISING 2.0
#define SLOW_CUTOFF 10.0

tsl_tune_opts tsl_tune_opts_default(void) {
  tsl_tune_opts o;
  memset(&o, 0, sizeof o);
  o.search = TSL_SEARCH_XGB;
  o.trials = 64;
  o.batch = 8;
  o.seed = 1;
  o.only_algo = -1;
  o.measure = tsl_measure_opts_default();
  return o;
}

typedef struct task {
  const tsl_target *target;
  char target_str[192];
  const char *key;
  char *op_key; /* the algorithm's operator instance under its own key (tune-op's), when
                   not key; NULL otherwise */
  const tsl_algo_choice *algo;
  const tsl_template *tpl;
  tsl_config_space space;
  uint64_t hash;
  tsl_runner *runner;
  const tsl_tune_opts *o;
  tsl_tune_result *res;
  double best;
  tsl_config best_config;
  double layer_t0; /* when tuning of the workload started */
  double *pair_measured, *pair_static; /* shadow estimates (opts.shadow_static_path) */
  int npairs, cappairs;
} task;

static void fill_record(const task *tk, const tsl_config *c, const tsl_measure_result *m, bool is_static,
                        tsl_record *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->target, sizeof r->target, "%s", tk->target_str);
  snprintf(r->task, sizeof r->task, "%s", tk->tpl->op);
  snprintf(r->workload, sizeof r->workload, "%s", tk->key);
  snprintf(r->algorithm, sizeof r->algorithm, "%s", tk->algo->name);
  snprintf(r->template_name, sizeof r->template_name, "%s", tk->tpl->name);
  r->space_hash = tk->hash;
  r->config_index = tsl_config_index(&tk->space, c);
  r->nknobs = tk->space.nknobs;
  for (int i = 0; i < r->nknobs; i++) {
    snprintf(r->knob_names[i], TSL_KNOB_NAME_LEN, "%s", tk->space.knobs[i].name);
    r->knob_kinds[i] = tk->space.knobs[i].kind;
  }
  r->config = *c;
  r->ncosts = m->ncosts;
  memcpy(r->costs, m->costs, sizeof r->costs);
  r->error_no = m->error_no;
  snprintf(r->error_msg, sizeof r->error_msg, "%s", m->error_msg);
  r->all_cost = m->all_cost;
  r->compile_s = m->compile_s;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  r->timestamp = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
  if (!tk->o->measure.device || !tsl_remote_device_info(tk->o->measure.device, &r->device))
    tsl_device_info_host(tk->target, &r->device);
  r->threads = tk->o->measure.threads > 0 ? tk->o->measure.threads : tsl_get_num_threads();
  if (is_static) { /* an estimate: for which CPU, over how many cores */
    int cores = 0;
    const tsl_cpu_figures *fig = tsl_cost_static_figures(tk->target, &cores);
    snprintf(r->device.cpu, sizeof r->device.cpu, "static model of %s (%s)", tk->target->cpu, fig->machine);
    r->device.cores = cores;
    r->threads = tk->o->measure.threads > 0 ? tk->o->measure.threads : cores;
    snprintf(r->cost_source, sizeof r->cost_source, "static");
    snprintf(r->cost_model, sizeof r->cost_model, "%s", TSL_COST_STATIC_MODEL);
  }
  tsl_record_stamp(r);
}

/* The static estimate of measured candidate c (cost: its measured cost), appended to
 * the shadow records file and, when both succeeded, kept as a pair for the correlation.
 * r is scratch. A failing estimate is recorded as the error it is. */
static void shadow_estimate(task *tk, const tsl_config *c, double cost, tsl_record *r) {
  tsl_measure_result m;
  if (tsl_runner_estimate(tk->runner, tk->tpl, &tk->space, c, &m) != TSL_OK) return;
  fill_record(tk, c, &m, true, r);
  if (tsl_record_append(tk->o->shadow_static_path, r) != TSL_OK && tk->o->log)
    fprintf(tk->o->log, "tune: shadow estimate not recorded: %s\n", tsl_last_error());
  double est = tsl_record_cost(r);
  if (!isfinite(est) || !isfinite(cost)) return;
  if (tk->npairs == tk->cappairs) {
    int cap = tk->cappairs ? 2 * tk->cappairs : 64;
    double *a = realloc(tk->pair_measured, sizeof *a * (size_t)cap);
    if (a) tk->pair_measured = a;
    double *b = a ? realloc(tk->pair_static, sizeof *b * (size_t)cap) : NULL;
    if (b) tk->pair_static = b;
    if (!a || !b) return;
    tk->cappairs = cap;
  }
  tk->pair_measured[tk->npairs] = cost;
  tk->pair_static[tk->npairs++] = est;
}

/* Measures c, records it; returns its cost (+inf on failure). */
static double measure_one(task *tk, const tsl_config *c, const tsl_measure_result *pre, tsl_status *io) {
  tsl_measure_result m;
  tsl_status st = TSL_OK;
  if (pre) m = *pre; /* measured already, with its batch */
  else st = tsl_runner_measure(tk->runner, tk->tpl, &tk->space, c, &m);
  if (st != TSL_OK && tk->o->measure.device) { /* the device is gone: stop, record nothing */
    *io = st;
    return INFINITY;
  }
  if (st != TSL_OK) {
    memset(&m, 0, sizeof m);
    m.error_no = TSL_MEASURE_RUNTIME;
    snprintf(m.error_msg, sizeof m.error_msg, "runner: %s", tsl_last_error());
  }
  tsl_record *r = malloc(sizeof *r);
  if (!r) {
    *io = tsl_error(TSL_ERR_NOMEM, "tune: out of memory");
    return INFINITY;
  }
  fill_record(tk, c, &m, tk->o->measure.cost_static, r);
  if (tsl_record_check(r) != TSL_OK) {
    /* a "success" whose costs are no measurement (0 s, NaN: a device's bad reply) is
     * recorded as the runtime error it is, never as the fastest candidate */
    char why[200];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    r->error_no = m.error_no = TSL_MEASURE_RUNTIME;
    r->ncosts = m.ncosts = 0;
    snprintf(r->error_msg, sizeof r->error_msg, "not a measurement: %s", why);
    snprintf(m.error_msg, sizeof m.error_msg, "%s", r->error_msg);
  }
  if (tk->o->records_path && *io == TSL_OK) *io = tsl_record_append(tk->o->records_path, r);
  if (tk->o->db) tsl_records_add(tk->o->db, r);
  double cost = tsl_record_cost(r);
  if (tk->o->shadow_static_path && !tk->o->measure.cost_static && *io == TSL_OK) shadow_estimate(tk, c, cost, r);
  tk->res->measured++;
  tk->res->trials++;
  tk->res->compile_s += m.compile_s;
  if (m.error_no != TSL_MEASURE_OK) {
    tk->res->errors++;
    if (tk->o->log) {
      char cs[256];
      fprintf(tk->o->log, "%s%s: candidate %s: %s: %s\n", tk->o->progress_tty ? "\n" : "", tk->tpl->name,
              tsl_config_str(&tk->space, c, cs, sizeof cs), tsl_measure_error_name(m.error_no), m.error_msg);
    }
  }
  free(r);
  return cost;
}

/* Orders batch[0..n) by the static estimate (failed estimates last, the search's order
 * among equals) and returns k: only the first k are measured (opts.prefilter). */
static int prefilter(task *tk, tsl_config *batch, int n, int k) {
  double est[MAX_BATCH];
  for (int i = 0; i < n; i++) {
    tsl_measure_result m;
    est[i] = INFINITY;
    if (tsl_runner_estimate(tk->runner, tk->tpl, &tk->space, &batch[i], &m) == TSL_OK && m.error_no == TSL_MEASURE_OK &&
        m.ncosts > 0)
      est[i] = m.costs[0];
  }
  for (int i = 1; i < n; i++) { /* insertion sort: stable, n <= MAX_BATCH */
    tsl_config c = batch[i];
    double e = est[i];
    int j = i;
    for (; j > 0 && est[j - 1] > e; j--) {
      batch[j] = batch[j - 1];
      est[j] = est[j - 1];
    }
    batch[j] = c;
    est[j] = e;
  }
  return k < n ? k : n;
}

/* One progress line: the layer's trials over its budget (all algorithms), the best
 * GFLOP/s so far of this algorithm, and the ETA of the layer (its measurement rate
 * so far times its remaining budget) and of everything (plus eta_after_s). */
static void progress(const task *tk, int done, int budget, double t0) {
  (void)t0;
  if (!tk->o->log) return;
  double gflops = isfinite(tk->best) ? tsl_runner_flops(tk->runner) / tk->best * 1e-9 : 0;
  const tsl_tune_result *r = tk->res;
  double el = tsl_time_now() - tk->layer_t0;
  int left = tk->o->trials - r->trials;
  double eta = r->measured > 0 && left > 0 ? el / r->measured * left : 0;
  fprintf(tk->o->log, "%s%s %3d/%-3d trials  %-28s %3d/%-3d  best %7.2f GFLOP/s  errors %d  ETA layer %3.0f s, all %4.0f s%s",
          tk->o->progress_tty ? "\r" : "", tk->o->progress_prefix ? tk->o->progress_prefix : "", r->trials,
          tk->o->trials, tk->tpl->name, done, budget, gflops, r->errors, eta, eta + tk->o->eta_after_s,
          tk->o->progress_tty ? "\033[K" : "\n");
  fflush(tk->o->log);
}

/* Whether r is an isolated trial of this task as it measures now (what resuming counts
 * and where a stored default time is taken from): the same workload (the layer's key,
 * or the operator instance its algorithm runs: what tune-op of that operator wrote),
 * target, template and space; no in-model record (the in-situ pass's costs are not the runner's); the
 * same cost source (never estimates for measurements); and a measured record of the
 * same thread count (records.h: the lookup keeps a file's 1- and 2-thread tunings apart,
 * and so does this). */
static bool held_trial(const task *tk, const tsl_record *r) {
  const tsl_tune_opts *o = tk->o;
  int threads = o->measure.threads > 0 ? o->measure.threads : tsl_get_num_threads();
  if (tsl_record_in_model(r) || tsl_record_is_static(r) != o->measure.cost_static) return false;
  if (!o->measure.cost_static && r->threads > 0 && threads > 0 && r->threads != threads) return false;
  return r->space_hash == tk->hash &&
         (strcmp(r->workload, tk->key) == 0 || (tk->op_key && strcmp(r->workload, tk->op_key) == 0)) &&
         strcmp(r->target, tk->target_str) == 0 && strcmp(r->template_name, tk->tpl->name) == 0;
}

/* Tunes one algorithm with `budget` trials; updates tk->best. */
/* Tunes one algorithm. First pass (first): the records already held count as trials
 * and the default config is measured unless held; no search. Later pass: up to
 * new_budget new candidates from the search (whose model learns from every record of
 * the algorithm held so far, none counted again). Updates tk->best. */
static tsl_status tune_algorithm(task *tk, int new_budget, bool first, double *default_cost) {
  const tsl_tune_opts *o = tk->o;
  tsl_search *search = NULL;
  tsl_status st = tsl_search_new(o->search, &tk->space, o->seed, &search), io = TSL_OK;
  if (st != TSL_OK) return st;
  st = tsl_search_set_program(search, tsl_runner_program(tk->runner), tk->tpl, tk->target);
  int done = 0, since_best = 0;
  double t0 = tsl_time_now();
  /* resume: what the records already hold teaches the model (one training for all of
   * them) and, on the first pass, counts */
  if (o->db && st == TSL_OK) {
    size_t cap = (size_t)(o->db->n > 0 ? o->db->n : 1);
    tsl_config *held = malloc(sizeof *held * cap);
    double *held_cost = malloc(sizeof *held_cost * cap);
    const tsl_record **held_rec = malloc(sizeof *held_rec * cap);
    int nheld = 0;
    if (!held || !held_cost || !held_rec) st = tsl_error(TSL_ERR_NOMEM, "tune: out of memory");
    for (int i = 0; st == TSL_OK && i < o->db->n; i++) {
      const tsl_record *r = &o->db->recs[i];
      if (!held_trial(tk, r) || tsl_config_check(&tk->space, &r->config) != TSL_OK) continue;
      /* a config held under the other key (the layer's and its operator's: tune MODEL and
       * tune-op of one instance both measured it) is one trial, at its lower cost */
      int dup = -1;
      for (int j = 0; j < nheld && dup < 0 && tk->op_key; j++)
        if (held_rec[j]->config_index == r->config_index && strcmp(held_rec[j]->workload, r->workload) != 0) dup = j;
      if (dup >= 0) {
        double c = tsl_record_cost(r);
        if (c < held_cost[dup]) held_cost[dup] = c;
        if (c < tk->best) {
          tk->best = c;
          tk->best_config = r->config;
        }
        continue;
      }
      held_rec[nheld] = r;
      tsl_search_mark_visited(search, &r->config);
      if (first && o->shadow_held && o->shadow_static_path && !o->measure.cost_static) {
        tsl_record *scratch = malloc(sizeof *scratch);
        if (scratch) shadow_estimate(tk, &r->config, tsl_record_cost(r), scratch);
        else st = tsl_error(TSL_ERR_NOMEM, "tune: out of memory re-estimating held records");
        free(scratch);
      }
      held[nheld] = r->config;
      held_cost[nheld++] = tsl_record_cost(r);
      done++;
      if (first) tk->res->trials++;
      if (held_cost[nheld - 1] < tk->best) {
        tk->best = held_cost[nheld - 1];
        tk->best_config = r->config;
      }
    }
    if (st == TSL_OK && nheld > 0) st = tsl_search_update(search, held, held_cost, nheld);
    free(held);
    free(held_cost);
    free(held_rec);
  }
  int budget = first ? done + 1 : done + new_budget;
  /* the default config first: the baseline (and usually a good start) */
  tsl_config dflt;
  tsl_clear_error();
  if (st == TSL_OK && first &&
      tk->tpl->default_config(tsl_runner_program(tk->runner), tk->target, &tk->space, &dflt) == TSL_OK) {
    const tsl_record *prev = NULL;
    for (int i = 0; o->db && i < o->db->n && !prev; i++) {
      const tsl_record *r = &o->db->recs[i];
      if (held_trial(tk, r) && tsl_config_index(&tk->space, &r->config) == tsl_config_index(&tk->space, &dflt)) prev = r;
    }
    if (prev) {
      *default_cost = tsl_record_cost(prev);
    } else {
      tsl_search_mark_visited(search, &dflt);
      double c = measure_one(tk, &dflt, NULL, &io);
      *default_cost = c;
      done++;
      if (io == TSL_OK) st = tsl_search_update(search, &dflt, &c, 1); /* else keep io's message */
      if (c < tk->best) {
        tk->best = c;
        tk->best_config = dflt;
      }
    }
  }
  progress(tk, done, budget, t0);
  while (st == TSL_OK && io == TSL_OK && !first && done < budget) {
    if (o->deadline > 0 && tsl_time_now() >= o->deadline) break;
    if (o->early_stopping > 0 && since_best >= o->early_stopping) break;
    tsl_config batch[MAX_BATCH];
    int want = o->batch < MAX_BATCH ? o->batch : MAX_BATCH;
    if (want > budget - done) want = budget - done;
    /* hopeless candidates (10x the layer's best so far at their first call) skip timing */
    tsl_runner_set_slow_cutoff(tk->runner, isfinite(tk->res->best_cost) ? SLOW_CUTOFF * tk->res->best_cost : 0);
    int n = tsl_search_next(search, batch, want);
    if (n == 0) break;
    if (o->prefilter > 0 && !o->measure.cost_static && n > o->prefilter) n = prefilter(tk, batch, n, o->prefilter);
    double costs[MAX_BATCH];
    /* a pool of devices measures the batch in parallel (runner.h); else one by one */
    tsl_measure_result pre[MAX_BATCH];
    tsl_status bs = tsl_runner_measure_batch(tk->runner, tk->tpl, &tk->space, batch, n, pre);
    if (bs != TSL_OK && bs != TSL_ERR_UNSUPPORTED) io = bs;
    for (int i = 0; i < n && io == TSL_OK; i++) {
      costs[i] = measure_one(tk, &batch[i], bs == TSL_OK ? &pre[i] : NULL, &io);
      done++;
      if (costs[i] < tk->best) {
        tk->best = costs[i];
        tk->best_config = batch[i];
        since_best = 0;
      } else {
        since_best++;
      }
    }
    if (io == TSL_OK) st = tsl_search_update(search, batch, costs, n); /* else costs[] is partial */
    progress(tk, done, budget, t0);
  }
  if (o->log && o->progress_tty && !first) fputc('\n', o->log);
  tsl_search_free(search);
  return io != TSL_OK ? io : st;
}

static tsl_status tune_workload(const tsl_target *t, const tsl_workload *w, const tsl_tune_opts *opts,
                                tsl_tune_result *res) {
  if (opts->trials < 1 || opts->batch < 1 || opts->early_stopping < 0)
    return tsl_error(TSL_ERR_INVALID, "tune: trials and batch must be >= 1, early_stopping >= 0");
  memset(res, 0, sizeof *res);
  res->best_cost = res->default_cost = INFINITY;

  char *key = NULL;
  tsl_status st = tsl_workload_key_of(w, &key);
  if (st != TSL_OK) return st;
  tsl_algo_choice *algos = calloc(MAX_ALGOS, sizeof *algos);
  if (!algos) {
    free(key);
    return tsl_error(TSL_ERR_NOMEM, "tune: out of memory");
  }
  int na = tsl_algorithms_for(w, algos, MAX_ALGOS, opts->log);
  if (na > MAX_ALGOS) na = MAX_ALGOS;
  if (opts->only_template || opts->only_algo >= 0) {
    int k = 0;
    for (int i = 0; i < na; i++) {
      tsl_conv2d_algo ca;
      bool algo_ok = opts->only_algo < 0 ||
                     (tsl_conv2d_algo_of_op(algos[i].op_workload.op, &ca) && (int)ca == opts->only_algo);
      if (algo_ok && (!opts->only_template || strcmp(algos[i].tpl->name, opts->only_template) == 0))
        algos[k++] = algos[i];
    }
    na = k;
  }
  if (na == 0) {
    char only[160] = "";
    if (opts->only_template) snprintf(only, sizeof only, " %s", opts->only_template);
    if (opts->only_algo >= 0)
      snprintf(only + strlen(only), sizeof only - strlen(only), " of conv algorithm %s",
               tsl_conv2d_algo_name((tsl_conv2d_algo)opts->only_algo));
    st = tsl_error(TSL_ERR_NOT_FOUND, "tune: no algorithm%s applies to %s", only, key);
    free(algos);
    free(key);
    return st;
  }
  task *tk = calloc(1, sizeof *tk);
  if (!tk) {
    free(algos);
    free(key);
    return tsl_error(TSL_ERR_NOMEM, "tune: out of memory");
  }
  tk->target = t;
  tsl_target_str(t, tk->target_str, sizeof tk->target_str);
  tk->key = key;
  tk->o = opts;
  tk->res = res;
  tk->layer_t0 = tsl_time_now();
  /* set up every algorithm first, so the budget is shared by those that apply */
  tsl_runner *runners[MAX_ALGOS] = {NULL};
  tsl_config_space *spaces = calloc(MAX_ALGOS, sizeof *spaces);
  int ok_algos = 0;
  tsl_status last = TSL_OK;
  char last_why[512] = "";
  for (int a = 0; a < na && spaces; a++) {
    tsl_status sa = tsl_runner_new(t, &algos[a].op_workload, &opts->measure, &runners[a]);
    if (sa == TSL_OK) sa = algos[a].tpl->space(tsl_runner_program(runners[a]), t, &spaces[a]);
    if (sa != TSL_OK) {
      last = sa;
      snprintf(last_why, sizeof last_why, "%s: %s", algos[a].name, tsl_last_error());
      if (opts->log) fprintf(opts->log, "algorithm %s skipped: %s\n", algos[a].name, tsl_last_error());
      tsl_runner_free(runners[a]);
      runners[a] = NULL;
      continue;
    }
    ok_algos++;
  }
  st = spaces ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "tune: out of memory");
  /* Fast-Run in two passes. First every algorithm's default config (or its records
   * held): one measurement each tells which algorithms are in the race. Then the
   * remaining budget goes, in equal shares, to the TOP_ALGOS best algorithms within
   * PROMISING x of the best so far (all of them when none has succeeded yet): a
   * Winograd F(6) that is 5x slower than the direct convolution at its default gets no
   * share of a small budget. */
  double algo_best[MAX_ALGOS];
  /* the baseline: what compiling without records runs (the dispatcher's default
   * algorithm, e.g. tsl_conv2d_select's pick, at its default config); its default is
   * measured in the first pass like every algorithm's */
  char dflt_algo[96] = "";
  {
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_te_program *dp = NULL;
    tsl_schedule *ds = NULL;
    tsl_dispatch_info info;
    tsl_status ds_st = opts->only_algo >= 0 ? tsl_dispatch_schedule_conv_algo(NULL, t, w, (tsl_conv2d_algo)opts->only_algo,
                                                                             NULL, &dp, &ds, &info)
                                            : tsl_dispatch_schedule_any(NULL, t, w, NULL, &dp, &ds, &info);
    if (ds_st == TSL_OK)
      snprintf(dflt_algo, sizeof dflt_algo, "%s", info.algorithm);
    tsl_clear_error();
    tsl_schedule_free(ds);
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
  }
  for (int pass = 0; pass < 2 && st == TSL_OK; pass++) {
    int order[MAX_ALGOS], nord = 0;
    double overall = INFINITY;
    for (int a = 0; a < na; a++)
      if (runners[a] && pass == 1 && algo_best[a] < overall && tsl_space_size(&spaces[a]) > 1)
        overall = algo_best[a]; /* among those with a space to search: a fixed schedule crowds none out */
    for (int a = 0; a < na; a++) {
      if (!runners[a]) continue;
      if (pass == 1 && isfinite(overall) && !(algo_best[a] <= PROMISING * overall)) continue;
      if (pass == 1 && tsl_space_size(&spaces[a]) <= 1) continue; /* its one config was measured */
      int k = nord++;
      while (pass == 1 && k > 0 && algo_best[order[k - 1]] > algo_best[a]) {
        order[k] = order[k - 1];
        k--;
      }
      order[k] = a;
    }
    if (pass == 1 && nord > TOP_ALGOS) nord = TOP_ALGOS;
    int remaining = opts->trials - res->trials;
    for (int k = 0; k < nord && st == TSL_OK; k++) {
      int a = order[k];
      int share = pass == 0 ? 0 : remaining / nord + (k < remaining % nord ? 1 : 0);
      if (pass == 1 && share < 1) continue;
      tk->algo = &algos[a];
      tk->tpl = algos[a].tpl;
      free(tk->op_key);
      tk->op_key = tsl_dispatch_op_key(&algos[a], key);
      tk->best = INFINITY;
      tk->runner = runners[a];
      tk->space = spaces[a];
      tk->hash = tsl_space_hash(tk->tpl->name, tk->tpl->version, tk->tpl->op, &tk->space);
      double dcost = INFINITY;
      st = tune_algorithm(tk, share, pass == 0, &dcost);
      if (pass == 0 && (strcmp(algos[a].name, dflt_algo) == 0 || (!dflt_algo[0] && !isfinite(res->default_cost))))
        res->default_cost = dcost;
      algo_best[a] = pass == 0 || tk->best < algo_best[a] ? tk->best : algo_best[a];
      if (tk->best < res->best_cost) {
        res->found = true;
        res->best_cost = tk->best;
        res->config = tk->best_config;
        snprintf(res->algorithm, sizeof res->algorithm, "%s", algos[a].name);
        snprintf(res->template_name, sizeof res->template_name, "%s", tk->tpl->name);
        tsl_config_str(&tk->space, &tk->best_config, res->config_str, sizeof res->config_str);
      }
    }
  }
  for (int a = 0; a < na; a++) tsl_runner_free(runners[a]);
  res->static_pairs = tk->npairs;
  res->static_spearman = tsl_spearman(tk->pair_measured, tk->pair_static, tk->npairs);
  free(tk->pair_measured);
  free(tk->pair_static);
  free(tk->op_key);
  {
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_te_program *fp = NULL;
    if (tsl_workload_instantiate(w, &fp) == TSL_OK) res->flops = tsl_program_flops(fp);
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
  }
  free(spaces);
  if (st == TSL_OK && ok_algos == 0)
    st = tsl_error(last, "tune: no algorithm of %s could be set up (the last, %s)", key, last_why);
  free(tk);
  free(algos);
  free(key);
  return st;
}

tsl_status tsl_tune_check_target(const tsl_target *t, const tsl_measure_opts *m) {
  if (!t || !m) return tsl_error(TSL_ERR_INVALID, "tune: NULL argument");
  char name[256];
  tsl_target_str(t, name, sizeof name);
  if (m->cost_static && m->device)
    return tsl_error(TSL_ERR_INVALID, "tune: --cost static estimates without running: no --device with it");
  if (m->cost_static) {
    if (tsl_cost_static_check(t) == TSL_OK) return TSL_OK;
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "tune: no device to measure target '%s' on and no usable static cost model (%s): measure on a "
                     "device that runs it (--device tcp://HOST:PORT --key KEY, docs/rpc.md), or make the static model "
                     "usable: install %s (Debian package llvm-19) or name it with %s, for a CPU it has a scheduling "
                     "model of (-mcpu=cortex-a53|a55|a72|a76|neoverse-n1, docs/cost_static.md)",
                     name, why, TSL_MCA_DEFAULT, TSL_MCA_ENV);
  }
  const char *why = NULL;
  if (m->device || tsl_target_runs_on_host(t, &why)) return TSL_OK;
  return tsl_error(TSL_ERR_UNSUPPORTED,
                   "tune: code for target '%s' cannot run on this machine (%s), so its candidates cannot be measured "
                   "here: measure them on a device that runs it (--device tcp://HOST:PORT --key KEY, docs/rpc.md), "
                   "estimate them with the static cost model (--cost static, docs/cost_static.md), "
                   "or tune a target this machine runs (--target host)",
                   name, why ? why : "");
}

tsl_status tsl_tune_workload(const tsl_target *t, const tsl_workload *w, const tsl_tune_opts *opts,
                             tsl_tune_result *res) {
  if (!t || !w || !opts || !res) return tsl_error(TSL_ERR_INVALID, "tune: NULL argument");
  tsl_status ct = tsl_tune_check_target(t, &opts->measure);
  if (ct != TSL_OK) return ct;
  if (opts->db) return tune_workload(t, w, opts, res);
  /* the second pass learns from the first pass's measurements through a records db: a
   * private one when the caller keeps none */
  tsl_tune_opts local = *opts;
  tsl_status st = tsl_records_new(&local.db);
  if (st != TSL_OK) return st;
  st = tune_workload(t, w, &local, res);
  tsl_records_free(local.db);
  return st;
}
