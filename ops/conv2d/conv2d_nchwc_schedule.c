/* The direct NCHW[x]c convolution template (see conv2d_nchwc.h): shape analysis,
 * default knobs, knobs -> schedule steps, kernel names, and the generic-interface
 * adapters for the tuner. */
#include "ops/conv2d/conv2d_nchwc_schedule.h"

#include <stdio.h>
#include <string.h>

#include "ir/analysis.h"
#include "ops/conv2d/conv_common.h"
#include "ops/tpl_util.h"

static const char *const WHO = "conv2d_nchwc template";

tsl_status tsl_conv2d_nchwc_get_shape(const tsl_te_program *p, tsl_conv2d_nchwc_shape *out) {
  memset(out, 0, sizeof *out);
  tpl_conv_geometry g;
  bool flat = p && tpl_find_tagged(p, "conv2d_nchwc_1x1") != NULL;
  tsl_status st = tpl_conv_geometry_of(p, flat ? "conv2d_nchwc_1x1" : "conv2d_nchwc", WHO, &g);
  if (st != TSL_OK) return st;
  const tsl_te_op *conv = g.conv;
  if (!g.weight || (flat ? (conv->nreduce != 2 || g.weight->ndim != 4 || g.data->ndim != 4)
                         : (conv->nreduce != 4 || g.weight->ndim != 6)))
    return tsl_error(TSL_ERR_INVALID, "%s: program %s: the conv stage is not a reduction over (cb, r, s, c) of a "
                                      "6-D OIHW[x]i[y]o weight, nor a 1x1 GEMM over (cb, c)",
                     WHO, p->name ? p->name : "?");
  out->N = g.data->shape[0];
  /* the reduction's channel blocks: the data's, or the band of a block-diagonal conv */
  out->CB = g.weight->shape[1];
  out->H = g.data->shape[2];
  out->W = flat ? 1 : g.data->shape[3];
  out->X = g.X;
  out->KB = g.weight->shape[0];
  out->R = g.R;
  out->S = g.S;
  out->Y = g.Y;
  out->OH = g.OH;
  out->OW = g.OW;
  out->stride_h = g.stride_h;
  out->stride_w = g.stride_w;
  out->dilation_h = g.dilation_h;
  out->dilation_w = g.dilation_w;
  out->padded = g.pad_top || g.pad_left || g.pad_bottom || g.pad_right;
  out->has_epilogue = g.has_epilogue;
  out->flat = flat;
  out->bands[0] = 1.0;
  for (int64_t oc = 1; oc <= 4; oc++) {
    out->bands[oc] = flat ? 1.0 : tpl_conv_tile_input_blocks(&g, oc);
    out->banded |= out->bands[oc] > 1.0;
  }
  return TSL_OK;
}

/* Cycles of one reduction step of a w x oc register tile (oc blocks of y lanes, rpa
 * registers each): w*oc*rpa FMAs at 2 per cycle, w broadcasts per distinct input block
 * the tile's blocks read (`bands`: 1 for a dense conv) + oc*rpa weight loads at 1.5 per
 * cycle (measured: a 12 x 1 tile, 13 loads per 12 FMAs, runs at 65% of a 6 x 2 tile), and at least the FMA latency
 * of 4 cycles (fewer than 8 independent chains leave the FMA units idle). Zen 2-5 and
 * Skylake-class cores. */
static double step_cycles(int64_t w, int64_t oc, int64_t rpa, double bands) {
  double fma = (double)(w * oc * rpa) / 2.0, loads = ((double)w * bands + (double)(oc * rpa)) / 1.5;
  double c = fma > loads ? fma : loads;
  return c > 4.0 ? c : 4.0;
}

/* Cycles of the whole output with tiles of w columns and oc blocks, the column and block
 * tails included; `red` reduction steps per tile, plus the accumulators' set-up, stores
 * and epilogue (about 2 cycles per accumulator). */
static double output_cycles(int64_t width, int64_t KB, int64_t w, int64_t oc, int64_t rpa, double red,
                            const double *bands) {
  int64_t fx = width / w, tx = width % w, fk = KB / oc, tk = KB % oc;
  double c = 0.0;
  const int64_t ws[2] = {w, tx}, nws[2] = {fx, tx ? 1 : 0}, ocs[2] = {oc, tk}, nocs[2] = {fk, tk ? 1 : 0};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      if (nws[i] && nocs[j])
        c += (double)(nws[i] * nocs[j]) *
             (red * step_cycles(ws[i], ocs[j], rpa, bands[ocs[j]]) + 2.0 * (double)(ws[i] * ocs[j] * rpa));
  return c;
}

