/* ONNX Pow (generators.h). */
#include "ops/nn/generators.h"

#include <math.h>
#include <stdio.h>

/* x^e for a constant e, flat over the elements. x*x, sqrt and 1/x round once, as a
 * correctly rounded pow would; sqrt differs from pow only at -0 and -inf (pow gives +0
 * and +inf there); x*x*x rounds twice (within 1 ulp). */
static tsl_status scalar_exponent(const tsl_op_call *c, tsl_op_text *t) {
  double e = tsl_op_call_float(c, "exponent", NAN);
  if (isnan(e)) return tsl_error(TSL_ERR_INVALID, "pow: one input needs the float attribute 'exponent'");
  const tsl_op_tensor *x = &c->args[0];
  int64_t n = 1, yn = 1;
  for (int d = 0; d < x->ndim; d++) n *= x->shape[d];
  for (int d = 0; d < c->args[1].ndim; d++) yn *= c->args[1].shape[d];
  if (x->block || c->args[1].block || n != yn)
    return tsl_error(TSL_ERR_UNSUPPORTED, "pow: plain input and output of one size");
  tsl_op_text_view(t, 0, 1, &n);
  tsl_op_text_view(t, 1, 1, &n);
  tsl_op_text_header(t, 1);
  tsl_text_put(&t->text, "  @tag(\"elemwise\")\n  out[i] = ");
  static const struct {
    double e;
    const char *label, *expr;
  } exact[] = {
      {1.0, "pow1", "x0[i]"},
      {2.0, "square", "x0[i] * x0[i]"},
      {3.0, "cube", "x0[i] * x0[i] * x0[i]"},
      {0.5, "pow_sqrt", "sqrt(x0[i])"},
      {-1.0, "pow_reciprocal", "1.0 / x0[i]"},
      {0.0, "pow0", "select(isnan(x0[i]), 1.0, 1.0)"}, /* 1 everywhere, NaN included */
  };
  int k = (int)(sizeof exact / sizeof exact[0]) - 1;
  while (k >= 0 && exact[k].e != e) k--;
  if (k >= 0) {
    tsl_text_put(&t->text, "%s", exact[k].expr);
  } else {
    tsl_text_put(&t->text, "pow(x0[i], ");
    tsl_text_put_float(&t->text, e);
    tsl_text_put(&t->text, ")");
  }
  tsl_text_put(&t->text, "\n");
  snprintf(t->label, sizeof t->label, "%s", k >= 0 ? exact[k].label : "pow");
  return TSL_OK;
}

/* Class bit `bit` on the output axes where operand p (right-aligned) has extent 1. */
static void mark_bcast(const tsl_op_tensor *p, const tsl_op_tensor *y, unsigned bit, unsigned *cls) {
  for (int d = 0; d < y->ndim; d++) {
    int pd = p->ndim - y->ndim + d;
    if ((pd < 0 ? 1 : p->shape[pd]) == 1 && y->shape[d] != 1) cls[d] |= bit;
  }
}

tsl_status tsl_pow_text(const tsl_op_call *c, tsl_op_text *t) {
  if (c->ninputs == 1 && c->nargs == 2) return scalar_exponent(c, t);
  if (c->ninputs != 2 || c->nargs != 3)
    return tsl_error(TSL_ERR_INVALID, "pow: one or two inputs and one output, not %d and %d", c->ninputs,
                     c->nargs - c->ninputs);
  const tsl_op_tensor *y = &c->args[2];
  unsigned cls[TSL_MAX_NDIM] = {0};
  for (int a = 0; a < 2; a++) {
    const tsl_op_tensor *p = &c->args[a];
    if (p->block || p->ndim > y->ndim) return tsl_error(TSL_ERR_UNSUPPORTED, "pow: blocked or higher-rank input %d", a);
    for (int i = 0; i < p->ndim; i++) {
      int64_t e = p->shape[i], want = y->shape[y->ndim - p->ndim + i];
      if (e != 1 && e != want) return tsl_error(TSL_ERR_INVALID, "pow: input %d does not broadcast to the output", a);
    }
    mark_bcast(p, y, 1u << a, cls);
  }
  if (y->block) return tsl_error(TSL_ERR_UNSUPPORTED, "pow: blocked output");
  int64_t gd[TSL_MAX_NDIM], view[TSL_MAX_NDIM];
  unsigned gc[TSL_MAX_NDIM];
  int n = tsl_gen_group_axes(y->ndim, y->shape, cls, gd, gc);
  for (int a = 0; a < 2; a++) {
    tsl_gen_operand_view(n, gd, gc, 1u << a, view);
    tsl_op_text_view(t, a, n, view);
  }
  tsl_op_text_view(t, 2, n, gd);
  snprintf(t->label, sizeof t->label, "pow_bcast");
  tsl_op_text_header(t, 2);
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[");
  tsl_gen_put_index(b, "i", n, gc, 0);
  tsl_text_put(b, "] = pow(x0[");
  tsl_gen_put_index(b, "i", n, gc, 1u);
  tsl_text_put(b, "], x1[");
  tsl_gen_put_index(b, "i", n, gc, 2u);
  tsl_text_put(b, "])\n");
  return TSL_OK;
}
