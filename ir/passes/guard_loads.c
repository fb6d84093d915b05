/* Predicates for loads under select conditions (see guard_loads.h). */
#include "ir/passes/guard_loads.h"

#include "ir/analysis.h"
#include "ir/passes/mutate.h"

typedef struct guard_state {
  tsl_var_ranges *ranges; /* enclosing For / Let variables */
  tsl_expr *guard;        /* conjunction of the enclosing select conditions, or NULL */
} guard_state;

static bool in_range(const tsl_expr *ix, int64_t lo, int64_t hi, const tsl_var_ranges *r) {
  tsl_interval iv = tsl_interval_of(ix, r);
  if (iv.empty) return true;
  return iv.has_lo && iv.has_hi && iv.lo >= lo && iv.hi <= hi;
}

static bool provably_in_bounds(const tsl_expr *ld, const tsl_var_ranges *r) {
  const tsl_buffer *b = ld->load.buf;
  if (ld->load.nindex == b->ndim && b->ndim > 1) {
    for (int d = 0; d < b->ndim; d++)
      if (!in_range(ld->load.index[d], 0, b->shape[d] - 1, r)) return false;
    return true;
  }
  int64_t extent = tsl_buffer_numel(b);
  if (b->strides && b->ndim > 0) {
    /* strided storage: the last element sits at sum (shape-1)*stride */
    extent = 1;
    for (int d = 0; d < b->ndim; d++) extent += (b->shape[d] - 1) * b->strides[d];
  }
  return in_range(ld->load.index[0], 0, extent - 1, r);
}

static tsl_expr *with_lanes(tsl_expr *cond, int lanes) {
  return cond->type.lanes == lanes ? cond : cond->type.lanes == 1 ? tsl_broadcast(cond, lanes) : NULL;
}

/* a && b with a scalar side broadcast to the other's lanes (a may be NULL) */
static tsl_expr *guard_and(tsl_expr *a, tsl_expr *b) {
  if (!a) return b;
  if (a->type.lanes == b->type.lanes) return tsl_and(a, b);
  if (a->type.lanes == 1) return tsl_and(tsl_broadcast(a, b->type.lanes), b);
  if (b->type.lanes == 1) return tsl_and(a, tsl_broadcast(b, a->type.lanes));
  return a;
}

static tsl_expr *guard_expr(tsl_mutator *m, tsl_expr *e) {
  guard_state *st = m->ud;
  if (e->kind == TSL_E_SELECT) {
    tsl_expr *saved = st->guard;
    tsl_expr *c = tsl_mutate_expr(m, e->select.cond);
    st->guard = guard_and(saved, c);
    tsl_expr *t = tsl_mutate_expr(m, e->select.t);
    st->guard = guard_and(saved, tsl_not(c));
    tsl_expr *f = tsl_mutate_expr(m, e->select.f);
    st->guard = saved;
    if (c == e->select.cond && t == e->select.t && f == e->select.f) return e;
    return tsl_select(c, t, f);
  }
  if (e->kind == TSL_E_LET) {
    tsl_expr *v = tsl_mutate_expr(m, e->let.value);
    if (v->type.lanes == 1 && tsl_type_is_intlike(v->type))
      tsl_var_ranges_set(st->ranges, e->let.var, tsl_interval_of(v, st->ranges));
    tsl_expr *b = tsl_mutate_expr(m, e->let.body);
    return v == e->let.value && b == e->let.body ? e : tsl_let(e->let.var, v, b);
  }
  if (e->kind == TSL_E_LOAD) {
    tsl_expr *saved = st->guard;
    st->guard = NULL; /* indices are evaluated whatever the select picks */
    tsl_expr *ld = tsl_mutate_expr_children(m, e);
    st->guard = saved;
    if (!saved || provably_in_bounds(ld, st->ranges)) return ld;
    tsl_expr *g = with_lanes(saved, ld->type.lanes);
    if (!g) return ld;
    tsl_expr *p = ld->load.predicate ? tsl_and(ld->load.predicate, g) : g;
    return tsl_load(ld->load.buf, ld->load.nindex, ld->load.index, p);
  }
  return tsl_mutate_expr_children(m, e);
}

static tsl_stmt *guard_stmt(tsl_mutator *m, tsl_stmt *s) {
  guard_state *st = m->ud;
  if (s->kind == TSL_S_FOR) {
    tsl_interval mn = tsl_interval_of(s->loop.min, st->ranges);
    tsl_interval mx = tsl_interval_of(tsl_sub(tsl_add(s->loop.min, s->loop.extent), tsl_int(s->loop.var->type, 1)),
                                      st->ranges);
    tsl_interval r = tsl_interval_everything();
    r.has_lo = mn.has_lo;
    r.lo = mn.lo;
    r.has_hi = mx.has_hi;
    r.hi = mx.hi;
    if (r.has_lo && r.has_hi && r.hi < r.lo) r.empty = true;
    tsl_var_ranges_set(st->ranges, s->loop.var, r);
  } else if (s->kind == TSL_S_LET && s->let.value->type.lanes == 1 && tsl_type_is_intlike(s->let.value->type)) {
    tsl_var_ranges_set(st->ranges, s->let.var, tsl_interval_of(s->let.value, st->ranges));
  }
  return tsl_mutate_stmt_children(m, s);
}

tsl_stmt *tsl_pass_guard_loads(tsl_stmt *s) {
  guard_state st = {tsl_var_ranges_new(), NULL};
  tsl_mutator m = {guard_expr, guard_stmt, &st};
  return tsl_mutate_stmt(&m, s);
}
