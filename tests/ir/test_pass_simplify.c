/* tsl_pass_simplify on small statements. */
#include "ir/passes/simplify.h"
#include "ir_tests.h"

static tsl_expr *v64(const char *n) { return tsl_var(n, TSL_I64); }
static tsl_expr *c64(int64_t v) { return tsl_i64(v); }

static tsl_buffer *buf1(const char *name, int64_t n) { return tsl_buffer_new(name, TSL_I64, 1, &n, TSL_BUF_ARG); }

static void test_pass_uses_loop_ranges_for_index_math(void) {
  tsl_buffer *out = buf1("out", 32);
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_expr *flat = tsl_add(tsl_mul(i, c64(8)), j);
  tsl_expr *idx = tsl_div(flat, c64(8));
  tsl_expr *val = tsl_mod(flat, c64(8));
  tsl_stmt *s = tsl_for(i, c64(0), c64(4), TSL_FOR_SERIAL,
                        tsl_for(j, c64(0), c64(8), TSL_FOR_VECTORIZED, tsl_store(out, 1, &idx, val, NULL)));
  CHECK_STMT(tsl_pass_simplify(s), "for (i, 0, 4) {\n  for (j, 0, 8) vectorized {\n    out[i] = j\n  }\n}\n");
}

static void test_pass_removes_if_proven_by_loop_range(void) {
  tsl_buffer *out = buf1("out", 16);
  tsl_expr *i = v64("i");
  tsl_stmt *st = tsl_store(out, 1, &i, c64(1), NULL);
  tsl_stmt *always = tsl_for(i, c64(0), c64(16), TSL_FOR_SERIAL, tsl_if(tsl_lt(i, c64(16)), st, NULL));
  CHECK_STMT(tsl_pass_simplify(always), "for (i, 0, 16) {\n  out[i] = 1\n}\n");
  tsl_expr *k = v64("k");
  tsl_stmt *st2 = tsl_store(out, 1, &k, c64(2), NULL);
  tsl_stmt *never = tsl_for(k, c64(0), c64(16), TSL_FOR_SERIAL, tsl_if(tsl_ge(k, c64(16)), st2, st));
  CHECK_STMT(tsl_pass_simplify(never), "for (k, 0, 16) {\n  out[i] = 1\n}\n");
  /* undecided conditions stay; an empty then-branch flips the condition */
  tsl_expr *m = v64("m");
  tsl_stmt *st3 = tsl_store(out, 1, &m, c64(3), NULL);
  tsl_expr *q = v64("q");
  tsl_stmt *empty_then = tsl_for(q, c64(0), c64(0), TSL_FOR_SERIAL, tsl_store(out, 1, &q, c64(4), NULL));
  tsl_stmt *part = tsl_for(m, c64(0), c64(16), TSL_FOR_SERIAL, tsl_if(tsl_lt(m, c64(13)), empty_then, st3));
  CHECK_STMT(tsl_pass_simplify(part), "for (m, 0, 16) {\n  if (13 <= m) {\n    out[m] = 3\n  }\n}\n");
}

static void test_pass_drops_zero_extent_loops(void) {
  tsl_buffer *out = buf1("out", 16);
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_stmt *zero = tsl_for(i, c64(0), tsl_sub(c64(4), c64(4)), TSL_FOR_PARALLEL, tsl_store(out, 1, &i, c64(0), NULL));
  tsl_stmt *keep = tsl_for(j, c64(0), c64(2), TSL_FOR_SERIAL, tsl_store(out, 1, &j, c64(5), NULL));
  CHECK_STMT(tsl_pass_simplify(tsl_seq2(zero, keep)), "for (j, 0, 2) {\n  out[j] = 5\n}\n");
  /* nothing left at all: the no-op */
  tsl_stmt *nop = tsl_pass_simplify(zero);
  CU_ASSERT_EQUAL(nop->kind, TSL_S_EVALUATE);
  CHECK_STMT(nop, "0i32\n");
  /* a loop whose extent is provably <= 0 through a range */
  tsl_expr *n = v64("n");
  tsl_stmt *outer = tsl_for(n, c64(0), c64(4), TSL_FOR_SERIAL,
                            tsl_for(i, c64(0), tsl_sub(n, c64(4)), TSL_FOR_SERIAL, tsl_store(out, 1, &i, c64(0), NULL)));
  CHECK_STMT(tsl_pass_simplify(outer), "0i32\n");
}

