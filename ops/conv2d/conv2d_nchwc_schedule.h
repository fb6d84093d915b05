/* Schedule template for the direct NCHW[x]c convolutions of the registry
 * (conv2d_nchwc, conv2d_nchwc_bias, conv2d_nchwc_bias_add; ops/conv2d/conv2d_nchwc.c), with
 * knobs, for the grouped convolutions as dense ones over a band of input blocks
 * (conv2d_nchwc_blockdiag_bias(_add): the same loop nest, cb over the band), and for the
 * 1x1 convolutions as GEMMs (conv2d_nchwc_1x1_bias, _1x1_bias_add).
 *
 * The loop nest is the register-blocked direct convolution of oneDNN's jit_avx2/avx512
 * kernels and TVM's conv2d_NCHWc x86 schedule (the NCHWc layout: A. Zlateski, H. S.
 * Seung, "Compile-time optimizations for NCHWc convolutions", and Liu et al.,
 * "Optimizing CNN Model Inference on CPUs", USENIX ATC 2019). On the conv stage (output
 * axes n, kb, y, x, k; reduction cb, r, s, c):
 *
 *   for n, kb.outer, y.outer (fused, parallel)        [loop_order 1: y.outer before kb.outer]
 *    [for cb.outer]                                   (ic_chunk < C/x: accumulate in memory)
 *     for x.outer
 *      for cb.inner, r, s, c                          (c unrolled with unroll_ic, s with unroll_kw)
 *       for y.inner, x.inner, kb.inner (unrolled)     (kb.inner before x.inner with oc_major)
 *        for k (vectorized, y lanes):
 *          acc[y.i, x.i, kb.i][k] += padded[n, cb, y*sh + r*dh, x*sw + s*dw, c] * weight[kb, cb, r, s, c, k]
 *
 * The oh_block x ow_block x oc_blocks accumulators are vectors of y lanes (one register
 * each); every c step loads oc_blocks weight vectors and broadcasts oh_block*ow_block
 * input values. The accumulator tile lives in a stage computed at the output's x.outer
 * loop (registers: its buffer is small and indexed by constants), or with a chunked
 * reduction at the output's y.outer loop (one row strip accumulated in memory across
 * input-channel chunks, L1-resident). The epilogue (bias, residual, activation) runs on
 * the tile right after its reduction, inside the same loops (fused). The spatially
 * padded input is either a separate copy (pad_mode 1, a parallel pass before the conv,
 * so the inner loops read it without guards) or inlined into the conv (pad_mode 0: guarded
 * loads; free when the conv has no padding).
 *
 * 1x1 as GEMM (the _1x1 ops, whose pixels are one axis p = y*OW + x): the same nest
 * with p tiled by ow_block, so tiles run across rows and a 7x7 image is 49 pixels, not 7
 * rows of 7 — the convolution is the GEMM out[p, k] = sum_c data[p, c] weight[c, k] per
 * output block. (Fusing y and x in the schedule instead would not do: bound inference
 * gives a stage computed inside a fused loop the bounding box of its (y, x) points, whole
 * rows for a tile that crosses one.)
 *
 * With y = 1 (plain NCHW as NCHW[1]c) the tile's columns x.inner are vectorized instead
 * of the channel lanes: a row of OW columns runs in vectors of ow_block lanes.
 *
 * Any shape is correct: factors that do not divide their extent leave tails that
 * lowering guards (loop partitioning keeps the main loops free of guards; a vectorized
 * column tail is a lane mask, shared/cases C01).
 */
#ifndef TESSEL_OPS_CONV2D_CONV2D_NCHWC_SCHEDULE_H
#define TESSEL_OPS_CONV2D_CONV2D_NCHWC_SCHEDULE_H

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

/* The shape of a conv2d_nchwc program (from its stages). */
typedef struct tsl_conv2d_nchwc_shape {
  int64_t N, CB, H, W, X;  /* data; CB: the channel blocks the conv reduces over (the
                              weight's axis 1: the data's C/x, or a block-diagonal conv's
                              band) */
  int64_t KB, R, S, Y;     /* weight (KB, CB, R, S, X, Y) */
  int64_t OH, OW;          /* output */
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  bool padded;             /* the padding stage is not the identity */
  bool has_epilogue;       /* an "out" stage after the conv (bias / residual / act) */
  bool flat;               /* a _1x1 op: one pixel axis (H = OH = the pixels, W = OW = 1) */
  bool banded;             /* the input block read depends on the output block (a
                              block-diagonal grouped conv) */
  double bands[5];         /* bands[oc]: distinct input blocks a tile of oc output blocks
                              reads per step (tpl_conv_tile_input_blocks; 1 unless banded) */
} tsl_conv2d_nchwc_shape;

