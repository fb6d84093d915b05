/* Steps that make new stages or change a stage's storage: cache_read, cache_write
 * (TVM src/te/schedule/schedule_dataflow_rewrite.cc), storage_align and the prefetch
 * pragma. The program's TE is never modified: a stage whose reads change gets a copy of
 * its op with the new body. */
#include <stdlib.h>
#include <string.h>

#include "schedule/lower_ctx.h"
#include "schedule/sched_internal.h"

tsl_te_tensor *tsl_sched_find_tensor(const tsl_schedule *s, const char *name) {
  for (int i = 0; i < s->nstages; i++)
    if (strcmp(s->stages[i]->name, name) == 0) return s->stages[i]->op->output;
  const tsl_te_program *p = s->program;
  for (int i = 0; i < p->ninputs; i++)
    if (strcmp(p->inputs[i]->buf->name, name) == 0) return p->inputs[i];
  return NULL;
}

static tsl_status check_scope(const tsl_step *step, int k, const char *prim) {
  if (strcmp(step->args[k].name, "local") != 0)
    return tsl_error(TSL_ERR_INVALID, "%s: scope %s is not supported (only local)", prim, step->args[k].name);
  return TSL_OK;
}

/* A copy of op with a new body (the op's output tensor, axes and reduce axes kept). */
static tsl_te_op *op_with_body(const tsl_te_op *op, tsl_expr *body, tsl_te_tensor *from, tsl_te_tensor *to) {
  tsl_te_op *n = tsl_alloc(sizeof *n);
  *n = *op;
  n->body = body;
  if (body->kind == TSL_E_REDUCE) n->reduce_axis = body->reduce.axes;
  n->inputs = tsl_alloc(sizeof(tsl_te_tensor *) * (size_t)(op->ninputs + 1));
  for (int i = 0; i < op->ninputs; i++) n->inputs[i] = op->inputs[i] == from ? to : op->inputs[i];
  return n;
}

typedef struct swap_buf {
  const tsl_buffer *from;
  tsl_buffer *to;
} swap_buf;

static tsl_expr *swap_load(void *ud, tsl_expr *ld) {
  const swap_buf *sw = ud;
  if (ld->load.buf != sw->from) return ld;
  return tsl_load(sw->to, ld->load.nindex, ld->load.index, ld->load.predicate);
}

typedef struct probe {
  const tsl_buffer *buf;
  bool hit;
} probe;

static tsl_expr *probe_load(void *ud, tsl_expr *ld) {
  probe *pr = ud;
  if (ld->load.buf == pr->buf) pr->hit = true;
  return ld;
}

static bool reads_directly(tsl_expr *body, const tsl_buffer *buf) {
  probe pr = {buf, false};
  tsl_lower_map_loads(body, probe_load, &pr);
  return pr.hit;
}

static tsl_status stage_op_failed(const char *prim, const char *name) {
  char msg[4096];
  snprintf(msg, sizeof msg, "%s", tsl_last_error());
  return tsl_error(TSL_ERR_INVALID, "%s: building stage %s: %s", prim, name, msg);
}

tsl_status tsl_sched_replace_stage(tsl_schedule *s, int si, tsl_te_op *op) {
  tsl_stage *n;
  tsl_status rc = tsl_sched_stage_new(s, op, s->stages[si]->name, &n);
  if (rc != TSL_OK) return rc;
  n->attach = s->stages[si]->attach;
  n->attach_stage = s->stages[si]->attach_stage;
  n->attach_iter = s->stages[si]->attach_iter;
  tsl_sched_stage_move(s->stages[si], n);
  return TSL_OK;
}

/* A copy of op with a new body that reads `to` where op read `from`. */
static tsl_te_op *op_reading(const tsl_te_op *op, tsl_te_tensor *from, tsl_te_tensor *to) {
  swap_buf sw = {from->buf, to->buf};
  return op_with_body(op, tsl_lower_map_loads(op->body, swap_load, &sw), from, to);
}

/* copy[ax0, ax1, ...] = src[ax0, ax1, ...] */
static tsl_te_tensor *copy_of(const char *name, tsl_te_tensor *src, const char *const *axis_names, const char *tag) {
  int n = src->buf->ndim;
  tsl_iter_var *ax = tsl_te_axes(n, src->buf->shape, axis_names);
  tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)(n + 1));
  for (int d = 0; d < n; d++) idx[d] = ax[d].var;
  tsl_expr *rd = tsl_te_read(src, n, idx);
  return rd ? tsl_te_compute(name, n, ax, rd, tag) : NULL;
}

