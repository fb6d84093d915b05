/* tsl_te_check: every read of a TE program in bounds, proven by interval analysis
 * (ir/analysis.h tsl_interval_of over the axes' ranges).
 *
 * A read need only be in bounds where it is evaluated: inside a select branch the
 * branch's condition holds, inside a reduction its `if` holds. So the check carries the
 * conditions down as facts, in two forms:
 *  - variable ranges narrowed by each integer comparison: from `c*v + R <= K` with R's
 *    interval known, v <= floor((K - R.lo) / c) (and the mirror cases);
 *  - linear constraints lo <= sum(c_i * v_i) <= hi, so that an index with the same
 *    variable part (`y*2 + r - 1` under `y*2 + r >= 1`) gets the constraint's range
 *    shifted by its constant, which per-variable ranges cannot give.
 * Conjunctions add facts; a disjunction keeps the union of the ranges of its branches.
 * Facts only tighten ranges, so the result stays sound: an index proven in bounds is in
 * bounds at every point where the read is evaluated. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"
#include "dsl/te.h"
#include "ir/analysis.h"

enum { MAX_TERMS = 8, MAX_OPAQUE = 4 };

typedef struct term {
  const tsl_expr *var;
  int64_t coef;
} term;

/* sum terms + c + sum ocoef*opaque */
typedef struct lform {
  term t[MAX_TERMS];
  int n;
  int64_t c;
  const tsl_expr *opaque[MAX_OPAQUE];
  int64_t ocoef[MAX_OPAQUE];
  int no;
  bool ok;
} lform;

/* lo <= sum terms <= hi */
typedef struct constraint {
  term t[MAX_TERMS];
  int n;
  tsl_interval r;
} constraint;

typedef struct ctx {
  tsl_var_ranges *ranges;
  const tsl_expr **vars; /* variables with a range */
  int nvars;
  constraint *cons;
  int ncons;
  bool dead; /* the facts contradict each other: nothing here is evaluated */
  struct bad_read *bad; /* set by an out-of-bounds read: which load, which dimension */
} ctx;

typedef struct bad_read {
  const tsl_expr *load;
  int dim;
} bad_read;

/* ---- 64-bit interval helpers (a missing side is unbounded) ---- */

static tsl_interval iv_all(void) { return tsl_interval_everything(); }

static tsl_interval iv_add(tsl_interval a, tsl_interval b) {
  tsl_interval r = iv_all();
  if (a.has_lo && b.has_lo && !__builtin_add_overflow(a.lo, b.lo, &r.lo)) r.has_lo = true;
  if (a.has_hi && b.has_hi && !__builtin_add_overflow(a.hi, b.hi, &r.hi)) r.has_hi = true;
  r.empty = a.empty || b.empty;
  return r;
}

static tsl_interval iv_scale(tsl_interval a, int64_t k) {
  tsl_interval r = iv_all();
  r.empty = a.empty;
  int64_t x = 0, y = 0;
  bool okx = a.has_lo && !__builtin_mul_overflow(a.lo, k, &x);
  bool oky = a.has_hi && !__builtin_mul_overflow(a.hi, k, &y);
  if (k >= 0) {
    r.has_lo = okx, r.lo = x;
    r.has_hi = oky, r.hi = y;
  } else {
    r.has_lo = oky, r.lo = y;
    r.has_hi = okx, r.hi = x;
  }
  return r;
}

static tsl_interval iv_intersect(tsl_interval a, tsl_interval b) {
  tsl_interval r = a;
  if (b.has_lo && (!r.has_lo || b.lo > r.lo)) r.lo = b.lo, r.has_lo = true;
  if (b.has_hi && (!r.has_hi || b.hi < r.hi)) r.hi = b.hi, r.has_hi = true;
  r.empty = a.empty || b.empty || (r.has_lo && r.has_hi && r.lo > r.hi);
  return r;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
static int64_t ceil_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) q++;
  return q;
}

/* ---- linear forms ---- */

static bool known_var(const ctx *c, const tsl_expr *v) {
  for (int i = 0; i < c->nvars; i++)
    if (c->vars[i] == v) return true;
  return false;
}

static void lf_add_term(lform *f, const tsl_expr *v, int64_t k) {
  for (int i = 0; i < f->n; i++)
    if (f->t[i].var == v) {
      if (__builtin_add_overflow(f->t[i].coef, k, &f->t[i].coef)) f->ok = false;
      return;
    }
  if (f->n == MAX_TERMS) {
    f->ok = false;
    return;
  }
  f->t[f->n++] = (term){v, k};
}

