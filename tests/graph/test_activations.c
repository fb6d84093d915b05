/* The activation table (ops/nn/activation.h) through the graph compiler: every function,
 * plain and in the blocked NCHW[x]c layout with a channel tail (C = lanes + 3 at the
 * host's lanes, so both x86 passes cover 8 and 16), against the reference executor's
 * own formulas (tests/ref/ref_activation.c). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/target.h"
#include "graph_tests.h"
#include "graph_util.h"
#include "models/compile.h"
#include "ops/nn/activation.h"

static int host_lanes(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  return tsl_target_f32_lanes(&t);
}

/* f with attributes other than the defaults (where it has any), set on the node */
static int activation(tsl_graph *g, int x, const tsl_activation *a) {
  int node, y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", a->onnx_op), TSL_OK);
  for (int i = 0; i < a->nattrs; i++)
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, a->attr[i], a->attr_default[i] * 0.75 + 0.125), TSL_OK);
  return y;
}

/* functions defined for x >= 0 only (x > 0 where x = 0 would give inf) */
static bool positive_domain(const tsl_activation *a) { return !strcmp(a->onnx_op, "Log") || !strcmp(a->onnx_op, "Sqrt"); }

/* FNV-1a of the name: a seed per function */
static uint64_t name_seed(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h % 100000;
}

static tsl_activation named(const char *op) {
  const tsl_activation *a = tsl_activation_find(op);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  return *a;
}

/* Compiles g and compares output 0 with the reference; returns the layout transforms
 * of the plan (-1 on failure). */
static int check(const tsl_graph *g, const char *what, const float *x, double tol) {
  float *got[1] = {0}, *want[1] = {0};
  int transforms = -1;
  tsl_status st = gt_compile_run(g, NULL, &x, got, NULL, &transforms);
  if (st != TSL_OK) printf("\n  %s: %s", what, tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  CU_ASSERT_EQUAL(gt_reference_run(g, &x, want), TSL_OK);
  if (got[0] && want[0]) {
    double err = gt_rel_err(got[0], want[0], gt_numel(g, g->outputs[0]));
    if (!(err <= tol)) printf("\n  %s: relative error %.3g", what, err);
    CU_ASSERT(err <= tol);
  }
  free(got[0]);
  free(want[0]);
  return st == TSL_OK ? transforms : -1;
}

static float *random_input(int64_t n, uint64_t seed) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, seed, -3.0, 3.0), TSL_OK);
  float *x = malloc((size_t)n * sizeof *x);
  memcpy(x, t->data, (size_t)n * sizeof *x);
  tsl_tensor_free(t);
  return x;
}

/* conv 1x1 -> f -> conv 1x1 with C = lanes + 3 channels: f runs blocked, with a partial
 * last block. Its padding lanes must be 0 whatever f(0) is: the next conv multiplies them
 * by zero weights, so an inf there (Reciprocal, Log) would make NaNs. */
static void test_every_activation_blocked_with_a_channel_tail(void) {
  int lanes = host_lanes(), n;
  int64_t C = lanes + 3;
  const tsl_activation *list = tsl_activation_list(&n);
  CU_ASSERT(n >= 20);
  float *x = random_input(C * 5 * 7, 3);
  for (int i = 0; i < n; i++) {
    tsl_graph *g;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
    int64_t s[4] = {1, C, 5, 7};
    int v;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &v), TSL_OK);
    uint64_t seed = name_seed(list[i].onnx_op); /* the same weights whatever the table's order */
    v = gt_add_conv1x1(g, v, C, C, seed);
    if (positive_domain(&list[i]) || !strcmp(list[i].onnx_op, "Reciprocal")) {
      /* Exp keeps the operand away from 0, where Log and 1/x amplify rounding; its own
       * padding lanes are written 0, so Log's would be -inf and 1/x's inf unless guarded */
      tsl_activation e = named("Exp");
      v = activation(g, v, &e);
    }
    v = activation(g, v, &list[i]);
    v = gt_add_conv1x1(g, v, C, 5, seed + 30);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, v), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    char what[96];
    snprintf(what, sizeof what, "%s blocked at %d lanes", list[i].onnx_op, lanes);
    /* out of the blocked layout once (the first conv reads the plain input, a partial
     * block): f itself ran blocked */
    CU_ASSERT_EQUAL(check(g, what, x, 2e-5), 1);
    tsl_graph_free(g);
  }
  free(x);
}

/* f alone on a 3-D tensor (plain layout): both signs, signed zeros, +-1 and +-20 among the inputs */
static void test_every_activation_plain_with_special_values(void) {
  int n;
  const tsl_activation *list = tsl_activation_list(&n);
  int64_t s[3] = {2, 3, 37};
  float *x = random_input(2 * 3 * 37, 5);
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = 1.0f;
  x[3] = -1.0f;
  x[4] = 20.0f;
  x[5] = -20.0f;
  for (int i = 0; i < n; i++) {
    tsl_graph *g;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
    int v;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 3, s, &v), TSL_OK);
    if (positive_domain(&list[i]) || !strcmp(list[i].onnx_op, "Reciprocal")) {
      tsl_activation e = named("Exp");
      v = activation(g, v, &e);
    }
    v = activation(g, v, &list[i]);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, v), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    CU_ASSERT_EQUAL(check(g, list[i].onnx_op, x, 2e-6), 0);
    tsl_graph_free(g);
  }
  free(x);
}

/* An unknown function or a non-float attribute is refused by shape inference, naming
 * the node. */
static void test_activation_node_errors_name_the_node(void) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[2] = {2, 3};
  int v, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 2, s, &v), TSL_OK);
  int y;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, "y", &y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_ACTIVATION, "act", 1, &v, 1, &y, &node), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_INVALID); /* no function */
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'act'"));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", "NoSuchFunction"), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "NoSuchFunction"));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", "LeakyRelu"), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "alpha", 1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "alpha"));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "alpha", 0.1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_OK);
  tsl_graph_free(g);
}

void tsl_tests_graph_activations(void) {
  CU_pSuite s = CU_add_suite("graph_activations", NULL, NULL);
  CU_add_test(s, "every_activation_blocked_with_a_channel_tail", test_every_activation_blocked_with_a_channel_tail);
  CU_add_test(s, "every_activation_plain_with_special_values", test_every_activation_plain_with_special_values);
  CU_add_test(s, "activation_node_errors_name_the_node", test_activation_node_errors_name_the_node);
}
