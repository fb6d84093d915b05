/* Elementwise, dense and softmax templates, and the library's default-schedule
 * dispatch (nn.h). */
#include "ops/nn/nn_schedule.h"

#include <stdio.h>
#include <string.h>

#include "ops/conv2d/conv2d_nchwc_schedule.h"
#include "ops/conv2d/conv_common.h"
#include "ops/conv2d/depthwise_schedule.h"
#include "ops/conv2d/im2col_schedule.h"
#include "ops/nn/pool_schedule.h"
#include "ops/tpl_util.h"

tsl_elementwise_knobs tsl_elementwise_default_knobs(void) {
  tsl_elementwise_knobs k = {true, true};
  return k;
}

tsl_status tsl_elementwise_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_elementwise_knobs *kn,
                                    tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "elementwise template: NULL result");
  *out = NULL;
  if (!p || p->noutputs != 1 || p->outputs[0]->op->kind != TSL_TE_COMPUTE)
    return tsl_error(TSL_ERR_INVALID, "elementwise template: %s needs exactly one computed output",
                     p && p->name ? p->name : "?");
  tsl_elementwise_knobs k = kn ? *kn : tsl_elementwise_default_knobs();
  tpl_builder b;
  tsl_status st = tpl_begin_inlined(&b, p, "elementwise template");
  if (st != TSL_OK) return st;
  tpl_elementwise_root(&b, p->outputs[0]->op->name, k.vectorize ? tsl_target_f32_lanes(t) : 1, k.parallel);
  return tpl_finish(&b, out);
}

/* ---- dense ---------------------------------------------------------------------- */

static tsl_status dense_ops(const tsl_te_program *p, const tsl_te_op **acc) {
  *acc = p ? tpl_find_tagged(p, "dense_packed") : NULL;
  if (!*acc || (*acc)->naxis != 3 || (*acc)->nreduce != 1 || p->noutputs != 1)
    return tsl_error(TSL_ERR_INVALID, "dense template: %s is not a dense_packed program", p && p->name ? p->name : "?");
  return TSL_OK;
}

tsl_dense_knobs tsl_dense_default_knobs(const tsl_te_program *p) {
  tsl_dense_knobs k = {4, 4, true};
  const tsl_te_op *acc;
  if (dense_ops(p, &acc) == TSL_OK) k.ob_block = tpl_min(4, acc->axis[1].extent);
  return k;
}

