/* Winograd F(m x m, 3 x 3) convolutions against the naive float64 direct convolution
 * (tests/ref): every m on odd shapes (outputs not multiples of m, channel counts 1, 3,
 * 9, 33 against the block of 8, batch > 1), every padding kind, the epilogues, random
 * template configs, threads; the workloads Winograd must decline (shared/cases C02,
 * class 4); the registry operators and the template interface.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "ref/ref_ops.h"
#include "runtime/module.h"
#include "target/target.h"
#include "winograd/wino_util.h"
#include "winograd/winograd_tests.h"

static tsl_jit *jit;

static int suite_init(void) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK) return 1;
  return tsl_jit_new(&t, &jit) != TSL_OK;
}

static int suite_clean(void) {
  tsl_jit_free(jit);
  jit = NULL;
  return 0;
}

static void check_cases(const wino_case *cases, int n, const tsl_winograd_knobs *knobs) {
  for (int i = 0; i < n; i++) {
    wino_result r = wino_check(jit, &cases[i], knobs, 100 + (uint64_t)i);
    CU_ASSERT(r.ok);
    CU_ASSERT(r.max_err <= tsl_winograd_error_bound(cases[i].m));
    CU_ASSERT(r.pad_channels_zero);
  }
}

/* classes 1-3: outputs not multiples of m or of the block, channels 1, 3, 9, 33 against
 * 8 lanes, batch > 1, non-square, outputs smaller than one tile */
static void test_every_m_matches_reference_on_odd_shapes(void) {
  static const wino_case cases[] = {
      /* N  C   H   W   K  pt pl pb pr m act */
      {1, 3, 9, 11, 5, 1, 1, 1, 1, 2, 0, false, 0, 0},
      {2, 9, 13, 7, 33, 1, 1, 1, 1, 2, 1, false, 0, 0},
      {1, 33, 10, 10, 9, 0, 0, 0, 0, 2, 0, false, 0, 0},
      {1, 1, 17, 19, 3, 1, 1, 1, 1, 4, 0, false, 0, 0},
      {3, 9, 6, 14, 1, 1, 1, 1, 1, 4, 1, false, 0, 0},
      {1, 33, 23, 9, 17, 0, 0, 0, 0, 4, 0, false, 0, 0},
      {1, 16, 4, 4, 16, 0, 0, 0, 0, 4, 0, false, 0, 0},
      {1, 3, 11, 16, 9, 1, 1, 1, 1, 6, 0, false, 0, 0},
      {2, 17, 9, 25, 8, 1, 1, 1, 1, 6, 1, false, 0, 0},
      {1, 8, 3, 3, 3, 0, 0, 0, 0, 6, 0, false, 0, 0},
  };
  check_cases(cases, (int)(sizeof cases / sizeof cases[0]), NULL);
}

/* class 6: asymmetric, one-sided, and padding >= the kernel, for every m */
static void test_asymmetric_one_sided_and_large_padding(void) {
  static const wino_case cases[] = {
      {1, 5, 12, 9, 7, 0, 2, 1, 0, 2, 0, false, 0, 0},
      {1, 5, 12, 9, 7, 2, 0, 0, 0, 4, 0, false, 0, 0},
      {1, 5, 12, 9, 7, 0, 0, 3, 3, 6, 0, false, 0, 0},
      {2, 3, 7, 8, 4, 3, 1, 0, 4, 4, 0, false, 0, 0},
      {1, 4, 5, 5, 6, 2, 2, 2, 2, 2, 1, false, 0, 0},
  };
  check_cases(cases, (int)(sizeof cases / sizeof cases[0]), NULL);
}

/* inputs smaller than the kernel made valid by padding; a 1x1 output */
static void test_tiny_inputs(void) {
  static const wino_case cases[] = {
      {1, 2, 1, 1, 3, 1, 1, 1, 1, 4, 0, false, 0, 0},
      {1, 9, 3, 3, 2, 0, 0, 0, 0, 2, 0, false, 0, 0},
      {2, 3, 2, 1, 5, 1, 1, 1, 2, 6, 0, false, 0, 0},
  };
  check_cases(cases, (int)(sizeof cases / sizeof cases[0]), NULL);
}

/* shared/cases C02: N1 C80 73x73 -> K192, 3x3, stride 1, pad 0: output 71x71, honoured
 * as given (71 is a multiple of no tile size); the class on every m. */
static void test_C02_winograd_pad0_73x73_honours_the_padding(void) {
  static const wino_case the_case = {1, 80, 73, 73, 192, 0, 0, 0, 0, 4, 0, false, 0, 0};
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_conv2d_layer w = {.N = 1, .C = 80, .H = 73, .W = 73, .K = 192, .R = 3, .S = 3, .stride_h = 1,
                        .stride_w = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
  tsl_te_program *conv = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_winograd_instantiate(&w, 4, NULL, &conv, NULL), TSL_OK);
  const tsl_buffer *ob = conv->outputs[0]->buf;
  CU_ASSERT(ob->ndim == 5 && ob->shape[0] == 1 && ob->shape[1] == 24 && ob->shape[2] == 71 && ob->shape[3] == 71);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  check_cases(&the_case, 1, NULL);
  static const wino_case cls[] = {
      {1, 8, 73, 73, 12, 0, 0, 0, 0, 2, 0, false, 0, 0},
      {1, 8, 73, 73, 12, 0, 0, 0, 0, 6, 0, false, 0, 0},
  };
  check_cases(cls, 2, NULL);
}

/* shared/cases class 4: stride, dilation, kernel size, groups Winograd does not support
 * are declined with a reason, never computed as something else */
