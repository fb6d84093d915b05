/* The Winograd template's default choices against values worked out by hand from the
 * target's caches and registers (ops/conv2d/winograd_schedule.c): the m per layer, the
 * block size and register block, gemm_at_tiles, the split of a whole image for the
 * threads; the chosen configs then run against the float64 reference.
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

/* The shape at hw x hw outputs (input hw x hw too, as the tests' 3x3 pad-1 layers). */
static tsl_winograd_shape at_size(tsl_winograd_shape s, int64_t hw) {
  s.H = s.W = s.OH = s.OW = hw;
  s.TH = s.TW = (hw + s.m - 1) / s.m;
  return s;
}

/* the default heuristic sizes blocks from the target's L1 and keeps register blocks in
 * the register file */
static void test_default_knobs_follow_the_target(void) {
  tsl_target avx2, avx512;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &avx512), TSL_OK);
  avx2.l1d_bytes = avx512.l1d_bytes = 32 * 1024;
  avx2.l2_bytes = avx512.l2_bytes = 512 * 1024;
  tsl_winograd_shape sh = {.m = 4, .alpha = 6, .N = 1, .CB = 8, .H = 56, .W = 56, .X = 8, .CP = 64, .KP = 64,
                           .OH = 56, .OW = 56, .TH = 14, .TW = 14};
  tsl_winograd_knobs k = tsl_winograd_default_knobs(&avx2, &sh);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_OK);
  CU_ASSERT_EQUAL(k.nr, 16);
  CU_ASSERT(k.mr * (k.nr / 8) + k.nr / 8 + 1 <= 16);
  CU_ASSERT(k.nr_tiles % sh.TW == 0 || k.nr_tiles < sh.TW);
  /* blocks from L2: V and M of a block within 2 x L2 (56 tiles, 4 rows here), whole
   * rows, a divisor of the 14 rows (4 + 4 + 4 + 2 would leave a tail in the parallel
   * block loop): 2 rows */
  CU_ASSERT_EQUAL(k.nr_tiles, 28);
  avx2.l2_bytes = 2 * 1024 * 1024;
  tsl_winograd_knobs k2 = tsl_winograd_default_knobs(&avx2, &sh);
  CU_ASSERT(k2.nr_tiles > k.nr_tiles && k2.nr_tiles % sh.TW == 0);
  /* the rows spread evenly over the blocks: with 1 MiB of L2 a block may hold 113 tiles
   * (8 rows), so 14 rows take two blocks, of 7 rows each (8 + 6 would leave one of two
   * threads idle for a row); SqueezeNet's 55x55 expand3x3 (16 -> 64 channels) may hold
   * 13 rows and gets 7 + 7, not 13 + 1 */
  avx2.l2_bytes = 1024 * 1024;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx2, &sh).nr_tiles, 7 * 14);
  tsl_winograd_shape sq = sh;
  sq.CB = 2;
  sq.CP = 16;
  sq.H = sq.W = sq.OH = sq.OW = 55;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx2, &sq).nr_tiles, 7 * 14);
  avx2.l2_bytes = 512 * 1024;
  /* a deep layer: one block, U streamed once */
  tsl_winograd_shape deep = {.m = 2, .alpha = 4, .N = 1, .CB = 64, .H = 7, .W = 7, .X = 8, .CP = 512, .KP = 512,
                             .OH = 7, .OW = 7, .TH = 4, .TW = 4};
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx2, &deep).nr_tiles, 16);
  tsl_winograd_knobs k3 = tsl_winograd_default_knobs(&avx512, &sh);
  sh.X = 16;
  sh.CB = 4;
  k3 = tsl_winograd_default_knobs(&avx512, &sh);
  CU_ASSERT_EQUAL(k3.nr, 32);
  CU_ASSERT(k3.mr * (k3.nr / 16) + k3.nr / 16 + 1 <= 32);
  /* SqueezeNet 1.0's 54x54 32 -> 128 layer, 1 MiB of L2: a block may hold 6 rows of the
   * 14; 5 + 5 + 4 left a tail (1.0 ms on 1 thread), 7 + 7 is clean and even (0.40 ms,
   * 0.21 on 2 threads): blocks in parallel */
  avx512.l2_bytes = 1024 * 1024;
  tsl_winograd_shape s54 = {.m = 4, .alpha = 6, .N = 1, .CB = 2, .H = 54, .W = 54, .X = 16, .CP = 32, .KP = 128,
                            .OH = 54, .OW = 54, .TH = 14, .TW = 14};
  tsl_winograd_knobs k54 = tsl_winograd_default_knobs(&avx512, &s54);
  CU_ASSERT_EQUAL(k54.nr_tiles, 7 * 14);
  CU_ASSERT_EQUAL(k54.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  /* its 27x27 layers: 7 rows of tiles, prime, one block; the output channels in parallel
   * (8 blocks of 16 lanes = 4 register blocks, in 2 parts); with 64 -> 256 channels a
   * block may hold 6 rows: no divisor of 7 fits, so the whole image (4 + 3 would leave a
   * tail) with the channels in parallel */
  tsl_winograd_shape s27 = at_size(s54, 27);
  tsl_winograd_knobs k27 = tsl_winograd_default_knobs(&avx512, &s27);
  CU_ASSERT_EQUAL(k27.nr_tiles, 49);
  CU_ASSERT_EQUAL(k27.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  s27.CB = 4;
  s27.CP = 64;
  s27.KP = 256;
  k27 = tsl_winograd_default_knobs(&avx512, &s27);
  CU_ASSERT_EQUAL(k27.nr_tiles, 49);
  CU_ASSERT_EQUAL(k27.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  /* 3 register blocks of output channels do not split in 2 parts: blocks stay parallel */
  s27.KP = 96;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &s27).parallel, TSL_WINOGRAD_PAR_BLOCKS);
  /* a weight-streaming layer (U 16 MiB > L2, 16 tiles): all tiles in one register block
   * of one vector of output channels, U prefetched ahead; at 16 registers the 16 tiles
   * do not fit one register block: the usual blocks, no prefetch */
  tsl_winograd_shape deep16 = deep;
  deep16.X = 16;
  deep16.CB = 32;
  tsl_winograd_knobs kd = tsl_winograd_default_knobs(&avx512, &deep16);
  CU_ASSERT_EQUAL(kd.nr_tiles, 16);
  CU_ASSERT_EQUAL(kd.mr, 16);
  CU_ASSERT_EQUAL(kd.nr, 16);
  CU_ASSERT(kd.prefetch_u > 0);
  CU_ASSERT_EQUAL(kd.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&kd), TSL_OK);
  tsl_winograd_knobs kd8 = tsl_winograd_default_knobs(&avx2, &deep);
  CU_ASSERT_EQUAL(kd8.prefetch_u, 0);
  CU_ASSERT(kd8.mr * (kd8.nr / 8) + kd8.nr / 8 + 1 <= 16);
  /* U within L2 (56x56 64 -> 64 F(4)): no prefetch */
  CU_ASSERT_EQUAL(k3.prefetch_u, 0);
  kd.prefetch_u = -1;
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&kd), TSL_ERR_INVALID);
  tsl_conv2d_layer small = {.N = 1, .C = 512, .H = 7, .W = 7, .K = 512, .R = 3, .S = 3, .stride_h = 1,
                            .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1,
                            .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx2, &small), 2);
  small.H = small.W = 28;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx2, &small), 4);
}

