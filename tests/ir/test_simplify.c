/* Simplifier rules, checked on hand-written cases. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "ir_tests.h"
#include "tests/ref/ir_eval.h"

static tsl_expr *v64(const char *n) { return tsl_var(n, TSL_I64); }
static tsl_expr *c64(int64_t v) { return tsl_i64(v); }

static bool is_int(const tsl_expr *e, int64_t want) {
  int64_t v;
  return tsl_expr_is_const_int(e, &v) && v == want;
}

static tsl_var_ranges *ranges2(tsl_expr *x, int64_t xlo, int64_t xhi, tsl_expr *y, int64_t ylo, int64_t yhi) {
  tsl_var_ranges *r = tsl_var_ranges_new();
  if (x) tsl_var_ranges_set(r, x, tsl_interval_range(xlo, xhi));
  if (y) tsl_var_ranges_set(r, y, tsl_interval_range(ylo, yhi));
  return r;
}

static void test_floor_div_mod_constant_folding(void) {
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(c64(-7), c64(2)), NULL), -4));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_mod(c64(-7), c64(2)), NULL), 1));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(c64(7), c64(-2)), NULL), -4));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_mod(c64(7), c64(-2)), NULL), -1));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(c64(-7), c64(-2)), NULL), 3));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_mod(c64(-7), c64(-2)), NULL), -1));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(c64(INT64_MIN), c64(-1)), NULL), INT64_MIN)); /* wraps, no trap */
  /* the reference agrees on the same cases */
  CU_ASSERT_EQUAL(ref_floordiv(-7, 2), -4);
  CU_ASSERT_EQUAL(ref_floormod(-7, 2), 1);
  CU_ASSERT_EQUAL(ref_floordiv(7, -2), -4);
  CU_ASSERT_EQUAL(ref_floormod(7, -2), -1);
  /* unsigned division is plain */
  tsl_expr *u = tsl_simplify(tsl_div(tsl_int(TSL_U8, 250), tsl_int(TSL_U8, 7)), NULL);
  CU_ASSERT_TRUE(is_int(u, 35));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(tsl_int(TSL_I8, -128), tsl_int(TSL_I8, -1)), NULL), -128));
}

static void test_division_by_zero_is_never_folded(void) {
  tsl_expr *x = v64("x");
  tsl_expr *e = tsl_simplify(tsl_div(c64(7), c64(0)), NULL);
  CU_ASSERT_EQUAL(e->kind, TSL_E_DIV);
  e = tsl_simplify(tsl_mod(c64(7), c64(0)), NULL);
  CU_ASSERT_EQUAL(e->kind, TSL_E_MOD);
  e = tsl_simplify(tsl_div(x, tsl_sub(c64(3), c64(3))), NULL);
  CU_ASSERT_EQUAL(e->kind, TSL_E_DIV);
  CHECK_EXPR(e, "x/0");
  /* x*0/0 must not become 0 either */
  e = tsl_simplify(tsl_div(tsl_mul(x, c64(0)), c64(0)), NULL);
  CU_ASSERT_EQUAL(e->kind, TSL_E_DIV);
  e = tsl_simplify(tsl_div(tsl_f32(1.0f), tsl_f32(0.0f)), NULL);
  CU_ASSERT_EQUAL(e->kind, TSL_E_DIV);
  e = tsl_simplify(tsl_div(tsl_broadcast(x, 4), tsl_broadcast(c64(0), 4)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_DIV || (e->kind == TSL_E_BROADCAST && e->broadcast.value->kind == TSL_E_DIV));
}

static void test_split_index_div_mod_with_ranges(void) {
  tsl_expr *x = v64("x"), *y = v64("y");
  tsl_var_ranges *r = ranges2(x, 0, 31, y, 0, 7);
  tsl_expr *xy = tsl_add(tsl_mul(x, c64(8)), y);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_div(xy, c64(8)), r), x);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_mod(xy, c64(8)), r), y);
  /* the offset may sit on either side and in the constant */
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_add(tsl_add(y, c64(16)), tsl_mul(c64(8), x)), c64(8)), r), "x + 2");
  CHECK_EXPR(tsl_simplify(tsl_mod(tsl_add(tsl_add(y, c64(16)), tsl_mul(c64(8), x)), c64(8)), r), "y");
  /* without a range for y only the exact part moves out */
  CHECK_EXPR(tsl_simplify(tsl_div(xy, c64(8)), NULL), "x + (y/8)");
  CHECK_EXPR(tsl_simplify(tsl_mod(xy, c64(8)), NULL), "y % 8");
  /* y in [1, 8] does not fit one bucket */
  tsl_var_ranges *r2 = ranges2(x, 0, 31, y, 1, 8);
  CHECK_EXPR(tsl_simplify(tsl_div(xy, c64(8)), r2), "x + (y/8)");
  /* but y - 1 does */
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_div(tsl_sub(xy, c64(1)), c64(8)), r2), x);
}

