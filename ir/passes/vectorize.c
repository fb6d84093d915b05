/* Vectorized loops -> vector lanes (see vectorize.h). */
#include "ir/passes/vectorize.h"

#include "ir/analysis.h"
#include "ir/passes/mutate.h"

typedef struct vec_state {
  tsl_var_ranges *ranges; /* every enclosing loop / let variable, for in-bounds proofs */
  tsl_status rc;
  /* while vectorizing one loop: */
  int lanes;
  tsl_expr *lane_var;    /* the vectorized loop's (scalar) variable */
  int nmap, capmap;
  tsl_expr **from, **to; /* scalar variable -> its vector value */
  tsl_expr *mask;        /* lanes that run the current statement (bool x lanes) or NULL */
  bool failed;           /* the loop cannot run on lanes */
  const char *why;       /* ... because of this */
} vec_state;

static void fail(vec_state *st, const char *why) {
  if (!st->failed) st->why = why;
  st->failed = true;
}

static void set_range(vec_state *st, tsl_expr *var, tsl_expr *min, tsl_expr *extent) {
  tsl_interval lo = tsl_interval_of(min, st->ranges);
  tsl_interval hi = tsl_interval_of(tsl_sub(tsl_add(min, extent), tsl_int(min->type, 1)), st->ranges);
  tsl_interval r = tsl_interval_everything();
  r.has_lo = lo.has_lo;
  r.lo = lo.lo;
  r.has_hi = hi.has_hi;
  r.hi = hi.hi;
  if (r.has_lo && r.has_hi && r.hi < r.lo) r.empty = true;
  tsl_var_ranges_set(st->ranges, var, r);
}

/* ---- ranges known under an if ---- */

typedef struct range_undo {
  int n;
  const tsl_expr *var[8];
  tsl_interval old[8];
} range_undo;

/* Tightens the range of v to [lo, hi] (either side optional), remembering the old one. */
static void tighten(vec_state *st, range_undo *u, const tsl_expr *v, bool has_lo, int64_t lo, bool has_hi, int64_t hi) {
  tsl_interval r;
  if (!tsl_var_ranges_get(st->ranges, v, &r) || u->n == 8) return;
  u->var[u->n] = v;
  u->old[u->n] = r;
  u->n++;
  if (has_lo && (!r.has_lo || lo > r.lo)) r.lo = lo, r.has_lo = true;
  if (has_hi && (!r.has_hi || hi < r.hi)) r.hi = hi, r.has_hi = true;
  if (r.has_lo && r.has_hi && r.hi < r.lo) r.empty = true;
  tsl_var_ranges_set(st->ranges, v, r);
}

/* What `cond` (scalar, true inside the then-branch) says about single variables: the
 * conjuncts of the form var < e, var <= e, var > e, var >= e (either side). */
static void refine(vec_state *st, range_undo *u, const tsl_expr *cond) {
  if (cond->type.lanes != 1) return;
  /* the simplifier brings linear tests to var-versus-bound form ((v*4 + 1) < 13 -> v < 3) */
  cond = tsl_simplify((tsl_expr *)cond, st->ranges);
  if (cond->kind == TSL_E_AND) {
    refine(st, u, cond->bin.a);
    refine(st, u, cond->bin.b);
    return;
  }
  tsl_expr_kind k = cond->kind;
  if (k != TSL_E_LT && k != TSL_E_LE && k != TSL_E_GT && k != TSL_E_GE) return;
  const tsl_expr *a = cond->bin.a, *b = cond->bin.b;
  if (a->kind != TSL_E_VAR) {
    const tsl_expr *t = a; /* e < v is v > e */
    a = b;
    b = t;
    k = k == TSL_E_LT ? TSL_E_GT : k == TSL_E_LE ? TSL_E_GE : k == TSL_E_GT ? TSL_E_LT : TSL_E_LE;
  }
  if (a->kind != TSL_E_VAR || !tsl_type_is_intlike(a->type)) return;
  tsl_interval e = tsl_interval_of(b, st->ranges);
  if (e.empty) return;
  if (k == TSL_E_LT && e.has_hi) tighten(st, u, a, false, 0, true, e.hi - 1);
  if (k == TSL_E_LE && e.has_hi) tighten(st, u, a, false, 0, true, e.hi);
  if (k == TSL_E_GT && e.has_lo) tighten(st, u, a, true, e.lo + 1, false, 0);
  if (k == TSL_E_GE && e.has_lo) tighten(st, u, a, true, e.lo, false, 0);
}

