/* Convolutions in the graph compiler go through the tuner's dispatch: every algorithm a
 * record may choose (direct, gemm1x1, im2col, depthwise, grouped, Winograd F2/F4/F6)
 * builds, transforms its weights at compile time and computes the layer as the naive
 * reference executor does; without records each layer gets tsl_conv2d_select's choice;
 * records of other layers are never used. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_tests.h"
#include "graph_util.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "models/zoo.h"
#include "runtime/graph_executor.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/records.h"

static int add_const(tsl_graph *g, int ndim, const int64_t *shape, uint64_t seed) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, seed, -0.5, 0.5), TSL_OK);
  int id;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, NULL, t, &id), TSL_OK);
  return id;
}

/* Conv K x C/group x k x k, stride, symmetric pad, with bias. */
static int conv(tsl_graph *g, int x, int64_t K, int64_t cg, int64_t k, int64_t stride, int64_t pad, int64_t group,
                uint64_t seed) {
  int64_t ws[4] = {K, cg, k, k};
  int ins[3] = {x, add_const(g, 4, ws, seed), add_const(g, 1, &K, seed + 1)}, node;
  int y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  int64_t st[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, st), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
  if (group != 1) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", group), TSL_OK);
  return y;
}

static tsl_graph *new_graph(int64_t c, int64_t h, int64_t w, int *x) {
  tsl_graph *g;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("t", &g), TSL_OK);
  int64_t s[4] = {1, c, h, w};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, s, x), TSL_OK);
  return g;
}

/* A graph whose input of x (the host's block) channels goes through a 1x1 conv to c
 * channels: a value of c channels in NCHW[x]c, where a conv reading the input itself
 * would read it plain (few channels: models/passes/layout.h). Its own conv layer has no
 * record (one records_missed). */
static tsl_graph *new_graph_blocked(int64_t c, int64_t h, int64_t w, int64_t x, int *v) {
  int in;
  tsl_graph *g = new_graph(x, h, w, &in);
  *v = conv(g, in, c, x, 1, 1, 0, 1, 97);
  return g;
}

static void finish(tsl_graph *g, int out) {
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
}

static int host_block(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  return tsl_target_f32_lanes(&t);
}

/* Compiles g with opts, runs it on seeded inputs, compares output 0 with the reference
 * executor (relative error <= tol); the plan's step labels joined into labels. */
static void compile_check(const tsl_graph *g, const tsl_compile_options *opts, double tol, tsl_compile_stats *stats,
                          char *labels, size_t nlabels) {
  tsl_graph_plan *plan = NULL;
  tsl_status st = tsl_graph_compile(g, opts, &plan, stats);
  if (st != TSL_OK) printf("\n  compile: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  labels[0] = '\0';
  size_t len = 0;
  for (int i = 0; i < tsl_graph_plan_num_steps(plan) && len < nlabels; i++)
    len += (size_t)snprintf(labels + len, nlabels - len, "%s;", tsl_graph_plan_step_label(plan, i));
  tsl_graph_ctx *ctx = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_ctx_new(plan, &ctx), TSL_OK);
  int64_t n = gt_numel(g, g->inputs[0]), m = gt_numel(g, g->outputs[0]);
  tsl_tensor *x;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &x), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(x, 5, -1.0, 1.0), TSL_OK);
  memcpy(tsl_graph_ctx_input(ctx, 0), x->data, (size_t)n * sizeof(float));
  CU_ASSERT_EQUAL(tsl_graph_run(ctx, NULL), TSL_OK);
  float *want[1] = {NULL};
  const float *ins[1] = {x->data};
  CU_ASSERT_EQUAL_FATAL(gt_reference_run(g, ins, want), TSL_OK);
  double err = gt_rel_err(tsl_graph_ctx_output(ctx, 0), want[0], m);
  if (!(err <= tol)) printf("\n  relative error %.3g (%s)", err, labels);
  CU_ASSERT(err <= tol);
  free(want[0]);
  tsl_tensor_free(x);
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(plan);
}

/* A records file holding one successful record: choice `a` of family workload w with
 * its template's default config. */
