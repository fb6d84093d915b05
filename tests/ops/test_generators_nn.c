/* Generated operators (ops/op_call.h) of the compute kinds: pool2d plain and blocked,
 * elemwise with broadcasting, conv2d with its fused epilogue, gemm and dense_packed,
 * blocked batch norm, channel shuffle and activations, run through the DSL interpreter
 * (and, for the data-movement and broadcasting ones, compiled with the default schedule) against the naive
 * references of tests/ref (ref_nn.h, ref_ops2.h, ref_activation.h) on random data. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gen_check.h"
#include "ops/nn/generators.h"
#include "ops/op_call.h"
#include "ops/ops_util.h"
#include "ref/ref_activation.h"
#include "ref/ref_nn.h"
#include "ref/ref_ops2.h"

#define T4(a, b, c, d) (const int64_t[]){a, b, c, d}

/* The blocks a blocked test runs at: 4 and the host's f32 lanes (8 or 16). */
static int64_t block_at(int i) { return i == 0 ? 4 : ops_lanes(); }

static float *zeros(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static float *blocked_copy(const float *x, int64_t N, int64_t C, int64_t H, int64_t W, int64_t X) {
  float *b = malloc(sizeof(float) * (size_t)(N * ((C + X - 1) / X) * H * W * X));
  ref2_to_nchwc(x, N, C, H, W, X, 0.0f, b);
  return b;
}

typedef struct pool_case {
  bool max, include_pad;
  int64_t kh, kw, sh, sw, dh, dw, pads[4];
} pool_case;

/* The pool2d call of pc over x [N, C, H, W] (block X or 0) into [N, C, OH, OW], and the
 * reference output (NCHW) into want. */
static tsl_op_call pool_call(const pool_case *pc, const ref_nn_window *w, const float *x, int X, float *want) {
  tsl_op_call c = {0};
  tsl_op_call_add_tensor(&c, 4, T4(w->n, w->c, w->h, w->w), X);
  c.ninputs = 1;
  tsl_op_call_add_tensor(&c, 4, T4(w->n, w->c, w->oh, w->ow), X);
  tsl_op_call_set_string(&c, "mode", pc->max ? "max" : "avg");
  tsl_op_call_set_ints(&c, "kernel", 2, (const int64_t[]){pc->kh, pc->kw});
  tsl_op_call_set_ints(&c, "strides", 2, (const int64_t[]){pc->sh, pc->sw});
  tsl_op_call_set_ints(&c, "dilations", 2, (const int64_t[]){pc->dh, pc->dw});
  tsl_op_call_set_ints(&c, "pads", 4, pc->pads);
  tsl_op_call_set_int(&c, "count_include_pad", pc->include_pad);
  if (pc->max) ref_nn_maxpool2d(w, x, want);
  else ref_nn_avgpool2d(w, x, pc->include_pad, want);
  return c;
}

static ref_nn_window window_of(const pool_case *pc, int64_t N, int64_t C, int64_t H, int64_t W) {
  ref_nn_window w = {N, C, H, W, pc->kh, pc->kw, pc->sh, pc->sw, pc->pads[0], pc->pads[1], pc->pads[2], pc->pads[3],
                     pc->dh, pc->dw, 0, 0};
  w.oh = ref_nn_window_out(H, w.pad_t, w.pad_b, w.kh, w.stride_h, w.dil_h, false);
  w.ow = ref_nn_window_out(W, w.pad_l, w.pad_r, w.kw, w.stride_w, w.dil_w, false);
  return w;
}

static const pool_case pool_cases[] = {
    {true, false, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}},  /* ResNet's stem pool */
    {true, false, 2, 3, 1, 2, 2, 1, {0, 1, 1, 0}},  /* dilated, asymmetric padding */
    {false, false, 3, 2, 1, 2, 1, 1, {1, 0, 0, 1}}, /* average over the taps inside the input */
    {false, true, 3, 3, 2, 1, 1, 1, {1, 1, 1, 1}},  /* average counting the padding */
};

