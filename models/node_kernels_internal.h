/* Internal to models/node_kernels*.c: the helpers shared by the plain
 * and the blocked (NCHW[x]c) kernel makers. */
#ifndef TESSEL_MODELS_NODE_KERNELS_INTERNAL_H
#define TESSEL_MODELS_NODE_KERNELS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dsl/text_buf.h"
#include "models/node_kernels.h"
#include "ops/op_call.h"

/* A Clip to [lo, hi] around an operand: the open part before it ("min(max(" as the
 * bounds are finite), the close part after it (", lo), hi)"); an infinite bound is left
 * out. */
void tsl_nk_put_clip_open(tsl_text_buf *b, double lo, double hi);
void tsl_nk_put_clip_close(tsl_text_buf *b, double lo, double hi);
/* TSL error naming the node and its operator. */
tsl_status tsl_nk_node_err(const tsl_graph *g, int node, tsl_status st, const char *why);
/* Input i of node n, or NULL when absent. */
const tsl_value *tsl_nk_in_val(const tsl_graph *g, const tsl_node *n, int i);
/* Appends kernel argument `value` seen with shape dims[0..nd). */
void tsl_nk_add_arg(tsl_node_kernel *k, int value, int nd, const int64_t *dims);
int64_t tsl_nk_numel(const tsl_value *v);
/* "op k(x0: f32[..], ...)" for the inputs added so far. */
void tsl_nk_put_header(tsl_text_buf *b, tsl_node_kernel *k);
/* Writes f(operand) of tsl.Activation node `node` (ops/nn/activation.h) into b and
 * names the kernel after the function. Errors: those of tsl_node_activation. */
tsl_status tsl_nk_put_activation(const tsl_graph *g, int node, const char *operand, tsl_node_kernel *k,
                                 tsl_text_buf *b);
/* Appends graph value `value` (logical shape, layout) to call c as its next tensor
 * argument, and to k's arguments (value id; the view comes from the generator). */
void tsl_nk_call_arg(tsl_op_call *c, tsl_node_kernel *k, const tsl_graph *g, int value);
/* Runs the registry's generator `name` (ops/op_call.h) on c, whose arguments were added
 * by tsl_nk_call_arg: sets k's views, ninputs and label, and takes the text into b.
 * Errors: the generator's, prefixed with the node and operator. */
tsl_status tsl_nk_generate(const tsl_graph *g, int node, const char *name, const tsl_op_call *c,
                           tsl_node_kernel *k, tsl_text_buf *b);
/* outer x axis x inner view of v around `axis`. */
void tsl_nk_view3(const tsl_value *v, int axis, int64_t out[3]);

/* The kernel of a MaxPool or AveragePool node (2-D window, ONNX attributes) in the layout
 * of its output: plain NCHW, or NCHW[x]c (the input then in the same blocking). The
 * arguments are the input and output as stored (tsl_value_storage_shape).
 * Errors: those of tsl_node_conv2d_params (malformed attributes, a dilated AveragePool). */
tsl_status tsl_nk_make_pool(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);

/* The kernels of a Resize and a PRelu node in any layout of their values: plain, or
 * NCHW[x]c input and/or output (ops/nn/generators.h says which combinations). */
tsl_status tsl_nk_make_resize(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);
tsl_status tsl_nk_make_prelu(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);

/* The kernel of a node whose output is in the NCHW[x]c layout, or of a layout
 * transform (an Identity carrying TSL_ATTR_LAYOUT_TRANSFORM). */
tsl_status tsl_nk_make_nchwc(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b);

#endif
