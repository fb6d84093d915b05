/* Naive reference interpreter for integer IR expressions (see ir_eval.h). */
#include "ir_eval.h"

#include <stdlib.h>

typedef struct binding {
  const tsl_expr *var;
  int64_t value;
  const struct binding *next;
} binding;

int64_t ref_floormod(int64_t a, int64_t b) {
  __int128 r = (__int128)a % (__int128)b;
  if (b > 0 && r < 0) r += b;
  if (b < 0 && r > 0) r += b;
  return (int64_t)r;
}

int64_t ref_floordiv(int64_t a, int64_t b) {
  __int128 q = ((__int128)a - ref_floormod(a, b)) / (__int128)b; /* exact */
  return (int64_t)(uint64_t)q;
}

/* v reduced to the bits of t, read back signed or unsigned as the type says. */
static int64_t wrap(tsl_type t, __int128 v) {
  if (t.code == TSL_TYPE_BOOL) return v != 0;
  uint64_t u = (uint64_t)v;
  if (t.bits < 64) {
    uint64_t m = (1ull << t.bits) - 1;
    u &= m;
    if (t.code == TSL_TYPE_INT && (u >> (t.bits - 1)) & 1) u |= ~m;
  }
  return (int64_t)u;
}

static __int128 as_wide(tsl_type t, int64_t v) {
  return t.code == TSL_TYPE_UINT ? (__int128)(uint64_t)v : (__int128)v;
}

static ref_eval_status ev(const tsl_expr *e, const ref_env *env, const binding *b, int lane, int64_t *out);

/* Element offset of buf[index...] (row-major, or the flat offset for one index). */
static ref_eval_status address(const tsl_buffer *buf, int n, tsl_expr *const *index, const ref_env *env,
                               const binding *bd, int lane, int64_t **mem, int64_t *off) {
  if (!env->data || buf->dtype.code != TSL_TYPE_INT || buf->dtype.bits != 64) return REF_EVAL_UNSUPPORTED;
  *mem = env->data(env->ud, buf);
  if (!*mem) return REF_EVAL_UNSUPPORTED;
  int64_t o = 0;
  for (int d = 0; d < n; d++) {
    int64_t v;
    ref_eval_status st = ev(index[d], env, bd, lane, &v);
    if (st != REF_EVAL_OK) return st;
    if (n > 1) {
      if (v < 0 || v >= buf->shape[d]) return REF_EVAL_OUT_OF_BOUNDS;
      o = o * buf->shape[d] + v;
    } else {
      o = v;
    }
  }
  *off = o;
  return REF_EVAL_OK;
}

static ref_eval_status ev2(const tsl_expr *e, const ref_env *env, const binding *bd, int lane, int64_t *x, int64_t *y) {
  ref_eval_status s1 = ev(e->bin.a, env, bd, lane, x);
  ref_eval_status s2 = ev(e->bin.b, env, bd, lane, y);
  if (s1 == REF_EVAL_UNSUPPORTED || s2 == REF_EVAL_UNSUPPORTED) return REF_EVAL_UNSUPPORTED;
  return s1 != REF_EVAL_OK ? s1 : s2;
}

