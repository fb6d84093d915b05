/* The builder/runner: measures one candidate (template + config) of one workload in an
 * isolated worker process, so that a candidate that crashes, hangs or computes garbage
 * becomes an error record and tuning goes on (AutoTVM's LocalBuilder + LocalRunner,
 * MegEngine's time-limited Fast-Run invoker).
 *
 * Per candidate the runner forks a worker that applies the template, lowers and
 * JIT-compiles the kernel (tsl_build, a fresh JIT in the worker), runs it once on the
 * workload's seeded random inputs and compares every output element with the reference,
 * then times it with the time evaluator (include/tessel/runtime.h: one warm-up, `repeat`
 * samples each at least `min_repeat_ms` long). With one thread (and no cache flush or
 * cool-down) the samples are taken on the process's CPU clock instead of the wall
 * clock, with the same protocol: on a shared machine that is the kernel's own time,
 * not the time other processes took from it. The worker reports through a pipe; the
 * parent enforces the build timeout (from fork to "built") and the run timeout (from
 * "built" to the result) by SIGKILL.
 *
 * Reference: the direct TE interpretation in float64 (dsl/te_interp.h) when the workload
 * is small (at most 2e6 multiply-adds), else the initial schedule (plain loop nests, no
 * template involved) JIT-compiled and run once in a worker. A candidate passes when, for
 * every element, |out - ref| <= rtol * max(1, max |ref|) (NaN where the reference has
 * NaN; any other NaN fails).
 */
#ifndef TESSEL_TUNER_RUNNER_H
#define TESSEL_TUNER_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "schedule/template.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tessel/tensor.h"
#include "tuner/records.h"
#include "ops/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_measure_opts {
  tsl_time_opts time;     /* the time evaluator's options (repeat <= TSL_RECORD_MAX_COSTS) */
  double build_timeout_s; /* > 0; default 20 */
  double run_timeout_s;   /* > 0; default 20 */
  int threads;            /* thread-pool threads in the worker; 0 = tsl_get_num_threads() */
  double rtol;            /* > 0; default 1e-4 */
  uint64_t seed;          /* input data seed; default 1 */
  const char *device;     /* measure on this tessel-rpc-server (tuner/remote.h), borrowed;
                             NULL = here (default) */
  const char *key;        /* the server's key when device is set */
  bool cost_static;       /* estimate instead of measuring: the static cost model
                             (tuner/cost_static.h) on the target's CPU, in this process;
                             the target need not run here, no reference is computed,
                             `threads` (0: the CPU's cores) is the cores of the split;
                             device must be NULL. Default false */
} tsl_measure_opts;

/* Defaults above, with time = tsl_time_opts_default() except min_repeat_ms 20. */
tsl_measure_opts tsl_measure_opts_default(void);

/* What one measurement gave. */
typedef struct tsl_measure_result {
  int error_no; /* tsl_measure_error */
  char error_msg[256];
  int ncosts;
  double costs[TSL_RECORD_MAX_COSTS]; /* seconds per call */
  double compile_s;                   /* lowering + JIT, in the worker */
  double all_cost;                    /* wall seconds of the whole measurement */
} tsl_measure_result;

typedef struct tsl_runner tsl_runner;

/* A runner for workload w (an operator instantiation: the template's op) on target t,
 * which must run on this machine (unless opts->device or opts->cost_static).
 * Instantiates the program, makes the inputs and computes the reference (which may take
 * a worker and the run timeout; neither with cost_static).
 * Errors: those of tsl_workload_instantiate, TSL_ERR_UNSUPPORTED (t cannot run here,
 * or non-f32 outputs), TSL_ERR_INVALID (bad opts), TSL_ERR_RUNTIME (the reference
 * failed: the message says how), TSL_ERR_NOMEM. */
tsl_status tsl_runner_new(const tsl_target *t, const tsl_workload *w, const tsl_measure_opts *opts, tsl_runner **out);
void tsl_runner_free(tsl_runner *r);

