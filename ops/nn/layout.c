/* Layout transforms between plain NCHW and the blocked NCHW[x]c layout (ops/nchwc.h),
 * and the weight re-layouts the NCHW[x]c convolutions read. Channels past the true count
 * are written as zeros (never read from the source), so the padding of a blocked tensor
 * is always 0 and never reaches a real channel; converting back drops it.
 *
 *   nchw_to_nchwc        f32[N, C, H, W] -> f32[N, ceil(C/block), H, W, block]
 *   nchwc_to_nchw        f32[N, CB, H, W, X], channels -> f32[N, channels, H, W]
 *   nchwc_reblock        f32[N, CB, H, W, X], channels, block -> f32[N, ceil(channels/block), H, W, block]
 *   weight_to_nchwc      f32[K, C, R, S], in_block x, out_block y -> f32[ceil(K/y), ceil(C/x), R, S, x, y]
 *                        (OIHW[x]i[y]o, the direct / im2col convolutions)
 *   weight_to_grouped    f32[K, CG, R, S], out_block y -> f32[ceil(K/y), CG, R, S, y] (grouped)
 *   weight_to_depthwise  f32[C, 1, R, S], block x -> f32[ceil(C/x), R, S, x] (depthwise)
 *   weight_to_blockdiag  f32[K, CG, R, S], groups, in_block x, out_block y, band BW ->
 *                        f32[ceil(K/y), BW, R, S, x, y] (the block-diagonal grouped conv,
 *                        ops/conv2d/conv2d_nchwc.c: input channel (start(kb) + cb)*x + c of
 *                        output channel k, zero outside k's group)
 *   weight_to_dense      f32[O, K], block y -> f32[ceil(O/y), K, y] (dense_packed)
 *   vector_to_blocks     f32[C], block -> f32[ceil(C/block), block] (biases, batch-norm
 *                        parameters), zero-padded
 *   conv_weight_channel_scale  f32[A, CB, B, X, Y], scale f32[CB, X] -> f32[A, CB, B, X, Y]:
 *                        out[a, cb, b, c, k] = weight[a, cb, b, c, k] * scale[cb, c], a
 *                        transformed conv weight whose input channel cb*X + c sits on
 *                        axes 1 and 3, scaled per input channel at run time (the
 *                        squeeze-excitation gate folded into the next conv,
 *                        models/passes/fuse_channel_scale.h); the layouts the conv
 *                        algorithms read fit it: OIHW[x]i[y]o as [K/y, C/x, R*S, x, y],
 *                        im2col's and the grouped template's [K/y, C, R, S, y] (groups 1)
 *                        as [K/y, C/x, 1, x, R*S*y]
 */
#include "ops/families.h"

static const char nchw_to_nchwc_text[] =
    "op nchw_to_nchwc(data: f32[N, C, H, W], block: int)\n"
    "  assert block >= 1, \"block must be >= 1\"\n"
    "  out[n, cb, h, w, c] = select(cb*block + c < C, data[n, cb*block + c, h, w], 0.0)\n"
    "    where cb < (C + block - 1) / block, c < block\n";

static const char nchwc_to_nchw_text[] =
    "op nchwc_to_nchw(data: f32[N, CB, H, W, X], channels: int)\n"
    "  assert channels >= 1 && channels <= CB * X, \"channels must be in 1 .. C/x * x\"\n"
    "  out[n, c, h, w] = data[n, c / X, h, w, c % X]\n"
    "    where c < channels\n";

static const char nchwc_reblock_text[] =
    "op nchwc_reblock(data: f32[N, CB, H, W, X], channels: int, block: int)\n"
    "  assert channels >= 1 && channels <= CB * X, \"channels must be in 1 .. C/x * x\"\n"
    "  assert block >= 1, \"block must be >= 1\"\n"
    "  // min() keeps the (unused) read of a padding lane inside the data\n"
    "  out[n, ob, h, w, c] = select(ob*block + c < channels,\n"
    "                               data[n, min(ob*block + c, channels - 1) / X, h, w,\n"
    "                                    min(ob*block + c, channels - 1) % X], 0.0)\n"
    "    where ob < (channels + block - 1) / block, c < block\n";

