/* Bump arenas for IR nodes: see arena.h. */
#include "ir/arena.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct block {
  struct block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} block;

struct tsl_arena {
  block *head;
  size_t bytes;
};

static _Thread_local tsl_arena *current;
static _Thread_local tsl_arena *default_arena;

enum { BLOCK_BYTES = 64 * 1024 };

tsl_arena *tsl_arena_new(void) {
  tsl_arena *a = calloc(1, sizeof *a);
  if (!a) {
    fprintf(stderr, "tessel: out of memory creating an IR arena\n");
    abort();
  }
  return a;
}

void tsl_arena_free(tsl_arena *a) {
  if (!a) return;
  for (block *b = a->head; b;) {
    block *n = b->next;
    free(b);
    b = n;
  }
  if (current == a) current = NULL;
  /* freeing the default arena by hand must not leave a dangling default behind */
  if (default_arena == a) default_arena = NULL;
  free(a);
}

tsl_arena *tsl_arena_set_current(tsl_arena *a) {
  tsl_arena *prev = current;
  current = a;
  return prev;
}

tsl_arena *tsl_arena_current(void) {
  if (current) return current;
  if (!default_arena) default_arena = tsl_arena_new();
  return default_arena;
}

void tsl_arena_free_default(void) {
  if (current == default_arena) current = NULL;
  tsl_arena_free(default_arena);
  default_arena = NULL;
}

void *tsl_alloc(size_t bytes) {
  tsl_arena *a = tsl_arena_current();
  bytes = (bytes + 15) & ~(size_t)15;
  if (bytes == 0) bytes = 16;
  block *b = a->head;
  if (!b || b->cap - b->used < bytes) {
    size_t cap = bytes > BLOCK_BYTES ? bytes : BLOCK_BYTES;
    block *nb = malloc(sizeof *nb + cap);
    if (!nb) {
      fprintf(stderr, "tessel: out of memory (IR arena, %zu bytes)\n", cap);
      abort();
    }
    nb->used = 0;
    nb->cap = cap;
    /* A large request gets its own block behind the head so the head keeps its space. */
    if (b && bytes > BLOCK_BYTES) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      a->head = nb;
    }
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += bytes;
  a->bytes += bytes;
  memset(p, 0, bytes);
  return p;
}

char *tsl_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  return tsl_memdup(s, n);
}

void *tsl_memdup(const void *p, size_t bytes) {
  void *q = tsl_alloc(bytes);
  if (bytes) memcpy(q, p, bytes);
  return q;
}

size_t tsl_arena_bytes(const tsl_arena *a) { return a ? a->bytes : 0; }