static void test_div_mod_identities(void) {
  tsl_expr *x = v64("x");
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_div(x, c64(1)), NULL), x);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_mod(x, c64(1)), NULL), 0));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_mod(x, c64(-1)), NULL), 0));
  CHECK_EXPR(tsl_simplify(tsl_div(x, c64(-1)), NULL), "0 - x");
  CHECK_EXPR(tsl_simplify(tsl_mod(tsl_mod(x, c64(8)), c64(4)), NULL), "x % 4");
  CHECK_EXPR(tsl_simplify(tsl_mod(tsl_mod(x, c64(4)), c64(8)), NULL), "x % 4");
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_div(x, c64(4)), c64(2)), NULL), "x/8");
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_mul(x, c64(4)), c64(8)), NULL), "x/2");
  CHECK_EXPR(tsl_simplify(tsl_mod(tsl_mul(x, c64(4)), c64(8)), NULL), "(x % 2)*4");
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_mod(tsl_mul(x, c64(8)), c64(4)), NULL), 0));
  tsl_var_ranges *r = ranges2(x, 0, 3, NULL, 0, 0);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(x, c64(4)), r), 0));
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_mod(x, c64(4)), r), x);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(tsl_sub(x, c64(4)), c64(4)), r), -1));
  CHECK_EXPR(tsl_simplify(tsl_mod(tsl_sub(x, c64(4)), c64(4)), r), "x");
}

static void test_fused_index_recombines(void) {
  /* fuse: (f/16)*16 + f mod 16 -> f, in any order and scaled */
  tsl_expr *f = v64("f");
  tsl_expr *e = tsl_add(tsl_mod(f, c64(16)), tsl_mul(tsl_div(f, c64(16)), c64(16)));
  CU_ASSERT_PTR_EQUAL(tsl_simplify(e, NULL), f);
  tsl_expr *g = tsl_add(tsl_mul(tsl_add(tsl_mul(tsl_div(f, c64(16)), c64(16)), tsl_mod(f, c64(16))), c64(3)), c64(1));
  CHECK_EXPR(tsl_simplify(g, NULL), "(f*3) + 1");
}

/* e and its simplified form agree, by the reference interpreter, at every (o, i) with
 * o in [olo, ohi] and i in [0, 16). */
static void check_same_values(tsl_expr *e, tsl_expr *s, tsl_expr *o, tsl_expr *i, int64_t olo, int64_t ohi) {
  const tsl_expr *vars[2] = {o, i};
  for (int64_t ov = olo; ov <= ohi; ov++)
    for (int64_t iv = 0; iv < 16; iv++) {
      int64_t vals[2] = {ov, iv}, want, got;
      ref_env env = {2, vars, vals, NULL, NULL};
      CU_ASSERT_EQUAL_FATAL(ref_eval_int(e, &env, 0, &want), REF_EVAL_OK);
      CU_ASSERT_EQUAL_FATAL(ref_eval_int(s, &env, 0, &got), REF_EVAL_OK);
      CU_ASSERT_EQUAL_FATAL(got, want);
    }
}

/* Whether e has a division or modulo node. */
static bool has_divmod(const tsl_expr *e) {
  switch (e->kind) {
  case TSL_E_DIV: case TSL_E_MOD: return true;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_MIN: case TSL_E_MAX:
    return has_divmod(e->bin.a) || has_divmod(e->bin.b);
  default: return false;
  }
}

static void test_fused_axes_index_split_recombines(void) {
  /* a loop fused over c, y, x (extents C, 13, 13) and split by 16: the flattened index
   * c*169 + y*13 + x of c = f/169, y = (f/13) mod 13, x = f mod 13 is f again (the
   * auto-scheduler's fused elementwise stages; without this the vectorized store was a
   * 16-lane gather with vector division) */
  tsl_expr *o = v64("o"), *i = v64("i");
  tsl_expr *f = tsl_add(tsl_mul(o, c64(16)), i);
  tsl_expr *e = tsl_add(tsl_add(tsl_mul(tsl_div(f, c64(169)), c64(169)),
                                tsl_mul(tsl_mod(tsl_div(f, c64(13)), c64(13)), c64(13))),
                        tsl_mod(f, c64(13)));
  tsl_expr *s = tsl_simplify(e, NULL);
  CHECK_EXPR(s, "(o*16) + i");
  check_same_values(e, s, o, i, -30, 30);
  /* the two low parts alone: (f/13 mod 13)*13 + f mod 13 is f mod 169, in either order
   * and scaled by 4 */
  tsl_expr *low = tsl_mul(tsl_add(tsl_mod(f, c64(13)), tsl_mul(tsl_mod(tsl_div(f, c64(13)), c64(13)), c64(13))), c64(4));
  s = tsl_simplify(low, NULL);
  CHECK_EXPR(s, "(((o*16) + i) % 169)*4");
  check_same_values(low, s, o, i, -30, 30);
  /* four axes (extents 3, 7 and 4 below the outermost): the split of f by 4 divides the
   * 16 of f = o*16 + i, so the simplifier has already moved whole multiples out
   * ((f/4) mod 7 is (o*4 + i/4) mod 7, f mod 4 is i mod 4): they still recombine */
  tsl_expr *four = tsl_add(tsl_add(tsl_add(tsl_mul(tsl_div(f, c64(84)), c64(84)),
                                           tsl_mul(tsl_mod(tsl_div(f, c64(28)), c64(3)), c64(28))),
                                   tsl_mul(tsl_mod(tsl_div(f, c64(4)), c64(7)), c64(4))),
                           tsl_mod(f, c64(4)));
  s = tsl_simplify(four, NULL);
  CHECK_EXPR(s, "(o*16) + i");
  check_same_values(four, s, o, i, -20, 20);
  /* not a split of one index: the extents do not chain (13 then 12), or another
   * variable: left as they are, and still equal */
  tsl_expr *bad = tsl_add(tsl_mul(tsl_mod(tsl_div(f, c64(12)), c64(13)), c64(13)), tsl_mod(f, c64(13)));
  s = tsl_simplify(bad, NULL);
  CU_ASSERT_TRUE(has_divmod(s));
  check_same_values(bad, s, o, i, -20, 20);
  tsl_expr *other = tsl_add(tsl_mul(tsl_mod(tsl_div(o, c64(13)), c64(13)), c64(13)), tsl_mod(f, c64(13)));
  s = tsl_simplify(other, NULL);
  CU_ASSERT_TRUE(has_divmod(s));
  check_same_values(other, s, o, i, -20, 20);
  /* a negative divisor is not merged (the identity is stated for k, m > 0) */
  tsl_expr *neg = tsl_add(tsl_mul(tsl_mod(tsl_div(f, c64(-13)), c64(13)), c64(-13)), tsl_mod(f, c64(-13)));
  s = tsl_simplify(neg, NULL);
  check_same_values(neg, s, o, i, -20, 20);
}

