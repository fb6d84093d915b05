/* The torchvision exports in ../shared/models: each imports with the structure its
 * manifest and architecture give, and the reference executor reproduces ONNX Runtime's
 * output on the shared input (max abs error below 1e-3 of the output's max magnitude,
 * same top-5). Skipped with a message where ../shared is absent. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/onnx.h"
#include "models_tests.h"
#include "models_util.h"
#include "ref/ref_graph.h"

/* Node counts per operator after import, from the torchvision architectures: the
 * exporter folded batch norm and dropout away; shape chains fold at import. */
typedef struct expected {
  const char *model;
  int total;
  struct {
    tsl_op op;
    int count;
  } ops[10];
} expected;

static const expected expectations[] = {
    {"squeezenet1_0", 65, {{TSL_OP_CONV, 26}, {TSL_OP_RELU, 26}, {TSL_OP_MAX_POOL, 3}, {TSL_OP_CONCAT, 8},
                           {TSL_OP_GLOBAL_AVERAGE_POOL, 1}, {TSL_OP_FLATTEN, 1}}},
    {"squeezenet1_1", 65, {{TSL_OP_CONV, 26}, {TSL_OP_RELU, 26}, {TSL_OP_MAX_POOL, 3}, {TSL_OP_CONCAT, 8},
                           {TSL_OP_GLOBAL_AVERAGE_POOL, 1}, {TSL_OP_FLATTEN, 1}}},
    {"resnet18", 49, {{TSL_OP_CONV, 20}, {TSL_OP_RELU, 17}, {TSL_OP_ADD, 8}, {TSL_OP_MAX_POOL, 1},
                      {TSL_OP_GLOBAL_AVERAGE_POOL, 1}, {TSL_OP_FLATTEN, 1}, {TSL_OP_GEMM, 1}}},
    {"mobilenet_v2", 100, {{TSL_OP_CONV, 52}, {TSL_OP_CLIP, 35}, {TSL_OP_ADD, 10}, {TSL_OP_GLOBAL_AVERAGE_POOL, 1},
                           {TSL_OP_FLATTEN, 1}, {TSL_OP_GEMM, 1}}},
    {"shufflenet_v2_x1_0", 186, {{TSL_OP_CONV, 56}, {TSL_OP_RELU, 37}, {TSL_OP_CONCAT, 16}, {TSL_OP_RESHAPE, 32},
                                 {TSL_OP_TRANSPOSE, 16}, {TSL_OP_SLICE, 26}, {TSL_OP_MAX_POOL, 1},
                                 {TSL_OP_REDUCE_MEAN, 1}, {TSL_OP_GEMM, 1}}},
};

