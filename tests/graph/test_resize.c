/* Resize through the graph compiler (ops/nn/resize.c), against the reference executor's
 * own float64 implementation of ONNX's formulas (tests/ref/ref_resize.c): every
 * coordinate transform with nearest (every rounding) and linear, up- and downsampling by
 * sizes and by scales (integer, fractional, one that rounds the output extent), N-linear
 * over three axes, and the NCHW[x]c layouts the layout pass gives it (blocked in and
 * out, blocked in and plain out for a graph output, plain in and blocked out), with a
 * channel tail at the host's lanes (both x86 passes cover 8 and 16). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "target/target.h"

static int host_lanes(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  return tsl_target_f32_lanes(&t);
}

/* A Resize node of x to `sizes`, with `scales` when not NULL. */
static int resize(tsl_graph *g, int x, int r, const int64_t *sizes, const double *scales, const char *mode,
                  const char *coord, const char *nearest) {
  int node, y = gt_add_node(g, TSL_OP_RESIZE, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "sizes", r, sizes), TSL_OK);
  if (scales) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_floats(g, node, "scales", r, scales), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "mode", mode), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "coordinate_transformation_mode", coord), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "nearest_mode", nearest), TSL_OK);
  return y;
}

static int conv1x1(tsl_graph *g, int x, int64_t cin, int64_t cout, uint64_t seed) {
  int64_t ws[4] = {cout, cin, 1, 1};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.5, 0.5), gt_add_const(g, 1, &cout, seed + 1, -0.2, 0.2)};
  return gt_add_node(g, TSL_OP_CONV, 3, ins, NULL);
}

static const char *const coords[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",
                                     "asymmetric",           "tf_half_pixel_for_nn", "half_pixel_symmetric"};
static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"};

/* One resize of a [1, 3, 5, 7] input alone; returns the plan's layout transforms. */
static int check_plain(const int64_t *sizes, const double *scales, const char *mode, const char *coord,
                       const char *nearest, const float *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[4] = {1, 3, 5, 7};
  int v;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &v), TSL_OK);
  v = resize(g, v, 4, sizes, scales, mode, coord, nearest);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, v), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  char what[160];
  snprintf(what, sizeof what, "resize %s %s %s to %lldx%lld%s", mode, coord, nearest, (long long)sizes[2],
           (long long)sizes[3], scales ? " (scales)" : "");
  int transforms = gt_check_vs_reference(g, what, &x, 1e-6);
  tsl_graph_free(g);
  return transforms;
}

/* Upsampling by sizes (5x7 -> 9x16: not integer ratios), downsampling by sizes (-> 3x4),
 * by integer scales (2, 3), by fractional scales (0.6, 1.7: the output extents floor(3)
 * and floor(11.9) round, so length_resized differs from them), x every transform and
 * rounding; and by integer factors of 4 and 8 on the last axis (by scales and by sizes),
 * where the kernel reads whole rows of outputs from the same inputs (the "_rows" form). */
static void test_resize_every_transform_and_rounding_plain(void) {
  float *x = gt_random(3 * 5 * 7, 3, -2.0, 2.0);
  const int64_t up[4] = {1, 3, 9, 16}, down[4] = {1, 3, 3, 4}, by_int[4] = {1, 3, 10, 21}, by_frac[4] = {1, 3, 3, 11};
  const int64_t by_4[4] = {1, 3, 15, 28}, to_8x[4] = {1, 3, 5, 56};
  const double s_int[4] = {1, 1, 2, 3}, s_frac[4] = {1, 1, 0.6f, 1.7f}, s_4[4] = {1, 1, 3, 4};
  for (size_t c = 0; c < sizeof coords / sizeof coords[0]; c++) {
    CU_ASSERT_EQUAL(check_plain(up, NULL, "linear", coords[c], "floor", x), 0);
    CU_ASSERT_EQUAL(check_plain(down, NULL, "linear", coords[c], "floor", x), 0);
    CU_ASSERT_EQUAL(check_plain(by_frac, s_frac, "linear", coords[c], "floor", x), 0);
    CU_ASSERT_EQUAL(check_plain(by_4, s_4, "linear", coords[c], "floor", x), 0);
    CU_ASSERT_EQUAL(check_plain(to_8x, NULL, "linear", coords[c], "floor", x), 0);
    for (size_t m = 0; m < sizeof nearests / sizeof nearests[0]; m++) {
      CU_ASSERT_EQUAL(check_plain(by_4, s_4, "nearest", coords[c], nearests[m], x), 0);
      CU_ASSERT_EQUAL(check_plain(to_8x, NULL, "nearest", coords[c], nearests[m], x), 0);
      CU_ASSERT_EQUAL(check_plain(up, NULL, "nearest", coords[c], nearests[m], x), 0);
      CU_ASSERT_EQUAL(check_plain(down, NULL, "nearest", coords[c], nearests[m], x), 0);
      CU_ASSERT_EQUAL(check_plain(by_int, s_int, "nearest", coords[c], nearests[m], x), 0);
      CU_ASSERT_EQUAL(check_plain(by_frac, s_frac, "nearest", coords[c], nearests[m], x), 0);
    }
  }
  free(x);
}

