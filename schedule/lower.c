/* The lowering driver (see lower.h): inlining, buffers, bound inference, loop nests,
 * then the IR passes in order, printed after each step under TSL_DEBUG=lower. */
#include "schedule/lower.h"

#include <stdlib.h>
#include <string.h>

#include "ir/analysis.h"
#include "ir/passes/guard_loads.h"
#include "ir/passes/loop_partition.h"
#include "ir/passes/native_vectors.h"
#include "ir/passes/simplify.h"
#include "ir/passes/storage_flatten.h"
#include "ir/passes/unroll.h"
#include "ir/passes/vectorize.h"
#include "schedule/lower_ctx.h"

static bool debug_lower(void) {
  const char *d = getenv("TSL_DEBUG");
  return d && strstr(d, "lower") != NULL;
}

static void debug_print(bool trace, const char *kernel, const char *step, const tsl_stmt *s) {
  if (!trace) return;
  fprintf(stderr, "--- lower %s: %s ---\n", kernel, step);
  tsl_print_stmt(stderr, s);
  fputc('\n', stderr);
}

/* ---- inlining ---- */

static tsl_expr *inline_load(void *ud, tsl_expr *ld) {
  const tsl_lower_ctx *ctx = ud;
  const tsl_schedule *s = ctx->sched;
  for (int si = 0; si < s->nstages; si++) {
    const tsl_stage *st = s->stages[si];
    if (st->attach != TSL_ATTACH_INLINE || st->op->output->buf != ld->load.buf) continue;
    int n = st->op->naxis;
    tsl_expr **vars = tsl_alloc(sizeof(tsl_expr *) * (size_t)(n + 1));
    tsl_expr **vals = tsl_alloc(sizeof(tsl_expr *) * (size_t)(n + 1));
    for (int d = 0; d < n; d++) {
      vars[d] = st->op->axis[d].var;
      tsl_expr *ix = ld->load.index[d];
      vals[d] = tsl_type_eq(ix->type, vars[d]->type) ? ix : tsl_cast(vars[d]->type, ix);
    }
    /* the producer's body already has its own inlined producers substituted */
    return tsl_cast(ld->type, tsl_substitute(ctx->stages[si].body, n, vars, vals));
  }
  return ld;
}

/* ---- buffers ---- */

static tsl_buffer *kernel_buffer(const tsl_buffer *te, const char *name, const int64_t *shape, tsl_buffer_kind kind,
                                 const void *origin) {
  tsl_buffer *b = tsl_buffer_new(name, te->dtype, te->ndim, shape, kind);
  if (te->strides && kind == TSL_BUF_ARG) b->strides = tsl_memdup(te->strides, sizeof(int64_t) * (size_t)te->ndim);
  b->origin = origin;
  return b;
}

/* storage_order and storage_align: strides in the stage's storage order (row-major
 * unless storage_order permuted the dimensions), the stride of each aligned dimension
 * padded up to factor*k + offset (TVM's StorageAlign). NULL strides for the compact
 * row-major layout. */
static void layout_strides(const tsl_stage *st, tsl_buffer *b) {
  bool any = false;
  for (int d = 0; d < b->ndim; d++) any = any || st->align_factor[d] > 0 || st->storage_order[d] != d;
  if (!any) return;
  int64_t *strides = tsl_alloc(sizeof(int64_t) * (size_t)(b->ndim + 1));
  int64_t next = 1;
  for (int k = b->ndim - 1; k >= 0; k--) {
    int d = st->storage_order[k];
    int64_t f = st->align_factor[d], o = st->align_offset[d], stride = next;
    if (f > 0) {
      int64_t m = stride - o <= 0 ? 0 : (stride - o + f - 1) / f;
      stride = m * f + o;
      if (stride < next) stride += f;
    }
    strides[d] = stride;
    next = stride * (b->shape[d] > 0 ? b->shape[d] : 1);
  }
  b->strides = strides;
}

static void map_add(tsl_lower_ctx *ctx, const tsl_buffer *te, tsl_buffer *kb, int stage) {
  ctx->map_te[ctx->nmap] = te;
  ctx->map_kernel[ctx->nmap] = kb;
  ctx->map_stage[ctx->nmap] = stage;
  ctx->nmap++;
}

static tsl_buffer *mapped(const tsl_lower_ctx *ctx, const tsl_buffer *te) {
  for (int m = 0; m < ctx->nmap; m++)
    if (ctx->map_te[m] == te) return ctx->map_kernel[m];
  return NULL;
}

