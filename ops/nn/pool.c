/* Pooling in NCHW[x]c (ops/nchwc.h; x = 1 is plain NCHW).
 *
 *   max_pool2d_nchwc(data f32[N, C/x, H, W, x], kernel_h, kernel_w, stride_h = 1,
 *                    stride_w = 1, pad_top/left/bottom/right = 0, dilation_h = 1,
 *                    dilation_w = 1, ceil_mode = 0)
 *       out[n, cb, y, x, c] = max over the window's taps inside the input. The max
 *       propagates NaN (ir/ir.h): a window holding a NaN gives NaN, never a finite value
 *       (shared/cases C08). A window wholly in the padding gives -inf.
 *   avg_pool2d_nchwc(same without dilation, + count_include_pad = 0)
 *       out = (sum of the window's taps inside the input) / count, count = the taps inside
 *       the input, or with count_include_pad the taps inside the padded input
 *       [-pad_top, H + pad_bottom) x [-pad_left, W + pad_right); a window with count 0 gives 0.
 *   global_avg_pool2d_nchwc(data) -> f32[N, C/x, 1, 1, x], the mean over H x W.
 *
 * Output extent (per axis): floor((H + pad_top + pad_bottom - dilation*(k - 1) - 1) / stride) + 1;
 * with ceil_mode the ceiling, minus one when the last window would start at or past
 * H + pad_top (PyTorch's rule: every window starts inside the input or its leading
 * padding; shared/cases C07).
 *
 * Stages: padded (the input with -inf / 0 around it, "injective"), pool (the
 * reduction, tag "pool2d"), for avg also cnt[y, x] (the divisor, "reduce") and out (the
 * division, "elemwise"). The schedule template is ops/nn/pool_schedule.h.
 */
#include "ops/families.h"
#include "ops/nchwc.h"

#define POOL_PARAMS                                                                                         \
  "kernel_h: int, kernel_w: int, stride_h: int = 1, stride_w: int = 1,\n"                                   \
  "                 pad_top: int = 0, pad_left: int = 0, pad_bottom: int = 0, pad_right: int = 0"

#define POOL_ASSERTS                                                                                        \
  "  assert kernel_h >= 1 && kernel_w >= 1, \"kernel sizes must be >= 1\"\n"                                 \
  "  assert stride_h >= 1 && stride_w >= 1, \"strides must be >= 1\"\n"                                      \
  "  assert pad_top >= 0 && pad_left >= 0 && pad_bottom >= 0 && pad_right >= 0, \"paddings must be >= 0\"\n" \
  "  assert ceil_mode == 0 || ceil_mode == 1, \"ceil_mode must be 0 or 1\"\n"

/* the room (in + pads - window) and the floor / ceil extents of one axis */
#define ROOM(IN, PB, PE, K, D) "(" IN " + " PB " + " PE " - " D "*(" K " - 1) - 1)"
#define OUT_EXTENT(IN, PB, PE, K, S, D)                                                                     \
  "(ceil_mode == 0 ? " ROOM(IN, PB, PE, K, D) " / " S " + 1 :"                                              \
  " ((" ROOM(IN, PB, PE, K, D) " + " S " - 1) / " S " + 1 -"                                                \
  " ((((" ROOM(IN, PB, PE, K, D) " + " S " - 1) / " S ") * " S " >= " IN " + " PB ") ? 1 : 0)))"
#define OH_EXPR OUT_EXTENT("H", "pad_top", "pad_bottom", "kernel_h", "stride_h", "dilation_h")
#define OW_EXPR OUT_EXTENT("W", "pad_left", "pad_right", "kernel_w", "stride_w", "dilation_w")

#define PADDED(FILL)                                                                                         \
  "  @tag(\"injective\")\n"                                                                                    \
  "  padded[n, cb, y, x, c] = select(y >= pad_top && y < H + pad_top && x >= pad_left && x < W + pad_left,\n" \
  "                                  data[n, cb, y - pad_top, x - pad_left, c], " FILL ")\n"                  \
  "    where y < H + pad_top + pad_bottom + stride_h, x < W + pad_left + pad_right + stride_w\n"

static const char max_pool_text[] =
    "// max pooling, NCHW[x]c; NaN propagates, windows in the padding give -inf\n"
    "op max_pool2d_nchwc(data: f32[N, CB, H, W, X], " POOL_PARAMS ",\n"
    "                 dilation_h: int = 1, dilation_w: int = 1, ceil_mode: int = 0)\n" POOL_ASSERTS
    "  assert dilation_h >= 1 && dilation_w >= 1, \"dilations must be >= 1\"\n"
    "  assert " ROOM("H", "pad_top", "pad_bottom", "kernel_h", "dilation_h") " >= 0 && "
    ROOM("W", "pad_left", "pad_right", "kernel_w", "dilation_w") " >= 0, \"the window is larger than the padded input\"\n"
    PADDED("-inf")
    "  @tag(\"pool2d\")\n"
    "  pool[n, cb, y, x, c] = max(r, s: padded[n, cb, y*stride_h + r*dilation_h, x*stride_w + s*dilation_w, c])\n"
    "    where y < " OH_EXPR ",\n"
    "          x < " OW_EXPR ",\n"
    "          r < kernel_h, s < kernel_w\n";

