/* Naive integer references for the binary (bitserial) operators, on UNPACKED values:
 * plain loops over int channels, no bit tricks, int64 accumulation. Written from the
 * conventions in docs/binary.md, independently of ops/binary/binary.c. */
#ifndef TESSEL_TESTS_REF_BINARY_H
#define TESSEL_TESTS_REF_BINARY_H

#include <stdint.h>

/* Bipolar sign: -1 for x < 0, +1 otherwise (0.0 and -0.0 give +1). */
int ref_bin_bipolar(float x);

/* Unipolar N-bit level of x (bits = 1 or 2, L = 2^bits - 1): the number of k in 0..L-1
 * with x*L >= k + 0.5 (x*L computed in float), capped at L. */
int ref_bin_unipolar(float x, int bits);

/* out[n,k,oy,ox] = sum over c, r, s of a[n,c,iy,ix] * w[k,c,r,s] with iy = oy*sh + r - ph,
 * ix = ox*sw + s - pw, taps outside the input contributing 0; OH = (H + 2ph - R)/sh + 1,
 * OW likewise. a and w hold small ints (+-1 or levels). */
void ref_bin_conv2d(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S, int64_t sh,
                    int64_t sw, int64_t ph, int64_t pw, const int *a, const int *w, int64_t *out);

/* out[b,o] = sum over k < K of a[b,k] * w[o,k]. */
void ref_bin_dense(int64_t B, int64_t O, int64_t K, const int *a, const int *w, int64_t *out);

/* The fused glue: floor((acc + bias) / 2^shift) clipped to [0, qmax], computed with an
 * integer floor division (not a shift). */
int64_t ref_bin_glue(int64_t acc, int64_t bias, int shift, int64_t qmax);

#endif
