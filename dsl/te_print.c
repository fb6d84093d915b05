/* tsl_te_print: a program as text of the DSL grammar (docs/dsl.md) with every shape,
 * dtype and extent explicit, so that parsing and instantiating the text gives the same
 * program again. Operators get the DSL's C precedences and only the parentheses they need. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "dsl/te.h"

enum { PREC_OR = 1, PREC_AND, PREC_BITOR, PREC_BITXOR, PREC_BITAND, PREC_EQ, PREC_REL, PREC_SHIFT, PREC_ADD,
       PREC_MUL, PREC_UNARY, PREC_PRIMARY };

static bool is_const(const tsl_expr *e) { return e->kind == TSL_E_INT || e->kind == TSL_E_FLOAT; }

/* -x is printed for x * -1.0 (floats) and 0 - x (integers), which is what the parser
 * builds for it. */
static const tsl_expr *negated(const tsl_expr *e) {
  if (e->kind == TSL_E_MUL && tsl_type_is_float(e->type) && e->bin.b->kind == TSL_E_FLOAT &&
      e->bin.b->float_value == -1.0 && !is_const(e->bin.a))
    return e->bin.a;
  if (e->kind == TSL_E_SUB && tsl_type_is_intlike(e->type) && e->bin.a->kind == TSL_E_INT && e->bin.a->int_value == 0 &&
      !is_const(e->bin.b))
    return e->bin.b;
  return NULL;
}

static const char *infix(const tsl_expr *e, int *prec) {
  switch (e->kind) {
  case TSL_E_ADD: *prec = PREC_ADD; return " + ";
  case TSL_E_SUB: *prec = PREC_ADD; return " - ";
  case TSL_E_MUL: *prec = PREC_MUL; return " * ";
  case TSL_E_DIV: *prec = PREC_MUL; return " / ";
  case TSL_E_MOD: *prec = PREC_MUL; return " % ";
  case TSL_E_EQ: *prec = PREC_EQ; return " == ";
  case TSL_E_NE: *prec = PREC_EQ; return " != ";
  case TSL_E_LT: *prec = PREC_REL; return " < ";
  case TSL_E_LE: *prec = PREC_REL; return " <= ";
  case TSL_E_GT: *prec = PREC_REL; return " > ";
  case TSL_E_GE: *prec = PREC_REL; return " >= ";
  case TSL_E_AND: *prec = PREC_AND; return " && ";
  case TSL_E_OR: *prec = PREC_OR; return " || ";
  case TSL_E_CALL:
    if (e->call.nargs == 2) switch (e->call.op) {
      case TSL_CALL_BIT_AND: *prec = PREC_BITAND; return " & ";
      case TSL_CALL_BIT_OR: *prec = PREC_BITOR; return " | ";
      case TSL_CALL_BIT_XOR: *prec = PREC_BITXOR; return " ^ ";
      case TSL_CALL_SHL: *prec = PREC_SHIFT; return " << ";
      case TSL_CALL_SHR: *prec = PREC_SHIFT; return " >> ";
      default: break;
      }
    return NULL;
  default: return NULL;
  }
}

static int prec_of(const tsl_expr *e) {
  int p;
  if (negated(e)) return PREC_UNARY;
  if (infix(e, &p)) return p;
  if (e->kind == TSL_E_NOT || (e->kind == TSL_E_CALL && e->call.op == TSL_CALL_BIT_NOT)) return PREC_UNARY;
  if (e->kind == TSL_E_INT && e->int_value < 0) return PREC_UNARY;
  if (e->kind == TSL_E_FLOAT && (e->float_value < 0 || (e->float_value == 0 && signbit(e->float_value)))) return PREC_UNARY;
  return PREC_PRIMARY;
}

static void print_literal(FILE *f, const tsl_expr *e) {
  if (e->kind == TSL_E_INT) {
    if (tsl_type_is_bool(e->type)) fputs(e->int_value ? "true" : "false", f);
    else if (e->int_value == INT64_MIN) fputs("(-9223372036854775807 - 1)", f);
    else fprintf(f, "%" PRId64, e->int_value);
    return;
  }
  double v = e->float_value;
  if (isnan(v)) {
    fputs("nan", f);
    return;
  }
  if (isinf(v)) {
    fputs(v < 0 ? "-inf" : "inf", f);
    return;
  }
  char buf[40];
  snprintf(buf, sizeof buf, e->type.bits == 32 ? "%.9g" : "%.17g", v);
  fputs(buf, f);
  if (!strpbrk(buf, ".e")) fputs(".0", f);
}

