/* Property tests: on thousands of seeded random integer expressions, the simplified
 * expression evaluates (with the independent reference interpreter) to the same value
 * as the original under random assignments inside the given ranges. */
#include <stdlib.h>

#include "ir_gen.h"
#include "ir_tests.h"
#include "tests/ref/ir_eval.h"

typedef struct stats {
  long checked, mismatches, undefined_after;
} stats;

static void report(const char *what, const tsl_expr *e, const tsl_expr *s, const ir_gen *g, const int64_t *vals,
                   int64_t want, int64_t got) {
  char *a = tsl_expr_to_string(e), *b = tsl_expr_to_string(s);
  fprintf(stderr, "\n%s\n  original:   %s\n  simplified: %s\n  values:", what, a, b);
  for (int i = 0; i < g->nfree; i++) {
    fprintf(stderr, " %s=%lld", g->vars[i]->var.name, (long long)vals[i]);
    if (g->ranged[i]) fprintf(stderr, "[%lld,%lld]", (long long)g->lo[i], (long long)g->hi[i]);
  }
  fprintf(stderr, "\n  original=%lld simplified=%lld\n", (long long)want, (long long)got);
  free(a);
  free(b);
}

/* Compares e and s on `samples` assignments (all lanes). */
static void compare(stats *st, ir_gen *g, const tsl_expr *e, const tsl_expr *s, int samples, int lanes) {
  for (int k = 0; k < samples; k++) {
    int64_t vals[IR_GEN_MAX_VARS];
    ir_gen_assign(g, vals);
    ref_env env = {g->nfree, (const tsl_expr *const *)g->vars, vals, NULL, NULL};
    for (int lane = 0; lane < lanes; lane++) {
      int64_t want, got = 0;
      if (ref_eval_int(e, &env, lane, &want) != REF_EVAL_OK) continue; /* original undefined: skip */
      st->checked++;
      ref_eval_status rs = ref_eval_int(s, &env, lane, &got);
      if (rs != REF_EVAL_OK) {
        if (st->undefined_after++ < 3) report("simplified expression is undefined where the original is not", e, s, g, vals, want, 0);
      } else if (got != want) {
        if (st->mismatches++ < 3) report("simplified expression differs", e, s, g, vals, want, got);
      }
    }
  }
}

static void run_scalar(tsl_type t, int rounds, int per_round, int depth, uint64_t seed) {
  stats st = {0, 0, 0};
  rounds *= ir_test_scale();
  for (int round = 0; round < rounds; round++) {
    ir_gen g;
    ir_gen_init(&g, seed + (uint64_t)round * 7919, t, 3);
    for (int k = 0; k < per_round; k++) {
      tsl_expr *e = ir_gen_expr(&g, depth);
      tsl_expr *s = tsl_simplify(e, g.ranges);
      compare(&st, &g, e, s, 12, 1);
      /* simplifying again keeps the value too */
      tsl_expr *s2 = tsl_simplify(s, g.ranges);
      if (s2 != s) compare(&st, &g, e, s2, 4, 1);
    }
  }
  CU_ASSERT_EQUAL(st.mismatches, 0);
  CU_ASSERT_EQUAL(st.undefined_after, 0);
  CU_ASSERT_TRUE(st.checked > (long)rounds * per_round * 6);
}

static void test_simplify_preserves_value_on_random_i64_exprs(void) { run_scalar(TSL_I64, 1500, 8, 4, 11); }

static void test_simplify_preserves_value_on_deep_i64_exprs(void) { run_scalar(TSL_I64, 300, 4, 6, 77777); }

static void test_simplify_preserves_value_on_random_narrow_int_exprs(void) {
  run_scalar(TSL_I8, 120, 8, 4, 20000);
  run_scalar(TSL_U8, 120, 8, 4, 30000);
  run_scalar(TSL_I32, 120, 8, 4, 40000);
  run_scalar(TSL_U16, 120, 8, 4, 50000);
  run_scalar(TSL_U32, 60, 8, 4, 60000);
}

