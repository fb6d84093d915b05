/* Tensor expressions: placeholders, compute stages, reductions and programs (dsl/te.h).
 * The bounds check is in dsl/te_check.c, the printer in dsl/te_print.c. */
#include <string.h>

#include "dsl/te.h"

static char *type_name(tsl_type t, char *buf) { return (char *)tsl_type_str(t, buf, 16); }

tsl_te_tensor *tsl_te_placeholder(const char *name, tsl_type dtype, int ndim, const int64_t *shape) {
  char b[16];
  if (!name) name = "placeholder";
  if (ndim < 1 || !shape) {
    tsl_error(TSL_ERR_INVALID, "placeholder %s: needs at least one dimension (ndim %d)", name, ndim);
    return NULL;
  }
  if (dtype.lanes != 1 || dtype.code == TSL_TYPE_HANDLE) {
    tsl_error(TSL_ERR_INVALID, "placeholder %s: element type %s must be a scalar number or bool", name, type_name(dtype, b));
    return NULL;
  }
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 1) {
      tsl_error(TSL_ERR_INVALID, "placeholder %s: extent %lld of dimension %d must be >= 1", name, (long long)shape[i], i);
      return NULL;
    }
  tsl_te_op *op = tsl_alloc(sizeof *op);
  tsl_te_tensor *t = tsl_alloc(sizeof *t);
  op->kind = TSL_TE_PLACEHOLDER;
  op->name = tsl_strdup(name);
  op->tag = "placeholder";
  op->output = t;
  t->op = op;
  t->buf = tsl_buffer_new(name, dtype, ndim, shape, TSL_BUF_TENSOR);
  t->buf->origin = t;
  return t;
}

tsl_iter_var *tsl_te_axes(int ndim, const int64_t *shape, const char *const *names) {
  if (ndim < 1 || !shape) {
    tsl_error(TSL_ERR_INVALID, "tsl_te_axes: needs at least one axis (ndim %d)", ndim);
    return NULL;
  }
  tsl_iter_var *axes = tsl_alloc(sizeof(tsl_iter_var) * (size_t)ndim);
  for (int i = 0; i < ndim; i++) {
    char name[32];
    snprintf(name, sizeof name, "i%d", i);
    axes[i].var = tsl_var(names && names[i] ? names[i] : name, TSL_I64);
    axes[i].min = 0;
    axes[i].extent = shape[i];
    axes[i].is_reduce = false;
  }
  return axes;
}

tsl_iter_var tsl_te_reduce_axis(const char *name, int64_t min, int64_t extent) {
  tsl_iter_var v = {tsl_var(name ? name : "k", TSL_I64), min, extent, true};
  return v;
}

/* ---- body validation ---- */

typedef struct body_check {
  const char *stage;
  const tsl_expr **vars; /* variables bound here: axes, reduction axes, lets */
  int nvars, capvars;
  tsl_te_tensor **inputs;
  int ninputs, capinputs;
} body_check;

static void bind_var(body_check *c, const tsl_expr *v) {
  if (c->nvars == c->capvars) {
    int cap = c->capvars ? 2 * c->capvars : 16;
    const tsl_expr **nv = tsl_alloc(sizeof(tsl_expr *) * (size_t)cap);
    if (c->nvars) memcpy(nv, c->vars, sizeof(tsl_expr *) * (size_t)c->nvars);
    c->vars = nv;
    c->capvars = cap;
  }
  c->vars[c->nvars++] = v;
}

static void add_input(body_check *c, tsl_te_tensor *t) {
  for (int i = 0; i < c->ninputs; i++)
    if (c->inputs[i] == t) return;
  if (c->ninputs == c->capinputs) {
    int cap = c->capinputs ? 2 * c->capinputs : 8;
    tsl_te_tensor **ni = tsl_alloc(sizeof(tsl_te_tensor *) * (size_t)cap);
    if (c->ninputs) memcpy(ni, c->inputs, sizeof(tsl_te_tensor *) * (size_t)c->ninputs);
    c->inputs = ni;
    c->capinputs = cap;
  }
  c->inputs[c->ninputs++] = t;
}

