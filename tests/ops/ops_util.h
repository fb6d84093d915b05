/* Shared helpers of the `ops` test module (the NCHW[x]c operator library): the host JIT,
 * guarded buffers, build-and-run of a scheduled program, random template configs, and
 * comparisons with the naive references of tests/ref. */
#ifndef TESSEL_TESTS_OPS_OPS_UTIL_H
#define TESSEL_TESTS_OPS_OPS_UTIL_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"

/* Suite init/cleanup: one JIT for the host target per suite. */
int ops_suite_init(void);
int ops_suite_clean(void);
const tsl_target *ops_target(void);
/* f32 lanes of the host target (the NCHW[x]c block tests use by default). */
int64_t ops_lanes(void);

/* A buffer of n floats whose end sits at a PROT_NONE guard page, so a load or store past
 * it faults (shared/cases C01): when 4n is not a multiple of 64 the pointer stays
 * 64-byte aligned and the few bytes up to the next multiple of 64 hold a sentinel that
 * ops_check_guard verifies (a stray store changes it). Contents zero. Aborts on mmap
 * failure (a broken test machine). */
float *ops_alloc(int64_t n);
/* True when the sentinel bytes after p's n floats are intact. */
bool ops_check_guard(const float *p);
void ops_free(float *p);

/* Builds s (kernel `name`) and runs it once on bufs (the program's inputs then outputs,
 * in order). Prints the error and returns false on failure. */
bool ops_build_run(const tsl_schedule *s, const char *name, float *const *bufs);

/* The registered template (tsl_tuner_register_templates) for registry operator `op`
 * whose name ends in `suffix` (".direct", ".tile", ...; NULL: the first for op), or
 * NULL. */
const tsl_template *ops_template(const char *op, const char *suffix);

/* Up to n random configs of tpl's space for p (seeded, deterministic), skipping configs
 * whose register tile (the product of the knobs named *_block / *_blocks) exceeds
 * max_tile so the suite stays fast. Returns how many were written. */
int ops_random_configs(const tsl_template *tpl, const tsl_te_program *p, uint64_t seed, int n, int64_t max_tile,
                       tsl_config *out);

/* The default config of tpl for p with "name=value,..." applied over it (names of the
 * space's knobs; ow_block, oh_block and oc_blocks set the parts of the "tile" knob,
 * ops/conv2d/conv_common.h). The values need not be candidates of the space
 * (apply() takes any legal value). False on an unknown knob or a space error. */
bool ops_config_with(const tsl_template *tpl, const tsl_te_program *p, const char *knobs, tsl_config *out);

/* Schedules p with tpl and config c (NULL: the default config). NULL on error (printed). */
tsl_schedule *ops_schedule_config(const tsl_template *tpl, const tsl_te_program *p, const tsl_config *c);

/* max |got - want| / max(1, max |want|) over n values; NaN in one and not the other, or
 * a different infinity, gives +inf. */
double ops_rel_error(const float *got, const double *want, int64_t n);

/* Deterministic uniform floats (splitmix64) in [lo, hi). */
void ops_fill(float *x, int64_t n, uint64_t seed, float lo, float hi);

/* The test registration functions of the module's files. */
void ops_tests_conv(CU_pSuite s);
void ops_tests_conv_cases(CU_pSuite s);
void ops_tests_conv_classes(CU_pSuite s);
void ops_tests_pool(CU_pSuite s);
void ops_tests_nn(CU_pSuite s);
void ops_tests_select(CU_pSuite s);
void ops_tests_conv2d_layer(CU_pSuite s);
void ops_tests_spaces(CU_pSuite s);
void ops_tests_first_layer(CU_pSuite s);
void ops_tests_generators(CU_pSuite s);
void ops_tests_generators_nn(CU_pSuite s);
void ops_tests_epilogue(CU_pSuite s);
void ops_tests_expand_dw(CU_pSuite s);

#endif
