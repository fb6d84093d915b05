/* Binary (bitserial) operators after Riptide (Fromm et al., MLSys 2020) and TVM's
 * bitserial_conv2d (Cowan et al.): bit-packing, bitserial conv2d, binary dense and the
 * fused integer glue. Every operator exists for 32-bit (u32) and 64-bit (u64) words; the
 * name ends in the word size. docs/binary.md gives the conventions and exact formulas.
 *
 * Conventions (docs/binary.md):
 * - Packing is along channels: word w of a pixel holds channels w*WORD .. w*WORD+WORD-1,
 *   channel w*WORD+i in bit i. Channels past C are 0 bits in activations; every formula
 *   uses the true channel count C, so those bits never change a result.
 * - Bipolar 1-bit: value -1 is bit 1, value +1 is bit 0; x < 0 packs as -1, so 0.0 packs
 *   as +1 (bit 0). dot over C channels = C - 2*popcount(a ^ w).
 * - Unipolar N-bit (N = 1, 2): q = min(#{k in 0..L-1 : x*L >= k + 0.5}, L), L = 2^N - 1,
 *   i.e. x clipped to [0, 1] and rounded half up to L levels (comparisons only, so no
 *   float rounding differs between targets); bit plane b holds bit b of q.
 *   With bipolar weights: dot = sum_b 2^b (popcount(a_b) - 2*popcount(a_b & w)).
 * - Spatial padding contributes exactly 0 to a conv sum (the +-1 tensor is zero-padded):
 *   the reduction skips padded taps, which is the exact form of the correction term
 *   C_pad = (number of padded taps) * C that a padded-with-bits kernel would subtract.
 * - Glue: q = min(max((acc + bias[k]) >> shift[k], 0), qmax), >> arithmetic (floor
 *   division by 2^shift), shift[k] in [0, 31].
 * - A packing reduction runs over i < min(WORD, channels): with fewer channels than a word
 *   holds (SqueezeNet's 16-48-channel squeeze convs) the loop has their extent instead of a
 *   WORD-long loop whose body is skipped past them (4.7x faster on a 64 -> 16 1x1 conv at
 *   55x55, AVX-512); the `if` stays for the last word's tail of a longer channel axis. */
#include "ops/families.h"
#include "ops/nchwc.h"

/* One activation of channel w*WS + i at pixel (y, x) of NCHW data. */
#define PLAIN_PIXEL(WS) "data[n, w*" WS " + i, y, x]"
/* Blocked NCHW[X]c data (ops/nchwc.h): channel c in block c / X, lane c % X. */
#define BLOCKED_ASSERT                                                                           \
  "  assert C >= 1 && C <= CB*X && C > CB*X - X, \"C must need exactly CB blocks of X channels\"\n"

#define BITPACK_BIPOLAR_BODY(WS, T, PIX)                                                         \
  "  out[n, w, y, x] = sum(i: shl(" T "(" PIX " < 0.0), " T "(i))\n"                             \
  "                        if w*" WS " + i < C)\n"                                               \
  "    where w < (C + " WS " - 1) / " WS ", i < min(" WS ", C)\n"
#define BITPACK_BIPOLAR(WS, T)                                                                   \
  "op bitpack_bipolar" WS "(data: f32[N, C, H, W])\n" BITPACK_BIPOLAR_BODY(WS, T, PLAIN_PIXEL(WS))
/* The blocked packs in two stages, so that the lanes of a block are a spatial axis: part
 * holds, per word and lane j, the bits of the word's channels in lane j (channels
 * w*WS + k*X + j, k < ceil(WS/X)), read as contiguous vectors of the block (the block
 * index clamped to the last: a channel past C is not summed, but its read must stay in
 * bounds); out ORs the X parts (disjoint bits, so a sum). */
#define BLOCKED_LANE_CHANNEL(WS) "(w*" WS " + k*X + j)"
#define BLOCKED_LANE_PIXEL(WS) "data[n, min(" BLOCKED_LANE_CHANNEL(WS) " / X, CB - 1), y, x, j]"
#define BLOCKED_LANE_WHERE(WS) \
  "                        if k*X + j < " WS " && " BLOCKED_LANE_CHANNEL(WS) " < C)\n"
#define BLOCKED_WORD_ASSERT(WS) "  assert " WS " % X == 0, \"the block (X channels) must divide the word\"\n"
#define BITPACK_BIPOLAR_NCHWC(WS, T)                                                             \
  "op bitpack_bipolar" WS "_nchwc(data: f32[N, CB, H, W, X], C: int)\n" BLOCKED_ASSERT            \
  BLOCKED_WORD_ASSERT(WS)                                                                        \
  "  part[n, w, y, x, j] = sum(k: shl(" T "(" BLOCKED_LANE_PIXEL(WS) " < 0.0), " T "(k*X + j))\n"   \
  BLOCKED_LANE_WHERE(WS)                                                                         \
  "    where w < (C + " WS " - 1) / " WS ", j < X, k < (" WS " + X - 1) / X\n"                    \
  "  out[n, w, y, x] = sum(j: part[n, w, y, x, j])\n"

/* The unipolar level of activation PIX (docs/binary.md): thresholds at 0.5, 1.5, 2.5. */
#define UNIPOLAR_LEVEL(PIX)                                                                      \
  "min(select(" PIX " * f32((1 << bits) - 1) >= 0.5, 1, 0)\n"                                     \
  "                                          + select(" PIX " * f32((1 << bits) - 1) >= 1.5, 1, 0)\n" \
  "                                          + select(" PIX " * f32((1 << bits) - 1) >= 2.5, 1, 0),\n" \
  "                                          (1 << bits) - 1)"
#define BITPACK_UNIPOLAR_BODY(WS, T, PIX)                                                        \
  "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"                                   \
  "  out[n, b, w, y, x] = sum(i: shl(" T "((" UNIPOLAR_LEVEL(PIX) " >> b) & 1), " T "(i))\n"     \
  "                           if w*" WS " + i < C)\n"                                            \
  "    where b < bits, w < (C + " WS " - 1) / " WS ", i < min(" WS ", C)\n"
#define BITPACK_UNIPOLAR(WS, T)                                                                  \
  "op bitpack_unipolar" WS "(data: f32[N, C, H, W], bits: int = 1)\n"                           \
  BITPACK_UNIPOLAR_BODY(WS, T, PLAIN_PIXEL(WS))