static tsl_status check_iter_vars(const char *where, int n, const tsl_iter_var *axes, bool reduce) {
  for (int i = 0; i < n; i++) {
    const tsl_iter_var *a = &axes[i];
    if (!a->var || a->var->kind != TSL_E_VAR || !tsl_type_is_intlike(a->var->type) || a->var->type.lanes != 1)
      return tsl_error(TSL_ERR_INVALID, "%s: axis %d is not a scalar integer variable", where, i);
    if (a->is_reduce != reduce)
      return tsl_error(TSL_ERR_INVALID, "%s: axis %s is %s a reduction axis", where, a->var->var.name, reduce ? "not" : "");
    if (a->extent < 1)
      return tsl_error(TSL_ERR_INVALID, "%s: axis %s has extent %lld (must be >= 1)", where, a->var->var.name, (long long)a->extent);
    if (!reduce && a->min != 0)
      return tsl_error(TSL_ERR_INVALID, "%s: axis %s starts at %lld (spatial axes start at 0)", where, a->var->var.name, (long long)a->min);
    for (int j = 0; j < i; j++)
      if (axes[j].var == a->var) return tsl_error(TSL_ERR_INVALID, "%s: axis %s appears twice", where, a->var->var.name);
  }
  return TSL_OK;
}

static tsl_status walk_body(body_check *c, const tsl_expr *e, bool top) {
  if (!e) return tsl_error(TSL_ERR_INVALID, "%s: missing expression in the body", c->stage);
  if (e->type.lanes != 1)
    return tsl_error(TSL_ERR_INVALID, "%s: the body has a vector of %d lanes (a TE is scalar; vectorize in the schedule)",
                     c->stage, e->type.lanes);
  tsl_status st;
  switch (e->kind) {
  case TSL_E_INT:
  case TSL_E_FLOAT: return TSL_OK;
  case TSL_E_VAR:
    for (int i = 0; i < c->nvars; i++)
      if (c->vars[i] == e) return TSL_OK;
    return tsl_error(TSL_ERR_INVALID, "%s: the body uses variable %s, which is not an axis of the stage", c->stage, e->var.name);
  case TSL_E_REDUCE:
    if (!top) return tsl_error(TSL_ERR_INVALID, "%s: a reduction must be the whole body of a stage (not inside an expression)", c->stage);
    if ((st = check_iter_vars(c->stage, e->reduce.naxes, e->reduce.axes, true)) != TSL_OK) return st;
    for (int i = 0; i < e->reduce.naxes; i++) bind_var(c, e->reduce.axes[i].var);
    if (e->reduce.condition && (st = walk_body(c, e->reduce.condition, false)) != TSL_OK) return st;
    return walk_body(c, e->reduce.source, false);
  case TSL_E_LOAD: {
    const tsl_buffer *b = e->load.buf;
    if (b->kind != TSL_BUF_TENSOR || !b->origin)
      return tsl_error(TSL_ERR_INVALID, "%s: reads buffer %s, which is not a TE tensor", c->stage, b->name);
    if (e->load.predicate) return tsl_error(TSL_ERR_INVALID, "%s: predicated read of %s in a TE", c->stage, b->name);
    if (e->load.nindex != b->ndim)
      return tsl_error(TSL_ERR_INVALID, "%s: read of %s has %d indices for %d dimensions", c->stage, b->name, e->load.nindex, b->ndim);
    add_input(c, (tsl_te_tensor *)b->origin);
    for (int i = 0; i < e->load.nindex; i++)
      if ((st = walk_body(c, e->load.index[i], false)) != TSL_OK) return st;
    return TSL_OK;
  }
  case TSL_E_LET:
    if ((st = walk_body(c, e->let.value, false)) != TSL_OK) return st;
    bind_var(c, e->let.var);
    return walk_body(c, e->let.body, false);
  case TSL_E_SELECT:
    if ((st = walk_body(c, e->select.cond, false)) != TSL_OK) return st;
    if ((st = walk_body(c, e->select.t, false)) != TSL_OK) return st;
    return walk_body(c, e->select.f, false);
  case TSL_E_NOT:
  case TSL_E_CAST: return walk_body(c, e->un.a, false);
  case TSL_E_CALL:
    if (e->call.op == TSL_CALL_PREFETCH || e->call.op == TSL_CALL_REDUCE_ADD || e->call.op == TSL_CALL_REDUCE_MAX ||
        e->call.op == TSL_CALL_REDUCE_MIN)
      return tsl_error(TSL_ERR_INVALID, "%s: intrinsic %s does not belong in a TE", c->stage, tsl_intrinsic_name(e->call.op));
    for (int i = 0; i < e->call.nargs; i++)
      if ((st = walk_body(c, e->call.args[i], false)) != TSL_OK) return st;
    return TSL_OK;
  case TSL_E_BROADCAST:
  case TSL_E_RAMP: return tsl_error(TSL_ERR_INVALID, "%s: vector node in a TE", c->stage);
  default:
    if (e->kind >= TSL_E_ADD && e->kind <= TSL_E_OR) {
      if ((st = walk_body(c, e->bin.a, false)) != TSL_OK) return st;
      return walk_body(c, e->bin.b, false);
    }
    return tsl_error(TSL_ERR_INVALID, "%s: unexpected %s node in a TE", c->stage, tsl_expr_kind_name(e->kind));
  }
}

