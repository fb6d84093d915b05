/* Schedule templates for the depthwise and grouped NCHW[x]c convolutions of the registry
 * (depthwise_conv2d_nchwc(_add), ops/conv2d/depthwise.c; conv2d_nchwc_grouped(_add), ops/conv2d/
 * conv2d_nchwc.c; the _add variants add a residual before the activation), with knobs.
 *
 * Both use the register-tile loop nest of conv2d_nchwc.h (conv_common.h) with the
 * reduction over the kernel window only (depthwise: r, s; grouped: ci, r, s):
 *
 *   for n, kb.outer, y.outer (fused, parallel)     [padded rows copied here: pad_mode 2]
 *    for x.outer
 *     for [ci,] r, s                               (r and s unrolled with unroll_kernel)
 *      for y.inner, x.inner, kb.inner (unrolled)
 *       for k (vectorized, x lanes): acc += padded[...] * weight[...]
 *    epilogue (bias, activation) on the tile
 *
 * Depthwise: output lane k reads input lane k, so the inner statement is one vector load
 * of the input, one of the weight and one FMA; an unrolled 3x3 window lets LLVM reuse
 * the overlapping input columns of neighbouring outputs from registers. Depthwise
 * convolutions do ~9 FMAs per input element, so they are bound by memory and by loads,
 * not by the FMA units (oneDNN reaches 23-30% of peak on them here, anchors.md); the
 * default reads the padding through guarded loads rather than copying the input.
 *
 * Grouped: an output vector's lanes may belong to different groups and so read
 * different input channels (a gather); correct for any channels per group, including
 * fewer than x (shared/cases C04) and depthwise multipliers > 1, but not tuned for speed.
 * With groups = 1 every lane reads the same input channel (a broadcast): then it is the
 * direct convolution over the true input channels, the algorithm for first layers whose
 * 3 channels would leave 5 of 8 lanes of conv2d_nchwc's reduction zero. With at most 8
 * channels and the window unrolled, its reduction is ordered s, r, ci with r and ci
 * unrolled (otherwise ci, r, s as for the gathering convs): one
 * iteration of s reads a distinct input value per tap, so no broadcast stays live
 * across taps (with s unrolled, neighbouring columns share inputs and LLVM's merged
 * broadcasts spilled: ResNet-18's 7x7 s2 conv1 ~60 -> ~80 GFLOP/s of 91 at 1 thread).
 */
#ifndef TESSEL_OPS_CONV2D_DEPTHWISE_SCHEDULE_H
#define TESSEL_OPS_CONV2D_DEPTHWISE_SCHEDULE_H

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

/* The shape of a depthwise or grouped program. */
typedef struct tsl_depthwise_shape {
  int64_t N, KB, OH, OW, Y; /* output [N, KB, OH, OW, Y] */
  int64_t R, S;
  bool padded;
  bool grouped; /* conv2d_nchwc_grouped (else depthwise_conv2d_nchwc) */
  bool broadcast_input; /* grouped, and every output lane reads the same input value
                           (groups 1): no gather */
  int64_t stride_h, stride_w;
  int64_t CG; /* input channels per group (grouped: the reduction axis ci), else 1 */
} tsl_depthwise_shape;

typedef struct tsl_depthwise_knobs {
  int64_t ow_block;   /* output columns per register tile, >= 1 */
  int64_t oh_block;   /* output rows per register tile, >= 1 */
  int64_t oc_blocks;  /* channel blocks per register tile, >= 1 */
  bool unroll_kernel; /* unroll the r and s loops */
  int loop_order;     /* 0: n, kb.outer, y.outer; 1: n, y.outer, kb.outer */
  int pad_mode;       /* 0 inline, 1 whole padded copy first, 2 rows per outer iteration */
  bool parallel;
} tsl_depthwise_knobs;

/* Reads the shape of a depthwise_conv2d_nchwc or conv2d_nchwc_grouped program.
 * Errors: TSL_ERR_INVALID when p is neither. */
