/* The NCHW[x]c convolutions (direct, 1x1 GEMM, im2col, depthwise, grouped) against the
 * naive reference on random shapes and the classes of shared/cases: channel counts not
 * a multiple of the block, non-square inputs, asymmetric and large padding, even
 * kernels and kernels as large as the input, dilation, fused epilogues after every
 * special schedule, other block widths, 1 vs N threads. Each layer runs with its
 * template's default config and random configs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ops/conv_check.h"
#include "ops/ops_util.h"
#include "schedule/schedule.h"

static uint64_t rng_state = 0x5eed;
static int64_t rnd(int64_t lo, int64_t hi) { /* [lo, hi] */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return lo + (int64_t)(z % (uint64_t)(hi - lo + 1));
}

/* A random layer: channels from chans, kernels 1..5 (even ones too), dilation 1..max_dh
 * (rows) and 1..max_dw (columns), inputs up to max_hw pixels a side, strides 1..max_sh /
 * 1..max_sw, paddings 0..max_pad on each side, N 1..max_n, act 0..max_act. */
static conv_case random_layer(const int64_t *chans, int nchans, int64_t max_hw, int64_t max_dh, int64_t max_dw,
                              int64_t max_sh, int64_t max_sw, int64_t max_pad, int64_t max_n, int max_act) {
  conv_case c;
  memset(&c, 0, sizeof c);
  c.N = rnd(1, max_n);
  c.C = chans[rnd(0, nchans - 1)];
  c.K = chans[rnd(0, nchans - 1)];
  c.R = rnd(1, 5);
  c.S = rnd(1, 5);
  c.dh = rnd(1, max_dh);
  c.dw = rnd(1, max_dw);
  c.H = rnd((c.R - 1) * c.dh + 1, max_hw);
  c.W = rnd((c.S - 1) * c.dw + 1, max_hw);
  c.sh = rnd(1, max_sh);
  c.sw = rnd(1, max_sw);
  c.pt = rnd(0, max_pad);
  c.pl = rnd(0, max_pad);
  c.pb = rnd(0, max_pad);
  c.pr = rnd(0, max_pad);
  c.act = (int)rnd(0, max_act);
  return c;
}

/* n random layers (random_layer with the limits lim: max_hw, max_dh, max_dw, max_sh,
 * max_sw, max_pad, max_n, max_act) through algorithm a, residual on at random; 1x1
 * kernels when a is the 1x1 GEMM; act 2 clips to [lo, hi]. */
static void check_random_layers(tsl_conv2d_algo a, int n, uint64_t seed, const int64_t *chans, int nchans,
                                const int64_t lim[8], double lo, double hi) {
  for (int i = 0; i < n; i++) {
    conv_case c = random_layer(chans, nchans, lim[0], lim[1], lim[2], lim[3], lim[4], lim[5], lim[6], (int)lim[7]);
    if (a == TSL_CONV2D_GEMM_1X1) c.R = c.S = 1;
    c.lo = lo;
    c.hi = hi;
    c.residual = rnd(0, 1);
    conv_check_opts o = conv_opts(2, seed + (uint64_t)i);
    CU_ASSERT(conv_check(&c, a, &o));
  }
}

/* Random layers: channels 1..33 (mostly not multiples of 8), 1..17 pixels, kernels 1..5
 * (even ones too), strides 1..3, asymmetric paddings 0..3, dilations 1..2, N 1..2. */
static void test_direct_random_shapes(void) {
  static const int64_t chans[] = {1, 3, 8, 9, 13, 16, 33}, lim[8] = {17, 2, 2, 3, 3, 3, 2, 2};
  check_random_layers(TSL_CONV2D_DIRECT, 10, 100, chans, 7, lim, -0.25, 0.5);
}

static void test_im2col_random_shapes(void) {
  static const int64_t chans[] = {1, 3, 5, 8, 17, 24}, lim[8] = {19, 2, 1, 2, 3, 2, 2, 1};
  check_random_layers(TSL_CONV2D_IM2COL, 8, 200, chans, 6, lim, 0.0, 0.0);
}

static void test_gemm1x1_random_shapes(void) {
  static const int64_t chans[] = {1, 5, 8, 16, 19, 40}, lim[8] = {15, 1, 1, 1, 1, 0, 3, 2};
  check_random_layers(TSL_CONV2D_GEMM_1X1, 6, 300, chans, 6, lim, 0.0, 6.0);
}

