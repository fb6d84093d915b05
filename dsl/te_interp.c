/* A direct interpreter of tensor expressions: see te_interp.h. */
#include "dsl/te_interp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A scalar value: floats in f, everything else (bool, int, uint) in i. */
typedef struct value {
  double f;
  int64_t i;
} value;

typedef struct binding {
  const tsl_expr *var;
  int64_t v;
} binding;

enum { MAX_BINDINGS = 64 };

typedef struct interp {
  const tsl_te_program *p;
  int nstages;
  tsl_te_op **stages;
  value **data;        /* per stage: its computed elements */
  value **inputs;      /* per input: its elements, row-major */
  binding env[MAX_BINDINGS];
  int nenv;
  tsl_status st;       /* first error */
  const char *stage;   /* stage being evaluated, for messages */
} interp;

static int64_t wrap_int(tsl_type t, int64_t v) {
  if (t.code == TSL_TYPE_BOOL) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (1ull << t.bits) - 1, u = (uint64_t)v & mask;
  if (t.code == TSL_TYPE_INT && (u >> (t.bits - 1))) u |= ~mask;
  return (int64_t)u;
}

/* float -> integer: truncate toward zero, saturate to the type's range, NaN -> 0 (ir.h). */
static int64_t saturate_to_int(tsl_type t, double v) {
  if (isnan(v)) return 0;
  v = trunc(v);
  if (tsl_type_is_uint(t)) {
    double hi = ldexp(1.0, t.bits); /* exclusive */
    if (v <= 0.0) return 0;
    if (v >= hi) return t.bits == 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << t.bits) - 1);
    return (int64_t)(uint64_t)v;
  }
  double lo = -ldexp(1.0, t.bits - 1), hi = ldexp(1.0, t.bits - 1); /* [lo, hi) */
  if (v < lo) return t.bits == 64 ? INT64_MIN : -((int64_t)1 << (t.bits - 1));
  if (v >= hi) return t.bits == 64 ? INT64_MAX : ((int64_t)1 << (t.bits - 1)) - 1;
  return (int64_t)v;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

static bool fail(interp *in, tsl_status st, const char *fmt, const char *what) {
  if (in->st == TSL_OK) in->st = tsl_error(st, fmt, in->stage, what);
  return false;
}

static const value *tensor_data(interp *in, const tsl_buffer *b) {
  const tsl_te_tensor *t = tsl_te_tensor_of(b);
  for (int i = 0; i < in->p->ninputs; i++)
    if (in->p->inputs[i] == t) return in->inputs[i];
  for (int s = 0; s < in->nstages; s++)
    if (in->stages[s]->output == t) return in->data[s];
  return NULL;
}

static bool eval(interp *in, const tsl_expr *e, value *out);

static bool eval_load(interp *in, const tsl_expr *e, value *out) {
  const tsl_buffer *b = e->load.buf;
  if (e->load.predicate) {
    value pv;
    if (!eval(in, e->load.predicate, &pv)) return false;
    if (!pv.i) {
      out->f = 0.0;
      out->i = 0;
      return true;
    }
  }
  int64_t off = 0;
  for (int d = 0; d < e->load.nindex; d++) {
    value iv;
    if (!eval(in, e->load.index[d], &iv)) return false;
    if (iv.i < 0 || iv.i >= b->shape[d]) return fail(in, TSL_ERR_INVALID, "te_interp: stage %s reads %s out of bounds", b->name);
    off = off * b->shape[d] + iv.i;
  }
  const value *data = tensor_data(in, b);
  if (!data) return fail(in, TSL_ERR_INVALID, "te_interp: stage %s reads %s, which is not in the program", b->name);
  *out = data[off];
  return true;
}