/* The runner's program (in the runner's arena; valid until tsl_runner_free). */
const tsl_te_program *tsl_runner_program(const tsl_runner *r);

/* Candidates whose first (checked) call and a second, warm call both take longer than
 * cutoff_s seconds are not timed further: the warm call's time is their one cost
 * (ncosts 1). The first call alone runs cold (the kernel's scratch buffers page-fault
 * in, caches are empty): on small layers that adds more than 10x the warm time, so it
 * would cut contenders. With a cutoff well above the best candidate so far (the tuner
 * uses 10x) no contender is cut. 0 (the default) times every candidate. Saves the
 * repeats of hopeless candidates on small budgets. */
void tsl_runner_set_slow_cutoff(tsl_runner *r, double cutoff_s);

/* Floating-point operations of one call: 2 per multiply-add of every reduction stage
 * (the output's numel times its reduction extents), 1 per element otherwise. */
double tsl_runner_flops(const tsl_runner *r);

/* tsl_runner_flops for any program. */
double tsl_program_flops(const tsl_te_program *p);

/* Measures config c of template tpl (c a point of s, the space tpl made for this
 * runner's program); with opts.cost_static, estimates it instead: apply, lower for the
 * target's vector width and tsl_cost_static_func, in this process (the estimate is
 * res->costs[0], ncosts 1; a refused config is TSL_MEASURE_INSTANTIATION, a lowering or
 * model failure TSL_MEASURE_COMPILE with the message). Every failure of the candidate
 * is a result (res->error_no), not an error. Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_RUNTIME (fork or pipe
 * failed). */
tsl_status tsl_runner_measure(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                              const tsl_config *c, tsl_measure_result *res);

/* The static estimate of config c (as tsl_runner_measure gives with opts.cost_static)
 * whatever the runner's mode: the validation of the static model against the
 * measurements of the same candidates (tsl_tune_opts.shadow_static_path). Errors: as
 * tsl_runner_measure. */
tsl_status tsl_runner_estimate(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                               const tsl_config *c, tsl_measure_result *res);

/* Measures configs cs[0..n) at once where that is faster: on a pool of devices
 * (opts.device "tcp://a:P,tcp://b:Q"), in parallel, one candidate per device at a time
 * (tuner/remote.h); res[i] is cs[i]'s result. Errors: TSL_ERR_UNSUPPORTED (not a pool:
 * measure one by one with tsl_runner_measure), TSL_ERR_INVALID (NULL arguments), a
 * lost device (TSL_ERR_IO naming it; no res[] is then valid). */
tsl_status tsl_runner_measure_batch(tsl_runner *r, const tsl_template *tpl, const tsl_config_space *s,
                                    const tsl_config *cs, int n, tsl_measure_result *res);

/* The runner's output check, also applied to what a remote device returns (tuner/remote.c):
 * true when out matches ref, both of ref's dtype and shape (read element by element as
 * float64, tsl_tensor_get_f64), i.e. for every element |out - ref| <= rtol * max(1,
 * max |ref|) over the finite elements of ref; where ref is NaN out must be NaN, where it
 * is infinite out must equal it. Otherwise false, and msg (n bytes, n > 0) receives
 * "WHAT element I is A, reference B (tolerance T)" for the first element that differs
 * (`what` names the output, e.g. "output out"). */
bool tsl_measure_output_ok(const tsl_tensor *out, const tsl_tensor *ref, double rtol, const char *what, char *msg,
                           size_t n);

/* Forks a measurement or build worker joined to the caller by a pipe (stdout and stderr
 * flushed first). Returns in both processes: *pid 0 in the child, whose *fd is the
 * pipe's write end; the child's pid in the parent, whose *fd is the read end. who names
 * the caller in the message. Errors: TSL_ERR_RUNTIME (pipe or fork failed; nothing
 * forked, no descriptor left open). */
tsl_status tsl_fork_piped(const char *who, pid_t *pid, int *fd);

#ifdef __cplusplus
}
#endif
#endif
