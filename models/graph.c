/* The model graph: construction, attributes, the name index, checks, pruning.
 * Shape inference lives in shape_infer.c, the printer in graph_print.c. */
#include "models/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[TSL_OP_COUNT] = {
    [TSL_OP_CONV] = "Conv",
    [TSL_OP_BATCH_NORM] = "BatchNormalization",
    [TSL_OP_RELU] = "Relu",
    [TSL_OP_CLIP] = "Clip",
    [TSL_OP_MAX_POOL] = "MaxPool",
    [TSL_OP_AVERAGE_POOL] = "AveragePool",
    [TSL_OP_GLOBAL_AVERAGE_POOL] = "GlobalAveragePool",
    [TSL_OP_REDUCE_MEAN] = "ReduceMean",
    [TSL_OP_ADD] = "Add",
    [TSL_OP_MUL] = "Mul",
    [TSL_OP_DIV] = "Div",
    [TSL_OP_CONCAT] = "Concat",
    [TSL_OP_GEMM] = "Gemm",
    [TSL_OP_MATMUL] = "MatMul",
    [TSL_OP_FLATTEN] = "Flatten",
    [TSL_OP_RESHAPE] = "Reshape",
    [TSL_OP_TRANSPOSE] = "Transpose",
    [TSL_OP_SLICE] = "Slice",
    [TSL_OP_SPLIT] = "Split",
    [TSL_OP_SOFTMAX] = "Softmax",
    [TSL_OP_DROPOUT] = "Dropout",
    [TSL_OP_IDENTITY] = "Identity",
    [TSL_OP_PAD] = "Pad",
    [TSL_OP_SUB] = "Sub",
    [TSL_OP_POW] = "Pow",
    [TSL_OP_REDUCE_SUM] = "ReduceSum",
    [TSL_OP_REDUCE_MAX] = "ReduceMax",
    [TSL_OP_REDUCE_MIN] = "ReduceMin",
    [TSL_OP_LAYER_NORM] = "LayerNormalization",
    [TSL_OP_CHANNEL_SHUFFLE] = "tsl.ChannelShuffle",
    [TSL_OP_BINARY] = "tsl.Binary",
    [TSL_OP_ACTIVATION] = "tsl.Activation",
    [TSL_OP_RESIZE] = "Resize",
    [TSL_OP_PRELU] = "PRelu",
    [TSL_OP_CHANNEL_GATHER] = "tsl.ChannelGather",
    [TSL_OP_SQUEEZE_EXCITE] = "tsl.SqueezeExcite",
    [TSL_OP_SPACE_TO_DEPTH] = "SpaceToDepth",
};

const char *tsl_op_name(tsl_op op) {
  if ((int)op < 0 || op >= TSL_OP_COUNT) return "?";
  return op_names[op];
}

tsl_status tsl_op_from_name(const char *name, tsl_op *out) {
  if (!name || !out) return tsl_error(TSL_ERR_INVALID, "tsl_op_from_name: NULL argument");
  for (int i = 0; i < TSL_OP_COUNT; i++) {
    if (strcmp(op_names[i], name) == 0) {
      *out = (tsl_op)i;
      return TSL_OK;
    }
  }
  return tsl_error(TSL_ERR_NOT_FOUND, "tsl_op_from_name: '%s' is not an operator of tessel's set",
                   name);
}

/* ---- name index: open addressing over value ids, FNV-1a hashes ---- */

struct tsl_graph_index {
  int cap;   /* power of two */
  int *slot; /* value id or -1 */
};

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static tsl_status index_rebuild(tsl_graph *g, int cap) {
  int *slot = malloc((size_t)cap * sizeof *slot);
  if (!slot) return tsl_error(TSL_ERR_NOMEM, "graph: name index of %d slots", cap);
  for (int i = 0; i < cap; i++) slot[i] = -1;
  for (int v = 0; v < g->n_values; v++) {
    size_t h = (size_t)name_hash(g->values[v].name) & (size_t)(cap - 1);
    while (slot[h] >= 0) h = (h + 1) & (size_t)(cap - 1);
    slot[h] = v;
  }
  free(g->index->slot);
  g->index->slot = slot;
  g->index->cap = cap;
  return TSL_OK;
}

