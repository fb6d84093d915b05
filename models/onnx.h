/* tessel — ONNX import: a model file (protobuf ModelProto) to a tsl_graph.
 *
 * Accepted: the default ONNX domain at opsets 7 to 18 (the opset_import of the model;
 * older opsets operator by operator, see TSL_ONNX_OPSET_MIN), and these operators
 * (semantics of the model's opset, mapped to the canonical form of graph.h): Conv,
 * BatchNormalization (inference form), Relu, Clip (min/max as attributes before
 * opset 11, constant inputs after), MaxPool, AveragePool,
 * GlobalAveragePool, ReduceMean / ReduceSum / ReduceMax / ReduceMin (any axes; axes an
 * input from opset 13 for ReduceSum, 18 for the others; noop_with_empty_axes), Add, Sub,
 * Mul, Div, Pow (a constant scalar exponent becomes an attribute), LayerNormalization
 * (opset 17, its Mean/InvStdDev outputs too; stash_type 1), Concat, Gemm, MatMul,
 * Flatten, Reshape, Transpose, Slice, Split, Softmax (opset < 13 "coerce to 2-D" form
 * rewritten as Reshape-Softmax-Reshape), Dropout (inference: identity; a mask output
 * becomes a constant of ones), Identity, Pad (constant mode), Constant.
 *
 * Constant folding at import: a node whose inputs are all constants is evaluated when
 * its operator is one of Constant, Identity, Shape, Gather, Unsqueeze, Squeeze, Concat,
 * Cast, Add, Sub, Mul, Div, Pow, Slice, Reshape, Transpose, ConstantOfShape (Shape needs only
 * its input's static shape). These are the Shape/Gather/Unsqueeze/Concat/Cast chains that
 * exporters emit to compute reshape targets; after folding them, parameters such as
 * Reshape's shape are constants and become attributes. Constants nobody reads are
 * dropped at the end (tsl_graph_prune).
 *
 * Shapes are static: every graph input needs fixed extents (a symbolic dimension is
 * TSL_ERR_UNSUPPORTED), and every value's shape is inferred while importing.
 *
 * Tensor data: raw_data, float_data, int32_data, int64_data, double_data, uint64_data,
 * and external data (data_location EXTERNAL: "location" relative to the model's folder
 * — absolute paths and ".." are refused —, "offset", "length").
 *
 * Errors (every message starts with "onnx" and names the file, or for a node its name
 * — "#<index>" when unnamed —, op type and the model's opset):
 *   TSL_ERR_IO          unreadable file, missing or short external data file
 *   TSL_ERR_INVALID     not a parseable ModelProto (truncated, corrupted), or a model
 *                       that breaks ONNX rules (undefined value, bad shapes/attributes,
 *                       tensor data of the wrong size)
 *   TSL_ERR_UNSUPPORTED valid ONNX outside the accepted set: another opset or domain,
 *                       an unknown operator, attribute or data type, training mode,
 *                       a parameter input that is not constant, symbolic shapes
 *   TSL_ERR_NOMEM
 * A truncated or corrupted file never crashes the reader.
 */
