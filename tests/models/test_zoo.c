/* The zoo builders: torchvision's parameter counts, determinism of the seeded
 * weights, and layer-by-layer identity with the ONNX exports of the same
 * architectures in ../shared/models (after accounting for what the exporter folded:
 * batch norm into the convolutions, dropout away). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/onnx.h"
#include "models/zoo.h"
#include "models/zoo_binary.h"
#include "models_tests.h"
#include "models_util.h"
#include "ref/ref_graph.h"

/* Parameter counts printed by torchvision 0.14 (sum of p.numel() over parameters(),
 * batch-norm running statistics excluded). */
static const struct {
  const char *name;
  int64_t params;
} torchvision_params[] = {
    {"squeezenet1_0", 1248424}, {"squeezenet1_1", 1235496},    {"resnet18", 11689512},
    {"resnet50", 25557032},     {"mobilenet_v2", 3504872},     {"shufflenet_v2_x1_0", 2278604},
};

static void test_zoo_list_and_unknown_name(void) {
  const char *const *names = tsl_zoo_list();
  int n = 0;
  while (names[n]) n++;
  CU_ASSERT_EQUAL(n, 10);
  /* every listed name is a model, the binarized ones included */
  static const char *const expected[] = {"squeezenet1_0",  "squeezenet1_1",     "resnet18",  "resnet50",
                                         "mobilenet_v2",   "shufflenet_v2_x1_0", "bsqueezenet1_1",
                                         "bsqueezenet1_1_a2", "bresnet18",       "bresnet18_a2"};
  for (int i = 0; i < n && i < 10; i++) CU_ASSERT_STRING_EQUAL(names[i], expected[i]);
  for (int i = 6; i < n; i++) CU_ASSERT(tsl_zoo_binary_has(names[i]));
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL(tsl_zoo_build("alexnet", 1, &g), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "resnet50"));
  CU_ASSERT_PTR_NULL(g);
  CU_ASSERT_EQUAL(tsl_zoo_build(NULL, 1, &g), TSL_ERR_INVALID);
}

static void test_zoo_parameter_counts_match_torchvision(void) {
  for (size_t i = 0; i < sizeof torchvision_params / sizeof torchvision_params[0]; i++) {
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_zoo_build(torchvision_params[i].name, 1, &g), TSL_OK);
    CU_ASSERT_EQUAL(tsl_graph_param_count(g), torchvision_params[i].params);
    if (tsl_graph_param_count(g) != torchvision_params[i].params)
      printf("\n  %s: %lld parameters, torchvision has %lld", torchvision_params[i].name,
             (long long)tsl_graph_param_count(g), (long long)torchvision_params[i].params);
    CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
    const tsl_value *in = &g->values[g->inputs[0]], *out = &g->values[g->outputs[0]];
    CU_ASSERT_STRING_EQUAL(in->name, "input");
    CU_ASSERT_STRING_EQUAL(out->name, "output");
    CU_ASSERT(out->ndim == 2 && out->shape[0] == 1 && out->shape[1] == 1000);
    tsl_graph_free(g);
  }
}

static void test_zoo_resnet50_layers(void) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("resnet50", 3, &g), TSL_OK);
  /* 1 stem + 16 bottlenecks x 3 + 4 downsamples; a ReLU after each of the first two
   * convs of a bottleneck and after its add, plus the stem's. */
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_CONV), 53);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_BATCH_NORM), 53);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_ADD), 16);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_RELU), 49);
  /* torchvision v1.5: the stride sits on the 3x3 convolution of the bottleneck. */
  int v = tsl_graph_find_value(g, "layer2.0.conv2");
  CU_ASSERT_FATAL(v >= 0);
  const tsl_node *c = &g->nodes[g->values[v].producer];
  int n;
  const int64_t *st = tsl_node_attr_ints(c, "strides", &n);
  CU_ASSERT(st && n == 2 && st[0] == 2);
  CU_ASSERT_EQUAL(g->values[v].shape[2], 28);
  tsl_graph_free(g);
}

