/* 2-D convolution in the blocked layout NCHW[x]c (ops/nchwc.h has the conventions).
 *
 *   data    f32[N, C/x, H, W, x]          channel c at [n, c / x, h, w, c % x]
 *   weight  f32[K/y, C/x, R, S, x, y]     OIHW[x]i[y]o: w[k, c, r, s] at
 *                                         [k / y, c / x, r, s, c % x, k % y]
 *   out     f32[N, K/y, OH, OW, y]        OH = (H + pad_top + pad_bottom - dilation_h*(R-1) - 1)
 *                                         / stride_h + 1 (floor), likewise OW
 *
 * Channel counts that are not multiples of x (y) are zero-padded in data and weight, so
 * the padded input lanes contribute 0 and the padded output lanes hold 0 (plus 0 bias):
 * the padding never reaches a real channel (with finite inputs: inf * 0 is NaN).
 *
 * Stages (what the schedule templates find by tag):
 *   padded  @tag("injective")     the input with its spatial zero padding
 *   conv    @tag("conv2d_nchwc")  the reduction over (cb, r, s, c)
 *   out     @tag("elemwise")      the fused epilogue (bias, residual, activation), in
 *                                 the _bias and _bias_add variants only
 *
 * Epilogue: act selects the activation applied last: 0 none, 1 relu max(v, 0), 2 clip
 * min(max(v, clip_min), clip_max) (relu6 is clip 0..6). max/min propagate NaN.
 * conv2d_nchwc_bias_add computes act(conv + bias + residual) (ResNet's block end).
 */
#include "ops/families.h"
#include "ops/nchwc.h"

#define CONV_STAGE                                                                                          \
  "  @tag(\"conv2d_nchwc\")\n"                                                                                \
  "  conv[n, kb, y, x, k] = sum(cb, r, s, c: padded[n, cb, y*stride_h + r*dilation_h, x*stride_w + s*dilation_w, c]\n" \
  "                                         * weight[kb, cb, r, s, c, k])\n"                                  \
  "    where y < (H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1,\n"                       \
  "          x < (W + pad_left + pad_right - dilation_w*(S - 1) - 1) / stride_w + 1\n"

static const char conv2d_nchwc_text[] =
    "// direct convolution, NCHW[x]c data, OIHW[x]i[y]o weights, NCHW[y]c output\n"
    "op conv2d_nchwc(data: f32[N, CB, H, W, X], weight: f32[KB, CB, R, S, X, Y],\n" TSL_NCHWC_CONV_PARAMS ")\n" TSL_NCHWC_CONV_ASSERTS
        TSL_NCHWC_PADDED_STAGE CONV_STAGE;

static const char conv2d_nchwc_bias_text[] =
    "// direct convolution + bias + activation, NCHW[x]c\n"
    "op conv2d_nchwc_bias(data: f32[N, CB, H, W, X], weight: f32[KB, CB, R, S, X, Y], bias: f32[KB, Y],\n" TSL_NCHWC_CONV_PARAMS
    TSL_NCHWC_ACT_PARAMS ")\n" TSL_NCHWC_CONV_ASSERTS TSL_NCHWC_ACT_ASSERT TSL_NCHWC_PADDED_STAGE CONV_STAGE
    "  @tag(\"elemwise\")\n"
    "  out[n, kb, y, x, k] = " TSL_NCHWC_ACT("conv[n, kb, y, x, k] + bias[kb, k]") "\n";

static const char conv2d_nchwc_bias_add_text[] =
    "// direct convolution + bias + residual + activation, NCHW[x]c\n"
    "op conv2d_nchwc_bias_add(data: f32[N, CB, H, W, X], weight: f32[KB, CB, R, S, X, Y], bias: f32[KB, Y],\n"
    "                         residual: f32[N, KB, OH, OW, Y],\n" TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" TSL_NCHWC_CONV_ASSERTS
        TSL_NCHWC_ACT_ASSERT TSL_NCHWC_PADDED_STAGE CONV_STAGE
    "  @tag(\"elemwise\")\n"
    "  out[n, kb, y, x, k] = " TSL_NCHWC_ACT("conv[n, kb, y, x, k] + bias[kb, k] + residual[n, kb, y, x, k]") "\n";

