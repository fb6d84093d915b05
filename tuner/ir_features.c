/* Loop-IR features for the cost model (ir_features.h). */
#include "tuner/ir_features.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/analysis.h"
#include "ir/arena.h"

enum { MAX_DEPTH = 32, MAX_LETS = 64, LEVELS = 4 };

typedef struct loop_info {
  const tsl_expr *var;
  double extent;
  tsl_for_kind kind;
  double min;   /* the loop's first value (0 when unknown) */
  double share; /* the fraction of its iterations in which the body runs (guards, below) */
} loop_info;

/* The dependence of an index on one loop variable. */
typedef struct dep {
  double coef; /* linear coefficient (when dep && !nonlinear) */
  bool dep, nonlinear;
} dep;

typedef struct access {
  const tsl_buffer *buf;
  const tsl_expr *index; /* the (last) index expression, to spot repeated accesses */
  dep d[MAX_DEPTH];  /* per loop of the nest */
  double vec_dense;  /* distinct elements of one execution (lanes, or 1 for a broadcast) */
  double vec_span;   /* 1 + |ramp stride| * (lanes - 1) */
  int lanes;
  bool is_store;
  bool repeat; /* same buffer and index as an earlier access (mark_repeats) */
} access;

typedef struct nest {
  const tsl_stmt *innermost; /* the loop whose body holds the stores; NULL outside loops */
  loop_info loops[MAX_DEPTH];
  int depth;
  double flops_iter;
  int nstores, load_lanes, lanes;
  access *acc;
  int nacc, capacc;
} nest;

typedef struct walker {
  tsl_var_ranges *ranges;
  loop_info stack[MAX_DEPTH];
  const tsl_stmt *stack_loop[MAX_DEPTH];
  int depth;
  const tsl_expr *let_var[MAX_LETS];
  const tsl_expr *let_val[MAX_LETS];
  int nlets;
  nest *nests;
  int nnests, capnests;
  double local_bytes;
  bool nomem;
  bool guards; /* apply `if` guards on loop variables to loop_info.share (tsl_ir_nests) */
} walker;

static bool same_var(const tsl_expr *a, const tsl_expr *b) {
  return a == b || (a->kind == TSL_E_VAR && b->kind == TSL_E_VAR && strcmp(a->var.name, b->var.name) == 0);
}

static const tsl_expr *let_value(const walker *w, const tsl_expr *v) {
  for (int i = w->nlets - 1; i >= 0; i--)
    if (same_var(w->let_var[i], v)) return w->let_val[i];
  return NULL;
}

/* The dependence of integer expression e on loop variable v. */
static dep dep_of(const walker *w, const tsl_expr *e, const tsl_expr *v, int budget) {
  dep r = {0, false, false};
  if (!e || budget <= 0) return r;
  switch (e->kind) {
  case TSL_E_VAR: {
    if (same_var(e, v)) return (dep){1, true, false};
    const tsl_expr *val = let_value(w, e);
    return val ? dep_of(w, val, v, budget - 1) : r;
  }
  case TSL_E_INT:
  case TSL_E_FLOAT: return r;
  case TSL_E_ADD:
  case TSL_E_SUB: {
    dep a = dep_of(w, e->bin.a, v, budget - 1), b = dep_of(w, e->bin.b, v, budget - 1);
    r.dep = a.dep || b.dep;
    r.nonlinear = a.nonlinear || b.nonlinear;
    r.coef = e->kind == TSL_E_ADD ? a.coef + b.coef : a.coef - b.coef;
    return r;
  }
  case TSL_E_MUL: {
    int64_t k;
    if (tsl_expr_is_const_int(e->bin.b, &k)) {
      r = dep_of(w, e->bin.a, v, budget - 1);
      r.coef *= (double)k;
      return r;
    }
    if (tsl_expr_is_const_int(e->bin.a, &k)) {
      r = dep_of(w, e->bin.b, v, budget - 1);
      r.coef *= (double)k;
      return r;
    }
    break;
  }
  case TSL_E_CAST: return dep_of(w, e->un.a, v, budget - 1);
  case TSL_E_RAMP: return dep_of(w, e->ramp.base, v, budget - 1);
  case TSL_E_BROADCAST: return dep_of(w, e->broadcast.value, v, budget - 1);
  default: break;
  }
  /* anything else (div, mod, min, max, select, a product of variables...): non-linear
   * in v when v occurs at all */
  dep a = {0, false, false}, b = a, c = a;
  switch (e->kind) {
  case TSL_E_SELECT:
    a = dep_of(w, e->select.cond, v, budget - 1);
    b = dep_of(w, e->select.t, v, budget - 1);
    c = dep_of(w, e->select.f, v, budget - 1);
    break;
  case TSL_E_NOT: a = dep_of(w, e->un.a, v, budget - 1); break;
  case TSL_E_LOAD:
    for (int i = 0; i < e->load.nindex && !a.dep; i++) a = dep_of(w, e->load.index[i], v, budget - 1);
    break;
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs && !a.dep; i++) a = dep_of(w, e->call.args[i], v, budget - 1);
    break;
  case TSL_E_LET:
    a = dep_of(w, e->let.value, v, budget - 1);
    b = dep_of(w, e->let.body, v, budget - 1);
    break;
  default:
    if (e->kind >= TSL_E_ADD && e->kind <= TSL_E_OR) {
      a = dep_of(w, e->bin.a, v, budget - 1);
      b = dep_of(w, e->bin.b, v, budget - 1);
    }
    break;
  }
  r.dep = r.nonlinear = a.dep || b.dep || c.dep;
  return r;
}

