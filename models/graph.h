/* tessel — the model graph: operator nodes over named values.
 *
 * A graph is what the ONNX importer and the zoo builders produce and what the graph
 * passes (batch-norm folding, fusion, layout selection, memory planning) rewrite
 * before kernels are compiled. It is plain data: arrays of values and nodes, indexed
 * by int ids, readable directly through the structs below and changed through the
 * functions of this header (which keep the name index and producer links right).
 *
 * Values. A value has a unique name, a dtype and a static shape (ndim -1 until shape
 * inference sets it). A value is exactly one of: a graph input (fed at run time), a
 * constant (an initializer: `constant` holds the owned tensor), or the output of one
 * node (`producer`). Shapes are always the logical ONNX shapes (NCHW for images);
 * `layout` says how a later pass decided to arrange the bytes (plain row-major by
 * default, NCHW[x]c blocked after layout selection), never the shape.
 *
 * Nodes. A node has an operator, a name, input value ids (-1 for an omitted optional
 * input), output value ids and attributes. Nodes are kept in topological order:
 * every input of node i is a graph input, a constant, or an output of a node j < i
 * (tsl_graph_check verifies this).
 *
 * Operator semantics are ONNX's (https://github.com/onnx/onnx/blob/main/docs/Operators.md),
 * in one canonical form whatever opset a model came from: parameters that ONNX passes
 * as constant inputs in later opsets (Reshape's shape, Slice's starts/ends/axes/steps,
 * Clip's min/max, Pad's pads, Split's split, ReduceMean's axes) are attributes here,
 * under the ONNX input name; auto_pad is resolved into explicit pads; Softmax always
 * has opset-13 semantics (one axis). Attributes that are absent take ONNX defaults.
 * Compute operators take and produce f32; the spatial operators (Conv, pools) take
 * 4-D NCHW data, i.e. 2-D images.
 *
 *   op                 inputs                          attributes (default)
 *   Conv               X[N,C,H,W], W[M,C/group,kH,kW], kernel_shape (from W), strides (1,1),
 *                      B[M] (optional)                 pads [top,left,bottom,right] (0),
 *                                                      dilations (1,1), group (1)
 *   BatchNormalization X[N,C,...], scale, B, mean, var epsilon (1e-5); inference form:
 *                      (each [C])                      Y = (X-mean)/sqrt(var+eps)*scale+B
 *   Relu               X                               -
 *   Clip               X                               min (-inf), max (+inf) (floats)
 *   MaxPool            X[N,C,H,W]                      kernel_shape (required), strides,
 *                                                      pads, dilations, ceil_mode (0)
 *   AveragePool        X[N,C,H,W]                      kernel_shape, strides, pads, ceil_mode,
 *                                                      count_include_pad (0)
 *   GlobalAveragePool  X[N,C,H,W] -> [N,C,1,1]         -
 *   ReduceMean,        X (any rank)                    axes (every axis when absent; may be
 *   ReduceSum,                                         negative, not repeated), keepdims (1);
 *   ReduceMax,                                         ONNX's noop_with_empty_axes with no axes
 *   ReduceMin                                          is an Identity node here
 *   Add, Sub, Mul, Div A, B (multidirectional numpy broadcasting)
 *   Pow                X, Y (optional; broadcasting)   exponent (float): with one input, the
 *                                                      constant scalar exponent (the importer
 *                                                      turns a constant scalar Y into it)
 *   LayerNormalization X, Scale, B (optional)          axis (-1), epsilon (1e-5): per index of
 *                                                      X[:axis], over X[axis:]: (X - mean) /
 *                                                      sqrt(var + epsilon) * Scale + B (biased
 *                                                      variance); Scale and B broadcast to
 *                                                      X[axis:]; optional outputs Mean and
 *                                                      InvStdDev 1/sqrt(var + epsilon), each
 *                                                      X with the normalized extents 1;
 *                                                      tsl_norm_end (rank, not ONNX's): the
 *                                                      normalized axes are axis..end-1 and
 *                                                      Scale, B broadcast to them (a channel
 *                                                      norm of NCHW: axis 1, end 2)
 *   Concat             X0..Xn                          axis (required, may be negative)
 *   Gemm               A, B, C (optional, broadcast    alpha (1), beta (1), transA (0),
 *                      to [M,N])                       transB (0)
 *   MatMul             A, B (numpy matmul)             -
 *   Flatten            X                               axis (1)
 *   Reshape            X                               shape (required ints; 0 copies a
 *                                                      dim unless allowzero, -1 infers)
 *   Transpose          X                               perm (reversed dims)
 *   Slice              X                               starts, ends (required), axes
 *                                                      (0..), steps (1)
 *   Split              X -> Y0..Yk                     axis (0), split (equal parts)
 *   Softmax            X                               axis (-1)
 *   Dropout            X (inference: identity)         -
 *   Identity           X                               -
 *   Pad                X                               pads [x1_begin.., x1_end..] (required,
 *                                                      may be negative: a crop, applied
 *                                                      before the padding), value (0),
 *                                                      mode "constant" (default), "reflect"
 *                                                      (mirror without the edge), "edge"
 *                                                      (repeat it), "wrap" (periodic)
 *   Resize             X (any rank) -> Y[sizes]        sizes (required ints: every output
 *                                                      extent), scales (floats, every axis:
 *                                                      present when the model gave scales,
 *                                                      else sizes[i] / X[i] is the scale),
 *                                                      mode "nearest" (default) | "linear",
 *                                                      coordinate_transformation_mode
 *                                                      ("half_pixel"; also pytorch_half_pixel,
 *                                                      align_corners, asymmetric,
 *                                                      tf_half_pixel_for_nn,
 *                                                      half_pixel_symmetric), nearest_mode
 *                                                      ("round_prefer_floor"; also
 *                                                      round_prefer_ceil, floor, ceil, and
 *                                                      "simple": opset-10 Resize and Upsample,
 *                                                      floor where the axis' scale >= 1, ceil
 *                                                      below). Linear is N-linear over the
 *                                                      resized axes; cubic, tf_crop_and_resize
 *                                                      and antialias are refused at import
 *   PRelu              X, slope (unidirectional        Y = X < 0 ? slope * X : X
 *                      broadcast to X)
 *   tsl.ChannelShuffle X[N,C,H,W] (made by a pass)     group G (C % G == 0): output channel
 *                                                      j*G + g is input channel g*(C/G) + j
 *                                                      (ShuffleNet's shuffle, Zhang et al. 2018)
 *
 * Ownership: the graph owns every string, attribute array and constant tensor in it;
 * tsl_graph_free releases all. Pointers into the value and node arrays are invalidated
 * by any call that adds or removes values or nodes; hold ids, not pointers.
 *
 * Thread safety: none inside; concurrent readers are fine while nobody mutates.
 */