/* 1x1 stride-1 unpadded convolution as a GEMM over the pixels: the same bytes as
 * conv2d_nchwc_bias with H, W flattened into P = H * W (data f32[N, C/x, P, x], weight
 * f32[K/y, C/x, x, y] = OIHW[x]i[y]o with R = S = 1, output f32[N, K/y, P, y]), so a
 * schedule can tile the pixel axis across image rows (7 x 7 = 49 pixels, not 7 rows of
 * 7) without fusing two axes. */
static const char conv2d_nchwc_1x1_bias_text[] =
    "// 1x1 convolution as a GEMM over the pixel axis + bias + activation, NCHW[x]c\n"
    "op conv2d_nchwc_1x1_bias(data: f32[N, CB, P, X], weight: f32[KB, CB, X, Y], bias: f32[KB, Y]"
    TSL_NCHWC_ACT_PARAMS ")\n" TSL_NCHWC_ACT_ASSERT
    "  @tag(\"conv2d_nchwc_1x1\")\n"
    "  conv[n, kb, p, k] = sum(cb, c: data[n, cb, p, c] * weight[kb, cb, c, k])\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, kb, p, k] = " TSL_NCHWC_ACT("conv[n, kb, p, k] + bias[kb, k]") "\n";

static const char conv2d_nchwc_1x1_bias_add_text[] =
    "// 1x1 convolution as a GEMM + bias + residual + activation, NCHW[x]c\n"
    "op conv2d_nchwc_1x1_bias_add(data: f32[N, CB, P, X], weight: f32[KB, CB, X, Y], bias: f32[KB, Y],\n"
    "                             residual: f32[N, KB, P, Y]" TSL_NCHWC_ACT_PARAMS ")\n" TSL_NCHWC_ACT_ASSERT
    "  @tag(\"conv2d_nchwc_1x1\")\n"
    "  conv[n, kb, p, k] = sum(cb, c: data[n, cb, p, c] * weight[kb, cb, c, k])\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, kb, p, k] = " TSL_NCHWC_ACT("conv[n, kb, p, k] + bias[kb, k] + residual[n, kb, p, k]") "\n";

/* The 1x1 GEMM with its data scaled per image and input channel (a squeeze-excitation
 * gate, models/passes/fuse_channel_scale.h): conv(data * scale, weight) computed as
 * conv(data, weight * scale), the weight scaled in the stage tagged "conv_weight_scale"
 * (scale f32[N, C/x, x]: channel c of image n at [n, c / x, c % x]), which the GEMM
 * template computes once per image and output-channel tile, in the tile's outer loop. */
#define SCALED_1X1_STAGES                                                                  \
  "  @tag(\"conv_weight_scale\")\n"                                                        \
  "  wscaled[n, kb, cb, c, k] = weight[kb, cb, c, k] * scale[n, cb, c]\n"                   \
  "  @tag(\"conv2d_nchwc_1x1\")\n"                                                         \
  "  conv[n, kb, p, k] = sum(cb, c: data[n, cb, p, c] * wscaled[n, kb, cb, c, k])\n"        \
  "  @tag(\"elemwise\")\n"

static const char conv2d_nchwc_1x1_bias_scale_text[] =
    "// 1x1 convolution of channel-scaled data as a GEMM + bias + activation, NCHW[x]c\n"
    "op conv2d_nchwc_1x1_bias_scale(data: f32[N, CB, P, X], weight: f32[KB, CB, X, Y], bias: f32[KB, Y],\n"
    "                               scale: f32[N, CB, X]" TSL_NCHWC_ACT_PARAMS ")\n" TSL_NCHWC_ACT_ASSERT
    SCALED_1X1_STAGES
    "  out[n, kb, p, k] = " TSL_NCHWC_ACT("conv[n, kb, p, k] + bias[kb, k]") "\n";

