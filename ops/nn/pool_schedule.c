/* Pooling templates (pool.h). */
#include "ops/nn/pool_schedule.h"

#include <stdio.h>
#include <string.h>

#include "ops/conv2d/conv_common.h"
#include "ops/tpl_util.h"

static const char *const WHO = "pool template";

tsl_status tsl_pool_get_shape(const tsl_te_program *p, tsl_pool_shape *out) {
  memset(out, 0, sizeof *out);
  const tsl_te_op *global = p ? tpl_find_tagged(p, "global_pool") : NULL;
  if (global) {
    if (global->naxis != 5 || p->ninputs != 1 || p->inputs[0]->buf->ndim != 5)
      return tsl_error(TSL_ERR_INVALID, "%s: %s is not a global pool over NCHW[x]c", WHO, p->name ? p->name : "?");
    const tsl_buffer *d = p->inputs[0]->buf;
    out->N = d->shape[0];
    out->CB = d->shape[1];
    out->OH = out->OW = 1;
    out->X = d->shape[4];
    out->R = d->shape[2];
    out->S = d->shape[3];
    out->global = true;
    return TSL_OK;
  }
  tpl_conv_geometry g;
  tsl_status st = tpl_conv_geometry_of(p, "pool2d", WHO, &g);
  if (st != TSL_OK) return st;
  out->N = g.conv->axis[0].extent;
  out->CB = g.conv->axis[1].extent;
  out->OH = g.OH;
  out->OW = g.OW;
  out->X = g.X;
  out->R = g.R;
  out->S = g.S;
  /* the padding stage also covers the ceil_mode overhang past the padded input */
  out->padded = g.padded != NULL && (g.pad_top || g.pad_left || g.pad_bottom > g.stride_h || g.pad_right > g.stride_w);
  return TSL_OK;
}

tsl_pool_knobs tsl_pool_default_knobs(const tsl_target *t, const tsl_pool_shape *sh) {
  tsl_pool_knobs k;
  memset(&k, 0, sizeof k);
  int64_t rpa = tpl_max(1, tpl_ceil_div(sh->X, tsl_target_f32_lanes(t)));
  int64_t max_acc = tpl_max(1, (tsl_target_vector_registers(t) - 4) / rpa);
  k.oc_blocks = 1;
  k.oh_block = 1;
  k.ow_block = 1;
  /* the fewest tiles whose widths are as equal as possible */
  int64_t ntiles = tpl_ceil_div(sh->OW, max_acc);
  k.ow_block = tpl_ceil_div(sh->OW, ntiles);
  tpl_window_dims w = {sh->OH, sh->OW, sh->CB, sh->X, sh->R, sh->S, sh->padded};
  k.unroll_kernel = sh->global || (sh->R * sh->S <= 49 && tpl_window_unroll_fits(t, &w, k.ow_block, 1, 1));
  /* as depthwise convs (depthwise.h): guarded loads beat a padded copy on such
   * memory-bound windows */
  k.pad_mode = 0;
  k.parallel = true;
  return k;
}

tsl_status tsl_pool_knobs_check(const tsl_pool_knobs *k) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "%s: no knobs", WHO);
  return tpl_tile_knobs_check(WHO, k->ow_block, k->oh_block, k->oc_blocks, k->pad_mode);
}

/* Global pool: out [n, cb, y, x, c] (y, x of extent 1) over the reduction (h, w). */
static void global_schedule(tpl_builder *b, const tsl_te_program *p, const tsl_pool_shape *sh,
                            const tsl_pool_knobs *k) {
  const tsl_te_op *acc_op = tpl_find_tagged(p, "global_pool");
  const tsl_te_op *oop = p->outputs[0]->op;
  tpl_name ostage, acc;
  snprintf(ostage, TPL_NAME_LEN, "%s", oop->name);
  if (oop == acc_op) tpl_cache_write(b, ostage, acc);
  else snprintf(acc, TPL_NAME_LEN, "%s", acc_op->name);
  const tsl_stage *os = b->st == TSL_OK ? tsl_schedule_stage(b->s, ostage) : NULL;
  if (!os) return;
  tpl_name o[5];
  for (int i = 0; i < 5; i++) snprintf(o[i], TPL_NAME_LEN, "%s", os->iters[i].name);
  const char *outer[2] = {o[0], o[1]};
  tpl_name fused;
  tpl_fuse_all(b, ostage, 2, outer, fused);
  if (k->parallel) tpl_parallel(b, ostage, fused);
  if (sh->X > 1) tpl_vectorize(b, ostage, o[4]);
  const tsl_stage *as = b->st == TSL_OK ? tsl_schedule_stage(b->s, acc) : NULL;
  if (!as || as->nroot < 7) return;
  tpl_name a[7];
  for (int i = 0; i < 7; i++) snprintf(a[i], TPL_NAME_LEN, "%s", as->iters[i].name);
  /* n, cb, y, x, h, w, c: the lanes innermost so the sum stays in one vector register */
  const char *order[7] = {a[0], a[1], a[2], a[3], a[5], a[6], a[4]};
  tpl_reorder(b, acc, 7, order);
  if (sh->X > 1) tpl_vectorize(b, acc, a[4]);
  if (k->unroll_kernel && sh->S >= 4) {
    tpl_name wo, wi;
    tpl_split(b, acc, a[6], 4);
    tpl_cat(wo, a[6], ".outer");
    tpl_cat(wi, a[6], ".inner");
    tpl_unroll(b, acc, wi);
    (void)wo;
  }
  tpl_compute_at(b, acc, ostage, fused);
}

