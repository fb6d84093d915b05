/* In-model records (context) and the in-situ pass (models/insitu.h): the schema round
 * trip, the lookup's preference for in-model records (records_best and the dispatch),
 * a small model tuned, verified in the model and compiled with the in-model winner,
 * and a channel-scaled and an unscaled conv of one workload verified as two layers. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/arena.h"
#include "tessel/runtime.h"
#include "models/compile.h"
#include "models/graph.h"
#include "models/insitu.h"
#include "runtime/graph_executor.h"
#include "runtime/parallel.h"
#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"
#include "tuner/tune.h"
#include "tuner_tests.h"
#include "tuner_util.h"

static tsl_record plain_record(const char *target, const char *workload, const char *tpl, double cost) {
  tsl_record r;
  memset(&r, 0, sizeof r);
  snprintf(r.target, sizeof r.target, "%s", target);
  snprintf(r.task, sizeof r.task, "op");
  snprintf(r.workload, sizeof r.workload, "%s", workload);
  snprintf(r.algorithm, sizeof r.algorithm, "%s", tpl);
  snprintf(r.template_name, sizeof r.template_name, "%s", tpl);
  r.space_hash = 0x1234;
  r.nknobs = r.config.nknobs = 1;
  snprintf(r.knob_names[0], TSL_KNOB_NAME_LEN, "tile");
  r.knob_kinds[0] = TSL_KNOB_SPLIT;
  r.config.values[0] = 4;
  r.ncosts = 1;
  r.costs[0] = cost;
  return r;
}

static void test_records_with_and_without_context_round_trip(void) {
  tsl_record r = plain_record("host -mcpu=znver3", "w", "t.a", 1e-3), back;
  /* an isolated record has no context field at all: files of older readers stay alike */
  char *line = tsl_record_to_json(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_PTR_NULL(strstr(line, "context"));
  CU_ASSERT_EQUAL(tsl_record_from_json(line, &back), TSL_OK);
  CU_ASSERT_STRING_EQUAL(back.context, "");
  CU_ASSERT_FALSE(tsl_record_in_model(&back));
  free(line);
  snprintf(r.context, sizeof r.context, "model squeezenet1_1");
  line = tsl_record_to_json(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"context\":\"model squeezenet1_1\""));
  CU_ASSERT_EQUAL(tsl_record_from_json(line, &back), TSL_OK);
  CU_ASSERT_STRING_EQUAL(back.context, "model squeezenet1_1");
  CU_ASSERT_TRUE(tsl_record_in_model(&back));
  CU_ASSERT_EQUAL(back.window_steps, 0);
  CU_ASSERT_PTR_NULL(strstr(line, "window_steps"));
  free(line);
  /* a final-plan record keeps its window; a window without a context is refused */
  r.window_steps = 3;
  line = tsl_record_to_json(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"window_steps\":3"));
  CU_ASSERT_EQUAL(tsl_record_from_json(line, &back), TSL_OK);
  CU_ASSERT_EQUAL(back.window_steps, 3);
  free(line);
  r.context[0] = '\0';
  CU_ASSERT_EQUAL(tsl_record_check(&r), TSL_ERR_INVALID);
  tsl_clear_error();
  const char *window_alone = "{\"input\":[\"host\",\"op\",\"w\"],\"config\":{\"algorithm\":\"a\",\"template\":\"t\","
                             "\"space_hash\":\"0000000000001234\",\"index\":0,\"entity\":[]},\"result\":[[0.001],0,0.1,1.0],"
                             "\"version\":0.2,\"window_steps\":2}";
  CU_ASSERT_EQUAL(tsl_record_from_json(window_alone, &back), TSL_ERR_PARSE);
  tsl_clear_error();
  /* a context of the wrong type loses the line, as every typed field does */
  const char *bad = "{\"input\":[\"host\",\"op\",\"w\"],\"config\":{\"algorithm\":\"a\",\"template\":\"t\","
                    "\"space_hash\":\"0000000000001234\",\"index\":0,\"entity\":[]},\"result\":[[0.001],0,0.1,1.0],"
                    "\"version\":0.2,\"context\":7}";
  CU_ASSERT_EQUAL(tsl_record_from_json(bad, &back), TSL_ERR_PARSE);
}

static void test_in_model_record_costs_its_fastest_run_like_an_isolated_one(void) {
  tsl_record r = plain_record("host", "w", "t.a", 0);
  const double c[5] = {3e-3, 10e-3, 2e-3, 1.5e-3, 4e-3};
  r.ncosts = 5;
  memcpy(r.costs, c, sizeof c);
  snprintf(r.context, sizeof r.context, "model m");
  CU_ASSERT_DOUBLE_EQUAL(tsl_record_cost(&r), 1.5e-3, 1e-15);
  r.error_no = TSL_MEASURE_RUNTIME;
  CU_ASSERT_TRUE(isinf(tsl_record_cost(&r)));
}

