/* tessel — the C API for applications: load a CNN, compile it, run it.
 *
 *     tsl_model *m;          tsl_model_load("squeezenet1_1", &m);   // or "path/to/model.onnx"
 *     tsl_compiled *c;       tsl_model_compile(m, "host", NULL, &c); // NULL: no records
 *     tsl_context *ctx;      tsl_context_new(c, &ctx);
 *     tsl_context_set_input(ctx, 0, pixels, sizeof pixels);        // f32 NCHW
 *     tsl_context_run(ctx);
 *     tsl_context_get_output(ctx, 0, logits, sizeof logits);
 *     tsl_context_free(ctx); tsl_compiled_free(c); tsl_model_free(m);
 *
 * Every call returns a tsl_status; on failure tsl_last_error() (tessel/status.h) holds
 * a message saying where and why, and tsl_status_name() a short name of the code.
 *
 * Inputs and outputs are found by index (call order) or by name (the model's:
 * tsl_compiled_input_index), each with its dtype and shape (tsl_compiled_input_info).
 * Another batch size: tsl_model_set_batch, then compile again.
 *
 * Threads — the contract:
 *   - A compiled model is immutable once tsl_model_compile* returned: any number of
 *     application threads may use it at once (contexts, info, labels) without locks.
 *   - A context holds one run's activation memory and settings; it is used by one thread
 *     at a time (calls on one context must not overlap; it may move between threads).
 *     N threads each with its own context on the same compiled model compute exactly
 *     what one thread computes (tests/capi).
 *   - A model (tsl_model) is read by compiling; tsl_model_set_batch and
 *     tsl_model_free must not overlap any other call on the same model.
 *   - tsl_last_error is per thread.
 * Kernels run their parallel loops on the process's one thread pool; how many threads
 * a run uses: the context's own count (tsl_context_set_num_threads), else the compiled
 * model's (tsl_compile_opts.num_threads), else the process-wide one
 * (tsl_set_num_threads, tessel/runtime.h). While one run's loop holds the pool, loops of
 * runs on other application threads run on their own thread alone (never blocking).
 */
#ifndef TESSEL_TESSEL_H
#define TESSEL_TESSEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessel/runtime.h"
#include "tessel/status.h"
#include "tessel/tensor.h"
#include "tessel/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_model tsl_model;
typedef struct tsl_compiled tsl_compiled;
typedef struct tsl_context tsl_context;

/* Loads a model: `source` is a built-in model name (squeezenet1_0, squeezenet1_1,
 * resnet18, resnet50, mobilenet_v2, shufflenet_v2_x1_0; deterministic weights, see
 * models/zoo.h) or the path of an ONNX file (anything containing '/' or ending in
 * ".onnx"). Free with tsl_model_free.
 * Errors: TSL_ERR_INVALID (NULL arguments, a malformed file), TSL_ERR_IO (unreadable
 * file), TSL_ERR_NOT_FOUND (unknown built-in name), TSL_ERR_UNSUPPORTED (an operator
 * or opset tessel does not run), TSL_ERR_NOMEM. */
tsl_status tsl_model_load(const char *source, tsl_model **out);
void tsl_model_free(tsl_model *m);

/* The model's inputs and outputs, in call order (as loaded, or after
 * tsl_model_set_batch). */
int tsl_model_num_inputs(const tsl_model *m);
int tsl_model_num_outputs(const tsl_model *m);

/* Describes input / output i of the model as loaded: name (valid while m lives and its
 * batch is unchanged), dtype, rank and extents (shape needs TSL_MAX_NDIM entries); any
 * output pointer may be NULL. Shapes are the graph's, before compilation (the compiled
 * model's are the same: tsl_compiled_input_info).
 * Errors: TSL_ERR_INVALID (NULL m, i out of range: the message gives the count). */
tsl_status tsl_model_input_info(const tsl_model *m, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                int64_t *shape);
tsl_status tsl_model_output_info(const tsl_model *m, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                 int64_t *shape);

/* Sets the batch size: the first extent of every input becomes `batch` (the inputs
 * must share one first extent, the batch axis of NCHW images), shapes are inferred
 * again, and later compilations build for it; compiled models made before keep theirs.
 * Reshapes that carry the batch in their target shape follow it. To run one loaded
 * model at several batch sizes: set, compile, set again, compile again.
 * On failure the model is unchanged.
 * Errors: TSL_ERR_INVALID (NULL m, batch < 1, a layer whose shapes do not hold at that
 * batch: the message names it), TSL_ERR_UNSUPPORTED (inputs without a common first
 * extent; an output whose first extent stays fixed), TSL_ERR_NOMEM. */
tsl_status tsl_model_set_batch(tsl_model *m, int64_t batch);

