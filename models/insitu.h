/* In-model ("in situ") verification of the per-layer tuning choice.
 *
 * Isolated measurement (tuner/runner.h) repeats one kernel with its weights and input
 * hot in the caches; inside a model the weights are cold (each layer's weights are read
 * once per run, after the other layers evicted them) and a Winograd F(4)/F(6) kernel
 * with its larger transformed weights can lose there to the F(2) it beat in isolation.
 * So the choice is verified where it runs, as MegEngine's Fast-Run profiles algorithms
 * inside the real graph:
 *
 *   1. candidates per tuned conv workload of the model: the model's default (what
 *      compiling without records runs: tsl_conv2d_select's algorithm at its template's
 *      default config) and the `per_algo` best distinct configs (by isolated cost, as
 *      tuner/dispatch.h ranks records) of each of the `top_algos` best algorithms, the
 *      isolated order kept, at most TSL_INSITU_MAX_CANDIDATES - 1 in all: the isolated
 *      ranking only proposes, the model decides (the second-best config of an algorithm
 *      in isolation is often the better one in the model, where its weights are cold);
 *   2. variants: variant 0 is the model compiled without records; variant k >= 1 is
 *      compiled from records holding, per workload, its k-th candidate (its best
 *      isolated one when it has fewer). A layer is a (workload, only_algo) pair: a
 *      channel-scaled conv (GEMM 1x1 only) and an unscaled one of the same workload are
 *      two layers with their own candidates; since a variant's records are looked up by
 *      workload key alone, such layers get disjoint variants (there the other layer runs
 *      its default, or the candidate's record when that is a GEMM 1x1 record it can take:
 *      such steps are not measured for it). Their in-model records share the key, so a
 *      later compile from them can give one twin the other's record. All variants run alternately (`warmup` untimed
 *      rounds, then `rounds` timed ones, the first variant of a round rotating) so the
 *      machine's load hits them alike, with per-step times (tsl_graph_run);
 *   3. a candidate's in-model samples: per timed run of its variant, the seconds of the
 *      steps that compute its workload divided by their number (seconds per call); its
 *      in-model cost is the fastest of them (tuner/records.h: tsl_record_cost; the cold
 *      caches are there in every run, the load of the machine is not), and the layer's
 *      choice the candidate of least in-model cost;
 *   4. every measured candidate becomes a record with the input and config of its
 *      isolated record, its in-model samples as costs and `context` set (appended to
 *      records_path and added to db), which the lookup then prefers (tuner/dispatch.h);
 *   5. the final-plan check (window > 0). A variant runs each layer's candidate next to
 *      other layers' candidates, not next to their choices: a conv's output written
 *      with another parallel split, or left in another core's cache, is read by the
 *      next steps of the final plan at another speed (squeezenet1_1 at 2 threads: a
 *      squeeze conv chosen at 37 us in its variant ran 80 us in the final plan, and the
 *      two expand convs reading it 30 us slower each). So the plan of every layer's
 *      choice (F) runs alternately with, per layer whose choice is not its default
 *      (and whose key is its own), F with that layer back at its default (F - L), in
 *      batches of at most TSL_INSITU_MAX_CANDIDATES - 1 layers. A layer's cost there is
 *      the seconds of its steps and of the `window` plan steps after each of them (the
 *      readers of its output come next in plan order), its fastest run; the choice
 *      stays only when it is cheaper than the default this way, else the layer goes
 *      back to its default. Both measurements become final-plan records (records.h:
 *      window_steps = window; the default's first, so that a tie goes to it), which
 *      the lookup prefers to the variants' in-model records.
 *
 * A workload without isolated records is left alone (it keeps the default). */
#ifndef TESSEL_MODELS_INSITU_H
#define TESSEL_MODELS_INSITU_H

#include <stdbool.h>
#include <stdio.h>

#include "models/graph.h"
#include "tuner/records.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_INSITU_MAX_CANDIDATES 32
#define TSL_INSITU_MAX_WINDOW 16

typedef struct tsl_insitu_opts {
  const char *target;       /* target string; NULL = "host" */
  const char *context;      /* the records' context, e.g. "model squeezenet1_1"; non-empty */
  int top_algos;            /* isolated algorithms verified per workload, 1 .. MAX_CANDIDATES-1 */
  int per_algo;             /* isolated configs verified per algorithm, >= 1 (all candidates of
                               a workload together at most MAX_CANDIDATES-1) */
  int rounds;               /* timed runs of every variant, 1 .. TSL_RECORD_MAX_COSTS */
  int warmup;               /* untimed runs of every variant first, >= 0 */
  int threads;              /* thread-pool threads while running; 0 = as set */
  int window;               /* the final-plan check (5.): plan steps after each of a layer's
                               steps its cost spans, 1 .. TSL_INSITU_MAX_WINDOW; 0 = no check */
  const char *records_path; /* in-model records are appended here; NULL = nowhere */
  FILE *log;                /* progress lines; NULL = quiet */
} tsl_insitu_opts;

