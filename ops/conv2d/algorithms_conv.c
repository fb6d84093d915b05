/* The NCHW[x]c convolution family: family workloads and every tsl_conv2d_algo as a
 * Fast-Run algorithm of each family (algorithms_conv.h). Weight transforms are not part
 * of a candidate's measurement: they run once per set of weights, at compile time. */
#include "ops/conv2d/algorithms_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/conv2d/im2col_schedule.h"
#include "ops/conv2d/winograd.h"
#include "ops/conv2d/winograd_schedule.h"
#include "ops/algorithm.h"

static const char *const FAM_BIAS = "conv2d_nchwc_bias", *const FAM_ADD = "conv2d_nchwc_bias_add",
                         *const FAM_GROUPED = "conv2d_nchwc_grouped", *const FAM_GROUPED_ADD = "conv2d_nchwc_grouped_add";

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool tsl_conv2d_is_family(const tsl_workload *w) {
  return w && (strcmp(w->op, FAM_BIAS) == 0 || strcmp(w->op, FAM_ADD) == 0 || strcmp(w->op, FAM_GROUPED) == 0 ||
               strcmp(w->op, FAM_GROUPED_ADD) == 0);
}

tsl_status tsl_conv2d_family_workload(const tsl_conv2d_layer *d, tsl_workload *out) {
  tsl_status st = tsl_conv2d_layer_check(d);
  if (st != TSL_OK) return st;
  if (!out) return tsl_error(TSL_ERR_INVALID, "conv family: NULL workload");
  int64_t x = d->block, CB = cdiv(d->C, x), KB = cdiv(d->K, x);
  int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d);
  int64_t xd = tsl_conv2d_layer_data_block(d);
  int64_t data[5] = {d->N, cdiv(d->C, xd), d->H, d->W, xd}, bias[2] = {KB, x}, res[5] = {d->N, KB, OH, OW, x};
  int64_t wb[6] = {KB, CB, d->R, d->S, x, x}, wg[5] = {KB, d->C / d->groups, d->R, d->S, x};
  tsl_dsl_param_value p[TSL_CONV2D_LAYER_MAX_PARAMS];
  int np = tsl_conv2d_layer_params(d, TSL_CONV2D_PARAMS_WINDOW | TSL_CONV2D_PARAMS_EPILOGUE, p);
  bool r = d->has_residual;
  if (d->groups == 1 && d->C % x == 0 && d->K % x == 0 && xd == x) {
    const int64_t *shapes[4] = {data, wb, bias, res};
    const int nd[4] = {5, 6, 2, 5};
    st = tsl_workload_init(out, r ? FAM_ADD : FAM_BIAS, r ? 4 : 3, shapes, nd, np, p);
    out->epilogue = tsl_conv2d_layer_epilogue(d);
    return st;
  }
  /* channel counts that do not fill their blocks (or groups), plain data: the key names
   * the true layer, so a K = 24 layer at 16 lanes is not the K = 32 one */
  np += tsl_conv2d_layer_params(d, TSL_CONV2D_PARAMS_GROUPS, p + np);
  const int64_t *shapes[4] = {data, wg, bias, res};
  const int nd[4] = {5, 5, 2, 5};
  st = tsl_workload_init(out, r ? FAM_GROUPED_ADD : FAM_GROUPED, r ? 4 : 3, shapes, nd, np, p);
  out->epilogue = tsl_conv2d_layer_epilogue(d);
  return st;
}

