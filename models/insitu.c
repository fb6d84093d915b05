/* In-model verification of the per-layer tuning choice (insitu.h). */
#include "models/insitu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/arena.h"
#include "models/compile.h"
#include "ops/algorithm.h"
#include "runtime/graph_executor.h"
#include "tessel/runtime.h"
#include "tuner/cost_static.h"
#include "tuner/dispatch.h"

enum { MAX_LAYERS = 512 };

tsl_insitu_opts tsl_insitu_opts_default(void) {
  tsl_insitu_opts o;
  memset(&o, 0, sizeof o);
  o.context = "model";
  o.top_algos = 3;
  o.per_algo = 8;
  o.rounds = 31;
  o.warmup = 3;
  o.window = 2;
  return o;
}

void tsl_insitu_result_clear(tsl_insitu_result *res) {
  if (!res) return;
  free(res->layers);
  memset(res, 0, sizeof *res);
}

/* Whether r is the config `like` names (template and knob values; any space hash). */
static bool same_config(const tsl_record *r, const tsl_record *like) {
  if (strcmp(r->template_name, like->template_name) != 0 || r->config.nknobs != like->config.nknobs) return false;
  for (int i = 0; i < r->config.nknobs; i++)
    if (r->config.values[i] != like->config.values[i]) return false;
  return true;
}

static bool same_choice(const tsl_record *a, const tsl_record *b) {
  return a->space_hash == b->space_hash && same_config(a, b);
}

/* The dispatch's choice for w from db (what compiling with db runs); false when no
 * record of db applies. */
static bool dispatch_choice(const tsl_records *db, const tsl_target *t, const tsl_workload *w, int only_algo,
                            tsl_dispatch_info *info) {
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_status st = only_algo >= 0
                      ? tsl_dispatch_schedule_conv_algo(db, t, w, (tsl_conv2d_algo)only_algo, NULL, &p, &s, info)
                      : tsl_dispatch_schedule_any(db, t, w, NULL, &p, &s, info);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
  if (st != TSL_OK) tsl_clear_error();
  return st == TSL_OK && info->tuned;
}

/* Drops the records of sub that are like `like`: its config, or (whole) every config of
 * its template. */
static void drop_like(tsl_records *sub, const tsl_record *like, bool whole) {
  int n = 0;
  for (int i = 0; i < sub->n; i++) {
    const tsl_record *r = &sub->recs[i];
    bool drop = whole ? strcmp(r->template_name, like->template_name) == 0 : same_config(r, like);
    if (!drop) sub->recs[n++] = *r;
  }
  sub->n = n;
}

/* Candidates 1.. of layer L: the isolated records in the order the dispatch ranks them
 * (exact target before family, valid configs of the current spaces only, then cost),
 * each config once, at most `per_algo` configs of each of the first `top` templates met
 * (the best algorithms), the default's config left out (it is candidate 0). */
