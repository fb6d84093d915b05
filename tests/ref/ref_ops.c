/* Naive reference operators: see ref_ops.h. */
#include "ref/ref_ops.h"

#include <math.h>

void ref_matmul(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; k++) acc += (double)A[i * K + k] * (double)B[k * N + j];
      C[i * N + j] = (float)acc;
    }
}

int64_t ref_conv2d_out_h(const ref_conv2d_params *p) {
  int64_t span = p->dilation_h * (p->R - 1) + 1;
  return (p->H + p->pad_top + p->pad_bottom - span) / p->stride_h + 1;
}

int64_t ref_conv2d_out_w(const ref_conv2d_params *p) {
  int64_t span = p->dilation_w * (p->S - 1) + 1;
  return (p->W + p->pad_left + p->pad_right - span) / p->stride_w + 1;
}

void ref_conv2d_nchw(const ref_conv2d_params *p, const float *in, const float *w, const float *bias,
                     float *out) {
  int64_t OH = ref_conv2d_out_h(p), OW = ref_conv2d_out_w(p);
  int64_t cg = p->C / p->groups, kg = p->K / p->groups;
  for (int64_t n = 0; n < p->N; n++)
    for (int64_t k = 0; k < p->K; k++) {
      int64_t g = k / kg;
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          double acc = bias ? (double)bias[k] : 0.0;
          for (int64_t c = 0; c < cg; c++)
            for (int64_t r = 0; r < p->R; r++)
              for (int64_t s = 0; s < p->S; s++) {
                int64_t y = oy * p->stride_h + r * p->dilation_h - p->pad_top;
                int64_t x = ox * p->stride_w + s * p->dilation_w - p->pad_left;
                if (y < 0 || y >= p->H || x < 0 || x >= p->W) continue;
                int64_t ci = g * cg + c;
                acc += (double)in[((n * p->C + ci) * p->H + y) * p->W + x] *
                       (double)w[((k * cg + c) * p->R + r) * p->S + s];
              }
          out[((n * p->K + k) * OH + oy) * OW + ox] = (float)acc;
        }
    }
}

double ref_max_rel_error(const float *a, const float *b, int64_t n) {
  double scale = 1.0, err = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) return INFINITY;
    if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);
  }
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > err) err = d;
  }
  return err / scale;
}

void ref_fill_uniform(float *x, int64_t n, uint64_t seed, float lo, float hi) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    double u = (double)(z >> 11) * (1.0 / 9007199254740992.0);
    x[i] = (float)(lo + (hi - lo) * u);
  }
}
