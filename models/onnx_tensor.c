/* ONNX TensorProto decoding: data types, the typed repeated fields, raw_data and
 * external data files (onnx/docs/ExternalData.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/onnx_internal.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw_data is little-endian; this reader copies it as is"
#endif

/* Largest tensor accepted from a file, in elements with zero extents counted as 1 (the
 * graph's bound; bounded again by the bytes the file really holds before anything is
 * allocated). */
#define MAX_TENSOR_NUMEL TSL_GRAPH_MAX_NUMEL

tsl_status onnx_dtype(int32_t t, tsl_dtype *out) {
  switch (t) {
  case 1: *out = TSL_DTYPE_F32; return TSL_OK;
  case 2: *out = TSL_DTYPE_U8; return TSL_OK;
  case 3: *out = TSL_DTYPE_I8; return TSL_OK;
  case 4: *out = TSL_DTYPE_U16; return TSL_OK;
  case 5: *out = TSL_DTYPE_I16; return TSL_OK;
  case 6: *out = TSL_DTYPE_I32; return TSL_OK;
  case 7: *out = TSL_DTYPE_I64; return TSL_OK;
  case 9: *out = TSL_DTYPE_BOOL; return TSL_OK;
  case 10: *out = TSL_DTYPE_F16; return TSL_OK;
  case 11: *out = TSL_DTYPE_F64; return TSL_OK;
  case 12: *out = TSL_DTYPE_U32; return TSL_OK;
  case 13: *out = TSL_DTYPE_U64; return TSL_OK;
  case 8: return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: string tensors are not supported");
  case 14:
  case 15: return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: complex tensors are not supported");
  case 16: return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: bfloat16 tensors are not supported");
  default: return tsl_error(TSL_ERR_INVALID, "onnx: unknown tensor data type %d", (int)t);
  }
}

/* True for a relative path without ".." components (external data must stay inside
 * the model's folder). */
static bool safe_relative_path(const char *p) {
  if (!*p || p[0] == '/') return false;
  for (const char *s = p; *s;) {
    const char *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 2 && s[0] == '.' && s[1] == '.') return false;
    if (!e) break;
    s = e + 1;
  }
  return true;
}

static bool parse_i64(const char *s, int64_t *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v < 0) return false;
  *out = v;
  return true;
}

static tsl_status read_external(const Onnx__TensorProto *tp, const char *name, const char *base_dir,
                                void *dst, size_t nbytes) {
  const char *location = NULL, *offset_s = NULL, *length_s = NULL;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *kv = tp->external_data[i];
    if (!kv || !kv->key) continue;
    if (strcmp(kv->key, "location") == 0) location = kv->value;
    else if (strcmp(kv->key, "offset") == 0) offset_s = kv->value;
    else if (strcmp(kv->key, "length") == 0) length_s = kv->value;
  }
  if (!location) return tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s': external data without a location", name);
  if (!base_dir)
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "onnx: tensor '%s': external data '%s' needs a base folder (model loaded from memory)",
                     name, location);
  if (!safe_relative_path(location))
    return tsl_error(TSL_ERR_INVALID,
                     "onnx: tensor '%s': external data location '%s' must be relative, without '..'", name,
                     location);
  int64_t offset = 0, length = -1;
  if (offset_s && !parse_i64(offset_s, &offset))
    return tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s': bad external data offset '%s'", name, offset_s);
  if (length_s && !parse_i64(length_s, &length))
    return tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s': bad external data length '%s'", name, length_s);
  size_t plen = strlen(base_dir) + strlen(location) + 2;
  char *path = malloc(plen);
  if (!path) return tsl_error(TSL_ERR_NOMEM, "onnx: external data path");
  snprintf(path, plen, "%s/%s", base_dir, location);
  FILE *f = fopen(path, "rb");
  tsl_status st = TSL_OK;
  struct stat sb;
  if (!f) {
    st = tsl_error(TSL_ERR_IO, "onnx: tensor '%s': cannot open external data '%s': %s", name, path,
                   strerror(errno));
  } else if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = tsl_error(TSL_ERR_IO, "onnx: tensor '%s': external data '%s' is not a regular file", name, path);
  } else {
    int64_t size = sb.st_size;
    if (length < 0) length = offset <= size ? size - offset : -1;
    if (offset > size || length < 0 || length > size - offset)
      st = tsl_error(TSL_ERR_IO, "onnx: tensor '%s': external data '%s' holds %lld bytes, needs %lld at offset %lld",
                     name, path, (long long)size, (long long)(length < 0 ? 0 : length), (long long)offset);
    else if ((uint64_t)length != nbytes)
      st = tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s': external data of %lld bytes for a tensor of %zu bytes",
                     name, (long long)length, nbytes);
    else if (fseeko(f, (off_t)offset, SEEK_SET) != 0 || fread(dst, 1, nbytes, f) != nbytes)
      st = tsl_error(TSL_ERR_IO, "onnx: tensor '%s': reading external data '%s' failed", name, path);
  }
  if (f) fclose(f);
  free(path);
  return st;
}

/* Elements stored in the typed repeated field that belongs to the data type. */
static size_t typed_count(const Onnx__TensorProto *tp) {
  switch (tp->data_type) {
  case 1: return tp->n_float_data;
  case 11: return tp->n_double_data;
  case 7: return tp->n_int64_data;
  case 12:
  case 13: return tp->n_uint64_data;
  default: return tp->n_int32_data;
  }
}