static void test_pool2d_plain_matches_reference(void) {
  int64_t N = 2, C = 3, H = 7, W = 6;
  float *x = gen_randoms(N * C * H * W, 1000);
  for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
    ref_nn_window w = window_of(&pool_cases[i], N, C, H, W);
    int64_t n = N * C * w.oh * w.ow;
    float *want = zeros(n), *y = zeros(n), *bufs[2] = {x, y};
    tsl_op_call c = pool_call(&pool_cases[i], &w, x, 0, want);
    CU_ASSERT(gen_interpret("pool2d", &c, NULL, bufs));
    CU_ASSERT(gen_close("pool2d", y, want, n, 1e-6));
    free(want);
    free(y);
  }
  free(x);
}

/* C = 5 at blocks 4 and the lanes: the window moves over the blocked data, the padding
 * lanes stay zero (no window lies wholly in the padding). */
static void test_pool2d_blocked_matches_reference(void) {
  int64_t N = 1, C = 5, H = 6, W = 7;
  float *x = gen_randoms(N * C * H * W, 1010);
  for (int bi = 0; bi < 2; bi++)
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
      int64_t X = block_at(bi), CB = (C + X - 1) / X;
      ref_nn_window w = window_of(&pool_cases[i], N, C, H, W);
      int64_t n = N * CB * w.oh * w.ow * X;
      float *want = zeros(N * C * w.oh * w.ow), *bx = blocked_copy(x, N, C, H, W, X), *y = zeros(n);
      float *bufs[2] = {bx, y};
      tsl_op_call c = pool_call(&pool_cases[i], &w, x, (int)X, want);
      float *bwant = blocked_copy(want, N, C, w.oh, w.ow, X);
      CU_ASSERT(gen_interpret("pool2d", &c, NULL, bufs));
      CU_ASSERT(gen_close("pool2d blocked", y, bwant, n, 1e-6));
      free(want);
      free(bwant);
      free(bx);
      free(y);
    }
  free(x);
}

/* a op b with numpy broadcasting against ref2_broadcast (rank-5 shapes, leading 1s). */
static void check_broadcast(const char *op, char sym, int ra, const int64_t *as, int rb, const int64_t *bs, const char *label) {
  int64_t a5[5] = {1, 1, 1, 1, 1}, b5[5] = {1, 1, 1, 1, 1}, y5[5], ys[5];
  for (int d = 0; d < ra; d++) a5[5 - ra + d] = as[d];
  for (int d = 0; d < rb; d++) b5[5 - rb + d] = bs[d];
  int ry = ra > rb ? ra : rb;
  int64_t na = 1, nb = 1, n = 1;
  for (int d = 0; d < 5; d++) {
    y5[d] = a5[d] > b5[d] ? a5[d] : b5[d];
    na *= a5[d];
    nb *= b5[d];
    n *= y5[d];
  }
  for (int d = 0; d < ry; d++) ys[d] = y5[5 - ry + d];
  tsl_op_call c = {0};
  tsl_op_call_add_tensor(&c, ra, as, 0);
  tsl_op_call_add_tensor(&c, rb, bs, 0);
  c.ninputs = 2;
  tsl_op_call_add_tensor(&c, ry, ys, 0);
  tsl_op_call_set_string(&c, "op", op);
  float *a = gen_randoms(na, 1020), *b = gen_randoms(nb, 1021), *y = zeros(n), *want = zeros(n);
  float *bufs[3] = {a, b, y};
  ref2_broadcast(a, a5, b, b5, sym, 0, 0.0, 0.0, want);
  CU_ASSERT(gen_interpret("elemwise", &c, label, bufs));
  CU_ASSERT(gen_close(op, y, want, n, 1e-6));
  for (int64_t e = 0; e < n; e++) y[e] = -7.0f;
  CU_ASSERT(gen_compile_run("elemwise", &c, label, bufs));
  CU_ASSERT(gen_close(op, y, want, n, 1e-6));
  free(a);
  free(b);
  free(y);
  free(want);
}

