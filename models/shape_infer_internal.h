/* Internal to models/shape_infer*.c: the checks of the reductions and LayerNormalization
 * (shape_infer_norm.c) and the two helpers of shape_infer.c they report through. */
#ifndef TESSEL_MODELS_SHAPE_INFER_INTERNAL_H
#define TESSEL_MODELS_SHAPE_INFER_INTERNAL_H

#include "models/graph.h"

/* An error naming node `node` and its operator, the message formatted from fmt. */
tsl_status tsl_infer_error(const tsl_graph *g, int node, tsl_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets output k of node to f32 of shape dims[ndim] (checked against TSL_GRAPH_MAX_NUMEL). */
tsl_status tsl_infer_set_output(tsl_graph *g, int node, int k, int ndim, const int64_t *dims);

/* Shape inference of ReduceMean / ReduceSum / ReduceMax / ReduceMin and of
 * LayerNormalization (graph.h's table); errors as tsl_graph_infer_node. */
tsl_status tsl_infer_reduce(tsl_graph *g, int node);
tsl_status tsl_infer_layer_norm(tsl_graph *g, int node);

#endif
