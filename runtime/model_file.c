/* AOT model files: the plan appended to a kernel shared object (model_file.h; the byte
 * format is docs/aot.md). Integers are written byte by byte in little-endian order so
 * the file means the same on every host and device. */
#include "runtime/model_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/module.h"

enum { KIND_CONST = 0, KIND_ACT = 1, KIND_VIEW = 2 };

typedef struct wbuf {
  int kind;
  tsl_dtype dtype; /* KIND_CONST */
  int ndim;
  int64_t shape[TSL_MAX_NDIM];
  void *data; /* KIND_CONST: a copy of the tensor's bytes */
  int base;   /* KIND_VIEW */
  int64_t offset, bytes;
} wbuf;

typedef struct wstep {
  char *kernel, *label;
  int nargs;
  int bufs[TSL_MAX_KERNEL_ARGS];
} wstep;

typedef struct wio {
  char *name;
  int buf;
  tsl_dtype dtype;
  int ndim;
  int64_t shape[TSL_MAX_NDIM];
} wio;

struct tsl_model_writer {
  char *target;
  wbuf *bufs;
  int nbufs, cap_bufs;
  wstep *steps;
  int nsteps, cap_steps;
  wio io[2][64]; /* inputs, outputs */
  int nio[2];
  int64_t arena_bytes;
};

