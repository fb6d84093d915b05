/* tessel — one graph node as an operator instance: the DSL text (docs/dsl.md) of the
 * kernel that computes it, with every shape and attribute written in as a literal.
 *
 * The texts come from the generated operators of ops/ (ops/op_call.h): the graph
 * compiler maps a node to a generator name ("conv2d", "pool2d", "elemwise", "concat",
 * "gemm", ...) and a call (its tensor arguments with their layout, its attributes by
 * name) and never writes DSL text itself (node_kernels.c holds only that mapping).
 *
 * The text is the node's workload: two nodes with the same operator, shapes and
 * attributes give byte-identical texts, so the compiler builds one kernel for both
 * (identical layers share code). The kernel's arguments are the node's tensor inputs,
 * then its outputs (the buffers of graph values), each seen through the `view` shape
 * written in the text (a reshaped view of the same compact bytes: e.g. a global
 * average pool reads its N x C x H x W input as NC x HW).
 *
 * Fused convolutions (models/passes/fuse_conv.h) carry their epilogue as attributes:
 * the kernel computes act(conv(x, w) + bias + residual) in one pass over the output.
 *
 * Nodes that move no data (Reshape, Flatten, Identity, Dropout) have no kernel: their
 * output is a view of their input (TSL_NODE_ALIAS).
 *
 * Values in the blocked layout NCHW[x]c (models/passes/layout.h) are stored as
 * [N, ceil(C/x), H, W, x] with zero lanes past C; their nodes use the registry's
 * NCHW[x]c operators (the layout transforms; blocked convolutions are built by the
 * compiler through the tuner's dispatch, models/compile_conv.h) or the blocked texts of
 * the same generators (pools, elementwise, activations, batch norm, concat, channel
 * slices and shuffles), which keep the padding lanes at zero.
 */
#ifndef TESSEL_MODELS_NODE_KERNELS_H
#define TESSEL_MODELS_NODE_KERNELS_H

#include <stdint.h>

#include "dsl/parser.h"
#include "models/graph.h"
#include "ops/op_call.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_NODE_KERNEL_MAX_ARGS TSL_OP_CALL_MAX_ARGS

typedef enum tsl_node_kernel_kind {
  TSL_NODE_KERNEL = 0, /* compute the outputs with the kernel of `text` */
  TSL_NODE_ALIAS = 1   /* output 0 is input 0's bytes, unchanged */
} tsl_node_kernel_kind;

typedef struct tsl_node_kernel {
  tsl_node_kernel_kind kind;
  char *text;       /* malloc'd DSL text defining one op named `op_name` (KERNEL only) */
  char op_name[16]; /* the op's name in the text */
  char label[96];   /* what the kernel is, for symbol names: "conv2d_3x3_s2_p1_bias_relu" */
  int nargs;        /* inputs then outputs */
  int ninputs;
  int values[TSL_NODE_KERNEL_MAX_ARGS]; /* graph value id of each argument */
  int ndims[TSL_NODE_KERNEL_MAX_ARGS];  /* rank of each argument's view */
  int64_t shapes[TSL_NODE_KERNEL_MAX_ARGS][TSL_MAX_NDIM];
  /* When set, the kernel is this operator of the registry (ops/registry.h)
   * instantiated with `params` (names are static strings), and `text` is only the
   * workload key; otherwise `text` defines the op. */
  const char *registry_op;
  int nparams;
  tsl_dsl_param_value params[16];
} tsl_node_kernel;

/* The shape of v's bytes: its logical shape, or [N, ceil(C/x), H, W, x] for a value in
 * the NCHW[x]c layout. Returns the rank. */
int tsl_value_storage_shape(const tsl_value *v, int64_t shape[TSL_MAX_NDIM]);

/* Fills *out for node `node` of g (shapes inferred). Free with tsl_node_kernel_clear.
 * Errors: TSL_ERR_UNSUPPORTED naming the node and operator for what no kernel computes
 * (an empty tensor, more than TSL_NODE_KERNEL_MAX_ARGS arguments, a MatMul whose
 * batch dimensions broadcast or differ in rank), TSL_ERR_INVALID (shapes unknown), TSL_ERR_NOMEM. */
tsl_status tsl_node_kernel_make(const tsl_graph *g, int node, tsl_node_kernel *out);

void tsl_node_kernel_clear(tsl_node_kernel *k);

/* The kernel call scaling a conv's transformed weight per input channel (a squeeze-
 * excitation gate folded into a 1x1 conv the GEMM does not take,
 * models/passes/fuse_channel_scale.h): the registry's conv_weight_channel_scale
 * (ops/nn/layout.c) reading constant `weight` seen as view [A, CB, B, X, Y] (input
 * channel cb*X + c on axes 1 and 3) and `scale`, one image's blocked [1, C, 1, 1] gate
 * (block X, C/X*X = CB*X lanes), writing value `out` (the weight's size). Free with
 * tsl_node_kernel_clear. Errors: TSL_ERR_INVALID (bad ids, sizes or layouts that do not
 * fit the view), TSL_ERR_NOMEM. */
tsl_status tsl_node_kernel_weight_scale(const tsl_graph *g, int weight, const int64_t view[5], int scale, int out,
                                        tsl_node_kernel *k);

#ifdef __cplusplus
}
#endif
#endif
