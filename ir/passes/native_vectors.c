/* Over-wide vectorized loops -> register-wide vectors (see native_vectors.h). */
#include "ir/passes/native_vectors.h"

#include <string.h>

#include "ir/analysis.h"
#include "ir/passes/mutate.h"

/* ---- the widest element a statement loads or stores ---- */

static tsl_expr *widest_expr(tsl_mutator *m, tsl_expr *e) {
  int *bits = m->ud;
  if (e->kind == TSL_E_LOAD && e->load.buf->dtype.bits > *bits && !tsl_type_is_bool(e->load.buf->dtype))
    *bits = e->load.buf->dtype.bits;
  return tsl_mutate_expr_children(m, e);
}

static tsl_stmt *widest_stmt(tsl_mutator *m, tsl_stmt *s) {
  int *bits = m->ud;
  if (s->kind == TSL_S_STORE && s->store.buf->dtype.bits > *bits && !tsl_type_is_bool(s->store.buf->dtype))
    *bits = s->store.buf->dtype.bits;
  return tsl_mutate_stmt_children(m, s);
}

static int widest_element(tsl_stmt *s) {
  int bits = 0;
  tsl_mutator m = {widest_expr, widest_stmt, &bits};
  tsl_mutate_stmt(&m, s);
  return bits;
}

/* ---- splitting ---- */

static char *suffixed(const char *name, const char *suffix) {
  size_t a = strlen(name), b = strlen(suffix);
  char *r = tsl_alloc(a + b + 1);
  memcpy(r, name, a);
  memcpy(r + a, suffix, b + 1);
  return r;
}

static tsl_stmt *native_stmt(tsl_mutator *m, tsl_stmt *s) {
  int vector_bits = *(int *)m->ud;
  if (s->kind != TSL_S_FOR || s->loop.for_kind != TSL_FOR_VECTORIZED) return tsl_mutate_stmt_children(m, s);
  int64_t n;
  tsl_stmt *body = tsl_mutate_stmt(m, s->loop.body);
  int bits = widest_element(body);
  int64_t lanes = bits > 0 ? vector_bits / bits : 0;
  if (!tsl_expr_is_const_int(s->loop.extent, &n) || lanes < 2 || n <= lanes)
    return body == s->loop.body ? s : tsl_for(s->loop.var, s->loop.min, s->loop.extent, s->loop.for_kind, body);
  tsl_expr *v = s->loop.var;
  const char *name = v->var.name;
  int64_t full = n / lanes, rem = n % lanes;
  tsl_expr *lane = tsl_var(suffixed(name, ".lane"), v->type);
  tsl_expr *vec = tsl_var(suffixed(name, ".vec"), v->type);
  tsl_expr *at = tsl_add(s->loop.min, full > 1 ? tsl_add(tsl_mul(vec, tsl_int(v->type, lanes)), lane) : lane);
  tsl_stmt *main = tsl_for(lane, tsl_int(v->type, 0), tsl_int(v->type, lanes), TSL_FOR_VECTORIZED,
                           tsl_substitute_stmt(body, 1, &v, &at));
  if (full > 1) main = tsl_for(vec, tsl_int(v->type, 0), tsl_int(v->type, full), TSL_FOR_UNROLLED, main);
  if (!rem) return main;
  tsl_expr *rlane = tsl_var(suffixed(name, ".rest"), v->type);
  tsl_expr *rat = tsl_add(s->loop.min, tsl_add(tsl_int(v->type, full * lanes), rlane));
  tsl_stmt *tail = tsl_for(rlane, tsl_int(v->type, 0), tsl_int(v->type, rem), TSL_FOR_VECTORIZED,
                           tsl_stmt_fresh_binders(tsl_substitute_stmt(body, 1, &v, &rat)));
  return tsl_seq2(main, tail);
}

tsl_stmt *tsl_pass_native_vectors(tsl_stmt *s, int vector_bits) {
  if (vector_bits <= 0) return s;
  tsl_mutator m = {NULL, native_stmt, &vector_bits};
  return tsl_mutate_stmt(&m, s);
}
