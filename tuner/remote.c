/* The client of tessel-rpc-server (remote.h). */
#include "tuner/remote.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "device/rpc_proto.h"
#include "tuner/remote_build.h"

struct tsl_remote {
  nng_socket sock;
  bool open;
  atomic_bool lost;
  double timeout_s;
  tsl_remote_info info;
  char key[512];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool aio_done;
};

/* ---- transport ----------------------------------------------------------------- */

static void on_pipe_removed(nng_pipe p, nng_pipe_ev ev, void *arg) {
  (void)p;
  (void)ev;
  tsl_remote *r = arg;
  atomic_store(&r->lost, true);
  pthread_mutex_lock(&r->mu);
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static void on_aio(void *arg) {
  tsl_remote *r = arg;
  pthread_mutex_lock(&r->mu);
  r->aio_done = true;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
}

static tsl_status lost_error(const tsl_remote *r, const char *what) {
  return tsl_error(TSL_ERR_IO, "remote %s: connection lost%s%s (the server stopped, crashed or dropped the connection)",
                   r->info.url, what[0] ? " " : "", what);
}

/* Sends req and waits up to wait_s for the reply, which *reply receives (caller frees
 * with nng_msg_free). An ERROR reply becomes TSL_ERR_IO with the server's message. */
static tsl_status request(tsl_remote *r, const tsl_rpc_buf *req, double wait_s, nng_msg **reply) {
  *reply = NULL;
  if (!req->ok) return tsl_error(TSL_ERR_NOMEM, "remote %s: out of memory", r->info.url);
  if (atomic_load(&r->lost)) return lost_error(r, "");
  if (req->len > r->info.max_message && r->info.max_message)
    return tsl_error(TSL_ERR_INVALID, "remote %s: a request of %zu bytes is over the server's message cap of %llu",
                     r->info.url, req->len, (unsigned long long)r->info.max_message);
  nng_msg *m = NULL;
  int rv = nng_msg_alloc(&m, 0);
  if (rv == 0 && (rv = nng_msg_append(m, req->data, req->len)) != 0) nng_msg_free(m);
  if (rv != 0) return tsl_error(TSL_ERR_NOMEM, "remote %s: %s", r->info.url, nng_strerror(rv));
  if ((rv = nng_sendmsg(r->sock, m, 0)) != 0) {
    nng_msg_free(m);
    return tsl_error(TSL_ERR_IO, "remote %s: send: %s", r->info.url, nng_strerror(rv));
  }
  nng_aio *aio = NULL;
  if ((rv = nng_aio_alloc(&aio, on_aio, r)) != 0)
    return tsl_error(TSL_ERR_NOMEM, "remote %s: %s", r->info.url, nng_strerror(rv));
  pthread_mutex_lock(&r->mu);
  r->aio_done = false;
  pthread_mutex_unlock(&r->mu);
  nng_recv_aio(r->sock, aio);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double deadline = (double)now.tv_sec + now.tv_nsec * 1e-9 + wait_s;
  bool lost = false, late = false;
  pthread_mutex_lock(&r->mu);
  while (!r->aio_done) {
    if (atomic_load(&r->lost)) {
      lost = true;
      break;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)now.tv_sec + now.tv_nsec * 1e-9 >= deadline) {
      late = true;
      break;
    }
    /* the condition variable uses CLOCK_REALTIME: wake up often and recheck */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&r->cv, &r->mu, &ts);
  }
  pthread_mutex_unlock(&r->mu);
  if (lost || late) nng_aio_cancel(aio);
  nng_aio_wait(aio);
  rv = nng_aio_result(aio);
  nng_msg *got = rv == 0 ? nng_aio_get_msg(aio) : NULL;
  nng_aio_free(aio);
  if (!got) {
    if (lost) return lost_error(r, "while waiting for a reply");
    if (late) {
      /* a late reply would answer the wrong request: this connection is done */
      atomic_store(&r->lost, true);
      return tsl_error(TSL_ERR_IO, "remote %s: no reply within %.3g s (server hung or overloaded)", r->info.url,
                       wait_s);
    }
    return tsl_error(TSL_ERR_IO, "remote %s: receive: %s", r->info.url, nng_strerror(rv));
  }
  tsl_rpc_reader rd;
  tsl_rpc_reader_init(&rd, nng_msg_body(got), nng_msg_len(got));
  uint16_t type = 0;
  if (!tsl_rpc_get_header(&rd, &type)) {
    nng_msg_free(got);
    return tsl_error(TSL_ERR_IO, "remote %s: a reply that is not a tessel RPC message", r->info.url);
  }
  if (type == TSL_RPC_ERROR) {
    uint32_t code = tsl_rpc_get_u32(&rd);
    char msg[512];
    tsl_rpc_get_str(&rd, msg, sizeof msg);
    nng_msg_free(got);
    return tsl_error(code == TSL_RPC_E_TOO_LARGE ? TSL_ERR_INVALID : TSL_ERR_IO, "remote %s: %s", r->info.url,
                     rd.ok ? msg : "malformed error reply");
  }
  *reply = got;
  return TSL_OK;
}

