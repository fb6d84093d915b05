/* Layer normalization over a block of axes, one kernel (generators.h). The variance is
 * taken around the mean (two passes over the row, as ONNX's function body defines it),
 * and the row is divided by sqrt(var + epsilon) as ONNX Runtime's CPU kernel does
 * (layer_norm_impl.cc). Optional outputs: the mean and 1 / sqrt(var + epsilon) of each
 * row. */
#include "ops/nn/generators.h"

#include <math.h>
#include <stdio.h>

enum { SCALE_BCAST = 1u, BIAS_BCAST = 2u };

/* Class bit `bit` on the tail axes where operand p (right-aligned to them) has extent 1. */
static void mark_bcast(const tsl_op_tensor *p, const int64_t *tail, int nt, unsigned bit, unsigned *cls) {
  for (int j = 0; j < nt; j++) {
    int pd = p->ndim - nt + j;
    int64_t e = pd >= 0 ? p->shape[pd] : 1;
    if (e == 1 && tail[j] != 1) cls[j] |= bit;
  }
}

static bool fits_tail(const tsl_op_tensor *p, const int64_t *tail, int nt) {
  if (p->block) return false;
  for (int i = 0; i < p->ndim; i++) {
    int j = nt - p->ndim + i;
    if (j < 0 ? p->shape[i] != 1 : p->shape[i] != 1 && p->shape[i] != tail[j]) return false;
  }
  return true;
}

/* "x1[j0, 0]" for operand a, "0" where it broadcasts */
static void put_operand(tsl_text_buf *b, int a, int n, const unsigned *gc, unsigned bit) {
  tsl_text_put(b, "x%d[", a);
  tsl_gen_put_index(b, "j", n, gc, bit);
  tsl_text_put(b, "]");
}

/* NCHW[x]c data normalized over its channels (axis 1, end 2): per pixel, the sums over the
 * blocks first (a vector of the block's lanes), then over the lanes; the padding lanes
 * (zero on input) are left out of the variance and written zero. Scale and bias: plain
 * [C] (or one value). */
static tsl_status blocked_channels(const tsl_op_call *c, tsl_op_text *t, double eps) {
  const tsl_op_tensor *x = &c->args[0];
  int64_t B = x->block, C = x->shape[1], CB = (C + B - 1) / B;
  if (x->ndim != 4 || c->args[c->ninputs].block != B || c->nargs != c->ninputs + 1)
    return tsl_error(TSL_ERR_UNSUPPORTED, "layer_norm: blocked data only as 4-D NCHW[x]c over its channels, one output");
  int64_t v[4] = {x->shape[0], CB, x->shape[2] * x->shape[3], B}, pv[TSL_MAX_NDIM][1];
  tsl_op_text_view(t, 0, 4, v);
  for (int a = 1; a < c->ninputs; a++) {
    const tsl_op_tensor *p = &c->args[a];
    int64_t n = 1;
    for (int d = 0; d < p->ndim; d++) n *= p->shape[d];
    if (p->block || (n != C && n != 1))
      return tsl_error(TSL_ERR_UNSUPPORTED, "layer_norm: a blocked input's %s must be plain [C] or one value",
                       a == 1 ? "scale" : "bias");
    pv[a][0] = n;
    tsl_op_text_view(t, a, 1, pv[a]);
  }
  tsl_op_text_view(t, c->ninputs, 4, v);
  snprintf(t->label, sizeof t->label, "layer_norm_nchwc");
  tsl_op_text_header(t, c->ninputs);
  tsl_text_buf *b = &t->text;
  char lane[96], ch[96], p1[120], p2[120];
  snprintf(lane, sizeof lane, "cb*%lld + c < %lld", (long long)B, (long long)C);
  snprintf(ch, sizeof ch, "min(cb*%lld + c, %lld)", (long long)B, (long long)(C - 1));
  snprintf(p1, sizeof p1, "x1[%s]", pv[1][0] == 1 ? "0" : ch);
  snprintf(p2, sizeof p2, "x2[%s]", c->ninputs < 3 ? "" : pv[2][0] == 1 ? "0" : ch);
  tsl_text_put(b,
               "  s1[n, i, c] = sum(cb: x0[n, cb, i, c])\n"
               "  sm[n, i] = sum(c: s1[n, i, c])\n"
               "  dv[n, cb, i, c] = x0[n, cb, i, c] - sm[n, i] / %lld\n"
               "  q1[n, i, c] = sum(cb: select(%s, dv[n, cb, i, c] * dv[n, cb, i, c], 0.0))\n"
               "  sq[n, i] = sum(c: q1[n, i, c])\n"
               "  sd[n, i] = sqrt(sq[n, i] / %lld + ",
               (long long)C, lane, (long long)C);
  tsl_text_put_float(b, eps);
  tsl_text_put(b, ")\n  out[n, cb, i, c] = select(%s, dv[n, cb, i, c] / sd[n, i] * %s%s%s, 0.0)\n", lane, p1,
               c->ninputs == 3 ? " + " : "", c->ninputs == 3 ? p2 : "");
  return TSL_OK;
}

