/* A naive reference executor for the binarized zoo models (models/zoo_binary.h): walks
 * the graph node by node and computes every tsl.Binary operator from its documented
 * formula (docs/binary.md) on UNPACKED integer levels — no bit planes, no popcounts:
 * a packed value is held as its [N, C, H, W] levels, a conv is a plain sum of
 * level * (+-1 weight) over the valid taps, the glue an integer floor division. The f32
 * nodes these models use around the binary part (Flatten, Gemm with transB, 1x1 Conv,
 * Relu, GlobalAveragePool, Dropout) are plain double-accumulated loops. */
#ifndef TESSEL_TESTS_REF_BINARY_NET_H
#define TESSEL_TESTS_REF_BINARY_NET_H

#include <stdint.h>

#include "models/graph.h"
#include "tessel/status.h"

/* Runs g (one f32 input, one f32 output) on `input` (the graph input's compact data)
 * and writes the output's n_out values. Errors: TSL_ERR_UNSUPPORTED for a node kind or
 * kernel it does not know, TSL_ERR_INVALID for a count mismatch, TSL_ERR_NOMEM. */
tsl_status ref_binary_net_run(const tsl_graph *g, const float *input, float *output, int64_t n_out);

#endif
