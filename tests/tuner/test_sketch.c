/* Sketch generation (tuner/sketch.h) for operators written in the DSL with no template,
 * as a new user writes them: the space is non-empty, has the rules each operator calls
 * for, and at least 50 sampled candidates per operator (seeded, spread over the sketches)
 * build and give the interpreter's result (dsl/te_interp.h). */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "dsl/parser.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "schedule/lower.h"
#include "tessel/tensor.h"
#include "tuner/sketch.h"
#include "tuner_tests.h"

#define SKETCH_SAMPLES 50

static const char ops_text[] =
    "op sk_matmul(A: f32[M, K], B: f32[K, N])\n"
    "  C[i, j] = sum(k: A[i, k] * B[k, j])\n"
    "op sk_softmax(X: f32[M, N])\n"
    "  mx[i] = max(j: X[i, j])\n"
    "  e[i, j] = exp(X[i, j] - mx[i])\n"
    "  s[i] = sum(j: e[i, j])\n"
    "  out[i, j] = e[i, j] / s[i]\n"
    "op sk_chsum(X: f32[N, C, H, W])\n"
    "  out[c] = sum(n, h, w: X[n, c, h, w])\n"
    "op sk_conv(data: f32[N, C, H, W], weight: f32[K, C, R, S])\n"
    "  padded[n, c, y, x] = select(y >= 1 && y < H + 1 && x >= 1 && x < W + 1,\n"
    "                              data[n, c, y - 1, x - 1], 0.0)\n"
    "    where y < H + 2, x < W + 2\n"
    "  out[n, k, y, x] = sum(c, r, s: padded[n, c, y + r, x + s] * weight[k, c, r, s])\n"
    "    where y < H + 3 - R, x < W + 3 - S\n"
    "op sk_depthwise(data: f32[N, C, H, W], weight: f32[C, R, S])\n"
    "  padded[n, c, y, x] = select(y >= 2 && y < H + 2 && x >= 2 && x < W + 2,\n"
    "                              data[n, c, y - 2, x - 2], 0.0)\n"
    "    where y < H + 4, x < W + 4\n"
    "  out[n, c, y, x] = sum(r, s: padded[n, c, y + r, x + s] * weight[c, r, s])\n"
    "    where y < H + 5 - R, x < W + 5 - S\n";

/* Samples n candidates of p (sketch = seed mod the sketch count), builds each with the
 * host JIT, runs it and compares with the interpreter: floats within 1e-5 of the output's
 * magnitude. Returns how many matched; counts the sketches that used rule `want`. */
