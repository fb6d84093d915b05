/* A naive interpreter of TE programs for the dsl tests: every stage evaluated point by
 * point over its whole output domain, reductions as plain loops, f32 results rounded to
 * float after each operation. Written for the tests from the semantics in ir/ir.h and
 * dsl/te.h, independently of lowering and codegen, so that built-in operators can be
 * compared with the naive references of tests/ref. */
#include "te_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct binding {
  const tsl_expr *var;
  int64_t value;
} binding;

typedef struct ev {
  const tsl_te_program *p;
  int nbufs;
  const tsl_te_tensor **tensors;
  double **data;
  binding vars[64];
  int nvars;
  bool failed;
} ev;

static double *tensor_data(ev *E, const tsl_te_tensor *t) {
  for (int i = 0; i < E->nbufs; i++)
    if (E->tensors[i] == t) return E->data[i];
  E->failed = true;
  return NULL;
}

static int64_t var_value(ev *E, const tsl_expr *v) {
  for (int i = E->nvars - 1; i >= 0; i--)
    if (E->vars[i].var == v) return E->vars[i].value;
  E->failed = true;
  return 0;
}

static double round_to(tsl_type t, double x) {
  if (tsl_type_is_float(t)) return t.bits == 32 ? (double)(float)x : x;
  if (tsl_type_is_bool(t)) return x != 0;
  return x;
}

static int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static double eval(ev *E, const tsl_expr *e);

static double eval_reduce(ev *E, const tsl_expr *e) {
  int n = e->reduce.naxes, base = E->nvars;
  int64_t total = 1;
  for (int d = 0; d < n; d++) total *= e->reduce.axes[d].extent;
  tsl_combiner c = e->reduce.combiner;
  double acc = c == TSL_REDUCE_SUM ? 0.0 : c == TSL_REDUCE_MAX ? -INFINITY : INFINITY;
  for (int64_t flat = 0; flat < total && !E->failed; flat++) {
    int64_t rest = flat;
    for (int d = n - 1; d >= 0; d--) {
      const tsl_iter_var *a = &e->reduce.axes[d];
      E->vars[base + d] = (binding){a->var, a->min + rest % a->extent};
      rest /= a->extent;
    }
    E->nvars = base + n;
    if (e->reduce.condition && eval(E, e->reduce.condition) == 0) continue;
    double x = eval(E, e->reduce.source);
    if (c == TSL_REDUCE_SUM) acc = round_to(e->type, acc + x);
    else if (isnan(x) || isnan(acc)) acc = NAN;
    else acc = c == TSL_REDUCE_MAX ? fmax(acc, x) : fmin(acc, x);
  }
  E->nvars = base;
  return acc;
}

