/* Pad in the modes that read the input for every output element: reflect, edge, wrap
 * (generators.h; the constant mode is the "pad" kernel of the graph compiler).
 *
 * Per axis with pads (begin, end), negative pads crop first (ONNX's reference slices the
 * input, then pads what remains): the kept part is [lo, lo + m) of the input, and output
 * index i sits at s = i - max(begin, 0) in it. Then, as numpy.pad (which the ONNX
 * reference calls): edge clamps s into [0, m); wrap takes s mod m; reflect mirrors about
 * the first and last element without repeating them, i.e. s mod 2(m - 1) folded back:
 * (m - 1) - |s mod 2(m - 1) - (m - 1)|, periodic for pads of any width (m = 1: the one
 * element). All with the DSL's floor modulo, so negative s is handled too. */
#include "ops/nn/generators.h"

#include <stdio.h>
#include <string.h>

tsl_status tsl_pad_mode_text(const tsl_op_call *c, tsl_op_text *t) {
  if (c->nargs != 2 || c->ninputs != 1)
    return tsl_error(TSL_ERR_INVALID, "pad_mode: one input and one output, not %d and %d", c->ninputs,
                     c->nargs - c->ninputs);
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  const char *mode = tsl_op_call_string(c, "mode", "");
  int np, r = x->ndim;
  const int64_t *pads = tsl_op_call_ints(c, "pads", &np);
  bool reflect = strcmp(mode, "reflect") == 0, edge = strcmp(mode, "edge") == 0, wrap = strcmp(mode, "wrap") == 0;
  if (!reflect && !edge && !wrap)
    return tsl_error(TSL_ERR_UNSUPPORTED, "pad_mode: mode '%s' (reflect, edge and wrap are generated here)", mode);
  if (x->block || y->block) return tsl_error(TSL_ERR_UNSUPPORTED, "pad_mode: plain layout only");
  if (!pads || np != 2 * r || y->ndim != r)
    return tsl_error(TSL_ERR_INVALID, "pad_mode: %d pads for rank %d (output rank %d)", np, r, y->ndim);
  int64_t lo[TSL_MAX_NDIM], m[TSL_MAX_NDIM], begin[TSL_MAX_NDIM];
  for (int d = 0; d < r; d++) {
    int64_t b = pads[d], e = pads[d + r];
    lo[d] = b < 0 ? -b : 0;
    m[d] = x->shape[d] - lo[d] - (e < 0 ? -e : 0);
    begin[d] = b > 0 ? b : 0;
    if (y->shape[d] != m[d] + begin[d] + (e > 0 ? e : 0) || (m[d] < 1 && y->shape[d] > 0))
      return tsl_error(TSL_ERR_INVALID, "pad_mode: axis %d: extent %lld with pads %lld, %lld gives %lld, not %lld%s", d,
                       (long long)x->shape[d], (long long)b, (long long)e, (long long)(m[d] + b + e),
                       (long long)y->shape[d], m[d] < 1 ? " (nothing left to pad from)" : "");
  }
  tsl_op_text_view(t, 0, r, x->shape);
  tsl_op_text_view(t, 1, r, y->shape);
  snprintf(t->label, sizeof t->label, "pad_%s", mode);
  tsl_op_text_header(t, 1);
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  out[");
  for (int d = 0; d < r; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
  tsl_text_put(b, "] = x0[");
  for (int d = 0; d < r; d++) {
    tsl_text_put(b, "%s", d ? ", " : "");
    if (pads[d] == 0 && pads[d + r] == 0) {
      tsl_text_put(b, "i%d", d);
      continue;
    }
    char s[64]; /* the position in the kept part */
    snprintf(s, sizeof s, "(i%d - %lld)", d, (long long)begin[d]);
    long long L = lo[d], M = m[d];
    if (edge || M == 1) tsl_text_put(b, "%lld + min(max(%s, 0), %lld)", L, s, M - 1);
    else if (wrap) tsl_text_put(b, "%lld + %s %% %lld", L, s, M);
    else tsl_text_put(b, "%lld + %lld - abs(%s %% %lld - %lld)", L, M - 1, s, 2 * (M - 1), M - 1);
  }
  tsl_text_put(b, "]\n    where ");
  for (int d = 0; d < r; d++) tsl_text_put(b, "%si%d < %lld", d ? ", " : "", d, (long long)y->shape[d]);
  tsl_text_put(b, "\n");
  return TSL_OK;
}