tsl_te_tensor *tsl_te_compute(const char *name, int naxis, const tsl_iter_var *axes, tsl_expr *body, const char *tag) {
  if (!name) name = "compute";
  if (naxis < 1 || !axes) {
    tsl_error(TSL_ERR_INVALID, "%s: a stage needs at least one axis (naxis %d)", name, naxis);
    return NULL;
  }
  if (!body) {
    tsl_error(TSL_ERR_INVALID, "%s: missing body", name);
    return NULL;
  }
  if (check_iter_vars(name, naxis, axes, false) != TSL_OK) return NULL;
  body_check c = {name, NULL, 0, 0, NULL, 0, 0};
  for (int i = 0; i < naxis; i++) bind_var(&c, axes[i].var);
  if (walk_body(&c, body, true) != TSL_OK) return NULL;
  tsl_type dtype = body->type;
  if (dtype.code == TSL_TYPE_HANDLE) {
    tsl_error(TSL_ERR_INVALID, "%s: the body is a handle, not a value", name);
    return NULL;
  }
  int64_t *shape = tsl_alloc(sizeof(int64_t) * (size_t)naxis);
  for (int i = 0; i < naxis; i++) shape[i] = axes[i].extent;
  tsl_te_op *op = tsl_alloc(sizeof *op);
  tsl_te_tensor *t = tsl_alloc(sizeof *t);
  bool reduce = body->kind == TSL_E_REDUCE;
  op->kind = TSL_TE_COMPUTE;
  op->name = tsl_strdup(name);
  op->tag = tsl_strdup(tag ? tag : reduce ? "reduce" : "injective");
  op->output = t;
  op->naxis = naxis;
  op->axis = tsl_memdup(axes, sizeof(tsl_iter_var) * (size_t)naxis);
  op->nreduce = reduce ? body->reduce.naxes : 0;
  op->reduce_axis = reduce ? body->reduce.axes : NULL;
  op->body = body;
  op->ninputs = c.ninputs;
  op->inputs = c.inputs;
  t->op = op;
  t->buf = tsl_buffer_new(name, dtype, naxis, shape, TSL_BUF_TENSOR);
  t->buf->origin = t;
  return t;
}

tsl_expr *tsl_te_read(tsl_te_tensor *t, int n, tsl_expr *const *index) {
  if (!t || !t->buf) {
    tsl_error(TSL_ERR_INVALID, "tsl_te_read: NULL tensor");
    return NULL;
  }
  if (n != t->buf->ndim || (n > 0 && !index)) {
    tsl_error(TSL_ERR_INVALID, "read of %s: %d indices for %d dimensions", t->buf->name, n, t->buf->ndim);
    return NULL;
  }
  tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)n);
  for (int i = 0; i < n; i++) {
    tsl_expr *x = index[i];
    if (!x || !tsl_type_is_intlike(x->type) || x->type.lanes != 1) {
      tsl_error(TSL_ERR_INVALID, "read of %s: index %d is not a scalar integer", t->buf->name, i);
      return NULL;
    }
    idx[i] = tsl_cast(TSL_I64, x); /* index arithmetic is i64 (ir/ir.h) */
  }
  return tsl_load(t->buf, n, idx, NULL);
}

