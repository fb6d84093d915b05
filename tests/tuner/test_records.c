/* Workload keys, config spaces, records files, merge, and record lookup (C11). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/arena.h"
#include "runtime/file_replace.h"
#include "tuner/dispatch.h"
#include "tuner/records.h"
#include "ops/conv2d/expand_depthwise.h"
#include "ops/workload.h"
#include "tuner_tests.h"

/* ---- workload keys ---------------------------------------------------------- */

static void test_workload_key_defaults_and_order_canonical(void) {
  const int64_t d[] = {1, 3, 8, 8}, wt[] = {4, 3, 3, 3};
  const int64_t *shapes[] = {d, wt};
  const int nd[] = {4, 4};
  tsl_dsl_param_value p1[] = {tsl_dsl_int_param("pad_top", 1), tsl_dsl_int_param("pad_left", 1)};
  tsl_dsl_param_value p2[] = {tsl_dsl_int_param("pad_left", 1), tsl_dsl_int_param("stride_h", 1),
                              tsl_dsl_int_param("pad_top", 1)};
  char *k1 = NULL, *k2 = NULL, *k3 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key("conv2d", 2, shapes, nd, 2, p1, &k1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key("conv2d_nchw", 2, shapes, nd, 3, p2, &k2), TSL_OK);
  CU_ASSERT_STRING_EQUAL(k1, k2);
  CU_ASSERT_STRING_EQUAL(k1, "conv2d_nchw(data:f32[1,3,8,8],weight:f32[4,3,3,3];dilation_h=1,dilation_w=1,"
                             "pad_bottom=0,pad_left=1,pad_right=0,pad_top=1,stride_h=1,stride_w=1)");
  const int64_t d2[] = {1, 3, 9, 8};
  const int64_t *shapes2[] = {d2, wt};
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key("conv2d", 2, shapes2, nd, 2, p1, &k3), TSL_OK);
  CU_ASSERT_STRING_NOT_EQUAL(k1, k3);
  char op[32];
  CU_ASSERT_STRING_EQUAL(tsl_workload_key_op(k1, op, sizeof op), "conv2d_nchw");
  free(k1);
  free(k2);
  free(k3);
}

