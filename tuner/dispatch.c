/* The best record's schedule, or the default with a warning (dispatch.h). */
#include "tuner/dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/runtime.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/autosched.h"
#include "tuner/cost_static.h"

enum { MAX_ALGOS = 16 };

static void info_set(tsl_dispatch_info *info, const tsl_algo_choice *a, const tsl_config_space *s,
                     const tsl_config *c, tsl_match_kind match, const tsl_record *used, const char *target,
                     const char *key) {
  if (!info) return;
  memset(info, 0, sizeof *info);
  info->tuned = match != TSL_MATCH_NONE;
  info->match = match;
  info->cost = used ? tsl_record_cost(used) : INFINITY;
  info->in_model = used && tsl_record_in_model(used);
  tsl_record *r = &info->record;
  if (used) *r = *used;
  snprintf(r->target, sizeof r->target, "%s", used ? used->target : target);
  snprintf(r->task, sizeof r->task, "%s", a->tpl->op);
  snprintf(r->workload, sizeof r->workload, "%s", key);
  snprintf(r->algorithm, sizeof r->algorithm, "%s", a->name);
  snprintf(r->template_name, sizeof r->template_name, "%s", a->tpl->name);
  r->space_hash = tsl_space_hash(a->tpl->name, a->tpl->version, a->tpl->op, s);
  r->config_index = tsl_config_index(s, c);
  r->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs && i < TSL_MAX_KNOBS; i++) {
    snprintf(r->knob_names[i], TSL_KNOB_NAME_LEN, "%s", s->knobs[i].name);
    r->knob_kinds[i] = s->knobs[i].kind;
  }
  r->config = *c;
  snprintf(info->algorithm, sizeof info->algorithm, "%s", a->name);
  snprintf(info->template_name, sizeof info->template_name, "%s", a->tpl->name);
  info->op_workload = a->op_workload;
  tsl_workload_fix(&info->op_workload);
  tsl_config_str(s, c, info->config_str, sizeof info->config_str);
}

static bool any_record(const tsl_records *db, const char *key, const char *tpl) {
  for (int i = 0; i < db->n; i++)
    if (db->recs[i].error_no == TSL_MEASURE_OK && strcmp(db->recs[i].template_name, tpl) == 0 &&
        strcmp(db->recs[i].workload, key) == 0)
      return true;
  return false;
}

char *tsl_dispatch_op_key(const tsl_algo_choice *a, const char *key) {
  char *op_key = NULL;
  if (tsl_workload_key_of(&a->op_workload, &op_key) != TSL_OK) {
    tsl_clear_error();
    return NULL;
  }
  if (op_key && strcmp(op_key, key) == 0) {
    free(op_key);
    op_key = NULL;
  }
  return op_key;
}

/* Whether record a of rank tier ta comes before record b of rank tb: the lower rank,
 * then the lower cost, then (an exact tie) the one written first (records of one db
 * share one array: their addresses are file order). */
static bool ranks_before(int ta, const tsl_record *a, int tb, const tsl_record *b) {
  if (ta != tb) return ta < tb;
  double ca = tsl_record_cost(a), cb = tsl_record_cost(b);
  return ca < cb || (ca == cb && a < b);
}

/* The static estimate, of the same target as static record `like` and of the layer
 * (family key `key`, or a's own operator key), of algorithm a's default config (space s
 * of program p); NULL when there is none. */
static const tsl_record *default_estimate(const tsl_records *db, const tsl_record *like, const char *key,
                                          const tsl_algo_choice *a, const tsl_te_program *p, const tsl_target *t,
                                          const tsl_config_space *s) {
  tsl_config c;
  if (a->tpl->default_config(p, t, s, &c) != TSL_OK) {
    tsl_clear_error();
    return NULL;
  }
  int64_t idx = tsl_config_index(s, &c);
  uint64_t h = tsl_space_hash(a->tpl->name, a->tpl->version, a->tpl->op, s);
  char *op_key = tsl_dispatch_op_key(a, key);
  const tsl_record *found = NULL;
  for (int i = 0; i < db->n && !found; i++) {
    const tsl_record *r = &db->recs[i];
    if (r->error_no == TSL_MEASURE_OK && tsl_record_is_static(r) && !tsl_record_in_model(r) && r->space_hash == h &&
        r->config_index == idx && strcmp(r->template_name, a->tpl->name) == 0 &&
        (strcmp(r->workload, key) == 0 || (op_key && strcmp(r->workload, op_key) == 0)) &&
        strcmp(r->target, like->target) == 0 && strcmp(r->cost_model, like->cost_model) == 0)
      found = r;
  }
  free(op_key);
  return found;
}

