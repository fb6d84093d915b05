/* Exact evaluation of the DSL's untyped constant expressions (sizes, parameters and
 * literals; docs/dsl.md section 6): 64-bit integers with floor division and modulo,
 * doubles, booleans. */
#include <math.h>

#include "dsl/ast.h"

#define FAIL(pos, ...) dsl_fail(env->op->src, TSL_ERR_INVALID, (pos), __VA_ARGS__)

static double as_f(dsl_cval v) { return v.cls == DC_CFLOAT ? v.f : (double)v.i; }

static dsl_cval cint(int64_t i) { return (dsl_cval){DC_CINT, i, 0.0}; }
static dsl_cval cfloat(double f) { return (dsl_cval){DC_CFLOAT, 0, f}; }
static dsl_cval cbool(bool b) { return (dsl_cval){DC_CBOOL, b, 0.0}; }

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
static int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* NaN-propagating max/min, as the IR's (ir/ir.h "Floats"). */
static double fmax_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double fmin_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

static tsl_status int_binary(const dsl_env *env, const dsl_node *e, int op, int64_t a, int64_t b, dsl_cval *out) {
  int64_t r;
  switch (op) {
  case TK_PLUS:
    if (__builtin_add_overflow(a, b, &r)) goto overflow;
    break;
  case TK_MINUS:
    if (__builtin_sub_overflow(a, b, &r)) goto overflow;
    break;
  case TK_STAR:
    if (__builtin_mul_overflow(a, b, &r)) goto overflow;
    break;
  case TK_SLASH:
  case TK_PERCENT:
    if (b == 0) return FAIL(e->pos, "division by zero in a constant expression");
    if (a == INT64_MIN && b == -1) goto overflow;
    r = op == TK_SLASH ? floor_div(a, b) : floor_mod(a, b);
    break;
  case TK_AMP: r = a & b; break;
  case TK_PIPE: r = a | b; break;
  case TK_CARET: r = a ^ b; break;
  case TK_SHL:
  case TK_SHR:
    if (b < 0 || b > 63) return FAIL(e->pos, "shift by %lld is outside [0, 64)", (long long)b);
    r = op == TK_SHL ? (int64_t)((uint64_t)a << b) : (a < 0 ? ~(~a >> b) : a >> b);
    break;
  case TK_LT: *out = cbool(a < b); return TSL_OK;
  case TK_LE: *out = cbool(a <= b); return TSL_OK;
  case TK_GT: *out = cbool(a > b); return TSL_OK;
  case TK_GE: *out = cbool(a >= b); return TSL_OK;
  case TK_EQ: *out = cbool(a == b); return TSL_OK;
  case TK_NE: *out = cbool(a != b); return TSL_OK;
  default: return FAIL(e->pos, "operator '%s' is not defined on integer constants", dsl_tok_spelling((dsl_tok_kind)op));
  }
  *out = cint(r);
  return TSL_OK;
overflow:
  return FAIL(e->pos, "64-bit overflow in a constant expression");
}

static tsl_status binary(const dsl_env *env, const dsl_node *e, int op, dsl_cval a, dsl_cval b, dsl_cval *out) {
  if (a.cls == DC_CBOOL || b.cls == DC_CBOOL) {
    bool x = a.i != 0, y = b.i != 0;
    switch (op) {
    case TK_ANDAND: case TK_AMP: *out = cbool(x && y); return TSL_OK;
    case TK_OROR: case TK_PIPE: *out = cbool(x || y); return TSL_OK;
    case TK_CARET: case TK_NE: *out = cbool(x != y); return TSL_OK;
    case TK_EQ: *out = cbool(x == y); return TSL_OK;
    default: return FAIL(e->pos, "operator '%s' is not defined on bool constants", dsl_tok_spelling((dsl_tok_kind)op));
    }
  }
  if (a.cls == DC_CINT && b.cls == DC_CINT) return int_binary(env, e, op, a.i, b.i, out);
  double x = as_f(a), y = as_f(b);
  switch (op) {
  case TK_PLUS: *out = cfloat(x + y); return TSL_OK;
  case TK_MINUS: *out = cfloat(x - y); return TSL_OK;
  case TK_STAR: *out = cfloat(x * y); return TSL_OK;
  case TK_SLASH: *out = cfloat(x / y); return TSL_OK;
  case TK_LT: *out = cbool(x < y); return TSL_OK;
  case TK_LE: *out = cbool(x <= y); return TSL_OK;
  case TK_GT: *out = cbool(x > y); return TSL_OK;
  case TK_GE: *out = cbool(x >= y); return TSL_OK;
  case TK_EQ: *out = cbool(x == y); return TSL_OK;
  case TK_NE: *out = cbool(x != y); return TSL_OK;
  default: return FAIL(e->pos, "operator '%s' is not defined on float constants", dsl_tok_spelling((dsl_tok_kind)op));
  }
}

/* Converts v to the class of node e (an integer branch of a float ?: and the like). */
static dsl_cval to_class(dsl_cval v, dsl_class cls) {
  if (cls == DC_CFLOAT && v.cls == DC_CINT) return cfloat((double)v.i);
  return v;
}

