/* Classes of shared/cases across EVERY convolution algorithm (direct, 1x1 GEMM, im2col,
 * depthwise, grouped, Winograd F(2), F(4)), against the naive reference: the relu6 and
 * residual epilogues (class 15), stride larger than the kernel, 1x1 spatial inputs,
 * padding at least as large as the kernel (windows wholly in the padding), kernels as
 * large as the padded input (class 6, 7), batch > 1 — each with the default config and
 * random configs of the algorithm's template. */
#include <stdio.h>
#include <string.h>

#include "ops/conv2d/depthwise_schedule.h"
#include "ops/conv_check.h"
#include "ops/ops_util.h"

/* Checks c through every algorithm that applies to it (and to its depthwise / grouped
 * variants when `variants`); returns how many applied. */
static int check_every_algorithm(const conv_case *c, bool variants, conv_check_opts o) {
  static const tsl_conv2d_algo algos[] = {TSL_CONV2D_DIRECT,    TSL_CONV2D_GEMM_1X1, TSL_CONV2D_IM2COL,
                                          TSL_CONV2D_GROUPED,   TSL_CONV2D_WINOGRAD_F2, TSL_CONV2D_WINOGRAD_F4};
  int applied = 0;
  tsl_conv2d_layer d = conv_case_layer(c, ops_lanes());
  for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
    if (!tsl_conv2d_algo_applies(&d, algos[a], NULL)) continue;
    applied++;
    o.seed++;
    CU_ASSERT(conv_check(c, algos[a], &o));
  }
  if (variants) {
    conv_case dw = *c;
    dw.K = dw.C;
    dw.groups = dw.C;
    o.seed++;
    CU_ASSERT(conv_check(&dw, TSL_CONV2D_DEPTHWISE, &o));
    conv_case mult = dw; /* depthwise with a channel multiplier 2: grouped */
    mult.K = 2 * mult.C;
    o.seed++;
    CU_ASSERT(conv_check(&mult, TSL_CONV2D_GROUPED, &o));
    applied += 2;
  }
  return applied;
}

static void check_layers(const conv_case *layers, size_t n, uint64_t seed, int min_algorithms) {
  for (size_t l = 0; l < n; l++) CU_ASSERT(check_every_algorithm(&layers[l], true, conv_opts(1, seed + 10 * l)) >= min_algorithms);
}

/* Class 15: relu6 (clip 0..6, inputs large enough that both bounds cut) and the
 * residual add, alone and together, on every algorithm, with batch 2. */
static void test_relu6_and_residual_epilogues_on_every_algorithm(void) {
  static const conv_case layers[] = {
      /* N C  H   W  K  R  S sh sw pt pl pb pr dh dw g act lo hi residual */
      {2, 12, 10, 9, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 0, 6, true},
      {2, 12, 7, 6, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 2, 0, 6, true},
  };
  for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++)
    for (int v = 0; v < 3; v++) {
      conv_case c = layers[l];
      c.act = v == 1 ? 0 : 2;   /* residual alone, relu6 alone, both */
      c.residual = v != 2 || l == 0;
      conv_check_opts o = conv_opts(1, 4000 + 10 * l + (uint64_t)v);
      o.lo = -12.0f;
      o.hi = 12.0f;
      CU_ASSERT(check_every_algorithm(&c, true, o) >= 4);
    }
}

/* Strides larger than the kernel (input pixels no window reads): 1x1 s2, 2x2 s3,
 * 3x3 s4 with padding, non-square strides. */
static void test_stride_greater_than_kernel(void) {
  static const conv_case layers[] = {
      {2, 5, 9, 11, 7, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, false},
      {1, 9, 13, 10, 6, 2, 2, 3, 3, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, true},
      {1, 4, 17, 15, 10, 3, 3, 4, 5, 1, 1, 1, 1, 1, 1, 1, 2, 0, 6, false},
  };
  check_layers(layers, sizeof layers / sizeof layers[0], 4100, 4);
}

/* 1x1 spatial inputs: a 3x3 kernel with padding 1 (only the centre tap is real), a
 * 1x1 kernel, and batch 3. */
static void test_1x1_spatial_input(void) {
  static const conv_case layers[] = {
      {1, 16, 1, 1, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false},
      {3, 7, 1, 1, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 2, -1, 1, true},
      {2, 3, 1, 1, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, true},
  };
  check_layers(layers, sizeof layers / sizeof layers[0], 4200, 3);
}

/* Padding at least the kernel's size: outputs whose whole window is padding (they hold
 * act(bias (+ residual))); a kernel as large as the padded input (one output). */
