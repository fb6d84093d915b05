/* Transpose as a generated operator (generators.h). */
#include <stdbool.h>
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* Output axis d is input axis perm[d] (attribute "perm"; absent: the axes reversed), so
 * out[i0, ..] = x[.., i_d at position perm[d], ..]. */
tsl_status tsl_transpose_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_plain_counts(c, "transpose", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  int nd = x->ndim, np, src_axis[TSL_MAX_NDIM];
  const int64_t *perm = tsl_op_call_ints(c, "perm", &np);
  if (y->ndim != nd || (perm && np != nd))
    return tsl_error(TSL_ERR_INVALID, "transpose: a rank-%d input, a rank-%d output and %d perm entries", nd, y->ndim,
                     perm ? np : nd);
  bool seen[TSL_MAX_NDIM] = {false};
  for (int d = 0; d < nd; d++) {
    int64_t pd = perm ? perm[d] : nd - 1 - d;
    if (pd < 0 || pd >= nd || seen[pd] || y->shape[d] != x->shape[pd])
      return tsl_error(TSL_ERR_INVALID, "transpose: perm[%d] = %lld is not a free axis of the input (0..%d) of the "
                       "output's extent", d, (long long)pd, nd - 1);
    seen[pd] = true;
    src_axis[pd] = d;
  }
  tsl_op_text_begin_plain(t, c, "transpose");
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "x0[");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", src_axis[d]);
  tsl_text_put(b, "]");
  tsl_op_put_where(b, nd, y->shape);
  return TSL_OK;
}
