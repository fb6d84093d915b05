/* Shape inference and attribute checking for every operator of the graph, following
 * the ONNX operator specification (docs/Operators.md) in the canonical form described
 * in graph.h. Pool output sizes with ceil_mode follow PyTorch's rule (also ONNX
 * Runtime's): the last window must start inside the input or its top/left padding. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "models/graph.h"
#include "models/node_kernels_binary.h"
#include "models/shape_infer_internal.h"
#include "ops/conv2d/conv2d_layer.h"
#include "ops/nn/activation.h"

/* Shapes larger than this many elements are refused (graph.h): with zeros counted as 1,
 * so an empty input's other extents stay bounded and products of them cannot overflow. */
#define MAX_NUMEL TSL_GRAPH_MAX_NUMEL

typedef struct shape {
  int ndim;
  int64_t d[TSL_MAX_NDIM];
} shape;

static tsl_status node_err(const tsl_graph *g, int node, tsl_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static tsl_status node_err(const tsl_graph *g, int node, tsl_status st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const tsl_node *n = &g->nodes[node];
  return tsl_error(st, "%s '%s': %s", tsl_op_name(n->op), n->name, msg);
}

static shape in_shape(const tsl_graph *g, const tsl_node *n, int k) {
  shape s = {0, {0}};
  const tsl_value *v = &g->values[n->inputs[k]];
  s.ndim = v->ndim;
  for (int d = 0; d < v->ndim; d++) s.d[d] = v->shape[d];
  return s;
}

static tsl_status set_output(tsl_graph *g, int node, int k, const shape *s) {
  for (int d = 0; d < s->ndim; d++)
    if (s->d[d] < 0) return node_err(g, node, TSL_ERR_INVALID, "output extent %lld on axis %d",
                                     (long long)s->d[d], d);
  if (tsl_shape_check("output", s->ndim, s->d, MAX_NUMEL, NULL) != TSL_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tsl_last_error());
    return node_err(g, node, TSL_ERR_INVALID, "%s", msg);
  }
  tsl_value *v = &g->values[g->nodes[node].outputs[k]];
  v->dtype = TSL_DTYPE_F32;
  v->ndim = s->ndim;
  memset(v->shape, 0, sizeof v->shape);
  for (int d = 0; d < s->ndim; d++) v->shape[d] = s->d[d];
  return TSL_OK;
}

