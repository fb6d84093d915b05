/* Schedules: how to loop over a tensor-expression program (TVM's te.Schedule model).
 *
 * A schedule holds one stage per compute op of a tsl_te_program, in topological order
 * (producers first). A stage owns its iteration variables ("iters"): the root iters (one
 * per output axis, then one per reduction axis, as the TE declares them) and the iters
 * that schedule steps derive from them (split -> outer/inner, fuse -> fused). The leaf
 * iters, in loop order (outermost first), become the stage's loops when it is lowered;
 * relations say how to compute root values from leaf values. Each leaf iter carries an
 * annotation (serial / parallel / vectorized / unrolled) that becomes its For kind. A
 * stage's attach type says where it is computed: at the root of the kernel, inlined
 * into its consumers, or inside a loop of another stage (compute_at).
 *
 * A schedule is data: the ordered list of steps applied to the initial schedule (every
 * stage compute_root, loops in axis order). Each step is `primitive(stage, args...)`,
 * printed one a line, e.g.
 *
 *     compute_inline(padded)
 *     split(out, y, 8)
 *     reorder(out, y.outer, x, y.inner)
 *     vectorize(out, y.inner)
 *
 * and parsed back by tsl_schedule_from_text(); replaying the same text on the same
 * program gives the same schedule and the same loop IR.
 *
 * Naming. Stage names are the op names (made unique with a "_N" suffix when two ops
 * share a name). Root iter names are the TE axis variable names (made unique within the
 * stage the same way); split(x) derives "x.outer" and "x.inner", fuse(a, b) derives
 * "a.b.fused" (TVM's names).
 *
 * Ownership. A schedule is malloc'd and owns its stages, iters, relations and steps
 * (free with tsl_schedule_free). It points at the program's TE nodes, which live in an
 * IR arena: free the schedule before that arena. Iter loop variables are IR nodes made
 * in the arena current at tsl_schedule_create()/from_text().
 *
 * The structs below are readable by any module (templates, the tuner, tests); change
 * them only through the step functions so the step list stays the whole truth.
 */
#ifndef TESSEL_SCHEDULE_SCHEDULE_H
#define TESSEL_SCHEDULE_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dsl/te.h"
#include "ir/ir.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- stages --------------------------------------------------------------- */

/* One iteration variable of a stage (TVM's IterVar). */
typedef struct tsl_stage_iter {
  const char *name; /* unique within its stage */
  tsl_expr *var;    /* fresh i64 variable: the loop variable when this iter is a leaf */
  /* Nominal domain: for root iters the TE axis domain [min, min+extent); for derived
   * iters (min 0) the extent implied by the relations over the nominal root domains.
   * Lowering recomputes ranges from the bounds it infers (smaller under compute_at). */
  int64_t min, extent;
  bool is_reduce;
  tsl_for_kind annotation; /* loop kind when a leaf (TSL_FOR_SERIAL by default) */
} tsl_stage_iter;

typedef enum tsl_relation_kind {
  TSL_REL_SPLIT = 0, /* parent = outer * factor + inner (+ parent's min) */
  TSL_REL_FUSE = 1   /* fused = (outer - outer.min) * inner.extent + (inner - inner.min) */
} tsl_relation_kind;

/* A relation between iters of one stage, by index into tsl_stage.iters. */
typedef struct tsl_iter_relation {
  tsl_relation_kind kind;
  int parent;     /* split: the iter split */
  int outer;      /* split: new outer iter; fuse: outer input */
  int inner;      /* split: new inner iter; fuse: inner input */
  int fused;      /* fuse: the new iter */
  int64_t factor; /* split: inner extent (>= 1) */
} tsl_iter_relation;

typedef enum tsl_attach_kind {
  TSL_ATTACH_ROOT = 0,   /* own loop nest at the top level of the kernel */
  TSL_ATTACH_INLINE = 1, /* body substituted into every consumer; no loops, no buffer */
  TSL_ATTACH_AT = 2      /* loop nest inside a leaf loop of another stage */
} tsl_attach_kind;

typedef struct tsl_stage {
  const char *name;
  tsl_te_op *op;  /* the compute op (TSL_TE_COMPUTE) */
  bool is_output; /* one of the program's outputs: always compute_root, never inlined */
  int niters;
  tsl_stage_iter *iters; /* [0, nroot): root iters (op axes, then reduce axes) */
  int nroot;
  int nleaf;
  int *leaf; /* leaf iters in loop order, outermost first (indices into iters) */
  int nrels;
  tsl_iter_relation *rels; /* in the order the steps made them */
  tsl_attach_kind attach;
  int attach_stage; /* TSL_ATTACH_AT: index of the stage whose loop holds this one */
  int attach_iter;  /* TSL_ATTACH_AT: index of that stage's leaf iter */
  /* capacities (private) */
  int iters_cap, leaf_cap, rels_cap;
} tsl_stage;

/* ---- steps ---------------------------------------------------------------- */

typedef enum tsl_step_kind {
  TSL_STEP_COMPUTE_INLINE = 0, /* compute_inline(stage) */
  TSL_STEP_COMPUTE_ROOT,       /* compute_root(stage) */
  TSL_STEP_SPLIT,              /* split(stage, axis, factor) */
  TSL_STEP_FUSE,               /* fuse(stage, outer, inner): adjacent leaves, same kind */
  TSL_STEP_REORDER,            /* reorder(stage, axis, axis...): permute these leaves */
  TSL_STEP_VECTORIZE,          /* vectorize(stage, axis): spatial leaf */
  TSL_STEP_UNROLL,             /* unroll(stage, axis) */
  TSL_STEP_PARALLEL,           /* parallel(stage, axis): spatial leaf */
  TSL_STEP_COUNT_
} tsl_step_kind;

