/* Helpers shared by the models suites (see models_util.h). */
#include "models_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/models_test_paths.h"

static bool is_dir(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* <shared>/<folder>, or NULL after a skip line naming the test */
static const char *shared_folder(const char *test, const char *folder, char *path, size_t size) {
  const char *env = getenv("TSL_SHARED_DIR");
  if (env && *env) snprintf(path, size, "%s/%s", env, folder);
  else snprintf(path, size, "%s/../shared/%s", TSL_TEST_SOURCE_ROOT, folder);
  if (is_dir(path)) return path;
  printf("\n  [skip] %s: shared models not found at %s (set TSL_SHARED_DIR)\n", test, path);
  return NULL;
}

const char *mt_shared_models_dir(const char *test) {
  static char path[4096];
  return shared_folder(test, "models", path, sizeof path);
}

const char *mt_shared_models_v2_dir(const char *test) {
  static char path[4096];
  return shared_folder(test, "models_v2", path, sizeof path);
}

const char *mt_onnx_testdata_dir(const char *test) {
  const char *env = getenv("TSL_ONNX_TESTDATA");
  const char *path = env && *env ? env : TSL_TEST_ONNX_TESTDATA;
  if (is_dir(path)) return path;
  printf("\n  [skip] %s: ONNX test data not found at %s (install libonnx-testdata or set TSL_ONNX_TESTDATA)\n",
         test, path);
  return NULL;
}

void *mt_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0) {
    fclose(f);
    return NULL;
  }
  size_t n = (size_t)sb.st_size;
  char *buf = malloc(n ? n : 1);
  if (buf && fread(buf, 1, n, f) != n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) *size = n;
  return buf;
}

/* Skips spaces and line breaks. */
static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
  return p;
}

bool mt_manifest_read(const char *dir, const char *model, mt_manifest_model *out) {
  char path[4200];
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  size_t n;
  char *text = mt_read_file(path, &n);
  if (!text) return false;
  char *z = realloc(text, n + 1);
  if (!z) {
    free(text);
    return false;
  }
  text = z;
  text[n] = 0;
  memset(out, 0, sizeof *out);
  char key[128];
  snprintf(key, sizeof key, "\"%s\": {", model);
  const char *entry = strstr(text, key);
  /* Each entry opens with its '"onnx":' key; it ends where the next model's begins. */
  const char *own = entry ? strstr(entry + strlen(key), "\"onnx\":") : NULL;
  const char *next = own ? strstr(own + 7, "\"onnx\":") : NULL;
  bool ok = entry != NULL;
  const char *p;
  if (ok && (p = strstr(entry, "\"node_count\":")) && (!next || p < next)) out->node_count = atoi(p + 13);
  else ok = false;
  if (ok && (p = strstr(entry, "\"max_abs_output\":")) && (!next || p < next)) out->max_abs_output = atof(p + 17);
  else ok = false;
  if (ok && (p = strstr(entry, "\"top5_ort\":")) && (!next || p < next)) {
    p = strchr(p, '[');
    p = p ? strchr(p + 1, '[') : NULL;
    for (int i = 0; ok && i < 5; i++) {
      if (!p) ok = false;
      else {
        p = skip_ws(p + 1);
        out->top5[i] = atoi(p);
        p = strchr(p, i < 4 ? ',' : ']');
      }
    }
  } else {
    ok = false;
  }
  if (ok && (p = strstr(entry, "\"op_types\":")) && (!next || p < next)) {
    const char *end = strchr(p, ']');
    p = strchr(p, '[');
    while (p && end && out->n_op_types < 32) {
      const char *q = strchr(p, '"');
      if (!q || q > end) break;
      const char *e = strchr(q + 1, '"');
      if (!e || e > end) break;
      snprintf(out->op_types[out->n_op_types++], sizeof out->op_types[0], "%.*s", (int)(e - q - 1), q + 1);
      p = e + 1;
    }
  } else {
    ok = false;
  }
  free(text);
  return ok;
}

void mt_top5(const float *x, int64_t n, int top[5]) {
  for (int k = 0; k < 5; k++) {
    int best = -1;
    for (int64_t i = 0; i < n; i++) {
      bool taken = false;
      for (int j = 0; j < k; j++) taken |= top[j] == i;
      if (!taken && (best < 0 || x[i] > x[best])) best = (int)i;
    }
    top[k] = best;
  }
}

double mt_max_abs_diff(const float *a, const float *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]);
    if (isnan(d)) return INFINITY;
    if (d > m) m = d;
  }
  return m;
}

double mt_max_abs(const float *x, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs(x[i]) > m) m = fabs(x[i]);
  return m;
}

void mt_count_ops(const tsl_graph *g, int *counts) {
  for (int op = 0; op < TSL_OP_COUNT; op++) counts[op] = 0;
  for (int i = 0; i < g->n_nodes; i++) counts[g->nodes[i].op]++;
}
