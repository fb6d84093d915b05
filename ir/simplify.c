/* The expression simplifier (tsl_simplify, tsl_prove, tsl_disprove in ir/analysis.h).
 *
 * Bottom-up rewriting: each node's children are simplified first (results are cached
 * by address, so shared subtrees are visited once), then the node's own rules apply.
 * Integer sums go through the linear canonical form (simplify_linear.c). Every rule
 * either shrinks the tree or replaces a node by a canonical one built from already
 * simplified parts, so the rewriting terminates. Finally, any integer or bool node
 * whose sound interval is a single value becomes that constant.
 *
 * Floats: only constants are folded, with the exact IEEE result of the operation in
 * the node's type (f32 results are computed in double and rounded once, which is
 * exact for + - * / sqrt since double holds more than 2*24+2 bits), and no identity
 * that IEEE breaks (x*0, x+0 with -0, reassociation) is used.
 */
#include <math.h>
#include <stdlib.h>

#include "ir/simplify_internal.h"

/* Child contexts one call may open (each re-simplifies a subtree): bounds the work on
 * deeply nested conditions. */
enum { REFINE_BUDGET = 64, REFINE_DEPTH = 6 };

static bool is_const(const tsl_expr *e, int64_t *v) { return tsl_expr_is_const_int(e, v); }

static bool is_true(const tsl_expr *e) {
  int64_t v;
  if (e->kind == TSL_E_BROADCAST) e = e->broadcast.value;
  return tsl_type_is_bool(e->type) && is_const(e, &v) && v == 1;
}
static bool is_false(const tsl_expr *e) {
  int64_t v;
  if (e->kind == TSL_E_BROADCAST) e = e->broadcast.value;
  return tsl_type_is_bool(e->type) && is_const(e, &v) && v == 0;
}

/* A scalar constant of t (element type) spread over `lanes`. */
static tsl_expr *const_int(tsl_type t, int64_t v, int lanes) { return tsl_broadcast(tsl_int(tsl_type_element(t), v), lanes); }
static tsl_expr *const_bool(bool v, int lanes) { return tsl_broadcast(tsl_bool(v), lanes); }

tsl_interval tsl_simp_interval(tsl_simp *c, const tsl_expr *e) { return tsl_interval_of_cached(e, c->ranges, &c->memo); }

/* ---- constant folding ---- */

static bool fold_int(tsl_expr_kind k, tsl_type t, int64_t x, int64_t y, tsl_expr **out) {
  bool u = tsl_type_is_uint(t);
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  int64_t r;
  switch (k) {
  case TSL_E_ADD: r = (int64_t)(ux + uy); break;
  case TSL_E_SUB: r = (int64_t)(ux - uy); break;
  case TSL_E_MUL: r = (int64_t)(ux * uy); break;
  case TSL_E_DIV:
    if (y == 0) return false;
    r = u ? (int64_t)(ux / uy) : tsl_floordiv64(x, y);
    break;
  case TSL_E_MOD:
    if (y == 0) return false;
    r = u ? (int64_t)(ux % uy) : tsl_floormod64(x, y);
    break;
  case TSL_E_MIN: r = (u ? ux < uy : x < y) ? x : y; break;
  case TSL_E_MAX: r = (u ? ux > uy : x > y) ? x : y; break;
  case TSL_E_EQ: *out = tsl_bool(x == y); return true;
  case TSL_E_NE: *out = tsl_bool(x != y); return true;
  case TSL_E_LT: *out = tsl_bool(u ? ux < uy : x < y); return true;
  case TSL_E_LE: *out = tsl_bool(u ? ux <= uy : x <= y); return true;
  case TSL_E_GT: *out = tsl_bool(u ? ux > uy : x > y); return true;
  case TSL_E_GE: *out = tsl_bool(u ? ux >= uy : x >= y); return true;
  case TSL_E_AND: *out = tsl_bool(x && y); return true;
  case TSL_E_OR: *out = tsl_bool(x || y); return true;
  default: return false;
  }
  *out = tsl_int(t, r);
  return true;
}