/* Compiles m for `target` (a target string such as "host" or "x86-64-avx2"; NULL means
 * "host"; it must run on this machine). `records` is a tuning records file (NULL: the
 * default schedules); per layer, records timed with the current thread count
 * (tsl_set_num_threads: set it before compiling) are preferred, in-model ones first
 * (docs/records.md "Lookup"). The model may be freed afterwards.
 * Errors: TSL_ERR_UNSUPPORTED (target, an operator no kernel computes), TSL_ERR_IO
 * (records unreadable), TSL_ERR_CODEGEN (a kernel failed to build), TSL_ERR_NOMEM. */
tsl_status tsl_model_compile(const tsl_model *m, const char *target, const char *records, tsl_compiled **out);

/* As tsl_model_compile; with verbose, every conv layer without a matching record prints
 * its own "no tuning record" line on stderr (otherwise one summary line per model). */
tsl_status tsl_model_compile_verbose(const tsl_model *m, const char *target, const char *records, bool verbose,
                                     tsl_compiled **out);

/* Options of tsl_model_compile_with; start from tsl_compile_opts_default(). */
typedef struct tsl_compile_opts {
  const char *target;  /* target string; NULL: "host" (it must run on this machine) */
  const char *records; /* tuning records file; NULL: the default schedules */
  bool verbose;        /* per-layer "no tuning record" lines (tsl_model_compile_verbose) */
  bool no_auto_schedule; /* kernels with a reduction and no hand template (reductions,
                            softmax, norms, pools of ONNX models) keep the generic default
                            schedule instead of the auto-scheduler's (its OP.auto records,
                            else its default); false: the auto-scheduler's */
  int num_threads;     /* 0: runs use the process-wide count (tsl_set_num_threads) and
                          records timed with it are preferred; 1..TSL_MAX_THREADS: every
                          context of the compiled model runs with this many threads
                          (unless tsl_context_set_num_threads says otherwise) and records
                          timed with it are preferred, whatever the process setting */
  bool no_claim_outputs; /* false (the default): at 2+ threads the outputs of kernels of
                            few FLOPs per output byte (3x3 stride-1 depthwise convs,
                            elementwise steps, layout transforms, norms) are zeroed just
                            before the kernel, each thread its own piece, so each core
                            writes lines it holds (docs/capi.md "Claimed outputs"); true:
                            never */
} tsl_compile_opts;

/* Defaults: target "host", no records, not verbose, auto-scheduled kernels, num_threads 0,
 * claimed outputs. */
tsl_compile_opts tsl_compile_opts_default(void);

/* As tsl_model_compile with the options of opts (NULL: the defaults).
 * Errors: those of tsl_model_compile; TSL_ERR_INVALID (NULL m or out, num_threads
 * outside 0..TSL_MAX_THREADS). */
tsl_status tsl_model_compile_with(const tsl_model *m, const tsl_compile_opts *opts, tsl_compiled **out);

void tsl_compiled_free(tsl_compiled *c);

/* The thread count compiled into c (tsl_compile_opts.num_threads; 0: the process-wide
 * setting at each run). */
int tsl_compiled_num_threads(const tsl_compiled *c);

/* Inputs and outputs of a compiled model, in call order. */
int tsl_compiled_num_inputs(const tsl_compiled *c);
int tsl_compiled_num_outputs(const tsl_compiled *c);

/* Describes input / output i: name (valid while c lives; may be NULL), dtype, rank and
 * extents (shape needs TSL_MAX_NDIM entries; any pointer may be NULL), size in bytes.
 * Errors: TSL_ERR_INVALID (NULL c, i out of range). */
tsl_status tsl_compiled_input_info(const tsl_compiled *c, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                   int64_t *shape, size_t *bytes);
tsl_status tsl_compiled_output_info(const tsl_compiled *c, int i, const char **name, tsl_dtype *dtype, int *ndim,
                                    int64_t *shape, size_t *bytes);

/* Planned peak activation memory of one context (bytes; memory planning shares bytes
 * between tensors whose lifetimes do not overlap), the bytes of weights held, the
 * kernel calls of one run and the distinct kernels compiled. */
/* The index of the input / output named `name` (the model's names, exact match) into *i.
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOT_FOUND (no such name: the
 * message lists the names there are). */
tsl_status tsl_compiled_input_index(const tsl_compiled *c, const char *name, int *i);
tsl_status tsl_compiled_output_index(const tsl_compiled *c, const char *name, int *i);

