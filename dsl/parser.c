/* DSL parser: tokens -> syntax tree, by recursive descent over the grammar of
 * docs/dsl.md section 3 (one function per rule; binary operators by precedence climbing
 * with C's levels). Syntax only: names and types are checked by dsl/sema.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dsl/ast.h"

enum { MAX_DEPTH = 200 };

typedef struct parser {
  dsl_pool *pool;
  const dsl_src *src;
  const dsl_token *t;
  int n, i;
  int depth;
} parser;

static const dsl_token *cur(const parser *p) { return &p->t[p->i]; }
static const dsl_token *ahead(const parser *p, int k) {
  int j = p->i + k;
  return &p->t[j < p->n ? j : p->n - 1];
}
static void next(parser *p) {
  if (p->i < p->n - 1) p->i++;
}
static bool is_ident(const dsl_token *t, const char *s) {
  return t->kind == TK_IDENT && (int)strlen(s) == t->len && memcmp(t->start, s, (size_t)t->len) == 0;
}

static tsl_status fail_expected(parser *p, const char *expected) {
  char found[96];
  return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "expected %s (found %s)", expected,
                  dsl_tok_describe(cur(p), found, sizeof found));
}

static tsl_status expect(parser *p, dsl_tok_kind k, const char *context) {
  if (cur(p)->kind == k) {
    next(p);
    return TSL_OK;
  }
  char what[96], found[96];
  snprintf(what, sizeof what, "'%s'%s%s", dsl_tok_spelling(k), context ? " " : "", context ? context : "");
  return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "expected %s (found %s)", what,
                  dsl_tok_describe(cur(p), found, sizeof found));
}

static const char *tok_str(parser *p, const dsl_token *t) {
  return dsl_pool_strndup(p->pool, t->start, (size_t)t->len);
}

/* Source text from token a to token b (inclusive), whitespace and comments collapsed to
 * single spaces between tokens. */
static const char *span_text(parser *p, int a, int b) {
  size_t len = 0;
  for (int k = a; k <= b; k++) len += (size_t)p->t[k].len + 1;
  char *s = dsl_pool_alloc(p->pool, len + 1);
  size_t o = 0;
  for (int k = a; k <= b; k++) {
    const dsl_token *t = &p->t[k];
    bool space = k > a && t->start > p->t[k - 1].start + p->t[k - 1].len;
    bool tight = t->kind == TK_COMMA || t->kind == TK_RBRACK || t->kind == TK_RPAREN ||
                 (k > a && (p->t[k - 1].kind == TK_LBRACK || p->t[k - 1].kind == TK_LPAREN));
    if (space && !tight) s[o++] = ' ';
    memcpy(s + o, t->start, (size_t)t->len);
    o += (size_t)t->len;
  }
  s[o] = '\0';
  return s;
}

bool dsl_parse_dtype(const char *name, tsl_type *out) {
  if (strcmp(name, "f16") == 0) return false;
  return tsl_type_parse(name, out);
}

static bool tok_is_dtype(const dsl_token *t) {
  static const char *names[] = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (is_ident(t, names[k])) return true;
  return false;
}

/* Words that end or structure a statement and can never start an expression. */
static bool tok_is_structural(const dsl_token *t) {
  return is_ident(t, "op") || is_ident(t, "where") || is_ident(t, "if") || is_ident(t, "assert") ||
         is_ident(t, "int") || is_ident(t, "float");
}

static dsl_node *mk(parser *p, dsl_node_kind k, dsl_pos pos) {
  dsl_node *e = dsl_pool_alloc(p->pool, sizeof *e);
  e->kind = k;
  e->pos = pos;
  return e;
}

static tsl_status parse_expr(parser *p, dsl_node **out);
static tsl_status parse_binary(parser *p, int minprec, dsl_node **out);

static tsl_status parse_list(parser *p, dsl_tok_kind close, const char *what, dsl_vec *items) {
  for (;;) {
    dsl_node *e = NULL;
    tsl_status st = parse_expr(p, &e);
    if (st != TSL_OK) return st;
    dsl_vec_push(p->pool, items, e);
    if (cur(p)->kind == TK_COMMA) {
      next(p);
      continue;
    }
    if (cur(p)->kind == close) {
      next(p);
      return TSL_OK;
    }
    char expected[96];
    snprintf(expected, sizeof expected, "',' or '%s' %s", dsl_tok_spelling(close), what);
    return fail_expected(p, expected);
  }
}