/* A reader over a reply's body past its header, which must be of type `want`. */
static tsl_status reply_reader(tsl_remote *r, nng_msg *m, uint16_t want, tsl_rpc_reader *rd) {
  tsl_rpc_reader_init(rd, nng_msg_body(m), nng_msg_len(m));
  uint16_t type = 0;
  tsl_rpc_get_header(rd, &type);
  if (type != want) return tsl_error(TSL_ERR_IO, "remote %s: unexpected reply type %u", r->info.url, type);
  return TSL_OK;
}

void tsl_remote_close(tsl_remote *r) {
  if (!r) return;
  if (r->open) {
    nng_pipe_notify(r->sock, NNG_PIPE_EV_REM_POST, NULL, NULL); /* r is going away */
    nng_close(r->sock);
  }
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

tsl_status tsl_remote_connect(const char *url, const char *key, double timeout_s, tsl_remote **out) {
  if (out) *out = NULL;
  if (!url || !url[0] || !key || !key[0] || !out || !(timeout_s > 0))
    return tsl_error(TSL_ERR_INVALID, "remote: give a url, a non-empty key and a timeout > 0");
  if (strlen(url) >= sizeof((tsl_remote_info *)0)->url || strlen(key) >= sizeof((tsl_remote *)0)->key)
    return tsl_error(TSL_ERR_INVALID, "remote: url or key too long");
  tsl_remote *r = calloc(1, sizeof *r);
  if (!r) return tsl_error(TSL_ERR_NOMEM, "remote: out of memory");
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  atomic_init(&r->lost, false);
  snprintf(r->info.url, sizeof r->info.url, "%s", url);
  snprintf(r->key, sizeof r->key, "%s", key);
  r->timeout_s = timeout_s;
  nng_duration ms = (nng_duration)(timeout_s * 1000);
  int rv = nng_req0_open(&r->sock);
  if (rv == 0) {
    r->open = true;
    /* never resend a request by itself: a measurement must not run twice */
    rv = nng_socket_set_ms(r->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
  }
  if (rv == 0) rv = nng_socket_set_ms(r->sock, NNG_OPT_SENDTIMEO, ms);
  if (rv == 0) rv = nng_socket_set_size(r->sock, NNG_OPT_RECVMAXSZ, 0);
  if (rv == 0) rv = nng_pipe_notify(r->sock, NNG_PIPE_EV_REM_POST, on_pipe_removed, r);
  if (rv == 0) rv = nng_dial(r->sock, url, NULL, 0);
  if (rv != 0) {
    tsl_status st = tsl_error(TSL_ERR_IO, "remote %s: cannot connect: %s", url, nng_strerror(rv));
    tsl_remote_close(r);
    return st;
  }
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_HELLO);
  tsl_rpc_put_str(&b, r->key);
  nng_msg *rep = NULL;
  tsl_status st = request(r, &b, timeout_s, &rep);
  tsl_rpc_buf_free(&b);
  tsl_rpc_reader rd;
  if (st == TSL_OK && (st = reply_reader(r, rep, TSL_RPC_HELLO_OK, &rd)) == TSL_OK) {
    tsl_remote_info *in = &r->info;
    tsl_rpc_get_str(&rd, in->fingerprint, sizeof in->fingerprint);
    tsl_rpc_get_str(&rd, in->id, sizeof in->id);
    in->cores = (int)tsl_rpc_get_u32(&rd);
    in->max_message = tsl_rpc_get_u64(&rd);
    in->max_file = tsl_rpc_get_u64(&rd);
    in->max_buffer = tsl_rpc_get_u64(&rd);
    in->max_timeout_s = tsl_rpc_get_f64(&rd);
    const char *a = strstr(in->fingerprint, "arch=");
    if (a) sscanf(a + 5, "%31s", in->arch);
    if (!rd.ok || !in->arch[0] || !in->id[0])
      st = tsl_error(TSL_ERR_IO, "remote %s: malformed handshake reply", url);
  }
  if (rep) nng_msg_free(rep);
  if (st != TSL_OK) {
    tsl_remote_close(r);
    return st;
  }
  *out = r;
  return TSL_OK;
}

const tsl_remote_info *tsl_remote_get_info(const tsl_remote *r) { return r ? &r->info : NULL; }

tsl_status tsl_remote_upload(tsl_remote *r, const void *so, size_t n, uint32_t *handle) {
  if (!r || (!so && n) || !handle) return tsl_error(TSL_ERR_INVALID, "remote upload: NULL argument");
  if (n > r->info.max_file)
    return tsl_error(TSL_ERR_INVALID, "remote %s: a file of %zu bytes is over the server's cap of %llu", r->info.url,
                     n, (unsigned long long)r->info.max_file);
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_UPLOAD);
  tsl_rpc_put_str(&b, r->key);
  tsl_rpc_put_blob(&b, so, n);
  nng_msg *rep = NULL;
  tsl_status st = request(r, &b, r->timeout_s, &rep);
  tsl_rpc_buf_free(&b);
  tsl_rpc_reader rd;
  if (st == TSL_OK && (st = reply_reader(r, rep, TSL_RPC_UPLOAD_OK, &rd)) == TSL_OK) {
    *handle = tsl_rpc_get_u32(&rd);
    if (!rd.ok) st = tsl_error(TSL_ERR_IO, "remote %s: malformed upload reply", r->info.url);
  }
  if (rep) nng_msg_free(rep);
  return st;
}