/* x86-64-avx2 and x86-64-avx512 with an Intel Xeon's caches (L1d 48 KiB, L2 2 MiB), for
 * expected default knobs worked out by hand from those sizes. */
static void xeon_cache_targets(tsl_target *avx2, tsl_target *avx512) {
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", avx512), TSL_OK);
  avx2->l1d_bytes = avx512->l1d_bytes = 48 * 1024;
  avx2->l2_bytes = avx512->l2_bytes = 2 * 1024 * 1024;
}

/* Runs 16-lane default configs (the same vectors of output channels at the host's lanes)
 * on `threads` threads against the float64 reference of each case. */
static void check_default_configs(const wino_case *cases, const tsl_winograd_knobs *const *knobs, int n, int threads,
                                  uint64_t seed) {
  int64_t lanes = tsl_target_f32_lanes(tsl_jit_target(jit));
  for (int i = 0; i < n; i++) {
    tsl_winograd_knobs kk = *knobs[i];
    kk.nr = kk.nr / 16 * lanes > lanes ? kk.nr / 16 * lanes : lanes;
    wino_data d;
    wino_data_make(&cases[i], 1.0, seed + (uint64_t)i, &d);
    wino_result r = wino_run(jit, &cases[i], &d, NULL, &kk, threads, NULL);
    wino_data_free(&d);
    CU_ASSERT(r.ok);
    CU_ASSERT(r.max_err <= tsl_winograd_error_bound_r(cases[i].m, wino_r(&cases[i])));
    CU_ASSERT(r.pad_channels_zero);
  }
}