static void test_C02_declines_stride_dilation_kernel_and_groups(void) {
  tsl_conv2d_layer ok = {.N = 1, .C = 16, .H = 14, .W = 14, .K = 16, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1,
                         .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .dilation_h = 1,
                         .dilation_w = 1, .groups = 1, .block = 8};
  CU_ASSERT_EQUAL(tsl_winograd_supports(&ok, 4), TSL_OK);
  static const struct {
    const char *what, *msg;
  } declines[] = {{"stride 2", "needs stride 1"},   {"stride 1x2", "needs stride 1"},
                  {"dilation 2", "needs dilation 1"}, {"kernel 5x5", "needs a 3x3 kernel"},
                  {"kernel 1x1", "needs a 3x3 kernel"}, {"kernel 3x1", "needs a 3x3 kernel"},
                  {"groups 2", "groups 2"},           {"m 3", "m is 2, 4 or 6"}};
  for (int i = 0; i < 8; i++) {
    tsl_conv2d_layer w = ok;
    int m = 4;
    switch (i) {
    case 0: w.stride_h = w.stride_w = 2; break;
    case 1: w.stride_w = 2; break;
    case 2: w.dilation_h = w.dilation_w = 2; break;
    case 3: w.R = w.S = 5; break;
    case 4: w.R = w.S = 1; break;
    case 5: w.S = 1; break;
    case 6: w.groups = 2; break;
    default: m = 3; break;
    }
    tsl_status st = tsl_winograd_supports(&w, m);
    if (st != TSL_ERR_UNSUPPORTED || !strstr(tsl_last_error(), declines[i].msg))
      printf("\n  %s: status %d, message '%s'\n", declines[i].what, st, tsl_last_error());
    CU_ASSERT_EQUAL(st, TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), declines[i].msg));
    if (i == 3) continue; /* 5x5 is F(4, 5) for the operators, below */
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_te_program dummy = {0}, *conv = &dummy, *wt = &dummy;
    CU_ASSERT_EQUAL(tsl_winograd_instantiate(&w, m, NULL, &conv, &wt), TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(conv);
    CU_ASSERT_PTR_NULL(wt);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
  /* the operators take 4x4 and 5x5 kernels at m = 2 and 4 (the conv algorithms do not),
   * and decline other sizes, non-square kernels and m = 6 for them */
  for (int r = 2; r <= 7; r++)
    for (int m = 2; m <= 6; m += 2) {
      tsl_conv2d_layer w = ok;
      w.R = w.S = r;
      bool want = r == 3 || ((r == 4 || r == 5) && m <= 4);
      tsl_status st = tsl_winograd_supports_kernel(&w, m);
      CU_ASSERT_EQUAL(st, want ? TSL_OK : TSL_ERR_UNSUPPORTED);
      if (st != TSL_OK)
        CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), r == 4 || r == 5 ? "is not provided" : "r = 3, 4 or 5"));
      CU_ASSERT_EQUAL(tsl_winograd_supports(&w, m), r == 3 ? TSL_OK : TSL_ERR_UNSUPPORTED);
    }
  tsl_conv2d_layer tall = ok;
  tall.R = 4;
  CU_ASSERT_EQUAL(tsl_winograd_supports_kernel(&tall, 2), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "kernel 4x3"));
  /* malformed workloads are invalid, not merely unsupported */
  tsl_conv2d_layer bad = ok;
  bad.pad_left = -1;
  CU_ASSERT_EQUAL(tsl_winograd_supports(&bad, 4), TSL_ERR_INVALID);
  bad = ok;
  bad.H = 1;
  bad.pad_top = bad.pad_bottom = 0;
  CU_ASSERT_EQUAL(tsl_winograd_supports(&bad, 4), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "larger than the padded input"));
  /* the registry operators refuse stride and dilation parameters other than 1 */
  const tsl_op_info *info = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("conv2d_winograd_f4", &info), TSL_OK);
  const char *params[] = {"stride_h", "dilation_w"};
  const char *msgs[] = {"needs stride 1", "needs dilation 1"};
  for (int i = 0; i < 2; i++) {
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_dsl_param_value pv = tsl_dsl_int_param(params[i], 2);
    tsl_te_program *p = NULL;
    CU_ASSERT_EQUAL(tsl_op_instantiate("conv2d_winograd_f4", info->example.ninputs, info->example.shapes,
                                       info->example.ndims, 1, &pv, &p),
                    TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), msgs[i]));
    CU_ASSERT_PTR_NULL(p);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
}

/* class 15: bias + relu, clip and the residual add after the Winograd schedule */
static void test_epilogues_bias_relu_clip_and_residual(void) {
  static const wino_case cases[] = {
      {1, 8, 10, 10, 8, 1, 1, 1, 1, 4, 1, false, 0, 0}, {1, 8, 10, 10, 8, 1, 1, 1, 1, 4, 2, false, 0, 0},
      {1, 5, 9, 7, 11, 1, 1, 1, 1, 2, 1, true, 0, 0},   {2, 8, 13, 13, 9, 1, 1, 1, 1, 6, 2, true, 0, 0},
      {1, 8, 12, 12, 8, 1, 1, 1, 1, 4, 0, true, 0, 0},
  };
  check_cases(cases, (int)(sizeof cases / sizeof cases[0]), NULL);
}

/* NCHW (block 1) and a block narrower than the target's vectors */
static void test_plain_nchw_and_narrow_blocks(void) {
  static const wino_case cases[] = {
      {1, 3, 9, 10, 5, 1, 1, 1, 1, 4, 1, false, 1, 0},
      {2, 5, 8, 8, 3, 0, 1, 0, 1, 2, 0, false, 1, 0},
      {1, 6, 11, 9, 10, 1, 1, 1, 1, 6, 0, false, 4, 0},
  };
  check_cases(cases, (int)(sizeof cases / sizeof cases[0]), NULL);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t lo, int64_t hi) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return lo + (int64_t)(rng % (uint64_t)(hi - lo + 1));
}

/* schedule fuzzing: random legal knob settings all give the reference result */
static void test_random_template_configs(void) {
  static const wino_case shapes[] = {
      {1, 9, 13, 11, 17, 1, 1, 1, 1, 2, 0, false, 0, 0},
      {2, 16, 10, 9, 12, 1, 0, 1, 2, 4, 1, false, 0, 0},
      {1, 8, 15, 17, 16, 0, 1, 1, 0, 6, 0, false, 0, 0},
  };
  const tsl_target *t = tsl_jit_target(jit);
  int64_t lanes = tsl_target_f32_lanes(t);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 3; i++) {
      const wino_case *c = &shapes[i];
      int64_t tiles = c->N * ((c->H + c->pt + c->pb - 3 + c->m) / c->m) * ((c->W + c->pl + c->pr - 3 + c->m) / c->m);
      tsl_winograd_knobs k;
      k.nr_tiles = rnd(1, tiles + 3);
      k.mr = rnd(1, 8);
      k.nr = lanes * rnd(1, 3);
      k.gemm_order = (int)rnd(0, 1);
      k.unroll_cx = rnd(0, 1);
      k.pad_at = (int)rnd(0, 2);
      k.row_buffers = rnd(0, 1);
      k.gemm_at_tiles = rnd(0, 1);
      k.parallel = (int)rnd(0, 2);
      wino_result r = wino_check(jit, c, &k, 7 + (uint64_t)round);
      CU_ASSERT(r.ok);
      CU_ASSERT(r.max_err <= tsl_winograd_error_bound(c->m));
      CU_ASSERT(r.pad_channels_zero);
    }
}

/* class 16: blocks on 2 threads give bit-identical results to 1 thread, also with more
 * threads than blocks, and so do output channels on the thread pool. K is two channel
 * blocks of the target's lanes (16 at 8 lanes, 32 at 16), so 3 threads outnumber them. */
