/* Winograd transform generation: the rational arithmetic, the matrices against the ones
 * Lavin & Gray print (CVPR 2016, section 4), and the defining identity
 * y = A^T [(G g) (.) (B^T d)] checked EXACTLY (in rationals) against a direct
 * correlation written here, in 1-D and nested 2-D, for several F(m, r) and point sets.
 */
#include <CUnit/CUnit.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/conv2d/winograd_transform.h"
#include "winograd/winograd_tests.h"

static tsl_rational Q(int64_t num, int64_t den) {
  tsl_rational r;
  CU_ASSERT_EQUAL_FATAL(tsl_rational_make(num, den, &r), TSL_OK);
  return r;
}

static bool q_eq(tsl_rational a, int64_t num, int64_t den) {
  tsl_rational b;
  return tsl_rational_make(num, den, &b) == TSL_OK && tsl_rational_eq(a, b);
}

static tsl_rational qadd(tsl_rational a, tsl_rational b) {
  tsl_rational r = {0, 1};
  CU_ASSERT_EQUAL(tsl_rational_add(a, b, &r), TSL_OK);
  return r;
}

static tsl_rational qmul(tsl_rational a, tsl_rational b) {
  tsl_rational r = {0, 1};
  CU_ASSERT_EQUAL(tsl_rational_mul(a, b, &r), TSL_OK);
  return r;
}

static void test_rational_arithmetic_is_exact_and_reduced(void) {
  tsl_rational r = Q(6, -4);
  CU_ASSERT(r.num == -3 && r.den == 2);
  CU_ASSERT(q_eq(Q(0, -7), 0, 1));
  CU_ASSERT_EQUAL(Q(0, -7).den, 1);
  CU_ASSERT(q_eq(qadd(Q(1, 6), Q(1, 3)), 1, 2));
  tsl_rational d;
  CU_ASSERT_EQUAL(tsl_rational_sub(Q(1, 6), Q(1, 2), &d), TSL_OK);
  CU_ASSERT(q_eq(d, -1, 3));
  CU_ASSERT(q_eq(qmul(Q(-2, 3), Q(9, 4)), -3, 2));
  CU_ASSERT_EQUAL(tsl_rational_div(Q(1, 24), Q(-1, 6), &d), TSL_OK);
  CU_ASSERT(q_eq(d, -1, 4));
  /* 1/3 + 1/6 - 1/2 == 0 exactly, where doubles leave a residue */
  CU_ASSERT(tsl_rational_is_zero(qadd(qadd(Q(1, 3), Q(1, 6)), Q(-1, 2))));
  char buf[32];
  CU_ASSERT_STRING_EQUAL(tsl_rational_str(Q(-10, 60), buf, sizeof buf), "-1/6");
  CU_ASSERT_STRING_EQUAL(tsl_rational_str(Q(12, 4), buf, sizeof buf), "3");
  CU_ASSERT_DOUBLE_EQUAL(tsl_rational_to_double(Q(1, 8)), 0.125, 0.0);
  /* cross-cancellation keeps products of large coprime parts representable */
  tsl_rational big = Q(INT64_MAX / 3, 7), inv = Q(7, INT64_MAX / 3);
  CU_ASSERT(q_eq(qmul(big, inv), 1, 1));
}

static void test_rational_overflow_and_zero_division_are_errors(void) {
  tsl_rational r;
  CU_ASSERT_EQUAL(tsl_rational_make(1, 0, &r), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "zero denominator"));
  CU_ASSERT_EQUAL(tsl_rational_make(INT64_MIN, 1, &r), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_rational_add(Q(INT64_MAX, 1), Q(1, 1), &r), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "overflows 64 bits"));
  CU_ASSERT_EQUAL(tsl_rational_mul(Q(INT64_MAX / 2, 1), Q(3, 1), &r), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_rational_add(Q(1, INT64_MAX - 1), Q(1, INT64_MAX), &r), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_rational_div(Q(1, 2), Q(0, 1), &r), TSL_ERR_INVALID);
  /* a transform whose construction overflows is refused, not returned wrong */
  tsl_rational pts[8];
  for (int i = 0; i < 8; i++) pts[i] = Q(1000003 + 2 * i, 999983 - 2 * i);
  tsl_winograd_transform T;
  CU_ASSERT_EQUAL(tsl_winograd_make(7, 3, 8, pts, &T), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "overflows"));
}

