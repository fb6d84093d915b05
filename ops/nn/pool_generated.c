/* Pooling as generated operators (generators.h): a 2-D window in the plain or the blocked
 * layout, and the global mean. */
#include <stdio.h>
#include <string.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* An element is [n, c, y, x], or [n, cb, y, x, c] in NCHW[x]c: the window moves over y
 * and x only, so a blocked pool is the plain one with the lane index c carried along
 * (padding lanes: max or mean of zeros, zero). */
tsl_status tsl_pool2d_text(const tsl_op_call *c, tsl_op_text *t) {
  static const int64_t ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
  tsl_status st = tsl_op_check_counts(c, "pool2d", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  const char *mode = tsl_op_call_string(c, "mode", "");
  bool is_max = strcmp(mode, "max") == 0;
  if (!is_max && strcmp(mode, "avg") != 0)
    return tsl_error(TSL_ERR_INVALID, "pool2d: attribute mode '%s' (max or avg)", mode);
  int64_t k[2], s[2], d[2], p[4];
  st = tsl_op_call_ints_exact(c, "pool2d", "kernel", 2, NULL, 1, k);
  if (st == TSL_OK) st = tsl_op_call_ints_exact(c, "pool2d", "strides", 2, ones, 1, s);
  if (st == TSL_OK) st = tsl_op_call_ints_exact(c, "pool2d", "dilations", 2, ones, 1, d);
  if (st == TSL_OK) st = tsl_op_call_ints_exact(c, "pool2d", "pads", 4, zeros, 0, p);
  if (st != TSL_OK) return st;
  bool blocked = y->block > 0;
  int64_t block;
  if (blocked) st = tsl_op_check_blocked(c, "pool2d", 0, 2, &block);
  else if (x->ndim != 4 || y->ndim != 4 || x->block)
    st = tsl_error(TSL_ERR_INVALID, "pool2d: input and output of ranks %d and %d in %s layouts (two plain NCHW or two "
                   "NCHW[x]c images)", x->ndim, y->ndim, x->block ? "different" : "plain");
  if (st != TSL_OK) return st;
  int64_t v[TSL_MAX_NDIM];
  tsl_op_text_view(t, 0, tsl_op_tensor_storage(x, v), v);
  tsl_op_text_view(t, 1, tsl_op_tensor_storage(y, v), v);
  const char *nc = blocked ? "n, cb" : "n, c", *lane = blocked ? ", c" : "";
  long long H = x->shape[2], W = x->shape[3], pt = p[0], pl = p[1], sh = s[0], sw = s[1];
  snprintf(t->label, sizeof t->label, "%s%s_%lldx%lld_s%lld_p%lld", is_max ? "maxpool" : "avgpool", blocked ? "_nchwc" : "",
           (long long)k[0], (long long)k[1], sh, pt);
  tsl_op_text_header(t, 1);
  char yy[64], xx[64], cond[512];
  snprintf(yy, sizeof yy, "y*%lld + r*%lld", sh, (long long)d[0]);
  snprintf(xx, sizeof xx, "x*%lld + s*%lld", sw, (long long)d[1]);
  snprintf(cond, sizeof cond, "%s >= %lld && %s < %lld && %s >= %lld && %s < %lld", yy, pt, yy, H + pt, xx, pl, xx, W + pl);
  tsl_text_put(&t->text, "  %s[%s, y, x%s] = %s(r, s: select(%s, x0[%s, %s - %lld, %s - %lld%s], %s))\n"
                         "    where y < %lld, x < %lld, r < %lld, s < %lld\n",
               is_max ? "out" : "acc", nc, lane, is_max ? "max" : "sum", cond, nc, yy, pt, xx, pl, lane,
               is_max ? "-inf" : "0.0", (long long)y->shape[2], (long long)y->shape[3], (long long)k[0], (long long)k[1]);
  if (is_max) return TSL_OK;
  /* the divisor: window positions inside the input, or inside the padded input */
  bool include = tsl_op_call_int(c, "count_include_pad", 0) != 0;
  long long hb = include ? -pt : 0, he = include ? H + p[2] : H;
  long long wb = include ? -pl : 0, we = include ? W + p[3] : W;
  tsl_text_put(&t->text,
               "  out[%s, y, x%s] = acc[%s, y, x%s] / f32((min(y*%lld - %lld + %lld, %lld) - max(y*%lld - %lld, %lld)) *"
               " (min(x*%lld - %lld + %lld, %lld) - max(x*%lld - %lld, %lld)))\n",
               nc, lane, nc, lane, sh, pt, (long long)k[0], he, sh, pt, hb, sw, pl, (long long)k[1], we, sw, pl, wb);
  return TSL_OK;
}

/* The mean over all axes past the second: plain [N, C, ...] read as [N*C, rest]; blocked
 * [N, CB, H, W, x] read as [N*CB, H*W, x] into a blocked [N, C, 1, 1], or as
 * [N, CB, H*W, x] into a plain [N, C] (each output channel picks its lane). */
tsl_status tsl_global_avgpool_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "global_avgpool", 1, 1);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  tsl_text_buf *b = &t->text;
  if (!x->block) {
    if (x->ndim < 3 || y->block)
      return tsl_error(TSL_ERR_UNSUPPORTED, "global_avgpool: a plain input of rank %d (>= 3) into a %s output", x->ndim,
                       y->block ? "blocked" : "plain");
    int64_t nc = x->shape[0] * x->shape[1], hw = tsl_op_tensor_numel(x) / (nc ? nc : 1);
    tsl_op_text_view(t, 0, 2, (const int64_t[]){nc, hw});
    tsl_op_text_view(t, 1, 1, &nc);
    snprintf(t->label, sizeof t->label, "global_avgpool");
    tsl_op_text_header(t, 1);
    tsl_text_put(b, "  acc[i] = sum(j: x0[i, j])\n  out[i] = acc[i] / %lld\n", (long long)hw);
    return TSL_OK;
  }
  int64_t X;
  if ((st = tsl_op_check_blocked(c, "global_avgpool", 0, 1, &X)) != TSL_OK) return st;
  int64_t v[4];
  tsl_op_view_blocked(x, v);
  if (!y->block) {
    if (y->ndim < 2 || tsl_op_tensor_numel(y) != x->shape[0] * x->shape[1])
      return tsl_error(TSL_ERR_INVALID, "global_avgpool: a plain output of %lld elements for %lld channels",
                       (long long)tsl_op_tensor_numel(y), (long long)(x->shape[0] * x->shape[1]));
    tsl_op_text_view(t, 0, 4, v);
    tsl_op_text_view(t, 1, 2, (const int64_t[]){v[0], x->shape[1]});
    snprintf(t->label, sizeof t->label, "global_avgpool_nchwc_to_nchw");
    tsl_op_text_header(t, 1);
    tsl_text_put(b, "  acc[n, cb, c] = sum(j: x0[n, cb, j, c])\n"
                    "  out[n, ch] = acc[n, ch / %lld, ch %% %lld] / %lld\n    where n < %lld, ch < %lld\n",
                 (long long)X, (long long)X, (long long)v[2], (long long)v[0], (long long)x->shape[1]);
    return TSL_OK;
  }
  if ((st = tsl_op_check_blocked(c, "global_avgpool", 0, 2, &X)) != TSL_OK) return st;
  tsl_op_text_view(t, 0, 3, (const int64_t[]){v[0] * v[1], v[2], X});
  tsl_op_text_view(t, 1, 2, (const int64_t[]){v[0] * v[1], X});
  snprintf(t->label, sizeof t->label, "global_avgpool_nchwc");
  tsl_op_text_header(t, 1);
  tsl_text_put(b, "  acc[i, c] = sum(j: x0[i, j, c])\n  out[i, c] = acc[i, c] / %lld\n", (long long)v[2]);
  return TSL_OK;
}
