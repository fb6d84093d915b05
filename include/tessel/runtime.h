/* tessel — runtime controls: the thread pool and timing.
 *
 * The thread pool runs the parallel loops of generated kernels (runtime/parallel.h
 * holds the launch ABI the kernels call). Its settings are process-wide and take
 * effect at the next launch; the thread count may also be set per compiled model or
 * per context (tessel/tessel.h, tessel/plan.h).
 *
 * The time evaluator follows TVM's `time_evaluator` (WrapTimeEvaluator in apache/tvm's
 * runtime): one discarded warm-up call, then `repeat` samples;
 * each sample times `number` back-to-back calls and reports seconds per call, and
 * `number` grows until one sample lasts at least `min_repeat_ms`.
 */
#ifndef TESSEL_RUNTIME_H
#define TESSEL_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most threads the pool runs (the caller included). */
#define TSL_MAX_THREADS 256

/* Sets the process-wide number of threads later tsl_parallel_for calls use, the calling
 * thread included: n = 1 runs every loop on the caller and uses no workers. A compiled
 * model or a context may have its own count instead (tsl_compile_opts.num_threads,
 * tsl_context_set_num_threads in tessel/tessel.h; tsl_graph_ctx_set_num_threads in
 * tessel/plan.h), applied to its runs only.
 * Errors: TSL_ERR_INVALID (n outside 1..TSL_MAX_THREADS). */
tsl_status tsl_set_num_threads(int n);

/* The number of threads parallel loops launched from the calling thread use: during a
 * run with its own count (a context's or compiled model's, above), that count; otherwise
 * the process-wide one. Until tsl_set_num_threads is called, the latter is the
 * TSL_NUM_THREADS environment variable when it holds an integer in
 * 1..TSL_MAX_THREADS (otherwise a warning on stderr, once), else the number of online
 * CPUs this process's affinity mask allows, at most TSL_MAX_THREADS. */
int tsl_get_num_threads(void);

typedef enum {
  TSL_SCHED_STATIC,   /* one contiguous chunk per thread, sizes differing by <= 1 */
  TSL_SCHED_DYNAMIC,  /* chunks of a fixed size, handed out to whichever thread is free */
  TSL_SCHED_BALANCED  /* the default: STATIC's contiguous share per thread, each run front
                         to back in TSL_SCHED_BALANCED_PIECES pieces; a thread done with its
                         share takes the others' pieces not yet started from their back
                         (work stealing, as TBB's and ONNX Runtime's pools balance a loop),
                         so a thread slowed by the machine (a busy SMT sibling, a preempted
                         vCPU) no longer holds the whole loop up. Which call fails first,
                         and so the error code returned, may vary from run to run */
} tsl_sched;

/* The pieces each thread's share is cut into under TSL_SCHED_BALANCED (fewer when the
 * share has fewer iterations). */
#define TSL_SCHED_BALANCED_PIECES 8

/* Chooses how tsl_parallel_for splits its range. The default is TSL_SCHED_BALANCED, or
 * what the environment variable TSL_PARALLEL_SCHEDULE says: "static", "balanced" or
 * "dynamic,CHUNK" (as OpenMP's OMP_SCHEDULE; another value is ignored with a warning on
 * stderr, once); this call overrides it.
 * `chunk` is the dynamic chunk size in iterations (>= 1), ignored for the other kinds.
 * Whatever the kind, every iteration runs exactly once and a task sees contiguous
 * [begin, end) ranges only.
 * Errors: TSL_ERR_INVALID (unknown kind, dynamic chunk < 1). */
tsl_status tsl_set_parallel_schedule(tsl_sched kind, int64_t chunk);

/* The current schedule and dynamic chunk size (either pointer may be NULL). */
void tsl_get_parallel_schedule(tsl_sched *kind, int64_t *chunk);

/* When a context's runs of 2+ threads claim the outputs the plan marks (docs/capi.md
 * "Claimed outputs"; tessel/plan.h tsl_graph_ctx_set_claims, tessel/tessel.h
 * tsl_context_set_claims). */
typedef enum tsl_claims_mode {
  TSL_CLAIMS_AUTO = 0,   /* the default: the first 8 runs that could claim go claimed,
                            unclaimed, unclaimed, claimed, claimed, ... (ABBA), then runs
                            claim if the median of claimed / unclaimed wall times of
                            neighbouring runs is below 1, the other kind checked again on
                            two runs in 32 (runtime/claim_policy.h). A run that overlaps
                            another thread's run (its loops then run on its own thread)
                            is timed as any other */
  TSL_CLAIMS_ALWAYS = 1, /* every run that can */
  TSL_CLAIMS_NEVER = 2
} tsl_claims_mode;

/* Stops and joins the pool's worker threads (they are recreated by the next launch).
 * For leak checkers and orderly shutdown; must not run concurrently with a launch
 * from another thread, and is a no-op when called from inside a parallel task. */
void tsl_thread_pool_shutdown(void);

/* Seconds from CLOCK_MONOTONIC (an arbitrary origin: use differences). */
double tsl_time_now(void);

/* Options of the time evaluator. */
typedef struct tsl_time_opts {
  int number;           /* calls per sample to start with, >= 1 (grows, see above) */
  int repeat;           /* samples, >= 1: the length of the costs array */
  double min_repeat_ms; /* least duration of one sample in milliseconds, >= 0 */
  bool cache_flush;     /* write a 64 MiB buffer (larger than the last-level cache) from
                           every pool thread before each sample: cold-cache timing */
  double cooldown_s;    /* seconds to sleep between samples, >= 0 */
} tsl_time_opts;

/* Defaults: number 1, repeat 3, min_repeat_ms 10, no cache flush, no cool-down. */
tsl_time_opts tsl_time_opts_default(void);

/* A timed callable: returns 0 on success or a nonzero error code. */
typedef int32_t (*tsl_timed_fn)(void *ctx);

/* Times fn(ctx) (e.g. a whole model run: tsl_context_run, tsl_graph_run) and writes
 * opts->repeat costs, in seconds per call, to `costs`. `opts` NULL means the defaults.
 * When min_repeat_ms is not reached, `number` grows to the estimate that would reach
 * it (at least x1.618) and the sample is taken again; the grown number carries over
 * to later samples. `what` names fn in error messages ("what returned CODE").
 * (The library's tuner times single kernels the same way: tsl_time_kernel,
 * runtime/module.h.)
 * Errors: TSL_ERR_INVALID (NULL fn or costs, invalid options), TSL_ERR_RUNTIME (a call
 * returned nonzero: costs are then unspecified), TSL_ERR_NOMEM (the flush buffer). */
tsl_status tsl_time_callback(tsl_timed_fn fn, void *ctx, const char *what, const tsl_time_opts *opts,
                             double *costs);

#ifdef __cplusplus
}
#endif
#endif
