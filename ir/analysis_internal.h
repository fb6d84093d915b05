/* Internals shared by the analysis files of ir/ (interval.c, simplify*.c). Not a
 * public interface: nothing outside ir/ includes this.
 */
#ifndef TESSEL_IR_ANALYSIS_INTERNAL_H
#define TESSEL_IR_ANALYSIS_INTERNAL_H

#include "ir/analysis.h"

/* A per-call cache keyed by node address: the simplified form of a node and/or its
 * interval. Nodes are immutable and the arena never frees during one call, so an
 * address names one node for the cache's lifetime. Memory is malloc'd (not the
 * arena) and released by tsl_memo_free. */
typedef struct tsl_memo_entry {
  const void *key;
  tsl_expr *simplified; /* NULL until known */
  tsl_interval ival;
  bool has_ival;
} tsl_memo_entry;

typedef struct tsl_memo {
  tsl_memo_entry *slots;
  size_t cap, n;
} tsl_memo;

void tsl_memo_init(tsl_memo *m);
void tsl_memo_free(tsl_memo *m);
/* The entry for key, created empty when absent and create is true (else NULL). */
tsl_memo_entry *tsl_memo_get(tsl_memo *m, const void *key, bool create);

/* tsl_interval_of with an optional cache (memo may be NULL). */
tsl_interval tsl_interval_of_cached(const tsl_expr *e, const tsl_var_ranges *ranges, tsl_memo *memo);

/* The values of type t (bool [0,1], u8 [0,255], i64 unbounded ...). */
tsl_interval tsl_interval_of_type(tsl_type t);

/* Floor division and modulo on int64 (b != 0); INT64_MIN / -1 wraps. */
int64_t tsl_floordiv64(int64_t a, int64_t b);
int64_t tsl_floormod64(int64_t a, int64_t b);

/* What `cond == truth` says about single variables: the parts of cond of the form
 * `v op c` or `c op v` (v an integer variable, c a constant, op a comparison), joined
 * by && when truth is true (|| when false; ! flips), narrow v's range. Returns a new
 * map (a copy of in, which may be NULL) holding the narrowed ranges, or NULL when cond
 * narrows nothing. A narrowed range may be empty: cond can then never equal truth. */
tsl_var_ranges *tsl_ranges_refine(const tsl_expr *cond, bool truth, const tsl_var_ranges *in);

#endif