static void test_elemwise_broadcast_matches_reference(void) {
  check_broadcast("add", '+', 4, T4(2, 3, 4, 5), 3, (const int64_t[]){3, 1, 1}, "add_bcast"); /* a bias per channel */
  check_broadcast("mul", '*', 4, T4(2, 3, 4, 5), 4, T4(2, 3, 1, 1), "mul_bcast");             /* squeeze-excite */
  check_broadcast("mul", '*', 2, (const int64_t[]){1, 5}, 2, (const int64_t[]){4, 1}, "mul_bcast"); /* both ways */
  check_broadcast("add", '+', 2, (const int64_t[]){4, 5}, 0, NULL, "add_bcast");              /* a scalar */
  check_broadcast("add", '+', 3, (const int64_t[]){2, 3, 4}, 3, (const int64_t[]){2, 3, 4}, "add"); /* flat */
  /* rank 5 (an NCHW[x]c-shaped tensor): a per-channel vector, both sides broadcasting, a row */
  check_broadcast("add", '+', 5, (const int64_t[]){1, 2, 3, 5, 8}, 5, (const int64_t[]){1, 2, 1, 1, 8}, "add_bcast");
  check_broadcast("mul", '*', 5, (const int64_t[]){2, 1, 4, 1, 3}, 5, (const int64_t[]){1, 3, 1, 5, 1}, "mul_bcast");
  check_broadcast("mul", '*', 5, (const int64_t[]){1, 1, 1, 1, 7}, 5, (const int64_t[]){2, 3, 4, 5, 7}, "mul_bcast");
}

/* Grouped, strided, dilated, asymmetrically padded conv with bias, residual and a clip
 * (and a depthwise one with relu) against ref2_conv_point. */
static void test_conv2d_with_epilogue_matches_reference(void) {
  static const ref2_conv convs[] = {
      {1, 4, 7, 6, 6, 3, 2, 2, 1, 1, 2, 0, 1, 1, 2, 2, 2, -0.5, 0.7},
      {2, 3, 5, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 0.0, 0.0},
  };
  for (int i = 0; i < 2; i++) {
    const ref2_conv *p = &convs[i];
    int64_t OH = ref2_conv_oh(p), OW = ref2_conv_ow(p), CG = p->C / p->groups, no = p->N * p->K * OH * OW;
    tsl_op_call c = {0};
    tsl_op_call_add_tensor(&c, 4, T4(p->N, p->C, p->H, p->W), 0);
    tsl_op_call_add_tensor(&c, 4, T4(p->K, CG, p->R, p->S), 0);
    tsl_op_call_add_tensor(&c, 1, &p->K, 0);
    tsl_op_call_add_tensor(&c, 4, T4(p->N, p->K, OH, OW), 0);
    c.ninputs = 4;
    tsl_op_call_add_tensor(&c, 4, T4(p->N, p->K, OH, OW), 0);
    tsl_op_call_set_ints(&c, "strides", 2, (const int64_t[]){p->sh, p->sw});
    tsl_op_call_set_ints(&c, "dilations", 2, (const int64_t[]){p->dh, p->dw});
    tsl_op_call_set_ints(&c, "pads", 4, (const int64_t[]){p->pt, p->pl, p->pb, p->pr});
    tsl_op_call_set_int(&c, "group", p->groups);
    tsl_op_call_set_int(&c, "bias", 1);
    tsl_op_call_set_int(&c, "residual", 1);
    tsl_op_call_set_string(&c, "activation", p->act == 1 ? "relu" : "clip");
    tsl_op_call_set_float(&c, "clip_min", p->lo);
    tsl_op_call_set_float(&c, "clip_max", p->hi);
    float *x = gen_randoms(p->N * p->C * p->H * p->W, 1030), *w = gen_randoms(p->K * CG * p->R * p->S, 1031);
    float *bias = gen_randoms(p->K, 1032), *res = gen_randoms(no, 1033), *y = zeros(no), *want = zeros(no);
    float *bufs[5] = {x, w, bias, res, y};
    for (int64_t n = 0, e = 0; n < p->N; n++)
      for (int64_t k = 0; k < p->K; k++)
        for (int64_t oy = 0; oy < OH; oy++)
          for (int64_t ox = 0; ox < OW; ox++) want[e++] = (float)ref2_conv_point(p, x, w, bias, res, n, k, oy, ox);
    CU_ASSERT(gen_interpret("conv2d", &c, i == 0 ? "conv2d_g_3x2_s2_p1_bias_add_clip" : "conv2d_dw_3x3_s1_p1_bias_add_relu",
                            bufs));
    CU_ASSERT(gen_close("conv2d", y, want, no, 1e-5));
    for (int b = 0; b < 5; b++) free(bufs[b]);
    free(want);
  }
}

