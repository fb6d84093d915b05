/* The convolution algorithms' applicability, the default heuristic, kernel names and the
 * templates' refusals (ops/conv2d/conv2d_select.h and the templates). */
#include <stdio.h>
#include <string.h>

#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/conv_check.h"
#include "ops/ops_util.h"
#include "ops/conv2d/conv2d_nchwc_schedule.h"
#include "ops/conv2d/depthwise_schedule.h"
#include "ops/conv2d/im2col_schedule.h"
#include "ops/nn/pool_schedule.h"

static tsl_conv2d_layer layer(int64_t C, int64_t HW, int64_t K, int64_t R, int64_t stride, int64_t pad, int64_t groups) {
  conv_case c = {1, C, HW, HW, K, R, R, stride, stride, pad, pad, pad, pad, 1, 1, groups, 1, 0, 0, false};
  return conv_case_layer(&c, 8);
}

static void test_algorithms_apply_and_decline(void) {
  tsl_conv2d_layer d3 = layer(64, 56, 64, 3, 1, 1, 1), d1 = layer(64, 56, 128, 1, 1, 0, 1);
  tsl_conv2d_layer s2 = layer(64, 56, 128, 1, 2, 0, 1), dw = layer(32, 56, 32, 3, 1, 1, 32);
  tsl_conv2d_layer gr = layer(32, 56, 64, 3, 1, 1, 4);
  const char *why = NULL;
  CU_ASSERT(tsl_conv2d_algo_applies(&d3, TSL_CONV2D_DIRECT, NULL));
  CU_ASSERT(tsl_conv2d_algo_applies(&d3, TSL_CONV2D_IM2COL, NULL));
  CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&d3, TSL_CONV2D_GEMM_1X1, &why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "1x1"));
  CU_ASSERT(tsl_conv2d_algo_applies(&d1, TSL_CONV2D_GEMM_1X1, NULL));
  CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&s2, TSL_CONV2D_GEMM_1X1, &why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "stride"));
  CU_ASSERT(tsl_conv2d_algo_applies(&dw, TSL_CONV2D_DEPTHWISE, NULL));
  CU_ASSERT(tsl_conv2d_algo_applies(&dw, TSL_CONV2D_GROUPED, NULL));
  CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&dw, TSL_CONV2D_DIRECT, NULL));
  CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&gr, TSL_CONV2D_DEPTHWISE, NULL));
  CU_ASSERT(tsl_conv2d_algo_applies(&gr, TSL_CONV2D_GROUPED, NULL));
  /* every algorithm takes a residual epilogue (its _add operator) */
  d3.has_residual = true;
  CU_ASSERT(tsl_conv2d_algo_applies(&d3, TSL_CONV2D_DIRECT, NULL));
  CU_ASSERT(tsl_conv2d_algo_applies(&d3, TSL_CONV2D_IM2COL, NULL));
  CU_ASSERT(tsl_conv2d_algo_applies(&d3, TSL_CONV2D_GROUPED, NULL));
  /* Winograd never takes a stride-2 layer */
  tsl_conv2d_layer s23 = layer(64, 56, 64, 3, 2, 1, 1);
  CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&s23, TSL_CONV2D_WINOGRAD_F4, NULL));
  /* malformed layers */
  tsl_conv2d_layer bad = d1;
  bad.groups = 3;
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&bad), TSL_ERR_INVALID);
  bad = d1;
  bad.R = 100;
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&bad), TSL_ERR_INVALID);
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL(tsl_conv2d_algo_instantiate(&s2, TSL_CONV2D_GEMM_1X1, ops_target(), &p, NULL), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NULL(p);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* The default picks an algorithm that applies, following the documented rule
 * (conv2d_select.h). */
static void test_default_choice(void) {
  static const struct {
    int64_t C, HW, K, R, stride, pad, groups;
    tsl_conv2d_algo want; /* TSL_CONV2D_ALGO_COUNT: Winograd of some m */
  } layers[] = {
      {3, 224, 64, 7, 2, 3, 1, TSL_CONV2D_GROUPED},       /* first layer: the true 3 channels */
      {64, 56, 64, 3, 1, 1, 1, TSL_CONV2D_ALGO_COUNT},    /* 3x3 stride 1: Winograd */
      {64, 56, 128, 1, 2, 0, 1, TSL_CONV2D_DIRECT},       /* 1x1 stride 2 */
      {512, 7, 512, 3, 1, 1, 1, TSL_CONV2D_ALGO_COUNT},
      {96, 56, 24, 1, 1, 0, 1, TSL_CONV2D_GEMM_1X1},
      {144, 56, 144, 3, 2, 1, 144, TSL_CONV2D_DEPTHWISE},
      {32, 16, 64, 3, 1, 1, 4, TSL_CONV2D_BLOCKDIAG},     /* groups of 8 in, 16 out */
      {224, 28, 224, 3, 1, 1, 28, TSL_CONV2D_BLOCKDIAG},  /* RegNetY-400MF: groups of 8 (of 16 lanes; grouped at 8) */
      {32, 28, 64, 3, 1, 1, 32, TSL_CONV2D_GROUPED},      /* one input channel per group */
      {192, 14, 192, 3, 1, 1, 3, TSL_CONV2D_BLOCKDIAG},   /* groups of 64 */
      {16, 14, 16, 5, 1, 2, 1, TSL_CONV2D_DIRECT},        /* 5x5: no Winograd F(m, 3) */
  };
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    tsl_conv2d_layer d = layer(layers[i].C, layers[i].HW, layers[i].K, layers[i].R, layers[i].stride, layers[i].pad,
                              layers[i].groups);
    tsl_conv2d_algo a = tsl_conv2d_select(&d, ops_target());
    CU_ASSERT(tsl_conv2d_algo_applies(&d, a, NULL));
    bool one_block_groups = d.groups > 1 && d.C / d.groups == d.block && d.K / d.groups == d.block;
    if (one_block_groups) {
      CU_ASSERT_EQUAL(a, TSL_CONV2D_GROUPED); /* groups of exactly one block: the grouped template */
    } else if (layers[i].want == TSL_CONV2D_ALGO_COUNT) {
      CU_ASSERT(a == TSL_CONV2D_WINOGRAD_F2 || a == TSL_CONV2D_WINOGRAD_F4 || a == TSL_CONV2D_WINOGRAD_F6);
    } else {
      CU_ASSERT_EQUAL(a, layers[i].want);
    }
  }
}

