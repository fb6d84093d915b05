/* The reference executor itself, on cases small enough to work out by hand (the edge
 * cases of shared/cases/CASES.md that concern operator semantics). */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

#include "models/graph.h"
#include "models_tests.h"
#include "ref/ref_graph.h"

/* A one-node graph: input x (shape xs), optional constant weight/bias, output y. */
typedef struct one {
  tsl_graph *g;
  int node;
  tsl_tensor *x;
} one;

static one one_new(tsl_op op, int ndim, const int64_t *xs, int n_const, tsl_tensor **consts) {
  one o = {0};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("one", &o.g), TSL_OK);
  int in[8], out, x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(o.g, "x", TSL_DTYPE_F32, ndim, xs, &x), TSL_OK);
  in[0] = x;
  for (int k = 0; k < n_const; k++) {
    char name[8] = {'c', (char)('0' + k), 0};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(o.g, name, consts[k], &in[k + 1]), TSL_OK);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(o.g, "y", &out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(o.g, op, "op", 1 + n_const, in, 1, &out, &o.node), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(o.g, out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, xs, &o.x), TSL_OK);
  return o;
}

/* Infers shapes and runs; returns the output (caller frees) or NULL. */
static tsl_tensor *one_run(one *o) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(o->g), TSL_OK);
  tsl_tensor *y = NULL;
  CU_ASSERT_EQUAL_FATAL(ref_graph_run(o->g, &o->x, 1, &y, 1), TSL_OK);
  return y;
}

static void one_free(one *o) {
  tsl_graph_free(o->g);
  tsl_tensor_free(o->x);
}

static tsl_tensor *filled(int ndim, const int64_t *shape, float v) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  for (int64_t i = 0; i < tsl_tensor_numel(t); i++) ((float *)t->data)[i] = v;
  return t;
}

static float *F(tsl_tensor *t) { return (float *)t->data; }

static void test_C04_grouped_conv_channel_routing(void) {
  int64_t xs[4] = {1, 4, 1, 1}, ws[4] = {16, 2, 1, 1};
  tsl_tensor *w = filled(4, ws, 1.0f);
  one o = one_new(TSL_OP_CONV, 4, xs, 1, &w);
  tsl_graph_set_attr_int(o.g, o.node, "group", 2);
  F(o.x)[3] = 1.0f; /* channel 3 belongs to group 1, which feeds outputs 8..15 */
  tsl_tensor *y = one_run(&o);
  for (int k = 0; k < 16; k++) CU_ASSERT_EQUAL(F(y)[k], k < 8 ? 0.0f : 1.0f);
  tsl_tensor_free(y);
  one_free(&o);
}