static const char avg_pool_text[] =
    "// average pooling, NCHW[x]c; count_include_pad counts the padded taps too\n"
    "op avg_pool2d_nchwc(data: f32[N, CB, H, W, X], " POOL_PARAMS ",\n"
    "                 ceil_mode: int = 0, count_include_pad: int = 0, dilation_h: int = 1, dilation_w: int = 1)\n"
    POOL_ASSERTS
    "  assert dilation_h == 1 && dilation_w == 1, \"average pooling has no dilation\"\n"
    "  assert count_include_pad == 0 || count_include_pad == 1, \"count_include_pad must be 0 or 1\"\n"
    "  assert " ROOM("H", "pad_top", "pad_bottom", "kernel_h", "dilation_h") " >= 0 && "
    ROOM("W", "pad_left", "pad_right", "kernel_w", "dilation_w") " >= 0, \"the window is larger than the padded input\"\n"
    PADDED("0.0")
    "  @tag(\"reduce\")\n"
    "  cnt[y, x]: f32 = sum(r, s: select(count_include_pad == 1 ?\n"
    "                                    y*stride_h + r < H + pad_top + pad_bottom && x*stride_w + s < W + pad_left + pad_right :\n"
    "                                    y*stride_h + r >= pad_top && y*stride_h + r < H + pad_top &&\n"
    "                                    x*stride_w + s >= pad_left && x*stride_w + s < W + pad_left, 1.0, 0.0))\n"
    "    where y < " OH_EXPR ",\n"
    "          x < " OW_EXPR ",\n"
    "          r < kernel_h, s < kernel_w\n"
    "  @tag(\"pool2d\")\n"
    "  pool[n, cb, y, x, c] = sum(r, s: padded[n, cb, y*stride_h + r, x*stride_w + s, c])\n"
    "    where y < " OH_EXPR ",\n"
    "          x < " OW_EXPR ",\n"
    "          r < kernel_h, s < kernel_w\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, cb, y, x, c] = select(cnt[y, x] > 0.0, pool[n, cb, y, x, c] / cnt[y, x], 0.0)\n";

static const char global_avg_pool_text[] =
    "// global average pooling, NCHW[x]c -> [N, C/x, 1, 1, x]\n"
    "op global_avg_pool2d_nchwc(data: f32[N, CB, H, W, X])\n"
    "  @tag(\"global_pool\")\n"
    "  pool[n, cb, y, x, c] = sum(h, w: data[n, cb, h, w, c])\n"
    "    where y < 1, x < 1, h < H, w < W\n"
    "  @tag(\"elemwise\")\n"
    "  out[n, cb, y, x, c] = pool[n, cb, y, x, c] / (H * W)\n";

static const int rank5[] = {5};
static const int64_t ex_data[] = {1, 2, 7, 9, 4};
static const int64_t *const ex_shapes[] = {ex_data};
static const tsl_dsl_param_value max_params[] = {
    {"kernel_h", TSL_DSL_PARAM_INT, 3, 0.0}, {"kernel_w", TSL_DSL_PARAM_INT, 3, 0.0},
    {"stride_h", TSL_DSL_PARAM_INT, 2, 0.0}, {"stride_w", TSL_DSL_PARAM_INT, 2, 0.0},
    {"ceil_mode", TSL_DSL_PARAM_INT, 1, 0.0},
};
static const tsl_dsl_param_value avg_params[] = {
    {"kernel_h", TSL_DSL_PARAM_INT, 2, 0.0},  {"kernel_w", TSL_DSL_PARAM_INT, 2, 0.0},
    {"stride_h", TSL_DSL_PARAM_INT, 2, 0.0},  {"stride_w", TSL_DSL_PARAM_INT, 2, 0.0},
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},   {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"ceil_mode", TSL_DSL_PARAM_INT, 1, 0.0}, {"count_include_pad", TSL_DSL_PARAM_INT, 1, 0.0},
};

static const tsl_op_source family[] = {
    {"max_pool2d_nchwc", "max pooling (padding, stride, dilation, ceil_mode; NaN propagates), NCHW[x]c (f32)",
     max_pool_text, {1, rank5, ex_shapes, 5, max_params}},
    {"avg_pool2d_nchwc", "average pooling (padding, stride, ceil_mode, count_include_pad), NCHW[x]c (f32)",
     avg_pool_text, {1, rank5, ex_shapes, 10, avg_params}},
    {"global_avg_pool2d_nchwc", "global average pooling over H x W, NCHW[x]c -> [N, C/x, 1, 1, x] (f32)",
     global_avg_pool_text, {1, rank5, ex_shapes, 0, NULL}},
};

const tsl_op_source *tsl_ops_pool_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
