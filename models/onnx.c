/* The ONNX importer: reading the ModelProto (protobuf-c code generated from onnx.proto
 * at build time), opset checks, graph inputs, initializers and outputs, and the node
 * loop that folds constant shape computations or hands nodes to onnx_ops.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/onnx_internal.h"

/* ---- context helpers ---- */

static const char *node_label(const onnx_ctx *c, char *buf, size_t n) {
  if (c->node->name && c->node->name[0]) return c->node->name;
  snprintf(buf, n, "#%d", c->node_index);
  return buf;
}

static tsl_status vrecord(const onnx_ctx *c, tsl_status st, const char *msg) {
  if (!c || !c->node) return tsl_error(st, "onnx: %s", msg);
  char label[32];
  return tsl_error(st, "onnx: node '%s' (%s, opset %lld): %s", node_label(c, label, sizeof label),
                   c->node->op_type ? c->node->op_type : "?", (long long)c->opset, msg);
}

tsl_status onnx_err(const onnx_ctx *c, tsl_status st, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vrecord(c, st, msg);
}

tsl_status onnx_wrap(const onnx_ctx *c, tsl_status st) {
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", tsl_last_error());
  return vrecord(c, st, msg);
}

const Onnx__AttributeProto *onnx_attr(const onnx_ctx *c, const char *name) {
  for (size_t i = 0; i < c->node->n_attribute; i++) {
    const Onnx__AttributeProto *a = c->node->attribute[i];
    if (a && a->name && strcmp(a->name, name) == 0) return a;
  }
  return NULL;
}

/* True when attribute a carries type `t` (old models may leave `type` unset). */
static bool attr_is(const Onnx__AttributeProto *a, Onnx__AttributeProto__AttributeType t) {
  if (a->has_type) return a->type == t;
  switch (t) {
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return a->has_i;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return a->has_f;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return a->has_s;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return a->t != NULL;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return a->n_ints > 0;
  case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return a->n_floats > 0;
  default: return false;
  }
}

tsl_status onnx_attr_int(const onnx_ctx *c, const char *name, int64_t dflt, int64_t *out) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a) {
    *out = dflt;
    return TSL_OK;
  }
  if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT))
    return onnx_err(c, TSL_ERR_INVALID, "attribute '%s' must be an int", name);
  *out = a->i;
  return TSL_OK;
}

tsl_status onnx_attr_float(const onnx_ctx *c, const char *name, double dflt, double *out) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a) {
    *out = dflt;
    return TSL_OK;
  }
  if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT))
    return onnx_err(c, TSL_ERR_INVALID, "attribute '%s' must be a float", name);
  *out = a->f;
  return TSL_OK;
}

tsl_status onnx_attr_ints(const onnx_ctx *c, const char *name, int *n, const int64_t **v) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  *n = 0;
  *v = NULL;
  if (!a) return TSL_OK;
  /* An empty INTS attribute is legal; with `type` unset it cannot be told apart. */
  if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) && !(a->has_type == 0 && a->n_ints == 0))
    return onnx_err(c, TSL_ERR_INVALID, "attribute '%s' must be ints", name);
  if (a->n_ints > 64) return onnx_err(c, TSL_ERR_INVALID, "attribute '%s' has %zu entries", name, a->n_ints);
  *n = (int)a->n_ints;
  *v = a->ints;
  return TSL_OK;
}

tsl_status onnx_attr_string(const onnx_ctx *c, const char *name, const char *dflt, char *buf, size_t n) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a) {
    snprintf(buf, n, "%s", dflt);
    return TSL_OK;
  }
  if (!attr_is(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING))
    return onnx_err(c, TSL_ERR_INVALID, "attribute '%s' must be a string", name);
  size_t len = a->s.len < n - 1 ? a->s.len : n - 1;
  if (len) memcpy(buf, a->s.data, len);
  buf[len] = 0;
  if (memchr(buf, 0, len)) return onnx_err(c, TSL_ERR_INVALID, "attribute '%s' holds a NUL byte", name);
  return TSL_OK;
}

tsl_status onnx_check_attrs(const onnx_ctx *c, const char *const *allowed) {
  for (size_t i = 0; i < c->node->n_attribute; i++) {
    const Onnx__AttributeProto *a = c->node->attribute[i];
    const char *name = a && a->name ? a->name : "";
    bool ok = false;
    for (const char *const *p = allowed; *p && !ok; p++) ok = strcmp(*p, name) == 0;
    if (!ok) return onnx_err(c, TSL_ERR_UNSUPPORTED, "attribute '%s' is not supported", name);
  }
  return TSL_OK;
}

