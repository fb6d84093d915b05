/* The isolated builder/runner (runner.h). */
#include "tuner/runner.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "codegen/jit_cache.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "tuner/cost_static.h"
#include "tuner/mca.h"
#include "tuner/remote.h"

enum { MAX_TENSORS = 16 };
#define INTERP_MAX_MACS 2e6

struct tsl_runner {
  tsl_target target;
  tsl_measure_opts opts;
  tsl_arena *arena;
  tsl_te_program *program;
  int nin, nout;
  tsl_tensor *inputs[MAX_TENSORS];
  tsl_tensor *ref[MAX_TENSORS]; /* reference outputs */
  void *shared[MAX_TENSORS];    /* MAP_SHARED buffers a reference worker writes */
  size_t shared_bytes[MAX_TENSORS];
  double flops, macs;
  double slow_cutoff_s; /* tsl_runner_set_slow_cutoff */
};

tsl_measure_opts tsl_measure_opts_default(void) {
  tsl_measure_opts o;
  memset(&o, 0, sizeof o);
  o.time = tsl_time_opts_default();
  o.time.min_repeat_ms = 20;
  o.build_timeout_s = 20;
  o.run_timeout_s = 20;
  o.threads = 0;
  o.rtol = 1e-4;
  o.seed = 1;
  o.device = o.key = NULL;
  o.cost_static = false;
  return o;
}

/* The worker's report: phase 1 "built", phase 2 the result. Small enough for one
 * atomic pipe write (PIPE_BUF). */
typedef struct worker_msg {
  int phase;
  int error_no;
  int ncosts;
  double compile_s;
  double costs[TSL_RECORD_MAX_COSTS];
  char msg[256];
} worker_msg;

_Static_assert(sizeof(worker_msg) <= PIPE_BUF, "worker message must be written atomically");

static void send_msg(int fd, const worker_msg *m) {
  ssize_t w;
  do w = write(fd, m, sizeof *m);
  while (w < 0 && errno == EINTR);
}

/* Writes all n bytes (a static-estimate worker's reply may exceed PIPE_BUF). */
static void send_bytes(int fd, const void *p, size_t n) {
  const char *b = p;
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    b += w;
    n -= (size_t)w;
  }
}

static void worker_fail(int fd, int error_no, const char *what) {
  worker_msg m = {.phase = 2, .error_no = error_no};
  snprintf(m.msg, sizeof m.msg, "%s: %s", what, tsl_last_error());
  send_msg(fd, &m);
  _exit(0);
}

static tsl_dtype dtype_of(tsl_type t) {
  tsl_dtype d = {(uint8_t)(t.code == TSL_TYPE_FLOAT ? TSL_DT_FLOAT : t.code == TSL_TYPE_UINT ? TSL_DT_UINT
                           : t.code == TSL_TYPE_BOOL ? TSL_DT_BOOL : TSL_DT_INT),
                 (uint8_t)(t.bits == 1 ? 8 : t.bits)};
  return d;
}

/* ---- comparison ---------------------------------------------------------------- */

bool tsl_measure_output_ok(const tsl_tensor *out, const tsl_tensor *ref, double rtol, const char *what, char *msg,
                           size_t n) {
  int64_t numel = tsl_tensor_numel(ref);
  double scale = 1;
  for (int64_t i = 0; i < numel; i++) {
    double v = fabs(tsl_tensor_get_f64(ref, i));
    if (isfinite(v) && v > scale) scale = v;
  }
  double tol = rtol * scale;
  for (int64_t i = 0; i < numel; i++) {
    double a = tsl_tensor_get_f64(out, i), b = tsl_tensor_get_f64(ref, i);
    bool ok = isnan(b) ? isnan(a) : (isinf(b) ? a == b : fabs(a - b) <= tol);
    if (!ok) {
      snprintf(msg, n, "%s element %lld is %.9g, reference %.9g (tolerance %.3g)", what, (long long)i, a, b, tol);
      return false;
    }
  }
  return true;
}

/* ---- the worker --------------------------------------------------------------- */

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The time evaluator's protocol (one warm-up call, then `repeat` samples, `number`
 * growing until a sample lasts min_repeat_ms) on the process's CPU clock: with one
 * thread the kernel's own compute time, without the time other processes of a shared
 * machine take from it (wall-clock samples there vary by 2x and more, which makes the
 * best of N candidates the luckiest, not the fastest). */
