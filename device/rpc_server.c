/* tessel-rpc-server: the device side of remote tuning (docs/rpc.md). Runs on the board
 * (here: an AArch64 build under qemu-aarch64), answers nng req/rep requests from a tuner:
 * the device fingerprint, uploads of kernel shared objects (made by tsl_aot_compile) and
 * measurements of a kernel on given inputs, each in a forked child under a timeout, so a
 * crashing or hanging candidate costs one error reply, never the server.
 *
 *   tessel-rpc-server --key KEY [--host 127.0.0.1] [--port 9190] [--timeout S]
 *                     [--max-message-mib N] [--max-file-mib N] [--max-buffer-mib N]
 *                     [--max-threads N] [--tmpdir DIR] [--verbose 1]
 *
 * Safety: listens on loopback unless --host says otherwise; every request must carry
 * the key (compared in constant time); nng drops a connection that sends a message over
 * the message cap, and the server refuses files and buffers over their caps; uploaded
 * objects go only into one mkdtemp folder of the server's, removed with its files on
 * SIGINT/SIGTERM or when the listener dies (the handler process below sees the socket
 * close; killing both leaves it behind). --port 0 takes a free port; the
 * first line on stdout names the address: "tessel-rpc-server: listening on tcp://H:P".
 * Processes: the listener (nng, threads) forwards each request over a socketpair to a
 * handler process forked before nng started, which owns the folder and forks one child
 * per measurement; so measuring children descend from a single-threaded process.
 * Exit status: 0 after SIGINT/SIGTERM, 1 setup failure (or the handler died), 2 usage
 * error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "device/rpc_proto.h"
#include "device/rpc_request.h"
#include "runtime/module.h"
#include "runtime/parallel.h"
#include "tessel/runtime.h"
#include "tessel/tensor.h"

/* Keeps the runtime's entry points in the executable for the loaded objects. */
void *const tsl_device_exports[] = {(void *)tsl_parallel_for, (void *)tsl_kernel_alloc, (void *)tsl_kernel_free};

enum { MAX_MODULES = 8 };

typedef struct server {
  const char *key;
  double max_timeout_s;
  uint64_t max_message, max_file, max_buffer;
  int max_threads;
  bool verbose; /* one stderr line per measurement */
  char dir[PATH_MAX];
  uint32_t next_handle;
  uint32_t handles[MAX_MODULES]; /* 0 = free slot */
  uint64_t ages[MAX_MODULES];
  uint64_t clock;
  char fingerprint[1024], fp_id[96];
  int cores;
} server;

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* ---- fingerprint ----------------------------------------------------------------- */

#if defined(__aarch64__) /* MIDR_EL1 is read on AArch64 only */
static const char *arm_part_name(unsigned implementer, unsigned part) {
  static const struct {
    unsigned part;
    const char *name;
  } arm[] = {{0xd03, "cortex-a53"}, {0xd04, "cortex-a35"}, {0xd05, "cortex-a55"}, {0xd07, "cortex-a57"},
             {0xd08, "cortex-a72"}, {0xd09, "cortex-a73"}, {0xd0a, "cortex-a75"}, {0xd0b, "cortex-a76"},
             {0xd0c, "neoverse-n1"}, {0xd0d, "cortex-a77"}, {0xd41, "cortex-a78"}, {0xd44, "cortex-x1"},
             {0xd46, "cortex-a510"}, {0xd47, "cortex-a710"}, {0xd48, "cortex-x2"}, {0xd49, "neoverse-n2"}};
  if (implementer != 0x41) return NULL;
  for (size_t i = 0; i < sizeof arm / sizeof arm[0]; i++)
    if (arm[i].part == part) return arm[i].name;
  return NULL;
}
#endif

