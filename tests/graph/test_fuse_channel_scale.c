/* Squeeze-excitation's channel scale folded into the next conv (models/passes/
 * fuse_channel_scale.h): SE blocks built here (GlobalAveragePool -> Conv 1x1 -> Relu ->
 * Conv 1x1 -> HardSigmoid / Sigmoid -> Mul with the block's activations, in either
 * operand order) before a 1x1 projection conv (with and without a residual Add), at
 * C = 19 (not a multiple of the lanes) and N = 1, 2, compiled and run against the
 * reference executor on the same graph; the compiled plan has no broadcast Mul step
 * where the pattern matched (the scale is inside the GEMM 1x1 kernel, or a step on the
 * transformed weight of a strided 1x1 conv), and keeps it where it did not. Compiled
 * with records, the scaled conv takes GEMM 1x1's record (the one algorithm it runs). */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "models/passes/fuse_channel_scale.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "runtime/graph_executor.h"
#include "tessel/plan.h"

enum { C = 19, SQUEEZE = 5 };

static int node1(tsl_graph *g, tsl_op op, int x) { return gt_add_node(g, op, 1, &x, NULL); }

static int mul(tsl_graph *g, int a, int b) {
  int ins[2] = {a, b};
  return gt_add_node(g, TSL_OP_MUL, 2, ins, NULL);
}

/* The gate of x: pool -> conv -> relu -> conv -> `fn` (HardSigmoid at MobileNetV3's
 * 1/6, 1/2; Sigmoid); its value. */
static int se_gate(tsl_graph *g, int x, const char *fn, uint64_t seed) {
  int p = node1(g, TSL_OP_GLOBAL_AVERAGE_POOL, x);
  int h = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, p, C, SQUEEZE, seed));
  int s = gt_add_conv1x1(g, h, SQUEEZE, C, seed + 2);
  int node, gate = gt_add_node(g, TSL_OP_ACTIVATION, 1, &s, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_string(g, node, "function", fn), TSL_OK);
  if (strcmp(fn, "HardSigmoid") == 0) {
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "alpha", 1.0 / 6.0), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_float(g, node, "beta", 0.5), TSL_OK);
  }
  return gate;
}

/* A 1x1 conv cin -> cout with stride `stride` on x. */
static int conv1x1_strided(tsl_graph *g, int x, int64_t cin, int64_t cout, int64_t stride, uint64_t seed) {
  int v = gt_add_conv1x1(g, x, cin, cout, seed);
  if (stride != 1) {
    int64_t s[2] = {stride, stride};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, g->values[v].producer, "strides", 2, s), TSL_OK);
  }
  return v;
}

/* Compiles g, counting the plan's steps whose kernel name starts with each prefix. */
static void count_steps(const tsl_graph *g, const char *const *prefixes, int n, int *counts) {
  tsl_graph_plan *plan = NULL;
  for (int k = 0; k < n; k++) counts[k] = -1;
  tsl_status st = tsl_graph_compile(g, NULL, &plan, NULL);
  if (st != TSL_OK) printf("\n  compile: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  for (int k = 0; k < n; k++) counts[k] = 0;
  for (int i = 0; i < tsl_graph_plan_num_steps(plan); i++) {
    const char *name = tsl_kernel_name(tsl_graph_plan_step_kernel(plan, i));
    for (int k = 0; k < n; k++) counts[k] += strncmp(name, prefixes[k], strlen(prefixes[k])) == 0;
  }
  tsl_graph_plan_free(plan);
}

static const char *const kinds[3] = {"mul", "conv_gemm1x1_scale", "conv_weight_channel_scale"};
enum { MUL_STEPS, SCALED_GEMM, WEIGHT_SCALE_STEPS };

/* Runs g on a seeded input against the reference executor (relative error 1e-5). */
static void check(const tsl_graph *g, const char *what, int64_t n_in) {
  float *x = gt_random(n_in, 11, -2.0, 2.0);
  const float *ins[1] = {x};
  CU_ASSERT(gt_check_vs_reference(g, what, ins, 1e-5) >= 0);
  free(x);
}

/* Infers g's shapes, compiles it expecting these counts of broadcast Mul steps,
 * channel-scaled GEMM 1x1 steps and weight-scale steps, checks it against the
 * reference, frees it. */
static void expect_and_check(tsl_graph *g, const char *what, int64_t n_in, int muls, int scaled_gemms,
                             int weight_steps) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  int counts[3];
  count_steps(g, kinds, 3, counts);
  CU_ASSERT_EQUAL(counts[MUL_STEPS], muls);
  CU_ASSERT_EQUAL(counts[SCALED_GEMM], scaled_gemms);
  CU_ASSERT_EQUAL(counts[WEIGHT_SCALE_STEPS], weight_steps);
  check(g, what, n_in);
  tsl_graph_free(g);
}

