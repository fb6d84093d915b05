/* The lookup-table 1x1 conv of unipolar bit planes (ops/binary/lutconv.h: the operator
 * lutconv1x1_unipolar64_nchwc under its schedule) and the graph pass that rewrites a conv
 * of unpacked levels into it (models/passes/lut_conv.h), against a reference written here
 * from the definition: the level of channel c at pixel p is q = sum over planes pl of
 * bit c of plane pl times 2^pl, the conv sums weight[k][c] * q / (2^B - 1) in double,
 * adds the bias and applies the activation; lanes past K are 0. Bits past C in the last
 * word are set at random: they must add nothing (C14's channel-tail bits). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_test_util.h"
#include "models/compile.h"
#include "models/graph.h"
#include "ops/binary/lutconv.h"
#include "target/target.h"
#include "tessel/runtime.h"

static uint64_t rng;
static uint64_t rnd(void) { return bin_test_rng(&rng); }
/* uniform in [-1, 1) */
static double rnd_pm1(void) { return (double)(rnd() >> 11) / 4503599627370496.0 - 1.0; }

static tsl_jit *jit;
static tsl_target host;

/* TSL_LUT_CONV=none would keep the pass off in the graph tests */
static int suite_init(void) { return unsetenv("TSL_LUT_CONV") != 0 || bin_test_jit_open(&host, &jit); }
static int suite_clean(void) { return bin_test_jit_close(&jit); }

/* The reference value of output channel k at pixel p of image n: planes u64[N, B, CW, P],
 * w[K][C] (the conv's weight), bias (NULL: none); act 0 none, 1 ReLU, 2 clip to [lo, hi].
 * *mag receives the sum of the magnitudes added (for a relative tolerance). */
static double ref_value(const uint64_t *planes, int B, int CW, int P, int C, const float *w, const float *bias, int n,
                        int k, int p, int act, double lo, double hi, double *mag) {
  double s = 0.0, m = 0.0;
  for (int c = 0; c < C; c++) {
    int q = 0;
    for (int pl = 0; pl < B; pl++) q |= (int)((planes[((size_t)(n * B + pl) * CW + c / 64) * P + p] >> (c % 64)) & 1) << pl;
    double level = (double)q / (double)((1 << B) - 1);
    s += (double)w[k * C + c] * level;
    m += fabs((double)w[k * C + c]) * level;
  }
  if (bias) {
    s += bias[k];
    m += fabs(bias[k]);
  }
  *mag = m;
  if (act == 1) return s > 0.0 ? s : 0.0;
  if (act == 2) return s < lo ? lo : s > hi ? hi : s;
  return s;
}

/* Runs the operator under its schedule for planes [N, B, CW, P], conv weight w[K][C] and
 * bias, blocks of X output channels; returns the number of wrong outputs (printing the
 * first). */