/* gemm_at_tiles by default at 16 lanes where the block's V and M exceed L2 and U stays
 * within half of it, with a register block whose M group (alpha^2 x mr x nr floats) is
 * within 3/4 of L1 and holds at least 8 accumulators, mr a divisor of the row's tiles
 * where one exists. Expected values worked out by hand from those sizes (L1d 48 KiB,
 * L2 2 MiB, an Intel Xeon's); then each default config is run against the float64
 * reference at the host's lanes. */
static void test_default_gemm_at_tiles_where_m_leaves_l2(void) {
  tsl_target avx2, avx512;
  xeon_cache_targets(&avx2, &avx512);
  /* ResNet-18's phase stem, F(4x4, 4x4): 28 x 28 tiles; a block of 7 rows holds 196
   * tiles x 49 x 80 floats = 3.1 MB > 2 MiB; U 49 x 16 x 64 floats = 200 KB. M group
   * 49 x mr x 32 floats within 36 KiB: mr <= 5; 8 accumulators of 2 vectors: mr >= 4;
   * 4 divides 28 */
  tsl_winograd_shape stem = {.m = 4, .alpha = 7, .N = 1, .CB = 1, .H = 115, .W = 115, .X = 16, .CP = 16, .C = 12,
                             .KP = 64, .OH = 112, .OW = 112, .TH = 28, .TW = 28};
  tsl_winograd_knobs k = tsl_winograd_default_knobs(&avx512, &stem);
  CU_ASSERT_EQUAL(k.nr_tiles, 196);
  CU_ASSERT(k.gemm_at_tiles);
  CU_ASSERT_EQUAL(k.mr, 4);
  CU_ASSERT_EQUAL(k.nr, 32);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k), TSL_OK);
  /* at 8 lanes the FMAs hide M's round trip (measured): the default stays */
  tsl_winograd_shape stem8 = stem;
  stem8.X = 8;
  stem8.CB = 2;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx2, &stem8).gemm_at_tiles);
  /* an L1 too small for 4 tiles x 32 channels x 49 points: no such register block */
  avx512.l1d_bytes = 16 * 1024;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &stem).gemm_at_tiles);
  avx512.l1d_bytes = 48 * 1024;
  /* SqueezeNet 1.1's 55x55 16 -> 64 F(4x4): the whole image, 196 tiles x 36 x 80 floats
   * = 2.26 MB > 2 MiB; M group 36 x mr x 32 floats within 36 KiB: mr <= 8; 7 divides
   * the 14 tiles of a row (then 2 blocks of 7 rows for the threads, in that form) */
  tsl_winograd_shape fire = {.m = 4, .alpha = 6, .N = 1, .CB = 1, .H = 57, .W = 57, .X = 16, .CP = 16, .C = 16,
                             .KP = 64, .OH = 55, .OW = 55, .TH = 14, .TW = 14};
  tsl_winograd_knobs kf = tsl_winograd_default_knobs(&avx512, &fire);
  CU_ASSERT(kf.gemm_at_tiles);
  CU_ASSERT_EQUAL(kf.mr, 7);
  CU_ASSERT_EQUAL(kf.nr_tiles, 98);
  /* the same layer at 27x27 (49 tiles x 36 x 80 floats = 0.56 MB, within L2) and a deep
   * one (256 -> 256, U 9.4 MB, streamed): the GEMM per block */
  tsl_winograd_shape f27 = fire;
  f27.OH = f27.OW = 27;
  f27.TH = f27.TW = 7;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &f27).gemm_at_tiles);
  tsl_winograd_shape deep = {.m = 4, .alpha = 6, .N = 1, .CB = 16, .H = 16, .W = 16, .X = 16, .CP = 256, .C = 256,
                             .KP = 256, .OH = 14, .OW = 14, .TH = 4, .TW = 4};
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &deep).gemm_at_tiles);
  /* U between half of L2 and L2 (32 -> 128 at 54x54 with 1 MiB: U 36 x 32 x 128 floats =
   * 590 KB, blocks of 98 tiles x 36 x 160 floats = 2.3 MB): read once per group of mr
   * tiles it would leave L2, so the GEMM stays per block; with 2 MiB (U within half)
   * blocks of 7 rows (98 tiles, 2.26 MB, over L2) take the knob */
  tsl_winograd_shape s54 = {.m = 4, .alpha = 6, .N = 1, .CB = 2, .H = 56, .W = 56, .X = 16, .CP = 32, .C = 32,
                            .KP = 128, .OH = 54, .OW = 54, .TH = 14, .TW = 14};
  avx512.l2_bytes = 1024 * 1024;
  CU_ASSERT_FALSE(tsl_winograd_default_knobs(&avx512, &s54).gemm_at_tiles);
  avx512.l2_bytes = 2 * 1024 * 1024;
  CU_ASSERT(tsl_winograd_default_knobs(&avx512, &s54).gemm_at_tiles);
  /* the chosen configs compute the convolution: the fire layer (mr 7 of a 14-tile row)
   * and the stem's knobs on a smaller image whose 10-tile rows leave a tail of 2 */
  const wino_case cases[] = {{1, 16, 55, 55, 64, 1, 1, 1, 1, 4, 1, false, 0, 0},
                             {1, 12, 40, 40, 64, 2, 2, 1, 1, 4, 1, false, 0, 4}};
  const tsl_winograd_knobs *const knobs[] = {&kf, &k};
  check_default_configs(cases, knobs, 2, 1, 700);
}

