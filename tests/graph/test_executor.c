/* The graph executor on a plan built by hand: activations placed in the arena, views,
 * constants, inputs and outputs, and the checks of the plan builder. */
#include <CUnit/Basic.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "runtime/graph_executor.h"

static void test_executor_runs_steps_over_planned_buffers(void) {
  const int64_t shape4[4] = {1, 2, 2, 2};
  tsl_module *m = gt_add_module(shape4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const tsl_kernel *k;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "add", &k), TSL_OK);
  tsl_graph_plan *p;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_new(&p), TSL_OK);
  tsl_graph_plan_set_module(p, m);
  /* y = (x + c) + c with t = x + c in the arena after x, y reusing nothing */
  int64_t s8 = 8;
  tsl_tensor *c;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &s8, &c), TSL_OK);
  for (int i = 0; i < 8; i++) ((float *)c->data)[i] = (float)i;
  int bx, bt, by, bc, bview;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_constant(p, c, &bc), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 0, 32, &bx), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 64, 32, &bt), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_activation(p, 128, 32, &by), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_view(p, bt, 0, 32, &bview), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_arena_bytes(p), 160);
  CU_ASSERT_EQUAL(tsl_graph_plan_constant_bytes(p), 32);
  int s1[3] = {bx, bc, bt}, s2[3] = {bview, bc, by};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "first", 3, s1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_step(p, k, "second", 3, s2), TSL_OK);
  const int64_t shape[4] = {1, 2, 2, 2};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_input(p, "x", bx, TSL_DTYPE_F32, 4, shape), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_plan_add_output(p, "y", by, TSL_DTYPE_F32, 4, shape), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tsl_graph_plan_step_label(p, 1), "second");
  CU_ASSERT_EQUAL(tsl_graph_plan_input_info(p, 0).bytes, 32);
  /* the builder's checks */
  int bad;
  CU_ASSERT_EQUAL(tsl_graph_plan_add_step(p, k, "short", 2, s1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_view(p, bt, 16, 32, &bad), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_activation(p, 8, 4, &bad), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_input(p, "c", bc, TSL_DTYPE_F32, 1, &s8), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_output(p, "z", by, TSL_DTYPE_F32, 1, &s8), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_output(p, "w", by, TSL_DTYPE_F32, 1, (const int64_t[]){7}), TSL_ERR_INVALID);
  /* shapes whose byte size overflows int64 (4 * 2^62 * 2^62), empty or not: an error,
   * not a wrapped size (a model file's shapes come from the file) */
  const int64_t p62 = INT64_C(1) << 62;
  CU_ASSERT_EQUAL(tsl_graph_plan_add_output(p, "o", by, TSL_DTYPE_F32, 3, (const int64_t[]){p62, p62, 0}),
                  TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "graph plan: output o"));
  CU_ASSERT_EQUAL(tsl_graph_plan_add_output(p, "o", by, TSL_DTYPE_F32, 2, (const int64_t[]){p62, 2}), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_add_input(p, "i", bx, TSL_DTYPE_F32, 2, (const int64_t[]){2, -8}), TSL_ERR_INVALID);
  tsl_graph_ctx *ctx;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(p, &ctx), TSL_OK);
  float *x = tsl_graph_ctx_input(ctx, 0);
  for (int i = 0; i < 8; i++) x[i] = 100.0f * (float)i;
  double secs[2] = {-1, -1};
  CU_ASSERT_EQUAL(tsl_graph_run(ctx, secs), TSL_OK);
  CU_ASSERT(secs[0] >= 0.0 && secs[1] >= 0.0);
  const float *y = tsl_graph_ctx_output(ctx, 0);
  for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(y[i], 100.0f * (float)i + 2.0f * (float)i);
  CU_ASSERT_PTR_NULL(tsl_graph_ctx_input(ctx, 1));
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(p);
}

void tsl_tests_graph_executor(void) {
  CU_pSuite s = CU_add_suite("graph_executor", NULL, NULL);
  CU_add_test(s, "executor_runs_steps_over_planned_buffers", test_executor_runs_steps_over_planned_buffers);
}
