/* Graph passes, each checked twice: structurally (what the optimized graph holds) and
 * numerically (the compiled graph against the naive reference executor on the graph as
 * built). Also single operators through the compiler on the edge cases of shared/cases. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/compile.h"
#include "models/passes/fuse_conv.h"
#include "models/passes/layout.h"
#include "models/zoo.h"
#include "models/passes/plan_memory.h"

/* ---- building small graphs ---- */

static int add_const(tsl_graph *g, const char *name, int ndim, const int64_t *shape, uint64_t seed, double lo,
                     double hi) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, seed, lo, hi), TSL_OK);
  int id;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, name, t, &id), TSL_OK);
  return id;
}

static void set_ints(tsl_graph *g, int node, const char *name, int n, int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t v[4] = {a, b, c, d};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, name, n, v), TSL_OK);
}

static int conv_node(tsl_graph *g, int x, int64_t m, int64_t cg, int64_t k, int stride, int pad, bool bias,
                     uint64_t seed) {
  int64_t ws[4] = {m, cg, k, k};
  int ins[3] = {x, add_const(g, NULL, 4, ws, seed, -0.5, 0.5), bias ? add_const(g, NULL, 1, &m, seed + 1, -0.2, 0.2) : -1};
  int node;
  int y = gt_add_node(g, TSL_OP_CONV, bias ? 3 : 2, ins, &node);
  set_ints(g, node, "strides", 2, stride, stride, 0, 0);
  set_ints(g, node, "pads", 4, pad, pad, pad, pad);
  return y;
}

static int bn_node(tsl_graph *g, int x, int64_t c, uint64_t seed) {
  int ins[5] = {x, add_const(g, NULL, 1, &c, seed, 0.5, 1.5), add_const(g, NULL, 1, &c, seed + 1, -0.25, 0.25),
                add_const(g, NULL, 1, &c, seed + 2, -0.25, 0.25), add_const(g, NULL, 1, &c, seed + 3, 0.5, 1.5)};
  return gt_add_node(g, TSL_OP_BATCH_NORM, 5, ins, NULL);
}

/* Compiles g, runs it on seeded random inputs and compares every output with the
 * reference executor on g itself. */
static void check_against_reference(const tsl_graph *g, const tsl_compile_options *opts, double tol) {
  float *ins[4] = {0}, *got[4] = {0}, *want[4] = {0};
  tsl_tensor *xs[4] = {0};
  for (int i = 0; i < g->n_inputs; i++) {
    int64_t n = gt_numel(g, g->inputs[i]);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &xs[i]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(xs[i], 11 + (uint64_t)i, -1.0, 1.0), TSL_OK);
    ins[i] = xs[i]->data;
  }
  tsl_status st = gt_compile_run(g, opts, (const float *const *)ins, got, NULL, NULL);
  if (st != TSL_OK) printf("\n  compile/run: %s", tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  CU_ASSERT_EQUAL(gt_reference_run(g, (const float *const *)ins, want), TSL_OK);
  for (int k = 0; k < g->n_outputs; k++) {
    if (!got[k] || !want[k]) continue;
    double err = gt_rel_err(got[k], want[k], gt_numel(g, g->outputs[k]));
    if (!(err <= tol)) printf("\n  output %d: relative error %.3g", k, err);
    CU_ASSERT(err <= tol);
  }
  for (int i = 0; i < 4; i++) {
    tsl_tensor_free(xs[i]);
    free(got[i]);
    free(want[i]);
  }
}

static tsl_graph *new_graph(int64_t n, int64_t c, int64_t h, int64_t w, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[4] = {n, c, h, w};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, x), TSL_OK);
  return g;
}

static void finish(tsl_graph *g, int out) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, out), TSL_OK);
  tsl_status st = tsl_graph_infer_shapes(g);
  if (st != TSL_OK) printf("\n  infer: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
}

static const tsl_node *find_op(const tsl_graph *g, tsl_op op) {
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].op == op) return &g->nodes[i];
  return NULL;
}

/* ---- passes ---- */

