/* Depthwise and grouped NCHW[x]c convolution templates (depthwise.h). */
#include "ops/conv2d/depthwise_schedule.h"

#include <stdio.h>
#include <string.h>

#include "ops/conv2d/conv_common.h"
#include "ops/tpl_util.h"

static const char *const WHO = "depthwise template";

/* A broadcast conv with at most this many input channels (first layers: 1-5) gets the
 * first-layer reduction order and pad mode below; longer ones keep the grouped ones. */
enum { BCAST_MAX_UNROLLED_CI = 8 };

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
  out->stride_h = g.stride_h;
  out->stride_w = g.stride_w;
  out->CG = 1;
  for (int i = 0; i < g.conv->nreduce; i++)
    if (strcmp(g.conv->reduce_axis[i].var->var.name, "ci") == 0) out->CG = g.conv->reduce_axis[i].extent;
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

/* The width of a one-row tile of oc blocks: at most max_acc columns, the least
 * row_cost per column. */
static int64_t row_tile_width(int64_t OW, int64_t max_acc, int64_t oc) {
  double best = 0.0;
  int64_t width = 1;
  for (int64_t w = 1; w <= tpl_min(max_acc, OW); w++) {
    double c = row_cost(OW, w, oc, 8) / (double)OW;
    if (best == 0.0 || c < best - 1e-9) {
      best = c;
      width = w;
    }
  }
  return width;
}

/* The block of oh rows x ow columns of a stride-1 depthwise window (R x S taps, rpa
 * registers per output vector) with the least modelled cycles, tails included: per tile
 * oh*ow*R*S FMAs at 2 per cycle, or its loads at 1.5 per cycle when more (the
 * (oh+R-1) x (ow+S-1) input vectors, shared between the taps and rows of the unrolled
 * window, and the R*S weights), plus 3 cycles of overhead. Tiles of at least 8 accumulator
 * registers (2 FMA pipes x 4 cycles of latency; fewer only when min(R, OH) x OW is all
 * there is) and at most 12 (max_acc when less): more chains add register pressure, not
 * throughput. With 3x3 and larger windows such tiles are FMA-bound, so the fewest tiles
 * (the least tail waste) decide, ties going to fewer rows; blocks of up to R rows take
 * part so that the tail can be cut in either direction. */
static void row_block_tile(const tsl_depthwise_shape *sh, int64_t rpa, int64_t max_acc, int64_t *oh_out,
                           int64_t *ow_out) {
  int64_t cap = tpl_max(1, tpl_min(max_acc, 12 / rpa)), min_acc = tpl_max(1, 8 / rpa);
  int64_t max_oh = tpl_min(sh->R, sh->OH);
  double best = 0.0;
  *oh_out = 1;
  *ow_out = 1;
  for (int64_t oh = 1; oh <= max_oh; oh++)
    for (int64_t ow = 1; ow <= sh->OW && oh * ow <= cap; ow++) {
      bool whole = oh == max_oh && ow == sh->OW; /* all the block there is */
      if (oh * ow < tpl_min(min_acc, cap) && !whole) continue;
      double loads = (double)((oh + sh->R - 1) * (ow + sh->S - 1) + sh->R * sh->S);
      double fma = (double)(oh * ow * sh->R * sh->S) / 2.0;
      double tile = (fma > loads / 1.5 ? fma : loads / 1.5) + 3.0;
      double c = (double)(tpl_ceil_div(sh->OH, oh) * tpl_ceil_div(sh->OW, ow)) * tile;
      if (best == 0.0 || c < best - 1e-9) {
        best = c;
        *oh_out = oh;
        *ow_out = ow;
      }
    }
}

