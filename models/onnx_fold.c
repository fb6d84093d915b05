/* Constant folding at import: the ONNX operators of shape computations (and a few
 * others) evaluated on constant inputs, following docs/Operators.md. Results are small
 * (at most ONNX_FOLD_MAX_NUMEL elements), so plain index arithmetic is enough. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/onnx_internal.h"

static const char *const foldable[] = {"Constant", "Identity", "Shape",     "Gather", "Unsqueeze", "Squeeze",
                                       "Concat",   "Cast",     "Add",       "Sub",    "Mul",       "Div",
                                       "Pow",      "Slice",    "Reshape",  "Transpose", "ConstantOfShape", "Floor",
                                       "Ceil",     NULL};

bool onnx_is_foldable(const char *op_type) {
  for (const char *const *p = foldable; *p; p++)
    if (strcmp(*p, op_type) == 0) return true;
  return false;
}

static tsl_status new_result(onnx_ctx *c, tsl_dtype dt, int ndim, const int64_t *shape, tsl_tensor **out) {
  if (ndim > TSL_MAX_NDIM) return onnx_err(c, TSL_ERR_UNSUPPORTED, "folded result of rank %d", ndim);
  for (int d = 0; d < ndim; d++)
    if (shape[d] < 0) return onnx_err(c, TSL_ERR_INVALID, "folded result extent %lld", (long long)shape[d]);
  /* zero extents count as 1 (tsl_shape_check): an empty result is bounded like the others */
  if (tsl_shape_check("folded result", ndim, shape, ONNX_FOLD_MAX_NUMEL, NULL) != TSL_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "constant folding result larger than 2^26 elements: %s", msg);
  }
  tsl_status st = tsl_tensor_new(dt, ndim, shape, out);
  return st == TSL_OK ? st : onnx_wrap(c, st);
}

/* ---- element access in double / int64, whatever the dtype ---- */

static bool numeric(tsl_dtype dt) { return !(dt.code == TSL_DT_FLOAT && dt.bits == 16); }

static double get_d(const tsl_tensor *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype.code) {
  case TSL_DT_FLOAT: return t->dtype.bits == 32 ? ((const float *)p)[i] : ((const double *)p)[i];
  case TSL_DT_INT:
    switch (t->dtype.bits) {
    case 8: return ((const int8_t *)p)[i];
    case 16: return ((const int16_t *)p)[i];
    case 32: return ((const int32_t *)p)[i];
    default: return (double)((const int64_t *)p)[i];
    }
  default:
    switch (t->dtype.bits) {
    case 8: return ((const uint8_t *)p)[i];
    case 16: return ((const uint16_t *)p)[i];
    case 32: return ((const uint32_t *)p)[i];
    default: return (double)((const uint64_t *)p)[i];
    }
  }
}

static int64_t get_i(const tsl_tensor *t, int64_t i) {
  if (t->dtype.code == TSL_DT_FLOAT) {
    double v = get_d(t, i);
    return isnan(v) ? 0 : v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
  }
  if (t->dtype.code == TSL_DT_INT && t->dtype.bits == 64) return ((const int64_t *)t->data)[i];
  if (t->dtype.bits == 64) return (int64_t)((const uint64_t *)t->data)[i];
  return (int64_t)get_d(t, i);
}

