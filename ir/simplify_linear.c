/* Linear canonical form of integer sums, and the div/mod and comparison rules built
 * on it (see tsl_simplify in ir/analysis.h).
 *
 * A sum is held as c0 + sum(ci * atom_i): atoms are simplified non-linear nodes
 * (variables, div, mod, min, products of non-constants, loads ...), merged by
 * structural equality and kept in order of first appearance, which makes the output
 * deterministic. Coefficients use wrapping 64-bit arithmetic: + - * are ring
 * operations modulo 2^bits, so the form is exact for every integer type, wrapping
 * included. Rules that need the order of the integers (division, comparison through
 * a difference) are only applied to i64, whose index arithmetic the IR contract
 * declares overflow-free, or rest on sound intervals.
 *
 * The div/mod split follows the canonical "(a*c + b)/c = a + b/c" reasoning of TVM's
 * arith::CanonicalSimplifier (floor semantics), restated here for floor division:
 * for any integer Q and c != 0, (c*Q + R)/c == Q + R/c and (c*Q + R) mod c == R mod c.
 */
#include <stdlib.h>

#include "ir/simplify_internal.h"

typedef struct term {
  tsl_expr *atom;
  uint64_t coef;
  uint64_t hash; /* shallow_hash(atom): equal atoms hash alike, so most compares are skipped */
} term;

typedef struct lin {
  tsl_type t; /* scalar integer type */
  uint64_t c0;
  int n, cap;
  term *terms;
} lin;

static void lin_init(lin *l, tsl_type t) {
  l->t = t;
  l->c0 = 0;
  l->n = l->cap = 0;
  l->terms = NULL;
}

static void lin_free(lin *l) {
  free(l->terms);
  l->terms = NULL;
  l->n = l->cap = 0;
}

/* v as the type holds it, read as a signed number of t.bits bits. */
static int64_t sview(tsl_type t, uint64_t v) {
  if (t.bits >= 64) return (int64_t)v;
  uint64_t mask = (1ull << t.bits) - 1;
  v &= mask;
  if (v >> (t.bits - 1)) v |= ~mask;
  return (int64_t)v;
}

static void lin_add_term_hashed(lin *l, tsl_expr *atom, uint64_t coef, uint64_t h) {
  for (int i = 0; i < l->n; i++)
    if (l->terms[i].atom == atom || (l->terms[i].hash == h && tsl_expr_equal(l->terms[i].atom, atom))) {
      l->terms[i].coef += coef;
      return;
    }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    term *nt = realloc(l->terms, sizeof *nt * (size_t)cap);
    if (!nt) {
      fprintf(stderr, "tessel: out of memory (simplifier)\n");
      abort();
    }
    l->terms = nt;
    l->cap = cap;
  }
  l->terms[l->n].atom = atom;
  l->terms[l->n].coef = coef;
  l->terms[l->n].hash = h;
  l->n++;
}

/* A hash of the top of e (kind, type, constants, variables, down to a small depth):
 * consistent with structural equality, and cheap however large or shared e is. */
static uint64_t shallow_hash(const tsl_expr *e, int depth) {
  uint64_t h = (uint64_t)e->kind * 0x9E3779B97F4A7C15ull ^ ((uint64_t)e->type.code << 8 | e->type.bits | (uint64_t)e->type.lanes << 16);
  switch (e->kind) {
  case TSL_E_INT: return h ^ ((uint64_t)e->int_value * 0xff51afd7ed558ccdull);
  case TSL_E_VAR: return h ^ ((uint64_t)(uintptr_t)e * 0xc4ceb9fe1a85ec53ull);
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN: case TSL_E_MAX:
    if (depth <= 0) return h;
    h = h * 31 + shallow_hash(e->bin.a, depth - 1);
    return h * 31 + shallow_hash(e->bin.b, depth - 1);
  case TSL_E_LOAD:
    h ^= (uint64_t)(uintptr_t)e->load.buf;
    if (depth > 0 && e->load.nindex > 0) h = h * 31 + shallow_hash(e->load.index[0], depth - 1);
    return h;
  default: return h;
  }
}

