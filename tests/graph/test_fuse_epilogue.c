/* Activation epilogues in the graph (models/passes/fuse_conv.h): tsl.Activation nodes
 * after a Conv (also after its residual Add) and after a Gemm or MatMul fold into that
 * node, so the optimized graph has no activation node left and the plan one kernel per
 * conv / product; outputs equal the reference executor's on the unfused graph, plain
 * (no layout) and blocked (NCHW[x]c, with padding lanes: 12 and 20 channels at 8 lanes). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "target/target.h"
#include "models/passes/fuse_conv.h"

static int act(tsl_graph *g, int x, const char *function, int nattrs, const char *const *names, const double *v) {
  int node, y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", function), TSL_OK);
  for (int i = 0; i < nattrs; i++) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, names[i], v[i]), TSL_OK);
  return y;
}

/* A new graph with one f32 input x of `shape`; *x its value. */
static tsl_graph *new_graph(const char *name, int ndim, const int64_t *shape, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new(name, &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, ndim, shape, x), TSL_OK);
  return g;
}

static int binary(tsl_graph *g, tsl_op op, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, op, 2, ins, NULL);
}

/* The graph after the compiler's passes at `block` (0: plain). */
static tsl_graph *optimized(const tsl_graph *g, int block, tsl_compile_stats *st) {
  tsl_graph *c = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &c), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(c, block, st), TSL_OK);
  return c;
}

/* Compiles g plain and blocked: `plain_kernels` / `blocked_kernels` kernels besides
 * layout transforms, outputs within tol of the reference executor's. */
static void check_compiled_modes(const tsl_graph *g, int plain_kernels, int blocked_kernels, double tol) {
  int64_t n = gt_numel(g, g->inputs[0]);
  float *x = gt_random(n, 5, -2.0, 2.0);
  const float *ins[1] = {x};
  float *want[1] = {0};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  int64_t nout = gt_numel(g, g->outputs[0]);
  for (int plain = 0; plain < 2; plain++) {
    tsl_compile_options o = {0};
    o.no_layout = plain;
    tsl_compile_stats st = {0};
    float *got[1] = {0};
    int transforms = 0, kernels = plain ? plain_kernels : blocked_kernels;
    tsl_status s = gt_compile_run(g, &o, ins, got, &st, &transforms);
    if (s != TSL_OK) printf("\n  compile (%s): %s\n", plain ? "plain" : "blocked", tsl_last_error());
    CU_ASSERT_EQUAL(s, TSL_OK);
    if (s == TSL_OK && st.steps != kernels + transforms)
      printf("\n  %s: %d steps, %d expected (%d kernels + %d layout transforms)\n", plain ? "plain" : "blocked", st.steps,
             kernels + transforms, kernels, transforms);
    CU_ASSERT_EQUAL(st.steps, kernels + transforms);
    if (got[0]) {
      double err = gt_rel_err(got[0], want[0], nout);
      if (!(err <= tol)) printf("\n  %s: error %g vs the reference\n", plain ? "plain" : "blocked", err);
      CU_ASSERT(err <= tol);
    }
    free(got[0]);
  }
  free(want[0]);
  free(x);
}

/* check_compiled_modes with the same kernel count plain and blocked. */
static void check_compiled(const tsl_graph *g, int kernels, double tol) { check_compiled_modes(g, kernels, kernels, tol); }

/* After the passes at 8 lanes, `left` activation nodes remain; then check_compiled. */
static void check_fused(const tsl_graph *g, int left, int kernels) {
  tsl_compile_stats st = {0};
  tsl_graph *o = optimized(g, 8, &st);
  CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_ACTIVATION), left);
  tsl_graph_free(o);
  check_compiled(g, kernels, 1e-5);
}

static int conv3x3(tsl_graph *g, int x, int64_t cin, int64_t cout, uint64_t seed) {
  int64_t ws[4] = {cout, cin, 3, 3};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.2, 0.2), gt_add_const(g, 1, &cout, seed + 1, -0.2, 0.2)};
  int node, y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  const int64_t pads[4] = {1, 1, 1, 1};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
  return y;
}

/* conv -> Sigmoid -> Mul (SiLU), conv -> HardSigmoid(1/6, 1/2) -> Mul (HardSwish),
 * conv -> Add(residual) -> LeakyRelu, conv -> Sigmoid (f(0) != 0, 20 channels). */
static void test_conv_silu_hardswish_residual_sigmoid(void) {
  int64_t s[4] = {1, 12, 9, 9};
  int x;
  tsl_graph *g = new_graph("t", 4, s, &x);
  int a = conv3x3(g, x, 12, 20, 11);
  int b = binary(g, TSL_OP_MUL, a, act(g, a, "Sigmoid", 0, NULL, NULL));
  int c = gt_add_conv1x1(g, b, 20, 24, 21);
  const char *hs[2] = {"alpha", "beta"};
  const double hv[2] = {1.0 / 6.0, 0.5};
  int d = binary(g, TSL_OP_MUL, act(g, c, "HardSigmoid", 2, hs, hv), c);
  int e = gt_add_conv1x1(g, d, 24, 12, 31);
  const char *la[1] = {"alpha"};
  const double lv[1] = {0.1};
  int f = act(g, binary(g, TSL_OP_ADD, e, x), "LeakyRelu", 1, la, lv);
  int h = act(g, gt_add_conv1x1(g, f, 12, 20, 41), "Sigmoid", 0, NULL, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, h), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  for (int block = 0; block <= 8; block += 8) {
    tsl_compile_stats st = {0};
    tsl_graph *o = optimized(g, block, &st);
    CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_CONV), 4);
    CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_ACTIVATION), 0);
    CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_MUL), 0);
    CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_ADD), 0);
    int fused_fns = 0;
    for (int i = 0; i < o->n_nodes; i++)
      fused_fns += tsl_node_attr_int(&o->nodes[i], TSL_ATTR_ACTIVATION, 0) == TSL_ACT_FUNCTION;
    CU_ASSERT_EQUAL(fused_fns, 4);
    tsl_graph_free(o);
  }
  check_compiled(g, 4, 1e-5);
  tsl_graph_free(g);
}

