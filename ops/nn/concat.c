/* Concat and Split along one axis as generated operators (generators.h). */
#include <stdbool.h>
#include <stdio.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* Channel concat in NCHW[x]c: output channel ch = cb*x + c comes from input i at
 * ch - offset_i. Inputs whose channels fill whole blocks are copied block by block. */
static void put_concat_blocked(const tsl_op_call *c, int64_t X, tsl_op_text *t) {
  int nin = c->ninputs;
  bool aligned = true;
  for (int a = 0; a < nin; a++) aligned &= c->args[a].shape[1] % X == 0;
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  out[n, cb, i, c] = ");
  int64_t off = 0;
  for (int a = 0; a < nin; a++) {
    int64_t C = c->args[a].shape[1];
    bool last = a + 1 == nin;
    if (aligned) {
      /* whole blocks: block index arithmetic only */
      int64_t ob = off / X, nb = C / X;
      if (!last) tsl_text_put(b, "select(cb < %lld, ", (long long)(ob + nb));
      tsl_text_put(b, "x%d[n, min(max(cb - %lld, 0), %lld), i, c]", a, (long long)ob, (long long)(nb - 1));
      if (!last) tsl_text_put(b, ", ");
    } else {
      char idx[128];
      snprintf(idx, sizeof idx, "min(max(cb*%lld + c - %lld, 0), %lld)", (long long)X, (long long)off, (long long)(C - 1));
      tsl_text_put(b, "select(cb*%lld + c < %lld, x%d[n, %s / %lld, i, %s %% %lld], ", (long long)X, (long long)(off + C), a,
                   idx, (long long)X, idx, (long long)X);
      if (last) tsl_text_put(b, "0.0)");
    }
    off += C;
  }
  for (int a = 0; a + 1 < nin; a++) tsl_text_put(b, ")");
  const int64_t *v = t->views[nin];
  tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)v[0], (long long)v[1], (long long)v[2],
               (long long)v[3]);
}

/* Every argument viewed outer x axis x inner; the inputs follow each other along the
 * middle axis. */
static void put_concat_plain(const tsl_op_call *c, tsl_op_text *t) {
  int nin = c->ninputs;
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  out[o, a, i] = ");
  int64_t off = 0;
  for (int i = 0; i < nin; i++) {
    int64_t len = t->views[i][1];
    if (i + 1 < nin)
      tsl_text_put(b, "select(a >= %lld && a < %lld, x%d[o, a - %lld, i], ", (long long)off, (long long)(off + len), i,
                   (long long)off);
    else
      tsl_text_put(b, "select(a >= %lld, x%d[o, a - %lld, i], 0.0)", (long long)off, i, (long long)off);
    off += len;
  }
  for (int i = 0; i + 1 < nin; i++) tsl_text_put(b, ")");
  const int64_t *v = t->views[nin];
  tsl_text_put(b, "\n    where o < %lld, a < %lld, i < %lld\n", (long long)v[0], (long long)v[1], (long long)v[2]);
}

tsl_status tsl_concat_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "concat", -1, 1);
  int axis, nin = c->ninputs;
  if (st == TSL_OK) st = tsl_op_call_axis(c, "concat", "axis", 0, c->args[nin].ndim, &axis);
  if (st != TSL_OK) return st;
  int64_t X = 0;
  bool blocked = c->args[nin].block > 0;
  if (blocked) {
    st = tsl_op_check_blocked(c, "concat", 0, c->nargs, &X);
    if (st == TSL_OK && axis != 1)
      st = tsl_error(TSL_ERR_UNSUPPORTED, "concat: blocked tensors are concatenated along the channels (axis 1), not %d",
                     axis);
    if (st != TSL_OK) return st;
    tsl_op_text_views_blocked(t, c, 0, c->nargs);
  }
  for (int a = 0; a < c->nargs && !blocked; a++) {
    if ((st = tsl_op_check_plain(c, "concat", a)) != TSL_OK) return st;
    if (c->args[a].ndim != c->args[nin].ndim)
      return tsl_error(TSL_ERR_INVALID, "concat: argument %d of rank %d, the output of rank %d", a, c->args[a].ndim,
                       c->args[nin].ndim);
    int64_t v[3];
    tsl_op_view3(&c->args[a], axis, v);
    tsl_op_text_view(t, a, 3, v);
  }
  snprintf(t->label, sizeof t->label, "concat%d%s", nin, blocked ? "_nchwc" : "");
  tsl_op_text_header(t, nin);
  if (blocked) put_concat_blocked(c, X, t);
  else put_concat_plain(c, t);
  return TSL_OK;
}

/* One input viewed outer x axis x inner, each output a run of the middle axis. */
tsl_status tsl_split_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_plain_counts(c, "split", 1, -1);
  int axis;
  if (st == TSL_OK) st = tsl_op_call_axis(c, "split", "axis", 0, c->args[0].ndim, &axis);
  for (int a = 1; a < c->nargs && st == TSL_OK; a++)
    if (c->args[a].ndim != c->args[0].ndim)
      st = tsl_error(TSL_ERR_INVALID, "split: output %d of rank %d, the input of rank %d", a - 1, c->args[a].ndim,
                     c->args[0].ndim);
  if (st != TSL_OK) return st;
  int nout = c->nargs - 1;
  int64_t v[3];
  for (int a = 0; a < c->nargs; a++) {
    tsl_op_view3(&c->args[a], axis, v);
    tsl_op_text_view(t, a, 3, v);
  }
  snprintf(t->label, sizeof t->label, "split%d", nout);
  tsl_op_text_header(t, 1);
  int64_t off = 0;
  for (int i = 0; i < nout; i++) {
    const int64_t *s = t->views[1 + i];
    tsl_text_put(&t->text, "  @output\n  y%d[o, a, i] = x0[o, a + %lld, i]\n    where o < %lld, a < %lld, i < %lld\n", i,
                 (long long)off, (long long)s[0], (long long)s[1], (long long)s[2]);
    off += s[1];
  }
  return TSL_OK;
}
