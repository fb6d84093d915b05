/* `tunecli report --model M`: the model compiled with its default schedules and with a
 * records file, run alternately in this process (the machine's load hits both alike),
 * timed per layer (tsl_context_run_profiled) and end to end. */
#ifndef TESSEL_TOOLS_REPORT_MODEL_H
#define TESSEL_TOOLS_REPORT_MODEL_H

#include <stdbool.h>

#include "tessel/status.h"

/* One node of the model: the sum of its kernel calls' times in a run, the fastest of
 * the runs, in each variant. */
typedef struct report_node_time {
  char node[128];          /* the node's name (tsl_compiled_step_label before " [") */
  char tpl_default[96];    /* the conv template of the default variant ("" : not a conv) */
  char tpl_tuned[96];      /* the same in the tuned variant */
  bool conv;               /* a conv step in either variant */
  double default_s, tuned_s; /* seconds per run (fastest run); NAN when absent from that variant */
} report_node_time;

typedef struct report_model_times {
  int nnodes;
  report_node_time *nodes; /* malloc'd, in the default variant's step order */
  int runs;                /* timed runs of each variant */
  int threads;             /* thread-pool threads while running */
  double e2e_default_s, e2e_tuned_s;         /* whole run, median over the runs (seconds) */
  double e2e_default_min_s, e2e_tuned_min_s; /* the fastest run */
  int kernels, tuned_kernels;                /* the tuned variant's kernels, those from records */
} report_model_times;

/* Compiles `model` (a built-in name or an .onnx file) for `target` (NULL: "host")
 * without records and with `records`, runs each twice untimed, then `runs` times
 * alternately with per-step timing; fills *out (clear it with report_model_times_clear).
 * Errors: those of tsl_model_load / tsl_model_compile / tsl_context_run (the message
 * names the model), TSL_ERR_INVALID (runs < 1), TSL_ERR_NOMEM. */
tsl_status report_model_measure(const char *model, const char *target, const char *records, int runs,
                                report_model_times *out);

void report_model_times_clear(report_model_times *t);

#endif
