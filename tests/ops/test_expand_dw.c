/* The fused expand 1x1 + depthwise operator (ops/conv2d/expand_depthwise.h) against a
 * naive reference written here: the expand in NCHW, its activation, the zero padding
 * after it, the depthwise and its activation, in double. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/conv2d/expand_depthwise.h"
#include "ops/nn/activation.h"
#include "ops/ops_util.h"

/* reference activations: 0 none, 1 relu, 2 relu6, 3 HardSwish, 4 Swish (SiLU), 5 clip
 * [0.25, 6] (f(0) != 0: the lanes past E need the guard), 6 Sigmoid (f(0) != 0: as f1,
 * the zero padding after it must stay zero) */
static double ref_act(int a, double v) {
  switch (a) {
  case 1: return v > 0 ? v : 0;
  case 2: return v < 0 ? 0 : v > 6 ? 6 : v;
  case 3: return v * fmin(fmax(v + 3.0, 0.0), 6.0) / 6.0;
  case 4: return v / (1.0 + exp(-v));
  case 5: return v < 0.25 ? 0.25 : v > 6 ? 6 : v;
  case 6: return 1.0 / (1.0 + exp(-v));
  default: return v;
  }
}

static tsl_expand_dw_act act_of(int a) {
  tsl_expand_dw_act r;
  memset(&r, 0, sizeof r);
  if (a == 1) r.act = 1;
  if (a == 2) {
    r.act = 2;
    r.clip_max = 6.0;
  }
  if (a == 5) {
    r.act = 2;
    r.clip_min = 0.25;
    r.clip_max = 6.0;
  }
  if (a == 3 || a == 4 || a == 6)
    tsl_epilogue_make(a == 3 ? "HardSwish" : a == 4 ? "Swish" : "Sigmoid", 0, NULL, 0, &r.fn);
  return r;
}

typedef struct xcase {
  int64_t N, C, H, W, E, R, stride;
  int act1, act2;
} xcase;

/* The schedule of p: with tpl, a config drawn from tpl's space by *rng (printed into
 * cfg); else knobs kn (NULL: the defaults). */
static tsl_status schedule_of(const tsl_te_program *p, const tsl_expand_dw_layer *d, const tsl_expand_dw_knobs *kn,
                              const tsl_template *tpl, uint64_t *rng, char *cfg, size_t ncfg, tsl_schedule **s) {
  if (!tpl) return tsl_expand_dw_schedule(p, d, ops_target(), kn, s);
  tsl_config_space sp;
  tsl_config c;
  tsl_status st = tpl->space(p, ops_target(), &sp);
  if (st != TSL_OK) return st;
  *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
  st = tsl_config_from_index(&sp, (int64_t)((*rng >> 11) % (uint64_t)tsl_space_size(&sp)), &c);
  if (st == TSL_OK) tsl_config_str(&sp, &c, cfg, ncfg);
  return st == TSL_OK ? tpl->apply(p, ops_target(), &sp, &c, s) : st;
}

/* Runs case c with knobs kn (NULL: defaults), or with tpl a config sampled from its
 * space by *rng; true when within tolerance. */