static void undo_ranges(vec_state *st, range_undo *u) {
  for (int i = u->n - 1; i >= 0; i--) tsl_var_ranges_set(st->ranges, u->var[i], u->old[i]);
  u->n = 0;
}

static void map_var(vec_state *st, tsl_expr *from, tsl_expr *to) {
  if (st->nmap == st->capmap) {
    int cap = st->capmap ? st->capmap * 2 : 8;
    tsl_expr **f = tsl_alloc(sizeof(tsl_expr *) * (size_t)cap), **t = tsl_alloc(sizeof(tsl_expr *) * (size_t)cap);
    for (int i = 0; i < st->nmap; i++) {
      f[i] = st->from[i];
      t[i] = st->to[i];
    }
    st->from = f;
    st->to = t;
    st->capmap = cap;
  }
  st->from[st->nmap] = from;
  st->to[st->nmap++] = to;
}

static tsl_expr *widen(const vec_state *st, tsl_expr *e) {
  return e->type.lanes == 1 ? tsl_broadcast(e, st->lanes) : e;
}

/* The scalar a uniform expression stands for (a scalar or a broadcast), else NULL. */
static tsl_expr *uniform(tsl_expr *e) {
  return e->type.lanes == 1 ? e : e->kind == TSL_E_BROADCAST ? e->broadcast.value : NULL;
}

static bool in_bounds(const vec_state *st, const tsl_buffer *b, int nindex, tsl_expr *const *index) {
  if (nindex == b->ndim && b->ndim > 1) {
    for (int d = 0; d < nindex; d++) {
      tsl_interval iv = tsl_interval_of(index[d], st->ranges);
      if (!iv.empty && !(iv.has_lo && iv.has_hi && iv.lo >= 0 && iv.hi < b->shape[d])) return false;
    }
    return true;
  }
  int64_t extent = tsl_buffer_numel(b);
  if (b->strides && b->ndim > 0) {
    extent = 1;
    for (int d = 0; d < b->ndim; d++) extent += (b->shape[d] - 1) * b->strides[d];
  }
  tsl_interval iv = tsl_interval_of(index[0], st->ranges);
  return iv.empty || (iv.has_lo && iv.has_hi && iv.lo >= 0 && iv.hi < extent);
}

/* Affine rules keep index arithmetic on ramps (dense accesses) instead of lane-wise
 * vectors: ramp(b, s) + u = ramp(b + u, s), ramp(b, s) * u = ramp(b * u, s * u), ... */