static const char conv2d_nchwc_1x1_bias_add_scale_text[] =
    "// 1x1 convolution of channel-scaled data as a GEMM + bias + residual + activation, NCHW[x]c\n"
    "op conv2d_nchwc_1x1_bias_add_scale(data: f32[N, CB, P, X], weight: f32[KB, CB, X, Y], bias: f32[KB, Y],\n"
    "                                   residual: f32[N, KB, P, Y], scale: f32[N, CB, X]" TSL_NCHWC_ACT_PARAMS ")\n"
    TSL_NCHWC_ACT_ASSERT SCALED_1X1_STAGES
    "  out[n, kb, p, k] = " TSL_NCHWC_ACT("conv[n, kb, p, k] + bias[kb, k] + residual[n, kb, p, k]") "\n";

/* Grouped convolution: `groups` groups of CG input and out_channels / groups output
 * channels each; output channel k reads input channels g*CG .. g*CG + CG - 1 of group
 * g = k / (out_channels / groups). The weight is OIHW with O blocked: f32[K/y, CG, R, S,
 * y] (w[k, ci, r, s] at [k / y, ci, r, s, k % y]). Any CG works, including CG smaller
 * than x (shared/cases C04) and CG = 1 (depthwise with a channel multiplier
 * out_channels / C). conv2d_nchwc_grouped_add adds a residual f32[N, K/y, OH, OW, y]
 * before the activation. A padded output lane (k >= out_channels) reads the last group with
 * zero weights: 0. */
#define GROUPED_STAGES                                                                                             \
  TSL_NCHWC_CONV_ASSERTS TSL_NCHWC_ACT_ASSERT                                                                        \
  "  assert groups >= 1 && out_channels >= groups && out_channels % groups == 0,\n"                                 \
  "    \"out_channels must be a positive multiple of groups\"\n"                                                     \
  "  assert out_channels <= KB * Y, \"out_channels exceeds the weight's K/y * y\"\n"                                 \
  "  assert groups * CG <= CB * X, \"groups * channels per group exceeds the data's C/x * x\"\n"                     \
  TSL_NCHWC_PADDED_STAGE                                                                                             \
  "  @tag(\"conv2d_nchwc_grouped\")\n"                                                                              \
  "  conv[n, kb, y, x, k] = sum(ci, r, s: padded[n, (min((kb*Y + k) / (out_channels / groups), groups - 1)*CG + ci) / X,\n" \
  "                                             y*stride_h + r*dilation_h, x*stride_w + s*dilation_w,\n"            \
  "                                             (min((kb*Y + k) / (out_channels / groups), groups - 1)*CG + ci) % X]\n" \
  "                                      * weight[kb, ci, r, s, k])\n"                                               \
  "    where y < (H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1,\n"                              \
  "          x < (W + pad_left + pad_right - dilation_w*(S - 1) - 1) / stride_w + 1\n"                               \
  "  @tag(\"elemwise\")\n"

static const char conv2d_nchwc_grouped_text[] =
    "// grouped convolution + bias + activation, NCHW[x]c data, O-blocked OIHW weights\n"
    "op conv2d_nchwc_grouped(data: f32[N, CB, H, W, X], weight: f32[KB, CG, R, S, Y], bias: f32[KB, Y],\n"
    "                        groups: int, out_channels: int,\n" TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" GROUPED_STAGES
    "  out[n, kb, y, x, k] = " TSL_NCHWC_ACT("conv[n, kb, y, x, k] + bias[kb, k]") "\n";

