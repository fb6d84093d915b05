/* Registers the ir module's CUnit suites and holds their shared helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_tests.h"

void tsl_tests_ir(void);

static tsl_arena *suite_arena, *suite_prev;

int ir_suite_init(void) {
  suite_arena = tsl_arena_new();
  suite_prev = tsl_arena_set_current(suite_arena);
  return 0;
}

int ir_suite_cleanup(void) {
  tsl_arena_set_current(suite_prev);
  tsl_arena_free(suite_arena);
  suite_arena = NULL;
  return 0;
}

int ir_test_scale(void) {
  const char *s = getenv("TSL_IR_TEST_SCALE");
  int v = s ? atoi(s) : 1;
  return v < 1 ? 1 : v;
}

void ir_add_suite(const char *name, const ir_test *tests) {
  CU_pSuite s = CU_add_suite(name, ir_suite_init, ir_suite_cleanup);
  if (!s) {
    fprintf(stderr, "ir tests: cannot add suite %s: %s\n", name, CU_get_error_msg());
    return;
  }
  for (const ir_test *t = tests; t->name; t++) CU_add_test(s, t->name, t->fn);
}

static void check_text(char *got, const char *want, const char *file, int line) {
  bool ok = strcmp(got, want) == 0;
  if (!ok) fprintf(stderr, "\n%s:%d: text differs\n  got:  [%s]\n  want: [%s]\n", file, line, got, want);
  CU_assertImplementation(ok, (unsigned)line, "IR text matches", file, "", CU_FALSE);
  free(got);
}

void ir_check_expr_text(const tsl_expr *e, const char *want, const char *file, int line) {
  check_text(tsl_expr_to_string(e), want, file, line);
}

void ir_check_stmt_text(const tsl_stmt *s, const char *want, const char *file, int line) {
  check_text(tsl_stmt_to_string(s), want, file, line);
}

void tsl_tests_ir(void) {
  tsl_tests_ir_printer();
  tsl_tests_ir_equality();
  tsl_tests_ir_interval();
  tsl_tests_ir_simplify();
  tsl_tests_ir_simplify_random();
  tsl_tests_ir_pass_simplify();
  tsl_tests_ir_pass_random();
}
