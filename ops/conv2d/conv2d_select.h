/* Convolution algorithms of the operator library and the default choice between them.
 *
 * A layer is a tsl_conv2d_layer (ops/conv2d/conv2d_layer.h). Each algorithm maps it to a registry
 * operator (ops/<family>/), a weight transform (OIHW -> the layout that operator reads, run
 * once per set of weights) and a schedule template with a default config:
 *
 *   direct       conv2d_nchwc_bias(_add)    ops/conv2d/conv2d_nchwc_schedule.h
 *   gemm1x1      conv2d_nchwc_1x1_bias(_add), 1x1 stride 1 unpadded, pixels as one axis
 *   im2col       conv2d_nchwc_im2col(_add)  ops/conv2d/im2col_schedule.h
 *   depthwise    depthwise_conv2d_nchwc(_add)  ops/conv2d/depthwise_schedule.h (groups = C = K)
 *   grouped      conv2d_nchwc_grouped(_add) ops/conv2d/depthwise_schedule.h (any groups)
 *   blockdiag    conv2d_nchwc_blockdiag_bias(_add), groups > 1: the grouped conv as a dense
 *                direct conv over a band of input blocks whose weights are zero outside
 *                each output channel's group (the direct template; tsl_conv2d_blockdiag_band)
 * (the _add operators, chosen when has_residual, add the residual before the activation:
 * every algorithm takes every epilogue)
 *   winograd_f2/f4/f6  conv2d_winograd_f<m> (another engineer's ops and template; offered
 *                when the registry has them and tsl_winograd_supports_kernel accepts the
 *                layer: 3x3, and 4x4 / 5x5 for f2 and f4 through conv2d_winograd_f<m>_r<r>)
 *
 * The default heuristic (tsl_conv2d_select) is what a graph compiles without tuning;
 * MegEngine's Fast-Run lesson is that no heuristic is right everywhere, so the tuner
 * measures every algorithm that applies instead (ops/algorithm.h).
 */
#ifndef TESSEL_OPS_CONV2D_CONV2D_SELECT_H
#define TESSEL_OPS_CONV2D_CONV2D_SELECT_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "ops/conv2d/conv2d_layer.h"
#include "ops/epilogue.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_conv2d_algo {
  TSL_CONV2D_DIRECT = 0,
  TSL_CONV2D_GEMM_1X1,
  TSL_CONV2D_IM2COL,
  TSL_CONV2D_DEPTHWISE,
  TSL_CONV2D_GROUPED,
  TSL_CONV2D_WINOGRAD_F2,
  TSL_CONV2D_WINOGRAD_F4,
  TSL_CONV2D_WINOGRAD_F6,
  TSL_CONV2D_BLOCKDIAG,
  TSL_CONV2D_ALGO_COUNT
} tsl_conv2d_algo;

/* "direct", "gemm1x1", "im2col", "depthwise", "grouped", "winograd_f2", ...,
 * "blockdiag"; "?" if out of range. */
const char *tsl_conv2d_algo_name(tsl_conv2d_algo a);

/* Whether a is one of the Winograd algorithms (winograd_f2/f4/f6); *m (may be NULL) gets
 * its output tile m (2, 4 or 6). False, *m untouched, for every other value. */
bool tsl_conv2d_algo_is_winograd(tsl_conv2d_algo a, int *m);

/* Whether algorithm a computes the layer exactly as described; on false *why (may be
 * NULL) gets a static reason ("winograd: needs a 3x3 kernel"). */
bool tsl_conv2d_algo_applies(const tsl_conv2d_layer *d, tsl_conv2d_algo a, const char **why);

/* The band of the block-diagonal algorithm for layer d (groups > 1; block x = d->block):
 * the most input channel blocks any output block's groups reach, BW = max over output
 * blocks kb of (last - first + 1), first / last the blocks of the first input channel of
 * the group of kb's first output channel and of the last input channel of the group of
 * its last (real) output channel. Its conv does BW*x MACs per output value and tap where
 * the grouped conv does C/groups: *inflation (may be NULL) gets BW*x / (C/groups).
 * Returns 0 for a malformed layer. */
int64_t tsl_conv2d_blockdiag_band(const tsl_conv2d_layer *d, double *inflation);

