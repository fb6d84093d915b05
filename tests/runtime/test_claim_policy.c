/* The claim policy (runtime/claim_policy.h) fed run times made up here: the fixed modes
 * ignore them; the automatic one runs its trial in ABBA order, keeps the kind whose runs
 * were faster against the neighbouring run of the other kind (also while the machine
 * drifts slower or faster by more than the difference), rechecks the other kind on two
 * runs in TSL_CLAIM_RECHECK_RUNS, follows a machine that changes, and pairs no run
 * across a failed one. Expected choices are worked out from the times, not from the
 * policy. */
#include <CUnit/Basic.h>
#include <math.h>

#include "runtime/claim_policy.h"
#include "runtime_tests.h"

/* Feeds `runs` runs: a claimed run takes `claimed` x the drift, an unclaimed one
 * `unclaimed` x the drift, the drift growing by `drift` a run (a machine slowing down);
 * returns how many of them claimed. */
static int feed(tsl_claim_policy *p, int runs, double claimed, double unclaimed, double drift, double *scale) {
  int n = 0;
  for (int i = 0; i < runs; i++) {
    bool c = tsl_claim_policy_next(p);
    n += c;
    tsl_claim_policy_record(p, c, (c ? claimed : unclaimed) * *scale, 2);
    *scale *= drift;
  }
  return n;
}

static void test_fixed_modes_ignore_the_times(void) {
  tsl_claim_policy p;
  tsl_claim_policy_init(&p, TSL_CLAIMS_ALWAYS);
  double s = 1.0;
  CU_ASSERT_EQUAL(feed(&p, 40, 2.0, 1.0, 1.0, &s), 40);
  tsl_claim_policy_init(&p, TSL_CLAIMS_NEVER);
  CU_ASSERT_EQUAL(feed(&p, 40, 1.0, 2.0, 1.0, &s), 0);
}

static void test_auto_trial_alternates_then_keeps_the_faster_kind(void) {
  static const bool trial[TSL_CLAIM_TRIAL_RUNS] = {true, false, false, true, true, false, false, true};
  for (int faster_claimed = 0; faster_claimed <= 1; faster_claimed++) {
    tsl_claim_policy p;
    tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
    double c = faster_claimed ? 1.0 : 1.06, u = faster_claimed ? 1.06 : 1.0, s = 1.0;
    for (int i = 0; i < TSL_CLAIM_TRIAL_RUNS; i++) {
      CU_ASSERT_EQUAL(tsl_claim_policy_next(&p), trial[i]);
      tsl_claim_policy_record(&p, trial[i], (trial[i] ? c : u) * s, 2);
    }
    CU_ASSERT_EQUAL(tsl_claim_policy_next(&p), faster_claimed == 1);
    /* then the faster kind, except the last two of every TSL_CLAIM_RECHECK_RUNS runs */
    int runs = 4 * TSL_CLAIM_RECHECK_RUNS, got = feed(&p, runs, c, u, 1.0, &s);
    CU_ASSERT_EQUAL(got, faster_claimed ? runs - 8 : 8);
    for (int i = 0; i < TSL_CLAIM_RECHECK_RUNS; i++) {
      bool other = i >= TSL_CLAIM_RECHECK_RUNS - 2;
      CU_ASSERT_EQUAL(tsl_claim_policy_next(&p), other ? faster_claimed == 0 : faster_claimed == 1);
      feed(&p, 1, c, u, 1.0, &s);
    }
  }
}

/* The machine slows by 3% a run (and then speeds up as fast), far more than the 2%
 * claims save: each ratio pairs neighbouring runs, so the drift cancels out of the
 * median. */
static void test_auto_choice_survives_a_drifting_machine(void) {
  for (int dir = 0; dir <= 1; dir++) {
    tsl_claim_policy p;
    tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
    double s = 1.0, drift = dir ? 1.03 : 1.0 / 1.03;
    feed(&p, TSL_CLAIM_TRIAL_RUNS, 0.98, 1.0, drift, &s);
    CU_ASSERT_TRUE(tsl_claim_policy_next(&p));
    tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
    s = 1.0;
    feed(&p, TSL_CLAIM_TRIAL_RUNS, 1.0, 0.98, drift, &s);
    CU_ASSERT_FALSE(tsl_claim_policy_next(&p));
  }
}

