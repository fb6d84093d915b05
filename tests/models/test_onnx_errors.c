/* ONNX input that must be refused with a clear error and never crash: unknown
 * operators, attributes and domains, wrong opsets, malformed tensors, symbolic shapes,
 * training mode, and files truncated or corrupted at seeded random places (run under
 * ASan in CI). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/onnx.h"
#include "models_tests.h"
#include "models_util.h"
#include "onnx_build.h"

static tsl_status load(const ob_model *m) {
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  tsl_graph *g = NULL;
  tsl_status st = tsl_graph_load_onnx_memory(buf, n, NULL, &g);
  free(buf);
  tsl_graph_free(g);
  return st;
}

static bool msg_has(const char *a, const char *b) {
  const char *m = tsl_last_error();
  bool ok = strstr(m, a) != NULL && (!b || strstr(m, b) != NULL);
  if (!ok) printf("\n  unexpected message: %s\n", m);
  return ok;
}

/* x[1,2,4,4] -> Conv(w) -> Relu -> y, at `opset`. */
static ob_model *small_model(int64_t opset) {
  ob_model *m = ob_new(opset);
  int64_t xs[4] = {1, 2, 4, 4}, ws[4] = {3, 2, 3, 3};
  float w[54];
  for (int i = 0; i < 54; i++) w[i] = (float)(i % 5) - 2.0f;
  ob_input(m, "x", OB_FLOAT, 4, xs);
  ob_init_f32(m, "w", 4, ws, w, OB_RAW, NULL, 0);
  ob_node(m, "Conv", "conv", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"c"});
  ob_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ob_node(m, "Relu", "relu", 1, (const char *[]){"c"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  return m;
}

static void test_onnx_unknown_operator_names_node_op_and_opset(void) {
  ob_model *m = small_model(13);
  ob_node(m, "FancyNewOp", "mystery", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  ob_output(m, "z");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("node 'mystery' (FancyNewOp, opset 13)", "not supported"));
  ob_free(m);
  /* A known ONNX operator outside tessel's set, unnamed: named by its index. */
  m = small_model(13);
  ob_node(m, "Hardmax", NULL, 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("node '#2' (Hardmax, opset 13)", NULL));
  ob_free(m);
  /* An activation newer than the model's opset: HardSwish exists from opset 14 on. */
  m = small_model(13);
  ob_node(m, "HardSwish", "hs", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("node 'hs' (HardSwish, opset 13)", "defined from opset 14"));
  ob_free(m);
  /* An attribute the function does not have. */
  m = small_model(13);
  ob_node(m, "Sigmoid", "sg", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  ob_attr_float(m, "alpha", 0.5f);
  CU_ASSERT_NOT_EQUAL(load(m), TSL_OK);
  CU_ASSERT(msg_has("node 'sg' (Sigmoid, opset 13)", "alpha"));
  ob_free(m);
  /* Shape-chain operators are accepted only where they fold to constants. */
  m = small_model(13);
  ob_init_i64(m, "idx", 0, NULL, (int64_t[]){0}, OB_RAW);
  ob_node(m, "Gather", "g", 2, (const char *[]){"y", "idx"}, 1, (const char *[]){"z"});
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("(Gather, opset 13)", "non-constant"));
  ob_free(m);
}

/* SpaceToDepth: imported with its blocksize (y [1, 3, 4, 4] -> [1, 12, 2, 2]); a missing
 * or non-positive blocksize, or one that does not divide H and W, is refused naming the
 * node and the attribute. */
static void test_onnx_space_to_depth_blocksize(void) {
  static const int64_t sizes[] = {2, 0, -1, 3};
  for (int i = 0; i < 5; i++) {
    ob_model *m = small_model(13);
    ob_node(m, "SpaceToDepth", "s2d", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
    if (i < 4) ob_attr_int(m, "blocksize", sizes[i]);
    ob_output(m, "z");
    size_t n;
    uint8_t *buf = ob_pack(m, &n);
    tsl_graph *g = NULL;
    tsl_status st = tsl_graph_load_onnx_memory(buf, n, NULL, &g);
    free(buf);
    if (i == 0) {
      CU_ASSERT_EQUAL(st, TSL_OK);
      int z = g ? tsl_graph_find_value(g, "z") : -1;
      CU_ASSERT(z >= 0 && g->values[z].ndim == 4 && g->values[z].shape[1] == 12 && g->values[z].shape[2] == 2 &&
                g->values[z].shape[3] == 2);
      CU_ASSERT_EQUAL(tsl_graph_count_op(g, TSL_OP_SPACE_TO_DEPTH), 1);
    } else {
      CU_ASSERT_EQUAL(st, TSL_ERR_INVALID);
      CU_ASSERT(msg_has("s2d", "blocksize"));
    }
    tsl_graph_free(g);
    ob_free(m);
  }
}

static void test_onnx_wrong_opsets_and_domains_are_refused(void) {
  int64_t bad[2] = {20, 100};
  for (int k = 0; k < 2; k++) {
    ob_model *m = small_model(bad[k]);
    char want[32];
    snprintf(want, sizeof want, "opset %lld", (long long)bad[k]);
    CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
    CU_ASSERT(msg_has(want, "7..19"));
    ob_free(m);
  }
  ob_model *m = small_model(0); /* no opset_import */
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("no opset", NULL));
  ob_free(m);
  m = small_model(7);
  CU_ASSERT_EQUAL(load(m), TSL_OK);
  ob_free(m);
  /* Older opsets node by node: Conv and Relu have their opset-7 definitions at opset 6,
   * Relu at opset 5 still had consumed_inputs. */
  m = small_model(6);
  CU_ASSERT_EQUAL(load(m), TSL_OK);
  ob_free(m);
  m = small_model(5);
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("(Relu, opset 5)", "opset-5 definition of Relu"));
  ob_free(m);
  /* Opset 6 legacy broadcast: a trailing B is numpy broadcasting, another axis is not. */
  for (int axis = 1; axis <= 2; axis++) {
    m = small_model(6);
    int64_t bs[2] = {axis == 1 ? 3 : 4, 4}; /* A is [1, 3, 4, 4] */
    float b[16] = {0};
    ob_init_f32(m, "b", 2, bs, b, OB_RAW, NULL, 0);
    ob_node(m, "Add", "legacy_add", 2, (const char *[]){"y", "b"}, 1, (const char *[]){"z"});
    ob_attr_int(m, "broadcast", 1);
    ob_attr_int(m, "axis", axis);
    ob_output(m, "z");
    CU_ASSERT_EQUAL(load(m), axis == 2 ? TSL_OK : TSL_ERR_UNSUPPORTED);
    if (axis == 1) CU_ASSERT(msg_has("'legacy_add'", "legacy broadcast"));
    ob_free(m);
  }
  m = small_model(18);
  ob_node_domain(m, "com.microsoft");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("domain 'com.microsoft'", NULL));
  ob_free(m);
}

