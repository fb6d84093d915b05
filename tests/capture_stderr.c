/* tests/capture_stderr.h */
#include "capture_stderr.h"

#include <stdio.h>
#include <stdlib.h>
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
  if (debug) setenv("TSL_DEBUG", debug, 1);
  else unsetenv("TSL_DEBUG");
  dup2(fileno(tmp), 2);
  fn(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  unsetenv("TSL_DEBUG");
  long n = ftell(tmp);
  char *text = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
  rewind(tmp);
  if (text && n > 0 && fread(text, 1, (size_t)n, tmp) != (size_t)n) text[0] = '\0';
  fclose(tmp);
  return text;
}
