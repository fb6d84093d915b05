/* Interval (bound) analysis of integer expressions and the variable-range map.
 *
 * Bounds are computed in 128-bit arithmetic with a saturating "infinity", so no
 * intermediate overflows; a bound that leaves the int64 range becomes "unbounded".
 * Integer types narrower than 64 bits wrap (ir.h), so any result that may leave the
 * type's range is widened to the whole type range. i64 index arithmetic is assumed
 * not to overflow (ir.h contract), so its results are only saturated.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/analysis_internal.h"

/* ---- public interval helpers ------------------------------------------------ */

tsl_interval tsl_interval_point(int64_t v) { return tsl_interval_range(v, v); }

tsl_interval tsl_interval_range(int64_t lo, int64_t hi) {
  tsl_interval r = {lo, hi, true, true, lo > hi};
  return r;
}

tsl_interval tsl_interval_everything(void) {
  tsl_interval r = {0, 0, false, false, false};
  return r;
}

tsl_interval tsl_interval_union(tsl_interval a, tsl_interval b) {
  if (a.empty) return b;
  if (b.empty) return a;
  tsl_interval r;
  r.empty = false;
  r.has_lo = a.has_lo && b.has_lo;
  r.lo = r.has_lo ? (a.lo < b.lo ? a.lo : b.lo) : 0;
  r.has_hi = a.has_hi && b.has_hi;
  r.hi = r.has_hi ? (a.hi > b.hi ? a.hi : b.hi) : 0;
  return r;
}

/* ---- floor division on int64 ---------------------------------------------- */

int64_t tsl_floordiv64(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0 - (uint64_t)a); /* INT64_MIN / -1 wraps */
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

int64_t tsl_floormod64(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* ---- variable ranges --------------------------------------------------------- */

typedef struct range_slot {
  const tsl_expr *var;
  tsl_interval r;
} range_slot;

struct tsl_var_ranges {
  range_slot *slots;
  size_t cap, n;
};

static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

tsl_var_ranges *tsl_var_ranges_new(void) {
  tsl_var_ranges *m = tsl_alloc(sizeof *m);
  m->cap = 16;
  m->slots = tsl_alloc(sizeof(range_slot) * m->cap);
  return m;
}

static range_slot *ranges_find(const tsl_var_ranges *m, const tsl_expr *var) {
  size_t mask = m->cap - 1;
  for (size_t i = ptr_hash(var) & mask;; i = (i + 1) & mask) {
    range_slot *s = &m->slots[i];
    if (s->var == var || s->var == NULL) return s;
  }
}

void tsl_var_ranges_set(tsl_var_ranges *m, const tsl_expr *var, tsl_interval r) {
  if ((m->n + 1) * 2 > m->cap) {
    range_slot *old = m->slots;
    size_t oldcap = m->cap;
    m->cap *= 2;
    m->slots = tsl_alloc(sizeof(range_slot) * m->cap);
    for (size_t i = 0; i < oldcap; i++)
      if (old[i].var) *ranges_find(m, old[i].var) = old[i];
  }
  range_slot *s = ranges_find(m, var);
  if (!s->var) m->n++;
  s->var = var;
  s->r = r;
}

bool tsl_var_ranges_get(const tsl_var_ranges *m, const tsl_expr *var, tsl_interval *out) {
  if (!m) return false;
  range_slot *s = ranges_find(m, var);
  if (!s->var) return false;
  if (out) *out = s->r;
  return true;
}

tsl_var_ranges *tsl_var_ranges_copy(const tsl_var_ranges *m) {
  tsl_var_ranges *c = tsl_alloc(sizeof *c);
  if (!m) {
    c->cap = 16;
    c->slots = tsl_alloc(sizeof(range_slot) * c->cap);
    return c;
  }
  c->cap = m->cap;
  c->n = m->n;
  c->slots = tsl_memdup(m->slots, sizeof(range_slot) * m->cap);
  return c;
}

/* ---- memo (see analysis_internal.h) -------------------------------------- */

void tsl_memo_init(tsl_memo *m) { memset(m, 0, sizeof *m); }

void tsl_memo_free(tsl_memo *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

static tsl_memo_entry *memo_probe(tsl_memo_entry *slots, size_t cap, const void *key) {
  size_t mask = cap - 1;
  for (size_t i = ptr_hash(key) & mask;; i = (i + 1) & mask)
    if (slots[i].key == key || slots[i].key == NULL) return &slots[i];
}

tsl_memo_entry *tsl_memo_get(tsl_memo *m, const void *key, bool create) {
  if (m->cap) {
    tsl_memo_entry *e = memo_probe(m->slots, m->cap, key);
    if (e->key) return e;
    if (!create) return NULL;
  } else if (!create) {
    return NULL;
  }
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    tsl_memo_entry *slots = calloc(cap, sizeof *slots);
    if (!slots) {
      fprintf(stderr, "tessel: out of memory (simplifier cache)\n");
      abort();
    }
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].key) *memo_probe(slots, cap, m->slots[i].key) = m->slots[i];
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
  }
  tsl_memo_entry *e = memo_probe(m->slots, m->cap, key);
  e->key = key;
  m->n++;
  return e;
}