/* Trilinear: every axis of a [4, 5, 6] tensor resized (8 corners per output). */
static void test_resize_n_linear_over_three_axes(void) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[3] = {4, 5, 6}, sizes[3] = {7, 3, 13};
  int v;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 3, s, &v), TSL_OK);
  v = resize(g, v, 3, sizes, NULL, "linear", "align_corners", "round_prefer_floor");
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, v), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  float *x = gt_random(4 * 5 * 6, 4, -1.0, 1.0);
  CU_ASSERT_EQUAL(gt_check_vs_reference(g, "trilinear", (const float *const *)&x, 1e-6), 0);
  free(x);
  tsl_graph_free(g);
}

/* conv -> resize -> conv with C = lanes + 3 (a partial last block): the resize runs
 * blocked in and out (transforms only at the graph's edges: the first conv reads the
 * plain input, the output goes back to plain); conv -> resize as the graph output:
 * blocked in, plain out, no transform at all; input -> resize -> conv: plain in, blocked
 * out, no transform between. LR-ASPP's two upsamplings are the first two
 * (the second by 8, reading rows). */
static void test_resize_in_the_blocked_layouts(void) {
  int lanes = host_lanes();
  int64_t C = lanes + 3, s[4] = {1, C, 6, 5}, up[4] = {1, C, 12, 10}, down[4] = {1, C, 4, 3}, up8[4] = {1, C, 48, 40};
  const int64_t *shapes[3] = {up, down, up8};
  float *x = gt_random(C * 6 * 5, 5, -1.0, 1.0);
  for (int shape = 0; shape < 3; shape++)
    for (int mode = 0; mode < 2; mode++) {
      const char *m = mode ? "linear" : "nearest";
      const int64_t *sizes = shapes[shape];
      char what[96];
      for (int form = 0; form < 3; form++) {
        tsl_graph *g;
        CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
        int v;
        CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &v), TSL_OK);
        if (form != 2) v = conv1x1(g, v, C, C, 10);
        v = resize(g, v, 4, sizes, NULL, m, "half_pixel", "round_prefer_ceil");
        if (form != 1) v = conv1x1(g, v, C, 7, 20);
        CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, v), TSL_OK);
        CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
        snprintf(what, sizeof what, "%s resize %s %s at %d lanes", m, shape == 1 ? "down" : shape ? "up 8x" : "up",
                 form == 0 ? "blocked" : form == 1 ? "blocked to plain" : "plain to blocked", lanes);
        CU_ASSERT_EQUAL(gt_check_vs_reference(g, what, (const float *const *)&x, 2e-6), form == 1 ? 0 : 1);
        tsl_graph_free(g);
      }
    }
  free(x);
}

/* Shape inference refuses what the generator cannot compute, naming the node and the
 * variant. */
/* LR-ASPP's head on small shapes: Add(conv1x1(low), conv1x1(Resize(high))) then a final
 * Resize. The sink_resize pass (models/passes/sink_resize.h) moves the first Resize past
 * its conv (and only it: a widening conv or a downsampling Resize keeps its order); the
 * outputs equal the reference executor's on the graph as built, plain and blocked. */
