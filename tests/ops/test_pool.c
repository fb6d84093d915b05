/* Pooling in NCHW[x]c against the naive references of tests/ref/ref_nn.h (written for
 * the ONNX importer, independently of these operators): random shapes and configs,
 * shared/cases C07 (ceil_mode windows) and C08 (NaN in max pool) with their classes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/ops_util.h"
#include "ref/ref_nn.h"
#include "ref/ref_ops2.h"
#include "ops/nn/pool_schedule.h"

typedef struct pool_case {
  int64_t N, C, H, W, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool ceil_mode, count_include_pad;
} pool_case;

/* Runs max (is_max) or avg pooling on NCHW data through the op with block x: the
 * default config and nrandom random ones (plus `knobs` when set), each compared with
 * the reference (max: bit-exact, NaN where NaN; avg: 1e-6 relative). */
static bool pool_check(const pool_case *c, bool is_max, int64_t x, const float *data, int nrandom, uint64_t seed,
                       const char *knobs) {
  ref_nn_window win = {c->N, c->C, c->H, c->W, c->kh, c->kw, c->sh, c->sw, c->pt, c->pl, c->pb, c->pr,
                       is_max ? c->dh : 1, is_max ? c->dw : 1, 0, 0};
  win.oh = ref_nn_window_out(c->H, c->pt, c->pb, c->kh, c->sh, win.dil_h, c->ceil_mode);
  win.ow = ref_nn_window_out(c->W, c->pl, c->pr, c->kw, c->sw, win.dil_w, c->ceil_mode);
  int64_t nout = c->N * c->C * win.oh * win.ow, CB = (c->C + x - 1) / x;
  float *ref = malloc(sizeof(float) * (size_t)nout), *nchw = malloc(sizeof(float) * (size_t)nout);
  if (is_max) ref_nn_maxpool2d(&win, data, ref);
  else ref_nn_avgpool2d(&win, data, c->count_include_pad, ref);
  double *want = malloc(sizeof(double) * (size_t)nout);
  for (int64_t i = 0; i < nout; i++) want[i] = ref[i];

  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int64_t shape[5] = {c->N, CB, c->H, c->W, x};
  const int64_t *shapes[1] = {shape};
  int ndims[1] = {5};
  tsl_dsl_param_value p[16];
  int np = 0;
  p[np++] = tsl_dsl_int_param("kernel_h", c->kh);
  p[np++] = tsl_dsl_int_param("kernel_w", c->kw);
  p[np++] = tsl_dsl_int_param("stride_h", c->sh);
  p[np++] = tsl_dsl_int_param("stride_w", c->sw);
  p[np++] = tsl_dsl_int_param("pad_top", c->pt);
  p[np++] = tsl_dsl_int_param("pad_left", c->pl);
  p[np++] = tsl_dsl_int_param("pad_bottom", c->pb);
  p[np++] = tsl_dsl_int_param("pad_right", c->pr);
  p[np++] = tsl_dsl_int_param("ceil_mode", c->ceil_mode);
  if (is_max) {
    p[np++] = tsl_dsl_int_param("dilation_h", c->dh);
    p[np++] = tsl_dsl_int_param("dilation_w", c->dw);
  } else {
    p[np++] = tsl_dsl_int_param("count_include_pad", c->count_include_pad);
  }
  const char *op = is_max ? "max_pool2d_nchwc" : "avg_pool2d_nchwc";
  tsl_te_program *prog = NULL;
  bool ok = true;
  if (tsl_op_instantiate(op, 1, shapes, ndims, np, p, &prog) != TSL_OK) {
    printf("\n  %s: %s\n", op, tsl_last_error());
    ok = false;
  }
  if (ok) {
    const tsl_buffer *ob = prog->outputs[0]->buf;
    ok = ob->shape[2] == win.oh && ob->shape[3] == win.ow;
    if (!ok)
      printf("\n  %s: output %lldx%lld, reference %lldx%lld\n", op, (long long)ob->shape[2], (long long)ob->shape[3],
             (long long)win.oh, (long long)win.ow);
  }
  float *in = ok ? ops_alloc(c->N * CB * c->H * c->W * x) : NULL;
  float *out = ok ? ops_alloc(c->N * CB * win.oh * win.ow * x) : NULL;
  if (ok) ref2_to_nchwc(data, c->N, c->C, c->H, c->W, x, 0.0f, in);
  const tsl_template *tpl = ok ? ops_template(op, NULL) : NULL;
  tsl_config cfgs[17];
  int ncfg = 0;
  if (tpl) ncfg = ops_random_configs(tpl, prog, seed, nrandom, 24, cfgs);
  for (int i = -1; ok && i < ncfg + (knobs ? 1 : 0); i++) {
    tsl_schedule *s = NULL;
    if (i < 0) {
      if (tsl_pool_schedule(prog, ops_target(), NULL, &s) != TSL_OK) printf("\n  %s: %s\n", op, tsl_last_error());
    } else if (i < ncfg) {
      s = ops_schedule_config(tpl, prog, &cfgs[i]);
    } else {
      tsl_config cfg;
      s = ops_config_with(tpl, prog, knobs, &cfg) ? ops_schedule_config(tpl, prog, &cfg) : NULL;
    }
    if (!s) {
      ok = false;
      break;
    }
    for (int64_t e = 0; e < c->N * CB * win.oh * win.ow * x; e++) out[e] = 12345.0f;
    float *bufs[2] = {in, out};
    ok = ops_build_run(s, op, bufs) && ops_check_guard(in) && ops_check_guard(out);
    if (ok) {
      ref2_from_nchwc(out, c->N, c->C, win.oh, win.ow, x, nchw);
      double err = ops_rel_error(nchw, want, nout);
      bool exact = true;
      for (int64_t e = 0; is_max && e < nout; e++)
        exact = exact && (isnan(nchw[e]) ? isnan(ref[e]) : nchw[e] == ref[e]);
      if (!(err <= 1e-6) || !exact) {
        printf("\n  %s (config %d) N%lld C%lld %lldx%lld k%lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld ceil %d cip %d x%lld: "
               "error %g%s\n",
               op, i, (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->kh,
               (long long)c->kw, (long long)c->sh, (long long)c->sw, (long long)c->pt, (long long)c->pl,
               (long long)c->pb, (long long)c->pr, c->ceil_mode, c->count_include_pad, (long long)x, err,
               exact ? "" : " (not bit-exact)");
        ok = false;
      }
    }
    tsl_schedule_free(s);
  }
  ops_free(in);
  ops_free(out);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  free(ref);
  free(nchw);
  free(want);
  return ok;
}

static float *random_data(const pool_case *c, uint64_t seed) {
  int64_t n = c->N * c->C * c->H * c->W;
  float *d = malloc(sizeof(float) * (size_t)n);
  ops_fill(d, n, seed, -2.0f, 2.0f);
  return d;
}

static void test_max_avg_random_shapes(void) {
  static const pool_case cases[] = {
      {1, 13, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false},
      {2, 5, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, true, false},
      {1, 16, 13, 7, 3, 2, 1, 2, 0, 1, 1, 0, 1, 1, true, true},
      {1, 3, 15, 15, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false}, /* SqueezeNet's 3x3 s2 ceil */
      {1, 9, 12, 10, 5, 4, 3, 3, 2, 2, 2, 2, 1, 1, false, true},
  };
  /* the host's lanes, plain, NEON's 4 and twice the host's (wider than a register) */
  const int64_t blocks[] = {0, 1, 4, 2 * ops_lanes()};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    float *d = random_data(&cases[i], 40 + i);
    int64_t x = blocks[i % 4] ? blocks[i % 4] : ops_lanes();
    CU_ASSERT(pool_check(&cases[i], true, x, d, 2, 70 + i, NULL));
    CU_ASSERT(pool_check(&cases[i], false, x, d, 2, 80 + i, NULL));
    free(d);
  }
  pool_case dil = {1, 6, 11, 11, 3, 3, 1, 2, 2, 2, 2, 2, 2, 3, false, false};
  float *d = random_data(&dil, 90);
  CU_ASSERT(pool_check(&dil, true, ops_lanes(), d, 1, 91, NULL));
  free(d);
}