/* Claims paid, then the machine changes and they cost 10%: the rechecks' ratios (two
 * each) take over the window's median within 4 rechecks, and the choice flips; equal
 * times (ties) choose no claims. */
static void test_auto_follows_a_machine_that_changes(void) {
  tsl_claim_policy p;
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  double s = 1.0;
  feed(&p, TSL_CLAIM_TRIAL_RUNS + 2 * TSL_CLAIM_RECHECK_RUNS, 0.9, 1.0, 1.0, &s);
  CU_ASSERT_TRUE(tsl_claim_policy_next(&p));
  feed(&p, 4 * TSL_CLAIM_RECHECK_RUNS, 1.1, 1.0, 1.0, &s);
  CU_ASSERT_FALSE(tsl_claim_policy_next(&p));
  /* and stays there while claims cost */
  CU_ASSERT_EQUAL(feed(&p, 2 * TSL_CLAIM_RECHECK_RUNS, 1.1, 1.0, 1.0, &s), 4);
  CU_ASSERT_FALSE(tsl_claim_policy_next(&p));
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  feed(&p, TSL_CLAIM_TRIAL_RUNS, 1.0, 1.0, 1.0, &s);
  CU_ASSERT_FALSE(tsl_claim_policy_next(&p));
}

/* A failed run (no time: zero, negative, NaN, infinite) is not counted and pairs with
 * nothing: a slow claimed run before it and a fast unclaimed one after it make no ratio;
 * nor do neighbouring runs under other conditions (another thread count). */
static void test_auto_pairs_no_run_across_a_failed_one_or_new_conditions(void) {
  tsl_claim_policy p;
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  tsl_claim_policy_record(&p, true, 5.0, 2);
  tsl_claim_policy_record(&p, false, 0.0, 2);
  tsl_claim_policy_record(&p, false, -1.0, 2);
  tsl_claim_policy_record(&p, false, NAN, 2);
  tsl_claim_policy_record(&p, false, INFINITY, 2);
  CU_ASSERT_EQUAL(p.runs, 1);
  tsl_claim_policy_record(&p, false, 1.0, 2);
  CU_ASSERT_EQUAL(p.nratio, 0);
  CU_ASSERT_EQUAL(p.runs, 2);
  tsl_claim_policy_record(&p, true, 0.5, 2);
  CU_ASSERT_EQUAL(p.nratio, 1);
  CU_ASSERT_DOUBLE_EQUAL(p.ratio[0], 0.5, 1e-12);
  tsl_claim_policy_record(&p, false, 9.0, 3);
  CU_ASSERT_EQUAL(p.nratio, 1);
  CU_ASSERT_EQUAL(p.runs, 4);
}

/* A recheck is two runs of the other kind even when the median sits at 1 and the ratio
 * of the recheck's first run tips it: the choice is made again only after both ratios
 * are in. The trial's four ratios at 1.1 (unclaimed kept), rechecks at 0.9 until the
 * window holds four of each (median 1.0, a tie: unclaimed), then a recheck at 0.8: both
 * of its runs claim, the run after it does not, and only then claims are kept. */
