/* Operators of newer CNNs through the graph compiler, against the reference executor:
 * Pad's reflect, edge and wrap modes (ops/nn/pad_modes.c) with growing, cropping and
 * wider-than-the-input pads; PRelu (ops/nn/prelu.c) with per-channel, scalar and
 * broadcast slopes, plain and blocked; a DenseNet-style Concat of 33 inputs, blocked and
 * plain; BatchNormalization after no conv, plain and blocked; dilated and depthwise 5x5
 * convolutions as MobileNetV3 / LR-ASPP have them. Blocked cases have C = lanes + 3 at the
 * host's lanes (both x86 passes cover 8 and 16). */
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

static tsl_graph *graph_with_input(int ndim, const int64_t *shape, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, ndim, shape, x), TSL_OK);
  return g;
}

/* Marks y the output, infers shapes and checks against the reference. */
static int finish(tsl_graph *g, int y, const char *what, const float *x, double tol) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  tsl_status st = tsl_graph_infer_shapes(g);
  if (st != TSL_OK) printf("\n  %s: %s", what, tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  int transforms = gt_check_vs_reference(g, what, &x, tol);
  tsl_graph_free(g);
  return transforms;
}

/* A conv of kxk, `group` groups, with dilation and stride, padded to keep the size at
 * stride 1 (ONNX attributes). */
static int conv(tsl_graph *g, int x, int64_t cin, int64_t cout, int64_t k, int64_t group, int64_t dil, int64_t stride,
                uint64_t seed) {
  int64_t ws[4] = {cout, cin / group, k, k}, p = dil * (k - 1) / 2;
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.5, 0.5), gt_add_const(g, 1, &cout, seed + 1, -0.2, 0.2)};
  int node, y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, (int64_t[]){p, p, p, p}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "dilations", 2, (int64_t[]){dil, dil}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, (int64_t[]){stride, stride}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", group), TSL_OK);
  return y;
}

static int conv1x1(tsl_graph *g, int x, int64_t cin, int64_t cout, uint64_t seed) {
  return conv(g, x, cin, cout, 1, 1, 1, 1, seed);
}

/* ---- Pad ---- */

static void test_pad_reflect_edge_wrap(void) {
  static const char *const modes[] = {"reflect", "edge", "wrap"};
  /* [2, 3, 5, 4]: grow H on both sides past the input (7 > 5: periodic reflection), crop
   * W's begin and grow its end, grow N's end */
  const int64_t s[4] = {2, 3, 5, 4};
  const int64_t pads[][8] = {{0, 0, 2, 1, 0, 0, 3, 2}, {0, 0, 7, -1, 1, 0, 6, 3}, {0, 0, -2, 0, 0, 0, 1, 5}};
  float *x = gt_random(2 * 3 * 5 * 4, 7, -1.0, 1.0);
  for (int m = 0; m < 3; m++)
    for (int p = 0; p < 3; p++) {
      int v, node;
      tsl_graph *g = graph_with_input(4, s, &v);
      int y = gt_add_node(g, TSL_OP_PAD, 1, &v, &node);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 8, pads[p]), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "mode", modes[m]), TSL_OK);
      char what[64];
      snprintf(what, sizeof what, "pad %s, pads set %d", modes[m], p);
      CU_ASSERT_EQUAL(finish(g, y, what, x, 0.0), 0);
    }
  free(x);
}

/* Padding from nothing (an axis cropped away, then padded) is refused by shape inference. */
static void test_pad_mode_from_an_empty_crop_is_refused(void) {
  int v, node;
  const int64_t s[2] = {3, 4};
  tsl_graph *g = graph_with_input(2, s, &v);
  gt_add_node(g, TSL_OP_PAD, 1, &v, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, (int64_t[]){0, -4, 0, 2}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "mode", "edge"), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "from nothing"));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "mode", "constant"), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, node), TSL_OK);
  tsl_graph_free(g);
}

/* ---- PRelu ---- */

