/* Search strategies over a config space: which candidates to measure next.
 *
 *   random  uniform over the configs not measured yet
 *   grid    every config in index order
 *   xgb     AutoTVM's model-based tuner (Chen et al., "Learning to Optimize Tensor
 *           Programs", NeurIPS 2018, sections 3-4): after a first batch of random
 *           configs, an XGBoost cost model (cost_model.h) is retrained on every
 *           measurement and simulated annealing over the space (neighbour = one knob
 *           changed) proposes the unmeasured configs the model scores best; a fraction
 *           eps of each batch stays random so the model keeps seeing new regions.
 *           Given the program (tsl_search_set_program), a second model trained on
 *           knob + loop-IR features (cost_model.h) reranks 4x the proposals the
 *           knob-only annealing found and the best of them are measured: the
 *           IR features cost a lowering per config, too many for every annealing step.
 *
 *   evolution  Ansor's evolutionary search (Zheng et al., "Ansor", OSDI 2020, section
 *           5.1): after the same first random batch, a population (the best measured
 *           configs and random ones) evolves for 4 generations of 64 children each,
 *           made by tournament selection, crossover (each knob from either parent; for
 *           the auto-scheduler's space only between parents of the same sketch) and
 *           mutation (one knob: a neighbouring tile size or any candidate), scored by
 *           the XGBoost model on knob + loop-IR features when the program is given
 *           (tsl_search_set_program), else on knob features; the best scored unmeasured
 *           configs met are measured, a fraction eps of each batch random (at least
 *           one config of a batch of two or more). In the auto-scheduler's space (first
 *           knob "sketch") the random draws take the sketch sampled least so far (the
 *           first batch of 8 over 4 sketches: 2 each) and the population starts with the
 *           best measured config of each sketch: a 1024^3 matmul's 64 trials once gave 58
 *           to tile_cache and 2 to tile_pack, whose one bad random register tile kept
 *           the model from proposing it again. And every other sketch whose best
 *           measured cost is within 2x of the best gets its own share of each batch's
 *           model proposals (batch n, L such sketches: max(1, n' / (2 (L + 1))) each,
 *           n' the model's part of the batch, at most n' / 2 in all), from an evolution
 *           pinned to that sketch: one population over all sketches converges on the
 *           leading one, and 256 trials of a 1024^3 matmul once gave tile_pack 6 after
 *           its first random draws.
 *
 * A search never proposes a config twice (nor one marked visited: resume).
 */
#ifndef TESSEL_TUNER_SEARCH_H
#define TESSEL_TUNER_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "schedule/template.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_search_kind {
  TSL_SEARCH_RANDOM = 0,
  TSL_SEARCH_GRID = 1,
  TSL_SEARCH_XGB = 2,
  TSL_SEARCH_EVOLUTION = 3
} tsl_search_kind;

/* "random", "grid", "xgb", "evolution"; false when unknown. */
bool tsl_search_kind_parse(const char *s, tsl_search_kind *out);

typedef struct tsl_search tsl_search;

/* A search of kind over space s (copied), seeded. Errors: TSL_ERR_INVALID (a space too
 * large to index, above 2^62 configs), TSL_ERR_NOMEM. */
tsl_status tsl_search_new(tsl_search_kind kind, const tsl_config_space *s, uint64_t seed, tsl_search **out);
void tsl_search_free(tsl_search *s);

/* Lets the xgb and evolution searches rank with the loop-IR features of configs of template tpl on
 * program p for target t (all must outlive s). No-op for the other kinds. Call before
 * the first update. Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOMEM. */
tsl_status tsl_search_set_program(tsl_search *s, const tsl_te_program *p, const tsl_template *tpl,
                                  const tsl_target *t);

/* Marks c as measured (never proposed). */
void tsl_search_mark_visited(tsl_search *s, const tsl_config *c);

/* Up to n configs not proposed or visited yet, into out (marked visited); returns how
 * many (0 when the space is exhausted). */
int tsl_search_next(tsl_search *s, tsl_config *out, int n);

/* Reports measurements (cost in seconds; +inf for a failed candidate): the xgb search
 * retrains its model on all results so far. Errors: those of the cost model. */
tsl_status tsl_search_update(tsl_search *s, const tsl_config *c, const double *costs, int n);

/* Configs not yet proposed or visited. */
int64_t tsl_search_remaining(const tsl_search *s);

#ifdef __cplusplus
}
#endif
#endif
