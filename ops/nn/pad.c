/* Pad with a constant as a generated operator (generators.h). */
#include <math.h>
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* Attribute "pads": the begin of every axis, then the end (ONNX order; negative crops),
 * "value" the fill (default 0): out[i] = x[i - begin] inside the input, value outside. */
tsl_status tsl_pad_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_plain_counts(c, "pad", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  int nd = x->ndim;
  int64_t pads[2 * TSL_MAX_NDIM];
  if (y->ndim != nd) return tsl_error(TSL_ERR_INVALID, "pad: a rank-%d input, a rank-%d output", nd, y->ndim);
  if ((st = tsl_op_call_ints_exact(c, "pad", "pads", 2 * nd, NULL, INT64_MIN, pads)) != TSL_OK) return st;
  for (int d = 0; d < nd; d++)
    if (pads[d] + x->shape[d] + pads[nd + d] != y->shape[d])
      return tsl_error(TSL_ERR_INVALID, "pad: axis %d: %lld + %lld + %lld is not the output's %lld", d, (long long)pads[d],
                       (long long)x->shape[d], (long long)pads[nd + d], (long long)y->shape[d]);
  double value = tsl_op_call_float(c, "value", 0.0);
  if (!isfinite(value)) return tsl_error(TSL_ERR_UNSUPPORTED, "pad: a non-finite padding value");
  tsl_op_text_begin_plain(t, c, "pad");
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "select(");
  for (int d = 0; d < nd; d++)
    tsl_text_put(b, "%si%d >= %lld && i%d < %lld", d ? " && " : "", d, (long long)pads[d], d, (long long)(pads[d] + x->shape[d]));
  tsl_text_put(b, ", x0[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d - %lld", d ? ", " : "", d, (long long)pads[d]);
  tsl_text_put(b, "], ");
  tsl_text_put_float(b, value);
  tsl_text_put(b, ")");
  tsl_op_put_where(b, nd, y->shape);
  return TSL_OK;
}
