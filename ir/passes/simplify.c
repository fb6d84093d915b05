/* Pass: statement-level simplification (see simplify.h). */
#include "ir/passes/simplify.h"

#include "ir/analysis_internal.h"

static bool is_scalar_const(const tsl_expr *e) { return e->kind == TSL_E_INT || e->kind == TSL_E_FLOAT; }
static bool is_const_bool(const tsl_expr *e, bool v) {
  int64_t x;
  return tsl_type_is_bool(e->type) && tsl_expr_is_const_int(e, &x) && (x != 0) == v;
}

static bool stmt_uses_var(const tsl_stmt *s, const tsl_expr *v) {
  if (!s) return false;
  switch (s->kind) {
  case TSL_S_FOR:
    return tsl_expr_uses_var(s->loop.min, v) || tsl_expr_uses_var(s->loop.extent, v) || stmt_uses_var(s->loop.body, v);
  case TSL_S_STORE:
    for (int i = 0; i < s->store.nindex; i++)
      if (tsl_expr_uses_var(s->store.index[i], v)) return true;
    return tsl_expr_uses_var(s->store.value, v) || tsl_expr_uses_var(s->store.predicate, v);
  case TSL_S_ALLOCATE: return stmt_uses_var(s->allocate.body, v);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++)
      if (stmt_uses_var(s->seq.stmts[i], v)) return true;
    return false;
  case TSL_S_IF:
    return tsl_expr_uses_var(s->if_.cond, v) || stmt_uses_var(s->if_.then_case, v) || stmt_uses_var(s->if_.else_case, v);
  case TSL_S_LET: return tsl_expr_uses_var(s->let.value, v) || stmt_uses_var(s->let.body, v);
  case TSL_S_EVALUATE: return tsl_expr_uses_var(s->evaluate.value, v);
  }
  return false;
}

/* Range of a loop variable: [lo(min), hi(min) + hi(extent) - 1]. */
static tsl_interval loop_range(tsl_expr *mn, tsl_expr *ext, const tsl_var_ranges *r) {
  tsl_interval im = tsl_interval_of(mn, r), ie = tsl_interval_of(ext, r), out = tsl_interval_everything();
  if (im.empty || ie.empty) return out;
  out.has_lo = im.has_lo;
  out.lo = im.lo;
  if (im.has_hi && ie.has_hi && !__builtin_add_overflow(im.hi, ie.hi - 1, &out.hi)) out.has_hi = true;
  return out;
}

static tsl_stmt *walk(tsl_stmt *s, const tsl_var_ranges *r);

static tsl_stmt *walk_for(tsl_stmt *s, const tsl_var_ranges *r) {
  tsl_expr *var = s->loop.var;
  tsl_expr *mn = tsl_simplify(s->loop.min, r), *ext = tsl_simplify(s->loop.extent, r);
  int64_t n;
  tsl_interval ie = tsl_interval_of(ext, r);
  if (!ie.empty && ie.has_hi && ie.hi <= 0) return NULL; /* never runs */
  if (tsl_expr_is_const_int(ext, &n) && n == 1) {
    if (mn->kind == TSL_E_INT || mn->kind == TSL_E_VAR)
      return walk(tsl_substitute_stmt(s->loop.body, 1, &var, &mn), r);
    return walk(tsl_let_stmt(var, mn, s->loop.body), r);
  }
  tsl_var_ranges *r2 = tsl_var_ranges_copy(r);
  tsl_var_ranges_set(r2, var, loop_range(mn, ext, r));
  tsl_stmt *body = walk(s->loop.body, r2);
  if (!body) return NULL;
  if (mn == s->loop.min && ext == s->loop.extent && body == s->loop.body) return s;
  return tsl_for(var, mn, ext, s->loop.for_kind, body);
}