#define BITPACK_UNIPOLAR_NCHWC(WS, T)                                                            \
  "op bitpack_unipolar" WS "_nchwc(data: f32[N, CB, H, W, X], C: int, bits: int = 1)\n"         \
  BLOCKED_ASSERT BLOCKED_WORD_ASSERT(WS)                                                         \
  "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"                                   \
  "  part[n, b, w, y, x, j] = sum(k: shl(" T "((" UNIPOLAR_LEVEL(BLOCKED_LANE_PIXEL(WS)) " >> b) & 1), " T "(k*X + j))\n" \
  BLOCKED_LANE_WHERE(WS)                                                                         \
  "    where b < bits, w < (C + " WS " - 1) / " WS ", j < X, k < (" WS " + X - 1) / X\n"          \
  "  out[n, b, w, y, x] = sum(j: part[n, b, w, y, x, j])\n"

#define CONV_PARAMS                                                                              \
  "C: int, stride_h: int = 1, stride_w: int = 1, pad_h: int = 0, pad_w: int = 0)\n"              \
  "  assert stride_h >= 1 && stride_w >= 1, \"strides must be >= 1\"\n"                          \
  "  assert pad_h >= 0 && pad_w >= 0, \"paddings must be >= 0\"\n"

#define CONV_VALID                                                                               \
  "if y*stride_h + r >= pad_h && y*stride_h + r < H + pad_h && x*stride_w + s >= pad_w && x*stride_w + s < W + pad_w)\n"

#define CONV_WHERE                                                                               \
  "    where y < (H + 2*pad_h - R) / stride_h + 1, x < (W + 2*pad_w - S) / stride_w + 1\n"

#define CONV_BIPOLAR_ACC(WS)                                                                     \
  "  assert C >= 1 && C <= CW*" WS " && C > CW*" WS " - " WS ", \"C must need exactly CW words\"\n" \
  "  @tag(\"conv2d\")\n"                                                                         \
  "  acc[n, k, y, x] = sum(c, r, s: i32(min(C - c*" WS ", " WS "))\n"                            \
  "      - 2 * i32(popcount(data[n, c, y*stride_h + r - pad_h, x*stride_w + s - pad_w] ^ weight[k, c, r, s]))\n" \
  "      " CONV_VALID CONV_WHERE

#define CONV_BIPOLAR(WS, T)                                                                      \
  "op bitserial_conv2d_bipolar" WS "(data: " T "[N, CW, H, W], weight: " T "[K, CW, R, S],\n"    \
  "    " CONV_PARAMS CONV_BIPOLAR_ACC(WS)

#define CONV_UNIPOLAR(WS, T)                                                                     \
  "op bitserial_conv2d_unipolar" WS "(data: " T "[N, B, CW, H, W], weight: " T "[K, CW, R, S],\n" \
  "    " CONV_PARAMS                                                                             \
  "  assert C >= 1 && C <= CW*" WS " && C > CW*" WS " - " WS ", \"C must need exactly CW words\"\n" \
  "  @tag(\"conv2d\")\n"                                                                         \
  "  acc[n, k, y, x] = sum(b, c, r, s:\n"                                                        \
  "      (i32(popcount(data[n, b, c, y*stride_h + r - pad_h, x*stride_w + s - pad_w]))\n"        \
  "       - 2 * i32(popcount(data[n, b, c, y*stride_h + r - pad_h, x*stride_w + s - pad_w] & weight[k, c, r, s])))\n" \
  "      << i32(b)\n"                                                                            \
  "      " CONV_VALID CONV_WHERE

#define GLUE_PARAMS ", shift: i32[K], bias: i32[K],\n    "

#define CONV_REQUANT(WS, T)                                                                      \
  "op bitserial_conv2d_bipolar" WS "_requant(data: " T "[N, CW, H, W], weight: " T "[K, CW, R, S]" GLUE_PARAMS \
  "qmax: int = 3, " CONV_PARAMS                                                                  \
  "  assert qmax >= 1 && qmax <= 2147483647, \"qmax must be in [1, 2^31 - 1]\"\n"                \
  CONV_BIPOLAR_ACC(WS)                                                                           \
  "  @tag(\"elemwise\")\n"                                                                       \
  "  out[n, k, y, x] = min(max((acc[n, k, y, x] + bias[k]) >> shift[k], 0), i32(qmax))\n"

#define CONV_PACKED(WS, T)                                                                       \
  "op bitserial_conv2d_bipolar" WS "_packed(data: " T "[N, CW, H, W], weight: " T "[K, CW, R, S]" GLUE_PARAMS \
  "bits: int = 1, " CONV_PARAMS                                                                  \
  "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"                                   \
  CONV_BIPOLAR_ACC(WS)                                                                           \
  "  @tag(\"injective\")\n"                                                                      \
  "  q[n, k, y, x] = min(max((acc[n, k, y, x] + bias[k]) >> shift[k], 0), i32((1 << bits) - 1))\n" \
  "  out[n, b, w, y, x] = sum(i: shl(" T "((q[n, w*" WS " + i, y, x] >> i32(b)) & 1), " T "(i))\n" \
  "                           if w*" WS " + i < K)\n"                                            \
  "    where b < bits, w < (K + " WS " - 1) / " WS ", i < min(" WS ", K)\n"

#define DENSE_BIPOLAR(WS, T)                                                                     \
  "op binary_dense_bipolar" WS "(data: " T "[B, KW], weight: " T "[O, KW], K: int)\n"           \
  "  assert K >= 1 && K <= KW*" WS " && K > KW*" WS " - " WS ", \"K must need exactly KW words\"\n" \
  "  out[b, o] = sum(k: i32(min(K - k*" WS ", " WS ")) - 2 * i32(popcount(data[b, k] ^ weight[o, k])))\n"

/* Max-pool on packed words, no padding, size 2 or 3: bipolar max = AND of the words (+1,
 * bit 0, wins), unipolar 1-bit max = OR. The third row/column of a size-2 window is the
 * operator's neutral element; its clamped index keeps the read in bounds. */
#define POOL_TAP(OPN, NEUTRAL, T, DY, DX)                                                        \
  "select(" #DY " < size && " #DX " < size, data[n, c, min(y*stride + " #DY ", H - 1), min(x*stride + " #DX ", W - 1)], " \
  T "(" NEUTRAL "))"
