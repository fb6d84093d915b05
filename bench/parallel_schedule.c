/* bench/parallel_schedule: the parallel schedules (tsl_set_parallel_schedule) against each
 * other on whole models, in one process: each model is compiled once and its runs
 * alternate between the schedules in ABBA order (static, balanced, balanced, static, ...),
 * so a change of the machine's speed over the seconds of a run (a VM's other tenants)
 * hits both alike.
 *
 *   parallel_schedule [--threads N] [--pairs P] MODEL...
 *
 * MODEL: an ONNX file or a built-in model name (tsl_model_load: e.g. bresnet18).
 * --threads (default 2, 1..TSL_MAX_THREADS): the runs' thread count. --pairs (default
 * 40, 1..10000): ABBA groups, so 2 P runs of each schedule after 5 warm-up runs. The
 * input is a fixed pattern (the latency does not depend on the values). Prints per
 * model the median, 10th and 90th percentile wall time of each schedule in ms and the
 * ratio of the medians, balanced / static (below 1: balanced faster).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/runtime.h"
#include "tessel/tessel.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static bool parse_int(const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!s[0] || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* Runs one model; 0 on success, 1 on a tessel error (printed). */
static int bench_model(const char *src, int threads, long pairs) {
  tsl_model *m = NULL;
  tsl_compiled *c = NULL;
  tsl_context *ctx = NULL;
  float *x = NULL;
  double *t[2] = {calloc((size_t)pairs * 2, sizeof(double)), calloc((size_t)pairs * 2, sizeof(double))};
  size_t bytes = 0;
  int rc = 1;
  if (!t[0] || !t[1]) goto done;
  if (tsl_model_load(src, &m) != TSL_OK || tsl_model_compile(m, "host", NULL, &c) != TSL_OK ||
      tsl_context_new(c, &ctx) != TSL_OK || tsl_context_set_num_threads(ctx, threads) != TSL_OK ||
      /* the same claims on both schedules' runs (the automatic choice's rechecks would
       * fall on one schedule's slots of the ABBA order) */
      tsl_context_set_claims(ctx, TSL_CLAIMS_ALWAYS) != TSL_OK ||
      tsl_compiled_input_info(c, 0, NULL, NULL, NULL, NULL, &bytes) != TSL_OK)
    goto done;
  if (!(x = malloc(bytes ? bytes : 1))) goto done;
  for (size_t i = 0; i < bytes / sizeof(float); i++) x[i] = (float)(i * 2654435761u % 1000) / 1000.0f - 0.5f;
  if (tsl_context_set_input(ctx, 0, x, bytes) != TSL_OK) goto done;
  for (int w = 0; w < 5; w++)
    if (tsl_context_run(ctx) != TSL_OK) goto done;
  int n[2] = {0, 0};
  for (long p = 0; p < pairs; p++)
    for (int j = 0; j < 4; j++) {
      int s = j == 1 || j == 2; /* ABBA: 0 static, 1 balanced */
      if (tsl_set_parallel_schedule(s ? TSL_SCHED_BALANCED : TSL_SCHED_STATIC, 1) != TSL_OK) goto done;
      double t0 = tsl_time_now();
      if (tsl_context_run(ctx) != TSL_OK) goto done;
      t[s][n[s]++] = tsl_time_now() - t0;
    }
  for (int s = 0; s < 2; s++) qsort(t[s], (size_t)n[s], sizeof(double), cmp_double);
  const char *name = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
  printf("| %s | %d | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.3f |\n", name, threads, t[0][n[0] / 2] * 1e3,
         t[0][n[0] / 10] * 1e3, t[0][n[0] * 9 / 10] * 1e3, t[1][n[1] / 2] * 1e3, t[1][n[1] / 10] * 1e3,
         t[1][n[1] * 9 / 10] * 1e3, t[1][n[1] / 2] / t[0][n[0] / 2]);
  rc = 0;
done:
  if (rc) fprintf(stderr, "parallel_schedule: %s: %s\n", src, tsl_last_error());
  tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 1);
  free(x);
  free(t[0]);
  free(t[1]);
  tsl_context_free(ctx);
  tsl_compiled_free(c);
  tsl_model_free(m);
  return rc;
}

int main(int argc, char **argv) {
  long threads = 2, pairs = 40;
  int first = 1;
  for (; first < argc && argv[first][0] == '-'; first += 2) {
    bool ok = first + 1 < argc;
    if (ok && strcmp(argv[first], "--threads") == 0) ok = parse_int(argv[first + 1], 1, TSL_MAX_THREADS, &threads);
    else if (ok && strcmp(argv[first], "--pairs") == 0) ok = parse_int(argv[first + 1], 1, 10000, &pairs);
    else ok = false;
    if (!ok) {
      fprintf(stderr, "usage: parallel_schedule [--threads 1..%d] [--pairs 1..10000] MODEL...\n", TSL_MAX_THREADS);
      return 2;
    }
  }
  if (first >= argc) {
    fprintf(stderr, "usage: parallel_schedule [--threads 1..%d] [--pairs 1..10000] MODEL...\n", TSL_MAX_THREADS);
    return 2;
  }
  printf("parallel schedules, one process per model, runs in ABBA order: median (p10-p90) ms of %ld runs each\n\n",
         2 * pairs);
  printf("| model | threads | static | balanced | balanced / static |\n|---|---:|---:|---:|---:|\n");
  int rc = 0;
  for (int i = first; i < argc; i++) rc |= bench_model(argv[i], (int)threads, pairs);
  return rc;
}