tsl_status tsl_sched_cache_read(tsl_schedule *s, const tsl_step *step) {
  const char *prim = "cache_read";
  tsl_te_tensor *t = tsl_sched_find_tensor(s, step->args[0].name);
  if (!t) return tsl_error(TSL_ERR_INVALID, "%s: no tensor named %s", prim, step->args[0].name);
  tsl_status rc = check_scope(step, 1, prim);
  if (rc != TSL_OK) return rc;
  int nreaders = step->nargs - 2, first = s->nstages;
  int *readers = malloc(sizeof(int) * (size_t)(nreaders + 1));
  if (!readers) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  for (int k = 0; rc == TSL_OK && k < nreaders; k++) {
    const char *rn = step->args[k + 2].name;
    int ri = tsl_schedule_stage_index(s, rn);
    if (ri < 0) {
      rc = tsl_error(TSL_ERR_INVALID, "%s: no stage named %s", prim, rn);
    } else if (s->stages[ri]->op->output == t) {
      rc = tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s computes tensor %s; it cannot read its own cache", prim, rn,
                     t->buf->name);
    } else if (!reads_directly(s->stages[ri]->op->body, t->buf)) {
      rc = tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s does not read tensor %s", prim, rn, t->buf->name);
    }
    for (int j = 0; rc == TSL_OK && j < k; j++)
      if (readers[j] == ri) rc = tsl_error(TSL_ERR_SCHEDULE, "%s: reader %s named twice", prim, rn);
    if (rc == TSL_OK) {
      readers[k] = ri;
      if (ri < first) first = ri;
    }
  }
  char *want = rc == TSL_OK ? tsl_sched_concat3(t->buf->name, ".local", "") : NULL;
  char *name = want ? tsl_sched_unique_stage_name(s, want) : NULL;
  free(want);
  if (rc == TSL_OK && !name) rc = tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  tsl_te_tensor *cache = NULL;
  if (rc == TSL_OK) {
    const char *axn[8] = {"ax0", "ax1", "ax2", "ax3", "ax4", "ax5", "ax6", "ax7"};
    cache = copy_of(name, t, t->buf->ndim <= 8 ? axn : NULL, "cache");
    if (!cache) rc = stage_op_failed(prim, name);
  }
  /* a reader keeps its schedule: the new op has the same axes, so its iters still match */
  for (int k = 0; rc == TSL_OK && k < nreaders; k++)
    s->stages[readers[k]]->op = op_reading(s->stages[readers[k]]->op, t, cache);
  tsl_stage *st = NULL;
  if (rc == TSL_OK) rc = tsl_sched_stage_new(s, cache->op, name, &st);
  if (rc == TSL_OK) rc = tsl_sched_insert_stage(s, first, st);
  if (rc != TSL_OK) tsl_sched_stage_free(st);
  free(name);
  free(readers);
  return rc;
}

static bool unscheduled(const tsl_schedule *s, int si) {
  const tsl_stage *st = s->stages[si];
  if (st->nrels || st->attach != TSL_ATTACH_ROOT || st->nprefetch) return false;
  for (int k = 0; k < st->nleaf; k++)
    if (st->leaf[k] != k || st->iters[k].annotation != TSL_FOR_SERIAL) return false;
  for (int d = 0; d < st->op->naxis; d++)
    if (st->align_factor[d] || st->storage_order[d] != d) return false;
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->attach == TSL_ATTACH_AT && s->stages[i]->attach_stage == si) return false;
  return true;
}