static void test_batch_norm_folds_into_conv_and_relu_fuses(void) {
  int x;
  tsl_graph *g = new_graph(1, 3, 9, 11, &x);
  int y = conv_node(g, x, 8, 3, 3, 2, 1, false, 1);
  y = bn_node(g, y, 8, 5);
  int relu = gt_add_node(g, TSL_OP_RELU, 1, &y, NULL);
  finish(g, relu);
  check_against_reference(g, NULL, 1e-5);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, 0, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.batch_norms_folded, 1);
  CU_ASSERT_EQUAL(stats.nodes_fused, 1);
  CU_ASSERT_EQUAL(g->n_nodes, 1);
  const tsl_node *c = find_op(g, TSL_OP_CONV);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->n_inputs, 3); /* the folded bias */
  CU_ASSERT_EQUAL(tsl_node_attr_int(c, TSL_ATTR_ACTIVATION, -1), TSL_ACT_RELU);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  tsl_graph_free(g);
}

static void test_batch_norm_alone_runs_as_its_own_kernel(void) {
  int x;
  tsl_graph *g = new_graph(2, 5, 4, 3, &x);
  int y = bn_node(g, x, 5, 9);
  finish(g, y);
  tsl_compile_stats stats;
  tsl_graph *o;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &o), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_optimize(o, 0, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.batch_norms_folded, 0);
  CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_BATCH_NORM), 1);
  tsl_graph_free(o);
  check_against_reference(g, NULL, 1e-5);
  tsl_graph_free(g);
}

static void test_residual_add_and_relu_fuse_into_the_later_conv(void) {
  int x;
  tsl_graph *g = new_graph(1, 4, 8, 8, &x);
  int a = conv_node(g, x, 6, 4, 3, 1, 1, true, 1);
  int b = conv_node(g, x, 6, 4, 1, 1, 0, false, 3);
  int ab[2] = {a, b};
  int s = gt_add_node(g, TSL_OP_ADD, 2, ab, NULL);
  int r = gt_add_node(g, TSL_OP_RELU, 1, &s, NULL);
  finish(g, r);
  check_against_reference(g, NULL, 1e-5);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, 0, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.nodes_fused, 2);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_ADD), 0);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_RELU), 0);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_CONV), 2);
  int with_residual = 0;
  for (int i = 0; i < g->n_nodes; i++) with_residual += g->nodes[i].n_inputs == 4;
  CU_ASSERT_EQUAL(with_residual, 1);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  tsl_graph_free(g);
}

static void test_fusion_keeps_a_conv_output_that_is_read_elsewhere(void) {
  int x;
  tsl_graph *g = new_graph(1, 3, 6, 6, &x);
  int y = conv_node(g, x, 4, 3, 3, 1, 1, true, 1);
  int r = gt_add_node(g, TSL_OP_RELU, 1, &y, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  finish(g, r);
  check_against_reference(g, NULL, 1e-5);
  tsl_graph *o;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &o), TSL_OK);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL(tsl_graph_optimize(o, 0, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.nodes_fused, 0);
  CU_ASSERT_EQUAL(tsl_graph_count_op(o, TSL_OP_RELU), 1);
  tsl_graph_free(o);
  tsl_graph_free(g);
}

static void test_clip_fuses_as_relu6(void) {
  int x;
  tsl_graph *g = new_graph(1, 2, 5, 5, &x);
  int y = conv_node(g, x, 3, 2, 3, 1, 1, true, 4);
  int node;
  int c = gt_add_node(g, TSL_OP_CLIP, 1, &y, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "min", 0.0), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "max", 0.25), TSL_OK);
  finish(g, c);
  check_against_reference(g, NULL, 1e-5);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, 0, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.nodes_fused, 1);
  CU_ASSERT_EQUAL(tsl_node_attr_int(find_op(g, TSL_OP_CONV), TSL_ATTR_ACTIVATION, -1), TSL_ACT_CLIP);
  tsl_graph_free(g);
}

static void test_constant_subgraph_is_folded_at_compile_time(void) {
  int x;
  tsl_graph *g = new_graph(1, 2, 3, 4, &x);
  int64_t cs[4] = {1, 2, 4, 3};
  int c = add_const(g, "c", 4, cs, 2, -1.0, 1.0), node;
  int t = gt_add_node(g, TSL_OP_TRANSPOSE, 1, &c, &node);
  set_ints(g, node, "perm", 4, 0, 1, 3, 2);
  int two[2] = {t, add_const(g, "k", 1, (const int64_t[]){1}, 3, 2.0, 3.0)};
  int m = gt_add_node(g, TSL_OP_MUL, 2, two, NULL);
  int xa[2] = {x, m};
  int s = gt_add_node(g, TSL_OP_ADD, 2, xa, NULL);
  finish(g, s);
  check_against_reference(g, NULL, 1e-6);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, 0, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.constants_folded, 2);
  CU_ASSERT_EQUAL(g->n_nodes, 1);
  CU_ASSERT_EQUAL(g->nodes[0].op, TSL_OP_ADD);
  tsl_graph_free(g);
}