static bool looks_like_reduction(const parser *p) {
  /* cur is max/min, ahead(1) is '(' */
  int k = 2;
  for (;;) {
    if (ahead(p, k)->kind != TK_IDENT) return false;
    k++;
    if (ahead(p, k)->kind == TK_COLON) return true;
    if (ahead(p, k)->kind != TK_COMMA) return false;
    k++;
  }
}

static tsl_status parse_reduction(parser *p, dsl_node **out) {
  const dsl_token *name = cur(p);
  dsl_node *e = mk(p, DN_REDUCE, name->pos);
  e->op = is_ident(name, "sum") ? TSL_REDUCE_SUM : is_ident(name, "max") ? TSL_REDUCE_MAX : TSL_REDUCE_MIN;
  e->name = tok_str(p, name);
  next(p);
  tsl_status st = expect(p, TK_LPAREN, "after the reduction name");
  if (st != TSL_OK) return st;
  dsl_vec vars = {0};
  for (;;) {
    if (cur(p)->kind != TK_IDENT) return fail_expected(p, "a reduction variable name");
    dsl_var *v = dsl_pool_alloc(p->pool, sizeof *v);
    v->name = tok_str(p, cur(p));
    v->pos = cur(p)->pos;
    v->is_reduce = true;
    dsl_vec_push(p->pool, &vars, v);
    next(p);
    if (cur(p)->kind == TK_COMMA) {
      next(p);
      continue;
    }
    if (cur(p)->kind == TK_COLON) {
      next(p);
      break;
    }
    return fail_expected(p, "',' or ':' after the reduction variables");
  }
  e->nvars = vars.n;
  e->vars = (dsl_var **)vars.items;
  e->nargs = 2;
  e->args = dsl_pool_alloc(p->pool, 2 * sizeof(dsl_node *));
  if ((st = parse_expr(p, &e->args[0])) != TSL_OK) return st;
  if (is_ident(cur(p), "if")) {
    next(p);
    if ((st = parse_expr(p, &e->args[1])) != TSL_OK) return st;
  }
  if (cur(p)->kind != TK_RPAREN) return fail_expected(p, "')' or 'if' to end the reduction");
  next(p);
  *out = e;
  return TSL_OK;
}

static tsl_status parse_primary(parser *p, dsl_node **out) {
  const dsl_token *t = cur(p);
  tsl_status st;
  switch (t->kind) {
  case TK_INT: {
    dsl_node *e = mk(p, DN_INT, t->pos);
    e->ival = t->ival;
    next(p);
    *out = e;
    return TSL_OK;
  }
  case TK_FLOAT: {
    dsl_node *e = mk(p, DN_FLOAT, t->pos);
    e->fval = t->fval;
    next(p);
    *out = e;
    return TSL_OK;
  }
  case TK_LPAREN: {
    next(p);
    if ((st = parse_expr(p, out)) != TSL_OK) return st;
    return expect(p, TK_RPAREN, "to close '('");
  }
  case TK_IDENT: break;
  default: return fail_expected(p, "an expression");
  }
  if (tok_is_structural(t)) return fail_expected(p, "an expression");
  if (is_ident(t, "true") || is_ident(t, "false")) {
    dsl_node *e = mk(p, DN_BOOL, t->pos);
    e->ival = is_ident(t, "true");
    next(p);
    *out = e;
    return TSL_OK;
  }
  if (is_ident(t, "inf") || is_ident(t, "nan")) {
    dsl_node *e = mk(p, DN_FLOAT, t->pos);
    e->fval = is_ident(t, "inf") ? (double)INFINITY : (double)NAN;
    next(p);
    *out = e;
    return TSL_OK;
  }
  if (is_ident(t, "sum")) return parse_reduction(p, out);
  if ((is_ident(t, "max") || is_ident(t, "min")) && ahead(p, 1)->kind == TK_LPAREN && looks_like_reduction(p))
    return parse_reduction(p, out);
  if (tok_is_dtype(t)) {
    const char *name = tok_str(p, t);
    dsl_node *e = mk(p, DN_CAST, t->pos);
    if (!dsl_parse_dtype(name, &e->cast_type))
      return dsl_fail(p->src, TSL_ERR_PARSE, t->pos, "dtype %s is not supported (f16 is a storage type; use f32)", name);
    next(p);
    if (cur(p)->kind != TK_LPAREN) {
      char found[96];
      return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "expected '(' after the type %s: a cast is written %s(x) (found %s)",
                      name, name, dsl_tok_describe(cur(p), found, sizeof found));
    }
    next(p);
    e->nargs = 1;
    e->args = dsl_pool_alloc(p->pool, sizeof(dsl_node *));
    if ((st = parse_expr(p, &e->args[0])) != TSL_OK) return st;
    if (cur(p)->kind != TK_RPAREN) return fail_expected(p, "')' to end the cast (it takes one argument)");
    next(p);
    *out = e;
    return TSL_OK;
  }
  const char *name = tok_str(p, t);
  next(p);
  if (cur(p)->kind == TK_LPAREN || cur(p)->kind == TK_LBRACK) {
    bool call = cur(p)->kind == TK_LPAREN;
    dsl_node *e = mk(p, call ? DN_CALL : DN_READ, t->pos);
    e->name = name;
    next(p);
    dsl_vec args = {0};
    if ((st = parse_list(p, call ? TK_RPAREN : TK_RBRACK, call ? "in the argument list" : "in the index list", &args)) != TSL_OK)
      return st;
    e->nargs = args.n;
    e->args = (dsl_node **)args.items;
    *out = e;
    return TSL_OK;
  }
  dsl_node *e = mk(p, DN_NAME, t->pos);
  e->name = name;
  *out = e;
  return TSL_OK;
}

