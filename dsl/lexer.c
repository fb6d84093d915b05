/* DSL lexer: the whole text into a token array (docs/dsl.md section 2). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"

enum { MAX_IDENT = 127, MAX_NUMBER = 64 };

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

typedef struct lexer {
  dsl_pool *pool;
  const dsl_src *src;
  size_t i;
  int line, col;
  dsl_vec toks;
} lexer;

static int peek(const lexer *lx, size_t k) {
  size_t j = lx->i + k;
  return j < lx->src->len ? (unsigned char)lx->src->text[j] : -1;
}

static void advance(lexer *lx) {
  if (lx->src->text[lx->i] == '\n') {
    lx->line++;
    lx->col = 1;
  } else {
    lx->col++;
  }
  lx->i++;
}

static const struct {
  const char *s;
  dsl_tok_kind k;
} punct[] = {
    /* two-byte ones first */
    {"<=", TK_LE}, {">=", TK_GE}, {"==", TK_EQ}, {"!=", TK_NE}, {"&&", TK_ANDAND}, {"||", TK_OROR},
    {"<<", TK_SHL}, {">>", TK_SHR}, {"(", TK_LPAREN}, {")", TK_RPAREN}, {"[", TK_LBRACK},
    {"]", TK_RBRACK}, {",", TK_COMMA}, {":", TK_COLON}, {"=", TK_ASSIGN}, {"@", TK_AT},
    {"?", TK_QUESTION}, {"+", TK_PLUS}, {"-", TK_MINUS}, {"*", TK_STAR}, {"/", TK_SLASH},
    {"%", TK_PERCENT}, {"<", TK_LT}, {">", TK_GT}, {"!", TK_NOT}, {"&", TK_AMP}, {"|", TK_PIPE},
    {"^", TK_CARET}, {"~", TK_TILDE}, {".", TK_DOT},
};

const char *dsl_tok_spelling(dsl_tok_kind k) {
  for (size_t i = 0; i < sizeof punct / sizeof punct[0]; i++)
    if (punct[i].k == k) return punct[i].s;
  switch (k) {
  case TK_EOF: return "end of input";
  case TK_IDENT: return "identifier";
  case TK_INT: return "integer";
  case TK_FLOAT: return "number";
  case TK_STRING: return "string";
  default: return "?";
  }
}

const char *dsl_tok_describe(const dsl_token *t, char *buf, size_t n) {
  switch (t->kind) {
  case TK_EOF: snprintf(buf, n, "end of input"); break;
  case TK_IDENT: snprintf(buf, n, "identifier '%.*s'", t->len > 40 ? 40 : t->len, t->start); break;
  case TK_INT:
  case TK_FLOAT: snprintf(buf, n, "number '%.*s'", t->len > 40 ? 40 : t->len, t->start); break;
  case TK_STRING: snprintf(buf, n, "string %.*s%s", t->len > 40 ? 40 : t->len, t->start, t->len > 40 ? "..." : ""); break;
  default: snprintf(buf, n, "'%s'", dsl_tok_spelling(t->kind)); break;
  }
  return buf;
}

static dsl_token *push(lexer *lx, dsl_tok_kind k, size_t start, dsl_pos pos) {
  dsl_token *t = dsl_pool_alloc(lx->pool, sizeof *t);
  t->kind = k;
  t->pos = pos;
  t->start = lx->src->text + start;
  t->len = (int)(lx->i - start);
  dsl_vec_push(lx->pool, &lx->toks, t);
  return t;
}