/* The index of the family's default algorithm among algos, -1 when it has none. */
static int preferred(const tsl_target *t, const tsl_workload *w, const tsl_algo_choice *algos, int na) {
  tsl_conv2d_layer d;
  if (!tsl_conv2d_is_family(w) || tsl_conv2d_layer_of_workload(w, &d) != TSL_OK) return -1;
  tsl_conv2d_algo sel = tsl_conv2d_select(&d, t), a;
  for (int i = 0; i < na; i++)
    if (tsl_conv2d_algo_of_op(algos[i].op_workload.op, &a) && a == sel) return i;
  return -1;
}

/* any_op: every algorithm of w's family, else w's own operator only; only_algo >= 0 (a
 * tsl_conv2d_algo): only the operators of that conv algorithm. */
static tsl_status dispatch(const tsl_records *db, const tsl_target *t, const tsl_workload *w, FILE *warn,
                           bool any_op, int only_algo, tsl_te_program **program, tsl_schedule **sched,
                           tsl_dispatch_info *info) {
  if (!t || !w || !program || !sched) return tsl_error(TSL_ERR_INVALID, "dispatch: NULL argument");
  *program = NULL;
  *sched = NULL;
  char *key = NULL;
  tsl_status st = tsl_workload_key_of(w, &key);
  if (st != TSL_OK) return st;
  char target[192];
  tsl_target_str(t, target, sizeof target);
  tsl_algo_choice *algos = calloc(MAX_ALGOS, sizeof *algos);
  tsl_config_space *spaces = calloc(MAX_ALGOS, sizeof *spaces);
  tsl_te_program **progs = calloc(MAX_ALGOS, sizeof *progs);
  if (!algos || !spaces || !progs) {
    st = tsl_error(TSL_ERR_NOMEM, "dispatch: out of memory");
    goto out;
  }
  int na = tsl_algorithms_for(w, algos, MAX_ALGOS, NULL);
  if (na == 0) {
    /* no hand or user template: the auto-scheduler's (its records, else its default) */
    const tsl_template *tpl = NULL;
    if ((st = tsl_autosched_template(w->op, &tpl)) != TSL_OK) goto out;
    na = tsl_algorithms_for(w, algos, MAX_ALGOS, NULL);
  }
  if (na > MAX_ALGOS) na = MAX_ALGOS;
  if (!any_op || only_algo >= 0) {
    int k = 0;
    for (int a = 0; a < na; a++) {
      tsl_conv2d_algo ca;
      bool keep = only_algo >= 0 ? tsl_conv2d_algo_of_op(algos[a].op_workload.op, &ca) && (int)ca == only_algo
                                 : strcmp(algos[a].op_workload.op, w->op) == 0;
      if (keep) algos[k++] = algos[a];
    }
    na = k;
  }
  if (na == 0) {
    st = tsl_error(TSL_ERR_NOT_FOUND, "dispatch: no algorithm applies to %s", key);
    goto out;
  }
  /* the best record per algorithm; ranks (tsl_records_best_rank, tsl_record_rank) put the exact
   * target before its family, this thread count before others, in-model records before
   * isolated ones (the final plan's before the pass's variants'). An exact tie of rank and cost goes to the record written first, across
   * algorithms as within one (tsl_records_best_rank): the order a tuning pass writes its
   * candidates in, so that its choice on a tie (the first least) is the one compiled
   * (models/insitu.c). Records of one db share one array: their addresses are file order. */
  int best = -1, best_tier = TSL_RECORD_RANKS;
  const tsl_record *best_rec = NULL;
  bool ok[MAX_ALGOS] = {false}, tried[MAX_ALGOS] = {false};
  for (int a = 0; a < na && db; a++) {
    char *op_key = tsl_dispatch_op_key(&algos[a], key);
    /* instantiating a program and its space costs milliseconds: only for a template
     * with a successful record of this workload */
    bool own = op_key && any_record(db, op_key, algos[a].tpl->name);
    if (!any_record(db, key, algos[a].tpl->name) && !own) {
      free(op_key);
      continue;
    }
    tried[a] = true;
    if (tsl_workload_instantiate(&algos[a].op_workload, &progs[a]) != TSL_OK ||
        algos[a].tpl->space(progs[a], t, &spaces[a]) != TSL_OK) {
      free(op_key);
      continue;
    }
    ok[a] = true;
    uint64_t h = tsl_space_hash(algos[a].tpl->name, algos[a].tpl->version, algos[a].tpl->op, &spaces[a]);
    const tsl_record *r = NULL, *ro = NULL;
    int tier = tsl_records_best_rank(db, target, key, algos[a].tpl->name, h, &spaces[a], &r);
    int tier_o = own ? tsl_records_best_rank(db, target, op_key, algos[a].tpl->name, h, &spaces[a], &ro) : -1;
    free(op_key);
    if (tier_o >= 0 && (tier < 0 || ranks_before(tier_o, ro, tier, r))) {
      r = ro;
      tier = tier_o;
    }
    if (tier < 0) continue;
    if (!best_rec || ranks_before(tier, r, best_tier, best_rec)) {
      best = a;
      best_rec = r;
      best_tier = tier;
    }
  }
  if (best_rec && tsl_record_is_static(best_rec)) { /* a static pick: only a clear win over the default */
    int pref = preferred(t, w, algos, na);
    const tsl_record *d = pref >= 0 && ok[pref] ? default_estimate(db, best_rec, key, &algos[pref], progs[pref], t, &spaces[pref])
                                                : NULL;
    if (d && d != best_rec && !(tsl_record_cost(best_rec) < (1 - TSL_COST_STATIC_PICK_MARGIN) * tsl_record_cost(d))) {
      best = pref;
      best_rec = d;
    }
  }
  if (best_rec) {
    tsl_schedule *s = NULL;
    if (algos[best].tpl->apply(progs[best], t, &spaces[best], &best_rec->config, &s) == TSL_OK) {
      *program = progs[best];
      *sched = s;
      info_set(info, &algos[best], &spaces[best], &best_rec->config, best_tier % 16 < 8 ? TSL_MATCH_EXACT : TSL_MATCH_FAMILY,
               best_rec, target, key);
      st = TSL_OK;
      goto out;
    }
  }
  /* the default of the family's default algorithm (a conv layer: tsl_conv2d_select's
   * choice), else of the first algorithm that can give one */
  int order[MAX_ALGOS], no = 0, pref = preferred(t, w, algos, na);
  if (pref >= 0) order[no++] = pref;
  for (int a = 0; a < na; a++)
    if (a != pref) order[no++] = a;
  st = TSL_ERR_NOT_FOUND;
  for (int i = 0; i < no; i++) {
    int a = order[i];
    if (!tried[a]) {
      tried[a] = true;
      ok[a] = tsl_workload_instantiate(&algos[a].op_workload, &progs[a]) == TSL_OK &&
              algos[a].tpl->space(progs[a], t, &spaces[a]) == TSL_OK;
    }
    if (!ok[a]) continue;
    tsl_config c;
    st = algos[a].tpl->default_config(progs[a], t, &spaces[a], &c);
    tsl_schedule *s = NULL;
    if (st == TSL_OK) st = algos[a].tpl->apply(progs[a], t, &spaces[a], &c, &s);
    if (st != TSL_OK) continue;
    *program = progs[a];
    *sched = s;
    info_set(info, &algos[a], &spaces[a], &c, TSL_MATCH_NONE, NULL, target, key);
    if (warn) {
      char cs[512];
      fprintf(warn, "tessel: warning: no tuning record for %s on %s; using the default schedule %s (%s)\n", key,
              target, algos[a].tpl->name, tsl_config_str(&spaces[a], &c, cs, sizeof cs));
    }
    break;
  }
  if (st == TSL_ERR_NOT_FOUND) st = tsl_error(TSL_ERR_NOT_FOUND, "dispatch: no template gives a schedule for %s", key);
out:
  if (st == TSL_OK && info) info->only_algo = only_algo;
  free(algos);
  free(spaces);
  free(progs);
  free(key);
  return st;
}

tsl_status tsl_dispatch_schedule(const tsl_records *db, const tsl_target *t, const tsl_workload *w, FILE *warn,
                                 tsl_te_program **program, tsl_schedule **sched, tsl_dispatch_info *info) {
  return dispatch(db, t, w, warn, false, -1, program, sched, info);
}

tsl_status tsl_dispatch_schedule_any(const tsl_records *db, const tsl_target *t, const tsl_workload *w, FILE *warn,
                                     tsl_te_program **program, tsl_schedule **sched, tsl_dispatch_info *info) {
  return dispatch(db, t, w, warn, true, -1, program, sched, info);
}

tsl_status tsl_dispatch_schedule_conv_algo(const tsl_records *db, const tsl_target *t, const tsl_workload *w,
                                           tsl_conv2d_algo algo, FILE *warn, tsl_te_program **program,
                                           tsl_schedule **sched, tsl_dispatch_info *info) {
  if ((int)algo < 0) return tsl_error(TSL_ERR_INVALID, "dispatch: invalid conv algorithm %d", (int)algo);
  return dispatch(db, t, w, warn, true, (int)algo, program, sched, info);
}
