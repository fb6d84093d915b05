/* The graph IR: construction, structural checks, shape inference (expected shapes
 * worked out by hand from the ONNX definitions), the printer, pruning, parameter
 * counts. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/graph.h"
#include "models_tests.h"

static tsl_graph *new_graph(void) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  return g;
}

static int input(tsl_graph *g, const char *name, int ndim, const int64_t *shape) {
  int id = -1;
  CU_ASSERT_EQUAL(tsl_graph_add_input(g, name, TSL_DTYPE_F32, ndim, shape, &id), TSL_OK);
  return id;
}

static int constant(tsl_graph *g, const char *name, int ndim, const int64_t *shape, float fill) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  for (int64_t i = 0; i < tsl_tensor_numel(t); i++) ((float *)t->data)[i] = fill;
  int id = -1;
  CU_ASSERT_EQUAL(tsl_graph_add_constant(g, name, t, &id), TSL_OK);
  return id;
}

/* Adds a node with one new output value; returns the node id. */
static int node(tsl_graph *g, tsl_op op, const char *name, int n_in, const int *in) {
  int out, id = -1;
  CU_ASSERT_EQUAL(tsl_graph_add_value(g, NULL, &out), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, op, name, n_in, in, 1, &out, &id), TSL_OK);
  return id;
}

static const tsl_value *out_of(const tsl_graph *g, int n) { return &g->values[g->nodes[n].outputs[0]]; }

static bool shape_is(const tsl_value *v, int ndim, const int64_t *want) {
  if (v->ndim != ndim) return false;
  for (int d = 0; d < ndim; d++)
    if (v->shape[d] != want[d]) return false;
  return true;
}

static void test_graph_conv_relu_infer_and_print(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 3, 32, 32}, ws[4] = {8, 3, 3, 3};
  int in[3] = {input(g, "x", 4, xs), constant(g, "w", 4, ws, 0.5f), -1};
  int c = node(g, TSL_OP_CONV, "conv", 2, in);
  int64_t st[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
  CU_ASSERT_EQUAL(tsl_graph_set_attr_ints(g, c, "strides", 2, st), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_set_attr_ints(g, c, "pads", 4, pads), TSL_OK);
  int r_in = g->nodes[c].outputs[0];
  int r = node(g, TSL_OP_RELU, "relu", 1, &r_in);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, g->nodes[r].outputs[0]), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  int64_t want[4] = {1, 8, 16, 16}; /* (32 + 2 - 3) / 2 + 1 */
  CU_ASSERT(shape_is(out_of(g, c), 4, want));
  CU_ASSERT(shape_is(out_of(g, r), 4, want));
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  char line[512];
  tsl_graph_format_node(g, c, line, sizeof line);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "= Conv(%x, %w<const f32[8x3x3x3]>)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "strides=[2,2]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "pads=[1,1,1,1]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(line, ": f32[1x3x32x32] -> f32[1x8x16x16]"));
  /* A short buffer truncates but reports the full length. */
  char small[8];
  int need = tsl_graph_format_node(g, c, small, sizeof small);
  CU_ASSERT_EQUAL(need, (int)strlen(line));
  CU_ASSERT_EQUAL(strlen(small), 7u);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  tsl_graph_print(g, f);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "2 nodes, 216 parameters"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "input %x: f32[1x3x32x32]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "= Relu("));
  free(text);
  tsl_graph_free(g);
}

static void test_graph_duplicate_names_and_bad_outputs_refused(void) {
  tsl_graph *g = new_graph();
  int64_t s[1] = {4};
  int x = input(g, "x", 1, s), id;
  CU_ASSERT_EQUAL(tsl_graph_add_value(g, "x", &id), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'x'"));
  int k = constant(g, "k", 1, s, 1.0f);
  /* A node may not write a constant or a graph input, nor a value twice. */
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "r", 1, &x, 1, &k, &id), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "r", 1, &k, 1, &x, &id), TSL_ERR_INVALID);
  int v;
  CU_ASSERT_EQUAL(tsl_graph_add_value(g, NULL, &v), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "r1", 1, &x, 1, &v, &id), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "r2", 1, &x, 1, &v, &id), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, v), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, v), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, 999), TSL_ERR_INVALID);
  tsl_graph_free(g);
}

