/* The binarized zoo models (models/zoo_binary.h) compiled by the graph compiler and run,
 * against the naive unpacked-integer reference executor (tests/ref/ref_binary_net.c):
 * reduced variants built by the same builder (narrower channels, a small image, the f32
 * stem left out so the input feeds the binary part directly: every level and integer in
 * between is then exact, and only the f32 last layer's summation order differs). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "models/zoo.h"
#include "models/zoo_binary.h"
#include "ref/ref_binary.h"
#include "ref/ref_binary_net.h"
#include "runtime/module.h"
#include "ops/binary/bitserial.h"
#include "target/target.h"
#include "tessel/runtime.h"

static uint64_t rng;
static double rnd01(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/* Builds the reduced model, runs compiled and reference on one seeded input (in [0, 1.2)
 * so the quantizer sees every level) and compares the logits. */
static void check_model(const char *arch, int abits, int width_div, int64_t image, bool no_fusion) {
  tsl_zoo_binary_options o = {arch, abits, width_div, image, true, 7, no_fusion};
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_binary_build_ex(&o, &g), TSL_OK);
  CU_ASSERT(tsl_graph_count_op(g, TSL_OP_BINARY) > 10);
  tsl_graph_plan *plan = NULL;
  tsl_graph_ctx *ctx = NULL;
  tsl_compile_stats stats;
  tsl_status st = tsl_graph_compile(g, NULL, &plan, &stats);
  if (st != TSL_OK) fprintf(stderr, "%s\n", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(plan, &ctx), TSL_OK);
  const tsl_value *in = &g->values[g->inputs[0]];
  int64_t nin = in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3];
  float *x = malloc((size_t)nin * sizeof *x), *ref = malloc(1000 * sizeof *ref);
  rng = 11;
  for (int64_t i = 0; i < nin; i++) x[i] = (float)(1.2 * rnd01());
  memcpy(tsl_graph_ctx_input(ctx, 0), x, (size_t)nin * sizeof *x);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx, NULL), TSL_OK);
  const float *got = tsl_graph_ctx_output(ctx, 0);
  CU_ASSERT_EQUAL_FATAL(ref_binary_net_run(g, x, ref, 1000), TSL_OK);
  double maxref = 0.0, maxdiff = 0.0, lo = ref[0], hi = ref[0];
  for (int i = 0; i < 1000; i++) {
    maxref = fmax(maxref, fabs(ref[i]));
    maxdiff = fmax(maxdiff, fabs((double)got[i] - ref[i]));
    lo = fmin(lo, ref[i]);
    hi = fmax(hi, ref[i]);
  }
  CU_ASSERT(hi - lo > 1e-3 * (maxref + 1e-30)); /* the logits are not a constant */
  /* and they depend on the input (the binary part does not die out into the fc bias) */
  float *first = malloc(1000 * sizeof *first);
  memcpy(first, got, 1000 * sizeof *first);
  for (int64_t i = 0; i < nin; i++) ((float *)tsl_graph_ctx_input(ctx, 0))[i] = (float)(1.2 * rnd01());
  CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx, NULL), TSL_OK);
  double moved = 0.0;
  for (int i = 0; i < 1000; i++) moved = fmax(moved, fabs((double)got[i] - first[i]));
  CU_ASSERT(moved > 0.05 * maxref);
  if (moved <= 0.05 * maxref) fprintf(stderr, "%s a%d: another input moves the logits by %g only\n", arch, abits, moved);
  free(first);
  /* the residual stream kept NCHW (compile option binary_nchw) gives the same logits, bit
   * for bit; i32 streams are channels-last by default (passes/binary_channels_last.h) */
  /* (unfused: each conv's i32 output and its pack are a stream too) */
  CU_ASSERT_EQUAL(stats.binary_channels_last > 0, strcmp(arch, "bresnet18") == 0 || no_fusion);
  tsl_compile_options nchw = {.binary_nchw = true};
  tsl_graph_plan *plan2 = NULL;
  tsl_graph_ctx *ctx2 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_compile(g, &nchw, &plan2, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.binary_channels_last, 0);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(plan2, &ctx2), TSL_OK);
  memcpy(tsl_graph_ctx_input(ctx2, 0), tsl_graph_ctx_input(ctx, 0), (size_t)nin * sizeof *x);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_run(ctx2, NULL), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(tsl_graph_ctx_output(ctx2, 0), got, 1000 * sizeof *got), 0);
  tsl_graph_ctx_free(ctx2);
  tsl_graph_plan_free(plan2);
  CU_ASSERT(maxdiff <= 1e-5 * fmax(maxref, 1.0));
  if (maxdiff > 1e-5 * fmax(maxref, 1.0))
    fprintf(stderr, "%s a%d: max |compiled - reference| = %g (max |ref| %g)\n", arch, abits, maxdiff, maxref);
  free(x);
  free(ref);
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(plan);
  tsl_graph_free(g);
}

