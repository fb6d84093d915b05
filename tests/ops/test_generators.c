/* Generated operators (ops/op_call.h): the registry of generators, the refusal of
 * malformed calls, and the data-movement generators (concat, split, slice, transpose,
 * pad) run through the DSL interpreter against the reference executor of
 * tests/ref/ref_graph.h on random data. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gen_check.h"
#include "ops/op_call.h"
#include "ops/ops_util.h"
#include "ref/ref_ops2.h"

#define T4(a, b, c, d) (const int64_t[]){a, b, c, d}

static int64_t numel_of(int nd, const int64_t *s) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) n *= s[d];
  return n;
}

static void test_registry_finds_every_generator_by_its_literal_name(void) {
  static const char *const names[] = {"softmax", "conv2d",   "pool2d",    "global_avgpool", "elemwise",  "activation",
                                      "concat",  "split",    "slice",     "transpose",      "pad",       "batch_norm",
                                      "channel_shuffle",     "gemm",      "dense_packed",   "matmul",
                                      "channel_gather"};
  int n = (int)(sizeof names / sizeof names[0]), count;
  const tsl_op_generator *const *list = tsl_op_generator_list(&count);
  CU_ASSERT(count >= n);
  for (int i = 0; i < n; i++) {
    const tsl_op_generator *g = NULL;
    CU_ASSERT_EQUAL(tsl_op_generator_lookup(names[i], &g), TSL_OK);
    CU_ASSERT(g && strcmp(g->name, names[i]) == 0 && g->fn && g->description && g->description[0]);
  }
  for (int i = 0; i < count; i++)
    for (int j = i + 1; j < count; j++) CU_ASSERT(strcmp(list[i]->name, list[j]->name) != 0);
}

static void test_registry_refuses_an_unknown_name_listing_the_known_ones(void) {
  const tsl_op_generator *g = (const tsl_op_generator *)1;
  CU_ASSERT_EQUAL(tsl_op_generator_lookup("conv3d", &g), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NULL(g);
  const char *msg = tsl_last_error();
  CU_ASSERT(strstr(msg, "'conv3d'") && strstr(msg, "pool2d") && strstr(msg, "concat") && strstr(msg, "matmul"));
  tsl_op_call c = {0};
  tsl_op_call_add_tensor(&c, 1, (const int64_t[]){4}, 0);
  tsl_op_text t;
  CU_ASSERT_EQUAL(tsl_op_generate("conv3d", &c, &t), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NULL(t.text.s);
  CU_ASSERT_EQUAL(tsl_op_generate(NULL, &c, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_op_generate("concat", NULL, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_op_generator_lookup("concat", NULL), TSL_ERR_INVALID);
}

/* `name` on c fails with `want` and a message holding `why`, leaving no text. */
static bool refused(const char *name, const tsl_op_call *c, tsl_status want, const char *why) {
  tsl_op_text t;
  tsl_status st = tsl_op_generate(name, c, &t);
  bool ok = st == want && strstr(tsl_last_error(), why) && !t.text.s;
  if (!ok) printf("\n  %s: status %d (want %d), message '%s' (want '%s')\n", name, st, want, tsl_last_error(), why);
  free(t.text.s);
  return ok;
}

/* A call of nin inputs and nout outputs, all [2, 3, 4, 5] (block 0 or x). */
static tsl_op_call images(int nin, int nout, int block) {
  tsl_op_call c = {0};
  for (int i = 0; i < nin + nout; i++) tsl_op_call_add_tensor(&c, 4, T4(2, 3, 4, 5), block);
  c.ninputs = nin;
  return c;
}

