/* Schedule template for the bitserial conv2d operators of ops/binary/binary.c (every
 * bitserial_conv2d_* op: the integer accumulator stage `acc`), with knobs, after TVM's
 * bitserial_conv2d schedules (Cowan et al.) and Riptide (Fromm et al., MLSys 2020, sec. 5).
 *
 * Two loop nests, chosen by the layout of `acc`:
 *
 * 1. acc[n, y, x, k] (the unipolar ops with weights [CW, R, S, K]; the binarized models'
 *    convs): a register tile of ow_block output pixels x oc_block output channels,
 *    accumulated in registers (cache_write "local", computed inside the tile loop):
 *
 *      for k.outer (parallel), y, x.outer
 *        tile = 0
 *        for [b,] c, r, s            (r, s unrolled with unroll_kernel)
 *          for x in tile (unrolled)  a = data word of pixel x: loaded once, broadcast
 *            for k in tile (vector)  tile[x, k] += popcount(a & weight[c, r, s, k])
 *        acc[tile] = tile
 *
 *    Each data word is reused across oc_block channels and each weight vector across
 *    ow_block pixels; the popcount is LLVM's ctpop on <4 x i64>, which on AVX2 is the
 *    nibble-table vpshufb popcount, and LLVM keeps the byte counts of the unrolled taps
 *    in bytes (vpaddb) and widens them once (vpsadbw): the accumulate-in-bytes scheme of
 *    Mula, Kurz and Lemire, "Faster population counts using AVX2 instructions" (Computer
 *    Journal 61(1), 2018), sec. 2-3. On armv8 ctpop is NEON cnt + pairwise adds.
 *    The per-pixel popcount of the data alone (stage apop) and the epilogue (glue, bit
 *    packing) read acc. With fuse_rows (the default for rows of >= 14 pixels) acc and
 *    apop are computed one output row at a time inside the epilogue's parallel row loop
 *    (for k.outer, x.outer: tile), so acc never leaves the caches (at 56x56x64 it is 1.6
 *    MiB of i64); otherwise acc is one pass parallel over channel blocks and apop and the
 *    epilogue separate parallel loops over rows.
 *
 * 2. acc[n, k, y, x] (the bipolar ops, weights [K, CW, R, S]):
 *      for k (parallel), n, y, x.outer, [b,] c, r, s, x.inner (vectorized over tile_x)
 */
#ifndef TESSEL_OPS_BINARY_BITSERIAL_H
#define TESSEL_OPS_BINARY_BITSERIAL_H

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

typedef struct tsl_bitserial_knobs {
  int64_t tile_x;     /* nest 2: output columns per tile (split factor of x), >= 1; 1 = no split */
  bool vectorize;     /* nest 2: the tile's columns on vector lanes (needs tile_x >= 2);
                         nest 1: the tile's channels on vector lanes */
  bool unroll_kernel; /* unroll the r and s loops of the window */
  bool parallel;      /* output channel blocks in parallel */
  int64_t oc_block;   /* nest 1: output channels per register tile (0: default) */
  int64_t ow_block;   /* nest 1: output pixels (along x) per register tile (0: default, sized to the
                         target's vector registers) */
  int fuse_rows;      /* nest 1: 1 = the accumulator (and apop) computed row by row inside the
                         epilogue's parallel row loop, so a row of acc is consumed while it is
                         still in L1/L2 instead of the whole acc going through memory; -1 = one
                         acc pass over the whole output (parallel over channel blocks), then the
                         epilogue; 0 = default: rows when the output row has >= 14 pixels */
} tsl_bitserial_knobs;

/* Defaults for target t: nest 2 tile_x = the target's 64-bit lanes times 2 (8 on AVX2),
 * vectorized; nest 1 oc_block 16, ow_block 0: decided by tsl_bitserial_schedule so that the
 * tile's accumulators (ow_block x oc_block/64-bit lanes vectors) fill half the vector
 * registers, at most 8 pixels, the width with the fewest tiles along the output row (2 on
 * AVX2 and NEON, 16 registers of 4 words or 32 of 2; 7 or 8 on AVX-512, 32 registers of 8
 * words: 1.2-2.3x faster than 2 there on bresnet18's 28x28, 14x14 and 7x7 layers, equal at
 * 56x56); fuse_rows 0 (decided from the output row); window unrolled when it has at most
 * 25 taps; parallel. */
tsl_bitserial_knobs tsl_bitserial_default_knobs(const tsl_target *t, int64_t R, int64_t S);

/* TSL_ERR_INVALID naming the knob when tile_x < 1 or tile_x > 64, vectorize with
 * tile_x < 2, oc_block outside [0, 64], ow_block outside [0, 16] or fuse_rows outside
 * [-1, 1]. */
tsl_status tsl_bitserial_knobs_check(const tsl_bitserial_knobs *k);

/* The schedule of p (a bitserial_conv2d_* program) with knobs k (NULL: defaults for t);
 * tile_x is halved until it fits the output row (no vectorizing below 2), oc_block and
 * ow_block are clamped to the output's channels and row; *out owned by the caller
 * (tsl_schedule_free). Errors: TSL_ERR_INVALID when p has no `acc` stage of a bitserial
 * conv, those of _knobs_check, and a refused step. */
tsl_status tsl_bitserial_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_bitserial_knobs *k,
                                  tsl_schedule **out);

/* The template adapters (schedule/template.h), one per bitserial operator, named
 * "<op>.tile", knobs oc_block, ow_block, fuse_rows, unroll_kernel, parallel (nest 1) or tile_x,
 * vectorize, unroll_kernel, parallel (nest 2). *n receives the count; static storage. */
const tsl_template *tsl_bitserial_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