static tsl_status isolated_candidates(const tsl_records *db, const tsl_target *t, const tsl_workload *w, int top,
                                      int per_algo, tsl_insitu_layer *L, tsl_dispatch_info *info) {
  tsl_records *sub = NULL;
  tsl_status st = tsl_records_new(&sub);
  /* the layer's records: under its family key, and under the operator instance each of
   * its algorithms runs (tune-op's key), as the dispatch reads them (tuner/dispatch.h) */
  enum { MAX_OPS = 16 };
  tsl_algo_choice *algos = calloc(MAX_OPS, sizeof *algos);
  char *op_keys[MAX_OPS] = {NULL};
  int nops = algos ? tsl_algorithms_for(w, algos, MAX_OPS, NULL) : 0;
  if (nops > MAX_OPS) nops = MAX_OPS;
  for (int a = 0; a < nops; a++) op_keys[a] = tsl_dispatch_op_key(&algos[a], L->key);
  free(algos);
  for (int i = 0; st == TSL_OK && i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    bool layer = strcmp(r->workload, L->key) == 0;
    for (int a = 0; a < nops && !layer; a++) layer = op_keys[a] && strcmp(r->workload, op_keys[a]) == 0;
    if (!tsl_record_in_model(r) && !tsl_record_is_static(r) && r->error_no == TSL_MEASURE_OK && layer) {
      st = tsl_records_add(sub, r);
      /* the default's isolated cost (tune.c measures every algorithm's default) */
      if (st == TSL_OK && same_choice(r, &L->cand[0].rec) && tsl_record_cost(r) < L->cand[0].isolated_cost)
        L->cand[0].isolated_cost = tsl_record_cost(r);
    }
  }
  char tpl[TSL_INSITU_MAX_CANDIDATES][96];
  int taken[TSL_INSITU_MAX_CANDIDATES], ntpl = 0;
  bool first = true;
  while (st == TSL_OK && sub->n > 0 && L->ncand < TSL_INSITU_MAX_CANDIDATES) {
    if (!dispatch_choice(sub, t, w, L->only_algo, info)) break;
    int k = 0;
    while (k < ntpl && strcmp(tpl[k], info->record.template_name) != 0) k++;
    if (k == ntpl && ntpl == top) { /* an algorithm after the `top` best */
      drop_like(sub, &info->record, true);
      continue;
    }
    if (k == ntpl) {
      snprintf(tpl[ntpl], sizeof tpl[ntpl], "%s", info->record.template_name);
      taken[ntpl++] = 0;
    }
    if (!same_choice(&info->record, &L->cand[0].rec)) {
      if (first) L->isolated_choice = L->ncand;
      tsl_insitu_candidate *c = &L->cand[L->ncand++];
      memset(c, 0, sizeof *c);
      c->rec = info->record; /* a copy of the isolated record */
      c->isolated_cost = info->cost;
      c->model_cost = INFINITY;
    }
    first = false;
    drop_like(sub, &info->record, ++taken[k] >= per_algo);
  }
  tsl_records_free(sub);
  for (int a = 0; a < nops; a++) free(op_keys[a]);
  return st;
}

typedef struct variant {
  tsl_records *db; /* NULL for variant 0 */
  tsl_graph_plan *plan;
  tsl_graph_ctx *ctx;
  tsl_conv_step *steps;
  int nsteps, nplan;
  int *layer_of;  /* conv step -> layer, -1 when it ran another choice than meant */
  double *secs;   /* per plan step */
} variant;

static void variant_free(variant *v) {
  tsl_records_free(v->db);
  tsl_graph_ctx_free(v->ctx);
  tsl_graph_plan_free(v->plan);
  free(v->steps);
  free(v->layer_of);
  free(v->secs);
}

/* The layer of a conv step: its workload key AND the algorithm restriction its compiled
 * form has (a channel-scaled conv runs GEMM 1x1 only, an unscaled one of the same
 * workload every algorithm: two layers, as tsl_graph_conv_layers lists them). */
static int find_layer(const tsl_insitu_result *res, const char *key, int only_algo) {
  for (int i = 0; i < res->nlayers; i++)
    if (strcmp(res->layers[i].key, key) == 0 && res->layers[i].only_algo == only_algo) return i;
  return -1;
}

/* The candidate variant k runs for layer L: in its own variants its (k - first + 1)-th;
 * elsewhere, its isolated best, or the default when another layer shares its key (a
 * record of it would be dispatched to that layer's steps as well). */
static int candidate_in(const tsl_insitu_layer *L, int k) {
  if (k == 0 || L->ncand < 2) return 0;
  if (k >= L->first_variant && k < L->first_variant + L->ncand - 1) return k - L->first_variant + 1;
  return L->shares_key ? 0 : 1;
}

/* The variant that runs candidate c of layer L. */
static int variant_of(const tsl_insitu_layer *L, int c) { return c == 0 ? 0 : L->first_variant + c - 1; }

/* Gives each layer its variants: candidates 1.. of a layer run in variants first_variant..;
 * layers with a key of their own share variants 1.. (variant k runs every such layer's
 * k-th candidate), layers sharing a key (scaled and unscaled) take consecutive disjoint
 * ranges, since the records of one variant are looked up by key alone. Candidates past
 * the last variant (TSL_INSITU_MAX_CANDIDATES - 1) are dropped. Returns the variants. */
static int assign_variants(tsl_insitu_result *res) {
  int nv = 1;
  for (int l = 0; l < res->nlayers; l++) {
    tsl_insitu_layer *L = &res->layers[l];
    L->first_variant = 1;
    L->shares_key = false;
    for (int m = 0; m < res->nlayers; m++) {
      const tsl_insitu_layer *M = &res->layers[m];
      if (m == l || strcmp(M->key, L->key) != 0) continue;
      L->shares_key = true;
      if (m < l) L->first_variant += M->ncand - 1;
    }
    int room = TSL_INSITU_MAX_CANDIDATES - L->first_variant; /* variants first_variant .. MAX-1 */
    if (L->ncand - 1 > room) L->ncand = 1 + (room > 0 ? room : 0);
    if (L->isolated_choice >= L->ncand) L->isolated_choice = 0;
    if (L->ncand > 1 && L->first_variant + L->ncand - 1 > nv) nv = L->first_variant + L->ncand - 1;
  }
  return nv;
}