static int check_op(int N, int B, int C, int K, int X, int P, int act, double lo, double hi, int threads,
                    float *copy) {
  int CW = (C + 63) / 64, CG = (C + 3) / 4 * 4, KP = (K + X - 1) / X * X;
  uint64_t *planes = bin_test_zalloc((size_t)(N * B * CW * P) * 8);
  float *w = malloc((size_t)(K * C) * sizeof *w), *wt = bin_test_zalloc((size_t)(CG * KP) * 4);
  float *bias = malloc((size_t)K * sizeof *bias), *bp = bin_test_zalloc((size_t)KP * 4);
  float *got = bin_test_zalloc((size_t)(N * KP * P) * 4);
  for (int i = 0; i < N * B * CW * P; i++) planes[i] = rnd(); /* tail bits past C set too */
  for (int i = 0; i < K * C; i++) w[i] = (float)rnd_pm1();
  for (int k = 0; k < K; k++) bias[k] = (float)(0.5 * rnd_pm1());
  /* the operator's weight: [CG, KP], zero past C and K */
  for (int k = 0; k < K; k++) {
    for (int c = 0; c < C; c++) wt[c * KP + k] = w[k * C + c];
    bp[k] = bias[k];
  }
  for (int i = 0; i < N * KP * P; i++) got[i] = -7.0f; /* every lane must be written */
  int64_t sd[4] = {N, B, CW, P}, sw[2] = {CG, KP}, sb[1] = {KP};
  const int64_t *sh[3] = {sd, sw, sb};
  int nd[3] = {4, 2, 1};
  tsl_dsl_param_value prm[5] = {tsl_dsl_int_param("K", K), tsl_dsl_int_param("X", X), tsl_dsl_int_param("act", act),
                                tsl_dsl_float_param("clip_min", lo), tsl_dsl_float_param("clip_max", hi)};
  void *bufs[4] = {planes, wt, bp, got};
  tsl_set_num_threads(threads);
  int bad = bin_test_run_op(jit, &host, TSL_LUTCONV_OP, 3, sh, nd, 5, prm, true, NULL, bufs) ? -1 : 0;
  tsl_set_num_threads(0);
  for (int n = 0; bad >= 0 && n < N; n++)
    for (int k = 0; k < KP; k++)
      for (int p = 0; p < P; p++) {
        float g = got[((size_t)(n * (KP / X) + k / X) * P + p) * X + k % X];
        double mag = 0.0, want = k < K ? ref_value(planes, B, CW, P, C, w, bias, n, k, p, act, lo, hi, &mag) : 0.0;
        bool ok = k < K ? fabs((double)g - want) <= 1e-5 * (mag + 1.0) : g == 0.0f;
        if (!ok && bad++ == 0)
          printf("\n  lutconv N=%d B=%d C=%d K=%d X=%d P=%d act=%d: out[n=%d, k=%d, p=%d] = %.9g, want %.9g\n", N, B,
                 C, K, X, P, act, n, k, p, (double)g, want);
      }
  if (copy) memcpy(copy, got, (size_t)(N * KP * P) * sizeof *got);
  free(planes);
  free(w);
  free(wt);
  free(bias);
  free(bp);
  free(got);
  return bad;
}

/* Input channel counts around the 4-channel group and the 64-bit word (1, 3, 9, 33, 64,
 * 70, 130: C14's tails), each with 1 and 2 bit planes; across the 14 cases, output
 * channels around the block (1, 10, 17: fewer than one block and a tail), blocks of 4, 8
 * and 16 channels (NEON, AVX2, AVX-512 lanes: the schedule's register tile is the host's
 * whatever the block), pixel counts below, at and past the tile of 12 (1, 12, 13, 30),
 * no activation, ReLU and clip to [0.05, 0.75] (lanes past K must stay 0, not 0.05), and
 * 1 or 2 images, the indices chosen so that every value meets the others. */
static void test_C14_lutconv_channel_tails_planes_and_activations(void) {
  static const int chans[] = {1, 3, 9, 33, 64, 70, 130}, outs[] = {1, 10, 17}, blocks[] = {4, 8, 16},
                   pix[] = {1, 12, 13, 30};
  for (int i = 0; i < 14; i++) {
    rng = 4001 + (uint64_t)(i * 7);
    int C = chans[i / 2], B = 1 + i % 2, K = outs[i % 3], X = blocks[(i / 3) % 3], P = pix[(i / 2 + i) % 4];
    int act = (i / 4) % 3, N = 1 + (i % 5 == 4);
    CU_ASSERT_EQUAL(check_op(N, B, C, K, X, P, act, 0.05, 0.75, 1, NULL), 0);
  }
}

/* A layer of bsqueezenet1_1's classifier's proportions (512 -> 1000 over 13 x 13) at the
 * host's block, on 1 and 2 threads (the output channel tiles in parallel): both equal the
 * reference, and each other bit for bit (every output is summed by one thread in one
 * order). */
