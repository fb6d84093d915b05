/* The expand 1x1 + depthwise pair as one operator (expand_depthwise.h). */
#include "ops/conv2d/expand_depthwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "dsl/text_buf.h"
#include "ops/families.h"
#include "ops/tpl_util.h"
#include "ops/workload.h"

static const char *const WHO = "expand_depthwise template";

tsl_status tsl_expand_dw_check(const tsl_expand_dw_layer *d) {
  if (!d) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL layer");
  if (d->N < 1 || d->C < 1 || d->H < 1 || d->W < 1 || d->E < 1 || d->R < 1 || d->S < 1 || d->block < 1)
    return tsl_error(TSL_ERR_INVALID, "expand_depthwise: sizes must be >= 1 (N %lld C %lld H %lld W %lld E %lld R %lld "
                                      "S %lld block %lld)",
                     (long long)d->N, (long long)d->C, (long long)d->H, (long long)d->W, (long long)d->E,
                     (long long)d->R, (long long)d->S, (long long)d->block);
  if (d->stride_h < 1 || d->stride_w < 1)
    return tsl_error(TSL_ERR_INVALID, "expand_depthwise: strides must be >= 1");
  if (d->pad_top < 0 || d->pad_left < 0 || d->pad_bottom < 0 || d->pad_right < 0)
    return tsl_error(TSL_ERR_INVALID, "expand_depthwise: paddings must be >= 0");
  if (d->H + d->pad_top + d->pad_bottom < d->R || d->W + d->pad_left + d->pad_right < d->S)
    return tsl_error(TSL_ERR_INVALID, "expand_depthwise: the %lldx%lld window exceeds the padded input",
                     (long long)d->R, (long long)d->S);
  const tsl_expand_dw_act *a[2] = {&d->expand_act, &d->dw_act};
  for (int i = 0; i < 2; i++)
    if (a[i]->act < 0 || a[i]->act > 2 || (a[i]->act && tsl_epilogue_present(&a[i]->fn)))
      return tsl_error(TSL_ERR_INVALID, "expand_depthwise: %s activation: act %d must be 0..2, and 0 with a function",
                       i ? "depthwise" : "expand", a[i]->act);
  return TSL_OK;
}

int64_t tsl_expand_dw_out_h(const tsl_expand_dw_layer *d) {
  return (d->H + d->pad_top + d->pad_bottom - d->R) / d->stride_h + 1;
}

int64_t tsl_expand_dw_out_w(const tsl_expand_dw_layer *d) {
  return (d->W + d->pad_left + d->pad_right - d->S) / d->stride_w + 1;
}

/* ---- the operator ---------------------------------------------------------------
 * The registry operator states the activations as codes (none, relu, clip); a function of
 * the activation table is an epilogue of the workload (ops/epilogue.h): the depthwise's
 * f2 on the output stage, the expand's f1 on the stage `padded` (its value inside the
 * zero padding, which stays zero). */

#define EXPAND_DW_ACT(P, V) \
  P "act == 1 ? max(" V ", 0.0) : " P "act == 2 ? min(max(" V ", " P "clip_min), " P "clip_max) : " V

#define EXPAND_DW_HEAD                                                                                               \
  "op expand_depthwise_nchwc(data: f32[N, CB, H, W, X], w1: f32[EB, CB, X, X], b1: f32[EB, X],\n"                  \
  "                          weight: f32[EB, R, S, X], bias: f32[EB, X],\n"                                          \
  "                          stride_h: int = 1, stride_w: int = 1,\n"                                                \
  "                          pad_top: int = 0, pad_left: int = 0, pad_bottom: int = 0, pad_right: int = 0,\n"        \
  "                          channels: int = 0, expand_act: int = 0, expand_clip_min: float = 0.0,\n"                \
  "                          expand_clip_max: float = 6.0, act: int = 0, clip_min: float = 0.0,\n"                   \
  "                          clip_max: float = 6.0)\n"                                                               \
  "  assert stride_h >= 1 && stride_w >= 1, \"strides must be >= 1\"\n"                                              \
  "  assert pad_top >= 0 && pad_left >= 0 && pad_bottom >= 0 && pad_right >= 0, \"paddings must be >= 0\"\n"         \
  "  assert channels >= 0 && channels <= EB * X, \"channels must be 0 (all) or at most EB * X\"\n"                   \
  "  assert expand_act >= 0 && expand_act <= 2 && act >= 0 && act <= 2, \"act must be 0 (none), 1 (relu) or 2 (clip)\"\n" \
  "  @tag(\"expand_1x1\")\n"                                                                                         \
  "  expand[n, kb, y, x, k] = sum(cb, c: data[n, cb, min(max(y - pad_top, 0), H - 1), min(max(x - pad_left, 0), W - 1), c]\n" \
  "                                      * w1[kb, cb, c, k])\n"                                                      \
  "    where y < H + pad_top + pad_bottom, x < W + pad_left + pad_right\n"                                           \
  "  @tag(\"injective\")\n"                                                                                          \
  "  padded[n, kb, y, x, k] = select(y >= pad_top && y < H + pad_top && x >= pad_left && x < W + pad_left, "

