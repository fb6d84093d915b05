/* A private kernel disk cache (codegen/jit_cache.h) for a test process or suite: a
 * fresh temporary TSL_CACHE_DIR, and on leaving, its removal and the previous
 * TSL_CACHE_DIR back (the test runner's own private folder, tests/main.c). */
#ifndef TESSEL_TESTS_TEST_CACHE_DIR_H
#define TESSEL_TESTS_TEST_CACHE_DIR_H

#include <stddef.h>

typedef struct tsl_test_cache_dir {
  char dir[128];  /* the folder while entered; "" otherwise */
  char prev[512]; /* TSL_CACHE_DIR before entering */
  int had_prev;
} tsl_test_cache_dir;

/* Makes a folder /tmp/<prefix>-XXXXXX and points TSL_CACHE_DIR at it. 0 on success,
 * -1 when the folder cannot be made (nothing changed). */
int tsl_test_cache_dir_enter(tsl_test_cache_dir *c, const char *prefix);

/* Removes the folder and everything in it and restores TSL_CACHE_DIR. */
void tsl_test_cache_dir_leave(tsl_test_cache_dir *c);

#endif
