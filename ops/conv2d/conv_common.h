/* Internal to ops/conv2d: what the NCHW[x]c convolution templates (direct,
 * grouped, depthwise, im2col) share — a conv program's geometry (from its parameters,
 * or read back from its stages), the register-tile loop nest with its fused epilogue, and kernel names.
 *
 * The conv programs of ops/conv2d (conv2d_nchwc.c, depthwise.c, im2col.c) have the stages
 *   padded  (optional) the spatially zero-padded input, data[n, cb, y - pad_top, ...]
 *   conv    the reduction, tagged with the family's tag, output [n, kb, y, x, k] (or
 *           [n, kb, p, k] with the pixels flattened: 1x1 GEMM, im2col)
 *   out     (optional) the epilogue act(conv + bias (+ residual)), the program's output
 * and the data placeholder is the program's first input, the weight its second (pooling
 * programs have the same stages, with the reduction tagged "pool2d" and no weight).
 */
#ifndef TESSEL_OPS_CONV2D_CONV_COMMON_H
#define TESSEL_OPS_CONV2D_CONV_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/te.h"
#include "ops/tpl_util.h"

typedef struct tpl_conv_geometry {
  const tsl_te_op *conv;   /* the reduction stage (tagged) */
  const tsl_te_op *padded; /* the padding stage, or NULL */
  const tsl_te_op *out;    /* the program's output op (== conv without epilogue) */
  const tsl_buffer *data, *weight; /* weight NULL for a one-input op (pooling) */
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t R, S; /* kernel extents (reduction axes named r and s; 1 when absent) */
  int64_t X;    /* input lanes: the data's last extent */
  int64_t Y;    /* output lanes: the conv's last axis extent */
  int64_t OH, OW; /* output extents (flat: OH = pixels, OW = 1) */
  bool flat;       /* the conv's pixels are one axis: [n, kb, p, k] (1x1 GEMM, im2col) */
  bool has_epilogue, has_bias, has_residual;
  const char *act; /* "" none, "relu", "relu6", "clip" (read from the epilogue) */
} tpl_conv_geometry;

/* Reads the geometry of p, whose reduction stage carries `tag`. Strides, dilations,
 * pad_top / pad_left and the activation are the program's parameters (tsl_te_program.params,
 * read by tsl_conv2d_layer_read_params) when it states them, as every window operator
 * of the library does; pad_bottom / pad_right are what the padding stage holds below /
 * right of the input (its extents), or for im2col what the last output row / column
 * reaches. Fallback for a program without those parameters (a conv written directly in
 * the DSL): strides and dilations are the coefficients of the output and kernel axes in
 * the conv's read of `padded` (or of the data), paddings come from the padding stage's
 * read of the data, the activation from the epilogue's expression. Errors
 * (TSL_ERR_INVALID, prefixed `who`): no stage tagged `tag`, fewer than two inputs, a conv
 * that is not [n, kb, y, x, k], im2col parameters that do not give its pixel count. */
tsl_status tpl_conv_geometry_of(const tsl_te_program *p, const char *tag, const char *who, tpl_conv_geometry *g);

/* Whether the conv's read of its input depends on the output lane k (a gather when
 * the lanes are vectorized: grouped convs whose groups split a vector). False when every
 * lane reads the same value (a broadcast), e.g. groups = 1. */
bool tpl_conv_input_varies_with_lane(const tpl_conv_geometry *g);

/* How many distinct input channel blocks the oc consecutive output blocks of a register
 * tile read at one reduction step, on average over the tiles kb = 0, oc, 2*oc, ...: 1
 * when the block read does not depend on the output block kb (a dense conv: the tile's
 * blocks share every broadcast input value); for a block-diagonal grouped conv, whose
 * output blocks reduce over bands of their own, the bands that differ (blocks of one
 * group share theirs). Read off the conv's read of its input (evaluated at each kb). */
double tpl_conv_tile_input_blocks(const tpl_conv_geometry *g, int64_t oc);

/* The kernel name of STYLE.md for g (an im2col program names the bottom/right padding
 * its output reaches: rows a floor division drops are not part of it): "<prefix>_nchw<X>c_<R>x<S>_s<..>_p<..>[_d<..>]_f32
 * [_<variant>][_bias][_add][_<act>]__<hash>", e.g. conv2d_nchw8c_3x3_s1_p1_f32_bias_relu__
 * 1a2b3c4d. Strides, paddings and dilations print one value when all are equal, else
 * each (s2x1, p0_1_0_2 as top_left_bottom_right). Written to buf (n bytes); returns buf. */
