/* libFuzzer harness: the RPC server's request decoder (device/rpc_request.h,
 * docs/fuzzing.md).
 *
 * Each input is one request message as tessel-rpc-server receives it; the server's key
 * here is FUZZ_RPC_KEY (fuzz_seeds.c encodes the seeds with it). A decoded request must
 * describe only bytes inside the message: the uploaded object and every input buffer
 * lie within it, each buffer's size is its shape's (recomputed here), and the counts and
 * options are within the documented limits. Crashes, UBSan reports and a request that
 * breaks these are faults. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "device/rpc_request.h"

#define FUZZ_RPC_KEY "fuzz-key"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why) {
  fprintf(stderr, "fuzz_rpc_request: a decoded request %s\n", why);
  abort();
}

/* True when [p, p + n) lies within data[0..size). */
static bool inside(const void *p, size_t n, const uint8_t *data, size_t size) {
  const uint8_t *b = p;
  return n == 0 || (b && b >= data && b <= data + size && n <= (size_t)(data + size - b));
}

static void check_measure(const tsl_rpc_request *req, const uint8_t *data, size_t size) {
  if (req->nargs > TSL_RPC_MAX_ARGS) fail("has more than TSL_RPC_MAX_ARGS arguments");
  if (req->number < 1 || req->repeat < 0 || req->repeat > TSL_RPC_MAX_COSTS || !(req->timeout_s > 0) ||
      req->threads < 0)
    fail("has options outside their ranges");
  uint64_t total = 0, outputs = 0;
  for (uint32_t i = 0; i < req->nargs; i++) {
    const tsl_rpc_measure_arg *a = &req->args[i];
    if (a->kind == TSL_RPC_ARG_I32 || a->kind == TSL_RPC_ARG_I64) continue;
    if (a->kind != TSL_RPC_ARG_INPUT && a->kind != TSL_RPC_ARG_OUTPUT) fail("has an argument of an unknown kind");
    if (a->ndim > TSL_RPC_MAX_DIMS || a->bits == 0 || a->bits % 8) fail("has a bad rank or element size");
    /* the bound counts zero extents as 1 (rpc_request.h) */
    uint64_t span = 1, numel = 1;
    for (int d = 0; d < a->ndim; d++) {
      uint64_t e = a->dims[d] ? a->dims[d] : 1;
      if (e > TSL_RPC_MAX_ARG_NUMEL / span)
        fail("has a buffer of more than TSL_RPC_MAX_ARG_NUMEL elements");
      span *= e;
      numel *= a->dims[d];
    }
    if (a->bytes != numel * (a->bits / 8)) fail("has a buffer whose size is not its shape's");
    if (a->kind == TSL_RPC_ARG_INPUT && !inside(a->data, a->bytes, data, size))
      fail("has input data outside the message");
    total += a->bytes;
    if (a->kind == TSL_RPC_ARG_OUTPUT) outputs += a->bytes;
  }
  if (total != req->buffer_bytes || outputs != req->output_bytes) fail("miscounts its buffer bytes");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tsl_rpc_request req;
  char msg[512];
  uint32_t code = tsl_rpc_decode_request(data, size, FUZZ_RPC_KEY, &req, msg, sizeof msg);
  if (code) {
    if (code != TSL_RPC_E_BAD_MESSAGE && code != TSL_RPC_E_KEY) fail("was refused with an undocumented code");
    if (!msg[0]) fail("was refused without a message");
    return 0;
  }
  switch (req.type) {
  case TSL_RPC_HELLO:
  case TSL_RPC_FREE:
    break;
  case TSL_RPC_UPLOAD:
    if (!inside(req.so, req.so_bytes, data, size)) fail("has an upload outside the message");
    break;
  case TSL_RPC_MEASURE:
    check_measure(&req, data, size);
    break;
  default:
    fail("has a type the decoder should have refused");
  }
  return 0;
}
