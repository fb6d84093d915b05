/* Helpers of the graph suites (graph_util.h). */
#include "graph_util.h"

#include <CUnit/CUnit.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "ir/arena.h"
#include "ops/registry.h"
#include "ref/ref_graph.h"
#include "runtime/graph_executor.h"
#include "schedule/schedule.h"
#include "target/target.h"

bool gt_conv_reads_plain(int64_t C) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK) return false;
  int64_t x = tsl_target_f32_lanes(&t), lanes = (C + x - 1) / x * x;
  return (lanes - C) * 4 > lanes;
}

int64_t gt_numel(const tsl_graph *g, int v) {
  int64_t n = 1;
  for (int d = 0; d < g->values[v].ndim; d++) n *= g->values[v].shape[d];
  return n;
}

tsl_status gt_compile_run(const tsl_graph *g, const tsl_compile_options *opts, const float *const *inputs,
                          float **outputs, tsl_compile_stats *stats, int *transform_steps) {
  tsl_graph_plan *plan = NULL;
  tsl_graph_ctx *ctx = NULL;
  tsl_status st = tsl_graph_compile(g, opts, &plan, stats);
  if (st == TSL_OK) st = tsl_graph_ctx_new(plan, &ctx);
  if (transform_steps) *transform_steps = 0;
  for (int i = 0; st == TSL_OK && transform_steps && i < tsl_graph_plan_num_steps(plan); i++) {
    const char *k = tsl_kernel_name(tsl_graph_plan_step_kernel(plan, i));
    *transform_steps += strncmp(k, "nchw_to_nchwc", 13) == 0 || strncmp(k, "nchwc_to_nchw", 13) == 0;
  }
  for (int i = 0; st == TSL_OK && i < g->n_inputs; i++)
    memcpy(tsl_graph_ctx_input(ctx, i), inputs[i], (size_t)tsl_graph_plan_input_info(plan, i).bytes);
  if (st == TSL_OK) st = tsl_graph_run(ctx, NULL);
  for (int k = 0; st == TSL_OK && k < g->n_outputs; k++) {
    size_t bytes = (size_t)tsl_graph_plan_output_info(plan, k).bytes;
    outputs[k] = malloc(bytes ? bytes : 1);
    if (!outputs[k]) st = TSL_ERR_NOMEM;
    else memcpy(outputs[k], tsl_graph_ctx_output(ctx, k), bytes);
  }
  tsl_graph_ctx_free(ctx);
  tsl_graph_plan_free(plan);
  return st;
}

tsl_status gt_reference_run(const tsl_graph *g, const float *const *inputs, float **outputs) {
  tsl_tensor *in[8] = {0}, *out[8] = {0};
  tsl_status st = TSL_OK;
  if (g->n_inputs > 8 || g->n_outputs > 8) return TSL_ERR_UNSUPPORTED;
  for (int i = 0; st == TSL_OK && i < g->n_inputs; i++) {
    const tsl_value *v = &g->values[g->inputs[i]];
    st = tsl_tensor_new(v->dtype, v->ndim, v->shape, &in[i]);
    if (st == TSL_OK) st = tsl_tensor_copy_from(in[i], inputs[i], tsl_tensor_nbytes(in[i]));
  }
  if (st == TSL_OK) st = ref_graph_run(g, in, g->n_inputs, out, g->n_outputs);
  for (int k = 0; st == TSL_OK && k < g->n_outputs; k++) {
    size_t bytes = tsl_tensor_nbytes(out[k]);
    outputs[k] = malloc(bytes ? bytes : 1);
    if (!outputs[k]) st = TSL_ERR_NOMEM;
    else memcpy(outputs[k], out[k]->data, bytes);
  }
  for (int i = 0; i < 8; i++) {
    tsl_tensor_free(in[i]);
    tsl_tensor_free(out[i]);
  }
  return st;
}

double gt_rel_err(const float *a, const float *b, int64_t n) {
  double scale = 0.0, err = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(a[i]) || isnan(b[i])) return INFINITY;
    scale = fmax(scale, fabs((double)b[i]));
    err = fmax(err, fabs((double)a[i] - (double)b[i]));
  }
  return err / (scale > 0.0 ? scale : 1.0);
}

