/* The clock and the time evaluator. Durations are checked against nanosleep, an
 * independent source of known time, with generous bounds for a shared machine. */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "runtime/module.h"
#include "runtime_tests.h"
#include "tessel/runtime.h"

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void test_time_now_is_monotonic_seconds(void) {
  double t0 = tsl_time_now();
  sleep_ms(20);
  double t1 = tsl_time_now();
  CU_ASSERT(t0 > 0);
  CU_ASSERT(t1 - t0 >= 0.019);
  CU_ASSERT(t1 - t0 < 1.0);
  double prev = tsl_time_now();
  int backwards = 0;
  for (int i = 0; i < 1000; i++) {
    double t = tsl_time_now();
    backwards += t < prev;
    prev = t;
  }
  CU_ASSERT_EQUAL(backwards, 0);
}

static int counted_calls;
static int32_t counted_kernel(int32_t fail_code) {
  counted_calls++;
  volatile double x = 1.0;
  for (int i = 0; i < 200; i++) x = x * 1.0000001 + 1e-9; /* a few hundred ns of work */
  return fail_code;
}

static const tsl_kernel *counted(tsl_module **m) {
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(m), TSL_OK);
  tsl_kernel_sig sig;
  memset(&sig, 0, sizeof sig);
  sig.nargs = 1;
  sig.args[0] = TSL_ARG_I32;
  CU_ASSERT_EQUAL_FATAL(tsl_module_add_kernel(*m, "counted_kernel", (void *)counted_kernel, &sig), TSL_OK);
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(*m, "counted_kernel", &k), TSL_OK);
  return k;
}

/* Without min_repeat_ms: exactly one warm-up plus repeat x number calls, and only
 * `repeat` costs written. */
static void test_time_kernel_respects_repeat_and_number(void) {
  tsl_module *m = NULL;
  const tsl_kernel *k = counted(&m);
  int32_t ok = 0;
  void *args[1] = {&ok};
  tsl_time_opts o = {.number = 3, .repeat = 4, .min_repeat_ms = 0, .cache_flush = false, .cooldown_s = 0};
  double costs[5] = {-1, -1, -1, -1, -1};
  counted_calls = 0;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_OK);
  CU_ASSERT_EQUAL(counted_calls, 1 + 4 * 3);
  for (int i = 0; i < 4; i++) CU_ASSERT(costs[i] > 0 && costs[i] < 0.01);
  CU_ASSERT_EQUAL(costs[4], -1);
  tsl_module_free(m);
}

/* With min_repeat_ms: `number` grows until a sample lasts that long. */
static void test_time_kernel_grows_number_to_min_repeat_ms(void) {
  tsl_module *m = NULL;
  const tsl_kernel *k = counted(&m);
  int32_t ok = 0;
  void *args[1] = {&ok};
  tsl_time_opts o = {.number = 1, .repeat = 2, .min_repeat_ms = 5.0, .cache_flush = false, .cooldown_s = 0};
  double costs[2] = {0, 0};
  counted_calls = 0;
  double t0 = tsl_time_now();
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_OK);
  double wall = tsl_time_now() - t0;
  CU_ASSERT(wall >= 0.010); /* two samples of at least 5 ms each */
  CU_ASSERT(counted_calls > 20);
  for (int i = 0; i < 2; i++) CU_ASSERT(costs[i] > 0 && costs[i] < 0.001);
  tsl_module_free(m);
}

static int32_t sleepy(void *ctx) {
  int *calls = ctx;
  (*calls)++;
  sleep_ms(2);
  return 0;
}

/* Costs are seconds per call: a callback that sleeps 2 ms costs about 2 ms. */
static void test_time_callback_costs_are_seconds_per_call(void) {
  int calls = 0;
  tsl_time_opts o = {.number = 2, .repeat = 2, .min_repeat_ms = 0, .cache_flush = false, .cooldown_s = 0.005};
  double costs[2] = {0, 0};
  CU_ASSERT_EQUAL(tsl_time_callback(sleepy, &calls, "sleepy", &o, costs), TSL_OK);
  CU_ASSERT_EQUAL(calls, 5);
  for (int i = 0; i < 2; i++) CU_ASSERT(costs[i] >= 0.0019 && costs[i] < 0.1);
}

static void test_time_kernel_with_cache_flush(void) {
  tsl_module *m = NULL;
  const tsl_kernel *k = counted(&m);
  int32_t ok = 0;
  void *args[1] = {&ok};
  tsl_time_opts o = tsl_time_opts_default();
  o.cache_flush = true;
  o.repeat = 2;
  o.min_repeat_ms = 0;
  double costs[2] = {0, 0};
  counted_calls = 0;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_OK);
  CU_ASSERT_EQUAL(counted_calls, 3);
  CU_ASSERT(costs[0] > 0 && costs[1] > 0);
  tsl_module_free(m);
}

static void test_time_kernel_propagates_kernel_error(void) {
  tsl_module *m = NULL;
  const tsl_kernel *k = counted(&m);
  int32_t bad = 11;
  void *args[1] = {&bad};
  double costs[3];
  counted_calls = 0;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, NULL, costs), TSL_ERR_RUNTIME);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "kernel counted_kernel returned 11");
  CU_ASSERT_EQUAL(counted_calls, 1); /* stopped at the warm-up */
  tsl_module_free(m);
}

static void test_time_kernel_rejects_bad_options(void) {
  tsl_module *m = NULL;
  const tsl_kernel *k = counted(&m);
  int32_t ok = 0;
  void *args[1] = {&ok};
  double costs[4];
  tsl_time_opts o = tsl_time_opts_default();
  CU_ASSERT_EQUAL(o.number, 1);
  CU_ASSERT_EQUAL(o.repeat, 3);
  o.repeat = 0;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_ERR_INVALID);
  o = tsl_time_opts_default();
  o.number = 0;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_ERR_INVALID);
  o = tsl_time_opts_default();
  o.min_repeat_ms = NAN;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_ERR_INVALID);
  o = tsl_time_opts_default();
  o.cooldown_s = -1;
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, &o, costs), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 1, NULL, NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_time_kernel(NULL, args, 1, NULL, costs), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_time_kernel(k, args, 2, NULL, costs), TSL_ERR_INVALID); /* wrong arity */
  tsl_module_free(m);
}

void tsl_tests_runtime_timer(void) {
  CU_pSuite s = CU_add_suite("runtime_timer", NULL, NULL);
  CU_add_test(s, "test_time_now_is_monotonic_seconds", test_time_now_is_monotonic_seconds);
  CU_add_test(s, "test_time_kernel_respects_repeat_and_number", test_time_kernel_respects_repeat_and_number);
  CU_add_test(s, "test_time_kernel_grows_number_to_min_repeat_ms", test_time_kernel_grows_number_to_min_repeat_ms);
  CU_add_test(s, "test_time_callback_costs_are_seconds_per_call", test_time_callback_costs_are_seconds_per_call);
  CU_add_test(s, "test_time_kernel_with_cache_flush", test_time_kernel_with_cache_flush);
  CU_add_test(s, "test_time_kernel_propagates_kernel_error", test_time_kernel_propagates_kernel_error);
  CU_add_test(s, "test_time_kernel_rejects_bad_options", test_time_kernel_rejects_bad_options);
}
