/* Compiling a model layer with records of the operator its algorithm runs: what
 * `tunecli tune-op` writes (keyed by the operator instance, e.g. conv2d_winograd_f2 with
 * U's shape) tunes every layer that runs that instance (tuner/dispatch.h). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/arena.h"
#include "ops/algorithm.h"
#include "ops/workload.h"
#include "tessel/runtime.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"
#include "tuner/tune.h"
#include "tuner_tests.h"
#include "tuner_util.h"

/* A padded 3x3 conv layer in NCHW[8]c (1 x 16 x HW x HW -> 16) of the conv family. */
static void layer3x3(int64_t hw, tsl_workload *w) {
  const int64_t data[] = {1, 2, hw, hw, 8}, weight[] = {2, 2, 3, 3, 8, 8}, bias[] = {2, 8};
  const int64_t *shapes[] = {data, weight, bias};
  const int nd[] = {5, 6, 2};
  tsl_dsl_param_value p[] = {tsl_dsl_int_param("pad_top", 1), tsl_dsl_int_param("pad_left", 1),
                             tsl_dsl_int_param("pad_bottom", 1), tsl_dsl_int_param("pad_right", 1)};
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(w, "conv2d_nchwc_bias", 3, shapes, nd, 4, p), TSL_OK);
}

/* The index among tsl_algorithms_for(w) of the algorithm named `name`, -1 without one;
 * its operator workload (fixed, so it can be copied) into *op. */
static int algo_index(const tsl_workload *w, const char *name, tsl_workload *op) {
  tsl_algo_choice a[16];
  int n = tsl_algorithms_for(w, a, 16, NULL);
  for (int i = 0; i < n && i < 16; i++)
    if (strcmp(a[i].name, name) == 0) {
      *op = a[i].op_workload;
      tsl_workload_fix(op);
      return i;
    }
  return -1;
}

static char *key_of(const tsl_workload *w) {
  char *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(w, &k), TSL_OK);
  return k;
}

/* tune-op of operator instance op (one trial: its default config), records into a new
 * file named from template path (mkstemp's XXXXXX); the options used into *o. */
static void tune_op_alone(const tsl_target *host, const tsl_workload *op, char *path, tsl_tune_opts *o,
                          tsl_tune_result *res) {
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  *o = tt_quick_tune_opts(path);
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(host, op, o, res), TSL_OK);
}

/* The operator's own key differs from the layer's, so the only way the layer finds a
 * record written under it is the lookup by the algorithm's operator. */
