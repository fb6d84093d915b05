/* Arithmetic analysis of integer index expressions: the simplifier and interval
 * (bound) analysis. Both treat variables whose range is known through a tsl_var_ranges
 * map; everything else is unbounded.
 */
#ifndef TESSEL_IR_ANALYSIS_H
#define TESSEL_IR_ANALYSIS_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A closed integer interval [lo, hi]; has_lo/has_hi false means unbounded on that side.
 * empty is true only for provably empty sets (e.g. the range of a zero-extent loop). */
typedef struct tsl_interval {
  int64_t lo, hi;
  bool has_lo, has_hi;
  bool empty;
} tsl_interval;

tsl_interval tsl_interval_point(int64_t v);
tsl_interval tsl_interval_range(int64_t lo, int64_t hi); /* [lo, hi] */
tsl_interval tsl_interval_everything(void);
tsl_interval tsl_interval_union(tsl_interval a, tsl_interval b);

/* Known ranges of variables, keyed by the variable node's address. A small
 * open-addressing map allocated in the current arena; set() replaces. */
typedef struct tsl_var_ranges tsl_var_ranges;
tsl_var_ranges *tsl_var_ranges_new(void);
void tsl_var_ranges_set(tsl_var_ranges *m, const tsl_expr *var, tsl_interval r);
/* false if var is not in m */
bool tsl_var_ranges_get(const tsl_var_ranges *m, const tsl_expr *var, tsl_interval *out);
tsl_var_ranges *tsl_var_ranges_copy(const tsl_var_ranges *m);

/* Interval of the integer (or bool: 0/1) scalar expression e given the ranges (may be
 * NULL). Vector expressions give the union over lanes. Sound: every value e can take
 * lies in the result; loads and unknown variables give the type's full range. */
tsl_interval tsl_interval_of(const tsl_expr *e, const tsl_var_ranges *ranges);

/* Simplify an expression: constant folding (never folding division/modulo by zero),
 * linear canonical form for integer sums (c0 + sum ci*xi with terms in a stable order),
 * floor div/mod rules using the ranges ((x*8 + y)/8 -> x when 0 <= y < 8, x mod 1 -> 0,
 * ...), the splits of one fused index recombined whatever the ranges ((f/169)*169 +
 * ((f/13) mod 13)*13 + f mod 13 -> f: ir/simplify_linear.c lin_fuse_divmod), min/max/compare
 * decided by intervals, select/if with a constant condition,
 * boolean identities, float constant folding only where exact IEEE results are kept
 * (no reassociation). The result evaluates to the same value as e for every
 * assignment of the variables that respects the ranges. ranges may be NULL. */
tsl_expr *tsl_simplify(tsl_expr *e, const tsl_var_ranges *ranges);

/* Can the simplifier prove cond (a scalar bool) always true / always false? */
bool tsl_prove(tsl_expr *cond, const tsl_var_ranges *ranges);
bool tsl_disprove(tsl_expr *cond, const tsl_var_ranges *ranges);

/* Substitute variables: every occurrence of vars[i] (by identity) becomes values[i]. */
tsl_expr *tsl_substitute(tsl_expr *e, int n, tsl_expr *const *vars, tsl_expr *const *values);
tsl_stmt *tsl_substitute_stmt(tsl_stmt *s, int n, tsl_expr *const *vars, tsl_expr *const *values);

/* Does e mention variable v? */
bool tsl_expr_uses_var(const tsl_expr *e, const tsl_expr *v);

#ifdef __cplusplus
}
#endif
#endif
