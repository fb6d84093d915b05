/* Broadcasting Add / Mul / Div in the blocked layout NCHW[x]c (the ops/nn elemwise generator):
 * the squeeze-excitation scale [N, C, 1, 1] times the activations, a one-channel map
 * [N, 1, H, W] added to every channel (padding lanes guarded), and a division by a
 * per-channel value, a channel map subtracted, same-shape Sub, with C = lanes + 3 (a partial last block at 8 and 16 lanes) and
 * N = 2; then a conv reads the result, so a non-zero padding lane would show. Against
 * the reference executor; all of it runs blocked (two layout transforms: in and out). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "target/target.h"

static int binary(tsl_graph *g, tsl_op op, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, op, 2, ins, NULL);
}

static void test_se_scale_channel_map_and_division_run_blocked(void) {
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  int64_t C = tsl_target_f32_lanes(&host) + 3, s[4] = {2, C, 5, 6}, n = 2 * C * 5 * 6;
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int a = gt_add_conv1x1(g, x, C, C, 1);
  int se = gt_add_node(g, TSL_OP_GLOBAL_AVERAGE_POOL, 1, &a, NULL); /* [2, C, 1, 1] */
  int m = binary(g, TSL_OP_MUL, se, a);                             /* scale first: either order */
  int map = gt_add_conv1x1(g, a, C, 1, 3);                                 /* [2, 1, 5, 6] */
  int p = binary(g, TSL_OP_ADD, m, map);
  int sq = binary(g, TSL_OP_MUL, a, a);
  int ms = gt_add_node(g, TSL_OP_GLOBAL_AVERAGE_POOL, 1, &sq, NULL); /* mean square > 0; its padding lanes 0 */
  int d = binary(g, TSL_OP_DIV, p, ms);
  int e = binary(g, TSL_OP_SUB, d, map);                             /* a channel map subtracted */
  int f = binary(g, TSL_OP_DIV, binary(g, TSL_OP_SUB, e, a), ms);   /* same-shape Sub, then Div */
  int y = gt_add_conv1x1(g, binary(g, TSL_OP_ADD, f, e), C, 5, 5);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  float *in = malloc((size_t)n * sizeof *in);
  for (int64_t i = 0; i < n; i++) in[i] = (float)((i * 4099) % 97) / 48.0f - 1.0f;
  const float *ins[1] = {in};
  float *got[1] = {0}, *want[1] = {0};
  int transforms = -1;
  tsl_status st = gt_compile_run(g, NULL, ins, got, NULL, &transforms);
  if (st != TSL_OK) printf("\n  %s", tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  CU_ASSERT_EQUAL(transforms, 1); /* to plain at the end; the first conv reads the plain input */
  CU_ASSERT_EQUAL(gt_reference_run(g, ins, want), TSL_OK);
  if (got[0] && want[0]) {
    double err = gt_rel_err(got[0], want[0], 2 * 5 * 5 * 6);
    if (!(err < 1e-5)) printf("\n  relative error %.3g", err);
    CU_ASSERT(err < 1e-5);
  }
  free(got[0]), free(want[0]), free(in);
  tsl_graph_free(g);
}

void tsl_tests_graph_broadcast_nchwc(void) {
  CU_pSuite s = CU_add_suite("graph_broadcast_nchwc", NULL, NULL);
  CU_add_test(s, "se_scale_channel_map_and_division_run_blocked", test_se_scale_channel_map_and_division_run_blocked);
}
