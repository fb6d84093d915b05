/* Interval analysis: soundness on random expressions, tightness on hand cases, the
 * range map and the interval helpers. */
#include <stdlib.h>

#include "ir_gen.h"
#include "ir_tests.h"
#include "tests/ref/ir_eval.h"

static tsl_expr *c64(int64_t v) { return tsl_i64(v); }

static bool contains(tsl_interval iv, int64_t v) {
  if (iv.empty) return false;
  return (!iv.has_lo || iv.lo <= v) && (!iv.has_hi || v <= iv.hi);
}

static void check_range(tsl_interval iv, int64_t lo, int64_t hi, int line) {
  bool ok = !iv.empty && iv.has_lo && iv.has_hi && iv.lo == lo && iv.hi == hi;
  if (!ok)
    fprintf(stderr, "\nline %d: interval [%s%lld, %s%lld]%s, want [%lld, %lld]\n", line, iv.has_lo ? "" : "-inf?",
            (long long)iv.lo, iv.has_hi ? "" : "+inf?", (long long)iv.hi, iv.empty ? " empty" : "", (long long)lo,
            (long long)hi);
  CU_assertImplementation(ok, (unsigned)line, "interval is tight", __FILE__, "", CU_FALSE);
}
#define CHECK_RANGE(iv, lo, hi) check_range((iv), (lo), (hi), __LINE__)

/* Every sampled value of every random expression lies in its interval. */
static void soundness_for_type(tsl_type t, int rounds, uint64_t seed) {
  int checked = 0, violations = 0;
  rounds *= ir_test_scale();
  for (int round = 0; round < rounds; round++) {
    ir_gen g;
    ir_gen_init(&g, seed + (uint64_t)round, t, 3);
    for (int k = 0; k < 10; k++) {
      tsl_expr *e = ir_gen_expr(&g, 4);
      tsl_interval iv = tsl_interval_of(e, g.ranges);
      for (int s = 0; s < 12; s++) {
        int64_t vals[IR_GEN_MAX_VARS];
        ir_gen_assign(&g, vals);
        ref_env env = {g.nfree, (const tsl_expr *const *)g.vars, vals, NULL, NULL};
        int64_t v;
        if (ref_eval_int(e, &env, 0, &v) != REF_EVAL_OK) continue;
        checked++;
        if (!contains(iv, v)) {
          if (violations++ < 3) {
            char *txt = tsl_expr_to_string(e);
            fprintf(stderr, "\ninterval misses %lld for %s\n", (long long)v, txt);
            free(txt);
          }
        }
      }
    }
  }
  CU_ASSERT_EQUAL(violations, 0);
  CU_ASSERT_TRUE(checked > rounds * 40);
}

static void test_interval_sound_on_random_i64_exprs(void) { soundness_for_type(TSL_I64, 300, 1000); }

static void test_interval_sound_on_random_narrow_int_exprs(void) {
  soundness_for_type(TSL_I8, 80, 2000);
  soundness_for_type(TSL_U8, 80, 3000);
  soundness_for_type(TSL_I32, 80, 4000);
  soundness_for_type(TSL_U16, 80, 5000);
}

static void test_interval_sound_on_random_vector_exprs(void) {
  int violations = 0, checked = 0;
  for (int round = 0; round < 150; round++) {
    ir_gen g;
    ir_gen_init(&g, 7000 + (uint64_t)round, TSL_I64, 3);
    tsl_expr *e = ir_gen_vector(&g, 3, 4);
    tsl_interval iv = tsl_interval_of(e, g.ranges);
    for (int s = 0; s < 8; s++) {
      int64_t vals[IR_GEN_MAX_VARS];
      ir_gen_assign(&g, vals);
      ref_env env = {g.nfree, (const tsl_expr *const *)g.vars, vals, NULL, NULL};
      for (int lane = 0; lane < 4; lane++) {
        int64_t v;
        if (ref_eval_int(e, &env, lane, &v) != REF_EVAL_OK) continue;
        checked++;
        violations += !contains(iv, v);
      }
    }
  }
  CU_ASSERT_EQUAL(violations, 0);
  CU_ASSERT_TRUE(checked > 1000);
}

