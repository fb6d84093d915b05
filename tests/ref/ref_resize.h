/* Reference Resize, Pad (reflect, edge, wrap) and PRelu for the tests: ONNX's definitions
 * (onnx/docs/Operators.md, and the reference implementation's conventions where the text
 * leaves a choice) written out directly in double precision, one output element at a
 * time, separately from ops/nn/resize.c, pad_modes.c and prelu.c. */
#ifndef TESSEL_TESTS_REF_RESIZE_H
#define TESSEL_TESTS_REF_RESIZE_H

#include <stdbool.h>
#include <stdint.h>

/* y[out] = Resize(x[in]) over rank r (compact row-major). scales[d] is each axis' scale
 * (the model's, or out[d] / in[d] for sizes). mode "nearest" | "linear"; coord one of
 * ONNX's coordinate_transformation_mode values but tf_crop_and_resize; nearest one of
 * ONNX's nearest_mode values or "simple" (opset-10 Resize / Upsample: floor, or ceil
 * where the scale is below 1). False for a mode this reference does not know. */
bool ref_resize(const float *x, int r, const int64_t *in, const int64_t *out, const double *scales,
                const char *mode, const char *coord, const char *nearest, float *y);

/* y = Pad(x) in mode "reflect", "edge" or "wrap" (numpy.pad's), pads[0..2r) begins then
 * ends, negative ones cropping first; out[d] = in[d] + begin + end. False for another mode
 * or an axis padded from nothing. */
bool ref_pad_mode(const float *x, int r, const int64_t *in, const int64_t *pads, const char *mode, float *y);

#endif
