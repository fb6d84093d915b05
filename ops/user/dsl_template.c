/* The schedule block of a DSL op as a template (user_template.h, docs/dsl.md section 11):
 * its knobs are the config space, its steps replayed with a config's values are the
 * schedule. Errors name the knob's or step's line and column in the op's file. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/sched_block.h"
#include "ops/registry.h"
#include "ops/user/user_template.h"
#include "schedule/lower.h"
#include "target/target.h"

enum { MAX_DSL_TEMPLATES = 32 };

typedef struct dsl_entry {
  tsl_template tpl;
  char name[96];
  const tsl_dsl_op *def;
} dsl_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dsl_entry *entries[MAX_DSL_TEMPLATES];
static int nentries;

static const dsl_entry *entry_of(const char *op) {
  const dsl_entry *e = NULL;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nentries && !e; i++)
    if (strcmp(tsl_dsl_op_name(entries[i]->def), op) == 0) e = entries[i];
  pthread_mutex_unlock(&lock);
  return e;
}

static tsl_status no_entry(const tsl_te_program *p) {
  return tsl_error(TSL_ERR_INVALID, "DSL template: no schedule block registered for op %s", p->name);
}

/* The extent of root axis `axis` of `stage` ("S.local": S's) in p's initial schedule. */
static tsl_status axis_extent(const tsl_dsl_op *def, const tsl_schedule *s0, const tsl_dsl_knob *k, int64_t *ext) {
  char base[128];
  const char *dot = strchr(k->stage, '.');
  snprintf(base, sizeof base, "%.*s", dot ? (int)(dot - k->stage) : (int)strlen(k->stage), k->stage);
  const tsl_stage *st = tsl_schedule_stage(s0, base);
  int it = st ? tsl_stage_iter_index(st, k->axis) : -1;
  if (it < 0 || it >= st->nroot)
    return tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col,
                            "knob %s: stage %s has no loop %s here (is the stage dropped or inlined?)", k->name, base,
                            k->axis);
  *ext = st->iters[it].extent;
  return TSL_OK;
}

/* The candidates of a split knob for an axis of extent ext. */
static tsl_status split_candidates(const tsl_dsl_op *def, const tsl_dsl_knob *k, int64_t ext, int64_t *vals, int *n) {
  int64_t max = k->max > 0 && k->max < ext ? k->max : ext;
  *n = 0;
  if (k->nvalues > 0) {
    for (int i = 0; i < k->nvalues; i++) {
      int64_t v = k->values[i];
      if (v > ext)
        return tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col,
                                "knob %s: split factor %lld exceeds the extent %lld of %s.%s", k->name, (long long)v,
                                (long long)ext, k->stage, k->axis);
      if (k->divide && ext % v != 0)
        return tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col,
                                "knob %s: split factor %lld does not divide the extent %lld of %s.%s (write divide = "
                                "false to allow a partial last tile)",
                                k->name, (long long)v, (long long)ext, k->stage, k->axis);
      if (v <= max) vals[(*n)++] = v;
    }
  } else {
    for (int64_t v = 1; v <= max && *n <= TSL_MAX_KNOB_VALUES; v++)
      if (ext % v == 0) {
        if (*n < TSL_MAX_KNOB_VALUES) vals[*n] = v;
        (*n)++;
      }
  }
  if (*n == 0)
    return tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col, "knob %s: no candidate is <= max = %lld", k->name,
                            (long long)max);
  if (*n > TSL_MAX_KNOB_VALUES)
    return tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col,
                            "knob %s: the extent %lld of %s.%s has more than %d divisors: bound them with max = N or "
                            "give a list",
                            k->name, (long long)ext, k->stage, k->axis, TSL_MAX_KNOB_VALUES);
  return TSL_OK;
}

static const tsl_knob_kind knob_kinds[] = {TSL_KNOB_SPLIT, TSL_KNOB_REORDER, TSL_KNOB_ANNOTATE, TSL_KNOB_OTHER};

static tsl_status dsl_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out);

