/* Schedule template for matrix products C[M, N] = sum_k A[M, K] * B[K, N] (row-major;
 * the registry's "matmul"), with knobs.
 *
 * The loop structure is the GotoBLAS/BLIS one (K. Goto and R. van de Geijn, "Anatomy of
 * High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008; F. Van Zee and R. van
 * de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS Functionality", ACM TOMS
 * 41(3), 2015), written as schedule steps on the stage C (axes i, j, k):
 *
 *   for jc in N by nc
 *    for pc in K by kc         [B.local: kc x nc block of B (pack_b BLOCK)]
 *     for ic in M by mc        (parallel over threads when `parallel`)
 *                              [A.local: mc x kc block of A (pack_a)]
 *      for jr in nc by nr      [B.local: kc x nr panel of B (pack_b PANEL)]
 *       for ir in mc by mr
 *        for k in kc (by ku, unrolled ku times)
 *         for i in mr (unrolled)
 *          for jv in nr by vec (unrolled)
 *           for jl in vec (vectorized): C[i, j] += A[i, k] * B[k, j]
 *
 * The innermost three loops are the micro-kernel: mr x nr/vec vector accumulators, one
 * broadcast of A per row and nr/vec vector loads of B per k step. The accumulators live
 * in C's memory in the IR; the kernel arguments are noalias, so LLVM's LICM keeps them
 * in registers across the k loop (one load and one store of the C block per kc block).
 * k blocking keeps the kc x nr panel of B in L1 and the mc x kc block of A in L2; the
 * B block is packed once per (jc, pc) and shared by all row blocks (and threads).
 * Packing copies (TVM's cache_read + compute_at) make both contiguous, so the micro-
 * kernel streams B from consecutive addresses instead of rows N floats apart (rows a
 * power of two apart fall into the same L1 sets).
 *
 * With cache_c the micro-kernel is a separate stage C.local (TVM's cache_write) computed
 * at ir: an mr x nr local buffer that LLVM keeps in registers, zeroed, accumulated over
 * all of K, then stored to C once, as BLIS micro-kernels do. There is no pc loop then
 * (kc is ignored): the B panel is K x nr and the A block mc x K.
 *
 * Any M, N, K is correct: a factor that does not divide its extent leaves a tail that
 * lowering guards (a scalar condition for rows and k, predicated vector accesses for
 * columns). Factors larger than the extent are clamped to it.
 */
#ifndef TESSEL_OPS_MATMUL_MATMUL_SCHEDULE_H
#define TESSEL_OPS_MATMUL_MATMUL_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where B is copied ("packed") into a local buffer. */
typedef enum tsl_matmul_pack {
  TSL_MATMUL_PACK_NONE = 0,  /* read B in place */
  TSL_MATMUL_PACK_PANEL = 1, /* per jr: the kc x nr panel (K x nr with cache_c), contiguous */
  TSL_MATMUL_PACK_BLOCK = 2  /* per pc (per jc with cache_c): the kc x nc block, each row
                                padded by one register block (storage_align) so that a
                                panel's rows do not share L1 sets */
} tsl_matmul_pack;

/* Knobs of the template. Sizes are in elements (rows, columns, k steps). */
typedef struct tsl_matmul_knobs {
  int64_t mr;     /* rows of the register block, >= 1 */
  int64_t nr;     /* columns of the register block, a multiple of vec */
  int64_t vec;    /* lanes of the vectorized innermost loop; 1 = scalar */
  int64_t kc;     /* k block, >= 1 (>= K: no k blocking; ignored with cache_c) */
  int64_t mc;     /* row block, a multiple of mr (>= M: no row blocking) */
  int64_t nc;     /* column block, a multiple of nr (>= N: no column blocking) */
  int64_t ku;     /* unroll of the k loop, >= 1 (1: none; LLVM may still unroll) */
  bool cache_c;   /* accumulate each mr x nr block over all of K in a local buffer
                     (cache_write: zeroed registers, C written once, never read) instead
                     of in C's memory (read and written once per k block) */
  bool pack_a;    /* copy the block of A used per (jc, pc, ic) (cache_read A): mc x kc,
                     or mc x K with cache_c */
  tsl_matmul_pack pack_b;
  bool parallel;  /* run the row blocks (ic; jc, then ir when there are none) on the
                     thread pool */
} tsl_matmul_knobs;

/* Hand-tuned knobs for target t and the shape M x N x K (each >= 1), measured on an
 * AMD EPYC Zen 3 (znver3: AVX2 + FMA, 16 ymm registers, 32 KiB L1d, 512 KiB L2):
 *   - a 6 x 16 register block with 8-lane vectors: 12 ymm accumulators, 2 B vectors and
 *     1 broadcast of the 16 registers (32-register targets, AVX-512 and AArch64, use
 *     12 x 2 vectors);
 *   - when one A row strip and one B panel, (mr + nr) x K floats, fit half of L2:
 *     cache_c (the register block accumulates over all of K and C is written once),
 *     B packed per column block (pack_b BLOCK) with nc and mc chosen so that the
 *     K x nc block of B and the mc x K block of A each fit half of L2;
 *   - otherwise k blocks of about L1 / 2 / (nr * 4) (256 here) with A and B packed,
 *     mc and nc so that each packed block fits half of L2;
 *   - row blocks in parallel.
 * Block sizes (k blocks, and row and column blocks in multiples of mr and nr) lie
 * between half and all of their target and are chosen so that the tail block idles
 * the fewest iterations: lowering runs a tail block with a full block's loops under
 * guards, and idle column panels are masked vector code. So K = 1000 gets k blocks of
 * 250 (not 256 and a tail of 232) and N = 1000 column blocks of 48 (not 64). Other
 * targets get the same rules scaled to their vector width and cache sizes (t->vector_bits,
 * l1d_bytes, l2_bytes; NULL t: 128-bit vectors, 32 KiB, 512 KiB) but were not
 * measured. */
tsl_matmul_knobs tsl_matmul_default_knobs(const tsl_target *t, int64_t M, int64_t N, int64_t K);

/* Checks knobs for the shape: TSL_ERR_INVALID naming the knob when mr, nr, vec, kc,
 * mc, nc or ku is < 1, nr is not a multiple of vec, mc not a multiple of mr (when
 * mc < M), or nc not a multiple of nr (when nc < N). */
tsl_status tsl_matmul_knobs_check(const tsl_matmul_knobs *k, int64_t M, int64_t N, int64_t K);

/* The shape of a matmul program: the single output stage with two spatial axes and
 * one reduction, reading two rank-2 placeholders A[M, K] and B[K, N] (in that input
 * order). Errors: TSL_ERR_INVALID when p is not such a program (the message says
 * what differs). */
tsl_status tsl_matmul_shape(const tsl_te_program *p, int64_t *M, int64_t *N, int64_t *K);

/* Builds the schedule of p (see tsl_matmul_shape) for target t with the knobs (NULL:
 * tsl_matmul_default_knobs). The schedule starts from tsl_schedule_create(p) and
 * applies the steps of the loop nest above; print it with tsl_schedule_print. *out is
 * owned by the caller (tsl_schedule_free) and NULL on error. The program must outlive
 * it (schedule.h). Errors: those of tsl_matmul_shape and tsl_matmul_knobs_check
 * (TSL_ERR_INVALID), TSL_ERR_NOMEM, and a step's own error if the schedule refuses one
 * (a tessel bug in this template or in the schedule: the message names the step). */
tsl_status tsl_matmul_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_matmul_knobs *knobs,
                               tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
