/* The tuning loop (tune.h). */
#include "tuner/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/arena.h"

enum { MAX_ALGOS = 16, MAX_BATCH = 64 };

tsl_tune_opts tsl_tune_opts_default(void) {
  tsl_tune_opts o;
  memset(&o, 0, sizeof o);
  o.search = TSL_SEARCH_XGB;
  o.trials = 64;
  o.batch = 8;
  o.seed = 1;
  o.measure = tsl_measure_opts_default();
  return o;
}

typedef struct task {
  const tsl_target *target;
  char target_str[192];
  const char *key;
  const tsl_algo_choice *algo;
  const tsl_template *tpl;
  tsl_config_space space;
  uint64_t hash;
  tsl_runner *runner;
  const tsl_tune_opts *o;
  tsl_tune_result *res;
  double best;
  tsl_config best_config;
} task;

static void fill_record(const task *tk, const tsl_config *c, const tsl_measure_result *m, tsl_record *r) {
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
  tsl_device_info_host(tk->target, &r->device);
  r->threads = tk->o->measure.threads > 0 ? tk->o->measure.threads : tsl_get_num_threads();
  tsl_record_stamp(r);
}

/* Measures c, records it; returns its cost (+inf on failure). */
static double measure_one(task *tk, const tsl_config *c, tsl_status *io) {
  tsl_measure_result m;
  tsl_status st = tsl_runner_measure(tk->runner, tk->tpl, &tk->space, c, &m);
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
  fill_record(tk, c, &m, r);
  if (tk->o->records_path && *io == TSL_OK) *io = tsl_record_append(tk->o->records_path, r);
  if (tk->o->db) tsl_records_add(tk->o->db, r);
  double cost = tsl_record_cost(r);
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

static void progress(const task *tk, int done, int budget, double t0) {
  if (!tk->o->log) return;
  double gflops = isfinite(tk->best) ? tsl_runner_flops(tk->runner) / tk->best * 1e-9 : 0;
  double el = tsl_time_now() - t0;
  double eta = done > 0 && budget > done ? el / done * (budget - done) : 0;
  fprintf(tk->o->log, "%s  %-24s %4d/%-4d trials  best %8.2f GFLOP/s  errors %d  ETA %4.0f s%s",
          tk->o->progress_tty ? "\r" : "", tk->tpl->name, done, budget, gflops, tk->res->errors, eta,
          tk->o->progress_tty ? "" : "\n");
  fflush(tk->o->log);
}

/* Tunes one algorithm with `budget` trials; updates tk->best. */
static tsl_status tune_algorithm(task *tk, int budget, double *default_cost) {
  const tsl_tune_opts *o = tk->o;
  tsl_search *search = NULL;
  tsl_status st = tsl_search_new(o->search, &tk->space, o->seed, &search), io = TSL_OK;
  if (st != TSL_OK) return st;
  int done = 0, since_best = 0;
  double t0 = tsl_time_now();
  /* resume: what the records already hold counts and teaches the model */
  if (o->db) {
    for (int i = 0; i < o->db->n && st == TSL_OK; i++) {
      const tsl_record *r = &o->db->recs[i];
      if (r->space_hash != tk->hash || strcmp(r->workload, tk->key) != 0 || strcmp(r->target, tk->target_str) != 0 ||
          strcmp(r->template_name, tk->tpl->name) != 0 || tsl_config_check(&tk->space, &r->config) != TSL_OK)
        continue;
      tsl_search_mark_visited(search, &r->config);
      double c = tsl_record_cost(r);
      st = tsl_search_update(search, &r->config, &c, 1);
      done++;
      tk->res->trials++;
      if (c < tk->best) {
        tk->best = c;
        tk->best_config = r->config;
      }
    }
  }
  /* the default config first: the baseline (and usually a good start) */
  tsl_config dflt;
  tsl_clear_error();
  if (st == TSL_OK && tk->tpl->default_config(tsl_runner_program(tk->runner), tk->target, &tk->space, &dflt) == TSL_OK) {
    const tsl_record *prev = NULL;
    for (int i = 0; o->db && i < o->db->n && !prev; i++) {
      const tsl_record *r = &o->db->recs[i];
      if (r->space_hash == tk->hash && strcmp(r->workload, tk->key) == 0 && strcmp(r->target, tk->target_str) == 0 &&
          strcmp(r->template_name, tk->tpl->name) == 0 && tsl_config_index(&tk->space, &r->config) ==
                                                              tsl_config_index(&tk->space, &dflt))
        prev = r;
    }
    if (prev) {
      *default_cost = tsl_record_cost(prev);
    } else {
      tsl_search_mark_visited(search, &dflt);
      double c = measure_one(tk, &dflt, &io);
      *default_cost = c;
      done++;
      st = tsl_search_update(search, &dflt, &c, 1);
      if (c < tk->best) {
        tk->best = c;
        tk->best_config = dflt;
      }
    }
  }
  progress(tk, done, budget, t0);
  while (st == TSL_OK && io == TSL_OK && done < budget) {
    if (o->deadline > 0 && tsl_time_now() >= o->deadline) break;
    if (o->early_stopping > 0 && since_best >= o->early_stopping) break;
    tsl_config batch[MAX_BATCH];
    int want = o->batch < MAX_BATCH ? o->batch : MAX_BATCH;
    if (want > budget - done) want = budget - done;
    int n = tsl_search_next(search, batch, want);
    if (n == 0) break;
    double costs[MAX_BATCH];
    for (int i = 0; i < n && io == TSL_OK; i++) {
      costs[i] = measure_one(tk, &batch[i], &io);
      done++;
      if (costs[i] < tk->best) {
        tk->best = costs[i];
        tk->best_config = batch[i];
        since_best = 0;
      } else {
        since_best++;
      }
    }
    st = tsl_search_update(search, batch, costs, n);
    progress(tk, done, budget, t0);
  }
  if (o->log && o->progress_tty) fputc('\n', o->log);
  tsl_search_free(search);
  return io != TSL_OK ? io : st;
}

tsl_status tsl_tune_workload(const tsl_target *t, const tsl_workload *w, const tsl_tune_opts *opts,
                             tsl_tune_result *res) {
  if (!t || !w || !opts || !res) return tsl_error(TSL_ERR_INVALID, "tune: NULL argument");
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
  if (opts->only_template) {
    int k = 0;
    for (int i = 0; i < na; i++)
      if (strcmp(algos[i].tpl->name, opts->only_template) == 0) algos[k++] = algos[i];
    na = k;
  }
  if (na == 0) {
    st = tsl_error(TSL_ERR_NOT_FOUND, "tune: no algorithm%s%s applies to %s", opts->only_template ? " " : "",
                   opts->only_template ? opts->only_template : "", key);
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
  /* set up every algorithm first, so the budget is shared by those that apply */
  tsl_runner *runners[MAX_ALGOS] = {NULL};
  tsl_config_space *spaces = calloc(MAX_ALGOS, sizeof *spaces);
  int ok_algos = 0;
  tsl_status last = TSL_OK;
  for (int a = 0; a < na && spaces; a++) {
    tsl_status sa = tsl_runner_new(t, &algos[a].op_workload, &opts->measure, &runners[a]);
    if (sa == TSL_OK) sa = algos[a].tpl->space(tsl_runner_program(runners[a]), t, &spaces[a]);
    if (sa != TSL_OK) {
      last = sa;
      if (opts->log) fprintf(opts->log, "algorithm %s skipped: %s\n", algos[a].name, tsl_last_error());
      tsl_runner_free(runners[a]);
      runners[a] = NULL;
      continue;
    }
    ok_algos++;
  }
  st = spaces ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "tune: out of memory");
  for (int a = 0, k = 0; a < na && st == TSL_OK; a++) {
    if (!runners[a]) continue;
    int budget = opts->trials / ok_algos + (k < opts->trials % ok_algos ? 1 : 0);
    k++;
    if (budget < 1) continue;
    tk->algo = &algos[a];
    tk->tpl = algos[a].tpl;
    tk->best = INFINITY;
    tk->runner = runners[a];
    tk->space = spaces[a];
    tk->hash = tsl_space_hash(tk->tpl->name, tk->tpl->version, tk->tpl->op, &tk->space);
    double dcost = INFINITY;
    st = tune_algorithm(tk, budget, &dcost);
    if (!isfinite(res->default_cost)) res->default_cost = dcost;
    if (tk->best < res->best_cost) {
      res->found = true;
      res->best_cost = tk->best;
      res->config = tk->best_config;
      snprintf(res->algorithm, sizeof res->algorithm, "%s", algos[a].name);
      snprintf(res->template_name, sizeof res->template_name, "%s", tk->tpl->name);
      tsl_config_str(&tk->space, &tk->best_config, res->config_str, sizeof res->config_str);
    }
  }
  for (int a = 0; a < na; a++) tsl_runner_free(runners[a]);
  {
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_te_program *fp = NULL;
    if (tsl_workload_instantiate(w, &fp) == TSL_OK) res->flops = tsl_program_flops(fp);
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
  }
  free(spaces);
  if (st == TSL_OK && ok_algos == 0) st = last;
  free(tk);
  free(algos);
  free(key);
  return st;
}
