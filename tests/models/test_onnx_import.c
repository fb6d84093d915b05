/* ONNX import of small models built here with protobuf-c: each opset form of the
 * operators maps to the canonical graph, constant shape chains fold, initializers load
 * from every storage form (raw, typed fields, external files). Values are checked by
 * running the imported graph through the reference executor. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/onnx.h"
#include "models/onnx.pb-c.h"
#include "models_tests.h"
#include "onnx_build.h"
#include "ref/ref_graph.h"

static tsl_status load(const ob_model *m, tsl_graph **g) {
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  tsl_status st = tsl_graph_load_onnx_memory(buf, n, NULL, g);
  free(buf);
  return st;
}

static const tsl_node *find_node(const tsl_graph *g, tsl_op op) {
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].op == op) return &g->nodes[i];
  return NULL;
}

static bool ints_are(const tsl_node *n, const char *name, int count, const int64_t *want) {
  int k;
  const int64_t *v = tsl_node_attr_ints(n, name, &k);
  if (!v || k != count) return false;
  for (int i = 0; i < k; i++)
    if (v[i] != want[i]) return false;
  return true;
}

/* Runs g on one input filled with x (numel values) and returns output 0. */
static tsl_tensor *run1(const tsl_graph *g, const float *x) {
  const tsl_value *v = &g->values[g->inputs[0]];
  tsl_tensor *in, *out = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(v->dtype, v->ndim, v->shape, &in), TSL_OK);
  memcpy(in->data, x, tsl_tensor_nbytes(in));
  CU_ASSERT_EQUAL(ref_graph_run(g, &in, 1, &out, 1), TSL_OK);
  tsl_tensor_free(in);
  return out;
}

static void test_onnx_conv_model_from_memory_with_typed_weights(void) {
  ob_model *m = ob_new(13);
  int64_t xs[4] = {1, 1, 3, 3}, ws[4] = {2, 1, 2, 2}, bs[1] = {2};
  float w[8] = {1, 0, 0, 1, 0, 1, 1, 0}, b[2] = {10, 20};
  ob_input(m, "x", OB_FLOAT, 4, xs);
  ob_init_f32(m, "w", 4, ws, w, OB_TYPED, NULL, 0);
  ob_init_f32(m, "b", 1, bs, b, OB_RAW, NULL, 0);
  ob_node(m, "Conv", "conv", 3, (const char *[]){"x", "w", "b"}, 1, (const char *[]){"y"});
  ob_attr_ints(m, "kernel_shape", 2, (int64_t[]){2, 2});
  ob_node(m, "Relu", NULL, 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  ob_output(m, "z");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_nodes, 2);
  CU_ASSERT_EQUAL(g->n_inputs, 1);
  CU_ASSERT_STRING_EQUAL(g->nodes[0].name, "conv");
  CU_ASSERT_STRING_EQUAL(g->nodes[1].name, "Relu_1"); /* unnamed: op type and index */
  const tsl_value *z = &g->values[g->outputs[0]];
  CU_ASSERT_EQUAL(z->ndim, 4);
  CU_ASSERT_EQUAL(z->shape[1], 2);
  CU_ASSERT_EQUAL(z->shape[3], 2);
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  tsl_tensor *y = run1(g, x);
  /* Channel 0 adds the window's diagonal, channel 1 its anti-diagonal. */
  float want[8] = {10 + 1 + 5, 10 + 2 + 6, 10 + 4 + 8, 10 + 5 + 9, 20 + 2 + 4, 20 + 3 + 5, 20 + 5 + 7, 20 + 6 + 8};
  for (int i = 0; y && i < 8; i++) CU_ASSERT_EQUAL(((float *)y->data)[i], want[i]);
  tsl_tensor_free(y);
  tsl_graph_free(g);
  ob_free(m);
}

/* The exporters' reshape idiom: Shape -> Gather -> Unsqueeze -> Concat (-> Cast) ->
 * Reshape, here flattening x to [N, -1] with N read from x's shape. */