static void lf_add_opaque(lform *f, const tsl_expr *e, int64_t k) {
  if (f->no == MAX_OPAQUE) {
    f->ok = false;
    return;
  }
  f->opaque[f->no] = e;
  f->ocoef[f->no++] = k;
}

static void lin(const ctx *c, const tsl_expr *e, int64_t k, lform *f) {
  if (!f->ok) return;
  int64_t v;
  switch (e->kind) {
  case TSL_E_INT: {
    int64_t x;
    if (__builtin_mul_overflow(e->int_value, k, &x) || __builtin_add_overflow(f->c, x, &f->c)) f->ok = false;
    return;
  }
  case TSL_E_VAR:
    if (known_var(c, e)) lf_add_term(f, e, k);
    else lf_add_opaque(f, e, k);
    return;
  case TSL_E_ADD:
  case TSL_E_SUB:
    lin(c, e->bin.a, k, f);
    if (e->kind == TSL_E_SUB && k == INT64_MIN) {
      f->ok = false;
      return;
    }
    lin(c, e->bin.b, e->kind == TSL_E_SUB ? -k : k, f);
    return;
  case TSL_E_MUL: {
    const tsl_expr *other = NULL;
    if (tsl_expr_is_const_int(e->bin.b, &v)) other = e->bin.a;
    else if (tsl_expr_is_const_int(e->bin.a, &v)) other = e->bin.b;
    int64_t kv;
    if (other && !__builtin_mul_overflow(k, v, &kv)) {
      lin(c, other, kv, f);
      return;
    }
    break;
  }
  case TSL_E_CAST: {
    /* widening integer casts keep the value */
    tsl_type s = e->un.a->type, t = e->type;
    if (tsl_type_is_intlike(s) && tsl_type_is_int(t) && t.bits == 64 && (s.bits < 64 || tsl_type_is_int(s))) {
      lin(c, e->un.a, k, f);
      return;
    }
    break;
  }
  default: break;
  }
  lf_add_opaque(f, e, k);
}

static tsl_interval var_range(const ctx *c, const tsl_expr *v) {
  tsl_interval r;
  return tsl_var_ranges_get(c->ranges, v, &r) ? r : iv_all();
}

/* Interval of the form without term `skip` (-1: all terms). */
static tsl_interval lf_rest(const ctx *c, const lform *f, int skip) {
  tsl_interval r = tsl_interval_point(f->c);
  for (int i = 0; i < f->n; i++)
    if (i != skip) r = iv_add(r, iv_scale(var_range(c, f->t[i].var), f->t[i].coef));
  for (int i = 0; i < f->no; i++) r = iv_add(r, iv_scale(tsl_interval_of(f->opaque[i], c->ranges), f->ocoef[i]));
  return r;
}

static int cmp_term(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const term *)a)->var, y = (uintptr_t)((const term *)b)->var;
  return x < y ? -1 : x > y;
}

/* Sorted terms without zero coefficients, first coefficient positive (*neg tells whether
 * the form was negated to get there). */
static int canon_terms(const lform *f, term *out, bool *neg) {
  int n = 0;
  for (int i = 0; i < f->n; i++)
    if (f->t[i].coef != 0) out[n++] = f->t[i];
  qsort(out, (size_t)n, sizeof(term), cmp_term);
  *neg = n > 0 && out[0].coef < 0;
  for (int i = 0; *neg && i < n; i++) {
    if (out[i].coef == INT64_MIN) return -1;
    out[i].coef = -out[i].coef;
  }
  return n;
}

/* ---- facts ---- */

static ctx ctx_copy(const ctx *c) {
  ctx d = *c;
  d.ranges = tsl_var_ranges_copy(c->ranges);
  d.cons = c->ncons ? tsl_memdup(c->cons, sizeof(constraint) * (size_t)c->ncons) : NULL;
  return d;
}

static void ctx_add_var(ctx *c, const tsl_expr *v, tsl_interval r) {
  const tsl_expr **nv = tsl_alloc(sizeof(tsl_expr *) * (size_t)(c->nvars + 1));
  if (c->nvars) memcpy(nv, c->vars, sizeof(tsl_expr *) * (size_t)c->nvars);
  nv[c->nvars++] = v;
  c->vars = nv;
  tsl_var_ranges_set(c->ranges, v, r);
}

