/* Checked constructors for the IR nodes declared in ir.h. */
#include "ir/ir.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void ir_fail(const char *node, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void ir_fail(const char *node, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "tessel IR: invalid %s node: ", node);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

size_t tsl_type_bytes(tsl_type t) {
  size_t b = t.code == TSL_TYPE_BOOL ? 1 : (size_t)t.bits / 8;
  return b * t.lanes;
}

const char *tsl_type_str(tsl_type t, char *buf, size_t n) {
  const char *base = "?";
  switch ((tsl_type_code)t.code) {
  case TSL_TYPE_BOOL: base = "bool"; break;
  case TSL_TYPE_INT: base = "i"; break;
  case TSL_TYPE_UINT: base = "u"; break;
  case TSL_TYPE_FLOAT: base = "f"; break;
  case TSL_TYPE_HANDLE: base = "handle"; break;
  }
  bool sized = t.code == TSL_TYPE_INT || t.code == TSL_TYPE_UINT || t.code == TSL_TYPE_FLOAT;
  char scalar[16];
  if (sized) snprintf(scalar, sizeof scalar, "%s%d", base, t.bits);
  else snprintf(scalar, sizeof scalar, "%s", base);
  if (t.lanes > 1) snprintf(buf, n, "%sx%d", scalar, t.lanes);
  else snprintf(buf, n, "%s", scalar);
  return buf;
}

bool tsl_type_parse(const char *s, tsl_type *out) {
  static const struct { const char *name; tsl_type_code c; int bits; } table[] = {
      {"bool", TSL_TYPE_BOOL, 1}, {"i8", TSL_TYPE_INT, 8},    {"i16", TSL_TYPE_INT, 16},
      {"i32", TSL_TYPE_INT, 32},  {"i64", TSL_TYPE_INT, 64},  {"u8", TSL_TYPE_UINT, 8},
      {"u16", TSL_TYPE_UINT, 16}, {"u32", TSL_TYPE_UINT, 32}, {"u64", TSL_TYPE_UINT, 64},
      {"f16", TSL_TYPE_FLOAT, 16}, {"f32", TSL_TYPE_FLOAT, 32}, {"f64", TSL_TYPE_FLOAT, 64},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(s, table[i].name) == 0) {
      *out = tsl_type_make(table[i].c, table[i].bits, 1);
      return true;
    }
  return false;
}

/* ---- buffers ---- */

tsl_buffer *tsl_buffer_new(const char *name, tsl_type dtype, int ndim, const int64_t *shape,
                           tsl_buffer_kind kind) {
  if (dtype.lanes != 1) ir_fail("buffer", "%s: element type must be scalar", name);
  if (ndim < 0) ir_fail("buffer", "%s: ndim %d", name, ndim);
  tsl_buffer *b = tsl_alloc(sizeof *b);
  b->name = tsl_strdup(name);
  b->dtype = dtype;
  b->ndim = ndim;
  b->shape = ndim ? tsl_memdup(shape, sizeof(int64_t) * (size_t)ndim) : NULL;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) ir_fail("buffer", "%s: negative extent %lld on dim %d", name, (long long)shape[i], i);
  b->align = kind == TSL_BUF_ARG ? 64 : (int64_t)tsl_type_bytes(dtype);
  b->kind = kind;
  return b;
}

int64_t tsl_buffer_numel(const tsl_buffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
  return n;
}

/* ---- expressions ---- */

static tsl_expr *new_expr(tsl_expr_kind k, tsl_type t) {
  tsl_expr *e = tsl_alloc(sizeof *e);
  e->kind = k;
  e->type = t;
  return e;
}

static void need(const tsl_expr *e, const char *node, const char *what) {
  if (!e) ir_fail(node, "missing operand %s", what);
}

tsl_expr *tsl_int(tsl_type t, int64_t v) {
  if (!(tsl_type_is_intlike(t) || tsl_type_is_bool(t)) || t.lanes != 1)
    ir_fail("int", "type must be a scalar int/uint/bool");
  tsl_expr *e = new_expr(TSL_E_INT, t);
  if (tsl_type_is_bool(t)) v = v != 0;
  else if (t.bits < 64) {
    /* keep the value normalized to the type's range */
    uint64_t mask = (1ull << t.bits) - 1;
    uint64_t u = (uint64_t)v & mask;
    if (tsl_type_is_int(t) && (u >> (t.bits - 1))) u |= ~mask;
    v = (int64_t)u;
  }
  e->int_value = v;
  return e;
}
tsl_expr *tsl_i64(int64_t v) { return tsl_int(TSL_I64, v); }
tsl_expr *tsl_i32(int32_t v) { return tsl_int(TSL_I32, v); }
tsl_expr *tsl_bool(bool v) { return tsl_int(TSL_BOOL, v); }