tsl_status tsl_remote_upload_file(tsl_remote *r, const char *path, uint32_t *handle) {
  if (!r || !path || !handle) return tsl_error(TSL_ERR_INVALID, "remote upload: NULL argument");
  FILE *f = fopen(path, "rb");
  if (!f) return tsl_error(TSL_ERR_IO, "remote upload: %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || sb.st_size < 0) {
    fclose(f);
    return tsl_error(TSL_ERR_IO, "remote upload: %s: cannot stat", path);
  }
  size_t n = (size_t)sb.st_size;
  if (n > r->info.max_file) {
    fclose(f);
    return tsl_error(TSL_ERR_INVALID, "remote %s: %s (%zu bytes) is over the server's file cap of %llu", r->info.url,
                     path, n, (unsigned long long)r->info.max_file);
  }
  void *data = malloc(n ? n : 1);
  if (!data) {
    fclose(f);
    return tsl_error(TSL_ERR_NOMEM, "remote upload: out of memory");
  }
  size_t got = fread(data, 1, n, f);
  fclose(f);
  tsl_status st = got == n ? tsl_remote_upload(r, data, n, handle)
                           : tsl_error(TSL_ERR_IO, "remote upload: %s: short read", path);
  free(data);
  return st;
}

tsl_status tsl_remote_free_module(tsl_remote *r, uint32_t handle) {
  if (!r) return tsl_error(TSL_ERR_INVALID, "remote free: NULL argument");
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_FREE);
  tsl_rpc_put_str(&b, r->key);
  tsl_rpc_put_u32(&b, handle);
  nng_msg *rep = NULL;
  tsl_status st = request(r, &b, r->timeout_s, &rep);
  tsl_rpc_buf_free(&b);
  if (rep) nng_msg_free(rep);
  return st;
}

void tsl_remote_result_clear(tsl_remote_result *res) {
  if (!res) return;
  for (int i = 0; i < 16; i++) free(res->outputs[i]);
  memset(res, 0, sizeof *res);
}

