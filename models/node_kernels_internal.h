/* Internal to models/node_kernels*.c: the helpers shared by the node -> generator
 * mappings (node_kernels.c), the blocked layout's checks and transforms
 * (node_kernels_nchwc.c) and the binary networks' registry kernels. */
#ifndef TESSEL_MODELS_NODE_KERNELS_INTERNAL_H
#define TESSEL_MODELS_NODE_KERNELS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dsl/text_buf.h"
#include "models/node_kernels.h"
#include "ops/op_call.h"

/* TSL error naming the node and its operator. */
tsl_status tsl_nk_node_err(const tsl_graph *g, int node, tsl_status st, const char *why);
/* Input i of node n, or NULL when absent. */
const tsl_value *tsl_nk_in_val(const tsl_graph *g, const tsl_node *n, int i);
/* Appends kernel argument `value` seen with shape dims[0..nd). */
void tsl_nk_add_arg(tsl_node_kernel *k, int value, int nd, const int64_t *dims);
/* Appends graph value `value` (logical shape, layout) to call c as its next tensor
 * argument, and to k's arguments (value id; the view comes from the generator). */
void tsl_nk_call_arg(tsl_op_call *c, tsl_node_kernel *k, const tsl_graph *g, int value);
/* Runs the registry's generator `name` (ops/op_call.h) on c, whose arguments were added
 * by tsl_nk_call_arg: sets k's views, ninputs and label, and takes the text into b.
 * Errors: the generator's, prefixed with the node and operator. */
tsl_status tsl_nk_generate(const tsl_graph *g, int node, const char *name, const tsl_op_call *c,
                           tsl_node_kernel *k, tsl_text_buf *b);
/* The kernel of layout transform node `node` (an Identity carrying
 * TSL_ATTR_LAYOUT_TRANSFORM): a registry operator (nchw_to_nchwc, nchwc_to_nchw,
 * nchwc_reblock) whose text is only the workload key. */
tsl_status tsl_nk_make_transform(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);

/* The kernels of a Resize and a PRelu node in any layout of their values: plain, or
 * NCHW[x]c input and/or output (ops/nn/generators.h says which combinations). */
tsl_status tsl_nk_make_resize(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);
tsl_status tsl_nk_make_prelu(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);

/* TSL_OK when node `node`, whose output is in the NCHW[x]c layout, has a blocked kernel
 * (a generator of ops/ that reads the layout of its arguments); else the error naming
 * the node (a blocked conv: the conv path of models/compile_conv.h). */
tsl_status tsl_nk_check_nchwc(const tsl_graph *g, int node);

#endif
