/* Features of a lowered kernel's loop IR for the tuner's cost model, after AutoTVM's
 * itervar/curve features (Chen et al., "Learning to Optimize Tensor Programs", NeurIPS
 * 2018, section 4 and appendix: per loop level the extent and, per buffer, the bytes
 * touched and the reuse; TVM's python/tvm/autotvm/feature.py): what the knobs do to the
 * loops the code generator sees, so the model learns from loop structure and memory
 * footprints rather than from raw knob values alone.
 *
 * The kernel is cut into loop nests: each innermost loop (a loop with no loop inside)
 * or straight-line store outside every loop is one nest; its loops are the loops
 * around it, outermost first. The DOMINANT nest is the one with the most float
 * operations over all its iterations (ties: the first). Lowered IR has no unrolled or
 * vectorized loops left (they became copies and lanes), so a nest's body shows the
 * unrolled copies as several stores and the vector width as lanes.
 *
 * Definitions (for the dominant nest unless said otherwise; "level L" = the innermost L
 * loops of the nest, L = 1..4, i.e. one whole run of the L-th loop from the inside):
 *   trip        product of the nest's loop extents (non-constant extents: their
 *               interval's upper bound, or 1 when unbounded)
 *   flops/iter  float operations of one execution of the body: add, sub, mul, div,
 *               min, max one per lane, fma two per lane
 *   bytes(L)    sum over the buffers accessed in the body of the distinct bytes the
 *               accesses touch during level L: per access, elements = min(product of
 *               the extents of the level's loops whose variable the flattened index
 *               depends on (times the lanes), 1 + sum |coef| * (extent - 1) + the vector
 *               span) with coef the index's linear coefficient of each loop variable (a
 *               non-linear dependence counts the full product); per buffer the sum over
 *               its accesses with distinct index expressions (a load and store of the
 *               same element count once), capped at the buffer's size
 *   reuse(L)    bytes accessed during level L (every load and store lane, element bytes)
 *               over bytes(L)
 *   AI(L)       arithmetic intensity: flops during level L over bytes(L)
 *
 * Feature vector (TSL_IR_NFEATURES floats; log2 is of 1 + x):
 *    0 log2 float operations of the whole kernel       1 number of nests
 *    2 log2 trip                                         3 depth (loops in the nest)
 *    4 vector lanes (widest store or load of the body)   5 stores in the body (unrolled copies)
 *    6 flops/iter                                        7 load lanes per iteration
 *    8 log2 extent of the outermost parallel loop (0 without one)
 *    9..14  log2 extent of loops 1..6 from the inside (0 when the nest is shallower)
 *   15..18  log2 bytes(L), L = 1..4                     19..22 log2 reuse(L)
 *   23..26  log2 AI(L)
 *   27 fraction of body loads not depending on the innermost loop (register reuse)
 *   28 fraction of body loads with unit stride in the innermost loop
 *   29 log2 largest |stride| in elements of a body load in the innermost loop
 *   30 log2 bytes of kernel-local buffers (packing, cache_write)
 *   31 log2 trip of the whole parallel loop's body per parallel iteration (0 without)
 */
#ifndef TESSEL_TUNER_IR_FEATURES_H
#define TESSEL_TUNER_IR_FEATURES_H

#include <stdint.h>

#include "ir/ir.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_IR_NFEATURES 32

/* Writes TSL_IR_NFEATURES features of lowered kernel f (flattened indices, as
 * tsl_lower gives) into out. A kernel without stores gives zeros. Errors:
 * TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOMEM. */
tsl_status tsl_ir_features(const tsl_func *f, float *out);

/* One loop nest of a kernel (the nests above: an innermost loop with the loops around
 * it, or a store outside every loop), for the static cost model's memory term
 * (tuner/cost_static.h). */
#define TSL_IR_MAX_DEPTH 32
#define TSL_IR_MAX_NEST_BUFS 16
typedef struct tsl_ir_nest {
  int depth;                              /* loops around the body */
  const char *names[TSL_IR_MAX_DEPTH];    /* their variables' names, outermost first (in f) */
  double extents[TSL_IR_MAX_DEPTH];       /* as `trip` above: upper bounds, 1 when unbounded */
  tsl_for_kind kinds[TSL_IR_MAX_DEPTH];
  double share[TSL_IR_MAX_DEPTH];         /* the fraction of each loop's iterations in which
                                             this nest runs: 1, or less under an `if` on the
                                             loop's variable (a full-tile/tail partition) */
  double flops_iter;                      /* flops/iter above */
  double bytes[TSL_IR_MAX_DEPTH + 1];     /* bytes(L) above for L = 0..depth (L = 0: one
                                             execution of the body) */
  int nbufs;                              /* buffers the body accesses (at most
                                             TSL_IR_MAX_NEST_BUFS; further ones are folded
                                             into the last, as if it depended on every loop) */
  double buf_bytes[TSL_IR_MAX_NEST_BUFS][TSL_IR_MAX_DEPTH + 1]; /* bytes(L) of one buffer */
  uint64_t buf_deps[TSL_IR_MAX_NEST_BUFS]; /* bit l: an access of the buffer depends on
                                              loop l (outermost first, as names) */
} tsl_ir_nest;

/* The nests of lowered kernel f in program order into *out (malloc'd; the caller frees
 * it) and *n (0 for a kernel without stores). Names point into f's IR. Errors:
 * TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOMEM. */
tsl_status tsl_ir_nests(const tsl_func *f, tsl_ir_nest **out, int *n);

#ifdef __cplusplus
}
#endif
#endif
