/* The layer-norm and GELU recognition passes (models/passes/layer_norm.h, fuse_gelu.h):
 * their spellings become one node, what is not the pattern stays, and every graph run
 * compiled matches the reference executor on the graph before the pass; then ConvNeXt
 * (../shared/models_v2/convnext_nano.onnx) against ONNX Runtime. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "models/models_util.h"
#include "models/onnx.h"
#include "models/passes/channels_first.h"
#include "models/passes/fuse_gelu.h"
#include "models/passes/layer_norm.h"
#include "tessel/tessel.h"

static int scalar(tsl_graph *g, float v) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 0, NULL, &t), TSL_OK);
  *(float *)t->data = v;
  int id;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, NULL, t, &id), TSL_OK);
  return id;
}

static int constant(tsl_graph *g, int ndim, const int64_t *shape, uint64_t seed) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, seed, 0.5, 1.5), TSL_OK);
  int id;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, NULL, t, &id), TSL_OK);
  return id;
}

static int op2(tsl_graph *g, tsl_op op, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, op, 2, ins, NULL);
}

static int fn(tsl_graph *g, const char *f, int x) {
  int node, y = gt_add_node(g, TSL_OP_ACTIVATION, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", f), TSL_OK);
  return y;
}

static int mean(tsl_graph *g, int x, int na, const int64_t *axes) {
  int node, y = gt_add_node(g, TSL_OP_REDUCE_MEAN, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "axes", na, axes), TSL_OK);
  return y;
}

static tsl_graph *new_graph(int ndim, const int64_t *shape, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, ndim, shape, x), TSL_OK);
  return g;
}

/* The spellings of a written-out layer norm over the last na axes. */
enum { TORCH = 0, MUL_SQUARE_RECIPROCAL = 1, NO_AFFINE = 2, CHANNELS_FIRST = 3 };

static int decomposed_layer_norm(tsl_graph *g, int x, int na, int form, int *mean_out) {
  const tsl_value *xv = &g->values[x];
  int rank = xv->ndim;
  int64_t axes[4], tail[4];
  for (int i = 0; i < na; i++) {
    axes[i] = i - na; /* negative, as exporters write them */
    tail[i] = xv->shape[rank - na + i];
  }
  if (form == CHANNELS_FIRST) { /* the original ConvNeXt's LayerNorm of NCHW data: axis 1, gamma [C, 1, 1] */
    axes[0] = 1;
    tail[0] = xv->shape[1];
    tail[1] = tail[2] = 1;
  }
  int m = mean(g, x, na, axes), d = op2(g, TSL_OP_SUB, x, m), sq;
  if (mean_out) *mean_out = m;
  if (form == MUL_SQUARE_RECIPROCAL) {
    sq = op2(g, TSL_OP_MUL, d, d);
  } else {
    int node;
    sq = gt_add_node(g, TSL_OP_POW, 1, &d, &node);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "exponent", 2.0), TSL_OK);
  }
  int var = mean(g, sq, na, axes);
  int ve = form == MUL_SQUARE_RECIPROCAL ? op2(g, TSL_OP_ADD, scalar(g, 1e-6f), var) : op2(g, TSL_OP_ADD, var, scalar(g, 1e-6f));
  int sd = fn(g, "Sqrt", ve), n;
  if (form == MUL_SQUARE_RECIPROCAL) n = op2(g, TSL_OP_MUL, fn(g, "Reciprocal", sd), d);
  else n = op2(g, TSL_OP_DIV, d, sd);
  if (form == NO_AFFINE) return n;
  if (form == CHANNELS_FIRST) return op2(g, TSL_OP_ADD, op2(g, TSL_OP_MUL, constant(g, 3, tail, 7), n), constant(g, 3, tail, 8));
  int gamma = constant(g, na, tail, 7), beta = constant(g, 1, &tail[na - 1], 8);
  if (form == TORCH) return op2(g, TSL_OP_ADD, op2(g, TSL_OP_MUL, n, gamma), beta);
  return op2(g, TSL_OP_ADD, beta, op2(g, TSL_OP_MUL, gamma, n));
}

/* Runs pass on a copy of g, then the copy compiled against the reference on g; returns the
 * pass's count. */