static void test_pass_extent_one_loop_becomes_its_min(void) {
  tsl_buffer *out = buf1("out", 16);
  tsl_expr *i = v64("i"), *j = v64("j"), *n = v64("n");
  tsl_expr *idx = tsl_add(i, j);
  tsl_stmt *s = tsl_for(j, c64(0), c64(4), TSL_FOR_SERIAL,
                        tsl_for(i, c64(3), c64(1), TSL_FOR_SERIAL, tsl_store(out, 1, &idx, i, NULL)));
  CHECK_STMT(tsl_pass_simplify(s), "for (j, 0, 4) {\n  out[j + 3] = 3\n}\n");
  /* a non-trivial min is bound by a let */
  tsl_expr *mn = tsl_mul(n, c64(4));
  tsl_expr *idx2 = tsl_add(i, c64(1));
  tsl_stmt *s2 = tsl_for(i, mn, c64(1), TSL_FOR_SERIAL, tsl_store(out, 1, &idx2, tsl_mul(i, i), NULL));
  CHECK_STMT(tsl_pass_simplify(s2), "let i = n*4 in\nout[i + 1] = i*i\n");
}

static void test_pass_lets_and_predicates(void) {
  tsl_buffer *out = buf1("out", 16);
  tsl_expr *i = v64("i"), *t = v64("t"), *u = v64("u");
  /* let of a constant is substituted; an unused let disappears */
  tsl_stmt *s = tsl_for(i, c64(0), c64(8), TSL_FOR_SERIAL,
                        tsl_let_stmt(t, c64(2), tsl_let_stmt(u, tsl_mul(i, i), tsl_store(out, 1, &i, tsl_mul(i, t), NULL))));
  CHECK_STMT(tsl_pass_simplify(s), "for (i, 0, 8) {\n  out[i] = i*2\n}\n");
  /* the let value's range is known in its body */
  tsl_expr *w = v64("w");
  tsl_expr *cond = tsl_lt(w, c64(64));
  tsl_stmt *s2 = tsl_for(i, c64(0), c64(8), TSL_FOR_SERIAL,
                         tsl_let_stmt(w, tsl_mul(i, i), tsl_if(cond, tsl_store(out, 1, &i, w, NULL), NULL)));
  CHECK_STMT(tsl_pass_simplify(s2), "for (i, 0, 8) {\n  let w = i*i in\n  out[i] = w\n}\n");
  /* a vector store whose predicate is all true loses it; all false removes the store */
  tsl_expr *r = tsl_ramp(c64(0), c64(1), 4);
  tsl_expr *pt = tsl_lt(r, tsl_broadcast(c64(8), 4)), *pf = tsl_lt(r, tsl_broadcast(c64(-1), 4));
  tsl_stmt *v1 = tsl_store(out, 1, &r, tsl_broadcast(c64(1), 4), pt);
  tsl_stmt *v2 = tsl_store(out, 1, &r, tsl_broadcast(c64(2), 4), pf);
  CHECK_STMT(tsl_pass_simplify(tsl_seq2(v1, v2)), "out[ramp(0, 1, 4)] = x4(1)\n");
}


static void test_pass_if_branches_know_their_condition(void) {
  tsl_buffer *out = buf1("out", 16);
  tsl_expr *m = v64("m");
  tsl_expr *clamped = tsl_min(m, c64(12));
  tsl_expr *hi = tsl_max(m, c64(13));
  tsl_stmt *then_s = tsl_store(out, 1, &clamped, c64(1), NULL);
  tsl_stmt *else_s = tsl_store(out, 1, &hi, c64(2), NULL);
  tsl_stmt *s = tsl_for(m, c64(0), c64(16), TSL_FOR_SERIAL, tsl_if(tsl_lt(m, c64(13)), then_s, else_s));
  CHECK_STMT(tsl_pass_simplify(s), "for (m, 0, 16) {\n  if (m < 13) {\n    out[m] = 1\n  } else {\n    out[m] = 2\n  }\n}\n");
}

static void test_pass_keeps_unchanged_statement(void) {
  tsl_buffer *out = buf1("out", 16);
  tsl_expr *i = v64("i");
  tsl_stmt *s = tsl_for(i, c64(0), c64(16), TSL_FOR_PARALLEL, tsl_store(out, 1, &i, i, NULL));
  CU_ASSERT_PTR_EQUAL(tsl_pass_simplify(s), s);
  CU_ASSERT_PTR_NULL(tsl_pass_simplify(NULL));
}

void tsl_tests_ir_pass_simplify(void) {
  static const ir_test tests[] = {
      {"test_pass_uses_loop_ranges_for_index_math", test_pass_uses_loop_ranges_for_index_math},
      {"test_pass_removes_if_proven_by_loop_range", test_pass_removes_if_proven_by_loop_range},
      {"test_pass_drops_zero_extent_loops", test_pass_drops_zero_extent_loops},
      {"test_pass_extent_one_loop_becomes_its_min", test_pass_extent_one_loop_becomes_its_min},
      {"test_pass_lets_and_predicates", test_pass_lets_and_predicates},
      {"test_pass_if_branches_know_their_condition", test_pass_if_branches_know_their_condition},
      {"test_pass_keeps_unchanged_statement", test_pass_keeps_unchanged_statement},
      {NULL, NULL}};
  ir_add_suite("ir_pass_simplify", tests);
}
