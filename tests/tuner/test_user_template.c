/* Users' templates (ops/user/user_template.h): a DSL op's schedule block searched as a
 * template. Every sampled config of two blocks (seeded, >= 50 each) is applied, JIT-built
 * and run, and its outputs compared with the direct interpretation of the TE (float64,
 * dsl/te_interp.h) and with a naive loop written here; errors that need the shapes are
 * refused at the knob's or step's line:column; the tuner's records of a user template
 * are what the dispatcher (compiling with records) applies afterwards. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/build.h"
#include "dsl/sched_block.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "ops/registry.h"
#include "ops/user/user_template.h"
#include "runtime/module.h"
#include "tessel/tensor.h"
#include "tuner/dispatch.h"
#include "tuner/tune.h"
#include "tuner_tests.h"

/* C = A x B with six knobs: 7 x 3 x 3 x 2 x 3 x 2 = 756 configs at 24x20x40 */
static const char mm_text[] = "op utt_mm(A: f32[M, K], B: f32[K, N])\n"
                              "  C[i, j] = sum(k: A[i, k] * B[k, j])\n"
                              "  schedule\n"
                              "    knob ti = split(C, i, max = 16)\n"
                              "    knob tj = split(C, j, [16, 4, 8], divide = false)\n"
                              "    knob tk = [1, 2, 4]\n"
                              "    knob order = reorder([i.outer, j.outer, k.outer, k.inner, i.inner, j.inner],\n"
                              "                         [i.outer, j.outer, i.inner, k.outer, k.inner, j.inner])\n"
                              "    knob ann = annotate(vectorize, unroll)\n"
                              "    knob par = annotate(parallel)\n"
                              "    split(C, i, ti)\n"
                              "    split(C, j, tj)\n"
                              "    split(C, k, nparts = tk)\n"
                              "    reorder(C, order)\n"
                              "    annotate(C, j.inner, ann)\n"
                              "    parallel(C, i.outer) if par\n";

/* s[i] = sum over j of exp(X[i, j]), the exp stage kept, maybe at s's rows: 4 x 4 x 2 x 2
 * = 64 configs at 6x50 */
static const char rowexp_text[] = "op utt_rowexp(X: f32[M, N])\n"
                                  "  e[i, j] = exp(X[i, j])\n"
                                  "  s[i] = sum(j: e[i, j])\n"
                                  "  schedule\n"
                                  "    knob te = split(e, j, [8, 1, 4, 16], divide = false)\n"
                                  "    knob tj = split(s, j, max = 16)\n"
                                  "    knob at = [0, 1]\n"
                                  "    knob v = annotate(vectorize)\n"
                                  "    compute_root(e)\n"
                                  "    split(e, j, te)\n"
                                  "    vectorize(e, j.inner) if v\n"
                                  "    split(s, j, tj)\n"
                                  "    compute_at(e, s, i) if at\n";

/* Parses text as file `file`, registers its one op and its template (the module is kept
 * for the process, as the CLI keeps it). */
static const tsl_template *register_text(const char *text, const char *file) {
  tsl_dsl_module *m = NULL;
  const tsl_op_info *info = NULL;
  const tsl_template *tpl = NULL;
  tsl_status st = tsl_dsl_parse(text, file, &m);
  if (st == TSL_OK) st = tsl_op_register_user(tsl_dsl_module_op(m, 0), tsl_dsl_op_text(tsl_dsl_module_op(m, 0)), &info);
  if (st == TSL_OK) st = tsl_user_dsl_template(tsl_dsl_module_op(m, 0), &tpl);
  if (st != TSL_OK) printf("\n  %s: %s\n", file, tsl_last_error());
  return tpl;
}

static uint64_t next_rand(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The naive loops, in double. */
static void naive_mm(const float *A, const float *B, double *C, int64_t M, int64_t K, int64_t N) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) acc += (double)A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
}

static void naive_rowexp(const float *X, double *s, int64_t M, int64_t N) {
  for (int64_t i = 0; i < M; i++) {
    double acc = 0;
    for (int64_t j = 0; j < N; j++) acc += exp((double)X[i * N + j]);
    s[i] = acc;
  }
}

/* Every config of a sample of n (all of them when the space is smaller) applied, built,
 * run and checked against the interpreter and the naive loop `naive` (its outputs in
 * want[]). Returns how many were checked. */