static tsl_status parse_unary(parser *p, dsl_node **out) {
  const dsl_token *t = cur(p);
  if (t->kind == TK_MINUS || t->kind == TK_PLUS || t->kind == TK_NOT || t->kind == TK_TILDE) {
    if (++p->depth > MAX_DEPTH)
      return dsl_fail(p->src, TSL_ERR_PARSE, t->pos, "expression nested too deeply (more than %d levels)", MAX_DEPTH);
    dsl_node *e = mk(p, DN_UNARY, t->pos);
    e->op = t->kind;
    next(p);
    e->nargs = 1;
    e->args = dsl_pool_alloc(p->pool, sizeof(dsl_node *));
    tsl_status st = parse_unary(p, &e->args[0]);
    p->depth--;
    *out = e;
    return st;
  }
  return parse_primary(p, out);
}

static int binary_prec(dsl_tok_kind k) {
  switch (k) {
  case TK_OROR: return 1;
  case TK_ANDAND: return 2;
  case TK_PIPE: return 3;
  case TK_CARET: return 4;
  case TK_AMP: return 5;
  case TK_EQ: case TK_NE: return 6;
  case TK_LT: case TK_LE: case TK_GT: case TK_GE: return 7;
  case TK_SHL: case TK_SHR: return 8;
  case TK_PLUS: case TK_MINUS: return 9;
  case TK_STAR: case TK_SLASH: case TK_PERCENT: return 10;
  default: return 0;
  }
}
enum { PREC_SHIFT = 8 };

static tsl_status parse_binary(parser *p, int minprec, dsl_node **out) {
  dsl_node *lhs;
  tsl_status st = parse_unary(p, &lhs);
  if (st != TSL_OK) return st;
  for (;;) {
    const dsl_token *t = cur(p);
    int prec = binary_prec(t->kind);
    if (prec == 0 || prec < minprec) break;
    dsl_node *e = mk(p, DN_BINARY, t->pos);
    e->op = t->kind;
    next(p);
    e->nargs = 2;
    e->args = dsl_pool_alloc(p->pool, 2 * sizeof(dsl_node *));
    e->args[0] = lhs;
    if ((st = parse_binary(p, prec + 1, &e->args[1])) != TSL_OK) return st;
    lhs = e;
  }
  *out = lhs;
  return TSL_OK;
}