/* Argument buffers for the inputs and outputs, in kernel order. */
static tsl_status make_args(tsl_lower_ctx *ctx, tsl_arg *args) {
  const tsl_te_program *p = ctx->sched->program;
  int n = 0;
  for (int io = 0; io < 2; io++) {
    int cnt = io ? p->noutputs : p->ninputs;
    tsl_te_tensor *const *ts = io ? p->outputs : p->inputs;
    for (int i = 0; i < cnt; i++) {
      const tsl_buffer *te = ts[i]->buf;
      if (mapped(ctx, te))
        return tsl_error(TSL_ERR_INVALID, "lower: tensor %s is listed twice among the program's inputs and outputs",
                         te->name);
      int si = -1;
      for (int k = 0; k < ctx->sched->nstages; k++)
        if (ctx->sched->stages[k]->op->output == ts[i]) si = k;
      tsl_buffer *kb = kernel_buffer(te, te->name, te->shape, TSL_BUF_ARG, ts[i]);
      map_add(ctx, te, kb, si);
      if (si >= 0) ctx->stages[si].buf = kb;
      args[n].is_buffer = true;
      args[n].buf = kb;
      args[n].var = NULL;
      n++;
    }
  }
  return TSL_OK;
}

/* ---- limits, named by stage and axis ---- */

/* Unrolled copies and vector lanes per stage, checked on the extents bound inference
 * gave (compute_at makes them smaller than the nominal ones), so the messages can name
 * the stage and axis rather than a loop variable deep in the IR. */
static tsl_status check_limits(const tsl_lower_ctx *ctx) {
  const tsl_schedule *s = ctx->sched;
  for (int si = 0; si < s->nstages; si++) {
    const tsl_stage *st = s->stages[si];
    const tsl_stage_lower *sl = &ctx->stages[si];
    if (st->attach == TSL_ATTACH_INLINE) continue;
    int64_t copies = 1;
    for (int k = 0; k < st->nleaf; k++) {
      const tsl_stage_iter *it = &st->iters[st->leaf[k]];
      int64_t ext = sl->iter_extent[st->leaf[k]];
      if (it->annotation == TSL_FOR_VECTORIZED && ext > TSL_VECTORIZE_MAX_LANES)
        return tsl_error(TSL_ERR_SCHEDULE,
                         "vectorize: axis %s of stage %s has %lld iterations, more than %d lanes; split it and "
                         "vectorize the inner axis",
                         it->name, st->name, (long long)ext, TSL_VECTORIZE_MAX_LANES);
      if (it->annotation != TSL_FOR_UNROLLED || ext <= 1) continue;
      if (ext > ctx->opts.max_unroll / copies)
        return tsl_error(TSL_ERR_SCHEDULE,
                         "unroll: axis %s of stage %s (extent %lld) with the unrolled axes around it would make "
                         "%lld copies of the body (limit %lld); unroll a smaller axis",
                         it->name, st->name, (long long)ext,
                         ext > INT64_MAX / copies ? (long long)INT64_MAX : (long long)(ext * copies),
                         (long long)ctx->opts.max_unroll);
      copies *= ext;
    }
  }
  return TSL_OK;
}

/* ---- the pipeline ---- */

static tsl_status schedule_ops(const tsl_lower_ctx *ctx, tsl_stmt **out) {
  const tsl_schedule *s = ctx->sched;
  tsl_stmt *acc = NULL;
  /* Built backwards so each intermediate's allocation encloses its producer and
   * everything after it (its consumers come later in topological order). */
  for (int si = s->nstages - 1; si >= 0; si--) {
    const tsl_stage *st = s->stages[si];
    if (st->attach != TSL_ATTACH_ROOT) continue;
    tsl_stmt *nest;
    tsl_status rc = tsl_make_stage_nest(ctx, si, &nest);
    if (rc != TSL_OK) return rc;
    acc = acc ? tsl_seq2(nest, acc) : nest;
    if (!st->is_output) acc = tsl_allocate(ctx->stages[si].buf, acc);
  }
  *out = acc;
  return TSL_OK;
}

tsl_lower_options tsl_lower_options_default(void) {
  tsl_lower_options o = {TSL_TAIL_PARTITION, 0, TSL_UNROLL_MAX_ITERATIONS, false};
  return o;
}

tsl_status tsl_lower(const tsl_schedule *s, const char *kernel_name, tsl_func **out) {
  return tsl_lower_with(s, kernel_name, NULL, out);
}

