/* The stem conv reads the plain NCHW graph input directly (models/passes/layout.h,
 * ops/conv2d/conv2d_select.h: tsl_conv2d_reads_plain_data): graphs whose input goes
 * through a first conv with few channels (C = 1, 3, 4, 17; strides 1 and 2; paddings;
 * N = 2; pooling after it) give the reference executor's outputs with no layout
 * transform into NCHW[x]c in the plan, at the host's lanes (8 or 16; the suite also runs
 * with TSL_HOST_TARGET=x86-64-avx2). And the family workload of such a layer states its
 * plain data, and reads back as the same layer. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/passes/layout.h"
#include "ops/conv2d/algorithms_conv.h"

/* A Conv (c -> m channels, k x k, stride, symmetric pad, bias) on x with a fused-able
 * Relu after it; the Relu's output value. */
static int stem_conv(tsl_graph *g, int x, int64_t c, int64_t m, int64_t k, int64_t stride, int64_t pad,
                     uint64_t seed) {
  int64_t ws[4] = {m, c, k, k};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.5, 0.5), gt_add_const(g, 1, &m, seed + 1, -0.2, 0.2)}, node;
  int y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  int64_t strides[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, strides), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
  return gt_add_node(g, TSL_OP_RELU, 1, &y, NULL);
}

/* Input [n, c, h, w] -> stem conv (c -> 24, k x k, stride, pad) + Relu -> MaxPool 3x3 s2
 * p1 -> 3x3 conv 24 -> 20 (-> GlobalAveragePool when `pool`), back to plain NCHW at the
 * end. Returns the layout transform steps of the plan (-1 on a failure, asserted). */
static int check_stem(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                      bool pool) {
  tsl_graph *g;
  int x, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("stem", &g), TSL_OK);
  int64_t s[4] = {n, c, h, w};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int y = stem_conv(g, x, c, 24, k, stride, pad, 3 + (uint64_t)c);
  int p = gt_add_node(g, TSL_OP_MAX_POOL, 1, &y, &node);
  int64_t ks[2] = {3, 3}, ps[4] = {1, 1, 1, 1}, ss[2] = {2, 2};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "kernel_shape", 2, ks), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, ps), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, ss), TSL_OK);
  int z = stem_conv(g, p, 24, 20, 3, 1, 1, 40);
  if (pool) z = gt_add_node(g, TSL_OP_GLOBAL_AVERAGE_POOL, 1, &z, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, z), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  float *in = gt_random(n * c * h * w, 7 + (uint64_t)c, -1.0, 1.0);
  char what[96];
  snprintf(what, sizeof what, "stem N%lld C%lld %lldx%lld k%lld s%lld p%lld", (long long)n, (long long)c,
           (long long)h, (long long)w, (long long)k, (long long)stride, (long long)pad);
  const float *ins[1] = {in};
  int transforms = gt_check_vs_reference(g, what, ins, 1e-4);
  CU_ASSERT(transforms >= 0);
  free(in);
  tsl_graph_free(g);
  return transforms;
}

static void test_stem_conv_reads_the_plain_input(void) {
  static const int64_t cs[] = {1, 3, 4, 17};
  for (int i = 0; i < 4; i++) {
    /* 3x3 s2 p1 (MobileNet's, EfficientNet's), 3x3 s1 p1, 7x7 s2 p3 (ResNet's), 1x1 s1
     * p0: the one transform is the output's, back to plain */
    CU_ASSERT_EQUAL(check_stem(2, cs[i], 23, 18, 3, 2, 1, true), 1);
    CU_ASSERT_EQUAL(check_stem(1, cs[i], 16, 21, 3, 1, 1, false), 1);
    /* with 4C >= 8 the 7x7 s2 stem becomes a 4x4 conv over its input's phases
     * (passes/phase_conv.h): one transform more, its phases into the blocked layout */
    CU_ASSERT_EQUAL(check_stem(2, cs[i], 29, 30, 7, 2, 3, true), 4 * cs[i] >= 8 ? 2 : 1);
    CU_ASSERT_EQUAL(check_stem(1, cs[i], 12, 9, 1, 1, 0, false), 1);
  }
}

/* 12 channels fill three quarters of an 8- or 16-lane block: the direct conv over the
 * blocked data stays the stem's algorithm, so the input is transformed first. */
static void test_stem_conv_with_many_channels_reads_blocked_data(void) {
  CU_ASSERT_EQUAL(check_stem(1, 12, 15, 15, 3, 2, 1, true), 2);
}

/* The plain-data layer's family workload: a grouped key with data f32[N, C, H, W, 1],
 * distinct from the blocked layer's, that reads back as the same layer. */
static void test_plain_data_family_workload_round_trips(void) {
  tsl_conv2d_layer d = {.N = 2, .C = 3, .H = 30, .W = 31, .K = 32, .R = 3, .S = 3, .stride_h = 2, .stride_w = 2,
                        .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .dilation_h = 1,
                        .dilation_w = 1, .groups = 1, .act = 1, .clip_max = 6.0, .block = 16, .data_block = 1};
  tsl_workload plain, blocked;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &plain), TSL_OK);
  CU_ASSERT_EQUAL(plain.shapes[0][1], 3);
  CU_ASSERT_EQUAL(plain.shapes[0][4], 1);
  tsl_conv2d_layer back;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_layer_of_workload(&plain, &back), TSL_OK);
  CU_ASSERT_EQUAL(back.C, 3);
  CU_ASSERT_EQUAL(back.K, 32);
  CU_ASSERT_EQUAL(back.block, 16);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_data_block(&back), 1);
  CU_ASSERT_EQUAL(tsl_conv2d_select(&back, NULL), TSL_CONV2D_GROUPED);
  CU_ASSERT(!tsl_conv2d_algo_applies(&back, TSL_CONV2D_DIRECT, NULL));
  d.data_block = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &blocked), TSL_OK);
  CU_ASSERT_EQUAL(blocked.shapes[0][4], 16);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_layer_of_workload(&blocked, &back), TSL_OK);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_data_block(&back), 16);
  d.data_block = 4; /* neither plain nor the block */
  CU_ASSERT_EQUAL(tsl_conv2d_family_workload(&d, &plain), TSL_ERR_INVALID);
}

void tsl_tests_graph_stem_conv(void) {
  CU_pSuite s = CU_add_suite("graph_stem_conv", NULL, NULL);
  CU_add_test(s, "stem_conv_reads_the_plain_input", test_stem_conv_reads_the_plain_input);
  CU_add_test(s, "stem_conv_with_many_channels_reads_blocked_data", test_stem_conv_with_many_channels_reads_blocked_data);
  CU_add_test(s, "plain_data_family_workload_round_trips", test_plain_data_family_workload_round_trips);
}