static tsl_graph *new_graph(int64_t n, int64_t h, int64_t w, int *x) {
  tsl_graph *g;
  int64_t s[4] = {n, C, h, w};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("se", &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, x), TSL_OK);
  return g;
}

/* Two SE blocks: HardSigmoid, Mul(x, gate), projection conv; Sigmoid, Mul(gate, x),
 * projection conv + residual Add (the _add kernel); both fold, at N = 1 and 2. */
static void test_se_blocks_fold_into_the_projection_conv(void) {
  for (int64_t n = 1; n <= 2; n++) {
    int x;
    tsl_graph *g = new_graph(n, 6, 7, &x);
    int a = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, x, C, C, 1));
    int b = gt_add_conv1x1(g, mul(g, a, se_gate(g, a, "HardSigmoid", 10)), C, C, 20);
    int c = node1(g, TSL_OP_RELU, b);
    int ins[2] = {gt_add_conv1x1(g, mul(g, se_gate(g, c, "Sigmoid", 30), c), C, C, 40), b};
    int y = gt_add_node(g, TSL_OP_ADD, 2, ins, NULL);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gt_add_conv1x1(g, y, C, 13, 50)), TSL_OK);
    expect_and_check(g, n == 1 ? "two SE blocks, N = 1" : "two SE blocks, N = 2", n * C * 6 * 7, 0, 2, 0);
  }
}

/* The gate read by another node too (here a graph output): the scale still folds, the
 * gate is still computed. */
static void test_gate_with_another_reader_folds(void) {
  int x;
  tsl_graph *g = new_graph(1, 5, 5, &x);
  int a = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, x, C, C, 1));
  int gate = se_gate(g, a, "HardSigmoid", 10);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gt_add_conv1x1(g, mul(g, gate, a), C, 7, 20)), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gate), TSL_OK);
  expect_and_check(g, "gate also a graph output", C * 5 * 5, 0, 1, 0);
}

/* A strided 1x1 projection (no GEMM 1x1) of one image: the scale is a step on the
 * transformed weight, still no Mul over the image. */
static void test_strided_projection_scales_its_weight(void) {
  int x;
  tsl_graph *g = new_graph(1, 9, 8, &x);
  int a = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, x, C, C, 1));
  CU_ASSERT_EQUAL_FATAL(
      tsl_graph_add_output(g, conv1x1_strided(g, mul(g, a, se_gate(g, a, "Sigmoid", 10)), C, 11, 2, 20)), TSL_OK);
  expect_and_check(g, "strided projection, N = 1", C * 9 * 8, 0, 0, 1);
}

/* What is not the pattern keeps its Mul and stays right: the scaled tensor read by a
 * Relu, read twice (a conv and a graph output), consumed by a 3x3 conv, a strided
 * projection of two images (its weight would differ per image), and a projection with
 * K >= H*W outputs (its weight larger than the image). */
static void test_other_consumers_keep_the_mul(void) {
  for (int variant = 0; variant < 5; variant++) {
    int x;
    int64_t n = variant == 3 ? 2 : 1;
    tsl_graph *g = new_graph(n, 6, 6, &x);
    int a = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, x, C, C, 1));
    int m = mul(g, a, se_gate(g, a, "HardSigmoid", 10));
    int y;
    if (variant == 0) {
      y = gt_add_conv1x1(g, node1(g, TSL_OP_RELU, m), C, 9, 20);
    } else if (variant == 1) {
      y = gt_add_conv1x1(g, m, C, 9, 20);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, m), TSL_OK);
    } else if (variant == 2) {
      int64_t ws[4] = {9, C, 3, 3}, pads[4] = {1, 1, 1, 1};
      int ins[2] = {m, gt_add_const(g, 4, ws, 20, -0.3, 0.3)};
      int node;
      y = gt_add_node(g, TSL_OP_CONV, 2, ins, &node);
      CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
    } else if (variant == 3) {
      y = conv1x1_strided(g, m, C, 9, 2, 20);
    } else {
      y = gt_add_conv1x1(g, m, C, 36, 20); /* K >= H*W: scaling the weight costs more */
    }
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, y), TSL_OK);
    char what[64];
    snprintf(what, sizeof what, "not folded, variant %d", variant);
    expect_and_check(g, what, n * C * 6 * 6, 1, 0, 0);
  }
}

/* Records for every conv layer of g: each applicable algorithm at its template's
 * default config, GEMM 1x1 ten times slower than the others (so it never wins the
 * unrestricted dispatch). */