tsl_status tsl_dense_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_dense_knobs *kn,
                              tsl_schedule **out) {
  (void)t;
  if (!out) return tsl_error(TSL_ERR_INVALID, "dense template: NULL result");
  *out = NULL;
  const tsl_te_op *acc_op;
  tsl_status st = dense_ops(p, &acc_op);
  if (st != TSL_OK) return st;
  tsl_dense_knobs k = kn ? *kn : tsl_dense_default_knobs(p);
  if (k.ob_block < 1 || k.k_unroll < 1)
    return tsl_error(TSL_ERR_INVALID, "dense template: knobs ob_block %lld, k_unroll %lld (each must be >= 1)",
                     (long long)k.ob_block, (long long)k.k_unroll);
  int64_t OB = acc_op->axis[1].extent, Y = acc_op->axis[2].extent, K = acc_op->reduce_axis[0].extent;
  tpl_builder b;
  if ((st = tpl_begin(&b, p, "dense template")) != TSL_OK) return st;
  tpl_name ostage, acc;
  snprintf(ostage, TPL_NAME_LEN, "%s", p->outputs[0]->op->name);
  if (p->outputs[0]->op == acc_op) tpl_cache_write(&b, ostage, acc);
  else snprintf(acc, TPL_NAME_LEN, "%s", acc_op->name);
  /* output: b, ob.outer (fused, parallel), ob.inner, o */
  const tsl_stage *os = b.st == TSL_OK ? tsl_schedule_stage(b.s, ostage) : NULL;
  const tsl_stage *as = b.st == TSL_OK ? tsl_schedule_stage(b.s, acc) : NULL;
  if (!os || !as) return tpl_finish(&b, out);
  tpl_name o[3], a[4];
  for (int i = 0; i < 3; i++) snprintf(o[i], TPL_NAME_LEN, "%s", os->iters[i].name);
  for (int i = 0; i < 4; i++) snprintf(a[i], TPL_NAME_LEN, "%s", as->iters[i].name);
  int64_t obb = tpl_min(k.ob_block, OB);
  tpl_name obo, obi, fused, aobo, aobi, ko, ki;
  if (obb > 1 && obb < OB) {
    tpl_split(&b, ostage, o[1], obb);
    tpl_cat(obo, o[1], ".outer");
    tpl_cat(obi, o[1], ".inner");
  } else {
    snprintf(obo, TPL_NAME_LEN, "%s", obb >= OB && OB > 1 ? "" : o[1]);
    snprintf(obi, TPL_NAME_LEN, "%s", obb >= OB && OB > 1 ? o[1] : "");
  }
  const char *outer[2] = {o[0], obo};
  tpl_fuse_all(&b, ostage, obo[0] ? 2 : 1, outer, fused);
  if (k.parallel) tpl_parallel(&b, ostage, fused);
  if (obi[0]) tpl_unroll(&b, ostage, obi);
  if (Y > 1) tpl_vectorize(&b, ostage, o[2]);
  /* accumulators: b, ob.outer | k.outer, k.inner (unrolled), ob.inner (unrolled), o */
  if (obb > 1 && obb < OB) {
    tpl_split(&b, acc, a[1], obb);
    tpl_cat(aobo, a[1], ".outer");
    tpl_cat(aobi, a[1], ".inner");
  } else {
    snprintf(aobo, TPL_NAME_LEN, "%s", obb >= OB && OB > 1 ? "" : a[1]);
    snprintf(aobi, TPL_NAME_LEN, "%s", obb >= OB && OB > 1 ? a[1] : "");
  }
  int64_t ku = tpl_min(k.k_unroll, K);
  if (ku > 1 && ku < K) {
    tpl_split(&b, acc, a[3], ku);
    tpl_cat(ko, a[3], ".outer");
    tpl_cat(ki, a[3], ".inner");
  } else {
    snprintf(ko, TPL_NAME_LEN, "%s", ku >= K && K > 1 ? "" : a[3]);
    snprintf(ki, TPL_NAME_LEN, "%s", ku >= K && K > 1 ? a[3] : "");
  }
  const char *order[8];
  int n = 0;
  order[n++] = a[0];
  if (aobo[0]) order[n++] = aobo;
  if (ko[0]) order[n++] = ko;
  if (ki[0]) order[n++] = ki;
  if (aobi[0]) order[n++] = aobi;
  order[n++] = a[2];
  tpl_reorder(&b, acc, n, order);
  if (ki[0]) tpl_unroll(&b, acc, ki);
  if (aobi[0]) tpl_unroll(&b, acc, aobi);
  if (Y > 1) tpl_vectorize(&b, acc, a[2]);
  tpl_compute_at(&b, acc, ostage, fused);
  return tpl_finish(&b, out);
}

/* ---- softmax ---------------------------------------------------------------------- */

tsl_status tsl_softmax_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "softmax template: NULL result");
  *out = NULL;
  const tsl_te_op *mx = p ? tpl_find_tagged(p, "softmax_max") : NULL, *e = p ? tpl_find_tagged(p, "softmax_exp") : NULL,
                  *total = p ? tpl_find_tagged(p, "softmax_sum") : NULL;
  if (!mx || !e || !total || p->noutputs != 1 || p->outputs[0]->op->naxis != 2)
    return tsl_error(TSL_ERR_INVALID, "softmax template: %s is not a softmax program", p && p->name ? p->name : "?");
  int64_t lanes = tsl_target_f32_lanes(t), C = p->outputs[0]->op->axis[1].extent;
  tpl_builder b;
  tsl_status st = tpl_begin(&b, p, "softmax template");
  if (st != TSL_OK) return st;
  const char *ostage = p->outputs[0]->op->name;
  const tsl_stage *os = tsl_schedule_stage(b.s, ostage), *es = tsl_schedule_stage(b.s, e->name);
  tpl_name on, oc, ec, tmp;
  snprintf(on, TPL_NAME_LEN, "%s", os->iters[0].name);
  snprintf(oc, TPL_NAME_LEN, "%s", os->iters[1].name);
  snprintf(ec, TPL_NAME_LEN, "%s", es->iters[1].name);
  tpl_parallel(&b, ostage, on);
  /* the lanes: split when the row is longer than one vector */
  if (C > 1 && lanes > 1) {
    if (C > lanes) {
      tpl_split(&b, ostage, oc, lanes);
      tpl_vectorize(&b, ostage, tpl_cat(tmp, oc, ".inner"));
      tpl_split(&b, e->name, ec, lanes);
      tpl_vectorize(&b, e->name, tpl_cat(tmp, ec, ".inner"));
    } else {
      tpl_vectorize(&b, ostage, oc);
      tpl_vectorize(&b, e->name, ec);
    }
  }
  tpl_compute_at(&b, total->name, ostage, on);
  tpl_compute_at(&b, e->name, ostage, on);
  tpl_compute_at(&b, mx->name, ostage, on);
  return tpl_finish(&b, out);
}

