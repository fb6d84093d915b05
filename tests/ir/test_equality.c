/* Structural equality and hashing: alpha-equivalence of binders, constants, buffers. */
#include <math.h>

#include "ir_tests.h"

static tsl_expr *v64(const char *n) { return tsl_var(n, TSL_I64); }
static tsl_expr *c64(int64_t v) { return tsl_i64(v); }

static tsl_buffer *buf1(const char *name) {
  int64_t n = 64;
  return tsl_buffer_new(name, TSL_I64, 1, &n, TSL_BUF_ARG);
}

/* for (v, 0, 8) { out[v*2 + k] = v } with a fresh loop variable each call. */
static tsl_stmt *loop(tsl_buffer *out, const char *name, tsl_expr *k, int64_t c) {
  tsl_expr *v = v64(name);
  tsl_expr *idx = tsl_add(tsl_mul(v, c64(2)), k);
  return tsl_for(v, c64(0), c64(8), TSL_FOR_SERIAL, tsl_store(out, 1, &idx, tsl_add(v, c64(c)), NULL));
}

static void test_alpha_equivalent_loops_are_equal_and_hash_equal(void) {
  tsl_buffer *out = buf1("out");
  tsl_expr *k = v64("k");
  tsl_stmt *a = loop(out, "i", k, 1), *b = loop(out, "j", k, 1), *c = loop(out, "i", k, 1);
  CU_ASSERT_TRUE(tsl_stmt_equal(a, b));
  CU_ASSERT_TRUE(tsl_stmt_equal(a, c));
  CU_ASSERT_EQUAL(tsl_stmt_hash(a), tsl_stmt_hash(b));
  CU_ASSERT_EQUAL(tsl_stmt_hash(a), tsl_stmt_hash(c));
}

static void test_loops_differing_in_a_constant_are_not_equal(void) {
  tsl_buffer *out = buf1("out");
  tsl_expr *k = v64("k");
  tsl_stmt *a = loop(out, "i", k, 1), *b = loop(out, "i", k, 2);
  CU_ASSERT_FALSE(tsl_stmt_equal(a, b));
  CU_ASSERT_NOT_EQUAL(tsl_stmt_hash(a), tsl_stmt_hash(b));
}

static void test_free_variables_compare_by_identity(void) {
  tsl_buffer *out = buf1("out");
  tsl_stmt *a = loop(out, "i", v64("k"), 1), *b = loop(out, "i", v64("k"), 1);
  CU_ASSERT_FALSE(tsl_stmt_equal(a, b)); /* two different free k's */
  tsl_expr *x = v64("x"), *y = v64("x");
  CU_ASSERT_TRUE(tsl_expr_equal(x, x));
  CU_ASSERT_FALSE(tsl_expr_equal(x, y));
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_add(x, c64(1)), tsl_add(y, c64(1))));
}

static void test_bound_variable_differs_from_free_variable(void) {
  tsl_buffer *out = buf1("out");
  tsl_expr *i = v64("i"), *j = v64("j");
  /* for (i) out[i] = 0   vs   for (j) out[i] = 0  (i free in the second) */
  tsl_stmt *a = tsl_for(i, c64(0), c64(4), TSL_FOR_SERIAL, tsl_store(out, 1, &i, c64(0), NULL));
  tsl_stmt *b = tsl_for(j, c64(0), c64(4), TSL_FOR_SERIAL, tsl_store(out, 1, &i, c64(0), NULL));
  CU_ASSERT_FALSE(tsl_stmt_equal(a, b));
  CU_ASSERT_FALSE(tsl_stmt_equal(b, a));
}

