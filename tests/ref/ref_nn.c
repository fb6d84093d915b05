/* Naive reference CNN operators (see ref_nn.h). The convolution loops run
 * n, m, ci, r, s, oy, ox so that the innermost loop walks an input row: still the
 * textbook sum, but cache-friendly enough to run ResNet-18 in a couple of seconds. */
#include "ref/ref_nn.h"

#include <math.h>
#include <stdlib.h>

int64_t ref_nn_window_out(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t stride,
                          int64_t dil, bool ceil_mode) {
  int64_t room = in + pad_begin + pad_end - (dil * (k - 1) + 1);
  if (room < 0) return 0;
  int64_t out = room / stride + 1;
  if (ceil_mode && room % stride != 0) {
    out++;
    if ((out - 1) * stride >= in + pad_begin) out--;
  }
  return out;
}

/* The outputs o in [0, n_out) whose input coordinate o*stride + offset is in [0, in). */
static void valid_range(int64_t offset, int64_t stride, int64_t in, int64_t n_out, int64_t *lo, int64_t *hi) {
  int64_t a = 0, b = n_out;
  while (a < b && a * stride + offset < 0) a++;
  while (b > a && (b - 1) * stride + offset >= in) b--;
  *lo = a;
  *hi = b;
}

void ref_nn_conv2d(const ref_nn_window *p, const float *x, const float *w, const float *bias, int64_t m,
                   int64_t group, float *y) {
  int64_t cg = p->c / group, mg = m / group, plane = p->oh * p->ow;
  double *acc = malloc((size_t)(plane ? plane : 1) * sizeof *acc);
  if (!acc) abort();
  for (int64_t n = 0; n < p->n; n++) {
    for (int64_t k = 0; k < m; k++) {
      int64_t g = k / mg;
      for (int64_t i = 0; i < plane; i++) acc[i] = bias ? bias[k] : 0.0;
      for (int64_t ci = 0; ci < cg; ci++) {
        const float *xc = x + ((n * p->c) + g * cg + ci) * p->h * p->w;
        for (int64_t r = 0; r < p->kh; r++) {
          int64_t y_lo, y_hi;
          valid_range(r * p->dil_h - p->pad_t, p->stride_h, p->h, p->oh, &y_lo, &y_hi);
          for (int64_t s = 0; s < p->kw; s++) {
            double wv = w[((k * cg + ci) * p->kh + r) * p->kw + s];
            int64_t x_lo, x_hi, x_off = s * p->dil_w - p->pad_l;
            valid_range(x_off, p->stride_w, p->w, p->ow, &x_lo, &x_hi);
            for (int64_t oy = y_lo; oy < y_hi; oy++) {
              const float *row = xc + (oy * p->stride_h + r * p->dil_h - p->pad_t) * p->w;
              double *arow = acc + oy * p->ow;
              for (int64_t ox = x_lo; ox < x_hi; ox++) arow[ox] += wv * row[ox * p->stride_w + x_off];
            }
          }
        }
      }
      float *yk = y + (n * m + k) * plane;
      for (int64_t i = 0; i < plane; i++) yk[i] = (float)acc[i];
    }
  }
  free(acc);
}

void ref_nn_maxpool2d(const ref_nn_window *p, const float *x, float *y) {
  for (int64_t nc = 0; nc < p->n * p->c; nc++) {
    const float *xp = x + nc * p->h * p->w;
    for (int64_t oy = 0; oy < p->oh; oy++) {
      for (int64_t ox = 0; ox < p->ow; ox++) {
        float best = -INFINITY;
        bool nan = false;
        for (int64_t r = 0; r < p->kh; r++) {
          int64_t iy = oy * p->stride_h - p->pad_t + r * p->dil_h;
          if (iy < 0 || iy >= p->h) continue;
          for (int64_t s = 0; s < p->kw; s++) {
            int64_t ix = ox * p->stride_w - p->pad_l + s * p->dil_w;
            if (ix < 0 || ix >= p->w) continue;
            float v = xp[iy * p->w + ix];
            if (isnan(v)) nan = true;
            else if (v > best) best = v;
          }
        }
        y[(nc * p->oh + oy) * p->ow + ox] = nan ? NAN : best;
      }
    }
  }
}

