/* The rpc suites besides the one of test_rpc.c; tsl_tests_rpc adds them. */
#ifndef TESSEL_TESTS_RPC_TESTS_H
#define TESSEL_TESTS_RPC_TESTS_H

void tsl_tests_rpc_request(void);

#endif
