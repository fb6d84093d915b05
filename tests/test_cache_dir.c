/* A private kernel disk cache for tests (test_cache_dir.h). */
#include "test_cache_dir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  remove(path); /* best effort: a failure leaves that entry and goes on */
  return 0;
}

int tsl_test_cache_dir_enter(tsl_test_cache_dir *c, const char *prefix) {
  memset(c, 0, sizeof *c);
  const char *prev = getenv("TSL_CACHE_DIR");
  c->had_prev = prev != NULL;
  if (prev) snprintf(c->prev, sizeof c->prev, "%s", prev);
  snprintf(c->dir, sizeof c->dir, "/tmp/%s-XXXXXX", prefix);
  if (!mkdtemp(c->dir) || setenv("TSL_CACHE_DIR", c->dir, 1) != 0) {
    c->dir[0] = '\0';
    return -1;
  }
  return 0;
}

void tsl_test_cache_dir_leave(tsl_test_cache_dir *c) {
  if (!c->dir[0]) return;
  nftw(c->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (c->had_prev) setenv("TSL_CACHE_DIR", c->prev, 1);
  else unsetenv("TSL_CACHE_DIR");
  c->dir[0] = '\0';
}
