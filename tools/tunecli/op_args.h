/* Shared by the tunecli commands that take an operator: parses
 *   OP [--file DSL_FILE] [--shape INPUT=AxBxC]... [--param NAME=VALUE]...
 *      [--schedule FILE] [--target T] [--threads N]
 * and turns it into a TE program and a schedule.
 *
 * OP is a built-in operator (`tunecli list`) or, with --file, an op defined in that DSL
 * file (docs/dsl.md). A built-in operator starts from its example shapes and parameters
 * (`tunecli list` shows them); --shape/--param override them one by one. An op from a
 * file needs --shape for every input; its parameters take their DSL defaults.
 * --schedule FILE replaces the default schedule by the steps in FILE, applied to the
 * initial schedule (every stage at the root: repeat compute_inline(padded) there if you
 * want the default inlining); errors name FILE:LINE:COL and the step.
 * --records FILE (show, run-op, compile) takes the schedule of the best record of this
 * operator instance in FILE (tuner/dispatch.h, on --target or its family; records timed
 * with --threads N threads, else the process's count, first; in-model records first, the
 * final plan's before the variants'):
 * for a conv layer's family operator (conv2d_nchwc_bias, conv2d_nchwc_bias_add,
 * conv2d_nchwc_grouped, conv2d_nchwc_grouped_add: the key `tunecli tune MODEL` records a
 * layer under, ops/conv2d/algorithms_conv.h) over EVERY algorithm of the family, as the
 * graph compiler picks, and the program is then the winning algorithm's operator (e.g.
 * conv2d_nchwc_im2col); for an algorithm's own operator (conv2d_nchwc_im2col,
 * conv2d_winograd_f4, ...) over that algorithm's records of the layer it computes
 * (tsl_conv2d_layer_of_algo_workload), under the layer's key or the operator key of the
 * instance the layer's algorithm runs, ranked alike; an instance the compiler would not
 * run (im2col at another pack_rows) over its own records first; for any other operator
 * over its own templates.
 * None is an error.
 * record_note names the algorithm, template, config, record kind (in-model or isolated),
 * cost and threads. tune-op reads --records as its records file.
 * --threads N (show, run-op, compile; 1..256) the thread count to look records up for,
 * run (run-op) and estimate (show --static-cost) with: the process's pool is set to N
 * (tsl_set_num_threads) when the schedule is built. tune-op reads --threads itself.
 * --template NAME (show, run-op, compile) takes that template's default config for this
 * instance on --target: the schedule used when no record applies. tune-op reads --template
 * as its own option (tune only that template). At most one of the three is given. */
#ifndef TESSEL_TOOLS_OP_ARGS_H
#define TESSEL_TOOLS_OP_ARGS_H

#include <stdbool.h>

#include "ops/registry.h"
#include "schedule/schedule.h"

enum { OP_ARGS_MAX_INPUTS = 8, OP_ARGS_MAX_PARAMS = 32, OP_ARGS_MAX_THREADS = 256 };

typedef struct op_args {
  const char *op_name;
  const char *file;          /* --file, or NULL for a built-in operator */
  tsl_dsl_module *module;    /* parsed --file */
  const tsl_dsl_op *def;     /* the op's definition (built-in or from the file) */
  const char *name;          /* canonical name (kernel name) */
  const char *text;          /* the op's DSL text */
  int ninputs;
  const char *input_names[OP_ARGS_MAX_INPUTS];
  bool shape_given[OP_ARGS_MAX_INPUTS];
  int64_t shapes[OP_ARGS_MAX_INPUTS][8];
  int ndims[OP_ARGS_MAX_INPUTS];
  int nparams;
  tsl_dsl_param_value params[OP_ARGS_MAX_PARAMS];
  char param_names[OP_ARGS_MAX_PARAMS][64]; /* storage for --param names */
  const char *schedule_file; /* NULL: the default schedule */
  const char *records_file;  /* --records, or NULL */
  const char *template_name; /* --template (show, run-op, compile), or NULL */
  bool keep_module;          /* the module's op is registered (tsl_op_register_user): never freed */
  char record_note[1024];    /* after a --records build: which record gave the schedule */
  const char *target;        /* "host" unless --target */
  int threads;               /* --threads (show, run-op, compile), 0 when not given */
  tsl_te_program *program;
  tsl_schedule *schedule;
} op_args;

/* Consumes the options above from argv (others are left for the caller: rest gets the
 * unconsumed ones in order, *nrest their count; rest has room for argc entries). Errors
 * are printed to stderr with the command name; returns false on error. */
bool op_args_parse(const char *cmd, int argc, char **argv, op_args *a, char **rest, int *nrest);

/* Instantiates the program (in the current IR arena) and builds the schedule. */
bool op_args_build(const char *cmd, op_args *a);

/* Prints the input shapes and parameter values in effect ("A=100x70, B=70x30; alpha=0.5"). */
void op_args_print_config(FILE *f, const op_args *a);

void op_args_free(op_args *a);

/* Registers the --file op in the operator registry (tsl_op_register_user), so that the
 * tuner and the records know it by name; the module is then kept for the process. Also
 * registers its schedule block as a template when it has one (ops/user/user_template.h).
 * True for a built-in operator (nothing to do). Errors printed; false on error. */
bool op_args_register_user_op(const char *cmd, op_args *a);

/* Prints "tunecli CMD: error (KIND): MSG" using tsl_last_error(). Returns 1 (an exit code). */
int tunecli_fail(const char *cmd, tsl_status st);

/* Reads a whole text file into a malloc'd NUL-terminated string. NULL (with a message on
 * stderr naming the command and the file) when it cannot be read, is a directory, or
 * holds a NUL byte. */
char *tunecli_read_text_file(const char *cmd, const char *path);

/* The median of x[0..n) (n >= 1; the mean of the middle two for an even n). Sorts x in
 * place, ascending: x[0] is then the minimum. */
double tunecli_median_sort(double *x, int n);

#endif