/* IR min/max propagate NaN and order -0 below +0 (llvm.minimum/maximum). */
static double ir_fminimum(double x, double y) {
  if (isnan(x) || isnan(y)) return NAN;
  if (x == y) return signbit(x) ? x : y;
  return x < y ? x : y;
}
static double ir_fmaximum(double x, double y) {
  if (isnan(x) || isnan(y)) return NAN;
  if (x == y) return signbit(x) ? y : x;
  return x > y ? x : y;
}

static bool fold_float(tsl_expr_kind k, tsl_type t, double x, double y, tsl_expr **out) {
  if (t.bits != 32 && t.bits != 64) return false;
  double r;
  switch (k) {
  case TSL_E_ADD: r = x + y; break;
  case TSL_E_SUB: r = x - y; break;
  case TSL_E_MUL: r = x * y; break;
  case TSL_E_DIV:
    if (y == 0) return false;
    r = x / y;
    break;
  case TSL_E_MIN: r = ir_fminimum(x, y); break;
  case TSL_E_MAX: r = ir_fmaximum(x, y); break;
  case TSL_E_EQ: *out = tsl_bool(x == y); return true;
  case TSL_E_NE: *out = tsl_bool(x != y); return true;
  case TSL_E_LT: *out = tsl_bool(x < y); return true;
  case TSL_E_LE: *out = tsl_bool(x <= y); return true;
  case TSL_E_GT: *out = tsl_bool(x > y); return true;
  case TSL_E_GE: *out = tsl_bool(x >= y); return true;
  default: return false;
  }
  *out = tsl_float(t, t.bits == 32 ? (double)(float)r : r);
  return true;
}

/* ---- vectors: broadcast and ramp arithmetic ---- */

static tsl_expr *simp_new(tsl_simp *c, tsl_expr *e) { return tsl_simp_expr(c, e); }

static tsl_expr *vector_binary(tsl_simp *c, tsl_expr_kind k, tsl_expr *a, tsl_expr *b) {
  int n = a->type.lanes;
  bool ba = a->kind == TSL_E_BROADCAST, bb = b->kind == TSL_E_BROADCAST;
  if (ba && bb) return tsl_broadcast(simp_new(c, tsl_binary(k, a->broadcast.value, b->broadcast.value)), n);
  bool ra = a->kind == TSL_E_RAMP, rb = b->kind == TSL_E_RAMP;
  if (!tsl_type_is_intlike(a->type)) return NULL;
  switch (k) {
  case TSL_E_ADD:
  case TSL_E_SUB:
    if (ra && rb)
      return tsl_ramp(simp_new(c, tsl_binary(k, a->ramp.base, b->ramp.base)),
                      simp_new(c, tsl_binary(k, a->ramp.stride, b->ramp.stride)), n);
    if (ra && bb) return tsl_ramp(simp_new(c, tsl_binary(k, a->ramp.base, b->broadcast.value)), a->ramp.stride, n);
    if (ba && rb) {
      tsl_expr *s = k == TSL_E_ADD ? b->ramp.stride
                                   : simp_new(c, tsl_sub(tsl_int(b->ramp.stride->type, 0), b->ramp.stride));
      return tsl_ramp(simp_new(c, tsl_binary(k, a->broadcast.value, b->ramp.base)), s, n);
    }
    return NULL;
  case TSL_E_MUL:
    if (ra && bb)
      return tsl_ramp(simp_new(c, tsl_mul(a->ramp.base, b->broadcast.value)),
                      simp_new(c, tsl_mul(a->ramp.stride, b->broadcast.value)), n);
    if (ba && rb)
      return tsl_ramp(simp_new(c, tsl_mul(a->broadcast.value, b->ramp.base)),
                      simp_new(c, tsl_mul(a->broadcast.value, b->ramp.stride)), n);
    return NULL;
  default: return NULL;
  }
}

/* A ramp whose stride became 0 is a broadcast. */
static tsl_expr *make_ramp(tsl_expr *base, tsl_expr *stride, int lanes) {
  int64_t s;
  if (is_const(stride, &s) && s == 0) return tsl_broadcast(base, lanes);
  return tsl_ramp(base, stride, lanes);
}

/* ---- node rules ---- */

static tsl_expr *rebuild_bin(tsl_expr *e, tsl_expr *a, tsl_expr *b) {
  return (a == e->bin.a && b == e->bin.b) ? e : tsl_binary(e->kind, a, b);
}

