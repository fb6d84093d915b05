/* Instantiation: an analysed op definition + input shapes + parameter values -> a
 * tsl_te_program (docs/dsl.md sections 4-5; dsl/parser.h). Reads the tree only, so one
 * module may be instantiated from several threads (each into its own IR arena). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"

typedef struct inst {
  const tsl_dsl_op *op;
  dsl_env env;
  int64_t *sizes;
  bool *bound;
  dsl_cval *params;
  tsl_te_tensor **inputs, **stages;
  tsl_expr **vars; /* by dsl_var id */
  tsl_te_read_origin *origins; /* where each read was written (grown in the arena) */
  int norigins, cap_origins;
} inst;

/* Remembers where read `load` (of node e) was written, for tsl_te_check's errors. */
static void note_read_origin(inst *I, const tsl_expr *load, const dsl_node *e) {
  if (I->norigins == I->cap_origins) {
    int cap = I->cap_origins ? 2 * I->cap_origins : 16;
    tsl_te_read_origin *n = tsl_alloc(sizeof *n * (size_t)cap);
    if (I->norigins) memcpy(n, I->origins, sizeof *n * (size_t)I->norigins);
    I->origins = n;
    I->cap_origins = cap;
  }
  dsl_pos *pos = tsl_alloc(sizeof *pos * (size_t)(e->nargs + 1));
  for (int k = 0; k < e->nargs; k++) pos[k] = dsl_node_start(e->args[k]);
  I->origins[I->norigins++] = (tsl_te_read_origin){load, pos};
}

#define FAIL(pos, ...) dsl_fail(I->op->src, TSL_ERR_INVALID, (pos), __VA_ARGS__)

static const char *tstr(tsl_type t, char *buf) { return tsl_type_str(t, buf, 16); }

static const tsl_buffer *tensor_buf(const inst *I, dsl_ref_kind ref, int index) {
  return ref == DR_INPUT ? I->inputs[index]->buf : I->stages[index]->buf;
}
static const char *tensor_name(const inst *I, dsl_ref_kind ref, int index) {
  return ref == DR_INPUT ? I->op->inputs[index]->name : I->op->stages[index]->name;
}

/* A folded constant as an IR constant of type t (the type it adapted to). */
static tsl_status materialize(inst *I, const dsl_node *e, dsl_cval v, tsl_type t, tsl_expr **out) {
  char b[16];
  if (tsl_type_is_bool(t)) {
    *out = tsl_bool(v.i != 0);
  } else if (tsl_type_is_float(t)) {
    double x = v.cls == DC_CFLOAT ? v.f : (double)v.i;
    if (t.bits == 32 && isfinite(x) && !isfinite((float)x))
      return FAIL(dsl_node_start(e), "constant %g does not fit in f32", x);
    *out = tsl_float(t, x);
  } else {
    bool fits;
    if (tsl_type_is_uint(t)) fits = v.i >= 0 && (t.bits == 64 || v.i < ((int64_t)1 << t.bits));
    else fits = t.bits == 64 || (v.i >= -((int64_t)1 << (t.bits - 1)) && v.i < ((int64_t)1 << (t.bits - 1)));
    if (!fits) return FAIL(dsl_node_start(e), "constant %lld does not fit in %s", (long long)v.i, tstr(t, b));
    *out = tsl_int(t, v.i);
  }
  return TSL_OK;
}

static tsl_status build(inst *I, const dsl_node *e, tsl_expr **out);

/* Any node that yields an IR value: typed nodes are built, constants folded and
 * materialized in the type sema settled for them. */
static tsl_status value(inst *I, const dsl_node *e, tsl_expr **out) {
  if (e->cls == DC_TYPED || (e->dynamic && e->settled)) return build(I, e, out);
  if (!e->settled) {
    fprintf(stderr, "tessel dsl: internal: unsettled constant at %d:%d\n", e->pos.line, e->pos.col);
    abort();
  }
  dsl_cval v;
  tsl_status st = dsl_fold(&I->env, e, &v);
  if (st != TSL_OK) return st;
  return materialize(I, e, v, e->type, out);
}