/* Compiles g with, per layer l, its candidate want[l] (0: the default, no record; want
 * NULL: every layer's default) and maps the conv steps to the layers that run exactly
 * that candidate (layer_of; -1 elsewhere). `what` names the plan in errors. */
static tsl_status compile_with(const tsl_graph *g, const char *target, const tsl_insitu_result *res, const int *want,
                               const char *what, variant *v) {
  tsl_status st = TSL_OK;
  if (want) {
    st = tsl_records_new(&v->db);
    for (int i = 0; st == TSL_OK && i < res->nlayers; i++)
      if (want[i] > 0) st = tsl_records_add(v->db, &res->layers[i].cand[want[i]].rec);
  }
  tsl_compile_options co = {.target = target, .records_db = v->db, .no_missed_warning = true};
  if (st == TSL_OK) st = tsl_graph_compile_conv_steps(g, &co, &v->plan, NULL, &v->steps, &v->nsteps);
  if (st == TSL_OK) st = tsl_graph_ctx_new(v->plan, &v->ctx);
  /* every run of every variant claims alike: the automatic choice would alternate in its
   * first runs and recheck later, giving the variants' samples different claims */
  if (st == TSL_OK) st = tsl_graph_ctx_set_claims(v->ctx, TSL_CLAIMS_ALWAYS);
  if (st != TSL_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st, "in situ: %s: %s", what, why);
  }
  v->nplan = tsl_graph_plan_num_steps(v->plan);
  v->layer_of = malloc(sizeof *v->layer_of * (size_t)(v->nsteps > 0 ? v->nsteps : 1));
  v->secs = calloc((size_t)(v->nplan > 0 ? v->nplan : 1), sizeof *v->secs);
  if (!v->layer_of || !v->secs) return tsl_error(TSL_ERR_NOMEM, "in situ: out of memory");
  for (int s = 0; s < v->nsteps; s++) {
    int l = find_layer(res, v->steps[s].info.record.workload, v->steps[s].info.only_algo);
    /* the candidate is measured only where the dispatch chose exactly it */
    if (l >= 0 && !same_choice(&v->steps[s].info.record, &res->layers[l].cand[want ? want[l] : 0].rec)) l = -1;
    v->layer_of[s] = l;
  }
  return TSL_OK;
}

/* Variant k of the pass (3.): every layer's candidate_in(L, k). */
static tsl_status compile_variant(const tsl_graph *g, const char *target, int k, const tsl_insitu_result *res,
                                  variant *v) {
  char what[32];
  snprintf(what, sizeof what, "variant %d", k);
  if (k == 0) return compile_with(g, target, res, NULL, what, v);
  int *want = malloc(sizeof *want * (size_t)(res->nlayers > 0 ? res->nlayers : 1));
  if (!want) return tsl_error(TSL_ERR_NOMEM, "in situ: out of memory");
  for (int l = 0; l < res->nlayers; l++) want[l] = candidate_in(&res->layers[l], k);
  tsl_status st = compile_with(g, target, res, want, what, v);
  free(want);
  return st;
}

/* The layers (distinct (conv workload, only_algo) pairs in step order) and their default candidate, from
 * variant 0's steps; then every layer's isolated candidates. */
