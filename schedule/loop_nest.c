/* Loop nests of stages (TVM src/te/operation/compute_op.cc MakeComputeStmt and
 * src/te/schedule/schedule_ops.cc for the attach points). */
#include "ir/analysis.h"
#include "schedule/lower_ctx.h"

tsl_expr *tsl_lower_map_loads(tsl_expr *e, tsl_load_rewrite_fn fn, void *ud) {
  if (!e) return NULL;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return e;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN:
  case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR: {
    tsl_expr *a = tsl_lower_map_loads(e->bin.a, fn, ud), *b = tsl_lower_map_loads(e->bin.b, fn, ud);
    return a == e->bin.a && b == e->bin.b ? e : tsl_binary(e->kind, a, b);
  }
  case TSL_E_NOT: {
    tsl_expr *a = tsl_lower_map_loads(e->un.a, fn, ud);
    return a == e->un.a ? e : tsl_not(a);
  }
  case TSL_E_CAST: {
    tsl_expr *a = tsl_lower_map_loads(e->un.a, fn, ud);
    return a == e->un.a ? e : tsl_cast(e->type, a);
  }
  case TSL_E_SELECT: {
    tsl_expr *c = tsl_lower_map_loads(e->select.cond, fn, ud);
    tsl_expr *t = tsl_lower_map_loads(e->select.t, fn, ud), *f = tsl_lower_map_loads(e->select.f, fn, ud);
    return c == e->select.cond && t == e->select.t && f == e->select.f ? e : tsl_select(c, t, f);
  }
  case TSL_E_BROADCAST: {
    tsl_expr *v = tsl_lower_map_loads(e->broadcast.value, fn, ud);
    return v == e->broadcast.value ? e : tsl_broadcast(v, e->broadcast.lanes);
  }
  case TSL_E_RAMP: {
    tsl_expr *b = tsl_lower_map_loads(e->ramp.base, fn, ud), *s = tsl_lower_map_loads(e->ramp.stride, fn, ud);
    return b == e->ramp.base && s == e->ramp.stride ? e : tsl_ramp(b, s, e->ramp.lanes);
  }
  case TSL_E_LOAD: {
    tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)e->load.nindex);
    bool same = true;
    for (int i = 0; i < e->load.nindex; i++) {
      idx[i] = tsl_lower_map_loads(e->load.index[i], fn, ud);
      same = same && idx[i] == e->load.index[i];
    }
    tsl_expr *p = tsl_lower_map_loads(e->load.predicate, fn, ud);
    tsl_expr *ld = same && p == e->load.predicate ? e : tsl_load(e->load.buf, e->load.nindex, idx, p);
    return fn(ud, ld);
  }
  case TSL_E_CALL: {
    tsl_expr **args = tsl_alloc(sizeof(tsl_expr *) * (size_t)(e->call.nargs + 1));
    bool same = true;
    for (int i = 0; i < e->call.nargs; i++) {
      args[i] = tsl_lower_map_loads(e->call.args[i], fn, ud);
      same = same && args[i] == e->call.args[i];
    }
    return same ? e : tsl_call(e->call.op, e->type, e->call.nargs, args);
  }
  case TSL_E_LET: {
    tsl_expr *v = tsl_lower_map_loads(e->let.value, fn, ud), *b = tsl_lower_map_loads(e->let.body, fn, ud);
    return v == e->let.value && b == e->let.body ? e : tsl_let(e->let.var, v, b);
  }
  case TSL_E_REDUCE: {
    tsl_expr *src = tsl_lower_map_loads(e->reduce.source, fn, ud);
    tsl_expr *c = tsl_lower_map_loads(e->reduce.condition, fn, ud);
    if (src == e->reduce.source && c == e->reduce.condition) return e;
    return tsl_reduce(e->reduce.combiner, src, e->reduce.naxes, e->reduce.axes, c);
  }
  }
  return e;
}

static tsl_expr *as_i64(tsl_expr *e) { return tsl_type_eq(e->type, TSL_I64) ? e : tsl_cast(TSL_I64, e); }

static tsl_expr *retarget_load(void *ud, tsl_expr *ld) {
  const tsl_lower_ctx *ctx = ud;
  for (int m = 0; m < ctx->nmap; m++) {
    if (ctx->map_te[m] != ld->load.buf) continue;
    int si = ctx->map_stage[m];
    tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)ld->load.nindex);
    for (int d = 0; d < ld->load.nindex; d++) {
      idx[d] = ld->load.index[d];
      int64_t z;
      if (si >= 0 && !(tsl_expr_is_const_int(ctx->stages[si].region_min[d], &z) && z == 0))
        idx[d] = tsl_sub(as_i64(idx[d]), ctx->stages[si].region_min[d]);
    }
    return tsl_load(ctx->map_kernel[m], ld->load.nindex, idx, ld->load.predicate);
  }
  return ld;
}