static int check_candidates(const tsl_te_program *p, tsl_jit *jit, int n, tsl_sketch_rule want, int *used_want) {
  const tsl_target *t = tsl_jit_target(jit);
  tsl_sketch_list sl;
  CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, t, &sl), TSL_OK);
  CU_ASSERT_FATAL(sl.n >= 1);
  *used_want = 0;
  for (int k = 0; k < sl.n; k++)
    for (int i = 0; i < sl.sketches[k].nstages; i++) *used_want += sl.sketches[k].rule[i] == want;
  int nargs = p->ninputs + p->noutputs;
  tsl_tensor *args[4] = {0}, *ref[4] = {0};
  CU_ASSERT_FATAL(nargs <= 4);
  for (int i = 0; i < nargs; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, b->ndim, b->shape, &args[i]), TSL_OK);
    tsl_status st = i < p->ninputs ? tsl_tensor_fill_random(args[i], 31 + (uint64_t)i, -1.0, 1.0)
                                   : tsl_tensor_new(TSL_DTYPE_F32, b->ndim, b->shape, &ref[i]);
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_te_interpret(p, (const tsl_tensor *const *)args, ref + p->ninputs), TSL_OK);
  int64_t nout = tsl_tensor_numel(ref[nargs - 1]);
  double scale = 1.0;
  for (int64_t e = 0; e < nout; e++) scale = fmax(scale, fabs(tsl_tensor_get_f64(ref[nargs - 1], e)));
  int good = 0;
  for (int c = 0; c < n; c++) {
    const tsl_sketch *sk = &sl.sketches[c % sl.n];
    tsl_schedule *s = NULL;
    tsl_module *m = NULL;
    const tsl_kernel *k = NULL;
    tsl_status st = tsl_sketch_sample(p, t, sk, (uint64_t)c + 1, &s);
    if (st == TSL_OK && getenv("TSL_SKETCH_TRACE")) { /* which candidate a slow or failing build is */
      char *text = tsl_schedule_to_string(s);
      fprintf(stderr, "\n%s candidate %d (sketch %d):\n%s", p->name, c, c % sl.n, text ? text : "");
      free(text);
    }
    if (st == TSL_OK) st = tsl_module_new(&m);
    if (st == TSL_OK) st = tsl_build(s, p->name, jit, m, NULL, NULL);
    if (st == TSL_OK) st = tsl_module_get_kernel(m, p->name, &k);
    memset(args[nargs - 1]->data, 0xff, (size_t)nout * sizeof(float)); /* NaN: every element must be written */
    if (st == TSL_OK) st = tsl_kernel_call_tensors(k, args, nargs);
    double worst = st == TSL_OK ? 0 : INFINITY;
    for (int64_t e = 0; st == TSL_OK && e < nout; e++) {
      double d = fabs(tsl_tensor_get_f64(args[nargs - 1], e) - tsl_tensor_get_f64(ref[nargs - 1], e)) / scale;
      worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    if (!(worst <= 1e-5)) {
      char *text = s ? tsl_schedule_to_string(s) : NULL;
      printf("\n  %s candidate %d (sketch %d): %s, error %g; schedule:\n%s", p->name, c, c % sl.n,
             st == TSL_OK ? "wrong result" : tsl_last_error(), worst, text ? text : "(none)");
      free(text);
    }
    good += worst <= 1e-5;
    tsl_module_free(m);
    tsl_schedule_free(s);
  }
  for (int i = 0; i < nargs; i++) {
    tsl_tensor_free(args[i]);
    tsl_tensor_free(ref[i]);
  }
  return good;
}

static void test_sketch_candidates_match_interpreter(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_target host;
  tsl_jit *jit = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&host, &jit), TSL_OK);
  static const struct {
    const char *op;
    int ninputs;
    int64_t shapes[2][4];
    int ndims[2];
    tsl_sketch_rule want; /* a rule the operator must get */
  } cases[] = {
      {"sk_matmul", 2, {{24, 20}, {20, 40}}, {2, 2}, TSL_SKETCH_TILE_CACHE},
      {"sk_softmax", 1, {{6, 50}}, {2}, TSL_SKETCH_AT},
      {"sk_chsum", 1, {{2, 8, 10, 10}}, {4}, TSL_SKETCH_RFACTOR_INNER},
      {"sk_conv", 2, {{1, 4, 8, 9}, {6, 4, 3, 3}}, {4, 4}, TSL_SKETCH_TILE},
      {"sk_depthwise", 2, {{1, 6, 9, 7}, {6, 5, 5}}, {4, 3}, TSL_SKETCH_TILE_CACHE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const int64_t *sh[2] = {cases[i].shapes[0], cases[i].shapes[1]};
    tsl_te_program *p = NULL;
    tsl_status st = tsl_dsl_instantiate(tsl_dsl_module_find(mod, cases[i].op), cases[i].ninputs, sh, cases[i].ndims,
                                        0, NULL, &p);
    if (st != TSL_OK) printf("\n  %s: %s\n", cases[i].op, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    int used = 0, good = check_candidates(p, jit, SKETCH_SAMPLES, cases[i].want, &used);
    if (good != SKETCH_SAMPLES || !used)
      printf("\n  %s: %d of %d candidates match; rule %s in %d sketches\n", cases[i].op, good, SKETCH_SAMPLES,
             tsl_sketch_rule_name(cases[i].want), used);
    CU_ASSERT_EQUAL(good, SKETCH_SAMPLES);
    CU_ASSERT_TRUE(used > 0);
  }
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

/* The same program, sketch and seed give the same schedule text. */
static void test_sketch_sampling_is_deterministic(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &host), TSL_OK);
  const int64_t a[] = {64, 48}, b[] = {48, 40};
  const int64_t *sh[2] = {a, b};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(mod, "sk_matmul"), 2, sh, (int[]){2, 2}, 0, NULL, &p),
                        TSL_OK);
  tsl_sketch_list sl;
  CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, &host, &sl), TSL_OK);
  CU_ASSERT_EQUAL(sl.n, 2); /* matmul 64x40: tile, tile_cache (no rfactor: the spatial part is large) */
  for (int k = 0; k < sl.n; k++) {
    tsl_schedule *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_sketch_sample(p, &host, &sl.sketches[k], 9, &s1), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_sketch_sample(p, &host, &sl.sketches[k], 9, &s2), TSL_OK);
    char *t1 = tsl_schedule_to_string(s1), *t2 = tsl_schedule_to_string(s2);
    CU_ASSERT_STRING_EQUAL(t1, t2);
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "parallel("));
    CU_ASSERT_PTR_NOT_NULL(strstr(t1, "vectorize("));
    free(t1);
    free(t2);
    tsl_schedule_free(s1);
    tsl_schedule_free(s2);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

