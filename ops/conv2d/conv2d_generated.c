/* The conv2d family's generated operator (ops/op_call.h): a plain NCHW convolution with
 * its fused epilogue, written per instance as DSL text (docs/dsl.md).
 *
 * "conv2d": arguments x [N, C, H, W], w [M, C/group, R, S], then bias [M] when attribute
 * "bias" is 1, then residual [N, M, OH, OW] when attribute "residual" is 1, and the
 * output y [N, M, OH, OW]; all plain. Attributes: "strides" (2, default 1 1), "dilations"
 * (2, default 1 1), "pads" (4: top, left, bottom, right; default 0), "group" (default 1),
 * "activation" ("relu", "clip" or absent) with "clip_min" / "clip_max" (default -inf,
 * inf), or "epilogue" (a function of the activation table, ops/epilogue.h). Computes
 *   y = act(sum(c, r, s: pad(x)[n, g(m) + c, y*sh + r*dh, x*sw + s*dw] * w[m, c, r, s])
 *           + bias[m] + residual[n, m, y, x])
 * with zero padding: the fused convolutions of models/passes/fuse_conv.h. The product
 * stage is tagged "conv2d" (ops/nn/default_schedule.h). Blocked convolutions are not
 * generated: the graph compiler builds them through the tuner's dispatch
 * (models/compile_conv.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/epilogue.h"
#include "ops/families.h"
#include "ops/op_text.h"

enum { CONV_ACT_NONE, CONV_ACT_RELU, CONV_ACT_CLIP };

typedef struct conv_attrs {
  int64_t strides[2], dilations[2], pads[4], group;
  bool bias, residual;
  int act;
  double lo, hi;
  tsl_epilogue epi; /* a function of the activation table (act none) */
} conv_attrs;

static tsl_status read_attrs(const tsl_op_call *c, conv_attrs *a) {
  static const int64_t ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
  tsl_status st = tsl_op_call_ints_exact(c, "conv2d", "strides", 2, ones, 1, a->strides);
  if (st == TSL_OK) st = tsl_op_call_ints_exact(c, "conv2d", "dilations", 2, ones, 1, a->dilations);
  if (st == TSL_OK) st = tsl_op_call_ints_exact(c, "conv2d", "pads", 4, zeros, 0, a->pads);
  if (st != TSL_OK) return st;
  a->group = tsl_op_call_int(c, "group", 1);
  a->bias = tsl_op_call_int(c, "bias", 0) != 0;
  a->residual = tsl_op_call_int(c, "residual", 0) != 0;
  const char *act = tsl_op_call_string(c, "activation", "none");
  a->act = strcmp(act, "relu") == 0 ? CONV_ACT_RELU : strcmp(act, "clip") == 0 ? CONV_ACT_CLIP : CONV_ACT_NONE;
  if (a->act == CONV_ACT_NONE && strcmp(act, "none") != 0)
    return tsl_error(TSL_ERR_UNSUPPORTED, "conv2d: activation '%s' (relu, clip or none)", act);
  a->lo = tsl_op_call_float(c, "clip_min", -INFINITY);
  a->hi = tsl_op_call_float(c, "clip_max", INFINITY);
  if ((st = tsl_op_call_epilogue(c, "conv2d", &a->epi)) != TSL_OK) return st;
  if (a->epi.fn && a->act != CONV_ACT_NONE)
    return tsl_error(TSL_ERR_INVALID, "conv2d: activation %s and epilogue %s (one of them)", act, a->epi.fn->onnx_op);
  if (a->group < 1) return tsl_error(TSL_ERR_INVALID, "conv2d: group %lld (must be >= 1)", (long long)a->group);
  return TSL_OK;
}

/* The arguments' ranks, layouts and the group's channel counts. */
static tsl_status check_args(const tsl_op_call *c, const conv_attrs *a) {
  tsl_status st = tsl_op_check_plain_counts(c, "conv2d", 2 + a->bias + a->residual, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *w = &c->args[1], *y = &c->args[c->nargs - 1];
  if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4)
    return tsl_error(TSL_ERR_INVALID, "conv2d: x, w and y of ranks %d, %d, %d (all 4: NCHW, MCRS, NMHW)", x->ndim, w->ndim,
                     y->ndim);
  if (w->shape[1] * a->group != x->shape[1] || w->shape[0] % a->group)
    return tsl_error(TSL_ERR_INVALID, "conv2d: %lld input channels, %lld output channels and a weight of %lld channels "
                     "a group do not make %lld groups", (long long)x->shape[1], (long long)w->shape[0],
                     (long long)w->shape[1], (long long)a->group);
  const tsl_op_tensor *bias = &c->args[2], *res = &c->args[2 + a->bias];
  if (a->bias && (bias->ndim != 1 || bias->shape[0] != w->shape[0]))
    return tsl_error(TSL_ERR_INVALID, "conv2d: the bias is not a vector of the %lld output channels", (long long)w->shape[0]);
  if (a->residual && !tsl_op_tensor_same_shape(res, y))
    return tsl_error(TSL_ERR_INVALID, "conv2d: the residual's shape is not the output's");
  return TSL_OK;
}