/* Strided dense convs with a kernel wider than 1 take the grouped template at 16 lanes
 * and the direct one at 8 (conv2d_select.h; measured in resnet18 and ConvNeXt); 1x1
 * strided ones and stride-1 ones keep their algorithms. Both targets, whatever the host. */
static void test_strided_dense_conv_choice_at_8_and_16_lanes(void) {
  tsl_target avx2, avx512;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &avx512), TSL_OK);
  static const struct {
    int64_t C, HW, K, R, S, stride_h, stride_w, pad, N;
    bool residual;
    tsl_conv2d_algo want8, want16;
  } layers[] = {
      {64, 56, 128, 3, 3, 2, 2, 1, 1, false, TSL_CONV2D_DIRECT, TSL_CONV2D_GROUPED},  /* resnet18 layer2.0.conv1 */
      {256, 14, 512, 3, 3, 2, 2, 1, 1, false, TSL_CONV2D_DIRECT, TSL_CONV2D_GROUPED}, /* resnet18 layer4.0.conv1 */
      {96, 56, 192, 2, 2, 2, 2, 0, 1, false, TSL_CONV2D_DIRECT, TSL_CONV2D_GROUPED},  /* ConvNeXt downsampling */
      {64, 28, 64, 3, 3, 2, 1, 1, 2, true, TSL_CONV2D_DIRECT, TSL_CONV2D_GROUPED},   /* one axis, N2, residual */
      {64, 28, 64, 1, 3, 2, 2, 1, 1, false, TSL_CONV2D_DIRECT, TSL_CONV2D_GROUPED},  /* a 1x3 kernel */
      {64, 56, 128, 1, 1, 2, 2, 0, 1, false, TSL_CONV2D_DIRECT, TSL_CONV2D_DIRECT},  /* 1x1 stride 2 */
      {16, 14, 16, 5, 5, 1, 1, 2, 1, false, TSL_CONV2D_DIRECT, TSL_CONV2D_DIRECT},   /* 5x5 stride 1 */
  };
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    conv_case c = {layers[i].N, layers[i].C, layers[i].HW, layers[i].HW, layers[i].K, layers[i].R, layers[i].S,
                   layers[i].stride_h, layers[i].stride_w, layers[i].pad, layers[i].pad, layers[i].pad,
                   layers[i].pad, 1, 1, 1, 1, 0, 0, layers[i].residual};
    tsl_conv2d_layer d8 = conv_case_layer(&c, 8), d16 = conv_case_layer(&c, 16);
    tsl_conv2d_algo a8 = tsl_conv2d_select(&d8, &avx2), a16 = tsl_conv2d_select(&d16, &avx512);
    CU_ASSERT_EQUAL(a8, layers[i].want8);
    CU_ASSERT_EQUAL(a16, layers[i].want16);
    CU_ASSERT(tsl_conv2d_algo_applies(&d16, a16, NULL));
    /* blocks of 8 on the 16-lane target: not what was measured, the direct conv */
    if (layers[i].want16 == TSL_CONV2D_GROUPED) CU_ASSERT_EQUAL(tsl_conv2d_select(&d8, &avx512), TSL_CONV2D_DIRECT);
  }
}

