/* Runtime tensors behind include/tessel/tensor.h. */
#include "tessel/tensor.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/host_memory.h"

bool tsl_dtype_valid(tsl_dtype dt) {
  switch (dt.code) {
  case TSL_DT_BOOL: return dt.bits == 8;
  case TSL_DT_INT:
  case TSL_DT_UINT: return dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
  case TSL_DT_FLOAT: return dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
  default: return false;
  }
}

bool tsl_dtype_equal(tsl_dtype a, tsl_dtype b) { return a.code == b.code && a.bits == b.bits; }

size_t tsl_dtype_bytes(tsl_dtype dt) { return tsl_dtype_valid(dt) ? (size_t)dt.bits / 8 : 0; }

typedef struct dtype_name {
  const char *name;
  tsl_dtype dt;
} dtype_name;

/* The first entry for a dtype is its canonical (printed) name. */
static const dtype_name dtype_names[] = {
    {"bool", {TSL_DT_BOOL, 8}},     {"i8", {TSL_DT_INT, 8}},       {"i16", {TSL_DT_INT, 16}},
    {"i32", {TSL_DT_INT, 32}},      {"i64", {TSL_DT_INT, 64}},     {"u8", {TSL_DT_UINT, 8}},
    {"u16", {TSL_DT_UINT, 16}},     {"u32", {TSL_DT_UINT, 32}},    {"u64", {TSL_DT_UINT, 64}},
    {"f16", {TSL_DT_FLOAT, 16}},    {"f32", {TSL_DT_FLOAT, 32}},   {"f64", {TSL_DT_FLOAT, 64}},
    {"int8", {TSL_DT_INT, 8}},      {"int16", {TSL_DT_INT, 16}},   {"int32", {TSL_DT_INT, 32}},
    {"int64", {TSL_DT_INT, 64}},    {"uint8", {TSL_DT_UINT, 8}},   {"uint16", {TSL_DT_UINT, 16}},
    {"uint32", {TSL_DT_UINT, 32}},  {"uint64", {TSL_DT_UINT, 64}}, {"float16", {TSL_DT_FLOAT, 16}},
    {"float32", {TSL_DT_FLOAT, 32}}, {"float64", {TSL_DT_FLOAT, 64}}, {"half", {TSL_DT_FLOAT, 16}},
    {"float", {TSL_DT_FLOAT, 32}},  {"double", {TSL_DT_FLOAT, 64}},
};

const char *tsl_dtype_str(tsl_dtype dt) {
  for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
    if (tsl_dtype_equal(dtype_names[i].dt, dt)) return dtype_names[i].name;
  return "invalid";
}

tsl_status tsl_dtype_parse(const char *s, tsl_dtype *out) {
  if (!s || !out) return tsl_error(TSL_ERR_INVALID, "tsl_dtype_parse: NULL argument");
  for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++) {
    if (strcmp(dtype_names[i].name, s) == 0) {
      *out = dtype_names[i].dt;
      return TSL_OK;
    }
  }
  return tsl_error(TSL_ERR_PARSE, "tsl_dtype_parse: unknown dtype '%s' (want bool, i8..i64, u8..u64, f16, f32, f64)", s);
}

/* "2^k", "2^k - 1" or the decimal value: bounds read better as powers of two. */
static void bound_str(int64_t v, char *buf, size_t n) {
  uint64_t u = (uint64_t)v;
  if ((u & (u - 1)) == 0)
    snprintf(buf, n, "2^%d", __builtin_ctzll(u));
  else if (((u + 1) & u) == 0)
    snprintf(buf, n, "2^%d - 1", __builtin_ctzll(u + 1));
  else
    snprintf(buf, n, "%lld", (long long)v);
}