static void write_record(const char *path, const tsl_workload *w, const tsl_algo_choice *a) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_config_space s;
  tsl_config c;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_instantiate(&a->op_workload, &p), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(a->tpl->space(p, &t, &s), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(a->tpl->default_config(p, &t, &s, &c), TSL_OK);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_record *r = calloc(1, sizeof *r);
  CU_ASSERT_FATAL(r != NULL);
  tsl_target_str(&t, r->target, sizeof r->target);
  snprintf(r->task, sizeof r->task, "%s", a->tpl->op);
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(w, &key), TSL_OK);
  snprintf(r->workload, sizeof r->workload, "%s", key);
  free(key);
  snprintf(r->algorithm, sizeof r->algorithm, "%s", a->name);
  snprintf(r->template_name, sizeof r->template_name, "%s", a->tpl->name);
  r->space_hash = tsl_space_hash(a->tpl->name, a->tpl->version, a->tpl->op, &s);
  r->config_index = -1;
  r->nknobs = s.nknobs;
  for (int k = 0; k < s.nknobs; k++) {
    snprintf(r->knob_names[k], sizeof r->knob_names[k], "%s", s.knobs[k].name);
    r->knob_kinds[k] = s.knobs[k].kind;
  }
  r->config = c;
  r->ncosts = 1;
  r->costs[0] = 1e-3;
  r->error_no = TSL_MEASURE_OK;
  r->threads = 1;
  tsl_device_info_host(&t, &r->device);
  tsl_record_stamp(r);
  unlink(path);
  CU_ASSERT_EQUAL_FATAL(tsl_record_append(path, r), TSL_OK);
  free(r);
}

/* For every algorithm that applies to the layer: a record choosing it is used and the
 * compiled graph equals the reference. Returns how many algorithms were checked. */
static int check_every_algorithm(const tsl_graph *g, const tsl_conv2d_layer *d, const char *tag, int missed) {
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(d, &w), TSL_OK);
  tsl_algo_choice *algos = calloc(32, sizeof *algos);
  CU_ASSERT_FATAL(algos != NULL);
  int na = tsl_algorithms_for(&w, algos, 32, NULL);
  char path[256], labels[2048];
  snprintf(path, sizeof path, "/tmp/tessel_test_conv_dispatch_%d_%s.json", (int)getpid(), tag);
  for (int a = 0; a < na && a < 32; a++) {
    write_record(path, &w, &algos[a]);
    if (getenv("TSL_TEST_VERBOSE")) printf("\n  %s: %s (%s)", tag, algos[a].name, algos[a].tpl->name);
    tsl_compile_options o = {.records = path};
    tsl_compile_stats stats;
    compile_check(g, &o, 1e-4, &stats, labels, sizeof labels);
    if (stats.records_used != 1) printf("\n  %s: record of %s not used", tag, algos[a].name);
    CU_ASSERT_EQUAL(stats.records_used, 1);
    CU_ASSERT_EQUAL(stats.records_missed, missed);
    CU_ASSERT_PTR_NOT_NULL(strstr(labels, algos[a].tpl->name));
  }
  unlink(path);
  free(algos);
  return na;
}

static tsl_conv2d_layer layer(int64_t C, int64_t H, int64_t W, int64_t K, int64_t k, int64_t stride, int64_t pad,
                             int64_t groups) {
  tsl_conv2d_layer d;
  memset(&d, 0, sizeof d);
  d.N = 1;
  d.C = C;
  d.H = H;
  d.W = W;
  d.K = K;
  d.R = d.S = k;
  d.stride_h = d.stride_w = stride;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = pad;
  d.dilation_h = d.dilation_w = 1;
  d.groups = groups;
  d.clip_max = 6.0;
  d.block = host_block();
  return d;
}

static void test_conv_3x3_every_algorithm_from_a_record_matches_reference(void) {
  int x;
  tsl_graph *g = new_graph(16, 10, 9, &x);
  int y = conv(g, x, 24, 16, 3, 1, 1, 1, 3);
  finish(g, gt_add_node(g, TSL_OP_RELU, 1, &y, NULL));
  tsl_conv2d_layer d = layer(16, 10, 9, 24, 3, 1, 1, 1);
  d.act = 1;
  /* direct, im2col, grouped, Winograd F2, F4, F6 */
  CU_ASSERT(check_every_algorithm(g, &d, "3x3", 0) >= 6);
  tsl_graph_free(g);
}

/* 4x4 and 5x5 stride-1 layers, padding 2 (the 4x4 output a row and column larger than its
 * input): every algorithm, the
 * Winograd F(2, r) and F(4, r) of the larger kernels among them, chosen by a record,
 * compiles through the graph compiler (its kernel transform of r x r weights included)
 * and matches the reference. */