static void test_workload_key_rejects_bad_input(void) {
  const int64_t a[] = {4, 4}, bad[] = {4, 0};
  const int64_t *shapes[] = {a, a}, *shapes_bad[] = {a, bad};
  const int nd[] = {2, 2}, nd3[] = {2, 3};
  char *k = NULL;
  CU_ASSERT_EQUAL(tsl_workload_key("no_such_op", 2, shapes, nd, 0, NULL, &k), TSL_ERR_NOT_FOUND);
  CU_ASSERT_EQUAL(tsl_workload_key("matmul", 1, shapes, nd, 0, NULL, &k), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_workload_key("matmul", 2, shapes, nd3, 0, NULL, &k), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_workload_key("matmul", 2, shapes_bad, nd, 0, NULL, &k), TSL_ERR_INVALID);
  tsl_dsl_param_value p[] = {tsl_dsl_int_param("alpha", 1)};
  CU_ASSERT_EQUAL(tsl_workload_key("matmul", 2, shapes, nd, 1, p, &k), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(k);
}

/* ---- config spaces ----------------------------------------------------------- */

static void test_space_index_roundtrip_and_hash(void) {
  tsl_config_space s;
  memset(&s, 0, sizeof s);
  const int64_t a[] = {8, 1, 4, 4}, b[] = {0, 1};
  CU_ASSERT_EQUAL(tsl_space_add_knob(&s, "tile", TSL_KNOB_SPLIT, 4, a), TSL_OK);
  CU_ASSERT_EQUAL(tsl_space_add_knob(&s, "vec", TSL_KNOB_ANNOTATE, 2, b), TSL_OK);
  CU_ASSERT_EQUAL(tsl_space_add_knob(&s, "vec", TSL_KNOB_ANNOTATE, 2, b), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(s.knobs[0].nvalues, 3); /* sorted, deduplicated: 1 4 8 */
  CU_ASSERT_EQUAL(tsl_space_size(&s), 6);
  for (int64_t i = 0; i < 6; i++) {
    tsl_config c;
    CU_ASSERT_EQUAL(tsl_config_from_index(&s, i, &c), TSL_OK);
    CU_ASSERT_EQUAL(tsl_config_index(&s, &c), i);
  }
  tsl_config c = {2, {4, 1}};
  CU_ASSERT_EQUAL(tsl_config_index(&s, &c), 3); /* tile is the slow digit: 1*2 + 1 */
  c.values[0] = 5;
  CU_ASSERT_EQUAL(tsl_config_index(&s, &c), -1);
  CU_ASSERT_EQUAL(tsl_config_check(&s, &c), TSL_ERR_INVALID);
  uint64_t h1 = tsl_space_hash("t", 1, "op", &s);
  CU_ASSERT_NOT_EQUAL(h1, tsl_space_hash("t", 2, "op", &s));
  tsl_config_space s2 = s;
  s2.knobs[0].values[2] = 16;
  CU_ASSERT_NOT_EQUAL(h1, tsl_space_hash("t", 1, "op", &s2));
}

/* ---- records ------------------------------------------------------------------ */

static void make_record(tsl_record *r, const char *target, const char *workload, const char *tpl, uint64_t hash,
                        int64_t v0, double cost, int error_no) {
  memset(r, 0, sizeof *r);
  snprintf(r->target, sizeof r->target, "%s", target);
  snprintf(r->task, sizeof r->task, "matmul");
  snprintf(r->workload, sizeof r->workload, "%s", workload);
  snprintf(r->algorithm, sizeof r->algorithm, "%s", tpl);
  snprintf(r->template_name, sizeof r->template_name, "%s", tpl);
  r->space_hash = hash;
  r->nknobs = 2;
  snprintf(r->knob_names[0], TSL_KNOB_NAME_LEN, "tile");
  snprintf(r->knob_names[1], TSL_KNOB_NAME_LEN, "vec");
  r->knob_kinds[0] = TSL_KNOB_SPLIT;
  r->knob_kinds[1] = TSL_KNOB_ANNOTATE;
  r->config.nknobs = 2;
  r->config.values[0] = v0;
  r->config.values[1] = 1;
  r->error_no = error_no;
  if (error_no == 0) {
    r->ncosts = 3;
    r->costs[0] = cost;
    r->costs[1] = cost * 1.01;
    r->costs[2] = cost * 0.99;
  }
  r->timestamp = 1.7e9;
  r->threads = 2;
}

static char *temp_path(const char *tag) {
  char *p = malloc(128);
  snprintf(p, 128, "/tmp/tsl_tuner_test_%s_%ld.jsonl", tag, (long)getpid());
  unlink(p);
  return p;
}

static void test_record_json_roundtrip(void) {
  tsl_record r, back;
  make_record(&r, "host -mcpu=znver3", "matmul(A:f32[2,2],B:f32[2,2];)", "matmul.blis", 0x0123456789abcdefULL, 8,
              1.5e-6, 0);
  snprintf(r.error_msg, sizeof r.error_msg, "quote \" and newline \n inside");
  snprintf(r.device.cpu, sizeof r.device.cpu, "AMD EPYC");
  r.device.cores = 2;
  char *line = tsl_record_to_json(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  CU_ASSERT_PTR_NULL(strchr(line, '\n')); /* one line, whatever the message holds */
  CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"input\":[\"host -mcpu=znver3\",\"matmul\","));
  CU_ASSERT_EQUAL_FATAL(tsl_record_from_json(line, &back), TSL_OK);
  CU_ASSERT_STRING_EQUAL(back.workload, r.workload);
  CU_ASSERT_EQUAL(back.space_hash, r.space_hash);
  CU_ASSERT_EQUAL(back.config.values[0], 8);
  CU_ASSERT_EQUAL(back.ncosts, 3);
  CU_ASSERT_DOUBLE_EQUAL(back.costs[1], r.costs[1], 1e-18);
  CU_ASSERT_STRING_EQUAL(back.error_msg, r.error_msg);
  CU_ASSERT_STRING_EQUAL(back.knob_names[1], "vec");
  free(line);
}

/* A new set with the records of path (tsl_records_load, `skipped` lines allowed), its
 * warnings in *warnbuf (malloc'd). */
static tsl_records *load_warning(const char *path, char **warnbuf) {
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  size_t warnlen = 0;
  FILE *warn = open_memstream(warnbuf, &warnlen);
  CU_ASSERT_EQUAL(tsl_records_load(db, path, true, warn), TSL_OK);
  fclose(warn);
  return db;
}

static void test_records_corrupt_file_loses_no_good_line(void) {
  char *path = temp_path("corrupt");
  tsl_record r;
  make_record(&r, "host", "w1", "t", 1, 1, 1e-3, 0);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  char *good = tsl_record_to_json(&r);
  FILE *f = fopen(path, "a");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("garbage that is not json\n", f);
  fprintf(f, "%.*s\n", (int)(strlen(good) / 2), good); /* truncated line */
  fputs("{\"input\": [\"host\", \"matmul\", 7], \"config\": {}, \"result\": [], \"version\": 0.2}\n", f);
  /* costs of the wrong type */
  char *wrong = strdup(good);
  char *costs = strstr(wrong, "\"result\":[[");
  CU_ASSERT_PTR_NOT_NULL_FATAL(costs);
  costs[11] = '"';
  fprintf(f, "%s\n", wrong);
  fputs("\n[1,2,3]\nnull\n", f);
  fclose(f);
  make_record(&r, "host", "w2", "t", 1, 4, 2e-3, 0);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  /* a last line cut by a crash: no newline */
  f = fopen(path, "a");
  fprintf(f, "%.*s", (int)(strlen(good) - 3), good);
  fclose(f);

  char *warnbuf = NULL;
  tsl_records *db = load_warning(path, &warnbuf);
  CU_ASSERT_EQUAL(db->n, 2);
  CU_ASSERT_EQUAL(db->skipped, 7);
  if (db->n == 2) {
    CU_ASSERT_STRING_EQUAL(db->recs[0].workload, "w1");
    CU_ASSERT_STRING_EQUAL(db->recs[1].workload, "w2");
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(warnbuf, ":2: skipped"));
  CU_ASSERT_PTR_NOT_NULL(strstr(warnbuf, ":8: skipped (line: expected a JSON object)")); /* null */
  CU_ASSERT_PTR_NOT_NULL(strstr(warnbuf, ":10: skipped"));
  free(warnbuf);
  tsl_records_free(db);
  /* a record appended after the cut line is a line of its own: nothing more is lost */
  make_record(&r, "host", "w3", "t", 1, 2, 3e-3, 0);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  db = load_warning(path, &warnbuf);
  CU_ASSERT_EQUAL(db->n, 3);
  CU_ASSERT_EQUAL(db->skipped, 7);
  if (db->n == 3) CU_ASSERT_STRING_EQUAL(db->recs[2].workload, "w3");
  free(warnbuf);
  tsl_records_free(db);
  CU_ASSERT_EQUAL(tsl_records_load(NULL, path, true, NULL), TSL_ERR_INVALID);
  tsl_records *db2 = NULL;
  tsl_records_new(&db2);
  CU_ASSERT_EQUAL(tsl_records_load(db2, "/nonexistent/x.jsonl", false, NULL), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_load(db2, "/nonexistent/x.jsonl", true, NULL), TSL_ERR_IO);
  tsl_records_free(db2);
  free(wrong);
  free(good);
  unlink(path);
  free(path);
}

/* A workload with both epilogues (a fused expand + depthwise pair, Swish after each
 * conv: EfficientNet's features.2.0 at 16 lanes) keeps its key through a records file:
 * written, read back byte-identical and found by its key; the same line cut inside the
 * key is refused with its line number, the good line kept. */
static void test_records_roundtrip_stage_epilogue_key(void) {
  tsl_expand_dw_layer d = {1, 16, 112, 112, 96, 3, 3, 2, 2, 0, 0, 1, 1, 16, {0, 0.0, 0.0, {0}}, {0, 0.0, 0.0, {0}}};
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Swish", 0, NULL, 0, &d.expand_act.fn), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_epilogue_make("Swish", 0, NULL, 0, &d.dw_act.fn), TSL_OK);
  tsl_workload w;
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_expand_dw_workload(&d, &w), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &key), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(key, ")+Swish(alpha=1)|padded+Swish(alpha=1)"));
  char *path = temp_path("stage_epilogue");
  tsl_record r;
  make_record(&r, "host", key, "expand_depthwise_nchwc.band", 0x77, 4, 1e-3, 0);
  CU_ASSERT_EQUAL_FATAL(tsl_record_append(path, &r), TSL_OK);
  char *line = tsl_record_to_json(&r);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  char *cut = strstr(line, "|padded");
  CU_ASSERT_PTR_NOT_NULL_FATAL(cut);
  FILE *f = fopen(path, "a");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fprintf(f, "%.*s\n", (int)(cut - line + 4), line);
  fclose(f);
  char *warnbuf = NULL;
  tsl_records *db = load_warning(path, &warnbuf);
  CU_ASSERT_EQUAL(db->n, 1);
  CU_ASSERT_EQUAL(db->skipped, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(warnbuf ? warnbuf : "", ":2: skipped"));
  if (db->n == 1) CU_ASSERT_STRING_EQUAL(db->recs[0].workload, key);
  const tsl_record *best = NULL;
  CU_ASSERT_EQUAL(tsl_records_best(db, "host", key, "expand_depthwise_nchwc.band", 0x77, &best, NULL), TSL_OK);
  CU_ASSERT(best && best->config.values[0] == 4);
  free(warnbuf);
  tsl_records_free(db);
  free(line);
  unlink(path);
  free(path);
  free(key);
}