static void test_graph_check_rejects_non_topological_order(void) {
  tsl_graph *g = new_graph();
  int64_t s[1] = {4};
  int x = input(g, "x", 1, s), a, b, id;
  CU_ASSERT_EQUAL(tsl_graph_add_value(g, "a", &a), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_value(g, "b", &b), TSL_OK);
  /* "second" reads a before "first" writes it. */
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "second", 1, &a, 1, &b, &id), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "first", 1, &x, 1, &a, &id), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, b), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'second'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "topological"));
  tsl_graph_free(g);
}

static void test_graph_toposort_repairs_appended_nodes_and_finds_cycles(void) {
  tsl_graph *g = new_graph();
  int64_t s[1] = {4};
  int x = input(g, "x", 1, s), a, b, c, id;
  tsl_graph_add_value(g, "a", &a);
  tsl_graph_add_value(g, "b", &b);
  tsl_graph_add_value(g, "c", &c);
  /* Appended out of order: b = relu(a) before a = relu(x); c = a + x stays after. */
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "second", 1, &a, 1, &b, &id), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_RELU, "first", 1, &x, 1, &a, &id), TSL_OK);
  int add_in[2] = {a, x};
  CU_ASSERT_EQUAL(tsl_graph_add_node(g, TSL_OP_ADD, "third", 2, add_in, 1, &c, &id), TSL_OK);
  tsl_graph_add_output(g, b);
  tsl_graph_add_output(g, c);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_toposort(g), TSL_OK);
  CU_ASSERT_STRING_EQUAL(g->nodes[0].name, "first");
  CU_ASSERT_STRING_EQUAL(g->nodes[1].name, "second");
  CU_ASSERT_STRING_EQUAL(g->nodes[2].name, "third");
  CU_ASSERT_EQUAL(g->values[b].producer, 1);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_infer_shapes(g), TSL_OK);
  tsl_graph_free(g);
  /* A cycle: p = relu(q), q = relu(p). */
  g = new_graph();
  int p, q;
  tsl_graph_add_value(g, "p", &p);
  tsl_graph_add_value(g, "q", &q);
  tsl_graph_add_node(g, TSL_OP_RELU, "loop_a", 1, &q, 1, &p, &id);
  tsl_graph_add_node(g, TSL_OP_RELU, "loop_b", 1, &p, 1, &q, &id);
  CU_ASSERT_EQUAL(tsl_graph_toposort(g), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'loop_a'"));
  tsl_graph_free(g);
}

static void test_graph_output_never_produced_is_an_error(void) {
  tsl_graph *g = new_graph();
  int v;
  CU_ASSERT_EQUAL(tsl_graph_add_value(g, "dangling", &v), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, v), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'dangling'"));
  tsl_graph_free(g);
}

/* Builds x -> op(x) with the given attributes and returns the inference status. */
static tsl_status infer_one(tsl_graph *g, tsl_op op, int x, int *n) {
  *n = node(g, op, "op", 1, &x);
  return tsl_graph_infer_node(g, *n);
}

static void test_C06_asymmetric_padding_conv_shape(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 1, 32, 64}, ws[4] = {1, 1, 2, 4};
  int in[2] = {input(g, "x", 4, xs), constant(g, "w", 4, ws, 1.0f)};
  int c = node(g, TSL_OP_CONV, "c06", 2, in);
  int64_t st[2] = {2, 1}, pads[4] = {0, 1, 0, 2};
  tsl_graph_set_attr_ints(g, c, "strides", 2, st);
  tsl_graph_set_attr_ints(g, c, "pads", 4, pads);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, c), TSL_OK);
  int64_t want[4] = {1, 1, 16, 64}; /* H: (32 - 2) / 2 + 1; W: (64 + 1 + 2 - 4) / 1 + 1 */
  CU_ASSERT(shape_is(out_of(g, c), 4, want));
  tsl_graph_free(g);
}