/* The six orders of the sum of a, b, c. */
static tsl_expr *sum3(tsl_expr *const t[3], int order) {
  static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  return tsl_add(tsl_add(t[perm[order][0]], t[perm[order][1]]), t[perm[order][2]]);
}

static void test_fused_index_split_recombines_in_any_order_and_type(void) {
  tsl_expr *o = v64("o"), *i = v64("i");
  tsl_expr *f = tsl_add(tsl_mul(o, c64(16)), i);
  /* a left-nested fuse (c, y[13]) then x[4], split by 16: the outer part is (f/4)/13 */
  tsl_expr *t[3] = {tsl_mod(f, c64(4)), tsl_mul(tsl_mod(tsl_div(f, c64(4)), c64(13)), c64(4)),
                    tsl_mul(tsl_div(tsl_div(f, c64(4)), c64(13)), c64(52))};
  for (int order = 0; order < 6; order++) {
    tsl_expr *e = sum3(t, order), *s = tsl_simplify(e, NULL);
    CHECK_EXPR(s, "(o*16) + i");
    check_same_values(e, s, o, i, -20, 20);
  }
  /* i32 and u16 indices (the first identity only: narrow types take no products), the
   * outer part as x/169 or (x/13)/13, every order */
  const tsl_type types[2] = {TSL_I32, TSL_U16};
  for (int ti = 0; ti < 2; ti++) {
    tsl_type ty = types[ti];
    tsl_expr *x = tsl_var("x", ty), *zero = tsl_var("z", ty);
    for (int nested = 0; nested < 2; nested++) {
      tsl_expr *outer = nested ? tsl_div(tsl_div(x, tsl_int(ty, 13)), tsl_int(ty, 13)) : tsl_div(x, tsl_int(ty, 169));
      tsl_expr *u[3] = {tsl_mod(x, tsl_int(ty, 13)),
                        tsl_mul(tsl_mod(tsl_div(x, tsl_int(ty, 13)), tsl_int(ty, 13)), tsl_int(ty, 13)),
                        tsl_mul(outer, tsl_int(ty, 169))};
      for (int order = 0; order < 6; order++) {
        tsl_expr *e = sum3(u, order), *s = tsl_simplify(e, NULL);
        CHECK_EXPR(s, "x");
        int64_t lo = ty.code == TSL_TYPE_INT ? -400 : 0;
        const tsl_expr *vars[2] = {x, zero};
        for (int64_t v = lo; v < lo + 800; v += 7) {
          int64_t vals[2] = {v, 0}, want, got;
          ref_env env = {2, vars, vals, NULL, NULL};
          CU_ASSERT_EQUAL_FATAL(ref_eval_int(e, &env, 0, &want), REF_EVAL_OK);
          CU_ASSERT_EQUAL_FATAL(ref_eval_int(s, &env, 0, &got), REF_EVAL_OK);
          CU_ASSERT_EQUAL_FATAL(got, want);
        }
      }
    }
  }
  /* a negative coefficient: -3*(v mod 7) - 21*((v/7) mod 5) is -3*(v mod 35), in i32 */
  tsl_expr *v = tsl_var("v", TSL_I32), *w = tsl_var("w", TSL_I32);
  tsl_expr *neg = tsl_sub(tsl_mul(tsl_mod(v, tsl_int(TSL_I32, 7)), tsl_int(TSL_I32, -3)),
                          tsl_mul(tsl_mod(tsl_div(v, tsl_int(TSL_I32, 7)), tsl_int(TSL_I32, 5)), tsl_int(TSL_I32, 21)));
  tsl_expr *sn = tsl_simplify(neg, NULL);
  CHECK_EXPR(sn, "0i32 - ((v % 35i32)*3i32)");
  const tsl_expr *vw[2] = {v, w};
  for (int64_t vv = -300; vv <= 300; vv++) {
    int64_t vals[2] = {vv, 0}, want, got;
    ref_env env = {2, vw, vals, NULL, NULL};
    CU_ASSERT_EQUAL_FATAL(ref_eval_int(neg, &env, 0, &want), REF_EVAL_OK);
    CU_ASSERT_EQUAL_FATAL(ref_eval_int(sn, &env, 0, &got), REF_EVAL_OK);
    CU_ASSERT_EQUAL_FATAL(got, want);
  }
  /* the middle level missing: f mod 13 + (f/169)*169 is not f; left split, same values */
  tsl_expr *gap = tsl_add(tsl_mod(f, c64(13)), tsl_mul(tsl_div(f, c64(169)), c64(169)));
  tsl_expr *sg = tsl_simplify(gap, NULL);
  CU_ASSERT_TRUE(has_divmod(sg));
  check_same_values(gap, sg, o, i, -30, 30);
  /* q not a division of the same index: z mod 3 + ((z/3 + y) mod 5)*3 is (3*y + z) mod 15 */
  tsl_expr *z = v64("z"), *y = v64("y");
  tsl_expr *mixed = tsl_add(tsl_mod(z, c64(3)), tsl_mul(tsl_mod(tsl_add(tsl_div(z, c64(3)), y), c64(5)), c64(3)));
  tsl_expr *sm = tsl_simplify(mixed, NULL);
  check_same_values(mixed, sm, z, y, -40, 40);
  /* simplified once is simplified: a second pass changes nothing */
  tsl_expr *again[4] = {sum3(t, 1), neg, gap, mixed};
  for (int k = 0; k < 4; k++) {
    tsl_expr *s1 = tsl_simplify(again[k], NULL);
    CU_ASSERT_TRUE(tsl_expr_equal(tsl_simplify(s1, NULL), s1));
  }
  tsl_expr *small = tsl_add(tsl_mod(tsl_mul(y, c64(3)), c64(2)),
                            tsl_mul(tsl_mod(tsl_div(tsl_mul(y, c64(3)), c64(2)), c64(3)), c64(2)));
  tsl_expr *s1 = tsl_simplify(small, NULL);
  CU_ASSERT_TRUE(tsl_expr_equal(tsl_simplify(s1, NULL), s1));
  check_same_values(small, s1, y, z, -40, 40);
}