static bool eval_reduce_rec(interp *in, const tsl_expr *e, int axis, value *acc) {
  if (axis == e->reduce.naxes) {
    if (e->reduce.condition) {
      value c;
      if (!eval(in, e->reduce.condition, &c)) return false;
      if (!c.i) return true;
    }
    value v;
    if (!eval(in, e->reduce.source, &v)) return false;
    bool fl = tsl_type_is_float(e->type);
    switch (e->reduce.combiner) {
    case TSL_REDUCE_SUM:
      if (fl) acc->f += v.f;
      else acc->i = wrap_int(e->type, (int64_t)((uint64_t)acc->i + (uint64_t)v.i));
      break;
    case TSL_REDUCE_MAX:
      if (fl) acc->f = (isnan(acc->f) || isnan(v.f)) ? NAN : fmax(acc->f, v.f);
      else acc->i = v.i > acc->i ? v.i : acc->i;
      break;
    case TSL_REDUCE_MIN:
      if (fl) acc->f = (isnan(acc->f) || isnan(v.f)) ? NAN : fmin(acc->f, v.f);
      else acc->i = v.i < acc->i ? v.i : acc->i;
      break;
    }
    return true;
  }
  if (in->nenv >= MAX_BINDINGS) return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s nests too deep%s", "");
  const tsl_iter_var *iv = &e->reduce.axes[axis];
  int slot = in->nenv++;
  in->env[slot].var = iv->var;
  bool ok = true;
  for (int64_t k = iv->min; ok && k < iv->min + iv->extent; k++) {
    in->env[slot].v = k;
    ok = eval_reduce_rec(in, e, axis + 1, acc);
  }
  in->nenv--;
  return ok;
}

/* Shift amounts are clamped to [0, bits - 1] of the shifted type (ir.h). */
static int shift_amount(value v, tsl_type amount_type, tsl_type value_type) {
  int64_t k = v.i;
  if (tsl_type_is_uint(amount_type) && k < 0) k = INT64_MAX; /* a huge unsigned amount */
  if (k < 0) k = 0;
  if (k > value_type.bits - 1) k = value_type.bits - 1;
  return (int)k;
}

static bool eval_call(interp *in, const tsl_expr *e, value *out) {
  value a[3] = {{0, 0}, {0, 0}, {0, 0}};
  int n = e->call.nargs < 3 ? e->call.nargs : 3;
  if (e->call.op == TSL_CALL_PREFETCH)
    return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s calls %s", "prefetch");
  for (int i = 0; i < n; i++)
    if (!eval(in, e->call.args[i], &a[i])) return false;
  tsl_type at = n ? e->call.args[0]->type : e->type;
  bool fl = tsl_type_is_float(at);
  switch (e->call.op) {
  case TSL_CALL_FMA: out->f = a[0].f * a[1].f + a[2].f; break;
  case TSL_CALL_POPCOUNT: {
    uint64_t u = (uint64_t)a[0].i;
    if (at.bits < 64) u &= (1ull << at.bits) - 1;
    out->i = __builtin_popcountll(u);
    break;
  }
  case TSL_CALL_SHL: out->i = wrap_int(e->type, (int64_t)((uint64_t)a[0].i << shift_amount(a[1], e->call.args[1]->type, at))); break;
  case TSL_CALL_SHR:
    if (tsl_type_is_uint(at)) {
      uint64_t u = (uint64_t)a[0].i;
      if (at.bits < 64) u &= (1ull << at.bits) - 1;
      out->i = (int64_t)(u >> shift_amount(a[1], e->call.args[1]->type, at));
    } else {
      out->i = a[0].i >> shift_amount(a[1], e->call.args[1]->type, at);
    }
    break;
  case TSL_CALL_BIT_AND: out->i = a[0].i & a[1].i; break;
  case TSL_CALL_BIT_OR: out->i = a[0].i | a[1].i; break;
  case TSL_CALL_BIT_XOR: out->i = a[0].i ^ a[1].i; break;
  case TSL_CALL_BIT_NOT: out->i = wrap_int(e->type, ~a[0].i); break;
  case TSL_CALL_ABS:
    if (fl) out->f = fabs(a[0].f);
    else out->i = wrap_int(e->type, a[0].i < 0 ? (int64_t)(0 - (uint64_t)a[0].i) : a[0].i);
    break;
  case TSL_CALL_EXP: out->f = exp(a[0].f); break;
  case TSL_CALL_LOG: out->f = log(a[0].f); break;
  case TSL_CALL_SQRT: out->f = sqrt(a[0].f); break;
  case TSL_CALL_TANH: out->f = tanh(a[0].f); break;
  case TSL_CALL_ERF: out->f = erf(a[0].f); break;
  case TSL_CALL_FLOOR: out->f = floor(a[0].f); break;
  case TSL_CALL_CEIL: out->f = ceil(a[0].f); break;
  case TSL_CALL_ROUND: out->f = nearbyint(a[0].f); break;
  case TSL_CALL_POW: out->f = pow(a[0].f, a[1].f); break;
  case TSL_CALL_ISNAN: out->i = isnan(a[0].f); break;
  case TSL_CALL_LIKELY: *out = a[0]; break;
  default:
    return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s calls %s", tsl_intrinsic_name(e->call.op));
  }
  if (!tsl_type_is_float(e->type)) out->i = wrap_int(e->type, out->i);
  return true;
}

