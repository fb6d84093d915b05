/* Binary operators (ops/binary/binary.c) built with the default schedule and run, compared
 * bit for bit with the naive integer references (tests/ref/ref_binary.c). The packed
 * inputs the kernels need are built here by a naive per-bit packer from unpacked ints. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "binary_test_util.h"
#include "ref/ref_binary.h"
#include "ops/binary/bitserial.h"
#include "runtime/module.h"
#include "target/target.h"

static tsl_jit *jit;
static tsl_target host;
/* When set, run_op schedules bitserial convs with the template's default config. */
static int use_template;

static int suite_init(void) {
  if (tsl_target_parse("host", &host) != TSL_OK) return 1;
  return tsl_jit_new(&host, &jit) != TSL_OK;
}

static int suite_clean(void) {
  tsl_jit_free(jit);
  jit = NULL;
  return 0;
}

static uint64_t rng_state;
static uint64_t rng_next(void) { return bin_test_rng(&rng_state); }
static int rng_int(int n) { return (int)(rng_next() % (uint64_t)n); }

/* Instantiates op `name`, builds its default schedule (the template's default config for
 * bitserial convs with use_template) and runs it once on bufs (inputs then the output).
 * Returns 0 on success, printing the error otherwise. */
static int run_op(const char *name, int nin, const int64_t *const *shapes, const int *ndims, int nparams,
                  const tsl_dsl_param_value *params, void **bufs) {
  return bin_test_run_op(jit, &host, name, nin, shapes, ndims, nparams, params, use_template != 0, NULL, bufs);
}

/* Packs bit(v, p) of vals[N, C, H, W] into words [N, P, ceil(C/ws), H, W] (ws = 32 or 64),
 * channel w*ws+i in bit i of word w; channels past C stay 0. */
static void *pack(const int *vals, int64_t N, int64_t P, int64_t C, int64_t H, int64_t W, int ws,
                  int (*bit)(int v, int plane)) {
  int64_t CW = (C + ws - 1) / ws;
  void *out = bin_test_zalloc((size_t)(N * P * CW * H * W) * (size_t)(ws / 8));
  for (int64_t n = 0; n < N; n++)
    for (int64_t p = 0; p < P; p++)
      for (int64_t c = 0; c < C; c++)
        for (int64_t y = 0; y < H; y++)
          for (int64_t x = 0; x < W; x++) {
            if (!bit(vals[((n * C + c) * H + y) * W + x], (int)p)) continue;
            int64_t word = (((n * P + p) * CW + c / ws) * H + y) * W + x;
            if (ws == 32)
              ((uint32_t *)out)[word] |= (uint32_t)1 << (c % ws);
            else
              ((uint64_t *)out)[word] |= (uint64_t)1 << (c % ws);
          }
  return out;
}
/* vals are unpacked per (n, c, y, x), without a plane axis: plane p takes bit(v, p). */
static int bipolar_bit(int v, int plane) { return (void)plane, v < 0; }
static int level_bit(int v, int plane) { return (v >> plane) & 1; }

static int words_equal(const void *a, const void *b, int64_t n, int ws) {
  return memcmp(a, b, (size_t)n * (size_t)(ws / 8)) == 0;
}

/* ---- bitpack ---- */

