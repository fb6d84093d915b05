/* What the application API's own files share (models/api.c, models/api_tune.c): the
 * graph a tsl_model holds. Not installed. */
#ifndef TESSEL_MODELS_API_INTERNAL_H
#define TESSEL_MODELS_API_INTERNAL_H

#include "models/graph.h"
#include "tessel/tessel.h"

/* The graph m was loaded as (owned by m; valid while m lives). m must not be NULL. */
const tsl_graph *tsl_model_graph(const tsl_model *m);

#endif