static void test_parallel_blocks_equal_serial_bitwise(void) {
  int64_t lanes = tsl_target_f32_lanes(tsl_jit_target(jit));
  const wino_case c = {2, 16, 14, 14, 2 * lanes, 1, 1, 1, 1, 4, 1, false, 0, 0};
  tsl_winograd_knobs k = {.nr_tiles = 4, .mr = 6, .nr = 2 * lanes, .pad_at = TSL_WINOGRAD_PAD_BLOCK,
                          .row_buffers = true, .parallel = TSL_WINOGRAD_PAR_BLOCKS};
  wino_data d;
  wino_data_make(&c, 1.0, 5, &d);
  float *one = NULL, *two = NULL, *many = NULL;
  wino_result r1 = wino_run(jit, &c, &d, NULL, &k, 1, &one);
  wino_result r2 = wino_run(jit, &c, &d, NULL, &k, 2, &two);
  k.nr_tiles = 1000; /* one block per image: 2 blocks, 4 threads */
  wino_result r4 = wino_run(jit, &c, &d, NULL, &k, 4, &many);
  CU_ASSERT(r1.ok && r2.ok && r4.ok);
  CU_ASSERT(r1.max_err <= tsl_winograd_error_bound(4) && r4.max_err <= tsl_winograd_error_bound(4));
  /* the whole NCHW[x]c output: N x K/x blocks x OH x OW x x lanes */
  size_t bytes = sizeof(float) * (size_t)(c.N * (c.K / lanes) * d.OH * d.OW * lanes);
  CU_ASSERT_EQUAL(d.OH * d.OW, 14 * 14);
  if (one && two) CU_ASSERT(memcmp(one, two, bytes) == 0);
  /* other blocks, same arithmetic per tile: the same bits */
  if (one && many) CU_ASSERT(memcmp(one, many, bytes) == 0);
  /* output channels in parallel (nr_tiles 1000: one block per image; 2 threads split
   * its tiles, then the channels; the GEMM per block or per tile group; 3 threads on
   * fewer channel blocks) */
  for (int gat = 0; gat < 2; gat++) {
    tsl_winograd_knobs kc = k;
    kc.parallel = TSL_WINOGRAD_PAR_CHANNELS;
    kc.gemm_at_tiles = gat;
    kc.nr = lanes;
    float *ch = NULL;
    wino_result rc = wino_run(jit, &c, &d, NULL, &kc, 2 + gat, &ch);
    CU_ASSERT(rc.ok);
    if (one && ch) CU_ASSERT(memcmp(one, ch, bytes) == 0);
    free(ch);
  }
  free(one);
  free(two);
  free(many);
  wino_data_free(&d);
}

/* the kernel transform compiled with its template equals the interpreter's (float64) to
 * float32 rounding, zero padding included */
/* class 16: output channels on the thread pool with every other knob that changes the
 * loop nest (parts of a row per block, padding inline / per block / whole input, row
 * buffers off, t-outer GEMM order, GEMM per tile group), 4 channel blocks of the
 * target's lanes over 2 and 3 threads: bit-identical to 1 thread */
static void test_parallel_channels_configs_equal_serial_bitwise(void) {
  int64_t lanes = tsl_target_f32_lanes(tsl_jit_target(jit));
  wino_case c = {2, 12, 13, 15, 4 * lanes, 1, 0, 2, 1, 2, 1, true, 0, 0};
  wino_data d;
  wino_data_make(&c, 1.0, 17, &d);
  size_t bytes = sizeof(float) * (size_t)(c.N * (c.K / lanes) * d.OH * d.OW * lanes);
  static const struct {
    int64_t nr_tiles;
    int pad_at, gemm_order;
    bool row_buffers, gemm_at_tiles;
  } cfg[] = {
      {3, TSL_WINOGRAD_PAD_BLOCK, TSL_WINOGRAD_GEMM_K_OUTER, true, false},
      {1000, TSL_WINOGRAD_PAD_INLINE, TSL_WINOGRAD_GEMM_T_OUTER, false, false},
      {8, TSL_WINOGRAD_PAD_ROOT, TSL_WINOGRAD_GEMM_K_OUTER, false, true},
      {5, TSL_WINOGRAD_PAD_INLINE, TSL_WINOGRAD_GEMM_T_OUTER, true, true},
  };
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
    tsl_winograd_knobs k = {.nr_tiles = cfg[i].nr_tiles, .mr = 4, .nr = lanes, .gemm_order = cfg[i].gemm_order,
                            .pad_at = cfg[i].pad_at, .row_buffers = cfg[i].row_buffers,
                            .gemm_at_tiles = cfg[i].gemm_at_tiles, .parallel = TSL_WINOGRAD_PAR_NONE};
    float *one = NULL, *par = NULL;
    wino_result r1 = wino_run(jit, &c, &d, NULL, &k, 1, &one);
    CU_ASSERT(r1.ok && r1.max_err <= tsl_winograd_error_bound(2));
    k.parallel = TSL_WINOGRAD_PAR_CHANNELS;
    for (int threads = 2; threads <= 3; threads++) {
      wino_result rp = wino_run(jit, &c, &d, NULL, &k, threads, &par);
      CU_ASSERT(rp.ok);
      if (one && par) CU_ASSERT(memcmp(one, par, bytes) == 0);
      free(par);
      par = NULL;
    }
    free(one);
  }
  wino_data_free(&d);
}

static void test_weight_transform_kernel_matches_interpreter(void) {
  for (int m = 2; m <= 6; m += 2) {
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_conv2d_layer w = {.N = 1, .C = 9, .H = 8, .W = 8, .K = 13, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1,
                          .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
    tsl_te_program *wt = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_winograd_instantiate(&w, m, NULL, NULL, &wt), TSL_OK);
    /* U[e, nu, kb, c, kx]: K = 13 in 2 blocks of 8, C = 9 padded to 16 */
    int64_t a = m + 2, sw[4] = {13, 9, 3, 3}, su[5] = {a, a, 2, 16, 8};
    const tsl_buffer *ub = wt->outputs[0]->buf;
    CU_ASSERT(ub->ndim == 5 && ub->shape[2] == 2 && ub->shape[3] == 16 && ub->shape[4] == 8);
    tsl_tensor *tw = NULL, *ti = NULL, *tj = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 4, sw, &tw), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 5, su, &ti), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 5, su, &tj), TSL_OK);
    ref_fill_uniform(tw->data, 13 * 9 * 9, 31, -1.0f, 1.0f);
    CU_ASSERT_EQUAL(tsl_te_interpret(wt, (const tsl_tensor *const *)&tw, &ti), TSL_OK);
    tsl_schedule *s = NULL;
    tsl_module *mod = NULL;
    const tsl_kernel *k = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_winograd_weight_schedule(wt, tsl_jit_target(jit), &s), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_module_new(&mod), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_build(s, "winograd_weight_test", jit, mod, NULL, NULL), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(mod, "winograd_weight_test", &k), TSL_OK);
    tsl_tensor *args[2] = {tw, tj};
    CU_ASSERT_EQUAL(tsl_kernel_call_tensors(k, args, 2), TSL_OK);
    const float *x = ti->data, *y = tj->data;
    double worst = 0.0;
    bool pad_zero = true;
    for (int64_t e = 0; e < a * a; e++)
      for (int64_t c = 0; c < 16; c++)
        for (int64_t kk = 0; kk < 16; kk++) {
          int64_t i = ((e * 2 + kk / 8) * 16 + c) * 8 + kk % 8;
          double d = fabs((double)x[i] - (double)y[i]) / (1.0 + fabs((double)x[i]));
          if (d > worst || isnan(y[i])) worst = isnan(y[i]) ? INFINITY : d;
          if ((c >= 9 || kk >= 13) && (x[i] != 0.0f || y[i] != 0.0f)) pad_zero = false;
        }
    CU_ASSERT(worst < 1e-6);
    CU_ASSERT(pad_zero);
    tsl_module_free(mod);
    tsl_schedule_free(s);
    tsl_tensor_free(tw);
    tsl_tensor_free(ti);
    tsl_tensor_free(tj);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
}

/* the registry has the 21 operators (F(2/4/6, 3), F(2/4, 4), F(2/4, 5)); the generic template interface gives a space
 * whose default config is a point and whose apply() schedules; non-Winograd programs
 * are refused by name */
