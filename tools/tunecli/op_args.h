/* Shared by the tunecli commands that take an operator: parses
 *   OP [--shape INPUT=AxBxC]... [--param NAME=VALUE]... [--schedule FILE] [--target T]
 * and turns it into a TE program and a schedule. */
#ifndef TESSEL_TOOLS_OP_ARGS_H
#define TESSEL_TOOLS_OP_ARGS_H

#include <stdbool.h>

#include "dsl/ops/registry.h"
#include "schedule/schedule.h"

enum { OP_ARGS_MAX_INPUTS = 8, OP_ARGS_MAX_PARAMS = 32 };

typedef struct op_args {
  const char *op_name;
  const tsl_op_info *info;
  int64_t shapes[OP_ARGS_MAX_INPUTS][8];
  int ndims[OP_ARGS_MAX_INPUTS];
  int nparams;
  tsl_dsl_param_value params[OP_ARGS_MAX_PARAMS];
  char param_names[OP_ARGS_MAX_PARAMS][64]; /* storage for --param names */
  const char *schedule_file; /* NULL: the default schedule */
  const char *target;        /* "host" unless --target */
  tsl_te_program *program;
  tsl_schedule *schedule;
} op_args;

/* Consumes the options above from argv (others are left for the caller: *rest gets
 * the unconsumed ones in order, *nrest their count). Errors are printed to stderr with
 * the command name; returns false on error. */
bool op_args_parse(const char *cmd, int argc, char **argv, op_args *a, char **rest, int *nrest);

/* Instantiates the program and builds the schedule (default or from --schedule). */
bool op_args_build(const char *cmd, op_args *a);

void op_args_free(op_args *a);

/* Prints "tunecli CMD: error: MSG" using tsl_last_error(). Returns 1 (an exit code). */
int tunecli_fail(const char *cmd, tsl_status st);

#endif