static void test_bresnet18_1bit_reduced_matches_reference(void) { check_model("bresnet18", 1, 4, 64, false); }
static void test_bresnet18_2bit_reduced_matches_reference(void) { check_model("bresnet18", 2, 8, 48, false); }
static void test_bsqueezenet1_1_1bit_small_image_matches_reference(void) { check_model("bsqueezenet1_1", 1, 1, 63, false); }
static void test_bsqueezenet1_1_2bit_small_image_matches_reference(void) { check_model("bsqueezenet1_1", 2, 1, 47, false); }
/* without bitpack fusion (a separate pack after each conv): the same results */
static void test_bresnet18_2bit_unfused_matches_reference(void) { check_model("bresnet18", 2, 8, 48, true); }
static void test_bsqueezenet1_1_1bit_unfused_matches_reference(void) { check_model("bsqueezenet1_1", 1, 1, 47, true); }

/* The zoo names build the full models: f32 [1, 3, 224, 224] -> [1, 1000], bit-packed
 * u64 values between the binary convs. */
static void test_zoo_binary_names_build_full_models(void) {
  static const char *const names[] = {"bresnet18", "bresnet18_a2", "bsqueezenet1_1", "bsqueezenet", "bsqueezenet1_1_a2"};
  for (int i = 0; i < 5; i++) {
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_zoo_build(names[i], 1, &g), TSL_OK);
    const tsl_value *out = &g->values[g->outputs[0]], *in = &g->values[g->inputs[0]];
    CU_ASSERT(out->ndim == 2 && out->shape[1] == 1000 && in->shape[2] == 224);
    int packed = 0;
    for (int v = 0; v < g->n_values; v++) packed += tsl_dtype_equal(g->values[v].dtype, TSL_DTYPE_U64);
    CU_ASSERT(packed > 10);
    tsl_graph_free(g);
  }
  tsl_graph *g = NULL;
  tsl_zoo_binary_options bad = {"bresnet18", 3, 1, 224, false, 1, false};
  CU_ASSERT_EQUAL(tsl_zoo_binary_build_ex(&bad, &g), TSL_ERR_INVALID);
  bad.abits = 1;
  bad.arch = "bvgg";
  CU_ASSERT_EQUAL(tsl_zoo_binary_build_ex(&bad, &g), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NULL(g);
}

/* Zeroed memory aligned as kernel arguments must be (64 bytes). */
static void *zalloc64(size_t bytes) {
  size_t b = (bytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, b ? b : 64);
  if (p) memset(p, 0, b ? b : 64);
  return p;
}

/* The unipolar packed conv (weights [CW, R, S, K]) under the bitserial template's
 * register-tile nest, for configs across its knobs (the tuner's space), equals the
 * integer reference: 70 channels (two words, a partial one), odd sizes, stride 2 and
 * 1x1, 1- and 2-bit inputs, 2-bit packed outputs. */