static void test_parse_points_and_make_errors(void) {
  tsl_rational p[8];
  int n = 0;
  CU_ASSERT_EQUAL(tsl_winograd_parse_points(" 0, 1,-1 , 1/2,-2/4", p, 8, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 5);
  CU_ASSERT(q_eq(p[3], 1, 2) && q_eq(p[4], -1, 2) && q_eq(p[2], -1, 1));
  CU_ASSERT_EQUAL(tsl_winograd_parse_points("0, 1,", p, 8, &n), TSL_ERR_PARSE);
  CU_ASSERT_EQUAL(tsl_winograd_parse_points("0; 1", p, 8, &n), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "column 2"));
  CU_ASSERT_EQUAL(tsl_winograd_parse_points("1/0", p, 8, &n), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_winograd_parse_points("1,2,3", p, 2, &n), TSL_ERR_INVALID);
  tsl_winograd_transform T;
  CU_ASSERT_EQUAL(tsl_winograd_parse_points("0, 1, 1", p, 8, &n), TSL_OK);
  CU_ASSERT_EQUAL(tsl_winograd_make(2, 3, 3, p, &T), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "given twice"));
  CU_ASSERT_EQUAL(tsl_winograd_make(4, 3, 3, p, &T), TSL_ERR_INVALID); /* needs 5 points */
  CU_ASSERT_EQUAL(tsl_winograd_make(0, 3, 0, p, &T), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_winograd_default(3, &T), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_EQUAL(tsl_winograd_default(5, &T), TSL_ERR_UNSUPPORTED);
}

/* The documented default points (docs/winograd.md, winograd_transform.h). */
static void test_default_points_are_the_documented_ones(void) {
  static const struct {
    int m;
    const char *pts;
  } want[] = {{2, "0, 1, -1"}, {4, "0, 1, -1, 1/2, -2"}, {6, "0, 1, -1, 2, -2, 1/2, -1/2"}};
  for (int i = 0; i < 3; i++) {
    int n = 0;
    const char *got = tsl_winograd_default_points(want[i].m, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want[i].pts);
    CU_ASSERT_EQUAL(n, want[i].m + 1);
    tsl_winograd_transform T;
    CU_ASSERT_EQUAL_FATAL(tsl_winograd_default(want[i].m, &T), TSL_OK);
    CU_ASSERT(T.m == want[i].m && T.r == 3 && T.alpha == want[i].m + 2 && T.npoints == want[i].m + 1);
  }
  CU_ASSERT_PTR_NULL(tsl_winograd_default_points(3, NULL));
}

/* ---- published matrices ---- */

typedef struct fraction {
  int64_t n, d;
} fraction;

/* Lavin & Gray's F(2x2, 3x3) (section 4.1). */
static const fraction lg2_BT[4][4] = {{{1, 1}, {0, 1}, {-1, 1}, {0, 1}},
                                      {{0, 1}, {1, 1}, {1, 1}, {0, 1}},
                                      {{0, 1}, {-1, 1}, {1, 1}, {0, 1}},
                                      {{0, 1}, {1, 1}, {0, 1}, {-1, 1}}};
static const fraction lg2_G[4][3] = {{{1, 1}, {0, 1}, {0, 1}},
                                     {{1, 2}, {1, 2}, {1, 2}},
                                     {{1, 2}, {-1, 2}, {1, 2}},
                                     {{0, 1}, {0, 1}, {1, 1}}};
static const fraction lg2_AT[2][4] = {{{1, 1}, {1, 1}, {1, 1}, {0, 1}}, {{0, 1}, {1, 1}, {-1, 1}, {-1, 1}}};

/* Lavin & Gray's F(4x4, 3x3) (section 4.2), points 0, 1, -1, 2, -2, inf. */
static const fraction lg4_BT[6][6] = {
    {{4, 1}, {0, 1}, {-5, 1}, {0, 1}, {1, 1}, {0, 1}},   {{0, 1}, {-4, 1}, {-4, 1}, {1, 1}, {1, 1}, {0, 1}},
    {{0, 1}, {4, 1}, {-4, 1}, {-1, 1}, {1, 1}, {0, 1}},  {{0, 1}, {-2, 1}, {-1, 1}, {2, 1}, {1, 1}, {0, 1}},
    {{0, 1}, {2, 1}, {-1, 1}, {-2, 1}, {1, 1}, {0, 1}},  {{0, 1}, {4, 1}, {0, 1}, {-5, 1}, {0, 1}, {1, 1}}};