static tsl_status build_cast(inst *I, const dsl_node *e, tsl_expr **out) {
  tsl_type t = e->cast_type;
  const dsl_node *a = e->args[0];
  tsl_status st;
  if (a->cls == DC_TYPED || a->dynamic) {
    tsl_expr *x;
    if ((st = value(I, a, &x)) != TSL_OK) return st;
    if (tsl_type_is_bool(t) && !tsl_type_is_bool(x->type))
      *out = tsl_ne(x, tsl_type_is_float(x->type) ? tsl_float(x->type, 0.0) : tsl_int(x->type, 0));
    else
      *out = tsl_cast(t, x);
    return TSL_OK;
  }
  dsl_cval v;
  if ((st = dsl_fold(&I->env, a, &v)) != TSL_OK) return st;
  double f = v.cls == DC_CFLOAT ? v.f : (double)v.i;
  if (tsl_type_is_bool(t)) {
    *out = tsl_bool(v.cls == DC_CFLOAT ? v.f != 0.0 : v.i != 0);
  } else if (tsl_type_is_float(t)) {
    *out = tsl_float(t, f);
  } else if (v.cls == DC_CFLOAT) {
    /* truncation toward zero; the value must be representable (C leaves it undefined) */
    double tr = trunc(f);
    double lo = tsl_type_is_uint(t) ? 0.0 : -ldexp(1.0, t.bits - 1);
    double hi = tsl_type_is_uint(t) ? ldexp(1.0, t.bits) : ldexp(1.0, t.bits - 1);
    char b[16];
    if (!(tr >= lo && tr < hi)) return FAIL(e->pos, "constant %g is out of range for a cast to %s", f, tstr(t, b));
    *out = tsl_int(t, tsl_type_is_uint(t) && tr >= 0x1p63 ? (int64_t)(uint64_t)tr : (int64_t)tr);
  } else {
    *out = tsl_int(t, v.i); /* integer casts wrap */
  }
  return TSL_OK;
}

static tsl_intrinsic intrinsic_of(dsl_fn fn) {
  switch (fn) {
  case FN_ABS: return TSL_CALL_ABS;
  case FN_EXP: return TSL_CALL_EXP;
  case FN_LOG: return TSL_CALL_LOG;
  case FN_SQRT: return TSL_CALL_SQRT;
  case FN_TANH: return TSL_CALL_TANH;
  case FN_ERF: return TSL_CALL_ERF;
  case FN_FLOOR: return TSL_CALL_FLOOR;
  case FN_CEIL: return TSL_CALL_CEIL;
  case FN_ROUND: return TSL_CALL_ROUND;
  case FN_POW: return TSL_CALL_POW;
  case FN_FMA: return TSL_CALL_FMA;
  case FN_ISNAN: return TSL_CALL_ISNAN;
  case FN_POPCOUNT: return TSL_CALL_POPCOUNT;
  case FN_SHL: return TSL_CALL_SHL;
  case FN_SHR: return TSL_CALL_SHR;
  case FN_BIT_AND: return TSL_CALL_BIT_AND;
  case FN_BIT_OR: return TSL_CALL_BIT_OR;
  case FN_BIT_XOR: return TSL_CALL_BIT_XOR;
  case FN_BIT_NOT: return TSL_CALL_BIT_NOT;
  default: return TSL_CALL_COUNT_;
  }
}

static tsl_status build_call(inst *I, const dsl_node *e, tsl_expr **out) {
  tsl_expr *a[3] = {NULL, NULL, NULL};
  tsl_status st;
  if (e->fn == FN_MAX || e->fn == FN_MIN) {
    tsl_expr *acc;
    if ((st = value(I, e->args[0], &acc)) != TSL_OK) return st;
    for (int k = 1; k < e->nargs; k++) {
      tsl_expr *x;
      if ((st = value(I, e->args[k], &x)) != TSL_OK) return st;
      acc = e->fn == FN_MAX ? tsl_max(acc, x) : tsl_min(acc, x);
    }
    *out = acc;
    return TSL_OK;
  }
  for (int k = 0; k < e->nargs && k < 3; k++)
    if ((st = value(I, e->args[k], &a[k])) != TSL_OK) return st;
  if (e->fn == FN_SELECT) {
    *out = tsl_select(a[0], a[1], a[2]);
    return TSL_OK;
  }
  if ((e->fn == FN_SHL || e->fn == FN_SHR) && tsl_expr_is_const_int(a[1], NULL) &&
      (a[1]->int_value < 0 || a[1]->int_value >= a[0]->type.bits))
    return FAIL(e->args[1]->pos, "shift by %lld is outside [0, %d)", (long long)a[1]->int_value, a[0]->type.bits);
  *out = tsl_call(intrinsic_of(e->fn), e->type, e->nargs, a);
  return TSL_OK;
}