int onnx_n_inputs(const onnx_ctx *c) {
  int n = (int)c->node->n_input;
  while (n > 0 && (!c->node->input[n - 1] || !c->node->input[n - 1][0])) n--;
  return n;
}

tsl_status onnx_input(const onnx_ctx *c, int k, int *id) {
  *id = -1;
  if (k >= (int)c->node->n_input) return TSL_OK;
  const char *name = c->node->input[k];
  if (!name || !name[0]) return TSL_OK;
  int v = tsl_graph_find_value(c->g, name);
  if (v < 0) return onnx_err(c, TSL_ERR_INVALID, "input '%s' is not defined before this node", name);
  *id = v;
  return TSL_OK;
}

tsl_status onnx_required_input(const onnx_ctx *c, int k, int *id) {
  tsl_status st = onnx_input(c, k, id);
  if (st == TSL_OK && *id < 0) return onnx_err(c, TSL_ERR_INVALID, "required input %d is omitted (empty name)", k);
  return st;
}

const tsl_tensor *onnx_const_input(const onnx_ctx *c, int k) {
  int v;
  if (onnx_input(c, k, &v) != TSL_OK || v < 0) return NULL;
  return c->g->values[v].constant;
}

tsl_status onnx_const_ints(const onnx_ctx *c, int k, const char *what, int64_t *v, int max, int *n) {
  int id;
  tsl_status st = onnx_input(c, k, &id);
  if (st != TSL_OK) return st;
  *n = -1;
  if (id < 0) return TSL_OK;
  const tsl_tensor *t = c->g->values[id].constant;
  if (!t) return onnx_err(c, TSL_ERR_UNSUPPORTED, "input '%s' (%s) must be a constant", c->g->values[id].name, what);
  if (t->dtype.code != TSL_DT_INT || (t->dtype.bits != 32 && t->dtype.bits != 64) || t->ndim > 1)
    return onnx_err(c, TSL_ERR_INVALID, "%s must be a 1-D int32/int64 tensor, not %s of rank %d", what,
                    tsl_dtype_str(t->dtype), t->ndim);
  int64_t cnt = tsl_tensor_numel(t);
  if (cnt > max) return onnx_err(c, TSL_ERR_INVALID, "%s has %lld entries (at most %d)", what, (long long)cnt, max);
  for (int64_t i = 0; i < cnt; i++)
    v[i] = t->dtype.bits == 64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
  *n = (int)cnt;
  return TSL_OK;
}

tsl_status onnx_define_const(onnx_ctx *c, int k, tsl_tensor *t) {
  const char *name = k < (int)c->node->n_output ? c->node->output[k] : NULL;
  if (!name || !name[0]) {
    tsl_tensor_free(t);
    return TSL_OK;
  }
  if (tsl_graph_find_value(c->g, name) >= 0) {
    tsl_tensor_free(t);
    return onnx_err(c, TSL_ERR_INVALID, "output '%s' is defined twice", name);
  }
  int id;
  tsl_status st = tsl_graph_add_constant(c->g, name, t, &id);
  return st == TSL_OK ? st : onnx_wrap(c, st);
}

/* ---- the model ---- */