static void typed_copy(const Onnx__TensorProto *tp, tsl_tensor *t, int64_t numel) {
  switch (tp->data_type) {
  case 1: memcpy(t->data, tp->float_data, (size_t)numel * 4); return;
  case 11: memcpy(t->data, tp->double_data, (size_t)numel * 8); return;
  case 7: memcpy(t->data, tp->int64_data, (size_t)numel * 8); return;
  case 13: memcpy(t->data, tp->uint64_data, (size_t)numel * 8); return;
  case 12:
    for (int64_t i = 0; i < numel; i++) ((uint32_t *)t->data)[i] = (uint32_t)tp->uint64_data[i];
    return;
  case 6: memcpy(t->data, tp->int32_data, (size_t)numel * 4); return;
  case 5:
  case 4:
  case 10: /* float16 bits travel in the low half of int32_data */
    for (int64_t i = 0; i < numel; i++) ((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i];
    return;
  default: /* int8, uint8, bool */
    for (int64_t i = 0; i < numel; i++) ((uint8_t *)t->data)[i] = (uint8_t)tp->int32_data[i];
    return;
  }
}

tsl_status onnx_tensor_decode(const Onnx__TensorProto *tp, const char *base_dir, tsl_tensor **out) {
  const char *name = tp->name ? tp->name : "";
  if (!tp->has_data_type) return tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s' has no data type", name);
  tsl_dtype dt;
  tsl_status st = onnx_dtype(tp->data_type, &dt);
  if (st != TSL_OK)
    return tsl_error(st, "onnx: tensor '%s': %s data type %d", name,
                     st == TSL_ERR_UNSUPPORTED ? "unsupported (string, complex, bfloat16)" : "unknown",
                     (int)tp->data_type);
  if (tp->segment) return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: tensor '%s': segmented tensors are not supported", name);
  if (tp->n_dims > TSL_MAX_NDIM)
    return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: tensor '%s' has rank %zu (at most %d)", name, tp->n_dims, TSL_MAX_NDIM);
  int64_t shape[TSL_MAX_NDIM], numel;
  for (size_t d = 0; d < tp->n_dims; d++) shape[d] = tp->dims[d];
  char where[160];
  snprintf(where, sizeof where, "onnx: tensor '%s'", name);
  st = tsl_shape_check(where, (int)tp->n_dims, shape, MAX_TENSOR_NUMEL, &numel);
  if (st != TSL_OK) return st;
  size_t nbytes = (size_t)numel * tsl_dtype_bytes(dt);
  bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  size_t typed = typed_count(tp);
  /* Check the data really holds the elements before allocating anything. */
  if (!external && numel > 0) {
    if (tp->has_raw_data && tp->raw_data.len > 0) {
      if (tp->raw_data.len != nbytes)
        return tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s': raw_data of %zu bytes for %lld %s elements (%zu bytes)",
                         name, tp->raw_data.len, (long long)numel, tsl_dtype_str(dt), nbytes);
    } else if ((int64_t)typed != numel) {
      return tsl_error(TSL_ERR_INVALID, "onnx: tensor '%s': %zu data elements for a shape of %lld elements", name,
                       typed, (long long)numel);
    }
  }
  if (external && numel > 0 && !base_dir) return read_external(tp, name, NULL, NULL, nbytes);
  tsl_tensor *t;
  st = tsl_tensor_new(dt, (int)tp->n_dims, shape, &t);
  if (st != TSL_OK) return st;
  if (numel > 0) {
    if (external) {
      st = read_external(tp, name, base_dir, t->data, nbytes);
      if (st != TSL_OK) {
        tsl_tensor_free(t);
        return st;
      }
    } else if (tp->has_raw_data && tp->raw_data.len > 0) {
      memcpy(t->data, tp->raw_data.data, nbytes);
    } else {
      typed_copy(tp, t, numel);
    }
  }
  *out = t;
  return TSL_OK;
}

tsl_status tsl_onnx_tensor_from_memory(const void *data, size_t size, tsl_tensor **out, char *name,
                                       size_t name_size) {
  if (!data || !out) return tsl_error(TSL_ERR_INVALID, "onnx: tensor from memory: NULL argument");
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
  if (!tp) return tsl_error(TSL_ERR_INVALID, "onnx: not a valid TensorProto (%zu bytes: truncated or malformed)", size);
  tsl_status st = onnx_tensor_decode(tp, NULL, out);
  if (st == TSL_OK && name && name_size) snprintf(name, name_size, "%s", tp->name ? tp->name : "");
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return st;
}

tsl_status tsl_onnx_load_tensor(const char *path, tsl_tensor **out, char *name, size_t name_size) {
  if (!path || !out) return tsl_error(TSL_ERR_INVALID, "onnx: load tensor: NULL argument");
  FILE *f = fopen(path, "rb");
  if (!f) return tsl_error(TSL_ERR_IO, "onnx: cannot open '%s': %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    return tsl_error(TSL_ERR_IO, "onnx: '%s' is not a regular file", path);
  }
  size_t n = (size_t)sb.st_size;
  void *buf = malloc(n ? n : 1);
  if (!buf) {
    fclose(f);
    return tsl_error(TSL_ERR_NOMEM, "onnx: %zu bytes for '%s'", n, path);
  }
  size_t got = fread(buf, 1, n, f);
  fclose(f);
  if (got != n) {
    free(buf);
    return tsl_error(TSL_ERR_IO, "onnx: reading '%s' failed", path);
  }
  tsl_status st = tsl_onnx_tensor_from_memory(buf, n, out, name, name_size);
  free(buf);
  if (st != TSL_OK && st != TSL_ERR_NOMEM) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    return tsl_error(st, "%s (file '%s')", msg, path);
  }
  return st;
}