static void make_fingerprint(server *s) {
  struct utsname u;
  const char *arch = uname(&u) == 0 ? u.machine : "unknown";
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  s->cores = n > 0 ? (int)n : 1;
  char cpu[64] = "unknown", feats[512] = "";
#if defined(__aarch64__)
  static const char *const names[] = {"fp",    "asimd", "evtstrm", "aes",   "pmull",   "sha1",   "sha2",  "crc32",
                                      "atomics", "fphp", "asimdhp", "cpuid", "asimdrdm", "jscvt", "fcma",  "lrcpc",
                                      "dcpop", "sha3",  "sm3",     "sm4",   "asimddp", "sha512", "sve"};
  unsigned long hw = getauxval(AT_HWCAP);
  size_t len = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (hw & (1ul << i)) {
      int k = snprintf(feats + len, sizeof feats - len, "%s%s", len ? "," : "", names[i]);
      if (k > 0 && (size_t)k < sizeof feats - len) len += (size_t)k;
    }
  if (hw & (1ul << 11)) { /* HWCAP_CPUID: the kernel (or qemu) emulates MIDR_EL1 reads */
    uint64_t midr = 0;
    __asm__ volatile("mrs %0, midr_el1" : "=r"(midr));
    unsigned impl = (unsigned)(midr >> 24) & 0xff, part = (unsigned)(midr >> 4) & 0xfff;
    const char *pn = arm_part_name(impl, part);
    if (pn) snprintf(cpu, sizeof cpu, "%s (midr 0x%08llx)", pn, (unsigned long long)midr);
    else snprintf(cpu, sizeof cpu, "midr 0x%08llx", (unsigned long long)midr);
  }
#endif
  snprintf(s->fingerprint, sizeof s->fingerprint, "arch=%s cpu=%s cores=%d features=%s", arch, cpu, s->cores,
           feats[0] ? feats : "unknown");
  snprintf(s->fp_id, sizeof s->fp_id, "rpc-%s-%dc-%016llx", arch, s->cores,
           (unsigned long long)tsl_rpc_fnv1a64(s->fingerprint, strlen(s->fingerprint)));
}

/* ---- replies ------------------------------------------------------------------- */

static void reply_error(tsl_rpc_buf *out, uint32_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reply_error(tsl_rpc_buf *out, uint32_t code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  out->len = 0;
  tsl_rpc_put_header(out, TSL_RPC_ERROR);
  tsl_rpc_put_u32(out, code);
  tsl_rpc_put_str(out, msg);
}

static void module_path(const server *s, uint32_t handle, char *buf, size_t n) {
  snprintf(buf, n, "%s/m%u.so", s->dir, handle);
}

static int find_module(const server *s, uint32_t handle) {
  for (int i = 0; i < MAX_MODULES; i++)
    if (handle && s->handles[i] == handle) return i;
  return -1;
}

static void drop_module(server *s, int slot) {
  char path[PATH_MAX + 32];
  module_path(s, s->handles[slot], path, sizeof path);
  unlink(path);
  s->handles[slot] = 0;
}

static void do_upload(server *s, const tsl_rpc_request *req, tsl_rpc_buf *out) {
  const void *so = req->so;
  size_t n = req->so_bytes;
  if (n > s->max_file)
    return reply_error(out, TSL_RPC_E_TOO_LARGE, "upload: file of %zu bytes over the cap of %llu bytes", n,
                       (unsigned long long)s->max_file);
  int slot = -1;
  for (int i = 0; i < MAX_MODULES && slot < 0; i++)
    if (!s->handles[i]) slot = i;
  if (slot < 0) { /* evict the oldest upload: the tuner measures a module right after sending it */
    slot = 0;
    for (int i = 1; i < MAX_MODULES; i++)
      if (s->ages[i] < s->ages[slot]) slot = i;
    drop_module(s, slot);
  }
  uint32_t handle = ++s->next_handle;
  if (handle == 0) handle = ++s->next_handle;
  char path[PATH_MAX + 32];
  module_path(s, handle, path, sizeof path);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return reply_error(out, TSL_RPC_E_SERVER, "upload: %s: %s", path, strerror(errno));
  const char *p = so;
  size_t left = n;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    p += w;
    left -= (size_t)w;
  }
  int err = left ? errno : 0;
  if (close(fd) != 0 && !err) err = errno;
  if (left || err) {
    unlink(path);
    return reply_error(out, TSL_RPC_E_SERVER, "upload: writing %s: %s", path, strerror(err ? err : EIO));
  }
  s->handles[slot] = handle;
  s->ages[slot] = ++s->clock;
  tsl_rpc_put_header(out, TSL_RPC_UPLOAD_OK);
  tsl_rpc_put_u32(out, handle);
}

