/* The nn family's generated operators (generators.h), in `tunecli list` order. */
#include "ops/families.h"
#include "ops/nn/generators.h"

static const tsl_op_generator nn_generators[] = {
    {"softmax", "softmax along attribute axis (exp(x - max) / sum)", tsl_softmax_text},
    {"binary_nchwc", "add/sub/mul/div of two NCHW[x]c tensors broadcasting on N, C, H, W", tsl_broadcast_nchwc_text},
    {"resize", "ONNX Resize: nearest or N-linear, every coordinate transform but tf_crop_and_resize", tsl_resize_text},
    {"pad_mode", "ONNX Pad in mode reflect, edge or wrap (attributes mode, pads)", tsl_pad_mode_text},
    {"prelu", "x < 0 ? slope * x : x, slope broadcast to x", tsl_prelu_text},
};

const tsl_op_generator *tsl_ops_nn_generators(int *n) {
  *n = (int)(sizeof nn_generators / sizeof nn_generators[0]);
  return nn_generators;
}
