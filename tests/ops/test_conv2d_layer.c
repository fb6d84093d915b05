/* The layer description and the window formula (ops/conv2d/conv2d_layer.h) against an
 * independent reference that walks the windows one by one, and the layer's DSL
 * parameters through a workload key and back. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/conv2d/conv_common.h"
#include "ops/conv2d/conv2d_layer.h"
#include "ops/ops_util.h"

/* The number of windows along one axis, by enumeration: window o covers padded positions
 * [o*stride, o*stride + span) of the in + pb + pa padded elements. Floor mode: the windows
 * that lie wholly inside (some may lie wholly in the trailing padding: zeros, as ONNX
 * pads). Ceil mode (PyTorch's and ONNX Runtime's rule): window 0 and each next window
 * while the one before leaves padded elements uncovered, then the last one dropped when
 * it starts at or past in + pb (once: with more trailing padding than that, ceil mode
 * can give fewer windows than floor mode; kept as the graph runtimes do). -1 when not
 * even window 0 fits. */
static int64_t ref_windows(int64_t in, int64_t pb, int64_t pa, int64_t k, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t span = dil * (k - 1) + 1, padded = in + pb + pa, n = 1;
  if (span > padded) return -1;
  if (!ceil_mode) {
    while (n * stride + span <= padded) n++;
    return n;
  }
  while ((n - 1) * stride + span < padded) n++;
  if ((n - 1) * stride >= in + pb) n--;
  return n;
}

static void test_window_extent_matches_enumeration(void) {
  int checked = 0, bad = 0;
  for (int64_t in = 1; in <= 12; in++)
    for (int64_t pb = 0; pb <= 4; pb++)
      for (int64_t pa = 0; pa <= 4; pa++)
        for (int64_t k = 1; k <= 5; k++)
          for (int64_t s = 1; s <= 4; s++)
            for (int64_t d = 1; d <= 3; d++)
              for (int c = 0; c <= 1; c++) {
                int64_t want = ref_windows(in, pb, pa, k, s, d, c), got = -7;
                tsl_status st = tsl_window_out_extent(in, pb, pa, k, s, d, c, &got);
                bool ok = want < 0 ? st == TSL_ERR_INVALID && got == -7 : st == TSL_OK && got == want;
                if (!ok && bad++ < 5)
                  printf("\n  in %lld pads %lld+%lld k %lld s %lld d %lld ceil %d: got %lld (status %d), want %lld",
                         (long long)in, (long long)pb, (long long)pa, (long long)k, (long long)s, (long long)d, c,
                         (long long)got, st, (long long)want);
                checked++;
              }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(checked > 30000);
}

