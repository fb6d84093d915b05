/* The sketch sampler's helpers, shared by the rules of tuner/sketch.c and the rule in
 * tuner/sketch_tile_pack.c (internal to the tuner: not part of the public API).
 *
 * A sampler applies schedule steps to one schedule, drawing every choice from a seed or
 * from a decision list (tuner/sketch.h: tsl_sketch_sample, tsl_sketch_sample_decisions).
 * A step the schedule refuses (TSL_ERR_SCHEDULE) is left out; the first other error is
 * kept in err and stops every later step. Names of stages and axes are copied into
 * buffers of TSL_SKETCH_NAME_LEN bytes (a refused step may free the old strings). */
#ifndef TESSEL_TUNER_SKETCH_SAMPLER_H
#define TESSEL_TUNER_SKETCH_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "schedule/schedule.h"
#include "tuner/sketch.h"

#define TSL_SKETCH_NAME_LEN 160
/* Root axes (spatial + reduction) of a stage the rules handle. */
#define TSL_SKETCH_MAX_AXES 12

typedef struct tsl_sketch_sampler {
  tsl_schedule *s;
  uint64_t rng;
  int lanes;            /* the target's f32 lanes */
  int vregs;            /* the target's vector registers (16 or 32) */
  tsl_status err;       /* first error that is not a refusal */
  const int *decisions; /* when not NULL: the choices, cyclically (tsl_sketch_sample_decisions) */
  int ndecisions, next;
} tsl_sketch_sampler;

/* A choice among n (0 when n <= 1): from the decision list when given (value v of 0..15
 * picks floor(v * n / 16)), else from the seed. */
int tsl_sketch_rnd(tsl_sketch_sampler *c, int n);
/* true with probability pct% (the larger decision values say yes). */
bool tsl_sketch_chance(tsl_sketch_sampler *c, int pct);
/* Applies step k with the names then the integers as arguments; true when applied, false
 * when refused or after an error (kept in c->err). */
bool tsl_sketch_step(tsl_sketch_sampler *c, tsl_step_kind k, int nnames, const char *const *names, int nints,
                     const int64_t *ints);
/* A step whose arguments are a stage and (when not NULL) an axis. */
bool tsl_sketch_step1(tsl_sketch_sampler *c, tsl_step_kind k, const char *stage, const char *axis);
/* dst (TSL_SKETCH_NAME_LEN bytes) = src, cut to fit. */
void tsl_sketch_copy_name(char *dst, const char *src);
/* The name of leaf k of stage copied into out ("" when absent). */
void tsl_sketch_leaf_name(tsl_sketch_sampler *c, const char *stage, int k, char *out);
/* The position of leaf `axis` among stage's leaves; -1 when it is not a leaf. */
int tsl_sketch_leaf_pos(tsl_sketch_sampler *c, const char *stage, const char *axis);
/* A random divisor of n no larger than cap (1 when none). */
int64_t tsl_sketch_divisor(tsl_sketch_sampler *c, int64_t n, int64_t cap);
/* Splits leaf `axis` of stage into nlev levels with inner sizes sizes[1..nlev) (level 0
 * takes the rest); the level names to names[l] ("" for a level left out). */
void tsl_sketch_split_levels(tsl_sketch_sampler *c, const char *stage, const char *axis, int nlev,
                             const int64_t *sizes, char names[][TSL_SKETCH_NAME_LEN]);
/* reorder(stage, the nonempty names in order). */
void tsl_sketch_reorder(tsl_sketch_sampler *c, const char *stage, int n, char names[][TSL_SKETCH_NAME_LEN]);
/* Fuses the first n leaves while the fused loop is short and runs it in parallel. */
void tsl_sketch_fuse_parallel(tsl_sketch_sampler *c, const char *stage, int n);
/* The root axes iter `it` of st is made of (bit a for root a; every bit when unknown). */
unsigned tsl_sketch_leaf_roots(const tsl_stage *st, int it);
/* Whether leaf k of stage makes unit steps of a spatial root axis contiguous in every
 * access of the stage (schedule/axis_access.h). */
bool tsl_sketch_leaf_contiguous(tsl_sketch_sampler *c, const char *stage, int k);
/* Whether the innermost spatial axis of st runs along memory and is long enough to
 * vectorize at `lanes`. */
bool tsl_sketch_spatial_vectorizable(const tsl_schedule *s, const tsl_stage *st, int64_t lanes);

/* The tile_pack rule (tuner/sketch_tile_pack.c, see sketch.h): whether it applies to
 * stage i of the default schedule s, and the rule itself on stage `stage`. */
bool tsl_sketch_tile_pack_applies(const tsl_schedule *s, int i, int64_t lanes);
void tsl_sketch_rule_tile_pack(tsl_sketch_sampler *c, const char *stage);

#endif