/* Class 17: a successful record's costs are measurements: finite and > 0 s. One that
 * claims 0 s (or NaN, or a negative time) is refused by the writer, the reader (the
 * line skipped with its field named, the good lines kept) and an in-memory set, so it
 * can never win `records best`; an error record may carry no costs. */
static void test_record_with_zero_or_invalid_cost_never_wins(void) {
  const double bad_costs[] = {0.0, -0.0, -1e-3, NAN, INFINITY};
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  tsl_record good, bad;
  make_record(&good, "host", "w", "t", 1, 4, 2e-3, 0);
  CU_ASSERT_EQUAL(tsl_record_check(&good), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_add(db, &good), TSL_OK);
  char *path = temp_path("zero_cost");
  CU_ASSERT_EQUAL(tsl_record_append(path, &good), TSL_OK);
  for (size_t i = 0; i < sizeof bad_costs / sizeof bad_costs[0]; i++) {
    make_record(&bad, "host", "w", "t", 1, 8, 1e-3, 0);
    bad.costs[1] = bad_costs[i];
    CU_ASSERT_EQUAL(tsl_record_check(&bad), TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "costs[1]"));
    CU_ASSERT_EQUAL(tsl_record_append(path, &bad), TSL_ERR_INVALID);
    CU_ASSERT_EQUAL(tsl_records_add(db, &bad), TSL_ERR_INVALID);
  }
  /* written by another tool: every cost 0, one cost 0 among good ones, a lone 0 */
  make_record(&bad, "host", "w", "t", 1, 16, 1e-3, 0);
  char *line = tsl_record_to_json(&bad);
  CU_ASSERT_PTR_NOT_NULL_FATAL(line);
  char *costs = strstr(line, "\"result\":[[");
  CU_ASSERT_PTR_NOT_NULL_FATAL(costs);
  char *end = strchr(costs, ']');
  CU_ASSERT_PTR_NOT_NULL_FATAL(end);
  const char *repl[] = {"\"result\":[[0,0,0", "\"result\":[[1e-3,0.0,1e-3", "\"result\":[[0"};
  FILE *f = fopen(path, "a");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  for (int i = 0; i < 3; i++) fprintf(f, "%.*s%s%s\n", (int)(costs - line), line, repl[i], end);
  fclose(f);
  tsl_record back;
  char one[4096];
  snprintf(one, sizeof one, "%.*s%s%s", (int)(costs - line), line, repl[1], end);
  CU_ASSERT_EQUAL(tsl_record_from_json(one, &back), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "result[0][1]"));
  free(line);
  tsl_records *file = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&file), TSL_OK);
  CU_ASSERT_EQUAL(tsl_records_load(file, path, true, NULL), TSL_OK);
  CU_ASSERT_EQUAL(file->n, 1); /* the good record only */
  CU_ASSERT_EQUAL(file->skipped, 3);
  const tsl_record *best = NULL;
  tsl_match_kind m;
  CU_ASSERT_EQUAL(tsl_records_best(file, "host", "w", NULL, 0, &best, &m), TSL_OK);
  CU_ASSERT(best && best->config.values[0] == 4);
  CU_ASSERT_EQUAL(db->n, 1);
  /* an error record needs no costs */
  make_record(&bad, "host", "w", "t", 1, 2, 0.0, 3);
  CU_ASSERT_EQUAL(tsl_record_check(&bad), TSL_OK);
  tsl_records_free(file);
  tsl_records_free(db);
  unlink(path);
  free(path);
}

