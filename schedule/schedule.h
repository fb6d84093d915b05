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
 * printed one a line, e.g. a register-blocked matmul:
 *
 *     cache_write(C, local)                 # C.local accumulates, C copies it out
 *     cache_read(B, local, C.local)         # B.local: a packed panel of B
 *     split(C, i, 6)
 *     split(C, j, 16)
 *     reorder(C, j.outer, i.outer, i.inner, j.inner)
 *     compute_at(C.local, C, i.outer)       # one 6 x 16 block per iteration
 *     split(C.local, j, 8)
 *     reorder(C.local, k, i, j.outer, j.inner)
 *     unroll(C.local, i)
 *     unroll(C.local, j.outer)
 *     vectorize(C.local, j.inner)           # 12 vector accumulators in registers
 *     compute_at(B.local, C, j.outer)       # a K x 16 panel per column block
 *     split(C, j.inner, nparts=2)           # TVM's split by nparts
 *     prefetch(C.local, A, k, 8)            # A eight k iterations ahead
 *
 * (tile, fuse, parallel, storage_align, rfactor and compute_inline/compute_root complete the set;
 * see tsl_step_kind) and parsed back by tsl_schedule_from_text(); replaying the same text on the same
 * program gives the same schedule and the same loop IR.
 *
 * Naming. Stage names are the op names (made unique with a "_N" suffix when two ops
 * share a name). Root iter names are the TE axis variable names (made unique within the
 * stage the same way); split(x) derives "x.outer" and "x.inner", fuse(a, b) derives
 * "a.b.fused", cache_read(A)/cache_write(C) make stages "A.local"/"C.local" (TVM's
 * names), rfactor(C, k.outer) makes stage "C.rf" whose new spatial axis is "k.outer" and
 * gives C the reduction axis "k.outer" over it.
 *
 * Ownership. A schedule is malloc'd and owns its stages, iters, relations and steps
 * (free with tsl_schedule_free). It points at the program's TE nodes, which live in an
 * IR arena: free the schedule before that arena. Iter loop variables and the TE ops
 * that cache steps make are IR nodes made in the arena current when the step is
 * applied (tsl_schedule_create()/from_text() for replayed text); the program itself is
 * never modified, so several schedules of one program can coexist.
 *
 * The structs below are readable by any module (templates, the tuner, tests); change
 * them only through the step functions so the step list stays the whole truth. A
 * tsl_stage pointer stays valid until tsl_schedule_free: steps (refused ones too) change
 * stages in place; cache steps insert new stages (s->stages itself may move).
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
  int64_t factor; /* split by factor: inner extent (>= 1); 0 for a split by nparts */
  int64_t nparts; /* split by nparts: outer extent (>= 1), the inner extent being
                     ceil(parent extent / nparts) of the parent's extent as lowered; 0
                     for a split by factor */
} tsl_iter_relation;

typedef enum tsl_attach_kind {
  TSL_ATTACH_ROOT = 0,   /* own loop nest at the top level of the kernel */
  TSL_ATTACH_INLINE = 1, /* body substituted into every consumer; no loops, no buffer */
  TSL_ATTACH_AT = 2      /* loop nest inside a leaf loop of another stage */
} tsl_attach_kind;

/* A prefetch pragma: at the top of every iteration of leaf `iter`, prefetch the part of
 * `tensor` the stage reads in iteration iter + offset. */
typedef struct tsl_stage_prefetch {
  const tsl_buffer *tensor; /* TE buffer of the tensor (placeholder or stage output) */
  int iter;                 /* leaf iter of this stage */
  int64_t offset;           /* iterations ahead (may be negative) */
} tsl_stage_prefetch;

typedef struct tsl_stage {
  const char *name;
  /* The compute op. cache_read and cache_write give a stage a new op (with a body
   * reading the cache), whose output tensor stays the stage's tensor. */
  tsl_te_op *op;
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
  /* storage_align per output dimension (op->naxis entries): the stride of dimension d
   * is padded to factor*k + offset; factor 0 when not set. */
  int64_t *align_factor, *align_offset;
  /* storage_order: storage_order[k] is the buffer dimension stored at position k,
   * outermost first (op->naxis entries; the identity 0, 1, ... unless a storage_order
   * step permuted them): the dimension at the last position has stride 1. */
  int *storage_order;
  int nprefetch;
  tsl_stage_prefetch *prefetch;
  /* capacities (private) */
  int iters_cap, leaf_cap, rels_cap, prefetch_cap;
} tsl_stage;

/* ---- steps ---------------------------------------------------------------- */

/* Text form of each step in parentheses. Axis arguments name leaf iters of the stage;
 * `tensor` names a placeholder or a stage's output. */