static void check_uconv_configs(int in_bits, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t st,
                                int64_t pad) {
  int64_t CW = (C + 63) / 64, OH = (H + 2 * pad - R) / st + 1, OW = (W + 2 * pad - R) / st + 1, KW = (K + 63) / 64;
  int Lin = (1 << in_bits) - 1, out_bits = 2;
  int *a = malloc((size_t)(C * H * W) * sizeof *a), *w = malloc((size_t)(K * C * R * R) * sizeof *w);
  int64_t *dot = malloc((size_t)(K * OH * OW) * sizeof *dot);
  uint64_t *data = zalloc64((size_t)(in_bits * CW * H * W) * 8), *wt = zalloc64((size_t)(CW * R * R * K) * 8);
  uint64_t *want = zalloc64((size_t)(out_bits * KW * OH * OW) * 8), *got = zalloc64((size_t)(out_bits * KW * OH * OW) * 8);
  int32_t *shift = zalloc64(64 * sizeof *shift), *bias = zalloc64(64 * sizeof *bias);
  rng = 99 + (uint64_t)C + (uint64_t)in_bits;
  for (int64_t i = 0; i < C * H * W; i++) {
    a[i] = (int)(rnd01() * (Lin + 1));
    for (int p = 0; p < in_bits; p++)
      if ((a[i] >> p) & 1) {
        int64_t c = i / (H * W), yx = i % (H * W);
        data[(p * CW + c / 64) * H * W + yx] |= 1ull << (c % 64);
      }
  }
  for (int64_t k = 0; k < K; k++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t rs = 0; rs < R * R; rs++) {
        int v = rnd01() < 0.5 ? -1 : 1;
        w[(k * C + c) * R * R + rs] = v;
        if (v < 0) wt[((c / 64) * R * R + rs) * K + k] |= 1ull << (c % 64);
      }
  for (int64_t k = 0; k < K; k++) {
    shift[k] = (int32_t)(rnd01() * 5);
    bias[k] = (int32_t)(rnd01() * 41) - 20;
  }
  ref_bin_conv2d(1, C, H, W, K, R, R, st, st, pad, pad, a, w, dot);
  for (int64_t k = 0; k < K; k++)
    for (int64_t i = 0; i < OH * OW; i++) {
      int64_t q = ref_bin_glue(dot[k * OH * OW + i], bias[k], shift[k], (1 << out_bits) - 1);
      for (int p = 0; p < out_bits; p++)
        if ((q >> p) & 1) want[(p * KW + k / 64) * OH * OW + i] |= 1ull << (k % 64);
    }
  /* fuse_rows: 0 = the template's choice, 1 = acc row by row inside the epilogue's rows
   * (with ragged pixel tiles, channel tails, stride 2), -1 = one acc pass */
  static const tsl_bitserial_knobs cfgs[] = {
      {8, true, true, true, 0, 0, 0},   {8, true, false, false, 4, 1, -1}, {8, true, true, true, 8, 3, 1},
      {8, true, true, false, 16, 4, 1}, {8, false, true, true, 32, 2, -1}, {8, true, false, true, 64, 8, 1},
      {8, true, true, true, 16, 2, 1},    {8, true, true, true, 16, 7, -1},  {8, true, true, true, 16, 5, 1}};
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);
  int64_t sd[5] = {1, in_bits, CW, H, W}, sw[4] = {CW, R, R, K}, sk[1] = {K};
  const int64_t *shapes[4] = {sd, sw, sk, sk};
  int ndims[4] = {5, 4, 1, 1};
  tsl_dsl_param_value prm[6] = {tsl_dsl_int_param("C", C),        tsl_dsl_int_param("bits", out_bits),
                                tsl_dsl_int_param("stride_h", st), tsl_dsl_int_param("stride_w", st),
                                tsl_dsl_int_param("pad_h", pad),   tsl_dsl_int_param("pad_w", pad)};
  for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
    tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
    tsl_te_program *p = NULL;
    tsl_schedule *s = NULL;
    tsl_module *m = NULL;
    const tsl_kernel *k = NULL;
    tsl_status stt = tsl_op_instantiate("bitserial_conv2d_unipolar64_packed", 4, shapes, ndims, 6, prm, &p);
    if (stt == TSL_OK) stt = tsl_bitserial_schedule(p, &host, &cfgs[c], &s);
    if (stt == TSL_OK) stt = tsl_module_new(&m);
    if (stt == TSL_OK) stt = tsl_build(s, "uconv", jit, m, NULL, NULL);
    if (stt == TSL_OK) stt = tsl_module_get_kernel(m, "uconv", &k);
    memset(got, 0xa5, (size_t)(out_bits * KW * OH * OW) * 8);
    void *bufs[5] = {data, wt, shift, bias, got}, *args[5];
    for (int i = 0; i < 5; i++) args[i] = &bufs[i];
    if (stt == TSL_OK) stt = tsl_kernel_call(k, args, 5);
    if (stt != TSL_OK) fprintf(stderr, "\n  config %zu: %s\n", c, tsl_last_error());
    CU_ASSERT_EQUAL(stt, TSL_OK);
    bool eq = stt == TSL_OK && memcmp(got, want, (size_t)(out_bits * KW * OH * OW) * 8) == 0;
    if (!eq) fprintf(stderr, "\n  config %zu (oc_block %lld, ow_block %lld) differs\n", c,
                     (long long)cfgs[c].oc_block, (long long)cfgs[c].ow_block);
    CU_ASSERT_TRUE(eq);
    tsl_module_free(m);
    tsl_schedule_free(s);
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
  }
  tsl_jit_free(jit);
  free(a);
  free(w);
  free(dot);
  free(data);
  free(wt);
  free(want);
  free(got);
  free(shift);
  free(bias);
}

static void test_bitserial_unipolar_template_configs_3x3_stride2(void) {
  check_uconv_configs(1, 70, 9, 11, 48, 3, 2, 1);
  check_uconv_configs(2, 70, 9, 11, 48, 3, 2, 1);
}
static void test_bitserial_unipolar_template_configs_1x1_odd(void) { check_uconv_configs(2, 130, 7, 5, 64, 1, 1, 0); }
/* rows of >= 14 pixels: the default computes acc row by row (fuse_rows), odd sizes and
 * border taps on both sides of every row */