#define EXPAND_DW_PRE "(expand[n, kb, y, x, k] + b1[kb, k])"
#define EXPAND_DW_OUT "(conv[n, kb, y, x, k] + bias[kb, k])"

/* f2 (codes), with the lane guard when f2(0) != 0 and channels leave lanes of the last
 * block (constant conditions: one branch remains at instantiation) */
#define EXPAND_DW_TAIL                                                                                               \
  ", 0.0)\n"                                                                                                         \
  "  @tag(\"depthwise_nchwc\")\n"                                                                                    \
  "  conv[n, kb, y, x, k] = sum(r, s: padded[n, kb, y*stride_h + r, x*stride_w + s, k] * weight[kb, r, s, k])\n"     \
  "    where y < (H + pad_top + pad_bottom - R) / stride_h + 1, x < (W + pad_left + pad_right - S) / stride_w + 1\n" \
  "  @tag(\"elemwise\")\n"                                                                                           \
  "  out[n, kb, y, x, k] = channels > 0 && channels < EB * X && act == 2 && (clip_min > 0.0 || clip_max < 0.0)\n"    \
  "                        ? select(kb * X + k < channels, min(max(" EXPAND_DW_OUT ", clip_min), clip_max), 0.0)\n"  \
  "                        : " EXPAND_DW_ACT("", EXPAND_DW_OUT) "\n"

static const char expand_dw_text[] =
    "// expand 1x1 conv + bias + act, then depthwise conv + bias + act, band by band, NCHW[x]c\n" EXPAND_DW_HEAD
        EXPAND_DW_ACT("expand_", EXPAND_DW_PRE) EXPAND_DW_TAIL;

static const int ranks[] = {5, 4, 2, 4, 2};
static const int64_t ex_data[] = {1, 2, 9, 11, 4}, ex_w1[] = {3, 2, 4, 4}, ex_b[] = {3, 4}, ex_w[] = {3, 3, 3, 4};
static const int64_t *const ex_shapes[] = {ex_data, ex_w1, ex_b, ex_w, ex_b};
static const tsl_dsl_param_value ex_params[] = {
    {"stride_h", TSL_DSL_PARAM_INT, 2, 0.0},  {"stride_w", TSL_DSL_PARAM_INT, 2, 0.0},
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},   {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0}, {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"expand_act", TSL_DSL_PARAM_INT, 2, 0.0}, {"act", TSL_DSL_PARAM_INT, 2, 0.0},
};

static const tsl_op_source family[] = {
    {"expand_depthwise_nchwc",
     "expand 1x1 conv + bias + activation fused into the depthwise conv + bias + activation reading it, NCHW[x]c "
     "(f32; ops/conv2d/expand_depthwise.h)",
     expand_dw_text, {5, ranks, ex_shapes, 8, ex_params}},
};

const tsl_op_source *tsl_ops_expand_depthwise_family(int *n) {
  *n = (int)(sizeof family / sizeof family[0]);
  return family;
}