static void test_registry_ops_and_template_interface(void) {
  const char *names[] = {"conv2d_winograd_f2",       "conv2d_winograd_f2_add",    "winograd_weight_f2",
                         "conv2d_winograd_f4",       "conv2d_winograd_f4_add",    "winograd_weight_f4",
                         "conv2d_winograd_f6",       "conv2d_winograd_f6_add",    "winograd_weight_f6",
                         "conv2d_winograd_f2_r4",    "conv2d_winograd_f2_r4_add", "winograd_weight_f2_r4",
                         "conv2d_winograd_f4_r4",    "conv2d_winograd_f4_r4_add", "winograd_weight_f4_r4",
                         "conv2d_winograd_f2_r5",    "conv2d_winograd_f2_r5_add", "winograd_weight_f2_r5",
                         "conv2d_winograd_f4_r5",    "conv2d_winograd_f4_r5_add", "winograd_weight_f4_r5"};
  const tsl_target *t = tsl_jit_target(jit);
  for (int i = 0; i < 21; i++) {
    const tsl_op_info *info = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_op_lookup(names[i], &info), TSL_OK);
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    tsl_te_program *p = NULL;
    const tsl_op_example *ex = &info->example;
    CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate(names[i], ex->ninputs, ex->shapes, ex->ndims, ex->nparams, ex->params, &p),
                          TSL_OK);
    if (strncmp(names[i], "conv2d", 6) == 0) {
      const tsl_template *tpl = NULL;
      for (int k = 0; k < TSL_WINOGRAD_NTEMPLATES; k++)
        if (strcmp(tsl_winograd_templates[k].op, names[i]) == 0) tpl = &tsl_winograd_templates[k];
      CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
      tsl_config_space sp;
      tsl_config cfg;
      tsl_schedule *s = NULL;
      CU_ASSERT_EQUAL(tpl->space(p, t, &sp), TSL_OK);
      CU_ASSERT(tsl_space_size(&sp) > 100);
      CU_ASSERT_EQUAL(tpl->default_config(p, t, &sp, &cfg), TSL_OK);
      CU_ASSERT(tsl_config_index(&sp, &cfg) >= 0);
      CU_ASSERT_EQUAL(tpl->apply(p, t, &sp, &cfg, &s), TSL_OK);
      CU_ASSERT_PTR_NOT_NULL(s);
      tsl_schedule_free(s);
    } else {
      tsl_schedule *s = NULL;
      CU_ASSERT_EQUAL(tsl_winograd_weight_schedule(p, t, &s), TSL_OK);
      tsl_schedule_free(s);
    }
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  const int64_t a[2] = {8, 8}, b[2] = {8, 8};
  const int64_t *shapes[2] = {a, b};
  const int nd[2] = {2, 2};
  tsl_te_program *mm = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("matmul", 2, shapes, nd, 0, NULL, &mm), TSL_OK);
  tsl_winograd_shape sh;
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_winograd_program_shape(mm, &sh), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_winograd_schedule(mm, t, NULL, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(tsl_winograd_weight_schedule(mm, t, &s), TSL_ERR_INVALID);
  tsl_winograd_knobs k = {.nr_tiles = 1, .mr = 6, .nr = 0};
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "knob nr = 0"));
  k.nr = 16;
  k.mr = 0;
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_ERR_INVALID);
  k.mr = 6;
  k.pad_at = 3;
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_ERR_INVALID);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}
/* the weight-streaming GEMM (all tiles of a block in one register block, U prefetched
 * some reduction steps ahead, the prefetches clamped at U's end) against the reference:
 * F(2) and F(4), ahead 1 and 3 steps (past the last channel block too; the layers whose
 * last block is partial reduce in one loop of all their channels, so a step is all of
 * them), output channels serial and in parallel, a residual */
static void test_prefetch_u_streaming_gemm_matches_reference(void) {
  int64_t lanes = tsl_target_f32_lanes(tsl_jit_target(jit));
  const wino_case cases[] = {
      {1, 3 * lanes + 5, 7, 7, 4 * lanes, 1, 1, 1, 1, 2, 1, false, 0, 0},
      {1, 2 * lanes, 7, 7, 2 * lanes - 3, 1, 1, 1, 1, 2, 0, true, 0, 0},
      {2, lanes + 1, 9, 6, 2 * lanes, 1, 1, 1, 1, 4, 2, false, 0, 0},
  };
  static const int64_t aheads[] = {1, 3};
  for (size_t a = 0; a < sizeof aheads / sizeof aheads[0]; a++)
    for (int par = TSL_WINOGRAD_PAR_NONE; par <= TSL_WINOGRAD_PAR_CHANNELS; par += 2) {
      tsl_winograd_knobs k = {.nr_tiles = 16, .mr = 16, .nr = lanes, .gemm_order = TSL_WINOGRAD_GEMM_K_OUTER,
                              .pad_at = TSL_WINOGRAD_PAD_BLOCK, .row_buffers = true, .parallel = par,
                              .prefetch_u = aheads[a]};
      check_cases(cases, (int)(sizeof cases / sizeof cases[0]), &k);
    }
}

/* A layer whose last channel block is partial reduces over its C real channels only
 * (12 of 16 for a 3-channel conv's phases in one block, 20 of 32 in two): the blocks'
 * padding channels of the data are NaN here, and the output must still match the
 * reference (a product with them, even by U's zero padding, would be NaN). One block
 * and several, the default blocks and the GEMM at tile groups, with and without the
 * channel loop unrolled (one block; several keep their single loop rolled), every m and
 * kernel size of the registry. */
static void test_partial_block_reduces_only_its_real_channels(void) {
  int64_t lanes = tsl_target_f32_lanes(tsl_jit_target(jit));
  const wino_case cases[] = {
      {1, 3 * lanes / 4, 23, 21, 2 * lanes, 2, 2, 1, 1, 4, 1, false, 0, 4},
      {1, 3, 9, 11, lanes + 3, 1, 1, 1, 1, 2, 0, false, 0, 0},
      {2, lanes / 2 + 1, 13, 10, 7, 1, 1, 1, 1, 4, 2, true, 0, 0},
      {1, 5, 12, 9, lanes, 2, 2, 2, 2, 2, 1, false, 0, 5},
      {1, 1, 10, 10, 3, 1, 1, 1, 1, 6, 0, false, 0, 0},
      /* several blocks, the last partial: 1.25, 2 + 1 channel, 1.5 (the phases' 12
       * channels in two 8-lane blocks) */
      {1, lanes + lanes / 4, 14, 13, 2 * lanes, 1, 1, 1, 1, 4, 1, false, 0, 0},
      {1, 2 * lanes + 1, 9, 8, lanes - 1, 1, 1, 1, 1, 2, 0, true, 0, 0},
      {1, 12, 17, 15, 24, 2, 2, 1, 1, 4, 1, false, 8, 4},
  };
  tsl_winograd_knobs at_tiles = {.nr_tiles = 16, .mr = 4, .nr = lanes, .gemm_order = TSL_WINOGRAD_GEMM_K_OUTER,
                                 .pad_at = TSL_WINOGRAD_PAD_BLOCK, .row_buffers = true,
                                 .parallel = TSL_WINOGRAD_PAR_NONE, .gemm_at_tiles = true};
  tsl_winograd_knobs unrolled = at_tiles;
  unrolled.gemm_at_tiles = false;
  unrolled.unroll_cx = true;
  const tsl_winograd_knobs *knobs[] = {NULL, &at_tiles, &unrolled};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t k = 0; k < sizeof knobs / sizeof knobs[0]; k++) {
      const wino_case *c = &cases[i];
      char b[160];
      wino_data d;
      wino_data_make(c, 1.0, 300 + (uint64_t)i, &d);
      d.data_pad_fill = NAN;
      wino_result r = wino_run(jit, c, &d, NULL, knobs[k], 1, NULL);
      wino_data_free(&d);
      bool good = r.ok && r.max_err <= tsl_winograd_error_bound_r(c->m, wino_r(c)) && r.pad_channels_zero;
      if (!good) printf("\n  %s, knobs %zu: error %.3g with NaN in the padding channels\n", wino_case_str(c, b, sizeof b), k,
                        r.max_err);
      CU_ASSERT(good);
    }
}

