/* Whole models: every torchvision export in ../shared/models, imported, compiled with
 * the graph passes and run by the graph executor, matches ONNX Runtime's output on the
 * shared input (max abs error below 1e-3 of the output's max magnitude, identical
 * top-5). Skipped with a message where ../shared is absent. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/models_util.h"
#include "models/onnx.h"
#include "tessel/runtime.h"

static void check_shared(const char *model) {
  const char *dir = mt_shared_models_dir(model);
  if (!dir) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx(path, &g), TSL_OK);
  size_t n_in = 0, n_ref = 0;
  snprintf(path, sizeof path, "%s/input_1x3x224x224.f32", dir);
  float *x = mt_read_file(path, &n_in);
  snprintf(path, sizeof path, "%s/%s.ort.f32", dir, model);
  float *want = mt_read_file(path, &n_ref);
  CU_ASSERT_FATAL(x && want && n_in == 602112 && n_ref == 4000);
  const float *ins[1] = {x};
  float *got[1] = {NULL};
  tsl_compile_stats stats;
  int transforms = -1;
  double t0 = tsl_time_now();
  tsl_status st = gt_compile_run(g, NULL, ins, got, &stats, &transforms);
  double t = tsl_time_now() - t0;
  if (st != TSL_OK) printf("\n  %s: %s", model, tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  if (got[0]) {
    double err = mt_max_abs_diff(got[0], want, 1000), scale = mt_max_abs(want, 1000);
    int top[5], top_ort[5];
    mt_top5(got[0], 1000, top);
    mt_top5(want, 1000, top_ort);
    printf("\n  %s: %d -> %d nodes, %d steps, %d kernels, compile %.2f s (kernels %.2f s), compile+run %.2f s, "
           "peak activations %.2f MiB (unplanned %.2f MiB), %d layout transform steps, max abs err %.2e of max %.3f",
           model, stats.nodes_before, stats.nodes_after, stats.steps, stats.kernels, stats.total_seconds,
           stats.build_seconds, t, stats.planned_peak_bytes / 1048576.0, stats.activation_bytes / 1048576.0,
           transforms, err / scale, scale);
    CU_ASSERT(err < 1e-3 * scale);
    for (int k = 0; k < 5; k++) CU_ASSERT_EQUAL(top[k], top_ort[k]);
    /* buffers are shared: the arena is well below the sum of all activations */
    CU_ASSERT(stats.planned_peak_bytes < stats.activation_bytes / 2);
    /* NCHW[x]c from the stem conv (which reads the plain input) to the classifier:
     * transforms only at the end; ShuffleNet's global mean reads the blocked layout
     * directly: no transform back */
    /* directly, and one more for a stem conv rewritten over its input's phases (its
     * SpaceToDepth's output into the blocked layout, passes/phase_conv.h) */
    CU_ASSERT_EQUAL(transforms, (strncmp(model, "shufflenet", 10) == 0 ? 0 : 1) + stats.phase_convs);
    /* identical layers share a kernel */
    CU_ASSERT(stats.kernels < stats.steps);
  }
  free(got[0]);
  free(x);
  free(want);
  tsl_graph_free(g);
}

static void test_shared_squeezenet1_0_compiled_matches_ort(void) { check_shared("squeezenet1_0"); }
static void test_shared_squeezenet1_1_compiled_matches_ort(void) { check_shared("squeezenet1_1"); }
static void test_shared_resnet18_compiled_matches_ort(void) { check_shared("resnet18"); }
static void test_shared_mobilenet_v2_compiled_matches_ort(void) { check_shared("mobilenet_v2"); }
static void test_shared_shufflenet_v2_x1_0_compiled_matches_ort(void) { check_shared("shufflenet_v2_x1_0"); }

void tsl_tests_graph_shared_models(void) {
  CU_pSuite s = CU_add_suite("graph_shared_models", NULL, NULL);
  CU_add_test(s, "shared_squeezenet1_0_compiled_matches_ort", test_shared_squeezenet1_0_compiled_matches_ort);
  CU_add_test(s, "shared_squeezenet1_1_compiled_matches_ort", test_shared_squeezenet1_1_compiled_matches_ort);
  CU_add_test(s, "shared_resnet18_compiled_matches_ort", test_shared_resnet18_compiled_matches_ort);
  CU_add_test(s, "shared_mobilenet_v2_compiled_matches_ort", test_shared_mobilenet_v2_compiled_matches_ort);
  CU_add_test(s, "shared_shufflenet_v2_x1_0_compiled_matches_ort", test_shared_shufflenet_v2_x1_0_compiled_matches_ort);
}