tsl_status tsl_layer_norm_text(const tsl_op_call *c, tsl_op_text *t) {
  int nout = c->nargs - c->ninputs;
  if (c->ninputs < 2 || c->ninputs > 3 || nout < 1 || nout > 3)
    return tsl_error(TSL_ERR_INVALID,
                     "layer_norm: inputs x, scale and an optional bias; outputs y, mean, inverse std (not %d and %d)",
                     c->ninputs, nout);
  const tsl_op_tensor *x = &c->args[0];
  int64_t axis = tsl_op_call_int(c, "axis", x->ndim - 1), end = tsl_op_call_int(c, "end", x->ndim);
  double eps = tsl_op_call_float(c, "epsilon", 1e-5);
  if (axis < 0 || end <= axis || end > x->ndim || (x->block && (axis != 1 || end != 2)))
    return tsl_error(TSL_ERR_UNSUPPORTED, "layer_norm: axes %lld..%lld of a %s rank-%d tensor", (long long)axis,
                     (long long)end - 1, x->block ? "blocked" : "plain", x->ndim);
  if (!isfinite(eps) || eps < 0) return tsl_error(TSL_ERR_INVALID, "layer_norm: epsilon %g", eps);
  if (x->block) return blocked_channels(c, t, eps);
  int nt = (int)(end - axis);
  const int64_t *tail = x->shape + axis;
  unsigned cls[TSL_MAX_NDIM] = {0};
  for (int a = 1; a < c->ninputs; a++) {
    if (!fits_tail(&c->args[a], tail, nt))
      return tsl_error(TSL_ERR_UNSUPPORTED, "layer_norm: %s does not broadcast to the normalized axes",
                       a == 1 ? "scale" : "bias");
    mark_bcast(&c->args[a], tail, nt, a == 1 ? SCALE_BCAST : BIAS_BCAST, cls);
  }
  /* x viewed [outer, groups of the normalized axes..., inner]; the statistics [outer, inner] */
  int64_t outer = 1, inner = 1, count = 1, gd[TSL_MAX_NDIM + 2], view[TSL_MAX_NDIM], stat[2];
  unsigned gc[TSL_MAX_NDIM];
  for (int d = 0; d < axis; d++) outer *= x->shape[d];
  for (int d = (int)end; d < x->ndim; d++) inner *= x->shape[d];
  for (int j = 0; j < nt; j++) count *= tail[j];
  int n = tsl_gen_group_axes(nt, tail, cls, gd + 1, gc);
  gd[0] = outer;
  gd[n + 1] = inner;
  stat[0] = outer;
  stat[1] = inner;
  int nx = n + 1 + (inner > 1);
  tsl_op_text_view(t, 0, nx, gd);
  for (int a = 1; a < c->ninputs; a++) {
    tsl_gen_operand_view(n, gd + 1, gc, a == 1 ? SCALE_BCAST : BIAS_BCAST, view);
    tsl_op_text_view(t, a, n, view);
  }
  tsl_op_text_view(t, c->ninputs, nx, gd);
  for (int k = 1; k < nout; k++) tsl_op_text_view(t, c->ninputs + k, inner > 1 ? 2 : 1, stat);
  snprintf(t->label, sizeof t->label, "layer_norm");
  tsl_op_text_header(t, c->ninputs);
  tsl_text_buf *b = &t->text;
  /* js: the normalized axes j0..; ix: an element "o, j0, .., i"; st: a row "o, i" */
  char js[8 * (TSL_MAX_NDIM + 1)], ix[8 * (TSL_MAX_NDIM + 3)];
  const char *st = inner > 1 ? "o, i" : "o";
  size_t o = 0;
  js[0] = '\0';
  for (int j = 0; j < n; j++) o += (size_t)snprintf(js + o, sizeof js - o, "%sj%d", j ? ", " : "", j);
  snprintf(ix, sizeof ix, "o, %s%s", js, inner > 1 ? ", i" : "");
  tsl_text_put(b, "  sm[%s] = sum(%s: x0[%s])\n", st, js, ix);
  tsl_text_put(b, "  dv[%s] = x0[%s] - sm[%s] / %lld\n", ix, ix, st, (long long)count);
  tsl_text_put(b, "  sq[%s] = sum(%s: dv[%s] * dv[%s])\n", st, js, ix, ix);
  tsl_text_put(b, "  sd[%s] = sqrt(sq[%s] / %lld + ", st, st, (long long)count);
  tsl_text_put_float(b, eps);
  tsl_text_put(b, ")\n%s  out[%s] = dv[%s] / sd[%s] * ", nout > 1 ? "  @output\n" : "", ix, ix, st);
  put_operand(b, 1, n, gc, SCALE_BCAST);
  if (c->ninputs == 3) {
    tsl_text_put(b, " + ");
    put_operand(b, 2, n, gc, BIAS_BCAST);
  }
  tsl_text_put(b, "\n");
  if (nout > 1) tsl_text_put(b, "  @output\n  mean[%s] = sm[%s] / %lld\n", st, st, (long long)count);
  if (nout > 2) tsl_text_put(b, "  @output\n  inv_std[%s] = 1.0 / sd[%s]\n", st, st);
  return TSL_OK;
}
