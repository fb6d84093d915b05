/* Float64 references for accuracy studies (tests/winograd): the direct convolution of
 * float32 inputs with every product and sum in double and the result KEPT in double, so
 * the error of a float32 algorithm is measured against the exact value to ~1e-16, not
 * against another float32 rounding. Deliberately naive: plain loops, no cleverness.
 */
#ifndef TESSEL_TESTS_REF_CONV64_H
#define TESSEL_TESTS_REF_CONV64_H

#include <stdint.h>

#include "ref/ref_ops.h"

/* out[N, K, OH, OW] (double) = sum over c, r, s of in * w (+ bias[k] when bias != NULL),
 * zero outside the input; NCHW / OIHW, groups = 1, any stride, padding, dilation. */
void ref_conv2d_nchw_f64(const ref_conv2d_params *p, const float *in, const float *w, const float *bias,
                         double *out);

/* sqrt(sum (got - want)^2 / sum want^2) (root-mean-square relative error; absolute when
 * want is all 0); +inf when any got is not finite. */
double ref_rms_rel_error_f64(const float *got, const double *want, int64_t n);

#endif
