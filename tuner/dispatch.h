/* Compiling with records: the schedule of a workload from the best record, or the
 * known-good default (what the graph compiler calls per layer).
 *
 * For family workload w on target t, every applicable algorithm (ops/algorithm.h)
 * builds its current config space; tsl_records_best finds its best record with that
 * space's hash (records of another space — a changed template, a stale file — are
 * ignored) on the exact target, else the target family. An algorithm's records are
 * those keyed by w (what `tunecli tune MODEL` writes) and those keyed by the operator
 * instance it runs, its op_workload (what `tunecli tune-op` writes for that operator:
 * e.g. conv2d_winograd_f2 with the layer's data and U shapes, params and epilogue), the
 * better of the two by the same ranks and cost; so tuning one layer's operator on its
 * own tunes every layer that runs that instance. The fastest such record over
 * all algorithms wins, exact-target matches before family ones. Within each (exact,
 * family), in-model records (records.h: context, written by the in-situ pass of
 * models/insitu.h) come first: when a workload has any valid one, the best in-model
 * record over all algorithms wins and isolated records are not compared with it; among
 * them, the current final-plan pair (window_steps > 0, tsl_record_final_current) before
 * the variants' records. Its config is checked
 * against the space and applied. When nothing matches (an unknown shape, another
 * target only, an invalid or stale config), the family's default algorithm (for the
 * conv families of ops/conv2d/algorithms_conv.h: the one tsl_conv2d_select picks; else the
 * first applicable) runs with its template's default config and ONE line is printed on
 * `warn`:
 *
 *   tessel: warning: no tuning record for KEY on TARGET; using the default schedule
 *   TEMPLATE (CONFIG)
 *
 * (one line; shown wrapped). A config is never taken from another workload or target
 * family (shared/cases C11). Without records (db NULL) only the default algorithm's
 * program is instantiated. An operator with no template at all (a user's DSL op, a
 * registry op nobody wrote a template for) gets the auto-scheduler's template
 * (tuner/autosched.h, "OP.auto", registered here): its records, else its default (the
 * first sketch, deterministic).
 */
#ifndef TESSEL_TUNER_DISPATCH_H
#define TESSEL_TUNER_DISPATCH_H

#include <stdbool.h>
#include <stdio.h>

#include "ops/algorithm.h"
#include "ops/conv2d/algorithms_conv.h"
#include "tuner/records.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_dispatch_info {
  bool tuned;               /* a record was used */
  tsl_match_kind match;     /* how it matched (TSL_MATCH_NONE for the default) */
  char algorithm[96];
  char template_name[96];
  tsl_workload op_workload; /* the operator the program instantiates (e.g. conv2d_winograd_f4
                               for a conv2d_nchwc_bias layer: its weights need the
                               algorithm's transform) and its shapes */
  char config_str[512];
  double cost;              /* the record's cost in seconds (tsl_record_cost: its fastest
                               sample); +inf for the default */
  bool in_model;            /* the record used was measured inside a model */
  int only_algo;            /* -1: every algorithm considered; else the one conv algorithm
                               (tsl_conv2d_algo) the dispatch was restricted to
                               (tsl_dispatch_schedule_conv_algo) */
  tsl_record record;        /* the schedule as a record: target, task, family workload key,
                               algorithm, template, space hash, config index, knobs and
                               config; when tuned, also the used record's result, device
                               and context; for the default no costs (ncosts 0) */
} tsl_dispatch_info;

/* The key of the operator instance algorithm a runs (tsl_workload_key_of of its
 * op_workload: what `tunecli tune-op` of that operator writes, e.g. conv2d_winograd_f2
 * with the layer's data, U and bias shapes) when it differs from the layer's family key
 * `key`; NULL when it is the same or cannot be formed. The caller frees it. Records under
 * either key are the layer's (above). */
char *tsl_dispatch_op_key(const tsl_algo_choice *a, const char *key);

/* The program (instantiated in the current arena) and its schedule (caller frees with
 * tsl_schedule_free) for workload w, considering only the templates of w's OWN operator:
 * the program has w's inputs and outputs exactly, so a caller can run it on the layer's
 * tensors as they are. db may be NULL (defaults everywhere); warn and info may be NULL.
 * Errors: TSL_ERR_NOT_FOUND (no template schedules w's operator), errors of the
 * workload key, the instantiation, and the default config's template. */
tsl_status tsl_dispatch_schedule(const tsl_records *db, const tsl_target *t, const tsl_workload *w, FILE *warn,
                                 tsl_te_program **program, tsl_schedule **sched, tsl_dispatch_info *info);

/* As tsl_dispatch_schedule over EVERY algorithm of w's family (Fast-Run): the program
 * may instantiate another operator (info->op_workload says which, e.g. Winograd, whose
 * weights the caller must transform with the algorithm's weight transform first). */
tsl_status tsl_dispatch_schedule_any(const tsl_records *db, const tsl_target *t, const tsl_workload *w, FILE *warn,
                                     tsl_te_program **program, tsl_schedule **sched, tsl_dispatch_info *info);

/* As tsl_dispatch_schedule_any restricted to ONE algorithm of a conv family workload w:
 * the best record of `algo`'s operators (records of the other algorithms are not
 * compared), else `algo`'s default config with the warning above. For a layer that only
 * one algorithm can compute as fused (e.g. a squeeze-excitation channel scale read inside
 * the GEMM 1x1 kernel, models/passes/fuse_channel_scale.h): its tuned config of that
 * algorithm, not the default because another algorithm won in isolation.
 * Errors: TSL_ERR_NOT_FOUND when `algo` does not apply to w; as tsl_dispatch_schedule. */
tsl_status tsl_dispatch_schedule_conv_algo(const tsl_records *db, const tsl_target *t, const tsl_workload *w,
                                           tsl_conv2d_algo algo, FILE *warn, tsl_te_program **program,
                                           tsl_schedule **sched, tsl_dispatch_info *info);

#ifdef __cplusplus
}
#endif
#endif
