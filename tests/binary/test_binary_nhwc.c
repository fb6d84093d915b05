/* The channels-last residual stream of binarized nets and the binary operators that read
 * blocked f32: the `_nhwc` and `_nchwc` operators (ops/binary/binary.c) against naive
 * integer references written here from docs/binary.md's formulas (tests/ref/ref_binary.c's
 * conv, glue and quantizers), under the bitserial template's configs and the blocked
 * packs' hand schedule; and the graph passes models/passes/binary_channels_last.h (which
 * nodes it switches, and which it must leave NCHW) and binary_read_blocked.h. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ir/arena.h"
#include "binary_test_util.h"
#include "models/compile.h"
#include "models/passes/binary_channels_last.h"
#include "models/zoo_binary.h"
#include "ops/binary/bitserial.h"
#include "ops/registry.h"
#include "ref/ref_binary.h"
#include "runtime/module.h"
#include "target/target.h"
#include "tessel/runtime.h"

static uint64_t rng;
static uint64_t rnd(void) { return bin_test_rng(&rng); }
static int rnd_int(int n) { return (int)(rnd() % (uint64_t)n); }

static tsl_jit *jit;
static tsl_target host;

static int suite_init(void) { return bin_test_jit_open(&host, &jit); }
static int suite_clean(void) { return bin_test_jit_close(&jit); }

/* Builds registry op `name` (bitserial convs with the template's knobs k, NULL: its
 * default) and runs it once on bufs; 0 on success. */
static int run(const char *name, int nin, const int64_t *const *shapes, const int *ndims, int np,
               const tsl_dsl_param_value *prm, const tsl_bitserial_knobs *k, void **bufs) {
  return bin_test_run_op(jit, &host, name, nin, shapes, ndims, np, prm, true, k, bufs);
}

/* floor(v / 2^shift) by integer division (not a shift) */
static int64_t floor_shift(int64_t v, int shift) {
  int64_t d = (int64_t)1 << shift;
  return v >= 0 ? v / d : -((-v + d - 1) / d);
}

/* bitserial_conv2d_unipolar64_requant(_add)_nhwc: out[y, x, k] = clip(floor((dot + bias) /
 * 2^shift) (+ res[y, x, k]), 0, qmax), dot the integer conv of the unpacked levels and
 * +-1 weights, for configs across the template's knobs (NULL: its default). */