typedef enum tsl_step_kind {
  TSL_STEP_COMPUTE_INLINE = 0, /* compute_inline(stage) */
  TSL_STEP_COMPUTE_ROOT,       /* compute_root(stage) */
  TSL_STEP_SPLIT,              /* split(stage, axis, factor) */
  TSL_STEP_FUSE,               /* fuse(stage, outer, inner): adjacent leaves, same kind */
  TSL_STEP_REORDER,            /* reorder(stage, axis, axis...): permute these leaves */
  TSL_STEP_VECTORIZE,          /* vectorize(stage, axis): spatial leaf */
  TSL_STEP_UNROLL,             /* unroll(stage, axis) */
  TSL_STEP_PARALLEL,           /* parallel(stage, axis): spatial leaf */
  TSL_STEP_SPLIT_NPARTS,       /* split(stage, axis, nparts=N) */
  TSL_STEP_TILE,               /* tile(stage, x, y, x_factor, y_factor) */
  TSL_STEP_COMPUTE_AT,         /* compute_at(stage, target_stage, target_axis) */
  TSL_STEP_CACHE_READ,         /* cache_read(tensor, local, reader, reader...) */
  TSL_STEP_CACHE_WRITE,        /* cache_write(stage, local) */
  TSL_STEP_STORAGE_ALIGN,      /* storage_align(stage, axis, factor, offset) */
  TSL_STEP_PREFETCH,           /* prefetch(stage, tensor, axis, offset) */
  TSL_STEP_RFACTOR,            /* rfactor(stage, axis): axis = one half of a split reduction axis */
  TSL_STEP_STORAGE_ORDER,      /* storage_order(stage, axis, axis...): buffer dims, outermost first */
  TSL_STEP_VECTOR_WIDTH,       /* vector_width(bits): the whole kernel; no stage argument */
  TSL_STEP_COUNT_
} tsl_step_kind;

/* One argument of a step: a name (stage, axis, tensor or scope) or an integer. */
typedef struct tsl_step_arg {
  bool is_int;
  const char *name; /* !is_int */
  int64_t value;    /* is_int */
} tsl_step_arg;

/* primitive(args...): args[0] is the stage name (the tensor name for cache_read; the
 * width, an integer, for vector_width). */
typedef struct tsl_step {
  tsl_step_kind kind;
  int nargs;
  tsl_step_arg *args;
} tsl_step;

/* The primitive's name as printed ("split"; split by nparts prints as "split" too);
 * NULL for an unknown kind. */
const char *tsl_step_kind_name(tsl_step_kind k);

/* ---- schedules ------------------------------------------------------------ */

