/* The inverted-residual front half of MobileNet-style blocks as one operator: a 1x1
 * "expand" convolution (+ bias + activation) whose only reader is a depthwise
 * convolution (+ bias + activation), computed band by band so the expanded tensor never
 * goes to memory (issue 17).
 *
 *   data    f32[N, C/x, H, W, x]      NCHW[x]c (ops/nchwc.h)
 *   w1      f32[E/x, C/x, x, x]       the expand's OIHW weight (E x C x 1 x 1) as
 *                                     OIHW[x]i[x]o: w[e, c] at [e / x, c / x, c % x, e % x]
 *                                     (the GEMM 1x1 algorithm's layout)
 *   b1      f32[E/x, x]
 *   weight  f32[E/x, R, S, x]         the depthwise weight (E x 1 x R x S) as
 *                                     depthwise_conv2d_nchwc reads it
 *   bias    f32[E/x, x]
 *   out     f32[N, E/x, OH, OW, x]
 *
 *   expanded[n, e, h, w] = f1(sum over c of data[n, c, h, w] * w1[e, c] + b1[e])
 *   out[n, e, y, x]      = f2(sum over r, s of padded[n, e, y*sh + r, x*sw + s] * weight[e, r, s] + bias[e])
 *
 * where `padded` is `expanded` with the depthwise's zero padding: the padding is applied
 * AFTER f1 (a padded position is 0, not f1(b1)). f1 and f2 are each none, Relu, Clip
 * (ReLU6) or a function of the activation table (ops/epilogue.h: HardSwish, Swish, ...).
 * Dilation 1 only (every inverted-residual block).
 *
 * The stages (tags): expand ("expand_1x1", the 1x1 reduction, defined over the padded
 * extent with clamped reads so that no read leaves the data), padded ("injective": f1,
 * the bias and the zero padding), conv ("depthwise_nchwc"), out ("elemwise": f2 and the
 * bias). The schedule (tsl_expand_dw_schedule) computes `padded` (with `expand` in its
 * register tiles) per band of output rows of one channel block, inside the parallel loop:
 * the band's input rows ((band - 1) * stride + R of them, the halo recomputed per band)
 * stay in L1/L2, and only the depthwise's output is written.
 */