static tsl_expr *vec_arith(vec_state *st, tsl_expr_kind k, tsl_expr *a, tsl_expr *b) {
  tsl_expr *ua = uniform(a), *ub = uniform(b);
  if (ua && ub) {
    tsl_expr *r = tsl_binary(k, ua, ub);
    return a->type.lanes == 1 && b->type.lanes == 1 ? r : tsl_broadcast(r, st->lanes);
  }
  if (tsl_type_is_intlike(a->type)) {
    bool ra = a->kind == TSL_E_RAMP, rb = b->kind == TSL_E_RAMP;
    if (k == TSL_E_ADD || k == TSL_E_SUB) {
      if (ra && ub) return tsl_ramp(tsl_binary(k, a->ramp.base, ub), a->ramp.stride, st->lanes);
      if (ra && rb)
        return tsl_ramp(tsl_binary(k, a->ramp.base, b->ramp.base), tsl_binary(k, a->ramp.stride, b->ramp.stride),
                        st->lanes);
      if (ua && rb) {
        tsl_expr *stride = k == TSL_E_ADD ? b->ramp.stride : tsl_sub(tsl_int(b->ramp.stride->type, 0), b->ramp.stride);
        return tsl_ramp(tsl_binary(k, ua, b->ramp.base), stride, st->lanes);
      }
    }
    if (k == TSL_E_MUL) {
      if (ra && ub) return tsl_ramp(tsl_mul(a->ramp.base, ub), tsl_mul(a->ramp.stride, ub), st->lanes);
      if (ua && rb) return tsl_ramp(tsl_mul(ua, b->ramp.base), tsl_mul(ua, b->ramp.stride), st->lanes);
    }
  }
  return tsl_binary(k, widen(st, a), widen(st, b));
}

static tsl_expr *vec_expr(tsl_mutator *m, tsl_expr *e) {
  vec_state *st = m->ud;
  if (st->failed) return e;
  switch (e->kind) {
  case TSL_E_VAR:
    for (int i = st->nmap - 1; i >= 0; i--)
      if (st->from[i] == e) return st->to[i];
    return e;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN:
  case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR: {
    tsl_expr *a = tsl_mutate_expr(m, e->bin.a), *b = tsl_mutate_expr(m, e->bin.b);
    if (st->failed) return e;
    if (a == e->bin.a && b == e->bin.b) return e;
    return vec_arith(st, e->kind, a, b);
  }
  case TSL_E_SELECT: {
    tsl_expr *c = tsl_mutate_expr(m, e->select.cond);
    tsl_expr *t = tsl_mutate_expr(m, e->select.t), *f = tsl_mutate_expr(m, e->select.f);
    if (st->failed) return e;
    if (c == e->select.cond && t == e->select.t && f == e->select.f) return e;
    if (c->type.lanes == 1 && t->type.lanes == 1 && f->type.lanes == 1) return tsl_select(c, t, f);
    return tsl_select(c, widen(st, t), widen(st, f));
  }
  case TSL_E_BROADCAST:
  case TSL_E_RAMP:
  case TSL_E_REDUCE: {
    /* already-vector nodes (or TE leftovers) that the lanes would reach: give up */
    tsl_expr *r = tsl_mutate_expr_children(m, e);
    if (r != e) fail(st, "a vector or reduction expression inside depends on the lanes");
    return e;
  }
  case TSL_E_LOAD: {
    int n = e->load.nindex;
    tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)n);
    bool vector = false;
    for (int i = 0; i < n; i++) {
      idx[i] = tsl_mutate_expr(m, e->load.index[i]);
      vector = vector || idx[i]->type.lanes > 1;
    }
    tsl_expr *p = tsl_mutate_expr(m, e->load.predicate);
    if (st->failed) return e;
    vector = vector || (p && p->type.lanes > 1);
    if (!vector && st->mask && !in_bounds(st, e->load.buf, n, idx)) vector = true;
    if (!vector) {
      bool same = p == e->load.predicate;
      for (int i = 0; i < n; i++) same = same && idx[i] == e->load.index[i];
      return same ? e : tsl_load(e->load.buf, n, idx, p);
    }
    for (int i = 0; i < n; i++) idx[i] = widen(st, idx[i]);
    if (p) p = widen(st, p);
    if (st->mask && !in_bounds(st, e->load.buf, n, idx)) p = p ? tsl_and(p, st->mask) : st->mask;
    return tsl_load(e->load.buf, n, idx, p);
  }
  case TSL_E_CALL: {
    tsl_expr *r = tsl_mutate_expr_children(m, e);
    if (st->failed || r == e) return e;
    bool vector = false;
    for (int i = 0; i < r->call.nargs; i++) vector = vector || r->call.args[i]->type.lanes > 1;
    if (!vector) return r;
    tsl_intrinsic op = e->call.op;
    if (op == TSL_CALL_PREFETCH || op == TSL_CALL_REDUCE_ADD || op == TSL_CALL_REDUCE_MAX ||
        op == TSL_CALL_REDUCE_MIN || e->type.lanes > 1) {
      fail(st, "an impure or horizontal call uses the lanes");
      return e;
    }
    tsl_expr **args = tsl_alloc(sizeof(tsl_expr *) * (size_t)(r->call.nargs + 1));
    for (int i = 0; i < r->call.nargs; i++) args[i] = widen(st, r->call.args[i]);
    return tsl_call(op, tsl_type_with_lanes(e->type, st->lanes), r->call.nargs, args);
  }
  case TSL_E_LET: {
    tsl_expr *v = tsl_mutate_expr(m, e->let.value);
    if (st->failed) return e;
    tsl_expr *var = e->let.var;
    if (v->type.lanes > 1) {
      var = tsl_var(e->let.var->var.name, v->type);
      map_var(st, e->let.var, var);
    } else if (v->type.lanes == 1 && tsl_type_is_intlike(v->type)) {
      tsl_var_ranges_set(st->ranges, var, tsl_interval_of(v, st->ranges));
    }
    tsl_expr *b = tsl_mutate_expr(m, e->let.body);
    if (st->failed) return e;
    return var == e->let.var && v == e->let.value && b == e->let.body ? e : tsl_let(var, v, b);
  }
  default:
    return tsl_mutate_expr_children(m, e);
  }
}