/* ---- memory planning ---- */

static void test_plan_memory_reuses_buffers_of_a_chain(void) {
  /* a -> b -> c -> d, each read only by the next step: two buffers suffice */
  tsl_mem_request r[4] = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  int64_t off[4], peak;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_plan_memory(4, r, off, &peak), TSL_OK);
  CU_ASSERT_EQUAL(peak, 2 * 1024);
  CU_ASSERT_EQUAL(off[0], off[2]);
  CU_ASSERT_EQUAL(off[1], off[3]);
  CU_ASSERT_NOT_EQUAL(off[0], off[1]);
}

static void test_plan_memory_never_overlaps_live_tensors(void) {
  enum { N = 60 };
  tsl_mem_request r[N];
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int first = (int)((s >> 33) % 40);
    r[i] = (tsl_mem_request){(int64_t)((s >> 20) % 5000) + 1, first, first + (int)((s >> 45) % 8)};
  }
  int64_t off[N], peak, total = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_pass_plan_memory(N, r, off, &peak), TSL_OK);
  for (int i = 0; i < N; i++) {
    total += (r[i].bytes + 63) / 64 * 64;
    CU_ASSERT_EQUAL(off[i] % 64, 0);
    CU_ASSERT(off[i] + r[i].bytes <= peak);
    for (int j = 0; j < i; j++) {
      bool live = r[i].first <= r[j].last && r[j].first <= r[i].last;
      bool overlap = off[i] < off[j] + r[j].bytes && off[j] < off[i] + r[i].bytes;
      CU_ASSERT(!(live && overlap));
    }
  }
  CU_ASSERT(peak < total);
}

static void test_plan_memory_refuses_bad_requests(void) {
  tsl_mem_request r = {10, 3, 2};
  int64_t off, peak;
  CU_ASSERT_EQUAL(tsl_pass_plan_memory(1, &r, &off, &peak), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_pass_plan_memory(0, NULL, NULL, &peak), TSL_OK);
  CU_ASSERT_EQUAL(peak, 0);
  /* sizes whose aligned sum passes INT64_MAX: an error, never a wrapped offset */
  tsl_mem_request huge = {INT64_MAX, 0, 0};
  CU_ASSERT_EQUAL(tsl_pass_plan_memory(1, &huge, &off, &peak), TSL_ERR_INVALID);
  tsl_mem_request two[2] = {{INT64_C(1) << 62, 0, 1}, {INT64_C(1) << 62, 1, 2}};
  int64_t offs[2];
  CU_ASSERT_EQUAL(tsl_pass_plan_memory(2, two, offs, &peak), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "past 2^63 bytes"));
  /* 2^61 + 2^61 = 2^62 fits: both live at step 1, so one sits above the other */
  two[0].bytes = two[1].bytes = INT64_C(1) << 61;
  CU_ASSERT_EQUAL(tsl_pass_plan_memory(2, two, offs, &peak), TSL_OK);
  CU_ASSERT_EQUAL(peak, INT64_C(1) << 62);
}

/* ---- single operators on the shared edge cases ---- */

static void test_C04_grouped_conv_few_channels_per_group(void) {
  int x;
  tsl_graph *g = new_graph(1, 4, 1, 1, &x);
  int64_t ws[4] = {16, 2, 1, 1};
  tsl_tensor *w;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 4, ws, &w), TSL_OK);
  for (int i = 0; i < 32; i++) ((float *)w->data)[i] = 1.0f;
  int wid, node;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, "w", w, &wid), TSL_OK);
  int ins[2] = {x, wid};
  int y = gt_add_node(g, TSL_OP_CONV, 2, ins, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", 2), TSL_OK);
  finish(g, y);
  float in[4] = {0, 0, 0, 1};
  const float *ip[1] = {in};
  float *out[1] = {NULL};
  CU_ASSERT_EQUAL_FATAL(gt_compile_run(g, NULL, ip, out, NULL, NULL), TSL_OK);
  for (int k = 0; k < 16; k++) CU_ASSERT_EQUAL(out[0][k], k < 8 ? 0.0f : 1.0f);
  free(out[0]);
  tsl_graph_free(g);
}