static const char weight_to_nchwc_text[] =
    "op weight_to_nchwc(weight: f32[K, C, R, S], in_block: int, out_block: int)\n"
    "  assert in_block >= 1 && out_block >= 1, \"blocks must be >= 1\"\n"
    "  out[kb, cb, r, s, c, k] = select(kb*out_block + k < K && cb*in_block + c < C,\n"
    "                                   weight[kb*out_block + k, cb*in_block + c, r, s], 0.0)\n"
    "    where kb < (K + out_block - 1) / out_block, cb < (C + in_block - 1) / in_block,\n"
    "          c < in_block, k < out_block\n";

static const char weight_to_grouped_text[] =
    "op weight_to_grouped(weight: f32[K, CG, R, S], out_block: int)\n"
    "  assert out_block >= 1, \"out_block must be >= 1\"\n"
    "  out[kb, ci, r, s, k] = select(kb*out_block + k < K, weight[kb*out_block + k, ci, r, s], 0.0)\n"
    "    where kb < (K + out_block - 1) / out_block, k < out_block\n";

/* The band start of output block kb and the input channel of [kb, cb, c], as in
 * conv2d_nchwc_blockdiag_bias (ops/conv2d/conv2d_nchwc.c) with C = groups * CG. */
#define BD_KK "(kb*out_block + k)"
#define BD_START "min((kb*out_block / (K / groups)) * CG / in_block, (groups*CG + in_block - 1) / in_block - band)"
#define BD_CI "((" BD_START " + cb)*in_block + c)"
#define BD_G0 "(" BD_KK " / (K / groups))*CG"

static const char weight_to_blockdiag_text[] =
    "op weight_to_blockdiag(weight: f32[K, CG, R, S], groups: int, in_block: int, out_block: int, band: int)\n"
    "  assert groups >= 1 && K % groups == 0, \"groups must divide K\"\n"
    "  assert in_block >= 1 && out_block >= 1 && band >= 1, \"blocks and band must be >= 1\"\n"
    "  assert band <= (groups*CG + in_block - 1) / in_block, \"the band exceeds the input blocks\"\n"
    "  // min() and max() keep the (unused) reads outside the group inside the weight\n"
    "  out[kb, cb, r, s, c, k] = select(" BD_KK " < K && " BD_CI " >= " BD_G0 " && " BD_CI " < " BD_G0 " + CG,\n"
    "                                   weight[min(" BD_KK ", K - 1), max(min(" BD_CI " - " BD_G0 ", CG - 1), 0), r, s],\n"
    "                                   0.0)\n"
    "    where kb < (K + out_block - 1) / out_block, cb < band, c < in_block, k < out_block\n";

static const char weight_to_depthwise_text[] =
    "op weight_to_depthwise(weight: f32[C, M, R, S], block: int)\n"
    "  assert M == 1, \"a depthwise weight has one input channel per group (C x 1 x R x S)\"\n"
    "  assert block >= 1, \"block must be >= 1\"\n"
    "  out[cb, r, s, c] = select(cb*block + c < C, weight[cb*block + c, 0, r, s], 0.0)\n"
    "    where cb < (C + block - 1) / block, c < block\n";

static const char weight_to_dense_text[] =
    "op weight_to_dense(weight: f32[O, K], block: int)\n"
    "  assert block >= 1, \"block must be >= 1\"\n"
    "  out[ob, k, o] = select(ob*block + o < O, weight[ob*block + o, k], 0.0)\n"
    "    where ob < (O + block - 1) / block, o < block\n";

static const char vector_to_blocks_text[] =
    "op vector_to_blocks(v: f32[C], block: int)\n"
    "  assert block >= 1, \"block must be >= 1\"\n"
    "  out[cb, c] = select(cb*block + c < C, v[cb*block + c], 0.0)\n"
    "    where cb < (C + block - 1) / block, c < block\n";

static const char conv_weight_channel_scale_text[] =
    "op conv_weight_channel_scale(weight: f32[A, CB, B, X, Y], scale: f32[CB, X])\n"
    "  out[a, cb, b, c, k] = weight[a, cb, b, c, k] * scale[cb, c]\n";

static const int r4[] = {4}, r5[] = {5}, r2[] = {2}, r1[] = {1}, r_scale[] = {5, 2};
static const int64_t ex_nchw[] = {1, 5, 3, 4}, ex_nchwc[] = {1, 2, 3, 4, 4}, ex_w[] = {6, 5, 3, 3},
                     ex_gw[] = {6, 2, 3, 3}, ex_dw[] = {5, 1, 3, 3}, ex_dense[] = {10, 7}, ex_vec[] = {5};
