/* Convolution algorithms: applicability, instantiation, default schedules and the
 * default choice (conv2d_select.h). */
#include "ops/conv2d/conv2d_select.h"

#include <stdio.h>
#include <string.h>

#include "ops/registry.h"
#include "ops/conv2d/conv2d_nchwc_schedule.h"
#include "ops/conv2d/depthwise_schedule.h"
#include "ops/conv2d/im2col_schedule.h"
#include "ops/conv2d/winograd_schedule.h"
#include "ops/tpl_util.h"

static const char *const algo_names[TSL_CONV2D_ALGO_COUNT] = {
    "direct", "gemm1x1", "im2col", "depthwise", "grouped", "winograd_f2", "winograd_f4", "winograd_f6", "blockdiag"};

const char *tsl_conv2d_algo_name(tsl_conv2d_algo a) {
  return (int)a >= 0 && a < TSL_CONV2D_ALGO_COUNT ? algo_names[a] : "?";
}

static bool why_not(const char **why, const char *reason) {
  if (why) *why = reason;
  return false;
}

bool tsl_conv2d_algo_is_winograd(tsl_conv2d_algo a, int *m) {
  int v = a == TSL_CONV2D_WINOGRAD_F2 ? 2 : a == TSL_CONV2D_WINOGRAD_F4 ? 4 : a == TSL_CONV2D_WINOGRAD_F6 ? 6 : 0;
  if (v && m) *m = v;
  return v != 0;
}

static int winograd_m(tsl_conv2d_algo a) {
  int m = 0;
  tsl_conv2d_algo_is_winograd(a, &m);
  return m;
}

static bool is_depthwise(const tsl_conv2d_layer *d) { return d->groups > 1 && d->groups == d->C && d->K == d->C; }

bool tsl_conv2d_algo_applies(const tsl_conv2d_layer *d, tsl_conv2d_algo a, const char **why) {
  if (why) *why = "";
  if (tsl_conv2d_layer_check(d) != TSL_OK) return why_not(why, "malformed layer");
  if (tsl_conv2d_layer_data_block(d) != d->block && a != TSL_CONV2D_GROUPED)
    return why_not(why, "plain NCHW data: the grouped algorithm only");
  bool dense = d->groups == 1;
  switch (a) {
  case TSL_CONV2D_DIRECT:
    return dense ? true : why_not(why, "direct: groups must be 1 (use grouped or depthwise)");
  case TSL_CONV2D_GEMM_1X1:
    if (!dense) return why_not(why, "gemm1x1: groups must be 1");
    if (d->R != 1 || d->S != 1) return why_not(why, "gemm1x1: needs a 1x1 kernel");
    if (d->stride_h != 1 || d->stride_w != 1) return why_not(why, "gemm1x1: needs stride 1");
    if (d->pad_top || d->pad_left || d->pad_bottom || d->pad_right) return why_not(why, "gemm1x1: needs no padding");
    return true;
  case TSL_CONV2D_IM2COL:
    return dense ? true : why_not(why, "im2col: groups must be 1");
  case TSL_CONV2D_DEPTHWISE:
    return is_depthwise(d) ? true : why_not(why, "depthwise: needs groups = C = K (channel multiplier 1)");
  case TSL_CONV2D_GROUPED:
    /* groups 1 too: the reduction over the true input channels (no zero lanes) */
    return true;
  case TSL_CONV2D_BLOCKDIAG:
    return d->groups > 1 ? true : why_not(why, "blockdiag: needs groups > 1 (groups 1 is the direct conv)");
  case TSL_CONV2D_WINOGRAD_F2:
  case TSL_CONV2D_WINOGRAD_F4:
  case TSL_CONV2D_WINOGRAD_F6: {
    if (tsl_winograd_supports_kernel(d, winograd_m(a)) != TSL_OK) {
      /* the reason is the message tsl_winograd_supports_kernel recorded (thread-local) */
      return why_not(why, tsl_last_error());
    }
    return true;
  }
  default: return why_not(why, "unknown algorithm");
  }
}

