/* tunecli run MODEL: compile a whole model (built-in name or ONNX file), run it with the
 * graph executor, and report latency, memory and the top-5 classes of output 0. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "op_args.h"
#include "runtime/file_replace.h"
#include "tessel/runtime.h"
#include "tessel/tessel.h"
#include "tunecli.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool parse_int(const char *s, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (!*s || *end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static int fail(tsl_status st) { return tunecli_fail("run", st); }

typedef struct step_time {
  int step;
  double ms, min_ms;
} step_time;

static int cmp_step_desc(const void *a, const void *b) {
  double x = ((const step_time *)a)->ms, y = ((const step_time *)b)->ms;
  return x > y ? -1 : x < y;
}

/* --profile: each kernel call's median (and min) time over `repeat` runs, largest first,
 * with its share of the sum of medians. */
static int print_profile(const tsl_compiled *c, tsl_context *ctx, long repeat) {
  int ns = tsl_compiled_num_steps(c);
  double *all = malloc((size_t)(ns ? ns : 1) * (size_t)repeat * sizeof *all), *one = malloc((size_t)(ns ? ns : 1) * sizeof *one);
  step_time *st = malloc((size_t)(ns ? ns : 1) * sizeof *st);
  int rc = 0;
  if (!all || !one || !st) {
    rc = fail(tsl_error(TSL_ERR_NOMEM, "run: out of memory"));
    goto out;
  }
  for (long r = 0; r < repeat; r++) {
    tsl_status s = tsl_context_run_profiled(ctx, one);
    if (s != TSL_OK) {
      rc = fail(s);
      goto out;
    }
    for (int i = 0; i < ns; i++) all[(size_t)i * (size_t)repeat + (size_t)r] = one[i];
  }
  double total = 0;
  for (int i = 0; i < ns; i++) {
    double *v = all + (size_t)i * (size_t)repeat;
    qsort(v, (size_t)repeat, sizeof *v, cmp_double);
    st[i] = (step_time){i, 1e3 * (repeat % 2 ? v[repeat / 2] : 0.5 * (v[repeat / 2 - 1] + v[repeat / 2])), 1e3 * v[0]};
    total += st[i].ms;
  }
  qsort(st, (size_t)ns, sizeof *st, cmp_step_desc);
  printf("profile: %d kernel calls, sum of per-call medians %.3f ms (largest first)\n", ns, total);
  printf("  %4s %9s %9s %6s  %s\n", "step", "median ms", "min ms", "%", "node [conv template]");
  for (int i = 0; i < ns; i++)
    printf("  %4d %9.3f %9.3f %5.1f%%  %s\n", st[i].step, st[i].ms, st[i].min_ms,
           total > 0 ? 100.0 * st[i].ms / total : 0.0, tsl_compiled_step_label(c, st[i].step));
out:
  free(all);
  free(one);
  free(st);
  return rc;
}

