/* The naive reference graph executor (see ref_graph.h). Each operator's output shape
 * is computed here from the ONNX definition and compared with the graph's record. */
#include "ref/ref_graph.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_activation.h"
#include "ref/ref_nn.h"
#include "ref/ref_resize.h"

typedef struct rshape {
  int nd;
  int64_t d[TSL_MAX_NDIM];
} rshape;

typedef struct rnode {
  const tsl_graph *g;
  const tsl_node *n;
  const tsl_tensor *in[64];
  tsl_tensor *out[64];
} rnode;

static tsl_status fail(const rnode *r, tsl_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static tsl_status fail(const rnode *r, tsl_status st, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tsl_error(st, "ref: node '%s' (%s): %s", r->n->name, tsl_op_name(r->n->op), msg);
}

static rshape shape_of(const tsl_tensor *t) {
  rshape s = {t->ndim, {0}};
  for (int d = 0; d < t->ndim; d++) s.d[d] = t->shape[d];
  return s;
}

static int64_t numel(const rshape *s) {
  int64_t n = 1;
  for (int d = 0; d < s->nd; d++) n *= s->d[d];
  return n;
}

static const float *F(const tsl_tensor *t) { return (const float *)t->data; }

/* Allocates output k with shape s after checking it against the graph's record. */
static tsl_status make_out(rnode *r, int k, const rshape *s) {
  const tsl_value *v = &r->g->values[r->n->outputs[k]];
  bool same = v->ndim == s->nd;
  for (int d = 0; same && d < s->nd; d++) same = v->shape[d] == s->d[d];
  if (!same) {
    char a[160] = "", b[160] = "";
    for (int d = 0; d < v->ndim; d++) snprintf(a + strlen(a), sizeof a - strlen(a), "%lld ", (long long)v->shape[d]);
    for (int d = 0; d < s->nd; d++) snprintf(b + strlen(b), sizeof b - strlen(b), "%lld ", (long long)s->d[d]);
    return fail(r, TSL_ERR_INVALID, "output %d: graph records [%s], reference computes [%s]", k, a, b);
  }
  return tsl_tensor_new(TSL_DTYPE_F32, s->nd, s->d, &r->out[k]);
}

static int64_t attr_i(const rnode *r, const char *name, int64_t dflt) { return tsl_node_attr_int(r->n, name, dflt); }

/* Copies an ints attribute of exactly `want` entries into out (absent: keep defaults). */
static bool attr_ints(const rnode *r, const char *name, int want, int64_t *out) {
  int n;
  const int64_t *v = tsl_node_attr_ints(r->n, name, &n);
  if (!v) return true;
  if (n != want) return false;
  for (int i = 0; i < n; i++) out[i] = v[i];
  return true;
}

static tsl_status run_window(rnode *r) {
  const tsl_tensor *x = r->in[0];
  if (x->ndim != 4) return fail(r, TSL_ERR_UNSUPPORTED, "rank %d", x->ndim);
  int64_t k[2] = {0, 0}, s[2] = {1, 1}, p[4] = {0, 0, 0, 0}, dl[2] = {1, 1}, m = 0, group = 1;
  if (r->n->op == TSL_OP_CONV) {
    const tsl_tensor *w = r->in[1];
    k[0] = w->shape[2];
    k[1] = w->shape[3];
    m = w->shape[0];
    group = attr_i(r, "group", 1);
    if (w->shape[1] * group != x->shape[1]) return fail(r, TSL_ERR_INVALID, "channels do not match the weight");
  } else if (!attr_ints(r, "kernel_shape", 2, k)) {
    return fail(r, TSL_ERR_INVALID, "kernel_shape");
  }
  if (!attr_ints(r, "strides", 2, s) || !attr_ints(r, "pads", 4, p) || !attr_ints(r, "dilations", 2, dl))
    return fail(r, TSL_ERR_INVALID, "strides/pads/dilations");
  bool ceil_mode = attr_i(r, "ceil_mode", 0) != 0;
  ref_nn_window win = {x->shape[0], x->shape[1], x->shape[2], x->shape[3], k[0], k[1], s[0], s[1],
                       p[0], p[1], p[2], p[3], dl[0], dl[1], 0, 0};
  win.oh = ref_nn_window_out(win.h, p[0], p[2], k[0], s[0], dl[0], ceil_mode);
  win.ow = ref_nn_window_out(win.w, p[1], p[3], k[1], s[1], dl[1], ceil_mode);
  rshape ys = {4, {win.n, r->n->op == TSL_OP_CONV ? m : win.c, win.oh, win.ow}};
  tsl_status st = make_out(r, 0, &ys);
  if (st != TSL_OK) return st;
  float *y = r->out[0]->data;
  if (r->n->op == TSL_OP_CONV)
    ref_nn_conv2d(&win, F(x), F(r->in[1]), r->in[2] ? F(r->in[2]) : NULL, m, group, y);
  else if (r->n->op == TSL_OP_MAX_POOL)
    ref_nn_maxpool2d(&win, F(x), y);
  else
    ref_nn_avgpool2d(&win, F(x), attr_i(r, "count_include_pad", 0) != 0, y);
  return TSL_OK;
}

/* Offset into a broadcast operand of shape `s` (right-aligned into rank `nd`). */
static int64_t bcast_offset(const rshape *s, int nd, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < s->nd; d++) off = off * s->d[d] + (s->d[d] == 1 ? 0 : idx[d + nd - s->nd]);
  return off;
}

