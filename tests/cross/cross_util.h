/* Helpers of the cross suite: lowering registry operators for a target, seeded buffers,
 * running tessel-device-run under qemu-aarch64, and a scratch folder. */
#ifndef TESSEL_TESTS_CROSS_UTIL_H
#define TESSEL_TESTS_CROSS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/jit.h"
#include "ops/registry.h"
#include "ir/ir.h"
#include "target/target.h"

#define CROSS_MAX_BUFS 16

/* One registry operator instantiated on its example shapes, with seeded inputs. */
typedef struct cross_op {
  const tsl_op_info *info;
  const tsl_te_program *prog;
  int nbufs; /* inputs then outputs */
  int ninputs;
  size_t bytes[CROSS_MAX_BUFS];
  tsl_type dtype[CROSS_MAX_BUFS];
  void *bufs[CROSS_MAX_BUFS]; /* 64-byte aligned; outputs zeroed */
} cross_op;

/* Instantiates op on its example (in the current arena) and fills the inputs from
 * `seed`: floats uniform in [-1, 1) (an input named var/variance in [0.5, 1.5)), integers
 * random bits. Returns false (printing why)
 * when the operator cannot be instantiated or has too many tensors. */
bool cross_op_init(const tsl_op_info *info, uint64_t seed, cross_op *out);
void cross_op_free(cross_op *op);

/* Lowers op's default schedule for target t (vector width from t) as kernel `name`. */
tsl_status cross_lower(const cross_op *op, const tsl_target *t, const char *name, tsl_func **out);

/* JIT-compiles op's default schedule on the host and runs it on op's inputs, writing its
 * outputs into outs[i] (one buffer per output, op->bytes sized). */
tsl_status cross_run_host(const cross_op *op, tsl_jit *jit, void **outs);

/* Path of qemu-aarch64 and of the aarch64 tessel-device-run, or NULL when missing. */
const char *cross_qemu(void);
const char *cross_device_run(void);
/* Can AOT models run under qemu (qemu-aarch64 and the aarch64 device app,
 * examples/device_app.c)? Prints "skipped: ... missing" when not. */
bool cross_device_app_ready(void);

/* A scratch folder (created once per process, removed by cross_scratch_cleanup);
 * cross_path writes "<scratch>/<name>" into buf. */
const char *cross_scratch(void);
char *cross_path(char *buf, size_t n, const char *name);
void cross_scratch_cleanup(void);

/* Runs argv (argv[0] searched in PATH) with stdout+stderr into log_path; returns the
 * exit status (128+signal when killed, -1 when it could not start). */
int cross_spawn(char *const argv[], const char *log_path);

/* Runs kernel `kernel` of so_path under qemu-aarch64 -cpu cpu: writes op's inputs to
 * files, passes them and the outputs to tessel-device-run, reads the outputs into outs.
 * Returns the exit status; the log (stderr) is copied into log (n bytes). */
int cross_run_device(const cross_op *op, const char *so_path, const char *kernel, const char *cpu, void **outs,
                     char *log, size_t n);

/* Reads a whole text file into buf (n bytes, NUL-terminated, truncated). */
/* Compiles g for armv8 ahead of time (models/aot_model.h), runs it with the aarch64
 * device app under qemu on input[0..n_in) and reads n_out outputs into got; the app's
 * exit status (0: got holds the output). In test_aot_model.c. */
struct tsl_graph;
int cross_aot_run_under_qemu(const struct tsl_graph *g, const char *name, const float *input, int64_t n_in,
                             float *got, int64_t n_out);

void cross_read_text(const char *path, char *buf, size_t n);

#endif