/* Winograd for 4x4 and 5x5 stride-1 layers: F(2, r) and F(4, r) apply (F(6, r) is not
 * provided), the default stays a direct conv (not Winograd), the tuner's list offers the algorithms of the
 * layer's kernel size only (their own templates), and each computes the layer as the
 * reference does through the conv-family path (default and random template configs,
 * every epilogue, a residual, channels off the block). */
static void test_winograd_larger_kernel_algorithms(void) {
  static const conv_case cases[] = {
      /* ResNet-18's 7x7 s2 stem as its phase conv: 12 channels, 4x4, pads 2, 2, 1, 1 */
      {1, 12, 28, 28, 64, 4, 4, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0.0, 0.0, false},
      {1, 16, 14, 13, 24, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1, 2, -0.5, 0.5, false},
      {2, 9, 11, 12, 20, 5, 5, 1, 1, 0, 1, 2, 0, 1, 1, 1, 0, 0.0, 0.0, true},
      {1, 8, 10, 9, 8, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0.0, 0.0, true},
  };
  static const tsl_conv2d_algo wino[] = {TSL_CONV2D_WINOGRAD_F2, TSL_CONV2D_WINOGRAD_F4};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_conv2d_layer d = conv_case_layer(&cases[i], 8);
    CU_ASSERT(tsl_conv2d_algo_applies(&d, TSL_CONV2D_WINOGRAD_F2, NULL));
    CU_ASSERT(tsl_conv2d_algo_applies(&d, TSL_CONV2D_WINOGRAD_F4, NULL));
    CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&d, TSL_CONV2D_WINOGRAD_F6, NULL));
    /* the default: Winograd for 4x4 with C, K >= 8 (tsl_conv2d_prefers_winograd), F(4x4)
     * from 20x20 outputs; 5x5 stays direct */
    int m = 0;
    bool wino_default = tsl_conv2d_algo_is_winograd(tsl_conv2d_select(&d, ops_target()), &m);
    CU_ASSERT_EQUAL(wino_default, d.R == 4 && d.C >= 8 && d.K >= 8);
    if (wino_default) CU_ASSERT_EQUAL(m, tsl_conv2d_layer_out_h(&d) * tsl_conv2d_layer_out_w(&d) >= 400 ? 4 : 2);
    tsl_workload w;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
    tsl_algo_choice ch[32];
    int n = tsl_algorithms_for(&w, ch, 32, NULL);
    char want2[64], want4[64];
    snprintf(want2, sizeof want2, "winograd_f2_r%d", (int)d.R);
    snprintf(want4, sizeof want4, "winograd_f4_r%d", (int)d.R);
    int found = 0, other = 0;
    for (int k = 0; k < n; k++) {
      const char *dot = strrchr(ch[k].name, '.');
      const char *algo = dot ? dot + 1 : ch[k].name;
      if (strcmp(algo, want2) == 0 || strcmp(algo, want4) == 0) {
        found++;
        CU_ASSERT_PTR_NOT_NULL(strstr(ch[k].tpl->name, algo + strlen("winograd_")));
        CU_ASSERT_PTR_NOT_NULL(strstr(ch[k].op_workload.op, algo + strlen("winograd_")));
      } else if (strncmp(algo, "winograd", 8) == 0) {
        other++;
      }
    }
    CU_ASSERT_EQUAL(found, 2);
    CU_ASSERT_EQUAL(other, 0);
  }
  CU_ASSERT_EQUAL(conv_check_all(cases, sizeof cases / sizeof cases[0], wino, 2, 2, 71), 0);
}