tsl_expr *tsl_float(tsl_type t, double v) {
  if (!tsl_type_is_float(t) || t.lanes != 1) ir_fail("float", "type must be a scalar float");
  tsl_expr *e = new_expr(TSL_E_FLOAT, t);
  e->float_value = t.bits == 32 ? (double)(float)v : v;
  return e;
}
tsl_expr *tsl_f32(float v) { return tsl_float(TSL_F32, v); }

tsl_expr *tsl_var(const char *name, tsl_type t) {
  tsl_expr *e = new_expr(TSL_E_VAR, t);
  e->var.name = tsl_strdup(name ? name : "v");
  return e;
}

static bool is_arith(tsl_expr_kind k) { return k >= TSL_E_ADD && k <= TSL_E_MAX; }
static bool is_cmp(tsl_expr_kind k) { return k >= TSL_E_EQ && k <= TSL_E_GE; }

tsl_expr *tsl_binary(tsl_expr_kind k, tsl_expr *a, tsl_expr *b) {
  const char *name = tsl_expr_kind_name(k);
  need(a, name, "a");
  need(b, name, "b");
  if (!tsl_type_eq(a->type, b->type)) {
    char x[32], y[32];
    ir_fail(name, "operand types differ (%s vs %s)", tsl_type_str(a->type, x, sizeof x),
            tsl_type_str(b->type, y, sizeof y));
  }
  tsl_type t = a->type;
  if (is_arith(k)) {
    if (tsl_type_is_bool(t) || t.code == TSL_TYPE_HANDLE) ir_fail(name, "needs arithmetic operands");
    if (tsl_type_is_float(t) && t.bits == 16) ir_fail(name, "f16 is a storage type; cast to f32");
    if (k == TSL_E_MOD && tsl_type_is_float(t)) ir_fail(name, "mod on floats");
  } else if (is_cmp(k)) {
    t = tsl_type_with_lanes(TSL_BOOL, a->type.lanes);
  } else if (k == TSL_E_AND || k == TSL_E_OR) {
    if (!tsl_type_is_bool(t)) ir_fail(name, "needs bool operands");
  } else {
    ir_fail("binary", "kind %d is not a binary operator", (int)k);
  }
  tsl_expr *e = new_expr(k, t);
  e->bin.a = a;
  e->bin.b = b;
  return e;
}
tsl_expr *tsl_add(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_ADD, a, b); }
tsl_expr *tsl_sub(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_SUB, a, b); }
tsl_expr *tsl_mul(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_MUL, a, b); }
tsl_expr *tsl_div(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_DIV, a, b); }
tsl_expr *tsl_mod(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_MOD, a, b); }
tsl_expr *tsl_min(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_MIN, a, b); }
tsl_expr *tsl_max(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_MAX, a, b); }
tsl_expr *tsl_eq(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_EQ, a, b); }
tsl_expr *tsl_ne(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_NE, a, b); }
tsl_expr *tsl_lt(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_LT, a, b); }
tsl_expr *tsl_le(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_LE, a, b); }
tsl_expr *tsl_gt(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_GT, a, b); }
tsl_expr *tsl_ge(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_GE, a, b); }
tsl_expr *tsl_and(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_AND, a, b); }
tsl_expr *tsl_or(tsl_expr *a, tsl_expr *b) { return tsl_binary(TSL_E_OR, a, b); }

tsl_expr *tsl_not(tsl_expr *a) {
  need(a, "not", "a");
  if (!tsl_type_is_bool(a->type)) ir_fail("not", "needs a bool operand");
  tsl_expr *e = new_expr(TSL_E_NOT, a->type);
  e->un.a = a;
  return e;
}

tsl_expr *tsl_select(tsl_expr *cond, tsl_expr *t, tsl_expr *f) {
  need(cond, "select", "cond");
  need(t, "select", "true value");
  need(f, "select", "false value");
  if (!tsl_type_is_bool(cond->type)) ir_fail("select", "condition is not bool");
  if (!tsl_type_eq(t->type, f->type)) ir_fail("select", "branch types differ");
  if (cond->type.lanes != 1 && cond->type.lanes != t->type.lanes)
    ir_fail("select", "condition lanes %d vs value lanes %d", cond->type.lanes, t->type.lanes);
  tsl_expr *e = new_expr(TSL_E_SELECT, t->type);
  e->select.cond = cond;
  e->select.t = t;
  e->select.f = f;
  return e;
}

