/* ONNX conformance with the reference executor: every node test of Debian's
 * libonnx-testdata (data/node, data/pytorch-converted, data/pytorch-operator) is
 * imported and run; cases of accepted operators must pass, the others must be refused
 * with TSL_ERR_UNSUPPORTED and a message naming the node, operator and opset. Prints a
 * per-operator table. Skipped with a message where the test data is absent. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models_tests.h"
#include "models_util.h"
#include "onnx_conformance.h"
#include "ref/ref_graph.h"

static tsl_status ref_exec(void *ctx, const tsl_graph *g, tsl_tensor *const *inputs, int n_inputs,
                           tsl_tensor **outputs, int n_outputs) {
  (void)ctx;
  return ref_graph_run(g, inputs, n_inputs, outputs, n_outputs);
}

/* Passing cases required per operator of the list (data/node). A drop below
 * these is a regression. */
static const struct {
  const char *op;
  int min_pass;
} required[] = {
    {"Conv", 6},     {"MaxPool", 10},  {"AveragePool", 11}, {"GlobalAveragePool", 2}, {"BatchNormalization", 2},
    {"Relu", 1},     {"Clip", 8},      {"Add", 3},          {"Mul", 4},               {"Div", 4},
    {"Concat", 12},  {"Gemm", 11},     {"MatMul", 3},       {"Flatten", 9},           {"Reshape", 10},
    {"Transpose", 7}, {"Softmax", 7},  {"Dropout", 6},      {"Slice", 8},             {"Split", 7},
    {"Pad", 1},
    /* the activation table (ops/nn/activation.h): every node test of each function */
    {"Sigmoid", 2}, {"HardSigmoid", 3}, {"HardSwish", 1}, {"LeakyRelu", 3}, {"Elu", 3}, {"Selu", 3},
    {"Celu", 1},    {"ThresholdedRelu", 3}, {"Tanh", 2}, {"Softplus", 2}, {"Softsign", 2}, {"Neg", 2},
    {"Abs", 1},     {"Exp", 2},         {"Log", 2},       {"Sqrt", 2},      {"Reciprocal", 2}, {"Floor", 2},
    {"Ceil", 2},    {"Round", 1},
    /* segmentation and newer CNNs: all but cubic and tf_crop_and_resize (refused); the
     * reflect and edge Pad cases are i32 data (refused: tessel runs f32) */
    {"Resize", 13}, {"Upsample", 1}, {"PRelu", 2}, {"Squeeze", 2}, {"Unsqueeze", 8},
    /* ConvNeXt's operators: broadcasting Sub and Pow, reductions over any axes, LayerNorm */
    {"Sub", 4},     {"Pow", 6},         {"ReduceMean", 8}, {"ReduceSum", 10}, {"ReduceMax", 8}, {"ReduceMin", 8},
    {"LayerNormalization", 19},         {"Erf", 1},
};

static void run_dir(const char *sub, onnx_conf_report *rep) {
  const char *root = mt_onnx_testdata_dir("onnx_conformance");
  if (!root) return;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", root, sub);
  FILE *log = getenv("TSL_ONNX_CONF_LOG") ? stdout : NULL;
  int n = onnx_conf_run_dir(dir, ref_exec, NULL, rep, log);
  CU_ASSERT(n > 0);
  char title[128];
  snprintf(title, sizeof title, "ONNX %s tests, reference executor", sub);
  onnx_conf_print(rep, title, stdout);
  CU_ASSERT_EQUAL(rep->failed, 0);
}

static void test_onnx_node_tests_pass_or_are_refused_clearly(void) {
  static onnx_conf_report rep;
  memset(&rep, 0, sizeof rep);
  run_dir("node", &rep);
  if (!rep.total) return;
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    const onnx_conf_op *o = onnx_conf_find(&rep, required[i].op);
    CU_ASSERT_PTR_NOT_NULL(o);
    if (!o) continue;
    CU_ASSERT(o->passed >= required[i].min_pass);
    if (o->passed < required[i].min_pass)
      printf("\n  %s: %d cases pass, at least %d expected", o->op, o->passed, required[i].min_pass);
  }
}

/* Old exports (opset 6, some f64): the CNN operators among them pass. */
static void test_onnx_pytorch_tests_pass_or_are_refused_clearly(void) {
  static onnx_conf_report rep;
  memset(&rep, 0, sizeof rep);
  run_dir("pytorch-converted", &rep);
  if (rep.total) {
    CU_ASSERT(rep.passed >= 29);
    const onnx_conf_op *o = onnx_conf_find(&rep, "BatchNormalization");
    CU_ASSERT(o && o->passed == 5);
    o = onnx_conf_find(&rep, "Conv");
    CU_ASSERT(o && o->passed >= 11);
    /* ReflectionPad2d, ReplicationPad2d, ZeroPad2d, ConstantPad2d; opset-6 PRelu */
    o = onnx_conf_find(&rep, "Pad");
    CU_ASSERT(o && o->passed == 4);
    o = onnx_conf_find(&rep, "PRelu");
    CU_ASSERT(o && o->passed == 6);
  }
  memset(&rep, 0, sizeof rep);
  run_dir("pytorch-operator", &rep);
  if (rep.total) CU_ASSERT(rep.passed >= 9);
}

void tsl_tests_models_onnx_conformance(void) {
  CU_pSuite s = CU_add_suite("models_onnx_conformance", NULL, NULL);
  CU_add_test(s, "onnx_node_tests_pass_or_are_refused_clearly", test_onnx_node_tests_pass_or_are_refused_clearly);
  CU_add_test(s, "onnx_pytorch_tests_pass_or_are_refused_clearly", test_onnx_pytorch_tests_pass_or_are_refused_clearly);
}