static void test_onnx_shape_chain_folds_into_reshape_attribute(void) {
  for (int opset = 11; opset <= 13; opset += 2) {
    ob_model *m = ob_new(opset);
    int64_t xs[4] = {2, 3, 4, 5}, one[1] = {1};
    ob_input(m, "x", OB_FLOAT, 4, xs);
    ob_init_i64(m, "zero", 0, NULL, (int64_t[]){0}, OB_TYPED);
    ob_init_i64(m, "minus1", 1, one, (int64_t[]){-1}, OB_RAW);
    ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
    ob_node(m, "Gather", "gather", 2, (const char *[]){"s", "zero"}, 1, (const char *[]){"n"});
    ob_attr_int(m, "axis", 0);
    if (opset < 13) {
      ob_node(m, "Unsqueeze", "unsq", 1, (const char *[]){"n"}, 1, (const char *[]){"n1"});
      ob_attr_ints(m, "axes", 1, (int64_t[]){0});
    } else {
      ob_init_i64(m, "axes0", 1, one, (int64_t[]){0}, OB_TYPED);
      ob_node(m, "Unsqueeze", "unsq", 2, (const char *[]){"n", "axes0"}, 1, (const char *[]){"n1"});
    }
    ob_node(m, "Concat", "cat", 2, (const char *[]){"n1", "minus1"}, 1, (const char *[]){"shape2"});
    ob_attr_int(m, "axis", 0);
    ob_node(m, "Cast", "cast", 1, (const char *[]){"shape2"}, 1, (const char *[]){"shape3"});
    ob_attr_int(m, "to", OB_INT64);
    ob_node(m, "Reshape", "reshape", 2, (const char *[]){"x", "shape3"}, 1, (const char *[]){"y"});
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    CU_ASSERT_EQUAL(g->n_nodes, 1);
    CU_ASSERT_EQUAL(g->nodes[0].op, TSL_OP_RESHAPE);
    CU_ASSERT(ints_are(&g->nodes[0], "shape", 2, (int64_t[]){2, -1}));
    CU_ASSERT_EQUAL(g->values[g->outputs[0]].shape[1], 60);
    /* Folded intermediates and their constants are gone. */
    CU_ASSERT_EQUAL(tsl_graph_find_value(g, "s"), -1);
    CU_ASSERT_EQUAL(tsl_graph_find_value(g, "zero"), -1);
    CU_ASSERT_EQUAL(g->n_values, 2);
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_clip_attribute_and_input_forms_agree(void) {
  float x[4] = {-2, 0.5f, 3, 9};
  for (int opset = 7; opset <= 13; opset += 6) {
    ob_model *m = ob_new(opset);
    int64_t xs[1] = {4};
    ob_input(m, "x", OB_FLOAT, 1, xs);
    if (opset < 11) {
      ob_node(m, "Clip", "clip", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
      ob_attr_float(m, "min", 0.0f);
      ob_attr_float(m, "max", 6.0f);
    } else {
      ob_node(m, "Constant", "lo", 0, NULL, 1, (const char *[]){"lo"});
      ob_attr_tensor_f32(m, "value", 0, NULL, (float[]){0.0f});
      ob_node(m, "Constant", "hi", 0, NULL, 1, (const char *[]){"hi"});
      ob_attr_tensor_f32(m, "value", 0, NULL, (float[]){6.0f});
      ob_node(m, "Clip", "clip", 3, (const char *[]){"x", "lo", "hi"}, 1, (const char *[]){"y"});
    }
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    CU_ASSERT_EQUAL(g->n_nodes, 1);
    const tsl_node *c = find_node(g, TSL_OP_CLIP);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->n_inputs, 1);
    CU_ASSERT_EQUAL(tsl_node_attr_float(c, "min", -1), 0.0);
    CU_ASSERT_EQUAL(tsl_node_attr_float(c, "max", -1), 6.0);
    tsl_tensor *y = run1(g, x);
    float want[4] = {0, 0.5f, 3, 6};
    CU_ASSERT(y && memcmp(y->data, want, sizeof want) == 0);
    tsl_tensor_free(y);
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_softmax_before_13_is_coerced_to_2d(void) {
  ob_model *m = ob_new(11);
  int64_t xs[3] = {2, 2, 2};
  ob_input(m, "x", OB_FLOAT, 3, xs);
  ob_node(m, "Softmax", "sm", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_nodes, 3); /* Reshape [2,4], Softmax(axis 1), Reshape back */
  CU_ASSERT_EQUAL(g->nodes[1].op, TSL_OP_SOFTMAX);
  CU_ASSERT_EQUAL(g->values[g->outputs[0]].ndim, 3);
  /* Opset 11's default axis 1 normalizes over the last 4 elements of each batch. */
  float x[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  tsl_tensor *y = run1(g, x);
  for (int i = 0; y && i < 8; i++) CU_ASSERT_DOUBLE_EQUAL(((float *)y->data)[i], 0.25, 1e-7);
  tsl_tensor_free(y);
  tsl_graph_free(g);
  ob_free(m);
}

static void test_onnx_auto_pad_same_upper_and_lower(void) {
  static const char *modes[2] = {"SAME_UPPER", "SAME_LOWER"};
  for (int k = 0; k < 2; k++) {
    ob_model *m = ob_new(11);
    int64_t xs[4] = {1, 1, 5, 6};
    ob_input(m, "x", OB_FLOAT, 4, xs);
    ob_node(m, "MaxPool", "p", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
    ob_attr_ints(m, "kernel_shape", 2, (int64_t[]){2, 3});
    ob_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
    ob_attr_string(m, "auto_pad", modes[k]);
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    /* H: out 3, total pad 2*2+2-5 = 1; W: out 3, total 2*2+3-6 = 1. The odd pixel goes
     * to the end (UPPER) or the beginning (LOWER). */
    int64_t upper[4] = {0, 0, 1, 1}, lower[4] = {1, 1, 0, 0};
    CU_ASSERT(ints_are(&g->nodes[0], "pads", 4, k ? lower : upper));
    CU_ASSERT_EQUAL(g->values[g->outputs[0]].shape[2], 3);
    CU_ASSERT_EQUAL(g->values[g->outputs[0]].shape[3], 3);
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_dropout_mask_becomes_constant_true(void) {
  ob_model *m = ob_new(13);
  int64_t xs[2] = {2, 3};
  ob_input(m, "x", OB_FLOAT, 2, xs);
  ob_node(m, "Dropout", "d", 1, (const char *[]){"x"}, 2, (const char *[]){"y", "mask"});
  ob_output(m, "y");
  ob_output(m, "mask");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
  const tsl_value *mask = &g->values[g->outputs[1]];
  CU_ASSERT_PTR_NOT_NULL_FATAL(mask->constant);
  CU_ASSERT(tsl_dtype_equal(mask->dtype, TSL_DTYPE_BOOL));
  CU_ASSERT_EQUAL(tsl_tensor_numel(mask->constant), 6);
  for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(((uint8_t *)mask->constant->data)[i], 1);
  tsl_graph_free(g);
  ob_free(m);
}

static void test_onnx_split_18_num_outputs_and_13_input(void) {
  for (int opset = 13; opset <= 18; opset += 5) {
    ob_model *m = ob_new(opset);
    int64_t xs[2] = {2, 7}, two[1] = {3};
    ob_input(m, "x", OB_FLOAT, 2, xs);
    if (opset == 18) {
      ob_node(m, "Split", "s", 1, (const char *[]){"x"}, 3, (const char *[]){"a", "b", "c"});
      ob_attr_int(m, "num_outputs", 3);
    } else {
      ob_init_i64(m, "parts", 1, two, (int64_t[]){3, 3, 1}, OB_RAW);
      ob_node(m, "Split", "s", 2, (const char *[]){"x", "parts"}, 3, (const char *[]){"a", "b", "c"});
    }
    ob_attr_int(m, "axis", 1);
    ob_output(m, "c");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    /* ceil(7 / 3) = 3: parts 3, 3, 1 in both forms. */
    CU_ASSERT(ints_are(&g->nodes[0], "split", 3, (int64_t[]){3, 3, 1}));
    CU_ASSERT_EQUAL(g->values[g->outputs[0]].shape[1], 1);
    float x[14] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    tsl_tensor *y = run1(g, x);
    CU_ASSERT(y && ((float *)y->data)[0] == 6 && ((float *)y->data)[1] == 13);
    tsl_tensor_free(y);
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_reduce_mean_axes_attribute_and_input(void) {
  for (int opset = 13; opset <= 18; opset += 5) {
    ob_model *m = ob_new(opset);
    int64_t xs[4] = {1, 2, 2, 2}, two[1] = {2};
    ob_input(m, "x", OB_FLOAT, 4, xs);
    if (opset < 18) {
      ob_node(m, "ReduceMean", "rm", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
      ob_attr_ints(m, "axes", 2, (int64_t[]){-1, -2});
    } else {
      ob_init_i64(m, "axes", 1, two, (int64_t[]){2, 3}, OB_TYPED);
      ob_node(m, "ReduceMean", "rm", 2, (const char *[]){"x", "axes"}, 1, (const char *[]){"y"});
    }
    ob_attr_int(m, "keepdims", 0);
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    CU_ASSERT_EQUAL(g->values[g->outputs[0]].ndim, 2);
    float x[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    tsl_tensor *y = run1(g, x);
    CU_ASSERT(y && ((float *)y->data)[0] == 2.5f && ((float *)y->data)[1] == 25.0f);
    tsl_tensor_free(y);
    tsl_graph_free(g);
    ob_free(m);
  }
}

/* ReduceSum takes its axes as an input from opset 13, ReduceMax/Min from 18; without axes
 * every axis is reduced, or with noop_with_empty_axes the input passes as it is. */
static void test_onnx_reduce_axes_forms_and_noop(void) {
  static const struct {
    const char *op;
    int opset, form; /* 0: axes attribute, 1: axes input, 2: no axes, 3: no axes + noop */
    float want0;
  } cases[] = {{"ReduceSum", 11, 0, 3}, {"ReduceSum", 13, 1, 3}, {"ReduceSum", 13, 2, 110}, {"ReduceSum", 13, 3, 1},
               {"ReduceMax", 17, 0, 2}, {"ReduceMax", 18, 1, 2}, {"ReduceMin", 18, 3, 1}, {"ReduceMin", 13, 2, 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ob_model *m = ob_new(cases[i].opset);
    int64_t xs[2] = {2, 2}, one[1] = {1};
    ob_input(m, "x", OB_FLOAT, 2, xs);
    if (cases[i].form == 1) {
      ob_init_i64(m, "axes", 1, one, (int64_t[]){-1}, OB_RAW);
      ob_node(m, cases[i].op, "r", 2, (const char *[]){"x", "axes"}, 1, (const char *[]){"y"});
    } else {
      ob_node(m, cases[i].op, "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
    }
    if (cases[i].form == 0) ob_attr_ints(m, "axes", 1, (int64_t[]){1});
    if (cases[i].form == 3) ob_attr_int(m, "noop_with_empty_axes", 1);
    ob_attr_int(m, "keepdims", 0);
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    CU_ASSERT_EQUAL(g->values[g->outputs[0]].ndim, cases[i].form == 3 ? 2 : cases[i].form == 2 ? 0 : 1);
    CU_ASSERT_PTR_NOT_NULL(find_node(g, cases[i].form == 3 ? TSL_OP_IDENTITY : g->nodes[0].op));
    float x[4] = {1, 2, 30, 77};
    tsl_tensor *y = run1(g, x);
    CU_ASSERT(y && ((float *)y->data)[0] == cases[i].want0);
    tsl_tensor_free(y);
    tsl_graph_free(g);
    ob_free(m);
  }
  ob_model *m = ob_new(13); /* axes as an attribute where the opset wants an input */
  int64_t xs[1] = {3};
  ob_input(m, "x", OB_FLOAT, 1, xs);
  ob_node(m, "ReduceSum", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_attr_ints(m, "axes", 1, (int64_t[]){0});
  ob_output(m, "y");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL(load(m, &g), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "axes"));
  ob_free(m);
}

/* Pow: a constant scalar exponent of any numeric type becomes the attribute; a tensor
 * exponent stays an input (broadcast). */
static void test_onnx_pow_scalar_exponent_becomes_attribute(void) {
  for (int k = 0; k < 2; k++) {
    ob_model *m = ob_new(15);
    int64_t xs[2] = {2, 3}, three[1] = {3};
    ob_input(m, "x", OB_FLOAT, 2, xs);
    if (k == 0) ob_init_i64(m, "e", 0, NULL, (int64_t[]){2}, OB_TYPED);
    else ob_init_f32(m, "e", 1, three, (float[]){2, 0.5f, -1}, OB_RAW, NULL, 0);
    ob_node(m, "Pow", "p", 2, (const char *[]){"x", "e"}, 1, (const char *[]){"y"});
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    const tsl_node *p = find_node(g, TSL_OP_POW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(p->n_inputs, k == 0 ? 1 : 2);
    if (k == 0) CU_ASSERT_EQUAL(tsl_node_attr_float(p, "exponent", 0), 2.0);
    float x[6] = {1, 4, 2, 3, 9, 0.5f};
    tsl_tensor *y = run1(g, x);
    const float *v = y ? y->data : NULL;
    if (k == 0) CU_ASSERT(v && v[0] == 1 && v[1] == 16 && v[5] == 0.25f);
    if (k == 1) CU_ASSERT(v && v[0] == 1 && v[1] == 2 && v[2] == 0.5f && v[4] == 3 && v[5] == 2);
    tsl_tensor_free(y);
    tsl_graph_free(g);
    ob_free(m);
  }
}

/* LayerNormalization (opset 17): optional outputs kept up to the last named one, an
 * omitted one in between anonymous; stash_type other than 1 refused naming it. */
static void test_onnx_layer_norm_outputs_and_stash_type(void) {
  for (int k = 0; k < 2; k++) {
    ob_model *m = ob_new(17);
    int64_t xs[2] = {2, 4}, c[1] = {4};
    ob_input(m, "x", OB_FLOAT, 2, xs);
    ob_init_f32(m, "s", 1, c, (float[]){1, 2, 1, 2}, OB_RAW, NULL, 0);
    ob_node(m, "LayerNormalization", "ln", 2, (const char *[]){"x", "s"}, 3, (const char *[]){"y", "", "inv"});
    if (k == 1) ob_attr_int(m, "stash_type", 0);
    ob_output(m, "y");
    ob_output(m, "inv");
    tsl_graph *g = NULL;
    if (k == 1) {
      CU_ASSERT_EQUAL(load(m, &g), TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "stash_type"));
      ob_free(m);
      continue;
    }
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    const tsl_node *ln = find_node(g, TSL_OP_LAYER_NORM);
    CU_ASSERT_FATAL(ln && ln->n_outputs == 3 && ln->n_inputs == 2);
    CU_ASSERT(g->values[ln->outputs[2]].ndim == 2 && g->values[ln->outputs[2]].shape[1] == 1);
    float x[8] = {1, 3, 1, 3, 0, 0, 4, 4}; /* rows: mean 2, var 1; mean 2, var 4 */
    const tsl_value *v = &g->values[g->inputs[0]];
    tsl_tensor *in, *out[2] = {0};
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(v->dtype, v->ndim, v->shape, &in), TSL_OK);
    memcpy(in->data, x, sizeof x);
    CU_ASSERT_EQUAL(ref_graph_run(g, &in, 1, out, 2), TSL_OK);
    if (out[0] && out[1]) {
      const float *y = out[0]->data, *inv = out[1]->data;
      CU_ASSERT(fabsf(y[0] + 1) < 1e-4f && fabsf(y[1] - 2) < 1e-4f && fabsf(y[7] - 2) < 1e-4f);
      CU_ASSERT(fabsf(inv[0] - 1) < 1e-4f && fabsf(inv[1] - 0.5f) < 1e-4f);
    }
    tsl_tensor_free(in);
    tsl_tensor_free(out[0]);
    tsl_tensor_free(out[1]);
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_pad_attribute_and_input_forms(void) {
  for (int opset = 10; opset <= 18; opset += 8) {
    ob_model *m = ob_new(opset);
    int64_t xs[2] = {1, 2}, one[1] = {1};
    ob_input(m, "x", OB_FLOAT, 2, xs);
    if (opset < 11) {
      ob_node(m, "Pad", "pad", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
      ob_attr_ints(m, "pads", 4, (int64_t[]){0, 1, 0, 2});
      ob_attr_float(m, "value", 7.0f);
    } else {
      /* Opset 18 form with axes: pads only for axis 1. */
      ob_init_i64(m, "pads", 1, (int64_t[]){2}, (int64_t[]){1, 2}, OB_RAW);
      ob_init_f32(m, "v", 0, NULL, (float[]){7.0f}, OB_RAW, NULL, 0);
      ob_init_i64(m, "axes", 1, one, (int64_t[]){-1}, OB_RAW);
      ob_node(m, "Pad", "pad", 4, (const char *[]){"x", "pads", "v", "axes"}, 1, (const char *[]){"y"});
    }
    ob_output(m, "y");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    float x[2] = {1, 2};
    tsl_tensor *y = run1(g, x);
    float want[5] = {7, 1, 2, 7, 7};
    CU_ASSERT(y && y->shape[1] == 5 && memcmp(y->data, want, sizeof want) == 0);
    tsl_tensor_free(y);
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_external_data_is_loaded_from_the_model_folder(void) {
  char dir[] = "/tmp/tsl_onnx_ext_XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char path[256], data_path[256];
  snprintf(data_path, sizeof data_path, "%s/weights.bin", dir);
  float w[4] = {1.5f, -2.0f, 0.25f, 4.0f}, junk[3] = {99, 99, 99};
  FILE *f = fopen(data_path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fwrite(junk, sizeof junk, 1, f); /* the tensor starts at offset 12 */
  fwrite(w, sizeof w, 1, f);
  fclose(f);
  static const char *locations[4] = {"weights.bin", "../weights.bin", "/etc/passwd", "missing.bin"};
  static const tsl_status expect[4] = {TSL_OK, TSL_ERR_INVALID, TSL_ERR_INVALID, TSL_ERR_IO};
  for (int k = 0; k < 4; k++) {
    ob_model *m = ob_new(13);
    int64_t xs[1] = {4};
    ob_input(m, "x", OB_FLOAT, 1, xs);
    ob_init_f32(m, "w", 1, xs, w, OB_EXTERNAL, locations[k], 12);
    ob_node(m, "Mul", "mul", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"y"});
    ob_output(m, "y");
    size_t n;
    uint8_t *buf = ob_pack(m, &n);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    f = fopen(path, "wb");
    fwrite(buf, n, 1, f);
    fclose(f);
    tsl_graph *g = NULL;
    tsl_status st = tsl_graph_load_onnx(path, &g);
    CU_ASSERT_EQUAL(st, expect[k]);
    if (st == TSL_OK) {
      const tsl_tensor *t = g->values[g->nodes[0].inputs[1]].constant;
      CU_ASSERT(t && memcmp(t->data, w, sizeof w) == 0);
      tsl_graph_free(g);
      /* The same bytes from memory have no folder to resolve the location against. */
      CU_ASSERT_EQUAL(tsl_graph_load_onnx_memory(buf, n, NULL, &g), TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "external"));
      tsl_onnx_options o = {dir, 0, NULL};
      CU_ASSERT_EQUAL(tsl_graph_load_onnx_memory(buf, n, &o, &g), TSL_OK);
      tsl_graph_free(g);
    } else {
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'w'"));
    }
    free(buf);
    ob_free(m);
  }
  unlink(path);
  unlink(data_path);
  rmdir(dir);
}

static void test_onnx_bindings_freeze_parameter_inputs(void) {
  ob_model *m = ob_new(14);
  int64_t xs[2] = {2, 3}, ss[1] = {1};
  ob_input(m, "x", OB_FLOAT, 2, xs);
  ob_input(m, "shape", OB_INT64, 1, ss);
  ob_node(m, "Reshape", "r", 2, (const char *[]){"x", "shape"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL(load(m, &g), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "must be a constant"));
  tsl_tensor *shape;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_I64, 1, ss, &shape), TSL_OK);
  ((int64_t *)shape->data)[0] = -1;
  tsl_onnx_binding b = {"shape", shape};
  tsl_onnx_options o = {NULL, 1, &b};
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx_memory(buf, n, &o, &g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_inputs, 1);
  CU_ASSERT_EQUAL(g->values[g->outputs[0]].shape[0], 6);
  tsl_graph_free(g);
  /* A binding whose type differs from the declared input is refused. */
  tsl_tensor *wrong;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_I32, 1, ss, &wrong), TSL_OK);
  b.value = wrong;
  CU_ASSERT_EQUAL(tsl_graph_load_onnx_memory(buf, n, &o, &g), TSL_ERR_INVALID);
  tsl_tensor_free(wrong);
  tsl_tensor_free(shape);
  free(buf);
  ob_free(m);
}

static void test_onnx_inspect_and_tensor_reader(void) {
  char dir[] = "/tmp/tsl_onnx_inspect_XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  ob_model *m = ob_new(12);
  int64_t xs[1] = {3};
  ob_input(m, "x", OB_FLOAT, 1, xs);
  ob_node(m, "Relu", "a", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_node(m, "Relu", "b", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  ob_node(m, "Identity", "c", 1, (const char *[]){"z"}, 1, (const char *[]){"w"});
  ob_output(m, "w");
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  char path[256];
  snprintf(path, sizeof path, "%s/m.onnx", dir);
  FILE *f = fopen(path, "wb");
  fwrite(buf, n, 1, f);
  fclose(f);
  tsl_onnx_info info;
  CU_ASSERT_EQUAL_FATAL(tsl_onnx_inspect(path, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.opset, 12);
  CU_ASSERT_EQUAL(info.n_nodes, 3);
  CU_ASSERT_EQUAL(info.n_op_types, 2);
  CU_ASSERT_EQUAL(tsl_onnx_info_count(&info, "Relu"), 2);
  CU_ASSERT_EQUAL(tsl_onnx_info_count(&info, "Conv"), 0);
  CU_ASSERT_EQUAL(info.n_inputs, 1);
  CU_ASSERT_STRING_EQUAL(info.inputs[0], "x");
  unlink(path);
  rmdir(dir);
  free(buf);
  ob_free(m);
  /* A TensorProto as ONNX test data stores it: int64_data, with a name. */
  Onnx__TensorProto tp;
  onnx__tensor_proto__init(&tp);
  int64_t dims[2] = {2, 2}, vals[4] = {5, -6, 7, INT64_MIN};
  tp.n_dims = 2;
  tp.dims = dims;
  tp.has_data_type = 1;
  tp.data_type = OB_INT64;
  tp.n_int64_data = 4;
  tp.int64_data = vals;
  tp.name = "shape_in";
  uint8_t packed[256];
  size_t len = onnx__tensor_proto__pack(&tp, packed);
  tsl_tensor *t = NULL;
  char name[16];
  CU_ASSERT_EQUAL_FATAL(tsl_onnx_tensor_from_memory(packed, len, &t, name, sizeof name), TSL_OK);
  CU_ASSERT_STRING_EQUAL(name, "shape_in");
  CU_ASSERT(tsl_dtype_equal(t->dtype, TSL_DTYPE_I64) && t->ndim == 2 && t->shape[1] == 2);
  CU_ASSERT_EQUAL(memcmp(t->data, vals, sizeof vals), 0);
  tsl_tensor_free(t);
  tp.n_int64_data = 3; /* fewer elements than the shape holds */
  len = onnx__tensor_proto__pack(&tp, packed);
  CU_ASSERT_EQUAL(tsl_onnx_tensor_from_memory(packed, len, &t, NULL, 0), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "shape_in"));
  CU_ASSERT_EQUAL(tsl_onnx_tensor_from_memory(packed, len - 3, &t, NULL, 0), TSL_ERR_INVALID);
}

void tsl_tests_models_onnx_import(void) {
  CU_pSuite s = CU_add_suite("models_onnx_import", NULL, NULL);
  CU_add_test(s, "onnx_conv_model_from_memory_with_typed_weights", test_onnx_conv_model_from_memory_with_typed_weights);
  CU_add_test(s, "onnx_shape_chain_folds_into_reshape_attribute", test_onnx_shape_chain_folds_into_reshape_attribute);
  CU_add_test(s, "onnx_clip_attribute_and_input_forms_agree", test_onnx_clip_attribute_and_input_forms_agree);
  CU_add_test(s, "onnx_softmax_before_13_is_coerced_to_2d", test_onnx_softmax_before_13_is_coerced_to_2d);
  CU_add_test(s, "onnx_auto_pad_same_upper_and_lower", test_onnx_auto_pad_same_upper_and_lower);
  CU_add_test(s, "onnx_dropout_mask_becomes_constant_true", test_onnx_dropout_mask_becomes_constant_true);
  CU_add_test(s, "onnx_split_18_num_outputs_and_13_input", test_onnx_split_18_num_outputs_and_13_input);
  CU_add_test(s, "onnx_reduce_mean_axes_attribute_and_input", test_onnx_reduce_mean_axes_attribute_and_input);
  CU_add_test(s, "onnx_reduce_axes_forms_and_noop", test_onnx_reduce_axes_forms_and_noop);
  CU_add_test(s, "onnx_pow_scalar_exponent_becomes_attribute", test_onnx_pow_scalar_exponent_becomes_attribute);
  CU_add_test(s, "onnx_layer_norm_outputs_and_stash_type", test_onnx_layer_norm_outputs_and_stash_type);
  CU_add_test(s, "onnx_pad_attribute_and_input_forms", test_onnx_pad_attribute_and_input_forms);
  CU_add_test(s, "onnx_external_data_is_loaded_from_the_model_folder",
              test_onnx_external_data_is_loaded_from_the_model_folder);
  CU_add_test(s, "onnx_bindings_freeze_parameter_inputs", test_onnx_bindings_freeze_parameter_inputs);
  CU_add_test(s, "onnx_inspect_and_tensor_reader", test_onnx_inspect_and_tensor_reader);
}