static void shape_str(const shape *s, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  len += (size_t)snprintf(buf + len, n - len, "[");
  for (int d = 0; d < s->ndim && len < n; d++)
    len += (size_t)snprintf(buf + len, n - len, d ? "x%lld" : "%lld", (long long)s->d[d]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

static bool one_of(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return true;
  return false;
}

/* Normalizes axis `a` of a rank-r tensor into [0, r); -1 if out of range. */
static int norm_axis(int64_t a, int r) {
  if (a < -r || a >= r) return -1;
  return (int)(a < 0 ? a + r : a);
}

/* Checks that every attribute named in `names` has the kind in `kinds`. */
static tsl_status check_kinds(const tsl_graph *g, int node, const char *const *names,
                              const tsl_attr_kind *kinds, int n) {
  static const char *const kind_names[] = {"int", "float", "ints", "floats", "string", "tensor"};
  for (int i = 0; i < n; i++) {
    const tsl_attr *a = tsl_node_attr(&g->nodes[node], names[i]);
    if (a && a->kind != kinds[i])
      return node_err(g, node, TSL_ERR_INVALID, "attribute '%s' must be %s, not %s", names[i],
                      kind_names[kinds[i]], kind_names[a->kind]);
  }
  return TSL_OK;
}

tsl_status tsl_node_activation(const tsl_graph *g, const tsl_node *node, const tsl_activation **fn, double *attrs) {
  int id = (int)(node - g->nodes);
  if (node->op != TSL_OP_ACTIVATION) return node_err(g, id, TSL_ERR_INVALID, "not a tsl.Activation node");
  const tsl_attr *f = tsl_node_attr(node, "function");
  if (!f || f->kind != TSL_ATTR_STRING)
    return node_err(g, id, TSL_ERR_INVALID, "needs a string attribute 'function' (an ONNX operator type)");
  const tsl_activation *a = tsl_activation_find(f->s);
  if (!a) return node_err(g, id, TSL_ERR_UNSUPPORTED, "no activation function '%s' (ops/nn/activation.h)", f->s);
  for (int i = 0; i < a->nattrs; i++) {
    const tsl_attr *v = tsl_node_attr(node, a->attr[i]);
    if (v && v->kind != TSL_ATTR_FLOAT)
      return node_err(g, id, TSL_ERR_INVALID, "%s: attribute '%s' must be a float", a->onnx_op, a->attr[i]);
    attrs[i] = v ? v->f : a->attr_default[i];
  }
  *fn = a;
  return TSL_OK;
}

/* Reads an ints attribute that must have exactly `want` entries; absent leaves `out`. */
static tsl_status ints_exact(const tsl_graph *g, int node, const char *name, int want, int64_t *out) {
  int n;
  const int64_t *v = tsl_node_attr_ints(&g->nodes[node], name, &n);
  if (!v) return TSL_OK;
  if (n != want)
    return node_err(g, node, TSL_ERR_INVALID, "attribute '%s' has %d entries, expected %d", name, n,
                    want);
  for (int i = 0; i < n; i++) out[i] = v[i];
  return TSL_OK;
}

tsl_status tsl_node_conv2d_params(const tsl_graph *g, const tsl_node *node, tsl_conv2d_params *p) {
  if (!g || !node || !p) return tsl_error(TSL_ERR_INVALID, "tsl_node_conv2d_params: NULL argument");
  int id = (int)(node - g->nodes);
  if (node->op != TSL_OP_CONV && node->op != TSL_OP_MAX_POOL && node->op != TSL_OP_AVERAGE_POOL)
    return node_err(g, id, TSL_ERR_INVALID, "not a Conv or pool node");
  static const char *const names[] = {"kernel_shape", "strides", "pads", "dilations", "group",
                                      "ceil_mode", "count_include_pad"};
  static const tsl_attr_kind kinds[] = {TSL_ATTR_INTS, TSL_ATTR_INTS, TSL_ATTR_INTS, TSL_ATTR_INTS,
                                        TSL_ATTR_INT, TSL_ATTR_INT, TSL_ATTR_INT};
  tsl_status st = check_kinds(g, id, names, kinds, 7);
  if (st != TSL_OK) return st;
  memset(p, 0, sizeof *p);
  p->kernel[0] = p->kernel[1] = -1;
  p->strides[0] = p->strides[1] = 1;
  p->dilations[0] = p->dilations[1] = 1;
  p->group = 1;
  if ((st = ints_exact(g, id, "kernel_shape", 2, p->kernel)) != TSL_OK) return st;
  if ((st = ints_exact(g, id, "strides", 2, p->strides)) != TSL_OK) return st;
  if ((st = ints_exact(g, id, "pads", 4, p->pads)) != TSL_OK) return st;
  if ((st = ints_exact(g, id, "dilations", 2, p->dilations)) != TSL_OK) return st;
  if (node->op == TSL_OP_CONV) {
    p->group = tsl_node_attr_int(node, "group", 1);
    const tsl_value *w = node->n_inputs > 1 && node->inputs[1] >= 0 ? &g->values[node->inputs[1]] : NULL;
    if (p->kernel[0] < 0 && w && w->ndim == 4) {
      p->kernel[0] = w->shape[2];
      p->kernel[1] = w->shape[3];
    }
  } else {
    if (!tsl_node_attr(node, "kernel_shape"))
      return node_err(g, id, TSL_ERR_INVALID, "attribute 'kernel_shape' is required");
    int64_t cm = tsl_node_attr_int(node, "ceil_mode", 0);
    int64_t cip = tsl_node_attr_int(node, "count_include_pad", 0);
    if ((cm != 0 && cm != 1) || (cip != 0 && cip != 1))
      return node_err(g, id, TSL_ERR_INVALID, "ceil_mode and count_include_pad must be 0 or 1");
    p->ceil_mode = cm;
    p->count_include_pad = cip;
    if (node->op == TSL_OP_AVERAGE_POOL && tsl_node_attr(node, "dilations")) {
      if (p->dilations[0] != 1 || p->dilations[1] != 1)
        return node_err(g, id, TSL_ERR_UNSUPPORTED, "dilated AveragePool is not supported");
    }
  }
  if (p->group < 1 || p->group > INT32_MAX)
    return node_err(g, id, TSL_ERR_INVALID, "group %lld (must be in 1..2^31)", (long long)p->group);
  for (int i = 0; i < 2; i++) {
    if (p->kernel[i] < 1 && !(node->op == TSL_OP_CONV && p->kernel[i] == -1))
      return node_err(g, id, TSL_ERR_INVALID, "kernel extent %lld on axis %d (must be >= 1)",
                      (long long)p->kernel[i], i);
    if (p->strides[i] < 1)
      return node_err(g, id, TSL_ERR_INVALID, "stride %lld on axis %d (must be >= 1)",
                      (long long)p->strides[i], i);
    if (p->dilations[i] < 1)
      return node_err(g, id, TSL_ERR_INVALID, "dilation %lld on axis %d (must be >= 1)",
                      (long long)p->dilations[i], i);
    if (p->kernel[i] > INT32_MAX || p->strides[i] > INT32_MAX || p->dilations[i] > INT32_MAX)
      return node_err(g, id, TSL_ERR_INVALID, "kernel, stride or dilation beyond 2^31 on axis %d", i);
  }
  for (int i = 0; i < 4; i++)
    if (p->pads[i] < 0 || p->pads[i] > INT32_MAX)
      return node_err(g, id, TSL_ERR_INVALID, "pad %lld at position %d (must be in 0..2^31)",
                      (long long)p->pads[i], i);
  return TSL_OK;
}

/* Does some window of an axis hold no input tap? Window o reads input positions
 * o*stride - pad_begin + j*dil, j < k, of [0, in); out windows. Only windows that start
 * in the leading padding or past the input can miss it: one starting inside holds its
 * first tap. *unknown is set when the leading windows are too many to check
 * (pathological dilations; the caller refuses them). */
static bool window_in_padding_only(int64_t in, int64_t pad_begin, int64_t k, int64_t stride, int64_t dil, int64_t out,
                                   bool *unknown) {
  *unknown = false;
  if (out < 1) return false;
  if ((out - 1) * stride - pad_begin >= in) return true; /* the last window starts past the input */
  if (pad_begin > (k - 1) * dil) return true;            /* the first window's last tap is still padding */
  /* the first tap at or past 0 is the only candidate; with in >= dil it is always inside */
  if (in >= dil) return false;
  enum { MAX_CHECKED = 1 << 22 };
  for (int64_t o = 0, n = 0; o < out; o++, n++) {
    int64_t start = o * stride - pad_begin;
    if (start >= 0) break;
    if (n >= MAX_CHECKED) {
      *unknown = true;
      return false;
    }
    int64_t j = (-start + dil - 1) / dil; /* first tap >= 0 */
    if (j >= k || start + j * dil >= in) return true;
  }
  return false;
}

static tsl_status infer_window(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0);
  char buf[128];
  if (x.ndim != 4)
    return node_err(g, node, TSL_ERR_UNSUPPORTED,
                    "only 2-D %s on 4-D NCHW data is supported, input has rank %d",
                    n->op == TSL_OP_CONV ? "convolution" : "pooling", x.ndim);
  tsl_conv2d_params p;
  tsl_status st = tsl_node_conv2d_params(g, n, &p);
  if (st != TSL_OK) return st;
  shape y = {4, {x.d[0], x.d[1], 0, 0}};
  if (n->op == TSL_OP_CONV) {
    shape w = in_shape(g, n, 1);
    if (w.ndim != 4) {
      shape_str(&w, buf, sizeof buf);
      return node_err(g, node, TSL_ERR_INVALID, "weight %s must be 4-D [M, C/group, kH, kW]", buf);
    }
    if (p.kernel[0] != w.d[2] || p.kernel[1] != w.d[3])
      return node_err(g, node, TSL_ERR_INVALID, "kernel_shape %lldx%lld differs from the weight's %lldx%lld",
                      (long long)p.kernel[0], (long long)p.kernel[1], (long long)w.d[2], (long long)w.d[3]);
    if (w.d[2] < 1 || w.d[3] < 1 || w.d[0] < 1)
      return node_err(g, node, TSL_ERR_INVALID, "empty weight");
    if (x.d[1] != w.d[1] * p.group)
      return node_err(g, node, TSL_ERR_INVALID,
                      "input has %lld channels but weight expects %lld x group %lld",
                      (long long)x.d[1], (long long)w.d[1], (long long)p.group);
    if (w.d[0] % p.group != 0)
      return node_err(g, node, TSL_ERR_INVALID, "%lld output channels not divisible by group %lld",
                      (long long)w.d[0], (long long)p.group);
    if (n->n_inputs > 2 && n->inputs[2] >= 0) {
      shape b = in_shape(g, n, 2);
      if (b.ndim != 1 || b.d[0] != w.d[0]) {
        shape_str(&b, buf, sizeof buf);
        return node_err(g, node, TSL_ERR_INVALID, "bias %s must be [%lld]", buf, (long long)w.d[0]);
      }
    }
    y.d[1] = w.d[0];
  }
  for (int i = 0; i < 2; i++) {
    if (tsl_window_out_extent(x.d[2 + i], p.pads[i], p.pads[i + 2], p.kernel[i], p.strides[i], p.dilations[i],
                              p.ceil_mode, &y.d[2 + i]) != TSL_OK)
      return node_err(g, node, TSL_ERR_INVALID,
                      "window of %lld (dilation %lld) does not fit input extent %lld + pads %lld+%lld on axis %d",
                      (long long)p.kernel[i], (long long)p.dilations[i], (long long)x.d[2 + i],
                      (long long)p.pads[i], (long long)p.pads[i + 2], 2 + i);
    /* A pooling window entirely in padding has no defined max (nor an average over the
     * input alone); an average that counts the padding is defined for every window. */
    bool unknown = false;
    if (n->op != TSL_OP_CONV && !(n->op == TSL_OP_AVERAGE_POOL && p.count_include_pad) &&
        window_in_padding_only(x.d[2 + i], p.pads[i], p.kernel[i], p.strides[i], p.dilations[i], y.d[2 + i],
                               &unknown))
      return node_err(g, node, TSL_ERR_UNSUPPORTED,
                      "a window entirely in padding on axis %d (input %lld, kernel %lld, dilation %lld, stride %lld, "
                      "pads %lld+%lld) is not supported",
                      2 + i, (long long)x.d[2 + i], (long long)p.kernel[i], (long long)p.dilations[i],
                      (long long)p.strides[i], (long long)p.pads[i], (long long)p.pads[i + 2]);
    if (unknown)
      return node_err(g, node, TSL_ERR_UNSUPPORTED,
                      "over 2^22 windows start in the padding on axis %d with a dilation of %lld beyond the input "
                      "extent %lld: not checked, not supported",
                      2 + i, (long long)p.dilations[i], (long long)x.d[2 + i]);
  }
  return set_output(g, node, 0, &y);
}

/* Multidirectional (numpy) broadcast of a and b into out. */
static bool broadcast(const shape *a, const shape *b, shape *out) {
  int r = a->ndim > b->ndim ? a->ndim : b->ndim;
  out->ndim = r;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - a->ndim), ib = i - (r - b->ndim);
    int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out->d[i] = da == 1 ? db : da;
  }
  return true;
}

