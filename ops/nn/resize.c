/* Resize: nearest and N-linear interpolation with ONNX's coordinate transforms
 * (generators.h), in exact integer arithmetic.
 *
 * ONNX (docs/Operators.md, Resize-19) maps output index x of an axis to the input
 * coordinate x_original, e.g. (x + 0.5) / scale - 0.5 for half_pixel. The scale is a
 * float32 (or out/in for sizes), hence an exact ratio num/den, and every transform is
 * then x_original = (A*x + B) / D with integers A, B, D > 0. The kernel evaluates it with
 * the DSL's floor division: nearest rounding, the linear neighbours and their weight
 * (the remainder over D) come out exact, so ties (round_prefer_floor/ceil) are decided
 * like the ONNX reference's float64 ones, never by float rounding. Neighbours outside
 * the input are clamped to its edge (the reference's edge padding). */
#include "ops/nn/resize.h"

#include "ops/nn/generators.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |A|*out + |B| and D below this keep every index computation inside i64 */
#define RATIO_LIMIT 0x1p60
/* An index expression: "min(max((A*L + B) / D, 0), IN)" with three integers below 2^60
 * (19 digits) and L (below 48 characters) takes under 150 characters. */
#define IDX_CHARS 192

tsl_status tsl_resize_scale_ratio(double scale, int64_t *num, int64_t *den) {
  if (!(scale > 0.0) || !isfinite(scale))
    return tsl_error(TSL_ERR_INVALID, "resize: scale %g (must be positive and finite)", scale);
  int e;
  double f = frexp(scale, &e); /* scale = f * 2^e, f in [0.5, 1) */
  int64_t m = (int64_t)ldexp(f, 53);
  e -= 53;
  while (!(m & 1)) {
    m >>= 1;
    e++;
  }
  if (e >= 0) {
    if (e > 60 || m > (INT64_C(1) << (60 - e)))
      return tsl_error(TSL_ERR_UNSUPPORTED, "resize: scale %g too large", scale);
    *num = m << e;
    *den = 1;
  } else {
    if (-e > 60) return tsl_error(TSL_ERR_UNSUPPORTED, "resize: scale %g too small to resolve exactly", scale);
    *num = m;
    *den = INT64_C(1) << -e;
  }
  return TSL_OK;
}

static int64_t gcd(int64_t a, int64_t b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* One axis: x_original = (a*x + b) / d; identity when the axis is not resized. */
typedef struct axis_map {
  bool identity, down; /* down: the scale is below 1 */
  int64_t a, b, d;
} axis_map;

static const char *const coord_modes[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",
                                          "asymmetric",           "tf_half_pixel_for_nn", "half_pixel_symmetric",
                                          NULL};
static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple", NULL};

static bool listed(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return true;
  return false;
}

/* The transform of one axis (in -> out extents, scale sn/sd) for coordinate mode `cm`,
 * in doubles first so that an overflow is seen before any integer is formed. */
static tsl_status map_axis(const char *cm, int64_t in, int64_t out, int64_t sn, int64_t sd, axis_map *m) {
  double a, b, d;
  bool one = (double)in * (double)sn == (double)sd; /* length_resized = in * scale is 1 */
  if (strcmp(cm, "half_pixel") == 0 || (strcmp(cm, "pytorch_half_pixel") == 0 && !one)) {
    a = 2.0 * sd, b = (double)sd - (double)sn, d = 2.0 * sn;
  } else if (strcmp(cm, "pytorch_half_pixel") == 0 || (strcmp(cm, "align_corners") == 0 && one)) {
    a = 0, b = 0, d = 1;
  } else if (strcmp(cm, "align_corners") == 0) {
    a = (double)(in - 1) * sd, b = 0, d = (double)in * sn - (double)sd;
  } else if (strcmp(cm, "asymmetric") == 0) {
    a = (double)sd, b = 0, d = (double)sn;
  } else if (strcmp(cm, "tf_half_pixel_for_nn") == 0) {
    a = 2.0 * sd, b = (double)sd, d = 2.0 * sn;
  } else { /* half_pixel_symmetric (opset 19) */
    a = 2.0 * sd, b = (double)(in - 1) * sn + (double)(1 - out) * sd, d = 2.0 * sn;
  }
  /* nearest rounding doubles a, b and d and adds d to b (resize_index) */
  if (d <= 0 || 2.0 * fabs(a) * (double)out + 2.0 * fabs(b) + 2.0 * d >= RATIO_LIMIT || 2.0 * d >= RATIO_LIMIT)
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "resize: the coordinate transform %s of extent %lld -> %lld at scale %lld/%lld needs integers "
                     "beyond 2^60",
                     cm, (long long)in, (long long)out, (long long)sn, (long long)sd);
  m->a = (int64_t)a, m->b = (int64_t)b, m->d = (int64_t)d;
  int64_t g = gcd(gcd(m->a, m->b), m->d);
  m->a /= g, m->b /= g, m->d /= g;
  /* an axis of one element reads index 0 whatever the transform (align_corners and
   * pytorch_half_pixel map it by a = 0: N = 1 in NCHW[x]c) */
  m->identity = in == out && (in == 1 || (m->a == m->d && m->b == 0));
  m->down = sn < sd;
  return TSL_OK;
}

