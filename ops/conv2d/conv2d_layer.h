/* The one description of a 2-D convolution layer that every stage passes along unchanged
 * (graph compile -> algorithm choice -> family workload key -> operator instantiation ->
 * schedule templates), and the sliding-window output formula every window operator uses
 * (conv, pooling, shape inference, Winograd, im2col, ONNX auto_pad).
 *
 * A layer is stated the way a graph states it: NCHW semantics, OIHW weights K x C/groups x
 * R x S, groups, a fused epilogue out = act(conv + bias (+ residual)), plus the block x of
 * the NCHW[x]c layout the graph gives its activations (ops/nchwc.h). Algorithm-specific
 * choices (Winograd's tile m, im2col's pack_rows) are not part of it: each algorithm takes
 * them as its own argument.
 *
 * The layer's DSL parameters (the names every NCHW[x]c conv operator declares:
 * stride_h/w, pad_top/left/bottom/right, dilation_h/w, act, clip_min/max, groups,
 * out_channels) have one writer (tsl_conv2d_layer_params) and one reader
 * (tsl_conv2d_layer_read_params): the family workload key, the operator instantiation and
 * the templates (which read an instantiated program's parameters, dsl/te.h) all go
 * through them.
 */
#ifndef TESSEL_OPS_CONV2D_CONV2D_LAYER_H
#define TESSEL_OPS_CONV2D_CONV2D_LAYER_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/parser.h"
#include "ops/epilogue.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The activation of the fused epilogue (the DSL operators' `act` parameter). */
typedef enum tsl_conv2d_act {
  TSL_CONV2D_ACT_NONE = 0,
  TSL_CONV2D_ACT_RELU = 1, /* max(v, 0) */
  TSL_CONV2D_ACT_CLIP = 2  /* min(max(v, clip_min), clip_max); relu6 is clip 0..6 */
} tsl_conv2d_act;

/* A convolution layer. Shapes NCHW, weights K x C/groups x R x S; pads in input pixels. */
typedef struct tsl_conv2d_layer {
  int64_t N, C, H, W, K, R, S;
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t dilation_h, dilation_w;
  int64_t groups;
  int act;           /* tsl_conv2d_act: 0 none, 1 relu, 2 clip [clip_min, clip_max] */
  double clip_min, clip_max;
  bool has_residual; /* out = act(conv + bias + residual) */
  bool has_channel_scale; /* the data scaled per image and input channel first: conv(data *
                             scale, w) with scale f32[N, C/x, x] the last input (the GEMM 1x1
                             algorithm only: the _scale operators of ops/conv2d/conv2d_nchwc.c);
                             not part of a family workload (the layer's records are the
                             unscaled layer's, the schedule the same) */
  int64_t block;     /* x: the NCHW[x]c block of data and output, >= 1 (1: plain NCHW) */
  tsl_epilogue epilogue; /* with act 0: out = f(conv + bias [+ residual]), f a function of
                            the activation table (ops/epilogue.h); fn NULL for none. Its
                            channels are set by tsl_conv2d_layer_epilogue. */
  int64_t data_block; /* the block of the data alone when it differs from `block`: 1 = the
                         data is a plain NCHW tensor f32[N, C, H, W] (stored as f32[N, C,
                         H, W, 1]) that the conv reads directly, writing NCHW[x]c (a stem
                         conv reading a graph input: no layout transform before it; the
                         grouped algorithm only, tsl_conv2d_reads_plain_data); 0 = block */
} tsl_conv2d_layer;

/* The output extent of a sliding window along one axis: windows of `kernel` taps
 * `dilation` apart, `stride` apart, over an input of `in` elements with pad_before /
 * pad_after zeros around it. floor((in + pads - dilation*(kernel-1) - 1) / stride) + 1,
 * or with ceil_mode the ceiling (one more, partial window when the whole ones leave
 * padded elements uncovered), less that window when it would start at or past
 * in + pad_before (PyTorch's and ONNX Runtime's rule; it drops one window only, so a
 * trailing padding of a stride or more gives ceil mode fewer windows than floor mode).
 * Floor-mode windows may lie wholly in a trailing padding (zeros, as ONNX pads); shape
 * inference refuses such pooling windows. Errors (TSL_ERR_INVALID, *out untouched): in, kernel, stride or dilation < 1,
 * a negative pad, a window larger than the padded input, a size whose arithmetic
 * overflows int64 (refused, never wrapped). */