/* The same + a residual f32[N, K/y, OH, OW, y] before the activation. */
static const char conv2d_nchwc_grouped_add_text[] =
    "// grouped convolution + bias + residual + activation, NCHW[x]c data, O-blocked OIHW weights\n"
    "op conv2d_nchwc_grouped_add(data: f32[N, CB, H, W, X], weight: f32[KB, CG, R, S, Y], bias: f32[KB, Y],\n"
    "                            residual: f32[N, KB, OH, OW, Y],\n"
    "                            groups: int, out_channels: int,\n" TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" GROUPED_STAGES
    "  out[n, kb, y, x, k] = " TSL_NCHWC_ACT("conv[n, kb, y, x, k] + bias[kb, k] + residual[n, kb, y, x, k]") "\n";

/* Grouped convolution as a dense direct convolution over a band of input channel blocks
 * (the block-diagonal algorithm, ops/conv2d/conv2d_select.h): output block kb reduces
 * over the BW input blocks from start(kb) on, where
 *   start(kb) = min(g0 * (in_channels / groups) / X, C/x - BW),  g0 = kb*Y / (out_channels / groups)
 * is the block of the first input channel of the group of kb's first output channel
 * (clamped so that the band stays inside the data). The weight f32[K/y, BW, R, S, x, y]
 * (OIHW[x]i[y]o over the band: w[k, c, r, s] of input channel c = (start(kb) + cb)*x + ci
 * at [k / y, cb, r, s, ci, k % y]) is zero wherever input channel c is not of output
 * channel k's group, so a band of BW blocks that covers every group of an output block
 * computes the grouped conv exactly, as a dense conv (one weight vector of y output lanes
 * times a broadcast input value per step: no per-lane gather). The MACs are BW*x / (C/groups)
 * times the grouped conv's: 1 when the groups are whole blocks (C/groups a multiple of x
 * that every group starts on), x / (C/groups) for C/groups < x dividing x. The stage is
 * tagged like the direct conv's, so the direct template schedules it as it is.
 * conv2d_nchwc_blockdiag_bias_add adds a residual f32[N, K/y, OH, OW, y]. */
#define BLOCKDIAG_STAGES                                                                                             \
  TSL_NCHWC_CONV_ASSERTS TSL_NCHWC_ACT_ASSERT                                                                        \
  "  assert groups >= 1 && out_channels % groups == 0 && in_channels % groups == 0,\n"                              \
  "    \"in_channels and out_channels must be multiples of groups\"\n"                                              \
  "  assert out_channels >= 1 && out_channels <= KB * Y, \"out_channels must be in 1 .. K/y * y\"\n"                \
  "  assert in_channels >= 1 && in_channels <= CB * X, \"in_channels must be in 1 .. C/x * x\"\n"                   \
  "  assert BW <= CB, \"the band of input blocks exceeds the data's C/x\"\n"                                        \
  TSL_NCHWC_PADDED_STAGE                                                                                             \
  "  @tag(\"conv2d_nchwc\")\n"                                                                                      \
  "  conv[n, kb, y, x, k] = sum(cb, r, s, c:\n"                                                                      \
  "      padded[n, min((kb*Y / (out_channels / groups)) * (in_channels / groups) / X, CB - BW) + cb,\n"              \
  "             y*stride_h + r*dilation_h, x*stride_w + s*dilation_w, c] * weight[kb, cb, r, s, c, k])\n"            \
  "    where y < (H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1,\n"                              \
  "          x < (W + pad_left + pad_right - dilation_w*(S - 1) - 1) / stride_w + 1\n"                               \
  "  @tag(\"elemwise\")\n"

#define BLOCKDIAG_PARAMS "                        groups: int, out_channels: int, in_channels: int,\n"

static const char conv2d_nchwc_blockdiag_bias_text[] =
    "// grouped convolution as a dense conv over a band of input blocks (block-diagonal weights) + bias +\n"
    "// activation, NCHW[x]c\n"
    "op conv2d_nchwc_blockdiag_bias(data: f32[N, CB, H, W, X], weight: f32[KB, BW, R, S, X, Y], bias: f32[KB, Y],\n"
    BLOCKDIAG_PARAMS TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" BLOCKDIAG_STAGES
    "  out[n, kb, y, x, k] = " TSL_NCHWC_ACT("conv[n, kb, y, x, k] + bias[kb, k]") "\n";