tsl_conv2d_nchwc_knobs tsl_conv2d_nchwc_default_knobs(const tsl_target *t, const tsl_conv2d_nchwc_shape *sh,
                                                      bool gemm) {
  tsl_conv2d_nchwc_knobs k;
  memset(&k, 0, sizeof k);
  int64_t lanes = tsl_target_f32_lanes(t);
  int64_t rpa = tpl_max(1, tpl_ceil_div(sh->Y, lanes));
  int64_t regs = tsl_target_vector_registers(t);
  /* a _1x1 op tiles its one pixel axis (OH pixels) */
  int64_t width = sh->flat ? sh->OH : gemm ? sh->OH * sh->OW : sh->OW;
  double red = (double)(sh->CB * sh->R * sh->S * sh->X);
  double best = 0.0;
  k.oc_blocks = 1;
  k.ow_block = 1;
  for (int64_t oc = 1; oc <= tpl_min(sh->KB, 4); oc++)
    for (int64_t w = 1; w <= tpl_min(16, width); w++) {
      /* live registers: the accumulators, the smaller of the weight and broadcast sets
       * (oc_major keeps the weights, else the broadcasts are reloaded) and one more; a
       * 17th spills (2 x 7 + 2 + 1 ran at half the speed of 2 x 6 + 2 + 1) */
      int64_t live = w * oc * rpa + tpl_min(oc * rpa, w) + 1 + (sh->banded ? 1 : 0);
      if (live > regs) continue;
      double c = output_cycles(width, sh->KB, w, oc, rpa, red, sh->bands);
      if (best == 0.0 || c < best * (1.0 - 1e-9)) {
        best = c;
        k.oc_blocks = oc;
        k.ow_block = w;
      }
    }
  k.oh_block = 1;
  /* the weights one tile streams through its reduction: keep them in half of L2 */
  int64_t tile_weights = sh->CB * sh->R * sh->S * sh->X * sh->Y * k.oc_blocks * 4;
  k.ic_chunk = sh->CB;
  if (tile_weights > tpl_l2_bytes(t) / 2) {
    int64_t per_cb = sh->R * sh->S * sh->X * sh->Y * k.oc_blocks * 4;
    k.ic_chunk = tpl_max(1, (tpl_l2_bytes(t) / 2) / per_cb);
    /* equal chunks */
    int64_t nchunks = tpl_ceil_div(sh->CB, k.ic_chunk);
    k.ic_chunk = tpl_ceil_div(sh->CB, nchunks);
  }
  k.oc_major = k.oc_blocks * rpa > k.ow_block;
  /* within lowering's unroll limit (a wide block x on a narrow target: 16 lanes x a
   * large tile) */
  k.unroll_ic = tpl_unroll_fits((sh->Y == 1 ? 1 : k.ow_block * rpa) * k.oc_blocks * sh->X);
  k.unroll_kw = false;
  k.loop_order = 0;
  k.pad_mode = sh->padded ? 1 : 0;
  k.parallel = true;
  return k;
}

