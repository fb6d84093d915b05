/* tessel — runtime tensors: a dtype, a shape, element strides and a data pointer.
 *
 * Tensors are what the runtime hands to compiled kernels: a kernel receives
 * `tensor->data`, so tensors made by tsl_tensor_new are compact row-major (last
 * dimension fastest) and their data is 64-byte aligned (one cache line, one AVX-512
 * vector). tsl_tensor_wrap describes caller memory with any strides; such views are
 * metadata only and kernels expect compact ones (see tsl_tensor_is_contiguous).
 *
 * Strides count elements, not bytes. A tensor of ndim 0 is a scalar holding one
 * element. Extents may be 0 (an empty tensor: numel 0, data still a valid pointer for
 * owned tensors; its strides are those of the extents with zeros made 1, and they too
 * must fit in int64 bytes). Element counts are int64_t: tensors with more than 2^31
 * elements are fine wherever memory allows.
 *
 * Element types: bool (8-bit storage: 0 or 1), i8/i16/i32/i64, u8/u16/u32/u64,
 * f16 (storage only), f32, f64. The IR's 1-bit bool is stored as one byte here.
 *
 * Thread safety: tensors carry no locks; concurrent reads are fine, concurrent writes
 * to the same tensor are the caller's business.
 */
#ifndef TESSEL_TENSOR_H
#define TESSEL_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Maximum rank of a tensor. */
#define TSL_MAX_NDIM 8
/* Alignment in bytes of the data of tensors made by tsl_tensor_new. */
#define TSL_TENSOR_ALIGN 64

typedef enum { TSL_DT_BOOL, TSL_DT_INT, TSL_DT_UINT, TSL_DT_FLOAT } tsl_dtype_code;

/* An element type: code (tsl_dtype_code) and storage width in bits. Valid pairs:
 * (BOOL, 8), (INT|UINT, 8|16|32|64), (FLOAT, 16|32|64). */
typedef struct tsl_dtype {
  uint8_t code;
  uint8_t bits;
} tsl_dtype;

typedef struct tsl_tensor {
  tsl_dtype dtype;
  int ndim;                      /* 0..TSL_MAX_NDIM */
  int64_t shape[TSL_MAX_NDIM];   /* extents, >= 0; entries past ndim are 0 */
  int64_t strides[TSL_MAX_NDIM]; /* in elements; entries past ndim are 0 */
  void *data;                    /* first element (offset 0 in every dimension) */
  bool owns_data;                /* tsl_tensor_free releases data when true */
} tsl_tensor;

/* Common dtypes, e.g. `tsl_tensor_new(TSL_DTYPE_F32, 4, shape, &t)`. */
#define TSL_DTYPE_BOOL ((tsl_dtype){TSL_DT_BOOL, 8})
#define TSL_DTYPE_I8 ((tsl_dtype){TSL_DT_INT, 8})
#define TSL_DTYPE_I16 ((tsl_dtype){TSL_DT_INT, 16})
#define TSL_DTYPE_I32 ((tsl_dtype){TSL_DT_INT, 32})
#define TSL_DTYPE_I64 ((tsl_dtype){TSL_DT_INT, 64})
#define TSL_DTYPE_U8 ((tsl_dtype){TSL_DT_UINT, 8})
#define TSL_DTYPE_U16 ((tsl_dtype){TSL_DT_UINT, 16})
#define TSL_DTYPE_U32 ((tsl_dtype){TSL_DT_UINT, 32})
#define TSL_DTYPE_U64 ((tsl_dtype){TSL_DT_UINT, 64})
#define TSL_DTYPE_F16 ((tsl_dtype){TSL_DT_FLOAT, 16})
#define TSL_DTYPE_F32 ((tsl_dtype){TSL_DT_FLOAT, 32})
#define TSL_DTYPE_F64 ((tsl_dtype){TSL_DT_FLOAT, 64})

/* True when `dt` is one of the valid (code, bits) pairs above. */
bool tsl_dtype_valid(tsl_dtype dt);

/* True when both code and bits are equal. */
bool tsl_dtype_equal(tsl_dtype a, tsl_dtype b);

/* Bytes per element (bool: 1); 0 for an invalid dtype. */
size_t tsl_dtype_bytes(tsl_dtype dt);

/* Short name: "bool", "i8" ... "i64", "u8" ... "u64", "f16", "f32", "f64"; "invalid"
 * for an invalid dtype. The string is static. */
const char *tsl_dtype_str(tsl_dtype dt);

/* Parses a short name as printed by tsl_dtype_str, or the long forms "int8" ...
 * "int64", "uint8" ... "uint64", "float16", "float32", "float64" (and "half", "float",
 * "double"). Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_PARSE (unknown name,
 * which the message quotes). */
tsl_status tsl_dtype_parse(const char *s, tsl_dtype *out);