static void check_bitpack(int64_t N, int64_t C, int64_t H, int64_t W, int ws, int unipolar, int bits) {
  int64_t n = N * C * H * W;
  float *x = bin_test_zalloc((size_t)n * sizeof(float));
  int *v = bin_test_zalloc((size_t)n * sizeof(int));
  for (int64_t i = 0; i < n; i++) {
    int r = rng_int(8);
    /* exact 0.0, -0.0 and the level thresholds appear often */
    x[i] = r == 0 ? 0.0f : r == 1 ? -0.0f : r == 2 ? 0.5f / (float)((1 << bits) - 1)
                                                   : (float)(rng_next() % 20001) / 10000.0f - 1.0f + 0.25f;
    v[i] = unipolar ? ref_bin_unipolar(x[i], bits) : ref_bin_bipolar(x[i]);
  }
  int P = unipolar ? bits : 1;
  void *want = pack(v, N, P, C, H, W, ws, unipolar ? level_bit : bipolar_bit);
  int64_t CW = (C + ws - 1) / ws, nout = N * P * CW * H * W;
  void *got = bin_test_zalloc((size_t)nout * (size_t)(ws / 8));
  memset(got, 0xa5, (size_t)nout * (size_t)(ws / 8));
  int64_t shape[4] = {N, C, H, W};
  const int64_t *shapes[1] = {shape};
  int ndims[1] = {4};
  tsl_dsl_param_value prm = tsl_dsl_int_param("bits", bits);
  char name[64];
  snprintf(name, sizeof name, "bitpack_%s%d", unipolar ? "unipolar" : "bipolar", ws);
  void *bufs[2] = {x, got};
  int fail = run_op(name, 1, shapes, ndims, unipolar ? 1 : 0, &prm, bufs);
  CU_ASSERT_FALSE(fail);
  if (!fail) {
    int eq = words_equal(got, want, nout, ws);
    if (!eq) printf("\n  %s C=%lld bits=%d differs\n", name, (long long)C, bits);
    CU_ASSERT_TRUE(eq);
  }
  free(x);
  free(v);
  free(want);
  free(got);
}

static void test_bitpack_channel_tails_and_zero(void) {
  static const int64_t cs[] = {1, 3, 33, 65, 100};
  rng_state = 1;
  for (int i = 0; i < 5; i++)
    for (int ws = 32; ws <= 64; ws += 32) {
      check_bitpack(2, cs[i], 3, 5, ws, 0, 1);
      check_bitpack(1, cs[i], 5, 3, ws, 1, 1);
      check_bitpack(1, cs[i], 4, 3, ws, 1, 2);
    }
}

/* ---- bitserial conv2d ---- */

typedef struct bconv_case {
  int64_t N, C, H, W, K, R, S, sh, sw, ph, pw;
} bconv_case;

enum { MODE_BIPOLAR, MODE_UNIPOLAR, MODE_REQUANT, MODE_PACKED };

/* Runs one conv variant on random data (or on `fixed` data / weights when given) and
 * compares with the reference. mode/bits select the operator; qmax for MODE_REQUANT. */