static bool eval_binary(interp *in, const tsl_expr *e, value *out) {
  value a, b;
  if (!eval(in, e->bin.a, &a) || !eval(in, e->bin.b, &b)) return false;
  tsl_type t = e->bin.a->type;
  bool fl = tsl_type_is_float(t), un = tsl_type_is_uint(t);
  uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
  if (un && t.bits < 64) {
    ua &= (1ull << t.bits) - 1;
    ub &= (1ull << t.bits) - 1;
  }
  switch (e->kind) {
  case TSL_E_ADD: if (fl) out->f = a.f + b.f; else out->i = (int64_t)(ua + ub); break;
  case TSL_E_SUB: if (fl) out->f = a.f - b.f; else out->i = (int64_t)(ua - ub); break;
  case TSL_E_MUL: if (fl) out->f = a.f * b.f; else out->i = (int64_t)(ua * ub); break;
  case TSL_E_DIV:
  case TSL_E_MOD:
    if (fl) {
      out->f = a.f / b.f;
      break;
    }
    if (b.i == 0) out->i = 0; /* ir.h: integer division or modulo by zero gives 0 */
    else if (un) out->i = (int64_t)(e->kind == TSL_E_DIV ? ua / ub : ua % ub);
    else out->i = e->kind == TSL_E_DIV ? floor_div(a.i, b.i) : floor_mod(a.i, b.i);
    break;
  case TSL_E_MIN:
    if (fl) out->f = (isnan(a.f) || isnan(b.f)) ? NAN : fmin(a.f, b.f);
    else out->i = un ? (int64_t)(ua < ub ? ua : ub) : (a.i < b.i ? a.i : b.i);
    break;
  case TSL_E_MAX:
    if (fl) out->f = (isnan(a.f) || isnan(b.f)) ? NAN : fmax(a.f, b.f);
    else out->i = un ? (int64_t)(ua > ub ? ua : ub) : (a.i > b.i ? a.i : b.i);
    break;
  case TSL_E_EQ: out->i = fl ? a.f == b.f : ua == ub; break;
  case TSL_E_NE: out->i = fl ? a.f != b.f : ua != ub; break;
  case TSL_E_LT: out->i = fl ? a.f < b.f : un ? ua < ub : a.i < b.i; break;
  case TSL_E_LE: out->i = fl ? a.f <= b.f : un ? ua <= ub : a.i <= b.i; break;
  case TSL_E_GT: out->i = fl ? a.f > b.f : un ? ua > ub : a.i > b.i; break;
  case TSL_E_GE: out->i = fl ? a.f >= b.f : un ? ua >= ub : a.i >= b.i; break;
  case TSL_E_AND: out->i = a.i && b.i; break;
  case TSL_E_OR: out->i = a.i || b.i; break;
  default: return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s has node %s", tsl_expr_kind_name(e->kind));
  }
  if (!tsl_type_is_float(e->type)) out->i = wrap_int(e->type, out->i);
  return true;
}

static bool eval_cast(interp *in, const tsl_expr *e, value *out) {
  value a;
  if (!eval(in, e->un.a, &a)) return false;
  tsl_type from = e->un.a->type, to = e->type;
  if (tsl_type_is_float(to)) {
    double v = tsl_type_is_float(from) ? a.f
               : tsl_type_is_uint(from) ? (double)(uint64_t)a.i : (double)a.i;
    out->f = to.bits == 32 ? (double)(float)v : v;
  } else if (tsl_type_is_bool(to)) {
    out->i = tsl_type_is_float(from) ? a.f != 0.0 : a.i != 0;
  } else if (tsl_type_is_float(from)) {
    out->i = saturate_to_int(to, a.f);
  } else {
    out->i = wrap_int(to, a.i);
  }
  return true;
}

