/* ONNX SpaceToDepth as a generated operator (generators.h). */
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* Output channel ch = (by*b + bx)*C + c at (h, w) reads x[c, h*b + by, w*b + bx] (ONNX
 * SpaceToDepth, blocksize b); x plain [N, C, H, W], the output plain [N, C*b*b, H/b, W/b]. */
tsl_status tsl_space_to_depth_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_plain_counts(c, "space_to_depth", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  int64_t bs = tsl_op_call_int(c, "blocksize", 0);
  if (x->ndim != 4 || y->ndim != 4 || bs < 1 || x->shape[2] % bs || x->shape[3] % bs)
    return tsl_error(TSL_ERR_INVALID, "space_to_depth: a rank-%d input (4) whose H and W blocksize %lld divides", x->ndim,
                     (long long)bs);
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2] / bs, W = x->shape[3] / bs, CO = C * bs * bs;
  if (y->shape[0] != N || y->shape[1] != CO || y->shape[2] != H || y->shape[3] != W)
    return tsl_error(TSL_ERR_INVALID, "space_to_depth: the output must be [%lld, %lld, %lld, %lld]", (long long)N,
                     (long long)CO, (long long)H, (long long)W);
  tsl_op_text_view(t, 0, 4, x->shape);
  tsl_op_text_view(t, 1, 4, y->shape);
  snprintf(t->label, sizeof t->label, "space_to_depth_b%lld", (long long)bs);
  tsl_op_text_header(t, 1);
  tsl_text_put(&t->text,
               "  out[n, ch, h, w] = x0[n, ch %% %lld, h*%lld + ch / %lld / %lld, w*%lld + ch / %lld %% %lld]\n"
               "    where n < %lld, ch < %lld, h < %lld, w < %lld\n",
               (long long)C, (long long)bs, (long long)C, (long long)bs, (long long)bs, (long long)C, (long long)bs,
               (long long)N, (long long)CO, (long long)H, (long long)W);
  return TSL_OK;
}
