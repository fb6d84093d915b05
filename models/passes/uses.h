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

/* The node `op` reading ins[0..nin) whose new output takes the place of value `old` for
 * all of old's readers and graph-output listings; the new value is named
 * "<old's name>.<suffix>" (unnamed when that name is taken). *node and *value (may be
 * NULL) receive the new ids; the caller sets attributes and infers the shape.
 * Errors: those of tsl_graph_add_value / add_node / replace_uses. */
tsl_status tsl_pass_add_replacement(tsl_graph *g, int old, const char *suffix, tsl_op op, int nin, const int *ins,
                                    int *node, int *value);

/* Sets on node `to` every attribute of node `from` (copies; same names replaced).
 * Errors: TSL_ERR_NOMEM, TSL_ERR_UNSUPPORTED (a tensor attribute). */
tsl_status tsl_pass_copy_attrs(tsl_graph *g, int from, int to);

/* One rewrite of a pattern-replacing pass at node `node`: when the pattern matches there
 * (skipping nodes marked in dead), replace it, mark the replaced nodes in dead (room for
 * every node the pass may add) and set *done. */
typedef tsl_status (*tsl_pass_rewrite_fn)(tsl_graph *g, int node, bool *dead, void *ctx, bool *done);

/* Runs fn at every node g had when called, in order; then, if anything was rewritten,
 * sorts and prunes the graph (ids change). *count (may be NULL) receives the rewrites.
 * `pass` names the pass in errors. Errors: TSL_ERR_NOMEM, fn's, those of toposort/prune. */
tsl_status tsl_pass_rewrite_each(tsl_graph *g, const char *pass, tsl_pass_rewrite_fn fn, void *ctx, int *count);

#endif