static tsl_status conv2d_text(const tsl_op_call *c, tsl_op_text *t) {
  conv_attrs a;
  tsl_status st = read_attrs(c, &a);
  if (st == TSL_OK) st = check_args(c, &a);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *w = &c->args[1], *y = &c->args[c->nargs - 1];
  for (int i = 0; i < c->nargs; i++) tsl_op_text_view(t, i, c->args[i].ndim, c->args[i].shape);
  int64_t H = x->shape[2], W = x->shape[3], M = w->shape[0], CG = w->shape[1], MG = M / a.group;
  long long pt = a.pads[0], pl = a.pads[1], pb = a.pads[2], pr = a.pads[3];
  snprintf(t->label, sizeof t->label, "conv2d_%s%lldx%lld_s%lld_p%lld%s%s%s%s%s",
           a.group == 1 ? "" : CG == 1 && MG == 1 ? "dw_" : "g_", (long long)w->shape[2], (long long)w->shape[3],
           (long long)a.strides[0], pt, a.bias ? "_bias" : "", a.residual ? "_add" : "",
           a.act == CONV_ACT_RELU ? "_relu" : a.act == CONV_ACT_CLIP ? "_clip" : "", a.epi.fn ? "_" : "",
           a.epi.fn ? a.epi.fn->label : "");
  tsl_op_text_header(t, c->ninputs);
  tsl_text_buf *b = &t->text;
  bool padded = pt || pl || pb || pr;
  const char *src = "x0";
  if (padded) {
    tsl_text_put(b, "  pad[n, c, y, x] = select(y >= %lld && y < %lld && x >= %lld && x < %lld, x0[n, c, y - %lld, x - %lld], 0.0)\n"
                    "    where y < %lld, x < %lld\n",
                 pt, (long long)(H + pt), pl, (long long)(W + pl), pt, pl, (long long)(H + pt + pb), (long long)(W + pl + pr));
    src = "pad";
  }
  char cidx[96];
  if (a.group == 1) snprintf(cidx, sizeof cidx, "c");
  else if (CG == 1 && MG == 1) snprintf(cidx, sizeof cidx, "m + c");
  else snprintf(cidx, sizeof cidx, "(m / %lld) * %lld + c", (long long)MG, (long long)CG);
  bool epilogue = a.bias || a.residual || a.act != CONV_ACT_NONE || a.epi.fn;
  tsl_text_put(b, "  @tag(\"conv2d\")\n  %s[n, m, y, x] = sum(c, r, s: %s[n, %s, y*%lld + r*%lld, x*%lld + s*%lld] * x1[m, c, r, s])\n"
                  "    where y < %lld, x < %lld\n",
               epilogue ? "acc" : "out", src, cidx, (long long)a.strides[0], (long long)a.dilations[0],
               (long long)a.strides[1], (long long)a.dilations[1], (long long)y->shape[2], (long long)y->shape[3]);
  if (!epilogue) return TSL_OK;
  tsl_text_buf v = {0}; /* conv + bias + residual */
  tsl_text_put(&v, "acc[n, m, y, x]");
  if (a.bias) tsl_text_put(&v, " + x2[m]");
  if (a.residual) tsl_text_put(&v, " + x%d[n, m, y, x]", a.bias ? 3 : 2);
  tsl_text_put(b, "  out[n, m, y, x] = ");
  if (a.act == CONV_ACT_RELU) tsl_text_put(b, "max(");
  if (a.act == CONV_ACT_CLIP) tsl_op_put_clip_open(b, a.lo, a.hi);
  if (!v.oom) tsl_epilogue_put_dsl(&a.epi, v.s, b);
  if (a.act == CONV_ACT_RELU) tsl_text_put(b, ", 0.0)");
  if (a.act == CONV_ACT_CLIP) tsl_op_put_clip_close(b, a.lo, a.hi);
  tsl_text_put(b, "\n");
  bool oom = v.oom;
  free(v.s);
  return oom ? tsl_error(TSL_ERR_NOMEM, "conv2d: out of memory") : TSL_OK;
}

static const tsl_op_generator conv2d_generators[] = {
    {"conv2d", "plain NCHW conv with fused bias / residual / relu, clip or a table function (attributes strides, "
               "dilations, pads, group, bias, residual, activation, clip_min, clip_max, epilogue, epilogue_attr0/1)",
     conv2d_text},
};

const tsl_op_generator *tsl_ops_conv2d_generators(int *n) {
  *n = (int)(sizeof conv2d_generators / sizeof conv2d_generators[0]);
  return conv2d_generators;
}