static int pass_and_check(const tsl_graph *g, tsl_status (*pass)(tsl_graph *, int *), double tol) {
  tsl_graph *c;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &c), TSL_OK);
  int found = -1;
  CU_ASSERT_EQUAL_FATAL(pass(c, &found), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_check(c), TSL_OK);
  int64_t n = gt_numel(g, g->inputs[0]);
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, 11, -3.0, 3.0), TSL_OK);
  const float *ins[1] = {t->data};
  float *got[2] = {0}, *want[2] = {0};
  CU_ASSERT_EQUAL(gt_compile_run(c, NULL, ins, got, NULL, NULL), TSL_OK);
  CU_ASSERT_EQUAL(gt_reference_run(g, ins, want), TSL_OK);
  for (int k = 0; k < g->n_outputs; k++)
    if (got[k] && want[k]) {
      double e = gt_rel_err(got[k], want[k], gt_numel(g, g->outputs[k]));
      if (!(e <= tol)) printf("\n  output %d: relative error %.3g", k, e);
      CU_ASSERT(e <= tol);
    }
  for (int k = 0; k < 2; k++) free(got[k]), free(want[k]);
  tsl_tensor_free(t);
  tsl_graph_free(c);
  return found;
}

static int count_op(const tsl_graph *g, tsl_op op) { return tsl_graph_count_op(g, op); }

/* PyTorch's form over the last axis of NHWC data, a form with Mul(d, d) and a reciprocal
 * over the last two axes, one without gamma and beta on 3-D data, the original ConvNeXt's
 * over the channels of NCHW data: each one node */
static void test_layer_norm_spellings_become_one_node(void) {
  static const struct {
    int rank, na, form;
    int64_t shape[4];
  } cases[] = {{4, 1, TORCH, {1, 6, 5, 24}}, {4, 2, MUL_SQUARE_RECIPROCAL, {2, 3, 5, 8}}, {3, 1, NO_AFFINE, {4, 9, 33}},
               {4, 1, CHANNELS_FIRST, {2, 20, 5, 6}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int x;
    tsl_graph *g = new_graph(cases[i].rank, cases[i].shape, &x);
    int y = decomposed_layer_norm(g, x, cases[i].na, cases[i].form, NULL);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, fn(g, "Tanh", y)), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    CU_ASSERT_EQUAL(pass_and_check(g, tsl_pass_layer_norm, 1e-5), 1);
    tsl_graph *c;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &c), TSL_OK);
    CU_ASSERT_EQUAL(tsl_pass_layer_norm(c, NULL), TSL_OK);
    CU_ASSERT_EQUAL(c->n_nodes, 2); /* LayerNormalization, Tanh */
    CU_ASSERT_EQUAL(count_op(c, TSL_OP_LAYER_NORM), 1);
    bool cf = cases[i].form == CHANNELS_FIRST;
    CU_ASSERT_EQUAL(tsl_node_attr_int(&c->nodes[0], "axis", -1), cf ? 1 : cases[i].rank - cases[i].na);
    CU_ASSERT_EQUAL(tsl_node_attr_int(&c->nodes[0], TSL_ATTR_NORM_END, -1), cf ? 2 : -1);
    CU_ASSERT(fabs(tsl_node_attr_float(&c->nodes[0], "epsilon", 0) - 1e-6) < 1e-12);
    tsl_graph_free(c);
    tsl_graph_free(g);
  }
}

/* Not the pattern: the mean read elsewhere, the result a graph output, a reduction over
 * axes that are not adjacent, a non-constant epsilon. The graph then stays (and still computes). */
static void test_layer_norm_lookalikes_stay(void) {
  int64_t s[3] = {2, 5, 16};
  for (int k = 0; k < 4; k++) {
    int x, m;
    tsl_graph *g = new_graph(3, s, &x);
    int y;
    if (k == 2) { /* over axes 0 and 2 of 3: not adjacent */
      int64_t ax[2] = {0, 2};
      int mm = mean(g, x, 2, ax), d = op2(g, TSL_OP_SUB, x, mm);
      int v = mean(g, op2(g, TSL_OP_MUL, d, d), 2, ax);
      y = op2(g, TSL_OP_DIV, d, fn(g, "Sqrt", op2(g, TSL_OP_ADD, v, scalar(g, 1e-5f))));
    } else if (k == 3) { /* eps computed from x */
      int64_t ax[1] = {-1};
      int mm = mean(g, x, 1, ax), d = op2(g, TSL_OP_SUB, x, mm);
      int v = mean(g, op2(g, TSL_OP_MUL, d, d), 1, ax);
      y = op2(g, TSL_OP_DIV, d, fn(g, "Sqrt", op2(g, TSL_OP_ADD, v, fn(g, "Abs", mm))));
    } else {
      y = decomposed_layer_norm(g, x, 1, TORCH, &m);
    }
    if (k == 1) {
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
    } else {
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, fn(g, "Neg", y)), TSL_OK);
    }
    if (k == 0) CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, m), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    CU_ASSERT_EQUAL(pass_and_check(g, tsl_pass_layer_norm, 1e-5), 0);
    tsl_graph_free(g);
  }
}