tsl_status tsl_depthwise_get_shape(const tsl_te_program *p, tsl_depthwise_shape *out);

/* Defaults for target t: one channel block per tile (two when the input is broadcast),
 * the widest row tile whose
 * accumulators plus the weight and one input leave two of the target's vector registers
 * free, chosen to waste the fewest columns on the tail; a stride-1 depthwise conv over
 * more than 64 output pixels in the blocked layout (more than one channel per block)
 * instead takes 8-12 accumulators (fewer when the registers or the image allow no more)
 * in a block of up to R rows, the fewest such tiles (MobileNetV2 at 1 thread, in the
 * model: features.1 at 112x112 0.18-0.25 -> 0.08-0.10 ms, the 14x14 ones 0.028 -> 0.017 ms
 * at 16 lanes); the window unrolled (when it has at most 49 taps); when the conv pads:
 * outputs of at most 64 pixels copy the rows per outer iteration (pad_mode 2); those
 * blocks of rows read the padding through guarded loads (pad_mode 0: in a model the input
 * comes from L3 and a copy's extra pass cost more than the guards); stride-1 outputs of at
 * least 28x28 pixels in the plain layout copy the whole padded input first (pad_mode 1:
 * measured with bench/conv_layers on MobileNetV2's layers, 0.61-0.79 -> 0.68-1.01 of oneDNN
 * at 112x112, 56x56 and 28x28 with one-row tiles, before the blocks of rows); the others
 * (stride 2, where a copy moves twice the bytes the conv reads, and 14x14) read the padding
 * through guarded loads (pad_mode 0); parallel. Grouped: the window not unrolled past 9 taps
 * when the lanes gather (49 when they broadcast: first layers, ResNet-18's 7x7 s2 conv
 * 0.78-0.82 -> 0.86-0.88 of oneDNN unrolled), the whole padded input copied first
 * (pad_mode 1) except for a broadcast conv of at most 8 channels and 3x3 taps, which reads the
 * padding through guarded loads (pad_mode 0: MobileNetV2's 3x3 s2 first conv 0.33 ->
 * 0.28 ms; its copy moves 3-lane vectors with masked loads). */
tsl_depthwise_knobs tsl_depthwise_default_knobs(const tsl_target *t, const tsl_depthwise_shape *sh);

/* TSL_ERR_INVALID naming the knob when a block is < 1, loop_order is outside {0, 1} or
 * pad_mode outside {0, 1, 2}. */
tsl_status tsl_depthwise_knobs_check(const tsl_depthwise_knobs *k);

/* The schedule of p with knobs k (NULL: defaults); *out owned by the caller. Errors: those
 * of tsl_depthwise_get_shape and _knobs_check, and a refused step (a tessel bug; the
 * message names the template and step). */
tsl_status tsl_depthwise_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_depthwise_knobs *k,
                                  tsl_schedule **out);

/* The kernel name of STYLE.md, e.g. "depthwise_conv2d_nchw8c_3x3_s2_p1_f32_bias_relu6__
 * 0badcafe" (group_conv2d_... for grouped programs); written to buf, returned. */
const char *tsl_depthwise_kernel_name(const tsl_te_program *p, const tsl_depthwise_knobs *k, char *buf, size_t n);

/* Generic-interface templates (schedule/template.h) for the tuner to register:
 * "depthwise_conv2d_nchwc.tile", "conv2d_nchwc_grouped.tile" and those of the residual
 * variants (depthwise_conv2d_nchwc_add.tile, conv2d_nchwc_grouped_add.tile). Knobs
 * (version 2): "tile" (ow_block x oh_block x oc_blocks as one value, conv_common.h: only
 * tiles within the vector registers less two and lowering's unroll limit), unroll_kernel
 * (where the default tile allows it), pad_mode (when the op pads), loop_order, parallel.
 * *n receives the count. */
const tsl_template *tsl_depthwise_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