int tunecli_run(int argc, char **argv) {
  const char *model = NULL, *records = NULL, *input = NULL, *output = NULL, *target = "host";
  long threads = 0, repeat = 10;
  bool profile = false, verbose = false, no_auto = false, no_claim = false;
  tsl_claims_mode claims = TSL_CLAIMS_AUTO;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "--records") == 0 && has_value) records = argv[++i];
    else if (strcmp(a, "--input") == 0 && has_value) input = argv[++i];
    else if (strcmp(a, "--output") == 0 && has_value) output = argv[++i];
    else if (strcmp(a, "--target") == 0 && has_value) target = argv[++i];
    else if (strcmp(a, "--threads") == 0 && has_value) {
      if (!parse_int(argv[++i], 1, TSL_MAX_THREADS, &threads)) {
        fprintf(stderr, "tunecli run: error: --threads wants an integer in 1..%d, got '%s'\n", TSL_MAX_THREADS, argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--repeat") == 0 && has_value) {
      if (!parse_int(argv[++i], 1, 1000000, &repeat)) {
        fprintf(stderr, "tunecli run: error: --repeat wants an integer in 1..1000000, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--profile") == 0) {
      profile = true;
    } else if (strcmp(a, "--verbose") == 0) {
      verbose = true;
    } else if (strcmp(a, "--no-auto-schedule") == 0) {
      no_auto = true;
    } else if (strcmp(a, "--no-claim-outputs") == 0) {
      no_claim = true;
    } else if (strcmp(a, "--claims") == 0 && has_value) {
      const char *v = argv[++i];
      if (strcmp(v, "auto") == 0) claims = TSL_CLAIMS_AUTO;
      else if (strcmp(v, "always") == 0) claims = TSL_CLAIMS_ALWAYS;
      else if (strcmp(v, "never") == 0) claims = TSL_CLAIMS_NEVER;
      else {
        fprintf(stderr, "tunecli run: error: --claims wants auto, always or never, got '%s'\n", v);
        return 2;
      }
    } else if (a[0] == '-' ) {
      fprintf(stderr, "tunecli run: error: unknown option or missing value '%s' (see tunecli help)\n", a);
      return 2;
    } else if (!model) {
      model = a;
    } else {
      fprintf(stderr, "tunecli run: error: one model please (got '%s' and '%s')\n", model, a);
      return 2;
    }
  }
  if (!model) {
    fprintf(stderr, "tunecli run: error: which model? (a built-in name such as squeezenet1_1, or an .onnx file)\n");
    return 2;
  }
  if (threads > 0 && tsl_set_num_threads((int)threads) != TSL_OK) return fail(TSL_ERR_INVALID);
  tsl_model *m = NULL;
  tsl_compiled *c = NULL;
  tsl_context *ctx = NULL;
  float *in = NULL, *out = NULL;
  double *times = NULL;
  int rc = 1;
  tsl_status st;
  double t0 = tsl_time_now();
  if ((st = tsl_model_load(model, &m)) != TSL_OK) return fail(st);
  double t1 = tsl_time_now();
  tsl_compile_opts co = tsl_compile_opts_default();
  co.target = target;
  co.records = records;
  co.verbose = verbose;
  co.no_auto_schedule = no_auto;
  co.no_claim_outputs = no_claim;
  if ((st = tsl_model_compile_with(m, &co, &c)) != TSL_OK) {
    rc = fail(st);
    goto done;
  }
  double t2 = tsl_time_now();
  if ((st = tsl_context_new(c, &ctx)) != TSL_OK || (st = tsl_context_set_claims(ctx, claims)) != TSL_OK) {
    rc = fail(st);
    goto done;
  }
  size_t in_bytes, out_bytes;
  int ndim;
  int64_t shape[TSL_MAX_NDIM];
  tsl_dtype dt;
  tsl_compiled_input_info(c, 0, NULL, &dt, &ndim, shape, &in_bytes);
  tsl_compiled_output_info(c, 0, NULL, NULL, NULL, NULL, &out_bytes);
  in = malloc(in_bytes ? in_bytes : 1);
  out = malloc(out_bytes ? out_bytes : 1);
  times = malloc((size_t)repeat * sizeof *times);
  if (!in || !out || !times) {
    rc = fail(tsl_error(TSL_ERR_NOMEM, "run: out of memory"));
    goto done;
  }
  if (input) {
    FILE *f = fopen(input, "rb");
    size_t got = f ? fread(in, 1, in_bytes, f) : 0;
    int extra = f ? fgetc(f) : EOF;
    if (f) fclose(f);
    if (!f || got != in_bytes || extra != EOF) {
      rc = fail(tsl_error(TSL_ERR_IO, "run: %s: want exactly %zu bytes of raw little-endian input (%s)", input, in_bytes,
                          f ? "wrong size" : strerror(errno)));
      goto done;
    }
  } else {
    tsl_tensor *t = NULL;
    if ((st = tsl_tensor_new(dt, ndim, shape, &t)) != TSL_OK || (st = tsl_tensor_fill_random(t, 1, -1.0, 1.0)) != TSL_OK) {
      tsl_tensor_free(t);
      rc = fail(st);
      goto done;
    }
    memcpy(in, t->data, in_bytes);
    tsl_tensor_free(t);
  }
  if ((st = tsl_context_set_input(ctx, 0, in, in_bytes)) != TSL_OK || (st = tsl_context_run(ctx)) != TSL_OK) {
    rc = fail(st);
    goto done;
  }
  /* --claims auto: the trial's runs (tsl_claims_mode) as warm-ups, not timed */
  for (int w = 0; w < 16 && tsl_context_claims_kept(ctx) < 0 && tsl_context_num_threads(ctx) > 1; w++)
    if ((st = tsl_context_run(ctx)) != TSL_OK) {
      rc = fail(st);
      goto done;
    }
  for (long r = 0; r < repeat; r++) {
    double s = tsl_time_now();
    if ((st = tsl_context_run(ctx)) != TSL_OK) {
      rc = fail(st);
      goto done;
    }
    times[r] = tsl_time_now() - s;
  }
  if ((st = tsl_context_get_output(ctx, 0, out, out_bytes)) != TSL_OK) {
    rc = fail(st);
    goto done;
  }
  if (output) {
    /* written whole to a temporary name, then renamed: a failed write never leaves a
     * truncated file under the name asked for (through a symlink onto its file; a FIFO
     * or a device is written in place) */
    char tmp[4096], target[4096];
    bool in_place = false;
    if ((st = tsl_file_replace_target(output, target, sizeof target - 32, &in_place)) != TSL_OK) {
      rc = fail(st);
      goto done;
    }
    int len = in_place ? snprintf(tmp, sizeof tmp, "%s", target) : snprintf(tmp, sizeof tmp, "%s.tmp", target);
    FILE *f = len > 0 && (size_t)len < sizeof tmp ? fopen(tmp, "wb") : NULL;
    bool ok = f && fwrite(out, 1, out_bytes, f) == out_bytes;
    if (f) ok = fclose(f) == 0 && ok;
    if (ok && !in_place) ok = rename(tmp, target) == 0;
    if (!ok) {
      if (f && !in_place) remove(tmp);
      rc = fail(tsl_error(TSL_ERR_IO, "run: --output %s: cannot write %zu bytes (%s)", output, out_bytes, strerror(errno)));
      goto done;
    }
  }
  qsort(times, (size_t)repeat, sizeof *times, cmp_double);
  double median = repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("model %s: load %.1f ms, compile %.1f ms (%d kernel calls, %d distinct kernels)\n", model, (t1 - t0) * 1e3,
         (t2 - t1) * 1e3, tsl_compiled_num_steps(c), tsl_compiled_num_kernels(c));
  if (records) printf("records %s: %d kernels tuned, the others default\n", records, tsl_compiled_num_tuned_kernels(c));
  if (tsl_compiled_num_claimed_outputs(c) > 0)
    printf("claimed outputs: %d steps (zeroed per thread just before their kernel on runs of 2+ threads that "
           "claim; --claims %s%s)\n",
           tsl_compiled_num_claimed_outputs(c),
           claims == TSL_CLAIMS_AUTO ? "auto" : claims == TSL_CLAIMS_ALWAYS ? "always" : "never",
           claims != TSL_CLAIMS_AUTO || tsl_context_num_threads(ctx) < 2 ? ""
           : tsl_context_claims_kept(ctx) == 1 ? ", timed faster here: claiming"
           : tsl_context_claims_kept(ctx) == 0 ? ", timed faster here: not claiming"
                                               : ", still in its trial");
  printf("threads %d, %ld runs: median %.3f ms, min %.3f ms\n", tsl_get_num_threads(), repeat, median * 1e3,
         times[0] * 1e3);
  printf("memory: planned peak activations %.2f MiB, weights %.2f MiB, process max RSS %.1f MiB\n",
         (double)tsl_compiled_activation_bytes(c) / (1 << 20), (double)tsl_compiled_weight_bytes(c) / (1 << 20),
         (double)ru.ru_maxrss / 1024.0);
  if (profile && (rc = print_profile(c, ctx, repeat)) != 0) goto done;
  int64_t n = (int64_t)(out_bytes / sizeof(float));
  int top[5] = {-1, -1, -1, -1, -1};
  for (int k = 0; k < 5 && k < n; k++) {
    for (int64_t i = 0; i < n; i++) {
      bool taken = false;
      for (int j = 0; j < k; j++) taken |= top[j] == i;
      if (!taken && (top[k] < 0 || out[i] > out[top[k]])) top[k] = (int)i;
    }
  }
  printf("top-5 of output 0:");
  for (int k = 0; k < 5 && k < n; k++) printf(" %d (%.4g)", top[k], out[top[k]]);
  printf("\n");
  rc = 0;
done:
  free(in);
  free(out);
  free(times);
  tsl_context_free(ctx);
  tsl_compiled_free(c);
  tsl_model_free(m);
  return rc;
}
