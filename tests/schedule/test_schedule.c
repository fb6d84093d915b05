/* The schedule module's tests: tsl_tests_schedule adds every suite of tests/schedule. */
#include "sched_tests.h"

void tsl_tests_schedule(void) {
  tsl_tests_schedule_steps();
  tsl_tests_schedule_lower();
  tsl_tests_schedule_passes();
  tsl_tests_schedule_numeric();
  tsl_tests_schedule_primitives();
  tsl_tests_schedule_illegal();
  tsl_tests_schedule_fuzz();
  tsl_tests_schedule_rfactor();
  tsl_tests_schedule_vector_width();
}
