/* tessel runtime — the graph executor: runs a compiled plan of kernel calls.
 *
 * A plan is what the graph compiler (models/compile.h) produces and what runs on a
 * device: a module of kernels, a list of buffers, and an ordered list of steps, each a
 * call of one kernel on buffers. It holds no IR and no LLVM object, so it builds with
 * the runtime alone.
 *
 * Buffers are of three kinds:
 *   - constants: tensors the plan owns (weights, pre-transformed at compile time);
 *   - activations: a byte range [offset, offset + bytes) of one arena per context;
 *     memory planning lets buffers whose lifetimes do not overlap share bytes, so the
 *     arena size (tsl_graph_plan_arena_bytes) is the planned peak activation memory;
 *   - views: another buffer's bytes at a byte offset (a reshape is a view at 0).
 * Graph inputs and outputs are activation buffers that the planner never shares.
 *
 * A step calls a kernel whose arguments are all pointers (the kernel ABI of
 * runtime/module.h): the data pointers of its buffers, in order. Kernels parallelise
 * their own loops on the thread pool (runtime/parallel.h); the steps run in order.
 *
 * A context holds the arena of one run in flight. A filled plan is immutable: any
 * number of threads may run it at once, each with its own context.
 */
#ifndef TESSEL_RUNTIME_GRAPH_EXECUTOR_H
#define TESSEL_RUNTIME_GRAPH_EXECUTOR_H

#include <stdint.h>

#include "runtime/module.h"
#include "tessel/plan.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plan and context types and everything an application calls to run a plan
 * (inputs, outputs, contexts, tsl_graph_run, tsl_graph_plan_free) are public:
 * include/tessel/plan.h. This header adds building a plan. */

/* An empty plan. Free with tsl_graph_plan_free. Errors: TSL_ERR_INVALID (NULL out),
 * TSL_ERR_NOMEM. */
tsl_status tsl_graph_plan_new(tsl_graph_plan **out);

/* Hands the module holding the plan's kernels to the plan (freed with it). */
void tsl_graph_plan_set_module(tsl_graph_plan *p, tsl_module *m);

/* Adds a constant buffer holding t (compact). Ownership of t moves to the plan in every
 * case (freed on failure). *buf receives the buffer id.
 * Errors: TSL_ERR_INVALID (NULL arguments, a strided tensor), TSL_ERR_NOMEM. */
tsl_status tsl_graph_plan_add_constant(tsl_graph_plan *p, tsl_tensor *t, int *buf);

/* Adds an activation buffer of `bytes` bytes at byte `offset` of the arena (offset a
 * multiple of TSL_TENSOR_ALIGN). The arena grows to cover it.
 * Errors: TSL_ERR_INVALID (negative or misaligned offset, negative size), TSL_ERR_NOMEM. */
tsl_status tsl_graph_plan_add_activation(tsl_graph_plan *p, int64_t offset, int64_t bytes, int *buf);

/* Adds a view of buffer `base` starting `offset` bytes into it (offset a multiple of
 * TSL_TENSOR_ALIGN: kernels take aligned pointers), `bytes` long.
 * Errors: TSL_ERR_INVALID (bad base, the range outside base, a misaligned offset),
 * TSL_ERR_NOMEM. */
tsl_status tsl_graph_plan_add_view(tsl_graph_plan *p, int base, int64_t offset, int64_t bytes, int *buf);

/* Size in bytes of buffer `buf` (0 for a bad id). */
int64_t tsl_graph_plan_buffer_bytes(const tsl_graph_plan *p, int buf);

/* Appends a step: a call of kernel k (every argument a pointer) with the data of
 * buffers bufs[0..nargs). `label` (copied; may be NULL) names the step in errors and
 * profiles, e.g. the graph node's name.
 * Errors: TSL_ERR_INVALID (NULL kernel, a non-pointer argument, nargs not the
 * kernel's, a bad buffer id), TSL_ERR_NOMEM. */
tsl_status tsl_graph_plan_add_step(tsl_graph_plan *p, const tsl_kernel *k, const char *label, int nargs,
                                   const int *bufs);

/* Marks argument `arg` of step `step` as claimed: when a run has two or more threads
 * under the balanced (default) or static schedule and is not nested in a parallel task,
 * its buffer (if at least 4 KiB a thread) is zeroed just before the call, each thread zeroing the piece
 * (the i-th of as many equal, 64-byte aligned pieces as threads) that the kernel's
 * static split of its outermost parallel loop gives that thread when the loop runs over
 * the buffer's memory in order (runtime/parallel.h). The kernel then writes lines its
 * own core already holds instead of fetching each from the core that wrote the bytes
 * last (a memory-bound 3x3 depthwise conv ran 3-7x slower in a model than alone for
 * it; docs/capi.md "Claimed outputs"). Only for a buffer the kernel overwrites whole:
 * an activation of its own (not a view, no views of it, now or later), no graph input
 * (now or later), passed by no earlier step, overlapping no other argument of the step;
 * the zeros are never seen. Errors: TSL_ERR_INVALID (bad step or argument, a view or
 * constant, a buffer with views, a graph input, an earlier step's buffer, an overlap),
 * naming the step; tsl_graph_plan_add_view and tsl_graph_plan_add_input then refuse a
 * view of or an input in the buffer. */
tsl_status tsl_graph_plan_claim_output(tsl_graph_plan *p, int step, int arg);

/* Whether step `step` claims any of its arguments (false for a bad step). */
bool tsl_graph_plan_step_claims(const tsl_graph_plan *p, int step);

/* Declares graph input / output number i (in call order) as buffer `buf` holding a
 * compact tensor of dtype dt and shape shape[0..ndim), named `name` (copied).
 * Errors: TSL_ERR_INVALID (bad buffer, the tensor's size not the buffer's, a constant
 * buffer for an input), TSL_ERR_NOMEM. */
tsl_status tsl_graph_plan_add_input(tsl_graph_plan *p, const char *name, int buf, tsl_dtype dt, int ndim,
                                    const int64_t *shape);
tsl_status tsl_graph_plan_add_output(tsl_graph_plan *p, const char *name, int buf, tsl_dtype dt, int ndim,
                                     const int64_t *shape);

/* The kernel of call `step` (NULL when out of range). */
const tsl_kernel *tsl_graph_plan_step_kernel(const tsl_graph_plan *p, int step);

#ifdef __cplusplus
}
#endif
#endif
