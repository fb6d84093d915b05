/* tessel — running a model compiled ahead of time, with the runtime alone.
 *
 * `tunecli compile MODEL --target T -o model.so` writes a model file: a shared object
 * holding the model's kernels followed by its plan (buffers, weights, the kernel calls
 * in order, the inputs and outputs; format in docs/aot.md). This header loads such a
 * file and runs it with libtessel_runtime (pkg-config tessel-runtime: no LLVM, no IR),
 * as an application on a device does (examples/device_app.c):
 *
 *     tsl_graph_plan *p;     tsl_model_file_load("model.so", &p, NULL);
 *     tsl_graph_ctx *ctx;    tsl_graph_ctx_new(p, &ctx);
 *     memcpy(tsl_graph_ctx_input(ctx, 0), pixels, tsl_graph_plan_input_info(p, 0).bytes);
 *     tsl_graph_run(ctx, NULL);
 *     const float *logits = tsl_graph_ctx_output(ctx, 0);
 *     tsl_graph_ctx_free(ctx); tsl_graph_plan_free(p);
 *
 * The kernels of a model file call the runtime's parallel-loop entry points
 * (tsl_parallel_for, tsl_kernel_alloc, tsl_kernel_free), which the dynamic loader
 * resolves in libtessel_runtime.so (or, linked statically, in an executable linked with
 * -rdynamic).
 *
 * Threads: a loaded plan is immutable; any number of threads may run it at once, each
 * with its own context (one context is used by one thread at a time). Each context may
 * have its own thread count (tsl_graph_ctx_set_num_threads).
 */
#ifndef TESSEL_PLAN_H
#define TESSEL_PLAN_H

#include <stdint.h>

#include "tessel/runtime.h"
#include "tessel/status.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_graph_plan tsl_graph_plan;
typedef struct tsl_graph_ctx tsl_graph_ctx;

/* What a model file holds, for printing. */
typedef struct tsl_model_file_info {
  int version;
  char target[128];     /* the target string it was compiled for */
  int buffers, steps, kernels;
  int64_t arena_bytes;    /* planned peak activation bytes of one context */
  int64_t constant_bytes; /* weights */
  int64_t plan_bytes;     /* the appended plan, trailer included */
} tsl_model_file_info;

/* Loads model file `path`: reads and checks the plan (trailer, magic, version,
 * CRC-32, every count, offset and id), then loads the kernels with dlopen (refusing an
 * object for another architecture or for CPU features this machine lacks) and builds a
 * plan that owns them; run it with tsl_graph_ctx_new / tsl_graph_run. Free with
 * tsl_graph_plan_free. info may be NULL.
 * Errors: TSL_ERR_IO (no such file, a read error, dlopen failed), TSL_ERR_INVALID (no
 * plan at the end of the file — e.g. a single-operator object of `tunecli compile OP`
 * —, a corrupt plan: the message says what is wrong), TSL_ERR_UNSUPPORTED (another
 * format version, or the loader's refusal of the object), TSL_ERR_NOT_FOUND (a step
 * names a kernel the object lacks), TSL_ERR_NOMEM. Every message starts with path. */
tsl_status tsl_model_file_load(const char *path, tsl_graph_plan **out, tsl_model_file_info *info);

/* Frees the plan, its constants and its kernels' code. The caller must have freed
 * every context of the plan first. NULL is a no-op. */
void tsl_graph_plan_free(tsl_graph_plan *p);

/* Counts and descriptions. Info of a bad index: NULL name, ndim 0. */
int tsl_graph_plan_num_steps(const tsl_graph_plan *p);
int tsl_graph_plan_num_inputs(const tsl_graph_plan *p);
int tsl_graph_plan_num_outputs(const tsl_graph_plan *p);
/* The label of kernel call `step` (the graph node; for a convolution also the template
 * that scheduled it); NULL when out of range. */
const char *tsl_graph_plan_step_label(const tsl_graph_plan *p, int step);
/* An input or output: compact row-major elements of dtype, extents shape[0..ndim). */
typedef struct tsl_graph_io_info {
  const char *name; /* valid while the plan lives */
  tsl_dtype dtype;
  int ndim;
  int64_t shape[TSL_MAX_NDIM];
  int64_t bytes;
} tsl_graph_io_info;
tsl_graph_io_info tsl_graph_plan_input_info(const tsl_graph_plan *p, int i);
tsl_graph_io_info tsl_graph_plan_output_info(const tsl_graph_plan *p, int i);

