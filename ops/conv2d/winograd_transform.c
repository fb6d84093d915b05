/* Exact rational arithmetic and the Toom-Cook construction of Winograd F(m, r)
 * transforms (see winograd_transform.h for the formulas and the source). */
#include "ops/conv2d/winograd_transform.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rationals ------------------------------------------------------------ */

static int64_t gcd64(int64_t a, int64_t b) {
  /* callers pass values > INT64_MIN, so negation is safe */
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

tsl_rational tsl_rational_int(int64_t v) {
  tsl_rational r = {v, 1};
  return r;
}

tsl_status tsl_rational_make(int64_t num, int64_t den, tsl_rational *out) {
  if (den == 0) return tsl_error(TSL_ERR_INVALID, "rational: %" PRId64 "/0 (zero denominator)", num);
  if (num == INT64_MIN || den == INT64_MIN)
    return tsl_error(TSL_ERR_INVALID, "rational: %" PRId64 "/%" PRId64 " overflows 64 bits", num, den);
  if (den < 0) {
    num = -num;
    den = -den;
  }
  int64_t g = gcd64(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
  out->num = num;
  out->den = den;
  return TSL_OK;
}

static tsl_status overflow(const char *op, tsl_rational a, tsl_rational b) {
  return tsl_error(TSL_ERR_INVALID, "rational: %" PRId64 "/%" PRId64 " %s %" PRId64 "/%" PRId64 " overflows 64 bits",
                   a.num, a.den, op, b.num, b.den);
}

/* a/b + sign * c/d over the lcm of the denominators, every product checked. */
static tsl_status add_signed(tsl_rational a, tsl_rational b, int sign, tsl_rational *out) {
  int64_t g = gcd64(a.den, b.den);
  int64_t da = b.den / g, db = a.den / g; /* a.num*da + b.num*db over a.den*da */
  int64_t x, y, s, den;
  if (__builtin_mul_overflow(a.num, da, &x) || __builtin_mul_overflow(b.num, db, &y) ||
      __builtin_mul_overflow(a.den, da, &den))
    return overflow(sign > 0 ? "+" : "-", a, b);
  if (sign > 0 ? __builtin_add_overflow(x, y, &s) : __builtin_sub_overflow(x, y, &s))
    return overflow(sign > 0 ? "+" : "-", a, b);
  if (s == INT64_MIN) return overflow(sign > 0 ? "+" : "-", a, b);
  return tsl_rational_make(s, den, out);
}

tsl_status tsl_rational_add(tsl_rational a, tsl_rational b, tsl_rational *out) { return add_signed(a, b, 1, out); }
tsl_status tsl_rational_sub(tsl_rational a, tsl_rational b, tsl_rational *out) { return add_signed(a, b, -1, out); }

tsl_status tsl_rational_mul(tsl_rational a, tsl_rational b, tsl_rational *out) {
  /* cross-cancel first so the products stay as small as the result allows */
  int64_t g1 = gcd64(a.num, b.den), g2 = gcd64(b.num, a.den);
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  int64_t n, d;
  if (__builtin_mul_overflow(a.num / g1, b.num / g2, &n) || __builtin_mul_overflow(a.den / g2, b.den / g1, &d) ||
      n == INT64_MIN)
    return overflow("*", a, b);
  return tsl_rational_make(n, d, out);
}

tsl_status tsl_rational_div(tsl_rational a, tsl_rational b, tsl_rational *out) {
  if (b.num == 0) return tsl_error(TSL_ERR_INVALID, "rational: division of %" PRId64 "/%" PRId64 " by zero", a.num, a.den);
  tsl_rational inv;
  tsl_status st = tsl_rational_make(b.den, b.num, &inv);
  if (st != TSL_OK) return st;
  return tsl_rational_mul(a, inv, out);
}

bool tsl_rational_eq(tsl_rational a, tsl_rational b) { return a.num == b.num && a.den == b.den; }
bool tsl_rational_is_zero(tsl_rational a) { return a.num == 0; }
double tsl_rational_to_double(tsl_rational a) { return (double)a.num / (double)a.den; }

const char *tsl_rational_str(tsl_rational a, char *buf, size_t n) {
  if (a.den == 1) snprintf(buf, n, "%" PRId64, a.num);
  else snprintf(buf, n, "%" PRId64 "/%" PRId64, a.num, a.den);
  return buf;
}

/* ---- polynomials (coefficients, lowest degree first) ----------------------- */

/* poly[0..deg] *= (x - p); poly has room for deg + 2 coefficients. */
static tsl_status poly_mul_linear(tsl_rational *poly, int deg, tsl_rational p) {
  poly[deg + 1] = poly[deg];
  for (int t = deg; t >= 1; t--) {
    tsl_rational prod;
    tsl_status st = tsl_rational_mul(p, poly[t], &prod);
    if (st == TSL_OK) st = tsl_rational_sub(poly[t - 1], prod, &poly[t]);
    if (st != TSL_OK) return st;
  }
  tsl_rational prod;
  tsl_status st = tsl_rational_mul(p, poly[0], &prod);
  if (st != TSL_OK) return st;
  poly[0].num = -prod.num;
  poly[0].den = prod.den;
  return TSL_OK;
}

static tsl_status power(tsl_rational p, int k, tsl_rational *out) {
  tsl_rational v = tsl_rational_int(1);
  for (int i = 0; i < k; i++) {
    tsl_status st = tsl_rational_mul(v, p, &v);
    if (st != TSL_OK) return st;
  }
  *out = v;
  return TSL_OK;
}

tsl_status tsl_winograd_make(int m, int r, int npoints, const tsl_rational *points, tsl_winograd_transform *out) {
  if (!out || (npoints > 0 && !points)) return tsl_error(TSL_ERR_INVALID, "winograd transform: NULL argument");
  if (m < 1 || m > TSL_WINOGRAD_MAX_M || r < 1 || r > TSL_WINOGRAD_MAX_R || m + r - 1 > TSL_WINOGRAD_MAX_ALPHA)
    return tsl_error(TSL_ERR_INVALID, "winograd transform: F(%d, %d) outside 1 <= m <= %d, 1 <= r <= %d, m + r - 1 <= %d",
                     m, r, TSL_WINOGRAD_MAX_M, TSL_WINOGRAD_MAX_R, TSL_WINOGRAD_MAX_ALPHA);
  int alpha = m + r - 1;
  if (npoints != alpha - 1)
    return tsl_error(TSL_ERR_INVALID, "winograd transform: F(%d, %d) needs %d finite points (plus infinity), got %d", m,
                     r, alpha - 1, npoints);
  for (int i = 0; i < npoints; i++) {
    if (points[i].den < 1) return tsl_error(TSL_ERR_INVALID, "winograd transform: point %d is not a reduced rational", i);
    for (int j = 0; j < i; j++)
      if (tsl_rational_eq(points[i], points[j])) {
        char b[48];
        return tsl_error(TSL_ERR_INVALID, "winograd transform: point %s given twice",
                         tsl_rational_str(points[i], b, sizeof b));
      }
  }
  memset(out, 0, sizeof *out);
  out->m = m;
  out->r = r;
  out->alpha = alpha;
  out->npoints = npoints;
  for (int i = 0; i < TSL_WINOGRAD_MAX_ALPHA; i++) {
    for (int j = 0; j < TSL_WINOGRAD_MAX_ALPHA; j++) out->BT[i][j] = tsl_rational_int(0);
    for (int j = 0; j < TSL_WINOGRAD_MAX_R; j++) out->G[i][j] = tsl_rational_int(0);
  }
  for (int i = 0; i < TSL_WINOGRAD_MAX_M; i++)
    for (int j = 0; j < TSL_WINOGRAD_MAX_ALPHA; j++) out->AT[i][j] = tsl_rational_int(0);
  for (int i = 0; i < npoints; i++) out->points[i] = points[i];

  tsl_status st = TSL_OK;
  int inf = alpha - 1;
  for (int i = 0; i < npoints && st == TSL_OK; i++) {
    /* N_i(x) = prod_{j != i} (x - p_j) and f_i = N_i(p_i) */
    tsl_rational poly[TSL_WINOGRAD_MAX_ALPHA + 1];
    poly[0] = tsl_rational_int(1);
    int deg = 0;
    tsl_rational f = tsl_rational_int(1);
    for (int j = 0; j < npoints && st == TSL_OK; j++) {
      if (j == i) continue;
      tsl_rational diff;
      st = poly_mul_linear(poly, deg++, points[j]);
      if (st == TSL_OK) st = tsl_rational_sub(points[i], points[j], &diff);
      if (st == TSL_OK) st = tsl_rational_mul(f, diff, &f);
    }
    for (int t = 0; t <= deg && st == TSL_OK; t++) out->BT[i][t] = poly[t];
    for (int k = 0; k < r && st == TSL_OK; k++) {
      tsl_rational pk;
      st = power(points[i], k, &pk);
      if (st == TSL_OK) st = tsl_rational_div(pk, f, &out->G[i][k]);
    }
    for (int j = 0; j < m && st == TSL_OK; j++) st = power(points[i], j, &out->AT[j][i]);
  }
  if (st == TSL_OK) {
    /* the point at infinity: M(x) = prod_j (x - p_j) and the leading coefficients */
    tsl_rational poly[TSL_WINOGRAD_MAX_ALPHA + 1];
    poly[0] = tsl_rational_int(1);
    for (int j = 0; j < npoints && st == TSL_OK; j++) st = poly_mul_linear(poly, j, points[j]);
    for (int t = 0; t <= npoints && st == TSL_OK; t++) out->BT[inf][t] = poly[t];
    out->G[inf][r - 1] = tsl_rational_int(1);
    out->AT[m - 1][inf] = tsl_rational_int(1);
  }
  if (st != TSL_OK) return tsl_error(st, "winograd transform F(%d, %d): %s", m, r, tsl_last_error());
  return TSL_OK;
}

/* ---- point lists ---------------------------------------------------------- */

static tsl_status parse_int(const char *text, const char **p, int64_t *v) {
  const char *s = *p;
  bool neg = false;
  if (*s == '-' || *s == '+') neg = *s++ == '-';
  if (!isdigit((unsigned char)*s))
    return tsl_error(TSL_ERR_PARSE, "winograd points: expected a number at column %d of \"%s\"", (int)(s - text) + 1, text);
  int64_t x = 0;
  while (isdigit((unsigned char)*s)) {
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *s - '0', &x))
      return tsl_error(TSL_ERR_PARSE, "winograd points: number at column %d of \"%s\" overflows 64 bits",
                       (int)(*p - text) + 1, text);
    s++;
  }
  *v = neg ? -x : x;
  *p = s;
  return TSL_OK;
}

