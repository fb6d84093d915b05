/* Depthwise 2-D convolution in NCHW[x]c (ops/nchwc.h): one R x S filter per channel
 * (groups = C = K, channel multiplier 1; multipliers > 1 are conv2d_nchwc_grouped with
 * one input channel per group), with strides, asymmetric padding, dilation, and the
 * fused bias + activation epilogue.
 *
 *   data    f32[N, C/x, H, W, x]
 *   weight  f32[C/x, R, S, x]      w[c, 0, r, s] of the OIHW (C x 1 x R x S) weight at
 *                                  [c / x, r, s, c % x]
 *   bias    f32[C/x, x]
 *   out     f32[N, C/x, OH, OW, x] = act(sum over r, s of padded[n, cb, y*sh + r*dh,
 *                                    x*sw + s*dw, c] * w + bias [+ residual])
 *   (depthwise_conv2d_nchwc_add takes a residual f32[N, C/x, OH, OW, x] after the bias)
 *
 * Output lane c reads input lane c: the x lanes are one vector load of the input, no
 * broadcast (shared/cases C05: dilation is part of the read, never skipped).
 */
#include "ops/families.h"
#include "ops/nchwc.h"

#define DEPTHWISE_STAGES                                                                                      \
  TSL_NCHWC_CONV_ASSERTS TSL_NCHWC_ACT_ASSERT TSL_NCHWC_PADDED_STAGE                                            \
  "  @tag(\"depthwise_nchwc\")\n"                                                                               \
  "  conv[n, cb, y, x, c] = sum(r, s: padded[n, cb, y*stride_h + r*dilation_h, x*stride_w + s*dilation_w, c]\n" \
  "                                   * weight[cb, r, s, c])\n"                                                 \
  "    where y < (H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1,\n"                         \
  "          x < (W + pad_left + pad_right - dilation_w*(S - 1) - 1) / stride_w + 1\n"                          \
  "  @tag(\"elemwise\")\n"

static const char depthwise_text[] =
    "// depthwise convolution + bias + activation, NCHW[x]c\n"
    "op depthwise_conv2d_nchwc(data: f32[N, CB, H, W, X], weight: f32[CB, R, S, X], bias: f32[CB, X],\n"
    TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" DEPTHWISE_STAGES
    "  out[n, cb, y, x, c] = " TSL_NCHWC_ACT("conv[n, cb, y, x, c] + bias[cb, c]") "\n";

/* The same with a residual f32[N, CB, OH, OW, X] added before the activation:
 * act(conv + bias + residual), the epilogue conv2d_nchwc_bias_add has. */
static const char depthwise_add_text[] =
    "// depthwise convolution + bias + residual + activation, NCHW[x]c\n"
    "op depthwise_conv2d_nchwc_add(data: f32[N, CB, H, W, X], weight: f32[CB, R, S, X], bias: f32[CB, X],\n"
    "                              residual: f32[N, CB, OH, OW, X],\n"
    TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" DEPTHWISE_STAGES
    "  out[n, cb, y, x, c] = " TSL_NCHWC_ACT("conv[n, cb, y, x, c] + bias[cb, c] + residual[n, cb, y, x, c]") "\n";

static const int ranks[] = {5, 4, 2}, ranks_add[] = {5, 4, 2, 5};
static const int64_t ex_data[] = {1, 2, 9, 11, 4}, ex_weight[] = {2, 3, 3, 4}, ex_bias[] = {2, 4},
                     ex_res[] = {1, 2, 9, 11, 4};
static const int64_t *const ex_shapes[] = {ex_data, ex_weight, ex_bias};
static const int64_t *const ex_shapes_add[] = {ex_data, ex_weight, ex_bias, ex_res};
static const tsl_dsl_param_value ex_params[] = {
    {"pad_top", TSL_DSL_PARAM_INT, 2, 0.0},    {"pad_left", TSL_DSL_PARAM_INT, 2, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 2, 0.0}, {"pad_right", TSL_DSL_PARAM_INT, 2, 0.0},
    {"dilation_h", TSL_DSL_PARAM_INT, 2, 0.0}, {"dilation_w", TSL_DSL_PARAM_INT, 2, 0.0},
    {"act", TSL_DSL_PARAM_INT, 2, 0.0},
};

static const tsl_op_source family[] = {
    {"depthwise_conv2d_nchwc",
     "depthwise 2-D convolution (multiplier 1) + bias + activation, NCHW[x]c data, (C/x, R, S, x) weights (f32)",
     depthwise_text, {3, ranks, ex_shapes, 7, ex_params}},
    {"depthwise_conv2d_nchwc_add",
     "depthwise 2-D convolution (multiplier 1) + bias + residual add + activation, NCHW[x]c (f32)", depthwise_add_text,
     {4, ranks_add, ex_shapes_add, 7, ex_params}},
};

const tsl_op_source *tsl_ops_depthwise_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