static void check_bconv(const bconv_case *c, int ws, int mode, int bits, int64_t qmax, const int *fixed_a,
                        const int *fixed_w) {
  int64_t OH = (c->H + 2 * c->ph - c->R) / c->sh + 1, OW = (c->W + 2 * c->pw - c->S) / c->sw + 1;
  int64_t na = c->N * c->C * c->H * c->W, nw = c->K * c->C * c->R * c->S, nout = c->N * c->K * OH * OW;
  int *a = bin_test_zalloc((size_t)na * sizeof(int)), *w = bin_test_zalloc((size_t)nw * sizeof(int));
  int L = (1 << bits) - 1;
  for (int64_t i = 0; i < na; i++)
    a[i] = fixed_a ? fixed_a[i] : mode == MODE_UNIPOLAR ? rng_int(L + 1) : (rng_int(2) ? 1 : -1);
  for (int64_t i = 0; i < nw; i++) w[i] = fixed_w ? fixed_w[i] : (rng_int(2) ? 1 : -1);
  int P = mode == MODE_UNIPOLAR ? bits : 1;
  void *pa = pack(a, c->N, P, c->C, c->H, c->W, ws, mode == MODE_UNIPOLAR ? level_bit : bipolar_bit);
  void *pw = pack(w, c->K, 1, c->C, c->R, c->S, ws, bipolar_bit);
  int64_t *ref = bin_test_zalloc((size_t)nout * sizeof(int64_t));
  ref_bin_conv2d(c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->sh, c->sw, c->ph, c->pw, a, w, ref);
  /* kernel arguments are 64-byte aligned (runtime/module.h) */
  _Alignas(64) int32_t shift[4096], bias[4096];
  for (int64_t k = 0; k < c->K; k++) {
    shift[k] = rng_int(6);
    bias[k] = rng_int(101) - 50;
  }
  int64_t CW = (c->C + ws - 1) / ws, KW = (c->K + ws - 1) / ws;
  int64_t da4[4] = {c->N, CW, c->H, c->W}, da5[5] = {c->N, bits, CW, c->H, c->W}, dw[4] = {c->K, CW, c->R, c->S},
          dk[1] = {c->K};
  const int64_t *shapes[4] = {mode == MODE_UNIPOLAR ? da5 : da4, dw, dk, dk};
  int ndims[4] = {mode == MODE_UNIPOLAR ? 5 : 4, 4, 1, 1};
  tsl_dsl_param_value prm[6] = {tsl_dsl_int_param("C", c->C),          tsl_dsl_int_param("stride_h", c->sh),
                                tsl_dsl_int_param("stride_w", c->sw),  tsl_dsl_int_param("pad_h", c->ph),
                                tsl_dsl_int_param("pad_w", c->pw),
                                mode == MODE_PACKED ? tsl_dsl_int_param("bits", bits)
                                                    : tsl_dsl_int_param("qmax", qmax)};
  char name[64];
  static const char *const suffix[] = {"bipolar%d", "unipolar%d", "bipolar%d_requant", "bipolar%d_packed"};
  char fmt[64];
  snprintf(fmt, sizeof fmt, "bitserial_conv2d_%s", suffix[mode]);
  snprintf(name, sizeof name, fmt, ws);
  int64_t got_n = mode == MODE_PACKED ? c->N * bits * KW * OH * OW : nout;
  size_t got_bytes = (size_t)got_n * (mode == MODE_PACKED ? (size_t)(ws / 8) : sizeof(int32_t));
  void *got = bin_test_zalloc(got_bytes);
  memset(got, 0xa5, got_bytes);
  int nin = mode >= MODE_REQUANT ? 4 : 2;
  void *bufs[5] = {pa, pw, shift, bias, NULL};
  bufs[nin] = got;
  int fail = run_op(name, nin, shapes, ndims, mode >= MODE_REQUANT ? 6 : 5, prm, bufs);
  CU_ASSERT_FALSE(fail);
  if (!fail) {
    int bad = 0;
    if (mode == MODE_PACKED) {
      int *q = bin_test_zalloc((size_t)nout * sizeof(int));
      for (int64_t n = 0; n < c->N; n++)
        for (int64_t k = 0; k < c->K; k++)
          for (int64_t i = 0; i < OH * OW; i++) {
            int64_t o = (n * c->K + k) * OH * OW + i;
            q[o] = (int)ref_bin_glue(ref[o], bias[k], shift[k], L);
          }
      void *want = pack(q, c->N, bits, c->K, OH, OW, ws, level_bit);
      bad = !words_equal(got, want, got_n, ws);
      free(q);
      free(want);
    } else {
      const int32_t *g = got;
      for (int64_t n = 0; n < c->N; n++)
        for (int64_t k = 0; k < c->K; k++)
          for (int64_t i = 0; i < OH * OW; i++) {
            int64_t o = (n * c->K + k) * OH * OW + i;
            int64_t want = mode == MODE_REQUANT ? ref_bin_glue(ref[o], bias[k], shift[k], qmax) : ref[o];
            if (g[o] != want && bad++ < 3)
              printf("\n  %s at %lld: %d, want %lld", name, (long long)o, g[o], (long long)want);
          }
    }
    if (bad)
      printf("\n  %s N%lld C%lld %lldx%lld K%lld %lldx%lld s%lld,%lld p%lld,%lld bits %d differs\n", name,
             (long long)c->N, (long long)c->C, (long long)c->H, (long long)c->W, (long long)c->K, (long long)c->R,
             (long long)c->S, (long long)c->sh, (long long)c->sw, (long long)c->ph, (long long)c->pw, bits);
    CU_ASSERT_EQUAL(bad, 0);
  }
  free(a);
  free(w);
  free(pa);
  free(pw);
  free(ref);
  free(got);
}