static tsl_status import_inputs(onnx_ctx *c, const Onnx__GraphProto *gp, const tsl_onnx_options *o) {
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi || !vi->name || !vi->name[0]) return onnx_err(c, TSL_ERR_INVALID, "graph input %zu has no name", i);
    int existing = tsl_graph_find_value(c->g, vi->name);
    if (existing >= 0) {
      if (c->g->values[existing].constant) continue; /* an initializer listed as input (IR < 4) */
      return onnx_err(c, TSL_ERR_INVALID, "graph input '%s' is listed twice", vi->name);
    }
    /* value is a oneof: tensor_type is meaningful only when it is the case set. */
    const Onnx__TypeProto__Tensor *tt =
        vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? vi->type->tensor_type : NULL;
    if (!tt || !tt->has_elem_type) return onnx_err(c, TSL_ERR_UNSUPPORTED, "graph input '%s' is not a typed tensor", vi->name);
    tsl_dtype dt;
    tsl_status st = onnx_dtype(tt->elem_type, &dt);
    if (st != TSL_OK) return onnx_err(c, st, "graph input '%s': data type %d", vi->name, (int)tt->elem_type);
    const tsl_tensor *bound = NULL;
    for (int b = 0; o && b < o->n_bindings; b++)
      if (o->bindings[b].name && strcmp(o->bindings[b].name, vi->name) == 0) bound = o->bindings[b].value;
    int64_t shape[TSL_MAX_NDIM];
    int ndim = -1;
    if (tt->shape) {
      if (tt->shape->n_dim > TSL_MAX_NDIM)
        return onnx_err(c, TSL_ERR_UNSUPPORTED, "graph input '%s' has rank %zu", vi->name, tt->shape->n_dim);
      ndim = (int)tt->shape->n_dim;
      for (int d = 0; d < ndim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
          shape[d] = dim->dim_value;
        } else if (bound && d < bound->ndim) {
          shape[d] = bound->shape[d];
        } else {
          return onnx_err(c, TSL_ERR_UNSUPPORTED, "graph input '%s': dimension %d is symbolic ('%s'); tessel needs static shapes",
                          vi->name, d,
                          dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param
                              ? dim->dim_param : "?");
        }
      }
    }
    if (bound) {
      bool match = tsl_dtype_equal(bound->dtype, dt) && (ndim < 0 || ndim == bound->ndim);
      for (int d = 0; match && ndim >= 0 && d < ndim; d++) match = shape[d] == bound->shape[d];
      if (!match) return onnx_err(c, TSL_ERR_INVALID, "binding for input '%s' does not match its declared type", vi->name);
      tsl_tensor *copy;
      st = tsl_tensor_new(bound->dtype, bound->ndim, bound->shape, &copy);
      if (st == TSL_OK) st = tsl_tensor_copy_to(bound, copy->data, tsl_tensor_nbytes(copy));
      int id;
      if (st == TSL_OK) st = tsl_graph_add_constant(c->g, vi->name, copy, &id);
      else tsl_tensor_free(copy);
      if (st != TSL_OK) return onnx_wrap(c, st);
      continue;
    }
    if (ndim < 0) return onnx_err(c, TSL_ERR_UNSUPPORTED, "graph input '%s' has no static shape", vi->name);
    int id;
    st = tsl_graph_add_input(c->g, vi->name, dt, ndim, shape, &id);
    if (st != TSL_OK) return onnx_wrap(c, st);
  }
  return TSL_OK;
}

/* For models declaring an opset below 7: the first opset from which each operator has
 * the definition the handlers implement (its opset-7 form, or a legacy form they map
 * exactly: is_test, the legacy broadcast attributes). Absent: unchanged since opset 1.
 * Source: onnx/docs/Changelog.md. */
static const struct {
  const char *op;
  int since;
} legacy_since[] = {
    {"BatchNormalization", 6}, {"Relu", 6}, {"Clip", 6},   {"Add", 6},     {"Sub", 6},  {"Mul", 6},
    {"Div", 6},                {"Gemm", 6}, {"Dropout", 6}, {"Cast", 6},   {"Reshape", 5}, {"Concat", 4},
    {"Split", 2},              {"Pad", 2},
};

static tsl_status import_node(onnx_ctx *c) {
  const Onnx__NodeProto *n = c->node;
  if (!n->op_type || !n->op_type[0]) return onnx_err(c, TSL_ERR_INVALID, "node without an op type");
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "operator domain '%s' is not supported (only the default ONNX domain)",
                    n->domain);
  for (size_t i = 0; c->opset < TSL_ONNX_OPSET_MIN && i < sizeof legacy_since / sizeof legacy_since[0]; i++)
    if (strcmp(legacy_since[i].op, n->op_type) == 0 && c->opset < legacy_since[i].since)
      return onnx_err(c, TSL_ERR_UNSUPPORTED,
                      "the opset-%lld definition of %s is not supported (accepted from opset %d; tessel targets %d..%d)",
                      (long long)c->opset, n->op_type, legacy_since[i].since, TSL_ONNX_OPSET_MIN, TSL_ONNX_OPSET_MAX);
  if (n->n_output == 0) return onnx_err(c, TSL_ERR_INVALID, "node without outputs");
  bool all_const = true;
  for (size_t k = 0; k < n->n_input; k++) {
    int id;
    tsl_status st = onnx_input(c, (int)k, &id);
    if (st != TSL_OK) return st;
    if (id >= 0 && !c->g->values[id].constant) all_const = false;
  }
  bool foldable = onnx_is_foldable(n->op_type);
  if (foldable && (all_const || strcmp(n->op_type, "Shape") == 0)) return onnx_fold_node(c);
  tsl_status st = onnx_import_op(c);
  if (st != TSL_ERR_NOT_FOUND) return st;
  if (foldable)
    return onnx_err(c, TSL_ERR_UNSUPPORTED,
                    "%s on a non-constant input is not supported (only constant shape computations are folded)",
                    n->op_type);
  return onnx_err(c, TSL_ERR_UNSUPPORTED, "operator %s is not supported", n->op_type);
}

