/* Naive references for the operator-library tests (ref_ops2.h). Deliberately plain. */
#include "ref/ref_ops2.h"

#include <math.h>
#include <string.h>

int64_t ref2_conv_oh(const ref2_conv *c) { return (c->H + c->pt + c->pb - c->dh * (c->R - 1) - 1) / c->sh + 1; }
int64_t ref2_conv_ow(const ref2_conv *c) { return (c->W + c->pl + c->pr - c->dw * (c->S - 1) - 1) / c->sw + 1; }

static double activate(int act, double v, double lo, double hi) {
  if (act == 1) return isnan(v) ? v : (v > 0.0 ? v : 0.0);
  if (act == 2) {
    if (isnan(v)) return v;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
  }
  return v;
}

double ref2_conv_point(const ref2_conv *c, const float *in, const float *w, const float *bias, const float *residual,
                       int64_t n, int64_t k, int64_t y, int64_t x) {
  int64_t cg = c->C / c->groups, kg = c->K / c->groups, g = k / kg;
  double acc = 0.0;
  for (int64_t ci = 0; ci < cg; ci++) {
    int64_t ch = g * cg + ci;
    for (int64_t r = 0; r < c->R; r++) {
      int64_t iy = y * c->sh - c->pt + r * c->dh;
      if (iy < 0 || iy >= c->H) continue;
      for (int64_t s = 0; s < c->S; s++) {
        int64_t ix = x * c->sw - c->pl + s * c->dw;
        if (ix < 0 || ix >= c->W) continue;
        acc += (double)in[((n * c->C + ch) * c->H + iy) * c->W + ix] * (double)w[((k * cg + ci) * c->R + r) * c->S + s];
      }
    }
  }
  if (bias) acc += bias[k];
  if (residual) acc += residual[((n * c->K + k) * ref2_conv_oh(c) + y) * ref2_conv_ow(c) + x];
  return activate(c->act, acc, c->lo, c->hi);
}

void ref2_to_nchwc(const float *in, int64_t N, int64_t C, int64_t H, int64_t W, int64_t x, float fill, float *out) {
  int64_t CB = (C + x - 1) / x;
  for (int64_t n = 0; n < N; n++)
    for (int64_t cb = 0; cb < CB; cb++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++)
          for (int64_t l = 0; l < x; l++) {
            int64_t ch = cb * x + l;
            out[(((n * CB + cb) * H + h) * W + w) * x + l] = ch < C ? in[((n * C + ch) * H + h) * W + w] : fill;
          }
}

void ref2_from_nchwc(const float *in, int64_t N, int64_t C, int64_t H, int64_t W, int64_t x, float *out) {
  int64_t CB = (C + x - 1) / x;
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t w = 0; w < W; w++)
          out[((n * C + ch) * H + h) * W + w] = in[(((n * CB + ch / x) * H + h) * W + w) * x + ch % x];
}

void ref2_weight_nchwc(const float *w, int64_t K, int64_t C, int64_t R, int64_t S, int64_t x, int64_t y, float *out) {
  int64_t KB = (K + y - 1) / y, CB = (C + x - 1) / x;
  for (int64_t kb = 0; kb < KB; kb++)
    for (int64_t cb = 0; cb < CB; cb++)
      for (int64_t r = 0; r < R; r++)
        for (int64_t s = 0; s < S; s++)
          for (int64_t ci = 0; ci < x; ci++)
            for (int64_t ko = 0; ko < y; ko++) {
              int64_t k = kb * y + ko, c = cb * x + ci;
              out[(((((kb * CB + cb) * R + r) * S + s) * x + ci) * y) + ko] =
                  k < K && c < C ? w[((k * C + c) * R + r) * S + s] : 0.0f;
            }
}

void ref2_weight_oblocked(const float *w, int64_t K, int64_t CG, int64_t R, int64_t S, int64_t y, float *out) {
  int64_t KB = (K + y - 1) / y;
  for (int64_t kb = 0; kb < KB; kb++)
    for (int64_t c = 0; c < CG; c++)
      for (int64_t r = 0; r < R; r++)
        for (int64_t s = 0; s < S; s++)
          for (int64_t ko = 0; ko < y; ko++) {
            int64_t k = kb * y + ko;
            out[((((kb * CG + c) * R + r) * S + s) * y) + ko] = k < K ? w[((k * CG + c) * R + r) * S + s] : 0.0f;
          }
}