static void test_onnx_malformed_graphs_are_invalid(void) {
  ob_model *m = small_model(13);
  ob_node(m, "Relu", "r", 1, (const char *[]){"nowhere"}, 1, (const char *[]){"z"});
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("'nowhere' is not defined", NULL));
  ob_free(m);
  m = small_model(13);
  ob_node(m, "Relu", "again", 1, (const char *[]){"x"}, 1, (const char *[]){"c"});
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("defined twice", NULL));
  ob_free(m);
  m = small_model(13);
  ob_output(m, "never");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("'never'", NULL));
  ob_free(m);
  /* raw_data of the wrong size for its shape. */
  m = small_model(13);
  int64_t bs[1] = {3};
  float b[2] = {1, 2};
  ob_init_raw(m, "bias", OB_FLOAT, 1, bs, b, sizeof b);
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("'bias'", "raw_data of 8 bytes"));
  ob_free(m);
  /* Wrong channel count: the shape error names the node. */
  m = ob_new(13);
  int64_t xs[4] = {1, 3, 4, 4}, ws[4] = {2, 2, 1, 1};
  float w[4] = {1, 1, 1, 1};
  ob_input(m, "x", OB_FLOAT, 4, xs);
  ob_init_f32(m, "w", 4, ws, w, OB_RAW, NULL, 0);
  ob_node(m, "Conv", "mismatch", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("opset 13", "'mismatch'"));
  ob_free(m);
  /* An attribute of the wrong type. */
  m = small_model(13);
  ob_node(m, "Flatten", "f", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  ob_attr_float(m, "axis", 1.0f);
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("'axis' must be an int", NULL));
  ob_free(m);
}