static tsl_status import_model(const Onnx__ModelProto *m, const tsl_onnx_options *o, tsl_graph **out) {
  onnx_ctx c = {0};
  c.base_dir = o ? o->base_dir : NULL;
  bool have_default = false;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *os = m->opset_import[i];
    if (!os) continue;
    if (!os->domain || !os->domain[0] || strcmp(os->domain, "ai.onnx") == 0) {
      have_default = true;
      c.opset = os->version;
    }
  }
  if (!have_default && m->n_opset_import > 0 && m->opset_import[0] && m->opset_import[0]->domain)
    return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: the model imports only domain '%s' (tessel supports the default ONNX domain)",
                     m->opset_import[0]->domain);
  if (!have_default) return tsl_error(TSL_ERR_INVALID, "onnx: the model imports no opset of the default ONNX domain");
  if (c.opset < 1 || c.opset > TSL_ONNX_OPSET_MAX)
    return tsl_error(TSL_ERR_UNSUPPORTED, "onnx: opset %lld of the default domain is not supported (tessel accepts %d..%d)",
                     (long long)c.opset, TSL_ONNX_OPSET_MIN, TSL_ONNX_OPSET_MAX);
  const Onnx__GraphProto *gp = m->graph;
  if (!gp) return tsl_error(TSL_ERR_INVALID, "onnx: the model has no graph");
  tsl_status st = tsl_graph_new(gp->name, &c.g);
  if (st != TSL_OK) return st;
  for (size_t i = 0; i < gp->n_initializer && st == TSL_OK; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    if (!tp || !tp->name || !tp->name[0]) {
      st = tsl_error(TSL_ERR_INVALID, "onnx: initializer %zu has no name", i);
      break;
    }
    if (tsl_graph_find_value(c.g, tp->name) >= 0) {
      st = tsl_error(TSL_ERR_INVALID, "onnx: initializer '%s' is defined twice", tp->name);
      break;
    }
    tsl_tensor *t;
    st = onnx_tensor_decode(tp, c.base_dir, &t);
    int id;
    if (st == TSL_OK) st = tsl_graph_add_constant(c.g, tp->name, t, &id);
  }
  if (st == TSL_OK) st = import_inputs(&c, gp, o);
  for (size_t i = 0; i < gp->n_node && st == TSL_OK; i++) {
    if (!gp->node[i]) continue;
    c.node = gp->node[i];
    c.node_index = (int)i;
    st = import_node(&c);
  }
  c.node = NULL;
  for (size_t i = 0; i < gp->n_output && st == TSL_OK; i++) {
    const char *name = gp->output[i] ? gp->output[i]->name : NULL;
    int v = name ? tsl_graph_find_value(c.g, name) : -1;
    if (v < 0) {
      st = tsl_error(TSL_ERR_INVALID, "onnx: graph output '%s' is never defined", name ? name : "?");
      break;
    }
    st = tsl_graph_add_output(c.g, v);
  }
  if (st == TSL_OK && gp->n_output == 0) st = tsl_error(TSL_ERR_INVALID, "onnx: the graph has no outputs");
  if (st == TSL_OK) st = tsl_graph_prune(c.g);
  if (st == TSL_OK) st = tsl_graph_check(c.g);
  if (st != TSL_OK) {
    tsl_graph_free(c.g);
    return st;
  }
  *out = c.g;
  return TSL_OK;
}

static tsl_status unpack_model(const void *data, size_t size, const char *what, Onnx__ModelProto **m) {
  *m = onnx__model_proto__unpack(NULL, size, data);
  if (!*m)
    return tsl_error(TSL_ERR_INVALID, "onnx: %s is not a valid ONNX model (%zu bytes; protobuf decoding failed: truncated or malformed)",
                     what, size);
  return TSL_OK;
}

tsl_status tsl_graph_load_onnx_memory(const void *data, size_t size, const tsl_onnx_options *opts, tsl_graph **out) {
  if (!data || !out) return tsl_error(TSL_ERR_INVALID, "onnx: load from memory: NULL argument");
  Onnx__ModelProto *m;
  tsl_status st = unpack_model(data, size, "the buffer", &m);
  if (st != TSL_OK) return st;
  st = import_model(m, opts, out);
  onnx__model_proto__free_unpacked(m, NULL);
  return st;
}

static tsl_status read_file(const char *path, void **buf, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return tsl_error(TSL_ERR_IO, "onnx: cannot open '%s': %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    return tsl_error(TSL_ERR_IO, "onnx: '%s' is not a regular file", path);
  }
  *size = (size_t)sb.st_size;
  *buf = malloc(*size ? *size : 1);
  if (!*buf) {
    fclose(f);
    return tsl_error(TSL_ERR_NOMEM, "onnx: %zu bytes for '%s'", *size, path);
  }
  size_t got = fread(*buf, 1, *size, f);
  fclose(f);
  if (got != *size) {
    free(*buf);
    return tsl_error(TSL_ERR_IO, "onnx: reading '%s' failed", path);
  }
  return TSL_OK;
}

tsl_status tsl_graph_load_onnx_opts(const char *path, const tsl_onnx_options *opts, tsl_graph **out) {
  if (!path || !out) return tsl_error(TSL_ERR_INVALID, "onnx: load: NULL argument");
  void *buf;
  size_t size;
  tsl_status st = read_file(path, &buf, &size);
  if (st != TSL_OK) return st;
  char what[1100];
  snprintf(what, sizeof what, "'%s'", path);
  Onnx__ModelProto *m;
  st = unpack_model(buf, size, what, &m);
  free(buf); /* protobuf-c copied every field it keeps */
  if (st != TSL_OK) return st;
  tsl_onnx_options o = opts ? *opts : (tsl_onnx_options){0};
  char *dir = NULL;
  if (!o.base_dir) {
    const char *slash = strrchr(path, '/');
    dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    if (!dir) {
      onnx__model_proto__free_unpacked(m, NULL);
      return tsl_error(TSL_ERR_NOMEM, "onnx: path");
    }
    o.base_dir = dir;
  }
  st = import_model(m, &o, out);
  onnx__model_proto__free_unpacked(m, NULL);
  free(dir);
  if (st != TSL_OK && st != TSL_ERR_NOMEM) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    return tsl_error(st, "%s [%s]", msg, path);
  }
  return st;
}

tsl_status tsl_graph_load_onnx(const char *path, tsl_graph **out) { return tsl_graph_load_onnx_opts(path, NULL, out); }

tsl_status tsl_onnx_inspect(const char *path, tsl_onnx_info *info) {
  if (!path || !info) return tsl_error(TSL_ERR_INVALID, "onnx: inspect: NULL argument");
  void *buf;
  size_t size;
  tsl_status st = read_file(path, &buf, &size);
  if (st != TSL_OK) return st;
  char what[1100];
  snprintf(what, sizeof what, "'%s'", path);
  Onnx__ModelProto *m;
  st = unpack_model(buf, size, what, &m);
  free(buf);
  if (st != TSL_OK) return st;
  memset(info, 0, sizeof *info);
  info->ir_version = m->ir_version;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *os = m->opset_import[i];
    if (os && (!os->domain || !os->domain[0] || strcmp(os->domain, "ai.onnx") == 0)) info->opset = os->version;
  }
  const Onnx__GraphProto *gp = m->graph;
  if (gp) {
    info->n_nodes = (int)gp->n_node;
    info->n_initializers = (int)gp->n_initializer;
    for (size_t i = 0; i < gp->n_node; i++) {
      const char *op = gp->node[i] && gp->node[i]->op_type ? gp->node[i]->op_type : "";
      int k = 0;
      while (k < info->n_op_types && strncmp(info->op_types[k].name, op, sizeof info->op_types[k].name - 1) != 0) k++;
      if (k == info->n_op_types) {
        if (k == TSL_ONNX_INFO_MAX_OPS) continue;
        snprintf(info->op_types[k].name, sizeof info->op_types[k].name, "%s", op);
        info->n_op_types++;
      }
      info->op_types[k].count++;
    }
    for (size_t i = 0; i < gp->n_input; i++) {
      const char *name = gp->input[i] && gp->input[i]->name ? gp->input[i]->name : "";
      bool is_init = false;
      for (size_t j = 0; j < gp->n_initializer && !is_init; j++)
        is_init = gp->initializer[j] && gp->initializer[j]->name && strcmp(gp->initializer[j]->name, name) == 0;
      if (is_init) continue;
      if (info->n_inputs < TSL_ONNX_INFO_MAX_INPUTS)
        snprintf(info->inputs[info->n_inputs], sizeof info->inputs[0], "%s", name);
      info->n_inputs++;
    }
    if (info->n_inputs > TSL_ONNX_INFO_MAX_INPUTS) info->n_inputs = TSL_ONNX_INFO_MAX_INPUTS;
  }
  onnx__model_proto__free_unpacked(m, NULL);
  return TSL_OK;
}

int tsl_onnx_info_count(const tsl_onnx_info *info, const char *op_type) {
  for (int k = 0; info && op_type && k < info->n_op_types; k++)
    if (strcmp(info->op_types[k].name, op_type) == 0) return info->op_types[k].count;
  return 0;
}
