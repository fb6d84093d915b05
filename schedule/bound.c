/* Bound inference over the attach tree (TVM src/te/schedule/bound.cc, InferBound).
 *
 * Stages are visited consumers first. An output is realized whole. Any other
 * non-inlined stage P is realized over the union of the regions its consumers read,
 * seen from where P is computed: the loops enclosing P's attach point stay fixed
 * (symbolic), every other loop variable of the consumers is relaxed over its range. A
 * compute_root stage has no enclosing loops, so its region is constant; it is clipped
 * to the tensor's shape because reads outside it sit behind guards (select or reduce
 * conditions) and are never performed.
 *
 * Each index is brought to the form base + [lo, hi] with base free of relaxed variables:
 * every loop runs from 0 (a root leaf's min is part of its value, see iter_graph.c), so
 * a relaxed loop variable v becomes an offset t in [0, extent); base is the index at
 * t = 0 and [lo, hi] the interval of the difference. A data-dependent index (one that
 * reads memory: a lookup table's T[f(x[i])]) is bounded as a whole by its interval, base
 * 0. Regions whose width the interval analysis cannot bound fall back to the whole
 * tensor dimension.
 *
 * The prefetch pragma uses the same machinery for the region one iteration of a loop
 * reads (tsl_prefetch_stmts).
 */
#include "ir/analysis.h"
#include "schedule/lower_ctx.h"

typedef struct load_list {
  int n, cap;
  const tsl_expr **loads;
} load_list;

static void push_load(load_list *l, const tsl_expr *e) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    const tsl_expr **q = tsl_alloc(sizeof *q * (size_t)cap);
    for (int i = 0; i < l->n; i++) q[i] = l->loads[i];
    l->loads = q;
    l->cap = cap;
  }
  l->loads[l->n++] = e;
}

/* The loads of buffer buf in e (every load when buf is NULL), appended to out. */
static void collect_loads(const tsl_expr *e, const tsl_buffer *buf, load_list *out) {
  if (!e) return;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN:
  case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR:
    collect_loads(e->bin.a, buf, out);
    collect_loads(e->bin.b, buf, out);
    return;
  case TSL_E_NOT: case TSL_E_CAST: collect_loads(e->un.a, buf, out); return;
  case TSL_E_SELECT:
    collect_loads(e->select.cond, buf, out);
    collect_loads(e->select.t, buf, out);
    collect_loads(e->select.f, buf, out);
    return;
  case TSL_E_BROADCAST: collect_loads(e->broadcast.value, buf, out); return;
  case TSL_E_RAMP:
    collect_loads(e->ramp.base, buf, out);
    collect_loads(e->ramp.stride, buf, out);
    return;
  case TSL_E_LOAD:
    if (!buf || e->load.buf == buf) push_load(out, e);
    for (int i = 0; i < e->load.nindex; i++) collect_loads(e->load.index[i], buf, out);
    collect_loads(e->load.predicate, buf, out);
    return;
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++) collect_loads(e->call.args[i], buf, out);
    return;
  case TSL_E_LET:
    collect_loads(e->let.value, buf, out);
    collect_loads(e->let.body, buf, out);
    return;
  case TSL_E_REDUCE:
    collect_loads(e->reduce.source, buf, out);
    collect_loads(e->reduce.condition, buf, out);
    return;
  }
}

/* Loop variables that may be relaxed, with their ranges, and the offset variable each
 * one becomes. */
typedef struct relax_set {
  int n;
  tsl_expr **vars;    /* loop variables */
  tsl_expr **ts;      /* t */
  tsl_var_ranges *ranges; /* t in [0, extent) */
} relax_set;

static relax_set relax_set_new(int cap) {
  relax_set r = {0, NULL, NULL, tsl_var_ranges_new()};
  r.vars = tsl_alloc(sizeof(tsl_expr *) * (size_t)(cap + 1));
  r.ts = tsl_alloc(sizeof(tsl_expr *) * (size_t)(cap + 1));
  return r;
}

static void relax_add(relax_set *r, tsl_expr *var, const char *name, int64_t extent) {
  tsl_expr *t = tsl_var(name, TSL_I64);
  tsl_var_ranges_set(r->ranges, t, extent > 0 ? tsl_interval_range(0, extent - 1) : tsl_interval_point(0));
  r->vars[r->n] = var;
  r->ts[r->n] = t;
  r->n++;
}