/* The parameters of d (codes; a function of the table leaves its act 0). */
static int layer_params(const tsl_expand_dw_layer *d, tsl_dsl_param_value *p) {
  int n = 0;
  p[n++] = tsl_dsl_int_param("stride_h", d->stride_h);
  p[n++] = tsl_dsl_int_param("stride_w", d->stride_w);
  p[n++] = tsl_dsl_int_param("pad_top", d->pad_top);
  p[n++] = tsl_dsl_int_param("pad_left", d->pad_left);
  p[n++] = tsl_dsl_int_param("pad_bottom", d->pad_bottom);
  p[n++] = tsl_dsl_int_param("pad_right", d->pad_right);
  p[n++] = tsl_dsl_int_param("channels", d->E);
  p[n++] = tsl_dsl_int_param("expand_act", d->expand_act.act);
  p[n++] = tsl_dsl_float_param("expand_clip_min", d->expand_act.act == 2 ? d->expand_act.clip_min : 0.0);
  p[n++] = tsl_dsl_float_param("expand_clip_max", d->expand_act.act == 2 ? d->expand_act.clip_max : 6.0);
  p[n++] = tsl_dsl_int_param("act", d->dw_act.act);
  p[n++] = tsl_dsl_float_param("clip_min", d->dw_act.act == 2 ? d->dw_act.clip_min : 0.0);
  p[n++] = tsl_dsl_float_param("clip_max", d->dw_act.act == 2 ? d->dw_act.clip_max : 6.0);
  return n;
}

tsl_status tsl_expand_dw_workload(const tsl_expand_dw_layer *d, tsl_workload *w) {
  tsl_status st = tsl_expand_dw_check(d);
  if (st != TSL_OK) return st;
  if (!w) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL workload");
  int64_t X = d->block, CB = (d->C + X - 1) / X, EB = (d->E + X - 1) / X;
  const int64_t s_data[] = {d->N, CB, d->H, d->W, X}, s_w1[] = {EB, CB, X, X}, s_b[] = {EB, X},
                s_w[] = {EB, d->R, d->S, X};
  const int64_t *shapes[] = {s_data, s_w1, s_b, s_w, s_b};
  const int ndims[] = {5, 4, 2, 4, 2};
  tsl_dsl_param_value p[16];
  int np = layer_params(d, p);
  st = tsl_workload_init(w, "expand_depthwise_nchwc", 5, shapes, ndims, np, p);
  if (st != TSL_OK) return st;
  w->epilogue = d->dw_act.fn;
  w->epilogue.channels = tsl_epilogue_present(&d->dw_act.fn) && d->E % X ? d->E : 0;
  /* f1 of the table on `padded`: no guard (the padding lanes of the last block have zero
   * weights in the depthwise, so f1(0) there never reaches the output) */
  tsl_epilogue f1 = d->expand_act.fn;
  f1.channels = 0;
  return tsl_stage_epilogue_make("padded", &f1, true, &w->stage_epilogue); /* padded zero-pads */
}

tsl_status tsl_expand_dw_key(const tsl_expand_dw_layer *d, char **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL key");
  *out = NULL;
  tsl_workload w;
  tsl_status st = tsl_expand_dw_workload(d, &w);
  return st == TSL_OK ? tsl_workload_key_of(&w, out) : st;
}

tsl_status tsl_expand_dw_program(const tsl_expand_dw_layer *d, tsl_te_program **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL program");
  *out = NULL;
  tsl_workload w;
  tsl_status st = tsl_expand_dw_workload(d, &w);
  return st == TSL_OK ? tsl_workload_instantiate(&w, out) : st;
}

static int64_t param_of(const tsl_te_program *p, const char *name, int64_t dflt) {
  for (int i = 0; i < p->nparams; i++)
    if (strcmp(p->params[i].name, name) == 0)
      return p->params[i].kind == TSL_DSL_PARAM_INT ? p->params[i].i : (int64_t)p->params[i].f;
  return dflt;
}

static double fparam_of(const tsl_te_program *p, const char *name, double dflt) {
  for (int i = 0; i < p->nparams; i++)
    if (strcmp(p->params[i].name, name) == 0)
      return p->params[i].kind == TSL_DSL_PARAM_FLOAT ? p->params[i].f : (double)p->params[i].i;
  return dflt;
}