/* up: the low branch has (up/2)x the high one's extents (4: 10x14, 1: 2x3). */
static int sink_case(tsl_graph **out, const char *mode, const char *coord, int64_t k_high, int64_t up) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t hs[4] = {1, 16, 5, 7}, ls[4] = {1, 8, 5 * up / 2, 7 * up / 2};
  int high, low;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "high", TSL_DTYPE_F32, 4, hs, &high), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "low", TSL_DTYPE_F32, 4, ls, &low), TSL_OK);
  const int64_t mid[4] = {1, 16, ls[2], ls[3]}, fin[4] = {1, k_high, 4 * ls[2], 4 * ls[3]};
  int r = resize(g, high, 4, mid, NULL, mode, coord, "floor");
  int ins[2] = {conv1x1(g, low, 8, k_high, 11), conv1x1(g, r, 16, k_high, 13)};
  int sum = gt_add_node(g, TSL_OP_ADD, 2, ins, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, resize(g, sum, 4, fin, NULL, "linear", "half_pixel", "floor")), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  tsl_graph *o = NULL;
  tsl_compile_stats st = {0};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &o), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(o, host_lanes(), &st), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_RESIZE), 2);
  CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_ADD), 0); /* the conv's residual */
  tsl_graph_free(o);
  *out = g;
  return st.resizes_sunk;
}

static void test_resize_moves_past_the_1x1_conv_that_follows(void) {
  static const char *const modes[4][2] = {
      {"linear", "half_pixel"}, {"linear", "align_corners"}, {"nearest", "asymmetric"}, {"linear", "pytorch_half_pixel"}};
  float *hx = gt_random(16 * 5 * 7, 3, -1.0, 1.0), *lx = gt_random(8 * 10 * 14, 4, -1.0, 1.0);
  const float *ins[2] = {hx, lx};
  for (int m = 0; m < 4; m++) {
    tsl_graph *g;
    CU_ASSERT_EQUAL(sink_case(&g, modes[m][0], modes[m][1], 5, 4), 1);
    char what[96];
    snprintf(what, sizeof what, "LR-ASPP head, %s %s", modes[m][0], modes[m][1]);
    CU_ASSERT(gt_check_vs_reference(g, what, ins, 1e-5) >= 0);
    tsl_graph_free(g);
  }
  tsl_graph *g;
  CU_ASSERT_EQUAL(sink_case(&g, "linear", "half_pixel", 24, 4), 0); /* 16 -> 24 channels: kept */
  CU_ASSERT(gt_check_vs_reference(g, "LR-ASPP head, widening conv", ins, 1e-5) >= 0);
  tsl_graph_free(g);
  float *lx1 = gt_random(8 * 2 * 3, 4, -1.0, 1.0);
  const float *ins1[2] = {hx, lx1};
  CU_ASSERT_EQUAL(sink_case(&g, "linear", "half_pixel", 5, 1), 0); /* 5x7 -> 2x3: kept */
  CU_ASSERT(gt_check_vs_reference(g, "LR-ASPP head, downsampling", ins1, 1e-5) >= 0);
  tsl_graph_free(g);
  free(hx);
  free(lx);
  free(lx1);
}

static void test_resize_unsupported_variants_name_node_and_variant(void) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[4] = {1, 2, 3, 3}, sizes[4] = {1, 2, 6, 6};
  int v;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &v), TSL_OK);
  int y, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, "y", &y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_RESIZE, "up", 1, &v, 1, &y, &node), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_INVALID); /* no sizes */
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'up'"));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "sizes", 4, sizes), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "mode", "cubic"), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "cubic"));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "mode", "linear"), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "coordinate_transformation_mode", "tf_crop_and_resize"),
                        TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "tf_crop_and_resize"));
  tsl_graph_free(g);
}

void tsl_tests_graph_resize(void) {
  CU_pSuite s = CU_add_suite("graph_resize", NULL, NULL);
  CU_add_test(s, "resize_every_transform_and_rounding_plain", test_resize_every_transform_and_rounding_plain);
  CU_add_test(s, "resize_n_linear_over_three_axes", test_resize_n_linear_over_three_axes);
  CU_add_test(s, "resize_in_the_blocked_layouts", test_resize_in_the_blocked_layouts);
  CU_add_test(s, "resize_moves_past_the_1x1_conv_that_follows", test_resize_moves_past_the_1x1_conv_that_follows);
  CU_add_test(s, "resize_unsupported_variants_name_node_and_variant",
              test_resize_unsupported_variants_name_node_and_variant);
}