static bool is_fixed(tsl_expr *const *fixed, int nfixed, const tsl_expr *v) {
  for (int i = 0; i < nfixed; i++)
    if (fixed[i] == v) return true;
  return false;
}

/* Every leaf loop variable of the stages whose ranges are known (index > pi), minus the
 * loops enclosing stage pi's attach point. */
static relax_set make_relax_set(const tsl_lower_ctx *ctx, int pi) {
  const tsl_schedule *s = ctx->sched;
  int nfixed = 0, cap = 0;
  for (int i = 0; i < s->nstages; i++) cap += s->stages[i]->nleaf;
  tsl_expr **fixed = tsl_alloc(sizeof(tsl_expr *) * (size_t)(cap + 1));
  for (int cur = pi; s->stages[cur]->attach == TSL_ATTACH_AT;) {
    const tsl_stage *a = s->stages[s->stages[cur]->attach_stage];
    for (int k = 0; k < a->nleaf; k++) {
      fixed[nfixed++] = a->iters[a->leaf[k]].var;
      if (a->leaf[k] == s->stages[cur]->attach_iter) break;
    }
    cur = s->stages[cur]->attach_stage;
  }
  relax_set r = relax_set_new(cap);
  for (int si = pi + 1; si < s->nstages; si++) {
    const tsl_stage *st = s->stages[si];
    const tsl_stage_lower *sl = &ctx->stages[si];
    if (st->attach == TSL_ATTACH_INLINE) continue;
    for (int k = 0; k < st->nleaf; k++) {
      int it = st->leaf[k];
      if (!is_fixed(fixed, nfixed, st->iters[it].var)) relax_add(&r, st->iters[it].var, st->iters[it].name, sl->iter_extent[it]);
    }
  }
  return r;
}

static bool reads_memory(const tsl_expr *e) {
  load_list l = {0, 0, NULL};
  collect_loads(e, NULL, &l);
  return l.n > 0;
}

/* One index as base + [lo, hi]. false when the width cannot be bounded. */
static bool index_range(tsl_expr *e, const relax_set *r, tsl_expr **base, int64_t *lo, int64_t *hi) {
  e = tsl_substitute(e, r->n, r->vars, r->ts);
  tsl_expr **zeros = tsl_alloc(sizeof(tsl_expr *) * (size_t)(r->n + 1));
  for (int i = 0; i < r->n; i++) zeros[i] = tsl_i64(0);
  tsl_expr *b = tsl_simplify(tsl_substitute(e, r->n, r->ts, zeros), NULL);
  int64_t bc;
  tsl_interval iv;
  /* A data-dependent index (a lookup table's or a gather's, T[f(x[i])]) has a base that
   * reads memory: the region would move with data read where the stage is realized
   * (and the base be loaded there). Such an index is bounded as a whole instead, by what
   * the interval analysis knows of it (the loaded values' type range, narrowed by masks
   * and clamps: (x & 15) is [0, 15]); else the whole dimension. */
  if (tsl_expr_is_const_int(b, &bc) || reads_memory(b)) {
    iv = tsl_interval_of(tsl_simplify(e, r->ranges), r->ranges);
    if (!iv.has_lo || !iv.has_hi) return false;
    *base = tsl_i64(0);
  } else {
    iv = tsl_interval_of(tsl_simplify(tsl_sub(e, b), r->ranges), r->ranges);
    if (!iv.has_lo || !iv.has_hi) return false;
    *base = b;
  }
  if (iv.empty) iv.lo = iv.hi = 0;
  *lo = iv.lo;
  *hi = iv.hi;
  return true;
}

static tsl_expr *as_i64(tsl_expr *e) { return tsl_type_eq(e->type, TSL_I64) ? e : tsl_cast(TSL_I64, e); }

/* The union of the boxes some loads read, per dimension base + [lo, hi]; `whole` when a
 * dimension's width cannot be bounded or two loads' bases differ by a non-constant. */
typedef struct region_acc {
  int ndim;
  tsl_expr **base;
  int64_t *lo, *hi;
  bool *seen, *whole;
} region_acc;