static const char conv2d_nchwc_blockdiag_bias_add_text[] =
    "// grouped convolution as a dense conv over a band of input blocks + bias + residual + activation, NCHW[x]c\n"
    "op conv2d_nchwc_blockdiag_bias_add(data: f32[N, CB, H, W, X], weight: f32[KB, BW, R, S, X, Y],\n"
    "                                   bias: f32[KB, Y], residual: f32[N, KB, OH, OW, Y],\n"
    BLOCKDIAG_PARAMS TSL_NCHWC_CONV_PARAMS TSL_NCHWC_ACT_PARAMS ")\n" BLOCKDIAG_STAGES
    "  out[n, kb, y, x, k] = " TSL_NCHWC_ACT("conv[n, kb, y, x, k] + bias[kb, k] + residual[n, kb, y, x, k]") "\n";

static const int rank_dw[] = {5, 6};
static const int rank_dwb[] = {5, 6, 2};
static const int rank_dwbr[] = {5, 6, 2, 5};
static const int rank_grouped[] = {5, 5, 2}, rank_grouped_add[] = {5, 5, 2, 5};
static const int64_t ex_data[] = {1, 2, 9, 10, 4}, ex_weight[] = {3, 2, 3, 3, 4, 4}, ex_bias[] = {3, 4},
                     ex_res[] = {1, 3, 9, 10, 4};
static const int64_t *const ex_conv[] = {ex_data, ex_weight};
static const int64_t *const ex_conv_b[] = {ex_data, ex_weight, ex_bias};
static const int64_t *const ex_conv_br[] = {ex_data, ex_weight, ex_bias, ex_res};
static const int64_t ex_gweight[] = {3, 2, 3, 3, 4};
static const int64_t *const ex_grouped[] = {ex_data, ex_gweight, ex_bias};
static const int64_t *const ex_grouped_add[] = {ex_data, ex_gweight, ex_bias, ex_res};
static const tsl_dsl_param_value pad1[] = {
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"act", TSL_DSL_PARAM_INT, 1, 0.0},
};
static const tsl_dsl_param_value grouped_params[] = {
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},    {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"groups", TSL_DSL_PARAM_INT, 4, 0.0},     {"out_channels", TSL_DSL_PARAM_INT, 12, 0.0},
};

/* 16 channels in 8 groups of 2 at x = 4: a band of one block per output block */
static const int64_t ex_bdweight[] = {4, 1, 3, 3, 4, 4}, ex_bdbias[] = {4, 4}, ex_bdres[] = {1, 4, 9, 10, 4},
                     ex_bddata[] = {1, 4, 9, 10, 4};
static const int64_t *const ex_blockdiag[] = {ex_bddata, ex_bdweight, ex_bdbias};
static const int64_t *const ex_blockdiag_add[] = {ex_bddata, ex_bdweight, ex_bdbias, ex_bdres};
static const tsl_dsl_param_value blockdiag_params[] = {
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},    {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"groups", TSL_DSL_PARAM_INT, 8, 0.0},     {"out_channels", TSL_DSL_PARAM_INT, 16, 0.0},
    {"in_channels", TSL_DSL_PARAM_INT, 16, 0.0},
};