/* Kernel names say what ran (STYLE.md, MegCC's habit). */
static void test_kernel_names(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  conv_case c = {1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  tsl_conv2d_layer d = conv_case_layer(&c, 8);
  tsl_te_program *p = NULL;
  char buf[160];
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_DIRECT, ops_target(), &p, NULL), TSL_OK);
  tsl_conv2d_nchwc_kernel_name(p, NULL, buf, sizeof buf);
  CU_ASSERT_EQUAL(strncmp(buf, "conv2d_nchw8c_3x3_s1_p1_f32_bias_relu__", 39), 0);
  d.act = 2;
  d.has_residual = true;
  d.stride_w = 2;
  d.pad_right = 0;
  d.dilation_h = d.dilation_w = 2;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_DIRECT, ops_target(), &p, NULL), TSL_OK);
  tsl_conv2d_nchwc_kernel_name(p, NULL, buf, sizeof buf);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "conv2d_nchw8c_3x3_s1x2_p1_1_1_0_d2_f32_bias_add_relu6__"));
  conv_case g = {1, 16, 8, 8, 32, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, false};
  d = conv_case_layer(&g, 8);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_GEMM_1X1, ops_target(), &p, NULL), TSL_OK);
  tsl_conv2d_nchwc_kernel_name(p, NULL, buf, sizeof buf);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "conv2d_nchw8c_1x1_s1_p0_f32_gemm_bias__"));
  conv_case dw = {1, 32, 8, 8, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 32, 2, 0, 6, false};
  d = conv_case_layer(&dw, 8);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_DEPTHWISE, ops_target(), &p, NULL), TSL_OK);
  tsl_depthwise_kernel_name(p, NULL, buf, sizeof buf);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "depthwise_conv2d_nchw8c_3x3_s2_p1_f32_bias_relu6__"));
  /* 19 + 6 - 7 is even: every padded row is read (an im2col program only holds the
   * padding its output reaches) */
  conv_case im = {1, 3, 19, 19, 16, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, false};
  d = conv_case_layer(&im, 8);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_IM2COL, ops_target(), &p, NULL), TSL_OK);
  tsl_im2col_kernel_name(p, NULL, buf, sizeof buf);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "conv2d_nchw8c_7x7_s2_p3_f32_im2col_bias_relu__"));
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* Knobs out of range and programs of another operator are refused with a message. */
static void test_templates_refuse_bad_knobs_and_programs(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  conv_case c = {1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  tsl_conv2d_layer d = conv_case_layer(&c, 8);
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_DIRECT, ops_target(), &p, NULL), TSL_OK);
  tsl_conv2d_nchwc_shape sh;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_nchwc_get_shape(p, &sh), TSL_OK);
  CU_ASSERT_EQUAL(sh.OH, 8);
  CU_ASSERT(sh.padded);
  tsl_conv2d_nchwc_knobs k = tsl_conv2d_nchwc_default_knobs(ops_target(), &sh, false);
  tsl_schedule *s = NULL;
  k.ow_block = 0;
  CU_ASSERT_EQUAL(tsl_conv2d_nchwc_schedule(p, ops_target(), &k, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "ow_block"));
  CU_ASSERT_PTR_NULL(s);
  k = tsl_conv2d_nchwc_default_knobs(ops_target(), &sh, false);
  k.pad_mode = 3;
  CU_ASSERT_EQUAL(tsl_conv2d_nchwc_schedule(p, ops_target(), &k, &s), TSL_ERR_INVALID);
  /* the register tile of the default fits the vector registers with room (16 ymm of
   * AVX2; 32 zmm of AVX-512 or NEON's v0-v31), for the layer blocked at each target's
   * lanes (one register per accumulator) and at 8 (two NEON registers each) */
  const char *targets[] = {"x86-64-avx2", "x86-64-avx512", "armv8"};
  const int regs[] = {16, 32, 32};
  for (int i = 0; i < 3; i++) {
    tsl_target tg;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[i], &tg), TSL_OK);
    int64_t lanes = tsl_target_f32_lanes(&tg), blocks[2] = {lanes, 8};
    for (int b = 0; b < 2; b++) {
      tsl_conv2d_layer db = conv_case_layer(&c, blocks[b]);
      tsl_te_program *pb = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&db, TSL_CONV2D_DIRECT, &tg, &pb, NULL), TSL_OK);
      tsl_conv2d_nchwc_shape shb;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_nchwc_get_shape(pb, &shb), TSL_OK);
      k = tsl_conv2d_nchwc_default_knobs(&tg, &shb, false);
      int64_t rpa = (blocks[b] + lanes - 1) / lanes; /* registers per accumulator */
      CU_ASSERT(k.ow_block * k.oh_block * k.oc_blocks * rpa + k.oc_blocks * rpa <= regs[i] - 1);
    }
  }
  /* a matmul is no convolution, for any of the templates */
  int64_t a[2] = {4, 5}, b[2] = {5, 6};
  const int64_t *shapes[2] = {a, b};
  int nd[2] = {2, 2};
  tsl_te_program *mm = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("matmul", 2, shapes, nd, 0, NULL, &mm), TSL_OK);
  CU_ASSERT_EQUAL(tsl_conv2d_nchwc_schedule(mm, ops_target(), NULL, &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_depthwise_schedule(mm, ops_target(), NULL, &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_im2col_schedule(mm, ops_target(), NULL, &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_pool_schedule(mm, ops_target(), NULL, &s), TSL_ERR_INVALID);
  /* gemm1x1's op needs a 1x1 kernel: a 3x3 workload cannot even be instantiated */
  tsl_te_program *q = NULL;
  CU_ASSERT_EQUAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_GEMM_1X1, ops_target(), &q, NULL), TSL_ERR_UNSUPPORTED);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* im2col's default tile keeps the packed panel in half of L2 (class 3: the tile count
 * leaves a remainder and the last tile is guarded). */