#ifndef TESSEL_MODELS_GRAPH_H
#define TESSEL_MODELS_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest value of a graph, in elements: far beyond any CNN tensor, and it keeps
 * every size computation (elements times bytes, sums of a few sizes) clear of int64
 * overflow. It bounds the extents with zeros counted as 1 (tsl_shape_check), so an
 * empty value is bounded too and products of any of its extents stay below it. Graph
 * inputs, constants and every inferred shape are checked against it. */
#define TSL_GRAPH_MAX_NUMEL (INT64_C(1) << 40)

/* Operators of the CNN set. The printed name is the ONNX op type. Later passes append
 * their own (fused, layout-transform) operators after TSL_OP_LAYER_NORM. */
typedef enum tsl_op {
  TSL_OP_CONV,
  TSL_OP_BATCH_NORM,
  TSL_OP_RELU,
  TSL_OP_CLIP,
  TSL_OP_MAX_POOL,
  TSL_OP_AVERAGE_POOL,
  TSL_OP_GLOBAL_AVERAGE_POOL,
  TSL_OP_REDUCE_MEAN,
  TSL_OP_ADD,
  TSL_OP_MUL,
  TSL_OP_DIV,
  TSL_OP_CONCAT,
  TSL_OP_GEMM,
  TSL_OP_MATMUL,
  TSL_OP_FLATTEN,
  TSL_OP_RESHAPE,
  TSL_OP_TRANSPOSE,
  TSL_OP_SLICE,
  TSL_OP_SPLIT,
  TSL_OP_SOFTMAX,
  TSL_OP_DROPOUT,
  TSL_OP_IDENTITY,
  TSL_OP_PAD,
  TSL_OP_SUB,
  TSL_OP_POW,
  TSL_OP_REDUCE_SUM,
  TSL_OP_REDUCE_MAX,
  TSL_OP_REDUCE_MIN,
  TSL_OP_LAYER_NORM,
  /* operators of the graph passes (not ONNX's; printed with a "tsl." prefix) */
  TSL_OP_CHANNEL_SHUFFLE,
  TSL_OP_BINARY, /* tsl.Binary: a binary-network operator (models/node_kernels_binary.h) */
  /* tsl.Activation: y = f(x) elementwise for a function of ops/nn/activation.h; the
   * string attribute "function" names it by its ONNX operator type ("Sigmoid",
   * "HardSwish", ...), float attributes as ONNX's ("alpha", "beta", "gamma") */
  TSL_OP_ACTIVATION,
  TSL_OP_RESIZE,
  TSL_OP_PRELU,
  /* tsl.ChannelGather: output channels picked from image inputs by affine pieces (what
   * channel Concat, Slice and ChannelShuffle chains compose to, passes/channel_gather.h):
   * int "channels" (the output's), ints "pieces", six per piece (input, out_start,
   * out_step, count, in_start, in_step) as ops/nn/generators.h's "channel_gather" */
  TSL_OP_CHANNEL_GATHER,
  /* tsl.SqueezeExcite: the gate of a squeeze-excitation block (passes/squeeze_excite.h):
   * inputs x [N, C, H, W] NCHW[x]c, W1 [CB, S, x], B1 [1, S, 1], W2t [S, CB, x], B2
   * [1, CB, x] (channels zero-padded to CB = ceil(C / x) blocks); output [N, C, 1, 1] =
   * gate(W2t^T hidden(W1 mean_hw(x) + B1) + B2); strings "hidden" and "gate" name the
   * functions ("Relu", "Clip" or a function of ops/nn/activation.h; absent: identity),
   * floats "hidden_attr0", "hidden_attr1", "gate_attr0", "gate_attr1" their attributes
   * (Clip: min, max) */
  TSL_OP_SQUEEZE_EXCITE,
  /* SpaceToDepth (ONNX): int "blocksize" b; [N, C, H, W] -> [N, C*b*b, H/b,
   * W/b], channel (by*b + bx)*C + c holding x[c, h*b + by, w*b + bx]; H and W multiples of
   * b. Plain NCHW in and out */
  TSL_OP_SPACE_TO_DEPTH,
  TSL_OP_COUNT
} tsl_op;

