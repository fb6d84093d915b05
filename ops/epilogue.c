/* Activation epilogues on an instantiated operator's output stage (epilogue.h). */
#include "ops/epilogue.h"

#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "ir/passes/mutate.h"

bool tsl_epilogue_present(const tsl_epilogue *e) { return e && e->fn; }

bool tsl_epilogue_guarded(const tsl_epilogue *e) {
  return tsl_epilogue_present(e) && e->channels > 0 && !tsl_activation_keeps_zero(e->fn, e->attrs);
}

tsl_status tsl_epilogue_make(const char *onnx_op, int nattrs, const double *attrs, int64_t channels,
                             tsl_epilogue *out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "epilogue: NULL result");
  memset(out, 0, sizeof *out);
  const tsl_activation *a = tsl_activation_find(onnx_op);
  if (!a)
    return tsl_error(TSL_ERR_UNSUPPORTED, "epilogue: no function '%s' in the activation table",
                     onnx_op ? onnx_op : "(null)");
  if (nattrs < 0 || nattrs > a->nattrs || (nattrs > 0 && !attrs))
    return tsl_error(TSL_ERR_INVALID, "epilogue: %s takes %d attributes, %d given", a->onnx_op, a->nattrs, nattrs);
  if (channels < 0) return tsl_error(TSL_ERR_INVALID, "epilogue: %lld channels", (long long)channels);
  out->fn = a;
  for (int i = 0; i < a->nattrs; i++) out->attrs[i] = i < nattrs ? attrs[i] : a->attr_default[i];
  out->channels = channels;
  return TSL_OK;
}

void tsl_epilogue_put_key(const tsl_epilogue *e, tsl_text_buf *b) {
  if (!tsl_epilogue_present(e)) return;
  tsl_text_put(b, "+%s", e->fn->onnx_op);
  for (int i = 0; i < e->fn->nattrs; i++)
    tsl_text_put(b, "%s%s=%.17g%s", i ? "," : "(", e->fn->attr[i], e->attrs[i], i + 1 == e->fn->nattrs ? ")" : "");
  if (tsl_epilogue_guarded(e)) tsl_text_put(b, "[channels=%lld]", (long long)e->channels);
}

/* Replaces every read of buffer `from` (f's operand) by `to` (the old output value). */
typedef struct operand_swap {
  const tsl_buffer *from;
  tsl_expr *to;
} operand_swap;

static tsl_expr *swap_operand(tsl_mutator *m, tsl_expr *e) {
  const operand_swap *s = m->ud;
  if (e->kind == TSL_E_LOAD && e->load.buf == s->from) return s->to;
  return tsl_mutate_expr_children(m, e);
}

/* f's expression over the value v: the table's DSL text instantiated as a one-element
 * operator, its read of the operand replaced by v. */
static tsl_status function_of(const tsl_epilogue *e, tsl_expr *v, tsl_expr **out) {
  tsl_text_buf b = {0};
  tsl_text_put(&b, "op tsl_epilogue_%s(x: f32[1])\n  y[i] = ", e->fn->label);
  tsl_activation_put_dsl(e->fn, "x[i]", e->attrs, &b);
  tsl_text_put(&b, "\n");
  if (b.oom) {
    free(b.s);
    return tsl_error(TSL_ERR_NOMEM, "epilogue: out of memory");
  }
  tsl_dsl_module *m = NULL;
  tsl_status st = tsl_dsl_parse(b.s, "epilogue", &m);
  free(b.s);
  tsl_te_program *f = NULL;
  if (st == TSL_OK) {
    const int64_t one[1] = {1};
    const int64_t *shapes[1] = {one};
    const int ndims[1] = {1};
    st = tsl_dsl_instantiate(tsl_dsl_module_op(m, 0), 1, shapes, ndims, 0, NULL, &f);
  }
  tsl_dsl_module_free(m);
  if (st != TSL_OK) return st;
  operand_swap s = {f->inputs[0]->buf, v};
  tsl_mutator mu = {swap_operand, NULL, &s};
  *out = tsl_mutate_expr(&mu, f->outputs[0]->op->body);
  return TSL_OK;
}

/* f(body) of stage `out` (the guard added when e is guarded); `inner`: an inner stage,
 * `zero_padding` (inner only): its body select(cond, v, 0) becomes select(cond, f(v), 0).
 * `who` names the program. */
static tsl_status epilogue_body(const tsl_te_op *out, const tsl_epilogue *e, bool inner, bool zero_padding,
                                const char *who, tsl_expr **res) {
  if (out->body->kind == TSL_E_REDUCE || !tsl_type_eq(out->body->type, TSL_F32))
    return tsl_error(TSL_ERR_INVALID, "epilogue: %s's %s stage %s is %s", who, inner ? "inner" : "output", out->name,
                     out->body->kind == TSL_E_REDUCE ? "a reduction (no epilogue stage)" : "not f32");
  const tsl_expr *b = out->body;
  bool pads =
      zero_padding && b->kind == TSL_E_SELECT && b->select.f->kind == TSL_E_FLOAT && b->select.f->float_value == 0.0;
  tsl_expr *body = NULL;
  tsl_status st = function_of(e, pads ? b->select.t : out->body, &body);
  if (st != TSL_OK) return st;
  if (pads) body = tsl_select(b->select.cond, body, b->select.f);
  if (tsl_epilogue_guarded(e)) {
    int r = out->naxis;
    int64_t X = r >= 3 ? out->axis[r - 1].extent : 0, lanes = r >= 3 ? out->axis[1].extent * X : 0;
    if (r < 3 || e->channels > lanes)
      return tsl_error(TSL_ERR_INVALID, "epilogue: %s: %lld channels do not fit an output of rank %d with %lld lanes",
                       out->name, (long long)e->channels, r, (long long)lanes);
    if (e->channels < lanes) {
      tsl_expr *c = tsl_add(tsl_mul(out->axis[1].var, tsl_i64(X)), out->axis[r - 1].var);
      body = tsl_select(tsl_lt(c, tsl_i64(e->channels)), body, tsl_f32(0.0f));
    }
  }
  *res = body;
  return TSL_OK;
}