static void test_C05_depthwise_dilated_conv_with_bias(void) {
  int x;
  tsl_graph *g = new_graph(1, 4, 5, 5, &x);
  int64_t ws[4] = {4, 1, 3, 3}, four = 4;
  int ins[3] = {x, add_const(g, "w", 4, ws, 1, 1.0 / 9, 1.0 / 9), add_const(g, "b", 1, &four, 2, 1.0, 1.0)}, node;
  int y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", 4), TSL_OK);
  set_ints(g, node, "dilations", 2, 2, 2, 0, 0);
  set_ints(g, node, "pads", 4, 2, 2, 2, 2);
  finish(g, y);
  check_against_reference(g, NULL, 1e-5);
  tsl_graph_free(g);
}

static void test_C06_asymmetric_padding_conv(void) {
  int x;
  tsl_graph *g = new_graph(1, 1, 32, 64, &x);
  int64_t ws[4] = {1, 1, 2, 4};
  int ins[2] = {x, add_const(g, "w", 4, ws, 1, -1.0, 1.0)}, node;
  int y = gt_add_node(g, TSL_OP_CONV, 2, ins, &node);
  set_ints(g, node, "strides", 2, 2, 1, 0, 0);
  set_ints(g, node, "pads", 4, 0, 1, 0, 2);
  finish(g, y);
  CU_ASSERT_EQUAL(g->values[y].shape[2], 16);
  CU_ASSERT_EQUAL(g->values[y].shape[3], 64);
  check_against_reference(g, NULL, 1e-5);
  tsl_graph_free(g);
}

static void test_C07_avgpool_ceil_mode_count_include_pad(void) {
  int x;
  tsl_graph *g = new_graph(1, 3, 17, 17, &x);
  int node;
  int y = gt_add_node(g, TSL_OP_AVERAGE_POOL, 1, &x, &node);
  set_ints(g, node, "kernel_shape", 2, 2, 2, 0, 0);
  set_ints(g, node, "strides", 2, 2, 2, 0, 0);
  set_ints(g, node, "pads", 4, 1, 1, 1, 1);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "ceil_mode", 1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "count_include_pad", 1), TSL_OK);
  finish(g, y);
  CU_ASSERT_EQUAL(g->values[y].shape[2], 9);
  check_against_reference(g, NULL, 1e-6);
  tsl_graph_free(g);
}

static void test_C08_maxpool_propagates_nan(void) {
  int x;
  tsl_graph *g = new_graph(1, 9, 4, 4, &x);
  int node;
  int y = gt_add_node(g, TSL_OP_MAX_POOL, 1, &x, &node);
  set_ints(g, node, "kernel_shape", 2, 2, 2, 0, 0);
  set_ints(g, node, "strides", 2, 2, 2, 0, 0);
  finish(g, y);
  float in[9 * 16];
  for (int i = 0; i < 9 * 16; i++) in[i] = (float)(i % 7) - 3.0f;
  in[0] = NAN;                                    /* first position of window (0,0,0,0) */
  in[16 + 9] = NAN;                               /* middle of window (0,1,1,0) */
  in[32 + 15] = NAN;                              /* last position of window (0,2,1,1) */
  for (int i = 0; i < 4; i++) in[48 + (i / 2) * 4 + i % 2] = NAN; /* all-NaN window (0,3,0,0) */
  const float *ip[1] = {in};
  float *out[1] = {NULL};
  CU_ASSERT_EQUAL_FATAL(gt_compile_run(g, NULL, ip, out, NULL, NULL), TSL_OK);
  CU_ASSERT(isnan(out[0][0]));
  CU_ASSERT(isnan(out[0][4 + 2]));
  CU_ASSERT(isnan(out[0][8 + 3]));
  CU_ASSERT(isnan(out[0][12]));
  CU_ASSERT(!isnan(out[0][1]) && !isnan(out[0][13]));
  free(out[0]);
  tsl_graph_free(g);
}

static void test_C13_first_conv_one_channel_wide_input(void) {
  int x;
  tsl_graph *g = new_graph(1, 1, 640, 16, &x);
  int y = conv_node(g, x, 8, 1, 3, 2, 1, true, 21);
  int r = gt_add_node(g, TSL_OP_RELU, 1, &y, NULL);
  finish(g, r);
  check_against_reference(g, NULL, 1e-5);
  tsl_graph_free(g);
}


/* ---- layout selection ---- */

/* The transforms of a CNN in NCHW[8]c sit at its edges: none from the graph input (the
 * stem conv reads its 3 plain channels directly), one back to plain before the
 * classifier's Flatten, none where a global mean writes the plain [N, C] itself (TVM
 * v0.14 tuned put 21 in SqueezeNet). */
