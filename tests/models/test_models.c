/* The models module's entry point for the test runner. */
#include "models_tests.h"

void tsl_tests_models(void);

void tsl_tests_models(void) {
  tsl_tests_models_graph();
  tsl_tests_models_ref();
  tsl_tests_models_onnx_import();
  tsl_tests_models_onnx_errors();
  tsl_tests_models_onnx_resize();
  tsl_tests_models_zoo();
  tsl_tests_models_onnx_models();
  tsl_tests_models_onnx_conformance();
  tsl_tests_models_onnx_conformance_jit();
}
