/* Segmentation: LR-ASPP MobileNetV3-Large (../shared/models_v2, torchvision export, output
 * 1x21x224x224 upsampled with Resize) through the application API and through the
 * reference executor, each against ONNX Runtime's output on the shared input: max abs
 * error at most 1e-5 of the output's max magnitude, and at least 99.9% of the pixels
 * with the same argmax class. Skipped with a message where ../shared is absent. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/models_util.h"
#include "models/onnx.h"
#include "tessel/tessel.h"

enum { CLASSES = 21, PIXELS = 224 * 224 };

/* Fraction of the pixels whose argmax class over the CLASSES planes agrees. */
static double argmax_agreement(const float *a, const float *b) {
  int same = 0;
  for (int p = 0; p < PIXELS; p++) {
    int ca = 0, cb = 0;
    for (int c = 1; c < CLASSES; c++) {
      if (a[c * PIXELS + p] > a[ca * PIXELS + p]) ca = c;
      if (b[c * PIXELS + p] > b[cb * PIXELS + p]) cb = c;
    }
    same += ca == cb;
  }
  return (double)same / PIXELS;
}

static void report(const char *how, const float *got, const float *want) {
  double err = mt_max_abs_diff(got, want, CLASSES * PIXELS), scale = mt_max_abs(want, CLASSES * PIXELS);
  double agree = argmax_agreement(got, want);
  printf("\n  lraspp_mobilenet_v3_large, %s: max abs err %.2e (%.2e of max %.3f), argmax agreement %.6f", how, err,
         err / scale, scale, agree);
  CU_ASSERT(err <= 1e-5 * scale);
  CU_ASSERT(agree >= 0.999);
}

static void test_lraspp_matches_ort_through_the_api_and_the_reference(void) {
  const char *dir = mt_shared_models_v2_dir("lraspp_mobilenet_v3_large");
  if (!dir) return;
  char path[4400];
  size_t n_in = 0, n_ref = 0;
  snprintf(path, sizeof path, "%s/input_1x3x224x224.f32", dir);
  float *x = mt_read_file(path, &n_in);
  snprintf(path, sizeof path, "%s/lraspp_mobilenet_v3_large.ort.f32", dir);
  float *want = mt_read_file(path, &n_ref);
  if (!x || !want) {
    printf("\n  [skip] lraspp_mobilenet_v3_large: %s not found", dir);
    free(x);
    free(want);
    return;
  }
  CU_ASSERT_FATAL(n_in == 602112 && n_ref == (size_t)CLASSES * PIXELS * 4);
  snprintf(path, sizeof path, "%s/lraspp_mobilenet_v3_large.onnx", dir);
  /* the application API */
  tsl_model *m = NULL;
  tsl_compiled *c = NULL;
  tsl_context *ctx = NULL;
  float *got = malloc(n_ref);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  tsl_status st = tsl_model_load(path, &m);
  if (st == TSL_OK) st = tsl_model_compile(m, "host", NULL, &c);
  if (st == TSL_OK) st = tsl_context_new(c, &ctx);
  if (st == TSL_OK) st = tsl_context_set_input(ctx, 0, x, n_in);
  if (st == TSL_OK) st = tsl_context_run(ctx);
  if (st == TSL_OK) st = tsl_context_get_output(ctx, 0, got, n_ref);
  if (st != TSL_OK) printf("\n  lraspp_mobilenet_v3_large: %s", tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  if (st == TSL_OK) report("compiled (C API)", got, want);
  tsl_context_free(ctx);
  tsl_compiled_free(c);
  tsl_model_free(m);
  /* the reference executor on the imported graph */
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx(path, &g), TSL_OK);
  float *ref[1] = {NULL};
  const float *ins[1] = {x};
  CU_ASSERT_EQUAL(gt_reference_run(g, ins, ref), TSL_OK);
  if (ref[0]) report("reference executor", ref[0], want);
  free(ref[0]);
  tsl_graph_free(g);
  free(got);
  free(x);
  free(want);
}

void tsl_tests_graph_segmentation(void) {
  CU_pSuite s = CU_add_suite("graph_segmentation", NULL, NULL);
  CU_add_test(s, "lraspp_matches_ort_through_the_api_and_the_reference",
              test_lraspp_matches_ort_through_the_api_and_the_reference);
}