/* Stores an integer, wrapping to the dtype's width like a C cast to unsigned. */
static void put_i(tsl_tensor *t, int64_t i, int64_t v) {
  void *p = t->data;
  if (t->dtype.code == TSL_DT_FLOAT) {
    if (t->dtype.bits == 32) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = (double)v;
    return;
  }
  if (t->dtype.code == TSL_DT_BOOL) {
    ((uint8_t *)p)[i] = v != 0;
    return;
  }
  switch (t->dtype.bits) {
  case 8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case 16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case 32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}

/* Stores a double: floats round, integers truncate toward zero and saturate (NaN: 0). */
static void put_d(tsl_tensor *t, int64_t i, double v) {
  if (t->dtype.code == TSL_DT_FLOAT) {
    if (t->dtype.bits == 32) ((float *)t->data)[i] = (float)v;
    else ((double *)t->data)[i] = v;
    return;
  }
  if (t->dtype.code == TSL_DT_BOOL) {
    ((uint8_t *)t->data)[i] = v != 0;
    return;
  }
  double lo, hi;
  if (t->dtype.code == TSL_DT_INT) {
    hi = ldexp(1.0, t->dtype.bits - 1);
    lo = -hi;
  } else {
    lo = 0;
    hi = ldexp(1.0, t->dtype.bits);
  }
  int64_t iv;
  if (isnan(v)) iv = 0;
  else if (v <= lo) iv = t->dtype.code == TSL_DT_INT ? (t->dtype.bits == 64 ? INT64_MIN : (int64_t)lo) : 0;
  else if (v >= hi) iv = t->dtype.bits == 64 ? (t->dtype.code == TSL_DT_INT ? INT64_MAX : -1) : (int64_t)hi - 1;
  else iv = (int64_t)trunc(v);
  put_i(t, i, iv);
}

static void unravel(int64_t i, int r, const int64_t *shape, int64_t *idx) {
  for (int d = r - 1; d >= 0; d--) {
    idx[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}

/* ---- operators ---- */

static tsl_status f_constant(onnx_ctx *c) {
  static const char *const ok[] = {"value", "value_float", "value_floats", "value_int", "value_ints", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  if (st != TSL_OK) return st;
  if (c->node->n_attribute != 1) return onnx_err(c, TSL_ERR_INVALID, "Constant needs exactly one value attribute");
  const Onnx__AttributeProto *a = c->node->attribute[0];
  tsl_tensor *t = NULL;
  if (strcmp(a->name, "value") == 0) {
    if (!a->t) return onnx_err(c, TSL_ERR_INVALID, "attribute 'value' must be a tensor");
    st = onnx_tensor_decode(a->t, c->base_dir, &t);
    if (st != TSL_OK) return onnx_wrap(c, st);
  } else if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_int") == 0) {
    bool is_float = a->name[6] == 'f';
    if (is_float) {
      double v;
      if ((st = onnx_attr_float(c, a->name, 0, &v)) != TSL_OK) return st;
      if ((st = new_result(c, TSL_DTYPE_F32, 0, NULL, &t)) != TSL_OK) return st;
      *(float *)t->data = (float)v;
    } else {
      int64_t v;
      if ((st = onnx_attr_int(c, a->name, 0, &v)) != TSL_OK) return st;
      if ((st = new_result(c, TSL_DTYPE_I64, 0, NULL, &t)) != TSL_OK) return st;
      *(int64_t *)t->data = v;
    }
  } else if (strcmp(a->name, "value_ints") == 0) {
    int n;
    const int64_t *v;
    if ((st = onnx_attr_ints(c, a->name, &n, &v)) != TSL_OK) return st;
    int64_t shape[1] = {n};
    if ((st = new_result(c, TSL_DTYPE_I64, 1, shape, &t)) != TSL_OK) return st;
    if (n) memcpy(t->data, v, (size_t)n * sizeof *v);
  } else {
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
      return onnx_err(c, TSL_ERR_INVALID, "attribute 'value_floats' must be floats");
    int64_t shape[1] = {(int64_t)a->n_floats};
    if ((st = new_result(c, TSL_DTYPE_F32, 1, shape, &t)) != TSL_OK) return st;
    if (a->n_floats) memcpy(t->data, a->floats, a->n_floats * sizeof *a->floats);
  }
  return onnx_define_const(c, 0, t);
}

static tsl_status copy_tensor(onnx_ctx *c, const tsl_tensor *src, int ndim, const int64_t *shape, tsl_tensor **out) {
  tsl_status st = new_result(c, src->dtype, ndim, shape, out);
  if (st != TSL_OK) return st;
  if (tsl_tensor_nbytes(*out) != tsl_tensor_nbytes(src)) {
    tsl_tensor_free(*out);
    return onnx_err(c, TSL_ERR_INVALID, "element count changes");
  }
  memcpy((*out)->data, src->data, tsl_tensor_nbytes(src));
  return TSL_OK;
}

static tsl_status f_identity(onnx_ctx *c) {
  const tsl_tensor *x = onnx_const_input(c, 0);
  if (!x) return onnx_err(c, TSL_ERR_INVALID, "Identity needs an input");
  tsl_tensor *t;
  tsl_status st = copy_tensor(c, x, x->ndim, x->shape, &t);
  return st == TSL_OK ? onnx_define_const(c, 0, t) : st;
}

static tsl_status f_shape(onnx_ctx *c) {
  static const char *const ok[] = {"start", "end", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  int x;
  if (st == TSL_OK) st = onnx_input(c, 0, &x);
  if (st != TSL_OK) return st;
  if (x < 0) return onnx_err(c, TSL_ERR_INVALID, "Shape needs an input");
  const tsl_value *v = &c->g->values[x];
  if (v->ndim < 0) return onnx_err(c, TSL_ERR_INVALID, "input '%s' has no known shape", v->name);
  int64_t start, end, r = v->ndim;
  if ((st = onnx_attr_int(c, "start", 0, &start)) != TSL_OK) return st;
  if ((st = onnx_attr_int(c, "end", r, &end)) != TSL_OK) return st;
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int64_t len[1] = {end > start ? end - start : 0};
  tsl_tensor *t;
  if ((st = new_result(c, TSL_DTYPE_I64, 1, len, &t)) != TSL_OK) return st;
  for (int64_t i = 0; i < len[0]; i++) ((int64_t *)t->data)[i] = v->shape[start + i];
  return onnx_define_const(c, 0, t);
}

static tsl_status f_gather(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  const tsl_tensor *x = onnx_const_input(c, 0), *idx = onnx_const_input(c, 1);
  if (st != TSL_OK) return st;
  if (!x || !idx) return onnx_err(c, TSL_ERR_INVALID, "Gather needs data and indices");
  if (idx->dtype.code != TSL_DT_INT || idx->dtype.bits < 32)
    return onnx_err(c, TSL_ERR_INVALID, "indices must be int32 or int64");
  int64_t axis;
  if ((st = onnx_attr_int(c, "axis", 0, &axis)) != TSL_OK) return st;
  int r = x->ndim;
  if (r < 1 || axis < -r || axis >= r) return onnx_err(c, TSL_ERR_INVALID, "axis %lld for rank %d", (long long)axis, r);
  if (axis < 0) axis += r;
  int64_t shape[2 * TSL_MAX_NDIM], outer = 1, inner = 1;
  int nd = 0;
  for (int d = 0; d < axis; d++) outer *= (shape[nd++] = x->shape[d]);
  for (int d = 0; d < idx->ndim; d++) shape[nd++] = idx->shape[d];
  for (int d = (int)axis + 1; d < r; d++) inner *= (shape[nd++] = x->shape[d]);
  tsl_tensor *t;
  if ((st = new_result(c, x->dtype, nd, shape, &t)) != TSL_OK) return st;
  int64_t n_idx = tsl_tensor_numel(idx), dim = x->shape[axis];
  size_t es = tsl_dtype_bytes(x->dtype), chunk = (size_t)inner * es;
  for (int64_t j = 0; j < n_idx; j++) {
    int64_t k = get_i(idx, j);
    if (k < -dim || k >= dim) {
      tsl_tensor_free(t);
      return onnx_err(c, TSL_ERR_INVALID, "index %lld out of range for extent %lld", (long long)k, (long long)dim);
    }
    if (k < 0) k += dim;
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)t->data + (size_t)(o * n_idx + j) * chunk, (const char *)x->data + (size_t)(o * dim + k) * chunk,
             chunk);
  }
  return onnx_define_const(c, 0, t);
}

/* Axes of Unsqueeze/Squeeze: attribute before opset 13, input from 13 on. */
static tsl_status squeeze_axes(onnx_ctx *c, int64_t *axes, int *n) {
  static const char *const old_ok[] = {"axes", NULL};
  static const char *const none[] = {NULL};
  tsl_status st = onnx_check_attrs(c, c->opset < 13 ? old_ok : none);
  if (st != TSL_OK) return st;
  if (c->opset >= 13) return onnx_const_ints(c, 1, "axes", axes, TSL_MAX_NDIM, n);
  const int64_t *v;
  if ((st = onnx_attr_ints(c, "axes", n, &v)) != TSL_OK) return st;
  if (!v) *n = -1;
  if (*n > TSL_MAX_NDIM) return onnx_err(c, TSL_ERR_INVALID, "%d axes", *n);
  for (int i = 0; i < *n; i++) axes[i] = v[i];
  return TSL_OK;
}

tsl_status onnx_squeeze_shape(onnx_ctx *c, bool unsqueeze, int ndim, const int64_t *shape, int *out_ndim,
                              int64_t *out_shape) {
  int64_t axes[TSL_MAX_NDIM];
  int n;
  tsl_status st = squeeze_axes(c, axes, &n);
  if (st != TSL_OK) return st;
  if (unsqueeze) {
    if (n < 0) return onnx_err(c, TSL_ERR_INVALID, "Unsqueeze needs axes");
    int r = ndim + n;
    if (r > TSL_MAX_NDIM) return onnx_err(c, TSL_ERR_UNSUPPORTED, "result rank %d", r);
    bool ins[TSL_MAX_NDIM] = {0};
    for (int i = 0; i < n; i++) {
      int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      if (a < 0 || a >= r || ins[a]) return onnx_err(c, TSL_ERR_INVALID, "axis %lld invalid or repeated", (long long)axes[i]);
      ins[a] = true;
    }
    for (int d = 0, k = 0; d < r; d++) out_shape[d] = ins[d] ? 1 : shape[k++];
    *out_ndim = r;
    return TSL_OK;
  }
  bool drop[TSL_MAX_NDIM] = {0};
  for (int d = 0; n < 0 && d < ndim; d++) drop[d] = shape[d] == 1;
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (a < 0 || a >= ndim || shape[a] != 1)
      return onnx_err(c, TSL_ERR_INVALID, "axis %lld is not a dimension of extent 1", (long long)axes[i]);
    drop[a] = true;
  }
  *out_ndim = 0;
  for (int d = 0; d < ndim; d++)
    if (!drop[d]) out_shape[(*out_ndim)++] = shape[d];
  return TSL_OK;
}

/* Squeeze and Unsqueeze of a constant: its elements under the new shape. */
static tsl_status f_squeeze(onnx_ctx *c, bool unsqueeze) {
  const tsl_tensor *x = onnx_const_input(c, 0);
  if (!x) return onnx_err(c, TSL_ERR_INVALID, "%s needs data", c->node->op_type);
  int64_t shape[TSL_MAX_NDIM];
  int r;
  tsl_status st = onnx_squeeze_shape(c, unsqueeze, x->ndim, x->shape, &r, shape);
  tsl_tensor *t;
  if (st == TSL_OK) st = copy_tensor(c, x, r, shape, &t);
  return st == TSL_OK ? onnx_define_const(c, 0, t) : st;
}

static tsl_status f_concat(onnx_ctx *c) {
  static const char *const ok[] = {"axis", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  int64_t axis;
  if (st == TSL_OK) st = onnx_attr_int(c, "axis", INT64_MIN, &axis);
  if (st != TSL_OK) return st;
  int n = (int)c->node->n_input;
  const tsl_tensor *x0 = onnx_const_input(c, 0);
  if (!x0 || axis == INT64_MIN) return onnx_err(c, TSL_ERR_INVALID, "Concat needs inputs and an axis");
  int r = x0->ndim;
  if (axis < -r || axis >= r) return onnx_err(c, TSL_ERR_INVALID, "axis %lld for rank %d", (long long)axis, r);
  if (axis < 0) axis += r;
  int64_t shape[TSL_MAX_NDIM], outer = 1, inner = 1;
  for (int d = 0; d < r; d++) shape[d] = x0->shape[d];
  shape[axis] = 0;
  for (int k = 0; k < n; k++) {
    const tsl_tensor *xk = onnx_const_input(c, k);
    bool ok_shape = xk && xk->ndim == r && tsl_dtype_equal(xk->dtype, x0->dtype);
    for (int d = 0; ok_shape && d < r; d++) ok_shape = d == axis || xk->shape[d] == x0->shape[d];
    if (!ok_shape) return onnx_err(c, TSL_ERR_INVALID, "input %d does not match input 0 outside the axis", k);
    shape[axis] += xk->shape[axis];
  }
  for (int d = 0; d < axis; d++) outer *= shape[d];
  for (int d = (int)axis + 1; d < r; d++) inner *= shape[d];
  tsl_tensor *t;
  if ((st = new_result(c, x0->dtype, r, shape, &t)) != TSL_OK) return st;
  size_t es = tsl_dtype_bytes(x0->dtype);
  char *dst = t->data;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < n; k++) {
      const tsl_tensor *xk = onnx_const_input(c, k);
      size_t chunk = (size_t)(xk->shape[axis] * inner) * es;
      memcpy(dst, (const char *)xk->data + (size_t)o * chunk, chunk);
      dst += chunk;
    }
  return onnx_define_const(c, 0, t);
}

static tsl_status f_cast(onnx_ctx *c) {
  static const char *const ok[] = {"to", "saturate", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  int64_t to;
  if (st == TSL_OK) st = onnx_attr_int(c, "to", -1, &to);
  if (st != TSL_OK) return st;
  const tsl_tensor *x = onnx_const_input(c, 0);
  tsl_dtype dt;
  if (!x) return onnx_err(c, TSL_ERR_INVALID, "Cast needs an input");
  if ((st = onnx_dtype((int32_t)to, &dt)) != TSL_OK) return onnx_err(c, st, "Cast to data type %lld", (long long)to);
  if (!numeric(dt) || !numeric(x->dtype)) return onnx_err(c, TSL_ERR_UNSUPPORTED, "Cast from or to float16");
  tsl_tensor *t;
  if ((st = new_result(c, dt, x->ndim, x->shape, &t)) != TSL_OK) return st;
  int64_t n = tsl_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    if (x->dtype.code == TSL_DT_FLOAT) put_d(t, i, get_d(x, i));
    else put_i(t, i, get_i(x, i));
  }
  return onnx_define_const(c, 0, t);
}

/* The numpy broadcast of a's and b's shapes into shape[*r]; false if they do not. */
static bool bcast_shape(const tsl_tensor *a, const tsl_tensor *b, int *r, int64_t *shape) {
  *r = a->ndim > b->ndim ? a->ndim : b->ndim;
  for (int d = 0; d < *r; d++) {
    int ia = d - (*r - a->ndim), ib = d - (*r - b->ndim);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    shape[d] = da == 1 ? db : da;
  }
  return true;
}

/* Offset in t of the broadcast result's point idx (rank r). */
static int64_t bcast_offset(const tsl_tensor *t, int r, const int64_t *idx) {
  int64_t o = 0;
  for (int d = 0; d < t->ndim; d++) o = o * t->shape[d] + (t->shape[d] == 1 ? 0 : idx[d + r - t->ndim]);
  return o;
}

/* The result of a broadcasting binary fold: a's dtype, the broadcast shape (rank *r). */
static tsl_status bcast_result(onnx_ctx *c, const tsl_tensor *a, const tsl_tensor *b, int *r,
                               int64_t shape[TSL_MAX_NDIM], tsl_tensor **t) {
  if (!bcast_shape(a, b, r, shape)) return onnx_err(c, TSL_ERR_INVALID, "shapes do not broadcast");
  return new_result(c, a->dtype, *r, shape, t);
}

static tsl_status f_arith(onnx_ctx *c) {
  static const char *const none[] = {NULL};
  tsl_status st = onnx_check_attrs(c, none);
  if (st != TSL_OK) return st;
  const tsl_tensor *a = onnx_const_input(c, 0), *b = onnx_const_input(c, 1);
  if (!a || !b || c->node->n_input != 2) return onnx_err(c, TSL_ERR_INVALID, "needs two inputs");
  if (!tsl_dtype_equal(a->dtype, b->dtype))
    return onnx_err(c, TSL_ERR_INVALID, "operand types differ (%s, %s)", tsl_dtype_str(a->dtype), tsl_dtype_str(b->dtype));
  if (!numeric(a->dtype) || a->dtype.code == TSL_DT_BOOL)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "arithmetic on %s constants", tsl_dtype_str(a->dtype));
  char op = c->node->op_type[0]; /* A(dd) S(ub) M(ul) D(iv) */
  int r;
  int64_t shape[TSL_MAX_NDIM];
  tsl_tensor *t;
  if ((st = bcast_result(c, a, b, &r, shape, &t)) != TSL_OK) return st;
  int64_t n = tsl_tensor_numel(t), idx[TSL_MAX_NDIM];
  for (int64_t i = 0; i < n; i++) {
    unravel(i, r, shape, idx);
    int64_t oa = bcast_offset(a, r, idx), ob = bcast_offset(b, r, idx);
    if (a->dtype.code == TSL_DT_FLOAT) {
      double x = get_d(a, oa), y = get_d(b, ob);
      put_d(t, i, op == 'A' ? x + y : op == 'S' ? x - y : op == 'M' ? x * y : x / y);
    } else {
      /* Wrapping integer arithmetic (through uint64) and C's truncating division. */
      uint64_t x = (uint64_t)get_i(a, oa), y = (uint64_t)get_i(b, ob);
      int64_t v;
      if (op == 'A') v = (int64_t)(x + y);
      else if (op == 'S') v = (int64_t)(x - y);
      else if (op == 'M') v = (int64_t)(x * y);
      else if (y == 0) {
        tsl_tensor_free(t);
        return onnx_err(c, TSL_ERR_INVALID, "integer division by zero");
      } else if ((int64_t)x == INT64_MIN && (int64_t)y == -1) v = INT64_MIN;
      else v = (int64_t)x / (int64_t)y;
      put_i(t, i, v);
    }
  }
  return onnx_define_const(c, 0, t);
}