static void test_canonical_form_of_permuted_sums(void) {
  tsl_expr *x = v64("x"), *y = v64("y"), *z = v64("z");
  tsl_expr *a = tsl_add(tsl_add(x, y), z);
  tsl_expr *b = tsl_add(tsl_add(z, x), y);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_sub(a, b), NULL), 0));
  CU_ASSERT_TRUE(tsl_prove(tsl_eq(a, b), NULL));
  /* like terms merge, constants fold, zero terms vanish, order is first appearance */
  tsl_expr *c = tsl_add(tsl_add(tsl_mul(x, c64(3)), tsl_sub(y, c64(2))), tsl_add(x, c64(4)));
  CHECK_EXPR(tsl_simplify(c, NULL), "((x*4) + y) + 2");
  tsl_expr *d = tsl_sub(tsl_add(y, x), tsl_add(y, c64(5)));
  CHECK_EXPR(tsl_simplify(d, NULL), "x - 5");
  CHECK_EXPR(tsl_simplify(tsl_sub(c64(3), tsl_add(x, y)), NULL), "(3 - x) - y");
  CHECK_EXPR(tsl_simplify(tsl_sub(tsl_mul(y, c64(2)), tsl_mul(x, c64(3))), NULL), "(y*2) - (x*3)");
  CHECK_EXPR(tsl_simplify(tsl_mul(tsl_add(x, c64(3)), c64(4)), NULL), "(x*4) + 12");
  /* deterministic: the same input gives the same text */
  char *s1 = tsl_expr_to_string(tsl_simplify(c, NULL)), *s2 = tsl_expr_to_string(tsl_simplify(c, NULL));
  CU_ASSERT_STRING_EQUAL(s1, s2);
  free(s1);
  free(s2);
  /* simplified permutations compare equal through their difference */
  tsl_expr *p1 = tsl_simplify(tsl_add(tsl_mul(x, c64(16)), tsl_add(y, tsl_mul(z, c64(256)))), NULL);
  tsl_expr *p2 = tsl_simplify(tsl_add(tsl_add(tsl_mul(z, c64(256)), y), tsl_mul(c64(16), x)), NULL);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_sub(p1, p2), NULL), 0));
}

static void test_min_max_decided_by_intervals(void) {
  tsl_expr *x = v64("x"), *y = v64("y");
  tsl_var_ranges *r = ranges2(x, 0, 7, y, 8, 20);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_min(x, c64(10)), r), x);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_max(x, c64(10)), r), 10));
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_min(x, y), r), x);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_max(x, y), r), y);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_min(tsl_add(x, c64(1)), x), NULL), x);
  CHECK_EXPR(tsl_simplify(tsl_max(tsl_add(x, c64(1)), x), NULL), "x + 1");
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_min(x, x), NULL), x);
  CHECK_EXPR(tsl_simplify(tsl_min(tsl_min(x, c64(8)), c64(4)), NULL), "min(x, 4)");
  CHECK_EXPR(tsl_simplify(tsl_max(c64(3), x), NULL), "max(x, 3)");
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_min(x, tsl_max(x, y)), NULL), x);
  CHECK_EXPR(tsl_simplify(tsl_min(x, y), NULL), "min(x, y)");
}