static bool check_case_with(const xcase *c, const tsl_expand_dw_knobs *kn, const tsl_template *tpl, uint64_t *rng,
                            uint64_t seed) {
  int64_t X = ops_lanes(), pad = c->R / 2;
  tsl_expand_dw_layer d = {c->N,   c->C, c->H, c->W, c->E, c->R, c->R, c->stride, c->stride, pad, pad, pad, pad,
                           X,      act_of(c->act1), act_of(c->act2)};
  int64_t CB = (c->C + X - 1) / X, EB = (c->E + X - 1) / X, OH = tsl_expand_dw_out_h(&d), OW = tsl_expand_dw_out_w(&d);
  int64_t H = c->H, W = c->W, C = c->C, E = c->E, R = c->R, N = c->N;
  /* logical tensors */
  float *x = malloc(sizeof(float) * (size_t)(N * C * H * W)), *w1 = malloc(sizeof(float) * (size_t)(E * C));
  float *b1 = malloc(sizeof(float) * (size_t)E), *wd = malloc(sizeof(float) * (size_t)(E * R * R));
  float *b2 = malloc(sizeof(float) * (size_t)E);
  ops_fill(x, N * C * H * W, seed, -1.0f, 1.0f);
  ops_fill(w1, E * C, seed + 1, -0.5f, 0.5f);
  ops_fill(b1, E, seed + 2, -1.0f, 1.0f);
  ops_fill(wd, E * R * R, seed + 3, -0.5f, 0.5f);
  ops_fill(b2, E, seed + 4, -0.5f, 0.5f);
  /* the reference */
  double *ex = calloc((size_t)(N * E * H * W), sizeof(double)), *want = calloc((size_t)(N * EB * OH * OW * X), sizeof(double));
  for (int64_t n = 0; n < N; n++)
    for (int64_t e = 0; e < E; e++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++) {
          double s = b1[e];
          for (int64_t ci = 0; ci < C; ci++) s += (double)x[((n * C + ci) * H + h) * W + w] * w1[e * C + ci];
          ex[((n * E + e) * H + h) * W + w] = ref_act(c->act1, s);
        }
  for (int64_t n = 0; n < N; n++)
    for (int64_t e = 0; e < E; e++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          double s = b2[e];
          for (int64_t r = 0; r < R; r++)
            for (int64_t q = 0; q < R; q++) {
              int64_t iy = oy * c->stride + r - pad, ix = ox * c->stride + q - pad;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W) s += ex[((n * E + e) * H + iy) * W + ix] * wd[(e * R + r) * R + q];
            }
          want[(((n * EB + e / X) * OH + oy) * OW + ox) * X + e % X] = ref_act(c->act2, s);
        }
  /* the kernel's blocked tensors */
  float *bx = ops_alloc(N * CB * H * W * X), *bw1 = ops_alloc(EB * CB * X * X), *bb1 = ops_alloc(EB * X);
  float *bwd = ops_alloc(EB * R * R * X), *bb2 = ops_alloc(EB * X), *bo = ops_alloc(N * EB * OH * OW * X);
  for (int64_t n = 0; n < N; n++)
    for (int64_t ci = 0; ci < C; ci++)
      for (int64_t p = 0; p < H * W; p++) bx[((n * CB + ci / X) * H * W + p) * X + ci % X] = x[(n * C + ci) * H * W + p];
  for (int64_t e = 0; e < E; e++) {
    for (int64_t ci = 0; ci < C; ci++) bw1[((e / X * CB + ci / X) * X + ci % X) * X + e % X] = w1[e * C + ci];
    bb1[e] = b1[e];
    bb2[e] = b2[e];
    for (int64_t rs = 0; rs < R * R; rs++) bwd[(e / X * R * R + rs) * X + e % X] = wd[e * R * R + rs];
  }
  bool ok = true;
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  char cfg[256] = "defaults";
  tsl_status st = tsl_expand_dw_program(&d, &p);
  if (st == TSL_OK) st = schedule_of(p, &d, kn, tpl, rng, cfg, sizeof cfg, &s);
  if (st != TSL_OK) {
    printf("\n  expand_dw N%lld C%lld %lldx%lld E%lld R%lld s%lld: %s\n", (long long)N, (long long)C, (long long)H,
           (long long)W, (long long)E, (long long)R, (long long)c->stride, tsl_last_error());
    ok = false;
  }
  float *bufs[] = {bx, bw1, bb1, bwd, bb2, bo};
  if (ok) ok = ops_build_run(s, "expand_dw_test", bufs);
  if (ok) {
    double err = ops_rel_error(bo, want, N * EB * OH * OW * X);
    ok = err < 1e-4 && ops_check_guard(bo);
    if (!ok)
      printf("\n  expand_dw N%lld C%lld %lldx%lld E%lld R%lld s%lld act %d/%d (%s): rel error %g\n", (long long)N,
             (long long)C, (long long)H, (long long)W, (long long)E, (long long)R, (long long)c->stride, c->act1,
             c->act2, cfg, err);
  }
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  float *blocked[] = {bx, bw1, bb1, bwd, bb2, bo};
  for (int i = 0; i < 6; i++) ops_free(blocked[i]);
  free(x);
  free(w1);
  free(b1);
  free(wd);
  free(b2);
  free(ex);
  free(want);
  return ok;
}

static bool check_case(const xcase *c, const tsl_expand_dw_knobs *kn, uint64_t seed) {
  return check_case_with(c, kn, NULL, NULL, seed);
}