static tsl_stmt *vec_stmt(tsl_mutator *m, tsl_stmt *s) {
  vec_state *st = m->ud;
  if (st->failed) return s;
  switch (s->kind) {
  case TSL_S_STORE: {
    int n = s->store.nindex;
    tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)n);
    bool vector = false;
    for (int i = 0; i < n; i++) {
      idx[i] = tsl_mutate_expr(m, s->store.index[i]);
      vector = vector || idx[i]->type.lanes > 1;
    }
    tsl_expr *v = tsl_mutate_expr(m, s->store.value), *p = tsl_mutate_expr(m, s->store.predicate);
    if (st->failed) return s;
    if (!vector) {
      /* one address for every lane: fine only when every lane stores the same value
       * unconditionally (then the last lane's store is the same as any other's) */
      if (v->type.lanes > 1 || (p && p->type.lanes > 1) || st->mask) {
        fail(st, "a store writes one address from every lane");
        return s;
      }
      return tsl_store(s->store.buf, n, idx, v, p);
    }
    for (int i = 0; i < n; i++) idx[i] = widen(st, idx[i]);
    if (p) p = widen(st, p);
    if (st->mask) p = p ? tsl_and(p, st->mask) : st->mask;
    return tsl_store(s->store.buf, n, idx, widen(st, v), p);
  }
  case TSL_S_FOR: {
    tsl_expr *mn = tsl_mutate_expr(m, s->loop.min), *ex = tsl_mutate_expr(m, s->loop.extent);
    if (st->failed) return s;
    if (mn->type.lanes > 1 || ex->type.lanes > 1) {
      fail(st, "an inner loop's bounds differ between lanes");
      return s;
    }
    if (s->loop.for_kind == TSL_FOR_PARALLEL) {
      fail(st, "a parallel loop is inside");
      return s;
    }
    set_range(st, s->loop.var, mn, ex);
    tsl_stmt *b = tsl_mutate_stmt(m, s->loop.body);
    if (st->failed) return s;
    return tsl_for(s->loop.var, mn, ex, s->loop.for_kind, b);
  }
  case TSL_S_IF: {
    tsl_expr *c = tsl_mutate_expr(m, s->if_.cond);
    if (st->failed) return s;
    if (c->type.lanes == 1) {
      range_undo u = {0};
      refine(st, &u, c);
      tsl_stmt *t = tsl_mutate_stmt(m, s->if_.then_case);
      undo_ranges(st, &u);
      tsl_stmt *f = tsl_mutate_stmt(m, s->if_.else_case);
      if (st->failed) return s;
      return tsl_if(c, t, f);
    }
    tsl_expr *saved = st->mask;
    st->mask = saved ? tsl_and(saved, c) : c;
    /* The lanes that take the branch, in terms of the scalar loop variable. When that is
     * one lane (the simplifier may have pinned the variable to one value inside, leaving
     * addresses the same for every lane), the branch runs as scalar code for that lane,
     * once, if any lane takes it. */
    tsl_var_ranges *lane_ranges = tsl_var_ranges_copy(st->ranges), *saved_ranges = st->ranges;
    st->ranges = lane_ranges;
    range_undo u = {0};
    refine(st, &u, s->if_.cond);
    st->ranges = saved_ranges;
    tsl_interval lr;
    if (st->nmap == 1 && tsl_var_ranges_get(lane_ranges, st->lane_var, &lr) && lr.has_lo && lr.has_hi &&
        lr.lo >= lr.hi) {
      tsl_stmt *t = NULL;
      if (!lr.empty && lr.lo == lr.hi) {
        tsl_expr *point = tsl_int(st->lane_var->type, lr.lo);
        tsl_expr *bits = tsl_cast(TSL_U8, st->mask);
        tsl_expr *any = tsl_call(TSL_CALL_REDUCE_MAX, TSL_U8, 1, &bits);
        t = tsl_if(tsl_ne(any, tsl_int(TSL_U8, 0)), tsl_substitute_stmt(s->if_.then_case, 1, &st->lane_var, &point),
                   NULL);
      }
      tsl_stmt *f = NULL;
      if (s->if_.else_case) {
        st->mask = saved ? tsl_and(saved, tsl_not(c)) : tsl_not(c);
        f = tsl_mutate_stmt(m, s->if_.else_case);
      }
      st->mask = saved;
      if (st->failed) return s;
      return t || f ? tsl_seq2(t, f) : tsl_stmt_nop();
    }
    tsl_stmt *t = tsl_mutate_stmt(m, s->if_.then_case);
    tsl_stmt *f = NULL;
    if (s->if_.else_case) {
      st->mask = saved ? tsl_and(saved, tsl_not(c)) : tsl_not(c);
      f = tsl_mutate_stmt(m, s->if_.else_case);
    }
    st->mask = saved;
    if (st->failed) return s;
    return tsl_seq2(t, f);
  }
  case TSL_S_LET: {
    tsl_expr *v = tsl_mutate_expr(m, s->let.value);
    if (st->failed) return s;
    tsl_expr *var = s->let.var;
    if (v->type.lanes > 1) {
      var = tsl_var(s->let.var->var.name, v->type);
      map_var(st, s->let.var, var);
    } else if (tsl_type_is_intlike(v->type)) {
      tsl_var_ranges_set(st->ranges, var, tsl_interval_of(v, st->ranges));
    }
    tsl_stmt *b = tsl_mutate_stmt(m, s->let.body);
    if (st->failed) return s;
    return tsl_let_stmt(var, v, b);
  }
  case TSL_S_ALLOCATE: fail(st, "a buffer is allocated inside"); return s;
  case TSL_S_EVALUATE: {
    tsl_expr *v = tsl_mutate_expr(m, s->evaluate.value);
    if (v != s->evaluate.value || st->mask) fail(st, "an evaluate statement (prefetch) depends on the lanes");
    return s;
  }
  case TSL_S_SEQ: return tsl_mutate_stmt_children(m, s);
  }
  return s;
}