int64_t tsl_conv2d_blockdiag_band(const tsl_conv2d_layer *d, double *inflation) {
  if (!d || d->groups < 1 || d->block < 1 || d->C < d->groups || d->K < d->groups || d->C % d->groups ||
      d->K % d->groups)
    return 0;
  int64_t x = d->block, cg = d->C / d->groups, kg = d->K / d->groups, bw = 1;
  for (int64_t k0 = 0; k0 < d->K; k0 += x) {
    int64_t k1 = tpl_min(k0 + x, d->K) - 1; /* the last real output channel of the block */
    int64_t first = (k0 / kg) * cg / x, last = ((k1 / kg) * cg + cg - 1) / x;
    bw = tpl_max(bw, last - first + 1);
  }
  if (inflation) *inflation = (double)(bw * x) / (double)cg;
  return bw;
}

static tsl_dsl_param_value int_param(const char *name, int64_t v) { return tsl_dsl_int_param(name, v); }

/* The weight transform `op` (ops/nn/layout.c) from the OIHW weight oihw[4] with its np
 * parameters. */
static tsl_status weight_program(const char *op, const int64_t *oihw, int np, const tsl_dsl_param_value *wp,
                                 tsl_te_program **weight) {
  const int64_t *ws[1] = {oihw};
  const int wd[1] = {4};
  return tsl_op_instantiate(op, 1, ws, wd, np, wp, weight);
}