static tsl_status build_space(const tsl_dsl_op *def, const tsl_te_program *p, tsl_config_space *out) {
  const tsl_dsl_schedule *b = tsl_dsl_op_schedule(def);
  memset(out, 0, sizeof *out);
  tsl_schedule *s0 = NULL;
  tsl_status st = tsl_schedule_new(p, &s0);
  for (int i = 0; st == TSL_OK && i < b->nknobs; i++) {
    const tsl_dsl_knob *k = &b->knobs[i];
    int64_t vals[TSL_MAX_KNOB_VALUES], ext = 0;
    int n = 0;
    if (k->kind == TSL_DSL_KNOB_SPLIT) {
      st = axis_extent(def, s0, k, &ext);
      if (st == TSL_OK) st = split_candidates(def, k, ext, vals, &n);
    } else {
      n = k->kind == TSL_DSL_KNOB_REORDER ? k->norders : k->kind == TSL_DSL_KNOB_ANNOTATE ? k->nannots + 1 : k->nvalues;
      if (n > TSL_MAX_KNOB_VALUES)
        st = tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col, "knob %s: %d candidates (at most %d)", k->name, n,
                              TSL_MAX_KNOB_VALUES);
      for (int j = 0; st == TSL_OK && j < n; j++) vals[j] = k->kind == TSL_DSL_KNOB_LIST ? k->values[j] : j;
    }
    if (st == TSL_OK && tsl_space_add_knob(out, k->name, knob_kinds[k->kind], n, vals) != TSL_OK)
      st = tsl_dsl_error_at(def, TSL_ERR_INVALID, k->line, k->col, "knob %s: %s", k->name, tsl_last_error());
  }
  tsl_schedule_free(s0);
  return st;
}

static tsl_status dsl_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                              tsl_config *out) {
  (void)t;
  const dsl_entry *e = entry_of(p->name);
  if (!e) return no_entry(p);
  const tsl_dsl_schedule *b = tsl_dsl_op_schedule(e->def);
  if (s->nknobs != b->nknobs) return tsl_error(TSL_ERR_INVALID, "DSL template %s: not its space", e->name);
  out->nknobs = s->nknobs;
  for (int i = 0; i < b->nknobs; i++) {
    const tsl_dsl_knob *k = &b->knobs[i];
    const tsl_knob *sk = &s->knobs[i];
    out->values[i] = sk->values[0]; /* the smallest: split 1 (or the least listed), reorder 0, annotate off */
    for (int j = 0; j < k->nvalues && k->kind != TSL_DSL_KNOB_REORDER; j++) {
      bool candidate = false; /* the first written that is a candidate */
      for (int v = 0; v < sk->nvalues; v++) candidate |= sk->values[v] == k->values[j];
      if (candidate) {
        out->values[i] = k->values[j];
        break;
      }
    }
  }
  return TSL_OK;
}

static tsl_step_kind step_kind(const char *prim, bool nparts) {
  if (strcmp(prim, "split") == 0 && nparts) return TSL_STEP_SPLIT_NPARTS;
  for (int k = 0; k < TSL_STEP_COUNT_; k++)
    if (strcmp(tsl_step_kind_name((tsl_step_kind)k), prim) == 0 && k != TSL_STEP_SPLIT_NPARTS) return (tsl_step_kind)k;
  return TSL_STEP_COUNT_;
}

/* Step bs of the block with config values vals, applied to sch (skipped when its 'if'
 * knob is 0 or its annotate knob chooses none). */
