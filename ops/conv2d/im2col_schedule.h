/* Schedule template for the im2col + GEMM convolution of the registry
 * (conv2d_nchwc_im2col and its residual variant conv2d_nchwc_im2col_add, ops/conv2d/im2col.c),
 * with knobs.
 *
 * The output pixels p = oh*OW + ow (one axis of the op) are cut into tiles of tile_px pixels
 * so that one tile of the im2col matrix, tile_px x C*R*S floats, fits in half of L2
 * (MegEngine's blocked im2col). Per tile, the col stage writes the tile once, already in
 * the panel layout the micro-kernel reads (pack_rows pixels innermost: the GEMM's pack
 * of A fused into the im2col), and the GEMM runs over it (GotoBLAS/BLIS register
 * blocking, as ops/matmul/matmul_schedule.h):
 *
 *   for n, tile (fused, parallel)
 *     col[tile] = im2col of tile_px pixels           (written once, L2-resident)
 *     for kb.outer                                   (oc_blocks blocks of y channels)
 *       for po in tile by pack_rows
 *         for c, r, s                                (s unrolled with unroll_kw)
 *           for pi (pack_rows, unrolled), kb.inner (unrolled)
 *             for k (vectorized): acc[pi, kb.inner][k] += col[po, c, r, s, pi] * w[kb, c, r, s, k]
 *         epilogue (bias, activation) on the pack_rows x oc_blocks tile
 *
 * The weights (K/y, C, R, S, y) are already the B panels the micro-kernel reads (y
 * contiguous columns per reduction step), so only A needs packing. The reduction is
 * over the true input channels (no zero lanes), which is what makes this algorithm pay
 * on first layers (C = 3). pack_rows is a parameter of the op (the col layout depends on
 * it): the template reads it from the program.
 */
#ifndef TESSEL_OPS_CONV2D_IM2COL_SCHEDULE_H
#define TESSEL_OPS_CONV2D_IM2COL_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_im2col_shape {
  int64_t N, KB, P, Y; /* output [N, KB, P = OH*OW, Y] */
  int64_t C, R, S;   /* the reduction: true input channels x kernel */
  int64_t pack_rows; /* the col panel height (the op's pack_rows) */
} tsl_im2col_shape;

typedef struct tsl_im2col_knobs {
  int64_t tile_px;   /* pixels per im2col tile, a multiple of pack_rows (>= P: one tile) */
  int64_t oc_blocks; /* output blocks (of y lanes) per register tile, >= 1 */
  bool unroll_kw;    /* unroll the kernel-column loop of the GEMM */
  bool parallel;     /* tiles on the thread pool */
} tsl_im2col_knobs;

/* The pack_rows (GEMM row block) to instantiate conv2d_nchwc_im2col with for target t:
 * 6 on every target, so the graph compiler's key (which has no target) and a program
 * built for a target agree; 32-register targets widen the tile in output blocks
 * instead (6 x 4 accumulators: 10 loads per 24 FMAs, where 12 x 2 needs 14). */
int64_t tsl_im2col_pack_rows(const tsl_target *t);

/* Reads the shape of a conv2d_nchwc_im2col program. TSL_ERR_INVALID otherwise. */
tsl_status tsl_im2col_get_shape(const tsl_te_program *p, tsl_im2col_shape *out);

/* Defaults for target t: the largest tile (a multiple of pack_rows) whose im2col panel
 * fits in half of the target's L2 (t->l2_bytes), balanced over the pixels; oc_blocks the
 * most (up to 4, and KB) whose pack_rows x oc_blocks accumulators, weight vectors and a
 * broadcast fit the vector registers (2 with 16 registers, 4 with 32); unroll_kw when
 * S <= 7 and within the unroll limit; parallel. */
tsl_im2col_knobs tsl_im2col_default_knobs(const tsl_target *t, const tsl_im2col_shape *sh);

/* TSL_ERR_INVALID naming the knob when tile_px is not a positive multiple of pack_rows
 * or oc_blocks < 1. */
tsl_status tsl_im2col_knobs_check(const tsl_im2col_knobs *k, const tsl_im2col_shape *sh);

/* The schedule of p with knobs k (NULL: defaults); *out owned by the caller. Errors:
 * those of tsl_im2col_get_shape and _knobs_check, a refused step (a tessel bug). */
tsl_status tsl_im2col_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_im2col_knobs *k,
                               tsl_schedule **out);

/* The kernel name, e.g. "conv2d_nchw8c_7x7_s2_p3_f32_im2col_bias_relu__89abcdef". */
const char *tsl_im2col_kernel_name(const tsl_te_program *p, const tsl_im2col_knobs *k, char *buf, size_t n);

/* Generic-interface templates "conv2d_nchwc_im2col.blocked" and
 * "conv2d_nchwc_im2col_add.blocked" (schedule/template.h). Knobs (version 2): tile_px
 * (pixels per im2col tile: 1, 2, 4, ... panels up to the image), oc_blocks (register tiles
 * of pack_rows x oc_blocks vectors within the registers; the default always offered),
 * unroll_kw (offered when every tile stays within lowering's unroll limit with it),
 * parallel. */
const tsl_template *tsl_im2col_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