static tsl_status instantiate_algo(const tsl_conv2d_layer *d, tsl_conv2d_algo a, const tsl_target *t,
                                   tsl_te_program **conv, tsl_te_program **weight) {
  if (conv) *conv = NULL;
  if (weight) *weight = NULL;
  if (!conv) return tsl_error(TSL_ERR_INVALID, "conv2d: NULL result");
  tsl_status st = tsl_conv2d_layer_check(d);
  if (st != TSL_OK) return st;
  const char *why = NULL;
  if (!tsl_conv2d_algo_applies(d, a, &why)) return tsl_error(TSL_ERR_UNSUPPORTED, "conv2d: %s", why);
  int64_t x = d->block, CB = tpl_ceil_div(d->C, x), KB = tpl_ceil_div(d->K, x);
  int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d);
  int64_t xd = tsl_conv2d_layer_data_block(d);
  int64_t data[5] = {d->N, tpl_ceil_div(d->C, xd), d->H, d->W, xd}, bias[2] = {KB, x}, res[5] = {d->N, KB, OH, OW, x};
  int64_t oihw[4] = {d->K, d->C / d->groups, d->R, d->S};
  tsl_dsl_param_value p[TSL_CONV2D_LAYER_MAX_PARAMS + 1];
  int np = tsl_conv2d_layer_params(d, TSL_CONV2D_PARAMS_WINDOW | TSL_CONV2D_PARAMS_EPILOGUE, p);
  if (d->has_channel_scale && a != TSL_CONV2D_GEMM_1X1)
    return tsl_error(TSL_ERR_UNSUPPORTED, "conv2d: a channel-scaled layer runs as gemm1x1 only, not %s",
                     tsl_conv2d_algo_name(a));
  switch (a) {
  case TSL_CONV2D_GEMM_1X1: {
    /* the same bytes with H, W flattened into the pixel axis; the scale (has_channel_scale)
     * after the residual */
    int64_t data1[4] = {d->N, CB, d->H * d->W, x}, w[4] = {KB, CB, x, x}, res1[4] = {d->N, KB, OH * OW, x};
    int64_t scale[3] = {d->N, CB, x};
    const int64_t *shapes[5] = {data1, w, bias, d->has_residual ? res1 : scale, scale};
    const int ndims[5] = {4, 4, 2, d->has_residual ? 4 : 3, 3};
    tsl_dsl_param_value ep[TSL_CONV2D_LAYER_MAX_PARAMS];
    int nep = tsl_conv2d_layer_params(d, TSL_CONV2D_PARAMS_EPILOGUE, ep);
    const char *op = d->has_channel_scale
                         ? (d->has_residual ? "conv2d_nchwc_1x1_bias_add_scale" : "conv2d_nchwc_1x1_bias_scale")
                         : (d->has_residual ? "conv2d_nchwc_1x1_bias_add" : "conv2d_nchwc_1x1_bias");
    st = tsl_op_instantiate(op, 3 + d->has_residual + d->has_channel_scale, shapes, ndims, nep, ep, conv);
    if (st != TSL_OK || !weight) return st;
    tsl_dsl_param_value wp[2] = {int_param("in_block", x), int_param("out_block", x)};
    return weight_program("weight_to_nchwc", oihw, 2, wp, weight);
  }
  case TSL_CONV2D_DIRECT: {
    int64_t w[6] = {KB, CB, d->R, d->S, x, x};
    const int64_t *shapes[4] = {data, w, bias, res};
    const int ndims[4] = {5, 6, 2, 5};
    st = tsl_op_instantiate(d->has_residual ? "conv2d_nchwc_bias_add" : "conv2d_nchwc_bias", d->has_residual ? 4 : 3,
                            shapes, ndims, np, p, conv);
    if (st != TSL_OK || !weight) return st;
    tsl_dsl_param_value wp[2] = {int_param("in_block", x), int_param("out_block", x)};
    return weight_program("weight_to_nchwc", oihw, 2, wp, weight);
  }
  case TSL_CONV2D_IM2COL: {
    int64_t w[5] = {KB, d->C, d->R, d->S, x}, res1[4] = {d->N, KB, OH * OW, x};
    const int64_t *shapes[4] = {data, w, bias, res1};
    const int ndims[4] = {5, 5, 2, 4};
    p[np++] = int_param("pack_rows", tsl_im2col_pack_rows(t));
    st = tsl_op_instantiate(d->has_residual ? "conv2d_nchwc_im2col_add" : "conv2d_nchwc_im2col",
                            d->has_residual ? 4 : 3, shapes, ndims, np, p, conv);
    if (st != TSL_OK || !weight) return st;
    tsl_dsl_param_value wp[1] = {int_param("out_block", x)};
    return weight_program("weight_to_grouped", oihw, 1, wp, weight);
  }
  case TSL_CONV2D_DEPTHWISE: {
    int64_t w[4] = {CB, d->R, d->S, x};
    const int64_t *shapes[4] = {data, w, bias, res};
    const int ndims[4] = {5, 4, 2, 5};
    st = tsl_op_instantiate(d->has_residual ? "depthwise_conv2d_nchwc_add" : "depthwise_conv2d_nchwc",
                            d->has_residual ? 4 : 3, shapes, ndims, np, p, conv);
    if (st != TSL_OK || !weight) return st;
    tsl_dsl_param_value wp[1] = {int_param("block", x)};
    return weight_program("weight_to_depthwise", oihw, 1, wp, weight);
  }
  case TSL_CONV2D_GROUPED: {
    int64_t w[5] = {KB, d->C / d->groups, d->R, d->S, x};
    const int64_t *shapes[4] = {data, w, bias, res};
    const int ndims[4] = {5, 5, 2, 5};
    np += tsl_conv2d_layer_params(d, TSL_CONV2D_PARAMS_GROUPS, p + np);
    st = tsl_op_instantiate(d->has_residual ? "conv2d_nchwc_grouped_add" : "conv2d_nchwc_grouped",
                            d->has_residual ? 4 : 3, shapes, ndims, np, p, conv);
    if (st != TSL_OK || !weight) return st;
    tsl_dsl_param_value wp[1] = {int_param("out_block", x)};
    return weight_program("weight_to_grouped", oihw, 1, wp, weight);
  }
  case TSL_CONV2D_BLOCKDIAG: {
    int64_t bw = tsl_conv2d_blockdiag_band(d, NULL);
    int64_t w[6] = {KB, bw, d->R, d->S, x, x};
    const int64_t *shapes[4] = {data, w, bias, res};
    const int ndims[4] = {5, 6, 2, 5};
    np += tsl_conv2d_layer_params(d, TSL_CONV2D_PARAMS_GROUPS | TSL_CONV2D_PARAMS_IN_CHANNELS, p + np);
    st = tsl_op_instantiate(d->has_residual ? "conv2d_nchwc_blockdiag_bias_add" : "conv2d_nchwc_blockdiag_bias",
                            d->has_residual ? 4 : 3, shapes, ndims, np, p, conv);
    if (st != TSL_OK || !weight) return st;
    tsl_dsl_param_value wp[4] = {int_param("groups", d->groups), int_param("in_block", x), int_param("out_block", x),
                                 int_param("band", bw)};
    return weight_program("weight_to_blockdiag", oihw, 4, wp, weight);
  }
  case TSL_CONV2D_WINOGRAD_F2:
  case TSL_CONV2D_WINOGRAD_F4:
  case TSL_CONV2D_WINOGRAD_F6: {
    return tsl_winograd_instantiate(d, winograd_m(a), NULL, conv, weight);
  }
  default: return tsl_error(TSL_ERR_UNSUPPORTED, "conv2d: unknown algorithm %d", (int)a);
  }
}