static void test_records_best_prefers_in_model_even_when_isolated_is_cheaper(void) {
  const char *t = "host -mcpu=znver3";
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  tsl_record iso = plain_record(t, "w", "t.fast_alone", 1e-3);
  tsl_record in = plain_record(t, "w", "t.fast_in_model", 5e-3);
  snprintf(in.context, sizeof in.context, "model m");
  tsl_records_add(db, &iso);
  tsl_records_add(db, &in);
  const tsl_record *best = NULL;
  tsl_match_kind m;
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, &m), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL_FATAL(best);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.fast_in_model");
  CU_ASSERT_EQUAL(m, TSL_MATCH_EXACT);
  /* another space: the in-model record is stale, the isolated one answers */
  tsl_records *db2 = NULL;
  tsl_records_new(&db2);
  in.space_hash = 0x9999;
  tsl_records_add(db2, &iso);
  tsl_records_add(db2, &in);
  CU_ASSERT_EQUAL(tsl_records_best(db2, t, "w", NULL, 0x1234, &best, &m), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.fast_alone");
  /* merging keeps both the isolated and the in-model record of one config */
  tsl_record in_same = iso;
  snprintf(in_same.context, sizeof in_same.context, "model m");
  tsl_records_add(db2, &in_same);
  tsl_records_dedupe(db2);
  CU_ASSERT_EQUAL(db2->n, 3);
  /* ... and its final-plan record (a window) apart from its variant record */
  tsl_record in_final = in_same;
  in_final.window_steps = 2;
  tsl_records_add(db2, &in_final);
  tsl_records_dedupe(db2);
  CU_ASSERT_EQUAL(db2->n, 4);
  tsl_records_free(db2);
  /* a final-plan record wins over a cheaper in-model record of the variants (its costs
   * span a window of steps: not comparable); among final-plan records the cheapest */
  tsl_record fin_slow = plain_record(t, "w", "t.final_slow", 9e-3), fin_fast = plain_record(t, "w", "t.final_fast", 8e-3);
  snprintf(fin_slow.context, sizeof fin_slow.context, "model m");
  snprintf(fin_fast.context, sizeof fin_fast.context, "model m");
  fin_slow.window_steps = fin_fast.window_steps = 2;
  tsl_records_add(db, &fin_slow);
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, &m), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.final_slow");
  tsl_records_add(db, &fin_fast);
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, &m), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.final_fast");
  CU_ASSERT_EQUAL(m, TSL_MATCH_EXACT);
  tsl_records_free(db);
}

/* A final-plan record of `tpl` measured by the check at time `stamp`. */
static tsl_record final_record(const char *t, const char *tpl, double cost, double stamp) {
  tsl_record r = plain_record(t, "w", tpl, cost);
  snprintf(r.context, sizeof r.context, "model m");
  r.window_steps = 2;
  r.timestamp = stamp;
  return r;
}

/* Only the pair of the newest final-plan check counts (its costs were measured in one
 * plan); a newer in-model record of the variants (a later pass that did not check the
 * layer) makes the pair stale too; pick_best drops stale pairs. */
static void test_final_plan_records_count_only_from_the_newest_check(void) {
  const char *t = "host -mcpu=znver3";
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  tsl_record d1 = final_record(t, "t.default", 100e-6, 1000.0), a1 = final_record(t, "t.a", 90e-6, 1000.0);
  tsl_record d2 = final_record(t, "t.default", 95e-6, 2000.0), b2 = final_record(t, "t.b", 97e-6, 2000.0);
  tsl_records_add(db, &d1);
  tsl_records_add(db, &a1);
  const tsl_record *best = NULL;
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.a");
  CU_ASSERT_TRUE(tsl_record_final_current(db, &db->recs[0]));
  /* a second check kept the default: a1 (cheaper, but of the first check's plan) is out */
  tsl_records_add(db, &d2);
  tsl_records_add(db, &b2);
  CU_ASSERT_FALSE(tsl_record_final_current(db, &db->recs[1]));
  CU_ASSERT_TRUE(tsl_record_final_current(db, &db->recs[2]));
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.default");
  CU_ASSERT_DOUBLE_EQUAL(tsl_record_cost(best), 95e-6, 1e-15);
  /* records of another workload or thread count do not age it */
  tsl_record other = final_record(t, "t.c", 1e-6, 3000.0), other_threads = final_record(t, "t.c", 1e-6, 3000.0);
  snprintf(other.workload, sizeof other.workload, "w2");
  other_threads.threads = 7;
  CU_ASSERT_TRUE(tsl_record_final_current(db, &db->recs[2]));
  tsl_records_add(db, &other);
  CU_ASSERT_TRUE(tsl_record_final_current(db, &db->recs[2]));
  tsl_records_add(db, &other_threads);
  CU_ASSERT_TRUE(tsl_record_final_current(db, &db->recs[2]));
  db->n--; /* (it would answer at a process thread count of 7 only; not the point here) */
  /* a later pass's variant record (window 0) of the workload: the pairs are stale, the
   * variants' in-model records answer */
  tsl_record later = plain_record(t, "w", "t.later", 300e-6);
  snprintf(later.context, sizeof later.context, "model m");
  later.timestamp = 3000.0;
  tsl_records_add(db, &later);
  CU_ASSERT_FALSE(tsl_record_final_current(db, &db->recs[2]));
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.later");
  /* pick_best keeps the current records only: other (its own workload) and later */
  tsl_records_pick_best(db);
  CU_ASSERT_EQUAL(db->n, 2);
  for (int i = 0; i < db->n; i++)
    CU_ASSERT_TRUE(db->recs[i].window_steps == 0 || strcmp(db->recs[i].workload, "w2") == 0);
  CU_ASSERT_FALSE(tsl_record_final_current(db, &later));
  tsl_records_free(db);
}

/* Records timed with this process's thread count rank before cheaper ones timed with
 * another count (then in-model before isolated within each); with none at this count,
 * the others answer. */