tsl_status tsl_expand_dw_layer_of_program(const tsl_te_program *p, tsl_expand_dw_layer *d) {
  if (!p || !d) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL argument");
  memset(d, 0, sizeof *d);
  if (p->ninputs != 5 || p->noutputs != 1 || !p->params || !tpl_find_named(p, "expand") ||
      !tpl_find_named(p, "padded") || !tpl_find_named(p, "conv") || p->inputs[0]->buf->ndim != 5 ||
      p->inputs[3]->buf->ndim != 4)
    return tsl_error(TSL_ERR_INVALID, "%s: %s is not an expand_depthwise_nchwc program", WHO,
                     p->name ? p->name : "?");
  const int64_t *data = p->inputs[0]->buf->shape, *wt = p->inputs[3]->buf->shape;
  d->N = data[0];
  d->block = data[4];
  d->C = data[1] * data[4];
  d->H = data[2];
  d->W = data[3];
  d->E = param_of(p, "channels", 0);
  if (d->E <= 0) d->E = wt[0] * d->block;
  d->R = wt[1];
  d->S = wt[2];
  d->stride_h = param_of(p, "stride_h", 1);
  d->stride_w = param_of(p, "stride_w", 1);
  d->pad_top = param_of(p, "pad_top", 0);
  d->pad_left = param_of(p, "pad_left", 0);
  d->pad_bottom = param_of(p, "pad_bottom", 0);
  d->pad_right = param_of(p, "pad_right", 0);
  d->expand_act.act = (int)param_of(p, "expand_act", 0);
  d->expand_act.clip_min = fparam_of(p, "expand_clip_min", 0.0);
  d->expand_act.clip_max = fparam_of(p, "expand_clip_max", 6.0);
  d->dw_act.act = (int)param_of(p, "act", 0);
  d->dw_act.clip_min = fparam_of(p, "clip_min", 0.0);
  d->dw_act.clip_max = fparam_of(p, "clip_max", 6.0);
  return tsl_expand_dw_check(d);
}

/* Vector registers one column of a register tile takes in each tile: one accumulator. */
tsl_expand_dw_knobs tsl_expand_dw_default_knobs(const tsl_target *t, const tsl_expand_dw_layer *d) {
  tsl_expand_dw_knobs k;
  int64_t regs = tsl_target_vector_registers(t), X = d->block;
  int64_t OH = tsl_expand_dw_out_h(d), OW = tsl_expand_dw_out_w(d), WP = d->W + d->pad_left + d->pad_right;
  /* depthwise tile: at most 12 accumulators and 4 registers left for the one weight vector
   * and the loads live at a time (the window loops r, s run outside the columns), as the
   * depthwise template's rule: a row tile of columns, the tail's cost counted */
  int64_t max_dw = tpl_max(1, tpl_min(12, regs - 4));
  int64_t ntiles = tpl_ceil_div(OW, max_dw);
  k.ow_block = tpl_ceil_div(OW, ntiles);
  /* expand tile: kb_block x ew accumulators, kb_block weight vectors, a broadcast. One
   * channel block: two (sharing each broadcast, 2 x 12 accumulators on AVX-512) measured
   * 0.32 -> 0.80 ms on MobileNetV2's 112 x 112 stride-2 pair (znver5, 1 thread) */
  k.kb_block = 1;
  int64_t max_ew = tpl_max(1, tpl_min(12, (regs - 4) / k.kb_block));
  ntiles = tpl_ceil_div(WP, max_ew);
  k.ew_block = tpl_ceil_div(WP, ntiles);
  /* band: the fewest output rows whose input rows ((band - 1) * stride + R, the halo
   * recomputed per band) are at most 1/16 more than the rows they advance (band *
   * stride), within a quarter of L2 for one channel block's padded rows. Measured on
   * MobileNetV2 (znver5, 1 thread): 56 x 56 stride 1, bands of 4 / 8 / 16 / 32 rows:
   * 0.309 / 0.279 / 0.252 / 0.238 ms; 112 x 112 stride 2: 0.32-0.34 ms from 4 rows up. */
  int64_t row_bytes = WP * X * 4, max_rows = tpl_max(d->R, tpl_l2_bytes(t) / 4 / row_bytes);
  int64_t band = 1;
  while (band < OH && ((band - 1) * d->stride_h + d->R) * 16 > 17 * band * d->stride_h &&
         (band * d->stride_h + d->R) <= max_rows)
    band++;
  k.band = band;
  /* equal bands: the rows balanced over as many bands */
  int64_t nb = tpl_ceil_div(OH, k.band);
  k.band = tpl_ceil_div(OH, nb);
  return k;
}

