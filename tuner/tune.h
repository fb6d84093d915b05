/* The tuning loop (AutoTVM's Tuner.tune): for one workload, first measure the default
 * config of every algorithm that applies (ops/algorithm.h; MegEngine's Fast-Run
 * choice needs each one measured), then share the remaining trial budget between the
 * (at most 3) best algorithms within 2x of the best so far: for each, ask the search
 * for batches of candidates, measure each in an isolated worker (runner.h), append
 * every result to the records file, feed the results back to the search (its cost
 * model retrains), and stop at its share, after `early_stopping` trials without
 * improvement, or at the deadline. The first pass measures every applicable algorithm's
 * default even when that is more than `trials`.
 *
 * Resume: records already in `db` for the same target, workload, template and space
 * hash are never measured again; they count as trials and seed the search's model.
 * Only records of the run's own cost source count (measured, or static estimates with
 * measure.cost_static: tuner/cost_static.h): the two are never compared.
 */
#ifndef TESSEL_TUNER_TUNE_H
#define TESSEL_TUNER_TUNE_H

#include <stdbool.h>
#include <stdio.h>

#include "ops/algorithm.h"
#include "tuner/records.h"
#include "tuner/runner.h"
#include "tuner/search.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_tune_opts {
  tsl_search_kind search;
  int trials;             /* candidates per workload over all its algorithms, >= 1 */
  int early_stopping;     /* per algorithm: stop after this many trials without a better
                             candidate; 0 = never */
  double deadline;        /* tsl_time_now() value after which no batch starts; 0 = none */
  int batch;              /* candidates per search batch, >= 1 */
  uint64_t seed;
  tsl_measure_opts measure;
  const char *records_path; /* every measurement is appended here; NULL = nowhere */
  tsl_records *db;          /* measurements so far (resume; new ones are added); may be NULL */
  const char *only_template; /* tune only this template; NULL = every applicable one */
  int only_algo;            /* -1 = every applicable algorithm; else only the operators of
                               this conv algorithm (tsl_conv2d_algo), whose default is then
                               the baseline: the one algorithm a compiled layer can run
                               (models/compile.h: tsl_conv_layer.only_algo) */
  FILE *log;                /* progress and per-error lines; NULL = quiet */
  bool progress_tty;        /* rewrite one progress line with '\r' instead of printing lines */
  const char *progress_prefix; /* printed before each progress line (e.g. "[4/18]"); may be NULL */
  double eta_after_s;       /* seconds the caller expects after this workload (later layers):
                               added to the progress line's total ETA */
  int prefilter;            /* measured runs: estimate each search batch with the static cost
                               model (tsl_runner_estimate) and measure only its best
                               `prefilter` candidates (the rest are left unmeasured and
                               unrecorded); 0 = measure every candidate */
  const char *shadow_static_path; /* measured runs only: also estimate every measured
                               candidate with the static cost model (tsl_runner_estimate),
                               append those static records here (never to records_path)
                               and report the rank correlation (tsl_tune_result); NULL = no */
  bool shadow_held;         /* with shadow_static_path: the measured records db already
                               holds for the workload (resume) are estimated too, into the
                               same file and correlation: a measured run re-estimated
                               offline with the current model (with trials no more than
                               those held, nothing is measured) */
} tsl_tune_opts;

/* Defaults: xgb, 64 trials, early stopping 0, no deadline, batch 8, seed 1,
 * tsl_measure_opts_default(), no records file, no db, all templates and algorithms
 * (only_algo -1), quiet. */
tsl_tune_opts tsl_tune_opts_default(void);

typedef struct tsl_tune_result {
  bool found;                /* some candidate succeeded */
  char algorithm[96];
  char template_name[96];
  char config_str[512];      /* the best config as "knob=value,..." */
  tsl_config config;
  double best_cost;          /* seconds per call of the best candidate (+inf if none) */
  double default_cost;       /* seconds of what compiling without records runs: the
                                dispatcher's default algorithm (tuner/dispatch.h, e.g.
                                tsl_conv2d_select's pick) at its default config (+inf
                                when it failed or was not measured) */
  double flops;              /* of the family workload's own operator, per call (so
                                GFLOP/s compare algorithms: Winograd's are "effective") */
  int trials, errors, measured; /* trials incl. resumed; errors; measured now */
  double compile_s;          /* JIT compile seconds spent now */
  int static_pairs;          /* with shadow_static_path: candidates both measured and
                                estimated now (successes) */
  double static_spearman;    /* Spearman correlation of their estimates and measured
                                costs (tsl_spearman; 0 below 2 pairs) */
} tsl_tune_result;

/* Whether candidates for target t can be measured with options m: on the device
 * m->device names (checked when connecting), or here, when code for t runs on this
 * machine (tsl_target_runs_on_host); with m->cost_static, whether the static cost model
 * can estimate for t's CPU here (tsl_cost_static_check). Errors: TSL_ERR_UNSUPPORTED,
 * with one message naming the target, what is missing (an architecture or a feature,
 * e.g. avx512f on an AVX2 machine; llvm-mca or its model of the CPU) and the ways out
 * (--device, the static model, or a target that runs here); TSL_ERR_INVALID
 * (cost_static with a device). */
tsl_status tsl_tune_check_target(const tsl_target *t, const tsl_measure_opts *m);

/* Tunes family workload w on target t (which must run here, or m.device set: checked
 * first with tsl_tune_check_target). Candidate failures are
 * records, not errors. Errors: TSL_ERR_INVALID (bad options), TSL_ERR_NOT_FOUND (no
 * algorithm applies to w), errors of tsl_workload_key_of, tsl_runner_new (when the
 * reference fails: then that algorithm is skipped, and the error is returned only if
 * every algorithm was skipped: the message names the last one's reason), TSL_ERR_IO
 * (the records file), TSL_ERR_UNSUPPORTED (tsl_tune_check_target). */
tsl_status tsl_tune_workload(const tsl_target *t, const tsl_workload *w, const tsl_tune_opts *opts,
                             tsl_tune_result *res);

#ifdef __cplusplus
}
#endif
#endif
