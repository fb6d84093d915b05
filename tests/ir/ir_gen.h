/* Seeded random integer IR expressions for the property tests of the simplifier and
 * interval analysis. Deterministic for a given seed (xorshift64*). */
#ifndef TESSEL_TESTS_IR_IR_GEN_H
#define TESSEL_TESTS_IR_IR_GEN_H

#include "ir/analysis.h"
#include "ir/ir.h"

enum { IR_GEN_MAX_VARS = 12 };

typedef struct ir_gen {
  uint64_t s;
  tsl_type t; /* scalar integer type of the generated expressions */
  int nfree;  /* free variables: vars[0..nfree) */
  int nvars;  /* plus let variables in scope while generating */
  tsl_expr *vars[IR_GEN_MAX_VARS];
  bool ranged[IR_GEN_MAX_VARS];
  int64_t lo[IR_GEN_MAX_VARS], hi[IR_GEN_MAX_VARS];
  tsl_var_ranges *ranges; /* ranges of the ranged free variables */
  int lanes;              /* 1, or the lanes of vector expressions (ir_gen_vector) */
} ir_gen;

/* nfree fresh variables of type t with random ranges (some unbounded). */
void ir_gen_init(ir_gen *g, uint64_t seed, tsl_type t, int nfree);
uint64_t ir_gen_u64(ir_gen *g);
int64_t ir_gen_int(ir_gen *g, int64_t lo, int64_t hi); /* uniform in [lo, hi] */
/* A random expression of type g->t and depth <= depth. */
tsl_expr *ir_gen_expr(ir_gen *g, int depth);
/* A random scalar bool expression over the same variables. */
tsl_expr *ir_gen_cond(ir_gen *g, int depth);
/* A random expression of type g->t with `lanes` lanes built from ramps/broadcasts. */
tsl_expr *ir_gen_vector(ir_gen *g, int depth, int lanes);
/* Values for the free variables, inside their ranges. */
void ir_gen_assign(ir_gen *g, int64_t *values);

#endif
