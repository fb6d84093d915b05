/* The direct NCHW[x]c convolution template (see conv2d_nchwc.h): shape analysis,
 * default knobs, knobs -> schedule steps, kernel names, and the generic-interface
 * adapters for the tuner. */
#include "schedule/templates/conv2d_nchwc.h"

#include <stdio.h>
#include <string.h>

#include "ir/analysis.h"
#include "schedule/templates/conv_common.h"
#include "schedule/templates/tpl_util.h"

static const char *const WHO = "conv2d_nchwc template";

tsl_status tsl_conv2d_nchwc_get_shape(const tsl_te_program *p, tsl_conv2d_nchwc_shape *out) {
  memset(out, 0, sizeof *out);
  tpl_conv_geometry g;
  tsl_status st = tpl_conv_geometry_of(p, "conv2d_nchwc", WHO, &g);
  if (st != TSL_OK) return st;
  const tsl_te_op *conv = g.conv;
  if (conv->nreduce != 4 || g.weight->ndim != 6)
    return tsl_error(TSL_ERR_INVALID, "%s: program %s: the conv stage is not a reduction over (cb, r, s, c) of a "
                                      "6-D OIHW[x]i[y]o weight",
                     WHO, p->name ? p->name : "?");
  out->N = g.data->shape[0];
  out->CB = g.data->shape[1];
  out->H = g.data->shape[2];
  out->W = g.data->shape[3];
  out->X = g.data->shape[4];
  out->KB = g.weight->shape[0];
  out->R = g.weight->shape[2];
  out->S = g.weight->shape[3];
  out->Y = g.weight->shape[5];
  out->OH = conv->axis[2].extent;
  out->OW = conv->axis[3].extent;
  out->stride_h = g.stride_h;
  out->stride_w = g.stride_w;
  out->dilation_h = g.dilation_h;
  out->dilation_w = g.dilation_w;
  out->padded = g.pad_top || g.pad_left || g.pad_bottom || g.pad_right;
  out->has_epilogue = g.has_epilogue;
  return TSL_OK;
}

bool tsl_conv2d_nchwc_gemm_applies(const tsl_conv2d_nchwc_shape *sh) {
  return sh->R == 1 && sh->S == 1 && sh->stride_h == 1 && sh->stride_w == 1 && !sh->padded;
}

/* Relative cost of covering `extent` columns with tiles of `block` columns when a tile
 * of w columns and oc output blocks costs max(w*oc, chains) + overhead: FMA latency
 * times issue width (`chains`) independent accumulators keep the FMA units busy, fewer
 * leave them idle; `overhead` stands for the tile's loop set-up and stores. */
static double tile_cost(int64_t extent, int64_t block, int64_t oc, int64_t chains, double overhead) {
  int64_t full = extent / block, tail = extent % block;
  double c = (double)full * ((double)tpl_max(block * oc, chains) + overhead);
  if (tail) c += (double)tpl_max(tail * oc, chains) + overhead;
  return c;
}

