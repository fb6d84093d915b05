/* The bit im2col pass (models/passes/bit_im2col.h): bitserial convs of at most 32
 * channels over their window's taps packed into words, against the naive reference
 * executor (tests/ref/ref_binary_net.c, unpacked integer levels, no popcounts), and the
 * weight packing against a bit-by-bit reference. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary_test_util.h"
#include "models/compile.h"
#include "models/graph.h"
#include "models/passes/bit_im2col.h"
#include "ref/ref_binary_net.h"
#include "tessel/runtime.h"

static uint64_t rng;
static uint64_t rnd(void) { return bin_test_rng(&rng); }

static int suite_init(void) { return unsetenv("TSL_BIT_IM2COL"); }
static int suite_clean(void) { return 0; }

/* Bit c of tap t = r*S + s of output channel k lands at bit (t % T)*C + c of word t / T,
 * T = 64 / C, checked one bit at a time; the weight's bits past C (set at random here)
 * must not show. */
static void test_bit_im2col_weight_packs_taps_bit_by_bit(void) {
  static const int64_t shapes[][4] = {{16, 3, 3, 5}, {20, 3, 3, 3}, {8, 5, 5, 2}, {1, 3, 3, 4}, {32, 1, 3, 3}, {21, 7, 1, 2}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    int64_t C = shapes[i][0], R = shapes[i][1], S = shapes[i][2], K = shapes[i][3], T = 64 / C;
    int64_t words = (R * S + T - 1) / T;
    uint64_t *w = malloc((size_t)(R * S * K) * sizeof *w), *got = malloc((size_t)(words * K) * sizeof *got);
    rng = 70 + (uint64_t)i;
    for (int64_t j = 0; j < R * S * K; j++) w[j] = rnd();
    CU_ASSERT_EQUAL_FATAL(tsl_bit_im2col_weight(w, C, R, S, K, got), TSL_OK);
    int bad = 0;
    for (int64_t j = 0; j < words; j++)
      for (int64_t k = 0; k < K; k++)
        for (int bit = 0; bit < 64; bit++) {
          int64_t t = j * T + bit / C, c = bit % C;
          int want = bit / C < T && t < R * S ? (int)((w[t * K + k] >> c) & 1) : 0;
          if ((int)((got[j * K + k] >> bit) & 1) != want && bad++ == 0)
            printf("\n  C=%lld R=%lld S=%lld: word %lld channel %lld bit %d is %d, want %d\n", (long long)C,
                   (long long)R, (long long)S, (long long)j, (long long)k, bit, !want, want);
        }
    CU_ASSERT_EQUAL(bad, 0);
    free(w);
    free(got);
  }
  uint64_t w = 0, out = 0;
  CU_ASSERT_EQUAL(tsl_bit_im2col_weight(&w, 33, 3, 3, 1, &out), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_bit_im2col_weight(&w, 0, 3, 3, 1, &out), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_bit_im2col_weight(NULL, 16, 3, 3, 1, &out), TSL_ERR_INVALID);
}

typedef struct conv_case {
  int C, K, R, S, stride, pad_h, pad_w, B;
  int kind;     /* 0 packed; 1 requant_add (K == C, same size, the input's levels as residual); 2 requant */
  int rewritten; /* the pass's count */
} conv_case;

static bool chk(bool *ok, tsl_status st) {
  if (*ok && st != TSL_OK) {
    printf("\n  graph: %s\n", tsl_last_error());
    *ok = false;
  }
  return *ok;
}

static int add_const(tsl_graph *g, const char *name, tsl_dtype dt, int ndim, const int64_t *shape, bool *ok,
                     void **data) {
  tsl_tensor *t = NULL;
  int id = -1;
  if (!chk(ok, tsl_tensor_new(dt, ndim, shape, &t))) return -1;
  *data = t->data;
  chk(ok, tsl_graph_add_constant(g, name, t, &id));
  return id;
}

static int binary_node(tsl_graph *g, const char *name, const char *kernel, int n, const int *in, int np,
                       const char *const *pn, const int64_t *pv, bool *ok) {
  int out = -1, node = -1;
  if (!chk(ok, tsl_graph_add_value(g, name, &out))) return -1;
  if (!chk(ok, tsl_graph_add_node(g, TSL_OP_BINARY, name, n, in, 1, &out, &node))) return -1;
  chk(ok, tsl_graph_set_attr_string(g, node, "kernel", kernel));
  for (int i = 0; i < np && *ok; i++) chk(ok, tsl_graph_set_attr_int(g, node, pn[i], pv[i]));
  if (*ok) chk(ok, tsl_graph_infer_node(g, node));
  return out;
}