static const int rank_1x1[] = {4, 4, 2};
static const int rank_1x1r[] = {4, 4, 2, 4};
static const int64_t ex_data1[] = {1, 2, 13, 4}, ex_w1[] = {3, 2, 4, 4}, ex_res1[] = {1, 3, 13, 4};
static const int64_t *const ex_1x1[] = {ex_data1, ex_w1, ex_bias};
static const int64_t *const ex_1x1r[] = {ex_data1, ex_w1, ex_bias, ex_res1};
static const tsl_dsl_param_value relu[] = {{"act", TSL_DSL_PARAM_INT, 1, 0.0}};
static const int rank_1x1s[] = {4, 4, 2, 3}, rank_1x1rs[] = {4, 4, 2, 4, 3};
static const int64_t ex_scale1[] = {1, 2, 4};
static const int64_t *const ex_1x1s[] = {ex_data1, ex_w1, ex_bias, ex_scale1};
static const int64_t *const ex_1x1rs[] = {ex_data1, ex_w1, ex_bias, ex_res1, ex_scale1};

static const tsl_op_source family[] = {
    {"conv2d_nchwc", "direct 2-D convolution, NCHW[x]c data, OIHW[x]i[y]o weights, NCHW[y]c output (f32)",
     conv2d_nchwc_text, {2, rank_dw, ex_conv, 4, pad1}},
    {"conv2d_nchwc_bias", "direct 2-D convolution + bias + activation (act 0/1/2: none/relu/clip), NCHW[x]c (f32)",
     conv2d_nchwc_bias_text, {3, rank_dwb, ex_conv_b, 5, pad1}},
    {"conv2d_nchwc_bias_add",
     "direct 2-D convolution + bias + residual add + activation, NCHW[x]c (f32)", conv2d_nchwc_bias_add_text,
     {4, rank_dwbr, ex_conv_br, 5, pad1}},
    {"conv2d_nchwc_1x1_bias",
     "1x1 stride-1 convolution as a GEMM over flattened pixels + bias + activation, NCHW[x]c (f32)",
     conv2d_nchwc_1x1_bias_text, {3, rank_1x1, ex_1x1, 1, relu}},
    {"conv2d_nchwc_1x1_bias_add", "1x1 stride-1 convolution as a GEMM + bias + residual + activation, NCHW[x]c (f32)",
     conv2d_nchwc_1x1_bias_add_text, {4, rank_1x1r, ex_1x1r, 1, relu}},
    {"conv2d_nchwc_1x1_bias_scale",
     "1x1 stride-1 convolution of data scaled per image and input channel, as a GEMM + bias + activation, "
     "NCHW[x]c (f32)",
     conv2d_nchwc_1x1_bias_scale_text, {4, rank_1x1s, ex_1x1s, 1, relu}},
    {"conv2d_nchwc_1x1_bias_add_scale",
     "1x1 stride-1 convolution of channel-scaled data as a GEMM + bias + residual + activation, NCHW[x]c (f32)",
     conv2d_nchwc_1x1_bias_add_scale_text, {5, rank_1x1rs, ex_1x1rs, 1, relu}},
    {"conv2d_nchwc_grouped",
     "grouped 2-D convolution (any channels per group, depthwise multipliers) + bias + activation, NCHW[x]c (f32)",
     conv2d_nchwc_grouped_text, {3, rank_grouped, ex_grouped, 6, grouped_params}},
    {"conv2d_nchwc_grouped_add", "grouped 2-D convolution + bias + residual add + activation, NCHW[x]c (f32)",
     conv2d_nchwc_grouped_add_text, {4, rank_grouped_add, ex_grouped_add, 6, grouped_params}},
    {"conv2d_nchwc_blockdiag_bias",
     "grouped 2-D convolution as a dense conv over a band of input blocks (block-diagonal weights) + bias + "
     "activation, NCHW[x]c (f32)",
     conv2d_nchwc_blockdiag_bias_text, {3, rank_dwb, ex_blockdiag, 7, blockdiag_params}},
    {"conv2d_nchwc_blockdiag_bias_add",
     "grouped 2-D convolution as a dense conv over a band of input blocks + bias + residual add + activation, "
     "NCHW[x]c (f32)",
     conv2d_nchwc_blockdiag_bias_add_text, {4, rank_dwbr, ex_blockdiag_add, 7, blockdiag_params}},
};

const tsl_op_source *tsl_ops_conv2d_nchwc_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