/* The ONNX op type of `op` ("Conv", "BatchNormalization", ...); "?" if out of range.
 * The string is static. */
const char *tsl_op_name(tsl_op op);

/* The operator whose ONNX op type is `name` (exact, case-sensitive).
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOT_FOUND (not in the set). */
tsl_status tsl_op_from_name(const char *name, tsl_op *out);

typedef enum tsl_attr_kind {
  TSL_ATTR_INT,
  TSL_ATTR_FLOAT,
  TSL_ATTR_INTS,
  TSL_ATTR_FLOATS,
  TSL_ATTR_STRING,
  TSL_ATTR_TENSOR
} tsl_attr_kind;

/* One attribute. Only the member of its kind is meaningful. FLOAT values are stored
 * in double but hold what the model gave (ONNX floats are float32). */
typedef struct tsl_attr {
  char *name;
  tsl_attr_kind kind;
  int64_t i;        /* INT */
  double f;         /* FLOAT */
  int n;            /* element count of ints / floats */
  int64_t *ints;    /* INTS */
  double *floats;   /* FLOATS */
  char *s;          /* STRING (NUL-terminated) */
  tsl_tensor *t;    /* TENSOR (owned) */
} tsl_attr;

/* How a value's bytes are arranged. PLAIN is compact row-major in the logical shape;
 * NCHWC is the blocked layout N, C/block, H, W, block (the channel tail zero-padded). */