static void test_conv_larger_kernels_every_algorithm_from_a_record_matches_reference(void) {
  for (int k = 4; k <= 5; k++) {
    int x;
    tsl_graph *g = new_graph(16, 11, 10, &x);
    finish(g, conv(g, x, 24, 16, k, 1, 2, 1, 13));
    tsl_conv2d_layer d = layer(16, 11, 10, 24, k, 1, 2, 1);
    tsl_workload w;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
    tsl_algo_choice algos[32];
    int na = tsl_algorithms_for(&w, algos, 32, NULL), wino = 0;
    for (int a = 0; a < na; a++) wino += strstr(algos[a].tpl->name, "winograd") != NULL;
    CU_ASSERT_EQUAL(wino, 2); /* F(2, k) and F(4, k) */
    /* direct, im2col, grouped, the two Winograd */
    CU_ASSERT(check_every_algorithm(g, &d, k == 4 ? "4x4" : "5x5", 0) >= 5);
    tsl_graph_free(g);
  }
}

static void test_conv_1x1_every_algorithm_from_a_record_matches_reference(void) {
  int x;
  tsl_graph *g = new_graph(16, 7, 6, &x);
  finish(g, conv(g, x, 16, 16, 1, 1, 0, 1, 7));
  tsl_conv2d_layer d = layer(16, 7, 6, 16, 1, 1, 0, 1);
  /* direct, gemm1x1, im2col, grouped */
  CU_ASSERT(check_every_algorithm(g, &d, "1x1", 0) >= 4);
  tsl_graph_free(g);
}

/* The residual add fuses into the later conv (conv2d_nchwc_bias_add family). */
static void test_conv_residual_every_algorithm_from_a_record_matches_reference(void) {
  int x;
  tsl_graph *g = new_graph(16, 8, 8, &x);
  int a = conv(g, x, 16, 16, 1, 1, 0, 1, 9);
  int b = conv(g, x, 16, 16, 3, 1, 1, 1, 11);
  int ab[2] = {a, b};
  int s = gt_add_node(g, TSL_OP_ADD, 2, ab, NULL);
  finish(g, gt_add_node(g, TSL_OP_RELU, 1, &s, NULL));
  tsl_conv2d_layer d = layer(16, 8, 8, 16, 3, 1, 1, 1);
  d.act = 1;
  d.has_residual = true;
  /* direct, Winograd F2, F4, F6; the 1x1 conv has no record */
  CU_ASSERT(check_every_algorithm(g, &d, "res", 1) >= 4);
  tsl_graph_free(g);
}

/* A residual layer whose channel counts fill no whole block at the host's lanes (C = x + 4,
 * K = 3x/2: 12 and 12 at 8 lanes, 20 and 24 at 16) on blocked data: the
 * conv2d_nchwc_grouped_add family, every algorithm of which computes it, padding lanes
 * included. */
static void test_conv_residual_partial_blocks_every_algorithm_from_a_record(void) {
  int64_t x = host_block(), C = x + 4, K = 3 * x / 2;
  int in;
  tsl_graph *g = new_graph_blocked(C, 9, 7, x, &in);
  int a = conv(g, in, K, C, 1, 1, 0, 1, 41);
  int b = conv(g, in, K, C, 3, 1, 1, 1, 43);
  int ab[2] = {a, b};
  int s = gt_add_node(g, TSL_OP_ADD, 2, ab, NULL);
  finish(g, gt_add_node(g, TSL_OP_RELU, 1, &s, NULL));
  tsl_conv2d_layer d = layer(C, 9, 7, K, 3, 1, 1, 1);
  d.act = 1;
  d.has_residual = true;
  /* direct and Winograd F2, F4, F6 at least; the 1x1 convs have no record */
  CU_ASSERT(check_every_algorithm(g, &d, "respart", 2) >= 4);
  tsl_graph_free(g);
}

/* Grouped and depthwise convs whose output a residual add takes (the add fuses into
 * them): blocked in the conv2d_nchwc_grouped_add family, every algorithm computes them. */