#ifndef TESSEL_OPS_CONV2D_EXPAND_DEPTHWISE_H
#define TESSEL_OPS_CONV2D_EXPAND_DEPTHWISE_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "ops/epilogue.h"
#include "ops/workload.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One activation of the fused pair: act 0 none, 1 relu, 2 clip [clip_min, clip_max]
 * (ops/nchwc.h's codes), or with act 0 a function of the activation table (fn set). */
typedef struct tsl_expand_dw_act {
  int act;
  double clip_min, clip_max;
  tsl_epilogue fn;
} tsl_expand_dw_act;

typedef struct tsl_expand_dw_layer {
  int64_t N, C, H, W;  /* the expand's input (NCHW semantics) */
  int64_t E;           /* expanded channels: the expand's K, the depthwise's channels */
  int64_t R, S;        /* the depthwise window */
  int64_t stride_h, stride_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t block;       /* x of NCHW[x]c, >= 1 */
  tsl_expand_dw_act expand_act, dw_act;
} tsl_expand_dw_layer;

/* The schedule's knobs. */
typedef struct tsl_expand_dw_knobs {
  int64_t band;     /* output rows per band (the unit of the parallel loop), >= 1 */
  int64_t ow_block; /* depthwise register tile: output columns, >= 1 */
  int64_t ew_block; /* expand register tile: columns of the padded band, >= 1 */
  int64_t kb_block; /* channel blocks per parallel iteration (the expand tile's rows), >= 1 */
} tsl_expand_dw_knobs;

/* Checks d: positive sizes, a window that fits the padded input, non-negative pads,
 * strides >= 1, act codes 0..2. Errors: TSL_ERR_INVALID saying which. */
tsl_status tsl_expand_dw_check(const tsl_expand_dw_layer *d);

/* The output extents (the depthwise's). */
int64_t tsl_expand_dw_out_h(const tsl_expand_dw_layer *d);
int64_t tsl_expand_dw_out_w(const tsl_expand_dw_layer *d);

/* The fused operator is the registry operator "expand_depthwise_nchwc" (inputs data,
 * w1, b1, weight, bias as above; parameters stride_h, stride_w, pad_top, pad_left,
 * pad_bottom, pad_right, channels (= E, for the lane guard), expand_act /
 * expand_clip_min / expand_clip_max (f1 as a code), act / clip_min / clip_max (f2 as a
 * code)); f2 of the activation table is the workload's epilogue, f1 of the table its
 * stage epilogue on the stage `padded` (ops/epilogue.h: f1 inside the zero padding).
 * Its template "expand_depthwise_nchwc.band" (tsl_expand_dw_templates) searches the
 * knobs below. */

/* The workload of d (what the tuner tunes and the records are keyed by), for every f1
 * and f2. Errors: the check's (TSL_ERR_INVALID). */
tsl_status tsl_expand_dw_workload(const tsl_expand_dw_layer *d, tsl_workload *w);

/* The key of d: its workload's key (tsl_workload_key_of: "+F2(...)" and "|padded+F1(...)"
 * appended for table functions); equal layers have equal keys. *out is malloc'd.
 * Errors: TSL_ERR_INVALID (d refused by the check), TSL_ERR_NOMEM. */
tsl_status tsl_expand_dw_key(const tsl_expand_dw_layer *d, char **out);

/* The instantiated program of d (inputs data, w1, b1, weight, bias; output out, shapes
 * as above): its workload's (tsl_workload_instantiate). Errors: the check's,
 * instantiation errors (TSL_ERR_INVALID). */
tsl_status tsl_expand_dw_program(const tsl_expand_dw_layer *d, tsl_te_program **out);

/* The layer an expand_depthwise_nchwc program states (its shapes and parameters; C is
 * the data's whole blocks, f1 and f2 their codes only). Errors: TSL_ERR_INVALID (not
 * such a program, or the check's). */
tsl_status tsl_expand_dw_layer_of_program(const tsl_te_program *p, tsl_expand_dw_layer *d);

/* The template "expand_depthwise_nchwc.band" (static storage; *n receives the count):
 * knobs band (balanced output-row counts whose padded rows stay within half of L2),
 * ow_block and ew_block (balanced column tiles up to the vector registers less 4),
 * kb_block (1, 2, 4 channel blocks); the default config is tsl_expand_dw_default_knobs. */
const tsl_template *tsl_expand_dw_templates(int *n);

/* The default knobs for d on target t: the band is the fewest output rows (up to the
 * output height) whose halo recomputes at most 1/16 of the expand, its padded rows of one
 * channel block within a quarter of L2; the tiles take up to 12 columns (the vector
 * registers of AVX2 hold them with the weights and a broadcast). */
tsl_expand_dw_knobs tsl_expand_dw_default_knobs(const tsl_target *t, const tsl_expand_dw_layer *d);

/* The schedule of program p (from tsl_expand_dw_program) with knobs k (NULL: defaults).
 * Errors: TSL_ERR_INVALID (knobs < 1, p not such a program), schedule errors. */
tsl_status tsl_expand_dw_schedule(const tsl_te_program *p, const tsl_expand_dw_layer *d, const tsl_target *t,
                                  const tsl_expand_dw_knobs *k, tsl_schedule **out);

/* Whether fusing d pays on target t (measured, docs in expand_depthwise.c): the rule
 * from sizes the graph compiler applies. */
bool tsl_expand_dw_pays(const tsl_expand_dw_layer *d, const tsl_target *t);

#ifdef __cplusplus
}
#endif
#endif
