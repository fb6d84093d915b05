/* ONNX import of Resize and its neighbours, from small models built here: the output
 * sizes of segmentation heads computed by shape chains (Shape -> Slice -> Concat as
 * torch's interpolate(size=...) exports them, and the Gather -> Cast -> Mul -> Floor chain
 * of older exports) fold to constants; every opset form of Resize and Upsample maps to
 * the canonical node; the variants tessel does not compute are refused naming node,
 * operator, opset and variant; Squeeze/Unsqueeze of computed values become views;
 * Concat takes more than 16 inputs; Pad's reflect, edge and wrap modes import. Values are checked with the reference executor
 * against ONNX's own examples (docs/Operators.md, Resize and Upsample). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/onnx.h"
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

static const tsl_node *only_node(const tsl_graph *g, tsl_op op) {
  const tsl_node *found = NULL;
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->nodes[i].op == op) found = &g->nodes[i], count++;
  CU_ASSERT_EQUAL(count, 1);
  return count == 1 ? found : NULL;
}

static bool ints_are(const tsl_node *n, const char *name, int count, const int64_t *want) {
  int k;
  const int64_t *v = tsl_node_attr_ints(n, name, &k);
  if (!v || k != count) return false;
  for (int i = 0; i < k; i++)
    if (v[i] != want[i]) return false;
  return true;
}

static bool string_is(const tsl_node *n, const char *name, const char *want) {
  const tsl_attr *a = tsl_node_attr(n, name);
  return a && a->kind == TSL_ATTR_STRING && strcmp(a->s, want) == 0;
}

/* Runs g (inputs filled from xs, one array per graph input) with the reference executor
 * and compares output 0 with want[n] exactly. */
static void check_values(const tsl_graph *g, const float *const *xs, const float *want, int64_t n) {
  tsl_tensor *in[4] = {0}, *out = NULL;
  CU_ASSERT_FATAL(g->n_inputs <= 4 && g->n_outputs == 1);
  for (int k = 0; k < g->n_inputs; k++) {
    const tsl_value *v = &g->values[g->inputs[k]];
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(v->dtype, v->ndim, v->shape, &in[k]), TSL_OK);
    memcpy(in[k]->data, xs[k], tsl_tensor_nbytes(in[k]));
  }
  CU_ASSERT_EQUAL(ref_graph_run(g, in, g->n_inputs, &out, 1), TSL_OK);
  if (out) {
    CU_ASSERT_EQUAL(tsl_tensor_numel(out), n);
    for (int64_t i = 0; i < n && i < tsl_tensor_numel(out); i++) CU_ASSERT_DOUBLE_EQUAL(((float *)out->data)[i], want[i], 1e-6);
  }
  tsl_tensor_free(out);
  for (int k = 0; k < 4; k++) tsl_tensor_free(in[k]);
}

/* ONNX's example: [[1, 2], [3, 4]] upsampled 2x, linear, half_pixel. */
static const float example_in[4] = {1, 2, 3, 4};
static const float example_linear[16] = {1,   1.25, 1.75, 2,   1.5, 1.75, 2.25, 2.5,
                                         2.5, 2.75, 3.25, 3.5, 3,   3.25, 3.75, 4};
/* ... and nearest with asymmetric coordinates (Upsample's example). */
static const float example_nearest[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};

/* torch's interpolate(x, size=y.shape[-2:]) at opset 13: sizes = Concat([N, C],
 * Slice(Shape(y), 2, 4)); LR-ASPP's head adds the upsampled x to y. */
