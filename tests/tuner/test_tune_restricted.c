/* Tuning the layers whose compiled form admits a subset of the algorithms (models/
 * compile.h: tsl_conv_layer.only_algo, tuner/tune.h: tsl_tune_opts.only_algo): a small
 * squeeze-excitation graph (C = 19, 6x7, one image) whose projection conv reads the
 * channel scale inside the GEMM 1x1 kernel (models/passes/fuse_channel_scale.h), beside an
 * unscaled conv of the same workload. The layer list carries the restriction (the two
 * convs are two entries), the tune of the scaled one measures GEMM 1x1 candidates only
 * (records counted per algorithm), the unscaled twin gets every algorithm, and the model
 * compiled with the records finds a record for every conv step. A stem conv reading plain
 * data keeps no restriction: its family workload already admits the grouped algorithm
 * only. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../graph/graph_util.h"
#include "ir/arena.h"
#include "models/compile.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "ops/conv2d/conv2d_select.h"
#include "tuner/records.h"
#include "tuner/tune.h"
#include "tuner_tests.h"
#include "tuner_util.h"

enum { C = TT_SE_C, K_OUT = TT_SE_K_OUT, MAX_LAYERS = TT_SE_MAX_LAYERS };

static char *key_of(const tsl_workload *w) {
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(w, &key), TSL_OK);
  return key;
}

/* Successful records of db per conv algorithm (indexed by tsl_conv2d_algo); returns
 * the number of successful records. */
static int count_per_algo(const tsl_records *db, int counts[TSL_CONV2D_ALGO_COUNT]) {
  memset(counts, 0, sizeof(int) * TSL_CONV2D_ALGO_COUNT);
  int n = 0;
  for (int i = 0; i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    const char *dot = strrchr(r->algorithm, '.');
    if (r->error_no != TSL_MEASURE_OK || !dot) continue;
    for (int a = 0; a < TSL_CONV2D_ALGO_COUNT; a++)
      if (strcmp(dot + 1, tsl_conv2d_algo_name((tsl_conv2d_algo)a)) == 0) counts[a]++;
    n++;
  }
  return n;
}

/* The layer list: the scaled projection is its own entry restricted to GEMM 1x1, its
 * unscaled twin (same key) another with none; every other layer none. */
static void test_layer_list_carries_the_restriction(void) {
  tsl_conv_layer layers[MAX_LAYERS];
  int n = 0;
  tsl_graph *g = tt_se_graph(layers, &n);
  int scaled = -1, twin = -1;
  for (int l = 0; l < n; l++) {
    CU_ASSERT_EQUAL(layers[l].count, 1);
    if (layers[l].desc.K != K_OUT) {
      CU_ASSERT_EQUAL(layers[l].only_algo, -1);
    } else if (layers[l].only_algo == (int)TSL_CONV2D_GEMM_1X1) {
      scaled = l;
    } else {
      CU_ASSERT_EQUAL(layers[l].only_algo, -1);
      twin = l;
    }
  }
  CU_ASSERT_FATAL(scaled >= 0 && twin >= 0);
  char *ks = key_of(&layers[scaled].workload), *kt = key_of(&layers[twin].workload);
  CU_ASSERT_STRING_EQUAL(ks, kt);
  free(ks);
  free(kt);
  /* the stem conv (C = 19 read plain where more than a quarter of its lanes would be
   * zero): no restriction on the layer, its workload lists the grouped algorithm only */
  tsl_workload stem = layers[0].workload;
  tsl_workload_fix(&stem);
  tsl_algo_choice algos[16];
  int na = tsl_algorithms_for(&stem, algos, 16, NULL);
  CU_ASSERT_TRUE(na >= 1);
  for (int i = 0; gt_conv_reads_plain(C) && i < na && i < 16; i++) {
    tsl_conv2d_algo a;
    CU_ASSERT_TRUE(tsl_conv2d_algo_of_op(algos[i].op_workload.op, &a) && a == TSL_CONV2D_GROUPED);
  }
  if (!gt_conv_reads_plain(C)) CU_ASSERT_TRUE(na > 1);
  tsl_graph_free(g);
}


/* The tune of each layer measures only what its compiled form can run; compiled with
 * the records, every conv step (the scaled one included) is tuned. */
