/* Winograd minimal filtering F(m, r): the transform matrices A^T (output), G (kernel) and
 * B^T (input), generated from interpolation points in exact rational arithmetic.
 *
 * One output row of a 1-D correlation, y[i] = sum_{k<r} d[i+k] g[k] for i < m, over
 * alpha = m + r - 1 inputs, is computed as
 *
 *     y = A^T [ (G g) (.) (B^T d) ]         (.) elementwise, A^T m x alpha,
 *                                           G alpha x r, B^T alpha x alpha
 *
 * and the 2-D F(m x m, r x r) nests it: Y = A^T [ (G g G^T) (.) (B^T d B) ] A
 * (A. Lavin and S. Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016,
 * section 4).
 *
 * Construction (Toom-Cook with the point at infinity, transposed): take alpha - 1
 * distinct finite points p_0 .. p_{alpha-2} and infinity. The linear convolution of a
 * polynomial a (m coefficients) with g (r coefficients) is recovered from its values
 * at the points and its leading coefficient by Lagrange interpolation,
 *     h(x) = h_lead M(x) + sum_i h(p_i) N_i(x) / f_i,
 * with M(x) = prod_j (x - p_j), N_i(x) = prod_{j != i} (x - p_j) and
 * f_i = prod_{j != i} (p_i - p_j). Transposing that bilinear algorithm (the
 * transposition principle) gives correlation, and
 *     A^T[j][i] = p_i^j,        A^T[j][inf] = (j == m - 1)
 *     G[i][k]   = p_i^k / f_i,  G[inf][k]   = (k == r - 1)
 *     B^T[i][t] = coefficient of x^t in N_i(x),  B^T[inf][t] = coefficient of x^t in M(x).
 * The scale 1/f_i sits in G (Lavin's convention): with the points 0, 1, -1, 2, -2 this
 * reproduces the F(4,3) matrices printed in the paper exactly.
 *
 * Arithmetic is exact: rationals on int64 reduced by gcd, every operation checked for
 * overflow (TSL_ERR_INVALID "... overflows 64 bits" rather than a wrong matrix).
 */
#ifndef TESSEL_OPS_CONV2D_WINOGRAD_TRANSFORM_H
#define TESSEL_OPS_CONV2D_WINOGRAD_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exact rationals ------------------------------------------------------ */

/* num / den in lowest terms with den >= 1 (so equal values have equal fields). */
typedef struct tsl_rational {
  int64_t num, den;
} tsl_rational;

/* num / den reduced. TSL_ERR_INVALID for den == 0 or a value that does not fit
 * (INT64_MIN parts cannot be negated). */
tsl_status tsl_rational_make(int64_t num, int64_t den, tsl_rational *out);
/* The integer v as a rational. */
tsl_rational tsl_rational_int(int64_t v);

/* *out = a op b, exact. TSL_ERR_INVALID when an intermediate or the result overflows
 * int64 (the message names the operation and operands), or on division by zero. */
tsl_status tsl_rational_add(tsl_rational a, tsl_rational b, tsl_rational *out);
tsl_status tsl_rational_sub(tsl_rational a, tsl_rational b, tsl_rational *out);
tsl_status tsl_rational_mul(tsl_rational a, tsl_rational b, tsl_rational *out);
tsl_status tsl_rational_div(tsl_rational a, tsl_rational b, tsl_rational *out);

bool tsl_rational_eq(tsl_rational a, tsl_rational b);
bool tsl_rational_is_zero(tsl_rational a);
/* The double nearest num/den (both fit in 53 bits for every matrix made here; larger
 * parts round once more). */
double tsl_rational_to_double(tsl_rational a);
/* "3", "-1/6" into buf (n bytes); returns buf. */
const char *tsl_rational_str(tsl_rational a, char *buf, size_t n);

/* ---- transforms ----------------------------------------------------------- */

enum {
  TSL_WINOGRAD_MAX_ALPHA = 12, /* m + r - 1 at most (F(10,3)) */
  TSL_WINOGRAD_MAX_M = 10,
  TSL_WINOGRAD_MAX_R = 7
};

