/* A naive TE interpreter for the dsl tests (see te_eval.c). */
#ifndef TESSEL_TESTS_DSL_TE_EVAL_H
#define TESSEL_TESTS_DSL_TE_EVAL_H

#include <stdbool.h>

#include "dsl/te.h"

/* Evaluates every stage of p. inputs[i]: the elements of p->inputs[i] (row-major,
 * as doubles); outputs[k]: room for p->outputs[k]'s elements. false if a read falls
 * outside its tensor, a division by zero happens or a node is not supported. */
bool te_eval_program(const tsl_te_program *p, const double *const *inputs, double **outputs);

#endif