static tsl_records *records_gemm_slowest(const tsl_graph *g, const tsl_target *t) {
  tsl_conv_layer layers[16];
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_conv_layers(g, "host", layers, 16, &n), TSL_OK);
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  char target[192];
  tsl_target_str(t, target, sizeof target);
  for (int l = 0; l < n && l < 16; l++) {
    tsl_workload *w = &layers[l].workload;
    tsl_workload_fix(w);
    char *key = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(w, &key), TSL_OK);
    tsl_algo_choice a[16];
    int na = tsl_algorithms_for(w, a, 16, NULL);
    for (int i = 0; i < na && i < 16; i++) {
      tsl_te_program *p = NULL;
      tsl_config_space sp;
      tsl_record r;
      memset(&r, 0, sizeof r);
      if (tsl_workload_instantiate(&a[i].op_workload, &p) != TSL_OK || a[i].tpl->space(p, t, &sp) != TSL_OK ||
          a[i].tpl->default_config(p, t, &sp, &r.config) != TSL_OK) {
        tsl_clear_error();
        continue;
      }
      tsl_conv2d_algo algo;
      bool gemm = tsl_conv2d_algo_of_op(a[i].op_workload.op, &algo) && algo == TSL_CONV2D_GEMM_1X1;
      r.space_hash = tsl_space_hash(a[i].tpl->name, a[i].tpl->version, a[i].tpl->op, &sp);
      r.nknobs = sp.nknobs;
      snprintf(r.template_name, sizeof r.template_name, "%.95s", a[i].tpl->name);
      snprintf(r.algorithm, sizeof r.algorithm, "%.95s", a[i].name);
      snprintf(r.target, sizeof r.target, "%s", target);
      snprintf(r.workload, sizeof r.workload, "%s", key);
      r.ncosts = 1;
      r.costs[0] = gemm ? 1e-3 : 1e-4;
      CU_ASSERT_EQUAL(tsl_records_add(db, &r), TSL_OK);
    }
    free(key);
  }
  return db;
}

/* Tuned: the channel-scaled projection conv runs GEMM 1x1 only, so it takes GEMM 1x1's
 * record although another algorithm's record of its workload is faster (before, it fell
 * back to GEMM 1x1's default, untuned, and the in-situ pass timed that default under
 * the other algorithm's name); the unscaled convs take the faster records. */
static void test_scaled_conv_takes_its_algorithms_record(void) {
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  int x;
  tsl_graph *g = new_graph(1, 6, 7, &x);
  int a = node1(g, TSL_OP_RELU, gt_add_conv1x1(g, x, C, C, 1));
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, gt_add_conv1x1(g, mul(g, a, se_gate(g, a, "Sigmoid", 10)), C, 13, 20)),
                        TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_records *db = records_gemm_slowest(g, &t);
  tsl_compile_options co = {.target = "host", .records_db = db};
  tsl_graph_plan *plan = NULL;
  tsl_conv_step *steps = NULL;
  int nsteps = 0, scaled = 0;
  tsl_status st = tsl_graph_compile_conv_steps(g, &co, &plan, NULL, &steps, &nsteps);
  if (st != TSL_OK) printf("\n  compile: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  for (int i = 0; i < nsteps; i++) {
    const tsl_dispatch_info *di = &steps[i].info;
    CU_ASSERT_TRUE(di->tuned);
    const char *algo = strrchr(di->algorithm, '.');
    if (di->only_algo == TSL_CONV2D_GEMM_1X1) {
      scaled++;
      CU_ASSERT_STRING_EQUAL(algo ? algo : "", ".gemm1x1");
      CU_ASSERT_DOUBLE_EQUAL(di->cost, 1e-3, 1e-12);
    } else {
      CU_ASSERT_EQUAL(di->only_algo, -1);
      CU_ASSERT_DOUBLE_EQUAL(di->cost, 1e-4, 1e-12);
    }
  }
  CU_ASSERT_EQUAL(scaled, 1);
  free(steps);
  tsl_graph_plan_free(plan);
  tsl_records_free(db);
  tsl_graph_free(g);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

void tsl_tests_graph_fuse_channel_scale(void) {
  CU_pSuite s = CU_add_suite("graph_fuse_channel_scale", NULL, NULL);
  CU_add_test(s, "se_blocks_fold_into_the_projection_conv", test_se_blocks_fold_into_the_projection_conv);
  CU_add_test(s, "gate_with_another_reader_folds", test_gate_with_another_reader_folds);
  CU_add_test(s, "strided_projection_scales_its_weight", test_strided_projection_scales_its_weight);
  CU_add_test(s, "other_consumers_keep_the_mul", test_other_consumers_keep_the_mul);
  CU_add_test(s, "scaled_conv_takes_its_algorithms_record", test_scaled_conv_takes_its_algorithms_record);
}
