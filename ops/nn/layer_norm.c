/* Layer normalization over the trailing axes, one kernel (generators.h). The variance
 * is taken around the mean (two passes over the row, as ONNX's function body defines
 * it), and the row is divided by sqrt(var + epsilon) as ONNX Runtime's and PyTorch's
 * kernels do. Optional outputs: the mean and 1 / sqrt(var + epsilon) of each row. */
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

tsl_status tsl_layer_norm_text(const tsl_op_call *c, tsl_op_text *t) {
  int nout = c->nargs - c->ninputs;
  if (c->ninputs < 2 || c->ninputs > 3 || nout < 1 || nout > 3)
    return tsl_error(TSL_ERR_INVALID,
                     "layer_norm: inputs x, scale and an optional bias; outputs y, mean, inverse std (not %d and %d)",
                     c->ninputs, nout);
  const tsl_op_tensor *x = &c->args[0];
  int64_t axis = tsl_op_call_int(c, "axis", x->ndim - 1);
  double eps = tsl_op_call_float(c, "epsilon", 1e-5);
  if (axis < 0 || axis >= x->ndim || x->block)
    return tsl_error(TSL_ERR_UNSUPPORTED, "layer_norm: axis %lld of a %s rank-%d tensor", (long long)axis,
                     x->block ? "blocked" : "plain", x->ndim);
  if (!isfinite(eps) || eps < 0) return tsl_error(TSL_ERR_INVALID, "layer_norm: epsilon %g", eps);
  int nt = x->ndim - (int)axis;
  const int64_t *tail = x->shape + axis;
  unsigned cls[TSL_MAX_NDIM] = {0};
  for (int a = 1; a < c->ninputs; a++) {
    if (!fits_tail(&c->args[a], tail, nt))
      return tsl_error(TSL_ERR_UNSUPPORTED, "layer_norm: %s does not broadcast to the normalized axes",
                       a == 1 ? "scale" : "bias");
    mark_bcast(&c->args[a], tail, nt, a == 1 ? SCALE_BCAST : BIAS_BCAST, cls);
  }
  int64_t outer = 1, count = 1, gd[TSL_MAX_NDIM + 1], view[TSL_MAX_NDIM];
  unsigned gc[TSL_MAX_NDIM];
  for (int d = 0; d < axis; d++) outer *= x->shape[d];
  for (int j = 0; j < nt; j++) count *= tail[j];
  int n = tsl_gen_group_axes(nt, tail, cls, gd + 1, gc);
  gd[0] = outer;
  tsl_op_text_view(t, 0, n + 1, gd);
  for (int a = 1; a < c->ninputs; a++) {
    tsl_gen_operand_view(n, gd + 1, gc, a == 1 ? SCALE_BCAST : BIAS_BCAST, view);
    tsl_op_text_view(t, a, n, view);
  }
  tsl_op_text_view(t, c->ninputs, n + 1, gd);
  for (int k = 1; k < nout; k++) tsl_op_text_view(t, c->ninputs + k, 1, &outer);
  snprintf(t->label, sizeof t->label, "layer_norm");
  tsl_op_text_header(t, c->ninputs);
  tsl_text_buf *b = &t->text;
  char js[8 * (TSL_MAX_NDIM + 1)];
  size_t o = 0;
  js[0] = '\0';
  for (int j = 0; j < n; j++) o += (size_t)snprintf(js + o, sizeof js - o, "%sj%d", j ? ", " : "", j);
  tsl_text_put(b, "  sm[o] = sum(%s: x0[o, %s])\n", js, js);
  tsl_text_put(b, "  dv[o, %s] = x0[o, %s] - sm[o] / %lld\n", js, js, (long long)count);
  tsl_text_put(b, "  sq[o] = sum(%s: dv[o, %s] * dv[o, %s])\n", js, js, js);
  tsl_text_put(b, "  sd[o] = sqrt(sq[o] / %lld + ", (long long)count);
  tsl_text_put_float(b, eps);
  tsl_text_put(b, ")\n%s  out[o, %s] = dv[o, %s] / sd[o] * ", nout > 1 ? "  @output\n" : "", js, js);
  put_operand(b, 1, n, gc, SCALE_BCAST);
  if (c->ninputs == 3) {
    tsl_text_put(b, " + ");
    put_operand(b, 2, n, gc, BIAS_BCAST);
  }
  tsl_text_put(b, "\n");
  if (nout > 1) tsl_text_put(b, "  @output\n  mean[o] = sm[o] / %lld\n", (long long)count);
  if (nout > 2) tsl_text_put(b, "  @output\n  inv_std[o] = 1.0 / sd[o]\n");
  return TSL_OK;
}