static void test_C07_avgpool_ceil_mode_shape_9x9(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 2, 17, 17};
  int n;
  int x = input(g, "x", 4, xs);
  n = node(g, TSL_OP_AVERAGE_POOL, "c07", 1, &x);
  int64_t k[2] = {2, 2}, pads[4] = {1, 1, 1, 1};
  tsl_graph_set_attr_ints(g, n, "kernel_shape", 2, k);
  tsl_graph_set_attr_ints(g, n, "strides", 2, k);
  tsl_graph_set_attr_ints(g, n, "pads", 4, pads);
  tsl_graph_set_attr_int(g, n, "ceil_mode", 1);
  tsl_graph_set_attr_int(g, n, "count_include_pad", 1);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  /* ceil((17 + 2 - 2) / 2) + 1 = 10, but the 10th window would start at 18 >= 17 + 1. */
  int64_t want[4] = {1, 2, 9, 9};
  CU_ASSERT(shape_is(out_of(g, n), 4, want));
  tsl_graph_free(g);
}

static void test_pool_ceil_mode_without_padding_keeps_partial_window(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 1, 6, 7};
  int x = input(g, "x", 4, xs);
  int n = node(g, TSL_OP_MAX_POOL, "p", 1, &x);
  int64_t k[2] = {3, 3}, s[2] = {2, 2};
  tsl_graph_set_attr_ints(g, n, "kernel_shape", 2, k);
  tsl_graph_set_attr_ints(g, n, "strides", 2, s);
  tsl_graph_set_attr_int(g, n, "ceil_mode", 1);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want[4] = {1, 1, 3, 3}; /* H: ceil(3/2)+1 = 3 (window at 4 starts inside); W: 5/2 -> 2+1 = 3 */
  CU_ASSERT(shape_is(out_of(g, n), 4, want));
  tsl_graph_set_attr_int(g, n, "ceil_mode", 0);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t floor_want[4] = {1, 1, 2, 3};
  CU_ASSERT(shape_is(out_of(g, n), 4, floor_want));
  tsl_graph_free(g);
}

static void test_conv_errors_name_node_and_cause(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 4, 8, 8}, ws[4] = {6, 3, 3, 3}, x3[3] = {1, 4, 8};
  int in[2] = {input(g, "x", 4, xs), constant(g, "w", 4, ws, 1.0f)};
  int c = node(g, TSL_OP_CONV, "bad_conv", 2, in);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, c), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "Conv 'bad_conv'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "channels"));
  /* group must be >= 1 */
  tsl_graph_set_attr_int(g, c, "group", 0);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, c), TSL_ERR_INVALID);
  int64_t zero_stride[2] = {0, 1};
  tsl_graph_set_attr_int(g, c, "group", 1);
  tsl_graph_set_attr_ints(g, c, "strides", 2, zero_stride);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, c), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "stride 0"));
  tsl_graph_set_attr_int(g, c, "strides", 1); /* wrong kind */
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, c), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "must be ints"));
  /* A 1-D convolution (rank-3 data) is valid ONNX that tessel does not run. */
  int in1[2] = {input(g, "x1", 3, x3), in[1]};
  c = node(g, TSL_OP_CONV, "conv1d", 2, in1);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, c), TSL_ERR_UNSUPPORTED);
  tsl_graph_free(g);
}

static void test_reshape_zero_copies_and_minus_one_infers(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {2, 3, 4, 5};
  int x = input(g, "x", 4, xs), n;
  n = node(g, TSL_OP_RESHAPE, "r", 1, &x);
  int64_t shape[3] = {0, -1, 5};
  tsl_graph_set_attr_ints(g, n, "shape", 3, shape);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want[3] = {2, 12, 5};
  CU_ASSERT(shape_is(out_of(g, n), 3, want));
  int64_t bad[2] = {-1, -1};
  tsl_graph_set_attr_ints(g, n, "shape", 2, bad);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  int64_t wrong[2] = {7, 17};
  tsl_graph_set_attr_ints(g, n, "shape", 2, wrong);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  tsl_graph_free(g);
}

/* Every graph value is bounded by 2^40 elements with its zero extents counted as 1:
 * an empty value beside huge extents is refused where it enters the graph (input,
 * constant, inferred output), so later products of its extents cannot overflow. */