static void test_conv_grouped_and_depthwise_residual_every_algorithm_from_a_record(void) {
  int64_t x = host_block();
  /* 4 groups of 3x/4 channels, then depthwise on 2x + 2 channels (a part block) */
  const int64_t channels[2] = {3 * x, 2 * x + 2};
  for (int i = 0; i < 2; i++) {
    int64_t C = channels[i], K = C, g = i ? C : 4;
    int in;
    tsl_graph *gr = new_graph(C, 9, 8, &in);
    int a = conv(gr, in, K, C / g, 3, 1, 1, g, 51 + (uint64_t)i);
    int ab[2] = {a, in};
    int s = gt_add_node(gr, TSL_OP_ADD, 2, ab, NULL);
    finish(gr, gt_add_node(gr, TSL_OP_RELU, 1, &s, NULL));
    tsl_conv2d_layer d = layer(C, 9, 8, K, 3, 1, 1, g);
    d.act = 1;
    d.has_residual = true;
    tsl_workload w;
    CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
    CU_ASSERT_STRING_EQUAL(w.op, "conv2d_nchwc_grouped_add");
    /* grouped (and depthwise for the depthwise layer) at least */
    CU_ASSERT(check_every_algorithm(gr, &d, i ? "resdw" : "resgrp", 0) >= 1 + i);
    tsl_graph_free(gr);
  }
}

/* C = 3 and a depthwise layer: the grouped family (true channel counts). C = 3 on blocked
 * data (after a 1x1 conv) takes every dense algorithm; on the graph input it reads the
 * plain data, which the grouped algorithm alone does. */
static void test_conv_first_layer_and_depthwise_every_algorithm_from_a_record(void) {
  int x;
  tsl_graph *g = new_graph_blocked(3, 11, 10, host_block(), &x);
  finish(g, conv(g, x, 12, 3, 3, 2, 1, 1, 13));
  tsl_conv2d_layer d = layer(3, 11, 10, 12, 3, 2, 1, 1);
  CU_ASSERT(check_every_algorithm(g, &d, "first", 1) >= 3); /* direct, im2col, grouped */
  tsl_graph_free(g);
  g = new_graph(3, 11, 10, &x);
  finish(g, conv(g, x, 12, 3, 3, 2, 1, 1, 13));
  d.data_block = 1;
  CU_ASSERT_EQUAL(check_every_algorithm(g, &d, "plain", 0), 1); /* grouped */
  tsl_graph_free(g);
  g = new_graph(12, 9, 9, &x);
  finish(g, conv(g, x, 12, 1, 3, 1, 1, 12, 15));
  d = layer(12, 9, 9, 12, 3, 1, 1, 12);
  CU_ASSERT(check_every_algorithm(g, &d, "dw", 0) >= 2); /* depthwise, grouped */
  tsl_graph_free(g);
}

/* No records: each layer takes the operator library's default algorithm. */
static void test_conv_without_records_takes_the_default_algorithm(void) {
  int x;
  tsl_graph *g = new_graph(3, 20, 20, &x);
  int a = conv(g, x, 16, 3, 3, 2, 1, 1, 17);            /* C = 3: grouped */
  int b = conv(g, a, 16, 16, 3, 1, 1, 1, 19);           /* 3x3 s1: Winograd */
  int c = conv(g, b, 32, 16, 1, 1, 0, 1, 21);           /* 1x1: gemm1x1 */
  int e = conv(g, c, 32, 1, 3, 1, 1, 32, 23);           /* depthwise */
  finish(g, e);
  char labels[2048];
  tsl_compile_stats stats;
  compile_check(g, NULL, 1e-4, &stats, labels, sizeof labels);
  CU_ASSERT_EQUAL(stats.conv_layers, 4);
  CU_ASSERT_EQUAL(stats.records_used, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(labels, "conv2d_nchwc_grouped.tile"));
  CU_ASSERT_PTR_NOT_NULL(strstr(labels, "conv2d_winograd_f"));
  CU_ASSERT_PTR_NOT_NULL(strstr(labels, "conv2d_nchwc_1x1_bias.gemm"));
  CU_ASSERT_PTR_NOT_NULL(strstr(labels, "depthwise_conv2d_nchwc.tile"));
  tsl_graph_free(g);
}