static const fraction lg4_G[6][3] = {{{1, 4}, {0, 1}, {0, 1}},   {{-1, 6}, {-1, 6}, {-1, 6}},
                                     {{-1, 6}, {1, 6}, {-1, 6}}, {{1, 24}, {1, 12}, {1, 6}},
                                     {{1, 24}, {-1, 12}, {1, 6}}, {{0, 1}, {0, 1}, {1, 1}}};
static const fraction lg4_AT[4][6] = {{{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 1}},
                                      {{0, 1}, {1, 1}, {-1, 1}, {2, 1}, {-2, 1}, {0, 1}},
                                      {{0, 1}, {1, 1}, {1, 1}, {4, 1}, {4, 1}, {0, 1}},
                                      {{0, 1}, {1, 1}, {-1, 1}, {8, 1}, {-8, 1}, {1, 1}}};

static tsl_rational fq(fraction f) { return Q(f.n, f.d); }

static void test_F4_equals_lavin_gray_published_matrices(void) {
  tsl_rational p[5];
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_winograd_parse_points("0, 1, -1, 2, -2", p, 5, &n), TSL_OK);
  tsl_winograd_transform T;
  CU_ASSERT_EQUAL_FATAL(tsl_winograd_make(4, 3, n, p, &T), TSL_OK);
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 6; j++) CU_ASSERT(tsl_rational_eq(T.BT[i][j], fq(lg4_BT[i][j])));
    for (int j = 0; j < 3; j++) CU_ASSERT(tsl_rational_eq(T.G[i][j], fq(lg4_G[i][j])));
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++) CU_ASSERT(tsl_rational_eq(T.AT[i][j], fq(lg4_AT[i][j])));
}

/* Is row `got` == s * row `want` for some rational s != 0? Writes s. */
static bool row_scaled(const tsl_rational *got, const fraction *want, int n, tsl_rational *s) {
  int k = -1;
  for (int i = 0; i < n && k < 0; i++)
    if (want[i].n != 0) k = i;
  if (k < 0 || tsl_rational_is_zero(got[k])) return false;
  if (tsl_rational_div(got[k], fq(want[k]), s) != TSL_OK) return false;
  for (int i = 0; i < n; i++)
    if (!tsl_rational_eq(got[i], qmul(*s, fq(want[i])))) return false;
  return true;
}

/* The published F(2x2, 3x3) uses other signs for two points; an algorithm is the same
 * up to scaling point i by (a_i in B^T, b_i in G, 1 / (a_i b_i) in A^T). */
static void test_F2_equals_lavin_gray_published_matrices_up_to_point_scaling(void) {
  tsl_winograd_transform T;
  CU_ASSERT_EQUAL_FATAL(tsl_winograd_default(2, &T), TSL_OK);
  int rescaled = 0;
  for (int i = 0; i < 4; i++) {
    tsl_rational a, b, ab, inv;
    CU_ASSERT_FATAL(row_scaled(T.BT[i], lg2_BT[i], 4, &a));
    CU_ASSERT_FATAL(row_scaled(T.G[i], lg2_G[i], 3, &b));
    CU_ASSERT_EQUAL_FATAL(tsl_rational_mul(a, b, &ab), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_rational_div(Q(1, 1), ab, &inv), TSL_OK);
    for (int j = 0; j < 2; j++) CU_ASSERT(tsl_rational_eq(T.AT[j][i], qmul(inv, fq(lg2_AT[j][i]))));
    rescaled += !q_eq(a, 1, 1);
  }
  CU_ASSERT_EQUAL(rescaled, 2); /* the points 0 and infinity differ in sign */
}

/* ---- the identity, exactly ---- */

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static int64_t rand_int(int64_t lo, int64_t hi) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (int64_t)((rng_state >> 33) % (uint64_t)(hi - lo + 1));
}