static void test_graph_empty_values_beside_huge_extents_are_refused(void) {
  const int64_t p20 = INT64_C(1) << 20, p21 = INT64_C(1) << 21, p40 = INT64_C(1) << 40;
  tsl_graph *g = new_graph();
  int id = -1;
  CU_ASSERT_EQUAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 3, (const int64_t[]){0, p40, p40}, &id), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "graph input 'x'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "zero extents count as 1"));
  CU_ASSERT_EQUAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 3, (const int64_t[]){p21, 0, p20}, &id), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(g->n_values, 0);
  /* at the bound (2^20 * 2^20 = 2^40) the empty input is fine */
  int x = input(g, "x", 3, (const int64_t[]){0, p20, p20});
  /* a valid runtime tensor, but above the graph's bound: refused (and freed) */
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 3, (const int64_t[]){p21, 0, p20}, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_add_constant(g, "c", t, &id), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "graph constant 'c'"));
  /* shape inference: Reshape (allowzero) of the empty input into [0, 2^40, 2^40] */
  int n = node(g, TSL_OP_RESHAPE, "r", 1, &x);
  tsl_graph_set_attr_ints(g, n, "shape", 3, (const int64_t[]){0, p40, p40});
  tsl_graph_set_attr_int(g, n, "allowzero", 1);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "Reshape 'r'"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "passes 2^40 elements"));
  tsl_graph_set_attr_ints(g, n, "shape", 3, (const int64_t[]){0, p40, 1});
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_OK);
  CU_ASSERT(shape_is(out_of(g, n), 3, (const int64_t[]){0, p40, 1}));
  tsl_graph_free(g);
}

static void test_slice_clamps_and_negative_steps(void) {
  tsl_graph *g = new_graph();
  int64_t xs[2] = {10, 6};
  int x = input(g, "x", 2, xs), n;
  n = node(g, TSL_OP_SLICE, "s", 1, &x);
  /* axis 0: from the last element down past the start, step -3: 9, 6, 3, 0.
   * axis 1: start 2, end far past the extent: 2..5. */
  int64_t starts[2] = {-1, 2}, ends[2] = {INT64_MIN, 1000}, axes[2] = {0, -1}, steps[2] = {-3, 1};
  tsl_graph_set_attr_ints(g, n, "starts", 2, starts);
  tsl_graph_set_attr_ints(g, n, "ends", 2, ends);
  tsl_graph_set_attr_ints(g, n, "axes", 2, axes);
  tsl_graph_set_attr_ints(g, n, "steps", 2, steps);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want[2] = {4, 4};
  CU_ASSERT(shape_is(out_of(g, n), 2, want));
  int64_t huge[2] = {INT64_MIN, INT64_MAX};
  tsl_graph_set_attr_ints(g, n, "steps", 2, huge); /* one element each way */
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want1[2] = {1, 1};
  CU_ASSERT(shape_is(out_of(g, n), 2, want1));
  int64_t zero[2] = {0, 1};
  tsl_graph_set_attr_ints(g, n, "steps", 2, zero);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  tsl_graph_free(g);
}

static void test_matmul_and_binary_broadcast_shapes(void) {
  tsl_graph *g = new_graph();
  int64_t as[4] = {2, 1, 3, 4}, bs[3] = {5, 4, 6}, vs[1] = {4}, cs[2] = {3, 1};
  int a = input(g, "a", 4, as), b = input(g, "b", 3, bs), v = input(g, "v", 1, vs), c = input(g, "c", 2, cs);
  int in[2] = {a, b};
  int n = node(g, TSL_OP_MATMUL, "mm", 2, in);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want[4] = {2, 5, 3, 6};
  CU_ASSERT(shape_is(out_of(g, n), 4, want));
  int in2[2] = {v, b}; /* 1-D A: [4] x [5,4,6] -> [5,6] */
  n = node(g, TSL_OP_MATMUL, "vm", 2, in2);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want2[2] = {5, 6};
  CU_ASSERT(shape_is(out_of(g, n), 2, want2));
  int in3[2] = {a, c}; /* [2,1,3,4] + [3,1] -> [2,1,3,4] */
  n = node(g, TSL_OP_ADD, "add", 2, in3);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  CU_ASSERT(shape_is(out_of(g, n), 4, as));
  int in4[2] = {a, v}; /* 4 vs 4 on the last axis: fine */
  n = node(g, TSL_OP_MUL, "mul", 2, in4);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_OK);
  int in5[2] = {b, c}; /* [5,4,6] + [3,1]: 4 vs 3 */
  n = node(g, TSL_OP_DIV, "div", 2, in5);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "do not broadcast"));
  tsl_graph_free(g);
}