static void test_comparisons_decided_and_canonical(void) {
  tsl_expr *x = v64("x"), *y = v64("y"), *n = v64("n");
  tsl_var_ranges *r = ranges2(x, 0, 7, y, 0, 7);
  CU_ASSERT_TRUE(tsl_prove(tsl_lt(x, c64(8)), r));
  CU_ASSERT_TRUE(tsl_prove(tsl_lt(tsl_add(tsl_mul(x, c64(8)), y), c64(64)), r));
  CU_ASSERT_TRUE(tsl_disprove(tsl_ge(x, c64(8)), r));
  CU_ASSERT_FALSE(tsl_prove(tsl_lt(x, c64(7)), r));
  CU_ASSERT_FALSE(tsl_disprove(tsl_lt(x, c64(7)), r));
  CU_ASSERT_TRUE(tsl_prove(tsl_gt(tsl_add(n, c64(1)), n), NULL));
  CU_ASSERT_TRUE(tsl_disprove(tsl_lt(n, n), NULL));
  CU_ASSERT_TRUE(tsl_prove(tsl_le(n, n), NULL));
  CU_ASSERT_TRUE(tsl_prove(tsl_eq(tsl_mul(tsl_add(n, c64(1)), c64(2)), tsl_add(tsl_add(n, n), c64(2))), NULL));
  /* constants move right, > becomes <, common factors divide out */
  CHECK_EXPR(tsl_simplify(tsl_lt(tsl_add(n, c64(3)), c64(8)), NULL), "n < 5");
  CHECK_EXPR(tsl_simplify(tsl_gt(n, x), NULL), "x < n");
  CHECK_EXPR(tsl_simplify(tsl_lt(tsl_mul(n, c64(8)), c64(13)), NULL), "n < 2");
  CHECK_EXPR(tsl_simplify(tsl_le(tsl_mul(n, c64(8)), c64(13)), NULL), "n <= 1");
  CU_ASSERT_TRUE(tsl_disprove(tsl_eq(tsl_mul(n, c64(4)), c64(6)), NULL));
  CHECK_EXPR(tsl_simplify(tsl_eq(tsl_mul(n, c64(4)), c64(8)), NULL), "n == 2");
  CHECK_EXPR(tsl_simplify(tsl_not(tsl_lt(n, c64(4))), NULL), "4 <= n");
}

static void test_select_and_boolean_identities(void) {
  tsl_expr *x = v64("x"), *y = v64("y");
  tsl_expr *b = tsl_var("b", TSL_BOOL);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_select(tsl_bool(true), x, y), NULL), x);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_select(tsl_lt(c64(3), c64(2)), x, y), NULL), y);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_select(b, x, x), NULL), x);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_select(b, tsl_bool(true), tsl_bool(false)), NULL), b);
  CHECK_EXPR(tsl_simplify(tsl_select(tsl_not(b), x, y), NULL), "select(b, y, x)");
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_and(b, tsl_bool(true)), NULL), b);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_and(b, tsl_bool(false)), NULL), 0));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_or(b, tsl_bool(true)), NULL), 1));
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_or(tsl_bool(false), b), NULL), b);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_not(tsl_not(b)), NULL), b);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_and(b, b), NULL), b);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_and(b, tsl_not(b)), NULL), 0));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_or(tsl_not(b), b), NULL), 1));
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_eq(b, tsl_bool(true)), NULL), b);
  CHECK_EXPR(tsl_simplify(tsl_eq(b, tsl_bool(false)), NULL), "!b");
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_lt(x, x), NULL), 0));
}

static void test_let_of_constant_or_variable_is_inlined(void) {
  tsl_expr *x = v64("x"), *t = v64("t"), *u = v64("u");
  CHECK_EXPR(tsl_simplify(tsl_let(t, c64(3), tsl_mul(t, x)), NULL), "x*3");
  CHECK_EXPR(tsl_simplify(tsl_let(t, x, tsl_add(t, t)), NULL), "x*2");
  CHECK_EXPR(tsl_simplify(tsl_let(t, tsl_mul(x, x), c64(4)), NULL), "4");
  /* a real value stays bound, and its range is known in the body */
  tsl_var_ranges *r = ranges2(x, 0, 7, NULL, 0, 0);
  tsl_expr *e = tsl_let(u, tsl_mul(x, x), tsl_add(tsl_div(u, c64(64)), u));
  CHECK_EXPR(tsl_simplify(e, r), "(let u = x*x in u)");
}

static void test_ramp_and_broadcast_arithmetic(void) {
  tsl_expr *x = v64("x"), *y = v64("y");
  CHECK_EXPR(tsl_simplify(tsl_add(tsl_broadcast(x, 4), tsl_broadcast(y, 4)), NULL), "x4(x + y)");
  CHECK_EXPR(tsl_simplify(tsl_add(tsl_ramp(x, c64(1), 4), tsl_broadcast(c64(2), 4)), NULL), "ramp(x + 2, 1, 4)");
  CHECK_EXPR(tsl_simplify(tsl_sub(tsl_broadcast(y, 4), tsl_ramp(x, c64(1), 4)), NULL), "ramp(y - x, -1, 4)");
  CHECK_EXPR(tsl_simplify(tsl_add(tsl_ramp(x, c64(1), 4), tsl_ramp(y, c64(2), 4)), NULL), "ramp(x + y, 3, 4)");
  CHECK_EXPR(tsl_simplify(tsl_mul(tsl_ramp(x, c64(1), 4), tsl_broadcast(c64(8), 4)), NULL), "ramp(x*8, 8, 4)");
  CHECK_EXPR(tsl_simplify(tsl_ramp(x, tsl_sub(y, y), 4), NULL), "x4(x)");
  /* vectorized split index: ramp(x*8, 1, 8) / 8 -> x8(x), mod 8 -> ramp(0, 1, 8) */
  tsl_expr *rv = tsl_ramp(tsl_mul(x, c64(8)), c64(1), 8);
  CHECK_EXPR(tsl_simplify(tsl_div(rv, tsl_broadcast(c64(8), 8)), NULL), "x8(x)");
  CHECK_EXPR(tsl_simplify(tsl_mod(rv, tsl_broadcast(c64(8), 8)), NULL), "ramp(0, 1, 8)");
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_ramp(x, c64(16), 4), tsl_broadcast(c64(8), 4)), NULL), "ramp(x/8, 2, 4)");
  CHECK_EXPR(tsl_simplify(tsl_lt(tsl_broadcast(x, 4), tsl_broadcast(y, 4)), NULL), "x4(x < y)");
  tsl_var_ranges *r = ranges2(x, 0, 3, NULL, 0, 0);
  CHECK_EXPR(tsl_simplify(tsl_lt(tsl_ramp(x, c64(1), 4), tsl_broadcast(c64(8), 4)), r), "x4(true)");
  CHECK_EXPR(tsl_simplify(tsl_broadcast(tsl_add(c64(1), c64(2)), 4), NULL), "x4(3)");
}

