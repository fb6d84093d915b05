/* Squeeze-excitation's gate as one kernel (generators.h, "squeeze_excite"): the pooled
 * vector of a blocked image and its two small fully connected layers,
 *     p[n, c] = mean over (h, w) of x[n, c, h, w]
 *     h[n, s] = act(sum_c W1[s, c] * p[n, c] + B1[s])
 *     out[n, c] = gate(sum_s W2t[s, c] * h[n, s] + B2[c])
 * (Hu et al. 2018, "Squeeze-and-Excitation Networks"), written as the stages of one
 * operator so the graph runs one kernel where it ran a pool and two 1x1 convs. Everything
 * stays blocked: the pooled sums [N, CB, x], the weights padded by the pass to whole blocks
 * (W1 as [CB, S, x], W2 transposed as [S, CB, x], B2 [1, CB, x], zeros past C), so both
 * layers run on vectors of x lanes reading the weights in storage order (the first layer sums per lane over the
 * blocks, then over the lanes, as ops/nn/layer_norm.c's channel statistics). Output lanes
 * past C are written 0. The hidden layer is a stage of its own (tagged, so not inlined
 * into the second layer's sum, which would compute the function S times per channel);
 * the output stage is tagged "squeeze_excite" for its schedule (ops/nn/default_schedule.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/nn/activation.h"
#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* Writes fn(x) for the function named by attribute `which` ("hidden" or "gate") of c:
 * absent or "" the identity, "Relu", "Clip" (attributes WHICH_attr0, WHICH_attr1: min and
 * max, infinite when absent), or a function of the activation table (its attributes
 * WHICH_attr0, WHICH_attr1 in the table's order, the table's defaults where absent). */
static tsl_status put_function(const tsl_op_call *c, const char *which, const char *x, tsl_text_buf *b) {
  char n0[32], n1[32];
  snprintf(n0, sizeof n0, "%s_attr0", which);
  snprintf(n1, sizeof n1, "%s_attr1", which);
  const char *name = tsl_op_call_string(c, which, "");
  if (!name[0]) {
    tsl_text_put(b, "%s", x);
    return TSL_OK;
  }
  if (strcmp(name, "Relu") == 0) {
    tsl_text_put(b, "max(%s, 0.0)", x);
    return TSL_OK;
  }
  if (strcmp(name, "Clip") == 0) {
    double lo = tsl_op_call_float(c, n0, -INFINITY), hi = tsl_op_call_float(c, n1, INFINITY);
    tsl_op_put_clip_open(b, lo, hi);
    tsl_text_put(b, "%s", x);
    tsl_op_put_clip_close(b, lo, hi);
    return TSL_OK;
  }
  const tsl_activation *a = tsl_activation_find(name);
  if (!a) return tsl_error(TSL_ERR_UNSUPPORTED, "squeeze_excite: %s function '%s' is not in the activation table", which, name);
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  for (int k = 0; k < TSL_ACTIVATION_MAX_ATTRS; k++)
    attrs[k] = k < a->nattrs ? tsl_op_call_float(c, k ? n1 : n0, a->attr_default[k]) : 0.0;
  tsl_activation_put_dsl(a, x, attrs, b);
  return TSL_OK;
}

static bool is_shape(const tsl_op_tensor *t, int nd, const int64_t *s) {
  if (t->block || t->ndim != nd) return false;
  for (int d = 0; d < nd; d++)
    if (t->shape[d] != s[d]) return false;
  return true;
}

tsl_status tsl_squeeze_excite_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "squeeze_excite", 5, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *w1 = &c->args[1], *y = &c->args[5];
  if (x->ndim != 4 || !x->block || y->block != x->block || y->ndim != 4)
    return tsl_error(TSL_ERR_UNSUPPORTED, "squeeze_excite: input and output must be NCHW[x]c images of one block");
  int64_t N = x->shape[0], C = x->shape[1], X = x->block, CB = (C + X - 1) / X, HW = x->shape[2] * x->shape[3];
  int64_t S = w1->ndim == 3 ? w1->shape[1] : 0;
  int64_t w1s[3] = {CB, S, X}, b1s[3] = {1, S, 1}, w2s[3] = {S, CB, X}, b2s[3] = {1, CB, X}, out[4] = {N, C, 1, 1};
  if (S < 1 || !is_shape(w1, 3, w1s) || !is_shape(&c->args[2], 3, b1s) || !is_shape(&c->args[3], 3, w2s) ||
      !is_shape(&c->args[4], 3, b2s) || memcmp(y->shape, out, sizeof out) != 0 || HW < 1)
    return tsl_error(TSL_ERR_INVALID,
                     "squeeze_excite: needs x [N, C, H, W] blocked by x, plain W1 [CB, S, x], B1 [1, S, 1], "
                     "W2t [S, CB, x], B2 [1, CB, x] (CB = C/x rounded up) and a blocked output [N, C, 1, 1]");
  int64_t xv[4] = {N, CB, HW, X}, yv[3] = {N, CB, X};
  tsl_op_text_view(t, 0, 4, xv);
  tsl_op_text_view(t, 1, 3, w1s);
  tsl_op_text_view(t, 2, 1, &S);
  tsl_op_text_view(t, 3, 3, w2s);
  tsl_op_text_view(t, 4, 2, b2s + 1);
  tsl_op_text_view(t, 5, 3, yv);
  snprintf(t->label, sizeof t->label, "squeeze_excite_nchwc");
  tsl_op_text_header(t, 5);
  tsl_text_buf *b = &t->text;
  char e[96];
  /* the first layer per lane over the blocks, then over the lanes (a vector, then its sum) */
  tsl_text_put(b,
               "  acc[n, cb, c] = sum(j: x0[n, cb, j, c])\n"
               "  t1[n, s, c] = sum(cb: acc[n, cb, c] * x1[cb, s, c])\n"
               "  h0[n, s] = sum(c: t1[n, s, c])\n"
               "  @tag(\"squeeze_excite_hidden\")\n"
               "  h[n, s] = ");
  snprintf(e, sizeof e, "h0[n, s] / %lld.0 + x2[s]", (long long)HW);
  if ((st = put_function(c, "hidden", e, b)) != TSL_OK) return st;
  tsl_text_put(b, "\n  g0[n, cb, c] = sum(s: h[n, s] * x3[s, cb, c])\n  @tag(\"squeeze_excite\")\n  out[n, cb, c] = ");
  tsl_op_put_lane_guard_open(b, C, X);
  if ((st = put_function(c, "gate", "g0[n, cb, c] + x4[cb, c]", b)) != TSL_OK) return st;
  tsl_op_put_lane_guard_close(b, C, X);
  tsl_text_put(b, "\n");
  return b->oom ? tsl_error(TSL_ERR_NOMEM, "squeeze_excite: out of memory") : TSL_OK;
}