static void unravel(int64_t i, const rshape *s, int64_t *idx) {
  for (int d = s->nd - 1; d >= 0; d--) {
    idx[d] = s->d[d] ? i % s->d[d] : 0;
    i = s->d[d] ? i / s->d[d] : 0;
  }
}

static tsl_status run_binary(rnode *r) {
  if (r->n->op == TSL_OP_POW && r->n->n_inputs == 1) { /* Pow with the constant exponent attribute */
    const tsl_attr *e = tsl_node_attr(r->n, "exponent");
    if (!e || e->kind != TSL_ATTR_FLOAT) return fail(r, TSL_ERR_INVALID, "no float exponent");
    rshape y = shape_of(r->in[0]);
    tsl_status st = make_out(r, 0, &y);
    for (int64_t i = 0; st == TSL_OK && i < numel(&y); i++)
      ((float *)r->out[0]->data)[i] = (float)pow(F(r->in[0])[i], (float)e->f);
    return st;
  }
  rshape a = shape_of(r->in[0]), b = shape_of(r->in[1]), y;
  y.nd = a.nd > b.nd ? a.nd : b.nd;
  for (int d = 0; d < y.nd; d++) {
    int64_t da = d - (y.nd - a.nd) >= 0 ? a.d[d - (y.nd - a.nd)] : 1;
    int64_t db = d - (y.nd - b.nd) >= 0 ? b.d[d - (y.nd - b.nd)] : 1;
    if (da != db && da != 1 && db != 1) return fail(r, TSL_ERR_INVALID, "shapes do not broadcast");
    y.d[d] = da == 1 ? db : da;
  }
  tsl_status st = make_out(r, 0, &y);
  if (st != TSL_OK) return st;
  float *out = r->out[0]->data;
  int64_t idx[TSL_MAX_NDIM];
  for (int64_t i = 0; i < numel(&y); i++) {
    unravel(i, &y, idx);
    float u = F(r->in[0])[bcast_offset(&a, y.nd, idx)], v = F(r->in[1])[bcast_offset(&b, y.nd, idx)];
    switch (r->n->op) {
    case TSL_OP_ADD: out[i] = u + v; break;
    case TSL_OP_SUB: out[i] = u - v; break;
    case TSL_OP_MUL: out[i] = u * v; break;
    case TSL_OP_POW: out[i] = (float)pow(u, v); break;
    case TSL_OP_PRELU: out[i] = u < 0.0f ? v * u : u; break; /* ONNX: slope * x for x < 0 */
    default: out[i] = u / v; break;
    }
  }
  return TSL_OK;
}

static tsl_status run_matmul(rnode *r) {
  rshape a = shape_of(r->in[0]), b = shape_of(r->in[1]);
  if (a.nd < 1 || b.nd < 1) return fail(r, TSL_ERR_INVALID, "rank 0");
  /* numpy: a 1-D A gets a leading 1 and a 1-D B a trailing 1, both dropped after. */
  rshape a2 = a, b2 = b;
  if (a.nd == 1) a2 = (rshape){2, {1, a.d[0]}};
  if (b.nd == 1) b2 = (rshape){2, {b.d[0], 1}};
  int64_t M = a2.d[a2.nd - 2], K = a2.d[a2.nd - 1], N = b2.d[b2.nd - 1];
  if (b2.d[b2.nd - 2] != K) return fail(r, TSL_ERR_INVALID, "inner extents differ");
  rshape ba = {a2.nd - 2, {0}}, bb = {b2.nd - 2, {0}}, batch;
  for (int d = 0; d < ba.nd; d++) ba.d[d] = a2.d[d];
  for (int d = 0; d < bb.nd; d++) bb.d[d] = b2.d[d];
  batch.nd = ba.nd > bb.nd ? ba.nd : bb.nd;
  for (int d = 0; d < batch.nd; d++) {
    int64_t da = d - (batch.nd - ba.nd) >= 0 ? ba.d[d - (batch.nd - ba.nd)] : 1;
    int64_t db = d - (batch.nd - bb.nd) >= 0 ? bb.d[d - (batch.nd - bb.nd)] : 1;
    if (da != db && da != 1 && db != 1) return fail(r, TSL_ERR_INVALID, "batch dims do not broadcast");
    batch.d[d] = da == 1 ? db : da;
  }
  rshape y = batch;
  if (a.nd > 1) y.d[y.nd++] = M;
  if (b.nd > 1) y.d[y.nd++] = N;
  tsl_status st = make_out(r, 0, &y);
  if (st != TSL_OK) return st;
  int64_t idx[TSL_MAX_NDIM];
  for (int64_t i = 0; i < numel(&batch); i++) {
    unravel(i, &batch, idx);
    ref_nn_matmul2d(F(r->in[0]) + bcast_offset(&ba, batch.nd, idx) * M * K,
                    F(r->in[1]) + bcast_offset(&bb, batch.nd, idx) * K * N, M, N, K,
                    (float *)r->out[0]->data + i * M * N);
  }
  return TSL_OK;
}