/* Class 7: even kernels, and a kernel as large as the (padded) input (a 1x1 output). */
static void test_even_kernels_and_kernel_equal_to_input(void) {
  static const conv_case cases[] = {
      /* N C  H  W  K  R  S sh sw pt pl pb pr dh dw g act */
      {1, 3, 8, 8, 5, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, false},
      {1, 4, 9, 7, 6, 4, 4, 2, 2, 1, 2, 2, 1, 1, 1, 1, 0, 0, 0, false},
      {2, 5, 6, 6, 3, 6, 6, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, false},
      {1, 9, 5, 7, 10, 7, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false},
      {1, 2, 4, 4, 2, 2, 4, 3, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, true},
  };
  static const tsl_conv2d_algo algos[] = {TSL_CONV2D_DIRECT, TSL_CONV2D_IM2COL, TSL_CONV2D_GROUPED};
  CU_ASSERT_EQUAL(conv_check_all(cases, sizeof cases / sizeof cases[0], algos, 3, 1, 400), 0);
}

/* Class 8: dilation > 1 in regular convs (depthwise in test_conv_cases.c, C05). */
static void test_dilation_regular_conv(void) {
  static const conv_case cases[] = {
      {1, 6, 13, 11, 7, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 0, 0, false},
      {1, 3, 15, 15, 9, 3, 2, 2, 1, 3, 0, 0, 3, 3, 2, 1, 0, 0, 0, false},
      {2, 8, 9, 12, 8, 2, 3, 1, 2, 1, 1, 1, 1, 4, 1, 1, 2, 0, 6, false},
  };
  static const tsl_conv2d_algo algos[] = {TSL_CONV2D_DIRECT, TSL_CONV2D_IM2COL, TSL_CONV2D_GROUPED};
  CU_ASSERT_EQUAL(conv_check_all(cases, sizeof cases / sizeof cases[0], algos, 3, 1, 500), 0);
}

/* Class 15: every epilogue (bias, relu, clip with bounds that cut both ways, residual
 * add) after every special schedule: chunked input channels, each padding mode, the
 * pixel-axis GEMM, im2col, depthwise, grouped. */
static void test_epilogues_after_every_schedule(void) {
  conv_case c = {1, 24, 9, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, false};
  static const char *const direct_knobs[] = {"ic_chunk=1", "ic_chunk=2,oc_major=1", "pad_mode=0", "pad_mode=1",
                                             "pad_mode=2,loop_order=1", "oh_block=2,ow_block=3,oc_blocks=1"};
  for (int act = 0; act <= 2; act++)
    for (int res = 0; res <= 1; res++) {
      c.act = act;
      c.lo = -0.2;
      c.hi = 0.3;
      c.residual = res;
      for (size_t k = 0; k < sizeof direct_knobs / sizeof direct_knobs[0]; k++) {
        if ((act + res + (int)k) % 3 != 0) continue; /* a third of the products keeps the suite fast */
        conv_check_opts o = conv_opts(0, 600 + k);
        o.knobs = direct_knobs[k];
        o.skip_default = true;
        CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
      }
      conv_case g = c;
      g.R = g.S = 1;
      g.pt = g.pl = g.pb = g.pr = 0;
      conv_check_opts o = conv_opts(0, 610);
      CU_ASSERT(conv_check(&g, TSL_CONV2D_GEMM_1X1, &o));
      CU_ASSERT(conv_check(&c, TSL_CONV2D_IM2COL, &o));
      conv_case dw = c;
      dw.K = dw.C;
      dw.groups = dw.C;
      CU_ASSERT(conv_check(&dw, TSL_CONV2D_DEPTHWISE, &o));
      conv_case gr = c;
      gr.groups = 4;
      CU_ASSERT(conv_check(&gr, TSL_CONV2D_GROUPED, &o));
    }
}

/* The band of the block-diagonal algorithm, counted here from its definition: the input
 * blocks the groups of each output block's real output channels reach, at most. */
static int64_t band_by_count(const tsl_conv2d_layer *d) {
  int64_t x = d->block, cg = d->C / d->groups, kg = d->K / d->groups, best = 0;
  for (int64_t kb = 0; kb * x < d->K; kb++) {
    int64_t lo = -1, hi = -1;
    for (int64_t k = kb * x; k < kb * x + x && k < d->K; k++)
      for (int64_t c = k / kg * cg; c < k / kg * cg + cg; c++) {
        if (lo < 0 || c / x < lo) lo = c / x;
        if (c / x > hi) hi = c / x;
      }
    if (hi - lo + 1 > best) best = hi - lo + 1;
  }
  return best;
}