void ref_nn_avgpool2d(const ref_nn_window *p, const float *x, bool count_include_pad, float *y) {
  for (int64_t nc = 0; nc < p->n * p->c; nc++) {
    const float *xp = x + nc * p->h * p->w;
    for (int64_t oy = 0; oy < p->oh; oy++) {
      for (int64_t ox = 0; ox < p->ow; ox++) {
        double sum = 0;
        int64_t count = 0;
        for (int64_t r = 0; r < p->kh; r++) {
          int64_t iy = oy * p->stride_h - p->pad_t + r;
          bool in_y = iy >= 0 && iy < p->h, padded_y = iy >= -p->pad_t && iy < p->h + p->pad_b;
          for (int64_t s = 0; s < p->kw; s++) {
            int64_t ix = ox * p->stride_w - p->pad_l + s;
            bool in_x = ix >= 0 && ix < p->w, padded_x = ix >= -p->pad_l && ix < p->w + p->pad_r;
            if (in_y && in_x) {
              sum += xp[iy * p->w + ix];
              count++;
            } else if (count_include_pad && padded_y && padded_x) {
              count++;
            }
          }
        }
        y[(nc * p->oh + oy) * p->ow + ox] = count ? (float)(sum / (double)count) : 0.0f;
      }
    }
  }
}

void ref_nn_mean_inner(const float *x, int64_t outer, int64_t inner, float *y) {
  for (int64_t o = 0; o < outer; o++) {
    double s = 0;
    for (int64_t i = 0; i < inner; i++) s += x[o * inner + i];
    y[o] = (float)(s / (double)inner);
  }
}

void ref_nn_batchnorm(const float *x, int64_t n, int64_t c, int64_t inner, const float *scale, const float *b,
                      const float *mean, const float *var, double eps, float *y) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < c; k++) {
      double sd = sqrt((double)var[k] + eps);
      for (int64_t j = 0; j < inner; j++) {
        int64_t at = (i * c + k) * inner + j;
        y[at] = (float)(((double)x[at] - mean[k]) / sd * scale[k] + b[k]);
      }
    }
}

void ref_nn_gemm(const float *a, const float *b, const float *c, int c_ndim, const int64_t *c_shape, int64_t M,
                 int64_t N, int64_t K, bool trans_a, bool trans_b, double alpha, double beta, float *y) {
  for (int64_t i = 0; i < M; i++) {
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) {
        double av = trans_a ? a[k * M + i] : a[i * K + k];
        double bv = trans_b ? b[j * K + k] : b[k * N + j];
        s += av * bv;
      }
      s *= alpha;
      if (c) {
        /* Broadcast C: a missing leading axis or an extent of 1 repeats. */
        int64_t ci = 0;
        if (c_ndim == 2) ci = (c_shape[0] == 1 ? 0 : i) * c_shape[1] + (c_shape[1] == 1 ? 0 : j);
        else if (c_ndim == 1) ci = c_shape[0] == 1 ? 0 : j;
        s += beta * c[ci];
      }
      y[i * N + j] = (float)s;
    }
  }
}

void ref_nn_matmul2d(const float *a, const float *b, int64_t M, int64_t N, int64_t K, float *y) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double s = 0;
      for (int64_t k = 0; k < K; k++) s += (double)a[i * K + k] * b[k * N + j];
      y[i * N + j] = (float)s;
    }
}

void ref_nn_softmax(const float *x, int64_t outer, int64_t n, int64_t inner, float *y) {
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const float *xs = x + o * n * inner + i;
      float *ys = y + o * n * inner + i;
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < n; k++) mx = xs[k * inner] > mx ? xs[k * inner] : mx;
      for (int64_t k = 0; k < n; k++) sum += exp((double)xs[k * inner] - mx);
      for (int64_t k = 0; k < n; k++) ys[k * inner] = (float)(exp((double)xs[k * inner] - mx) / sum);
    }
}
