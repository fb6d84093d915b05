/* DSL semantic analysis: scopes and names, the type and literal-promotion rules, the
 * placement of reductions and the inference of extents (docs/dsl.md sections 4-8).
 * Annotates the syntax tree so that instantiation only evaluates it. */
#include <stdio.h>
#include <string.h>

#include "dsl/ast.h"

typedef struct sema {
  dsl_pool *pool;
  tsl_dsl_op *op;
  const dsl_src *src;
  dsl_vec sizes;      /* dsl_size* declared so far */
  bool in_dims;       /* checking a shape: only parameters and sizes so far */
  int stage;          /* index of the stage being checked, or -1 */
  dsl_var **rvars;    /* the reduction variables in scope */
  int nrvars;
  int stages_upto;    /* lookup sees stages [0, stages_upto) */
} sema;

static const char *fn_names[FN_COUNT_] = {
    "select", "max", "min", "abs", "exp", "log", "sqrt", "tanh", "erf", "floor", "ceil", "round",
    "pow", "fma", "isnan", "popcount", "shl", "shr", "bit_and", "bit_or", "bit_xor", "bit_not"};

dsl_fn dsl_fn_lookup(const char *name) {
  for (int i = 0; i < FN_COUNT_; i++)
    if (strcmp(fn_names[i], name) == 0) return (dsl_fn)i;
  return FN_COUNT_;
}

dsl_pos dsl_node_start(const dsl_node *e) {
  while ((e->kind == DN_BINARY || e->kind == DN_COND) && e->nargs > 0 && e->args[0]) e = e->args[0];
  return e->pos;
}

bool dsl_is_reserved(const char *name) {
  static const char *words[] = {"op", "where", "if", "assert", "true", "false", "inf", "nan",
                                "int", "float", "sum", "f16"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strcmp(words[i], name) == 0) return true;
  tsl_type t;
  return dsl_parse_dtype(name, &t) || dsl_fn_lookup(name) != FN_COUNT_;
}

/* Records the message and evaluates to TSL_ERR_PARSE. The status is the macro's constant,
 * not dsl_fail's result (which lives in another file), so that the compiler sees that
 * every failure returns an error: unify() leaves its out-parameters unset when it fails,
 * and gcc -O3 otherwise warns that its callers may read them uninitialized. */
#define FAIL(pos, ...) (dsl_fail(S->src, TSL_ERR_PARSE, (pos), __VA_ARGS__), TSL_ERR_PARSE)

static const char *tstr(tsl_type t, char *buf) { return tsl_type_str(t, buf, 16); }

static const char *class_name(const dsl_node *e, char *buf) {
  switch (e->cls) {
  case DC_CINT: return "integer constant";
  case DC_CFLOAT: return "float constant";
  case DC_CBOOL: return "bool constant";
  default: return tstr(e->type, buf);
  }
}

/* ---- names ---- */

typedef struct lookup_result {
  dsl_ref_kind ref;
  int index;
  dsl_var *var;
  dsl_pos pos; /* where the name was declared */
  int stage_after; /* DR_STAGE: 1 if the stage is the current one or a later one */
} lookup_result;

static bool lookup(const sema *S, const char *name, lookup_result *r) {
  memset(r, 0, sizeof *r);
  for (int i = 0; i < S->nrvars; i++)
    if (strcmp(S->rvars[i]->name, name) == 0) {
      *r = (lookup_result){DR_VAR, 0, S->rvars[i], S->rvars[i]->pos, 0};
      return true;
    }
  if (S->stage >= 0) {
    dsl_stage *s = S->op->stages[S->stage];
    for (int i = 0; i < s->naxes; i++)
      if (s->axes[i]->id >= 0 && strcmp(s->axes[i]->name, name) == 0) {
        *r = (lookup_result){DR_VAR, 0, s->axes[i], s->axes[i]->pos, 0};
        return true;
      }
  }
  for (int i = 0; i < S->op->nparams; i++) {
    dsl_param *p = S->op->params[i];
    if (strcmp(p->name, name) == 0) {
      *r = (lookup_result){p->is_tensor ? DR_INPUT : DR_PARAM, p->index, NULL, p->pos, 0};
      return true;
    }
  }
  for (int i = 0; i < S->sizes.n; i++) {
    dsl_size *z = S->sizes.items[i];
    if (strcmp(z->name, name) == 0) {
      *r = (lookup_result){DR_SIZE, i, NULL, z->pos, 0};
      return true;
    }
  }
  if (!S->in_dims)
    for (int i = 0; i < S->stages_upto; i++)
      if (strcmp(S->op->stages[i]->name, name) == 0) {
        *r = (lookup_result){DR_STAGE, i, NULL, S->op->stages[i]->pos, S->stage >= 0 && i >= S->stage};
        return true;
      }
  return false;
}

