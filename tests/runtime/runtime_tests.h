/* The runtime suites, one function per source file; tsl_tests_runtime adds them all. */
#ifndef TESSEL_TESTS_RUNTIME_TESTS_H
#define TESSEL_TESTS_RUNTIME_TESTS_H

void tsl_tests_runtime_tensor(void);
void tsl_tests_runtime_tensor_bounds(void);
void tsl_tests_runtime_module(void);
void tsl_tests_runtime_aot(void);
void tsl_tests_runtime_parallel(void);
void tsl_tests_runtime_timer(void);
void tsl_tests_runtime_host_memory(void);
void tsl_tests_runtime_claim_policy(void);

#endif
