/* The iter graph of a stage: ranges down the relations, index values up them
 * (TVM src/te/schedule/message_passing.cc: PassDownDomain, PassUpIndex, MakeBoundCheck). */
#include "ir/analysis.h"
#include "schedule/lower_ctx.h"

void tsl_iter_pass_down(const tsl_stage *st, tsl_stage_lower *sl) {
  for (int r = 0; r < st->nrels; r++) {
    const tsl_iter_relation *rel = &st->rels[r];
    if (rel->kind == TSL_REL_SPLIT) {
      int64_t pe = sl->iter_extent[rel->parent];
      /* by nparts: the factor follows the parent's extent as lowered (TVM), and the outer
       * extent is recomputed from it so no outer iteration is wholly out of range */
      int64_t factor = rel->factor ? rel->factor : (pe + rel->nparts - 1) / rel->nparts;
      if (factor < 1) factor = 1;
      sl->iter_min[rel->outer] = tsl_i64(0);
      sl->iter_extent[rel->outer] = (pe + factor - 1) / factor;
      sl->iter_min[rel->inner] = tsl_i64(0);
      sl->iter_extent[rel->inner] = factor;
    } else {
      sl->iter_min[rel->fused] = tsl_i64(0);
      sl->iter_extent[rel->fused] = sl->iter_extent[rel->outer] * sl->iter_extent[rel->inner];
    }
  }
}

tsl_expr **tsl_iter_pass_up(const tsl_stage *st, const tsl_stage_lower *sl, tsl_expr *const *leaf_value) {
  tsl_expr **v = tsl_alloc(sizeof(tsl_expr *) * (size_t)(st->niters + 1));
  for (int i = 0; i < st->nleaf; i++) {
    int it = st->leaf[i];
    v[it] = leaf_value && leaf_value[it] ? leaf_value[it] : st->iters[it].var;
    /* every loop runs from 0 (so loop partitioning sees the enclosing loops in its
     * conditions); a root leaf adds its range's min here */
    int64_t z;
    if (it < st->nroot && !(tsl_expr_is_const_int(sl->iter_min[it], &z) && z == 0))
      v[it] = tsl_add(v[it], sl->iter_min[it]);
  }
  /* A relation's outputs are consumed only by later relations, so walking them
   * backwards knows each output's value before it is needed. */
  for (int r = st->nrels - 1; r >= 0; r--) {
    const tsl_iter_relation *rel = &st->rels[r];
    if (rel->kind == TSL_REL_SPLIT) {
      tsl_expr *e = tsl_add(tsl_mul(v[rel->outer], tsl_i64(sl->iter_extent[rel->inner])), v[rel->inner]);
      v[rel->parent] = tsl_add(e, sl->iter_min[rel->parent]);
    } else {
      tsl_expr *ie = tsl_i64(sl->iter_extent[rel->inner]);
      v[rel->outer] = tsl_add(tsl_div(v[rel->fused], ie), sl->iter_min[rel->outer]);
      v[rel->inner] = tsl_add(tsl_mod(v[rel->fused], ie), sl->iter_min[rel->inner]);
    }
  }
  return v;
}

tsl_expr *tsl_iter_bound_checks(const tsl_stage *st, const tsl_stage_lower *sl, tsl_expr *const *values,
                                bool spatial_only) {
  tsl_expr *cond = NULL;
  for (int r = 0; r < st->nrels; r++) {
    const tsl_iter_relation *rel = &st->rels[r];
    if (rel->kind != TSL_REL_SPLIT) continue;
    if (spatial_only && st->iters[rel->parent].is_reduce) continue;
    if (sl->iter_extent[rel->parent] % sl->iter_extent[rel->inner] == 0) continue;
    tsl_expr *end = tsl_add(sl->iter_min[rel->parent], tsl_i64(sl->iter_extent[rel->parent]));
    tsl_expr *c = tsl_lt(values[rel->parent], end);
    cond = cond ? tsl_and(cond, c) : c;
  }
  return cond;
}

int tsl_iter_te_bindings(const tsl_stage *st, tsl_expr *const *values, tsl_expr **vars, tsl_expr **vals) {
  const tsl_te_op *op = st->op;
  int n = 0;
  for (int i = 0; i < op->naxis; i++) {
    vars[n] = op->axis[i].var;
    vals[n++] = values[i];
  }
  for (int j = 0; j < op->nreduce; j++) {
    vars[n] = op->reduce_axis[j].var;
    vals[n++] = values[op->naxis + j];
  }
  /* The body's REDUCE node carries its own copy of the axes; bind those variables too
   * in case the builder made them distinct from op->reduce_axis. */
  if (op->body && op->body->kind == TSL_E_REDUCE)
    for (int j = 0; j < op->body->reduce.naxes && j < op->nreduce; j++)
      if (op->body->reduce.axes[j].var != op->reduce_axis[j].var) {
        vars[n] = op->body->reduce.axes[j].var;
        vals[n++] = values[op->naxis + j];
      }
  return n;
}
