/* bench/models: end-to-end latency of whole CNNs compiled by tessel, at 1 and 2
 * threads, with the default schedules or (--records FILE) the tuner's best records,
 * next to ONNX Runtime's latency on the same files. Each model is compiled once per
 * thread count, so records tuned at that count are the ones used (docs/records.md).
 *
 *   models [--repeat N] [--models DIR] [--records FILE] [--ort FILE] [MODEL...]
 *
 * Models: MODEL.onnx for each MODEL named, else every *.onnx file, of DIR (default
 * $TSL_SHARED_DIR/models, else ../shared/models next to the source tree; e.g.
 * ../shared/models_v2). Without DIR the built-in zoo twins of ../shared/models run (same
 * architectures, other weights). --ort FILE holds ONNX
 * Runtime's figures measured on THIS machine, one line "MODEL THREADS MEDIAN_MS MIN_MS"
 * (bench/ort_models.mjs writes it; bench/models_vs_ort.sh runs both); without it the
 * table shows the figures of ../shared/anchors.md (another machine: compare ratios
 * only). The machine is shared and noisy: medians and mins of `repeat` runs. A
 * benchmark, not a test: nothing is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "tessel/tessel.h"

/* ONNX Runtime's figures from ../shared/anchors.md (another machine), for the five
 * models of ../shared/models when no --ort FILE is given. */
typedef struct peer {
  const char *model;
  double ort_ms[2]; /* median, 1 and 2 threads */
} peer;

static const peer peers[] = {
    {"squeezenet1_0", {9.42, 5.95}}, {"squeezenet1_1", {4.20, 2.88}}, {"resnet18", {20.50, 11.15}},
    {"mobilenet_v2", {5.05, 4.51}},  {"shufflenet_v2_x1_0", {3.25, 3.26}},
};

enum { MAX_MODELS = 64 };

/* ORT figures per model: median and min per thread count (index threads - 1), -1 unknown. */
typedef struct ort_row {
  char model[128];
  double med[2], min[2];
} ort_row;

/* The row of `model`, from --ort FILE, else the anchors; NULL when neither has it. */
static const ort_row *ort_of(const ort_row *rows, int nrows, const char *model, ort_row *scratch) {
  for (int r = 0; r < nrows; r++)
    if (strcmp(rows[r].model, model) == 0 && rows[r].med[0] > 0 && rows[r].med[1] > 0) return &rows[r];
  for (size_t p = 0; p < sizeof peers / sizeof peers[0]; p++)
    if (strcmp(peers[p].model, model) == 0) {
      snprintf(scratch->model, sizeof scratch->model, "%s", model);
      for (int t = 0; t < 2; t++) scratch->med[t] = scratch->min[t] = peers[p].ort_ms[t];
      return scratch;
    }
  return NULL;
}

static int read_ort(const char *path, ort_row *rows) {
  FILE *f = path ? fopen(path, "r") : NULL;
  if (path && !f) fprintf(stderr, "models: cannot read %s; using the anchors' ORT figures\n", path);
  char line[512], name[128];
  int threads, n = 0;
  double med, mn;
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "%127s %d %lf %lf", name, &threads, &med, &mn) != 4 || threads < 1 || threads > 2) continue;
    int r = 0;
    while (r < n && strcmp(rows[r].model, name) != 0) r++;
    if (r == n) {
      if (n == MAX_MODELS) continue;
      snprintf(rows[n].model, sizeof rows[n].model, "%s", name);
      rows[n].med[0] = rows[n].med[1] = rows[n].min[0] = rows[n].min[1] = -1;
      n++;
    }
    rows[r].med[threads - 1] = med;
    rows[r].min[threads - 1] = mn;
  }
  if (f) fclose(f);
  return n;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The *.onnx files of dir, by name without the suffix, sorted (malloc'd names). */
static int list_models(const char *dir, char **names) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL && n < MAX_MODELS;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".onnx") == 0 && (names[n] = strdup(e->d_name)) != NULL)
      names[n++][len - 5] = '\0';
  }
  if (d) closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_name);
  return n;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median and min over `repeat` runs after WARMUP_RUNS warm-ups, in ms: as many as
 * bench/ort_models.mjs gives ONNX Runtime (with two, the first model of a
 * bench/models_vs_ort.sh run read 1.01-1.04x ORT where its later rounds read 0.81-0.88x:
 * sessions 46-47, mobilenet_v2 at 1 thread). */