static void test_C05_depthwise_dilated_conv_counts_dilated_taps(void) {
  int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {4, 1, 3, 3}, bs[1] = {4};
  tsl_tensor *c[2] = {filled(4, ws, 1.0f / 9.0f), filled(1, bs, 1.0f)};
  one o = one_new(TSL_OP_CONV, 4, xs, 2, c);
  int64_t dil[2] = {2, 2}, pads[4] = {2, 2, 2, 2};
  tsl_graph_set_attr_int(o.g, o.node, "group", 4);
  tsl_graph_set_attr_ints(o.g, o.node, "dilations", 2, dil);
  tsl_graph_set_attr_ints(o.g, o.node, "pads", 4, pads);
  for (int i = 0; i < 100; i++) F(o.x)[i] = 1.0f;
  tsl_tensor *y = one_run(&o);
  CU_ASSERT_EQUAL(y->shape[2], 5);
  /* Taps sit at offsets -2, 0, +2: the center sees 9 inputs, a corner 4, an edge middle 6. */
  for (int ch = 0; ch < 4; ch++) {
    const float *p = F(y) + ch * 25;
    CU_ASSERT_DOUBLE_EQUAL(p[2 * 5 + 2], 2.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(p[0], 1.0 + 4.0 / 9.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(p[2], 1.0 + 6.0 / 9.0, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(p[1 * 5 + 1], 1.0 + 4.0 / 9.0, 1e-6); /* taps -1, 1, 3: 2 x 2 inside */
  }
  tsl_tensor_free(y);
  one_free(&o);
}

static void test_C06_asymmetric_padding_conv_boundary_columns(void) {
  int64_t xs[4] = {1, 1, 32, 64}, ws[4] = {1, 1, 2, 4};
  tsl_tensor *w = filled(4, ws, 1.0f);
  one o = one_new(TSL_OP_CONV, 4, xs, 1, &w);
  int64_t st[2] = {2, 1}, pads[4] = {0, 1, 0, 2};
  tsl_graph_set_attr_ints(o.g, o.node, "strides", 2, st);
  tsl_graph_set_attr_ints(o.g, o.node, "pads", 4, pads);
  for (int i = 0; i < 32 * 64; i++) F(o.x)[i] = 1.0f;
  tsl_tensor *y = one_run(&o);
  CU_ASSERT_EQUAL(y->shape[2], 16);
  CU_ASSERT_EQUAL(y->shape[3], 64);
  /* Each output sums 2 rows x (the window's columns inside 0..63). */
  for (int oy = 0; oy < 16; oy++) {
    const float *row = F(y) + oy * 64;
    CU_ASSERT_EQUAL(row[0], 6.0f);  /* columns -1..2 */
    CU_ASSERT_EQUAL(row[1], 8.0f);
    CU_ASSERT_EQUAL(row[61], 8.0f); /* 60..63 */
    CU_ASSERT_EQUAL(row[62], 6.0f); /* 61..64 */
    CU_ASSERT_EQUAL(row[63], 4.0f); /* 62..65 */
  }
  tsl_tensor_free(y);
  one_free(&o);
}

static void test_C07_avgpool_ceil_count_include_pad_divisors(void) {
  int64_t xs[4] = {1, 1, 17, 17};
  for (int cip = 0; cip < 2; cip++) {
    one o = one_new(TSL_OP_AVERAGE_POOL, 4, xs, 0, NULL);
    int64_t k[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
    tsl_graph_set_attr_ints(o.g, o.node, "kernel_shape", 2, k);
    tsl_graph_set_attr_ints(o.g, o.node, "strides", 2, k);
    tsl_graph_set_attr_ints(o.g, o.node, "pads", 4, pads);
    tsl_graph_set_attr_int(o.g, o.node, "ceil_mode", 1);
    tsl_graph_set_attr_int(o.g, o.node, "count_include_pad", cip);
    for (int i = 0; i < 17 * 17; i++) F(o.x)[i] = 1.0f;
    tsl_tensor *y = one_run(&o);
    CU_ASSERT_EQUAL(y->shape[2], 9);
    /* Corner window: rows -1..0, columns -1..0: one input among 4 padded positions. */
    CU_ASSERT_DOUBLE_EQUAL(F(y)[0], cip ? 0.25 : 1.0, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(F(y)[1], cip ? 0.5 : 1.0, 1e-7);
    CU_ASSERT_DOUBLE_EQUAL(F(y)[80], 1.0, 1e-7); /* rows/columns 15..16, all inside */
    tsl_tensor_free(y);
    one_free(&o);
  }
}

static void test_C08_maxpool_nan_propagates(void) {
  int64_t channel_counts[2] = {3, 17};
  for (int t = 0; t < 2; t++) {
    int64_t c = channel_counts[t], xs[4] = {1, c, 2, 8};
    one o = one_new(TSL_OP_MAX_POOL, 4, xs, 0, NULL);
    int64_t k[2] = {2, 2};
    tsl_graph_set_attr_ints(o.g, o.node, "kernel_shape", 2, k);
    tsl_graph_set_attr_ints(o.g, o.node, "strides", 2, k);
    for (int64_t i = 0; i < c * 16; i++) F(o.x)[i] = (float)(i % 7) - 3.0f;
    /* Windows of the last channel (columns 0-1, 2-3, 4-5, 6-7): NaN first, middle,
     * last, everywhere; columns 0-1 of the first channel keep finite values. */
    float *last = F(o.x) + (c - 1) * 16;
    last[0] = NAN;
    last[8 + 3] = NAN;
    last[8 + 5] = NAN;
    for (int r = 0; r < 2; r++) last[r * 8 + 6] = last[r * 8 + 7] = NAN;
    tsl_tensor *y = one_run(&o);
    const float *yl = F(y) + (c - 1) * 4;
    for (int j = 0; j < 4; j++) CU_ASSERT(isnan(yl[j]));
    CU_ASSERT(!isnan(F(y)[0]));
    tsl_tensor_free(y);
    one_free(&o);
  }
}

static void test_ref_softmax_gemm_batchnorm_values(void) {
  int64_t xs[2] = {2, 3};
  one o = one_new(TSL_OP_SOFTMAX, 2, xs, 0, NULL);
  float in[6] = {0, 0, 0, 1000, 1000, -1000};
  memcpy(o.x->data, in, sizeof in);
  tsl_tensor *y = one_run(&o);
  for (int i = 0; i < 3; i++) CU_ASSERT_DOUBLE_EQUAL(F(y)[i], 1.0 / 3.0, 1e-7);
  CU_ASSERT_DOUBLE_EQUAL(F(y)[3], 0.5, 1e-7); /* large inputs: no overflow */
  CU_ASSERT_DOUBLE_EQUAL(F(y)[5], 0.0, 1e-7);
  tsl_tensor_free(y);
  one_free(&o);

  /* Gemm: [[1,2],[3,4]] x B^T with B = [[1,0],[1,1],[0,2]], alpha 2, C = [1, 2, 3] * beta 0.5. */
  int64_t as[2] = {2, 2}, bs[2] = {3, 2}, cs[1] = {3};
  tsl_tensor *c[2] = {filled(2, bs, 0), filled(1, cs, 0)};
  float bv[6] = {1, 0, 1, 1, 0, 2}, cv[3] = {1, 2, 3};
  memcpy(c[0]->data, bv, sizeof bv);
  memcpy(c[1]->data, cv, sizeof cv);
  o = one_new(TSL_OP_GEMM, 2, as, 2, c);
  tsl_graph_set_attr_int(o.g, o.node, "transB", 1);
  tsl_graph_set_attr_float(o.g, o.node, "alpha", 2.0);
  tsl_graph_set_attr_float(o.g, o.node, "beta", 0.5);
  float av[4] = {1, 2, 3, 4};
  memcpy(o.x->data, av, sizeof av);
  y = one_run(&o);
  float want[6] = {2 + 0.5f, 6 + 1, 8 + 1.5f, 6 + 0.5f, 14 + 1, 16 + 1.5f};
  for (int i = 0; i < 6; i++) CU_ASSERT_DOUBLE_EQUAL(F(y)[i], want[i], 1e-6);
  tsl_tensor_free(y);
  one_free(&o);

  /* Batch norm: (x - mean) / sqrt(var + eps) * scale + shift on 2 channels. */
  int64_t bxs[4] = {1, 2, 1, 2}, ps[1] = {2};
  tsl_tensor *p[4] = {filled(1, ps, 2.0f), filled(1, ps, 1.0f), filled(1, ps, 3.0f), filled(1, ps, 4.0f)};
  o = one_new(TSL_OP_BATCH_NORM, 4, bxs, 4, p);
  tsl_graph_set_attr_float(o.g, o.node, "epsilon", 0.0);
  float bx[4] = {3, 5, 7, 1};
  memcpy(o.x->data, bx, sizeof bx);
  y = one_run(&o);
  float bwant[4] = {1, 3, 5, -1}; /* (x - 3) / 2 * 2 + 1 */
  for (int i = 0; i < 4; i++) CU_ASSERT_DOUBLE_EQUAL(F(y)[i], bwant[i], 1e-6);
  tsl_tensor_free(y);
  one_free(&o);
}

static void test_ref_data_movement_values(void) {
  int64_t xs[2] = {2, 3};
  float in[6] = {0, 1, 2, 3, 4, 5};
  /* Transpose -> [[0,3],[1,4],[2,5]]. */
  one o = one_new(TSL_OP_TRANSPOSE, 2, xs, 0, NULL);
  memcpy(o.x->data, in, sizeof in);
  tsl_tensor *y = one_run(&o);
  float tw[6] = {0, 3, 1, 4, 2, 5};
  CU_ASSERT_EQUAL(memcmp(y->data, tw, sizeof tw), 0);
  tsl_tensor_free(y);
  one_free(&o);
  /* Slice columns 2..0 backwards: [[2,1,0],[5,4,3]]. */
  o = one_new(TSL_OP_SLICE, 2, xs, 0, NULL);
  int64_t st[1] = {-1}, en[1] = {-100}, ax[1] = {1}, sp[1] = {-1};
  tsl_graph_set_attr_ints(o.g, o.node, "starts", 1, st);
  tsl_graph_set_attr_ints(o.g, o.node, "ends", 1, en);
  tsl_graph_set_attr_ints(o.g, o.node, "axes", 1, ax);
  tsl_graph_set_attr_ints(o.g, o.node, "steps", 1, sp);
  memcpy(o.x->data, in, sizeof in);
  y = one_run(&o);
  float sw[6] = {2, 1, 0, 5, 4, 3};
  CU_ASSERT_EQUAL(memcmp(y->data, sw, sizeof sw), 0);
  tsl_tensor_free(y);
  one_free(&o);
  /* Pad one column of 9 on the left, crop the last row: [[9,0,1,2]]. */
  o = one_new(TSL_OP_PAD, 2, xs, 0, NULL);
  int64_t pads[4] = {0, 1, -1, 0};
  tsl_graph_set_attr_ints(o.g, o.node, "pads", 4, pads);
  tsl_graph_set_attr_float(o.g, o.node, "value", 9.0);
  memcpy(o.x->data, in, sizeof in);
  y = one_run(&o);
  float pw[4] = {9, 0, 1, 2};
  CU_ASSERT_EQUAL(y->shape[0], 1);
  CU_ASSERT_EQUAL(memcmp(y->data, pw, sizeof pw), 0);
  tsl_tensor_free(y);
  one_free(&o);
}

static void test_ref_refuses_shape_the_graph_got_wrong(void) {
  int64_t xs[2] = {2, 3};
  one o = one_new(TSL_OP_RELU, 2, xs, 0, NULL);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(o.g), TSL_OK);
  o.g->values[o.g->outputs[0]].shape[1] = 4; /* a deliberately wrong record */
  tsl_tensor *y = NULL;
  CU_ASSERT_EQUAL(ref_graph_run(o.g, &o.x, 1, &y, 1), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(y);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "graph records"));
  one_free(&o);
}

void tsl_tests_models_ref(void) {
  CU_pSuite s = CU_add_suite("models_ref", NULL, NULL);
  CU_add_test(s, "C04_grouped_conv_channel_routing", test_C04_grouped_conv_channel_routing);
  CU_add_test(s, "C05_depthwise_dilated_conv_counts_dilated_taps", test_C05_depthwise_dilated_conv_counts_dilated_taps);
  CU_add_test(s, "C06_asymmetric_padding_conv_boundary_columns", test_C06_asymmetric_padding_conv_boundary_columns);
  CU_add_test(s, "C07_avgpool_ceil_count_include_pad_divisors", test_C07_avgpool_ceil_count_include_pad_divisors);
  CU_add_test(s, "C08_maxpool_nan_propagates", test_C08_maxpool_nan_propagates);
  CU_add_test(s, "ref_softmax_gemm_batchnorm_values", test_ref_softmax_gemm_batchnorm_values);
  CU_add_test(s, "ref_data_movement_values", test_ref_data_movement_values);
  CU_add_test(s, "ref_refuses_shape_the_graph_got_wrong", test_ref_refuses_shape_the_graph_got_wrong);
}