/* ---- measurement ------------------------------------------------------------------ */

/* A decoded argument (rpc_request.h) and, for buffers, the memory the kernel gets. */
typedef struct marg {
  uint8_t kind, code, bits;
  size_t bytes;
  const void *data;
  int64_t scalar;
  void *buf;
} marg;

/* The child's report through the pipe: phase 1 after the checked run (outputs copied
 * out), phase 2 the result. One atomic write (<= PIPE_BUF). */
typedef struct child_msg {
  int phase, status, ncosts;
  double costs[TSL_RPC_MAX_COSTS];
  char msg[256];
} child_msg;
_Static_assert(sizeof(child_msg) <= PIPE_BUF, "child message must be written atomically");

static void child_send(int fd, const child_msg *m) {
  ssize_t w;
  do w = write(fd, m, sizeof *m);
  while (w < 0 && errno == EINTR);
}

static void child_fail(int fd, int status, const char *what) {
  child_msg m = {.phase = 2, .status = status};
  snprintf(m.msg, sizeof m.msg, "%s: %s", what, tsl_last_error());
  child_send(fd, &m);
  _exit(0);
}

static void child_run(int fd, const char *path, const char *kernel, marg *args, int nargs, int threads,
                      const tsl_time_opts *to, uint8_t *shared) {
  if (threads > 0) tsl_set_num_threads(threads);
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  if (tsl_module_load_so(path, &m) != TSL_OK) child_fail(fd, TSL_RPC_LOAD_FAILED, "load");
  if (tsl_module_get_kernel(m, kernel, &k) != TSL_OK) child_fail(fd, TSL_RPC_LOAD_FAILED, "kernel");
  const tsl_kernel_sig *sig = tsl_kernel_signature(k);
  child_msg res = {.phase = 2};
  if (sig->nargs != nargs) {
    res.status = TSL_RPC_LOAD_FAILED;
    snprintf(res.msg, sizeof res.msg, "kernel %.128s takes %d arguments, the request gives %d", kernel, sig->nargs, nargs);
    child_send(fd, &res);
    _exit(0);
  }
  void *values[TSL_RPC_MAX_ARGS];
  for (int i = 0; i < nargs; i++) {
    tsl_arg_type want = args[i].kind == TSL_RPC_ARG_I32 ? TSL_ARG_I32 : args[i].kind == TSL_RPC_ARG_I64 ? TSL_ARG_I64
                                                                                                     : TSL_ARG_PTR;
    if (sig->args[i] != want) {
      res.status = TSL_RPC_LOAD_FAILED;
      snprintf(res.msg, sizeof res.msg, "kernel %.128s argument %d is %s, the request gives %s", kernel, i,
               tsl_arg_type_str(sig->args[i]), tsl_arg_type_str(want));
      child_send(fd, &res);
      _exit(0);
    }
    values[i] = want == TSL_ARG_PTR ? (void *)&args[i].buf : (void *)&args[i].scalar;
  }
  int32_t i32s[TSL_RPC_MAX_ARGS];
  for (int i = 0; i < nargs; i++)
    if (args[i].kind == TSL_RPC_ARG_I32) {
      i32s[i] = (int32_t)args[i].scalar;
      values[i] = &i32s[i];
    }
  if (tsl_kernel_call(k, values, nargs) != TSL_OK) child_fail(fd, TSL_RPC_RUN_FAILED, "run");
  size_t off = 0;
  for (int i = 0; i < nargs; i++)
    if (args[i].kind == TSL_RPC_ARG_OUTPUT) {
      memcpy(shared + off, args[i].buf, args[i].bytes);
      off += args[i].bytes;
    }
  child_msg ran = {.phase = 1};
  child_send(fd, &ran);
  if (to->repeat > 0) {
    if (tsl_time_kernel(k, values, nargs, to, res.costs) != TSL_OK) child_fail(fd, TSL_RPC_RUN_FAILED, "timing");
    res.ncosts = to->repeat;
  }
  child_send(fd, &res);
  _exit(0);
}

