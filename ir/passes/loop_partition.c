/* Loop partitioning on likely conditions (see loop_partition.h). */
#include "ir/passes/loop_partition.h"

#include "ir/analysis.h"
#include "ir/passes/mutate.h"

typedef struct part_state {
  tsl_var_ranges *ranges; /* enclosing loop and let variables */
  bool partition;
} part_state;

static void set_loop_range(tsl_var_ranges *r, tsl_expr *var, tsl_expr *min, tsl_expr *extent) {
  tsl_interval lo = tsl_interval_of(min, r);
  tsl_interval hi = tsl_interval_of(tsl_sub(tsl_add(min, extent), tsl_int(min->type, 1)), r);
  tsl_interval v = tsl_interval_everything();
  v.has_lo = lo.has_lo;
  v.lo = lo.lo;
  v.has_hi = hi.has_hi;
  v.hi = hi.hi;
  if (v.has_lo && v.has_hi && v.hi < v.lo) v.empty = true;
  tsl_var_ranges_set(r, var, v);
}

static bool is_likely(const tsl_expr *e) { return e->kind == TSL_E_CALL && e->call.op == TSL_CALL_LIKELY; }

/* ---- solving one condition for the loop variable ---- */

static int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) q--;
  return q;
}

/* The values of v where cond holds for every value the other variables take: [lo, hi)
 * with optional sides. */
typedef struct v_range {
  bool has_lo, has_hi;
  int64_t lo, hi;
} v_range;

static bool solve(const tsl_expr *cond, tsl_expr *v, const tsl_var_ranges *r, v_range *out) {
  if (cond->type.lanes != 1) return false;
  if (cond->kind == TSL_E_AND) {
    v_range a, b;
    if (!solve(cond->bin.a, v, r, &a) || !solve(cond->bin.b, v, r, &b)) return false;
    *out = a;
    if (b.has_lo && (!out->has_lo || b.lo > out->lo)) out->lo = b.lo, out->has_lo = true;
    if (b.has_hi && (!out->has_hi || b.hi < out->hi)) out->hi = b.hi, out->has_hi = true;
    return true;
  }
  tsl_expr_kind k = cond->kind;
  if (k != TSL_E_LT && k != TSL_E_LE && k != TSL_E_GT && k != TSL_E_GE) return false;
  tsl_expr *x = cond->bin.a, *y = cond->bin.b;
  if (!tsl_type_is_intlike(x->type) || x->type.lanes != 1 || !tsl_expr_uses_var(cond, v)) return false;
  /* d = x - y = a*v + rest, checked to be exactly linear in v */
  tsl_expr *d = tsl_simplify(tsl_sub(x, y), NULL);
  tsl_expr *zero = tsl_int(v->type, 0), *one = tsl_int(v->type, 1);
  tsl_expr *rest = tsl_simplify(tsl_substitute(d, 1, &v, &zero), NULL);
  int64_t a, z;
  if (!tsl_expr_is_const_int(tsl_simplify(tsl_sub(tsl_substitute(d, 1, &v, &one), rest), NULL), &a) || a == 0)
    return false;
  tsl_expr *residue = tsl_simplify(tsl_sub(d, tsl_add(tsl_mul(tsl_int(v->type, a), v), rest)), NULL);
  if (!tsl_expr_is_const_int(residue, &z) || z != 0) return false;
  tsl_interval R = tsl_interval_of(tsl_simplify(rest, r), r);
  if (R.empty) return false;
  /* every case as c*v <= K for all values of rest */
  int64_t c, K;
  if (k == TSL_E_LT || k == TSL_E_LE) {
    if (!R.has_hi) return false;
    c = a;
    K = k == TSL_E_LT ? -R.hi - 1 : -R.hi;
  } else {
    if (!R.has_lo) return false;
    c = -a;
    K = k == TSL_E_GT ? R.lo - 1 : R.lo;
  }
  out->has_lo = out->has_hi = false;
  if (c > 0) {
    out->has_hi = true;
    out->hi = floordiv(K, c) + 1;
  } else {
    out->has_lo = true;
    out->lo = -floordiv(-K, c); /* ceil(K / c) */
  }
  return true;
}

/* ---- collecting the likely conditions of a loop body ---- */

typedef struct cond_list {
  int n, cap;
  const tsl_expr **conds; /* the likely calls solved */
  v_range *ranges;
} cond_list;

