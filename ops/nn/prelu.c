/* PRelu: y = x < 0 ? slope * x : x with the slope broadcast to x (generators.h). */
#include "ops/nn/generators.h"

#include <stdio.h>

tsl_status tsl_prelu_text(const tsl_op_call *c, tsl_op_text *t) {
  if (c->nargs != 3 || c->ninputs != 2)
    return tsl_error(TSL_ERR_INVALID, "prelu: two inputs and one output, not %d and %d", c->ninputs,
                     c->nargs - c->ninputs);
  const tsl_op_tensor *x = &c->args[0], *s = &c->args[1], *y = &c->args[2];
  int r = x->ndim;
  bool ok = s->ndim <= r && !s->block && y->block == x->block && y->ndim == r && (!x->block || r == 4);
  for (int d = 0; ok && d < s->ndim; d++) {
    int xd = r - s->ndim + d;
    ok = s->shape[d] == 1 || s->shape[d] == x->shape[xd];
    /* blocked: the slope may vary along the channels only */
    if (x->block && xd != 1) ok = ok && s->shape[d] == 1;
  }
  if (!ok)
    return tsl_error(TSL_ERR_UNSUPPORTED, "prelu: a slope of rank %d (%s) does not broadcast to the %s rank-%d input",
                     s->ndim, s->block ? "blocked" : "plain", x->block ? "blocked" : "plain", r);
  tsl_op_text_view(t, 1, s->ndim, s->shape);
  int nd = r;
  char at[TSL_MAX_NDIM][48]; /* the output index of each input axis */
  if (x->block) {
    int64_t X = x->block, C = x->shape[1];
    int64_t v[5] = {x->shape[0], (C + X - 1) / X, x->shape[2], x->shape[3], X};
    tsl_op_text_view(t, 0, 5, v);
    tsl_op_text_view(t, 2, 5, v);
    nd = 5;
    for (int d = 0; d < 4; d++) snprintf(at[d], sizeof at[d], "i%d", d);
    snprintf(at[1], sizeof at[1], "min(i1*%lld + i4, %lld)", (long long)X, (long long)(C - 1));
  } else {
    tsl_op_text_view(t, 0, r, x->shape);
    tsl_op_text_view(t, 2, r, y->shape);
    for (int d = 0; d < r; d++) snprintf(at[d], sizeof at[d], "i%d", d);
  }
  snprintf(t->label, sizeof t->label, "prelu%s", x->block ? "_nchwc" : "");
  tsl_op_text_header(t, 2);
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
  tsl_text_put(b, "] = select(x0[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
  tsl_text_put(b, "] < 0.0, x0[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
  tsl_text_put(b, "] * x1[");
  for (int d = 0; d < s->ndim; d++) {
    int xd = r - s->ndim + d;
    tsl_text_put(b, "%s%s", d ? ", " : "", s->shape[d] == 1 ? "0" : at[xd]);
  }
  tsl_text_put(b, "], x0[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
  tsl_text_put(b, "])\n    where ");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d < %lld", d ? ", " : "", d, (long long)t->views[2][d]);
  tsl_text_put(b, "\n");
  return TSL_OK;
}