/* x * A * 0.5 with A = 1 + erf(x / sqrt 2), in the associations and spellings exporters
 * write: each becomes one Gelu */
static void test_gelu_spellings_fuse(void) {
  int64_t s[4] = {1, 3, 5, 20};
  for (int form = 0; form < 5; form++) {
    int x;
    tsl_graph *g = new_graph(4, s, &x);
    int scaled = form == 4 ? op2(g, TSL_OP_MUL, scalar(g, 0.70710677f), x) : op2(g, TSL_OP_DIV, x, scalar(g, 1.4142135f));
    int e = fn(g, "Erf", scaled);
    int a = form % 2 ? op2(g, TSL_OP_ADD, scalar(g, 1.0f), e) : op2(g, TSL_OP_ADD, e, scalar(g, 1.0f)), y;
    switch (form) {
    case 0: y = op2(g, TSL_OP_MUL, op2(g, TSL_OP_MUL, x, a), scalar(g, 0.5f)); break;          /* torch */
    case 1: y = op2(g, TSL_OP_MUL, x, op2(g, TSL_OP_MUL, a, scalar(g, 0.5f))); break;          /* x (A 0.5) */
    case 2: y = op2(g, TSL_OP_MUL, op2(g, TSL_OP_MUL, scalar(g, 0.5f), x), a); break;          /* (0.5 x) A */
    case 3: y = op2(g, TSL_OP_MUL, op2(g, TSL_OP_MUL, scalar(g, 0.5f), a), x); break;          /* (0.5 A) x */
    default: y = op2(g, TSL_OP_MUL, scalar(g, 0.5f), op2(g, TSL_OP_MUL, a, x)); break;         /* 0.5 (A x) */
    }
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, fn(g, "Neg", y)), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    CU_ASSERT_EQUAL(pass_and_check(g, tsl_pass_fuse_gelu, 2e-6), 1);
    tsl_graph *c;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &c), TSL_OK);
    CU_ASSERT_EQUAL(tsl_pass_fuse_gelu(c, NULL), TSL_OK);
    CU_ASSERT_EQUAL(c->n_nodes, 2); /* Gelu, Neg */
    tsl_graph_free(c);
    tsl_graph_free(g);
  }
}

/* Not GELU: erf's output read elsewhere, another constant (x / 2), the result a graph output */
static void test_gelu_lookalikes_stay(void) {
  int64_t s[2] = {7, 9};
  for (int k = 0; k < 3; k++) {
    int x;
    tsl_graph *g = new_graph(2, s, &x);
    int e = fn(g, "Erf", op2(g, TSL_OP_DIV, x, scalar(g, k == 1 ? 2.0f : 1.4142135f)));
    int y = op2(g, TSL_OP_MUL, op2(g, TSL_OP_MUL, x, op2(g, TSL_OP_ADD, e, scalar(g, 1.0f))), scalar(g, 0.5f));
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, k == 2 ? y : fn(g, "Neg", y)), TSL_OK);
    if (k == 0) CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, e), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    CU_ASSERT_EQUAL(pass_and_check(g, tsl_pass_fuse_gelu, 2e-6), 0);
    tsl_graph_free(g);
  }
}

static int transpose(tsl_graph *g, int x, const int64_t *perm) {
  int node, y = gt_add_node(g, TSL_OP_TRANSPOSE, 1, &x, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "perm", 4, perm), TSL_OK);
  return y;
}

static int layer_norm_last(tsl_graph *g, int x, int64_t c) {
  int ins[3] = {x, constant(g, 1, &c, 21), constant(g, 1, &c, 22)}, node;
  int y = gt_add_node(g, TSL_OP_LAYER_NORM, 3, ins, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "epsilon", 1e-6), TSL_OK);
  return y;
}

static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};

/* ConvNeXt's block on [1, C, H, W] after a depthwise 3x3 conv: to NHWC, LayerNorm, MatMul [C, 4C] + bias, Gelu, MatMul
 * [4C, C] + bias, back to NCHW, layer scale [C, 1, 1], + input. `shared` also lists the
 * LayerNorm's output as a graph output (then the chain must stay). */
