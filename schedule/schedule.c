/* Schedule data: stages, iters, names, and applying steps (validated, all or nothing).
 * The primitives themselves live in sched_loops.c, sched_attach.c and sched_cache.c. */
#include "schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "schedule/sched_internal.h"

/* ---- small owned-memory helpers ---- */

bool tsl_sched_grow(void **p, int *cap, int need, size_t elem) {
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

char *tsl_sched_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

char *tsl_sched_concat3(const char *a, const char *b, const char *c) {
  size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
  char *d = malloc(n);
  if (d) snprintf(d, n, "%s%s%s", a, b, c);
  return d;
}

/* ---- names ---- */

static const char *step_names[TSL_STEP_COUNT_] = {
    "compute_inline", "compute_root", "split",      "fuse",        "reorder",      "vectorize",
    "unroll",         "parallel",     "split",      "tile",        "compute_at",   "cache_read",
    "cache_write",    "storage_align", "prefetch", "rfactor",      "storage_order", "vector_width"};

/* Argument signature per primitive: s = stage name, a = axis name, t = tensor name,
 * n = other name (scope), i = integer, '+' = the previous kind repeated one or more
 * times. */
static const char *step_signatures[TSL_STEP_COUNT_] = {"s",    "s",   "sai", "saa",  "sa+", "sa",   "sa", "sa",
                                                       "sai",  "saaii", "ssa", "tns+", "sn",  "saii", "stai", "sa",
                                                       "sa+", "i"};

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
  /* a cache step gives a stage a copy of its op that still outputs the op's tensor */
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->op == op || s->stages[i]->op->output == op->output) return s->stages[i];
  return NULL;
}

int tsl_stage_iter_index(const tsl_stage *st, const char *name) {
  for (int i = 0; i < st->niters; i++)
    if (strcmp(st->iters[i].name, name) == 0) return i;
  return -1;
}

int tsl_sched_leaf_position(const tsl_stage *st, int iter) {
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i] == iter) return i;
  return -1;
}

char *tsl_sched_unique_iter_name(const tsl_stage *st, const char *base) {
  if (tsl_stage_iter_index(st, base) < 0) return tsl_sched_strdup(base);
  for (int k = 1;; k++) {
    char suffix[24];
    snprintf(suffix, sizeof suffix, "_%d", k);
    char *n = tsl_sched_concat3(base, suffix, "");
    if (!n || tsl_stage_iter_index(st, n) < 0) return n;
    free(n);
  }
}

char *tsl_sched_unique_stage_name(const tsl_schedule *s, const char *base) {
  if (tsl_schedule_stage_index(s, base) < 0) return tsl_sched_strdup(base);
  for (int k = 1;; k++) {
    char suffix[24];
    snprintf(suffix, sizeof suffix, "_%d", k);
    char *n = tsl_sched_concat3(base, suffix, "");
    if (!n || tsl_schedule_stage_index(s, n) < 0) return n;
    free(n);
  }
}