#define POOL_ROW(OPN, NEUTRAL, T, DY)                                                            \
  POOL_TAP(OPN, NEUTRAL, T, DY, 0) " " OPN "\n    " POOL_TAP(OPN, NEUTRAL, T, DY, 1) " " OPN "\n    " \
  POOL_TAP(OPN, NEUTRAL, T, DY, 2)
#define MAXPOOL(KIND, OPN, NEUTRAL, WS, T)                                                       \
  "op maxpool_packed_" KIND WS "(data: " T "[N, C, H, W], size: int = 2, stride: int = 2)\n"    \
  "  assert size >= 2 && size <= 3, \"size must be 2 or 3\"\n"                                   \
  "  assert stride >= 1 && H >= size && W >= size, \"stride >= 1 and the window inside the input\"\n" \
  "  out[n, c, y, x] =\n    " POOL_ROW(OPN, NEUTRAL, T, 0) " " OPN "\n    " POOL_ROW(OPN, NEUTRAL, T, 1) " " OPN \
  "\n    " POOL_ROW(OPN, NEUTRAL, T, 2) "\n"                                                      \
  "    where y < (H - size) / stride + 1, x < (W - size) / stride + 1\n"


/* ---- the binarized networks' operators (models/zoo_binary.h), u64 words ----
 * Unipolar N-bit activations (bit planes) with bipolar 1-bit weights, as Riptide and TVM's
 * bitserial_conv2d use them. The dot product splits into a weight-free part per pixel,
 * apop = sum 2^b popcount(a_b), and the part the template tiles,
 * acc = sum 2^b popcount(a_b & w): dot = apop - 2*acc (docs/binary.md). */
#define UNI_PARAMS(WS, T, EXTRA)                                                                 \
  "(data: " T "[N, B, CW, H, W], weight: " T "[CW, R, S, K], shift: i32[K], bias: i32[K]" EXTRA ",\n" \
  "    " CONV_PARAMS                                                                             \
  "  assert C >= 1 && C <= CW*" WS " && C > CW*" WS " - " WS ", \"C must need exactly CW words\"\n" \
  "  assert B >= 1 && B <= 2, \"activations must have 1 or 2 bit planes\"\n"

/* acc is [n, y, x, k] (k innermost) and i64 (popcounts widen once, at the end): the
 * template's register tile vectorizes k over the words of weight[c, r, s, k..]. */
#define UNI_ACC(WS)                                                                              \
  "  @tag(\"conv2d\")\n"                                                                         \
  "  acc[n, y, x, k] = sum(b, c, r, s:\n"                                                        \
  "      i64(popcount(data[n, b, c, y*stride_h + r - pad_h, x*stride_w + s - pad_w] & weight[c, r, s, k])) << i64(b)\n" \
  "      " CONV_VALID CONV_WHERE                                                                 \
  "  apop[n, y, x] = sum(b, c, r, s:\n"                                                          \
  "      i32(popcount(data[n, b, c, y*stride_h + r - pad_h, x*stride_w + s - pad_w])) << i32(b)\n" \
  "      " CONV_VALID                                                                            \
  "    where y < (H + 2*pad_h - R) / stride_h + 1, x < (W + 2*pad_w - S) / stride_w + 1, r < R, s < S\n" \
  "  @tag(\"injective\")\n"                                                                      \
  "  glued[n, k, y, x] = (apop[n, y, x] - 2 * i32(acc[n, y, x, k]) + bias[k]) >> shift[k]\n"

#define UNI_PACKED(WS, T)                                                                        \
  "op bitserial_conv2d_unipolar" WS "_packed" UNI_PARAMS(WS, T, ", bits: int = 1")               \
  "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"                                   \
  UNI_ACC(WS)                                                                                    \
  "  @tag(\"injective\")\n"                                                                      \
  "  q[n, k, y, x] = min(max(glued[n, k, y, x], 0), i32((1 << bits) - 1))\n"                     \
  "  out[n, p, w, y, x] = sum(i: shl(" T "((q[n, w*" WS " + i, y, x] >> i32(p)) & 1), " T "(i))\n" \
  "                           if w*" WS " + i < K)\n"                                            \
  "    where p < bits, w < (K + " WS " - 1) / " WS ", i < min(" WS ", K)\n"

#define UNI_REQUANT(WS, T)                                                                       \
  "op bitserial_conv2d_unipolar" WS "_requant" UNI_PARAMS(WS, T, ", qmax: int = 2147483647")     \
  "  assert qmax >= 1 && qmax <= 2147483647, \"qmax must be in [1, 2^31 - 1]\"\n"                \
  UNI_ACC(WS)                                                                                    \
  "  out[n, k, y, x] = min(max(glued[n, k, y, x], 0), i32(qmax))\n"

#define UNI_REQUANT_ADD(WS, T)                                                                   \
  "op bitserial_conv2d_unipolar" WS "_requant_add"                                               \
  UNI_PARAMS(WS, T, ", res: i32[RN, RK, RH, RW], qmax: int = 2147483647")                        \
  "  assert qmax >= 1 && qmax <= 2147483647, \"qmax must be in [1, 2^31 - 1]\"\n"                \
  "  assert RN == N && RK == K && RH == (H + 2*pad_h - R) / stride_h + 1 && RW == (W + 2*pad_w - S) / stride_w + 1, \"res must have the output's shape\"\n" \
  UNI_ACC(WS)                                                                                    \
  "  out[n, k, y, x] = min(max(glued[n, k, y, x] + res[n, k, y, x], 0), i32(qmax))\n"

/* The channels-last residual stream (models/passes/binary_channels_last.h): the same
 * operators with the i32 tensors [N, H, W, C] instead of [N, C, H, W]. The accumulator
 * acc[n, y, x, k] has k innermost, so the epilogue stores (and reads res) along k, contiguous,
 * where the NCHW output is a transpose of acc (per channel, strided stores; on AVX-512 LLVM
 * emits it as gathers of acc). */
#define UNI_REQUANT_NHWC(WS, T)                                                                  \
  "op bitserial_conv2d_unipolar" WS "_requant_nhwc" UNI_PARAMS(WS, T, ", qmax: int = 2147483647") \
  "  assert qmax >= 1 && qmax <= 2147483647, \"qmax must be in [1, 2^31 - 1]\"\n"                \
  UNI_ACC(WS)                                                                                    \
  "  out[n, y, x, k] = min(max(glued[n, k, y, x], 0), i32(qmax))\n"