static nest *nest_for(walker *w) {
  const tsl_stmt *inner = w->depth > 0 ? w->stack_loop[w->depth - 1] : NULL;
  for (int i = w->nnests - 1; i >= 0 && i >= w->nnests - 4; i--)
    if (w->nests[i].innermost == inner && w->nests[i].depth == w->depth) return &w->nests[i];
  if (w->nnests == w->capnests) {
    int cap = w->capnests ? 2 * w->capnests : 16;
    nest *n = realloc(w->nests, sizeof *n * (size_t)cap);
    if (!n) return NULL;
    w->nests = n;
    w->capnests = cap;
  }
  nest *n = &w->nests[w->nnests++];
  memset(n, 0, sizeof *n);
  n->innermost = inner;
  n->depth = w->depth;
  memcpy(n->loops, w->stack, sizeof n->loops[0] * (size_t)w->depth);
  return n;
}

/* Records an access of buf at flattened (or multi-dimensional) index idx. */
static void add_access(walker *w, nest *n, const tsl_buffer *buf, int nindex, tsl_expr *const *idx, bool is_store) {
  if (!buf || nindex < 1) return;
  if (n->nacc == n->capacc) {
    int cap = n->capacc ? 2 * n->capacc : 16;
    access *a = realloc(n->acc, sizeof *a * (size_t)cap);
    if (!a) {
      w->nomem = true;
      return;
    }
    n->acc = a;
    n->capacc = cap;
  }
  access *a = &n->acc[n->nacc++];
  memset(a, 0, sizeof *a);
  a->buf = buf;
  a->index = idx[nindex - 1];
  a->is_store = is_store;
  a->lanes = idx[0]->type.lanes;
  a->vec_dense = a->vec_span = 1;
  if (a->lanes > 1) {
    int64_t s;
    if (idx[nindex - 1]->kind == TSL_E_RAMP && tsl_expr_is_const_int(idx[nindex - 1]->ramp.stride, &s)) {
      a->vec_dense = s != 0 ? a->lanes : 1;
      a->vec_span = 1 + fabs((double)s) * (a->lanes - 1);
    } else if (idx[nindex - 1]->kind == TSL_E_BROADCAST) {
      a->vec_dense = a->vec_span = 1;
    } else {
      a->vec_dense = a->lanes;
      a->vec_span = INFINITY;
    }
  }
  for (int l = 0; l < n->depth; l++) {
    /* the flat element offset: sum of index_i * stride_i (row-major unless the
     * buffer says otherwise); lowered IR has one flat index */
    double stride = 1, coef = 0;
    bool d = false, nl = false;
    for (int i = nindex - 1; i >= 0; i--) {
      dep x = dep_of(w, idx[i], n->loops[l].var, 64);
      d = d || x.dep;
      nl = nl || x.nonlinear;
      double st = buf->ndim == nindex && buf->strides ? (double)buf->strides[i] : stride;
      coef += x.coef * st;
      if (buf->ndim == nindex) stride *= (double)buf->shape[i];
    }
    a->d[l] = (dep){coef, d, nl};
  }
}