static tsl_status apply_step(const tsl_dsl_op *def, const tsl_dsl_sched_step *bs, const int64_t *vals,
                             tsl_schedule *sch, const char *cfg) {
  const tsl_dsl_schedule *b = tsl_dsl_op_schedule(def);
  if (bs->cond_knob >= 0 && vals[bs->cond_knob] == 0) return TSL_OK;
  tsl_step_arg args[64];
  int n = 0;
  bool nparts = false;
  const char *prim = bs->primitive;
  for (int i = 0; i < bs->nargs && n < 64; i++) {
    const tsl_dsl_sched_arg *a = &bs->args[i];
    nparts |= a->nparts;
    if (a->kind == TSL_DSL_ARG_NAME) {
      args[n++] = (tsl_step_arg){false, a->name, 0};
    } else if (a->kind == TSL_DSL_ARG_INT) {
      args[n++] = (tsl_step_arg){true, NULL, a->value};
    } else {
      const tsl_dsl_knob *k = &b->knobs[a->knob];
      int64_t v = vals[a->knob];
      if (k->kind == TSL_DSL_KNOB_REORDER) {
        for (int j = 0; j < k->order_len && n < 64; j++)
          args[n++] = (tsl_step_arg){false, k->orders[(size_t)v * (size_t)k->order_len + (size_t)j], 0};
      } else if (k->kind == TSL_DSL_KNOB_ANNOTATE) {
        if (v == 0) return TSL_OK; /* annotate(stage, axis, knob) with none chosen */
        prim = k->annots[v - 1];
      } else {
        args[n++] = (tsl_step_arg){true, NULL, v};
      }
    }
  }
  tsl_step step = {step_kind(prim, nparts), n, args};
  tsl_status st = step.kind == TSL_STEP_COUNT_ ? tsl_error(TSL_ERR_INVALID, "unknown primitive %s", prim)
                                               : tsl_schedule_apply(sch, &step);
  if (st == TSL_OK) return TSL_OK;
  char msg[2048], *text = step.kind == TSL_STEP_COUNT_ ? NULL : tsl_step_to_string(&step);
  snprintf(msg, sizeof msg, "%s", tsl_last_error());
  st = tsl_dsl_error_at(def, st, bs->line, bs->col, "step %s does not apply (config %s): %s", text ? text : prim, cfg,
                        msg);
  free(text);
  return st;
}

static tsl_status dsl_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                            const tsl_config *c, tsl_schedule **out) {
  (void)t;
  *out = NULL;
  const dsl_entry *e = entry_of(p->name);
  if (!e) return no_entry(p);
  const tsl_dsl_schedule *b = tsl_dsl_op_schedule(e->def);
  tsl_status st = tsl_config_check(s, c);
  if (st == TSL_OK && c->nknobs != b->nknobs)
    st = tsl_error(TSL_ERR_INVALID, "DSL template %s: not its space", e->name);
  tsl_schedule *sch = NULL;
  if (st == TSL_OK) st = tsl_schedule_create(p, &sch);
  char cfg[512];
  tsl_config_str(s, c, cfg, sizeof cfg);
  for (int i = 0; st == TSL_OK && i < b->nsteps; i++) st = apply_step(e->def, &b->steps[i], c->values, sch, cfg);
  if (st != TSL_OK) {
    tsl_schedule_free(sch);
    return st;
  }
  *out = sch;
  return TSL_OK;
}

tsl_status tsl_user_schedule_lowers(const tsl_schedule *s, const tsl_target *t) {
  tsl_lower_options o = tsl_lower_options_default();
  if (t) o.vector_bits = t->vector_bits;
  o.quiet = true; /* a check: TSL_DEBUG=lower traces the kernels that are built */
  tsl_func *f = NULL;
  tsl_status st = tsl_lower_with(s, "check", &o, &f); /* (the IR lives in the current arena) */
  tsl_target narrowed; /* a vector_width step narrower than t's: one t offers */
  if (st == TSL_OK && t && f->vector_bits) st = tsl_target_with_vector_bits(t, f->vector_bits, &narrowed);
  return st;
}

/* The default config c applies but does not lower for t (st, its message set): the error
 * placed at the step after the last prefix of the block that lowers (an unroll of too
 * many copies, a vectorized axis of too many lanes; not the first prefix that fails: a
 * later step may mend it), or unplaced when the program fails unscheduled already. */