tsl_status tsl_sched_cache_write(tsl_schedule *s, tsl_stage *st, const tsl_step *step) {
  const char *prim = "cache_write";
  tsl_status rc = check_scope(step, 1, prim);
  if (rc != TSL_OK) return rc;
  int si = tsl_schedule_stage_index(s, st->name);
  if (st->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is inlined; it writes no buffer to cache", prim, st->name);
  if (!unscheduled(s, si))
    return tsl_error(TSL_ERR_SCHEDULE,
                     "%s: stage %s is already scheduled (split, reordered, annotated, attached or holding other "
                     "stages); apply cache_write first",
                     prim, st->name);
  const tsl_te_op *op = st->op;
  char *want = tsl_sched_concat3(st->name, ".local", "");
  char *name = want ? tsl_sched_unique_stage_name(s, want) : NULL;
  free(want);
  if (!name) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  /* the local stage keeps the op's axes, reduce axes and body ... */
  tsl_te_tensor *local = tsl_te_compute(name, op->naxis, op->axis, op->body, op->tag);
  /* ... and the stage itself copies the local buffer into its own tensor */
  const char **axn = tsl_alloc(sizeof(char *) * (size_t)(op->naxis + 1));
  for (int d = 0; d < op->naxis; d++) axn[d] = op->axis[d].var->var.name;
  tsl_te_tensor *copy = local ? copy_of(op->name, local, axn, "injective") : NULL;
  if (!copy) {
    rc = stage_op_failed(prim, name);
    free(name);
    return rc;
  }
  tsl_te_op *wop = op_with_body(copy->op, copy->op->body, NULL, NULL);
  wop->output = op->output;
  wop->name = op->name;
  rc = tsl_sched_replace_stage(s, si, wop);
  tsl_stage *ls = NULL;
  if (rc == TSL_OK) rc = tsl_sched_stage_new(s, local->op, name, &ls);
  if (rc == TSL_OK) rc = tsl_sched_insert_stage(s, si, ls);
  if (rc != TSL_OK) tsl_sched_stage_free(ls);
  free(name);
  return rc;
}

tsl_status tsl_sched_storage_align(tsl_stage *st, const tsl_step *step) {
  const char *prim = "storage_align", *axis = step->args[1].name;
  int64_t factor = step->args[2].value, offset = step->args[3].value;
  if (st->is_output)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is an output; its buffer is a kernel argument with fixed strides",
                     prim, st->name);
  if (st->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is inlined and has no buffer", prim, st->name);
  int it = tsl_stage_iter_index(st, axis);
  if (it < 0) return tsl_error(TSL_ERR_INVALID, "%s: stage %s has no axis %s", prim, st->name, axis);
  if (it >= st->op->naxis)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is not a dimension of its buffer (%s)", prim, axis,
                     st->name, st->iters[it].is_reduce ? "a reduction axis" : "a derived axis");
  if (factor < 1)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: factor %lld on axis %s of stage %s (must be >= 1)", prim,
                     (long long)factor, axis, st->name);
  if (offset < 0 || offset >= factor)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: offset %lld on axis %s of stage %s (must be in [0, %lld))", prim,
                     (long long)offset, axis, st->name, (long long)factor);
  st->align_factor[it] = factor;
  st->align_offset[it] = offset;
  return TSL_OK;
}

tsl_status tsl_sched_storage_order(tsl_stage *st, const tsl_step *step) {
  const char *prim = "storage_order";
  int nd = st->op->naxis, n = step->nargs - 1;
  if (st->is_output)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is an output; its buffer is a kernel argument with a fixed layout",
                     prim, st->name);
  if (st->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is inlined and has no buffer", prim, st->name);
  int *order = malloc(sizeof(int) * (size_t)(nd + 1));
  if (!order) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  tsl_status rc = TSL_OK;
  for (int k = 0; rc == TSL_OK && k < n; k++) {
    const char *axis = step->args[k + 1].name;
    int it = tsl_stage_iter_index(st, axis);
    if (it < 0) rc = tsl_error(TSL_ERR_INVALID, "%s: stage %s has no axis %s", prim, st->name, axis);
    else if (it >= nd)
      rc = tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is not a dimension of its buffer (%s)", prim, axis,
                     st->name, st->iters[it].is_reduce ? "a reduction axis" : "a derived axis");
    else if (k >= nd)
      rc = tsl_error(TSL_ERR_SCHEDULE, "%s: %d axes for the %d dimensions of stage %s's buffer", prim, n, nd,
                     st->name);
    for (int j = 0; rc == TSL_OK && j < k; j++)
      if (order[j] == it) rc = tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s named twice", prim, axis, st->name);
    if (rc == TSL_OK) order[k] = it;
  }
  if (rc == TSL_OK && n != nd)
    rc = tsl_error(TSL_ERR_SCHEDULE, "%s: %d axes for the %d dimensions of stage %s's buffer (name each once)", prim,
                   n, nd, st->name);
  if (rc == TSL_OK) memcpy(st->storage_order, order, sizeof(int) * (size_t)nd);
  free(order);
  return rc;
}

tsl_status tsl_sched_prefetch(tsl_schedule *s, tsl_stage *st, const tsl_step *step) {
  const char *prim = "prefetch";
  tsl_te_tensor *t = tsl_sched_find_tensor(s, step->args[1].name);
  if (!t) return tsl_error(TSL_ERR_INVALID, "%s: no tensor named %s", prim, step->args[1].name);
  if (st->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is inlined and has no loops", prim, st->name);
  int iter = -1;
  tsl_status rc = tsl_sched_leaf_arg(st, step, 2, prim, &iter);
  if (rc != TSL_OK) return rc;
  if (!tsl_sched_stage_reads(s, tsl_schedule_stage_index(s, st->name), t->buf))
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s does not read tensor %s", prim, st->name, t->buf->name);
  if (!tsl_sched_grow((void **)&st->prefetch, &st->prefetch_cap, st->nprefetch + 1, sizeof *st->prefetch))
    return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", prim);
  st->prefetch[st->nprefetch++] = (tsl_stage_prefetch){t->buf, iter, step->args[3].value};
  return TSL_OK;
}
