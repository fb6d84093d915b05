/* The ONNX node-test harness: runs the test cases of libonnx-testdata (a folder per
 * case holding model.onnx and test_data_set_N/{input,output}_K.pb) through the
 * importer and an executor given as a callback, and tallies results per operator.
 * The reference executor uses it now; the compiled path plugs in the same way. */
#ifndef TESSEL_TESTS_ONNX_CONFORMANCE_H
#define TESSEL_TESTS_ONNX_CONFORMANCE_H

#include <stdio.h>

#include "models/graph.h"
#include "tessel/tensor.h"

/* Runs graph g on inputs (one per graph input, in order) into new output tensors
 * (one per graph output; the harness frees them). */
typedef tsl_status (*onnx_conf_exec)(void *ctx, const tsl_graph *g, tsl_tensor *const *inputs, int n_inputs,
                                     tsl_tensor **outputs, int n_outputs);

typedef enum onnx_conf_outcome {
  ONNX_CONF_PASS,        /* imported, ran, every output within tolerance */
  ONNX_CONF_UNSUPPORTED, /* refused with TSL_ERR_UNSUPPORTED and an "onnx..." message */
  ONNX_CONF_FAIL         /* anything else: wrong values, another error */
} onnx_conf_outcome;

typedef struct onnx_conf_op {
  char op[48];   /* the model's operator, or "composite" for several op types */
  int total, passed, unsupported, failed;
} onnx_conf_op;

#define ONNX_CONF_MAX_OPS 256
#define ONNX_CONF_MAX_NOTES 64

typedef struct onnx_conf_report {
  int n_ops;
  onnx_conf_op ops[ONNX_CONF_MAX_OPS];
  int total, passed, unsupported, failed;
  int n_notes;                            /* first failures, "case: message" */
  char notes[ONNX_CONF_MAX_NOTES][320];
} onnx_conf_report;

/* Runs one case folder. Inputs whose type is not f32 are bound as constants at import
 * (they carry shapes, axes, bounds); if the import still refuses a non-constant
 * parameter input, every input but the first is bound and the import retried.
 * Outputs match when |got - want| <= 1e-5 + 1e-3 |want| (NaN matches NaN; non-float
 * outputs must be equal). `why` receives the reason for a non-pass. */
onnx_conf_outcome onnx_conf_run_case(const char *case_dir, onnx_conf_exec exec, void *ctx, char *why, size_t why_n);

/* Runs every case folder (name starting with "test_") under `dir`, adding to *rep
 * (zero it first). Per-case lines go to `log` when not NULL. Returns the cases run. */
int onnx_conf_run_dir(const char *dir, onnx_conf_exec exec, void *ctx, onnx_conf_report *rep, FILE *log);

/* The tally of operator `op` in *rep, or NULL. */
const onnx_conf_op *onnx_conf_find(const onnx_conf_report *rep, const char *op);

/* Prints one line per operator: passed/total, unsupported, failed. */
void onnx_conf_print(const onnx_conf_report *rep, const char *title, FILE *f);

#endif
