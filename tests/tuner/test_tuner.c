/* Registers the tuner module's CUnit suites. */
#include "tuner_tests.h"

void tsl_tests_tuner(void);

void tsl_tests_tuner(void) {
  tsl_tests_tuner_records();
  tsl_tests_tuner_tune();
  tsl_tests_tuner_cache_features();
  tsl_tests_tuner_insitu();
  tsl_tests_tuner_names();
  tsl_tests_tuner_user_template();
  tsl_tests_tuner_model_tune();
  tsl_tests_tuner_report();
  tsl_tests_tuner_sketch();
  tsl_tests_tuner_cost_static();
  tsl_tests_tuner_mca();
  tsl_tests_tuner_tune_restricted();
  tsl_tests_tuner_register_tile();
  tsl_tests_tuner_sketch_width();
  tsl_tests_tuner_dispatch_op_key();
}
