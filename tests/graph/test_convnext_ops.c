/* ConvNeXt's operators through the graph compiler (their generators in ops/nn: reduce,
 * layer_norm, pow; Sub in the elementwise kernels; MatMul on the last axis of 4-D data,
 * Transpose) against the reference executor (tests/ref/ref_graph.c), at the host's lanes
 * (both x86 passes cover 8 and 16): reductions over any axes with and without keepdims,
 * NaN through max and min, Pow's exponents, broadcasting Sub and Pow, LayerNormalization
 * over one or several trailing axes with broadcast scale and bias and its statistics
 * outputs, a ConvNeXt-style channels-last block, every 4-D permutation; and the
 * generators' refusals. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "ops/op_call.h"

static tsl_graph *new_graph(int ndim, const int64_t *shape, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, ndim, shape, x), TSL_OK);
  return g;
}

static int binary(tsl_graph *g, tsl_op op, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, op, 2, ins, NULL);
}

/* max |got - want| / max |want| over the points where want is a number; NaN in want must be
 * NaN in got (and the other way round). */
static double err_nan_aware(const float *got, const float *want, int64_t n) {
  double scale = 0, err = 0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(want[i]) || isnan(got[i])) {
      if (isnan(want[i]) != isnan(got[i])) return INFINITY;
      continue;
    }
    scale = fmax(scale, fabs((double)want[i]));
    err = fmax(err, fabs((double)got[i] - (double)want[i]));
  }
  return err / (scale > 0 ? scale : 1);
}

/* Compiles g and runs it and the reference on one seeded input in [lo, hi) (a NaN at
 * element nan_at >= 0); every output within tol of the reference. Returns the plan's
 * layout transform steps. */
static int check(const tsl_graph *g, const char *what, double tol, double lo, double hi, int64_t nan_at) {
  int64_t n = gt_numel(g, g->inputs[0]);
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, 77, lo, hi), TSL_OK);
  float *x = t->data;
  if (nan_at >= 0) x[nan_at] = NAN;
  const float *ins[1] = {x};
  float *got[4] = {0}, *want[4] = {0};
  int transforms = -1;
  tsl_status st = gt_compile_run(g, NULL, ins, got, NULL, &transforms);
  if (st != TSL_OK) printf("\n  %s: %s", what, tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  CU_ASSERT_EQUAL(gt_reference_run(g, ins, want), TSL_OK);
  for (int k = 0; k < g->n_outputs && st == TSL_OK; k++) {
    double e = err_nan_aware(got[k], want[k], gt_numel(g, g->outputs[k]));
    if (!(e <= tol)) printf("\n  %s output %d: relative error %.3g", what, k, e);
    CU_ASSERT(e <= tol);
  }
  for (int k = 0; k < 4; k++) free(got[k]), free(want[k]);
  tsl_tensor_free(t);
  return transforms;
}

static void finish(tsl_graph *g, int y) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
}

static const tsl_op reduce_ops[4] = {TSL_OP_REDUCE_SUM, TSL_OP_REDUCE_MEAN, TSL_OP_REDUCE_MAX, TSL_OP_REDUCE_MIN};

static int reduce(tsl_graph *g, tsl_op op, int x, int na, const int64_t *axes, int keepdims) {
  int node, y = gt_add_node(g, op, 1, &x, &node);
  if (na >= 0) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "axes", na, axes), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "keepdims", keepdims), TSL_OK);
  return y;
}

/* every reduction over the last axis (LayerNorm's), the middle ones, two apart, all of
 * them into a scalar, negative axes; keepdims 0 and 1 */
static void test_reductions_over_any_axes(void) {
  static const struct {
    int na;
    int64_t axes[4];
    int keepdims, out_rank;
  } cases[] = {{1, {3}, 1, 4}, {2, {1, 2}, 0, 2}, {2, {0, 2}, 1, 4}, {4, {0, 1, 2, 3}, 0, 0},
               {2, {-1, -3}, 0, 2}, {1, {1}, 1, 4}, {-1, {0}, 1, 4}};
  int64_t s[4] = {2, 5, 6, 17};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int o = 0; o < 4; o++) {
      int x;
      tsl_graph *g = new_graph(4, s, &x);
      int y = reduce(g, reduce_ops[o], x, cases[c].na, cases[c].axes, cases[c].keepdims);
      finish(g, y);
      CU_ASSERT_EQUAL(g->values[y].ndim, cases[c].out_rank);
      char what[96];
      snprintf(what, sizeof what, "%s case %zu", tsl_op_name(reduce_ops[o]), c);
      check(g, what, 2e-6, -2.0, 2.0, -1);
      tsl_graph_free(g);
    }
}