/* Pow: the result has the base's type (the exponent's may differ, opset 12 on);
 * integer bases take C's truncation of the double power, as ONNX Runtime does. */
static tsl_status f_pow(onnx_ctx *c) {
  static const char *const v1[] = {"broadcast", "axis", NULL};
  static const char *const none[] = {NULL};
  tsl_status st = onnx_check_attrs(c, c->opset < 7 ? v1 : none);
  if (st != TSL_OK) return st;
  const tsl_tensor *a = onnx_const_input(c, 0), *b = onnx_const_input(c, 1);
  if (!a || !b || c->node->n_input != 2) return onnx_err(c, TSL_ERR_INVALID, "needs two inputs");
  if (!numeric(a->dtype) || !numeric(b->dtype) || a->dtype.code == TSL_DT_BOOL || b->dtype.code == TSL_DT_BOOL)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "Pow of %s and %s constants", tsl_dtype_str(a->dtype), tsl_dtype_str(b->dtype));
  int r;
  int64_t shape[TSL_MAX_NDIM];
  tsl_tensor *t;
  if ((st = bcast_result(c, a, b, &r, shape, &t)) != TSL_OK) return st;
  int64_t n = tsl_tensor_numel(t), idx[TSL_MAX_NDIM];
  for (int64_t i = 0; i < n; i++) {
    unravel(i, r, shape, idx);
    int64_t oa = bcast_offset(a, r, idx), ob = bcast_offset(b, r, idx);
    double v = pow(get_d(a, oa), get_d(b, ob));
    if (a->dtype.code == TSL_DT_FLOAT) put_d(t, i, v);
    else put_i(t, i, isnan(v) ? 0 : v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v);
  }
  return onnx_define_const(c, 0, t);
}