/* Grouped convs as block-diagonal dense convs (conv2d_select.h's blockdiag) against the
 * naive reference: group widths 1 (a multiplier), 2, 4, 8, 16, 24, 32, 64, groups with
 * more or fewer output than input channels, channel tails, strides 1 and 2, asymmetric
 * pads, dilation, every epilogue, at blocks 4 (NEON), 8 (AVX2) and 16 (AVX-512), each
 * with its default config and random ones; its band is the counted one. */
static void test_blockdiag_group_widths(void) {
  static const conv_case cases[] = {
      /* N  C  H  W   K  R  S sh sw pt pl pb pr dh dw  g act lo hi res */
      {1, 12, 7, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 1, 0, 0, false},   /* width 2 */
      {1, 20, 8, 7, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 5, 2, -0.2, 0.3, false}, /* 4, stride 2, clip */
      {1, 24, 9, 8, 24, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3, 0, 0, 0, true},    /* 8, dilation 2, residual */
      {2, 32, 6, 7, 32, 3, 3, 1, 1, 1, 0, 2, 1, 1, 1, 2, 1, 0, 0, false},   /* 16, asymmetric pads */
      {1, 72, 5, 6, 72, 3, 3, 2, 1, 1, 0, 1, 0, 1, 1, 3, 1, 0, 0, true},    /* 24 */
      {1, 64, 5, 5, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, false},   /* 32, 1x1 */
      {1, 128, 4, 5, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 0, 0, false}, /* 64 */
      {1, 12, 6, 6, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, 1, 0, 0, false},   /* 3 in, 6 out per group */
      {1, 32, 6, 5, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 0, 0, 0, true},    /* 4 in, 2 out */
      {1, 8, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, 1, 0, 0, false},    /* 1 in, 2 out */
  };
  static const int64_t blocks[] = {4, 8, 16};
  int failed = 0;
  for (size_t b = 0; b < 3; b++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      tsl_conv2d_layer d = conv_case_layer(&cases[i], blocks[b]);
      double inflation = 0.0;
      int64_t band = tsl_conv2d_blockdiag_band(&d, &inflation);
      CU_ASSERT_EQUAL(band, band_by_count(&d));
      CU_ASSERT_DOUBLE_EQUAL(inflation, (double)(band * blocks[b]) / (double)(d.C / d.groups), 1e-12);
      conv_check_opts o = conv_opts(2, 700 + 10 * b + i);
      o.block = blocks[b];
      if (!conv_check(&cases[i], TSL_CONV2D_BLOCKDIAG, &o)) failed++;
    }
  CU_ASSERT_EQUAL(failed, 0);
  /* groups 1 is the direct conv: declined */
  conv_case dense = cases[0];
  dense.groups = 1;
  tsl_conv2d_layer d1 = conv_case_layer(&dense, 8);
  const char *why = NULL;
  CU_ASSERT_FALSE(tsl_conv2d_algo_applies(&d1, TSL_CONV2D_BLOCKDIAG, &why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "groups > 1"));
  /* the default at 16 lanes: blockdiag for RegNetY's groups of 8 */
  conv_case regnet = {1, 224, 28, 28, 224, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 28, 1, 0, 0, false};
  tsl_conv2d_layer r16 = conv_case_layer(&regnet, 16);
  CU_ASSERT_EQUAL(tsl_conv2d_select(&r16, ops_target()), TSL_CONV2D_BLOCKDIAG);
}

/* Blocks other than the host's lanes: x = 4 (NEON's), 8, 16 (AVX-512's) and twice the
 * host's lanes build and run here too (vectors wider than a register are split by
 * LLVM), x = 1 is plain NCHW. */
static void test_other_block_widths(void) {
  conv_case c = {1, 13, 11, 9, 10, 3, 3, 2, 1, 1, 0, 2, 1, 1, 1, 1, 1, 0, 0, false};
  const int64_t blocks[] = {1, 4, 8, 16, 2 * ops_lanes()};
  for (int i = 0; i < 5; i++) {
    conv_check_opts o = conv_opts(1, 700 + (uint64_t)i);
    o.block = blocks[i];
    CU_ASSERT(conv_check(&c, TSL_CONV2D_DIRECT, &o));
    CU_ASSERT(conv_check(&c, TSL_CONV2D_IM2COL, &o));
    conv_case dw = c;
    dw.K = dw.C;
    dw.groups = dw.C;
    CU_ASSERT(conv_check(&dw, TSL_CONV2D_DEPTHWISE, &o));
  }
}