static void test_records_best_prefers_this_thread_count(void) {
  const char *t = "host -mcpu=znver3";
  int prev = tsl_get_num_threads();
  tsl_set_num_threads(1);
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  tsl_record two = plain_record(t, "w", "t.tuned_for_two", 1e-3);
  two.threads = 2;
  tsl_record two_in = plain_record(t, "w", "t.two_in_model", 2e-3);
  two_in.threads = 2;
  snprintf(two_in.context, sizeof two_in.context, "model m");
  tsl_record one = plain_record(t, "w", "t.tuned_for_one", 4e-3);
  one.threads = 1;
  tsl_records_add(db, &two);
  tsl_records_add(db, &two_in);
  const tsl_record *best = NULL;
  /* nothing at 1 thread yet: the 2-thread records answer, in-model first */
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.two_in_model");
  tsl_records_add(db, &one);
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.tuned_for_one");
  /* at 2 threads the 2-thread in-model record is the choice again */
  tsl_set_num_threads(2);
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.two_in_model");
  /* a thread's own count (what tsl_model_compile_with sets while compiling a model with
   * num_threads) steers the lookup the same way, whatever the process-wide count */
  tsl_set_num_threads(1);
  int own = tsl_parallel_set_local_threads(2);
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.two_in_model");
  tsl_parallel_set_local_threads(own);
  CU_ASSERT_EQUAL(tsl_records_best(db, t, "w", NULL, 0, &best, NULL), TSL_OK);
  CU_ASSERT_STRING_EQUAL(best->template_name, "t.tuned_for_one");
  /* the rank itself: exact target, then threads, then in-model (the final plan's
   * first), then static */
  char fam[192];
  tsl_target_family(t, fam, sizeof fam);
  tsl_record two_final = two_in;
  two_final.window_steps = 2;
  tsl_record two_static = two;
  snprintf(two_static.cost_source, sizeof two_static.cost_source, "static");
  CU_ASSERT_EQUAL(tsl_record_rank(&two_final, t, fam, 2), 0);
  CU_ASSERT_EQUAL(tsl_record_rank(&two_in, t, fam, 2), 1);
  CU_ASSERT_EQUAL(tsl_record_rank(&two, t, fam, 2), 2);
  CU_ASSERT_EQUAL(tsl_record_rank(&two_final, t, fam, 1), 4);
  CU_ASSERT_EQUAL(tsl_record_rank(&two_in, t, fam, 1), 5);
  CU_ASSERT_EQUAL(tsl_record_rank(&one, t, fam, 2), 6);
  CU_ASSERT_EQUAL(tsl_record_rank(&two_static, t, fam, 2), 18);
  tsl_record fam_final = two_final;
  snprintf(fam_final.target, sizeof fam_final.target, "host -mcpu=znver3 -device=tcp://h:1");
  CU_ASSERT_EQUAL(tsl_record_rank(&fam_final, t, fam, 2), 8);
  tsl_record arm = plain_record("armv8 -mcpu=cortex-a53", "w", "t.arm", 1e-4);
  CU_ASSERT_EQUAL(tsl_record_rank(&arm, t, fam, 2), -1);
  tsl_records_free(db);
  tsl_set_num_threads(prev);
}

/* ---- the dispatch on a real conv layer ------------------------------------------ */

/* x[1,16,12,12] -> conv 3x3 16->24 pad 1 -> conv 3x3 24->16 pad 1 -> y */
static tsl_graph *small_model(void) {
  tsl_graph *g = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_new("small", &g), TSL_OK);
  /* 16 input channels: whole blocks at 8 and 16 lanes, so the first conv reads NCHW[x]c
   * data (few channels would be read plain, by the grouped algorithm alone) and every
   * algorithm competes for both layers */
  int64_t xs[4] = {1, 16, 12, 12};
  int x;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_input(g, "x", TSL_DTYPE_F32, 4, xs, &x), TSL_OK);
  int64_t K[2] = {24, 16}, C[2] = {16, 24};
  for (int l = 0; l < 2; l++) {
    int64_t ws[4] = {K[l], C[l], 3, 3};
    tsl_tensor *w = NULL, *b = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 4, ws, &w), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(w, 11 + (uint64_t)l, -0.3, 0.3), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &K[l], &b), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(b, 21 + (uint64_t)l, -0.1, 0.1), TSL_OK);
    int ins[3], y, node;
    ins[0] = x;
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, NULL, w, &ins[1]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, NULL, b, &ins[2]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, NULL, &y), TSL_OK);
    char name[16];
    snprintf(name, sizeof name, "conv%d", l);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, TSL_OP_CONV, name, 3, ins, 1, &y, &node), TSL_OK);
    int64_t st[2] = {1, 1}, pads[4] = {1, 1, 1, 1};
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, st), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
    x = y;
  }
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_output(g, x), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_infer_shapes(g), TSL_OK);
  return g;
}

/* small_model() and its two distinct conv layers on the host (layers has room for 4). */
static tsl_graph *small_model_with_layers(tsl_conv_layer *layers, int *n) {
  tsl_graph *g = small_model();
  CU_ASSERT_EQUAL_FATAL(tsl_graph_conv_layers(g, "host", layers, 4, n), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(*n, 2);
  return g;
}

static bool algo_record(const tsl_workload *w, const char *target, int a, double cost, const char *context,
                        tsl_record *r) {
  return tt_algo_record_at(w, target, a, -1, cost, context, r);
}

/* The dispatch's template for w from db. */
static void dispatched(const tsl_records *db, const tsl_workload *w, tsl_dispatch_info *info) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule_any(db, &t, w, NULL, &p, &s, info), TSL_OK);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