static tsl_status cpu_time_kernel(const tsl_kernel *k, void *const *args, int nargs, const tsl_time_opts *o,
                                  double *costs) {
  if (tsl_kernel_call(k, args, nargs) != TSL_OK) return TSL_ERR_RUNTIME;
  int64_t number = o->number > 0 ? o->number : 1;
  for (int r = 0; r < o->repeat; r++)
    for (;;) {
      double t0 = cpu_now();
      for (int64_t i = 0; i < number; i++)
        if (tsl_kernel_call(k, args, nargs) != TSL_OK) return TSL_ERR_RUNTIME;
      double el = cpu_now() - t0;
      if (el * 1e3 >= o->min_repeat_ms || number >= ((int64_t)1 << 30)) {
        costs[r] = el / (double)number;
        break;
      }
      double grow = el > 0 ? o->min_repeat_ms * 1e-3 / el * 1.1 : 2.0;
      number = (int64_t)((double)number * (grow > 1.618 ? grow : 1.618)) + 1;
    }
  return TSL_OK;
}

/* Builds schedule (made by apply_fn in the worker), checks, times; never returns. When
 * copy_out, the outputs are copied into the shared buffers (reference run) instead of
 * being checked and timed. */
static void worker(tsl_runner *r, int fd, const tsl_template *tpl, const tsl_config_space *s, const tsl_config *c,
                   bool copy_out) {
  /* a crashing candidate just dies with its signal (the parent records which), also
   * under sanitizers that would otherwise report and exit with a status */
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
  /* a candidate is compiled once: caching it would only fill the disk */
  tsl_jit_cache_set_enabled(false);
  tsl_arena *a = tsl_arena_new();
  tsl_arena_set_current(a);
  if (r->opts.threads > 0) tsl_set_num_threads(r->opts.threads);
  tsl_schedule *sch = NULL;
  tsl_status st = tpl ? tpl->apply(r->program, &r->target, s, c, &sch) : tsl_schedule_create(r->program, &sch);
  if (st != TSL_OK) worker_fail(fd, TSL_MEASURE_INSTANTIATION, "apply");
  tsl_jit *jit = NULL;
  tsl_module *m = NULL;
  if (tsl_jit_new(&r->target, &jit) != TSL_OK) worker_fail(fd, TSL_MEASURE_COMPILE, "jit");
  if (tsl_module_new(&m) != TSL_OK) worker_fail(fd, TSL_MEASURE_COMPILE, "module");
  tsl_build_stats stats = {0, 0};
  double t0 = tsl_time_now();
  if (tsl_build(sch, "candidate", jit, m, NULL, &stats) != TSL_OK) worker_fail(fd, TSL_MEASURE_COMPILE, "build");
  worker_msg built = {.phase = 1, .compile_s = tsl_time_now() - t0};
  send_msg(fd, &built);

  const tsl_kernel *k = tsl_module_kernel_at(m, 0);
  if (!k) worker_fail(fd, TSL_MEASURE_COMPILE, "build: no kernel");
  int nargs = r->nin + r->nout;
  tsl_tensor *outs[MAX_TENSORS];
  void *ptrs[2 * MAX_TENSORS], *args[2 * MAX_TENSORS];
  for (int i = 0; i < r->nin; i++) ptrs[i] = r->inputs[i]->data;
  for (int o = 0; o < r->nout; o++) {
    const tsl_buffer *b = r->program->outputs[o]->buf;
    tsl_dtype dt = dtype_of(b->dtype);
    if (tsl_tensor_new(dt, r->ref[o]->ndim, r->ref[o]->shape, &outs[o]) != TSL_OK)
      worker_fail(fd, TSL_MEASURE_RUNTIME, "output");
    /* poison: elements a wrong kernel never writes must not pass as zeros */
    if (dt.code == TSL_DT_FLOAT && dt.bits == 32) {
      float *f = outs[o]->data;
      for (int64_t i = 0; i < tsl_tensor_numel(outs[o]); i++) f[i] = NAN;
    }
    ptrs[r->nin + o] = outs[o]->data;
  }
  for (int i = 0; i < nargs; i++) args[i] = &ptrs[i];
  double call0 = tsl_time_now();
  if (tsl_kernel_call(k, args, nargs) != TSL_OK) worker_fail(fd, TSL_MEASURE_RUNTIME, "run");
  call0 = tsl_time_now() - call0;
  worker_msg res = {.phase = 2, .compile_s = built.compile_s};
  if (copy_out) {
    for (int o = 0; o < r->nout; o++) memcpy(r->shared[o], outs[o]->data, r->shared_bytes[o]);
    send_msg(fd, &res);
    _exit(0);
  }
  for (int o = 0; o < r->nout; o++) {
    char what[sizeof res.msg];
    snprintf(what, sizeof what, "output %s", r->program->outputs[o]->buf->name);
    if (!tsl_measure_output_ok(outs[o], r->ref[o], r->opts.rtol, what, res.msg, sizeof res.msg)) {
      res.error_no = TSL_MEASURE_WRONG_ANSWER;
      send_msg(fd, &res);
      _exit(0);
    }
  }
  /* the first call runs cold (the kernel's scratch buffers page-fault in, caches are
   * empty: 1.5-6 ms more than warm calls of squeezenet1_1's layers here), so a slow
   * first call is checked with a second, warm one before the candidate is cut */
  if (r->slow_cutoff_s > 0 && call0 > r->slow_cutoff_s) {
    double call1 = tsl_time_now();
    if (tsl_kernel_call(k, args, nargs) != TSL_OK) worker_fail(fd, TSL_MEASURE_RUNTIME, "run");
    call1 = tsl_time_now() - call1;
    if (call1 > r->slow_cutoff_s) {
      res.costs[0] = call1;
      res.ncosts = 1;
      send_msg(fd, &res);
      _exit(0);
    }
  }
  /* one thread and no cache flush or cool-down: the CPU clock (cpu_time_kernel) */
  bool cpu_clock = tsl_get_num_threads() == 1 && !r->opts.time.cache_flush && r->opts.time.cooldown_s <= 0;
  if ((cpu_clock ? cpu_time_kernel(k, args, nargs, &r->opts.time, res.costs)
                 : tsl_time_kernel(k, args, nargs, &r->opts.time, res.costs)) != TSL_OK)
    worker_fail(fd, TSL_MEASURE_RUNTIME, "timing");
  res.ncosts = r->opts.time.repeat;
  send_msg(fd, &res);
  _exit(0);
}