static void test_window_extent_edge_classes(void) {
  int64_t o = 0;
  /* a window bigger than the input: refused without padding, fine with enough of it */
  CU_ASSERT_EQUAL(tsl_window_out_extent(2, 0, 0, 5, 1, 1, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "larger than the padded input"));
  CU_ASSERT_EQUAL(tsl_window_out_extent(2, 2, 1, 5, 1, 1, false, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, 1);
  /* the floor formula of C's truncating division used to accept a 5-tap window over 4
   * elements at stride 2 ((4 - 5) / 2 + 1 = 1): refused now */
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, 0, 0, 5, 2, 1, false, &o), TSL_ERR_INVALID);
  /* stride > 1: the last window that fits (floor) or starts inside (ceil) */
  CU_ASSERT_EQUAL(tsl_window_out_extent(8, 0, 0, 3, 2, 1, false, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, 3);
  CU_ASSERT_EQUAL(tsl_window_out_extent(8, 0, 0, 3, 2, 1, true, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, 4);
  /* ceil mode drops a last window that would start in the trailing padding */
  CU_ASSERT_EQUAL(tsl_window_out_extent(5, 1, 1, 2, 3, 1, true, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, 2);
  /* pads larger than the kernel */
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, 5, 5, 3, 1, 1, false, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, 12);
  /* dilation: 3 taps 4 apart span 9 */
  CU_ASSERT_EQUAL(tsl_window_out_extent(10, 0, 0, 3, 1, 4, false, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, 2);
  CU_ASSERT_EQUAL(tsl_window_out_extent(8, 0, 0, 3, 1, 4, false, &o), TSL_ERR_INVALID);
  /* malformed arguments and overflow are refused, never wrapped */
  CU_ASSERT_EQUAL(tsl_window_out_extent(0, 0, 0, 1, 1, 1, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, -1, 0, 1, 1, 1, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, 0, 0, 1, 0, 1, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, 0, 0, 1, 1, 0, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_window_out_extent(INT64_MAX, 1, 0, 1, 1, 1, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "overflows"));
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, 0, 0, INT64_MAX / 2, 3, 3, false, &o), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_window_out_extent(INT64_MAX, 0, 0, 1, 1, 1, false, &o), TSL_OK);
  CU_ASSERT_EQUAL(o, INT64_MAX);
  CU_ASSERT_EQUAL(tsl_window_out_extent(4, 0, 0, 1, 1, 1, false, NULL), TSL_ERR_INVALID);
}

/* SAME pads: the padded axis gives ceil(in / stride) windows (counted by the reference),
 * the total is the least that does, split evenly with the odd element at the end (UPPER)
 * or at the beginning (LOWER). */
static void test_same_pads(void) {
  int bad = 0;
  for (int64_t in = 1; in <= 14; in++)
    for (int64_t k = 1; k <= 6; k++)
      for (int64_t s = 1; s <= 4; s++)
        for (int64_t d = 1; d <= 3; d++)
          for (int up = 0; up <= 1; up++) {
            int64_t pb = -1, pa = -1, want = (in + s - 1) / s;
            bool ok = tsl_window_same_pads(in, k, s, d, up, &pb, &pa) == TSL_OK && pb >= 0 && pa >= 0 &&
                      ref_windows(in, pb, pa, k, s, d, false) == want &&
                      (up ? pa - pb == (pa + pb) % 2 : pb - pa == (pa + pb) % 2);
            /* one element less of padding would lose the last window */
            if (ok && pa + pb > 0) {
              int64_t fewer = ref_windows(in, 0, pa + pb - 1, k, s, d, false);
              ok = fewer < want;
            }
            if (!ok && bad++ < 5)
              printf("\n  same pads in %lld k %lld s %lld d %lld upper %d: %lld+%lld", (long long)in, (long long)k,
                     (long long)s, (long long)d, up, (long long)pb, (long long)pa);
          }
  CU_ASSERT_EQUAL(bad, 0);
  int64_t pb, pa;
  CU_ASSERT_EQUAL(tsl_window_same_pads(0, 3, 1, 1, true, &pb, &pa), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_window_same_pads(INT64_MAX, 3, 1, 1, true, &pb, &pa), TSL_ERR_INVALID);
}

static tsl_conv2d_layer some_layer(void) {
  tsl_conv2d_layer l = {.N = 1, .C = 24, .H = 17, .W = 11, .K = 40, .R = 3, .S = 5, .stride_h = 2, .stride_w = 1,
                        .pad_top = 1, .pad_left = 2, .pad_bottom = 0, .pad_right = 3, .dilation_h = 1,
                        .dilation_w = 2, .groups = 1, .act = TSL_CONV2D_ACT_CLIP, .clip_min = -1.5, .clip_max = 4.0,
                        .has_residual = true, .block = 8};
  return l;
}

static void test_layer_check_and_extents(void) {
  tsl_conv2d_layer l = some_layer();
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&l), TSL_OK);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_h(&l), ref_windows(17, 1, 0, 3, 2, 1, false));
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_w(&l), ref_windows(11, 2, 3, 5, 1, 2, false));
  /* the old formula's 1-row output for a window larger than the input is refused */
  tsl_conv2d_layer big = l;
  big.H = 4;
  big.R = 5;
  big.pad_top = big.pad_bottom = 0;
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&big), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "does not fit"));
  CU_ASSERT_EQUAL(tsl_conv2d_layer_out_h(&big), 0);
  tsl_conv2d_layer bad = l;
  bad.groups = 7;
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&bad), TSL_ERR_INVALID);
  bad = l;
  bad.act = 3;
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(&bad), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_check(NULL), TSL_ERR_INVALID);
}

/* The parameter list in the order workload keys spell it, and a layer read back from its
 * family workload key is the layer (grouped and dense families, clip and plain). */