/* ---- dispatch ------------------------------------------------------------------ */

static const char *const elementwise_ops[] = {
    "flatten_nchwc",    "flatten",         "nchw_to_nchwc",     "nchwc_to_nchw",
    "nchwc_reblock",    "weight_to_nchwc", "weight_to_grouped", "weight_to_depthwise", "weight_to_dense",
    "weight_to_blockdiag",
    "vector_to_blocks", "conv_weight_channel_scale",
};
enum { NELEMENTWISE = sizeof elementwise_ops / sizeof elementwise_ops[0] };

static bool is_one_of(const char *op, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(op, names[i]) == 0) return true;
  return false;
}

tsl_status tsl_oplib_default_schedule(const char *op, const tsl_te_program *p, const tsl_target *t,
                                      tsl_schedule **out) {
  static const char *const direct[] = {"conv2d_nchwc",          "conv2d_nchwc_bias",
                                       "conv2d_nchwc_bias_add", "conv2d_nchwc_1x1_bias",
                                       "conv2d_nchwc_1x1_bias_add", "conv2d_nchwc_1x1_bias_scale",
                                       "conv2d_nchwc_1x1_bias_add_scale", "conv2d_nchwc_blockdiag_bias",
                                       "conv2d_nchwc_blockdiag_bias_add"};
  static const char *const pools[] = {"max_pool2d_nchwc", "avg_pool2d_nchwc", "global_avg_pool2d_nchwc"};
  if (out) *out = NULL;
  if (!op || !out) return tsl_error(TSL_ERR_INVALID, "oplib: NULL operator name or result");
  if (is_one_of(op, direct, 9)) return tsl_conv2d_nchwc_schedule(p, t, NULL, out);
  static const char *const windowed[] = {"depthwise_conv2d_nchwc", "depthwise_conv2d_nchwc_add",
                                         "conv2d_nchwc_grouped", "conv2d_nchwc_grouped_add"};
  if (is_one_of(op, windowed, 4)) return tsl_depthwise_schedule(p, t, NULL, out);
  if (strcmp(op, "conv2d_nchwc_im2col") == 0 || strcmp(op, "conv2d_nchwc_im2col_add") == 0)
    return tsl_im2col_schedule(p, t, NULL, out);
  if (is_one_of(op, pools, 3)) return tsl_pool_schedule(p, t, NULL, out);
  if (strcmp(op, "dense_packed") == 0) return tsl_dense_schedule(p, t, NULL, out);
  if (strcmp(op, "softmax") == 0) return tsl_softmax_schedule(p, t, out);
  if (is_one_of(op, elementwise_ops, NELEMENTWISE)) return tsl_elementwise_schedule(p, t, NULL, out);
  return tsl_error(TSL_ERR_NOT_FOUND, "oplib: %s is not an operator of the NCHW[x]c library", op);
}

/* ---- generic interface ------------------------------------------------------ */

static tsl_status ew_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  (void)p;
  (void)t;
  memset(out, 0, sizeof *out);
  static const int64_t bools[] = {0, 1};
  tsl_status st = tpl_knob(out, "vectorize", TSL_KNOB_ANNOTATE, 2, bools, 1);
  return st == TSL_OK ? tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, 1) : st;
}

static tsl_status ew_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             tsl_config *out) {
  (void)p;
  (void)t;
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) out->values[i] = 1;
  return tsl_config_check(s, out);
}