static int check_sampled_configs(const tsl_template *tpl, const tsl_te_program *p, tsl_jit *jit, int n,
                                 const double *want, int64_t nout) {
  const tsl_target *t = tsl_jit_target(jit);
  tsl_config_space space;
  CU_ASSERT_EQUAL_FATAL(tpl->space(p, t, &space), TSL_OK);
  int64_t size = tsl_space_size(&space);
  CU_ASSERT_FATAL(size >= n || size >= 50);
  tsl_tensor *args[3] = {NULL, NULL, NULL}, *ref[3] = {NULL, NULL, NULL};
  int nargs = p->ninputs + p->noutputs;
  for (int i = 0; i < nargs; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new((tsl_dtype){TSL_DT_FLOAT, 32}, b->ndim, b->shape, &args[i]), TSL_OK);
    tsl_status st = i < p->ninputs ? tsl_tensor_fill_random(args[i], 7 + (uint64_t)i, -1.0, 1.0)
                                   : tsl_tensor_new((tsl_dtype){TSL_DT_FLOAT, 32}, b->ndim, b->shape, &ref[i]);
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_te_interpret(p, (const tsl_tensor *const *)args, ref + p->ninputs), TSL_OK);
  /* the interpreter against the naive loop first: two independent references agree */
  for (int64_t e = 0; e < nout; e++)
    CU_ASSERT(fabs(tsl_tensor_get_f64(ref[nargs - 1], e) - want[e]) <= 1e-5 * fmax(1.0, fabs(want[e])));
  uint64_t seed = 16;
  int checked = 0;
  int64_t take = size < n ? size : n;
  for (int64_t c = 0; c < take; c++) {
    int64_t idx = size <= n ? c : (int64_t)(next_rand(&seed) % (uint64_t)size);
    tsl_config cfg;
    CU_ASSERT_EQUAL_FATAL(tsl_config_from_index(&space, idx, &cfg), TSL_OK);
    char cs[256];
    tsl_config_str(&space, &cfg, cs, sizeof cs);
    tsl_schedule *s = NULL;
    tsl_module *m = NULL;
    const tsl_kernel *k = NULL;
    tsl_status st = tpl->apply(p, t, &space, &cfg, &s);
    if (st == TSL_OK) st = tsl_module_new(&m);
    if (st == TSL_OK) st = tsl_build(s, p->name, jit, m, NULL, NULL);
    if (st == TSL_OK) st = tsl_module_get_kernel(m, p->name, &k);
    if (st == TSL_OK) st = tsl_kernel_call_tensors(k, args, nargs);
    if (st != TSL_OK) printf("\n  %s config %s: %s\n", p->name, cs, tsl_last_error());
    CU_ASSERT_EQUAL(st, TSL_OK);
    double worst = 0;
    for (int64_t e = 0; st == TSL_OK && e < nout; e++) {
      double got = tsl_tensor_get_f64(args[nargs - 1], e), r = tsl_tensor_get_f64(ref[nargs - 1], e);
      double d = fmax(fabs(got - r), fabs(got - want[e])) / fmax(1.0, fabs(want[e]));
      worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    if (worst > 1e-5) printf("\n  %s config %s: error %g\n", p->name, cs, worst);
    CU_ASSERT(worst <= 1e-5);
    checked += st == TSL_OK && worst <= 1e-5;
    tsl_module_free(m);
    tsl_schedule_free(s);
    /* the output is overwritten by the next config: a stale result would not pass */
    memset(args[nargs - 1]->data, 0xff, (size_t)nout * sizeof(float));
  }
  for (int i = 0; i < 3; i++) {
    tsl_tensor_free(args[i]);
    tsl_tensor_free(ref[i]);
  }
  return checked;
}