static tsl_status locate_lowering_error(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *space,
                                        const tsl_config *c, const dsl_entry *e, tsl_status st) {
  const tsl_dsl_schedule *b = tsl_dsl_op_schedule(e->def);
  char whole[4096], cfg[512];
  snprintf(whole, sizeof whole, "%s", tsl_last_error());
  tsl_config_str(space, c, cfg, sizeof cfg);
  tsl_schedule *sch = NULL;
  if (tsl_schedule_create(p, &sch) != TSL_OK || tsl_user_schedule_lowers(sch, t) != TSL_OK) {
    tsl_schedule_free(sch);
    return tsl_error(st, "%s", whole);
  }
  int blame = -1; /* the step after the last prefix that lowers */
  bool passing = true;
  for (int i = 0; i < b->nsteps; i++) {
    if (apply_step(e->def, &b->steps[i], c->values, sch, cfg) != TSL_OK) break;
    bool ok = tsl_user_schedule_lowers(sch, t) == TSL_OK;
    tsl_clear_error();
    if (!ok && passing) blame = i;
    passing = ok;
  }
  tsl_schedule_free(sch);
  if (blame < 0 || passing) return tsl_error(st, "%s", whole);
  return tsl_dsl_error_at(e->def, st, b->steps[blame].line, b->steps[blame].col,
                          "the default config%s%s%s fails to lower after this step: %s", cfg[0] ? " (" : "", cfg,
                          cfg[0] ? ")" : "", whole);
}

/* The space, refused when its default config does not apply (the error is the step's) or
 * does not lower for t (the error at the step after which it fails). */
static tsl_status dsl_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  const dsl_entry *e = entry_of(p->name);
  if (!e) return no_entry(p);
  tsl_status st = build_space(e->def, p, out);
  tsl_config c;
  tsl_schedule *s = NULL;
  if (st == TSL_OK) st = dsl_default(p, t, out, &c);
  if (st == TSL_OK) st = dsl_apply(p, t, out, &c, &s);
  if (st == TSL_OK && (st = tsl_user_schedule_lowers(s, t)) != TSL_OK) st = locate_lowering_error(p, t, out, &c, e, st);
  tsl_schedule_free(s);
  return st;
}

tsl_status tsl_user_dsl_template(const tsl_dsl_op *def, const tsl_template **out) {
  if (out) *out = NULL;
  if (!def || !out) return tsl_error(TSL_ERR_INVALID, "DSL template: NULL argument");
  const char *op = tsl_dsl_op_name(def);
  if (!tsl_dsl_op_schedule(def)) return tsl_error(TSL_ERR_INVALID, "DSL template: op %s has no schedule block", op);
  const tsl_op_info *info = NULL;
  if (tsl_op_lookup(op, &info) != TSL_OK || info->def != def)
    return tsl_error(TSL_ERR_INVALID, "DSL template: op %s is not registered (tsl_op_register_user first)", op);
  const dsl_entry *old = entry_of(op);
  if (old) {
    if (old->def != def) return tsl_error(TSL_ERR_INVALID, "DSL template: another op %s has a template already", op);
    *out = &old->tpl;
    return TSL_OK;
  }
  dsl_entry *e = calloc(1, sizeof *e);
  if (!e) return tsl_error(TSL_ERR_NOMEM, "DSL template: out of memory");
  e->def = def;
  snprintf(e->name, sizeof e->name, "%s%s", op, ".dsl");
  e->tpl = (tsl_template){.name = e->name,
                          .op = info->name,
                          .description = "the schedule block of a DSL op (docs/dsl.md section 11)",
                          .version = tsl_user_template_version(tsl_dsl_op_text(def)),
                          .space = dsl_space,
                          .default_config = dsl_default,
                          .apply = dsl_apply};
  tsl_status st = TSL_OK;
  pthread_mutex_lock(&lock);
  if (nentries >= MAX_DSL_TEMPLATES) st = tsl_error(TSL_ERR_INVALID, "DSL template: more than %d", MAX_DSL_TEMPLATES);
  else entries[nentries++] = e;
  pthread_mutex_unlock(&lock);
  if (st != TSL_OK) {
    free(e);
    return st;
  }
  if ((st = tsl_template_register(&e->tpl)) != TSL_OK) return st; /* e stays: entries[] holds it */
  *out = &e->tpl;
  return TSL_OK;
}