static tsl_status infer_binary(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape a = in_shape(g, n, 0), b = in_shape(g, n, 1), y;
  if (!broadcast(&a, &b, &y)) {
    char sa[128], sb[128];
    shape_str(&a, sa, sizeof sa);
    shape_str(&b, sb, sizeof sb);
    return node_err(g, node, TSL_ERR_INVALID, "shapes %s and %s do not broadcast", sa, sb);
  }
  return set_output(g, node, 0, &y);
}

static tsl_status infer_gemm(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  static const char *const names[] = {"alpha", "beta", "transA", "transB"};
  static const tsl_attr_kind kinds[] = {TSL_ATTR_FLOAT, TSL_ATTR_FLOAT, TSL_ATTR_INT, TSL_ATTR_INT};
  tsl_status st = check_kinds(g, node, names, kinds, 4);
  if (st != TSL_OK) return st;
  shape a = in_shape(g, n, 0), b = in_shape(g, n, 1);
  if (a.ndim != 2 || b.ndim != 2)
    return node_err(g, node, TSL_ERR_INVALID, "A and B must be 2-D (ranks %d, %d)", a.ndim, b.ndim);
  bool ta = tsl_node_attr_int(n, "transA", 0) != 0, tb = tsl_node_attr_int(n, "transB", 0) != 0;
  int64_t M = ta ? a.d[1] : a.d[0], K = ta ? a.d[0] : a.d[1];
  int64_t Kb = tb ? b.d[1] : b.d[0], N = tb ? b.d[0] : b.d[1];
  if (K != Kb)
    return node_err(g, node, TSL_ERR_INVALID, "inner extents differ: A gives %lld, B gives %lld",
                    (long long)K, (long long)Kb);
  shape y = {2, {M, N}};
  if (n->n_inputs > 2 && n->inputs[2] >= 0) {
    shape c = in_shape(g, n, 2), bc;
    if (c.ndim > 2 || !broadcast(&c, &y, &bc) || bc.d[0] != M || bc.d[1] != N) {
      char sc[128];
      shape_str(&c, sc, sizeof sc);
      return node_err(g, node, TSL_ERR_INVALID, "C %s does not broadcast to [%lldx%lld]", sc,
                      (long long)M, (long long)N);
    }
  }
  return set_output(g, node, 0, &y);
}