static tsl_status build_binary(inst *I, const dsl_node *e, tsl_expr **out) {
  tsl_expr *a, *b;
  tsl_status st;
  if ((st = value(I, e->args[0], &a)) != TSL_OK || (st = value(I, e->args[1], &b)) != TSL_OK) return st;
  int64_t c;
  if ((e->op == TK_SLASH || e->op == TK_PERCENT) && tsl_expr_is_const_int(b, &c) && c == 0)
    return FAIL(e->pos, "division by zero");
  tsl_intrinsic fn = TSL_CALL_COUNT_;
  switch ((dsl_tok_kind)e->op) {
  case TK_PLUS: *out = tsl_add(a, b); return TSL_OK;
  case TK_MINUS: *out = tsl_sub(a, b); return TSL_OK;
  case TK_STAR: *out = tsl_mul(a, b); return TSL_OK;
  case TK_SLASH: *out = tsl_div(a, b); return TSL_OK;
  case TK_PERCENT: *out = tsl_mod(a, b); return TSL_OK;
  case TK_LT: *out = tsl_lt(a, b); return TSL_OK;
  case TK_LE: *out = tsl_le(a, b); return TSL_OK;
  case TK_GT: *out = tsl_gt(a, b); return TSL_OK;
  case TK_GE: *out = tsl_ge(a, b); return TSL_OK;
  case TK_EQ: *out = tsl_eq(a, b); return TSL_OK;
  case TK_NE: *out = tsl_ne(a, b); return TSL_OK;
  case TK_ANDAND: *out = tsl_and(a, b); return TSL_OK;
  case TK_OROR: *out = tsl_or(a, b); return TSL_OK;
  case TK_AMP: fn = TSL_CALL_BIT_AND; break;
  case TK_PIPE: fn = TSL_CALL_BIT_OR; break;
  case TK_CARET: fn = TSL_CALL_BIT_XOR; break;
  case TK_SHL: fn = TSL_CALL_SHL; break;
  case TK_SHR: fn = TSL_CALL_SHR; break;
  default: return FAIL(e->pos, "internal: unknown operator");
  }
  if ((fn == TSL_CALL_SHL || fn == TSL_CALL_SHR) && tsl_expr_is_const_int(b, &c) && (c < 0 || c >= a->type.bits))
    return FAIL(e->args[1]->pos, "shift by %lld is outside [0, %d)", (long long)c, a->type.bits);
  tsl_expr *args[2] = {a, b};
  *out = tsl_call(fn, a->type, 2, args);
  return TSL_OK;
}

static tsl_status build(inst *I, const dsl_node *e, tsl_expr **out) {
  tsl_status st;
  switch (e->kind) {
  case DN_NAME:
    *out = I->vars[e->var->id];
    return TSL_OK;
  case DN_READ: {
    const tsl_buffer *buf = tensor_buf(I, e->ref, e->ref_index);
    tsl_expr **idx = tsl_alloc(sizeof(tsl_expr *) * (size_t)e->nargs);
    for (int k = 0; k < e->nargs; k++) {
      const dsl_node *x = e->args[k];
      if (x->cls != DC_TYPED && !x->dynamic) {
        dsl_cval v;
        if ((st = dsl_fold(&I->env, x, &v)) != TSL_OK) return st;
        if (v.i < 0 || v.i >= buf->shape[k])
          return FAIL(dsl_node_start(x), "index %lld is out of range for dimension %d of %s (extent %lld)", (long long)v.i, k,
                      tensor_name(I, e->ref, e->ref_index), (long long)buf->shape[k]);
        idx[k] = tsl_i64(v.i);
      } else if ((st = value(I, x, &idx[k])) != TSL_OK) {
        return st;
      }
    }
    tsl_te_tensor *t = e->ref == DR_INPUT ? I->inputs[e->ref_index] : I->stages[e->ref_index];
    *out = tsl_te_read(t, e->nargs, idx);
    if (*out) note_read_origin(I, *out, e);
    return *out ? TSL_OK : TSL_ERR_INVALID;
  }
  case DN_UNARY: {
    tsl_expr *x;
    if ((st = value(I, e->args[0], &x)) != TSL_OK) return st;
    tsl_type t = x->type;
    switch (e->op) {
    case TK_NOT: *out = tsl_not(x); break;
    case TK_TILDE: *out = tsl_call(TSL_CALL_BIT_NOT, t, 1, &x); break;
    case TK_PLUS: *out = x; break;
    default:
      /* x * -1 keeps IEEE negation (-0.0 for 0.0), 0 - x would not */
      *out = tsl_type_is_float(t) ? tsl_mul(x, tsl_float(t, -1.0)) : tsl_sub(tsl_int(t, 0), x);
      break;
    }
    return TSL_OK;
  }
  case DN_BINARY: return build_binary(I, e, out);
  case DN_COND: {
    tsl_expr *c, *a, *b;
    if ((st = value(I, e->args[0], &c)) != TSL_OK || (st = value(I, e->args[1], &a)) != TSL_OK ||
        (st = value(I, e->args[2], &b)) != TSL_OK)
      return st;
    *out = tsl_select(c, a, b);
    return TSL_OK;
  }
  case DN_CALL: return build_call(I, e, out);
  case DN_CAST: return build_cast(I, e, out);
  default: break;
  }
  return FAIL(e->pos, "internal: cannot build this expression");
}