static void extents_str(int ndim, const int64_t *shape, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < ndim && len < n; d++)
    len += (size_t)snprintf(buf + len, n - len, d ? "x%lld" : "%lld", (long long)shape[d]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

tsl_status tsl_shape_check(const char *where, int ndim, const int64_t *shape, int64_t max_span,
                           int64_t *numel) {
  if (!where) where = "tsl_shape_check";
  if (ndim < 0 || ndim > TSL_MAX_NDIM)
    return tsl_error(TSL_ERR_INVALID, "%s: rank %d outside 0..%d", where, ndim, TSL_MAX_NDIM);
  if (ndim > 0 && !shape) return tsl_error(TSL_ERR_INVALID, "%s: NULL shape for rank %d", where, ndim);
  if (max_span < 1) return tsl_error(TSL_ERR_INVALID, "%s: size bound %lld (must be >= 1)", where, (long long)max_span);
  bool empty = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return tsl_error(TSL_ERR_INVALID, "%s: negative extent %lld in dimension %d", where, (long long)shape[d], d);
    empty |= shape[d] == 0;
  }
  /* span = the product of max(extent, 1): every compact stride and every product of
   * some of the extents is at most span, so bounding it keeps all of them in range. */
  int64_t span = 1, n = 1;
  for (int d = 0; d < ndim; d++) {
    int64_t e = shape[d] > 0 ? shape[d] : 1;
    if (e > max_span / span) {
      char ext[8 * 24 + 4], bound[32];
      extents_str(ndim, shape, ext, sizeof ext);
      bound_str(max_span, bound, sizeof bound);
      return tsl_error(TSL_ERR_INVALID,
                       "%s: shape %s is too large: the product of its extents passes %s elements at "
                       "dimension %d (extent %lld)%s",
                       where, ext, bound, d, (long long)shape[d],
                       empty ? " (zero extents count as 1: an empty tensor's strides still multiply the "
                               "other extents)"
                             : "");
    }
    span *= e;
    n = shape[d] == 0 ? 0 : n * shape[d]; /* n <= span, no overflow */
  }
  if (numel) *numel = n;
  return TSL_OK;
}

/* Validates dtype, rank and extents shared by new and wrap; on success *numel and
 * *nbytes hold the element count and the compact byte size. Every extent counts
 * (tsl_shape_check): the compact strides of an empty tensor multiply the other extents
 * just as a full tensor's do, and in bytes they must fit int64 and size_t. */
static tsl_status check_shape(const char *where, tsl_dtype dt, int ndim, const int64_t *shape,
                              int64_t *numel, size_t *nbytes) {
  if (!tsl_dtype_valid(dt))
    return tsl_error(TSL_ERR_INVALID, "%s: invalid dtype (code %d, bits %d)", where, dt.code, dt.bits);
  if (ndim < 0 || ndim > TSL_MAX_NDIM)
    return tsl_error(TSL_ERR_INVALID, "%s: ndim %d outside 0..%d", where, ndim, TSL_MAX_NDIM);
  if (ndim > 0 && !shape) return tsl_error(TSL_ERR_INVALID, "%s: NULL shape for ndim %d", where, ndim);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return tsl_error(TSL_ERR_INVALID, "%s: negative extent %lld in dimension %d", where,
                       (long long)shape[i], i);
  int64_t esize = (int64_t)tsl_dtype_bytes(dt);
  uint64_t max_bytes = (uint64_t)SIZE_MAX - TSL_TENSOR_ALIGN < (uint64_t)INT64_MAX
                           ? (uint64_t)SIZE_MAX - TSL_TENSOR_ALIGN
                           : (uint64_t)INT64_MAX;
  char what[96];
  snprintf(what, sizeof what, "%s (the byte size of this %s tensor overflows int64)", where, tsl_dtype_str(dt));
  tsl_status st = tsl_shape_check(what, ndim, shape, (int64_t)(max_bytes / (uint64_t)esize), numel);
  if (st != TSL_OK) return st;
  *nbytes = (size_t)(*numel * esize);
  return TSL_OK;
}

/* Compact row-major strides; check_shape bounded their product, so none overflows. */
static void set_compact_strides(tsl_tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    t->strides[i] = s;
    /* Strides of an empty tensor stay those of extent max(e, 1) so they never vanish. */
    s *= t->shape[i] > 0 ? t->shape[i] : 1;
  }
}