enum { WARMUP_RUNS = 10 };
static int time_runs(tsl_context *ctx, int repeat, double *median, double *min) {
  double *t = malloc((size_t)repeat * sizeof *t);
  if (!t) return 1;
  for (int w = 0; w < WARMUP_RUNS; w++)
    if (tsl_context_run(ctx) != TSL_OK) return free(t), 1;
  for (int r = 0; r < repeat; r++) {
    double t0 = tsl_time_now();
    if (tsl_context_run(ctx) != TSL_OK) return free(t), 1;
    t[r] = (tsl_time_now() - t0) * 1e3;
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp_double);
  *median = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
  *min = t[0];
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  int repeat = 20;
  const char *dir = NULL, *records = NULL, *ort = NULL;
  char *only[MAX_MODELS];
  int nonly = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (strcmp(argv[i], "--models") == 0 && i + 1 < argc) dir = argv[++i];
    else if (strcmp(argv[i], "--records") == 0 && i + 1 < argc) records = argv[++i];
    else if (strcmp(argv[i], "--ort") == 0 && i + 1 < argc) ort = argv[++i];
    else if (nonly < MAX_MODELS) only[nonly++] = strdup(argv[i]);
  }
  if (repeat < 1) repeat = 1;
  char dbuf[4096];
  if (!dir) {
    const char *env = getenv("TSL_SHARED_DIR");
    snprintf(dbuf, sizeof dbuf, "%s/models", env ? env : TSL_BENCH_SHARED_DIR);
    dir = dbuf;
  }
  struct stat sb;
  bool have_files = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
  static ort_row orts[MAX_MODELS];
  int norts = read_ort(ort, orts);
  /* the models: those named, else every ONNX file of the folder, else the zoo's twins */
  if (nonly == 0 && have_files) nonly = list_models(dir, only);
  if (nonly == 0)
    for (size_t p = 0; p < sizeof peers / sizeof peers[0]; p++) only[nonly++] = strdup(peers[p].model);
  printf("tessel end-to-end latency, %s, median (min) of %d runs, ms\n", records ? "tuned (records)" : "default schedules",
         repeat);
  if (records) printf("records: %s\n", records);
  printf("models: %s\n", have_files ? dir : "built-in zoo (no shared models found)");
  printf("ONNX Runtime: %s\n\n", ort ? ort : "../shared/anchors.md figures (another machine)");
  printf("| model | tessel 1 thread | tessel 2 threads | ORT 1 thread | ORT 2 threads | tessel/ORT 1t | tessel/ORT 2t | "
         "compile s 1t / 2t | kernels | tuned 1t / 2t | peak act. MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int p = 0; p < nonly; p++) {
    const char *model = only[p];
    if (!model) continue;
    char src[4400];
    if (have_files) snprintf(src, sizeof src, "%s/%s.onnx", dir, model);
    else snprintf(src, sizeof src, "%s", model);
    /* compiled once per thread count: the records' lookup prefers records timed with
     * the compiling process's thread count (docs/records.md) */
    double med[2] = {0}, mn[2] = {0}, compile_s[2] = {0};
    int kernels[2] = {0}, tuned[2] = {0};
    size_t act_bytes = 0;
    float *x = NULL;
    bool ok = true;
    for (int t = 0; ok && t < 2; t++) {
      tsl_model *m = NULL;
      tsl_compiled *c = NULL;
      tsl_context *ctx = NULL;
      ok = tsl_set_num_threads(t + 1) == TSL_OK;
      double t0 = tsl_time_now();
      ok = ok && tsl_model_load(src, &m) == TSL_OK && tsl_model_compile(m, "host", records, &c) == TSL_OK;
      compile_s[t] = tsl_time_now() - t0;
      tsl_model_free(m);
      size_t in_bytes = 0;
      if (ok) ok = tsl_compiled_input_info(c, 0, NULL, NULL, NULL, NULL, &in_bytes) == TSL_OK;
      if (ok && !x) {
        x = calloc(in_bytes / sizeof(float), sizeof(float));
        for (size_t i = 0; x && i < in_bytes / sizeof(float); i++)
          x[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f;
      }
      ok = ok && x && tsl_context_new(c, &ctx) == TSL_OK;
      if (ok) ok = tsl_context_set_input(ctx, 0, x, in_bytes) == TSL_OK;
      if (ok) ok = time_runs(ctx, repeat, &med[t], &mn[t]) == 0;
      if (ok) {
        kernels[t] = tsl_compiled_num_kernels(c);
        tuned[t] = tsl_compiled_num_tuned_kernels(c);
        act_bytes = tsl_compiled_activation_bytes(c);
      }
      tsl_context_free(ctx);
      tsl_compiled_free(c);
    }
    ort_row scratch;
    const ort_row *o = ort_of(orts, norts, model, &scratch);
    if (!ok) printf("| %s | error: %s |\n", model, tsl_last_error());
    else if (!o)
      printf("| %s | %.2f (%.2f) | %.2f (%.2f) | - | - | - | - | %.1f / %.1f | %d | %d / %d | %.2f |\n", model, med[0],
             mn[0], med[1], mn[1], compile_s[0], compile_s[1], kernels[1], tuned[0], tuned[1], act_bytes / 1048576.0);
    else
      printf("| %s | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.2f) | %.2fx | %.2fx | %.1f / %.1f | %d | %d / %d | "
             "%.2f |\n",
             model, med[0], mn[0], med[1], mn[1], o->med[0], o->min[0], o->med[1], o->min[1], med[0] / o->med[0],
             med[1] / o->med[1], compile_s[0], compile_s[1], kernels[1], tuned[0], tuned[1], act_bytes / 1048576.0);
    fflush(stdout);
    free(x);
  }
  for (int p = 0; p < nonly; p++) free(only[p]);
  return 0;
}