/* ---- shapes, parameters, stages ---- */

static tsl_status bind_params(inst *I, int nparams, const tsl_dsl_param_value *params) {
  const tsl_dsl_op *op = I->op;
  bool *given = tsl_alloc(sizeof(bool) * (size_t)(op->nscalars + 1));
  for (int k = 0; k < nparams; k++) {
    const tsl_dsl_param_value *v = &params[k];
    if (!v->name) return tsl_error(TSL_ERR_INVALID, "op %s: parameter value %d has no name", op->name, k);
    int j = 0;
    while (j < op->nscalars && strcmp(op->scalars[j]->name, v->name) != 0) j++;
    if (j == op->nscalars) return tsl_error(TSL_ERR_INVALID, "op %s: no parameter named '%s'", op->name, v->name);
    if (given[j]) return tsl_error(TSL_ERR_INVALID, "op %s: parameter '%s' given twice", op->name, v->name);
    given[j] = true;
    if (op->scalars[j]->kind == TSL_DSL_PARAM_INT) {
      if (v->kind != TSL_DSL_PARAM_INT)
        return tsl_error(TSL_ERR_INVALID, "op %s: parameter '%s' is an int, got a float value", op->name, v->name);
      I->params[j] = (dsl_cval){DC_CINT, v->i, 0.0};
    } else {
      I->params[j] = (dsl_cval){DC_CFLOAT, 0, v->kind == TSL_DSL_PARAM_INT ? (double)v->i : v->f};
    }
  }
  for (int j = 0; j < op->nscalars; j++) {
    const dsl_param *p = op->scalars[j];
    if (given[j]) continue;
    if (!p->has_default) return FAIL(p->pos, "missing value for parameter '%s' (it has no default)", p->name);
    I->params[j] = p->kind == TSL_DSL_PARAM_INT ? (dsl_cval){DC_CINT, p->default_i, 0.0} : (dsl_cval){DC_CFLOAT, 0, p->default_f};
  }
  return TSL_OK;
}

static tsl_status bind_shapes(inst *I, int ninputs, const int64_t *const *shapes, const int *ndims) {
  const tsl_dsl_op *op = I->op;
  if (ninputs != op->ninputs)
    return tsl_error(TSL_ERR_INVALID, "op %s: %d input shapes given, the op has %d inputs", op->name, ninputs, op->ninputs);
  if (ninputs && (!shapes || !ndims)) return tsl_error(TSL_ERR_INVALID, "op %s: missing shapes", op->name);
  for (int i = 0; i < ninputs; i++) {
    const dsl_param *p = op->inputs[i];
    if (ndims[i] != p->ndim)
      return FAIL(p->pos, "input %s is %s (%d dimensions), got a shape of rank %d", p->name, p->type_text, p->ndim, ndims[i]);
    if (!shapes[i]) return tsl_error(TSL_ERR_INVALID, "op %s: shape of input %s is NULL", op->name, p->name);
    for (int d = 0; d < p->ndim; d++)
      if (shapes[i][d] < 1)
        return FAIL(p->pos, "input %s: extent %lld of dimension %d must be >= 1", p->name, (long long)shapes[i][d], d);
  }
  for (int i = 0; i < ninputs; i++) {
    const dsl_param *p = op->inputs[i];
    for (int d = 0; d < p->ndim; d++) {
      const dsl_node *e = p->dims[d];
      int64_t got = shapes[i][d];
      if (e->kind == DN_NAME && e->ref == DR_SIZE) {
        const dsl_size *z = &op->sizes[e->ref_index];
        if (!I->bound[e->ref_index]) {
          I->sizes[e->ref_index] = got;
          I->bound[e->ref_index] = true;
        } else if (I->sizes[e->ref_index] != got) {
          return FAIL(e->pos, "size %s is %lld here (%s, dimension %d) but %lld at %d:%d (%s, dimension %d)", z->name,
                      (long long)got, p->name, d, (long long)I->sizes[e->ref_index], z->pos.line, z->pos.col,
                      op->inputs[z->input]->name, z->dim);
        }
        continue;
      }
      dsl_cval v;
      tsl_status st = dsl_fold(&I->env, e, &v);
      if (st != TSL_OK) return st;
      if (v.i != got)
        return FAIL(dsl_node_start(e), "dimension %d of input %s must be %lld (%s), got %lld", d, p->name, (long long)v.i,
                    p->type_text, (long long)got);
    }
  }
  return TSL_OK;
}

