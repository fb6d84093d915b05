/* The other CNN operators of the NCHW[x]c operator library (ops/nchwc.h; x = 1 is
 * plain NCHW). Semantics are ONNX's (docs/Operators.md) unless stated.
 *
 *   batch_norm_nchwc(data f32[N, C/x, H, W, x], scale, bias, mean, var f32[C/x, x],
 *                    epsilon = 1e-5)
 *       inference batch normalization (data - mean) * (scale / sqrt(var + epsilon)) + bias;
 *       the per-channel factor is its own stage (computed once, not per pixel).
 *   broadcast_add / broadcast_mul(a f32[A0..A4], b f32[B0..B4], act = 0, ...)
 *       act(a + b) / act(a * b) with numpy broadcasting over rank 5: in every axis the
 *       extents are equal or one of them is 1 (rank < 5: leading extents 1). NCHW[x]c
 *       tensors are rank 5 already; a per-channel vector is [1, C/x, 1, 1, x].
 *   concat2_nchwc / concat3_nchwc (a f32[N, A/x, H, W, x], b ..., c_a, c_b [, c_c])
 *       the channels of a (its first c_a), then of b (first c_b) [, then c]: output
 *       f32[N, ceil((c_a + c_b [+ c_c]) / x), H, W, x], padding lanes 0. When c_a is a
 *       multiple of x the blocks are copied whole; otherwise lanes shift across blocks.
 *   channel_shuffle_nchwc(data f32[N, C/x, H, W, x], channels, groups)
 *       ShuffleNet's shuffle: output channel j*groups + i = input channel i*(C/groups) + j
 *       (reshape to [groups, C/groups], transpose, flatten), padding lanes 0.
 *   dense_packed(data f32[B, K], weight f32[O/y, K, y], bias f32[O/y, y], act = 0, ...)
 *       a fully connected layer out[b, o] = act(sum over k of data[b, k] w[o, k] + bias[o])
 *       with the weight re-laid (ops/nn/layout.c weight_to_dense) so y outputs are one
 *       vector; output f32[B, O/y, y] (= [B, O] padded to a multiple of y).
 *   softmax(data f32[N, C])  softmax over the last axis: exp(x - max) / sum(exp(x - max)).
 *   flatten_nchwc(data f32[N, C/x, H, W, x], channels) -> f32[N, channels*H*W] in NCHW
 *       order (what Flatten after a blocked conv needs).
 *   flatten(data f32[N, C, H, W]) -> f32[N, C*H*W] (a row-major copy).
 *
 * The elementwise operators take the activation of the conv epilogues (act 0/1/2).
 */
#include "ops/families.h"
#include "ops/nchwc.h"

static const char batch_norm_text[] =
    "op batch_norm_nchwc(data: f32[N, CB, H, W, X], scale: f32[CB, X], bias: f32[CB, X], mean: f32[CB, X],\n"
    "                    var: f32[CB, X], epsilon: float = 0.00001)\n"
    "  @tag(\"bn_factor\")\n"
    "  factor[cb, c] = scale[cb, c] / sqrt(var[cb, c] + epsilon)\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, cb, h, w, c] = (data[n, cb, h, w, c] - mean[cb, c]) * factor[cb, c] + bias[cb, c]\n";

#define BCAST_ASSERT(I)                                                                                   \
  "  assert A" I " == B" I " || A" I " == 1 || B" I " == 1, \"extents of axis " I " do not broadcast\"\n"
#define BCAST_HEAD(NAME)                                                                                  \
  "op " NAME "(a: f32[A0, A1, A2, A3, A4], b: f32[B0, B1, B2, B3, B4]" TSL_NCHWC_ACT_PARAMS ")\n"            \
  BCAST_ASSERT("0") BCAST_ASSERT("1") BCAST_ASSERT("2") BCAST_ASSERT("3") BCAST_ASSERT("4") TSL_NCHWC_ACT_ASSERT
#define BCAST_WHERE                                                                                       \
  "    where i0 < max(A0, B0), i1 < max(A1, B1), i2 < max(A2, B2), i3 < max(A3, B3), i4 < max(A4, B4)\n"

static const char broadcast_add_text[] =
    BCAST_HEAD("broadcast_add")
    "  @tag(\"broadcast\")\n"
    "  out[i0, i1, i2, i3, i4] = " TSL_NCHWC_ACT("(a[i0 % A0, i1 % A1, i2 % A2, i3 % A3, i4 % A4] + "
                                                 "b[i0 % B0, i1 % B1, i2 % B2, i3 % B3, i4 % B4])") "\n"
    BCAST_WHERE;