/* Saving records (tunecli records merge / pick-best) replaces the file's contents, not
 * what its name stands for: through a symlink its target gets the records and the link
 * stays a link; a FIFO stays a FIFO and its reader gets them; the name choice itself
 * (tsl_file_replace_target) for a new file, a regular one, a link, a dangling link. */
static void test_records_save_keeps_symlinks_and_fifos(void) {
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  make_record(&r, "host", "w", "t", 1, 1, 3e-3, 0);
  tsl_records_add(db, &r);
  char *target = temp_path("save_target"), *link_path = temp_path("save_link"), *fifo = temp_path("save_fifo");
  FILE *f = fopen(target, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("old\n", f);
  fclose(f);
  unlink(link_path);
  CU_ASSERT_EQUAL_FATAL(symlink(target, link_path), 0);
  CU_ASSERT_EQUAL(tsl_records_save(db, link_path), TSL_OK);
  struct stat st;
  CU_ASSERT(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
  tsl_records *back = NULL;
  tsl_records_new(&back);
  CU_ASSERT_EQUAL(tsl_records_load(back, target, true, NULL), TSL_OK);
  CU_ASSERT_EQUAL(back->n, 1);
  tsl_records_free(back);
  char out[4096];
  bool in_place = true;
  CU_ASSERT_EQUAL(tsl_file_replace_target(link_path, out, sizeof out, &in_place), TSL_OK);
  CU_ASSERT(!in_place);
  char *real = realpath(target, NULL);
  CU_ASSERT(real && strcmp(out, real) == 0);
  free(real);
  CU_ASSERT_EQUAL(tsl_file_replace_target(target, out, sizeof out, &in_place), TSL_OK);
  CU_ASSERT(!in_place && strcmp(out, target) == 0);
  unlink(target); /* the link dangles: written in place, through the link */
  CU_ASSERT_EQUAL(tsl_file_replace_target(link_path, out, sizeof out, &in_place), TSL_OK);
  CU_ASSERT(in_place && strcmp(out, link_path) == 0);
  CU_ASSERT_EQUAL(tsl_file_replace_target(target, out, sizeof out, &in_place), TSL_OK); /* a new file */
  CU_ASSERT(!in_place && strcmp(out, target) == 0);
  CU_ASSERT_EQUAL(tsl_file_replace_target(target, out, 4, &in_place), TSL_ERR_INVALID);
  /* the FIFO's reader open (non-blocking) first, so the save's open never waits; a save
   * that renamed over the FIFO would leave it empty, not hang */
  unlink(fifo);
  CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  CU_ASSERT_FATAL(rd >= 0);
  CU_ASSERT_EQUAL(tsl_records_save(db, fifo), TSL_OK);
  char got[4096];
  ssize_t n = read(rd, got, sizeof got);
  close(rd);
  char *line = tsl_record_to_json(&r);
  CU_ASSERT_EQUAL(n, (ssize_t)strlen(line) + 1);
  free(line);
  CU_ASSERT(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
  unlink(fifo);
  unlink(link_path);
  tsl_records_free(db);
  free(target);
  free(link_path);
  free(fifo);
}

static void test_records_merge_keeps_best(void) {
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  make_record(&r, "host", "w", "t", 1, 1, 3e-3, 0);
  tsl_records_add(db, &r);
  make_record(&r, "host", "w", "t", 1, 1, 0, TSL_MEASURE_RUNTIME); /* same point, failed elsewhere */
  tsl_records_add(db, &r);
  make_record(&r, "host", "w", "t", 1, 1, 1e-3, 0); /* same point, faster run */
  tsl_records_add(db, &r);
  make_record(&r, "host", "w", "t", 1, 4, 2e-3, 0);
  tsl_records_add(db, &r);
  make_record(&r, "host", "w", "t", 1, 8, 0, TSL_MEASURE_WRONG_ANSWER);
  tsl_records_add(db, &r);
  char *path = temp_path("merge");
  CU_ASSERT_EQUAL(tsl_records_save(db, path), TSL_OK);
  tsl_records *m = NULL;
  tsl_records_new(&m);
  CU_ASSERT_EQUAL(tsl_records_load(m, path, true, NULL), TSL_OK);
  CU_ASSERT_EQUAL(m->n, 5);
  tsl_records_dedupe(m);
  CU_ASSERT_EQUAL_FATAL(m->n, 3);
  CU_ASSERT_EQUAL(m->recs[0].config.values[0], 1);
  CU_ASSERT_DOUBLE_EQUAL(m->recs[0].costs[0], 1e-3, 1e-12);
  tsl_records_pick_best(m);
  CU_ASSERT_EQUAL_FATAL(m->n, 1);
  CU_ASSERT_DOUBLE_EQUAL(tsl_record_cost(&m->recs[0]), 0.99e-3, 1e-12); /* its fastest sample */
  /* a record's cost is its fastest sample: a preempted sample does not count */
  m->recs[0].ncosts = 3;
  m->recs[0].costs[0] = 3e-3;
  m->recs[0].costs[1] = 1e-3;
  m->recs[0].costs[2] = 9e-3;
  CU_ASSERT_DOUBLE_EQUAL(tsl_record_cost(&m->recs[0]), 1e-3, 1e-12);
  tsl_records_free(m);
  tsl_records_free(db);
  unlink(path);
  free(path);
}

static void test_records_best_exact_then_family_never_other(void) {
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  make_record(&r, "x86-64-avx2 -mcpu=znver3", "w", "t", 1, 1, 1e-6, 0); /* another family: fastest */
  tsl_records_add(db, &r);
  make_record(&r, "host -mcpu=znver3", "w_other_shape", "t", 1, 2, 1e-6, 0);
  tsl_records_add(db, &r);
  make_record(&r, "host -mcpu=znver3 -device=tcp://10.0.0.1:9090", "w", "t", 1, 4, 3e-3, 0);
  tsl_records_add(db, &r);
  const tsl_record *best = NULL;
  tsl_match_kind m;
  CU_ASSERT_EQUAL(tsl_records_best(db, "host -mcpu=znver3", "w", NULL, 0, &best, &m), TSL_OK);
  CU_ASSERT_EQUAL(m, TSL_MATCH_FAMILY);
  CU_ASSERT_EQUAL_FATAL(best != NULL, 1);
  CU_ASSERT_EQUAL(best->config.values[0], 4);
  make_record(&r, "host -mcpu=znver3", "w", "t", 1, 8, 5e-3, 0); /* exact, slower: still preferred */
  tsl_records_add(db, &r);
  CU_ASSERT_EQUAL(tsl_records_best(db, "host -mcpu=znver3", "w", NULL, 0, &best, &m), TSL_OK);
  CU_ASSERT_EQUAL(m, TSL_MATCH_EXACT);
  CU_ASSERT_EQUAL(best->config.values[0], 8);
  CU_ASSERT_EQUAL(tsl_records_best(db, "host -mcpu=znver5", "w", NULL, 0, &best, &m), TSL_ERR_NOT_FOUND);
  CU_ASSERT_EQUAL(m, TSL_MATCH_NONE);
  CU_ASSERT_EQUAL(tsl_records_best(db, "host -mcpu=znver3", "w", NULL, 2, &best, &m), TSL_ERR_NOT_FOUND);
  char fam[64];
  CU_ASSERT_STRING_EQUAL(tsl_target_family("x86-64-avx2 -mcpu=znver3 -device=tcp://h:1", fam, sizeof fam),
                         "x86-64-avx2");
  CU_ASSERT_STRING_EQUAL(tsl_target_family("host -mcpu=znver3 -device=tcp://h:1", fam, sizeof fam),
                         "host -mcpu=znver3");
  tsl_records_free(db);
}

/* tsl_records_best_rank with a space: an invalid config never hides a valid slower one;
 * the rank says exact target (below 8) or family. */
static void test_records_best_rank_skips_configs_outside_space(void) {
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  make_record(&r, "host -mcpu=znver3", "w", "t", 1, 8, 1e-6, 0); /* fastest, tile 8 not in the space */
  tsl_records_add(db, &r);
  make_record(&r, "host -mcpu=znver3 -device=tcp://h:1", "w", "t", 1, 4, 2e-3, 0); /* family */
  tsl_records_add(db, &r);
  tsl_config_space space;
  memset(&space, 0, sizeof space);
  const int64_t tiles[] = {1, 2, 4}, vec[] = {0, 1};
  CU_ASSERT_EQUAL_FATAL(tsl_space_add_knob(&space, "tile", TSL_KNOB_SPLIT, 3, tiles), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_space_add_knob(&space, "vec", TSL_KNOB_ANNOTATE, 2, vec), TSL_OK);
  const tsl_record *best = NULL;
  int rank = tsl_records_best_rank(db, "host -mcpu=znver3", "w", "t", 1, NULL, &best);
  CU_ASSERT(rank >= 0 && rank < 8);
  CU_ASSERT_EQUAL_FATAL(best != NULL, 1);
  CU_ASSERT_EQUAL(best->config.values[0], 8);
  rank = tsl_records_best_rank(db, "host -mcpu=znver3", "w", "t", 1, &space, &best);
  CU_ASSERT(rank >= 8 && rank < 16);
  CU_ASSERT_EQUAL_FATAL(best != NULL, 1);
  CU_ASSERT_EQUAL(best->config.values[0], 4);
  CU_ASSERT_EQUAL(tsl_records_best_rank(db, "host -mcpu=znver3", "w", "other", 1, &space, &best), -1);
  CU_ASSERT_PTR_NULL(best);
  tsl_records_free(db);
}

/* C11 (class 17): a conv whose exact shape has no record, while records exist for
 * other shapes and targets, stale spaces and invalid configs: the default schedule, a
 * one-line warning naming the key, never a borrowed config. */
static void test_C11_lookup_never_borrows_other_target_or_shape(void) {
  tsl_arena *a = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(a);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  char tstr[192];
  tsl_target_str(&host, tstr, sizeof tstr);
  const int64_t d[] = {1, 32, 512, 512}, wt[] = {32, 32, 3, 3};
  const int64_t *shapes[] = {d, wt};
  const int nd[] = {4, 4};
  tsl_dsl_param_value p[] = {tsl_dsl_int_param("pad_top", 1), tsl_dsl_int_param("pad_left", 1),
                             tsl_dsl_int_param("pad_bottom", 1), tsl_dsl_int_param("pad_right", 1)};
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(&w, "conv2d_nchw", 2, shapes, nd, 4, p), TSL_OK);
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(&w, &key), TSL_OK);
  /* the template's real space, to forge records that would match if borrowed */
  const tsl_template *tpl = tsl_template_find("conv2d_nchw.tile");
  tsl_tuner_register_templates();
  tpl = tsl_template_find("conv2d_nchw.tile");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  tsl_te_program *prog = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_instantiate(&w, &prog), TSL_OK);
  tsl_config_space sp;
  CU_ASSERT_EQUAL_FATAL(tpl->space(prog, &host, &sp), TSL_OK);
  uint64_t h = tsl_space_hash(tpl->name, tpl->version, tpl->op, &sp);
  tsl_config dflt;
  CU_ASSERT_EQUAL_FATAL(tpl->default_config(prog, &host, &sp, &dflt), TSL_OK);
  tsl_config odd; /* a valid config different from the default */
  CU_ASSERT_EQUAL_FATAL(tsl_config_from_index(&sp, 1, &odd), TSL_OK);
  CU_ASSERT_NOT_EQUAL_FATAL(tsl_config_index(&sp, &odd), tsl_config_index(&sp, &dflt));

  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  const char *other_key = "conv2d_nchw(data:f32[1,32,56,56],weight:f32[32,32,3,3];dilation_h=1,dilation_w=1,"
                          "pad_bottom=1,pad_left=1,pad_right=1,pad_top=1,stride_h=1,stride_w=1)";
  struct {
    const char *target, *key;
    uint64_t hash;
    int nknobs;
    int64_t v0;
  } forged[] = {
      {"x86-64-avx512", key, h, sp.nknobs, odd.values[0]},        /* another target */
      {"armv8", key, h, sp.nknobs, odd.values[0]},                /* another arch */
      {tstr, other_key, h, sp.nknobs, odd.values[0]},             /* another shape */
      {tstr, key, h ^ 1, sp.nknobs, odd.values[0]},               /* another template space: stale */
      {tstr, key, h, 0, 0},                                       /* empty config */
      {tstr, key, h, sp.nknobs, 12345},                           /* a value not in the space */
  };
  for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
    memset(&r, 0, sizeof r);
    snprintf(r.target, sizeof r.target, "%s", forged[i].target);
    snprintf(r.workload, sizeof r.workload, "%s", forged[i].key);
    snprintf(r.template_name, sizeof r.template_name, "%s", tpl->name);
    snprintf(r.algorithm, sizeof r.algorithm, "%s", tpl->name);
    r.space_hash = forged[i].hash;
    r.nknobs = forged[i].nknobs;
    r.config = odd;
    r.config.nknobs = forged[i].nknobs;
    r.config.values[0] = forged[i].v0;
    r.ncosts = 1;
    r.costs[0] = 1e-9;
    tsl_records_add(db, &r);
  }
  char *warnbuf = NULL;
  size_t warnlen = 0;
  FILE *warn = open_memstream(&warnbuf, &warnlen);
  tsl_te_program *chosen = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule(db, &host, &w, warn, &chosen, &s, &info), TSL_OK);
  fclose(warn);
  CU_ASSERT_FALSE(info.tuned);
  CU_ASSERT_EQUAL(info.match, TSL_MATCH_NONE);
  char dstr[512];
  CU_ASSERT_STRING_EQUAL(info.config_str, tsl_config_str(&sp, &dflt, dstr, sizeof dstr));
  /* exactly one line, naming the key and the default */
  CU_ASSERT_PTR_NOT_NULL(strstr(warnbuf, key));
  CU_ASSERT_PTR_NOT_NULL(strstr(warnbuf, "default schedule conv2d_nchw.tile"));
  CU_ASSERT_PTR_EQUAL(strchr(warnbuf, '\n'), warnbuf + warnlen - 1);
  tsl_schedule_free(s);
  s = NULL;
  free(warnbuf);

  /* the exact record, once present, is used and nothing is printed */
  memset(&r, 0, sizeof r);
  snprintf(r.target, sizeof r.target, "%s", tstr);
  snprintf(r.workload, sizeof r.workload, "%s", key);
  snprintf(r.template_name, sizeof r.template_name, "%s", tpl->name);
  snprintf(r.algorithm, sizeof r.algorithm, "%s", tpl->name);
  r.space_hash = h;
  r.nknobs = sp.nknobs;
  r.config = odd;
  r.ncosts = 1;
  r.costs[0] = 1e-3;
  tsl_records_add(db, &r);
  warnbuf = NULL;
  warn = open_memstream(&warnbuf, &warnlen);
  CU_ASSERT_EQUAL(tsl_dispatch_schedule(db, &host, &w, warn, &chosen, &s, &info), TSL_OK);
  fclose(warn);
  CU_ASSERT_TRUE(info.tuned);
  CU_ASSERT_EQUAL(info.match, TSL_MATCH_EXACT);
  CU_ASSERT_STRING_EQUAL(info.config_str, tsl_config_str(&sp, &odd, dstr, sizeof dstr));
  CU_ASSERT_EQUAL(warnlen, 0);
  tsl_schedule_free(s);
  free(warnbuf);
  tsl_records_free(db);
  free(key);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
}