static tsl_status var_extent(inst *I, const dsl_stage *s, const dsl_var *v, int64_t *lo, int64_t *extent) {
  const char *what = v->is_reduce ? "reduction variable" : "axis";
  tsl_status st;
  *lo = 0;
  if (v->hi) {
    dsl_cval h, l = {DC_CINT, 0, 0.0};
    if ((st = dsl_fold(&I->env, v->hi, &h)) != TSL_OK) return st;
    if (v->lo && (st = dsl_fold(&I->env, v->lo, &l)) != TSL_OK) return st;
    if (__builtin_sub_overflow(h.i, l.i, extent) || *extent < 1)
      return FAIL(v->bound_pos, "the extent of %s %s of stage %s is %lld (must be >= 1)", what, v->name, s->name,
                  (long long)(h.i - l.i));
    *lo = l.i;
    return TSL_OK;
  }
  const dsl_use *first = &v->uses[0];
  *extent = tensor_buf(I, first->ref, first->index)->shape[first->dim];
  for (int k = 1; k < v->nuses; k++) {
    const dsl_use *u = &v->uses[k];
    int64_t x = tensor_buf(I, u->ref, u->index)->shape[u->dim];
    if (x != *extent)
      return FAIL(u->pos, "%s %s of stage %s: extent %lld from %s (dimension %d) differs from %lld from %s at %d:%d "
                  "(state it with 'where %s < ...')", what, v->name, s->name, (long long)x,
                  tensor_name(I, u->ref, u->index), u->dim, (long long)*extent,
                  tensor_name(I, first->ref, first->index), first->pos.line, first->pos.col, v->name);
  }
  return TSL_OK;
}

static tsl_status build_stage(inst *I, int index) {
  const dsl_stage *s = I->op->stages[index];
  const dsl_node *body = s->body;
  tsl_status st;
  int64_t *shape = tsl_alloc(sizeof(int64_t) * (size_t)s->naxes);
  const char **names = tsl_alloc(sizeof(char *) * (size_t)s->naxes);
  for (int k = 0; k < s->naxes; k++) {
    int64_t lo;
    if ((st = var_extent(I, s, s->axes[k], &lo, &shape[k])) != TSL_OK) return st;
    names[k] = s->axes[k]->name;
  }
  tsl_iter_var *axes = tsl_te_axes(s->naxes, shape, names);
  if (!axes) return TSL_ERR_INVALID;
  for (int k = 0; k < s->naxes; k++) I->vars[s->axes[k]->id] = axes[k].var;
  tsl_expr *value_expr;
  if (body->kind == DN_REDUCE) {
    tsl_iter_var *raxes = tsl_alloc(sizeof(tsl_iter_var) * (size_t)body->nvars);
    for (int k = 0; k < body->nvars; k++) {
      int64_t lo, extent;
      if ((st = var_extent(I, s, body->vars[k], &lo, &extent)) != TSL_OK) return st;
      raxes[k] = tsl_te_reduce_axis(body->vars[k]->name, lo, extent);
      I->vars[body->vars[k]->id] = raxes[k].var;
    }
    tsl_expr *src, *cond = NULL;
    if ((st = value(I, body->args[0], &src)) != TSL_OK) return st;
    if (body->args[1] && (st = value(I, body->args[1], &cond)) != TSL_OK) return st;
    switch ((tsl_combiner)body->op) {
    case TSL_REDUCE_SUM: value_expr = tsl_te_sum(src, body->nvars, raxes, cond); break;
    case TSL_REDUCE_MAX: value_expr = tsl_te_max(src, body->nvars, raxes, cond); break;
    default: value_expr = tsl_te_min(src, body->nvars, raxes, cond); break;
    }
    if (!value_expr) return TSL_ERR_INVALID;
  } else if ((st = value(I, body, &value_expr)) != TSL_OK) {
    return st;
  }
  I->stages[index] = tsl_te_compute(s->name, s->naxes, axes, value_expr, s->tag);
  return I->stages[index] ? TSL_OK : TSL_ERR_INVALID;
}

