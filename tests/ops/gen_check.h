/* Helpers of the generated-operator tests (test_generators*.c): run a generator's text
 * with the DSL interpreter, and the references they compare it with. */
#ifndef TESSEL_TESTS_OPS_GEN_CHECK_H
#define TESSEL_TESTS_OPS_GEN_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "models/graph.h"
#include "ops/op_call.h"

/* Generates `name` for call c (ops/op_call.h), parses its text, instantiates op "k"
 * with the generator's views and runs it with the tensor-expression interpreter
 * (dsl/te_interp.h) on bufs: the call's arguments in order, each holding the elements
 * of its view (inputs read, outputs overwritten). When label is not NULL the kernel's
 * label must equal it. False, printing why, on any failure. */
bool gen_interpret(const char *name, const tsl_op_call *c, const char *label, float *const *bufs);

/* As gen_interpret, but the text is scheduled with the library's default schedule
 * (tsl_default_schedule, as the graph compiler does) and run JIT-compiled for the tests'
 * target; bufs must be aligned as ops_alloc's. */
bool gen_compile_run(const char *name, const tsl_op_call *c, const char *label, float *const *bufs);

/* Output 0 of a graph of one `op` node over inputs in[0..nin) (compact f32 of ranks
 * ndims and extents shapes), its attributes set by set_attrs(g, node, ctx), computed by
 * the reference executor tests/ref/ref_graph.h (which checks the shape it computes
 * against the graph's inference). Returns a malloc'd array of *numel floats (the caller
 * frees), NULL on failure (printed). */
float *gen_ref_node(tsl_op op, int nin, const int *ndims, const int64_t *const *shapes, const float *const *in,
                    void (*set_attrs)(tsl_graph *g, int node, const void *ctx), const void *ctx, int64_t *numel);

/* True when got[0..n) matches want within tol relative to max(1, |want|) (NaN where
 * want is NaN); prints the first mismatches of `what` otherwise. */
bool gen_close(const char *what, const float *got, const float *want, int64_t n, double tol);

/* n seeded random floats in [-1, 1) (malloc'd; the caller frees). */
float *gen_randoms(int64_t n, uint64_t seed);

#endif
