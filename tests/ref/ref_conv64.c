/* Float64 references: see ref_conv64.h. */
#include "ref/ref_conv64.h"

#include <math.h>

void ref_conv2d_nchw_f64(const ref_conv2d_params *p, const float *in, const float *w, const float *bias,
                         double *out) {
  int64_t OH = ref_conv2d_out_h(p), OW = ref_conv2d_out_w(p);
  for (int64_t n = 0; n < p->N; n++)
    for (int64_t k = 0; k < p->K; k++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          double acc = bias ? (double)bias[k] : 0.0;
          for (int64_t c = 0; c < p->C; c++)
            for (int64_t r = 0; r < p->R; r++) {
              int64_t y = oy * p->stride_h + r * p->dilation_h - p->pad_top;
              if (y < 0 || y >= p->H) continue;
              for (int64_t s = 0; s < p->S; s++) {
                int64_t x = ox * p->stride_w + s * p->dilation_w - p->pad_left;
                if (x < 0 || x >= p->W) continue;
                acc += (double)in[((n * p->C + c) * p->H + y) * p->W + x] *
                       (double)w[((k * p->C + c) * p->R + r) * p->S + s];
              }
            }
          out[((n * p->K + k) * OH + oy) * OW + ox] = acc;
        }
}

double ref_rms_rel_error_f64(const float *got, const double *want, int64_t n) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(got[i])) return INFINITY;
    double d = (double)got[i] - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}