tsl_conv2d_nchwc_knobs tsl_conv2d_nchwc_default_knobs(const tsl_target *t, const tsl_conv2d_nchwc_shape *sh,
                                                      bool gemm) {
  tsl_conv2d_nchwc_knobs k;
  memset(&k, 0, sizeof k);
  int64_t lanes = tpl_lanes(t);
  int64_t regs_per_acc = tpl_max(1, tpl_ceil_div(sh->Y, lanes));
  int regs = tpl_vector_registers(t);
  /* accumulators + the weights of the tile + one broadcast must fit the register file */
  int64_t chains = 8; /* FMA latency 4 x 2 issue ports (Zen 2-5, Skylake-X, Neoverse) */
  gemm = gemm && tsl_conv2d_nchwc_gemm_applies(sh);
  int64_t width = gemm ? sh->OH * sh->OW : sh->OW;
  double best = 0.0;
  k.oc_blocks = 1;
  k.ow_block = 1;
  for (int64_t oc = 1; oc <= tpl_min(sh->KB, 4); oc++) {
    /* one register spare: a full file spills (measured: 3 x 4 accumulators + 3 weights
     * + 1 broadcast on 16 ymm runs at half the speed of 2 x 6) */
    int64_t wregs = oc * regs_per_acc;
    int64_t max_acc = regs - wregs - 2;
    int64_t max_w = max_acc / (oc * regs_per_acc);
    for (int64_t w = 1; w <= tpl_min(max_w, width); w++) {
      /* cost per useful accumulator-step, over the whole output (kb tail included) */
      double c = (double)(sh->KB / oc) * tile_cost(width, w, oc * regs_per_acc, chains, 3.0);
      if (sh->KB % oc) c += tile_cost(width, w, (sh->KB % oc) * regs_per_acc, chains, 3.0);
      /* loads per FMA above one (2 loads and 2 FMAs issue per cycle) slow the tile */
      double loads = (double)(w + oc), fmas = (double)(w * oc);
      if (loads > fmas) c *= loads / fmas;
      c /= (double)(width * sh->KB * regs_per_acc);
      if (best == 0.0 || c < best - 1e-9) {
        best = c;
        k.oc_blocks = oc;
        k.ow_block = w;
      }
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
  k.oc_major = false;
  k.unroll_ic = true;
  k.unroll_kw = false;
  k.loop_order = 0;
  k.pad_mode = sh->padded ? 1 : 0;
  k.gemm = gemm;
  k.parallel = true;
  return k;
}

tsl_status tsl_conv2d_nchwc_knobs_check(const tsl_conv2d_nchwc_knobs *k, const tsl_conv2d_nchwc_shape *sh) {
  if (!k || !sh) return tsl_error(TSL_ERR_INVALID, "%s: no knobs", WHO);
  const struct {
    const char *name;
    int64_t v;
  } pos[] = {{"ow_block", k->ow_block}, {"oh_block", k->oh_block}, {"oc_blocks", k->oc_blocks},
             {"ic_chunk", k->ic_chunk}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < 1)
      return tsl_error(TSL_ERR_INVALID, "%s: knob %s = %lld (must be >= 1)", WHO, pos[i].name, (long long)pos[i].v);
  if (k->loop_order < 0 || k->loop_order > 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob loop_order = %d (must be 0 or 1)", WHO, k->loop_order);
  if (k->pad_mode < 0 || k->pad_mode > 2)
    return tsl_error(TSL_ERR_INVALID, "%s: knob pad_mode = %d (must be 0, 1 or 2)", WHO, k->pad_mode);
  if (k->gemm && !tsl_conv2d_nchwc_gemm_applies(sh))
    return tsl_error(TSL_ERR_INVALID, "%s: knob gemm needs a 1x1 stride-1 conv without padding (this one is %lldx%lld, "
                                      "stride %lldx%lld%s)",
                     WHO, (long long)sh->R, (long long)sh->S, (long long)sh->stride_h, (long long)sh->stride_w,
                     sh->padded ? ", padded" : "");
  if (k->gemm && k->oh_block != 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob oh_block = %lld with gemm (must be 1: rows are fused)", WHO,
                     (long long)k->oh_block);
  return TSL_OK;
}

/* ---- the schedule ---------------------------------------------------------- */

tsl_status tsl_conv2d_nchwc_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_conv2d_nchwc_knobs *kn,
                                     tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL result", WHO);
  *out = NULL;
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_conv2d_nchwc_knobs k = kn ? *kn : tsl_conv2d_nchwc_default_knobs(t, &sh, true);
  if ((st = tsl_conv2d_nchwc_knobs_check(&k, &sh)) != TSL_OK) return st;

  tpl_conv_tile tile;
  memset(&tile, 0, sizeof tile);
  tile.oc_blocks = k.oc_blocks;
  tile.oh_block = k.oh_block;
  tile.ow_block = k.ow_block;
  tile.ic_chunk = k.ic_chunk;
  tile.oc_major = k.oc_major;
  tile.loop_order = k.loop_order;
  tile.gemm = k.gemm;
  tile.parallel = k.parallel;
  tile.unroll_names[0] = k.unroll_ic ? "c" : NULL;
  tile.unroll_names[1] = k.unroll_kw ? "s" : NULL;
  tile.reduce_names[0] = "cb";
  tile.reduce_names[1] = "r";
  tile.reduce_names[2] = "s";
  tile.reduce_names[3] = "c";
  tile.nreduce = 4;
  tile.chunk_axis = "cb";
  tile.KB = sh.KB;
  tile.OH = sh.OH;
  tile.OW = sh.OW;
  tile.CB = sh.CB;
  tile.pad_stage = !sh.padded ? TPL_PAD_INLINE : (tpl_pad_mode)k.pad_mode;
  tile.pad_vector = sh.X > 1;

  tpl_builder b;
  if ((st = tpl_begin(&b, p, WHO)) != TSL_OK) return st;
  tpl_conv_tile_schedule(&b, p, "conv2d_nchwc", &tile);
  return tpl_finish(&b, out);
}

const char *tsl_conv2d_nchwc_kernel_name(const tsl_te_program *p, const tsl_conv2d_nchwc_knobs *k, char *buf,
                                         size_t n) {
  tpl_conv_geometry g;
  if (tpl_conv_geometry_of(p, "conv2d_nchwc", WHO, &g) != TSL_OK) {
    snprintf(buf, n, "conv2d_nchwc");
    return buf;
  }
  uint64_t h = 1469598103934665603ull;
  if (k) {
    const int64_t v[] = {k->ow_block, k->oh_block, k->oc_blocks, k->ic_chunk, k->oc_major, k->unroll_ic,
                         k->unroll_kw, k->loop_order, k->pad_mode, k->gemm, k->parallel};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
  }
  return tpl_conv_kernel_name(&g, "conv2d", k && k->gemm ? "gemm" : NULL, h, buf, n);
}

/* ---- generic interface ------------------------------------------------------ */

static tsl_status direct_space_impl(const tsl_te_program *p, const tsl_target *t, bool gemm, tsl_config_space *out) {
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  if (gemm && !tsl_conv2d_nchwc_gemm_applies(&sh))
    return tsl_error(TSL_ERR_UNSUPPORTED, "%s: gemm1x1 needs a 1x1 stride-1 conv without padding", WHO);
  tsl_conv2d_nchwc_knobs d = tsl_conv2d_nchwc_default_knobs(t, &sh, gemm);
  memset(out, 0, sizeof *out);
  int64_t width = gemm ? sh.OH * sh.OW : sh.OW;
  int64_t v[TSL_MAX_KNOB_VALUES];
  int nv = 0;
  for (int64_t w = 1; w <= tpl_min(16, width); w++) v[nv++] = w;
  if ((st = tpl_knob(out, "ow_block", TSL_KNOB_SPLIT, nv, v, d.ow_block)) != TSL_OK) return st;
  if (!gemm) {
    static const int64_t ohs[] = {1, 2, 3, 4};
    nv = 0;
    for (int i = 0; i < 4; i++) v[nv++] = tpl_min(ohs[i], sh.OH);
    if ((st = tpl_knob(out, "oh_block", TSL_KNOB_SPLIT, nv, v, d.oh_block)) != TSL_OK) return st;
  }
  nv = 0;
  for (int64_t o = 1; o <= tpl_min(8, sh.KB); o++) v[nv++] = o;
  if ((st = tpl_knob(out, "oc_blocks", TSL_KNOB_SPLIT, nv, v, d.oc_blocks)) != TSL_OK) return st;
  nv = 0;
  for (int64_t c = 1; c < sh.CB && nv < 16; c *= 2) v[nv++] = c;
  v[nv++] = sh.CB;
  if ((st = tpl_knob(out, "ic_chunk", TSL_KNOB_SPLIT, nv, v, d.ic_chunk)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1};
  if ((st = tpl_knob(out, "oc_major", TSL_KNOB_REORDER, 2, bools, d.oc_major)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "loop_order", TSL_KNOB_REORDER, 2, bools, d.loop_order)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "unroll_ic", TSL_KNOB_ANNOTATE, 2, bools, d.unroll_ic)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "unroll_kw", TSL_KNOB_ANNOTATE, 2, bools, d.unroll_kw)) != TSL_OK) return st;
  static const int64_t pads[] = {0, 1, 2};
  if (sh.padded && (st = tpl_knob(out, "pad_mode", TSL_KNOB_OTHER, 3, pads, d.pad_mode)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_conv2d_nchwc_knobs knobs_of(const tsl_te_program *p, const tsl_target *t, bool gemm,
                                       const tsl_config_space *s, const tsl_config *c, tsl_status *st) {
  tsl_conv2d_nchwc_shape sh;
  tsl_conv2d_nchwc_knobs k;
  memset(&k, 0, sizeof k);
  if ((*st = tsl_conv2d_nchwc_get_shape(p, &sh)) != TSL_OK) return k;
  k = tsl_conv2d_nchwc_default_knobs(t, &sh, gemm);
  k.ow_block = tsl_config_get(s, c, "ow_block", k.ow_block);
  k.oh_block = tsl_config_get(s, c, "oh_block", k.oh_block);
  k.oc_blocks = tsl_config_get(s, c, "oc_blocks", k.oc_blocks);
  k.ic_chunk = tsl_config_get(s, c, "ic_chunk", k.ic_chunk);
  k.oc_major = tsl_config_get(s, c, "oc_major", k.oc_major) != 0;
  k.loop_order = (int)tsl_config_get(s, c, "loop_order", k.loop_order);
  k.unroll_ic = tsl_config_get(s, c, "unroll_ic", k.unroll_ic) != 0;
  k.unroll_kw = tsl_config_get(s, c, "unroll_kw", k.unroll_kw) != 0;
  k.pad_mode = (int)tsl_config_get(s, c, "pad_mode", k.pad_mode);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return k;
}

static tsl_status config_of(const tsl_te_program *p, const tsl_target *t, bool gemm, const tsl_config_space *s,
                            tsl_config *out) {
  tsl_conv2d_nchwc_shape sh;
  tsl_status st = tsl_conv2d_nchwc_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_conv2d_nchwc_knobs d = tsl_conv2d_nchwc_default_knobs(t, &sh, gemm);
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) {
    const char *n = s->knobs[i].name;
    out->values[i] = strcmp(n, "ow_block") == 0    ? d.ow_block
                     : strcmp(n, "oh_block") == 0  ? d.oh_block
                     : strcmp(n, "oc_blocks") == 0 ? d.oc_blocks
                     : strcmp(n, "ic_chunk") == 0  ? d.ic_chunk
                     : strcmp(n, "oc_major") == 0  ? d.oc_major
                     : strcmp(n, "loop_order") == 0 ? d.loop_order
                     : strcmp(n, "unroll_ic") == 0 ? d.unroll_ic
                     : strcmp(n, "unroll_kw") == 0 ? d.unroll_kw
                     : strcmp(n, "pad_mode") == 0  ? d.pad_mode
                                                   : d.parallel;
  }
  return tsl_config_check(s, out);
}

static tsl_status direct_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  return direct_space_impl(p, t, false, out);
}
static tsl_status gemm_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  return direct_space_impl(p, t, true, out);
}
static tsl_status direct_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                 tsl_config *out) {
  return config_of(p, t, false, s, out);
}
static tsl_status gemm_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               tsl_config *out) {
  return config_of(p, t, true, s, out);
}
static tsl_status direct_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               const tsl_config *c, tsl_schedule **out) {
  tsl_status st;
  tsl_conv2d_nchwc_knobs k = knobs_of(p, t, false, s, c, &st);
  return st == TSL_OK ? tsl_conv2d_nchwc_schedule(p, t, &k, out) : st;
}
static tsl_status gemm_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             const tsl_config *c, tsl_schedule **out) {
  tsl_status st;
  tsl_conv2d_nchwc_knobs k = knobs_of(p, t, true, s, c, &st);
  return st == TSL_OK ? tsl_conv2d_nchwc_schedule(p, t, &k, out) : st;
}

#define DIRECT_TEMPLATE(OP)                                                                                       \
  {"" OP ".direct", OP, "NCHW[x]c direct conv: register tile (ow x oc blocks), fused epilogue, optional "         \
                        "padded copy and input-channel chunks (schedule/templates/conv2d_nchwc.h)",              \
   1, direct_space, direct_default, direct_apply}
#define GEMM_TEMPLATE(OP)                                                                                         \
  {"" OP ".gemm1x1", OP, "NCHW[x]c 1x1 conv as a GEMM over the fused pixel axis (schedule/templates/conv2d_nchwc.h)", \
   1, gemm_space, gemm_default, gemm_apply}

static const tsl_template templates[] = {
    DIRECT_TEMPLATE("conv2d_nchwc"),          GEMM_TEMPLATE("conv2d_nchwc"),
    DIRECT_TEMPLATE("conv2d_nchwc_bias"),     GEMM_TEMPLATE("conv2d_nchwc_bias"),
    DIRECT_TEMPLATE("conv2d_nchwc_bias_add"), GEMM_TEMPLATE("conv2d_nchwc_bias_add"),
};

const tsl_template *tsl_conv2d_nchwc_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
