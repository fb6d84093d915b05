/* Schedule data: stages, iters, relations, and the steps that change them. */
#include "schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

/* ---- small owned-memory helpers ---- */

static bool grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int n = *cap ? *cap * 2 : 8;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * elem);
  if (!q) return false;
  memset((char *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
  *p = q;
  *cap = n;
  return true;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static char *concat3(const char *a, const char *b, const char *c) {
  size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
  char *d = malloc(n);
  if (d) snprintf(d, n, "%s%s%s", a, b, c);
  return d;
}

/* ---- names ---- */

static const char *step_names[TSL_STEP_COUNT_] = {
    "compute_inline", "compute_root", "split", "fuse", "reorder", "vectorize", "unroll", "parallel"};

/* Argument signature per primitive: s = stage name, a = axis name, i = integer,
 * '+' = the previous kind repeated one or more times. */
static const char *step_signatures[TSL_STEP_COUNT_] = {"s", "s", "sai", "saa", "sa+", "sa", "sa", "sa"};

const char *tsl_step_kind_name(tsl_step_kind k) {
  return (int)k >= 0 && k < TSL_STEP_COUNT_ ? step_names[k] : NULL;
}

tsl_stage *tsl_schedule_stage(const tsl_schedule *s, const char *name) {
  int i = tsl_schedule_stage_index(s, name);
  return i < 0 ? NULL : s->stages[i];
}

int tsl_schedule_stage_index(const tsl_schedule *s, const char *name) {
  for (int i = 0; i < s->nstages; i++)
    if (strcmp(s->stages[i]->name, name) == 0) return i;
  return -1;
}

tsl_stage *tsl_schedule_stage_of_op(const tsl_schedule *s, const tsl_te_op *op) {
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->op == op) return s->stages[i];
  return NULL;
}

int tsl_stage_iter_index(const tsl_stage *st, const char *name) {
  for (int i = 0; i < st->niters; i++)
    if (strcmp(st->iters[i].name, name) == 0) return i;
  return -1;
}

static int leaf_position(const tsl_stage *st, int iter) {
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i] == iter) return i;
  return -1;
}

/* A name not yet used by an iter of st: base, else base_1, base_2, ... (malloc'd). */
static char *unique_iter_name(const tsl_stage *st, const char *base) {
  if (tsl_stage_iter_index(st, base) < 0) return xstrdup(base);
  for (int k = 1;; k++) {
    char suffix[24];
    snprintf(suffix, sizeof suffix, "_%d", k);
    char *n = concat3(base, suffix, "");
    if (!n || tsl_stage_iter_index(st, n) < 0) return n;
    free(n);
  }
}

/* Appends an iter (name taken over); returns its index or -1 when out of memory. */
static int add_iter(tsl_stage *st, char *name, int64_t min, int64_t extent, bool is_reduce) {
  if (!name || !grow((void **)&st->iters, &st->iters_cap, st->niters + 1, sizeof *st->iters)) {
    free(name);
    return -1;
  }
  tsl_stage_iter *it = &st->iters[st->niters];
  it->name = name;
  it->var = tsl_var(name, TSL_I64);
  it->min = min;
  it->extent = extent;
  it->is_reduce = is_reduce;
  it->annotation = TSL_FOR_SERIAL;
  return st->niters++;
}

/* ---- creation ---- */

static void stage_free(tsl_stage *st) {
  if (!st) return;
  for (int i = 0; i < st->niters; i++) free((char *)st->iters[i].name);
  free(st->iters);
  free(st->leaf);
  free(st->rels);
  free((char *)st->name);
  free(st);
}

static void step_clear(tsl_step *step) {
  for (int i = 0; i < step->nargs; i++) free((char *)step->args[i].name);
  free(step->args);
  step->args = NULL;
  step->nargs = 0;
}

void tsl_schedule_free(tsl_schedule *s) {
  if (!s) return;
  for (int i = 0; i < s->nstages; i++) stage_free(s->stages[i]);
  free(s->stages);
  for (int i = 0; i < s->nsteps; i++) step_clear(&s->steps[i]);
  free(s->steps);
  free(s);
}

static bool is_program_output(const tsl_te_program *p, const tsl_te_op *op) {
  for (int i = 0; i < p->noutputs; i++)
    if (p->outputs[i]->op == op) return true;
  return false;
}

