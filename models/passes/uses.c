/* Readers of a value (uses.h). */
#include "models/passes/uses.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn/activation.h"

int tsl_pass_count_uses(const tsl_graph *g, int v, const bool *dead) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead && dead[i]) continue;
    for (int k = 0; k < g->nodes[i].n_inputs; k++) n += g->nodes[i].inputs[k] == v;
  }
  for (int o = 0; o < g->n_outputs; o++) n += g->outputs[o] == v;
  return n;
}

int tsl_pass_single_user(const tsl_graph *g, int v, const bool *dead) {
  for (int o = 0; o < g->n_outputs; o++)
    if (g->outputs[o] == v) return -1;
  int user = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (dead && dead[i]) continue;
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == v) {
        if (user >= 0) return -1;
        user = i;
      }
  }
  return user;
}

int tsl_pass_single_user_op(const tsl_graph *g, int v, tsl_op op, const bool *dead) {
  int u = tsl_pass_single_user(g, v, dead);
  return u >= 0 && g->nodes[u].op == op ? u : -1;
}

bool tsl_pass_const_scalar(const tsl_graph *g, int v, double *out) {
  const tsl_tensor *t = v >= 0 ? g->values[v].constant : NULL;
  if (!t || tsl_tensor_numel(t) != 1 || t->dtype.code == TSL_DT_BOOL) return false;
  *out = tsl_tensor_get_f64(t, 0);
  return true;
}

int tsl_pass_other_input(const tsl_node *n, int v) {
  if (n->n_inputs != 2) return -1;
  return n->inputs[0] == v ? n->inputs[1] : n->inputs[1] == v ? n->inputs[0] : -1;
}

bool tsl_pass_is_function(const tsl_graph *g, int node, const char *fn) {
  const tsl_activation *a;
  double attrs[TSL_ACTIVATION_MAX_ATTRS];
  return node >= 0 && g->nodes[node].op == TSL_OP_ACTIVATION &&
         tsl_node_activation(g, &g->nodes[node], &a, attrs) == TSL_OK && strcmp(a->onnx_op, fn) == 0;
}

bool tsl_pass_is_graph_output(const tsl_graph *g, int v) {
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == v) return true;
  return false;
}

tsl_status tsl_pass_add_replacement(tsl_graph *g, int old, const char *suffix, tsl_op op, int nin, const int *ins,
                                    int *node, int *value) {
  char name[300];
  snprintf(name, sizeof name, "%s.%s", g->values[old].name ? g->values[old].name : "v", suffix);
  int y, id;
  tsl_status st = tsl_graph_add_value(g, tsl_graph_find_value(g, name) >= 0 ? NULL : name, &y);
  if (st == TSL_OK) st = tsl_graph_add_node(g, op, NULL, nin, ins, 1, &y, &id);
  if (st == TSL_OK) st = tsl_graph_replace_uses(g, old, y);
  if (st != TSL_OK) return st;
  if (node) *node = id;
  if (value) *value = y;
  return TSL_OK;
}

tsl_status tsl_pass_rewrite_each(tsl_graph *g, const char *pass, tsl_pass_rewrite_fn fn, void *ctx, int *count) {
  if (count) *count = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "%s: NULL graph", pass);
  int n0 = g->n_nodes, done_count = 0;
  /* each rewrite appends at most one node per replaced one: room for them in the marks */
  bool *dead = calloc((size_t)(2 * n0 + 1), sizeof *dead);
  if (!dead) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", pass);
  tsl_status st = TSL_OK;
  for (int i = 0; i < n0 && st == TSL_OK; i++) {
    bool done = false;
    if (dead[i]) continue;
    st = fn(g, i, dead, ctx, &done);
    done_count += st == TSL_OK && done;
  }
  free(dead);
  if (st != TSL_OK) return st;
  if (count) *count = done_count;
  if (!done_count) return TSL_OK;
  if ((st = tsl_graph_toposort(g)) != TSL_OK) return st;
  return tsl_graph_prune(g);
}

tsl_status tsl_pass_copy_attrs(tsl_graph *g, int from, int to) {
  tsl_status st = TSL_OK;
  for (int i = 0; st == TSL_OK && i < g->nodes[from].n_attrs; i++) {
    const tsl_attr *a = &g->nodes[from].attrs[i];
    switch (a->kind) {
    case TSL_ATTR_INT: st = tsl_graph_set_attr_int(g, to, a->name, a->i); break;
    case TSL_ATTR_FLOAT: st = tsl_graph_set_attr_float(g, to, a->name, a->f); break;
    case TSL_ATTR_INTS: st = tsl_graph_set_attr_ints(g, to, a->name, a->n, a->ints); break;
    case TSL_ATTR_FLOATS: st = tsl_graph_set_attr_floats(g, to, a->name, a->n, a->floats); break;
    case TSL_ATTR_STRING: st = tsl_graph_set_attr_string(g, to, a->name, a->s); break;
    default:
      st = tsl_error(TSL_ERR_UNSUPPORTED, "graph pass: cannot copy the tensor attribute %s of node %s", a->name,
                     g->nodes[from].name);
    }
  }
  return st;
}