tsl_status tsl_tensor_new(tsl_dtype dt, int ndim, const int64_t *shape, tsl_tensor **out) {
  const char *where = "tsl_tensor_new";
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL out", where);
  int64_t numel;
  size_t nbytes;
  tsl_status st = check_shape(where, dt, ndim, shape, &numel, &nbytes);
  if (st != TSL_OK) return st;
  tsl_tensor *t = calloc(1, sizeof *t);
  if (!t) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory for the descriptor", where);
  /* Rounded up to whole cache lines so vector tails may read to the line's end. */
  size_t alloc = (nbytes + TSL_TENSOR_ALIGN - 1) / TSL_TENSOR_ALIGN * TSL_TENSOR_ALIGN;
  if (alloc == 0) alloc = TSL_TENSOR_ALIGN;
  /* large tensors (a model's weights) on huge pages: runtime/host_memory.h */
  void *data = tsl_host_alloc_zeroed(alloc, TSL_TENSOR_ALIGN);
  if (!data) {
    free(t);
    return tsl_error(TSL_ERR_NOMEM, "%s: out of memory for %zu bytes of %s", where, nbytes,
                     tsl_dtype_str(dt));
  }
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  set_compact_strides(t);
  t->data = data;
  t->owns_data = true;
  *out = t;
  return TSL_OK;
}

tsl_status tsl_tensor_wrap(tsl_dtype dt, int ndim, const int64_t *shape, const int64_t *strides,
                           void *data, tsl_tensor **out) {
  const char *where = "tsl_tensor_wrap";
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL out", where);
  int64_t numel;
  size_t nbytes;
  tsl_status st = check_shape(where, dt, ndim, shape, &numel, &nbytes);
  if (st != TSL_OK) return st;
  if (!data && numel > 0)
    return tsl_error(TSL_ERR_INVALID, "%s: NULL data for %lld elements", where, (long long)numel);
  tsl_tensor *t = calloc(1, sizeof *t);
  if (!t) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory for the descriptor", where);
  t->dtype = dt;
  t->ndim = ndim;
  for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
  if (strides)
    for (int i = 0; i < ndim; i++) t->strides[i] = strides[i];
  else
    set_compact_strides(t);
  t->data = data;
  t->owns_data = false;
  *out = t;
  return TSL_OK;
}

void tsl_tensor_free(tsl_tensor *t) {
  if (!t) return;
  if (t->owns_data) tsl_host_free(t->data);
  free(t);
}

int64_t tsl_tensor_numel(const tsl_tensor *t) {
  if (!t) return 0;
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

size_t tsl_tensor_nbytes(const tsl_tensor *t) {
  if (!t) return 0;
  return (size_t)tsl_tensor_numel(t) * tsl_dtype_bytes(t->dtype);
}

bool tsl_tensor_is_contiguous(const tsl_tensor *t) {
  if (!t) return false;
  if (tsl_tensor_numel(t) == 0) return true;
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return false;
    expect *= t->shape[i];
  }
  return true;
}

/* Visits every element in row-major index order, passing its element offset from
 * data; used by strided copies and the random fill so both see the logical order. */
typedef void (*element_fn)(void *ctx, int64_t offset, int64_t linear);

static void for_each_element(const tsl_tensor *t, element_fn fn, void *ctx) {
  int64_t n = tsl_tensor_numel(t);
  if (n == 0) return;
  int64_t idx[TSL_MAX_NDIM] = {0};
  int64_t offset = 0;
  for (int64_t linear = 0; linear < n; linear++) {
    fn(ctx, offset, linear);
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->shape[d]) {
        offset += t->strides[d];
        break;
      }
      offset -= t->strides[d] * (idx[d] - 1);
      idx[d] = 0;
    }
  }
}

typedef struct copy_ctx {
  char *base;
  char *host;
  size_t esize;
  bool to_host;
} copy_ctx;

static void copy_element(void *p, int64_t offset, int64_t linear) {
  copy_ctx *c = p;
  char *elem = c->base + offset * (int64_t)c->esize;
  char *h = c->host + linear * (int64_t)c->esize;
  if (c->to_host)
    memcpy(h, elem, c->esize);
  else
    memcpy(elem, h, c->esize);
}