static void test_lutconv_classifier_layer_threads_identical(void) {
  int X = tsl_target_f32_lanes(&host), KP = (1000 + X - 1) / X * X;
  float *one = malloc((size_t)KP * 169 * sizeof *one), *two = malloc((size_t)KP * 169 * sizeof *two);
  rng = 77;
  CU_ASSERT_EQUAL(check_op(1, 1, 512, 1000, X, 169, 1, 0.0, 6.0, 1, one), 0);
  rng = 77;
  CU_ASSERT_EQUAL(check_op(1, 1, 512, 1000, X, 169, 1, 0.0, 6.0, 2, two), 0);
  CU_ASSERT_EQUAL(memcmp(one, two, (size_t)KP * 169 * sizeof *one), 0);
  free(one);
  free(two);
}

/* ---- the graph pass ---- */

/* One conv of unpacked levels: x f32[N, C, H, W] -> bitpack_unipolar64 (B planes) ->
 * bitunpack_unipolar64 -> Conv (1x1 with `pad` on every side, `stride`, `group` groups,
 * K outputs, with or without bias) [-> Relu (act 1) or Clip(lo, hi) (act 2)] -> output. */
typedef struct {
  int N, C, H, W, B, K, stride, pad, group;
  bool has_bias;
  int act;
  double lo, hi;
  int want_rewritten; /* convs the pass must rewrite */
} graph_case;

static tsl_graph *unpack_conv_graph(const graph_case *gc, const float *w, const float *bias) {
  tsl_graph *g = NULL;
  int x = -1, packed = -1, unpacked = -1, y = -1, wv = -1, bv = -1, node = -1;
  int64_t xs[4] = {gc->N, gc->C, gc->H, gc->W}, ws[4] = {gc->K, gc->C / gc->group, 1, 1}, bs[1] = {gc->K};
  tsl_tensor *tw = NULL, *tb = NULL;
  bool ok = tsl_graph_new("unpack_conv", &g) == TSL_OK &&
            tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, xs, &x) == TSL_OK &&
            tsl_graph_add_value(g, "packed", &packed) == TSL_OK &&
            tsl_graph_add_node(g, TSL_OP_BINARY, "pack", 1, &x, 1, &packed, &node) == TSL_OK &&
            tsl_graph_set_attr_string(g, node, "kernel", "bitpack_unipolar64") == TSL_OK &&
            tsl_graph_set_attr_int(g, node, "bits", gc->B) == TSL_OK && tsl_graph_infer_node(g, node) == TSL_OK &&
            tsl_graph_add_value(g, "unpacked", &unpacked) == TSL_OK &&
            tsl_graph_add_node(g, TSL_OP_BINARY, "unpack", 1, &packed, 1, &unpacked, &node) == TSL_OK &&
            tsl_graph_set_attr_string(g, node, "kernel", "bitunpack_unipolar64") == TSL_OK &&
            tsl_graph_set_attr_int(g, node, "C", gc->C) == TSL_OK && tsl_graph_infer_node(g, node) == TSL_OK &&
            tsl_tensor_new(TSL_DTYPE_F32, 4, ws, &tw) == TSL_OK;
  if (ok) {
    memcpy(tw->data, w, (size_t)(gc->K * (gc->C / gc->group)) * sizeof *w);
    ok = tsl_graph_add_constant(g, "conv.weight", tw, &wv) == TSL_OK;
  }
  if (ok && gc->has_bias && (ok = tsl_tensor_new(TSL_DTYPE_F32, 1, bs, &tb) == TSL_OK)) {
    memcpy(tb->data, bias, (size_t)gc->K * sizeof *bias);
    ok = tsl_graph_add_constant(g, "conv.bias", tb, &bv) == TSL_OK;
  }
  int ins[3] = {unpacked, wv, bv};
  int64_t k11[2] = {1, 1}, st2[2] = {gc->stride, gc->stride}, pads[4] = {gc->pad, gc->pad, gc->pad, gc->pad};
  ok = ok && tsl_graph_add_value(g, gc->act ? "conv" : "y", &y) == TSL_OK &&
       tsl_graph_add_node(g, TSL_OP_CONV, "conv", gc->has_bias ? 3 : 2, ins, 1, &y, &node) == TSL_OK &&
       tsl_graph_set_attr_ints(g, node, "kernel_shape", 2, k11) == TSL_OK &&
       tsl_graph_set_attr_ints(g, node, "strides", 2, st2) == TSL_OK &&
       tsl_graph_set_attr_ints(g, node, "pads", 4, pads) == TSL_OK &&
       tsl_graph_set_attr_int(g, node, "group", gc->group) == TSL_OK && tsl_graph_infer_node(g, node) == TSL_OK;
  if (ok && gc->act) {
    int r = -1;
    ok = tsl_graph_add_value(g, "y", &r) == TSL_OK &&
         tsl_graph_add_node(g, gc->act == 1 ? TSL_OP_RELU : TSL_OP_CLIP, "act", 1, &y, 1, &r, &node) == TSL_OK &&
         (gc->act == 1 || (tsl_graph_set_attr_float(g, node, "min", gc->lo) == TSL_OK &&
                           tsl_graph_set_attr_float(g, node, "max", gc->hi) == TSL_OK)) &&
         tsl_graph_infer_node(g, node) == TSL_OK;
    y = r;
  }
  ok = ok && tsl_graph_add_output(g, y) == TSL_OK;
  if (!ok) {
    printf("\n  unpack_conv_graph: %s\n", tsl_last_error());
    tsl_graph_free(g);
    return NULL;
  }
  return g;
}