/* shared/cases C11: a record of another layer is never applied; every layer misses. */
static void test_C11_record_of_another_layer_is_not_used(void) {
  int x;
  tsl_graph *g = new_graph(16, 10, 9, &x);
  int y = conv(g, x, 24, 16, 3, 1, 1, 1, 25);
  finish(g, conv(g, y, 8, 24, 1, 1, 0, 1, 27));
  tsl_conv2d_layer other = layer(16, 10, 9, 24, 3, 1, 1, 1);
  other.act = 1; /* the graph's first conv has no activation: another workload */
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&other, &w), TSL_OK);
  tsl_algo_choice algos[16];
  CU_ASSERT_FATAL(tsl_algorithms_for(&w, algos, 16, NULL) > 0);
  char path[256], labels[2048];
  snprintf(path, sizeof path, "/tmp/tessel_test_conv_dispatch_%d_c11.json", (int)getpid());
  write_record(path, &w, &algos[0]);
  tsl_compile_options o = {.records = path};
  tsl_compile_stats stats;
  compile_check(g, &o, 1e-4, &stats, labels, sizeof labels);
  CU_ASSERT_EQUAL(stats.records_used, 0);
  CU_ASSERT_EQUAL(stats.records_missed, 2);
  unlink(path);
  tsl_graph_free(g);
}

/* The family workload names the layer: back and forth gives the same layer, at any
 * block (x = 4, 8, 16 and the host's), channel counts filling whole blocks or not (a
 * K = 24 residual layer at 16 lanes is not read back as K = 32). */
static void test_conv_family_workload_round_trips_the_layer(void) {
  enum { NL = 5 };
  int64_t blocks[4] = {4, 8, 16, host_block()};
  for (int bi = 0; bi < 4; bi++) {
    int64_t x = blocks[bi];
    tsl_conv2d_layer ds[NL] = {layer(16, 10, 9, 24, 3, 1, 1, 1), layer(3, 11, 10, 12, 7, 2, 3, 1),
                              layer(12, 9, 9, 12, 3, 1, 1, 12), layer(x + 4, 6, 5, 3 * x / 2, 3, 1, 1, 1),
                              layer(2 * x, 6, 5, 4 * x, 1, 1, 0, 1)};
    ds[0].has_residual = true;
    ds[1].act = 2;
    ds[1].clip_min = 0.5;
    ds[1].clip_max = 4.0;
    ds[3].has_residual = true;
    for (int i = 0; i < NL; i++) {
      ds[i].block = x;
      /* whole blocks of one group: the bias families; otherwise the grouped ones */
      bool whole = ds[i].groups == 1 && ds[i].C % x == 0 && ds[i].K % x == 0;
      const char *fam = whole ? (ds[i].has_residual ? "conv2d_nchwc_bias_add" : "conv2d_nchwc_bias")
                              : (ds[i].has_residual ? "conv2d_nchwc_grouped_add" : "conv2d_nchwc_grouped");
      tsl_workload w;
      tsl_conv2d_layer back;
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&ds[i], &w), TSL_OK);
      CU_ASSERT_STRING_EQUAL(w.op, fam);
      CU_ASSERT_EQUAL_FATAL(tsl_conv2d_layer_of_workload(&w, &back), TSL_OK);
      if (back.C != ds[i].C || back.K != ds[i].K)
        printf("\n  block %lld layer %d: C %lld K %lld read back as C %lld K %lld", (long long)x, i,
               (long long)ds[i].C, (long long)ds[i].K, (long long)back.C, (long long)back.K);
      CU_ASSERT_EQUAL(back.block, x);
      CU_ASSERT_EQUAL(back.C, ds[i].C);
      CU_ASSERT_EQUAL(back.K, ds[i].K);
      CU_ASSERT_EQUAL(back.groups, ds[i].groups);
      CU_ASSERT_EQUAL(back.R, ds[i].R);
      CU_ASSERT_EQUAL(back.pad_top, ds[i].pad_top);
      CU_ASSERT_EQUAL(back.stride_h, ds[i].stride_h);
      CU_ASSERT_EQUAL(back.act, ds[i].act);
      CU_ASSERT_EQUAL(back.has_residual, ds[i].has_residual);
      CU_ASSERT_DOUBLE_EQUAL(back.clip_min, ds[i].clip_min, 0.0);
      CU_ASSERT_DOUBLE_EQUAL(back.clip_max, ds[i].clip_max, 0.0);
    }
  }
}