static tsl_status lex_number(lexer *lx, dsl_pos pos) {
  size_t start = lx->i;
  bool is_float = false;
  if (peek(lx, 0) == '0' && (peek(lx, 1) == 'x' || peek(lx, 1) == 'X')) {
    advance(lx);
    advance(lx);
    if (!is_hex(peek(lx, 0))) return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "malformed hexadecimal number (expected a hex digit after '0x')");
    uint64_t v = 0;
    while (is_hex(peek(lx, 0))) {
      int c = peek(lx, 0);
      int d = is_digit(c) ? c - '0' : (c | 32) - 'a' + 10;
      if (v > ((uint64_t)INT64_MAX >> 4)) return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "integer literal does not fit in 64 bits (signed)");
      v = v * 16 + (uint64_t)d;
      advance(lx);
    }
    if (is_alpha(peek(lx, 0)) || peek(lx, 0) == '.')
      return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "malformed number");
    push(lx, TK_INT, start, pos)->ival = (int64_t)v;
    return TSL_OK;
  }
  while (is_digit(peek(lx, 0))) advance(lx);
  if (peek(lx, 0) == '.') {
    is_float = true;
    advance(lx);
    while (is_digit(peek(lx, 0))) advance(lx);
  }
  if (peek(lx, 0) == 'e' || peek(lx, 0) == 'E') {
    is_float = true;
    advance(lx);
    if (peek(lx, 0) == '+' || peek(lx, 0) == '-') advance(lx);
    if (!is_digit(peek(lx, 0))) return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "malformed number (expected digits in the exponent)");
    while (is_digit(peek(lx, 0))) advance(lx);
  }
  if (is_alpha(peek(lx, 0)) || peek(lx, 0) == '.' || is_digit(peek(lx, 0)))
    return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "malformed number");
  size_t len = lx->i - start;
  if (len > MAX_NUMBER) return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "number too long (more than %d characters)", MAX_NUMBER);
  char buf[MAX_NUMBER + 1];
  memcpy(buf, lx->src->text + start, len);
  buf[len] = '\0';
  if (is_float) {
    double v = strtod(buf, NULL);
    if (!isfinite(v)) return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "float literal out of range");
    push(lx, TK_FLOAT, start, pos)->fval = v;
  } else {
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) return dsl_fail(lx->src, TSL_ERR_PARSE, pos, "integer literal does not fit in 64 bits (signed)");
    push(lx, TK_INT, start, pos)->ival = v;
  }
  return TSL_OK;
}

tsl_status dsl_lex(dsl_pool *pool, const dsl_src *src, dsl_token **toks_out, int *ntoks) {
  lexer lx = {pool, src, 0, 1, 1, {0}};
  for (;;) {
    int c = peek(&lx, 0);
    dsl_pos pos = {lx.line, lx.col};
    if (c < 0) break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(&lx);
      continue;
    }
    if (c == '/' && peek(&lx, 1) == '/') {
      while (peek(&lx, 0) >= 0 && peek(&lx, 0) != '\n') advance(&lx);
      continue;
    }
    if (c == '/' && peek(&lx, 1) == '*') {
      advance(&lx);
      advance(&lx);
      while (!(peek(&lx, 0) == '*' && peek(&lx, 1) == '/')) {
        if (peek(&lx, 0) < 0) return dsl_fail(src, TSL_ERR_PARSE, pos, "unterminated comment (expected '*/', found end of input)");
        advance(&lx);
      }
      advance(&lx);
      advance(&lx);
      continue;
    }
    if (is_alpha(c)) {
      size_t start = lx.i;
      while (is_alpha(peek(&lx, 0)) || is_digit(peek(&lx, 0))) advance(&lx);
      if (lx.i - start > MAX_IDENT) return dsl_fail(src, TSL_ERR_PARSE, pos, "identifier longer than %d characters", MAX_IDENT);
      push(&lx, TK_IDENT, start, pos);
      continue;
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(&lx, 1)))) {
      tsl_status st = lex_number(&lx, pos);
      if (st != TSL_OK) return st;
      continue;
    }
    if (c == '"') {
      size_t start = lx.i;
      advance(&lx);
      for (;;) {
        int d = peek(&lx, 0);
        if (d < 0 || d == '\n') return dsl_fail(src, TSL_ERR_PARSE, pos, "unterminated string (expected '\"', found %s)", d < 0 ? "end of input" : "end of line");
        if (d == '\\') return dsl_fail(src, TSL_ERR_PARSE, (dsl_pos){lx.line, lx.col}, "escape sequences are not supported in strings");
        advance(&lx);
        if (d == '"') break;
      }
      push(&lx, TK_STRING, start, pos);
      continue;
    }
    bool matched = false;
    for (size_t k = 0; k < sizeof punct / sizeof punct[0] && !matched; k++) {
      const char *s = punct[k].s;
      size_t n = strlen(s);
      if (peek(&lx, 0) == (unsigned char)s[0] && (n == 1 || peek(&lx, 1) == (unsigned char)s[1])) {
        size_t start = lx.i;
        for (size_t j = 0; j < n; j++) advance(&lx);
        push(&lx, punct[k].k, start, pos);
        matched = true;
      }
    }
    if (matched) continue;
    if (c >= 33 && c < 127) return dsl_fail(src, TSL_ERR_PARSE, pos, "unexpected character '%c'", c);
    return dsl_fail(src, TSL_ERR_PARSE, pos, "unexpected byte 0x%02x", (unsigned)c);
  }
  dsl_pos pos = {lx.line, lx.col};
  push(&lx, TK_EOF, lx.i, pos);
  dsl_token *arr = dsl_pool_alloc(pool, sizeof(dsl_token) * (size_t)lx.toks.n);
  for (int i = 0; i < lx.toks.n; i++) arr[i] = *(dsl_token *)lx.toks.items[i];
  *toks_out = arr;
  *ntoks = lx.toks.n;
  return TSL_OK;
}