static void test_malformed_calls_are_refused_with_the_reason(void) {
  tsl_op_call c = images(2, 1, 0);
  CU_ASSERT(refused("transpose", &c, TSL_ERR_INVALID, "2 inputs and 1 outputs"));
  CU_ASSERT(refused("pool2d", &c, TSL_ERR_INVALID, "2 inputs"));
  c = images(0, 1, 0);
  CU_ASSERT(refused("concat", &c, TSL_ERR_INVALID, "0 inputs"));
  c = (tsl_op_call){0};
  CU_ASSERT(refused("concat", &c, TSL_ERR_INVALID, "0 arguments"));
  c = images(2, 1, 0);
  tsl_op_call_set_int(&c, "axis", 4);
  CU_ASSERT(refused("concat", &c, TSL_ERR_INVALID, "axis 4"));
  c = images(1, 2, 0);
  tsl_op_call_set_int(&c, "axis", -5);
  CU_ASSERT(refused("split", &c, TSL_ERR_INVALID, "axis -5"));
  c = images(1, 1, 0);
  tsl_op_call_set_ints(&c, "starts", 1, (const int64_t[]){1});
  tsl_op_call_set_ints(&c, "axes", 1, (const int64_t[]){7});
  CU_ASSERT(refused("slice", &c, TSL_ERR_INVALID, "axis 7"));
  c = images(1, 1, 0);
  CU_ASSERT(refused("slice", &c, TSL_ERR_INVALID, "missing attribute 'starts'"));
  c = images(1, 1, 0);
  tsl_op_call_set_ints(&c, "perm", 4, (const int64_t[]){0, 1, 1, 2});
  CU_ASSERT(refused("transpose", &c, TSL_ERR_INVALID, "perm[2]"));
  c = images(1, 1, 0);
  tsl_op_call_set_string(&c, "mode", "max");
  CU_ASSERT(refused("pool2d", &c, TSL_ERR_INVALID, "missing attribute 'kernel'"));
  tsl_op_call_set_ints(&c, "kernel", 2, (const int64_t[]){3, 3});
  tsl_op_call_set_ints(&c, "strides", 2, (const int64_t[]){0, 1});
  CU_ASSERT(refused("pool2d", &c, TSL_ERR_INVALID, "strides[0] = 0"));
  c = images(1, 1, 0);
  CU_ASSERT(refused("pad", &c, TSL_ERR_INVALID, "missing attribute 'pads'"));
  c = images(2, 1, 0);
  tsl_op_call_set_string(&c, "op", "pow");
  CU_ASSERT(refused("elemwise", &c, TSL_ERR_INVALID, "op 'pow'"));
  c = images(1, 1, 0);
  tsl_op_call_set_string(&c, "function", "NoSuchFunction");
  CU_ASSERT(refused("activation", &c, TSL_ERR_UNSUPPORTED, "'NoSuchFunction'"));
  c = images(2, 1, 0);
  tsl_op_call_set_int(&c, "group", 2); /* 3 channels in 2 groups */
  CU_ASSERT(refused("conv2d", &c, TSL_ERR_INVALID, "2 groups"));
  c = images(1, 1, 8);
  tsl_op_call_set_ints(&c, "perm", 4, (const int64_t[]){0, 2, 3, 1});
  CU_ASSERT(refused("transpose", &c, TSL_ERR_UNSUPPORTED, "blocked"));
  c = images(1, 1, 0);
  for (int i = 0; i <= TSL_OP_CALL_MAX_ATTRS; i++) tsl_op_call_set_int(&c, "axis", 1);
  CU_ASSERT(c.overflow);
  CU_ASSERT(refused("softmax", &c, TSL_ERR_INVALID, "did not fit"));
  c = (tsl_op_call){0};
  tsl_op_call_add_tensor(&c, 2, (const int64_t[]){2, 3}, 0);
  tsl_op_call_add_tensor(&c, 2, (const int64_t[]){3, 4}, 0);
  tsl_op_call_add_tensor(&c, 2, (const int64_t[]){2, 4}, 0);
  c.ninputs = 2;
  tsl_op_call_set_float(&c, "alpha", NAN);
  CU_ASSERT(refused("gemm", &c, TSL_ERR_UNSUPPORTED, "non-finite alpha"));
}

/* Runs `name` on random inputs of the given shapes (plain) and compares output 0 with
 * the reference executor's node `op`; set_attrs sets the same attributes on the node as
 * call_attrs on the call. */
typedef struct plain_case {
  const char *name, *label;
  tsl_op op;
  int nin, ndims[4], out_ndim;
  int64_t shapes[4][4], out[4];
} plain_case;