static tsl_expr *simp_arith(tsl_simp *c, tsl_expr *e) {
  tsl_type t = e->type;
  tsl_expr_kind k = e->kind;
  if (t.lanes == 1 && tsl_type_is_intlike(t) && (k == TSL_E_ADD || k == TSL_E_SUB || k == TSL_E_MUL))
    return tsl_simp_linear(c, e);
  tsl_expr *a = tsl_simp_expr(c, e->bin.a), *b = tsl_simp_expr(c, e->bin.b);
  int64_t x, y;
  tsl_expr *r;
  if (is_const(a, &x) && is_const(b, &y) && fold_int(k, t, x, y, &r)) return r;
  if (a->kind == TSL_E_FLOAT && b->kind == TSL_E_FLOAT && fold_float(k, t, a->float_value, b->float_value, &r)) return r;
  if (t.lanes > 1) {
    r = vector_binary(c, k, a, b);
    if (r) return r;
  }
  if (!tsl_type_is_intlike(t)) return rebuild_bin(e, a, b);
  if (k == TSL_E_DIV || k == TSL_E_MOD) {
    r = tsl_simp_divmod(c, k, a, b);
    return r ? r : rebuild_bin(e, a, b);
  }
  if (k == TSL_E_MIN || k == TSL_E_MAX) {
    bool is_min = k == TSL_E_MIN;
    if (tsl_expr_equal(a, b)) return a;
    tsl_interval ia = tsl_simp_interval(c, a), ib = tsl_simp_interval(c, b);
    if (!ia.empty && !ib.empty) {
      if (ia.has_hi && ib.has_lo && ia.hi <= ib.lo) return is_min ? a : b;
      if (ib.has_hi && ia.has_lo && ib.hi <= ia.lo) return is_min ? b : a;
    }
    int64_t d;
    if (t.lanes == 1 && tsl_simp_is_i64(t) && tsl_simp_difference(c, a, b, &d)) return (d <= 0) == is_min ? a : b;
    /* constants to the right, then min(min(x, c1), c2) -> min(x, min(c1, c2)) */
    if (is_const(a, &x) && !is_const(b, &y)) {
      tsl_expr *tmp = a;
      a = b;
      b = tmp;
    }
    if (a->kind == k && is_const(a->bin.b, &x) && is_const(b, &y) && fold_int(k, t, x, y, &r))
      return tsl_binary(k, a->bin.a, r);
    /* min(x, max(x, y)) -> x and max(x, min(x, y)) -> x */
    tsl_expr_kind dual = is_min ? TSL_E_MAX : TSL_E_MIN;
    if (b->kind == dual && (tsl_expr_equal(b->bin.a, a) || tsl_expr_equal(b->bin.b, a))) return a;
    if (a->kind == dual && (tsl_expr_equal(a->bin.a, b) || tsl_expr_equal(a->bin.b, b))) return b;
  }
  return tsl_binary(k, a, b);
}

static tsl_expr_kind swap_cmp(tsl_expr_kind k) { return k == TSL_E_GT ? TSL_E_LT : TSL_E_LE; }

static tsl_expr *simp_compare(tsl_simp *c, tsl_expr *e) {
  tsl_expr_kind k = e->kind;
  tsl_expr *a = tsl_simp_expr(c, e->bin.a), *b = tsl_simp_expr(c, e->bin.b);
  tsl_type ot = a->type;
  int n = ot.lanes;
  int64_t x, y;
  tsl_expr *r;
  if (is_const(a, &x) && is_const(b, &y)) {
    fold_int(k, ot, x, y, &r);
    return r;
  }
  if (a->kind == TSL_E_FLOAT && b->kind == TSL_E_FLOAT && fold_float(k, ot, a->float_value, b->float_value, &r)) return r;
  if (n > 1 && a->kind == TSL_E_BROADCAST && b->kind == TSL_E_BROADCAST)
    return tsl_broadcast(simp_new(c, tsl_binary(k, a->broadcast.value, b->broadcast.value)), n);
  if (tsl_type_is_float(ot)) return rebuild_bin(e, a, b);
  if (tsl_type_is_bool(ot) && n == 1 && (k == TSL_E_EQ || k == TSL_E_NE)) {
    /* x == true -> x, x == false -> !x, x != false -> x ... */
    if (is_const(b, &y) || is_const(a, &y)) {
      tsl_expr *v = is_const(b, &y) ? a : b;
      bool positive = (k == TSL_E_EQ) == (y != 0);
      return positive ? v : simp_new(c, tsl_not(v));
    }
  }
  if (tsl_expr_equal(a, b))
    return const_bool(k == TSL_E_EQ || k == TSL_E_LE || k == TSL_E_GE, n);
  if (k == TSL_E_GT || k == TSL_E_GE) {
    k = swap_cmp(k);
    tsl_expr *tmp = a;
    a = b;
    b = tmp;
  }
  if (n == 1 && tsl_simp_is_i64(ot)) return tsl_simp_compare_i64(c, k, a, b);
  return tsl_binary(k, a, b);
}