static tsl_status infer_matmul(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape a = in_shape(g, n, 0), b = in_shape(g, n, 1);
  if (a.ndim < 1 || b.ndim < 1)
    return node_err(g, node, TSL_ERR_INVALID, "MatMul operands must have rank >= 1");
  shape a2 = a, b2 = b;
  if (a.ndim == 1) a2 = (shape){2, {1, a.d[0]}};
  if (b.ndim == 1) b2 = (shape){2, {b.d[0], 1}};
  if (a2.d[a2.ndim - 1] != b2.d[b2.ndim - 2])
    return node_err(g, node, TSL_ERR_INVALID, "inner extents differ: %lld vs %lld",
                    (long long)a2.d[a2.ndim - 1], (long long)b2.d[b2.ndim - 2]);
  shape ba = {a2.ndim - 2, {0}}, bb = {b2.ndim - 2, {0}}, y;
  for (int i = 0; i < ba.ndim; i++) ba.d[i] = a2.d[i];
  for (int i = 0; i < bb.ndim; i++) bb.d[i] = b2.d[i];
  if (!broadcast(&ba, &bb, &y)) return node_err(g, node, TSL_ERR_INVALID, "batch dimensions do not broadcast");
  if (a.ndim > 1) y.d[y.ndim++] = a2.d[a2.ndim - 2];
  if (b.ndim > 1) y.d[y.ndim++] = b2.d[b2.ndim - 1];
  return set_output(g, node, 0, &y);
}

static tsl_status infer_concat(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  const tsl_attr *a = tsl_node_attr(n, "axis");
  if (!a || a->kind != TSL_ATTR_INT) return node_err(g, node, TSL_ERR_INVALID, "int attribute 'axis' is required");
  shape y = in_shape(g, n, 0);
  int axis = norm_axis(a->i, y.ndim);
  if (axis < 0) return node_err(g, node, TSL_ERR_INVALID, "axis %lld out of range for rank %d", (long long)a->i, y.ndim);
  for (int k = 1; k < n->n_inputs; k++) {
    shape s = in_shape(g, n, k);
    bool ok = s.ndim == y.ndim;
    for (int d = 0; ok && d < s.ndim; d++) ok = d == axis || s.d[d] == y.d[d];
    if (!ok) {
      char s0[128], sk[128];
      shape_str(&y, s0, sizeof s0);
      shape_str(&s, sk, sizeof sk);
      return node_err(g, node, TSL_ERR_INVALID, "input %d %s does not match %s outside axis %d", k, sk, s0, axis);
    }
    /* each extent is at most MAX_NUMEL (a checked value), so the sum is checked before it can overflow */
    if (s.d[axis] > MAX_NUMEL - y.d[axis])
      return node_err(g, node, TSL_ERR_INVALID, "the inputs' extents on axis %d add up past 2^40", axis);
    y.d[axis] += s.d[axis];
  }
  return set_output(g, node, 0, &y);
}

static tsl_status infer_reshape(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0), y;
  int ns;
  const int64_t *s = tsl_node_attr_ints(n, "shape", &ns);
  if (!s) return node_err(g, node, TSL_ERR_INVALID, "ints attribute 'shape' is required");
  if (ns > TSL_MAX_NDIM) return node_err(g, node, TSL_ERR_UNSUPPORTED, "target rank %d > %d", ns, TSL_MAX_NDIM);
  bool allowzero = tsl_node_attr_int(n, "allowzero", 0) != 0;
  int64_t numel = 1, known = 1;
  int infer_at = -1;
  for (int d = 0; d < x.ndim; d++) numel *= x.d[d];
  y.ndim = ns;
  for (int d = 0; d < ns; d++) {
    int64_t v = s[d];
    if (v == 0 && !allowzero) {
      if (d >= x.ndim) return node_err(g, node, TSL_ERR_INVALID, "shape[%d] = 0 copies a dimension the input lacks", d);
      v = x.d[d];
    }
    if (v == -1) {
      if (infer_at >= 0) return node_err(g, node, TSL_ERR_INVALID, "more than one -1 in shape");
      infer_at = d;
      continue;
    }
    if (v < 0) return node_err(g, node, TSL_ERR_INVALID, "shape[%d] = %lld", d, (long long)v);
    if (v > 0 && known > MAX_NUMEL / v) return node_err(g, node, TSL_ERR_INVALID, "target shape too large");
    known *= v;
    y.d[d] = v;
  }
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      return node_err(g, node, TSL_ERR_INVALID, "cannot infer -1: %lld elements over %lld", (long long)numel,
                      (long long)known);
    y.d[infer_at] = numel / known;
  } else if (known != numel) {
    return node_err(g, node, TSL_ERR_INVALID, "%lld elements cannot take a shape of %lld", (long long)numel,
                    (long long)known);
  }
  return set_output(g, node, 0, &y);
}

