/* Naive integer references for the binary operators (see ref_binary.h). */
#include "ref/ref_binary.h"

int ref_bin_bipolar(float x) { return x < 0.0f ? -1 : 1; }

int ref_bin_unipolar(float x, int bits) {
  int L = (1 << bits) - 1, q = 0;
  float v = x * (float)L;
  for (int k = 0; k < L; k++)
    if (v >= (float)k + 0.5f) q++;
  return q;
}

void ref_bin_conv2d(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t sh,
                    int64_t sw, int64_t ph, int64_t pw, const int *a, const int *w, int64_t *out) {
  int64_t OH = (H + 2 * ph - R) / sh + 1, OW = (W + 2 * pw - S) / sw + 1;
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          int64_t acc = 0;
          for (int64_t c = 0; c < C; c++)
            for (int64_t r = 0; r < R; r++)
              for (int64_t s = 0; s < S; s++) {
                int64_t iy = oy * sh + r - ph, ix = ox * sw + s - pw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += (int64_t)a[((n * C + c) * H + iy) * W + ix] * w[((k * C + c) * R + r) * S + s];
              }
          out[((n * K + k) * OH + oy) * OW + ox] = acc;
        }
}

void ref_bin_dense(int64_t B, int64_t O, int64_t K, const int *a, const int *w, int64_t *out) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t o = 0; o < O; o++) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (int64_t)a[b * K + k] * w[o * K + k];
      out[b * O + o] = acc;
    }
}

int64_t ref_bin_glue(int64_t acc, int64_t bias, int shift, int64_t qmax) {
  int64_t num = acc + bias, den = (int64_t)1 << shift;
  int64_t q = num / den;
  if (num % den != 0 && num < 0) q -= 1;
  if (q < 0) q = 0;
  if (q > qmax) q = qmax;
  return q;
}