/* A grouped family workload whose out_channels do not fit its blocks is refused. */
static void test_conv_family_workload_with_channels_outside_the_blocks_refused(void) {
  tsl_conv2d_layer d = layer(12, 6, 5, 12, 3, 1, 1, 1);
  d.block = 8;
  d.has_residual = true;
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_conv2d_family_workload(&d, &w), TSL_OK);
  tsl_conv2d_layer back;
  for (int k = 0; k < w.nparams; k++)
    if (strcmp(w.param_names[k], "out_channels") == 0) w.params[k].i = 17; /* past 2 blocks of 8 */
  CU_ASSERT_EQUAL(tsl_conv2d_layer_of_workload(&w, &back), TSL_ERR_INVALID);
  for (int k = 0; k < w.nparams; k++)
    if (strcmp(w.param_names[k], "out_channels") == 0) w.params[k].i = 8; /* fills only one block */
  CU_ASSERT_EQUAL(tsl_conv2d_layer_of_workload(&w, &back), TSL_ERR_INVALID);
}

/* tsl_graph_conv_layers names exactly the workloads the compiler looks up: with a
 * records file holding a record for each, every conv layer is tuned; with an empty one,
 * every one misses. */
static void test_conv_layers_are_the_keys_the_compiler_looks_up(void) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_zoo_build("squeezenet1_1", 1, &g), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  tsl_conv_layer *layers = calloc(64, sizeof *layers);
  CU_ASSERT_FATAL(layers != NULL);
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_conv_layers(g, NULL, layers, 64, &n), TSL_OK);
  CU_ASSERT(n >= 15 && n <= 26); /* 26 convs, identical fire layers shared */
  int total = 0;
  for (int i = 0; i < n && i < 64; i++) total += layers[i].count;
  CU_ASSERT_EQUAL(total, 26);
  CU_ASSERT_STRING_EQUAL(layers[0].workload.op, "conv2d_nchwc_grouped"); /* C = 3 */
  char path[256];
  snprintf(path, sizeof path, "/tmp/tessel_test_conv_layers_%d.json", (int)getpid());
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fclose(f);
  tsl_compile_options o = {.records = path};
  tsl_graph_plan *plan = NULL;
  tsl_compile_stats stats;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_compile(g, &o, &plan, &stats), TSL_OK);
  CU_ASSERT_EQUAL(stats.records_missed, n);
  CU_ASSERT_EQUAL(stats.conv_layers, 26);
  tsl_graph_plan_free(plan);
  unlink(path);
  free(layers);
  tsl_graph_free(g);
}

/* A channel concat of conv outputs in whole blocks runs no kernel: the convs write into
 * its buffer. A concat of that concat is one concat of the three conv outputs
 * (models/passes/channel_gather.h), elided or computed as a whole. Only
 * where every slice is whole blocks and starts 64-byte aligned (kernels take aligned
 * pointers): a block of x lanes is 4*x*H*W bytes, so with an odd H*W at x = 8 (32-byte
 * blocks of a pixel) the concat runs as a kernel; at x = 16 every block is aligned.
 * ka: the first conv's output channels (a multiple of x or not). */
static void concat_in_place(int64_t H, int64_t W, int64_t ka) {
  int64_t x = host_block();
  int in, node;
  tsl_graph *g = new_graph(8, H, W, &in);
  int a = conv(g, in, ka, 8, 1, 1, 0, 1, 31), b = conv(g, in, 2 * x, 8, 3, 1, 1, 1, 33),
      c = conv(g, in, x, 8, 3, 1, 1, 1, 35);
  int ab[2] = {a, b};
  int cat1 = gt_add_node(g, TSL_OP_CONCAT, 2, ab, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", 1), TSL_OK);
  int cc[2] = {cat1, c};
  int cat2 = gt_add_node(g, TSL_OP_CONCAT, 2, cc, &node);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "axis", 1), TSL_OK);
  finish(g, gt_add_node(g, TSL_OP_RELU, 1, &cat2, NULL));
  char labels[2048];
  tsl_compile_stats stats;
  compile_check(g, NULL, 1e-4, &stats, labels, sizeof labels);
  /* to NCHW[x]c, three convs, relu, back to NCHW; + the concat unless it is elided; the
   * 8 input channels fill at most three quarters of the input lanes at x = 16: the convs
   * read the plain input, no transform first (models/passes/layout.h) */
  bool elided = ka % x == 0 && (4 * ka * H * W) % 64 == 0 && (4 * (ka + 2 * x) * H * W) % 64 == 0;
  int want_steps = (elided ? 6 : 7) - gt_conv_reads_plain(8);
  if (stats.steps != want_steps)
    printf("\n  %lldx%lld, first conv K %lld at %lld lanes: %d steps, want %d (%s)", (long long)H, (long long)W,
           (long long)ka, (long long)x, stats.steps, want_steps, labels);
  CU_ASSERT_EQUAL(stats.steps, want_steps);
  tsl_graph_free(g);
}