static tsl_status collect_layers(const tsl_graph *g, tsl_records *db, const tsl_target *t, const char *target,
                                 const tsl_insitu_opts *o, const variant *v0, tsl_insitu_result *res) {
  res->layers = calloc((size_t)(v0->nsteps > 0 ? v0->nsteps : 1), sizeof *res->layers);
  tsl_conv_layer *cl = calloc(MAX_LAYERS, sizeof *cl);
  tsl_dispatch_info *info = malloc(sizeof *info);
  int ncl = 0;
  tsl_status st = res->layers && cl && info ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "in situ: out of memory");
  if (st == TSL_OK) st = tsl_graph_conv_layers(g, target, cl, MAX_LAYERS, &ncl);
  if (ncl > MAX_LAYERS) ncl = MAX_LAYERS;
  for (int s = 0; st == TSL_OK && s < v0->nsteps; s++) {
    const tsl_dispatch_info *di = &v0->steps[s].info;
    int l = find_layer(res, di->record.workload, di->only_algo);
    if (l >= 0) {
      res->layers[l].steps++;
      continue;
    }
    tsl_insitu_layer *L = &res->layers[res->nlayers++];
    snprintf(L->key, sizeof L->key, "%s", di->record.workload);
    snprintf(L->node, sizeof L->node, "%s", v0->steps[s].node);
    L->steps = 1;
    L->only_algo = di->only_algo;
    L->ncand = 1;
    L->cand[0].rec = di->record;
    L->cand[0].is_default = true;
    L->cand[0].isolated_cost = INFINITY;
    L->cand[0].model_cost = INFINITY;
  }
  for (int l = 0; st == TSL_OK && l < res->nlayers; l++) {
    const tsl_workload *w = NULL;
    for (int i = 0; i < ncl && !w; i++) {
      char *key = NULL;
      if (tsl_workload_key_of(&cl[i].workload, &key) != TSL_OK) {
        tsl_clear_error();
        continue;
      }
      if (strcmp(key, res->layers[l].key) == 0 && cl[i].only_algo == res->layers[l].only_algo) w = &cl[i].workload;
      free(key);
    }
    if (w) st = isolated_candidates(db, t, w, o->top_algos, o->per_algo, &res->layers[l], info);
  }
  free(info);
  free(cl);
  return st;
}

