/* Helpers shared by the graph passes: counting the readers of a value. */
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

#endif