/* y = 0.5 * a^T w^T + 2 * c (c a row broadcast), and the same product with the weight
 * packed [N/Y, K, Y] (dense_packed), against ref_nn_gemm. */
static void test_gemm_and_dense_packed_match_reference(void) {
  int64_t M = 3, K = 5, N = 8, Y = 4;
  float *a = gen_randoms(K * M, 1040), *w = gen_randoms(N * K, 1041), *bias = gen_randoms(N, 1042);
  float *want = zeros(M * N), *y = zeros(M * N), *packed = zeros(N * K);
  ref_nn_gemm(a, w, bias, 1, &N, M, N, K, true, true, 0.5, 2.0, want);
  tsl_op_call c = {0};
  tsl_op_call_add_tensor(&c, 2, (const int64_t[]){K, M}, 0);
  tsl_op_call_add_tensor(&c, 2, (const int64_t[]){N, K}, 0);
  tsl_op_call_add_tensor(&c, 1, &N, 0);
  c.ninputs = 3;
  tsl_op_call_add_tensor(&c, 2, (const int64_t[]){M, N}, 0);
  tsl_op_call_set_int(&c, "transA", 1);
  tsl_op_call_set_int(&c, "transB", 1);
  tsl_op_call_set_float(&c, "alpha", 0.5);
  tsl_op_call_set_float(&c, "beta", 2.0);
  CU_ASSERT(gen_interpret("gemm", &c, "dense_bias", (float *[]){a, w, bias, y}));
  CU_ASSERT(gen_close("gemm", y, want, M * N, 1e-5));
  /* packed: P[ob, k, o] = W'[k, ob*Y + o] with W' = w^T ([K, N]) */
  for (int64_t ob = 0; ob < N / Y; ob++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t o = 0; o < Y; o++) packed[(ob * K + k) * Y + o] = w[(ob * Y + o) * K + k];
  c.args[1] = (tsl_op_tensor){3, {N / Y, K, Y}, 0};
  memset(y, 0, sizeof(float) * (size_t)(M * N));
  CU_ASSERT(gen_interpret("dense_packed", &c, "dense_packed_bias", (float *[]){a, packed, bias, y}));
  CU_ASSERT(gen_close("dense_packed", y, want, M * N, 1e-5));
  free(a);
  free(w);
  free(bias);
  free(want);
  free(y);
  free(packed);
}

/* ShuffleNet's channel shuffle, plain and blocked at x = 4 and the lanes (channel counts
 * that fill the blocks and that do not), interpreted and compiled, against
 * ref2_channel_shuffle; padding lanes written 0. */
