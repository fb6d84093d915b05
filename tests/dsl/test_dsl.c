/* The dsl suite's entry point (tests/main.c calls tsl_tests_dsl). */
#include "dsl_tests.h"

void tsl_tests_dsl(void);

void tsl_tests_dsl(void) {
  tsl_tests_dsl_te();
  tsl_tests_dsl_parser();
  tsl_tests_dsl_errors();
  tsl_tests_dsl_instantiate();
  tsl_tests_dsl_registry();
  tsl_tests_dsl_fuzz();
  tsl_tests_dsl_sched_block();
}