static void test_layer_params_round_trip(void) {
  tsl_conv2d_layer l = some_layer();
  tsl_dsl_param_value p[TSL_CONV2D_LAYER_MAX_PARAMS];
  int n = tsl_conv2d_layer_params(&l, TSL_CONV2D_PARAMS_WINDOW | TSL_CONV2D_PARAMS_EPILOGUE | TSL_CONV2D_PARAMS_GROUPS,
                                  p);
  static const char *const order[] = {"stride_h", "stride_w",   "pad_top", "pad_left", "pad_bottom",
                                      "pad_right", "dilation_h", "dilation_w", "act",   "clip_min",
                                      "clip_max", "groups",     "out_channels"};
  CU_ASSERT_EQUAL_FATAL(n, 13);
  for (int i = 0; i < n; i++) CU_ASSERT_STRING_EQUAL(p[i].name, order[i]);
  l.act = TSL_CONV2D_ACT_RELU;
  CU_ASSERT_EQUAL(tsl_conv2d_layer_params(&l, TSL_CONV2D_PARAMS_EPILOGUE, p), 1);
  for (int variant = 0; variant < 4; variant++) {
    tsl_conv2d_layer a = some_layer(), b;
    if (variant & 1) {
      a.groups = 4;
      a.K = 20; /* not a multiple of the block: the grouped family */
    }
    if (variant & 2) {
      a.act = TSL_CONV2D_ACT_RELU;
      a.clip_min = 0.0;
      a.clip_max = 6.0; /* what a key without bounds reads back */
      a.has_residual = false;
    }
    tsl_workload w;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&a, &w), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_layer_of_workload(&w, &b), TSL_OK);
    CU_ASSERT_EQUAL(memcmp(&a.N, &b.N, offsetof(tsl_conv2d_layer, act) - offsetof(tsl_conv2d_layer, N)), 0);
    CU_ASSERT(a.act == b.act && a.clip_min == b.clip_min && a.clip_max == b.clip_max &&
              a.has_residual == b.has_residual && a.block == b.block);
  }
  /* an int parameter given as a float is refused */
  tsl_dsl_param_value f = tsl_dsl_float_param("stride_h", 2.0);
  tsl_conv2d_layer r = some_layer();
  CU_ASSERT_EQUAL(tsl_conv2d_layer_read_params(1, &f, &r), TSL_ERR_INVALID);
}

/* A program instantiated by the library states its layer (tsl_te_program.params), and the
 * templates' geometry read from those parameters is the one read off the stages when the
 * program states nothing (a conv written directly in the DSL): strides, dilations, pads,
 * output extents and the activation, for every NCHW[x]c algorithm. */
static void test_program_params_and_geometry(void) {
  static const struct {
    tsl_conv2d_algo a;
    const char *tag;
  } algos[] = {{TSL_CONV2D_DIRECT, "conv2d_nchwc"},
               {TSL_CONV2D_IM2COL, "conv2d_nchwc_im2col"},
               {TSL_CONV2D_GROUPED, "conv2d_nchwc_grouped"},
               {TSL_CONV2D_DEPTHWISE, "depthwise_nchwc"}};
  int compared = 0;
  for (int v = 0; v < 3; v++)
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
      tsl_conv2d_layer l = some_layer();
      l.has_residual = false;
      if (v == 1) {
        l.act = TSL_CONV2D_ACT_CLIP;
        l.clip_min = 0.0;
        l.clip_max = 6.0; /* relu6 */
        l.stride_h = l.stride_w = 2;
        l.dilation_w = 1;
        l.pad_bottom = 2;
      }
      if (v == 2) l.act = TSL_CONV2D_ACT_RELU;
      if (algos[i].a == TSL_CONV2D_DEPTHWISE) l.K = l.groups = l.C;
      tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
      tsl_te_program *conv = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_instantiate(&l, algos[i].a, ops_target(), &conv, NULL), TSL_OK);
      tsl_conv2d_layer read;
      memset(&read, 0, sizeof read);
      CU_ASSERT(tsl_conv2d_params_have_window(conv->nparams, conv->params));
      CU_ASSERT_EQUAL(tsl_conv2d_layer_read_params(conv->nparams, conv->params, &read), TSL_OK);
      CU_ASSERT(read.stride_h == l.stride_h && read.stride_w == l.stride_w && read.pad_top == l.pad_top &&
                read.pad_bottom == l.pad_bottom && read.dilation_w == l.dilation_w && read.act == l.act);
      tpl_conv_geometry stated, read_off;
      tsl_te_program bare = *conv;
      bare.nparams = 0;
      bare.params = NULL;
      CU_ASSERT_EQUAL_FATAL(tpl_conv_geometry_of(conv, algos[i].tag, "test", &stated), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tpl_conv_geometry_of(&bare, algos[i].tag, "test", &read_off), TSL_OK);
      bool same = stated.stride_h == read_off.stride_h && stated.stride_w == read_off.stride_w &&
                  stated.dilation_h == read_off.dilation_h && stated.dilation_w == read_off.dilation_w &&
                  stated.pad_top == read_off.pad_top && stated.pad_left == read_off.pad_left &&
                  stated.pad_bottom == read_off.pad_bottom && stated.pad_right == read_off.pad_right &&
                  stated.OH == read_off.OH && stated.OW == read_off.OW && strcmp(stated.act, read_off.act) == 0;
      if (!same)
        printf("\n  %s variant %d: stated s%lldx%lld p%lld,%lld,%lld,%lld %s, read off s%lldx%lld p%lld,%lld,%lld,%lld %s",
               algos[i].tag, v, (long long)stated.stride_h, (long long)stated.stride_w, (long long)stated.pad_top,
               (long long)stated.pad_left, (long long)stated.pad_bottom, (long long)stated.pad_right, stated.act,
               (long long)read_off.stride_h, (long long)read_off.stride_w, (long long)read_off.pad_top,
               (long long)read_off.pad_left, (long long)read_off.pad_bottom, (long long)read_off.pad_right,
               read_off.act);
      CU_ASSERT(same);
      CU_ASSERT_EQUAL(stated.OH, tsl_conv2d_layer_out_h(&l));
      CU_ASSERT_EQUAL(stated.OW, tsl_conv2d_layer_out_w(&l));
      compared++;
      tsl_arena_set_current(prev);
      tsl_arena_free(arena);
    }
  CU_ASSERT_EQUAL(compared, 12);
}

