/* Sketch generation for tensor-expression programs that have no template: the first
 * half of an auto-scheduler (issue 16 part 3), after Ansor (Zheng et al., "Ansor:
 * Generating High-Performance Tensor Programs for Deep Learning", OSDI 2020, section 4:
 * derivation rules on the CPU structure) and TVM's auto_scheduler sketch_policy_rules.cc.
 *
 * A sketch fixes the structure of a schedule, one choice per stage of the default
 * schedule (tsl_schedule_create: injective stages inlined, the "always inline" rule):
 *   TSL_SKETCH_TILE        multi-level tiling "SSRSRS" of a reduction stage: every spatial
 *                          axis split in 4 levels S0..S3, every reduction axis in 2 levels
 *                          R0, R1, loops ordered S0 S1 R0 S2 R1 S3;
 *   TSL_SKETCH_TILE_CACHE  the same with cache_write: the stage copies a local buffer
 *                          (tiled S0 S1 | S2 S3, the copy's outer tile loop holding the
 *                          local stage, compute_at), the local stage accumulates one tile
 *                          in the order R0 S2 R1 S3;
 *   TSL_SKETCH_RFACTOR_OUTER / _INNER  a reduction whose only large axis is the reduction
 *                          (spatial points <= 64, reduction points >= 128), or (inner)
 *                          one whose reduction axis is contiguous in memory while its
 *                          innermost spatial axis is not: its largest (outer) or
 *                          contiguous (inner) reduction axis is split and rfactor'ed on
 *                          the outer half (run in parallel) or the inner half (vector
 *                          accumulators; a non-output stage then sits at its consumer's
 *                          outer loop and the partials at its own); inner: a knob
 *                          rfactors the partials again over 2 or 4 steps of another
 *                          reduction axis (independent vector accumulators, unrolled);
 *   TSL_SKETCH_SPATIAL     a stage without reduction that keeps its loops: 2-level tiling;
 *   TSL_SKETCH_AT          a non-output stage computed at the outer tile loop of its
 *                          (last) consumer;
 *   TSL_SKETCH_GENERIC     the generic default schedule's structure (ops/nn/
 *                          default_schedule.c): innermost spatial axis split by the lanes
 *                          and vectorized with the reduction just outside, outer spatial
 *                          axes fused and parallel (with one spatial axis, its vector
 *                          split's outer part, outside the reduction); an innermost axis
 *                          that is not a multiple of the lanes first fused with the axes
 *                          outside it when they walk memory as one contiguous axis
 *                          (schedule/axis_access.h: tsl_axis_fusable) and the fused
 *                          extent is a multiple (full vectors, no tail per row);
 *   TSL_SKETCH_TILE_PACK   (tuner/sketch_tile_pack.c) an output reduction whose innermost
 *                          spatial axis runs along memory, as a BLIS kernel: a register
 *                          tile of mr rows (a spatial axis picked by a knob) x nv = m *
 *                          lanes (the vector axis the innermost spatial one, or a spatial
 *                          axis an input is read along, that input then packed with it
 *                          innermost: a conv's output channels; mr * m accumulators + m + 1
 *                          operands within the target's vector registers) accumulated in a cache_write'd local stage over
 *                          the whole reduction, two tile levels above it for L1/L2 (loop
 *                          orders are knobs; the outer level parallel), and optionally one
 *                          input packed (cache_read) per iteration of a block loop over an
 *                          axis it depends on, stored in the order the tile walks it
 *                          (storage_order: conv weights [k][c][r][s] as [c][r][s][k]), the
 *                          copy vectorized where contiguous;
 *   TSL_SKETCH_NONE        an inlined stage (nothing to do).
 * Every loop nest then gets the annotations: the outermost tile level fused (while
 * shorter than 64 iterations) and run in parallel, the innermost loop vectorized when it
 * walks memory contiguously (schedule/axis_access.h: never a strided axis; its tile a
 * multiple of the target's f32 lanes where the extent allows), small inner spatial
 * tiles unrolled. A producer is attached only at a consumer loop over axes its region
 * depends on (never recomputed per iteration of another loop).
 *
 * The first rule of each stage (sketch 0, the default): rfactor_inner for a reduction
 * whose innermost spatial axis is strided or short but whose reduction runs along
 * memory (vector accumulators along the reduction), else generic; then at, tile,
 * tile_cache, tile_pack, rfactor_outer, rfactor_inner, spatial as they apply.
 *
 * Sampling fills the knobs (tile sizes from the divisors of each extent, the vector tile
 * from multiples of the lanes, the unroll choices) from a seed: the same program, target,
 * sketch and seed give the same schedule text.
 */