static const xcase cases[] = {
    {1, 16, 20, 20, 96, 3, 1, 2, 2},  /* MobileNetV2's expand + depthwise, ReLU6 */
    {1, 16, 21, 19, 96, 3, 2, 2, 2},  /* stride 2, odd sizes */
    {1, 19, 15, 15, 57, 3, 1, 3, 3},  /* odd channels, HardSwish */
    {2, 24, 7, 7, 72, 5, 1, 4, 4},    /* N = 2, 5x5, SiLU, small image */
    {1, 8, 15, 15, 40, 5, 2, 1, 0},   /* 5x5 stride 2, relu then none */
    {2, 3, 9, 11, 17, 3, 2, 0, 3},    /* tiny channels, none then HardSwish */
};

static void test_expand_dw_defaults(void) {
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) failed += !check_case(&cases[i], NULL, 100 + 7 * i);
  CU_ASSERT_EQUAL(failed, 0);
}

/* Knobs off the defaults: one-row bands, tails in every tile, a band past the height. */
static void test_expand_dw_knobs(void) {
  const tsl_expand_dw_knobs ks[] = {{1, 1, 1, 1}, {3, 5, 7, 2}, {64, 4, 13, 3}, {2, 7, 3, 2}};
  int failed = 0;
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
    for (size_t j = 0; j < 3; j++) failed += !check_case(&cases[j * 2 + i % 2], &ks[i], 300 + 11 * i + j);
  CU_ASSERT_EQUAL(failed, 0);
}

/* Configs drawn (seeded) from the template's space give the reference's output: 24 of
 * them over the cases above and two with odd expanded channels at stride 2, one of
 * them with an f2(0) != 0 (the lane guard of the registry operator). */
static void test_expand_dw_space_samples(void) {
  static const xcase more[] = {
      {1, 13, 17, 14, 57, 3, 2, 2, 5},
      {1, 21, 12, 13, 35, 3, 2, 1, 2},
  };
  tsl_tuner_register_templates();
  const tsl_template *tpl = tsl_template_find("expand_depthwise_nchwc.band");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  size_t nc = sizeof cases / sizeof cases[0], nm = sizeof more / sizeof more[0];
  uint64_t rng = 0x5eedc0ffeeull;
  int failed = 0;
  for (size_t i = 0; i < 24; i++) {
    const xcase *c = i % 3 == 2 ? &more[(i / 3) % nm] : &cases[i % nc];
    failed += !check_case_with(c, NULL, tpl, &rng, 500 + 13 * i);
  }
  CU_ASSERT_EQUAL(failed, 0);
}

/* The fusion rule (tsl_expand_dw_pays) on the presets' caches (x86-64-avx2: L2 512 KiB,
 * 8 lanes; x86-64-avx512: 1 MiB, 16), each expectation worked out by hand from the
 * documented rule: the expanded tensor plus the depthwise output of one image past L2,
 * and (rows x padded width - H x W) x C <= 12 x H x W for the rows the default bands
 * compute, C rounded up to whole blocks (one whole-image band for the first seven cases:
 * H + pads rows at stride 1). */
static void test_expand_dw_pays_rule(void) {
  tsl_target avx2, avx512;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &avx512), TSL_OK);
  struct {
    const tsl_target *t;
    int64_t C, H, E, R, stride, block;
    bool want;
  } rc[] = {
      /* 588 + 588 KiB > 1 MiB; 30 x 30 - 784 = 116, x 32 = 3712 <= 9408 */
      {&avx512, 32, 28, 192, 3, 1, 16, true},
      /* 441 + 441 KiB fit in 1 MiB */
      {&avx512, 96, 14, 576, 3, 1, 16, false},
      /* 514.5 + 514.5 KiB > 1 MiB (by 5 KiB), but 18 x 18 - 196 = 128, x 112 = 14336 > 2352 */
      {&avx512, 112, 14, 672, 5, 1, 16, false},
      /* 514.5 + 514.5 KiB > 512 KiB, but 16 x 16 - 196 = 60, x 112 = 6720 > 2352 */
      {&avx2, 112, 14, 672, 3, 1, 8, false},
      /* 735 + 735 KiB; 32 x 32 - 784 = 240, x 40 = 9600 > 9408 (just) */
      {&avx2, 40, 28, 240, 5, 1, 8, false},
      /* the same layer with 33 input channels: summed as 40 (whole blocks), the same */
      {&avx2, 33, 28, 240, 5, 1, 8, false},
      /* with 32: 240 x 32 = 7680 <= 9408 */
      {&avx2, 32, 28, 240, 5, 1, 8, true},
      /* 112 x 112 x 96 at stride 2: 4.6 MiB expanded; 7 bands of 8 rows (17 rows each):
       * 119 x 114 - 12544 = 1022, x 16 = 16352 <= 150528 */
      {&avx2, 16, 112, 96, 3, 2, 8, true},
      {&avx512, 16, 112, 96, 3, 2, 16, true},
      /* 28 x 28 x 192 at stride 2: 588 + 147 KiB fit in 1 MiB, not in 512 KiB; 2 bands
       * of 7 rows (15 rows each): 30 x 30 - 784 = 116, x 32 = 3712 <= 9408 */
      {&avx512, 32, 28, 192, 3, 2, 16, false},
      {&avx2, 32, 28, 192, 3, 2, 8, true},
  };
  for (size_t i = 0; i < sizeof rc / sizeof rc[0]; i++) {
    int64_t pad = rc[i].R / 2;
    tsl_expand_dw_layer d = {1, rc[i].C, rc[i].H, rc[i].H, rc[i].E, rc[i].R, rc[i].R, rc[i].stride, rc[i].stride,
                             pad, pad, pad, pad, rc[i].block, {2, 0.0, 6.0, {0}}, {2, 0.0, 6.0, {0}}};
    CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_check(&d), TSL_OK);
    bool got = tsl_expand_dw_pays(&d, rc[i].t);
    if (got != rc[i].want) printf("\n  rule case %zu: %d, want %d\n", i, got, rc[i].want);
    CU_ASSERT_EQUAL(got, rc[i].want);
  }
}