void ref2_weight_blockdiag(const float *w, int64_t K, int64_t C, int64_t groups, int64_t R, int64_t S, int64_t x,
                           int64_t band, float *out) {
  int64_t KB = (K + x - 1) / x, CB = (C + x - 1) / x, cg = C / groups, kg = K / groups;
  for (int64_t kb = 0; kb < KB; kb++) {
    int64_t first_group = kb * x / kg, start = first_group * cg / x;
    if (start > CB - band) start = CB - band;
    for (int64_t cb = 0; cb < band; cb++)
      for (int64_t r = 0; r < R; r++)
        for (int64_t s = 0; s < S; s++)
          for (int64_t ci = 0; ci < x; ci++)
            for (int64_t ko = 0; ko < x; ko++) {
              int64_t k = kb * x + ko, c = (start + cb) * x + ci;
              float v = 0.0f;
              if (k < K) {
                int64_t g = k / kg;
                if (c >= g * cg && c < (g + 1) * cg) v = w[((k * cg + (c - g * cg)) * R + r) * S + s];
              }
              out[(((((kb * band + cb) * R + r) * S + s) * x + ci) * x) + ko] = v;
            }
  }
}

void ref2_weight_depthwise(const float *w, int64_t C, int64_t R, int64_t S, int64_t x, float *out) {
  int64_t CB = (C + x - 1) / x;
  for (int64_t cb = 0; cb < CB; cb++)
    for (int64_t r = 0; r < R; r++)
      for (int64_t s = 0; s < S; s++)
        for (int64_t l = 0; l < x; l++) {
          int64_t c = cb * x + l;
          out[(((cb * R + r) * S + s) * x) + l] = c < C ? w[(c * R + r) * S + s] : 0.0f;
        }
}

void ref2_vector_blocks(const float *v, int64_t C, int64_t x, float *out) {
  int64_t CB = (C + x - 1) / x;
  for (int64_t i = 0; i < CB * x; i++) out[i] = i < C ? v[i] : 0.0f;
}

void ref2_broadcast(const float *a, const int64_t ash[5], const float *b, const int64_t bsh[5], char op, int act,
                    double lo, double hi, float *out) {
  int64_t osh[5];
  for (int d = 0; d < 5; d++) osh[d] = ash[d] > bsh[d] ? ash[d] : bsh[d];
  int64_t idx[5];
  int64_t total = osh[0] * osh[1] * osh[2] * osh[3] * osh[4];
  for (int64_t e = 0; e < total; e++) {
    int64_t rem = e;
    for (int d = 4; d >= 0; d--) {
      idx[d] = rem % osh[d];
      rem /= osh[d];
    }
    int64_t ai = 0, bi = 0;
    for (int d = 0; d < 5; d++) {
      ai = ai * ash[d] + (ash[d] == 1 ? 0 : idx[d]);
      bi = bi * bsh[d] + (bsh[d] == 1 ? 0 : idx[d]);
    }
    double v = op == '+' ? (double)a[ai] + (double)b[bi] : (double)a[ai] * (double)b[bi];
    out[e] = (float)activate(act, v, lo, hi);
  }
}

void ref2_concat(const float *a, int64_t CA, const float *b, int64_t CBB, int64_t N, int64_t H, int64_t W, float *out) {
  int64_t plane = H * W, C = CA + CBB;
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < plane; i++)
        out[(n * C + c) * plane + i] = c < CA ? a[(n * CA + c) * plane + i] : b[(n * CBB + c - CA) * plane + i];
}

void ref2_channel_shuffle(const float *x, int64_t N, int64_t C, int64_t H, int64_t W, int64_t groups, float *out) {
  int64_t plane = H * W, per = C / groups;
  for (int64_t n = 0; n < N; n++)
    for (int64_t i = 0; i < groups; i++)
      for (int64_t j = 0; j < per; j++)
        memcpy(&out[(n * C + j * groups + i) * plane], &x[(n * C + i * per + j) * plane], sizeof(float) * (size_t)plane);
}

void ref2_dense(const float *x, const float *w, const float *bias, int64_t B, int64_t K, int64_t O, int act,
                float *out) {
  for (int64_t b = 0; b < B; b++)
    for (int64_t o = 0; o < O; o++) {
      double acc = bias ? bias[o] : 0.0;
      for (int64_t k = 0; k < K; k++) acc += (double)x[b * K + k] * (double)w[o * K + k];
      out[b * O + o] = (float)activate(act, acc, 0.0, 6.0);
    }
}

void ref2_fill(float *x, int64_t n, uint64_t seed, float lo, float hi) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x[i] = lo + (hi - lo) * (float)((double)(z >> 11) * 0x1p-53);
  }
}