#define UNI_REQUANT_ADD_NHWC(WS, T)                                                              \
  "op bitserial_conv2d_unipolar" WS "_requant_add_nhwc"                                          \
  UNI_PARAMS(WS, T, ", res: i32[RN, RH, RW, RK], qmax: int = 2147483647")                        \
  "  assert qmax >= 1 && qmax <= 2147483647, \"qmax must be in [1, 2^31 - 1]\"\n"                \
  "  assert RN == N && RK == K && RH == (H + 2*pad_h - R) / stride_h + 1 && RW == (W + 2*pad_w - S) / stride_w + 1, \"res must have the output's shape [N, OH, OW, K]\"\n" \
  UNI_ACC(WS)                                                                                    \
  "  out[n, y, x, k] = min(max(glued[n, k, y, x] + res[n, y, x, k], 0), i32(qmax))\n"

/* The residual stream (i32 levels) packed for the next binary conv: q = clip(x >> shift, 0, L). */
#define PACK_I32(WS, T)                                                                          \
  "op bitpack_unipolar" WS "_i32(data: i32[N, C, H, W], bits: int = 1, shift: int = 0)\n"       \
  "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"                                   \
  "  assert shift >= 0 && shift <= 31, \"shift must be in [0, 31]\"\n"                           \
  "  out[n, p, w, y, x] = sum(i: shl(" T "((min(max(data[n, w*" WS " + i, y, x] >> i32(shift), 0), i32((1 << bits) - 1))\n" \
  "                                         >> i32(p)) & 1), " T "(i))\n"                        \
  "                           if w*" WS " + i < C)\n"                                            \
  "    where p < bits, w < (C + " WS " - 1) / " WS ", i < min(" WS ", C)\n"

/* bitpack_unipolar64_i32 of a channels-last stream: i32 [N, H, W, C] to the same planes. */
#define PACK_I32_NHWC(WS, T)                                                                     \
  "op bitpack_unipolar" WS "_i32_nhwc(data: i32[N, H, W, C], bits: int = 1, shift: int = 0)\n"  \
  "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"                                   \
  "  assert shift >= 0 && shift <= 31, \"shift must be in [0, 31]\"\n"                           \
  "  out[n, p, w, y, x] = sum(i: shl(" T "((min(max(data[n, y, x, w*" WS " + i] >> i32(shift), 0), i32((1 << bits) - 1))\n" \
  "                                         >> i32(p)) & 1), " T "(i))\n"                        \
  "                           if w*" WS " + i < C)\n"                                            \
  "    where p < bits, w < (C + " WS " - 1) / " WS ", i < min(" WS ", C)\n"

/* f32 -> i32 unipolar level (the same comparisons as bitpack_unipolar). */
static const char quantize_i32_text[] =
    "op quantize_unipolar_i32(data: f32[N, C, H, W], bits: int = 1)\n"
    "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"
    "  out[n, c, y, x] = min(select(data[n, c, y, x] * f32((1 << bits) - 1) >= 0.5, 1, 0)\n"
    "                        + select(data[n, c, y, x] * f32((1 << bits) - 1) >= 1.5, 1, 0)\n"
    "                        + select(data[n, c, y, x] * f32((1 << bits) - 1) >= 2.5, 1, 0), (1 << bits) - 1)\n";

/* quantize_unipolar_i32 writing the channels-last stream: f32 [N, C, H, W] to i32 [N, H, W, C]. */
static const char quantize_i32_nhwc_text[] =
    "op quantize_unipolar_i32_nhwc(data: f32[N, C, H, W], bits: int = 1)\n"
    "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"
    "  out[n, y, x, c] = min(select(data[n, c, y, x] * f32((1 << bits) - 1) >= 0.5, 1, 0)\n"
    "                        + select(data[n, c, y, x] * f32((1 << bits) - 1) >= 1.5, 1, 0)\n"
    "                        + select(data[n, c, y, x] * f32((1 << bits) - 1) >= 2.5, 1, 0), (1 << bits) - 1)\n";

/* The same from blocked f32 NCHW[X]c (ops/nchwc.h; C true channels, the block's tail past C
 * ignored): each pixel's X channels are contiguous in both tensors, so the blocked stem's
 * output is quantized channels-last with no transpose (models/passes/binary_channels_last.h). */
static const char quantize_i32_nchwc_nhwc_text[] =
    "op quantize_unipolar_i32_nchwc_nhwc(data: f32[N, CB, H, W, X], C: int, bits: int = 1)\n"
    "  assert bits >= 1 && bits <= 2, \"bits must be 1 or 2\"\n"
    BLOCKED_ASSERT
    "  out[n, y, x, c] = min(select(data[n, c / X, y, x, c % X] * f32((1 << bits) - 1) >= 0.5, 1, 0)\n"
    "                        + select(data[n, c / X, y, x, c % X] * f32((1 << bits) - 1) >= 1.5, 1, 0)\n"
    "                        + select(data[n, c / X, y, x, c % X] * f32((1 << bits) - 1) >= 2.5, 1, 0), (1 << bits) - 1)\n"
    "    where c < C\n";

/* Max-pool of 1- or 2-bit unipolar planes (no padding, size 2 or 3): the high plane of
 * the max is the OR of the high planes; the low bit of the max is set iff some tap has
 * the max's high bit and its low bit set: OR over taps of (lo & ~(hi_tap ^ hi)). */
#define PTAP(EXPR_OF, DY, DX)                                                                    \
  "select(" #DY " < size && " #DX " < size, " EXPR_OF(DY, DX) ", u64(0))"
#define PROW(EXPR_OF, DY) PTAP(EXPR_OF, DY, 0) " |\n    " PTAP(EXPR_OF, DY, 1) " |\n    " PTAP(EXPR_OF, DY, 2)
#define PWIN(EXPR_OF) PROW(EXPR_OF, 0) " |\n    " PROW(EXPR_OF, 1) " |\n    " PROW(EXPR_OF, 2)
#define PIX(P, DY, DX) "data[n, " P ", c, min(y*stride + " #DY ", H - 1), min(x*stride + " #DX ", W - 1)]"
#define HI_OF(DY, DX) PIX("B - 1", DY, DX)
#define LO_OF(DY, DX) "(" PIX("0", DY, DX) " & ~(" PIX("B - 1", DY, DX) " ^ hi[n, c, y, x]))"
static const char pool_planes64_text[] =
    "op maxpool_packed_planes64(data: u64[N, B, C, H, W], size: int = 2, stride: int = 2)\n"
    "  assert B >= 1 && B <= 2, \"1 or 2 bit planes\"\n"
    "  assert size >= 2 && size <= 3, \"size must be 2 or 3\"\n"
    "  assert stride >= 1 && H >= size && W >= size, \"stride >= 1 and the window inside the input\"\n"
    "  hi[n, c, y, x] =\n    " PWIN(HI_OF) "\n"
    "    where y < (H - size) / stride + 1, x < (W - size) / stride + 1\n"
    "  lo[n, c, y, x] =\n    " PWIN(LO_OF) "\n"
    "  out[n, p, c, y, x] = select(p == B - 1, hi[n, c, y, x], lo[n, c, y, x])\n"
    "    where p < B\n";

