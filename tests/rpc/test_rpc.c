/* The rpc suite: tessel-rpc-server (AArch64, under qemu-aarch64) and its client
 * (tuner/remote.h), over a free loopback port. Kernels measured remotely are checked
 * against the naive references of tests/ref; the crash/hang objects are written here in
 * C and compiled with the cross compiler, so the server's isolation is tested apart
 * from tessel's code generator. qemu's timings are not a board's: only their presence
 * and sign are checked. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "codegen/aot.h"
#include "device/rpc_proto.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "ref/ref_ops.h"
#include "rpc_tests.h"
#include "rpc/rpc_paths.h"
#include "runtime/module.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tuner/records.h"
#include "tuner/remote.h"

#define KEY "test-key-7f3a"

static char scratch[64];

typedef struct server {
  pid_t pid;
  char url[128];
} server;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool have_server(void) {
  if (!TSL_RPC_SERVER_AARCH64[0]) {
    fprintf(stderr, "\nrpc: no AArch64 tessel-rpc-server: run cross/fetch-arm64-deps.sh, then rebuild\n");
    return false;
  }
  if (access(TSL_RPC_SERVER_AARCH64, X_OK) != 0) {
    fprintf(stderr, "\nrpc: %s is not built (ninja builds it by default)\n", TSL_RPC_SERVER_AARCH64);
    return false;
  }
  return true;
}

/* Starts the server under qemu on a free port with `extra` options (NULL-terminated);
 * false when it did not announce its address within 30 s. */