static void test_prelu_slopes_plain(void) {
  const int64_t s[4] = {2, 3, 4, 5};
  const int64_t slopes[][4] = {{3, 1, 1}, {5}, {1}, {2, 3, 1, 1}, {4, 1}};
  const int ranks[] = {3, 1, 1, 4, 2};
  float *x = gt_random(2 * 3 * 4 * 5, 8, -2.0, 2.0);
  for (int k = 0; k < 6; k++) {
    int v;
    tsl_graph *g = graph_with_input(4, s, &v);
    /* k == 5: a scalar (rank-0) slope */
    int ins[2] = {v, gt_add_const(g, k < 5 ? ranks[k] : 0, k < 5 ? slopes[k] : NULL, 30 + (uint64_t)k, -1.0, 1.0)};
    int y = gt_add_node(g, TSL_OP_PRELU, 2, ins, NULL);
    char what[64];
    snprintf(what, sizeof what, "prelu slope case %d", k);
    CU_ASSERT_EQUAL(finish(g, y, what, x, 0.0), 0);
  }
  free(x);
}

/* conv -> PRelu -> conv: a per-channel slope runs blocked (no transform between), one
 * varying along W does not (the layout pass gives it plain inputs, which the next conv
 * reads as they are: C = lanes + 3 leaves most of its last block's lanes zero; so does the
 * first conv the graph input). */
static void test_prelu_blocked_per_channel(void) {
  int lanes = host_lanes();
  int64_t C = lanes + 3, s[4] = {1, C, 5, 6};
  float *x = gt_random(C * 5 * 6, 9, -1.0, 1.0);
  for (int per_w = 0; per_w < 2; per_w++) {
    int v;
    tsl_graph *g = graph_with_input(4, s, &v);
    v = conv1x1(g, v, C, C, 40);
    int64_t ss[3] = {C, 1, 1}, sw[1] = {6};
    int ins[2] = {v, per_w ? gt_add_const(g, 1, sw, 41, -1.0, 1.0) : gt_add_const(g, 3, ss, 41, -1.0, 1.0)};
    v = gt_add_node(g, TSL_OP_PRELU, 2, ins, NULL);
    v = conv1x1(g, v, C, 5, 42);
    CU_ASSERT_EQUAL(finish(g, v, per_w ? "prelu slope per W" : "prelu slope per channel, blocked", x, 2e-6),
                    per_w ? 2 : 1);
  }
  free(x);
}

/* ---- Concat of many inputs, BatchNormalization after no conv ---- */

/* A batch norm of x's C channels: scales in [0.5, 1.5), variances in [0.5, 2). */
static int batch_norm(tsl_graph *g, int x, int64_t C, uint64_t seed) {
  int bn[5] = {x, gt_add_const(g, 1, &C, seed, 0.5, 1.5), gt_add_const(g, 1, &C, seed + 1, -0.2, 0.2),
               gt_add_const(g, 1, &C, seed + 2, -0.3, 0.3), gt_add_const(g, 1, &C, seed + 3, 0.5, 2.0)};
  return gt_add_node(g, TSL_OP_BATCH_NORM, 5, bn, NULL);
}

/* DenseNet's dense block: the block input and 32 growth convs concatenated (33 inputs),
 * batch-normalized (no conv before it to fold into), then a conv; blocked with C0 and the
 * growth not multiples of the block (the unaligned concat). */
