/* Inference batch normalization as a generated operator (generators.h). */
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* out = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]: plain, x viewed
 * [N, C, rest]; blocked, x viewed [N, CB, H*W, x] with the channel index clamped into
 * the parameters and the padding lanes written 0. */
tsl_status tsl_batch_norm_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "batch_norm", 5, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0];
  if (x->ndim < 2) return tsl_error(TSL_ERR_UNSUPPORTED, "batch_norm: an input of rank %d (>= 2)", x->ndim);
  int64_t C = x->shape[1];
  for (int i = 1; i < 5; i++)
    if (c->args[i].block || tsl_op_tensor_numel(&c->args[i]) != C)
      return tsl_error(TSL_ERR_INVALID, "batch_norm: parameter %d is not a plain vector of the %lld channels", i,
                       (long long)C);
  double eps = tsl_op_call_float(c, "epsilon", 1e-5);
  bool blocked = c->args[5].block > 0;
  int64_t v[4], X = 0;
  if (blocked) {
    if ((st = tsl_op_check_blocked(c, "batch_norm", 0, 1, &X)) != TSL_OK ||
        (st = tsl_op_check_blocked(c, "batch_norm", 5, 1, &X)) != TSL_OK)
      return st;
    tsl_op_view_blocked(x, v);
  } else {
    if ((st = tsl_op_check_plain(c, "batch_norm", 0)) != TSL_OK) return st;
    tsl_op_view3(x, 1, v);
  }
  tsl_op_text_view(t, 0, blocked ? 4 : 3, v);
  for (int i = 1; i < 5; i++) tsl_op_text_view(t, i, 1, &C);
  tsl_op_text_view(t, 5, blocked ? 4 : 3, v);
  snprintf(t->label, sizeof t->label, blocked ? "batch_norm_nchwc" : "batch_norm");
  tsl_op_text_header(t, 5);
  tsl_text_buf *b = &t->text;
  if (!blocked) {
    tsl_text_put(b, "  out[o, c, i] = (x0[o, c, i] - x3[c]) / sqrt(x4[c] + ");
    tsl_text_put_float(b, eps);
    tsl_text_put(b, ") * x1[c] + x2[c]\n");
    return TSL_OK;
  }
  char ch[96];
  snprintf(ch, sizeof ch, "min(cb*%lld + c, %lld)", (long long)X, (long long)(C - 1));
  tsl_text_put(b, "  out[n, cb, i, c] = ");
  tsl_op_put_lane_guard_open(b, C, X);
  tsl_text_put(b, "(x0[n, cb, i, c] - x3[%s]) / sqrt(x4[%s] + ", ch, ch);
  tsl_text_put_float(b, eps);
  tsl_text_put(b, ") * x1[%s] + x2[%s]", ch, ch);
  tsl_op_put_lane_guard_close(b, C, X);
  tsl_text_put(b, "\n");
  return TSL_OK;
}