/* ---- CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32) ---- */

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n) {
  static uint32_t table[256];
  static int ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* ---- writer ---- */

tsl_status tsl_model_writer_new(const char *target, tsl_model_writer **out) {
  if (!target || !out) return tsl_error(TSL_ERR_INVALID, "model writer: NULL argument");
  *out = calloc(1, sizeof **out);
  if (!*out || !((*out)->target = strdup(target))) {
    free(*out);
    *out = NULL;
    return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
  }
  return TSL_OK;
}

void tsl_model_writer_free(tsl_model_writer *w) {
  if (!w) return;
  for (int i = 0; i < w->nbufs; i++) free(w->bufs[i].data);
  for (int i = 0; i < w->nsteps; i++) {
    free(w->steps[i].kernel);
    free(w->steps[i].label);
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < w->nio[k]; i++) free(w->io[k][i].name);
  free(w->bufs);
  free(w->steps);
  free(w->target);
  free(w);
}

static tsl_status push_buf(tsl_model_writer *w, wbuf b, int *id) {
  if (w->nbufs >= TSL_MODEL_FILE_MAX_ITEMS) return tsl_error(TSL_ERR_INVALID, "model writer: too many buffers");
  if (w->nbufs == w->cap_bufs) {
    int cap = w->cap_bufs ? 2 * w->cap_bufs : 64;
    wbuf *nb = realloc(w->bufs, (size_t)cap * sizeof *nb);
    if (!nb) return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
    w->bufs = nb;
    w->cap_bufs = cap;
  }
  w->bufs[w->nbufs] = b;
  *id = w->nbufs++;
  return TSL_OK;
}

tsl_status tsl_model_writer_add_constant(tsl_model_writer *w, const tsl_tensor *t, int *buf) {
  if (!w || !t || !buf) return tsl_error(TSL_ERR_INVALID, "model writer: add_constant: NULL argument");
  if (!tsl_tensor_is_contiguous(t) || !tsl_dtype_valid(t->dtype))
    return tsl_error(TSL_ERR_INVALID, "model writer: add_constant: the tensor is not compact or has a bad dtype");
  wbuf b = {KIND_CONST, t->dtype, t->ndim, {0}, NULL, -1, 0, (int64_t)tsl_tensor_nbytes(t)};
  memcpy(b.shape, t->shape, sizeof b.shape);
  b.data = malloc(b.bytes ? (size_t)b.bytes : 1);
  if (!b.data) return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
  memcpy(b.data, t->data, (size_t)b.bytes);
  tsl_status st = push_buf(w, b, buf);
  if (st != TSL_OK) free(b.data);
  return st;
}

tsl_status tsl_model_writer_add_activation(tsl_model_writer *w, int64_t offset, int64_t bytes, int *buf) {
  if (!w || !buf) return tsl_error(TSL_ERR_INVALID, "model writer: add_activation: NULL argument");
  if (offset < 0 || offset % TSL_TENSOR_ALIGN || bytes < 0 || bytes > INT64_MAX - offset)
    return tsl_error(TSL_ERR_INVALID, "model writer: activation at offset %lld of %lld bytes", (long long)offset,
                     (long long)bytes);
  tsl_status st = push_buf(w, (wbuf){KIND_ACT, {0, 0}, 0, {0}, NULL, -1, offset, bytes}, buf);
  if (st == TSL_OK && offset + bytes > w->arena_bytes) w->arena_bytes = offset + bytes;
  return st;
}

tsl_status tsl_model_writer_add_view(tsl_model_writer *w, int base, int64_t offset, int64_t bytes, int *buf) {
  if (!w || !buf) return tsl_error(TSL_ERR_INVALID, "model writer: add_view: NULL argument");
  if (base < 0 || base >= w->nbufs || offset < 0 || bytes < 0 || offset > w->bufs[base].bytes ||
      bytes > w->bufs[base].bytes - offset)
    return tsl_error(TSL_ERR_INVALID, "model writer: add_view: bad base %d or range [%lld, +%lld)", base,
                     (long long)offset, (long long)bytes);
  if (offset % TSL_TENSOR_ALIGN != 0) /* kernels take aligned pointers (runtime/module.h) */
    return tsl_error(TSL_ERR_INVALID, "model writer: add_view: offset %lld is not %d-byte aligned", (long long)offset,
                     TSL_TENSOR_ALIGN);
  return push_buf(w, (wbuf){KIND_VIEW, {0, 0}, 0, {0}, NULL, base, offset, bytes}, buf);
}

static bool name_ok(const char *s) { return s && strlen(s) < TSL_MODEL_FILE_MAX_STRING; }

tsl_status tsl_model_writer_add_step(tsl_model_writer *w, const char *kernel, const char *label, int nargs,
                                     const int *bufs) {
  if (!w || !name_ok(kernel) || !kernel[0] || (label && !name_ok(label)) || (nargs > 0 && !bufs) || nargs < 0 ||
      nargs > TSL_MAX_KERNEL_ARGS)
    return tsl_error(TSL_ERR_INVALID, "model writer: add_step: bad kernel name, label or argument count");
  for (int a = 0; a < nargs; a++)
    if (bufs[a] < 0 || bufs[a] >= w->nbufs)
      return tsl_error(TSL_ERR_INVALID, "model writer: step %s: bad buffer %d", kernel, bufs[a]);
  if (w->nsteps >= TSL_MODEL_FILE_MAX_ITEMS) return tsl_error(TSL_ERR_INVALID, "model writer: too many steps");
  if (w->nsteps == w->cap_steps) {
    int cap = w->cap_steps ? 2 * w->cap_steps : 64;
    wstep *ns = realloc(w->steps, (size_t)cap * sizeof *ns);
    if (!ns) return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
    w->steps = ns;
    w->cap_steps = cap;
  }
  wstep s = {strdup(kernel), strdup(label ? label : ""), nargs, {0}};
  if (!s.kernel || !s.label) {
    free(s.kernel);
    free(s.label);
    return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
  }
  if (nargs > 0) memcpy(s.bufs, bufs, (size_t)nargs * sizeof *bufs);
  w->steps[w->nsteps++] = s;
  return TSL_OK;
}

static tsl_status add_io(tsl_model_writer *w, int k, const char *name, int buf, tsl_dtype dt, int ndim,
                         const int64_t *shape) {
  const char *what = k ? "output" : "input";
  if (!w || !name_ok(name) || (ndim > 0 && !shape))
    return tsl_error(TSL_ERR_INVALID, "model writer: add_%s: NULL or over-long argument", what);
  if (w->nio[k] >= 64) return tsl_error(TSL_ERR_INVALID, "model writer: more than 64 %ss", what);
  if (buf < 0 || buf >= w->nbufs || !tsl_dtype_valid(dt) || ndim < 0 || ndim > TSL_MAX_NDIM)
    return tsl_error(TSL_ERR_INVALID, "model writer: %s %s: bad buffer, dtype or rank", what, name);
  if (k == 0 && w->bufs[buf].kind == KIND_CONST)
    return tsl_error(TSL_ERR_INVALID, "model writer: input %s is a constant buffer", name);
  int64_t esize = (int64_t)tsl_dtype_bytes(dt), numel;
  char where[TSL_MODEL_FILE_MAX_STRING + 64];
  snprintf(where, sizeof where, "model writer: %s %s (its byte size must fit int64)", what, name);
  tsl_status st = tsl_shape_check(where, ndim, shape, INT64_MAX / esize, &numel);
  if (st != TSL_OK) return st;
  int64_t bytes = numel * esize;
  if (bytes != w->bufs[buf].bytes)
    return tsl_error(TSL_ERR_INVALID, "model writer: %s %s holds %lld bytes, its buffer %lld", what, name,
                     (long long)bytes, (long long)w->bufs[buf].bytes);
  wio io = {strdup(name), buf, dt, ndim, {0}};
  if (!io.name) return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
  if (ndim > 0) memcpy(io.shape, shape, (size_t)ndim * sizeof *shape);
  w->io[k][w->nio[k]++] = io;
  return TSL_OK;
}

tsl_status tsl_model_writer_add_input(tsl_model_writer *w, const char *name, int buf, tsl_dtype dt, int ndim,
                                      const int64_t *shape) {
  return add_io(w, 0, name, buf, dt, ndim, shape);
}

tsl_status tsl_model_writer_add_output(tsl_model_writer *w, const char *name, int buf, tsl_dtype dt, int ndim,
                                       const int64_t *shape) {
  return add_io(w, 1, name, buf, dt, ndim, shape);
}

/* A growing byte string; `oom` latches an allocation failure. */
typedef struct bytes {
  uint8_t *p;
  size_t n, cap;
  bool oom;
} bytes;

static void put(bytes *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    uint8_t *np = realloc(b->p, cap);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put_u32(bytes *b, uint32_t v) {
  uint8_t x[4];
  for (int i = 0; i < 4; i++) x[i] = (uint8_t)(v >> (8 * i));
  put(b, x, 4);
}

static void put_u64(bytes *b, uint64_t v) {
  uint8_t x[8];
  for (int i = 0; i < 8; i++) x[i] = (uint8_t)(v >> (8 * i));
  put(b, x, 8);
}

static void put_str(bytes *b, const char *s) {
  put_u32(b, (uint32_t)strlen(s));
  put(b, s, strlen(s));
}

static void put_tensor_desc(bytes *b, tsl_dtype dt, int ndim, const int64_t *shape) {
  uint8_t d[4] = {dt.code, dt.bits, 0, 0};
  put(b, d, 4);
  put_u32(b, (uint32_t)ndim);
  for (int i = 0; i < ndim; i++) put_u64(b, (uint64_t)shape[i]);
}

static void patch_u64(bytes *b, size_t at, uint64_t v) {
  if (b->oom) return;
  for (int i = 0; i < 8; i++) b->p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

tsl_status tsl_model_writer_append(const tsl_model_writer *w, const char *so_path, int64_t *blob_bytes) {
  if (!w || !so_path) return tsl_error(TSL_ERR_INVALID, "model writer: NULL argument");
  if (w->nio[1] == 0) return tsl_error(TSL_ERR_INVALID, "model writer: the model has no output");
  bytes b = {0};
  put(&b, TSL_MODEL_FILE_MAGIC, 8);
  put_u32(&b, TSL_MODEL_FILE_VERSION);
  put_u32(&b, 0);
  size_t data_start_at = b.n;
  put_u64(&b, 0); /* data_start, patched below */
  put_str(&b, w->target);
  put_u64(&b, (uint64_t)w->arena_bytes);
  put_u32(&b, (uint32_t)w->nbufs);
  uint64_t data_off = 0;
  for (int i = 0; i < w->nbufs; i++) {
    const wbuf *x = &w->bufs[i];
    put_u32(&b, (uint32_t)x->kind);
    if (x->kind == KIND_CONST) {
      put_tensor_desc(&b, x->dtype, x->ndim, x->shape);
      put_u64(&b, data_off);
      put_u64(&b, (uint64_t)x->bytes);
      data_off += (uint64_t)x->bytes;
    } else if (x->kind == KIND_ACT) {
      put_u64(&b, (uint64_t)x->offset);
      put_u64(&b, (uint64_t)x->bytes);
    } else {
      put_u32(&b, (uint32_t)x->base);
      put_u64(&b, (uint64_t)x->offset);
      put_u64(&b, (uint64_t)x->bytes);
    }
  }
  put_u32(&b, (uint32_t)w->nsteps);
  for (int i = 0; i < w->nsteps; i++) {
    put_str(&b, w->steps[i].kernel);
    put_str(&b, w->steps[i].label);
    put_u32(&b, (uint32_t)w->steps[i].nargs);
    for (int a = 0; a < w->steps[i].nargs; a++) put_u32(&b, (uint32_t)w->steps[i].bufs[a]);
  }
  for (int k = 0; k < 2; k++) {
    put_u32(&b, (uint32_t)w->nio[k]);
    for (int i = 0; i < w->nio[k]; i++) {
      put_str(&b, w->io[k][i].name);
      put_u32(&b, (uint32_t)w->io[k][i].buf);
      put_tensor_desc(&b, w->io[k][i].dtype, w->io[k][i].ndim, w->io[k][i].shape);
    }
  }
  patch_u64(&b, data_start_at, b.n);
  for (int i = 0; i < w->nbufs; i++)
    if (w->bufs[i].kind == KIND_CONST) put(&b, w->bufs[i].data, (size_t)w->bufs[i].bytes);
  if (b.oom) {
    free(b.p);
    return tsl_error(TSL_ERR_NOMEM, "model writer: out of memory");
  }
  FILE *f = fopen(so_path, "ab");
  if (!f) {
    free(b.p);
    return tsl_error(TSL_ERR_IO, "model writer: %s: %s", so_path, strerror(errno));
  }
  long start = ftell(f);
  if (fseek(f, 0, SEEK_END) == 0) start = ftell(f);
  bytes t = {0};
  put_u64(&t, (uint64_t)start);
  put_u64(&t, (uint64_t)b.n);
  put_u32(&t, crc32_update(0, b.p, b.n));
  put_u32(&t, TSL_MODEL_FILE_VERSION);
  put(&t, TSL_MODEL_FILE_TRAILER_MAGIC, 8);
  bool ok = start >= 0 && !t.oom && fwrite(b.p, 1, b.n, f) == b.n && fwrite(t.p, 1, t.n, f) == t.n;
  int err = errno;
  if (fclose(f) != 0) ok = false;
  if (blob_bytes) *blob_bytes = (int64_t)(b.n + t.n);
  free(b.p);
  free(t.p);
  if (!ok) return tsl_error(TSL_ERR_IO, "model writer: %s: write failed: %s", so_path, strerror(err));
  return TSL_OK;
}

/* ---- reader ---- */

typedef struct cursor {
  const uint8_t *p;
  uint64_t n, at;
  bool bad; /* read past the end */
} cursor;

static uint64_t get_le(cursor *c, int nbytes) {
  if (c->bad || c->n - c->at < (uint64_t)nbytes) {
    c->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < nbytes; i++) v |= (uint64_t)c->p[c->at + (uint64_t)i] << (8 * i);
  c->at += (uint64_t)nbytes;
  return v;
}

static uint32_t get_u32(cursor *c) { return (uint32_t)get_le(c, 4); }
static uint64_t get_u64(cursor *c) { return get_le(c, 8); }

/* A string into buf (NUL-terminated); false when over-long or past the end. */
static bool get_str(cursor *c, char *buf, size_t cap) {
  uint32_t len = get_u32(c);
  if (c->bad || len >= cap || len >= TSL_MODEL_FILE_MAX_STRING || c->n - c->at < len) {
    c->bad = true;
    return false;
  }
  memcpy(buf, c->p + c->at, len);
  buf[len] = 0;
  c->at += len;
  return true;
}

static bool get_tensor_desc(cursor *c, tsl_dtype *dt, int *ndim, int64_t *shape) {
  uint32_t d = get_u32(c);
  dt->code = (uint8_t)(d & 0xff);
  dt->bits = (uint8_t)((d >> 8) & 0xff);
  uint32_t nd = get_u32(c);
  if (c->bad || !tsl_dtype_valid(*dt) || nd > TSL_MAX_NDIM) return false;
  *ndim = (int)nd;
  for (uint32_t i = 0; i < nd; i++) {
    uint64_t e = get_u64(c);
    if (e > (uint64_t)INT64_MAX) return false;
    shape[i] = (int64_t)e;
  }
  return !c->bad;
}

static tsl_status corrupt(const char *path, const char *what) {
  return tsl_error(TSL_ERR_INVALID, "%s: corrupt model plan: %s", path, what);
}

/* Reads and checks the trailer and the blob; *blob is malloc'd. */
static tsl_status read_blob(const char *path, uint8_t **blob, uint64_t *blob_n, int64_t *plan_bytes) {
  FILE *f = fopen(path, "rb");
  if (!f) return tsl_error(TSL_ERR_IO, "%s: %s", path, strerror(errno));
  struct stat sb;
  uint8_t tr[TSL_MODEL_FILE_TRAILER_BYTES];
  tsl_status st = TSL_OK;
  if (fstat(fileno(f), &sb) != 0) st = tsl_error(TSL_ERR_IO, "%s: %s", path, strerror(errno));
  else if (sb.st_size < TSL_MODEL_FILE_TRAILER_BYTES || fseek(f, -TSL_MODEL_FILE_TRAILER_BYTES, SEEK_END) != 0 ||
           fread(tr, 1, sizeof tr, f) != sizeof tr || memcmp(tr + 24, TSL_MODEL_FILE_TRAILER_MAGIC, 8) != 0)
    st = tsl_error(TSL_ERR_INVALID,
                   "%s: no tessel model plan at the end of the file (a kernel object of `tunecli compile OP`? "
                   "compile a whole model with `tunecli compile MODEL --target T -o FILE.so`)",
                   path);
  cursor c = {tr, sizeof tr, 0, false};
  uint64_t off = get_u64(&c), n = get_u64(&c);
  uint32_t crc = get_u32(&c), version = get_u32(&c);
  if (st == TSL_OK && version != TSL_MODEL_FILE_VERSION)
    st = tsl_error(TSL_ERR_UNSUPPORTED, "%s: model format version %u; this runtime reads version %d (recompile the "
                   "model with this tessel's tunecli compile)", path, version, TSL_MODEL_FILE_VERSION);
  uint64_t size = (uint64_t)sb.st_size;
  if (st == TSL_OK && (off > size || n > size - off || off + n != size - TSL_MODEL_FILE_TRAILER_BYTES))
    st = corrupt(path, "the trailer's plan offset and size do not match the file (truncated?)");
  uint8_t *p = NULL;
  if (st == TSL_OK && !(p = malloc(n ? n : 1))) st = tsl_error(TSL_ERR_NOMEM, "%s: out of memory", path);
  if (st == TSL_OK && (fseek(f, (long)off, SEEK_SET) != 0 || fread(p, 1, n, f) != n))
    st = tsl_error(TSL_ERR_IO, "%s: read error", path);
  if (st == TSL_OK && crc32_update(0, p, n) != crc) st = corrupt(path, "CRC-32 mismatch (the file was modified)");
  fclose(f);
  if (st != TSL_OK) {
    free(p);
    return st;
  }
  *blob = p;
  *blob_n = n;
  *plan_bytes = (int64_t)(n + TSL_MODEL_FILE_TRAILER_BYTES);
  return TSL_OK;
}

/* Parses the blob into plan p, whose module m is loaded already. */
static tsl_status parse_plan(const char *path, cursor *c, tsl_graph_plan *p, const tsl_module *m,
                             tsl_model_file_info *info) {
  char s[TSL_MODEL_FILE_MAX_STRING], label[TSL_MODEL_FILE_MAX_STRING];
  if (c->n < 24 || memcmp(c->p, TSL_MODEL_FILE_MAGIC, 8) != 0) return corrupt(path, "bad plan magic");
  c->at = 8;
  if (get_u32(c) != TSL_MODEL_FILE_VERSION) return corrupt(path, "the plan's version is not the trailer's");
  get_u32(c);
  uint64_t data_start = get_u64(c);
  if (!get_str(c, info->target, sizeof info->target)) return corrupt(path, "bad target string");
  info->arena_bytes = (int64_t)get_u64(c);
  uint32_t nbufs = get_u32(c);
  if (c->bad || nbufs > TSL_MODEL_FILE_MAX_ITEMS || data_start > c->n) return corrupt(path, "bad header");
  info->buffers = (int)nbufs;
  tsl_status st;
  for (uint32_t i = 0; i < nbufs; i++) {
    uint32_t kind = get_u32(c);
    int id = -1;
    if (kind == KIND_CONST) {
      tsl_dtype dt;
      int ndim;
      int64_t shape[TSL_MAX_NDIM];
      if (!get_tensor_desc(c, &dt, &ndim, shape)) return corrupt(path, "bad constant description");
      uint64_t off = get_u64(c), n = get_u64(c);
      tsl_tensor *t = NULL;
      if (c->bad || off > c->n - data_start || n > c->n - data_start - off)
        return corrupt(path, "a constant's data lies outside the plan");
      /* the shape must give exactly the stored bytes before anything is allocated */
      uint64_t want = tsl_dtype_bytes(dt);
      for (int d = 0; d < ndim; d++)
        want = shape[d] && want > n / (uint64_t)shape[d] ? UINT64_MAX : want * (uint64_t)shape[d];
      if (want != n) return corrupt(path, "a constant's byte size is not its shape's");
      if ((st = tsl_tensor_new(dt, ndim, shape, &t)) != TSL_OK)
        return tsl_error(st, "%s: constant %u: %s", path, i, tsl_last_error());
      memcpy(t->data, c->p + data_start + off, n);
      info->constant_bytes += (int64_t)n;
      st = tsl_graph_plan_add_constant(p, t, &id);
    } else if (kind == KIND_ACT) {
      uint64_t off = get_u64(c), n = get_u64(c);
      if (c->bad || off > (uint64_t)INT64_MAX || n > (uint64_t)INT64_MAX) return corrupt(path, "bad activation");
      st = tsl_graph_plan_add_activation(p, (int64_t)off, (int64_t)n, &id);
    } else if (kind == KIND_VIEW) {
      uint32_t base = get_u32(c);
      uint64_t off = get_u64(c), n = get_u64(c);
      if (c->bad || base >= i || off > (uint64_t)INT64_MAX || n > (uint64_t)INT64_MAX) return corrupt(path, "bad view");
      st = tsl_graph_plan_add_view(p, (int)base, (int64_t)off, (int64_t)n, &id);
    } else {
      return corrupt(path, "unknown buffer kind");
    }
    if (st != TSL_OK) return tsl_error(st, "%s: buffer %u: %s", path, i, tsl_last_error());
    if (id != (int)i) return corrupt(path, "buffer numbering");
  }
  uint32_t nsteps = get_u32(c);
  if (c->bad || nsteps > TSL_MODEL_FILE_MAX_ITEMS) return corrupt(path, "bad step count");
  info->steps = (int)nsteps;
  for (uint32_t i = 0; i < nsteps; i++) {
    if (!get_str(c, s, sizeof s) || !get_str(c, label, sizeof label)) return corrupt(path, "bad step name");
    uint32_t nargs = get_u32(c);
    if (c->bad || nargs > TSL_MAX_KERNEL_ARGS) return corrupt(path, "bad step argument count");
    int bufs[TSL_MAX_KERNEL_ARGS];
    for (uint32_t a = 0; a < nargs; a++) {
      uint32_t b = get_u32(c);
      if (c->bad || b >= nbufs) return corrupt(path, "a step names a buffer that does not exist");
      bufs[a] = (int)b;
    }
    const tsl_kernel *k = NULL;
    if (tsl_module_get_kernel(m, s, &k) != TSL_OK)
      return tsl_error(TSL_ERR_NOT_FOUND, "%s: step %u (%s) calls kernel %s, which the object lacks", path, i, label, s);
    if ((st = tsl_graph_plan_add_step(p, k, label[0] ? label : NULL, (int)nargs, bufs)) != TSL_OK)
      return tsl_error(st, "%s: step %u (%s): %s", path, i, label, tsl_last_error());
  }
  for (int kind = 0; kind < 2; kind++) {
    uint32_t nio = get_u32(c);
    if (c->bad || nio > 64) return corrupt(path, "bad input/output count");
    for (uint32_t i = 0; i < nio; i++) {
      tsl_dtype dt;
      int ndim;
      int64_t shape[TSL_MAX_NDIM];
      if (!get_str(c, s, sizeof s)) return corrupt(path, "bad input/output name");
      uint32_t b = get_u32(c);
      if (!get_tensor_desc(c, &dt, &ndim, shape) || b >= nbufs) return corrupt(path, "bad input/output description");
      st = kind ? tsl_graph_plan_add_output(p, s, (int)b, dt, ndim, shape)
                : tsl_graph_plan_add_input(p, s, (int)b, dt, ndim, shape);
      if (st != TSL_OK) return tsl_error(st, "%s: %s %s: %s", path, kind ? "output" : "input", s, tsl_last_error());
    }
  }
  if (c->bad || c->at != data_start) return corrupt(path, "the description does not end where the data starts");
  if (tsl_graph_plan_num_outputs(p) == 0) return corrupt(path, "no output");
  return TSL_OK;
}

tsl_status tsl_model_file_load(const char *path, tsl_graph_plan **out, tsl_model_file_info *info) {
  if (!path || !out) return tsl_error(TSL_ERR_INVALID, "model file: NULL argument");
  *out = NULL;
  tsl_model_file_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  info->version = TSL_MODEL_FILE_VERSION;
  uint8_t *blob = NULL;
  uint64_t n = 0;
  tsl_status st = read_blob(path, &blob, &n, &info->plan_bytes);
  if (st != TSL_OK) return st;
  tsl_module *m = NULL;
  tsl_graph_plan *p = NULL;
  if ((st = tsl_module_load_so(path, &m)) != TSL_OK) {
    free(blob);
    return st;
  }
  info->kernels = tsl_module_num_kernels(m);
  if ((st = tsl_graph_plan_new(&p)) != TSL_OK) {
    tsl_module_free(m);
    free(blob);
    return st;
  }
  tsl_graph_plan_set_module(p, m);
  cursor c = {blob, n, 0, false};
  st = parse_plan(path, &c, p, m, info);
  free(blob);
  if (st != TSL_OK) {
    tsl_graph_plan_free(p);
    return st;
  }
  *out = p;
  return TSL_OK;
}
