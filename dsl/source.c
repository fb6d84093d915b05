/* Pool memory and positioned error messages of the DSL front-end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"
#include "dsl/source_error.h"

struct dsl_pool_block {
  dsl_pool_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

enum { POOL_BLOCK = 16384 };

void *dsl_pool_alloc(dsl_pool *p, size_t bytes) {
  bytes = (bytes + 15) & ~(size_t)15;
  dsl_pool_block *b = p->head;
  if (!b || b->cap - b->used < bytes) {
    size_t cap = bytes > POOL_BLOCK ? bytes : POOL_BLOCK;
    b = malloc(sizeof *b + cap);
    if (!b) {
      fprintf(stderr, "tessel dsl: out of memory (%zu bytes)\n", cap);
      abort();
    }
    b->used = 0;
    b->cap = cap;
    b->next = p->head;
    p->head = b;
  }
  void *r = b->data + b->used;
  b->used += bytes;
  memset(r, 0, bytes);
  return r;
}

char *dsl_pool_strndup(dsl_pool *p, const char *s, size_t n) {
  char *r = dsl_pool_alloc(p, n + 1);
  memcpy(r, s, n);
  r[n] = '\0';
  return r;
}

void dsl_pool_free(dsl_pool *p) {
  dsl_pool_block *b = p->head;
  while (b) {
    dsl_pool_block *next = b->next;
    free(b);
    b = next;
  }
  p->head = NULL;
}

void dsl_vec_push(dsl_pool *p, dsl_vec *v, void *item) {
  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void **items = dsl_pool_alloc(p, sizeof(void *) * (size_t)cap);
    if (v->n) memcpy(items, v->items, sizeof(void *) * (size_t)v->n);
    v->items = items;
    v->cap = cap;
  }
  v->items[v->n++] = item;
}

/* The source line shown under a message is cut to a window around the column so that
 * a message stays readable (and within tsl_error's 4 KiB) on very long lines. */
enum { SHOW_BEFORE = 100, SHOW_AFTER = 60 };

tsl_status tsl_source_error_at(tsl_status st, const char *filename, int line, int col, const char *line_start,
                               const char *end, const char *why) {
  const char *file = filename ? filename : "<dsl>";
  const char *t = line_start, *line_end = t;
  while (line_end < end && *line_end != '\n' && *line_end != '\r') line_end++;
  size_t line_len = (size_t)(line_end - t);
  size_t c0 = col > 0 ? (size_t)col - 1 : 0;
  if (c0 > line_len) c0 = line_len;
  size_t from = c0 > SHOW_BEFORE ? c0 - SHOW_BEFORE : 0;
  size_t to = line_len - c0 > SHOW_AFTER ? c0 + SHOW_AFTER : line_len;

  char shown[SHOW_BEFORE + SHOW_AFTER + 8], caret[SHOW_BEFORE + 8];
  size_t n = 0, c = 0;
  for (size_t i = from; i < to; i++) {
    unsigned char ch = (unsigned char)t[i];
    /* keep tabs so that the caret lines up; hide other control bytes and non-ASCII */
    char shown_ch = ch == '\t' ? '\t' : (ch < 32 || ch >= 127) ? '?' : (char)ch;
    shown[n++] = shown_ch;
    if (i < c0) caret[c++] = shown_ch == '\t' ? '\t' : ' ';
  }
  shown[n] = '\0';
  caret[c] = '\0';
  return tsl_error(st, "%s:%d:%d: error: %s\n  %s%s\n  %s%s^", file, line, col, why, from ? "..." : "", shown,
                   from ? "   " : "", caret);
}

tsl_status dsl_vfail(const dsl_src *src, tsl_status st, dsl_pos pos, const char *fmt, va_list ap) {
  char what[1024];
  vsnprintf(what, sizeof what, fmt, ap);
  const char *file = src && src->filename ? src->filename : "<dsl>";
  if (!src || !src->text || pos.line < 1) return tsl_error(st, "%s: error: %s", file, what);
  /* find the line */
  const char *t = src->text, *end = src->text + src->len;
  for (int l = 1; l < pos.line && t < end; t++)
    if (*t == '\n') l++;
  return tsl_source_error_at(st, file, pos.line, pos.col, t, end, what);
}

tsl_status dsl_fail(const dsl_src *src, tsl_status st, dsl_pos pos, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tsl_status r = dsl_vfail(src, st, pos, fmt, ap);
  va_end(ap);
  return r;
}
