/* Text form of the IR (see tsl_print_expr in ir.h).
 *
 * The format is meant for people and golden tests, so it is fully deterministic and
 * unambiguous without knowing operator precedence: every infix operand that is itself
 * an infix operation is parenthesized, e.g. `(i*16) + j`. Constants of type i64 print
 * as plain numbers, other integer types carry a suffix (`5i32`, `255u8`), f32 constants
 * end in `f`, f64 constants always show a decimal point or exponent.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

static bool is_infix(const tsl_expr *e) {
  return e->kind >= TSL_E_ADD && e->kind <= TSL_E_OR && e->kind != TSL_E_MIN && e->kind != TSL_E_MAX;
}

static const char *infix_op(tsl_expr_kind k) {
  switch (k) {
  case TSL_E_ADD: return " + ";
  case TSL_E_SUB: return " - ";
  case TSL_E_MUL: return "*";
  case TSL_E_DIV: return "/";
  case TSL_E_MOD: return " % ";
  case TSL_E_EQ: return " == ";
  case TSL_E_NE: return " != ";
  case TSL_E_LT: return " < ";
  case TSL_E_LE: return " <= ";
  case TSL_E_GT: return " > ";
  case TSL_E_GE: return " >= ";
  case TSL_E_AND: return " && ";
  case TSL_E_OR: return " || ";
  default: return " ? ";
  }
}

static void print_float(FILE *f, tsl_type t, double v) {
  if (isnan(v)) {
    fputs("nan", f);
  } else if (isinf(v)) {
    fputs(v < 0 ? "-inf" : "inf", f);
  } else {
    char buf[64];
    snprintf(buf, sizeof buf, t.bits == 32 ? "%.9g" : "%.17g", v);
    /* %g may drop the point ("2"): keep the constant visibly a float. */
    if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
    fputs(buf, f);
  }
  if (t.bits == 32) fputc('f', f);
  else if (t.bits == 16) fputs("h", f);
}

static void print_int(FILE *f, tsl_type t, int64_t v) {
  if (tsl_type_is_bool(t)) {
    fputs(v ? "true" : "false", f);
    return;
  }
  if (tsl_type_is_uint(t)) fprintf(f, "%" PRIu64, (uint64_t)v);
  else fprintf(f, "%" PRId64, v);
  if (!(tsl_type_is_int(t) && t.bits == 64)) fprintf(f, "%c%d", tsl_type_is_uint(t) ? 'u' : 'i', t.bits);
}

static void print_expr(FILE *f, const tsl_expr *e);

static void print_operand(FILE *f, const tsl_expr *e) {
  bool paren = is_infix(e);
  if (paren) fputc('(', f);
  print_expr(f, e);
  if (paren) fputc(')', f);
}

static void print_args(FILE *f, int n, tsl_expr *const *xs) {
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    print_expr(f, xs[i]);
  }
}

static void print_expr(FILE *f, const tsl_expr *e) {
  if (!e) {
    fputs("<null>", f);
    return;
  }
  char tb[32];
  switch (e->kind) {
  case TSL_E_INT: print_int(f, e->type, e->int_value); break;
  case TSL_E_FLOAT: print_float(f, e->type, e->float_value); break;
  case TSL_E_VAR: fputs(e->var.name, f); break;
  case TSL_E_MIN:
  case TSL_E_MAX:
    fputs(e->kind == TSL_E_MIN ? "min(" : "max(", f);
    print_expr(f, e->bin.a);
    fputs(", ", f);
    print_expr(f, e->bin.b);
    fputc(')', f);
    break;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD:
  case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR:
    print_operand(f, e->bin.a);
    fputs(infix_op(e->kind), f);
    print_operand(f, e->bin.b);
    break;
  case TSL_E_NOT:
    fputc('!', f);
    print_operand(f, e->un.a);
    break;
  case TSL_E_SELECT:
    fputs("select(", f);
    print_expr(f, e->select.cond);
    fputs(", ", f);
    print_expr(f, e->select.t);
    fputs(", ", f);
    print_expr(f, e->select.f);
    fputc(')', f);
    break;
  case TSL_E_CAST:
    fprintf(f, "%s(", tsl_type_str(e->type, tb, sizeof tb));
    print_expr(f, e->un.a);
    fputc(')', f);
    break;
  case TSL_E_BROADCAST:
    fprintf(f, "x%d(", e->broadcast.lanes);
    print_expr(f, e->broadcast.value);
    fputc(')', f);
    break;
  case TSL_E_RAMP:
    fputs("ramp(", f);
    print_expr(f, e->ramp.base);
    fputs(", ", f);
    print_expr(f, e->ramp.stride);
    fprintf(f, ", %d)", e->ramp.lanes);
    break;
  case TSL_E_LOAD:
    if (e->load.predicate) fputc('(', f);
    fprintf(f, "%s[", e->load.buf->name);
    print_args(f, e->load.nindex, e->load.index);
    fputc(']', f);
    if (e->load.predicate) {
      fputs(" if ", f);
      print_operand(f, e->load.predicate);
      fputc(')', f);
    }
    break;
  case TSL_E_CALL:
    fprintf(f, "%s(", tsl_intrinsic_name(e->call.op));
    print_args(f, e->call.nargs, e->call.args);
    fputc(')', f);
    break;
  case TSL_E_LET:
    fprintf(f, "(let %s = ", e->let.var->var.name);
    print_expr(f, e->let.value);
    fputs(" in ", f);
    print_expr(f, e->let.body);
    fputc(')', f);
    break;
  case TSL_E_REDUCE: {
    static const char *names[] = {"sum", "max", "min"};
    unsigned c = (unsigned)e->reduce.combiner;
    fprintf(f, "%s(", c < 3 ? names[c] : "reduce");
    for (int i = 0; i < e->reduce.naxes; i++) {
      const tsl_iter_var *ax = &e->reduce.axes[i];
      fprintf(f, "%s%s in [%" PRId64 ",%" PRId64 ")", i ? ", " : "", ax->var->var.name, ax->min,
              ax->min + ax->extent);
    }
    if (e->reduce.condition) {
      fputs(" where ", f);
      print_expr(f, e->reduce.condition);
    }
    fputs(": ", f);
    print_expr(f, e->reduce.source);
    fputc(')', f);
    break;
  }
  }
}