static tsl_status stage_new(const tsl_schedule *s, tsl_te_op *op, tsl_stage **out) {
  *out = NULL;
  if (op->body && op->body->kind == TSL_E_REDUCE && op->nreduce != op->body->reduce.naxes)
    return tsl_error(TSL_ERR_INVALID, "schedule: stage %s: %d reduce axes declared, body reduces over %d",
                     op->name, op->nreduce, op->body->reduce.naxes);
  tsl_stage *st = calloc(1, sizeof *st);
  if (!st) return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  const char *base = op->name ? op->name : "stage";
  if (tsl_schedule_stage_index(s, base) < 0) {
    st->name = xstrdup(base);
  } else {
    for (int k = 1; !st->name || tsl_schedule_stage_index(s, st->name) >= 0; k++) {
      free((char *)st->name);
      char suffix[24];
      snprintf(suffix, sizeof suffix, "_%d", k);
      st->name = concat3(base, suffix, "");
      if (!st->name) break;
    }
  }
  st->op = op;
  st->is_output = is_program_output(s->program, op);
  st->attach = TSL_ATTACH_ROOT;
  st->attach_stage = st->attach_iter = -1;
  bool ok = st->name != NULL;
  for (int i = 0; ok && i < op->naxis + op->nreduce; i++) {
    const tsl_iter_var *iv = i < op->naxis ? &op->axis[i] : &op->reduce_axis[i - op->naxis];
    const char *nm = iv->var && iv->var->kind == TSL_E_VAR ? iv->var->var.name : "i";
    ok = add_iter(st, unique_iter_name(st, nm), iv->min, iv->extent, i >= op->naxis) >= 0;
  }
  st->nroot = st->niters;
  ok = ok && grow((void **)&st->leaf, &st->leaf_cap, st->nroot + 1, sizeof *st->leaf);
  if (!ok) {
    stage_free(st);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  for (int i = 0; i < st->nroot; i++) st->leaf[i] = i;
  st->nleaf = st->nroot;
  *out = st;
  return TSL_OK;
}

tsl_status tsl_schedule_new(const tsl_te_program *p, tsl_schedule **out) {
  *out = NULL;
  if (!p || p->noutputs < 1) return tsl_error(TSL_ERR_INVALID, "schedule: program has no outputs");
  for (int i = 0; i < p->noutputs; i++)
    if (!p->outputs[i] || !p->outputs[i]->op || p->outputs[i]->op->kind != TSL_TE_COMPUTE)
      return tsl_error(TSL_ERR_INVALID, "schedule: output %d of %s is not a compute stage", i,
                       p->name ? p->name : "program");
  tsl_schedule *s = calloc(1, sizeof *s);
  if (!s) return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  s->program = p;
  int n = 0;
  tsl_te_op **ops = tsl_te_program_stages(p, &n);
  if (!grow((void **)&s->stages, &s->stages_cap, n + 1, sizeof *s->stages)) {
    tsl_schedule_free(s);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  for (int i = 0; i < n; i++) {
    tsl_stage *st;
    tsl_status rc = stage_new(s, ops[i], &st);
    if (rc != TSL_OK) {
      tsl_schedule_free(s);
      return rc;
    }
    s->stages[s->nstages++] = st;
  }
  *out = s;
  return TSL_OK;
}

static bool has_reduction(const tsl_te_op *op) {
  return op->nreduce > 0 || (op->body && op->body->kind == TSL_E_REDUCE);
}

tsl_status tsl_schedule_create(const tsl_te_program *p, tsl_schedule **out) {
  tsl_schedule *s;
  tsl_status rc = tsl_schedule_new(p, &s);
  if (rc != TSL_OK) return rc;
  for (int i = 0; i < s->nstages; i++) {
    tsl_stage *st = s->stages[i];
    const char *tag = st->op->tag ? st->op->tag : "";
    bool injective = strcmp(tag, "elemwise") == 0 || strcmp(tag, "injective") == 0;
    if (!injective || st->is_output || has_reduction(st->op)) continue;
    rc = tsl_schedule_compute_inline(s, st->name);
    if (rc != TSL_OK) {
      tsl_schedule_free(s);
      return rc;
    }
  }
  *out = s;
  return TSL_OK;
}

/* ---- validation ---- */

static tsl_status check_signature(const tsl_step *step, const char *prim) {
  const char *sig = step_signatures[step->kind];
  int i = 0;
  for (const char *c = sig; *c; c++) {
    if (*c == '+') {
      while (i < step->nargs && !step->args[i].is_int == (c[-1] != 'i') && (c[-1] == 'i' || step->args[i].name)) i++;
      continue;
    }
    if (i >= step->nargs)
      return tsl_error(TSL_ERR_INVALID, "%s: too few arguments (%d)", prim, step->nargs);
    bool want_int = *c == 'i';
    if (step->args[i].is_int != want_int || (!want_int && !step->args[i].name))
      return tsl_error(TSL_ERR_INVALID, "%s: argument %d must be %s", prim, i + 1,
                       want_int ? "an integer" : *c == 's' ? "a stage name" : "an axis name");
    i++;
  }
  if (i != step->nargs) return tsl_error(TSL_ERR_INVALID, "%s: too many arguments (%d)", prim, step->nargs);
  return TSL_OK;
}

/* Resolves args[k] to a leaf iter of st. */
static tsl_status leaf_arg(const tsl_stage *st, const tsl_step *step, int k, const char *prim, int *iter) {
  const char *name = step->args[k].name;
  int it = tsl_stage_iter_index(st, name);
  if (it < 0) return tsl_error(TSL_ERR_INVALID, "%s: stage %s has no axis %s", prim, st->name, name);
  if (leaf_position(st, it) < 0)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is not a leaf (already split or fused)", prim,
                     name, st->name);
  *iter = it;
  return TSL_OK;
}

/* ---- the primitives ---- */

static tsl_status do_compute_inline(tsl_schedule *s, tsl_stage *st) {
  if (st->is_output)
    return tsl_error(TSL_ERR_SCHEDULE, "compute_inline: stage %s is an output of the program", st->name);
  if (has_reduction(st->op))
    return tsl_error(TSL_ERR_SCHEDULE, "compute_inline: stage %s is a reduction (only injective stages inline)",
                     st->name);
  int self = tsl_schedule_stage_index(s, st->name);
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->attach == TSL_ATTACH_AT && s->stages[i]->attach_stage == self)
      return tsl_error(TSL_ERR_SCHEDULE, "compute_inline: stage %s is computed inside a loop of %s",
                       s->stages[i]->name, st->name);
  st->attach = TSL_ATTACH_INLINE;
  st->attach_stage = st->attach_iter = -1;
  return TSL_OK;
}

