/* ShuffleNet's channel shuffle as a generated operator (generators.h). */
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* Output channel ch = j*G + g reads input channel g*(C/G) + j (attribute "group" = G):
 * plain, x viewed [N, C, H*W]; blocked, [N, CB, H*W, x] with the padding lanes written 0. */
tsl_status tsl_channel_shuffle_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "channel_shuffle", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0];
  int64_t G = tsl_op_call_int(c, "group", 1), C = x->ndim == 4 ? x->shape[1] : 0;
  if (x->ndim != 4 || !tsl_op_tensor_same_shape(x, &c->args[1]) || G < 1 || C % G)
    return tsl_error(TSL_ERR_INVALID, "channel_shuffle: a rank-%d input (4) of %lld channels in %lld groups, the output "
                     "of its shape", x->ndim, (long long)C, (long long)G);
  bool blocked = c->args[1].block > 0;
  int64_t X = 0, v[4];
  if (blocked) {
    if ((st = tsl_op_check_blocked(c, "channel_shuffle", 0, 2, &X)) != TSL_OK) return st;
    tsl_op_view_blocked(x, v);
  } else {
    if ((st = tsl_op_check_plain(c, "channel_shuffle", 0)) != TSL_OK) return st;
    v[0] = x->shape[0];
    v[1] = C;
    v[2] = x->shape[2] * x->shape[3];
  }
  for (int a = 0; a < 2; a++) tsl_op_text_view(t, a, blocked ? 4 : 3, v);
  snprintf(t->label, sizeof t->label, "channel_shuffle%s_g%lld", blocked ? "_nchwc" : "", (long long)G);
  tsl_op_text_header(t, 1);
  tsl_text_buf *b = &t->text;
  if (!blocked) {
    tsl_text_put(b, "  out[n, c, i] = x0[n, (c %% %lld) * %lld + c / %lld, i]\n    where n < %lld, c < %lld, i < %lld\n",
                 (long long)G, (long long)(C / G), (long long)G, (long long)v[0], (long long)v[1], (long long)v[2]);
    return TSL_OK;
  }
  char ch[64], src[192];
  snprintf(ch, sizeof ch, "min(cb*%lld + c, %lld)", (long long)X, (long long)(C - 1));
  snprintf(src, sizeof src, "(%s %% %lld) * %lld + %s / %lld", ch, (long long)G, (long long)(C / G), ch, (long long)G);
  tsl_text_put(b, "  out[n, cb, i, c] = ");
  tsl_op_put_lane_guard_open(b, C, X);
  tsl_text_put(b, "x0[n, (%s) / %lld, i, (%s) %% %lld]", src, (long long)X, src, (long long)X);
  tsl_op_put_lane_guard_close(b, C, X);
  tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)v[0], (long long)v[1], (long long)v[2],
               (long long)v[3]);
  return TSL_OK;
}