tsl_depthwise_knobs tsl_depthwise_default_knobs(const tsl_target *t, const tsl_depthwise_shape *sh) {
  tsl_depthwise_knobs k;
  memset(&k, 0, sizeof k);
  int64_t rpa = tpl_max(1, tpl_ceil_div(sh->Y, tsl_target_f32_lanes(t)));
  /* a grouped conv whose lanes all read one input value (groups 1: the direct conv over
   * the true channels) broadcasts it to two output blocks, like conv2d_nchwc */
  k.oc_blocks = sh->broadcast_input ? tpl_min(2, sh->KB) : 1;
  int64_t max_acc = (tsl_target_vector_registers(t) - (k.oc_blocks + 1) * rpa - 2) / (rpa * k.oc_blocks);
  /* a stride-1 depthwise conv over more than 64 pixels in the blocked layout: 8-12
   * accumulators in a block of rows (measured in MobileNetV2 at 1 thread, 16 lanes, with
   * the guarded loads below: features.1 (112 x 112) 0.18-0.25 -> 0.08-0.10 ms, its default
   * was 1 x 28; the 14 x 14 ones 0.028 -> 0.017 ms; 8 lanes 0.22-0.24 -> 0.14-0.19 and
   * 0.030 -> 0.019-0.025 ms). Tiny images, stride 2, grouped convs and the plain layout
   * (one channel per block: the tile's columns are the vector) keep the row tile. */
  bool s1 = sh->stride_h == 1 && sh->stride_w == 1;
  bool row_block = !sh->grouped && sh->Y > 1 && s1 && sh->OH * sh->OW > 64;
  k.oh_block = 1;
  if (row_block) row_block_tile(sh, rpa, max_acc, &k.oh_block, &k.ow_block);
  else k.ow_block = row_tile_width(sh->OW, max_acc, k.oc_blocks);
  tpl_window_dims w = {sh->OH, sh->OW, sh->KB, sh->Y, sh->R, sh->S, sh->padded};
  /* a gathering grouped conv keeps its window loops (at most 3x3 unrolled); the
   * broadcast one (first layers) unrolls up to 7x7: ResNet-18's 7x7 s2 first conv
   * measured 0.78-0.82 -> 0.86-0.88 of oneDNN unrolled */
  int64_t max_taps = sh->grouped && !sh->broadcast_input ? 9 : 49;
  k.unroll_kernel = sh->R * sh->S <= max_taps && tpl_window_unroll_fits(t, &w, k.ow_block, k.oh_block, k.oc_blocks);
  k.loop_order = 0;
  /* a broadcast conv with a small window (first layers, 3x3) reads the padding through
   * guarded loads: its padded copy holds only the true channels (3 of 8 lanes), copied
   * by masked 3-lane moves that cost about as much as the conv's border tiles (MobileNetV2's
   * 3x3 s2 first conv: 0.33 -> 0.28 ms); 7x7 has too many border tiles for guards
   * (ResNet-18's conv1 ~80 -> ~40 GFLOP/s) and copies the input.
   * Tiny images: the copy of the rows is cheap and the guards are most of the work;
   * a block of rows: guarded loads (in a model the input comes from L3, and the copy's
   * extra pass cost more than the guards); large stride-1 images in the plain layout:
   * one padded copy (read once, written once) beats guards on every tap; stride 2 and
   * mid sizes: guarded loads (depthwise_schedule.h has the figures) */
  k.pad_mode = !sh->padded                        ? 0
               : sh->broadcast_input && sh->CG <= BCAST_MAX_UNROLLED_CI && sh->R * sh->S <= 9 ? 0
               : sh->grouped                      ? 1
               : sh->OH * sh->OW <= 64            ? 2
               : row_block                        ? 0
               : s1 && sh->OH * sh->OW >= 28 * 28 ? 1
                                                  : 0;
  k.parallel = true;
  return k;
}

tsl_status tsl_depthwise_knobs_check(const tsl_depthwise_knobs *k) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "%s: no knobs", WHO);
  if (k->loop_order < 0 || k->loop_order > 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob loop_order = %d (must be 0 or 1)", WHO, k->loop_order);
  return tpl_tile_knobs_check(WHO, k->ow_block, k->oh_block, k->oc_blocks, k->pad_mode);
}

static tpl_window_dims dims_of(const tsl_depthwise_shape *sh) {
  tpl_window_dims w = {sh->OH, sh->OW, sh->KB, sh->Y, sh->R, sh->S, sh->padded};
  return w;
}

/* The reduction of a broadcast grouped conv with few channels (first layers) whose
 * window is unrolled: s as a loop outermost, then r and ci unrolled (more channels than
 * BCAST_MAX_UNROLLED_CI, a body past lowering's limit or unroll_kernel off: the window
 * order ci, r, s of the other grouped convs, unchanged). Within one s iteration every unrolled tap then reads
 * a distinct input value. With s unrolled too (the window order ci, r, s) neighbouring
 * columns of the tile read the same input at other taps (x*stride + s), LLVM merges
 * those broadcasts into values live across many taps, and with 10-12 accumulators they
 * spill: ResNet-18's 7x7 s2 conv1 kept 5-9 broadcast vectors on the stack in its inner
 * loop (~60 GFLOP/s); this order has no spill there (~80 GFLOP/s, 91 peak). */
