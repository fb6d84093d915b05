/* When runs claim their outputs (claim_policy.h). */
#include "runtime/claim_policy.h"

#include <math.h>
#include <string.h>

#include "tessel/status.h"

tsl_status tsl_claims_mode_check(const char *who, tsl_claims_mode m) {
  if (m == TSL_CLAIMS_AUTO || m == TSL_CLAIMS_ALWAYS || m == TSL_CLAIMS_NEVER) return TSL_OK;
  return tsl_error(TSL_ERR_INVALID, "%s: mode %d (allowed: TSL_CLAIMS_AUTO 0, TSL_CLAIMS_ALWAYS 1, TSL_CLAIMS_NEVER 2)",
                   who, (int)m);
}

void tsl_claim_policy_init(tsl_claim_policy *p, tsl_claims_mode m) {
  memset(p, 0, sizeof *p);
  p->mode = m;
}

bool tsl_claim_policy_next(const tsl_claim_policy *p) {
  if (p->mode == TSL_CLAIMS_ALWAYS) return true;
  if (p->mode == TSL_CLAIMS_NEVER) return false;
  if (p->runs < TSL_CLAIM_TRIAL_RUNS) return p->runs % 4 == 0 || p->runs % 4 == 3;
  bool recheck = (p->runs - TSL_CLAIM_TRIAL_RUNS) % TSL_CLAIM_RECHECK_RUNS >= TSL_CLAIM_RECHECK_RUNS - 2;
  return recheck ? !p->use : p->use;
}

static double median_ratio(const tsl_claim_policy *p) {
  double v[TSL_CLAIM_WINDOW];
  int n = p->nratio;
  memcpy(v, p->ratio, (size_t)n * sizeof v[0]);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int tsl_claim_policy_kept(const tsl_claim_policy *p) {
  if (p->mode == TSL_CLAIMS_ALWAYS) return 1;
  if (p->mode == TSL_CLAIMS_NEVER) return 0;
  return p->runs < TSL_CLAIM_TRIAL_RUNS ? -1 : p->use;
}

void tsl_claim_policy_record(tsl_claim_policy *p, bool claimed, double seconds, int64_t key) {
  if (p->mode != TSL_CLAIMS_AUTO) return;
  if (!(seconds > 0.0) || !isfinite(seconds)) {
    p->have_last = false;
    return;
  }
  if (p->have_last && p->last_key == key && p->last_claimed != claimed) {
    double r = claimed ? seconds / p->last_seconds : p->last_seconds / seconds;
    p->ratio[p->next] = r;
    p->next = (p->next + 1) % TSL_CLAIM_WINDOW;
    if (p->nratio < TSL_CLAIM_WINDOW) p->nratio++;
  }
  p->have_last = true;
  p->last_claimed = claimed;
  p->last_seconds = seconds;
  p->last_key = key;
  p->runs++;
  /* the first run after the trial pairs with nothing (its kind follows the trial's
   * outcome, not its order) */
  if (p->runs == TSL_CLAIM_TRIAL_RUNS) p->have_last = false;
  if (p->runs < TSL_CLAIM_TRIAL_RUNS || p->nratio == 0) return;
  /* the next run's place in its recheck period: choose again at the trial's end and
   * after a recheck's second ratio is in (the run after the recheck), never inside */
  int64_t pos = (p->runs - TSL_CLAIM_TRIAL_RUNS) % TSL_CLAIM_RECHECK_RUNS;
  if (p->runs != TSL_CLAIM_TRIAL_RUNS && (pos < 1 || pos >= TSL_CLAIM_RECHECK_RUNS - 2)) return;
  /* ties go to no claims: a claim costs its stores */
  bool use = median_ratio(p) < 1.0;
  if (use != p->use) p->have_last = false;
  p->use = use;
}