/* At 4, 8 and 16 lanes (NEON, AVX2, AVX-512 targets; lowered, not run: the host may lack
 * them) every sampled candidate of every operator lowers, and the sampled vector tiles
 * follow the target's lanes. */
static void test_sketch_candidates_lower_at_every_lane_count(void) {
  tsl_dsl_module *mod = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_parse(ops_text, "sketch_ops.tsl", &mod), TSL_OK);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  const char *targets[3] = {"armv8", "x86-64-avx2", "x86-64-avx512"};
  const int64_t a[] = {32, 64}, b[] = {64, 48};
  const int64_t *sh[2] = {a, b};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(tsl_dsl_module_find(mod, "sk_matmul"), 2, sh, (int[]){2, 2}, 0, NULL, &p),
                        TSL_OK);
  for (int ti = 0; ti < 3; ti++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[ti], &t), TSL_OK);
    int lanes = tsl_target_f32_lanes(&t), lane_multiple = 0;
    tsl_sketch_list sl;
    CU_ASSERT_EQUAL_FATAL(tsl_sketch_generate(p, &t, &sl), TSL_OK);
    tsl_lower_options o = tsl_lower_options_default();
    o.vector_bits = t.vector_bits;
    for (int c = 0; c < 20; c++) {
      tsl_schedule *s = NULL;
      tsl_func *f = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_sketch_sample(p, &t, &sl.sketches[c % sl.n], (uint64_t)c + 1, &s), TSL_OK);
      tsl_status st = tsl_lower_with(s, "sk_lanes", &o, &f);
      if (st != TSL_OK) printf("\n  %s candidate %d: %s\n", targets[ti], c, tsl_last_error());
      CU_ASSERT_EQUAL(st, TSL_OK);
      for (int i = 0; i < s->nstages; i++) {
        const tsl_stage *stg = s->stages[i];
        for (int k = 0; k < stg->nleaf; k++) {
          const tsl_stage_iter *it = &stg->iters[stg->leaf[k]];
          lane_multiple += it->annotation == TSL_FOR_VECTORIZED && it->extent % lanes == 0;
        }
      }
      tsl_schedule_free(s);
    }
    /* N = 48 is a multiple of 4, 8 and 16: most vector tiles are lane multiples */
    CU_ASSERT_TRUE(lane_multiple >= 10);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  tsl_dsl_module_free(mod);
}

void tsl_tests_tuner_sketch(void) {
  CU_pSuite s = CU_add_suite("tuner/sketch", NULL, NULL);
  CU_add_test(s, "test_sketch_candidates_match_interpreter", test_sketch_candidates_match_interpreter);
  CU_add_test(s, "test_sketch_sampling_is_deterministic", test_sketch_sampling_is_deterministic);
  CU_add_test(s, "test_sketch_candidates_lower_at_every_lane_count", test_sketch_candidates_lower_at_every_lane_count);
}