#ifndef TESSEL_MODELS_ONNX_H
#define TESSEL_MODELS_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "models/graph.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The default-domain opsets tessel targets. A model declaring an older opset (1..6)
 * is accepted node by node: where the operator's definition at that opset is its
 * opset-7 one (most CNN operators are unchanged since opset 1), or a legacy form with
 * an exact mapping (BatchNormalization/Dropout with is_test = 1, Add/Mul/Div legacy
 * broadcast of a trailing B, Gemm's broadcast attribute); any other node is refused
 * with TSL_ERR_UNSUPPORTED naming its opset. */
#define TSL_ONNX_OPSET_MIN 7
/* Opset 19 changed, of the operators accepted: Pad (mode "wrap"), Resize
 * (half_pixel_symmetric), AveragePool (a dilations attribute, refused by name) and the
 * types Cast/Constant/Identity/Reshape/Shape take (f32 and the folded integer types are
 * unchanged). */
#define TSL_ONNX_OPSET_MAX 19

/* A graph input frozen to a constant at import (the tensor is copied). Use it for
 * inputs that carry parameters (shapes, axes, Clip bounds) rather than data. */
typedef struct tsl_onnx_binding {
  const char *name;
  const tsl_tensor *value;
} tsl_onnx_binding;

typedef struct tsl_onnx_options {
  /* Folder that external tensor data is relative to; NULL refuses external data. For
   * tsl_graph_load_onnx_opts, NULL means the model file's folder. */
  const char *base_dir;
  int n_bindings;
  const tsl_onnx_binding *bindings; /* dtype and shape must match the declared input */
} tsl_onnx_options;

/* Imports the ONNX model at `path`. *out is set only on success; free it with
 * tsl_graph_free. The graph's inputs and outputs are the model's (initializers listed
 * as inputs are constants, not inputs), its name the ONNX graph's name.
 * Errors: see the header comment. */
tsl_status tsl_graph_load_onnx(const char *path, tsl_graph **out);

/* As tsl_graph_load_onnx, with options (may be NULL). */
tsl_status tsl_graph_load_onnx_opts(const char *path, const tsl_onnx_options *opts, tsl_graph **out);

/* Imports a serialized ModelProto of `size` bytes from memory. `opts` may be NULL
 * (then external data is refused). The bytes are not kept. */
tsl_status tsl_graph_load_onnx_memory(const void *data, size_t size, const tsl_onnx_options *opts,
                                      tsl_graph **out);

/* Decodes a serialized TensorProto (the format of ONNX test data `input_0.pb`) into a
 * new compact tensor (caller frees). `name`, if not NULL, receives the tensor's name
 * (truncated to name_size, NUL-terminated; "" if none). External data is refused.
 * Errors: TSL_ERR_INVALID (malformed, data size mismatch), TSL_ERR_UNSUPPORTED (string,
 * complex or bfloat16 data), TSL_ERR_NOMEM. */
tsl_status tsl_onnx_tensor_from_memory(const void *data, size_t size, tsl_tensor **out, char *name,
                                       size_t name_size);

/* As tsl_onnx_tensor_from_memory, reading the file at `path` (TSL_ERR_IO if unreadable). */
tsl_status tsl_onnx_load_tensor(const char *path, tsl_tensor **out, char *name, size_t name_size);

/* What a model file holds, read without converting it. */
#define TSL_ONNX_INFO_MAX_OPS 64
#define TSL_ONNX_INFO_MAX_INPUTS 16
typedef struct tsl_onnx_info {
  int64_t ir_version;
  int64_t opset;                   /* default domain; 0 if the model imports none */
  int n_nodes;                     /* nodes of the main graph */
  int n_initializers;
  int n_op_types;                  /* distinct op types, at most TSL_ONNX_INFO_MAX_OPS */
  struct {
    char name[64];                 /* op type, truncated to 63 bytes */
    int count;                     /* nodes of this type */
  } op_types[TSL_ONNX_INFO_MAX_OPS];
  int n_inputs;                    /* graph inputs that are not initializers */
  char inputs[TSL_ONNX_INFO_MAX_INPUTS][128]; /* their names (the first 16, truncated) */
} tsl_onnx_info;

/* Fills *info from the model at `path`: node count and count per op type (in order of
 * first appearance; op types past TSL_ONNX_INFO_MAX_OPS are counted in n_nodes only).
 * Errors: TSL_ERR_IO, TSL_ERR_INVALID (not a ModelProto), TSL_ERR_NOMEM. */
tsl_status tsl_onnx_inspect(const char *path, tsl_onnx_info *info);

/* The count of op type `op_type` in *info (0 if absent). */
int tsl_onnx_info_count(const tsl_onnx_info *info, const char *op_type);

#ifdef __cplusplus
}
#endif
#endif