/* A record of one algorithm of the workload's family, with the algorithm's default
 * config (a valid point of its current space). */
static void forge_algo_record(const tsl_target *t, const tsl_workload *w, const char *algo_name, double cost,
                              tsl_record *r) {
  tsl_algo_choice a[16];
  int n = tsl_algorithms_for(w, a, 16, NULL);
  memset(r, 0, sizeof *r);
  for (int i = 0; i < n && i < 16; i++) {
    if (strcmp(a[i].name, algo_name) != 0) continue;
    tsl_te_program *p = NULL;
    tsl_config_space sp;
    CU_ASSERT_EQUAL_FATAL(tsl_workload_instantiate(&a[i].op_workload, &p), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(a[i].tpl->space(p, t, &sp), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(a[i].tpl->default_config(p, t, &sp, &r->config), TSL_OK);
    r->space_hash = tsl_space_hash(a[i].tpl->name, a[i].tpl->version, a[i].tpl->op, &sp);
    r->nknobs = sp.nknobs;
    snprintf(r->template_name, sizeof r->template_name, "%.95s", a[i].tpl->name);
    snprintf(r->algorithm, sizeof r->algorithm, "%.95s", a[i].name);
  }
  CU_ASSERT_NOT_EQUAL(r->template_name[0], '\0');
  tsl_target_str(t, r->target, sizeof r->target);
  char *key = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_key_of(w, &key), TSL_OK);
  snprintf(r->workload, sizeof r->workload, "%s", key);
  free(key);
  r->ncosts = 1;
  r->costs[0] = cost;
}

/* A padded 3x3 conv layer in NCHW[8]c (1x16x14x14 -> 16) that every algorithm of the
 * family applies to (direct, im2col, Winograd F(2/4/6,3)); and the host target. */
static void conv3x3_workload(tsl_target *host, tsl_workload *w) {
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", host), TSL_OK);
  const int64_t data[] = {1, 2, 14, 14, 8}, weight[] = {2, 2, 3, 3, 8, 8}, bias[] = {2, 8};
  const int64_t *shapes[] = {data, weight, bias};
  const int nd[] = {5, 6, 2};
  tsl_dsl_param_value p[] = {tsl_dsl_int_param("pad_top", 1), tsl_dsl_int_param("pad_left", 1),
                             tsl_dsl_int_param("pad_bottom", 1), tsl_dsl_int_param("pad_right", 1)};
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(w, "conv2d_nchwc_bias", 3, shapes, nd, 4, p), TSL_OK);
}

