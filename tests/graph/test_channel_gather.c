/* The channel-gather pass (models/passes/channel_gather.h) through the graph compiler,
 * against the reference executor on the graph as built: ShuffleNet V2 units (Slice,
 * Concat, ChannelShuffle) at channel counts that fill the blocks (8 and 16) and that do
 * not, one unit and chains past the pass's piece limit; a Concat of three inputs under a
 * shuffle read by a conv and by a slice; a slice of whole blocks concatenated (dense
 * block copies). Each graph compiled blocked (the host's lanes) and plain; the rewrite
 * checked on the optimized graph. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "target/target.h"

static int host_lanes(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  return tsl_target_f32_lanes(&t);
}

/* Compiled blocked and plain, each against the reference executor (the graph unoptimized). */
static void check_both_layouts(const tsl_graph *g, const char *what) {
  int64_t n = gt_numel(g, g->inputs[0]);
  float *x = gt_random(n, 41, -1.0, 1.0), *want = NULL;
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, (const float *const *)&x, &want), TSL_OK);
  for (int plain = 0; plain < 2; plain++) {
    tsl_compile_options o = {.no_layout = plain != 0};
    float *got = NULL;
    tsl_status st = gt_compile_run(g, &o, (const float *const *)&x, &got, NULL, NULL);
    if (st != TSL_OK) printf("\n  %s (%s): %s", what, plain ? "plain" : "blocked", tsl_last_error());
    CU_ASSERT_EQUAL(st, TSL_OK);
    if (got) {
      double err = gt_rel_err(got, want, gt_numel(g, g->outputs[0]));
      if (!(err <= 1e-5)) printf("\n  %s (%s): relative error %.3g", what, plain ? "plain" : "blocked", err);
      CU_ASSERT(err <= 1e-5);
    }
    free(got);
  }
  free(x);
  free(want);
}

static int channel_slice(tsl_graph *g, int x, int64_t start, int64_t end) {
  int node, y = gt_add_node(g, TSL_OP_SLICE, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "starts", 1, (int64_t[]){start}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "ends", 1, (int64_t[]){end}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "axes", 1, (int64_t[]){1}), TSL_OK);
  return y;
}

static int concat(tsl_graph *g, int n, const int *ins) {
  int node, y = gt_add_node(g, TSL_OP_CONCAT, n, ins, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", 1), TSL_OK);
  return y;
}

/* The channel shuffle of x [1, C, 5, 3] as ONNX spells it (Reshape, Transpose, Reshape),
 * which the reference executor runs and the compiler makes one tsl.ChannelShuffle. */
static int shuffle(tsl_graph *g, int x, int64_t C, int64_t group) {
  int node;
  int r1 = gt_add_node(g, TSL_OP_RESHAPE, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "shape", 5, (int64_t[]){1, group, C / group, 5, 3}), TSL_OK);
  int t = gt_add_node(g, TSL_OP_TRANSPOSE, 1, &r1, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "perm", 5, (int64_t[]){0, 2, 1, 3, 4}), TSL_OK);
  int y = gt_add_node(g, TSL_OP_RESHAPE, 1, &t, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "shape", 4, (int64_t[]){1, C, 5, 3}), TSL_OK);
  return y;
}

/* The graph optimized at the host's lanes; the gathers the pass made. */
static int optimize(tsl_graph *g) {
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, host_lanes(), &stats), TSL_OK);
  return stats.channel_gathers;
}

static tsl_graph *image_graph(int64_t c, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, (int64_t[]){1, c, 5, 3}, x), TSL_OK);
  return g;
}

static void finish(tsl_graph *g, int y) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
}

/* ShuffleNet V2 units on C channels: x1, x2 = halves of s; s = shuffle(concat(x1,
 * conv(x2)), 2); a conv reads the last s. */