static tsl_expr *negate_compare(tsl_expr *a) {
  if (a->kind < TSL_E_EQ || a->kind > TSL_E_GE) return NULL; /* only comparisons have bin.a */
  tsl_type ot = a->bin.a->type;
  if (!tsl_type_is_intlike(ot)) return NULL;
  switch (a->kind) {
  case TSL_E_LT: return tsl_le(a->bin.b, a->bin.a);
  case TSL_E_LE: return tsl_lt(a->bin.b, a->bin.a);
  case TSL_E_GT: return tsl_le(a->bin.a, a->bin.b);
  case TSL_E_GE: return tsl_lt(a->bin.a, a->bin.b);
  case TSL_E_EQ: return tsl_ne(a->bin.a, a->bin.b);
  case TSL_E_NE: return tsl_eq(a->bin.a, a->bin.b);
  default: return NULL;
  }
}

/* Can e be evaluated at any point without undefined behaviour or a memory access?
 * Only such a subtree may be simplified with facts from a condition that does not
 * guard its evaluation (select evaluates both branches, && and || do not short
 * circuit): narrowing would otherwise turn a clamped index into an out-of-bounds load
 * or a guarded divisor into a division by zero. */
static bool is_total(const tsl_expr *e) {
  int64_t k;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return true;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_MIN: case TSL_E_MAX:
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR:
    return is_total(e->bin.a) && is_total(e->bin.b);
  case TSL_E_DIV:
  case TSL_E_MOD: {
    const tsl_expr *d = e->bin.b->kind == TSL_E_BROADCAST ? e->bin.b->broadcast.value : e->bin.b;
    if (tsl_type_is_float(e->type)) return is_total(e->bin.a) && is_total(e->bin.b);
    return tsl_expr_is_const_int(d, &k) && k != 0 && is_total(e->bin.a);
  }
  case TSL_E_NOT: return is_total(e->un.a);
  case TSL_E_CAST: return !tsl_type_is_float(e->un.a->type) && is_total(e->un.a);
  case TSL_E_SELECT: return is_total(e->select.cond) && is_total(e->select.t) && is_total(e->select.f);
  case TSL_E_BROADCAST: return is_total(e->broadcast.value);
  case TSL_E_RAMP: return is_total(e->ramp.base) && is_total(e->ramp.stride);
  case TSL_E_LET: return is_total(e->let.value) && is_total(e->let.body);
  default: return false;
  }
}

/* e simplified knowing cond == truth (a simplified scalar bool), in a child context
 * with narrowed ranges; e must only matter where cond == truth. */
static tsl_expr *simp_refined(tsl_simp *c, tsl_expr *e, const tsl_expr *cond, bool truth) {
  if (c->depth < REFINE_DEPTH && *c->budget > 0 && cond->type.lanes == 1 && is_total(e)) {
    tsl_var_ranges *r = tsl_ranges_refine(cond, truth, c->ranges);
    if (r) {
      (*c->budget)--;
      tsl_simp sub = {r, {0}, c->subst, c->depth + 1, c->budget};
      tsl_memo_init(&sub.memo);
      tsl_expr *out = tsl_simp_expr(&sub, e);
      tsl_memo_free(&sub.memo);
      return out;
    }
  }
  return tsl_simp_expr(c, e);
}