tsl_status tsl_window_out_extent(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                                 int64_t dilation, bool ceil_mode, int64_t *out);

/* ONNX auto_pad SAME_UPPER (upper = true) / SAME_LOWER: the pads that give an output of
 * ceil(in / stride) elements; the total (out - 1) * stride + dilation*(kernel-1) + 1 - in
 * (0 when negative) split in two halves, the odd element at the end (UPPER) or at the
 * beginning (LOWER). Errors (TSL_ERR_INVALID): in, kernel, stride or dilation < 1,
 * overflow. */
tsl_status tsl_window_same_pads(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, bool upper,
                                int64_t *pad_before, int64_t *pad_after);

/* Output extents of the layer (floor mode): tsl_window_out_extent of each axis, 0 when the
 * layer is malformed (tsl_conv2d_layer_check says why). */
int64_t tsl_conv2d_layer_out_h(const tsl_conv2d_layer *l);
int64_t tsl_conv2d_layer_out_w(const tsl_conv2d_layer *l);

/* 2 * N * K * OH * OW * (C / groups) * R * S. */
double tsl_conv2d_layer_flops(const tsl_conv2d_layer *l);

/* The block the layer's data is stored in: data_block when set, else block. */
int64_t tsl_conv2d_layer_data_block(const tsl_conv2d_layer *l);

/* TSL_OK when the layer is well formed: sizes >= 1, strides and dilations >= 1, paddings
 * >= 0, C and K multiples of groups, act in 0..2 (0 with an epilogue function), block
 * >= 1, data_block 0, 1 or block, a window that fits the padded input on both axes (tsl_window_out_extent).
 * Otherwise TSL_ERR_INVALID saying what. */
tsl_status tsl_conv2d_layer_check(const tsl_conv2d_layer *l);

/* l's epilogue with `channels` K when K does not fill its blocks (the padding lanes'
 * guard, ops/epilogue.h), else 0: what every algorithm's program and the family
 * workload carry. */
tsl_epilogue tsl_conv2d_layer_epilogue(const tsl_conv2d_layer *l);

/* Which parameters tsl_conv2d_layer_params writes (bits). */
enum {
  TSL_CONV2D_PARAMS_WINDOW = 1,   /* stride_h/w, pad_top/left/bottom/right, dilation_h/w */
  TSL_CONV2D_PARAMS_EPILOGUE = 2, /* act, and clip_min/clip_max when act is clip (the
                                     operators' defaults 0, 6 otherwise: keys do not
                                     depend on bounds no activation reads) */
  TSL_CONV2D_PARAMS_GROUPS = 4,   /* groups, out_channels = K (the grouped operators) */
  TSL_CONV2D_PARAMS_IN_CHANNELS = 8 /* in_channels = C (the block-diagonal operators, whose
                                       data's C/x * x and weight do not state C) */
};
/* The most parameters tsl_conv2d_layer_params writes. */
#define TSL_CONV2D_LAYER_MAX_PARAMS 14

/* Writes the layer's DSL parameters selected by `parts`, in this order: stride_h,
 * stride_w, pad_top, pad_left, pad_bottom, pad_right, dilation_h, dilation_w, act,
 * clip_min, clip_max, groups, out_channels, in_channels (the order is part of workload
 * keys: records files depend on it). p has room for TSL_CONV2D_LAYER_MAX_PARAMS; returns the count.
 * Names are static strings. */
int tsl_conv2d_layer_params(const tsl_conv2d_layer *l, unsigned parts, tsl_dsl_param_value *p);

/* The inverse for the parameter fields: sets l's strides, pads, dilations, act, clip
 * bounds (and groups, K, C when `groups` / `out_channels` / `in_channels` are present) from the n parameters
 * p (by name, any order; absent ones take the operators' defaults: stride and dilation 1,
 * pad 0, act 0, clip 0..6, groups 1). Shape fields are left as they are.
 * Errors: TSL_ERR_INVALID for a NULL argument or an int parameter given as a float. */
tsl_status tsl_conv2d_layer_read_params(int n, const tsl_dsl_param_value *p, tsl_conv2d_layer *l);

/* Whether the n parameters p state a window at all (stride_h is among them): programs
 * instantiated from the library's window operators do; a user's own DSL conv may not. */
bool tsl_conv2d_params_have_window(int n, const tsl_dsl_param_value *p);

#ifdef __cplusplus
}
#endif
#endif