static tsl_status run_gemm(rnode *r) {
  const tsl_tensor *a = r->in[0], *b = r->in[1], *c = r->in[2];
  bool ta = attr_i(r, "transA", 0) != 0, tb = attr_i(r, "transB", 0) != 0;
  int64_t M = ta ? a->shape[1] : a->shape[0], K = ta ? a->shape[0] : a->shape[1];
  int64_t N = tb ? b->shape[0] : b->shape[1];
  if ((tb ? b->shape[1] : b->shape[0]) != K) return fail(r, TSL_ERR_INVALID, "inner extents differ");
  rshape y = {2, {M, N}};
  tsl_status st = make_out(r, 0, &y);
  if (st != TSL_OK) return st;
  ref_nn_gemm(F(a), F(b), c ? F(c) : NULL, c ? c->ndim : 0, c ? c->shape : NULL, M, N, K, ta, tb,
              tsl_node_attr_float(r->n, "alpha", 1.0), tsl_node_attr_float(r->n, "beta", 1.0), r->out[0]->data);
  return TSL_OK;
}

/* Copies x into y where y[idx] = x[src(idx)], src given per output element. */
typedef int64_t (*src_fn)(const rnode *r, const int64_t *idx, const void *ctx);

static void gather_copy(const rnode *r, const rshape *y, src_fn fn, const void *ctx) {
  int64_t idx[TSL_MAX_NDIM];
  float *out = r->out[0]->data;
  for (int64_t i = 0; i < numel(y); i++) {
    unravel(i, y, idx);
    int64_t s = fn(r, idx, ctx);
    out[i] = s < 0 ? (float)*(const double *)ctx : F(r->in[0])[s];
  }
}

static int64_t src_transpose(const rnode *r, const int64_t *idx, const void *ctx) {
  const int64_t *perm = ctx;
  const tsl_tensor *x = r->in[0];
  int64_t src[TSL_MAX_NDIM], off = 0;
  for (int d = 0; d < x->ndim; d++) src[perm[d]] = idx[d];
  for (int d = 0; d < x->ndim; d++) off = off * x->shape[d] + src[d];
  return off;
}

typedef struct slice_ctx {
  int64_t start[TSL_MAX_NDIM], step[TSL_MAX_NDIM];
} slice_ctx;

static int64_t src_slice(const rnode *r, const int64_t *idx, const void *ctx) {
  const slice_ctx *c = ctx;
  int64_t off = 0;
  for (int d = 0; d < r->in[0]->ndim; d++) off = off * r->in[0]->shape[d] + c->start[d] + idx[d] * c->step[d];
  return off;
}

typedef struct pad_ctx {
  double value; /* first: gather_copy reads the fill value through ctx */
  int64_t begin[TSL_MAX_NDIM];
} pad_ctx;

static int64_t src_pad(const rnode *r, const int64_t *idx, const void *ctx) {
  const pad_ctx *c = ctx;
  int64_t off = 0;
  for (int d = 0; d < r->in[0]->ndim; d++) {
    int64_t i = idx[d] - c->begin[d];
    if (i < 0 || i >= r->in[0]->shape[d]) return -1;
    off = off * r->in[0]->shape[d] + i;
  }
  return off;
}

static tsl_status run_transpose(rnode *r) {
  const tsl_tensor *x = r->in[0];
  int64_t perm[TSL_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) perm[d] = x->ndim - 1 - d;
  if (!attr_ints(r, "perm", x->ndim, perm)) return fail(r, TSL_ERR_INVALID, "perm");
  rshape y = {x->ndim, {0}};
  for (int d = 0; d < x->ndim; d++) y.d[d] = x->shape[perm[d]];
  tsl_status st = make_out(r, 0, &y);
  if (st == TSL_OK) gather_copy(r, &y, src_transpose, perm);
  return st;
}

