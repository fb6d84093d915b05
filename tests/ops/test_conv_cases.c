/* The convolution cases of shared/cases (C01, C02, C04, C05, C06, C13) and their classes,
 * through the NCHW[x]c algorithms, against the naive reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv_check.h"
#include "ops/ops_util.h"

/* C01: output width 13 with the x loop vectorized by 8 and by 16 (plain NCHW, x = 1:
 * the tile's columns are the vector), every column right and no access past any
 * buffer's end (the buffers end at guard pages; K*OH*OW is a multiple of 16 floats so the
 * output's end is exactly at the guard page). The class: other widths below, at and
 * past the vector (1, 7, 8, 9, 17), and the NCHW[x]c tile tails (13 columns in tiles of
 * 6 and of 8). */
static void test_C01_vector_tail_width_13(void) {
  conv_case c = {1, 16, 15, 15, 16, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, false}; /* output 16 x 13 x 13 */
  static const char *const knobs[] = {"ow_block=8", "ow_block=16", "ow_block=8,oh_block=2", "ow_block=13"};
  for (int i = 0; i < 4; i++) {
    conv_check_opts o = conv_opts(0, 1000 + (uint64_t)i);
    o.block = 1;
    o.knobs = knobs[i];
    o.skip_default = i > 0;
    CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
  }
  static const int64_t widths[] = {1, 7, 8, 9, 17};
  for (int i = 0; i < 5; i++) {
    conv_case w = {1, 4, 5, widths[i] + 2, 16, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, false};
    conv_check_opts o = conv_opts(0, 1010 + (uint64_t)i);
    o.block = 1;
    o.knobs = "ow_block=8";
    CU_ASSERT(conv_check(&w, TSL_CONV2D_DIRECT, &o));
  }
  static const char *const tiles[] = {"ow_block=6", "ow_block=8,oc_blocks=1"};
  for (int i = 0; i < 2; i++) {
    conv_check_opts o = conv_opts(0, 1020 + (uint64_t)i);
    o.knobs = tiles[i];
    o.skip_default = true;
    CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
  }
}

/* C02's shape without Winograd's preconditions (those are the Winograd suite's):
 * N1 C80 73x73 -> K192, 3x3, stride 1, pad 0 gives 1x192x71x71 through every algorithm
 * that applies (the default choice included), checked at a sample of points. */
static void test_C02_conv_pad0_73x73_every_algorithm(void) {
  conv_case c = {1, 80, 73, 73, 192, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, false};
  tsl_conv2d_layer d = conv_case_layer(&c, ops_lanes());
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_h(&d), 71);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_w(&d), 71);
  conv_check_opts o = conv_opts(0, 1100);
  CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
  CU_ASSERT(conv_check(&c, TSL_CONV2D_IM2COL, &o));
  tsl_conv2d_algo def = tsl_conv2d_select(&d, ops_target());
  if (def != TSL_CONV2D_DIRECT && def != TSL_CONV2D_IM2COL) CU_ASSERT(conv_check(&c, def, &o));
}

/* C04: N1 C4 1x1 -> K16, 1x1 kernel, groups 2, all weights 1, input 1 at channel 3 and 0
 * elsewhere: outputs 0..7 are 0, 8..15 are 1 (two input channels per group, fewer than
 * the block). The class: other channels-per-group below the block (1, 3, 5) with
 * several groups, kernels and strides, and multipliers > 1. */
static void test_C04_grouped_few_channels_per_group(void) {
  conv_case c = {1, 4, 1, 1, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, false};
  float data[4] = {0, 0, 0, 1}, w[16 * 2], bias[16] = {0}, out[16];
  for (int i = 0; i < 32; i++) w[i] = 1.0f;
  conv_check_opts o = conv_opts(1, 1200);
  o.data = data;
  o.weight = w;
  o.bias = bias;
  o.out_nchw = out;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_GROUPED, &o));
  for (int k = 0; k < 16; k++) CU_ASSERT_EQUAL(out[k], k < 8 ? 0.0f : 1.0f);
  static const conv_case cls[] = {
      {1, 3, 7, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 0, 0, false},   /* 1 per group, multiplier 2 */
      {2, 9, 6, 8, 6, 3, 1, 2, 1, 1, 0, 0, 0, 1, 1, 3, 0, 0, 0, false},   /* 3 per group */
      {1, 10, 5, 5, 4, 2, 2, 1, 1, 0, 1, 1, 0, 1, 1, 2, 2, 0, 6, false},  /* 5 per group, K < C */
      {1, 16, 9, 9, 24, 3, 3, 2, 2, 1, 1, 1, 1, 2, 2, 8, 1, 0, 0, false}, /* 2 per group, dilated */
  };
  static const tsl_conv2d_algo grouped[] = {TSL_CONV2D_GROUPED};
  CU_ASSERT_EQUAL(conv_check_all(cls, sizeof cls / sizeof cls[0], grouped, 1, 1, 1210), 0);
}

/* C05: depthwise C4 5x5, 3x3, dilation 2, stride 1, pad 2, weights 1/9, bias 1: the
 * dilated result. The class: dilations 1..3, strides 1 and 2, asymmetric padding, the
 * depthwise shapes of MobileNetV2 (stride 2 too) in miniature, channel counts off the
 * block, and the multiplier > 1 case through the grouped algorithm. */
