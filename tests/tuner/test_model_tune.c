/* tsl_model_tune (include/tessel/tune.h) through the public API: its argument checks and
 * the model without a convolution. A real tuning run (records written, resumed, then
 * compiled with) is checked by the python module's tests (tests/python/test_tessel.py:
 * test_tune_then_compile_with_the_records), against a naive convolution. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/models_util.h"
#include "tessel/tune.h"
#include "tuner_tests.h"

static void expect_error(tsl_status got, tsl_status want, const char *words) {
  CU_ASSERT_EQUAL(got, want);
  if (!strstr(tsl_last_error(), words)) {
    printf("\n  message '%s' lacks '%s'\n", tsl_last_error(), words);
    CU_FAIL("message");
  }
  tsl_clear_error();
}

static void test_model_tune_refuses_bad_arguments_before_any_work(void) {
  tsl_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load("squeezenet1_1", &m), TSL_OK);
  const char *rec = "/nonexistent/never_written.jsonl"; /* no check may reach the file */
  tsl_model_tune_opts d = tsl_model_tune_opts_default();
  CU_ASSERT_EQUAL(d.trials, 32);
  CU_ASSERT_EQUAL(d.early_stopping, 16);
  expect_error(tsl_model_tune(NULL, "host", rec, NULL, NULL), TSL_ERR_INVALID, "NULL model");
  expect_error(tsl_model_tune(m, "host", NULL, NULL, NULL), TSL_ERR_INVALID, "NULL records");
  tsl_model_tune_opts o = d;
  o.trials = 0;
  expect_error(tsl_model_tune(m, "host", rec, &o, NULL), TSL_ERR_INVALID, "trials 0");
  o = d;
  o.early_stopping = -1;
  expect_error(tsl_model_tune(m, "host", rec, &o, NULL), TSL_ERR_INVALID, "early_stopping -1");
  o = d;
  o.threads = TSL_MAX_THREADS + 1;
  expect_error(tsl_model_tune(m, "host", rec, &o, NULL), TSL_ERR_INVALID, "threads");
  o = d;
  o.timeout_s = NAN;
  expect_error(tsl_model_tune(m, "host", rec, &o, NULL), TSL_ERR_INVALID, "timeout_s");
  expect_error(tsl_model_tune(m, "nosuchtarget", rec, NULL, NULL), TSL_ERR_UNSUPPORTED, "nosuchtarget");
  tsl_model_free(m);
}

static void test_model_tune_of_a_model_without_convolution_is_not_found(void) {
  const char *root = mt_onnx_testdata_dir("model_tune_of_a_model_without_convolution");
  if (!root) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/node/test_relu/model.onnx", root);
  tsl_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load(path, &m), TSL_OK);
  tsl_model_tune_summary s;
  memset(&s, 0xff, sizeof s);
  expect_error(tsl_model_tune(m, NULL, "/nonexistent/never_written.jsonl", NULL, &s), TSL_ERR_NOT_FOUND,
               "no convolution");
  tsl_model_free(m);
}

void tsl_tests_tuner_model_tune(void) {
  CU_pSuite s = CU_add_suite("tuner_model_tune", NULL, NULL);
  CU_add_test(s, "test_model_tune_refuses_bad_arguments_before_any_work",
              test_model_tune_refuses_bad_arguments_before_any_work);
  CU_add_test(s, "test_model_tune_of_a_model_without_convolution_is_not_found",
              test_model_tune_of_a_model_without_convolution_is_not_found);
}