static void test_onnx_valid_but_unsupported_inputs_are_refused(void) {
  ob_model *m = small_model(13);
  ob_node(m, "Flatten", "f", 1, (const char *[]){"y"}, 1, (const char *[]){"z"});
  ob_attr_int(m, "axis", 1);
  ob_attr_int(m, "future_attr", 1);
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("'future_attr'", NULL));
  ob_free(m);
  m = ob_new(13); /* symbolic batch dimension */
  int64_t xs[2] = {-1, 4};
  ob_input(m, "x", OB_FLOAT, 2, xs);
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("symbolic ('N')", NULL));
  ob_free(m);
  m = ob_new(13); /* string initializer */
  int64_t one[1] = {1};
  ob_input(m, "x", OB_FLOAT, 1, one);
  ob_init_raw(m, "s", OB_STRING, 1, one, "a", 1);
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("'s'", "unsupported"));
  ob_free(m);
  m = ob_new(15); /* batch norm in training mode */
  int64_t xs4[4] = {1, 2, 1, 1}, c2[1] = {2};
  float p[2] = {1, 1};
  ob_input(m, "x", OB_FLOAT, 4, xs4);
  const char *names[4] = {"s", "b", "mean", "var"};
  for (int k = 0; k < 4; k++) ob_init_f32(m, names[k], 1, c2, p, OB_RAW, NULL, 0);
  ob_node(m, "BatchNormalization", "bn", 5, (const char *[]){"x", "s", "b", "mean", "var"}, 1,
          (const char *[]){"y"});
  ob_attr_int(m, "training_mode", 1);
  ob_output(m, "y");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("(BatchNormalization, opset 15)", "training"));
  ob_free(m);
  m = small_model(13); /* uint8 data: valid ONNX, not what tessel runs */
  ob_input(m, "q", OB_UINT8, 1, one);
  ob_node(m, "Relu", "rq", 1, (const char *[]){"q"}, 1, (const char *[]){"z"});
  CU_ASSERT_EQUAL(load(m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT(msg_has("'rq'", "u8"));
  ob_free(m);
}

/* Found by coverage-guided fuzzing (tests/fuzz/fuzz_onnx_load.c): an initializer with a
 * zero extent beside huge ones was accepted as empty and its strides overflowed int64
 * in tsl_tensor_new. Each must be refused with a message naming the tensor, whether it
 * comes in a model (from memory or a file) or alone as a TensorProto. The shapes are
 * chosen by hand to pass 2^40 elements once the zero counts as 1. */
static void test_onnx_empty_initializer_beside_huge_extents_is_refused(void) {
  const int64_t p20 = INT64_C(1) << 20, p21 = INT64_C(1) << 21, p62 = INT64_C(1) << 62;
  const int64_t shapes[4][3] = {{0, p62, p62}, {p62, p62, 0}, {p62, 0, 4}, {0, p21, p20}};
  for (int k = 0; k < 4; k++) {
    ob_model *m = small_model(13);
    ob_init_raw(m, "huge", OB_FLOAT, 3, shapes[k], NULL, 0);
    CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
    CU_ASSERT(msg_has("onnx: tensor 'huge'", "zero extents count as 1"));
    size_t n;
    uint8_t *buf = ob_pack_initializer(m, 1, &n);
    tsl_tensor *t = NULL;
    char name[16];
    CU_ASSERT_EQUAL(tsl_onnx_tensor_from_memory(buf, n, &t, name, sizeof name), TSL_ERR_INVALID);
    CU_ASSERT(msg_has("onnx: tensor 'huge'", "passes 2^40 elements"));
    CU_ASSERT_PTR_NULL(t);
    free(buf);
    ob_free(m);
  }
  /* the same model through a file */
  ob_model *m = small_model(13);
  ob_init_raw(m, "huge", OB_FLOAT, 3, shapes[0], NULL, 0);
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  char path[] = "/tmp/tessel-onnx-empty-XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  FILE *f = fdopen(fd, "wb");
  CU_ASSERT_EQUAL(fwrite(buf, 1, n, f), n);
  fclose(f);
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL(tsl_graph_load_onnx(path, &g), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("'huge'", path));
  CU_ASSERT_PTR_NULL(g);
  unlink(path);
  free(buf);
  ob_free(m);
  /* a graph input of that shape is refused the same way */
  m = ob_new(13);
  ob_input(m, "x", OB_FLOAT, 3, shapes[0]);
  ob_node(m, "Relu", "r", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("'x'", "zero extents count as 1"));
  ob_free(m);
  /* and an empty initializer within the bound still loads */
  m = small_model(13);
  ob_init_raw(m, "empty", OB_FLOAT, 3, (const int64_t[]){0, p20, p20}, NULL, 0);
  CU_ASSERT_EQUAL(load(m), TSL_OK);
  ob_free(m);
}

/* Found by fuzzing (tests/fuzz/fuzz_onnx_load.c): a node whose data input is omitted
 * (an empty name) while a later input is given passed the input count, and the
 * handlers that look at the data's shape before shape inference (legacy Add, Pad,
 * Split, Conv's auto_pad, ReduceMean without axes) read value -1. Each must be refused
 * naming the node. */
static void test_onnx_omitted_required_input_is_refused(void) {
  int64_t four[1] = {4}, x4[4] = {1, 2, 4, 4};
  float w[18] = {0};
  struct {
    int64_t opset;
    const char *op;
    int n_in;
    const char *in[2];
  } cases[] = {{6, "Add", 2, {"", "x"}},    {13, "Pad", 2, {"", "pads"}},   {13, "Split", 2, {"", "sp"}},
               {13, "Conv", 2, {"", "w"}}, {18, "ReduceMean", 2, {"", "ax"}}, {13, "Add", 2, {"", "x"}}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    ob_model *m = ob_new(cases[k].opset);
    ob_input(m, "x", OB_FLOAT, 4, x4);
    ob_init_i64(m, "pads", 1, (int64_t[]){8}, (int64_t[]){0, 0, 1, 1, 0, 0, 1, 1}, OB_RAW);
    ob_init_i64(m, "sp", 1, (int64_t[]){2}, (int64_t[]){1, 1}, OB_RAW);
    ob_init_i64(m, "ax", 1, four, (int64_t[]){0, 1, 2, 3}, OB_RAW);
    ob_init_f32(m, "w", 4, (int64_t[]){1, 2, 3, 3}, w, OB_RAW, NULL, 0);
    ob_node(m, cases[k].op, "n", cases[k].n_in, cases[k].in, 1, (const char *[]){"y"});
    if (strcmp(cases[k].op, "Conv") == 0) ob_attr_string(m, "auto_pad", "SAME_UPPER");
    if (strcmp(cases[k].op, "Split") == 0) ob_attr_int(m, "axis", 1);
    ob_output(m, "y");
    CU_ASSERT_EQUAL(load(m), TSL_ERR_INVALID);
    CU_ASSERT(msg_has("node 'n'", "required input 0 is omitted"));
    ob_free(m);
  }
}

static void test_onnx_unreadable_and_empty_files(void) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL(tsl_graph_load_onnx("/nonexistent/model.onnx", &g), TSL_ERR_IO);
  CU_ASSERT(msg_has("/nonexistent/model.onnx", NULL));
  CU_ASSERT_EQUAL(tsl_graph_load_onnx("/tmp", &g), TSL_ERR_IO);
  uint8_t nothing = 0;
  CU_ASSERT_EQUAL(tsl_graph_load_onnx_memory(&nothing, 0, NULL, &g), TSL_ERR_INVALID);
  uint8_t garbage[5] = {0xff, 0xff, 0xff, 0xff, 0xff};
  CU_ASSERT_EQUAL(tsl_graph_load_onnx_memory(garbage, sizeof garbage, NULL, &g), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("not a valid ONNX model", NULL));
  CU_ASSERT_PTR_NULL(g);
}

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Loads a mutated buffer: either a graph that passes its own checks or an error with
 * an importer message. Returns 1 if it loaded. */
