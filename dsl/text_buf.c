/* The growable text buffer (text_buf.h). */
#include "dsl/text_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

void tsl_text_put(tsl_text_buf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if (b->s && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 512;
    while (cap <= b->len + (size_t)n) cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->oom = true;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
}

void tsl_text_put_float(tsl_text_buf *b, double v) {
  char tmp[48];
  snprintf(tmp, sizeof tmp, "%.9g", v);
  if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
  tsl_text_put(b, "%s%s%s", v < 0 ? "(" : "", tmp, v < 0 ? ")" : "");
}