/* Channel tails (1, 3, 33, 65, 100), stride 2, 1x1, odd and non-square sizes, padding. */
static const bconv_case shapes_cases[] = {
    /* N  C    H   W   K  R  S sh sw ph pw */
    {1, 1, 5, 5, 3, 3, 3, 1, 1, 1, 1},   {1, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1},   {2, 33, 6, 5, 5, 3, 3, 2, 2, 1, 1},
    {1, 65, 5, 7, 3, 1, 1, 1, 1, 0, 0},  {1, 100, 9, 9, 2, 3, 3, 2, 2, 0, 0}, {1, 64, 8, 8, 4, 3, 3, 1, 1, 1, 1},
    {1, 32, 11, 3, 3, 1, 3, 1, 2, 0, 1}, {1, 17, 4, 4, 6, 4, 4, 1, 1, 2, 2},
};
enum { NSHAPES = sizeof shapes_cases / sizeof shapes_cases[0] };

static void test_bitserial_conv_bipolar_shapes(void) {
  rng_state = 2;
  for (int i = 0; i < NSHAPES; i++)
    for (int ws = 32; ws <= 64; ws += 32) check_bconv(&shapes_cases[i], ws, MODE_BIPOLAR, 1, 0, NULL, NULL);
}

static void test_bitserial_conv_unipolar_1_and_2_bits(void) {
  rng_state = 3;
  for (int i = 0; i < NSHAPES; i++)
    for (int ws = 32; ws <= 64; ws += 32)
      for (int bits = 1; bits <= 2; bits++) check_bconv(&shapes_cases[i], ws, MODE_UNIPOLAR, bits, 0, NULL, NULL);
}

static void test_fused_glue_equals_integer_formula(void) {
  rng_state = 4;
  for (int i = 0; i < NSHAPES; i++)
    for (int ws = 32; ws <= 64; ws += 32) {
      check_bconv(&shapes_cases[i], ws, MODE_REQUANT, 1, 3, NULL, NULL);
      check_bconv(&shapes_cases[i], ws, MODE_PACKED, 1 + (i & 1), 0, NULL, NULL);
    }
}

/* The template's default config (vectorized popcount over output columns, unrolled
 * window, parallel k) on every conv variant and shape. */
static void test_bitserial_template_default_config(void) {
  rng_state = 8;
  use_template = 1;
  for (int i = 0; i < NSHAPES; i++) {
    int ws = i & 1 ? 32 : 64;
    check_bconv(&shapes_cases[i], ws, MODE_BIPOLAR, 1, 0, NULL, NULL);
    check_bconv(&shapes_cases[i], ws, MODE_UNIPOLAR, 2, 0, NULL, NULL);
    check_bconv(&shapes_cases[i], ws, MODE_REQUANT, 1, 3, NULL, NULL);
    check_bconv(&shapes_cases[i], ws, MODE_PACKED, 2, 0, NULL, NULL);
  }
  use_template = 0;
}

static void test_bitserial_template_rejects_bad_knobs(void) {
  tsl_bitserial_knobs k = tsl_bitserial_default_knobs(&host, 3, 3);
  CU_ASSERT_EQUAL(tsl_bitserial_knobs_check(&k), TSL_OK);
  k.tile_x = 0;
  CU_ASSERT_EQUAL(tsl_bitserial_knobs_check(&k), TSL_ERR_INVALID);
  k.tile_x = 1;
  k.vectorize = true;
  CU_ASSERT_EQUAL(tsl_bitserial_knobs_check(&k), TSL_ERR_INVALID);
  k = tsl_bitserial_default_knobs(&host, 3, 3);
  k.fuse_rows = 2;
  CU_ASSERT_EQUAL(tsl_bitserial_knobs_check(&k), TSL_ERR_INVALID);
  k.fuse_rows = -1;
  CU_ASSERT_EQUAL(tsl_bitserial_knobs_check(&k), TSL_OK);
}

