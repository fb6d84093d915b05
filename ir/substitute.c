/* Variable substitution and variable-use queries (ir/analysis.h).
 *
 * Substitution rebuilds only the nodes on a path to a replaced variable; unchanged
 * subtrees are shared. Results are cached by node address for the duration of one
 * call, so a heavily shared DAG is rewritten in time linear in its distinct nodes.
 *
 * Binders: a For/Let/reduction variable listed in vars is renamed when its
 * replacement is itself a variable (this is how a caller duplicates a loop nest with
 * fresh binders); otherwise the binder is left as it is and only uses are replaced.
 */
#include <stdlib.h>

#include "ir/analysis_internal.h"

typedef struct sctx {
  int n;
  tsl_expr *const *vars;
  tsl_expr *const *values;
  tsl_memo memo;
} sctx;

static tsl_expr *lookup(const sctx *c, const tsl_expr *v) {
  for (int i = 0; i < c->n; i++)
    if (c->vars[i] == v) return c->values[i];
  return NULL;
}

static tsl_expr *rename_binder(const sctx *c, tsl_expr *v) {
  tsl_expr *r = lookup(c, v);
  return (r && r->kind == TSL_E_VAR && tsl_type_eq(r->type, v->type)) ? r : v;
}

static tsl_expr *sub(sctx *c, tsl_expr *e);

static bool sub_list(sctx *c, int n, tsl_expr *const *in, tsl_expr **out) {
  bool changed = false;
  for (int i = 0; i < n; i++) {
    out[i] = in[i] ? sub(c, in[i]) : NULL;
    changed |= out[i] != in[i];
  }
  return changed;
}

