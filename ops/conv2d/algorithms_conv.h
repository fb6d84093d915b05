/* The NCHW[x]c convolution family of the tuner: the workload a graph's conv layer is
 * known by (its records key) and the algorithms that may compute it (Fast-Run).
 *
 * A conv layer (ops/conv2d/conv2d_layer.h: tsl_conv2d_layer, block x = the
 * graph's NCHW[x]c block) is named by ONE family workload, whatever algorithm runs it:
 *
 *   conv2d_nchwc_bias      groups 1, no residual, C and K multiples of x:
 *                          data f32[N, C/x, H, W, x], weight f32[K/x, C/x, R, S, x, x],
 *                          bias f32[K/x, x]
 *   conv2d_nchwc_bias_add  groups 1 with a fused residual, C and K multiples of x: the
 *                          same + residual f32[N, K/x, OH, OW, x]
 *   conv2d_nchwc_grouped   every other layer without residual: groups > 1, or C or K not
 *                          a multiple of x (first layers, C = 3): data as above, weight
 *                          f32[ceil(K/x), C/groups, R, S, x], bias f32[ceil(K/x), x],
 *                          groups, out_channels = K (the true channel counts)
 *   conv2d_nchwc_grouped_add  every other layer with a residual: the same + residual
 *                          f32[N, ceil(K/x), OH, OW, x]
 * A layer reading plain NCHW data (data_block 1, a stem conv on a graph input) is always
 * a grouped one, with data f32[N, C, H, W, 1]: the key tells it from the blocked layer.
 *
 * So a key always names the true layer: C and K read back from it exactly (a K = 24
 * layer at 16 lanes is not the K = 32 one), whatever x is (4 NEON, 8 AVX2, 16 AVX-512).
 *
 * with the parameters stride_h/w, pad_top/left/bottom/right, dilation_h/w, act and (act
 * 2 only) clip_min/clip_max, written and read by tsl_conv2d_layer_params /
 * tsl_conv2d_layer_read_params (ops/conv2d/conv2d_layer.h). These are registry operators (ops/conv2d/conv2d_nchwc.c), so
 * the key is a plain workload key (ops/workload.h) and the family's own templates
 * (conv2d_nchwc_bias.direct, conv2d_nchwc_grouped.tile, ...) tune it as is.
 *
 * The algorithms of each family are every tsl_conv2d_algo (direct, gemm1x1, im2col,
 * depthwise, grouped, winograd_f2/f4/f6, blockdiag), named FAMILY.ALGO (e.g.
 * "conv2d_nchwc_bias.winograd_f4"); each applies when tsl_conv2d_algo_applies accepts
 * the layer and maps it to the operator tsl_conv2d_algo_instantiate builds (its own
 * workload, e.g. conv2d_winograd_f4 with U f32[6, 6, C, K]). The Winograd ones take 3x3
 * kernels; FAMILY.winograd_f2_r4, _f4_r4, _f2_r5 and _f4_r5 take 4x4 and 5x5 ones (their
 * operators conv2d_winograd_f<m>_r<r>, ops/conv2d/winograd.h; the default choice,
 * tsl_conv2d_select, leaves those layers to the direct conv and the tuner measures them).
 * A record stores the family key and the template of the algorithm that ran
 * (docs/records.md).
 */
#ifndef TESSEL_OPS_CONV2D_ALGORITHMS_CONV_H
#define TESSEL_OPS_CONV2D_ALGORITHMS_CONV_H

#include <stdbool.h>
#include <stddef.h>

#include "ops/conv2d/conv2d_select.h"
#include "target/target.h"
#include "ops/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The family workload of layer d (above). Errors: TSL_ERR_INVALID (tsl_conv2d_layer_check). */
tsl_status tsl_conv2d_family_workload(const tsl_conv2d_layer *d, tsl_workload *out);

/* Whether w is a workload of the conv family (its operator is one of the four). */
bool tsl_conv2d_is_family(const tsl_workload *w);

/* The layer family workload w states: the inverse of tsl_conv2d_family_workload.
 * Errors: TSL_ERR_UNSUPPORTED (not a family workload, or data and output blocks that
 * differ other than plain data of a grouped layer), TSL_ERR_INVALID (inconsistent shapes, out_channels outside its blocks, an int
 * parameter stored as a float, a malformed layer: tsl_conv2d_layer_check). */
tsl_status tsl_conv2d_layer_of_workload(const tsl_workload *w, tsl_conv2d_layer *d);

/* The algorithm whose operator is `op` (an operator workload's name: conv2d_nchwc_bias
 * -> direct, conv2d_nchwc_1x1_bias -> gemm1x1, conv2d_winograd_f4_add -> winograd_f4,
 * ...). False for another operator. */
bool tsl_conv2d_algo_of_op(const char *op, tsl_conv2d_algo *out);

/* The operator workload algorithm a computes family layer d with (what
 * tsl_conv2d_algo_instantiate(d, a, NULL) builds, as a registry workload).
 * Errors: those of tsl_conv2d_algo_instantiate. */
tsl_status tsl_conv2d_algo_workload(const tsl_conv2d_layer *d, tsl_conv2d_algo a, tsl_workload *out);

/* The family layer whose algorithm-operator workload is w: the inverse of
 * tsl_conv2d_algo_workload, for an operator a user names (tunecli show
 * conv2d_nchwc_im2col ...) whose records are under the layer's family key. w's operator
 * names the algorithm (tsl_conv2d_algo_of_op; *algo gets it, may be NULL). A search checked
 * by the round trip: N, H, W and the blocks from w's data and output shapes, the window,
 * activation, groups, out_channels and in_channels from its parameters, C and K the
 * largest counts its blocks hold first, every R x S giving its output extents; the first
 * layer whose tsl_conv2d_algo_workload has w's key (an im2col workload's pack_rows taken
 * as the compiler's, tsl_im2col_pack_rows) is the answer. Instantiates w in a scratch arena.
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_UNSUPPORTED (not an algorithm's
 * operator; the GEMM 1x1 operator, whose data [N, C/x, H*W, x] does not state H and W;
 * no layer maps to w), those of the instantiation and the key. */
tsl_status tsl_conv2d_layer_of_algo_workload(const tsl_workload *w, tsl_conv2d_layer *d, tsl_conv2d_algo *algo);

#ifdef __cplusplus
}
#endif
#endif