static void test_dispatch_prefers_in_model_falls_back_and_ignores_other_target_or_space(void) {
  tsl_conv_layer layers[4];
  int n = 0;
  tsl_graph *g = small_model_with_layers(layers, &n);
  const tsl_workload *w = &layers[1].workload;
  tsl_target host;
  tsl_target_parse("host", &host);
  char tstr[192];
  tsl_target_str(&host, tstr, sizeof tstr);
  tsl_record iso0, iso1, in1;
  CU_ASSERT_TRUE_FATAL(algo_record(w, "host", 0, 1e-6, NULL, &iso0));
  CU_ASSERT_TRUE_FATAL(algo_record(w, "host", 1, 5e-6, NULL, &iso1));
  CU_ASSERT_TRUE_FATAL(algo_record(w, "host", 1, 50e-6, "model small", &in1));
  CU_ASSERT_STRING_NOT_EQUAL(iso0.template_name, iso1.template_name);
  tsl_dispatch_info *info = malloc(sizeof *info);
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_records_add(db, &iso0);
  tsl_records_add(db, &iso1);
  /* isolated only: the cheapest isolated record */
  dispatched(db, w, info);
  CU_ASSERT_TRUE(info->tuned);
  CU_ASSERT_FALSE(info->in_model);
  CU_ASSERT_STRING_EQUAL(info->template_name, iso0.template_name);
  /* an in-model record of another target family, or of another space: ignored */
  tsl_record other = in1;
  snprintf(other.target, sizeof other.target, "host -mcpu=some-other-cpu");
  tsl_records_add(db, &other);
  tsl_record stale = in1;
  stale.space_hash ^= 1;
  tsl_records_add(db, &stale);
  dispatched(db, w, info);
  CU_ASSERT_STRING_EQUAL(info->template_name, iso0.template_name);
  CU_ASSERT_FALSE(info->in_model);
  /* a valid in-model record wins although its cost is 50x the isolated best's */
  tsl_records_add(db, &in1);
  dispatched(db, w, info);
  CU_ASSERT_TRUE(info->in_model);
  CU_ASSERT_STRING_EQUAL(info->template_name, iso1.template_name);
  CU_ASSERT_STRING_EQUAL(info->record.context, "model small");
  CU_ASSERT_STRING_EQUAL(info->record.target, tstr);
  /* layer 0 has no in-model record: it keeps the isolated choice */
  tsl_record l0;
  CU_ASSERT_TRUE_FATAL(algo_record(&layers[0].workload, "host", 1, 1e-6, NULL, &l0));
  tsl_records_add(db, &l0);
  dispatched(db, &layers[0].workload, info);
  CU_ASSERT_FALSE(info->in_model);
  CU_ASSERT_STRING_EQUAL(info->template_name, l0.template_name);
  tsl_records_free(db);
  free(info);
  tsl_graph_free(g);
}

/* ---- the pass on a small model, tuned for real ---------------------------------- */

static double naive_min(const double *x, int n) {
  double m = INFINITY;
  for (int i = 0; i < n; i++)
    if (x[i] < m) m = x[i];
  return m;
}

static int count_lines_with(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0;
  int n = 0;
  while (getline(&line, &cap, f) >= 0) n += strstr(line, needle) != NULL;
  free(line);
  fclose(f);
  return n;
}

/* The layer of res with workload key `key` (the last one), -1 if none. */
static int layer_with_key(const tsl_insitu_result *res, const char *key) {
  int l = -1;
  for (int k = 0; k < res->nlayers; k++)
    if (strcmp(res->layers[k].key, key) == 0) l = k;
  return l;
}

/* The small model with its two conv layers (layers[0..2)) tuned in isolation (the first
 * pass: each algorithm's default config, one thread) into a new file `path`
 * (/tmp/tsl_insitu_TAG_PID.jsonl), loaded into *db; *io a quick pass at one thread (2
 * algorithms, 5 rounds, 1 warm-up, context "model small") appending to that file. */
static tsl_graph *small_model_tuned(const char *tag, char path[128], tsl_conv_layer layers[4], tsl_tune_result tr[2],
                                    tsl_records **db, tsl_insitu_opts *io) {
  int n = 0;
  tsl_graph *g = small_model_with_layers(layers, &n);
  snprintf(path, 128, "/tmp/tsl_insitu_%s_%ld.jsonl", tag, (long)getpid());
  unlink(path);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  tsl_tune_opts o = tt_quick_tune_opts(path);
  for (int l = 0; l < 2; l++) CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&host, &layers[l].workload, &o, &tr[l]), TSL_OK);
  *db = NULL;
  tsl_records_new(db);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(*db, path, true, NULL), TSL_OK);
  *io = tsl_insitu_opts_default();
  io->context = "model small";
  io->top_algos = 2;
  io->rounds = 5;
  io->warmup = 1;
  io->threads = 1;
  io->records_path = path;
  return g;
}

