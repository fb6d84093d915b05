/* Squeeze-excitation's channel scale folded into the projection conv
 * (models/passes/fuse_channel_scale.h) at 4 lanes: SE blocks compiled ahead of time for
 * armv8 (NCHW4c, C = 19 not a multiple of 4) and run by the aarch64 device app under
 * qemu, against the reference executor: two images through the channel-scaled GEMM 1x1
 * kernels (HardSigmoid gate, then Sigmoid with a residual), and one image through a
 * strided projection whose transformed weight is scaled by a step of its own. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cross_util.h"
#include "graph/graph_util.h"
#include "ref/ref_ops.h"

enum { C = 19 };

static int unary(tsl_graph *g, tsl_op op, int x, const char *fn) {
  int node, y = gt_add_node(g, op, 1, &x, &node);
  if (fn) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", fn), TSL_OK);
  return y;
}

/* x * gate(x): pool, conv, relu, conv, fn (ONNX's HardSigmoid defaults are fine here). */
static int se_scaled(tsl_graph *g, int x, const char *fn, uint64_t seed) {
  int p = unary(g, TSL_OP_GLOBAL_AVERAGE_POOL, x, NULL);
  int s = gt_add_conv1x1(g, unary(g, TSL_OP_RELU, gt_add_conv1x1(g, p, C, 6, seed), NULL), 6, C, seed + 2);
  int ins[2] = {unary(g, TSL_OP_ACTIVATION, s, fn), x};
  return gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
}

static void run_case(int64_t n, bool strided, const char *name) {
  tsl_graph *g;
  int x;
  int64_t xs[4] = {n, C, 6, 5};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new(name, &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, xs, &x), TSL_OK);
  int a = unary(g, TSL_OP_RELU, gt_add_conv1x1(g, x, C, C, 1), NULL);
  int b = gt_add_conv1x1(g, se_scaled(g, a, "HardSigmoid", 10), C, C, 20);
  int y;
  if (strided) {
    int64_t s[2] = {2, 2};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, g->values[b].producer, "strides", 2, s), TSL_OK);
    y = b;
  } else {
    int ins[2] = {gt_add_conv1x1(g, se_scaled(g, unary(g, TSL_OP_RELU, b, NULL), "Sigmoid", 30), C, C, 40), b};
    y = gt_add_node(g, TSL_OP_ADD, 2, ins, NULL);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  int64_t count = n * C * 6 * 5, out_n = 1;
  for (int d = 0; d < 4; d++) out_n *= g->values[y].shape[d];
  float *in = malloc((size_t)count * 4), *got = malloc((size_t)out_n * 4), *want[1] = {NULL};
  CU_ASSERT_FATAL(in && got);
  ref_fill_uniform(in, count, 5, -2.0f, 2.0f);
  const float *ins[1] = {in};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  int rc = cross_aot_run_under_qemu(g, name, in, count, got, out_n);
  CU_ASSERT_EQUAL(rc, 0);
  if (rc == 0) {
    double err = gt_rel_err(got, want[0], out_n);
    printf("\n  %s armv8 AOT under qemu vs reference: relative error %.3g", name, err);
    CU_ASSERT(err <= 1e-5);
  }
  free(in);
  free(got);
  free(want[0]);
  tsl_graph_free(g);
}

static void test_aot_armv8_se_blocks_under_qemu_match_reference(void) {
  if (!cross_device_app_ready()) return;
  run_case(2, false, "se_two_images");
  run_case(1, true, "se_strided");
}

void tsl_tests_cross_se(void);
void tsl_tests_cross_se(void) {
  CU_pSuite s = CU_add_suite("cross_se", NULL, NULL);
  CU_add_test(s, "aot_armv8_se_blocks_under_qemu_match_reference", test_aot_armv8_se_blocks_under_qemu_match_reference);
}
