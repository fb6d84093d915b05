/* Naive reference CNN operators for the model tests: plain loops over row-major f32
 * arrays, sums accumulated in double. Written from the ONNX operator definitions
 * (docs/Operators.md), independently of tessel's graph code; deliberately simple so
 * that they are obviously right. Caller-allocated outputs; no error paths (callers
 * pass consistent shapes). */
#ifndef TESSEL_TESTS_REF_NN_H
#define TESSEL_TESTS_REF_NN_H

#include <stdbool.h>
#include <stdint.h>

/* Geometry of a 2-D window operator on NCHW data: input N x C x H x W, kernel kh x kw,
 * strides, pads (top, left, bottom, right), dilations, output OH x OW. */
typedef struct ref_nn_window {
  int64_t n, c, h, w;
  int64_t kh, kw;
  int64_t stride_h, stride_w;
  int64_t pad_t, pad_l, pad_b, pad_r;
  int64_t dil_h, dil_w;
  int64_t oh, ow;
} ref_nn_window;

/* Output extent of a window: floor((in + pads - dil*(k-1) - 1) / stride) + 1, or with
 * ceil_mode the ceiling, minus one when the last window would start past the input
 * and its leading padding (PyTorch's rule). Returns < 1 when nothing fits. */
int64_t ref_nn_window_out(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride,
                          int64_t dil, bool ceil_mode);

/* y[n, m, oy, ox] = bias[m] + sum over ci < C/group, r, s of
 *   x[n, g*C/group + ci, oy*sh - pt + r*dh, ox*sw - pl + s*dw] * w[m, ci, r, s]
 * with g = m / (M/group) and zero outside the input. w is M x C/group x kh x kw;
 * bias may be NULL; y is N x M x OH x OW. */
void ref_nn_conv2d(const ref_nn_window *p, const float *x, const float *w, const float *bias, int64_t m,
                   int64_t group, float *y);

/* Max over each window's positions inside the input (padding never wins); any NaN in
 * the window gives NaN. */
void ref_nn_maxpool2d(const ref_nn_window *p, const float *x, float *y);

/* Mean over each window. The divisor counts the window's positions inside the input,
 * or with count_include_pad those inside the padded input [-pad_begin, in + pad_end). */
void ref_nn_avgpool2d(const ref_nn_window *p, const float *x, bool count_include_pad, float *y);

/* y[n, c] = mean of x[n, c, :] over `inner` elements. */
void ref_nn_mean_inner(const float *x, int64_t outer, int64_t inner, float *y);

/* Inference batch norm over x of N x C x inner: (x - mean) / sqrt(var + eps) * scale + b. */
void ref_nn_batchnorm(const float *x, int64_t n, int64_t c, int64_t inner, const float *scale, const float *b,
                      const float *mean, const float *var, double eps, float *y);

/* y[M, N] = alpha * op(A) op(B) + beta * C, op = transpose when the flag is set; A is
 * M x K (K x M transposed), B is K x N (N x K transposed). C (may be NULL) has rank
 * c_ndim <= 2 with extents c_shape, broadcast to M x N. */
void ref_nn_gemm(const float *a, const float *b, const float *c, int c_ndim, const int64_t *c_shape, int64_t M,
                 int64_t N, int64_t K, bool trans_a, bool trans_b, double alpha, double beta, float *y);

/* y[M, N] = A[M, K] B[K, N]. */
void ref_nn_matmul2d(const float *a, const float *b, int64_t M, int64_t N, int64_t K, float *y);

/* Softmax along the middle axis of x viewed as outer x n x inner. */
void ref_nn_softmax(const float *x, int64_t outer, int64_t n, int64_t inner, float *y);

#endif
