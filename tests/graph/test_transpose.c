/* Layout transforms whose lanes read strided rows (NCHW -> NCHW[x]c: lane c reads
 * channel c at pixel w) compile to blocks of x pixels transposed in registers
 * (codegen/llvm_transpose.c) with the last W mod x pixels as the loop was. Here a graph
 * out = x + conv(x) makes the plain input x go through that transform (the Add runs
 * blocked because the conv's output is blocked), and the result must equal the
 * reference executor's, which never changes layout: channel counts that fill one block
 * with a tail (lanes fixed off), several blocks with a tail (lanes off by a run-time
 * condition), whole blocks; widths below, at and past a block and not multiples of it;
 * two images. At the host's lanes (the suite runs again at 8 with
 * TSL_HOST_TARGET=x86-64-avx2). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/compile.h"

/* x + conv(x) of an N x C x H x W input against the reference executor. */
static void check_case(int64_t N, int64_t C, int64_t H, int64_t W, uint64_t seed) {
  tsl_graph *g;
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("transpose", &g), TSL_OK);
  int64_t s[4] = {N, C, H, W};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, &x), TSL_OK);
  int y = gt_add_conv(g, x, C, C, 3, 1, 1, seed);
  int xy[2] = {x, y};
  int out = gt_add_node(g, TSL_OP_ADD, 2, xy, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  float *in = gt_random(N * C * H * W, seed + 500, -1.0, 1.0);
  const float *ins[1] = {in};
  char what[96];
  snprintf(what, sizeof what, "x + conv(x), N %lld C %lld H %lld W %lld", (long long)N, (long long)C, (long long)H,
           (long long)W);
  int transforms = gt_check_vs_reference(g, what, ins, 1e-5);
  CU_ASSERT(transforms >= 1); /* x into the blocked layout (and the sum out of it) */
  free(in);
  tsl_graph_free(g);
}

/* Small images: the transform is one loop over the pixels (H x W of them, blocks of x
 * and a tail); one image, channels in one block with the tail's lanes fixed off, or
 * whole. Large images: rows in parallel, the loop over a row's W pixels, several channel
 * blocks whose last one's lanes go off by a condition on the block. Two images: the
 * pixel loop wraps from one image to the next (not transposed: the per-pixel loads). */
static void test_plain_to_blocked_transposes_match_reference(void) {
  static const int64_t small_chans[] = {3, 9, 12, 16}, widths[] = {7, 16, 19, 37};
  uint64_t seed = 40;
  for (int ci = 0; ci < 4; ci++)
    for (int wi = 0; wi < 4; wi++) check_case(1, small_chans[ci], 9, widths[wi], seed++);
  static const int64_t large_chans[] = {20, 33, 40};
  for (int ci = 0; ci < 3; ci++) {
    check_case(1, large_chans[ci], 28, 28, seed++);
    check_case(1, large_chans[ci], 30, 37, seed++);
  }
  check_case(2, 12, 9, 19, seed++);
  check_case(2, 33, 9, 19, seed++);
}

void tsl_tests_graph_transpose(void) {
  CU_pSuite s = CU_add_suite("graph_transpose", NULL, NULL);
  CU_add_test(s, "plain_to_blocked_transposes_match_reference", test_plain_to_blocked_transposes_match_reference);
}