/* Channel concat of packed planes; the first part must fill its words (C1 = CA*64). */
static const char concat_packed64_text[] =
    "op concat_packed64(a: u64[N, B, CA, H, W], b: u64[N, B, CB, H, W], C1: int)\n"
    "  assert C1 == CA*64, \"the first part's channels must fill its words (C1 = 64*CA)\"\n"
    "  out[n, p, w, y, x] = select(w < CA, a[n, p, min(w, CA - 1), y, x], b[n, p, max(w - CA, 0), y, x])\n"
    "    where w < CA + CB\n";

/* Packed planes back to f32 levels q / (2^B - 1), for a full-precision last layer. */
static const char bitunpack64_text[] =
    "op bitunpack_unipolar64(data: u64[N, B, CW, H, W], C: int)\n"
    "  assert C >= 1 && C <= CW*64 && C > CW*64 - 64, \"C must need exactly CW words\"\n"
    "  q[n, c, y, x] = sum(p: i32((data[n, p, c / 64, y, x] >> u64(c % 64)) & u64(1)) << i32(p))\n"
    "    where c < C\n"
    "  out[n, c, y, x] = f32(q[n, c, y, x]) / f32((1 << B) - 1)\n";

/* bitunpack_unipolar64 writing blocked NCHW[X]c (ops/nchwc.h) for a blocked f32 consumer:
 * channel c in block c / X, lane c % X, the block's tail past C zero. X divides the word,
 * so a block's lanes share one word (cb*X / 64, in bounds for every block) at bit
 * offsets (cb*X) % 64 + lane. Same levels, bit for bit. */
static const char bitunpack64_nchwc_text[] =
    "op bitunpack_unipolar64_nchwc(data: u64[N, B, CW, H, W], C: int, X: int)\n"
    "  assert C >= 1 && C <= CW*64 && C > CW*64 - 64, \"C must need exactly CW words\"\n"
    "  assert X >= 1 && 64 % X == 0, \"the block (X channels) must divide the word\"\n"
    "  q[n, cb, y, x, cx] = sum(p: i32((data[n, p, cb*X / 64, y, x] >> u64(cb*X % 64 + cx)) & u64(1)) << i32(p))\n"
    "    where cb < (C + X - 1) / X, cx < X\n"
    "  out[n, cb, y, x, cx] = select(cb*X + cx < C, f32(q[n, cb, y, x, cx]) / f32((1 << B) - 1), 0.0)\n";

/* A 1x1 convolution of unipolar bit planes by table lookup (ops/binary/lutconv.h): the
 * convolution bitunpack_unipolar64_nchwc + conv2d would compute, out = act(sum over c of
 * weight[c, k] * q[c] / (2^B - 1) + bias[k]), with q[c] = sum over planes pl of bit c of
 * plane pl times 2^pl. Each group of 4 input channels indexes a table of the 16 sums of
 * its 4 weight rows ("Four Russians": Arlazarov, Dinic, Kronrod and Faradzev, 1970), so
 * an output takes B * CG / 4 lookups and adds instead of CG multiply-adds. Pixels are one
 * axis P = H * W (data u64[N, B, CW, P], output f32[N, KP / X, P, X], the blocked
 * NCHW[X]c bytes); weight f32[CG, KP] is the conv's [K, C, 1, 1] transposed, zero past C
 * and K (CG = C rounded up to 4, KP = K rounded up to X), bias f32[KP] zero past K, so
 * bits past C add nothing and lanes past K are 0. T2 holds the 4 sums of a pair of rows,
 * T the 16 of a group as one add of two pair sums. */
static const char lutconv64_text[] =
    "op lutconv1x1_unipolar64_nchwc(data: u64[N, B, CW, P], weight: f32[CG, KP], bias: f32[KP], K: int, X: int"
    TSL_NCHWC_ACT_PARAMS ")\n" TSL_NCHWC_ACT_ASSERT
    "  assert CG % 4 == 0 && CG <= CW*64, \"weight rows: C rounded up to a group of 4, within the words\"\n"
    "  assert X >= 1 && KP % X == 0 && K >= 1 && K <= KP && K > KP - X, \"weight columns: K rounded up to X\"\n"
    "  idx[n, pl, g, p] = i32((data[n, pl, g / 16, p] >> u64(g % 16 * 4)) & u64(15))\n"
    "    where g < CG / 4\n"
    "  T2[h, a, k] = select((a & 1) == 1, weight[h*2, k], 0.0) + select((a & 2) == 2, weight[h*2 + 1, k], 0.0)\n"
    "    where h < CG / 2, a < 4\n"
    "  T[g, m, k] = T2[g*2, m & 3, k] + T2[g*2 + 1, m >> 2, k]\n"
    "    where g < CG / 4, m < 16\n"
    "  acc[n, kb, p, kx] = sum(pl, g: T[g, idx[n, pl, g, p] & 15, kb*X + kx] * f32(1 << pl))\n"
    "    where kb < KP / X, kx < X\n"
    "  @tag(\"lutconv\")\n"
    "  out[n, kb, p, kx] = select(kb*X + kx < K, ("
    TSL_NCHWC_ACT("acc[n, kb, p, kx] / f32((1 << B) - 1) + bias[kb*X + kx]") "), 0.0)\n";

/* The taps of a window packed into words (a bit im2col): for planes of C <= 32 channels
 * (one u64 word per pixel, 64 - C bits of it zero) word j of output pixel (y, x) holds
 * the T = floor(64 / C) taps t = j*T .. j*T + T - 1 of the R x S window (tap t = r*S + s,
 * in row-major order), tap j*T + i at bits i*C .. i*C + C - 1, zero where the tap falls
 * in the padding or past the window. A bitserial conv of these words with the weight
 * taps packed the same way (models/passes/bit_im2col.h) is a 1x1 conv over
 * ceil(R*S / T) words per pixel instead of R*S: the same popcounts in fewer words. */