static void lin_add_term(lin *l, tsl_expr *atom, uint64_t coef) { lin_add_term_hashed(l, atom, coef, shallow_hash(atom, 3)); }

/* e is already simplified. */
static void lin_add_simplified(lin *l, tsl_expr *e, uint64_t coef) {
  int64_t v;
  switch (e->kind) {
  case TSL_E_INT: l->c0 += coef * (uint64_t)e->int_value; return;
  case TSL_E_ADD:
    lin_add_simplified(l, e->bin.a, coef);
    lin_add_simplified(l, e->bin.b, coef);
    return;
  case TSL_E_SUB:
    lin_add_simplified(l, e->bin.a, coef);
    lin_add_simplified(l, e->bin.b, 0 - coef);
    return;
  case TSL_E_MUL:
    if (tsl_expr_is_const_int(e->bin.b, &v)) {
      lin_add_simplified(l, e->bin.a, coef * (uint64_t)v);
      return;
    }
    if (tsl_expr_is_const_int(e->bin.a, &v)) {
      lin_add_simplified(l, e->bin.b, coef * (uint64_t)v);
      return;
    }
    break;
  default: break;
  }
  lin_add_term(l, e, coef);
}

static bool is_sum(const tsl_expr *e) {
  return (e->kind == TSL_E_ADD || e->kind == TSL_E_SUB || e->kind == TSL_E_MUL) && e->type.lanes == 1;
}

static void lin_add_raw(tsl_simp *c, lin *l, tsl_expr *e, uint64_t coef, int *budget);

/* A child of a sum: its cached form if it has one, else flattened into this sum
 * (a long chain costs its length, not its length squared), up to a budget of nodes
 * after which children go through the cache (a DAG of shared sums then costs its
 * distinct nodes, not its unfolded tree size). */
static void lin_add_child(tsl_simp *c, lin *l, tsl_expr *e, uint64_t coef, int *budget) {
  tsl_memo_entry *m = tsl_memo_get(&c->memo, e, false);
  if (m && m->simplified) lin_add_simplified(l, m->simplified, coef);
  else if (is_sum(e) && (*budget)-- > 0) lin_add_raw(c, l, e, coef, budget);
  else lin_add_simplified(l, tsl_simp_expr(c, e), coef);
}

/* e is a not yet simplified scalar integer ADD, SUB or MUL. */
static void lin_add_raw(tsl_simp *c, lin *l, tsl_expr *e, uint64_t coef, int *budget) {
  int64_t v;
  switch (e->kind) {
  case TSL_E_ADD:
    lin_add_child(c, l, e->bin.a, coef, budget);
    lin_add_child(c, l, e->bin.b, coef, budget);
    return;
  case TSL_E_SUB:
    lin_add_child(c, l, e->bin.a, coef, budget);
    lin_add_child(c, l, e->bin.b, 0 - coef, budget);
    return;
  case TSL_E_MUL: {
    tsl_expr *a = tsl_simp_expr(c, e->bin.a), *b = tsl_simp_expr(c, e->bin.b);
    if (tsl_expr_is_const_int(b, &v)) lin_add_simplified(l, a, coef * (uint64_t)v);
    else if (tsl_expr_is_const_int(a, &v)) lin_add_simplified(l, b, coef * (uint64_t)v);
    else lin_add_term(l, (a == e->bin.a && b == e->bin.b) ? e : tsl_mul(a, b), coef);
    return;
  }
  default: lin_add_simplified(l, tsl_simp_expr(c, e), coef); return;
  }
}

static tsl_expr *lin_build(const lin *l);
static void lin_fuse_divmod_at(tsl_simp *c, lin *l, bool recombine, int *budget);

/* Whether k*q + (x mod k) (q, x simplified; k > 0; i64) is one index f in the form the
 * simplifier leaves a split of f in (its x mod k absorbed by the first identity of
 * lin_fuse_divmod: q = f/k moved whole multiples of k out, e.g. (16*o + i)/4 = 4*o + i/4
 * and (16*o + i) mod 4 = i mod 4, and 4*(4*o + i/4) + i mod 4 = 16*o + i): then *f is
 * it. One level: the inner fuse applies the first identity only. */