/* ---- extended bounds ------------------------------------------------------- */

typedef __int128 xint;
#define XINF ((xint)1 << 100)
#define XBIG ((xint)1 << 65) /* magnitudes beyond this are "infinite" */

typedef struct xi {
  xint lo, hi;
  bool empty;
} xi;

static xint sat(xint v) { return v >= XBIG ? XINF : v <= -XBIG ? -XINF : v; }
static bool is_inf(xint v) { return v >= XINF || v <= -XINF; }
static xint xmin(xint a, xint b) { return a < b ? a : b; }
static xint xmax(xint a, xint b) { return a > b ? a : b; }

static xint xadd(xint a, xint b) {
  if (is_inf(a)) return a;
  if (is_inf(b)) return b;
  return sat(a + b);
}
static xint xneg(xint a) { return -a; }
static xint xmul(xint a, xint b) {
  if (a == 0 || b == 0) return 0;
  if (is_inf(a) || is_inf(b)) return ((a < 0) != (b < 0)) ? -XINF : XINF;
  xint r;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? -XINF : XINF;
  return sat(r);
}
/* floor(a / b) for finite b != 0; a may be infinite. */
static xint xfloordiv(xint a, xint b) {
  if (is_inf(a)) return ((a < 0) != (b < 0)) ? -XINF : XINF;
  xint q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static xi xi_make(xint lo, xint hi) {
  xi r = {lo, hi, false};
  return r;
}
static xi xi_empty(void) {
  xi r = {0, 0, true};
  return r;
}
static xi xi_all(void) { return xi_make(-XINF, XINF); }
static xi xi_union(xi a, xi b) {
  if (a.empty) return b;
  if (b.empty) return a;
  return xi_make(xmin(a.lo, b.lo), xmax(a.hi, b.hi));
}

static xi from_tsl(tsl_interval t) {
  if (t.empty) return xi_empty();
  return xi_make(t.has_lo ? (xint)t.lo : -XINF, t.has_hi ? (xint)t.hi : XINF);
}

/* Weakens bounds that do not fit int64 (e.g. u64 values >= 2^63) to what fits. */
static tsl_interval to_tsl(xi x) {
  tsl_interval r = {0, 0, false, false, x.empty};
  if (x.empty) return r;
  if (x.lo > (xint)INT64_MAX) {
    r.has_lo = true;
    r.lo = INT64_MAX;
  } else if (x.lo >= (xint)INT64_MIN) {
    r.has_lo = true;
    r.lo = (int64_t)x.lo;
  }
  if (x.hi < (xint)INT64_MIN) {
    r.has_hi = true;
    r.hi = INT64_MIN;
  } else if (x.hi <= (xint)INT64_MAX) {
    r.has_hi = true;
    r.hi = (int64_t)x.hi;
  }
  return r;
}

static bool is_i64(tsl_type t) { return t.code == TSL_TYPE_INT && t.bits == 64; }

/* The exact value set of a type: i64 is [INT64_MIN, INT64_MAX], u64 [0, 2^64-1]. */
static xi type_values(tsl_type t) {
  switch ((tsl_type_code)t.code) {
  case TSL_TYPE_BOOL: return xi_make(0, 1);
  case TSL_TYPE_INT: return xi_make(-((xint)1 << (t.bits - 1)), ((xint)1 << (t.bits - 1)) - 1);
  case TSL_TYPE_UINT: return xi_make(0, ((xint)1 << t.bits) - 1);
  default: return xi_all();
  }
}

static xi type_range(tsl_type t) { return is_i64(t) ? xi_all() : type_values(t); }

tsl_interval tsl_interval_of_type(tsl_type t) { return to_tsl(type_range(t)); }

/* The result of arithmetic in type t: wraps (so becomes the whole type) when the
 * exact result may leave the type, except for i64 (assumed not to overflow). */
static xi fit(tsl_type t, xi x) {
  if (x.empty || is_i64(t)) return x;
  if (!tsl_type_is_intlike(t) && !tsl_type_is_bool(t)) return xi_all();
  xi tr = type_values(t);
  if (x.lo < tr.lo || x.hi > tr.hi) return tr;
  return x;
}

static xi xi_mul(xi a, xi b) {
  xint c[4] = {xmul(a.lo, b.lo), xmul(a.lo, b.hi), xmul(a.hi, b.lo), xmul(a.hi, b.hi)};
  xi r = xi_make(c[0], c[0]);
  for (int i = 1; i < 4; i++) r = xi_union(r, xi_make(c[i], c[i]));
  return r;
}

/* floor(a / b) over all a in A and the b in B other than 0; B holds some b != 0 and
 * neither of its ends is 0. */
static xi xi_div_nonzero(xi a, xi b) {
  if (b.lo > 0 || b.hi < 0) {
    /* b has one sign: floor(a/b) is monotone in a and in b, so the extremes are at
     * the corners; an infinite end of b contributes its limits 0 and -1. */
    xi r = xi_empty();
    xint bs[2] = {b.lo, b.hi};
    xint as[2] = {a.lo, a.hi};
    for (int i = 0; i < 2; i++) {
      if (is_inf(bs[i])) {
        r = xi_union(r, xi_make(-1, 0));
        continue;
      }
      for (int j = 0; j < 2; j++) {
        xint q = xfloordiv(as[j], bs[i]);
        r = xi_union(r, xi_make(q, q));
      }
    }
    return r;
  }
  /* b may take either sign: |floor(a/b)| <= |a| since |b| >= 1. */
  if (is_inf(a.lo) || is_inf(a.hi)) return xi_all();
  xint m = xmax(-a.lo, a.hi);
  return xi_make(-m, m);
}

/* a / b over all a in A, b in B, where a zero divisor gives 0 (ir/ir.h): a divisor that
 * may be 0 adds 0 to the quotients of the others. */
static xi xi_div(xi a, xi b) {
  bool may_be_zero = b.lo <= 0 && b.hi >= 0;
  if (b.lo == 0) b.lo = 1;
  if (b.hi == 0) b.hi = -1;
  /* only b == 0: the quotient is 0, but the interval stays unbounded so that no pass
   * folds a constant zero divisor away (the DSL and the codegen refuse one, ir/ir.h) */
  if (b.lo > b.hi) return xi_all();
  xi r = xi_div_nonzero(a, b);
  return may_be_zero ? xi_union(r, xi_make(0, 0)) : r;
}

static xi xi_mod(xi a, xi b) {
  /* a zero divisor gives 0 (ir/ir.h), which every range below for the other divisors
   * holds already */
  if (b.lo == 0) b.lo = 1;
  if (b.hi == 0) b.hi = -1;
  if (b.lo > b.hi) return xi_all(); /* only b == 0: unbounded, as for division */
  if (b.lo == b.hi && b.lo != 0 && !is_inf(b.lo)) {
    xint c = b.lo;
    if (!is_inf(a.lo) && !is_inf(a.hi) && xfloordiv(a.lo, c) == xfloordiv(a.hi, c)) {
      xint k = xfloordiv(a.lo, c);
      return xi_make(a.lo - k * c, a.hi - k * c);
    }
    xi r = c > 0 ? xi_make(0, c - 1) : xi_make(c + 1, 0);
    if (c > 0 && a.lo >= 0) r.hi = xmin(r.hi, a.hi);
    return r;
  }
  if (b.lo > 0) {
    xi r = xi_make(0, is_inf(b.hi) ? XINF : b.hi - 1);
    if (a.lo >= 0) r.hi = xmin(r.hi, a.hi);
    return r;
  }
  if (b.hi < 0) return xi_make(is_inf(b.lo) ? -XINF : b.lo + 1, 0);
  xint lo = is_inf(b.lo) ? -XINF : xmin(b.lo + 1, 0);
  xint hi = is_inf(b.hi) ? XINF : xmax(b.hi - 1, 0);
  return xi_make(lo, hi);
}

/* 1 = always true, 0 = always false, -1 = unknown; a and b non-empty. */
static int decide_cmp(tsl_expr_kind k, xi a, xi b) {
  switch (k) {
  case TSL_E_LT: return a.hi < b.lo ? 1 : a.lo >= b.hi ? 0 : -1;
  case TSL_E_LE: return a.hi <= b.lo ? 1 : a.lo > b.hi ? 0 : -1;
  case TSL_E_GT: return a.lo > b.hi ? 1 : a.hi <= b.lo ? 0 : -1;
  case TSL_E_GE: return a.lo >= b.hi ? 1 : a.hi < b.lo ? 0 : -1;
  case TSL_E_EQ:
  case TSL_E_NE: {
    int eq = (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo && !is_inf(a.lo)) ? 1
             : (a.hi < b.lo || b.hi < a.lo)                               ? 0
                                                                          : -1;
    if (eq < 0 || k == TSL_E_EQ) return eq;
    return !eq;
  }
  default: return -1;
  }
}

static xi bool_xi(int v) { return v < 0 ? xi_make(0, 1) : xi_make(v, v); }

typedef struct ictx {
  const tsl_var_ranges *ranges;
  tsl_memo *memo;  /* NULL until worth it (see ival) */
  tsl_memo *own;   /* a memo this call made itself, freed by its caller */
  size_t visits;
} ictx;

static xi ival(const tsl_expr *e, ictx *c);

static xi ival_with_axis(const tsl_expr *body, ictx *c, int n, const tsl_expr *const *vars, const xi *rs) {
  tsl_var_ranges *r2 = tsl_var_ranges_copy(c->ranges);
  for (int i = 0; i < n; i++) tsl_var_ranges_set(r2, vars[i], to_tsl(rs[i]));
  ictx c2 = {r2, c->memo, c->own, c->visits};
  xi r = ival(body, &c2);
  c->memo = c2.memo; /* the body may have switched the cache on */
  c->visits = c2.visits;
  return r;
}

static xi ival_call(const tsl_expr *e, ictx *c) {
  tsl_type t = tsl_type_element(e->type);
  const tsl_expr *const *args = (const tsl_expr *const *)e->call.args;
  int n = e->call.nargs;
  bool intlike = tsl_type_is_intlike(t);
  switch (e->call.op) {
  case TSL_CALL_POPCOUNT:
    if (intlike) return xi_make(0, t.bits);
    break;
  case TSL_CALL_ABS:
    if (intlike && n == 1) {
      xi a = ival(args[0], c);
      if (a.empty) return a;
      xint m = xmax(a.hi < 0 ? -a.hi : a.hi, a.lo < 0 ? -a.lo : a.lo);
      xint lo = (a.lo <= 0 && a.hi >= 0) ? 0 : xmin(a.hi < 0 ? -a.hi : a.hi, a.lo < 0 ? -a.lo : a.lo);
      return fit(t, xi_make(lo, m));
    }
    break;
  case TSL_CALL_SHR:
  case TSL_CALL_SHL: {
    int64_t k;
    if (intlike && n == 2 && tsl_expr_is_const_int(args[1], &k) && k >= 0 && k < t.bits && k < 62) {
      xi a = ival(args[0], c);
      if (a.empty) return a;
      /* unsigned operands are non-negative, so both shifts act as floor mul/div by 2^k */
      xi p = xi_make((xint)1 << k, (xint)1 << k);
      return fit(t, e->call.op == TSL_CALL_SHL ? xi_mul(a, p) : xi_div(a, p));
    }
    break;
  }
  case TSL_CALL_BIT_AND:
    if (intlike && n == 2) {
      xi a = ival(args[0], c), b = ival(args[1], c);
      if (a.empty || b.empty) return xi_empty();
      if (a.lo >= 0 && b.lo >= 0) return xi_make(0, xmin(a.hi, b.hi));
      if (a.lo >= 0) return xi_make(0, a.hi);
      if (b.lo >= 0) return xi_make(0, b.hi);
    }
    break;
  case TSL_CALL_LIKELY:
    if (n == 1) return ival(args[0], c);
    break;
  case TSL_CALL_ISNAN: return xi_make(0, 1);
  default: break;
  }
  return type_range(t);
}

static xi ival_compute(const tsl_expr *e, ictx *c) {
  tsl_type t = tsl_type_element(e->type);
  switch (e->kind) {
  case TSL_E_INT:
    if (tsl_type_is_uint(t) && t.bits == 64) return xi_make((xint)(uint64_t)e->int_value, (xint)(uint64_t)e->int_value);
    return xi_make(e->int_value, e->int_value);
  case TSL_E_FLOAT: return xi_all();
  case TSL_E_VAR: {
    tsl_interval r;
    if (tsl_var_ranges_get(c->ranges, e, &r)) {
      xi x = from_tsl(r);
      if (x.empty) return x;
      /* a range never widens what the type can hold */
      xi tr = type_values(t);
      if (tsl_type_is_intlike(t) || tsl_type_is_bool(t)) {
        x.lo = xmax(x.lo, tr.lo);
        x.hi = xmin(x.hi, tr.hi);
        if (x.lo > x.hi) return xi_empty();
      }
      return x;
    }
    return type_range(t);
  }
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_MIN: case TSL_E_MAX: {
    if (!tsl_type_is_intlike(t)) return xi_all();
    xi a = ival(e->bin.a, c), b = ival(e->bin.b, c);
    if (a.empty || b.empty) return xi_empty();
    xi r;
    switch (e->kind) {
    case TSL_E_ADD: r = xi_make(xadd(a.lo, b.lo), xadd(a.hi, b.hi)); break;
    case TSL_E_SUB: r = xi_make(xadd(a.lo, xneg(b.hi)), xadd(a.hi, xneg(b.lo))); break;
    case TSL_E_MUL: r = xi_mul(a, b); break;
    case TSL_E_DIV: r = xi_div(a, b); break;
    case TSL_E_MOD: r = xi_mod(a, b); break;
    case TSL_E_MIN: r = xi_make(xmin(a.lo, b.lo), xmin(a.hi, b.hi)); break;
    default: r = xi_make(xmax(a.lo, b.lo), xmax(a.hi, b.hi)); break;
    }
    return fit(t, r);
  }
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE: {
    tsl_type ot = e->bin.a->type;
    if (!tsl_type_is_intlike(ot) && !tsl_type_is_bool(ot)) return xi_make(0, 1);
    xi a = ival(e->bin.a, c), b = ival(e->bin.b, c);
    if (a.empty || b.empty) return xi_empty();
    return bool_xi(decide_cmp(e->kind, a, b));
  }
  case TSL_E_AND:
  case TSL_E_OR: {
    xi a = ival(e->bin.a, c), b = ival(e->bin.b, c);
    if (a.empty || b.empty) return xi_empty();
    if (e->kind == TSL_E_AND) {
      if (a.hi == 0 || b.hi == 0) return xi_make(0, 0);
      if (a.lo == 1 && b.lo == 1) return xi_make(1, 1);
    } else {
      if (a.lo == 1 || b.lo == 1) return xi_make(1, 1);
      if (a.hi == 0 && b.hi == 0) return xi_make(0, 0);
    }
    return xi_make(0, 1);
  }
  case TSL_E_NOT: {
    xi a = ival(e->un.a, c);
    if (a.empty) return a;
    return xi_make(1 - a.hi, 1 - a.lo);
  }
  case TSL_E_SELECT: {
    xi k = ival(e->select.cond, c);
    if (k.empty) return k;
    if (k.lo == 1) return ival(e->select.t, c);
    if (k.hi == 0) return ival(e->select.f, c);
    return xi_union(ival(e->select.t, c), ival(e->select.f, c));
  }
  case TSL_E_CAST: {
    tsl_type st = tsl_type_element(e->un.a->type);
    if (tsl_type_is_bool(t)) return xi_make(0, 1);
    if (!tsl_type_is_intlike(t)) return xi_all();
    if (!tsl_type_is_intlike(st) && !tsl_type_is_bool(st)) return type_range(t);
    xi a = ival(e->un.a, c);
    if (a.empty) return a;
    xi tv = type_values(t);
    if (a.lo < tv.lo || a.hi > tv.hi) return type_range(t);
    return a;
  }
  case TSL_E_BROADCAST: return ival(e->broadcast.value, c);
  case TSL_E_RAMP: {
    xi b = ival(e->ramp.base, c), s = ival(e->ramp.stride, c);
    if (b.empty || s.empty) return xi_empty();
    xi steps = xi_mul(s, xi_make(0, e->ramp.lanes - 1));
    return fit(t, xi_make(xadd(b.lo, steps.lo), xadd(b.hi, steps.hi)));
  }
  case TSL_E_LOAD: return type_range(t);
  case TSL_E_CALL: return ival_call(e, c);
  case TSL_E_LET: {
    xi v = ival(e->let.value, c);
    const tsl_expr *var = e->let.var;
    return ival_with_axis(e->let.body, c, 1, &var, &v);
  }
  case TSL_E_REDUCE:
    /* max/min of a non-empty reduction stays within the source's range; sums do not */
    if (e->reduce.combiner != TSL_REDUCE_SUM && tsl_type_is_intlike(t) && !e->reduce.condition &&
        e->reduce.naxes > 0) {
      int n = e->reduce.naxes;
      const tsl_expr **vars = malloc(sizeof *vars * (size_t)n);
      xi *rs = malloc(sizeof *rs * (size_t)n);
      bool any_empty = false;
      for (int i = 0; i < n && vars && rs; i++) {
        vars[i] = e->reduce.axes[i].var;
        rs[i] = xi_make(e->reduce.axes[i].min, (xint)e->reduce.axes[i].min + e->reduce.axes[i].extent - 1);
        any_empty |= e->reduce.axes[i].extent <= 0;
      }
      xi r = (vars && rs && !any_empty) ? ival_with_axis(e->reduce.source, c, n, vars, rs) : type_range(t);
      free(vars);
      free(rs);
      return r;
    }
    return type_range(t);
  }
  return xi_all();
}

/* Past this many nodes a call caches intervals by node, so a DAG with shared
 * subtrees costs its distinct nodes; small expressions allocate nothing. */
enum { MEMO_AFTER_VISITS = 256 };

static xi ival(const tsl_expr *e, ictx *c) {
  if (!c->memo && c->own && ++c->visits > MEMO_AFTER_VISITS) {
    c->memo = c->own;
    tsl_memo_init(c->memo);
  }
  if (c->memo) {
    tsl_memo_entry *m = tsl_memo_get(c->memo, e, false);
    if (m && m->has_ival) return from_tsl(m->ival);
  }
  xi r = ival_compute(e, c);
  if (c->memo) {
    tsl_memo_entry *m = tsl_memo_get(c->memo, e, true);
    m->ival = to_tsl(r);
    m->has_ival = true;
    return from_tsl(m->ival);
  }
  return r;
}

tsl_interval tsl_interval_of_cached(const tsl_expr *e, const tsl_var_ranges *ranges, tsl_memo *memo) {
  ictx c = {ranges, memo, NULL, 0};
  return to_tsl(ival(e, &c));
}

tsl_interval tsl_interval_of(const tsl_expr *e, const tsl_var_ranges *ranges) {
  tsl_memo own = {0};
  ictx c = {ranges, NULL, &own, 0};
  tsl_interval r = to_tsl(ival(e, &c));
  if (c.memo) tsl_memo_free(&own);
  return r;
}

/* ---- ranges implied by a condition ---------------------------------------- */

static tsl_expr_kind mirror_cmp(tsl_expr_kind k) {
  switch (k) {
  case TSL_E_LT: return TSL_E_GT;
  case TSL_E_LE: return TSL_E_GE;
  case TSL_E_GT: return TSL_E_LT;
  case TSL_E_GE: return TSL_E_LE;
  default: return k;
  }
}

static tsl_expr_kind negate_cmp(tsl_expr_kind k) {
  switch (k) {
  case TSL_E_LT: return TSL_E_GE;
  case TSL_E_LE: return TSL_E_GT;
  case TSL_E_GT: return TSL_E_LE;
  case TSL_E_GE: return TSL_E_LT;
  case TSL_E_EQ: return TSL_E_NE;
  default: return TSL_E_EQ;
  }
}

static bool refine_rec(const tsl_expr *c, bool truth, const tsl_var_ranges *in, tsl_var_ranges **out) {
  switch (c->kind) {
  case TSL_E_NOT: return refine_rec(c->un.a, !truth, in, out);
  case TSL_E_AND:
  case TSL_E_OR: {
    if (truth != (c->kind == TSL_E_AND)) return false; /* a || b true says nothing alone */
    bool a = refine_rec(c->bin.a, truth, in, out);
    bool b = refine_rec(c->bin.b, truth, in, out);
    return a || b;
  }
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE: break;
  default: return false;
  }
  const tsl_expr *a = c->bin.a, *b = c->bin.b;
  tsl_expr_kind op = c->kind;
  int64_t k;
  if (a->type.lanes != 1 || !tsl_type_is_intlike(a->type)) return false;
  if (a->kind == TSL_E_VAR && tsl_expr_is_const_int(b, &k)) {
  } else if (b->kind == TSL_E_VAR && tsl_expr_is_const_int(a, &k)) {
    const tsl_expr *t = a;
    a = b;
    b = t;
    op = mirror_cmp(op);
  } else {
    return false;
  }
  if (tsl_type_is_uint(a->type) && k < 0) return false; /* u64 constant >= 2^63 */
  if (!truth) op = negate_cmp(op);
  xi allowed = xi_all();
  switch (op) {
  case TSL_E_LT: allowed.hi = (xint)k - 1; break;
  case TSL_E_LE: allowed.hi = k; break;
  case TSL_E_GT: allowed.lo = (xint)k + 1; break;
  case TSL_E_GE: allowed.lo = k; break;
  case TSL_E_EQ: allowed = xi_make(k, k); break;
  default: return false;
  }
  const tsl_var_ranges *cur_map = *out ? *out : in;
  tsl_interval cur;
  if (!tsl_var_ranges_get(cur_map, a, &cur)) cur = tsl_interval_of_type(a->type);
  xi x = from_tsl(cur);
  if (x.empty) return false;
  xi n = xi_make(xmax(x.lo, allowed.lo), xmin(x.hi, allowed.hi));
  if (n.lo == x.lo && n.hi == x.hi) return false;
  if (n.lo > n.hi) n = xi_empty();
  if (!*out) *out = tsl_var_ranges_copy(in);
  tsl_var_ranges_set(*out, a, to_tsl(n));
  return true;
}

tsl_var_ranges *tsl_ranges_refine(const tsl_expr *cond, bool truth, const tsl_var_ranges *in) {
  tsl_var_ranges *out = NULL;
  refine_rec(cond, truth, in, &out);
  return out;
}
