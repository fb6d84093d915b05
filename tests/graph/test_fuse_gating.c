/* The gating pass (models/passes/fuse_gating.h): x * Sigmoid(x) and
 * x * HardSigmoid(x; 1/6, 1/2) become one Swish / HardSwish node, in either operand
 * order; what is not that pattern stays (a gate of another value, a gate read twice,
 * HardSigmoid at other constants, a Mul that is a graph output). Each graph is also run
 * compiled against the reference executor on the unfused graph. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/passes/fuse_gating.h"

static int gate(tsl_graph *g, int x, const char *function, double alpha, double beta) {
  int node, y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", function), TSL_OK);
  if (alpha == alpha) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "alpha", alpha), TSL_OK);
  if (beta == beta) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "beta", beta), TSL_OK);
  return y;
}

static int mul(tsl_graph *g, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
}

static int count_function(const tsl_graph *g, const char *f) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const tsl_attr *a = tsl_node_attr(&g->nodes[i], "function");
    n += g->nodes[i].op == TSL_OP_ACTIVATION && a && a->kind == TSL_ATTR_STRING && strcmp(a->s, f) == 0;
  }
  return n;
}

/* The fused graph's output equals the reference executor's on the unfused one. */
static void check_same_output(const tsl_graph *unfused, const tsl_graph *fused, int64_t n) {
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(((i * 7919) % 200) - 100) * 0.07f; /* -7 .. 7 */
  const float *ins[1] = {x};
  float *got[1] = {0}, *want[1] = {0};
  CU_ASSERT_EQUAL(gt_compile_run(fused, NULL, ins, got, NULL, NULL), TSL_OK);
  CU_ASSERT_EQUAL(gt_reference_run(unfused, ins, want), TSL_OK);
  if (got[0] && want[0]) CU_ASSERT(gt_rel_err(got[0], want[0], n) < 1e-6);
  free(got[0]), free(want[0]), free(x);
}

static void test_silu_and_hard_swish_patterns_fuse_in_either_order(void) {
  tsl_graph *g, *orig;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[4] = {1, 19, 5, 6};
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int a = mul(g, x, gate(g, x, "Sigmoid", NAN, NAN));                           /* x * sigmoid(x) */
  int b = mul(g, gate(g, a, "HardSigmoid", 1.0 / 6.0, 0.5), a);                 /* hardsigmoid(a) * a */
  int c = mul(g, gate(g, b, "HardSigmoid", (float)(1.0 / 6.0), 0.5), b);        /* alpha as ONNX stores it */
  int d = gt_add_node(g, TSL_OP_RELU, 1, &c, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, d), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &orig), TSL_OK);
  int fused = -1;
  CU_ASSERT_EQUAL(tsl_pass_fuse_gating(g, &fused), TSL_OK);
  CU_ASSERT_EQUAL(fused, 3);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_MUL), 0);
  CU_ASSERT_EQUAL(count_function(g, "Swish"), 1);
  CU_ASSERT_EQUAL(count_function(g, "HardSwish"), 2);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  check_same_output(orig, g, 19 * 5 * 6);
  tsl_graph_free(orig);
  tsl_graph_free(g);
}

static void test_gates_that_are_not_self_gating_stay(void) {
  tsl_graph *g, *orig;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[4] = {1, 8, 4, 4};
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int r = gt_add_node(g, TSL_OP_RELU, 1, &x, NULL);
  int a = mul(g, x, gate(g, r, "Sigmoid", NAN, NAN));             /* gate of another value (SE-like) */
  int h = gate(g, a, "HardSigmoid", 0.2, 0.5);                    /* ONNX's default constants: not HardSwish */
  int b = mul(g, a, h);
  int sg = gate(g, b, "Sigmoid", NAN, NAN);                       /* gate read twice */
  int c = mul(g, b, sg);
  int ins[2] = {c, sg};
  int d = gt_add_node(g, TSL_OP_ADD, 2, ins, NULL);
  int e = mul(g, d, gate(g, d, "Sigmoid", NAN, NAN));             /* the graph's output: keeps its Mul */
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, e), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &orig), TSL_OK);
  int fused = -1;
  CU_ASSERT_EQUAL(tsl_pass_fuse_gating(g, &fused), TSL_OK);
  CU_ASSERT_EQUAL(fused, 0);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_MUL), 4);
  CU_ASSERT_EQUAL(count_function(g, "Swish"), 0);
  check_same_output(orig, g, 8 * 4 * 4);
  tsl_graph_free(orig);
  tsl_graph_free(g);
}

void tsl_tests_graph_fuse_gating(void) {
  CU_pSuite s = CU_add_suite("graph_fuse_gating", NULL, NULL);
  CU_add_test(s, "silu_and_hard_swish_patterns_fuse_in_either_order", test_silu_and_hard_swish_patterns_fuse_in_either_order);
  CU_add_test(s, "gates_that_are_not_self_gating_stay", test_gates_that_are_not_self_gating_stay);
}