int tsl_graph_find_value(const tsl_graph *g, const char *name) {
  if (!g || !name || !g->index->slot) return -1;
  int cap = g->index->cap;
  size_t h = (size_t)name_hash(name) & (size_t)(cap - 1);
  while (g->index->slot[h] >= 0) {
    int v = g->index->slot[h];
    if (strcmp(g->values[v].name, name) == 0) return v;
    h = (h + 1) & (size_t)(cap - 1);
  }
  return -1;
}

/* Inserts the last value into the index, growing it to keep the load under 1/2. */
static tsl_status index_insert_last(tsl_graph *g) {
  if (2 * g->n_values > g->index->cap) {
    int cap = g->index->cap ? g->index->cap : 64;
    while (2 * g->n_values > cap) cap *= 2;
    return index_rebuild(g, cap);
  }
  int cap = g->index->cap;
  size_t h = (size_t)name_hash(g->values[g->n_values - 1].name) & (size_t)(cap - 1);
  while (g->index->slot[h] >= 0) h = (h + 1) & (size_t)(cap - 1);
  g->index->slot[h] = g->n_values - 1;
  return TSL_OK;
}

/* ---- lifetime ---- */

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

tsl_status tsl_graph_new(const char *name, tsl_graph **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "tsl_graph_new: NULL out");
  tsl_graph *g = calloc(1, sizeof *g);
  if (!g) return tsl_error(TSL_ERR_NOMEM, "tsl_graph_new: graph");
  g->name = dup_str(name ? name : "");
  g->index = calloc(1, sizeof *g->index);
  if (!g->name || !g->index) {
    tsl_graph_free(g);
    return tsl_error(TSL_ERR_NOMEM, "tsl_graph_new: graph");
  }
  *out = g;
  return TSL_OK;
}

static void attr_clear(tsl_attr *a) {
  free(a->name);
  free(a->ints);
  free(a->floats);
  free(a->s);
  tsl_tensor_free(a->t);
  memset(a, 0, sizeof *a);
}

static void node_clear(tsl_node *n) {
  free(n->name);
  free(n->inputs);
  free(n->outputs);
  for (int i = 0; i < n->n_attrs; i++) attr_clear(&n->attrs[i]);
  free(n->attrs);
  memset(n, 0, sizeof *n);
}

static void value_clear(tsl_value *v) {
  free(v->name);
  tsl_tensor_free(v->constant);
  memset(v, 0, sizeof *v);
}

void tsl_graph_free(tsl_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_nodes; i++) node_clear(&g->nodes[i]);
  for (int i = 0; i < g->n_values; i++) value_clear(&g->values[i]);
  free(g->nodes);
  free(g->values);
  free(g->inputs);
  free(g->outputs);
  if (g->index) free(g->index->slot);
  free(g->index);
  free(g->name);
  free(g);
}

/* ---- values ---- */

static tsl_status new_value(tsl_graph *g, const char *name, int *id) {
  char auto_name[32];
  if (!name) {
    /* Unique even if a user named a value like this: probe until free. */
    for (int k = g->n_values;; k++) {
      snprintf(auto_name, sizeof auto_name, "_t%d", k);
      if (tsl_graph_find_value(g, auto_name) < 0) break;
    }
    name = auto_name;
  } else if (tsl_graph_find_value(g, name) >= 0) {
    return tsl_error(TSL_ERR_INVALID, "graph: value name '%s' is already used", name);
  }
  if (g->n_values == g->cap_values) {
    int cap = g->cap_values ? 2 * g->cap_values : 64;
    tsl_value *nv = realloc(g->values, (size_t)cap * sizeof *nv);
    if (!nv) return tsl_error(TSL_ERR_NOMEM, "graph: %d values", cap);
    g->values = nv;
    g->cap_values = cap;
  }
  tsl_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = dup_str(name);
  if (!v->name) return tsl_error(TSL_ERR_NOMEM, "graph: value name");
  v->ndim = -1;
  v->producer = -1;
  v->dtype = TSL_DTYPE_F32;
  g->n_values++;
  tsl_status st = index_insert_last(g);
  if (st != TSL_OK) {
    g->n_values--;
    value_clear(v);
    return st;
  }
  *id = g->n_values - 1;
  return TSL_OK;
}