static void test_insitu_small_model_writes_in_model_records_and_compile_uses_the_winner(void) {
  tsl_conv_layer layers[4];
  char path[128];
  tsl_tune_result tr[2];
  tsl_records *db = NULL;
  tsl_insitu_opts io;
  tsl_graph *g = small_model_tuned("winner", path, layers, tr, &db, &io);
  int isolated_lines = db->n;
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  tsl_tune_opts o = tt_quick_tune_opts(path);
  tsl_insitu_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_insitu_verify(g, db, &io, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.nlayers, 2);
  CU_ASSERT_TRUE(res.variants >= 2);
  int candidates = 0, checked = 0;
  for (int l = 0; l < res.nlayers; l++) {
    const tsl_insitu_layer *L = &res.layers[l];
    CU_ASSERT_EQUAL(L->steps, 1);
    /* the default and at least one other algorithm (two were verified) */
    CU_ASSERT_TRUE(L->ncand >= 2);
    CU_ASSERT_TRUE(L->cand[0].is_default);
    int best = -1;
    double best_cost = INFINITY;
    for (int c = 0; c < L->ncand; c++) {
      const tsl_insitu_candidate *cd = &L->cand[c];
      CU_ASSERT_TRUE(cd->measured);
      CU_ASSERT_EQUAL(cd->rec.ncosts, 5);
      CU_ASSERT_STRING_EQUAL(cd->rec.context, "model small");
      double fastest = naive_min(cd->rec.costs, cd->rec.ncosts);
      CU_ASSERT_DOUBLE_EQUAL(cd->model_cost, fastest, 1e-12);
      CU_ASSERT_TRUE(fastest > 0 && fastest < 1.0);
      if (fastest < best_cost) {
        best_cost = fastest;
        best = c;
      }
      candidates++;
    }
    CU_ASSERT_EQUAL(L->mixed_choice, best);
    /* the final-plan check (window 2 by default) ran where the choice is not the default */
    CU_ASSERT_EQUAL(L->checked, best > 0);
    if (L->checked) {
      CU_ASSERT_EQUAL(L->chosen, L->final_cost[1] < L->final_cost[0] ? best : 0);
      checked++;
    } else
      CU_ASSERT_EQUAL(L->chosen, best);
  }
  CU_ASSERT_EQUAL(res.checked, checked);
  CU_ASSERT_EQUAL(res.records_written, candidates + 2 * checked);
  CU_ASSERT_EQUAL(count_lines_with(path, "\"context\":\"model small\""), candidates + 2 * checked);
  CU_ASSERT_EQUAL(count_lines_with(path, "\"window_steps\":2"), 2 * checked);
  CU_ASSERT_EQUAL(db->n, isolated_lines + candidates + 2 * checked);

  /* the file as a later compile reads it: every conv runs its layer's in-model winner */
  tsl_compile_options co = {.target = "host", .records = path};
  tsl_graph_plan *plan = NULL;
  tsl_conv_step *steps = NULL;
  int ns = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_compile_conv_steps(g, &co, &plan, NULL, &steps, &ns), TSL_OK);
  CU_ASSERT_EQUAL(ns, 2);
  for (int s = 0; s < ns; s++) {
    int l = layer_with_key(&res, steps[s].info.record.workload);
    CU_ASSERT_FATAL(l >= 0);
    const tsl_record *want = &res.layers[l].cand[res.layers[l].chosen].rec;
    CU_ASSERT_TRUE(steps[s].info.in_model);
    if (strcmp(steps[s].info.template_name, want->template_name) != 0) {
      /* say what the compile saw: every candidate's record and the one it used */
      const tsl_insitu_layer *L = &res.layers[l];
      printf("\n    layer %s: compile used %s (cost %.9g, threads %d, context '%s'); in-situ chose %d:", L->key,
             steps[s].info.template_name, tsl_record_cost(&steps[s].info.record), steps[s].info.record.threads,
             steps[s].info.record.context, L->chosen);
      for (int c = 0; c < L->ncand; c++)
        printf("\n      cand %d: %s cost %.9g threads %d hash %llx", c, L->cand[c].rec.template_name,
               tsl_record_cost(&L->cand[c].rec), L->cand[c].rec.threads, (unsigned long long)L->cand[c].rec.space_hash);
    }
    CU_ASSERT_STRING_EQUAL(steps[s].info.template_name, want->template_name);
    CU_ASSERT_EQUAL(steps[s].info.record.config.nknobs, want->config.nknobs);
    CU_ASSERT_EQUAL(memcmp(steps[s].info.record.config.values, want->config.values,
                           sizeof want->config.values[0] * (size_t)want->config.nknobs),
                    0);
  }
  free(steps);
  tsl_graph_plan_free(plan);

  /* resuming the isolated tuning counts no in-model record as a trial */
  o.db = db;
  tsl_tune_result again;
  CU_ASSERT_EQUAL(tsl_tune_workload(&host, &layers[0].workload, &o, &again), TSL_OK);
  CU_ASSERT_EQUAL(again.measured, 0);
  CU_ASSERT_EQUAL(again.trials, tr[0].trials);

  tsl_insitu_result_clear(&res);
  tsl_records_free(db);
  tsl_graph_free(g);
  unlink(path);
}


/* Whether record r is candidate c's choice: its template and knob values. */
static bool record_is_candidate(const tsl_record *r, const tsl_record *c) {
  if (strcmp(r->template_name, c->template_name) != 0 || r->config.nknobs != c->config.nknobs) return false;
  for (int i = 0; i < r->config.nknobs; i++)
    if (r->config.values[i] != c->config.values[i]) return false;
  return true;
}

/* The final-plan check on choices the test sets: a pass without the check (window 0)
 * writes no final-plan record; then every layer's choice is set to its candidate 1 and
 * the check alone runs: each such layer is timed in the final plan, keeps candidate 1
 * exactly when its final-plan cost is below its default's, and both costs are in two
 * records of window 2 (their fastest runs); a later compile from the file runs what the
 * check decided. */