void tsl_print_expr(FILE *f, const tsl_expr *e) { print_expr(f, e); }

static void indent(FILE *f, int depth) {
  for (int i = 0; i < depth; i++) fputs("  ", f);
}

static void print_stmt(FILE *f, const tsl_stmt *s, int depth) {
  char tb[32];
  if (!s) {
    indent(f, depth);
    fputs("<null>\n", f);
    return;
  }
  switch (s->kind) {
  case TSL_S_FOR:
    indent(f, depth);
    fprintf(f, "for (%s, ", s->loop.var->var.name);
    print_expr(f, s->loop.min);
    fputs(", ", f);
    print_expr(f, s->loop.extent);
    fputc(')', f);
    if (s->loop.for_kind != TSL_FOR_SERIAL) fprintf(f, " %s", tsl_for_kind_name(s->loop.for_kind));
    fputs(" {\n", f);
    print_stmt(f, s->loop.body, depth + 1);
    indent(f, depth);
    fputs("}\n", f);
    break;
  case TSL_S_STORE:
    indent(f, depth);
    fprintf(f, "%s[", s->store.buf->name);
    print_args(f, s->store.nindex, s->store.index);
    fputs("] = ", f);
    print_expr(f, s->store.value);
    if (s->store.predicate) {
      fputs(" if ", f);
      print_operand(f, s->store.predicate);
    }
    fputc('\n', f);
    break;
  case TSL_S_ALLOCATE: {
    const tsl_buffer *b = s->allocate.buf;
    indent(f, depth);
    fprintf(f, "allocate %s: %s[", b->name, tsl_type_str(b->dtype, tb, sizeof tb));
    for (int i = 0; i < b->ndim; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", b->shape[i]);
    fputs("] {\n", f);
    print_stmt(f, s->allocate.body, depth + 1);
    indent(f, depth);
    fputs("}\n", f);
    break;
  }
  case TSL_S_SEQ:
    for (int i = 0; i < s->seq.n; i++) print_stmt(f, s->seq.stmts[i], depth);
    break;
  case TSL_S_IF:
    indent(f, depth);
    fputs("if (", f);
    print_expr(f, s->if_.cond);
    fputs(") {\n", f);
    print_stmt(f, s->if_.then_case, depth + 1);
    indent(f, depth);
    if (s->if_.else_case) {
      fputs("} else {\n", f);
      print_stmt(f, s->if_.else_case, depth + 1);
      indent(f, depth);
    }
    fputs("}\n", f);
    break;
  case TSL_S_LET:
    indent(f, depth);
    fprintf(f, "let %s = ", s->let.var->var.name);
    print_expr(f, s->let.value);
    fputs(" in\n", f);
    print_stmt(f, s->let.body, depth);
    break;
  case TSL_S_EVALUATE:
    indent(f, depth);
    print_expr(f, s->evaluate.value);
    fputc('\n', f);
    break;
  }
}

void tsl_print_stmt(FILE *f, const tsl_stmt *s) { print_stmt(f, s, 0); }

void tsl_print_func(FILE *f, const tsl_func *fn) {
  char tb[32];
  fprintf(f, "func %s(", fn->name);
  for (int i = 0; i < fn->nargs; i++) {
    const tsl_arg *a = &fn->args[i];
    if (i) fputs(", ", f);
    if (a->is_buffer) {
      fprintf(f, "%s: %s*[", a->buf->name, tsl_type_str(a->buf->dtype, tb, sizeof tb));
      for (int d = 0; d < a->buf->ndim; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", a->buf->shape[d]);
      fputc(']', f);
    } else {
      fprintf(f, "%s: %s", a->var->var.name, tsl_type_str(a->var->type, tb, sizeof tb));
    }
  }
  fputs(")", f);
  if (fn->vector_bits) fprintf(f, " vector_width(%d)", fn->vector_bits);
  fputs(" {\n", f);
  print_stmt(f, fn->body, 1);
  fputs("}\n", f);
}

/* open_memstream gives the exact text of the FILE* printers without a second code path. */
static char *to_string(const void *node, bool is_stmt) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    fprintf(stderr, "tessel: out of memory printing IR\n");
    abort();
  }
  if (is_stmt) print_stmt(f, node, 0);
  else print_expr(f, node);
  if (fclose(f) != 0 || !buf) {
    fprintf(stderr, "tessel: out of memory printing IR\n");
    abort();
  }
  return buf;
}

char *tsl_expr_to_string(const tsl_expr *e) { return to_string(e, false); }
char *tsl_stmt_to_string(const tsl_stmt *s) { return to_string(s, true); }
