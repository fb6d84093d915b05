/* The models suites, one function per source file; tsl_tests_models adds them all. */
#ifndef TESSEL_TESTS_MODELS_TESTS_H
#define TESSEL_TESTS_MODELS_TESTS_H

void tsl_tests_models_graph(void);
void tsl_tests_models_ref(void);
void tsl_tests_models_onnx_import(void);
void tsl_tests_models_onnx_errors(void);
void tsl_tests_models_onnx_models(void);
void tsl_tests_models_onnx_conformance(void);
void tsl_tests_models_onnx_conformance_jit(void);
void tsl_tests_models_zoo(void);
void tsl_tests_models_onnx_resize(void);

#endif