int64_t tsl_compiled_activation_bytes(const tsl_compiled *c);
int64_t tsl_compiled_weight_bytes(const tsl_compiled *c);
int tsl_compiled_num_steps(const tsl_compiled *c);
int tsl_compiled_num_kernels(const tsl_compiled *c);
/* Kernels whose schedule came from the records file given to tsl_model_compile. */
int tsl_compiled_num_tuned_kernels(const tsl_compiled *c);
/* Step outputs c claims (docs/capi.md "Claimed outputs"): on runs of 2+ threads under
 * the balanced (default) or static schedule each thread zeroes its piece of such an output just before the
 * step's kernel. 0 with tsl_compile_opts.no_claim_outputs and for NULL. */
int tsl_compiled_num_claimed_outputs(const tsl_compiled *c);

/* A context for running c; c must outlive it.
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOMEM. */
tsl_status tsl_context_new(const tsl_compiled *c, tsl_context **out);
void tsl_context_free(tsl_context *ctx);

/* Sets how many threads this context's runs use, the calling thread included (1: every
 * loop on the thread that calls tsl_context_run), whatever the compiled model's or the
 * process's setting; 0 returns to the compiled model's count (else the process-wide).
 * Several contexts on several application threads may each have their own count.
 * Errors: TSL_ERR_INVALID (NULL ctx, n outside 0..TSL_MAX_THREADS). */
tsl_status tsl_context_set_num_threads(tsl_context *ctx, int n);

/* The number of threads the context's next run uses. 0 for a NULL ctx. */
int tsl_context_num_threads(const tsl_context *ctx);

/* Sets when this context's runs of 2+ threads claim the outputs of its compiled model
 * (tsl_compiled_num_claimed_outputs; docs/capi.md "Claimed outputs"): TSL_CLAIMS_AUTO (the
 * default) times runs with and without claims on this machine and keeps the faster kind
 * (tessel/runtime.h tsl_claims_mode), TSL_CLAIMS_ALWAYS, TSL_CLAIMS_NEVER. Setting it
 * starts a new trial under TSL_CLAIMS_AUTO. No effect on a model compiled with
 * no_claim_outputs. Errors: TSL_ERR_INVALID (NULL ctx, a mode not listed). */
tsl_status tsl_context_set_claims(tsl_context *ctx, tsl_claims_mode m);

/* Whether the context's next run of 2+ threads claims its outputs (under
 * TSL_CLAIMS_AUTO the choice of the runs timed so far). false for a NULL ctx and for a
 * model that claims nothing. */
bool tsl_context_claims_next(const tsl_context *ctx);

/* The kind of run the context keeps: 1 claiming, 0 not (also for a NULL ctx and a model
 * that claims nothing), -1 while TSL_CLAIMS_AUTO is in its trial (its first 8 runs that
 * could claim: 2+ threads, not nested in a parallel task, not under the dynamic
 * schedule; failed runs do not count). */
int tsl_context_claims_kept(const tsl_context *ctx);

/* Copies `bytes` bytes (exactly the input's size: compact row-major elements of its
 * dtype) into input i. The value stays for every later run until set again.
 * Errors: TSL_ERR_INVALID (NULL arguments, i out of range, a size mismatch). */
tsl_status tsl_context_set_input(tsl_context *ctx, int i, const void *data, size_t bytes);

/* As tsl_context_set_input for the input named `name`.
 * Errors: those of tsl_context_set_input; TSL_ERR_NOT_FOUND (no input of that name). */
tsl_status tsl_context_set_input_by_name(tsl_context *ctx, const char *name, const void *data, size_t bytes);

/* Runs the model on the context's inputs. Errors: TSL_ERR_RUNTIME (a kernel failed:
 * the message names the layer), TSL_ERR_INVALID (NULL context). */
tsl_status tsl_context_run(tsl_context *ctx);

/* As tsl_context_run, writing the wall time of each kernel call in seconds into
 * step_seconds[0 .. tsl_compiled_num_steps) (for a per-layer profile).
 * Errors: as tsl_context_run; TSL_ERR_INVALID for a NULL step_seconds. */
tsl_status tsl_context_run_profiled(tsl_context *ctx, double *step_seconds);

/* The label of kernel call `step` of one run (the node it computes and, for a conv,
 * the template that scheduled it: "fire2/squeeze1x1 [conv2d_nchwc_1x1_bias.gemm]");
 * "" when out of range. Valid while c lives. */
const char *tsl_compiled_step_label(const tsl_compiled *c, int step);

/* Copies output i of the last run into data (`bytes` must be the output's size).
 * Errors: TSL_ERR_INVALID (NULL arguments, i out of range, a size mismatch). */
tsl_status tsl_context_get_output(const tsl_context *ctx, int i, void *data, size_t bytes);

/* As tsl_context_get_output for the output named `name`.
 * Errors: those of tsl_context_get_output; TSL_ERR_NOT_FOUND (no output of that name). */
tsl_status tsl_context_get_output_by_name(const tsl_context *ctx, const char *name, void *data, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