static int load_mutant(const uint8_t *buf, size_t n, int *bad_messages) {
  tsl_graph *g = NULL;
  tsl_status st = tsl_graph_load_onnx_memory(buf, n, NULL, &g);
  if (st == TSL_OK) {
    CU_ASSERT_EQUAL(tsl_graph_check(g), TSL_OK);
    FILE *devnull = fopen("/dev/null", "w");
    tsl_graph_print(g, devnull); /* the printer copes with whatever loaded */
    fclose(devnull);
    tsl_graph_free(g);
    return 1;
  }
  CU_ASSERT_PTR_NULL(g);
  if (st == TSL_ERR_NOMEM || strncmp(tsl_last_error(), "onnx", 4) != 0) {
    if (*bad_messages < 3) printf("\n  unclear error %d: %s\n", st, tsl_last_error());
    ++*bad_messages;
  }
  return 0;
}

/* Truncations at `n_cuts` offsets (all offsets when n_cuts >= size) and `n_flips`
 * mutants with 1-4 random bytes changed (positions drawn from [lo, hi)). */
static void fuzz(const uint8_t *orig, size_t size, int n_cuts, int n_flips, size_t lo, size_t hi, uint64_t seed,
                 const char *what) {
  uint8_t *buf = malloc(size);
  CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
  int loaded = 0, bad = 0, runs = 0;
  uint64_t s = seed;
  for (int i = 0; i < n_cuts; i++) {
    size_t cut = (size_t)n_cuts >= size ? (size_t)i : (size_t)(rng_next(&s) % size);
    if (cut >= size) break;
    loaded += load_mutant(orig, cut, &bad);
    runs++;
  }
  for (int i = 0; i < n_flips; i++) {
    memcpy(buf, orig, size);
    int k = 1 + (int)(rng_next(&s) % 4);
    for (int j = 0; j < k; j++) {
      size_t at = lo + (size_t)(rng_next(&s) % (hi - lo));
      uint64_t r = rng_next(&s);
      /* Half the time a single flipped bit, else a random byte: both kinds of damage. */
      buf[at] = r & 1 ? (uint8_t)(buf[at] ^ (1u << ((r >> 1) % 8))) : (uint8_t)(r >> 8);
    }
    loaded += load_mutant(buf, size, &bad);
    runs++;
  }
  printf("\n  fuzz %s: %d mutants, %d still loaded, %d refused", what, runs, loaded, runs - loaded);
  CU_ASSERT_EQUAL(bad, 0);
  free(buf);
}

