/* Building tuning candidates for a remote device, in forked children (remote_build.h). */
#include "tuner/remote_build.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/aot.h"
#include "ir/arena.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"

/* What a build child writes back on its pipe. */
typedef struct build_msg {
  int error_no;
  double compile_s;
  char msg[256];
} build_msg;

static void build_worker(int fd, const char *so, const tsl_target *t, const tsl_te_program *p,
                         const tsl_template *tpl, const tsl_config_space *s, const tsl_config *c) {
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
  tsl_arena *a = tsl_arena_new();
  tsl_arena_set_current(a);
  build_msg m = {.error_no = TSL_MEASURE_OK};
  double t0 = tsl_time_now();
  tsl_schedule *sch = NULL;
  tsl_func *f = NULL;
  tsl_lower_options lo = tsl_lower_options_default();
  lo.vector_bits = t->vector_bits;
  const char *step = "apply";
  tsl_status st = tpl->apply(p, t, s, c, &sch);
  if (st != TSL_OK) m.error_no = TSL_MEASURE_INSTANTIATION;
  if (st == TSL_OK && (st = tsl_lower_with(sch, "candidate", &lo, &f)) != TSL_OK) step = "lower";
  const tsl_func *funcs[1] = {f};
  if (st == TSL_OK && (st = tsl_aot_compile(funcs, 1, t, so)) != TSL_OK) step = "compile";
  if (st != TSL_OK) {
    if (m.error_no == TSL_MEASURE_OK) m.error_no = TSL_MEASURE_COMPILE;
    snprintf(m.msg, sizeof m.msg, "%s: %s", step, tsl_last_error());
  }
  m.compile_s = tsl_time_now() - t0;
  ssize_t w;
  do w = write(fd, &m, sizeof m);
  while (w < 0 && errno == EINTR);
  _exit(0);
}

/* A build child in flight. */
typedef struct child {
  pid_t pid;
  int fd;
  double deadline;
} child;

void tsl_remote_build_path(const char *dir, int i, char *out, size_t n) { snprintf(out, n, "%s/cand%d.so", dir, i); }

static tsl_status start(child *c, const char *so, const tsl_target *t, const tsl_te_program *p,
                        const tsl_measure_opts *o, const tsl_template *tpl, const tsl_config_space *s,
                        const tsl_config *cfg) {
  int fd;
  pid_t pid;
  tsl_status st = tsl_fork_piped("remote build", &pid, &fd);
  if (st != TSL_OK) return st;
  if (pid == 0) build_worker(fd, so, t, p, tpl, s, cfg);
  c->pid = pid;
  c->fd = fd;
  c->deadline = tsl_time_now() + o->build_timeout_s;
  return TSL_OK;
}

/* Waits for c's message until its deadline, reaps it and fills res. */
static void finish(child *c, const tsl_measure_opts *o, tsl_measure_result *res) {
  build_msg m;
  size_t got = 0;
  bool timed_out = false;
  while (got < sizeof m) {
    double left = c->deadline - tsl_time_now();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {c->fd, POLLIN, 0};
    int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (pr <= 0) continue;
    ssize_t n = read(c->fd, (char *)&m + got, sizeof m - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(c->fd);
  if (timed_out) kill(c->pid, SIGKILL);
  int status = 0;
  while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == sizeof m) {
    res->compile_s = m.compile_s;
    res->error_no = m.error_no;
    m.msg[sizeof m.msg - 1] = '\0';
    snprintf(res->error_msg, sizeof res->error_msg, "%s", m.msg);
  } else if (timed_out) {
    res->error_no = TSL_MEASURE_BUILD_TIMEOUT;
    snprintf(res->error_msg, sizeof res->error_msg, "build did not finish in %.3g s", o->build_timeout_s);
  } else {
    res->error_no = TSL_MEASURE_COMPILE;
    if (WIFSIGNALED(status))
      snprintf(res->error_msg, sizeof res->error_msg, "builder killed by signal %d (%s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    else
      snprintf(res->error_msg, sizeof res->error_msg, "builder exited with status %d",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
}

tsl_status tsl_remote_build_batch(const char *dir, const tsl_target *t, const tsl_te_program *p,
                                  const tsl_measure_opts *o, const tsl_template *tpl, const tsl_config_space *s,
                                  const tsl_config *cs, int n, int jobs, tsl_measure_result *res) {
  if (jobs < 1) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    jobs = cores > 0 ? (int)cores : 1;
  }
  if (jobs > 64) jobs = 64;
  child ring[64];
  char so[4096];
  int started = 0, done = 0;
  tsl_status st = TSL_OK;
  for (int i = 0; i < n; i++) memset(&res[i], 0, sizeof res[i]);
  while (done < n) {
    while (st == TSL_OK && started < n && started - done < jobs) {
      tsl_remote_build_path(dir, started, so, sizeof so);
      st = start(&ring[started % jobs], so, t, p, o, tpl, s, &cs[started]);
      if (st == TSL_OK) started++;
    }
    if (done == started) break;
    child *c = &ring[done % jobs];
    if (st != TSL_OK) { /* a failed fork: reap the rest, keep no object */
      kill(c->pid, SIGKILL);
      c->deadline = 0;
    }
    finish(c, o, &res[done]);
    if (st != TSL_OK || res[done].error_no != TSL_MEASURE_OK) {
      tsl_remote_build_path(dir, done, so, sizeof so);
      unlink(so);
    }
    done++;
  }
  return st;
}
