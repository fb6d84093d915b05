/* Request decoding for tessel-rpc-server (rpc_request.h). */
#include "device/rpc_request.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t refuse(char *msg, size_t n, uint32_t code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static uint32_t refuse(char *msg, size_t n, uint32_t code, const char *fmt, ...) {
  if (n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
  }
  return code;
}

static uint32_t decode_upload(tsl_rpc_reader *r, tsl_rpc_request *req, char *msg, size_t n) {
  req->so_bytes = tsl_rpc_get_blob(r, &req->so);
  if (!r->ok) return refuse(msg, n, TSL_RPC_E_BAD_MESSAGE, "upload: malformed request");
  return 0;
}

/* One buffer argument's dtype, shape and (inputs) data. False when malformed. */
static bool decode_buffer(tsl_rpc_reader *r, tsl_rpc_measure_arg *a, bool *wrong_size) {
  a->code = tsl_rpc_get_u8(r);
  a->bits = tsl_rpc_get_u8(r);
  a->ndim = tsl_rpc_get_u8(r);
  if (!r->ok || a->ndim > TSL_RPC_MAX_DIMS || a->bits == 0 || a->bits % 8) return false;
  /* zero extents count as 1 in the bound, as for tensors (tsl_shape_check) */
  uint64_t span = 1, numel = 1;
  for (int d = 0; d < a->ndim; d++) {
    uint64_t e = tsl_rpc_get_u64(r);
    uint64_t e1 = e ? e : 1;
    if (!r->ok || e1 > TSL_RPC_MAX_ARG_NUMEL / span) return false;
    span *= e1;
    numel = e ? numel * e : 0;
    a->dims[d] = e;
  }
  uint64_t bytes = numel * (a->bits / 8);
  if (bytes > SIZE_MAX) return false; /* not addressable on this (32-bit) device */
  if (a->kind == TSL_RPC_ARG_INPUT) {
    size_t got = tsl_rpc_get_blob(r, &a->data);
    if (!r->ok) return false;
    if (got != bytes) {
      *wrong_size = true;
      return false;
    }
  }
  a->bytes = (size_t)bytes;
  return true;
}

static uint32_t decode_measure(tsl_rpc_reader *r, tsl_rpc_request *req, char *msg, size_t n) {
  req->handle = tsl_rpc_get_u32(r);
  tsl_rpc_get_str(r, req->kernel, sizeof req->kernel);
  req->number = (int)tsl_rpc_get_u32(r);
  req->repeat = (int)tsl_rpc_get_u32(r);
  req->min_repeat_ms = tsl_rpc_get_f64(r);
  req->timeout_s = tsl_rpc_get_f64(r);
  req->threads = (int)tsl_rpc_get_u32(r);
  req->want_outputs = tsl_rpc_get_u8(r) != 0;
  uint32_t nargs = tsl_rpc_get_u32(r);
  if (!r->ok || nargs > TSL_RPC_MAX_ARGS)
    return refuse(msg, n, TSL_RPC_E_BAD_MESSAGE, "measure: malformed request (at most %d arguments)",
                  TSL_RPC_MAX_ARGS);
  if (req->number < 1 || req->repeat < 0 || req->repeat > TSL_RPC_MAX_COSTS || !(req->min_repeat_ms >= 0) ||
      !(req->min_repeat_ms <= 1e6) || !(req->timeout_s > 0) || req->threads < 0)
    return refuse(msg, n, TSL_RPC_E_BAD_MESSAGE,
                  "measure: bad options (number >= 1, repeat 0..%d, min_repeat_ms 0..1e6, timeout > 0)",
                  TSL_RPC_MAX_COSTS);
  req->nargs = nargs;
  for (uint32_t i = 0; i < nargs; i++) {
    tsl_rpc_measure_arg *a = &req->args[i];
    a->kind = tsl_rpc_get_u8(r);
    if (a->kind == TSL_RPC_ARG_I32 || a->kind == TSL_RPC_ARG_I64) {
      a->scalar = (int64_t)tsl_rpc_get_u64(r);
      if (!r->ok) break;
      continue;
    }
    bool wrong_size = false;
    if ((a->kind != TSL_RPC_ARG_INPUT && a->kind != TSL_RPC_ARG_OUTPUT) || !decode_buffer(r, a, &wrong_size)) {
      if (wrong_size)
        return refuse(msg, n, TSL_RPC_E_BAD_MESSAGE, "measure: argument %u: data of the wrong size for its shape", i);
      r->ok = false;
      break;
    }
    /* at most 16 buffers of 2^40 elements of 31 bytes: no overflow in 64 bits (a->bytes
     * is the whole size: decode_buffer refuses one beyond SIZE_MAX) */
    req->buffer_bytes += (uint64_t)a->bytes;
    if (a->kind == TSL_RPC_ARG_OUTPUT) req->output_bytes += (uint64_t)a->bytes;
  }
  if (!r->ok) return refuse(msg, n, TSL_RPC_E_BAD_MESSAGE, "measure: malformed arguments");
  return 0;
}

uint32_t tsl_rpc_decode_request(const void *data, size_t len, const char *key, tsl_rpc_request *req, char *msg,
                                size_t msg_size) {
  memset(req, 0, sizeof *req);
  if (msg_size) msg[0] = '\0';
  tsl_rpc_reader r;
  tsl_rpc_reader_init(&r, data, len);
  char given[512];
  if (!tsl_rpc_get_header(&r, &req->type))
    return refuse(msg, msg_size, TSL_RPC_E_BAD_MESSAGE, "not a tessel RPC message of version %d", TSL_RPC_VERSION);
  tsl_rpc_get_str(&r, given, sizeof given);
  req->key_given = r.ok && given[0];
  if (!r.ok || !tsl_rpc_key_equal(given, key)) return refuse(msg, msg_size, TSL_RPC_E_KEY, "key refused");
  switch (req->type) {
  case TSL_RPC_HELLO:
    return 0;
  case TSL_RPC_UPLOAD:
    return decode_upload(&r, req, msg, msg_size);
  case TSL_RPC_MEASURE:
    return decode_measure(&r, req, msg, msg_size);
  case TSL_RPC_FREE: {
    uint32_t h = tsl_rpc_get_u32(&r);
    req->handle = r.ok ? h : 0;
    return 0;
  }
  default:
    return refuse(msg, msg_size, TSL_RPC_E_BAD_MESSAGE, "unknown request type %u", req->type);
  }
}