typedef enum tsl_layout_kind { TSL_LAYOUT_PLAIN = 0, TSL_LAYOUT_NCHWC = 1 } tsl_layout_kind;
typedef struct tsl_layout {
  tsl_layout_kind kind;
  int block; /* channels per block for NCHWC; 0 for PLAIN */
} tsl_layout;

typedef struct tsl_value {
  char *name;
  tsl_dtype dtype;
  int ndim;                        /* -1 while unknown */
  int64_t shape[TSL_MAX_NDIM];     /* logical extents; entries past ndim are 0 */
  tsl_tensor *constant;            /* owned initializer, or NULL */
  int producer;                    /* node id, or -1 (input, constant, not yet produced) */
  bool is_input;                   /* a graph input */
  tsl_layout layout;
} tsl_value;

typedef struct tsl_node {
  tsl_op op;
  char *name;
  int n_inputs;
  int *inputs;   /* value ids; -1 for an omitted optional input */
  int n_outputs;
  int *outputs;  /* value ids */
  int n_attrs;
  tsl_attr *attrs;
} tsl_node;

typedef struct tsl_graph_index tsl_graph_index;

typedef struct tsl_graph {
  char *name;
  int n_values;
  tsl_value *values;
  int n_nodes;
  tsl_node *nodes;
  int n_inputs;
  int *inputs;   /* value ids, in the order a caller feeds them */
  int n_outputs;
  int *outputs;  /* value ids, in the order results are returned */
  /* private */
  int cap_values, cap_nodes;
  tsl_graph_index *index;
} tsl_graph;

/* A new empty graph named `name` (copied; NULL gives ""). Free with tsl_graph_free.
 * Errors: TSL_ERR_INVALID (NULL out), TSL_ERR_NOMEM. */
tsl_status tsl_graph_new(const char *name, tsl_graph **out);

/* Frees the graph and everything it owns. NULL is a no-op. */
void tsl_graph_free(tsl_graph *g);

/* The id of the value named `name`, or -1. */
int tsl_graph_find_value(const tsl_graph *g, const char *name);

/* Adds an intermediate value (shape unknown until inference). `name` NULL gives a
 * fresh unique name. *id receives the new value's id.
 * Errors: TSL_ERR_INVALID (NULL g/id, a name already used), TSL_ERR_NOMEM. */
tsl_status tsl_graph_add_value(tsl_graph *g, const char *name, int *id);

/* Adds a graph input with a static shape (`ndim` extents >= 0 in `shape`).
 * Errors: TSL_ERR_INVALID (duplicate name, bad dtype/ndim/extent, a shape above
 * TSL_GRAPH_MAX_NUMEL with zeros counted as 1), TSL_ERR_NOMEM. */
tsl_status tsl_graph_add_input(tsl_graph *g, const char *name, tsl_dtype dt, int ndim,
                               const int64_t *shape, int *id);

/* Adds a constant value holding `t`. Ownership of `t` moves to the graph in every
 * case (on failure it is freed). The value's dtype and shape are t's.
 * Errors: TSL_ERR_INVALID (NULL t, duplicate name, a shape above TSL_GRAPH_MAX_NUMEL
 * with zeros counted as 1), TSL_ERR_NOMEM. */
tsl_status tsl_graph_add_constant(tsl_graph *g, const char *name, tsl_tensor *t, int *id);

/* Appends `value` to the graph outputs (a value may be listed once).
 * Errors: TSL_ERR_INVALID (bad id, listed twice), TSL_ERR_NOMEM. */
tsl_status tsl_graph_add_output(tsl_graph *g, int value);

/* Appends a node. `inputs` are value ids or -1 (omitted optional input); `outputs` are
 * ids of values that no node produces yet and that are neither inputs nor constants.
 * `name` NULL gives "<OpType>_<id>". Attributes are added afterwards with the setters.
 * The node is not shape-checked here: call tsl_graph_infer_node.
 * Errors: TSL_ERR_INVALID (bad ids, an output already produced or constant, no
 * outputs), TSL_ERR_NOMEM. */
tsl_status tsl_graph_add_node(tsl_graph *g, tsl_op op, const char *name, int n_inputs,
                              const int *inputs, int n_outputs, const int *outputs, int *node_id);