static void test_split_concat_transpose_flatten_pad_shapes(void) {
  tsl_graph *g = new_graph();
  int64_t xs[3] = {2, 10, 3};
  int x = input(g, "x", 3, xs), outs[3], id;
  for (int k = 0; k < 3; k++) tsl_graph_add_value(g, NULL, &outs[k]);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_SPLIT, "split", 1, &x, 3, outs, &id), TSL_OK);
  int64_t parts[3] = {2, 3, 5};
  tsl_graph_set_attr_int(g, id, "axis", 1);
  tsl_graph_set_attr_ints(g, id, "split", 3, parts);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, id), TSL_OK);
  CU_ASSERT_EQUAL(g->values[outs[2]].shape[1], 5);
  int64_t badparts[3] = {2, 3, 4};
  tsl_graph_set_attr_ints(g, id, "split", 3, badparts);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, id), TSL_ERR_INVALID);
  int cat_in[2] = {outs[2], outs[0]};
  int n = node(g, TSL_OP_CONCAT, "cat", 2, cat_in);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID); /* axis is required */
  tsl_graph_set_attr_int(g, n, "axis", -2);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t want[3] = {2, 7, 3};
  CU_ASSERT(shape_is(out_of(g, n), 3, want));
  n = node(g, TSL_OP_TRANSPOSE, "t", 1, &x);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK); /* default: reversed */
  int64_t rev[3] = {3, 10, 2};
  CU_ASSERT(shape_is(out_of(g, n), 3, rev));
  int64_t notperm[3] = {0, 0, 1};
  tsl_graph_set_attr_ints(g, n, "perm", 3, notperm);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  n = node(g, TSL_OP_FLATTEN, "f", 1, &x);
  tsl_graph_set_attr_int(g, n, "axis", 0);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t flat[2] = {1, 60};
  CU_ASSERT(shape_is(out_of(g, n), 2, flat));
  n = node(g, TSL_OP_PAD, "p", 1, &x);
  int64_t pads[6] = {0, 1, -1, 1, 2, 0};
  tsl_graph_set_attr_ints(g, n, "pads", 6, pads);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  int64_t padded[3] = {3, 13, 2};
  CU_ASSERT(shape_is(out_of(g, n), 3, padded));
  tsl_graph_set_attr_string(g, n, "mode", "reflect"); /* same shape in every mode */
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_node(g, n), TSL_OK);
  CU_ASSERT(shape_is(out_of(g, n), 3, padded));
  tsl_graph_set_attr_string(g, n, "mode", "mirror");
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "mirror"));
  tsl_graph_free(g);
}

