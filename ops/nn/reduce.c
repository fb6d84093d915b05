/* Reductions over any axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin (generators.h). */
#include "ops/nn/generators.h"

#include <stdio.h>
#include <string.h>

enum { REDUCED = 1u };

/* "k0, k2": the axes of the kept groups */
static void put_kept(tsl_text_buf *b, int ng, const unsigned *gcl) {
  for (int d = 0, k = 0; d < ng; d++)
    if (!(gcl[d] & REDUCED)) tsl_text_put(b, "%sk%d", k++ ? ", " : "", d);
}

tsl_status tsl_reduce_text(const tsl_op_call *c, tsl_op_text *t) {
  if (c->nargs != 2 || c->ninputs != 1)
    return tsl_error(TSL_ERR_INVALID, "reduce: one input and one output, not %d and %d", c->ninputs,
                     c->nargs - c->ninputs);
  const tsl_op_tensor *x = &c->args[0], *y = &c->args[1];
  const char *fn = tsl_op_call_string(c, "function", "");
  bool mean = strcmp(fn, "mean") == 0;
  const char *comb = mean || strcmp(fn, "sum") == 0 ? "sum" : strcmp(fn, "max") == 0 ? "max" : strcmp(fn, "min") == 0 ? "min" : NULL;
  if (!comb) return tsl_error(TSL_ERR_INVALID, "reduce: function '%s' (sum, mean, max or min)", fn);
  if (x->block || y->block) return tsl_error(TSL_ERR_UNSUPPORTED, "reduce: blocked layouts are not supported");
  unsigned cls[TSL_MAX_NDIM] = {0};
  int na;
  const int64_t *axes = tsl_op_call_ints(c, "axes", &na);
  for (int d = 0; d < x->ndim; d++) cls[d] = axes ? 0 : REDUCED;
  for (int i = 0; axes && i < na; i++) {
    if (axes[i] < 0 || axes[i] >= x->ndim || cls[axes[i]])
      return tsl_error(TSL_ERR_INVALID, "reduce: axis %lld of a rank-%d input (0..%d, not repeated)", (long long)axes[i],
                       x->ndim, x->ndim - 1);
    cls[axes[i]] = REDUCED;
  }
  int64_t count = 1, kept = 1;
  for (int d = 0; d < x->ndim; d++) *(cls[d] ? &count : &kept) *= x->shape[d];
  int64_t ynumel = 1;
  for (int d = 0; d < y->ndim; d++) ynumel *= y->shape[d];
  if (ynumel != kept || count < 1)
    return tsl_error(TSL_ERR_INVALID, "reduce: output of %lld elements for %lld kept (reducing %lld each)",
                     (long long)ynumel, (long long)kept, (long long)count);
  /* groups of the input; the output needs a kept group, so a full reduction gets one of 1 */
  int64_t gd[TSL_MAX_NDIM + 1];
  unsigned gc[TSL_MAX_NDIM + 1];
  int n = tsl_gen_group_axes(x->ndim, x->shape, cls, gd + 1, gc + 1);
  int first = 1;
  bool any_kept = false;
  for (int d = 1; d <= n; d++) any_kept |= !(gc[d] & REDUCED);
  if (!any_kept) {
    gd[0] = 1;
    gc[0] = 0;
    first = 0;
  }
  int ng = n + 1 - first;
  const int64_t *g = gd + first;
  const unsigned *gcl = gc + first;
  int64_t out_view[TSL_MAX_NDIM + 1];
  int nk = 0;
  for (int d = 0; d < ng; d++)
    if (!(gcl[d] & REDUCED)) out_view[nk++] = g[d];
  tsl_op_text_view(t, 0, ng, g);
  tsl_op_text_view(t, 1, nk, out_view);
  snprintf(t->label, sizeof t->label, "reduce_%s", fn);
  tsl_op_text_header(t, 1);
  /* acc[k0, k2] = comb(r1, r3: x0[k0, r1, k2, r3]): group d's axis is k<d> or r<d> */
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  %s[", mean ? "acc" : "out");
  put_kept(b, ng, gcl);
  tsl_text_put(b, "] = %s(", comb);
  for (int d = 0, r = 0; d < ng; d++)
    if (gcl[d] & REDUCED) tsl_text_put(b, "%sr%d", r++ ? ", " : "", d);
  tsl_text_put(b, ": x0[");
  for (int d = 0; d < ng; d++) tsl_text_put(b, "%s%c%d", d ? ", " : "", gcl[d] & REDUCED ? 'r' : 'k', d);
  tsl_text_put(b, "])\n");
  if (!mean) return TSL_OK;
  tsl_text_put(b, "  out[");
  put_kept(b, ng, gcl);
  tsl_text_put(b, "] = acc[");
  put_kept(b, ng, gcl);
  tsl_text_put(b, "] / %lld\n", (long long)count);
  return TSL_OK;
}