static void test_channel_shuffle_matches_reference(void) {
  static const int64_t cfg[][2] = {{6, 3}, {12, 2}, {9, 3}, {16, 4}};
  int64_t N = 2, H = 2, W = 3;
  for (int i = 0; i < 4; i++) {
    int64_t C = cfg[i][0], G = cfg[i][1];
    float *x = gen_randoms(N * C * H * W, 1100 + (uint64_t)i), *want = zeros(N * C * H * W);
    ref2_channel_shuffle(x, N, C, H, W, G, want);
    for (int bi = -1; bi < 2; bi++) {
      int64_t X = bi < 0 ? 0 : block_at(bi), n = X ? N * ((C + X - 1) / X) * H * W * X : N * C * H * W;
      tsl_op_call c = {0};
      tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
      c.ninputs = 1;
      tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
      tsl_op_call_set_int(&c, "group", G);
      float *bx = X ? blocked_copy(x, N, C, H, W, X) : x, *bwant = X ? blocked_copy(want, N, C, H, W, X) : want;
      float *y = zeros(n);
      char label[64];
      snprintf(label, sizeof label, "channel_shuffle%s_g%lld", X ? "_nchwc" : "", (long long)G);
      for (int run = 0; run < 2; run++) {
        for (int64_t e = 0; e < n; e++) y[e] = -7.0f;
        CU_ASSERT(run ? gen_compile_run("channel_shuffle", &c, label, (float *[]){bx, y})
                      : gen_interpret("channel_shuffle", &c, label, (float *[]){bx, y}));
        CU_ASSERT(gen_close(run ? "channel_shuffle compiled" : "channel_shuffle", y, bwant, n, 0.0));
      }
      if (X) {
        free(bx);
        free(bwant);
      }
      free(y);
    }
    free(x);
    free(want);
  }
}

/* One channel_gather piece: output channel o0 + k*os = input a's channel i0 + k*is. */
typedef struct gather_piece {
  int64_t a, o0, os, count, i0, is;
} gather_piece;

/* The gather written out channel by channel: the first piece holding a channel wins,
 * channels no piece holds are 0. x[a] is [N, cin[a], HW], y [N, C, HW]. */
static void naive_gather(const float *const *x, const int64_t *cin, const gather_piece *ps, int np, int64_t N,
                         int64_t C, int64_t HW, float *y) {
  for (int64_t e = 0; e < N * C * HW; e++) y[e] = 0.0f;
  for (int p = np - 1; p >= 0; p--)
    for (int64_t k = 0; k < ps[p].count; k++) {
      int64_t o = ps[p].o0 + k * ps[p].os, ci = ps[p].i0 + k * ps[p].is;
      for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < HW; i++) y[(n * C + o) * HW + i] = x[ps[p].a][(n * cin[ps[p].a] + ci) * HW + i];
    }
}

/* channel_gather from three inputs of 5, L + 3 and 2L channels (L the host's lanes) into
 * 2L + 9: a piece of whole blocks (dense copy), strided pieces, a reversed one, an
 * overlapped one (the first wins) and channels no piece holds (0); plain and blocked at
 * x = 4 and L, interpreted and compiled, against the naive loop. */