static void fill_input(tsl_graph_ctx *ctx, const tsl_graph_plan *plan) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < tsl_graph_plan_num_inputs(plan); i++) {
    tsl_graph_io_info io = tsl_graph_plan_input_info(plan, i);
    void *p = tsl_graph_ctx_input(ctx, i);
    if (!p) continue;
    if (!tsl_dtype_equal(io.dtype, TSL_DTYPE_F32)) {
      memset(p, 0, (size_t)io.bytes);
      continue;
    }
    float *f = p;
    for (int64_t k = 0; k < io.bytes / 4; k++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      f[k] = (float)((double)(s >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
  }
}

/* Runs every variant alternately; samples[(k * nlayers + l) * rounds + r]. */
static tsl_status run_variants(variant *v, int nv, const tsl_insitu_opts *o, int nlayers, double *samples,
                               double *acc) {
  tsl_status st = TSL_OK;
  for (int w = 0; w < o->warmup && st == TSL_OK; w++)
    for (int k = 0; k < nv && st == TSL_OK; k++) st = tsl_graph_run(v[k].ctx, NULL);
  for (int r = 0; r < o->rounds && st == TSL_OK; r++)
    for (int j = 0; j < nv && st == TSL_OK; j++) {
      int k = (r + j) % nv; /* which variant goes first rotates */
      if ((st = tsl_graph_run(v[k].ctx, v[k].secs)) != TSL_OK) break;
      for (int l = 0; l < nlayers; l++) acc[l] = 0;
      for (int s = 0; s < v[k].nsteps; s++)
        if (v[k].layer_of[s] >= 0) acc[v[k].layer_of[s]] += v[k].secs[v[k].steps[s].step];
      for (int l = 0; l < nlayers; l++)
        samples[((size_t)k * (size_t)nlayers + (size_t)l) * (size_t)o->rounds + (size_t)r] = acc[l];
    }
  return st;
}

/* Makes r (costs set) an in-model record of this run and writes it: appended to the
 * file, added to db. A record tsl_record_check refuses (a sample below the clock's
 * resolution: no measurement) is skipped. */
static double now_unix(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* (stamp: the record's timestamp, seconds since the epoch; the records of one final-plan
 * check share one.) Its target is the pass's (a candidate taken from a record of the
 * target's family is measured here, on the target itself). */
static tsl_status put_record(tsl_records *db, const tsl_target *t, const tsl_insitu_opts *o, tsl_record *r,
                             double timed_s, int window, double stamp, tsl_insitu_result *res) {
  tsl_target_str(t, r->target, sizeof r->target);
  tsl_device_info_host(t, &r->device);
  snprintf(r->context, sizeof r->context, "%s", o->context);
  r->window_steps = window;
  r->error_no = TSL_MEASURE_OK;
  r->error_msg[0] = '\0';
  r->all_cost = timed_s;
  r->compile_s = 0;
  r->timestamp = stamp;
  r->threads = tsl_get_num_threads();
  tsl_record_stamp(r);
  if (tsl_record_check(r) != TSL_OK) {
    tsl_clear_error();
    return TSL_OK;
  }
  tsl_status st = o->records_path ? tsl_record_append(o->records_path, r) : TSL_OK;
  if (st == TSL_OK) st = tsl_records_add(db, r);
  if (st == TSL_OK) res->records_written++;
  return st;
}

/* Each measured candidate's in-model record: appended, added to db. */
static tsl_status write_records(tsl_records *db, const tsl_target *t, const tsl_insitu_opts *o, tsl_insitu_result *res,
                                double timed_s) {
  tsl_status st = TSL_OK;
  for (int l = 0; l < res->nlayers && st == TSL_OK; l++)
    for (int c = 0; c < res->layers[l].ncand && st == TSL_OK; c++) {
      tsl_insitu_candidate *cd = &res->layers[l].cand[c];
      if (cd->measured && res->layers[l].ncand >= 2) st = put_record(db, t, o, &cd->rec, timed_s, 0, now_unix(), res);
    }
  return st;
}

/* The plan steps a layer's final-plan cost spans in v: its steps and the `window` steps
 * after each (marks[0..nplan)); returns how many of its steps v has. */
static int window_marks(const variant *v, int l, int window, bool *marks) {
  int hits = 0;
  memset(marks, 0, sizeof *marks * (size_t)v->nplan);
  for (int s = 0; s < v->nsteps; s++) {
    if (v->layer_of[s] != l) continue;
    hits++;
    for (int p = v->steps[s].step; p <= v->steps[s].step + window && p < v->nplan; p++) marks[p] = true;
  }
  return hits;
}

static double marked_seconds(const variant *v, const bool *marks) {
  double sum = 0;
  for (int p = 0; p < v->nplan; p++)
    if (marks[p]) sum += v->secs[p];
  return sum;
}

/* One batch of the final-plan check (insitu.h, 5.): layers ids[0..n) (n at most
 * TSL_INSITU_MAX_CANDIDATES - 1), plan F (every layer at its choice) and F - L per layer,
 * run alternately; sets their `checked`, final_cost and `chosen`, writes the records. */
static tsl_status check_batch(const tsl_graph *g, const tsl_target *t, const char *target, const tsl_insitu_opts *o,
                              tsl_records *db, tsl_insitu_result *res, const int *ids, int n) {
  variant v[TSL_INSITU_MAX_CANDIDATES];
  memset(v, 0, sizeof v);
  int nl = res->nlayers, nv = n + 1;
  int *want = malloc(sizeof *want * (size_t)nl);
  double *w = calloc((size_t)n * 2 * (size_t)o->rounds, sizeof *w); /* [i][0 default, 1 choice][round] */
  tsl_status st = want && w ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "in situ: out of memory");
  for (int k = 0; k < nv && st == TSL_OK; k++) {
    for (int l = 0; l < nl; l++) want[l] = res->layers[l].chosen;
    char what[192];
    if (k == 0) snprintf(what, sizeof what, "the final plan");
    else {
      want[ids[k - 1]] = 0;
      snprintf(what, sizeof what, "the final plan with %s at its default", res->layers[ids[k - 1]].node);
    }
    if (compile_with(g, target, res, want, what, &v[k]) == TSL_OK) continue;
    /* the check is best-effort: without F no layer of the batch, without F - L not L */
    if (o->log) fprintf(o->log, "in situ: final-plan check: %s; not checked\n", tsl_last_error());
    tsl_clear_error();
    if (k == 0) nv = 0;
    variant_free(&v[k]);
    memset(&v[k], 0, sizeof v[k]);
  }
  /* which plan steps each layer's cost spans, in F (marks[i]) and in its F - L (marks[n + i]) */
  bool *marks = NULL;
  int nplan = 0;
  for (int k = 0; k < nv && st == TSL_OK; k++)
    if (v[k].nplan > nplan) nplan = v[k].nplan;
  if (st == TSL_OK && !(marks = calloc((size_t)(2 * n) * (size_t)(nplan > 0 ? nplan : 1), sizeof *marks)))
    st = tsl_error(TSL_ERR_NOMEM, "in situ: out of memory");
  bool ok[TSL_INSITU_MAX_CANDIDATES] = {false};
  for (int i = 0; i < n && st == TSL_OK && nv > 0; i++) {
    int l = ids[i], steps = res->layers[l].steps;
    /* both plans compiled, with the same steps (the choice of a conv's algorithm changes
     * no step count today; if one did, the windows would not be alike) */
    ok[i] = v[i + 1].ctx && v[i + 1].nplan == v[0].nplan &&
            window_marks(&v[0], l, o->window, &marks[(size_t)i * (size_t)nplan]) == steps &&
            window_marks(&v[i + 1], l, o->window, &marks[(size_t)(n + i) * (size_t)nplan]) == steps;
  }
  for (int k = 0; k < nv && st == TSL_OK; k++)
    if (v[k].ctx) fill_input(v[k].ctx, v[k].plan);
  double t_run = tsl_time_now();
  tsl_status run = TSL_OK; /* a failed run skips the batch's check */
  for (int r = 0; r < o->warmup && st == TSL_OK && run == TSL_OK; r++)
    for (int k = 0; k < nv && run == TSL_OK; k++)
      if (v[k].ctx) run = tsl_graph_run(v[k].ctx, NULL);
  for (int r = 0; r < o->rounds && st == TSL_OK && run == TSL_OK; r++)
    for (int j = 0; j < nv && run == TSL_OK; j++) {
      int k = (r + j) % nv;
      if (!v[k].ctx) continue;
      if ((run = tsl_graph_run(v[k].ctx, v[k].secs)) != TSL_OK) break;
      if (k > 0) {
        w[((size_t)(k - 1) * 2) * (size_t)o->rounds + (size_t)r] =
            marked_seconds(&v[k], &marks[(size_t)(n + k - 1) * (size_t)nplan]);
        continue;
      }
      for (int i = 0; i < n; i++)
        w[((size_t)i * 2 + 1) * (size_t)o->rounds + (size_t)r] = marked_seconds(&v[0], &marks[(size_t)i * (size_t)nplan]);
    }
  t_run = tsl_time_now() - t_run;
  if (run != TSL_OK) {
    if (o->log) fprintf(o->log, "in situ: final-plan check: %s; not checked\n", tsl_last_error());
    tsl_clear_error();
    nv = 0;
  }
  double stamp = now_unix();
  for (int i = 0; i < n && st == TSL_OK && nv > 0; i++) {
    if (!ok[i]) continue;
    tsl_insitu_layer *L = &res->layers[ids[i]];
    tsl_record rec[2] = {L->cand[0].rec, L->cand[L->mixed_choice].rec};
    for (int c = 0; c < 2; c++) {
      rec[c].ncosts = o->rounds;
      memcpy(rec[c].costs, &w[((size_t)i * 2 + (size_t)c) * (size_t)o->rounds], sizeof rec[c].costs[0] * (size_t)o->rounds);
      rec[c].error_no = TSL_MEASURE_OK;
      L->final_cost[c] = tsl_record_cost(&rec[c]);
      if (!(L->final_cost[c] > 0)) L->final_cost[c] = INFINITY; /* below the clock: no measurement */
    }
    if (!isfinite(L->final_cost[0]) || !isfinite(L->final_cost[1])) {
      L->final_cost[0] = L->final_cost[1] = INFINITY;
      continue;
    }
    L->checked = true;
    res->checked++;
    if (!(L->final_cost[1] < L->final_cost[0])) {
      L->chosen = 0;
      res->reverted++;
    }
    /* the default's first: the lookup gives a tie to the record written first; both share
     * one timestamp (the pair of one check, tsl_record_final_current) */
    for (int c = 0; c < 2 && st == TSL_OK; c++) st = put_record(db, t, o, &rec[c], t_run, o->window, stamp, res);
  }
  for (int k = 0; k <= n; k++) {
    res->variants += v[k].ctx != NULL;
    variant_free(&v[k]);
  }
  free(marks);
  free(want);
  free(w);
  return st;
}

/* The pass's target (o->target, else "host"), parsed into *t, and the thread pool set to
 * o->threads (when > 0); *prev_threads the count to restore. */
static tsl_status begin_runs(const tsl_insitu_opts *o, const char **target, tsl_target *t, int *prev_threads) {
  *target = o->target ? o->target : "host";
  tsl_status st = tsl_target_parse(*target, t);
  if (st != TSL_OK) return st;
  *prev_threads = tsl_get_num_threads();
  if (o->threads > 0) tsl_set_num_threads(o->threads);
  return TSL_OK;
}

/* The check's batches over every layer whose choice is not its default and whose key is
 * its own (the pool already set). */
static tsl_status check_layers(const tsl_graph *g, const tsl_target *t, const char *target, const tsl_insitu_opts *o,
                               tsl_records *db, tsl_insitu_result *res) {
  int ids[TSL_INSITU_MAX_CANDIDATES - 1], n = 0;
  tsl_status st = TSL_OK;
  for (int l = 0; l <= res->nlayers && st == TSL_OK; l++) {
    if (l < res->nlayers && res->layers[l].chosen > 0 && !res->layers[l].shares_key) ids[n++] = l;
    if (n > 0 && (n == TSL_INSITU_MAX_CANDIDATES - 1 || l == res->nlayers)) {
      if (o->log)
        fprintf(o->log, "in situ: final-plan check of %d layers: %d plans, %d+%d alternating runs each\n", n, n + 1,
                o->warmup, o->rounds);
      st = check_batch(g, t, target, o, db, res, ids, n);
      n = 0;
    }
  }
  return st;
}

tsl_status tsl_insitu_check_final_plan(const tsl_graph *g, tsl_records *db, const tsl_insitu_opts *o,
                                       tsl_insitu_result *res) {
  if (!g || !db || !o || !res) return tsl_error(TSL_ERR_INVALID, "in situ: NULL argument");
  if (!o->context || !o->context[0] || o->rounds < 1 || o->rounds > TSL_RECORD_MAX_COSTS || o->warmup < 0 ||
      o->window < 1 || o->window > TSL_INSITU_MAX_WINDOW || o->threads < 0)
    return tsl_error(TSL_ERR_INVALID, "in situ: final-plan check: context must be non-empty, rounds 1..%d, warmup >= 0, "
                     "window 1..%d", TSL_RECORD_MAX_COSTS, TSL_INSITU_MAX_WINDOW);
  for (int l = 0; l < res->nlayers; l++) {
    const tsl_insitu_layer *L = &res->layers[l];
    if (L->mixed_choice < 0 || L->mixed_choice >= L->ncand || L->chosen != L->mixed_choice || L->checked)
      return tsl_error(TSL_ERR_INVALID, "in situ: final-plan check: layer %d (%s): its choice %d is not a candidate of "
                       "the %d (or it was checked already)", l, L->node, L->mixed_choice, L->ncand);
  }
  const char *target;
  tsl_target t;
  int prev_threads;
  tsl_status st = begin_runs(o, &target, &t, &prev_threads);
  if (st != TSL_OK) return st;
  st = check_layers(g, &t, target, o, db, res);
  if (o->threads > 0) tsl_set_num_threads(prev_threads);
  return st;
}

tsl_status tsl_insitu_verify(const tsl_graph *g, tsl_records *db, const tsl_insitu_opts *o, tsl_insitu_result *res) {
  if (!g || !db || !o || !res) return tsl_error(TSL_ERR_INVALID, "in situ: NULL argument");
  memset(res, 0, sizeof *res);
  if (!o->context || !o->context[0] || o->top_algos < 1 || o->top_algos >= TSL_INSITU_MAX_CANDIDATES ||
      o->per_algo < 1 || o->rounds < 1 || o->rounds > TSL_RECORD_MAX_COSTS || o->warmup < 0 || o->threads < 0 ||
      o->window < 0 || o->window > TSL_INSITU_MAX_WINDOW)
    return tsl_error(TSL_ERR_INVALID, "in situ: context must be non-empty, top_algos 1..%d, per_algo >= 1, rounds 1..%d, "
                     "warmup >= 0, window 0..%d", TSL_INSITU_MAX_CANDIDATES - 1, TSL_RECORD_MAX_COSTS,
                     TSL_INSITU_MAX_WINDOW);
  double t0 = tsl_time_now();
  const char *target;
  tsl_target t;
  int prev_threads;
  tsl_status st = begin_runs(o, &target, &t, &prev_threads);
  if (st != TSL_OK) return st;
  variant v[TSL_INSITU_MAX_CANDIDATES];
  memset(v, 0, sizeof v);
  int nv = 1;
  double *samples = NULL, *acc = NULL, t_run = 0;
  st = compile_variant(g, target, 0, res, &v[0]);
  if (st == TSL_OK) st = collect_layers(g, db, &t, target, o, &v[0], res);
  if (st == TSL_OK) nv = assign_variants(res);
  if (st == TSL_OK && nv < 2) {
    /* no workload has an isolated record: nothing to verify */
    res->variants = 0;
    goto done;
  }
  if (o->log)
    fprintf(o->log, "in situ: %d conv workloads, %d model variants, %d+%d alternating runs each, %d threads\n",
            res->nlayers, nv, o->warmup, o->rounds, tsl_get_num_threads());
  /* variant 0 saw no candidate list when compiled: map its steps now */
  for (int s = 0; st == TSL_OK && s < v[0].nsteps; s++)
    v[0].layer_of[s] = find_layer(res, v[0].steps[s].info.record.workload, v[0].steps[s].info.only_algo);
  for (int k = 1; k < nv && st == TSL_OK; k++) st = compile_variant(g, target, k, res, &v[k]);
  res->variants = nv;
  if (st == TSL_OK) {
    size_t n = (size_t)nv * (size_t)(res->nlayers > 0 ? res->nlayers : 1) * (size_t)o->rounds;
    samples = calloc(n, sizeof *samples);
    acc = calloc((size_t)(res->nlayers > 0 ? res->nlayers : 1), sizeof *acc);
    if (!samples || !acc) st = tsl_error(TSL_ERR_NOMEM, "in situ: out of memory");
  }
  for (int k = 0; k < nv && st == TSL_OK; k++) fill_input(v[k].ctx, v[k].plan);
  t_run = tsl_time_now();
  if (st == TSL_OK) st = run_variants(v, nv, o, res->nlayers, samples, acc);
  t_run = tsl_time_now() - t_run;
  for (int l = 0; l < res->nlayers && st == TSL_OK; l++) {
    tsl_insitu_layer *L = &res->layers[l];
    for (int c = 0; c < L->ncand; c++) {
      tsl_insitu_candidate *cd = &L->cand[c];
      int k = variant_of(L, c);
      int hits = 0;
      for (int s = 0; s < v[k].nsteps; s++) hits += v[k].layer_of[s] == l;
      cd->measured = hits == L->steps;
      if (!cd->measured) continue;
      const double *x = &samples[((size_t)k * (size_t)res->nlayers + (size_t)l) * (size_t)o->rounds];
      cd->rec.ncosts = o->rounds;
      for (int r = 0; r < o->rounds; r++) cd->rec.costs[r] = x[r] / L->steps; /* seconds per call */
      cd->rec.error_no = TSL_MEASURE_OK;
      cd->model_cost = tsl_record_cost(&cd->rec);
    }
    /* a sample below the clock's resolution is no measurement: never the choice (its
     * record is not written either, write_records) */
    for (int c = 0; c < L->ncand; c++)
      if (L->cand[c].measured && !(L->cand[c].model_cost > 0)) L->cand[c].model_cost = INFINITY;
    /* the first least on a tie: write_records writes candidates in this order and the
     * dispatcher gives a tie to the record written first (tuner/dispatch.c) */
    L->chosen = 0;
    for (int c = 1; c < L->ncand; c++)
      if (L->cand[c].model_cost < L->cand[L->chosen].model_cost) L->chosen = c;
    L->mixed_choice = L->chosen;
    L->final_cost[0] = L->final_cost[1] = INFINITY;
    /* how well the isolated costs rank the candidates the model measured */
    double iso[TSL_INSITU_MAX_CANDIDATES], mod[TSL_INSITU_MAX_CANDIDATES];
    L->rank_pairs = 0;
    for (int c = 0; c < L->ncand; c++)
      if (isfinite(L->cand[c].model_cost) && isfinite(L->cand[c].isolated_cost)) {
        iso[L->rank_pairs] = L->cand[c].isolated_cost;
        mod[L->rank_pairs++] = L->cand[c].model_cost;
      }
    L->rank_corr = tsl_spearman(iso, mod, L->rank_pairs);
  }
  if (st == TSL_OK) st = write_records(db, &t, o, res, t_run);
  for (int k = 0; k < nv; k++) variant_free(&v[k]); /* before the check compiles its own */
  memset(v, 0, sizeof v);
  if (st == TSL_OK && o->window > 0) st = check_layers(g, &t, target, o, db, res);
done:
  for (int k = 0; k < nv; k++) variant_free(&v[k]);
  free(samples);
  free(acc);
  if (o->threads > 0) tsl_set_num_threads(prev_threads);
  res->seconds = tsl_time_now() - t0;
  if (st != TSL_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    tsl_insitu_result_clear(res);
    return tsl_error(st, "%s", why);
  }
  return TSL_OK;
}