/* ONNX SpaceToDepth, written from the operator's definition (onnx/docs/Operators.md): the
 * input reshaped [N, C, H/b, b, W/b, b], transposed [0, 3, 5, 1, 2, 4], reshaped
 * [N, C*b*b, H/b, W/b]. */
static tsl_status run_space_to_depth(rnode *r) {
  const tsl_tensor *x = r->in[0];
  int64_t b = tsl_node_attr_int(r->n, "blocksize", 0);
  if (x->ndim != 4 || b < 1 || x->shape[2] % b || x->shape[3] % b) return fail(r, TSL_ERR_INVALID, "blocksize");
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  rshape y = {4, {N, C * b * b, H / b, W / b}};
  tsl_status st = make_out(r, 0, &y);
  if (st != TSL_OK) return st;
  const float *in = x->data;
  float *out = r->out[0]->data;
  /* the 6-D view's element (n, c, h, by, w, bx) lands at (n, by, bx, c, h, w) */
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t h = 0; h < H / b; h++)
        for (int64_t by = 0; by < b; by++)
          for (int64_t w = 0; w < W / b; w++)
            for (int64_t bx = 0; bx < b; bx++) {
              int64_t src = ((n * C + c) * H + h * b + by) * W + w * b + bx;
              int64_t dst = ((((n * b + by) * b + bx) * C + c) * (H / b) + h) * (W / b) + w;
              out[dst] = in[src];
            }
  return TSL_OK;
}

static tsl_status run_slice(rnode *r) {
  const tsl_tensor *x = r->in[0];
  int ns, ne, na, nst;
  const int64_t *starts = tsl_node_attr_ints(r->n, "starts", &ns), *ends = tsl_node_attr_ints(r->n, "ends", &ne);
  const int64_t *axes = tsl_node_attr_ints(r->n, "axes", &na), *steps = tsl_node_attr_ints(r->n, "steps", &nst);
  slice_ctx c;
  rshape y = shape_of(x);
  for (int d = 0; d < x->ndim; d++) {
    c.start[d] = 0;
    c.step[d] = 1;
  }
  for (int i = 0; i < ns; i++) {
    int64_t a = axes ? axes[i] : i;
    if (a < 0) a += x->ndim;
    int64_t dim = x->shape[a], step = steps ? steps[i] : 1, b = starts[i], e = ends[i];
    /* ONNX: negative indices count from the end; then clamp to the valid range for the
     * direction of the step. */
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      b = b < 0 ? 0 : (b > dim ? dim : b);
      e = e < 0 ? 0 : (e > dim ? dim : e);
    } else {
      b = b < 0 ? 0 : (b > dim - 1 ? dim - 1 : b);
      e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
    }
    if (step > dim) step = dim + 1; /* one element either way; keeps v += step in range */
    if (step < -dim) step = -dim - 1;
    int64_t len = 0;
    for (int64_t v = b; step > 0 ? v < e : v > e; v += step) len++;
    c.start[a] = b;
    c.step[a] = step;
    y.d[a] = len;
  }
  tsl_status st = make_out(r, 0, &y);
  if (st == TSL_OK) gather_copy(r, &y, src_slice, &c);
  return st;
}

static tsl_status run_pad(rnode *r) {
  const tsl_tensor *x = r->in[0];
  int np;
  const int64_t *pads = tsl_node_attr_ints(r->n, "pads", &np);
  if (!pads || np != 2 * x->ndim) return fail(r, TSL_ERR_INVALID, "pads");
  const tsl_attr *mode = tsl_node_attr(r->n, "mode");
  if (mode && mode->kind == TSL_ATTR_STRING && strcmp(mode->s, "constant") != 0) {
    rshape y = shape_of(x);
    for (int d = 0; d < x->ndim; d++) y.d[d] += pads[d] + pads[d + x->ndim];
    tsl_status st = make_out(r, 0, &y);
    if (st == TSL_OK && !ref_pad_mode(F(x), x->ndim, x->shape, pads, mode->s, r->out[0]->data))
      st = fail(r, TSL_ERR_UNSUPPORTED, "pad mode '%s' of these pads", mode->s);
    return st;
  }
  pad_ctx c;
  c.value = tsl_node_attr_float(r->n, "value", 0.0);
  rshape y = shape_of(x);
  for (int d = 0; d < x->ndim; d++) {
    c.begin[d] = pads[d];
    y.d[d] += pads[d] + pads[d + x->ndim];
  }
  tsl_status st = make_out(r, 0, &y);
  if (st == TSL_OK) gather_copy(r, &y, src_pad, &c);
  return st;
}

/* Resize from its canonical attributes: the output extents are "sizes", the scales the
 * model's or sizes / input extents. */
