/* Private to schedule/: the state lowering builds per stage, shared by the driver
 * (lower.c), bound inference (bound.c), the iter graph (iter_graph.c) and the loop-nest
 * builder (loop_nest.c). Everything here lives in the current IR arena.
 */
#ifndef TESSEL_SCHEDULE_LOWER_CTX_H
#define TESSEL_SCHEDULE_LOWER_CTX_H

#include "schedule/lower.h"
#include "schedule/schedule.h"

typedef struct tsl_stage_lower {
  /* The op's body with every inlined producer substituted into its reads: it reads only
   * placeholders and non-inlined stages (TE tensor buffers), in the op's TE axis vars. */
  tsl_expr *body;
  /* Kernel buffer holding the stage's output (an argument for outputs, TSL_BUF_LOCAL
   * otherwise); NULL for inlined stages. */
  tsl_buffer *buf;
  /* The realized region per output dimension: element [min, min+extent) of the tensor
   * is stored at buf[index - min]. Outputs: the whole tensor (min 0). */
  tsl_expr **region_min;
  int64_t *region_extent;
  /* Range of every iter of the stage in the lowered loops: roots from bound inference,
   * derived iters from the relations (min 0). */
  tsl_expr **iter_min;
  int64_t *iter_extent;
} tsl_stage_lower;

typedef struct tsl_lower_ctx {
  const tsl_schedule *sched;
  tsl_lower_options opts;
  tsl_stage_lower *stages; /* parallel to sched->stages */
  /* TE tensor buffer -> kernel buffer (placeholders and computed stages alike) and the
   * stage computing it (-1 for placeholders) */
  int nmap;
  const tsl_buffer **map_te;
  tsl_buffer **map_kernel;
  int *map_stage;
} tsl_lower_ctx;

/* ---- iter_graph.c ---- */

/* Derived iter ranges from the root ranges already in sl (TVM's PassDownDomain): a split
 * gives outer ceil(extent / factor) and inner factor, a fuse the product. */
void tsl_iter_pass_down(const tsl_stage *st, tsl_stage_lower *sl);

/* Value of every iter (array of st->niters, arena) given the value of each leaf iter
 * (TVM's PassUpIndex): leaf_value[i] for leaf iter i, or NULL to use the iter's own
 * loop variable. Root values are what the op's axis variables stand for. */
tsl_expr **tsl_iter_pass_up(const tsl_stage *st, const tsl_stage_lower *sl, tsl_expr *const *leaf_value);

/* The conjunction of `parent < min + extent` for every split whose factor does not
 * divide its parent's extent (the tail iterations of the outer loop overshoot), over
 * spatial parents only when spatial_only; NULL when no check is needed. */
tsl_expr *tsl_iter_bound_checks(const tsl_stage *st, const tsl_stage_lower *sl, tsl_expr *const *values,
                                bool spatial_only);

/* Expression of the op's axis vars and reduce-axis vars (n vars written to vars[],
 * their values to vals[], both arrays of at least naxis+nreduce (+ body reduce axes)
 * entries): maps TE variables to root iter values. Returns the count. */
int tsl_iter_te_bindings(const tsl_stage *st, tsl_expr *const *values, tsl_expr **vars, tsl_expr **vals);

/* ---- bound.c ---- */

/* Region of every non-inlined stage and the ranges of its iters (TVM's InferBound over
 * the attach tree), consumers before producers. Fills region_* and iter_* of ctx. */
tsl_status tsl_infer_bound(tsl_lower_ctx *ctx);

/* Prefetches for the prefetch pragmas of stage si at leaf position k: evaluations of
 * TSL_CALL_PREFETCH over the region of each tensor that stage si reads in iteration
 * (leaf var + offset), one per cache line (64 bytes) of its innermost dimension, indices
 * clamped into the buffer; NULL when there are none. Errors: TSL_ERR_SCHEDULE when the
 * region cannot be bounded. */
tsl_status tsl_prefetch_stmts(const tsl_lower_ctx *ctx, int si, int k, tsl_stmt **out);

/* ---- loop_nest.c ---- */

/* e rebuilt bottom-up with every load replaced by fn(ud, load) (the load's indices and
 * predicate already rewritten); fn returns the replacement (the load itself to keep it). */
typedef tsl_expr *(*tsl_load_rewrite_fn)(void *ud, tsl_expr *load);
tsl_expr *tsl_lower_map_loads(tsl_expr *e, tsl_load_rewrite_fn fn, void *ud);

/* Loads of TE tensors in e rewritten to the kernel buffers of ctx (index minus the
 * region's min for computed stages). */
tsl_expr *tsl_lower_retarget(const tsl_lower_ctx *ctx, tsl_expr *e);

/* The loop nest computing stage si, with the stages attached inside its loops (each
 * wrapped in its allocation) and its prefetches. Errors: those of tsl_prefetch_stmts. */
tsl_status tsl_make_stage_nest(const tsl_lower_ctx *ctx, int si, tsl_stmt **out);

#endif