tsl_status tsl_conv2d_layer_of_workload(const tsl_workload *w, tsl_conv2d_layer *d) {
  if (!w || !d) return tsl_error(TSL_ERR_INVALID, "conv family: NULL argument");
  if (!tsl_conv2d_is_family(w)) return tsl_error(TSL_ERR_UNSUPPORTED, "conv family: %s is not a conv family", w->op);
  bool grouped = strcmp(w->op, FAM_GROUPED) == 0 || strcmp(w->op, FAM_GROUPED_ADD) == 0,
       residual = strcmp(w->op, FAM_ADD) == 0 || strcmp(w->op, FAM_GROUPED_ADD) == 0;
  int wrank = grouped ? 5 : 6;
  if (w->ninputs != (residual ? 4 : 3) || w->ndims[0] != 5 || w->ndims[1] != wrank || w->ndims[2] != 2)
    return tsl_error(TSL_ERR_INVALID, "conv family: %s with inputs of unexpected ranks", w->op);
  const int64_t *data = w->shapes[0], *wt = w->shapes[1];
  int64_t x = data[4], y = wt[wrank - 1];
  /* plain data (block 1) read by a grouped layer writing NCHW[y]c: tsl_conv2d_layer.data_block */
  if (x != y && !(grouped && x == 1))
    return tsl_error(TSL_ERR_UNSUPPORTED, "conv family: data block %lld and output block %lld differ", (long long)x,
                     (long long)y);
  memset(d, 0, sizeof *d);
  d->N = data[0];
  d->H = data[2];
  d->W = data[3];
  d->R = wt[2];
  d->S = wt[3];
  d->block = y;
  d->data_block = x != y ? x : 0;
  d->K = wt[0] * y; /* a grouped key states the true K as out_channels */
  tsl_status st = tsl_conv2d_layer_read_params(w->nparams, w->params, d);
  if (st != TSL_OK) return st;
  d->has_residual = residual;
  d->epilogue = w->epilogue;
  if (grouped) {
    d->C = d->groups * wt[1];
    if (d->C > data[1] * x || (x != y && d->C != data[1]) || d->K > wt[0] * y || d->K <= (wt[0] - 1) * y)
      return tsl_error(TSL_ERR_INVALID, "conv family: groups x channels or out_channels do not fit the blocks");
  } else {
    if (wt[1] != data[1]) return tsl_error(TSL_ERR_INVALID, "conv family: data and weight channel blocks differ");
    d->groups = 1;
    d->C = data[1] * x;
    d->K = wt[0] * y;
  }
  return tsl_conv2d_layer_check(d);
}

bool tsl_conv2d_algo_of_op(const char *op, tsl_conv2d_algo *out) {
  static const struct {
    const char *op;
    tsl_conv2d_algo a;
  } ops[] = {
      {"conv2d_nchwc_bias", TSL_CONV2D_DIRECT},         {"conv2d_nchwc_bias_add", TSL_CONV2D_DIRECT},
      {"conv2d_nchwc_1x1_bias", TSL_CONV2D_GEMM_1X1},   {"conv2d_nchwc_1x1_bias_add", TSL_CONV2D_GEMM_1X1},
      {"conv2d_nchwc_im2col", TSL_CONV2D_IM2COL},       {"depthwise_conv2d_nchwc", TSL_CONV2D_DEPTHWISE},
      {"conv2d_nchwc_im2col_add", TSL_CONV2D_IM2COL},   {"depthwise_conv2d_nchwc_add", TSL_CONV2D_DEPTHWISE},
      {"conv2d_nchwc_grouped_add", TSL_CONV2D_GROUPED},
      {"conv2d_nchwc_grouped", TSL_CONV2D_GROUPED},     {"conv2d_winograd_f2", TSL_CONV2D_WINOGRAD_F2},
      {"conv2d_winograd_f2_add", TSL_CONV2D_WINOGRAD_F2}, {"conv2d_winograd_f4", TSL_CONV2D_WINOGRAD_F4},
      {"conv2d_winograd_f4_add", TSL_CONV2D_WINOGRAD_F4}, {"conv2d_winograd_f6", TSL_CONV2D_WINOGRAD_F6},
      {"conv2d_winograd_f6_add", TSL_CONV2D_WINOGRAD_F6}, {"conv2d_nchwc_blockdiag_bias", TSL_CONV2D_BLOCKDIAG},
      {"conv2d_winograd_f2_r4", TSL_CONV2D_WINOGRAD_F2}, {"conv2d_winograd_f2_r4_add", TSL_CONV2D_WINOGRAD_F2},
      {"conv2d_winograd_f4_r4", TSL_CONV2D_WINOGRAD_F4}, {"conv2d_winograd_f4_r4_add", TSL_CONV2D_WINOGRAD_F4},
      {"conv2d_winograd_f2_r5", TSL_CONV2D_WINOGRAD_F2}, {"conv2d_winograd_f2_r5_add", TSL_CONV2D_WINOGRAD_F2},
      {"conv2d_winograd_f4_r5", TSL_CONV2D_WINOGRAD_F4}, {"conv2d_winograd_f4_r5_add", TSL_CONV2D_WINOGRAD_F4},
      {"conv2d_nchwc_blockdiag_bias_add", TSL_CONV2D_BLOCKDIAG},
  };
  for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i].op, op) == 0) {
      if (out) *out = ops[i].a;
      return true;
    }
  return false;
}