static tsl_status run_resize(rnode *r) {
  const tsl_tensor *x = r->in[0];
  const tsl_attr *sizes = tsl_node_attr(r->n, "sizes"), *scales = tsl_node_attr(r->n, "scales");
  if (!sizes || sizes->n != x->ndim || (scales && scales->n != x->ndim)) return fail(r, TSL_ERR_INVALID, "sizes/scales");
  rshape y = {x->ndim, {0}};
  double s[TSL_MAX_NDIM];
  for (int d = 0; d < x->ndim; d++) {
    y.d[d] = sizes->ints[d];
    s[d] = scales ? scales->floats[d] : (double)y.d[d] / (double)x->shape[d];
  }
  const tsl_attr *m = tsl_node_attr(r->n, "mode"), *c = tsl_node_attr(r->n, "coordinate_transformation_mode"),
                 *nm = tsl_node_attr(r->n, "nearest_mode");
  tsl_status st = make_out(r, 0, &y);
  if (st == TSL_OK && !ref_resize(F(x), x->ndim, x->shape, y.d, s, m ? m->s : "nearest", c ? c->s : "half_pixel",
                                  nm ? nm->s : "round_prefer_floor", r->out[0]->data))
    st = fail(r, TSL_ERR_UNSUPPORTED, "a resize mode unknown to the reference");
  return st;
}

static tsl_status run_concat_split(rnode *r) {
  bool split = r->n->op == TSL_OP_SPLIT;
  const tsl_tensor *x0 = r->in[0];
  int64_t axis = attr_i(r, "axis", 0);
  if (axis < 0) axis += x0->ndim;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= x0->shape[d];
  for (int d = (int)axis + 1; d < x0->ndim; d++) inner *= x0->shape[d];
  if (!split) {
    rshape y = shape_of(x0);
    y.d[axis] = 0;
    for (int k = 0; k < r->n->n_inputs; k++) y.d[axis] += r->in[k]->shape[axis];
    tsl_status st = make_out(r, 0, &y);
    if (st != TSL_OK) return st;
    float *out = r->out[0]->data;
    for (int64_t o = 0; o < outer; o++)
      for (int k = 0; k < r->n->n_inputs; k++) {
        int64_t len = r->in[k]->shape[axis] * inner;
        memcpy(out, F(r->in[k]) + o * len, (size_t)len * sizeof(float));
        out += len;
      }
    return TSL_OK;
  }
  int ns;
  const int64_t *parts = tsl_node_attr_ints(r->n, "split", &ns);
  int64_t first = 0;
  for (int k = 0; k < r->n->n_outputs; k++) {
    rshape y = shape_of(x0);
    y.d[axis] = parts ? parts[k] : x0->shape[axis] / r->n->n_outputs;
    tsl_status st = make_out(r, k, &y);
    if (st != TSL_OK) return st;
    float *out = r->out[k]->data;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < y.d[axis] * inner; j++)
        out[o * y.d[axis] * inner + j] = F(x0)[(o * x0->shape[axis] + first) * inner + j];
    first += y.d[axis];
  }
  return TSL_OK;
}

static tsl_status run_reshape_like(rnode *r) {
  const tsl_tensor *x = r->in[0];
  rshape y;
  int64_t total = tsl_tensor_numel(x);
  if (r->n->op == TSL_OP_FLATTEN) {
    int64_t axis = attr_i(r, "axis", 1);
    if (axis < 0) axis += x->ndim;
    int64_t a = 1;
    for (int d = 0; d < axis; d++) a *= x->shape[d];
    y = (rshape){2, {a, a ? total / a : 0}};
    if (a == 0) { /* an empty leading part: the trailing product is still defined */
      y.d[1] = 1;
      for (int d = (int)axis; d < x->ndim; d++) y.d[1] *= x->shape[d];
    }
  } else {
    int n;
    const int64_t *s = tsl_node_attr_ints(r->n, "shape", &n);
    bool allowzero = attr_i(r, "allowzero", 0) != 0;
    y.nd = n;
    int64_t known = 1, hole = -1;
    for (int d = 0; d < n; d++) {
      y.d[d] = s[d] == 0 && !allowzero ? x->shape[d] : s[d];
      if (y.d[d] == -1) hole = d;
      else known *= y.d[d];
    }
    if (hole >= 0) y.d[hole] = known ? total / known : 0;
  }
  if (numel(&y) != total) return fail(r, TSL_ERR_INVALID, "element count changes");
  tsl_status st = make_out(r, 0, &y);
  if (st == TSL_OK) memcpy(r->out[0]->data, x->data, (size_t)total * sizeof(float));
  return st;
}