/* The body of a vectorized loop on `lanes` lanes, or NULL (with *why) when it cannot run
 * on lanes. */
static tsl_stmt *vectorize_body(vec_state *outer, const tsl_stmt *loop, int lanes, const char **why) {
  vec_state st = {outer->ranges, TSL_OK, lanes, loop->loop.var, 0, 0, NULL, NULL, NULL, false, NULL};
  set_range(&st, loop->loop.var, loop->loop.min, loop->loop.extent);
  map_var(&st, loop->loop.var, tsl_ramp(loop->loop.min, tsl_int(loop->loop.var->type, 1), lanes));
  tsl_mutator m = {vec_expr, vec_stmt, &st};
  tsl_stmt *r = tsl_mutate_stmt(&m, loop->loop.body);
  *why = st.why;
  return st.failed ? NULL : r;
}

static tsl_stmt *outer_stmt(tsl_mutator *m, tsl_stmt *s) {
  vec_state *st = m->ud;
  if (st->rc != TSL_OK) return s;
  if (s->kind == TSL_S_LET && s->let.value->type.lanes == 1 && tsl_type_is_intlike(s->let.value->type))
    tsl_var_ranges_set(st->ranges, s->let.var, tsl_interval_of(s->let.value, st->ranges));
  if (s->kind == TSL_S_IF) {
    range_undo u = {0};
    refine(st, &u, s->if_.cond);
    tsl_stmt *t = tsl_mutate_stmt(m, s->if_.then_case);
    undo_ranges(st, &u);
    tsl_stmt *f = tsl_mutate_stmt(m, s->if_.else_case);
    if (st->rc != TSL_OK) return s;
    return t == s->if_.then_case && f == s->if_.else_case ? s : tsl_if(s->if_.cond, t, f);
  }
  if (s->kind != TSL_S_FOR) return tsl_mutate_stmt_children(m, s);
  set_range(st, s->loop.var, s->loop.min, s->loop.extent);
  /* inner loops first: a vectorized loop inside another is vectorized, the outer one
   * then sees vector code and stays scalar */
  tsl_stmt *body = tsl_mutate_stmt(m, s->loop.body);
  if (st->rc != TSL_OK) return s;
  if (s->loop.for_kind != TSL_FOR_VECTORIZED)
    return body == s->loop.body ? s : tsl_for(s->loop.var, s->loop.min, s->loop.extent, s->loop.for_kind, body);
  int64_t n;
  if (!tsl_expr_is_const_int(s->loop.extent, &n)) {
    st->rc = tsl_error(TSL_ERR_SCHEDULE, "vectorize: loop %s has no constant extent", s->loop.var->var.name);
    return s;
  }
  if (n <= 0) return tsl_stmt_nop();
  if (n == 1) return tsl_substitute_stmt(body, 1, &s->loop.var, &s->loop.min);
  if (n > TSL_VECTORIZE_MAX_LANES) {
    st->rc = tsl_error(TSL_ERR_SCHEDULE,
                       "vectorize: loop %s has %lld iterations, more than %d lanes; split it and vectorize the "
                       "inner loop",
                       s->loop.var->var.name, (long long)n, TSL_VECTORIZE_MAX_LANES);
    return s;
  }
  tsl_stmt *scalar_loop = tsl_for(s->loop.var, s->loop.min, s->loop.extent, TSL_FOR_SERIAL, body);
  const char *why = NULL;
  tsl_stmt *v = vectorize_body(st, scalar_loop, (int)n, &why);
  if (!v)
    st->rc = tsl_error(TSL_ERR_SCHEDULE, "vectorize: loop %s cannot run on vector lanes: %s", s->loop.var->var.name,
                       why ? why : "unsupported statement");
  return v ? v : s;
}

tsl_status tsl_pass_vectorize(tsl_stmt *s, tsl_stmt **out) {
  *out = NULL;
  vec_state st = {tsl_var_ranges_new(), TSL_OK, 0, NULL, 0, 0, NULL, NULL, NULL, false, NULL};
  tsl_mutator m = {NULL, outer_stmt, &st};
  tsl_stmt *r = tsl_mutate_stmt(&m, s);
  if (st.rc != TSL_OK) return st.rc;
  *out = r;
  return TSL_OK;
}