/* top_algos 3, per_algo 8, rounds 31, warmup 3, threads 0, window 2, context "model", no
 * file, quiet. */
tsl_insitu_opts tsl_insitu_opts_default(void);

typedef struct tsl_insitu_candidate {
  tsl_record rec;       /* input and config; after the pass its in-model record (costs =
                           per-call samples in seconds, context set) when measured */
  bool is_default;      /* the model's default (candidate 0) */
  bool measured;        /* its variant ran it (the dispatch chose it there) */
  double isolated_cost; /* seconds, its isolated record's (tsl_record_cost); +inf if none */
  double model_cost;    /* seconds per call in the model (its fastest run); +inf if not measured */
} tsl_insitu_candidate;

typedef struct tsl_insitu_layer {
  char key[TSL_RECORD_KEY_LEN]; /* the family workload key */
  char node[128];               /* the first conv node computing it (with this only_algo) */
  int steps;                    /* its conv steps per run */
  int only_algo;                /* -1, or the one conv algorithm its steps can run (a
                                   channel-scaled layer: GEMM 1x1); candidates of it only.
                                   The layer is the pair (key, only_algo) */
  bool shares_key;              /* another layer has the same key (other only_algo) */
  int first_variant;            /* candidate c >= 1 runs in variant first_variant + c - 1 */
  int ncand;
  tsl_insitu_candidate cand[TSL_INSITU_MAX_CANDIDATES]; /* [0] the default, [1] the isolated best, ... */
  int mixed_choice;             /* the candidate of least model_cost (the variants' choice) */
  int chosen;                   /* the layer's choice: mixed_choice, or 0 when the final-plan
                                   check sent it back to its default */
  bool checked;                 /* the final-plan check measured it (mixed_choice > 0, a key of
                                   its own, every step of it found in both plans) */
  double final_cost[2];         /* seconds per run of its steps and the window after them in
                                   the final plan, fastest run: [0] at its default (F - L),
                                   [1] at mixed_choice (F); +inf when not checked */
  int isolated_choice;          /* what the isolated records alone choose (0: the default) */
  int rank_pairs;               /* measured candidates with an isolated cost too */
  double rank_corr;             /* Spearman correlation of their isolated and in-model costs
                                   (tsl_spearman; 0 below 2 pairs): how well isolated timing
                                   ranks this layer's candidates for the model */
} tsl_insitu_layer;

typedef struct tsl_insitu_result {
  int nlayers;
  tsl_insitu_layer *layers; /* malloc'd: tsl_insitu_result_clear */
  int variants;             /* models compiled and run (the final-plan check's included) */
  int checked, reverted;    /* layers the final-plan check measured / sent back to their default */
  int records_written;      /* in-model records added */
  double seconds;           /* the whole pass (compiles + runs) */
} tsl_insitu_result;

/* Runs the pass on model graph g (not modified) with the isolated records of db (the
 * in-model records made are added to db and appended to o->records_path). The target
 * must run here. res is cleared first; free it with tsl_insitu_result_clear.
 * Errors: TSL_ERR_INVALID (NULL arguments, options out of range), errors of the
 * compilation and runs of the variants (messages say which variant; the final-plan
 * check's plans are best-effort: one that fails leaves its layers unchecked, said on
 * o->log), TSL_ERR_IO (the records file), TSL_ERR_NOMEM. */
tsl_status tsl_insitu_verify(const tsl_graph *g, tsl_records *db, const tsl_insitu_opts *o, tsl_insitu_result *res);

/* The final-plan check (5.) alone, on the result of a pass run with window 0 whose
 * layers' choices (mixed_choice = chosen) may have been set by the caller to any of
 * their candidates: every layer whose choice is not its default and whose key is its
 * own is timed in the final plan against its default there; sets checked, final_cost
 * and chosen, adds to checked, reverted, variants and records_written, and writes the
 * final-plan records (window_steps = o->window; one timestamp per pair) to db and
 * o->records_path; res->seconds is not changed. The tsl_insitu_verify of a window > 0
 * runs it last. A plan that fails to compile or run leaves its layers unchecked (said on
 * o->log; no error). The layers of one batch are decided together and the plan after the
 * reverts is not measured again. Errors: TSL_ERR_INVALID (NULL arguments; window not
 * 1..TSL_INSITU_MAX_WINDOW; rounds, warmup or context as for the pass; a layer's choice
 * not one of its candidates, or checked already), TSL_ERR_IO (the records file: res then
 * holds the layers decided so far), TSL_ERR_NOMEM. */
tsl_status tsl_insitu_check_final_plan(const tsl_graph *g, tsl_records *db, const tsl_insitu_opts *o,
                                       tsl_insitu_result *res);

void tsl_insitu_result_clear(tsl_insitu_result *res);

#ifdef __cplusplus
}
#endif
#endif