static void test_simplify_preserves_value_on_random_vector_exprs(void) {
  stats st = {0, 0, 0};
  for (int round = 0; round < 300 * ir_test_scale(); round++) {
    ir_gen g;
    ir_gen_init(&g, 90000 + (uint64_t)round, TSL_I64, 3);
    int lanes = round % 2 ? 4 : 8;
    tsl_expr *e = ir_gen_vector(&g, 3, lanes);
    tsl_expr *s = tsl_simplify(e, g.ranges);
    CU_ASSERT_EQUAL(s->type.lanes, lanes);
    compare(&st, &g, e, s, 8, lanes);
  }
  CU_ASSERT_EQUAL(st.mismatches, 0);
  CU_ASSERT_EQUAL(st.undefined_after, 0);
  CU_ASSERT_TRUE(st.checked > 5000);
}

/* prove/disprove only ever answer for conditions that hold/fail everywhere sampled. */
static void test_prove_and_disprove_agree_with_evaluation(void) {
  long proved = 0, disproved = 0, wrong = 0;
  for (int round = 0; round < 400 * ir_test_scale(); round++) {
    ir_gen g;
    ir_gen_init(&g, 123456 + (uint64_t)round, TSL_I64, 2);
    for (int k = 0; k < 6; k++) {
      tsl_expr *c = ir_gen_cond(&g, 3);
      bool p = tsl_prove(c, g.ranges), d = tsl_disprove(c, g.ranges);
      CU_ASSERT_FALSE(p && d);
      proved += p;
      disproved += d;
      if (!p && !d) continue;
      for (int s = 0; s < 16; s++) {
        int64_t vals[IR_GEN_MAX_VARS], v;
        ir_gen_assign(&g, vals);
        ref_env env = {g.nfree, (const tsl_expr *const *)g.vars, vals, NULL, NULL};
        if (ref_eval_int(c, &env, 0, &v) != REF_EVAL_OK) continue;
        if ((p && v != 1) || (d && v != 0)) {
          if (wrong++ < 3) report(p ? "proved but false" : "disproved but true", c, tsl_simplify(c, g.ranges), &g, vals, v, p);
        }
      }
    }
  }
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_TRUE(proved > 20);
  CU_ASSERT_TRUE(disproved > 20);
}

/* The interval of a simplified expression is still sound (the simplifier keeps ranges
 * it relied on honest). */
static void test_interval_of_simplified_exprs_is_sound(void) {
  long bad = 0, checked = 0;
  for (int round = 0; round < 200; round++) {
    ir_gen g;
    ir_gen_init(&g, 55555 + (uint64_t)round, TSL_I64, 3);
    tsl_expr *e = tsl_simplify(ir_gen_expr(&g, 4), g.ranges);
    tsl_interval iv = tsl_interval_of(e, g.ranges);
    for (int s = 0; s < 10; s++) {
      int64_t vals[IR_GEN_MAX_VARS], v;
      ir_gen_assign(&g, vals);
      ref_env env = {g.nfree, (const tsl_expr *const *)g.vars, vals, NULL, NULL};
      if (ref_eval_int(e, &env, 0, &v) != REF_EVAL_OK) continue;
      checked++;
      bad += iv.empty || (iv.has_lo && v < iv.lo) || (iv.has_hi && v > iv.hi);
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_TRUE(checked > 1000);
}

void tsl_tests_ir_simplify_random(void) {
  static const ir_test tests[] = {
      {"test_simplify_preserves_value_on_random_i64_exprs", test_simplify_preserves_value_on_random_i64_exprs},
      {"test_simplify_preserves_value_on_deep_i64_exprs", test_simplify_preserves_value_on_deep_i64_exprs},
      {"test_simplify_preserves_value_on_random_narrow_int_exprs", test_simplify_preserves_value_on_random_narrow_int_exprs},
      {"test_simplify_preserves_value_on_random_vector_exprs", test_simplify_preserves_value_on_random_vector_exprs},
      {"test_prove_and_disprove_agree_with_evaluation", test_prove_and_disprove_agree_with_evaluation},
      {"test_interval_of_simplified_exprs_is_sound", test_interval_of_simplified_exprs_is_sound},
      {NULL, NULL}};
  ir_add_suite("ir_simplify_random", tests);
}