tsl_status tsl_conv2d_algo_instantiate(const tsl_conv2d_layer *d, tsl_conv2d_algo a, const tsl_target *t,
                                       tsl_te_program **conv, tsl_te_program **weight) {
  tsl_status st = instantiate_algo(d, a, t, conv, weight);
  if (st != TSL_OK) return st;
  tsl_epilogue e = tsl_conv2d_layer_epilogue(d);
  if ((st = tsl_epilogue_apply(*conv, &e)) != TSL_OK) {
    *conv = NULL;
    if (weight) *weight = NULL;
  }
  return st;
}

tsl_status tsl_conv2d_algo_schedule(const tsl_te_program *conv, tsl_conv2d_algo a, const tsl_target *t,
                                    tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "conv2d: NULL result");
  *out = NULL;
  switch (a) {
  case TSL_CONV2D_DIRECT:
  case TSL_CONV2D_GEMM_1X1:
  case TSL_CONV2D_BLOCKDIAG: {
    tsl_conv2d_nchwc_shape sh;
    tsl_status st = tsl_conv2d_nchwc_get_shape(conv, &sh);
    if (st != TSL_OK) return st;
    tsl_conv2d_nchwc_knobs k = tsl_conv2d_nchwc_default_knobs(t, &sh, sh.flat);
    return tsl_conv2d_nchwc_schedule(conv, t, &k, out);
  }
  case TSL_CONV2D_IM2COL: return tsl_im2col_schedule(conv, t, NULL, out);
  case TSL_CONV2D_WINOGRAD_F2:
  case TSL_CONV2D_WINOGRAD_F4:
  case TSL_CONV2D_WINOGRAD_F6: return tsl_winograd_schedule(conv, t, NULL, out);
  case TSL_CONV2D_DEPTHWISE:
  case TSL_CONV2D_GROUPED: return tsl_depthwise_schedule(conv, t, NULL, out);
  default: return tsl_error(TSL_ERR_UNSUPPORTED, "conv2d: algorithm %s not available", tsl_conv2d_algo_name(a));
  }
}

const tsl_template *tsl_conv2d_algo_template(const tsl_te_program *conv) {
  if (!conv || !conv->name) return NULL;
  const tsl_template *(*lists[])(int *) = {tsl_conv2d_nchwc_templates, tsl_depthwise_templates, tsl_im2col_templates};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    int n = 0;
    const tsl_template *t = lists[l](&n);
    for (int i = 0; i < n; i++)
      if (strcmp(t[i].op, conv->name) == 0) return &t[i];
  }
  for (int i = 0; i < TSL_WINOGRAD_NTEMPLATES; i++)
    if (strcmp(tsl_winograd_templates[i].op, conv->name) == 0) return &tsl_winograd_templates[i];
  /* tsl_winograd_instantiate names its programs "conv2d_winograd" whatever m is: the
   * template of its m (read off the program), the _add one with a residual input */
  tsl_winograd_shape ws;
  const char *op = strcmp(conv->name, "conv2d_winograd") == 0 && tsl_winograd_program_shape(conv, &ws) == TSL_OK
                       ? tsl_winograd_op_name(ws.m, ws.alpha - ws.m + 1, conv->ninputs >= 4)
                       : NULL;
  for (int i = 0; op && i < TSL_WINOGRAD_NTEMPLATES; i++)
    if (strcmp(tsl_winograd_templates[i].op, op) == 0) return &tsl_winograd_templates[i];
  return NULL;
}

bool tsl_conv2d_prefers_winograd(int64_t C, int64_t K, int64_t R, int64_t S) {
  return C >= 8 && K >= 8 && R == S && (R == 3 || R == 4);
}