static void test_bitserial_unipolar_template_configs_row_fused_border(void) {
  check_uconv_configs(1, 70, 15, 17, 48, 3, 1, 1);
  check_uconv_configs(2, 64, 13, 29, 64, 3, 2, 1);
}

/* The tuner sees knob fuse_rows on the unipolar convs: its default follows the output row
 * (rows of >= 14 pixels: acc computed per row of the epilogue), and both values apply. */
static void check_fuse_rows_space(int64_t side, int64_t want_default) {
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  int64_t sd[5] = {1, 1, 1, side, side}, sw[4] = {1, 3, 3, 32}, sk[1] = {32}, sr[4] = {1, 32, side, side};
  const int64_t *shapes[5] = {sd, sw, sk, sk, sr};
  int ndims[5] = {5, 4, 1, 1, 4};
  tsl_dsl_param_value prm[3] = {tsl_dsl_int_param("C", 64), tsl_dsl_int_param("pad_h", 1), tsl_dsl_int_param("pad_w", 1)};
  tsl_te_program *p = NULL;
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("bitserial_conv2d_unipolar64_requant_add", 5, shapes, ndims, 3, prm, &p), TSL_OK);
  int n = 0;
  const tsl_template *tpl = NULL, *all = tsl_bitserial_templates(&n);
  for (int i = 0; i < n; i++)
    if (strcmp(all[i].op, "bitserial_conv2d_unipolar64_requant_add") == 0) tpl = &all[i];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  tsl_config_space sp;
  tsl_config c;
  CU_ASSERT_EQUAL_FATAL(tpl->space(p, &host, &sp), TSL_OK);
  CU_ASSERT(tsl_space_knob_index(&sp, "fuse_rows") >= 0);
  CU_ASSERT_EQUAL_FATAL(tpl->default_config(p, &host, &sp, &c), TSL_OK);
  CU_ASSERT_EQUAL(tsl_config_get(&sp, &c, "fuse_rows", -1), want_default);
  for (int64_t v = 0; v <= 1; v++) {
    c.values[tsl_space_knob_index(&sp, "fuse_rows")] = v;
    tsl_schedule *s = NULL;
    CU_ASSERT_EQUAL(tpl->apply(p, &host, &sp, &c, &s), TSL_OK);
    char *text = s ? tsl_schedule_to_string(s) : NULL;
    CU_ASSERT_PTR_NOT_NULL(text);
    /* rows: acc is computed in the output's row loop; one pass: acc parallel by itself */
    CU_ASSERT_EQUAL(text && strstr(text, "compute_at(acc, out, y)") != NULL, v == 1);
    CU_ASSERT_EQUAL(text && strstr(text, "parallel(acc, k.outer)") != NULL, v == 0);
    free(text);
    tsl_schedule_free(s);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

static void test_bitserial_template_fuse_rows_knob(void) {
  check_fuse_rows_space(16, 1);
  check_fuse_rows_space(7, 0);
}

void tsl_tests_binary_net(void) {
  CU_pSuite s = CU_add_suite("binary_net", NULL, NULL);
  CU_add_test(s, "test_bresnet18_1bit_reduced_matches_reference", test_bresnet18_1bit_reduced_matches_reference);
  CU_add_test(s, "test_bresnet18_2bit_reduced_matches_reference", test_bresnet18_2bit_reduced_matches_reference);
  CU_add_test(s, "test_bsqueezenet1_1_1bit_small_image_matches_reference",
              test_bsqueezenet1_1_1bit_small_image_matches_reference);
  CU_add_test(s, "test_bsqueezenet1_1_2bit_small_image_matches_reference",
              test_bsqueezenet1_1_2bit_small_image_matches_reference);
  CU_add_test(s, "test_bresnet18_2bit_unfused_matches_reference", test_bresnet18_2bit_unfused_matches_reference);
  CU_add_test(s, "test_bsqueezenet1_1_1bit_unfused_matches_reference",
              test_bsqueezenet1_1_1bit_unfused_matches_reference);
  CU_add_test(s, "test_bitserial_unipolar_template_configs_3x3_stride2",
              test_bitserial_unipolar_template_configs_3x3_stride2);
  CU_add_test(s, "test_bitserial_unipolar_template_configs_1x1_odd", test_bitserial_unipolar_template_configs_1x1_odd);
  CU_add_test(s, "test_bitserial_unipolar_template_configs_row_fused_border",
              test_bitserial_unipolar_template_configs_row_fused_border);
  CU_add_test(s, "test_bitserial_template_fuse_rows_knob", test_bitserial_template_fuse_rows_knob);
  CU_add_test(s, "test_zoo_binary_names_build_full_models", test_zoo_binary_names_build_full_models);
}
