/* First layers: convolutions over few input channels (groups 1, C = 1..5 padded to the
 * NCHW[x]c block), which tsl_conv2d_select sends to the grouped algorithm, where every
 * output lane reads the same input value (a broadcast) and the template reduces over
 * s (a loop), r and ci (unrolled) — ops/conv2d/depthwise_schedule.h. Each case runs the
 * default config and explicit ones (the other pad modes, the window not unrolled, other
 * tiles) at 1 and 2 threads against the naive reference (tests/ref/ref_ops2.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/conv_check.h"
#include "ops/ops_util.h"
#include "ops/conv2d/depthwise_schedule.h"

/* conv_case fields: N, C, H, W, K, R, S, sh, sw, pt, pl, pb, pr, dh, dw, groups, act, lo, hi,
 * residual */

static bool check_threads(const conv_case *c, const char *knobs, uint64_t seed) {
  bool ok = true;
  for (int threads = 1; threads <= 2; threads++) {
    conv_check_opts o = conv_opts(0, seed + (uint64_t)threads);
    o.threads = threads;
    o.knobs = knobs;
    o.skip_default = knobs != NULL;
    if (!conv_check(c, TSL_CONV2D_GROUPED, &o)) {
      printf("\n  first layer C=%lld K=%lld %lldx%lld s%lldx%lld knobs '%s' at %d threads failed\n", (long long)c->C,
             (long long)c->K, (long long)c->R, (long long)c->S, (long long)c->sh, (long long)c->sw,
             knobs ? knobs : "(default)", threads);
      ok = false;
    }
  }
  return ok;
}

/* The default picks the grouped algorithm for every case here (few true channels). */
static void check_case(const conv_case *c, uint64_t seed) {
  tsl_conv2d_layer d = conv_case_layer(c, ops_lanes());
  CU_ASSERT_EQUAL(tsl_conv2d_select(&d, ops_target()), TSL_CONV2D_GROUPED);
  CU_ASSERT(check_threads(c, NULL, seed));
}

/* ResNet-18's conv1 geometry on a small image: 7x7 stride 2, padding 3, 3 channels, and
 * 5 channels with K = 2.5 blocks (20 at 8 lanes, 40 at 16: the last output block is
 * half padding). */
static void test_first_layer_7x7_s2_default(void) {
  conv_case c = {1, 3, 30, 34, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, false};
  check_case(&c, 4000);
  conv_case k20 = {1, 5, 23, 19, 5 * ops_lanes() / 2, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 0, 0, 0, false};
  check_case(&k20, 4010);
}

/* MobileNetV2 / SqueezeNet first convs: 3x3 stride 2 padded 1 (guarded loads by default)
 * and unpadded; 1 channel with K = 12 */
static void test_first_layer_3x3_s2_default(void) {
  conv_case mb = {1, 3, 32, 30, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 2, 0.0, 6.0, false};
  check_case(&mb, 4100);
  conv_case sq = {1, 3, 33, 31, 64, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, false};
  check_case(&sq, 4110);
  conv_case c1 = {1, 1, 17, 21, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, false};
  check_case(&c1, 4120);
}

/* Stride 1 (neighbouring columns share input at other taps), asymmetric padding and
 * strides, a residual */
static void test_first_layer_stride1_asymmetric_padding(void) {
  conv_case s1 = {1, 3, 19, 23, 24, 3, 3, 1, 1, 0, 2, 1, 0, 1, 1, 1, 1, 0, 0, false};
  check_case(&s1, 4200);
  conv_case s7 = {1, 5, 16, 15, 20, 7, 7, 1, 1, 3, 1, 2, 3, 1, 1, 1, 0, 0, 0, false};
  check_case(&s7, 4210);
  conv_case mixed = {1, 3, 21, 26, 16, 7, 3, 2, 1, 2, 0, 3, 1, 1, 1, 1, 1, 0, 0, true};
  check_case(&mixed, 4220);
  conv_case c1 = {1, 1, 25, 18, 8, 7, 7, 2, 2, 3, 2, 1, 3, 1, 1, 1, 1, 0, 0, false};
  check_case(&c1, 4230);
}