static void test_scaled_layer_tunes_gemm1x1_only(void) {
  tsl_conv_layer layers[MAX_LAYERS];
  int n = 0;
  tsl_graph *g = tt_se_graph(layers, &n);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  char all[128];
  snprintf(all, sizeof all, "/tmp/tsl_restricted_%ld.jsonl", (long)getpid());
  unlink(all);
  for (int l = 0; l < n; l++) {
    /* each projection entry into a file of its own: the two share a records key */
    char own[160];
    snprintf(own, sizeof own, "%s.%d", all, l);
    unlink(own);
    bool projection = layers[l].desc.K == K_OUT;
    tsl_tune_opts o = tt_quick_tune_opts(projection ? own : all);
    o.only_algo = layers[l].only_algo;
    tsl_tune_result r;
    tsl_status st = tsl_tune_workload(&host, &layers[l].workload, &o, &r);
    if (st != TSL_OK) printf("\n  tune layer %d: %s", l, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    CU_ASSERT_TRUE(r.found);
    if (!projection) continue;
    tsl_records *db = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, own, true, NULL), TSL_OK);
    int counts[TSL_CONV2D_ALGO_COUNT], kinds = 0;
    int total = count_per_algo(db, counts);
    for (int a = 0; a < TSL_CONV2D_ALGO_COUNT; a++) kinds += counts[a] > 0;
    CU_ASSERT_TRUE(counts[TSL_CONV2D_GEMM_1X1] >= 1);
    if (layers[l].only_algo == (int)TSL_CONV2D_GEMM_1X1) {
      CU_ASSERT_EQUAL(total, counts[TSL_CONV2D_GEMM_1X1]);
      CU_ASSERT_EQUAL(kinds, 1);
      CU_ASSERT_PTR_NOT_NULL(strstr(r.algorithm, "gemm1x1"));
      CU_ASSERT_TRUE(isfinite(r.default_cost)); /* the baseline: GEMM 1x1's default */
    } else {
      CU_ASSERT_TRUE(kinds >= 2); /* e.g. direct and im2col beside GEMM 1x1 */
    }
    /* gather every layer's records into one file for the compile below */
    FILE *in = fopen(own, "r"), *out = fopen(all, "a");
    CU_ASSERT_FATAL(in && out);
    char line[16384];
    while (fgets(line, sizeof line, in)) fputs(line, out);
    fclose(in);
    fclose(out);
    unlink(own);
    tsl_records_free(db);
  }
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, all, true, NULL), TSL_OK);
  tsl_compile_options co = {.target = "host", .records_db = db};
  tsl_graph_plan *plan = NULL;
  tsl_conv_step *steps = NULL;
  int nsteps = 0, scaled = 0;
  tsl_status st = tsl_graph_compile_conv_steps(g, &co, &plan, NULL, &steps, &nsteps);
  if (st != TSL_OK) printf("\n  compile: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  CU_ASSERT_EQUAL(nsteps, n); /* one node per layer */
  for (int i = 0; i < nsteps; i++) {
    CU_ASSERT_TRUE(steps[i].info.tuned);
    scaled += steps[i].info.only_algo == (int)TSL_CONV2D_GEMM_1X1;
  }
  CU_ASSERT_EQUAL(scaled, 1);
  free(steps);
  tsl_graph_plan_free(plan);
  tsl_records_free(db);
  unlink(all);
  tsl_graph_free(g);
}

/* A restriction no algorithm of the workload meets is an error naming it, before any
 * measurement. */
static void test_restriction_that_does_not_apply_is_not_found(void) {
  tsl_conv_layer layers[MAX_LAYERS];
  int n = 0;
  tsl_graph *g = tt_se_graph(layers, &n);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  tsl_tune_opts o = tt_quick_tune_opts(NULL);
  o.only_algo = TSL_CONV2D_DEPTHWISE; /* every layer here is dense */
  tsl_tune_result r;
  CU_ASSERT_EQUAL(tsl_tune_workload(&host, &layers[n - 1].workload, &o, &r), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "depthwise"));
  tsl_clear_error();
  tsl_graph_free(g);
}

/* The suite's programs live in one arena, current while its tests run. */
static tsl_arena *suite_arena, *suite_prev;

static int suite_init(void) {
  suite_arena = tsl_arena_new();
  suite_prev = tsl_arena_set_current(suite_arena);
  return suite_arena ? 0 : 1;
}

static int suite_clean(void) {
  tsl_arena_set_current(suite_prev);
  tsl_arena_free(suite_arena);
  return 0;
}

void tsl_tests_tuner_tune_restricted(void) {
  CU_pSuite s = CU_add_suite("tuner_tune_restricted", suite_init, suite_clean);
  CU_add_test(s, "the layer list carries a channel-scaled conv's one algorithm", test_layer_list_carries_the_restriction);
  CU_add_test(s, "a channel-scaled layer tunes GEMM 1x1 only, its twin every algorithm",
              test_scaled_layer_tunes_gemm1x1_only);
  CU_add_test(s, "a restriction no algorithm meets is not found", test_restriction_that_does_not_apply_is_not_found);
}
