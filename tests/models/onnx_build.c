/* Test-side ModelProto construction (see onnx_build.h). Every allocation is recorded
 * in the model and released by ob_free, so the protobuf-c structs can point anywhere. */
#include "onnx_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/onnx.pb-c.h"

struct ob_model {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto *opset_list[1];
  void **allocs;
  size_t n_allocs, cap_allocs;
};

static void *ob_alloc(ob_model *m, size_t n) {
  if (m->n_allocs == m->cap_allocs) {
    m->cap_allocs = m->cap_allocs ? 2 * m->cap_allocs : 64;
    m->allocs = realloc(m->allocs, m->cap_allocs * sizeof *m->allocs);
    if (!m->allocs) abort();
  }
  void *p = calloc(1, n ? n : 1);
  if (!p) abort();
  m->allocs[m->n_allocs++] = p;
  return p;
}

static char *ob_str(ob_model *m, const char *s) {
  char *d = ob_alloc(m, strlen(s) + 1);
  memcpy(d, s, strlen(s) + 1);
  return d;
}

/* A copy of the n-entry array `arr` with room for one more entry. */
static void **grow(ob_model *m, void **arr, size_t n) {
  void **na = ob_alloc(m, (n + 1) * sizeof *na);
  if (n) memcpy(na, arr, n * sizeof *na);
  return na;
}

ob_model *ob_new(int64_t opset) {
  ob_model *m = calloc(1, sizeof *m);
  if (!m) abort();
  onnx__model_proto__init(&m->model);
  onnx__graph_proto__init(&m->graph);
  onnx__operator_set_id_proto__init(&m->opset);
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->model.graph = &m->graph;
  m->graph.name = ob_str(m, "test_graph");
  if (opset > 0) {
    m->opset.domain = ob_str(m, "");
    m->opset.has_version = 1;
    m->opset.version = opset;
    m->opset_list[0] = &m->opset;
    m->model.opset_import = m->opset_list;
    m->model.n_opset_import = 1;
  }
  return m;
}

void ob_free(ob_model *m) {
  if (!m) return;
  for (size_t i = 0; i < m->n_allocs; i++) free(m->allocs[i]);
  free(m->allocs);
  free(m);
}

static Onnx__ValueInfoProto *value_info(ob_model *m, const char *name, int elem, int ndim, const int64_t *dims) {
  Onnx__ValueInfoProto *vi = ob_alloc(m, sizeof *vi);
  onnx__value_info_proto__init(vi);
  vi->name = ob_str(m, name);
  if (elem <= 0) return vi;
  Onnx__TypeProto *tp = ob_alloc(m, sizeof *tp);
  onnx__type_proto__init(tp);
  Onnx__TypeProto__Tensor *tt = ob_alloc(m, sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = elem;
  Onnx__TensorShapeProto *sp = ob_alloc(m, sizeof *sp);
  onnx__tensor_shape_proto__init(sp);
  sp->n_dim = (size_t)ndim;
  sp->dim = ob_alloc(m, (size_t)ndim * sizeof *sp->dim);
  for (int d = 0; d < ndim; d++) {
    Onnx__TensorShapeProto__Dimension *dim = ob_alloc(m, sizeof *dim);
    onnx__tensor_shape_proto__dimension__init(dim);
    if (dims[d] >= 0) {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim->dim_value = dims[d];
    } else {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dim->dim_param = ob_str(m, "N");
    }
    sp->dim[d] = dim;
  }
  tt->shape = sp;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = tp;
  return vi;
}

void ob_input(ob_model *m, const char *name, int elem, int ndim, const int64_t *dims) {
  m->graph.input = (Onnx__ValueInfoProto **)grow(m, (void **)m->graph.input, m->graph.n_input);
  m->graph.input[m->graph.n_input++] = value_info(m, name, elem, ndim, dims);
}

void ob_output(ob_model *m, const char *name) {
  m->graph.output = (Onnx__ValueInfoProto **)grow(m, (void **)m->graph.output, m->graph.n_output);
  m->graph.output[m->graph.n_output++] = value_info(m, name, 0, 0, NULL);
}

static Onnx__TensorProto *tensor(ob_model *m, const char *name, int elem, int ndim, const int64_t *dims) {
  Onnx__TensorProto *t = ob_alloc(m, sizeof *t);
  onnx__tensor_proto__init(t);
  if (name) t->name = ob_str(m, name);
  t->has_data_type = 1;
  t->data_type = elem;
  t->n_dims = (size_t)ndim;
  t->dims = ob_alloc(m, (size_t)ndim * sizeof *t->dims);
  if (ndim) memcpy(t->dims, dims, (size_t)ndim * sizeof *dims);
  return t;
}

static int64_t count(int ndim, const int64_t *dims) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= dims[d];
  return n;
}

static void add_init(ob_model *m, Onnx__TensorProto *t) {
  m->graph.initializer = (Onnx__TensorProto **)grow(m, (void **)m->graph.initializer, m->graph.n_initializer);
  m->graph.initializer[m->graph.n_initializer++] = t;
}

static void set_raw(ob_model *m, Onnx__TensorProto *t, const void *bytes, size_t n) {
  t->has_raw_data = 1;
  t->raw_data.len = n;
  t->raw_data.data = ob_alloc(m, n);
  if (n) memcpy(t->raw_data.data, bytes, n);
}

static Onnx__StringStringEntryProto *kv(ob_model *m, const char *k, const char *v) {
  Onnx__StringStringEntryProto *e = ob_alloc(m, sizeof *e);
  onnx__string_string_entry_proto__init(e);
  e->key = ob_str(m, k);
  e->value = ob_str(m, v);
  return e;
}