static tsl_expr *simp_logic(tsl_simp *c, tsl_expr *e) {
  int n = e->type.lanes;
  if (e->kind == TSL_E_NOT) {
    tsl_expr *a = tsl_simp_expr(c, e->un.a);
    if (is_true(a)) return const_bool(false, n);
    if (is_false(a)) return const_bool(true, n);
    if (a->kind == TSL_E_NOT) return a->un.a;
    if (a->kind == TSL_E_BROADCAST) return tsl_broadcast(simp_new(c, tsl_not(a->broadcast.value)), n);
    tsl_expr *r = negate_compare(a);
    if (r) return simp_new(c, r);
    return a == e->un.a ? e : tsl_not(a);
  }
  bool is_and = e->kind == TSL_E_AND;
  /* b matters only where a is true (&&) or false (||) */
  tsl_expr *a = tsl_simp_expr(c, e->bin.a), *b = simp_refined(c, e->bin.b, a, is_and);
  if (is_and) {
    if (is_false(a) || is_false(b)) return const_bool(false, n);
    if (is_true(a)) return b;
    if (is_true(b)) return a;
  } else {
    if (is_true(a) || is_true(b)) return const_bool(true, n);
    if (is_false(a)) return b;
    if (is_false(b)) return a;
  }
  if (tsl_expr_equal(a, b)) return a;
  /* x && !x -> false, x || !x -> true */
  if ((b->kind == TSL_E_NOT && tsl_expr_equal(b->un.a, a)) || (a->kind == TSL_E_NOT && tsl_expr_equal(a->un.a, b)))
    return const_bool(!is_and, n);
  if (n > 1 && a->kind == TSL_E_BROADCAST && b->kind == TSL_E_BROADCAST)
    return tsl_broadcast(simp_new(c, tsl_binary(e->kind, a->broadcast.value, b->broadcast.value)), n);
  return rebuild_bin(e, a, b);
}

static tsl_expr *simp_select(tsl_simp *c, tsl_expr *e) {
  tsl_expr *k = tsl_simp_expr(c, e->select.cond);
  if (is_true(k)) return tsl_simp_expr(c, e->select.t);
  if (is_false(k)) return tsl_simp_expr(c, e->select.f);
  tsl_expr *t = simp_refined(c, e->select.t, k, true), *f = simp_refined(c, e->select.f, k, false);
  if (tsl_expr_equal(t, f)) return t;
  /* select(a < b, a, b) -> min(a, b) and the like (integers: no NaN) */
  if (t->type.lanes == 1 && tsl_type_is_intlike(t->type) && (k->kind == TSL_E_LT || k->kind == TSL_E_LE)) {
    if (tsl_expr_equal(k->bin.a, t) && tsl_expr_equal(k->bin.b, f)) return simp_new(c, tsl_min(t, f));
    if (tsl_expr_equal(k->bin.a, f) && tsl_expr_equal(k->bin.b, t)) return simp_new(c, tsl_max(t, f));
  }
  if (k->kind == TSL_E_NOT) {
    k = k->un.a;
    tsl_expr *tmp = t;
    t = f;
    f = tmp;
  }
  if (tsl_type_is_bool(t->type) && k->type.lanes == t->type.lanes) {
    if (is_true(t) && is_false(f)) return k;
    if (is_false(t) && is_true(f)) return simp_new(c, tsl_not(k));
  }
  int n = t->type.lanes;
  if (n > 1 && t->kind == TSL_E_BROADCAST && f->kind == TSL_E_BROADCAST &&
      (k->type.lanes == 1 || k->kind == TSL_E_BROADCAST)) {
    tsl_expr *sk = k->kind == TSL_E_BROADCAST ? k->broadcast.value : k;
    return tsl_broadcast(simp_new(c, tsl_select(sk, t->broadcast.value, f->broadcast.value)), n);
  }
  if (k == e->select.cond && t == e->select.t && f == e->select.f) return e;
  return tsl_select(k, t, f);
}