#ifndef TESSEL_TUNER_SKETCH_H
#define TESSEL_TUNER_SKETCH_H

#include <stdint.h>

#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_sketch_rule {
  TSL_SKETCH_NONE = 0,
  TSL_SKETCH_TILE,
  TSL_SKETCH_TILE_CACHE,
  TSL_SKETCH_RFACTOR_OUTER,
  TSL_SKETCH_RFACTOR_INNER,
  TSL_SKETCH_SPATIAL,
  TSL_SKETCH_AT,
  TSL_SKETCH_GENERIC,
  TSL_SKETCH_TILE_PACK,
  TSL_SKETCH_RULE_COUNT /* the number of rules, not a rule */
} tsl_sketch_rule;

#define TSL_SKETCH_MAX_STAGES 16
#define TSL_SKETCH_MAX 64

typedef struct tsl_sketch {
  int nstages;                             /* stages of the default schedule */
  tsl_sketch_rule rule[TSL_SKETCH_MAX_STAGES]; /* per stage, in the default schedule's order */
} tsl_sketch;

typedef struct tsl_sketch_list {
  int n;
  tsl_sketch sketches[TSL_SKETCH_MAX];
} tsl_sketch_list;

/* The rule's name ("tile", "tile_cache", ...), for messages and records. */
const char *tsl_sketch_rule_name(tsl_sketch_rule r);

/* Every sketch of p (the product of each stage's applicable rules, the first
 * TSL_SKETCH_MAX of them; never empty for a valid program). Errors: those of
 * tsl_schedule_create; TSL_ERR_UNSUPPORTED for more than TSL_SKETCH_MAX_STAGES stages. */
tsl_status tsl_sketch_generate(const tsl_te_program *p, const tsl_target *t, tsl_sketch_list *out);

/* A schedule of p with sketch sk's structure and knobs drawn from seed. Steps the
 * schedule refuses (for example a compute_at whose loop does not enclose every consumer)
 * are left out, so the result is always a legal schedule. The IR nodes it makes live in
 * the current arena. Errors: TSL_ERR_INVALID when sk does not belong to p; errors of the
 * schedule other than a refusal (TSL_ERR_NOMEM). *out is NULL on error. */
tsl_status tsl_sketch_sample(const tsl_te_program *p, const tsl_target *t, const tsl_sketch *sk, uint64_t seed,
                             tsl_schedule **out);

/* Decision values: a decision v picks choice floor(v * n / 16) among n. */
#define TSL_SKETCH_DECISION_VALUES 16

/* The same as tsl_sketch_sample with the random choices replaced by decisions: the
 * sampler's i-th choice among n options (a tile size among the divisors, a vector tile,
 * whether to vectorize, unroll or parallelize, which loop to attach at, ...) is
 * floor(decisions[i % n_decisions] * n / 16); a yes/no with probability pct% is yes when
 * that choice of 100 is >= 100 - pct (so large values say yes, the middle value 8 says
 * yes to every choice of probability >= 50%). Changing one decision changes one tile size
 * or annotation (the evolutionary search's mutation, tuner/search.h), the structure
 * staying the sketch's. Errors: TSL_ERR_INVALID (no decisions, a value outside
 * 0..15), those of tsl_sketch_sample. */
tsl_status tsl_sketch_sample_decisions(const tsl_te_program *p, const tsl_target *t, const tsl_sketch *sk,
                                       const int *decisions, int n, tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