static tpl_window_dims dims_of(const tsl_pool_shape *sh) {
  tpl_window_dims w = {sh->OH, sh->OW, sh->CB, sh->X, sh->R, sh->S, sh->padded};
  return w;
}

tsl_status tsl_pool_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_pool_knobs *kn,
                             tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "%s: NULL result", WHO);
  *out = NULL;
  tsl_pool_shape sh;
  tsl_status st = tsl_pool_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_pool_knobs k = kn ? *kn : tsl_pool_default_knobs(t, &sh);
  if ((st = tsl_pool_knobs_check(&k)) != TSL_OK) return st;
  tpl_builder b;
  if ((st = tpl_begin(&b, p, WHO)) != TSL_OK) return st;
  if (sh.global) {
    global_schedule(&b, p, &sh, &k);
    return tpl_finish(&b, out);
  }
  /* the padding stage exists even without padding (it covers the ceil_mode overhang):
   * inlining it is free when it never selects the fill */
  tpl_window_dims w = dims_of(&sh);
  tpl_conv_tile tile = tpl_window_tile(&w, k.ow_block, k.oh_block, k.oc_blocks, k.unroll_kernel, k.pad_mode, 0,
                                       k.parallel, NULL);
  tpl_conv_tile_schedule(&b, p, "pool2d", &tile);
  return tpl_finish(&b, out);
}

/* ---- generic interface ------------------------------------------------------ */

static tsl_status space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  tsl_pool_shape sh;
  tsl_status st = tsl_pool_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_pool_knobs d = tsl_pool_default_knobs(t, &sh);
  memset(out, 0, sizeof *out);
  static const int64_t bools[] = {0, 1};
  tpl_window_dims w = dims_of(&sh);
  if (!sh.global)
    st = tpl_window_knobs(out, t, &w, d.ow_block, d.oh_block, d.oc_blocks, d.unroll_kernel, d.pad_mode);
  else /* the W loop unrolled by 4 */
    st = tpl_knob(out, "unroll_kernel", TSL_KNOB_ANNOTATE, 2, bools, d.unroll_kernel);
  if (st != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_status default_config(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                 tsl_config *out) {
  tsl_pool_shape sh;
  tsl_status st = tsl_pool_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_pool_knobs d = tsl_pool_default_knobs(t, &sh);
  static const char *const names[] = {"tile", "unroll_kernel", "pad_mode", "parallel"};
  const int64_t values[] = {tpl_tile_value(d.ow_block, d.oh_block, d.oc_blocks), d.unroll_kernel, d.pad_mode,
                            d.parallel};
  return tpl_config_of(s, 4, names, values, out);
}

static tsl_status apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s, const tsl_config *c,
                        tsl_schedule **out) {
  tsl_pool_shape sh;
  tsl_status st = tsl_pool_get_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_pool_knobs k = tsl_pool_default_knobs(t, &sh);
  tpl_window_read(s, c, &k.ow_block, &k.oh_block, &k.oc_blocks, &k.unroll_kernel, &k.pad_mode);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_pool_schedule(p, t, &k, out);
}

static const tsl_template templates[] = {
    {"max_pool2d_nchwc.tile", "max_pool2d_nchwc", "NCHW[x]c max pool: register row tile (ops/nn/pool_schedule.h)", 2,
     space, default_config, apply},
    {"avg_pool2d_nchwc.tile", "avg_pool2d_nchwc", "NCHW[x]c average pool: register row tile (ops/nn/pool_schedule.h)",
     2, space, default_config, apply},
    {"global_avg_pool2d_nchwc.tile", "global_avg_pool2d_nchwc",
     "NCHW[x]c global average pool: vector accumulator per channel block (ops/nn/pool_schedule.h)", 2, space,
     default_config, apply},
};

const tsl_template *tsl_pool_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