/* The matrices of F(m, r) for one choice of points. Plain value: copy freely. Only the
 * leading m x alpha (AT), alpha x r (G) and alpha x alpha (BT) entries are used. */
typedef struct tsl_winograd_transform {
  int m, r, alpha; /* alpha = m + r - 1 */
  int npoints;     /* alpha - 1 finite points; the last row/column is the point at infinity */
  tsl_rational points[TSL_WINOGRAD_MAX_ALPHA];
  tsl_rational AT[TSL_WINOGRAD_MAX_M][TSL_WINOGRAD_MAX_ALPHA];
  tsl_rational G[TSL_WINOGRAD_MAX_ALPHA][TSL_WINOGRAD_MAX_R];
  tsl_rational BT[TSL_WINOGRAD_MAX_ALPHA][TSL_WINOGRAD_MAX_ALPHA];
} tsl_winograd_transform;

/* Builds F(m, r) from the alpha - 1 = m + r - 2 finite `points` (plus infinity) by the
 * construction above. Errors (TSL_ERR_INVALID): m < 1, r < 1 or beyond the MAX
 * constants, npoints != m + r - 2, repeated points, rational overflow. */
tsl_status tsl_winograd_make(int m, int r, int npoints, const tsl_rational *points, tsl_winograd_transform *out);

/* Parses a point list "0, 1, -1, 1/2, -1/2" (integers or fractions, comma separated,
 * spaces allowed) into at most `cap` points; *n receives the count. TSL_ERR_PARSE with
 * the offending position on malformed text, TSL_ERR_INVALID on a zero denominator or
 * more than cap points. */
tsl_status tsl_winograd_parse_points(const char *text, tsl_rational *points, int cap, int *n);

/* tessel's points for F(m, 3), m in {2, 4, 6} (chosen by the error study in
 * docs/winograd.md; tests/winograd measures them again):
 *   F(2,3): 0, 1, -1                      (Lavin & Gray's F(2x2,3x3))
 *   F(4,3): 0, 1, -1, 1/2, -2             (one point of each of +-2 / +-1/2: 2-3x lower
 *                                          measured error than 0, +-1, +-2 or 0, +-1, +-1/2,
 *                                          which are equally accurate)
 *   F(6,3): 0, 1, -1, 2, -2, 1/2, -1/2    (the usual choice; its error is within a
 *                                          small factor of F(4,3)'s, see the doc)
 * Returns the point list as text (static) and writes the count; NULL for other m. */
const char *tsl_winograd_default_points(int m, int *npoints);

/* tsl_winograd_make(m, 3, default points). TSL_ERR_UNSUPPORTED for m not in {2, 4, 6}. */
tsl_status tsl_winograd_default(int m, tsl_winograd_transform *out);

/* tessel's points for F(m, r): those of tsl_winograd_default_points for r = 3; for the
 * larger kernels (r = 4, 5; m = 2, 4) the first alpha - 1 = m + r - 2 of the sequence
 * 0, 1, -1, 1/2, -2, 2, -1/2 (F(4,3)'s points, then F(6,3)'s others: alpha 5-8, the sizes
 * whose error tests/winograd measures):
 *   F(2,4): 0, 1, -1, 1/2             F(4,4): 0, 1, -1, 1/2, -2, 2
 *   F(2,5): 0, 1, -1, 1/2, -2         F(4,5): 0, 1, -1, 1/2, -2, 2, -1/2
 * Returns the list as text (static) and writes the count; NULL for other (m, r). */
const char *tsl_winograd_default_points_r(int m, int r, int *npoints);

/* tsl_winograd_make(m, r, tsl_winograd_default_points_r). TSL_ERR_UNSUPPORTED for an
 * (m, r) without default points. */
tsl_status tsl_winograd_default_r(int m, int r, tsl_winograd_transform *out);

#ifdef __cplusplus
}
#endif
#endif
