/* The tuner suites, one function per source file; tsl_tests_tuner adds them all. */
#ifndef TESSEL_TESTS_TUNER_TESTS_H
#define TESSEL_TESTS_TUNER_TESTS_H

void tsl_tests_tuner_records(void);
void tsl_tests_tuner_tune(void);
void tsl_tests_tuner_cache_features(void);
void tsl_tests_tuner_insitu(void);
void tsl_tests_tuner_names(void);
void tsl_tests_tuner_user_template(void);
void tsl_tests_tuner_model_tune(void);
void tsl_tests_tuner_report(void);
void tsl_tests_tuner_sketch(void);
void tsl_tests_tuner_cost_static(void);
void tsl_tests_tuner_mca(void);
void tsl_tests_tuner_tune_restricted(void);
void tsl_tests_tuner_register_tile(void);
void tsl_tests_tuner_sketch_width(void);
void tsl_tests_tuner_dispatch_op_key(void);

#endif