static tsl_status parse_expr(parser *p, dsl_node **out) {
  if (++p->depth > MAX_DEPTH)
    return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "expression nested too deeply (more than %d levels)", MAX_DEPTH);
  dsl_node *c;
  tsl_status st = parse_binary(p, 1, &c);
  if (st == TSL_OK && cur(p)->kind == TK_QUESTION) {
    dsl_node *e = mk(p, DN_COND, cur(p)->pos);
    next(p);
    e->nargs = 3;
    e->args = dsl_pool_alloc(p->pool, 3 * sizeof(dsl_node *));
    e->args[0] = c;
    if ((st = parse_expr(p, &e->args[1])) == TSL_OK && (st = expect(p, TK_COLON, "in '?:'")) == TSL_OK)
      st = parse_expr(p, &e->args[2]);
    c = e;
  }
  p->depth--;
  *out = c;
  return st;
}

/* ---- statements ---- */

static tsl_status parse_param(parser *p, dsl_vec *params) {
  if (cur(p)->kind != TK_IDENT) return fail_expected(p, "a parameter name");
  dsl_param *pr = dsl_pool_alloc(p->pool, sizeof *pr);
  pr->name = tok_str(p, cur(p));
  pr->pos = cur(p)->pos;
  next(p);
  tsl_status st = expect(p, TK_COLON, "after the parameter name");
  if (st != TSL_OK) return st;
  const dsl_token *ty = cur(p);
  if (is_ident(ty, "int") || is_ident(ty, "float")) {
    pr->kind = is_ident(ty, "int") ? TSL_DSL_PARAM_INT : TSL_DSL_PARAM_FLOAT;
    next(p);
    if (cur(p)->kind == TK_ASSIGN) {
      next(p);
      pr->has_default = true;
      pr->default_pos = cur(p)->pos;
      bool neg = false;
      if (cur(p)->kind == TK_MINUS) {
        neg = true;
        next(p);
      }
      if (cur(p)->kind == TK_INT) {
        pr->default_i = neg ? -cur(p)->ival : cur(p)->ival;
        pr->default_f = (double)pr->default_i;
      } else if (cur(p)->kind == TK_FLOAT) {
        if (pr->kind == TSL_DSL_PARAM_INT)
          return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "the default of int parameter %s must be an integer", pr->name);
        pr->default_f = neg ? -cur(p)->fval : cur(p)->fval;
      } else {
        return fail_expected(p, "a number as the default value");
      }
      next(p);
    }
    dsl_vec_push(p->pool, params, pr);
    return TSL_OK;
  }
  if (ty->kind != TK_IDENT || !tok_is_dtype(ty)) {
    char found[96];
    return dsl_fail(p->src, TSL_ERR_PARSE, ty->pos,
                    "unknown type (expected a dtype such as f32[...], or int or float, found %s)",
                    dsl_tok_describe(ty, found, sizeof found));
  }
  int first = p->i;
  const char *dt = tok_str(p, ty);
  if (!dsl_parse_dtype(dt, &pr->dtype))
    return dsl_fail(p->src, TSL_ERR_PARSE, ty->pos, "dtype %s is not supported (f16 is a storage type; use f32)", dt);
  pr->is_tensor = true;
  next(p);
  if ((st = expect(p, TK_LBRACK, "after the tensor's dtype (its shape)")) != TSL_OK) return st;
  dsl_vec dims = {0};
  if ((st = parse_list(p, TK_RBRACK, "in the shape", &dims)) != TSL_OK) return st;
  pr->ndim = dims.n;
  pr->dims = (dsl_node **)dims.items;
  pr->type_text = span_text(p, first, p->i - 1);
  dsl_vec_push(p->pool, params, pr);
  return TSL_OK;
}

static tsl_status parse_bound(parser *p, dsl_vec *bounds) {
  dsl_bound *b = dsl_pool_alloc(p->pool, sizeof *b);
  tsl_status st;
  if (cur(p)->kind == TK_IDENT && ahead(p, 1)->kind == TK_LT) {
    b->name = tok_str(p, cur(p));
    b->pos = cur(p)->pos;
    next(p);
    next(p);
  } else {
    if ((st = parse_binary(p, PREC_SHIFT, &b->lo)) != TSL_OK) return st;
    if (cur(p)->kind != TK_LE) return fail_expected(p, "'VAR < EXTENT' or 'LOW <= VAR < EXTENT' in the where clause");
    next(p);
    if (cur(p)->kind != TK_IDENT) return fail_expected(p, "a variable name after '<='");
    b->name = tok_str(p, cur(p));
    b->pos = cur(p)->pos;
    next(p);
    if ((st = expect(p, TK_LT, "after the variable of the bound")) != TSL_OK) return st;
  }
  if ((st = parse_binary(p, PREC_SHIFT, &b->hi)) != TSL_OK) return st;
  dsl_vec_push(p->pool, bounds, b);
  return TSL_OK;
}

