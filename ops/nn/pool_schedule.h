/* Schedule templates for the NCHW[x]c pooling operators of the registry
 * (max_pool2d_nchwc, avg_pool2d_nchwc, global_avg_pool2d_nchwc; ops/nn/pool.c).
 *
 * Windowed pools use the register-tile nest of the convolutions (conv_common.h) with
 * the reduction over the window (r, s) and the x channel lanes vectorized:
 *
 *   for n, cb.outer, y.outer (fused, parallel)   [padded rows copied here: pad_mode 2]
 *    for x.outer
 *     for r, s                                   (unrolled with unroll_kernel)
 *      for y.inner, x.inner, cb.inner (unrolled)
 *       for c (vectorized): acc = max(acc, padded[...])   (or +)
 *    [avg: out = acc / cnt[y, x], cnt computed once per call]
 *
 * The padding stage holds -inf (max) or 0 (avg) around the input: inlined (guarded
 * loads, the default) or copied (pad_mode 1, 2: then the inner loops read without
 * guards). A NaN anywhere in a window propagates through the max in every
 * lane and every loop split alike (IR max is NaN-propagating, shared/cases C08).
 *
 * Global average pooling: parallel over (n, cb), the H x W reduction into one vector
 * accumulator of x lanes, then the division.
 */
#ifndef TESSEL_OPS_NN_POOL_SCHEDULE_H
#define TESSEL_OPS_NN_POOL_SCHEDULE_H

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

typedef struct tsl_pool_shape {
  int64_t N, CB, OH, OW, X;
  int64_t R, S;
  bool padded;
  bool global; /* global_avg_pool2d_nchwc */
} tsl_pool_shape;

typedef struct tsl_pool_knobs {
  int64_t ow_block;   /* output columns per tile (windowed), >= 1 */
  int64_t oh_block;   /* output rows per tile, >= 1 */
  int64_t oc_blocks;  /* channel blocks per tile, >= 1 */
  bool unroll_kernel; /* unroll the window loops (global: the W loop by 4) */
  int pad_mode;       /* 0 inline, 1 whole padded copy, 2 rows per outer iteration */
  bool parallel;
} tsl_pool_knobs;

/* Reads the shape of a pooling program. TSL_ERR_INVALID for another program. */
tsl_status tsl_pool_get_shape(const tsl_te_program *p, tsl_pool_shape *out);

/* Defaults for target t: one channel block, the widest row tile of at most (vector
 * registers - 4) accumulators that wastes the fewest columns, the window unrolled up to
 * 49 taps, the padding inlined as guarded loads (pad_mode 0), parallel. */
tsl_pool_knobs tsl_pool_default_knobs(const tsl_target *t, const tsl_pool_shape *sh);

/* TSL_ERR_INVALID naming the knob when a block is < 1 or pad_mode is outside 0..2. */
tsl_status tsl_pool_knobs_check(const tsl_pool_knobs *k);

/* The schedule of p with knobs k (NULL: defaults); *out owned by the caller. */
tsl_status tsl_pool_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_pool_knobs *k,
                             tsl_schedule **out);

/* Generic-interface templates "max_pool2d_nchwc.tile", "avg_pool2d_nchwc.tile" and
 * "global_avg_pool2d_nchwc.tile". Knobs (version 2): windowed pools "tile" (ow_block x
 * oh_block x oc_blocks as one value, conv_common.h: only tiles that fit the registers and
 * lowering's unroll limit), unroll_kernel, pad_mode (when the op pads), parallel; the
 * global pool unroll_kernel (its W loop by 4) and parallel. */
const tsl_template *tsl_pool_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
