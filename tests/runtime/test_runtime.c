/* Registers the runtime module's CUnit suites. */
#include "runtime_tests.h"

void tsl_tests_runtime(void);

void tsl_tests_runtime(void) {
  tsl_tests_runtime_tensor();
  tsl_tests_runtime_tensor_bounds();
  tsl_tests_runtime_module();
  tsl_tests_runtime_aot();
  tsl_tests_runtime_parallel();
  tsl_tests_runtime_timer();
  tsl_tests_runtime_host_memory();
  tsl_tests_runtime_claim_policy();
}