static bool server_start_cpu(server *s, const char *cpu, const char *const *extra, const char *log) {
  memset(s, 0, sizeof *s);
  s->pid = -1;
  int fds[2];
  if (pipe(fds) != 0) return false;
  const char *argv[32] = {"qemu-aarch64", "-cpu", cpu, "-L", "/usr/aarch64-linux-gnu",
                          TSL_RPC_SERVER_AARCH64, "--key", KEY, "--port", "0", "--tmpdir", scratch};
  int n = 12;
  for (int i = 0; extra && extra[i] && n < 31; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    int err = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600) : open("/dev/null", O_WRONLY);
    if (err >= 0) dup2(err, 2);
    close(fds[0]);
    close(fds[1]);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return false;
  }
  s->pid = pid;
  char buf[1024];
  size_t len = 0;
  double deadline = now_s() + 30;
  bool ok = false;
  while (!ok && now_s() < deadline && len < sizeof buf - 1) {
    struct pollfd p = {fds[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t r = read(fds[0], buf + len, sizeof buf - 1 - len);
    if (r <= 0) break;
    len += (size_t)r;
    buf[len] = '\0';
    const char *at = strstr(buf, "listening on ");
    const char *nl = at ? strchr(at, '\n') : NULL;
    if (nl) {
      snprintf(s->url, sizeof s->url, "%.*s", (int)(nl - at - 13), at + 13);
      ok = true;
    }
  }
  close(fds[0]); /* later output goes to a closed pipe: the server ignores SIGPIPE */
  return ok;
}

static bool server_start(server *s, const char *const *extra) {
  return server_start_cpu(s, "cortex-a53", extra, NULL);
}

static void server_stop(server *s, int sig) {
  if (s->pid <= 0) return;
  kill(s->pid, sig);
  int st;
  double deadline = now_s() + 10;
  while (waitpid(s->pid, &st, WNOHANG) == 0) {
    if (now_s() > deadline) {
      kill(s->pid, SIGKILL);
      waitpid(s->pid, &st, 0);
      break;
    }
    usleep(20000);
  }
  s->pid = -1;
}

/* The suite's shared server. */
static server shared;

static int suite_init(void) {
  snprintf(scratch, sizeof scratch, "/tmp/tessel-rpc-test-XXXXXX");
  if (!mkdtemp(scratch)) return 1;
  if (!have_server()) return 0; /* the tests fail, saying why */
  const char *extra[] = {"--timeout", "20", "--max-message-mib", "1", "--max-file-mib", "0.5", NULL};
  server_start(&shared, extra);
  return 0;
}

static int suite_cleanup(void) {
  server_stop(&shared, SIGTERM);
  if (getenv("TSL_RPC_TEST_KEEP")) { /* debugging: keep the logs, records and objects */
    fprintf(stderr, "\nrpc: kept %s\n", scratch);
    return 0;
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", scratch);
  return system(cmd) == 0 ? 0 : 1;
}

#define NEED_SERVER()                                                                                                 \
  do {                                                                                                                \
    CU_ASSERT_FATAL(have_server());                                                                                   \
    CU_ASSERT_FATAL(shared.url[0] != '\0');                                                                           \
  } while (0)

/* ---- the wire format (no server) ------------------------------------------------ */

static void test_rpc_proto_roundtrip_and_truncated_or_overlong_fields_rejected(void) {
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_MEASURE);
  tsl_rpc_put_str(&b, "k");
  tsl_rpc_put_u32(&b, 0xdeadbeefu);
  tsl_rpc_put_f64(&b, -2.5);
  tsl_rpc_put_blob(&b, "abc", 3);
  CU_ASSERT_FATAL(b.ok);
  /* little-endian on the wire whatever the host: magic bytes "TRPC" */
  CU_ASSERT_EQUAL(memcmp(b.data, "TRPC", 4), 0);
  CU_ASSERT_EQUAL(b.len, 8u + 4 + 1 + 4 + 8 + 8 + 3);
  tsl_rpc_reader r;
  tsl_rpc_reader_init(&r, b.data, b.len);
  uint16_t type = 0;
  char s[8];
  const void *p = NULL;
  CU_ASSERT(tsl_rpc_get_header(&r, &type));
  CU_ASSERT_EQUAL(type, TSL_RPC_MEASURE);
  tsl_rpc_get_str(&r, s, sizeof s);
  CU_ASSERT_STRING_EQUAL(s, "k");
  CU_ASSERT_EQUAL(tsl_rpc_get_u32(&r), 0xdeadbeefu);
  CU_ASSERT_EQUAL(tsl_rpc_get_f64(&r), -2.5);
  CU_ASSERT_EQUAL(tsl_rpc_get_blob(&r, &p), 3u);
  CU_ASSERT(r.ok && memcmp(p, "abc", 3) == 0 && r.pos == b.len);
  /* one byte short: the blob fails, and the failure latches */
  tsl_rpc_reader_init(&r, b.data, b.len - 1);
  tsl_rpc_get_header(&r, &type);
  tsl_rpc_get_str(&r, s, sizeof s);
  tsl_rpc_get_u32(&r);
  tsl_rpc_get_f64(&r);
  CU_ASSERT_EQUAL(tsl_rpc_get_blob(&r, &p), 0u);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_FALSE(r.ok);
  CU_ASSERT_EQUAL(tsl_rpc_get_u32(&r), 0u);
  /* a string longer than the caller's buffer fails instead of truncating */
  tsl_rpc_reader_init(&r, b.data, b.len);
  tsl_rpc_get_header(&r, &type);
  tsl_rpc_get_str(&r, s, 1);
  CU_ASSERT_FALSE(r.ok);
  /* a wrong version is not a message */
  b.data[4] = 9;
  tsl_rpc_reader_init(&r, b.data, b.len);
  CU_ASSERT_FALSE(tsl_rpc_get_header(&r, &type));
  tsl_rpc_buf_free(&b);
  /* FNV-1a 64 of "a" (published test vector) and the key comparison */
  CU_ASSERT_EQUAL(tsl_rpc_fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  CU_ASSERT(tsl_rpc_key_equal("secret", "secret"));
  CU_ASSERT_FALSE(tsl_rpc_key_equal("secret", "secreT"));
  CU_ASSERT_FALSE(tsl_rpc_key_equal("secret", "secret2"));
  CU_ASSERT_FALSE(tsl_rpc_key_equal("", NULL));
}

/* ---- handshake, key, caps ------------------------------------------------------- */

static void test_rpc_handshake_reports_device_fingerprint(void) {
  NEED_SERVER();
  tsl_remote *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  const tsl_remote_info *in = tsl_remote_get_info(r);
  CU_ASSERT_STRING_EQUAL(in->arch, "aarch64");
  CU_ASSERT_PTR_NOT_NULL(strstr(in->fingerprint, "cortex-a53")); /* qemu -cpu cortex-a53: MIDR part 0xd03 */
  CU_ASSERT_PTR_NOT_NULL(strstr(in->fingerprint, "asimd"));
  CU_ASSERT_EQUAL(strncmp(in->id, "rpc-aarch64-", 12), 0);
  CU_ASSERT_EQUAL(in->max_message, 1048576u);
  CU_ASSERT_EQUAL(in->max_file, 524288u);
  CU_ASSERT(in->cores >= 1);
  tsl_remote_close(r);
}

static void test_rpc_wrong_key_refused(void) {
  NEED_SERVER();
  tsl_remote *r = NULL;
  CU_ASSERT_EQUAL(tsl_remote_connect(shared.url, "not-the-key", 20, &r), TSL_ERR_IO);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "key refused"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), shared.url));
  CU_ASSERT_EQUAL(tsl_remote_connect(shared.url, "", 20, &r), TSL_ERR_INVALID); /* no key: not even sent */
  /* the server still serves the right key */
  CU_ASSERT_EQUAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  tsl_remote_close(r);
}