static void *alloc_buf(size_t bytes) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, rounded ? rounded : 64);
}

static void do_measure(server *s, const tsl_rpc_request *req, tsl_rpc_buf *out) {
  uint32_t handle = req->handle;
  const char *kernel = req->kernel;
  tsl_time_opts to = tsl_time_opts_default();
  to.number = req->number;
  to.repeat = req->repeat;
  to.min_repeat_ms = req->min_repeat_ms;
  double timeout = req->timeout_s;
  int threads = req->threads;
  bool want_outputs = req->want_outputs;
  uint32_t nargs = req->nargs;
  if (timeout > s->max_timeout_s) timeout = s->max_timeout_s;
  if (threads == 0 || threads > s->max_threads) threads = s->max_threads;
  marg args[TSL_RPC_MAX_ARGS];
  memset(args, 0, sizeof args);
  for (uint32_t i = 0; i < nargs; i++) {
    const tsl_rpc_measure_arg *a = &req->args[i];
    args[i] = (marg){a->kind, a->code, a->bits, a->bytes, a->data, a->scalar, NULL};
  }
  uint64_t total = req->buffer_bytes, out_total = req->output_bytes;
  if (total > s->max_buffer)
    return reply_error(out, TSL_RPC_E_TOO_LARGE, "measure: %llu bytes of buffers over the cap of %llu bytes",
                       (unsigned long long)total, (unsigned long long)s->max_buffer);
  if (want_outputs && out_total + 4096 > s->max_message)
    return reply_error(out, TSL_RPC_E_TOO_LARGE, "measure: outputs of %llu bytes do not fit a reply (cap %llu)",
                       (unsigned long long)out_total, (unsigned long long)s->max_message);
  int slot = find_module(s, handle);
  if (slot < 0) return reply_error(out, TSL_RPC_E_NO_MODULE, "measure: no module %u (upload it first)", handle);
  s->ages[slot] = ++s->clock;
  char path[PATH_MAX + 32];
  module_path(s, handle, path, sizeof path);

  bool nomem = false;
  for (uint32_t i = 0; i < nargs && !nomem; i++) {
    marg *a = &args[i];
    if (a->kind != TSL_RPC_ARG_INPUT && a->kind != TSL_RPC_ARG_OUTPUT) continue;
    a->buf = alloc_buf(a->bytes);
    if (!a->buf) {
      nomem = true;
      break;
    }
    if (a->kind == TSL_RPC_ARG_INPUT) {
      memcpy(a->buf, a->data, a->bytes);
    } else if (a->code == TSL_DT_FLOAT && a->bits == 32) { /* f32: elements the kernel never writes fail the check */
      float *f = a->buf;
      for (size_t e = 0; e < a->bytes / 4; e++) f[e] = NAN;
    } else {
      memset(a->buf, 0, a->bytes);
    }
  }
  uint8_t *shared = nomem ? MAP_FAILED
                          : mmap(NULL, out_total ? out_total : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                                 -1, 0);
  int fds[2] = {-1, -1};
  pid_t pid = -1;
  if (shared != MAP_FAILED && pipe(fds) == 0) {
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
      close(fds[0]);
      child_run(fds[1], path, kernel, args, (int)nargs, threads, &to, shared);
      _exit(0);
    }
  }
  if (pid < 0) {
    int err = errno;
    for (uint32_t i = 0; i < nargs; i++) free(args[i].buf);
    if (shared != MAP_FAILED) munmap(shared, out_total ? out_total : 1);
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    return reply_error(out, TSL_RPC_E_SERVER, "measure: %s", nomem ? "out of memory" : strerror(err));
  }
  close(fds[1]);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  child_msg m, final = {.phase = 0};
  bool ran = false, done = false, timed_out = false;
  size_t got = 0;
  while (!done) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double left = timeout - ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (pr <= 0) continue;
    ssize_t n = read(fds[0], (char *)&m + got, sizeof m - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
    if (got < sizeof m) continue;
    got = 0;
    if (m.phase == 1) ran = true;
    else {
      final = m;
      done = true;
    }
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!done) {
    final.phase = 2;
    final.ncosts = 0;
    if (timed_out) {
      final.status = TSL_RPC_TIMEOUT;
      snprintf(final.msg, sizeof final.msg, "measurement did not finish in %.3g s (killed)", timeout);
    } else {
      final.status = TSL_RPC_CRASHED;
      if (WIFSIGNALED(wstatus))
        snprintf(final.msg, sizeof final.msg, "measuring child killed by signal %d (%s) while %s", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)), ran ? "timing" : "running");
      else
        snprintf(final.msg, sizeof final.msg, "measuring child exited with status %d while %s",
                 WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, ran ? "timing" : "running");
    }
  }
  final.msg[sizeof final.msg - 1] = '\0';
  if (s->verbose)
    fprintf(stderr, "tessel-rpc-server: measure m%u %s: status %d%s%s\n", handle, kernel, final.status,
            final.msg[0] ? ": " : "", final.msg);
  int ncosts = final.ncosts < 0 ? 0 : final.ncosts > TSL_RPC_MAX_COSTS ? TSL_RPC_MAX_COSTS : final.ncosts;
  tsl_rpc_put_header(out, TSL_RPC_MEASURE_OK);
  tsl_rpc_put_u32(out, (uint32_t)final.status);
  tsl_rpc_put_str(out, final.msg);
  tsl_rpc_put_u32(out, (uint32_t)ncosts);
  for (int i = 0; i < ncosts; i++) tsl_rpc_put_f64(out, final.costs[i]);
  uint32_t nout = 0;
  for (uint32_t i = 0; i < nargs; i++) nout += args[i].kind == TSL_RPC_ARG_OUTPUT;
  tsl_rpc_put_u32(out, ran ? nout : 0);
  size_t off = 0;
  for (uint32_t i = 0; ran && i < nargs; i++) {
    if (args[i].kind != TSL_RPC_ARG_OUTPUT) continue;
    tsl_rpc_put_u64(out, tsl_rpc_fnv1a64(shared + off, args[i].bytes));
    tsl_rpc_put_blob(out, shared + off, want_outputs ? args[i].bytes : 0);
    off += args[i].bytes;
  }
  for (uint32_t i = 0; i < nargs; i++) free(args[i].buf);
  munmap(shared, out_total ? out_total : 1);
  if (!out->ok) reply_error(out, TSL_RPC_E_SERVER, "measure: out of memory for the reply");
}