/* A new name must be neither reserved nor visible already; of the stages, those before
 * stage `upto` count (a later stage that reuses the name is the one reported). */
static tsl_status declare(sema *S, const char *name, dsl_pos pos, const char *what, int upto) {
  if (dsl_is_reserved(name)) return FAIL(pos, "'%s' is a reserved word and cannot name %s", name, what);
  lookup_result r;
  int saved = S->stages_upto;
  S->stages_upto = upto;
  bool found = lookup(S, name, &r);
  S->stages_upto = saved;
  if (found) return FAIL(pos, "duplicate name '%s' (already declared at %d:%d)", name, r.pos.line, r.pos.col);
  return TSL_OK;
}

/* ---- types ---- */

static bool is_arith_type(tsl_type t) { return tsl_type_is_intlike(t) || tsl_type_is_float(t); }

static tsl_type natural_type(dsl_class cls) {
  return cls == DC_CFLOAT ? TSL_F64 : cls == DC_CBOOL ? TSL_BOOL : TSL_I64;
}

static tsl_status settle(sema *S, dsl_node *e, tsl_type t);

/* A dynamic constant is built, not folded: its constant operands need types too. */
static tsl_status settle_children(sema *S, dsl_node *e, tsl_type t) {
  tsl_status st = TSL_OK;
  bool is_select = e->kind == DN_COND || (e->kind == DN_CALL && e->fn == FN_SELECT);
  bool is_cmp = e->kind == DN_BINARY && (e->op == TK_LT || e->op == TK_LE || e->op == TK_GT || e->op == TK_GE ||
                                         e->op == TK_EQ || e->op == TK_NE);
  if (is_cmp || (e->kind == DN_CALL && e->fn == FN_ISNAN)) {
    dsl_class c = e->args[0]->cls;
    for (int i = 1; i < e->nargs; i++)
      if (e->args[i]->cls == DC_CFLOAT) c = DC_CFLOAT;
    if (e->kind == DN_CALL) c = DC_CFLOAT;
    for (int i = 0; i < e->nargs && st == TSL_OK; i++) st = settle(S, e->args[i], natural_type(c));
    return st;
  }
  for (int i = 0; i < e->nargs && st == TSL_OK; i++)
    st = settle(S, e->args[i], is_select && i == 0 ? TSL_BOOL : t);
  return st;
}

/* A constant meets a typed operand: it adapts to T (docs/dsl.md section 6). */
static tsl_status settle(sema *S, dsl_node *e, tsl_type t) {
  char b[16];
  if (e->cls == DC_TYPED) return TSL_OK;
  if (e->cls == DC_CINT && tsl_type_is_bool(t))
    return FAIL(dsl_node_start(e), "an integer constant cannot be used as bool (compare it, e.g. x != 0)");
  if (e->cls == DC_CFLOAT && !tsl_type_is_float(t))
    return FAIL(dsl_node_start(e), "a float constant cannot adapt to %s (write an explicit cast, e.g. %s(...))", tstr(t, b), b);
  if (e->cls == DC_CBOOL && !tsl_type_is_bool(t))
    return FAIL(dsl_node_start(e), "a bool constant cannot adapt to %s (write an explicit cast, e.g. %s(...))", tstr(t, b), b);
  e->type = t;
  e->settled = true;
  return e->dynamic ? settle_children(S, e, t) : TSL_OK;
}

