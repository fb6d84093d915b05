/* model_info: what an application asks the C API about a model before running it.
 *
 *   tessel-model-info MODEL [--batch N] [--threads N]
 *
 * MODEL is a built-in name (squeezenet1_1, resnet18, ...) or an .onnx file. Prints the
 * library's version, soname and model-file format; compiles the model (at batch N when
 * given: tsl_model_set_batch) with its own thread count (tsl_compile_opts.num_threads;
 * 0 or absent: the process-wide count); lists every input and output by index with its
 * name, dtype and shape and finds each again by name; then runs once on inputs of
 * zeros, filled by name, and prints each output's sum and its first value.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/tessel.h"

static int fail(const char *what) {
  fprintf(stderr, "tessel-model-info: %s: %s\n", what, tsl_last_error());
  return 1;
}

/* A whole decimal number in [lo, hi], nothing else ("--batch 0" or "--batch x" is refused,
 * not ignored). */
static bool parse_count(const char *flag, const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  bool digits = v[0] >= '0' && v[0] <= '9'; /* no sign, no blank: "+3", " 3" are refused too */
  if (v[0] == '-' && lo < 0) digits = v[1] >= '0' && v[1] <= '9';
  if (!digits || end == v || *end || errno || n < lo || n > hi) {
    fprintf(stderr, "tessel-model-info: %s wants a whole number from %ld to %ld, got '%s'\n", flag, lo, hi, v);
    return false;
  }
  *out = n;
  return true;
}

static void print_shape(int ndim, const int64_t *shape) {
  printf("[");
  for (int d = 0; d < ndim; d++) printf("%s%lld", d ? ", " : "", (long long)shape[d]);
  printf("]");
}

/* Prints input or output i of c ("input 0 'input' f32 [1, 3, 224, 224]") and checks
 * that its name leads back to i. */
static int describe(const tsl_compiled *c, bool input, int i, const char **name, size_t *bytes) {
  tsl_dtype dt;
  int ndim, again = -1;
  int64_t shape[TSL_MAX_NDIM];
  tsl_status st = input ? tsl_compiled_input_info(c, i, name, &dt, &ndim, shape, bytes)
                        : tsl_compiled_output_info(c, i, name, &dt, &ndim, shape, bytes);
  if (st != TSL_OK) return fail("info");
  st = input ? tsl_compiled_input_index(c, *name, &again) : tsl_compiled_output_index(c, *name, &again);
  if (st != TSL_OK || again != i) return fail("lookup by name");
  printf("%s %d '%s' %s ", input ? "input" : "output", i, *name, tsl_dtype_str(dt));
  print_shape(ndim, shape);
  printf(" (%zu bytes)\n", *bytes);
  return 0;
}

int main(int argc, char **argv) {
  const char *model = NULL;
  long batch = 0, threads = 0;
  bool extra = false;
  bool seen_batch = false, seen_threads = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: tessel-model-info MODEL [--batch N] [--threads N]\n");
      return 0;
    }
    bool is_batch = strcmp(argv[i], "--batch") == 0, is_threads = strcmp(argv[i], "--threads") == 0;
    if ((is_batch || is_threads) && i + 1 >= argc) {
      fprintf(stderr, "tessel-model-info: %s needs a value\n", argv[i]);
      return 2;
    }
    if ((is_batch && seen_batch) || (is_threads && seen_threads)) {
      fprintf(stderr, "tessel-model-info: %s is given twice\n", argv[i]);
      return 2;
    }
    if (is_batch) {
      seen_batch = true;
      if (!parse_count("--batch", argv[++i], 1, 1L << 20, &batch)) return 2;
    } else if (is_threads) {
      seen_threads = true;
      if (!parse_count("--threads", argv[++i], 0, TSL_MAX_THREADS, &threads)) return 2;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "tessel-model-info: unknown option '%s' (usage: tessel-model-info MODEL [--batch N] [--threads N])\n",
              argv[i]);
      return 2;
    } else if (!model) model = argv[i];
    else extra = true;
  }
  if (!model || extra) {
    fprintf(stderr, "usage: tessel-model-info MODEL [--batch N] [--threads N]\n");
    return 2;
  }
  int major, minor, patch;
  char numbers[64];
  tsl_version_numbers(&major, &minor, &patch);
  snprintf(numbers, sizeof numbers, "%d.%d.%d", major, minor, patch);
  printf("tessel %s (libtessel.so.%s, model files v%d)\n", numbers, TSL_SOVERSION, tsl_model_file_format_version());
  if (strcmp(numbers, tsl_version_string()) != 0) {
    fprintf(stderr, "tessel-model-info: version numbers %s, version string %s\n", numbers, tsl_version_string());
    return 1;
  }
  if (strcmp(tsl_version_string(), TSL_VERSION_STRING) != 0)
    printf("note: compiled with the headers of %s\n", TSL_VERSION_STRING);
  tsl_model *m;
  tsl_compiled *c;
  if (tsl_model_load(model, &m) != TSL_OK) return fail("load");
  if (batch > 0 && tsl_model_set_batch(m, batch) != TSL_OK) return fail("batch");
  tsl_compile_opts o = tsl_compile_opts_default();
  o.num_threads = (int)threads;
  if (tsl_model_compile_with(m, &o, &c) != TSL_OK) return fail("compile");
  tsl_model_free(m);
  tsl_context *ctx;
  if (tsl_context_new(c, &ctx) != TSL_OK) return fail("context");
  printf("%s: %d input(s), %d output(s), %d thread(s) per run\n", model, tsl_compiled_num_inputs(c),
         tsl_compiled_num_outputs(c), tsl_context_num_threads(ctx));
  int status = 0;
  for (int i = 0; i < tsl_compiled_num_inputs(c) && !status; i++) {
    const char *name;
    size_t bytes;
    if ((status = describe(c, true, i, &name, &bytes))) break;
    void *zeros = calloc(1, bytes ? bytes : 1);
    if (!zeros || tsl_context_set_input_by_name(ctx, name, zeros, bytes) != TSL_OK) status = fail("input");
    free(zeros);
  }
  if (!status && tsl_context_run(ctx) != TSL_OK) status = fail("run");
  for (int i = 0; i < tsl_compiled_num_outputs(c) && !status; i++) {
    const char *name;
    size_t bytes;
    if ((status = describe(c, false, i, &name, &bytes))) break;
    float *y = malloc(bytes ? bytes : 1);
    if (!y || tsl_context_get_output_by_name(ctx, name, y, bytes) != TSL_OK) {
      status = fail("output");
    } else {
      double sum = 0;
      for (size_t k = 0; k < bytes / sizeof(float); k++) sum += y[k];
      printf("  sum %.6g, first %.6g\n", sum, bytes ? y[0] : 0.0f);
    }
    free(y);
  }
  tsl_context_free(ctx);
  tsl_compiled_free(c);
  return status;
}