/* Checks `ndim` extents against a size bound; every constructor of tensors and of
 * shaped values calls it. Each extent must be >= 0, and the extents multiplied together
 * with each 0 counted as 1 (the "span") must be at most `max_span` elements. The span
 * bounds every compact stride and every product of some of the extents, so code that
 * multiplies extents of a checked shape cannot overflow. An empty shape is held to the
 * bound of the same shape with its zeros made 1: an empty tensor's strides multiply
 * its other extents just the same (so [0, 2^40, 2^40] is refused under any bound below
 * 2^80). `where` starts the message (NULL: "tsl_shape_check"). On success *numel, when
 * numel is not NULL, holds the element count (0 when an extent is 0).
 * Errors: TSL_ERR_INVALID (ndim outside 0..TSL_MAX_NDIM, NULL shape for ndim > 0,
 * max_span < 1, a negative extent, a span above max_span: the message gives the shape,
 * the dimension where the product passes the bound, and the bound). */
tsl_status tsl_shape_check(const char *where, int ndim, const int64_t *shape, int64_t max_span,
                           int64_t *numel);

/* A new compact row-major tensor owning zeroed, TSL_TENSOR_ALIGN-aligned data.
 * `shape` holds `ndim` extents (may be NULL when ndim is 0). The data pointer is never
 * NULL, even for an empty tensor. *out is set only on success; free it with
 * tsl_tensor_free.
 * Errors: TSL_ERR_INVALID (invalid dtype, ndim outside 0..TSL_MAX_NDIM, a negative
 * extent, NULL out or shape, a byte size overflowing int64 or size_t: the extents count
 * with zeros as 1, as in tsl_shape_check, so an empty tensor whose strides would
 * overflow is refused too), TSL_ERR_NOMEM. */
tsl_status tsl_tensor_new(tsl_dtype dt, int ndim, const int64_t *shape, tsl_tensor **out);

/* A tensor describing caller memory `data` (not owned: tsl_tensor_free leaves it).
 * `strides` holds `ndim` element strides (any sign), or is NULL for compact
 * row-major. `data` may be NULL only when the tensor is empty. The caller keeps the
 * memory alive and large enough for every index the strides reach.
 * Errors: as tsl_tensor_new, plus TSL_ERR_INVALID for NULL data on a non-empty
 * tensor; TSL_ERR_NOMEM for the descriptor. */
tsl_status tsl_tensor_wrap(tsl_dtype dt, int ndim, const int64_t *shape, const int64_t *strides,
                           void *data, tsl_tensor **out);

/* Frees the descriptor and, when it owns them, the data. NULL is a no-op. */
void tsl_tensor_free(tsl_tensor *t);

/* Number of elements: the product of the extents (1 for ndim 0, 0 if any extent is 0). */
int64_t tsl_tensor_numel(const tsl_tensor *t);

/* Bytes of the elements when stored compactly: numel * tsl_dtype_bytes (for a strided
 * view this is the size of a compact copy, not the span it covers). */
size_t tsl_tensor_nbytes(const tsl_tensor *t);

/* True when the strides are those of compact row-major storage. Dimensions of extent
 * 1 may have any stride; an empty tensor is contiguous. */
bool tsl_tensor_is_contiguous(const tsl_tensor *t);

/* Copies `bytes` bytes of compact row-major elements from `src` into the tensor
 * (element by element for a strided view). `bytes` must equal tsl_tensor_nbytes(t).
 * Errors: TSL_ERR_INVALID (NULL arguments, size mismatch: the message gives both). */
tsl_status tsl_tensor_copy_from(tsl_tensor *t, const void *src, size_t bytes);

/* Copies the tensor's elements, in row-major order, into `dst` of `bytes` bytes,
 * which must equal tsl_tensor_nbytes(t). Errors: as tsl_tensor_copy_from. */
tsl_status tsl_tensor_copy_to(const tsl_tensor *t, void *dst, size_t bytes);

/* Fills the tensor with deterministic pseudo-random values: the same (seed, dtype,
 * shape, lo, hi) always gives the same elements on every platform, and a strided
 * view receives the same logical values as a compact tensor (values are drawn in
 * row-major index order). Generator: splitmix64 (Steele, Lea, Flood, "Fast Splittable
 * Pseudorandom Number Generators", OOPSLA 2014).
 * Floats: uniform in [lo, hi) computed in double, then rounded to the nearest value of
 * the dtype (so an f16/f32 element may equal hi rounded); all lo when lo == hi.
 * Integers and bool: uniform integers in [ceil(lo), floor(hi)] intersected with the
 * dtype's range (bool: [0, 1]), inclusive, without modulo bias; so (lo, hi) =
 * (-1e30, 1e30) covers a whole integer type.
 * Errors: TSL_ERR_INVALID (NULL tensor, NaN/inf bounds, lo > hi, an integer range that
 * is empty after the intersection). */
tsl_status tsl_tensor_fill_random(tsl_tensor *t, uint64_t seed, double lo, double hi);

/* Element `i` (row-major position, honouring strides) as a double: floats converted
 * (f16 decoded), integers exact up to 2^53, bool 0/1. `i` must be in [0, numel): no
 * check, this is an element accessor for tools and tests, not a kernel. */
double tsl_tensor_get_f64(const tsl_tensor *t, int64_t i);

#ifdef __cplusplus
}
#endif
#endif