/* C14: exact 0.0 activations (and -0.0), C = 33, SAME padding: the tessel path (bitpack op
 * then conv op) in 32- and 64-bit words equals the reference on the +-1 values with
 * 0.0 -> +1, and the two word sizes agree. */
static void test_C14_bitpack_zero_sign_and_tail_same_padding(void) {
  enum { N = 1, C = 33, H = 7, W = 6, K = 5, R = 3 };
  _Alignas(64) static float x[N * C * H * W];
  static int a[N * C * H * W], w[K * C * R * R];
  rng_state = 14;
  for (int i = 0; i < N * C * H * W; i++) {
    int r = rng_int(3);
    x[i] = r == 0 ? 0.0f : r == 1 ? -0.0f : (float)(rng_int(2001) - 1000) / 1000.0f;
    a[i] = ref_bin_bipolar(x[i]);
  }
  CU_ASSERT_EQUAL(ref_bin_bipolar(0.0f), 1);
  CU_ASSERT_EQUAL(ref_bin_bipolar(-0.0f), 1);
  for (int i = 0; i < K * C * R * R; i++) w[i] = rng_int(2) ? 1 : -1;
  static int64_t ref[N * K * H * W];
  ref_bin_conv2d(N, C, H, W, K, R, R, 1, 1, 1, 1, a, w, ref);
  _Alignas(64) int32_t out[2][(N * K * H * W + 15) / 16 * 16];
  for (int v = 0; v < 2; v++) {
    int ws = v ? 64 : 32;
    int64_t CW = (C + ws - 1) / ws;
    void *packed = bin_test_zalloc((size_t)(N * CW * H * W) * (size_t)(ws / 8));
    int64_t sx[4] = {N, C, H, W};
    const int64_t *s1[1] = {sx};
    int nd1[1] = {4};
    char name[64];
    snprintf(name, sizeof name, "bitpack_bipolar%d", ws);
    void *b1[2] = {x, packed};
    CU_ASSERT_FALSE(run_op(name, 1, s1, nd1, 0, NULL, b1));
    void *pw = pack(w, K, 1, C, R, R, ws, bipolar_bit);
    int64_t sa[4] = {N, CW, H, W}, sw[4] = {K, CW, R, R};
    const int64_t *s2[2] = {sa, sw};
    int nd2[2] = {4, 4};
    tsl_dsl_param_value prm[3] = {tsl_dsl_int_param("C", C), tsl_dsl_int_param("pad_h", 1),
                                  tsl_dsl_int_param("pad_w", 1)};
    snprintf(name, sizeof name, "bitserial_conv2d_bipolar%d", ws);
    void *b2[3] = {packed, pw, out[v]};
    CU_ASSERT_FALSE(run_op(name, 2, s2, nd2, 3, prm, b2));
    int bad = 0;
    for (int i = 0; i < N * K * H * W; i++) bad += out[v][i] != ref[i];
    CU_ASSERT_EQUAL(bad, 0);
    free(packed);
    free(pw);
  }
  CU_ASSERT_EQUAL(memcmp(out[0], out[1], (size_t)(N * K * H * W) * sizeof(int32_t)), 0);
}

/* C15: the bitserial conv followed by ReLU (shift 0, bias 0, no upper clip) and by bias +
 * requantize equals the unfused naive result (ref conv, then the glue on its output). */
