/* Naive references for the NCHW[x]c operator library tests (tests/ops): plain loops
 * over plain NCHW / OIHW float arrays, sums in double, written from the ONNX operator
 * definitions and independently of tessel's DSL, schedules and code generator. Also the
 * (equally naive) layout conversions the tests use to feed the blocked operators.
 * Caller-allocated outputs; no error paths (callers pass consistent shapes).
 */
#ifndef TESSEL_TESTS_REF_REF_OPS2_H
#define TESSEL_TESTS_REF_REF_OPS2_H

#include <stdbool.h>
#include <stdint.h>

/* A convolution layer: NCHW input, K x C/groups x R x S weights, per-axis geometry,
 * bias (K values, may be NULL), optional residual (N x K x OH x OW, may be NULL) and
 * activation act(conv + bias + residual): 0 none, 1 relu, 2 clip [lo, hi]. */
typedef struct ref2_conv {
  int64_t N, C, H, W, K, R, S;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw;
  int64_t groups;
  int act;
  double lo, hi;
} ref2_conv;

int64_t ref2_conv_oh(const ref2_conv *c);
int64_t ref2_conv_ow(const ref2_conv *c);

/* The output at (n, k, y, x) in double (the activation applied in double). */
double ref2_conv_point(const ref2_conv *c, const float *in, const float *w, const float *bias, const float *residual,
                       int64_t n, int64_t k, int64_t y, int64_t x);

/* NCHW [N, C, H, W] -> NCHW[x]c [N, ceil(C/x), H, W, x], lanes past C set to `fill`. */
void ref2_to_nchwc(const float *in, int64_t N, int64_t C, int64_t H, int64_t W, int64_t x, float fill, float *out);
/* NCHW[x]c -> NCHW keeping the first C channels. */
void ref2_from_nchwc(const float *in, int64_t N, int64_t C, int64_t H, int64_t W, int64_t x, float *out);
/* OIHW [K, C, R, S] -> OIHW[x]i[y]o [ceil(K/y), ceil(C/x), R, S, x, y], zero-padded. */
void ref2_weight_nchwc(const float *w, int64_t K, int64_t C, int64_t R, int64_t S, int64_t x, int64_t y, float *out);
/* OIHW [K, CG, R, S] -> [ceil(K/y), CG, R, S, y] (grouped and im2col weights), zero-padded. */
void ref2_weight_oblocked(const float *w, int64_t K, int64_t CG, int64_t R, int64_t S, int64_t y, float *out);
/* Grouped OIHW [K, C/groups, R, S] -> the block-diagonal layout [ceil(K/x), band, R, S, x, x]
 * of conv2d_nchwc_blockdiag_bias (ops/conv2d/conv2d_nchwc.c): output block kb reads the
 * `band` input blocks from start(kb) = min(first block of the group of output channel
 * kb*x, ceil(C/x) - band) on; [kb, cb, r, s, ci, ko] holds w[k, c - g*C/groups, r, s] for
 * k = kb*x + ko < K and input channel c = (start(kb) + cb)*x + ci of k's group g, else 0.
 * Written from that statement, not from the op's text. */
void ref2_weight_blockdiag(const float *w, int64_t K, int64_t C, int64_t groups, int64_t R, int64_t S, int64_t x,
                           int64_t band, float *out);
/* [C, 1, R, S] -> [ceil(C/x), R, S, x] (depthwise), zero-padded. */
void ref2_weight_depthwise(const float *w, int64_t C, int64_t R, int64_t S, int64_t x, float *out);
/* [C] -> [ceil(C/x), x], zero-padded. */
void ref2_vector_blocks(const float *v, int64_t C, int64_t x, float *out);

/* out[i] = a[broadcast] op b[broadcast] over rank-5 shapes (numpy rules), op '+' or '*',
 * then act (0/1/2 as above); out has the broadcast shape. */
void ref2_broadcast(const float *a, const int64_t ash[5], const float *b, const int64_t bsh[5], char op, int act,
                    double lo, double hi, float *out);

/* Channel concatenation of NCHW tensors a [N, CA, H, W] and b [N, CBB, H, W]. */
void ref2_concat(const float *a, int64_t CA, const float *b, int64_t CBB, int64_t N, int64_t H, int64_t W, float *out);

/* ShuffleNet channel shuffle of NCHW x [N, C, H, W] in `groups` groups:
 * out[:, j*groups + i] = x[:, i*(C/groups) + j]. */
void ref2_channel_shuffle(const float *x, int64_t N, int64_t C, int64_t H, int64_t W, int64_t groups, float *out);

/* out[b, o] = act(sum_k x[b, k] w[o, k] + bias[o]). */
void ref2_dense(const float *x, const float *w, const float *bias, int64_t B, int64_t K, int64_t O, int act,
                float *out);

/* Deterministic uniform floats in [lo, hi) (splitmix64), like ref_fill_uniform. */
void ref2_fill(float *x, int64_t n, uint64_t seed, float lo, float hi);

#endif
