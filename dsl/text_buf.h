/* tessel — a growable text buffer: printf-style appends into one malloc'd string.
 *
 * What writes generated texts uses it: operator texts of graph nodes
 * (the generated operators of ops/, ops/op_call.h), Winograd operator texts (ops/conv2d/winograd.c), workload keys
 * (ops/workload.c). A zeroed tsl_text_buf is empty (s NULL until the first append); s
 * is always NUL-terminated once allocated. An allocation or formatting failure sets oom
 * and makes every later append a no-op, so a writer appends freely and checks oom once
 * at the end. Ownership: the caller frees s (also after oom).
 */
#ifndef TESSEL_DSL_TEXT_BUF_H
#define TESSEL_DSL_TEXT_BUF_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_text_buf {
  char *s;    /* the text (malloc'd), NULL while empty */
  size_t len; /* bytes of text, without the NUL */
  size_t cap; /* bytes allocated */
  bool oom;   /* an append failed: s holds what came before it */
} tsl_text_buf;

/* Appends printf-style text to b (sets b->oom on allocation or formatting failure). */
void tsl_text_put(tsl_text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends v as a float literal of the DSL (docs/dsl.md): "%.9g" (exact for f32), always
 * with a '.', 'e', "inf" or "nan" so that it parses as a float, negative values in
 * parentheses ("(-0.5)") so that it can follow any operator. */
void tsl_text_put_float(tsl_text_buf *b, double v);

#ifdef __cplusplus
}
#endif
#endif
