/* The install test: tests/install/install_test.sh installs the build folder into a
 * temporary DESTDIR (meson install --destdir) and builds and runs examples/classify.c
 * and examples/device_app.c with pkg-config's flags only, comparing their results with
 * the build folder's programs (the script's header says what it checks). */
#include <CUnit/Basic.h>

#include "script_run.h"

void tsl_tests_install(void);

static void test_install_then_build_examples_with_pkg_config(void) {
  tsl_test_script("tests/install/install_test.sh");
}

void tsl_tests_install(void) {
  CU_pSuite s = CU_add_suite("install", NULL, NULL);
  CU_add_test(s, "install_then_build_examples_with_pkg_config", test_install_then_build_examples_with_pkg_config);
}