static void test_concat_of_33_inputs_blocked_then_batch_norm(void) {
  int lanes = host_lanes();
  int64_t C0 = lanes + 3, G = 5, s[4] = {1, C0, 4, 5}, total = C0 + 32 * G;
  float *x = gt_random(C0 * 4 * 5, 11, -1.0, 1.0);
  int v;
  tsl_graph *g = graph_with_input(4, s, &v);
  int parts[33];
  parts[0] = conv1x1(g, v, C0, C0, 50);
  for (int i = 1; i < 33; i++) parts[i] = conv1x1(g, parts[0], C0, G, 50 + 2 * (uint64_t)i);
  int node, cat = gt_add_node(g, TSL_OP_CONCAT, 33, parts, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", 1), TSL_OK);
  v = batch_norm(g, cat, total, 120);
  v = gt_add_node(g, TSL_OP_RELU, 1, &v, NULL);
  v = conv1x1(g, v, total, 7, 130);
  /* back to plain at the end only: the first conv reads the plain input */
  CU_ASSERT_EQUAL(finish(g, v, "concat of 33, batch norm, blocked", x, 2e-6), 1);
  free(x);
}

/* The same concat and batch norm on plain rank-3 values (no layout to choose). */
static void test_concat_of_33_inputs_plain_then_batch_norm(void) {
  int64_t s[3] = {2, 3, 7}, total = 33 * 3;
  float *x = gt_random(2 * 3 * 7, 12, -1.0, 1.0);
  int v;
  tsl_graph *g = graph_with_input(3, s, &v);
  int parts[33];
  for (int i = 0; i < 33; i++) {
    int ins[2] = {v, gt_add_const(g, 3, (int64_t[]){1, 3, 1}, 200 + (uint64_t)i, -1.0, 1.0)};
    parts[i] = gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
  }
  int node, cat = gt_add_node(g, TSL_OP_CONCAT, 33, parts, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", 1), TSL_OK);
  v = batch_norm(g, cat, total, 140);
  CU_ASSERT_EQUAL(finish(g, v, "concat of 33, batch norm, plain", x, 2e-6), 0);
  free(x);
}

/* A batch norm reading the graph input: plain, nothing to fold it into. */
static void test_batch_norm_of_the_input(void) {
  int64_t C = 5, s[4] = {2, C, 3, 4};
  float *x = gt_random(2 * C * 3 * 4, 13, -1.0, 1.0);
  int v;
  tsl_graph *g = graph_with_input(4, s, &v);
  v = batch_norm(g, v, C, 150);
  CU_ASSERT_EQUAL(finish(g, v, "batch norm of the input", x, 2e-6), 0);
  free(x);
}

/* ---- dilated and depthwise 5x5 convolutions ---- */

/* LR-ASPP's backbone (MobileNetV3 with dilated last stages): depthwise 5x5 and 3x3 with
 * dilation 2, a dense 3x3 with dilation 2, a depthwise 5x5 with stride 2. */
static void test_dilated_and_depthwise_5x5_convs(void) {
  int lanes = host_lanes();
  int64_t C = lanes + 3, s[4] = {1, C, 13, 11};
  float *x = gt_random(C * 13 * 11, 14, -1.0, 1.0);
  const int64_t cases[][4] = {{5, 1, 2, 1}, {3, 1, 2, 1}, {3, 0, 2, 1}, {5, 1, 1, 2}, {5, 1, 3, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int v;
    tsl_graph *g = graph_with_input(4, s, &v);
    int64_t k = cases[i][0], group = cases[i][1] ? C : 1;
    v = conv(g, v, C, C, k, group, cases[i][2], cases[i][3], 60 + (uint64_t)i);
    char what[96];
    snprintf(what, sizeof what, "conv %lldx%lld %s dilation %lld stride %lld", (long long)k, (long long)k,
             group > 1 ? "depthwise" : "dense", (long long)cases[i][2], (long long)cases[i][3]);
    /* the dense conv reads the plain input (C = lanes + 3 leaves most of a block zero) */
    CU_ASSERT_EQUAL(finish(g, v, what, x, 2e-5), group > 1 ? 2 : 1);
  }
  free(x);
}

void tsl_tests_graph_cnn_ops(void) {
  CU_pSuite s = CU_add_suite("graph_cnn_ops", NULL, NULL);
  CU_add_test(s, "pad_reflect_edge_wrap", test_pad_reflect_edge_wrap);
  CU_add_test(s, "pad_mode_from_an_empty_crop_is_refused", test_pad_mode_from_an_empty_crop_is_refused);
  CU_add_test(s, "prelu_slopes_plain", test_prelu_slopes_plain);
  CU_add_test(s, "prelu_blocked_per_channel", test_prelu_blocked_per_channel);
  CU_add_test(s, "concat_of_33_inputs_blocked_then_batch_norm", test_concat_of_33_inputs_blocked_then_batch_norm);
  CU_add_test(s, "concat_of_33_inputs_plain_then_batch_norm", test_concat_of_33_inputs_plain_then_batch_norm);
  CU_add_test(s, "batch_norm_of_the_input", test_batch_norm_of_the_input);
  CU_add_test(s, "dilated_and_depthwise_5x5_convs", test_dilated_and_depthwise_5x5_convs);
}
