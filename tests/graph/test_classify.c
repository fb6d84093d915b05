/* examples/classify as a user runs it: on a small PNG and JPEG written here with
 * stb_image_write, its top-5 classes and scores equal those of the naive reference
 * executor (tests/ref/ref_graph.c) run on the same model with the image preprocessed
 * here (torchvision's evaluation transform: shorter side to 256, center 224x224 crop,
 * ImageNet mean/std), not the library's own output. Skipped where classify is not built
 * (no libstb-dev). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_tests.h"
#include "models/graph.h"
#include "models/zoo.h"
#include "ref/ref_graph.h"

#ifdef TSL_CLASSIFY_PATH
#include "stb_image.h"
#include "stb_image_resize.h"
#include "stb_image_write.h"

enum { SIDE = 224, SHORT = 256, IMG_W = 300, IMG_H = 240 };

/* A deterministic picture: color gradients, a disc and stripes. */
static unsigned char *make_picture(void) {
  unsigned char *p = malloc((size_t)IMG_W * IMG_H * 3);
  if (!p) return NULL;
  for (int y = 0; y < IMG_H; y++)
    for (int x = 0; x < IMG_W; x++) {
      unsigned char *px = p + ((size_t)y * IMG_W + x) * 3;
      int dx = x - 170, dy = y - 110;
      bool disc = dx * dx + dy * dy < 60 * 60;
      px[0] = (unsigned char)(disc ? 230 : (x * 255) / IMG_W);
      px[1] = (unsigned char)(disc ? 40 : (y * 255) / IMG_H);
      px[2] = (unsigned char)(((x / 12) % 2) ? 200 : 30);
    }
  return p;
}

/* The evaluation transform of torchvision on `path`, into x[3][SIDE][SIDE]. */
static bool preprocess(const char *path, float *x) {
  int w, h, n;
  unsigned char *img = stbi_load(path, &w, &h, &n, 3);
  if (!img) return false;
  int rw = w <= h ? SHORT : (int)((long)w * SHORT / h), rh = h <= w ? SHORT : (int)((long)h * SHORT / w);
  unsigned char *rs = malloc((size_t)rw * rh * 3);
  bool ok = rs && stbir_resize_uint8(img, w, h, 0, rs, rw, rh, 0, 3);
  static const double mean[3] = {0.485, 0.456, 0.406}, sd[3] = {0.229, 0.224, 0.225};
  int ox = (rw - SIDE) / 2, oy = (rh - SIDE) / 2;
  for (int c = 0; ok && c < 3; c++)
    for (int y = 0; y < SIDE; y++)
      for (int xx = 0; xx < SIDE; xx++)
        x[((size_t)c * SIDE + y) * SIDE + xx] =
            (float)((rs[((size_t)(oy + y) * rw + ox + xx) * 3 + c] / 255.0 - mean[c]) / sd[c]);
  free(rs);
  stbi_image_free(img);
  return ok;
}

/* classify's "  K. class C  score S" lines. Returns how many were read. */
static int run_classify(const char *image, int cls[5], double score[5]) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s squeezenet1_1 --repeat 1 --threads 1 2>&1", TSL_CLASSIFY_PATH, image);
  FILE *p = popen(cmd, "r");
  if (!p) return 0;
  char line[512];
  int n = 0;
  while (fgets(line, sizeof line, p)) {
    int k, c;
    double s;
    if (sscanf(line, " %d. class %d score %lf", &k, &c, &s) == 3 && k == n + 1 && n < 5) {
      cls[n] = c;
      score[n++] = s;
    } else if (!strstr(line, "ms per image")) {
      printf("\n  classify: %s", line);
    }
  }
  int rc = pclose(p);
  return rc == 0 ? n : 0;
}

static void check_image(const char *path, tsl_graph *g) {
  int cls[5];
  double score[5];
  int n = run_classify(path, cls, score);
  CU_ASSERT_EQUAL(n, 5);
  if (n != 5) return;
  tsl_tensor *x = NULL, *y = NULL;
  int64_t shape[4] = {1, 3, SIDE, SIDE};
  bool ok = tsl_tensor_new(TSL_DTYPE_F32, 4, shape, &x) == TSL_OK && preprocess(path, x->data) &&
            ref_graph_run(g, &x, 1, &y, 1) == TSL_OK;
  CU_ASSERT(ok);
  if (!ok) {
    tsl_tensor_free(x);
    tsl_tensor_free(y);
    return;
  }
  const float *out = y->data;
  int64_t m = tsl_tensor_numel(y);
  double big = 0;
  for (int64_t i = 0; i < m; i++) big = fmax(big, fabs(out[i]));
  for (int k = 0; k < 5; k++) {
    CU_ASSERT(cls[k] >= 0 && cls[k] < m);
    if (cls[k] < 0 || cls[k] >= m) break;
    /* the reference's score of the class classify ranked k-th, and the k-th largest */
    int64_t better = 0;
    for (int64_t i = 0; i < m; i++) better += out[i] > out[cls[k]] + 1e-4 * big;
    if (better > k) printf("\n  %s: rank %d: class %d (reference score %.5g) is not the reference's", path, k + 1, cls[k],
                           out[cls[k]]);
    CU_ASSERT(better <= k);
    CU_ASSERT(fabs(score[k] - out[cls[k]]) <= 1e-3 * big + 1e-4);
  }
  tsl_tensor_free(x);
  tsl_tensor_free(y);
}

static void test_classify_png_and_jpeg_top5_match_the_reference_executor(void) {
  unsigned char *pic = make_picture();
  CU_ASSERT_FATAL(pic != NULL);
  char png[256], jpg[256];
  snprintf(png, sizeof png, "/tmp/tessel_classify_%d.png", (int)getpid());
  snprintf(jpg, sizeof jpg, "/tmp/tessel_classify_%d.jpg", (int)getpid());
  CU_ASSERT_FATAL(stbi_write_png(png, IMG_W, IMG_H, 3, pic, IMG_W * 3) != 0);
  CU_ASSERT_FATAL(stbi_write_jpg(jpg, IMG_W, IMG_H, 3, pic, 90) != 0);
  free(pic);
  /* the C API's zoo models are built with seed 1 (models/api.c) */
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("squeezenet1_1", 1, &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  check_image(png, g);
  check_image(jpg, g);
  tsl_graph_free(g);
  unlink(png);
  unlink(jpg);
}
#else
static void test_classify_png_and_jpeg_top5_match_the_reference_executor(void) {
  printf("\n  skipped: examples/classify is not built (libstb-dev missing)");
}
#endif

void tsl_tests_graph_classify(void) {
  CU_pSuite s = CU_add_suite("graph_classify", NULL, NULL);
  CU_add_test(s, "classify_png_and_jpeg_top5_match_the_reference_executor",
              test_classify_png_and_jpeg_top5_match_the_reference_executor);
}