static void flops_and_loads(walker *w, nest *n, const tsl_expr *e, int budget) {
  if (!e || budget <= 0) return;
  int lanes = e->type.lanes;
  switch (e->kind) {
  case TSL_E_ADD:
  case TSL_E_SUB:
  case TSL_E_MUL:
  case TSL_E_DIV:
  case TSL_E_MIN:
  case TSL_E_MAX:
    if (tsl_type_is_float(e->type)) n->flops_iter += lanes;
    flops_and_loads(w, n, e->bin.a, budget - 1);
    flops_and_loads(w, n, e->bin.b, budget - 1);
    return;
  case TSL_E_LOAD:
    n->load_lanes += lanes;
    if (lanes > n->lanes) n->lanes = lanes;
    add_access(w, n, e->load.buf, e->load.nindex, e->load.index, false);
    return;
  case TSL_E_CALL:
    if (e->call.op == TSL_CALL_FMA) n->flops_iter += 2.0 * lanes;
    for (int i = 0; i < e->call.nargs; i++) flops_and_loads(w, n, e->call.args[i], budget - 1);
    return;
  case TSL_E_SELECT:
    flops_and_loads(w, n, e->select.cond, budget - 1);
    flops_and_loads(w, n, e->select.t, budget - 1);
    flops_and_loads(w, n, e->select.f, budget - 1);
    return;
  case TSL_E_CAST:
  case TSL_E_NOT: flops_and_loads(w, n, e->un.a, budget - 1); return;
  case TSL_E_BROADCAST: flops_and_loads(w, n, e->broadcast.value, budget - 1); return;
  case TSL_E_LET:
    flops_and_loads(w, n, e->let.value, budget - 1);
    flops_and_loads(w, n, e->let.body, budget - 1);
    return;
  default:
    if (e->kind >= TSL_E_EQ && e->kind <= TSL_E_OR) {
      flops_and_loads(w, n, e->bin.a, budget - 1);
      flops_and_loads(w, n, e->bin.b, budget - 1);
    }
    return;
  }
}

static double upper_extent(walker *w, const tsl_expr *ext) {
  int64_t v;
  if (tsl_expr_is_const_int(ext, &v)) return v > 0 ? (double)v : 0;
  tsl_interval iv = tsl_interval_of(ext, w->ranges);
  return iv.has_hi && iv.hi > 0 ? (double)iv.hi : 1;
}

/* Whether statement s holds a loop. */
static bool has_loop(const tsl_stmt *s) {
  if (!s) return false;
  switch (s->kind) {
  case TSL_S_FOR: return true;
  case TSL_S_ALLOCATE: return has_loop(s->allocate.body);
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++)
      if (has_loop(s->seq.stmts[i])) return true;
    return false;
  case TSL_S_IF: return has_loop(s->if_.then_case) || has_loop(s->if_.else_case);
  case TSL_S_LET: return has_loop(s->let.body);
  default: return false;
  }
}

/* The fraction of the iterations of an enclosing loop for which guard `cond` holds, when
 * cond compares that loop's variable with a constant (`v < c`, `c <= v`, `v == c`, ...;
 * the lowering's partition of a loop into full tiles and a tail, `if (y.outer < 13) ...
 * else ...`); *level is the loop's depth, -1 (and 1 returned) for any other condition. A
 * nest under the then-branch runs share * f of that loop's iterations, under the
 * else-branch share * (1 - f): the static cost model counts each copy's executions, not
 * the loop's extent for both (docs/cost_static.md). */
static double guard_share(const walker *w, const tsl_expr *cond, int *level) {
  *level = -1;
  if (!cond || cond->kind < TSL_E_EQ || cond->kind > TSL_E_GE) return 1;
  tsl_expr_kind k = cond->kind;
  const tsl_expr *a = cond->bin.a, *b = cond->bin.b;
  int64_t c;
  if (!tsl_expr_is_const_int(b, &c)) {
    if (!tsl_expr_is_const_int(a, &c)) return 1;
    const tsl_expr *t = a; /* c OP v: v OP' c */
    a = b;
    b = t;
    k = k == TSL_E_LT ? TSL_E_GT : k == TSL_E_LE ? TSL_E_GE : k == TSL_E_GT ? TSL_E_LT : k == TSL_E_GE ? TSL_E_LE : k;
  }
  if (a->kind != TSL_E_VAR) return 1;
  for (int l = w->depth - 1; l >= 0; l--) {
    if (!same_var(w->stack[l].var, a)) continue;
    double lo = w->stack[l].min, n = w->stack[l].extent, hi = lo + n - 1, cnt = 0, x = (double)c;
    if (n < 1) return 1;
    switch (k) {
    case TSL_E_LT: cnt = x - lo; break;
    case TSL_E_LE: cnt = x - lo + 1; break;
    case TSL_E_GT: cnt = hi - x; break;
    case TSL_E_GE: cnt = hi - x + 1; break;
    case TSL_E_EQ: cnt = x >= lo && x <= hi ? 1 : 0; break;
    case TSL_E_NE: cnt = x >= lo && x <= hi ? n - 1 : n; break;
    default: return 1;
    }
    *level = l;
    return cnt <= 0 ? 0 : cnt >= n ? 1 : cnt / n;
  }
  return 1;
}