tsl_status tsl_dsl_instantiate(const tsl_dsl_op *def, int ninputs, const int64_t *const *shapes, const int *ndims,
                               int nparams, const tsl_dsl_param_value *params, tsl_te_program **out) {
  if (out) *out = NULL;
  if (!def || !out) return tsl_error(TSL_ERR_INVALID, "tsl_dsl_instantiate: NULL definition or output");
  if (nparams < 0 || (nparams > 0 && !params)) return tsl_error(TSL_ERR_INVALID, "op %s: bad parameter list", def->name);
  inst I_ = {0}, *I = &I_;
  I->op = def;
  I->sizes = tsl_alloc(sizeof(int64_t) * (size_t)(def->nsizes + 1));
  I->bound = tsl_alloc(sizeof(bool) * (size_t)(def->nsizes + 1));
  I->params = tsl_alloc(sizeof(dsl_cval) * (size_t)(def->nscalars + 1));
  I->inputs = tsl_alloc(sizeof(tsl_te_tensor *) * (size_t)(def->ninputs + 1));
  I->stages = tsl_alloc(sizeof(tsl_te_tensor *) * (size_t)(def->nstages + 1));
  I->vars = tsl_alloc(sizeof(tsl_expr *) * (size_t)(def->nvars + 1));
  I->env = (dsl_env){def, I->sizes, I->params};
  tsl_status st;
  if ((st = bind_params(I, nparams, params)) != TSL_OK) return st;
  if ((st = bind_shapes(I, ninputs, shapes, ndims)) != TSL_OK) return st;
  for (int k = 0; k < def->nasserts; k++) {
    const dsl_assert *a = &def->asserts[k];
    dsl_cval v;
    if ((st = dsl_fold(&I->env, a->cond, &v)) != TSL_OK) return st;
    if (!v.i) return FAIL(a->pos, "assertion failed: %s%s%s%s", a->message ? a->message : a->text, a->message ? " (" : "",
                          a->message ? a->text : "", a->message ? ")" : "");
  }
  for (int i = 0; i < def->ninputs; i++) {
    const dsl_param *p = def->inputs[i];
    I->inputs[i] = tsl_te_placeholder(p->name, p->dtype, p->ndim, shapes[i]);
    if (!I->inputs[i]) return TSL_ERR_INVALID;
  }
  for (int k = 0; k < def->nstages; k++)
    if ((st = build_stage(I, k)) != TSL_OK) return st;
  int noutputs = 0;
  tsl_te_tensor **outputs = tsl_alloc(sizeof(tsl_te_tensor *) * (size_t)def->nstages);
  for (int k = 0; k < def->nstages; k++)
    if (def->stages[k]->is_output) outputs[noutputs++] = I->stages[k];
  if (noutputs == 0) outputs[noutputs++] = I->stages[def->nstages - 1];
  *out = tsl_te_program_new(def->name, def->ninputs, I->inputs, noutputs, outputs);
  if (!*out) return TSL_ERR_INVALID;
  /* the parameter values the stages were built with, for the schedule templates */
  tsl_dsl_param_value *pv = tsl_alloc(sizeof(tsl_dsl_param_value) * (size_t)(def->nscalars + 1));
  for (int j = 0; j < def->nscalars; j++) {
    const dsl_param *sp = def->scalars[j];
    pv[j] = sp->kind == TSL_DSL_PARAM_INT ? tsl_dsl_int_param(tsl_strdup(sp->name), I->params[j].i)
                                          : tsl_dsl_float_param(tsl_strdup(sp->name), I->params[j].f);
  }
  (*out)->nparams = def->nscalars;
  (*out)->params = pv;
  /* a copy in the arena: the program may outlive the op's module (the errors quote it) */
  dsl_src *src = tsl_alloc(sizeof *src);
  src->text = tsl_memdup(def->src->text, def->src->len + 1);
  src->len = def->src->len;
  src->filename = def->src->filename ? tsl_strdup(def->src->filename) : NULL;
  (*out)->src = src;
  (*out)->nread_origins = I->norigins;
  (*out)->read_origins = I->origins;
  return TSL_OK;
}