static tsl_status parse_stage(parser *p, dsl_vec *stages) {
  dsl_stage *s = dsl_pool_alloc(p->pool, sizeof *s);
  tsl_status st;
  while (cur(p)->kind == TK_AT) {
    next(p);
    const dsl_token *a = cur(p);
    if (is_ident(a, "output")) {
      s->is_output = true;
      next(p);
    } else if (is_ident(a, "tag")) {
      if (s->tag) return dsl_fail(p->src, TSL_ERR_PARSE, a->pos, "duplicate @tag on one stage");
      next(p);
      if ((st = expect(p, TK_LPAREN, "after @tag")) != TSL_OK) return st;
      if (cur(p)->kind != TK_STRING) return fail_expected(p, "a string such as \"elemwise\"");
      s->tag = dsl_pool_strndup(p->pool, cur(p)->start + 1, (size_t)cur(p)->len - 2);
      next(p);
      if ((st = expect(p, TK_RPAREN, "after the tag")) != TSL_OK) return st;
    } else {
      char found[96];
      return dsl_fail(p->src, TSL_ERR_PARSE, a->pos, "unknown attribute (expected 'tag' or 'output' after '@', found %s)",
                      dsl_tok_describe(a, found, sizeof found));
    }
  }
  if (cur(p)->kind != TK_IDENT || tok_is_structural(cur(p))) return fail_expected(p, "a stage name");
  s->name = tok_str(p, cur(p));
  s->pos = cur(p)->pos;
  next(p);
  if ((st = expect(p, TK_LBRACK, "after the stage name (its axes)")) != TSL_OK) return st;
  dsl_vec axes = {0};
  for (;;) {
    if (cur(p)->kind != TK_IDENT) return fail_expected(p, "an axis name");
    dsl_var *v = dsl_pool_alloc(p->pool, sizeof *v);
    v->name = tok_str(p, cur(p));
    v->pos = cur(p)->pos;
    dsl_vec_push(p->pool, &axes, v);
    next(p);
    if (cur(p)->kind == TK_COMMA) {
      next(p);
      continue;
    }
    if (cur(p)->kind == TK_RBRACK) {
      next(p);
      break;
    }
    return fail_expected(p, "',' or ']' in the axis list");
  }
  s->naxes = axes.n;
  s->axes = (dsl_var **)axes.items;
  if (cur(p)->kind == TK_COLON) {
    next(p);
    const dsl_token *ty = cur(p);
    if (!tok_is_dtype(ty)) return fail_expected(p, "the stage's dtype after ':'");
    const char *dt = tok_str(p, ty);
    if (!dsl_parse_dtype(dt, &s->dtype))
      return dsl_fail(p->src, TSL_ERR_PARSE, ty->pos, "dtype %s is not supported (f16 is a storage type; use f32)", dt);
    s->has_dtype = true;
    next(p);
  }
  if ((st = expect(p, TK_ASSIGN, "after the stage's axes")) != TSL_OK) return st;
  if ((st = parse_expr(p, &s->body)) != TSL_OK) return st;
  if (is_ident(cur(p), "where")) {
    next(p);
    dsl_vec bounds = {0};
    do {
      if (bounds.n) next(p);
      if ((st = parse_bound(p, &bounds)) != TSL_OK) return st;
    } while (cur(p)->kind == TK_COMMA);
    s->nbounds = bounds.n;
    s->bounds = dsl_pool_alloc(p->pool, sizeof(dsl_bound) * (size_t)bounds.n);
    for (int k = 0; k < bounds.n; k++) s->bounds[k] = *(dsl_bound *)bounds.items[k];
  }
  dsl_vec_push(p->pool, stages, s);
  return TSL_OK;
}