static void test_C05_depthwise_dilation(void) {
  conv_case c = {1, 4, 5, 5, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4, 0, 0, 0, false};
  float w[36], bias[4];
  for (int i = 0; i < 36; i++) w[i] = 1.0f / 9.0f;
  for (int i = 0; i < 4; i++) bias[i] = 1.0f;
  conv_check_opts o = conv_opts(2, 1300);
  o.weight = w;
  o.bias = bias;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_DEPTHWISE, &o));
  CU_ASSERT(conv_check(&c, TSL_CONV2D_GROUPED, &o));
  static const conv_case cls[] = {
      {1, 13, 12, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 13, 2, 0, 6, false},
      {2, 9, 14, 14, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 9, 1, 0, 0, false},
      {1, 17, 10, 13, 17, 3, 3, 1, 1, 3, 3, 3, 3, 3, 3, 17, 0, 0, 0, false},
      {1, 8, 9, 9, 8, 5, 5, 2, 1, 0, 2, 2, 1, 1, 2, 8, 1, 0, 0, false},
  };
  static const tsl_conv2d_algo depthwise[] = {TSL_CONV2D_DEPTHWISE};
  CU_ASSERT_EQUAL(conv_check_all(cls, sizeof cls / sizeof cls[0], depthwise, 1, 2, 1310), 0);
  conv_case mult = {1, 4, 7, 7, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4, 0, 0, 0, false};
  conv_check_opts om = conv_opts(1, 1320);
  CU_ASSERT(conv_check(&mult, TSL_CONV2D_GROUPED, &om));
}

/* C06: N1 C1 32x64 -> K1, kernel 2x4, stride (2, 1), pad top 0 bottom 0 left 1 right 2:
 * output 16x64 equal to the zero-padded direct conv, boundary columns included. The
 * class: one-sided paddings, padding >= kernel, padding with stride > 1. */
static void test_C06_asymmetric_padding(void) {
  conv_case c = {1, 1, 32, 64, 1, 2, 4, 2, 1, 0, 1, 0, 2, 1, 1, 1, 0, 0, 0, false};
  tsl_conv2d_layer d = conv_case_layer(&c, ops_lanes());
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_h(&d), 16);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_w(&d), 64);
  conv_check_opts o = conv_opts(2, 1400);
  CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
  CU_ASSERT(conv_check(&c, TSL_CONV2D_IM2COL, &o));
  static const conv_case cls[] = {
      {1, 3, 9, 9, 5, 3, 3, 1, 1, 0, 2, 0, 0, 1, 1, 1, 0, 0, 0, false}, /* left only */
      {1, 3, 9, 9, 5, 3, 3, 1, 1, 2, 0, 0, 0, 1, 1, 1, 0, 0, 0, false}, /* top only */
      {1, 3, 9, 9, 5, 3, 3, 2, 2, 0, 0, 3, 3, 1, 1, 1, 1, 0, 0, false}, /* bottom/right >= kernel, stride 2 */
      {2, 2, 7, 8, 4, 2, 2, 2, 3, 3, 0, 1, 4, 1, 1, 1, 0, 0, 0, false}, /* padding > kernel, uneven strides */
  };
  static const tsl_conv2d_algo algos[] = {TSL_CONV2D_DIRECT, TSL_CONV2D_IM2COL, TSL_CONV2D_GROUPED};
  CU_ASSERT_EQUAL(conv_check_all(cls, sizeof cls / sizeof cls[0], algos, 3, 1, 1410), 0);
}

/* C13: the first conv of a net, C = 1, 640x16, 3x3, stride 2, pad 1, in the blocked
 * layout (7 of the 8 input lanes are padding): deterministic (two runs give the same
 * bits), no NaN, equal to the reference. Also with C = 3 and a transposed image. */
static void test_C13_first_conv_one_channel_blocked(void) {
  conv_case c = {1, 1, 640, 16, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  int64_t n = 8 * 320 * 8;
  float *a = malloc(sizeof(float) * (size_t)n), *b = malloc(sizeof(float) * (size_t)n);
  conv_check_opts o = conv_opts(1, 1500);
  o.out_nchw = a;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
  o.out_nchw = b;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
  CU_ASSERT(memcmp(a, b, sizeof(float) * (size_t)n) == 0);
  bool finite = true;
  for (int64_t i = 0; i < n; i++) finite = finite && isfinite(a[i]);
  CU_ASSERT(finite);
  o.out_nchw = NULL;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_IM2COL, &o));
  conv_case t = {1, 3, 16, 640, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  CU_ASSERT(conv_check(&t, TSL_CONV2D_DIRECT, &o));
  CU_ASSERT(conv_check(&t, TSL_CONV2D_IM2COL, &o));
  free(a);
  free(b);
}

void ops_tests_conv_cases(CU_pSuite s) {
  CU_add_test(s, "test_C01_vector_tail_width_13", test_C01_vector_tail_width_13);
  CU_add_test(s, "test_C02_conv_pad0_73x73_every_algorithm", test_C02_conv_pad0_73x73_every_algorithm);
  CU_add_test(s, "test_C04_grouped_few_channels_per_group", test_C04_grouped_few_channels_per_group);
  CU_add_test(s, "test_C05_depthwise_dilation", test_C05_depthwise_dilation);
  CU_add_test(s, "test_C06_asymmetric_padding", test_C06_asymmetric_padding);
  CU_add_test(s, "test_C13_first_conv_one_channel_blocked", test_C13_first_conv_one_channel_blocked);
}