static void test_concat_of_conv_outputs_is_written_in_place(void) {
  int64_t x = host_block();
  concat_in_place(8, 7, x);     /* whole, aligned blocks: elided */
  concat_in_place(9, 7, x);     /* odd H*W: elided at 16 lanes, not at 8 or 4 */
  concat_in_place(8, 7, 2 * x); /* two blocks in the first slice */
  concat_in_place(8, 7, x / 2); /* a part block: the concat runs */
}

/* The compiler's conv cache holds a kernel entry per family key and a weight-program
 * entry per weight shape, 32 before it first grows. Layer 1 shares layer 0's weight
 * shape (only its padding differs), so from then on each layer's weight entry is an odd
 * one, and the 33rd entry, which grows the cache, is a weight entry added while the
 * layer's kernel entry is in use: that entry must stay valid (it was read after the
 * cache had moved; AddressSanitizer saw it in mobilenet_v2). */
static void test_conv_cache_growth_keeps_the_layer_entry(void) {
  int64_t b = host_block();
  int x;
  tsl_graph *g = new_graph(b, 10, 10, &x);
  int y = conv(g, x, b, b, 3, 1, 1, 1, 31); /* 2 entries */
  y = conv(g, y, b, b, 3, 1, 0, 1, 33);     /* 1 entry: 8x8, the same weight program */
  for (int i = 0; i < 20; i++) {            /* 2 entries each: 1x1, new channel pairs */
    int64_t cin = i % 2 ? (i + 1) / 2 * b + b : b, cout = i % 2 ? b : (i / 2 + 2) * b;
    y = conv(g, y, cout, cin, 1, 1, 0, 1, 35 + 2 * (uint64_t)i);
  }
  finish(g, y);
  char labels[8192];
  tsl_compile_stats stats;
  compile_check(g, NULL, 1e-4, &stats, labels, sizeof labels);
  CU_ASSERT_EQUAL(stats.conv_layers, 22);
  tsl_graph_free(g);
}

void tsl_tests_graph_conv_dispatch(void) {
  CU_pSuite s = CU_add_suite("graph_conv_dispatch", NULL, NULL);
  CU_add_test(s, "conv_family_workload_round_trips_the_layer", test_conv_family_workload_round_trips_the_layer);
  CU_add_test(s, "conv_without_records_takes_the_default_algorithm", test_conv_without_records_takes_the_default_algorithm);
  CU_add_test(s, "conv_3x3_every_algorithm_from_a_record_matches_reference",
              test_conv_3x3_every_algorithm_from_a_record_matches_reference);
  CU_add_test(s, "conv_larger_kernels_every_algorithm_from_a_record_matches_reference",
              test_conv_larger_kernels_every_algorithm_from_a_record_matches_reference);
  CU_add_test(s, "conv_1x1_every_algorithm_from_a_record_matches_reference",
              test_conv_1x1_every_algorithm_from_a_record_matches_reference);
  CU_add_test(s, "conv_family_workload_with_channels_outside_the_blocks_refused",
              test_conv_family_workload_with_channels_outside_the_blocks_refused);
  CU_add_test(s, "conv_residual_partial_blocks_every_algorithm_from_a_record",
              test_conv_residual_partial_blocks_every_algorithm_from_a_record);
  CU_add_test(s, "conv_grouped_and_depthwise_residual_every_algorithm_from_a_record",
              test_conv_grouped_and_depthwise_residual_every_algorithm_from_a_record);
  CU_add_test(s, "conv_residual_every_algorithm_from_a_record_matches_reference",
              test_conv_residual_every_algorithm_from_a_record_matches_reference);
  CU_add_test(s, "conv_first_layer_and_depthwise_every_algorithm_from_a_record",
              test_conv_first_layer_and_depthwise_every_algorithm_from_a_record);
  CU_add_test(s, "C11_record_of_another_layer_is_not_used", test_C11_record_of_another_layer_is_not_used);
  CU_add_test(s, "conv_layers_are_the_keys_the_compiler_looks_up", test_conv_layers_are_the_keys_the_compiler_looks_up);
  CU_add_test(s, "concat_of_conv_outputs_is_written_in_place", test_concat_of_conv_outputs_is_written_in_place);
  CU_add_test(s, "conv_cache_growth_keeps_the_layer_entry", test_conv_cache_growth_keeps_the_layer_entry);
}