static void test_float_folds_constants_only(void) {
  tsl_expr *e = tsl_simplify(tsl_add(tsl_f32(0.1f), tsl_f32(0.2f)), NULL);
  CU_ASSERT_EQUAL(e->kind, TSL_E_FLOAT);
  CU_ASSERT_TRUE(e->float_value == (double)(0.1f + 0.2f));
  e = tsl_simplify(tsl_mul(tsl_float(TSL_F64, 0.1), tsl_float(TSL_F64, 3.0)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && e->float_value == 0.1 * 3.0);
  /* f32 division rounds once to float */
  e = tsl_simplify(tsl_div(tsl_f32(1.0f), tsl_f32(3.0f)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && (float)e->float_value == 1.0f / 3.0f);
  tsl_expr *x = tsl_var("x", TSL_F32);
  /* no reassociation, no x+0 / x*0 identities */
  CHECK_EXPR(tsl_simplify(tsl_add(tsl_add(x, tsl_f32(1.0f)), tsl_f32(2.0f)), NULL), "(x + 1.0f) + 2.0f");
  CHECK_EXPR(tsl_simplify(tsl_add(x, tsl_f32(0.0f)), NULL), "x + 0.0f");
  CHECK_EXPR(tsl_simplify(tsl_mul(x, tsl_f32(0.0f)), NULL), "x*0.0f");
  CHECK_EXPR(tsl_simplify(tsl_sub(x, x), NULL), "x - x");
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_lt(tsl_f32(NAN), tsl_f32(1.0f)), NULL), 0));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_ne(tsl_f32(NAN), tsl_f32(NAN)), NULL), 1));
  /* x < x is not false for a float NaN */
  CU_ASSERT_EQUAL(tsl_simplify(tsl_lt(x, x), NULL)->kind, TSL_E_LT);
  tsl_expr *args[3] = {tsl_f32(2.0f), tsl_f32(3.0f), tsl_f32(1.0f)};
  e = tsl_simplify(tsl_call(TSL_CALL_FMA, TSL_F32, 3, args), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && e->float_value == 7.0);
}


/* shared/cases C08: max pooling must see NaN; folding constants must keep it. */
static void test_C08_min_max_folding_propagates_nan(void) {
  tsl_expr *e = tsl_simplify(tsl_max(tsl_f32(NAN), tsl_f32(1.0f)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && isnan(e->float_value));
  e = tsl_simplify(tsl_max(tsl_f32(-INFINITY), tsl_f32(NAN)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && isnan(e->float_value));
  e = tsl_simplify(tsl_min(tsl_float(TSL_F64, 2.0), tsl_float(TSL_F64, NAN)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && isnan(e->float_value));
  e = tsl_simplify(tsl_max(tsl_broadcast(tsl_f32(NAN), 8), tsl_broadcast(tsl_f32(0.0f), 8)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_BROADCAST && isnan(e->broadcast.value->float_value));
  /* -0 orders below +0 (llvm.minimum/maximum) */
  e = tsl_simplify(tsl_min(tsl_f32(0.0f), tsl_f32(-0.0f)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && e->float_value == 0.0 && signbit(e->float_value));
  e = tsl_simplify(tsl_max(tsl_f32(-0.0f), tsl_f32(0.0f)), NULL);
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && e->float_value == 0.0 && !signbit(e->float_value));
  /* a max with an unknown operand is never decided by "intervals" of floats */
  tsl_expr *x = tsl_var("x", TSL_F32);
  CU_ASSERT_EQUAL(tsl_simplify(tsl_max(x, tsl_f32(-INFINITY)), NULL)->kind, TSL_E_MAX);
  CU_ASSERT_EQUAL(tsl_simplify(tsl_max(x, x), NULL)->kind, TSL_E_MAX);
}

/* shared/cases C01: width 13 vectorized by 8: the tail predicate of the second vector
 * must survive simplification, and the first vector's must fold to all-true. */
static void test_C01_tail_predicate_of_width13_by8(void) {
  tsl_expr *xo = v64("xo");
  tsl_var_ranges *r = ranges2(xo, 0, 1, NULL, 0, 0);
  tsl_expr *lanes = tsl_ramp(tsl_mul(xo, c64(8)), c64(1), 8);
  tsl_expr *pred = tsl_lt(lanes, tsl_broadcast(c64(13), 8));
  tsl_expr *p = tsl_simplify(pred, r);
  CU_ASSERT_EQUAL(p->kind, TSL_E_LT);
  /* lane by lane the simplified predicate still says 13 valid columns */
  for (int64_t v = 0; v <= 1; v++) {
    int valid = 0;
    const tsl_expr *vars[1] = {xo};
    ref_env env = {1, vars, &v, NULL, NULL};
    for (int lane = 0; lane < 8; lane++) {
      int64_t b;
      CU_ASSERT_EQUAL(ref_eval_int(p, &env, lane, &b), REF_EVAL_OK);
      valid += (int)b;
    }
    CU_ASSERT_EQUAL(valid, v == 0 ? 8 : 5);
  }
  tsl_var_ranges *first = ranges2(xo, 0, 0, NULL, 0, 0);
  CHECK_EXPR(tsl_simplify(pred, first), "x8(true)");
  /* by 16: one vector, 13 of 16 lanes */
  tsl_expr *p16 = tsl_simplify(tsl_lt(tsl_ramp(c64(0), c64(1), 16), tsl_broadcast(c64(13), 16)), NULL);
  CU_ASSERT_EQUAL(p16->kind, TSL_E_LT);
}

static void test_casts_fold_exactly(void) {
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_cast(TSL_U8, c64(300)), NULL), 44));
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_cast(TSL_I8, c64(200)), NULL), -56));
  tsl_expr *e = tsl_simplify(tsl_cast(TSL_F32, c64(16777217)), NULL); /* 2^24 + 1 rounds once */
  CU_ASSERT_TRUE(e->kind == TSL_E_FLOAT && e->float_value == 16777216.0);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_cast(TSL_I32, tsl_f32(-2.75f)), NULL), -2));
  /* out of range float->int is not folded */
  CU_ASSERT_EQUAL(tsl_simplify(tsl_cast(TSL_I8, tsl_f32(300.0f)), NULL)->kind, TSL_E_CAST);
  tsl_expr *x = v64("x");
  tsl_var_ranges *r = ranges2(x, -5, 100, NULL, 0, 0);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_cast(TSL_I64, tsl_cast(TSL_I32, x)), r), x);
  CU_ASSERT_PTR_EQUAL(tsl_simplify(tsl_cast(TSL_I64, tsl_cast(TSL_I8, x)), r), x); /* [-5, 100] fits i8 */
  tsl_var_ranges *r2 = ranges2(x, -5, 200, NULL, 0, 0);
  CU_ASSERT_EQUAL(tsl_simplify(tsl_cast(TSL_I64, tsl_cast(TSL_I8, x)), r2)->kind, TSL_E_CAST);
}