static tsl_expr *fold_cast(tsl_type to, tsl_expr *a) {
  tsl_type from = a->type;
  if (a->kind == TSL_E_INT) {
    int64_t v = a->int_value;
    if (tsl_type_is_intlike(to)) return tsl_int(to, v);
    if (tsl_type_is_float(to) && to.bits != 16) {
      if (tsl_type_is_bool(from)) return tsl_float(to, v ? 1.0 : 0.0);
      /* convert once, straight to the target precision */
      if (to.bits == 32) return tsl_float(to, tsl_type_is_uint(from) ? (double)(float)(uint64_t)v : (double)(float)v);
      return tsl_float(to, tsl_type_is_uint(from) ? (double)(uint64_t)v : (double)v);
    }
    return NULL;
  }
  if (a->kind == TSL_E_FLOAT) {
    double v = a->float_value;
    if (tsl_type_is_float(to) && to.bits != 16) return tsl_float(to, v);
    if (tsl_type_is_intlike(to) && !isnan(v)) {
      double tv = trunc(v);
      /* fold only values the target holds: out-of-range conversion is poison */
      if (tsl_type_is_int(to)) {
        double lo = -ldexp(1.0, to.bits - 1), hi = ldexp(1.0, to.bits - 1);
        if (tv >= lo && tv < hi) return tsl_int(to, (int64_t)tv);
      } else if (tv > -1.0 && tv < ldexp(1.0, to.bits)) {
        return tsl_int(to, (int64_t)(uint64_t)tv);
      }
    }
  }
  return NULL;
}

static tsl_expr *simp_cast(tsl_simp *c, tsl_expr *e) {
  tsl_expr *a = tsl_simp_expr(c, e->un.a);
  tsl_type to = tsl_type_element(e->type);
  if (a->kind == TSL_E_BROADCAST)
    return tsl_broadcast(simp_new(c, tsl_cast(to, a->broadcast.value)), e->type.lanes);
  tsl_expr *r = fold_cast(to, a);
  if (r) return r;
  /* an integer value that fits the target type converts exactly */
  if (tsl_type_is_intlike(to) && tsl_type_is_intlike(a->type) && a->kind == TSL_E_CAST &&
      tsl_type_eq(tsl_type_element(a->un.a->type), to)) {
    tsl_interval iv = tsl_simp_interval(c, a->un.a), tv = tsl_interval_of_type(tsl_type_element(a->type));
    /* cast(T, cast(U, x)) with x of type T and every value of x held by U -> x */
    if (!iv.empty && iv.has_lo && iv.has_hi && tv.has_lo && iv.lo >= tv.lo && (!tv.has_hi || iv.hi <= tv.hi)) return a->un.a;
  }
  return a == e->un.a ? e : tsl_cast(to, a);
}

static tsl_expr *simp_with_ranges(tsl_simp *c, tsl_expr *e, tsl_var_ranges *r) {
  const tsl_var_ranges *saved = c->ranges;
  c->ranges = r;
  tsl_expr *out = tsl_simp_expr(c, e);
  c->ranges = saved;
  return out;
}

static tsl_expr *simp_let(tsl_simp *c, tsl_expr *e) {
  tsl_expr *v = tsl_simp_expr(c, e->let.value);
  tsl_expr *var = e->let.var;
  if (v->kind == TSL_E_INT || v->kind == TSL_E_FLOAT || v->kind == TSL_E_VAR || !tsl_expr_uses_var(e->let.body, var)) {
    tsl_memo_get(c->subst, var, true)->simplified = v;
    return tsl_simp_expr(c, e->let.body);
  }
  tsl_var_ranges *r = tsl_var_ranges_copy(c->ranges);
  if (tsl_type_is_intlike(v->type) || tsl_type_is_bool(v->type)) tsl_var_ranges_set(r, var, tsl_simp_interval(c, v));
  tsl_expr *body = simp_with_ranges(c, e->let.body, r);
  if (!tsl_expr_uses_var(body, var)) return body;
  if (v == e->let.value && body == e->let.body) return e;
  return tsl_let(var, v, body);
}

static tsl_expr *simp_reduce(tsl_simp *c, tsl_expr *e) {
  tsl_var_ranges *r = tsl_var_ranges_copy(c->ranges);
  for (int i = 0; i < e->reduce.naxes; i++) {
    const tsl_iter_var *ax = &e->reduce.axes[i];
    if (ax->extent <= 0) return tsl_reduce_identity(e->reduce.combiner, e->type);
    tsl_var_ranges_set(r, ax->var, tsl_interval_range(ax->min, ax->min + ax->extent - 1));
  }
  tsl_expr *cond = e->reduce.condition ? simp_with_ranges(c, e->reduce.condition, r) : NULL;
  if (cond && is_false(cond)) return tsl_reduce_identity(e->reduce.combiner, e->type);
  if (cond && is_true(cond)) cond = NULL;
  tsl_expr *src = simp_with_ranges(c, e->reduce.source, r);
  if (src == e->reduce.source && cond == e->reduce.condition) return e;
  return tsl_reduce(e->reduce.combiner, src, e->reduce.naxes, e->reduce.axes, cond);
}