static tsl_status do_split(tsl_stage *st, int parent, int64_t factor) {
  if (factor < 1)
    return tsl_error(TSL_ERR_SCHEDULE, "split: factor %lld on axis %s of stage %s (must be >= 1)",
                     (long long)factor, st->iters[parent].name, st->name);
  if (!grow((void **)&st->rels, &st->rels_cap, st->nrels + 1, sizeof *st->rels) ||
      !grow((void **)&st->leaf, &st->leaf_cap, st->nleaf + 1, sizeof *st->leaf))
    return tsl_error(TSL_ERR_NOMEM, "split: out of memory");
  const tsl_stage_iter p = st->iters[parent]; /* copy: add_iter may move the array */
  char *on = concat3(p.name, ".outer", ""), *in = concat3(p.name, ".inner", "");
  char *uo = on ? unique_iter_name(st, on) : NULL;
  free(on);
  int outer = uo ? add_iter(st, uo, 0, (p.extent + factor - 1) / factor, p.is_reduce) : -1;
  char *ui = in && outer >= 0 ? unique_iter_name(st, in) : NULL;
  free(in);
  int inner = ui ? add_iter(st, ui, 0, factor, p.is_reduce) : -1;
  if (outer < 0 || inner < 0) return tsl_error(TSL_ERR_NOMEM, "split: out of memory");
  int pos = leaf_position(st, parent);
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
  return TSL_OK;
}