static void test_onnx_resize_sizes_from_shape_slice_concat_fold(void) {
  ob_model *m = ob_new(13);
  ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
  ob_input(m, "y", OB_FLOAT, 4, (int64_t[]){1, 1, 4, 4});
  ob_init_i64(m, "two", 1, (int64_t[]){1}, (int64_t[]){2}, OB_RAW);
  ob_init_i64(m, "four", 1, (int64_t[]){1}, (int64_t[]){4}, OB_RAW);
  ob_init_i64(m, "nc", 1, (int64_t[]){2}, (int64_t[]){1, 1}, OB_RAW);
  ob_node(m, "Shape", "shape", 1, (const char *[]){"y"}, 1, (const char *[]){"s"});
  ob_node(m, "Slice", "slice", 3, (const char *[]){"s", "two", "four"}, 1, (const char *[]){"hw"});
  ob_node(m, "Concat", "concat", 2, (const char *[]){"nc", "hw"}, 1, (const char *[]){"sizes"});
  ob_attr_int(m, "axis", 0);
  ob_node(m, "Resize", "up", 4, (const char *[]){"x", "", "", "sizes"}, 1, (const char *[]){"r"});
  ob_attr_string(m, "mode", "linear");
  ob_attr_string(m, "coordinate_transformation_mode", "half_pixel");
  ob_attr_string(m, "nearest_mode", "floor");
  ob_node(m, "Add", "add", 2, (const char *[]){"r", "y"}, 1, (const char *[]){"out"});
  ob_output(m, "out");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_nodes, 2); /* Resize and Add: the shape chain folded */
  const tsl_node *r = only_node(g, TSL_OP_RESIZE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT(ints_are(r, "sizes", 4, (int64_t[]){1, 1, 4, 4}));
  CU_ASSERT_PTR_NULL(tsl_node_attr(r, "scales"));
  CU_ASSERT(string_is(r, "mode", "linear") && string_is(r, "coordinate_transformation_mode", "half_pixel"));
  float zeros[16] = {0};
  check_values(g, (const float *const[]){example_in, zeros}, example_linear, 16);
  tsl_graph_free(g);
  ob_free(m);
}

/* Older exports (opset 11): each output extent as floor(extent * 2.0) through Gather,
 * Cast, Mul, Floor, Cast, Unsqueeze (axes attribute), then Concat; Resize-11 with roi and
 * an empty scales tensor. */