tsl_status tsl_remote_measure(tsl_remote *r, uint32_t handle, const char *kernel, const tsl_remote_arg *args,
                              int nargs, const tsl_remote_measure_opts *o, tsl_remote_result *res) {
  if (res) memset(res, 0, sizeof *res);
  if (!r || !kernel || (!args && nargs) || !o || !res || nargs < 0 || nargs > TSL_RPC_MAX_ARGS)
    return tsl_error(TSL_ERR_INVALID, "remote measure: NULL argument or more than %d arguments", TSL_RPC_MAX_ARGS);
  if (o->time.repeat < 0 || o->time.repeat > TSL_RPC_MAX_COSTS || o->time.number < 1 || !(o->timeout_s > 0))
    return tsl_error(TSL_ERR_INVALID, "remote measure: repeat 0..%d, number >= 1, timeout > 0", TSL_RPC_MAX_COSTS);
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_MEASURE);
  tsl_rpc_put_str(&b, r->key);
  tsl_rpc_put_u32(&b, handle);
  tsl_rpc_put_str(&b, kernel);
  tsl_rpc_put_u32(&b, (uint32_t)o->time.number);
  tsl_rpc_put_u32(&b, (uint32_t)o->time.repeat);
  tsl_rpc_put_f64(&b, o->time.min_repeat_ms);
  tsl_rpc_put_f64(&b, o->timeout_s);
  tsl_rpc_put_u32(&b, (uint32_t)(o->threads > 0 ? o->threads : 0));
  tsl_rpc_put_u8(&b, o->want_outputs ? 1 : 0);
  tsl_rpc_put_u32(&b, (uint32_t)nargs);
  for (int i = 0; i < nargs; i++) {
    const tsl_remote_arg *a = &args[i];
    tsl_rpc_put_u8(&b, (uint8_t)a->kind);
    if (a->kind == TSL_RPC_ARG_I32 || a->kind == TSL_RPC_ARG_I64) {
      tsl_rpc_put_u64(&b, (uint64_t)a->scalar);
      continue;
    }
    if ((a->kind != TSL_RPC_ARG_INPUT && a->kind != TSL_RPC_ARG_OUTPUT) || a->ndim < 0 || a->ndim > TSL_RPC_MAX_DIMS ||
        (a->kind == TSL_RPC_ARG_INPUT && !a->data)) {
      tsl_rpc_buf_free(&b);
      return tsl_error(TSL_ERR_INVALID, "remote measure: argument %d: bad kind, rank or missing data", i);
    }
    tsl_rpc_put_u8(&b, a->dtype.code);
    tsl_rpc_put_u8(&b, a->dtype.bits);
    tsl_rpc_put_u8(&b, (uint8_t)a->ndim);
    size_t numel = 1;
    for (int d = 0; d < a->ndim; d++) {
      tsl_rpc_put_u64(&b, (uint64_t)a->shape[d]);
      numel *= (size_t)(a->shape[d] > 0 ? a->shape[d] : 0);
    }
    if (a->kind == TSL_RPC_ARG_INPUT) tsl_rpc_put_blob(&b, a->data, numel * (a->dtype.bits / 8u));
  }
  nng_msg *rep = NULL;
  tsl_status st = request(r, &b, o->timeout_s + r->timeout_s, &rep);
  tsl_rpc_buf_free(&b);
  tsl_rpc_reader rd;
  if (st == TSL_OK && (st = reply_reader(r, rep, TSL_RPC_MEASURE_OK, &rd)) == TSL_OK) {
    res->status = (int)tsl_rpc_get_u32(&rd);
    tsl_rpc_get_str(&rd, res->msg, sizeof res->msg);
    uint32_t nc = tsl_rpc_get_u32(&rd);
    if (nc > TSL_RPC_MAX_COSTS) rd.ok = false;
    for (uint32_t i = 0; rd.ok && i < nc; i++) res->costs[i] = tsl_rpc_get_f64(&rd);
    res->ncosts = rd.ok ? (int)nc : 0;
    uint32_t nout = tsl_rpc_get_u32(&rd);
    if (nout > 16) rd.ok = false;
    for (uint32_t i = 0; rd.ok && i < nout; i++) {
      res->checksums[i] = tsl_rpc_get_u64(&rd);
      const void *p = NULL;
      size_t n = tsl_rpc_get_blob(&rd, &p);
      if (!rd.ok || !n) continue;
      if (tsl_rpc_fnv1a64(p, n) != res->checksums[i]) rd.ok = false;
      res->outputs[i] = malloc(n);
      if (!res->outputs[i]) {
        st = tsl_error(TSL_ERR_NOMEM, "remote measure: out of memory");
        break;
      }
      memcpy(res->outputs[i], p, n);
      res->output_bytes[i] = n;
    }
    res->nout = rd.ok ? (int)nout : 0;
    if (st == TSL_OK && !rd.ok) st = tsl_error(TSL_ERR_IO, "remote %s: malformed measure reply", r->info.url);
  }
  if (rep) nng_msg_free(rep);
  if (st != TSL_OK) tsl_remote_result_clear(res);
  return st;
}