/* ---- the loop -------------------------------------------------------------------- */

static void handle(server *s, const void *data, size_t len, tsl_rpc_buf *out) {
  tsl_rpc_request req;
  char msg[512];
  uint32_t code = tsl_rpc_decode_request(data, len, s->key, &req, msg, sizeof msg);
  if (code == TSL_RPC_E_KEY)
    fprintf(stderr, "tessel-rpc-server: refused a request (type %u) with a %s key\n", req.type,
            req.key_given ? "wrong" : "missing");
  if (code) return reply_error(out, code, "%s", msg);
  switch (req.type) {
  case TSL_RPC_HELLO:
    tsl_rpc_put_header(out, TSL_RPC_HELLO_OK);
    tsl_rpc_put_str(out, s->fingerprint);
    tsl_rpc_put_str(out, s->fp_id);
    tsl_rpc_put_u32(out, (uint32_t)s->cores);
    tsl_rpc_put_u64(out, s->max_message);
    tsl_rpc_put_u64(out, s->max_file);
    tsl_rpc_put_u64(out, s->max_buffer);
    tsl_rpc_put_f64(out, s->max_timeout_s);
    return;
  case TSL_RPC_UPLOAD:
    return do_upload(s, &req, out);
  case TSL_RPC_MEASURE:
    return do_measure(s, &req, out);
  default: { /* TSL_RPC_FREE: the decoder knows no other type */
    int slot = find_module(s, req.handle);
    if (slot >= 0) drop_module(s, slot);
    tsl_rpc_put_header(out, TSL_RPC_DONE);
    return;
  }
  }
}

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= (size_t)w;
  }
  return true;
}

