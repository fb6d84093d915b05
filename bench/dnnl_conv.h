/* The conv benchmarks' data helpers and oneDNN's direct convolution of a
 * tsl_conv2d_layer for them (bench/conv_layers, bench/conv_sched, bench/winograd_layers): forward inference,
 * convolution_direct, memory formats `any` (oneDNN picks its blocked layout), bias and
 * the layer's activation as an eltwise post-op; the inputs are reordered in once at
 * setup (not part of a timed call). Also oneDNN's other algorithms (bench/winograd_layers:
 * its Winograd) through bench_dnnl_conv_setup_alg. Built only with Debian's libdnnl-dev (oneDNN 2.x C
 * API). */
#ifndef TESSEL_BENCH_DNNL_CONV_H
#define TESSEL_BENCH_DNNL_CONV_H

#include <dnnl.h>
#include <stdbool.h>
#include <stdint.h>

#include "ops/conv2d/conv2d_layer.h"

typedef struct bench_dnnl_conv {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_t prim;
  dnnl_memory_t src, wei, bia, dst;
  bool ok;
} bench_dnnl_conv;

/* n floats (at least one), 64-byte aligned, zeroed; free() them. NULL when out of
 * memory. */
float *bench_conv_alloc_floats(int64_t n);
/* x[0..count) = uniform in [-scale, scale) from seed (splitmix64). */
void bench_conv_fill(float *x, int64_t count, uint64_t seed, double scale);

/* Sets c up for layer d with src (NCHW), wei (OIHW, or GOIHW when grouped) and bias (K).
 * false (a message on stderr) when oneDNN refuses a call; what was made is in c for
 * bench_dnnl_conv_free, nothing else is left behind. */
bool bench_dnnl_conv_setup(bench_dnnl_conv *c, const tsl_conv2d_layer *d, float *src, float *wei, float *bias);
/* As bench_dnnl_conv_setup with oneDNN's algorithm `alg` (dnnl_convolution_direct,
 * dnnl_convolution_winograd, ...); an algorithm oneDNN has no implementation of for this
 * layer or ISA (its Winograd off AVX-512) is false without a message. */
bool bench_dnnl_conv_setup_alg(bench_dnnl_conv *c, const tsl_conv2d_layer *d, dnnl_alg_kind_t alg, float *src,
                               float *wei, float *bias);
/* One call (ctx: a bench_dnnl_conv), waiting for it: 0, or 1 when oneDNN fails (a
 * tsl_timed_fn). */
int32_t bench_dnnl_conv_run(void *ctx);
/* The last output reordered to NCHW into out (N*K*OH*OW floats). */
bool bench_dnnl_conv_output_nchw(bench_dnnl_conv *c, const tsl_conv2d_layer *d, float *out);
/* Frees what c holds (safe on a partly set-up c). */
void bench_dnnl_conv_free(bench_dnnl_conv *c);

#endif
