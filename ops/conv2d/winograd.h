/* Winograd convolution F(m x m, r x r) as tensor expressions (A. Lavin and S. Gray, "Fast
 * Algorithms for Convolutional Neural Networks", CVPR 2016): r x r kernels (3x3, and 4x4
 * and 5x5), stride 1, dilation 1, groups 1, any padding (top/left/bottom/right, 0
 * included), NCHW[x]c data.
 *
 * Three registry operators per m in {2, 4, 6} for 3x3 kernels, in DSL text generated from
 * the transform matrices (ops/conv2d/winograd_transform.h: exact rationals, written as
 * float constants), described below for r = 3; the same three per (m, r) in {2, 4} x
 * {4, 5} named conv2d_winograd_f<m>_r<r>, conv2d_winograd_f<m>_r<r>_add and
 * winograd_weight_f<m>_r<r>, with alpha = m + r - 1, OH = H + pad_top + pad_bottom -
 * (r - 1) and padded TH*m + r - 1 rows. The conv families offer them as algorithms for
 * 4x4 and 5x5 layers (algorithms_conv.h; the tuner measures them, the default choice
 * leaves those layers on the direct conv), the step before a strided conv's polyphase
 * form (a 7x7 stride-2 stem is four 4x4 stride-1 convs over the input's phases):
 *
 *   winograd_weight_f<m>(weight: f32[K, C, 3, 3], lanes: int = 1)
 *       -> U: f32[alpha, alpha, CP, KP] (alpha = m + 2), U[e, nu, c, k] = (G g_kc G^T)[e, nu];
 *          CP, KP are C, K rounded up to a multiple of `lanes`, zeros in the padding. The
 *          kernel transform: run ONCE per set of weights (compiled with
 *          tsl_winograd_weight_schedule, or through the TE interpreter, which evaluates it
 *          in float64), never per inference.
 *
 *   conv2d_winograd_f<m>(data: f32[N, CB, H, W, X], U: f32[alpha, alpha, CP, KP],
 *                        bias: f32[KB, X], pad_top, pad_left, pad_bottom, pad_right = 0,
 *                        stride_h, stride_w, dilation_h, dilation_w = 1, act = 0,
 *                        clip_min = 0.0, clip_max = 6.0, in_channels = 0)
 *       -> out: f32[N, KB, OH, OW, X] (NCHW[x]c, X = the vector lanes; X = 1 is plain NCHW),
 *          OH = H + pad_top + pad_bottom - 2, OW likewise, CP == CB * X, KP == KB * X.
 *          out = act(conv + bias): act 0 none, 1 relu, 2 clip to [clip_min, clip_max]
 *          (relu6 with the defaults). The parameters are those of the NCHW[x]c direct conv
 *          so a layer maps onto either by name; a stride or dilation other than 1 fails
 *          instantiation with "winograd F(mxm, 3x3) needs stride 1 (use a direct
 *          convolution)".
 *   conv2d_winograd_f<m>_add(data, U, bias, residual: f32[N, KB, OH, OW, X], ...)
 *       -> act(conv + bias + residual) (the fused residual add of ResNet blocks).
 *
 * Stages of the conv (names are what schedules refer to; tags in brackets):
 *   padded[n, cb, y, x, cx]   zero-padded input, TH*m + 2 rows, TW*m + 2 columns
 *   tile_in[n, t, i, j, cb, cx]  element (i, j) of input tile t of image n (an index helper)
 *   Vr[e, j, n, t, cb, cx]    B^T applied to the columns of tile t      [winograd_input_rows]
 *   V[e, nu, n, t, cb, cx]    B^T d B, the input transform                  [winograd_input]
 *   M[e, nu, n, t, k]         sum over c of V[e, nu, n, t, c] U[e, nu, c, k] [winograd_gemm]
 *   Ya[i, nu, n, t, k]        A^T M (rows)                             [winograd_output_rows]
 *   tile_out[n, oh, ow, nu, k] Ya of the tile holding (oh, ow) (an index helper)
 *   Y[n, kb, oh, ow, kx]      (A^T M A)[oh % m, ow % m] + bias (+ residual)
 *   out[n, kb, oh, ow, kx]    act(Y)                                       [conv2d_winograd]
 * Tiles are numbered t = th * TW + tw in each image, over TH = ceil(OH / m) by
 * TW = ceil(OW / m) tiles; tiles at the bottom/right border reach past the output, their extra
 * outputs are never stored, so every OH, OW is exact. The transforms are select chains
 * over the transform index: once a schedule unrolls that index a chain folds to one
 * sparse sum with constant coefficients (ops/conv2d/winograd_schedule.h).
 *
 * Accuracy (tests/winograd, docs/winograd.md): float32 against a float64 direct
 * convolution of the same inputs, max |out - ref| / max |ref|, C = K up to 512, input
 * scales 1 to 1000 (the error is relative: the same at every scale):
 *   F(2,3) <= 2e-6, F(4,3) <= 1e-5, F(6,3) <= 5e-5 (tsl_winograd_error_bound); measured
 *   maxima 1e-6, 5.4e-6 and 2.6e-5. F(6,3) is about 4x F(4,3) with the default points.
 */