static void walk(walker *w, const tsl_stmt *s) {
  if (!s || w->nomem) return;
  switch (s->kind) {
  case TSL_S_FOR: {
    if (w->depth >= MAX_DEPTH) return;
    double ext = upper_extent(w, s->loop.extent);
    tsl_interval lo = tsl_interval_of(s->loop.min, w->ranges);
    if (lo.has_lo && lo.has_hi && ext >= 1)
      tsl_var_ranges_set(w->ranges, s->loop.var, tsl_interval_range(lo.lo, lo.hi + (int64_t)ext - 1));
    w->stack[w->depth] = (loop_info){s->loop.var, ext, s->loop.for_kind, lo.has_lo ? (double)lo.lo : 0, 1.0};
    w->stack_loop[w->depth++] = s;
    walk(w, s->loop.body);
    w->depth--;
    return;
  }
  case TSL_S_STORE: {
    nest *n = nest_for(w);
    if (!n) {
      w->nomem = true;
      return;
    }
    n->nstores++;
    int lanes = s->store.index[0]->type.lanes;
    if (lanes > n->lanes) n->lanes = lanes;
    add_access(w, n, s->store.buf, s->store.nindex, s->store.index, true);
    flops_and_loads(w, n, s->store.value, 256);
    return;
  }
  case TSL_S_ALLOCATE: {
    const tsl_buffer *b = s->allocate.buf;
    w->local_bytes += (double)tsl_buffer_numel(b) * (double)tsl_type_bytes(b->dtype);
    walk(w, s->allocate.body);
    return;
  }
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) walk(w, s->seq.stmts[i]);
    return;
  case TSL_S_IF: {
    int level = -1;
    double taken = guard_share(w, s->if_.cond, &level);
    bool split = w->guards && level >= 0 && (has_loop(s->if_.then_case) || has_loop(s->if_.else_case));
    double share = split ? w->stack[level].share : 1;
    if (split) w->stack[level].share = share * taken;
    walk(w, s->if_.then_case);
    if (split) w->stack[level].share = share * (1 - taken);
    walk(w, s->if_.else_case);
    if (split) w->stack[level].share = share;
    return;
  }
  case TSL_S_LET:
    if (w->nlets < MAX_LETS) {
      w->let_var[w->nlets] = s->let.var;
      w->let_val[w->nlets++] = s->let.value;
      walk(w, s->let.body);
      w->nlets--;
    } else {
      walk(w, s->let.body);
    }
    return;
  case TSL_S_EVALUATE: return;
  }
}

static double trip_of(const nest *n, int from) {
  double t = 1;
  for (int l = from; l < n->depth; l++) t *= n->loops[l].extent;
  return t;
}

static float lg(double x) { return (float)log2(1.0 + (x > 0 && isfinite(x) ? x : 0)); }

/* Marks each access that repeats an earlier one of the same buffer with an equal index
 * (the load and store of an accumulator touch one element). */
static void mark_repeats(nest *n) {
  for (int j = 0; j < n->nacc; j++) {
    access *b = &n->acc[j];
    for (int k = 0; k < j && !b->repeat; k++)
      b->repeat = n->acc[k].buf == b->buf && !n->acc[k].repeat && tsl_expr_equal(n->acc[k].index, b->index);
  }
}