/* The registry name of the operator algorithm a instantiates for d. */
static const char *algo_op(const tsl_conv2d_layer *d, tsl_conv2d_algo a) {
  bool r = d->has_residual;
  switch (a) {
  case TSL_CONV2D_DIRECT: return r ? "conv2d_nchwc_bias_add" : "conv2d_nchwc_bias";
  case TSL_CONV2D_GEMM_1X1: return r ? "conv2d_nchwc_1x1_bias_add" : "conv2d_nchwc_1x1_bias";
  case TSL_CONV2D_IM2COL: return r ? "conv2d_nchwc_im2col_add" : "conv2d_nchwc_im2col";
  case TSL_CONV2D_DEPTHWISE: return r ? "depthwise_conv2d_nchwc_add" : "depthwise_conv2d_nchwc";
  case TSL_CONV2D_GROUPED: return r ? "conv2d_nchwc_grouped_add" : "conv2d_nchwc_grouped";
  case TSL_CONV2D_WINOGRAD_F2:
  case TSL_CONV2D_WINOGRAD_F4:
  case TSL_CONV2D_WINOGRAD_F6: { /* the operator of the layer's kernel size */
    int m = 0;
    tsl_conv2d_algo_is_winograd(a, &m);
    return tsl_winograd_op_name(m, (int)d->R, r);
  }
  case TSL_CONV2D_BLOCKDIAG: return r ? "conv2d_nchwc_blockdiag_bias_add" : "conv2d_nchwc_blockdiag_bias";
  default: return NULL;
  }
}

tsl_status tsl_conv2d_algo_workload(const tsl_conv2d_layer *d, tsl_conv2d_algo a, tsl_workload *out) {
  const char *op = algo_op(d, a);
  const tsl_op_info *info = NULL;
  if (!op)
    return tsl_error(TSL_ERR_UNSUPPORTED, "conv family: algorithm %s has no operator for a %lldx%lld kernel",
                     tsl_conv2d_algo_name(a), (long long)d->R, (long long)d->S);
  tsl_status st = tsl_op_lookup(op, &info);
  if (st != TSL_OK) return st;
  /* the shapes from the program the operator library builds, the parameters it was given
   * (those the registry operator declares) */
  tsl_dsl_param_value cand[TSL_CONV2D_LAYER_MAX_PARAMS], keep[TSL_CONV2D_LAYER_MAX_PARAMS + 1];
  int nc = tsl_conv2d_layer_params(d,
                                   TSL_CONV2D_PARAMS_WINDOW | TSL_CONV2D_PARAMS_EPILOGUE | TSL_CONV2D_PARAMS_GROUPS |
                                       TSL_CONV2D_PARAMS_IN_CHANNELS,
                                   cand),
      nk = 0;
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *conv = NULL;
  st = tsl_conv2d_algo_instantiate(d, a, NULL, &conv, NULL);
  if (st == TSL_OK && (conv->ninputs > TSL_WORKLOAD_MAX_INPUTS || conv->ninputs != info->ninputs))
    st = tsl_error(TSL_ERR_INVALID, "conv family: %s has %d inputs, the registry's %s %d", conv->name, conv->ninputs,
                   op, info->ninputs);
  if (st == TSL_OK) {
    bool winograd = tsl_conv2d_algo_is_winograd(a, NULL);
    for (int i = 0; i < nc; i++) {
      bool declared = false;
      for (int k = 0; k < info->nparams; k++) declared |= strcmp(info->param_names[k], cand[i].name) == 0;
      /* Winograd's in_channels is what tsl_winograd_instantiate gives the program (the
       * real channels when the last block is partial, else 0: all of CP) */
      if (declared && winograd && strcmp(cand[i].name, "in_channels") == 0)
        cand[i] = tsl_dsl_int_param("in_channels", tsl_winograd_in_channels(d));
      if (declared) keep[nk++] = cand[i];
    }
    if (a == TSL_CONV2D_IM2COL) keep[nk++] = tsl_dsl_int_param("pack_rows", tsl_im2col_pack_rows(NULL));
    const int64_t *shapes[TSL_WORKLOAD_MAX_INPUTS];
    int nd[TSL_WORKLOAD_MAX_INPUTS];
    for (int i = 0; i < conv->ninputs; i++) {
      shapes[i] = conv->inputs[i]->buf->shape;
      nd[i] = conv->inputs[i]->buf->ndim;
    }
    st = tsl_workload_init(out, op, conv->ninputs, shapes, nd, nk, keep);
    out->epilogue = tsl_conv2d_layer_epilogue(d);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return st;
}

/* Whether layer d's algorithm-a workload has key `want`. */
static bool maps_to(const tsl_conv2d_layer *d, tsl_conv2d_algo a, const char *want) {
  tsl_workload wa;
  char *key = NULL;
  bool same = tsl_conv2d_layer_check(d) == TSL_OK && tsl_conv2d_algo_workload(d, a, &wa) == TSL_OK &&
              tsl_workload_key_of(&wa, &key) == TSL_OK && strcmp(key, want) == 0;
  if (!same) tsl_clear_error();
  free(key);
  return same;
}

/* Whether layer d's output extents are those of an algorithm's output `out`: [N, KB, OH,
 * OW, x], or [N, KB, OH*OW, x] (im2col: the pixels as one axis). */
static bool out_extents_match(const tsl_conv2d_layer *d, const int64_t *out, int rank) {
  int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d);
  return rank == 5 ? OH == out[2] && OW == out[3] : OH * OW == out[2];
}

/* The first C, K, R x S (largest counts first) of layer *d (the other fields set) whose
 * algorithm-a workload has key `want`; C in (c_lo, c_hi], K in (k_lo, k_hi]. */
static bool search_layer(tsl_conv2d_layer *d, tsl_conv2d_algo a, const char *want, int64_t c_lo, int64_t c_hi,
                         int64_t k_lo, int64_t k_hi, const int64_t *out, int rank) {
  for (int64_t C = c_hi; C > c_lo; C--)
    for (int64_t K = k_hi; K > k_lo; K--)
      for (int64_t R = 1; R <= d->H + d->pad_top + d->pad_bottom; R++)
        for (int64_t S = 1; S <= d->W + d->pad_left + d->pad_right; S++) {
          d->C = C, d->K = K, d->R = R, d->S = S;
          if (out_extents_match(d, out, rank) && maps_to(d, a, want)) return true;
        }
  return false;
}

tsl_status tsl_conv2d_layer_of_algo_workload(const tsl_workload *w, tsl_conv2d_layer *d, tsl_conv2d_algo *algo) {
  if (!w || !d) return tsl_error(TSL_ERR_INVALID, "conv family: NULL argument");
  tsl_conv2d_algo a;
  if (!tsl_conv2d_algo_of_op(w->op, &a))
    return tsl_error(TSL_ERR_UNSUPPORTED, "conv family: %s is not the operator of a conv algorithm", w->op);
  if (algo) *algo = a;
  if (w->ninputs >= 1 && w->ndims[0] == 4) /* the GEMM 1x1 operator: data [N, C/x, H*W, x] */
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "conv family: %s states H x W as one extent (%lld pixels), so its layer is not known from it: "
                     "give the layer's family operator (conv2d_nchwc_bias, ...) instead",
                     w->op, (long long)w->shapes[0][2]);
  tsl_workload want = *w;
  tsl_workload_fix(&want);
  tsl_status st = a == TSL_CONV2D_IM2COL ? tsl_workload_set_int(&want, "pack_rows", tsl_im2col_pack_rows(NULL)) : TSL_OK;
  char *key = NULL;
  if (st == TSL_OK) st = tsl_workload_key_of(&want, &key);
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  if (st == TSL_OK) st = tsl_workload_instantiate(&want, &p);
  const tsl_te_tensor *o = st == TSL_OK && p->noutputs == 1 ? p->outputs[0] : NULL;
  if (st == TSL_OK && (!o || (o->buf->ndim != 5 && o->buf->ndim != 4) || w->ninputs < 1 || w->ndims[0] != 5))
    st = tsl_error(TSL_ERR_UNSUPPORTED, "conv family: %s has no NCHW[x]c data and output (rank 5 data, rank 4 or 5 output)", w->op);
  bool found = false;
  if (st == TSL_OK) {
    const int64_t *data = w->shapes[0], *out = o->buf->shape;
    int rank = o->buf->ndim;
    int64_t x = data[4], y = out[rank - 1];
    memset(d, 0, sizeof *d);
    d->N = data[0], d->H = data[2], d->W = data[3], d->block = y, d->data_block = x != y ? x : 0;
    d->has_residual = strlen(w->op) > 4 && strcmp(w->op + strlen(w->op) - 4, "_add") == 0;
    d->groups = 1;
    st = tsl_conv2d_layer_read_params(w->nparams, w->params, d);
    /* counts stated by the parameters are taken as they are, else every one the blocks hold */
    int64_t c_hi = d->C > 0 ? d->C : data[1] * x, c_lo = d->C > 0 ? d->C - 1 : (data[1] - 1) * x;
    int64_t k_hi = d->K > 0 ? d->K : out[1] * y, k_lo = d->K > 0 ? d->K - 1 : (out[1] - 1) * y;
    if (st == TSL_OK) found = search_layer(d, a, key, c_lo, c_hi, k_lo, k_hi, out, rank);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  if (st == TSL_OK && !found)
    st = tsl_error(TSL_ERR_UNSUPPORTED, "conv family: no conv layer maps to %s (its algorithm's operator would be "
                   "instantiated otherwise)", key);
  free(key);
  return st;
}

/* ---- the algorithms ---------------------------------------------------------- */

static bool applies(const tsl_workload *w, tsl_conv2d_algo a, const char **why) {
  tsl_conv2d_layer d;
  if (tsl_conv2d_layer_of_workload(w, &d) != TSL_OK) {
    *why = "not a conv family workload with equal data and output blocks";
    return false;
  }
  return tsl_conv2d_algo_applies(&d, a, why);
}

/* A Winograd algorithm registered for r x r kernels: the layer's kernel must be that
 * size (each (m, r) has its own operator and template). */
static bool applies_winograd(const tsl_workload *w, tsl_conv2d_algo a, int64_t r, const char **why) {
  tsl_conv2d_layer d;
  if (!applies(w, a, why)) return false;
  if (tsl_conv2d_layer_of_workload(w, &d) == TSL_OK && d.R == r) return true;
  *why = r == 3 ? "winograd: another kernel size (this algorithm takes 3x3)"
                : r == 4 ? "winograd: another kernel size (this algorithm takes 4x4)"
                         : "winograd: another kernel size (this algorithm takes 5x5)";
  return false;
}

static tsl_status map(const tsl_workload *w, tsl_conv2d_algo a, tsl_workload *out) {
  tsl_conv2d_layer d;
  tsl_status st = tsl_conv2d_layer_of_workload(w, &d);
  return st == TSL_OK ? tsl_conv2d_algo_workload(&d, a, out) : st;
}

#define ALGO_FNS(NAME, A)                                                                                    \
  static bool applies_##NAME(const tsl_workload *w, const char **why) { return applies(w, A, why); }       \
  static tsl_status map_##NAME(const tsl_workload *w, tsl_workload *out) { return map(w, A, out); }
ALGO_FNS(direct, TSL_CONV2D_DIRECT)
ALGO_FNS(gemm1x1, TSL_CONV2D_GEMM_1X1)
ALGO_FNS(im2col, TSL_CONV2D_IM2COL)
ALGO_FNS(depthwise, TSL_CONV2D_DEPTHWISE)
ALGO_FNS(grouped, TSL_CONV2D_GROUPED)
ALGO_FNS(blockdiag, TSL_CONV2D_BLOCKDIAG)

/* The Winograd algorithms per (m, r), written out: each takes one kernel size. */
static bool applies_winograd_f2(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F2, 3, why);
}
static bool applies_winograd_f4(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F4, 3, why);
}
static bool applies_winograd_f6(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F6, 3, why);
}
static bool applies_winograd_f2_r4(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F2, 4, why);
}
static bool applies_winograd_f4_r4(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F4, 4, why);
}
static bool applies_winograd_f2_r5(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F2, 5, why);
}
static bool applies_winograd_f4_r5(const tsl_workload *w, const char **why) {
  return applies_winograd(w, TSL_CONV2D_WINOGRAD_F4, 5, why);
}
static tsl_status map_winograd_f2(const tsl_workload *w, tsl_workload *out) {
  return map(w, TSL_CONV2D_WINOGRAD_F2, out);
}
static tsl_status map_winograd_f4(const tsl_workload *w, tsl_workload *out) {
  return map(w, TSL_CONV2D_WINOGRAD_F4, out);
}
static tsl_status map_winograd_f6(const tsl_workload *w, tsl_workload *out) {
  return map(w, TSL_CONV2D_WINOGRAD_F6, out);
}

/* One line per algorithm, its full name written out (config.algorithm in a records file,
 * found with grep); ALGO shares only the applies/map functions of its tsl_conv2d_algo.
 * The residual families' operators end in _add: their algorithms name those templates. */
#define ALGO(NAME, FAM, TEMPLATE, FNS) {NAME, FAM, TEMPLATE, applies_##FNS, map_##FNS}
/* A Winograd algorithm for larger kernels: its own applies, the map of its m. */
#define ALGO_R(NAME, FAM, TEMPLATE, APPLIES, MAP) {NAME, FAM, TEMPLATE, applies_##APPLIES, map_##MAP}