tsl_expr *tsl_cast(tsl_type t, tsl_expr *a) {
  need(a, "cast", "value");
  t.lanes = a->type.lanes;
  if (tsl_type_eq(t, a->type)) return a;
  tsl_expr *e = new_expr(TSL_E_CAST, t);
  e->un.a = a;
  return e;
}

tsl_expr *tsl_broadcast(tsl_expr *value, int lanes) {
  need(value, "broadcast", "value");
  if (value->type.lanes != 1) ir_fail("broadcast", "value must be scalar");
  if (lanes < 1) ir_fail("broadcast", "lanes %d", lanes);
  if (lanes == 1) return value;
  tsl_expr *e = new_expr(TSL_E_BROADCAST, tsl_type_with_lanes(value->type, lanes));
  e->broadcast.value = value;
  e->broadcast.lanes = lanes;
  return e;
}

tsl_expr *tsl_ramp(tsl_expr *base, tsl_expr *stride, int lanes) {
  need(base, "ramp", "base");
  need(stride, "ramp", "stride");
  if (!tsl_type_is_intlike(base->type) || base->type.lanes != 1 || !tsl_type_eq(base->type, stride->type))
    ir_fail("ramp", "base and stride must be scalar integers of one type");
  if (lanes < 2) ir_fail("ramp", "lanes %d (need >= 2)", lanes);
  tsl_expr *e = new_expr(TSL_E_RAMP, tsl_type_with_lanes(base->type, lanes));
  e->ramp.base = base;
  e->ramp.stride = stride;
  e->ramp.lanes = lanes;
  return e;
}

static tsl_expr **copy_exprs(int n, tsl_expr *const *xs) {
  return n ? tsl_memdup(xs, sizeof(tsl_expr *) * (size_t)n) : NULL;
}

static int check_index(const char *node, const tsl_buffer *buf, int nindex, tsl_expr *const *index) {
  if (!buf) ir_fail(node, "missing buffer");
  if (nindex != buf->ndim && nindex != 1)
    ir_fail(node, "%s: %d indices for a %d-d buffer", buf->name, nindex, buf->ndim);
  if (nindex < 1) ir_fail(node, "%s: no index", buf->name);
  int lanes = index[0] ? index[0]->type.lanes : 1;
  for (int i = 0; i < nindex; i++) {
    need(index[i], node, "index");
    if (!tsl_type_is_intlike(index[i]->type)) ir_fail(node, "%s: index %d is not an integer", buf->name, i);
    if (index[i]->type.lanes != lanes) ir_fail(node, "%s: index lanes differ", buf->name);
  }
  return lanes;
}

tsl_expr *tsl_load(tsl_buffer *buf, int nindex, tsl_expr *const *index, tsl_expr *predicate) {
  int lanes = check_index("load", buf, nindex, index);
  if (predicate && (!tsl_type_is_bool(predicate->type) || predicate->type.lanes != lanes))
    ir_fail("load", "%s: predicate must be bool with %d lanes", buf->name, lanes);
  tsl_expr *e = new_expr(TSL_E_LOAD, tsl_type_with_lanes(buf->dtype, lanes));
  e->load.buf = buf;
  e->load.nindex = nindex;
  e->load.index = copy_exprs(nindex, index);
  e->load.predicate = predicate;
  return e;
}

tsl_expr *tsl_call(tsl_intrinsic op, tsl_type t, int nargs, tsl_expr *const *args) {
  if ((int)op < 0 || op >= TSL_CALL_COUNT_) ir_fail("call", "unknown intrinsic %d", (int)op);
  for (int i = 0; i < nargs; i++) need(args[i], tsl_intrinsic_name(op), "argument");
  tsl_expr *e = new_expr(TSL_E_CALL, t);
  e->call.op = op;
  e->call.nargs = nargs;
  e->call.args = copy_exprs(nargs, args);
  return e;
}

tsl_expr *tsl_let(tsl_expr *var, tsl_expr *value, tsl_expr *body) {
  need(var, "let", "var");
  need(value, "let", "value");
  need(body, "let", "body");
  if (var->kind != TSL_E_VAR) ir_fail("let", "binder is not a variable");
  if (!tsl_type_eq(var->type, value->type)) ir_fail("let", "%s: value type differs from the variable's", var->var.name);
  tsl_expr *e = new_expr(TSL_E_LET, body->type);
  e->let.var = var;
  e->let.value = value;
  e->let.body = body;
  return e;
}