static bool recombined(tsl_simp *c, tsl_type t, tsl_expr *q, tsl_expr *xmod, int64_t k, tsl_expr **f) {
  lin r;
  lin_init(&r, t);
  lin_add_simplified(&r, q, (uint64_t)k);
  lin_add_term(&r, xmod, 1);
  int none = 0;
  lin_fuse_divmod_at(c, &r, false, &none);
  bool absorbed = true;
  for (int i = 0; i < r.n && absorbed; i++)
    if (sview(t, r.terms[i].coef) != 0 && (r.terms[i].atom == xmod || tsl_expr_equal(r.terms[i].atom, xmod)))
      absorbed = false;
  if (absorbed) *f = lin_build(&r);
  lin_free(&r);
  return absorbed;
}

/* Term m of l is a live (x mod k) with a constant k != 0: *k. */
static bool const_mod_term(const lin *l, const term *m, int64_t *k) {
  return m->atom->kind == TSL_E_MOD && sview(l->t, m->coef) != 0 && tsl_expr_is_const_int(m->atom->bin.b, k) && *k != 0;
}

/* e is x/k. */
static bool is_div_by(const tsl_expr *e, const tsl_expr *x, int64_t k) {
  int64_t k2;
  return e->kind == TSL_E_DIV && tsl_expr_is_const_int(e->bin.b, &k2) && k2 == k && tsl_expr_equal(e->bin.a, x);
}

/* One application of a*(x mod k) + a*k*(x/k) == a*x to l (terms i, j); false if none. */
static bool fuse_div_mod_once(lin *l) {
  for (int i = 0; i < l->n; i++) {
    term *m = &l->terms[i];
    int64_t k;
    if (!const_mod_term(l, m, &k)) continue;
    for (int j = 0; j < l->n; j++) {
      term *d = &l->terms[j];
      if (j == i || sview(l->t, d->coef) != sview(l->t, m->coef * (uint64_t)k) || !is_div_by(d->atom, m->atom->bin.a, k))
        continue;
      uint64_t a = m->coef;
      tsl_expr *x = m->atom->bin.a;
      m->coef = 0;
      d->coef = 0;
      lin_add_simplified(l, x, a); /* may reallocate: m, d are not used after */
      return true;
    }
  }
  return false;
}

/* One application of a*(x mod k) + a*k*(q mod m) == a*((k*q + x mod k) mod k*m) to l, for
 * k, m > 0, where q is x/k or (recombine, i64, within *budget calls) recombined says
 * k*q + x mod k is one index; false if none. */
static bool fuse_mod_mod_once(tsl_simp *c, lin *l, bool recombine, int *budget) {
  for (int i = 0; i < l->n; i++) {
    term *m = &l->terms[i];
    int64_t k, mm, km;
    if (!const_mod_term(l, m, &k) || k < 0) continue;
    for (int j = 0; j < l->n; j++) {
      term *d = &l->terms[j];
      if (j == i || sview(l->t, d->coef) == 0 || d->atom->kind != TSL_E_MOD || !tsl_expr_is_const_int(d->atom->bin.b, &mm) ||
          mm <= 0 || sview(l->t, d->coef) != sview(l->t, m->coef * (uint64_t)k) || __builtin_mul_overflow(k, mm, &km) ||
          (l->t.bits < 64 && km > (int64_t)((1ull << (l->t.bits - 1)) - 1)))
        continue;
      tsl_expr *q = d->atom->bin.a, *x = m->atom->bin.a, *f = NULL;
      if (is_div_by(q, x, k))
        f = x;
      else if (!recombine || !tsl_simp_is_i64(l->t) || (*budget)-- <= 0 || !recombined(c, l->t, q, m->atom, k, &f))
        continue;
      uint64_t a = m->coef;
      m->coef = 0;
      d->coef = 0;
      tsl_expr *kmx = tsl_int(l->t, km), *r = tsl_simp_divmod(c, TSL_E_MOD, f, kmx);
      lin_add_simplified(l, r ? r : tsl_mod(f, kmx), a); /* may reallocate: m, d are not used after */
      return true;
    }
  }
  return false;
}