/* Appends "(a*L + b)" for logical index expression L. */
static void put_affine(tsl_text_buf *b, int64_t a, const char *L, int64_t c) {
  tsl_text_put(b, "(%lld*%s", (long long)a, L);
  if (c) tsl_text_put(b, " %c %lld", c < 0 ? '-' : '+', (long long)(c < 0 ? -c : c));
  tsl_text_put(b, ")");
}

/* Appends the input index min(max(floor((a*L + b) / d), 0), in - 1). */
static void put_clamped(tsl_text_buf *b, int64_t a, const char *L, int64_t c, int64_t d, int64_t in) {
  tsl_text_put(b, "min(max(");
  put_affine(b, a, L, c);
  tsl_text_put(b, " / %lld, 0), %lld)", (long long)d, (long long)(in - 1));
}

/* The layouts: argument 0 (input) and 1 (output), plain or NCHW[x]c of a rank-4 tensor
 * whose channel axis is not resized. */
typedef struct resize_ctx {
  int r;
  const tsl_op_tensor *x, *y;
  axis_map map[TSL_MAX_NDIM];
  char L[TSL_MAX_NDIM][48]; /* logical output index of each axis */
  const char *nearest;
  bool linear;
  /* the last axis split as x = f*k + j (k axis i{r-1}, j axis i{r}) when its input index
   * is k + o0 for j < t and k + o1 from t on: the reads are then the same for a whole
   * row of f outputs (no gathers), picked by j */
  bool split;
  int64_t f, t, o0, o1;
} resize_ctx;

/* The input index of axis d is floor((a*L + b) / d) (then clamped). */
typedef struct form {
  int64_t a, b, d;
} form;

static int64_t floor_div(int64_t n, int64_t d) { return n / d - (n % d != 0 && (n < 0) != (d < 0)); }

/* Axis d's index for linear neighbour `side` (0: below, 1: above) or for nearest:
 * floor, ceil = floor((n + d - 1) / d), round half down = ceil(n/d - 1/2) =
 * floor((2n + d - 1) / 2d), round half up = floor((2n + d) / 2d). */
static form read_form(const resize_ctx *c, int d, int side) {
  const axis_map *m = &c->map[d];
  const char *nm = c->nearest;
  if (c->linear) return (form){m->a, m->b + side * m->d, m->d};
  if (strcmp(nm, "round_prefer_floor") == 0) return (form){2 * m->a, 2 * m->b + m->d - 1, 2 * m->d};
  if (strcmp(nm, "round_prefer_ceil") == 0) return (form){2 * m->a, 2 * m->b + m->d, 2 * m->d};
  if (strcmp(nm, "ceil") == 0 || (strcmp(nm, "simple") == 0 && m->down)) return (form){m->a, m->b + m->d - 1, m->d};
  return (form){m->a, m->b, m->d};
}

/* Whether the last axis splits (resize_ctx): a plain output whose last axis is upsampled
 * by an integer f in 4..64 (the row of f outputs is one vector or a few). */
static void find_split(resize_ctx *c) {
  int l = c->r - 1;
  if (c->y->block || c->map[l].identity || c->r >= TSL_MAX_NDIM) return;
  form f = read_form(c, l, 0);
  int64_t g = gcd(f.a, f.d), period = f.d / g;
  if (f.a <= 0 || f.a / g != 1 || period < 4 || period > 64 || c->y->shape[l] % period) return;
  c->f = period;
  c->o0 = c->o1 = floor_div(f.b, f.d);
  c->t = period;
  for (int64_t j = 1; j < period; j++) {
    int64_t o = floor_div(f.a * j + f.b, f.d);
    if (o != c->o1 && c->t < period) return; /* a third value: cannot happen with a / g == 1 */
    if (o != c->o1) c->t = j, c->o1 = o;
  }
  c->split = true;
}

