/* Whole-graph copies and node rewrites for the graph passes (graph.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/graph.h"

static tsl_status copy_tensor(const tsl_tensor *t, tsl_tensor **out) {
  *out = NULL;
  if (!t) return TSL_OK;
  tsl_status st = tsl_tensor_new(t->dtype, t->ndim, t->shape, out);
  if (st != TSL_OK) return st;
  return tsl_tensor_copy_to(t, (*out)->data, tsl_tensor_nbytes(*out));
}

static tsl_status copy_attr(tsl_graph *g, int node, const tsl_attr *a) {
  switch (a->kind) {
  case TSL_ATTR_INT: return tsl_graph_set_attr_int(g, node, a->name, a->i);
  case TSL_ATTR_FLOAT: return tsl_graph_set_attr_float(g, node, a->name, a->f);
  case TSL_ATTR_INTS: return tsl_graph_set_attr_ints(g, node, a->name, a->n, a->ints);
  case TSL_ATTR_FLOATS: return tsl_graph_set_attr_floats(g, node, a->name, a->n, a->floats);
  case TSL_ATTR_STRING: return tsl_graph_set_attr_string(g, node, a->name, a->s);
  case TSL_ATTR_TENSOR: {
    tsl_tensor *t;
    tsl_status st = copy_tensor(a->t, &t);
    if (st != TSL_OK) return st;
    return tsl_graph_set_attr_tensor(g, node, a->name, t);
  }
  }
  return tsl_error(TSL_ERR_INVALID, "graph clone: attribute %s of unknown kind", a->name);
}

tsl_status tsl_graph_clone(const tsl_graph *g, tsl_graph **out) {
  if (!g || !out) return tsl_error(TSL_ERR_INVALID, "tsl_graph_clone: NULL argument");
  tsl_graph *c;
  tsl_status st = tsl_graph_new(g->name, &c);
  if (st != TSL_OK) return st;
  for (int v = 0; v < g->n_values && st == TSL_OK; v++) {
    const tsl_value *src = &g->values[v];
    int id = -1;
    if (src->constant) {
      tsl_tensor *t;
      st = copy_tensor(src->constant, &t);
      if (st == TSL_OK) st = tsl_graph_add_constant(c, src->name, t, &id);
    } else if (src->is_input) {
      st = tsl_graph_add_input(c, src->name, src->dtype, src->ndim, src->shape, &id);
    } else {
      st = tsl_graph_add_value(c, src->name, &id);
    }
    if (st == TSL_OK) {
      tsl_value *dst = &c->values[id];
      dst->dtype = src->dtype;
      dst->ndim = src->ndim;
      memcpy(dst->shape, src->shape, sizeof dst->shape);
      dst->layout = src->layout;
    }
  }
  /* graph inputs in the caller's order (add_input appended them in value order) */
  if (st == TSL_OK) {
    for (int i = 0; i < g->n_inputs; i++) c->inputs[i] = g->inputs[i];
    c->n_inputs = g->n_inputs;
  }
  for (int n = 0; n < g->n_nodes && st == TSL_OK; n++) {
    const tsl_node *src = &g->nodes[n];
    int id;
    st = tsl_graph_add_node(c, src->op, src->name, src->n_inputs, src->inputs, src->n_outputs, src->outputs, &id);
    for (int a = 0; a < src->n_attrs && st == TSL_OK; a++) st = copy_attr(c, id, &src->attrs[a]);
  }
  for (int o = 0; o < g->n_outputs && st == TSL_OK; o++) st = tsl_graph_add_output(c, g->outputs[o]);
  if (st != TSL_OK) {
    tsl_graph_free(c);
    return st;
  }
  *out = c;
  return TSL_OK;
}