static region_acc region_acc_new(int ndim) {
  region_acc a;
  a.ndim = ndim;
  a.base = tsl_alloc(sizeof(tsl_expr *) * (size_t)(ndim + 1));
  a.lo = tsl_alloc(sizeof(int64_t) * (size_t)(ndim + 1));
  a.hi = tsl_alloc(sizeof(int64_t) * (size_t)(ndim + 1));
  a.seen = tsl_alloc(sizeof(bool) * (size_t)(ndim + 1));
  a.whole = tsl_alloc(sizeof(bool) * (size_t)(ndim + 1));
  return a;
}

/* Adds the loads of `stage`'s body (loads of one buffer) with the stage's TE variables
 * bound to their root values. */
static void region_add_loads(region_acc *acc, const load_list *loads, const tsl_stage *st, const tsl_stage_lower *sl,
                             const relax_set *r) {
  if (!loads->n) return;
  tsl_expr **values = tsl_iter_pass_up(st, sl, NULL);
  int nb = 2 * (st->op->naxis + st->op->nreduce) + 1;
  tsl_expr **vars = tsl_alloc(sizeof(tsl_expr *) * (size_t)nb);
  tsl_expr **vals = tsl_alloc(sizeof(tsl_expr *) * (size_t)nb);
  int n = tsl_iter_te_bindings(st, values, vars, vals);
  for (int li = 0; li < loads->n; li++) {
    const tsl_expr *ld = loads->loads[li];
    for (int d = 0; d < acc->ndim && d < ld->load.nindex; d++) {
      if (acc->whole[d]) continue;
      tsl_expr *e = as_i64(tsl_substitute(ld->load.index[d], n, vars, vals));
      tsl_expr *b;
      int64_t l, h;
      if (!index_range(e, r, &b, &l, &h)) {
        acc->whole[d] = true;
        continue;
      }
      if (!acc->seen[d]) {
        acc->base[d] = b;
        acc->lo[d] = l;
        acc->hi[d] = h;
        acc->seen[d] = true;
        continue;
      }
      int64_t off;
      if (!tsl_expr_is_const_int(tsl_simplify(tsl_sub(b, acc->base[d]), NULL), &off)) {
        acc->whole[d] = true;
        continue;
      }
      if (off + l < acc->lo[d]) acc->lo[d] = off + l;
      if (off + h > acc->hi[d]) acc->hi[d] = off + h;
    }
  }
}

/* Region of non-output stage pi read by its consumers. */
static void region_from_consumers(tsl_lower_ctx *ctx, int pi) {
  const tsl_schedule *s = ctx->sched;
  const tsl_stage *p = s->stages[pi];
  tsl_stage_lower *pl = &ctx->stages[pi];
  const tsl_buffer *tbuf = p->op->output->buf;
  int ndim = p->op->naxis;
  region_acc acc = region_acc_new(ndim);
  relax_set r = make_relax_set(ctx, pi);
  for (int ci = pi + 1; ci < s->nstages; ci++) {
    const tsl_stage *c = s->stages[ci];
    if (c->attach == TSL_ATTACH_INLINE) continue;
    load_list loads = {0, 0, NULL};
    collect_loads(ctx->stages[ci].body, tbuf, &loads);
    region_add_loads(&acc, &loads, c, &ctx->stages[ci], &r);
  }
  for (int d = 0; d < ndim; d++) {
    int64_t shape = tbuf->shape[d], bc;
    if (acc.whole[d] || !acc.seen[d]) {
      /* unreadable width: the whole dimension; no reader at all: nothing to compute */
      pl->region_min[d] = tsl_i64(0);
      pl->region_extent[d] = acc.whole[d] ? shape : 0;
    } else if (tsl_expr_is_const_int(acc.base[d], &bc)) {
      int64_t a = bc + acc.lo[d], z = bc + acc.hi[d];
      if (a < 0) a = 0;
      if (z > shape - 1) z = shape - 1;
      pl->region_min[d] = tsl_i64(z >= a ? a : 0);
      pl->region_extent[d] = z >= a ? z - a + 1 : 0;
    } else {
      pl->region_min[d] = tsl_simplify(tsl_add(acc.base[d], tsl_i64(acc.lo[d])), NULL);
      pl->region_extent[d] = acc.hi[d] - acc.lo[d] + 1;
    }
  }
}