/* x0[...] at the input indices idx[d] (expressions), in the input's layout. */
static void put_read(tsl_text_buf *b, const resize_ctx *c, char idx[][IDX_CHARS]) {
  tsl_text_put(b, "x0[");
  if (c->x->block && c->y->block) {
    tsl_text_put(b, "%s, i1, %s, %s, i4]", idx[0], idx[2], idx[3]);
    return;
  }
  if (c->x->block) {
    tsl_text_put(b, "%s, %s / %d, %s, %s, %s %% %d]", idx[0], idx[1], c->x->block, idx[2], idx[3], idx[1], c->x->block);
    return;
  }
  for (int d = 0; d < c->r; d++) tsl_text_put(b, "%s%s", d ? ", " : "", idx[d]);
  tsl_text_put(b, "]");
}

/* The value at the split last axis, neighbour `side`: select(j < t, read at k + o0,
 * read at k + o1), the other axes' indices in idx. */
static void put_split_read(tsl_text_buf *b, const resize_ctx *c, int side, char idx[][IDX_CHARS]) {
  int l = c->r - 1;
  int64_t in = c->x->shape[l];
  if (c->t < c->f) tsl_text_put(b, "select(i%d < %lld, ", c->r, (long long)c->t);
  for (int part = 0; part < (c->t < c->f ? 2 : 1); part++) {
    int64_t o = (part ? c->o1 : c->o0) + side;
    snprintf(idx[l], sizeof idx[l], "min(max(i%d %c %lld, 0), %lld)", l, o < 0 ? '-' : '+', (long long)(o < 0 ? -o : o),
             (long long)(in - 1));
    if (part) tsl_text_put(b, ", ");
    put_read(b, c, idx);
  }
  if (c->t < c->f) tsl_text_put(b, ")");
}

/* The output value from axis `from` on, idx holding the indices chosen for the axes
 * before it: a read (nearest) or the weighted sum over the 2^k corners of the resized
 * axes (linear). */
static void put_value(tsl_text_buf *b, const resize_ctx *c, int from, char idx[][IDX_CHARS]) {
  int d = from;
  while (d < c->r && c->map[d].identity) snprintf(idx[d], sizeof idx[d], "%s", c->L[d]), d++;
  if (d == c->r) {
    put_read(b, c, idx);
    return;
  }
  int64_t in = c->x->shape[d];
  bool split = c->split && d == c->r - 1;
  tsl_text_buf e = {0};
  for (int side = 0; side < (c->linear ? 2 : 1); side++) {
    if (c->linear) tsl_text_put(b, side ? " + w%d[i%d] * (" : "(1.0 - w%d[i%d]) * (", d, split ? c->r : d);
    if (split) {
      put_split_read(b, c, side, idx);
    } else {
      form f = read_form(c, d, side);
      e.len = 0;
      put_clamped(&e, f.a, c->L[d], f.b, f.d, in);
      snprintf(idx[d], sizeof idx[d], "%s", e.oom ? "0" : e.s);
      put_value(b, c, d + 1, idx);
    }
    if (c->linear) tsl_text_put(b, ")");
  }
  free(e.s);
}

