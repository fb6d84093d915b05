/* Unrolled loops -> copies of their bodies (see unroll.h). */
#include "ir/passes/unroll.h"

#include "ir/analysis.h"
#include "ir/passes/mutate.h"

typedef struct unroll_state {
  int64_t max_iterations;
  int64_t copies; /* product of the extents of the enclosing unrolled loops */
  tsl_status rc;
} unroll_state;

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

static tsl_stmt *with_fresh_binders(tsl_stmt *s) {
  tsl_mutator m = {fresh_expr, fresh_stmt, NULL};
  return tsl_mutate_stmt(&m, s);
}

/* ---- unrolling ---- */

static tsl_stmt *unroll_stmt(tsl_mutator *m, tsl_stmt *s) {
  unroll_state *st = m->ud;
  if (st->rc != TSL_OK) return s;
  if (s->kind != TSL_S_FOR || s->loop.for_kind != TSL_FOR_UNROLLED) return tsl_mutate_stmt_children(m, s);
  int64_t n;
  if (!tsl_expr_is_const_int(s->loop.extent, &n)) {
    st->rc = tsl_error(TSL_ERR_SCHEDULE, "unroll: loop %s has no constant extent", s->loop.var->var.name);
    return s;
  }
  if (n <= 0) return tsl_stmt_nop();
  if (n > st->max_iterations / st->copies) {
    st->rc = tsl_error(TSL_ERR_SCHEDULE,
                       "unroll: loop %s of extent %lld would make %lld copies of its body with the unrolled "
                       "loops around it (limit %lld); unroll a smaller inner loop instead",
                       s->loop.var->var.name, (long long)n, (long long)(n * st->copies),
                       (long long)st->max_iterations);
    return s;
  }
  int64_t saved = st->copies;
  st->copies *= n;
  tsl_stmt *body = tsl_mutate_stmt(m, s->loop.body);
  st->copies = saved;
  if (st->rc != TSL_OK) return s;
  tsl_stmt **copies = tsl_alloc(sizeof(tsl_stmt *) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    tsl_expr *v = tsl_add(s->loop.min, tsl_int(s->loop.var->type, i));
    tsl_stmt *c = tsl_substitute_stmt(body, 1, &s->loop.var, &v);
    copies[i] = i == 0 ? c : with_fresh_binders(c);
  }
  return tsl_seq((int)n, copies);
}

tsl_status tsl_pass_unroll(tsl_stmt *s, int64_t max_iterations, tsl_stmt **out) {
  *out = NULL;
  if (max_iterations < 1)
    return tsl_error(TSL_ERR_INVALID, "unroll: limit %lld (must be >= 1)", (long long)max_iterations);
  unroll_state st = {max_iterations, 1, TSL_OK};
  tsl_mutator m = {NULL, unroll_stmt, &st};
  tsl_stmt *r = tsl_mutate_stmt(&m, s);
  if (st.rc != TSL_OK) return st.rc;
  *out = r;
  return TSL_OK;
}
