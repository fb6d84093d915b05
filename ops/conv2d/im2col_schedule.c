/* The blocked im2col + GEMM template (im2col.h). */
#include "ops/conv2d/im2col_schedule.h"

#include <stdio.h>
#include <string.h>

#include "ops/conv2d/conv_common.h"
#include "ops/tpl_util.h"

static const char *const WHO = "im2col template";

int64_t tsl_im2col_pack_rows(const tsl_target *t) {
  (void)t; /* the same panel on every target: the register tile grows in output blocks */
  return 6;
}

tsl_status tsl_im2col_get_shape(const tsl_te_program *p, tsl_im2col_shape *out) {
  memset(out, 0, sizeof *out);
  const tsl_te_op *col = p ? tpl_find_tagged(p, "im2col") : NULL;
  const tsl_te_op *conv = p ? tpl_find_tagged(p, "conv2d_nchwc_im2col") : NULL;
  if (!col || !conv || col->naxis != 6 || conv->naxis != 4 || conv->nreduce != 3)
    return tsl_error(TSL_ERR_INVALID, "%s: program %s is not an im2col convolution", WHO,
                     p && p->name ? p->name : "?");
  out->N = conv->axis[0].extent;
  out->KB = conv->axis[1].extent;
  out->P = conv->axis[2].extent;
  out->Y = conv->axis[3].extent;
  out->C = col->axis[2].extent;
  out->R = col->axis[3].extent;
  out->S = col->axis[4].extent;
  out->pack_rows = col->axis[5].extent;
  return TSL_OK;
}

tsl_im2col_knobs tsl_im2col_default_knobs(const tsl_target *t, const tsl_im2col_shape *sh) {
  tsl_im2col_knobs k;
  int64_t P = sh->P, mr = sh->pack_rows;
  int64_t row_bytes = sh->C * sh->R * sh->S * 4;
  int64_t fit = tpl_max(1, tpl_l2_bytes(t) / 2 / tpl_max(1, row_bytes * mr)) * mr;
  int64_t ntiles = tpl_ceil_div(P, fit);
  k.tile_px = tpl_ceil_div(tpl_ceil_div(P, ntiles), mr) * mr;
  /* mr x oc accumulators of rpa registers, oc weight vectors and one broadcast within the
   * registers: 2 blocks with 16 registers, 4 with 32 (AVX-512, NEON), at most 4 */
  int64_t rpa = tpl_max(1, tpl_ceil_div(sh->Y, tsl_target_f32_lanes(t)));
  k.oc_blocks = tpl_max(1, tpl_min(tpl_min(4, sh->KB), (tsl_target_vector_registers(t) - 1) / (rpa * (mr + 1))));
  k.unroll_kw = sh->S <= 7 && tpl_unroll_fits(mr * k.oc_blocks * rpa * sh->S);
  k.parallel = true;
  return k;
}

tsl_status tsl_im2col_knobs_check(const tsl_im2col_knobs *k, const tsl_im2col_shape *sh) {
  if (!k || !sh) return tsl_error(TSL_ERR_INVALID, "%s: no knobs", WHO);
  if (k->tile_px < 1 || k->tile_px % sh->pack_rows)
    return tsl_error(TSL_ERR_INVALID, "%s: knob tile_px = %lld (must be a positive multiple of pack_rows %lld)", WHO,
                     (long long)k->tile_px, (long long)sh->pack_rows);
  if (k->oc_blocks < 1)
    return tsl_error(TSL_ERR_INVALID, "%s: knob oc_blocks = %lld (must be >= 1)", WHO, (long long)k->oc_blocks);
  return TSL_OK;
}

/* Root iter names of a stage (copied before steps move them). */
static bool names_of(tpl_builder *b, const char *stage, int n, tpl_name *out) {
  const tsl_stage *st = tsl_schedule_stage(b->s, stage);
  if (!st || st->nroot < n) {
    if (b->st == TSL_OK) b->st = tsl_error(TSL_ERR_INVALID, "%s: stage %s has fewer than %d axes", WHO, stage, n);
    return false;
  }
  for (int i = 0; i < n; i++) snprintf(out[i], TPL_NAME_LEN, "%s", st->iters[i].name);
  return true;
}

typedef struct px_axes {
  tpl_name n, tile, po, pi, kbo, kbi, k;
} px_axes;