static void check_edges_only(const char *model, int expected) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build(model, 1, &g), TSL_OK);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, 8, &stats), TSL_OK);
  /* a stem rewritten over its input's phases (passes/phase_conv.h) has one transform
   * more: its SpaceToDepth's output into the blocked layout */
  expected += stats.phase_convs;
  CU_ASSERT_EQUAL(stats.layout_transforms, expected);
  CU_ASSERT_EQUAL(tsl_graph_count_layout_transforms(g), expected);
  int convs = 0, blocked_convs = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const tsl_node *n = &g->nodes[i];
    if (n->op == TSL_OP_CONV) {
      convs++;
      blocked_convs += g->values[n->outputs[0]].layout.kind == TSL_LAYOUT_NCHWC;
    }
    if (n->op != TSL_OP_IDENTITY || !tsl_node_attr_int(n, TSL_ATTR_LAYOUT_TRANSFORM, 0)) continue;
    const tsl_value *in = &g->values[n->inputs[0]], *out = &g->values[n->outputs[0]];
    if (out->layout.kind == TSL_LAYOUT_NCHWC) {
      /* the stem conv reads the input plain, or its phases blocked */
      if (in->producer < 0 || g->nodes[in->producer].op != TSL_OP_SPACE_TO_DEPTH)
        CU_FAIL("a transform into the blocked layout");
    } else {
      /* back to plain only for the classifier: the global pool's 1x1 output */
      CU_ASSERT_FATAL(in->producer >= 0);
      CU_ASSERT(g->nodes[in->producer].op == TSL_OP_GLOBAL_AVERAGE_POOL);
      CU_ASSERT(in->shape[2] == 1 && in->shape[3] == 1);
    }
  }
  CU_ASSERT(convs > 0);
  CU_ASSERT_EQUAL(blocked_convs, convs);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  tsl_graph_free(g);
}

static void test_layout_squeezenet_transforms_only_at_the_edges(void) { check_edges_only("squeezenet1_1", 1); }
static void test_layout_resnet18_transforms_only_at_the_edges(void) { check_edges_only("resnet18", 1); }
static void test_layout_mobilenet_v2_transforms_only_at_the_edges(void) { check_edges_only("mobilenet_v2", 1); }
static void test_layout_shufflenet_v2_transforms_only_at_the_edges(void) { check_edges_only("shufflenet_v2_x1_0", 0); }

/* Reshape [1, 12, 3, 5] -> [1, 3, 4, 3, 5], Transpose (0, 2, 1, 3, 4), Reshape back: one
 * tsl.ChannelShuffle node, equal to the chain in both layouts (12 channels: a tail
 * block in NCHW[8]c). */
static void test_channel_shuffle_chain_becomes_one_node(void) {
  int x;
  tsl_graph *g = new_graph(1, 12, 3, 5, &x);
  int y = conv_node(g, x, 12, 12, 1, 1, 0, true, 5), node;
  int r1 = gt_add_node(g, TSL_OP_RESHAPE, 1, &y, &node);
  int64_t s5[5] = {1, 3, 4, 3, 5}, s4[4] = {1, 12, 3, 5}, perm[5] = {0, 2, 1, 3, 4};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "shape", 5, s5), TSL_OK);
  int t = gt_add_node(g, TSL_OP_TRANSPOSE, 1, &r1, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "perm", 5, perm), TSL_OK);
  int r2 = gt_add_node(g, TSL_OP_RESHAPE, 1, &t, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "shape", 4, s4), TSL_OK);
  int z = conv_node(g, r2, 8, 12, 1, 1, 0, true, 7);
  finish(g, z);
  check_against_reference(g, NULL, 1e-5);
  tsl_compile_options plain = {.no_layout = true};
  check_against_reference(g, &plain, 1e-5);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(g, 8, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.channel_shuffles, 1);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_CHANNEL_SHUFFLE), 1);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_TRANSPOSE), 0);
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_RESHAPE), 0);
  CU_ASSERT_EQUAL(stats.layout_transforms, 2);
  tsl_graph_free(g);
}

/* Blocked kernels on channel counts that are not multiples of the block: concat of 12
 * and 3 channels, a channel slice starting mid-block, batch norm, average pool, Relu. */