/* ---- the tuner's sessions: one connection per device, for the process ----------- */

enum { MAX_SESSIONS = 8 };
static pthread_mutex_t sessions_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char device[256];
  tsl_remote *r;
} sessions[MAX_SESSIONS];

#define CONNECT_TIMEOUT_S 30

/* The open session of device, connecting with key when there is none. */
static tsl_status session_get(const char *device, const char *key, tsl_remote **out) {
  *out = NULL;
  pthread_mutex_lock(&sessions_mu);
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (sessions[i].r && strcmp(sessions[i].device, device) == 0) *out = sessions[i].r;
  tsl_status st = TSL_OK;
  if (!*out) {
    int slot = -1;
    for (int i = 0; i < MAX_SESSIONS && slot < 0; i++)
      if (!sessions[i].r) slot = i;
    if (slot < 0) st = tsl_error(TSL_ERR_UNSUPPORTED, "remote: more than %d devices", MAX_SESSIONS);
    else if (!key || !key[0])
      st = tsl_error(TSL_ERR_INVALID, "remote %s: no key (give --key or set TSL_RPC_KEY)", device);
    else if ((st = tsl_remote_connect(device, key, CONNECT_TIMEOUT_S, out)) == TSL_OK) {
      snprintf(sessions[slot].device, sizeof sessions[slot].device, "%s", device);
      sessions[slot].r = *out;
    }
  }
  pthread_mutex_unlock(&sessions_mu);
  return st;
}

/* The addresses of a device string "tcp://a:1,tcp://b:2" (a pool) into out[0..*n). */
static tsl_status split_pool(const char *device, char out[][256], int *n) {
  *n = 0;
  const char *p = device;
  while (p && *p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    while (len && *p == ' ') p++, len--;
    while (len && p[len - 1] == ' ') len--;
    if (len == 0 || len >= 256) return tsl_error(TSL_ERR_INVALID, "remote: bad device list '%s'", device);
    if (*n >= MAX_SESSIONS) return tsl_error(TSL_ERR_UNSUPPORTED, "remote: more than %d devices", MAX_SESSIONS);
    memcpy(out[*n], p, len);
    out[*n][len] = '\0';
    (*n)++;
    p = comma ? comma + 1 : NULL;
  }
  if (*n == 0) return tsl_error(TSL_ERR_INVALID, "remote: no device given");
  return TSL_OK;
}

/* The session of the first device of a (pool) device string. */
static tsl_status first_session(const char *device, const char *key, tsl_remote **out) {
  char addrs[MAX_SESSIONS][256];
  int n = 0;
  tsl_status st = split_pool(device, addrs, &n);
  return st != TSL_OK ? st : session_get(addrs[0], key, out);
}