static void broadcast_reduction(tpl_conv_tile *tile, const tsl_target *t, const tsl_depthwise_shape *sh,
                                const tsl_depthwise_knobs *k) {
  /* unrolled copies of the body per tap: one per accumulator register */
  int64_t copies = k->ow_block * k->oh_block * k->oc_blocks * tpl_max(1, tpl_ceil_div(sh->Y, tsl_target_f32_lanes(t)));
  if (!k->unroll_kernel || sh->CG > BCAST_MAX_UNROLLED_CI || !tpl_unroll_fits(copies * sh->R * sh->CG)) return;
  tile->nreduce = 0;
  tile->reduce_names[tile->nreduce++] = "s";
  tile->reduce_names[tile->nreduce++] = "r";
  tile->reduce_names[tile->nreduce++] = "ci";
  tile->unroll_names[0] = "r";
  tile->unroll_names[1] = "ci";
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
  tpl_window_dims w = dims_of(&sh);
  tpl_conv_tile tile = tpl_window_tile(&w, k.ow_block, k.oh_block, k.oc_blocks, k.unroll_kernel, k.pad_mode,
                                       k.loop_order, k.parallel, sh.grouped ? "ci" : NULL);
  if (sh.broadcast_input) broadcast_reduction(&tile, t, &sh, &k);
  tpl_conv_geometry g;
  if ((st = tpl_conv_geometry_of(p, sh.grouped ? "conv2d_nchwc_grouped" : "depthwise_nchwc", WHO, &g)) != TSL_OK)
    return st;
  tile.epilogue_pass = tpl_conv_epilogue_transcendental(&g);
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
  uint64_t h = tpl_knob_hash(0, NULL);
  if (k) {
    const int64_t v[] = {k->ow_block, k->oh_block, k->oc_blocks, k->unroll_kernel, k->loop_order, k->pad_mode,
                         k->parallel};
    h = tpl_knob_hash((int)(sizeof v / sizeof v[0]), v);
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
  tpl_window_dims w = dims_of(&sh);
  if ((st = tpl_window_knobs(out, t, &w, d.ow_block, d.oh_block, d.oc_blocks, d.unroll_kernel, d.pad_mode)) != TSL_OK)
    return st;
  static const int64_t bools[] = {0, 1};
  if ((st = tpl_knob(out, "loop_order", TSL_KNOB_REORDER, 2, bools, d.loop_order)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_status dw_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             tsl_config *out) {
  tsl_depthwise_shape sh;
  tsl_status st = tsl_depthwise_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_depthwise_knobs d = tsl_depthwise_default_knobs(t, &sh);
  static const char *const names[] = {"tile", "unroll_kernel", "pad_mode", "loop_order", "parallel"};
  const int64_t values[] = {tpl_tile_value(d.ow_block, d.oh_block, d.oc_blocks), d.unroll_kernel, d.pad_mode,
                            d.loop_order, d.parallel};
  return tpl_config_of(s, 5, names, values, out);
}

static tsl_status dw_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                           const tsl_config *c, tsl_schedule **out) {
  tsl_depthwise_shape sh;
  tsl_status st = tsl_depthwise_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_depthwise_knobs k = tsl_depthwise_default_knobs(t, &sh);
  tpl_window_read(s, c, &k.ow_block, &k.oh_block, &k.oc_blocks, &k.unroll_kernel, &k.pad_mode);
  k.loop_order = (int)tsl_config_get(s, c, "loop_order", k.loop_order);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_depthwise_schedule(p, t, &k, out);
}

/* Each template's full name is written out (found with grep from a records file). */
#define DW_TEMPLATE(NAME, OP)                                                                                   \
  {NAME, OP,                                                                                                    \
   "NCHW[x]c depthwise conv: register row tile, unrolled window, padded rows per parallel iteration "            \
   "(ops/conv2d/depthwise_schedule.h)",                                                                          \
   2, dw_space, dw_default, dw_apply}
#define GROUPED_TEMPLATE(NAME, OP)                                                                              \
  {NAME, OP, "NCHW[x]c grouped conv (any channels per group): register row tile (ops/conv2d/depthwise_schedule.h)", \
   2, dw_space, dw_default, dw_apply}

static const tsl_template templates[] = {
    DW_TEMPLATE("depthwise_conv2d_nchwc.tile", "depthwise_conv2d_nchwc"),
    GROUPED_TEMPLATE("conv2d_nchwc_grouped.tile", "conv2d_nchwc_grouped"),
    DW_TEMPLATE("depthwise_conv2d_nchwc_add.tile", "depthwise_conv2d_nchwc_add"),
    GROUPED_TEMPLATE("conv2d_nchwc_grouped_add.tile", "conv2d_nchwc_grouped_add"),
};

const tsl_template *tsl_depthwise_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