/* The layer an algorithm's operator workload states (tsl_conv2d_layer_of_algo_workload)
 * is the layer it was made from: for layers of every family (blocked, strided and
 * dilated 3x5 with a residual, grouped with K off its blocks, 1x1, plain-data stem) and
 * every algorithm that applies, the layer read back has the original's family key; an
 * im2col workload of another pack_rows reads back the same; the GEMM 1x1 operator (H x W
 * as one extent) and another operator are refused. */
static void test_layer_of_algo_workload_round_trip(void) {
  tsl_conv2d_layer layers[5];
  layers[0] = some_layer();
  layers[1] = some_layer();
  layers[1].groups = 4, layers[1].K = 20, layers[1].has_residual = false, layers[1].act = TSL_CONV2D_ACT_RELU;
  layers[2] = (tsl_conv2d_layer){.N = 1, .C = 16, .H = 9, .W = 9, .K = 24, .R = 1, .S = 1, .stride_h = 1,
                                 .stride_w = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
  layers[3] = (tsl_conv2d_layer){.N = 1, .C = 16, .H = 10, .W = 12, .K = 16, .R = 3, .S = 3, .stride_h = 1,
                                 .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                                 .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
  layers[4] = layers[3];
  layers[4].C = 3, layers[4].data_block = 1; /* a stem conv on plain NCHW data */
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  int checked = 0;
  for (int l = 0; l < 5; l++) {
    tsl_workload fam, back_fam;
    char *want = NULL, *got = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&layers[l], &fam), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&fam, &want), TSL_OK);
    for (int a = 0; a < TSL_CONV2D_ALGO_COUNT; a++) {
      if (!tsl_conv2d_algo_applies(&layers[l], (tsl_conv2d_algo)a, NULL)) continue;
      tsl_workload wa;
      tsl_conv2d_layer back;
      tsl_conv2d_algo algo = TSL_CONV2D_ALGO_COUNT;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_workload(&layers[l], (tsl_conv2d_algo)a, &wa), TSL_OK);
      if (a == TSL_CONV2D_GEMM_1X1) { /* its data [N, C/x, H*W, x]: H and W are not known */
        CU_ASSERT_EQUAL(tsl_conv2d_layer_of_algo_workload(&wa, &back, &algo), TSL_ERR_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "states H x W as one extent"));
        tsl_clear_error();
        continue;
      }
      if (a == TSL_CONV2D_IM2COL) CU_ASSERT_EQUAL(tsl_workload_set_int(&wa, "pack_rows", 4), TSL_OK);
      tsl_status st = tsl_conv2d_layer_of_algo_workload(&wa, &back, &algo);
      if (st != TSL_OK) printf("\n  layer %d algorithm %d (%s): %s\n", l, a, wa.op, tsl_last_error());
      CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
      CU_ASSERT_EQUAL(algo, (tsl_conv2d_algo)a);
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&back, &back_fam), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&back_fam, &got), TSL_OK);
      if (strcmp(want, got) != 0) printf("\n  layer %d algorithm %d: %s\n  read back as %s\n", l, a, want, got);
      CU_ASSERT_STRING_EQUAL(got, want);
      free(got);
      got = NULL;
      checked++;
    }
    free(want);
  }
  CU_ASSERT(checked >= 10);
  /* not an algorithm's operator */
  tsl_workload mm;
  const int64_t a_shape[2] = {4, 4};
  const int64_t *shapes[2] = {a_shape, a_shape};
  const int nd[2] = {2, 2};
  tsl_conv2d_layer back;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(&mm, "matmul", 2, shapes, nd, 0, NULL), TSL_OK);
  CU_ASSERT_EQUAL(tsl_conv2d_layer_of_algo_workload(&mm, &back, NULL), TSL_ERR_UNSUPPORTED);
  tsl_clear_error();
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* The Winograd workloads of the conv family (what the tuner and the models instantiate)
 * state the GEMM's reduction the way tsl_winograd_instantiate builds it: in_channels = C
 * for a layer whose last block is partial, 0 (all of CP) otherwise, and the
 * program made from the workload reduces over that many channels; a workload written
 * without in_channels (as `tunecli run-op` takes it) still maps back to a layer. */