static const char broadcast_mul_text[] =
    BCAST_HEAD("broadcast_mul")
    "  @tag(\"broadcast\")\n"
    "  out[i0, i1, i2, i3, i4] = " TSL_NCHWC_ACT("(a[i0 % A0, i1 % A1, i2 % A2, i3 % A3, i4 % A4] * "
                                                 "b[i0 % B0, i1 % B1, i2 % B2, i3 % B3, i4 % B4])") "\n"
    BCAST_WHERE;

/* channel k of the output as the source tensor's (block, lane), clamped into the source
 * so that reads under a false select stay in bounds */
#define SRC(T, LO, CNT) \
  T "[n, min(max(ob*X + l - (" LO "), 0), " CNT " - 1) / X, h, w, min(max(ob*X + l - (" LO "), 0), " CNT " - 1) % X]"

static const char concat2_text[] =
    "op concat2_nchwc(a: f32[N, CA, H, W, X], b: f32[N, CBB, H, W, X], c_a: int, c_b: int)\n"
    "  assert c_a >= 1 && c_a <= CA * X && c_b >= 1 && c_b <= CBB * X, \"channel counts exceed the blocks\"\n"
    "  @tag(\"concat\")\n"
    "  out[n, ob, h, w, l] = ob*X + l < c_a ? " SRC("a", "0", "c_a") " :\n"
    "                        ob*X + l < c_a + c_b ? " SRC("b", "c_a", "c_b") " : 0.0\n"
    "    where ob < (c_a + c_b + X - 1) / X, l < X\n";

static const char concat3_text[] =
    "op concat3_nchwc(a: f32[N, CA, H, W, X], b: f32[N, CBB, H, W, X], c: f32[N, CC, H, W, X],\n"
    "                 c_a: int, c_b: int, c_c: int)\n"
    "  assert c_a >= 1 && c_a <= CA * X && c_b >= 1 && c_b <= CBB * X && c_c >= 1 && c_c <= CC * X,\n"
    "    \"channel counts exceed the blocks\"\n"
    "  @tag(\"concat\")\n"
    "  out[n, ob, h, w, l] = ob*X + l < c_a ? " SRC("a", "0", "c_a") " :\n"
    "                        ob*X + l < c_a + c_b ? " SRC("b", "c_a", "c_b") " :\n"
    "                        ob*X + l < c_a + c_b + c_c ? " SRC("c", "c_a + c_b", "c_c") " : 0.0\n"
    "    where ob < (c_a + c_b + c_c + X - 1) / X, l < X\n";

static const char channel_shuffle_text[] =
    "op channel_shuffle_nchwc(data: f32[N, CB, H, W, X], channels: int, groups: int)\n"
    "  assert channels >= 1 && channels <= CB * X, \"channels exceed the blocks\"\n"
    "  assert groups >= 1 && channels % groups == 0, \"groups must divide channels\"\n"
    "  @tag(\"shuffle\")\n"
    "  out[n, ob, h, w, l] = ob*X + l < channels ?\n"
    "      data[n, (min(ob*X + l, channels - 1) % groups * (channels / groups) + min(ob*X + l, channels - 1) / groups) / X,\n"
    "           h, w, (min(ob*X + l, channels - 1) % groups * (channels / groups) + min(ob*X + l, channels - 1) / groups) % X]\n"
    "      : 0.0\n"
    "    where ob < CB, l < X\n";

static const char dense_packed_text[] =
    "op dense_packed(data: f32[B, K], weight: f32[OB, K, Y], bias: f32[OB, Y]" TSL_NCHWC_ACT_PARAMS ")\n"
    TSL_NCHWC_ACT_ASSERT
    "  @tag(\"dense_packed\")\n"
    "  acc[b, ob, o] = sum(k: data[b, k] * weight[ob, k, o])\n"
    "  @tag(\"elemwise\")\n"
    "  out[b, ob, o] = " TSL_NCHWC_ACT("acc[b, ob, o] + bias[ob, o]") "\n";

static const char softmax_text[] =
    "op softmax(data: f32[N, C])\n"
    "  @tag(\"softmax_max\")\n"
    "  mx[n] = max(c: data[n, c])\n"
    "  @tag(\"softmax_exp\")\n"
    "  e[n, c] = exp(data[n, c] - mx[n])\n"
    "  @tag(\"softmax_sum\")\n"
    "  total[n] = sum(c: e[n, c])\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, c] = e[n, c] / total[n]\n";

