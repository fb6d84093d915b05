/* tessel — what the graph compiler needs to describe a Resize to the "resize" generator
 * (ops/nn/generators.h): a scale as the exact ratio the generator computes with. */
#ifndef TESSEL_OPS_NN_RESIZE_H
#define TESSEL_OPS_NN_RESIZE_H

#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The exact ratio *num / *den (both >= 1; num odd or den 1) of a positive scale: a
 * float32 value, as ONNX gives scales, held in a double is a dyadic rational m * 2^e.
 * Errors: TSL_ERR_INVALID (not positive or not finite), TSL_ERR_UNSUPPORTED (a ratio that
 * needs more than 60 bits: |e| > 60 or so). */
tsl_status tsl_resize_scale_ratio(double scale, int64_t *num, int64_t *den);

#ifdef __cplusplus
}
#endif
#endif