const char *tpl_conv_kernel_name(const tpl_conv_geometry *g, const char *prefix, const char *variant, uint64_t hash,
                                 char *buf, size_t n);

typedef enum tpl_pad_mode {
  TPL_PAD_INLINE = 0, /* compute_inline(padded): guarded loads in the conv */
  TPL_PAD_ROOT = 1,   /* a parallel, vectorized copy of the whole input before the conv */
  TPL_PAD_OUTER = 2   /* a vectorized copy of the rows one iteration of the output's outer
                         (parallel) loop reads, computed in that loop: L1/L2-resident, but
                         recomputed per iteration (halo rows, and every output block when
                         the conv reduces over channel blocks) */
} tpl_pad_mode;

/* The register-tile loop nest (conv2d_nchwc.h describes it) over a conv whose output
 * axes are (n, kb, y, x, k) — or (n, kb, p, k), the pixel axis tiled like x — and whose
 * reduction axes are reduce_names (in loop order). */
typedef struct tpl_conv_tile {
  int64_t oc_blocks, oh_block, ow_block; /* tile: kb, y, x extents (>= 1) */
  int64_t ic_chunk;                      /* chunk_axis split (>= its extent: none) */
  bool oc_major;                         /* kb.inner outside y.inner/x.inner in the tile */
  bool parallel;
  int loop_order;                        /* 0: kb.outer before y.outer; 1: after */
  const char *reduce_names[4];           /* reduction axes, outermost first */
  int nreduce;
  const char *chunk_axis;                /* NULL: no input-channel chunks */
  const char *unroll_names[2];           /* reduction axes to unroll (NULL: none) */
  int64_t KB, OH, OW, CB;                /* extents of kb, y, x and the chunk axis (a
                                            [n, kb, p, k] conv: OW = the pixels, OH = 1) */
  tpl_pad_mode pad_stage;                /* what to do with stage "padded" if present */
  bool pad_vector;                       /* vectorize the padded copy's last axis */
  bool vector_inputs;                    /* depthwise: the k lanes also index the input */
  bool epilogue_pass;                    /* the epilogue outside the register tile (below) */
} tpl_conv_tile;

/* Applies the loop nest to the builder's schedule of p (stages found as in
 * tpl_conv_geometry_of with `tag`): cache_write of the conv when it is the output,
 * compute_at of the accumulating stage into the output's tile (or row, with chunks),
 * the padding stage inlined or copied. Errors go to b.
 *
 * With epilogue_pass (taken when p has an epilogue stage, blocked lanes Y > 1 and no
 * input-channel chunks), the epilogue leaves the register tile: the tile's accumulators
 * are stored as they are into a row buffer (cache_read of the conv: one row of tiles,
 * oc_blocks x oh_block x OW x Y floats, L1-resident), computed per iteration of the
 * output's outer (parallel) loops, and the epilogue (bias, residual, activation) is a
 * loop over that row's columns, k vectorized, reading it back. In the tile the
 * epilogue's constants and temporaries would otherwise share the vector registers with
 * the accumulators, and LLVM interleaves the unrolled window of one column with the
 * epilogue of the previous one: an exp-based function (Swish) after a 12-column
 * depthwise tile kept the 9 weights and the accumulators on the stack (AVX2). */
void tpl_conv_tile_schedule(tpl_builder *b, const tsl_te_program *p, const char *tag, const tpl_conv_tile *t);

/* Whether g's epilogue stage calls exp, log, tanh or erf (a transcendental activation,
 * ops/nn/activation.h: Sigmoid, Swish, Gelu, Tanh, Elu, ...): the epilogues worth
 * epilogue_pass. False without an epilogue stage. */
bool tpl_conv_epilogue_transcendental(const tpl_conv_geometry *g);

/* ---- the register tile as one knob ------------------------------------------------
 *
 * The templates' spaces hold the register tile (ow_block x oh_block x oc_blocks) as ONE
 * knob "tile" listing only the tiles that fit, rather than three independent knobs:
 * the cartesian product of independent ranges is mostly tiles whose accumulators do not
 * fit the vector registers (they spill) or whose unrolled copies exceed lowering's limit
 * (TSL_UNROLL_MAX_ITERATIONS; such configs failed to compile), so every point of the
 * space now compiles. The value encodes the tile readably: oc_blocks * 10000 +
 * oh_block * 100 + ow_block (each part 1..99), e.g. tile=20106 is 2 channel blocks x 1
 * row x 6 columns. */
