/* tessel — tuning a model from an application: measure schedules of every distinct
 * convolution of a loaded model and append the measurements to a records file, which
 * tsl_model_compile then reads (`records` argument).
 *
 *     tsl_model_tune_opts o = tsl_model_tune_opts_default();
 *     o.trials = 16;
 *     tsl_model_tune_summary s;
 *     tsl_model_tune(m, "host", "records.jsonl", &o, &s);
 *     tsl_model_compile(m, "host", "records.jsonl", &c);
 *
 * This is the loop of `tunecli tune MODEL` (tuner/tune.h: AutoTVM's Tuner.tune per
 * workload, every applicable algorithm's default measured first, then an XGBoost-guided
 * search), without its report, its in-model verification pass and its end-to-end
 * comparison: use tunecli for those. Candidates are built and timed in isolated worker
 * processes on this machine; the run takes seconds per trial (JIT compile + timing), so
 * budget `trials` accordingly.
 */
#ifndef TESSEL_TUNE_H
#define TESSEL_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "tessel/status.h"
#include "tessel/tessel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options of tsl_model_tune. */
typedef struct tsl_model_tune_opts {
  int trials;         /* candidates per distinct layer over all its algorithms, >= 1 (the
                         first pass measures every algorithm's default even beyond it) */
  int early_stopping; /* per algorithm: stop after this many trials without a better
                         candidate, >= 0; 0 = never */
  int threads;        /* threads candidates are timed with, 0..TSL_MAX_THREADS; 0 = the
                         current tsl_get_num_threads(). Compile with the same count: the
                         compiler prefers records timed with it */
  double timeout_s;   /* wall seconds after which no new batch of candidates starts, >= 0;
                         0 = none */
  uint64_t seed;      /* the search's seed */
  bool verbose;       /* progress lines on stderr */
} tsl_model_tune_opts;

/* Defaults: 32 trials, early stopping 16 (those of `tunecli tune`), threads 0, no
 * timeout, seed 1, quiet. */
tsl_model_tune_opts tsl_model_tune_opts_default(void);

/* What a tuning run did. Times are seconds per call of one layer, summed over the
 * distinct layers (each counted once, however often the model runs it). */
typedef struct tsl_model_tune_summary {
  int layers;            /* distinct conv (and bitserial-conv) workloads of the model */
  int tuned;             /* layers where some candidate succeeded */
  int trials;            /* trials over all layers, resumed ones included */
  int measured;          /* trials measured by this run (the rest came from the file) */
  int errors;            /* candidates that failed (they are records too) */
  double default_seconds; /* the default schedules (layers where it was measured) */
  double tuned_seconds;   /* the best candidates (layers with one) */
} tsl_model_tune_summary;

/* Tunes every distinct convolution of m for `target` (NULL: "host"; it must run on this
 * machine) and appends every measurement to the records file `records` (created when
 * missing; records already there for the same target and workload are resumed, never
 * measured again). `opts` NULL means the defaults; `out` may be NULL.
 * A layer whose every algorithm fails is counted in layers but not in tuned; that is no
 * error. Errors: TSL_ERR_INVALID (NULL m or records, options out of range: the message
 * names the field), TSL_ERR_UNSUPPORTED (a target that does not run here), TSL_ERR_NOT_FOUND
 * (the model has no convolution to tune), TSL_ERR_IO (the records file: unreadable,
 * unwritable), TSL_ERR_NOMEM; errors of tsl_model_compile's passes on the model. */
tsl_status tsl_model_tune(const tsl_model *m, const char *target, const char *records,
                          const tsl_model_tune_opts *opts, tsl_model_tune_summary *out);

#ifdef __cplusplus
}
#endif
#endif