static void test_winograd_workloads_state_the_reduced_channels(void) {
  static const struct {
    int64_t C, K, R, block, pad, in_channels, reduced;
  } cases[] = {
      {12, 64, 4, 16, 2, 12, 12}, /* a 3-channel stem's phases in one 16-lane block */
      {3, 10, 3, 8, 1, 3, 3},     /* one 8-lane block */
      {20, 24, 3, 16, 1, 20, 20}, /* two blocks, the second partial: its real channels */
      {12, 64, 4, 8, 2, 12, 12},  /* the stem's phases in two 8-lane blocks */
      {32, 16, 3, 16, 1, 0, 32},  /* two whole blocks: all of CP */
      {16, 16, 3, 16, 1, 0, 16},  /* one whole block */
      {5, 7, 3, 1, 1, 0, 5},      /* plain NCHW */
  };
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  int checked = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_conv2d_layer l = {.N = 1, .C = cases[i].C, .H = 11, .W = 13, .K = cases[i].K, .R = cases[i].R,
                          .S = cases[i].R, .stride_h = 1, .stride_w = 1, .pad_top = cases[i].pad,
                          .pad_left = cases[i].pad, .pad_bottom = cases[i].pad, .pad_right = cases[i].pad,
                          .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = cases[i].block};
    for (int a = 0; a < TSL_CONV2D_ALGO_COUNT; a++) {
      if (!tsl_conv2d_algo_is_winograd((tsl_conv2d_algo)a, NULL) || !tsl_conv2d_algo_applies(&l, (tsl_conv2d_algo)a, NULL))
        continue;
      tsl_workload wa;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_algo_workload(&l, (tsl_conv2d_algo)a, &wa), TSL_OK);
      int64_t in = -1;
      for (int p = 0; p < wa.nparams; p++)
        if (strcmp(wa.params[p].name, "in_channels") == 0) in = wa.params[p].i;
      if (in != cases[i].in_channels) printf("\n  C %lld block %lld %s: in_channels %lld\n", (long long)cases[i].C,
                                             (long long)cases[i].block, wa.op, (long long)in);
      CU_ASSERT_EQUAL(in, cases[i].in_channels);
      tsl_te_program *p = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_workload_instantiate(&wa, &p), TSL_OK);
      int n = 0;
      tsl_te_op **stages = tsl_te_program_stages(p, &n);
      int64_t reduced = -1;
      for (int k = 0; k < n; k++)
        if (strcmp(stages[k]->name, "M") == 0 && stages[k]->nreduce == 1) reduced = stages[k]->reduce_axis[0].extent;
      CU_ASSERT_EQUAL(reduced, cases[i].reduced);
      /* written without in_channels: the default 0 */
      tsl_workload typed = wa;
      CU_ASSERT_EQUAL(tsl_workload_set_int(&typed, "in_channels", 0), TSL_OK);
      tsl_conv2d_layer back;
      tsl_status st = tsl_conv2d_layer_of_algo_workload(&typed, &back, NULL);
      if (st != TSL_OK) printf("\n  %s: %s\n", typed.op, tsl_last_error());
      CU_ASSERT_EQUAL(st, TSL_OK);
      checked++;
    }
  }
  CU_ASSERT(checked >= 8);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

void ops_tests_conv2d_layer(CU_pSuite s) {
  CU_add_test(s, "test_window_extent_matches_enumeration", test_window_extent_matches_enumeration);
  CU_add_test(s, "test_window_extent_edge_classes", test_window_extent_edge_classes);
  CU_add_test(s, "test_same_pads", test_same_pads);
  CU_add_test(s, "test_layer_check_and_extents", test_layer_check_and_extents);
  CU_add_test(s, "test_layer_params_round_trip", test_layer_params_round_trip);
  CU_add_test(s, "test_program_params_and_geometry", test_program_params_and_geometry);
  CU_add_test(s, "test_layer_of_algo_workload_round_trip", test_layer_of_algo_workload_round_trip);
  CU_add_test(s, "test_winograd_workloads_state_the_reduced_channels", test_winograd_workloads_state_the_reduced_channels);
}