typedef struct tpl_tile_limits {
  int64_t max_ow, max_oh, max_oc; /* candidates 1..max of each part (clamp to extents) */
  int64_t acc_regs;               /* vector registers of one accumulator (>= 1) */
  int64_t lanes;                  /* native f32 lanes (for vector_x) */
  bool vector_x;                  /* the tile's columns are the vector (one-lane layout,
                                     plain NCHW): ow_block lanes per accumulator */
  int64_t max_acc;                /* the most accumulator registers a tile may take */
  int64_t unroll;                 /* copies the other unrolled loops of the stage may add
                                     (the product of the space's unroll options, >= 1) */
} tpl_tile_limits;

int64_t tpl_tile_value(int64_t ow, int64_t oh, int64_t oc);
/* The parts of a tile value (values outside the encoding give parts clamped to >= 1). */
void tpl_tile_parts(int64_t v, int64_t *ow, int64_t *oh, int64_t *oc);
/* Accumulator registers and unrolled body copies of a tile (equal: a vector wider than
 * the target's is unrolled into native ones). */
int64_t tpl_tile_registers(const tpl_tile_limits *l, int64_t ow, int64_t oh, int64_t oc);
int64_t tpl_tile_copies(const tpl_tile_limits *l, int64_t ow, int64_t oh, int64_t oc);
/* Whether a tile fits: registers <= max_acc and copies * unroll within lowering's limit. */
bool tpl_tile_fits(const tpl_tile_limits *l, int64_t ow, int64_t oh, int64_t oc);
/* Whether `copies` unrolled copies of a body stay within lowering's limit. */
bool tpl_unroll_fits(int64_t copies);
/* Adds knob "tile" (TSL_KNOB_SPLIT) to s: every fitting tile (the 63 with the most
 * accumulators when more fit), plus dflt (a tile value). Returns the space's status. */
tsl_status tpl_tile_knob(tsl_config_space *s, const tpl_tile_limits *l, int64_t dflt);

/* The knobs the window templates (depthwise, grouped, windowed pooling) share, over an
 * output [N, KB, OH, OW, Y] with an R x S window: "tile" (accumulators within the vector
 * registers less two: a weight and an input), "unroll_kernel" (offered when the default
 * tile with the window unrolled stays within lowering's limit), "pad_mode" (0..2, when
 * the op pads). The defaults d_* must be legal (tpl_window_unroll_fits). */
typedef struct tpl_window_dims {
  int64_t OH, OW, KB, Y, R, S;
  bool padded;
} tpl_window_dims;

tsl_status tpl_window_knobs(tsl_config_space *s, const tsl_target *t, const tpl_window_dims *w, int64_t d_ow,
                            int64_t d_oh, int64_t d_oc, bool d_unroll, int d_pad);
/* The loop nest of a window template (depthwise, grouped, windowed pooling) over the
 * output of w: an ow x oh x oc tile, the reduction over the window (r, s) after
 * `first_reduce` when not NULL (grouped's ci), the window unrolled with `unroll`, the
 * padding stage as pad_mode when w pads (else inlined), vectorized copies. */
tpl_conv_tile tpl_window_tile(const tpl_window_dims *w, int64_t ow, int64_t oh, int64_t oc, bool unroll, int pad_mode,
                              int loop_order, bool parallel, const char *first_reduce);

/* FNV-1a over the knob values v[0..n): the hash part of kernel names. */
uint64_t tpl_knob_hash(int n, const int64_t *v);

/* TSL_ERR_INVALID (prefixed who) naming the knob when a tile part is < 1 or pad_mode is
 * outside 0..2: the checks the tile templates share. */
tsl_status tpl_tile_knobs_check(const char *who, int64_t ow, int64_t oh, int64_t oc, int pad_mode);

/* Whether a tile with the R x S window unrolled stays within lowering's unroll limit. */
bool tpl_window_unroll_fits(const tsl_target *t, const tpl_window_dims *w, int64_t ow, int64_t oh, int64_t oc);
/* Reads those knobs of config c over the defaults already in *ow.. *pad. */
void tpl_window_read(const tsl_config_space *s, const tsl_config *c, int64_t *ow, int64_t *oh, int64_t *oc,
                     bool *unroll, int *pad);

/* Schedules a stage computed at the root as a plain elementwise pass: its leading
 * axes (all but the last) fused and parallel when `parallel`, the last vectorized when
 * its extent is > 1 and <= 64 (split by `lanes` when longer). */
void tpl_elementwise_root(tpl_builder *b, const char *stage, int64_t lanes, bool parallel);

#endif
