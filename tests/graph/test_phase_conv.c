/* The phase rewrite of stride-2 convs (models/passes/phase_conv.h) and SpaceToDepth:
 * graphs with a strided conv of many kernel sizes, pads (symmetric, asymmetric, the last
 * rows unread), odd and even extents, N = 1 and 2, a fused residual and activation, run
 * against the reference executor (which runs the graph as written: the strided conv by
 * the definition), at the host's lanes (the suite runs again at 8 with
 * TSL_HOST_TARGET=x86-64-avx2); and which of them the pass rewrites, from the rule
 * restated here: square phase kernels of 4 taps with 4C, K >= 8, the phase channels read
 * blocked at the lanes (8 and 16 checked). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/compile.h"
#include "models/passes/phase_conv.h"

typedef struct {
  int64_t n, c, h, w, k, r, pads[4]; /* pads: top, left, bottom, right */
  bool residual;
  bool rewritten;    /* what the pass should do at 8 lanes */
  bool rewritten16;  /* and at 16 */
} phase_case;

/* Input x [n, c, h, w] -> Conv (k outputs, r x r, stride 2, pads, bias) [+ z] -> Relu. */
static tsl_graph *strided_graph(const phase_case *pc, uint64_t seed) {
  tsl_graph *g;
  int x, z = -1, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("phase", &g), TSL_OK);
  int64_t s[4] = {pc->n, pc->c, pc->h, pc->w};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int64_t oh = (pc->h + pc->pads[0] + pc->pads[2] - pc->r) / 2 + 1, ow = (pc->w + pc->pads[1] + pc->pads[3] - pc->r) / 2 + 1;
  if (pc->residual) {
    int64_t zs[4] = {pc->n, pc->k, oh, ow};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "z", TSL_DTYPE_F32, 4, zs, &z), TSL_OK);
  }
  int64_t ws[4] = {pc->k, pc->c, pc->r, pc->r};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.5, 0.5), gt_add_const(g, 1, &pc->k, seed + 1, -0.2, 0.2)};
  int y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  int64_t strides[2] = {2, 2};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, strides), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pc->pads), TSL_OK);
  if (pc->residual) {
    int add[2] = {y, z};
    y = gt_add_node(g, TSL_OP_ADD, 2, add, NULL);
  }
  y = gt_add_node(g, TSL_OP_RELU, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  return g;
}

static void test_strided_convs_over_their_phases_match_reference(void) {
  static const phase_case cases[] = {
      {1, 3, 32, 32, 16, 7, {3, 3, 3, 3}, false, true, true},   /* ResNet's stem, small */
      {2, 3, 29, 30, 24, 7, {3, 3, 3, 3}, false, true, true},   /* odd H: a zero row first */
      {1, 3, 31, 27, 16, 7, {3, 2, 2, 3}, false, true, true},   /* asymmetric pads, both odd */
      {1, 4, 20, 22, 16, 8, {4, 4, 3, 3}, false, true, true},   /* 8x8 -> 4 taps */
      {1, 3, 26, 26, 16, 7, {2, 2, 2, 2}, false, true, true},   /* pad 2: shifts -1..2 */
      {1, 17, 18, 17, 8, 7, {3, 3, 3, 3}, true, true, true},    /* many channels, a residual */
      {1, 1, 24, 24, 16, 7, {3, 3, 3, 3}, false, false, false},  /* 4C = 4 < 8: stays */
      {1, 3, 24, 24, 4, 7, {3, 3, 3, 3}, false, false, false},   /* K = 4 < 8: stays */
      {1, 3, 29, 29, 16, 7, {3, 3, 0, 0}, false, false, false},  /* the last phase row unread */
      {1, 3, 24, 24, 16, 5, {2, 2, 2, 2}, false, false, false},  /* 3 taps: unmeasured, stays */
      {1, 3, 24, 24, 16, 3, {1, 1, 1, 1}, false, false, false},  /* 2 taps: stays */
      {1, 3, 24, 25, 16, 9, {4, 4, 4, 4}, false, false, false},  /* 5 taps: stays */
      {1, 3, 30, 30, 16, 7, {5, 5, 6, 6}, false, true, true},     /* pads past r / 2 */
      /* the phase channels fill a block: 4C = 8 and 20 are read blocked at 8 lanes, but
       * at 16 over a quarter of the lanes would be zero (the grouped direct conv reads them
       * plain: more MACs than the original), so they stay there */
      {1, 2, 24, 24, 16, 7, {3, 3, 3, 3}, false, true, false},
      {1, 5, 24, 22, 16, 7, {3, 3, 3, 3}, false, true, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const phase_case *pc = &cases[i];
    tsl_graph *g = strided_graph(pc, 11 + i);
    char what[128];
    snprintf(what, sizeof what, "phase N%lld C%lld %lldx%lld K%lld %lldx%lld s2 pads %lld,%lld,%lld,%lld%s",
             (long long)pc->n, (long long)pc->c, (long long)pc->h, (long long)pc->w, (long long)pc->k,
             (long long)pc->r, (long long)pc->r, (long long)pc->pads[0], (long long)pc->pads[1], (long long)pc->pads[2],
             (long long)pc->pads[3], pc->residual ? " +residual" : "");
    /* the rewrite decision, on a copy at 8 lanes */
    tsl_graph *work;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &work), TSL_OK);
    tsl_compile_stats stats;
    tsl_status ost = tsl_graph_optimize(work, 8, &stats);
    if (ost != TSL_OK) printf("\n  %s: %s", what, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(ost, TSL_OK);
    CU_ASSERT_EQUAL(stats.phase_convs, pc->rewritten ? 1 : 0);
    CU_ASSERT_EQUAL(tsl_graph_count_op(work, TSL_OP_SPACE_TO_DEPTH), pc->rewritten ? 1 : 0);
    CU_ASSERT_EQUAL(tsl_graph_check(work), TSL_OK);
    if (stats.phase_convs != (pc->rewritten ? 1 : 0)) printf("\n  %s: %d rewritten", what, stats.phase_convs);
    tsl_graph_free(work);
    /* and at 16 lanes */
    CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &work), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(work, 16, &stats), TSL_OK);
    CU_ASSERT_EQUAL(stats.phase_convs, pc->rewritten16 ? 1 : 0);
    tsl_graph_free(work);
    /* the compiled graph against the reference */
    float *x = gt_random(pc->n * pc->c * pc->h * pc->w, 5 + i, -1.0, 1.0);
    int64_t oh = (pc->h + pc->pads[0] + pc->pads[2] - pc->r) / 2 + 1, ow = (pc->w + pc->pads[1] + pc->pads[3] - pc->r) / 2 + 1;
    float *z = gt_random(pc->n * pc->k * oh * ow, 9 + i, -1.0, 1.0);
    const float *ins[2] = {x, z};
    CU_ASSERT(gt_check_vs_reference(g, what, ins, 1e-4) >= 0);
    free(x);
    free(z);
    tsl_graph_free(g);
  }
}