static const char bit_im2col64_text[] =
    "op bit_im2col_unipolar64(data: u64[N, B, CW, H, W], C: int, R: int, S: int, stride_h: int = 1,\n"
    "    stride_w: int = 1, pad_h: int = 0, pad_w: int = 0)\n"
    "  assert CW == 1 && C >= 1 && C <= 32, \"one word of at most 32 channels per pixel\"\n"
    "  assert R >= 1 && S >= 1 && stride_h >= 1 && stride_w >= 1 && pad_h >= 0 && pad_w >= 0, \"window, strides >= 1, pads >= 0\"\n"
    "  assert H + 2*pad_h >= R && W + 2*pad_w >= S, \"the window inside the padded input\"\n"
    "  out[n, b, j, y, x] = sum(r, s: shl(data[n, b, 0, y*stride_h + r - pad_h, x*stride_w + s - pad_w]\n"
    "      & (shl(u64(1), u64(C)) - u64(1)), u64((r*S + s) % (64/C) * C))\n"
    "      if (r*S + s) / (64/C) == j && y*stride_h + r >= pad_h && y*stride_h + r < H + pad_h\n"
    "         && x*stride_w + s >= pad_w && x*stride_w + s < W + pad_w)\n"
    "    where j < (R*S + 64/C - 1) / (64/C), y < (H + 2*pad_h - R) / stride_h + 1,\n"
    "          x < (W + 2*pad_w - S) / stride_w + 1, r < R, s < S\n";

/* Global average pool of the i32 residual stream, scaled back to float. */
static const char avgpool_i32_text[] =
    "op binary_global_avgpool_i32(data: i32[N, C, H, W], scale: float = 1.0)\n"
    "  s[n, c] = sum(y, x: data[n, c, y, x])\n"
    "  out[n, c, i, j] = f32(s[n, c]) * f32(scale) / f32(H * W)\n"
    "    where i < 1, j < 1\n";

/* binary_global_avgpool_i32 of a channels-last stream [N, H, W, C]; the output stays [N, C, 1, 1]. */
static const char avgpool_i32_nhwc_text[] =
    "op binary_global_avgpool_i32_nhwc(data: i32[N, H, W, C], scale: float = 1.0)\n"
    "  s[n, c] = sum(y, x: data[n, y, x, c])\n"
    "  out[n, c, i, j] = f32(s[n, c]) * f32(scale) / f32(H * W)\n"
    "    where i < 1, j < 1\n";

static const char uni_packed64_text[] = UNI_PACKED("64", "u64");
static const char uni_requant64_text[] = UNI_REQUANT("64", "u64");
static const char uni_requant_add64_text[] = UNI_REQUANT_ADD("64", "u64");
static const char pack_i32_64_text[] = PACK_I32("64", "u64");
static const char uni_requant64_nhwc_text[] = UNI_REQUANT_NHWC("64", "u64");
static const char uni_requant_add64_nhwc_text[] = UNI_REQUANT_ADD_NHWC("64", "u64");
static const char pack_i32_64_nhwc_text[] = PACK_I32_NHWC("64", "u64");

static const char pool_bipolar32_text[] = MAXPOOL("bipolar", "&", "~0", "32", "u32");
static const char pool_bipolar64_text[] = MAXPOOL("bipolar", "&", "~0", "64", "u64");
static const char pool_unipolar32_text[] = MAXPOOL("unipolar", "|", "0", "32", "u32");
static const char pool_unipolar64_text[] = MAXPOOL("unipolar", "|", "0", "64", "u64");

static const char bitpack_bipolar32_text[] = BITPACK_BIPOLAR("32", "u32");
static const char bitpack_bipolar64_text[] = BITPACK_BIPOLAR("64", "u64");
static const char bitpack_unipolar32_text[] = BITPACK_UNIPOLAR("32", "u32");
static const char bitpack_unipolar64_text[] = BITPACK_UNIPOLAR("64", "u64");
static const char bitpack_bipolar32_nchwc_text[] = BITPACK_BIPOLAR_NCHWC("32", "u32");
static const char bitpack_bipolar64_nchwc_text[] = BITPACK_BIPOLAR_NCHWC("64", "u64");
static const char bitpack_unipolar32_nchwc_text[] = BITPACK_UNIPOLAR_NCHWC("32", "u32");
static const char bitpack_unipolar64_nchwc_text[] = BITPACK_UNIPOLAR_NCHWC("64", "u64");
static const char conv_bipolar32_text[] = CONV_BIPOLAR("32", "u32");
static const char conv_bipolar64_text[] = CONV_BIPOLAR("64", "u64");
static const char conv_unipolar32_text[] = CONV_UNIPOLAR("32", "u32");
static const char conv_unipolar64_text[] = CONV_UNIPOLAR("64", "u64");
static const char conv_requant32_text[] = CONV_REQUANT("32", "u32");
static const char conv_requant64_text[] = CONV_REQUANT("64", "u64");
static const char conv_packed32_text[] = CONV_PACKED("32", "u32");
static const char conv_packed64_text[] = CONV_PACKED("64", "u64");
static const char dense_bipolar32_text[] = DENSE_BIPOLAR("32", "u32");
static const char dense_bipolar64_text[] = DENSE_BIPOLAR("64", "u64");

static const int rank4[] = {4}, rank5_4[] = {5, 4}, rank4x2[] = {4, 4}, rank4x4[] = {4, 4, 1, 1},
                 rank2x2[] = {2, 2};