/* The shape at hw x hw outputs (input hw x hw too, as the tests' 3x3 pad-1 layers). */
static tsl_winograd_shape at_size(tsl_winograd_shape s, int64_t hw) {
  s.H = s.W = s.OH = s.OW = hw;
  s.TH = s.TW = (hw + s.m - 1) / s.m;
  return s;
}

/* the default heuristic sizes blocks from the target's L1 and keeps register blocks in
 * the register file */
static void test_default_knobs_follow_the_target(void) {
  tsl_target avx2, avx512;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &avx512), TSL_OK);
  avx2.l1d_bytes = avx512.l1d_bytes = 32 * 1024;
  avx2.l2_bytes = avx512.l2_bytes = 512 * 1024;
  tsl_winograd_shape sh = {.m = 4, .alpha = 6, .N = 1, .CB = 8, .H = 56, .W = 56, .X = 8, .CP = 64, .KP = 64,
                           .OH = 56, .OW = 56, .TH = 14, .TW = 14};
  tsl_winograd_knobs k = tsl_winograd_default_knobs(&avx2, &sh);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_OK);
  CU_ASSERT_EQUAL(k.nr, 16);
  CU_ASSERT(k.mr * (k.nr / 8) + k.nr / 8 + 1 <= 16);
  CU_ASSERT(k.nr_tiles % sh.TW == 0 || k.nr_tiles < sh.TW);
  /* blocks from L2: V and M of a block within 2 x L2 (56 tiles, 4 rows here), whole
   * rows, a divisor of the 14 rows (4 + 4 + 4 + 2 would leave a tail in the parallel
   * block loop): 2 rows */
  CU_ASSERT_EQUAL(k.nr_tiles, 28);
  avx2.l2_bytes = 2 * 1024 * 1024;
  tsl_winograd_knobs k2 = tsl_winograd_default_knobs(&avx2, &sh);
  CU_ASSERT(k2.nr_tiles > k.nr_tiles && k2.nr_tiles % sh.TW == 0);
  /* the rows spread evenly over the blocks: with 1 MiB of L2 a block may hold 113 tiles
   * (8 rows), so 14 rows take two blocks, of 7 rows each (8 + 6 would leave one of two
   * threads idle for a row); SqueezeNet's 55x55 expand3x3 (16 -> 64 channels) may hold
   * 13 rows and gets 7 + 7, not 13 + 1 */
  avx2.l2_bytes = 1024 * 1024;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx2, &sh).nr_tiles, 7 * 14);
  tsl_winograd_shape sq = sh;
  sq.CB = 2;
  sq.CP = 16;
  sq.H = sq.W = sq.OH = sq.OW = 55;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx2, &sq).nr_tiles, 7 * 14);
  avx2.l2_bytes = 512 * 1024;
  /* a deep layer: one block, U streamed once */
  tsl_winograd_shape deep = {.m = 2, .alpha = 4, .N = 1, .CB = 64, .H = 7, .W = 7, .X = 8, .CP = 512, .KP = 512,
                             .OH = 7, .OW = 7, .TH = 4, .TW = 4};
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx2, &deep).nr_tiles, 16);
  tsl_winograd_knobs k3 = tsl_winograd_default_knobs(&avx512, &sh);
  sh.X = 16;
  sh.CB = 4;
  k3 = tsl_winograd_default_knobs(&avx512, &sh);
  CU_ASSERT_EQUAL(k3.nr, 32);
  CU_ASSERT(k3.mr * (k3.nr / 16) + k3.nr / 16 + 1 <= 32);
  /* SqueezeNet 1.0's 54x54 32 -> 128 layer, 1 MiB of L2: a block may hold 6 rows of the
   * 14; 5 + 5 + 4 left a tail (1.0 ms on 1 thread), 7 + 7 is clean and even (0.40 ms,
   * 0.21 on 2 threads): blocks in parallel */
  avx512.l2_bytes = 1024 * 1024;
  tsl_winograd_shape s54 = {.m = 4, .alpha = 6, .N = 1, .CB = 2, .H = 54, .W = 54, .X = 16, .CP = 32, .KP = 128,
                            .OH = 54, .OW = 54, .TH = 14, .TW = 14};
  tsl_winograd_knobs k54 = tsl_winograd_default_knobs(&avx512, &s54);
  CU_ASSERT_EQUAL(k54.nr_tiles, 7 * 14);
  CU_ASSERT_EQUAL(k54.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  /* its 27x27 layers: 7 rows of tiles, prime, one block; the output channels in parallel
   * (8 blocks of 16 lanes = 4 register blocks, in 2 parts); with 64 -> 256 channels a
   * block may hold 6 rows: no divisor of 7 fits, so the whole image (4 + 3 would leave a
   * tail) with the channels in parallel */
  tsl_winograd_shape s27 = at_size(s54, 27);
  tsl_winograd_knobs k27 = tsl_winograd_default_knobs(&avx512, &s27);
  CU_ASSERT_EQUAL(k27.nr_tiles, 49);
  CU_ASSERT_EQUAL(k27.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  s27.CB = 4;
  s27.CP = 64;
  s27.KP = 256;
  k27 = tsl_winograd_default_knobs(&avx512, &s27);
  CU_ASSERT_EQUAL(k27.nr_tiles, 49);
  CU_ASSERT_EQUAL(k27.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  /* 3 register blocks of output channels do not split in 2 parts: blocks stay parallel */
  s27.KP = 96;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &s27).parallel, TSL_WINOGRAD_PAR_BLOCKS);
  /* a weight-streaming layer (U 16 MiB > L2, 16 tiles): all tiles in one register block
   * of one vector of output channels, U prefetched ahead; at 16 registers the 16 tiles
   * do not fit one register block: the usual blocks, no prefetch */
  tsl_winograd_shape deep16 = deep;
  deep16.X = 16;
  deep16.CB = 32;
  tsl_winograd_knobs kd = tsl_winograd_default_knobs(&avx512, &deep16);
  CU_ASSERT_EQUAL(kd.nr_tiles, 16);
  CU_ASSERT_EQUAL(kd.mr, 16);
  CU_ASSERT_EQUAL(kd.nr, 16);
  CU_ASSERT(kd.prefetch_u > 0);
  CU_ASSERT_EQUAL(kd.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&kd), TSL_OK);
  tsl_winograd_knobs kd8 = tsl_winograd_default_knobs(&avx2, &deep);
  CU_ASSERT_EQUAL(kd8.prefetch_u, 0);
  CU_ASSERT(kd8.mr * (kd8.nr / 8) + kd8.nr / 8 + 1 <= 16);
  /* U within L2 (56x56 64 -> 64 F(4)): no prefetch */
  CU_ASSERT_EQUAL(k3.prefetch_u, 0);
  kd.prefetch_u = -1;
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&kd), TSL_ERR_INVALID);
  tsl_conv2d_layer small = {.N = 1, .C = 512, .H = 7, .W = 7, .K = 512, .R = 3, .S = 3, .stride_h = 1,
                            .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                            .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx2, &small), 2);
  small.H = small.W = 28;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx2, &small), 4);
}