/* Every pad mode, the window not unrolled and other register tiles (more channel
 * blocks than columns, several rows, a column tail) on a padded 7x7 and a 3x3 layer */
static void test_first_layer_explicit_configs(void) {
  static const char *const knobs[] = {
      "pad_mode=0", "pad_mode=1", "pad_mode=2", "unroll_kernel=0", "tile=40103", "tile=20206", "tile=30104,pad_mode=2",
      "loop_order=1,tile=10107",
  };
  conv_case c7 = {1, 3, 27, 25, 40, 7, 7, 2, 2, 3, 2, 3, 4, 1, 1, 1, 1, 0, 0, false};
  conv_case c3 = {1, 5, 20, 22, 24, 3, 3, 2, 1, 1, 0, 2, 1, 1, 1, 1, 2, -1.0, 1.0, false};
  for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
    CU_ASSERT(check_threads(&c7, knobs[i], 4300 + 10 * (uint64_t)i));
    CU_ASSERT(check_threads(&c3, knobs[i], 4400 + 10 * (uint64_t)i));
  }
}

/* A groups-1 conv with more channels than the first-layer order takes (CG = 12 > 8: the
 * grouped order ci, r, s), and with the window not unrolled */
static void test_first_layer_long_channel_loop(void) {
  conv_case c = {1, 12, 13, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
  CU_ASSERT(check_threads(&c, "pad_mode=1", 4500));
  CU_ASSERT(check_threads(&c, "unroll_kernel=0", 4510));
}

/* The broadcast schedule: s before r before ci in the conv's loop order, r and ci
 * unrolled, and the default reads the padding of a 3x3 window through guarded loads
 * (the padding stage inlined) but copies it for 7x7 */
static void test_first_layer_schedule_order(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  for (int i = 0; i < 2; i++) {
    conv_case c = i == 0 ? (conv_case){1, 3, 30, 30, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, false}
                         : (conv_case){1, 3, 30, 30, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, false};
    tsl_conv2d_layer d = conv_case_layer(&c, ops_lanes());
    tsl_te_program *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&d, TSL_CONV2D_GROUPED, ops_target(), &p, NULL), TSL_OK);
    tsl_depthwise_shape sh;
    CU_ASSERT_EQUAL_FATAL(tsl_depthwise_get_shape(p, &sh), TSL_OK);
    CU_ASSERT(sh.broadcast_input);
    CU_ASSERT_EQUAL(sh.CG, 3);
    tsl_schedule *s = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_depthwise_schedule(p, ops_target(), NULL, &s), TSL_OK);
    char *text = tsl_schedule_to_string(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "s, r, ci, "));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "unroll(conv, r)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "unroll(conv, ci)"));
    CU_ASSERT_PTR_NULL(strstr(text, "unroll(conv, s)"));
    bool inlined = strstr(text, "compute_inline(padded)") != NULL;
    CU_ASSERT_EQUAL(inlined, i == 1);
    free(text);
    tsl_schedule_free(s);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

void ops_tests_first_layer(CU_pSuite s) {
  CU_add_test(s, "test_first_layer_7x7_s2_default", test_first_layer_7x7_s2_default);
  CU_add_test(s, "test_first_layer_3x3_s2_default", test_first_layer_3x3_s2_default);
  CU_add_test(s, "test_first_layer_stride1_asymmetric_padding", test_first_layer_stride1_asymmetric_padding);
  CU_add_test(s, "test_first_layer_explicit_configs", test_first_layer_explicit_configs);
  CU_add_test(s, "test_first_layer_long_channel_loop", test_first_layer_long_channel_loop);
  CU_add_test(s, "test_first_layer_schedule_order", test_first_layer_schedule_order);
}
