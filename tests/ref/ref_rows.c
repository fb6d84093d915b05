/* Naive row-wise references: see ref_rows.h. */
#include "ref/ref_rows.h"

#include <math.h>

void ref_row_max(int64_t M, int64_t N, const float *A, float *out) {
  for (int64_t i = 0; i < M; i++) {
    float m = -INFINITY;
    int nan = 0;
    for (int64_t j = 0; j < N; j++) {
      float v = A[i * N + j];
      if (v != v) nan = 1;
      else if (v > m) m = v;
    }
    out[i] = nan ? NAN : m;
  }
}

void ref_row_center(int64_t M, int64_t N, const float *A, float *out) {
  for (int64_t i = 0; i < M; i++) {
    double s = 0.0;
    for (int64_t j = 0; j < N; j++) s += A[i * N + j];
    for (int64_t j = 0; j < N; j++) out[i * N + j] = A[i * N + j] - (float)s;
  }
}