/* The template's default config is tsl_expand_dw_default_knobs, a point of its space,
 * and the operator's workload key is the layer's key (tsl_expand_dw_key). */
static void test_expand_dw_template_default(void) {
  tsl_tuner_register_templates();
  const tsl_template *tpl = tsl_template_find("expand_depthwise_nchwc.band");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  tsl_expand_dw_layer d = {1, 16, 56, 56, 96, 3, 3, 2, 2, 1, 1, 1, 1, ops_lanes(), act_of(2), act_of(2)};
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_config_space sp;
  tsl_config c;
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_program(&d, &p), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tpl->space(p, ops_target(), &sp), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tpl->default_config(p, ops_target(), &sp, &c), TSL_OK);
  tsl_expand_dw_knobs k = tsl_expand_dw_default_knobs(ops_target(), &d);
  CU_ASSERT_EQUAL(tsl_config_get(&sp, &c, "band", -1), k.band);
  CU_ASSERT_EQUAL(tsl_config_get(&sp, &c, "ow_block", -1), k.ow_block);
  CU_ASSERT_EQUAL(tsl_config_get(&sp, &c, "ew_block", -1), k.ew_block);
  CU_ASSERT_EQUAL(tsl_config_get(&sp, &c, "kb_block", -1), k.kb_block);
  CU_ASSERT(tsl_space_size(&sp) > 100);
  tsl_workload w;
  char *kw = NULL, *kd = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &kw), TSL_OK);
  CU_ASSERT_EQUAL(tsl_expand_dw_key(&d, &kd), TSL_OK);
  CU_ASSERT(kw && kd && strcmp(kw, kd) == 0);
  free(kw);
  free(kd);
  /* an expand table function is the workload's stage epilogue on `padded`: the key is
   * the codes' key (expand_act 0) with "|padded+HardSwish" after it, and equals the
   * layer's key */
  d.expand_act = act_of(0);
  char *k0 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_key(&d, &k0), TSL_OK);
  d.expand_act = act_of(3);
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL(tsl_workload_key_of(&w, &kw), TSL_OK);
  CU_ASSERT_EQUAL(tsl_expand_dw_key(&d, &kd), TSL_OK);
  CU_ASSERT(kw && kd && strcmp(kw, kd) == 0);
  size_t n0 = strlen(k0);
  CU_ASSERT(kw && strncmp(kw, k0, n0) == 0 && strcmp(kw + n0, "|padded+HardSwish") == 0);
  free(k0);
  free(kw);
  free(kd);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* Pairs whose expand activation f1 is a function of the table (Swish, EfficientNet's;
 * HardSwish, MobileNetV3's), odd expanded channels, stride 2: their workload's program
 * (tsl_workload_instantiate: the registry operator with f1 as the stage epilogue of
 * `padded`) under seeded configs of the template's space (8 each, 16 for each of Swish
 * and HardSwish) and the default knobs gives the reference's output (f1 before the zero
 * padding: Sigmoid's f1(0) != 0 checks that the padding stays zero). */