static void test_C15_bitserial_conv_then_relu_and_requant(void) {
  rng_state = 15;
  enum { OH = 5, OW = 7, NOUT = 6 * OH * OW };
  static int a[40 * 9 * 7], w[6 * 40 * 9];
  for (int i = 0; i < 40 * 9 * 7; i++) a[i] = rng_int(2) ? 1 : -1;
  for (int i = 0; i < 6 * 40 * 9; i++) w[i] = rng_int(2) ? 1 : -1;
  static int64_t ref[NOUT];
  ref_bin_conv2d(1, 40, 9, 7, 6, 3, 3, 2, 1, 1, 1, a, w, ref);
  int64_t CW = 1;
  void *pa = pack(a, 1, 1, 40, 9, 7, 64, bipolar_bit), *pw = pack(w, 6, 1, 40, 3, 3, 64, bipolar_bit);
  int64_t sa[4] = {1, CW, 9, 7}, sw[4] = {6, CW, 3, 3}, sk[1] = {6};
  const int64_t *shapes[4] = {sa, sw, sk, sk};
  int nd[4] = {4, 4, 1, 1};
  _Alignas(64) int32_t zeros[16] = {0}, shift[16] = {1, 0, 2, 3, 1, 0}, bias[16] = {5, -7, 0, 12, -3, 1};
  _Alignas(64) int32_t got[NOUT];
  tsl_dsl_param_value prm[6] = {tsl_dsl_int_param("C", 40),     tsl_dsl_int_param("stride_h", 2),
                                tsl_dsl_int_param("pad_h", 1),  tsl_dsl_int_param("pad_w", 1),
                                tsl_dsl_int_param("qmax", 2147483647)};
  void *b1[5] = {pa, pw, zeros, zeros, got};
  CU_ASSERT_FALSE(run_op("bitserial_conv2d_bipolar64_requant", 4, shapes, nd, 5, prm, b1));
  int bad = 0, positive = 0;
  for (int i = 0; i < NOUT; i++) {
    bad += got[i] != (ref[i] > 0 ? ref[i] : 0);
    positive += ref[i] > 0;
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(positive > 0 && positive < NOUT); /* ReLU did something both ways */
  prm[4] = tsl_dsl_int_param("qmax", 3);
  void *b2[5] = {pa, pw, shift, bias, got};
  CU_ASSERT_FALSE(run_op("bitserial_conv2d_bipolar64_requant", 4, shapes, nd, 5, prm, b2));
  bad = 0;
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < OH * OW; i++) bad += got[k * OH * OW + i] != ref_bin_glue(ref[k * OH * OW + i], bias[k], shift[k], 3);
  CU_ASSERT_EQUAL(bad, 0);
  free(pa);
  free(pw);
}

/* C09's class for popcount sums: long reductions whose sums leave the 16-bit range
 * (C*R*S = 8200*9 = 73800), all-agree and all-disagree inputs plus random ones. */
static void test_C09_long_popcount_reduction_exact(void) {
  static const bconv_case c = {1, 8200, 3, 3, 2, 3, 3, 1, 1, 0, 0};
  int64_t na = 8200 * 9, nw = 2 * 8200 * 9;
  int *a = bin_test_zalloc((size_t)na * sizeof(int)), *w = bin_test_zalloc((size_t)nw * sizeof(int));
  for (int64_t i = 0; i < na; i++) a[i] = 1;
  for (int64_t i = 0; i < nw; i++) w[i] = i < nw / 2 ? 1 : -1; /* k=0 agrees everywhere, k=1 nowhere */
  int64_t ref[2];
  ref_bin_conv2d(1, 8200, 3, 3, 2, 3, 3, 1, 1, 0, 0, a, w, ref);
  CU_ASSERT_EQUAL(ref[0], 73800);
  CU_ASSERT_EQUAL(ref[1], -73800);
  rng_state = 9;
  for (int ws = 32; ws <= 64; ws += 32) {
    check_bconv(&c, ws, MODE_BIPOLAR, 1, 0, a, w);
    check_bconv(&c, ws, MODE_BIPOLAR, 1, 0, NULL, NULL);
  }
  for (int64_t i = 0; i < na; i++) a[i] = 3;
  check_bconv(&c, 64, MODE_UNIPOLAR, 2, 0, a, w);
  free(a);
  free(w);
}

/* ---- binary dense ---- */