typedef struct tsl_schedule {
  const tsl_te_program *program;
  int nstages;
  tsl_stage **stages; /* topological order, producers first */
  int nsteps;
  tsl_step *steps; /* every step applied since the initial schedule, in order */
  /* The vector register width in bits the kernel is compiled for (a vector_width step);
   * 0: the target's own (target/target.h vector_bits). */
  int vector_bits;
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
/* The stage that computes op (or op's output tensor, after a cache step gave the stage a
 * new op); NULL when op has no stage (a placeholder). */
tsl_stage *tsl_schedule_stage_of_op(const tsl_schedule *s, const tsl_te_op *op);
/* Index of the iter called name in st; -1 when absent. */
int tsl_stage_iter_index(const tsl_stage *st, const char *name);

/* Applies one step and appends it to s->steps. The step is validated first, and the
 * whole schedule is checked after it (attach tree, loop kinds); on any error s is
 * unchanged and the message names the primitive, the stage, the axis and the reason:
 *   TSL_ERR_INVALID   unknown stage, axis or tensor name, wrong argument count or kind,
 *                     a scope other than "local"
 *   TSL_ERR_SCHEDULE  an illegal step:
 *     - split/tile by a factor or nparts < 1; split, fuse or reorder of an axis that is
 *       no longer a leaf (the message says which split or fuse consumed it); split or
 *       fuse of an axis that other stages are computed at;
 *     - fuse of non-adjacent leaves or of a spatial with a reduction axis; reorder
 *       naming an axis twice;
 *     - parallel or vectorize of a reduction axis (shared/cases C10; rfactor the
 *       reduction first to run it in parallel); a second vectorized axis in a stage, a parallel axis, prefetch or
 *       attached stage inside a vectorized one; any annotation of an inlined stage;
 *     - compute_inline of an output or a reduction, or of a stage others are attached
 *       to; compute_at of an output, into itself, into a stage that does not consume it
 *       (directly or through other stages), into a loop that does not enclose all of its
 *       consumers, or under a vectorized loop;
 *     - cache_read of a tensor a reader does not read; cache_write of an output-less,
 *       inlined or already scheduled stage; storage_align of an output, an inlined
 *       stage, a reduction axis, or with factor < 1 or offset outside [0, factor);
 *       prefetch of a tensor the stage does not read; storage_order of an output, an
 *       inlined stage, or with names that are not a permutation of every dimension of
 *       the stage's buffer (a reduction or derived axis, one named twice or left out);
 *     - vector_width of a width no target offers (not 128, 256 or 512), or a second
 *       vector_width step (whether the target offers the width is checked where the
 *       kernel is lowered and compiled: schedule/lower.h, codegen/llvm.h);
 *     - rfactor of a stage that is not a reduction or whose combiner is not associative
 *       and commutative, of a spatial axis, of a reduction axis that was not split (or
 *       comes from a nested split), of a stage with any other step than that split
 *       (another split or fuse, a reorder, an annotation, an attachment, a stage or
 *       prefetch anchored at it).
 * New stages (cache_read/cache_write) are named "<tensor>.local", rfactor's "<stage>.rf"
 * (made unique with "_N"); their TE ops are built in the current arena. Copies what it keeps from step. */
tsl_status tsl_schedule_apply(tsl_schedule *s, const tsl_step *step);

/* The primitives as calls (each builds the step and calls tsl_schedule_apply). */
tsl_status tsl_schedule_compute_inline(tsl_schedule *s, const char *stage);
tsl_status tsl_schedule_compute_root(tsl_schedule *s, const char *stage);
tsl_status tsl_schedule_split(tsl_schedule *s, const char *stage, const char *axis, int64_t factor);
/* Split into `nparts` outer iterations (TVM's split(..., nparts=)): axis.outer has extent
 * nparts, axis.inner ceil(extent / nparts). */
tsl_status tsl_schedule_split_nparts(tsl_schedule *s, const char *stage, const char *axis, int64_t nparts);
/* TVM's tile: split x by x_factor and y by y_factor, then reorder the four new leaves
 * to x.outer, y.outer, x.inner, y.inner (in the loop positions x and y's leaves held). */
tsl_status tsl_schedule_tile(tsl_schedule *s, const char *stage, const char *x, const char *y, int64_t x_factor,
                             int64_t y_factor);
tsl_status tsl_schedule_fuse(tsl_schedule *s, const char *stage, const char *outer, const char *inner);
/* n axis names, a permutation of some of the stage's leaves. */
tsl_status tsl_schedule_reorder(tsl_schedule *s, const char *stage, int n, const char *const *axes);
tsl_status tsl_schedule_vectorize(tsl_schedule *s, const char *stage, const char *axis);
tsl_status tsl_schedule_unroll(tsl_schedule *s, const char *stage, const char *axis);
tsl_status tsl_schedule_parallel(tsl_schedule *s, const char *stage, const char *axis);
/* Computes `stage` inside leaf loop `axis` of `target` (TVM's compute_at): bound
 * inference then realizes, per iteration of that loop, exactly the region of stage that
 * the iteration's consumers read. */
tsl_status tsl_schedule_compute_at(tsl_schedule *s, const char *stage, const char *target, const char *axis);
/* TVM's cache_read(tensor, "local", readers): a new stage copying `tensor` (a
 * placeholder or a stage's output), read by the n readers instead of tensor. Attach it
 * with compute_at to copy ("pack") one tile per iteration into a compact local buffer.
 * *new_stage (may be NULL) receives the new stage's name, owned by s. */
tsl_status tsl_schedule_cache_read(tsl_schedule *s, const char *tensor, const char *scope, int nreaders,
                                   const char *const *readers, const char **new_stage);
/* TVM's cache_write(tensor, "local"): the stage's computation moves to a new stage
 * "<stage>.local" writing a local buffer (with the stage's reduction axes); the stage
 * itself becomes a copy of that buffer into its output. The stage must not be scheduled
 * yet. Attach the new stage with compute_at to accumulate one tile in registers.
 * *new_stage (may be NULL) receives the new stage's name, owned by s. */
tsl_status tsl_schedule_cache_write(tsl_schedule *s, const char *stage, const char *scope, const char **new_stage);
/* TVM's storage_align: the stride of the stage's buffer dimension `axis` (a root
 * spatial axis) becomes factor*k + offset for the smallest such value >= the compact
 * stride (e.g. to keep rows of a packed tile off the same cache set). */
tsl_status tsl_schedule_storage_align(tsl_schedule *s, const char *stage, const char *axis, int64_t factor,
                                      int64_t offset);
/* The order in which the dimensions of the stage's buffer are laid out in memory
 * (TVM's transform_layout restricted to a permutation): axes[0..n) name every root
 * spatial axis of the stage exactly once, outermost first; the last one gets stride 1
 * (storage_align then pads the strides in this order). The loops and the values stay;
 * only the buffer's addresses change. With compute_at at a block loop of a reader,
 * this packs a block in a new axis order: cache_read of W[k][c][r][s] attached at a
 * loop over blocks of nv k's, storage_order(W.local, ax1, ax2, ax3, ax0) stores each
 * block as [c][r][s][nv] (Wp[k/nv][c][r][s][nv] over the blocks). Errors: those of
 * tsl_schedule_apply (an output, an inlined stage, not a permutation of the buffer's
 * dimensions). */
tsl_status tsl_schedule_storage_order(tsl_schedule *s, const char *stage, int n, const char *const *axes);
/* Prefetch pragma: at the top of each iteration of leaf `axis`, prefetch (cache line by
 * cache line) the region of `tensor` that the stage reads `offset` iterations later.
 * Past the loop's last iteration, on a compact row-major buffer, the addresses go on in
 * memory (the element offset is clamped to the buffer, not each index): the lines that
 * follow, which the enclosing loop's next iteration reads first when the loops walk the
 * tensor in storage order (a streamed weight panel after panel); on a buffer with
 * strides each index is clamped to its dimension. */
tsl_status tsl_schedule_prefetch(tsl_schedule *s, const char *stage, const char *tensor, const char *axis,
                                 int64_t offset);

/* TVM's rfactor (schedule/sched_rfactor.c): `axis` is k.outer or k.inner of a split of
 * the stage's reduction axis k (sum, max or min), and the split is the stage's only step
 * so far. A new stage "<stage>.rf" (inserted before it, compute_root) computes the partial
 * reductions: its axes are the stage's axes plus `axis` (now spatial: it may run in
 * parallel or be vectorized), its reduction the other half of k (and the stage's other
 * reduction axes); the stage then reduces over `axis` of "<stage>.rf". A split that does
 * not divide k adds the condition that k stays in its domain. Floats: the result equals
 * the serial reduction up to reassociation rounding. *new_stage (may be NULL) receives
 * the new stage's name, owned by s. */
tsl_status tsl_schedule_rfactor(tsl_schedule *s, const char *stage, const char *axis, const char **new_stage);

/* The vector register width in bits the whole kernel is compiled for: one of the widths
 * its target offers (target/target.h tsl_target_vector_widths), e.g. 256 on an AVX-512
 * target for AVX2 code (8 f32 lanes, no mask registers). Vectorized loops then become
 * vectors of that width, and codegen compiles the kernel's functions for the narrower ISA
 * (LLVM's own vectorizer included). Text form: vector_width(256). Errors: those of
 * tsl_schedule_apply (a width that is not 128, 256 or 512; a second vector_width). */
tsl_status tsl_schedule_vector_width(tsl_schedule *s, int bits);

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

/* tsl_schedule_from_text for the text of file `filename` (a user's --schedule file):
 * every error reads "FILE:LINE:COL: error: WHY", then the line (indented by two spaces)
 * and a caret under the column, as the DSL's (docs/dsl.md section 9); when a step does
 * not apply, WHY is "step split(C, q, 4) does not apply: <the step's own message>".
 * filename NULL: exactly tsl_schedule_from_text. Errors as tsl_schedule_from_text. */
tsl_status tsl_schedule_from_text_file(const tsl_te_program *p, const char *text, const char *filename,
                                       tsl_schedule **out);

/* A check of a whole schedule (e.g. lowering it for the target): TSL_OK or an error with
 * its message set. */
typedef tsl_status (*tsl_schedule_check_fn)(const tsl_schedule *s, void *ctx);

/* tsl_schedule_from_text_file, then check(s, check_ctx) on the schedule built, so that
 * errors only lowering finds (an unroll making too many copies of a body, a vectorized
 * axis of more than TSL_VECTORIZE_MAX_LANES iterations, a vector_width the target lacks)
 * name the line that caused them: when the check fails, the steps are applied again one
 * by one with the check after each, and the error (the whole schedule's message) is
 * placed at the step after the last prefix that passes: "FILE:LINE:COL: error: step
 * unroll(C, i) applies, but the schedule then fails: <the check's message>", the line
 * and a caret. When the program fails the check with no step applied: "FILE: <the
 * check's message>". Costs one check on success and up to two per step, plus one, on
 * failure. check NULL: exactly tsl_schedule_from_text_file. *out is NULL on error. */
tsl_status tsl_schedule_from_text_file_checked(const tsl_te_program *p, const char *text, const char *filename,
                                               tsl_schedule_check_fn check, void *check_ctx, tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