static tsl_status call(const dsl_env *env, const dsl_node *e, dsl_cval *out) {
  dsl_cval a[3] = {{0}};
  int n = e->nargs;
  if (e->fn == FN_SELECT) {
    dsl_cval c;
    tsl_status st = dsl_fold(env, e->args[0], &c);
    if (st != TSL_OK) return st;
    if ((st = dsl_fold(env, e->args[c.i ? 1 : 2], out)) != TSL_OK) return st;
    *out = to_class(*out, e->cls);
    return TSL_OK;
  }
  if (e->fn == FN_MAX || e->fn == FN_MIN) {
    dsl_cval acc;
    tsl_status st = dsl_fold(env, e->args[0], &acc);
    if (st != TSL_OK) return st;
    acc = to_class(acc, e->cls);
    for (int k = 1; k < n; k++) {
      dsl_cval v;
      if ((st = dsl_fold(env, e->args[k], &v)) != TSL_OK) return st;
      v = to_class(v, e->cls);
      if (e->cls == DC_CINT) acc.i = (e->fn == FN_MAX) == (v.i > acc.i) ? v.i : acc.i;
      else acc.f = e->fn == FN_MAX ? fmax_nan(acc.f, v.f) : fmin_nan(acc.f, v.f);
    }
    *out = acc;
    return TSL_OK;
  }
  for (int k = 0; k < n && k < 3; k++) {
    tsl_status st = dsl_fold(env, e->args[k], &a[k]);
    if (st != TSL_OK) return st;
  }
  switch (e->fn) {
  case FN_ABS:
    if (a[0].cls == DC_CINT) {
      if (a[0].i == INT64_MIN) return FAIL(e->pos, "64-bit overflow in a constant expression");
      *out = cint(a[0].i < 0 ? -a[0].i : a[0].i);
    } else {
      *out = cfloat(fabs(a[0].f));
    }
    return TSL_OK;
  case FN_EXP: *out = cfloat(exp(as_f(a[0]))); return TSL_OK;
  case FN_LOG: *out = cfloat(log(as_f(a[0]))); return TSL_OK;
  case FN_SQRT: *out = cfloat(sqrt(as_f(a[0]))); return TSL_OK;
  case FN_TANH: *out = cfloat(tanh(as_f(a[0]))); return TSL_OK;
  case FN_ERF: *out = cfloat(erf(as_f(a[0]))); return TSL_OK;
  case FN_FLOOR: *out = cfloat(floor(as_f(a[0]))); return TSL_OK;
  case FN_CEIL: *out = cfloat(ceil(as_f(a[0]))); return TSL_OK;
  case FN_ROUND: *out = cfloat(nearbyint(as_f(a[0]))); return TSL_OK; /* half to even */
  case FN_POW: *out = cfloat(pow(as_f(a[0]), as_f(a[1]))); return TSL_OK;
  case FN_FMA: *out = cfloat(fma(as_f(a[0]), as_f(a[1]), as_f(a[2]))); return TSL_OK;
  case FN_ISNAN: *out = cbool(isnan(as_f(a[0]))); return TSL_OK;
  case FN_POPCOUNT: *out = cint(__builtin_popcountll((unsigned long long)a[0].i)); return TSL_OK;
  case FN_BIT_NOT: *out = cint(~a[0].i); return TSL_OK;
  case FN_SHL: return binary(env, e, TK_SHL, a[0], a[1], out);
  case FN_SHR: return binary(env, e, TK_SHR, a[0], a[1], out);
  case FN_BIT_AND: return binary(env, e, TK_AMP, a[0], a[1], out);
  case FN_BIT_OR: return binary(env, e, TK_PIPE, a[0], a[1], out);
  case FN_BIT_XOR: return binary(env, e, TK_CARET, a[0], a[1], out);
  default: return FAIL(e->pos, "%s() cannot be evaluated on constants", e->name);
  }
}

tsl_status dsl_fold(const dsl_env *env, const dsl_node *e, dsl_cval *out) {
  tsl_status st;
  switch (e->kind) {
  case DN_INT: *out = cint(e->ival); return TSL_OK;
  case DN_FLOAT: *out = cfloat(e->fval); return TSL_OK;
  case DN_BOOL: *out = cbool(e->ival != 0); return TSL_OK;
  case DN_NAME:
    if (e->ref == DR_SIZE) *out = cint(env->sizes[e->ref_index]);
    else if (e->ref == DR_PARAM) *out = env->params[e->ref_index];
    else break;
    return TSL_OK;
  case DN_UNARY: {
    dsl_cval a;
    if ((st = dsl_fold(env, e->args[0], &a)) != TSL_OK) return st;
    switch (e->op) {
    case TK_NOT: *out = cbool(!a.i); return TSL_OK;
    case TK_TILDE: *out = cint(~a.i); return TSL_OK;
    case TK_PLUS: *out = a; return TSL_OK;
    default:
      if (a.cls == DC_CFLOAT) *out = cfloat(-a.f);
      else if (a.i == INT64_MIN) return FAIL(e->pos, "64-bit overflow in a constant expression");
      else *out = cint(-a.i);
      return TSL_OK;
    }
  }
  case DN_BINARY: {
    dsl_cval a, b;
    if ((st = dsl_fold(env, e->args[0], &a)) != TSL_OK) return st;
    if ((st = dsl_fold(env, e->args[1], &b)) != TSL_OK) return st;
    return binary(env, e, e->op, a, b, out);
  }
  case DN_COND: {
    dsl_cval c;
    if ((st = dsl_fold(env, e->args[0], &c)) != TSL_OK) return st;
    if ((st = dsl_fold(env, e->args[c.i ? 1 : 2], out)) != TSL_OK) return st;
    *out = to_class(*out, e->cls);
    return TSL_OK;
  }
  case DN_CALL: return call(env, e, out);
  default: break;
  }
  return FAIL(e->pos, "internal: expression is not a constant");
}
