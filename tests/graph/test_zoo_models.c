/* The zoo models (batch norms kept as nodes, so the folding and fusion passes have
 * work to do), compiled and run, match the naive reference executor on the original
 * graph. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/models_util.h"
#include "models/zoo.h"
#include "tessel/runtime.h"

static void check_zoo(const char *model) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build(model, 7, &g), TSL_OK);
  int64_t n_in = gt_numel(g, g->inputs[0]), n_out = gt_numel(g, g->outputs[0]);
  tsl_tensor *x;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n_in, &x), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(x, 3, -2.0, 2.0), TSL_OK);
  const float *ins[1] = {x->data};
  float *got[1] = {NULL}, *want[1] = {NULL};
  tsl_compile_stats stats;
  int transforms = -1;
  tsl_status st = gt_compile_run(g, NULL, ins, got, &stats, &transforms);
  if (st != TSL_OK) printf("\n  %s: %s", model, tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  CU_ASSERT_EQUAL(gt_reference_run(g, ins, want), TSL_OK);
  if (got[0] && want[0]) {
    double err = gt_rel_err(got[0], want[0], n_out);
    int top[5], top_ref[5];
    mt_top5(got[0], n_out, top);
    mt_top5(want[0], n_out, top_ref);
    printf("\n  zoo %s: %d -> %d nodes (%d batch norms folded, %d fused), %d kernels, rel err %.2e", model,
           stats.nodes_before, stats.nodes_after, stats.batch_norms_folded, stats.nodes_fused, stats.kernels, err);
    CU_ASSERT(err < 1e-3);
    for (int k = 0; k < 5; k++) CU_ASSERT_EQUAL(top[k], top_ref[k]);
    CU_ASSERT_EQUAL(stats.batch_norms_folded, tsl_graph_count_op(g, TSL_OP_BATCH_NORM));
    /* the stem conv reads the plain input: no transform first; ShuffleNet's global mean
     * reads the blocked layout directly: no transform back */
    CU_ASSERT_EQUAL(transforms, (strncmp(model, "shufflenet", 10) == 0 ? 0 : 1) + stats.phase_convs);
  }
  free(got[0]);
  free(want[0]);
  tsl_tensor_free(x);
  tsl_graph_free(g);
}

static void test_zoo_squeezenet1_1_compiled_matches_reference(void) { check_zoo("squeezenet1_1"); }
static void test_zoo_resnet18_compiled_matches_reference(void) { check_zoo("resnet18"); }
static void test_zoo_mobilenet_v2_compiled_matches_reference(void) { check_zoo("mobilenet_v2"); }
static void test_zoo_shufflenet_v2_x1_0_compiled_matches_reference(void) { check_zoo("shufflenet_v2_x1_0"); }

void tsl_tests_graph_zoo_models(void) {
  CU_pSuite s = CU_add_suite("graph_zoo_models", NULL, NULL);
  CU_add_test(s, "zoo_squeezenet1_1_compiled_matches_reference", test_zoo_squeezenet1_1_compiled_matches_reference);
  CU_add_test(s, "zoo_resnet18_compiled_matches_reference", test_zoo_resnet18_compiled_matches_reference);
  CU_add_test(s, "zoo_mobilenet_v2_compiled_matches_reference", test_zoo_mobilenet_v2_compiled_matches_reference);
  CU_add_test(s, "zoo_shufflenet_v2_x1_0_compiled_matches_reference",
              test_zoo_shufflenet_v2_x1_0_compiled_matches_reference);
}