static void check_plain(const plain_case *pc, void (*call_attrs)(tsl_op_call *c, const void *ctx),
                        void (*node_attrs)(tsl_graph *g, int node, const void *ctx), const void *ctx) {
  tsl_op_call c = {0};
  float *bufs[5] = {0};
  const int64_t *shapes[4];
  for (int i = 0; i < pc->nin; i++) {
    tsl_op_call_add_tensor(&c, pc->ndims[i], pc->shapes[i], 0);
    bufs[i] = gen_randoms(numel_of(pc->ndims[i], pc->shapes[i]), 900 + (uint64_t)i);
    shapes[i] = pc->shapes[i];
  }
  c.ninputs = pc->nin;
  tsl_op_call_add_tensor(&c, pc->out_ndim, pc->out, 0);
  call_attrs(&c, ctx);
  int64_t n = numel_of(pc->out_ndim, pc->out), nref = -1;
  bufs[pc->nin] = calloc((size_t)n, sizeof(float));
  float *want = gen_ref_node(pc->op, pc->nin, pc->ndims, shapes, (const float *const *)bufs, node_attrs, ctx, &nref);
  CU_ASSERT_PTR_NOT_NULL(want);
  CU_ASSERT_EQUAL(nref, n);
  CU_ASSERT(gen_interpret(pc->name, &c, pc->label, bufs));
  if (want && nref == n) CU_ASSERT(gen_close(pc->name, bufs[pc->nin], want, n, 0.0));
  free(want);
  for (int i = 0; i <= pc->nin; i++) free(bufs[i]);
}

static void axis_call(tsl_op_call *c, const void *ctx) { tsl_op_call_set_int(c, "axis", *(const int64_t *)ctx); }
static void axis_node(tsl_graph *g, int node, const void *ctx) {
  tsl_graph_set_attr_int(g, node, "axis", *(const int64_t *)ctx);
}

static void test_concat_of_three_inputs_matches_reference(void) {
  int64_t axis = 1;
  plain_case mid = {"concat", "concat3", TSL_OP_CONCAT, 3, {4, 4, 4}, 4,
                    {{2, 3, 4, 5}, {2, 1, 4, 5}, {2, 4, 4, 5}}, {2, 8, 4, 5}};
  check_plain(&mid, axis_call, axis_node, &axis);
  axis = -1; /* the last axis: inner extent 1 */
  plain_case last = {"concat", "concat3", TSL_OP_CONCAT, 3, {3, 3, 3}, 3, {{2, 3, 2}, {2, 3, 1}, {2, 3, 4}}, {2, 3, 7}};
  check_plain(&last, axis_call, axis_node, &axis);
  axis = 0;
  plain_case first = {"concat", "concat3", TSL_OP_CONCAT, 3, {2, 2, 2}, 2, {{1, 6}, {3, 6}, {2, 6}}, {6, 6}};
  check_plain(&first, axis_call, axis_node, &axis);
}

static void ints_call(tsl_op_call *c, const void *ctx) {
  const int64_t *v = ctx; /* name index, count, values */
  static const char *const names[] = {"perm", "pads"};
  tsl_op_call_set_ints(c, names[v[0]], (int)v[1], v + 2);
}
static void ints_node(tsl_graph *g, int node, const void *ctx) {
  const int64_t *v = ctx;
  static const char *const names[] = {"perm", "pads"};
  tsl_graph_set_attr_ints(g, node, names[v[0]], (int)v[1], v + 2);
}
static void no_attrs_call(tsl_op_call *c, const void *ctx) { (void)c, (void)ctx; }

static void test_transpose_matches_reference(void) {
  const int64_t perm[] = {0, 4, 0, 2, 3, 1};
  plain_case nhwc = {"transpose", "transpose", TSL_OP_TRANSPOSE, 1, {4}, 4, {{2, 3, 4, 5}}, {2, 4, 5, 3}};
  check_plain(&nhwc, ints_call, ints_node, perm);
  /* no perm: the axes reversed */
  plain_case rev = {"transpose", "transpose", TSL_OP_TRANSPOSE, 1, {3}, 3, {{3, 4, 5}}, {5, 4, 3}};
  check_plain(&rev, no_attrs_call, NULL, NULL);
}

static void pad_call(tsl_op_call *c, const void *ctx) {
  ints_call(c, ctx);
  tsl_op_call_set_float(c, "value", 0.5);
}
static void pad_node(tsl_graph *g, int node, const void *ctx) {
  ints_node(g, node, ctx);
  tsl_graph_set_attr_float(g, node, "value", 0.5);
}

