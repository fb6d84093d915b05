/* Helpers shared by the binary suites (test_binary.c, test_binary_nhwc.c): a seeded
 * generator, aligned zeroed buffers, and building + running one registry operator. */
#ifndef TESSEL_TESTS_BINARY_TEST_UTIL_H
#define TESSEL_TESTS_BINARY_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/build.h"
#include "ops/binary/bitserial.h"
#include "ops/registry.h"

/* The next value of the splitmix64 sequence in *state. */
uint64_t bin_test_rng(uint64_t *state);

/* bytes of zeroed memory aligned as kernel arguments must be (64 bytes); free with free(). */
void *bin_test_zalloc(size_t bytes);

/* The host target (TSL_HOST_TARGET respected) in *t and a JIT for it in *jit, for a
 * suite's init: 0 on success. */
int bin_test_jit_open(tsl_target *t, tsl_jit **jit);

/* Frees *jit and clears it, for a suite's cleanup: 0. */
int bin_test_jit_close(tsl_jit **jit);

/* Instantiates registry op `name`, schedules it (when `tpl`: a bitserial conv with the
 * bitserial template, knobs k, NULL = its default; a blocked pack with the graph
 * compiler's hand schedule, tsl_binary_glue_schedule; the lookup-table conv with its
 * schedule, tsl_lutconv_schedule; anything else, and everything when
 * not `tpl`, with the empty schedule), builds it with jit for t and runs it once on bufs (inputs, then the output).
 * Returns 0 on success, printing the error otherwise. */
int bin_test_run_op(tsl_jit *jit, const tsl_target *t, const char *name, int nin, const int64_t *const *shapes,
                    const int *ndims, int nparams, const tsl_dsl_param_value *params, bool tpl,
                    const tsl_bitserial_knobs *k, void **bufs);

#endif
