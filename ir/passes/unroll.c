/* Unrolled loops -> copies of their bodies (see unroll.h). */
#include "ir/passes/unroll.h"

#include "ir/analysis.h"
#include "ir/passes/mutate.h"

typedef struct unroll_state {
  int64_t max_iterations;
  int64_t copies; /* product of the extents of the enclosing unrolled loops */
  tsl_status rc;
} unroll_state;

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
    copies[i] = i == 0 ? c : tsl_stmt_fresh_binders(c);
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
