/* A naive reference executor for tsl_graph: runs the nodes one by one in order with
 * the plain loops of ref_nn.c, computing every output shape itself (from the ONNX
 * definitions, not with tessel's shape inference) and checking it against the shape
 * the graph recorded. The ground truth for compiled execution of whole models. */
#ifndef TESSEL_TESTS_REF_GRAPH_H
#define TESSEL_TESTS_REF_GRAPH_H

#include "models/graph.h"
#include "tessel/tensor.h"

/* Runs g. `inputs` holds one tensor per graph input, in g->inputs order, with the
 * input's dtype and shape (compact). On success outputs[k] receives a new compact
 * tensor for graph output k (the caller frees them); on failure none are set.
 * Errors: TSL_ERR_INVALID (input count, dtype or shape mismatch; an output shape that
 * differs from the graph's record, naming the node), TSL_ERR_UNSUPPORTED (an operator or
 * attribute this reference does not know), TSL_ERR_NOMEM. */
tsl_status ref_graph_run(const tsl_graph *g, tsl_tensor *const *inputs, int n_inputs, tsl_tensor **outputs,
                         int n_outputs);

#endif