static const char flatten_nchwc_text[] =
    "op flatten_nchwc(data: f32[N, CB, H, W, X], channels: int)\n"
    "  assert channels >= 1 && channels <= CB * X, \"channels exceed the blocks\"\n"
    "  @tag(\"injective\")\n"
    "  out[n, i] = data[n, i / (H * W) / X, i / W % H, i % W, i / (H * W) % X]\n"
    "    where i < channels * H * W\n";

static const char flatten_text[] =
    "op flatten(data: f32[N, C, H, W])\n"
    "  @tag(\"injective\")\n"
    "  out[n, i] = data[n, i / (H * W), i / W % H, i % W]\n"
    "    where i < C * H * W\n";

static const int r5[] = {5}, r5x2[] = {5, 5}, r5x3[] = {5, 5, 5}, r2[] = {2}, r4[] = {4};
static const int r_bn[] = {5, 2, 2, 2, 2}, r_dense[] = {2, 3, 2};
static const int64_t ex5[] = {1, 2, 3, 5, 4}, ex_cx[] = {2, 4}, ex_bc[] = {1, 2, 1, 1, 4}, ex5b[] = {1, 1, 3, 5, 4},
                     ex_dd[] = {2, 10}, ex_dw[] = {3, 10, 4}, ex_db[] = {3, 4}, ex_sm[] = {3, 11},
                     ex4[] = {1, 3, 2, 5};
static const int64_t *const s5[] = {ex5}, *const s_bn[] = {ex5, ex_cx, ex_cx, ex_cx, ex_cx},
                            *const s_bc[] = {ex5, ex_bc}, *const s_cat2[] = {ex5, ex5b},
                            *const s_cat3[] = {ex5, ex5b, ex5}, *const s_dense[] = {ex_dd, ex_dw, ex_db},
                            *const s_sm[] = {ex_sm}, *const s4[] = {ex4};
static const tsl_dsl_param_value p_cat2[] = {{"c_a", TSL_DSL_PARAM_INT, 7, 0.0}, {"c_b", TSL_DSL_PARAM_INT, 3, 0.0}};
static const tsl_dsl_param_value p_cat3[] = {
    {"c_a", TSL_DSL_PARAM_INT, 5, 0.0}, {"c_b", TSL_DSL_PARAM_INT, 4, 0.0}, {"c_c", TSL_DSL_PARAM_INT, 8, 0.0}};
static const tsl_dsl_param_value p_shuffle[] = {{"channels", TSL_DSL_PARAM_INT, 6, 0.0},
                                                {"groups", TSL_DSL_PARAM_INT, 3, 0.0}};
static const tsl_dsl_param_value p_relu[] = {{"act", TSL_DSL_PARAM_INT, 1, 0.0}};
static const tsl_dsl_param_value p_flat[] = {{"channels", TSL_DSL_PARAM_INT, 7, 0.0}};

static const tsl_op_source family[] = {
    {"batch_norm_nchwc", "inference batch normalization, NCHW[x]c (f32)", batch_norm_text, {5, r_bn, s_bn, 0, NULL}},
    {"broadcast_add", "act(a + b) with numpy broadcasting over rank 5 (NCHW[x]c or padded NCHW) (f32)",
     broadcast_add_text, {2, r5x2, s_bc, 1, p_relu}},
    {"broadcast_mul", "act(a * b) with numpy broadcasting over rank 5 (f32)", broadcast_mul_text,
     {2, r5x2, s_bc, 0, NULL}},
    {"concat2_nchwc", "channel concatenation of two NCHW[x]c tensors (true channel counts c_a, c_b) (f32)",
     concat2_text, {2, r5x2, s_cat2, 2, p_cat2}},
    {"concat3_nchwc", "channel concatenation of three NCHW[x]c tensors (f32)", concat3_text,
     {3, r5x3, s_cat3, 3, p_cat3}},
    {"channel_shuffle_nchwc", "ShuffleNet channel shuffle (groups), NCHW[x]c (f32)", channel_shuffle_text,
     {1, r5, s5, 2, p_shuffle}},
    {"dense_packed", "fully connected layer + bias + activation, weights re-laid (O/y, K, y) (f32)", dense_packed_text,
     {3, r_dense, s_dense, 1, p_relu}},
    {"softmax", "softmax over the last axis of [N, C] (f32)", softmax_text, {1, r2, s_sm, 0, NULL}},
    {"flatten_nchwc", "NCHW[x]c -> [N, channels*H*W] in NCHW order (f32)", flatten_nchwc_text,
     {1, r5, s5, 1, p_flat}},
    {"flatten", "NCHW -> [N, C*H*W] (f32)", flatten_text, {1, r4, s4, 0, NULL}},
};

const tsl_op_source *tsl_ops_nn_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