/* y[i] = sum_k d[i + k] g[k] computed directly vs A^T [(G g) (.) (B^T d)], in rationals */
static void check_1d_identity(const tsl_winograd_transform *T) {
  int m = T->m, r = T->r, a = T->alpha;
  for (int trial = 0; trial < 5; trial++) {
    tsl_rational d[TSL_WINOGRAD_MAX_ALPHA], g[TSL_WINOGRAD_MAX_R];
    for (int i = 0; i < a; i++) d[i] = Q(rand_int(-60, 60), rand_int(1, 9));
    for (int k = 0; k < r; k++) g[k] = Q(rand_int(-60, 60), rand_int(1, 9));
    tsl_rational gg[TSL_WINOGRAD_MAX_ALPHA], bd[TSL_WINOGRAD_MAX_ALPHA];
    for (int i = 0; i < a; i++) {
      gg[i] = bd[i] = tsl_rational_int(0);
      for (int k = 0; k < r; k++) gg[i] = qadd(gg[i], qmul(T->G[i][k], g[k]));
      for (int j = 0; j < a; j++) bd[i] = qadd(bd[i], qmul(T->BT[i][j], d[j]));
    }
    for (int i = 0; i < m; i++) {
      tsl_rational direct = tsl_rational_int(0), wino = tsl_rational_int(0);
      for (int k = 0; k < r; k++) direct = qadd(direct, qmul(d[i + k], g[k]));
      for (int j = 0; j < a; j++) wino = qadd(wino, qmul(T->AT[i][j], qmul(gg[j], bd[j])));
      if (!tsl_rational_eq(direct, wino)) {
        char x[48], y[48];
        printf("\n  F(%d,%d) output %d: direct %s, winograd %s\n", m, r, i, tsl_rational_str(direct, x, sizeof x),
               tsl_rational_str(wino, y, sizeof y));
      }
      CU_ASSERT(tsl_rational_eq(direct, wino));
    }
  }
}