static bool read_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= (size_t)r;
  }
  return true;
}

/* The handler process: one request at a time from fd (u64 length + bytes, already
 * under the message cap), one reply back; at EOF drops its files and folder. */
static void handler_loop(server *s, int fd) {
  tsl_rpc_buf out;
  tsl_rpc_buf_init(&out);
  uint64_t len = 0;
  void *req = NULL;
  while (read_all(fd, &len, sizeof len) && len <= s->max_message) {
    void *p = realloc(req, len ? (size_t)len : 1);
    if (!p) break;
    req = p;
    if (!read_all(fd, req, (size_t)len)) break;
    out.len = 0;
    out.ok = true;
    handle(s, req, (size_t)len, &out);
    if (!out.ok) {
      tsl_rpc_buf_free(&out);
      reply_error(&out, TSL_RPC_E_SERVER, "out of memory");
    }
    uint64_t olen = out.len;
    if (!write_all(fd, &olen, sizeof olen) || !write_all(fd, out.data, out.len)) break;
    if (out.cap > ((size_t)1 << 24)) tsl_rpc_buf_free(&out); /* do not keep a large reply's buffer */
    if (len > ((uint64_t)1 << 24)) {
      free(req);
      req = NULL;
    }
  }
  free(req);
  tsl_rpc_buf_free(&out);
  for (int i = 0; i < MAX_MODULES; i++)
    if (s->handles[i]) drop_module(s, i);
  if (rmdir(s->dir) != 0) fprintf(stderr, "tessel-rpc-server: cannot remove %s: %s\n", s->dir, strerror(errno));
}

static int usage(void) {
  fprintf(stderr, "usage: tessel-rpc-server --key KEY [--host 127.0.0.1] [--port 9190] [--timeout S]\n"
                  "         [--max-message-mib N] [--max-file-mib N] [--max-buffer-mib N] [--max-threads N]\n"
                  "         [--tmpdir DIR] [--verbose 1]\n");
  return 2;
}

static bool parse_num(const char *v, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= lo && x <= hi)) return false;
  *out = x;
  return true;
}