#ifndef TESSEL_OPS_CONV2D_WINOGRAD_H
#define TESSEL_OPS_CONV2D_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/conv2d/conv2d_layer.h"
#include "ops/conv2d/winograd_transform.h"
#include "dsl/te.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The error bound asserted on max |out - ref| / max |ref| (ref: float64 direct conv of
 * the same float32 inputs, before the activation; U from the float64 kernel transform):
 * 2e-6 for m = 2, 1e-5 for m = 4, 5e-5 for m = 6; 0 for other m. */
double tsl_winograd_error_bound(int m);
/* The same for F(m, r): tsl_winograd_error_bound(m) for r = 3; 1e-5 for F(2,4) and
 * F(2,5), 3e-5 for F(4,4), 4e-5 for F(4,5) (measured maxima 4.6e-6, 2.9e-6, 1.2e-5,
 * 1.3e-5); 0 for an (m, r) the registry does not provide. */
double tsl_winograd_error_bound_r(int m, int r);

/* Can Winograd F(m,3) compute layer l (ops/conv2d/conv2d_layer.h; its block is the X of
 * the NCHW[x]c layout, 1: plain NCHW) exactly as given? TSL_OK, or TSL_ERR_UNSUPPORTED
 * with the reason ("winograd: stride 2x1 (F(m x m, 3 x 3) needs stride 1; use a direct
 * convolution)"; likewise kernel size, dilation, groups, m): a layer is declined, never
 * adjusted. TSL_ERR_INVALID for a malformed layer (tsl_conv2d_layer_check) or an empty
 * clip range. 3x3 kernels only (F(m, 3)); the conv algorithms call
 * tsl_winograd_supports_kernel. */
tsl_status tsl_winograd_supports(const tsl_conv2d_layer *l, int m);
/* tsl_winograd_supports for every kernel of the registry: F(m, r) with r = l->R = l->S
 * in {3, 4, 5} and default points for (m, r) (tsl_winograd_default_points_r). What
 * tsl_winograd_instantiate accepts. */
tsl_status tsl_winograd_supports_kernel(const tsl_conv2d_layer *l, int m);
/* The registry's conv operator of F(m x m, r x r) ("conv2d_winograd_f4",
 * "conv2d_winograd_f4_r4_add", ...), the _add one when residual; NULL for an (m, r) the
 * registry does not provide. Static storage. */
const char *tsl_winograd_op_name(int m, int r, bool residual);

/* The DSL text of conv2d_winograd_f<m> (conv2d_winograd_f<m>_add when residual) /
 * winograd_weight_f<m> for the transform T (any F(m, r) from tsl_winograd_make with
 * 2 <= r <= TSL_WINOGRAD_MAX_R), naming the op `name`. Malloc'd; the caller frees.
 * TSL_ERR_INVALID when T is not such a transform or name is not an identifier,
 * TSL_ERR_NOMEM. */
tsl_status tsl_winograd_conv_text(const tsl_winograd_transform *T, const char *name, bool residual, char **out);
tsl_status tsl_winograd_weight_text(const tsl_winograd_transform *T, const char *name, char **out);

/* Instantiates (and tsl_te_check()s) the two programs of F(m, r), r = l->R, for layer l
 * in the current IR arena: *conv (inputs data [N, CB, H, W, X], U, bias [KB, X], then the
 * residual [N, KB, OH, OW, X] when has_residual; X = l->block, CB = ceil(C / X), KB
 * likewise) and *weights (input weight [K, C, r, r], output U [alpha, alpha, CP, KP]).
 * A layer whose last channel block is partial (C % X != 0) gets in_channels = C: the GEMM
 * reduces over the C real channels only (docs/winograd.md, section 1).
 * T is the transform (NULL: the registry's, tsl_winograd_default_r(m, r)). Either output
 * pointer may be NULL.
 * Errors: those of tsl_winograd_supports_kernel (a declined workload builds nothing), of
 * the parser and of tsl_dsl_instantiate. */
tsl_status tsl_winograd_instantiate(const tsl_conv2d_layer *l, int m, const tsl_winograd_transform *T,
                                    tsl_te_program **conv, tsl_te_program **weights);

#ifdef __cplusplus
}
#endif
#endif