/* The level bitpack_unipolar64 gives x with B planes (docs/binary.md: thresholds at 0.5,
 * 1.5, 2.5 of x * (2^B - 1)). */
static int unipolar_level(float x, int B) {
  float v = x * (float)((1 << B) - 1);
  int q = (v >= 0.5f) + (v >= 1.5f) + (v >= 2.5f);
  return q < (1 << B) - 1 ? q : (1 << B) - 1;
}

/* Compiles the graph of gc by default and with compile option binary_nchw (the plain
 * unpack read through a layout transform), checks the pass's count in both and every
 * output against the reference. Inputs are odd multiples of 1/24 (no level threshold is
 * hit exactly). */
static void check_graph(const graph_case *gc) {
  int N = gc->N, C = gc->C, H = gc->H, W = gc->W, B = gc->B, K = gc->K, cg = C / gc->group, kg = K / gc->group;
  rng = 900 + (uint64_t)(C * 3 + K + B + gc->stride + gc->pad);
  float *w = malloc((size_t)(K * cg) * sizeof *w), *bias = malloc((size_t)K * sizeof *bias);
  for (int i = 0; i < K * cg; i++) w[i] = (float)rnd_pm1();
  for (int k = 0; k < K; k++) bias[k] = (float)(0.5 * rnd_pm1());
  tsl_graph *g = unpack_conv_graph(gc, w, bias);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  float *x = malloc((size_t)(N * C * H * W) * sizeof *x);
  for (int i = 0; i < N * C * H * W; i++) x[i] = (float)(2.0 * (double)(rnd() % 17) - 3.0) / 24.0f;
  int OH = (H + 2 * gc->pad - 1) / gc->stride + 1, OW = (W + 2 * gc->pad - 1) / gc->stride + 1;
  for (int nchw = 0; nchw < 2; nchw++) {
    tsl_graph_plan *plan = NULL;
    tsl_graph_ctx *ctx = NULL;
    tsl_compile_stats stats;
    tsl_compile_options co = {.binary_nchw = nchw == 1};
    tsl_status st = tsl_graph_compile(g, &co, &plan, &stats);
    if (st != TSL_OK) printf("\n  %s\n", tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    CU_ASSERT_EQUAL(stats.lut_convs, gc->want_rewritten);
    if (stats.lut_convs != gc->want_rewritten)
      printf("\n  C=%d K=%d%s: %d rewritten, want %d\n", C, K, nchw ? " binary_nchw" : "", stats.lut_convs,
             gc->want_rewritten);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(plan, &ctx), TSL_OK);
    memcpy(tsl_graph_ctx_input(ctx, 0), x, (size_t)(N * C * H * W) * sizeof *x);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx, NULL), TSL_OK);
    const float *y = tsl_graph_ctx_output(ctx, 0);
    int bad = 0;
    for (int n = 0; n < N; n++)
      for (int k = 0; k < K; k++)
        for (int oy = 0; oy < OH; oy++)
          for (int ox = 0; ox < OW; ox++) {
            double s = gc->has_bias ? bias[k] : 0.0, mag = fabs(s);
            int iy = oy * gc->stride - gc->pad, ix = ox * gc->stride - gc->pad;
            for (int c = 0; iy >= 0 && iy < H && ix >= 0 && ix < W && c < cg; c++) {
              int ci = (k / kg) * cg + c;
              double level = unipolar_level(x[((n * C + ci) * H + iy) * W + ix], B) / (double)((1 << B) - 1);
              s += (double)w[k * cg + c] * level;
              mag += fabs((double)w[k * cg + c]) * level;
            }
            if (gc->act == 1 && s < 0.0) s = 0.0;
            if (gc->act == 2) s = s < gc->lo ? gc->lo : s > gc->hi ? gc->hi : s;
            double got = y[((n * K + k) * OH + oy) * OW + ox];
            if (fabs(got - s) > 1e-5 * (mag + 1.0) && bad++ == 0)
              printf("\n  unpack + conv C=%d K=%d B=%d%s: y[%d, %d, %d, %d] = %.9g, want %.9g\n", C, K, B,
                     nchw ? " binary_nchw" : "", n, k, oy, ox, got, s);
          }
    CU_ASSERT_EQUAL(bad, 0);
    tsl_graph_ctx_free(ctx);
    tsl_graph_plan_free(plan);
  }
  tsl_graph_free(g);
  free(x);
  free(w);
  free(bias);
}

