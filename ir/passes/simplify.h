/* Pass: simplify every expression of a statement, with the ranges of the enclosing
 * loops and lets known (Halide's Simplify over statements, TVM's tir.Simplify).
 *
 * Inside `for (v, min, extent)` the variable v ranges over [lo(min), hi(min) +
 * hi(extent) - 1] (intervals of the simplified min and extent); inside `let v = e`
 * over the interval of e. Each expression goes through tsl_simplify (ir/analysis.h)
 * with those ranges. Then, structurally:
 *   - a loop whose extent simplifies to a constant <= 0 is removed;
 *   - a loop of extent 1 disappears: its variable becomes its min (substituted when
 *     the min is a constant or a variable, bound by a Let otherwise);
 *   - an if whose condition simplifies to a constant keeps only the taken branch; an
 *     if with no then-work and an else becomes `if (!cond) else`;
 *   - a let whose value is a constant or a variable is substituted into its body, and
 *     a let whose variable is not used is removed;
 *   - a store whose predicate is constant true loses the predicate, and is removed
 *     when it is constant false; an `evaluate` of a constant is removed;
 *   - statements left empty disappear from sequences and from their parents.
 * A statement with nothing left to do becomes the no-op `evaluate(0i32)`.
 * Buffers, loop kinds and the order of side effects are unchanged.
 *
 * Ownership: the result lives in the current arena and may share unchanged subtrees
 * with s. Never fails (s must be valid IR; NULL gives NULL).
 */
#ifndef TESSEL_IR_PASSES_SIMPLIFY_H
#define TESSEL_IR_PASSES_SIMPLIFY_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

tsl_stmt *tsl_pass_simplify(tsl_stmt *s);

#ifdef __cplusplus
}
#endif
#endif