static void test_sampled_configs_of_user_templates_match_the_references(void) {
  const tsl_template *mm = register_text(mm_text, "mm.tsl"), *rowexp = register_text(rowexp_text, "rowexp.tsl");
  CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rowexp);
  CU_ASSERT_STRING_EQUAL(mm->name, "utt_mm.dsl");
  CU_ASSERT_EQUAL(tsl_template_find("utt_mm.dsl"), mm);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);

  const int64_t a[] = {24, 20}, b[] = {20, 40}, x[] = {6, 50};
  const int64_t *mm_shapes[] = {a, b}, *x_shapes[] = {x};
  const int nd2[] = {2, 2};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("utt_mm", 2, mm_shapes, nd2, 0, NULL, &p), TSL_OK);
  tsl_config_space space;
  CU_ASSERT_EQUAL_FATAL(mm->space(p, &host, &space), TSL_OK);
  CU_ASSERT_EQUAL(space.nknobs, 6);
  CU_ASSERT_EQUAL(tsl_space_size(&space), 756);
  CU_ASSERT_EQUAL(space.knobs[0].kind, TSL_KNOB_SPLIT);
  CU_ASSERT_EQUAL(space.knobs[0].nvalues, 7); /* 1 2 3 4 6 8 12: divisors of 24 up to 16 */
  CU_ASSERT_EQUAL(space.knobs[0].values[6], 12);
  CU_ASSERT_EQUAL(space.knobs[3].kind, TSL_KNOB_REORDER);
  CU_ASSERT_EQUAL(space.knobs[4].kind, TSL_KNOB_ANNOTATE);
  CU_ASSERT_EQUAL(space.knobs[4].nvalues, 3);
  CU_ASSERT_EQUAL(space.knobs[2].kind, TSL_KNOB_OTHER);
  tsl_config dflt;
  CU_ASSERT_EQUAL(mm->default_config(p, &host, &space, &dflt), TSL_OK);
  CU_ASSERT_EQUAL(dflt.values[0], 1);  /* split by the divisors: 1 */
  CU_ASSERT_EQUAL(dflt.values[1], 16); /* the first written */
  CU_ASSERT_EQUAL(dflt.values[2], 1);
  CU_ASSERT_EQUAL(dflt.values[4], 0);
  double *want = malloc(sizeof(double) * 24 * 40);
  CU_ASSERT_FATAL(want != NULL);
  /* the inputs check_sampled_configs makes (seeds 7 and 8), for the naive loops */
  tsl_tensor *ta = NULL, *tb = NULL, *tx = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new((tsl_dtype){TSL_DT_FLOAT, 32}, 2, a, &ta), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new((tsl_dtype){TSL_DT_FLOAT, 32}, 2, b, &tb), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new((tsl_dtype){TSL_DT_FLOAT, 32}, 2, x, &tx), TSL_OK);
  tsl_tensor_fill_random(ta, 7, -1.0, 1.0);
  tsl_tensor_fill_random(tb, 8, -1.0, 1.0);
  tsl_tensor_fill_random(tx, 7, -1.0, 1.0);
  naive_mm(ta->data, tb->data, want, 24, 20, 40);
  CU_ASSERT(check_sampled_configs(mm, p, jit, 60, want, 24 * 40) == 60);
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("utt_rowexp", 1, x_shapes, nd2, 0, NULL, &p), TSL_OK);
  naive_rowexp(tx->data, want, 6, 50);
  CU_ASSERT(check_sampled_configs(rowexp, p, jit, 64, want, 6) == 64);
  tsl_tensor_free(ta);
  tsl_tensor_free(tb);
  tsl_tensor_free(tx);
  free(want);
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* Errors that need the shapes: at the knob's or the step's line and column. */
static void test_shape_dependent_errors_are_located(void) {
  static const struct {
    const char *text;
    int64_t n;
    const char *want;
  } cases[] = {
      {"op utt_bad1(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n    knob tj = split(out, j, [3, 8])\n"
       "    split(out, j, tj)\n",
       1000, "bad.tsl:4:10: error: knob tj: split factor 3 does not divide the extent 1000 of out.j"},
      {"op utt_bad2(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n    knob tj = split(out, j, [8, 2000], "
       "divide = false)\n    split(out, j, tj)\n",
       1000, "bad.tsl:4:10: error: knob tj: split factor 2000 exceeds the extent 1000 of out.j"},
      {"op utt_bad3(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n    knob tj = split(out, j)\n"
       "    split(out, j, tj)\n",
       720720, "bad.tsl:4:10: error: knob tj: the extent 720720 of out.j has more than 64 divisors"},
      {"op utt_bad4(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n    knob tj = split(out, j, max = 4)\n"
       "    split(out, j, tj)\n    vectorize(out, j.inner)\n",
       1000, "bad.tsl:6:5: error: step vectorize(out, j.inner) does not apply (config tj=1)"},
      /* the default config applies but does not lower: at the step after which it fails */
      {"op utt_bad5(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n    knob tj = split(out, j, [2000, 8])\n"
       "    split(out, j, tj)\n    unroll(out, j.inner)\n",
       4000, "bad.tsl:6:5: error: the default config (tj=2000) fails to lower after this step: unroll: axis j.inner"},
      {"op utt_bad6(X: f32[M, N])\n  out[i, j] = X[i, j] * 2.0\n  schedule\n    vectorize(out, j)\n",
       100, "bad.tsl:4:5: error: the default config fails to lower after this step: vectorize: axis j of stage out"},
      /* a prefix that fails otherwise (an unroll the split below moves away) is not blamed */
      {"op utt_bad7(X: f32[M, N])\n  out[i, j] = X[i, j] * 2.0\n  schedule\n    knob tj = split(out, j, [128, 16])\n"
       "    unroll(out, j)\n    split(out, j, tj)\n    vectorize(out, j.inner)\n",
       4096, "bad.tsl:7:5: error: the default config (tj=128) fails to lower after this step: vectorize: axis j.inner"},
  };
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const tsl_template *tpl = register_text(cases[i].text, "bad.tsl");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
    const int64_t x[] = {2, cases[i].n};
    const int64_t *shapes[] = {x};
    const int nd[] = {2};
    tsl_te_program *p = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate(tpl->op, 1, shapes, nd, 0, NULL, &p), TSL_OK);
    tsl_config_space space;
    CU_ASSERT_EQUAL(tpl->space(p, &host, &space), i >= 3 ? TSL_ERR_SCHEDULE : TSL_ERR_INVALID);
    if (!strstr(tsl_last_error(), cases[i].want)) printf("\n  want '%s', got:\n%s\n", cases[i].want, tsl_last_error());
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), cases[i].want));
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* The tuner searches a user template like a built-in one; its records are what the
 * dispatcher applies afterwards (tunecli --records). */