static void test_interval_tight_on_index_arithmetic(void) {
  tsl_var_ranges *r = tsl_var_ranges_new();
  tsl_expr *x = tsl_var("x", TSL_I64), *y = tsl_var("y", TSL_I64);
  tsl_var_ranges_set(r, x, tsl_interval_range(0, 7));
  tsl_var_ranges_set(r, y, tsl_interval_range(0, 7));
  tsl_expr *xy = tsl_add(tsl_mul(x, c64(8)), y);
  CHECK_RANGE(tsl_interval_of(xy, r), 0, 63);
  CHECK_RANGE(tsl_interval_of(tsl_div(xy, c64(8)), r), 0, 7);
  CHECK_RANGE(tsl_interval_of(tsl_mod(xy, c64(8)), r), 0, 7);
  CHECK_RANGE(tsl_interval_of(tsl_mod(x, c64(16)), r), 0, 7); /* one bucket: exact */
  CHECK_RANGE(tsl_interval_of(tsl_sub(x, c64(10)), r), -10, -3);
  CHECK_RANGE(tsl_interval_of(tsl_mul(x, c64(-2)), r), -14, 0);
  CHECK_RANGE(tsl_interval_of(tsl_div(tsl_sub(x, c64(7)), c64(2)), r), -4, 0); /* floor */
  CHECK_RANGE(tsl_interval_of(tsl_div(x, c64(-2)), r), -4, 0);
  CHECK_RANGE(tsl_interval_of(tsl_mod(tsl_add(x, c64(9)), c64(-3)), r), -2, 0);
  CHECK_RANGE(tsl_interval_of(tsl_min(x, c64(3)), r), 0, 3);
  CHECK_RANGE(tsl_interval_of(tsl_max(x, c64(3)), r), 3, 7);
  CHECK_RANGE(tsl_interval_of(tsl_sub(x, y), r), -7, 7);
  CHECK_RANGE(tsl_interval_of(tsl_mul(tsl_sub(x, c64(3)), y), r), -21, 28);
  CHECK_RANGE(tsl_interval_of(tsl_select(tsl_lt(x, y), c64(-5), tsl_add(x, c64(1))), r), -5, 8);
  CHECK_RANGE(tsl_interval_of(tsl_lt(x, c64(8)), r), 1, 1);
  CHECK_RANGE(tsl_interval_of(tsl_ge(x, c64(8)), r), 0, 0);
  CHECK_RANGE(tsl_interval_of(tsl_lt(x, y), r), 0, 1);
  CHECK_RANGE(tsl_interval_of(tsl_ramp(tsl_mul(x, c64(4)), c64(2), 4), r), 0, 34);
  CHECK_RANGE(tsl_interval_of(tsl_broadcast(y, 8), r), 0, 7);
  tsl_expr *t = tsl_var("t", TSL_I64);
  CHECK_RANGE(tsl_interval_of(tsl_let(t, tsl_add(x, c64(2)), tsl_mul(t, c64(3))), r), 6, 27);
  CHECK_RANGE(tsl_interval_of(tsl_cast(TSL_I32, x), r), 0, 7);
  tsl_expr *ul[1] = {tsl_cast(TSL_I32, x)};
  CHECK_RANGE(tsl_interval_of(tsl_call(TSL_CALL_POPCOUNT, TSL_I32, 1, ul), r), 0, 32);
}

static void test_interval_of_unknowns_is_the_type_range(void) {
  tsl_expr *x = tsl_var("x", TSL_I64);
  tsl_interval iv = tsl_interval_of(x, NULL);
  CU_ASSERT_FALSE(iv.has_lo || iv.has_hi || iv.empty);
  CHECK_RANGE(tsl_interval_of(tsl_var("b", TSL_U8), NULL), 0, 255);
  CHECK_RANGE(tsl_interval_of(tsl_var("c", TSL_I8), NULL), -128, 127);
  CHECK_RANGE(tsl_interval_of(tsl_var("p", TSL_BOOL), NULL), 0, 1);
  int64_t n = 4;
  tsl_buffer *B = tsl_buffer_new("B", TSL_I16, 1, &n, TSL_BUF_ARG);
  tsl_expr *i = c64(0);
  CHECK_RANGE(tsl_interval_of(tsl_load(B, 1, &i, NULL), NULL), -32768, 32767);
  /* unsigned: [0, +inf) for u64 */
  iv = tsl_interval_of(tsl_var("q", TSL_U64), NULL);
  CU_ASSERT_TRUE(iv.has_lo && iv.lo == 0 && !iv.has_hi);
  /* unbounded divisor of unknown sign still bounds |a/b| by |a| */
  tsl_var_ranges *r = tsl_var_ranges_new();
  tsl_var_ranges_set(r, x, tsl_interval_range(-9, 5));
  CHECK_RANGE(tsl_interval_of(tsl_div(x, tsl_var("d", TSL_I64)), r), -9, 9);
}