tsl_status tsl_graph_add_value(tsl_graph *g, const char *name, int *id) {
  if (!g || !id) return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_value: NULL argument");
  return new_value(g, name, id);
}

tsl_status tsl_graph_add_input(tsl_graph *g, const char *name, tsl_dtype dt, int ndim,
                               const int64_t *shape, int *id) {
  if (!g || !name || !id || (ndim > 0 && !shape))
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_input: NULL argument");
  if (!tsl_dtype_valid(dt)) return tsl_error(TSL_ERR_INVALID, "graph input '%s': invalid dtype", name);
  if (ndim < 0 || ndim > TSL_MAX_NDIM)
    return tsl_error(TSL_ERR_INVALID, "graph input '%s': rank %d outside 0..%d", name, ndim,
                     TSL_MAX_NDIM);
  char where[160];
  snprintf(where, sizeof where, "graph input '%s'", name);
  tsl_status st = tsl_shape_check(where, ndim, shape, TSL_GRAPH_MAX_NUMEL, NULL);
  if (st != TSL_OK) return st;
  int *ni = realloc(g->inputs, (size_t)(g->n_inputs + 1) * sizeof *ni);
  if (!ni) return tsl_error(TSL_ERR_NOMEM, "graph: inputs");
  g->inputs = ni;
  int v;
  st = new_value(g, name, &v);
  if (st != TSL_OK) return st;
  tsl_value *val = &g->values[v];
  val->dtype = dt;
  val->ndim = ndim;
  for (int d = 0; d < ndim; d++) val->shape[d] = shape[d];
  val->is_input = true;
  g->inputs[g->n_inputs++] = v;
  *id = v;
  return TSL_OK;
}

tsl_status tsl_graph_add_constant(tsl_graph *g, const char *name, tsl_tensor *t, int *id) {
  if (!g || !t || !id) {
    tsl_tensor_free(t);
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_constant: NULL argument");
  }
  char where[160];
  snprintf(where, sizeof where, "graph constant '%s'", name ? name : "");
  tsl_status st = tsl_shape_check(where, t->ndim, t->shape, TSL_GRAPH_MAX_NUMEL, NULL);
  if (st != TSL_OK) {
    tsl_tensor_free(t);
    return st;
  }
  int v;
  st = new_value(g, name, &v);
  if (st != TSL_OK) {
    tsl_tensor_free(t);
    return st;
  }
  tsl_value *val = &g->values[v];
  val->constant = t;
  val->dtype = t->dtype;
  val->ndim = t->ndim;
  for (int d = 0; d < t->ndim; d++) val->shape[d] = t->shape[d];
  *id = v;
  return TSL_OK;
}

tsl_status tsl_graph_add_output(tsl_graph *g, int value) {
  if (!g || value < 0 || value >= g->n_values)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_output: bad value id %d", value);
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == value)
      return tsl_error(TSL_ERR_INVALID, "graph output '%s' listed twice", g->values[value].name);
  int *no = realloc(g->outputs, (size_t)(g->n_outputs + 1) * sizeof *no);
  if (!no) return tsl_error(TSL_ERR_NOMEM, "graph: outputs");
  g->outputs = no;
  g->outputs[g->n_outputs++] = value;
  return TSL_OK;
}

/* ---- nodes ---- */