static void test_unsupported_forms_are_refused_clearly(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 2, 3, 3};
  int x = input(g, "x", 4, xs), n;
  /* reductions over any axes; a repeated or out-of-range axis is invalid */
  CU_ASSERT_EQUAL(infer_one(g, TSL_OP_REDUCE_MEAN, x, &n), TSL_OK); /* no axes: all axes */
  CU_ASSERT(shape_is(out_of(g, n), 4, (const int64_t[]){1, 1, 1, 1}));
  int64_t axes[1] = {1};
  tsl_graph_set_attr_ints(g, n, "axes", 1, axes);
  tsl_graph_set_attr_int(g, n, "keepdims", 0);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_OK);
  CU_ASSERT(shape_is(out_of(g, n), 3, (const int64_t[]){1, 3, 3}));
  CU_ASSERT(!tsl_node_is_spatial_mean(g, &g->nodes[n]));
  int64_t hw[2] = {-1, 2}, twice[2] = {1, -3}, far[1] = {4};
  tsl_graph_set_attr_ints(g, n, "axes", 2, hw);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_OK);
  CU_ASSERT(tsl_node_is_spatial_mean(g, &g->nodes[n]));
  tsl_graph_set_attr_ints(g, n, "axes", 2, twice);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "repeated"));
  tsl_graph_set_attr_ints(g, n, "axes", 1, far);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(infer_one(g, TSL_OP_POW, x, &n), TSL_ERR_INVALID); /* one input needs 'exponent' */
  int id, i8;
  CU_ASSERT_EQUAL(tsl_graph_add_input(g, "q", TSL_DTYPE_I8, 4, xs, &i8), TSL_OK);
  CU_ASSERT_EQUAL(infer_one(g, TSL_OP_RELU, i8, &id), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "i8"));
  /* A pool whose padding reaches a whole window. */
  CU_ASSERT_EQUAL(infer_one(g, TSL_OP_MAX_POOL, x, &n), TSL_ERR_INVALID); /* kernel_shape required */
  int64_t k[2] = {2, 2}, pads[4] = {2, 0, 0, 0};
  tsl_graph_set_attr_ints(g, n, "kernel_shape", 2, k);
  tsl_graph_set_attr_ints(g, n, "pads", 4, pads);
  CU_ASSERT_EQUAL(tsl_graph_infer_node(g, n), TSL_ERR_UNSUPPORTED);
  tsl_graph_free(g);
}

static void test_graph_prune_drops_dead_nodes_and_unused_constants(void) {
  tsl_graph *g = new_graph();
  int64_t s[1] = {4};
  int x = input(g, "x", 1, s);
  constant(g, "unused", 1, s, 2.0f);
  int k = constant(g, "k", 1, s, 3.0f);
  int dead_in[2] = {x, k};
  node(g, TSL_OP_MUL, "dead", 2, dead_in);
  int live = node(g, TSL_OP_RELU, "live", 1, &x);
  int live_out = g->nodes[live].outputs[0];
  int add_in[2] = {live_out, k};
  int fin = node(g, TSL_OP_ADD, "final", 2, add_in);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, g->nodes[fin].outputs[0]), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_prune(g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_nodes, 2);
  CU_ASSERT_STRING_EQUAL(g->nodes[0].name, "live");
  CU_ASSERT_STRING_EQUAL(g->nodes[1].name, "final");
  CU_ASSERT_EQUAL(tsl_graph_find_value(g, "unused"), -1);
  int kk = tsl_graph_find_value(g, "k");
  CU_ASSERT(kk >= 0);
  CU_ASSERT_EQUAL(g->nodes[1].inputs[1], kk);
  CU_ASSERT_EQUAL(g->values[g->nodes[1].inputs[0]].producer, 0);
  CU_ASSERT_EQUAL(g->values[g->outputs[0]].producer, 1);
  CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
  CU_ASSERT_EQUAL(g->n_values, 4); /* x, k, live's and final's outputs */
  tsl_graph_free(g);
}

static void test_graph_replace_uses_rewires_inputs_and_outputs(void) {
  tsl_graph *g = new_graph();
  int64_t s[1] = {4};
  int x = input(g, "x", 1, s), y = input(g, "y", 1, s);
  int r = node(g, TSL_OP_RELU, "r", 1, &x);
  CU_ASSERT_EQUAL(tsl_graph_add_output(g, x), TSL_OK);
  CU_ASSERT_EQUAL(tsl_graph_replace_uses(g, x, y), TSL_OK);
  CU_ASSERT_EQUAL(g->nodes[r].inputs[0], y);
  CU_ASSERT_EQUAL(g->outputs[0], y);
  CU_ASSERT_EQUAL(tsl_graph_replace_uses(g, x, 100), TSL_ERR_INVALID);
  tsl_graph_free(g);
}

