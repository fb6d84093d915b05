/* The tessel test runner: every CUnit suite of every module in one binary.
 *
 *   tessel-tests            run all suites
 *   tessel-tests ir dsl     run the suites of these modules only
 *   tessel-tests --list     print the module names, one a line (scripts/test.sh runs
 *                           modules in parallel processes from this list)
 *
 * Each module's tests define `void tsl_tests_<module>(void)` that adds its CUnit
 * suites to the registry. They are weak here so a module without tests yet links.
 * Exit status is non-zero when any assertion failed. The last line is the plain
 * "N passed, N failed" summary (tests, not assertions).
 *
 * Kernels compiled by the tests go to a private disk cache (codegen/jit_cache.h), a
 * temporary folder removed at exit, unless TSL_CACHE_DIR is set: a test run never fills
 * the user's ~/.cache/tessel. Child processes the tests start (tunecli) inherit it.
 */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "test_cache_dir.h"

#define MODULES(X) X(ir) X(dsl) X(schedule) X(codegen) X(runtime) X(e2e) X(models) X(templates) X(tuner) X(graph) X(winograd) X(cross) X(binary) X(ops) X(rpc)
#define DECLARE(m) void tsl_tests_##m(void) __attribute__((weak));
MODULES(DECLARE)

typedef struct module {
  const char *name;
  void (*add)(void);
} module;

int main(int argc, char **argv) {
#define ENTRY(m) {#m, tsl_tests_##m},
  static const module modules[] = {MODULES(ENTRY)};
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
      if (modules[i].add) printf("%s\n", modules[i].name);
    return 0;
  }
  if (CU_initialize_registry() != CUE_SUCCESS) {
    fprintf(stderr, "tessel-tests: CUnit registry: %s\n", CU_get_error_msg());
    return 2;
  }
  int selected = 0;
  for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
    int want = argc <= 1;
    for (int a = 1; a < argc; a++) want |= strcmp(argv[a], modules[i].name) == 0;
    if (want && modules[i].add) {
      modules[i].add();
      selected++;
    }
  }
  for (int a = 1; a < argc; a++) {
    int known = 0;
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) known |= strcmp(argv[a], modules[i].name) == 0;
    if (!known) {
      fprintf(stderr, "tessel-tests: unknown module '%s'\n", argv[a]);
      CU_cleanup_registry();
      return 2;
    }
  }
  tsl_test_cache_dir cache = {0};
  if (!getenv("TSL_CACHE_DIR") && tsl_test_cache_dir_enter(&cache, "tessel-tests-cache") != 0)
    fprintf(stderr, "tessel-tests: no private kernel cache folder; using the default one\n");
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed_tests = CU_get_number_of_tests_failed();
  unsigned run_tests = CU_get_number_of_tests_run();
  unsigned failed_asserts = CU_get_number_of_failures();
  unsigned errors = CU_get_error();
  CU_cleanup_registry();
  tsl_arena_free_default();
  tsl_test_cache_dir_leave(&cache);
  printf("\n%u passed, %u failed\n", run_tests - failed_tests, failed_tests);
  (void)selected;
  return (failed_asserts || failed_tests || errors) ? 1 : 0;
}
