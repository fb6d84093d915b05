/* Elementwise kernels as generated operators (generators.h): Relu, Clip and the binary
 * arithmetic with numpy broadcasting, and the functions of the activation table
 * (activation.h); plain, or flat over a blocked tensor's stored elements. Their stage is
 * tagged "elemwise" (fused into a neighbour by the default schedule). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/nn/activation.h"
#include "ops/nn/generators.h"
#include "ops/op_text.h"

typedef struct elemwise_op {
  const char *name;  /* attribute "op" */
  const char *onnx;  /* ONNX operator, in the blocked kernel's label */
  int ninputs;
  const char *infix; /* binary: the DSL operator */
} elemwise_op;

static const elemwise_op elemwise_ops[] = {
    {"relu", "Relu", 1, NULL}, {"clip", "Clip", 1, NULL}, {"add", "Add", 2, "+"},
    {"sub", "Sub", 2, "-"},    {"mul", "Mul", 2, "*"},    {"div", "Div", 2, "/"},
};

/* Blocked: f(0) = 0 keeps the padding lanes zero, so the kernel runs flat over the
 * stored elements of inputs of the output's shape. A binary op whose inputs broadcast,
 * and Div (0/0), are written per element with the lanes guarded
 * (tsl_elemwise_broadcast_nchwc_text); a Clip whose range leaves out 0 is refused. */
static tsl_status elemwise_blocked(const tsl_op_call *c, const elemwise_op *op, double lo, double hi, tsl_op_text *t) {
  int64_t X;
  tsl_status st = tsl_op_check_blocked(c, "elemwise", 0, c->nargs, &X);
  if (st != TSL_OK) return st;
  bool bcast = false;
  for (int i = 0; i < op->ninputs; i++) bcast |= !tsl_op_tensor_same_shape(&c->args[i], &c->args[c->nargs - 1]);
  if (op->infix && (bcast || !strcmp(op->name, "div"))) return tsl_elemwise_broadcast_nchwc_text(c, op->name, op->infix, t);
  if (bcast) return tsl_error(TSL_ERR_UNSUPPORTED, "elemwise: a blocked %s broadcasts its input", op->name);
  if (!strcmp(op->name, "clip") && (lo > 0.0 || hi < 0.0))
    return tsl_error(TSL_ERR_UNSUPPORTED, "elemwise: a blocked %s would not keep the padding lanes zero", op->name);
  int64_t total = tsl_op_tensor_stored_numel(&c->args[c->nargs - 1]);
  for (int a = 0; a < c->nargs; a++) tsl_op_text_view(t, a, 1, &total);
  tsl_op_text_header(t, op->ninputs);
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[i] = ");
  if (!strcmp(op->name, "relu")) {
    tsl_text_put(b, "max(x0[i], 0.0)");
  } else if (!strcmp(op->name, "clip")) {
    tsl_op_put_clip_open(b, lo, hi);
    tsl_text_put(b, "x0[i]");
    tsl_op_put_clip_close(b, lo, hi);
  } else {
    tsl_text_put(b, "x0[i] %s x1[i]", op->infix);
  }
  tsl_text_put(b, "\n");
  snprintf(t->label, sizeof t->label, "%s_nchwc", op->onnx);
  return TSL_OK;
}