static tsl_status infer_slice(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0), y = x;
  int ns, ne, na, nst;
  const int64_t *starts = tsl_node_attr_ints(n, "starts", &ns), *ends = tsl_node_attr_ints(n, "ends", &ne);
  const int64_t *axes = tsl_node_attr_ints(n, "axes", &na), *steps = tsl_node_attr_ints(n, "steps", &nst);
  if (!starts || !ends || ns != ne)
    return node_err(g, node, TSL_ERR_INVALID, "'starts' and 'ends' are required and of equal length");
  if ((axes && na != ns) || (steps && nst != ns))
    return node_err(g, node, TSL_ERR_INVALID, "'axes' and 'steps' must have as many entries as 'starts'");
  bool seen[TSL_MAX_NDIM] = {0};
  for (int i = 0; i < ns; i++) {
    int ax = axes ? norm_axis(axes[i], x.ndim) : (i < x.ndim ? i : -1);
    if (ax < 0 || seen[ax]) return node_err(g, node, TSL_ERR_INVALID, "axis entry %d invalid or repeated", i);
    seen[ax] = true;
    int64_t step = steps ? steps[i] : 1, dim = x.d[ax], st = starts[i], en = ends[i];
    if (step == 0) return node_err(g, node, TSL_ERR_INVALID, "step 0 on axis %d", ax);
    /* Extents are below 2^40, so any larger step takes one element: clamping keeps the
     * arithmetic below clear of overflow without changing the result. */
    if (step > MAX_NUMEL) step = MAX_NUMEL;
    if (step < -MAX_NUMEL) step = -MAX_NUMEL;
    if (st < 0) st += dim;
    if (en < 0) en += dim;
    int64_t len;
    if (step > 0) {
      st = st < 0 ? 0 : st > dim ? dim : st;
      en = en < 0 ? 0 : en > dim ? dim : en;
      len = en > st ? (en - st - 1) / step + 1 : 0;
    } else {
      st = st < 0 ? 0 : st > dim - 1 ? dim - 1 : st;
      en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
      len = st > en ? (st - en - 1) / (-step) + 1 : 0;
    }
    y.d[ax] = len;
  }
  return set_output(g, node, 0, &y);
}

static tsl_status infer_split(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0);
  int axis = norm_axis(tsl_node_attr_int(n, "axis", 0), x.ndim);
  if (axis < 0) return node_err(g, node, TSL_ERR_INVALID, "axis out of range for rank %d", x.ndim);
  int ns;
  const int64_t *split = tsl_node_attr_ints(n, "split", &ns);
  if (split && ns != n->n_outputs)
    return node_err(g, node, TSL_ERR_INVALID, "'split' has %d entries for %d outputs", ns, n->n_outputs);
  if (!split && x.d[axis] % n->n_outputs != 0)
    return node_err(g, node, TSL_ERR_INVALID, "extent %lld does not split into %d equal parts",
                    (long long)x.d[axis], n->n_outputs);
  int64_t sum = 0;
  for (int k = 0; k < n->n_outputs; k++) {
    int64_t part = split ? split[k] : x.d[axis] / n->n_outputs;
    if (part < 0 || part > x.d[axis]) return node_err(g, node, TSL_ERR_INVALID, "split entry %lld", (long long)part);
    sum += part;
  }
  if (sum != x.d[axis])
    return node_err(g, node, TSL_ERR_INVALID, "split sums to %lld, extent is %lld", (long long)sum,
                    (long long)x.d[axis]);
  for (int k = 0; k < n->n_outputs; k++) {
    shape y = x;
    y.d[axis] = split ? split[k] : x.d[axis] / n->n_outputs;
    tsl_status st = set_output(g, node, k, &y);
    if (st != TSL_OK) return st;
  }
  return TSL_OK;
}

static tsl_status infer_pad(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0), y = x;
  const tsl_attr *mode = tsl_node_attr(n, "mode");
  static const char *const modes[] = {"constant", "reflect", "edge", "wrap", NULL};
  if (mode && (mode->kind != TSL_ATTR_STRING || !one_of(mode->s, modes)))
    return node_err(g, node, TSL_ERR_UNSUPPORTED, "mode \"%s\" (constant, reflect, edge and wrap are supported)",
                    mode->kind == TSL_ATTR_STRING ? mode->s : "?");
  bool reads = mode && strcmp(mode->s, "constant") != 0; /* every output element reads the input */
  int np;
  const int64_t *pads = tsl_node_attr_ints(n, "pads", &np);
  if (!pads || np != 2 * x.ndim)
    return node_err(g, node, TSL_ERR_INVALID, "'pads' must have %d entries", 2 * x.ndim);
  for (int d = 0; d < x.ndim; d++) {
    if (pads[d] < -x.d[d] || pads[d] > MAX_NUMEL || pads[d + x.ndim] < -x.d[d] || pads[d + x.ndim] > MAX_NUMEL)
      return node_err(g, node, TSL_ERR_INVALID, "pads on axis %d out of range", d);
    y.d[d] = x.d[d] + pads[d] + pads[d + x.ndim];
    if (y.d[d] < 0) return node_err(g, node, TSL_ERR_INVALID, "pads crop axis %d below zero", d);
    int64_t kept = x.d[d] - (pads[d] < 0 ? -pads[d] : 0) - (pads[d + x.ndim] < 0 ? -pads[d + x.ndim] : 0);
    if (reads && kept < 1 && y.d[d] > 0)
      return node_err(g, node, TSL_ERR_INVALID, "mode \"%s\" pads axis %d from nothing (the crop leaves %lld)", mode->s,
                      d, (long long)kept);
  }
  return set_output(g, node, 0, &y);
}

