/* Schedule blocks (sched_block.h, docs/dsl.md section 11): parsing, then the checks that
 * need only the op (names, knob kinds, every use of every knob). */
#include "dsl/sched_block.h"

#include <stdio.h>
#include <string.h>

#include "dsl/ast.h"

typedef struct bparser {
  dsl_pool *pool;
  const dsl_src *src;
  const dsl_token *t;
  int n, i;
} bparser;

static const dsl_token *cur(const bparser *p) { return &p->t[p->i]; }
static void next(bparser *p) {
  if (p->i < p->n - 1) p->i++;
}
static bool is_word(const dsl_token *t, const char *s) {
  return t->kind == TK_IDENT && (int)strlen(s) == t->len && memcmp(t->start, s, (size_t)t->len) == 0;
}
static bool at_end(const bparser *p) { return cur(p)->kind == TK_EOF || is_word(cur(p), "op"); }

static tsl_status expected(bparser *p, const char *what) {
  char found[96];
  return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "expected %s (found %s)", what,
                  dsl_tok_describe(cur(p), found, sizeof found));
}

static tsl_status expect(bparser *p, dsl_tok_kind k, const char *what) {
  if (cur(p)->kind != k) return expected(p, what);
  next(p);
  return TSL_OK;
}

/* name := IDENT { "." IDENT } */
static tsl_status parse_name(bparser *p, const char **out, const char *what) {
  if (cur(p)->kind != TK_IDENT) return expected(p, what);
  const char *start = cur(p)->start;
  const dsl_token *last = cur(p);
  next(p);
  while (cur(p)->kind == TK_DOT && p->t[p->i + 1].kind == TK_IDENT &&
         cur(p)->start == last->start + last->len) {
    next(p);
    last = cur(p);
    next(p);
  }
  *out = dsl_pool_strndup(p->pool, start, (size_t)(last->start + last->len - start));
  return TSL_OK;
}

static tsl_status parse_int(bparser *p, int64_t *v) {
  bool neg = cur(p)->kind == TK_MINUS;
  if (neg) next(p);
  if (cur(p)->kind != TK_INT) return expected(p, "an integer");
  *v = neg ? -cur(p)->ival : cur(p)->ival;
  next(p);
  return TSL_OK;
}

/* "[" [ INT { "," INT } ] "]" (an empty list parses: the checks refuse it where it is) */
static tsl_status parse_int_list(bparser *p, int *n, const int64_t **values) {
  tsl_status st = expect(p, TK_LBRACK, "'[' opening a list of integers");
  dsl_vec items = {0};
  while (st == TSL_OK && cur(p)->kind != TK_RBRACK) {
    int64_t *v = dsl_pool_alloc(p->pool, sizeof *v);
    st = parse_int(p, v);
    if (st == TSL_OK) dsl_vec_push(p->pool, &items, v);
    if (st == TSL_OK && cur(p)->kind == TK_COMMA) next(p);
    else if (st == TSL_OK && cur(p)->kind != TK_RBRACK) st = expected(p, "',' or ']'");
  }
  if (st != TSL_OK) return st;
  next(p);
  int64_t *arr = dsl_pool_alloc(p->pool, sizeof *arr * (size_t)(items.n ? items.n : 1));
  for (int k = 0; k < items.n; k++) arr[k] = *(int64_t *)items.items[k];
  *n = items.n;
  *values = arr;
  return TSL_OK;
}

/* "[" name { "," name } "]" */
static tsl_status parse_name_list(bparser *p, dsl_vec *names) {
  tsl_status st = expect(p, TK_LBRACK, "'[' opening a loop order");
  while (st == TSL_OK) {
    const char *name;
    st = parse_name(p, &name, "an axis name");
    if (st != TSL_OK) break;
    dsl_vec_push(p->pool, names, (void *)name);
    if (cur(p)->kind == TK_COMMA) next(p);
    else if (cur(p)->kind == TK_RBRACK) {
      next(p);
      break;
    } else {
      st = expected(p, "',' or ']'");
    }
  }
  return st;
}

