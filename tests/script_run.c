/* Running a test script (script_run.h). */
#include "script_run.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "install/install_paths.h" /* TSL_SOURCE_ROOT, TSL_BUILD_ROOT (tests/install/meson.build) */

void tsl_test_script(const char *script) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s/%s' '%s' '%s' 2>&1", TSL_SOURCE_ROOT, script, TSL_SOURCE_ROOT, TSL_BUILD_ROOT);
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
