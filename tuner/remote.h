/* Remote measurement: the client of tessel-rpc-server (device/rpc_server.c, protocol in
 * docs/rpc.md), TVM's RPC roles (server on the board with a key, client in the tuner).
 * The host builds each candidate for the device's target ahead of time
 * (tsl_aot_compile), uploads the shared object, the server runs it on the inputs the
 * host sends, in a forked child under a timeout, and returns the costs and the outputs,
 * which the host checks against its own reference.
 *
 * Transport: nng req/rep over TCP (one req socket per server). A request waits for its
 * reply up to a deadline; a connection that drops while waiting (server killed,
 * crashed, network gone) ends the wait at once with TSL_ERR_IO naming the device: the
 * tuner stops there and keeps every record already written (resume from them later).
 *
 * Timings under qemu-aarch64 are qemu's, not a board's: correct results, meaningless
 * costs.
 */
#ifndef TESSEL_TUNER_REMOTE_H
#define TESSEL_TUNER_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/te.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tessel/tensor.h"
#include "tuner/records.h"
#include "tuner/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One connection to one server. Not thread-safe: one request at a time per connection. */
typedef struct tsl_remote tsl_remote;

/* What the server said about itself at the handshake. */
typedef struct tsl_remote_info {
  char url[256];          /* the address connected to */
  char fingerprint[1024]; /* "arch=aarch64 cpu=cortex-a53 (midr 0x410fd034) cores=2 features=fp,asimd,..." */
  char id[96];            /* "rpc-ARCH-<cores>c-<16 hex digits of the fingerprint's FNV-1a>" */
  char arch[32];          /* "aarch64", "x86_64" */
  int cores;
  uint64_t max_message, max_file, max_buffer; /* the server's caps, bytes */
  double max_timeout_s;                       /* longest measurement the server allows */
} tsl_remote_info;

/* Connects to the server at url ("tcp://HOST:PORT") and does the handshake with key.
 * timeout_s (> 0) bounds the connection and every later request's wait for a reply
 * (measure requests add their own timeout to it).
 * Errors: TSL_ERR_INVALID (NULL or empty url/key, timeout <= 0), TSL_ERR_IO (cannot
 * connect, no reply, the key refused ("remote tcp://...: key refused"), a malformed
 * reply: the message names the url), TSL_ERR_NOMEM. */
tsl_status tsl_remote_connect(const char *url, const char *key, double timeout_s, tsl_remote **out);

/* The handshake's answer (owned by r). */
const tsl_remote_info *tsl_remote_get_info(const tsl_remote *r);

/* Closes the connection (the server drops its uploads when it stops; see FREE). */
void tsl_remote_close(tsl_remote *r);

/* Sends a shared object of n bytes; *handle names it in measure requests. The client
 * refuses, before sending, an object over the server's file cap or a message over its
 * message cap. Errors: TSL_ERR_INVALID (over a cap: the message says which), TSL_ERR_IO
 * (transport, or the server refused: its message), TSL_ERR_NOMEM. */
tsl_status tsl_remote_upload(tsl_remote *r, const void *so, size_t n, uint32_t *handle);

/* tsl_remote_upload of a file's bytes. Errors: those, and TSL_ERR_IO for the file. */
tsl_status tsl_remote_upload_file(tsl_remote *r, const char *path, uint32_t *handle);

/* Drops an uploaded object on the server. Errors: TSL_ERR_IO. */
tsl_status tsl_remote_free_module(tsl_remote *r, uint32_t handle);

/* One kernel argument of a measure request. */
typedef struct tsl_remote_arg {
  int kind;        /* tsl_rpc_arg_kind (device/rpc_proto.h): 0 input, 1 output, 2 i32, 3 i64 */
  tsl_dtype dtype; /* buffers: element type (f32 outputs are NaN-poisoned on the server) */
  int ndim;        /* buffers: 0..8 */
  int64_t shape[8];
  const void *data; /* inputs: numel * element bytes, borrowed */
  int64_t scalar;   /* i32/i64 */
} tsl_remote_arg;

typedef struct tsl_remote_measure_opts {
  tsl_time_opts time; /* number, repeat (0 = run once, no timing; <= 32), min_repeat_ms */
  double timeout_s;   /* the server's limit for this measurement (capped by its own) */
  int threads;        /* thread-pool threads on the device; 0 = its cores */
  bool want_outputs;  /* return every output's bytes (else only their checksums) */
} tsl_remote_measure_opts;