static void tighten_var(ctx *c, const tsl_expr *v, tsl_interval r) {
  tsl_interval x = iv_intersect(var_range(c, v), r);
  if (x.empty) c->dead = true;
  tsl_var_ranges_set(c->ranges, v, x);
}

/* The fact lo <= form <= hi (has_lo/has_hi select the sides). */
static void add_linear_fact(ctx *c, const lform *f, tsl_interval bound) {
  if (!f->ok || c->dead) return;
  /* each variable alone, the others at their current ranges */
  for (int i = 0; i < f->n; i++) {
    int64_t k = f->t[i].coef;
    if (k == 0) continue;
    tsl_interval rest = lf_rest(c, f, i), r = iv_all();
    /* k*v <= hi - rest.lo ; k*v >= lo - rest.hi */
    int64_t u, l;
    if (bound.has_hi && rest.has_lo && !__builtin_sub_overflow(bound.hi, rest.lo, &u)) {
      if (k > 0) r.hi = floor_div(u, k), r.has_hi = true;
      else r.lo = ceil_div(u, k), r.has_lo = true;
    }
    if (bound.has_lo && rest.has_hi && !__builtin_sub_overflow(bound.lo, rest.hi, &l)) {
      if (k > 0) r.lo = ceil_div(l, k), r.has_lo = true;
      else r.hi = floor_div(l, k), r.has_hi = true;
    }
    tighten_var(c, f->t[i].var, r);
  }
  if (f->no || c->dead) return;
  /* the whole variable part: bound - constant */
  term t[MAX_TERMS];
  bool neg;
  int n = canon_terms(f, t, &neg);
  if (n < 2) return; /* one variable: its range says it all */
  tsl_interval r = iv_add(bound, tsl_interval_point(f->c == INT64_MIN ? 0 : -f->c));
  if (f->c == INT64_MIN) return;
  if (neg) r = iv_scale(r, -1);
  for (int i = 0; i < c->ncons; i++) {
    constraint *k = &c->cons[i];
    if (k->n == n && memcmp(k->t, t, sizeof(term) * (size_t)n) == 0) {
      k->r = iv_intersect(k->r, r);
      if (k->r.empty) c->dead = true;
      return;
    }
  }
  constraint *nc = tsl_alloc(sizeof(constraint) * (size_t)(c->ncons + 1));
  if (c->ncons) memcpy(nc, c->cons, sizeof(constraint) * (size_t)c->ncons);
  memcpy(nc[c->ncons].t, t, sizeof(term) * (size_t)n);
  nc[c->ncons].n = n;
  nc[c->ncons].r = r;
  c->cons = nc;
  c->ncons++;
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

static void assume(ctx *c, const tsl_expr *cond, bool truth);

static void assume_cmp(ctx *c, tsl_expr_kind k, const tsl_expr *a, const tsl_expr *b) {
  if (!tsl_type_is_intlike(a->type) || a->type.lanes != 1 || k == TSL_E_NE) return;
  lform f = {.ok = true};
  lin(c, a, 1, &f);
  lin(c, b, -1, &f);
  if (!f.ok) return;
  tsl_interval bound = iv_all();
  switch (k) {
  case TSL_E_LT: bound.has_hi = true, bound.hi = -1; break;
  case TSL_E_LE: bound.has_hi = true, bound.hi = 0; break;
  case TSL_E_GT: bound.has_lo = true, bound.lo = 1; break;
  case TSL_E_GE: bound.has_lo = true, bound.lo = 0; break;
  default: bound = tsl_interval_point(0); break; /* EQ */
  }
  add_linear_fact(c, &f, bound);
}

static void ctx_union_into(ctx *c, const ctx *a, const ctx *b) {
  if (a->dead && b->dead) {
    c->dead = true;
    return;
  }
  const ctx *only = a->dead ? b : b->dead ? a : NULL;
  if (only) {
    *c = ctx_copy(only);
    return;
  }
  for (int i = 0; i < c->nvars; i++) {
    tsl_interval x = var_range(a, c->vars[i]), y = var_range(b, c->vars[i]);
    tsl_interval u = {x.lo < y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi, x.has_lo && y.has_lo, x.has_hi && y.has_hi, false};
    tsl_var_ranges_set(c->ranges, c->vars[i], u);
  }
}

static void assume(ctx *c, const tsl_expr *cond, bool truth) {
  if (c->dead || !cond) return;
  switch (cond->kind) {
  case TSL_E_NOT: assume(c, cond->un.a, !truth); return;
  case TSL_E_AND:
  case TSL_E_OR:
    if ((cond->kind == TSL_E_AND) == truth) {
      /* both hold; twice, so that each side can use what the other taught */
      for (int round = 0; round < 2; round++) {
        assume(c, cond->bin.a, truth);
        assume(c, cond->bin.b, truth);
      }
    } else {
      ctx a = ctx_copy(c), b = ctx_copy(c);
      assume(&a, cond->bin.a, truth);
      assume(&b, cond->bin.b, truth);
      ctx_union_into(c, &a, &b);
    }
    return;
  case TSL_E_CALL:
    if (cond->call.op == TSL_CALL_LIKELY && cond->call.nargs == 1) assume(c, cond->call.args[0], truth);
    return;
  case TSL_E_INT:
    if ((cond->int_value != 0) != truth) c->dead = true;
    return;
  case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE: case TSL_E_EQ: case TSL_E_NE:
    assume_cmp(c, truth ? cond->kind : negate_cmp(cond->kind), cond->bin.a, cond->bin.b);
    return;
  default: return;
  }
}

/* ---- the check ---- */

static tsl_interval index_range(const ctx *c, const tsl_expr *index) {
  tsl_interval r = tsl_interval_of(index, c->ranges);
  lform f = {.ok = true};
  lin(c, index, 1, &f);
  if (!f.ok || f.no || c->ncons == 0) return r;
  term t[MAX_TERMS];
  bool neg;
  int n = canon_terms(&f, t, &neg);
  if (n < 2) return r;
  for (int i = 0; i < c->ncons; i++) {
    const constraint *k = &c->cons[i];
    if (k->n != n || memcmp(k->t, t, sizeof(term) * (size_t)n) != 0) continue;
    tsl_interval part = neg ? iv_scale(k->r, -1) : k->r;
    r = iv_intersect(r, iv_add(part, tsl_interval_point(f.c)));
  }
  return r;
}

static void side(char *buf, size_t n, bool has, int64_t v, const char *inf) {
  if (has) snprintf(buf, n, "%" PRId64, v);
  else snprintf(buf, n, "%s", inf);
}

static tsl_status walk(const char *stage, ctx *c, const tsl_expr *e) {
  if (!e || c->dead) return TSL_OK;
  tsl_status st;
  switch (e->kind) {
  case TSL_E_LOAD: {
    const tsl_buffer *b = e->load.buf;
    for (int d = 0; d < e->load.nindex && d < b->ndim; d++) {
      tsl_interval r = index_range(c, e->load.index[d]);
      if (r.empty) return TSL_OK; /* never evaluated */
      if (!(r.has_lo && r.has_hi && r.lo >= 0 && r.hi < b->shape[d])) {
        char lo[32], hi[32];
        side(lo, sizeof lo, r.has_lo, r.lo, "-inf");
        side(hi, sizeof hi, r.has_hi, r.hi, "+inf");
        if (c->bad) *c->bad = (bad_read){e, d};
        return tsl_error(TSL_ERR_INVALID, "%s: read of %s[dim %d] may reach [%s, %s] outside [0, %" PRId64 ")", stage,
                         b->name, d, lo, hi, b->shape[d]);
      }
    }
    for (int d = 0; d < e->load.nindex; d++)
      if ((st = walk(stage, c, e->load.index[d])) != TSL_OK) return st;
    return TSL_OK;
  }
  case TSL_E_SELECT: {
    if ((st = walk(stage, c, e->select.cond)) != TSL_OK) return st;
    ctx t = ctx_copy(c), f = ctx_copy(c);
    assume(&t, e->select.cond, true);
    assume(&f, e->select.cond, false);
    if ((st = walk(stage, &t, e->select.t)) != TSL_OK) return st;
    return walk(stage, &f, e->select.f);
  }
  case TSL_E_REDUCE: {
    ctx r = ctx_copy(c);
    for (int i = 0; i < e->reduce.naxes; i++) {
      const tsl_iter_var *a = &e->reduce.axes[i];
      ctx_add_var(&r, a->var, tsl_interval_range(a->min, a->min + a->extent - 1));
    }
    if ((st = walk(stage, &r, e->reduce.condition)) != TSL_OK) return st;
    assume(&r, e->reduce.condition, true);
    return walk(stage, &r, e->reduce.source);
  }
  case TSL_E_LET: {
    if ((st = walk(stage, c, e->let.value)) != TSL_OK) return st;
    ctx l = ctx_copy(c);
    tsl_interval r = tsl_type_is_intlike(e->let.value->type) ? tsl_interval_of(e->let.value, c->ranges) : iv_all();
    ctx_add_var(&l, e->let.var, r);
    return walk(stage, &l, e->let.body);
  }
  case TSL_E_NOT:
  case TSL_E_CAST: return walk(stage, c, e->un.a);
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++)
      if ((st = walk(stage, c, e->call.args[i])) != TSL_OK) return st;
    return TSL_OK;
  case TSL_E_BROADCAST: return walk(stage, c, e->broadcast.value);
  case TSL_E_RAMP:
    if ((st = walk(stage, c, e->ramp.base)) != TSL_OK) return st;
    return walk(stage, c, e->ramp.stride);
  default:
    if (e->kind >= TSL_E_ADD && e->kind <= TSL_E_OR) {
      if ((st = walk(stage, c, e->bin.a)) != TSL_OK) return st;
      return walk(stage, c, e->bin.b);
    }
    return TSL_OK;
  }
}

