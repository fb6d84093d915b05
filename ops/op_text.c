/* What the generators share (op_text.h). */
#include "ops/op_text.h"

#include <math.h>
#include <stdio.h>

int tsl_op_tensor_storage(const tsl_op_tensor *t, int64_t shape[TSL_MAX_NDIM]) {
  if (t->block > 0 && t->ndim == 4) {
    int64_t x = t->block;
    shape[0] = t->shape[0];
    shape[1] = (t->shape[1] + x - 1) / x;
    shape[2] = t->shape[2];
    shape[3] = t->shape[3];
    shape[4] = x;
    return 5;
  }
  for (int d = 0; d < t->ndim; d++) shape[d] = t->shape[d];
  return t->ndim;
}

int64_t tsl_op_tensor_numel(const tsl_op_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

int64_t tsl_op_tensor_stored_numel(const tsl_op_tensor *t) {
  int64_t s[TSL_MAX_NDIM], n = 1;
  int nd = tsl_op_tensor_storage(t, s);
  for (int d = 0; d < nd; d++) n *= s[d];
  return n;
}

bool tsl_op_tensor_same_shape(const tsl_op_tensor *a, const tsl_op_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

void tsl_op_view3(const tsl_op_tensor *t, int axis, int64_t out[3]) {
  out[0] = out[2] = 1;
  out[1] = t->shape[axis];
  for (int d = 0; d < axis; d++) out[0] *= t->shape[d];
  for (int d = axis + 1; d < t->ndim; d++) out[2] *= t->shape[d];
}

void tsl_op_view_blocked(const tsl_op_tensor *t, int64_t out[4]) {
  int64_t s[TSL_MAX_NDIM];
  tsl_op_tensor_storage(t, s);
  out[0] = s[0];
  out[1] = s[1];
  out[2] = s[2] * s[3];
  out[3] = s[4];
}

void tsl_op_text_views_blocked(tsl_op_text *t, const tsl_op_call *c, int first, int count) {
  int64_t v[4];
  for (int a = first; a < first + count; a++) {
    tsl_op_view_blocked(&c->args[a], v);
    tsl_op_text_view(t, a, 4, v);
  }
}

void tsl_op_text_begin_plain(tsl_op_text *t, const tsl_op_call *c, const char *label) {
  for (int a = 0; a < c->nargs; a++) tsl_op_text_view(t, a, c->args[a].ndim, c->args[a].shape);
  snprintf(t->label, sizeof t->label, "%s", label);
  tsl_op_text_header(t, c->ninputs);
  tsl_text_put(&t->text, "  out[");
  tsl_op_put_axes(&t->text, c->args[c->nargs - 1].ndim);
  tsl_text_put(&t->text, "] = ");
}

tsl_status tsl_op_check_counts(const tsl_op_call *c, const char *name, int nin, int nout) {
  int nouts = c->nargs - c->ninputs;
  bool ok_in = nin < 0 ? c->ninputs >= 1 : c->ninputs == nin, ok_out = nout < 0 ? nouts >= 1 : nouts == nout;
  if (ok_in && ok_out) return TSL_OK;
  char want_in[24] = "one or more", want_out[24] = "one or more";
  if (nin >= 0) snprintf(want_in, sizeof want_in, "%d", nin);
  if (nout >= 0) snprintf(want_out, sizeof want_out, "%d", nout);
  return tsl_error(TSL_ERR_INVALID, "%s: %d inputs and %d outputs (takes %s inputs and %s outputs)", name, c->ninputs,
                   nouts, want_in, want_out);
}

tsl_status tsl_op_check_plain(const tsl_op_call *c, const char *name, int a) {
  if (c->args[a].block == 0) return TSL_OK;
  return tsl_error(TSL_ERR_UNSUPPORTED, "%s: argument %d is blocked (NCHW%dc); only the plain layout is generated", name,
                   a, c->args[a].block);
}

tsl_status tsl_op_check_plain_counts(const tsl_op_call *c, const char *name, int nin, int nout) {
  tsl_status st = tsl_op_check_counts(c, name, nin, nout);
  for (int a = 0; a < c->nargs && st == TSL_OK; a++) st = tsl_op_check_plain(c, name, a);
  return st;
}

tsl_status tsl_op_check_blocked(const tsl_op_call *c, const char *name, int first, int count, int64_t *x) {
  *x = c->args[first].block;
  for (int a = first; a < first + count; a++)
    if (c->args[a].ndim != 4 || c->args[a].block <= 0 || c->args[a].block != *x)
      return tsl_error(TSL_ERR_INVALID, "%s: argument %d is %s rank-%d tensor, not an image blocked like argument %d (NCHW%lldc)",
                       name, a, c->args[a].block > 0 ? "a blocked" : "a plain", c->args[a].ndim, first, (long long)*x);
  return TSL_OK;
}

tsl_status tsl_op_call_axis(const tsl_op_call *c, const char *name, const char *attr, int64_t dflt, int nd, int *axis) {
  int64_t a = tsl_op_call_int(c, attr, dflt);
  if (a < -nd || a >= nd)
    return tsl_error(TSL_ERR_INVALID, "%s: %s %lld is not an axis of a rank-%d tensor (-%d..%d)", name, attr, (long long)a, nd,
                     nd, nd - 1);
  *axis = (int)(a < 0 ? a + nd : a);
  return TSL_OK;
}

tsl_status tsl_op_call_ints_exact(const tsl_op_call *c, const char *name, const char *attr, int n, const int64_t *dflt,
                                  int64_t min, int64_t *out) {
  int m;
  const int64_t *v = tsl_op_call_ints(c, attr, &m);
  if (!v && !tsl_op_call_attr(c, attr)) {
    if (!dflt) return tsl_error(TSL_ERR_INVALID, "%s: missing attribute '%s' (%d integers)", name, attr, n);
    v = dflt;
    m = n;
  }
  if (!v || m != n) return tsl_error(TSL_ERR_INVALID, "%s: attribute '%s' holds %d integers, not %d", name, attr, m, n);
  for (int i = 0; i < n; i++) {
    if (v[i] < min)
      return tsl_error(TSL_ERR_INVALID, "%s: %s[%d] = %lld (must be >= %lld)", name, attr, i, (long long)v[i], (long long)min);
    out[i] = v[i];
  }
  return TSL_OK;
}

void tsl_op_put_axes(tsl_text_buf *b, int nd) {
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
}

void tsl_op_put_where(tsl_text_buf *b, int nd, const int64_t *dims) {
  tsl_text_put(b, "\n    where ");
  for (int d = 0; d < nd; d++) tsl_text_put(b, "%si%d < %lld", d ? ", " : "", d, (long long)dims[d]);
  tsl_text_put(b, "\n");
}

void tsl_op_put_bcast_read(tsl_text_buf *b, const tsl_op_text *t, int a, int nd, const int64_t *out) {
  tsl_text_put(b, "x%d[", a);
  int ra = t->ndims[a];
  for (int d = 0; d < ra; d++) {
    int od = nd - ra + d;
    if (t->views[a][d] == 1 && out[od] != 1) tsl_text_put(b, "%s0", d ? ", " : "");
    else tsl_text_put(b, "%si%d", d ? ", " : "", od);
  }
  tsl_text_put(b, "]");
}

void tsl_op_put_clip_open(tsl_text_buf *b, double lo, double hi) {
  if (isfinite(hi)) tsl_text_put(b, "min(");
  if (isfinite(lo)) tsl_text_put(b, "max(");
}

void tsl_op_put_clip_close(tsl_text_buf *b, double lo, double hi) {
  if (isfinite(lo)) {
    tsl_text_put(b, ", ");
    tsl_text_put_float(b, lo);
    tsl_text_put(b, ")");
  }
  if (isfinite(hi)) {
    tsl_text_put(b, ", ");
    tsl_text_put_float(b, hi);
    tsl_text_put(b, ")");
  }
}

void tsl_op_put_lane_guard_open(tsl_text_buf *b, int64_t C, int64_t X) {
  if (C % X) tsl_text_put(b, "select(cb*%lld + c < %lld, ", (long long)X, (long long)C);
}

void tsl_op_put_lane_guard_close(tsl_text_buf *b, int64_t C, int64_t X) {
  if (C % X) tsl_text_put(b, ", 0.0)");
}