/* Pow: X and Y broadcast, or X alone with a float 'exponent'. */
static tsl_status infer_pow(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  if (n->n_inputs == 2) return infer_binary(g, node);
  const tsl_attr *e = tsl_node_attr(n, "exponent");
  if (!e || e->kind != TSL_ATTR_FLOAT)
    return node_err(g, node, TSL_ERR_INVALID, "one input needs the float attribute 'exponent'");
  shape x = in_shape(g, n, 0);
  return set_output(g, node, 0, &x);
}

tsl_status tsl_infer_error(const tsl_graph *g, int node, tsl_status st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return node_err(g, node, st, "%s", msg);
}

tsl_status tsl_infer_set_output(tsl_graph *g, int node, int k, int ndim, const int64_t *dims) {
  shape s = {ndim, {0}};
  for (int d = 0; d < ndim; d++) s.d[d] = dims[d];
  return set_output(g, node, k, &s);
}

/* Resize: the output extents are "sizes" (graph.h); the rest is checked here. */
static tsl_status infer_resize(tsl_graph *g, int node) {
  static const char *const names[] = {"sizes", "scales", "mode", "coordinate_transformation_mode", "nearest_mode"};
  static const tsl_attr_kind kinds[] = {TSL_ATTR_INTS, TSL_ATTR_FLOATS, TSL_ATTR_STRING, TSL_ATTR_STRING,
                                        TSL_ATTR_STRING};
  static const char *const modes[] = {"nearest", "linear", NULL};
  static const char *const coords[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",
                                       "asymmetric",           "tf_half_pixel_for_nn", "half_pixel_symmetric",
                                       NULL};
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple", NULL};
  tsl_status st = check_kinds(g, node, names, kinds, 5);
  if (st != TSL_OK) return st;
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0), y = x;
  const tsl_attr *sizes = tsl_node_attr(n, "sizes"), *scales = tsl_node_attr(n, "scales");
  if (!sizes || sizes->n != x.ndim)
    return node_err(g, node, TSL_ERR_INVALID, "'sizes' must give all %d output extents", x.ndim);
  if (scales && scales->n != x.ndim) return node_err(g, node, TSL_ERR_INVALID, "'scales' must have %d entries", x.ndim);
  for (int d = 0; d < x.ndim; d++) {
    y.d[d] = sizes->ints[d];
    if (scales && !(scales->floats[d] > 0.0 && isfinite(scales->floats[d])))
      return node_err(g, node, TSL_ERR_INVALID, "scale %g on axis %d", scales->floats[d], d);
  }
  const char *m = tsl_node_attr(n, "mode") ? tsl_node_attr(n, "mode")->s : "nearest";
  const char *cm = tsl_node_attr(n, "coordinate_transformation_mode") ? tsl_node_attr(n, "coordinate_transformation_mode")->s
                                                                      : "half_pixel";
  const char *nm = tsl_node_attr(n, "nearest_mode") ? tsl_node_attr(n, "nearest_mode")->s : "round_prefer_floor";
  if (!one_of(m, modes)) return node_err(g, node, TSL_ERR_UNSUPPORTED, "mode '%s' (nearest and linear are supported)", m);
  if (!one_of(cm, coords))
    return node_err(g, node, TSL_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported", cm);
  if (!one_of(nm, nearests)) return node_err(g, node, TSL_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", nm);
  return set_output(g, node, 0, &y);
}

/* PRelu: the slope broadcasts to X, which keeps its shape. */
static tsl_status infer_prelu(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0), s = in_shape(g, n, 1), y;
  bool same = broadcast(&x, &s, &y) && y.ndim == x.ndim;
  for (int d = 0; same && d < x.ndim; d++) same = y.d[d] == x.d[d];
  if (!same) {
    char sx[128], ss[128];
    shape_str(&x, sx, sizeof sx);
    shape_str(&s, ss, sizeof ss);
    return node_err(g, node, TSL_ERR_INVALID, "slope %s does not broadcast to X %s", ss, sx);
  }
  return set_output(g, node, 0, &x);
}