static void test_layout_blocked_ops_on_channel_tails(void) {
  int x;
  tsl_graph *g = new_graph(1, 5, 7, 6, &x);
  int a = conv_node(g, x, 12, 5, 3, 1, 1, true, 1);
  int b = conv_node(g, x, 3, 5, 1, 1, 0, false, 2);
  int ab[2] = {a, b}, node;
  int cat = gt_add_node(g, TSL_OP_CONCAT, 2, ab, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", 1), TSL_OK);
  int sl = gt_add_node(g, TSL_OP_SLICE, 1, &cat, &node);
  set_ints(g, node, "starts", 1, 3, 0, 0, 0);
  set_ints(g, node, "ends", 1, 14, 0, 0, 0);
  set_ints(g, node, "axes", 1, 1, 0, 0, 0);
  int bn = bn_node(g, sl, 11, 30);
  int pool = gt_add_node(g, TSL_OP_AVERAGE_POOL, 1, &bn, &node);
  set_ints(g, node, "kernel_shape", 2, 2, 2, 0, 0);
  set_ints(g, node, "pads", 4, 1, 0, 1, 0);
  int r = gt_add_node(g, TSL_OP_RELU, 1, &pool, NULL);
  int gp = gt_add_node(g, TSL_OP_GLOBAL_AVERAGE_POOL, 1, &r, NULL);
  finish(g, gp);
  check_against_reference(g, NULL, 1e-5);
  tsl_graph *o;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &o), TSL_OK);
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL(tsl_graph_optimize(o, 8, &stats), TSL_OK);
  /* the 5-channel input read plain by both convs; back to plain for the output */
  CU_ASSERT_EQUAL(stats.layout_transforms, 1);
  tsl_graph_free(o);
  tsl_graph_free(g);
}

void tsl_tests_graph_passes(void) {
  CU_pSuite s = CU_add_suite("graph_passes", NULL, NULL);
  CU_add_test(s, "batch_norm_folds_into_conv_and_relu_fuses", test_batch_norm_folds_into_conv_and_relu_fuses);
  CU_add_test(s, "batch_norm_alone_runs_as_its_own_kernel", test_batch_norm_alone_runs_as_its_own_kernel);
  CU_add_test(s, "residual_add_and_relu_fuse_into_the_later_conv", test_residual_add_and_relu_fuse_into_the_later_conv);
  CU_add_test(s, "fusion_keeps_a_conv_output_that_is_read_elsewhere",
              test_fusion_keeps_a_conv_output_that_is_read_elsewhere);
  CU_add_test(s, "clip_fuses_as_relu6", test_clip_fuses_as_relu6);
  CU_add_test(s, "constant_subgraph_is_folded_at_compile_time", test_constant_subgraph_is_folded_at_compile_time);
  CU_add_test(s, "layout_squeezenet_transforms_only_at_the_edges", test_layout_squeezenet_transforms_only_at_the_edges);
  CU_add_test(s, "layout_resnet18_transforms_only_at_the_edges", test_layout_resnet18_transforms_only_at_the_edges);
  CU_add_test(s, "layout_mobilenet_v2_transforms_only_at_the_edges", test_layout_mobilenet_v2_transforms_only_at_the_edges);
  CU_add_test(s, "layout_shufflenet_v2_transforms_only_at_the_edges", test_layout_shufflenet_v2_transforms_only_at_the_edges);
  CU_add_test(s, "layout_blocked_ops_on_channel_tails", test_layout_blocked_ops_on_channel_tails);
  CU_add_test(s, "channel_shuffle_chain_becomes_one_node", test_channel_shuffle_chain_becomes_one_node);
  CU_add_test(s, "plan_memory_reuses_buffers_of_a_chain", test_plan_memory_reuses_buffers_of_a_chain);
  CU_add_test(s, "plan_memory_never_overlaps_live_tensors", test_plan_memory_never_overlaps_live_tensors);
  CU_add_test(s, "plan_memory_refuses_bad_requests", test_plan_memory_refuses_bad_requests);
  CU_add_test(s, "C04_grouped_conv_few_channels_per_group", test_C04_grouped_conv_few_channels_per_group);
  CU_add_test(s, "C05_depthwise_dilated_conv_with_bias", test_C05_depthwise_dilated_conv_with_bias);
  CU_add_test(s, "C06_asymmetric_padding_conv", test_C06_asymmetric_padding_conv);
  CU_add_test(s, "C07_avgpool_ceil_mode_count_include_pad", test_C07_avgpool_ceil_mode_count_include_pad);
  CU_add_test(s, "C08_maxpool_propagates_nan", test_C08_maxpool_propagates_nan);
  CU_add_test(s, "C13_first_conv_one_channel_wide_input", test_C13_first_conv_one_channel_wide_input);
}