tsl_status tsl_epilogue_apply(tsl_te_program *p, const tsl_epilogue *e) {
  if (!p) return tsl_error(TSL_ERR_INVALID, "epilogue: NULL program");
  if (!tsl_epilogue_present(e)) return TSL_OK;
  if (p->noutputs < 1 || !p->outputs[0] || !p->outputs[0]->op || p->outputs[0]->op->kind != TSL_TE_COMPUTE)
    return tsl_error(TSL_ERR_INVALID, "epilogue: %s has no computed output", p->name ? p->name : "program");
  const tsl_te_op *out = p->outputs[0]->op;
  tsl_expr *body = NULL;
  tsl_status st = epilogue_body(out, e, false, false, p->name ? p->name : "program", &body);
  if (st != TSL_OK) return st;
  tsl_te_tensor *t = tsl_te_compute(out->name, out->naxis, out->axis, body, out->tag);
  if (!t) return tsl_error(TSL_ERR_INVALID, "epilogue: %s: %s", out->name, tsl_last_error());
  p->outputs[0] = t;
  return TSL_OK;
}

bool tsl_stage_epilogue_present(const tsl_stage_epilogue *s) {
  return s && s->stage[0] && tsl_epilogue_present(&s->fn);
}

tsl_status tsl_stage_epilogue_make(const char *stage, const tsl_epilogue *e, bool zero_padding,
                                   tsl_stage_epilogue *out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "stage epilogue: NULL result");
  memset(out, 0, sizeof *out);
  if (!tsl_epilogue_present(e)) return TSL_OK;
  if (!stage || !stage[0] || strlen(stage) >= sizeof out->stage)
    return tsl_error(TSL_ERR_INVALID, "stage epilogue: the stage name must have 1 to %d characters",
                     (int)sizeof out->stage - 1);
  snprintf(out->stage, sizeof out->stage, "%s", stage);
  out->fn = *e;
  out->zero_padding = zero_padding;
  return TSL_OK;
}

void tsl_stage_epilogue_put_key(const tsl_stage_epilogue *s, tsl_text_buf *b) {
  if (!tsl_stage_epilogue_present(s)) return;
  tsl_text_put(b, "|%s", s->stage);
  tsl_epilogue_put_key(&s->fn, b);
}

tsl_status tsl_epilogue_apply_stage(tsl_te_program *p, const tsl_stage_epilogue *s) {
  if (!p) return tsl_error(TSL_ERR_INVALID, "stage epilogue: NULL program");
  if (!tsl_stage_epilogue_present(s)) return TSL_OK;
  int n = 0;
  tsl_te_op **ops = tsl_te_program_stages(p, &n), *op = NULL;
  for (int i = 0; i < n && !op; i++)
    if (ops[i]->name && strcmp(ops[i]->name, s->stage) == 0) op = ops[i];
  const char *who = p->name ? p->name : "program";
  if (!op || op->kind != TSL_TE_COMPUTE)
    return tsl_error(TSL_ERR_INVALID, "stage epilogue: %s has no compute stage '%s'", who, s->stage);
  tsl_expr *body = NULL;
  tsl_status st = epilogue_body(op, &s->fn, true, s->zero_padding, who, &body);
  if (st == TSL_OK) op->body = body; /* same reads (f's operand is the old body), same tensor */
  return st;
}

static const char *const attr_names[TSL_ACTIVATION_MAX_ATTRS] = {"epilogue_attr0", "epilogue_attr1"};

void tsl_op_call_set_epilogue(tsl_op_call *c, const tsl_activation *fn, const double *attrs) {
  if (!c || !fn) return;
  tsl_op_call_set_string(c, "epilogue", fn->onnx_op);
  for (int i = 0; i < fn->nattrs; i++) tsl_op_call_set_float(c, attr_names[i], attrs[i]);
}

tsl_status tsl_op_call_epilogue(const tsl_op_call *c, const char *who, tsl_epilogue *e) {
  memset(e, 0, sizeof *e);
  const char *name = tsl_op_call_string(c, "epilogue", NULL);
  if (!name) return TSL_OK;
  const tsl_activation *a = tsl_activation_find(name);
  if (!a) return tsl_error(TSL_ERR_UNSUPPORTED, "%s: epilogue '%s' is not in the activation table", who, name);
  e->fn = a;
  for (int i = 0; i < a->nattrs; i++) e->attrs[i] = tsl_op_call_float(c, attr_names[i], a->attr_default[i]);
  return TSL_OK;
}

void tsl_epilogue_put_dsl(const tsl_epilogue *e, const char *x, tsl_text_buf *b) {
  if (tsl_epilogue_present(e)) tsl_activation_put_dsl(e->fn, x, e->attrs, b);
  else tsl_text_put(b, "%s", x);
}
