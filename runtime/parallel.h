/* tessel runtime — the parallel-launch ABI that generated kernels call.
 *
 * Codegen turns a loop marked `parallel` into a task function over a range of the
 * loop's iterations plus a closure struct holding the values the body needs, and emits
 * a call to tsl_parallel_for. These symbols and signatures are fixed: generated code,
 * JIT-compiled or AOT-compiled for a device, calls them by name.
 *
 * The pool: persistent worker threads, created on first need, sized by
 * tsl_set_num_threads (include/tessel/runtime.h; default TSL_NUM_THREADS from the
 * environment, else the CPUs this process may run on). The calling thread runs share 0
 * itself, then every share whose worker has not started it yet (a worker asleep, or
 * descheduled by another process): a launch never waits for a thread to wake up. Under
 * the balanced schedule (the default) a thread done with its share also takes the pieces
 * of the others' shares that have not started, so a slow thread does not hold the loop
 * up. Idle workers spin for a few microseconds after a job (back-to-back launches
 * from one graph are common), then block on a condition variable; inside a warm section
 * (tsl_parallel_warm_begin, opened by every graph run) they keep spinning.
 *
 * Concurrency: one launch uses the pool at a time. When another application thread
 * calls tsl_parallel_for while the pool is busy, that second call runs its whole range
 * inline on its own thread (one task call) rather than waiting: it never blocks, never
 * deadlocks and never oversubscribes the cores. Calls from inside a task (nested
 * parallel loops) also run inline and serially, as one task call over the whole range.
 *
 * fork(): a child process starts with no workers and recreates them on its first
 * launch, so a tuner may fork measurement workers after using the pool.
 */
#ifndef TESSEL_RUNTIME_PARALLEL_H
#define TESSEL_RUNTIME_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

#include "tessel/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs iterations [begin, end) of a parallel loop; returns 0, or a nonzero error code
 * that tsl_parallel_for hands back. `closure` is the pointer given to tsl_parallel_for. */
typedef int32_t (*tsl_parallel_task)(int64_t begin, int64_t end, void *closure);

/* Runs `task` over [0, extent), split into contiguous chunks, and returns when all are
 * done (tsl_set_parallel_schedule chooses the split). Balanced schedule (the default):
 * min(threads, extent) shares whose sizes differ by at most 1, share i going to thread i
 * (the caller is thread 0), each run front to back in up to TSL_SCHED_BALANCED_PIECES
 * pieces; a thread done with its own share takes the others' last pieces not yet
 * started (from the back); after a failure no new piece starts. Static schedule: the
 * same shares, one call each.
 * Dynamic schedule: chunks of the configured size handed out in order to whichever
 * thread is free; after a failure no new chunk starts. With one thread, nested, or
 * concurrent with another launch: one call task(0, extent, closure) on the calling thread.
 * Returns 0 when every call returned 0; otherwise the code of the failing call with the
 * lowest `begin` among those that ran (a static launch runs them all, so it reports the
 * same error however threads interleave).
 * extent <= 0: returns 0 without calling the task. A NULL task returns -1. */
int32_t tsl_parallel_for(tsl_parallel_task task, void *closure, int64_t extent);

/* Reads a schedule as TSL_PARALLEL_SCHEDULE spells it (include/tessel/runtime.h):
 * "static", "balanced" (chunk 1) or "dynamic,CHUNK" (decimal, 1..INT64_MAX). false, and
 * *kind and *chunk untouched, for anything else (NULL included). */
bool tsl_parallel_schedule_parse(const char *s, tsl_sched *kind, int64_t *chunk);

/* A warm section: between tsl_parallel_warm_begin and the matching
 * tsl_parallel_warm_end the pool's idle workers spin instead of going to sleep, and
 * begin wakes any sleeping ones, so a sequence of launches separated by serial work
 * (the steps of a graph run: small or serial kernels between parallel ones) pays no
 * wake-up between launches (about as long as a small kernel, tens of microseconds in a
 * VM: bench/parallel_overhead's "after 2 ms idle" column). The cost: the workers occupy
 * their cores for the section. Sections nest and may overlap across threads (a count).
 * Returns whether a section was opened (false with one thread or inside a task); pass
 * that value to tsl_parallel_warm_end. */
bool tsl_parallel_warm_begin(void);
void tsl_parallel_warm_end(bool began);

/* Sets the calling thread's own thread count: until the next call on this thread,
 * tsl_get_num_threads called from it returns n, so that its launches use n threads
 * (the caller included) and compile-time record lookups prefer records timed with n,
 * whatever the process-wide setting (tsl_set_num_threads). n = 0 (or any value outside
 * 1..TSL_MAX_THREADS) returns the thread to the process-wide setting. Returns the
 * previous own count (0 for none), to restore it. Used by tsl_graph_run for contexts
 * with their own count (tsl_graph_ctx_set_num_threads) and by tsl_model_compile_with. */
int tsl_parallel_set_local_threads(int n);

/* Workspace for a kernel: `bytes` bytes aligned to 64, uninitialised; bytes == 0 gives
 * a valid minimal block. Returns NULL for bytes < 0 or when memory is exhausted (the
 * kernel then returns an error code). Free with tsl_kernel_free. Thread-safe. */
void *tsl_kernel_alloc(int64_t bytes);

/* Frees a block from tsl_kernel_alloc; NULL is a no-op. */
void tsl_kernel_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