/* x f32 [1, C, H, W] -> bitpack (B planes) -> the conv (glue: levels spread over [0, L])
 * -> (requant_add: + the input's levels, clipped, packed back) -> unpacked f32 levels. */
static tsl_graph *conv_graph(const conv_case *cc, int H, int W) {
  tsl_graph *g = NULL;
  bool ok = true;
  int x = -1, L = (1 << cc->B) - 1, n = cc->C * cc->R * cc->S;
  int64_t xs[4] = {1, cc->C, H, W}, wsh[4] = {1, cc->R, cc->S, cc->K}, ks[1] = {cc->K};
  chk(&ok, tsl_graph_new("bit_im2col", &g));
  chk(&ok, tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, xs, &x));
  static const char *const bits_n[1] = {"bits"};
  int64_t bits_v[1] = {cc->B};
  int packed = binary_node(g, "pack", "bitpack_unipolar64", 1, &x, 1, bits_n, bits_v, &ok);
  void *wd = NULL, *sd = NULL, *bd = NULL;
  int wv = add_const(g, "conv.weight", TSL_DTYPE_U64, 4, wsh, &ok, &wd);
  int sv = add_const(g, "conv.shift", TSL_DTYPE_I32, 1, ks, &ok, &sd);
  int bv = add_const(g, "conv.bias", TSL_DTYPE_I32, 1, ks, &ok, &bd);
  if (!ok) {
    tsl_graph_free(g);
    return NULL;
  }
  /* every bit random, those past C too: the conv reads them against zero data bits */
  for (int64_t i = 0; i < cc->R * cc->S * cc->K; i++) ((uint64_t *)wd)[i] = rnd();
  int sh = 0;
  while ((1 << (2 * sh)) * (L + 1) * (L + 1) < n * L * L * 2) sh++; /* 2^sh ~ the dot's spread / levels */
  for (int k = 0; k < cc->K; k++) {
    ((int32_t *)sd)[k] = sh;
    ((int32_t *)bd)[k] = (int32_t)((int64_t)(rnd() % (uint64_t)((L + 1) << sh)) - ((int64_t)1 << sh) / 2);
  }
  static const char *const conv_n[6] = {"C", "stride_h", "stride_w", "pad_h", "pad_w", "bits"};
  int64_t conv_v[6] = {cc->C, cc->stride, cc->stride, cc->pad_h, cc->pad_w, cc->B};
  int y;
  if (cc->kind) {
    int lv = cc->kind == 1 ? binary_node(g, "levels", "quantize_unipolar_i32", 1, &x, 1, bits_n, bits_v, &ok) : -1;
    int in[5] = {packed, wv, sv, bv, lv};
    static const char *const add_n[6] = {"C", "stride_h", "stride_w", "pad_h", "pad_w", "qmax"};
    int64_t add_v[6] = {cc->C, cc->stride, cc->stride, cc->pad_h, cc->pad_w, 2 * L};
    int s = binary_node(g, "conv",
                        cc->kind == 1 ? "bitserial_conv2d_unipolar64_requant_add" : "bitserial_conv2d_unipolar64_requant",
                        cc->kind == 1 ? 5 : 4, in, 6, add_n, add_v, &ok);
    static const char *const pk_n[2] = {"bits", "shift"};
    int64_t pk_v[2] = {cc->B, 1};
    y = binary_node(g, "conv.pack", "bitpack_unipolar64_i32", 1, &s, 2, pk_n, pk_v, &ok);
  } else {
    int in[4] = {packed, wv, sv, bv};
    y = binary_node(g, "conv", "bitserial_conv2d_unipolar64_packed", 4, in, 6, conv_n, conv_v, &ok);
  }
  static const char *const c_n[1] = {"C"};
  int64_t c_v[1] = {cc->K};
  int out = binary_node(g, "unpack", "bitunpack_unipolar64", 1, &y, 1, c_n, c_v, &ok);
  if (ok) chk(&ok, tsl_graph_add_output(g, out));
  if (!ok) {
    tsl_graph_free(g);
    return NULL;
  }
  return g;
}

/* Every case: the pass's count, and every output level equal to the reference's; the
 * outputs take more than one level (the glue does not clip everything to one end). */