tsl_status tsl_remote_prepare(tsl_target *t, tsl_measure_opts *m) {
  if (!t || !m || !m->device || !m->device[0]) return tsl_error(TSL_ERR_INVALID, "remote: no device given");
  if (!m->key || !m->key[0]) m->key = getenv("TSL_RPC_KEY");
  char addrs[MAX_SESSIONS][256];
  int naddr = 0;
  tsl_status st = split_pool(m->device, addrs, &naddr);
  tsl_remote *r = NULL, *pool[MAX_SESSIONS];
  for (int i = 0; st == TSL_OK && i < naddr; i++) {
    st = session_get(addrs[i], m->key, &pool[i]);
    /* a pool is one kind of device: records are keyed by its fingerprint */
    if (st == TSL_OK && i > 0 && strcmp(pool[i]->info.id, pool[0]->info.id) != 0)
      st = tsl_error(TSL_ERR_INVALID, "remote: the pool's devices differ: %s is %s (%s), %s is %s (%s)", addrs[0],
                     pool[0]->info.id, pool[0]->info.fingerprint, addrs[i], pool[i]->info.id,
                     pool[i]->info.fingerprint);
  }
  if (st != TSL_OK) return st;
  r = pool[0];
  const char *want = t->arch == TSL_ARCH_AARCH64 ? "aarch64" : "x86_64";
  if (strcmp(r->info.arch, want) != 0)
    return tsl_error(TSL_ERR_UNSUPPORTED, "remote %s: the device is %s, target %s is %s", m->device, r->info.arch,
                     t->name, want);
  /* the device's loader would refuse every candidate: say so once, up front */
  static const struct {
    const char *llvm, *hwcap;
  } need[] = {{"dotprod", "asimddp"}, {"fullfp16", "asimdhp"}, {"sve", "sve"}, {"lse", "atomics"}};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (t->arch == TSL_ARCH_AARCH64 && tsl_target_has_feature(t, need[i].llvm) &&
        !strstr(r->info.fingerprint, need[i].hwcap))
      return tsl_error(TSL_ERR_UNSUPPORTED, "remote %s: target %s needs CPU feature %s, which the device lacks (%s)",
                       m->device, t->name, need[i].llvm, r->info.fingerprint);
  snprintf(t->device, sizeof t->device, "%s", r->info.id);
  return TSL_OK;
}

bool tsl_remote_device_info(const char *device, tsl_device_info *out) {
  if (!device || !out) return false;
  tsl_remote *r = NULL;
  char addrs[MAX_SESSIONS][256];
  int naddr = 0;
  if (split_pool(device, addrs, &naddr) != TSL_OK) return false;
  pthread_mutex_lock(&sessions_mu);
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (sessions[i].r && strcmp(sessions[i].device, addrs[0]) == 0) r = sessions[i].r;
  pthread_mutex_unlock(&sessions_mu);
  if (!r) return false;
  memset(out, 0, sizeof *out);
  const char *fp = r->info.fingerprint, *cpu = strstr(fp, "cpu="), *cores = strstr(fp, " cores="),
             *feat = strstr(fp, "features=");
  if (cpu && cores && cores > cpu)
    snprintf(out->cpu, sizeof out->cpu, "%.*s", (int)(cores - cpu - 4 < 127 ? cores - cpu - 4 : 127), cpu + 4);
  else
    snprintf(out->cpu, sizeof out->cpu, "unknown");
  out->cores = r->info.cores;
  snprintf(out->isa, sizeof out->isa, "%.255s", feat ? feat + 9 : "");
  return true;
}

/* 0 when out (bytes of ref's dtype and shape) matches ref (tsl_measure_output_ok); else why in msg. */
static int compare_output(const void *out, size_t bytes, const tsl_tensor *ref, double rtol, char *msg, size_t n) {
  if (bytes != tsl_tensor_nbytes(ref)) {
    snprintf(msg, n, "device output of %zu bytes, reference %zu", bytes, tsl_tensor_nbytes(ref));
    return 1;
  }
  tsl_tensor view = *ref;
  view.data = (void *)(uintptr_t)out;
  view.owns_data = false;
  return !tsl_measure_output_ok(&view, ref, rtol, "device output", msg, n);
}

static void fill_arg(tsl_remote_arg *a, int kind, const tsl_tensor *t) {
  memset(a, 0, sizeof *a);
  a->kind = kind;
  a->dtype = t->dtype;
  a->ndim = t->ndim;
  for (int d = 0; d < t->ndim && d < 8; d++) a->shape[d] = t->shape[d];
  a->data = kind == TSL_RPC_ARG_INPUT ? t->data : NULL;
}

/* Uploads built candidate so (res holds its build result; nothing to do when that is a
 * failure) to session r, measures it and compares its outputs (see
 * tsl_remote_measure_candidate); all_cost gets the build's and this call's seconds. */
