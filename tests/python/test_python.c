/* The Python module's test: tests/python/python_test.sh installs the build folder into a
 * temporary DESTDIR and runs tests/python/test_tessel.py with the installed module (the
 * script's header says what it checks; skipped with a message without python3-numpy). */
#include <CUnit/Basic.h>

#include "script_run.h"

void tsl_tests_python(void);

static void test_python_module_against_c_api(void) { tsl_test_script("tests/python/python_test.sh"); }

void tsl_tests_python(void) {
  CU_pSuite s = CU_add_suite("python", NULL, NULL);
  CU_add_test(s, "python_module_against_c_api", test_python_module_against_c_api);
}
