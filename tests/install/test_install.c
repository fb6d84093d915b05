/* The install test: tests/install/install_test.sh installs the build folder into a
 * temporary DESTDIR (meson install --destdir) and builds and runs examples/classify.c
 * and examples/device_app.c with pkg-config's flags only, comparing their results with
 * the build folder's programs (the script's header says what it checks). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "install/install_paths.h"

void tsl_tests_install(void);

static void test_install_then_build_examples_with_pkg_config(void) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s/tests/install/install_test.sh' '%s' '%s' 2>&1", TSL_SOURCE_ROOT, TSL_SOURCE_ROOT,
           TSL_BUILD_ROOT);
  FILE *p = popen(cmd, "r");
  CU_ASSERT_FATAL(p != NULL);
  char line[1024];
  while (fgets(line, sizeof line, p)) printf("\n  %.*s", (int)strcspn(line, "\n"), line);
  printf("\n");
  int st = pclose(p);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (code == 77) return; /* a tool is missing: the script said which */
  CU_ASSERT_EQUAL(code, 0);
}

void tsl_tests_install(void) {
  CU_pSuite s = CU_add_suite("install", NULL, NULL);
  CU_add_test(s, "install_then_build_examples_with_pkg_config", test_install_then_build_examples_with_pkg_config);
}
