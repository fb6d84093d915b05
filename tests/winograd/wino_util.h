/* Helpers of the winograd suite: a convolution case, its random inputs and float64
 * reference (tests/ref/ref_conv64.h, naive direct convolution), and one run of the
 * Winograd operator (instantiate, kernel transform through the TE interpreter, schedule,
 * JIT, run) compared with that reference in NCHW after unpacking NCHW[x]c here.
 */
#ifndef TESSEL_TESTS_WINOGRAD_WINO_UTIL_H
#define TESSEL_TESTS_WINOGRAD_WINO_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/jit.h"
#include "ir/arena.h"
#include "ops/conv2d/winograd.h"
#include "ops/conv2d/winograd_schedule.h"

typedef struct wino_case {
  int64_t N, C, H, W, K;
  int64_t pt, pl, pb, pr; /* padding top, left, bottom, right */
  int m;
  int act;       /* 0 none, 1 relu, 2 clip to [-0.25, 0.25] (both ends are hit) */
  bool residual; /* conv2d_winograd_f<m>_add */
  int64_t lanes; /* the NCHW[x]c block; 0: the target's f32 lanes */
  int r;         /* kernel r x r; 0: 3 (last, so the cases written for 3x3 need not name it) */
} wino_case;

/* Inputs in NCHW / OIHW and the reference output with the epilogue, in double. */
typedef struct wino_data {
  float *in, *w, *bias, *res; /* res: N x K x OH x OW, NULL without residual */
  double *ref;                /* N x K x OH x OW */
  double ref_scale;           /* max |conv + bias (+ res)| before the activation */
  float data_pad_fill;        /* the data's block-padding channels (0 from wino_data_make;
                                 a test may set NaN to show they are never read) */
  int64_t OH, OW;
} wino_data;

/* Random inputs (data uniform in [-scale, scale], weights and bias in [-1, 1]) and the
 * float64 reference. Free with wino_data_free. */
void wino_data_make(const wino_case *c, double scale, uint64_t seed, wino_data *d);
void wino_data_free(wino_data *d);

typedef struct wino_result {
  bool ok;                /* instantiated, built and ran (else the message was printed) */
  double max_err;         /* max |out - ref| / ref_scale over the K real channels (the
                             pre-activation scale: a clip must not inflate the error) */
  double rms_err;         /* root-mean-square relative error */
  bool pad_channels_zero; /* every output channel >= K (the block padding) is exactly 0 */
} wino_result;

/* A compiled Winograd kernel for one case (so several inputs can run through one build). */
typedef struct wino_kernel {
  wino_case c;
  int64_t X;                 /* the block used */
  tsl_arena *arena;          /* the IR arena of the programs */
  tsl_te_program *conv, *wt; /* the conv and kernel-transform programs */
  tsl_module *mod;
  const tsl_kernel *k;
} wino_kernel;

/* Instantiates with the transform T (NULL: the registry's default points for c->m),
 * schedules with the knobs (NULL: the template's defaults for the jit's target) and
 * compiles. false (the reason printed) on failure; free with wino_kernel_free either way. */
bool wino_kernel_build(tsl_jit *jit, const wino_case *c, const tsl_winograd_transform *T,
                       const tsl_winograd_knobs *knobs, wino_kernel *wk);
/* Runs on d: kernel transform through the TE interpreter (float64, rounded once), data
 * packed to NCHW[x]c, `threads` threads, compared in NCHW. out (may be NULL) receives the
 * raw NCHW[x]c output (malloc'd, caller frees). */
wino_result wino_kernel_run(wino_kernel *wk, const wino_data *d, int threads, float **out);
void wino_kernel_free(wino_kernel *wk);

/* One run: the transform T (NULL: the registry's default points for c->m), the knobs
 * (NULL: the template's defaults for the jit's target), `threads` threads. When out is
 * non-NULL it receives the raw NCHW[x]c output (malloc'd, caller frees). A fresh IR
 * arena is used and freed. */
wino_result wino_run(tsl_jit *jit, const wino_case *c, const wino_data *d, const tsl_winograd_transform *T,
                     const tsl_winograd_knobs *knobs, int threads, float **out);

/* A JIT for the host target into *jit (the suites' init): 0, or 1 when it cannot be made. */
int wino_host_jit_new(tsl_jit **jit);
/* Frees *jit and clears it (the suites' cleanup); 0. */
int wino_jit_free(tsl_jit **jit);

/* wino_data_make + wino_run + wino_data_free, printing the case when the error exceeds
 * the documented bound; returns the result. */
wino_result wino_check(tsl_jit *jit, const wino_case *c, const tsl_winograd_knobs *knobs, uint64_t seed);

/* "F(4) N1 C9 13x11 K7 pad 1,0,2,1 act 1 lanes 8" into buf (r x r in the F when r is not 3:
 * "F(4,4x4) ..."). */
/* The case's kernel size r (3 when c->r is 0). */
int wino_r(const wino_case *c);
const char *wino_case_str(const wino_case *c, char *buf, size_t n);

#endif
