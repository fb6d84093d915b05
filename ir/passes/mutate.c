/* The rebuilding visitor shared by the lowering passes (see mutate.h). */
#include "ir/passes/mutate.h"

#include "ir/analysis.h"

tsl_expr *tsl_mutate_expr(tsl_mutator *m, tsl_expr *e) {
  if (!e) return NULL;
  return m->expr ? m->expr(m, e) : tsl_mutate_expr_children(m, e);
}

tsl_stmt *tsl_mutate_stmt(tsl_mutator *m, tsl_stmt *s) {
  if (!s) return NULL;
  return m->stmt ? m->stmt(m, s) : tsl_mutate_stmt_children(m, s);
}

/* Mutates n expressions; returns NULL when none changed, else the new array. */
static tsl_expr **mutate_list(tsl_mutator *m, int n, tsl_expr *const *xs) {
  tsl_expr **out = NULL;
  for (int i = 0; i < n; i++) {
    tsl_expr *x = tsl_mutate_expr(m, xs[i]);
    if (x != xs[i] && !out) {
      out = tsl_alloc(sizeof(tsl_expr *) * (size_t)n);
      for (int j = 0; j < i; j++) out[j] = xs[j];
    }
    if (out) out[i] = x;
  }
  return out;
}

tsl_expr *tsl_mutate_expr_children(tsl_mutator *m, tsl_expr *e) {
  if (!e) return NULL;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return e;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN:
  case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR: {
    tsl_expr *a = tsl_mutate_expr(m, e->bin.a), *b = tsl_mutate_expr(m, e->bin.b);
    return a == e->bin.a && b == e->bin.b ? e : tsl_binary(e->kind, a, b);
  }
  case TSL_E_NOT: {
    tsl_expr *a = tsl_mutate_expr(m, e->un.a);
    return a == e->un.a ? e : tsl_not(a);
  }
  case TSL_E_CAST: {
    tsl_expr *a = tsl_mutate_expr(m, e->un.a);
    return a == e->un.a ? e : tsl_cast(e->type, a);
  }
  case TSL_E_SELECT: {
    tsl_expr *c = tsl_mutate_expr(m, e->select.cond);
    tsl_expr *t = tsl_mutate_expr(m, e->select.t), *f = tsl_mutate_expr(m, e->select.f);
    return c == e->select.cond && t == e->select.t && f == e->select.f ? e : tsl_select(c, t, f);
  }
  case TSL_E_BROADCAST: {
    tsl_expr *v = tsl_mutate_expr(m, e->broadcast.value);
    return v == e->broadcast.value ? e : tsl_broadcast(v, e->broadcast.lanes);
  }
  case TSL_E_RAMP: {
    tsl_expr *b = tsl_mutate_expr(m, e->ramp.base), *s = tsl_mutate_expr(m, e->ramp.stride);
    return b == e->ramp.base && s == e->ramp.stride ? e : tsl_ramp(b, s, e->ramp.lanes);
  }
  case TSL_E_LOAD: {
    tsl_expr **idx = mutate_list(m, e->load.nindex, e->load.index);
    tsl_expr *p = tsl_mutate_expr(m, e->load.predicate);
    if (!idx && p == e->load.predicate) return e;
    return tsl_load(e->load.buf, e->load.nindex, idx ? idx : e->load.index, p);
  }
  case TSL_E_CALL: {
    tsl_expr **args = mutate_list(m, e->call.nargs, e->call.args);
    return args ? tsl_call(e->call.op, e->type, e->call.nargs, args) : e;
  }
  case TSL_E_LET: {
    tsl_expr *v = tsl_mutate_expr(m, e->let.value), *b = tsl_mutate_expr(m, e->let.body);
    return v == e->let.value && b == e->let.body ? e : tsl_let(e->let.var, v, b);
  }
  case TSL_E_REDUCE: {
    tsl_expr *src = tsl_mutate_expr(m, e->reduce.source), *c = tsl_mutate_expr(m, e->reduce.condition);
    if (src == e->reduce.source && c == e->reduce.condition) return e;
    return tsl_reduce(e->reduce.combiner, src, e->reduce.naxes, e->reduce.axes, c);
  }
  }
  return e;
}