static void print_expr(FILE *f, const tsl_expr *e, int minprec, bool bare);

static void print_args(FILE *f, int n, tsl_expr *const *args) {
  bool any_typed = false;
  for (int i = 0; i < n; i++) any_typed |= !is_const(args[i]);
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    print_expr(f, args[i], 0, any_typed);
  }
}

/* bare: a constant may be written as a plain literal because it adapts to a typed
 * sibling (docs/dsl.md section 6); otherwise it is written as a cast T(literal). */
static void print_expr(FILE *f, const tsl_expr *e, int minprec, bool bare) {
  char tb[16];
  int p = prec_of(e);
  bool paren = p < minprec;
  if (paren) fputc('(', f);
  const tsl_expr *neg = negated(e);
  int ip;
  const char *op = infix(e, &ip);
  if (neg) {
    fputc('-', f);
    print_expr(f, neg, PREC_UNARY, true);
  } else if (op) {
    tsl_expr *a = e->kind == TSL_E_CALL ? e->call.args[0] : e->bin.a;
    tsl_expr *b = e->kind == TSL_E_CALL ? e->call.args[1] : e->bin.b;
    print_expr(f, a, ip, !is_const(b));
    fputs(op, f);
    print_expr(f, b, ip + 1, !is_const(a));
  } else {
    switch (e->kind) {
    case TSL_E_INT:
    case TSL_E_FLOAT: {
      bool typed_literal = !bare && !tsl_type_is_bool(e->type);
      bool wrapped = tsl_type_is_uint(e->type) && e->int_value < 0; /* above INT64_MAX */
      if (typed_literal || wrapped) fprintf(f, "%s(", tsl_type_str(e->type, tb, sizeof tb));
      print_literal(f, e);
      if (typed_literal || wrapped) fputc(')', f);
      break;
    }
    case TSL_E_VAR: fputs(e->var.name, f); break;
    case TSL_E_MIN:
    case TSL_E_MAX: {
      fputs(e->kind == TSL_E_MIN ? "min(" : "max(", f);
      tsl_expr *args[2] = {e->bin.a, e->bin.b};
      print_args(f, 2, args);
      fputc(')', f);
      break;
    }
    case TSL_E_NOT:
      fputc('!', f);
      print_expr(f, e->un.a, PREC_UNARY, false);
      break;
    case TSL_E_SELECT: {
      fputs("select(", f);
      print_expr(f, e->select.cond, 0, true);
      fputs(", ", f);
      tsl_expr *args[2] = {e->select.t, e->select.f};
      print_args(f, 2, args);
      fputc(')', f);
      break;
    }
    case TSL_E_CAST:
      fprintf(f, "%s(", tsl_type_str(tsl_type_element(e->type), tb, sizeof tb));
      print_expr(f, e->un.a, 0, false);
      fputc(')', f);
      break;
    case TSL_E_LOAD:
      fprintf(f, "%s[", e->load.buf->name);
      for (int i = 0; i < e->load.nindex; i++) {
        if (i) fputs(", ", f);
        print_expr(f, e->load.index[i], 0, true); /* constant indices adapt to i64 */
      }
      fputc(']', f);
      break;
    case TSL_E_CALL:
      if (e->call.op == TSL_CALL_BIT_NOT && e->call.nargs == 1) {
        fputc('~', f);
        print_expr(f, e->call.args[0], PREC_UNARY, false);
        break;
      }
      fprintf(f, "%s(", tsl_intrinsic_name(e->call.op));
      print_args(f, e->call.nargs, e->call.args);
      fputc(')', f);
      break;
    case TSL_E_LET:
      fprintf(f, "(let %s = ", e->let.var->var.name);
      print_expr(f, e->let.value, 0, false);
      fputs(" in ", f);
      print_expr(f, e->let.body, 0, false);
      fputc(')', f);
      break;
    case TSL_E_REDUCE: {
      static const char *names[] = {"sum", "max", "min"};
      fprintf(f, "%s(", names[e->reduce.combiner <= TSL_REDUCE_MIN ? e->reduce.combiner : 0]);
      for (int i = 0; i < e->reduce.naxes; i++) fprintf(f, "%s%s", i ? ", " : "", e->reduce.axes[i].var->var.name);
      fputs(": ", f);
      print_expr(f, e->reduce.source, 0, true);
      if (e->reduce.condition) {
        fputs(" if ", f);
        print_expr(f, e->reduce.condition, 0, true);
      }
      fputc(')', f);
      break;
    }
    case TSL_E_BROADCAST:
      fputs("broadcast(", f);
      print_expr(f, e->broadcast.value, 0, false);
      fprintf(f, ", %d)", e->broadcast.lanes);
      break;
    case TSL_E_RAMP:
      fputs("ramp(", f);
      print_expr(f, e->ramp.base, 0, false);
      fputs(", ", f);
      print_expr(f, e->ramp.stride, 0, false);
      fprintf(f, ", %d)", e->ramp.lanes);
      break;
    default: fprintf(f, "<%s>", tsl_expr_kind_name(e->kind)); break;
    }
  }
  if (paren) fputc(')', f);
}