/* Index arithmetic is i64 and may not overflow (ir/ir.h): a tensor's byte size must
 * stay below 2^62, which bounds every row-major offset and stride product. */
static tsl_status check_size(const tsl_te_program *p, const tsl_buffer *b) {
  const int64_t limit = (int64_t)1 << 62;
  int64_t bytes = (int64_t)tsl_type_bytes(b->dtype);
  for (int d = 0; d < b->ndim; d++) {
    if (b->shape[d] > 0 && bytes > limit / b->shape[d])
      return tsl_error(TSL_ERR_INVALID,
                       "%s: tensor %s is too large: its size reaches 2^62 bytes, beyond i64 index arithmetic",
                       p->name, b->name);
    bytes *= b->shape[d];
  }
  return TSL_OK;
}

/* The error of an out-of-bounds read, placed at its index expression when the program
 * was made from DSL text (the message stays as walk() wrote it). */
static tsl_status locate_read(const tsl_te_program *p, const bad_read *bad, tsl_status st) {
  if (!p->src) return st;
  for (int i = 0; i < p->nread_origins; i++) {
    if (p->read_origins[i].load != bad->load) continue;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    return dsl_fail(p->src, st, p->read_origins[i].index_pos[bad->dim], "%s", msg);
  }
  return st;
}

