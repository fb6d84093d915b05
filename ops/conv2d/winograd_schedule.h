/* Schedule template for Winograd F(m x m, 3 x 3) convolutions (the registry's
 * conv2d_winograd_f<m> and conv2d_winograd_f<m>_add, ops/conv2d/winograd.h), with knobs.
 *
 * The loop structure follows MegEngine's Winograd strategy (tiles processed in blocks of
 * nr_tiles; the transformed input of a block is written once, in the layout the batched
 * GEMM reads, with no packing pass) on top of Lavin & Gray's algorithm:
 *
 *   for n, for blk in blocks of tiles      (parallel when parallel = blocks)
 *     [padded: the block's input rows, zero-padded     when pad_at = block]
 *     V  = B^T d B for every tile of the block and every channel:
 *          for t, cb: Vr = B^T d into an alpha x alpha x X buffer, V = Vr B;
 *          transform indices unrolled, the x lanes vectorized
 *     M  = batched GEMM over the alpha^2 positions (e, nu):
 *          for e, nu, k blocks of nr, t blocks of mr, c:   mr x nr/X vector
 *          accumulators, nr/X vector loads of U and mr broadcasts of V per c
 *     out = act(A^T M A + bias): for kb, tile: Ya = A^T M (m x alpha x X buffer), the
 *          m x m outputs unrolled, the x lanes vectorized
 *   (gemm_at_tiles moves M inside the tile loop: per group of mr tiles and nr channels.)
 *
 * parallel = channels suits small images (7x7, 14x14 on resnet18's deep layers), where
 * there are fewer blocks than threads, or the layer is bound by streaming U: V's tiles
 * are split over the threads, then M's nr-channel register blocks (the outermost GEMM
 * loop then, so each thread streams only its columns of U) and the output transform's
 * channel blocks (with gemm_at_tiles, one region over output-channel groups does both).
 *
 * A block is whole rows of tiles of one image (nr_tiles >= TW: nr_tiles / TW rows) or
 * part of one row (nr_tiles < TW), so its tiles are consecutive and bound inference
 * realizes exactly them. The transforms' select chains fold to constant sparse sums
 * because their indices are unrolled. Blocks are sized from L2, not L1: every block
 * streams all of U, so small blocks re-read it (docs/winograd.md, section 4).
 *
 * Any shape is correct: border tiles, a block count that does not divide, mr or nr that
 * do not divide leave tails that lowering guards.
 */
#ifndef TESSEL_OPS_CONV2D_WINOGRAD_SCHEDULE_H
#define TESSEL_OPS_CONV2D_WINOGRAD_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/conv2d/winograd.h"
#include "dsl/te.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the zero-padded input is realized. */
typedef enum tsl_winograd_pad_at {
  TSL_WINOGRAD_PAD_INLINE = 0, /* no copy: the input transform's loads are guarded */
  TSL_WINOGRAD_PAD_BLOCK = 1,  /* the rows one block reads, copied per block */
  TSL_WINOGRAD_PAD_ROOT = 2    /* the whole padded input, once per call */
} tsl_winograd_pad_at;

/* What runs on the thread pool. */
typedef enum tsl_winograd_parallel {
  TSL_WINOGRAD_PAR_NONE = 0,    /* nothing: the whole conv on the calling thread */
  TSL_WINOGRAD_PAR_BLOCKS = 1,  /* the blocks of tiles (each thread streams all of U) */
  TSL_WINOGRAD_PAR_CHANNELS = 2 /* the output channels in 2 parts (when each part is a whole
                                   number of nr register blocks, else as blocks), the parts'
                                   loop outside the blocks: one parallel launch per call;
                                   each part transforms every block's input and streams only
                                   its part of U */
} tsl_winograd_parallel;

/* GEMM loop order inside a block. */
typedef enum tsl_winograd_gemm_order {
  TSL_WINOGRAD_GEMM_K_OUTER = 0, /* e, nu, k blocks, t blocks: a C x nr panel of U stays in L1 */
  TSL_WINOGRAD_GEMM_T_OUTER = 1  /* e, nu, t blocks, k blocks: an mr x C panel of V stays in L1 */
} tsl_winograd_gemm_order;