/* Gives the common class/type of operands (all typed ones equal, constants adapt).
 * Sets *cls and *type. */
static tsl_status unify(sema *S, int n, dsl_node **xs, dsl_pos pos, const char *what, dsl_class *cls, tsl_type *type) {
  const dsl_node *typed = NULL;
  for (int i = 0; i < n; i++) {
    if (xs[i]->cls != DC_TYPED) continue;
    if (!typed) {
      typed = xs[i];
    } else if (!tsl_type_eq(typed->type, xs[i]->type)) {
      char a[16], b[16];
      return FAIL(pos, "type mismatch in %s: %s and %s (add an explicit cast, e.g. %s(...))", what,
                  tstr(typed->type, a), tstr(xs[i]->type, b), a);
    }
  }
  if (typed) {
    for (int i = 0; i < n; i++) {
      tsl_status st = settle(S, xs[i], typed->type);
      if (st != TSL_OK) return st;
    }
    *cls = DC_TYPED;
    *type = typed->type;
    return TSL_OK;
  }
  dsl_class c = xs[0]->cls;
  for (int i = 1; i < n; i++) {
    dsl_class d = xs[i]->cls;
    if (c == d) continue;
    if ((c == DC_CBOOL) != (d == DC_CBOOL)) return FAIL(pos, "type mismatch in %s: bool and number constants", what);
    c = DC_CFLOAT;
  }
  *cls = c;
  *type = TSL_I64;
  return TSL_OK;
}

enum kind_mask { K_INT = 1, K_UINT = 2, K_FLOAT = 4, K_BOOL = 8, K_NUM = K_INT | K_UINT | K_FLOAT };

static bool class_in(dsl_class cls, tsl_type t, int mask) {
  switch (cls) {
  case DC_CINT: return mask & (K_INT | K_UINT | K_FLOAT);
  case DC_CFLOAT: return mask & K_FLOAT;
  case DC_CBOOL: return mask & K_BOOL;
  default:
    return (tsl_type_is_int(t) && (mask & K_INT)) || (tsl_type_is_uint(t) && (mask & K_UINT)) ||
           (tsl_type_is_float(t) && (mask & K_FLOAT)) || (tsl_type_is_bool(t) && (mask & K_BOOL));
  }
}

static const char *mask_name(int mask) {
  switch (mask) {
  case K_NUM: return "int, uint or float";
  case K_INT | K_UINT: return "int or uint";
  case K_INT | K_UINT | K_BOOL: return "int, uint or bool";
  case K_FLOAT: return "float";
  case K_BOOL: return "bool";
  default: return "other";
  }
}

static tsl_status need_kind(sema *S, const dsl_node *e, dsl_class cls, tsl_type t, int mask, dsl_pos pos, const char *what) {
  if (class_in(cls, t, mask)) return TSL_OK;
  char b[16];
  dsl_node tmp = *e;
  tmp.cls = cls;
  tmp.type = t;
  return FAIL(pos, "%s needs %s operands (found %s)", what, mask_name(mask), class_name(&tmp, b));
}

static tsl_status check(sema *S, dsl_node *e);

static tsl_status check_name(sema *S, dsl_node *e) {
  lookup_result r;
  if (!lookup(S, e->name, &r)) {
    if (dsl_fn_lookup(e->name) != FN_COUNT_) return FAIL(e->pos, "'%s' is a built-in function (expected %s(...))", e->name, e->name);
    if (S->in_dims) return FAIL(e->pos, "unknown name '%s' (a size must first appear alone as a dimension)", e->name);
    return FAIL(e->pos, "unknown name '%s'", e->name);
  }
  switch (r.ref) {
  case DR_VAR:
    e->cls = DC_TYPED;
    e->type = TSL_I64;
    e->var = r.var;
    break;
  case DR_PARAM:
    e->cls = S->op->scalars[r.index]->kind == TSL_DSL_PARAM_INT ? DC_CINT : DC_CFLOAT;
    break;
  case DR_SIZE: e->cls = DC_CINT; break;
  default: return FAIL(e->pos, "tensor '%s' is used without indices (expected %s[...])", e->name, e->name);
  }
  e->ref = r.ref;
  e->ref_index = r.index;
  return TSL_OK;
}

