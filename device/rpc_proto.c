/* The RPC wire format (rpc_proto.h). */
#include "device/rpc_proto.h"

#include <stdlib.h>
#include <string.h>

void tsl_rpc_buf_init(tsl_rpc_buf *b) {
  b->data = NULL;
  b->len = b->cap = 0;
  b->ok = true;
}

void tsl_rpc_buf_free(tsl_rpc_buf *b) {
  free(b->data);
  tsl_rpc_buf_init(b);
}

static uint8_t *reserve(tsl_rpc_buf *b, size_t n) {
  if (!b->ok) return NULL;
  if (n > SIZE_MAX / 2 - b->len) {
    b->ok = false;
    return NULL;
  }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
      b->ok = false;
      return NULL;
    }
    b->data = d;
    b->cap = cap;
  }
  uint8_t *p = b->data + b->len;
  b->len += n;
  return p;
}

static void put_le(tsl_rpc_buf *b, uint64_t v, int bytes) {
  uint8_t *p = reserve(b, (size_t)bytes);
  if (!p) return;
  for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void tsl_rpc_put_u8(tsl_rpc_buf *b, uint8_t v) { put_le(b, v, 1); }
void tsl_rpc_put_u32(tsl_rpc_buf *b, uint32_t v) { put_le(b, v, 4); }
void tsl_rpc_put_u64(tsl_rpc_buf *b, uint64_t v) { put_le(b, v, 8); }

void tsl_rpc_put_f64(tsl_rpc_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  put_le(b, u, 8);
}

void tsl_rpc_put_header(tsl_rpc_buf *b, uint16_t type) {
  put_le(b, TSL_RPC_MAGIC, 4);
  put_le(b, TSL_RPC_VERSION, 2);
  put_le(b, type, 2);
}

void tsl_rpc_put_str(tsl_rpc_buf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_le(b, n, 4);
  uint8_t *p = reserve(b, n);
  if (p && n) memcpy(p, s, n);
}

void *tsl_rpc_put_blob_space(tsl_rpc_buf *b, size_t n) {
  put_le(b, n, 8);
  return reserve(b, n);
}

void tsl_rpc_put_blob(tsl_rpc_buf *b, const void *p, size_t n) {
  void *d = tsl_rpc_put_blob_space(b, n);
  if (d && n) memcpy(d, p, n);
}

void tsl_rpc_reader_init(tsl_rpc_reader *r, const void *data, size_t len) {
  r->data = data;
  r->len = data ? len : 0;
  r->pos = 0;
  r->ok = true;
}

static const uint8_t *take(tsl_rpc_reader *r, size_t n) {
  if (!r->ok || n > r->len - r->pos) {
    r->ok = false;
    return NULL;
  }
  const uint8_t *p = r->data + r->pos;
  r->pos += n;
  return p;
}

static uint64_t get_le(tsl_rpc_reader *r, int bytes) {
  const uint8_t *p = take(r, (size_t)bytes);
  uint64_t v = 0;
  for (int i = 0; p && i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

bool tsl_rpc_get_header(tsl_rpc_reader *r, uint16_t *type) {
  uint32_t magic = (uint32_t)get_le(r, 4);
  uint16_t version = (uint16_t)get_le(r, 2);
  *type = (uint16_t)get_le(r, 2);
  if (magic != TSL_RPC_MAGIC || version != TSL_RPC_VERSION) r->ok = false;
  return r->ok;
}

uint8_t tsl_rpc_get_u8(tsl_rpc_reader *r) { return (uint8_t)get_le(r, 1); }
uint32_t tsl_rpc_get_u32(tsl_rpc_reader *r) { return (uint32_t)get_le(r, 4); }
uint64_t tsl_rpc_get_u64(tsl_rpc_reader *r) { return get_le(r, 8); }

double tsl_rpc_get_f64(tsl_rpc_reader *r) {
  uint64_t u = get_le(r, 8);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

void tsl_rpc_get_str(tsl_rpc_reader *r, char *out, size_t n) {
  uint32_t len = (uint32_t)get_le(r, 4);
  if (n) out[0] = '\0';
  if (!r->ok) return;
  if (len > TSL_RPC_MAX_STR || len >= n) {
    r->ok = false;
    return;
  }
  const uint8_t *p = take(r, len);
  if (!p) return;
  memcpy(out, p, len);
  out[len] = '\0';
}

size_t tsl_rpc_get_blob(tsl_rpc_reader *r, const void **p) {
  uint64_t len = get_le(r, 8);
  *p = NULL;
  if (!r->ok) return 0;
  if (len > SIZE_MAX) {
    r->ok = false;
    return 0;
  }
  const uint8_t *d = take(r, (size_t)len);
  *p = d;
  return d ? (size_t)len : 0;
}

uint64_t tsl_rpc_fnv1a64(const void *p, size_t n) {
  const uint8_t *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

bool tsl_rpc_key_equal(const char *a, const char *b) {
  if (!a || !b) return false;
  size_t na = strlen(a), nb = strlen(b);
  unsigned diff = na != nb;
  for (size_t i = 0; i < na; i++) diff |= (unsigned)(uint8_t)a[i] ^ (unsigned)(uint8_t)(i < nb ? b[i] : 0);
  return diff == 0;
}