static const int64_t *const s_nchw[] = {ex_nchw}, *const s_nchwc[] = {ex_nchwc}, *const s_w[] = {ex_w},
                            *const s_gw[] = {ex_gw}, *const s_dw[] = {ex_dw}, *const s_dense[] = {ex_dense},
                            *const s_vec[] = {ex_vec};
static const int64_t ex_sw[] = {3, 2, 1, 4, 4}, ex_sv[] = {2, 4};
static const int64_t *const s_scale[] = {ex_sw, ex_sv};
static const tsl_dsl_param_value p_block[] = {{"block", TSL_DSL_PARAM_INT, 4, 0.0}};
static const tsl_dsl_param_value p_channels[] = {{"channels", TSL_DSL_PARAM_INT, 7, 0.0}};
static const tsl_dsl_param_value p_reblock[] = {{"channels", TSL_DSL_PARAM_INT, 7, 0.0},
                                                {"block", TSL_DSL_PARAM_INT, 3, 0.0}};
static const tsl_dsl_param_value p_wblock[] = {{"in_block", TSL_DSL_PARAM_INT, 4, 0.0},
                                               {"out_block", TSL_DSL_PARAM_INT, 4, 0.0}};
static const tsl_dsl_param_value p_oblock[] = {{"out_block", TSL_DSL_PARAM_INT, 4, 0.0}};
/* 12 output channels in 4 groups of 3 input channels each, blocks of 4: band 2 */
static const int64_t ex_bdw[] = {12, 3, 3, 3};
static const int64_t *const s_bdw[] = {ex_bdw};
static const tsl_dsl_param_value p_blockdiag[] = {{"groups", TSL_DSL_PARAM_INT, 4, 0.0},
                                                  {"in_block", TSL_DSL_PARAM_INT, 4, 0.0},
                                                  {"out_block", TSL_DSL_PARAM_INT, 4, 0.0},
                                                  {"band", TSL_DSL_PARAM_INT, 2, 0.0}};

static const tsl_op_source family[] = {
    {"nchw_to_nchwc", "NCHW -> NCHW[x]c (x = block), channels past C zero (f32)", nchw_to_nchwc_text,
     {1, r4, s_nchw, 1, p_block}},
    {"nchwc_to_nchw", "NCHW[x]c -> NCHW keeping the first `channels` channels (f32)", nchwc_to_nchw_text,
     {1, r5, s_nchwc, 1, p_channels}},
    {"nchwc_reblock", "NCHW[x]c -> NCHW[block]c, channels past `channels` zero (f32)", nchwc_reblock_text,
     {1, r5, s_nchwc, 2, p_reblock}},
    {"weight_to_nchwc", "conv weight OIHW -> OIHW[x]i[y]o, zero-padded (f32)", weight_to_nchwc_text,
     {1, r4, s_w, 2, p_wblock}},
    {"weight_to_grouped", "grouped conv weight OIHW -> O-blocked (K/y, C/g, R, S, y), zero-padded (f32)",
     weight_to_grouped_text, {1, r4, s_gw, 1, p_oblock}},
    {"weight_to_blockdiag",
     "grouped conv weight OIHW -> OIHW[x]i[y]o over a band of input blocks, zero outside the groups (f32)",
     weight_to_blockdiag_text, {1, r4, s_bdw, 4, p_blockdiag}},
    {"weight_to_depthwise", "depthwise conv weight (C, 1, R, S) -> (C/x, R, S, x), zero-padded (f32)",
     weight_to_depthwise_text, {1, r4, s_dw, 1, p_block}},
    {"weight_to_dense", "dense weight (O, K) -> (O/y, K, y), zero-padded (f32)", weight_to_dense_text,
     {1, r2, s_dense, 1, p_block}},
    {"vector_to_blocks", "per-channel vector (C) -> (C/x, x), zero-padded (f32)", vector_to_blocks_text,
     {1, r1, s_vec, 1, p_block}},
    {"conv_weight_channel_scale", "transformed conv weight scaled per input channel (f32)",
     conv_weight_channel_scale_text, {2, r_scale, s_scale, 0, NULL}},
};

const tsl_op_source *tsl_ops_layout_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
