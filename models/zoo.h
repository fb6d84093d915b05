/* tessel — built-in CNNs: graphs built in C, architecturally identical to
 * torchvision 0.14's models, with deterministic seeded weights (no file needed).
 *
 * Models: squeezenet1_0, squeezenet1_1 (Iandola et al., "SqueezeNet", 2016),
 * resnet18, resnet50 (He et al., "Deep Residual Learning", CVPR 2016; torchvision's
 * v1.5 with the stride on the 3x3 convolution of a bottleneck), mobilenet_v2 (Sandler
 * et al., "MobileNetV2", CVPR 2018), shufflenet_v2_x1_0 (Ma et al., "ShuffleNet V2",
 * ECCV 2018). Layers appear in torchvision's forward order with its module names
 * (node "layer1.0.conv1", weight "layer1.0.conv1.weight"); batch normalization is kept
 * as BatchNormalization nodes after bias-free convolutions, exactly as torchvision
 * builds them (the graph passes fold it later); Dropout nodes stand where torchvision
 * has dropout; ShuffleNetV2's channel split is two Slices and its channel shuffle a
 * Reshape-Transpose-Reshape, as torch.onnx exports them.
 *
 * Graph: input "input" f32 [1, 3, 224, 224] (NCHW), output "output" f32 [1, 1000]
 * (logits), shapes inferred.
 *
 * Weights: the same (name, seed) always gives the same values on every platform
 * (each tensor drawn with tsl_tensor_fill_random from a seed mixed from `seed` and the
 * tensor's name). Scaled so activations stay of order 1: convolutions uniform with
 * variance 2/fan_in where a ReLU follows, 1/fan_in where none does (He et al.,
 * "Delving Deep into Rectifiers", ICCV 2015), linear
 * layers uniform in +-1/sqrt(fan_in) (PyTorch's default), conv biases small, batch
 * norms with non-trivial statistics (scale in [0.5, 1.5), shift and mean in
 * [-0.25, 0.25), variance in [0.5, 1.5)) so that folding them really changes weights.
 */
#ifndef TESSEL_MODELS_ZOO_H
#define TESSEL_MODELS_ZOO_H

#include <stdint.h>

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds model `name` with weights from `seed`. *out is set only on success; free it
 * with tsl_graph_free.
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOT_FOUND (unknown name; the message
 * lists the known ones), TSL_ERR_NOMEM. */
tsl_status tsl_zoo_build(const char *name, uint64_t seed, tsl_graph **out);

/* The model names tsl_zoo_build takes, NULL-terminated, static storage: the six
 * full-precision models, then the binarized ones of models/zoo_binary.h (aliases such as
 * "squeezenet" and "bsqueezenet" are not listed). */
const char *const *tsl_zoo_list(void);

#ifdef __cplusplus
}
#endif
#endif