static tsl_expr *reduction(tsl_combiner comb, const char *what, tsl_expr *source, int naxes, const tsl_iter_var *axes,
                           tsl_expr *condition) {
  if (!source || source->type.lanes != 1 || !(tsl_type_is_intlike(source->type) || tsl_type_is_float(source->type))) {
    tsl_error(TSL_ERR_INVALID, "%s: the source must be a scalar number", what);
    return NULL;
  }
  if (naxes < 1 || !axes) {
    tsl_error(TSL_ERR_INVALID, "%s: needs at least one reduction axis", what);
    return NULL;
  }
  if (check_iter_vars(what, naxes, axes, true) != TSL_OK) return NULL;
  if (condition && (!tsl_type_is_bool(condition->type) || condition->type.lanes != 1)) {
    tsl_error(TSL_ERR_INVALID, "%s: the condition must be a scalar bool", what);
    return NULL;
  }
  return tsl_reduce(comb, source, naxes, axes, condition);
}

tsl_expr *tsl_te_sum(tsl_expr *source, int naxes, const tsl_iter_var *axes, tsl_expr *condition) {
  return reduction(TSL_REDUCE_SUM, "sum", source, naxes, axes, condition);
}
tsl_expr *tsl_te_max(tsl_expr *source, int naxes, const tsl_iter_var *axes, tsl_expr *condition) {
  return reduction(TSL_REDUCE_MAX, "max", source, naxes, axes, condition);
}
tsl_expr *tsl_te_min(tsl_expr *source, int naxes, const tsl_iter_var *axes, tsl_expr *condition) {
  return reduction(TSL_REDUCE_MIN, "min", source, naxes, axes, condition);
}

tsl_te_tensor *tsl_te_tensor_of(const tsl_buffer *b) {
  return b && b->kind == TSL_BUF_TENSOR ? (tsl_te_tensor *)b->origin : NULL;
}

tsl_te_program *tsl_te_program_new(const char *name, int ninputs, tsl_te_tensor *const *inputs, int noutputs,
                                   tsl_te_tensor *const *outputs) {
  if (!name) name = "program";
  if (ninputs < 0 || noutputs < 1 || (ninputs > 0 && !inputs) || !outputs) {
    tsl_error(TSL_ERR_INVALID, "program %s: needs inputs (%d) and at least one output (%d)", name, ninputs, noutputs);
    return NULL;
  }
  for (int i = 0; i < ninputs; i++)
    if (!inputs[i] || inputs[i]->op->kind != TSL_TE_PLACEHOLDER) {
      tsl_error(TSL_ERR_INVALID, "program %s: input %d is not a placeholder", name, i);
      return NULL;
    }
  for (int i = 0; i < noutputs; i++)
    if (!outputs[i] || outputs[i]->op->kind != TSL_TE_COMPUTE) {
      tsl_error(TSL_ERR_INVALID, "program %s: output %d is not a compute stage", name, i);
      return NULL;
    }
  tsl_te_program *p = tsl_alloc(sizeof *p);
  p->name = tsl_strdup(name);
  p->ninputs = ninputs;
  p->inputs = ninputs ? tsl_memdup(inputs, sizeof(tsl_te_tensor *) * (size_t)ninputs) : NULL;
  p->noutputs = noutputs;
  p->outputs = tsl_memdup(outputs, sizeof(tsl_te_tensor *) * (size_t)noutputs);
  return p;
}

typedef struct stage_list {
  tsl_te_op **ops;
  int n, cap;
  tsl_te_op **seen; /* every op visited, compute or not */
  int nseen, capseen;
} stage_list;

static bool push_op(tsl_te_op ***arr, int *n, int *cap, tsl_te_op *op) {
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 16;
    tsl_te_op **na = tsl_alloc(sizeof(tsl_te_op *) * (size_t)c);
    if (*n) memcpy(na, *arr, sizeof(tsl_te_op *) * (size_t)*n);
    *arr = na;
    *cap = c;
  }
  (*arr)[(*n)++] = op;
  return true;
}

/* Depth-first, producers first: a post-order of the read graph (a DAG: a stage can only
 * read tensors that existed when it was made). */
static void visit(stage_list *l, tsl_te_op *op) {
  for (int i = 0; i < l->nseen; i++)
    if (l->seen[i] == op) return;
  push_op(&l->seen, &l->nseen, &l->capseen, op);
  if (op->kind != TSL_TE_COMPUTE) return;
  for (int i = 0; i < op->ninputs; i++) visit(l, op->inputs[i]->op);
  push_op(&l->ops, &l->n, &l->cap, op);
}

tsl_te_op **tsl_te_program_stages(const tsl_te_program *p, int *n) {
  stage_list l = {0};
  for (int i = 0; p && i < p->noutputs; i++) visit(&l, p->outputs[i]->op);
  if (n) *n = l.n;
  return l.ops;
}