tsl_status tsl_resize_text(const tsl_op_call *call, tsl_op_text *t) {
  if (call->nargs != 2 || call->ninputs != 1)
    return tsl_error(TSL_ERR_INVALID, "resize: one input and one output, not %d and %d", call->ninputs,
                     call->nargs - call->ninputs);
  resize_ctx c = {.r = call->args[0].ndim, .x = &call->args[0], .y = &call->args[1]};
  const char *mode = tsl_op_call_string(call, "mode", "nearest");
  c.nearest = tsl_op_call_string(call, "nearest_mode", "round_prefer_floor");
  const char *cm = tsl_op_call_string(call, "coordinate_transformation_mode", "half_pixel");
  int nn, nd;
  const int64_t *num = tsl_op_call_ints(call, "scale_num", &nn), *den = tsl_op_call_ints(call, "scale_den", &nd);
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
    return tsl_error(TSL_ERR_UNSUPPORTED, "resize: mode '%s' (nearest and linear are supported)", mode);
  c.linear = strcmp(mode, "linear") == 0;
  if (!listed(cm, coord_modes))
    return tsl_error(TSL_ERR_UNSUPPORTED, "resize: coordinate_transformation_mode '%s' is not supported", cm);
  if (!listed(c.nearest, nearest_modes))
    return tsl_error(TSL_ERR_UNSUPPORTED, "resize: nearest_mode '%s' is not supported", c.nearest);
  if (c.y->ndim != c.r || !num || !den || nn != c.r || nd != c.r)
    return tsl_error(TSL_ERR_INVALID, "resize: rank %d -> %d with %d/%d scale ratios", c.r, c.y->ndim, nn, nd);
  bool blocked = c.x->block || c.y->block;
  if (blocked && (c.r != 4 || (c.x->block && c.y->block && c.x->block != c.y->block)))
    return tsl_error(TSL_ERR_UNSUPPORTED, "resize: NCHW[x]c is rank 4 with one block (rank %d, blocks %d -> %d)", c.r,
                     c.x->block, c.y->block);
  for (int d = 0; d < c.r; d++) {
    if (num[d] < 1 || den[d] < 1 || c.x->shape[d] < 1 || c.y->shape[d] < 1)
      return tsl_error(TSL_ERR_INVALID, "resize: axis %d: extent %lld -> %lld, scale %lld/%lld", d,
                       (long long)c.x->shape[d], (long long)c.y->shape[d], (long long)num[d], (long long)den[d]);
    tsl_status st = map_axis(cm, c.x->shape[d], c.y->shape[d], num[d], den[d], &c.map[d]);
    if (st != TSL_OK) return st;
    snprintf(c.L[d], sizeof c.L[d], "i%d", d);
  }
  if (blocked && (!c.map[0].identity || !c.map[1].identity))
    return tsl_error(TSL_ERR_UNSUPPORTED, "resize: in NCHW[x]c only H and W may be resized");
  int64_t C = c.x->shape[1], X = c.y->block;
  if (X) snprintf(c.L[1], sizeof c.L[1], "min(i1*%lld + i4, %lld)", (long long)X, (long long)(C - 1));
  find_split(&c);
  /* views: each argument as stored, the output's last axis as [out / f, f] when split */
  for (int a = 0; a < 2; a++) {
    const tsl_op_tensor *v = &call->args[a];
    int64_t s[TSL_MAX_NDIM];
    int nd = v->block ? 5 : v->ndim;
    for (int d = 0; d < v->ndim; d++) s[d] = v->shape[d];
    if (v->block) s[1] = (v->shape[1] + v->block - 1) / v->block, s[4] = v->block;
    if (a == 1 && c.split) s[c.r - 1] /= c.f, s[nd++] = c.f;
    tsl_op_text_view(t, a, nd, s);
  }
  snprintf(t->label, sizeof t->label, "resize_%s%s%s%s", mode, c.x->block ? "_from_nchwc" : "", X ? "_to_nchwc" : "",
           c.split ? "_rows" : "");
  tsl_op_text_header(t, 1);
  tsl_text_buf *b = &t->text;
  for (int d = 0; c.linear && d < c.r; d++) {
    if (c.map[d].identity) continue;
    bool split = c.split && d == c.r - 1; /* the weight depends on j only */
    int ax = split ? c.r : d;
    char L[16];
    snprintf(L, sizeof L, "i%d", ax);
    tsl_text_put(b, "  w%d[i%d] = f32(", d, ax);
    put_affine(b, c.map[d].a, split ? L : c.L[d], c.map[d].b);
    tsl_text_put(b, " %% %lld) / %lld\n    where i%d < %lld\n", (long long)c.map[d].d, (long long)c.map[d].d, ax,
                 (long long)(split ? c.f : c.y->shape[d]));
  }
  int ond = t->ndims[1];
  tsl_text_put(b, "  out[");
  for (int d = 0; d < ond; d++) tsl_text_put(b, "%si%d", d ? ", " : "", d);
  tsl_text_put(b, "] = ");
  bool guard = X && C % X;
  if (guard) tsl_text_put(b, "select(i1*%lld + i4 < %lld, ", (long long)X, (long long)C);
  char idx[TSL_MAX_NDIM][IDX_CHARS];
  put_value(b, &c, 0, idx);
  if (guard) tsl_text_put(b, ", 0.0)");
  tsl_text_put(b, "\n    where ");
  for (int d = 0; d < ond; d++) tsl_text_put(b, "%si%d < %lld", d ? ", " : "", d, (long long)t->views[1][d]);
  tsl_text_put(b, "\n");
  return TSL_OK;
}