static void test_expand_dw_table_f1_space_samples(void) {
  static const xcase pairs[] = {
      {1, 13, 17, 14, 57, 3, 2, 4, 4},  /* Swish, Swish */
      {1, 19, 15, 16, 45, 5, 2, 3, 0},  /* HardSwish, none */
      {2, 11, 9, 13, 35, 3, 2, 4, 5},   /* Swish, then a clip with f2(0) != 0 (the guard) */
      {1, 16, 12, 11, 23, 3, 2, 3, 3},  /* HardSwish, HardSwish */
      {1, 10, 11, 12, 27, 3, 2, 6, 0},  /* Sigmoid (f1(0) != 0: the padding stays zero) */
  };
  tsl_tuner_register_templates();
  const tsl_template *tpl = tsl_template_find("expand_depthwise_nchwc.band");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  uint64_t rng = 0xf1f1c0deull;
  int failed = 0, np = (int)(sizeof pairs / sizeof pairs[0]);
  for (int i = 0; i < 8 * np; i++) failed += !check_case_with(&pairs[i % np], NULL, tpl, &rng, 900 + 17 * (uint64_t)i);
  for (int i = 0; i < np; i++) failed += !check_case(&pairs[i], NULL, 700 + (uint64_t)i);
  CU_ASSERT_EQUAL(failed, 0);
}

/* Keys of workloads without a stage epilogue are the ones records already hold (pinned
 * as written before stage epilogues existed: a conv family's as in records of
 * SqueezeNet, docs/records.md's fused MobileNetV2 pair), with and without an output
 * epilogue. */
static void test_existing_keys_unchanged(void) {
  static const char conv_key[] =
      "conv2d_nchwc_bias(data:f32[1,1,55,55,16],weight:f32[4,1,1,1,16,16],bias:f32[4,16];act=1,clip_max=6,clip_min=0,"
      "dilation_h=1,dilation_w=1,pad_bottom=0,pad_left=0,pad_right=0,pad_top=0,stride_h=1,stride_w=1)";
  static const char swish_key[] =
      "conv2d_nchwc_bias(data:f32[1,1,55,55,16],weight:f32[4,1,1,1,16,16],bias:f32[4,16];act=0,clip_max=6,clip_min=0,"
      "dilation_h=1,dilation_w=1,pad_bottom=0,pad_left=0,pad_right=0,pad_top=0,stride_h=1,stride_w=1)+Swish(alpha=1)";
  static const char pair_key[] =
      "expand_depthwise_nchwc(data:f32[1,1,112,112,16],w1:f32[6,1,16,16],b1:f32[6,16],weight:f32[6,3,3,16],"
      "bias:f32[6,16];act=2,channels=96,clip_max=6,clip_min=0,expand_act=2,expand_clip_max=6,expand_clip_min=0,"
      "pad_bottom=1,pad_left=1,pad_right=1,pad_top=1,stride_h=2,stride_w=2)";
  tsl_conv2d_layer c;
  memset(&c, 0, sizeof c);
  c.N = 1, c.C = 16, c.H = 55, c.W = 55, c.K = 64, c.R = c.S = 1, c.stride_h = c.stride_w = 1;
  c.dilation_h = c.dilation_w = 1, c.groups = 1, c.act = 1, c.clip_max = 6.0, c.block = 16;
  tsl_workload w;
  char *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&c, &w), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &k), TSL_OK);
  CU_ASSERT_STRING_EQUAL(k, conv_key);
  free(k);
  c.act = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Swish", 0, NULL, 0, &c.epilogue), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&c, &w), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &k), TSL_OK);
  CU_ASSERT_STRING_EQUAL(k, swish_key);
  free(k);
  tsl_expand_dw_layer d = {1, 16, 112, 112, 96, 3, 3, 2, 2, 1, 1, 1, 1, 16, act_of(2), act_of(2)};
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &k), TSL_OK);
  CU_ASSERT_STRING_EQUAL(k, pair_key);
  free(k);
  /* the stage epilogue's suffix follows the output epilogue's */
  d.expand_act = act_of(4);
  d.dw_act = act_of(4);
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &k), TSL_OK);
  const char *tail = "act=0,channels=96,clip_max=6,clip_min=0,expand_act=0,expand_clip_max=6,expand_clip_min=0,"
                     "pad_bottom=1,pad_left=1,pad_right=1,pad_top=1,stride_h=2,stride_w=2)+Swish(alpha=1)"
                     "|padded+Swish(alpha=1)";
  CU_ASSERT(k && strlen(k) > strlen(tail) && strcmp(k + strlen(k) - strlen(tail), tail) == 0);
  free(k);
}