tsl_status tsl_lower_with(const tsl_schedule *s, const char *kernel_name, const tsl_lower_options *opts,
                          tsl_func **out) {
  *out = NULL;
  if (!s) return tsl_error(TSL_ERR_INVALID, "lower: no schedule");
  if (!kernel_name || !*kernel_name) return tsl_error(TSL_ERR_INVALID, "lower: empty kernel name");
  const tsl_te_program *p = s->program;
  tsl_status rc = tsl_te_check(p);
  if (rc != TSL_OK) return rc;

  tsl_lower_ctx ctx = {0};
  ctx.sched = s;
  ctx.opts = opts ? *opts : tsl_lower_options_default();
  if (ctx.opts.max_unroll <= 0) ctx.opts.max_unroll = TSL_UNROLL_MAX_ITERATIONS;
  if (ctx.opts.vector_bits < 0) ctx.opts.vector_bits = 0;
  if (s->vector_bits && ctx.opts.vector_bits && s->vector_bits > ctx.opts.vector_bits)
    return tsl_error(TSL_ERR_SCHEDULE, "lower: vector_width(%d) is wider than the target's %d-bit vectors",
                     s->vector_bits, ctx.opts.vector_bits);
  if (s->vector_bits) ctx.opts.vector_bits = s->vector_bits;
  ctx.stages = tsl_alloc(sizeof(tsl_stage_lower) * (size_t)(s->nstages + 1));
  int cap = p->ninputs + p->noutputs + s->nstages + 1;
  ctx.map_te = tsl_alloc(sizeof(tsl_buffer *) * (size_t)cap);
  ctx.map_kernel = tsl_alloc(sizeof(tsl_buffer *) * (size_t)cap);
  ctx.map_stage = tsl_alloc(sizeof(int) * (size_t)cap);
  int nargs = p->ninputs + p->noutputs;
  tsl_arg *args = tsl_alloc(sizeof(tsl_arg) * (size_t)(nargs + 1));
  rc = make_args(&ctx, args);
  if (rc != TSL_OK) return rc;

  for (int si = 0; si < s->nstages; si++)
    ctx.stages[si].body = tsl_lower_map_loads(s->stages[si]->op->body, inline_load, &ctx);
  rc = tsl_infer_bound(&ctx);
  if (rc != TSL_OK) return rc;
  for (int si = 0; si < s->nstages; si++) {
    const tsl_stage *st = s->stages[si];
    if (st->attach == TSL_ATTACH_INLINE || st->is_output) continue;
    const tsl_buffer *te = st->op->output->buf;
    tsl_buffer *kb = kernel_buffer(te, st->name, ctx.stages[si].region_extent, TSL_BUF_LOCAL, st->op->output);
    layout_strides(st, kb);
    ctx.stages[si].buf = kb;
    map_add(&ctx, te, kb, si);
  }

  rc = check_limits(&ctx);
  if (rc != TSL_OK) return rc;
  tsl_stmt *body = NULL;
  rc = schedule_ops(&ctx, &body);
  if (rc != TSL_OK) return rc;
  const bool trace = !ctx.opts.quiet && debug_lower(); /* TSL_DEBUG read once a lowering */
  debug_print(trace, kernel_name, "schedule_ops", body);
  body = tsl_pass_guard_loads(body);
  debug_print(trace, kernel_name, "guard_loads", body);
  body = tsl_pass_storage_flatten(body);
  debug_print(trace, kernel_name, "storage_flatten", body);
  body = tsl_pass_simplify(body);
  debug_print(trace, kernel_name, "simplify", body);
  body = tsl_pass_native_vectors(body, ctx.opts.vector_bits);
  debug_print(trace, kernel_name, "native_vectors", body);
  body = tsl_pass_loop_partition(body, ctx.opts.tail == TSL_TAIL_PARTITION);
  debug_print(trace, kernel_name, "loop_partition", body);
  body = tsl_pass_simplify(body);
  debug_print(trace, kernel_name, "simplify", body);
  rc = tsl_pass_unroll(body, ctx.opts.max_unroll, &body);
  if (rc != TSL_OK) return rc;
  debug_print(trace, kernel_name, "unroll", body);
  body = tsl_pass_simplify(body);
  debug_print(trace, kernel_name, "simplify", body);
  rc = tsl_pass_vectorize(body, &body);
  if (rc != TSL_OK) return rc;
  debug_print(trace, kernel_name, "vectorize", body);
  body = tsl_pass_simplify(body);
  debug_print(trace, kernel_name, "simplify", body);
  *out = tsl_func_new(kernel_name, nargs, args, body);
  (*out)->vector_bits = s->vector_bits;
  return TSL_OK;
}