static tsl_status parse_assert(parser *p, dsl_vec *asserts) {
  dsl_assert *a = dsl_pool_alloc(p->pool, sizeof *a);
  a->pos = cur(p)->pos;
  next(p);
  int first = p->i;
  tsl_status st = parse_expr(p, &a->cond);
  if (st != TSL_OK) return st;
  a->text = span_text(p, first, p->i - 1);
  if (cur(p)->kind == TK_COMMA) {
    next(p);
    if (cur(p)->kind != TK_STRING) return fail_expected(p, "a message string after ','");
    a->message = dsl_pool_strndup(p->pool, cur(p)->start + 1, (size_t)cur(p)->len - 2);
    next(p);
  }
  dsl_vec_push(p->pool, asserts, a);
  return TSL_OK;
}

static tsl_status parse_op(parser *p, dsl_vec *ops) {
  tsl_dsl_op *op = dsl_pool_alloc(p->pool, sizeof *op);
  op->src = p->src;
  const dsl_token *first = cur(p);
  next(p); /* 'op' */
  if (cur(p)->kind != TK_IDENT || tok_is_structural(cur(p))) return fail_expected(p, "the op's name after 'op'");
  op->name = tok_str(p, cur(p));
  op->pos = cur(p)->pos;
  next(p);
  tsl_status st = expect(p, TK_LPAREN, "after the op's name");
  if (st != TSL_OK) return st;
  dsl_vec params = {0}, stages = {0}, asserts = {0};
  if (cur(p)->kind != TK_RPAREN) {
    for (;;) {
      if ((st = parse_param(p, &params)) != TSL_OK) return st;
      if (cur(p)->kind == TK_COMMA) {
        next(p);
        continue;
      }
      if (cur(p)->kind == TK_RPAREN) break;
      return fail_expected(p, "',' or ')' in the parameter list");
    }
  }
  next(p);
  for (;;) {
    const dsl_token *t = cur(p);
    if (is_ident(t, "schedule") && ahead(p, 1)->kind != TK_LBRACK) {
      if (stages.n == 0) return fail_expected(p, "a stage such as out[i] = ... before the schedule block");
      if ((st = dsl_parse_schedule(p->pool, p->src, p->t, p->n, &p->i, &op->schedule)) != TSL_OK) return st;
      break; /* the block runs to the next op */
    } else if (is_ident(t, "assert")) {
      if ((st = parse_assert(p, &asserts)) != TSL_OK) return st;
    } else if (t->kind == TK_AT || (t->kind == TK_IDENT && !is_ident(t, "op"))) {
      if ((st = parse_stage(p, &stages)) != TSL_OK) return st;
    } else if (t->kind == TK_EOF || is_ident(t, "op")) {
      if (stages.n == 0) return fail_expected(p, "a stage such as out[i] = ...");
      break;
    } else {
      return fail_expected(p, stages.n ? "a stage, 'assert', 'op' or end of input" : "a stage such as out[i] = ...");
    }
  }
  op->nparams = params.n;
  op->params = (dsl_param **)params.items;
  op->nstages = stages.n;
  op->stages = (dsl_stage **)stages.items;
  const dsl_token *last = &p->t[p->i > 0 ? p->i - 1 : 0];
  op->text = dsl_pool_strndup(p->pool, first->start, (size_t)(last->start + last->len - first->start));
  op->nasserts = asserts.n;
  op->asserts = dsl_pool_alloc(p->pool, sizeof(dsl_assert) * (size_t)(asserts.n ? asserts.n : 1));
  for (int k = 0; k < asserts.n; k++) op->asserts[k] = *(dsl_assert *)asserts.items[k];
  dsl_vec_push(p->pool, ops, op);
  return TSL_OK;
}

tsl_status dsl_parse_tokens(dsl_pool *pool, const dsl_src *src, const dsl_token *toks, int ntoks, dsl_vec *ops) {
  parser p = {pool, src, toks, ntoks, 0, 0};
  while (cur(&p)->kind != TK_EOF) {
    if (!is_ident(cur(&p), "op")) return fail_expected(&p, ops->n ? "'op' or end of input" : "'op'");
    tsl_status st = parse_op(&p, ops);
    if (st != TSL_OK) return st;
  }
  return TSL_OK;
}