static void check_case(const conv_case *cc) {
  const int H = 13, W = 11;
  rng = 500 + (uint64_t)(cc->C * 7 + cc->R * 3 + cc->S + cc->stride + cc->B);
  tsl_graph *g = conv_graph(cc, H, W);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  float *x = malloc((size_t)(cc->C * H * W) * sizeof *x);
  for (int i = 0; i < cc->C * H * W; i++) x[i] = (float)(2.0 * (double)(rnd() % 17) - 3.0) / 24.0f;
  int OH = (H + 2 * cc->pad_h - cc->R) / cc->stride + 1, OW = (W + 2 * cc->pad_w - cc->S) / cc->stride + 1;
  int64_t nout = (int64_t)cc->K * OH * OW;
  float *ref = malloc((size_t)nout * sizeof *ref);
  CU_ASSERT_EQUAL_FATAL(ref_binary_net_run(g, x, ref, nout), TSL_OK);
  for (int nchw = 0; nchw < 2; nchw++) {
    tsl_graph_plan *plan = NULL;
    tsl_graph_ctx *ctx = NULL;
    tsl_compile_stats stats;
    tsl_compile_options co = {.binary_nchw = nchw == 1};
    tsl_status st = tsl_graph_compile(g, &co, &plan, &stats);
    if (st != TSL_OK) printf("\n  %s\n", tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    CU_ASSERT_EQUAL(stats.bit_im2col_convs, cc->rewritten);
    if (stats.bit_im2col_convs != cc->rewritten)
      printf("\n  C=%d %dx%d: %d rewritten, want %d\n", cc->C, cc->R, cc->S, stats.bit_im2col_convs, cc->rewritten);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(plan, &ctx), TSL_OK);
    memcpy(tsl_graph_ctx_input(ctx, 0), x, (size_t)(cc->C * H * W) * sizeof *x);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx, NULL), TSL_OK);
    const float *y = tsl_graph_ctx_output(ctx, 0);
    int bad = 0, distinct = 0;
    for (int64_t i = 0; i < nout; i++) {
      if (y[i] != ref[i] && bad++ == 0)
        printf("\n  C=%d K=%d %dx%d s%d p%d,%d B=%d%s%s: y[%lld] = %g, want %g\n", cc->C, cc->K, cc->R, cc->S,
               cc->stride, cc->pad_h, cc->pad_w, cc->B, cc->kind == 1 ? " requant_add" : cc->kind == 2 ? " requant" : "",
               nchw ? " binary_nchw" : "",
               (long long)i, y[i], ref[i]);
      distinct += i > 0 && ref[i] != ref[0];
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(distinct > 0);
    tsl_graph_ctx_free(ctx);
    tsl_graph_plan_free(plan);
  }
  tsl_graph_free(g);
  free(x);
  free(ref);
}

/* Rewritten: channels that fill a word 64 / C times (16, 8, 32, 1) or leave bits free
 * (20: 3 taps in 60 bits, 24: 2 in 48), windows 3x3, 5x5, 1x3, 7x1, strides 1 and 2,
 * padding on both sides, one side, none, 1 and 2 planes, the packed, the residual and the
 * plain requantizing convs (the i32 ones channels-last by default, NCHW with binary_nchw). Kept: 33 and 40 channels
 * (one tap per word), a 1x1 window. */
static void test_bit_im2col_pass_narrow_convs_match_reference(void) {
  static const conv_case cases[] = {
      {16, 19, 3, 3, 1, 1, 1, 2, 0, true}, {20, 19, 3, 3, 2, 1, 1, 1, 0, true}, {8, 19, 5, 5, 2, 2, 2, 2, 0, true},
      {1, 19, 3, 3, 1, 0, 0, 1, 0, true},  {32, 19, 1, 3, 1, 0, 1, 2, 0, true}, {12, 19, 7, 1, 1, 3, 0, 2, 0, true},
      {24, 24, 3, 3, 1, 1, 1, 2, 1, true},  {32, 32, 3, 3, 1, 1, 1, 1, 1, true},  {12, 19, 3, 3, 2, 1, 1, 2, 2, true},
      {33, 19, 3, 3, 1, 1, 1, 2, 0, false}, {40, 40, 3, 3, 1, 1, 1, 2, 1, false}, {16, 19, 1, 1, 1, 0, 0, 2, 0, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

void tsl_tests_binary_bit_im2col(void) {
  CU_pSuite s = CU_add_suite("binary_bit_im2col", suite_init, suite_clean);
  CU_add_test(s, "test_bit_im2col_weight_packs_taps_bit_by_bit", test_bit_im2col_weight_packs_taps_bit_by_bit);
  CU_add_test(s, "test_bit_im2col_pass_narrow_convs_match_reference", test_bit_im2col_pass_narrow_convs_match_reference);
}