static void check_stream_conv(bool add, int in_bits, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
                              int64_t st, int64_t pad) {
  int64_t CW = (C + 63) / 64, OH = (H + 2 * pad - R) / st + 1, OW = (W + 2 * pad - R) / st + 1, qmax = 5;
  int L = (1 << in_bits) - 1;
  int *a = malloc((size_t)(C * H * W) * sizeof *a), *w = malloc((size_t)(K * C * R * R) * sizeof *w);
  int64_t *dot = malloc((size_t)(K * OH * OW) * sizeof *dot);
  uint64_t *data = bin_test_zalloc((size_t)(in_bits * CW * H * W) * 8), *wt = bin_test_zalloc((size_t)(CW * R * R * K) * 8);
  int32_t *shift = bin_test_zalloc((size_t)K * 4), *bias = bin_test_zalloc((size_t)K * 4), *res = bin_test_zalloc((size_t)(OH * OW * K) * 4);
  int32_t *want = bin_test_zalloc((size_t)(OH * OW * K) * 4), *got = bin_test_zalloc((size_t)(OH * OW * K) * 4);
  rng = 31 + (uint64_t)(C * 7 + in_bits + add);
  for (int64_t i = 0; i < C * H * W; i++) {
    a[i] = rnd_int(L + 1);
    for (int p = 0; p < in_bits; p++)
      if ((a[i] >> p) & 1) data[(p * CW + i / (H * W) / 64) * H * W + i % (H * W)] |= 1ull << (i / (H * W) % 64);
  }
  for (int64_t k = 0; k < K; k++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t rs = 0; rs < R * R; rs++) {
        int v = rnd_int(2) ? -1 : 1;
        w[(k * C + c) * R * R + rs] = v;
        if (v < 0) wt[((c / 64) * R * R + rs) * K + k] |= 1ull << (c % 64);
      }
  for (int64_t k = 0; k < K; k++) shift[k] = rnd_int(5), bias[k] = rnd_int(41) - 20;
  for (int64_t i = 0; i < OH * OW * K; i++) res[i] = rnd_int(12) - 3;
  ref_bin_conv2d(1, C, H, W, K, R, R, st, st, pad, pad, a, w, dot);
  for (int64_t k = 0; k < K; k++)
    for (int64_t i = 0; i < OH * OW; i++) {
      int64_t g = floor_shift(dot[k * OH * OW + i] + bias[k], shift[k]) + (add ? res[i * K + k] : 0);
      want[i * K + k] = (int32_t)(g < 0 ? 0 : g > qmax ? qmax : g);
    }
  static const tsl_bitserial_knobs cfgs[] = {
      {8, true, true, true, 0, 0, 0},   {8, true, false, false, 4, 1, -1}, {8, true, true, true, 8, 3, 1},
      {8, false, true, true, 32, 2, -1}, {8, true, false, true, 64, 8, 1}, {8, true, true, true, 16, 7, -1},
      {8, true, true, true, 16, 5, 1}};
  int64_t sd[5] = {1, in_bits, CW, H, W}, sw[4] = {CW, R, R, K}, sk[1] = {K}, sr[4] = {1, OH, OW, K};
  const int64_t *shapes[5] = {sd, sw, sk, sk, sr};
  int ndims[5] = {5, 4, 1, 1, 4};
  tsl_dsl_param_value prm[6] = {tsl_dsl_int_param("C", C),        tsl_dsl_int_param("qmax", qmax),
                                tsl_dsl_int_param("stride_h", st), tsl_dsl_int_param("stride_w", st),
                                tsl_dsl_int_param("pad_h", pad),   tsl_dsl_int_param("pad_w", pad)};
  const char *op = add ? "bitserial_conv2d_unipolar64_requant_add_nhwc" : "bitserial_conv2d_unipolar64_requant_nhwc";
  int nin = add ? 5 : 4;
  for (int c = -1; c < (int)(sizeof cfgs / sizeof cfgs[0]); c++) {
    memset(got, 0xa5, (size_t)(OH * OW * K) * 4);
    void *bufs[6] = {data, wt, shift, bias, add ? (void *)res : (void *)got, got};
    CU_ASSERT_EQUAL(run(op, nin, shapes, ndims, 6, prm, c < 0 ? NULL : &cfgs[c], bufs), 0);
    bool eq = memcmp(got, want, (size_t)(OH * OW * K) * 4) == 0;
    if (!eq) fprintf(stderr, "\n  %s config %d (C %lld K %lld) differs\n", op, c, (long long)C, (long long)K);
    CU_ASSERT_TRUE(eq);
  }
  free(a);
  free(w);
  free(dot);
  free(data);
  free(wt);
  free(shift);
  free(bias);
  free(res);
  free(want);
  free(got);
}

static void test_requant_add_nhwc_template_configs(void) {
  check_stream_conv(true, 1, 70, 15, 17, 48, 3, 1, 1); /* rows of >= 14: acc per row */
  check_stream_conv(true, 2, 64, 9, 11, 64, 3, 2, 1);
  check_stream_conv(true, 1, 128, 7, 7, 128, 3, 1, 1);
}

static void test_requant_nhwc_template_configs(void) {
  check_stream_conv(false, 1, 64, 14, 14, 128, 1, 2, 0); /* a downsample shortcut */
  check_stream_conv(false, 2, 70, 9, 11, 48, 3, 2, 1);
}

/* quantize_unipolar_i32_nhwc, bitpack_unipolar64_i32_nhwc and binary_global_avgpool_i32_nhwc
 * on 70 channels (a partial second word) against their formulas. */
