/* Pass: vectors of the target's native width.
 *
 * A vectorized loop (constant extent n) whose widest loaded or stored element type has
 * `bits` bits fills n*bits bits of vector; when that exceeds the target's register width
 * (vector_bits), the loop becomes an unrolled loop over register-wide vectors,
 *   for (v.vec, 0, n / L) unrolled { for (v.lane, 0, L) vectorized body[v = min + v.vec*L + v.lane] }
 * with L = vector_bits / bits, followed by a vectorized loop of the n mod L remaining
 * lanes (its body with fresh binders). Each vector the later passes make is then one
 * register; a guarded tail masks (or, once unrolled and simplified, drops) whole
 * registers rather than lanes of an over-wide vector that codegen would split anyway.
 * Loops that fit one register, loops of non-constant extent and vector_bits <= 0 are
 * left alone.
 */
#ifndef TESSEL_IR_PASSES_NATIVE_VECTORS_H
#define TESSEL_IR_PASSES_NATIVE_VECTORS_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* s with register-wide vectorized loops (s itself when none was wider). */
tsl_stmt *tsl_pass_native_vectors(tsl_stmt *s, int vector_bits);

#ifdef __cplusplus
}
#endif
#endif
