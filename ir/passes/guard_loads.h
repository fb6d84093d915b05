/* Pass: guard the loads that a select could evaluate out of bounds.
 *
 * TSL_E_SELECT may evaluate both branches (ir.h), but a tensor expression such as a
 * padding stage, select(y >= pad && y < H + pad, data[y - pad], 0), reads in bounds only
 * where its condition holds. After inlining such a read sits in the consumer's loops and
 * would run for every point. This pass gives each load inside a select branch that
 * interval analysis cannot prove in bounds (over the enclosing loops' ranges) the
 * branch's condition as its predicate (and'ed with any predicate it had), so the load
 * touches memory only where the select would keep its value. Loads proven in bounds are
 * left alone. Works on multi-dimensional (before storage_flatten) or flat indices.
 */
#ifndef TESSEL_IR_PASSES_GUARD_LOADS_H
#define TESSEL_IR_PASSES_GUARD_LOADS_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* s with guarded loads (s itself when nothing needed a guard). */
tsl_stmt *tsl_pass_guard_loads(tsl_stmt *s);

#ifdef __cplusplus
}
#endif
#endif
