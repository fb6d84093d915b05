/* The auto-scheduler as a template (issue 16 part 3): for an operator with no hand or
 * user template, the sketches of its TE program (tuner/sketch.h, after Ansor, Zheng et
 * al., OSDI 2020) are its config space, so tune-op, the records, the isolated checked
 * runner and the cost model treat it like any template.
 *
 * Space of program p on target t: knob "sketch" (which of tsl_sketch_generate's sketches)
 * and the decision knobs "d0".."dK-1" (values 0..15, tsl_sketch_sample_decisions: each
 * picks one tile size, vector tile or annotation of the sampler, cyclically when the
 * sketch makes more choices than there are knobs), K = floor((62 - ceil(log2 S)) / 4) for
 * S sketches (at most 15), so that the space stays within 2^62 configs (the search's limit). Changing one
 * decision knob changes one tile size or annotation: the evolutionary search's mutation
 * (tuner/search.h). On a target with more than one vector width (target.h
 * tsl_target_vector_widths: AVX-512's 512 and 256) a last knob "vector_width" picks the
 * width the kernel is compiled for: the sketch is sampled for the target narrowed to it
 * (its lanes and registers) and the schedule ends with vector_width(bits) when that is
 * narrower (the AVX2 code of an operator can be the faster one: docs/dsl.md, as_maxpool);
 * the decision knobs then share the 62 bits with it. The default config is sketch 0 with
 * every decision 8 and the target's own width: the
 * deterministic schedule the graph compiler uses when there are no records
 * (models/compile.h). Sketch 0 takes each stage's first rule (tuner/sketch.h): the
 * generic default schedule's structure vectorized only along memory, or, for a
 * reduction whose spatial axis is strided but whose reduction is contiguous (a row
 * max, sum, softmax or norm), rfactor with vector accumulators along the reduction; so
 * the search starts from a point no worse than the generic default schedule.
 *
 * The template of operator OP is named "OP.auto" (version TSL_AUTOSCHED_VERSION: bumped
 * when the sketch rules change, so old records never apply; 7: the vector_width knob).
 */
#ifndef TESSEL_TUNER_AUTOSCHED_H
#define TESSEL_TUNER_AUTOSCHED_H

#include <stdbool.h>

#include "schedule/template.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_AUTOSCHED_VERSION 7
#define TSL_AUTOSCHED_DEFAULT_DECISION 8

/* Registers (once per operator and process) the auto-scheduler template "OP.auto" of
 * operator op (a registry name, ops/registry.h) and returns it; the template works for
 * any program the operator instantiates. Errors: TSL_ERR_INVALID (NULL, a name too long,
 * the template registry full), TSL_ERR_NOMEM. */
tsl_status tsl_autosched_template(const char *op, const tsl_template **out);

/* The schedule of p from the auto-scheduler's default config (sketch 0, every decision
 * TSL_AUTOSCHED_DEFAULT_DECISION) on target t; IR nodes in the current arena, *out owned
 * by the caller. Errors: those of tsl_sketch_generate and tsl_sketch_sample_decisions. */
tsl_status tsl_autosched_default_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out);

/* Whether p has a reduction stage that keeps its own loops (not inlined) in the default
 * schedule: where a tiled schedule pays (the graph compiler's test, models/plan_build.c).
 * False when the schedule cannot be made (the caller's default path reports why). */
bool tsl_autosched_applies(const tsl_te_program *p);

#ifdef __cplusplus
}
#endif
#endif