static void test_insitu_final_plan_check_keeps_a_choice_only_where_the_final_plan_runs_it_faster(void) {
  tsl_conv_layer layers[4];
  char path[128];
  tsl_tune_result tr[2];
  tsl_records *db = NULL;
  tsl_insitu_opts io;
  tsl_graph *g = small_model_tuned("final", path, layers, tr, &db, &io);
  io.window = 0;
  tsl_insitu_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_insitu_verify(g, db, &io, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.checked, 0);
  CU_ASSERT_EQUAL(count_lines_with(path, "window_steps"), 0);
  int forced = 0, written = res.records_written;
  for (int l = 0; l < res.nlayers; l++) {
    tsl_insitu_layer *L = &res.layers[l];
    CU_ASSERT_FALSE(L->checked);
    CU_ASSERT_EQUAL(L->chosen, L->mixed_choice);
    if (L->ncand >= 2 && !L->shares_key) {
      L->mixed_choice = L->chosen = 1;
      forced++;
    }
  }
  CU_ASSERT_EQUAL_FATAL(forced, 2); /* both layers have candidates besides the default */

  io.window = 0;
  CU_ASSERT_EQUAL(tsl_insitu_check_final_plan(g, db, &io, &res), TSL_ERR_INVALID);
  io.window = TSL_INSITU_MAX_WINDOW + 1;
  CU_ASSERT_EQUAL(tsl_insitu_check_final_plan(g, db, &io, &res), TSL_ERR_INVALID);
  tsl_clear_error();
  io.window = 2;
  CU_ASSERT_EQUAL_FATAL(tsl_insitu_check_final_plan(g, db, &io, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.checked, forced);
  CU_ASSERT_EQUAL(res.records_written, written + 2 * forced);
  CU_ASSERT_EQUAL(count_lines_with(path, "\"window_steps\":2"), 2 * forced);
  int reverted = 0;
  for (int l = 0; l < res.nlayers; l++) {
    const tsl_insitu_layer *L = &res.layers[l];
    CU_ASSERT_TRUE(L->checked);
    CU_ASSERT_TRUE(L->final_cost[0] > 0 && L->final_cost[0] < 1.0);
    CU_ASSERT_TRUE(L->final_cost[1] > 0 && L->final_cost[1] < 1.0);
    CU_ASSERT_EQUAL(L->chosen, L->final_cost[1] < L->final_cost[0] ? 1 : 0);
    reverted += L->chosen == 0;
    /* its two final-plan records hold the costs: the default's and candidate 1's */
    int found[2] = {0, 0};
    for (int i = 0; i < db->n; i++) {
      const tsl_record *r = &db->recs[i];
      if (r->window_steps != 2 || strcmp(r->workload, L->key) != 0) continue;
      CU_ASSERT_STRING_EQUAL(r->context, "model small");
      CU_ASSERT_EQUAL(r->ncosts, 5);
      for (int c = 0; c < 2; c++)
        if (record_is_candidate(r, &L->cand[c].rec)) {
          found[c]++;
          CU_ASSERT_DOUBLE_EQUAL(naive_min(r->costs, r->ncosts), L->final_cost[c], 1e-12);
        }
    }
    CU_ASSERT_EQUAL(found[0], 1);
    CU_ASSERT_EQUAL(found[1], 1);
  }
  CU_ASSERT_EQUAL(res.reverted, reverted);
  /* checked once: not again */
  CU_ASSERT_EQUAL(tsl_insitu_check_final_plan(g, db, &io, &res), TSL_ERR_INVALID);
  tsl_clear_error();

  /* a later compile from the file runs each layer's checked choice */
  tsl_compile_options co = {.target = "host", .records = path};
  tsl_graph_plan *plan = NULL;
  tsl_conv_step *steps = NULL;
  int ns = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_compile_conv_steps(g, &co, &plan, NULL, &steps, &ns), TSL_OK);
  CU_ASSERT_EQUAL(ns, 2);
  for (int s = 0; s < ns; s++) {
    int l = layer_with_key(&res, steps[s].info.record.workload);
    CU_ASSERT_FATAL(l >= 0);
    CU_ASSERT_TRUE(steps[s].info.in_model);
    CU_ASSERT_EQUAL(steps[s].info.record.window_steps, 2);
    CU_ASSERT_TRUE(record_is_candidate(&steps[s].info.record, &res.layers[l].cand[res.layers[l].chosen].rec));
  }
  free(steps);
  tsl_graph_plan_free(plan);
  tsl_insitu_result_clear(&res);
  tsl_records_free(db);
  tsl_graph_free(g);
  unlink(path);
}

/* Spearman's rho by the textbook formula 1 - 6 sum d^2 / (n (n^2 - 1)) for values
 * without ties (ranks by counting); NAN when some value repeats. */
static double naive_spearman(const double *a, const double *b, int n) {
  double d2 = 0;
  for (int i = 0; i < n; i++) {
    int ra = 0, rb = 0;
    for (int j = 0; j < n; j++) {
      if (j != i && (a[j] == a[i] || b[j] == b[i])) return NAN;
      ra += a[j] < a[i];
      rb += b[j] < b[i];
    }
    d2 += (double)(ra - rb) * (ra - rb);
  }
  return 1 - 6 * d2 / ((double)n * ((double)n * n - 1));
}

/* Configs (not the default) of the algorithms of w with a space of 4+ configs: up to
 * `want` algorithms, 3 configs each, into idx[a][0..3) with alg[a] the algorithm index. */
static int searchable_algos(const tsl_workload *w, int want, int *alg, int64_t (*idx)[3]) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK) return 0;
  tsl_algo_choice algos[16];
  int na = tsl_algorithms_for(w, algos, 16, NULL), k = 0;
  for (int a = 0; a < na && a < 16 && k < want; a++) {
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_te_program *p = NULL;
    tsl_config_space s;
    tsl_config c;
    if (tsl_workload_instantiate(&algos[a].op_workload, &p) == TSL_OK && algos[a].tpl->space(p, &t, &s) == TSL_OK &&
        tsl_space_size(&s) >= 4 && algos[a].tpl->default_config(p, &t, &s, &c) == TSL_OK) {
      int64_t d = tsl_config_index(&s, &c), size = tsl_space_size(&s);
      int n = 0;
      /* spread over the space: neighbours of one index are often the same kernel */
      for (int64_t i = 0; i < size && n < 3; i += size / 4 > 0 ? size / 4 : 1)
        if (i != d) idx[k][n++] = i;
      if (n == 3) alg[k++] = a;
    }
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
  }
  return k;
}

/* A database of r[0..n), each set to one thread (the pass runs at one). */
static tsl_records *one_thread_records(tsl_record *r, int n) {
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  for (int k = 0; k < n; k++) {
    r[k].threads = 1;
    CU_ASSERT_EQUAL_FATAL(tsl_records_add(db, &r[k]), TSL_OK);
  }
  return db;
}

/* The pass at 2 algorithms x 2 configs, 3 timed rounds, no warmup, one thread. */
static tsl_insitu_opts quick_insitu_opts(const char *context) {
  tsl_insitu_opts io = tsl_insitu_opts_default();
  io.context = context;
  io.top_algos = 2;
  io.per_algo = 2;
  io.rounds = 3;
  io.warmup = 0;
  io.threads = 1;
  return io;
}

/* The pass proposes, per layer, the `per_algo` cheapest isolated configs of each of the
 * `top_algos` algorithms with the cheapest records, in isolated order, and measures each
 * in the model; the layer's rank correlation is Spearman's over those candidates. */