tsl_status tsl_expand_dw_schedule(const tsl_te_program *p, const tsl_expand_dw_layer *d, const tsl_target *t,
                                  const tsl_expand_dw_knobs *kn, tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL result", WHO);
  *out = NULL;
  tsl_status st = tsl_expand_dw_check(d);
  if (st != TSL_OK) return st;
  tsl_expand_dw_knobs k = kn ? *kn : tsl_expand_dw_default_knobs(t, d);
  if (k.band < 1 || k.ow_block < 1 || k.ew_block < 1 || k.kb_block < 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knobs band %lld, ow_block %lld, ew_block %lld, kb_block %lld must be >= 1",
                     WHO, (long long)k.band, (long long)k.ow_block, (long long)k.ew_block, (long long)k.kb_block);
  if (!p || !tpl_find_named(p, "expand") || !tpl_find_named(p, "padded") || !tpl_find_named(p, "conv") ||
      !tpl_find_named(p, "out"))
    return tsl_error(TSL_ERR_INVALID, "%s: not an expand_depthwise_nchwc program", WHO);
  bool vec = d->block > 1;
  tpl_builder b;
  if ((st = tpl_begin(&b, p, WHO)) != TSL_OK) return st;
  /* out: (n, kb, band) parallel, then the band's rows, the row tiles, the tile */
  tpl_split(&b, "out", "kb", k.kb_block);
  tpl_split(&b, "out", "y", k.band);
  tpl_split(&b, "out", "x", k.ow_block);
  tpl_reorder(&b, "out", 8,
              (const char *[]){"n", "kb.outer", "y.outer", "kb.inner", "y.inner", "x.outer", "x.inner", "k"});
  tpl_name par;
  tpl_fuse_all(&b, "out", 3, (const char *[]){"n", "kb.outer", "y.outer"}, par);
  tpl_parallel(&b, "out", par);
  tpl_unroll(&b, "out", "x.inner");
  if (vec) tpl_vectorize(&b, "out", "k");
  /* conv: the register tile of one output row tile, the window unrolled */
  tpl_split(&b, "conv", "x", k.ow_block);
  tpl_reorder(&b, "conv", 8, (const char *[]){"n", "kb", "y", "x.outer", "r", "s", "x.inner", "k"});
  tpl_unroll(&b, "conv", "x.inner");
  if (d->R * d->S <= 25) {
    tpl_unroll(&b, "conv", "s");
    if (d->R * d->S <= 9) tpl_unroll(&b, "conv", "r");
  }
  if (vec) tpl_vectorize(&b, "conv", "k");
  tpl_compute_at(&b, "conv", "out", "x.outer");
  /* padded (f1, bias, zero padding): the band's rows of kb_block channel blocks, per
   * parallel iteration, in tiles of ew columns; expand's register tile (kb_block x ew
   * vectors: each broadcast input value feeds kb_block weights) in each */
  tpl_split(&b, "padded", "x", k.ew_block);
  tpl_reorder(&b, "padded", 6, (const char *[]){"n", "y", "x.outer", "kb", "x.inner", "k"});
  tpl_unroll(&b, "padded", "x.inner");
  if (vec) tpl_vectorize(&b, "padded", "k");
  tpl_split(&b, "expand", "x", k.ew_block);
  tpl_reorder(&b, "expand", 8, (const char *[]){"n", "y", "x.outer", "cb", "c", "kb", "x.inner", "k"});
  if (k.kb_block > 1) tpl_unroll(&b, "expand", "kb");
  tpl_unroll(&b, "expand", "x.inner");
  if (vec) tpl_vectorize(&b, "expand", "k");
  tpl_compute_at(&b, "expand", "padded", "x.outer");
  tpl_compute_at(&b, "padded", "out", par);
  return tpl_finish(&b, out);
}

