/* Loop primitives on one stage: split (by factor or nparts), tile, fuse, reorder and the
 * loop annotations (vectorize, unroll, parallel). TVM src/te/schedule/schedule_lang.cc. */
#include <stdlib.h>
#include <string.h>

#include "schedule/sched_internal.h"

/* Refuses to remove a leaf that other stages or a prefetch are anchored at. */
static tsl_status check_not_anchor(tsl_schedule *s, const tsl_stage *st, int iter, const char *prim) {
  const char *what = NULL;
  if (tsl_sched_iter_is_anchor(s, tsl_schedule_stage_index(s, st->name), iter, &what))
    return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s has %s at it; %s it before that step", prim,
                     st->iters[iter].name, st->name, what, prim);
  return TSL_OK;
}

tsl_status tsl_sched_split(tsl_schedule *s, tsl_stage *st, int parent, int64_t value, bool by_nparts,
                           const char *prim) {
  if (value < 1)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: %s %lld on axis %s of stage %s (must be >= 1)", prim,
                     by_nparts ? "nparts" : "factor", (long long)value, st->iters[parent].name, st->name);
  int64_t factor = by_nparts ? 0 : value, nparts = by_nparts ? value : 0;
  tsl_status rc = check_not_anchor(s, st, parent, prim);
  if (rc != TSL_OK) return rc;
  if (!tsl_sched_grow((void **)&st->rels, &st->rels_cap, st->nrels + 1, sizeof *st->rels) ||
      !tsl_sched_grow((void **)&st->leaf, &st->leaf_cap, st->nleaf + 1, sizeof *st->leaf))
    return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  const tsl_stage_iter p = st->iters[parent]; /* copy: add_iter may move the array */
  int64_t inner_ext = factor ? factor : (p.extent + nparts - 1) / nparts;
  int64_t outer_ext = factor ? (p.extent + factor - 1) / factor : nparts;
  if (inner_ext < 1) inner_ext = 1;
  char *on = tsl_sched_concat3(p.name, ".outer", ""), *in = tsl_sched_concat3(p.name, ".inner", "");
  char *uo = on ? tsl_sched_unique_iter_name(st, on) : NULL;
  free(on);
  int outer = uo ? tsl_sched_add_iter(st, uo, 0, outer_ext, p.is_reduce) : -1;
  char *ui = in && outer >= 0 ? tsl_sched_unique_iter_name(st, in) : NULL;
  free(in);
  int inner = ui ? tsl_sched_add_iter(st, ui, 0, inner_ext, p.is_reduce) : -1;
  if (outer < 0 || inner < 0) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  int pos = tsl_sched_leaf_position(st, parent);
  memmove(&st->leaf[pos + 2], &st->leaf[pos + 1], sizeof *st->leaf * (size_t)(st->nleaf - pos - 1));
  st->leaf[pos] = outer;
  st->leaf[pos + 1] = inner;
  st->nleaf++;
  tsl_iter_relation *r = &st->rels[st->nrels++];
  memset(r, 0, sizeof *r);
  r->kind = TSL_REL_SPLIT;
  r->parent = parent;
  r->outer = outer;
  r->inner = inner;
  r->fused = -1;
  r->factor = factor;
  r->nparts = factor ? 0 : nparts;
  return TSL_OK;
}

tsl_status tsl_sched_fuse(tsl_schedule *s, tsl_stage *st, int outer, int inner) {
  const tsl_stage_iter *o = &st->iters[outer], *i = &st->iters[inner];
  int po = tsl_sched_leaf_position(st, outer), pi = tsl_sched_leaf_position(st, inner);
  if (pi != po + 1)
    return tsl_error(TSL_ERR_SCHEDULE, "fuse: axes %s and %s of stage %s are not adjacent leaves (outer first)",
                     o->name, i->name, st->name);
  if (o->is_reduce != i->is_reduce)
    return tsl_error(TSL_ERR_SCHEDULE, "fuse: axes %s and %s of stage %s mix a spatial and a reduction axis",
                     o->name, i->name, st->name);
  tsl_status rc = check_not_anchor(s, st, outer, "fuse");
  if (rc == TSL_OK) rc = check_not_anchor(s, st, inner, "fuse");
  if (rc != TSL_OK) return rc;
  if (!tsl_sched_grow((void **)&st->rels, &st->rels_cap, st->nrels + 1, sizeof *st->rels))
    return tsl_error(TSL_ERR_NOMEM, "fuse: out of memory");
  char *fn = tsl_sched_concat3(o->name, ".", i->name);
  char *fn2 = fn ? tsl_sched_concat3(fn, ".fused", "") : NULL;
  free(fn);
  char *un = fn2 ? tsl_sched_unique_iter_name(st, fn2) : NULL;
  free(fn2);
  int64_t extent = o->extent * i->extent;
  bool red = o->is_reduce;
  int fused = un ? tsl_sched_add_iter(st, un, 0, extent, red) : -1;
  if (fused < 0) return tsl_error(TSL_ERR_NOMEM, "fuse: out of memory");
  st->leaf[po] = fused;
  memmove(&st->leaf[pi], &st->leaf[pi + 1], sizeof *st->leaf * (size_t)(st->nleaf - pi - 1));
  st->nleaf--;
  tsl_iter_relation *r = &st->rels[st->nrels++];
  memset(r, 0, sizeof *r);
  r->kind = TSL_REL_FUSE;
  r->parent = -1;
  r->outer = outer;
  r->inner = inner;
  r->fused = fused;
  return TSL_OK;
}