/* Attribute setters: add the attribute or replace one of the same name. Arrays and
 * strings are copied; a tensor's ownership moves to the graph (freed on failure).
 * Errors: TSL_ERR_INVALID (bad node id, NULL name, n < 0), TSL_ERR_NOMEM. */
tsl_status tsl_graph_set_attr_int(tsl_graph *g, int node, const char *name, int64_t v);
tsl_status tsl_graph_set_attr_float(tsl_graph *g, int node, const char *name, double v);
tsl_status tsl_graph_set_attr_ints(tsl_graph *g, int node, const char *name, int n,
                                   const int64_t *v);
tsl_status tsl_graph_set_attr_floats(tsl_graph *g, int node, const char *name, int n,
                                     const double *v);
tsl_status tsl_graph_set_attr_string(tsl_graph *g, int node, const char *name, const char *s);
tsl_status tsl_graph_set_attr_tensor(tsl_graph *g, int node, const char *name, tsl_tensor *t);

/* The attribute `name` of `node`, or NULL. */
const tsl_attr *tsl_node_attr(const tsl_node *node, const char *name);

/* Typed reads with a default for an absent attribute. An attribute of another kind
 * counts as absent (tsl_graph_infer_node reports such attributes as errors). */
int64_t tsl_node_attr_int(const tsl_node *node, const char *name, int64_t dflt);
double tsl_node_attr_float(const tsl_node *node, const char *name, double dflt);
/* The ints of an INTS attribute and their count in *n; NULL (and *n = 0) if absent. */
const int64_t *tsl_node_attr_ints(const tsl_node *node, const char *name, int *n);

/* Resolved parameters of a Conv, MaxPool or AveragePool node (defaults applied).
 * kernel is (kH, kW); pads are (top, left, bottom, right). For pools `group` is 1. */
typedef struct tsl_conv2d_params {
  int64_t kernel[2], strides[2], pads[4], dilations[2];
  int64_t group;
  bool ceil_mode, count_include_pad; /* pools only */
} tsl_conv2d_params;

/* Fills *p for a Conv / MaxPool / AveragePool node after checking its attributes
 * (kernel taken from the weight's shape for a Conv without kernel_shape).
 * Errors: TSL_ERR_INVALID (another op, malformed attributes: wrong count, stride or
 * dilation < 1, negative pad, group < 1). */
tsl_status tsl_node_conv2d_params(const tsl_graph *g, const tsl_node *node, tsl_conv2d_params *p);

/* LayerNormalization's end of the normalized axes (graph.h's table); absent: the rank. */
#define TSL_ATTR_NORM_END "tsl_norm_end"

/* The axes a ReduceMean / ReduceSum / ReduceMax / ReduceMin node reduces: reduced[d] for
 * each axis d of its input (rank r, entries past r false), *count of them (count may be
 * NULL). Errors: TSL_ERR_INVALID (another op, an axis outside [-r, r) or repeated, an
 * 'axes' attribute that is not ints), naming the node. */
tsl_status tsl_node_reduce_axes(const tsl_graph *g, const tsl_node *node, bool reduced[TSL_MAX_NDIM], int *count);

/* Whether node is a ReduceMean over exactly axes 2 and 3 of 4-D data: a global average
 * pool (the plain and blocked global-pool kernels compute it). */
bool tsl_node_is_spatial_mean(const tsl_graph *g, const tsl_node *node);

struct tsl_activation;
/* The function of a tsl.Activation node (its "function" attribute, looked up in
 * ops/nn/activation.h) and its attribute values, defaults applied (attrs: room for
 * TSL_ACTIVATION_MAX_ATTRS). Errors: TSL_ERR_INVALID (another op, no "function" string,
 * an attribute that is not a float), TSL_ERR_UNSUPPORTED (a function the table lacks);
 * the message names the node. */
tsl_status tsl_node_activation(const tsl_graph *g, const tsl_node *node, const struct tsl_activation **fn,
                               double *attrs);

/* Shape inference for node `node`: checks its inputs (count, dtype, rank, shapes) and
 * attributes against the table above and sets its outputs' dtype and shape. Inputs must
 * have known shapes. Messages name the node and its operator.
 * Errors: TSL_ERR_INVALID (inconsistent shapes or attributes), TSL_ERR_UNSUPPORTED
 * (valid ONNX outside what tessel runs: non-f32 data, non-4-D conv/pool, Pad modes
 * other than constant, reflect, edge and wrap, pool padding >= kernel, Resize modes
 * other than nearest and linear). */
