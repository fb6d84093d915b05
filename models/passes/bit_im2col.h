/* Graph pass: a bitserial conv of narrow bit planes reads its window's taps packed into
 * words (a bit im2col), as a 1x1 conv.
 *
 * A unipolar bitserial conv (ops/binary/binary.c, data u64 [N, B, CW, H, W], weight u64
 * [CW, R, S, K]) reads one 64-bit word per pixel, tap and bit plane. With C <= 32 input
 * channels a word holds C bits and 64 - C zeros, and the popcounts run on mostly-zero
 * words: bsqueezenet1_1's 3x3 expand convs read 16 channels (a quarter of each word),
 * Riptide's narrow bresnet variants 8-32. The pass packs T = floor(64 / C) taps into a
 * word: tsl.Binary bit_im2col_unipolar64 (its own node) writes, per output pixel, the
 * ceil(R*S / T) words of the window (tap t = r*S + s at word t / T, bits (t % T) * C ..,
 * zero in the padding), and the conv becomes the same kernel with R = S = 1, stride 1,
 * no padding, over those words, with the weight taps packed the same way (weight'
 * [ceil(R*S / T), 1, 1, K], bits past C of every weight tap dropped) and C = the bits
 * used. Each popcount of the new conv sums the popcounts of T taps of the old one, and
 * its per-pixel data popcount (apop) the same taps, so the integers (the glue's input)
 * are equal: results are bit-identical. The conv's epilogue (glue, bitpack, residual,
 * channels-last output), shift and bias stay.
 *
 * Which convs: tsl.Binary bitserial_conv2d_unipolar64_{packed, requant, requant_add}
 * and their _nhwc twins, with a u64 constant weight of one word (C <= 32) and a window
 * of more than one tap that leaves fewer words than taps (T >= 2). The unipolar op
 * without glue (weight [K, CW, R, S]) and the bipolar ops are left alone. Environment
 * TSL_BIT_IM2COL=none skips the pass (for comparison). */
#ifndef TESSEL_MODELS_PASSES_BIT_IM2COL_H
#define TESSEL_MODELS_PASSES_BIT_IM2COL_H

#include <stdint.h>

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The weight of the rewritten conv: w u64 [1, R, S, K] (bits at and past C ignored) as
 * out u64 [ceil(R*S / T), K] with T = floor(64 / C), tap t = r*S + s of output channel k
 * at bits (t % T) * C .. of word t / T. out holds ceil(R*S / T) * K words.
 * Errors: TSL_ERR_INVALID for NULL pointers or C outside 1..32, R or S < 1, K < 1. */
tsl_status tsl_bit_im2col_weight(const uint64_t *w, int64_t C, int64_t R, int64_t S, int64_t K, uint64_t *out);

/* Rewrites in place; *rewritten (may be NULL) receives the number of convs rewritten.
 * Value and node ids change when one is (the graph is pruned and re-sorted).
 * Errors: TSL_ERR_INVALID (NULL g, a malformed graph), TSL_ERR_NOMEM. */
tsl_status tsl_pass_bit_im2col(tsl_graph *g, int *rewritten);

#ifdef __cplusplus
}
#endif
#endif