/* A model touching most import paths: typed and raw initializers, constant parameter
 * inputs (Clip, Slice, Split), a Constant node, and a Shape-Gather-Unsqueeze-Concat
 * chain folded into Reshape's shape. */
static ob_model *rich_model(void) {
  ob_model *m = ob_new(13);
  int64_t xs[4] = {1, 4, 6, 6}, ws[4] = {4, 4, 3, 3}, c4[1] = {4}, one[1] = {1}, two[1] = {2};
  float w[144], p[4] = {1, 0.5f, 2, 1};
  for (int i = 0; i < 144; i++) w[i] = (float)(i % 7) * 0.1f;
  ob_input(m, "x", OB_FLOAT, 4, xs);
  ob_init_f32(m, "w", 4, ws, w, OB_RAW, NULL, 0);
  ob_init_f32(m, "s", 1, c4, p, OB_TYPED, NULL, 0);
  ob_init_f32(m, "b", 1, c4, p, OB_RAW, NULL, 0);
  ob_init_i64(m, "zero", 0, NULL, (int64_t[]){0}, OB_TYPED);
  ob_init_i64(m, "minus1", 1, one, (int64_t[]){-1}, OB_RAW);
  ob_init_i64(m, "axes0", 1, one, (int64_t[]){0}, OB_TYPED);
  ob_init_i64(m, "st", 1, one, (int64_t[]){1}, OB_TYPED);
  ob_init_i64(m, "en", 1, one, (int64_t[]){3}, OB_TYPED);
  ob_init_i64(m, "ax", 1, one, (int64_t[]){1}, OB_TYPED);
  ob_init_i64(m, "parts", 1, two, (int64_t[]){1, 1}, OB_TYPED);
  ob_node(m, "Conv", "conv", 2, (const char *[]){"x", "w"}, 1, (const char *[]){"c"});
  ob_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ob_node(m, "BatchNormalization", "bn", 5, (const char *[]){"c", "s", "b", "s", "s"}, 1, (const char *[]){"bn"});
  ob_node(m, "Constant", "lo", 0, NULL, 1, (const char *[]){"lo"});
  ob_attr_tensor_f32(m, "value", 0, NULL, (float[]){0.0f});
  ob_node(m, "Clip", "clip", 2, (const char *[]){"bn", "lo"}, 1, (const char *[]){"r"});
  ob_node(m, "Slice", "slice", 4, (const char *[]){"r", "st", "en", "ax"}, 1, (const char *[]){"sl"});
  ob_node(m, "Split", "split", 2, (const char *[]){"sl", "parts"}, 2, (const char *[]){"p0", "p1"});
  ob_attr_int(m, "axis", 1);
  ob_node(m, "Concat", "cat", 2, (const char *[]){"p1", "p0"}, 1, (const char *[]){"cc"});
  ob_attr_int(m, "axis", 1);
  ob_node(m, "MaxPool", "mp", 1, (const char *[]){"cc"}, 1, (const char *[]){"mp"});
  ob_attr_ints(m, "kernel_shape", 2, (int64_t[]){2, 2});
  ob_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
  ob_attr_int(m, "ceil_mode", 1);
  ob_node(m, "Shape", "shape", 1, (const char *[]){"mp"}, 1, (const char *[]){"sh"});
  ob_node(m, "Gather", "gather", 2, (const char *[]){"sh", "zero"}, 1, (const char *[]){"n"});
  ob_node(m, "Unsqueeze", "unsq", 2, (const char *[]){"n", "axes0"}, 1, (const char *[]){"n1"});
  ob_node(m, "Concat", "cat2", 2, (const char *[]){"n1", "minus1"}, 1, (const char *[]){"shp"});
  ob_attr_int(m, "axis", 0);
  ob_node(m, "Reshape", "reshape", 2, (const char *[]){"mp", "shp"}, 1, (const char *[]){"flat"});
  ob_node(m, "Softmax", "sm", 1, (const char *[]){"flat"}, 1, (const char *[]){"y"});
  ob_attr_int(m, "axis", 1);
  ob_output(m, "y");
  return m;
}