static void test_nested_binders_match_by_position(void) {
  tsl_buffer *out = buf1("out");
  tsl_expr *i1 = v64("i"), *j1 = v64("j"), *i2 = v64("a"), *j2 = v64("b");
  tsl_expr *x1 = tsl_add(tsl_mul(i1, c64(8)), j1), *x2 = tsl_add(tsl_mul(i2, c64(8)), j2);
  tsl_expr *y2 = tsl_add(tsl_mul(j2, c64(8)), i2); /* binders swapped */
  tsl_stmt *a = tsl_for(i1, c64(0), c64(4), TSL_FOR_SERIAL, tsl_for(j1, c64(0), c64(8), TSL_FOR_SERIAL, tsl_store(out, 1, &x1, c64(0), NULL)));
  tsl_stmt *b = tsl_for(i2, c64(0), c64(4), TSL_FOR_SERIAL, tsl_for(j2, c64(0), c64(8), TSL_FOR_SERIAL, tsl_store(out, 1, &x2, c64(0), NULL)));
  tsl_stmt *c = tsl_for(i2, c64(0), c64(4), TSL_FOR_SERIAL, tsl_for(j2, c64(0), c64(8), TSL_FOR_SERIAL, tsl_store(out, 1, &y2, c64(0), NULL)));
  CU_ASSERT_TRUE(tsl_stmt_equal(a, b));
  CU_ASSERT_EQUAL(tsl_stmt_hash(a), tsl_stmt_hash(b));
  CU_ASSERT_FALSE(tsl_stmt_equal(a, c));
  /* loop kind is part of the structure */
  tsl_stmt *d = tsl_for(i2, c64(0), c64(4), TSL_FOR_PARALLEL, b->loop.body);
  CU_ASSERT_FALSE(tsl_stmt_equal(b, d));
}

static void test_alpha_equivalent_let_and_reduce_exprs(void) {
  tsl_expr *n = v64("n");
  tsl_expr *x = v64("x"), *y = v64("y");
  tsl_expr *a = tsl_let(x, tsl_add(n, c64(1)), tsl_mul(x, x));
  tsl_expr *b = tsl_let(y, tsl_add(n, c64(1)), tsl_mul(y, y));
  tsl_expr *c = tsl_let(y, tsl_add(n, c64(1)), tsl_mul(y, n));
  CU_ASSERT_TRUE(tsl_expr_equal(a, b));
  CU_ASSERT_EQUAL(tsl_expr_hash(a), tsl_expr_hash(b));
  CU_ASSERT_FALSE(tsl_expr_equal(a, c));
  tsl_iter_var k1 = {v64("k"), 0, 16, true}, k2 = {v64("r"), 0, 16, true}, k3 = {v64("r"), 0, 15, true};
  tsl_expr *r1 = tsl_reduce(TSL_REDUCE_SUM, tsl_add(k1.var, n), 1, &k1, NULL);
  tsl_expr *r2 = tsl_reduce(TSL_REDUCE_SUM, tsl_add(k2.var, n), 1, &k2, NULL);
  tsl_expr *r3 = tsl_reduce(TSL_REDUCE_SUM, tsl_add(k3.var, n), 1, &k3, NULL);
  tsl_expr *r4 = tsl_reduce(TSL_REDUCE_MAX, tsl_add(k2.var, n), 1, &k2, NULL);
  CU_ASSERT_TRUE(tsl_expr_equal(r1, r2));
  CU_ASSERT_EQUAL(tsl_expr_hash(r1), tsl_expr_hash(r2));
  CU_ASSERT_FALSE(tsl_expr_equal(r1, r3));
  CU_ASSERT_FALSE(tsl_expr_equal(r1, r4));
}

static void test_constants_types_and_float_bits(void) {
  CU_ASSERT_TRUE(tsl_expr_equal(c64(3), c64(3)));
  CU_ASSERT_EQUAL(tsl_expr_hash(c64(3)), tsl_expr_hash(c64(3)));
  CU_ASSERT_FALSE(tsl_expr_equal(c64(3), c64(4)));
  CU_ASSERT_FALSE(tsl_expr_equal(c64(3), tsl_i32(3)));
  CU_ASSERT_TRUE(tsl_expr_equal(tsl_f32(0.5f), tsl_f32(0.5f)));
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_f32(0.0f), tsl_f32(-0.0f)));
  CU_ASSERT_TRUE(tsl_expr_equal(tsl_float(TSL_F64, NAN), tsl_float(TSL_F64, NAN)));
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_f32(1.0f), tsl_float(TSL_F64, 1.0)));
  tsl_expr *i = v64("i");
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_add(i, c64(1)), tsl_sub(i, c64(1))));
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_add(i, c64(1)), tsl_add(c64(1), i))); /* structure, not algebra */
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_broadcast(i, 4), tsl_broadcast(i, 8)));
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_ramp(i, c64(1), 4), tsl_ramp(i, c64(2), 4)));
}

