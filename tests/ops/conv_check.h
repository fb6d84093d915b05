/* Running one convolution layer through an algorithm of the operator library
 * (ops/conv2d/conv2d_select.h) and checking it against the naive reference
 * ref2_conv_point (tests/ref/ref_ops2.h). */
#ifndef TESSEL_TESTS_OPS_CONV_CHECK_H
#define TESSEL_TESTS_OPS_CONV_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/conv2d/conv2d_select.h"

typedef struct conv_case {
  int64_t N, C, H, W, K, R, S;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw;
  int64_t groups;
  int act;           /* 0, 1 relu, 2 clip [lo, hi] */
  double lo, hi;
  bool residual;
} conv_case;

/* How a layer is checked. */
typedef struct conv_check_opts {
  int64_t block;        /* x of the layout (0: the host's lanes) */
  int nrandom;          /* random template configs besides the default */
  int64_t max_tile;     /* skip random configs whose register tile has more points (0: 24,
                           keeping the suite fast) */
  uint64_t seed;
  const char *knobs;    /* an explicit config "name=value,..." of the algorithm's template
                           (applied over its default config), or NULL */
  bool skip_default;    /* only the explicit / random configs */
  float lo, hi;         /* input range (0, 0: [-1, 1)) */
  const float *data;    /* explicit NCHW input (NULL: random) */
  const float *weight;  /* explicit OIHW weight (NULL: random) */
  const float *bias;    /* explicit bias (NULL: random) */
  float *out_nchw;      /* if set, receives the (last) output as NCHW */
  int threads;          /* thread-pool size while running (0: leave as is) */
  const char *function; /* an epilogue function (ONNX name of ops/nn/activation.h) applied
                           after conv + bias (+ residual), with the case's act 0; NULL: none.
                           The reference applies tests/ref/ref_activation.h's formula. */
  int nfattrs;          /* its attribute values given in fattrs (the rest: defaults) */
  double fattrs[2];
} conv_check_opts;

/* Checks algorithm a on case c: the default config and the random ones, each compared
 * with the reference (every output when the layer is small, a seeded sample of 4096
 * points plus the four corners of every output plane otherwise) to 2e-5 of the output's
 * magnitude, NaN where the reference is NaN; the padding lanes of the output hold
 * act(0) (0 with an epilogue function: the lane guard); no buffer's guard sentinel touched. Prints what differs and returns false on
 * any failure (including a build error). */
bool conv_check(const conv_case *c, tsl_conv2d_algo a, const conv_check_opts *o);

/* Options with nrandom random configs and the seed, everything else zero. */
conv_check_opts conv_opts(int nrandom, uint64_t seed);

/* conv_check of every case through every algorithm of algos (n cases, na algorithms),
 * with nrandom random configs and seeds from `seed` on; returns the number of failures. */
int conv_check_all(const conv_case *cases, size_t n, const tsl_conv2d_algo *algos, int na, int nrandom,
                   uint64_t seed);

/* The layer description of a case for block x. */
tsl_conv2d_layer conv_case_layer(const conv_case *c, int64_t x);

#endif