typedef struct tsl_winograd_knobs {
  int64_t nr_tiles; /* tiles per block, >= 1 (see above) */
  int64_t mr;       /* tiles per GEMM register block, >= 1 */
  int64_t nr;       /* output channels per GEMM register block, a multiple of the layout's
                       block x (nr / x vectors of x lanes) */
  int gemm_order;   /* tsl_winograd_gemm_order (k-outer when parallel = channels) */
  bool unroll_cx;   /* unroll the GEMM's innermost reduction loop (the x lanes of c;
                       not the single loop over the C real channels of a layer whose
                       last block is partial and that has several) */
  int pad_at;       /* tsl_winograd_pad_at */
  bool row_buffers; /* realize B^T d and A^T M per tile in small buffers (else inline them
                       into the column transforms: same arithmetic after LLVM's value
                       numbering, far larger IR to lower and compile) */
  bool gemm_at_tiles; /* compute the GEMM per group of mr tiles of a row and nr channels
                         right before their output transform (M stays register-block
                         sized) instead of for the whole block at once */
  int parallel;     /* tsl_winograd_parallel */
  int64_t prefetch_u; /* GEMM reduction steps (c.outer: X input channels each, or all C of
                         a layer whose last block is partial) ahead at which
                         the GEMM prefetches its panel of U (software prefetch, one per
                         cache line); 0: none. For layers whose U streams from memory
                         (larger than L2, few tiles per U value) the loads then overlap
                         the FMAs instead of stalling them. Without gemm_at_tiles. */
} tsl_winograd_knobs;

/* What the template reads off a Winograd program. */
typedef struct tsl_winograd_shape {
  int m, alpha;
  int64_t N, CB, H, W, X; /* data f32[N, CB, H, W, X] */
  int64_t CP, KP;         /* U f32[alpha, alpha, CP, KP] */
  int64_t C;              /* the GEMM's reduction over input channels (the op's
                             in_channels, <= CP; tsl_winograd_layer_shape: C of a layer
                             whose last block is partial, CP otherwise) */
  int64_t OH, OW, TH, TW; /* output and tile grid (TH = ceil(OH / m)) */
} tsl_winograd_shape;

/* The shape of a conv2d_winograd program (tsl_winograd_instantiate or the registry's
 * conv2d_winograd_f<m>[_add]): stages padded, tile_in, Vr, V (tag winograd_input), M
 * (winograd_gemm), Ya, tile_out, Y and the output out (conv2d_winograd).
 * Errors: TSL_ERR_INVALID naming what differs. */
tsl_status tsl_winograd_program_shape(const tsl_te_program *p, tsl_winograd_shape *out);

/* The shape tsl_winograd_instantiate gives F(m x m, 3 x 3) of layer l (what
 * tsl_winograd_program_shape reads off that program): X = l's block (1 when below),
 * CB = ceil(C / X), CP = CB X, KP = ceil(K / X) X, TH = ceil(OH / m), C the GEMM's
 * reduction (tsl_winograd_in_channels, or CP when that is 0). No checks: the layer is
 * taken as tsl_winograd_supports accepts it. */
tsl_winograd_shape tsl_winograd_layer_shape(const tsl_conv2d_layer *l, int m);

/* The conv operator's in_channels for layer l: C when the layer's last channel block
 * has zero padding (C % X != 0: one block, C < X, or several), so that the GEMM reduces
 * over the real channels only; 0 (all CP) otherwise. tsl_winograd_instantiate and the
 * conv family's workloads (tsl_conv2d_algo_workload) pass it, so records keys and
 * programs agree. */
int64_t tsl_winograd_in_channels(const tsl_conv2d_layer *l);