/* The rule (measured on znver5, issue 17), two conditions:
 *  - the unfused pair's working set of one image, the expanded tensor the expand writes
 *    plus the output the depthwise writes while it reads the expanded one back, does not
 *    fit in L2. Below that the separate kernels read the expanded tensor back from L2;
 *  - the fused kernel's extra expand work is small against the traffic it saves. It
 *    computes the expand over the padded extent (the padding's rows and columns, then
 *    replaced by zeros) and recomputes each band's halo rows: rows x WP positions (rows
 *    over all bands with the default knobs) against H x W, 2 C FLOPs per position and
 *    expanded channel, C the input channels as the kernel sums them (whole blocks of X).
 *    It saves writing and reading back the expanded tensor, 8 bytes per position and
 *    channel. Fused when the extra FLOPs per saved byte are at most 3:
 *    (rows x WP - H x W) x C <= 12 x H x W.
 * MobileNetV2 / V3 / EfficientNet-B0 steps, fused against the two kernels, 1 thread (2):
 *   16 lanes, L2 1 MiB:
 *     28 x 28 x 192, C 32, 3 x 3 s1 (588 + 588 KiB, 0.15 x 32 = 4.8): 0.072 (0.059) ms against 0.112 (0.074): fused
 *     56 x 56 x 72 (80), C 24 (32), 3 x 3 s1 (980 + 980 KiB, 3.5):    0.113 (0.098) ms against 0.154 (0.122): fused
 *     28 x 28 x 192, C 32, 3 x 3 s2 (588 + 147 KiB):                  0.064 (0.040) ms against 0.058 (0.044)
 *     14 x 14 x 576, C 96, 3 x 3 s1 (441 + 441 KiB):                  0.174 (0.116) ms against 0.135 (0.083)
 *     28 x 28 x 240, C 40 (48), 5 x 5 s1 (735 + 735 KiB, 14.7):       0.217 ms against 0.21
 *     14 x 14 x 672, C 112, 5 x 5 s1 (514.5 + 514.5 KiB, 73):         0.35 ms against 0.22
 *   8 lanes (x86-64-avx2 on znver5), L2 512 KiB:
 *     14 x 14 x 576, C 96, 3 x 3 s2 (441 + 110 KiB, 21):              0.276 ms against 0.241
 *     14 x 14 x 672, C 112, 3 x 3 s1 (514.5 + 514.5 KiB, 34):         0.45 ms against 0.36
 * (sizes in brackets: channels rounded up to whole blocks, as the kernel runs them). The
 * earlier rule, the expanded tensor alone past L2, fused neither of the first two, nor
 * the 8-lane 14 x 14 x 576 (441 KiB), and fused the 8-lane 14 x 14 x 672 (514.5 KiB). */
bool tsl_expand_dw_pays(const tsl_expand_dw_layer *d, const tsl_target *t) {
  int64_t X = d->block, EB = (d->E + X - 1) / X, OH = tsl_expand_dw_out_h(d);
  int64_t expanded_bytes = EB * X * d->H * d->W * 4;
  int64_t out_bytes = EB * X * OH * tsl_expand_dw_out_w(d) * 4;
  if (expanded_bytes + out_bytes <= tpl_l2_bytes(t)) return false;
  tsl_expand_dw_knobs k = tsl_expand_dw_default_knobs(t, d);
  int64_t rows = tpl_ceil_div(OH, k.band) * ((k.band - 1) * d->stride_h + d->R);
  int64_t area = d->H * d->W, extra = tpl_max(0, rows * (d->W + d->pad_left + d->pad_right) - area);
  return extra * tpl_ceil_div(d->C, X) * X <= 12 * area;
}

/* ---- the template "expand_depthwise_nchwc.band" ------------------------------------ */

/* The balanced sizes of an extent split into pieces of at most max, descending:
 * ceil(extent / n) for n = ceil(extent / m), m = max..1 (no piece count has two sizes),
 * at most cap of them. The sequence does not increase: a repeat is the last one. */
static int balanced_sizes(int64_t extent, int64_t max, int cap, int64_t *v) {
  int n = 0;
  for (int64_t m = tpl_min(max, extent); m >= 1 && n < cap; m--) {
    int64_t size = tpl_ceil_div(extent, tpl_ceil_div(extent, m));
    if (n == 0 || v[n - 1] != size) v[n++] = size;
  }
  return n;
}