static void test_padding_at_least_kernel_and_kernel_equal_to_padded_input(void) {
  static const conv_case layers[] = {
      {1, 6, 5, 6, 10, 3, 3, 1, 1, 3, 4, 3, 5, 1, 1, 1, 1, 0, 0, true},
      {2, 9, 4, 4, 8, 2, 2, 2, 2, 2, 2, 3, 3, 1, 1, 1, 0, 0, 0, false},
      {1, 10, 5, 4, 7, 7, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, -0.5, 0.5, false},
  };
  check_layers(layers, sizeof layers / sizeof layers[0], 4300, 3);
}

/* Stride-1 depthwise convs over more than 64 output pixels in the blocked layout take a
 * block of rows by default (depthwise_schedule.c, row_block_tile) and read the padding
 * through guarded loads. First the defaults themselves on each x86 and AArch64 target
 * (4, 8 and 16 lanes, the target's own block and 16-lane blocks): a 17 x 28 output has a
 * block of more than one row that leaves a tail in rows, at most 12 and (one register per
 * output) at least 8 accumulators, pad_mode 0; the plain layout and stride 2 keep one row.
 * Then those convs against the naive reference, default and random configs: 3x3 and 5x5
 * windows on 17 x 28 outputs, a dilated window, no padding, a column tail (17 x 29), a
 * residual, batch 2. */
static void test_depthwise_row_block_default_with_tails(void) {
  static const char *const targets[] = {"x86-64-avx2", "x86-64-avx512", "armv8"};
  for (size_t ti = 0; ti < sizeof targets / sizeof targets[0]; ti++) {
    tsl_target t;
    CU_ASSERT_FATAL(tsl_target_parse(targets[ti], &t) == TSL_OK);
    int64_t lanes = tsl_target_f32_lanes(&t);
    const int64_t ys[] = {lanes, 16};
    for (int yi = 0; yi < 2; yi++) {
      int64_t rpa = (ys[yi] + lanes - 1) / lanes;
      for (int64_t r = 3; r <= 5; r += 2) {
        tsl_depthwise_shape sh = {1, 4, 17, 28, ys[yi], r, r, true, false, false, 1, 1, 1};
        tsl_depthwise_knobs k = tsl_depthwise_default_knobs(&t, &sh);
        int64_t acc = k.oh_block * k.ow_block * rpa;
        CU_ASSERT(k.pad_mode == 0);
        CU_ASSERT(acc <= 12);
        CU_ASSERT(k.oh_block <= r);
        if (rpa == 1) {
          CU_ASSERT(acc >= 8);
          CU_ASSERT(k.oh_block > 1 && sh.OH % k.oh_block != 0);
        }
        sh.stride_h = sh.stride_w = 2;
        CU_ASSERT(tsl_depthwise_default_knobs(&t, &sh).oh_block == 1);
        sh.stride_h = sh.stride_w = 1;
        sh.Y = 1;
        CU_ASSERT(tsl_depthwise_default_knobs(&t, &sh).oh_block == 1);
      }
    }
  }
  static const conv_case layers[] = {
      /* N C  H   W  K  R  S sh sw pt pl pb pr dh dw g act lo hi residual */
      {1, 20, 17, 28, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 20, 2, 0, 6, false},
      {2, 16, 17, 28, 16, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 16, 0, 0, 0, true},
      {1, 24, 17, 28, 24, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 24, 1, 0, 0, false},
      {1, 8, 19, 30, 8, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 8, 1, 0, 0, false},
      {1, 12, 17, 29, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 12, 1, 0, 0, false},
      {1, 32, 29, 30, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, 2, 0, 6, true},
  };
  const int64_t blocks[] = {0, 16};
  for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
      conv_check_opts o = conv_opts(1, 4400 + 10 * l + b);
      o.block = blocks[b];
      CU_ASSERT(conv_check(&layers[l], TSL_CONV2D_DEPTHWISE, &o));
    }
}

void ops_tests_conv_classes(CU_pSuite s) {
  CU_add_test(s, "test_depthwise_row_block_default_with_tails", test_depthwise_row_block_default_with_tails);
  CU_add_test(s, "test_relu6_and_residual_epilogues_on_every_algorithm",
              test_relu6_and_residual_epilogues_on_every_algorithm);
  CU_add_test(s, "test_stride_greater_than_kernel", test_stride_greater_than_kernel);
  CU_add_test(s, "test_1x1_spatial_input", test_1x1_spatial_input);
  CU_add_test(s, "test_padding_at_least_kernel_and_kernel_equal_to_padded_input",
              test_padding_at_least_kernel_and_kernel_equal_to_padded_input);
}