/* A whole image that the cache rule made one block (N odd) goes to the threads as an even
 * number of blocks of whole rows, each of at least 32 tiles, when U is within L2: not as
 * output channels in 2 parts, each transforming the whole input again (docs/winograd.md,
 * "Blocks for the threads"). Expected values worked out by hand from the sizes (L1d 48
 * KiB, L2 2 MiB); then the split configs are run on 2 threads against the float64
 * reference at the host's lanes, one thread per block. */
static void test_default_splits_a_whole_image_for_the_threads(void) {
  tsl_target avx2, avx512;
  xeon_cache_targets(&avx2, &avx512);
  /* resnet18's 56x56 64 -> 64 F(4x4): a block may hold 4 MiB / (36 x 128 x 4 B) = 227
   * tiles, so the whole image (196); U 36 x 64 x 64 floats = 590 KB within L2: 14 rows
   * split as 7 + 7 (98 tiles each), the blocks in parallel; at 16 lanes the whole image's
   * V and M (3.6 MB) exceed L2, so the GEMM per group of mr = 7 tiles stays */
  tsl_winograd_shape r56 = {.m = 4, .alpha = 6, .N = 1, .CB = 4, .H = 56, .W = 56, .X = 16, .CP = 64, .KP = 64,
                            .OH = 56, .OW = 56, .TH = 14, .TW = 14};
  tsl_winograd_knobs k16 = tsl_winograd_default_knobs(&avx512, &r56);
  CU_ASSERT_EQUAL(k16.nr_tiles, 98);
  CU_ASSERT_EQUAL(k16.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  CU_ASSERT(k16.gemm_at_tiles);
  CU_ASSERT_EQUAL(k16.mr, 7);
  CU_ASSERT_EQUAL(tsl_winograd_knobs_check(&k16), TSL_OK);
  tsl_winograd_shape r56x8 = r56;
  r56x8.X = 8;
  r56x8.CB = 8;
  tsl_winograd_knobs k8 = tsl_winograd_default_knobs(&avx2, &r56x8);
  CU_ASSERT_EQUAL(k8.nr_tiles, 98);
  CU_ASSERT_EQUAL(k8.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  CU_ASSERT_FALSE(k8.gemm_at_tiles);
  /* two images: one block each is already even; three: 7-row blocks (6 in all) */
  tsl_winograd_shape two = r56;
  two.N = 2;
  tsl_winograd_knobs k2 = tsl_winograd_default_knobs(&avx512, &two);
  CU_ASSERT_EQUAL(k2.nr_tiles, 196);
  CU_ASSERT_EQUAL(k2.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  two.N = 3;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &two).nr_tiles, 98);
  /* U over L2 (28x28 128 -> 128: U 2.4 MB): every thread would read all of it from L3;
   * 7 rows of tiles are prime anyway: the whole image, channels in 2 parts */
  tsl_winograd_shape r28 = {.m = 4, .alpha = 6, .N = 1, .CB = 8, .H = 28, .W = 28, .X = 16, .CP = 128, .KP = 128,
                            .OH = 28, .OW = 28, .TH = 7, .TW = 7};
  tsl_winograd_knobs kc = tsl_winograd_default_knobs(&avx512, &r28);
  CU_ASSERT_EQUAL(kc.nr_tiles, 49);
  CU_ASSERT_EQUAL(kc.parallel, TSL_WINOGRAD_PAR_CHANNELS);
  /* the same 56x56 layer with 256 -> 256 channels (U 9.4 MB): the cache rule's 2 rows;
   * 32x32 64 -> 64 (8 x 8 tiles): 4 + 4 rows of 32 tiles; 24x24 (6 x 6 tiles): 3 rows
   * would be 18 tiles, fewer than 32: the whole image */
  tsl_winograd_shape big = r56;
  big.CB = 16;
  big.CP = big.KP = 256;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &big).nr_tiles, 28);
  /* one whole block with 4 tile rows (16x64 outputs, 128 -> 128: 64 tiles x 36 x 256
   * floats = 2.4 MB, within twice L2) but U 36 x 128 x 128 floats = 2.4 MB over L2: not
   * split (2 rows of 32 tiles would be, with U within L2); five images: their blocks are
   * already on the thread pool */
  tsl_winograd_shape wide = {.m = 4, .alpha = 6, .N = 1, .CB = 8, .H = 16, .W = 64, .X = 16, .CP = 128, .KP = 128,
                             .OH = 16, .OW = 64, .TH = 4, .TW = 16};
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &wide).nr_tiles, 64);
  two.N = 5;
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &two).nr_tiles, 196);
  tsl_winograd_shape s32 = at_size(r56, 32);
  tsl_winograd_knobs k32 = tsl_winograd_default_knobs(&avx512, &s32);
  CU_ASSERT_EQUAL(k32.nr_tiles, 32);
  CU_ASSERT_EQUAL(k32.parallel, TSL_WINOGRAD_PAR_BLOCKS);
  tsl_winograd_shape s24 = at_size(r56, 24);
  CU_ASSERT_EQUAL(tsl_winograd_default_knobs(&avx512, &s24).nr_tiles, 36);
  /* the split configs compute the convolution on 2 threads (a block each); the 16-lane
   * one's register block at the host's lanes */
  const wino_case cases[] = {{1, 64, 56, 56, 64, 1, 1, 1, 1, 4, 1, true, 0, 0},
                             {3, 20, 32, 32, 32, 1, 1, 1, 1, 4, 2, false, 0, 0}};
  const tsl_winograd_knobs *const knobs[] = {&k16, &k32};
  check_default_configs(cases, knobs, 2, 2, 760);
}

