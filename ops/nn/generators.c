/* The nn family's generated operators (generators.h), in `tunecli list` order. */
#include "ops/families.h"
#include "ops/nn/generators.h"

static const tsl_op_generator nn_generators[] = {
    {"softmax", "softmax along attribute axis (exp(x - max) / sum)", tsl_softmax_text},
    {"reduce", "sum, mean, max or min (attribute function) over attribute axes", tsl_reduce_text},
    {"layer_norm", "layer normalization over the axes from attribute axis on, epsilon; scale, bias", tsl_layer_norm_text},
    {"pow", "x^exponent (attribute), or pow(x, y) broadcast", tsl_pow_text},
};

const tsl_op_generator *tsl_ops_nn_generators(int *n) {
  *n = (int)(sizeof nn_generators / sizeof nn_generators[0]);
  return nn_generators;
}