tsl_status tsl_graph_add_node(tsl_graph *g, tsl_op op, const char *name, int n_inputs,
                              const int *inputs, int n_outputs, const int *outputs, int *node_id) {
  if (!g || (n_inputs > 0 && !inputs) || !outputs || !node_id || n_inputs < 0)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_node: NULL argument");
  if ((int)op < 0 || op >= TSL_OP_COUNT)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_node: operator %d out of range", (int)op);
  if (n_outputs < 1)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_node: %s node without outputs", tsl_op_name(op));
  for (int i = 0; i < n_inputs; i++)
    if (inputs[i] < -1 || inputs[i] >= g->n_values)
      return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_node: %s input %d: bad value id %d",
                       tsl_op_name(op), i, inputs[i]);
  for (int i = 0; i < n_outputs; i++) {
    if (outputs[i] < 0 || outputs[i] >= g->n_values)
      return tsl_error(TSL_ERR_INVALID, "tsl_graph_add_node: %s output %d: bad value id %d",
                       tsl_op_name(op), i, outputs[i]);
    const tsl_value *v = &g->values[outputs[i]];
    if (v->producer >= 0 || v->constant || v->is_input)
      return tsl_error(TSL_ERR_INVALID, "graph: %s node writes '%s', which is %s", tsl_op_name(op),
                       v->name,
                       v->constant ? "a constant" : v->is_input ? "a graph input" : "already produced");
    for (int j = 0; j < i; j++)
      if (outputs[j] == outputs[i])
        return tsl_error(TSL_ERR_INVALID, "graph: %s node writes '%s' twice", tsl_op_name(op),
                         v->name);
  }
  if (g->n_nodes == g->cap_nodes) {
    int cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
    tsl_node *nn = realloc(g->nodes, (size_t)cap * sizeof *nn);
    if (!nn) return tsl_error(TSL_ERR_NOMEM, "graph: %d nodes", cap);
    g->nodes = nn;
    g->cap_nodes = cap;
  }
  tsl_node *n = &g->nodes[g->n_nodes];
  memset(n, 0, sizeof *n);
  n->op = op;
  char auto_name[64];
  if (!name) {
    snprintf(auto_name, sizeof auto_name, "%s_%d", tsl_op_name(op), g->n_nodes);
    name = auto_name;
  }
  n->name = dup_str(name);
  n->inputs = malloc((size_t)(n_inputs ? n_inputs : 1) * sizeof *n->inputs);
  n->outputs = malloc((size_t)n_outputs * sizeof *n->outputs);
  if (!n->name || !n->inputs || !n->outputs) {
    node_clear(n);
    return tsl_error(TSL_ERR_NOMEM, "graph: node");
  }
  n->n_inputs = n_inputs;
  n->n_outputs = n_outputs;
  if (n_inputs) memcpy(n->inputs, inputs, (size_t)n_inputs * sizeof *inputs);
  memcpy(n->outputs, outputs, (size_t)n_outputs * sizeof *outputs);
  for (int i = 0; i < n_outputs; i++) g->values[outputs[i]].producer = g->n_nodes;
  *node_id = g->n_nodes++;
  return TSL_OK;
}

/* ---- attributes ---- */

/* The attribute slot for `name` on `node`, cleared and named, new or replaced. */
static tsl_status attr_slot(tsl_graph *g, int node, const char *name, tsl_attr **out) {
  if (!g || node < 0 || node >= g->n_nodes || !name)
    return tsl_error(TSL_ERR_INVALID, "graph: set attribute: bad node %d or NULL name", node);
  tsl_node *n = &g->nodes[node];
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, name) == 0) {
      char *keep = n->attrs[i].name;
      n->attrs[i].name = NULL;
      attr_clear(&n->attrs[i]);
      n->attrs[i].name = keep;
      *out = &n->attrs[i];
      return TSL_OK;
    }
  }
  tsl_attr *na = realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *na);
  if (!na) return tsl_error(TSL_ERR_NOMEM, "graph: attributes");
  n->attrs = na;
  tsl_attr *a = &n->attrs[n->n_attrs];
  memset(a, 0, sizeof *a);
  a->name = dup_str(name);
  if (!a->name) return tsl_error(TSL_ERR_NOMEM, "graph: attribute name");
  n->n_attrs++;
  *out = a;
  return TSL_OK;
}

tsl_status tsl_graph_set_attr_int(tsl_graph *g, int node, const char *name, int64_t v) {
  tsl_attr *a;
  tsl_status st = attr_slot(g, node, name, &a);
  if (st != TSL_OK) return st;
  a->kind = TSL_ATTR_INT;
  a->i = v;
  return TSL_OK;
}

tsl_status tsl_graph_set_attr_float(tsl_graph *g, int node, const char *name, double v) {
  tsl_attr *a;
  tsl_status st = attr_slot(g, node, name, &a);
  if (st != TSL_OK) return st;
  a->kind = TSL_ATTR_FLOAT;
  a->f = v;
  return TSL_OK;
}

