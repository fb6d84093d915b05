/* Internal to dsl/: tokens, syntax tree and semantic annotations of the DSL front-end.
 *
 * Pipeline: dsl/lexer.c (text -> tokens), dsl/parser.c (tokens -> syntax tree),
 * dsl/sema.c (names, types, reduction placement, extent inference; annotates the tree),
 * dsl/instantiate.c (annotated tree + shapes + params -> tsl_te_program).
 * Everything of a module lives in its pool and is freed at once; the tree is read-only
 * after sema, so one module can be instantiated from several threads.
 */
#ifndef TESSEL_DSL_AST_H
#define TESSEL_DSL_AST_H

#include <stdarg.h>
#include <stddef.h>

#include "dsl/parser.h"

/* ---- memory pool ---- */

typedef struct dsl_pool_block dsl_pool_block;
typedef struct dsl_pool {
  dsl_pool_block *head;
} dsl_pool;

/* Zeroed memory, 16-byte aligned; aborts when malloc fails (like the IR arena). */
void *dsl_pool_alloc(dsl_pool *p, size_t bytes);
char *dsl_pool_strndup(dsl_pool *p, const char *s, size_t n);
void dsl_pool_free(dsl_pool *p);

/* A growable array of pointers in a pool. */
typedef struct dsl_vec {
  void **items;
  int n, cap;
} dsl_vec;
void dsl_vec_push(dsl_pool *p, dsl_vec *v, void *item);

/* ---- source and errors ---- */

typedef struct dsl_pos {
  int line, col; /* from 1 */
} dsl_pos;

typedef struct dsl_src {
  const char *text;
  size_t len;
  const char *filename;
} dsl_src;