static tsl_status add_use(sema *S, dsl_var *v, dsl_ref_kind ref, int index, int dim, dsl_pos pos) {
  dsl_use *u = dsl_pool_alloc(S->pool, sizeof(dsl_use) * (size_t)(v->nuses + 1));
  if (v->nuses) memcpy(u, v->uses, sizeof(dsl_use) * (size_t)v->nuses);
  u[v->nuses] = (dsl_use){ref, index, dim, pos};
  v->uses = u;
  v->nuses++;
  return TSL_OK;
}

static tsl_status check_read(sema *S, dsl_node *e) {
  if (S->in_dims) return FAIL(e->pos, "a shape cannot read tensors");
  lookup_result r;
  if (!lookup(S, e->name, &r)) return FAIL(e->pos, "unknown tensor '%s'", e->name);
  int ndim;
  tsl_type dtype;
  if (r.ref == DR_INPUT) {
    ndim = S->op->inputs[r.index]->ndim;
    dtype = S->op->inputs[r.index]->dtype;
  } else if (r.ref == DR_STAGE) {
    if (r.stage_after)
      return FAIL(e->pos, r.index == S->stage ? "stage '%s' cannot read itself" : "stage '%s' is defined after this one", e->name);
    ndim = S->op->stages[r.index]->naxes;
    dtype = S->op->stages[r.index]->dtype;
  } else {
    return FAIL(e->pos, "'%s' is not a tensor and cannot be indexed", e->name);
  }
  if (e->nargs != ndim)
    return FAIL(e->pos, "wrong number of indices for '%s': %d given, it has %d dimension%s", e->name, e->nargs, ndim, ndim == 1 ? "" : "s");
  e->ref = r.ref;
  e->ref_index = r.index;
  for (int k = 0; k < e->nargs; k++) {
    dsl_node *x = e->args[k];
    tsl_status st = check(S, x);
    if (st != TSL_OK) return st;
    if (!class_in(x->cls, x->type, K_INT | K_UINT)) {
      char b[16];
      return FAIL(dsl_node_start(x), "index %d of '%s' must be an integer (found %s)", k, e->name, class_name(x, b));
    }
    if ((st = settle(S, x, TSL_I64)) != TSL_OK) return st;
    if (x->kind == DN_NAME && x->ref == DR_VAR) add_use(S, x->var, r.ref, r.index, k, x->pos);
  }
  e->cls = DC_TYPED;
  e->type = dtype;
  return TSL_OK;
}

static tsl_status check_binary(sema *S, dsl_node *e) {
  tsl_status st;
  if ((st = check(S, e->args[0])) != TSL_OK || (st = check(S, e->args[1])) != TSL_OK) return st;
  const char *spell = dsl_tok_spelling((dsl_tok_kind)e->op);
  char what[32];
  snprintf(what, sizeof what, "'%s'", spell);
  dsl_class cls;
  tsl_type t;
  if ((st = unify(S, 2, e->args, e->pos, what, &cls, &t)) != TSL_OK) return st;
  int mask;
  bool to_bool = false;
  switch ((dsl_tok_kind)e->op) {
  case TK_PLUS: case TK_MINUS: case TK_STAR: case TK_SLASH: mask = K_NUM; break;
  case TK_PERCENT: mask = K_INT | K_UINT; break;
  case TK_LT: case TK_LE: case TK_GT: case TK_GE: mask = K_NUM; to_bool = true; break;
  case TK_EQ: case TK_NE: mask = K_NUM | K_BOOL; to_bool = true; break;
  case TK_ANDAND: case TK_OROR: mask = K_BOOL; break;
  case TK_AMP: case TK_PIPE: case TK_CARET: mask = K_INT | K_UINT | K_BOOL; break;
  default: mask = K_INT | K_UINT; break; /* << >> */
  }
  if ((st = need_kind(S, e, cls, t, mask, e->pos, what)) != TSL_OK) return st;
  if (to_bool) {
    cls = cls == DC_TYPED ? DC_TYPED : DC_CBOOL;
    t = TSL_BOOL;
  }
  e->cls = cls;
  e->type = t;
  return TSL_OK;
}