/* bytes(L) and accessed bytes during the innermost L loops of n (mark_repeats done). */
/* only: the accesses of that buffer alone (NULL: all buffers). */
static void level_bytes(const nest *n, int L, const tsl_buffer *only, double *distinct, double *accessed) {
  int from = n->depth - L < 0 ? 0 : n->depth - L;
  double reps = trip_of(n, from);
  *distinct = *accessed = 0;
  const tsl_buffer *bufs[64];
  double elems[64];
  int nb = 0;
  for (int i = 0; i < n->nacc; i++) {
    const access *a = &n->acc[i];
    if (only && a->buf != only) continue;
    double ebytes = (double)tsl_type_bytes(a->buf->dtype);
    *accessed += a->lanes * ebytes * reps;
    if (a->repeat) continue;
    double dense = a->vec_dense, span = a->vec_span;
    for (int l = from; l < n->depth; l++) {
      if (!a->d[l].dep) continue;
      dense *= n->loops[l].extent;
      span = a->d[l].nonlinear ? INFINITY : span + fabs(a->d[l].coef) * (n->loops[l].extent - 1);
    }
    double e = dense < span ? dense : span;
    int k = 0;
    while (k < nb && bufs[k] != a->buf) k++;
    if (k == nb && nb < 64) {
      bufs[nb] = a->buf;
      elems[nb++] = 0;
    }
    if (k < nb) elems[k] += e;
    else *distinct += e * ebytes; /* beyond 64 buffers: uncapped */
  }
  /* per buffer: the sum over its accesses, capped at the buffer */
  for (int k = 0; k < nb; k++) {
    double numel = (double)tsl_buffer_numel(bufs[k]);
    *distinct += (elems[k] < numel ? elems[k] : numel) * (double)tsl_type_bytes(bufs[k]->dtype);
  }
}

static void features_of(walker *w, float *out) {
  memset(out, 0, sizeof *out * TSL_IR_NFEATURES);
  double total = 0, best = -1;
  nest *d = NULL;
  for (int i = 0; i < w->nnests; i++) {
    nest *n = &w->nests[i];
    double f = n->flops_iter * trip_of(n, 0);
    total += f;
    /* float work first; kernels without float ops: the most store executions */
    double key = f > 0 ? f : n->nstores * trip_of(n, 0) * 1e-9;
    if (key > best) {
      best = key;
      d = n;
    }
  }
  out[0] = lg(total);
  out[1] = (float)w->nnests;
  out[30] = lg(w->local_bytes);
  if (!d) return;
  mark_repeats(d);
  double trip = trip_of(d, 0);
  out[2] = lg(trip);
  out[3] = (float)d->depth;
  out[4] = (float)d->lanes;
  out[5] = (float)d->nstores;
  out[6] = (float)d->flops_iter;
  out[7] = (float)d->load_lanes;
  for (int l = 0; l < d->depth; l++)
    if (d->loops[l].kind == TSL_FOR_PARALLEL) {
      out[8] = lg(d->loops[l].extent);
      out[31] = lg(trip / (d->loops[l].extent > 0 ? d->loops[l].extent : 1));
      break;
    }
  for (int k = 0; k < 6 && k < d->depth; k++) out[9 + k] = lg(d->loops[d->depth - 1 - k].extent);
  for (int L = 1; L <= LEVELS; L++) {
    double distinct, accessed;
    level_bytes(d, L, NULL, &distinct, &accessed);
    int from = d->depth - L < 0 ? 0 : d->depth - L;
    double flops = d->flops_iter * trip_of(d, from);
    out[14 + L] = lg(distinct);
    out[18 + L] = lg(distinct > 0 ? accessed / distinct : 0);
    out[22 + L] = lg(distinct > 0 ? flops / distinct : 0);
  }
  int loads = 0, invariant = 0, unit = 0;
  double max_stride = 0;
  for (int i = 0; i < d->nacc; i++) {
    const access *a = &d->acc[i];
    if (a->is_store) continue;
    loads++;
    if (d->depth == 0) {
      invariant++;
      continue;
    }
    const dep *x = &a->d[d->depth - 1];
    if (!x->dep) invariant++;
    else if (!x->nonlinear && fabs(x->coef) <= a->vec_span) unit++; /* next iteration: adjacent */
    double st = x->nonlinear ? 1e9 : fabs(x->coef);
    if (st > max_stride) max_stride = st;
  }
  if (loads > 0) {
    out[27] = (float)invariant / (float)loads;
    out[28] = (float)unit / (float)loads;
  }
  out[29] = lg(max_stride);
}

/* Walks f's body with a fresh walker (guards: loop_info.share follows `if` guards) and
 * calls done(w, arg) on the nests found. */