/* ---- prefetch ---- */

static tsl_expr *clamp(tsl_expr *e, int64_t hi) { return tsl_max(tsl_min(e, tsl_i64(hi)), tsl_i64(0)); }

/* Whether the rows of the box (its innermost dimension) start on cache lines in kernel
 * buffer kb: the box spans the whole innermost dimension, whose length is a multiple of
 * a line, of a compact buffer aligned to a line. */
static bool rows_on_lines(const tsl_buffer *tb, const tsl_buffer *kb, const region_acc *acc, int64_t per_line) {
  int nd = acc->ndim;
  if (kb->strides || kb->ndim != nd || kb->align < 64 || kb->shape[nd - 1] != tb->shape[nd - 1] ||
      kb->shape[nd - 1] % per_line != 0 || acc->hi[nd - 1] - acc->lo[nd - 1] + 1 != tb->shape[nd - 1])
    return false;
  tsl_expr *start = tsl_simplify(tsl_add(acc->base[nd - 1], tsl_i64(acc->lo[nd - 1])), NULL);
  return start->kind == TSL_E_INT && start->int_value == 0;
}

/* Prefetches of the box base + [lo, hi] of te buffer tb (one per cache line of the
 * innermost dimension), as loops over the outer dimensions. */
static tsl_stmt *prefetch_box(const tsl_lower_ctx *ctx, const tsl_buffer *tb, const region_acc *acc) {
  int nd = acc->ndim;
  tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)(nd + 1));
  tsl_expr **pv = tsl_alloc(sizeof(tsl_expr *) * (size_t)(nd + 1));
  int64_t per_line = 64 / (int64_t)tsl_type_bytes(tb->dtype);
  if (per_line < 1) per_line = 1;
  for (int d = 0; d < nd; d++) idx[d] = tsl_i64(0);
  const tsl_buffer *probe = tsl_lower_retarget(ctx, tsl_load((tsl_buffer *)tb, nd, idx, NULL))->load.buf;
  bool aligned = rows_on_lines(tb, probe, acc, per_line);
  for (int d = 0; d < nd; d++) {
    pv[d] = tsl_var(d == nd - 1 ? "pf.line" : "pf.row", TSL_I64);
    tsl_expr *start = tsl_add(acc->base[d], tsl_i64(acc->lo[d]));
    int64_t width = acc->hi[d] - acc->lo[d] + 1;
    if (d < nd - 1) {
      idx[d] = tsl_add(start, pv[d]);
    } else if (aligned) {
      /* whole rows on line boundaries: exactly one prefetch per line */
      idx[d] = tsl_add(start, tsl_mul(pv[d], tsl_i64(per_line)));
    } else {
      /* every line the span touches: one prefetch per line from its start, and its last
       * element (the span need not start on a line boundary) */
      tsl_expr *at = tsl_add(start, tsl_mul(pv[d], tsl_i64(per_line)));
      idx[d] = tsl_min(at, tsl_add(start, tsl_i64(width - 1)));
    }
  }
  tsl_expr *ld = tsl_lower_retarget(ctx, tsl_load((tsl_buffer *)tb, nd, idx, NULL));
  const tsl_buffer *kb = ld->load.buf;
  tsl_expr *addr;
  if (!kb->strides && kb->ndim == ld->load.nindex) {
    /* compact row-major: clamp the element offset, not each index, so that the lines
     * past the end of a dimension are those that follow in memory (an iteration ahead
     * of the loop's last reads what the enclosing loop's next iteration reads first
     * when the loops walk the buffer in storage order, e.g. the next panel of a
     * streamed weight tensor); one index, which storage_flatten leaves as it is */
    tsl_expr *off = ld->load.index[0];
    for (int d = 1; d < kb->ndim; d++) off = tsl_add(tsl_mul(off, tsl_i64(kb->shape[d])), ld->load.index[d]);
    off = clamp(off, tsl_buffer_numel(kb) - 1);
    addr = tsl_load(ld->load.buf, 1, &off, NULL);
  } else {
    tsl_expr **cidx = tsl_alloc(sizeof(tsl_expr *) * (size_t)(nd + 1));
    for (int d = 0; d < nd; d++) cidx[d] = clamp(ld->load.index[d], kb->shape[d] - 1);
    addr = tsl_load(ld->load.buf, nd, cidx, NULL);
  }
  tsl_stmt *s = tsl_evaluate(tsl_call(TSL_CALL_PREFETCH, TSL_I32, 1, &addr));
  for (int d = nd - 1; d >= 0; d--) {
    int64_t width = acc->hi[d] - acc->lo[d] + 1;
    int64_t n = d < nd - 1 ? width : aligned ? width / per_line : (width + per_line - 1) / per_line + 1;
    s = tsl_for(pv[d], tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL, s);
  }
  return s;
}

