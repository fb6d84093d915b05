/* Internal to ops/: DSL text shared by the NCHW[x]c operator families
 * (conv2d_nchwc.c, im2col.c, depthwise.c, pool.c, nn.c).
 *
 * The blocked layout NCHW[x]c (MegEngine's NCHW44/NCHW88, TVM's NCHWc): an image
 * tensor of C channels is stored as f32[N, ceil(C/x), H, W, x]; channel c lives at
 * [n, c / x, h, w, c % x]. x is the vector width of the target in f32 lanes (8 for
 * AVX2, 16 for AVX-512, 4 for NEON), so one vector load reads x channels of one pixel.
 * Lanes of the last block past C hold zeros ("zero padding"); every operator keeps them
 * at zero or never lets them reach a real channel. Plain NCHW is the case x = 1.
 *
 * Activations (the `act` parameter of the fused epilogues):
 *   0  none
 *   1  relu   max(v, 0)
 *   2  clip   min(max(v, clip_min), clip_max)   (relu6: clip_min 0, clip_max 6)
 * min and max propagate NaN (ir/ir.h), as ONNX Relu and Clip do. Other functions (the
 * activation table's) are not codes: ops/epilogue.h applies them to the instantiated
 * program's output stage, with act 0.
 */
#ifndef TESSEL_OPS_NCHWC_H
#define TESSEL_OPS_NCHWC_H

/* Scalar parameters of an epilogue, appended to an op's parameter list. */
#define TSL_NCHWC_ACT_PARAMS ", act: int = 0, clip_min: float = 0.0, clip_max: float = 6.0"

/* The assert that refuses an unknown activation code. */
#define TSL_NCHWC_ACT_ASSERT "  assert act >= 0 && act <= 2, \"act must be 0 (none), 1 (relu) or 2 (clip)\"\n"

/* The activation applied to the expression text V (V is repeated; the constant act
 * selects one branch when the op is instantiated). */
#define TSL_NCHWC_ACT(V) \
  "act == 1 ? max(" V ", 0.0) : act == 2 ? min(max(" V ", clip_min), clip_max) : " V

/* The convolution parameters (strides, paddings top/left/bottom/right, dilations), their
 * asserts, and the padding stage over data f32[N, CB, H, W, X] (zeros outside). */
#define TSL_NCHWC_CONV_PARAMS                                                                             \
  "               stride_h: int = 1, stride_w: int = 1,\n"                                      \
  "               pad_top: int = 0, pad_left: int = 0, pad_bottom: int = 0, pad_right: int = 0,\n" \
  "               dilation_h: int = 1, dilation_w: int = 1"

#define TSL_NCHWC_CONV_ASSERTS                                                                                       \
  "  assert stride_h >= 1 && stride_w >= 1, \"strides must be >= 1\"\n"                                      \
  "  assert dilation_h >= 1 && dilation_w >= 1, \"dilations must be >= 1\"\n"                                \
  "  assert pad_top >= 0 && pad_left >= 0 && pad_bottom >= 0 && pad_right >= 0, \"paddings must be >= 0\"\n"

#define TSL_NCHWC_PADDED_STAGE                                                                                       \
  "  @tag(\"injective\")\n"                                                                                  \
  "  padded[n, cb, y, x, c] = select(y >= pad_top && y < H + pad_top && x >= pad_left && x < W + pad_left,\n" \
  "                                  data[n, cb, y - pad_top, x - pad_left, c], 0.0)\n"                       \
  "    where y < H + pad_top + pad_bottom, x < W + pad_left + pad_right\n"

#endif