tsl_status tsl_graph_set_attr_ints(tsl_graph *g, int node, const char *name, int n,
                                   const int64_t *v) {
  if (n < 0 || (n > 0 && !v)) return tsl_error(TSL_ERR_INVALID, "graph: ints attribute: bad array");
  tsl_attr *a;
  tsl_status st = attr_slot(g, node, name, &a);
  if (st != TSL_OK) return st;
  a->kind = TSL_ATTR_INTS;
  a->ints = malloc((size_t)(n ? n : 1) * sizeof *a->ints);
  if (!a->ints) return tsl_error(TSL_ERR_NOMEM, "graph: ints attribute");
  if (n) memcpy(a->ints, v, (size_t)n * sizeof *v);
  a->n = n;
  return TSL_OK;
}

tsl_status tsl_graph_set_attr_floats(tsl_graph *g, int node, const char *name, int n,
                                     const double *v) {
  if (n < 0 || (n > 0 && !v)) return tsl_error(TSL_ERR_INVALID, "graph: floats attribute: bad array");
  tsl_attr *a;
  tsl_status st = attr_slot(g, node, name, &a);
  if (st != TSL_OK) return st;
  a->kind = TSL_ATTR_FLOATS;
  a->floats = malloc((size_t)(n ? n : 1) * sizeof *a->floats);
  if (!a->floats) return tsl_error(TSL_ERR_NOMEM, "graph: floats attribute");
  if (n) memcpy(a->floats, v, (size_t)n * sizeof *v);
  a->n = n;
  return TSL_OK;
}

tsl_status tsl_graph_set_attr_string(tsl_graph *g, int node, const char *name, const char *s) {
  if (!s) return tsl_error(TSL_ERR_INVALID, "graph: string attribute: NULL");
  tsl_attr *a;
  tsl_status st = attr_slot(g, node, name, &a);
  if (st != TSL_OK) return st;
  a->kind = TSL_ATTR_STRING;
  a->s = dup_str(s);
  if (!a->s) return tsl_error(TSL_ERR_NOMEM, "graph: string attribute");
  return TSL_OK;
}

tsl_status tsl_graph_set_attr_tensor(tsl_graph *g, int node, const char *name, tsl_tensor *t) {
  if (!t) return tsl_error(TSL_ERR_INVALID, "graph: tensor attribute: NULL");
  tsl_attr *a;
  tsl_status st = attr_slot(g, node, name, &a);
  if (st != TSL_OK) {
    tsl_tensor_free(t);
    return st;
  }
  a->kind = TSL_ATTR_TENSOR;
  a->t = t;
  return TSL_OK;
}

const tsl_attr *tsl_node_attr(const tsl_node *node, const char *name) {
  if (!node || !name) return NULL;
  for (int i = 0; i < node->n_attrs; i++)
    if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
  return NULL;
}

int64_t tsl_node_attr_int(const tsl_node *node, const char *name, int64_t dflt) {
  const tsl_attr *a = tsl_node_attr(node, name);
  return a && a->kind == TSL_ATTR_INT ? a->i : dflt;
}

double tsl_node_attr_float(const tsl_node *node, const char *name, double dflt) {
  const tsl_attr *a = tsl_node_attr(node, name);
  return a && a->kind == TSL_ATTR_FLOAT ? a->f : dflt;
}

const int64_t *tsl_node_attr_ints(const tsl_node *node, const char *name, int *n) {
  const tsl_attr *a = tsl_node_attr(node, name);
  if (!a || a->kind != TSL_ATTR_INTS) {
    if (n) *n = 0;
    return NULL;
  }
  if (n) *n = a->n;
  return a->ints;
}

/* ---- whole-graph queries ---- */

