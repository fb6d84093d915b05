/* What a piece of code prints to stderr, for tests of diagnostics and debug traces. */
#ifndef TESSEL_TESTS_CAPTURE_STDERR_H
#define TESSEL_TESTS_CAPTURE_STDERR_H

/* Runs fn(arg) with TSL_DEBUG set to `debug` (NULL: unset) and file descriptor 2 sent to
 * a temporary file; afterwards the caller's TSL_DEBUG and stderr are restored. Returns
 * what was printed (malloc'd, "" when nothing), or NULL when stderr could not be
 * redirected (fn not run). */
char *tsl_test_capture_stderr(const char *debug, void (*fn)(void *), void *arg);

#endif