/* Knobs for target t and shape s, measured on this project's AVX2 machine (Zen, 8 lanes,
 * 32 KiB L1d, 512 KiB L2) on resnet18's 3x3 layers: a 6 x 16 GEMM register block on
 * 16-register targets (12 x 2 vectors on 32-register ones), nr = two native vectors of
 * output channels, k-outer GEMM order, the padded rows copied per block, the row
 * transforms in small per-tile buffers, blocks in parallel, except output channels in
 * parallel when the blocks over all images are odd and fewer than MIN_PAR_BLOCKS (4)
 * and the register blocks (KP / nr) of output channels split in 2 parts. nr_tiles: the
 * block's V and M (alpha^2 x nr_tiles x (CP + KP) floats) within twice the target's L2
 * (t->l2_bytes), but at least 32 tiles or the whole image, since each block streams all
 * of U; whole rows of tiles when that is at least one row, the rows per block a divisor
 * of the rows (a parallel block loop with a tail measured 2.4x slower), an even number
 * of blocks preferred (see block_rows in winograd_schedule.c). Weight-streaming layers (U
 * larger than L2, a block's tiles within one register block of one vector of output
 * channels: at most 16 and the vector registers less 2) get mr = the block's tiles, nr =
 * one vector and prefetch_u = 4 (docs/winograd.md, section 4: resnet18's 7x7 512 -> 512
 * layers in the model 1.10-1.31 -> 1.00-1.10 ms at 1 thread). */
tsl_winograd_knobs tsl_winograd_default_knobs(const tsl_target *t, const tsl_winograd_shape *s);

/* TSL_ERR_INVALID naming the knob when nr_tiles, mr or nr is < 1, prefetch_u < 0 or
 * gemm_order / pad_at / parallel is out of range. (tsl_winograd_schedule also refuses an nr that is not a multiple of
 * the program's block x.) */
tsl_status tsl_winograd_knobs_check(const tsl_winograd_knobs *k);

/* The m (2, 4 or 6) tessel uses by default for 3x3 layer l on target t (measured, see
 * docs/winograd.md): F(4x4) for outputs of at least 20x20 pixels (400). Below, F(4x4)
 * where it does fewer multiplies and its U (alpha^2 x CP x KP floats) either is within
 * 4 x L2 or streams in its weight-streaming form with 16 tiles a U value (all tiles in
 * one register block of MAX_MR = 16, U prefetched: AVX-512); F(2x2) otherwise and on
 * targets other than x86-64 (the rule is measured on x86-64 only),
 * where F(4)'s border tiles and 2.25x larger U read from memory cost more than its fewer
 * multiplications save.
 * F(6x6) is never the default: it was no faster here and is 4x less accurate than
 * F(4x4); the tuner may still pick it. Larger kernels (l->R != 3): F(4x4) from 20x20
 * outputs (ResNet-18's stem in its phase form, 112x112: F(4x4, 4x4) 0.78 ms against
 * F(2x2, 4x4) 1.19 ms, AVX-512, 1 thread), F(2x2) below (the rule above counts 3x3
 * tiles; unmeasured for larger ones). */
int tsl_winograd_default_m(const tsl_target *t, const tsl_conv2d_layer *l);

/* The schedule of p for target t with the knobs (NULL: the defaults). *out is owned by
 * the caller (tsl_schedule_free) and NULL on error; p must outlive it. Errors: those of
 * tsl_winograd_program_shape and tsl_winograd_knobs_check, TSL_ERR_NOMEM, and a step's
 * own error if the schedule refuses one (a tessel bug: the message names the step). */
tsl_status tsl_winograd_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_winograd_knobs *knobs,
                                 tsl_schedule **out);

/* A schedule for the kernel transform program (winograd_weight_f<m>): the transform
 * indices unrolled, output channels vectorized. It runs once per set of weights.
 * Errors: TSL_ERR_INVALID when p is not such a program, step errors. */
tsl_status tsl_winograd_weight_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out);

/* The template in the generic interface (schedule/template.h), one per registry
 * conv operator: "conv2d_winograd_f2.blocked" for conv2d_winograd_f2, likewise f4, f6
 * and the _add variants (index 3 + i); then the larger kernels' (indices 6-9:
 * conv2d_winograd_f2_r4, f4_r4, f2_r5, f4_r5; 10-13 their _add variants). Knobs:
 * nr_tiles, mr, nr, gemm_order, unroll_cx, pad_at, row_buffers, gemm_at_tiles, parallel,
 * prefetch_u. The tuner registers them. */
enum { TSL_WINOGRAD_NTEMPLATES = 14 };
extern const tsl_template tsl_winograd_templates[TSL_WINOGRAD_NTEMPLATES];

#ifdef __cplusplus
}
#endif
#endif