static tsl_status ew_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                           const tsl_config *c, tsl_schedule **out) {
  tsl_elementwise_knobs k = {tsl_config_get(s, c, "vectorize", 1) != 0, tsl_config_get(s, c, "parallel", 1) != 0};
  return tsl_elementwise_schedule(p, t, &k, out);
}

static tsl_status dense_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  (void)t;
  const tsl_te_op *acc;
  tsl_status st = dense_ops(p, &acc);
  if (st != TSL_OK) return st;
  tsl_dense_knobs d = tsl_dense_default_knobs(p);
  memset(out, 0, sizeof *out);
  static const int64_t obs[] = {1, 2, 3, 4, 6, 8}, kus[] = {1, 2, 4, 8}, bools[] = {0, 1};
  if ((st = tpl_knob(out, "ob_block", TSL_KNOB_SPLIT, 6, obs, d.ob_block)) != TSL_OK) return st;
  if ((st = tpl_knob(out, "k_unroll", TSL_KNOB_SPLIT, 4, kus, d.k_unroll)) != TSL_OK) return st;
  return tpl_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools, d.parallel);
}

static tsl_status dense_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                tsl_config *out) {
  (void)t;
  tsl_dense_knobs d = tsl_dense_default_knobs(p);
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) {
    const char *n = s->knobs[i].name;
    out->values[i] = strcmp(n, "ob_block") == 0 ? d.ob_block : strcmp(n, "k_unroll") == 0 ? d.k_unroll : d.parallel;
  }
  return tsl_config_check(s, out);
}

static tsl_status dense_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                              const tsl_config *c, tsl_schedule **out) {
  tsl_dense_knobs k = tsl_dense_default_knobs(p);
  k.ob_block = tsl_config_get(s, c, "ob_block", k.ob_block);
  k.k_unroll = tsl_config_get(s, c, "k_unroll", k.k_unroll);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_dense_schedule(p, t, &k, out);
}

static tsl_status softmax_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  (void)p;
  (void)t;
  memset(out, 0, sizeof *out);
  return TSL_OK;
}

static tsl_status softmax_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                  tsl_config *out) {
  (void)p;
  (void)t;
  out->nknobs = s->nknobs;
  return TSL_OK;
}

static tsl_status softmax_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                const tsl_config *c, tsl_schedule **out) {
  (void)s;
  (void)c;
  return tsl_softmax_schedule(p, t, out);
}

/* Each template's full name is written out (found with grep from a records file); EW
 * shares the description and the functions of the injective operators' template. */
#define EW(NAME, OP) {NAME, OP, "injective operator: vectorized last axis, parallel outer axes", 1, \
                      ew_space, ew_default, ew_apply}

static const tsl_template templates[] = {
    EW("flatten_nchwc.elementwise", "flatten_nchwc"),
    EW("flatten.elementwise", "flatten"),
    EW("nchw_to_nchwc.elementwise", "nchw_to_nchwc"),
    EW("nchwc_to_nchw.elementwise", "nchwc_to_nchw"),
    EW("nchwc_reblock.elementwise", "nchwc_reblock"),
    EW("weight_to_nchwc.elementwise", "weight_to_nchwc"),
    EW("weight_to_grouped.elementwise", "weight_to_grouped"),
    EW("weight_to_depthwise.elementwise", "weight_to_depthwise"),
    EW("weight_to_blockdiag.elementwise", "weight_to_blockdiag"),
    EW("weight_to_dense.elementwise", "weight_to_dense"),
    EW("vector_to_blocks.elementwise", "vector_to_blocks"),
    EW("conv_weight_channel_scale.elementwise", "conv_weight_channel_scale"),
    {"dense_packed.gemv", "dense_packed", "packed dense layer: ob_block accumulator vectors over k (ops/nn/nn_schedule.h)",
     1, dense_space, dense_default, dense_apply},
    {"softmax.rows", "softmax", "softmax: parallel rows, vectorized exp and division (ops/nn/nn_schedule.h)", 1,
     softmax_space, softmax_default, softmax_apply},
};

const tsl_template *tsl_nn_templates(int *n) {
  *n = (int)(sizeof templates / sizeof templates[0]);
  return templates;
}