/* Instantiates algorithm a for the layer and target t (which may choose operator
 * parameters such as im2col's pack_rows; NULL: 16-register defaults) in the current IR
 * arena:
 *  *conv   the operator (tsl_te_check'ed). Inputs, in kernel order: data f32[N, C/x, H, W,
 *          x] (f32[N, C, H, W, 1] with data_block 1: plain NCHW), the weight in the algorithm's layout, the bias (K values, zero-padded to
 *          whole blocks), then the residual f32[N, K/x, OH, OW, x] when has_residual.
 *          Output: f32[N, K/x, OH, OW, x] (NCHW[x]c). gemm1x1 and im2col take or give
 *          the same bytes with the pixels flattened (data f32[N, C/x, H*W, x] for
 *          gemm1x1; output and residual f32[N, K/x, OH*OW, x] for both). Winograd's
 *          inputs are its own (ops/conv2d/winograd.h), in the same order.
 *          d's epilogue function, if any, is applied to the output stage
 *          (tsl_conv2d_layer_epilogue, tsl_epilogue_apply), whatever the algorithm.
 *  *weight (may be NULL) the weight transform: input f32[K, C/groups, R, S] (OIHW),
 *          output the conv's second input.
 * Errors: TSL_ERR_INVALID (tsl_conv2d_layer_check), TSL_ERR_UNSUPPORTED when a does not
 * apply (the reason), errors of tsl_op_instantiate. */
tsl_status tsl_conv2d_algo_instantiate(const tsl_conv2d_layer *d, tsl_conv2d_algo a, const tsl_target *t,
                                       tsl_te_program **conv, tsl_te_program **weight);

/* The default-config schedule of a conv program made by tsl_conv2d_algo_instantiate(a)
 * for target t; *out owned by the caller. Errors: those of the algorithm's template. */
tsl_status tsl_conv2d_algo_schedule(const tsl_te_program *conv, tsl_conv2d_algo a, const tsl_target *t,
                                    tsl_schedule **out);

/* The generic-interface template (schedule/template.h) that schedules a conv program
 * made by tsl_conv2d_algo_instantiate (found by the program's operator name), or NULL.
 * Its default config is what tsl_conv2d_algo_schedule applies; the tuner searches its
 * space. */
const tsl_template *tsl_conv2d_algo_template(const tsl_te_program *conv);

/* The default algorithm for the layer on target t (one that applies), measured with
 * bench/conv_layers on an AVX2 Zen 3: depthwise for groups = C = K; for other groups
 * blockdiag, but grouped for one input channel per group and for groups of exactly one
 * block of input and output channels (AVX-512 Zen 5, bench/conv_layers --layer); gemm1x1 for 1x1 stride-1 unpadded layers; grouped (the direct conv over the
 * true input channels) when more than a quarter of the C/x*x reduction lanes would be
 * zero (first layers, C = 3: 2-2.4x the direct conv); Winograd for 3x3 and 4x4 (not 5x5)
 * stride-1 undilated layers with C, K >= 8 (tsl_conv2d_prefers_winograd) when the registry has it and it takes the layer (1.7-3x
 * the direct conv on every such layer of SqueezeNet 1.1 and ResNet-18), with the m of
 * tsl_winograd_default_m (F(4x4) from 20x20 outputs; below, on x86-64, F(4x4) where it
 * does fewer multiplies and its U is small or streamed, else F(2x2)); grouped for
 * strided convs with a kernel wider than 1 at 16 lanes and blocks of 16 (its default ran
 * 6-24% faster than direct's in resnet18 and ConvNeXt on AVX-512 Zen 5, not at 8
 * lanes); direct otherwise. */
tsl_conv2d_algo tsl_conv2d_select(const tsl_conv2d_layer *d, const tsl_target *t);

/* Whether tsl_conv2d_select sends a dense layer of C input and K output channels with an
 * R x S kernel to Winograd when the algorithm takes it (stride 1, undilated, groups 1):
 * C, K >= 8 and a 3x3 or 4x4 kernel. 4x4 measured on ResNet-18's 7x7 stride-2 stem in its
 * phase form (models/passes/phase_conv.h; AVX-512 Zen 5, 1 thread): F(4x4, 4x4) 0.78 ms
 * isolated (tunecli run-op) and 0.82-0.86 ms in the model, against 1.09-1.24 ms for the
 * direct 7x7 stride-2 conv in the model; at 8 lanes 1.38 against 2.25 ms in the model. 5x5 layers
 * stay direct (unmeasured). The phase-conv pass rewrites a strided conv only where this
 * holds for its phase form. */
bool tsl_conv2d_prefers_winograd(int64_t C, int64_t K, int64_t R, int64_t S);

/* Whether a layer of C input channels in `groups` groups, compiled at block x, reads its
 * data in plain NCHW when the data is plain (data_block 1): the layers tsl_conv2d_select
 * sends to the grouped algorithm for their few channels (groups 1, more than a quarter
 * of the C/x*x lanes zero: first layers). The grouped conv reduces over the true
 * channels, reading one input value per tap for all lanes, so a plain NCHW input needs
 * no NCHW[x]c copy first (models/passes/layout.h leaves the transform out). */
bool tsl_conv2d_reads_plain_data(int64_t C, int64_t groups, int64_t block);

#ifdef __cplusplus
}
#endif
#endif