/* The graph runs a layer's own operator on its own tensors: tsl_dispatch_schedule never
 * hands back another operator (Winograd needs transformed weights), even when that
 * algorithm's record is the fastest; tsl_dispatch_schedule_any does, and says so. */
static void test_dispatch_own_operator_unless_any_requested(void) {
  tsl_arena *ar = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(ar);
  tsl_target host;
  tsl_workload w;
  conv3x3_workload(&host, &w);
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  forge_algo_record(&host, &w, "conv2d_nchwc_bias.winograd_f4", 1e-4, &r);
  tsl_records_add(db, &r);
  forge_algo_record(&host, &w, "conv2d_nchwc_bias.direct", 5e-4, &r);
  tsl_records_add(db, &r);
  tsl_te_program *prog = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_TRUE(info.tuned);
  CU_ASSERT_STRING_EQUAL(info.algorithm, "conv2d_nchwc_bias.direct");
  CU_ASSERT_STRING_EQUAL(info.op_workload.op, "conv2d_nchwc_bias");
  tsl_schedule_free(s);
  s = NULL;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_STRING_EQUAL(info.algorithm, "conv2d_nchwc_bias.winograd_f4");
  CU_ASSERT_STRING_EQUAL(info.op_workload.op, "conv2d_winograd_f4");
  if (prog) CU_ASSERT_EQUAL(prog->inputs[1]->buf->shape[0], 6);
  tsl_schedule_free(s);
  tsl_records_free(db);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

/* An exact tie of cost (two in-model samples of the same nanoseconds) goes to the record
 * written first, whichever algorithm comes first in the family's list: the in-situ pass
 * chooses the first least of its candidates in the order it writes them, and a compile from
 * its records must run that one. */
static void test_dispatch_tie_goes_to_the_record_written_first(void) {
  tsl_arena *ar = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(ar);
  tsl_target host;
  tsl_workload w;
  conv3x3_workload(&host, &w);
  /* both orders of writing; the algorithms' own order in the family list is fixed */
  const char *names[2] = {"conv2d_nchwc_bias.winograd_f6", "conv2d_nchwc_bias.winograd_f4"};
  for (int first = 0; first < 2; first++) {
    tsl_records *db = NULL;
    tsl_records_new(&db);
    tsl_record r;
    forge_algo_record(&host, &w, "conv2d_nchwc_bias.direct", 9e-6, &r);
    tsl_records_add(db, &r);
    forge_algo_record(&host, &w, names[first], 3.917e-6, &r);
    tsl_records_add(db, &r);
    forge_algo_record(&host, &w, names[1 - first], 3.917e-6, &r);
    tsl_records_add(db, &r);
    tsl_te_program *prog = NULL;
    tsl_schedule *s = NULL;
    tsl_dispatch_info info;
    CU_ASSERT_EQUAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
    CU_ASSERT_STRING_EQUAL(info.algorithm, names[first]);
    tsl_schedule_free(s);
    tsl_records_free(db);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

/* A layer only one algorithm can compute (a channel-scaled 1x1 conv: GEMM 1x1 only,
 * models/compile_conv.c) takes that algorithm's best record even when another algorithm's
 * record is faster, and the default of that algorithm (untuned) when it has none. */
static void test_dispatch_restricted_to_one_conv_algo(void) {
  tsl_arena *ar = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(ar);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  const int64_t data[] = {1, 2, 14, 14, 8}, weight[] = {2, 2, 1, 1, 8, 8}, bias[] = {2, 8};
  const int64_t *shapes[] = {data, weight, bias};
  const int nd[] = {5, 6, 2};
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(&w, "conv2d_nchwc_bias", 3, shapes, nd, 0, NULL), TSL_OK);
  tsl_records *db = NULL;
  tsl_records_new(&db);
  tsl_record r;
  forge_algo_record(&host, &w, "conv2d_nchwc_bias.im2col", 1e-4, &r);
  tsl_records_add(db, &r);
  tsl_te_program *prog = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  /* no GEMM 1x1 record: its default, untuned, although an im2col record exists */
  CU_ASSERT_EQUAL(tsl_dispatch_schedule_conv_algo(db, &host, &w, TSL_CONV2D_GEMM_1X1, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_FALSE(info.tuned);
  CU_ASSERT_STRING_EQUAL(info.algorithm, "conv2d_nchwc_bias.gemm1x1");
  CU_ASSERT_EQUAL(info.only_algo, TSL_CONV2D_GEMM_1X1);
  tsl_schedule_free(s);
  s = NULL;
  forge_algo_record(&host, &w, "conv2d_nchwc_bias.gemm1x1", 5e-4, &r);
  tsl_records_add(db, &r);
  CU_ASSERT_EQUAL(tsl_dispatch_schedule_conv_algo(db, &host, &w, TSL_CONV2D_GEMM_1X1, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_TRUE(info.tuned);
  CU_ASSERT_STRING_EQUAL(info.algorithm, "conv2d_nchwc_bias.gemm1x1");
  CU_ASSERT_DOUBLE_EQUAL(info.cost, 5e-4, 1e-12);
  tsl_schedule_free(s);
  s = NULL;
  /* unrestricted: the faster im2col record wins */
  CU_ASSERT_EQUAL(tsl_dispatch_schedule_any(db, &host, &w, NULL, &prog, &s, &info), TSL_OK);
  CU_ASSERT_STRING_EQUAL(info.algorithm, "conv2d_nchwc_bias.im2col");
  CU_ASSERT_EQUAL(info.only_algo, -1);
  tsl_schedule_free(s);
  s = NULL;
  /* an algorithm that does not apply (Winograd needs a 3x3 kernel): not found */
  CU_ASSERT_EQUAL(tsl_dispatch_schedule_conv_algo(db, &host, &w, TSL_CONV2D_WINOGRAD_F4, NULL, &prog, &s, &info),
                  TSL_ERR_NOT_FOUND);
  tsl_clear_error();
  tsl_schedule_free(s);
  tsl_records_free(db);
  tsl_arena_set_current(prev);
  tsl_arena_free(ar);
}

/* Runs a shell command, returns its exit status and (malloc'd) stdout. */
static int run_cmd(const char *cmd, char **out) {
  FILE *f = popen(cmd, "r");
  if (!f) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len < 2) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
  }
  if (buf) buf[len] = '\0';
  *out = buf;
  return pclose(f);
}

static void test_tunecli_records_merge_pick_best_show(void) {
  char *a = temp_path("cli_a"), *b = temp_path("cli_b"), *m = temp_path("cli_m"), *p = temp_path("cli_p");
  tsl_record r;
  make_record(&r, "host", "w", "t", 1, 1, 3e-3, 0);
  tsl_record_append(a, &r);
  make_record(&r, "host", "w", "t", 1, 4, 2e-3, 0);
  tsl_record_append(a, &r);
  make_record(&r, "host", "w", "t", 1, 1, 1e-3, 0); /* same config, faster, in the other file */
  tsl_record_append(b, &r);
  FILE *f = fopen(b, "a");
  fputs("{\"broken\": \n", f);
  fclose(f);
  char cmd[1024], *out = NULL;
  snprintf(cmd, sizeof cmd, "%s records merge %s %s %s 2>/dev/null", TSL_TUNECLI_PATH, m, a, b);
  CU_ASSERT_EQUAL(run_cmd(cmd, &out), 0);
  free(out);
  tsl_records *db = NULL;
  tsl_records_new(&db);
  CU_ASSERT_EQUAL(tsl_records_load(db, m, true, NULL), TSL_OK);
  CU_ASSERT_EQUAL(db->n, 2);
  for (int i = 0; i < db->n; i++)
    if (db->recs[i].config.values[0] == 1) CU_ASSERT_DOUBLE_EQUAL(db->recs[i].costs[0], 1e-3, 1e-12);
  tsl_records_free(db);
  snprintf(cmd, sizeof cmd, "%s records pick-best %s %s", TSL_TUNECLI_PATH, m, p);
  CU_ASSERT_EQUAL(run_cmd(cmd, &out), 0);
  free(out);
  snprintf(cmd, sizeof cmd, "%s records show %s 2>&1", TSL_TUNECLI_PATH, b);
  CU_ASSERT_EQUAL(run_cmd(cmd, &out), 0);
  if (out) {
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 records (1 successful), 1 lines skipped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, ":2: skipped"));
  }
  free(out);
  snprintf(cmd, sizeof cmd, "%s records best %s", TSL_TUNECLI_PATH, p);
  CU_ASSERT_EQUAL(run_cmd(cmd, &out), 0);
  if (out) CU_ASSERT_PTR_NOT_NULL(strstr(out, "tile=1,vec=1 | 990.000 us"));
  free(out);
  const char *paths[] = {a, b, m, p};
  for (int i = 0; i < 4; i++) {
    unlink(paths[i]);
    free((void *)paths[i]);
  }
}

void tsl_tests_tuner_records(void) {
  CU_pSuite s = CU_add_suite("tuner_records", NULL, NULL);
  CU_add_test(s, "test_workload_key_defaults_and_order_canonical", test_workload_key_defaults_and_order_canonical);
  CU_add_test(s, "test_workload_key_rejects_bad_input", test_workload_key_rejects_bad_input);
  CU_add_test(s, "test_space_index_roundtrip_and_hash", test_space_index_roundtrip_and_hash);
  CU_add_test(s, "test_record_json_roundtrip", test_record_json_roundtrip);
  CU_add_test(s, "test_records_corrupt_file_loses_no_good_line", test_records_corrupt_file_loses_no_good_line);
  CU_add_test(s, "test_records_merge_keeps_best", test_records_merge_keeps_best);
  CU_add_test(s, "test_records_save_keeps_symlinks_and_fifos", test_records_save_keeps_symlinks_and_fifos);
  CU_add_test(s, "test_records_roundtrip_stage_epilogue_key", test_records_roundtrip_stage_epilogue_key);
  CU_add_test(s, "test_record_with_zero_or_invalid_cost_never_wins", test_record_with_zero_or_invalid_cost_never_wins);
  CU_add_test(s, "test_records_best_exact_then_family_never_other", test_records_best_exact_then_family_never_other);
  CU_add_test(s, "test_records_best_rank_skips_configs_outside_space",
              test_records_best_rank_skips_configs_outside_space);
  CU_add_test(s, "test_tunecli_records_merge_pick_best_show", test_tunecli_records_merge_pick_best_show);
  CU_add_test(s, "test_dispatch_own_operator_unless_any_requested", test_dispatch_own_operator_unless_any_requested);
  CU_add_test(s, "test_dispatch_restricted_to_one_conv_algo", test_dispatch_restricted_to_one_conv_algo);
  CU_add_test(s, "test_dispatch_tie_goes_to_the_record_written_first", test_dispatch_tie_goes_to_the_record_written_first);
  CU_add_test(s, "test_C11_lookup_never_borrows_other_target_or_shape",
              test_C11_lookup_never_borrows_other_target_or_shape);
}