/* max and min propagate a NaN into its row only */
static void test_reduce_max_min_propagate_nan(void) {
  int64_t s[3] = {3, 4, 21}, last = 2;
  for (int o = 2; o < 4; o++) {
    int x;
    tsl_graph *g = new_graph(3, s, &x);
    finish(g, reduce(g, reduce_ops[o], x, 1, &last, 0));
    check(g, tsl_op_name(reduce_ops[o]), 0.0, -1.0, 1.0, 5 * 21 + 7);
    tsl_graph_free(g);
  }
}

/* Issue 16 part 4: by default, a reduction (an operator with no template) gets the
 * auto-scheduler's kernel (tuner/autosched.h: the first sketch's default, no records here),
 * counted in the compile stats, with the reference executor's outputs: a global mean (a small spatial
 * output, a large reduction: rfactor's case) and a row max. */
static void test_reductions_get_auto_scheduled_kernels(void) {
  static const struct {
    tsl_op op;
    int ndim, na;
    int64_t shape[4], axes[2];
  } cases[] = {{TSL_OP_REDUCE_MEAN, 4, 2, {1, 24, 28, 28}, {2, 3}}, {TSL_OP_REDUCE_MAX, 2, 1, {40, 300}, {1}}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    int x;
    tsl_graph *g = new_graph(cases[c].ndim, cases[c].shape, &x);
    finish(g, reduce(g, cases[c].op, x, cases[c].na, cases[c].axes, 1));
    int64_t n = gt_numel(g, x), m = gt_numel(g, g->outputs[0]);
    float *in = gt_random(n, 3 + c, -2.0, 2.0), *got[1] = {NULL}, *want[1] = {NULL};
    const float *ins[1] = {in};
    tsl_compile_stats stats;
    memset(&stats, 0, sizeof stats);
    tsl_compile_options o;
    memset(&o, 0, sizeof o); /* auto-scheduled kernels: the default */
    tsl_status st = gt_compile_run(g, &o, ins, got, &stats, NULL);
    if (st != TSL_OK) printf("\n  %s: %s", tsl_op_name(cases[c].op), tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    CU_ASSERT_EQUAL(stats.auto_kernels, 1);
    CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
    double e = gt_rel_err(got[0], want[0], m);
    if (!(e <= 1e-5)) printf("\n  %s: relative error %.3g", tsl_op_name(cases[c].op), e);
    CU_ASSERT(e <= 1e-5);
    free(in);
    free(got[0]);
    free(want[0]);
    tsl_graph_free(g);
  }
}

/* Pow with a constant exponent (x*x, sqrt, 1/x, 1, pow()) and two broadcast inputs; Sub
 * broadcasting both ways */
static void test_pow_exponents_and_broadcasting_sub_pow(void) {
  static const double exps[] = {2.0, 3.0, 0.5, -1.0, 0.0, 1.0, 1.7, -2.5};
  int64_t s[3] = {3, 5, 19};
  for (size_t e = 0; e < sizeof exps / sizeof exps[0]; e++) {
    int x, node;
    tsl_graph *g = new_graph(3, s, &x);
    int y = gt_add_node(g, TSL_OP_POW, 1, &x, &node);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "exponent", exps[e]), TSL_OK);
    finish(g, y);
    char what[64];
    snprintf(what, sizeof what, "pow %g", exps[e]);
    check(g, what, 1e-6, 0.25, 3.0, -1);
    tsl_graph_free(g);
  }
  int64_t xs[3] = {3, 1, 5}, ys[2] = {4, 1}, zs[2] = {4, 5};
  int x;
  tsl_graph *g = new_graph(3, xs, &x);
  int p = binary(g, TSL_OP_POW, x, gt_add_const(g, 2, ys, 3, -2.0, 2.0)); /* [3, 4, 5] */
  int d = binary(g, TSL_OP_SUB, gt_add_const(g, 2, zs, 4, -1.0, 1.0), p); /* [4, 5] - [3, 4, 5] */
  finish(g, binary(g, TSL_OP_SUB, d, x));                                 /* - [3, 1, 5] */
  check(g, "pow and sub broadcast", 1e-6, 0.5, 2.0, -1);
  tsl_graph_free(g);
}

static int layer_norm(tsl_graph *g, int x, int scale, int bias, int axis, int nout, int *outs) {
  int ins[3] = {x, scale, bias}, node;
  for (int k = 0; k < nout; k++) CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, NULL, &outs[k]), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_LAYER_NORM, NULL, bias >= 0 ? 3 : 2, ins, nout, outs, &node), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", axis), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "epsilon", 1e-3), TSL_OK);
  return outs[0];
}