static void test_stream_glue_ops_nhwc(void) {
  enum { C = 70, H = 5, W = 6, CW = 2 };
  for (int bits = 1; bits <= 2; bits++) {
    float *xf = bin_test_zalloc(C * H * W * 4);
    int32_t *q = bin_test_zalloc(C * H * W * 4), *lv = bin_test_zalloc(C * H * W * 4);
    uint64_t *planes = bin_test_zalloc(2 * CW * H * W * 8), *want_planes = bin_test_zalloc(2 * CW * H * W * 8);
    float *avg = bin_test_zalloc(C * 4);
    rng = 5 + (uint64_t)bits;
    for (int i = 0; i < C * H * W; i++) xf[i] = (float)((double)rnd_int(1300) / 1000.0 - 0.1);
    int64_t s4[4] = {1, C, H, W}, t4[4] = {1, H, W, C};
    const int64_t *sh_q[1] = {s4}, *sh_t[1] = {t4};
    int nd[1] = {4};
    tsl_dsl_param_value pb[2] = {tsl_dsl_int_param("bits", bits), tsl_dsl_int_param("shift", 1)};
    void *bq[2] = {xf, q};
    CU_ASSERT_EQUAL(run("quantize_unipolar_i32_nhwc", 1, sh_q, nd, 1, pb, NULL, bq), 0);
    int bad = 0;
    for (int c = 0; c < C; c++)
      for (int yx = 0; yx < H * W; yx++) bad += q[yx * C + c] != ref_bin_unipolar(xf[c * H * W + yx], bits);
    CU_ASSERT_EQUAL(bad, 0);
    /* levels of a residual stream: any i32, packed as clip(x >> 1, 0, L) */
    for (int i = 0; i < C * H * W; i++) lv[i] = rnd_int(17) - 6;
    int L = (1 << bits) - 1;
    for (int c = 0; c < C; c++)
      for (int yx = 0; yx < H * W; yx++) {
        int64_t v = floor_shift(lv[yx * C + c], 1);
        v = v < 0 ? 0 : v > L ? L : v;
        for (int p = 0; p < bits; p++)
          if ((v >> p) & 1) want_planes[(p * CW + c / 64) * H * W + yx] |= 1ull << (c % 64);
      }
    void *bp[2] = {lv, planes};
    CU_ASSERT_EQUAL(run("bitpack_unipolar64_i32_nhwc", 1, sh_t, nd, 2, pb, NULL, bp), 0);
    CU_ASSERT_EQUAL(memcmp(planes, want_planes, (size_t)(bits * CW * H * W) * 8), 0);
    tsl_dsl_param_value ps[1] = {tsl_dsl_float_param("scale", 0.5)};
    void *ba[2] = {lv, avg};
    CU_ASSERT_EQUAL(run("binary_global_avgpool_i32_nhwc", 1, sh_t, nd, 1, ps, NULL, ba), 0);
    for (int c = 0; c < C; c++) {
      int64_t sum = 0;
      for (int yx = 0; yx < H * W; yx++) sum += lv[yx * C + c];
      CU_ASSERT_DOUBLE_EQUAL(avg[c], (double)sum * 0.5 / (H * W), 1e-5);
    }
    free(xf);
    free(q);
    free(lv);
    free(planes);
    free(want_planes);
    free(avg);
  }
}

/* quantize_unipolar_i32_nchwc_nhwc: blocked f32 [1, CB, H, W, X] (70 channels: the last
 * block partial, its tail garbage that must not matter) to i32 [1, H, W, 70]. */
static void test_quantize_blocked_to_nhwc(void) {
  enum { C = 70, H = 3, W = 5 };
  for (int X = 8; X <= 16; X += 8)
    for (int bits = 1; bits <= 2; bits++) {
      int CB = (C + X - 1) / X;
      float *xb = bin_test_zalloc((size_t)(CB * H * W * X) * 4);
      int32_t *q = bin_test_zalloc(H * W * C * 4);
      rng = 77 + (uint64_t)(X + bits);
      for (int i = 0; i < CB * H * W * X; i++) xb[i] = (float)((double)rnd_int(1300) / 1000.0 - 0.1);
      int64_t s5[5] = {1, CB, H, W, X};
      const int64_t *sh[1] = {s5};
      int nd[1] = {5};
      tsl_dsl_param_value prm[2] = {tsl_dsl_int_param("C", C), tsl_dsl_int_param("bits", bits)};
      void *bufs[2] = {xb, q};
      CU_ASSERT_EQUAL(run("quantize_unipolar_i32_nchwc_nhwc", 1, sh, nd, 2, prm, NULL, bufs), 0);
      int bad = 0;
      for (int c = 0; c < C; c++)
        for (int yx = 0; yx < H * W; yx++)
          bad += q[yx * C + c] != ref_bin_unipolar(xb[((c / X) * H * W + yx) * X + c % X], bits);
      CU_ASSERT_EQUAL(bad, 0);
      free(xb);
      free(q);
    }
}