/* Sends raw bytes on a fresh req socket; returns the reply (caller frees) or NULL when
 * none came within wait_ms. */
static nng_msg *raw_request(const char *url, const void *data, size_t len, int wait_ms) {
  nng_socket s;
  if (nng_req0_open(&s) != 0) return NULL;
  nng_msg *rep = NULL;
  nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, wait_ms);
  nng_socket_set_ms(s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
  if (nng_dial(s, url, NULL, 0) == 0 && nng_send(s, (void *)(uintptr_t)data, len, 0) == 0) {
    if (nng_recvmsg(s, &rep, 0) != 0) rep = NULL;
  }
  nng_close(s);
  return rep;
}

static uint32_t error_code_of(nng_msg *m) {
  tsl_rpc_reader r;
  tsl_rpc_reader_init(&r, nng_msg_body(m), nng_msg_len(m));
  uint16_t type = 0;
  tsl_rpc_get_header(&r, &type);
  if (type != TSL_RPC_ERROR) return 0;
  return tsl_rpc_get_u32(&r);
}

static void test_rpc_request_without_key_refused_by_server(void) {
  NEED_SERVER();
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_HELLO);
  tsl_rpc_put_str(&b, "");
  nng_msg *m = raw_request(shared.url, b.data, b.len, 20000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(error_code_of(m), TSL_RPC_E_KEY);
  nng_msg_free(m);
  /* garbage is refused as a bad message, not a crash */
  m = raw_request(shared.url, "hello", 5, 20000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(error_code_of(m), TSL_RPC_E_BAD_MESSAGE);
  nng_msg_free(m);
  tsl_rpc_buf_free(&b);
}

static void test_rpc_oversize_message_and_file_refused(void) {
  NEED_SERVER();
  tsl_remote *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  /* the client refuses a file over the server's cap before sending it */
  size_t big = 600 * 1024;
  char *blob = calloc(1, 2 * 1048576);
  CU_ASSERT_PTR_NOT_NULL_FATAL(blob);
  uint32_t h = 0;
  CU_ASSERT_EQUAL(tsl_remote_upload(r, blob, big, &h), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "cap"));
  /* a raw upload over the file cap (but under the message cap): the server refuses it */
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_UPLOAD);
  tsl_rpc_put_str(&b, KEY);
  tsl_rpc_put_blob(&b, blob, big);
  nng_msg *m = raw_request(shared.url, b.data, b.len, 20000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(error_code_of(m), TSL_RPC_E_TOO_LARGE);
  nng_msg_free(m);
  /* a message over the message cap: nng drops the connection, no reply */
  b.len = 0;
  tsl_rpc_put_header(&b, TSL_RPC_UPLOAD);
  tsl_rpc_put_str(&b, KEY);
  tsl_rpc_put_blob(&b, blob, 2 * 1048576 - 64);
  m = raw_request(shared.url, b.data, b.len, 3000);
  CU_ASSERT_PTR_NULL(m);
  if (m) nng_msg_free(m);
  tsl_rpc_buf_free(&b);
  free(blob);
  tsl_remote_close(r);
  /* and the server keeps serving */
  CU_ASSERT_EQUAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  tsl_remote_close(r);
}