static void test_zoo_weights_are_deterministic_per_seed(void) {
  tsl_graph *a = NULL, *b = NULL, *c = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("mobilenet_v2", 11, &a), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("mobilenet_v2", 11, &b), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("mobilenet_v2", 12, &c), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(a->n_values, b->n_values);
  int same = 0, consts = 0;
  for (int v = 0; v < a->n_values; v++) {
    const tsl_tensor *ta = a->values[v].constant, *tb = b->values[v].constant, *tc = c->values[v].constant;
    if (!ta) continue;
    consts++;
    CU_ASSERT_FATAL(tb && tc);
    CU_ASSERT_EQUAL(memcmp(ta->data, tb->data, tsl_tensor_nbytes(ta)), 0);
    same += memcmp(ta->data, tc->data, tsl_tensor_nbytes(ta)) == 0;
  }
  CU_ASSERT_EQUAL(consts, 52 + 52 * 4 + 2); /* conv weights, 4 per batch norm, fc */
  CU_ASSERT_EQUAL(same, 0);
  /* Batch norms are not the identity: folding them must change weights. */
  const tsl_tensor *mean = a->values[tsl_graph_find_value(a, "features.1.conv.0.1.running_mean")].constant;
  const tsl_tensor *var = a->values[tsl_graph_find_value(a, "features.1.conv.0.1.running_var")].constant;
  CU_ASSERT(((float *)mean->data)[0] != 0.0f && ((float *)var->data)[0] != 1.0f);
  tsl_graph_free(a);
  tsl_graph_free(b);
  tsl_graph_free(c);
}

/* The zoo graph with the nodes the exporter drops (BatchNormalization, Dropout)
 * skipped: the i-th remaining node, or -1. */
static int kept_node(const tsl_graph *g, int i) {
  for (int k = 0; k < g->n_nodes; k++) {
    tsl_op op = g->nodes[k].op;
    if (op == TSL_OP_BATCH_NORM || op == TSL_OP_DROPOUT) continue;
    if (i-- == 0) return k;
  }
  return -1;
}

static bool same_shape(const tsl_value *a, const tsl_value *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

static void compare_with_twin(const char *model) {
  const char *dir = mt_shared_models_dir(model);
  if (!dir) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
  tsl_graph *onnx = NULL, *zoo = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx(path, &onnx), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build(model, 5, &zoo), TSL_OK);

  /* Layer counts per operator. */
  int zc[TSL_OP_COUNT], oc[TSL_OP_COUNT];
  mt_count_ops(zoo, zc);
  mt_count_ops(onnx, oc);
  for (int op = 0; op < TSL_OP_COUNT; op++) {
    if (op == TSL_OP_BATCH_NORM || op == TSL_OP_DROPOUT) continue;
    CU_ASSERT_EQUAL(zc[op], oc[op]);
    if (zc[op] != oc[op]) printf("\n  %s: zoo has %d %s, export %d", model, zc[op], tsl_op_name(op), oc[op]);
  }
  CU_ASSERT_EQUAL(oc[TSL_OP_BATCH_NORM], 0);

  /* Node by node, in order: operator, output shape; every Conv's weight shape and
   * attributes. */
  int mismatches = 0, convs = 0;
  for (int i = 0; i < onnx->n_nodes; i++) {
    int k = kept_node(zoo, i);
    CU_ASSERT_FATAL(k >= 0);
    const tsl_node *a = &onnx->nodes[i], *b = &zoo->nodes[k];
    bool ok = a->op == b->op && same_shape(&onnx->values[a->outputs[0]], &zoo->values[b->outputs[0]]);
    if (ok && a->op == TSL_OP_CONV) {
      convs++;
      tsl_conv2d_params pa, pb;
      CU_ASSERT_EQUAL(tsl_node_conv2d_params(onnx, a, &pa), TSL_OK);
      CU_ASSERT_EQUAL(tsl_node_conv2d_params(zoo, b, &pb), TSL_OK);
      ok = memcmp(&pa, &pb, sizeof pa) == 0 &&
           same_shape(&onnx->values[a->inputs[1]], &zoo->values[b->inputs[1]]) &&
           same_shape(&onnx->values[a->inputs[0]], &zoo->values[b->inputs[0]]);
    }
    if (!ok && mismatches++ < 3)
      printf("\n  %s: node %d differs: export %s '%s', zoo %s '%s'", model, i, tsl_op_name(a->op), a->name,
             tsl_op_name(b->op), b->name);
  }
  CU_ASSERT_EQUAL(mismatches, 0);
  CU_ASSERT_EQUAL(kept_node(zoo, onnx->n_nodes), -1); /* nothing left over */
  CU_ASSERT_EQUAL(convs, oc[TSL_OP_CONV]);

  /* Parameters: folding a batch norm of C channels into a bias-free conv trades its
   * scale and shift (2C) for a conv bias (C). */
  int64_t folded = 0;
  for (int k = 0; k < zoo->n_nodes; k++)
    if (zoo->nodes[k].op == TSL_OP_BATCH_NORM) folded += zoo->values[zoo->nodes[k].outputs[0]].shape[1];
  CU_ASSERT_EQUAL(tsl_graph_param_count(zoo) - folded, tsl_graph_param_count(onnx));
  tsl_graph_free(onnx);
  tsl_graph_free(zoo);
}