/* C07: avg pool on 17x17, window 2, stride 2, pad 1, ceil_mode on, count_include_pad on:
 * a 9x9 output whose last window starts inside the input or the top/left padding. The
 * class: ceil_mode with and without padding, count_include_pad on and off, windows that
 * lie wholly in the padding (padding >= window), for max too. */
static void test_C07_avg_pool_ceil_mode(void) {
  pool_case c = {1, 3, 17, 17, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, true, true};
  CU_ASSERT_EQUAL(ref_nn_window_out(17, 1, 1, 2, 2, 1, true), 9);
  float *d = random_data(&c, 100);
  CU_ASSERT(pool_check(&c, false, ops_lanes(), d, 1, 101, NULL));
  c.count_include_pad = false;
  CU_ASSERT(pool_check(&c, false, ops_lanes(), d, 1, 102, NULL));
  CU_ASSERT(pool_check(&c, true, ops_lanes(), d, 1, 103, NULL));
  free(d);
  static const pool_case cls[] = {
      {1, 5, 10, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, false},  /* ceil without padding: overhang */
      {1, 5, 10, 10, 3, 3, 2, 2, 0, 0, 0, 0, 1, 1, true, true},
      {1, 4, 6, 6, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, false, false},   /* all-padding windows (pad = window) */
      {1, 4, 6, 6, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, false, true},
      {1, 4, 5, 7, 3, 2, 3, 3, 3, 0, 1, 3, 1, 1, true, false},    /* pad >= window, asymmetric, ceil */
      {1, 4, 5, 7, 3, 2, 3, 3, 3, 0, 1, 3, 1, 1, true, true},
  };
  for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
    float *dd = random_data(&cls[i], 110 + i);
    CU_ASSERT(pool_check(&cls[i], false, ops_lanes(), dd, 1, 120 + i, NULL));
    CU_ASSERT(pool_check(&cls[i], true, ops_lanes(), dd, 1, 130 + i, NULL));
    free(dd);
  }
}