/* The two identities of floor division that undo a fused loop axis's index split
 * (c*169 + y*13 + x of c = f/169, y = (f/13) mod 13, x = f mod 13 is f again):
 *   a*(x mod k) + a*k*(x/k) == a*x                  (x == (x/k)*k + x mod k);
 *   a*(x mod k) + a*k*(q mod m) == a*((k*q + x mod k) mod k*m) for k, m > 0 and any q
 *     (with f = k*q + x mod k: q = f/k and x mod k = f mod k; f = k*m*s + (k*t + r) for
 *     q = m*s + t, r = f mod k, 0 <= t < m, and 0 <= k*t + r < k*m, so f mod k*m =
 *     k*(q mod m) + r). Applied where q is x/k (then k*q + x mod k is x), or, on i64,
 *     where k*q + x mod k simplifies to an index without x mod k (recombined; its
 *     product k*q is i64 index arithmetic, overflow-free by the IR contract).
 * The first identity is tried on every pair before the second (which would otherwise
 * take a mod term the first needs); each rewrite removes a mod term (at most 256 per sum). */
static void lin_fuse_divmod_at(tsl_simp *c, lin *l, bool recombine, int *budget) {
  for (int round = 0; round < 256 && (fuse_div_mod_once(l) || fuse_mod_mod_once(c, l, recombine, budget)); round++) {
  }
}

static void lin_fuse_divmod(tsl_simp *c, lin *l) {
  int budget = 64; /* recombined calls per sum: a sum of many mod terms stays linear-ish */
  lin_fuse_divmod_at(c, l, true, &budget);
}

static bool lin_has_terms(const lin *l) {
  for (int i = 0; i < l->n; i++)
    if (sview(l->t, l->terms[i].coef) != 0) return true;
  return false;
}

static tsl_expr *scaled(tsl_type t, tsl_expr *atom, uint64_t mag) {
  return sview(t, mag) == 1 ? atom : tsl_mul(atom, tsl_int(t, (int64_t)mag));
}

/* Positive terms in order, then the negative ones subtracted, then the constant. */
static tsl_expr *lin_build(const lin *l) {
  tsl_type t = l->t;
  tsl_expr *acc = NULL;
  for (int i = 0; i < l->n; i++) {
    int64_t v = sview(t, l->terms[i].coef);
    if (v <= 0) continue;
    tsl_expr *x = scaled(t, l->terms[i].atom, (uint64_t)v);
    acc = acc ? tsl_add(acc, x) : x;
  }
  int64_t c0 = sview(t, l->c0);
  bool any_neg = false;
  for (int i = 0; i < l->n; i++) any_neg |= sview(t, l->terms[i].coef) < 0;
  if (!acc) {
    acc = tsl_int(t, c0);
    if (!any_neg) return acc;
    c0 = 0;
  }
  for (int i = 0; i < l->n; i++) {
    int64_t v = sview(t, l->terms[i].coef);
    if (v >= 0) continue;
    acc = tsl_sub(acc, scaled(t, l->terms[i].atom, 0 - (uint64_t)v));
  }
  if (c0 > 0 || c0 == INT64_MIN) acc = tsl_add(acc, tsl_int(t, c0));
  else if (c0 < 0) acc = tsl_sub(acc, tsl_int(t, -c0));
  return acc;
}

tsl_expr *tsl_simp_linear(tsl_simp *c, tsl_expr *e) {
  lin l;
  lin_init(&l, e->type);
  int budget = 4096;
  lin_add_raw(c, &l, e, 1, &budget);
  lin_fuse_divmod(c, &l);
  tsl_expr *r = lin_build(&l);
  lin_free(&l);
  return r;
}

static int64_t gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t r = x % y;
    x = y;
    y = r;
  }
  return x > (uint64_t)INT64_MAX ? 1 : (int64_t)x;
}

static bool bounded(tsl_interval iv) { return !iv.empty && iv.has_lo && iv.has_hi; }

/* R/k as a single node, after the nested rules: (x/k1)/k2 -> x/(k1*k2) for positive
 * divisors, (x mod k1) mod k2 -> x mod k2 when k2 divides k1. */