/* ---- measurements -------------------------------------------------------------- */

/* matmul A[M,K] x B[K,N], default schedule, compiled for target into path. */
static bool compile_matmul_for(const char *target, int64_t M, int64_t N, int64_t K, const char *path) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  const int64_t sa[2] = {M, K}, sb[2] = {K, N};
  const int64_t *shapes[2] = {sa, sb};
  const int nd[2] = {2, 2};
  tsl_te_program *p = NULL;
  tsl_schedule *s = NULL;
  tsl_func *f = NULL;
  tsl_target t;
  tsl_lower_options lo = tsl_lower_options_default();
  bool ok = tsl_target_parse(target, &t) == TSL_OK && tsl_op_instantiate("matmul", 2, shapes, nd, 0, NULL, &p) == TSL_OK &&
            tsl_schedule_create(p, &s) == TSL_OK;
  lo.vector_bits = t.vector_bits;
  ok = ok && tsl_lower_with(s, "mm", &lo, &f) == TSL_OK;
  const tsl_func *funcs[1] = {f};
  ok = ok && tsl_aot_compile(funcs, 1, &t, path) == TSL_OK;
  if (!ok) fprintf(stderr, "\nrpc: compile_matmul: %s\n", tsl_last_error());
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  return ok;
}

static bool compile_matmul(int64_t M, int64_t N, int64_t K, const char *path) {
  return compile_matmul_for("armv8", M, N, K, path);
}

static void set_buf(tsl_remote_arg *a, int kind, int64_t d0, int64_t d1, const void *data) {
  memset(a, 0, sizeof *a);
  a->kind = kind;
  a->dtype = TSL_DTYPE_F32;
  a->ndim = 2;
  a->shape[0] = d0;
  a->shape[1] = d1;
  a->data = data;
}

