/* Test modules that run a shell script (tests/install, tests/python): run it with the
 * source and build folders as arguments, echo its output indented under the CUnit line,
 * and assert on its exit status. */
#ifndef TESSEL_TESTS_SCRIPT_RUN_H
#define TESSEL_TESTS_SCRIPT_RUN_H

/* Runs `<source root>/<script> <source root> <build root>` (stderr joined to stdout)
 * printing its output line by line with two spaces of indent, and asserts (CUnit) that
 * it exits 0 — or 77, "skipped", after which the script has printed why. */
void tsl_test_script(const char *script);

#endif
