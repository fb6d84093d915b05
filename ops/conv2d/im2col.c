/* Convolution as im2col + GEMM in NCHW[x]c (ops/nchwc.h), with the GEMM's packing
 * fused into the im2col so each input value is written once (MegEngine's
 * im2col + matmul with a packed A panel; K. Chellapilla et al., "High Performance
 * Convolutional Neural Networks for Document Processing", 2006, for im2col itself).
 *
 *   data    f32[N, C/x, H, W, x]
 *   weight  f32[K/y, C, R, S, y]    OIHW with O blocked (ops/nn/layout.c weight_to_grouped),
 *                                   w[k, c, r, s] at [k / y, c, r, s, k % y]
 *   bias    f32[K/y, y]
 *   out     f32[N, K/y, OH*OW, y]   act(conv + bias): NCHW[y]c with the pixels flattened
 *                                   (p = oh*OW + ow; the same bytes as [N, K/y, OH, OW, y]),
 *                                   so the GEMM tiles pixels across rows without fusing axes
 *
 * Stages:
 *   col   [n, po, c, r, s, pi]   the im2col matrix of output pixel p = po*pack_rows + pi
 *                                (p = oh*OW + ow) by reduction index (c, r, s), stored
 *                                as panels of pack_rows pixels with the pixel index
 *                                innermost: the layout the GEMM micro-kernel reads (it
 *                                broadcasts pack_rows consecutive values per reduction
 *                                step). Pixels past OH*OW and taps in the padding are 0.
 *   conv  [n, kb, p, k]          sum over (c, r, s) of col * weight (@tag
 *                                "conv2d_nchwc_im2col")
 *   out   the epilogue (conv2d_nchwc_im2col_add: + residual f32[N, K/y, OH*OW, y])
 * The reduction runs over the C true input channels, not C/x*x: a first layer with
 * C = 3 multiplies 3*R*S values per pixel, not 8*R*S of which 5*R*S are padding.
 * pack_rows is the GEMM's row block (the template's mr): the op is instantiated for the
 * value the schedule will use.
 */
#include "ops/families.h"
#include "ops/nchwc.h"

#define OH_EXPR "((H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1)"
#define OW_EXPR "((W + pad_left + pad_right - dilation_w*(S - 1) - 1) / stride_w + 1)"
#define P_EXPR "(po*pack_rows + pi)"
#define YIN_EXPR "((" P_EXPR " / " OW_EXPR ")*stride_h + r*dilation_h - pad_top)"
#define XIN_EXPR "((" P_EXPR " % " OW_EXPR ")*stride_w + s*dilation_w - pad_left)"

#define IM2COL_PARAMS TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ", pack_rows: int = 6)\n"
#define IM2COL_STAGES                                                                                              \
  TSL_NCHWC_CONV_ASSERTS TSL_NCHWC_ACT_ASSERT                                                                       \
  "  assert pack_rows >= 1, \"pack_rows must be >= 1\"\n"                                                            \
  "  assert C <= CB * X, \"the weight has more input channels than the data\"\n"                                     \
  "  // the clamps keep the reads of padding taps (discarded by the select) inside the data\n"                      \
  "  @tag(\"im2col\")\n"                                                                                             \
  "  col[n, po, ci, r, s, pi] = select(" P_EXPR " < " OH_EXPR " * " OW_EXPR " &&\n"                                 \
  "                                    " YIN_EXPR " >= 0 && " YIN_EXPR " < H &&\n"                                  \
  "                                    " XIN_EXPR " >= 0 && " XIN_EXPR " < W,\n"                                    \
  "                                    data[n, ci / X, min(max(" YIN_EXPR ", 0), H - 1),\n"                         \
  "                                         min(max(" XIN_EXPR ", 0), W - 1), ci % X], 0.0)\n"                      \
  "    where po < (" OH_EXPR " * " OW_EXPR " + pack_rows - 1) / pack_rows, ci < C, r < R, s < S, pi < pack_rows\n"  \
  "  @tag(\"conv2d_nchwc_im2col\")\n"                                                                                \
  "  conv[n, kb, p, k] = sum(ci, r, s: col[n, p / pack_rows, ci, r, s, p % pack_rows] * weight[kb, ci, r, s, k])\n" \
  "    where p < " OH_EXPR " * " OW_EXPR "\n"                                                                         \
  "  @tag(\"elemwise\")\n"

static const char im2col_text[] =
    "// im2col + GEMM convolution + bias + activation, NCHW[x]c, pack fused into im2col\n"
    "op conv2d_nchwc_im2col(data: f32[N, CB, H, W, X], weight: f32[KB, C, R, S, Y], bias: f32[KB, Y],\n"
    IM2COL_PARAMS IM2COL_STAGES
    "  out[n, kb, p, k] = " TSL_NCHWC_ACT("conv[n, kb, p, k] + bias[kb, k]") "\n";

/* The same + a residual f32[N, K/y, OH*OW, y] (pixels flattened like the output) before
 * the activation. */
static const char im2col_add_text[] =
    "// im2col + GEMM convolution + bias + residual + activation, NCHW[x]c, pack fused into im2col\n"
    "op conv2d_nchwc_im2col_add(data: f32[N, CB, H, W, X], weight: f32[KB, C, R, S, Y], bias: f32[KB, Y],\n"
    "                           residual: f32[N, KB, P, Y],\n" IM2COL_PARAMS IM2COL_STAGES
    "  out[n, kb, p, k] = " TSL_NCHWC_ACT("conv[n, kb, p, k] + bias[kb, k] + residual[n, kb, p, k]") "\n";

static const int ranks[] = {5, 5, 2}, ranks_add[] = {5, 5, 2, 4};
/* stride 2, pad 1: a 6 x 5 output */
static const int64_t ex_data[] = {1, 1, 11, 9, 4}, ex_weight[] = {2, 3, 3, 3, 4}, ex_bias[] = {2, 4},
                     ex_res[] = {1, 2, 30, 4};
static const int64_t *const ex_shapes[] = {ex_data, ex_weight, ex_bias};
static const int64_t *const ex_shapes_add[] = {ex_data, ex_weight, ex_bias, ex_res};
static const tsl_dsl_param_value ex_params[] = {
    {"stride_h", TSL_DSL_PARAM_INT, 2, 0.0},   {"stride_w", TSL_DSL_PARAM_INT, 2, 0.0},
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},    {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"act", TSL_DSL_PARAM_INT, 1, 0.0},        {"pack_rows", TSL_DSL_PARAM_INT, 4, 0.0},
};

static const tsl_op_source family[] = {
    {"conv2d_nchwc_im2col",
     "im2col + GEMM 2-D convolution (pack fused into im2col, true input channels) + bias + activation, NCHW[x]c (f32)",
     im2col_text, {3, ranks, ex_shapes, 8, ex_params}},
    {"conv2d_nchwc_im2col_add", "im2col + GEMM 2-D convolution + bias + residual add + activation, NCHW[x]c (f32)",
     im2col_add_text, {4, ranks_add, ex_shapes_add, 8, ex_params}},
};

const tsl_op_source *tsl_ops_im2col_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