tsl_status tsl_sched_reorder(tsl_stage *st, int n, const int *iters, const char *prim) {
  int *pos = malloc(sizeof(int) * (size_t)(n + 1));
  if (!pos) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  for (int k = 0; k < n; k++) {
    for (int j = 0; j < k; j++)
      if (iters[j] == iters[k]) {
        free(pos);
        return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s named twice", prim, st->iters[iters[k]].name,
                         st->name);
      }
    pos[k] = tsl_sched_leaf_position(st, iters[k]);
  }
  /* The named leaves keep the set of loop positions they occupy, filled in the order
   * given (TVM's reorder): other leaves do not move. */
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0 && pos[b - 1] > pos[b]; b--) {
      int t = pos[b];
      pos[b] = pos[b - 1];
      pos[b - 1] = t;
    }
  for (int k = 0; k < n; k++) st->leaf[pos[k]] = iters[k];
  free(pos);
  return TSL_OK;
}

tsl_status tsl_sched_reorder_step(tsl_stage *st, const tsl_step *step) {
  int n = step->nargs - 1;
  int *iters = malloc(sizeof(int) * (size_t)(n + 1));
  if (!iters) return tsl_error(TSL_ERR_NOMEM, "reorder: out of memory");
  tsl_status rc = TSL_OK;
  for (int k = 0; rc == TSL_OK && k < n; k++) rc = tsl_sched_leaf_arg(st, step, k + 1, "reorder", &iters[k]);
  if (rc == TSL_OK) rc = tsl_sched_reorder(st, n, iters, "reorder");
  free(iters);
  return rc;
}

tsl_status tsl_sched_tile(tsl_schedule *s, tsl_stage *st, const tsl_step *step) {
  int x = -1, y = -1;
  tsl_status rc = tsl_sched_leaf_arg(st, step, 1, "tile", &x);
  if (rc == TSL_OK) rc = tsl_sched_leaf_arg(st, step, 2, "tile", &y);
  if (rc != TSL_OK) return rc;
  if (x == y) return tsl_error(TSL_ERR_SCHEDULE, "tile: axis %s of stage %s named twice", st->iters[x].name, st->name);
  rc = tsl_sched_split(s, st, x, step->args[3].value, false, "tile");
  if (rc != TSL_OK) return rc;
  int xo = st->niters - 2, xi = st->niters - 1;
  rc = tsl_sched_split(s, st, y, step->args[4].value, false, "tile");
  if (rc != TSL_OK) return rc;
  int order[4] = {xo, st->niters - 2, xi, st->niters - 1};
  return tsl_sched_reorder(st, 4, order, "tile");
}

tsl_status tsl_sched_annotate(tsl_stage *st, int iter, tsl_for_kind kind, const char *prim) {
  tsl_stage_iter *it = &st->iters[iter];
  if (st->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is inlined and has no loops", prim, st->name);
  if (it->is_reduce && kind == TSL_FOR_PARALLEL)
    return tsl_error(TSL_ERR_SCHEDULE,
                     "parallel: axis %s of stage %s is a reduction axis (its iterations update the same "
                     "outputs, so they cannot run at once)",
                     it->name, st->name);
  if (it->is_reduce && kind == TSL_FOR_VECTORIZED)
    return tsl_error(TSL_ERR_SCHEDULE,
                     "vectorize: axis %s of stage %s is a reduction axis (its iterations update the same "
                     "outputs): vectorize a spatial axis, or split the reduction and vectorize its inner part "
                     "in a stage of partial sums: split(%s, %s, 8), rfactor(%s, %s.inner), vectorize(%s.rf, %s.inner)",
                     it->name, st->name, st->name, it->name, st->name, it->name, st->name, it->name);
  it->annotation = kind;
  return TSL_OK;
}