static double eval(ev *E, const tsl_expr *e) {
  tsl_type t = e->type;
  switch (e->kind) {
  case TSL_E_INT: return (double)e->int_value;
  case TSL_E_FLOAT: return e->float_value;
  case TSL_E_VAR: return (double)var_value(E, e);
  case TSL_E_ADD: return round_to(t, eval(E, e->bin.a) + eval(E, e->bin.b));
  case TSL_E_SUB: return round_to(t, eval(E, e->bin.a) - eval(E, e->bin.b));
  case TSL_E_MUL: return round_to(t, eval(E, e->bin.a) * eval(E, e->bin.b));
  case TSL_E_DIV: {
    double a = eval(E, e->bin.a), b = eval(E, e->bin.b);
    if (tsl_type_is_float(t)) return round_to(t, a / b);
    if (b == 0) {
      E->failed = true;
      return 0;
    }
    return (double)floordiv((int64_t)a, (int64_t)b);
  }
  case TSL_E_MOD: {
    int64_t a = (int64_t)eval(E, e->bin.a), b = (int64_t)eval(E, e->bin.b);
    if (b == 0) {
      E->failed = true;
      return 0;
    }
    return (double)(a - floordiv(a, b) * b);
  }
  case TSL_E_MIN:
  case TSL_E_MAX: {
    double a = eval(E, e->bin.a), b = eval(E, e->bin.b);
    if (isnan(a) || isnan(b)) return NAN;
    return e->kind == TSL_E_MIN ? (a < b ? a : b) : (a > b ? a : b);
  }
  case TSL_E_EQ: return eval(E, e->bin.a) == eval(E, e->bin.b);
  case TSL_E_NE: return eval(E, e->bin.a) != eval(E, e->bin.b);
  case TSL_E_LT: return eval(E, e->bin.a) < eval(E, e->bin.b);
  case TSL_E_LE: return eval(E, e->bin.a) <= eval(E, e->bin.b);
  case TSL_E_GT: return eval(E, e->bin.a) > eval(E, e->bin.b);
  case TSL_E_GE: return eval(E, e->bin.a) >= eval(E, e->bin.b);
  case TSL_E_AND:
  case TSL_E_OR: { /* no short circuit (ir/ir.h): both operands are evaluated */
    bool a = eval(E, e->bin.a) != 0, b = eval(E, e->bin.b) != 0;
    return e->kind == TSL_E_AND ? a && b : a || b;
  }
  case TSL_E_NOT: return eval(E, e->un.a) == 0;
  /* only the taken branch: a guarded read outside its tensor is never made */
  case TSL_E_SELECT: return eval(E, e->select.cond) != 0 ? eval(E, e->select.t) : eval(E, e->select.f);
  case TSL_E_CAST: {
    double x = eval(E, e->un.a);
    if (tsl_type_is_intlike(t) && tsl_type_is_float(e->un.a->type)) x = trunc(x);
    return round_to(t, x);
  }
  case TSL_E_LOAD: {
    const tsl_buffer *b = e->load.buf;
    const double *d = tensor_data(E, (const tsl_te_tensor *)b->origin);
    int64_t off = 0;
    for (int i = 0; i < b->ndim; i++) {
      int64_t x = (int64_t)eval(E, e->load.index[i]);
      if (x < 0 || x >= b->shape[i]) {
        E->failed = true;
        return 0;
      }
      off = off * b->shape[i] + x;
    }
    return d ? d[off] : 0;
  }
  case TSL_E_CALL:
    switch (e->call.op) {
    case TSL_CALL_EXP: return round_to(t, exp(eval(E, e->call.args[0])));
    case TSL_CALL_SQRT: return round_to(t, sqrt(eval(E, e->call.args[0])));
    case TSL_CALL_ERF: return round_to(t, erf(eval(E, e->call.args[0])));
    case TSL_CALL_ABS: return fabs(eval(E, e->call.args[0]));
    case TSL_CALL_FMA:
      return round_to(t, fma(eval(E, e->call.args[0]), eval(E, e->call.args[1]), eval(E, e->call.args[2])));
    default: E->failed = true; return 0;
    }
  case TSL_E_REDUCE: return eval_reduce(E, e);
  default: E->failed = true; return 0;
  }
}

bool te_eval_program(const tsl_te_program *p, const double *const *inputs, double **outputs) {
  int n;
  tsl_te_op **stages = tsl_te_program_stages(p, &n);
  ev E = {0};
  E.p = p;
  E.tensors = calloc((size_t)(p->ninputs + n), sizeof(tsl_te_tensor *));
  E.data = calloc((size_t)(p->ninputs + n), sizeof(double *));
  for (int i = 0; i < p->ninputs; i++) {
    E.tensors[E.nbufs] = p->inputs[i];
    E.data[E.nbufs++] = (double *)inputs[i];
  }
  for (int s = 0; s < n && !E.failed; s++) {
    const tsl_te_op *op = stages[s];
    int64_t numel = tsl_buffer_numel(op->output->buf);
    double *out = malloc(sizeof(double) * (size_t)numel);
    E.tensors[E.nbufs] = op->output;
    E.data[E.nbufs++] = out;
    int64_t idx[8] = {0};
    for (int64_t flat = 0; flat < numel && !E.failed; flat++) {
      int64_t rest = flat;
      for (int d = op->naxis - 1; d >= 0; d--) {
        idx[d] = rest % op->axis[d].extent;
        rest /= op->axis[d].extent;
      }
      E.nvars = 0;
      for (int d = 0; d < op->naxis; d++) E.vars[E.nvars++] = (binding){op->axis[d].var, idx[d]};
      out[flat] = eval(&E, op->body);
    }
  }
  bool ok = !E.failed;
  for (int k = 0; k < p->noutputs; k++) {
    const double *d = tensor_data(&E, p->outputs[k]);
    int64_t numel = tsl_buffer_numel(p->outputs[k]->buf);
    if (d && ok) memcpy(outputs[k], d, sizeof(double) * (size_t)numel);
  }
  for (int i = p->ninputs; i < E.nbufs; i++) free(E.data[i]);
  free(E.tensors);
  free(E.data);
  return ok && !E.failed;
}