/* C08: a NaN at the first, a middle and the last position of a window, and an all-NaN
 * window, in max pooling with channel counts on both sides of the vector width (lanes
 * - 3, lanes, lanes + 5: 5, 8, 13 with AVX2, 13, 16, 21 with AVX-512), and in plain NCHW with the columns vectorized by 8 over a width of 13 (vector
 * body and masked tail): NaN for every window holding a NaN, never a finite value; +inf
 * and -inf in windows too. */
static void test_C08_nan_in_max_pool(void) {
  const int64_t channels[] = {ops_lanes() - 3, ops_lanes(), ops_lanes() + 5};
  for (int ci = 0; ci < 3; ci++) {
    pool_case c = {1, channels[ci], 9, 9, 3, 3, 3, 3, 0, 0, 0, 0, 1, 1, false, false};
    float *d = random_data(&c, 200 + (uint64_t)ci);
    int64_t plane = c.H * c.W;
    for (int64_t ch = 0; ch < c.C; ch++) {
      float *p = d + ch * plane;
      p[0 * 9 + 0] = NAN;      /* window (0,0): first position */
      p[1 * 9 + 4] = NAN;      /* window (0,1): middle */
      p[2 * 9 + 8] = NAN;      /* window (0,2): last */
      for (int r = 3; r < 6; r++)
        for (int s = 3; s < 6; s++) p[r * 9 + s] = NAN; /* window (1,1): all NaN */
      p[6 * 9 + 0] = INFINITY;  /* window (2,0): +inf wins */
      p[7 * 9 + 4] = -INFINITY; /* window (2,1): -inf loses */
    }
    CU_ASSERT(pool_check(&c, true, ops_lanes(), d, 2, 210 + (uint64_t)ci, NULL));
    free(d);
  }
  pool_case row = {1, 2, 3, 15, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, false, false}; /* 13 output columns */
  float *d = random_data(&row, 220);
  for (int64_t ch = 0; ch < 2; ch++) {
    d[ch * 45 + 1 * 15 + 0] = NAN;  /* column 0 (vector body) */
    d[ch * 45 + 0 * 15 + 9] = NAN;  /* columns 7..9 */
    d[ch * 45 + 2 * 15 + 14] = NAN; /* column 12 (the tail) */
  }
  CU_ASSERT(pool_check(&row, true, 1, d, 0, 221, "ow_block=8"));
  CU_ASSERT(pool_check(&row, true, 1, d, 0, 222, NULL));
  free(d);
}

