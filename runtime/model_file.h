/* tessel runtime — AOT model files: a whole compiled model in one shared object.
 *
 * `tunecli compile MODEL --target T -o model.so` (models/aot_model.h) writes a shared
 * object holding every kernel of the model (codegen/aot.h: the kernel table
 * tsl_aot_kernels and the target record tsl_aot_target), and appends to the same file
 * the model's plan: its buffers (constants with their data — the weights as the graph
 * passes left them: batch norm folded, re-laid out to NCHW[x]c —, activations at their
 * planned arena offsets, views), the kernel calls in order, and the inputs and outputs
 * with names, dtypes and shapes. The dynamic loader ignores bytes past the ELF image,
 * so the file stays a valid shared object. The byte format (version
 * TSL_MODEL_FILE_VERSION) is specified in docs/aot.md.
 *
 * Both sides live in the runtime (no LLVM, no IR) so that a device program can load a
 * model (tsl_model_file_load) and so that the format is written and read in one file.
 * The writer mirrors the graph-plan builder of runtime/graph_executor.h: the compiler
 * adds buffers, steps, inputs and outputs in the same order it would to a plan.
 */
#ifndef TESSEL_RUNTIME_MODEL_FILE_H
#define TESSEL_RUNTIME_MODEL_FILE_H

#include <stdint.h>

#include "runtime/graph_executor.h"
#include "tessel/plan.h"
#include "tessel/status.h"
#include "tessel/tensor.h"
#include "tessel/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this runtime writes and the only one it reads (public as
 * TSL_MODEL_FILE_FORMAT_VERSION, set in include/tessel/meson.build). */
#define TSL_MODEL_FILE_VERSION TSL_MODEL_FILE_FORMAT_VERSION
/* Magic of the plan blob's header and of the file's trailer (8 bytes, no NUL). */
#define TSL_MODEL_FILE_MAGIC "TSL_PLAN"
#define TSL_MODEL_FILE_TRAILER_MAGIC "TSLMODEL"
/* Bytes of the trailer at the very end of the file. */
#define TSL_MODEL_FILE_TRAILER_BYTES 32
/* Limits checked on load (a corrupt or hostile file fails cleanly, never allocates
 * without bound): counts of buffers / steps / inputs+outputs, and string lengths. */
#define TSL_MODEL_FILE_MAX_ITEMS (1 << 20)
#define TSL_MODEL_FILE_MAX_STRING 4096

typedef struct tsl_model_writer tsl_model_writer;

/* A writer for a model of target `target` (a target string, recorded for messages;
 * copied). Free with tsl_model_writer_free.
 * Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOMEM. */
tsl_status tsl_model_writer_new(const char *target, tsl_model_writer **out);
void tsl_model_writer_free(tsl_model_writer *w);

/* Buffers, numbered from 0 in the order added across the three calls (as in
 * tsl_graph_plan_add_*; the same argument checks). A constant's data is copied now
 * (t must be compact; t stays the caller's).
 * Errors: TSL_ERR_INVALID (NULL arguments, a strided tensor, a misaligned or negative
 * offset, a view outside its base), TSL_ERR_NOMEM. */
tsl_status tsl_model_writer_add_constant(tsl_model_writer *w, const tsl_tensor *t, int *buf);
tsl_status tsl_model_writer_add_activation(tsl_model_writer *w, int64_t offset, int64_t bytes, int *buf);
tsl_status tsl_model_writer_add_view(tsl_model_writer *w, int base, int64_t offset, int64_t bytes, int *buf);

/* A call of kernel `kernel` (its name in the shared object's table) on bufs[0..nargs),
 * labelled `label` (may be NULL). Errors: TSL_ERR_INVALID (NULL or over-long name, a
 * bad buffer id, nargs outside 0..TSL_MAX_KERNEL_ARGS), TSL_ERR_NOMEM. */
tsl_status tsl_model_writer_add_step(tsl_model_writer *w, const char *kernel, const char *label, int nargs,
                                     const int *bufs);

/* Graph input / output number i (call order), as tsl_graph_plan_add_input/output.
 * Errors: TSL_ERR_INVALID (bad buffer, dtype, rank or name; a constant input; the
 * tensor's bytes not the buffer's), TSL_ERR_NOMEM. */
tsl_status tsl_model_writer_add_input(tsl_model_writer *w, const char *name, int buf, tsl_dtype dt, int ndim,
                                      const int64_t *shape);
tsl_status tsl_model_writer_add_output(tsl_model_writer *w, const char *name, int buf, tsl_dtype dt, int ndim,
                                       const int64_t *shape);

/* Appends the plan and the trailer to the existing file `so_path` (the kernels' shared
 * object, written by tsl_aot_compile). *blob_bytes (may be NULL) receives the bytes
 * appended. Errors: TSL_ERR_INVALID (no output declared), TSL_ERR_IO (the file cannot
 * be opened or written: the message carries strerror), TSL_ERR_NOMEM. */
tsl_status tsl_model_writer_append(const tsl_model_writer *w, const char *so_path, int64_t *blob_bytes);

/* Reading a model file (tsl_model_file_load, tsl_model_file_info) is public:
 * include/tessel/plan.h. */

#ifdef __cplusplus
}
#endif
#endif
