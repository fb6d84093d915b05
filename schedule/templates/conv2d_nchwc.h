/* Schedule template for the direct NCHW[x]c convolutions of the registry
 * (conv2d_nchwc, conv2d_nchwc_bias, conv2d_nchwc_bias_add; dsl/ops/conv2d_nchwc.c), with
 * knobs, and its "1x1 as GEMM" variant.
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
 * gemm (1x1, stride 1, no padding): y and x are fused into one pixel axis p = y*OW + x
 * tiled by ow_block, so tiles run across rows and a 7x7 image is 49 pixels, not 7 rows
 * of 7 — the convolution is the GEMM out[p, k] = sum_c data[p, c] weight[c, k] per
 * output block.
 *
 * Any shape is correct: factors that do not divide their extent leave tails that
 * lowering guards (loop partitioning keeps the main loops free of guards).
 */
#ifndef TESSEL_SCHEDULE_TEMPLATES_CONV2D_NCHWC_H
#define TESSEL_SCHEDULE_TEMPLATES_CONV2D_NCHWC_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/target.h"
#include "dsl/te.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The shape of a conv2d_nchwc program (from its stages). */
typedef struct tsl_conv2d_nchwc_shape {
  int64_t N, CB, H, W, X;  /* data */
  int64_t KB, R, S, Y;     /* weight (KB, CB, R, S, X, Y) */
  int64_t OH, OW;          /* output */
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  bool padded;             /* the padding stage is not the identity */
  bool has_epilogue;       /* an "out" stage after the conv (bias / residual / act) */
} tsl_conv2d_nchwc_shape;

typedef struct tsl_conv2d_nchwc_knobs {
  int64_t ow_block;  /* output columns (pixels with gemm) per register tile, >= 1 */
  int64_t oh_block;  /* output rows per register tile, >= 1 (1 with gemm) */
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
  bool gemm;         /* fuse y and x into one pixel axis (needs a 1x1 stride-1 conv
                        without padding) */
  bool parallel;     /* outer loops on the thread pool */
} tsl_conv2d_nchwc_knobs;

/* Reads the shape of p (an instantiation of conv2d_nchwc, conv2d_nchwc_bias or
 * conv2d_nchwc_bias_add: a stage tagged "conv2d_nchwc" reading stage "padded" and the
 * weight). Errors: TSL_ERR_INVALID when p is not such a program. */
tsl_status tsl_conv2d_nchwc_get_shape(const tsl_te_program *p, tsl_conv2d_nchwc_shape *out);

/* Whether the gemm variant applies (R = S = 1, stride 1, no padding). */
bool tsl_conv2d_nchwc_gemm_applies(const tsl_conv2d_nchwc_shape *sh);

/* Default knobs for target t (its vector registers and caches; tsl_target.vector_bits
 * decides nothing here: the lanes are the program's y), chosen for AVX2 (16 registers):
 * a register tile of at most 12 accumulators (oc_blocks x ow_block = 2 x 6 when the
 * output has >= 2 blocks, else 1 x up to 12), ow_block chosen to waste the fewest
 * columns on the tail, the whole reduction inside the tile unless the weights of one
 * tile's reduction exceed half of L2 (then chunks that fit), the padded copy when there
 * is padding, kb.outer outermost, parallel. 32-register targets double the tile. With
 * gemm true (only when tsl_conv2d_nchwc_gemm_applies), the pixel-axis variant. */
tsl_conv2d_nchwc_knobs tsl_conv2d_nchwc_default_knobs(const tsl_target *t, const tsl_conv2d_nchwc_shape *sh,
                                                      bool gemm);

/* TSL_ERR_INVALID naming the knob when a block is < 1, oh_block > 1 with gemm,
 * loop_order outside {0, 1}, pad_mode outside {0, 1, 2}, or gemm on a shape where it
 * does not apply. */
tsl_status tsl_conv2d_nchwc_knobs_check(const tsl_conv2d_nchwc_knobs *k, const tsl_conv2d_nchwc_shape *sh);

/* The schedule of p for target t with knobs k (NULL: the defaults, gemm when it
 * applies). *out is owned by the caller (tsl_schedule_free); the program must outlive
 * it. Errors: those of tsl_conv2d_nchwc_get_shape and _knobs_check, TSL_ERR_NOMEM, and a
 * step's own error if the schedule refuses one (a tessel bug; the message names the
 * template and step). */
tsl_status tsl_conv2d_nchwc_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_conv2d_nchwc_knobs *k,
                                     tsl_schedule **out);

/* The kernel name of MegCC's form (STYLE.md) for p with these knobs, e.g.
 * "conv2d_nchw8c_3x3_s1_p1_f32_bias_relu" (d2 for dilation, p1_2_1_2 for asymmetric
 * padding, "gemm" for the pixel-axis variant, "__" + a hash of the knobs), written to
 * buf (n bytes); returns buf. The epilogue part comes from the op's act / residual. */
const char *tsl_conv2d_nchwc_kernel_name(const tsl_te_program *p, const tsl_conv2d_nchwc_knobs *k, char *buf,
                                         size_t n);

/* The templates in the generic interface (schedule/template.h), for the tuner to
 * register: "<op>.direct" and "<op>.gemm1x1" for each op conv2d_nchwc,
 * conv2d_nchwc_bias and conv2d_nchwc_bias_add (gemm1x1 declines all but 1x1 stride-1
 * unpadded workloads with TSL_ERR_UNSUPPORTED). Static storage; *n receives the count. */
const tsl_template *tsl_conv2d_nchwc_templates(int *n);

#ifdef __cplusplus
}
#endif
#endif