/* ConvNeXt's pointwise MLP: MatMul -> Gelu -> MatMul on [1, 7, 16]; and a Gemm -> Tanh. */
static void test_matmul_gelu_and_gemm_tanh(void) {
  int64_t s[3] = {1, 7, 16}, w1[2] = {16, 32}, w2[2] = {32, 8};
  int x;
  tsl_graph *g = new_graph("t", 3, s, &x);
  int a = act(g, binary(g, TSL_OP_MATMUL, x, gt_add_const(g, 2, w1, 3, -0.4, 0.4)), "Gelu", 0, NULL, NULL);
  int b = binary(g, TSL_OP_MATMUL, a, gt_add_const(g, 2, w2, 4, -0.4, 0.4));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, b), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  check_fused(g, 0, 2);
  tsl_graph_free(g);

  int64_t s2[2] = {5, 16}, wg[2] = {16, 12}, bg = 12;
  g = new_graph("t2", 2, s2, &x);
  int ins[3] = {x, gt_add_const(g, 2, wg, 6, -0.4, 0.4), gt_add_const(g, 1, &bg, 7, -0.2, 0.2)};
  int y = act(g, gt_add_node(g, TSL_OP_GEMM, 3, ins, NULL), "Tanh", 0, NULL, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  check_fused(g, 0, 1);
  tsl_graph_free(g);
}

/* After a depthwise conv, a piecewise-linear function (HardSigmoid) fuses; a
 * transcendental one (Sigmoid, as Swish) stays a kernel of its own below 16-lane blocks
 * and fuses at 16 (TSL_FUSE_TRANSCENDENTAL_MIN_BLOCK, fuse_conv.h). */
static int depthwise3x3(tsl_graph *g, int x, int64_t c, uint64_t seed) {
  int64_t ws[4] = {c, 1, 3, 3};
  int node, ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.4, 0.4), gt_add_const(g, 1, &c, seed + 1, -0.2, 0.2)};
  int y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  const int64_t pads[4] = {1, 1, 1, 1};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", c), TSL_OK);
  return y;
}

static void test_depthwise_fuses_only_piecewise_linear_functions(void) {
  int64_t s[4] = {1, 12, 7, 7};
  int x;
  tsl_graph *g = new_graph("t", 4, s, &x);
  const char *hs[2] = {"alpha", "beta"};
  const double hv[2] = {0.3, 0.4};
  int b = act(g, depthwise3x3(g, x, 12, 61), "HardSigmoid", 2, hs, hv);
  int c = depthwise3x3(g, b, 12, 63);
  int d = binary(g, TSL_OP_MUL, c, act(g, c, "Sigmoid", 0, NULL, NULL)); /* Swish (fuse_gating.h) */
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gt_add_conv1x1(g, d, 12, 8, 65)), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  int blocks[3] = {0, 8, 16}, left[3] = {1, 1, 0};
  for (int i = 0; i < 3; i++) {
    tsl_compile_stats st = {0};
    tsl_graph *o = optimized(g, blocks[i], &st);
    CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_ACTIVATION), left[i]);
    tsl_graph_free(o);
  }
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  /* two depthwise convs, the Swish unless fused, the 1x1 conv */
  check_compiled_modes(g, 4, tsl_target_f32_lanes(&t) >= TSL_FUSE_TRANSCENDENTAL_MIN_BLOCK ? 3 : 4, 1e-5);
  tsl_graph_free(g);
}

/* An activation whose input is read twice, or is a graph output, stays separate. */
static void test_shared_conv_output_keeps_its_activation(void) {
  int64_t s[4] = {1, 8, 5, 5};
  int x;
  tsl_graph *g = new_graph("t", 4, s, &x);
  int a = gt_add_conv1x1(g, x, 8, 8, 51);
  int b = act(g, a, "Tanh", 0, NULL, NULL);
  int c = binary(g, TSL_OP_ADD, a, b);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, c), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  check_fused(g, 1, 3);
  tsl_graph_free(g);
}

void tsl_tests_graph_fuse_epilogue(void) {
  CU_pSuite s = CU_add_suite("graph_fuse_epilogue", NULL, NULL);
  CU_add_test(s, "conv_silu_hardswish_residual_sigmoid", test_conv_silu_hardswish_residual_sigmoid);
  CU_add_test(s, "matmul_gelu_and_gemm_tanh", test_matmul_gelu_and_gemm_tanh);
  CU_add_test(s, "depthwise_fuses_only_piecewise_linear_functions", test_depthwise_fuses_only_piecewise_linear_functions);
  CU_add_test(s, "shared_conv_output_keeps_its_activation", test_shared_conv_output_keeps_its_activation);
}
