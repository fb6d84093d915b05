/* classify: run an image classifier on a JPEG/PNG with tessel's C API.
 *
 *   classify IMAGE [MODEL] [--threads N] [--repeat N]
 *
 * MODEL is a built-in name (default squeezenet1_1) or an .onnx file taking a
 * 1x3x224x224 f32 input. The image is decoded with stb_image, its shorter side resized
 * to 256 and the center 224x224 cropped (torchvision's evaluation transform), scaled to
 * [0, 1] and normalized per channel with ImageNet's mean and std, then laid out NCHW.
 * Prints the top-5 class indices with their scores and the latency of one inference.
 * (The built-in models have seeded random weights: their classes mean nothing; pass a
 * trained ONNX model for real predictions.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stb_image.h"
#include "stb_image_resize.h"
#include "tessel/tessel.h"

enum { SIDE = 224, RESIZE = 256 };

static int fail(const char *what) {
  fprintf(stderr, "classify: %s: %s\n", what, tsl_last_error());
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Decodes, resizes, crops and normalizes `path` into x (3 x SIDE x SIDE, NCHW). */
static int load_image(const char *path, float *x) {
  int w, h, n;
  unsigned char *img = stbi_load(path, &w, &h, &n, 3);
  if (!img) {
    fprintf(stderr, "classify: cannot decode %s: %s\n", path, stbi_failure_reason());
    return 1;
  }
  int rw = w <= h ? RESIZE : (int)((long)w * RESIZE / h), rh = h <= w ? RESIZE : (int)((long)h * RESIZE / w);
  if (rw < SIDE) rw = SIDE;
  if (rh < SIDE) rh = SIDE;
  unsigned char *rs = malloc((size_t)rw * rh * 3);
  if (!rs || !stbir_resize_uint8(img, w, h, 0, rs, rw, rh, 0, 3)) {
    fprintf(stderr, "classify: cannot resize %s\n", path);
    free(rs);
    stbi_image_free(img);
    return 1;
  }
  static const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  int x0 = (rw - SIDE) / 2, y0 = (rh - SIDE) / 2;
  for (int c = 0; c < 3; c++)
    for (int y = 0; y < SIDE; y++)
      for (int xx = 0; xx < SIDE; xx++) {
        float v = rs[((size_t)(y0 + y) * rw + (x0 + xx)) * 3 + c] / 255.0f;
        x[((size_t)c * SIDE + y) * SIDE + xx] = (v - mean[c]) / std[c];
      }
  free(rs);
  stbi_image_free(img);
  return 0;
}

int main(int argc, char **argv) {
  const char *image = NULL, *model = "squeezenet1_1";
  int threads = 0, repeat = 10;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!image) image = argv[i];
    else model = argv[i];
  }
  if (!image || repeat < 1 || repeat > 10000 || threads < 0 || threads > TSL_MAX_THREADS) {
    fprintf(stderr, "usage: classify IMAGE [MODEL] [--threads N] [--repeat N]\n");
    return 2;
  }
  static float x[3 * SIDE * SIDE];
  if (load_image(image, x)) return 1;
  tsl_model *m;
  tsl_compiled *c;
  tsl_context *ctx;
  if (tsl_model_load(model, &m) != TSL_OK) return fail("load");
  tsl_compile_opts o = tsl_compile_opts_default();
  o.num_threads = threads; /* this model's runs: its own count (0: the process-wide one) */
  if (tsl_model_compile_with(m, &o, &c) != TSL_OK) return fail("compile");
  tsl_model_free(m);
  size_t in_bytes, out_bytes;
  if (tsl_compiled_input_info(c, 0, NULL, NULL, NULL, NULL, &in_bytes) != TSL_OK ||
      tsl_compiled_output_info(c, 0, NULL, NULL, NULL, NULL, &out_bytes) != TSL_OK)
    return fail("model");
  if (in_bytes != sizeof x) {
    fprintf(stderr, "classify: %s takes %zu input bytes, not a 1x3x224x224 image\n", model, in_bytes);
    return 1;
  }
  float *y = malloc(out_bytes);
  double *t = malloc((size_t)repeat * sizeof *t);
  if (!y || !t) return 1;
  if (tsl_context_new(c, &ctx) != TSL_OK || tsl_context_set_input(ctx, 0, x, sizeof x) != TSL_OK ||
      tsl_context_run(ctx) != TSL_OK)
    return fail("run");
  for (int r = 0; r < repeat; r++) {
    double t0 = tsl_time_now();
    if (tsl_context_run(ctx) != TSL_OK) return fail("run");
    t[r] = tsl_time_now() - t0;
  }
  if (tsl_context_get_output(ctx, 0, y, out_bytes) != TSL_OK) return fail("output");
  qsort(t, (size_t)repeat, sizeof *t, cmp_double);
  size_t n = out_bytes / sizeof(float);
  printf("%s on %s (%d threads): %.2f ms per image (median of %d)\n", model, image, tsl_context_num_threads(ctx),
         t[repeat / 2] * 1e3, repeat);
  int top[5] = {-1, -1, -1, -1, -1};
  for (int k = 0; k < 5 && (size_t)k < n; k++) {
    for (size_t i = 0; i < n; i++) {
      bool taken = false;
      for (int j = 0; j < k; j++) taken |= top[j] == (int)i;
      if (!taken && (top[k] < 0 || y[i] > y[top[k]])) top[k] = (int)i;
    }
    printf("  %d. class %d  score %.4f\n", k + 1, top[k], y[top[k]]);
  }
  free(y);
  free(t);
  tsl_context_free(ctx);
  tsl_compiled_free(c);
  return 0;
}