int gt_add_node(tsl_graph *g, tsl_op op, int nin, const int *ins, int *node) {
  int out, id;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_value(g, NULL, &out), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_node(g, op, NULL, nin, ins, 1, &out, &id), TSL_OK);
  if (node) *node = id;
  return out;
}

int gt_add_const(tsl_graph *g, int ndim, const int64_t *shape, uint64_t seed, double lo, double hi) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, seed, lo, hi), TSL_OK);
  int id;
  CU_ASSERT_EQUAL_FATAL(tsl_graph_add_constant(g, NULL, t, &id), TSL_OK);
  return id;
}

tsl_module *gt_add_module(const int64_t shape[4]) {
  tsl_arena *a = tsl_arena_new(), *prev = tsl_arena_set_current(a);
  const int64_t *shapes[2] = {shape, shape};
  const int nd[2] = {4, 4};
  tsl_te_program *p = NULL;
  tsl_schedule *sch = NULL;
  tsl_target t;
  tsl_jit *jit = NULL;
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_op_instantiate("add", 2, shapes, nd, 0, NULL, &p), TSL_OK);
  CU_ASSERT_EQUAL(tsl_schedule_create(p, &sch), TSL_OK);
  CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_jit_new(&t, &jit), TSL_OK);
  CU_ASSERT_EQUAL(tsl_module_new(&m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_build(sch, "add", jit, m, NULL, NULL), TSL_OK);
  tsl_schedule_free(sch);
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(a);
  return m;
}

int gt_add_conv(tsl_graph *g, int x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t group,
                uint64_t seed) {
  int64_t ws[4] = {cout, cin / group, k, k};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.4, 0.4), gt_add_const(g, 1, &cout, seed + 1, -0.3, 0.3)}, node;
  int y = gt_add_node(g, TSL_OP_CONV, 3, ins, &node);
  int64_t st[2] = {stride, stride}, p = k / 2, pads[4] = {p, p, p, p};
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "strides", 2, st), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_ints(g, node, "pads", 4, pads), TSL_OK);
  if (group != 1) CU_ASSERT_EQUAL_FATAL(tsl_graph_set_attr_int(g, node, "group", group), TSL_OK);
  return y;
}

int gt_add_conv1x1(tsl_graph *g, int x, int64_t cin, int64_t cout, uint64_t seed) {
  int64_t ws[4] = {cout, cin, 1, 1};
  int ins[3] = {x, gt_add_const(g, 4, ws, seed, -0.5, 0.5), gt_add_const(g, 1, &cout, seed + 1, -0.2, 0.2)};
  return gt_add_node(g, TSL_OP_CONV, 3, ins, NULL);
}

float *gt_random(int64_t n, uint64_t seed, double lo, double hi) {
  tsl_tensor *t;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_fill_random(t, seed, lo, hi), TSL_OK);
  float *x = malloc((size_t)n * sizeof *x);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  memcpy(x, t->data, (size_t)n * sizeof *x);
  tsl_tensor_free(t);
  return x;
}

int gt_check_vs_reference(const tsl_graph *g, const char *what, const float *const *inputs, double tol) {
  enum { MAX_OUT = 8 };
  float *got[MAX_OUT] = {0}, *want[MAX_OUT] = {0};
  CU_ASSERT_FATAL(g->n_outputs <= MAX_OUT);
  int transforms = -1;
  tsl_status st = gt_compile_run(g, NULL, inputs, got, NULL, &transforms);
  if (st != TSL_OK) printf("\n  %s: %s", what, tsl_last_error());
  CU_ASSERT_EQUAL(st, TSL_OK);
  tsl_status rs = gt_reference_run(g, inputs, want);
  if (rs != TSL_OK) printf("\n  %s: reference: %s", what, tsl_last_error());
  CU_ASSERT_EQUAL(rs, TSL_OK);
  for (int k = 0; st == TSL_OK && rs == TSL_OK && k < g->n_outputs; k++) {
    double err = gt_rel_err(got[k], want[k], gt_numel(g, g->outputs[k]));
    if (!(err <= tol)) printf("\n  %s: output %d: relative error %.3g", what, k, err);
    CU_ASSERT(err <= tol);
  }
  for (int k = 0; k < MAX_OUT; k++) {
    free(got[k]);
    free(want[k]);
  }
  return st == TSL_OK ? transforms : -1;
}
