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

static int suite_init(void) { return wino_host_jit_new(&jit); }

static int suite_clean(void) { return wino_jit_free(&jit); }

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
  CU_add_test(s, "test_prefetch_u_streaming_gemm_matches_reference", test_prefetch_u_streaming_gemm_matches_reference);
  CU_add_test(s, "test_partial_block_reduces_only_its_real_channels", test_partial_block_reduces_only_its_real_channels);
}