static bool eval(interp *in, const tsl_expr *e, value *out) {
  out->f = 0.0;
  out->i = 0;
  if (e->type.lanes != 1) return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s has a vector %s", "expression");
  switch (e->kind) {
  case TSL_E_INT: out->i = e->int_value; return true;
  case TSL_E_FLOAT: out->f = e->float_value; return true;
  case TSL_E_VAR:
    for (int i = in->nenv - 1; i >= 0; i--)
      if (in->env[i].var == e) {
        out->i = in->env[i].v;
        return true;
      }
    return fail(in, TSL_ERR_INVALID, "te_interp: stage %s uses the unbound variable %s", e->var.name);
  case TSL_E_NOT: {
    value a;
    if (!eval(in, e->un.a, &a)) return false;
    out->i = !a.i;
    return true;
  }
  case TSL_E_SELECT: {
    value c;
    if (!eval(in, e->select.cond, &c)) return false;
    /* Only the chosen branch: the TE reads out of bounds in the other one (padding). */
    return eval(in, c.i ? e->select.t : e->select.f, out);
  }
  case TSL_E_CAST: return eval_cast(in, e, out);
  case TSL_E_LOAD: return eval_load(in, e, out);
  case TSL_E_CALL: return eval_call(in, e, out);
  case TSL_E_LET: {
    value v;
    if (!eval(in, e->let.value, &v)) return false;
    if (in->nenv >= MAX_BINDINGS) return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s nests too deep%s", "");
    in->env[in->nenv].var = e->let.var;
    in->env[in->nenv++].v = v.i;
    bool ok = eval(in, e->let.body, out);
    in->nenv--;
    return ok;
  }
  case TSL_E_REDUCE: {
    tsl_expr *id = tsl_reduce_identity(e->reduce.combiner, e->type);
    value acc = {0, 0};
    if (id->kind == TSL_E_FLOAT) acc.f = id->float_value;
    else acc.i = id->int_value;
    if (!eval_reduce_rec(in, e, 0, &acc)) return false;
    if (tsl_type_is_float(e->type) && e->type.bits == 32) acc.f = (double)(float)acc.f;
    *out = acc;
    return true;
  }
  default:
    if (e->kind >= TSL_E_ADD && e->kind <= TSL_E_OR) return eval_binary(in, e, out);
    return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s has node %s", tsl_expr_kind_name(e->kind));
  }
}

/* Evaluates one stage over its whole output domain (row-major). */
static bool eval_stage(interp *in, int s) {
  const tsl_te_op *op = in->stages[s];
  const tsl_buffer *b = op->output->buf;
  int64_t n = tsl_buffer_numel(b);
  in->stage = op->name;
  int base = in->nenv;
  if (base + op->naxis > MAX_BINDINGS) return fail(in, TSL_ERR_UNSUPPORTED, "te_interp: stage %s has too many %s", "axes");
  for (int64_t flat = 0; flat < n; flat++) {
    int64_t rem = flat;
    for (int d = op->naxis - 1; d >= 0; d--) {
      in->env[base + d].var = op->axis[d].var;
      in->env[base + d].v = op->axis[d].min + rem % op->axis[d].extent;
      rem /= op->axis[d].extent;
    }
    in->nenv = base + op->naxis;
    value v;
    bool ok = eval(in, op->body, &v);
    in->nenv = base;
    if (!ok) return false;
    if (tsl_type_is_float(b->dtype)) v.f = b->dtype.bits == 32 ? (double)(float)v.f : v.f;
    else v.i = wrap_int(b->dtype, v.i);
    in->data[s][flat] = v;
  }
  return true;
}

tsl_dtype tsl_te_dtype(tsl_type t) {
  tsl_dtype_code c = t.code == TSL_TYPE_BOOL ? TSL_DT_BOOL
                     : t.code == TSL_TYPE_INT ? TSL_DT_INT
                     : t.code == TSL_TYPE_UINT ? TSL_DT_UINT : TSL_DT_FLOAT;
  return (tsl_dtype){(uint8_t)c, (uint8_t)(t.code == TSL_TYPE_BOOL ? 8 : t.bits)};
}

static bool same_type(const tsl_tensor *t, const tsl_buffer *b) {
  if (!t || !tsl_dtype_equal(t->dtype, tsl_te_dtype(b->dtype)) || t->ndim != b->ndim) return false;
  for (int d = 0; d < b->ndim; d++)
    if (t->shape[d] != b->shape[d]) return false;
  return true;
}

/* Element i (row-major) of t as a value: integers exactly. */
static value read_element(const tsl_tensor *t, int64_t i) {
  value v = {0.0, 0};
  int64_t off = 0, rem = i;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (rem % t->shape[d]) * t->strides[d];
    rem /= t->shape[d];
  }
  const char *p = (const char *)t->data + off * (int64_t)tsl_dtype_bytes(t->dtype);
  if (t->dtype.code == TSL_DT_FLOAT) {
    v.f = tsl_tensor_get_f64(t, i);
    return v;
  }
  switch (t->dtype.bits) {
  case 8: v.i = t->dtype.code == TSL_DT_INT ? *(const int8_t *)p : *(const uint8_t *)p; break;
  case 16: v.i = t->dtype.code == TSL_DT_INT ? *(const int16_t *)p : *(const uint16_t *)p; break;
  case 32: v.i = t->dtype.code == TSL_DT_INT ? (int64_t)*(const int32_t *)p : (int64_t)*(const uint32_t *)p; break;
  default: memcpy(&v.i, p, 8); break;
  }
  if (t->dtype.code == TSL_DT_BOOL) v.i = v.i != 0;
  return v;
}

