/* The winograd module's entry point (tests/main.c runs it as `tessel-tests winograd`). */
#include "winograd/winograd_tests.h"

void tsl_tests_winograd(void);

void tsl_tests_winograd(void) {
  tsl_tests_winograd_transform();
  tsl_tests_winograd_conv();
  tsl_tests_winograd_defaults();
  tsl_tests_winograd_accuracy();
}