static void test_onnx_resize_sizes_from_floor_of_a_scaled_shape(void) {
  ob_model *m = ob_new(11);
  ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
  ob_init_i64(m, "nc", 1, (int64_t[]){2}, (int64_t[]){1, 1}, OB_RAW);
  ob_init_f32(m, "roi", 1, (int64_t[]){0}, NULL, OB_RAW, NULL, 0);
  ob_init_f32(m, "no_scales", 1, (int64_t[]){0}, NULL, OB_RAW, NULL, 0);
  ob_init_f32(m, "factor", 0, NULL, (float[]){2.0f}, OB_RAW, NULL, 0);
  ob_node(m, "Shape", "shape", 1, (const char *[]){"x"}, 1, (const char *[]){"s"});
  static const char *const axis_name[2] = {"h", "w"};
  for (int a = 0; a < 2; a++) {
    char idx[16], g[16], f[16], sc[16], fl[16], ci[16], u[16];
    snprintf(idx, sizeof idx, "idx_%s", axis_name[a]);
    snprintf(g, sizeof g, "g_%s", axis_name[a]);
    snprintf(f, sizeof f, "f_%s", axis_name[a]);
    snprintf(sc, sizeof sc, "sc_%s", axis_name[a]);
    snprintf(fl, sizeof fl, "fl_%s", axis_name[a]);
    snprintf(ci, sizeof ci, "ci_%s", axis_name[a]);
    snprintf(u, sizeof u, "u_%s", axis_name[a]);
    ob_init_i64(m, idx, 0, NULL, (int64_t[]){2 + a}, OB_RAW);
    ob_node(m, "Gather", NULL, 2, (const char *[]){"s", idx}, 1, (const char *[]){g});
    ob_node(m, "Cast", NULL, 1, (const char *[]){g}, 1, (const char *[]){f});
    ob_attr_int(m, "to", OB_FLOAT);
    ob_node(m, "Mul", NULL, 2, (const char *[]){f, "factor"}, 1, (const char *[]){sc});
    ob_node(m, "Floor", NULL, 1, (const char *[]){sc}, 1, (const char *[]){fl});
    ob_node(m, "Cast", NULL, 1, (const char *[]){fl}, 1, (const char *[]){ci});
    ob_attr_int(m, "to", OB_INT64);
    ob_node(m, "Unsqueeze", NULL, 1, (const char *[]){ci}, 1, (const char *[]){u});
    ob_attr_ints(m, "axes", 1, (int64_t[]){0});
  }
  ob_node(m, "Concat", NULL, 3, (const char *[]){"nc", "u_h", "u_w"}, 1, (const char *[]){"sizes"});
  ob_attr_int(m, "axis", 0);
  ob_node(m, "Resize", "up", 4, (const char *[]){"x", "roi", "no_scales", "sizes"}, 1, (const char *[]){"out"});
  ob_attr_string(m, "mode", "nearest");
  ob_attr_string(m, "coordinate_transformation_mode", "asymmetric");
  ob_attr_string(m, "nearest_mode", "floor");
  ob_output(m, "out");
  tsl_graph *g = NULL;
  tsl_status st = load(m, &g);
  if (st != TSL_OK) printf("\n  %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  CU_ASSERT_EQUAL(g->n_nodes, 1);
  const tsl_node *r = only_node(g, TSL_OP_RESIZE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT(ints_are(r, "sizes", 4, (int64_t[]){1, 1, 4, 4}));
  check_values(g, (const float *const[]){example_in}, example_nearest, 16);
  tsl_graph_free(g);
  ob_free(m);
}

/* x [1, 1, 2, 2] -> op -> out, scales [1, 1, 2, 2] as an initializer (input 1) or, for
 * Upsample-7, the attribute. */
static ob_model *upsampling(int64_t opset, const char *op) {
  ob_model *m = ob_new(opset);
  const float scales[4] = {1, 1, 2, 2};
  bool attr = strcmp(op, "Upsample") == 0 && opset < 9;
  ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
  if (!attr) ob_init_f32(m, "scales", 1, (int64_t[]){4}, scales, OB_RAW, NULL, 0);
  ob_node(m, op, "up", attr ? 1 : 2, (const char *[]){"x", "scales"}, 1, (const char *[]){"out"});
  if (attr) ob_attr_floats(m, "scales", 4, scales);
  ob_attr_string(m, "mode", "nearest");
  ob_output(m, "out");
  return m;
}

/* Resize-10, Upsample-7 (scales attribute) and -9 (scales input): asymmetric
 * coordinates, nearest "simple", the scales kept; Resize-18 with an axes attribute. */
static void test_onnx_resize_and_upsample_opset_forms(void) {
  const struct {
    int64_t opset;
    const char *op;
  } forms[] = {{10, "Resize"}, {7, "Upsample"}, {9, "Upsample"}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    ob_model *m = upsampling(forms[i].opset, forms[i].op);
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    const tsl_node *r = only_node(g, TSL_OP_RESIZE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(ints_are(r, "sizes", 4, (int64_t[]){1, 1, 4, 4}));
    CU_ASSERT(string_is(r, "coordinate_transformation_mode", "asymmetric") && string_is(r, "nearest_mode", "simple"));
    CU_ASSERT_PTR_NOT_NULL(tsl_node_attr(r, "scales"));
    check_values(g, (const float *const[]){example_in}, example_nearest, 16);
    tsl_graph_free(g);
    ob_free(m);
  }
  /* opset 18: scales for the listed axes only */
  ob_model *m = ob_new(18);
  ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
  ob_init_f32(m, "scales", 1, (int64_t[]){2}, (float[]){2, 2}, OB_RAW, NULL, 0);
  ob_node(m, "Resize", "up", 3, (const char *[]){"x", "", "scales"}, 1, (const char *[]){"out"});
  ob_attr_ints(m, "axes", 2, (int64_t[]){-2, -1});
  ob_attr_string(m, "mode", "linear");
  ob_attr_int(m, "antialias", 0);
  ob_output(m, "out");
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
  const tsl_node *r = only_node(g, TSL_OP_RESIZE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT(ints_are(r, "sizes", 4, (int64_t[]){1, 1, 4, 4}));
  CU_ASSERT(string_is(r, "coordinate_transformation_mode", "half_pixel"));
  check_values(g, (const float *const[]){example_in}, example_linear, 16);
  tsl_graph_free(g);
  ob_free(m);
}

/* A Resize-13 by scales with one attribute or input changed, expected to be refused. */
static void expect_refused(const char *attr, const char *value, int64_t ivalue, bool with_sizes, const char *what) {
  ob_model *m = ob_new(18);
  ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 1, 2, 2});
  ob_init_f32(m, "scales", 1, (int64_t[]){4}, (float[]){1, 1, 2, 2}, OB_RAW, NULL, 0);
  ob_init_i64(m, "sizes", 1, (int64_t[]){4}, (int64_t[]){1, 1, 4, 4}, OB_RAW);
  ob_node(m, "Resize", "head_up", with_sizes ? 4 : 3, (const char *[]){"x", "", "scales", "sizes"}, 1,
          (const char *[]){"out"});
  if (attr && value) ob_attr_string(m, attr, value);
  if (attr && !value) ob_attr_int(m, attr, ivalue);
  ob_output(m, "out");
  tsl_graph *g = NULL;
  tsl_status st = load(m, &g);
  CU_ASSERT_NOT_EQUAL(st, TSL_OK);
  const char *msg = tsl_last_error();
  bool ok = strstr(msg, "node 'head_up' (Resize, opset 18)") && strstr(msg, what);
  if (!ok) printf("\n  unexpected message: %s", msg);
  CU_ASSERT(ok);
  tsl_graph_free(g);
  ob_free(m);
}

static void test_onnx_resize_unsupported_variants_are_refused_by_name(void) {
  expect_refused("mode", "cubic", 0, false, "mode 'cubic' is not supported");
  expect_refused("coordinate_transformation_mode", "tf_crop_and_resize", 0, false, "'tf_crop_and_resize'");
  expect_refused("antialias", NULL, 1, false, "antialias = 1");
  expect_refused("keep_aspect_ratio_policy", "not_larger", 0, false, "keep_aspect_ratio_policy 'not_larger'");
  expect_refused(NULL, NULL, 0, true, "both are");
  expect_refused("exclude_outside_typo", NULL, 1, false, "exclude_outside_typo");
}

/* Squeeze and Unsqueeze of computed values are Reshapes (views, no kernel), in both the
 * attribute (opset 11) and the input (opset 13) forms of their axes. */
static void test_onnx_squeeze_unsqueeze_of_computed_values_are_reshapes(void) {
  for (int opset = 11; opset <= 13; opset += 2) {
    ob_model *m = ob_new(opset);
    ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 3, 1, 2});
    ob_node(m, "Relu", "relu", 1, (const char *[]){"x"}, 1, (const char *[]){"r"});
    if (opset >= 13) {
      ob_init_i64(m, "ax2", 1, (int64_t[]){1}, (int64_t[]){2}, OB_RAW);
      ob_init_i64(m, "ax0", 1, (int64_t[]){2}, (int64_t[]){0, -1}, OB_RAW);
      ob_node(m, "Squeeze", "sq", 2, (const char *[]){"r", "ax2"}, 1, (const char *[]){"s"});
      ob_node(m, "Unsqueeze", "unsq", 2, (const char *[]){"s", "ax0"}, 1, (const char *[]){"out"});
    } else {
      ob_node(m, "Squeeze", "sq", 1, (const char *[]){"r"}, 1, (const char *[]){"s"});
      ob_attr_ints(m, "axes", 1, (int64_t[]){2});
      ob_node(m, "Unsqueeze", "unsq", 1, (const char *[]){"s"}, 1, (const char *[]){"out"});
      ob_attr_ints(m, "axes", 2, (int64_t[]){0, -1});
    }
    ob_output(m, "out");
    tsl_graph *g = NULL;
    CU_ASSERT_EQUAL_FATAL(load(m, &g), TSL_OK);
    CU_ASSERT_EQUAL(g->n_nodes, 3);
    CU_ASSERT_EQUAL(g->nodes[1].op, TSL_OP_RESHAPE);
    CU_ASSERT_EQUAL(g->nodes[2].op, TSL_OP_RESHAPE);
    const tsl_value *out = &g->values[g->outputs[0]];
    int64_t want[5] = {1, 1, 3, 2, 1};
    CU_ASSERT_EQUAL(out->ndim, 5);
    for (int d = 0; d < 5 && out->ndim == 5; d++) CU_ASSERT_EQUAL(out->shape[d], want[d]);
    const float x[6] = {-1, 2, 3, -4, 5, 6}, y[6] = {0, 2, 3, 0, 5, 6};
    check_values(g, (const float *const[]){x}, y, 6);
    tsl_graph_free(g);
    ob_free(m);
  }
}