static tsl_status copy_host(const char *where, const tsl_tensor *t, void *host, size_t bytes, bool to_host) {
  if (!t || !host) return tsl_error(TSL_ERR_INVALID, "%s: NULL argument", where);
  if (!tsl_dtype_valid(t->dtype)) return tsl_error(TSL_ERR_INVALID, "%s: tensor has an invalid dtype", where);
  size_t need = tsl_tensor_nbytes(t);
  if (bytes != need)
    return tsl_error(TSL_ERR_INVALID, "%s: host buffer has %zu bytes, the %s tensor needs %zu", where,
                     bytes, tsl_dtype_str(t->dtype), need);
  if (need == 0) return TSL_OK;
  if (tsl_tensor_is_contiguous(t)) {
    if (to_host)
      memcpy(host, t->data, need);
    else
      memcpy(t->data, host, need);
    return TSL_OK;
  }
  copy_ctx c = {t->data, host, tsl_dtype_bytes(t->dtype), to_host};
  for_each_element(t, copy_element, &c);
  return TSL_OK;
}

tsl_status tsl_tensor_copy_from(tsl_tensor *t, const void *src, size_t bytes) {
  /* The host pointer is only read on this path. */
  return copy_host("tsl_tensor_copy_from", t, (void *)(uintptr_t)src, bytes, false);
}

tsl_status tsl_tensor_copy_to(const tsl_tensor *t, void *dst, size_t bytes) {
  return copy_host("tsl_tensor_copy_to", t, dst, bytes, true);
}

/* splitmix64 (Steele, Lea, Flood, OOPSLA 2014): one 64-bit state, full period. */
static uint64_t splitmix64_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, span) (span 0 meaning 2^64) by rejection of the biased low values. */
static uint64_t uniform_below(uint64_t *state, uint64_t span) {
  if (span == 0) return splitmix64_next(state);
  uint64_t threshold = (0 - span) % span;
  for (;;) {
    uint64_t x = splitmix64_next(state);
    if (x >= threshold) return x % span;
  }
}

/* IEEE binary16 bits of d, rounded to nearest even (multiplying by powers of two is
 * exact, so nearbyint in the default mode does the only rounding). */
static uint16_t half_from_double(double d) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  double a = fabs(d);
  if (isnan(d)) return sign | 0x7e00;
  if (a < 0x1p-14) return sign | (uint16_t)nearbyint(a * 0x1p24);
  int e;
  double f = frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
  e -= 1;
  double q = nearbyint(f * 2.0 * 1024.0);
  if (q == 2048.0) {
    q = 1024.0;
    e += 1;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | (uint16_t)((e + 15) << 10) | (uint16_t)((int)q - 1024);
}

typedef struct fill_ctx {
  char *base;
  tsl_dtype dt;
  uint64_t state;
  double lo, hi;
  bool is_float;
  uint64_t ilo;  /* lowest integer, as the two's complement bits of the value */
  uint64_t span; /* number of integers, 0 meaning 2^64 */
} fill_ctx;

static void store_bits(char *elem, int bits, uint64_t v) {
  switch (bits) {
  case 8: { uint8_t x = (uint8_t)v; memcpy(elem, &x, 1); break; }
  case 16: { uint16_t x = (uint16_t)v; memcpy(elem, &x, 2); break; }
  case 32: { uint32_t x = (uint32_t)v; memcpy(elem, &x, 4); break; }
  default: memcpy(elem, &v, 8); break;
  }
}

static void fill_element(void *p, int64_t offset, int64_t linear) {
  fill_ctx *c = p;
  (void)linear;
  char *elem = c->base + offset * (int64_t)(c->dt.bits / 8);
  if (c->is_float) {
    double u = (double)(splitmix64_next(&c->state) >> 11) * 0x1p-53;
    double v = c->lo + (c->hi - c->lo) * u;
    if (c->dt.bits == 64) {
      memcpy(elem, &v, 8);
    } else if (c->dt.bits == 32) {
      float f = (float)v;
      memcpy(elem, &f, 4);
    } else {
      uint16_t h = half_from_double(v);
      memcpy(elem, &h, 2);
    }
    return;
  }
  store_bits(elem, c->dt.bits, c->ilo + uniform_below(&c->state, c->span));
}

/* Integer bounds of [ceil(lo), floor(hi)] intersected with the dtype's range, as
 * two's complement bits in *a and the count in *span (0 = 2^64). */