tsl_status tsl_te_check(const tsl_te_program *p) {
  if (!p) return tsl_error(TSL_ERR_INVALID, "tsl_te_check: NULL program");
  int n;
  tsl_te_op **stages = tsl_te_program_stages(p, &n);
  for (int i = 0; i < p->ninputs; i++) {
    tsl_status st = check_size(p, p->inputs[i]->buf);
    if (st != TSL_OK) return st;
  }
  for (int s = 0; s < n; s++) {
    const tsl_te_op *op = stages[s];
    tsl_status size_st = check_size(p, op->output->buf);
    if (size_st != TSL_OK) return size_st;
    for (int i = 0; i < op->ninputs; i++) {
      const tsl_te_tensor *t = op->inputs[i];
      if (t->op->kind != TSL_TE_PLACEHOLDER) continue;
      bool listed = false;
      for (int k = 0; k < p->ninputs; k++) listed |= p->inputs[k] == t;
      if (!listed)
        return tsl_error(TSL_ERR_INVALID, "%s: %s reads placeholder %s, which is not an input of the program", p->name,
                         op->name, t->buf->name);
    }
    bad_read bad = {NULL, -1};
    ctx c = {tsl_var_ranges_new(), NULL, 0, NULL, 0, false, &bad};
    for (int i = 0; i < op->naxis; i++)
      ctx_add_var(&c, op->axis[i].var, tsl_interval_range(op->axis[i].min, op->axis[i].min + op->axis[i].extent - 1));
    tsl_status st = walk(op->name, &c, op->body);
    if (st != TSL_OK) return bad.load ? locate_read(p, &bad, st) : st;
  }
  return TSL_OK;
}