static void test_pad_with_a_value_and_a_crop_matches_reference(void) {
  /* begins 0, 1, 2; ends 1, 0, -1 (a crop of the last axis' end) */
  const int64_t pads[] = {1, 6, 0, 1, 2, 1, 0, -1};
  plain_case pc = {"pad", "pad", TSL_OP_PAD, 1, {3}, 3, {{2, 3, 4}}, {3, 4, 5}};
  check_plain(&pc, pad_call, pad_node, pads);
}

typedef struct slice_attrs {
  int n;
  int64_t starts[4], ends[4], axes[4], steps[4];
} slice_attrs;

static void slice_call(tsl_op_call *c, const void *ctx) {
  const slice_attrs *s = ctx;
  tsl_op_call_set_ints(c, "starts", s->n, s->starts);
  tsl_op_call_set_ints(c, "axes", s->n, s->axes);
  tsl_op_call_set_ints(c, "steps", s->n, s->steps);
}
static void slice_node(tsl_graph *g, int node, const void *ctx) {
  const slice_attrs *s = ctx;
  tsl_graph_set_attr_ints(g, node, "starts", s->n, s->starts);
  tsl_graph_set_attr_ints(g, node, "ends", s->n, s->ends);
  tsl_graph_set_attr_ints(g, node, "axes", s->n, s->axes);
  tsl_graph_set_attr_ints(g, node, "steps", s->n, s->steps);
}

static void test_slice_with_negative_starts_and_steps_matches_reference(void) {
  /* axis 2 from its last element backwards by 2 (5, 3, 1), axis 1 (given as -2) from 1 to 3 */
  slice_attrs s = {2, {-1, 1}, {-100, 3}, {2, -2}, {-2, 1}};
  plain_case pc = {"slice", "slice", TSL_OP_SLICE, 1, {3}, 3, {{2, 3, 6}}, {2, 2, 3}};
  check_plain(&pc, slice_call, slice_node, &s);
}

/* Split into 2 + 3 along axis 1: each output against the matching slice reference. */
static void test_split_outputs_match_reference_slices(void) {
  tsl_op_call c = {0};
  tsl_op_call_add_tensor(&c, 3, (const int64_t[]){2, 5, 3}, 0);
  c.ninputs = 1;
  tsl_op_call_add_tensor(&c, 3, (const int64_t[]){2, 2, 3}, 0);
  tsl_op_call_add_tensor(&c, 3, (const int64_t[]){2, 3, 3}, 0);
  tsl_op_call_set_int(&c, "axis", -2);
  float *x = gen_randoms(30, 950), *y0 = calloc(12, sizeof(float)), *y1 = calloc(18, sizeof(float));
  float *bufs[3] = {x, y0, y1};
  CU_ASSERT(gen_interpret("split", &c, "split2", bufs));
  slice_attrs first = {1, {0}, {2}, {1}, {1}}, second = {1, {2}, {5}, {1}, {1}};
  const int64_t *shapes[1] = {(const int64_t[]){2, 5, 3}};
  int64_t n0, n1;
  float *w0 = gen_ref_node(TSL_OP_SLICE, 1, (const int[]){3}, shapes, (const float *const *)&x, slice_node, &first, &n0);
  float *w1 = gen_ref_node(TSL_OP_SLICE, 1, (const int[]){3}, shapes, (const float *const *)&x, slice_node, &second, &n1);
  CU_ASSERT(w0 && w1 && n0 == 12 && n1 == 18);
  if (w0 && w1) CU_ASSERT(gen_close("split 0", y0, w0, 12, 0.0) && gen_close("split 1", y1, w1, 18, 0.0));
  free(w0);
  free(w1);
  free(x);
  free(y0);
  free(y1);
}

/* Blocked concat of two and three inputs whose channel counts fill the blocks or not (the
 * later inputs' lanes shift across blocks) at x = 4 and the lanes, interpreted and compiled
 * with the default schedule: the NCHW reference (ref2_concat), blocked, padding lanes zero. */