static tsl_expr *simp_load(tsl_simp *c, tsl_expr *e) {
  int n = e->load.nindex;
  tsl_expr **idx = tsl_alloc(sizeof *idx * (size_t)n);
  bool changed = false;
  for (int i = 0; i < n; i++) {
    idx[i] = tsl_simp_expr(c, e->load.index[i]);
    changed |= idx[i] != e->load.index[i];
  }
  tsl_expr *p = e->load.predicate ? tsl_simp_expr(c, e->load.predicate) : NULL;
  if (p && is_true(p)) p = NULL;
  if (!changed && p == e->load.predicate) return e;
  return tsl_load(e->load.buf, n, idx, p);
}

static tsl_expr *fold_call(tsl_intrinsic op, tsl_type t, int n, tsl_expr *const *a) {
  if (t.lanes != 1) return NULL;
  int64_t x, y;
  if (tsl_type_is_intlike(t)) {
    bool u = tsl_type_is_uint(t);
    uint64_t mask = t.bits >= 64 ? ~0ull : (1ull << t.bits) - 1;
    if (n == 1 && is_const(a[0], &x)) {
      switch (op) {
      case TSL_CALL_POPCOUNT: return tsl_int(t, __builtin_popcountll((uint64_t)x & mask));
      case TSL_CALL_BIT_NOT: return tsl_int(t, ~x);
      case TSL_CALL_ABS: return tsl_int(t, (!u && x < 0) ? (int64_t)(0 - (uint64_t)x) : x);
      default: return NULL;
      }
    }
    if (n == 2 && is_const(a[0], &x) && is_const(a[1], &y)) {
      switch (op) {
      case TSL_CALL_BIT_AND: return tsl_int(t, x & y);
      case TSL_CALL_BIT_OR: return tsl_int(t, x | y);
      case TSL_CALL_BIT_XOR: return tsl_int(t, x ^ y);
      case TSL_CALL_SHL:
        if (y < 0 || y >= t.bits) return NULL;
        return tsl_int(t, (int64_t)((uint64_t)x << y));
      case TSL_CALL_SHR:
        if (y < 0 || y >= t.bits) return NULL;
        return tsl_int(t, u ? (int64_t)(((uint64_t)x & mask) >> y) : x >> y);
      default: return NULL;
      }
    }
    return NULL;
  }
  if (tsl_type_is_bool(t) && op == TSL_CALL_ISNAN && n == 1 && a[0]->kind == TSL_E_FLOAT)
    return tsl_bool(isnan(a[0]->float_value));
  if (!tsl_type_is_float(t) || (t.bits != 32 && t.bits != 64)) return NULL;
  for (int i = 0; i < n; i++)
    if (a[i]->kind != TSL_E_FLOAT) return NULL;
  bool f32 = t.bits == 32;
  double v = n ? a[0]->float_value : 0, r;
  switch (op) {
  case TSL_CALL_FMA:
    if (n != 3) return NULL;
    r = f32 ? (double)fmaf((float)v, (float)a[1]->float_value, (float)a[2]->float_value)
            : fma(v, a[1]->float_value, a[2]->float_value);
    break;
  case TSL_CALL_SQRT: r = f32 ? (double)sqrtf((float)v) : sqrt(v); break;
  case TSL_CALL_FLOOR: r = floor(v); break;
  case TSL_CALL_CEIL: r = ceil(v); break;
  case TSL_CALL_ROUND: r = nearbyint(v); break; /* default rounding: half to even */
  case TSL_CALL_ABS: r = fabs(v); break;
  default: return NULL;
  }
  return tsl_float(t, r);
}