tsl_status tsl_winograd_parse_points(const char *text, tsl_rational *points, int cap, int *n) {
  if (!text || !n || (cap > 0 && !points)) return tsl_error(TSL_ERR_INVALID, "winograd points: NULL argument");
  *n = 0;
  const char *p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    int64_t num, den = 1;
    tsl_status st = parse_int(text, &p, &num);
    if (st != TSL_OK) return st;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '/') {
      p++;
      while (*p == ' ' || *p == '\t') p++;
      if ((st = parse_int(text, &p, &den)) != TSL_OK) return st;
      while (*p == ' ' || *p == '\t') p++;
    }
    if (*n >= cap) return tsl_error(TSL_ERR_INVALID, "winograd points: more than %d points in \"%s\"", cap, text);
    if ((st = tsl_rational_make(num, den, &points[*n])) != TSL_OK) return st;
    (*n)++;
    if (*p == '\0') return TSL_OK;
    if (*p != ',')
      return tsl_error(TSL_ERR_PARSE, "winograd points: expected ',' at column %d of \"%s\"", (int)(p - text) + 1, text);
    p++;
  }
}

const char *tsl_winograd_default_points(int m, int *npoints) {
  static const struct {
    int m, n;
    const char *text;
  } defaults[] = {
      {2, 3, "0, 1, -1"},
      {4, 5, "0, 1, -1, 1/2, -2"},
      {6, 7, "0, 1, -1, 2, -2, 1/2, -1/2"},
  };
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    if (defaults[i].m == m) {
      if (npoints) *npoints = defaults[i].n;
      return defaults[i].text;
    }
  return NULL;
}