/* ReduceMean/Sum/Max/Min: accumulated in double over every input point, in order. */
static tsl_status run_reduce(rnode *r) {
  const tsl_tensor *x = r->in[0];
  rshape xs = shape_of(x), y = {0, {0}}, full = xs;
  bool red[TSL_MAX_NDIM] = {0};
  int na;
  const int64_t *axes = tsl_node_attr_ints(r->n, "axes", &na);
  for (int d = 0; d < xs.nd; d++) red[d] = !axes;
  for (int i = 0; axes && i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + xs.nd : axes[i];
    if (a < 0 || a >= xs.nd || red[a]) return fail(r, TSL_ERR_INVALID, "axes");
    red[a] = true;
  }
  bool keep = attr_i(r, "keepdims", 1) != 0;
  int64_t count = 1;
  for (int d = 0; d < xs.nd; d++) {
    if (red[d]) {
      full.d[d] = 1;
      count *= xs.d[d];
    }
    if (!red[d] || keep) y.d[y.nd++] = red[d] ? 1 : xs.d[d];
  }
  tsl_status st = make_out(r, 0, &y);
  if (st != TSL_OK) return st;
  int64_t m = numel(&full), idx[TSL_MAX_NDIM];
  double *acc = malloc((size_t)(m ? m : 1) * sizeof *acc);
  if (!acc) return fail(r, TSL_ERR_NOMEM, "accumulators");
  tsl_op op = r->n->op;
  for (int64_t j = 0; j < m; j++) acc[j] = op == TSL_OP_REDUCE_MAX ? -INFINITY : op == TSL_OP_REDUCE_MIN ? INFINITY : 0.0;
  for (int64_t i = 0; i < numel(&xs); i++) {
    unravel(i, &xs, idx);
    int64_t o = 0;
    for (int d = 0; d < xs.nd; d++) o = o * full.d[d] + (red[d] ? 0 : idx[d]);
    double v = F(x)[i];
    if (op == TSL_OP_REDUCE_MAX) acc[o] = isnan(v) || v > acc[o] ? v : acc[o];
    else if (op == TSL_OP_REDUCE_MIN) acc[o] = isnan(v) || v < acc[o] ? v : acc[o];
    else acc[o] += v;
  }
  for (int64_t j = 0; j < m; j++)
    ((float *)r->out[0]->data)[j] = (float)(op == TSL_OP_REDUCE_MEAN ? acc[j] / (double)count : acc[j]);
  free(acc);
  return TSL_OK;
}

/* LayerNormalization over the axes axis..end-1 (end: the rank, or tsl_norm_end): for each
 * point (o, i) of the axes before and after them, mean and biased variance in double over
 * the normalized ones, element (o, j, i) at offset (o * span + j) * inner + i. */
static tsl_status run_layer_norm(rnode *r) {
  const tsl_tensor *x = r->in[0], *scale = r->in[1], *bias = r->n->n_inputs > 2 ? r->in[2] : NULL;
  rshape xs = shape_of(x);
  int64_t axis = attr_i(r, "axis", -1), end = attr_i(r, "tsl_norm_end", xs.nd);
  if (axis < 0) axis += xs.nd;
  if (axis < 0 || end <= axis || end > xs.nd) return fail(r, TSL_ERR_INVALID, "axis, end");
  rshape norm = {(int)(end - axis), {0}}, stat = xs;
  int64_t outer = 1, inner = 1, idx[TSL_MAX_NDIM];
  for (int d = 0; d < norm.nd; d++) norm.d[d] = xs.d[axis + d];
  for (int d = 0; d < axis; d++) outer *= xs.d[d];
  for (int d = (int)end; d < xs.nd; d++) inner *= xs.d[d];
  for (int d = (int)axis; d < end; d++) stat.d[d] = 1;
  int64_t span = numel(&norm);
  rshape ss = shape_of(scale), bs = bias ? shape_of(bias) : ss;
  tsl_status st = make_out(r, 0, &xs);
  for (int k = 1; st == TSL_OK && k < r->n->n_outputs; k++) st = make_out(r, k, &stat);
  if (st != TSL_OK) return st;
  double eps = tsl_node_attr_float(r->n, "epsilon", 1e-5);
  const float *in = F(x);
  float *out = r->out[0]->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < span; j++) mean += in[(o * span + j) * inner + i];
      mean /= (double)span;
      for (int64_t j = 0; j < span; j++) {
        double dv = in[(o * span + j) * inner + i] - mean;
        var += dv * dv;
      }
      var /= (double)span;
      if (r->n->n_outputs > 1) ((float *)r->out[1]->data)[o * inner + i] = (float)mean;
      if (r->n->n_outputs > 2) ((float *)r->out[2]->data)[o * inner + i] = (float)(1.0 / sqrt(var + eps));
      for (int64_t j = 0; j < span; j++) {
        unravel(j, &norm, idx);
        int64_t e = (o * span + j) * inner + i;
        double v = (in[e] - mean) / sqrt(var + eps) * F(scale)[bcast_offset(&ss, norm.nd, idx)];
        if (bias) v += F(bias)[bcast_offset(&bs, norm.nd, idx)];
        out[e] = (float)v;
      }
    }
  return TSL_OK;
}