typedef struct tsl_conv2d_nchwc_knobs {
  int64_t ow_block;  /* output columns (pixels for a _1x1 op) per register tile, >= 1 */
  int64_t oh_block;  /* output rows per register tile, >= 1 (ignored by _1x1 ops) */
  int64_t oc_blocks; /* output-channel blocks (of y lanes) per register tile, >= 1 */
  int64_t ic_chunk;  /* input-channel blocks per reduction chunk, >= 1; >= C/x keeps the
                        whole reduction inside the register tile */
  bool oc_major;     /* in the tile: kb.inner outside x.inner (weights reused from
                        registers) instead of inside (broadcasts reused) */
  bool unroll_ic;    /* unroll the x input lanes of a channel block */
  bool unroll_kw;    /* unroll the kernel-column loop */
  int loop_order;    /* 0: n, kb.outer, y.outer; 1: n, y.outer, kb.outer */
  int pad_mode;      /* 0: padding inlined (guarded loads); 1: padded copy of the whole
                        input first; 2: padded copy of the rows one outer (parallel)
                        iteration reads, inside it (conv_common.h TPL_PAD_OUTER) */
  bool parallel;     /* outer loops on the thread pool */
} tsl_conv2d_nchwc_knobs;

/* Reads the shape of p: an instantiation of conv2d_nchwc, conv2d_nchwc_bias,
 * conv2d_nchwc_bias_add or conv2d_nchwc_blockdiag_bias(_add) (a stage tagged
 * "conv2d_nchwc" reading stage "padded" and the weight), or of conv2d_nchwc_1x1_bias(_add) (a stage tagged "conv2d_nchwc_1x1"; flat
 * is set, H = OH = the pixels, W = OW = 1, R = S = 1). Errors: TSL_ERR_INVALID when p is
 * neither. */
tsl_status tsl_conv2d_nchwc_get_shape(const tsl_te_program *p, tsl_conv2d_nchwc_shape *out);

/* Default knobs for target t: the register tile (oc_blocks x ow_block, up to 4 x 16)
 * that minimizes a cycle model of the whole output — per reduction step max(FMAs / 2,
 * loads / 1.5, 4) (two FMA pipes, measured load throughput, FMA latency; the output
 * blocks of a banded conv's tile share broadcasts only where they read the same band, and
 * its tiles keep one more register free: a 1 x 14 tile on AVX2 ran at 0.7 of 1 x 10), the column and
 * channel-block tails counted, ~2 cycles per accumulator of set-up and epilogue — among
 * tiles whose accumulators + the smaller of their weight / broadcast sets + 1 fit the
 * target's vector registers (16 on AVX2: 2 x 6, 3 x 4 or 4 x 3 tiles; oc_major when the
 * broadcasts are the smaller set); the whole reduction inside the tile unless one
 * tile's weights exceed half of L2 (t->l2_bytes; then equal input-channel chunks that
 * fit); the padded copy when there is padding; kb.outer outermost; parallel. Measured on
 * an AVX2 Zen 3 against oneDNN (bench/conv_layers). gemm: pick ow_block for tiles over
 * all OH*OW pixels (as for a _1x1 op, whose shape has flat set: then the pixel axis is
 * used whatever gemm says). */
tsl_conv2d_nchwc_knobs tsl_conv2d_nchwc_default_knobs(const tsl_target *t, const tsl_conv2d_nchwc_shape *sh,
                                                      bool gemm);

/* TSL_ERR_INVALID naming the knob when a block is < 1, loop_order is outside {0, 1} or
 * pad_mode outside {0, 1, 2}. */
tsl_status tsl_conv2d_nchwc_knobs_check(const tsl_conv2d_nchwc_knobs *k, const tsl_conv2d_nchwc_shape *sh);

/* The schedule of p for target t with knobs k (NULL: the defaults). *out is owned by the caller (tsl_schedule_free); the program must outlive
 * it. Errors: those of tsl_conv2d_nchwc_get_shape and _knobs_check, TSL_ERR_NOMEM, and a
 * step's own error if the schedule refuses one (a tessel bug; the message names the
 * template and step). */
tsl_status tsl_conv2d_nchwc_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_conv2d_nchwc_knobs *k,
                                     tsl_schedule **out);

/* The kernel name of MegCC's form (STYLE.md) for p with these knobs, e.g.
 * "conv2d_nchw8c_3x3_s1_p1_f32_bias_relu" (d2 for dilation, p1_2_1_2 for asymmetric
 * padding, "gemm" for the _1x1 ops, "__" + a hash of the knobs), written to
 * buf (n bytes); returns buf. The epilogue part comes from the op's act / residual. */
const char *tsl_conv2d_nchwc_kernel_name(const tsl_te_program *p, const tsl_conv2d_nchwc_knobs *k, char *buf,
                                         size_t n);

/* The templates in the generic interface (schedule/template.h), for the tuner to
 * register: "<op>.direct" for conv2d_nchwc, conv2d_nchwc_bias, conv2d_nchwc_bias_add and
 * conv2d_nchwc_blockdiag_bias(_add),
 * "<op>.gemm" for conv2d_nchwc_1x1_bias and conv2d_nchwc_1x1_bias_add. Static storage; *n
 * receives the count. Knobs (version 2): "tile" (the register tile ow_block x oh_block x
 * oc_blocks as one value, conv_common.h: only tiles whose accumulators fit the vector
 * registers less one and whose unrolled copies stay within lowering's limit, so every
 * config compiles), ic_chunk, oc_major, loop_order, unroll_ic and unroll_kw (offered
 * only where the default tile stays within the unroll limit with them), pad_mode (when
 * the op pads), parallel. */
const tsl_template *tsl_conv2d_nchwc_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