tsl_status tsl_fork_piped(const char *who, pid_t *pid, int *fd) {
  int fds[2];
  if (pipe(fds) != 0) return tsl_error(TSL_ERR_RUNTIME, "%s: pipe: %s", who, strerror(errno));
  fflush(stdout);
  fflush(stderr);
  *pid = fork();
  if (*pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return tsl_error(TSL_ERR_RUNTIME, "%s: fork: %s", who, strerror(errno));
  }
  close(fds[*pid == 0 ? 0 : 1]);
  *fd = fds[*pid == 0 ? 1 : 0];
  return TSL_OK;
}

/* Forks a worker and collects its result under the timeouts. */
static tsl_status run_worker(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s, const tsl_config *c,
                             bool copy_out, tsl_measure_result *res) {
  memset(res, 0, sizeof *res);
  double start = tsl_time_now();
  int fd;
  pid_t pid;
  tsl_status fs = tsl_fork_piped("runner", &pid, &fd);
  if (fs != TSL_OK) return fs;
  if (pid == 0) {
    worker(r, fd, tpl, s, c, copy_out);
    _exit(0);
  }
  bool built = false, done = false, timed_out = false;
  double deadline = start + r->opts.build_timeout_s;
  worker_msg m;
  size_t got = 0;
  while (!done) {
    double left = deadline - tsl_time_now();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) continue;
    ssize_t n = read(fd, (char *)&m + got, sizeof m - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EOF: the worker died */
    got += (size_t)n;
    if (got < sizeof m) continue;
    got = 0;
    if (m.phase == 1) {
      built = true;
      res->compile_s = m.compile_s;
      deadline = tsl_time_now() + r->opts.run_timeout_s;
    } else {
      done = true;
      res->error_no = m.error_no;
      res->ncosts = m.ncosts < 0 ? 0 : m.ncosts > TSL_RECORD_MAX_COSTS ? TSL_RECORD_MAX_COSTS : m.ncosts;
      memcpy(res->costs, m.costs, sizeof res->costs);
      if (m.compile_s > 0) res->compile_s = m.compile_s;
      m.msg[sizeof m.msg - 1] = '\0';
      snprintf(res->error_msg, sizeof res->error_msg, "%s", m.msg);
    }
  }
  close(fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!done) {
    if (timed_out) {
      res->error_no = built ? TSL_MEASURE_RUN_TIMEOUT : TSL_MEASURE_BUILD_TIMEOUT;
      snprintf(res->error_msg, sizeof res->error_msg, "%s did not finish in %.3g s", built ? "run" : "build",
               built ? r->opts.run_timeout_s : r->opts.build_timeout_s);
    } else {
      res->error_no = built ? TSL_MEASURE_RUNTIME : TSL_MEASURE_COMPILE;
      if (WIFSIGNALED(status))
        snprintf(res->error_msg, sizeof res->error_msg, "worker killed by signal %d (%s) while %s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), built ? "running" : "building");
      else
        snprintf(res->error_msg, sizeof res->error_msg, "worker exited with status %d while %s",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, built ? "running" : "building");
    }
    res->ncosts = 0;
  }
  res->all_cost = tsl_time_now() - start;
  return TSL_OK;
}

/* ---- setup ---------------------------------------------------------------------- */

static tsl_status new_tensor_of(const tsl_buffer *b, tsl_tensor **out) {
  return tsl_tensor_new(dtype_of(b->dtype), b->ndim, b->shape, out);
}

static void count_work_of(const tsl_te_program *p, double *flops, double *macs) {
  int n = 0;
  tsl_te_op **stages = tsl_te_program_stages(p, &n);
  *flops = *macs = 0;
  for (int i = 0; i < n; i++) {
    double numel = 1;
    for (int d = 0; d < stages[i]->naxis; d++) numel *= (double)stages[i]->axis[d].extent;
    double red = 1;
    for (int d = 0; d < stages[i]->nreduce; d++) red *= (double)stages[i]->reduce_axis[d].extent;
    if (stages[i]->nreduce > 0) {
      *flops += 2 * numel * red;
      *macs += numel * red;
    } else {
      *flops += numel;
      *macs += numel;
    }
  }
}

static void count_work(tsl_runner *r) { count_work_of(r->program, &r->flops, &r->macs); }

double tsl_program_flops(const tsl_te_program *p) {
  double f = 0, m = 0;
  if (p) count_work_of(p, &f, &m);
  return f;
}

tsl_status tsl_runner_new(const tsl_target *t, const tsl_workload *w, const tsl_measure_opts *opts, tsl_runner **out) {
  if (!t || !w || !out) return tsl_error(TSL_ERR_INVALID, "runner: NULL argument");
  *out = NULL;
  tsl_measure_opts o = opts ? *opts : tsl_measure_opts_default();
  if (o.time.repeat < 1 || o.time.repeat > TSL_RECORD_MAX_COSTS || o.time.number < 1 || o.build_timeout_s <= 0 ||
      o.run_timeout_s <= 0 || o.rtol <= 0 || o.threads < 0)
    return tsl_error(TSL_ERR_INVALID, "runner: bad options (repeat 1..%d, number >= 1, timeouts > 0, rtol > 0)",
                     TSL_RECORD_MAX_COSTS);
  const char *why = NULL;
  bool remote = o.device && o.device[0]; /* the device runs t; the reference runs here */
  if (remote && o.cost_static)
    return tsl_error(TSL_ERR_INVALID, "runner: a static estimate (cost_static) needs no device (%s)", o.device);
  if (!remote && !o.cost_static && !tsl_target_runs_on_host(t, &why))
    return tsl_error(TSL_ERR_UNSUPPORTED, "runner: target %s cannot run here (%s)", t->name, why ? why : "");
  tsl_runner *r = calloc(1, sizeof *r);
  if (!r) return tsl_error(TSL_ERR_NOMEM, "runner: out of memory");
  tsl_status st_host = TSL_OK;
  r->target = *t;
  if (remote) st_host = tsl_target_parse("host", &r->target);
  r->opts = o;
  r->arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(r->arena);
  tsl_status st = st_host != TSL_OK ? st_host : tsl_workload_instantiate(w, &r->program);
  if (st == TSL_OK && (r->program->ninputs > MAX_TENSORS || r->program->noutputs > MAX_TENSORS))
    st = tsl_error(TSL_ERR_UNSUPPORTED, "runner: more than %d inputs or outputs", MAX_TENSORS);
  if (st == TSL_OK) {
    r->nin = r->program->ninputs;
    r->nout = r->program->noutputs;
    count_work(r);
  }
  for (int i = 0; st == TSL_OK && !o.cost_static && i < r->nin; i++) {
    st = new_tensor_of(r->program->inputs[i]->buf, &r->inputs[i]);
    if (st == TSL_OK) st = tsl_tensor_fill_random(r->inputs[i], o.seed + (uint64_t)i, -1.0, 1.0);
  }
  for (int k = 0; st == TSL_OK && !o.cost_static && k < r->nout; k++)
    st = new_tensor_of(r->program->outputs[k]->buf, &r->ref[k]);
  if (st != TSL_OK || o.cost_static) {
    /* nothing to check an estimate against */
  } else if (r->macs <= INTERP_MAX_MACS) {
    st = tsl_te_interpret(r->program, (const tsl_tensor *const *)r->inputs, r->ref);
  } else {
    for (int k = 0; st == TSL_OK && k < r->nout; k++) {
      r->shared_bytes[k] = tsl_tensor_nbytes(r->ref[k]);
      r->shared[k] = mmap(NULL, r->shared_bytes[k] ? r->shared_bytes[k] : 1, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (r->shared[k] == MAP_FAILED) {
        r->shared[k] = NULL;
        st = tsl_error(TSL_ERR_NOMEM, "runner: mmap of %zu bytes failed", r->shared_bytes[k]);
      }
    }
    tsl_measure_result res;
    if (st == TSL_OK) st = run_worker(r, NULL, NULL, NULL, true, &res);
    if (st == TSL_OK && res.error_no != TSL_MEASURE_OK)
      st = tsl_error(TSL_ERR_RUNTIME, "runner: reference (initial schedule) failed: %s: %s",
                     tsl_measure_error_name(res.error_no), res.error_msg);
    for (int k = 0; st == TSL_OK && k < r->nout; k++) memcpy(r->ref[k]->data, r->shared[k], r->shared_bytes[k]);
  }
  tsl_arena_set_current(prev);
  r->target = *t;
  if (st != TSL_OK) {
    tsl_runner_free(r);
    return st;
  }
  *out = r;
  return TSL_OK;
}

void tsl_runner_free(tsl_runner *r) {
  if (!r) return;
  for (int i = 0; i < MAX_TENSORS; i++) {
    tsl_tensor_free(r->inputs[i]);
    tsl_tensor_free(r->ref[i]);
    if (r->shared[i]) munmap(r->shared[i], r->shared_bytes[i] ? r->shared_bytes[i] : 1);
  }
  tsl_arena_free(r->arena);
  free(r);
}

const tsl_te_program *tsl_runner_program(const tsl_runner *r) { return r ? r->program : NULL; }

double tsl_runner_flops(const tsl_runner *r) { return r ? r->flops : 0; }

void tsl_runner_set_slow_cutoff(tsl_runner *r, double cutoff_s) {
  if (r) r->slow_cutoff_s = cutoff_s > 0 && isfinite(cutoff_s) ? cutoff_s : 0;
}

/* What a static-estimate worker sends: this, then `nentries` block-cache entries. */
typedef struct static_msg {
  int error_no;
  char msg[256];
  double cost;
  int nentries;
} static_msg;

enum { STATIC_MAX_ENTRIES = 256 };

/* The worker of static_estimate: apply, lower, estimate; never returns. */
static void static_worker(tsl_runner *r, int fd, const tsl_template *tpl, const tsl_config_space *s,
                          const tsl_config *c, int mark) {
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
  tsl_arena_set_current(tsl_arena_new());
  static_msg m;
  memset(&m, 0, sizeof m);
  tsl_schedule *sch = NULL;
  tsl_func *f = NULL;
  tsl_cost_static_detail d;
  if (tpl->apply(r->program, &r->target, s, c, &sch) != TSL_OK) {
    m.error_no = TSL_MEASURE_INSTANTIATION;
    snprintf(m.msg, sizeof m.msg, "apply: %s", tsl_last_error());
  } else {
    tsl_lower_options lo = tsl_lower_options_default();
    lo.vector_bits = r->target.vector_bits; /* as tsl_build lowers for the target */
    if (tsl_lower_with(sch, "candidate", &lo, &f) != TSL_OK ||
        tsl_cost_static_func(f, &r->target, r->opts.threads, &d) != TSL_OK) {
      m.error_no = TSL_MEASURE_COMPILE;
      snprintf(m.msg, sizeof m.msg, "static cost: %s", tsl_last_error());
    } else {
      m.cost = d.seconds;
    }
  }
  tsl_mca_entry e[STATIC_MAX_ENTRIES];
  m.nentries = tsl_mca_cache_since(mark, e, STATIC_MAX_ENTRIES);
  send_bytes(fd, &m, sizeof m);
  send_bytes(fd, e, sizeof e[0] * (size_t)m.nentries);
  _exit(0);
}

/* The static estimate of one candidate (opts.cost_static) in a forked worker, as a
 * measurement is made (a template that crashes or hangs is an error record; the worker
 * is killed after build_timeout_s + run_timeout_s). The llvm-mca results the worker
 * computed come back into this process's block cache (tuner/mca.h), so later workers
 * (forked from here) reuse them. */
static tsl_status static_estimate(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                                  const tsl_config *c, tsl_measure_result *res) {
  memset(res, 0, sizeof *res);
  double t0 = tsl_time_now(), deadline = t0 + r->opts.build_timeout_s + r->opts.run_timeout_s;
  int mark = tsl_mca_cache_mark(), fd;
  pid_t pid;
  tsl_status fs = tsl_fork_piped("runner (static cost)", &pid, &fd);
  if (fs != TSL_OK) return fs;
  if (pid == 0) static_worker(r, fd, tpl, s, c, mark);
  struct {
    static_msg m;
    tsl_mca_entry e[STATIC_MAX_ENTRIES];
  } buf;
  size_t got = 0;
  bool timed_out = false;
  for (;;) {
    double left = deadline - tsl_time_now();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {fd, POLLIN, 0};
    int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (pr <= 0) continue;
    ssize_t n = read(fd, (char *)&buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* EOF */
    got += (size_t)n;
  }
  close(fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got >= sizeof buf.m) {
    res->error_no = buf.m.error_no;
    buf.m.msg[sizeof buf.m.msg - 1] = '\0';
    snprintf(res->error_msg, sizeof res->error_msg, "%s", buf.m.msg);
    if (buf.m.error_no == TSL_MEASURE_OK) {
      res->costs[0] = buf.m.cost;
      res->ncosts = 1;
    }
    int ne = buf.m.nentries;
    if (ne > 0 && ne <= STATIC_MAX_ENTRIES && got >= sizeof buf.m + sizeof buf.e[0] * (size_t)ne)
      tsl_mca_cache_add(buf.e, ne);
  } else if (timed_out) {
    res->error_no = TSL_MEASURE_BUILD_TIMEOUT;
    snprintf(res->error_msg, sizeof res->error_msg, "static estimate did not finish in %.3g s",
             r->opts.build_timeout_s + r->opts.run_timeout_s);
  } else {
    res->error_no = TSL_MEASURE_COMPILE;
    if (WIFSIGNALED(status))
      snprintf(res->error_msg, sizeof res->error_msg, "static estimate worker killed by signal %d (%s)",
               WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      snprintf(res->error_msg, sizeof res->error_msg, "static estimate worker exited with status %d",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  res->compile_s = res->all_cost = tsl_time_now() - t0;
  return TSL_OK;
}

tsl_status tsl_runner_measure(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                              const tsl_config *c, tsl_measure_result *res) {
  if (!r || !tpl || !s || !c || !res) return tsl_error(TSL_ERR_INVALID, "runner: NULL argument");
  if (r->opts.cost_static) return static_estimate(r, tpl, s, c, res);
  if (r->opts.device && r->opts.device[0])
    return tsl_remote_measure_candidate(&r->target, r->program, r->inputs, r->nin, r->ref, r->nout, &r->opts, tpl, s,
                                        c, res);
  return run_worker(r, tpl, s, c, false, res);
}

tsl_status tsl_runner_estimate(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                               const tsl_config *c, tsl_measure_result *res) {
  if (!r || !tpl || !s || !c || !res) return tsl_error(TSL_ERR_INVALID, "runner: NULL argument");
  return static_estimate(r, tpl, s, c, res);
}

tsl_status tsl_runner_measure_batch(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                                    const tsl_config *cs, int n, tsl_measure_result *res) {
  if (!r || !tpl || !s || !cs || !res || n < 0) return tsl_error(TSL_ERR_INVALID, "runner: NULL argument");
  if (r->opts.cost_static || !r->opts.device || !strchr(r->opts.device, ','))
    return tsl_error(TSL_ERR_UNSUPPORTED, "runner: measures one by one (not a pool of devices)");
  return tsl_remote_measure_candidates(&r->target, r->program, r->inputs, r->nin, r->ref, r->nout, &r->opts, tpl, s,
                                       cs, n, res);
}