static void test_insitu_verifies_the_best_configs_of_each_of_the_best_algorithms(void) {
  tsl_conv_layer layers[4];
  int n = 0;
  tsl_graph *g = small_model_with_layers(layers, &n);
  const tsl_workload *w = &layers[1].workload;
  int alg[3];
  int64_t idx[3][3];
  int na = searchable_algos(w, 3, alg, idx);
  if (na < 3) {
    printf("\n    (skipped: fewer than 3 algorithms with 4+ configs for the layer on this host)");
    tsl_graph_free(g);
    return;
  }
  /* isolated costs: A0 1 us < B0 2 < A1 3 < B1 4 < A2 5 < C0 6 < C1 7 */
  struct {
    int a, i;
    double us;
  } plan[7] = {{0, 0, 1}, {1, 0, 2}, {0, 1, 3}, {1, 1, 4}, {0, 2, 5}, {2, 0, 6}, {2, 1, 7}};
  tsl_record r[7];
  for (int k = 0; k < 7; k++)
    CU_ASSERT_TRUE_FATAL(
        tt_algo_record_at(w, "host", alg[plan[k].a], idx[plan[k].a][plan[k].i], plan[k].us * 1e-6, NULL, &r[k]));
  tsl_records *db = one_thread_records(r, 7);
  tsl_insitu_opts io = quick_insitu_opts("model small");
  tsl_insitu_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_insitu_verify(g, db, &io, &res), TSL_OK);
  int l = layer_with_key(&res, r[0].workload);
  CU_ASSERT_FATAL(l >= 0);
  const tsl_insitu_layer *L = &res.layers[l];
  /* the default, then A0 B0 A1 B1 (A2: a third config of A; C: a third algorithm) */
  int want[4] = {0, 1, 2, 3}, nw = 0;
  int expect[5];
  expect[nw++] = -1;
  for (int k = 0; k < 4; k++) {
    tsl_record *e = &r[want[k]];
    /* the default's config is candidate 0 already */
    if (strcmp(e->template_name, L->cand[0].rec.template_name) == 0 && e->config_index == L->cand[0].rec.config_index)
      continue;
    expect[nw++] = want[k];
  }
  CU_ASSERT_EQUAL_FATAL(L->ncand, nw);
  CU_ASSERT_TRUE(L->cand[0].is_default);
  CU_ASSERT_EQUAL(L->isolated_choice, 1);
  double iso[5], mod[5];
  int np = 0;
  for (int c = 1; c < L->ncand; c++) {
    const tsl_record *e = &r[expect[c]];
    CU_ASSERT_STRING_EQUAL(L->cand[c].rec.template_name, e->template_name);
    CU_ASSERT_EQUAL(memcmp(L->cand[c].rec.config.values, e->config.values,
                           sizeof e->config.values[0] * (size_t)e->config.nknobs),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(L->cand[c].isolated_cost, e->costs[0], 1e-15);
  }
  for (int c = 0; c < L->ncand; c++) {
    CU_ASSERT_TRUE(L->cand[c].measured);
    CU_ASSERT_TRUE(L->cand[c].model_cost > 0 && L->cand[c].model_cost < 1.0);
    if (isfinite(L->cand[c].isolated_cost)) {
      iso[np] = L->cand[c].isolated_cost;
      mod[np++] = L->cand[c].model_cost;
    }
  }
  CU_ASSERT_EQUAL(L->rank_pairs, np);
  double rho = naive_spearman(iso, mod, np);
  if (!isnan(rho)) CU_ASSERT_DOUBLE_EQUAL(L->rank_corr, rho, 1e-12);
  tsl_insitu_result_clear(&res);
  tsl_records_free(db);
  tsl_graph_free(g);
}

static bool is_gemm1x1(const tsl_workload *w, int a) {
  tsl_algo_choice algos[16];
  int na = tsl_algorithms_for(w, algos, 16, NULL);
  tsl_conv2d_algo ca;
  return a < na && a < 16 && tsl_conv2d_algo_of_op(algos[a].op_workload.op, &ca) && ca == TSL_CONV2D_GEMM_1X1;
}

/* The in-situ layer of (key, only_algo), -1 when none; *count: how many there are. */
static int insitu_layer_of(const tsl_insitu_result *res, const char *key, int only_algo, int *count) {
  int l = -1;
  *count = 0;
  for (int k = 0; k < res->nlayers; k++)
    if (strcmp(res->layers[k].key, key) == 0 && res->layers[k].only_algo == only_algo) {
      l = k;
      (*count)++;
    }
  return l;
}

/* A channel-scaled conv (GEMM 1x1 only) and an unscaled conv of the same workload are
 * two in-situ layers, each with its own candidates (the scaled one: GEMM 1x1 configs
 * only; the unscaled one: the other algorithm's record first), every candidate measured
 * where its layer's steps ran exactly it. Before, both were one layer keyed by the
 * workload with the first step's restriction, and the scaled conv's steps ran another
 * choice than the layer's candidates. */
