/* Building small ONNX ModelProtos in tests with the protobuf-c code generated from
 * onnx.proto: a model, its graph inputs/outputs, initializers in the different
 * storage forms, nodes with attributes. Serialized with ob_pack. */
#ifndef TESSEL_TESTS_ONNX_BUILD_H
#define TESSEL_TESTS_ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

typedef struct ob_model ob_model;

/* How an initializer stores its data. */
typedef enum ob_storage { OB_RAW, OB_TYPED, OB_EXTERNAL } ob_storage;

/* ONNX TensorProto.DataType codes used here. */
enum { OB_FLOAT = 1, OB_UINT8 = 2, OB_INT32 = 6, OB_INT64 = 7, OB_STRING = 8, OB_BOOL = 9, OB_DOUBLE = 11 };

/* A model importing the default domain at `opset` (0: no opset_import at all). */
ob_model *ob_new(int64_t opset);
void ob_free(ob_model *m);

/* A graph input of element type `elem` and static shape; dims[i] < 0 makes dimension i
 * symbolic ("N"). */
void ob_input(ob_model *m, const char *name, int elem, int ndim, const int64_t *dims);
void ob_output(ob_model *m, const char *name);

/* A float initializer. OB_TYPED uses float_data; OB_EXTERNAL points at `location`
 * (offset `offset`, the data must be written there by the caller). */
void ob_init_f32(ob_model *m, const char *name, int ndim, const int64_t *dims, const float *data, ob_storage how,
                 const char *location, int64_t offset);
/* An int64 initializer (OB_RAW or OB_TYPED = int64_data). */
void ob_init_i64(ob_model *m, const char *name, int ndim, const int64_t *dims, const int64_t *data, ob_storage how);
/* An initializer with explicit type and raw bytes (any size: for malformed cases). */
void ob_init_raw(ob_model *m, const char *name, int elem, int ndim, const int64_t *dims, const void *bytes,
                 size_t n);

/* Appends a node; attributes go on the last node added. */
void ob_node(ob_model *m, const char *op_type, const char *name, int n_in, const char *const *in, int n_out,
             const char *const *out);
void ob_attr_int(ob_model *m, const char *name, int64_t v);
void ob_attr_float(ob_model *m, const char *name, float v);
void ob_attr_ints(ob_model *m, const char *name, int n, const int64_t *v);
void ob_attr_floats(ob_model *m, const char *name, int n, const float *v);
void ob_attr_string(ob_model *m, const char *name, const char *s);
/* A float tensor attribute (Constant's "value"). */
void ob_attr_tensor_f32(ob_model *m, const char *name, int ndim, const int64_t *dims, const float *data);
/* Sets the domain of the last node. */
void ob_node_domain(ob_model *m, const char *domain);

/* Serializes the model into a malloc'd buffer (*size bytes). */
uint8_t *ob_pack(const ob_model *m, size_t *size);
/* Serializes initializer `i` (in the order added) alone, as a TensorProto file holds
 * it, into a malloc'd buffer (*size bytes). */
uint8_t *ob_pack_initializer(const ob_model *m, size_t i, size_t *size);

#endif
