/* The cost model that guides the search: gradient-boosted trees (XGBoost, Chen and
 * Guestrin, "XGBoost: A Scalable Tree Boosting System", KDD 2016; used by AutoTVM as in
 * Chen et al., "Learning to Optimize Tensor Programs", NeurIPS 2018) trained online on
 * the candidates measured so far, predicting a score where higher means faster.
 *
 * Features of a config: the knob features (tsl_config_features), computable without
 * building the candidate: per knob, log2(1+v) for split knobs and v for the others;
 * then log2 of the product of the split knobs (the register/cache block volume). A
 * model given the program and template (tsl_cost_model_set_program) adds the features
 * of the candidate's lowered loop IR (tuner/ir_features.h: loop extents, vector width,
 * unroll copies, FLOPs per iteration, bytes touched and reuse per loop level,
 * arithmetic intensity, parallel extent), as AutoTVM's itervar features do; each config
 * is applied and lowered once (the features are cached per config), which costs a
 * millisecond or more, so the search scores its many simulated-annealing proposals
 * with a knob-only model and reranks the best few with this one (search.h).
 *
 * Training target: the normalized throughput min_cost / cost of each measured config
 * (1 for the best so far, 0 for failures), squared-error regression.
 */
#ifndef TESSEL_TUNER_COST_MODEL_H
#define TESSEL_TUNER_COST_MODEL_H

#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Features per config of space s. */
int tsl_config_nfeatures(const tsl_config_space *s);
/* Writes tsl_config_nfeatures(s) floats for config c into f. */
void tsl_config_features(const tsl_config_space *s, const tsl_config *c, float *f);

typedef struct tsl_cost_model tsl_cost_model;

/* A model for configs of space s (copied). Errors: TSL_ERR_NOMEM. */
tsl_status tsl_cost_model_new(const tsl_config_space *s, tsl_cost_model **out);
void tsl_cost_model_free(tsl_cost_model *m);

/* (Re)trains on n measured configs with their costs in seconds (+inf or <= 0 for a
 * failed candidate). Needs at least 2 successful ones: with fewer the model stays
 * untrained and predicts 0. Errors: TSL_ERR_RUNTIME (XGBoost's message), TSL_ERR_NOMEM. */
tsl_status tsl_cost_model_fit(tsl_cost_model *m, const tsl_config *configs, const double *costs, int n);

/* Makes m use the loop-IR features of each config too: the config is applied with
 * tpl to program p for target t (all three must outlive m) and lowered as tsl_build
 * lowers (the target's vector width). A config that fails to apply or lower gets
 * missing IR features (NaN). Call before the first fit. Errors: TSL_ERR_INVALID (NULL
 * arguments, or the model was already trained). */
tsl_status tsl_cost_model_set_program(tsl_cost_model *m, const tsl_te_program *p, const tsl_template *tpl,
                                      const tsl_target *t);

/* Features per config of model m (knobs, plus the IR features when set). */
int tsl_cost_model_nfeatures(const tsl_cost_model *m);

/* The features of config c as m sees them (tsl_cost_model_nfeatures(m) floats) into f.
 * Errors: TSL_ERR_NOMEM. */
tsl_status tsl_cost_model_features(tsl_cost_model *m, const tsl_config *c, float *f);

/* Whether fit() has trained a model. */
int tsl_cost_model_trained(const tsl_cost_model *m);

/* Scores of n configs (higher = predicted faster) into scores. Errors: TSL_ERR_RUNTIME,
 * TSL_ERR_NOMEM. */
tsl_status tsl_cost_model_predict(tsl_cost_model *m, const tsl_config *configs, int n, float *scores);

#ifdef __cplusplus
}
#endif
#endif
