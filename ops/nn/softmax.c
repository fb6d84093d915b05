/* Softmax along one axis (generators.h). */
#include "ops/nn/generators.h"

#include <stdio.h>

tsl_status tsl_softmax_text(const tsl_op_call *c, tsl_op_text *t) {
  if (c->nargs != 2 || c->ninputs != 1)
    return tsl_error(TSL_ERR_INVALID, "softmax: one input and one output, not %d and %d", c->ninputs,
                     c->nargs - c->ninputs);
  const tsl_op_tensor *x = &c->args[0];
  int64_t axis = tsl_op_call_int(c, "axis", x->ndim - 1);
  if (axis < 0 || axis >= x->ndim || x->block)
    return tsl_error(TSL_ERR_UNSUPPORTED, "softmax: axis %lld of a %s rank-%d tensor", (long long)axis,
                     x->block ? "blocked" : "plain", x->ndim);
  int64_t v[3] = {1, x->shape[axis], 1};
  for (int d = 0; d < axis; d++) v[0] *= x->shape[d];
  for (int d = (int)axis + 1; d < x->ndim; d++) v[2] *= x->shape[d];
  tsl_op_text_view(t, 0, 3, v);
  tsl_op_text_view(t, 1, 3, v);
  snprintf(t->label, sizeof t->label, "softmax");
  tsl_op_text_header(t, 1);
  tsl_text_put(&t->text, "  mx[o, i] = max(a: x0[o, a, i])\n"
                         "  e[o, a, i] = exp(x0[o, a, i] - mx[o, i])\n"
                         "  sm[o, i] = sum(a: e[o, a, i])\n"
                         "  out[o, a, i] = e[o, a, i] / sm[o, i]\n");
  return TSL_OK;
}
