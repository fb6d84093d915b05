/* Depthwise and grouped NCHW[x]c convolution templates (depthwise.h). */
#include "schedule/templates/depthwise.h"

#include <stdio.h>
#include <string.h>

#include "schedule/templates/conv_common.h"
#include "schedule/templates/tpl_util.h"

static const char *const WHO = "depthwise template";

tsl_status tsl_depthwise_get_shape(const tsl_te_program *p, tsl_depthwise_shape *out) {
  memset(out, 0, sizeof *out);
  tpl_conv_geometry g;
  bool grouped = tpl_find_tagged(p, "conv2d_nchwc_grouped") != NULL;
  tsl_status st = tpl_conv_geometry_of(p, grouped ? "conv2d_nchwc_grouped" : "depthwise_nchwc", WHO, &g);
  if (st != TSL_OK) return st;
  out->N = g.conv->axis[0].extent;
  out->KB = g.conv->axis[1].extent;
  out->OH = g.conv->axis[2].extent;
  out->OW = g.conv->axis[3].extent;
  out->Y = g.Y;
  out->R = g.R;
  out->S = g.S;
  out->padded = g.pad_top || g.pad_left || g.pad_bottom || g.pad_right;
  out->grouped = grouped;
  out->broadcast_input = grouped && !tpl_conv_input_varies_with_lane(&g);
  return TSL_OK;
}

/* Columns wasted on the tail, weighted like conv2d_nchwc.c's tile_cost: a tile of w
 * columns costs max(w, chains) + overhead. */
static double row_cost(int64_t extent, int64_t w, int64_t oc, int64_t chains) {
  int64_t full = extent / w, tail = extent % w;
  double c = (double)full * ((double)tpl_max(w * oc, chains) + 3.0);
  if (tail) c += (double)tpl_max(tail * oc, chains) + 3.0;
  return c;
}

tsl_depthwise_knobs tsl_depthwise_default_knobs(const tsl_target *t, const tsl_depthwise_shape *sh) {
  tsl_depthwise_knobs k;
  memset(&k, 0, sizeof k);
  int64_t rpa = tpl_max(1, tpl_ceil_div(sh->Y, tpl_lanes(t)));
  /* a grouped conv whose lanes all read one input value (groups 1: the direct conv over
   * the true channels) broadcasts it to two output blocks, like conv2d_nchwc */
  k.oc_blocks = sh->broadcast_input ? tpl_min(2, sh->KB) : 1;
  int64_t max_acc = (tpl_vector_registers(t) - (k.oc_blocks + 1) * rpa - 2) / (rpa * k.oc_blocks);
  k.oh_block = 1;
  double best = 0.0;
  k.ow_block = 1;
  for (int64_t w = 1; w <= tpl_min(max_acc, sh->OW); w++) {
    double c = row_cost(sh->OW, w, k.oc_blocks, 8) / (double)sh->OW;
    if (best == 0.0 || c < best - 1e-9) {
      best = c;
      k.ow_block = w;
    }
  }
  k.unroll_kernel = sh->R * sh->S <= (sh->grouped ? 9 : 49);
  k.loop_order = 0;
  /* depthwise reads each input ~9 times, so a padded copy costs as much as the conv:
   * guarded loads (inline) measured faster, except on tiny images where the copy of
   * the rows is cheap and the guards are most of the work */
  k.pad_mode = !sh->padded ? 0 : sh->grouped ? 1 : sh->OH * sh->OW <= 64 ? 2 : 0;
  k.parallel = true;
  return k;
}

tsl_status tsl_depthwise_knobs_check(const tsl_depthwise_knobs *k) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "%s: no knobs", WHO);
  if (k->ow_block < 1 || k->oh_block < 1 || k->oc_blocks < 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knobs ow_block %lld, oh_block %lld, oc_blocks %lld (each must be >= 1)", WHO,
                     (long long)k->ow_block, (long long)k->oh_block, (long long)k->oc_blocks);
  if (k->loop_order < 0 || k->loop_order > 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob loop_order = %d (must be 0 or 1)", WHO, k->loop_order);
  if (k->pad_mode < 0 || k->pad_mode > 2)
    return tsl_error(TSL_ERR_INVALID, "%s: knob pad_mode = %d (must be 0, 1 or 2)", WHO, k->pad_mode);
  return TSL_OK;
}

tsl_status tsl_depthwise_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_depthwise_knobs *kn,
                                  tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL result", WHO);
  *out = NULL;
  tsl_depthwise_shape sh;
  tsl_status st = tsl_depthwise_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_depthwise_knobs k = kn ? *kn : tsl_depthwise_default_knobs(t, &sh);
  if ((st = tsl_depthwise_knobs_check(&k)) != TSL_OK) return st;
  tpl_conv_tile tile;
  memset(&tile, 0, sizeof tile);
  tile.oc_blocks = k.oc_blocks;
  tile.oh_block = k.oh_block;
  tile.ow_block = k.ow_block;
  tile.ic_chunk = 1;
  tile.loop_order = k.loop_order;
  tile.parallel = k.parallel;
  int nr = 0;
  if (sh.grouped) tile.reduce_names[nr++] = "ci";
  tile.reduce_names[nr++] = "r";
  tile.reduce_names[nr++] = "s";
  tile.nreduce = nr;
  tile.unroll_names[0] = k.unroll_kernel ? "r" : NULL;
  tile.unroll_names[1] = k.unroll_kernel ? "s" : NULL;
  tile.KB = sh.KB;
  tile.OH = sh.OH;
  tile.OW = sh.OW;
  tile.pad_stage = sh.padded ? (tpl_pad_mode)k.pad_mode : TPL_PAD_INLINE;
  tile.pad_vector = true;
  tpl_builder b;
  if ((st = tpl_begin(&b, p, WHO)) != TSL_OK) return st;
  tpl_conv_tile_schedule(&b, p, sh.grouped ? "conv2d_nchwc_grouped" : "depthwise_nchwc", &tile);
  return tpl_finish(&b, out);
}