static void test_interval_narrow_type_wraps_to_full_range(void) {
  tsl_var_ranges *r = tsl_var_ranges_new();
  tsl_expr *x = tsl_var("x", TSL_I8), *u = tsl_var("u", TSL_U8);
  tsl_var_ranges_set(r, x, tsl_interval_range(100, 120));
  tsl_var_ranges_set(r, u, tsl_interval_range(0, 10));
  CHECK_RANGE(tsl_interval_of(tsl_add(x, tsl_int(TSL_I8, 7)), r), 107, 127); /* fits exactly */
  CHECK_RANGE(tsl_interval_of(tsl_add(x, tsl_int(TSL_I8, 20)), r), -128, 127);          /* may wrap */
  CHECK_RANGE(tsl_interval_of(tsl_sub(u, tsl_int(TSL_U8, 1)), r), 0, 255);              /* 0 - 1 wraps */
  CHECK_RANGE(tsl_interval_of(tsl_cast(TSL_I8, tsl_cast(TSL_I64, x)), r), 100, 120);
  CHECK_RANGE(tsl_interval_of(tsl_cast(TSL_U8, tsl_cast(TSL_I64, x)), r), 100, 120);
  CHECK_RANGE(tsl_interval_of(tsl_cast(TSL_U8, tsl_sub(tsl_cast(TSL_I64, x), c64(110))), r), 0, 255);
}

static void test_interval_empty_range_propagates(void) {
  tsl_var_ranges *r = tsl_var_ranges_new();
  tsl_expr *x = tsl_var("x", TSL_I64);
  tsl_var_ranges_set(r, x, tsl_interval_range(0, -1)); /* a zero-extent loop */
  CU_ASSERT_TRUE(tsl_interval_range(0, -1).empty);
  CU_ASSERT_TRUE(tsl_interval_of(tsl_add(tsl_mul(x, c64(3)), c64(1)), r).empty);
  CU_ASSERT_FALSE(tsl_interval_of(c64(1), r).empty);
}

/* Integer division and modulo by zero give 0 (ir/ir.h): a divisor whose range holds 0
 * adds 0 to the result (the intervals below are worked out by hand). */
static void test_interval_division_by_a_divisor_that_may_be_zero(void) {
  tsl_var_ranges *r = tsl_var_ranges_new();
  tsl_expr *i = tsl_var("i", TSL_I64), *z = tsl_var("z", TSL_I64), *m = tsl_var("m", TSL_I64);
  tsl_var_ranges_set(r, i, tsl_interval_range(0, 2));
  tsl_var_ranges_set(r, z, tsl_interval_point(0));
  tsl_var_ranges_set(r, m, tsl_interval_range(-1, 0));
  CHECK_RANGE(tsl_interval_of(tsl_div(c64(1), i), r), 0, 1);     /* 1/0 = 0, 1/1 = 1, 1/2 = 0 */
  CHECK_RANGE(tsl_interval_of(tsl_div(c64(-5), i), r), -5, 0);   /* 0, -5, -3 */
  tsl_interval only_zero = tsl_interval_of(tsl_div(c64(7), z), r); /* 0, left unbounded: never folded */
  CU_ASSERT(contains(only_zero, 0) && !only_zero.has_lo && !only_zero.has_hi);
  CHECK_RANGE(tsl_interval_of(tsl_div(c64(6), m), r), -6, 0);    /* 6/-1 = -6, 6/0 = 0 */
  CU_ASSERT(contains(tsl_interval_of(tsl_mod(c64(7), z), r), 0));
  CHECK_RANGE(tsl_interval_of(tsl_mod(c64(5), i), r), 0, 1);     /* 0, 0, 1 */
  /* a divisor that cannot be 0 keeps the tight quotient */
  tsl_var_ranges_set(r, i, tsl_interval_range(1, 2));
  CHECK_RANGE(tsl_interval_of(tsl_div(c64(8), i), r), 4, 8);
}