static void test_channel_gather_matches_reference(void) {
  int64_t L = ops_lanes(), N = 2, H = 2, W = 3, HW = H * W, cin[3] = {5, L + 3, 2 * L}, C = 2 * L + 9;
  const gather_piece ps[] = {{2, 0, 1, L, L, 1},         {1, L, 2, 3, 2, 1},     {0, L + 1, 2, 3, 4, -1},
                             {1, L + 6, 1, L, 3, 1},     {2, L + 6, 1, 2, 0, 1}, {0, 2 * L + 7, 1, 2, 0, 2}};
  int np = (int)(sizeof ps / sizeof ps[0]);
  float *x[3], *want = zeros(N * C * HW);
  for (int a = 0; a < 3; a++) x[a] = gen_randoms(N * cin[a] * HW, 1200 + (uint64_t)a);
  naive_gather((const float *const *)x, cin, ps, np, N, C, HW, want);
  for (int bi = -1; bi < 2; bi++) {
    int64_t X = bi < 0 ? 0 : block_at(bi), n = X ? N * ((C + X - 1) / X) * HW * X : N * C * HW;
    tsl_op_call c = {0};
    for (int a = 0; a < 3; a++) tsl_op_call_add_tensor(&c, 4, T4(N, cin[a], H, W), (int)X);
    c.ninputs = 3;
    tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
    tsl_op_call_set_int(&c, "npieces", np);
    for (int p = 0; p < np; p++)
      tsl_op_call_set_ints(&c, tsl_channel_gather_piece_name(p), 6,
                           (const int64_t[]){ps[p].a, ps[p].o0, ps[p].os, ps[p].count, ps[p].i0, ps[p].is});
    float *bx[3], *bwant = X ? blocked_copy(want, N, C, H, W, X) : want, *y = zeros(n);
    for (int a = 0; a < 3; a++) bx[a] = X ? blocked_copy(x[a], N, cin[a], H, W, X) : x[a];
    char label[64];
    snprintf(label, sizeof label, "channel_gather3_p%d%s", np, X ? "_nchwc" : "");
    for (int run = 0; run < 2; run++) {
      for (int64_t e = 0; e < n; e++) y[e] = -7.0f;
      float *bufs[4] = {bx[0], bx[1], bx[2], y};
      CU_ASSERT(run ? gen_compile_run("channel_gather", &c, label, bufs) : gen_interpret("channel_gather", &c, label, bufs));
      CU_ASSERT(gen_close(run ? "channel_gather compiled" : "channel_gather", y, bwant, n, 0.0));
    }
    if (X) {
      for (int a = 0; a < 3; a++) free(bx[a]);
      free(bwant);
    }
    free(y);
  }
  /* a piece past the output or an input is refused with a message, not run */
  tsl_op_call bad = {0};
  tsl_op_call_add_tensor(&bad, 4, T4(1, 4, 1, 1), 0);
  bad.ninputs = 1;
  tsl_op_call_add_tensor(&bad, 4, T4(1, 4, 1, 1), 0);
  tsl_op_call_set_int(&bad, "npieces", 1);
  tsl_op_call_set_ints(&bad, "piece0", 6, (const int64_t[]){0, 0, 1, 4, 1, 1});
  tsl_op_text t = {0};
  CU_ASSERT_EQUAL(tsl_channel_gather_text(&bad, &t), TSL_ERR_INVALID);
  free(t.text.s);
  for (int a = 0; a < 3; a++) free(x[a]);
  free(want);
}

/* Batch norm of C = 5 channels, blocked: the parameters read at clamped channels, the
 * padding lanes written 0. */
static void test_batch_norm_blocked_matches_reference(void) {
  int64_t N = 2, C = 5, H = 3, W = 2;
  float *x = gen_randoms(N * C * H * W, 1050), *p[4], *want = zeros(N * C * H * W);
  for (int i = 0; i < 4; i++) p[i] = gen_randoms(C, 1051 + (uint64_t)i);
  for (int64_t i = 0; i < C; i++) p[3][i] = 0.5f + fabsf(p[3][i]); /* variances > 0 */
  ref_nn_batchnorm(x, N, C, H * W, p[0], p[1], p[2], p[3], 1e-3, want);
  for (int bi = 0; bi < 2; bi++) {
    int64_t X = block_at(bi), n = N * ((C + X - 1) / X) * H * W * X;
    tsl_op_call c = {0};
    tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
    for (int i = 0; i < 4; i++) tsl_op_call_add_tensor(&c, 1, &C, 0);
    c.ninputs = 5;
    tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
    tsl_op_call_set_float(&c, "epsilon", 1e-3);
    float *bx = blocked_copy(x, N, C, H, W, X), *bwant = blocked_copy(want, N, C, H, W, X), *y = zeros(n);
    for (int64_t e = 0; e < n; e++) y[e] = -7.0f;
    CU_ASSERT(gen_interpret("batch_norm", &c, "batch_norm_nchwc", (float *[]){bx, p[0], p[1], p[2], p[3], y}));
    CU_ASSERT(gen_close("batch_norm blocked", y, bwant, n, 1e-5));
    for (int64_t e = 0; e < n; e++) y[e] = -7.0f;
    CU_ASSERT(gen_compile_run("batch_norm", &c, "batch_norm_nchwc", (float *[]){bx, p[0], p[1], p[2], p[3], y}));
    CU_ASSERT(gen_close("batch_norm blocked compiled", y, bwant, n, 1e-5));
    free(bx);
    free(bwant);
    free(y);
  }
  for (int i = 0; i < 4; i++) free(p[i]);
  free(x);
  free(want);
}