static tsl_status need_bool(sema *S, dsl_node *c, const char *what) {
  if (!class_in(c->cls, c->type, K_BOOL)) {
    char b[16];
    return FAIL(dsl_node_start(c), "the condition of %s must be bool (found %s)", what, class_name(c, b));
  }
  return settle(S, c, TSL_BOOL);
}

static tsl_status check_call(sema *S, dsl_node *e) {
  e->fn = dsl_fn_lookup(e->name);
  if (e->fn == FN_COUNT_) {
    lookup_result r;
    if (lookup(S, e->name, &r) && (r.ref == DR_INPUT || r.ref == DR_STAGE))
      return FAIL(e->pos, "'%s' is a tensor: read it with %s[...]", e->name, e->name);
    return FAIL(e->pos, "unknown function '%s'", e->name);
  }
  int want;
  switch (e->fn) {
  case FN_SELECT: case FN_FMA: want = 3; break;
  case FN_MAX: case FN_MIN: want = -2; break;
  case FN_POW: case FN_SHL: case FN_SHR: case FN_BIT_AND: case FN_BIT_OR: case FN_BIT_XOR: want = 2; break;
  default: want = 1; break;
  }
  if ((want > 0 && e->nargs != want) || (want < 0 && e->nargs < -want))
    return FAIL(e->pos, "%s takes %s%d argument%s (found %d)", e->name, want < 0 ? "at least " : "", want < 0 ? -want : want,
                (want == 1) ? "" : "s", e->nargs);
  tsl_status st;
  for (int i = 0; i < e->nargs; i++)
    if ((st = check(S, e->args[i])) != TSL_OK) return st;
  char what[32];
  snprintf(what, sizeof what, "%s()", e->name);
  dsl_node **vals = e->args;
  int nvals = e->nargs;
  if (e->fn == FN_SELECT) {
    if ((st = need_bool(S, e->args[0], "select")) != TSL_OK) return st;
    vals++;
    nvals--;
  }
  dsl_class cls;
  tsl_type t;
  if ((st = unify(S, nvals, vals, e->pos, what, &cls, &t)) != TSL_OK) return st;
  int mask;
  switch (e->fn) {
  case FN_SELECT: mask = K_NUM | K_BOOL; break;
  case FN_MAX: case FN_MIN: case FN_ABS: mask = K_NUM; break;
  case FN_POPCOUNT: case FN_SHL: case FN_SHR: case FN_BIT_NOT: mask = K_INT | K_UINT; break;
  case FN_BIT_AND: case FN_BIT_OR: case FN_BIT_XOR: mask = K_INT | K_UINT | K_BOOL; break;
  default: mask = K_FLOAT; if (cls == DC_CINT) cls = DC_CFLOAT; break; /* float functions */
  }
  if ((st = need_kind(S, e, cls, t, mask, e->pos, what)) != TSL_OK) return st;
  if (e->fn == FN_ISNAN) {
    t = TSL_BOOL;
    if (cls != DC_TYPED) cls = DC_CBOOL;
  }
  e->cls = cls;
  e->type = t;
  return TSL_OK;
}