tsl_status tsl_graph_infer_node(tsl_graph *g, int node);

/* Shape inference for every node in order. Errors: as tsl_graph_infer_node. */
tsl_status tsl_graph_infer_shapes(tsl_graph *g);

/* Structural check: value ids in range, each value produced at most once and only by
 * a node (not an input or constant), every node input available before the node
 * (topological order), every graph output available, no node without outputs.
 * Errors: TSL_ERR_INVALID naming the first offending node or value. */
tsl_status tsl_graph_check(const tsl_graph *g);

/* Number of parameters: elements of the floating-point constants that nodes read,
 * not counting BatchNormalization's running mean and variance (statistics, not
 * learned; torchvision's convention for parameter counts). A constant read by several
 * nodes counts once. */
int64_t tsl_graph_param_count(const tsl_graph *g);

/* Number of nodes with operator `op`. */
int tsl_graph_count_op(const tsl_graph *g, tsl_op op);

/* Reorders the nodes topologically, keeping the current order wherever it already is
 * one (each step takes the earliest node whose inputs are all available), so a pass
 * may append nodes anywhere in the dataflow and then sort. Node ids change.
 * Errors: TSL_ERR_INVALID (a cycle, or a node reading a value nothing produces; the
 * message names one such node), TSL_ERR_NOMEM. */
tsl_status tsl_graph_toposort(tsl_graph *g);

/* Replaces every use of value `from` (node inputs and graph outputs) by `to`.
 * Errors: TSL_ERR_INVALID (bad ids). */
tsl_status tsl_graph_replace_uses(tsl_graph *g, int from, int to);

/* Removes nodes none of whose outputs is used (transitively; graph outputs count as
 * uses) and values nobody produces, reads or lists (unused constants included).
 * Value and node ids change: ids held before the call are invalid after it. Order is
 * kept. Errors: TSL_ERR_NOMEM. */
tsl_status tsl_graph_prune(tsl_graph *g);

/* A deep copy of g (values, constants, nodes, attributes, inputs and outputs, with
 * the same ids). Free with tsl_graph_free. Errors: TSL_ERR_INVALID (NULL arguments),
 * TSL_ERR_NOMEM. */
tsl_status tsl_graph_clone(const tsl_graph *g, tsl_graph **out);

/* Sets the batch size of g in place: the first extent of every graph input becomes
 * `batch`, as does the first entry of each Reshape "shape" attribute that carries the
 * batch (its first entry and its input's first extent both the old batch: ShuffleNet's
 * channel shuffle); then shapes are inferred again. The graph's inputs must share their
 * first extent (the old batch). Every output whose first extent was the old batch must
 * end with `batch`. On failure g may be half changed: work on a clone.
 * Errors: TSL_ERR_INVALID (NULL g, batch < 1, no inputs, a shape that no longer
 * infers: the message names the node), TSL_ERR_UNSUPPORTED (a scalar input, inputs
 * with different first extents, an output that keeps a fixed batch). */
tsl_status tsl_graph_set_batch(tsl_graph *g, int64_t batch);

/* Replaces the inputs of node `node` by inputs[0..n) (value ids or -1), for passes that
 * rewrite a node (a fused conv gains its residual input). Errors: TSL_ERR_INVALID (bad
 * node or value id), TSL_ERR_NOMEM. */
tsl_status tsl_graph_set_node_inputs(tsl_graph *g, int node, int n, const int *inputs);

/* Writes the graph: a header line, one line per input and output, then one line per
 * node: `outputs = Op(inputs) {attrs} : in shapes -> out shapes`. Constants print as
 * `%name<const f32[64x3x7x7]>`; shapes as `f32[1x3x224x224]`. */
void tsl_graph_print(const tsl_graph *g, FILE *f);

/* Writes node `node`'s line (without a newline) into buf of size n (truncated,
 * always NUL-terminated when n > 0). Returns the length the full line needs. */
int tsl_graph_format_node(const tsl_graph *g, int node, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