static tsl_status edw_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  tsl_expand_dw_layer d;
  tsl_status st = tsl_expand_dw_layer_of_program(p, &d);
  if (st != TSL_OK) return st;
  tsl_expand_dw_knobs k = tsl_expand_dw_default_knobs(t, &d);
  memset(out, 0, sizeof *out);
  int64_t regs = tsl_target_vector_registers(t), X = d.block, EB = tpl_ceil_div(d.E, X);
  int64_t OH = tsl_expand_dw_out_h(&d), OW = tsl_expand_dw_out_w(&d), WP = d.W + d.pad_left + d.pad_right;
  int64_t v[TSL_MAX_KNOB_VALUES], all[TSL_MAX_KNOB_VALUES];
  /* bands: the balanced row counts whose padded rows of one channel block stay within
   * half of L2 (the default's quarter, doubled); every one up to 8 rows, above that
   * steps of at least 1.25x (a 112-row image: 112, 56, 38, 28, 19, 14, 11, 8, ..., 1) */
  int64_t row_bytes = WP * X * 4, max_rows = tpl_max(d.R, tpl_l2_bytes(t) / 2 / row_bytes);
  int64_t max_band = tpl_max(1, (max_rows - d.R) / d.stride_h + 1);
  int nb = balanced_sizes(OH, max_band, TSL_MAX_KNOB_VALUES, all), n = 0;
  for (int i = 0; i < nb; i++)
    if (all[i] <= 8 || n == 0 || all[i] * 5 <= v[n - 1] * 4) v[n++] = all[i];
  st = tpl_knob(out, "band", TSL_KNOB_SPLIT, n, v, k.band);
  /* register tiles: one accumulator a column, 4 registers left for weights and loads */
  int64_t max_acc = tpl_max(1, regs - 4);
  if (st == TSL_OK) st = tpl_knob(out, "ow_block", TSL_KNOB_SPLIT, balanced_sizes(OW, max_acc, 16, v), v, k.ow_block);
  if (st == TSL_OK) st = tpl_knob(out, "ew_block", TSL_KNOB_SPLIT, balanced_sizes(WP, max_acc, 16, v), v, k.ew_block);
  if (st != TSL_OK) return st;
  n = 0;
  for (int64_t b = 1; b <= 4 && b <= EB; b *= 2) v[n++] = b;
  return tpl_knob(out, "kb_block", TSL_KNOB_SPLIT, n, v, k.kb_block);
}

static tsl_status edw_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                              tsl_config *out) {
  tsl_expand_dw_layer d;
  tsl_status st = tsl_expand_dw_layer_of_program(p, &d);
  if (st != TSL_OK) return st;
  tsl_expand_dw_knobs k = tsl_expand_dw_default_knobs(t, &d);
  static const char *const names[] = {"band", "ow_block", "ew_block", "kb_block"};
  const int64_t values[] = {k.band, k.ow_block, k.ew_block, k.kb_block};
  return tpl_config_of(s, 4, names, values, out);
}

static tsl_status edw_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                            const tsl_config *c, tsl_schedule **out) {
  tsl_expand_dw_layer d;
  tsl_status st = tsl_expand_dw_layer_of_program(p, &d);
  if (st != TSL_OK) return st;
  tsl_expand_dw_knobs k = tsl_expand_dw_default_knobs(t, &d);
  k.band = tsl_config_get(s, c, "band", k.band);
  k.ow_block = tsl_config_get(s, c, "ow_block", k.ow_block);
  k.ew_block = tsl_config_get(s, c, "ew_block", k.ew_block);
  k.kb_block = tsl_config_get(s, c, "kb_block", k.kb_block);
  return tsl_expand_dw_schedule(p, &d, t, &k, out);
}

static const tsl_template templates[] = {
    {"expand_depthwise_nchwc.band", "expand_depthwise_nchwc",
     "expand 1x1 + depthwise NCHW[x]c fused: bands of output rows per parallel iteration, the expand's register tile "
     "per band (ops/conv2d/expand_depthwise.h)",
     1, edw_space, edw_default, edw_apply},
};

const tsl_template *tsl_expand_dw_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
