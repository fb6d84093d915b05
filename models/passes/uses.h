/* Helpers shared by the graph passes: counting the readers of a value, and reading the
 * small constants and operands that pattern-matching passes look at. */
#ifndef TESSEL_MODELS_PASSES_USES_H
#define TESSEL_MODELS_PASSES_USES_H

#include <stdbool.h>

#include "models/graph.h"

/* Number of node inputs reading value v, skipping nodes marked in dead (may be NULL),
 * plus one per listing of v among the graph outputs. */
int tsl_pass_count_uses(const tsl_graph *g, int v, const bool *dead);

/* The only live node reading v, or -1 when v has no reader, several, or is a graph
 * output. */
int tsl_pass_single_user(const tsl_graph *g, int v, const bool *dead);

/* tsl_pass_single_user when that reader is an `op` node, else -1. */
int tsl_pass_single_user_op(const tsl_graph *g, int v, tsl_op op, const bool *dead);

/* Whether v is a constant of one element (any numeric dtype but bool); its value in *out. */
bool tsl_pass_const_scalar(const tsl_graph *g, int v, double *out);

/* The other input of two-input node n when v is one of its inputs, else -1. */
int tsl_pass_other_input(const tsl_node *n, int v);

/* Whether node (may be -1) is a tsl.Activation computing the function named fn ("Sqrt"). */
bool tsl_pass_is_function(const tsl_graph *g, int node, const char *fn);

/* Whether v is listed among the graph outputs. */
bool tsl_pass_is_graph_output(const tsl_graph *g, int v);

#endif