const char *tsl_depthwise_kernel_name(const tsl_te_program *p, const tsl_depthwise_knobs *k, char *buf, size_t n) {
  tpl_conv_geometry g;
  bool grouped = tpl_find_tagged(p, "conv2d_nchwc_grouped") != NULL;
  if (tpl_conv_geometry_of(p, grouped ? "conv2d_nchwc_grouped" : "depthwise_nchwc", WHO, &g) != TSL_OK) {
    snprintf(buf, n, "%s", grouped ? "group_conv2d" : "depthwise_conv2d");
    return buf;
  }
  uint64_t h = 1469598103934665603ull;
  if (k) {
    const int64_t v[] = {k->ow_block, k->oh_block, k->oc_blocks, k->unroll_kernel, k->loop_order, k->pad_mode,
                         k->parallel};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
  }
  return tpl_conv_kernel_name(&g, grouped ? "group_conv2d" : "depthwise_conv2d", NULL, h, buf, n);
}

/* ---- generic interface ------------------------------------------------------ */

static tsl_status dw_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  tsl_depthwise_shape sh;
  tsl_status st = tsl_depthwise_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_depthwise_knobs d = tsl_depthwise_default_knobs(t, &sh);
  memset(out, 0, sizeof *out);
  int64_t v[TSL_MAX_KNOB_VALUES];
  int nv = 0;
  for (int64_t w = 1; w <= tpl_min(16, sh.OW); w++) v[nv++] = w;
  if ((st = tpl_knob(out, "ow_block", TSL_KNOB_SPLIT, nv, v, d.ow_block)) != TSL_OK) return st;
  nv = 0;
  for (int64_t h = 1; h <= tpl_min(4, sh.OH); h++) v[nv++] = h;
  if ((st = tpl_knob(out, "oh_block", TSL_KNOB_SPLIT, nv, v, d.oh_block)) != TSL_OK) return st;
  nv = 0;
  for (int64_t o = 1; o <= tpl_min(4, sh.KB); o++) v[nv++] = o;
  if ((st = tpl_knob(out, "oc_blocks", TSL_KNOB_SPLIT, nv, v, d.oc_blocks)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1}, pads[] = {0, 1, 2};
  if ((st = tpl_knob(out, "unroll_kernel", TSL_KNOB_ANNOTATE, 2, bools, d.unroll_kernel)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "loop_order", TSL_KNOB_REORDER, 2, bools, d.loop_order)) != TSL_OK) return st;
  if (sh.padded && (st = tpl_knob(out, "pad_mode", TSL_KNOB_OTHER, 3, pads, d.pad_mode)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_status dw_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             tsl_config *out) {
  tsl_depthwise_shape sh;
  tsl_status st = tsl_depthwise_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_depthwise_knobs d = tsl_depthwise_default_knobs(t, &sh);
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) {
    const char *n = s->knobs[i].name;
    out->values[i] = strcmp(n, "ow_block") == 0        ? d.ow_block
                     : strcmp(n, "oh_block") == 0      ? d.oh_block
                     : strcmp(n, "oc_blocks") == 0     ? d.oc_blocks
                     : strcmp(n, "unroll_kernel") == 0 ? d.unroll_kernel
                     : strcmp(n, "loop_order") == 0    ? d.loop_order
                     : strcmp(n, "pad_mode") == 0      ? d.pad_mode
                                                       : d.parallel;
  }
  return tsl_config_check(s, out);
}

static tsl_status dw_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                           const tsl_config *c, tsl_schedule **out) {
  tsl_depthwise_shape sh;
  tsl_status st = tsl_depthwise_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_depthwise_knobs k = tsl_depthwise_default_knobs(t, &sh);
  k.ow_block = tsl_config_get(s, c, "ow_block", k.ow_block);
  k.oh_block = tsl_config_get(s, c, "oh_block", k.oh_block);
  k.oc_blocks = tsl_config_get(s, c, "oc_blocks", k.oc_blocks);
  k.unroll_kernel = tsl_config_get(s, c, "unroll_kernel", k.unroll_kernel) != 0;
  k.loop_order = (int)tsl_config_get(s, c, "loop_order", k.loop_order);
  k.pad_mode = (int)tsl_config_get(s, c, "pad_mode", k.pad_mode);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_depthwise_schedule(p, t, &k, out);
}

static const tsl_template templates[] = {
    {"depthwise_conv2d_nchwc.tile", "depthwise_conv2d_nchwc",
     "NCHW[x]c depthwise conv: register row tile, unrolled window, padded rows per parallel iteration "
     "(schedule/templates/depthwise.h)",
     1, dw_space, dw_default, dw_apply},
    {"conv2d_nchwc_grouped.tile", "conv2d_nchwc_grouped",
     "NCHW[x]c grouped conv (any channels per group): register row tile (schedule/templates/depthwise.h)", 1,
     dw_space, dw_default, dw_apply},
};

const tsl_template *tsl_depthwise_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