/* bitpack_{bipolar,unipolar}{32,64}_nchwc: blocked f32 [N, CB, H, W, X] with C = 3 (fewer
 * than a block), 33 and 70 (the last block partial, its tail nonzero garbage that must not
 * matter; C not a multiple of the word: the last word's high bits 0) and 64 (whole blocks
 * and words), X = 4, 8, 16 (N = 2 at X = 8, else 1), exact 0.0 and -0.0
 * (bipolar: +1, bit 0), levels at the unipolar thresholds; packed as docs/binary.md says
 * (channel w*WS + i in bit i of word w, unipolar plane b = bit b of the level), under the
 * plain schedule and the graph compiler's (the hand schedule of the blocked packs). */
static void test_C14_bitpack_blocked_sign_tails_and_levels(void) {
  enum { H = 3, W = 5 };
  static const int chans[] = {3, 33, 64, 70};
  static const float special[] = {0.0f, -0.0f, 1.0f / 6.0f, 0.5f, 1.0f / 3.0f, 5.0f / 6.0f, -0.25f, 1.0f};
  for (int wi = 0; wi < 2; wi++)
    for (int uni = 0; uni <= 1; uni++)
      for (int ci = 0; ci < 4; ci++)
        for (int X = 4; X <= 16; X *= 2)
          for (int bits = 1; bits <= (uni ? 2 : 1); bits++)
            for (int tpl = 0; tpl <= 1; tpl++) {
              int WS = wi ? 64 : 32, C = chans[ci], CB = (C + X - 1) / X, CW = (C + WS - 1) / WS;
              int B = uni ? bits : 1, N = X == 8 ? 2 : 1;
              char name[48];
              snprintf(name, sizeof name, "bitpack_%s%d_nchwc", uni ? "unipolar" : "bipolar", WS);
              float *xb = bin_test_zalloc((size_t)(N * CB * H * W * X) * 4);
              uint64_t *got = bin_test_zalloc((size_t)(N * B * CW * H * W) * 8);
              rng = 91 + (uint64_t)(X * 7 + C + bits + 3 * uni + 5 * wi);
              for (int i = 0; i < N * CB * H * W * X; i++)
                xb[i] = rnd_int(3) == 0 ? special[rnd_int(8)] : (float)((double)rnd_int(1400) / 1000.0 - 0.2);
              int64_t s5[5] = {N, CB, H, W, X};
              const int64_t *sh[1] = {s5};
              int nd[1] = {5};
              tsl_dsl_param_value prm[2] = {tsl_dsl_int_param("C", C), tsl_dsl_int_param("bits", bits)};
              void *bufs[2] = {xb, got};
              CU_ASSERT_EQUAL(bin_test_run_op(jit, &host, name, 1, sh, nd, uni ? 2 : 1, prm, tpl, NULL, bufs), 0);
              int bad = 0;
              for (int n = 0; n < N; n++)
                for (int b = 0; b < B; b++)
                  for (int w = 0; w < CW; w++)
                    for (int yx = 0; yx < H * W; yx++) {
                      uint64_t want = 0;
                      for (int i = 0; i < WS && w * WS + i < C; i++) {
                        int c = w * WS + i;
                        float v = xb[((n * CB + c / X) * H * W + yx) * X + c % X];
                        int bit = uni ? (ref_bin_unipolar(v, bits) >> b) & 1 : ref_bin_bipolar(v) < 0;
                        want |= (uint64_t)bit << i;
                      }
                      size_t at = (size_t)(((n * B + b) * CW + w) * H * W + yx);
                      uint64_t gv = WS == 64 ? got[at] : ((const uint32_t *)got)[at];
                      bad += gv != want;
                    }
              CU_ASSERT_EQUAL(bad, 0);
              if (bad) printf("\n  %s C=%d X=%d bits=%d %s schedule: %d words wrong\n", name, C, X, bits,
                              tpl ? "hand" : "plain", bad);
              free(xb);
              free(got);
            }
}