static void test_param_count_skips_batchnorm_statistics(void) {
  tsl_graph *g = new_graph();
  int64_t xs[4] = {1, 3, 4, 4}, ws[4] = {5, 3, 3, 3}, c5[1] = {5}, sh[1] = {2};
  int in[2] = {input(g, "x", 4, xs), constant(g, "w", 4, ws, 1.0f)};
  int c = node(g, TSL_OP_CONV, "c", 2, in);
  int bn_in[5] = {g->nodes[c].outputs[0], constant(g, "g", 1, c5, 1), constant(g, "b", 1, c5, 0),
                  constant(g, "m", 1, c5, 0), constant(g, "v", 1, c5, 1)};
  node(g, TSL_OP_BATCH_NORM, "bn", 5, bn_in);
  /* An integer constant is not a parameter either. */
  tsl_tensor *t;
  tsl_tensor_new(TSL_DTYPE_I64, 1, sh, &t);
  int ic;
  tsl_graph_add_constant(g, "shape", t, &ic);
  CU_ASSERT_EQUAL(tsl_graph_param_count(g), 135 + 10); /* weight + scale + shift */
  CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_BATCH_NORM), 1);
  tsl_graph_free(g);
}

static void test_op_names_round_trip(void) {
  for (int op = 0; op < TSL_OP_COUNT; op++) {
    tsl_op back;
    CU_ASSERT_EQUAL(tsl_op_from_name(tsl_op_name((tsl_op)op), &back), TSL_OK);
    CU_ASSERT_EQUAL(back, (tsl_op)op);
  }
  tsl_op o;
  CU_ASSERT_EQUAL(tsl_op_from_name("LeakyRelu", &o), TSL_ERR_NOT_FOUND);
  CU_ASSERT_STRING_EQUAL(tsl_op_name(TSL_OP_BATCH_NORM), "BatchNormalization");
  CU_ASSERT_STRING_EQUAL(tsl_op_name(TSL_OP_COUNT), "?");
}

void tsl_tests_models_graph(void) {
  CU_pSuite s = CU_add_suite("models_graph", NULL, NULL);
  CU_add_test(s, "graph_conv_relu_infer_and_print", test_graph_conv_relu_infer_and_print);
  CU_add_test(s, "graph_duplicate_names_and_bad_outputs_refused", test_graph_duplicate_names_and_bad_outputs_refused);
  CU_add_test(s, "graph_check_rejects_non_topological_order", test_graph_check_rejects_non_topological_order);
  CU_add_test(s, "graph_toposort_repairs_appended_nodes_and_finds_cycles",
              test_graph_toposort_repairs_appended_nodes_and_finds_cycles);
  CU_add_test(s, "graph_output_never_produced_is_an_error", test_graph_output_never_produced_is_an_error);
  CU_add_test(s, "C06_asymmetric_padding_conv_shape", test_C06_asymmetric_padding_conv_shape);
  CU_add_test(s, "C07_avgpool_ceil_mode_shape_9x9", test_C07_avgpool_ceil_mode_shape_9x9);
  CU_add_test(s, "pool_ceil_mode_without_padding_keeps_partial_window",
              test_pool_ceil_mode_without_padding_keeps_partial_window);
  CU_add_test(s, "conv_errors_name_node_and_cause", test_conv_errors_name_node_and_cause);
  CU_add_test(s, "reshape_zero_copies_and_minus_one_infers", test_reshape_zero_copies_and_minus_one_infers);
  CU_add_test(s, "graph_empty_values_beside_huge_extents_are_refused",
              test_graph_empty_values_beside_huge_extents_are_refused);
  CU_add_test(s, "slice_clamps_and_negative_steps", test_slice_clamps_and_negative_steps);
  CU_add_test(s, "matmul_and_binary_broadcast_shapes", test_matmul_and_binary_broadcast_shapes);
  CU_add_test(s, "split_concat_transpose_flatten_pad_shapes", test_split_concat_transpose_flatten_pad_shapes);
  CU_add_test(s, "unsupported_forms_are_refused_clearly", test_unsupported_forms_are_refused_clearly);
  CU_add_test(s, "graph_prune_drops_dead_nodes_and_unused_constants",
              test_graph_prune_drops_dead_nodes_and_unused_constants);
  CU_add_test(s, "graph_replace_uses_rewires_inputs_and_outputs", test_graph_replace_uses_rewires_inputs_and_outputs);
  CU_add_test(s, "param_count_skips_batchnorm_statistics", test_param_count_skips_batchnorm_statistics);
  CU_add_test(s, "op_names_round_trip", test_op_names_round_trip);
}
