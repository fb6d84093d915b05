/* Decoding the requests tessel-rpc-server answers (the wire format of rpc_proto.h and
 * docs/rpc.md), apart from acting on them: the server (device/rpc_server.c) decodes a
 * request here, then applies its own caps (file, buffer and reply sizes, timeout and
 * thread clamps) and does the work. Kept free of any state so that the checks a request
 * meets are the same in the server, its tests and the fuzzer (tests/fuzz/).
 *
 * Plain C over libc and rpc_proto.h only (it builds into the LLVM-free device program).
 */
#ifndef TESSEL_DEVICE_RPC_REQUEST_H
#define TESSEL_DEVICE_RPC_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/rpc_proto.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest buffer argument of a MEASURE request, in elements (a bound on the product of
 * its extents, so its byte size cannot overflow). */
#define TSL_RPC_MAX_ARG_NUMEL (UINT64_C(1) << 40)

/* One argument of a MEASURE request. */
typedef struct tsl_rpc_measure_arg {
  uint8_t kind;                   /* tsl_rpc_arg_kind */
  uint8_t code, bits, ndim;       /* buffers: dtype code, bits per element (a multiple of 8), rank */
  uint64_t dims[TSL_RPC_MAX_DIMS]; /* buffers: extents */
  size_t bytes;                   /* buffers: elements x bits / 8 */
  const void *data;               /* INPUT: `bytes` bytes inside the message (borrowed) */
  int64_t scalar;                 /* I32 / I64: the value (I32 keeps the low 32 bits) */
} tsl_rpc_measure_arg;

/* A decoded request. Pointers (upload bytes, input data) point into the message, which
 * must outlive the request. Fields not of the request's type are zero. */
typedef struct tsl_rpc_request {
  uint16_t type;   /* tsl_rpc_type: HELLO, UPLOAD, MEASURE or FREE */
  bool key_given;  /* a non-empty, well-formed key string was sent (for the server's log) */
  /* UPLOAD */
  const void *so;
  size_t so_bytes;
  /* MEASURE and FREE; FREE of a malformed request has handle 0, which names no module */
  uint32_t handle;
  /* MEASURE */
  char kernel[256];
  int number, repeat;      /* calls per sample (>= 1), samples (0..TSL_RPC_MAX_COSTS) */
  double min_repeat_ms;    /* 0..1e6 */
  double timeout_s;        /* > 0 (the server clamps it to its own maximum) */
  int threads;             /* >= 0; 0 = all cores (the server clamps it) */
  bool want_outputs;
  uint32_t nargs;          /* <= TSL_RPC_MAX_ARGS */
  tsl_rpc_measure_arg args[TSL_RPC_MAX_ARGS];
  uint64_t buffer_bytes;   /* all buffer arguments */
  uint64_t output_bytes;   /* the OUTPUT arguments */
} tsl_rpc_request;

/* Decodes the request data[0..len) into *req (filled whatever the outcome, as far as
 * decoded), checking the header, then that the key equals `key` (constant time, before
 * anything else is read), then the type's fields. Returns 0 for a well-formed request
 * with the right key, else the tsl_rpc_error code of the reply the server sends, with
 * the reply's message in msg (msg_size bytes, may be 0):
 *   TSL_RPC_E_BAD_MESSAGE  short message, wrong magic or version, unknown type, a field
 *                          cut short, over-long strings, more than TSL_RPC_MAX_ARGS
 *                          arguments, bad options, an unknown argument kind, a rank over
 *                          TSL_RPC_MAX_DIMS, bits not a positive multiple of 8, extents
 *                          whose product passes TSL_RPC_MAX_ARG_NUMEL (zero extents
 *                          count as 1), input data of another size than its shape's;
 *   TSL_RPC_E_KEY          a missing, malformed or wrong key. */
uint32_t tsl_rpc_decode_request(const void *data, size_t len, const char *key, tsl_rpc_request *req, char *msg,
                                size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif
