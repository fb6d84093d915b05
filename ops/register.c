/* Adapters of schedule templates to the generic interface (schedule/template.h):
 *
 *   matmul.blis        ops/matmul/matmul_schedule.h (GotoBLAS/BLIS loop nest), its knobs
 *                      as a config space; the hand-tuned defaults are always a point of it
 *   conv2d_nchw.tile,  a generic register-tiling template for any operator whose output
 *   dense.tile         stage has >= 2 spatial axes (direct conv2d_nchw, dense): the three
 *                      innermost output axes are split into tiles, the reduction loops go
 *                      outside the tile (an accumulator tile stays in registers) or
 *                      innermost, the innermost tile axis is vectorized, the other tile
 *                      axes unrolled, the outermost non-trivial axis parallel.
 *
 * and the one registration of every built-in template (tsl_tuner_register_templates):
 * these adapters, then the tables the operator library exports itself: the direct and
 * 1x1-GEMM NCHW[x]c convolutions (ops/conv2d/conv2d_nchwc_schedule.h), depthwise and
 * grouped (ops/conv2d/depthwise_schedule.h), the fused expand 1x1 + depthwise
 * (ops/conv2d/expand_depthwise.h), im2col + GEMM (ops/conv2d/im2col_schedule.h),
 * Winograd F(m x m, r x r) (ops/conv2d/winograd_schedule.h), the bitserial convolutions
 * of the binary networks (ops/binary/bitserial.h), pooling
 * (ops/nn/pool_schedule.h) and the injective, dense and softmax operators
 * (ops/nn/nn_schedule.h); then the conv family's Fast-Run algorithms
 * (ops/conv2d/algorithms_conv.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "schedule/template.h"
#include "ops/binary/bitserial.h"
#include "ops/conv2d/conv2d_nchwc_schedule.h"
#include "ops/conv2d/depthwise_schedule.h"
#include "ops/conv2d/expand_depthwise.h"
#include "ops/conv2d/im2col_schedule.h"
#include "ops/matmul/matmul_schedule.h"
#include "ops/nn/nn_schedule.h"
#include "ops/nn/pool_schedule.h"
#include "ops/conv2d/winograd_schedule.h"
#include "ops/algorithm.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Adds v to list (length *n, capacity TSL_MAX_KNOB_VALUES) when absent. */
static void push_value(int64_t *list, int *n, int64_t v) {
  for (int i = 0; i < *n; i++)
    if (list[i] == v) return;
  if (*n < TSL_MAX_KNOB_VALUES) list[(*n)++] = v;
}


/* ---- matmul.blis ------------------------------------------------------------ */

static tsl_status matmul_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  int64_t M, N, K;
  tsl_status st = tsl_matmul_shape(p, &M, &N, &K);
  if (st != TSL_OK) return st;
  tsl_matmul_knobs d = tsl_matmul_default_knobs(t, M, N, K);
  memset(out, 0, sizeof *out);
  int64_t v[TSL_MAX_KNOB_VALUES];
  int n = 0;
  static const int64_t mrs[] = {1, 2, 3, 4, 6, 8};
  for (size_t i = 0; i < sizeof mrs / sizeof mrs[0]; i++) push_value(v, &n, mrs[i]);
  push_value(v, &n, d.mr);
  if ((st = tsl_space_add_knob(out, "mr", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  for (int64_t m = 1; m <= 4; m++) push_value(v, &n, m * d.vec);
  push_value(v, &n, d.nr);
  if ((st = tsl_space_add_knob(out, "nr", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  for (int64_t kc = 16; kc <= 1024; kc *= 2) push_value(v, &n, min64(kc, K));
  push_value(v, &n, d.kc);
  if ((st = tsl_space_add_knob(out, "kc", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  /* mc in units of mr keeps "mc is a multiple of mr" true for every mr */
  n = 0;
  for (int64_t b = 1; b <= 64; b *= 2) push_value(v, &n, b);
  push_value(v, &n, ceil_div(d.mc, d.mr));
  if ((st = tsl_space_add_knob(out, "mc_blocks", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  static const int64_t kus[] = {1, 2, 4};
  for (size_t i = 0; i < sizeof kus / sizeof kus[0]; i++) push_value(v, &n, kus[i]);
  push_value(v, &n, d.ku);
  if ((st = tsl_space_add_knob(out, "ku", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1}, packs[] = {TSL_MATMUL_PACK_NONE, TSL_MATMUL_PACK_PANEL, TSL_MATMUL_PACK_BLOCK};
  if ((st = tsl_space_add_knob(out, "cache_c", TSL_KNOB_ANNOTATE, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "pack_a", TSL_KNOB_ANNOTATE, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "pack_b", TSL_KNOB_OTHER, 3, packs)) != TSL_OK) return st;
  return tsl_space_add_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools);
}

static tsl_status matmul_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                                 tsl_config *out) {
  int64_t M, N, K;
  tsl_status st = tsl_matmul_shape(p, &M, &N, &K);
  if (st != TSL_OK) return st;
  tsl_matmul_knobs d = tsl_matmul_default_knobs(t, M, N, K);
  const int64_t vals[] = {d.mr, d.nr, d.kc, ceil_div(d.mc, d.mr), d.ku, d.cache_c, d.pack_a, d.pack_b, d.parallel};
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs && i < (int)(sizeof vals / sizeof vals[0]); i++) out->values[i] = vals[i];
  return tsl_config_check(s, out);
}

static tsl_status matmul_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               const tsl_config *c, tsl_schedule **out) {
  int64_t M, N, K;
  tsl_status st = tsl_matmul_shape(p, &M, &N, &K);
  if (st != TSL_OK) return st;
  tsl_matmul_knobs k = tsl_matmul_default_knobs(t, M, N, K);
  k.mr = tsl_config_get(s, c, "mr", k.mr);
  k.nr = tsl_config_get(s, c, "nr", k.nr);
  k.kc = tsl_config_get(s, c, "kc", k.kc);
  k.mc = k.mr * tsl_config_get(s, c, "mc_blocks", ceil_div(k.mc, k.mr));
  k.ku = tsl_config_get(s, c, "ku", k.ku);
  k.cache_c = tsl_config_get(s, c, "cache_c", k.cache_c) != 0;
  k.pack_a = tsl_config_get(s, c, "pack_a", k.pack_a) != 0;
  k.pack_b = (tsl_matmul_pack)tsl_config_get(s, c, "pack_b", k.pack_b);
  k.parallel = tsl_config_get(s, c, "parallel", k.parallel) != 0;
  return tsl_matmul_schedule(p, t, &k, out);
}

static const tsl_template matmul_blis = {
    "matmul.blis", "matmul", "GotoBLAS/BLIS blocked loop nest with packing (ops/matmul/matmul_schedule.h)", 1,
    matmul_space, matmul_default, matmul_apply};

/* ---- OP.tile ---------------------------------------------------------------- */

/* The output stage's spatial extents (innermost three: c, y, x; 1 when absent). */
static tsl_status tile_shape(const tsl_te_program *p, int64_t ext[3]) {
  if (!p || p->noutputs != 1 || p->outputs[0]->op->kind != TSL_TE_COMPUTE)
    return tsl_error(TSL_ERR_UNSUPPORTED, "tile template: needs one computed output");
  const tsl_te_op *op = p->outputs[0]->op;
  if (op->naxis < 2) return tsl_error(TSL_ERR_UNSUPPORTED, "tile template: output %s has < 2 axes", op->name);
  for (int i = 0; i < 3; i++) {
    int ax = op->naxis - 3 + i;
    ext[i] = ax >= 0 ? op->axis[ax].extent : 1;
  }
  return TSL_OK;
}

static tsl_status tile_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  int64_t e[3];
  tsl_status st = tile_shape(p, e);
  if (st != TSL_OK) return st;
  memset(out, 0, sizeof *out);
  int64_t lanes = tsl_target_f32_lanes(t), v[TSL_MAX_KNOB_VALUES];
  int n = 0;
  for (int64_t f = 1; f <= 64; f *= 2) push_value(v, &n, min64(f, e[2]));
  push_value(v, &n, min64(lanes * 3, e[2]));
  if ((st = tsl_space_add_knob(out, "tile_x", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  for (int64_t f = 1; f <= 8; f++) push_value(v, &n, min64(f, e[1]));
  if ((st = tsl_space_add_knob(out, "tile_y", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  for (int64_t f = 1; f <= 16; f *= 2) push_value(v, &n, min64(f, e[0]));
  if ((st = tsl_space_add_knob(out, "tile_c", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1};
  if ((st = tsl_space_add_knob(out, "reduce_outside", TSL_KNOB_REORDER, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "vectorize", TSL_KNOB_ANNOTATE, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "unroll", TSL_KNOB_ANNOTATE, 2, bools)) != TSL_OK) return st;
  return tsl_space_add_knob(out, "parallel", TSL_KNOB_ANNOTATE, 2, bools);
}

static tsl_status tile_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               tsl_config *out) {
  int64_t e[3];
  tsl_status st = tile_shape(p, e);
  if (st != TSL_OK) return st;
  int64_t lanes = tsl_target_f32_lanes(t);
  out->nknobs = s->nknobs;
  out->values[0] = min64(lanes, e[2]);
  out->values[1] = min64(4, e[1]);
  out->values[2] = 1;
  out->values[3] = 1;
  out->values[4] = 1;
  out->values[5] = 1;
  out->values[6] = 1;
  return tsl_config_check(s, out);
}

enum { AXN = 160 };

static tsl_status tile_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             const tsl_config *c, tsl_schedule **out) {
  (void)t;
  int64_t e[3];
  tsl_status st = tile_shape(p, e);
  if (st != TSL_OK) return st;
  tsl_schedule *sch = NULL;
  if ((st = tsl_schedule_create(p, &sch)) != TSL_OK) return st;
  const tsl_stage *os = tsl_schedule_stage_of_op(sch, p->outputs[0]->op);
  const char *stage = os->name;
  int naxis = p->outputs[0]->op->naxis, nred = os->nroot - naxis;
  int64_t tiles[3] = {tsl_config_get(s, c, "tile_c", 1), tsl_config_get(s, c, "tile_y", 1),
                      tsl_config_get(s, c, "tile_x", 1)};
  bool reduce_outside = tsl_config_get(s, c, "reduce_outside", 1) != 0;
  bool vec = tsl_config_get(s, c, "vectorize", 1) != 0, unroll = tsl_config_get(s, c, "unroll", 1) != 0;
  bool par = tsl_config_get(s, c, "parallel", 1) != 0;
  /* names copied before any step: steps may move the stage's iter array */
  enum { MAXR = 16 };
  char roots[MAXR][AXN], outer_names[MAXR][AXN];
  int nouter = naxis - 3 > 0 ? naxis - 3 : 0;
  if (nouter > MAXR || nred > MAXR) {
    tsl_schedule_free(sch);
    return tsl_error(TSL_ERR_UNSUPPORTED, "tile template: more than %d outer or reduction axes", MAXR);
  }
  for (int r = 0; r < nred; r++) snprintf(roots[r], AXN, "%s", os->iters[naxis + r].name);
  for (int a = 0; a < nouter; a++) snprintf(outer_names[a], AXN, "%s", os->iters[a].name);
  /* outer and inner leaf names of each of the (up to) three tiled axes; "" when absent */
  char outer[3][AXN + 8], inner[3][AXN + 8];
  for (int i = 0; i < 3 && st == TSL_OK; i++) {
    int ax = naxis - 3 + i;
    outer[i][0] = inner[i][0] = '\0';
    if (ax < 0) continue;
    char name[AXN];
    snprintf(name, AXN, "%s", os->iters[ax].name);
    if (strlen(name) + 8 >= AXN) {
      st = tsl_error(TSL_ERR_UNSUPPORTED, "tile template: axis name %s too long", name);
      break;
    }
    if (tiles[i] >= e[i]) {
      snprintf(inner[i], sizeof inner[i], "%s", name);
    } else if (tiles[i] <= 1) {
      snprintf(outer[i], sizeof outer[i], "%s", name);
    } else {
      st = tsl_schedule_split(sch, stage, name, tiles[i]);
      snprintf(outer[i], sizeof outer[i], "%s.outer", name);
      snprintf(inner[i], sizeof inner[i], "%s.inner", name);
    }
  }
  /* loop order: untiled outer axes, tile outers, [reductions], tile inners, [reductions] */
  const char *order[TSL_MAX_KNOBS + 16];
  int n = 0;
  for (int ax = 0; ax < nouter; ax++) order[n++] = outer_names[ax];
  for (int i = 0; i < 3; i++)
    if (outer[i][0]) order[n++] = outer[i];
  if (reduce_outside)
    for (int r = 0; r < nred && n < (int)(sizeof order / sizeof order[0]); r++) order[n++] = roots[r];
  for (int i = 0; i < 3; i++)
    if (inner[i][0]) order[n++] = inner[i];
  if (!reduce_outside)
    for (int r = 0; r < nred && n < (int)(sizeof order / sizeof order[0]); r++) order[n++] = roots[r];
  if (st == TSL_OK && n > 1) st = tsl_schedule_reorder(sch, stage, n, order);
  if (st == TSL_OK && vec && !reduce_outside && nred > 0) vec = false; /* x.inner is not innermost */
  if (st == TSL_OK && vec && inner[2][0]) st = tsl_schedule_vectorize(sch, stage, inner[2]);
  /* unrolling a tile loop that holds the reductions only multiplies code */
  if (st == TSL_OK && unroll && reduce_outside)
    for (int i = 0; i < 2 && st == TSL_OK; i++)
      if (inner[i][0]) st = tsl_schedule_unroll(sch, stage, inner[i]);
  if (st == TSL_OK && par) {
    /* the outermost spatial leaf with more than one iteration */
    const char *pick = NULL;
    for (int i = 0; i < n && !pick; i++) {
      int it = tsl_stage_iter_index(os, order[i]);
      if (it >= 0 && !os->iters[it].is_reduce && os->iters[it].extent > 1) pick = order[i];
      if (it >= 0 && os->iters[it].is_reduce) break;
    }
    if (pick) st = tsl_schedule_parallel(sch, stage, pick);
  }
  if (st != TSL_OK) {
    tsl_schedule_free(sch);
    return st;
  }
  *out = sch;
  return TSL_OK;
}

static const tsl_template conv2d_tile = {
    "conv2d_nchw.tile", "conv2d_nchw",
    "direct conv, NCHW: register tile over (k, y, x), reductions outside the tile, x vectorized", 1, tile_space,
    tile_default, tile_apply};
static const tsl_template dense_tile = {"dense.tile", "dense",
                                        "dense: register tile over (batch, out), reductions outside the tile", 1,
                                        tile_space, tile_default, tile_apply};

/* ---- the built-in templates ---------------------------------------------------- */

static const tsl_template *winograd_templates(int *n) {
  *n = (int)(sizeof tsl_winograd_templates / sizeof tsl_winograd_templates[0]);
  return tsl_winograd_templates;
}

/* The operator library's template tables (ops/<family>/), in registration order
 * after this file's own adapters. */
static const tsl_template *(*const tables[])(int *n) = {
    tsl_conv2d_nchwc_templates, tsl_depthwise_templates, tsl_expand_dw_templates, tsl_im2col_templates, winograd_templates,
    tsl_bitserial_templates,    tsl_pool_templates,      tsl_nn_templates,
};

int tsl_tuner_builtin_templates(const tsl_template **out, int max) {
  static const tsl_template *const own[] = {&matmul_blis, &conv2d_tile, &dense_tile};
  int n = 0;
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++, n++)
    if (out && n < max) out[n] = own[i];
  for (size_t l = 0; l < sizeof tables / sizeof tables[0]; l++) {
    int k = 0;
    const tsl_template *t = tables[l](&k);
    for (int i = 0; i < k; i++, n++)
      if (out && n < max) out[n] = &t[i];
  }
  return n;
}

enum { MAX_BUILTIN = 128 };
static pthread_once_t once = PTHREAD_ONCE_INIT;
static void register_all(void) {
  const tsl_template *all[MAX_BUILTIN];
  int n = tsl_tuner_builtin_templates(all, MAX_BUILTIN);
  for (int i = 0; i < n && i < MAX_BUILTIN; i++) tsl_template_register(all[i]);
  tsl_tuner_register_conv_algorithms();
}

void tsl_tuner_register_templates(void) { pthread_once(&once, register_all); }