static void test_concat_blocked_channels_match_reference(void) {
  static const int64_t chans[][3] = {{8, 5, 3}, {8, 8, 8}, {5, 9, 0}, {8, 8, 0}, {3, 1, 13}, {16, 7, 8}};
  const int64_t blocks[2] = {4, ops_lanes() < 8 ? 8 : ops_lanes()};
  for (int ci = 0; ci < 6; ci++)
    for (int bi = 0; bi < 2; bi++) {
      int nin = chans[ci][2] ? 3 : 2;
      int64_t N = 2, H = 3, W = 2, X = blocks[bi], Cs = 0;
      tsl_op_call c = {0};
      float *plain[3] = {0}, *bufs[4] = {0};
      for (int i = 0; i < nin; i++) {
        int64_t C = chans[ci][i], CB = (C + X - 1) / X;
        plain[i] = gen_randoms(N * C * H * W, 960 + (uint64_t)i);
        bufs[i] = malloc(sizeof(float) * (size_t)(N * CB * H * W * X));
        ref2_to_nchwc(plain[i], N, C, H, W, X, 0.0f, bufs[i]);
        tsl_op_call_add_tensor(&c, 4, T4(N, C, H, W), (int)X);
        Cs += C;
      }
      c.ninputs = nin;
      tsl_op_call_add_tensor(&c, 4, T4(N, Cs, H, W), (int)X);
      tsl_op_call_set_int(&c, "axis", 1);
      int64_t C01 = chans[ci][0] + chans[ci][1], OB = (Cs + X - 1) / X, n = N * OB * H * W * X;
      float *ab = malloc(sizeof(float) * (size_t)(N * C01 * H * W)), *abc = malloc(sizeof(float) * (size_t)(N * Cs * H * W));
      ref2_concat(plain[0], chans[ci][0], plain[1], chans[ci][1], N, H, W, ab);
      if (nin == 3) ref2_concat(ab, C01, plain[2], chans[ci][2], N, H, W, abc);
      else memcpy(abc, ab, sizeof(float) * (size_t)(N * Cs * H * W));
      float *want = malloc(sizeof(float) * (size_t)n);
      ref2_to_nchwc(abc, N, Cs, H, W, X, 0.0f, want);
      bufs[nin] = malloc(sizeof(float) * (size_t)n);
      const char *label = nin == 3 ? "concat3_nchwc" : "concat2_nchwc";
      for (int run = 0; run < 2; run++) {
        for (int64_t e = 0; e < n; e++) bufs[nin][e] = -7.0f;
        CU_ASSERT(run ? gen_compile_run("concat", &c, label, bufs) : gen_interpret("concat", &c, label, bufs));
        CU_ASSERT(gen_close(run ? "concat blocked compiled" : "concat blocked", bufs[nin], want, n, 0.0));
      }
      for (int i = 0; i < 3; i++) free(plain[i]);
      for (int i = 0; i < 4; i++) free(bufs[i]);
      free(want);
      free(ab);
      free(abc);
    }
}

void ops_tests_generators(CU_pSuite s) {
  CU_add_test(s, "test_registry_finds_every_generator_by_its_literal_name",
              test_registry_finds_every_generator_by_its_literal_name);
  CU_add_test(s, "test_registry_refuses_an_unknown_name_listing_the_known_ones",
              test_registry_refuses_an_unknown_name_listing_the_known_ones);
  CU_add_test(s, "test_malformed_calls_are_refused_with_the_reason", test_malformed_calls_are_refused_with_the_reason);
  CU_add_test(s, "test_concat_of_three_inputs_matches_reference", test_concat_of_three_inputs_matches_reference);
  CU_add_test(s, "test_concat_blocked_channels_match_reference", test_concat_blocked_channels_match_reference);
  CU_add_test(s, "test_transpose_matches_reference", test_transpose_matches_reference);
  CU_add_test(s, "test_pad_with_a_value_and_a_crop_matches_reference", test_pad_with_a_value_and_a_crop_matches_reference);
  CU_add_test(s, "test_slice_with_negative_starts_and_steps_matches_reference",
              test_slice_with_negative_starts_and_steps_matches_reference);
  CU_add_test(s, "test_split_outputs_match_reference_slices", test_split_outputs_match_reference_slices);
}