static void test_interval_helpers_and_union(void) {
  tsl_interval p = tsl_interval_point(5);
  CHECK_RANGE(p, 5, 5);
  CHECK_RANGE(tsl_interval_union(p, tsl_interval_range(-2, 3)), -2, 5);
  tsl_interval e = tsl_interval_range(1, 0);
  CHECK_RANGE(tsl_interval_union(e, p), 5, 5);
  CHECK_RANGE(tsl_interval_union(p, e), 5, 5);
  tsl_interval all = tsl_interval_everything();
  tsl_interval u = tsl_interval_union(all, p);
  CU_ASSERT_FALSE(u.has_lo || u.has_hi || u.empty);
}

static void test_var_ranges_set_get_replace_copy(void) {
  tsl_var_ranges *m = tsl_var_ranges_new();
  tsl_expr *vs[100];
  for (int i = 0; i < 100; i++) {
    vs[i] = tsl_var("v", TSL_I64);
    tsl_var_ranges_set(m, vs[i], tsl_interval_range(i, i + 10));
  }
  tsl_interval out;
  for (int i = 0; i < 100; i++) {
    CU_ASSERT_TRUE(tsl_var_ranges_get(m, vs[i], &out));
    CU_ASSERT_TRUE(out.lo == i && out.hi == i + 10);
  }
  CU_ASSERT_FALSE(tsl_var_ranges_get(m, tsl_var("other", TSL_I64), &out));
  CU_ASSERT_FALSE(tsl_var_ranges_get(NULL, vs[0], &out));
  tsl_var_ranges *c = tsl_var_ranges_copy(m);
  tsl_var_ranges_set(m, vs[3], tsl_interval_point(-1));
  CU_ASSERT_TRUE(tsl_var_ranges_get(m, vs[3], &out) && out.lo == -1 && out.hi == -1);
  CU_ASSERT_TRUE(tsl_var_ranges_get(c, vs[3], &out) && out.lo == 3 && out.hi == 13);
  tsl_var_ranges *fresh = tsl_var_ranges_copy(NULL);
  CU_ASSERT_FALSE(tsl_var_ranges_get(fresh, vs[0], &out));
}


static void test_interval_of_shared_dag_is_fast(void) {
  tsl_var_ranges *r = tsl_var_ranges_new();
  tsl_expr *x = tsl_var("x", TSL_I64);
  tsl_var_ranges_set(r, x, tsl_interval_range(0, 3));
  tsl_expr *d = x;
  for (int i = 0; i < 50; i++) d = tsl_min(tsl_add(d, c64(1)), tsl_max(d, c64(2))); /* 2^50-leaf tree */
  tsl_interval iv = tsl_interval_of(d, r);
  CU_ASSERT_TRUE(iv.has_lo && iv.has_hi && iv.lo >= 0 && iv.hi <= 53);
  tsl_expr *t = tsl_var("t", TSL_I64);
  iv = tsl_interval_of(tsl_let(t, c64(1), tsl_add(d, t)), r);
  CU_ASSERT_TRUE(iv.has_lo && iv.has_hi);
}

void tsl_tests_ir_interval(void) {
  static const ir_test tests[] = {
      {"test_interval_sound_on_random_i64_exprs", test_interval_sound_on_random_i64_exprs},
      {"test_interval_sound_on_random_narrow_int_exprs", test_interval_sound_on_random_narrow_int_exprs},
      {"test_interval_sound_on_random_vector_exprs", test_interval_sound_on_random_vector_exprs},
      {"test_interval_tight_on_index_arithmetic", test_interval_tight_on_index_arithmetic},
      {"test_interval_of_unknowns_is_the_type_range", test_interval_of_unknowns_is_the_type_range},
      {"test_interval_narrow_type_wraps_to_full_range", test_interval_narrow_type_wraps_to_full_range},
      {"test_interval_empty_range_propagates", test_interval_empty_range_propagates},
      {"test_interval_division_by_a_divisor_that_may_be_zero", test_interval_division_by_a_divisor_that_may_be_zero},
      {"test_interval_helpers_and_union", test_interval_helpers_and_union},
      {"test_var_ranges_set_get_replace_copy", test_var_ranges_set_get_replace_copy},
      {"test_interval_of_shared_dag_is_fast", test_interval_of_shared_dag_is_fast},
      {NULL, NULL}};
  ir_add_suite("ir_interval", tests);
}