static tsl_graph *convnext_block(int64_t C, bool shared) {
  int x;
  int64_t s[4] = {1, C, 9, 7}, w1[2] = {C, 4 * C}, b1[1] = {4 * C}, w2[2] = {4 * C, C}, ls[3] = {C, 1, 1};
  int64_t dw[4] = {C, 1, 3, 3}, pads[4] = {1, 1, 1, 1};
  tsl_graph *g = new_graph(4, s, &x);
  int node, ins[3] = {x, constant(g, 4, dw, 20), constant(g, 1, &C, 28)};
  x = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", C), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
  int ln = layer_norm_last(g, transpose(g, x, to_nhwc), C);
  int v = op2(g, TSL_OP_ADD, op2(g, TSL_OP_MATMUL, ln, constant(g, 2, w1, 23)), constant(g, 1, b1, 24));
  v = fn(g, "Gelu", v);
  v = op2(g, TSL_OP_ADD, constant(g, 1, &C, 26), op2(g, TSL_OP_MATMUL, v, constant(g, 2, w2, 25)));
  v = op2(g, TSL_OP_MUL, transpose(g, v, to_nchw), constant(g, 3, ls, 27));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, op2(g, TSL_OP_ADD, v, x)), TSL_OK);
  if (shared) CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, ln), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  return g;
}

/* The block becomes LayerNorm over the channels, two 1x1 convs (the layer scale folded into
 * the second, the residual fused into it), Gelu: no transpose, no MatMul, and with the
 * layout pass nothing but the edges' two transforms; the same output as the reference on
 * the original graph. A chain whose inside is read elsewhere stays. */
static void test_channels_last_block_runs_channels_first(void) {
  for (int shared = 0; shared < 2; shared++) {
    tsl_graph *g = convnext_block(19, shared), *c;
    CU_ASSERT_EQUAL(pass_and_check(g, tsl_pass_channels_first, 1e-5), shared ? 0 : 1);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_clone(g, &c), TSL_OK);
    tsl_compile_stats stats;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_optimize(c, 8, &stats), TSL_OK);
    CU_ASSERT_EQUAL(count_op(c, TSL_OP_TRANSPOSE), shared ? 2 : 0);
    CU_ASSERT_EQUAL(count_op(c, TSL_OP_MATMUL), shared ? 2 : 0);
    if (!shared) {
      CU_ASSERT_EQUAL(count_op(c, TSL_OP_CONV), 3);
      CU_ASSERT_EQUAL(count_op(c, TSL_OP_MUL), 0);
      CU_ASSERT_EQUAL(count_op(c, TSL_OP_ADD), 0);
      CU_ASSERT_EQUAL(stats.layout_transforms, 2);
      CU_ASSERT_EQUAL(stats.channels_first, 1);
    }
    tsl_graph_free(c);
    /* compiled with the layout pass at the host's lanes */
    int64_t n = gt_numel(g, g->inputs[0]);
    tsl_tensor *t;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &t), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, 5, -2.0, 2.0), TSL_OK);
    const float *ins[1] = {t->data};
    float *got[2] = {0}, *want[2] = {0};
    CU_ASSERT_EQUAL(gt_compile_run(g, NULL, ins, got, NULL, NULL), TSL_OK);
    CU_ASSERT_EQUAL(gt_reference_run(g, ins, want), TSL_OK);
    if (got[0] && want[0]) CU_ASSERT(gt_rel_err(got[0], want[0], n) <= 1e-5);
    for (int k = 0; k < 2; k++) free(got[k]), free(want[k]);
    tsl_tensor_free(t);
    tsl_graph_free(g);
  }
  /* LayerNorm2d alone: Transpose, LayerNorm, Transpose -> one node; a transpose back by
   * another permutation is not the pattern */
  for (int other = 0; other < 2; other++) {
    int x;
    int64_t s[4] = {2, 12, 3, 5};
    static const int64_t swap_hw[4] = {0, 3, 2, 1};
    tsl_graph *g = new_graph(4, s, &x);
    int v = layer_norm_last(g, transpose(g, x, to_nhwc), 12);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, fn(g, "Neg", transpose(g, v, other ? swap_hw : to_nchw))), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
    CU_ASSERT_EQUAL(pass_and_check(g, tsl_pass_channels_first, 1e-5), other ? 0 : 1);
    tsl_graph_free(g);
  }
}