tsl_status tsl_conv2d_nchwc_knobs_check(const tsl_conv2d_nchwc_knobs *k, const tsl_conv2d_nchwc_shape *sh) {
  if (!k || !sh) return tsl_error(TSL_ERR_INVALID, "%s: no knobs", WHO);
  if (k->ic_chunk < 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob ic_chunk = %lld (must be >= 1)", WHO, (long long)k->ic_chunk);
  if (k->loop_order < 0 || k->loop_order > 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob loop_order = %d (must be 0 or 1)", WHO, k->loop_order);
  return tpl_tile_knobs_check(WHO, k->ow_block, k->oh_block, k->oc_blocks, k->pad_mode);
}

/* ---- the schedule ---------------------------------------------------------- */

tsl_status tsl_conv2d_nchwc_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_conv2d_nchwc_knobs *kn,
                                     tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL result", WHO);
  *out = NULL;
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_conv2d_nchwc_knobs k = kn ? *kn : tsl_conv2d_nchwc_default_knobs(t, &sh, sh.flat);
  if ((st = tsl_conv2d_nchwc_knobs_check(&k, &sh)) != TSL_OK) return st;

  tpl_conv_tile tile;
  memset(&tile, 0, sizeof tile);
  tile.oc_blocks = k.oc_blocks;
  tile.oh_block = k.oh_block;
  tile.ow_block = k.ow_block;
  tile.ic_chunk = k.ic_chunk;
  tile.oc_major = k.oc_major;
  tile.loop_order = k.loop_order;
  tile.parallel = k.parallel;
  tile.unroll_names[0] = k.unroll_ic ? "c" : NULL;
  int nr = 0;
  tile.reduce_names[nr++] = "cb";
  if (!sh.flat) {
    tile.reduce_names[nr++] = "r";
    tile.reduce_names[nr++] = "s";
  }
  tile.reduce_names[nr++] = "c";
  tile.nreduce = nr;
  tile.unroll_names[1] = k.unroll_kw && !sh.flat ? "s" : NULL;
  tile.chunk_axis = "cb";
  tile.KB = sh.KB;
  tile.OH = sh.flat ? 1 : sh.OH;
  tile.OW = sh.flat ? sh.OH : sh.OW;
  tile.CB = sh.CB;
  tile.pad_stage = !sh.padded ? TPL_PAD_INLINE : (tpl_pad_mode)k.pad_mode;
  tile.pad_vector = sh.X > 1;

  tpl_builder b;
  if ((st = tpl_begin(&b, p, WHO)) != TSL_OK) return st;
  tpl_conv_tile_schedule(&b, p, sh.flat ? "conv2d_nchwc_1x1" : "conv2d_nchwc", &tile);
  return tpl_finish(&b, out);
}

const char *tsl_conv2d_nchwc_kernel_name(const tsl_te_program *p, const tsl_conv2d_nchwc_knobs *k, char *buf,
                                         size_t n) {
  tpl_conv_geometry g;
  bool flat = p && tpl_find_tagged(p, "conv2d_nchwc_1x1") != NULL;
  if (tpl_conv_geometry_of(p, flat ? "conv2d_nchwc_1x1" : "conv2d_nchwc", WHO, &g) != TSL_OK) {
    snprintf(buf, n, "conv2d_nchwc");
    return buf;
  }
  uint64_t h = tpl_knob_hash(0, NULL);
  if (k) {
    const int64_t v[] = {k->ow_block, k->oh_block, k->oc_blocks, k->ic_chunk, k->oc_major, k->unroll_ic,
                         k->unroll_kw, k->loop_order, k->pad_mode, k->parallel};
    h = tpl_knob_hash((int)(sizeof v / sizeof v[0]), v);
  }
  return tpl_conv_kernel_name(&g, "conv2d", flat ? "gemm" : NULL, h, buf, n);
}

/* ---- generic interface ------------------------------------------------------ */

/* The tile limits of the space: accumulators within the vector registers less one (a
 * weight or broadcast), and the copies the unroll knobs add (c: X, s: S) when the space
 * offers them. */
static tpl_tile_limits tile_limits(const tsl_target *t, const tsl_conv2d_nchwc_shape *sh, bool unroll_ic,
                                   bool unroll_kw) {
  tpl_tile_limits l;
  memset(&l, 0, sizeof l);
  l.max_ow = tpl_min(16, sh->flat ? sh->OH : sh->OW);
  l.max_oh = sh->flat ? 1 : tpl_min(4, sh->OH);
  l.max_oc = tpl_min(4, sh->KB);
  l.lanes = tsl_target_f32_lanes(t);
  l.acc_regs = tpl_max(1, tpl_ceil_div(sh->Y, l.lanes));
  l.vector_x = sh->Y == 1;
  l.max_acc = tsl_target_vector_registers(t) - 1;
  l.unroll = (unroll_ic ? sh->X : 1) * (unroll_kw ? sh->S : 1);
  return l;
}

/* Which unroll options the space offers: each only when the default tile with it (and
 * with the options before it) stays within lowering's unroll limit. */
static void unroll_options(const tsl_target *t, const tsl_conv2d_nchwc_shape *sh, const tsl_conv2d_nchwc_knobs *d,
                           bool *ic, bool *kw) {
  tpl_tile_limits l = tile_limits(t, sh, false, false);
  int64_t copies = tpl_tile_copies(&l, d->ow_block, sh->flat ? 1 : d->oh_block, d->oc_blocks);
  *ic = tpl_unroll_fits(copies * sh->X);
  *kw = !sh->flat && tpl_unroll_fits(copies * (*ic ? sh->X : 1) * sh->S);
}

static tsl_status space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_conv2d_nchwc_knobs d = tsl_conv2d_nchwc_default_knobs(t, &sh, sh.flat);
  bool ic, kw;
  unroll_options(t, &sh, &d, &ic, &kw);
  memset(out, 0, sizeof *out);
  tpl_tile_limits l = tile_limits(t, &sh, ic, kw);
  if ((st = tpl_tile_knob(out, &l, tpl_tile_value(d.ow_block, sh.flat ? 1 : d.oh_block, d.oc_blocks))) != TSL_OK)
    return st;
  int64_t v[TSL_MAX_KNOB_VALUES];
  int nv = 0;
  for (int64_t c = 1; c < sh.CB && nv < 16; c *= 2) v[nv++] = c;
  v[nv++] = sh.CB;
  if ((st = tpl_knob(out, "ic_chunk", TSL_KNOB_SPLIT, nv, v, d.ic_chunk)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1}, pads[] = {0, 1, 2};
  if ((st = tpl_knob(out, "oc_major", TSL_KNOB_REORDER, 2, bools, d.oc_major)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "loop_order", TSL_KNOB_REORDER, 2, bools, d.loop_order)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "unroll_ic", TSL_KNOB_ANNOTATE, ic ? 2 : 1, bools, d.unroll_ic)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "unroll_kw", TSL_KNOB_ANNOTATE, kw ? 2 : 1, bools, d.unroll_kw)) != TSL_OK) return st;
  if (sh.padded && (st = tpl_knob(out, "pad_mode", TSL_KNOB_OTHER, 3, pads, d.pad_mode)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_status default_config(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                 tsl_config *out) {
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_conv2d_nchwc_knobs d = tsl_conv2d_nchwc_default_knobs(t, &sh, sh.flat);
  static const char *const names[] = {"tile",      "ic_chunk",  "oc_major", "loop_order",
                                      "unroll_ic", "unroll_kw", "pad_mode", "parallel"};
  const int64_t values[] = {tpl_tile_value(d.ow_block, sh.flat ? 1 : d.oh_block, d.oc_blocks),
                            d.ic_chunk, d.oc_major, d.loop_order, d.unroll_ic, d.unroll_kw, d.pad_mode, d.parallel};
  return tpl_config_of(s, 8, names, values, out);
}

static tsl_status apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s, const tsl_config *c,
                        tsl_schedule **out) {
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_conv2d_nchwc_knobs k = tsl_conv2d_nchwc_default_knobs(t, &sh, sh.flat);
  tpl_tile_parts(tsl_config_get(s, c, "tile", tpl_tile_value(k.ow_block, k.oh_block, k.oc_blocks)), &k.ow_block,
                 &k.oh_block, &k.oc_blocks);
  k.ic_chunk = tsl_config_get(s, c, "ic_chunk", k.ic_chunk);
  k.oc_major = tsl_config_get(s, c, "oc_major", k.oc_major) != 0;
  k.loop_order = (int)tsl_config_get(s, c, "loop_order", k.loop_order);
  k.unroll_ic = tsl_config_get(s, c, "unroll_ic", k.unroll_ic) != 0;
  k.unroll_kw = tsl_config_get(s, c, "unroll_kw", k.unroll_kw) != 0;
  k.pad_mode = (int)tsl_config_get(s, c, "pad_mode", k.pad_mode);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_conv2d_nchwc_schedule(p, t, &k, out);
}

/* Each template's full name is written out, so a name read in a records file is found
 * with grep; the macros share only the description and the functions. */
#define DIRECT_TEMPLATE(NAME, OP)                                                                               \
  {NAME, OP,                                                                                                    \
   "NCHW[x]c direct conv: register tile (ow x oc blocks), fused epilogue, optional padded copy and "            \
   "input-channel chunks (ops/conv2d/conv2d_nchwc_schedule.h)",                                                  \
   2, space, default_config, apply}
#define GEMM_TEMPLATE(NAME, OP)                                                                                 \
  {NAME, OP, "NCHW[x]c 1x1 conv as a GEMM over the pixel axis (ops/conv2d/conv2d_nchwc_schedule.h)", 2,          \
   space, default_config, apply}

static const tsl_template templates[] = {
    DIRECT_TEMPLATE("conv2d_nchwc.direct", "conv2d_nchwc"),
    DIRECT_TEMPLATE("conv2d_nchwc_bias.direct", "conv2d_nchwc_bias"),
    DIRECT_TEMPLATE("conv2d_nchwc_bias_add.direct", "conv2d_nchwc_bias_add"),
    DIRECT_TEMPLATE("conv2d_nchwc_blockdiag_bias.direct", "conv2d_nchwc_blockdiag_bias"),
    DIRECT_TEMPLATE("conv2d_nchwc_blockdiag_bias_add.direct", "conv2d_nchwc_blockdiag_bias_add"),
    GEMM_TEMPLATE("conv2d_nchwc_1x1_bias.gemm", "conv2d_nchwc_1x1_bias"),
    GEMM_TEMPLATE("conv2d_nchwc_1x1_bias_add.gemm", "conv2d_nchwc_1x1_bias_add"),
    GEMM_TEMPLATE("conv2d_nchwc_1x1_bias_scale.gemm", "conv2d_nchwc_1x1_bias_scale"),
    GEMM_TEMPLATE("conv2d_nchwc_1x1_bias_add_scale.gemm", "conv2d_nchwc_1x1_bias_add_scale"),
};

const tsl_template *tsl_conv2d_nchwc_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