/* The server's answer to one measurement. */
typedef struct tsl_remote_result {
  int status;      /* tsl_rpc_status: 0 ok, 1 load failed, 2 run failed, 3 crashed, 4 timeout */
  char msg[256];   /* why, when status != 0 */
  int ncosts;
  double costs[32]; /* seconds per call */
  int nout;         /* outputs returned (0 when the kernel did not complete a run) */
  uint64_t checksums[16]; /* FNV-1a 64 of each output's bytes */
  void *outputs[16];      /* malloc'd copies when want_outputs (free with tsl_remote_result_clear) */
  size_t output_bytes[16];
} tsl_remote_result;

/* Runs kernel `kernel` of uploaded object `handle` on args[0..nargs) (nargs <= 16).
 * A candidate's failure is res->status, not an error. Errors: TSL_ERR_INVALID (bad
 * arguments, or a request over the server's message cap), TSL_ERR_IO (transport: lost
 * connection or no reply in timeout + the connect timeout, or the server refused the
 * request: its message), TSL_ERR_NOMEM. */
tsl_status tsl_remote_measure(tsl_remote *r, uint32_t handle, const char *kernel, const tsl_remote_arg *args,
                              int nargs, const tsl_remote_measure_opts *o, tsl_remote_result *res);

/* Frees the outputs of res and zeroes it. */
void tsl_remote_result_clear(tsl_remote_result *res);

/* ---- the tuner's use ------------------------------------------------------------ */

/* Prepares tuning target t on the device(s) m->device ("tcp://H:P", or a pool
 * "tcp://a:P,tcp://b:Q" of identical devices) with key m->key (NULL: the environment's
 * TSL_RPC_KEY): connects to each (kept open for the process, shared by every runner),
 * checks that the pool's fingerprints are equal (else TSL_ERR_INVALID naming both) and
 * that the device runs t's architecture, and sets t->device to the
 * device's fingerprint id so records are keyed by target and device (armv8 records of
 * a board never mix with host records or another board's). m->key is set when it came
 * from the environment. Errors: TSL_ERR_INVALID (no key), TSL_ERR_UNSUPPORTED (the
 * device's architecture is not t's, or t enables dotprod/fullfp16/sve/lse and the
 * device's features lack it: the message names it), those of tsl_remote_connect. */
tsl_status tsl_remote_prepare(tsl_target *t, tsl_measure_opts *m);

/* The fingerprint of a device prepared above as record device info (cpu, cores, isa);
 * false when it is not connected. */
bool tsl_remote_device_info(const char *device, tsl_device_info *out);

/* What the runner calls for a remote measurement (runner.h), on the first device of a
 * pool: in a forked worker under
 * o->build_timeout_s, applies config c of tpl to program p, lowers it for t and
 * compiles it with tsl_aot_compile into a private temporary folder; then uploads the
 * object, measures it on inputs[0..nin) with the server's timeout o->run_timeout_s,
 * compares every output with refs[0..nout) as the local runner does (|out - ref| <=
 * rtol * max(1, max |ref|)) and fills res (costs, or the error record's fields).
 * Errors (not candidate failures): TSL_ERR_IO naming the device when the connection is
 * lost or was never prepared, TSL_ERR_RUNTIME (fork/pipe/temporary folder),
 * TSL_ERR_NOMEM. */
tsl_status tsl_remote_measure_candidate(const tsl_target *t, const tsl_te_program *p, tsl_tensor *const *inputs,
                                        int nin, tsl_tensor *const *refs, int nout, const tsl_measure_opts *o,
                                        const tsl_template *tpl, const tsl_config_space *s, const tsl_config *c,
                                        tsl_measure_result *res);

/* Measures cs[0..n) as tsl_remote_measure_candidate does, on a pool o->device =
 * "tcp://a:P,tcp://b:Q,..." (one device is a pool of one): one thread per device, each
 * measuring the next unmeasured candidate (TVM's tracker pool, without the tracker),
 * res[i] the result of cs[i]. Errors: those of tsl_remote_measure_candidate (the first
 * device lost, named; then no res[] is valid), TSL_ERR_INVALID (a bad device list). */
tsl_status tsl_remote_measure_candidates(const tsl_target *t, const tsl_te_program *p, tsl_tensor *const *inputs,
                                         int nin, tsl_tensor *const *refs, int nout, const tsl_measure_opts *o,
                                         const tsl_template *tpl, const tsl_config_space *s, const tsl_config *cs,
                                         int n, tsl_measure_result *res);

#ifdef __cplusplus
}
#endif
#endif
