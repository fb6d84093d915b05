/* Helpers shared by the models suites: where the shared models and the ONNX test data
 * are, reading files, the manifest of the shared models, comparing outputs. */
#ifndef TESSEL_TESTS_MODELS_UTIL_H
#define TESSEL_TESTS_MODELS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/graph.h"

/* The shared models folder: $TSL_SHARED_DIR/models, else <repo>/../shared/models.
 * NULL (after printing a skip message naming `test`) when it does not exist. */
const char *mt_shared_models_dir(const char *test);
/* The same for ../shared/models_v2 (the newer CNNs). */
const char *mt_shared_models_v2_dir(const char *test);

/* The libonnx-testdata "data" folder: $TSL_ONNX_TESTDATA, else Debian's path. NULL
 * (after printing a skip message naming `test`) when absent. */
const char *mt_onnx_testdata_dir(const char *test);

/* Reads a whole file into a malloc'd buffer (*size bytes). NULL if unreadable. */
void *mt_read_file(const char *path, size_t *size);

/* What the shared manifest.json says about one model. */
typedef struct mt_manifest_model {
  int node_count;
  int n_op_types;
  char op_types[32][48];
  int top5[5];
  double max_abs_output;
} mt_manifest_model;

/* Parses the entry of `model` from <dir>/manifest.json (a minimal scanner for that
 * file's layout). False if the file or the entry is missing or malformed. */
bool mt_manifest_read(const char *dir, const char *model, mt_manifest_model *out);

/* Indices of the 5 largest of x[n] (descending, ties by lower index). */
void mt_top5(const float *x, int64_t n, int top[5]);

/* Max |a - b| over n elements (NaN anywhere: +inf) and max |b|. */
double mt_max_abs_diff(const float *a, const float *b, int64_t n);
double mt_max_abs(const float *x, int64_t n);

/* Counts nodes per operator into counts[TSL_OP_COUNT]. */
void mt_count_ops(const tsl_graph *g, int *counts);

#endif