static void test_zoo_squeezenet1_0_matches_onnx_twin(void) { compare_with_twin("squeezenet1_0"); }
static void test_zoo_squeezenet1_1_matches_onnx_twin(void) { compare_with_twin("squeezenet1_1"); }
static void test_zoo_resnet18_matches_onnx_twin(void) { compare_with_twin("resnet18"); }
static void test_zoo_mobilenet_v2_matches_onnx_twin(void) { compare_with_twin("mobilenet_v2"); }
static void test_zoo_shufflenet_v2_x1_0_matches_onnx_twin(void) { compare_with_twin("shufflenet_v2_x1_0"); }

/* The cheap models through the reference executor: seeded weights keep the logits
 * finite and of order 1 (neither vanishing nor exploding through the depth). */
static void test_zoo_activations_stay_order_one(void) {
  static const char *models[3] = {"squeezenet1_1", "mobilenet_v2", "shufflenet_v2_x1_0"};
  int64_t shape[4] = {1, 3, 224, 224};
  tsl_tensor *x;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 4, shape, &x), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(x, 99, -2.0, 2.0), TSL_OK);
  for (int i = 0; i < 3; i++) {
    tsl_graph *g = NULL;
    tsl_tensor *y = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_zoo_build(models[i], 1, &g), TSL_OK);
    CU_ASSERT_EQUAL(ref_graph_run(g, &x, 1, &y, 1), TSL_OK);
    if (y) {
      double m = mt_max_abs(y->data, 1000);
      bool finite = true;
      for (int k = 0; k < 1000; k++) finite &= isfinite(((float *)y->data)[k]) != 0;
      printf("\n  zoo %s: max |logit| %.3g", models[i], m);
      CU_ASSERT(finite);
      CU_ASSERT(m > 0.05 && m < 1000.0);
    }
    tsl_tensor_free(y);
    tsl_graph_free(g);
  }
  tsl_tensor_free(x);
}

void tsl_tests_models_zoo(void) {
  CU_pSuite s = CU_add_suite("models_zoo", NULL, NULL);
  CU_add_test(s, "zoo_list_and_unknown_name", test_zoo_list_and_unknown_name);
  CU_add_test(s, "zoo_parameter_counts_match_torchvision", test_zoo_parameter_counts_match_torchvision);
  CU_add_test(s, "zoo_resnet50_layers", test_zoo_resnet50_layers);
  CU_add_test(s, "zoo_weights_are_deterministic_per_seed", test_zoo_weights_are_deterministic_per_seed);
  CU_add_test(s, "zoo_squeezenet1_0_matches_onnx_twin", test_zoo_squeezenet1_0_matches_onnx_twin);
  CU_add_test(s, "zoo_squeezenet1_1_matches_onnx_twin", test_zoo_squeezenet1_1_matches_onnx_twin);
  CU_add_test(s, "zoo_resnet18_matches_onnx_twin", test_zoo_resnet18_matches_onnx_twin);
  CU_add_test(s, "zoo_mobilenet_v2_matches_onnx_twin", test_zoo_mobilenet_v2_matches_onnx_twin);
  CU_add_test(s, "zoo_shufflenet_v2_x1_0_matches_onnx_twin", test_zoo_shufflenet_v2_x1_0_matches_onnx_twin);
  CU_add_test(s, "zoo_activations_stay_order_one", test_zoo_activations_stay_order_one);
}