static tsl_status check_node(sema *S, dsl_node *e) {
  tsl_status st;
  switch (e->kind) {
  case DN_INT: e->cls = DC_CINT; return TSL_OK;
  case DN_FLOAT: e->cls = DC_CFLOAT; return TSL_OK;
  case DN_BOOL: e->cls = DC_CBOOL; return TSL_OK;
  case DN_NAME: return check_name(S, e);
  case DN_READ: return check_read(S, e);
  case DN_BINARY: return check_binary(S, e);
  case DN_CALL: return check_call(S, e);
  case DN_UNARY: {
    dsl_node *a = e->args[0];
    if ((st = check(S, a)) != TSL_OK) return st;
    int mask = e->op == TK_NOT ? K_BOOL : e->op == TK_TILDE ? K_INT | K_UINT : K_NUM;
    char what[32];
    snprintf(what, sizeof what, "unary '%s'", dsl_tok_spelling((dsl_tok_kind)e->op));
    if ((st = need_kind(S, e, a->cls, a->type, mask, e->pos, what)) != TSL_OK) return st;
    e->cls = a->cls;
    e->type = a->type;
    return TSL_OK;
  }
  case DN_COND: {
    for (int i = 0; i < 3; i++)
      if ((st = check(S, e->args[i])) != TSL_OK) return st;
    if ((st = need_bool(S, e->args[0], "'?:'")) != TSL_OK) return st;
    return unify(S, 2, e->args + 1, e->pos, "'?:'", &e->cls, &e->type);
  }
  case DN_CAST:
    if (S->in_dims) return FAIL(e->pos, "a shape must be an integer constant expression (no casts)");
    if ((st = check(S, e->args[0])) != TSL_OK) return st;
    if (e->args[0]->dynamic && (st = settle(S, e->args[0], natural_type(e->args[0]->cls))) != TSL_OK) return st;
    e->cls = DC_TYPED;
    e->type = e->cast_type;
    return TSL_OK;
  case DN_REDUCE:
    return FAIL(e->pos, "a reduction (%s) must be the whole body of a stage; compute it in a stage of its own", e->name);
  }
  return FAIL(e->pos, "malformed expression");
}

static tsl_status check(sema *S, dsl_node *e) {
  tsl_status st = check_node(S, e);
  if (st != TSL_OK || e->cls == DC_TYPED) return st;
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i] && (e->args[i]->cls == DC_TYPED || e->args[i]->dynamic)) e->dynamic = true;
  return TSL_OK;
}

/* A constant integer expression of sizes and parameters (a shape or an extent). */
static tsl_status check_const_int(sema *S, dsl_node *e, const char *what) {
  tsl_status st = check(S, e);
  if (st != TSL_OK) return st;
  if (e->cls != DC_CINT || e->dynamic) {
    char b[16];
    return FAIL(dsl_node_start(e), "%s must be an integer constant expression of sizes and parameters (found %s%s)", what,
                class_name(e, b), e->dynamic ? " depending on an axis" : "");
  }
  return TSL_OK;
}

/* ---- statements ---- */