/* Records "file:L:C: error: MSG\n  <line>\n  <caret>" with tsl_error(st, ...) and returns st. */
tsl_status dsl_fail(const dsl_src *src, tsl_status st, dsl_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
tsl_status dsl_vfail(const dsl_src *src, tsl_status st, dsl_pos pos, const char *fmt, va_list ap);

/* ---- tokens ---- */

typedef enum dsl_tok_kind {
  TK_EOF = 0,
  TK_IDENT,
  TK_INT,
  TK_FLOAT,
  TK_STRING,
  TK_LPAREN, TK_RPAREN, TK_LBRACK, TK_RBRACK, TK_COMMA, TK_COLON, TK_ASSIGN, TK_AT, TK_QUESTION, TK_DOT,
  TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
  TK_LT, TK_LE, TK_GT, TK_GE, TK_EQ, TK_NE,
  TK_ANDAND, TK_OROR, TK_NOT, TK_AMP, TK_PIPE, TK_CARET, TK_TILDE, TK_SHL, TK_SHR
} dsl_tok_kind;

typedef struct dsl_token {
  dsl_tok_kind kind;
  dsl_pos pos;
  const char *start; /* into the source text */
  int len;
  int64_t ival;      /* TK_INT */
  double fval;       /* TK_FLOAT */
} dsl_token;

/* Tokenizes the whole text into pool memory; the last token is TK_EOF.
 * TSL_ERR_PARSE on a bad character, an unterminated comment or string, a bad number. */
tsl_status dsl_lex(dsl_pool *pool, const dsl_src *src, dsl_token **toks, int *ntoks);
/* "'['", "identifier 'foo'", "end of input" ... into buf. */
const char *dsl_tok_describe(const dsl_token *t, char *buf, size_t n);
/* The spelling of a punctuation kind ("[", "&&"). */
const char *dsl_tok_spelling(dsl_tok_kind k);

/* ---- syntax tree ---- */

typedef enum dsl_node_kind {
  DN_INT,    /* ival */
  DN_FLOAT,  /* fval; inf and nan too */
  DN_BOOL,   /* ival 0/1 */
  DN_NAME,   /* name: an axis, reduction variable, size or scalar parameter */
  DN_READ,   /* name[args...] */
  DN_UNARY,  /* op (TK_MINUS, TK_PLUS, TK_NOT, TK_TILDE) args[0] */
  DN_BINARY, /* args[0] op args[1] */
  DN_COND,   /* args[0] ? args[1] : args[2] */
  DN_CALL,   /* builtin name(args...); fn set by sema */
  DN_CAST,   /* cast_type(args[0]) */
  DN_REDUCE  /* combiner over vars: args[0] = source, args[1] = condition or NULL */
} dsl_node_kind;

/* What a DN_NAME / DN_READ refers to (set by sema). */
typedef enum dsl_ref_kind {
  DR_NONE = 0,
  DR_VAR,   /* var: a stage axis or a reduction variable */
  DR_SIZE,  /* index into op->sizes */
  DR_PARAM, /* index into op->scalars */
  DR_INPUT, /* index into op->inputs */
  DR_STAGE  /* index into op->stages */
} dsl_ref_kind;

/* Value class of a node (set by sema): a typed IR value, or an untyped constant folded
 * at instantiation. */
typedef enum dsl_class { DC_TYPED = 0, DC_CINT, DC_CFLOAT, DC_CBOOL } dsl_class;

/* Built-in functions. */
typedef enum dsl_fn {
  FN_SELECT, FN_MAX, FN_MIN, FN_ABS, FN_EXP, FN_LOG, FN_SQRT, FN_TANH, FN_ERF, FN_FLOOR, FN_CEIL,
  FN_ROUND, FN_POW, FN_FMA, FN_ISNAN, FN_POPCOUNT, FN_SHL, FN_SHR, FN_BIT_AND, FN_BIT_OR,
  FN_BIT_XOR, FN_BIT_NOT, FN_COUNT_
} dsl_fn;
/* FN_COUNT_ if `name` is not a built-in function. */
dsl_fn dsl_fn_lookup(const char *name);

typedef struct dsl_node dsl_node;
typedef struct dsl_var dsl_var;

/* A bare use of a variable as an index: tensor (ref kind + index) dimension dim. */
typedef struct dsl_use {
  dsl_ref_kind ref;
  int index, dim;
  dsl_pos pos;
} dsl_use;

struct dsl_var {
  const char *name;
  dsl_pos pos;
  bool is_reduce;
  int id;            /* unique in the op: index into the instantiation environment */
  dsl_node *lo, *hi; /* from a where bound (lo only for reduction variables), or NULL */
  dsl_pos bound_pos;
  int nuses;
  dsl_use *uses;     /* bare index uses (sema), in text order */
};

struct dsl_node {
  dsl_node_kind kind;
  dsl_pos pos;
  int op;              /* token kind (unary/binary), tsl_combiner (reduce) */
  int64_t ival;
  double fval;
  const char *name;    /* DN_NAME, DN_READ, DN_CALL */
  int nargs;
  dsl_node **args;
  int nvars;           /* DN_REDUCE */
  dsl_var **vars;
  tsl_type cast_type;  /* DN_CAST */
  /* sema: */
  dsl_ref_kind ref;
  int ref_index;
  dsl_var *var;
  dsl_fn fn;
  dsl_class cls;
  tsl_type type;       /* DC_TYPED: the type; constants: the type they adapt to, if settled */
  bool settled;
  bool dynamic;        /* a constant class whose value depends on typed values (c ? 1 : 2):
                          not foldable, built in its settled type */
};

/* Position of the first token of an expression (a binary node's own position is its
 * operator's). */
dsl_pos dsl_node_start(const dsl_node *e);

typedef struct dsl_bound {
  const char *name;
  dsl_pos pos;
  dsl_node *lo, *hi;
} dsl_bound;

typedef struct dsl_stage {
  const char *name;
  dsl_pos pos;
  int naxes;
  dsl_var **axes;
  bool has_dtype;
  tsl_type dtype; /* declared, and after sema the stage's type */
  dsl_node *body;
  int nbounds;
  dsl_bound *bounds;
  const char *tag; /* NULL: default */
  bool is_output;
} dsl_stage;

typedef struct dsl_param {
  const char *name;
  dsl_pos pos;
  bool is_tensor;
  /* tensor: */
  tsl_type dtype;
  int ndim;
  dsl_node **dims;
  const char *type_text;
  /* scalar: */
  tsl_dsl_param_kind kind;
  bool has_default;
  dsl_pos default_pos;
  int64_t default_i;
  double default_f;
  int index; /* among the inputs or among the scalars */
} dsl_param;

/* A size: bound by its first bare occurrence as a dimension. */
typedef struct dsl_size {
  const char *name;
  dsl_pos pos;
  int input, dim;
} dsl_size;

typedef struct dsl_assert {
  dsl_pos pos;
  dsl_node *cond;
  const char *message; /* NULL: the condition's text */
  const char *text;    /* the condition as written */
} dsl_assert;

struct tsl_dsl_op {
  const char *name;
  const char *text; /* the op's source, from 'op' to the end of its last token */
  dsl_pos pos;
  const dsl_src *src;
  int nparams;
  dsl_param **params; /* in text order */
  int ninputs;
  dsl_param **inputs;
  int nscalars;
  dsl_param **scalars;
  int nsizes;
  dsl_size *sizes;
  int nstages;
  dsl_stage **stages;
  int nasserts;
  dsl_assert *asserts;
  int nvars; /* number of dsl_var ids */
  tsl_dsl_input_info *input_info;
  tsl_dsl_param_info *param_info;
  struct tsl_dsl_schedule *schedule; /* the schedule block (dsl/sched_block.h), or NULL */
};

struct tsl_dsl_module {
  dsl_pool pool;
  dsl_src src;
  int nops;
  tsl_dsl_op **ops;
};

/* A DSL dtype name (tsl_type_parse without f16). */
bool dsl_parse_dtype(const char *name, tsl_type *out);
/* Is `name` reserved (keyword, dtype or built-in function)? */
bool dsl_is_reserved(const char *name);

/* A folded constant: cls is DC_CINT (i), DC_CFLOAT (f) or DC_CBOOL (i is 0/1). */
typedef struct dsl_cval {
  dsl_class cls;
  int64_t i;
  double f;
} dsl_cval;

/* Values of the sizes and scalar parameters of one instantiation. */
typedef struct dsl_env {
  const tsl_dsl_op *op;
  const int64_t *sizes;   /* op->nsizes */
  const dsl_cval *params; /* op->nscalars */
} dsl_env;

/* Evaluates a constant expression (e->cls != DC_TYPED) exactly: 64-bit integers with
 * floor division, doubles. TSL_ERR_INVALID with the position on division by zero,
 * overflow or a shift out of [0, 64). */
tsl_status dsl_fold(const dsl_env *env, const dsl_node *e, dsl_cval *out);

/* Parser: tokens -> ops (syntax only). */
tsl_status dsl_parse_tokens(dsl_pool *pool, const dsl_src *src, const dsl_token *toks, int ntoks,
                            dsl_vec *ops);
/* Parses a schedule block at toks[*i] (the word 'schedule') up to the next 'op' or the
 * end (syntax only; dsl/sched_block.c); *i ends at that token. */
tsl_status dsl_parse_schedule(dsl_pool *pool, const dsl_src *src, const dsl_token *toks, int ntoks, int *i,
                              struct tsl_dsl_schedule **out);
/* Checks an op's schedule block against the op after sema (names, knob kinds and uses). */
tsl_status dsl_check_schedule(tsl_dsl_op *op);
/* Semantic analysis of one op (see docs/dsl.md sections 4-8). */
tsl_status dsl_sema_op(dsl_pool *pool, tsl_dsl_op *op);

#endif