bool tsl_conv2d_reads_plain_data(int64_t C, int64_t groups, int64_t block) {
  if (C < 1 || groups != 1 || block < 1) return false;
  int64_t lanes = tpl_ceil_div(C, block) * block;
  return (lanes - C) * 4 > lanes;
}

tsl_conv2d_algo tsl_conv2d_select(const tsl_conv2d_layer *d, const tsl_target *t) {
  if (tsl_conv2d_layer_data_block(d) != d->block) return TSL_CONV2D_GROUPED;
  if (is_depthwise(d) && tsl_conv2d_algo_applies(d, TSL_CONV2D_DEPTHWISE, NULL)) return TSL_CONV2D_DEPTHWISE;
  if (d->groups > 1) {
    /* the block-diagonal dense conv, except where the grouped template is as fast: one
     * input channel per group (depthwise with a multiplier: no reduction over channels,
     * the band would be 16x its MACs at 16 lanes, measured 0.66-0.68 of grouped at 8 and
     * 16 lanes) and groups of exactly one block in and out (its lanes broadcast one input
     * value: 0.9-1.2x blockdiag at 8 and 16 lanes). Measured with bench/conv_layers
     * --layer, group widths 2-64: blockdiag 1.2-8x grouped (RegNetY-400MF's width-8
     * groups at 16 lanes: 5-12 -> 50-70 GFLOP/s). */
    int64_t cg = d->C / d->groups, kg = d->K / d->groups;
    if (cg == 1 || (cg == d->block && kg == d->block)) return TSL_CONV2D_GROUPED;
    return tsl_conv2d_algo_applies(d, TSL_CONV2D_BLOCKDIAG, NULL) ? TSL_CONV2D_BLOCKDIAG : TSL_CONV2D_GROUPED;
  }
  if (tsl_conv2d_algo_applies(d, TSL_CONV2D_GEMM_1X1, NULL)) return TSL_CONV2D_GEMM_1X1;
  /* few input channels (first layers): reduce over the true channels, not C/x*x lanes of
   * which more than a quarter are zero (measured 2-2.4x the direct conv at C = 3) */
  if (tsl_conv2d_reads_plain_data(d->C, d->groups, d->block) && tsl_conv2d_algo_applies(d, TSL_CONV2D_GROUPED, NULL))
    return TSL_CONV2D_GROUPED;
  /* Winograd on every 3x3 and 4x4 stride-1 layer it takes with a few channels
   * (tsl_conv2d_prefers_winograd): 3x3 measured 1.7-3x the direct convolution on all
   * such layers of SqueezeNet 1.1 and ResNet-18 here (bench/conv_layers), F(4x4) from
   * 20x20 outputs, F(4x4) or F(2x2) below (the Winograd template's own choice,
   * tsl_winograd_default_m, which also takes the 4x4 layers) */
  if (tsl_conv2d_prefers_winograd(d->C, d->K, d->R, d->S)) {
    int m = tsl_winograd_default_m(t, d);
    tsl_conv2d_algo a = m == 2 ? TSL_CONV2D_WINOGRAD_F2 : m == 6 ? TSL_CONV2D_WINOGRAD_F6 : TSL_CONV2D_WINOGRAD_F4;
    if (tsl_conv2d_algo_applies(d, a, NULL)) return a;
  }
  /* strided dense convs at 16 lanes: the grouped template's default (its tile from its
   * own window model, the kernel window unrolled) ran 6-24% faster than the direct
   * template's default on every strided dense conv of resnet18 (3x3 s2) and ConvNeXt
   * (2x2 s2 downsampling) in the models at 1 and 2 threads (znver5, tunecli run
   * --profile, 3 interleaved rounds: resnet18 layer3.0.conv1 0.60 -> 0.56 ms at 1
   * thread); at 8 lanes it did not (14x14 256 -> 512 s2 isolated: 1.27 against 1.10 ms) */
  bool strided = d->stride_h > 1 || d->stride_w > 1, window = d->R > 1 || d->S > 1;
  if (strided && window && tsl_target_f32_lanes(t) >= 16 && d->block >= 16 &&
      tsl_conv2d_algo_applies(d, TSL_CONV2D_GROUPED, NULL))
    return TSL_CONV2D_GROUPED;
  return TSL_CONV2D_DIRECT;
}