static void test_binary_dense_bipolar_tails(void) {
  static const int64_t ks[] = {1, 3, 33, 65, 100, 4100};
  rng_state = 5;
  for (int i = 0; i < 6; i++)
    for (int ws = 32; ws <= 64; ws += 32) {
      int64_t B = 3, O = 7, K = ks[i], KW = (K + ws - 1) / ws;
      int *a = bin_test_zalloc((size_t)(B * K) * sizeof(int)), *w = bin_test_zalloc((size_t)(O * K) * sizeof(int));
      for (int64_t j = 0; j < B * K; j++) a[j] = rng_int(2) ? 1 : -1;
      for (int64_t j = 0; j < O * K; j++) w[j] = rng_int(2) ? 1 : -1;
      int64_t ref[21];
      ref_bin_dense(B, O, K, a, w, ref);
      /* dense rows are 1x1 "images" with K channels */
      void *pa = pack(a, B, 1, K, 1, 1, ws, bipolar_bit), *pw = pack(w, O, 1, K, 1, 1, ws, bipolar_bit);
      int64_t sa[2] = {B, KW}, sw[2] = {O, KW};
      const int64_t *shapes[2] = {sa, sw};
      int nd[2] = {2, 2};
      tsl_dsl_param_value prm = tsl_dsl_int_param("K", K);
      _Alignas(64) int32_t got[32];
      char name[64];
      snprintf(name, sizeof name, "binary_dense_bipolar%d", ws);
      void *bufs[3] = {pa, pw, got};
      CU_ASSERT_FALSE(run_op(name, 2, shapes, nd, 1, &prm, bufs));
      int bad = 0;
      for (int j = 0; j < 21; j++) bad += got[j] != ref[j];
      CU_ASSERT_EQUAL(bad, 0);
      free(a);
      free(w);
      free(pa);
      free(pw);
    }
}

/* How often the fused glue (shift + fixed-point add) gives the same quantized level as the
 * unfused float glue q = clip(floor(acc*scale + beta), 0, L) on random data, with
 * shift = round(-log2 scale) and bias = round(beta * 2^shift). The rate is printed; the
 * assertion only requires the approximation to be sane (most levels agree). */
static void test_fused_glue_agreement_with_float_glue(void) {
  rng_state = 6;
  enum { TRIALS = 200000 };
  int agree[3] = {0, 0, 0};
  for (int bits = 1; bits <= 2; bits++) {
    int L = (1 << bits) - 1;
    for (int t = 0; t < TRIALS; t++) {
      int64_t acc = rng_int(1153) - 576; /* a 3x3x64 bipolar sum */
      float scale = ldexpf(1.0f + (float)rng_int(1000) / 1000.0f, -(2 + rng_int(5)));
      float beta = (float)(rng_int(2001) - 1000) / 250.0f;
      float y = floorf((float)acc * scale + beta);
      int64_t qf = y < 0.0f ? 0 : y > (float)L ? L : (int64_t)y;
      int shift = (int)lrintf(-log2f(scale));
      int64_t bias = (int64_t)lrintf(ldexpf(beta, shift));
      agree[bits] += ref_bin_glue(acc, bias, shift, L) == qf;
    }
    printf("\n  fused glue vs float glue, %d-bit output: %.2f%% of %d random levels agree", bits,
           100.0 * agree[bits] / TRIALS, TRIALS);
    CU_ASSERT(agree[bits] > TRIALS / 2);
  }
  printf("\n");
}

/* ---- max-pool on packed words ---- */

/* The pool of the packed words equals the packing of the max-pooled values: bipolar +-1
 * (AND) and unipolar 1-bit levels (OR), sizes 2 and 3, strides 1-3, channel tails. */
