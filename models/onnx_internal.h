/* Internals of the ONNX importer shared by onnx.c (model, graph, dispatch),
 * onnx_ops.c (operators that become graph nodes), onnx_fold.c (operators evaluated on
 * constants at import) and onnx_tensor.c (TensorProto decoding). Not a public header. */
#ifndef TESSEL_MODELS_ONNX_INTERNAL_H
#define TESSEL_MODELS_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/graph.h"
#include "models/onnx.h"
#include "models/onnx.pb-c.h"

/* Largest tensor constant folding may create (elements): folding is for shape
 * computations and small weight rewrites, never for anything this big. */
#define ONNX_FOLD_MAX_NUMEL (INT64_C(1) << 26)

typedef struct onnx_ctx {
  tsl_graph *g;
  int64_t opset;                 /* default-domain opset of the model */
  const char *base_dir;          /* external data folder, or NULL */
  const Onnx__NodeProto *node;   /* node being imported (messages), or NULL */
  int node_index;
} onnx_ctx;

/* Records an error prefixed with "onnx: node 'name' (OpType, opset N): " (or "onnx: "
 * outside a node) and returns st. */
tsl_status onnx_err(const onnx_ctx *c, tsl_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Re-records the current thread's last error with the node prefix (for errors that
 * come from graph calls, which name the node but not the opset). */
tsl_status onnx_wrap(const onnx_ctx *c, tsl_status st);

/* ---- attributes of the current node ---- */
const Onnx__AttributeProto *onnx_attr(const onnx_ctx *c, const char *name);
/* Typed reads; absent gives the default; present with another type is TSL_ERR_INVALID. */
tsl_status onnx_attr_int(const onnx_ctx *c, const char *name, int64_t dflt, int64_t *out);
tsl_status onnx_attr_float(const onnx_ctx *c, const char *name, double dflt, double *out);
/* *v points into the proto (NULL and *n = 0 when absent). */
tsl_status onnx_attr_ints(const onnx_ctx *c, const char *name, int *n, const int64_t **v);
/* Copies a string attribute into buf (dflt when absent). */
tsl_status onnx_attr_string(const onnx_ctx *c, const char *name, const char *dflt, char *buf, size_t n);
/* TSL_ERR_UNSUPPORTED naming the first attribute not in `allowed` (NULL-terminated). */
tsl_status onnx_check_attrs(const onnx_ctx *c, const char *const *allowed);

/* ---- inputs and outputs of the current node ---- */
int onnx_n_inputs(const onnx_ctx *c);  /* count without trailing omitted ("") inputs */
/* Value id of input k, -1 if omitted or beyond the node's inputs; an undefined name is
 * TSL_ERR_INVALID. */
tsl_status onnx_input(const onnx_ctx *c, int k, int *id);
/* As onnx_input for an input the operator requires: omitted (an empty name, or beyond
 * the node's inputs) is TSL_ERR_INVALID, so *id is always a value id on success. */
tsl_status onnx_required_input(const onnx_ctx *c, int k, int *id);
/* The constant tensor of input k, or NULL when omitted or not constant. */
const tsl_tensor *onnx_const_input(const onnx_ctx *c, int k);
/* Reads integer constant input k (i32/i64, rank <= 1) into v[max]; *n = -1 if the input
 * is omitted. A non-constant input is TSL_ERR_UNSUPPORTED (naming `what`). */
tsl_status onnx_const_ints(const onnx_ctx *c, int k, const char *what, int64_t *v, int max, int *n);
/* Adds a constant named by output k of the node (ownership of t moves). */
tsl_status onnx_define_const(onnx_ctx *c, int k, tsl_tensor *t);

/* ---- tensors ---- */
/* Maps an ONNX TensorProto.DataType. TSL_ERR_UNSUPPORTED for string, complex, bfloat16;
 * TSL_ERR_INVALID for unknown codes. */
tsl_status onnx_dtype(int32_t onnx_type, tsl_dtype *out);
/* Decodes a TensorProto (external data relative to base_dir; NULL refuses it). */
tsl_status onnx_tensor_decode(const Onnx__TensorProto *tp, const char *base_dir, tsl_tensor **out);

/* ---- operator handlers ---- */
/* True when op_type is folded on constant inputs (see onnx.h). */
bool onnx_is_foldable(const char *op_type);
/* Evaluates the current node on its constant inputs, defining its outputs as constants.
 * Shape only needs its input's shape. TSL_ERR_UNSUPPORTED if an input is not constant. */
tsl_status onnx_fold_node(onnx_ctx *c);
/* Imports the current node as graph node(s). TSL_ERR_NOT_FOUND if op_type is not a
 * graph operator (the caller reports it). */
tsl_status onnx_import_op(onnx_ctx *c);
/* The shape after the current Squeeze (unsqueeze false) or Unsqueeze node of an input of
 * rank ndim and extents shape: axes from the attribute (opset < 13) or the constant input
 * 1. Errors: TSL_ERR_INVALID (axes missing, out of range, repeated, or squeezing an
 * extent other than 1), TSL_ERR_UNSUPPORTED (a result rank above TSL_MAX_NDIM, axes that
 * are not constant). */
tsl_status onnx_squeeze_shape(onnx_ctx *c, bool unsqueeze, int ndim, const int64_t *shape, int *out_ndim,
                              int64_t *out_shape);
/* The handlers' node emission (onnx_ops.c), for handlers in other files: a node of `op`
 * reading the ONNX node's inputs 0..n_in-1 into its first output, and its shape inference. */
tsl_status onnx_emit_simple(onnx_ctx *c, tsl_op op, int n_in, int *node);
tsl_status onnx_finish_node(onnx_ctx *c, int node);
/* Resize (opset 10 on) and Upsample (7 on) as a Resize node (onnx_resize.c). */
tsl_status onnx_import_resize(onnx_ctx *c);
tsl_status onnx_import_upsample(onnx_ctx *c);

#endif