/* One argument of a step: a name (stage or axis) or an integer. */
typedef struct tsl_step_arg {
  bool is_int;
  const char *name; /* !is_int */
  int64_t value;    /* is_int */
} tsl_step_arg;

/* primitive(args...): args[0] is always the stage name. */
typedef struct tsl_step {
  tsl_step_kind kind;
  int nargs;
  tsl_step_arg *args;
} tsl_step;

/* The primitive's name as printed ("split"); NULL for an unknown kind. */
const char *tsl_step_kind_name(tsl_step_kind k);

/* ---- schedules ------------------------------------------------------------ */

typedef struct tsl_schedule {
  const tsl_te_program *program;
  int nstages;
  tsl_stage **stages; /* topological order, producers first */
  int nsteps;
  tsl_step *steps; /* every step applied since the initial schedule, in order */
  int stages_cap, steps_cap;
} tsl_schedule;

/* The initial schedule of p: one stage per compute op reachable from p's outputs, each
 * compute_root, loops in axis order (spatial axes in output-dimension order, then the
 * reduction axes innermost in declaration order), no steps. p must outlive the schedule.
 * Errors: TSL_ERR_INVALID when p has no outputs, an output is a placeholder, or an op
 * has a malformed reduction; TSL_ERR_NOMEM. *out is NULL on error. */
tsl_status tsl_schedule_new(const tsl_te_program *p, tsl_schedule **out);

/* The default schedule: the initial schedule plus compute_inline(stage) for every stage
 * tagged "elemwise" or "injective" that is not an output and has no reduction (one step
 * per such stage, in stage order). Errors as tsl_schedule_new. */
tsl_status tsl_schedule_create(const tsl_te_program *p, tsl_schedule **out);

/* Frees s and everything it owns (not the program). NULL is allowed. */
void tsl_schedule_free(tsl_schedule *s);

/* The stage / its index by name; NULL / -1 when absent. */
tsl_stage *tsl_schedule_stage(const tsl_schedule *s, const char *name);
int tsl_schedule_stage_index(const tsl_schedule *s, const char *name);
/* The stage that computes op; NULL when op has no stage (a placeholder). */
tsl_stage *tsl_schedule_stage_of_op(const tsl_schedule *s, const tsl_te_op *op);
/* Index of the iter called name in st; -1 when absent. */
int tsl_stage_iter_index(const tsl_stage *st, const char *name);

/* Applies one step (validated first) and appends it to s->steps. On error s is
 * unchanged and the status says why, naming the step:
 *   TSL_ERR_INVALID   unknown stage or axis name, wrong argument count or kind
 *   TSL_ERR_SCHEDULE  an illegal step: inlining an output or a reduction, splitting a
 *                     non-leaf or by a factor < 1, fusing non-adjacent leaves or a spatial
 *                     with a reduction axis, reorder naming an axis twice, parallel or
 *                     vectorize on a reduction axis (shared/cases C10), an annotation on a
 *                     stage that has no loops (inlined)
 * Copies what it keeps from step. */
tsl_status tsl_schedule_apply(tsl_schedule *s, const tsl_step *step);

/* The primitives as calls (each builds the step and calls tsl_schedule_apply). */
tsl_status tsl_schedule_compute_inline(tsl_schedule *s, const char *stage);
tsl_status tsl_schedule_compute_root(tsl_schedule *s, const char *stage);
tsl_status tsl_schedule_split(tsl_schedule *s, const char *stage, const char *axis, int64_t factor);
tsl_status tsl_schedule_fuse(tsl_schedule *s, const char *stage, const char *outer, const char *inner);
/* n axis names, a permutation of some of the stage's leaves. */
tsl_status tsl_schedule_reorder(tsl_schedule *s, const char *stage, int n, const char *const *axes);
tsl_status tsl_schedule_vectorize(tsl_schedule *s, const char *stage, const char *axis);
tsl_status tsl_schedule_unroll(tsl_schedule *s, const char *stage, const char *axis);
tsl_status tsl_schedule_parallel(tsl_schedule *s, const char *stage, const char *axis);

/* ---- text form (schedule/step_text.c) ------------------------------------- */

/* Prints the step list, one step a line ("split(out, y, 8)\n"); nothing for no steps. */
void tsl_schedule_print(FILE *f, const tsl_schedule *s);
/* The same text as a malloc'd string (caller frees); NULL only when out of memory. */
char *tsl_schedule_to_string(const tsl_schedule *s);
/* One step as text without the newline, malloc'd (caller frees). */
char *tsl_step_to_string(const tsl_step *step);

/* Builds the initial schedule of p and applies the steps in text (the form printed
 * above; blank lines and '#' comments to the end of a line are skipped). Errors:
 * TSL_ERR_PARSE "schedule:LINE:COL: why" for malformed text or an unknown primitive;
 * the step's own error (with its line) when a step does not apply; errors of
 * tsl_schedule_new. *out is NULL on error. */
tsl_status tsl_schedule_from_text(const tsl_te_program *p, const char *text, tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
