/* ONNX conformance through the compiled path: the node tests of libonnx-testdata for the
 * CNN operators of issue 5 (data/node) and the 2-D conv/pool/batch-norm cases of
 * data/pytorch-converted (and their Pad and PRelu cases), imported, compiled by tsl_graph_compile (passes, NCHW[x]c,
 * every conv through the tuner's dispatch, JIT kernels) and run by the graph executor,
 * each output compared with the test's expected output. Prints the per-operator table.
 * Skipped with a message where the test data is absent. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/compile.h"
#include "models_tests.h"
#include "models_util.h"
#include "onnx_conformance.h"
#include "runtime/graph_executor.h"

static tsl_status jit_exec(void *ctx, const tsl_graph *g, tsl_tensor *const *inputs, int n_inputs,
                           tsl_tensor **outputs, int n_outputs) {
  (void)ctx;
  tsl_graph_plan *plan = NULL;
  tsl_graph_ctx *gc = NULL;
  tsl_status st = tsl_graph_compile(g, NULL, &plan, NULL);
  if (st == TSL_OK) st = tsl_graph_ctx_new(plan, &gc);
  for (int i = 0; st == TSL_OK && i < n_inputs; i++) {
    if (i >= tsl_graph_plan_num_inputs(plan)) {
      st = tsl_error(TSL_ERR_INVALID, "jit: %d inputs given, the plan has %d", n_inputs, tsl_graph_plan_num_inputs(plan));
      break;
    }
    memcpy(tsl_graph_ctx_input(gc, i), inputs[i]->data, tsl_tensor_nbytes(inputs[i]));
  }
  if (st == TSL_OK) st = tsl_graph_run(gc, NULL);
  for (int k = 0; st == TSL_OK && k < n_outputs; k++) {
    const tsl_value *v = &g->values[g->outputs[k]];
    if ((st = tsl_tensor_new(v->dtype, v->ndim, v->shape, &outputs[k])) == TSL_OK)
      memcpy(outputs[k]->data, tsl_graph_ctx_output(gc, k), tsl_tensor_nbytes(outputs[k]));
  }
  tsl_graph_ctx_free(gc);
  tsl_graph_plan_free(plan);
  return st;
}

/* Links the case folders of `src` whose names start with one of `prefixes` into `dst`. */
static int link_cases(const char *src, const char *const *prefixes, int np, const char *dst) {
  DIR *d = opendir(src);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    bool want = false;
    for (int i = 0; i < np && !want; i++) want = strncmp(e->d_name, prefixes[i], strlen(prefixes[i])) == 0;
    if (!want) continue;
    char from[4400], to[4400];
    snprintf(from, sizeof from, "%s/%s", src, e->d_name);
    snprintf(to, sizeof to, "%s/%s", dst, e->d_name);
    n += symlink(from, to) == 0;
  }
  closedir(d);
  return n;
}

static void remove_links(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(dir);
}

/* The operators of the list: at least this many of their node tests pass
 * through the compiled path (what the reference executor passes, but Reshape's
 * allowzero case whose output is empty: no kernel computes an empty tensor). */
static const struct {
  const char *op;
  int min_pass;
} required[] = {
    {"Conv", 6},    {"MaxPool", 10}, {"AveragePool", 11}, {"GlobalAveragePool", 2}, {"BatchNormalization", 2},
    {"Relu", 1},    {"Clip", 8},     {"Add", 3},          {"Mul", 4},               {"Concat", 12},
    {"Gemm", 11},   {"MatMul", 3},   {"Flatten", 9},      {"Reshape", 9},          {"Transpose", 7},
    {"Softmax", 7}, {"Dropout", 6},
    /* the activation table (ops/nn/activation.h): every node test of each function */
    {"Sigmoid", 2}, {"HardSigmoid", 3}, {"HardSwish", 1}, {"LeakyRelu", 3}, {"Elu", 3}, {"Selu", 3},
    {"Celu", 1},    {"ThresholdedRelu", 3}, {"Tanh", 2}, {"Softplus", 2}, {"Softsign", 2}, {"Neg", 2},
    {"Abs", 1},     {"Exp", 2},         {"Log", 2},       {"Sqrt", 2},      {"Reciprocal", 2}, {"Floor", 2},
    {"Ceil", 2},    {"Round", 1},
    /* segmentation and newer CNNs (as the reference executor) */
    {"Resize", 13}, {"Upsample", 1}, {"PRelu", 2}, {"Squeeze", 2}, {"Unsqueeze", 8}, {"Pad", 1},
    /* ConvNeXt's operators: broadcasting Sub and Pow, reductions over any axes, LayerNorm */
    {"Sub", 4},     {"Pow", 6},         {"ReduceMean", 8}, {"ReduceSum", 10}, {"ReduceMax", 8}, {"ReduceMin", 8},
    {"LayerNormalization", 19},         {"Erf", 1},
};