/* p by tile_px (tile, rest), rest by pack_rows (po, pi); kb by oc_blocks. */
static void px_split(tpl_builder *b, const char *stage, const tsl_im2col_shape *sh, const tsl_im2col_knobs *k,
                     px_axes *a) {
  tpl_name r[4], p, rest;
  if (!names_of(b, stage, 4, r)) return;
  snprintf(a->n, TPL_NAME_LEN, "%s", r[0]);
  snprintf(a->k, TPL_NAME_LEN, "%s", r[3]);
  snprintf(p, TPL_NAME_LEN, "%s", r[2]);
  int64_t P = sh->P;
  if (k->tile_px < P) {
    tpl_split(b, stage, p, k->tile_px);
    tpl_cat(a->tile, p, ".outer");
    tpl_cat(rest, p, ".inner");
  } else {
    a->tile[0] = '\0';
    snprintf(rest, TPL_NAME_LEN, "%s", p);
  }
  tpl_split(b, stage, rest, sh->pack_rows);
  tpl_cat(a->po, rest, ".outer");
  tpl_cat(a->pi, rest, ".inner");
  a->kbo[0] = a->kbi[0] = '\0';
  if (k->oc_blocks >= sh->KB) {
    snprintf(a->kbi, TPL_NAME_LEN, "%s", r[1]);
  } else if (k->oc_blocks <= 1) {
    snprintf(a->kbo, TPL_NAME_LEN, "%s", r[1]);
  } else {
    tpl_split(b, stage, r[1], k->oc_blocks);
    tpl_cat(a->kbo, r[1], ".outer");
    tpl_cat(a->kbi, r[1], ".inner");
  }
}

static void push(const char **list, int *n, const char *name) {
  if (name && name[0]) list[(*n)++] = name;
}

tsl_status tsl_im2col_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_im2col_knobs *kn,
                               tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL result", WHO);
  *out = NULL;
  tsl_im2col_shape sh;
  tsl_status st = tsl_im2col_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_im2col_knobs k = kn ? *kn : tsl_im2col_default_knobs(t, &sh);
  if ((st = tsl_im2col_knobs_check(&k, &sh)) != TSL_OK) return st;
  const tsl_te_op *conv = tpl_find_tagged(p, "conv2d_nchwc_im2col"), *col = tpl_find_tagged(p, "im2col");
  const tsl_te_op *oop = p->outputs[0]->op;
  tpl_builder b;
  if ((st = tpl_begin(&b, p, WHO)) != TSL_OK) return st;
  tpl_name ostage, acc;
  snprintf(ostage, TPL_NAME_LEN, "%s", oop->name);
  if (oop == conv) tpl_cache_write(&b, ostage, acc);
  else snprintf(acc, TPL_NAME_LEN, "%s", conv->name);

  /* output stage: n, tile | kb.outer, po | kb.inner, pi, k */
  px_axes o;
  memset(&o, 0, sizeof o);
  px_split(&b, ostage, &sh, &k, &o);
  const char *order[16];
  int no = 0;
  push(order, &no, o.n);
  push(order, &no, o.tile);
  push(order, &no, o.kbo);
  push(order, &no, o.po);
  push(order, &no, o.kbi);
  push(order, &no, o.pi);
  push(order, &no, o.k);
  tpl_reorder(&b, ostage, no, order);
  const char *outer[2];
  int nouter = 0;
  push(outer, &nouter, o.n);
  push(outer, &nouter, o.tile);
  tpl_name fused;
  tpl_fuse_all(&b, ostage, nouter, outer, fused);
  if (k.parallel) tpl_parallel(&b, ostage, fused);
  if (o.kbi[0]) tpl_unroll(&b, ostage, o.kbi);
  tpl_unroll(&b, ostage, o.pi);
  if (sh.Y > 1) tpl_vectorize(&b, ostage, o.k);

  /* the GEMM: accumulators for pack_rows pixels x oc_blocks blocks at po */
  px_axes a;
  memset(&a, 0, sizeof a);
  px_split(&b, acc, &sh, &k, &a);
  tpl_name red[7];
  if (names_of(&b, acc, 7, red)) {
    no = 0;
    push(order, &no, a.n);
    push(order, &no, a.tile);
    push(order, &no, a.kbo);
    push(order, &no, a.po);
    push(order, &no, red[4]);
    push(order, &no, red[5]);
    push(order, &no, red[6]);
    push(order, &no, a.pi);
    push(order, &no, a.kbi);
    push(order, &no, a.k);
    tpl_reorder(&b, acc, no, order);
    tpl_unroll(&b, acc, a.pi);
    if (a.kbi[0]) tpl_unroll(&b, acc, a.kbi);
    if (k.unroll_kw) tpl_unroll(&b, acc, red[6]);
    if (sh.Y > 1) tpl_vectorize(&b, acc, a.k);
  }
  tpl_compute_at(&b, acc, ostage, o.po);
  /* the im2col tile, once per (n, tile) iteration, pixel by pixel: a pixel's input row
   * and column (divisions by OW) are computed once per pixel, not once per tap */
  tpl_name cn[6];
  if (names_of(&b, col->name, 6, cn)) {
    const char *corder[6] = {cn[0], cn[1], cn[5], cn[2], cn[3], cn[4]};
    tpl_reorder(&b, col->name, 6, corder);
  }
  tpl_compute_at(&b, col->name, ostage, fused);
  return tpl_finish(&b, out);
}

