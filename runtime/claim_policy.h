/* When a context's runs claim their outputs (runtime/graph_executor.h
 * tsl_graph_plan_claim_output): always, never, or chosen by timing runs of both kinds on
 * this machine (TSL_CLAIMS_AUTO). Whether a claim pays depends on how the cores share
 * their caches, and that differs between machines and over time on one VM: on a Zen 5 VM
 * claims made MobileNetV2 5-8% faster at 2 threads (12-17% in its slow cross-core
 * state, docs/capi.md); on an Intel Xeon VM (session 56) models that claim ran 2-9%
 * slower with them. So the default measures. The policy itself holds no clock: the
 * executor passes each run's wall time. */
#ifndef TSL_RUNTIME_CLAIM_POLICY_H
#define TSL_RUNTIME_CLAIM_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "tessel/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs of the trial that starts every automatic choice, in the order claimed,
 * unclaimed, unclaimed, claimed, claimed, unclaimed, unclaimed, claimed (ABBA: neighbouring
 * runs of the two kinds come in both orders, so a machine drifting slower or faster
 * over the trial favours neither). */
#define TSL_CLAIM_TRIAL_RUNS 8
/* After the trial, the last two runs of every this many use the other kind (again both
 * orders: the run before them against the first, the second against the run after),
 * to follow the machine. */
#define TSL_CLAIM_RECHECK_RUNS 32
/* Ratios kept: claimed run time / unclaimed run time of neighbouring runs of the two
 * kinds; the choice is their median (the trial's four, then two per recheck). */
#define TSL_CLAIM_WINDOW 8

typedef struct tsl_claim_policy {
  tsl_claims_mode mode;
  int64_t runs;                    /* runs recorded under TSL_CLAIMS_AUTO */
  bool use;                        /* the kind in use after the trial: claimed or not */
  bool have_last, last_claimed;    /* the previous recorded run, if it pairs with the next */
  double last_seconds;
  int64_t last_key;                /* its conditions (tsl_claim_policy_record) */
  double ratio[TSL_CLAIM_WINDOW];  /* a ring of the last ratios */
  int nratio, next;
} tsl_claim_policy;

/* TSL_OK for a listed mode, else TSL_ERR_INVALID with a message naming `who` (the
 * public function called) and the allowed modes. */
tsl_status tsl_claims_mode_check(const char *who, tsl_claims_mode m);

/* A policy in mode m (TSL_CLAIMS_AUTO: the trial first). */
void tsl_claim_policy_init(tsl_claim_policy *p, tsl_claims_mode m);

/* Whether the next run claims: always / never in those modes; under TSL_CLAIMS_AUTO the
 * trial's order for the first TSL_CLAIM_TRIAL_RUNS recorded runs, then the kind whose
 * runs were faster (the median of the kept ratios below 1: claimed; a tie: not), except
 * the last two of every TSL_CLAIM_RECHECK_RUNS runs, which use the other kind. */
bool tsl_claim_policy_next(const tsl_claim_policy *p);

/* The kind of run the policy keeps: 1 claimed, 0 unclaimed (TSL_CLAIMS_ALWAYS: 1,
 * TSL_CLAIMS_NEVER: 0), -1 while TSL_CLAIMS_AUTO is in its trial. */
int tsl_claim_policy_kept(const tsl_claim_policy *p);

/* Records a run made with (claimed) or without claims that took `seconds` of wall time
 * under conditions `key` (the executor's thread count and schedule): a run next to one
 * of the other kind under the same conditions adds the pair's ratio. A time that is not
 * positive and finite (a failed run) is not recorded and breaks the pairing. The kept
 * kind is chosen again only between rechecks (both ratios of a recheck in), and a run
 * after the trial or after a change of the kept kind pairs with nothing, so every ratio
 * comes from the trial's ABBA pairs or a recheck's two orders. No effect outside
 * TSL_CLAIMS_AUTO. */
void tsl_claim_policy_record(tsl_claim_policy *p, bool claimed, double seconds, int64_t key);

#ifdef __cplusplus
}
#endif
#endif