int tsl_sched_add_iter(tsl_stage *st, char *name, int64_t min, int64_t extent, bool is_reduce) {
  if (!name || !tsl_sched_grow((void **)&st->iters, &st->iters_cap, st->niters + 1, sizeof *st->iters)) {
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

/* ---- stages ---- */

/* Frees what st owns, not st itself. */
static void stage_clear(tsl_stage *st) {
  for (int i = 0; i < st->niters; i++) free((char *)st->iters[i].name);
  free(st->iters);
  free(st->leaf);
  free(st->rels);
  free(st->align_factor);
  free(st->align_offset);
  free(st->storage_order);
  free(st->prefetch);
  free((char *)st->name);
}

void tsl_sched_stage_free(tsl_stage *st) {
  if (!st) return;
  stage_clear(st);
  free(st);
}

void tsl_sched_stage_move(tsl_stage *dst, tsl_stage *src) {
  stage_clear(dst);
  *dst = *src;
  free(src);
}

static void *dup_array(const void *p, size_t bytes) {
  void *q = malloc(bytes ? bytes : 1);
  if (q && bytes) memcpy(q, p, bytes);
  return q;
}

/* A deep copy (the IR nodes it points at are shared). */
static tsl_stage *stage_clone(const tsl_stage *st) {
  tsl_stage *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  *c = *st;
  c->name = NULL;
  c->iters = NULL;
  c->leaf = NULL;
  c->rels = NULL;
  c->align_factor = c->align_offset = NULL;
  c->storage_order = NULL;
  c->prefetch = NULL;
  c->niters = 0;
  bool ok = (c->name = tsl_sched_strdup(st->name)) != NULL;
  ok = ok && (c->iters = dup_array(st->iters, sizeof *st->iters * (size_t)st->iters_cap)) != NULL;
  for (int i = 0; ok && i < st->niters; i++) {
    c->iters[i].name = tsl_sched_strdup(st->iters[i].name);
    ok = c->iters[i].name != NULL;
    c->niters = i + 1;
  }
  ok = ok && (c->leaf = dup_array(st->leaf, sizeof *st->leaf * (size_t)st->leaf_cap)) != NULL;
  ok = ok && (c->rels = dup_array(st->rels, sizeof *st->rels * (size_t)st->rels_cap)) != NULL;
  size_t nd = sizeof(int64_t) * (size_t)st->op->naxis;
  ok = ok && (c->align_factor = dup_array(st->align_factor, nd)) != NULL;
  ok = ok && (c->align_offset = dup_array(st->align_offset, nd)) != NULL;
  ok = ok && (c->storage_order = dup_array(st->storage_order, sizeof(int) * (size_t)st->op->naxis)) != NULL;
  ok = ok && (c->prefetch = dup_array(st->prefetch, sizeof *st->prefetch * (size_t)st->prefetch_cap)) != NULL;
  if (!ok) {
    tsl_sched_stage_free(c);
    return NULL;
  }
  return c;
}

static bool is_program_output(const tsl_te_program *p, const tsl_te_op *op) {
  for (int i = 0; i < p->noutputs; i++)
    if (p->outputs[i] == op->output) return true;
  return false;
}

tsl_status tsl_sched_stage_new(const tsl_schedule *s, tsl_te_op *op, const char *name, tsl_stage **out) {
  *out = NULL;
  if (op->body && op->body->kind == TSL_E_REDUCE && op->nreduce != op->body->reduce.naxes)
    return tsl_error(TSL_ERR_INVALID, "schedule: stage %s: %d reduce axes declared, body reduces over %d",
                     op->name, op->nreduce, op->body->reduce.naxes);
  tsl_stage *st = calloc(1, sizeof *st);
  if (!st) return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  st->name = name ? tsl_sched_strdup(name) : tsl_sched_unique_stage_name(s, op->name ? op->name : "stage");
  st->op = op;
  st->is_output = is_program_output(s->program, op);
  st->attach = TSL_ATTACH_ROOT;
  st->attach_stage = st->attach_iter = -1;
  bool ok = st->name != NULL;
  for (int i = 0; ok && i < op->naxis + op->nreduce; i++) {
    const tsl_iter_var *iv = i < op->naxis ? &op->axis[i] : &op->reduce_axis[i - op->naxis];
    const char *nm = iv->var && iv->var->kind == TSL_E_VAR ? iv->var->var.name : "i";
    ok = tsl_sched_add_iter(st, tsl_sched_unique_iter_name(st, nm), iv->min, iv->extent, i >= op->naxis) >= 0;
  }
  st->nroot = st->niters;
  ok = ok && tsl_sched_grow((void **)&st->leaf, &st->leaf_cap, st->nroot + 1, sizeof *st->leaf);
  ok = ok && (st->align_factor = calloc((size_t)op->naxis + 1, sizeof(int64_t))) != NULL;
  ok = ok && (st->align_offset = calloc((size_t)op->naxis + 1, sizeof(int64_t))) != NULL;
  ok = ok && (st->storage_order = calloc((size_t)op->naxis + 1, sizeof(int))) != NULL;
  for (int d = 0; ok && d < op->naxis; d++) st->storage_order[d] = d;
  if (!ok) {
    tsl_sched_stage_free(st);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  for (int i = 0; i < st->nroot; i++) st->leaf[i] = i;
  st->nleaf = st->nroot;
  *out = st;
  return TSL_OK;
}

tsl_status tsl_sched_insert_stage(tsl_schedule *s, int pos, tsl_stage *st) {
  if (!tsl_sched_grow((void **)&s->stages, &s->stages_cap, s->nstages + 1, sizeof *s->stages))
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  for (int i = 0; i < s->nstages; i++)
    if (s->stages[i]->attach == TSL_ATTACH_AT && s->stages[i]->attach_stage >= pos) s->stages[i]->attach_stage++;
  memmove(&s->stages[pos + 1], &s->stages[pos], sizeof *s->stages * (size_t)(s->nstages - pos));
  s->stages[pos] = st;
  s->nstages++;
  return TSL_OK;
}

/* ---- schedules ---- */

static void step_clear(tsl_step *step) {
  for (int i = 0; i < step->nargs; i++) free((char *)step->args[i].name);
  free(step->args);
  step->args = NULL;
  step->nargs = 0;
}

void tsl_schedule_free(tsl_schedule *s) {
  if (!s) return;
  for (int i = 0; i < s->nstages; i++) tsl_sched_stage_free(s->stages[i]);
  free(s->stages);
  for (int i = 0; i < s->nsteps; i++) step_clear(&s->steps[i]);
  free(s->steps);
  free(s);
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
  if (!tsl_sched_grow((void **)&s->stages, &s->stages_cap, n + 1, sizeof *s->stages)) {
    tsl_schedule_free(s);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  for (int i = 0; i < n; i++) {
    tsl_stage *st;
    tsl_status rc = tsl_sched_stage_new(s, ops[i], NULL, &st);
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

/* ---- validation of arguments ---- */

static const char *kind_word(char c) {
  switch (c) {
  case 'i': return "an integer";
  case 's': return "a stage name";
  case 'a': return "an axis name";
  case 't': return "a tensor name";
  default: return "a name";
  }
}

static tsl_status check_signature(const tsl_step *step, const char *prim) {
  const char *sig = step_signatures[step->kind];
  int i = 0;
  for (const char *c = sig; *c; c++) {
    if (*c == '+') {
      bool want_int = c[-1] == 'i';
      while (i < step->nargs && step->args[i].is_int == want_int && (want_int || step->args[i].name)) i++;
      continue;
    }
    if (i >= step->nargs) return tsl_error(TSL_ERR_INVALID, "%s: too few arguments (%d)", prim, step->nargs);
    bool want_int = *c == 'i';
    if (step->args[i].is_int != want_int || (!want_int && !step->args[i].name))
      return tsl_error(TSL_ERR_INVALID, "%s: argument %d must be %s", prim, i + 1, kind_word(*c));
    i++;
  }
  if (i != step->nargs) return tsl_error(TSL_ERR_INVALID, "%s: too many arguments (%d)", prim, step->nargs);
  return TSL_OK;
}

tsl_status tsl_sched_leaf_arg(const tsl_stage *st, const tsl_step *step, int k, const char *prim, int *iter) {
  const char *name = step->args[k].name;
  int it = tsl_stage_iter_index(st, name);
  if (it < 0) return tsl_error(TSL_ERR_INVALID, "%s: stage %s has no axis %s", prim, st->name, name);
  if (tsl_sched_leaf_position(st, it) < 0) {
    for (int r = 0; r < st->nrels; r++) {
      const tsl_iter_relation *rel = &st->rels[r];
      if (rel->kind == TSL_REL_SPLIT && rel->parent == it)
        return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is not a leaf any more: it was split into %s and %s",
                         prim, name, st->name, st->iters[rel->outer].name, st->iters[rel->inner].name);
      if (rel->kind == TSL_REL_FUSE && (rel->outer == it || rel->inner == it))
        return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is not a leaf any more: a fuse consumed it into %s",
                         prim, name, st->name, st->iters[rel->fused].name);
    }
    return tsl_error(TSL_ERR_SCHEDULE, "%s: axis %s of stage %s is not a leaf", prim, name, st->name);
  }
  *iter = it;
  return TSL_OK;
}

/* ---- applying a step ---- */

static tsl_status append_step(tsl_schedule *s, const tsl_step *step) {
  if (!tsl_sched_grow((void **)&s->steps, &s->steps_cap, s->nsteps + 1, sizeof *s->steps))
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  tsl_step *d = &s->steps[s->nsteps];
  d->kind = step->kind;
  d->nargs = step->nargs;
  d->args = calloc((size_t)step->nargs + 1, sizeof *d->args);
  bool ok = d->args != NULL;
  for (int i = 0; ok && i < step->nargs; i++) {
    d->args[i] = step->args[i];
    if (!step->args[i].is_int) ok = (d->args[i].name = tsl_sched_strdup(step->args[i].name)) != NULL;
  }
  if (!ok) {
    step_clear(d);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  s->nsteps++;
  return TSL_OK;
}

/* vector_width(bits): a width some target offers (target/target.h); whether this
 * kernel's target does is known only where it is compiled. */
static tsl_status vector_width(tsl_schedule *s, int64_t bits) {
  if (bits != 128 && bits != 256 && bits != 512)
    return tsl_error(TSL_ERR_SCHEDULE, "vector_width: %lld bits is not a vector register width (128, 256 or 512)",
                     (long long)bits);
  if (s->vector_bits != 0)
    return tsl_error(TSL_ERR_SCHEDULE, "vector_width: the kernel's width is already %d bits", s->vector_bits);
  s->vector_bits = (int)bits;
  return TSL_OK;
}

static tsl_status dispatch(tsl_schedule *s, tsl_stage *st, const tsl_step *step, const char *prim) {
  int a = -1, b = -1;
  tsl_status rc;
  switch (step->kind) {
  case TSL_STEP_COMPUTE_INLINE: return tsl_sched_compute_inline(s, st);
  case TSL_STEP_COMPUTE_ROOT: return tsl_sched_compute_root(s, st);
  case TSL_STEP_SPLIT:
  case TSL_STEP_SPLIT_NPARTS: {
    rc = tsl_sched_leaf_arg(st, step, 1, prim, &a);
    if (rc != TSL_OK) return rc;
    return tsl_sched_split(s, st, a, step->args[2].value, step->kind == TSL_STEP_SPLIT_NPARTS, prim);
  }
  case TSL_STEP_FUSE:
    rc = tsl_sched_leaf_arg(st, step, 1, prim, &a);
    if (rc == TSL_OK) rc = tsl_sched_leaf_arg(st, step, 2, prim, &b);
    return rc == TSL_OK ? tsl_sched_fuse(s, st, a, b) : rc;
  case TSL_STEP_REORDER: return tsl_sched_reorder_step(st, step);
  case TSL_STEP_TILE: return tsl_sched_tile(s, st, step);
  case TSL_STEP_VECTORIZE:
  case TSL_STEP_UNROLL:
  case TSL_STEP_PARALLEL: {
    tsl_for_kind k = step->kind == TSL_STEP_VECTORIZE ? TSL_FOR_VECTORIZED
                     : step->kind == TSL_STEP_UNROLL  ? TSL_FOR_UNROLLED
                                                      : TSL_FOR_PARALLEL;
    rc = tsl_sched_leaf_arg(st, step, 1, prim, &a);
    return rc == TSL_OK ? tsl_sched_annotate(st, a, k, prim) : rc;
  }
  case TSL_STEP_COMPUTE_AT: return tsl_sched_compute_at(s, st, step);
  case TSL_STEP_CACHE_READ: return tsl_sched_cache_read(s, step);
  case TSL_STEP_CACHE_WRITE: return tsl_sched_cache_write(s, st, step);
  case TSL_STEP_STORAGE_ALIGN: return tsl_sched_storage_align(st, step);
  case TSL_STEP_PREFETCH: return tsl_sched_prefetch(s, st, step);
  case TSL_STEP_RFACTOR: return tsl_sched_rfactor(s, st, step);
  case TSL_STEP_STORAGE_ORDER: return tsl_sched_storage_order(st, step);
  case TSL_STEP_VECTOR_WIDTH: return vector_width(s, step->args[0].value);
  case TSL_STEP_COUNT_: break;
  }
  return tsl_error(TSL_ERR_INVALID, "schedule: unknown step kind %d", (int)step->kind);
}

/* The stages as they were before a step, restored when the step fails: the stage
 * objects themselves (callers may hold pointers to them) get their old contents back, and
 * stages the step inserted are freed. */
typedef struct snapshot {
  int n;
  tsl_stage **orig;   /* the stage objects, in order */
  tsl_stage **copies; /* deep copies of their contents */
} snapshot;

static void snapshot_free(snapshot *snap) {
  for (int i = 0; snap->copies && i < snap->n; i++) tsl_sched_stage_free(snap->copies[i]);
  free(snap->copies);
  free(snap->orig);
  snap->copies = snap->orig = NULL;
}

static bool snapshot_take(const tsl_schedule *s, snapshot *snap) {
  snap->n = s->nstages;
  snap->orig = calloc((size_t)s->nstages + 1, sizeof *snap->orig);
  snap->copies = calloc((size_t)s->nstages + 1, sizeof *snap->copies);
  if (!snap->orig || !snap->copies) return false;
  for (int i = 0; i < s->nstages; i++) {
    snap->orig[i] = s->stages[i];
    if (!(snap->copies[i] = stage_clone(s->stages[i]))) return false;
  }
  return true;
}

static void snapshot_restore(tsl_schedule *s, snapshot *snap) {
  for (int i = 0; i < s->nstages; i++) {
    bool old = false;
    for (int j = 0; j < snap->n && !old; j++) old = s->stages[i] == snap->orig[j];
    if (!old) tsl_sched_stage_free(s->stages[i]);
  }
  for (int i = 0; i < snap->n; i++) {
    tsl_sched_stage_move(snap->orig[i], snap->copies[i]);
    snap->copies[i] = NULL;
    s->stages[i] = snap->orig[i];
  }
  s->nstages = snap->n;
  snapshot_free(snap);
}

tsl_status tsl_schedule_apply(tsl_schedule *s, const tsl_step *step) {
  if (!s || !step) return tsl_error(TSL_ERR_INVALID, "schedule: missing schedule or step");
  const char *prim = tsl_step_kind_name(step->kind);
  if (!prim) return tsl_error(TSL_ERR_INVALID, "schedule: unknown step kind %d", (int)step->kind);
  tsl_status rc = check_signature(step, prim);
  if (rc != TSL_OK) return rc;
  tsl_stage *st = NULL;
  if (step->kind != TSL_STEP_CACHE_READ && step->kind != TSL_STEP_VECTOR_WIDTH) {
    st = tsl_schedule_stage(s, step->args[0].name);
    if (!st) return tsl_error(TSL_ERR_INVALID, "%s: no stage named %s", prim, step->args[0].name);
  }
  snapshot snap;
  if (!snapshot_take(s, &snap)) {
    snapshot_free(&snap);
    return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  }
  int vector_bits = s->vector_bits;
  rc = dispatch(s, st, step, prim);
  if (rc == TSL_OK) rc = tsl_sched_validate(s, prim);
  if (rc == TSL_OK) rc = append_step(s, step);
  if (rc != TSL_OK) {
    s->vector_bits = vector_bits;
    snapshot_restore(s, &snap);
    return rc;
  }
  snapshot_free(&snap);
  return TSL_OK;
}

/* ---- primitives as calls ---- */

/* Applies kind(names..., ints...). */
static tsl_status apply_args(tsl_schedule *s, tsl_step_kind k, int n, const char *const *names, int nints,
                             const int64_t *ints) {
  tsl_step_arg args[24];
  if (n + nints > (int)(sizeof args / sizeof args[0]))
    return tsl_error(TSL_ERR_INVALID, "%s: too many arguments (%d)", tsl_step_kind_name(k), n + nints);
  for (int i = 0; i < n; i++) {
    if (!names[i]) return tsl_error(TSL_ERR_INVALID, "%s: argument %d is NULL", tsl_step_kind_name(k), i + 1);
    args[i] = (tsl_step_arg){false, names[i], 0};
  }
  for (int i = 0; i < nints; i++) args[n + i] = (tsl_step_arg){true, NULL, ints[i]};
  tsl_step step = {k, n + nints, args};
  return tsl_schedule_apply(s, &step);
}

tsl_status tsl_schedule_compute_inline(tsl_schedule *s, const char *stage) {
  return apply_args(s, TSL_STEP_COMPUTE_INLINE, 1, &stage, 0, NULL);
}

tsl_status tsl_schedule_compute_root(tsl_schedule *s, const char *stage) {
  return apply_args(s, TSL_STEP_COMPUTE_ROOT, 1, &stage, 0, NULL);
}

tsl_status tsl_schedule_split(tsl_schedule *s, const char *stage, const char *axis, int64_t factor) {
  const char *n[2] = {stage, axis};
  return apply_args(s, TSL_STEP_SPLIT, 2, n, 1, &factor);
}

tsl_status tsl_schedule_split_nparts(tsl_schedule *s, const char *stage, const char *axis, int64_t nparts) {
  const char *n[2] = {stage, axis};
  return apply_args(s, TSL_STEP_SPLIT_NPARTS, 2, n, 1, &nparts);
}

tsl_status tsl_schedule_tile(tsl_schedule *s, const char *stage, const char *x, const char *y, int64_t x_factor,
                             int64_t y_factor) {
  const char *n[3] = {stage, x, y};
  const int64_t f[2] = {x_factor, y_factor};
  return apply_args(s, TSL_STEP_TILE, 3, n, 2, f);
}

tsl_status tsl_schedule_fuse(tsl_schedule *s, const char *stage, const char *outer, const char *inner) {
  const char *n[3] = {stage, outer, inner};
  return apply_args(s, TSL_STEP_FUSE, 3, n, 0, NULL);
}

tsl_status tsl_schedule_reorder(tsl_schedule *s, const char *stage, int n, const char *const *axes) {
  const char *names[17];
  if (n < 1 || n > 16 || !axes) return tsl_error(TSL_ERR_INVALID, "reorder: %d axes (need 1..16)", n);
  names[0] = stage;
  for (int i = 0; i < n; i++) names[i + 1] = axes[i];
  return apply_args(s, TSL_STEP_REORDER, n + 1, names, 0, NULL);
}

tsl_status tsl_schedule_vectorize(tsl_schedule *s, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return apply_args(s, TSL_STEP_VECTORIZE, 2, n, 0, NULL);
}

tsl_status tsl_schedule_unroll(tsl_schedule *s, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return apply_args(s, TSL_STEP_UNROLL, 2, n, 0, NULL);
}

tsl_status tsl_schedule_parallel(tsl_schedule *s, const char *stage, const char *axis) {
  const char *n[2] = {stage, axis};
  return apply_args(s, TSL_STEP_PARALLEL, 2, n, 0, NULL);
}

tsl_status tsl_schedule_compute_at(tsl_schedule *s, const char *stage, const char *target, const char *axis) {
  const char *n[3] = {stage, target, axis};
  return apply_args(s, TSL_STEP_COMPUTE_AT, 3, n, 0, NULL);
}

/* The stage a cache step (rfactor) on `base` will insert is named "<base>.local"
 * ("<base>.rf") made unique: known before the step runs, since nothing else names stages. */
static tsl_status apply_cache(tsl_schedule *s, const char *base, tsl_step_kind k, int n, const char *const *names,
                              const char **new_stage) {
  if (new_stage) *new_stage = NULL;
  const char *suffix = k == TSL_STEP_RFACTOR ? ".rf" : ".local";
  char *want = s && base ? tsl_sched_concat3(base, suffix, "") : NULL;
  char *name = want ? tsl_sched_unique_stage_name(s, want) : NULL;
  free(want);
  tsl_status rc = apply_args(s, k, n, names, 0, NULL);
  if (rc == TSL_OK && new_stage && name) {
    const tsl_stage *st = tsl_schedule_stage(s, name);
    *new_stage = st ? st->name : NULL;
  }
  free(name);
  return rc;
}

tsl_status tsl_schedule_cache_read(tsl_schedule *s, const char *tensor, const char *scope, int nreaders,
                                   const char *const *readers, const char **new_stage) {
  if (new_stage) *new_stage = NULL;
  const char *names[22];
  if (nreaders < 1 || nreaders > 20 || !readers)
    return tsl_error(TSL_ERR_INVALID, "cache_read: %d readers (need 1..20)", nreaders);
  names[0] = tensor;
  names[1] = scope;
  for (int i = 0; i < nreaders; i++) names[i + 2] = readers[i];
  return apply_cache(s, tensor, TSL_STEP_CACHE_READ, nreaders + 2, names, new_stage);
}

tsl_status tsl_schedule_cache_write(tsl_schedule *s, const char *stage, const char *scope, const char **new_stage) {
  const char *n[2] = {stage, scope};
  return apply_cache(s, stage, TSL_STEP_CACHE_WRITE, 2, n, new_stage);
}

tsl_status tsl_schedule_storage_align(tsl_schedule *s, const char *stage, const char *axis, int64_t factor,
                                      int64_t offset) {
  const char *n[2] = {stage, axis};
  const int64_t v[2] = {factor, offset};
  return apply_args(s, TSL_STEP_STORAGE_ALIGN, 2, n, 2, v);
}

tsl_status tsl_schedule_storage_order(tsl_schedule *s, const char *stage, int n, const char *const *axes) {
  const char *names[17];
  if (n < 1 || n > 16 || !axes) return tsl_error(TSL_ERR_INVALID, "storage_order: %d axes (need 1..16)", n);
  names[0] = stage;
  for (int i = 0; i < n; i++) names[i + 1] = axes[i];
  return apply_args(s, TSL_STEP_STORAGE_ORDER, n + 1, names, 0, NULL);
}

tsl_status tsl_schedule_prefetch(tsl_schedule *s, const char *stage, const char *tensor, const char *axis,
                                 int64_t offset) {
  const char *n[3] = {stage, tensor, axis};
  return apply_args(s, TSL_STEP_PREFETCH, 3, n, 1, &offset);
}

tsl_status tsl_schedule_rfactor(tsl_schedule *s, const char *stage, const char *axis, const char **new_stage) {
  const char *n[2] = {stage, axis};
  return apply_cache(s, stage, TSL_STEP_RFACTOR, 2, n, new_stage);
}

tsl_status tsl_schedule_vector_width(tsl_schedule *s, int bits) {
  const int64_t v = bits;
  return apply_args(s, TSL_STEP_VECTOR_WIDTH, 0, NULL, 1, &v);
}