/* HardSigmoid (f(0) = 0.5) blocked with C = 5: the channel-guarded form writes 0 in the
 * padding lanes; Tanh (f(0) = 0) runs flat. Against ref_activation (ONNX's formulas). */
static void test_activation_blocked_keeps_padding_lanes_zero(void) {
  static const char *const fns[] = {"HardSigmoid", "Tanh"};
  int64_t N = 1, C = 5, H = 2, W = 3;
  float *x = gen_randoms(N * C * H * W, 1060), *want = zeros(N * C * H * W);
  tsl_graph *g = NULL;
  int in, y, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("act", &g), TSL_OK);
  tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, T4(N, C, H, W), &in);
  tsl_graph_add_value(g, "y", &y);
  tsl_graph_add_node(g, TSL_OP_ACTIVATION, "act", 1, &in, 1, &y, &node);
  tsl_graph_set_attr_float(g, node, "alpha", 0.3);
  for (int f = 0; f < 2; f++)
    for (int bi = 0; bi < 2; bi++) {
      int64_t X = block_at(bi), n = N * ((C + X - 1) / X) * H * W * X;
      for (int64_t e = 0; e < N * C * H * W; e++) {
        double v;
        CU_ASSERT_FATAL(ref_activation(fns[f], &g->nodes[node], x[e], &v));
        want[e] = (float)v;
      }
      tsl_op_call c = {0};
      tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
      c.ninputs = 1;
      tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
      tsl_op_call_set_string(&c, "function", fns[f]);
      if (f == 0) tsl_op_call_set_float(&c, "alpha", 0.3);
      float *bx = blocked_copy(x, N, C, H, W, X), *bwant = blocked_copy(want, N, C, H, W, X), *out = zeros(n);
      for (int64_t e = 0; e < n; e++) out[e] = -7.0f;
      CU_ASSERT(gen_interpret("activation", &c, f == 0 ? "hard_sigmoid_nchwc" : "tanh_nchwc", (float *[]){bx, out}));
      CU_ASSERT(gen_close(fns[f], out, bwant, n, 1e-6));
      free(bx);
      free(bwant);
      free(out);
    }
  tsl_graph_free(g);
  free(x);
  free(want);
}

void ops_tests_generators_nn(CU_pSuite s) {
  CU_add_test(s, "test_pool2d_plain_matches_reference", test_pool2d_plain_matches_reference);
  CU_add_test(s, "test_pool2d_blocked_matches_reference", test_pool2d_blocked_matches_reference);
  CU_add_test(s, "test_elemwise_broadcast_matches_reference", test_elemwise_broadcast_matches_reference);
  CU_add_test(s, "test_conv2d_with_epilogue_matches_reference", test_conv2d_with_epilogue_matches_reference);
  CU_add_test(s, "test_gemm_and_dense_packed_match_reference", test_gemm_and_dense_packed_match_reference);
  CU_add_test(s, "test_batch_norm_blocked_matches_reference", test_batch_norm_blocked_matches_reference);
  CU_add_test(s, "test_channel_shuffle_matches_reference", test_channel_shuffle_matches_reference);
  CU_add_test(s, "test_channel_gather_matches_reference", test_channel_gather_matches_reference);
  CU_add_test(s, "test_activation_blocked_keeps_padding_lanes_zero", test_activation_blocked_keeps_padding_lanes_zero);
}