static const int64_t act[] = {1, 64, 28, 28};
static const int64_t *const act_shapes[] = {act};
static const int64_t pk32[] = {1, 2, 28, 28}, wk32[] = {64, 2, 3, 3};
static const int64_t pk64[] = {1, 1, 28, 28}, wk64[] = {64, 1, 3, 3};
static const int64_t upk32[] = {1, 2, 2, 28, 28}, upk64[] = {1, 2, 1, 28, 28};
static const int64_t perk[] = {64};
static const int64_t *const conv32_shapes[] = {pk32, wk32, perk, perk};
static const int64_t *const conv64_shapes[] = {pk64, wk64, perk, perk};
static const int64_t *const uconv32_shapes[] = {upk32, wk32};
static const int64_t *const uconv64_shapes[] = {upk64, wk64};
static const int64_t dx32[] = {1, 16}, dw32[] = {10, 16}, dx64[] = {1, 8}, dw64[] = {10, 8};
static const int64_t *const dense32_shapes[] = {dx32, dw32};
static const int64_t *const dense64_shapes[] = {dx64, dw64};
static const int64_t *const pool32_shapes[] = {pk32};
static const int64_t *const pool64_shapes[] = {pk64};
static const tsl_dsl_param_value conv_params[] = {
    {"C", TSL_DSL_PARAM_INT, 64, 0.0}, {"pad_h", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_w", TSL_DSL_PARAM_INT, 1, 0.0}};
static const tsl_dsl_param_value two_bits[] = {{"bits", TSL_DSL_PARAM_INT, 2, 0.0}};
static const tsl_dsl_param_value dense_params[] = {{"K", TSL_DSL_PARAM_INT, 512, 0.0}};

static const int rank5x4[] = {5, 4, 1, 1}, rank5x5[] = {5, 4, 1, 1, 4}, rank5[] = {5}, rank55[] = {5, 5};
static const int64_t res_shape[] = {1, 64, 28, 28}, wcrsk64[] = {1, 3, 3, 64};
static const int64_t *const uni64_shapes[] = {upk64, wcrsk64, perk, perk, res_shape};
static const int64_t *const planes64_shapes[] = {upk64, upk64};
static const int64_t *const i32_act_shapes[] = {act};
static const int64_t res_nhwc_shape[] = {1, 28, 28, 64};
static const int64_t *const uni64_nhwc_shapes[] = {upk64, wcrsk64, perk, perk, res_nhwc_shape};
static const int64_t *const i32_nhwc_shapes[] = {res_nhwc_shape};
static const int64_t act_nchwc[] = {1, 4, 28, 28, 16};
static const int64_t *const act_nchwc_shapes[] = {act_nchwc};
static const tsl_dsl_param_value c64_param[] = {{"C", TSL_DSL_PARAM_INT, 64, 0.0}};
static const tsl_dsl_param_value c64_x_params[] = {{"C", TSL_DSL_PARAM_INT, 64, 0.0}, {"X", TSL_DSL_PARAM_INT, 16, 0.0}};
static const tsl_dsl_param_value c1_param[] = {{"C1", TSL_DSL_PARAM_INT, 64, 0.0}};
static const int rank4_2_1[] = {4, 2, 1};
static const int64_t lut_data[] = {1, 2, 2, 196}, lut_weight[] = {100, 48}, lut_bias[] = {48};
static const int64_t *const lut_shapes[] = {lut_data, lut_weight, lut_bias};
static const tsl_dsl_param_value lut_params[] = {{"K", TSL_DSL_PARAM_INT, 40, 0.0}, {"X", TSL_DSL_PARAM_INT, 16, 0.0}};

static const int64_t im2col_data[] = {1, 2, 1, 13, 11};
static const int64_t *const im2col_shapes[] = {im2col_data};
static const tsl_dsl_param_value im2col_params[] = {
    {"C", TSL_DSL_PARAM_INT, 20, 0.0},     {"R", TSL_DSL_PARAM_INT, 3, 0.0},      {"S", TSL_DSL_PARAM_INT, 3, 0.0},
    {"stride_h", TSL_DSL_PARAM_INT, 2, 0.0}, {"pad_h", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_w", TSL_DSL_PARAM_INT, 1, 0.0}};

static const tsl_op_source family[] = {
    {"bitpack_bipolar32", "pack the sign of NCHW f32 into u32 words along C (x < 0 -> bit 1 = -1)",
     bitpack_bipolar32_text, {1, rank4, act_shapes, 0, NULL}},
    {"bitpack_bipolar64", "pack the sign of NCHW f32 into u64 words along C (x < 0 -> bit 1 = -1)",
     bitpack_bipolar64_text, {1, rank4, act_shapes, 0, NULL}},
    {"bitpack_unipolar32", "quantize NCHW f32 in [0,1] to 1/2 bits, bit planes in u32 words along C",
     bitpack_unipolar32_text, {1, rank4, act_shapes, 1, two_bits}},
    {"bitpack_unipolar64", "quantize NCHW f32 in [0,1] to 1/2 bits, bit planes in u64 words along C",
     bitpack_unipolar64_text, {1, rank4, act_shapes, 1, two_bits}},
    {"bitpack_bipolar32_nchwc", "bitpack_bipolar32 of blocked f32 NCHW[x]c (C true channels)",
     bitpack_bipolar32_nchwc_text, {1, rank5, act_nchwc_shapes, 1, c64_param}},
    {"bitpack_bipolar64_nchwc", "bitpack_bipolar64 of blocked f32 NCHW[x]c (C true channels)",
     bitpack_bipolar64_nchwc_text, {1, rank5, act_nchwc_shapes, 1, c64_param}},
    {"bitpack_unipolar32_nchwc", "bitpack_unipolar32 of blocked f32 NCHW[x]c (C true channels)",
     bitpack_unipolar32_nchwc_text, {1, rank5, act_nchwc_shapes, 1, c64_param}},
    {"bitpack_unipolar64_nchwc", "bitpack_unipolar64 of blocked f32 NCHW[x]c (C true channels)",
     bitpack_unipolar64_nchwc_text, {1, rank5, act_nchwc_shapes, 1, c64_param}},
    {"bitserial_conv2d_bipolar32", "bitserial conv2d, 1-bit bipolar data and weights in u32 words (xor+popcount)",
     conv_bipolar32_text, {2, rank4x2, conv32_shapes, 3, conv_params}},
    {"bitserial_conv2d_bipolar64", "bitserial conv2d, 1-bit bipolar data and weights in u64 words (xor+popcount)",
     conv_bipolar64_text, {2, rank4x2, conv64_shapes, 3, conv_params}},
    {"bitserial_conv2d_unipolar32", "bitserial conv2d, N-bit unipolar data, 1-bit bipolar weights, u32 (and+popcount)",
     conv_unipolar32_text, {2, rank5_4, uconv32_shapes, 3, conv_params}},
    {"bitserial_conv2d_unipolar64", "bitserial conv2d, N-bit unipolar data, 1-bit bipolar weights, u64 (and+popcount)",
     conv_unipolar64_text, {2, rank5_4, uconv64_shapes, 3, conv_params}},
    {"bitserial_conv2d_bipolar32_requant", "bipolar bitserial conv2d + shift/add glue, clipped to [0, qmax] (u32)",
     conv_requant32_text, {4, rank4x4, conv32_shapes, 3, conv_params}},
    {"bitserial_conv2d_bipolar64_requant", "bipolar bitserial conv2d + shift/add glue, clipped to [0, qmax] (u64)",
     conv_requant64_text, {4, rank4x4, conv64_shapes, 3, conv_params}},
    {"bitserial_conv2d_bipolar32_packed", "bipolar bitserial conv2d + glue + bitpack of the output (u32)",
     conv_packed32_text, {4, rank4x4, conv32_shapes, 3, conv_params}},
    {"bitserial_conv2d_bipolar64_packed", "bipolar bitserial conv2d + glue + bitpack of the output (u64)",
     conv_packed64_text, {4, rank4x4, conv64_shapes, 3, conv_params}},
    {"binary_dense_bipolar32", "binary dense, 1-bit bipolar data and weights in u32 words", dense_bipolar32_text,
     {2, rank2x2, dense32_shapes, 1, dense_params}},
    {"binary_dense_bipolar64", "binary dense, 1-bit bipolar data and weights in u64 words", dense_bipolar64_text,
     {2, rank2x2, dense64_shapes, 1, dense_params}},
    {"maxpool_packed_bipolar32", "max-pool (size 2/3, no padding) on packed bipolar u32 words: bitwise AND",
     pool_bipolar32_text, {1, rank4, pool32_shapes, 0, NULL}},
    {"maxpool_packed_bipolar64", "max-pool (size 2/3, no padding) on packed bipolar u64 words: bitwise AND",
     pool_bipolar64_text, {1, rank4, pool64_shapes, 0, NULL}},
    {"maxpool_packed_unipolar32", "max-pool (size 2/3, no padding) on packed unipolar 1-bit u32 words: bitwise OR",
     pool_unipolar32_text, {1, rank4, pool32_shapes, 0, NULL}},
    {"maxpool_packed_unipolar64", "max-pool (size 2/3, no padding) on packed unipolar 1-bit u64 words: bitwise OR",
     pool_unipolar64_text, {1, rank4, pool64_shapes, 0, NULL}},
    {"bitserial_conv2d_unipolar64_packed", "unipolar N-bit data, bipolar weights: conv + shift/add glue + bitpack (u64)",
     uni_packed64_text, {4, rank5x4, uni64_shapes, 3, conv_params}},
    {"bitserial_conv2d_unipolar64_requant", "unipolar N-bit data, bipolar weights: conv + glue clipped to [0, qmax] (u64)",
     uni_requant64_text, {4, rank5x4, uni64_shapes, 3, conv_params}},
    {"bitserial_conv2d_unipolar64_requant_add", "unipolar bitserial conv + glue + i32 residual, clipped to [0, qmax]",
     uni_requant_add64_text, {5, rank5x5, uni64_shapes, 3, conv_params}},
    {"bitserial_conv2d_unipolar64_requant_nhwc", "bitserial_conv2d_unipolar64_requant with the i32 output [N, OH, OW, K]",
     uni_requant64_nhwc_text, {4, rank5x4, uni64_nhwc_shapes, 3, conv_params}},
    {"bitserial_conv2d_unipolar64_requant_add_nhwc", "bitserial_conv2d_unipolar64_requant_add with res and output [N, OH, OW, K]",
     uni_requant_add64_nhwc_text, {5, rank5x5, uni64_nhwc_shapes, 3, conv_params}},
    {"bitpack_unipolar64_i32_nhwc", "bitpack_unipolar64_i32 of channels-last i32 levels [N, H, W, C]",
     pack_i32_64_nhwc_text, {1, rank4, i32_nhwc_shapes, 0, NULL}},
    {"quantize_unipolar_i32_nhwc", "quantize_unipolar_i32 writing channels-last i32 levels [N, H, W, C]",
     quantize_i32_nhwc_text, {1, rank4, act_shapes, 0, NULL}},
    {"quantize_unipolar_i32_nchwc_nhwc", "quantize_unipolar_i32 of blocked f32 NCHW[x]c, writing channels-last i32 levels",
     quantize_i32_nchwc_nhwc_text, {1, rank5, act_nchwc_shapes, 1, c64_param}},
    {"binary_global_avgpool_i32_nhwc", "binary_global_avgpool_i32 of channels-last i32 [N, H, W, C]",
     avgpool_i32_nhwc_text, {1, rank4, i32_nhwc_shapes, 0, NULL}},
    {"bitpack_unipolar64_i32", "pack i32 levels clip(x >> shift, 0, 2^bits - 1) into u64 bit planes along C",
     pack_i32_64_text, {1, rank4, i32_act_shapes, 0, NULL}},
    {"quantize_unipolar_i32", "f32 NCHW to i32 unipolar levels (1 or 2 bits), bitpack_unipolar's rounding",
     quantize_i32_text, {1, rank4, act_shapes, 0, NULL}},
    {"maxpool_packed_planes64", "max-pool (size 2/3, no padding) of 1- or 2-bit unipolar u64 bit planes, exact",
     pool_planes64_text, {1, rank5, planes64_shapes, 0, NULL}},
    {"concat_packed64", "channel concat of u64 bit planes (first part word-aligned)", concat_packed64_text,
     {2, rank55, planes64_shapes, 1, c1_param}},
    {"bitunpack_unipolar64", "u64 unipolar bit planes to f32 levels q / (2^B - 1)", bitunpack64_text,
     {1, rank5, planes64_shapes, 1, c64_param}},
    {"bitunpack_unipolar64_nchwc", "bitunpack_unipolar64 writing blocked f32 NCHW[x]c (the tail past C zero)",
     bitunpack64_nchwc_text, {1, rank5, planes64_shapes, 2, c64_x_params}},
    {"bit_im2col_unipolar64", "the R x S window's taps of <= 32-channel u64 bit planes packed floor(64/C) to a word",
     bit_im2col64_text, {1, rank5, im2col_shapes, 6, im2col_params}},
    {"lutconv1x1_unipolar64_nchwc", "1x1 conv of unipolar u64 bit planes by 4-bit table lookup, blocked f32 output",
     lutconv64_text, {3, rank4_2_1, lut_shapes, 2, lut_params}},
    {"binary_global_avgpool_i32", "global average pool of i32 NCHW to f32 [N, C, 1, 1], times scale",
     avgpool_i32_text, {1, rank4, i32_act_shapes, 0, NULL}},
};

const tsl_op_source *tsl_ops_binary_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}
