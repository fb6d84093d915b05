/* rfactor: factor a reduction into a stage of partial results (TVM's Schedule::rfactor,
 * src/te/schedule/schedule_dataflow_rewrite.cc; Suriana, Adams, Kamil, "Parallel
 * associative reductions in Halide", CGO 2017).
 *
 * Given a reduction stage C whose reduction axis k was split into k.outer and k.inner,
 * rfactor(C, k.outer) rewrites
 *
 *     C[i...] = R(k: src(i..., k))                         (R = sum, max or min)
 * into
 *     C.rf[i..., k.outer] = R(k.inner: src(i..., k.outer*F + k.inner))
 *     C[i...]            = R(k.outer: C.rf[i..., k.outer])
 *
 * (rfactor(C, k.inner) makes k.inner the new spatial axis and reduces k.outer inside
 * C.rf). The factored axis becomes a spatial axis of C.rf, so C.rf may run it in parallel
 * or vectorize it; this is legal because the combiner is associative and commutative
 * (for floats: up to rounding, the partial results are summed in a different order).
 * When the split does not divide k's extent, C.rf's reduction carries the condition
 * k.outer*F + k.inner < extent (an empty partial result is the combiner's identity).
 */
#include <stdlib.h>
#include <string.h>

#include "ir/analysis.h"
#include "schedule/sched_internal.h"

static const char *prim = "rfactor";

static bool combiner_is_assoc_commutative(tsl_combiner c) {
  switch (c) {
  case TSL_REDUCE_SUM:
  case TSL_REDUCE_MAX:
  case TSL_REDUCE_MIN: return true;
  }
  return false;
}

/* The split that made iter `it`, or -1. */
static int split_making(const tsl_stage *st, int it) {
  for (int r = 0; r < st->nrels; r++)
    if (st->rels[r].kind == TSL_REL_SPLIT && (st->rels[r].outer == it || st->rels[r].inner == it)) return r;
  return -1;
}

/* The stage may carry nothing but the split `rel` (in its natural place in the loop
 * order): rfactor rebuilds both stages from their TE, so any other step would be lost. */
static tsl_status check_only_the_split(const tsl_schedule *s, const tsl_stage *st, const tsl_iter_relation *rel) {
  int si = tsl_schedule_stage_index(s, st->name);
  if (st->attach != TSL_ATTACH_ROOT)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is %s; apply rfactor before compute_at/compute_inline", prim,
                     st->name, st->attach == TSL_ATTACH_INLINE ? "inlined" : "computed at another stage");
  if (st->nrels != 1)
    return tsl_error(TSL_ERR_SCHEDULE,
                     "%s: stage %s has %d splits/fuses; only the split of the factored reduction axis may precede "
                     "rfactor (schedule the other loops after it)",
                     prim, st->name, st->nrels);
  for (int k = 0, want = 0; k < st->nleaf; k++, want++) {
    if (want == rel->parent) {
      if (st->leaf[k] != rel->outer || k + 1 >= st->nleaf || st->leaf[k + 1] != rel->inner)
        return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s was reordered; apply rfactor right after the split", prim,
                         st->name);
      k++;
    } else if (st->leaf[k] != want) {
      return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s was reordered; apply rfactor right after the split", prim,
                       st->name);
    }
  }
  for (int k = 0; k < st->nleaf; k++) {
    const tsl_stage_iter *it = &st->iters[st->leaf[k]];
    if (it->annotation != TSL_FOR_SERIAL)
      return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is annotated; apply rfactor before annotations", prim,
                       it->name, st->name);
    const char *what = NULL;
    if (tsl_sched_iter_is_anchor(s, si, st->leaf[k], &what))
      return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s has %s at it; apply rfactor first", prim, it->name,
                       st->name, what);
  }
  return TSL_OK;
}

/* The factored axis: a leaf reduction iter made by a split of a root reduction axis. */
static tsl_status factored_axis(const tsl_stage *st, const tsl_step *step, int *iter, int *rel) {
  tsl_status rc = tsl_sched_leaf_arg(st, step, 1, prim, iter);
  if (rc != TSL_OK) return rc;
  const tsl_stage_iter *it = &st->iters[*iter];
  if (!it->is_reduce)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is a spatial axis; rfactor factors a reduction axis",
                     prim, it->name, st->name);
  *rel = split_making(st, *iter);
  if (*rel < 0)
    return tsl_error(TSL_ERR_SCHEDULE,
                     "%s: reduction axis %s of stage %s is not split; split it first (split(%s, %s, F)) and rfactor "
                     "%s.outer or %s.inner",
                     prim, it->name, st->name, st->name, it->name, it->name, it->name);
  if (st->rels[*rel].parent >= st->nroot)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s comes from a nested split; rfactor one split of a root "
                     "reduction axis", prim, it->name, st->name);
  return TSL_OK;
}

/* The name of a root iter's TE variable. */
static const char *root_var_name(const tsl_iter_var *iv) { return iv->var->var.name; }