static tsl_status f_slice(onnx_ctx *c) {
  const tsl_tensor *x = onnx_const_input(c, 0);
  if (!x) return onnx_err(c, TSL_ERR_INVALID, "Slice needs data");
  int r = x->ndim;
  int64_t v[4][TSL_MAX_NDIM];
  int n[4] = {-1, -1, -1, -1};
  tsl_status st;
  if (c->opset < 10) {
    static const char *const ok[] = {"starts", "ends", "axes", NULL};
    static const char *const names[] = {"starts", "ends", "axes"};
    if ((st = onnx_check_attrs(c, ok)) != TSL_OK) return st;
    for (int k = 0; k < 3; k++) {
      const int64_t *p;
      if ((st = onnx_attr_ints(c, names[k], &n[k], &p)) != TSL_OK) return st;
      if (!p) n[k] = -1;
      if (n[k] > TSL_MAX_NDIM) return onnx_err(c, TSL_ERR_INVALID, "%d %s", n[k], names[k]);
      for (int i = 0; i < n[k]; i++) v[k][i] = p[i];
    }
  } else {
    static const char *const none[] = {NULL};
    static const char *const names[] = {"starts", "ends", "axes", "steps"};
    if ((st = onnx_check_attrs(c, none)) != TSL_OK) return st;
    for (int k = 0; k < 4; k++)
      if ((st = onnx_const_ints(c, k + 1, names[k], v[k], TSL_MAX_NDIM, &n[k])) != TSL_OK) return st;
  }
  if (n[0] < 0 || n[0] != n[1] || (n[2] >= 0 && n[2] != n[0]) || (n[3] >= 0 && n[3] != n[0]))
    return onnx_err(c, TSL_ERR_INVALID, "starts/ends/axes/steps lengths differ");
  int64_t start[TSL_MAX_NDIM], step[TSL_MAX_NDIM], shape[TSL_MAX_NDIM];
  bool seen[TSL_MAX_NDIM] = {0};
  for (int d = 0; d < r; d++) {
    start[d] = 0;
    step[d] = 1;
    shape[d] = x->shape[d];
  }
  for (int i = 0; i < n[0]; i++) {
    int64_t a = n[2] >= 0 ? v[2][i] : i;
    if (a < 0) a += r;
    if (a < 0 || a >= r || seen[a]) return onnx_err(c, TSL_ERR_INVALID, "slice axis entry %d invalid or repeated", i);
    seen[a] = true;
    int64_t dim = x->shape[a], s = v[0][i], e = v[1][i], stp = n[3] >= 0 ? v[3][i] : 1;
    if (stp == 0) return onnx_err(c, TSL_ERR_INVALID, "step 0");
    if (stp > dim + 1) stp = dim + 1;
    if (stp < -dim - 1) stp = -dim - 1;
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t len;
    if (stp > 0) {
      s = s < 0 ? 0 : s > dim ? dim : s;
      e = e < 0 ? 0 : e > dim ? dim : e;
      len = e > s ? (e - s - 1) / stp + 1 : 0;
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      len = s > e ? (s - e - 1) / (-stp) + 1 : 0;
    }
    start[a] = s;
    step[a] = stp;
    shape[a] = len;
  }
  tsl_tensor *t;
  if ((st = new_result(c, x->dtype, r, shape, &t)) != TSL_OK) return st;
  int64_t total = tsl_tensor_numel(t), idx[TSL_MAX_NDIM];
  size_t es = tsl_dtype_bytes(x->dtype);
  for (int64_t i = 0; i < total; i++) {
    unravel(i, r, shape, idx);
    int64_t off = 0;
    for (int d = 0; d < r; d++) off = off * x->shape[d] + start[d] + idx[d] * step[d];
    memcpy((char *)t->data + (size_t)i * es, (const char *)x->data + (size_t)off * es, es);
  }
  return onnx_define_const(c, 0, t);
}