static tsl_graph *shufflenet_units(int64_t C, int units) {
  int x;
  tsl_graph *g = image_graph(C, &x);
  int s = gt_add_conv1x1(g, x, C, C, 3);
  for (int u = 0; u < units; u++) {
    int x1 = channel_slice(g, s, 0, C / 2), x2 = channel_slice(g, s, C / 2, C);
    int ab[2] = {x1, gt_add_conv1x1(g, x2, C / 2, C / 2, 10 + (uint64_t)u)};
    s = shuffle(g, concat(g, 2, ab), C, 2);
  }
  finish(g, gt_add_conv1x1(g, s, C, 5, 99));
  return g;
}

static void test_shufflenet_units_compose_into_gathers(void) {
  int L = host_lanes();
  const int64_t cs[] = {2 * L, 4 * L, 2 * L + 6, 12, 116};
  for (int i = 0; i < 5; i++)
    for (int units = 1; units <= 6; units += 5) {
      tsl_graph *g = shufflenet_units(cs[i], units);
      char what[64];
      snprintf(what, sizeof what, "%d shufflenet units of %lld channels", units, (long long)cs[i]);
      check_both_layouts(g, what);
      /* every Concat and ChannelShuffle composed; at most a few pieces each */
      int gathers = optimize(g);
      CU_ASSERT(gathers >= 2 * units);
      CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_CONCAT), 0);
      CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_CHANNEL_SHUFFLE), 0);
      for (int n = 0; n < g->n_nodes; n++) {
        int np = 0;
        if (g->nodes[n].op == TSL_OP_CHANNEL_GATHER) tsl_node_attr_ints(&g->nodes[n], "pieces", &np);
        CU_ASSERT(np <= 6 * 4);
      }
      tsl_graph_free(g);
    }
}

/* Concat of L, 3 and L + 1 channels shuffled in 2 groups; the shuffle read by a conv
 * (not composable: kept as the gather of the concat) and by a slice starting mid-block. */
static void test_concat_of_three_under_a_shuffle_with_two_readers(void) {
  int L = host_lanes(), x;
  tsl_graph *g = image_graph(4, &x);
  int ins[3] = {gt_add_conv1x1(g, x, 4, L, 1), gt_add_conv1x1(g, x, 4, 3, 2), gt_add_conv1x1(g, x, 4, L + 1, 3)};
  int64_t C = 2 * L + 4;
  int s = shuffle(g, concat(g, 3, ins), C, 2);
  int a = gt_add_conv1x1(g, s, C, 6, 4), b = gt_add_conv1x1(g, channel_slice(g, s, L - 2, 2 * L + 1), L + 3, 6, 5);
  int ab[2] = {a, b};
  finish(g, concat(g, 2, ab));
  check_both_layouts(g, "concat of three under a shuffle");
  CU_ASSERT_EQUAL(optimize(g), 1); /* the shuffle of the concat; the slice reads the kept gather */
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_SLICE), 1);
  tsl_graph_free(g);
}

/* A slice of whole blocks concatenated with a conv output of whole blocks: the gather
 * copies blocks; at 2L + 3 channels the slice ends mid-block (lanes picked). */
static void test_block_aligned_slice_and_concat(void) {
  int L = host_lanes();
  for (int tail = 0; tail < 2; tail++) {
    int x;
    int64_t C = 2 * L + 3 * tail;
    tsl_graph *g = image_graph(C, &x);
    int s = gt_add_conv1x1(g, x, C, C, 7);
    int ab[2] = {channel_slice(g, s, L, C), gt_add_conv1x1(g, s, C, L, 8)};
    finish(g, gt_add_conv1x1(g, concat(g, 2, ab), C, 4, 9));
    check_both_layouts(g, tail ? "slice with a tail concatenated" : "whole-block slice concatenated");
    CU_ASSERT_EQUAL(optimize(g), 1);
    tsl_graph_free(g);
  }
}

void tsl_tests_graph_channel_gather(void) {
  CU_pSuite s = CU_add_suite("graph_channel_gather", NULL, NULL);
  CU_add_test(s, "shufflenet_units_compose_into_gathers", test_shufflenet_units_compose_into_gathers);
  CU_add_test(s, "concat_of_three_under_a_shuffle_with_two_readers", test_concat_of_three_under_a_shuffle_with_two_readers);
  CU_add_test(s, "block_aligned_slice_and_concat", test_block_aligned_slice_and_concat);
}
