/* The schedule of lutconv1x1_unipolar64_nchwc (ops/binary/binary.c): a 1x1 convolution
 * of unipolar bit planes u64[N, B, CW, P] (P = H * W pixels) with an f32 weight
 * [CG, KP] (the conv's [K, C, 1, 1] transposed and zero-padded) by 4-bit table lookup,
 * writing blocked f32 NCHW[X]c [N, KP / X, P, X]. Each group of 4 input channels
 * indexes a table of the 16 sums of its weight rows (the "Four Russians" method:
 * Arlazarov, Dinic, Kronrod and Faradzev, "On economical construction of the
 * transitive closure of a directed graph", Soviet Math. Dokl. 11, 1970), so an output
 * costs B * CG / 4 lookups and adds instead of CG multiply-adds; tables are built per
 * block of output channels, which lookup-based GEMMs of quantized weights use the same
 * way (Park et al., "LUT-GEMM", ICLR 2024, sec. 3). The graph compiler rewrites a 1x1
 * conv reading bitunpack_unipolar64_nchwc into it (models/passes/lut_conv.h).
 *
 * Loop nest (tiles from the target's vector registers):
 *
 *   idx[n, pl, g, p] = 4-bit index of group g at pixel p        (compute_root)
 *   for kb.outer (parallel)                 KT blocks of X output channels
 *     T[g, m, k] for the tile's KT * X channels (T2 per group)  CG/4 x 16 x KT*X floats
 *     for n, p.outer                        PT pixels of each image (the table serves all)
 *       acc[KT, PT, X] = 0                  registers: KT * PT vectors of X lanes
 *       for pl, g: acc[kb, p, :] += T[g, idx[pl, g, p], kb*X : kb*X + X]
 *       out = act(acc / (2^B - 1) + bias)
 *
 * KT = 2 (1 when there is one block), PT = the pixels that fill the registers left
 * after 4 (at most 12): 12 on AVX-512 and NEON (32 registers), 6 on AVX2 (16). On
 * bsqueezenet1_1's classifier (512 -> 1000 channels, 13 x 13 pixels, 1 thread, znver5,
 * its step in `tunecli run --profile`) 0.51 ms against 0.80 ms for the dense 1x1 GEMM
 * template at the FMA peak. The lookups are bound by L2 bandwidth (a tile's table is
 * 256 KiB); splitting the groups so that a slice of the table stays in L1 (the
 * accumulators then go through memory between slices) measured only 2% faster. */
#ifndef TESSEL_OPS_BINARY_LUTCONV_H
#define TESSEL_OPS_BINARY_LUTCONV_H

#include "dsl/te.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The registry name of the operator. */
#define TSL_LUTCONV_OP "lutconv1x1_unipolar64_nchwc"

/* The schedule above for p, an instance of TSL_LUTCONV_OP, on target t.
 * Errors: TSL_ERR_SCHEDULE when p has no 4-D output out[n, kb, p, kx]; the schedule
 * layer's errors when it lacks the op's stages (idx, T2, T, acc) or axes (its message
 * prefixed "lutconv schedule"). *out is NULL on error. */
tsl_status tsl_lutconv_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out);

#ifdef __cplusplus
}
#endif
#endif