/* The default m per layer against the layers' measured winners in models (docs/winograd.md
 * "m"): F(4) from 20x20 outputs; below, F(4) where its U streams under the FMAs (16
 * tiles in one register block of 32 registers) or stays small, F(2) where F(4)'s U comes
 * from memory outside that form or feeds few tiles. */
static void test_default_m_per_layer_at_8_and_16_lanes(void) {
  tsl_target avx2, avx512;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &avx2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &avx512), TSL_OK);
  avx2.l2_bytes = 512 * 1024;
  avx512.l2_bytes = 1024 * 1024;
  const struct {
    int64_t C, K, HW;
    int m8, m16; /* measured winner at 8 lanes (block 8) and at 16 (block 16) */
  } cases[] = {
      {64, 64, 56, 4, 4},    /* resnet18 layer1 */
      {128, 128, 28, 4, 4},  /* resnet18 layer2 */
      {256, 256, 14, 2, 4},  /* resnet18 layer3: U 9.4 MB streamed in F(4)'s 16-tile form at 16 lanes only */
      {512, 512, 7, 2, 2},   /* resnet18 layer4: F(4)'s U 37.7 MB feeds 4 tiles */
      {48, 192, 13, 4, 4},   /* SqueezeNet 1.1 features.9/10: F(4)'s U 1.3 MB, within 4 x L2 */
      {64, 256, 13, 2, 4},   /* SqueezeNet features.11/12 (1.0: features.12): U 2.4 MB, within
                                4 x 1 MiB at 16 lanes, not 4 x 512 KiB at 8 */
      {256, 256, 12, 2, 2},  /* 9 F(4) tiles (12 -> 12): U 9.4 MB neither small nor fed 16 tiles */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_conv2d_layer l = {.N = 1, .C = cases[i].C, .H = cases[i].HW, .W = cases[i].HW, .K = cases[i].K, .R = 3,
                          .S = 3, .stride_h = 1, .stride_w = 1, .pad_top = 1, .pad_left = 1, .pad_bottom = 1,
                          .pad_right = 1, .dilation_h = 1, .dilation_w = 1, .groups = 1, .block = 8};
    int m8 = tsl_winograd_default_m(&avx2, &l);
    l.block = 16;
    int m16 = tsl_winograd_default_m(&avx512, &l);
    if (m8 != cases[i].m8 || m16 != cases[i].m16)
      fprintf(stderr, "\n  %lld -> %lld at %lldx%lld: m %d / %d at 8 / 16 lanes, want %d / %d\n",
              (long long)cases[i].C, (long long)cases[i].K, (long long)cases[i].HW, (long long)cases[i].HW, m8,
              m16, cases[i].m8, cases[i].m16);
    CU_ASSERT_EQUAL(m8, cases[i].m8);
    CU_ASSERT_EQUAL(m16, cases[i].m16);
  }
  /* F(4) is never chosen below 20x20 where it does no fewer multiplies: 5x5 outputs are
   * 9 F(2) tiles (144 multiplies a channel pair) against 4 F(4) tiles (144) */
  tsl_conv2d_layer tiny = {.N = 1, .C = 16, .H = 5, .W = 5, .K = 16, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1,
                           .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .dilation_h = 1,
                           .dilation_w = 1, .groups = 1, .block = 16};
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx512, &tiny), 2);
  /* the same layer in a batch of 2, non-square (14x13), and as plain NCHW (block 1: no
   * stream form, U not small): F(4) stays where its stream form or small U holds */
  tsl_conv2d_layer l3 = {.N = 2, .C = 256, .H = 14, .W = 13, .K = 256, .R = 3, .S = 3, .stride_h = 1, .stride_w = 1,
                         .pad_top = 1, .pad_left = 1, .pad_bottom = 1, .pad_right = 1, .dilation_h = 1,
                         .dilation_w = 1, .groups = 1, .block = 16};
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx512, &l3), 4);
  l3.block = 1;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&avx512, &l3), 2);
  /* measured on x86-64 only: armv8 (32 registers, 4 lanes) and no target keep F(2) below
   * 20x20, F(4) above */
  tsl_target arm;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &arm), TSL_OK);
  l3.block = 4;
  l3.N = 1;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&arm, &l3), 2);
  CU_ASSERT_EQUAL(tsl_winograd_default_m(NULL, &l3), 2);
  l3.H = l3.W = 28;
  CU_ASSERT_EQUAL(tsl_winograd_default_m(&arm, &l3), 4);
}

void tsl_tests_winograd_defaults(void) {
  CU_pSuite s = CU_add_suite("winograd_defaults", suite_init, suite_clean);
  CU_add_test(s, "test_default_m_per_layer_at_8_and_16_lanes", test_default_m_per_layer_at_8_and_16_lanes);
  CU_add_test(s, "test_default_knobs_follow_the_target", test_default_knobs_follow_the_target);
  CU_add_test(s, "test_default_gemm_at_tiles_where_m_leaves_l2", test_default_gemm_at_tiles_where_m_leaves_l2);
  CU_add_test(s, "test_default_splits_a_whole_image_for_the_threads",
              test_default_splits_a_whole_image_for_the_threads);
}
