/* tests/capture_stderr.h */
#include "capture_stderr.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tsl_test_capture_stderr(const char *debug, void (*fn)(void *), void *arg) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  int saved = dup(2);
  if (!tmp || saved < 0) {
    if (tmp) fclose(tmp);
    if (saved >= 0) close(saved);
    return NULL;
  }
  /* the caller's TSL_DEBUG comes back afterwards */
  const char *before = getenv("TSL_DEBUG");
  char *prev = before ? strdup(before) : NULL;
  if (debug) setenv("TSL_DEBUG", debug, 1);
  else unsetenv("TSL_DEBUG");
  bool redirected = dup2(fileno(tmp), 2) >= 0;
  if (redirected) fn(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  if (prev) setenv("TSL_DEBUG", prev, 1);
  else unsetenv("TSL_DEBUG");
  free(prev);
  if (!redirected) {
    fclose(tmp);
    return NULL;
  }
  long n = ftell(tmp);
  char *text = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
  rewind(tmp);
  if (text && n > 0 && fread(text, 1, (size_t)n, tmp) != (size_t)n) text[0] = '\0';
  fclose(tmp);
  return text;
}
