/* Graph pass: memory planning — place the activation tensors of a compiled plan in one
 * arena so that tensors whose lifetimes do not overlap share bytes.
 *
 * Algorithm: greedy by size (Y. Pisarchyk and J. Lee, "Efficient Memory Management for
 * Deep Neural Net Inference", 2020, section 4.3; TensorFlow Lite's arena planner):
 * take the tensors from the largest down; put each at the lowest offset where it
 * overlaps, in address, no already placed tensor whose lifetime meets its own. Offsets
 * are multiples of TSL_TENSOR_ALIGN (64 bytes) so every tensor is vector-aligned.
 */
#ifndef TESSEL_MODELS_PASSES_PLAN_MEMORY_H
#define TESSEL_MODELS_PASSES_PLAN_MEMORY_H

#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One tensor to place: its size and the steps that first write and last read it
 * (inclusive; first <= last). Tensors with overlapping [first, last] ranges are live
 * at the same time and never share bytes. */
typedef struct tsl_mem_request {
  int64_t bytes;
  int first, last;
} tsl_mem_request;

/* Fills offsets[0..n) (bytes from the arena's start) and *peak, the arena size: the
 * planned peak activation bytes. n = 0 gives peak 0.
 * Errors: TSL_ERR_INVALID (NULL arrays with n > 0, negative sizes, first > last, sizes
 * rounded up to TSL_TENSOR_ALIGN that add up past INT64_MAX), TSL_ERR_NOMEM. */
tsl_status tsl_pass_plan_memory(int n, const tsl_mem_request *req, int64_t *offsets, int64_t *peak);

#ifdef __cplusplus
}
#endif
#endif