/* x86-64-avx2 and x86-64-avx512 with an Intel Xeon's caches (L1d 48 KiB, L2 2 MiB), for
 * expected default knobs worked out by hand from those sizes. */
static void xeon_cache_targets(tsl_target *avx2, tsl_target *avx512) {
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", avx512), TSL_OK);
  avx2->l1d_bytes = avx512->l1d_bytes = 48 * 1024;
  avx2->l2_bytes = avx512->l2_bytes = 2 * 1024 * 1024;
}

/* Runs 16-lane default configs (the same vectors of output channels at the host's lanes)
 * on `threads` threads against the float64 reference of each case. */
static void check_default_configs(const wino_case *cases, const tsl_winograd_knobs *const *knobs, int n, int threads,
                                  uint64_t seed) {
  int64_t lanes = tsl_target_f32_lanes(tsl_jit_target(jit));
  for (int i = 0; i < n; i++) {
    tsl_winograd_knobs kk = *knobs[i];
    kk.nr = kk.nr / 16 * lanes > lanes ? kk.nr / 16 * lanes : lanes;
    wino_data d;
    wino_data_make(&cases[i], 1.0, seed + (uint64_t)i, &d);
    wino_result r = wino_run(jit, &cases[i], &d, NULL, &kk, threads, NULL);
    wino_data_free(&d);
    CU_ASSERT(r.ok);
    CU_ASSERT(r.max_err <= tsl_winograd_error_bound_r(cases[i].m, wino_r(&cases[i])));
    CU_ASSERT(r.pad_channels_zero);
  }
}

/* gemm_at_tiles by default at 16 lanes where the block's V and M exceed L2 and U stays
 * within half of it, with a register block whose M group (alpha^2 x mr x nr floats) is
 * within 3/4 of L1 and holds at least 8 accumulators, mr a divisor of the row's tiles
 * where one exists. Expected values worked out by hand from those sizes (L1d 48 KiB,
 * L2 2 MiB, an Intel Xeon's); then each default config is run against the float64
 * reference at the host's lanes. */
static void test_default_gemm_at_tiles_where_m_leaves_l2(void) {
  tsl_target avx2, avx512;
  xeon_cache_targets(&avx2, &avx512);
  /* ResNet-18's phase stem, F(4x4, 4x4): 28 x 28 tiles; a block of 7 rows holds 196
   * tiles x 49 x 80 floats = 3.1 MB > 2 MiB; U 49 x 16 x 64 floats = 200 KB. M group
   * 49 x mr x 32 floats within 36 KiB: mr <= 5; 8 accumulators of 2 vectors: mr >= 4;
   * 4 divides 28 */
  tsl_winograd_shape stem = {.m = 4, .alpha = 7, .N = 1, .CB = 1, .H = 115, .W = 115, .X = 16, .CP = 16, .C = 12,
                             .KP = 64, .OH = 112, .OW = 112, .TH = 28, .TW = 28};
  tsl_winograd_knobs k = tsl_winograd_default_knobs(&avx512, &stem);
  CU_ASSERT_EQUAL(k.nr_tiles, 196);
  CU_ASSERT(k.gemm_at_tiles);
  CU_ASSERT_EQUAL(k.mr, 4);
  CU_ASSERT_EQUAL(k.nr, 32);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_OK);
  /* at 8 lanes the FMAs hide M's round trip (measured): the default stays */
  tsl_winograd_shape stem8 = stem;
  stem8.X = 8;
  stem8.CB = 2;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx2, &stem8).gemm_at_tiles);
  /* an L1 too small for 4 tiles x 32 channels x 49 points: no such register block */
  avx512.l1d_bytes = 16 * 1024;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &stem).gemm_at_tiles);
  avx512.l1d_bytes = 48 * 1024;
  /* SqueezeNet 1.1's 55x55 16 -> 64 F(4x4): the whole image, 196 tiles x 36 x 80 floats
   * = 2.26 MB > 2 MiB; M group 36 x mr x 32 floats within 36 KiB: mr <= 8; 7 divides
   * the 14 tiles of a row (then 2 blocks of 7 rows for the threads, in that form) */
  tsl_winograd_shape fire = {.m = 4, .alpha = 6, .N = 1, .CB = 1, .H = 57, .W = 57, .X = 16, .CP = 16, .C = 16,
                             .KP = 64, .OH = 55, .OW = 55, .TH = 14, .TW = 14};
  tsl_winograd_knobs kf = tsl_winograd_default_knobs(&avx512, &fire);
  CU_ASSERT(kf.gemm_at_tiles);
  CU_ASSERT_EQUAL(kf.mr, 7);
  CU_ASSERT_EQUAL(kf.nr_tiles, 98);
  /* the same layer at 27x27 (49 tiles x 36 x 80 floats = 0.56 MB, within L2) and a deep
   * one (256 -> 256, U 9.4 MB, streamed): the GEMM per block */
  tsl_winograd_shape f27 = fire;
  f27.OH = f27.OW = 27;
  f27.TH = f27.TW = 7;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &f27).gemm_at_tiles);
  tsl_winograd_shape deep = {.m = 4, .alpha = 6, .N = 1, .CB = 16, .H = 16, .W = 16, .X = 16, .CP = 256, .C = 256,
                             .KP = 256, .OH = 14, .OW = 14, .TH = 4, .TW = 4};
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &deep).gemm_at_tiles);
  /* U between half of L2 and L2 (32 -> 128 at 54x54 with 1 MiB: U 36 x 32 x 128 floats =
   * 590 KB, blocks of 98 tiles x 36 x 160 floats = 2.3 MB): read once per group of mr
   * tiles it would leave L2, so the GEMM stays per block; with 2 MiB (U within half)
   * blocks of 7 rows (98 tiles, 2.26 MB, over L2) take the knob */
  tsl_winograd_shape s54 = {.m = 4, .alpha = 6, .N = 1, .CB = 2, .H = 56, .W = 56, .X = 16, .CP = 32, .C = 32,
                            .KP = 128, .OH = 54, .OW = 54, .TH = 14, .TW = 14};
  avx512.l2_bytes = 1024 * 1024;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &s54).gemm_at_tiles);
  avx512.l2_bytes = 2 * 1024 * 1024;
  CU_ASSERT(tsl_winograd_default_knobs(&avx512, &s54).gemm_at_tiles);
  /* the chosen configs compute the convolution: the fire layer (mr 7 of a 14-tile row)
   * and the stem's knobs on a smaller image whose 10-tile rows leave a tail of 2 */
  const wino_case cases[] = {{1, 16, 55, 55, 64, 1, 1, 1, 1, 4, 1, false, 0, 0},
                             {1, 12, 40, 40, 64, 2, 2, 1, 1, 4, 1, false, 0, 4}};
  const tsl_winograd_knobs *const knobs[] = {&kf, &k};
  check_default_configs(cases, knobs, 2, 1, 700);
}