static tsl_expr *div_atom(tsl_expr_kind kind, tsl_expr *r, int64_t k) {
  tsl_type t = r->type;
  int64_t k1, kk;
  if (kind == TSL_E_DIV && r->kind == TSL_E_DIV && tsl_expr_is_const_int(r->bin.b, &k1) && k1 > 0 && k > 0 &&
      !__builtin_mul_overflow(k1, k, &kk))
    return tsl_div(r->bin.a, tsl_int(t, kk));
  if (kind == TSL_E_MOD && r->kind == TSL_E_MOD && tsl_expr_is_const_int(r->bin.b, &k1) && k1 % k == 0)
    return tsl_mod(r->bin.a, tsl_int(t, k));
  return tsl_binary(kind, r, tsl_int(t, k));
}

/* i64 scalar a / k or a mod k with a constant k not in {0, 1, -1}. */
static tsl_expr *divmod_i64(tsl_simp *c, tsl_expr_kind kind, tsl_expr *a, int64_t k) {
  tsl_type t = a->type;
  lin l, q, r;
  lin_init(&l, t);
  lin_init(&q, t);
  lin_init(&r, t);
  lin_add_simplified(&l, a, 1);
  /* the constant's whole multiples of k (rounded toward 0, so small constants stay) */
  q.c0 = (uint64_t)((int64_t)l.c0 / k);
  r.c0 = (uint64_t)((int64_t)l.c0 % k);
  for (int i = 0; i < l.n; i++) {
    int64_t v = (int64_t)l.terms[i].coef;
    if (v == 0) continue;
    if (v % k == 0) lin_add_term_hashed(&q, l.terms[i].atom, (uint64_t)(v / k), l.terms[i].hash);
    else lin_add_term_hashed(&r, l.terms[i].atom, (uint64_t)v, l.terms[i].hash);
  }
  tsl_expr *rexpr = lin_build(&r);
  tsl_interval iv = tsl_simp_interval(c, rexpr);
  tsl_expr *res;
  if (bounded(iv) && tsl_floordiv64(iv.lo, k) == tsl_floordiv64(iv.hi, k)) {
    /* every value of R lies in one bucket [q*k, q*k + k) */
    int64_t b = tsl_floordiv64(iv.lo, k);
    if (kind == TSL_E_DIV) {
      q.c0 += (uint64_t)b;
      res = lin_build(&q);
    } else {
      r.c0 -= (uint64_t)b * (uint64_t)k;
      res = lin_build(&r);
    }
  } else {
    /* divide R, k by the gcd of all of them: floor(R/k) == floor((R/g)/(k/g)) and
     * R mod k == g * ((R/g) mod (k/g)) */
    int64_t g = gcd64(k, (int64_t)r.c0);
    for (int i = 0; i < r.n; i++) g = gcd64(g, (int64_t)r.terms[i].coef);
    if (g > 1) {
      for (int i = 0; i < r.n; i++) r.terms[i].coef = (uint64_t)((int64_t)r.terms[i].coef / g);
      r.c0 = (uint64_t)((int64_t)r.c0 / g);
      rexpr = lin_build(&r);
      k /= g;
    } else {
      g = 1;
    }
    tsl_expr *atom = k == 1 ? (kind == TSL_E_DIV ? rexpr : tsl_int(t, 0)) : div_atom(kind, rexpr, k);
    if (kind == TSL_E_DIV) {
      lin_add_simplified(&q, atom, 1);
      res = lin_build(&q);
    } else {
      lin m;
      lin_init(&m, t);
      lin_add_simplified(&m, atom, (uint64_t)g);
      res = lin_build(&m);
      lin_free(&m);
    }
  }
  lin_free(&l);
  lin_free(&q);
  lin_free(&r);
  return res;
}