static ref_eval_status ev(const tsl_expr *e, const ref_env *env, const binding *bd, int lane, int64_t *out) {
  tsl_type t = e->type;
  int64_t x = 0, y = 0;
  ref_eval_status st;
  switch (e->kind) {
  case TSL_E_INT: *out = e->int_value; return REF_EVAL_OK;
  case TSL_E_VAR:
    for (const binding *p = bd; p; p = p->next)
      if (p->var == e) {
        *out = p->value;
        return REF_EVAL_OK;
      }
    for (int i = 0; i < env->n; i++)
      if (env->vars[i] == e) {
        *out = wrap(t, env->values[i]);
        return REF_EVAL_OK;
      }
    return REF_EVAL_UNSUPPORTED;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX: {
    if (!tsl_type_is_intlike(t)) return REF_EVAL_UNSUPPORTED;
    st = ev2(e, env, bd, lane, &x, &y);
    if (st != REF_EVAL_OK) return st;
    __int128 a = as_wide(t, x), c = as_wide(t, y), r;
    switch (e->kind) {
    case TSL_E_ADD: r = a + c; break;
    case TSL_E_SUB: r = a - c; break;
    case TSL_E_MUL: r = (__int128)((uint64_t)x * (uint64_t)y); break; /* low 64 bits suffice */
    case TSL_E_DIV:
      if (c == 0) return REF_EVAL_DIV_ZERO;
      if (t.code == TSL_TYPE_UINT) r = (__int128)((uint64_t)x / (uint64_t)y);
      else r = ((__int128)x - ref_floormod(x, y)) / (__int128)y; /* exact, and no INT64_MIN/-1 trap */
      break;
    case TSL_E_MOD:
      if (c == 0) return REF_EVAL_DIV_ZERO;
      r = t.code == TSL_TYPE_UINT ? (__int128)((uint64_t)x % (uint64_t)y) : ref_floormod(x, y);
      break;
    case TSL_E_MIN: r = a < c ? a : c; break;
    default: r = a > c ? a : c; break;
    }
    *out = wrap(t, r);
    return REF_EVAL_OK;
  }
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE: {
    tsl_type ot = e->bin.a->type;
    if (!tsl_type_is_intlike(ot) && !tsl_type_is_bool(ot)) return REF_EVAL_UNSUPPORTED;
    st = ev2(e, env, bd, lane, &x, &y);
    if (st != REF_EVAL_OK) return st;
    __int128 a = as_wide(ot, x), c = as_wide(ot, y);
    switch (e->kind) {
    case TSL_E_EQ: *out = a == c; break;
    case TSL_E_NE: *out = a != c; break;
    case TSL_E_LT: *out = a < c; break;
    case TSL_E_LE: *out = a <= c; break;
    case TSL_E_GT: *out = a > c; break;
    default: *out = a >= c; break;
    }
    return REF_EVAL_OK;
  }
  case TSL_E_AND:
  case TSL_E_OR:
    st = ev2(e, env, bd, lane, &x, &y);
    if (st != REF_EVAL_OK) return st;
    *out = e->kind == TSL_E_AND ? (x && y) : (x || y);
    return REF_EVAL_OK;
  case TSL_E_NOT:
    st = ev(e->un.a, env, bd, lane, &x);
    if (st != REF_EVAL_OK) return st;
    *out = !x;
    return REF_EVAL_OK;
  case TSL_E_SELECT: {
    int64_t k = 0;
    int cl = e->select.cond->type.lanes == 1 ? 0 : lane;
    ref_eval_status s0 = ev(e->select.cond, env, bd, cl, &k);
    ref_eval_status s1 = ev(e->select.t, env, bd, lane, &x);
    ref_eval_status s2 = ev(e->select.f, env, bd, lane, &y);
    if (s0 == REF_EVAL_UNSUPPORTED || s1 == REF_EVAL_UNSUPPORTED || s2 == REF_EVAL_UNSUPPORTED) return REF_EVAL_UNSUPPORTED;
    if (s0 != REF_EVAL_OK || s1 != REF_EVAL_OK || s2 != REF_EVAL_OK) return REF_EVAL_DIV_ZERO;
    *out = k ? x : y;
    return REF_EVAL_OK;
  }
  case TSL_E_CAST: {
    tsl_type from = e->un.a->type;
    if (!(tsl_type_is_intlike(from) || tsl_type_is_bool(from)) || !tsl_type_is_intlike(t)) return REF_EVAL_UNSUPPORTED;
    st = ev(e->un.a, env, bd, lane, &x);
    if (st != REF_EVAL_OK) return st;
    *out = wrap(t, as_wide(from, x));
    return REF_EVAL_OK;
  }
  case TSL_E_BROADCAST: return ev(e->broadcast.value, env, bd, 0, out);
  case TSL_E_RAMP:
    st = ev(e->ramp.base, env, bd, 0, &x);
    if (st == REF_EVAL_OK) st = ev(e->ramp.stride, env, bd, 0, &y);
    if (st != REF_EVAL_OK) return st;
    *out = wrap(t, as_wide(t, x) + as_wide(t, y) * lane);
    return REF_EVAL_OK;
  case TSL_E_LOAD: {
    int64_t off;
    int64_t *mem;
    st = address(e->load.buf, e->load.nindex, e->load.index, env, bd, lane, &mem, &off);
    if (st != REF_EVAL_OK) return st;
    if (e->load.predicate) {
      int64_t p;
      st = ev(e->load.predicate, env, bd, lane, &p);
      if (st != REF_EVAL_OK) return st;
      if (!p) {
        *out = 0;
        return REF_EVAL_OK;
      }
    }
    if (off < 0 || off >= tsl_buffer_numel(e->load.buf)) return REF_EVAL_OUT_OF_BOUNDS;
    *out = mem[off];
    return REF_EVAL_OK;
  }
  case TSL_E_LET: {
    st = ev(e->let.value, env, bd, lane, &x);
    if (st != REF_EVAL_OK) return st;
    binding nb = {e->let.var, x, bd};
    return ev(e->let.body, env, &nb, lane, out);
  }
  default: return REF_EVAL_UNSUPPORTED;
  }
}