static tsl_status sema_signature(sema *S) {
  tsl_dsl_op *op = S->op;
  op->inputs = dsl_pool_alloc(S->pool, sizeof(dsl_param *) * (size_t)(op->nparams + 1));
  op->scalars = dsl_pool_alloc(S->pool, sizeof(dsl_param *) * (size_t)(op->nparams + 1));
  for (int i = 0; i < op->nparams; i++) {
    dsl_param *p = op->params[i];
    if (dsl_is_reserved(p->name)) return FAIL(p->pos, "'%s' is a reserved word and cannot name a parameter", p->name);
    for (int j = 0; j < i; j++)
      if (strcmp(op->params[j]->name, p->name) == 0)
        return FAIL(p->pos, "duplicate parameter '%s' (already declared at %d:%d)", p->name, op->params[j]->pos.line, op->params[j]->pos.col);
    if (p->is_tensor) {
      p->index = op->ninputs;
      op->inputs[op->ninputs++] = p;
    } else {
      p->index = op->nscalars;
      op->scalars[op->nscalars++] = p;
    }
  }
  S->in_dims = true;
  for (int i = 0; i < op->ninputs; i++) {
    dsl_param *p = op->inputs[i];
    for (int d = 0; d < p->ndim; d++) {
      dsl_node *e = p->dims[d];
      lookup_result r;
      if (e->kind == DN_NAME && !(lookup(S, e->name, &r) && r.ref == DR_PARAM)) {
        if (lookup(S, e->name, &r)) {
          if (r.ref != DR_SIZE) return FAIL(e->pos, "'%s' is a tensor, not a size", e->name);
        } else {
          tsl_status st = declare(S, e->name, e->pos, "a size", 0);
          if (st != TSL_OK) return st;
          dsl_size *z = dsl_pool_alloc(S->pool, sizeof *z);
          *z = (dsl_size){e->name, e->pos, i, d};
          dsl_vec_push(S->pool, &S->sizes, z);
        }
      }
      tsl_status st = check_const_int(S, e, "a dimension");
      if (st != TSL_OK) return st;
    }
  }
  S->in_dims = false;
  op->nsizes = S->sizes.n;
  op->sizes = dsl_pool_alloc(S->pool, sizeof(dsl_size) * (size_t)(S->sizes.n + 1));
  for (int i = 0; i < S->sizes.n; i++) op->sizes[i] = *(dsl_size *)S->sizes.items[i];

  op->input_info = dsl_pool_alloc(S->pool, sizeof(tsl_dsl_input_info) * (size_t)(op->ninputs + 1));
  for (int i = 0; i < op->ninputs; i++)
    op->input_info[i] = (tsl_dsl_input_info){op->inputs[i]->name, op->inputs[i]->dtype, op->inputs[i]->ndim, op->inputs[i]->type_text};
  op->param_info = dsl_pool_alloc(S->pool, sizeof(tsl_dsl_param_info) * (size_t)(op->nscalars + 1));
  for (int i = 0; i < op->nscalars; i++) {
    dsl_param *p = op->scalars[i];
    tsl_dsl_param_value v = {p->name, p->kind, p->default_i, p->default_f};
    op->param_info[i] = (tsl_dsl_param_info){p->name, p->kind, p->has_default, v};
  }
  for (int i = 0; i < op->nasserts; i++) {
    dsl_node *c = op->asserts[i].cond;
    tsl_status st = check(S, c);
    if (st != TSL_OK) return st;
    if (c->cls != DC_CBOOL || c->dynamic)
      return FAIL(dsl_node_start(c), "an assert needs a constant bool condition of sizes and parameters");
  }
  return TSL_OK;
}

/* Reductions may only be the root of a stage's body. */
static tsl_status find_nested_reduce(sema *S, const dsl_node *e) {
  if (!e) return TSL_OK;
  for (int i = 0; i < e->nargs; i++) {
    const dsl_node *a = e->args[i];
    if (a && a->kind == DN_REDUCE)
      return FAIL(a->pos, "a reduction (%s) must be the whole body of a stage; compute it in a stage of its own", a->name);
    tsl_status st = find_nested_reduce(S, a);
    if (st != TSL_OK) return st;
  }
  return TSL_OK;
}

static tsl_status sema_bounds(sema *S, dsl_stage *s) {
  for (int b = 0; b < s->nbounds; b++) {
    dsl_bound *bd = &s->bounds[b];
    dsl_var *v = NULL;
    for (int i = 0; i < s->naxes; i++)
      if (strcmp(s->axes[i]->name, bd->name) == 0) v = s->axes[i];
    for (int i = 0; i < S->nrvars; i++)
      if (strcmp(S->rvars[i]->name, bd->name) == 0) v = S->rvars[i];
    if (!v) return FAIL(bd->pos, "'%s' in the where clause is not an axis or reduction variable of stage %s", bd->name, s->name);
    if (v->hi) return FAIL(bd->pos, "duplicate bound for '%s' (first at %d:%d)", bd->name, v->bound_pos.line, v->bound_pos.col);
    if (bd->lo && !v->is_reduce)
      return FAIL(bd->pos, "axis %s of a stage starts at 0: only reduction variables take a lower bound", bd->name);
    char what[160];
    snprintf(what, sizeof what, "the bound of %s", bd->name);
    tsl_status st;
    if (bd->lo && (st = check_const_int(S, bd->lo, what)) != TSL_OK) return st;
    if ((st = check_const_int(S, bd->hi, what)) != TSL_OK) return st;
    v->lo = bd->lo;
    v->hi = bd->hi;
    v->bound_pos = bd->pos;
  }
  return TSL_OK;
}