tsl_status tsl_graph_set_node_inputs(tsl_graph *g, int node, int n, const int *inputs) {
  if (!g || node < 0 || node >= g->n_nodes || n < 0 || (n > 0 && !inputs))
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_set_node_inputs: bad arguments");
  for (int i = 0; i < n; i++)
    if (inputs[i] < -1 || inputs[i] >= g->n_values)
      return tsl_error(TSL_ERR_INVALID, "tsl_graph_set_node_inputs: bad value id %d", inputs[i]);
  int *ni = malloc((size_t)(n ? n : 1) * sizeof *ni);
  if (!ni) return tsl_error(TSL_ERR_NOMEM, "tsl_graph_set_node_inputs: out of memory");
  if (n) memcpy(ni, inputs, (size_t)n * sizeof *ni);
  free(g->nodes[node].inputs);
  g->nodes[node].inputs = ni;
  g->nodes[node].n_inputs = n;
  return TSL_OK;
}

/* The Reshape attribute "shape" of node n when it carries the batch: its first entry
 * is the old batch and so is its data input's first extent (shape inferred before the
 * change); NULL otherwise. */
static int64_t *reshape_batch_entry(const tsl_graph *g, const tsl_node *n, int64_t old) {
  if (n->op != TSL_OP_RESHAPE || n->n_inputs < 1 || n->inputs[0] < 0) return NULL;
  const tsl_value *x = &g->values[n->inputs[0]];
  if (x->ndim < 1 || x->shape[0] != old) return NULL;
  for (int a = 0; a < n->n_attrs; a++) {
    tsl_attr *at = &n->attrs[a];
    if (strcmp(at->name, "shape") == 0 && at->kind == TSL_ATTR_INTS && at->n >= 1 && at->ints[0] == old)
      return at->ints;
  }
  return NULL;
}

tsl_status tsl_graph_set_batch(tsl_graph *g, int64_t batch) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "tsl_graph_set_batch: NULL graph");
  if (batch < 1) return tsl_error(TSL_ERR_INVALID, "graph '%s': batch %lld (must be >= 1)", g->name, (long long)batch);
  if (g->n_inputs < 1) return tsl_error(TSL_ERR_INVALID, "graph '%s': no input to set a batch size on", g->name);
  tsl_status st = tsl_graph_infer_shapes(g);
  if (st != TSL_OK) return st;
  int64_t old = -1;
  for (int i = 0; i < g->n_inputs; i++) {
    const tsl_value *v = &g->values[g->inputs[i]];
    if (v->ndim < 1)
      return tsl_error(TSL_ERR_UNSUPPORTED, "graph '%s': input '%s' is a scalar (no batch axis)", g->name, v->name);
    if (old >= 0 && v->shape[0] != old)
      return tsl_error(TSL_ERR_UNSUPPORTED, "graph '%s': inputs differ in their first extent (%lld, '%s' %lld): no "
                       "common batch axis", g->name, (long long)old, v->name, (long long)v->shape[0]);
    old = v->shape[0];
  }
  if (old == batch) return TSL_OK;
  bool *out_batched = calloc((size_t)g->n_outputs + 1, sizeof *out_batched);
  if (!out_batched) return tsl_error(TSL_ERR_NOMEM, "tsl_graph_set_batch: out of memory");
  for (int o = 0; o < g->n_outputs; o++) {
    const tsl_value *v = &g->values[g->outputs[o]];
    out_batched[o] = v->ndim >= 1 && v->shape[0] == old;
  }
  /* the attributes first: they are matched against the shapes inferred with `old` */
  for (int n = 0; n < g->n_nodes; n++) {
    int64_t *entry = reshape_batch_entry(g, &g->nodes[n], old);
    if (entry) entry[0] = batch;
  }
  for (int i = 0; i < g->n_inputs; i++) g->values[g->inputs[i]].shape[0] = batch;
  st = tsl_graph_infer_shapes(g);
  if (st != TSL_OK) {
    free(out_batched);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    return tsl_error(st, "graph '%s' with batch %lld (was %lld): %s", g->name, (long long)batch, (long long)old, msg);
  }
  for (int o = 0; o < g->n_outputs && st == TSL_OK; o++) {
    const tsl_value *v = &g->values[g->outputs[o]];
    if (out_batched[o] && v->shape[0] != batch)
      st = tsl_error(TSL_ERR_UNSUPPORTED, "graph '%s' with batch %lld: output '%s' has first extent %lld (a "
                       "reshape with a fixed batch in the model?)", g->name, (long long)batch, v->name,
                       (long long)v->shape[0]);
  }
  free(out_batched);
  return st;
}