tsl_expr *tsl_reduce(tsl_combiner c, tsl_expr *source, int naxes, const tsl_iter_var *axes,
                     tsl_expr *condition) {
  need(source, "reduce", "source");
  if (source->type.lanes != 1) ir_fail("reduce", "source must be scalar");
  if (condition && !tsl_type_is_bool(condition->type)) ir_fail("reduce", "condition is not bool");
  tsl_expr *e = new_expr(TSL_E_REDUCE, source->type);
  e->reduce.combiner = c;
  e->reduce.source = source;
  e->reduce.naxes = naxes;
  e->reduce.axes = naxes ? tsl_memdup(axes, sizeof(tsl_iter_var) * (size_t)naxes) : NULL;
  e->reduce.condition = condition;
  return e;
}

tsl_expr *tsl_reduce_identity(tsl_combiner c, tsl_type t) {
  t = tsl_type_element(t);
  if (c == TSL_REDUCE_SUM) return tsl_type_is_float(t) ? tsl_float(t, 0.0) : tsl_int(t, 0);
  bool is_max = c == TSL_REDUCE_MAX;
  if (tsl_type_is_float(t)) return tsl_float(t, is_max ? -INFINITY : INFINITY);
  if (tsl_type_is_uint(t)) return tsl_int(t, is_max ? 0 : (int64_t)(t.bits == 64 ? ~0ull : (1ull << t.bits) - 1));
  int64_t hi = t.bits == 64 ? INT64_MAX : (int64_t)((1ull << (t.bits - 1)) - 1);
  return tsl_int(t, is_max ? -hi - 1 : hi);
}

bool tsl_expr_is_const_int(const tsl_expr *e, int64_t *v) {
  if (!e || e->kind != TSL_E_INT || e->type.lanes != 1) return false;
  if (v) *v = e->int_value;
  return true;
}