/* A whole image that the cache rule made one block (N odd) goes to the threads as an even
 * number of blocks of whole rows, each of at least 32 tiles, when U is within L2: not as
 * output channels in 2 parts, each transforming the whole input again (docs/winograd.md,
 * "Blocks for the threads"). Expected values worked out by hand from the sizes (L1d 48
 * KiB, L2 2 MiB); then the split configs are run on 2 threads against the float64
 * reference at the host's lanes, one thread per block. */
static void test_default_splits_a_whole_image_for_the_threads(void) {
  tsl_target avx2, avx512;
  xeon_cache_targets(&avx2, &avx512);
  /* resnet18's 56x56 64 -> 64 F(4x4): a block may hold 4 MiB / (36 x 128 x 4 B) = 227
   * tiles, so the whole image (196); U 36 x 64 x 64 floats = 590 KB within L2: 14 rows
   * split as 7 + 7 (98 tiles each), the blocks in parallel; at 16 lanes the whole image's
   * V and M (3.6 MB) exceed L2, so the GEMM per group of mr = 7 tiles stays */
  tsl_winograd_shape r56 = {.m = 4, .alpha = 6, .N = 1, .CB = 4, .H = 56, .W = 56, .X = 16, .CP = 64, .KP = 64,
                            .OH = 56, .OW = 56, .TH = 14, .TW = 14};
  tsl_winograd_knobs k16 = tsl_winograd_default_knobs(&avx512, &r56);
  CU_ASSERT_EQUAL(k16.nr_tiles, 98);
  CU_ASSERT_EQUAL(k16.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  CU_ASSERT(k16.gemm_at_tiles);
  CU_ASSERT_EQUAL(k16.mr, 7);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k16), TSL_OK);
  tsl_winograd_shape r56x8 = r56;
  r56x8.X = 8;
  r56x8.CB = 8;
  tsl_winograd_knobs k8 = tsl_winograd_default_knobs(&avx2, &r56x8);
  CU_ASSERT_EQUAL(k8.nr_tiles, 98);
  CU_ASSERT_EQUAL(k8.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  CU_ASSERT_FALSE(k8.gemm_at_tiles);
  /* two images: one block each is already even; three: 7-row blocks (6 in all) */
  tsl_winograd_shape two = r56;
  two.N = 2;
  tsl_winograd_knobs k2 = tsl_winograd_default_knobs(&avx512, &two);
  CU_ASSERT_EQUAL(k2.nr_tiles, 196);
  CU_ASSERT_EQUAL(k2.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  two.N = 3;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &two).nr_tiles, 98);
  /* U over L2 (28x28 128 -> 128: U 2.4 MB): every thread would read all of it from L3;
   * 7 rows of tiles are prime anyway: the whole image, channels in 2 parts */
  tsl_winograd_shape r28 = {.m = 4, .alpha = 6, .N = 1, .CB = 8, .H = 28, .W = 28, .X = 16, .CP = 128, .KP = 128,
                            .OH = 28, .OW = 28, .TH = 7, .TW = 7};
  tsl_winograd_knobs kc = tsl_winograd_default_knobs(&avx512, &r28);
  CU_ASSERT_EQUAL(kc.nr_tiles, 49);
  CU_ASSERT_EQUAL(kc.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  /* the same 56x56 layer with 256 -> 256 channels (U 9.4 MB): no split for the threads;
   * 32x32 64 -> 64 (8 x 8 tiles): 4 + 4 rows of 32 tiles; 24x24 (6 x 6 tiles): 3 rows
   * would be 18 tiles, fewer than 32: the whole image */
  tsl_winograd_shape big = r56;
  big.CB = 16;
  big.CP = big.KP = 256;
  CU_ASSERT(tsl_winograd_default_knobs(&avx512, &big).nr_tiles != 98);
  tsl_winograd_shape s32 = at_size(r56, 32);
  tsl_winograd_knobs k32 = tsl_winograd_default_knobs(&avx512, &s32);
  CU_ASSERT_EQUAL(k32.nr_tiles, 32);
  CU_ASSERT_EQUAL(k32.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  tsl_winograd_shape s24 = at_size(r56, 24);
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &s24).nr_tiles, 36);
  /* the split configs compute the convolution on 2 threads (a block each); the 16-lane
   * one's register block at the host's lanes */
  const wino_case cases[] = {{1, 64, 56, 56, 64, 1, 1, 1, 1, 4, 1, true, 0, 0},
                             {3, 20, 32, 32, 32, 1, 1, 1, 1, 4, 2, false, 0, 0}};
  const tsl_winograd_knobs *const knobs[] = {&k16, &k32};
  check_default_configs(cases, knobs, 2, 2, 760);
}

/* The default m per layer against the layers' measured winners in models (docs/winograd.md
 * "m"): F(4) from 20x20 outputs; below, F(4) where its U streams under the FMAs (16
 * tiles in one register block of 32 registers) or stays small, F(2) where F(4)'s U comes
 * from memory outside that form or feeds few tiles. */