const char *tsl_im2col_kernel_name(const tsl_te_program *p, const tsl_im2col_knobs *k, char *buf, size_t n) {
  tpl_conv_geometry g;
  if (tpl_conv_geometry_of(p, "conv2d_nchwc_im2col", WHO, &g) != TSL_OK) {
    snprintf(buf, n, "conv2d_im2col");
    return buf;
  }
  uint64_t h = tpl_knob_hash(0, NULL);
  if (k) {
    const int64_t v[] = {k->tile_px, k->oc_blocks, k->unroll_kw, k->parallel};
    h = tpl_knob_hash((int)(sizeof v / sizeof v[0]), v);
  }
  return tpl_conv_kernel_name(&g, "conv2d", "im2col", h, buf, n);
}

/* ---- generic interface ------------------------------------------------------ */

static tsl_status space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  tsl_im2col_shape sh;
  tsl_status st = tsl_im2col_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_im2col_knobs d = tsl_im2col_default_knobs(t, &sh);
  memset(out, 0, sizeof *out);
  int64_t v[TSL_MAX_KNOB_VALUES], P = sh.P;
  int nv = 0;
  /* tiles of 1, 2, 4, ... panels up to the whole image */
  for (int64_t m = 1; nv < 16; m *= 2) {
    v[nv++] = m * sh.pack_rows;
    if (m * sh.pack_rows >= P) break;
  }
  if ((st = tpl_knob(out, "tile_px", TSL_KNOB_SPLIT, nv, v, d.tile_px)) != TSL_OK) return st;
  /* register tiles of pack_rows x oc_blocks vectors within the registers (the default
   * always offered); the kernel columns unrolled only where every tile stays within
   * lowering's unroll limit */
  int64_t rpa = tpl_max(1, tpl_ceil_div(sh.Y, tsl_target_f32_lanes(t))), max_oc = 1;
  nv = 0;
  for (int64_t o = 1; o <= tpl_min(4, sh.KB); o++)
    if (sh.pack_rows * o * rpa < tsl_target_vector_registers(t)) v[nv++] = max_oc = o;
  max_oc = tpl_max(max_oc, d.oc_blocks);
  if ((st = tpl_knob(out, "oc_blocks", TSL_KNOB_SPLIT, nv, v, d.oc_blocks)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1};
  bool kw = tpl_unroll_fits(sh.pack_rows * max_oc * rpa * sh.S);
  if ((st = tpl_knob(out, "unroll_kw", TSL_KNOB_ANNOTATE, kw ? 2 : 1, bools, d.unroll_kw)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_status default_config(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                 tsl_config *out) {
  tsl_im2col_shape sh;
  tsl_status st = tsl_im2col_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_im2col_knobs d = tsl_im2col_default_knobs(t, &sh);
  static const char *const names[] = {"tile_px", "oc_blocks", "unroll_kw", "parallel"};
  const int64_t values[] = {d.tile_px, d.oc_blocks, d.unroll_kw, d.parallel};
  return tpl_config_of(s, 4, names, values, out);
}

static tsl_status apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s, const tsl_config *c,
                        tsl_schedule **out) {
  tsl_im2col_shape sh;
  tsl_status st = tsl_im2col_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_im2col_knobs k = tsl_im2col_default_knobs(t, &sh);
  k.tile_px = tsl_config_get(s, c, "tile_px", k.tile_px);
  k.oc_blocks = tsl_config_get(s, c, "oc_blocks", k.oc_blocks);
  k.unroll_kw = tsl_config_get(s, c, "unroll_kw", k.unroll_kw) != 0;
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_im2col_schedule(p, t, &k, out);
}

/* Each template's full name is written out (found with grep from a records file). */
#define IM2COL_TEMPLATE(NAME, OP)                                                                               \
  {NAME, OP,                                                                                                    \
   "im2col + GEMM conv: L2-sized pixel tiles, A pack fused into the im2col (ops/conv2d/im2col_schedule.h)", 2,    \
   space, default_config, apply}

static const tsl_template templates[] = {
    IM2COL_TEMPLATE("conv2d_nchwc_im2col.blocked", "conv2d_nchwc_im2col"),
    IM2COL_TEMPLATE("conv2d_nchwc_im2col_add.blocked", "conv2d_nchwc_im2col_add"),
};

const tsl_template *tsl_im2col_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
