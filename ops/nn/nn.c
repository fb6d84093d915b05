/* The other CNN operators of the NCHW[x]c operator library (ops/nchwc.h; x = 1 is
 * plain NCHW). Semantics are ONNX's (docs/Operators.md) unless stated.
 *
 *   dense_packed(data f32[B, K], weight f32[O/y, K, y], bias f32[O/y, y], act = 0, ...)
 *       a fully connected layer out[b, o] = act(sum over k of data[b, k] w[o, k] + bias[o])
 *       with the weight re-laid (ops/nn/layout.c weight_to_dense) so y outputs are one
 *       vector; output f32[B, O/y, y] (= [B, O] padded to a multiple of y).
 *   softmax(data f32[N, C])  softmax over the last axis: exp(x - max) / sum(exp(x - max)).
 *   flatten_nchwc(data f32[N, C/x, H, W, x], channels) -> f32[N, channels*H*W] in NCHW
 *       order (what Flatten after a blocked conv needs).
 *   flatten(data f32[N, C, H, W]) -> f32[N, C*H*W] (a row-major copy).
 *
 * dense_packed takes the activation of the conv epilogues (act 0/1/2). The graph's batch
 * norm, broadcasting elementwise ops, concat and channel shuffle are generated operators
 * (ops/op_call.h, ops/nn/generators.c): one definition, written for each call's shapes
 * and layouts.
 */
#include "ops/families.h"
#include "ops/nchwc.h"

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

static const int r5[] = {5}, r2[] = {2}, r4[] = {4};
static const int r_dense[] = {2, 3, 2};
static const int64_t ex5[] = {1, 2, 3, 5, 4}, ex_dd[] = {2, 10}, ex_dw[] = {3, 10, 4}, ex_db[] = {3, 4},
                     ex_sm[] = {3, 11}, ex4[] = {1, 3, 2, 5};
static const int64_t *const s5[] = {ex5}, *const s_dense[] = {ex_dd, ex_dw, ex_db}, *const s_sm[] = {ex_sm},
                            *const s4[] = {ex4};
static const tsl_dsl_param_value p_relu[] = {{"act", TSL_DSL_PARAM_INT, 1, 0.0}};
static const tsl_dsl_param_value p_flat[] = {{"channels", TSL_DSL_PARAM_INT, 7, 0.0}};

static const tsl_op_source family[] = {
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