tsl_status tsl_prefetch_stmts(const tsl_lower_ctx *ctx, int si, int k, tsl_stmt **out) {
  *out = NULL;
  const tsl_stage *st = ctx->sched->stages[si];
  const tsl_stage_lower *sl = &ctx->stages[si];
  int iter = st->leaf[k];
  for (int p = 0; p < st->nprefetch; p++) {
    if (st->prefetch[p].iter != iter) continue;
    const tsl_buffer *tb = st->prefetch[p].tensor;
    relax_set r = relax_set_new(st->nleaf);
    for (int j = k + 1; j < st->nleaf; j++)
      relax_add(&r, st->iters[st->leaf[j]].var, st->iters[st->leaf[j]].name, sl->iter_extent[st->leaf[j]]);
    load_list loads = {0, 0, NULL};
    collect_loads(sl->body, tb, &loads);
    region_acc acc = region_acc_new(tb->ndim);
    region_add_loads(&acc, &loads, st, sl, &r);
    for (int d = 0; d < tb->ndim; d++)
      if (acc.whole[d] || !acc.seen[d])
        return tsl_error(TSL_ERR_SCHEDULE,
                         "prefetch: stage %s: the part of %s read in one iteration of axis %s cannot be bounded "
                         "(dimension %d)",
                         st->name, tb->name, st->iters[iter].name, d);
    /* the iteration `offset` ahead */
    tsl_expr *v = st->iters[iter].var, *ahead = tsl_add(v, tsl_i64(st->prefetch[p].offset));
    for (int d = 0; d < tb->ndim; d++) acc.base[d] = tsl_substitute(acc.base[d], 1, &v, &ahead);
    tsl_stmt *pf = prefetch_box(ctx, tb, &acc);
    *out = *out ? tsl_seq2(*out, pf) : pf;
  }
  return TSL_OK;
}

tsl_status tsl_infer_bound(tsl_lower_ctx *ctx) {
  const tsl_schedule *s = ctx->sched;
  for (int si = s->nstages - 1; si >= 0; si--) {
    const tsl_stage *st = s->stages[si];
    tsl_stage_lower *sl = &ctx->stages[si];
    if (st->attach == TSL_ATTACH_INLINE) continue;
    int ndim = st->op->naxis;
    sl->region_min = tsl_alloc(sizeof(tsl_expr *) * (size_t)(ndim + 1));
    sl->region_extent = tsl_alloc(sizeof(int64_t) * (size_t)(ndim + 1));
    sl->iter_min = tsl_alloc(sizeof(tsl_expr *) * (size_t)(st->niters + 1));
    sl->iter_extent = tsl_alloc(sizeof(int64_t) * (size_t)(st->niters + 1));
    if (st->is_output) {
      for (int d = 0; d < ndim; d++) {
        sl->region_min[d] = tsl_i64(0);
        sl->region_extent[d] = st->op->output->buf->shape[d];
      }
    } else {
      region_from_consumers(ctx, si);
    }
    for (int i = 0; i < st->nroot; i++) {
      if (i < ndim) {
        sl->iter_min[i] = sl->region_min[i];
        sl->iter_extent[i] = sl->region_extent[i];
      } else {
        sl->iter_min[i] = tsl_i64(st->iters[i].min);
        sl->iter_extent[i] = st->iters[i].extent;
      }
    }
    tsl_iter_pass_down(st, sl);
  }
  return TSL_OK;
}
