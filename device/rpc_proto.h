/* The wire format of tessel's device RPC (docs/rpc.md): the messages a tuner (client,
 * tuner/remote.h) and tessel-rpc-server (device/rpc_server.c) exchange over nng req/rep.
 * Plain C with no dependency but libc, so the same encoder/decoder builds into the
 * LLVM-free device program and into the host library.
 *
 * Every message: u32 magic TSL_RPC_MAGIC, u16 version TSL_RPC_VERSION, u16 type, then
 * the type's fields. Integers are little-endian; f64 is the IEEE-754 bit pattern as a
 * u64; a string is u32 length + bytes (no NUL); a blob is u64 length + bytes.
 *
 * The writer grows a heap buffer (tsl_rpc_buf); the reader walks a borrowed buffer and
 * latches the first error (short message, over-long string), so a decoder reads every
 * field and checks `ok` once at the end.
 */
#ifndef TESSEL_DEVICE_RPC_PROTO_H
#define TESSEL_DEVICE_RPC_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_RPC_MAGIC 0x43505254u /* "TRPC" in memory order */
#define TSL_RPC_VERSION 1

/* Message types. Requests carry the key first; replies answer one request each. */
typedef enum tsl_rpc_type {
  TSL_RPC_HELLO = 1,      /* key -> HELLO_OK */
  TSL_RPC_UPLOAD = 2,     /* key, blob shared object -> UPLOAD_OK */
  TSL_RPC_MEASURE = 3,    /* key, handle, kernel, options, args -> MEASURE_OK */
  TSL_RPC_FREE = 4,       /* key, handle -> DONE */
  TSL_RPC_HELLO_OK = 101, /* fingerprint, fingerprint id, arch, cores, max message, max file */
  TSL_RPC_UPLOAD_OK = 102, /* handle */
  TSL_RPC_MEASURE_OK = 103, /* status, message, costs, outputs */
  TSL_RPC_DONE = 104,
  TSL_RPC_ERROR = 199     /* code, message: the request was refused */
} tsl_rpc_type;

/* Codes of an ERROR reply. */
typedef enum tsl_rpc_error {
  TSL_RPC_E_BAD_MESSAGE = 1, /* malformed, wrong magic/version, unknown type */
  TSL_RPC_E_KEY = 2,         /* missing or wrong key */
  TSL_RPC_E_TOO_LARGE = 3,   /* a file, buffer or total over the server's caps */
  TSL_RPC_E_NO_MODULE = 4,   /* unknown (or evicted) module handle */
  TSL_RPC_E_SERVER = 5       /* the server failed (disk, memory, fork) */
} tsl_rpc_error;

/* Outcome of one measurement (MEASURE_OK status). */
typedef enum tsl_rpc_status {
  TSL_RPC_OK = 0,
  TSL_RPC_LOAD_FAILED = 1,  /* the object did not load or has no such kernel / signature */
  TSL_RPC_RUN_FAILED = 2,   /* the kernel returned an error, or timing failed */
  TSL_RPC_CRASHED = 3,      /* the measuring child died (signal or exit) */
  TSL_RPC_TIMEOUT = 4       /* the child exceeded the timeout and was killed */
} tsl_rpc_status;

/* Argument kinds of a MEASURE request. */
typedef enum tsl_rpc_arg_kind {
  TSL_RPC_ARG_INPUT = 0,  /* a buffer with the given bytes */
  TSL_RPC_ARG_OUTPUT = 1, /* a buffer the kernel writes (f32: NaN-poisoned, else zeros) */
  TSL_RPC_ARG_I32 = 2,
  TSL_RPC_ARG_I64 = 3
} tsl_rpc_arg_kind;

#define TSL_RPC_MAX_ARGS 16
#define TSL_RPC_MAX_DIMS 8
#define TSL_RPC_MAX_COSTS 32
#define TSL_RPC_MAX_STR 4096

/* A growing output buffer. ok turns false (and stays) when memory ran out. */
typedef struct tsl_rpc_buf {
  uint8_t *data;
  size_t len, cap;
  bool ok;
} tsl_rpc_buf;

void tsl_rpc_buf_init(tsl_rpc_buf *b);
void tsl_rpc_buf_free(tsl_rpc_buf *b);
/* Starts a message: magic, version, type. */
void tsl_rpc_put_header(tsl_rpc_buf *b, uint16_t type);
void tsl_rpc_put_u8(tsl_rpc_buf *b, uint8_t v);
void tsl_rpc_put_u32(tsl_rpc_buf *b, uint32_t v);
void tsl_rpc_put_u64(tsl_rpc_buf *b, uint64_t v);
void tsl_rpc_put_f64(tsl_rpc_buf *b, double v);
/* A string (NULL = empty). */
void tsl_rpc_put_str(tsl_rpc_buf *b, const char *s);
void tsl_rpc_put_blob(tsl_rpc_buf *b, const void *p, size_t n);
/* Reserves n bytes of a blob (length written) and returns where to write them (NULL
 * when out of memory). The pointer is valid until the next put. */
void *tsl_rpc_put_blob_space(tsl_rpc_buf *b, size_t n);

/* A reader over data[0..len) (borrowed). */
typedef struct tsl_rpc_reader {
  const uint8_t *data;
  size_t len, pos;
  bool ok;
} tsl_rpc_reader;

void tsl_rpc_reader_init(tsl_rpc_reader *r, const void *data, size_t len);
/* Reads the header; false (and r->ok false) on a short message, a wrong magic or
 * version. */
bool tsl_rpc_get_header(tsl_rpc_reader *r, uint16_t *type);
uint8_t tsl_rpc_get_u8(tsl_rpc_reader *r);
uint32_t tsl_rpc_get_u32(tsl_rpc_reader *r);
uint64_t tsl_rpc_get_u64(tsl_rpc_reader *r);
double tsl_rpc_get_f64(tsl_rpc_reader *r);
/* Copies a string into out (n bytes, NUL-terminated); a string that does not fit, or
 * longer than TSL_RPC_MAX_STR, fails the reader. */
void tsl_rpc_get_str(tsl_rpc_reader *r, char *out, size_t n);
/* A blob: *p points into the message (not copied); returns its length. */
size_t tsl_rpc_get_blob(tsl_rpc_reader *r, const void **p);

/* FNV-1a, 64 bit, of n bytes: the output checksum of MEASURE_OK. */
uint64_t tsl_rpc_fnv1a64(const void *p, size_t n);

/* Constant-time string equality (key checks): the time depends on the lengths only. */
bool tsl_rpc_key_equal(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