static tsl_status f_reshape(onnx_ctx *c) {
  static const char *const ok[] = {"allowzero", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  const tsl_tensor *x = onnx_const_input(c, 0);
  int64_t s[TSL_MAX_NDIM], allowzero = 0;
  int n;
  if (st == TSL_OK) st = onnx_const_ints(c, 1, "shape", s, TSL_MAX_NDIM, &n);
  if (st == TSL_OK) st = onnx_attr_int(c, "allowzero", 0, &allowzero);
  if (st != TSL_OK) return st;
  if (!x || n < 0) return onnx_err(c, TSL_ERR_INVALID, "Reshape needs data and shape");
  int64_t numel = tsl_tensor_numel(x), known = 1;
  int infer = -1;
  for (int d = 0; d < n; d++) {
    if (s[d] == 0 && !allowzero) {
      if (d >= x->ndim) return onnx_err(c, TSL_ERR_INVALID, "shape[%d] = 0 beyond the input's rank", d);
      s[d] = x->shape[d];
    }
    if (s[d] == -1 && infer < 0) {
      infer = d;
      continue;
    }
    if (s[d] < 0 || (s[d] > 0 && known > ONNX_FOLD_MAX_NUMEL / s[d]))
      return onnx_err(c, TSL_ERR_INVALID, "bad target shape entry %lld", (long long)s[d]);
    known *= s[d];
  }
  if (infer >= 0) {
    if (known == 0 || numel % known) return onnx_err(c, TSL_ERR_INVALID, "cannot infer -1");
    s[infer] = numel / known;
  }
  tsl_tensor *t;
  st = copy_tensor(c, x, n, s, &t);
  return st == TSL_OK ? onnx_define_const(c, 0, t) : st;
}

static tsl_status f_transpose(onnx_ctx *c) {
  static const char *const ok[] = {"perm", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  const tsl_tensor *x = onnx_const_input(c, 0);
  int np;
  const int64_t *perm;
  if (st == TSL_OK) st = onnx_attr_ints(c, "perm", &np, &perm);
  if (st != TSL_OK) return st;
  if (!x) return onnx_err(c, TSL_ERR_INVALID, "Transpose needs data");
  int r = x->ndim;
  int64_t p[TSL_MAX_NDIM], shape[TSL_MAX_NDIM];
  bool seen[TSL_MAX_NDIM] = {0};
  if (perm && np != r) return onnx_err(c, TSL_ERR_INVALID, "perm has %d entries for rank %d", np, r);
  for (int d = 0; d < r; d++) {
    p[d] = perm ? perm[d] : r - 1 - d;
    if (p[d] < 0 || p[d] >= r || seen[p[d]]) return onnx_err(c, TSL_ERR_INVALID, "perm is not a permutation");
    seen[p[d]] = true;
    shape[d] = x->shape[p[d]];
  }
  tsl_tensor *t;
  if ((st = new_result(c, x->dtype, r, shape, &t)) != TSL_OK) return st;
  int64_t total = tsl_tensor_numel(t), idx[TSL_MAX_NDIM], src[TSL_MAX_NDIM];
  size_t es = tsl_dtype_bytes(x->dtype);
  for (int64_t i = 0; i < total; i++) {
    unravel(i, r, shape, idx);
    for (int d = 0; d < r; d++) src[p[d]] = idx[d];
    int64_t off = 0;
    for (int d = 0; d < r; d++) off = off * x->shape[d] + src[d];
    memcpy((char *)t->data + (size_t)i * es, (const char *)x->data + (size_t)off * es, es);
  }
  return onnx_define_const(c, 0, t);
}

static tsl_status f_constant_of_shape(onnx_ctx *c) {
  static const char *const ok[] = {"value", NULL};
  tsl_status st = onnx_check_attrs(c, ok);
  int64_t shape[TSL_MAX_NDIM];
  int n;
  if (st == TSL_OK) st = onnx_const_ints(c, 0, "shape", shape, TSL_MAX_NDIM, &n);
  if (st != TSL_OK) return st;
  if (n < 0) return onnx_err(c, TSL_ERR_INVALID, "ConstantOfShape needs a shape");
  tsl_tensor *fill = NULL;
  const Onnx__AttributeProto *a = onnx_attr(c, "value");
  if (a) {
    if (!a->t) return onnx_err(c, TSL_ERR_INVALID, "attribute 'value' must be a tensor");
    if ((st = onnx_tensor_decode(a->t, NULL, &fill)) != TSL_OK) return onnx_wrap(c, st);
    if (tsl_tensor_numel(fill) != 1) {
      tsl_tensor_free(fill);
      return onnx_err(c, TSL_ERR_INVALID, "'value' must hold one element");
    }
  }
  tsl_tensor *t;
  st = new_result(c, fill ? fill->dtype : TSL_DTYPE_F32, n, shape, &t);
  if (st == TSL_OK && fill) {
    size_t es = tsl_dtype_bytes(fill->dtype);
    for (int64_t i = 0; i < tsl_tensor_numel(t); i++) memcpy((char *)t->data + (size_t)i * es, fill->data, es);
  }
  tsl_tensor_free(fill);
  return st == TSL_OK ? onnx_define_const(c, 0, t) : st;
}

/* Floor and Ceil of a float constant (output extents computed as floor(in * scale) by
 * older exporters' shape chains). */
static tsl_status f_round(onnx_ctx *c) {
  static const char *const none[] = {NULL};
  tsl_status st = onnx_check_attrs(c, none);
  const tsl_tensor *x = onnx_const_input(c, 0);
  if (st != TSL_OK) return st;
  if (!x || x->dtype.code != TSL_DT_FLOAT || !numeric(x->dtype))
    return onnx_err(c, TSL_ERR_INVALID, "%s needs a float32 or float64 input", c->node->op_type);
  tsl_tensor *t;
  if ((st = new_result(c, x->dtype, x->ndim, x->shape, &t)) != TSL_OK) return st;
  bool up = c->node->op_type[0] == 'C';
  for (int64_t i = 0; i < tsl_tensor_numel(x); i++) put_d(t, i, up ? ceil(get_d(x, i)) : floor(get_d(x, i)));
  return onnx_define_const(c, 0, t);
}

tsl_status onnx_fold_node(onnx_ctx *c) {
  const char *op = c->node->op_type;
  if (strcmp(op, "Shape") != 0 && strcmp(op, "Constant") != 0) {
    for (size_t k = 0; k < c->node->n_input; k++) {
      int id;
      tsl_status st = onnx_input(c, (int)k, &id);
      if (st != TSL_OK) return st;
      if (id >= 0 && !c->g->values[id].constant)
        return onnx_err(c, TSL_ERR_UNSUPPORTED, "input '%s' must be a constant", c->g->values[id].name);
    }
  }
  if (strcmp(op, "Constant") == 0) return f_constant(c);
  if (strcmp(op, "Identity") == 0) return f_identity(c);
  if (strcmp(op, "Shape") == 0) return f_shape(c);
  if (strcmp(op, "Gather") == 0) return f_gather(c);
  if (strcmp(op, "Unsqueeze") == 0) return f_squeeze(c, true);
  if (strcmp(op, "Squeeze") == 0) return f_squeeze(c, false);
  if (strcmp(op, "Concat") == 0) return f_concat(c);
  if (strcmp(op, "Cast") == 0) return f_cast(c);
  if (strcmp(op, "Slice") == 0) return f_slice(c);
  if (strcmp(op, "Reshape") == 0) return f_reshape(c);
  if (strcmp(op, "Transpose") == 0) return f_transpose(c);
  if (strcmp(op, "ConstantOfShape") == 0) return f_constant_of_shape(c);
  if (strcmp(op, "Pow") == 0) return f_pow(c);
  if (strcmp(op, "Floor") == 0 || strcmp(op, "Ceil") == 0) return f_round(c);
  if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0)
    return f_arith(c);
  return onnx_err(c, TSL_ERR_UNSUPPORTED, "operator %s cannot be folded", op);
}
