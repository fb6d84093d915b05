/* Helpers shared by the tuner suites: hand-made records of a real workload's algorithms
 * and the small squeeze-excitation graph whose projection conv is channel-scaled. */
#ifndef TESSEL_TESTS_TUNER_UTIL_H
#define TESSEL_TESTS_TUNER_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "models/compile.h"
#include "models/graph.h"
#include "tuner/records.h"
#include "tuner/tune.h"

/* tt_se_graph's channels, squeeze, projection outputs and room for its layers. */
enum { TT_SE_C = 19, TT_SE_SQUEEZE = 5, TT_SE_K_OUT = 13, TT_SE_MAX_LAYERS = 16 };

/* A successful record of algorithm `a` (index among tsl_algorithms_for(w)) at config
 * `index` of its space (-1: the template's default config; config_index set either way)
 * on `target`, one sample `cost` seconds, context `context` (NULL: isolated). False when the algorithm, its
 * space or the config does not exist. */
bool tt_algo_record_at(const tsl_workload *w, const char *target, int a, int64_t index, double cost,
                       const char *context, tsl_record *r);

/* x[1, TT_SE_C, 6, 7] -> conv 1x1 C->C -> relu = a; gate = sigmoid(conv(relu(conv(pool(a)))));
 * outputs conv 1x1 C->TT_SE_K_OUT of a * gate (channel-scaled: GEMM 1x1 only) and of a
 * itself (the same workload). Its conv layers on the host into layers[0..*n)
 * (tsl_graph_conv_layers: conv a, the projection twice, and the gate's convs where the
 * compiler keeps them). Failures are fatal CUnit assertions. */
tsl_graph *tt_se_graph(tsl_conv_layer layers[TT_SE_MAX_LAYERS], int *n);

/* Tuning options of a quick first pass (1 trial: every allowed algorithm's default
 * config; 2 repeats of at least 1 ms; 10 s build and run timeouts; one thread), records
 * appended to `path`. */
tsl_tune_opts tt_quick_tune_opts(const char *path);

#endif
