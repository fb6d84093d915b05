/* Pass: loop unrolling (Halide's UnrollLoops).
 *
 * Every TSL_FOR_UNROLLED loop (constant extent, ir.h) becomes `extent` copies of its body
 * in sequence, copy i with the loop variable replaced by min + i; loops and lets inside a
 * copy get fresh variables, so each binder still binds once. A loop of extent 0 becomes a
 * no-op (evaluate 0). Unrolled loops nested in unrolled loops multiply: the product of the
 * extents along any path of unrolled loops is the number of copies of the innermost body,
 * and it must not exceed max_iterations (class 20 of shared/cases: a pathological unroll
 * is refused with a clear error, not left to exhaust memory or compile time).
 */
#ifndef TESSEL_IR_PASSES_UNROLL_H
#define TESSEL_IR_PASSES_UNROLL_H

#include "ir/ir.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default limit lowering uses: copies of one body across nested unrolled loops. */
#define TSL_UNROLL_MAX_ITERATIONS 1024

/* *out = s with every unrolled loop replaced by copies. Errors: TSL_ERR_SCHEDULE naming
 * the loop when the copies would exceed max_iterations (>= 1); *out is then NULL. */
tsl_status tsl_pass_unroll(tsl_stmt *s, int64_t max_iterations, tsl_stmt **out);

#ifdef __cplusplus
}
#endif
#endif