/* ConvNeXt (torchvision's blocks at widths 32..256, opset 13: LayerNorm and GELU written
 * out, MatMul on NHWC data) against ONNX Runtime: max abs error <= 1e-5 of max |out|, the
 * same top-5; its 14 layer norms and 9 GELUs each one node. */
static void test_convnext_nano_matches_ort(void) {
  const char *dir = mt_shared_models_v2_dir("convnext_nano_matches_ort");
  if (!dir) return;
  char path[4300];
  snprintf(path, sizeof path, "%s/convnext_nano.onnx", dir);
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx(path, &g), TSL_OK);
  size_t n_in = 0, n_ref = 0;
  snprintf(path, sizeof path, "%s/input_1x3x224x224.f32", dir);
  float *x = mt_read_file(path, &n_in);
  snprintf(path, sizeof path, "%s/convnext_nano.ort.f32", dir);
  float *want = mt_read_file(path, &n_ref);
  CU_ASSERT_FATAL(x && want && n_in == 602112 && n_ref == 4000);
  const float *ins[1] = {x};
  float *got[1] = {NULL};
  tsl_compile_stats stats;
  tsl_status st = gt_compile_run(g, NULL, ins, got, &stats, NULL);
  if (st != TSL_OK) printf("\n  convnext_nano: %s", tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  if (got[0]) {
    double err = mt_max_abs_diff(got[0], want, 1000), scale = mt_max_abs(want, 1000);
    int top[5], top_ort[5];
    mt_top5(got[0], 1000, top);
    mt_top5(want, 1000, top_ort);
    printf("\n  convnext_nano: %d -> %d nodes, %d layer norms + GELUs made one node, %d steps, max abs err %.2e of max %.3f",
           stats.nodes_before, stats.nodes_after, stats.layer_norms, stats.steps, err, scale);
    CU_ASSERT(err <= 1e-5 * scale);
    for (int k = 0; k < 5; k++) CU_ASSERT_EQUAL(top[k], top_ort[k]);
    CU_ASSERT_EQUAL(stats.layer_norms, 14 + 9);
    /* the blocks and LayerNorm2ds channels-first: blocked from the stem (which reads
     * the plain input) to the head */
    CU_ASSERT_EQUAL(stats.channels_first, 14);
    CU_ASSERT_EQUAL(stats.layout_transforms, 1);
  }
  /* the same through the C API (tessel/tessel.h) */
  snprintf(path, sizeof path, "%s/convnext_nano.onnx", dir);
  tsl_model *m = NULL;
  tsl_compiled *cm = NULL;
  tsl_context *ctx = NULL;
  float *api = malloc(4000);
  CU_ASSERT_EQUAL_FATAL(tsl_model_load(path, &m), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile(m, "host", NULL, &cm), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(cm, &ctx), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_set_input(ctx, 0, x, n_in), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_run(ctx), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 0, api, 4000), TSL_OK);
  double api_err = mt_max_abs_diff(api, want, 1000), api_scale = mt_max_abs(want, 1000);
  int api_top[5], ort_top[5];
  mt_top5(api, 1000, api_top);
  mt_top5(want, 1000, ort_top);
  printf("; C API: max abs err %.2e", api_err);
  CU_ASSERT(api_err <= 1e-5 * api_scale);
  CU_ASSERT_EQUAL(memcmp(api_top, ort_top, sizeof api_top), 0);
  tsl_context_free(ctx);
  tsl_compiled_free(cm);
  tsl_model_free(m);
  free(api);
  free(got[0]);
  free(x);
  free(want);
  tsl_graph_free(g);
}

void tsl_tests_graph_norm_passes(void) {
  CU_pSuite s = CU_add_suite("graph_norm_passes", NULL, NULL);
  CU_add_test(s, "layer_norm_spellings_become_one_node", test_layer_norm_spellings_become_one_node);
  CU_add_test(s, "layer_norm_lookalikes_stay", test_layer_norm_lookalikes_stay);
  CU_add_test(s, "gelu_spellings_fuse", test_gelu_spellings_fuse);
  CU_add_test(s, "gelu_lookalikes_stay", test_gelu_lookalikes_stay);
  CU_add_test(s, "channels_last_block_runs_channels_first", test_channels_last_block_runs_channels_first);
  CU_add_test(s, "convnext_nano_matches_ort", test_convnext_nano_matches_ort);
}