static void print_tensor_type(FILE *f, const tsl_buffer *b) {
  char tb[16];
  fprintf(f, "%s[", tsl_type_str(b->dtype, tb, sizeof tb));
  for (int i = 0; i < b->ndim; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", b->shape[i]);
  fputc(']', f);
}

void tsl_te_print(FILE *f, const tsl_te_program *p) {
  if (!f || !p) return;
  int n;
  tsl_te_op **stages = tsl_te_program_stages(p, &n);
  fprintf(f, "op %s(", p->name);
  int printed = 0;
  for (int i = 0; i < p->ninputs; i++, printed++) {
    fprintf(f, "%s%s: ", printed ? ", " : "", p->inputs[i]->buf->name);
    print_tensor_type(f, p->inputs[i]->buf);
  }
  /* placeholders read but not listed as inputs (tsl_te_check refuses such a program):
   * shown as extra parameters so the text still says what is read */
  for (int s = 0; s < n; s++)
    for (int i = 0; i < stages[s]->ninputs; i++) {
      tsl_te_tensor *t = stages[s]->inputs[i];
      if (t->op->kind != TSL_TE_PLACEHOLDER) continue;
      bool listed = false;
      for (int k = 0; k < p->ninputs; k++) listed |= p->inputs[k] == t;
      for (int s2 = 0; s2 < s && !listed; s2++)
        for (int k = 0; k < stages[s2]->ninputs; k++) listed |= stages[s2]->inputs[k] == t;
      for (int k = 0; k < i; k++) listed |= stages[s]->inputs[k] == t;
      if (listed) continue;
      fprintf(f, "%s%s: ", printed++ ? ", " : "", t->buf->name);
      print_tensor_type(f, t->buf);
    }
  fputs(")\n", f);
  bool default_outputs = p->noutputs == 1 && n > 0 && p->outputs[0]->op == stages[n - 1];
  for (int s = 0; s < n; s++) {
    const tsl_te_op *op = stages[s];
    bool is_output = false;
    for (int k = 0; k < p->noutputs; k++) is_output |= p->outputs[k]->op == op;
    bool reduce = op->body->kind == TSL_E_REDUCE;
    const char *default_tag = reduce ? "reduce" : "injective";
    bool show_tag = op->tag && strcmp(op->tag, default_tag) != 0;
    bool show_output = is_output && !default_outputs;
    if (show_tag || show_output) {
      fputs("  ", f);
      if (show_output) fputs(show_tag ? "@output " : "@output", f);
      if (show_tag) fprintf(f, "@tag(\"%s\")", op->tag);
      fputc('\n', f);
    }
    char tb[16];
    fprintf(f, "  %s[", op->name);
    for (int i = 0; i < op->naxis; i++) fprintf(f, "%s%s", i ? ", " : "", op->axis[i].var->var.name);
    fprintf(f, "]: %s = ", tsl_type_str(op->output->buf->dtype, tb, sizeof tb));
    print_expr(f, op->body, 0, true);
    fputs("\n    where ", f);
    for (int i = 0; i < op->naxis; i++)
      fprintf(f, "%s%s < %" PRId64, i ? ", " : "", op->axis[i].var->var.name, op->axis[i].min + op->axis[i].extent);
    for (int i = 0; i < op->nreduce; i++) {
      const tsl_iter_var *r = &op->reduce_axis[i];
      fputs(", ", f);
      if (r->min != 0) fprintf(f, "%" PRId64 " <= ", r->min);
      fprintf(f, "%s < %" PRId64, r->var->var.name, r->min + r->extent);
    }
    fputc('\n', f);
  }
}