const char *tsl_winograd_default_points_r(int m, int r, int *npoints) {
  if (r == 3) return tsl_winograd_default_points(m, npoints);
  /* alpha - 1 = m + r - 2 points, the first of F(4,3)'s and F(6,3)'s sequence */
  static const struct {
    int m, r, n;
    const char *text;
  } defaults[] = {
      {2, 4, 4, "0, 1, -1, 1/2"},
      {4, 4, 6, "0, 1, -1, 1/2, -2, 2"},
      {2, 5, 5, "0, 1, -1, 1/2, -2"},
      {4, 5, 7, "0, 1, -1, 1/2, -2, 2, -1/2"},
  };
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    if (defaults[i].m == m && defaults[i].r == r) {
      if (npoints) *npoints = defaults[i].n;
      return defaults[i].text;
    }
  return NULL;
}

tsl_status tsl_winograd_default_r(int m, int r, tsl_winograd_transform *out) {
  int n = 0;
  const char *text = tsl_winograd_default_points_r(m, r, &n);
  if (!text)
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "winograd: F(%d x %d, %d x %d) is not provided (m is 2, 4 or 6 for 3x3 kernels, 2 or 4 for 4x4 "
                     "and 5x5)",
                     m, m, r, r);
  tsl_rational pts[TSL_WINOGRAD_MAX_ALPHA];
  int got = 0;
  tsl_status st = tsl_winograd_parse_points(text, pts, TSL_WINOGRAD_MAX_ALPHA, &got);
  if (st != TSL_OK) return st;
  return tsl_winograd_make(m, r, got, pts, out);
}

tsl_status tsl_winograd_default(int m, tsl_winograd_transform *out) {
  if (!tsl_winograd_default_points(m, NULL))
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: F(%d x %d, 3 x 3) is not provided (m is 2, 4 or 6)", m, m);
  return tsl_winograd_default_r(m, 3, out);
}