tsl_expr *tsl_lower_retarget(const tsl_lower_ctx *ctx, tsl_expr *e) {
  return tsl_lower_map_loads(e, retarget_load, (void *)ctx);
}

/* The kernel-buffer index of the stage's own output at the given root values. */
static tsl_expr **output_index(const tsl_stage *st, const tsl_stage_lower *sl, tsl_expr *const *values) {
  int nd = st->op->naxis;
  tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)(nd + 1));
  for (int d = 0; d < nd; d++) {
    int64_t z;
    idx[d] = tsl_expr_is_const_int(sl->region_min[d], &z) && z == 0 ? values[d] : tsl_sub(values[d], sl->region_min[d]);
  }
  return idx;
}

static tsl_expr *and_opt(tsl_expr *a, tsl_expr *b) { return a ? (b ? tsl_and(a, b) : a) : b; }

/* The points of a stage computed at another's loop may cross its tensor's edge (the
 * region is that of a whole iteration, as at a tail of the consumer): only points
 * inside [0, shape) are computed, so no input is read out of bounds. A region whose min
 * is a constant was clipped to the tensor by bound inference and needs no check. */
static tsl_expr *domain_checks(const tsl_stage *st, const tsl_stage_lower *sl, tsl_expr *const *values) {
  if (st->is_output) return NULL;
  tsl_expr *cond = NULL;
  for (int d = 0; d < st->op->naxis; d++) {
    int64_t z;
    if (tsl_expr_is_const_int(sl->region_min[d], &z)) continue;
    cond = and_opt(cond, tsl_ge(values[d], tsl_i64(0)));
    cond = and_opt(cond, tsl_lt(values[d], tsl_i64(st->op->output->buf->shape[d])));
  }
  return cond;
}

/* s under cond, one `if (likely(c))` per conjunct (outermost first): a check that does
 * not vary with the vector lanes then stays a plain if around the vector code instead of
 * joining the lane mask, and loop partitioning finds each one by its hint. */
static tsl_stmt *guarded(tsl_expr *cond, tsl_stmt *s) {
  if (!cond) return s;
  if (cond->kind == TSL_E_AND) return guarded(cond->bin.a, guarded(cond->bin.b, s));
  return tsl_if(tsl_call(TSL_CALL_LIKELY, TSL_BOOL, 1, &cond), s, NULL);
}

/* A reduction's own condition is part of the operator, not a tail: no likely hint. */
static tsl_stmt *when(tsl_expr *cond, tsl_stmt *s) { return cond ? tsl_if(cond, s, NULL) : s; }

static tsl_stmt *leaf_loop(const tsl_stage *st, const tsl_stage_lower *sl, int it, tsl_expr *var, tsl_stmt *body) {
  return tsl_for(var, tsl_i64(0), tsl_i64(sl->iter_extent[it]), st->iters[it].annotation, body);
}

/* Stages attached inside leaf k of stage si, each in its allocation, then the prefetches
 * of leaf k, before s. */
static tsl_status wrap_leaf_body(const tsl_lower_ctx *ctx, int si, int k, tsl_stmt **s) {
  const tsl_schedule *sc = ctx->sched;
  int iter = sc->stages[si]->leaf[k];
  for (int ai = sc->nstages - 1; ai >= 0; ai--) {
    const tsl_stage *a = sc->stages[ai];
    if (a->attach != TSL_ATTACH_AT || a->attach_stage != si || a->attach_iter != iter) continue;
    tsl_stmt *nest;
    tsl_status rc = tsl_make_stage_nest(ctx, ai, &nest);
    if (rc != TSL_OK) return rc;
    *s = tsl_allocate(ctx->stages[ai].buf, tsl_seq2(nest, *s));
  }
  tsl_stmt *pf = NULL;
  tsl_status rc = tsl_prefetch_stmts(ctx, si, k, &pf);
  if (rc != TSL_OK) return rc;
  if (pf) *s = tsl_seq2(pf, *s);
  return TSL_OK;
}

/* The combiner identity stored over the spatial leaves at or inside position r0 (fresh
 * loop variables: these loops are a second binder of the same iters). */