/* LayerNormalization: over the last axis (ConvNeXt's), over two axes with a scale and a
 * bias that broadcast inside them, over every axis with the Mean and InvStdDev outputs */
static void test_layer_norm_axes_broadcast_and_statistics(void) {
  int x, outs[3];
  int64_t s1[4] = {1, 7, 5, 24}, c1[1] = {24};
  tsl_graph *g = new_graph(4, s1, &x);
  finish(g, layer_norm(g, x, gt_add_const(g, 1, c1, 1, 0.5, 1.5), gt_add_const(g, 1, c1, 2, -0.5, 0.5), -1, 1, outs));
  check(g, "layer_norm last axis", 1e-5, -3.0, 5.0, -1);
  tsl_graph_free(g);

  int64_t s2[3] = {2, 6, 5}, sc2[2] = {6, 5}, b2[1] = {5};
  g = new_graph(3, s2, &x);
  finish(g, layer_norm(g, x, gt_add_const(g, 2, sc2, 3, 0.5, 1.5), gt_add_const(g, 1, b2, 4, -0.5, 0.5), 1, 1, outs));
  check(g, "layer_norm axes 1..2", 1e-5, -1.0, 1.0, -1);
  tsl_graph_free(g);

  int64_t s3[3] = {3, 4, 8}, sc3[2] = {4, 1};
  g = new_graph(3, s3, &x);
  layer_norm(g, x, gt_add_const(g, 2, sc3, 5, 0.5, 1.5), -1, 0, 3, outs);
  for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, outs[k]), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  CU_ASSERT_EQUAL(g->values[outs[1]].ndim, 3);
  CU_ASSERT_EQUAL(gt_numel(g, outs[2]), 1);
  check(g, "layer_norm every axis, statistics", 1e-5, 2.0, 4.0, -1);
  tsl_graph_free(g);
}

static int conv1x1(tsl_graph *g, int x, int64_t cin, int64_t cout, uint64_t seed) {
  int64_t ws[4] = {cout, cin, 1, 1};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.5, 0.5), gt_add_const(g, 1, &cout, seed + 1, -0.2, 0.2)};
  return gt_add_node(g, TSL_OP_CONV, 3, ins, NULL);
}

/* LayerNormalization over the channel axis only (tsl_norm_end 2, what the channels-first
 * pass makes of ConvNeXt's LayerNorm2d): plain NCHW, and blocked between two convs with a
 * channel tail (C = 19: one full block of 16 and 3 lanes, or two of 8 and 3) so that it
 * runs in NCHW[x]c with padding lanes in and out. */
static void test_layer_norm_over_channels_plain_and_blocked(void) {
  int x, outs[1], node;
  int64_t s[4] = {2, 19, 5, 7}, c[1] = {19};
  for (int blocked = 0; blocked < 2; blocked++) {
    tsl_graph *g = new_graph(4, s, &x);
    int v = blocked ? conv1x1(g, x, 19, 19, 9) : x;
    v = layer_norm(g, v, gt_add_const(g, 1, c, 1, 0.5, 1.5), gt_add_const(g, 1, c, 2, -0.5, 0.5), 1, 1, outs);
    node = g->values[v].producer;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, TSL_ATTR_NORM_END, 2), TSL_OK);
    finish(g, blocked ? conv1x1(g, v, 19, 6, 12) : v);
    int transforms = check(g, blocked ? "layer_norm over channels, blocked" : "layer_norm over channels", 1e-5, -2.0, 2.0, -1);
    /* blocked from the first conv to the last; the first reads the plain input when 19
     * channels leave more than a quarter of its lanes zero (16 lanes: 13 of 32) */
    CU_ASSERT_EQUAL(transforms, !blocked ? 0 : gt_conv_reads_plain(19) ? 1 : 2);
    tsl_graph_free(g);
  }
}

static int transpose(tsl_graph *g, int x, const int64_t *perm) {
  int node, y = gt_add_node(g, TSL_OP_TRANSPOSE, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "perm", 4, perm), TSL_OK);
  return y;
}

/* ConvNeXt's block on NCHW data: to NHWC, LayerNorm, MatMul [C, 4C] + bias, Gelu, MatMul
 * [4C, C] + bias, back to NCHW; then every permutation of a 4-D transpose */