/* Stores v as element i (row-major, compact or strided) of t. */
static void write_element(tsl_tensor *t, int64_t i, value v) {
  int64_t off = 0, rem = i;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (rem % t->shape[d]) * t->strides[d];
    rem /= t->shape[d];
  }
  char *p = (char *)t->data + off * (int64_t)tsl_dtype_bytes(t->dtype);
  if (t->dtype.code == TSL_DT_FLOAT) {
    if (t->dtype.bits == 64) memcpy(p, &v.f, 8);
    else {
      float f = (float)v.f;
      memcpy(p, &f, 4);
    }
    return;
  }
  uint64_t u = (uint64_t)v.i;
  switch (t->dtype.bits) {
  case 8: { uint8_t x = (uint8_t)u; memcpy(p, &x, 1); break; }
  case 16: { uint16_t x = (uint16_t)u; memcpy(p, &x, 2); break; }
  case 32: { uint32_t x = (uint32_t)u; memcpy(p, &x, 4); break; }
  default: memcpy(p, &u, 8); break;
  }
}

tsl_status tsl_te_interpret(const tsl_te_program *p, const tsl_tensor *const *inputs, tsl_tensor *const *outputs) {
  if (!p || (p->ninputs && !inputs) || !outputs) return tsl_error(TSL_ERR_INVALID, "te_interp: NULL argument");
  for (int i = 0; i < p->ninputs + p->noutputs; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    const tsl_tensor *t = i < p->ninputs ? inputs[i] : outputs[i - p->ninputs];
    if (!same_type(t, b)) return tsl_error(TSL_ERR_INVALID, "te_interp: tensor for %s has another dtype or shape", b->name);
    if (tsl_type_is_float(b->dtype) && b->dtype.bits == 16)
      return tsl_error(TSL_ERR_UNSUPPORTED, "te_interp: %s is f16 (a storage type)", b->name);
  }
  interp in;
  memset(&in, 0, sizeof in);
  in.p = p;
  in.stages = tsl_te_program_stages(p, &in.nstages);
  in.data = calloc((size_t)in.nstages + 1, sizeof(value *));
  in.inputs = calloc((size_t)p->ninputs + 1, sizeof(value *));
  if (!in.data || !in.inputs) in.st = tsl_error(TSL_ERR_NOMEM, "te_interp: out of memory");
  for (int i = 0; i < p->ninputs && in.st == TSL_OK; i++) {
    int64_t n = tsl_tensor_numel(inputs[i]);
    in.inputs[i] = malloc(sizeof(value) * (size_t)(n ? n : 1));
    if (!in.inputs[i]) in.st = tsl_error(TSL_ERR_NOMEM, "te_interp: out of memory for input %s", p->inputs[i]->buf->name);
    else
      for (int64_t e = 0; e < n; e++) in.inputs[i][e] = read_element(inputs[i], e);
  }
  for (int s = 0; s < in.nstages && in.st == TSL_OK; s++) {
    int64_t n = tsl_buffer_numel(in.stages[s]->output->buf);
    in.data[s] = malloc(sizeof(value) * (size_t)(n ? n : 1));
    if (!in.data[s]) in.st = tsl_error(TSL_ERR_NOMEM, "te_interp: out of memory for stage %s", in.stages[s]->name);
    else eval_stage(&in, s);
  }
  for (int k = 0; k < p->noutputs && in.st == TSL_OK; k++) {
    const value *src = tensor_data(&in, p->outputs[k]->buf);
    if (!src) {
      in.st = tsl_error(TSL_ERR_INVALID, "te_interp: output %s is not computed", p->outputs[k]->buf->name);
      break;
    }
    int64_t n = tsl_buffer_numel(p->outputs[k]->buf);
    for (int64_t e = 0; e < n; e++) write_element(outputs[k], e, src[e]);
  }
  for (int s = 0; s < in.nstages && in.data; s++) free(in.data[s]);
  for (int i = 0; i < p->ninputs && in.inputs; i++) free(in.inputs[i]);
  free(in.data);
  free(in.inputs);
  return in.st;
}