int main(int argc, char **argv) {
  server s;
  memset(&s, 0, sizeof s);
  const char *host = "127.0.0.1", *tmp = getenv("TMPDIR");
  double port = 9190, msg_mib = 64, file_mib = 32, buf_mib = 512, threads = 0;
  s.max_timeout_s = 60;
  s.key = getenv("TSL_RPC_KEY");
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) return usage();
    const char *a = argv[i], *v = argv[++i];
    bool ok = true;
    if (strcmp(a, "--key") == 0) s.key = v;
    else if (strcmp(a, "--host") == 0) host = v;
    else if (strcmp(a, "--tmpdir") == 0) tmp = v;
    else if (strcmp(a, "--port") == 0) ok = parse_num(v, 0, 65535, &port);
    else if (strcmp(a, "--timeout") == 0) ok = parse_num(v, 0.01, 86400, &s.max_timeout_s);
    else if (strcmp(a, "--max-message-mib") == 0) ok = parse_num(v, 0.0625, 4096, &msg_mib);
    else if (strcmp(a, "--max-file-mib") == 0) ok = parse_num(v, 0.0625, 4096, &file_mib);
    else if (strcmp(a, "--max-buffer-mib") == 0) ok = parse_num(v, 0.0625, 65536, &buf_mib);
    else if (strcmp(a, "--max-threads") == 0) ok = parse_num(v, 1, 1024, &threads);
    else if (strcmp(a, "--verbose") == 0) s.verbose = strcmp(v, "0") != 0;
    else ok = false;
    if (!ok) {
      fprintf(stderr, "tessel-rpc-server: bad option '%s %s'\n", a, v);
      return usage();
    }
  }
  if (!s.key || !s.key[0]) {
    fprintf(stderr, "tessel-rpc-server: a key is required (--key KEY or TSL_RPC_KEY): requests must carry it\n");
    return usage();
  }
  s.max_message = (uint64_t)(msg_mib * 1048576);
  s.max_file = (uint64_t)(file_mib * 1048576);
  s.max_buffer = (uint64_t)(buf_mib * 1048576);
  make_fingerprint(&s);
  s.max_threads = threads > 0 ? (int)threads : s.cores;
  snprintf(s.dir, sizeof s.dir, "%s/tessel-rpc-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(s.dir)) {
    fprintf(stderr, "tessel-rpc-server: cannot create a folder in %s: %s\n", tmp && tmp[0] ? tmp : "/tmp",
            strerror(errno));
    return 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  /* The handler process, forked while this process is still single-threaded (before
   * nng starts its threads): measurements fork from it, so their children may start
   * threads (forking from a multithreaded process is fragile, and qemu-user 7.2 aborts
   * when such a child creates a thread). */
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    fprintf(stderr, "tessel-rpc-server: socketpair: %s\n", strerror(errno));
    rmdir(s.dir);
    return 1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t helper = fork();
  if (helper < 0) {
    fprintf(stderr, "tessel-rpc-server: fork: %s\n", strerror(errno));
    rmdir(s.dir);
    return 1;
  }
  if (helper == 0) {
    close(sv[0]);
    signal(SIGINT, SIG_IGN); /* the listener stops it by closing the socket */
    signal(SIGTERM, SIG_IGN);
    handler_loop(&s, sv[1]);
    _exit(0);
  }
  close(sv[1]);

  char url[300];
  snprintf(url, sizeof url, "tcp://%s:%d", host, (int)port);
  nng_socket sock;
  nng_listener l;
  int rv = nng_rep0_open(&sock);
  if (rv == 0) rv = nng_socket_set_size(sock, NNG_OPT_RECVMAXSZ, (size_t)s.max_message);
  if (rv == 0) rv = nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 200);
  if (rv == 0) rv = nng_listen(sock, url, &l, 0);
  nng_sockaddr sa_bound;
  if (rv == 0) rv = nng_listener_get_addr(l, NNG_OPT_LOCADDR, &sa_bound);
  if (rv != 0) {
    fprintf(stderr, "tessel-rpc-server: cannot listen on %s: %s\n", url, nng_strerror(rv));
    close(sv[0]);
    waitpid(helper, NULL, 0);
    return 1;
  }
  if (sa_bound.s_family == NNG_AF_INET) port = ntohs(sa_bound.s_in.sa_port);
  printf("tessel-rpc-server: listening on tcp://%s:%d\n", host, (int)port);
  printf("tessel-rpc-server: device %s (%s); folder %s\n", s.fp_id, s.fingerprint, s.dir);
  fflush(stdout);
  int rc = 0;
  while (!stop_requested) {
    nng_msg *msg = NULL;
    rv = nng_recvmsg(sock, &msg, 0);
    if (rv == NNG_ETIMEDOUT || rv == NNG_EINTR) continue;
    if (rv != 0) {
      fprintf(stderr, "tessel-rpc-server: receive: %s\n", nng_strerror(rv));
      continue;
    }
    uint64_t len = nng_msg_len(msg), rlen = 0;
    bool ok = write_all(sv[0], &len, sizeof len) && write_all(sv[0], nng_msg_body(msg), (size_t)len) &&
              read_all(sv[0], &rlen, sizeof rlen) && rlen <= s.max_message + 65536;
    nng_msg *rep = NULL;
    if (ok && nng_msg_realloc(msg, (size_t)rlen) == 0) {
      ok = read_all(sv[0], nng_msg_body(msg), (size_t)rlen);
      rep = msg;
      msg = NULL;
    }
    if (msg) nng_msg_free(msg);
    if (!ok) {
      fprintf(stderr, "tessel-rpc-server: the handler process is gone; stopping\n");
      if (rep) nng_msg_free(rep);
      rc = 1;
      break;
    }
    if (nng_sendmsg(sock, rep, 0) != 0) {
      fprintf(stderr, "tessel-rpc-server: reply not sent\n");
      nng_msg_free(rep);
    }
  }
  nng_close(sock);
  close(sv[0]); /* the handler sees EOF, removes its files and folder, exits */
  while (waitpid(helper, NULL, 0) < 0 && errno == EINTR) {
  }
  return rc;
}