static tsl_status walk_func(const tsl_func *f, bool guards, void (*done)(walker *w, void *arg), void *arg) {
  tsl_arena *a = tsl_arena_new();
  if (!a) return tsl_error(TSL_ERR_NOMEM, "ir features: out of memory");
  tsl_arena *prev = tsl_arena_set_current(a);
  walker *w = calloc(1, sizeof *w);
  tsl_status st = TSL_OK;
  if (!w) {
    st = tsl_error(TSL_ERR_NOMEM, "ir features: out of memory");
  } else {
    w->ranges = tsl_var_ranges_new();
    w->guards = guards;
    walk(w, f->body);
    if (w->nomem) st = tsl_error(TSL_ERR_NOMEM, "ir features: out of memory");
    else done(w, arg);
    for (int i = 0; i < w->nnests; i++) free(w->nests[i].acc);
    free(w->nests);
    free(w);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  return st;
}

static void features_done(walker *w, void *arg) { features_of(w, arg); }

tsl_status tsl_ir_features(const tsl_func *f, float *out) {
  if (!f || !out) return tsl_error(TSL_ERR_INVALID, "ir features: NULL argument");
  return walk_func(f, false, features_done, out);
}

/* The per-buffer footprints and loop dependences of nest n into r (tsl_ir_nest). */
static void nest_buffers(const nest *n, tsl_ir_nest *r) {
  const tsl_buffer *bufs[TSL_IR_MAX_NEST_BUFS];
  r->nbufs = 0;
  for (int i = 0; i < n->nacc; i++) {
    const access *a = &n->acc[i];
    int k = 0;
    while (k < r->nbufs && bufs[k] != a->buf) k++;
    if (k == r->nbufs) {
      if (r->nbufs == TSL_IR_MAX_NEST_BUFS) {
        r->buf_deps[k - 1] = ~(uint64_t)0; /* the overflow: no reuse assumed */
        continue;
      }
      bufs[r->nbufs++] = a->buf;
      r->buf_deps[k] = 0;
    }
    for (int l = 0; l < n->depth && l < 64; l++)
      if (a->d[l].dep) r->buf_deps[k] |= (uint64_t)1 << l;
  }
  for (int k = 0; k < r->nbufs; k++)
    for (int L = 0; L <= n->depth; L++) {
      double accessed;
      level_bytes(n, L, bufs[k], &r->buf_bytes[k][L], &accessed);
    }
  /* buffers past the limit: their bytes go to the last one */
  if (r->nbufs == TSL_IR_MAX_NEST_BUFS)
    for (int L = 0; L <= n->depth; L++) {
      double sum = 0;
      for (int k = 0; k < r->nbufs - 1; k++) sum += r->buf_bytes[k][L];
      if (r->bytes[L] > sum) r->buf_bytes[r->nbufs - 1][L] = r->bytes[L] - sum;
    }
}

typedef struct nests_out {
  tsl_ir_nest *nests;
  int n;
} nests_out;

static void nests_done(walker *w, void *arg) {
  nests_out *o = arg;
  o->nests = calloc((size_t)(w->nnests > 0 ? w->nnests : 1), sizeof *o->nests);
  if (!o->nests) return;
  o->n = w->nnests;
  for (int i = 0; i < w->nnests; i++) {
    nest *n = &w->nests[i];
    tsl_ir_nest *r = &o->nests[i];
    mark_repeats(n);
    r->depth = n->depth;
    r->flops_iter = n->flops_iter;
    for (int l = 0; l < n->depth; l++) {
      r->names[l] = n->loops[l].var->var.name;
      r->extents[l] = n->loops[l].extent;
      r->kinds[l] = n->loops[l].kind;
      r->share[l] = n->loops[l].share;
    }
    for (int L = 0; L <= n->depth; L++) {
      double accessed;
      level_bytes(n, L, NULL, &r->bytes[L], &accessed);
    }
    nest_buffers(n, r);
  }
}

tsl_status tsl_ir_nests(const tsl_func *f, tsl_ir_nest **out, int *n) {
  if (!f || !out || !n) return tsl_error(TSL_ERR_INVALID, "ir nests: NULL argument");
  nests_out o = {NULL, 0};
  tsl_status st = walk_func(f, true, nests_done, &o);
  if (st == TSL_OK && !o.nests) st = tsl_error(TSL_ERR_NOMEM, "ir nests: out of memory");
  if (st != TSL_OK) {
    free(o.nests);
    o.nests = NULL;
    o.n = 0;
  }
  *out = o.nests;
  *n = o.n;
  return st;
}
