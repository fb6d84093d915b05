/* Where stages are computed: compute_inline, compute_root, compute_at, and the checks
 * that keep the attach tree sound after every step (TVM src/te/schedule/schedule_lang.cc
 * and the attach-path rules of bound.cc). */
#include <string.h>

#include "schedule/sched_internal.h"

/* ---- reads in the TE graph ---- */

typedef bool (*load_pred)(const tsl_schedule *s, const tsl_buffer *b, const void *ud);

/* Does any load in e satisfy pred? */
static bool any_load(const tsl_schedule *s, const tsl_expr *e, load_pred pred, const void *ud) {
  if (!e) return false;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return false;
  case TSL_E_NOT: case TSL_E_CAST: return any_load(s, e->un.a, pred, ud);
  case TSL_E_SELECT:
    return any_load(s, e->select.cond, pred, ud) || any_load(s, e->select.t, pred, ud) ||
           any_load(s, e->select.f, pred, ud);
  case TSL_E_BROADCAST: return any_load(s, e->broadcast.value, pred, ud);
  case TSL_E_RAMP: return any_load(s, e->ramp.base, pred, ud) || any_load(s, e->ramp.stride, pred, ud);
  case TSL_E_LOAD:
    if (pred(s, e->load.buf, ud)) return true;
    for (int i = 0; i < e->load.nindex; i++)
      if (any_load(s, e->load.index[i], pred, ud)) return true;
    return any_load(s, e->load.predicate, pred, ud);
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++)
      if (any_load(s, e->call.args[i], pred, ud)) return true;
    return false;
  case TSL_E_LET: return any_load(s, e->let.value, pred, ud) || any_load(s, e->let.body, pred, ud);
  case TSL_E_REDUCE: return any_load(s, e->reduce.source, pred, ud) || any_load(s, e->reduce.condition, pred, ud);
  default: return any_load(s, e->bin.a, pred, ud) || any_load(s, e->bin.b, pred, ud);
  }
}

static int stage_of_buffer(const tsl_schedule *s, const tsl_buffer *b) {
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->op->output->buf == b) return i;
  return -1;
}

static bool reads_through_inline(const tsl_schedule *s, const tsl_buffer *b, const void *ud) {
  if (b == ud) return true;
  int x = stage_of_buffer(s, b);
  return x >= 0 && s->stages[x]->attach == TSL_ATTACH_INLINE && tsl_sched_stage_reads(s, x, ud);
}

bool tsl_sched_stage_reads(const tsl_schedule *s, int si, const tsl_buffer *buf) {
  return any_load(s, s->stages[si]->op->body, reads_through_inline, buf);
}

static bool reads_directly(const tsl_schedule *s, const tsl_buffer *b, const void *ud) {
  (void)s;
  return b == ud;
}

bool tsl_sched_consumes(const tsl_schedule *s, int ci, int pi) {
  const tsl_buffer *pb = s->stages[pi]->op->output->buf;
  if (any_load(s, s->stages[ci]->op->body, reads_directly, pb)) return true;
  /* producers come before consumers, so only stages between pi and ci can link them */
  for (int mi = pi + 1; mi < ci; mi++)
    if (any_load(s, s->stages[ci]->op->body, reads_directly, s->stages[mi]->op->output->buf) &&
        tsl_sched_consumes(s, mi, pi))
      return true;
  return false;
}

bool tsl_sched_iter_is_anchor(const tsl_schedule *s, int si, int iter, const char **what) {
  static _Thread_local char msg[256];
  for (int i = 0; i < s->nstages; i++) {
    const tsl_stage *a = s->stages[i];
    if (a->attach == TSL_ATTACH_AT && a->attach_stage == si && a->attach_iter == iter) {
      snprintf(msg, sizeof msg, "stage %s computed (compute_at)", a->name);
      if (what) *what = msg;
      return true;
    }
  }
  const tsl_stage *st = s->stages[si];
  for (int k = 0; k < st->nprefetch; k++)
    if (st->prefetch[k].iter == iter) {
      if (what) *what = "a prefetch";
      return true;
    }
  return false;
}

/* ---- the primitives ---- */

static bool has_reduction(const tsl_te_op *op) {
  return op->nreduce > 0 || (op->body && op->body->kind == TSL_E_REDUCE);
}