static tsl_stmt *walk_store(tsl_stmt *s, const tsl_var_ranges *r) {
  tsl_expr *p = s->store.predicate ? tsl_simplify(s->store.predicate, r) : NULL;
  if (p) {
    const tsl_expr *pv = p->kind == TSL_E_BROADCAST ? p->broadcast.value : p;
    if (is_const_bool(pv, false)) return NULL; /* stores nothing */
    if (is_const_bool(pv, true)) p = NULL;
  }
  int ni = s->store.nindex;
  tsl_expr **idx = tsl_alloc(sizeof *idx * (size_t)ni);
  bool changed = p != s->store.predicate;
  for (int i = 0; i < ni; i++) {
    idx[i] = tsl_simplify(s->store.index[i], r);
    changed |= idx[i] != s->store.index[i];
  }
  tsl_expr *v = tsl_simplify(s->store.value, r);
  changed |= v != s->store.value;
  return changed ? tsl_store(s->store.buf, ni, idx, v, p) : s;
}

static tsl_stmt *walk_if(tsl_stmt *s, const tsl_var_ranges *r) {
  tsl_expr *cond = tsl_simplify(s->if_.cond, r);
  if (is_const_bool(cond, true)) return walk(s->if_.then_case, r);
  if (is_const_bool(cond, false)) return walk(s->if_.else_case, r);
  /* each branch runs only where cond is true / false: narrow the ranges it implies */
  tsl_var_ranges *rt = tsl_ranges_refine(cond, true, r), *rf = tsl_ranges_refine(cond, false, r);
  tsl_stmt *t = walk(s->if_.then_case, rt ? rt : r), *e = walk(s->if_.else_case, rf ? rf : r);
  if (!t && !e) return NULL;
  if (!t) return tsl_if(tsl_simplify(tsl_not(cond), r), e, NULL);
  if (cond == s->if_.cond && t == s->if_.then_case && e == s->if_.else_case) return s;
  return tsl_if(cond, t, e);
}

static tsl_stmt *walk_let(tsl_stmt *s, const tsl_var_ranges *r) {
  tsl_expr *var = s->let.var;
  tsl_expr *v = tsl_simplify(s->let.value, r);
  if (is_scalar_const(v) || v->kind == TSL_E_VAR) return walk(tsl_substitute_stmt(s->let.body, 1, &var, &v), r);
  tsl_var_ranges *r2 = tsl_var_ranges_copy(r);
  if (tsl_type_is_intlike(v->type) || tsl_type_is_bool(v->type)) tsl_var_ranges_set(r2, var, tsl_interval_of(v, r));
  tsl_stmt *body = walk(s->let.body, r2);
  if (!body) return NULL;
  if (!stmt_uses_var(body, var)) return body;
  if (v == s->let.value && body == s->let.body) return s;
  return tsl_let_stmt(var, v, body);
}

static tsl_stmt *walk(tsl_stmt *s, const tsl_var_ranges *r) {
  if (!s) return NULL;
  switch (s->kind) {
  case TSL_S_FOR: return walk_for(s, r);
  case TSL_S_STORE: return walk_store(s, r);
  case TSL_S_IF: return walk_if(s, r);
  case TSL_S_LET: return walk_let(s, r);
  case TSL_S_ALLOCATE: {
    tsl_stmt *body = walk(s->allocate.body, r);
    if (!body) return NULL;
    return body == s->allocate.body ? s : tsl_allocate(s->allocate.buf, body);
  }
  case TSL_S_SEQ: {
    tsl_stmt **xs = tsl_alloc(sizeof *xs * (size_t)s->seq.n);
    int m = 0;
    bool changed = false;
    for (int i = 0; i < s->seq.n; i++) {
      tsl_stmt *x = walk(s->seq.stmts[i], r);
      changed |= x != s->seq.stmts[i];
      if (x) xs[m++] = x;
    }
    if (m == 0) return NULL;
    return changed ? tsl_seq(m, xs) : s;
  }
  case TSL_S_EVALUATE: {
    tsl_expr *v = tsl_simplify(s->evaluate.value, r);
    if (is_scalar_const(v)) return NULL;
    return v == s->evaluate.value ? s : tsl_evaluate(v);
  }
  }
  return s;
}

tsl_stmt *tsl_pass_simplify(tsl_stmt *s) {
  if (!s) return NULL;
  tsl_stmt *r = walk(s, NULL);
  return r ? r : tsl_evaluate(tsl_i32(0));
}
