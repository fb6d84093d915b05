/* The application API (include/tessel/tessel.h): load, compile, run; errors; one
 * compiled model run from two threads at once on separate contexts. */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "tessel/tessel.h"

typedef struct run_job {
  const tsl_compiled *c;
  const float *input;
  size_t in_bytes, out_bytes;
  float *output;
  int runs;
  tsl_status st;
} run_job;

static void *run_thread(void *arg) {
  run_job *j = arg;
  tsl_context *ctx = NULL;
  j->st = tsl_context_new(j->c, &ctx);
  if (j->st == TSL_OK) j->st = tsl_context_set_input(ctx, 0, j->input, j->in_bytes);
  for (int r = 0; r < j->runs && j->st == TSL_OK; r++) j->st = tsl_context_run(ctx);
  if (j->st == TSL_OK) j->st = tsl_context_get_output(ctx, 0, j->output, j->out_bytes);
  tsl_context_free(ctx);
  return NULL;
}

static void test_api_runs_one_compiled_model_from_two_threads(void) {
  tsl_model *m = NULL;
  tsl_compiled *c = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load("squeezenet1_1", &m), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile(m, "host", NULL, &c), TSL_OK);
  tsl_model_free(m); /* the compiled model stands alone */
  CU_ASSERT_EQUAL(tsl_compiled_num_inputs(c), 1);
  CU_ASSERT_EQUAL(tsl_compiled_num_outputs(c), 1);
  const char *name;
  int ndim;
  int64_t shape[TSL_MAX_NDIM];
  size_t in_bytes, out_bytes;
  tsl_dtype dt;
  CU_ASSERT_EQUAL_FATAL(tsl_compiled_input_info(c, 0, &name, &dt, &ndim, shape, &in_bytes), TSL_OK);
  CU_ASSERT_STRING_EQUAL(name, "input");
  CU_ASSERT(ndim == 4 && shape[1] == 3 && shape[2] == 224 && in_bytes == 602112);
  CU_ASSERT_EQUAL_FATAL(tsl_compiled_output_info(c, 0, &name, NULL, &ndim, shape, &out_bytes), TSL_OK);
  CU_ASSERT_STRING_EQUAL(name, "output"); /* the model's name, whatever the passes did */
  CU_ASSERT(ndim == 2 && shape[1] == 1000 && out_bytes == 4000);
  CU_ASSERT(tsl_compiled_activation_bytes(c) > 0 && tsl_compiled_weight_bytes(c) > 1000000);
  CU_ASSERT(tsl_compiled_num_kernels(c) <= tsl_compiled_num_steps(c));
  tsl_tensor *x[2];
  int64_t n = (int64_t)(in_bytes / 4);
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &x[i]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(x[i], 40 + (uint64_t)i, -1.0, 1.0), TSL_OK);
  }
  /* alone first: the expected outputs */
  float alone[2][1000], both[2][1000];
  for (int i = 0; i < 2; i++) {
    run_job j = {c, x[i]->data, in_bytes, out_bytes, alone[i], 1, TSL_OK};
    run_thread(&j);
    CU_ASSERT_EQUAL(j.st, TSL_OK);
  }
  CU_ASSERT(memcmp(alone[0], alone[1], sizeof alone[0]) != 0);
  run_job jobs[2];
  pthread_t th[2];
  for (int i = 0; i < 2; i++) {
    jobs[i] = (run_job){c, x[i]->data, in_bytes, out_bytes, both[i], 2, TSL_OK};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, run_thread, &jobs[i]), 0);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(jobs[i].st, TSL_OK);
    /* same kernels, same order of operations: bitwise the same result */
    CU_ASSERT(memcmp(alone[i], both[i], sizeof alone[i]) == 0);
  }
  tsl_context *ctx;
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c, &ctx), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_set_input(ctx, 0, x[0]->data, in_bytes - 4), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_set_input(ctx, 1, x[0]->data, in_bytes), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 0, both[0], out_bytes + 4), TSL_ERR_INVALID);
  tsl_context_free(ctx);
  for (int i = 0; i < 2; i++) tsl_tensor_free(x[i]);
  tsl_compiled_free(c);
}

static void test_api_reports_errors_clearly(void) {
  tsl_model *m = NULL;
  CU_ASSERT_EQUAL(tsl_model_load("no_such_net", &m), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT(strstr(tsl_last_error(), "no_such_net") != NULL);
  CU_ASSERT_EQUAL(tsl_model_load("/nonexistent/model.onnx", &m), TSL_ERR_IO);
  CU_ASSERT_EQUAL(tsl_model_load(NULL, &m), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_model_compile(NULL, "host", NULL, NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_run(NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_compiled_input_info(NULL, 0, NULL, NULL, NULL, NULL, NULL), TSL_ERR_INVALID);
  CU_ASSERT_STRING_EQUAL(tsl_status_name(TSL_ERR_NOT_FOUND), "not-found");
}

static void test_api_refuses_bad_records_and_targets(void) {
  tsl_model *m = NULL;
  tsl_compiled *c = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load("squeezenet1_1", &m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_compile(m, "host", "/nonexistent/records.json", &c), TSL_ERR_IO);
  CU_ASSERT_PTR_NULL(c);
  CU_ASSERT_EQUAL(tsl_model_compile(m, "no-such-target", NULL, &c), TSL_ERR_UNSUPPORTED);
  tsl_model_free(m);
}

void tsl_tests_graph_api(void) {
  CU_pSuite s = CU_add_suite("graph_api", NULL, NULL);
  CU_add_test(s, "api_runs_one_compiled_model_from_two_threads", test_api_runs_one_compiled_model_from_two_threads);
  CU_add_test(s, "api_reports_errors_clearly", test_api_reports_errors_clearly);
  CU_add_test(s, "api_refuses_bad_records_and_targets", test_api_refuses_bad_records_and_targets);
}