static void test_narrow_types_wrap_correctly(void) {
  tsl_expr *u = tsl_var("u", TSL_U8), *c = tsl_var("c", TSL_I8);
  CHECK_EXPR(tsl_simplify(tsl_add(tsl_add(u, tsl_int(TSL_U8, 200)), tsl_int(TSL_U8, 100)), NULL), "u + 44u8");
  CHECK_EXPR(tsl_simplify(tsl_sub(u, tsl_int(TSL_U8, 1)), NULL), "u - 1u8");
  /* i8: c + 1 > c is false at 127; nothing may "prove" it */
  CU_ASSERT_FALSE(tsl_prove(tsl_gt(tsl_add(c, tsl_int(TSL_I8, 1)), c), NULL));
  CU_ASSERT_FALSE(tsl_disprove(tsl_gt(tsl_add(c, tsl_int(TSL_I8, 1)), c), NULL));
  /* u8 (u*16 + 3)/16 is not u when u*16 wraps */
  tsl_expr *e = tsl_simplify(tsl_div(tsl_add(tsl_mul(u, tsl_int(TSL_U8, 16)), tsl_int(TSL_U8, 3)), tsl_int(TSL_U8, 16)), NULL);
  CU_ASSERT_FALSE(e == u);
  tsl_var_ranges *r = ranges2(u, 0, 9, NULL, 0, 0);
  CU_ASSERT_TRUE(is_int(tsl_simplify(tsl_div(u, tsl_int(TSL_U8, 16)), r), 0));
}


static void test_conditions_narrow_ranges_only_where_safe(void) {
  tsl_expr *x = v64("x"), *y = v64("y");
  /* && / || / select learn from their condition ... */
  CU_ASSERT_TRUE(tsl_disprove(tsl_and(tsl_lt(x, c64(2)), tsl_le(c64(9), x)), NULL));
  CU_ASSERT_TRUE(tsl_prove(tsl_or(tsl_lt(x, c64(9)), tsl_gt(x, c64(3))), NULL));
  CHECK_EXPR(tsl_simplify(tsl_and(tsl_lt(x, c64(8)), tsl_lt(x, c64(10))), NULL), "x < 8");
  CHECK_EXPR(tsl_simplify(tsl_select(tsl_lt(x, c64(8)), tsl_min(x, c64(12)), c64(0)), NULL), "select(x < 8, x, 0)");
  CHECK_EXPR(tsl_simplify(tsl_select(tsl_le(x, y), x, y), NULL), "min(x, y)");
  CHECK_EXPR(tsl_simplify(tsl_select(tsl_lt(x, y), y, x), NULL), "max(y, x)");
  /* ... but never where the subtree reads memory or divides by a variable: select and
   * && evaluate both sides, so a clamp or a guard must stay */
  int64_t n = 13;
  tsl_buffer *A = tsl_buffer_new("A", TSL_I64, 1, &n, TSL_BUF_ARG);
  tsl_expr *clamped = tsl_min(x, c64(12));
  tsl_expr *sel = tsl_select(tsl_lt(x, c64(13)), tsl_load(A, 1, &clamped, NULL), c64(0));
  CHECK_EXPR(tsl_simplify(sel, NULL), "select(x < 13, A[min(x, 12)], 0)");
  tsl_expr *guard = tsl_and(tsl_ge(x, c64(5)), tsl_lt(c64(0), tsl_div(y, tsl_max(x, c64(1)))));
  CHECK_EXPR(tsl_simplify(guard, NULL), "(5 <= x) && (0 < (y/max(x, 1)))");
}