static void test_rpc_measure_armv8_matmul_matches_reference(void) {
  NEED_SERVER();
  enum { M = 24, N = 28, K = 20 };
  char so[128];
  snprintf(so, sizeof so, "%s/mm.so", scratch);
  CU_ASSERT_FATAL(compile_matmul(M, N, K, so));
  tsl_remote *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  uint32_t h = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_upload_file(r, so, &h), TSL_OK);
  static float A[M * K], B[K * N], ref[M * N];
  ref_fill_uniform(A, M * K, 11, -1, 1);
  ref_fill_uniform(B, K * N, 12, -1, 1);
  ref_matmul(M, N, K, A, B, ref);
  tsl_remote_arg args[3];
  set_buf(&args[0], TSL_RPC_ARG_INPUT, M, K, A);
  set_buf(&args[1], TSL_RPC_ARG_INPUT, K, N, B);
  set_buf(&args[2], TSL_RPC_ARG_OUTPUT, M, N, NULL);
  tsl_remote_measure_opts o = {tsl_time_opts_default(), 20, 1, true};
  o.time.repeat = 3;
  o.time.min_repeat_ms = 1;
  tsl_remote_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "mm", args, 3, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_OK);
  CU_ASSERT_EQUAL(res.ncosts, 3);
  for (int i = 0; i < res.ncosts; i++) CU_ASSERT(res.costs[i] > 0 && isfinite(res.costs[i]));
  CU_ASSERT_EQUAL_FATAL(res.nout, 1);
  CU_ASSERT_EQUAL_FATAL(res.output_bytes[0], sizeof ref);
  CU_ASSERT(ref_max_rel_error(res.outputs[0], ref, M * N) < 1e-5);
  CU_ASSERT_EQUAL(res.checksums[0], tsl_rpc_fnv1a64(res.outputs[0], sizeof ref));
  tsl_remote_result_clear(&res);
  /* checksum only: the same output's checksum, no bytes */
  o.want_outputs = false;
  o.time.repeat = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "mm", args, 3, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.nout, 1);
  CU_ASSERT_PTR_NULL(res.outputs[0]);
  CU_ASSERT_EQUAL(res.ncosts, 0);
  uint64_t sum = res.checksums[0];
  tsl_remote_result_clear(&res);
  o.want_outputs = true;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "mm", args, 3, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.checksums[0], sum);
  tsl_remote_result_clear(&res);
  /* a wrong kernel name or argument count is a load failure, not an error */
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "nope", args, 3, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_LOAD_FAILED);
  tsl_remote_result_clear(&res);
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "mm", args, 2, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_LOAD_FAILED);
  CU_ASSERT_PTR_NOT_NULL(strstr(res.msg, "3 arguments"));
  tsl_remote_result_clear(&res);
  /* freed modules are gone */
  CU_ASSERT_EQUAL(tsl_remote_free_module(r, h), TSL_OK);
  CU_ASSERT_EQUAL(tsl_remote_measure(r, h, "mm", args, 3, &o, &res), TSL_ERR_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "no module"));
  tsl_remote_close(r);
}

/* Case 18: a kernel compiled for features the device lacks is refused by name, by the
 * device's loader (a load failure, the server goes on) and up front by the tuner. */
static void test_C18_dotprod_kernel_on_cortex_a53_device_refused_naming_feature(void) {
  NEED_SERVER();
  char so[128];
  snprintf(so, sizeof so, "%s/mm_dotprod.so", scratch);
  CU_ASSERT_FATAL(compile_matmul_for("armv8.2-a+dotprod", 8, 8, 8, so));
  tsl_remote *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  uint32_t h = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_upload_file(r, so, &h), TSL_OK);
  static float A[64], B[64];
  tsl_remote_arg args[3];
  set_buf(&args[0], TSL_RPC_ARG_INPUT, 8, 8, A);
  set_buf(&args[1], TSL_RPC_ARG_INPUT, 8, 8, B);
  set_buf(&args[2], TSL_RPC_ARG_OUTPUT, 8, 8, NULL);
  tsl_remote_measure_opts o = {tsl_time_opts_default(), 20, 1, true};
  tsl_remote_result res;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "mm", args, 3, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_LOAD_FAILED);
  CU_ASSERT_PTR_NOT_NULL(strstr(res.msg, "dotprod"));
  tsl_remote_result_clear(&res);
  tsl_remote_close(r);
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8.2-a+dotprod", &t), TSL_OK);
  tsl_measure_opts m = tsl_measure_opts_default();
  m.device = shared.url;
  m.key = KEY;
  CU_ASSERT_EQUAL(tsl_remote_prepare(&t, &m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "dotprod"));
  CU_ASSERT_STRING_EQUAL(t.device, ""); /* not keyed to a device that cannot run it */
  /* and the host target is not this device's architecture */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_remote_prepare(&t, &m), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "aarch64"));
}

/* An AOT-style object written in C: the kernel table tsl_module_load_so reads (the row
 * layout of runtime/module.h: its argument array is TSL_MAX_KERNEL_ARGS wide, written in
 * by build_fake), with a kernel that hangs, one that crashes and one that writes 1, 2, 3, 4. */