/* TSL_PHASE_CONV=none leaves the conv strided (for A/B runs). */
static void test_phase_conv_can_be_turned_off(void) {
  static const phase_case pc = {1, 3, 32, 32, 16, 7, {3, 3, 3, 3}, false, true, true};
  tsl_graph *g = strided_graph(&pc, 3);
  int n = -1;
  setenv("TSL_PHASE_CONV", "none", 1);
  CU_ASSERT_EQUAL(tsl_pass_phase_conv(g, 8, &n), TSL_OK);
  unsetenv("TSL_PHASE_CONV");
  CU_ASSERT_EQUAL(n, 0);
  CU_ASSERT_EQUAL(tsl_pass_phase_conv(g, 8, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_SPACE_TO_DEPTH), 1);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  tsl_graph_free(g);
}

/* SpaceToDepth as a graph operator (as ONNX models use it, e.g. YOLOv5's Focus layer
 * written as slices): blocksizes 2 and 3, N = 2, before a conv and as the output. */
static void test_space_to_depth_matches_reference(void) {
  static const int64_t sizes[][5] = {{2, 3, 8, 10, 2}, {1, 5, 9, 6, 3}, {1, 16, 4, 4, 2}};
  for (int i = 0; i < 3; i++) {
    const int64_t *sz = sizes[i];
    for (int conv_after = 0; conv_after < 2; conv_after++) {
      tsl_graph *g;
      int x, node;
      CU_ASSERT_EQUAL_FATAL(tsl_graph_new("s2d", &g), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, sz, &x), TSL_OK);
      int y = gt_add_node(g, TSL_OP_SPACE_TO_DEPTH, 1, &x, &node);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "blocksize", sz[4]), TSL_OK);
      if (conv_after) {
        int64_t ws[4] = {8, sz[1] * sz[4] * sz[4], 3, 3}, k = 8, pads[4] = {1, 1, 1, 1};
        int ins[3] = {y, gt_add_const(g, 4, ws, 40 + i, -0.5, 0.5), gt_add_const(g, 1, &k, 50 + i, -0.2, 0.2)};
        y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
        CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
      }
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
      float *in = gt_random(sz[0] * sz[1] * sz[2] * sz[3], 60 + i, -1.0, 1.0);
      const float *ins[1] = {in};
      char what[96];
      snprintf(what, sizeof what, "SpaceToDepth %lldx%lldx%lldx%lld b%lld%s", (long long)sz[0], (long long)sz[1],
               (long long)sz[2], (long long)sz[3], (long long)sz[4], conv_after ? " + conv" : "");
      CU_ASSERT(gt_check_vs_reference(g, what, ins, 1e-5) >= 0);
      free(in);
      tsl_graph_free(g);
    }
  }
}

/* A blocksize that does not divide H or W, or below 1, is refused by shape inference. */
static void test_space_to_depth_refuses_bad_blocksize(void) {
  static const int64_t bad[][3] = {{9, 8, 2}, {8, 9, 2}, {8, 8, 0}, {8, 8, -2}};
  for (int i = 0; i < 4; i++) {
    tsl_graph *g;
    int x, node;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_new("s2d", &g), TSL_OK);
    int64_t s[4] = {1, 3, bad[i][0], bad[i][1]};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
    int y = gt_add_node(g, TSL_OP_SPACE_TO_DEPTH, 1, &x, &node);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "blocksize", bad[i][2]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
    CU_ASSERT_EQUAL(tsl_graph_infer_shapes(g), TSL_ERR_INVALID);
    tsl_graph_free(g);
  }
}

void tsl_tests_graph_phase_conv(void) {
  CU_pSuite s = CU_add_suite("graph_phase_conv", NULL, NULL);
  CU_add_test(s, "strided_convs_over_their_phases_match_reference", test_strided_convs_over_their_phases_match_reference);
  CU_add_test(s, "phase_conv_can_be_turned_off", test_phase_conv_can_be_turned_off);
  CU_add_test(s, "space_to_depth_matches_reference", test_space_to_depth_matches_reference);
  CU_add_test(s, "space_to_depth_refuses_bad_blocksize", test_space_to_depth_refuses_bad_blocksize);
}