static void test_1d_identity_holds_exactly_for_many_F_and_points(void) {
  static const struct {
    int m, r;
    const char *pts;
  } cases[] = {
      {2, 3, "0, 1, -1"},           {4, 3, "0, 1, -1, 2, -2"},        {4, 3, "0, 1, -1, 1/2, -1/2"},
      {4, 3, "0, 1, -1, 1/2, -2"},   {6, 3, "0, 1, -1, 2, -2, 1/2, -1/2"}, {6, 3, "0, 1, -1, 1/2, -1/2, 3/2, -3/2"},
      {3, 3, "0, 1, -1, 2"},         {2, 2, "0, 1"},                  {3, 2, "0, 1, -1"},
      {2, 5, "0, 1, -1, 2, -2"},     {1, 3, "0, 1"},                  {8, 3, "0, 1, -1, 2, -2, 1/2, -1/2, 3, -3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_rational p[TSL_WINOGRAD_MAX_ALPHA];
    int n = 0;
    CU_ASSERT_EQUAL_FATAL(tsl_winograd_parse_points(cases[i].pts, p, TSL_WINOGRAD_MAX_ALPHA, &n), TSL_OK);
    tsl_winograd_transform T;
    tsl_status st = tsl_winograd_make(cases[i].m, cases[i].r, n, p, &T);
    if (st != TSL_OK) printf("\n  F(%d,%d) %s: %s\n", cases[i].m, cases[i].r, cases[i].pts, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    check_1d_identity(&T);
  }
}

/* 2-D nesting: Y = A^T [(G g G^T) (.) (B^T d B)] A == the 2-D correlation, for the
 * defaults of m = 2, 4, 6 (what the operators compute, before float rounding). */
static void test_2d_nesting_holds_exactly_for_the_defaults(void) {
  for (int mi = 0; mi < 3; mi++) {
    tsl_winograd_transform T;
    CU_ASSERT_EQUAL_FATAL(tsl_winograd_default(2 + 2 * mi, &T), TSL_OK);
    int m = T.m, a = T.alpha;
    tsl_rational d[8][8], g[3][3], u[8][8], v[8][8], t1[8][8], t2[8][8];
    for (int i = 0; i < a; i++)
      for (int j = 0; j < a; j++) d[i][j] = tsl_rational_int(rand_int(-100, 100));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) g[i][j] = Q(rand_int(-100, 100), rand_int(1, 5));
    /* u = G g G^T */
    for (int i = 0; i < a; i++)
      for (int j = 0; j < 3; j++) {
        t1[i][j] = tsl_rational_int(0);
        for (int k = 0; k < 3; k++) t1[i][j] = qadd(t1[i][j], qmul(T.G[i][k], g[k][j]));
      }
    for (int i = 0; i < a; i++)
      for (int j = 0; j < a; j++) {
        u[i][j] = tsl_rational_int(0);
        for (int k = 0; k < 3; k++) u[i][j] = qadd(u[i][j], qmul(t1[i][k], T.G[j][k]));
      }
    /* v = B^T d B */
    for (int i = 0; i < a; i++)
      for (int j = 0; j < a; j++) {
        t2[i][j] = tsl_rational_int(0);
        for (int k = 0; k < a; k++) t2[i][j] = qadd(t2[i][j], qmul(T.BT[i][k], d[k][j]));
      }
    for (int i = 0; i < a; i++)
      for (int j = 0; j < a; j++) {
        v[i][j] = tsl_rational_int(0);
        for (int k = 0; k < a; k++) v[i][j] = qadd(v[i][j], qmul(t2[i][k], T.BT[j][k]));
      }
    for (int y = 0; y < m; y++)
      for (int x = 0; x < m; x++) {
        tsl_rational direct = tsl_rational_int(0), wino = tsl_rational_int(0);
        for (int r = 0; r < 3; r++)
          for (int s = 0; s < 3; s++) direct = qadd(direct, qmul(d[y + r][x + s], g[r][s]));
        for (int i = 0; i < a; i++)
          for (int j = 0; j < a; j++)
            wino = qadd(wino, qmul(qmul(T.AT[y][i], T.AT[x][j]), qmul(u[i][j], v[i][j])));
        CU_ASSERT(tsl_rational_eq(direct, wino));
      }
  }
}

/* The matrices as doubles give the correlation to rounding error: an independent check
 * of the rational arithmetic itself. */
static void test_identity_in_double_arithmetic(void) {
  for (int mi = 0; mi < 3; mi++) {
    tsl_winograd_transform T;
    CU_ASSERT_EQUAL_FATAL(tsl_winograd_default(2 + 2 * mi, &T), TSL_OK);
    int m = T.m, a = T.alpha;
    double d[8], g[3], gg[8], bd[8];
    for (int i = 0; i < a; i++) d[i] = (double)rand_int(-1000, 1000) / 997.0;
    for (int k = 0; k < 3; k++) g[k] = (double)rand_int(-1000, 1000) / 991.0;
    for (int i = 0; i < a; i++) {
      gg[i] = bd[i] = 0.0;
      for (int k = 0; k < 3; k++) gg[i] += tsl_rational_to_double(T.G[i][k]) * g[k];
      for (int j = 0; j < a; j++) bd[i] += tsl_rational_to_double(T.BT[i][j]) * d[j];
    }
    for (int i = 0; i < m; i++) {
      double direct = 0.0, wino = 0.0;
      for (int k = 0; k < 3; k++) direct += d[i + k] * g[k];
      for (int j = 0; j < a; j++) wino += tsl_rational_to_double(T.AT[i][j]) * gg[j] * bd[j];
      CU_ASSERT(fabs(direct - wino) <= 1e-12 * (1.0 + fabs(direct)));
    }
  }
}

void tsl_tests_winograd_transform(void) {
  CU_pSuite s = CU_add_suite("winograd_transform", NULL, NULL);
  CU_add_test(s, "test_rational_arithmetic_is_exact_and_reduced", test_rational_arithmetic_is_exact_and_reduced);
  CU_add_test(s, "test_rational_overflow_and_zero_division_are_errors",
              test_rational_overflow_and_zero_division_are_errors);
  CU_add_test(s, "test_parse_points_and_make_errors", test_parse_points_and_make_errors);
  CU_add_test(s, "test_default_points_are_the_documented_ones", test_default_points_are_the_documented_ones);
  CU_add_test(s, "test_F4_equals_lavin_gray_published_matrices", test_F4_equals_lavin_gray_published_matrices);
  CU_add_test(s, "test_F2_equals_lavin_gray_published_matrices_up_to_point_scaling",
              test_F2_equals_lavin_gray_published_matrices_up_to_point_scaling);
  CU_add_test(s, "test_1d_identity_holds_exactly_for_many_F_and_points",
              test_1d_identity_holds_exactly_for_many_F_and_points);
  CU_add_test(s, "test_2d_nesting_holds_exactly_for_the_defaults", test_2d_nesting_holds_exactly_for_the_defaults);
  CU_add_test(s, "test_identity_in_double_arithmetic", test_identity_in_double_arithmetic);
}
