/* The graph printer: one line per node, readable and stable enough to diff. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "models/graph.h"

/* A bounded string builder: writes what fits, always counts the full length. */
typedef struct sbuf {
  char *p;
  size_t cap;
  size_t len;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t room = b->len < b->cap ? b->cap - b->len : 0;
  int n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
  va_end(ap);
  if (n > 0) b->len += (size_t)n;
}

static void sb_type(sbuf *b, const tsl_value *v) {
  if (v->ndim < 0) {
    sb_printf(b, "?");
    return;
  }
  sb_printf(b, "%s[", tsl_dtype_str(v->dtype));
  for (int d = 0; d < v->ndim; d++) sb_printf(b, d ? "x%" PRId64 : "%" PRId64, v->shape[d]);
  sb_printf(b, "]");
  if (v->layout.kind == TSL_LAYOUT_NCHWC) sb_printf(b, "@NCHW%dc", v->layout.block);
}

static void sb_operand(sbuf *b, const tsl_graph *g, int v) {
  if (v < 0) {
    sb_printf(b, "_");
    return;
  }
  const tsl_value *val = &g->values[v];
  sb_printf(b, "%%%s", val->name);
  if (val->constant) {
    sb_printf(b, "<const ");
    sb_type(b, val);
    sb_printf(b, ">");
  }
}

static void sb_attr(sbuf *b, const tsl_attr *a) {
  sb_printf(b, "%s=", a->name);
  switch (a->kind) {
  case TSL_ATTR_INT:
    sb_printf(b, "%" PRId64, a->i);
    break;
  case TSL_ATTR_FLOAT:
    sb_printf(b, "%g", a->f);
    break;
  case TSL_ATTR_INTS:
    sb_printf(b, "[");
    for (int i = 0; i < a->n; i++) sb_printf(b, i ? ",%" PRId64 : "%" PRId64, a->ints[i]);
    sb_printf(b, "]");
    break;
  case TSL_ATTR_FLOATS:
    sb_printf(b, "[");
    for (int i = 0; i < a->n; i++) sb_printf(b, i ? ",%g" : "%g", a->floats[i]);
    sb_printf(b, "]");
    break;
  case TSL_ATTR_STRING:
    sb_printf(b, "\"%s\"", a->s);
    break;
  case TSL_ATTR_TENSOR:
    sb_printf(b, "tensor %s[", tsl_dtype_str(a->t->dtype));
    for (int d = 0; d < a->t->ndim; d++) sb_printf(b, d ? "x%" PRId64 : "%" PRId64, a->t->shape[d]);
    sb_printf(b, "]");
    break;
  }
}

int tsl_graph_format_node(const tsl_graph *g, int node, char *buf, size_t n) {
  sbuf b = {buf, n, 0};
  if (n) buf[0] = 0;
  if (!g || node < 0 || node >= g->n_nodes) return 0;
  const tsl_node *nd = &g->nodes[node];
  for (int k = 0; k < nd->n_outputs; k++) {
    sb_printf(&b, k ? ", " : "");
    sb_operand(&b, g, nd->outputs[k]);
  }
  sb_printf(&b, " = %s(", tsl_op_name(nd->op));
  for (int k = 0; k < nd->n_inputs; k++) {
    sb_printf(&b, k ? ", " : "");
    sb_operand(&b, g, nd->inputs[k]);
  }
  sb_printf(&b, ")");
  if (nd->n_attrs) {
    sb_printf(&b, " {");
    for (int i = 0; i < nd->n_attrs; i++) {
      sb_printf(&b, i ? ", " : "");
      sb_attr(&b, &nd->attrs[i]);
    }
    sb_printf(&b, "}");
  }
  sb_printf(&b, " :");
  int shown = 0;
  for (int k = 0; k < nd->n_inputs; k++) {
    int v = nd->inputs[k];
    if (v < 0 || g->values[v].constant) continue;
    sb_printf(&b, shown++ ? ", " : " ");
    sb_type(&b, &g->values[v]);
  }
  sb_printf(&b, " ->");
  for (int k = 0; k < nd->n_outputs; k++) {
    sb_printf(&b, k ? ", " : " ");
    sb_type(&b, &g->values[nd->outputs[k]]);
  }
  if (n && b.len >= n) buf[n - 1] = 0;
  return (int)b.len;
}

void tsl_graph_print(const tsl_graph *g, FILE *f) {
  if (!g || !f) return;
  fprintf(f, "graph %s: %d inputs, %d outputs, %d nodes, %" PRId64 " parameters\n", g->name, g->n_inputs,
          g->n_outputs, g->n_nodes, tsl_graph_param_count(g));
  char small[256];
  for (int k = 0; k < g->n_inputs; k++) {
    sbuf b = {small, sizeof small, 0};
    sb_type(&b, &g->values[g->inputs[k]]);
    fprintf(f, "  input %%%s: %s\n", g->values[g->inputs[k]].name, small);
  }
  for (int k = 0; k < g->n_outputs; k++) {
    sbuf b = {small, sizeof small, 0};
    sb_type(&b, &g->values[g->outputs[k]]);
    fprintf(f, "  output %%%s: %s\n", g->values[g->outputs[k]].name, small);
  }
  char line[4096];
  for (int i = 0; i < g->n_nodes; i++) {
    int need = tsl_graph_format_node(g, i, line, sizeof line);
    fprintf(f, "  %s%s\n", line, (size_t)need >= sizeof line ? " ..." : "");
  }
}