static void test_div_mod_move_whole_multiples_of_the_constant(void) {
  tsl_expr *y = v64("y");
  CHECK_EXPR(tsl_simplify(tsl_mod(tsl_add(y, c64(30)), c64(10)), NULL), "y % 10");
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_add(y, c64(30)), c64(10)), NULL), "(y/10) + 3");
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_sub(y, c64(1)), c64(8)), NULL), "(y - 1)/8");
  CHECK_EXPR(tsl_simplify(tsl_div(tsl_sub(y, c64(17)), c64(8)), NULL), "((y - 1)/8) - 2");
}

static void test_simplifier_is_fast_on_big_index_exprs(void) {
  clock_t t0 = clock();
  /* a flattened 8-d index with nested split/fuse div/mod, simplified 200 times */
  tsl_expr *vars[8];
  tsl_var_ranges *r = tsl_var_ranges_new();
  for (int i = 0; i < 8; i++) {
    vars[i] = v64("i");
    tsl_var_ranges_set(r, vars[i], tsl_interval_range(0, 3 + i));
  }
  tsl_expr *idx = c64(0);
  for (int i = 0; i < 8; i++) {
    tsl_expr *fused = tsl_add(tsl_mul(vars[i], c64(16)), vars[(i + 1) % 8]);
    tsl_expr *part = tsl_add(tsl_mul(tsl_div(fused, c64(16)), c64(16)), tsl_mod(fused, c64(16)));
    idx = tsl_add(tsl_mul(idx, c64(20)), part);
  }
  tsl_expr *s = NULL;
  for (int k = 0; k < 200; k++) s = tsl_simplify(idx, r);
  CU_ASSERT_PTR_NOT_NULL(s);
  /* a DAG whose tree has 2^40 leaves */
  tsl_expr *x = v64("x"), *d = x;
  for (int i = 0; i < 40; i++) d = tsl_add(d, d);
  CHECK_EXPR(tsl_simplify(d, NULL), "x*1099511627776");
  tsl_expr *m = x;
  for (int i = 0; i < 40; i++) m = tsl_min(tsl_add(m, c64(1)), tsl_max(m, c64(-1)));
  CU_ASSERT_PTR_NOT_NULL(tsl_simplify(m, NULL));
  /* huge shared atoms merge like small ones */
  tsl_expr *m2 = x;
  for (int i = 0; i < 40; i++) m2 = tsl_min(tsl_add(m2, c64(1)), tsl_max(m2, c64(-1)));
  tsl_expr *sum = tsl_simplify(tsl_sub(tsl_add(tsl_add(m, c64(1)), m2), tsl_mul(m, c64(2))), NULL);
  CU_ASSERT_TRUE(is_int(sum, 1));
  /* a long chain of additions is linear work */
  tsl_expr *chain = c64(0);
  for (int i = 0; i < 3000; i++) chain = tsl_add(chain, tsl_mul(vars[i % 8], c64(i % 5)));
  CU_ASSERT_EQUAL(tsl_simplify(chain, NULL)->kind, TSL_E_ADD);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  CU_ASSERT_TRUE(secs < 2.0);
}

void tsl_tests_ir_simplify(void) {
  static const ir_test tests[] = {
      {"test_floor_div_mod_constant_folding", test_floor_div_mod_constant_folding},
      {"test_division_by_zero_is_never_folded", test_division_by_zero_is_never_folded},
      {"test_split_index_div_mod_with_ranges", test_split_index_div_mod_with_ranges},
      {"test_div_mod_identities", test_div_mod_identities},
      {"test_fused_index_recombines", test_fused_index_recombines},
      {"test_fused_axes_index_split_recombines", test_fused_axes_index_split_recombines},
      {"test_fused_index_split_recombines_in_any_order_and_type", test_fused_index_split_recombines_in_any_order_and_type},
      {"test_canonical_form_of_permuted_sums", test_canonical_form_of_permuted_sums},
      {"test_min_max_decided_by_intervals", test_min_max_decided_by_intervals},
      {"test_comparisons_decided_and_canonical", test_comparisons_decided_and_canonical},
      {"test_select_and_boolean_identities", test_select_and_boolean_identities},
      {"test_let_of_constant_or_variable_is_inlined", test_let_of_constant_or_variable_is_inlined},
      {"test_ramp_and_broadcast_arithmetic", test_ramp_and_broadcast_arithmetic},
      {"test_float_folds_constants_only", test_float_folds_constants_only},
      {"test_C08_min_max_folding_propagates_nan", test_C08_min_max_folding_propagates_nan},
      {"test_C01_tail_predicate_of_width13_by8", test_C01_tail_predicate_of_width13_by8},
      {"test_casts_fold_exactly", test_casts_fold_exactly},
      {"test_narrow_types_wrap_correctly", test_narrow_types_wrap_correctly},
      {"test_conditions_narrow_ranges_only_where_safe", test_conditions_narrow_ranges_only_where_safe},
      {"test_div_mod_move_whole_multiples_of_the_constant", test_div_mod_move_whole_multiples_of_the_constant},
      {"test_simplifier_is_fast_on_big_index_exprs", test_simplifier_is_fast_on_big_index_exprs},
      {NULL, NULL}};
  ir_add_suite("ir_simplify", tests);
}
