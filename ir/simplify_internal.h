/* Internals of the simplifier shared by simplify.c (node rules) and
 * simplify_linear.c (linear forms, div/mod and comparisons of integer sums).
 * Not a public interface.
 */
#ifndef TESSEL_IR_SIMPLIFY_INTERNAL_H
#define TESSEL_IR_SIMPLIFY_INTERNAL_H

#include "ir/analysis_internal.h"

/* One tsl_simplify call: the known ranges (replaced by an extended copy inside Let
 * bodies and reductions) and a cache of simplified nodes and intervals, valid for
 * those ranges. Where a condition narrows ranges (the branches of a select, the right
 * operand of && and ||) a child context with its own cache simplifies the subtree;
 * children share the parent's Let substitutions (inlined Let variable -> value) and
 * a budget bounding how many child contexts one call may open. */
typedef struct tsl_simp {
  const tsl_var_ranges *ranges;
  tsl_memo memo;
  tsl_memo *subst;
  int depth;
  int *budget;
} tsl_simp;

/* The simplified form of e (cached by address). */
tsl_expr *tsl_simp_expr(tsl_simp *c, tsl_expr *e);
/* Interval of an expression under the current ranges (cached). */
tsl_interval tsl_simp_interval(tsl_simp *c, const tsl_expr *e);

static inline bool tsl_simp_is_i64(tsl_type t) { return t.code == TSL_TYPE_INT && t.bits == 64; }

/* e is a scalar integer ADD, SUB or MUL (children not yet simplified): its linear
 * canonical form. */
tsl_expr *tsl_simp_linear(tsl_simp *c, tsl_expr *e);
/* a (simplified, integer, any lanes) divided / modulo by the simplified b. NULL when
 * no rule applies. */
tsl_expr *tsl_simp_divmod(tsl_simp *c, tsl_expr_kind k, tsl_expr *a, tsl_expr *b);
/* i64 scalars a, b simplified; k in LT, LE, EQ, NE: the comparison decided or put in
 * canonical form (positive terms left, negative terms and the constant right). */
tsl_expr *tsl_simp_compare_i64(tsl_simp *c, tsl_expr_kind k, tsl_expr *a, tsl_expr *b);
/* i64 scalars: is a - b a known constant? */
bool tsl_simp_difference(tsl_simp *c, tsl_expr *a, tsl_expr *b, int64_t *d);

#endif