static int attached_to(const tsl_schedule *s, int si) {
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->attach == TSL_ATTACH_AT && s->stages[i]->attach_stage == si) return i;
  return -1;
}

tsl_status tsl_sched_compute_inline(tsl_schedule *s, tsl_stage *st) {
  if (st->is_output)
    return tsl_error(TSL_ERR_SCHEDULE, "compute_inline: stage %s is an output of the program", st->name);
  if (has_reduction(st->op))
    return tsl_error(TSL_ERR_SCHEDULE, "compute_inline: stage %s is a reduction (only injective stages inline)",
                     st->name);
  int a = attached_to(s, tsl_schedule_stage_index(s, st->name));
  if (a >= 0)
    return tsl_error(TSL_ERR_SCHEDULE, "compute_inline: stage %s is computed inside a loop of %s",
                     s->stages[a]->name, st->name);
  st->attach = TSL_ATTACH_INLINE;
  st->attach_stage = st->attach_iter = -1;
  return TSL_OK;
}

tsl_status tsl_sched_compute_root(tsl_schedule *s, tsl_stage *st) {
  (void)s;
  st->attach = TSL_ATTACH_ROOT;
  st->attach_stage = st->attach_iter = -1;
  return TSL_OK;
}

tsl_status tsl_sched_compute_at(tsl_schedule *s, tsl_stage *st, const tsl_step *step) {
  const char *tname = step->args[1].name;
  int ti = tsl_schedule_stage_index(s, tname);
  if (ti < 0) return tsl_error(TSL_ERR_INVALID, "compute_at: no stage named %s", tname);
  tsl_stage *t = s->stages[ti];
  int si = tsl_schedule_stage_index(s, st->name);
  if (st->is_output)
    return tsl_error(TSL_ERR_SCHEDULE, "compute_at: stage %s is an output of the program (outputs are computed at the root)",
                     st->name);
  if (ti == si) return tsl_error(TSL_ERR_SCHEDULE, "compute_at: stage %s cannot be computed inside itself", st->name);
  int iter = -1;
  tsl_status rc = tsl_sched_leaf_arg(t, step, 2, "compute_at", &iter);
  if (rc != TSL_OK) return rc;
  if (t->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "compute_at: stage %s is inlined and has no loop %s to compute %s in", t->name,
                     t->iters[iter].name, st->name);
  if (ti < si || !tsl_sched_consumes(s, ti, si))
    return tsl_error(TSL_ERR_SCHEDULE,
                     "compute_at: stage %s does not consume stage %s (directly or through other stages), so "
                     "its axis %s cannot hold it",
                     t->name, st->name, t->iters[iter].name);
  st->attach = TSL_ATTACH_AT;
  st->attach_stage = ti;
  st->attach_iter = iter;
  return TSL_OK;
}

/* ---- whole-schedule checks ---- */

/* The leaf position of stage ti inside which stage di is computed: ti's loop nest
 * body (nleaf) when di == ti, the position of the leaf its attach chain enters ti at,
 * or -1 when di is not computed inside ti. */
static int position_in(const tsl_schedule *s, int di, int ti) {
  if (di == ti) return s->stages[ti]->nleaf;
  for (int cur = di, guard = 0; s->stages[cur]->attach == TSL_ATTACH_AT && guard <= s->nstages; guard++) {
    const tsl_stage *c = s->stages[cur];
    if (c->attach_stage == ti) return tsl_sched_leaf_position(s->stages[ti], c->attach_iter);
    cur = c->attach_stage;
  }
  return -1;
}

static tsl_status check_attach(const tsl_schedule *s, int pi, const char *prim) {
  const tsl_stage *p = s->stages[pi];
  if (p->attach_stage < 0 || p->attach_stage >= s->nstages)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is computed at a stage that does not exist", prim, p->name);
  int ti = p->attach_stage;
  const tsl_stage *t = s->stages[ti];
  if (t->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is computed at axis %s of stage %s, which is inlined", prim,
                     p->name, t->iters[p->attach_iter].name, t->name);
  int ppos = tsl_sched_leaf_position(t, p->attach_iter);
  if (ppos < 0)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is computed at axis %s of stage %s, which is not a leaf", prim,
                     p->name, t->iters[p->attach_iter].name, t->name);
  if (ti < pi || !tsl_sched_consumes(s, ti, pi))
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is computed at stage %s, which does not consume it", prim,
                     p->name, t->name);
  for (int di = pi + 1; di < s->nstages; di++) {
    const tsl_stage *d = s->stages[di];
    if (d->attach == TSL_ATTACH_INLINE || !tsl_sched_stage_reads(s, di, p->op->output->buf)) continue;
    int dpos = position_in(s, di, ti);
    if (dpos < ppos)
      return tsl_error(TSL_ERR_SCHEDULE,
                       "%s: axis %s of stage %s does not enclose stage %s, which reads stage %s (computed at that "
                       "axis): %s is computed %s",
                       prim, t->iters[p->attach_iter].name, t->name, d->name, p->name, d->name,
                       dpos < 0 ? "outside that stage's loops" : "in an outer loop");
  }
  return TSL_OK;
}