static tsl_expr *sub_compute(sctx *c, tsl_expr *e) {
  switch (e->kind) {
  case TSL_E_INT:
  case TSL_E_FLOAT: return e;
  case TSL_E_VAR: {
    tsl_expr *r = lookup(c, e);
    return r ? r : e;
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE:
  case TSL_E_GT: case TSL_E_GE: case TSL_E_AND: case TSL_E_OR: {
    tsl_expr *a = sub(c, e->bin.a), *b = sub(c, e->bin.b);
    return (a == e->bin.a && b == e->bin.b) ? e : tsl_binary(e->kind, a, b);
  }
  case TSL_E_NOT: {
    tsl_expr *a = sub(c, e->un.a);
    return a == e->un.a ? e : tsl_not(a);
  }
  case TSL_E_CAST: {
    tsl_expr *a = sub(c, e->un.a);
    return a == e->un.a ? e : tsl_cast(e->type, a);
  }
  case TSL_E_SELECT: {
    tsl_expr *k = sub(c, e->select.cond), *t = sub(c, e->select.t), *f = sub(c, e->select.f);
    return (k == e->select.cond && t == e->select.t && f == e->select.f) ? e : tsl_select(k, t, f);
  }
  case TSL_E_BROADCAST: {
    tsl_expr *v = sub(c, e->broadcast.value);
    return v == e->broadcast.value ? e : tsl_broadcast(v, e->broadcast.lanes);
  }
  case TSL_E_RAMP: {
    tsl_expr *b = sub(c, e->ramp.base), *s = sub(c, e->ramp.stride);
    return (b == e->ramp.base && s == e->ramp.stride) ? e : tsl_ramp(b, s, e->ramp.lanes);
  }
  case TSL_E_LOAD: {
    tsl_expr **idx = tsl_alloc(sizeof *idx * (size_t)e->load.nindex);
    bool changed = sub_list(c, e->load.nindex, e->load.index, idx);
    tsl_expr *p = e->load.predicate ? sub(c, e->load.predicate) : NULL;
    if (!changed && p == e->load.predicate) return e;
    return tsl_load(e->load.buf, e->load.nindex, idx, p);
  }
  case TSL_E_CALL: {
    tsl_expr **args = e->call.nargs ? tsl_alloc(sizeof *args * (size_t)e->call.nargs) : NULL;
    if (!sub_list(c, e->call.nargs, e->call.args, args)) return e;
    return tsl_call(e->call.op, e->type, e->call.nargs, args);
  }
  case TSL_E_LET: {
    tsl_expr *v = sub(c, e->let.value), *b = sub(c, e->let.body);
    tsl_expr *var = rename_binder(c, e->let.var);
    if (v == e->let.value && b == e->let.body && var == e->let.var) return e;
    return tsl_let(var, v, b);
  }
  case TSL_E_REDUCE: {
    tsl_expr *src = sub(c, e->reduce.source);
    tsl_expr *cond = e->reduce.condition ? sub(c, e->reduce.condition) : NULL;
    bool changed = src != e->reduce.source || cond != e->reduce.condition;
    tsl_iter_var *axes = e->reduce.naxes ? tsl_memdup(e->reduce.axes, sizeof *axes * (size_t)e->reduce.naxes) : NULL;
    for (int i = 0; i < e->reduce.naxes; i++) {
      axes[i].var = rename_binder(c, axes[i].var);
      changed |= axes[i].var != e->reduce.axes[i].var;
    }
    if (!changed) return e;
    return tsl_reduce(e->reduce.combiner, src, e->reduce.naxes, axes, cond);
  }
  }
  return e;
}

static tsl_expr *sub(sctx *c, tsl_expr *e) {
  tsl_memo_entry *m = tsl_memo_get(&c->memo, e, false);
  if (m && m->simplified) return m->simplified;
  tsl_expr *r = sub_compute(c, e);
  tsl_memo_get(&c->memo, e, true)->simplified = r;
  return r;
}

tsl_expr *tsl_substitute(tsl_expr *e, int n, tsl_expr *const *vars, tsl_expr *const *values) {
  if (!e || n <= 0) return e;
  sctx c = {n, vars, values, {0}};
  tsl_memo_init(&c.memo);
  tsl_expr *r = sub(&c, e);
  tsl_memo_free(&c.memo);
  return r;
}

static tsl_stmt *sub_stmt(sctx *c, tsl_stmt *s) {
  if (!s) return NULL;
  switch (s->kind) {
  case TSL_S_FOR: {
    tsl_expr *var = rename_binder(c, s->loop.var);
    tsl_expr *mn = sub(c, s->loop.min), *ext = sub(c, s->loop.extent);
    tsl_stmt *body = sub_stmt(c, s->loop.body);
    if (var == s->loop.var && mn == s->loop.min && ext == s->loop.extent && body == s->loop.body) return s;
    return tsl_for(var, mn, ext, s->loop.for_kind, body);
  }
  case TSL_S_STORE: {
    tsl_expr **idx = tsl_alloc(sizeof *idx * (size_t)s->store.nindex);
    bool changed = sub_list(c, s->store.nindex, s->store.index, idx);
    tsl_expr *v = sub(c, s->store.value);
    tsl_expr *p = s->store.predicate ? sub(c, s->store.predicate) : NULL;
    if (!changed && v == s->store.value && p == s->store.predicate) return s;
    return tsl_store(s->store.buf, s->store.nindex, idx, v, p);
  }
  case TSL_S_ALLOCATE: {
    tsl_stmt *body = sub_stmt(c, s->allocate.body);
    return body == s->allocate.body ? s : tsl_allocate(s->allocate.buf, body);
  }
  case TSL_S_SEQ: {
    tsl_stmt **xs = tsl_alloc(sizeof *xs * (size_t)s->seq.n);
    bool changed = false;
    for (int i = 0; i < s->seq.n; i++) {
      xs[i] = sub_stmt(c, s->seq.stmts[i]);
      changed |= xs[i] != s->seq.stmts[i];
    }
    return changed ? tsl_seq(s->seq.n, xs) : s;
  }
  case TSL_S_IF: {
    tsl_expr *k = sub(c, s->if_.cond);
    tsl_stmt *t = sub_stmt(c, s->if_.then_case), *f = sub_stmt(c, s->if_.else_case);
    if (k == s->if_.cond && t == s->if_.then_case && f == s->if_.else_case) return s;
    return tsl_if(k, t, f);
  }
  case TSL_S_LET: {
    tsl_expr *var = rename_binder(c, s->let.var);
    tsl_expr *v = sub(c, s->let.value);
    tsl_stmt *body = sub_stmt(c, s->let.body);
    if (var == s->let.var && v == s->let.value && body == s->let.body) return s;
    return tsl_let_stmt(var, v, body);
  }
  case TSL_S_EVALUATE: {
    tsl_expr *v = sub(c, s->evaluate.value);
    return v == s->evaluate.value ? s : tsl_evaluate(v);
  }
  }
  return s;
}

tsl_stmt *tsl_substitute_stmt(tsl_stmt *s, int n, tsl_expr *const *vars, tsl_expr *const *values) {
  if (!s || n <= 0) return s;
  sctx c = {n, vars, values, {0}};
  tsl_memo_init(&c.memo);
  tsl_stmt *r = sub_stmt(&c, s);
  tsl_memo_free(&c.memo);
  return r;
}

/* ---- uses ---- */

static bool uses(const tsl_expr *e, const tsl_expr *v, tsl_memo *seen) {
  if (!e) return false;
  if (e == v) return true;
  switch (e->kind) {
  case TSL_E_INT:
  case TSL_E_FLOAT:
  case TSL_E_VAR: return false;
  default: break;
  }
  /* a shared subtree that did not mention v the first time will not the second */
  tsl_memo_entry *m = tsl_memo_get(seen, e, true);
  if (m->has_ival) return false;
  m->has_ival = true;
  switch (e->kind) {
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE:
  case TSL_E_GT: case TSL_E_GE: case TSL_E_AND: case TSL_E_OR:
    return uses(e->bin.a, v, seen) || uses(e->bin.b, v, seen);
  case TSL_E_NOT:
  case TSL_E_CAST: return uses(e->un.a, v, seen);
  case TSL_E_SELECT:
    return uses(e->select.cond, v, seen) || uses(e->select.t, v, seen) || uses(e->select.f, v, seen);
  case TSL_E_BROADCAST: return uses(e->broadcast.value, v, seen);
  case TSL_E_RAMP: return uses(e->ramp.base, v, seen) || uses(e->ramp.stride, v, seen);
  case TSL_E_LOAD:
    for (int i = 0; i < e->load.nindex; i++)
      if (uses(e->load.index[i], v, seen)) return true;
    return uses(e->load.predicate, v, seen);
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++)
      if (uses(e->call.args[i], v, seen)) return true;
    return false;
  case TSL_E_LET: return uses(e->let.value, v, seen) || uses(e->let.body, v, seen);
  case TSL_E_REDUCE:
    return uses(e->reduce.source, v, seen) || uses(e->reduce.condition, v, seen);
  default: return false;
  }
}

bool tsl_expr_uses_var(const tsl_expr *e, const tsl_expr *v) {
  if (!e || !v) return false;
  if (e == v) return true;
  if (e->kind == TSL_E_INT || e->kind == TSL_E_FLOAT || e->kind == TSL_E_VAR) return false;
  tsl_memo seen;
  tsl_memo_init(&seen);
  bool r = uses(e, v, &seen);
  tsl_memo_free(&seen);
  return r;
}