static tsl_status run_unary(rnode *r) {
  const tsl_tensor *x = r->in[0];
  rshape y = shape_of(x);
  int64_t n = numel(&y);
  if (r->n->op == TSL_OP_GLOBAL_AVERAGE_POOL) {
    if (x->ndim != 4) return fail(r, TSL_ERR_UNSUPPORTED, "rank %d", x->ndim);
    y.d[2] = y.d[3] = 1;
    tsl_status st = make_out(r, 0, &y);
    if (st == TSL_OK) ref_nn_mean_inner(F(x), x->shape[0] * x->shape[1], x->shape[2] * x->shape[3], r->out[0]->data);
    return st;
  }
  tsl_status st = make_out(r, 0, &y);
  if (st != TSL_OK) return st;
  float *out = r->out[0]->data;
  const float *in = F(x);
  switch (r->n->op) {
  case TSL_OP_RELU:
    for (int64_t i = 0; i < n; i++) out[i] = in[i] > 0 ? in[i] : (isnan(in[i]) ? in[i] : 0.0f);
    break;
  case TSL_OP_CLIP: {
    double lo = tsl_node_attr_float(r->n, "min", -INFINITY), hi = tsl_node_attr_float(r->n, "max", INFINITY);
    for (int64_t i = 0; i < n; i++) out[i] = in[i] < lo ? (float)lo : in[i] > hi ? (float)hi : in[i];
    break;
  }
  case TSL_OP_SOFTMAX: {
    int64_t axis = attr_i(r, "axis", -1);
    if (axis < 0) axis += x->ndim;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; d++) outer *= x->shape[d];
    for (int d = (int)axis + 1; d < x->ndim; d++) inner *= x->shape[d];
    ref_nn_softmax(in, outer, x->shape[axis], inner, out);
    break;
  }
  case TSL_OP_BATCH_NORM: {
    int64_t inner = 1;
    for (int d = 2; d < x->ndim; d++) inner *= x->shape[d];
    ref_nn_batchnorm(in, x->shape[0], x->shape[1], inner, F(r->in[1]), F(r->in[2]), F(r->in[3]), F(r->in[4]),
                     tsl_node_attr_float(r->n, "epsilon", 1e-5), out);
    break;
  }
  case TSL_OP_ACTIVATION: {
    const tsl_attr *fn = tsl_node_attr(r->n, "function");
    double v;
    if (!fn || fn->kind != TSL_ATTR_STRING || !ref_activation(fn->s, r->n, 0.0, &v))
      return fail(r, TSL_ERR_UNSUPPORTED, "activation function unknown to the reference");
    for (int64_t i = 0; i < n; i++) {
      ref_activation(fn->s, r->n, in[i], &v);
      out[i] = (float)v;
    }
    break;
  }
  default: /* Dropout (inference), Identity */
    memcpy(out, in, (size_t)n * sizeof(float));
    break;
  }
  return TSL_OK;
}

static tsl_status run_node(rnode *r) {
  switch (r->n->op) {
  case TSL_OP_CONV:
  case TSL_OP_MAX_POOL:
  case TSL_OP_AVERAGE_POOL:
    return run_window(r);
  case TSL_OP_ADD:
  case TSL_OP_SUB:
  case TSL_OP_MUL:
  case TSL_OP_DIV:
  case TSL_OP_POW:
  case TSL_OP_PRELU:
    return run_binary(r);
  case TSL_OP_RESIZE:
    return run_resize(r);
  case TSL_OP_REDUCE_MEAN:
  case TSL_OP_REDUCE_SUM:
  case TSL_OP_REDUCE_MAX:
  case TSL_OP_REDUCE_MIN:
    return run_reduce(r);
  case TSL_OP_LAYER_NORM:
    return run_layer_norm(r);
  case TSL_OP_GEMM:
    return run_gemm(r);
  case TSL_OP_MATMUL:
    return run_matmul(r);
  case TSL_OP_SPACE_TO_DEPTH:
    return run_space_to_depth(r);
  case TSL_OP_TRANSPOSE:
    return run_transpose(r);
  case TSL_OP_SLICE:
    return run_slice(r);
  case TSL_OP_PAD:
    return run_pad(r);
  case TSL_OP_CONCAT:
  case TSL_OP_SPLIT:
    return run_concat_split(r);
  case TSL_OP_FLATTEN:
  case TSL_OP_RESHAPE:
    return run_reshape_like(r);
  case TSL_OP_RELU:
  case TSL_OP_CLIP:
  case TSL_OP_SOFTMAX:
  case TSL_OP_BATCH_NORM:
  case TSL_OP_DROPOUT:
  case TSL_OP_IDENTITY:
  case TSL_OP_ACTIVATION:
  case TSL_OP_GLOBAL_AVERAGE_POOL:
    return run_unary(r);
  default:
    return fail(r, TSL_ERR_UNSUPPORTED, "operator not known to the reference");
  }
}