static void test_im2col_tile_fits_l2(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  conv_case c = {1, 256, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  tsl_conv2d_layer d = conv_case_layer(&c, 8);
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_IM2COL, ops_target(), &p, NULL), TSL_OK);
  tsl_im2col_shape sh;
  CU_ASSERT_EQUAL_FATAL(tsl_im2col_get_shape(p, &sh), TSL_OK);
  CU_ASSERT_EQUAL(sh.C, 256);
  CU_ASSERT_EQUAL(sh.P, 196);
  tsl_im2col_knobs k = tsl_im2col_default_knobs(ops_target(), &sh);
  CU_ASSERT_EQUAL(k.tile_px % sh.pack_rows, 0);
  CU_ASSERT(k.tile_px * 256 * 9 * 4 <= ops_target()->l2_bytes / 2 || k.tile_px == sh.pack_rows);
  k.tile_px = 5; /* not a multiple of pack_rows */
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_im2col_schedule(p, ops_target(), &k, &s), TSL_ERR_INVALID);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

void ops_tests_select(CU_pSuite s) {
  CU_add_test(s, "test_algorithms_apply_and_decline", test_algorithms_apply_and_decline);
  CU_add_test(s, "test_default_choice", test_default_choice);
  CU_add_test(s, "test_winograd_larger_kernel_algorithms", test_winograd_larger_kernel_algorithms);
  CU_add_test(s, "test_strided_dense_conv_choice_at_8_and_16_lanes", test_strided_dense_conv_choice_at_8_and_16_lanes);
  CU_add_test(s, "test_kernel_names", test_kernel_names);
  CU_add_test(s, "test_templates_refuse_bad_knobs_and_programs", test_templates_refuse_bad_knobs_and_programs);
  CU_add_test(s, "test_im2col_tile_fits_l2", test_im2col_tile_fits_l2);
}
