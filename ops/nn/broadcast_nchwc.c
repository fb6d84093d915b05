/* The blocked (NCHW[x]c) binary elementwise kernel that broadcasts (generators.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ops/nn/generators.h"

/* The index of operand `a` (logical shape s) read at output element [n, cb, y, x, c]:
 * a broadcast axis (size 1 where the output's is not) reads index 0; a broadcast channel
 * axis reads channel 0, i.e. block 0, lane 0. */
static void put_index(tsl_text_buf *b, const tsl_op_tensor *s, const tsl_op_tensor *out) {
  bool bc[4];
  for (int d = 0; d < 4; d++) bc[d] = s->shape[d] == 1 && out->shape[d] != 1;
  tsl_text_put(b, "%s, %s, %s, %s, %s", bc[0] ? "0" : "n", bc[1] ? "0" : "cb", bc[2] ? "0" : "y", bc[3] ? "0" : "x",
               bc[1] ? "0" : "c");
}

tsl_status tsl_elemwise_broadcast_nchwc_text(const tsl_op_call *c, const char *fname, const char *infix,
                                             tsl_op_text *t) {
  if (c->nargs != 3 || c->ninputs != 2)
    return tsl_error(TSL_ERR_INVALID, "elemwise: a blocked %s takes two inputs and one output, not %d and %d", fname,
                     c->ninputs, c->nargs - c->ninputs);
  const tsl_op_tensor *out = &c->args[2];
  int64_t X = out->block;
  if (out->ndim != 4 || X < 1)
    return tsl_error(TSL_ERR_INVALID, "elemwise: the output must be a blocked 4-D tensor");
  bool bc_channel = false;
  for (int a = 0; a < 3; a++) {
    const tsl_op_tensor *s = &c->args[a];
    if (s->ndim != 4 || s->block != X)
      return tsl_error(TSL_ERR_INVALID, "elemwise: argument %d is not 4-D in NCHW%lldc", a, (long long)X);
    for (int d = 0; d < 4; d++)
      if (s->shape[d] != out->shape[d] && s->shape[d] != 1)
        return tsl_error(TSL_ERR_INVALID, "elemwise: argument %d's axis %d (%lld) does not broadcast to %lld", a,
                         d, (long long)s->shape[d], (long long)out->shape[d]);
    bc_channel |= s->shape[1] == 1 && out->shape[1] != 1;
    int64_t view[5] = {s->shape[0], (s->shape[1] + X - 1) / X, s->shape[2], s->shape[3], X};
    tsl_op_text_view(t, a, 5, view);
  }
  /* the padding lanes (channels past C) stay 0: op(0, 0) = 0 for add, sub and mul of two
   * full-channel operands; a broadcast channel or a division needs the guard */
  int64_t C = out->shape[1];
  bool guard = C % X && (bc_channel || strcmp(fname, "div") == 0);
  snprintf(t->label, sizeof t->label, "%s_bcast_nchwc", fname);
  tsl_op_text_header(t, 2);
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[n, cb, y, x, c] = ");
  if (guard) tsl_text_put(b, "select(cb*%lld + c < %lld, ", (long long)X, (long long)C);
  tsl_text_put(b, "x0[");
  put_index(b, &c->args[0], out);
  tsl_text_put(b, "] %s x1[", infix);
  put_index(b, &c->args[1], out);
  tsl_text_put(b, "]%s\n    where n < %lld, cb < %lld, y < %lld, x < %lld, c < %lld\n", guard ? ", 0.0)" : "",
               (long long)out->shape[0], (long long)t->views[2][1], (long long)out->shape[2], (long long)out->shape[3],
               (long long)X);
  return TSL_OK;
}