static void test_buffers_compare_by_identity(void) {
  tsl_buffer *a = buf1("A"), *b = buf1("A");
  tsl_expr *i = v64("i");
  CU_ASSERT_TRUE(tsl_expr_equal(tsl_load(a, 1, &i, NULL), tsl_load(a, 1, &i, NULL)));
  CU_ASSERT_EQUAL(tsl_expr_hash(tsl_load(a, 1, &i, NULL)), tsl_expr_hash(tsl_load(a, 1, &i, NULL)));
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_load(a, 1, &i, NULL), tsl_load(b, 1, &i, NULL)));
  tsl_expr *p = tsl_bool(true);
  CU_ASSERT_FALSE(tsl_expr_equal(tsl_load(a, 1, &i, NULL), tsl_load(a, 1, &i, p)));
}

static void test_statement_kinds_equality(void) {
  tsl_buffer *out = buf1("out");
  tsl_expr *i = v64("i");
  tsl_stmt *s1 = tsl_store(out, 1, &i, c64(1), NULL), *s2 = tsl_store(out, 1, &i, c64(2), NULL);
  CU_ASSERT_TRUE(tsl_stmt_equal(tsl_seq2(s1, s2), tsl_seq2(s1, s2)));
  CU_ASSERT_FALSE(tsl_stmt_equal(tsl_seq2(s1, s2), tsl_seq2(s2, s1)));
  tsl_expr *c = tsl_lt(i, c64(3));
  CU_ASSERT_TRUE(tsl_stmt_equal(tsl_if(c, s1, s2), tsl_if(tsl_lt(i, c64(3)), s1, s2)));
  CU_ASSERT_FALSE(tsl_stmt_equal(tsl_if(c, s1, s2), tsl_if(c, s1, NULL)));
  tsl_expr *t1 = v64("t"), *t2 = v64("u");
  tsl_stmt *l1 = tsl_let_stmt(t1, tsl_add(i, c64(1)), tsl_store(out, 1, &t1, i, NULL));
  tsl_stmt *l2 = tsl_let_stmt(t2, tsl_add(i, c64(1)), tsl_store(out, 1, &t2, i, NULL));
  CU_ASSERT_TRUE(tsl_stmt_equal(l1, l2));
  CU_ASSERT_EQUAL(tsl_stmt_hash(l1), tsl_stmt_hash(l2));
  CU_ASSERT_TRUE(tsl_stmt_equal(tsl_evaluate(c64(0)), tsl_evaluate(c64(0))));
  CU_ASSERT_FALSE(tsl_stmt_equal(tsl_evaluate(c64(0)), s1));
}


/* d_{k+1} = d_k*d_k + k: a DAG whose tree has 2^40 leaves */
static tsl_expr *big_dag(tsl_expr *x, int levels) {
  tsl_expr *d = x;
  for (int i = 0; i < levels; i++) d = tsl_add(tsl_mul(d, d), c64(i));
  return d;
}

static void test_equality_and_hash_of_shared_dags_are_fast(void) {
  tsl_expr *x = v64("x");
  tsl_expr *a = big_dag(x, 40), *b = big_dag(x, 40);
  CU_ASSERT_TRUE(tsl_expr_equal(a, b));
  CU_ASSERT_EQUAL(tsl_expr_hash(a), tsl_expr_hash(b));
  tsl_expr *c = tsl_add(tsl_mul(big_dag(x, 39), big_dag(x, 39)), c64(40));
  CU_ASSERT_FALSE(tsl_expr_equal(a, c));
}

void tsl_tests_ir_equality(void) {
  static const ir_test tests[] = {
      {"test_alpha_equivalent_loops_are_equal_and_hash_equal", test_alpha_equivalent_loops_are_equal_and_hash_equal},
      {"test_loops_differing_in_a_constant_are_not_equal", test_loops_differing_in_a_constant_are_not_equal},
      {"test_free_variables_compare_by_identity", test_free_variables_compare_by_identity},
      {"test_bound_variable_differs_from_free_variable", test_bound_variable_differs_from_free_variable},
      {"test_nested_binders_match_by_position", test_nested_binders_match_by_position},
      {"test_alpha_equivalent_let_and_reduce_exprs", test_alpha_equivalent_let_and_reduce_exprs},
      {"test_constants_types_and_float_bits", test_constants_types_and_float_bits},
      {"test_buffers_compare_by_identity", test_buffers_compare_by_identity},
      {"test_statement_kinds_equality", test_statement_kinds_equality},
      {"test_equality_and_hash_of_shared_dags_are_fast", test_equality_and_hash_of_shared_dags_are_fast},
      {NULL, NULL}};
  ir_add_suite("ir_equality", tests);
}