/* split(stage, axis [, [v...]] { , max = N | , divide = true|false }) */
static tsl_status parse_split_knob(bparser *p, tsl_dsl_knob *k) {
  k->kind = TSL_DSL_KNOB_SPLIT;
  k->divide = true;
  tsl_status st = expect(p, TK_LPAREN, "'(' after split");
  if (st == TSL_OK) st = parse_name(p, &k->stage, "a stage name");
  if (st == TSL_OK) st = expect(p, TK_COMMA, "',' after the stage");
  if (st == TSL_OK) st = parse_name(p, &k->axis, "an axis name");
  while (st == TSL_OK && cur(p)->kind == TK_COMMA) {
    next(p);
    if (cur(p)->kind == TK_LBRACK) {
      st = parse_int_list(p, &k->nvalues, &k->values);
      if (st == TSL_OK && k->nvalues == 0)
        st = dsl_fail(p->src, TSL_ERR_PARSE, p->t[p->i - 1].pos, "knob %s: empty list of candidates", k->name);
      continue;
    }
    const dsl_token *kw = cur(p);
    if (!is_word(kw, "max") && !is_word(kw, "divide")) return expected(p, "a list [..], max = N or divide = false");
    next(p);
    if ((st = expect(p, TK_ASSIGN, "'='")) != TSL_OK) break;
    if (is_word(kw, "max")) {
      st = parse_int(p, &k->max);
      if (st == TSL_OK && k->max < 1)
        st = dsl_fail(p->src, TSL_ERR_PARSE, kw->pos, "knob %s: max must be >= 1", k->name);
    } else if (is_word(cur(p), "true") || is_word(cur(p), "false")) {
      k->divide = is_word(cur(p), "true");
      next(p);
    } else {
      st = expected(p, "true or false");
    }
  }
  if (st == TSL_OK) st = expect(p, TK_RPAREN, "')' closing split");
  return st;
}

static tsl_status parse_knob(bparser *p, tsl_dsl_knob *k) {
  next(p); /* 'knob' */
  if (cur(p)->kind != TK_IDENT) return expected(p, "a knob name");
  k->name = dsl_pool_strndup(p->pool, cur(p)->start, (size_t)cur(p)->len);
  k->line = cur(p)->pos.line;
  k->col = cur(p)->pos.col;
  if (dsl_is_reserved(k->name))
    return dsl_fail(p->src, TSL_ERR_PARSE, cur(p)->pos, "'%s' is a reserved word, not a knob name", k->name);
  next(p);
  tsl_status st = expect(p, TK_ASSIGN, "'=' after the knob's name");
  if (st != TSL_OK) return st;
  const dsl_token *what = cur(p);
  if (what->kind == TK_LBRACK) {
    k->kind = TSL_DSL_KNOB_LIST;
    st = parse_int_list(p, &k->nvalues, &k->values);
    if (st == TSL_OK && k->nvalues == 0)
      st = dsl_fail(p->src, TSL_ERR_PARSE, what->pos, "knob %s: empty list of candidates", k->name);
    return st;
  }
  if (is_word(what, "split")) {
    next(p);
    return parse_split_knob(p, k);
  }
  dsl_vec items = {0};
  if (is_word(what, "reorder")) {
    k->kind = TSL_DSL_KNOB_REORDER;
    next(p);
    st = expect(p, TK_LPAREN, "'(' after reorder");
    int len = -1;
    while (st == TSL_OK) {
      const dsl_token *at = cur(p);
      int before = items.n;
      st = parse_name_list(p, &items);
      if (st == TSL_OK && len >= 0 && items.n - before != len)
        st = dsl_fail(p->src, TSL_ERR_PARSE, at->pos, "knob %s: this order has %d axes, the first %d", k->name,
                      items.n - before, len);
      if (len < 0) len = items.n - before;
      k->norders++;
      if (st == TSL_OK && cur(p)->kind == TK_COMMA) next(p);
      else if (st == TSL_OK) break;
    }
    if (st == TSL_OK) st = expect(p, TK_RPAREN, "',' or ')' closing reorder");
    k->order_len = len;
  } else if (is_word(what, "annotate")) {
    k->kind = TSL_DSL_KNOB_ANNOTATE;
    next(p);
    st = expect(p, TK_LPAREN, "'(' after annotate");
    while (st == TSL_OK) {
      const dsl_token *a = cur(p);
      if (!is_word(a, "vectorize") && !is_word(a, "unroll") && !is_word(a, "parallel"))
        return expected(p, "vectorize, unroll or parallel");
      for (int j = 0; j < items.n; j++)
        if (is_word(a, items.items[j]))
          return dsl_fail(p->src, TSL_ERR_PARSE, a->pos, "knob %s: %s twice", k->name, (const char *)items.items[j]);
      dsl_vec_push(p->pool, &items, dsl_pool_strndup(p->pool, a->start, (size_t)a->len));
      next(p);
      if (cur(p)->kind == TK_COMMA) next(p);
      else break;
    }
    if (st == TSL_OK) st = expect(p, TK_RPAREN, "',' or ')' closing annotate");
    k->nannots = items.n;
  } else {
    return expected(p, "split(...), reorder(...), annotate(...) or a list [..] after 'knob NAME ='");
  }
  if (k->kind == TSL_DSL_KNOB_REORDER) k->orders = (const char *const *)items.items;
  else k->annots = (const char *const *)items.items;
  return st;
}