tsl_stmt *tsl_mutate_stmt_children(tsl_mutator *m, tsl_stmt *s) {
  if (!s) return NULL;
  switch (s->kind) {
  case TSL_S_FOR: {
    tsl_expr *mn = tsl_mutate_expr(m, s->loop.min), *ex = tsl_mutate_expr(m, s->loop.extent);
    tsl_stmt *b = tsl_mutate_stmt(m, s->loop.body);
    if (mn == s->loop.min && ex == s->loop.extent && b == s->loop.body) return s;
    return tsl_for(s->loop.var, mn, ex, s->loop.for_kind, b);
  }
  case TSL_S_STORE: {
    tsl_expr **idx = mutate_list(m, s->store.nindex, s->store.index);
    tsl_expr *v = tsl_mutate_expr(m, s->store.value), *p = tsl_mutate_expr(m, s->store.predicate);
    if (!idx && v == s->store.value && p == s->store.predicate) return s;
    return tsl_store(s->store.buf, s->store.nindex, idx ? idx : s->store.index, v, p);
  }
  case TSL_S_ALLOCATE: {
    tsl_stmt *b = tsl_mutate_stmt(m, s->allocate.body);
    return b == s->allocate.body ? s : tsl_allocate(s->allocate.buf, b);
  }
  case TSL_S_SEQ: {
    tsl_stmt **xs = NULL;
    for (int i = 0; i < s->seq.n; i++) {
      tsl_stmt *x = tsl_mutate_stmt(m, s->seq.stmts[i]);
      if (x != s->seq.stmts[i] && !xs) {
        xs = tsl_alloc(sizeof(tsl_stmt *) * (size_t)s->seq.n);
        for (int j = 0; j < i; j++) xs[j] = s->seq.stmts[j];
      }
      if (xs) xs[i] = x;
    }
    return xs ? tsl_seq(s->seq.n, xs) : s;
  }
  case TSL_S_IF: {
    tsl_expr *c = tsl_mutate_expr(m, s->if_.cond);
    tsl_stmt *t = tsl_mutate_stmt(m, s->if_.then_case), *f = tsl_mutate_stmt(m, s->if_.else_case);
    if (c == s->if_.cond && t == s->if_.then_case && f == s->if_.else_case) return s;
    return tsl_if(c, t, f);
  }
  case TSL_S_LET: {
    tsl_expr *v = tsl_mutate_expr(m, s->let.value);
    tsl_stmt *b = tsl_mutate_stmt(m, s->let.body);
    return v == s->let.value && b == s->let.body ? s : tsl_let_stmt(s->let.var, v, b);
  }
  case TSL_S_EVALUATE: {
    tsl_expr *v = tsl_mutate_expr(m, s->evaluate.value);
    return v == s->evaluate.value ? s : tsl_evaluate(v);
  }
  }
  return s;
}

/* ---- fresh binders for a copy ---- */

static tsl_expr *fresh_expr(tsl_mutator *m, tsl_expr *e) {
  if (e->kind != TSL_E_LET) return tsl_mutate_expr_children(m, e);
  tsl_expr *v = tsl_var(e->let.var->var.name, e->let.var->type);
  tsl_expr *body = tsl_substitute(e->let.body, 1, &e->let.var, &v);
  return tsl_let(v, tsl_mutate_expr(m, e->let.value), tsl_mutate_expr(m, body));
}

static tsl_stmt *fresh_stmt(tsl_mutator *m, tsl_stmt *s) {
  if (s->kind == TSL_S_FOR) {
    tsl_expr *v = tsl_var(s->loop.var->var.name, s->loop.var->type);
    tsl_stmt *body = tsl_substitute_stmt(s->loop.body, 1, &s->loop.var, &v);
    return tsl_for(v, tsl_mutate_expr(m, s->loop.min), tsl_mutate_expr(m, s->loop.extent), s->loop.for_kind,
                   tsl_mutate_stmt(m, body));
  }
  if (s->kind == TSL_S_LET) {
    tsl_expr *v = tsl_var(s->let.var->var.name, s->let.var->type);
    tsl_stmt *body = tsl_substitute_stmt(s->let.body, 1, &s->let.var, &v);
    return tsl_let_stmt(v, tsl_mutate_expr(m, s->let.value), tsl_mutate_stmt(m, body));
  }
  return tsl_mutate_stmt_children(m, s);
}

tsl_stmt *tsl_stmt_fresh_binders(tsl_stmt *s) {
  tsl_mutator m = {fresh_expr, fresh_stmt, NULL};
  return tsl_mutate_stmt(&m, s);
}

tsl_stmt *tsl_stmt_nop(void) { return tsl_evaluate(tsl_i32(0)); }

bool tsl_stmt_is_nop(const tsl_stmt *s) {
  int64_t v;
  return s && s->kind == TSL_S_EVALUATE && tsl_expr_is_const_int(s->evaluate.value, &v);
}