ref_eval_status ref_eval_int(const tsl_expr *e, const ref_env *env, int lane, int64_t *out) {
  return ev(e, env, NULL, lane, out);
}

static ref_eval_status exec(const tsl_stmt *s, const ref_env *env, const binding *bd) {
  ref_eval_status st;
  int64_t x;
  switch (s->kind) {
  case TSL_S_FOR: {
    int64_t mn, ext;
    if ((st = ev(s->loop.min, env, bd, 0, &mn)) != REF_EVAL_OK) return st;
    if ((st = ev(s->loop.extent, env, bd, 0, &ext)) != REF_EVAL_OK) return st;
    for (int64_t i = mn; i < mn + ext; i++) {
      binding nb = {s->loop.var, i, bd};
      if ((st = exec(s->loop.body, env, &nb)) != REF_EVAL_OK) return st;
    }
    return REF_EVAL_OK;
  }
  case TSL_S_STORE: {
    int lanes = s->store.value->type.lanes;
    for (int lane = 0; lane < lanes; lane++) {
      int64_t *mem, off;
      st = address(s->store.buf, s->store.nindex, s->store.index, env, bd, lane, &mem, &off);
      if (st != REF_EVAL_OK) return st;
      if (s->store.predicate) {
        if ((st = ev(s->store.predicate, env, bd, lane, &x)) != REF_EVAL_OK) return st;
        if (!x) continue;
      }
      if ((st = ev(s->store.value, env, bd, lane, &x)) != REF_EVAL_OK) return st;
      if (off < 0 || off >= tsl_buffer_numel(s->store.buf)) return REF_EVAL_OUT_OF_BOUNDS;
      mem[off] = x;
    }
    return REF_EVAL_OK;
  }
  case TSL_S_ALLOCATE: return exec(s->allocate.body, env, bd);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++)
      if ((st = exec(s->seq.stmts[i], env, bd)) != REF_EVAL_OK) return st;
    return REF_EVAL_OK;
  case TSL_S_IF:
    if ((st = ev(s->if_.cond, env, bd, 0, &x)) != REF_EVAL_OK) return st;
    if (x) return exec(s->if_.then_case, env, bd);
    return s->if_.else_case ? exec(s->if_.else_case, env, bd) : REF_EVAL_OK;
  case TSL_S_LET: {
    if ((st = ev(s->let.value, env, bd, 0, &x)) != REF_EVAL_OK) return st;
    binding nb = {s->let.var, x, bd};
    return exec(s->let.body, env, &nb);
  }
  case TSL_S_EVALUATE:
    st = ev(s->evaluate.value, env, bd, 0, &x);
    return st == REF_EVAL_UNSUPPORTED ? REF_EVAL_OK : st;
  }
  return REF_EVAL_UNSUPPORTED;
}

ref_eval_status ref_exec_stmt(const tsl_stmt *s, const ref_env *env) { return exec(s, env, NULL); }
