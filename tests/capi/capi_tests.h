/* The capi suites, one function per source file; tsl_tests_capi adds them all. */
#ifndef TESSEL_TESTS_CAPI_TESTS_H
#define TESSEL_TESTS_CAPI_TESTS_H

void tsl_tests_capi_threads(void);

#endif