static tsl_status do_fuse(tsl_stage *st, int outer, int inner) {
  const tsl_stage_iter *o = &st->iters[outer], *i = &st->iters[inner];
  int po = leaf_position(st, outer), pi = leaf_position(st, inner);
  if (pi != po + 1)
    return tsl_error(TSL_ERR_SCHEDULE, "fuse: axes %s and %s of stage %s are not adjacent leaves (outer first)",
                     o->name, i->name, st->name);
  if (o->is_reduce != i->is_reduce)
    return tsl_error(TSL_ERR_SCHEDULE, "fuse: axes %s and %s of stage %s mix a spatial and a reduction axis",
                     o->name, i->name, st->name);
  if (!grow((void **)&st->rels, &st->rels_cap, st->nrels + 1, sizeof *st->rels))
    return tsl_error(TSL_ERR_NOMEM, "fuse: out of memory");
  char *fn = concat3(o->name, ".", i->name);
  char *fn2 = fn ? concat3(fn, ".fused", "") : NULL;
  free(fn);
  char *un = fn2 ? unique_iter_name(st, fn2) : NULL;
  free(fn2);
  int64_t extent = o->extent * i->extent;
  bool red = o->is_reduce;
  int fused = un ? add_iter(st, un, 0, extent, red) : -1;
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

static tsl_status do_reorder(tsl_stage *st, const tsl_step *step) {
  int n = step->nargs - 1;
  int *iters = malloc(sizeof(int) * (size_t)n), *pos = malloc(sizeof(int) * (size_t)n);
  tsl_status rc = iters && pos ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "reorder: out of memory");
  for (int k = 0; rc == TSL_OK && k < n; k++) {
    rc = leaf_arg(st, step, k + 1, "reorder", &iters[k]);
    for (int j = 0; rc == TSL_OK && j < k; j++)
      if (iters[j] == iters[k])
        rc = tsl_error(TSL_ERR_SCHEDULE, "reorder: axis %s of stage %s named twice", st->iters[iters[k]].name,
                       st->name);
    if (rc == TSL_OK) pos[k] = leaf_position(st, iters[k]);
  }
  if (rc == TSL_OK) {
    /* The named leaves keep the set of loop positions they occupy, filled in the order
     * given (TVM's reorder): other leaves do not move. */
    for (int a = 1; a < n; a++)
      for (int b = a; b > 0 && pos[b - 1] > pos[b]; b--) {
        int t = pos[b];
        pos[b] = pos[b - 1];
        pos[b - 1] = t;
      }
    for (int k = 0; k < n; k++) st->leaf[pos[k]] = iters[k];
  }
  free(iters);
  free(pos);
  return rc;
}

static tsl_status do_annotate(tsl_stage *st, int iter, tsl_for_kind kind, const char *prim) {
  tsl_stage_iter *it = &st->iters[iter];
  if (st->attach == TSL_ATTACH_INLINE)
    return tsl_error(TSL_ERR_SCHEDULE, "%s: stage %s is inlined and has no loops", prim, st->name);
  if (it->is_reduce && (kind == TSL_FOR_PARALLEL || kind == TSL_FOR_VECTORIZED))
    return tsl_error(TSL_ERR_SCHEDULE,
                     "%s: axis %s of stage %s is a reduction axis (its iterations update the same "
                     "outputs, so they cannot run at once)",
                     prim, it->name, st->name);
  it->annotation = kind;
  return TSL_OK;
}