/* bitunpack_unipolar64_nchwc: u64 bit planes [N, B, CW, H, W] to blocked f32
 * [N, CB, H, W, X], C = 3, 33, 64, 70 and 130 (the last word's bits past C set at random:
 * they must not leak), X = 4 to 64 (every block dividing the word), B = 1 and 2 planes (N = 2 at X = 8), under the plain
 * schedule and the graph compiler's hand schedule: lane c % X of block c / X holds
 * level(c) / (2^B - 1), level(c) = sum over planes p of bit c % 64 of word c / 64 of
 * plane p, times 2^p (docs/binary.md); the block's tail past C is 0.0 (C14's class:
 * channels past C contribute nothing, here to a blocked f32 consumer). */
static void test_C14_bitunpack_blocked_tails_zero(void) {
  enum { H = 3, W = 5 };
  static const int chans[] = {3, 33, 64, 70, 130};
  for (int ci = 0; ci < 5; ci++)
    for (int X = 4; X <= 64; X *= 2)
      for (int B = 1; B <= 2; B++)
        for (int tpl = 0; tpl <= 1; tpl++) {
          int C = chans[ci], CB = (C + X - 1) / X, CW = (C + 63) / 64, N = X == 8 ? 2 : 1;
          uint64_t *in = bin_test_zalloc((size_t)(N * B * CW * H * W) * 8);
          float *got = bin_test_zalloc((size_t)(N * CB * H * W * X) * 4);
          rng = 313 + (uint64_t)(X * 11 + C + 5 * B);
          for (int i = 0; i < N * B * CW * H * W; i++) in[i] = rnd();
          for (int i = 0; i < N * CB * H * W * X; i++) got[i] = -7.0f; /* every lane must be written */
          int64_t s5[5] = {N, B, CW, H, W};
          const int64_t *sh[1] = {s5};
          int nd[1] = {5};
          tsl_dsl_param_value prm[2] = {tsl_dsl_int_param("C", C), tsl_dsl_int_param("X", X)};
          void *bufs[2] = {in, got};
          CU_ASSERT_EQUAL(bin_test_run_op(jit, &host, "bitunpack_unipolar64_nchwc", 1, sh, nd, 2, prm, tpl, NULL, bufs), 0);
          int bad = 0;
          for (int n = 0; n < N; n++)
            for (int c = 0; c < CB * X; c++)
              for (int yx = 0; yx < H * W; yx++) {
                float want = 0.0f;
                if (c < C) {
                  int level = 0;
                  for (int p = 0; p < B; p++)
                    level += (int)((in[((size_t)(n * B + p) * CW + c / 64) * H * W + yx] >> (c % 64)) & 1) << p;
                  want = (float)level / (float)((1 << B) - 1);
                }
                bad += got[((size_t)(n * CB + c / X) * H * W + yx) * X + c % X] != want;
              }
          CU_ASSERT_EQUAL(bad, 0);
          if (bad) printf("\n  bitunpack_unipolar64_nchwc C=%d X=%d B=%d %s schedule: %d values wrong\n", C, X, B,
                          tpl ? "hand" : "plain", bad);
          free(in);
          free(got);
        }
}

/* Compiles graph g twice, by default and with compile option binary_nchw (binary
 * operators on NCHW tensors only), runs both on one seeded input of `image` x `image`
 * and checks that every output is equal bit for bit between the two, with the same
 * shape, and that the logits (output 0) are not a constant; stats[0] and stats[1]
 * receive the two compiles' statistics; no_lut_conv (compile option) in both compiles. */
