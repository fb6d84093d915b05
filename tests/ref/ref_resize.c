/* Reference Resize and Pad modes (ref_resize.h), in double, element by element. */
#include "ref/ref_resize.h"

#include <math.h>
#include <string.h>

/* x_original of output index x on one axis (ONNX Resize-19's formulas; length_resized
 * is in * scale as in the reference implementation, not the rounded output extent). */
static double original(const char *coord, double x, double scale, int64_t in, int64_t out) {
  double len = scale * (double)in;
  if (strcmp(coord, "half_pixel") == 0) return (x + 0.5) / scale - 0.5;
  if (strcmp(coord, "pytorch_half_pixel") == 0) return len > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (strcmp(coord, "align_corners") == 0) return len == 1.0 ? 0.0 : x * (double)(in - 1) / (len - 1.0);
  if (strcmp(coord, "asymmetric") == 0) return x / scale;
  if (strcmp(coord, "tf_half_pixel_for_nn") == 0) return (x + 0.5) / scale;
  if (strcmp(coord, "half_pixel_symmetric") == 0) {
    double adjustment = (double)out / len, center = (double)in / 2.0;
    return center * (1.0 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return NAN;
}

static int64_t clamp(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* The nearest input index of coordinate v. */
static int64_t nearest_index(const char *mode, double v, double scale, int64_t in) {
  double f = floor(v), frac = v - f;
  int64_t i;
  if (frac == 0.0) i = (int64_t)f;
  else if (strcmp(mode, "round_prefer_floor") == 0) i = (int64_t)(frac <= 0.5 ? f : f + 1);
  else if (strcmp(mode, "round_prefer_ceil") == 0) i = (int64_t)(frac < 0.5 ? f : f + 1);
  else if (strcmp(mode, "floor") == 0) i = (int64_t)f;
  else if (strcmp(mode, "ceil") == 0) i = (int64_t)f + 1;
  else i = (int64_t)(scale < 1.0 ? f + 1 : f); /* simple */
  return clamp(i, in);
}

static bool known(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return true;
  return false;
}

bool ref_resize(const float *x, int r, const int64_t *in, const int64_t *out, const double *scales,
                const char *mode, const char *coord, const char *nearest, float *y) {
  static const char *const coords[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",
                                       "asymmetric",           "tf_half_pixel_for_nn", "half_pixel_symmetric",
                                       NULL};
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple", NULL};
  bool linear = strcmp(mode, "linear") == 0;
  if ((!linear && strcmp(mode, "nearest") != 0) || !known(coord, coords) || !known(nearest, nearests) || r > 8)
    return false;
  int64_t total = 1;
  for (int d = 0; d < r; d++) total *= out[d];
  for (int64_t i = 0; i < total; i++) {
    int64_t idx[8], rest = i;
    for (int d = r - 1; d >= 0; d--) {
      idx[d] = rest % out[d];
      rest /= out[d];
    }
    /* per axis: the two neighbours and the weight of the second (nearest: one index) */
    int64_t lo[8], hi[8];
    double w[8];
    for (int d = 0; d < r; d++) {
      double v = original(coord, (double)idx[d], scales[d], in[d], out[d]);
      if (!linear) {
        lo[d] = hi[d] = nearest_index(nearest, v, scales[d], in[d]);
        w[d] = 0.0;
        continue;
      }
      double f = floor(v);
      w[d] = v - f;
      lo[d] = clamp((int64_t)f, in[d]);
      hi[d] = clamp((int64_t)f + 1, in[d]);
    }
    /* the sum over the 2^r corners, each the product of its axes' weights */
    double acc = 0.0;
    for (int corner = 0; corner < (1 << r); corner++) {
      double weight = 1.0;
      int64_t off = 0;
      for (int d = 0; d < r; d++) {
        bool up = (corner >> d) & 1;
        weight *= up ? w[d] : 1.0 - w[d];
        off = off * in[d] + (up ? hi[d] : lo[d]);
      }
      if (weight != 0.0) acc += weight * x[off];
    }
    y[i] = (float)acc;
  }
  return true;
}

/* The input index of padded position p (a position of the kept part, maybe outside it)
 * on an axis of m kept elements: numpy.pad's modes, by repeated reflection for reflect. */
static int64_t pad_source(const char *mode, int64_t p, int64_t m) {
  if (strcmp(mode, "edge") == 0) return p < 0 ? 0 : p >= m ? m - 1 : p;
  if (strcmp(mode, "wrap") == 0) return ((p % m) + m) % m;
  if (m == 1) return 0;
  while (p < 0 || p >= m) p = p < 0 ? -p : 2 * (m - 1) - p;
  return p;
}

bool ref_pad_mode(const float *x, int r, const int64_t *in, const int64_t *pads, const char *mode, float *y) {
  if ((strcmp(mode, "reflect") != 0 && strcmp(mode, "edge") != 0 && strcmp(mode, "wrap") != 0) || r > 8) return false;
  int64_t out[8], first[8], kept[8], begin[8], total = 1;
  for (int d = 0; d < r; d++) {
    int64_t b = pads[d], e = pads[d + r];
    first[d] = b < 0 ? -b : 0; /* the crop: [first, first + kept) of the input */
    kept[d] = in[d] - first[d] - (e < 0 ? -e : 0);
    begin[d] = b > 0 ? b : 0;
    out[d] = kept[d] + begin[d] + (e > 0 ? e : 0);
    if (kept[d] < 1 && out[d] > 0) return false;
    total *= out[d];
  }
  for (int64_t i = 0; i < total; i++) {
    int64_t rest = i, off = 0, idx[8];
    for (int d = r - 1; d >= 0; d--) {
      idx[d] = rest % out[d];
      rest /= out[d];
    }
    for (int d = 0; d < r; d++) off = off * in[d] + first[d] + pad_source(mode, idx[d] - begin[d], kept[d]);
    y[i] = x[off];
  }
  return true;
}