static const char *const fake_src =
    "typedef struct { int nargs; int args[TSL_MAX_KERNEL_ARGS]; } sig;\n"
    "typedef struct { const char *name; void *fn; sig s; } entry;\n"
    "static int hang(float *x) { volatile unsigned n = 0; for (;;) n++; (void)x; return 0; }\n"
    "static int crash(float *x) { (void)x; *(volatile int *)8 = 1; return 0; }\n"
    "static int fill(float *x) { for (int i = 0; i < 4; i++) x[i] = (float)(i + 1); return 0; }\n"
    "const entry tsl_aot_kernels[] = {{\"hang\", (void *)hang, {1, {0}}}, {\"crash\", (void *)crash, {1, {0}}},\n"
    "                                 {\"fill\", (void *)fill, {1, {0}}}};\n"
    "const int tsl_aot_nkernels = 3;\n"
    "const int tsl_aot_abi = TSL_AOT_ABI_VERSION;\n"
    "const char tsl_aot_target[] = \"aarch64 +neon\";\n";

static bool build_fake(char *so, size_t n) {
  char src[128], cmd[512];
  snprintf(src, sizeof src, "%s/fake.c", scratch);
  snprintf(so, n, "%s/fake.so", scratch);
  FILE *f = fopen(src, "w");
  if (!f) return false;
  fputs(fake_src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s -shared -fPIC -O1 -DTSL_MAX_KERNEL_ARGS=%d -DTSL_AOT_ABI_VERSION=%d -o %s %s",
           TSL_RPC_CROSS_CC, TSL_MAX_KERNEL_ARGS, TSL_AOT_ABI_VERSION, so, src);
  return TSL_RPC_CROSS_CC[0] && system(cmd) == 0;
}

static void test_rpc_hanging_and_crashing_candidates_server_keeps_serving(void) {
  NEED_SERVER();
  char so[128];
  CU_ASSERT_FATAL(build_fake(so, sizeof so));
  tsl_remote *r = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_connect(shared.url, KEY, 20, &r), TSL_OK);
  uint32_t h = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_remote_upload_file(r, so, &h), TSL_OK);
  tsl_remote_arg arg;
  memset(&arg, 0, sizeof arg);
  arg.kind = TSL_RPC_ARG_OUTPUT;
  arg.dtype = TSL_DTYPE_F32;
  arg.ndim = 1;
  arg.shape[0] = 4;
  tsl_remote_measure_opts o = {tsl_time_opts_default(), 1.5, 1, true};
  o.time.repeat = 1;
  o.time.min_repeat_ms = 0;
  tsl_remote_result res;
  double t0 = now_s();
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "hang", &arg, 1, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_TIMEOUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(res.msg, "did not finish"));
  CU_ASSERT(now_s() - t0 >= 1.4 && now_s() - t0 < 15);
  tsl_remote_result_clear(&res);
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "crash", &arg, 1, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_CRASHED);
  CU_ASSERT_PTR_NOT_NULL(strstr(res.msg, "signal"));
  CU_ASSERT_EQUAL(res.nout, 0);
  tsl_remote_result_clear(&res);
  /* the same connection and object still measure */
  CU_ASSERT_EQUAL_FATAL(tsl_remote_measure(r, h, "fill", &arg, 1, &o, &res), TSL_OK);
  CU_ASSERT_EQUAL(res.status, TSL_RPC_OK);
  CU_ASSERT_EQUAL_FATAL(res.nout, 1);
  const float want[4] = {1, 2, 3, 4};
  CU_ASSERT_EQUAL(memcmp(res.outputs[0], want, sizeof want), 0);
  tsl_remote_result_clear(&res);
  tsl_remote_close(r);
}

/* ---- tuning through tunecli ---------------------------------------------------- */

/* Runs tunecli tune-op matmul 16x16 on url (a device or a pool) with `trials` into
 * records, stdout and stderr into log; returns its pid (not waited for). */
static pid_t tune_start(const char *url, const char *trials, const char *records, const char *log) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execl(TSL_TUNECLI_PATH, TSL_TUNECLI_PATH, "tune-op", "matmul", "--shape", "A=16x16", "--shape", "B=16x16",
          "--target", "armv8", "--device", url, "--key", KEY, "--trials", trials, "--template", "matmul.blis",
          "--records", records, "--no-peak", "--repeat", "2", "--min-repeat-ms", "1", "--batch", "2", (char *)NULL);
    _exit(127);
  }
  return pid;
}