static void test_user_template_records_apply_afterwards(void) {
  static const char text[] = "op utt_rowmax(X: f32[M, N])\n"
                             "  out[i] = max(j: X[i, j])\n"
                             "  schedule\n"
                             "    knob ti = split(out, i)\n"
                             "    knob tj = split(out, j, max = 8)\n"
                             "    split(out, i, ti)\n"
                             "    split(out, j, tj)\n";
  const tsl_template *tpl = register_text(text, "rowmax.tsl");
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpl);
  char path[] = "/tmp/tessel-user-tpl-XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  const int64_t x[] = {16, 40};
  const int64_t *shapes[] = {x};
  const int nd[] = {2};
  tsl_workload w;
  CU_ASSERT_EQUAL_FATAL(tsl_workload_init(&w, "utt_rowmax", 1, shapes, nd, 0, NULL), TSL_OK);
  tsl_tune_opts o = tsl_tune_opts_default();
  o.trials = 6;
  o.search = TSL_SEARCH_RANDOM;
  o.records_path = path;
  o.measure.time.repeat = 2;
  o.measure.time.min_repeat_ms = 0;
  tsl_tune_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_tune_workload(&host, &w, &o, &res), TSL_OK);
  CU_ASSERT(res.found);
  CU_ASSERT_STRING_EQUAL(res.template_name, "utt_rowmax.dsl");
  CU_ASSERT(res.trials >= 6);
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, path, true, NULL), TSL_OK);
  CU_ASSERT(db->n >= 6);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_dispatch_info info;
  CU_ASSERT_EQUAL(tsl_dispatch_schedule(db, &host, &w, NULL, &p, &s, &info), TSL_OK);
  CU_ASSERT(info.tuned);
  CU_ASSERT_STRING_EQUAL(info.template_name, "utt_rowmax.dsl");
  CU_ASSERT_STRING_EQUAL(info.config_str, res.config_str);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_records_free(db);
  unlink(path);
}

void tsl_tests_tuner_user_template(void) {
  CU_pSuite s = CU_add_suite("tuner_user_template", NULL, NULL);
  CU_add_test(s, "test_sampled_configs_of_user_templates_match_the_references",
              test_sampled_configs_of_user_templates_match_the_references);
  CU_add_test(s, "test_shape_dependent_errors_are_located", test_shape_dependent_errors_are_located);
  CU_add_test(s, "test_user_template_records_apply_afterwards", test_user_template_records_apply_afterwards);
}