static void compile_graph_both_ways_lut(const tsl_graph *g, int64_t image, bool no_lut_conv,
                                        tsl_compile_stats stats[2]) {
  tsl_graph_plan *plan[2] = {NULL, NULL};
  tsl_graph_ctx *ctx[2] = {NULL, NULL};
  for (int v = 0; v < 2; v++) {
    tsl_compile_options co = {.binary_nchw = v == 1, .no_lut_conv = no_lut_conv};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_compile(g, &co, &plan[v], &stats[v]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(plan[v], &ctx[v]), TSL_OK);
    float *x = tsl_graph_ctx_input(ctx[v], 0);
    rng = 8;
    for (int64_t i = 0; i < 3 * image * image; i++) x[i] = (float)((double)rnd_int(2000) / 1000.0 - 1.0);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx[v], NULL), TSL_OK);
  }
  int nout = tsl_graph_plan_num_outputs(plan[0]);
  CU_ASSERT_EQUAL(nout, g->n_outputs);
  CU_ASSERT_EQUAL(tsl_graph_plan_num_outputs(plan[1]), nout);
  for (int o = 0; o < nout; o++) {
    tsl_graph_io_info ia = tsl_graph_plan_output_info(plan[0], o), ib = tsl_graph_plan_output_info(plan[1], o);
    CU_ASSERT_EQUAL(ia.ndim, ib.ndim);
    CU_ASSERT_EQUAL(ia.bytes, ib.bytes);
    for (int d = 0; d < ia.ndim && d < ib.ndim; d++) CU_ASSERT_EQUAL(ia.shape[d], ib.shape[d]);
    if (ia.bytes == ib.bytes)
      CU_ASSERT_EQUAL(memcmp(tsl_graph_ctx_output(ctx[0], o), tsl_graph_ctx_output(ctx[1], o), (size_t)ia.bytes), 0);
  }
  const float *a = tsl_graph_ctx_output(ctx[0], 0);
  float lo = a[0], hi = a[0];
  for (int i = 0; i < 1000; i++) lo = a[i] < lo ? a[i] : lo, hi = a[i] > hi ? a[i] : hi;
  CU_ASSERT(hi > lo); /* not a constant */
  for (int v = 0; v < 2; v++) {
    tsl_graph_ctx_free(ctx[v]);
    tsl_graph_plan_free(plan[v]);
  }
}

/* compile_graph_both_ways_lut with the lookup-table conv pass (the default). */
static void compile_graph_both_ways(const tsl_graph *g, int64_t image, tsl_compile_stats stats[2]) {
  compile_graph_both_ways_lut(g, image, false, stats);
}

/* compile_graph_both_ways_lut of the zoo model o. */
static void compile_both_ways(const tsl_zoo_binary_options *o, int64_t image, bool no_lut_conv,
                              tsl_compile_stats stats[2]) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_binary_build_ex(o, &g), TSL_OK);
  compile_graph_both_ways_lut(g, image, no_lut_conv, stats);
  tsl_graph_free(g);
}

/* With the f32 stem (blocked NCHW[x]c at the target's lanes), the compiled model with the
 * stream channels-last (its quantize reading the blocked stem output, the layout
 * transform gone: one step fewer) gives the logits of the NCHW stream bit for bit. */
static void test_bresnet18_with_stem_nhwc_equals_nchw(void) {
  tsl_zoo_binary_options o = {"bresnet18", 1, 8, 64, false, 5, false};
  tsl_compile_stats st[2];
  compile_both_ways(&o, 64, false, st);
  CU_ASSERT_EQUAL(st[0].binary_channels_last, 21);
  CU_ASSERT_EQUAL(st[1].binary_channels_last, 0);
  CU_ASSERT_EQUAL(st[0].binary_blocked_reads, 1);
  CU_ASSERT_EQUAL(st[0].steps, st[1].steps - 1);
}

/* bsqueezenet1_1 with its f32 stem (the max-pool's blocked output) and f32 classifier:
 * the pack reads the blocked stem output and the unpack writes the classifier's blocked
 * input (two steps fewer, both layout transforms gone), and the logits equal those of
 * the plan whose pack reads and unpack writes NCHW, bit for bit. With the lookup-table
 * conv (the default) both plans' classifier reads the bit planes themselves, through the
 * blocked unpack or through the plain unpack and its transform (passes/lut_conv.h): the
 * unpack is gone from both, one step fewer, the same logits bit for bit. */