tsl_status tsl_elemwise_text(const tsl_op_call *c, tsl_op_text *t) {
  const char *name = tsl_op_call_string(c, "op", "");
  const elemwise_op *op = NULL;
  for (size_t i = 0; i < sizeof elemwise_ops / sizeof elemwise_ops[0]; i++)
    if (!strcmp(elemwise_ops[i].name, name)) op = &elemwise_ops[i];
  if (!op) return tsl_error(TSL_ERR_INVALID, "elemwise: attribute op '%s' (relu, clip, add, mul or div)", name);
  tsl_status st = tsl_op_check_counts(c, "elemwise", op->ninputs, 1);
  if (st != TSL_OK) return st;
  double lo = tsl_op_call_float(c, "min", -INFINITY), hi = tsl_op_call_float(c, "max", INFINITY);
  const tsl_op_tensor *y = &c->args[op->ninputs];
  if (y->block) return elemwise_blocked(c, op, lo, hi, t);
  bool flat = true;
  for (int i = 0; i < op->ninputs; i++) {
    if ((st = tsl_op_check_plain(c, "elemwise", i)) != TSL_OK) return st;
    flat &= tsl_op_tensor_same_shape(&c->args[i], y);
  }
  int64_t total = tsl_op_tensor_numel(y);
  for (int i = 0; i < op->ninputs; i++) {
    const tsl_op_tensor *v = &c->args[i];
    if (flat) tsl_op_text_view(t, i, 1, &total);
    else if (v->ndim == 0) tsl_op_text_view(t, i, 1, (const int64_t[]){1});
    else tsl_op_text_view(t, i, v->ndim, v->shape);
  }
  int nd = flat ? 1 : y->ndim;
  const int64_t *od = flat ? &total : y->shape;
  tsl_op_text_view(t, op->ninputs, nd, od);
  tsl_op_text_header(t, op->ninputs);
  tsl_text_buf *b = &t->text;
  tsl_text_put(b, "  @tag(\"elemwise\")\n  out[");
  tsl_op_put_axes(b, nd);
  tsl_text_put(b, "] = ");
  if (!strcmp(op->name, "relu")) {
    tsl_text_put(b, "max(");
    tsl_op_put_bcast_read(b, t, 0, nd, od);
    tsl_text_put(b, ", 0.0)");
  } else if (!strcmp(op->name, "clip")) {
    tsl_op_put_clip_open(b, lo, hi);
    tsl_op_put_bcast_read(b, t, 0, nd, od);
    tsl_op_put_clip_close(b, lo, hi);
  } else {
    tsl_op_put_bcast_read(b, t, 0, nd, od);
    tsl_text_put(b, " %s ", op->infix);
    tsl_op_put_bcast_read(b, t, 1, nd, od);
  }
  snprintf(t->label, sizeof t->label, "%s%s", op->name, flat ? "" : "_bcast");
  tsl_op_put_where(b, nd, od);
  return TSL_OK;
}

/* f(x) of a row of the activation table, flat over the elements; blocked: flat when
 * f(0) = 0 or the blocks are full, else with the padding lanes written 0 (a
 * channel-guarded view [N, CB, H*W, x]). */
tsl_status tsl_activation_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "activation", 1, 1);
  if (st != TSL_OK) return st;
  const char *fn = tsl_op_call_string(c, "function", "");
  const tsl_activation *a = tsl_activation_find(fn);
  if (!a) return tsl_error(TSL_ERR_UNSUPPORTED, "activation: no function '%s' in the activation table", fn);
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  for (int i = 0; i < a->nattrs; i++) attrs[i] = tsl_op_call_float(c, a->attr[i], a->attr_default[i]);
  const tsl_op_tensor *y = &c->args[1];
  bool blocked = y->block > 0, guard = false;
  int64_t v[4] = {0}, total = tsl_op_tensor_stored_numel(y);
  if (blocked) {
    int64_t X;
    if ((st = tsl_op_check_blocked(c, "activation", 0, 2, &X)) != TSL_OK) return st;
    tsl_op_view_blocked(y, v);
    guard = y->shape[1] % X && !tsl_activation_keeps_zero(a, attrs);
  } else if (c->args[0].block || tsl_op_tensor_numel(&c->args[0]) != total) {
    return tsl_error(TSL_ERR_INVALID, "activation: the input is not stored like the output");
  }
  tsl_op_text_view(t, 0, guard ? 4 : 1, guard ? v : &total);
  tsl_op_text_view(t, 1, guard ? 4 : 1, guard ? v : &total);
  tsl_op_text_header(t, 1);
  tsl_text_buf *b = &t->text;
  const char *i = blocked ? "i" : "i0";
  if (guard) {
    tsl_text_put(b, "  @tag(\"elemwise\")\n  out[n, cb, i, c] = ");
    tsl_op_put_lane_guard_open(b, y->shape[1], v[3]);
    tsl_activation_put_dsl(a, "x0[n, cb, i, c]", attrs, b);
    tsl_op_put_lane_guard_close(b, y->shape[1], v[3]);
    tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)v[0], (long long)v[1],
                 (long long)v[2], (long long)v[3]);
  } else {
    char operand[16];
    snprintf(operand, sizeof operand, "x0[%s]", i);
    tsl_text_put(b, "  @tag(\"elemwise\")\n  out[%s] = ", i);
    tsl_activation_put_dsl(a, operand, attrs, b);
    tsl_text_put(b, "\n    where %s < %lld\n", i, (long long)total);
  }
  snprintf(t->label, sizeof t->label, "%s%s", a->label, blocked ? "_nchwc" : "");
  return TSL_OK;
}