/* Vectorized loops: one per stage, and nothing inside it that cannot run on lanes. */
static tsl_status check_vectorized(const tsl_schedule *s, int si, const char *prim) {
  const tsl_stage *st = s->stages[si];
  if (st->attach == TSL_ATTACH_INLINE) return TSL_OK;
  int v = -1;
  for (int k = 0; k < st->nleaf; k++) {
    const tsl_stage_iter *it = &st->iters[st->leaf[k]];
    if (it->annotation != TSL_FOR_VECTORIZED) continue;
    if (v >= 0)
      return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s would vectorize two axes, %s and %s (vectorize only one)", prim,
                       st->name, st->iters[st->leaf[v]].name, it->name);
    v = k;
  }
  if (v < 0) return TSL_OK;
  const char *vname = st->iters[st->leaf[v]].name;
  for (int k = v + 1; k < st->nleaf; k++)
    if (st->iters[st->leaf[k]].annotation == TSL_FOR_PARALLEL)
      return tsl_error(TSL_ERR_SCHEDULE, "%s: parallel axis %s of stage %s would be inside its vectorized axis %s",
                       prim, st->iters[st->leaf[k]].name, st->name, vname);
  for (int ai = 0; ai < s->nstages; ai++) {
    const tsl_stage *a = s->stages[ai];
    if (a->attach != TSL_ATTACH_AT || a->attach_stage != si) continue;
    if (tsl_sched_leaf_position(st, a->attach_iter) >= v)
      return tsl_error(TSL_ERR_SCHEDULE,
                       "%s: stage %s would be computed at axis %s of stage %s, inside its vectorized axis %s (a "
                       "loop nest with its own buffer cannot run on vector lanes)",
                       prim, a->name, st->iters[a->attach_iter].name, st->name, vname);
  }
  for (int k = 0; k < st->nprefetch; k++)
    if (tsl_sched_leaf_position(st, st->prefetch[k].iter) >= v)
      return tsl_error(TSL_ERR_SCHEDULE, "%s: prefetch at axis %s of stage %s would be inside its vectorized axis %s",
                       prim, st->iters[st->prefetch[k].iter].name, st->name, vname);
  return TSL_OK;
}

tsl_status tsl_sched_validate(const tsl_schedule *s, const char *prim) {
  for (int i = 0; i < s->nstages; i++) {
    tsl_status rc = s->stages[i]->attach == TSL_ATTACH_AT ? check_attach(s, i, prim) : TSL_OK;
    if (rc == TSL_OK) rc = check_vectorized(s, i, prim);
    if (rc != TSL_OK) return rc;
    const tsl_stage *st = s->stages[i];
    for (int k = 0; k < st->nprefetch; k++) {
      const tsl_stage_prefetch *pf = &st->prefetch[k];
      if (tsl_sched_leaf_position(st, pf->iter) < 0)
        return tsl_error(TSL_ERR_SCHEDULE, "%s: prefetch at axis %s of stage %s, which is not a leaf", prim,
                         st->iters[pf->iter].name, st->name);
      /* the prefetched tensor must stay a buffer the stage loads (not inlined away, not
       * replaced by a cache) */
      int ti = stage_of_buffer(s, pf->tensor);
      if (ti >= 0 && s->stages[ti]->attach == TSL_ATTACH_INLINE)
        return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s prefetches tensor %s, which is inlined (no buffer to prefetch)",
                         prim, st->name, pf->tensor->name);
      if (!tsl_sched_stage_reads(s, i, pf->tensor))
        return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s prefetches tensor %s, which it no longer reads", prim, st->name,
                         pf->tensor->name);
    }
  }
  return TSL_OK;
}