static void test_bsqueezenet1_1_pack_reads_blocked_stem(void) {
  tsl_zoo_binary_options o = {"bsqueezenet1_1", 1, 1, 63, false, 5, false};
  tsl_compile_stats st[2];
  compile_both_ways(&o, 63, true, st);
  CU_ASSERT_EQUAL(st[0].binary_blocked_reads, 2);
  CU_ASSERT_EQUAL(st[1].binary_blocked_reads, 0);
  CU_ASSERT_EQUAL(st[0].lut_convs + st[1].lut_convs, 0);
  CU_ASSERT_EQUAL(st[0].steps, st[1].steps - 2);
  compile_both_ways(&o, 63, false, st);
  CU_ASSERT_EQUAL(st[0].lut_convs, 1);
  CU_ASSERT_EQUAL(st[1].lut_convs, 1);
  CU_ASSERT_EQUAL(st[0].steps, st[1].steps - 1);
}

/* The unpack writes the blocked tensor only when a layout transform to blocked NCHW[x]c
 * is its one reader (binary_read_blocked.h). bsqueezenet1_1's unpack kept plain when its
 * value is also a graph output (the output must stay NCHW) or has a second reader (a Relu
 * on the plain value, itself a graph output): the pack still reads the blocked stem (one
 * switched node, not two), the unpack stays bitunpack_unipolar64, and every output,
 * the extra one included, equals the NCHW plan's bit for bit with the NCHW shape. */
static void test_unpack_kept_plain_for_graph_output_or_second_reader(void) {
  for (int variant = 0; variant < 2; variant++) {
    tsl_zoo_binary_options o = {"bsqueezenet1_1", 1, 1, 63, false, 5, false};
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_zoo_binary_build_ex(&o, &g), TSL_OK);
    int u = tsl_graph_find_value(g, "unpack");
    CU_ASSERT_FATAL(u >= 0);
    int extra = u;
    if (variant == 1) {
      int r = -1;
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, "unpack_relu", &r), TSL_OK);
      int node = -1;
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_RELU, "unpack_relu", 1, &u, 1, &r, &node), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, node), TSL_OK);
      extra = r;
    }
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, extra), TSL_OK);
    int64_t C = g->values[u].shape[1], H = g->values[u].shape[2], W = g->values[u].shape[3];
    tsl_compile_stats st[2];
    compile_graph_both_ways(g, 63, st);
    CU_ASSERT_EQUAL(st[0].binary_blocked_reads, 1);
    CU_ASSERT_EQUAL(st[1].binary_blocked_reads, 0);
    /* the pass itself, on the graph after layout selection */
    tsl_graph *w = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &w), TSL_OK);
    tsl_compile_stats so;
    memset(&so, 0, sizeof so);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(w, (int)tsl_target_f32_lanes(&host), &so), TSL_OK);
    int wu = tsl_graph_find_value(w, "unpack");
    CU_ASSERT_FATAL(wu >= 0);
    const tsl_attr *k = tsl_node_attr(&w->nodes[w->values[wu].producer], "kernel");
    CU_ASSERT(k && k->kind == TSL_ATTR_STRING && strcmp(k->s, "bitunpack_unipolar64") == 0);
    CU_ASSERT_EQUAL(w->values[wu].layout.kind, TSL_LAYOUT_PLAIN);
    CU_ASSERT(w->values[wu].ndim == 4 && w->values[wu].shape[1] == C && w->values[wu].shape[2] == H &&
              w->values[wu].shape[3] == W);
    tsl_graph_free(w);
    tsl_graph_free(g);
  }
}

static int count_kernels(const tsl_graph *g, const char *suffix) {
  int n = 0;
  size_t ls = strlen(suffix);
  for (int i = 0; i < g->n_nodes; i++) {
    const tsl_attr *k = tsl_node_attr(&g->nodes[i], "kernel");
    if (k && k->kind == TSL_ATTR_STRING && strlen(k->s) >= ls && strcmp(k->s + strlen(k->s) - ls, suffix) == 0) n++;
  }
  return n;
}

/* bresnet18's whole i32 stream goes channels-last: the quantize, 8 residual packs, 8
 * `_requant_add` convs, 3 downsamples and the average pool (21 nodes), their i32 values
 * [N, H, W, C]; bsqueezenet1_1 has no i32 stream. A stream value that is a graph output
 * (or read by another operator) keeps its connected set NCHW, the other sets switch. */