/* The stage epilogue's rewrite: refused for a missing stage, a reduction stage, bad
 * names; on `padded` (a zero-padding stage) the body stays select(cond, f(v), 0). */
static void test_stage_epilogue_rewrite(void) {
  tsl_epilogue sig;
  tsl_stage_epilogue se;
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Sigmoid", 0, NULL, 0, &sig), TSL_OK);
  CU_ASSERT_EQUAL(tsl_stage_epilogue_make("", &sig, false, &se), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_stage_epilogue_make(NULL, &sig, false, &se), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_stage_epilogue_make("a_stage_name_of_more_than_31_chars", &sig, false, &se), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_stage_epilogue_make("padded", NULL, false, &se), TSL_OK);
  CU_ASSERT_FALSE(tsl_stage_epilogue_present(&se));
  tsl_clear_error();
  tsl_expand_dw_layer d = {1, 8, 9, 9, 24, 3, 3, 2, 2, 1, 1, 1, 1, ops_lanes(), act_of(0), act_of(0)};
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_program(&d, &p), TSL_OK);
  const char *bad[2] = {"no_such_stage", "expand"};
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_EQUAL_FATAL(tsl_stage_epilogue_make(bad[i], &sig, false, &se), TSL_OK);
    CU_ASSERT_EQUAL(tsl_epilogue_apply_stage(p, &se), TSL_ERR_INVALID);
  }
  CU_ASSERT_EQUAL(tsl_epilogue_apply_stage(NULL, &se), TSL_ERR_INVALID);
  tsl_clear_error();
  CU_ASSERT_EQUAL_FATAL(tsl_stage_epilogue_make("padded", &sig, true, &se), TSL_OK);
  CU_ASSERT_EQUAL(tsl_epilogue_apply_stage(p, &se), TSL_OK);
  int n = 0;
  tsl_te_op **ops = tsl_te_program_stages(p, &n);
  const tsl_te_op *padded = NULL;
  for (int i = 0; i < n; i++)
    if (strcmp(ops[i]->name, "padded") == 0) padded = ops[i];
  CU_ASSERT_PTR_NOT_NULL_FATAL(padded);
  CU_ASSERT_EQUAL(padded->body->kind, TSL_E_SELECT);
  if (padded->body->kind == TSL_E_SELECT) {
    CU_ASSERT_EQUAL(padded->body->select.f->kind, TSL_E_FLOAT);
    CU_ASSERT_NOT_EQUAL(padded->body->select.t->kind, TSL_E_LOAD);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* The key names every field: layers that differ in one activation differ. */
static void test_expand_dw_key(void) {
  tsl_expand_dw_layer a = {1, 16, 20, 20, 96, 3, 3, 1, 1, 1, 1, 1, 1, 16, act_of(2), act_of(2)};
  tsl_expand_dw_layer b = a;
  b.expand_act = act_of(3);
  char *ka = NULL, *kb = NULL;
  CU_ASSERT_EQUAL(tsl_expand_dw_key(&a, &ka), TSL_OK);
  CU_ASSERT_EQUAL(tsl_expand_dw_key(&b, &kb), TSL_OK);
  CU_ASSERT(ka && kb && strcmp(ka, kb) != 0);
  free(ka);
  free(kb);
  b = a;
  b.stride_h = 0;
  CU_ASSERT_EQUAL(tsl_expand_dw_key(&b, &kb), TSL_ERR_INVALID);
}

void ops_tests_expand_dw(CU_pSuite s) {
  CU_add_test(s, "expand + depthwise fused vs reference (defaults)", test_expand_dw_defaults);
  CU_add_test(s, "expand + depthwise fused vs reference (knobs)", test_expand_dw_knobs);
  CU_add_test(s, "expand + depthwise workload key", test_expand_dw_key);
  CU_add_test(s, "expand + depthwise fusion rule on the presets' caches", test_expand_dw_pays_rule);
  CU_add_test(s, "workload keys without a stage epilogue are unchanged", test_existing_keys_unchanged);
  CU_add_test(s, "stage epilogue: errors and the zero padding", test_stage_epilogue_rewrite);
  CU_add_test(s, "expand + depthwise template: sampled configs vs reference", test_expand_dw_space_samples);
  CU_add_test(s, "expand + depthwise template: default config and key", test_expand_dw_template_default);
  CU_add_test(s, "expand + depthwise with a table function f1: sampled configs vs reference",
              test_expand_dw_table_f1_space_samples);
}
