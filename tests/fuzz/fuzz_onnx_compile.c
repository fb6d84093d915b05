/* libFuzzer harness: ONNX load + graph compile (JIT, target host) + one run, for small
 * graphs (docs/fuzzing.md).
 *
 * A model that loads is compiled only within a budget, so that one input costs tens of
 * milliseconds, not seconds: at most MAX_NODES nodes, every value at most MAX_VALUE
 * elements (zero extents counted as 1) and an estimate of the arithmetic of one run at
 * most MAX_WORK multiply-adds. Compiled plans are run once on inputs filled from the
 * fuzz data. Compile errors are fine (an operator form no kernel computes); crashes,
 * leaks, UBSan reports and runs that fail on a plan that compiled are not. The kernel
 * disk cache is off (every input takes the same path) and the pool has one thread. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/jit_cache.h"
#include "models/compile.h"
#include "models/graph.h"
#include "models/onnx.h"
#include "runtime/graph_executor.h"
#include "tessel/runtime.h"

#define MAX_NODES 8
#define MAX_VALUE 4096
#define MAX_WORK (INT64_C(1) << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  tsl_jit_cache_set_enabled(false);
  tsl_set_num_threads(1);
  return 0;
}

/* Elements of value v with zero extents counted as 1 (shapes are bounded already). */
static int64_t span_of(const tsl_value *v) {
  int64_t n = 1;
  for (int d = 0; d < v->ndim; d++) n *= v->shape[d] > 0 ? v->shape[d] : 1;
  return n;
}

/* Multiply-adds of one run, roughly: the output's elements times the reduction each
 * computes (a conv's weight elements per output channel, a matmul's inner extent, a
 * pool's window), at least its inputs' and outputs' elements. */
static int64_t work_of(const tsl_graph *g, const tsl_node *n) {
  int64_t out = 0, in = 0, per = 1;
  for (int k = 0; k < n->n_outputs; k++) out += span_of(&g->values[n->outputs[k]]);
  for (int k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0) in += span_of(&g->values[n->inputs[k]]);
  if (n->op == TSL_OP_CONV && n->n_inputs > 1 && n->inputs[1] >= 0) {
    const tsl_value *w = &g->values[n->inputs[1]];
    per = w->ndim > 0 && w->shape[0] > 0 ? span_of(w) / w->shape[0] : span_of(w);
  } else if ((n->op == TSL_OP_GEMM || n->op == TSL_OP_MATMUL) && n->inputs[0] >= 0) {
    const tsl_value *a = &g->values[n->inputs[0]];
    per = a->ndim > 0 ? (a->shape[a->ndim - 1] > a->shape[0] ? a->shape[a->ndim - 1] : a->shape[0]) : 1;
  } else if (n->op == TSL_OP_MAX_POOL || n->op == TSL_OP_AVERAGE_POOL) {
    int nk;
    const int64_t *k = tsl_node_attr_ints(n, "kernel_shape", &nk);
    for (int i = 0; k && i < nk && i < 2; i++) per *= k[i] > 0 && k[i] < 4096 ? k[i] : 4096;
  }
  return out * (per > 0 ? per : 1) + in;
}

static bool within_budget(const tsl_graph *g) {
  if (g->n_nodes > MAX_NODES) return false;
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].ndim >= 0 && span_of(&g->values[v]) > MAX_VALUE) return false;
  int64_t work = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    work += work_of(g, &g->nodes[i]);
    if (work > MAX_WORK) return false;
  }
  return true;
}

/* Input bytes from the fuzz data, as floats in [-2, 2) (no NaN or inf, which some
 * kernels' tests would flag as wrong but which are not faults). */
static void fill_input(float *x, int64_t n, const uint8_t *data, size_t size) {
  for (int64_t i = 0; i < n; i++) x[i] = size ? (float)data[(size_t)i % size] / 64.0f - 2.0f : 0.0f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tsl_graph *g = NULL;
  if (tsl_graph_load_onnx_memory(data, size, NULL, &g) != TSL_OK) return 0;
  if (!within_budget(g)) {
    tsl_graph_free(g);
    return 0;
  }
  tsl_graph_plan *plan = NULL;
  tsl_status st = tsl_graph_compile(g, NULL, &plan, NULL);
  tsl_graph_free(g);
  if (st != TSL_OK) return 0;
  tsl_graph_ctx *ctx = NULL;
  if (tsl_graph_ctx_new(plan, &ctx) != TSL_OK) {
    fprintf(stderr, "fuzz_onnx_compile: no context for a compiled plan: %s\n", tsl_last_error());
    abort();
  }
  for (int i = 0; i < tsl_graph_plan_num_inputs(plan); i++) {
    tsl_graph_io_info in = tsl_graph_plan_input_info(plan, i);
    if (tsl_dtype_equal(in.dtype, TSL_DTYPE_F32))
      fill_input(tsl_graph_ctx_input(ctx, i), in.bytes / 4, data, size);
    else
      memset(tsl_graph_ctx_input(ctx, i), 0, (size_t)in.bytes);
  }
  if (tsl_graph_run(ctx, NULL) != TSL_OK) {
    fprintf(stderr, "fuzz_onnx_compile: a compiled plan failed to run: %s\n", tsl_last_error());
    abort();
  }
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(plan);
  return 0;
}