static tsl_status measure_on(tsl_remote *r, const char *so, tsl_tensor *const *inputs, int nin,
                             tsl_tensor *const *refs, int nout, const tsl_measure_opts *o, tsl_measure_result *res) {
  double start = tsl_time_now();
  tsl_status st = TSL_OK;
  if (atomic_load(&r->lost)) return lost_error(r, "");
  uint32_t handle = 0;
  bool uploaded = false;
  if (res->error_no == TSL_MEASURE_OK) {
    st = tsl_remote_upload_file(r, so, &handle);
    uploaded = st == TSL_OK;
    if (st == TSL_ERR_INVALID) { /* over the server's caps: this candidate's failure */
      res->error_no = TSL_MEASURE_RUNTIME;
      snprintf(res->error_msg, sizeof res->error_msg, "%s", tsl_last_error());
      st = TSL_OK;
    }
  }
  if (st == TSL_OK && uploaded) {
    tsl_remote_arg args[TSL_RPC_MAX_ARGS];
    for (int i = 0; i < nin; i++) fill_arg(&args[i], TSL_RPC_ARG_INPUT, inputs[i]);
    for (int k = 0; k < nout; k++) fill_arg(&args[nin + k], TSL_RPC_ARG_OUTPUT, refs[k]);
    tsl_remote_measure_opts mo = {o->time, o->run_timeout_s, o->threads, true};
    tsl_remote_result rr;
    st = tsl_remote_measure(r, handle, "candidate", args, nin + nout, &mo, &rr);
    if (st == TSL_ERR_INVALID) { /* the request is over the server's caps */
      res->error_no = TSL_MEASURE_RUNTIME;
      snprintf(res->error_msg, sizeof res->error_msg, "%s", tsl_last_error());
      st = TSL_OK;
    } else if (st == TSL_OK) {
      if (rr.status != TSL_RPC_OK) {
        res->error_no = rr.status == TSL_RPC_TIMEOUT ? TSL_MEASURE_RUN_TIMEOUT : TSL_MEASURE_RUNTIME;
        snprintf(res->error_msg, sizeof res->error_msg, "device: %.240s", rr.msg);
      } else if (rr.nout != nout) {
        res->error_no = TSL_MEASURE_RUNTIME;
        snprintf(res->error_msg, sizeof res->error_msg, "device returned %d outputs, expected %d", rr.nout, nout);
      } else {
        for (int k = 0; k < nout && res->error_no == TSL_MEASURE_OK; k++)
          if (compare_output(rr.outputs[k], rr.output_bytes[k], refs[k], o->rtol, res->error_msg,
                             sizeof res->error_msg))
            res->error_no = TSL_MEASURE_WRONG_ANSWER;
        if (res->error_no == TSL_MEASURE_OK) {
          res->ncosts = rr.ncosts;
          memcpy(res->costs, rr.costs, sizeof res->costs);
        }
      }
      tsl_remote_result_clear(&rr);
      tsl_status fs = tsl_remote_free_module(r, handle);
      if (fs != TSL_OK) st = fs;
    }
  }
  res->all_cost = res->compile_s + (tsl_time_now() - start);
  return st;
}

static bool bad_args(const tsl_target *t, const tsl_te_program *p, int nin, int nout, const tsl_measure_opts *o,
                     const tsl_template *tpl, const tsl_config_space *s, const void *c, const void *res) {
  return !t || !p || !o || !tpl || !s || !c || !res || !o->device || nin < 0 || nout < 1 ||
         nin + nout > TSL_RPC_MAX_ARGS;
}

/* A private temporary folder for a batch's objects (the caller removes it with
 * remove_batch_dir). */
static tsl_status batch_dir(char dir[32]) {
  snprintf(dir, 32, "/tmp/tessel-remote-XXXXXX");
  if (!mkdtemp(dir)) return tsl_error(TSL_ERR_RUNTIME, "remote: temporary folder: %s", strerror(errno));
  return TSL_OK;
}

static void remove_batch_dir(const char *dir, int n) {
  char so[64];
  for (int i = 0; i < n; i++) {
    tsl_remote_build_path(dir, i, so, sizeof so);
    unlink(so);
  }
  rmdir(dir);
}