static tsl_expr *simp_call(tsl_simp *c, tsl_expr *e) {
  int n = e->call.nargs;
  tsl_expr **args = n ? tsl_alloc(sizeof *args * (size_t)n) : NULL;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    args[i] = tsl_simp_expr(c, e->call.args[i]);
    changed |= args[i] != e->call.args[i];
  }
  if (e->call.op == TSL_CALL_LIKELY && n == 1 && (is_true(args[0]) || is_false(args[0]))) return args[0];
  tsl_expr *r = fold_call(e->call.op, e->type, n, args);
  if (r) return r;
  return changed ? tsl_call(e->call.op, e->type, n, args) : e;
}

static tsl_expr *simp_compute(tsl_simp *c, tsl_expr *e) {
  switch (e->kind) {
  case TSL_E_INT:
  case TSL_E_FLOAT: return e;
  case TSL_E_VAR: {
    tsl_memo_entry *m = tsl_memo_get(c->subst, e, false);
    return m && m->simplified ? m->simplified : e;
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX:
    return simp_arith(c, e);
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
    return simp_compare(c, e);
  case TSL_E_AND: case TSL_E_OR: case TSL_E_NOT:
    return simp_logic(c, e);
  case TSL_E_SELECT: return simp_select(c, e);
  case TSL_E_CAST: return simp_cast(c, e);
  case TSL_E_BROADCAST: {
    tsl_expr *v = tsl_simp_expr(c, e->broadcast.value);
    return v == e->broadcast.value ? e : tsl_broadcast(v, e->broadcast.lanes);
  }
  case TSL_E_RAMP: {
    tsl_expr *b = tsl_simp_expr(c, e->ramp.base), *s = tsl_simp_expr(c, e->ramp.stride);
    if (b == e->ramp.base && s == e->ramp.stride) return e;
    return make_ramp(b, s, e->ramp.lanes);
  }
  case TSL_E_LOAD: return simp_load(c, e);
  case TSL_E_CALL: return simp_call(c, e);
  case TSL_E_LET: return simp_let(c, e);
  case TSL_E_REDUCE: return simp_reduce(c, e);
  }
  return e;
}

/* Any integer/bool node with a one-value interval is that constant. */
static tsl_expr *fold_point(tsl_simp *c, tsl_expr *r) {
  if (r->kind == TSL_E_INT || !(tsl_type_is_intlike(r->type) || tsl_type_is_bool(r->type))) return r;
  if (r->kind == TSL_E_BROADCAST && r->broadcast.value->kind == TSL_E_INT) return r;
  tsl_interval iv = tsl_simp_interval(c, r);
  if (iv.empty || !iv.has_lo || !iv.has_hi || iv.lo != iv.hi) return r;
  return const_int(r->type, iv.lo, r->type.lanes);
}

tsl_expr *tsl_simp_expr(tsl_simp *c, tsl_expr *e) {
  tsl_memo_entry *m = tsl_memo_get(&c->memo, e, false);
  if (m && m->simplified) return m->simplified;
  tsl_expr *r = fold_point(c, simp_compute(c, e));
  tsl_memo_get(&c->memo, e, true)->simplified = r;
  /* a result is its own simplified form: do not rework it when it comes back */
  tsl_memo_entry *self = tsl_memo_get(&c->memo, r, true);
  if (!self->simplified) self->simplified = r;
  return r;
}

tsl_expr *tsl_simplify(tsl_expr *e, const tsl_var_ranges *ranges) {
  if (!e) return NULL;
  tsl_memo subst;
  int budget = REFINE_BUDGET;
  tsl_memo_init(&subst);
  tsl_simp c = {ranges, {0}, &subst, 0, &budget};
  tsl_memo_init(&c.memo);
  tsl_expr *r = tsl_simp_expr(&c, e);
  tsl_memo_free(&c.memo);
  tsl_memo_free(&subst);
  return r;
}

static int decide(tsl_expr *cond, const tsl_var_ranges *ranges) {
  tsl_expr *r = tsl_simplify(cond, ranges);
  if (is_true(r)) return 1;
  if (is_false(r)) return 0;
  return -1;
}

bool tsl_prove(tsl_expr *cond, const tsl_var_ranges *ranges) { return decide(cond, ranges) == 1; }
bool tsl_disprove(tsl_expr *cond, const tsl_var_ranges *ranges) { return decide(cond, ranges) == 0; }