/* Class 11 for average pooling: +inf in a window gives +inf, -inf gives -inf, both give
 * NaN, a NaN gives NaN (with count_include_pad on and off, padded windows included), the
 * same in the vector body and the masked tail of plain NCHW rows vectorized by 8. */
static void test_inf_and_nan_in_avg_pool_windows(void) {
  pool_case c = {1, 5, 6, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false}; /* 6 x 15 outputs */
  float *d = random_data(&c, 230);
  for (int64_t ch = 0; ch < c.C; ch++) {
    float *p = d + ch * c.H * c.W;
    p[0 * 15 + 0] = INFINITY;   /* corner windows (in the padding too) */
    p[0 * 15 + 14] = -INFINITY; /* the last columns (the tail) */
    p[3 * 15 + 6] = INFINITY;   /* +inf and -inf in overlapping windows: NaN where both */
    p[4 * 15 + 7] = -INFINITY;
    p[5 * 15 + 11] = NAN;
  }
  for (int cip = 0; cip <= 1; cip++) {
    c.count_include_pad = cip;
    CU_ASSERT(pool_check(&c, false, ops_lanes(), d, 1, 231 + (uint64_t)cip, NULL));
    CU_ASSERT(pool_check(&c, false, 1, d, 0, 233 + (uint64_t)cip, "ow_block=8"));
  }
  CU_ASSERT(pool_check(&c, true, 1, d, 0, 235, "ow_block=8"));
  free(d);
}

/* Strides larger than the window, a 1x1 input (every window but one tap in the
 * padding), a window as large as the padded input (one output), batch 2. */
static void test_pool_stride_gt_window_1x1_input_and_whole_window(void) {
  static const pool_case cls[] = {
      {2, 7, 11, 13, 2, 2, 3, 4, 0, 1, 1, 0, 1, 1, false, false}, /* stride > window */
      {1, 9, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false},   /* 1x1 input, pad 1 */
      {2, 9, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, true},
      {1, 3, 5, 6, 7, 8, 1, 1, 1, 1, 1, 1, 1, 1, false, true},    /* the window is the padded input */
      {1, 3, 5, 6, 7, 8, 1, 1, 1, 1, 1, 1, 1, 1, false, false},
  };
  for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
    float *d = random_data(&cls[i], 240 + i);
    CU_ASSERT(pool_check(&cls[i], false, ops_lanes(), d, 1, 250 + i, NULL));
    CU_ASSERT(pool_check(&cls[i], true, ops_lanes(), d, 1, 260 + i, NULL));
    free(d);
  }
}