static void test_auto_recheck_is_two_runs_whatever_its_first_ratio(void) {
  tsl_claim_policy p;
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  double s = 1.0;
  feed(&p, TSL_CLAIM_TRIAL_RUNS, 1.1, 1.0, 1.0, &s);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 0);
  /* two rechecks at 0.9 (the second's last ratio comes with the run after it) */
  CU_ASSERT_EQUAL(feed(&p, 2 * TSL_CLAIM_RECHECK_RUNS, 0.9, 1.0, 1.0, &s), 4);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 0);
  /* up to the next recheck, at 0.8 (the first of these runs brings the fourth 0.9) */
  feed(&p, TSL_CLAIM_RECHECK_RUNS - 2, 0.8, 1.0, 1.0, &s);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 0);
  CU_ASSERT_TRUE(tsl_claim_policy_next(&p));
  feed(&p, 1, 0.8, 1.0, 1.0, &s);
  CU_ASSERT_TRUE(tsl_claim_policy_next(&p));
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 0);
  feed(&p, 1, 0.8, 1.0, 1.0, &s);
  /* the run after the recheck (unclaimed, pairing with its second run) */
  CU_ASSERT_FALSE(tsl_claim_policy_next(&p));
  feed(&p, 1, 0.8, 1.0, 1.0, &s);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 1);
  CU_ASSERT_TRUE(tsl_claim_policy_next(&p));
  /* the first claimed run after the flip pairs with nothing (no ratio in one order only) */
  int next = p.next;
  feed(&p, 1, 0.8, 1.0, 1.0, &s);
  CU_ASSERT_EQUAL(p.next, next);
}

/* The first run after the trial (its kind the trial's outcome) pairs with nothing, even
 * when the trial made no ratio at all (each of its pairs broken by a failed run). */
static void test_auto_pairs_nothing_across_the_trial_end(void) {
  tsl_claim_policy p;
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  double s = 1.0;
  feed(&p, TSL_CLAIM_TRIAL_RUNS, 1.1, 1.0, 1.0, &s);
  CU_ASSERT_EQUAL(p.nratio, 4);
  CU_ASSERT_FALSE(tsl_claim_policy_next(&p));
  feed(&p, 1, 1.1, 1.0, 1.0, &s); /* unclaimed, after the trial's last (claimed) run */
  CU_ASSERT_EQUAL(p.nratio, 4);
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  for (int i = 0; i < TSL_CLAIM_TRIAL_RUNS; i++) {
    tsl_claim_policy_record(&p, false, 0.0, 2);
    feed(&p, 1, 1.1, 1.0, 1.0, &s);
  }
  CU_ASSERT_EQUAL(p.nratio, 0);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 0);
  feed(&p, 1, 1.1, 1.0, 1.0, &s);
  CU_ASSERT_EQUAL(p.nratio, 0);
}

static void test_kept_is_undecided_in_the_trial(void) {
  tsl_claim_policy p;
  tsl_claim_policy_init(&p, TSL_CLAIMS_AUTO);
  double s = 1.0;
  for (int i = 0; i < TSL_CLAIM_TRIAL_RUNS; i++) {
    CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), -1);
    feed(&p, 1, 1.0, 1.2, 1.0, &s);
  }
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 1);
  tsl_claim_policy_init(&p, TSL_CLAIMS_ALWAYS);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 1);
  tsl_claim_policy_init(&p, TSL_CLAIMS_NEVER);
  CU_ASSERT_EQUAL(tsl_claim_policy_kept(&p), 0);
}

void tsl_tests_runtime_claim_policy(void) {
  CU_pSuite s = CU_add_suite("runtime_claim_policy", NULL, NULL);
  CU_add_test(s, "test_fixed_modes_ignore_the_times", test_fixed_modes_ignore_the_times);
  CU_add_test(s, "test_auto_trial_alternates_then_keeps_the_faster_kind",
              test_auto_trial_alternates_then_keeps_the_faster_kind);
  CU_add_test(s, "test_auto_choice_survives_a_drifting_machine", test_auto_choice_survives_a_drifting_machine);
  CU_add_test(s, "test_auto_follows_a_machine_that_changes", test_auto_follows_a_machine_that_changes);
  CU_add_test(s, "test_auto_pairs_no_run_across_a_failed_one_or_new_conditions",
              test_auto_pairs_no_run_across_a_failed_one_or_new_conditions);
  CU_add_test(s, "test_auto_recheck_is_two_runs_whatever_its_first_ratio",
              test_auto_recheck_is_two_runs_whatever_its_first_ratio);
  CU_add_test(s, "test_kept_is_undecided_in_the_trial", test_kept_is_undecided_in_the_trial);
  CU_add_test(s, "test_auto_pairs_nothing_across_the_trial_end", test_auto_pairs_nothing_across_the_trial_end);
}
