/* tessel-device-app: runs a whole model compiled ahead of time (`tunecli compile MODEL
 * --target T -o model.so`, models/aot_model.h) with the runtime alone — no LLVM, no IR,
 * no libffi needed —, as an application on a board would. Built for the host
 * (examples/meson.build) and for AArch64 (cross/, tests/cross), where it runs under
 * qemu-aarch64.
 *
 *   tessel-device-app [--threads N] [--repeat N] [--profile] [-o OUT]... MODEL.so INPUT...
 *
 * One INPUT per model input, in order: a file of exactly the input's bytes (raw,
 * little-endian, e.g. f32 NCHW), or seed:S for values uniform in [-1, 1) from seed S
 * (splitmix64, as tessel-device-run's seed:). The i-th -o OUT receives output i's raw
 * bytes. Prints the model's description, the wall time of each run (median of
 * --repeat, default 1; under qemu this is emulation time, not the board's) and the
 * top-5 classes of output 0 when it is f32. --profile prints each kernel call's label
 * (the graph node, and for a convolution the template that scheduled it, "(tuned)" when
 * a tuning record chose it) and its wall time in the last run.
 *
 * Only the public headers are used: built against an installed tessel with
 * `cc device_app.c $(pkg-config --cflags --libs tessel-runtime)`. Linked with the
 * static runtime instead (examples/meson.build, cross/), the executable must export the
 * runtime's symbols (-rdynamic, the whole runtime linked in) for the model's kernels.
 *
 * Exit status: 0 success; 1 a load, run or file error (the message on stderr, e.g. the
 * loader refusing an object built for another CPU); 2 a usage error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/plan.h"
#include "tessel/runtime.h"

#define MAX_OUTS 16

static int usage(void) {
  fprintf(stderr, "usage: tessel-device-app [--threads N] [--repeat N] [--profile] [-o OUT]... MODEL.so INPUT...\n"
                  "INPUT: a file of the input's raw bytes, or seed:S (uniform in [-1, 1))\n");
  return 2;
}

static int fail(const char *what) {
  fprintf(stderr, "tessel-device-app: error: %s%s%s\n", what, what[0] ? ": " : "", tsl_last_error());
  return 1;
}

static bool parse_long(const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Fills input i (info) from `spec`. */
static int fill_input(void *dst, const tsl_graph_io_info *info, const char *spec) {
  size_t bytes = (size_t)info->bytes;
  if (strncmp(spec, "seed:", 5) == 0) {
    char *end = NULL;
    errno = 0;
    uint64_t s = strtoull(spec + 5, &end, 0);
    if (errno || end == spec + 5 || *end || info->dtype.code != TSL_DT_FLOAT || info->dtype.bits != 32) {
      fprintf(stderr, "tessel-device-app: error: %s: want seed:S for an f32 input (%s is %s)\n", spec, info->name,
              tsl_dtype_str(info->dtype));
      return 1;
    }
    float *f = dst;
    for (size_t i = 0; i < bytes / 4; i++) f[i] = (float)((splitmix64(&s) >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
    return 0;
  }
  FILE *f = fopen(spec, "rb");
  if (!f) {
    fprintf(stderr, "tessel-device-app: error: %s: %s\n", spec, strerror(errno));
    return 1;
  }
  size_t got = fread(dst, 1, bytes, f);
  int extra = fgetc(f);
  fclose(f);
  if (got != bytes || extra != EOF) {
    fprintf(stderr, "tessel-device-app: error: %s: input %s wants exactly %zu bytes (%s[", spec, info->name, bytes,
            tsl_dtype_str(info->dtype));
    for (int d = 0; d < info->ndim; d++) fprintf(stderr, "%s%lld", d ? "x" : "", (long long)info->shape[d]);
    fprintf(stderr, "]), the file has %s\n", got < bytes ? "fewer" : "more");
    return 1;
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void print_top5(const float *v, int64_t n) {
  int top[5] = {-1, -1, -1, -1, -1};
  for (int k = 0; k < 5 && k < n; k++)
    for (int64_t i = 0; i < n; i++) {
      bool taken = false;
      for (int j = 0; j < k; j++) taken |= top[j] == i;
      if (!taken && (top[k] < 0 || v[i] > v[top[k]])) top[k] = (int)i;
    }
  printf("top-5 of output 0:");
  for (int k = 0; k < 5 && k < n; k++) printf(" %d (%.6g)", top[k], (double)v[top[k]]);
  printf("\n");
}

int main(int argc, char **argv) {
  long threads = 0, repeat = 1;
  bool profile = false;
  const char *outs[MAX_OUTS];
  int nouts = 0, i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    bool has_value = i + 1 < argc;
    if (strcmp(argv[i], "--threads") == 0 && has_value) {
      if (!parse_long(argv[++i], 1, TSL_MAX_THREADS, &threads)) return usage();
    } else if (strcmp(argv[i], "--repeat") == 0 && has_value) {
      if (!parse_long(argv[++i], 1, 100000, &repeat)) return usage();
    } else if (strcmp(argv[i], "--profile") == 0) {
      profile = true;
    } else if (strcmp(argv[i], "-o") == 0 && has_value && nouts < MAX_OUTS) {
      outs[nouts++] = argv[++i];
    } else {
      return usage();
    }
  }
  if (i >= argc) return usage();
  const char *path = argv[i++];
  tsl_graph_plan *plan = NULL;
  tsl_model_file_info info;
  if (tsl_model_file_load(path, &plan, &info) != TSL_OK) return fail("");
  int rc = 1;
  tsl_graph_ctx *ctx = NULL;
  double *times = NULL, *steps = NULL;
  int nin = tsl_graph_plan_num_inputs(plan), nout = tsl_graph_plan_num_outputs(plan);
  printf("model %s: compiled for %s, format v%d: %d kernel calls, %d kernels, activations %.2f MiB, weights %.2f MiB\n",
         path, info.target, info.version, info.steps, info.kernels, (double)info.arena_bytes / (1 << 20),
         (double)info.constant_bytes / (1 << 20));
  if (argc - i != nin || nouts > nout) {
    fprintf(stderr, "tessel-device-app: error: the model takes %d input(s) and has %d output(s); got %d INPUT and %d -o\n",
            nin, nout, argc - i, nouts);
    rc = 2;
    goto done;
  }
  if (tsl_graph_ctx_new(plan, &ctx) != TSL_OK) {
    rc = fail("context");
    goto done;
  }
  /* --threads: this context's own count (0: the process-wide one) */
  if (tsl_graph_ctx_set_num_threads(ctx, (int)threads) != TSL_OK) {
    rc = fail("--threads");
    goto done;
  }
  for (int k = 0; k < nin; k++) {
    tsl_graph_io_info ii = tsl_graph_plan_input_info(plan, k);
    if (fill_input(tsl_graph_ctx_input(ctx, k), &ii, argv[i + k]) != 0) goto done;
  }
  int nsteps = tsl_graph_plan_num_steps(plan);
  if (!(times = malloc((size_t)repeat * sizeof *times)) || !(steps = calloc((size_t)nsteps + 1, sizeof *steps))) {
    fprintf(stderr, "tessel-device-app: error: out of memory\n");
    goto done;
  }
  for (long r = 0; r < repeat; r++) {
    double t0 = tsl_time_now();
    if (tsl_graph_run(ctx, profile ? steps : NULL) != TSL_OK) {
      rc = fail("run");
      goto done;
    }
    times[r] = tsl_time_now() - t0;
  }
  qsort(times, (size_t)repeat, sizeof *times, cmp_double);
  /* the program cannot tell an emulator from the board: the header says what qemu's
   * time is */
  printf("threads %d, %ld run(s): median %.3f ms wall\n", tsl_graph_ctx_num_threads(ctx),
         repeat, times[repeat / 2] * 1e3);
  for (int k = 0; profile && k < nsteps; k++)
    printf("  step %3d %9.3f ms  %s\n", k, steps[k] * 1e3, tsl_graph_plan_step_label(plan, k));
  for (int k = 0; k < nouts; k++) {
    tsl_graph_io_info oi = tsl_graph_plan_output_info(plan, k);
    FILE *f = fopen(outs[k], "wb");
    bool ok = f && fwrite(tsl_graph_ctx_output(ctx, k), 1, (size_t)oi.bytes, f) == (size_t)oi.bytes;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) {
      fprintf(stderr, "tessel-device-app: error: %s: %s\n", outs[k], strerror(errno));
      goto done;
    }
  }
  tsl_graph_io_info o0 = tsl_graph_plan_output_info(plan, 0);
  if (o0.dtype.code == TSL_DT_FLOAT && o0.dtype.bits == 32) print_top5(tsl_graph_ctx_output(ctx, 0), o0.bytes / 4);
  rc = 0;
done:
  free(times);
  free(steps);
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(plan);
  return rc;
}