tsl_status tsl_remote_measure_candidate(const tsl_target *t, const tsl_te_program *p, tsl_tensor *const *inputs,
                                        int nin, tsl_tensor *const *refs, int nout, const tsl_measure_opts *o,
                                        const tsl_template *tpl, const tsl_config_space *s, const tsl_config *c,
                                        tsl_measure_result *res) {
  if (bad_args(t, p, nin, nout, o, tpl, s, c, res))
    return tsl_error(TSL_ERR_INVALID, "remote measure: NULL argument or more than %d tensors", TSL_RPC_MAX_ARGS);
  tsl_remote *r = NULL;
  char dir[32], so[64];
  tsl_status st = first_session(o->device, o->key, &r);
  if (st == TSL_OK && atomic_load(&r->lost)) st = lost_error(r, "");
  if (st != TSL_OK || (st = batch_dir(dir)) != TSL_OK) return st;
  st = tsl_remote_build_batch(dir, t, p, o, tpl, s, c, 1, 1, res);
  tsl_remote_build_path(dir, 0, so, sizeof so);
  if (st == TSL_OK) st = measure_on(r, so, inputs, nin, refs, nout, o, res);
  remove_batch_dir(dir, 1);
  return st;
}

/* ---- a pool: one thread per device, candidates from a shared counter ------------ */

typedef struct pool_job {
  const char *dir; /* the batch's objects (remote_build.h) */
  tsl_tensor *const *inputs, *const *refs;
  int nin, nout;
  const tsl_measure_opts *o;
  tsl_measure_result *res; /* built; measured here */
  int n;
  atomic_int next;
  atomic_bool failed;
} pool_job;

typedef struct pool_worker {
  pool_job *job;
  tsl_remote *r;
  tsl_status st;
  char msg[512]; /* the error message (thread-local in the worker) */
} pool_worker;

/* A device's thread: uploads and measures; it never forks (remote_build.h says why). */
static void *pool_thread(void *arg) {
  pool_worker *w = arg;
  pool_job *j = w->job;
  char so[64];
  while (!atomic_load(&j->failed)) {
    int i = atomic_fetch_add(&j->next, 1);
    if (i >= j->n) break;
    tsl_remote_build_path(j->dir, i, so, sizeof so);
    w->st = measure_on(w->r, so, j->inputs, j->nin, j->refs, j->nout, j->o, &j->res[i]);
    if (w->st != TSL_OK) {
      snprintf(w->msg, sizeof w->msg, "%s", tsl_last_error());
      atomic_store(&j->failed, true);
    }
  }
  return NULL;
}

tsl_status tsl_remote_measure_candidates(const tsl_target *t, const tsl_te_program *p, tsl_tensor *const *inputs,
                                         int nin, tsl_tensor *const *refs, int nout, const tsl_measure_opts *o,
                                         const tsl_template *tpl, const tsl_config_space *s, const tsl_config *cs,
                                         int n, tsl_measure_result *res) {
  if (bad_args(t, p, nin, nout, o, tpl, s, cs, res) || n < 0)
    return tsl_error(TSL_ERR_INVALID, "remote measure: NULL argument or more than %d tensors", TSL_RPC_MAX_ARGS);
  char addrs[MAX_SESSIONS][256];
  int naddr = 0;
  tsl_status st = split_pool(o->device, addrs, &naddr);
  pool_worker w[MAX_SESSIONS];
  char dir[32];
  pool_job job = {dir, inputs, refs, nin, nout, o, res, n, 0, false};
  for (int i = 0; st == TSL_OK && i < naddr; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].job = &job;
    st = session_get(addrs[i], o->key, &w[i].r);
    if (st == TSL_OK && atomic_load(&w[i].r->lost)) st = lost_error(w[i].r, "");
  }
  if (st != TSL_OK || (st = batch_dir(dir)) != TSL_OK) return st;
  /* every build first, forked from this thread alone; then one thread per device */
  st = tsl_remote_build_batch(dir, t, p, o, tpl, s, cs, n, 0, res);
  pthread_t th[MAX_SESSIONS];
  bool started[MAX_SESSIONS] = {false};
  for (int i = 1; st == TSL_OK && i < naddr; i++) started[i] = pthread_create(&th[i], NULL, pool_thread, &w[i]) == 0;
  if (st == TSL_OK) pool_thread(&w[0]); /* this thread is the first device's */
  for (int i = 1; i < naddr; i++)
    if (started[i]) pthread_join(th[i], NULL);
  for (int i = 0; st == TSL_OK && i < naddr; i++)
    if (w[i].st != TSL_OK) st = tsl_error(w[i].st, "%s", w[i].msg);
  remove_batch_dir(dir, n);
  return st;
}