void ob_init_f32(ob_model *m, const char *name, int ndim, const int64_t *dims, const float *data, ob_storage how,
                 const char *location, int64_t offset) {
  Onnx__TensorProto *t = tensor(m, name, OB_FLOAT, ndim, dims);
  size_t n = (size_t)count(ndim, dims);
  if (how == OB_RAW) {
    set_raw(m, t, data, n * sizeof(float));
  } else if (how == OB_TYPED) {
    t->n_float_data = n;
    t->float_data = ob_alloc(m, n * sizeof(float));
    memcpy(t->float_data, data, n * sizeof(float));
  } else {
    char buf[32];
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->n_external_data = 3;
    t->external_data = ob_alloc(m, 3 * sizeof *t->external_data);
    t->external_data[0] = kv(m, "location", location);
    snprintf(buf, sizeof buf, "%lld", (long long)offset);
    t->external_data[1] = kv(m, "offset", buf);
    snprintf(buf, sizeof buf, "%zu", n * sizeof(float));
    t->external_data[2] = kv(m, "length", buf);
  }
  add_init(m, t);
}

void ob_init_i64(ob_model *m, const char *name, int ndim, const int64_t *dims, const int64_t *data, ob_storage how) {
  Onnx__TensorProto *t = tensor(m, name, OB_INT64, ndim, dims);
  size_t n = (size_t)count(ndim, dims);
  if (how == OB_RAW) {
    set_raw(m, t, data, n * sizeof(int64_t));
  } else {
    t->n_int64_data = n;
    t->int64_data = ob_alloc(m, n * sizeof(int64_t));
    memcpy(t->int64_data, data, n * sizeof(int64_t));
  }
  add_init(m, t);
}

void ob_init_raw(ob_model *m, const char *name, int elem, int ndim, const int64_t *dims, const void *bytes, size_t n) {
  Onnx__TensorProto *t = tensor(m, name, elem, ndim, dims);
  set_raw(m, t, bytes, n);
  add_init(m, t);
}

void ob_node(ob_model *m, const char *op_type, const char *name, int n_in, const char *const *in, int n_out,
             const char *const *out) {
  Onnx__NodeProto *n = ob_alloc(m, sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = ob_str(m, op_type);
  if (name) n->name = ob_str(m, name);
  n->n_input = (size_t)n_in;
  n->input = ob_alloc(m, (size_t)n_in * sizeof *n->input);
  for (int i = 0; i < n_in; i++) n->input[i] = ob_str(m, in[i]);
  n->n_output = (size_t)n_out;
  n->output = ob_alloc(m, (size_t)n_out * sizeof *n->output);
  for (int i = 0; i < n_out; i++) n->output[i] = ob_str(m, out[i]);
  m->graph.node = (Onnx__NodeProto **)grow(m, (void **)m->graph.node, m->graph.n_node);
  m->graph.node[m->graph.n_node++] = n;
}

static Onnx__AttributeProto *attr(ob_model *m, const char *name, Onnx__AttributeProto__AttributeType type) {
  Onnx__NodeProto *n = m->graph.node[m->graph.n_node - 1];
  Onnx__AttributeProto *a = ob_alloc(m, sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = ob_str(m, name);
  a->has_type = 1;
  a->type = type;
  n->attribute = (Onnx__AttributeProto **)grow(m, (void **)n->attribute, n->n_attribute);
  n->attribute[n->n_attribute++] = a;
  return a;
}

void ob_attr_int(ob_model *m, const char *name, int64_t v) {
  Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}

void ob_attr_float(ob_model *m, const char *name, float v) {
  Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}

void ob_attr_ints(ob_model *m, const char *name, int n, const int64_t *v) {
  Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)n;
  a->ints = ob_alloc(m, (size_t)n * sizeof *a->ints);
  if (n) memcpy(a->ints, v, (size_t)n * sizeof *v);
}

void ob_attr_floats(ob_model *m, const char *name, int n, const float *v) {
  Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  a->n_floats = (size_t)n;
  a->floats = ob_alloc(m, (size_t)n * sizeof *a->floats);
  if (n) memcpy(a->floats, v, (size_t)n * sizeof *v);
}

void ob_attr_string(ob_model *m, const char *name, const char *s) {
  Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.len = strlen(s);
  a->s.data = (uint8_t *)ob_str(m, s);
}

void ob_attr_tensor_f32(ob_model *m, const char *name, int ndim, const int64_t *dims, const float *data) {
  Onnx__AttributeProto *a = attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  a->t = tensor(m, NULL, OB_FLOAT, ndim, dims);
  set_raw(m, a->t, data, (size_t)count(ndim, dims) * sizeof(float));
}

void ob_node_domain(ob_model *m, const char *domain) { m->graph.node[m->graph.n_node - 1]->domain = ob_str(m, domain); }

uint8_t *ob_pack_initializer(const ob_model *m, size_t i, size_t *size) {
  if (i >= m->graph.n_initializer) abort();
  const Onnx__TensorProto *t = m->graph.initializer[i];
  *size = onnx__tensor_proto__get_packed_size(t);
  uint8_t *buf = malloc(*size ? *size : 1);
  if (!buf) abort();
  onnx__tensor_proto__pack(t, buf);
  return buf;
}

uint8_t *ob_pack(const ob_model *m, size_t *size) {
  *size = onnx__model_proto__get_packed_size(&m->model);
  uint8_t *buf = malloc(*size ? *size : 1);
  if (!buf) abort();
  onnx__model_proto__pack(&m->model, buf);
  return buf;
}
