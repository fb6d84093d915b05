/* 2-D convolution, direct form, NCHW data and KCRS (OIHW) weights, groups = 1.
 * Separate strides, paddings (top/left/bottom/right) and dilations per axis; output size
 * (H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1 (floor), as in
 * ONNX Conv and TVM's conv2d_nchw. Padding is its own injective stage, inlined into the
 * convolution by default. */
#include "ops/families.h"

static const char conv2d_nchw_text[] =
    "op conv2d_nchw(data: f32[N, C, H, W], weight: f32[K, C, R, S],\n"
    "               stride_h: int = 1, stride_w: int = 1,\n"
    "               pad_top: int = 0, pad_left: int = 0, pad_bottom: int = 0, pad_right: int = 0,\n"
    "               dilation_h: int = 1, dilation_w: int = 1)\n"
    "  assert stride_h >= 1 && stride_w >= 1, \"strides must be >= 1\"\n"
    "  assert dilation_h >= 1 && dilation_w >= 1, \"dilations must be >= 1\"\n"
    "  assert pad_top >= 0 && pad_left >= 0 && pad_bottom >= 0 && pad_right >= 0, \"paddings must be >= 0\"\n"
    "  @tag(\"injective\")\n"
    "  padded[n, c, y, x] = select(y >= pad_top && y < H + pad_top && x >= pad_left && x < W + pad_left,\n"
    "                              data[n, c, y - pad_top, x - pad_left], 0.0)\n"
    "    where y < H + pad_top + pad_bottom, x < W + pad_left + pad_right\n"
    "  @tag(\"conv2d\")\n"
    "  out[n, k, y, x] = sum(c, r, s: padded[n, c, y*stride_h + r*dilation_h, x*stride_w + s*dilation_w]\n"
    "                                 * weight[k, c, r, s])\n"
    "    where y < (H + pad_top + pad_bottom - dilation_h*(R - 1) - 1) / stride_h + 1,\n"
    "          x < (W + pad_left + pad_right - dilation_w*(S - 1) - 1) / stride_w + 1\n";

static const int rank4[] = {4, 4};
static const int64_t conv_data[] = {1, 3, 32, 32}, conv_weight[] = {16, 3, 3, 3};
static const int64_t *const conv_shapes[] = {conv_data, conv_weight};
static const tsl_dsl_param_value conv_params[] = {
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
};

static const tsl_op_source family[] = {
    {"conv2d_nchw",
     "direct 2-D convolution, NCHW data, KCRS weights, per-axis stride/padding/dilation, groups 1 (f32)",
     conv2d_nchw_text, {2, rank4, conv_shapes, 4, conv_params}},
};

const tsl_op_source *tsl_ops_conv2d_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