/* The pass rewrites 1x1 stride-1 unpadded convs of one group over unpacked levels (with
 * and without bias, with ReLU, Clip or nothing, 1 and 2 planes, channel counts off the
 * group, the word and the block, 1 and 2 images), through the blocked unpack and through
 * the plain one's transform (binary_nchw); it keeps a stride-2 conv, a padded one and a
 * grouped one; every output equals the reference either way. */
static void test_lut_conv_pass_rewrites_unpacked_1x1_convs_only(void) {
  static const graph_case cases[] = {
      {1, 70, 5, 7, 1, 19, 1, 0, 1, true, 1, 0.0, 0.0, 1},
      {2, 33, 4, 3, 2, 8, 1, 0, 1, false, 0, 0.0, 0.0, 1},
      {1, 128, 6, 6, 2, 40, 1, 0, 1, true, 2, -0.2, 0.3, 1},
      {1, 70, 5, 7, 1, 19, 2, 0, 1, true, 1, 0.0, 0.0, 0},
      {1, 64, 4, 4, 1, 16, 1, 1, 1, true, 0, 0.0, 0.0, 0},
      {1, 64, 4, 4, 2, 16, 1, 0, 2, true, 1, 0.0, 0.0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_graph(&cases[i]);
}

void tsl_tests_binary_lutconv(void) {
  CU_pSuite s = CU_add_suite("binary_lutconv", suite_init, suite_clean);
  CU_add_test(s, "test_C14_lutconv_channel_tails_planes_and_activations",
              test_C14_lutconv_channel_tails_planes_and_activations);
  CU_add_test(s, "test_lutconv_classifier_layer_threads_identical", test_lutconv_classifier_layer_threads_identical);
  CU_add_test(s, "test_lut_conv_pass_rewrites_unpacked_1x1_convs_only",
              test_lut_conv_pass_rewrites_unpacked_1x1_convs_only);
}
