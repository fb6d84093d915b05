/* bench/parallel_overhead: the cost of one empty parallel region, i.e. one
 * tsl_parallel_for (runtime/parallel.h) whose task does nothing, as generated kernels
 * launch it.
 *
 *   parallel_overhead [--threads 1,2] [--repeat N] [--min-ms MS]
 *
 * For each thread count: back-to-back launches (workers still spinning from the
 * previous one: the common case inside one kernel or graph), the same with the
 * balanced schedule (the default) and the dynamic one (chunk 1), and launches 2 ms apart (workers asleep on their
 * condition variable: the wake-up cost; then the same inside a warm section, where they
 * keep spinning). Times are per launch in microseconds: the
 * median of N samples of tsl_time_callback (each at least MS milliseconds; the
 * spaced-out case times single launches and subtracts nothing, the sleep is outside the
 * timed region).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/parallel.h"
#include "tessel/runtime.h"

enum { MAX_REPEAT = 1001 };

static int32_t empty_task(int64_t begin, int64_t end, void *closure) {
  (void)begin;
  (void)end;
  (void)closure;
  return 0;
}

typedef struct launch {
  int64_t extent;
} launch;

static int32_t one_launch(void *ctx) {
  const launch *l = ctx;
  return tsl_parallel_for(empty_task, NULL, l->extent);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof v[0], cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median microseconds per back-to-back launch. */
static double hot(int64_t extent, int repeat, double min_ms) {
  double costs[MAX_REPEAT];
  launch l = {extent};
  tsl_time_opts o = tsl_time_opts_default();
  o.repeat = repeat;
  o.min_repeat_ms = min_ms;
  if (tsl_time_callback(one_launch, &l, "tsl_parallel_for", &o, costs) != TSL_OK) {
    fprintf(stderr, "parallel_overhead: %s\n", tsl_last_error());
    exit(1);
  }
  return median(costs, repeat) * 1e6;
}

/* Median microseconds of a launch that comes 2 ms after the previous one; `warm`: the
 * 2 ms inside a warm section (runtime/parallel.h, as between a graph run's steps). */
static double cold(int64_t extent, int repeat, bool warm) {
  double costs[MAX_REPEAT];
  struct timespec gap = {0, 2000000};
  bool began = warm && tsl_parallel_warm_begin();
  for (int r = 0; r < repeat; r++) {
    nanosleep(&gap, NULL);
    double t0 = tsl_time_now();
    tsl_parallel_for(empty_task, NULL, extent);
    costs[r] = tsl_time_now() - t0;
  }
  tsl_parallel_warm_end(began);
  return median(costs, repeat) * 1e6;
}

int main(int argc, char **argv) {
  int threads[8] = {1, 2}, nthreads = 2, repeat = 11;
  double min_ms = 50.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--threads") == 0) {
      nthreads = 0;
      for (char *tok = strtok(argv[i + 1], ","); tok && nthreads < 8; tok = strtok(NULL, ","))
        threads[nthreads++] = atoi(tok);
    } else if (strcmp(argv[i], "--repeat") == 0) {
      repeat = atoi(argv[i + 1]);
    } else if (strcmp(argv[i], "--min-ms") == 0) {
      min_ms = atof(argv[i + 1]);
    } else {
      fprintf(stderr, "usage: parallel_overhead [--threads 1,2] [--repeat N] [--min-ms MS]\n");
      return 2;
    }
  }
  if (repeat < 1 || repeat > MAX_REPEAT || min_ms < 0) {
    fprintf(stderr, "parallel_overhead: --repeat must be 1..%d and --min-ms >= 0\n", MAX_REPEAT);
    return 2;
  }
  printf("empty parallel region (tsl_parallel_for, task does nothing), microseconds per launch, median of %d\n",
         repeat);
  printf("%7s | %14s | %14s | %16s | %22s | %22s\n", "threads", "static, hot", "balanced, hot", "dynamic(1), hot",
         "static, after 2 ms idle", "same, in a warm section");
  for (int t = 0; t < nthreads; t++) {
    if (tsl_set_num_threads(threads[t]) != TSL_OK) {
      fprintf(stderr, "parallel_overhead: %s\n", tsl_last_error());
      return 1;
    }
    int64_t extent = threads[t];
    tsl_set_parallel_schedule(TSL_SCHED_STATIC, 1);
    tsl_parallel_for(empty_task, NULL, extent); /* start the workers */
    double h = hot(extent, repeat, min_ms);
    tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 1);
    double bal = hot(extent, repeat, min_ms);
    tsl_set_parallel_schedule(TSL_SCHED_DYNAMIC, 1);
    double d = hot(extent, repeat, min_ms);
    tsl_set_parallel_schedule(TSL_SCHED_STATIC, 1);
    double c = cold(extent, repeat, false), w = cold(extent, repeat, true);
    printf("%7d | %14.3f | %14.3f | %16.3f | %22.3f | %22.3f\n", threads[t], h, bal, d, c, w);
  }
  tsl_thread_pool_shutdown();
  return 0;
}
