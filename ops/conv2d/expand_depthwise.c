/* The expand 1x1 + depthwise pair as one operator (expand_depthwise.h). */
#include "ops/conv2d/expand_depthwise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "dsl/text_buf.h"
#include "ops/tpl_util.h"

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

static void put_act(tsl_text_buf *b, const tsl_expand_dw_act *a, const char *v) {
  if (a->act == 1) {
    tsl_text_put(b, "max(%s, 0.0)", v);
  } else if (a->act == 2) {
    tsl_text_put(b, "min(max(%s, ", v);
    tsl_text_put_float(b, a->clip_min);
    tsl_text_put(b, "), ");
    tsl_text_put_float(b, a->clip_max);
    tsl_text_put(b, ")");
  } else {
    tsl_epilogue_put_dsl(&a->fn, v, b);
  }
}

static void put_act_key(tsl_text_buf *b, const tsl_expand_dw_act *a) {
  if (a->act == 1) tsl_text_put(b, "relu");
  else if (a->act == 2) tsl_text_put(b, "clip(%.17g,%.17g)", a->clip_min, a->clip_max);
  else if (tsl_epilogue_present(&a->fn)) tsl_epilogue_put_key(&a->fn, b);
  else tsl_text_put(b, "none");
}

tsl_status tsl_expand_dw_key(const tsl_expand_dw_layer *d, char **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL key");
  *out = NULL;
  tsl_status st = tsl_expand_dw_check(d);
  if (st != TSL_OK) return st;
  tsl_text_buf b = {0};
  tsl_text_put(&b, "expand_depthwise_nchwc:N=%lld,C=%lld,H=%lld,W=%lld,E=%lld,R=%lld,S=%lld,stride=%lldx%lld,"
                   "pads=%lld,%lld,%lld,%lld,block=%lld,expand_act=",
               (long long)d->N, (long long)d->C, (long long)d->H, (long long)d->W, (long long)d->E, (long long)d->R,
               (long long)d->S, (long long)d->stride_h, (long long)d->stride_w, (long long)d->pad_top,
               (long long)d->pad_left, (long long)d->pad_bottom, (long long)d->pad_right, (long long)d->block);
  put_act_key(&b, &d->expand_act);
  tsl_text_put(&b, ",dw_act=");
  put_act_key(&b, &d->dw_act);
  if (b.oom) {
    free(b.s);
    return tsl_error(TSL_ERR_NOMEM, "expand_depthwise: out of memory");
  }
  *out = b.s;
  return TSL_OK;
}

/* Whether f(0) != 0 for activation a: then the lanes past E of the last block would not
 * stay zero and get a guard. */
static bool moves_zero(const tsl_expand_dw_act *a) {
  if (a->act == 2) return a->clip_min > 0.0 || a->clip_max < 0.0;
  if (!tsl_epilogue_present(&a->fn)) return false;
  tsl_epilogue e = a->fn;
  e.channels = 1;
  return tsl_epilogue_guarded(&e);
}

tsl_status tsl_expand_dw_program(const tsl_expand_dw_layer *d, tsl_te_program **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "expand_depthwise: NULL program");
  *out = NULL;
  tsl_status st = tsl_expand_dw_check(d);
  if (st != TSL_OK) return st;
  long long H = d->H, W = d->W, pt = d->pad_top, pl = d->pad_left, X = d->block;
  long long HP = d->H + d->pad_top + d->pad_bottom, WP = d->W + d->pad_left + d->pad_right;
  tsl_text_buf b = {0};
  tsl_text_put(&b,
               "op expand_depthwise_nchwc(data: f32[N, CB, H, W, X], w1: f32[EB, CB, X, X], b1: f32[EB, X],\n"
               "                          weight: f32[EB, R, S, X], bias: f32[EB, X])\n"
               "  @tag(\"expand_1x1\")\n"
               "  expand[n, kb, y, x, k] = sum(cb, c: data[n, cb, min(max(y - %lld, 0), %lld), min(max(x - %lld, 0), "
               "%lld), c]\n"
               "                                       * w1[kb, cb, c, k])\n"
               "    where y < %lld, x < %lld\n"
               "  @tag(\"injective\")\n"
               "  padded[n, kb, y, x, k] = select(y >= %lld && y < %lld && x >= %lld && x < %lld, ",
               pt, H - 1, pl, W - 1, HP, WP, pt, H + pt, pl, W + pl);
  put_act(&b, &d->expand_act, "(expand[n, kb, y, x, k] + b1[kb, k])");
  tsl_text_put(&b,
               ", 0.0)\n"
               "  @tag(\"depthwise_nchwc\")\n"
               "  conv[n, kb, y, x, k] = sum(r, s: padded[n, kb, y*%lld + r, x*%lld + s, k] * weight[kb, r, s, k])\n"
               "    where y < %lld, x < %lld\n"
               "  @tag(\"elemwise\")\n"
               "  out[n, kb, y, x, k] = ",
               (long long)d->stride_h, (long long)d->stride_w, (long long)tsl_expand_dw_out_h(d),
               (long long)tsl_expand_dw_out_w(d));
  bool guard = d->E % d->block != 0 && moves_zero(&d->dw_act);
  if (guard) tsl_text_put(&b, "select(kb*%lld + k < %lld, ", X, (long long)d->E);
  put_act(&b, &d->dw_act, "(conv[n, kb, y, x, k] + bias[kb, k])");
  tsl_text_put(&b, "%s\n", guard ? ", 0.0)" : "");
  if (b.oom) {
    free(b.s);
    return tsl_error(TSL_ERR_NOMEM, "expand_depthwise: out of memory");
  }
  tsl_dsl_module *m = NULL;
  st = tsl_dsl_parse(b.s, "expand_depthwise", &m);
  free(b.s);
  if (st != TSL_OK) return st;
  int64_t CB = (d->C + X - 1) / X, EB = (d->E + X - 1) / X;
  const int64_t s_data[] = {d->N, CB, d->H, d->W, X}, s_w1[] = {EB, CB, X, X}, s_b[] = {EB, X},
                s_w[] = {EB, d->R, d->S, X};
  const int64_t *shapes[] = {s_data, s_w1, s_b, s_w, s_b};
  const int ndims[] = {5, 4, 2, 4, 2};
  st = tsl_dsl_instantiate(tsl_dsl_module_op(m, 0), 5, shapes, ndims, 0, NULL, out);
  tsl_dsl_module_free(m);
  return st;
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

/* The rule (measured on znver5, docs in the commit): fuse when the expanded tensor of one
 * image does not fit in L2 — below that the separate kernels read it back from cache and
 * the halo's recompute is not paid back. */
bool tsl_expand_dw_pays(const tsl_expand_dw_layer *d, const tsl_target *t) {
  int64_t X = d->block, EB = (d->E + X - 1) / X;
  int64_t expanded_bytes = EB * X * d->H * d->W * 4;
  return expanded_bytes > tpl_l2_bytes(t);
}
