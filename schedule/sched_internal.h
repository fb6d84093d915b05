/* Private to schedule/: helpers shared by the step implementations (schedule.c,
 * sched_loops.c, sched_attach.c, sched_cache.c). Everything here works on malloc'd
 * schedule data (see schedule.h for ownership); error paths set tsl_error messages of the
 * form "<primitive>: <stage/axis>: <why>".
 */
#ifndef TESSEL_SCHEDULE_SCHED_INTERNAL_H
#define TESSEL_SCHEDULE_SCHED_INTERNAL_H

#include "schedule/schedule.h"

/* ---- memory and names (schedule.c) ---- */

/* Grows *p (of *cap elements of elem bytes) to hold need elements; new memory zeroed. */
bool tsl_sched_grow(void **p, int *cap, int need, size_t elem);
char *tsl_sched_strdup(const char *s);
/* a + b + c, malloc'd; NULL when out of memory. */
char *tsl_sched_concat3(const char *a, const char *b, const char *c);
/* Position of iter in st's leaf order, -1 when it is not a leaf. */
int tsl_sched_leaf_position(const tsl_stage *st, int iter);
/* base, else base_1, base_2 ...: a name no iter of st has (malloc'd). */
char *tsl_sched_unique_iter_name(const tsl_stage *st, const char *base);
/* base, else base_1 ...: a name no stage of s has (malloc'd). */
char *tsl_sched_unique_stage_name(const tsl_schedule *s, const char *base);
/* Appends an iter (takes over name); returns its index, -1 when out of memory. */
int tsl_sched_add_iter(tsl_stage *st, char *name, int64_t min, int64_t extent, bool is_reduce);
/* A new stage computing op, named `name` (copied) or op's name made unique when NULL. */
tsl_status tsl_sched_stage_new(const tsl_schedule *s, tsl_te_op *op, const char *name, tsl_stage **out);
void tsl_sched_stage_free(tsl_stage *st);
/* Gives dst the contents of src (dst's old contents freed, src's shell freed): a stage
 * object keeps its address across every step. */
void tsl_sched_stage_move(tsl_stage *dst, tsl_stage *src);
/* Inserts st at index pos of s->stages, shifting later stages and renumbering every
 * attach_stage that pointed at a shifted stage. */
tsl_status tsl_sched_insert_stage(tsl_schedule *s, int pos, tsl_stage *st);
/* Resolves args[k] of step to a leaf iter of st; the message says which split or fuse
 * consumed an axis that is no longer a leaf. */
tsl_status tsl_sched_leaf_arg(const tsl_stage *st, const tsl_step *step, int k, const char *prim, int *iter);

/* ---- the TE graph as the schedule sees it (sched_attach.c) ---- */

/* Does stage si's body read TE buffer buf, directly or through stages that are
 * inlined into it? */
bool tsl_sched_stage_reads(const tsl_schedule *s, int si, const tsl_buffer *buf);
/* Does stage ci consume stage pi, directly or through any chain of stages? */
bool tsl_sched_consumes(const tsl_schedule *s, int ci, int pi);
/* Is any stage attached at leaf iter `iter` of stage si, or a prefetch placed there? */
bool tsl_sched_iter_is_anchor(const tsl_schedule *s, int si, int iter, const char **what);

/* ---- primitives ---- */

/* sched_loops.c */
/* Split by a factor, or by nparts when by_nparts. */
tsl_status tsl_sched_split(tsl_schedule *s, tsl_stage *st, int parent, int64_t value, bool by_nparts,
                           const char *prim);
tsl_status tsl_sched_fuse(tsl_schedule *s, tsl_stage *st, int outer, int inner);
/* Permutes the n leaves `iters` into the loop positions they occupy, in the given order. */
tsl_status tsl_sched_reorder(tsl_stage *st, int n, const int *iters, const char *prim);
tsl_status tsl_sched_reorder_step(tsl_stage *st, const tsl_step *step);
tsl_status tsl_sched_tile(tsl_schedule *s, tsl_stage *st, const tsl_step *step);
tsl_status tsl_sched_annotate(tsl_stage *st, int iter, tsl_for_kind kind, const char *prim);

/* sched_attach.c */
tsl_status tsl_sched_compute_inline(tsl_schedule *s, tsl_stage *st);
tsl_status tsl_sched_compute_root(tsl_schedule *s, tsl_stage *st);
tsl_status tsl_sched_compute_at(tsl_schedule *s, tsl_stage *st, const tsl_step *step);
/* Whole-schedule invariants every step must keep (attach tree, vectorized loops):
 * TSL_ERR_SCHEDULE with "<prim>: <why>" when one does not hold. */
tsl_status tsl_sched_validate(const tsl_schedule *s, const char *prim);

/* sched_cache.c */
tsl_status tsl_sched_cache_read(tsl_schedule *s, const tsl_step *step);
tsl_status tsl_sched_cache_write(tsl_schedule *s, tsl_stage *st, const tsl_step *step);
tsl_status tsl_sched_storage_align(tsl_stage *st, const tsl_step *step);
tsl_status tsl_sched_storage_order(tsl_stage *st, const tsl_step *step);
tsl_status tsl_sched_prefetch(tsl_schedule *s, tsl_stage *st, const tsl_step *step);
/* Replaces stage index si by a new stage computing op (same name and attachment, fresh
 * iters: the stage's loop schedule is dropped). */
tsl_status tsl_sched_replace_stage(tsl_schedule *s, int si, tsl_te_op *op);
/* The TE tensor called name: a stage's output or one of the program's inputs; NULL. */
tsl_te_tensor *tsl_sched_find_tensor(const tsl_schedule *s, const char *name);

/* sched_rfactor.c */
tsl_status tsl_sched_rfactor(tsl_schedule *s, tsl_stage *st, const tsl_step *step);

#endif