/* Concat imports up to 64 inputs (DenseNet's widest has 32; the importer took 16). */
static void test_onnx_concat_of_many_inputs(void) {
  for (int n = 40; n <= 65; n += 25) {
    ob_model *m = ob_new(13);
    ob_input(m, "x", OB_FLOAT, 4, (int64_t[]){1, 2, 1, 1});
    const char *ins[65];
    for (int i = 0; i < n; i++) ins[i] = "x";
    ob_node(m, "Concat", "cat", n, ins, 1, (const char *[]){"out"});
    ob_attr_int(m, "axis", 1);
    ob_output(m, "out");
    tsl_graph *g = NULL;
    tsl_status st = load(m, &g);
    if (n <= 64) {
      CU_ASSERT_EQUAL(st, TSL_OK);
      if (g) CU_ASSERT_EQUAL(g->values[g->outputs[0]].shape[1], 2 * n);
    } else {
      CU_ASSERT_EQUAL(st, TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "at most 64"));
    }
    tsl_graph_free(g);
    ob_free(m);
  }
}

/* Pad's reading modes in the input form (opset 13: pads input; 18: axes; 19: wrap), on
 * [[1, 2, 3]] padded by 2 before and 1 after along the last axis (numpy.pad's results). */
static void test_onnx_pad_modes_of_every_opset_form(void) {
  static const struct {
    int64_t opset;
    const char *mode;
    float want[6];
  } cases[] = {{13, "reflect", {3, 2, 1, 2, 3, 2}}, {13, "edge", {1, 1, 1, 2, 3, 3}},
               {18, "reflect", {3, 2, 1, 2, 3, 2}}, {19, "wrap", {2, 3, 1, 2, 3, 1}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ob_model *m = ob_new(cases[i].opset);
    ob_input(m, "x", OB_FLOAT, 2, (int64_t[]){1, 3});
    bool axes = cases[i].opset >= 18;
    if (axes) {
      ob_init_i64(m, "pads", 1, (int64_t[]){2}, (int64_t[]){2, 1}, OB_RAW);
      ob_init_i64(m, "axes", 1, (int64_t[]){1}, (int64_t[]){-1}, OB_RAW);
    } else {
      ob_init_i64(m, "pads", 1, (int64_t[]){4}, (int64_t[]){0, 2, 0, 1}, OB_RAW);
    }
    ob_node(m, "Pad", "pad", axes ? 4 : 2, (const char *[]){"x", "pads", "", "axes"}, 1, (const char *[]){"out"});
    ob_attr_string(m, "mode", cases[i].mode);
    ob_output(m, "out");
    tsl_graph *g = NULL;
    tsl_status st = load(m, &g);
    if (st != TSL_OK) printf("\n  %s", tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    const float x[3] = {1, 2, 3};
    check_values(g, (const float *const[]){x}, cases[i].want, 6);
    tsl_graph_free(g);
    ob_free(m);
  }
  /* wrap is opset 19's: before it the mode is invalid */
  ob_model *m = ob_new(18);
  ob_input(m, "x", OB_FLOAT, 2, (int64_t[]){1, 3});
  ob_init_i64(m, "pads", 1, (int64_t[]){4}, (int64_t[]){0, 2, 0, 1}, OB_RAW);
  ob_node(m, "Pad", "pad", 2, (const char *[]){"x", "pads"}, 1, (const char *[]){"out"});
  ob_attr_string(m, "mode", "wrap");
  ob_output(m, "out");
  tsl_graph *g = NULL;
  CU_ASSERT_NOT_EQUAL(load(m, &g), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "wrap"));
  tsl_graph_free(g);
  ob_free(m);
}

void tsl_tests_models_onnx_resize(void) {
  CU_pSuite s = CU_add_suite("models_onnx_resize", NULL, NULL);
  CU_add_test(s, "onnx_resize_sizes_from_shape_slice_concat_fold", test_onnx_resize_sizes_from_shape_slice_concat_fold);
  CU_add_test(s, "onnx_resize_sizes_from_floor_of_a_scaled_shape", test_onnx_resize_sizes_from_floor_of_a_scaled_shape);
  CU_add_test(s, "onnx_resize_and_upsample_opset_forms", test_onnx_resize_and_upsample_opset_forms);
  CU_add_test(s, "onnx_resize_unsupported_variants_are_refused_by_name",
              test_onnx_resize_unsupported_variants_are_refused_by_name);
  CU_add_test(s, "onnx_squeeze_unsqueeze_of_computed_values_are_reshapes",
              test_onnx_squeeze_unsqueeze_of_computed_values_are_reshapes);
  CU_add_test(s, "onnx_concat_of_many_inputs", test_onnx_concat_of_many_inputs);
  CU_add_test(s, "onnx_pad_modes_of_every_opset_form", test_onnx_pad_modes_of_every_opset_form);
}
