/* Naive reference operators for tests. Written independently of tessel's DSL,
 * schedules and codegen: plain loops, float64 accumulation, no cleverness. They are
 * the ground truth the generated kernels are compared with.
 */
#ifndef TESSEL_TESTS_REF_OPS_H
#define TESSEL_TESTS_REF_OPS_H

#include <stdint.h>

/* C[M,N] = A[M,K] * B[K,N], row-major, accumulated in double. */
void ref_matmul(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);

/* Parameters of a 2-D convolution in NCHW / OIHW (weights K x C/groups x R x S). */
typedef struct ref_conv2d_params {
  int64_t N, C, H, W;    /* input */
  int64_t K, R, S;       /* output channels, kernel height, width */
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t dilation_h, dilation_w;
  int64_t groups;
} ref_conv2d_params;

/* Output height/width of the convolution (floor mode). */
int64_t ref_conv2d_out_h(const ref_conv2d_params *p);
int64_t ref_conv2d_out_w(const ref_conv2d_params *p);

/* out[N,K,OH,OW] = sum over c in group, r, s of in[n, c, oy*sh + r*dh - pt, ox*sw + s*dw - pl]
 * * w[k, c, r, s] (+ bias[k] when bias != NULL); zero outside the input. */
void ref_conv2d_nchw(const ref_conv2d_params *p, const float *in, const float *w, const float *bias,
                     float *out);

/* Max |a-b| / max(1, max|b|) over n elements: relative error scaled by the output's
 * magnitude. NaN anywhere gives +inf. */
double ref_max_rel_error(const float *a, const float *b, int64_t n);

/* Deterministic uniform floats in [lo, hi) from a seed (splitmix64). */
void ref_fill_uniform(float *x, int64_t n, uint64_t seed, float lo, float hi);

#endif
