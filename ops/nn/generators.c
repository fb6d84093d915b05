/* The nn family's generated operators (generators.h), in `tunecli list` order. */
#include "ops/families.h"
#include "ops/nn/generators.h"

static const tsl_op_generator nn_generators[] = {
    {"softmax", "softmax along attribute axis (exp(x - max) / sum)", tsl_softmax_text},
    {"resize", "ONNX Resize: nearest or N-linear, every coordinate transform but tf_crop_and_resize", tsl_resize_text},
    {"pad_mode", "ONNX Pad in mode reflect, edge or wrap (attributes mode, pads)", tsl_pad_mode_text},
    {"prelu", "x < 0 ? slope * x : x, slope broadcast to x", tsl_prelu_text},
    {"pool2d", "max or average over a 2-D window, plain or NCHW[x]c (mode, kernel, strides, dilations, pads, "
               "count_include_pad)", tsl_pool2d_text},
    {"global_avgpool", "mean over the spatial axes, plain or NCHW[x]c", tsl_global_avgpool_text},
    {"elemwise", "relu, clip (min, max), add, mul, div with broadcasting, plain or NCHW[x]c (op)", tsl_elemwise_text},
    {"activation", "a function of the activation table (function and its attributes), plain or NCHW[x]c",
     tsl_activation_text},
    {"concat", "concatenation along attribute axis, plain or along the channels of NCHW[x]c", tsl_concat_text},
    {"split", "split along attribute axis into the outputs", tsl_split_text},
    {"slice", "ONNX Slice (starts, axes, steps), plain or a run of channels of NCHW[x]c", tsl_slice_text},
    {"transpose", "permutation of the axes (perm)", tsl_transpose_text},
    {"pad", "constant padding (pads, value)", tsl_pad_text},
    {"space_to_depth", "ONNX SpaceToDepth (blocksize) of a plain NCHW image",
     tsl_space_to_depth_text},
    {"batch_norm", "inference batch norm (epsilon), plain or NCHW[x]c", tsl_batch_norm_text},
    {"channel_shuffle", "ShuffleNet channel shuffle (group), plain or NCHW[x]c", tsl_channel_shuffle_text},
    {"channel_gather", "channels picked from several images by affine pieces (npieces, piece0..), plain or "
     "NCHW[x]c", tsl_channel_gather_text},
    {"reduce", "sum, mean, max or min (attribute function) over attribute axes", tsl_reduce_text},
    {"layer_norm", "layer normalization over the axes from attribute axis on, epsilon; scale, bias", tsl_layer_norm_text},
    {"pow", "x^exponent (attribute), or pow(x, y) broadcast", tsl_pow_text},
    {"squeeze_excite", "squeeze-excitation gate of an NCHW[x]c image: mean, fc + hidden function, fc + gate "
     "(hidden, gate and their attr0, attr1)", tsl_squeeze_excite_text},
};

const tsl_op_generator *tsl_ops_nn_generators(int *n) {
  *n = (int)(sizeof nn_generators / sizeof nn_generators[0]);
  return nn_generators;
}