static void test_global_avg_pool(void) {
  static const int64_t dims[][4] = {{1, 13, 7, 7}, {2, 8, 1, 1}, {1, 3, 13, 9}};
  for (int i = 0; i < 3; i++) {
    int64_t N = dims[i][0], C = dims[i][1], H = dims[i][2], W = dims[i][3], x = ops_lanes(), CB = (C + x - 1) / x;
    float *d = malloc(sizeof(float) * (size_t)(N * C * H * W)), *ref = malloc(sizeof(float) * (size_t)(N * C));
    ops_fill(d, N * C * H * W, 300 + (uint64_t)i, -1.0f, 1.0f);
    ref_nn_mean_inner(d, N * C, H * W, ref);
    tsl_arena *arena = tsl_arena_new();
    tsl_arena *prev = tsl_arena_set_current(arena);
    int64_t shape[5] = {N, CB, H, W, x};
    const int64_t *shapes[1] = {shape};
    int ndims[1] = {5};
    tsl_te_program *prog = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("global_avg_pool2d_nchwc", 1, shapes, ndims, 0, NULL, &prog), TSL_OK);
    float *in = ops_alloc(N * CB * H * W * x), *out = ops_alloc(N * CB * x);
    ref2_to_nchwc(d, N, C, H, W, x, 0.0f, in);
    tsl_schedule *s = NULL;
    CU_ASSERT_EQUAL(tsl_pool_schedule(prog, ops_target(), NULL, &s), TSL_OK);
    float *bufs[2] = {in, out};
    CU_ASSERT(s && ops_build_run(s, "global_avg_pool", bufs));
    float *got = malloc(sizeof(float) * (size_t)(N * C));
    ref2_from_nchwc(out, N, C, 1, 1, x, got);
    double *want = malloc(sizeof(double) * (size_t)(N * C));
    for (int64_t k = 0; k < N * C; k++) want[k] = ref[k];
    CU_ASSERT(ops_rel_error(got, want, N * C) <= 1e-6);
    for (int64_t k = C; k < CB * x; k++) CU_ASSERT_EQUAL(out[k], 0.0f); /* padding lanes stay 0 */
    tsl_schedule_free(s);
    ops_free(in);
    ops_free(out);
    free(got);
    free(want);
    free(d);
    free(ref);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
}

/* Bad attributes are refused at instantiation, not compiled. */
static void test_pool_refuses_bad_attributes(void) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int64_t shape[5] = {1, 1, 4, 4, 8};
  const int64_t *shapes[1] = {shape};
  int ndims[1] = {5};
  tsl_te_program *p = NULL;
  tsl_dsl_param_value zero_stride[3] = {tsl_dsl_int_param("kernel_h", 2), tsl_dsl_int_param("kernel_w", 2),
                                        tsl_dsl_int_param("stride_h", 0)};
  CU_ASSERT_EQUAL(tsl_op_instantiate("max_pool2d_nchwc", 1, shapes, ndims, 3, zero_stride, &p), TSL_ERR_INVALID);
  tsl_dsl_param_value too_big[2] = {tsl_dsl_int_param("kernel_h", 5), tsl_dsl_int_param("kernel_w", 2)};
  CU_ASSERT_EQUAL(tsl_op_instantiate("avg_pool2d_nchwc", 1, shapes, ndims, 2, too_big, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "larger than the padded input"));
  tsl_dsl_param_value dilated_avg[3] = {tsl_dsl_int_param("kernel_h", 2), tsl_dsl_int_param("kernel_w", 2),
                                        tsl_dsl_int_param("dilation_h", 2)};
  CU_ASSERT_EQUAL(tsl_op_instantiate("avg_pool2d_nchwc", 1, shapes, ndims, 3, dilated_avg, &p), TSL_ERR_INVALID);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

void ops_tests_pool(CU_pSuite s) {
  CU_add_test(s, "test_max_avg_random_shapes", test_max_avg_random_shapes);
  CU_add_test(s, "test_C07_avg_pool_ceil_mode", test_C07_avg_pool_ceil_mode);
  CU_add_test(s, "test_C08_nan_in_max_pool", test_C08_nan_in_max_pool);
  CU_add_test(s, "test_inf_and_nan_in_avg_pool_windows", test_inf_and_nan_in_avg_pool_windows);
  CU_add_test(s, "test_pool_stride_gt_window_1x1_input_and_whole_window",
              test_pool_stride_gt_window_1x1_input_and_whole_window);
  CU_add_test(s, "test_global_avg_pool", test_global_avg_pool);
  CU_add_test(s, "test_pool_refuses_bad_attributes", test_pool_refuses_bad_attributes);
}