const char *tsl_expr_kind_name(tsl_expr_kind k) {
  static const char *names[] = {"int", "float", "var", "add", "sub", "mul", "div", "mod", "min",
                                "max", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not",
                                "select", "cast", "broadcast", "ramp", "load", "call", "let",
                                "reduce"};
  return (int)k >= 0 && (size_t)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static const char *intrinsic_names[TSL_CALL_COUNT_] = {
    "fma", "popcount", "shl", "shr", "bit_and", "bit_or", "bit_xor", "bit_not", "abs",
    "exp", "log", "sqrt", "tanh", "erf", "floor", "ceil", "round", "pow", "isnan", "reduce_add",
    "reduce_max", "reduce_min", "prefetch", "likely"};

const char *tsl_intrinsic_name(tsl_intrinsic op) {
  return (int)op >= 0 && op < TSL_CALL_COUNT_ ? intrinsic_names[op] : "?";
}

tsl_intrinsic tsl_intrinsic_from_name(const char *name) {
  for (int i = 0; i < TSL_CALL_COUNT_; i++)
    if (strcmp(intrinsic_names[i], name) == 0) return (tsl_intrinsic)i;
  return TSL_CALL_COUNT_;
}

/* ---- statements ---- */

static tsl_stmt *new_stmt(tsl_stmt_kind k) {
  tsl_stmt *s = tsl_alloc(sizeof *s);
  s->kind = k;
  return s;
}

tsl_stmt *tsl_for(tsl_expr *var, tsl_expr *min, tsl_expr *extent, tsl_for_kind kind, tsl_stmt *body) {
  need(var, "for", "var");
  need(min, "for", "min");
  need(extent, "for", "extent");
  if (!body) ir_fail("for", "%s: missing body", var->kind == TSL_E_VAR ? var->var.name : "?");
  if (var->kind != TSL_E_VAR || !tsl_type_is_intlike(var->type)) ir_fail("for", "loop variable must be an integer variable");
  if (!tsl_type_eq(min->type, var->type) || !tsl_type_eq(extent->type, var->type))
    ir_fail("for", "%s: min/extent type differs from the variable's", var->var.name);
  if ((kind == TSL_FOR_VECTORIZED || kind == TSL_FOR_UNROLLED) && !tsl_expr_is_const_int(extent, NULL))
    ir_fail("for", "%s: %s loop needs a constant extent", var->var.name, tsl_for_kind_name(kind));
  tsl_stmt *s = new_stmt(TSL_S_FOR);
  s->loop.var = var;
  s->loop.min = min;
  s->loop.extent = extent;
  s->loop.for_kind = kind;
  s->loop.body = body;
  return s;
}

tsl_stmt *tsl_store(tsl_buffer *buf, int nindex, tsl_expr *const *index, tsl_expr *value, tsl_expr *predicate) {
  int lanes = check_index("store", buf, nindex, index);
  need(value, "store", "value");
  if (value->type.lanes != lanes)
    ir_fail("store", "%s: value lanes %d vs index lanes %d", buf->name, value->type.lanes, lanes);
  if (!tsl_type_eq(tsl_type_element(value->type), buf->dtype)) {
    char x[32], y[32];
    ir_fail("store", "%s: value type %s vs buffer type %s", buf->name,
            tsl_type_str(value->type, x, sizeof x), tsl_type_str(buf->dtype, y, sizeof y));
  }
  if (predicate && (!tsl_type_is_bool(predicate->type) || predicate->type.lanes != lanes))
    ir_fail("store", "%s: predicate must be bool with %d lanes", buf->name, lanes);
  tsl_stmt *s = new_stmt(TSL_S_STORE);
  s->store.buf = buf;
  s->store.nindex = nindex;
  s->store.index = copy_exprs(nindex, index);
  s->store.value = value;
  s->store.predicate = predicate;
  return s;
}

tsl_stmt *tsl_allocate(tsl_buffer *buf, tsl_stmt *body) {
  if (!buf || !body) ir_fail("allocate", "missing buffer or body");
  tsl_stmt *s = new_stmt(TSL_S_ALLOCATE);
  s->allocate.buf = buf;
  s->allocate.body = body;
  return s;
}

tsl_stmt *tsl_seq(int n, tsl_stmt *const *stmts) {
  int m = 0;
  for (int i = 0; i < n; i++) m += stmts[i] != NULL;
  if (m == 0) ir_fail("seq", "empty sequence");
  if (m == 1)
    for (int i = 0; i < n; i++)
      if (stmts[i]) return stmts[i];
  tsl_stmt *s = new_stmt(TSL_S_SEQ);
  s->seq.stmts = tsl_alloc(sizeof(tsl_stmt *) * (size_t)m);
  for (int i = 0; i < n; i++)
    if (stmts[i]) s->seq.stmts[s->seq.n++] = stmts[i];
  return s;
}

tsl_stmt *tsl_seq2(tsl_stmt *a, tsl_stmt *b) {
  tsl_stmt *xs[2] = {a, b};
  return tsl_seq(2, xs);
}

tsl_stmt *tsl_if(tsl_expr *cond, tsl_stmt *then_case, tsl_stmt *else_case) {
  need(cond, "if", "cond");
  if (!tsl_type_is_bool(cond->type) || cond->type.lanes != 1) ir_fail("if", "condition must be a scalar bool");
  if (!then_case) ir_fail("if", "missing then case");
  tsl_stmt *s = new_stmt(TSL_S_IF);
  s->if_.cond = cond;
  s->if_.then_case = then_case;
  s->if_.else_case = else_case;
  return s;
}

tsl_stmt *tsl_let_stmt(tsl_expr *var, tsl_expr *value, tsl_stmt *body) {
  need(var, "let", "var");
  need(value, "let", "value");
  if (!body) ir_fail("let", "missing body");
  if (var->kind != TSL_E_VAR || !tsl_type_eq(var->type, value->type))
    ir_fail("let", "binder must be a variable of the value's type");
  tsl_stmt *s = new_stmt(TSL_S_LET);
  s->let.var = var;
  s->let.value = value;
  s->let.body = body;
  return s;
}

tsl_stmt *tsl_evaluate(tsl_expr *value) {
  need(value, "evaluate", "value");
  tsl_stmt *s = new_stmt(TSL_S_EVALUATE);
  s->evaluate.value = value;
  return s;
}

const char *tsl_for_kind_name(tsl_for_kind k) {
  switch (k) {
  case TSL_FOR_SERIAL: return "serial";
  case TSL_FOR_PARALLEL: return "parallel";
  case TSL_FOR_VECTORIZED: return "vectorized";
  case TSL_FOR_UNROLLED: return "unrolled";
  }
  return "?";
}

tsl_func *tsl_func_new(const char *name, int nargs, const tsl_arg *args, tsl_stmt *body) {
  tsl_func *f = tsl_alloc(sizeof *f);
  f->name = tsl_strdup(name);
  f->nargs = nargs;
  f->args = nargs ? tsl_memdup(args, sizeof(tsl_arg) * (size_t)nargs) : NULL;
  f->body = body;
  f->vector_bits = 0;
  return f;
}
