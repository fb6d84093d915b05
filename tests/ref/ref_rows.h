/* Naive row-wise references for the schedule tests: plain loops, float64 where a sum
 * is involved, written independently of tessel. */
#ifndef TESSEL_TESTS_REF_ROWS_H
#define TESSEL_TESTS_REF_ROWS_H

#include <stdint.h>

/* out[i] = max over j of A[i, j] (A is M x N row-major); NaN when any element of the row
 * is NaN, -inf for a row of -inf. */
void ref_row_max(int64_t M, int64_t N, const float *A, float *out);

/* out[i, j] = A[i, j] - sum over j' of A[i, j'] (row sum accumulated in double, rounded
 * to float before the subtraction). */
void ref_row_center(int64_t M, int64_t N, const float *A, float *out);

#endif
