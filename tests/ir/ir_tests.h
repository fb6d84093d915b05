/* Shared declarations of the ir module's CUnit suites. */
#ifndef TESSEL_TESTS_IR_IR_TESTS_H
#define TESSEL_TESTS_IR_IR_TESTS_H

#include <CUnit/CUnit.h>

#include "ir/analysis.h"
#include "ir/ir.h"

/* Suite init/cleanup: every suite builds its nodes in a fresh arena. */
int ir_suite_init(void);
int ir_suite_cleanup(void);

/* Adds a suite with the given tests ({name, fn} pairs ending with {NULL, NULL}). */
typedef struct ir_test {
  const char *name;
  CU_TestFunc fn;
} ir_test;
void ir_add_suite(const char *name, const ir_test *tests);

/* Multiplier for the number of random cases (environment variable TSL_IR_TEST_SCALE,
 * default 1), for long soak runs of the property tests. */
int ir_test_scale(void);

/* Asserts that the text of e is `want` (and prints both when not). */
void ir_check_expr_text(const tsl_expr *e, const char *want, const char *file, int line);
void ir_check_stmt_text(const tsl_stmt *s, const char *want, const char *file, int line);
#define CHECK_EXPR(e, want) ir_check_expr_text((e), (want), __FILE__, __LINE__)
#define CHECK_STMT(s, want) ir_check_stmt_text((s), (want), __FILE__, __LINE__)

void tsl_tests_ir_printer(void);
void tsl_tests_ir_equality(void);
void tsl_tests_ir_interval(void);
void tsl_tests_ir_simplify(void);
void tsl_tests_ir_simplify_random(void);
void tsl_tests_ir_pass_simplify(void);
void tsl_tests_ir_pass_random(void);

#endif