static tsl_status append_step(tsl_schedule *s, const tsl_step *step) {
  if (!grow((void **)&s->steps, &s->steps_cap, s->nsteps + 1, sizeof *s->steps))
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  tsl_step *d = &s->steps[s->nsteps];
  d->kind = step->kind;
  d->nargs = step->nargs;
  d->args = calloc((size_t)step->nargs + 1, sizeof *d->args);
  bool ok = d->args != NULL;
  for (int i = 0; ok && i < step->nargs; i++) {
    d->args[i] = step->args[i];
    if (!step->args[i].is_int) ok = (d->args[i].name = xstrdup(step->args[i].name)) != NULL;
  }
  if (!ok) {
    step_clear(d);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  s->nsteps++;
  return TSL_OK;
}

tsl_status tsl_schedule_apply(tsl_schedule *s, const tsl_step *step) {
  if (!s || !step) return tsl_error(TSL_ERR_INVALID, "schedule: missing schedule or step");
  const char *prim = tsl_step_kind_name(step->kind);
  if (!prim) return tsl_error(TSL_ERR_INVALID, "schedule: unknown step kind %d", (int)step->kind);
  tsl_status rc = check_signature(step, prim);
  if (rc != TSL_OK) return rc;
  tsl_stage *st = tsl_schedule_stage(s, step->args[0].name);
  if (!st) return tsl_error(TSL_ERR_INVALID, "%s: no stage named %s", prim, step->args[0].name);
  int a = -1, b = -1;
  switch (step->kind) {
  case TSL_STEP_COMPUTE_INLINE: rc = do_compute_inline(s, st); break;
  case TSL_STEP_COMPUTE_ROOT:
    st->attach = TSL_ATTACH_ROOT;
    st->attach_stage = st->attach_iter = -1;
    break;
  case TSL_STEP_SPLIT:
    rc = leaf_arg(st, step, 1, prim, &a);
    if (rc == TSL_OK) rc = do_split(st, a, step->args[2].value);
    break;
  case TSL_STEP_FUSE:
    rc = leaf_arg(st, step, 1, prim, &a);
    if (rc == TSL_OK) rc = leaf_arg(st, step, 2, prim, &b);
    if (rc == TSL_OK) rc = do_fuse(st, a, b);
    break;
  case TSL_STEP_REORDER: rc = do_reorder(st, step); break;
  case TSL_STEP_VECTORIZE:
  case TSL_STEP_UNROLL:
  case TSL_STEP_PARALLEL: {
    tsl_for_kind k = step->kind == TSL_STEP_VECTORIZE ? TSL_FOR_VECTORIZED
                     : step->kind == TSL_STEP_UNROLL  ? TSL_FOR_UNROLLED
                                                      : TSL_FOR_PARALLEL;
    rc = leaf_arg(st, step, 1, prim, &a);
    if (rc == TSL_OK) rc = do_annotate(st, a, k, prim);
    break;
  }
  case TSL_STEP_COUNT_: break;
  }
  if (rc != TSL_OK) return rc;
  return append_step(s, step);
}

/* ---- primitives as calls ---- */

static tsl_status apply_names(tsl_schedule *s, tsl_step_kind k, int n, const char *const *names, bool with_int,
                              int64_t value) {
  tsl_step_arg args[16];
  if (n + (with_int ? 1 : 0) > (int)(sizeof args / sizeof args[0]))
    return tsl_error(TSL_ERR_INVALID, "%s: too many arguments (%d)", tsl_step_kind_name(k), n);
  for (int i = 0; i < n; i++) {
    if (!names[i]) return tsl_error(TSL_ERR_INVALID, "%s: argument %d is NULL", tsl_step_kind_name(k), i + 1);
    args[i] = (tsl_step_arg){false, names[i], 0};
  }
  if (with_int) args[n++] = (tsl_step_arg){true, NULL, value};
  tsl_step step = {k, n, args};
  return tsl_schedule_apply(s, &step);
}

tsl_status tsl_schedule_compute_inline(tsl_schedule *s, const char *stage) {
  return apply_names(s, TSL_STEP_COMPUTE_INLINE, 1, &stage, false, 0);
}

tsl_status tsl_schedule_compute_root(tsl_schedule *s, const char *stage) {
  return apply_names(s, TSL_STEP_COMPUTE_ROOT, 1, &stage, false, 0);
}

tsl_status tsl_schedule_split(tsl_schedule *s, const char *stage, const char *axis, int64_t factor) {
  const char *n[2] = {stage, axis};
  return apply_names(s, TSL_STEP_SPLIT, 2, n, true, factor);
}

tsl_status tsl_schedule_fuse(tsl_schedule *s, const char *stage, const char *outer, const char *inner) {
  const char *n[3] = {stage, outer, inner};
  return apply_names(s, TSL_STEP_FUSE, 3, n, false, 0);
}

tsl_status tsl_schedule_reorder(tsl_schedule *s, const char *stage, int n, const char *const *axes) {
  const char *names[16];
  if (n < 1 || n > 15) return tsl_error(TSL_ERR_INVALID, "reorder: %d axes (need 1..15)", n);
  names[0] = stage;
  for (int i = 0; i < n; i++) names[i + 1] = axes[i];
  return apply_names(s, TSL_STEP_REORDER, n + 1, names, false, 0);
}

tsl_status tsl_schedule_vectorize(tsl_schedule *s, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return apply_names(s, TSL_STEP_VECTORIZE, 2, n, false, 0);
}

tsl_status tsl_schedule_unroll(tsl_schedule *s, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return apply_names(s, TSL_STEP_UNROLL, 2, n, false, 0);
}

tsl_status tsl_schedule_parallel(tsl_schedule *s, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return apply_names(s, TSL_STEP_PARALLEL, 2, n, false, 0);
}