static void test_pass_switches_whole_streams_only(void) {
  for (int abits = 1; abits <= 2; abits++) {
    tsl_zoo_binary_options o = {"bresnet18", abits, 8, 64, false, 3, false};
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_zoo_binary_build_ex(&o, &g), TSL_OK);
    int before = count_kernels(g, "_i32") + count_kernels(g, "_requant") + count_kernels(g, "_requant_add");
    int n = -1;
    CU_ASSERT_EQUAL_FATAL(tsl_pass_binary_channels_last(g, &n), TSL_OK);
    CU_ASSERT_EQUAL(n, 21);
    CU_ASSERT_EQUAL(n, before);
    CU_ASSERT_EQUAL(count_kernels(g, "_nhwc"), 21);
    int s = tsl_graph_find_value(g, "layer4.1.conv2");
    CU_ASSERT_FATAL(s >= 0);
    CU_ASSERT(g->values[s].ndim == 4 && g->values[s].shape[1] == 2 && g->values[s].shape[2] == 2 && g->values[s].shape[3] == 64);
    CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
    tsl_graph_free(g);

    g = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_zoo_binary_build_ex(&o, &g), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, tsl_graph_find_value(g, "layer2.1.conv2")), TSL_OK);
    CU_ASSERT_EQUAL(tsl_pass_binary_channels_last(g, &n), TSL_OK);
    /* its set: layer2.0's downsample and conv2, layer2.1's pack and conv2, layer3.0's pack;
     * the downsample blocks start new streams (layer3.0's shortcut reads bit planes) */
    CU_ASSERT_EQUAL(n, 16);
    CU_ASSERT_EQUAL(count_kernels(g, "_nhwc"), 16);
    static const char *const nchw[] = {"layer2.0.downsample", "layer2.0.conv2", "layer2.1.pack", "layer2.1.conv2",
                                       "layer3.0.pack"};
    for (int i = 0; i < 5; i++) {
      const tsl_value *v = &g->values[tsl_graph_find_value(g, nchw[i])];
      const tsl_attr *k = tsl_node_attr(&g->nodes[v->producer], "kernel");
      CU_ASSERT(k && strstr(k->s, "_nhwc") == NULL);
    }
    const tsl_attr *k3 = tsl_node_attr(&g->nodes[g->values[tsl_graph_find_value(g, "layer3.0.conv2")].producer], "kernel");
    CU_ASSERT(k3 && strstr(k3->s, "_nhwc") != NULL);
    CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
    tsl_graph_free(g);
  }
  tsl_zoo_binary_options q = {"bsqueezenet1_1", 1, 1, 47, true, 3, false};
  tsl_graph *g = NULL;
  int n = -1;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_binary_build_ex(&q, &g), TSL_OK);
  CU_ASSERT_EQUAL(tsl_pass_binary_channels_last(g, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 0);
  tsl_graph_free(g);
}

void tsl_tests_binary_nhwc(void) {
  CU_pSuite s = CU_add_suite("binary_nhwc", suite_init, suite_clean);
  CU_add_test(s, "test_requant_add_nhwc_template_configs", test_requant_add_nhwc_template_configs);
  CU_add_test(s, "test_requant_nhwc_template_configs", test_requant_nhwc_template_configs);
  CU_add_test(s, "test_stream_glue_ops_nhwc", test_stream_glue_ops_nhwc);
  CU_add_test(s, "test_quantize_blocked_to_nhwc", test_quantize_blocked_to_nhwc);
  CU_add_test(s, "test_pass_switches_whole_streams_only", test_pass_switches_whole_streams_only);
  CU_add_test(s, "test_bresnet18_with_stem_nhwc_equals_nchw", test_bresnet18_with_stem_nhwc_equals_nchw);
  CU_add_test(s, "test_C14_bitpack_blocked_sign_tails_and_levels", test_C14_bitpack_blocked_sign_tails_and_levels);
  CU_add_test(s, "test_bsqueezenet1_1_pack_reads_blocked_stem", test_bsqueezenet1_1_pack_reads_blocked_stem);
  CU_add_test(s, "test_C14_bitunpack_blocked_tails_zero", test_C14_bitunpack_blocked_tails_zero);
  CU_add_test(s, "test_unpack_kept_plain_for_graph_output_or_second_reader",
              test_unpack_kept_plain_for_graph_output_or_second_reader);
}