static tsl_stmt *make_init(const tsl_stage *st, const tsl_stage_lower *sl, int r0, tsl_combiner comb) {
  tsl_expr **leafval = tsl_alloc(sizeof(tsl_expr *) * (size_t)(st->niters + 1));
  for (int k = r0; k < st->nleaf; k++) {
    int it = st->leaf[k];
    if (!st->iters[it].is_reduce) leafval[it] = tsl_var(st->iters[it].name, TSL_I64);
  }
  tsl_expr **values = tsl_iter_pass_up(st, sl, leafval);
  tsl_buffer *buf = sl->buf;
  tsl_stmt *init = tsl_store(buf, st->op->naxis, output_index(st, sl, values), tsl_reduce_identity(comb, buf->dtype),
                             NULL);
  init = guarded(and_opt(domain_checks(st, sl, values), tsl_iter_bound_checks(st, sl, values, true)), init);
  for (int k = st->nleaf - 1; k >= r0; k--) {
    int it = st->leaf[k];
    if (!st->iters[it].is_reduce) init = leaf_loop(st, sl, it, leafval[it], init);
  }
  return init;
}

static tsl_expr *strip_noop_cast(tsl_expr *e) {
  while (e->kind == TSL_E_CAST && tsl_type_eq(e->type, e->un.a->type)) e = e->un.a;
  return e;
}

/* cur + src for a sum, as one fused multiply-add when src is a float product. */
static tsl_expr *combine(tsl_combiner comb, tsl_expr *cur, tsl_expr *src) {
  if (comb == TSL_REDUCE_MAX) return tsl_max(cur, src);
  if (comb == TSL_REDUCE_MIN) return tsl_min(cur, src);
  tsl_expr *p = strip_noop_cast(src);
  if (tsl_type_is_float(cur->type) && p->kind == TSL_E_MUL && tsl_type_eq(p->type, cur->type)) {
    tsl_expr *args[3] = {p->bin.a, p->bin.b, cur};
    return tsl_call(TSL_CALL_FMA, cur->type, 3, args);
  }
  return tsl_add(cur, src);
}

tsl_status tsl_make_stage_nest(const tsl_lower_ctx *ctx, int si, tsl_stmt **out) {
  const tsl_stage *st = ctx->sched->stages[si];
  const tsl_stage_lower *sl = &ctx->stages[si];
  tsl_buffer *buf = sl->buf;
  tsl_expr **values = tsl_iter_pass_up(st, sl, NULL);
  int nb = 2 * (st->op->naxis + st->op->nreduce) + 1;
  tsl_expr **vars = tsl_alloc(sizeof(tsl_expr *) * (size_t)nb), **vals = tsl_alloc(sizeof(tsl_expr *) * (size_t)nb);
  int nbind = tsl_iter_te_bindings(st, values, vars, vals);
  tsl_expr **idx = output_index(st, sl, values);
  tsl_expr *checks = and_opt(domain_checks(st, sl, values), tsl_iter_bound_checks(st, sl, values, false));
  tsl_expr *body = sl->body;
  int r0 = st->nleaf;
  tsl_stmt *update, *init = NULL;
  if (body->kind == TSL_E_REDUCE) {
    tsl_expr *src = tsl_lower_retarget(ctx, tsl_substitute(body->reduce.source, nbind, vars, vals));
    src = tsl_cast(buf->dtype, src);
    tsl_expr *cond = body->reduce.condition
                         ? tsl_lower_retarget(ctx, tsl_substitute(body->reduce.condition, nbind, vars, vals))
                         : NULL;
    tsl_expr *cur = tsl_load(buf, st->op->naxis, idx, NULL);
    update = guarded(checks, when(cond, tsl_store(buf, st->op->naxis, idx, combine(body->reduce.combiner, cur, src), NULL)));
    for (int k = 0; k < st->nleaf; k++)
      if (st->iters[st->leaf[k]].is_reduce) {
        r0 = k;
        break;
      }
    init = make_init(st, sl, r0, body->reduce.combiner);
  } else {
    tsl_expr *v = tsl_lower_retarget(ctx, tsl_substitute(body, nbind, vars, vals));
    update = guarded(checks, tsl_store(buf, st->op->naxis, idx, tsl_cast(buf->dtype, v), NULL));
  }
  /* Built from the innermost loop outwards: what sits inside leaf k-1 before leaf k's
   * loop is the stages attached at k-1, its prefetches and, at the first reduction leaf,
   * the init. A reduction over no loop at all (zero reduce axes) still starts from the
   * identity. */
  if (init && r0 == st->nleaf) update = tsl_seq2(init, update);
  tsl_stmt *s = update;
  tsl_status rc = st->nleaf > 0 ? wrap_leaf_body(ctx, si, st->nleaf - 1, &s) : TSL_OK;
  for (int k = st->nleaf - 1; rc == TSL_OK && k >= 0; k--) {
    int it = st->leaf[k];
    s = leaf_loop(st, sl, it, st->iters[it].var, s);
    if (init && r0 == k) s = tsl_seq2(init, s);
    if (k > 0) rc = wrap_leaf_body(ctx, si, k - 1, &s);
  }
  *out = rc == TSL_OK ? s : NULL;
  return rc;
}