static void test_onnx_fuzz_small_models_every_truncation_and_byte_flips(void) {
  ob_model *m = rich_model();
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_load_onnx_memory(buf, n, NULL, &g), TSL_OK); /* the original loads */
  CU_ASSERT_EQUAL(g->n_nodes, 9);
  tsl_graph_free(g);
  fuzz(buf, n, (int)n, 4000, 0, n, 42, "rich model");
  free(buf);
  ob_free(m);
  m = small_model(13);
  buf = ob_pack(m, &n);
  fuzz(buf, n, (int)n, 1000, 0, n, 43, "conv model");
  free(buf);
  ob_free(m);
}

static void test_onnx_fuzz_shared_model_truncations_and_flips(void) {
  const char *dir = mt_shared_models_dir("onnx_fuzz_shared_model");
  if (!dir) return;
  char path[4200];
  snprintf(path, sizeof path, "%s/squeezenet1_1.onnx", dir);
  size_t n;
  uint8_t *buf = mt_read_file(path, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
  /* Nodes come first in the file and inputs/outputs last: flip bytes there, where
   * the structure is, as well as anywhere. */
  fuzz(buf, n, 24, 0, 0, n, 7, "squeezenet1_1 truncations");
  fuzz(buf, n, 0, 40, 0, 16384, 8, "squeezenet1_1 node bytes");
  fuzz(buf, n, 0, 24, n - 96, n, 9, "squeezenet1_1 trailing bytes");
  free(buf);
}

void tsl_tests_models_onnx_errors(void) {
  CU_pSuite s = CU_add_suite("models_onnx_errors", NULL, NULL);
  CU_add_test(s, "onnx_unknown_operator_names_node_op_and_opset", test_onnx_unknown_operator_names_node_op_and_opset);
  CU_add_test(s, "onnx_wrong_opsets_and_domains_are_refused", test_onnx_wrong_opsets_and_domains_are_refused);
  CU_add_test(s, "onnx_space_to_depth_blocksize", test_onnx_space_to_depth_blocksize);
  CU_add_test(s, "onnx_malformed_graphs_are_invalid", test_onnx_malformed_graphs_are_invalid);
  CU_add_test(s, "onnx_valid_but_unsupported_inputs_are_refused", test_onnx_valid_but_unsupported_inputs_are_refused);
  CU_add_test(s, "onnx_empty_initializer_beside_huge_extents_is_refused",
              test_onnx_empty_initializer_beside_huge_extents_is_refused);
  CU_add_test(s, "onnx_omitted_required_input_is_refused", test_onnx_omitted_required_input_is_refused);
  CU_add_test(s, "onnx_unreadable_and_empty_files", test_onnx_unreadable_and_empty_files);
  CU_add_test(s, "onnx_fuzz_small_models_every_truncation_and_byte_flips",
              test_onnx_fuzz_small_models_every_truncation_and_byte_flips);
  CU_add_test(s, "onnx_fuzz_shared_model_truncations_and_flips", test_onnx_fuzz_shared_model_truncations_and_flips);
}
