/* The tessel test runner: every CUnit suite of every module in one binary.
 *
 *   tessel-tests            run all suites
 *   tessel-tests ir dsl     run the suites of these modules only
 *   tessel-tests --list     print the module names, one a line (scripts/test.sh runs
 *                           modules in parallel processes from this list)
 *   tessel-tests --target-passes
 *                           one line per x86-64 target: "host NAME" (the host pass runs
 *                           its code path), "run NAME" (runs here with other lanes: a
 *                           second pass with TSL_HOST_TARGET=NAME tests it), or
 *                           "skip NAME REASON" (this machine cannot run it)
 *
 * The run prints first which target "host" is (TSL_HOST_TARGET may force one,
 * target/target.h), so every log says which code path it tested.
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
#include "target/target.h"
#include "test_cache_dir.h"

#define MODULES(X) X(ir) X(dsl) X(schedule) X(codegen) X(runtime) X(e2e) X(models) X(templates) X(tuner) X(graph) X(winograd) X(cross) X(binary) X(ops) X(rpc) X(install) X(python) X(capi)
#define DECLARE(m) void tsl_tests_##m(void) __attribute__((weak));
MODULES(DECLARE)

typedef struct module {
  const char *name;
  void (*add)(void);
} module;

/* --target-passes (above): the x86-64 targets and how the suite covers each here. */
static int print_target_passes(void) {
  tsl_target host;
  if (tsl_target_detected_host(&host) != TSL_OK) {
    fprintf(stderr, "tessel-tests: %s\n", tsl_last_error());
    return 2;
  }
  if (host.arch != TSL_ARCH_X86_64) return 0;
  const char *const presets[] = {"x86-64-avx2", "x86-64-avx512"};
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    tsl_target t;
    const char *why = NULL;
    if (tsl_target_parse(presets[i], &t) != TSL_OK) return 2;
    if (!tsl_target_runs_on_host(&t, &why)) printf("skip %s this machine lacks %s\n", presets[i], why);
    else if (tsl_target_f32_lanes(&t) == tsl_target_f32_lanes(&host)) printf("host %s\n", presets[i]);
    else printf("run %s\n", presets[i]);
  }
  return 0;
}

/* One line naming the target "host" compiles for in this run. */
static void print_host_target(void) {
  tsl_target t;
  char buf[256];
  const char *forced = getenv(TSL_HOST_TARGET_ENV);
  if (tsl_target_parse("host", &t) != TSL_OK) {
    printf("tessel-tests: target host: %s\n", tsl_last_error());
    return;
  }
  printf("tessel-tests: target host = %s (%d-bit vectors, %d f32 lanes)%s%s\n", tsl_target_str(&t, buf, sizeof buf),
         t.vector_bits, tsl_target_f32_lanes(&t), forced && *forced ? ", forced by " TSL_HOST_TARGET_ENV "=" : "",
         forced && *forced ? forced : "");
}

int main(int argc, char **argv) {
#define ENTRY(m) {#m, tsl_tests_##m},
  static const module modules[] = {MODULES(ENTRY)};
  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
      if (modules[i].add) printf("%s\n", modules[i].name);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--target-passes") == 0) return print_target_passes();
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
  print_host_target();
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