static void collect(const tsl_stmt *s, tsl_expr *v, tsl_var_ranges *r, cond_list *out) {
  if (!s) return;
  switch (s->kind) {
  case TSL_S_FOR:
    set_loop_range(r, s->loop.var, s->loop.min, s->loop.extent);
    collect(s->loop.body, v, r, out);
    return;
  case TSL_S_LET:
    if (s->let.value->type.lanes == 1 && tsl_type_is_intlike(s->let.value->type))
      tsl_var_ranges_set(r, s->let.var, tsl_interval_of(s->let.value, r));
    collect(s->let.body, v, r, out);
    return;
  case TSL_S_IF: {
    v_range vr;
    if (is_likely(s->if_.cond) && solve(s->if_.cond->call.args[0], v, r, &vr)) {
      if (out->n == out->cap) {
        int cap = out->cap ? out->cap * 2 : 8;
        const tsl_expr **c = tsl_alloc(sizeof *c * (size_t)cap);
        v_range *rr = tsl_alloc(sizeof *rr * (size_t)cap);
        for (int i = 0; i < out->n; i++) c[i] = out->conds[i], rr[i] = out->ranges[i];
        out->conds = c;
        out->ranges = rr;
        out->cap = cap;
      }
      out->conds[out->n] = s->if_.cond;
      out->ranges[out->n++] = vr;
    }
    collect(s->if_.then_case, v, r, out);
    collect(s->if_.else_case, v, r, out);
    return;
  }
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) collect(s->seq.stmts[i], v, r, out);
    return;
  case TSL_S_ALLOCATE: collect(s->allocate.body, v, r, out); return;
  case TSL_S_STORE:
  case TSL_S_EVALUATE: return;
  }
}

/* ---- dropping the conditions known to hold ---- */

typedef struct drop_state {
  const tsl_expr *const *conds;
  int n;
} drop_state;

static tsl_stmt *drop_stmt(tsl_mutator *m, tsl_stmt *s) {
  const drop_state *d = m->ud;
  if (s->kind == TSL_S_IF)
    for (int i = 0; i < d->n; i++)
      if (s->if_.cond == d->conds[i]) return tsl_mutate_stmt(m, s->if_.then_case);
  return tsl_mutate_stmt_children(m, s);
}

static tsl_stmt *drop_conds(tsl_stmt *s, const tsl_expr *const *conds, int n) {
  drop_state d = {conds, n};
  tsl_mutator m = {NULL, drop_stmt, &d};
  return tsl_mutate_stmt(&m, s);
}

/* ---- the pass ---- */

static tsl_stmt *part_loop_body(tsl_mutator *m, tsl_stmt *loop) {
  part_state *st = m->ud;
  set_loop_range(st->ranges, loop->loop.var, loop->loop.min, loop->loop.extent);
  tsl_stmt *b = tsl_mutate_stmt(m, loop->loop.body);
  return b == loop->loop.body ? loop : tsl_for(loop->loop.var, loop->loop.min, loop->loop.extent, loop->loop.for_kind, b);
}

/* A copy of loop over [lo, hi) with a fresh variable. */
static tsl_stmt *piece(const tsl_stmt *loop, int64_t lo, int64_t hi) {
  tsl_expr *v = loop->loop.var;
  tsl_expr *nv = tsl_var(v->var.name, v->type);
  tsl_stmt *body = tsl_stmt_fresh_binders(tsl_substitute_stmt(loop->loop.body, 1, &v, &nv));
  return tsl_for(nv, tsl_int(v->type, lo), tsl_int(v->type, hi - lo), loop->loop.for_kind, body);
}

/* Loop v's body mutated with v in [lo, hi). */
static tsl_stmt *body_in_range(tsl_mutator *m, tsl_expr *v, int64_t lo, int64_t hi, tsl_stmt *body) {
  part_state *st = m->ud;
  set_loop_range(st->ranges, v, tsl_int(v->type, lo), tsl_int(v->type, hi - lo));
  return tsl_mutate_stmt(m, body);
}

/* A parallel loop is partitioned inside itself: one loop over the whole range whose body
 * branches on v to the steady body (the conditions dropped) or to a copy that keeps
 * them (prologue, epilogue; fresh binders), each partitioned further with its range of
 * v. Cut into pieces, each piece would be a launch of its own and the iterations of
 * different pieces would never run at the same time: a loop over 2 blocks whose first
 * block differs (the top padding of a Winograd input) became 2 serial launches of 1
 * iteration, and the kernel ran no faster on 2 threads than on 1. */