static void test_insitu_keys_scaled_and_unscaled_convs_of_one_workload_apart(void) {
  tsl_conv_layer layers[TT_SE_MAX_LAYERS];
  int n = 0, lu = -1, ls = -1;
  tsl_graph *g = tt_se_graph(layers, &n);
  char keys[TT_SE_MAX_LAYERS][TSL_RECORD_KEY_LEN];
  for (int i = 0; i < n; i++) {
    char *key = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&layers[i].workload, &key), TSL_OK);
    snprintf(keys[i], sizeof keys[i], "%s", key);
    free(key);
    if (layers[i].only_algo == TSL_CONV2D_GEMM_1X1) ls = i;
  }
  CU_ASSERT_FATAL(ls >= 0);
  for (int i = 0; i < n; i++)
    if (i != ls && strcmp(keys[i], keys[ls]) == 0) lu = i;
  CU_ASSERT_FATAL(lu >= 0); /* the unscaled conv of the same workload */
  CU_ASSERT_EQUAL(layers[lu].only_algo, -1);
  const tsl_workload *w = &layers[ls].workload;
  int alg[16], gemm = -1, other = -1;
  int64_t idx[16][3];
  int na = searchable_algos(w, 16, alg, idx);
  for (int k = 0; k < na; k++) {
    if (is_gemm1x1(w, alg[k]) && gemm < 0) gemm = k;
    if (!is_gemm1x1(w, alg[k]) && other < 0) other = k;
  }
  if (gemm < 0 || other < 0) {
    printf("\n    (skipped: no GEMM 1x1 and other algorithm with 4+ configs for the layer on this host)");
    tsl_graph_free(g);
    return;
  }
  /* isolated: the other algorithm's config 1 us < GEMM config A 2 us < GEMM config B 3 us */
  tsl_record r[3];
  CU_ASSERT_TRUE_FATAL(tt_algo_record_at(w, "host", alg[other], idx[other][0], 1e-6, NULL, &r[0]));
  CU_ASSERT_TRUE_FATAL(tt_algo_record_at(w, "host", alg[gemm], idx[gemm][0], 2e-6, NULL, &r[1]));
  CU_ASSERT_TRUE_FATAL(tt_algo_record_at(w, "host", alg[gemm], idx[gemm][1], 3e-6, NULL, &r[2]));
  tsl_records *db = one_thread_records(r, 3);
  tsl_insitu_opts io = quick_insitu_opts("model se");
  tsl_insitu_result res;
  tsl_status st = tsl_insitu_verify(g, db, &io, &res);
  if (st != TSL_OK) printf("\n    in situ: %s", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  int count = 0;
  int ks = insitu_layer_of(&res, keys[ls], TSL_CONV2D_GEMM_1X1, &count);
  CU_ASSERT_EQUAL(count, 1);
  int ku = insitu_layer_of(&res, keys[ls], -1, &count);
  CU_ASSERT_EQUAL(count, 1);
  CU_ASSERT_FATAL(ks >= 0 && ku >= 0);
  const tsl_insitu_layer *S = &res.layers[ks], *U = &res.layers[ku];
  CU_ASSERT_EQUAL(S->steps, layers[ls].count);
  CU_ASSERT_EQUAL(U->steps, layers[lu].count);
  /* scaled: its default (GEMM 1x1's default config) and the two GEMM records, cheaper first */
  CU_ASSERT_EQUAL_FATAL(S->ncand, 3);
  for (int c = 0; c < S->ncand; c++) {
    CU_ASSERT_STRING_EQUAL(S->cand[c].rec.template_name, r[1].template_name);
    CU_ASSERT_TRUE(S->cand[c].measured);
  }
  CU_ASSERT_DOUBLE_EQUAL(S->cand[1].isolated_cost, 2e-6, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(S->cand[2].isolated_cost, 3e-6, 1e-15);
  /* unscaled: the other algorithm's record first, then GEMM 1x1's two (the default's
   * config may be one of them: it is candidate 0 then) */
  CU_ASSERT_TRUE_FATAL(U->ncand >= 3);
  CU_ASSERT_STRING_EQUAL(U->cand[1].rec.template_name, r[0].template_name);
  CU_ASSERT_DOUBLE_EQUAL(U->cand[1].isolated_cost, 1e-6, 1e-15);
  for (int c = 0; c < U->ncand; c++) CU_ASSERT_TRUE(U->cand[c].measured);
  /* in-model records of both layers, one per measured candidate */
  CU_ASSERT_EQUAL(res.records_written, S->ncand + U->ncand);
  tsl_insitu_result_clear(&res);
  tsl_records_free(db);
  tsl_graph_free(g);
}

void tsl_tests_tuner_insitu(void) {
  CU_pSuite s = CU_add_suite("tuner_insitu", NULL, NULL);
  CU_add_test(s, "test_records_with_and_without_context_round_trip", test_records_with_and_without_context_round_trip);
  CU_add_test(s, "test_in_model_record_costs_its_fastest_run_like_an_isolated_one",
              test_in_model_record_costs_its_fastest_run_like_an_isolated_one);
  CU_add_test(s, "test_records_best_prefers_in_model_even_when_isolated_is_cheaper",
              test_records_best_prefers_in_model_even_when_isolated_is_cheaper);
  CU_add_test(s, "test_records_best_prefers_this_thread_count", test_records_best_prefers_this_thread_count);
  CU_add_test(s, "test_final_plan_records_count_only_from_the_newest_check",
              test_final_plan_records_count_only_from_the_newest_check);
  CU_add_test(s, "test_dispatch_prefers_in_model_falls_back_and_ignores_other_target_or_space",
              test_dispatch_prefers_in_model_falls_back_and_ignores_other_target_or_space);
  CU_add_test(s, "test_insitu_verifies_the_best_configs_of_each_of_the_best_algorithms",
              test_insitu_verifies_the_best_configs_of_each_of_the_best_algorithms);
  CU_add_test(s, "test_insitu_small_model_writes_in_model_records_and_compile_uses_the_winner",
              test_insitu_small_model_writes_in_model_records_and_compile_uses_the_winner);
  CU_add_test(s, "test_insitu_final_plan_check_keeps_a_choice_only_where_the_final_plan_runs_it_faster",
              test_insitu_final_plan_check_keeps_a_choice_only_where_the_final_plan_runs_it_faster);
  CU_add_test(s, "test_insitu_keys_scaled_and_unscaled_convs_of_one_workload_apart",
              test_insitu_keys_scaled_and_unscaled_convs_of_one_workload_apart);
}