static int wait_exit(pid_t pid, double timeout_s) {
  int st = 0;
  double deadline = now_s() + timeout_s;
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (now_s() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    usleep(50000);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int n = 0, c;
  while ((c = fgetc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

static bool file_has(const char *path, const char *text) {
  char buf[16384];
  FILE *f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, text) != NULL;
}

static void test_rpc_tune_armv8_writes_armv8_records(void) {
  NEED_SERVER();
  char records[128], log[128];
  snprintf(records, sizeof records, "%s/tune.jsonl", scratch);
  snprintf(log, sizeof log, "%s/tune.log", scratch);
  int rc = wait_exit(tune_start(shared.url, "2", records, log), 240);
  CU_ASSERT_EQUAL(rc, 0);
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, records, true, stderr), TSL_OK);
  CU_ASSERT_EQUAL(db->skipped, 0);
  CU_ASSERT_EQUAL(db->n, 2);
  int ok = 0;
  for (int i = 0; i < db->n; i++) {
    const tsl_record *rec = &db->recs[i];
    CU_ASSERT_EQUAL(strncmp(rec->target, "armv8 -device=rpc-aarch64-", 26), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(rec->device.cpu, "cortex-a53"));
    if (rec->error_no == TSL_MEASURE_OK) {
      ok++;
      CU_ASSERT(rec->ncosts == 2 && rec->costs[0] > 0);
    }
  }
  CU_ASSERT(ok >= 1);
  /* armv8 records are never the host's: the family lookup of "host" finds none */
  char fam[192];
  CU_ASSERT_STRING_EQUAL(tsl_target_family(db->recs[0].target, fam, sizeof fam), "armv8");
  tsl_records_free(db);
}

static void test_rpc_server_killed_mid_tuning_clear_error_records_intact(void) {
  CU_ASSERT_FATAL(have_server());
  server s;
  CU_ASSERT_FATAL(server_start(&s, NULL));
  char records[128], log[128];
  snprintf(records, sizeof records, "%s/killed.jsonl", scratch);
  snprintf(log, sizeof log, "%s/killed.log", scratch);
  pid_t tune = tune_start(s.url, "40", records, log);
  double deadline = now_s() + 180;
  while (count_lines(records) < 2 && now_s() < deadline) usleep(50000);
  int before = count_lines(records);
  CU_ASSERT_FATAL(before >= 2);
  server_stop(&s, SIGKILL);
  int rc = wait_exit(tune, 120);
  CU_ASSERT(rc == 1);
  CU_ASSERT(file_has(log, "connection lost"));
  CU_ASSERT(file_has(log, s.url));
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, records, true, stderr), TSL_OK);
  CU_ASSERT_EQUAL(db->skipped, 0); /* no torn line */
  CU_ASSERT(db->n >= before);
  int n_before = db->n;
  for (int i = 0; i < db->n; i++) CU_ASSERT_PTR_NULL(strstr(db->recs[i].error_msg, "connection lost")); /* none recorded */
  tsl_records_free(db);
  /* restart (another port, the same device): tuning resumes from the records, measuring
   * only the one trial over what they hold */
  CU_ASSERT_FATAL(server_start(&s, NULL));
  char trials[16];
  snprintf(trials, sizeof trials, "%d", n_before + 1);
  snprintf(log, sizeof log, "%s/resumed.log", scratch);
  rc = wait_exit(tune_start(s.url, trials, records, log), 240);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(count_lines(records), n_before + 1);
  server_stop(&s, SIGTERM);
}