static void test_onnx_node_tests_pass_through_the_compiled_path(void) {
  const char *root = mt_onnx_testdata_dir("onnx_node_tests_pass_through_the_compiled_path");
  if (!root) return;
  static const char *const node_prefixes[] = {
      "test_conv", "test_basic_conv", "test_maxpool", "test_averagepool", "test_globalaveragepool", "test_batchnorm",
      "test_relu",      "test_clip",    "test_add",         "test_mul",               "test_div",
      "test_concat",    "test_gemm",    "test_matmul",      "test_flatten",           "test_reshape",
      "test_transpose", "test_softmax", "test_dropout",     "test_identity",          "test_reduce_mean",
      "test_slice",     "test_split",   "test_pad",
      /* the activation table (ops/nn/activation.h) */
      "test_sigmoid", "test_hardsigmoid", "test_hardswish", "test_leakyrelu", "test_elu", "test_selu", "test_celu",
      "test_thresholdedrelu", "test_tanh", "test_softplus", "test_softsign", "test_mish", "test_neg", "test_abs",
      "test_exp", "test_log", "test_sqrt", "test_reciprocal", "test_floor", "test_ceil", "test_round",
      /* segmentation and newer CNNs: Resize, Upsample, Pad's modes, PRelu, Squeeze/Unsqueeze */
      "test_resize", "test_upsample", "test_constant_pad", "test_edge_pad", "test_reflect_pad", "test_prelu",
      "test_squeeze", "test_unsqueeze",
      /* ConvNeXt's operators */
      "test_sub", "test_pow", "test_reduce_sum", "test_reduce_max", "test_reduce_min", "test_layer_normalization",
      "test_erf",
  };
  static const char *const torch_prefixes[] = {"test_Conv2d", "test_AvgPool2d",   "test_MaxPool2d", "test_BatchNorm2d",
                                                "test_ReLU",   "test_Softmax",     "test_PReLU",     "test_ReflectionPad2d",
                                                "test_ReplicationPad2d", "test_ZeroPad2d", "test_ConstantPad2d"};
  char dir[256], src[4200];
  snprintf(dir, sizeof dir, "/tmp/tessel_onnx_jit_%d", (int)getpid());
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
  snprintf(src, sizeof src, "%s/node", root);
  int n = link_cases(src, node_prefixes, (int)(sizeof node_prefixes / sizeof node_prefixes[0]), dir);
  CU_ASSERT(n > 100);
  static onnx_conf_report rep;
  memset(&rep, 0, sizeof rep);
  FILE *log = getenv("TSL_ONNX_CONF_LOG") ? stdout : NULL;
  onnx_conf_run_dir(dir, jit_exec, NULL, &rep, log);
  onnx_conf_print(&rep, "ONNX node tests (CNN operators), compiled path (JIT)", stdout);
  CU_ASSERT_EQUAL(rep.failed, 0);
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    const onnx_conf_op *o = onnx_conf_find(&rep, required[i].op);
    CU_ASSERT_PTR_NOT_NULL(o);
    if (o && o->passed < required[i].min_pass)
      printf("\n  %s: %d cases pass, at least %d expected", o->op, o->passed, required[i].min_pass);
    CU_ASSERT(o && o->passed >= required[i].min_pass);
  }
  remove_links(dir);
  /* the old PyTorch exports: depthwise, grouped, dilated, strided 2-D convs, pools */
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
  snprintf(src, sizeof src, "%s/pytorch-converted", root);
  link_cases(src, torch_prefixes, (int)(sizeof torch_prefixes / sizeof torch_prefixes[0]), dir);
  memset(&rep, 0, sizeof rep);
  onnx_conf_run_dir(dir, jit_exec, NULL, &rep, log);
  onnx_conf_print(&rep, "ONNX pytorch-converted 2-D conv/pool/batch-norm tests, compiled path (JIT)", stdout);
  CU_ASSERT_EQUAL(rep.failed, 0);
  const onnx_conf_op *conv = onnx_conf_find(&rep, "Conv");
  CU_ASSERT(conv && conv->passed >= 11);
  const onnx_conf_op *pad = onnx_conf_find(&rep, "Pad"), *prelu = onnx_conf_find(&rep, "PRelu");
  CU_ASSERT(pad && pad->passed == 4);     /* reflection, replication, zero, constant 2-D */
  CU_ASSERT(prelu && prelu->passed == 6); /* opset 6: per-channel slopes */
  remove_links(dir);
}

void tsl_tests_models_onnx_conformance_jit(void) {
  CU_pSuite s = CU_add_suite("models_onnx_conformance_jit", NULL, NULL);
  CU_add_test(s, "onnx_node_tests_pass_through_the_compiled_path", test_onnx_node_tests_pass_through_the_compiled_path);
}