static void check_model(const char *model) {
  const char *dir = mt_shared_models_dir(model);
  if (!dir) return;
  const expected *e = NULL;
  for (size_t i = 0; i < sizeof expectations / sizeof expectations[0]; i++)
    if (strcmp(expectations[i].model, model) == 0) e = &expectations[i];
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  char path[4200];
  mt_manifest_model man;
  CU_ASSERT_FATAL(mt_manifest_read(dir, model, &man));

  /* The file as the manifest describes it. */
  snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
  tsl_onnx_info info;
  CU_ASSERT_EQUAL_FATAL(tsl_onnx_inspect(path, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.opset, 13);
  CU_ASSERT_EQUAL(info.n_nodes, man.node_count);
  CU_ASSERT_EQUAL(info.n_op_types, man.n_op_types);
  for (int k = 0; k < man.n_op_types; k++) CU_ASSERT(tsl_onnx_info_count(&info, man.op_types[k]) > 0);

  /* The imported graph. */
  clock_t t0 = clock();
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx(path, &g), TSL_OK);
  double t_import = (double)(clock() - t0) / CLOCKS_PER_SEC;
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_nodes, e->total);
  int counts[TSL_OP_COUNT], listed = 0;
  mt_count_ops(g, counts);
  for (int k = 0; k < 10 && e->ops[k].count; k++) {
    CU_ASSERT_EQUAL(counts[e->ops[k].op], e->ops[k].count);
    if (counts[e->ops[k].op] != e->ops[k].count)
      printf("\n  %s: %d %s nodes, expected %d", model, counts[e->ops[k].op], tsl_op_name(e->ops[k].op),
             e->ops[k].count);
    listed += e->ops[k].count;
    /* A surviving operator keeps exactly the count the file has. */
    CU_ASSERT_EQUAL(tsl_onnx_info_count(&info, tsl_op_name(e->ops[k].op)), e->ops[k].count);
  }
  CU_ASSERT_EQUAL(listed, e->total);
  CU_ASSERT_EQUAL_FATAL(g->n_inputs, 1);
  CU_ASSERT_EQUAL_FATAL(g->n_outputs, 1);
  const tsl_value *out = &g->values[g->outputs[0]];
  CU_ASSERT(out->ndim == 2 && out->shape[0] == 1 && out->shape[1] == 1000);

  /* Numbers: the reference executor against ONNX Runtime. */
  size_t n_in, n_ref;
  snprintf(path, sizeof path, "%s/input_1x3x224x224.f32", dir);
  float *x = mt_read_file(path, &n_in);
  snprintf(path, sizeof path, "%s/%s.ort.f32", dir, model);
  float *want = mt_read_file(path, &n_ref);
  CU_ASSERT_FATAL(x && want && n_in == 602112 && n_ref == 4000);
  tsl_tensor *in, *y = NULL;
  const tsl_value *iv = &g->values[g->inputs[0]];
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, iv->ndim, iv->shape, &in), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_copy_from(in, x, n_in), TSL_OK);
  t0 = clock();
  CU_ASSERT_EQUAL(ref_graph_run(g, &in, 1, &y, 1), TSL_OK);
  double t_run = (double)(clock() - t0) / CLOCKS_PER_SEC;
  if (y) {
    double err = mt_max_abs_diff(y->data, want, 1000), scale = mt_max_abs(want, 1000);
    int top[5], top_ort[5];
    mt_top5(y->data, 1000, top);
    mt_top5(want, 1000, top_ort);
    printf("\n  %s: %d nodes, %lld params, import %.2f s, reference run %.2f s, max abs err %.2e (%.2e of max %.3f)",
           model, g->n_nodes, (long long)tsl_graph_param_count(g), t_import, t_run, err, err / scale, scale);
    CU_ASSERT(err < 1e-3 * scale);
    CU_ASSERT_DOUBLE_EQUAL(scale, man.max_abs_output, 1e-5);
    for (int k = 0; k < 5; k++) {
      CU_ASSERT_EQUAL(top[k], top_ort[k]);
      CU_ASSERT_EQUAL(top[k], man.top5[k]);
    }
  }
  tsl_tensor_free(y);
  tsl_tensor_free(in);
  free(x);
  free(want);
  tsl_graph_free(g);
}

static void test_shared_squeezenet1_0_imports_and_matches_ort(void) { check_model("squeezenet1_0"); }
static void test_shared_squeezenet1_1_imports_and_matches_ort(void) { check_model("squeezenet1_1"); }
static void test_shared_resnet18_imports_and_matches_ort(void) { check_model("resnet18"); }
static void test_shared_mobilenet_v2_imports_and_matches_ort(void) { check_model("mobilenet_v2"); }
static void test_shared_shufflenet_v2_x1_0_imports_and_matches_ort(void) { check_model("shufflenet_v2_x1_0"); }

void tsl_tests_models_onnx_models(void) {
  CU_pSuite s = CU_add_suite("models_onnx_shared", NULL, NULL);
  CU_add_test(s, "shared_squeezenet1_0_imports_and_matches_ort", test_shared_squeezenet1_0_imports_and_matches_ort);
  CU_add_test(s, "shared_squeezenet1_1_imports_and_matches_ort", test_shared_squeezenet1_1_imports_and_matches_ort);
  CU_add_test(s, "shared_resnet18_imports_and_matches_ort", test_shared_resnet18_imports_and_matches_ort);
  CU_add_test(s, "shared_mobilenet_v2_imports_and_matches_ort", test_shared_mobilenet_v2_imports_and_matches_ort);
  CU_add_test(s, "shared_shufflenet_v2_x1_0_imports_and_matches_ort",
              test_shared_shufflenet_v2_x1_0_imports_and_matches_ort);
}
