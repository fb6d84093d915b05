/* Schedule template for the bitserial conv2d operators of dsl/ops/binary.c (every
 * bitserial_conv2d_* op: the integer accumulator stage `acc`), with knobs, after TVM's
 * bitserial_conv2d schedules (Cowan et al.) and Riptide (Fromm et al., MLSys 2020, sec. 5):
 *
 *   for k (parallel)
 *    for n, y, x.outer
 *     for [b,] c, r, s            (r, s unrolled with unroll_kernel)
 *      for x.inner (vectorized)   acc += C_c - 2*popcount(a ^ w)
 *
 * Vectorizing x.inner runs the popcount on a vector of words from neighbouring output
 * pixels (one word each): LLVM's ctpop on <4 x i64> is the shuffle-table (vpshufb)
 * popcount on AVX2 and NEON cnt + pairwise adds on armv8. Stages after `acc` (glue,
 * bitpack) keep the default schedule. */
#ifndef TESSEL_SCHEDULE_TEMPLATES_BITSERIAL_H
#define TESSEL_SCHEDULE_TEMPLATES_BITSERIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/target.h"
#include "dsl/te.h"
#include "schedule/schedule.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_bitserial_knobs {
  int64_t tile_x;     /* output columns per tile (split factor of x), >= 1; 1 = no split */
  bool vectorize;     /* vectorize the tile's columns (needs tile_x >= 2) */
  bool unroll_kernel; /* unroll the r and s loops of the window */
  bool parallel;      /* output channels k in parallel */
} tsl_bitserial_knobs;

/* Defaults for target t: tile_x = the target's vector lanes of 64-bit words times 2
 * (8 on AVX2), vectorized, window unrolled when it has at most 25 taps, parallel. */
tsl_bitserial_knobs tsl_bitserial_default_knobs(const tsl_target *t, int64_t R, int64_t S);

/* TSL_ERR_INVALID naming the knob when tile_x < 1 or tile_x > 64, or vectorize with
 * tile_x < 2. */
tsl_status tsl_bitserial_knobs_check(const tsl_bitserial_knobs *k);

/* The schedule of p (a bitserial_conv2d_* program) with knobs k (NULL: defaults for t);
 * tile_x is halved until it fits the output row (no vectorizing below 2);
 * *out owned by the caller (tsl_schedule_free). Errors: TSL_ERR_INVALID when p has no
 * `acc` stage of a bitserial conv, those of _knobs_check, and a refused step. */
tsl_status tsl_bitserial_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_bitserial_knobs *k,
                                  tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