static void test_maxpool_packed_equals_pool_of_values(void) {
  static const int64_t cfg[][5] = {{33, 7, 9, 2, 2}, {3, 6, 5, 3, 2}, {65, 5, 5, 3, 1}, {100, 8, 7, 2, 3}};
  rng_state = 7;
  for (int i = 0; i < 4; i++)
    for (int uni = 0; uni <= 1; uni++)
      for (int ws = 32; ws <= 64; ws += 32) {
        int64_t C = cfg[i][0], H = cfg[i][1], W = cfg[i][2], size = cfg[i][3], st = cfg[i][4];
        int64_t OH = (H - size) / st + 1, OW = (W - size) / st + 1, CW = (C + ws - 1) / ws;
        int *v = bin_test_zalloc((size_t)(C * H * W) * sizeof(int)), *m = bin_test_zalloc((size_t)(C * OH * OW) * sizeof(int));
        for (int64_t j = 0; j < C * H * W; j++) v[j] = uni ? rng_int(2) : (rng_int(2) ? 1 : -1);
        for (int64_t c = 0; c < C; c++)
          for (int64_t y = 0; y < OH; y++)
            for (int64_t x = 0; x < OW; x++) {
              int best = -2;
              for (int64_t dy = 0; dy < size; dy++)
                for (int64_t dx = 0; dx < size; dx++) {
                  int t = v[(c * H + y * st + dy) * W + x * st + dx];
                  if (t > best) best = t;
                }
              m[(c * OH + y) * OW + x] = best;
            }
        int (*bit)(int, int) = uni ? level_bit : bipolar_bit;
        void *pin = pack(v, 1, 1, C, H, W, ws, bit), *want = pack(m, 1, 1, C, OH, OW, ws, bit);
        void *got = bin_test_zalloc((size_t)(CW * OH * OW) * (size_t)(ws / 8));
        int64_t sh[4] = {1, CW, H, W};
        const int64_t *shapes[1] = {sh};
        int nd[1] = {4};
        tsl_dsl_param_value prm[2] = {tsl_dsl_int_param("size", size), tsl_dsl_int_param("stride", st)};
        char name[64];
        snprintf(name, sizeof name, "maxpool_packed_%s%d", uni ? "unipolar" : "bipolar", ws);
        void *bufs[2] = {pin, got};
        CU_ASSERT_FALSE(run_op(name, 1, shapes, nd, 2, prm, bufs));
        CU_ASSERT_TRUE(words_equal(got, want, CW * OH * OW, ws));
        free(v);
        free(m);
        free(pin);
        free(want);
        free(got);
      }
}

void tsl_tests_binary_net(void);  /* test_binary_net.c */
void tsl_tests_binary_nhwc(void); /* test_binary_nhwc.c */
void tsl_tests_binary_lutconv(void);    /* test_lutconv.c */
void tsl_tests_binary_bit_im2col(void); /* test_bit_im2col.c */

void tsl_tests_binary(void) {
  CU_pSuite s = CU_add_suite("binary", suite_init, suite_clean);
  CU_add_test(s, "test_bitpack_channel_tails_and_zero", test_bitpack_channel_tails_and_zero);
  CU_add_test(s, "test_bitserial_conv_bipolar_shapes", test_bitserial_conv_bipolar_shapes);
  CU_add_test(s, "test_bitserial_conv_unipolar_1_and_2_bits", test_bitserial_conv_unipolar_1_and_2_bits);
  CU_add_test(s, "test_fused_glue_equals_integer_formula", test_fused_glue_equals_integer_formula);
  CU_add_test(s, "test_bitserial_template_default_config", test_bitserial_template_default_config);
  CU_add_test(s, "test_bitserial_template_rejects_bad_knobs", test_bitserial_template_rejects_bad_knobs);
  CU_add_test(s, "test_C14_bitpack_zero_sign_and_tail_same_padding", test_C14_bitpack_zero_sign_and_tail_same_padding);
  CU_add_test(s, "test_C15_bitserial_conv_then_relu_and_requant", test_C15_bitserial_conv_then_relu_and_requant);
  CU_add_test(s, "test_C09_long_popcount_reduction_exact", test_C09_long_popcount_reduction_exact);
  CU_add_test(s, "test_binary_dense_bipolar_tails", test_binary_dense_bipolar_tails);
  CU_add_test(s, "test_maxpool_packed_equals_pool_of_values", test_maxpool_packed_equals_pool_of_values);
  CU_add_test(s, "test_fused_glue_agreement_with_float_glue", test_fused_glue_agreement_with_float_glue);
  tsl_tests_binary_net();
  tsl_tests_binary_nhwc();
  tsl_tests_binary_lutconv();
  tsl_tests_binary_bit_im2col();
}