/* The index of the input / output named `name` (exact, case-sensitive match with
 * tsl_graph_io_info.name) into *i.
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOT_FOUND (no input / output of
 * that name: the message lists the names there are). */
tsl_status tsl_graph_plan_find_input(const tsl_graph_plan *p, const char *name, int *i);
tsl_status tsl_graph_plan_find_output(const tsl_graph_plan *p, const char *name, int *i);

/* Bytes of the activation arena: the planned peak activation memory of one context. */
int64_t tsl_graph_plan_arena_bytes(const tsl_graph_plan *p);
/* Bytes of the constants the plan owns. */
int64_t tsl_graph_plan_constant_bytes(const tsl_graph_plan *p);

/* A context for running p: allocates the arena (64-byte aligned, zeroed). The plan
 * must outlive it. Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOMEM. */
tsl_status tsl_graph_ctx_new(const tsl_graph_plan *p, tsl_graph_ctx **out);
void tsl_graph_ctx_free(tsl_graph_ctx *c);

/* Sets the number of threads this context's runs use, the calling thread included
 * (n = 1: every loop on the thread that calls tsl_graph_run), whatever the
 * process-wide setting (tsl_set_num_threads, tessel/runtime.h); n = 0 returns to the
 * process-wide setting (the default). The pool is shared: while another thread's run
 * uses it, a launch runs on the calling thread alone (runtime/parallel.h).
 * Errors: TSL_ERR_INVALID (NULL context, n outside 0..TSL_MAX_THREADS). */
tsl_status tsl_graph_ctx_set_num_threads(tsl_graph_ctx *c, int n);
/* The number of threads the context's next run uses (its own count, else the
 * process-wide one); 0 for a NULL context. */
int tsl_graph_ctx_num_threads(const tsl_graph_ctx *c);

/* Sets when this context's runs claim outputs (tsl_claims_mode, tessel/runtime.h;
 * starting a new trial for
 * TSL_CLAIMS_AUTO). Runs on one thread, nested in a parallel task or under the dynamic
 * schedule never claim, whatever the mode. Errors: TSL_ERR_INVALID (NULL context, a
 * mode not listed). */
tsl_status tsl_graph_ctx_set_claims(tsl_graph_ctx *c, tsl_claims_mode m);
/* Whether the context's next run claims its outputs if it can (2+ threads, not nested,
 * not under the dynamic schedule; under TSL_CLAIMS_AUTO the choice as of now); false for
 * NULL and for a plan that claims nothing. */
bool tsl_graph_ctx_claims_next(const tsl_graph_ctx *c);
/* The kind of run the context keeps: 1 claiming, 0 not (also for NULL and a plan that
 * claims nothing), -1 while TSL_CLAIMS_AUTO is in its trial (the first 8 runs of 2+
 * threads; runs that cannot claim and failed runs do not count). */
int tsl_graph_ctx_claims_kept(const tsl_graph_ctx *c);

/* The data of input / output i in this context (compact, the described shape), or NULL
 * for a bad index. Inputs are read by the next run; outputs hold the last run's
 * results (the arena bytes of other buffers are scratch between runs). */
void *tsl_graph_ctx_input(tsl_graph_ctx *c, int i);
const void *tsl_graph_ctx_output(const tsl_graph_ctx *c, int i);

/* Runs every step in order. step_seconds, if not NULL, receives the wall time of each
 * step in seconds (tsl_graph_plan_num_steps entries; a step's time includes the claim of
 * its outputs, runtime/graph_executor.h tsl_graph_plan_claim_output).
 * Errors: TSL_ERR_INVALID (NULL context), TSL_ERR_RUNTIME when a kernel returns nonzero
 * (the message names the step's label and the code); later steps are not run. */
tsl_status tsl_graph_run(tsl_graph_ctx *c, double *step_seconds);

#ifdef __cplusplus
}
#endif
#endif