static const tsl_algorithm conv_algorithms[] = {
    ALGO("conv2d_nchwc_bias.direct", "conv2d_nchwc_bias", "conv2d_nchwc_bias.direct", direct),
    ALGO("conv2d_nchwc_bias.gemm1x1", "conv2d_nchwc_bias", "conv2d_nchwc_1x1_bias.gemm", gemm1x1),
    ALGO("conv2d_nchwc_bias.im2col", "conv2d_nchwc_bias", "conv2d_nchwc_im2col.blocked", im2col),
    ALGO("conv2d_nchwc_bias.depthwise", "conv2d_nchwc_bias", "depthwise_conv2d_nchwc.tile", depthwise),
    ALGO("conv2d_nchwc_bias.grouped", "conv2d_nchwc_bias", "conv2d_nchwc_grouped.tile", grouped),
    ALGO("conv2d_nchwc_bias.winograd_f2", "conv2d_nchwc_bias", "conv2d_winograd_f2.blocked", winograd_f2),
    ALGO("conv2d_nchwc_bias.winograd_f4", "conv2d_nchwc_bias", "conv2d_winograd_f4.blocked", winograd_f4),
    ALGO("conv2d_nchwc_bias.winograd_f6", "conv2d_nchwc_bias", "conv2d_winograd_f6.blocked", winograd_f6),
    ALGO("conv2d_nchwc_bias.blockdiag", "conv2d_nchwc_bias", "conv2d_nchwc_blockdiag_bias.direct", blockdiag),
    ALGO("conv2d_nchwc_grouped.direct", "conv2d_nchwc_grouped", "conv2d_nchwc_bias.direct", direct),
    ALGO("conv2d_nchwc_grouped.gemm1x1", "conv2d_nchwc_grouped", "conv2d_nchwc_1x1_bias.gemm", gemm1x1),
    ALGO("conv2d_nchwc_grouped.im2col", "conv2d_nchwc_grouped", "conv2d_nchwc_im2col.blocked", im2col),
    ALGO("conv2d_nchwc_grouped.depthwise", "conv2d_nchwc_grouped", "depthwise_conv2d_nchwc.tile", depthwise),
    ALGO("conv2d_nchwc_grouped.grouped", "conv2d_nchwc_grouped", "conv2d_nchwc_grouped.tile", grouped),
    ALGO("conv2d_nchwc_grouped.winograd_f2", "conv2d_nchwc_grouped", "conv2d_winograd_f2.blocked", winograd_f2),
    ALGO("conv2d_nchwc_grouped.winograd_f4", "conv2d_nchwc_grouped", "conv2d_winograd_f4.blocked", winograd_f4),
    ALGO("conv2d_nchwc_grouped.winograd_f6", "conv2d_nchwc_grouped", "conv2d_winograd_f6.blocked", winograd_f6),
    ALGO("conv2d_nchwc_grouped.blockdiag", "conv2d_nchwc_grouped", "conv2d_nchwc_blockdiag_bias.direct", blockdiag),
    ALGO("conv2d_nchwc_bias_add.direct", "conv2d_nchwc_bias_add", "conv2d_nchwc_bias_add.direct", direct),
    ALGO("conv2d_nchwc_bias_add.gemm1x1", "conv2d_nchwc_bias_add", "conv2d_nchwc_1x1_bias_add.gemm", gemm1x1),
    ALGO("conv2d_nchwc_bias_add.im2col", "conv2d_nchwc_bias_add", "conv2d_nchwc_im2col_add.blocked", im2col),
    ALGO("conv2d_nchwc_bias_add.depthwise", "conv2d_nchwc_bias_add", "depthwise_conv2d_nchwc_add.tile", depthwise),
    ALGO("conv2d_nchwc_bias_add.grouped", "conv2d_nchwc_bias_add", "conv2d_nchwc_grouped_add.tile", grouped),
    ALGO("conv2d_nchwc_bias_add.winograd_f2", "conv2d_nchwc_bias_add", "conv2d_winograd_f2_add.blocked", winograd_f2),
    ALGO("conv2d_nchwc_bias_add.winograd_f4", "conv2d_nchwc_bias_add", "conv2d_winograd_f4_add.blocked", winograd_f4),
    ALGO("conv2d_nchwc_bias_add.winograd_f6", "conv2d_nchwc_bias_add", "conv2d_winograd_f6_add.blocked", winograd_f6),
    ALGO("conv2d_nchwc_bias_add.blockdiag", "conv2d_nchwc_bias_add", "conv2d_nchwc_blockdiag_bias_add.direct",
         blockdiag),
    ALGO("conv2d_nchwc_grouped_add.direct", "conv2d_nchwc_grouped_add", "conv2d_nchwc_bias_add.direct", direct),
    ALGO("conv2d_nchwc_grouped_add.gemm1x1", "conv2d_nchwc_grouped_add", "conv2d_nchwc_1x1_bias_add.gemm", gemm1x1),
    ALGO("conv2d_nchwc_grouped_add.im2col", "conv2d_nchwc_grouped_add", "conv2d_nchwc_im2col_add.blocked", im2col),
    ALGO("conv2d_nchwc_grouped_add.depthwise", "conv2d_nchwc_grouped_add", "depthwise_conv2d_nchwc_add.tile",
         depthwise),
    ALGO("conv2d_nchwc_grouped_add.grouped", "conv2d_nchwc_grouped_add", "conv2d_nchwc_grouped_add.tile", grouped),
    ALGO("conv2d_nchwc_grouped_add.winograd_f2", "conv2d_nchwc_grouped_add", "conv2d_winograd_f2_add.blocked",
         winograd_f2),
    ALGO("conv2d_nchwc_grouped_add.winograd_f4", "conv2d_nchwc_grouped_add", "conv2d_winograd_f4_add.blocked",
         winograd_f4),
    ALGO("conv2d_nchwc_grouped_add.winograd_f6", "conv2d_nchwc_grouped_add", "conv2d_winograd_f6_add.blocked",
         winograd_f6),
    ALGO("conv2d_nchwc_grouped_add.blockdiag", "conv2d_nchwc_grouped_add", "conv2d_nchwc_blockdiag_bias_add.direct",
         blockdiag),
    ALGO_R("conv2d_nchwc_bias.winograd_f2_r4", "conv2d_nchwc_bias", "conv2d_winograd_f2_r4.blocked",
           winograd_f2_r4, winograd_f2),
    ALGO_R("conv2d_nchwc_bias.winograd_f4_r4", "conv2d_nchwc_bias", "conv2d_winograd_f4_r4.blocked",
           winograd_f4_r4, winograd_f4),
    ALGO_R("conv2d_nchwc_bias.winograd_f2_r5", "conv2d_nchwc_bias", "conv2d_winograd_f2_r5.blocked",
           winograd_f2_r5, winograd_f2),
    ALGO_R("conv2d_nchwc_bias.winograd_f4_r5", "conv2d_nchwc_bias", "conv2d_winograd_f4_r5.blocked",
           winograd_f4_r5, winograd_f4),
    ALGO_R("conv2d_nchwc_grouped.winograd_f2_r4", "conv2d_nchwc_grouped", "conv2d_winograd_f2_r4.blocked",
           winograd_f2_r4, winograd_f2),
    ALGO_R("conv2d_nchwc_grouped.winograd_f4_r4", "conv2d_nchwc_grouped", "conv2d_winograd_f4_r4.blocked",
           winograd_f4_r4, winograd_f4),
    ALGO_R("conv2d_nchwc_grouped.winograd_f2_r5", "conv2d_nchwc_grouped", "conv2d_winograd_f2_r5.blocked",
           winograd_f2_r5, winograd_f2),
    ALGO_R("conv2d_nchwc_grouped.winograd_f4_r5", "conv2d_nchwc_grouped", "conv2d_winograd_f4_r5.blocked",
           winograd_f4_r5, winograd_f4),
    ALGO_R("conv2d_nchwc_bias_add.winograd_f2_r4", "conv2d_nchwc_bias_add", "conv2d_winograd_f2_r4_add.blocked",
           winograd_f2_r4, winograd_f2),
    ALGO_R("conv2d_nchwc_bias_add.winograd_f4_r4", "conv2d_nchwc_bias_add", "conv2d_winograd_f4_r4_add.blocked",
           winograd_f4_r4, winograd_f4),
    ALGO_R("conv2d_nchwc_bias_add.winograd_f2_r5", "conv2d_nchwc_bias_add", "conv2d_winograd_f2_r5_add.blocked",
           winograd_f2_r5, winograd_f2),
    ALGO_R("conv2d_nchwc_bias_add.winograd_f4_r5", "conv2d_nchwc_bias_add", "conv2d_winograd_f4_r5_add.blocked",
           winograd_f4_r5, winograd_f4),
    ALGO_R("conv2d_nchwc_grouped_add.winograd_f2_r4", "conv2d_nchwc_grouped_add", "conv2d_winograd_f2_r4_add.blocked",
           winograd_f2_r4, winograd_f2),
    ALGO_R("conv2d_nchwc_grouped_add.winograd_f4_r4", "conv2d_nchwc_grouped_add", "conv2d_winograd_f4_r4_add.blocked",
           winograd_f4_r4, winograd_f4),
    ALGO_R("conv2d_nchwc_grouped_add.winograd_f2_r5", "conv2d_nchwc_grouped_add", "conv2d_winograd_f2_r5_add.blocked",
           winograd_f2_r5, winograd_f2),
    ALGO_R("conv2d_nchwc_grouped_add.winograd_f4_r5", "conv2d_nchwc_grouped_add", "conv2d_winograd_f4_r5_add.blocked",
           winograd_f4_r5, winograd_f4),
};

void tsl_tuner_register_conv_algorithms(void) {
  for (size_t i = 0; i < sizeof conv_algorithms / sizeof conv_algorithms[0]; i++)
    tsl_algorithm_register(&conv_algorithms[i]);
}
