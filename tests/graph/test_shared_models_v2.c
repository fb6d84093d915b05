/* The classification CNNs of ../shared/models_v2 (MobileNetV3-Large, EfficientNet-B0,
 * RegNetY-400MF: squeeze-excitation, Swish / HardSwish, grouped convs), imported, compiled
 * with every graph pass and run by the graph executor, against ONNX Runtime's output on
 * the shared input: max abs error at most 1e-5 of the output's max magnitude and the same
 * top-5 (issue 15's bar). Skipped with a message where ../shared is absent. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/models_util.h"
#include "models/onnx.h"

static void check_v2(const char *model) {
  const char *dir = mt_shared_models_v2_dir(model);
  if (!dir) return;
  char path[4400];
  size_t n_in = 0, n_ref = 0;
  snprintf(path, sizeof path, "%s/input_1x3x224x224.f32", dir);
  float *x = mt_read_file(path, &n_in);
  snprintf(path, sizeof path, "%s/%s.ort.f32", dir, model);
  float *want = mt_read_file(path, &n_ref);
  tsl_graph *g = NULL;
  snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
  if (!x || !want) {
    printf("\n  [skip] %s: %s not found", model, dir);
  } else {
    CU_ASSERT_FATAL(n_in == 602112 && n_ref == 4000);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx(path, &g), TSL_OK);
    const float *ins[1] = {x};
    float *got[1] = {NULL};
    tsl_status st = gt_compile_run(g, NULL, ins, got, NULL, NULL);
    if (st != TSL_OK) printf("\n  %s: %s", model, tsl_last_error());
    CU_ASSERT_EQUAL(st, TSL_OK);
    if (got[0]) {
      double err = mt_max_abs_diff(got[0], want, 1000), scale = mt_max_abs(want, 1000);
      int top[5], top_ort[5];
      mt_top5(got[0], 1000, top);
      mt_top5(want, 1000, top_ort);
      printf("\n  %s: max abs err %.2e (%.2e of max %.3f)", model, err, err / scale, scale);
      CU_ASSERT(err <= 1e-5 * scale);
      for (int k = 0; k < 5; k++) CU_ASSERT_EQUAL(top[k], top_ort[k]);
    }
    free(got[0]);
  }
  tsl_graph_free(g);
  free(x);
  free(want);
}

static void test_v2_mobilenet_v3_large_matches_ort(void) { check_v2("mobilenet_v3_large"); }
static void test_v2_efficientnet_b0_matches_ort(void) { check_v2("efficientnet_b0"); }
static void test_v2_regnet_y_400mf_matches_ort(void) { check_v2("regnet_y_400mf"); }

void tsl_tests_graph_shared_models_v2(void) {
  CU_pSuite s = CU_add_suite("graph_shared_models_v2", NULL, NULL);
  CU_add_test(s, "v2_mobilenet_v3_large_matches_ort", test_v2_mobilenet_v3_large_matches_ort);
  CU_add_test(s, "v2_efficientnet_b0_matches_ort", test_v2_efficientnet_b0_matches_ort);
  CU_add_test(s, "v2_regnet_y_400mf_matches_ort", test_v2_regnet_y_400mf_matches_ort);
}