/* Class 16: 1 vs N threads give identical bits, also with more threads than work. */
static void test_threads_identical(void) {
  conv_case c = {2, 16, 12, 12, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  conv_case tiny = {1, 3, 2, 2, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, false};
  const conv_case *layers[2] = {&c, &tiny};
  for (int l = 0; l < 2; l++) {
    const conv_case *cc = layers[l];
    int64_t n = cc->N * cc->K * (cc->H + cc->pt + cc->pb - cc->R + 1) * (cc->W + cc->pl + cc->pr - cc->S + 1);
    float *one = malloc(sizeof(float) * (size_t)n), *many = malloc(sizeof(float) * (size_t)n);
    conv_check_opts o = conv_opts(0, 800);
    o.out_nchw = one;
    o.threads = 1;
    CU_ASSERT(conv_check(cc, TSL_CONV2D_DIRECT, &o));
    o.out_nchw = many;
    o.threads = 4;
    CU_ASSERT(conv_check(cc, TSL_CONV2D_DIRECT, &o));
    CU_ASSERT(memcmp(one, many, sizeof(float) * (size_t)n) == 0);
    free(one);
    free(many);
  }
}

/* A 1x1 layer with one channel tile (K = 16: 1 or 2 blocks of lanes, one register tile
 * of channels) on 55 x 55 pixels (SqueezeNet's squeeze convs): n x kb.outer gives the
 * thread pool one iteration, so the pixel tiles' loop p.outer is the parallel loop
 * (fused with it when the pixel split is clean, on its own outside it when the split
 * leaves a tail); the result on 2 threads equals the reference and 1 thread's bits. */
static void test_gemm1x1_one_channel_tile_parallel_over_pixels(void) {
  conv_case c = {1, 40, 55, 55, 16, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, false};
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_conv2d_layer d = conv_case_layer(&c, ops_lanes());
  tsl_te_program *conv = NULL;
  tsl_schedule *sched = NULL;
  CU_ASSERT_EQUAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_GEMM_1X1, ops_target(), &conv, NULL), TSL_OK);
  if (conv) CU_ASSERT_EQUAL(tsl_conv2d_algo_schedule(conv, TSL_CONV2D_GEMM_1X1, ops_target(), &sched), TSL_OK);
  char *text = sched ? tsl_schedule_to_string(sched) : NULL;
  const char *par = text ? strstr(text, "parallel(") : NULL;
  const char *end = par ? strchr(par, ')') : NULL;
  const char *po = par ? strstr(par, "p.outer") : NULL;
  CU_ASSERT(par && end && po && po < end);
  if (!(par && end && po && po < end)) printf("\n  schedule:\n%s", text ? text : "(none)");
  free(text);
  tsl_schedule_free(sched);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  int64_t n = 16 * 55 * 55;
  float *one = malloc(sizeof(float) * (size_t)n), *two = malloc(sizeof(float) * (size_t)n);
  conv_check_opts o = conv_opts(0, 900);
  o.out_nchw = one;
  o.threads = 1;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_GEMM_1X1, &o));
  o.out_nchw = two;
  o.threads = 2;
  CU_ASSERT(conv_check(&c, TSL_CONV2D_GEMM_1X1, &o));
  CU_ASSERT(memcmp(one, two, sizeof(float) * (size_t)n) == 0);
  free(one);
  free(two);
}

void ops_tests_conv(CU_pSuite s) {
  CU_add_test(s, "test_direct_random_shapes", test_direct_random_shapes);
  CU_add_test(s, "test_im2col_random_shapes", test_im2col_random_shapes);
  CU_add_test(s, "test_gemm1x1_random_shapes", test_gemm1x1_random_shapes);
  CU_add_test(s, "test_even_kernels_and_kernel_equal_to_input", test_even_kernels_and_kernel_equal_to_input);
  CU_add_test(s, "test_dilation_regular_conv", test_dilation_regular_conv);
  CU_add_test(s, "test_epilogues_after_every_schedule", test_epilogues_after_every_schedule);
  CU_add_test(s, "test_blockdiag_group_widths", test_blockdiag_group_widths);
  CU_add_test(s, "test_other_block_widths", test_other_block_widths);
  CU_add_test(s, "test_threads_identical", test_threads_identical);
  CU_add_test(s, "test_gemm1x1_one_channel_tile_parallel_over_pixels", test_gemm1x1_one_channel_tile_parallel_over_pixels);
}