static bool int_range(tsl_dtype dt, double lo, double hi, uint64_t *a, uint64_t *span) {
  double l = ceil(lo), h = floor(hi);
  if (l > h) return false;
  if (dt.code == TSL_DT_INT) {
    double tmin = -ldexp(1.0, dt.bits - 1), tmax_excl = ldexp(1.0, dt.bits - 1);
    if (l >= tmax_excl || h < tmin) return false;
    int64_t il = l <= tmin ? (int64_t)tmin : (int64_t)l;
    /* The type's maximum may not be a double (2^63 - 1), hence the explicit cases. */
    int64_t ih;
    if (h >= tmax_excl)
      ih = dt.bits == 64 ? INT64_MAX : ((int64_t)1 << (dt.bits - 1)) - 1;
    else
      ih = (int64_t)h;
    *a = (uint64_t)il;
    *span = (uint64_t)ih - (uint64_t)il + 1;
    return true;
  }
  double tmax_excl = dt.code == TSL_DT_BOOL ? 2.0 : ldexp(1.0, dt.bits);
  if (l >= tmax_excl || h < 0.0) return false;
  uint64_t ul = l <= 0.0 ? 0 : (uint64_t)l;
  uint64_t uh;
  if (h >= tmax_excl)
    uh = dt.code == TSL_DT_BOOL ? 1 : dt.bits == 64 ? UINT64_MAX : ((uint64_t)1 << dt.bits) - 1;
  else
    uh = (uint64_t)h;
  *a = ul;
  *span = uh - ul + 1;
  return true;
}

tsl_status tsl_tensor_fill_random(tsl_tensor *t, uint64_t seed, double lo, double hi) {
  const char *where = "tsl_tensor_fill_random";
  if (!t) return tsl_error(TSL_ERR_INVALID, "%s: NULL tensor", where);
  if (!tsl_dtype_valid(t->dtype)) return tsl_error(TSL_ERR_INVALID, "%s: tensor has an invalid dtype", where);
  if (!isfinite(lo) || !isfinite(hi) || lo > hi)
    return tsl_error(TSL_ERR_INVALID, "%s: bounds [%g, %g] must be finite with lo <= hi", where, lo, hi);
  fill_ctx c = {.base = t->data, .dt = t->dtype, .state = seed, .lo = lo, .hi = hi};
  if (t->dtype.code == TSL_DT_FLOAT) {
    double limit = t->dtype.bits == 16 ? 65504.0 : t->dtype.bits == 32 ? (double)FLT_MAX : DBL_MAX;
    if (fabs(lo) > limit || fabs(hi) > limit)
      return tsl_error(TSL_ERR_INVALID, "%s: bounds [%g, %g] exceed the finite range of %s", where, lo, hi,
                       tsl_dtype_str(t->dtype));
    c.is_float = true;
  } else if (!int_range(t->dtype, lo, hi, &c.ilo, &c.span)) {
    return tsl_error(TSL_ERR_INVALID, "%s: no %s value lies in [%g, %g]", where, tsl_dtype_str(t->dtype), lo, hi);
  }
  for_each_element(t, fill_element, &c);
  return TSL_OK;
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

double tsl_tensor_get_f64(const tsl_tensor *t, int64_t i) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (i % t->shape[d]) * t->strides[d];
    i /= t->shape[d];
  }
  const char *p = (const char *)t->data + off * (int64_t)tsl_dtype_bytes(t->dtype);
  switch (t->dtype.code) {
  case TSL_DT_FLOAT:
    if (t->dtype.bits == 64) return *(const double *)p;
    if (t->dtype.bits == 32) return *(const float *)p;
    return half_to_double(*(const uint16_t *)p);
  case TSL_DT_BOOL: return *(const uint8_t *)p != 0;
  case TSL_DT_INT:
    switch (t->dtype.bits) {
    case 8: return *(const int8_t *)p;
    case 16: return *(const int16_t *)p;
    case 32: return *(const int32_t *)p;
    default: return (double)*(const int64_t *)p;
    }
  default:
    switch (t->dtype.bits) {
    case 8: return *(const uint8_t *)p;
    case 16: return *(const uint16_t *)p;
    case 32: return *(const uint32_t *)p;
    default: return (double)*(const uint64_t *)p;
    }
  }
}