static void test_rpc_pool_of_two_servers_tunes_and_mixed_pool_refused(void) {
  CU_ASSERT_FATAL(have_server());
  server a, b, c;
  char pool[300], records[128], log[128], log_a[128], log_b[128];
  snprintf(log_a, sizeof log_a, "%s/pool_a.log", scratch);
  snprintf(log_b, sizeof log_b, "%s/pool_b.log", scratch);
  const char *verbose[] = {"--verbose", "1", NULL};
  CU_ASSERT_FATAL(server_start_cpu(&a, "cortex-a53", verbose, log_a));
  CU_ASSERT_FATAL(server_start_cpu(&b, "cortex-a53", verbose, log_b));
  snprintf(pool, sizeof pool, "%s,%s", a.url, b.url);
  snprintf(records, sizeof records, "%s/pool.jsonl", scratch);
  snprintf(log, sizeof log, "%s/pool.log", scratch);
  int rc = wait_exit(tune_start(pool, "5", records, log), 240);
  CU_ASSERT_EQUAL(rc, 0);
  tsl_records *db = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_records_new(&db), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_records_load(db, records, true, stderr), TSL_OK);
  CU_ASSERT_EQUAL(db->n, 5);
  int ok = 0;
  for (int i = 0; i < db->n; i++) {
    CU_ASSERT_EQUAL(strncmp(db->recs[i].target, "armv8 -device=rpc-aarch64-", 26), 0);
    ok += db->recs[i].error_no == TSL_MEASURE_OK;
  }
  CU_ASSERT(ok >= 4);
  tsl_records_free(db);
  /* the batch (4 candidates after the default config) went to both devices */
  CU_ASSERT(file_has(log_a, "measure m"));
  CU_ASSERT(file_has(log_b, "measure m"));
  /* a pool with another kind of device (qemu's "max" CPU has dotprod, SVE...) */
  CU_ASSERT_FATAL(server_start_cpu(&c, "max", NULL, NULL));
  snprintf(pool, sizeof pool, "%s,%s", a.url, c.url);
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  tsl_measure_opts m = tsl_measure_opts_default();
  m.device = pool;
  m.key = KEY;
  CU_ASSERT_EQUAL(tsl_remote_prepare(&t, &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "differ"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), c.url));
  server_stop(&a, SIGTERM);
  server_stop(&b, SIGTERM);
  server_stop(&c, SIGTERM);
}

void tsl_tests_rpc(void) {
  CU_pSuite s = CU_add_suite("rpc", suite_init, suite_cleanup);
  CU_add_test(s, "test_rpc_proto_roundtrip_and_truncated_or_overlong_fields_rejected",
              test_rpc_proto_roundtrip_and_truncated_or_overlong_fields_rejected);
  CU_add_test(s, "test_rpc_handshake_reports_device_fingerprint", test_rpc_handshake_reports_device_fingerprint);
  CU_add_test(s, "test_rpc_wrong_key_refused", test_rpc_wrong_key_refused);
  CU_add_test(s, "test_rpc_request_without_key_refused_by_server", test_rpc_request_without_key_refused_by_server);
  CU_add_test(s, "test_rpc_oversize_message_and_file_refused", test_rpc_oversize_message_and_file_refused);
  CU_add_test(s, "test_rpc_measure_armv8_matmul_matches_reference", test_rpc_measure_armv8_matmul_matches_reference);
  CU_add_test(s, "test_C18_dotprod_kernel_on_cortex_a53_device_refused_naming_feature",
              test_C18_dotprod_kernel_on_cortex_a53_device_refused_naming_feature);
  CU_add_test(s, "test_rpc_hanging_and_crashing_candidates_server_keeps_serving",
              test_rpc_hanging_and_crashing_candidates_server_keeps_serving);
  CU_add_test(s, "test_rpc_tune_armv8_writes_armv8_records", test_rpc_tune_armv8_writes_armv8_records);
  CU_add_test(s, "test_rpc_server_killed_mid_tuning_clear_error_records_intact",
              test_rpc_server_killed_mid_tuning_clear_error_records_intact);
  CU_add_test(s, "test_rpc_pool_of_two_servers_tunes_and_mixed_pool_refused",
              test_rpc_pool_of_two_servers_tunes_and_mixed_pool_refused);
  tsl_tests_rpc_request();
}