tsl_status tsl_graph_check(const tsl_graph *g) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "graph check: NULL graph");
  char *ready = calloc((size_t)(g->n_values ? g->n_values : 1), 1);
  int *writer = malloc((size_t)(g->n_values ? g->n_values : 1) * sizeof *writer);
  if (!ready || !writer) {
    free(ready);
    free(writer);
    return tsl_error(TSL_ERR_NOMEM, "graph check");
  }
  tsl_status st = TSL_OK;
  for (int v = 0; v < g->n_values; v++) {
    ready[v] = g->values[v].is_input || g->values[v].constant;
    writer[v] = -1;
  }
  for (int i = 0; i < g->n_nodes && st == TSL_OK; i++) {
    const tsl_node *n = &g->nodes[i];
    if (n->n_outputs < 1) {
      st = tsl_error(TSL_ERR_INVALID, "graph: node '%s' (%s) has no outputs", n->name, tsl_op_name(n->op));
      break;
    }
    for (int k = 0; k < n->n_inputs && st == TSL_OK; k++) {
      int v = n->inputs[k];
      if (v == -1) continue;
      if (v < -1 || v >= g->n_values)
        st = tsl_error(TSL_ERR_INVALID, "graph: node '%s' input %d: bad value id %d", n->name, k, v);
      else if (!ready[v])
        st = tsl_error(TSL_ERR_INVALID,
                       "graph: node '%s' (%s) reads '%s' before it is produced (not in topological order)",
                       n->name, tsl_op_name(n->op), g->values[v].name);
    }
    for (int k = 0; k < n->n_outputs && st == TSL_OK; k++) {
      int v = n->outputs[k];
      if (v < 0 || v >= g->n_values)
        st = tsl_error(TSL_ERR_INVALID, "graph: node '%s' output %d: bad value id %d", n->name, k, v);
      else if (ready[v] || writer[v] >= 0)
        st = tsl_error(TSL_ERR_INVALID, "graph: node '%s' writes '%s', which is already defined",
                       n->name, g->values[v].name);
      else if (g->values[v].producer != i)
        st = tsl_error(TSL_ERR_INVALID, "graph: value '%s' records producer %d, not node '%s'",
                       g->values[v].name, g->values[v].producer, n->name);
      else
        writer[v] = i;
    }
    for (int k = 0; k < n->n_outputs && st == TSL_OK; k++) ready[n->outputs[k]] = 1;
  }
  for (int k = 0; k < g->n_outputs && st == TSL_OK; k++) {
    int v = g->outputs[k];
    if (v < 0 || v >= g->n_values)
      st = tsl_error(TSL_ERR_INVALID, "graph: output %d: bad value id %d", k, v);
    else if (!ready[v])
      st = tsl_error(TSL_ERR_INVALID, "graph: output '%s' is never produced", g->values[v].name);
  }
  free(ready);
  free(writer);
  return st;
}

int64_t tsl_graph_param_count(const tsl_graph *g) {
  if (!g || g->n_values == 0) return 0;
  char *counted = calloc((size_t)g->n_values, 1);
  if (!counted) return -1;
  int64_t total = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const tsl_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      if (n->op == TSL_OP_BATCH_NORM && (k == 3 || k == 4)) continue;
      int v = n->inputs[k];
      if (v < 0 || counted[v] || !g->values[v].constant) continue;
      if (g->values[v].dtype.code != TSL_DT_FLOAT) continue;
      counted[v] = 1;
      total += tsl_tensor_numel(g->values[v].constant);
    }
  }
  free(counted);
  return total;
}

int tsl_graph_count_op(const tsl_graph *g, tsl_op op) {
  int c = 0;
  for (int i = 0; g && i < g->n_nodes; i++) c += g->nodes[i].op == op;
  return c;
}

tsl_status tsl_graph_replace_uses(tsl_graph *g, int from, int to) {
  if (!g || from < 0 || from >= g->n_values || to < 0 || to >= g->n_values)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_replace_uses: bad value ids %d -> %d", from, to);
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == from) g->nodes[i].inputs[k] = to;
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] == from) g->outputs[k] = to;
  return TSL_OK;
}