/* ramp(base, stride, n) / k and mod k for an i64 constant k not in {0, 1, -1}. */
static tsl_expr *divmod_ramp(tsl_simp *c, tsl_expr_kind kind, tsl_expr *ramp, int64_t k) {
  tsl_expr *base = ramp->ramp.base;
  int64_t s;
  int n = ramp->ramp.lanes;
  if (!tsl_expr_is_const_int(ramp->ramp.stride, &s)) return NULL;
  tsl_type t = base->type;
  if (s % k == 0) {
    /* every lane shares base's bucket offset */
    if (kind == TSL_E_MOD) return tsl_broadcast(tsl_simp_expr(c, tsl_mod(base, tsl_int(t, k))), n);
    tsl_expr *b = tsl_simp_expr(c, tsl_div(base, tsl_int(t, k)));
    return s / k == 0 ? tsl_broadcast(b, n) : tsl_ramp(b, tsl_int(t, s / k), n);
  }
  /* base = k*Q + R: lanes R + s*j all in one bucket -> Q + bucket (div), R - k*bucket + s*j (mod) */
  lin l, q, r;
  lin_init(&l, t);
  lin_init(&q, t);
  lin_init(&r, t);
  lin_add_simplified(&l, base, 1);
  r.c0 = l.c0;
  for (int i = 0; i < l.n; i++) {
    int64_t v = (int64_t)l.terms[i].coef;
    if (v == 0) continue;
    if (v % k == 0) lin_add_term_hashed(&q, l.terms[i].atom, (uint64_t)(v / k), l.terms[i].hash);
    else lin_add_term_hashed(&r, l.terms[i].atom, (uint64_t)v, l.terms[i].hash);
  }
  tsl_expr *res = NULL;
  tsl_interval iv = tsl_simp_interval(c, lin_build(&r));
  int64_t span;
  if (bounded(iv) && !__builtin_mul_overflow(s, (int64_t)(n - 1), &span)) {
    int64_t lo = iv.lo + (span < 0 ? span : 0), hi = iv.hi + (span > 0 ? span : 0);
    if (tsl_floordiv64(lo, k) == tsl_floordiv64(hi, k)) {
      int64_t b = tsl_floordiv64(lo, k);
      if (kind == TSL_E_DIV) {
        q.c0 += (uint64_t)b;
        res = tsl_broadcast(lin_build(&q), n);
      } else {
        r.c0 -= (uint64_t)b * (uint64_t)k;
        res = tsl_ramp(lin_build(&r), tsl_int(t, s), n);
      }
    }
  }
  lin_free(&l);
  lin_free(&q);
  lin_free(&r);
  return res;
}

tsl_expr *tsl_simp_divmod(tsl_simp *c, tsl_expr_kind kind, tsl_expr *a, tsl_expr *b) {
  tsl_type t = tsl_type_element(a->type);
  int64_t k;
  tsl_expr *kb = b->kind == TSL_E_BROADCAST ? b->broadcast.value : b;
  if (!tsl_expr_is_const_int(kb, &k) || k == 0) return NULL;
  bool is_signed = tsl_type_is_int(t);
  if (!is_signed && k < 0) return NULL; /* u64 divisor >= 2^63 */
  int lanes = a->type.lanes;
  if (k == 1) return kind == TSL_E_DIV ? a : tsl_broadcast(tsl_int(t, 0), lanes);
  if (k == -1 && is_signed)
    return kind == TSL_E_DIV ? tsl_simp_expr(c, tsl_sub(tsl_broadcast(tsl_int(t, 0), lanes), a))
                             : tsl_broadcast(tsl_int(t, 0), lanes);
  if (tsl_simp_is_i64(t)) {
    if (lanes == 1) return divmod_i64(c, kind, a, k);
    if (a->kind == TSL_E_RAMP) return divmod_ramp(c, kind, a, k);
    return NULL;
  }
  if (lanes != 1) return NULL;
  /* other integer types: only what the (wrap-aware) interval of a decides */
  tsl_interval iv = tsl_simp_interval(c, a);
  if (bounded(iv) && tsl_floordiv64(iv.lo, k) == tsl_floordiv64(iv.hi, k)) {
    int64_t q = tsl_floordiv64(iv.lo, k);
    if (kind == TSL_E_DIV) return tsl_int(t, q);
    return q == 0 ? a : tsl_simp_expr(c, tsl_sub(a, tsl_int(t, q * k)));
  }
  int64_t k1;
  if (kind == TSL_E_MOD && a->kind == TSL_E_MOD && tsl_expr_is_const_int(a->bin.b, &k1) && k1 % k == 0 &&
      (is_signed || k1 > 0))
    return tsl_mod(a->bin.a, tsl_int(t, k));
  return NULL;
}