static tsl_status infer_misc(tsl_graph *g, int node) {
  const tsl_node *n = &g->nodes[node];
  shape x = in_shape(g, n, 0), y = x;
  switch (n->op) {
  case TSL_OP_BATCH_NORM: {
    if (x.ndim < 2) return node_err(g, node, TSL_ERR_INVALID, "input rank %d < 2", x.ndim);
    for (int k = 1; k < 5; k++) {
      shape p = in_shape(g, n, k);
      if (p.ndim != 1 || p.d[0] != x.d[1])
        return node_err(g, node, TSL_ERR_INVALID, "parameter %d must be [%lld]", k, (long long)x.d[1]);
    }
    break;
  }
  case TSL_OP_SPACE_TO_DEPTH: {
    int64_t bs = tsl_node_attr_int(n, "blocksize", 0);
    if (x.ndim != 4) return node_err(g, node, TSL_ERR_UNSUPPORTED, "only 4-D NCHW input is supported, rank %d", x.ndim);
    if (bs < 1 || x.d[2] % bs || x.d[3] % bs)
      return node_err(g, node, TSL_ERR_INVALID, "blocksize %lld must be >= 1 and divide H = %lld and W = %lld",
                      (long long)bs, (long long)x.d[2], (long long)x.d[3]);
    y.d[1] = x.d[1] * bs * bs;
    y.d[2] = x.d[2] / bs;
    y.d[3] = x.d[3] / bs;
    break;
  }
  case TSL_OP_GLOBAL_AVERAGE_POOL:
    if (x.ndim != 4)
      return node_err(g, node, TSL_ERR_UNSUPPORTED, "only 4-D NCHW input is supported, rank %d", x.ndim);
    if (x.d[2] < 1 || x.d[3] < 1) return node_err(g, node, TSL_ERR_INVALID, "empty image");
    y.d[2] = y.d[3] = 1;
    break;
  case TSL_OP_FLATTEN: {
    /* axis in [-r, r]: a negative one counts from the end like any other axis. */
    int64_t ax = tsl_node_attr_int(n, "axis", 1);
    if (ax < -x.ndim || ax > x.ndim)
      return node_err(g, node, TSL_ERR_INVALID, "axis %lld out of range for rank %d", (long long)ax, x.ndim);
    int axis = (int)(ax < 0 ? ax + x.ndim : ax);
    int64_t a = 1, b = 1;
    for (int d = 0; d < x.ndim; d++) *(d < axis ? &a : &b) *= x.d[d];
    y = (shape){2, {a, b}};
    break;
  }
  case TSL_OP_TRANSPOSE: {
    int np;
    const int64_t *perm = tsl_node_attr_ints(n, "perm", &np);
    if (perm && np != x.ndim) return node_err(g, node, TSL_ERR_INVALID, "perm has %d entries for rank %d", np, x.ndim);
    bool seen[TSL_MAX_NDIM] = {0};
    for (int d = 0; d < x.ndim; d++) {
      int64_t p = perm ? perm[d] : x.ndim - 1 - d;
      if (p < 0 || p >= x.ndim || seen[p]) return node_err(g, node, TSL_ERR_INVALID, "perm is not a permutation");
      seen[p] = true;
      y.d[d] = x.d[p];
    }
    break;
  }
  case TSL_OP_SOFTMAX:
    if (x.ndim < 1 || norm_axis(tsl_node_attr_int(n, "axis", -1), x.ndim) < 0)
      return node_err(g, node, TSL_ERR_INVALID, "axis out of range for rank %d", x.ndim);
    break;
  case TSL_OP_CLIP: {
    const tsl_attr *lo = tsl_node_attr(n, "min"), *hi = tsl_node_attr(n, "max");
    if ((lo && lo->kind != TSL_ATTR_FLOAT) || (hi && hi->kind != TSL_ATTR_FLOAT))
      return node_err(g, node, TSL_ERR_INVALID, "'min' and 'max' must be floats");
    break;
  }
  case TSL_OP_CHANNEL_GATHER: /* [N, channels, H, W] from images of that N, H, W */
    y.d[1] = tsl_node_attr_int(n, "channels", 0);
    for (int k = 0; k < n->n_inputs; k++) {
      shape s = in_shape(g, n, k);
      if (s.ndim != 4 || x.ndim != 4 || s.d[0] != x.d[0] || s.d[2] != x.d[2] || s.d[3] != x.d[3] || y.d[1] < 1)
        return node_err(g, node, TSL_ERR_INVALID, "needs images of one N, H, W and a 'channels' count >= 1");
    }
    break;
  case TSL_OP_SQUEEZE_EXCITE: { /* [N, C, 1, 1] from x [N, C, H, W] and W1 [CB, S, x] */
    shape w1 = in_shape(g, n, 1);
    if (x.ndim != 4 || w1.ndim != 3 || w1.d[0] * w1.d[2] < x.d[1])
      return node_err(g, node, TSL_ERR_INVALID, "needs an image and a first weight [CB, S, x] covering its channels");
    y.d[2] = y.d[3] = 1;
    break;
  }
  case TSL_OP_CHANNEL_SHUFFLE: {
    int64_t grp = tsl_node_attr_int(n, "group", 0);
    if (x.ndim != 4 || grp < 1 || x.d[1] % grp != 0)
      return node_err(g, node, TSL_ERR_INVALID, "needs a 4-D input whose channels divide into 'group' groups");
    break;
  }
  case TSL_OP_ACTIVATION: {
    const tsl_activation *a;
    double attrs[TSL_ACTIVATION_MAX_ATTRS];
    tsl_status st = tsl_node_activation(g, n, &a, attrs);
    if (st != TSL_OK) return st;
    break;
  }
  default:
    break; /* Relu, Dropout, Identity: same shape */
  }
  return set_output(g, node, 0, &y);
}

typedef struct arity {
  int8_t min_in, max_in, min_out, max_out; /* -1: unbounded */
} arity;