static tsl_status copy_tensor(const tsl_tensor *src, tsl_tensor **out) {
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(src->dtype, src->ndim, src->shape, &t);
  if (st != TSL_OK) return st;
  st = tsl_tensor_copy_to(src, t->data, tsl_tensor_nbytes(t));
  if (st != TSL_OK) tsl_tensor_free(t);
  else *out = t;
  return st;
}

tsl_status ref_graph_run(const tsl_graph *g, tsl_tensor *const *inputs, int n_inputs, tsl_tensor **outputs,
                         int n_outputs) {
  if (!g || n_inputs != g->n_inputs || n_outputs != g->n_outputs || (n_inputs && !inputs) || (n_outputs && !outputs))
    return tsl_error(TSL_ERR_INVALID, "ref: graph has %d inputs and %d outputs", g ? g->n_inputs : -1,
                     g ? g->n_outputs : -1);
  for (int k = 0; k < n_inputs; k++) {
    const tsl_value *v = &g->values[g->inputs[k]];
    bool ok = inputs[k] && tsl_dtype_equal(inputs[k]->dtype, v->dtype) && inputs[k]->ndim == v->ndim &&
              tsl_tensor_is_contiguous(inputs[k]);
    for (int d = 0; ok && d < v->ndim; d++) ok = inputs[k]->shape[d] == v->shape[d];
    if (!ok) return tsl_error(TSL_ERR_INVALID, "ref: input %d ('%s') has the wrong dtype or shape", k, v->name);
  }
  /* vals[v]: the tensor of value v; owned[v]: whether the executor allocated it. */
  tsl_tensor **vals = calloc((size_t)g->n_values + 1, sizeof *vals);
  char *owned = calloc((size_t)g->n_values + 1, 1);
  int *last_use = malloc(((size_t)g->n_values + 1) * sizeof *last_use);
  if (!vals || !owned || !last_use) {
    free(vals);
    free(owned);
    free(last_use);
    return tsl_error(TSL_ERR_NOMEM, "ref: value table");
  }
  for (int v = 0; v < g->n_values; v++) {
    vals[v] = g->values[v].constant;
    last_use[v] = -1;
  }
  for (int k = 0; k < n_inputs; k++) vals[g->inputs[k]] = inputs[k];
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] >= 0) last_use[g->nodes[i].inputs[k]] = i;
  for (int k = 0; k < g->n_outputs; k++) last_use[g->outputs[k]] = g->n_nodes;
  tsl_status st = TSL_OK;
  for (int i = 0; i < g->n_nodes && st == TSL_OK; i++) {
    rnode r = {.g = g, .n = &g->nodes[i]};
    if (r.n->n_inputs > 64 || r.n->n_outputs > 64) {
      st = fail(&r, TSL_ERR_UNSUPPORTED, "more than 64 inputs or outputs");
      break;
    }
    for (int k = 0; k < r.n->n_inputs; k++) {
      int v = r.n->inputs[k];
      r.in[k] = v >= 0 ? vals[v] : NULL;
      if (v >= 0 && !r.in[k]) st = fail(&r, TSL_ERR_INVALID, "input %d is not computed", k);
      else if (r.in[k] && !tsl_dtype_equal(r.in[k]->dtype, TSL_DTYPE_F32))
        st = fail(&r, TSL_ERR_UNSUPPORTED, "input %d is %s", k, tsl_dtype_str(r.in[k]->dtype));
    }
    if (st == TSL_OK) st = run_node(&r);
    for (int k = 0; k < r.n->n_outputs; k++) {
      vals[r.n->outputs[k]] = r.out[k];
      owned[r.n->outputs[k]] = r.out[k] != NULL;
    }
    for (int k = 0; k < r.n->n_inputs; k++) {
      int v = r.n->inputs[k];
      if (v >= 0 && owned[v] && last_use[v] == i) {
        tsl_tensor_free(vals[v]);
        vals[v] = NULL;
        owned[v] = 0;
      }
    }
  }
  for (int k = 0; k < n_outputs; k++) outputs[k] = NULL;
  for (int k = 0; k < n_outputs && st == TSL_OK; k++) {
    const tsl_tensor *t = vals[g->outputs[k]];
    st = t ? copy_tensor(t, &outputs[k]) : tsl_error(TSL_ERR_INVALID, "ref: output %d was not computed", k);
  }
  if (st != TSL_OK)
    for (int k = 0; k < n_outputs; k++) {
      tsl_tensor_free(outputs[k]);
      outputs[k] = NULL;
    }
  for (int v = 0; v < g->n_values; v++)
    if (owned[v]) tsl_tensor_free(vals[v]);
  free(vals);
  free(owned);
  free(last_use);
  return st;
}