static void test_dispatch_uses_tune_op_records_of_the_layers_operator(void) {
  tsl_arena *ar = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(ar);
  int prev_threads = tsl_get_num_threads();
  tsl_set_num_threads(1);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  char target[192];
  tsl_target_str(&host, target, sizeof target);
  tsl_workload w, other, op, other_op;
  layer3x3(14, &w);
  layer3x3(28, &other);
  int a = algo_index(&w, "conv2d_nchwc_bias.winograd_f2", &op);
  CU_ASSERT_FATAL(a >= 0);
  CU_ASSERT_FATAL(algo_index(&other, "conv2d_nchwc_bias.winograd_f2", &other_op) == a);
  CU_ASSERT_STRING_EQUAL(op.op, "conv2d_winograd_f2");
  char *fam_key = key_of(&w), *op_key = key_of(&op), *other_op_key = key_of(&other_op);
  CU_ASSERT_STRING_NOT_EQUAL(fam_key, op_key);

  /* the operator tuned on its own, as tune-op does: its records are keyed by op_key */
  char path[] = "/tmp/tessel_dispatch_op_XXXXXX";
  tsl_tune_opts o;
  tsl_tune_result res;
  tune_op_alone(&host, &op, path, &o, &res);
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, path, true, NULL), TSL_OK);
  int own = 0;
  const tsl_record *best = NULL;
  for (int i = 0; i < db->n; i++) {
    CU_ASSERT_STRING_EQUAL(db->recs[i].workload, op_key);
    if (db->recs[i].error_no != TSL_MEASURE_OK) continue;
    own++;
    if (!best || tsl_record_cost(&db->recs[i]) < tsl_record_cost(best)) best = &db->recs[i];
  }
  CU_ASSERT_FATAL(own > 0 && best);
  CU_ASSERT_EQUAL(best->threads, 1);

  tsl_te_program *prog = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_TRUE(info.tuned);
  CU_ASSERT_STRING_EQUAL(info.template_name, best->template_name);
  CU_ASSERT_STRING_EQUAL(info.op_workload.op, "conv2d_winograd_f2");
  CU_ASSERT_EQUAL(info.record.config_index, best->config_index);
  CU_ASSERT_DOUBLE_EQUAL(info.cost, tsl_record_cost(best), 0);
  CU_ASSERT_STRING_EQUAL(info.record.workload, fam_key); /* the layer's schedule, as a record of the layer */
  tsl_schedule_free(s);
  s = NULL;

  /* another config of the operator, faster, written under op_key: its config is compiled */
  tsl_record r;
  int64_t idx = best->config_index == 0 ? 1 : 0;
  CU_ASSERT_FATAL(tt_algo_record_at(&w, target, a, idx, tsl_record_cost(best) / 4, NULL, &r));
  snprintf(r.workload, sizeof r.workload, "%s", op_key);
  snprintf(r.template_name, sizeof r.template_name, "%s", best->template_name);
  r.threads = best->threads; /* the same rank as the tune's records */
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db, &r), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_TRUE(info.tuned);
  CU_ASSERT_EQUAL(info.record.config_index, idx);
  tsl_schedule_free(s);
  s = NULL;

  /* a stale one (another space hash) under op_key, faster still: ignored */
  tsl_record stale = r;
  stale.space_hash ^= 1;
  stale.costs[0] = tsl_record_cost(&r) / 8;
  stale.config_index = best->config_index;
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db, &stale), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.record.config_index, idx);
  tsl_schedule_free(s);
  s = NULL;

  /* the same algorithm's record under the layer's family key (tune MODEL's), of the same
   * rank: the faster of the two keys' records is compiled, both ways */
  int64_t idx_f = idx + 2;
  tsl_record famr;
  CU_ASSERT_FATAL(tt_algo_record_at(&w, target, a, idx_f, tsl_record_cost(&r) / 2, NULL, &famr));
  CU_ASSERT_STRING_EQUAL(famr.workload, fam_key);
  snprintf(famr.template_name, sizeof famr.template_name, "%s", best->template_name);
  famr.threads = best->threads;
  tsl_records *db2 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db2, &r), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db2, &famr), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db2, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.record.config_index, idx_f);
  tsl_schedule_free(s);
  s = NULL;
  db2->recs[1].costs[0] = tsl_record_cost(&r) * 2;
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db2, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.record.config_index, idx);
  tsl_schedule_free(s);
  s = NULL;
  /* an exact tie: the record written first (here the operator's) */
  db2->recs[1].costs[0] = tsl_record_cost(&r);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db2, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.record.config_index, idx);
  tsl_schedule_free(s);
  s = NULL;
  /* an in-model record of the layer outranks the faster isolated one of the operator */
  tsl_record inm;
  CU_ASSERT_FATAL(tt_algo_record_at(&w, target, a, idx_f, tsl_record_cost(&r) * 10, "model m step 3", &inm));
  snprintf(inm.template_name, sizeof inm.template_name, "%s", best->template_name);
  inm.threads = best->threads;
  CU_ASSERT_TRUE(tsl_record_in_model(&inm));
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db2, &inm), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db2, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_EQUAL(info.record.config_index, idx_f);
  CU_ASSERT_TRUE(info.in_model);
  tsl_schedule_free(s);
  s = NULL;
  tsl_records_free(db2);

  /* a record of the layer's own key for another algorithm, of the same rank: the faster
   * of the two keys' records wins, both ways */
  int d = algo_index(&w, "conv2d_nchwc_bias.direct", &(tsl_workload){0});
  CU_ASSERT_FATAL(d >= 0);
  tsl_record fr;
  CU_ASSERT_FATAL(tt_algo_record_at(&w, target, d, -1, tsl_record_cost(&r) * 2, NULL, &fr));
  CU_ASSERT_STRING_EQUAL(fr.workload, fam_key);
  fr.threads = best->threads;
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db, &fr), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_STRING_EQUAL(info.op_workload.op, "conv2d_winograd_f2");
  tsl_schedule_free(s);
  s = NULL;
  fr.costs[0] = tsl_record_cost(&r) / 2;
  CU_ASSERT_EQUAL_FATAL(tsl_records_add(db, &fr), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_STRING_EQUAL(info.algorithm, "conv2d_nchwc_bias.direct");
  CU_ASSERT_DOUBLE_EQUAL(info.cost, tsl_record_cost(&r) / 2, 0);
  tsl_schedule_free(s);
  s = NULL;

  /* the layer of another size runs another operator instance: none of these records
   * (its default, untuned) */
  CU_ASSERT_STRING_NOT_EQUAL(other_op_key, op_key);
  CU_ASSERT_EQUAL_FATAL(tsl_dispatch_schedule_any(db, &host, &other, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_FALSE(info.tuned);
  tsl_schedule_free(s);

  tsl_records_free(db);
  unlink(path);
  free(fam_key);
  free(op_key);
  free(other_op_key);
  tsl_set_num_threads(prev_threads);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

/* tune MODEL after tune-op of a layer's operator resumes from those records: the
 * operator's default config that tune-op measured counts as the layer's trial of that
 * algorithm and is not measured again; held under both keys, it counts once. */
static void test_tune_resumes_from_tune_op_records_of_its_algorithm(void) {
  tsl_arena *ar = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(ar);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  tsl_workload w, op;
  layer3x3(14, &w);
  CU_ASSERT_FATAL(algo_index(&w, "conv2d_nchwc_bias.winograd_f2", &op) >= 0);
  char path[] = "/tmp/tessel_dispatch_op_XXXXXX";
  tsl_tune_opts o;
  tsl_tune_result res;
  tune_op_alone(&host, &op, path, &o, &res);
  CU_ASSERT_EQUAL(res.measured, 1); /* the operator's default config */
  /* the layer, its Winograd F(2) algorithm only, resuming from the file as tunecli
   * does: the same config, held */
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, path, true, NULL), TSL_OK);
  o.db = db;
  o.only_algo = TSL_CONV2D_WINOGRAD_F2;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&host, &w, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.trials, 1);
  CU_ASSERT_EQUAL(res.measured, 0);
  CU_ASSERT_TRUE(res.found);
  tsl_records_free(db);
  /* the layer's own record of the same config appended (a tune without resuming), then
   * resumed from both: one trial, not two */
  o.db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&host, &w, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.measured, 1);
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, path, true, NULL), TSL_OK);
  CU_ASSERT_EQUAL(db->n, 2);
  o.db = db;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&host, &w, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.trials, 1);
  CU_ASSERT_EQUAL(res.measured, 0);
  tsl_records_free(db);
  unlink(path);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

void tsl_tests_tuner_dispatch_op_key(void) {
  CU_pSuite s = CU_add_suite("tuner_dispatch_op_key", NULL, NULL);
  CU_add_test(s, "test_dispatch_uses_tune_op_records_of_the_layers_operator",
              test_dispatch_uses_tune_op_records_of_the_layers_operator);
  CU_add_test(s, "test_tune_resumes_from_tune_op_records_of_its_algorithm",
              test_tune_resumes_from_tune_op_records_of_its_algorithm);
}