static void test_channels_last_block_and_every_permutation(void) {
  int x;
  int64_t s[4] = {1, 12, 5, 7}, c[1] = {12}, w1[2] = {12, 48}, b1[1] = {48}, w2[2] = {48, 12};
  static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
  tsl_graph *g = new_graph(4, s, &x);
  int outs[1], node;
  int v = transpose(g, x, to_nhwc);
  v = layer_norm(g, v, gt_add_const(g, 1, c, 1, 0.5, 1.5), gt_add_const(g, 1, c, 2, -0.2, 0.2), -1, 1, outs);
  v = binary(g, TSL_OP_ADD, binary(g, TSL_OP_MATMUL, v, gt_add_const(g, 2, w1, 3, -0.3, 0.3)), gt_add_const(g, 1, b1, 4, -0.1, 0.1));
  v = gt_add_node(g, TSL_OP_ACTIVATION, 1, &v, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", "Gelu"), TSL_OK);
  v = binary(g, TSL_OP_ADD, binary(g, TSL_OP_MATMUL, v, gt_add_const(g, 2, w2, 5, -0.3, 0.3)), gt_add_const(g, 1, c, 6, -0.1, 0.1));
  finish(g, binary(g, TSL_OP_ADD, transpose(g, v, to_nchw), x));
  check(g, "channels-last block", 1e-5, -2.0, 2.0, -1);
  tsl_graph_free(g);

  int64_t s4[4] = {2, 3, 4, 5};
  int np = 0;
  for (int64_t p = 0; p < 256; p++) {
    int64_t perm[4] = {p & 3, (p >> 2) & 3, (p >> 4) & 3, (p >> 6) & 3};
    if ((1 << perm[0] | 1 << perm[1] | 1 << perm[2] | 1 << perm[3]) != 15) continue;
    g = new_graph(4, s4, &x);
    finish(g, transpose(g, x, perm));
    check(g, "transpose", 0.0, -1.0, 1.0, -1);
    tsl_graph_free(g);
    np++;
  }
  CU_ASSERT_EQUAL(np, 24);
}

/* The generators refuse what they cannot write, saying which attribute and why. */
static void test_generators_refuse_clearly(void) {
  tsl_op_call c = {0};
  int64_t s[2] = {4, 6}, o[1] = {4}, bad = 2;
  tsl_op_call_add_tensor(&c, 2, s, 0);
  tsl_op_call_add_tensor(&c, 1, o, 0);
  c.ninputs = 1;
  tsl_op_call_set_ints(&c, "axes", 1, &bad);
  tsl_op_call_set_string(&c, "function", "mean");
  tsl_op_text t;
  CU_ASSERT_EQUAL(tsl_op_generate("reduce", &c, &t), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "axis 2"));
  c.attrs[0].ints[0] = 1;
  c.attrs[1].s = "median";
  CU_ASSERT_EQUAL(tsl_op_generate("reduce", &c, &t), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "median"));
  c.attrs[1].s = "max";
  CU_ASSERT_EQUAL_FATAL(tsl_op_generate("reduce", &c, &t), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(t.text.s, "max(r1: x0[k0, r1])"));
  free(t.text.s);
  tsl_op_call p = {0};
  tsl_op_call_add_tensor(&p, 2, s, 0);
  tsl_op_call_add_tensor(&p, 2, s, 0);
  p.ninputs = 1;
  CU_ASSERT_EQUAL(tsl_op_generate("pow", &p, &t), TSL_ERR_INVALID); /* no exponent */
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "exponent"));
  tsl_op_call l = {0};
  int64_t x4[4] = {1, 16, 3, 3}, sc[1] = {3};
  tsl_op_call_add_tensor(&l, 4, x4, 8); /* blocked */
  tsl_op_call_add_tensor(&l, 1, sc, 0);
  tsl_op_call_add_tensor(&l, 4, x4, 8);
  l.ninputs = 2;
  CU_ASSERT_EQUAL(tsl_op_generate("layer_norm", &l, &t), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "blocked"));
}

void tsl_tests_graph_convnext_ops(void) {
  CU_pSuite s = CU_add_suite("graph_convnext_ops", NULL, NULL);
  CU_add_test(s, "reductions_over_any_axes", test_reductions_over_any_axes);
  CU_add_test(s, "reduce_max_min_propagate_nan", test_reduce_max_min_propagate_nan);
  CU_add_test(s, "reductions_get_auto_scheduled_kernels", test_reductions_get_auto_scheduled_kernels);
  CU_add_test(s, "pow_exponents_and_broadcasting_sub_pow", test_pow_exponents_and_broadcasting_sub_pow);
  CU_add_test(s, "layer_norm_axes_broadcast_and_statistics", test_layer_norm_axes_broadcast_and_statistics);
  CU_add_test(s, "layer_norm_over_channels_plain_and_blocked", test_layer_norm_over_channels_plain_and_blocked);
  CU_add_test(s, "channels_last_block_and_every_permutation", test_channels_last_block_and_every_permutation);
  CU_add_test(s, "generators_refuse_clearly", test_generators_refuse_clearly);
}