/* primitive(arg, ...) [if knob]; knob names are resolved by dsl_check_schedule */
static tsl_status parse_step(bparser *p, tsl_dsl_sched_step *s) {
  s->primitive = dsl_pool_strndup(p->pool, cur(p)->start, (size_t)cur(p)->len);
  s->line = cur(p)->pos.line;
  s->col = cur(p)->pos.col;
  s->cond_knob = -1;
  next(p);
  tsl_status st = expect(p, TK_LPAREN, "'(' after the primitive (a step such as split(out, i, 8))");
  dsl_vec args = {0};
  while (st == TSL_OK) {
    tsl_dsl_sched_arg *a = dsl_pool_alloc(p->pool, sizeof *a);
    a->line = cur(p)->pos.line;
    a->col = cur(p)->pos.col;
    a->knob = -1;
    if ((is_word(cur(p), "nparts") || is_word(cur(p), "factor")) && p->t[p->i + 1].kind == TK_ASSIGN) {
      a->nparts = is_word(cur(p), "nparts");
      next(p);
      next(p);
      a->line = cur(p)->pos.line;
      a->col = cur(p)->pos.col;
    }
    if (cur(p)->kind == TK_INT || cur(p)->kind == TK_MINUS) {
      a->kind = TSL_DSL_ARG_INT;
      st = parse_int(p, &a->value);
    } else {
      a->kind = TSL_DSL_ARG_NAME; /* or a knob: dsl_check_schedule decides */
      st = parse_name(p, &a->name, "a name, an integer or a knob");
    }
    if (st != TSL_OK) break;
    dsl_vec_push(p->pool, &args, a);
    if (cur(p)->kind == TK_COMMA) next(p);
    else if (cur(p)->kind == TK_RPAREN) {
      next(p);
      break;
    } else {
      st = expected(p, "',' or ')'");
    }
  }
  if (st != TSL_OK) return st;
  tsl_dsl_sched_arg *arr = dsl_pool_alloc(p->pool, sizeof *arr * (size_t)(args.n ? args.n : 1));
  for (int k = 0; k < args.n; k++) arr[k] = *(tsl_dsl_sched_arg *)args.items[k];
  s->nargs = args.n;
  s->args = arr;
  if (is_word(cur(p), "if")) {
    next(p);
    if (cur(p)->kind != TK_IDENT) return expected(p, "a knob after 'if'");
    s->cond_name = dsl_pool_strndup(p->pool, cur(p)->start, (size_t)cur(p)->len);
    s->cond_line = cur(p)->pos.line;
    s->cond_col = cur(p)->pos.col; /* cond_knob is resolved by dsl_check_schedule */
    next(p);
  }
  return TSL_OK;
}

tsl_status dsl_parse_schedule(dsl_pool *pool, const dsl_src *src, const dsl_token *toks, int ntoks, int *i,
                              struct tsl_dsl_schedule **out) {
  bparser p = {pool, src, toks, ntoks, *i};
  next(&p); /* 'schedule' */
  dsl_vec knobs = {0}, steps = {0};
  tsl_status st = TSL_OK;
  while (st == TSL_OK && !at_end(&p)) {
    if (is_word(cur(&p), "knob")) {
      tsl_dsl_knob *k = dsl_pool_alloc(pool, sizeof *k);
      st = parse_knob(&p, k);
      dsl_vec_push(pool, &knobs, k);
    } else if (cur(&p)->kind == TK_IDENT) {
      tsl_dsl_sched_step *s = dsl_pool_alloc(pool, sizeof *s);
      st = parse_step(&p, s);
      dsl_vec_push(pool, &steps, s);
    } else {
      st = expected(&p, "'knob NAME = ...' or a schedule step such as split(out, i, 8)");
    }
  }
  if (st != TSL_OK) return st;
  tsl_dsl_schedule *b = dsl_pool_alloc(pool, sizeof *b);
  tsl_dsl_knob *ks = dsl_pool_alloc(pool, sizeof *ks * (size_t)(knobs.n ? knobs.n : 1));
  tsl_dsl_sched_step *ss = dsl_pool_alloc(pool, sizeof *ss * (size_t)(steps.n ? steps.n : 1));
  for (int k = 0; k < knobs.n; k++) ks[k] = *(tsl_dsl_knob *)knobs.items[k];
  for (int k = 0; k < steps.n; k++) ss[k] = *(tsl_dsl_sched_step *)steps.items[k];
  *b = (tsl_dsl_schedule){knobs.n, ks, steps.n, ss};
  *out = b;
  *i = p.i;
  return TSL_OK;
}
