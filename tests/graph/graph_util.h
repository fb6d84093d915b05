/* Helpers of the graph suites: compile and run a graph, run the reference. */
#ifndef TESSEL_TESTS_GRAPH_UTIL_H
#define TESSEL_TESTS_GRAPH_UTIL_H

#include "models/compile.h"
#include "models/graph.h"
#include "runtime/module.h"
#include "tessel/tensor.h"

/* Compiles g (opts may be NULL) and runs it once on inputs[0..g->n_inputs) (compact
 * f32 data of each input's size); copies output k into outputs[k] (malloc'd, caller
 * frees). stats may be NULL; *transform_steps (may be NULL) receives the number of
 * layout transform kernels in the plan. Returns the compile or run status. */
tsl_status gt_compile_run(const tsl_graph *g, const tsl_compile_options *opts, const float *const *inputs,
                          float **outputs, tsl_compile_stats *stats, int *transform_steps);

/* Runs g with the naive reference executor; output k into outputs[k] (malloc'd). */
tsl_status gt_reference_run(const tsl_graph *g, const float *const *inputs, float **outputs);

/* Adds a node of op on inputs ins[0..nin) with one new output value, returned; the
 * node's id in *node (may be NULL). A failure is a fatal CUnit assertion. */
int gt_add_node(tsl_graph *g, tsl_op op, int nin, const int *ins, int *node);

/* A 1x1 Conv (cin -> cout channels, weights in [-0.5, 0.5), bias in [-0.2, 0.2)) on x;
 * its output value. */
/* A module with the registry's `add` of two tensors of shape[0..4) as kernel "add",
 * JIT-compiled for the host under its default schedule. */
tsl_module *gt_add_module(const int64_t shape[4]);

/* A conv of x (cin = its channels) to cout channels: k x k window, stride, padding k / 2
 * on every side, `group` groups (cin / group channels each); weights and bias seeded
 * in [-0.4, 0.4] and [-0.3, 0.3]. */
int gt_add_conv(tsl_graph *g, int x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t group,
                uint64_t seed);

int gt_add_conv1x1(tsl_graph *g, int x, int64_t cin, int64_t cout, uint64_t seed);

/* Whether a conv with C input channels (groups 1) reads a plain input directly at the
 * host's f32 lanes x: more than a quarter of its ceil(C/x)*x input lanes would be zero
 * (the stem conv rule of models/passes/layout.h, restated). */
bool gt_conv_reads_plain(int64_t C);

/* Element count of value v of g. */
int64_t gt_numel(const tsl_graph *g, int v);

/* Max |a - b| relative to max |b| (1 when b is all zero), NaN anywhere: +inf. */
double gt_rel_err(const float *a, const float *b, int64_t n);

/* A constant of `shape`, seeded uniform in [lo, hi); returns its value id. */
int gt_add_const(tsl_graph *g, int ndim, const int64_t *shape, uint64_t seed, double lo, double hi);

/* n seeded uniform values in [lo, hi) (malloc'd, caller frees). */
float *gt_random(int64_t n, uint64_t seed, double lo, double hi);

/* Compiles g, runs it on inputs and compares every output with the reference
 * executor's: relative error (gt_rel_err) at most tol, asserted and reported with `what`.
 * Returns the layout transform steps of the plan, or -1 if compiling or running failed. */
int gt_check_vs_reference(const tsl_graph *g, const char *what, const float *const *inputs, double tol);

#endif
