/* A naive interpreter for integer/bool IR expressions, written for the tests
 * independently of ir/ (its own floor division, wrapping and lane handling). It is
 * the ground truth the simplifier and interval analysis are checked against.
 *
 * Semantics follow the contract at the top of ir/ir.h: signed division/modulo round
 * toward -infinity (modulo takes the divisor's sign), unsigned ones are plain, every
 * result wraps to its type's bits, bool is 0/1, select evaluates both branches (so a
 * division by zero in either makes the whole expression undefined).
 */
#ifndef TESSEL_TESTS_REF_IR_EVAL_H
#define TESSEL_TESTS_REF_IR_EVAL_H

#include <stdint.h>

#include "ir/ir.h"

typedef enum ref_eval_status {
  REF_EVAL_OK = 0,
  REF_EVAL_DIV_ZERO = 1,    /* a division or modulo by zero happened: undefined */
  REF_EVAL_UNSUPPORTED = 2, /* a node this interpreter does not model (float ...) */
  REF_EVAL_OUT_OF_BOUNDS = 3 /* a load or store outside its buffer */
} ref_eval_status;

/* Values of free variables: vars[i] (by node identity) has value values[i]. Loads and
 * stores reach memory through `data` (may be NULL: then they are unsupported): it
 * returns the int64 elements of a buffer (row-major, tsl_buffer_numel of them) or
 * NULL for an unknown buffer. */
typedef struct ref_env {
  int n;
  const tsl_expr *const *vars;
  const int64_t *values;
  int64_t *(*data)(void *ud, const tsl_buffer *b);
  void *ud;
} ref_env;

/* Value of lane `lane` of e (0 for scalars) as the type holds it: signed types
 * sign-extended, unsigned ones zero-extended (u64 bitwise), bool 0/1. */
ref_eval_status ref_eval_int(const tsl_expr *e, const ref_env *env, int lane, int64_t *out);

/* Runs a statement (scalar stores only): loops, ifs, lets, sequences, allocations
 * (their buffers must be known to env->data) and evaluates. */
ref_eval_status ref_exec_stmt(const tsl_stmt *s, const ref_env *env);

/* Reference floor division / modulo (b != 0). */
int64_t ref_floordiv(int64_t a, int64_t b);
int64_t ref_floormod(int64_t a, int64_t b);

#endif