tsl_status tsl_graph_toposort(tsl_graph *g) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "tsl_graph_toposort: NULL graph");
  size_t nv = (size_t)(g->n_values ? g->n_values : 1), nn = (size_t)(g->n_nodes ? g->n_nodes : 1);
  char *ready = calloc(nv, 1), *placed = calloc(nn, 1);
  int *order = malloc(nn * sizeof *order);
  tsl_node *sorted = malloc(nn * sizeof *sorted);
  if (!ready || !placed || !order || !sorted) {
    free(ready);
    free(placed);
    free(order);
    free(sorted);
    return tsl_error(TSL_ERR_NOMEM, "tsl_graph_toposort");
  }
  for (int v = 0; v < g->n_values; v++) ready[v] = g->values[v].is_input || g->values[v].constant;
  tsl_status st = TSL_OK;
  for (int k = 0; k < g->n_nodes && st == TSL_OK; k++) {
    int pick = -1;
    for (int i = 0; i < g->n_nodes && pick < 0; i++) {
      if (placed[i]) continue;
      bool ok = true;
      for (int j = 0; ok && j < g->nodes[i].n_inputs; j++) {
        int v = g->nodes[i].inputs[j];
        ok = v < 0 || (v < g->n_values && ready[v]);
      }
      if (ok) pick = i;
    }
    if (pick < 0) {
      int stuck = 0;
      while (placed[stuck]) stuck++;
      st = tsl_error(TSL_ERR_INVALID, "graph: no topological order: node '%s' (%s) waits on a cycle or on a value nothing produces",
                     g->nodes[stuck].name, tsl_op_name(g->nodes[stuck].op));
      break;
    }
    placed[pick] = 1;
    order[k] = pick;
    for (int j = 0; j < g->nodes[pick].n_outputs; j++)
      if (g->nodes[pick].outputs[j] >= 0 && g->nodes[pick].outputs[j] < g->n_values) ready[g->nodes[pick].outputs[j]] = 1;
  }
  if (st == TSL_OK) {
    for (int k = 0; k < g->n_nodes; k++) sorted[k] = g->nodes[order[k]];
    if (g->n_nodes) memcpy(g->nodes, sorted, (size_t)g->n_nodes * sizeof *sorted); /* no nodes: NULL arrays */
    for (int k = 0; k < g->n_nodes; k++)
      for (int j = 0; j < g->nodes[k].n_outputs; j++) g->values[g->nodes[k].outputs[j]].producer = k;
  }
  free(ready);
  free(placed);
  free(order);
  free(sorted);
  return st;
}

tsl_status tsl_graph_prune(tsl_graph *g) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "tsl_graph_prune: NULL graph");
  size_t nv = (size_t)(g->n_values ? g->n_values : 1), nn = (size_t)(g->n_nodes ? g->n_nodes : 1);
  char *used = calloc(nv, 1), *keep_node = calloc(nn, 1);
  int *vmap = malloc(nv * sizeof *vmap), *nmap = malloc(nn * sizeof *nmap);
  if (!used || !keep_node || !vmap || !nmap) {
    free(used);
    free(keep_node);
    free(vmap);
    free(nmap);
    return tsl_error(TSL_ERR_NOMEM, "tsl_graph_prune");
  }
  for (int k = 0; k < g->n_outputs; k++) used[g->outputs[k]] = 1;
  for (int k = 0; k < g->n_inputs; k++) used[g->inputs[k]] = 1;
  /* Backwards: a node is live if one of its outputs is used; then its inputs are. */
  for (int i = g->n_nodes - 1; i >= 0; i--) {
    tsl_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_outputs; k++) keep_node[i] |= used[n->outputs[k]];
    if (!keep_node[i]) continue;
    for (int k = 0; k < n->n_outputs; k++) used[n->outputs[k]] = 1;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) used[n->inputs[k]] = 1;
  }
  int nv_new = 0;
  for (int v = 0; v < g->n_values; v++) {
    if (used[v]) {
      vmap[v] = nv_new;
      if (nv_new != v) g->values[nv_new] = g->values[v];
      nv_new++;
    } else {
      vmap[v] = -1;
      value_clear(&g->values[v]);
    }
  }
  int nn_new = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (keep_node[i]) {
      nmap[i] = nn_new;
      if (nn_new != i) g->nodes[nn_new] = g->nodes[i];
      nn_new++;
    } else {
      nmap[i] = -1;
      node_clear(&g->nodes[i]);
    }
  }
  g->n_values = nv_new;
  g->n_nodes = nn_new;
  for (int i = 0; i < g->n_nodes; i++) {
    tsl_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) n->inputs[k] = vmap[n->inputs[k]];
    for (int k = 0; k < n->n_outputs; k++) n->outputs[k] = vmap[n->outputs[k]];
  }
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].producer >= 0) g->values[v].producer = nmap[g->values[v].producer];
  for (int k = 0; k < g->n_inputs; k++) g->inputs[k] = vmap[g->inputs[k]];
  for (int k = 0; k < g->n_outputs; k++) g->outputs[k] = vmap[g->outputs[k]];
  free(used);
  free(keep_node);
  free(vmap);
  free(nmap);
  int cap = 64;
  while (2 * g->n_values > cap) cap *= 2;
  return index_rebuild(g, cap);
}