static void test_default_m_per_layer_at_8_and_16_lanes(void) {
  tsl_target avx2, avx512;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &avx512), TSL_OK);
  avx2.l2_bytes = 512 * 1024;
  avx512.l2_bytes = 1024 * 1024;
  const struct {
    int64_t C, K, HW;
    int m8, m16; /* measured winner at 8 lanes (block 8) and at 16 (block 16) */
  } cases[] = {
      {64, 64, 56, 4, 4},    /* resnet18 layer1 */
      {128, 128, 28, 4, 4},  /* resnet18 layer2 */
      {256, 256, 14, 2, 4},  /* resnet18 layer3: U 9.4 MB streamed in F(4)'s 16-tile form at 16 lanes only */
      {512, 512, 7, 2, 2},   /* resnet18 layer4: F(4)'s U 37.7 MB feeds 4 tiles */
      {48, 192, 13, 4, 4},   /* SqueezeNet 1.1 features.9/10: F(4)'s U 1.3 MB, within 4 x L2 */
      {64, 256, 13, 2, 4},   /* SqueezeNet features.11/12 (1.0: features.12): U 2.4 MB, within
                                4 x 1 MiB at 16 lanes, not 4 x 512 KiB at 8 */
      {256, 256, 12, 2, 2},  /* 9 F(4) tiles (12 -> 12): U 9.4 MB neither small nor fed 16 tiles */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_conv2d_layer l = {.N = 1, .C = cases[i].C, .H = cases[i].HW, .W = cases[i].HW, .K = cases[i].K, .R = 3,
                          .S = 3, .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
                          .pad_right = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
    int m8 = tsl_winograd_default_m(&avx2, &l);
    l.block = 16;
    int m16 = tsl_winograd_default_m(&avx512, &l);
    if (m8 != cases[i].m8 || m16 != cases[i].m16)
      fprintf(stderr, "\n  %lld -> %lld at %lldx%lld: m %d / %d at 8 / 16 lanes, want %d / %d\n",
              (long long)cases[i].C, (long long)cases[i].K, (long long)cases[i].HW, (long long)cases[i].HW, m8,
              m16, cases[i].m8, cases[i].m16);
    CU_ASSERT_EQUAL(m8, cases[i].m8);
    CU_ASSERT_EQUAL(m16, cases[i].m16);
  }
  /* F(4) is never chosen below 20x20 where it does no fewer multiplies: 5x5 outputs are
   * 9 F(2) tiles (144 multiplies a channel pair) against 4 F(4) tiles (144) */
  tsl_conv2d_layer tiny = {.N = 1, .C = 16, .H = 5, .W = 5, .K = 16, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1,
                           .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .dilation_h = 1,
                           .dilation_w = 1, .groups = 1, .block = 16};
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx512, &tiny), 2);
  /* the same layer in a batch of 2, non-square (14x13), and as plain NCHW (block 1: no
   * stream form, U not small): F(4) stays where its stream form or small U holds */
  tsl_conv2d_layer l3 = {.N = 2, .C = 256, .H = 14, .W = 13, .K = 256, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1,
                         .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .dilation_h = 1,
                         .dilation_w = 1, .groups = 1, .block = 16};
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx512, &l3), 4);
  l3.block = 1;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx512, &l3), 2);
  /* measured on x86-64 only: armv8 (32 registers, 4 lanes) and no target keep F(2) below
   * 20x20, F(4) above */
  tsl_target arm;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &arm), TSL_OK);
  l3.block = 4;
  l3.N = 1;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&arm, &l3), 2);
  CU_ASSERT_EQUAL(tsl_winograd_default_m(NULL, &l3), 2);
  l3.H = l3.W = 28;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&arm, &l3), 4);
}

/* The shape the default-m rule reads off a layer (tsl_winograd_layer_shape) is the one
 * the template reads off the instantiated program (tsl_winograd_program_shape): odd and
 * non-square sizes, channels that do not fill their blocks, a batch, blocks 1, 4, 8, 16. */
static void test_layer_shape_is_the_program_shape(void) {
  /* reduced: the GEMM's input channels (a partial last block: the real ones; whole
   * blocks: all CP) */
  static const struct {
    int64_t N, C, H, W, K, block, reduced;
  } cases[] = {{1, 256, 14, 14, 256, 16, 256}, {2, 48, 13, 11, 192, 8, 48}, {1, 20, 9, 17, 36, 16, 20},
               {3, 8, 7, 5, 12, 4, 8},       {1, 5, 10, 6, 7, 1, 5},      {1, 12, 11, 9, 20, 16, 12},
               {2, 3, 7, 9, 8, 8, 3},        {1, 12, 9, 9, 16, 8, 12},    {1, 36, 7, 7, 36, 16, 36}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int m = 2; m <= 6; m += 2) {
      tsl_conv2d_layer l = {.N = cases[i].N, .C = cases[i].C, .H = cases[i].H, .W = cases[i].W, .K = cases[i].K,
                            .R = 3, .S = 3, .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1,
                            .pad_bottom = 1, .pad_right = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1,
                            .block = cases[i].block};
      tsl_arena *arena = tsl_arena_new();
      tsl_arena *prev = tsl_arena_set_current(arena);
      tsl_te_program *conv = NULL;
      tsl_winograd_shape got, want;
      CU_ASSERT_EQUAL_FATAL(tsl_winograd_instantiate(&l, m, NULL, &conv, NULL), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_winograd_program_shape(conv, &want), TSL_OK);
      got = tsl_winograd_layer_shape(&l, m);
      CU_ASSERT_EQUAL(got.m, want.m);
      CU_ASSERT_EQUAL(got.alpha, want.alpha);
      CU_ASSERT_EQUAL(want.C, cases[i].reduced);
      const int64_t g[] = {got.N, got.CB, got.H, got.W, got.X, got.CP, got.KP, got.OH, got.OW, got.TH, got.TW, got.C};
      const int64_t w[] = {want.N,  want.CB, want.H,  want.W,  want.X,  want.CP,
                           want.KP, want.OH, want.OW, want.TH, want.TW, want.C};
      for (size_t f = 0; f < sizeof g / sizeof g[0]; f++) CU_ASSERT_EQUAL(g[f], w[f]);
      tsl_arena_set_current(prev);
      tsl_arena_free(arena);
    }
}

void tsl_tests_winograd_conv(void) {
  CU_pSuite s = CU_add_suite("winograd_conv", suite_init, suite_clean);
  CU_add_test(s, "test_every_m_matches_reference_on_odd_shapes", test_every_m_matches_reference_on_odd_shapes);
  CU_add_test(s, "test_default_m_per_layer_at_8_and_16_lanes", test_default_m_per_layer_at_8_and_16_lanes);
  CU_add_test(s, "test_layer_shape_is_the_program_shape", test_layer_shape_is_the_program_shape);
  CU_add_test(s, "test_asymmetric_one_sided_and_large_padding", test_asymmetric_one_sided_and_large_padding);
  CU_add_test(s, "test_tiny_inputs", test_tiny_inputs);
  CU_add_test(s, "test_C02_winograd_pad0_73x73_honours_the_padding", test_C02_winograd_pad0_73x73_honours_the_padding);
  CU_add_test(s, "test_C02_declines_stride_dilation_kernel_and_groups",
              test_C02_declines_stride_dilation_kernel_and_groups);
  CU_add_test(s, "test_epilogues_bias_relu_clip_and_residual", test_epilogues_bias_relu_clip_and_residual);
  CU_add_test(s, "test_plain_nchw_and_narrow_blocks", test_plain_nchw_and_narrow_blocks);
  CU_add_test(s, "test_random_template_configs", test_random_template_configs);
  CU_add_test(s, "test_parallel_blocks_equal_serial_bitwise", test_parallel_blocks_equal_serial_bitwise);
  CU_add_test(s, "test_parallel_channels_configs_equal_serial_bitwise", test_parallel_channels_configs_equal_serial_bitwise);
  CU_add_test(s, "test_weight_transform_kernel_matches_interpreter", test_weight_transform_kernel_matches_interpreter);
  CU_add_test(s, "test_registry_ops_and_template_interface", test_registry_ops_and_template_interface);
  CU_add_test(s, "test_default_knobs_follow_the_target", test_default_knobs_follow_the_target);
  CU_add_test(s, "test_default_gemm_at_tiles_where_m_leaves_l2", test_default_gemm_at_tiles_where_m_leaves_l2);
  CU_add_test(s, "test_default_splits_a_whole_image_for_the_threads",
              test_default_splits_a_whole_image_for_the_threads);
  CU_add_test(s, "test_prefetch_u_streaming_gemm_matches_reference", test_prefetch_u_streaming_gemm_matches_reference);
  CU_add_test(s, "test_partial_block_reduces_only_its_real_channels", test_partial_block_reduces_only_its_real_channels);
}
