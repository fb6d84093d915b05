/* Slice as a generated operator (generators.h). */
#include <stdbool.h>
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* ONNX's starts / axes / steps as a start and a step per axis of x (the output's shape
 * gives the extents): negative starts count from the end, then clamp into the axis
 * (0..dim for a positive step, 0..dim-1 for a negative one). */
static tsl_status slice_starts(const tsl_op_call *c, const tsl_op_tensor *x, int64_t *start, int64_t *step) {
  for (int d = 0; d < x->ndim; d++) {
    start[d] = 0;
    step[d] = 1;
  }
  int ns, na, nst;
  const int64_t *starts = tsl_op_call_ints(c, "starts", &ns), *axes = tsl_op_call_ints(c, "axes", &na);
  const int64_t *steps = tsl_op_call_ints(c, "steps", &nst);
  if (!starts) return tsl_error(TSL_ERR_INVALID, "slice: missing attribute 'starts'");
  if ((axes && na != ns) || (steps && nst != ns))
    return tsl_error(TSL_ERR_INVALID, "slice: %d starts, %d axes and %d steps (as many each)", ns, na, nst);
  for (int i = 0; i < ns; i++) {
    int64_t ax = axes ? axes[i] : i;
    if (ax < -x->ndim || ax >= x->ndim)
      return tsl_error(TSL_ERR_INVALID, "slice: axis %lld of a rank-%d tensor", (long long)ax, x->ndim);
    if (ax < 0) ax += x->ndim;
    int64_t dim = x->shape[ax], st = starts[i], sp = steps ? steps[i] : 1;
    if (sp == 0) return tsl_error(TSL_ERR_INVALID, "slice: step 0 on axis %lld", (long long)ax);
    if (st < 0) st += dim;
    if (sp > 0) st = st < 0 ? 0 : st > dim ? dim : st;
    else st = st < 0 ? 0 : st > dim - 1 ? dim - 1 : st;
    start[ax] = st;
    step[ax] = sp;
  }
  return TSL_OK;
}

/* A slice of channels [start, start + C_out) in NCHW[x]c (the other axes whole, steps
 * 1): whole blocks when both are multiples of x, else per channel with the padding lanes
 * written 0. */
static tsl_status slice_blocked(const tsl_op_call *c, const int64_t *start, const int64_t *step, tsl_op_text *t) {
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  int64_t X;
  tsl_status st = tsl_op_check_blocked(c, "slice", 0, 2, &X);
  for (int d = 0; d < 4 && st == TSL_OK; d++)
    if (step[d] != 1 || (d != 1 && (start[d] != 0 || x->shape[d] != y->shape[d])))
      st = tsl_error(TSL_ERR_UNSUPPORTED, "slice: a blocked slice takes a run of channels, not a step %lld or a part of "
                     "axis %d", (long long)step[d], d);
  if (st != TSL_OK) return st;
  int64_t C = x->shape[1], Co = y->shape[1], s = start[1];
  tsl_op_text_views_blocked(t, c, 0, 2);
  const int64_t *vout = t->views[1];
  snprintf(t->label, sizeof t->label, "channel_slice_nchwc");
  tsl_op_text_header(t, 1);
  tsl_text_buf *b = &t->text;
  if (s % X == 0 && Co % X == 0) {
    tsl_text_put(b, "  out[n, cb, i, c] = x0[n, cb + %lld, i, c]\n", (long long)(s / X));
  } else {
    char idx[96];
    snprintf(idx, sizeof idx, "min(cb*%lld + c + %lld, %lld)", (long long)X, (long long)s, (long long)(C - 1));
    tsl_text_put(b, "  out[n, cb, i, c] = select(cb*%lld + c < %lld, x0[n, %s / %lld, i, %s %% %lld], 0.0)\n", (long long)X,
                 (long long)Co, idx, (long long)X, idx, (long long)X);
  }
  tsl_text_put(b, "    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)vout[0], (long long)vout[1],
               (long long)vout[2], (long long)vout[3]);
  return TSL_OK;
}

/* out[i0, ...] = x[start0 + i0*step0, ...] over the output's extents. */
tsl_status tsl_slice_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "slice", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  if (x->ndim != y->ndim)
    return tsl_error(TSL_ERR_INVALID, "slice: an input of rank %d, an output of rank %d", x->ndim, y->ndim);
  int64_t start[TSL_MAX_NDIM], step[TSL_MAX_NDIM];
  if ((st = slice_starts(c, x, start, step)) != TSL_OK) return st;
  if (y->block) return slice_blocked(c, start, step, t);
  if ((st = tsl_op_check_plain(c, "slice", 0)) != TSL_OK) return st;
  tsl_op_text_begin_plain(t, c, "slice");
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "x0[");
  for (int d = 0; d < y->ndim; d++)
    tsl_text_put(b, "%s%lld + i%d*%lld", d ? ", " : "", (long long)start[d], d, (long long)step[d]);
  tsl_text_put(b, "]");
  tsl_op_put_where(b, y->ndim, y->shape);
  return TSL_OK;
}