static tsl_stmt *partition_inside(part_state *st, tsl_stmt *s, tsl_mutator *m, tsl_stmt *steady_body, int64_t lo,
                                  int64_t hi) {
  tsl_expr *v = s->loop.var;
  int64_t min = 0, extent = 0;
  tsl_expr_is_const_int(s->loop.min, &min);
  tsl_expr_is_const_int(s->loop.extent, &extent);
  int64_t end = min + extent;
  tsl_stmt *body = body_in_range(m, v, lo, hi, steady_body);
  tsl_expr *in_steady = NULL;
  if (lo > min) in_steady = tsl_ge(v, tsl_int(v->type, lo));
  if (hi < end) {
    tsl_expr *below = tsl_lt(v, tsl_int(v->type, hi));
    in_steady = in_steady ? tsl_and(in_steady, below) : below;
  }
  if (in_steady) {
    tsl_stmt *other = NULL;
    if (hi < end) other = body_in_range(m, v, hi, end, tsl_stmt_fresh_binders(s->loop.body));
    if (lo > min) {
      tsl_stmt *head = body_in_range(m, v, min, lo, tsl_stmt_fresh_binders(s->loop.body));
      other = other ? tsl_if(tsl_lt(v, tsl_int(v->type, lo)), head, other) : head;
    }
    body = tsl_if(in_steady, body, other);
  }
  set_loop_range(st->ranges, v, s->loop.min, s->loop.extent);
  return tsl_for(v, s->loop.min, s->loop.extent, s->loop.for_kind, body);
}

/* The loop cut at the range where its solved likely conditions hold, or NULL when that
 * gives nothing (no solved condition, or an empty range). */
static tsl_stmt *try_partition(part_state *st, tsl_stmt *s, tsl_mutator *m) {
  int64_t min, extent;
  if (!tsl_expr_is_const_int(s->loop.min, &min) || !tsl_expr_is_const_int(s->loop.extent, &extent) || extent < 2)
    return NULL;
  int64_t end = min + extent;
  cond_list cl = {0, 0, NULL, NULL};
  tsl_var_ranges *r = tsl_var_ranges_copy(st->ranges);
  set_loop_range(r, s->loop.var, s->loop.min, s->loop.extent);
  collect(s->loop.body, s->loop.var, r, &cl);
  int64_t lo = min, hi = end;
  const tsl_expr **used = tsl_alloc(sizeof *used * (size_t)(cl.n + 1));
  int nused = 0;
  for (int i = 0; i < cl.n; i++) {
    int64_t a = cl.ranges[i].has_lo && cl.ranges[i].lo > min ? cl.ranges[i].lo : min;
    int64_t b = cl.ranges[i].has_hi && cl.ranges[i].hi < end ? cl.ranges[i].hi : end;
    /* a condition that holds on no part of the loop decides nothing here (the inner
     * loops of the pieces may still partition on it) */
    if (b <= a) continue;
    int64_t nlo = a > lo ? a : lo, nhi = b < hi ? b : hi;
    if (nhi <= nlo) continue;
    lo = nlo;
    hi = nhi;
    used[nused++] = cl.conds[i];
  }
  if (!nused) return NULL;
  tsl_stmt *steady_body = drop_conds(s->loop.body, used, nused);
  if (s->loop.for_kind == TSL_FOR_PARALLEL) return partition_inside(st, s, m, steady_body, lo, hi);
  tsl_stmt *steady = tsl_for(s->loop.var, tsl_int(s->loop.var->type, lo), tsl_int(s->loop.var->type, hi - lo),
                             s->loop.for_kind, steady_body);
  tsl_stmt *parts[3] = {NULL, part_loop_body(m, steady), NULL};
  if (lo > min) parts[0] = part_loop_body(m, piece(s, min, lo));
  if (hi < end) parts[2] = part_loop_body(m, piece(s, hi, end));
  return tsl_seq(3, parts);
}

static tsl_stmt *part_stmt(tsl_mutator *m, tsl_stmt *s) {
  part_state *st = m->ud;
  if (s->kind == TSL_S_LET && s->let.value->type.lanes == 1 && tsl_type_is_intlike(s->let.value->type))
    tsl_var_ranges_set(st->ranges, s->let.var, tsl_interval_of(s->let.value, st->ranges));
  if (s->kind != TSL_S_FOR) return tsl_mutate_stmt_children(m, s);
  if (st->partition && s->loop.for_kind != TSL_FOR_VECTORIZED) {
    tsl_stmt *p = try_partition(st, s, m);
    if (p) return p;
  }
  return part_loop_body(m, s);
}

static tsl_expr *strip_likely(tsl_mutator *m, tsl_expr *e) {
  if (is_likely(e)) return tsl_mutate_expr(m, e->call.args[0]);
  return tsl_mutate_expr_children(m, e);
}

tsl_stmt *tsl_pass_loop_partition(tsl_stmt *s, bool partition) {
  part_state st = {tsl_var_ranges_new(), partition};
  tsl_mutator m = {strip_likely, part_stmt, &st};
  return tsl_mutate_stmt(&m, s);
}
