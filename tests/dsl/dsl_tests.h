/* Shared helpers of the dsl test suite. */
#ifndef TESSEL_TESTS_DSL_TESTS_H
#define TESSEL_TESTS_DSL_TESTS_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops/registry.h"
#include "dsl/parser.h"
#include "dsl/te.h"

/* Adds a CUnit suite whose tests each run in a fresh IR arena. */
CU_pSuite dsl_suite(const char *name);

/* Parses text; on failure records a CUnit failure with the message. NULL on failure. */
tsl_dsl_module *dsl_parse_ok(const char *text);

/* Instantiates op `name` of `text` with every input dimension = `dim` and the given
 * params; NULL (with the message printed) when it fails. The module is freed. */
tsl_te_program *dsl_instantiate_text(const char *text, const char *name, int64_t dim, int nparams,
                                     const tsl_dsl_param_value *params);

/* te_print into a malloc'd string (caller frees). */
char *dsl_print_to_string(const tsl_te_program *p);

/* The file's contents (malloc'd, NUL-terminated) or NULL. */
char *dsl_read_file(const char *path);

/* The ```dsl blocks of docs/dsl.md, malloc'd; *n gets the count. NULL if the doc is absent. */
char **dsl_doc_examples(int *n);
void dsl_free_strings(char **s, int n);

/* A module using every construct of the grammar (test_parser.c). */
extern const char dsl_kitchen_sink[];

/* Checks that msg is "t.dsl:LINE:COL: error: ...want..." followed by the source line and a
 * caret under the column (test_errors.c); text is shown on a mismatch. */
void dsl_check_message(const char *msg, const char *text, int line, int col, const char *want);

/* splitmix64 */
uint64_t dsl_rand(uint64_t *state);

void tsl_tests_dsl_te(void);
void tsl_tests_dsl_parser(void);
void tsl_tests_dsl_errors(void);
void tsl_tests_dsl_instantiate(void);
void tsl_tests_dsl_registry(void);
void tsl_tests_dsl_fuzz(void);
void tsl_tests_dsl_sched_block(void);

#endif
