/* tessel — binarized CNNs after Riptide (Fromm et al., "Riptide: Fast End-to-End
 * Binarized Neural Networks", MLSys 2020): squeezenet1_1 and resnet18 with 1-bit
 * bipolar weights and 1- or 2-bit unipolar activations between binary convolutions,
 * full-precision first convolution (the stem) and last layer, fused glue (shift +
 * fixed-point add) and bitpack fusion between binary convs, packed max-pool. Seeded
 * weights; the operators are tsl.Binary nodes (models/node_kernels_binary.h) over the
 * binary family of ops/binary/binary.c (docs/binary.md has the formulas).
 *
 * Zoo names (tsl_zoo_build accepts them too): "bresnet18", "bsqueezenet1_1"
 * (alias "bsqueezenet") with 1-bit activations; "bresnet18_a2", "bsqueezenet1_1_a2"
 * with 2-bit activations. Input "input" f32 [1, 3, 224, 224], output "output" f32
 * [1, 1000], as the full-precision zoo models.
 *
 * bresnet18: stem conv1 7x7/2 + BN + ReLU + max-pool 3x3/2 (f32), quantized once to
 * i32 levels (quantize_unipolar_i32): that is the residual stream, i32 [N, C, H, W].
 * Each basic block packs the stream (bitpack_unipolar64_i32: levels clip(s >> sh, 0, L),
 * sh = 0 for the first block, 1 after), conv1 is bitserial_conv2d_unipolar64_packed (glue
 * and packing fused: it emits the next conv's bit planes), conv2 is
 * bitserial_conv2d_unipolar64_requant_add (glue plus the shortcut, clipped to [0, 4L]);
 * a downsample shortcut is a 1x1/2 bitserial_conv2d_unipolar64_requant of the packed
 * block input. Then binary_global_avgpool_i32 (scale 1/L) and the f32 fc layer.
 *
 * bsqueezenet1_1: stem features.0 conv 3x3/2 + ReLU + max-pool 3x3/2 (f32), packed once
 * (bitpack_unipolar64); every Fire module's squeeze and expand convs are
 * bitserial_conv2d_unipolar64_packed, the expands joined by concat_packed64; the two
 * inner max-pools run on the bit planes (maxpool_packed_planes64, floor mode: the same
 * sizes as torchvision's ceil mode at 224); bitunpack_unipolar64 turns the last Fire's
 * planes back into f32 levels for the f32 classifier (conv 1x1 -> 1000, ReLU, global
 * average pool).
 *
 * Glue constants (seeded, chosen so that levels neither die out nor saturate): per
 * output channel shift = round(log2(sigma / spread)) clamped to [0, 20], with sigma =
 * sqrt(C*R*S*L_in^2/2) the spread of a dot product of random +-1 weights with random
 * levels, and bias = centre * 2^shift + uniform noise of +-2^shift/4, so that
 * (dot + bias) >> shift has about that spread around the centre: spread L/2 around
 * L/2 + 1/2 for a packed output, spread L around L for a downsample, around 0 for the
 * conv that adds the shortcut. Weights are uniform random bits (channel pad bits 0).
 */
#ifndef TESSEL_MODELS_ZOO_BINARY_H
#define TESSEL_MODELS_ZOO_BINARY_H

#include <stdbool.h>
#include <stdint.h>

#include "models/graph.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_zoo_binary_options {
  const char *arch; /* "bresnet18" or "bsqueezenet1_1" */
  int abits;        /* activation bits between binary convs: 1 or 2 */
  int width_div;    /* every channel count divided by this (>= 1; bresnet18 only: 1, 2, 4, 8) */
  int64_t image;    /* input height = width (>= 32; 224 for the zoo models) */
  bool no_stem;     /* false: as above. true: no f32 stem; the input is the stem's output
                       f32 [1, C0, H0, H0] (C0 = 64/width_div, H0 the stem's output side:
                       56 for bresnet18 and 55 for bsqueezenet1_1 at 224) */
  uint64_t seed;
  bool no_fusion;   /* without bitpack fusion (for comparison): each conv that would emit
                       packed planes emits its clipped i32 levels (..._requant, qmax = L)
                       and a separate bitpack_unipolar64_i32 packs them; same results */
} tsl_zoo_binary_options;

/* Builds the binarized model described by *o. *out set only on success (tsl_graph_free).
 * Errors: TSL_ERR_INVALID (NULL arguments, abits not 1/2, width_div not dividing the
 * channels, image too small), TSL_ERR_NOT_FOUND (unknown arch), TSL_ERR_NOMEM. */
tsl_status tsl_zoo_binary_build_ex(const tsl_zoo_binary_options *o, tsl_graph **out);

/* Whether `name` is one of the binarized zoo names above (aliases included). */
bool tsl_zoo_binary_has(const char *name);

/* Builds zoo model `name` (the names above) at full width, 224 x 224, from `seed`.
 * Errors: TSL_ERR_NOT_FOUND (not a binarized name), those of tsl_zoo_binary_build_ex. */
tsl_status tsl_zoo_binary_build(const char *name, uint64_t seed, tsl_graph **out);

#ifdef __cplusplus
}
#endif
#endif