static const arity arities[TSL_OP_COUNT] = {
    [TSL_OP_CONV] = {2, 3, 1, 1},    [TSL_OP_BATCH_NORM] = {5, 5, 1, 1},
    [TSL_OP_RELU] = {1, 1, 1, 1},    [TSL_OP_CLIP] = {1, 1, 1, 1},
    [TSL_OP_MAX_POOL] = {1, 1, 1, 1}, [TSL_OP_AVERAGE_POOL] = {1, 1, 1, 1},
    [TSL_OP_GLOBAL_AVERAGE_POOL] = {1, 1, 1, 1}, [TSL_OP_REDUCE_MEAN] = {1, 1, 1, 1},
    [TSL_OP_ADD] = {2, 2, 1, 1},     [TSL_OP_MUL] = {2, 2, 1, 1},
    [TSL_OP_DIV] = {2, 2, 1, 1},     [TSL_OP_CONCAT] = {1, -1, 1, 1},
    [TSL_OP_GEMM] = {2, 3, 1, 1},    [TSL_OP_MATMUL] = {2, 2, 1, 1},
    [TSL_OP_FLATTEN] = {1, 1, 1, 1}, [TSL_OP_RESHAPE] = {1, 1, 1, 1},
    [TSL_OP_TRANSPOSE] = {1, 1, 1, 1}, [TSL_OP_SLICE] = {1, 1, 1, 1},
    [TSL_OP_SPLIT] = {1, 1, 1, -1},  [TSL_OP_SOFTMAX] = {1, 1, 1, 1},
    [TSL_OP_DROPOUT] = {1, 1, 1, 1}, [TSL_OP_IDENTITY] = {1, 1, 1, 1},
    [TSL_OP_PAD] = {1, 1, 1, 1},     [TSL_OP_CHANNEL_SHUFFLE] = {1, 1, 1, 1},
    [TSL_OP_ACTIVATION] = {1, 1, 1, 1}, [TSL_OP_RESIZE] = {1, 1, 1, 1},
    [TSL_OP_PRELU] = {2, 2, 1, 1},   [TSL_OP_CHANNEL_GATHER] = {1, -1, 1, 1},
    [TSL_OP_SUB] = {2, 2, 1, 1},     [TSL_OP_POW] = {1, 2, 1, 1},
    [TSL_OP_REDUCE_SUM] = {1, 1, 1, 1}, [TSL_OP_REDUCE_MAX] = {1, 1, 1, 1},
    [TSL_OP_REDUCE_MIN] = {1, 1, 1, 1}, [TSL_OP_LAYER_NORM] = {2, 3, 1, 3},
    [TSL_OP_SQUEEZE_EXCITE] = {5, 5, 1, 1}, [TSL_OP_SPACE_TO_DEPTH] = {1, 1, 1, 1},
};

tsl_status tsl_graph_infer_node(tsl_graph *g, int node) {
  if (!g || node < 0 || node >= g->n_nodes)
    return tsl_error(TSL_ERR_INVALID, "tsl_graph_infer_node: bad node id %d", node);
  const tsl_node *n = &g->nodes[node];
  if ((int)n->op < 0 || n->op >= TSL_OP_COUNT)
    return tsl_error(TSL_ERR_INVALID, "graph: node '%s' has operator %d outside the set", n->name, (int)n->op);
  if (n->op == TSL_OP_BINARY) return tsl_binary_infer_node(g, node); /* u64/i32 values: its own rules */
  arity ar = arities[n->op];
  if (n->n_inputs < ar.min_in || (ar.max_in >= 0 && n->n_inputs > ar.max_in))
    return node_err(g, node, TSL_ERR_INVALID, "%d inputs (expected %d..%d)", n->n_inputs, ar.min_in, ar.max_in);
  if (n->n_outputs < ar.min_out || (ar.max_out >= 0 && n->n_outputs > ar.max_out))
    return node_err(g, node, TSL_ERR_INVALID, "%d outputs (expected %d)", n->n_outputs, ar.min_out);
  for (int k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    bool optional = (n->op == TSL_OP_CONV || n->op == TSL_OP_GEMM || n->op == TSL_OP_LAYER_NORM) && k == 2;
    if (v < 0) {
      if (optional) continue;
      return node_err(g, node, TSL_ERR_INVALID, "required input %d is missing", k);
    }
    if (v >= g->n_values) return node_err(g, node, TSL_ERR_INVALID, "input %d: bad value id %d", k, v);
    const tsl_value *val = &g->values[v];
    if (val->ndim < 0)
      return node_err(g, node, TSL_ERR_INVALID, "input '%s' has no known shape (not produced yet?)", val->name);
    if (!tsl_dtype_equal(val->dtype, TSL_DTYPE_F32))
      return node_err(g, node, TSL_ERR_UNSUPPORTED, "input '%s' is %s; tessel runs f32 data only", val->name,
                      tsl_dtype_str(val->dtype));
  }
  switch (n->op) {
  case TSL_OP_CONV:
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL:
    return infer_window(g, node);
  case TSL_OP_ADD:
  case TSL_OP_SUB:
  case TSL_OP_MUL:
  case TSL_OP_DIV:
    return infer_binary(g, node);
  case TSL_OP_POW:
    return infer_pow(g, node);
  case TSL_OP_REDUCE_MEAN:
  case TSL_OP_REDUCE_SUM:
  case TSL_OP_REDUCE_MAX:
  case TSL_OP_REDUCE_MIN:
    return tsl_infer_reduce(g, node);
  case TSL_OP_LAYER_NORM:
    return tsl_infer_layer_norm(g, node);
  case TSL_OP_GEMM:
    return infer_gemm(g, node);
  case TSL_OP_MATMUL:
    return infer_matmul(g, node);
  case TSL_OP_CONCAT:
    return infer_concat(g, node);
  case TSL_OP_RESHAPE:
    return infer_reshape(g, node);
  case TSL_OP_SLICE:
    return infer_slice(g, node);
  case TSL_OP_SPLIT:
    return infer_split(g, node);
  case TSL_OP_PAD:
    return infer_pad(g, node);
  case TSL_OP_RESIZE:
    return infer_resize(g, node);
  case TSL_OP_PRELU:
    return infer_prelu(g, node);
  default:
    return infer_misc(g, node);
  }
}

tsl_status tsl_graph_infer_shapes(tsl_graph *g) {
  if (!g) return tsl_error(TSL_ERR_INVALID, "tsl_graph_infer_shapes: NULL graph");
  for (int i = 0; i < g->n_nodes; i++) {
    tsl_status st = tsl_graph_infer_node(g, i);
    if (st != TSL_OK) return st;
  }
  return TSL_OK;
}
