/* Clock and time evaluator behind include/tessel/runtime.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/module.h"
#include "runtime/parallel.h"
#include "tessel/runtime.h"

/* Larger than the last-level cache of the CPUs tessel targets (16-32 MiB L3 here,
 * at most a few MiB on Cortex-A class boards). */
#define FLUSH_BYTES ((size_t)64 << 20)
#define FLUSH_PIECE ((size_t)1 << 20)
/* `number` never grows past this: a call that takes no measurable time must not make
 * the evaluator loop for hours. */
#define MAX_NUMBER (1 << 30)
#define GOLDEN_RATIO 1.618

double tsl_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

tsl_time_opts tsl_time_opts_default(void) {
  tsl_time_opts o = {.number = 1, .repeat = 3, .min_repeat_ms = 10.0, .cache_flush = false, .cooldown_s = 0.0};
  return o;
}

typedef struct flush_ctx {
  unsigned char *buf;
  unsigned char value;
} flush_ctx;

static int32_t flush_task(int64_t begin, int64_t end, void *closure) {
  flush_ctx *f = closure;
  for (int64_t i = begin; i < end; i++) memset(f->buf + (size_t)i * FLUSH_PIECE, f->value, FLUSH_PIECE);
  return 0;
}

/* Evicts the caches: every pool thread writes part of the buffer, so the private
 * caches of the cores the kernel's parallel loops run on are cleared as well as the
 * shared one. A new value each time keeps the writes from being redundant. */
static void flush_caches(flush_ctx *f) {
  f->value++;
  tsl_parallel_for(flush_task, f, (int64_t)(FLUSH_BYTES / FLUSH_PIECE));
}

static void sleep_seconds(double s) {
  if (s <= 0) return;
  struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* The call being timed: a kernel with its arguments, or a callback. */
typedef struct timed {
  const tsl_kernel *kernel;
  void *const *args;
  int nargs;
  tsl_timed_fn fn;
  void *ctx;
  const char *what;
} timed;

static tsl_status call_once(const timed *t) {
  if (t->kernel) return tsl_kernel_call(t->kernel, t->args, t->nargs);
  int32_t rc = t->fn(t->ctx);
  if (rc != 0) return tsl_error(TSL_ERR_RUNTIME, "%s returned %d", t->what, (int)rc);
  return TSL_OK;
}

static tsl_status check_opts(const char *where, const tsl_time_opts *o, const double *costs) {
  if (!costs) return tsl_error(TSL_ERR_INVALID, "%s: NULL costs", where);
  if (o->number < 1) return tsl_error(TSL_ERR_INVALID, "%s: number %d (must be >= 1)", where, o->number);
  if (o->repeat < 1) return tsl_error(TSL_ERR_INVALID, "%s: repeat %d (must be >= 1)", where, o->repeat);
  if (!isfinite(o->min_repeat_ms) || o->min_repeat_ms < 0)
    return tsl_error(TSL_ERR_INVALID, "%s: min_repeat_ms %g (must be finite and >= 0)", where, o->min_repeat_ms);
  if (!isfinite(o->cooldown_s) || o->cooldown_s < 0)
    return tsl_error(TSL_ERR_INVALID, "%s: cooldown_s %g (must be finite and >= 0)", where, o->cooldown_s);
  return TSL_OK;
}

static tsl_status time_calls(const char *where, const timed *t, const tsl_time_opts *opts, double *costs) {
  tsl_time_opts o = opts ? *opts : tsl_time_opts_default();
  tsl_status st = check_opts(where, &o, costs);
  if (st != TSL_OK) return st;
  flush_ctx flush = {NULL, 0};
  if (o.cache_flush) {
    flush.buf = malloc(FLUSH_BYTES);
    if (!flush.buf) return tsl_error(TSL_ERR_NOMEM, "%s: no memory for the %zu-byte cache flush buffer", where, FLUSH_BYTES);
  }
  /* Warm-up: page faults, lazy binding, first-touch of the pool's workers. */
  st = call_once(t);
  int64_t number = o.number;
  for (int r = 0; r < o.repeat && st == TSL_OK; r++) {
    if (r > 0) sleep_seconds(o.cooldown_s);
    for (;;) {
      if (flush.buf) flush_caches(&flush);
      double t0 = tsl_time_now();
      for (int64_t i = 0; i < number && st == TSL_OK; i++) st = call_once(t);
      double elapsed = tsl_time_now() - t0;
      if (st != TSL_OK) break;
      double ms = elapsed * 1e3;
      if (ms >= o.min_repeat_ms || number >= MAX_NUMBER) {
        costs[r] = elapsed / (double)number;
        break;
      }
      /* Aim straight at min_repeat_ms from the measured rate, but grow by at least
       * the golden ratio so that a noisy short sample cannot stall the growth. */
      double target = ms > 0 ? o.min_repeat_ms / ms * (double)number + 1.0 : (double)MAX_NUMBER;
      double grown = fmax(target, ceil((double)number * GOLDEN_RATIO));
      number = grown >= (double)MAX_NUMBER ? MAX_NUMBER : (int64_t)grown;
    }
  }
  free(flush.buf);
  return st;
}

tsl_status tsl_time_kernel(const tsl_kernel *k, void *const *args, int nargs, const tsl_time_opts *opts,
                           double *costs) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "tsl_time_kernel: NULL kernel");
  timed t = {.kernel = k, .args = args, .nargs = nargs};
  return time_calls("tsl_time_kernel", &t, opts, costs);
}

tsl_status tsl_time_callback(tsl_timed_fn fn, void *ctx, const char *what, const tsl_time_opts *opts,
                             double *costs) {
  if (!fn) return tsl_error(TSL_ERR_INVALID, "tsl_time_callback: NULL function");
  timed t = {.fn = fn, .ctx = ctx, .what = what ? what : "timed function"};
  return time_calls("tsl_time_callback", &t, opts, costs);
}