static tsl_status sema_stage(sema *S, int index) {
  tsl_dsl_op *op = S->op;
  dsl_stage *s = op->stages[index];
  S->stage = -1;
  tsl_status st = declare(S, s->name, s->pos, "a stage", index);
  if (st != TSL_OK) return st;
  S->stage = index;
  for (int i = 0; i < s->naxes; i++) {
    dsl_var *v = s->axes[i];
    v->id = -1; /* hidden until declared */
  }
  for (int i = 0; i < s->naxes; i++) {
    dsl_var *v = s->axes[i];
    if ((st = declare(S, v->name, v->pos, "an axis", index + 1)) != TSL_OK) return st;
    v->id = op->nvars++;
  }
  dsl_node *body = s->body;
  if ((st = find_nested_reduce(S, body)) != TSL_OK) return st;
  dsl_node *value = body;
  if (body->kind == DN_REDUCE) {
    S->rvars = dsl_pool_alloc(S->pool, sizeof(dsl_var *) * (size_t)body->nvars);
    S->nrvars = 0;
    for (int i = 0; i < body->nvars; i++) {
      dsl_var *v = body->vars[i];
      if ((st = declare(S, v->name, v->pos, "a reduction variable", index + 1)) != TSL_OK) return st;
      v->id = op->nvars++;
      S->rvars[S->nrvars++] = v;
    }
    value = body->args[0];
    if ((st = check(S, value)) != TSL_OK) return st;
    if (body->args[1]) {
      if ((st = check(S, body->args[1])) != TSL_OK) return st;
      if ((st = need_bool(S, body->args[1], "the reduction's 'if'")) != TSL_OK) return st;
    }
  } else {
    if ((st = check(S, value)) != TSL_OK) return st;
  }
  char b1[16], b2[16];
  tsl_type t;
  if (value->cls == DC_TYPED) {
    t = value->type;
    if (s->has_dtype && !tsl_type_eq(t, s->dtype))
      return FAIL(dsl_node_start(value), "stage %s is declared %s but its body has type %s (cast it, e.g. %s(...))", s->name,
                  tstr(s->dtype, b1), tstr(t, b2), b1);
  } else {
    t = s->has_dtype ? s->dtype : value->cls == DC_CFLOAT ? TSL_F32 : value->cls == DC_CINT ? TSL_I32 : TSL_BOOL;
    if ((st = settle(S, value, t)) != TSL_OK) return st;
  }
  if (body->kind == DN_REDUCE) {
    if (!is_arith_type(t)) return FAIL(body->pos, "%s cannot combine %s values (cast them to a number first)", body->name, tstr(t, b1));
    body->cls = DC_TYPED;
    body->type = t;
  }
  s->dtype = t;
  s->has_dtype = true;
  if ((st = sema_bounds(S, s)) != TSL_OK) return st;
  for (int i = 0; i < s->naxes + S->nrvars; i++) {
    dsl_var *v = i < s->naxes ? s->axes[i] : S->rvars[i - s->naxes];
    if (!v->hi && v->nuses == 0)
      return FAIL(v->pos, "cannot infer the extent of %s %s of stage %s (add 'where %s < EXTENT')",
                  v->is_reduce ? "reduction variable" : "axis", v->name, s->name, v->name);
  }
  S->rvars = NULL;
  S->nrvars = 0;
  S->stage = -1;
  return TSL_OK;
}

tsl_status dsl_sema_op(dsl_pool *pool, tsl_dsl_op *op) {
  sema S_ = {pool, op, op->src, {0}, false, -1, NULL, 0, op->nstages};
  sema *S = &S_;
  if (dsl_is_reserved(op->name)) return FAIL(op->pos, "'%s' is a reserved word and cannot name an op", op->name);
  tsl_status st = sema_signature(S);
  if (st != TSL_OK) return st;
  for (int i = 0; i < op->nstages; i++)
    if ((st = sema_stage(S, i)) != TSL_OK) return st;
  return TSL_OK;
}