bool tsl_simp_difference(tsl_simp *c, tsl_expr *a, tsl_expr *b, int64_t *d) {
  (void)c;
  lin l;
  lin_init(&l, a->type);
  lin_add_simplified(&l, a, 1);
  lin_add_simplified(&l, b, (uint64_t)-1);
  bool r = !lin_has_terms(&l);
  if (r) *d = (int64_t)l.c0;
  lin_free(&l);
  return r;
}

static int64_t ceil_div(int64_t a, int64_t b) { return -tsl_floordiv64(-a, b); }

tsl_expr *tsl_simp_compare_i64(tsl_simp *c, tsl_expr_kind k, tsl_expr *a, tsl_expr *b) {
  tsl_type t = a->type;
  lin d;
  lin_init(&d, t);
  lin_add_simplified(&d, a, 1);
  lin_add_simplified(&d, b, (uint64_t)-1);
  lin_fuse_divmod(c, &d);
  tsl_expr *res = NULL;
  /* decide on the interval of a - b (tighter than a and b apart: x + 1 > x) */
  tsl_interval iv = tsl_simp_interval(c, lin_build(&d));
  if (!iv.empty) {
    int dec = -1;
    switch (k) {
    case TSL_E_LT: dec = (iv.has_hi && iv.hi < 0) ? 1 : (iv.has_lo && iv.lo >= 0) ? 0 : -1; break;
    case TSL_E_LE: dec = (iv.has_hi && iv.hi <= 0) ? 1 : (iv.has_lo && iv.lo > 0) ? 0 : -1; break;
    case TSL_E_EQ:
    case TSL_E_NE: {
      int eq = (bounded(iv) && iv.lo == 0 && iv.hi == 0) ? 1 : ((iv.has_lo && iv.lo > 0) || (iv.has_hi && iv.hi < 0)) ? 0 : -1;
      dec = (eq < 0 || k == TSL_E_EQ) ? eq : !eq;
      break;
    }
    default: break;
    }
    if (dec >= 0) res = tsl_bool(dec);
  }
  if (!res) {
    int64_t g = 0, c0 = (int64_t)d.c0;
    for (int i = 0; i < d.n; i++) g = gcd64(g, (int64_t)d.terms[i].coef);
    if (g > 1) {
      /* g*D' + c0 < 0  <=>  D' + floor(c0/g) < 0;  g*D' + c0 <= 0  <=>  D' + ceil(c0/g) <= 0 */
      if ((k == TSL_E_EQ || k == TSL_E_NE) && c0 % g != 0) res = tsl_bool(k == TSL_E_NE);
      for (int i = 0; i < d.n; i++) d.terms[i].coef = (uint64_t)((int64_t)d.terms[i].coef / g);
      d.c0 = (uint64_t)(k == TSL_E_LT ? tsl_floordiv64(c0, g) : k == TSL_E_LE ? ceil_div(c0, g) : c0 / g);
    }
  }
  if (!res) {
    lin lhs, rhs;
    lin_init(&lhs, t);
    lin_init(&rhs, t);
    for (int i = 0; i < d.n; i++) {
      int64_t v = (int64_t)d.terms[i].coef;
      if (v > 0) lin_add_term_hashed(&lhs, d.terms[i].atom, (uint64_t)v, d.terms[i].hash);
      else if (v < 0) lin_add_term_hashed(&rhs, d.terms[i].atom, 0 - (uint64_t)v, d.terms[i].hash);
    }
    /* D = L - R + c0 (op) 0  <=>  L (op) R - c0;  with no L terms: c0 (op) R */
    if (lin_has_terms(&lhs)) rhs.c0 = 0 - d.c0;
    else lhs.c0 = d.c0;
    res = tsl_binary(k, lin_build(&lhs), lin_build(&rhs));
    lin_free(&lhs);
    lin_free(&rhs);
  }
  lin_free(&d);
  return res;
}