tsl_status tsl_sched_rfactor(tsl_schedule *s, tsl_stage *st, const tsl_step *step) {
  const tsl_te_op *op = st->op;
  if (!op->body || op->body->kind != TSL_E_REDUCE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is not a reduction", prim, st->name);
  const tsl_expr *red = op->body;
  if (!combiner_is_assoc_commutative(red->reduce.combiner))
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s: its combiner is not associative and commutative", prim, st->name);
  int fi = -1, ri = -1;
  tsl_status rc = factored_axis(st, step, &fi, &ri);
  if (rc != TSL_OK) return rc;
  const tsl_iter_relation rel = st->rels[ri];
  rc = check_only_the_split(s, st, &rel);
  if (rc != TSL_OK) return rc;

  /* the root reduction axis k (its index among the op's reduce axes) */
  int rk = rel.parent - op->naxis;
  const tsl_iter_var *kv = &red->reduce.axes[rk];
  bool outer_factored = fi == rel.outer;
  int ci = outer_factored ? rel.inner : rel.outer; /* the complement: stays a reduction */
  int64_t fext = st->iters[fi].extent, cext = st->iters[ci].extent;
  int64_t inner_ext = st->iters[rel.inner].extent;
  /* C.rf: the op's axes + the factored axis; reduce axes with k replaced by the complement */
  tsl_iter_var *axes = tsl_alloc(sizeof *axes * (size_t)(op->naxis + 1));
  memcpy(axes, op->axis, sizeof *axes * (size_t)op->naxis);
  const char *fname = st->iters[fi].name;
  axes[op->naxis] = tsl_te_axes(1, &fext, &fname)[0];
  tsl_iter_var *raxes = tsl_alloc(sizeof *raxes * (size_t)red->reduce.naxes);
  memcpy(raxes, red->reduce.axes, sizeof *raxes * (size_t)red->reduce.naxes);
  raxes[rk] = tsl_te_reduce_axis(st->iters[ci].name, 0, cext);
  tsl_expr *fv = axes[op->naxis].var, *cv = raxes[rk].var;
  tsl_expr *ov = outer_factored ? fv : cv, *iv = outer_factored ? cv : fv;
  tsl_expr *pos = tsl_add(tsl_mul(ov, tsl_i64(inner_ext)), iv); /* k - k.min */
  tsl_expr *kval = tsl_add(pos, tsl_i64(kv->min));
  tsl_expr *src = tsl_substitute(red->reduce.source, 1, &kv->var, &kval);
  tsl_expr *cond = red->reduce.condition ? tsl_substitute(red->reduce.condition, 1, &kv->var, &kval) : NULL;
  if (fext * cext != kv->extent) { /* the split's tail overshoots k's domain */
    tsl_expr *in_range = tsl_lt(pos, tsl_i64(kv->extent));
    cond = cond ? tsl_and(cond, in_range) : in_range;
  }
  char *rfname = tsl_sched_concat3(st->name, ".rf", "");
  char *uname = rfname ? tsl_sched_unique_stage_name(s, rfname) : NULL;
  free(rfname);
  if (!uname) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  tsl_expr *rbody = tsl_reduce(red->reduce.combiner, src, red->reduce.naxes, raxes, cond);
  tsl_te_tensor *rf = tsl_te_compute(uname, op->naxis + 1, axes, rbody, "reduce");
  /* C: R(k.f: C.rf[i..., k.f]) over fresh axes named as before */
  tsl_te_tensor *top = NULL;
  if (rf) {
    const char **names = tsl_alloc(sizeof(char *) * (size_t)op->naxis);
    for (int d = 0; d < op->naxis; d++) names[d] = root_var_name(&op->axis[d]);
    tsl_iter_var *caxes = tsl_te_axes(op->naxis, op->output->buf->shape, names);
    tsl_iter_var fr = tsl_te_reduce_axis(fname, 0, fext);
    tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)(op->naxis + 1));
    for (int d = 0; d < op->naxis; d++) idx[d] = caxes[d].var;
    idx[op->naxis] = fr.var;
    tsl_expr *rd = tsl_te_read(rf, op->naxis + 1, idx);
    tsl_expr *cbody = rd ? tsl_reduce(red->reduce.combiner, rd, 1, &fr, NULL) : NULL;
    top = cbody ? tsl_te_compute(op->name, op->naxis, caxes, cbody, op->tag) : NULL;
  }
  if (!top) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    free(uname);
    return tsl_error(TSL_ERR_INVALID, "%s: building stage %s.rf: %s", prim, st->name, msg);
  }
  /* the stage keeps computing the op's own output tensor */
  tsl_te_op *cop = tsl_alloc(sizeof *cop);
  *cop = *top->op;
  cop->output = op->output;
  cop->name = op->name;
  int si = tsl_schedule_stage_index(s, st->name);
  rc = tsl_sched_replace_stage(s, si, cop);
  tsl_stage *rs = NULL;
  if (rc == TSL_OK) rc = tsl_sched_stage_new(s, rf->op, uname, &rs);
  if (rc == TSL_OK) rc = tsl_sched_insert_stage(s, si, rs);
  if (rc != TSL_OK) tsl_sched_stage_free(rs);
  free(uname);
  return rc;
}
