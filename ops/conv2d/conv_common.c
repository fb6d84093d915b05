/* Geometry, kernel names and the register-tile loop nest shared by the NCHW[x]c
 * convolution templates (conv_common.h). */
#include "ops/conv2d/conv_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/analysis.h"
#include "ir/passes/mutate.h"
#include "ir/passes/unroll.h"
#include "ops/conv2d/conv2d_layer.h"

/* ---- geometry --------------------------------------------------------------- */

/* The first load of buf in e (depth-first), or NULL. */
static const tsl_expr *find_load(const tsl_expr *e, const tsl_buffer *buf) {
  if (!e) return NULL;
  switch (e->kind) {
  case TSL_E_INT: case TSL_E_FLOAT: case TSL_E_VAR: return NULL;
  case TSL_E_LOAD:
    if (e->load.buf == buf) return e;
    for (int i = 0; i < e->load.nindex; i++) {
      const tsl_expr *r = find_load(e->load.index[i], buf);
      if (r) return r;
    }
    return find_load(e->load.predicate, buf);
  case TSL_E_NOT: case TSL_E_CAST: return find_load(e->un.a, buf);
  case TSL_E_SELECT: {
    const tsl_expr *r = find_load(e->select.cond, buf);
    if (!r) r = find_load(e->select.t, buf);
    return r ? r : find_load(e->select.f, buf);
  }
  case TSL_E_BROADCAST: return find_load(e->broadcast.value, buf);
  case TSL_E_RAMP: {
    const tsl_expr *r = find_load(e->ramp.base, buf);
    return r ? r : find_load(e->ramp.stride, buf);
  }
  case TSL_E_CALL:
    for (int i = 0; i < e->call.nargs; i++) {
      const tsl_expr *r = find_load(e->call.args[i], buf);
      if (r) return r;
    }
    return NULL;
  case TSL_E_LET: {
    const tsl_expr *r = find_load(e->let.value, buf);
    return r ? r : find_load(e->let.body, buf);
  }
  case TSL_E_REDUCE: {
    const tsl_expr *r = find_load(e->reduce.source, buf);
    return r ? r : find_load(e->reduce.condition, buf);
  }
  default: {
    const tsl_expr *r = find_load(e->bin.a, buf);
    return r ? r : find_load(e->bin.b, buf);
  }
  }
}

/* The value of e with every var of vars set to 0 except `one` (set to 1 when not
 * NULL); false when it does not simplify to a constant. */
static bool eval_at_value(tsl_expr *e, int n, tsl_expr *const *vars, const tsl_expr *one, int64_t value,
                          int64_t *out) {
  tsl_expr *vals[16];
  if (n > 16) return false;
  for (int i = 0; i < n; i++) vals[i] = tsl_i64(vars[i] == one ? value : 0);
  tsl_expr *v = tsl_simplify(tsl_substitute(e, n, vars, vals), NULL);
  while (v->kind == TSL_E_CAST) v = tsl_simplify(v->un.a, NULL);
  return tsl_expr_is_const_int(v, out);
}

static bool eval_at(tsl_expr *e, int n, tsl_expr *const *vars, const tsl_expr *one, int64_t *out) {
  return eval_at_value(e, n, vars, one, 1, out);
}

/* Coefficient of var in e, linear in vars. */
static bool coefficient(tsl_expr *e, int n, tsl_expr *const *vars, const tsl_expr *var, int64_t *out) {
  int64_t a, z;
  if (!eval_at(e, n, vars, var, &a) || !eval_at(e, n, vars, NULL, &z)) return false;
  *out = a - z;
  return true;
}

static const tsl_iter_var *reduce_axis_named(const tsl_te_op *op, const char *name) {
  for (int i = 0; i < op->nreduce; i++)
    if (strcmp(op->reduce_axis[i].var->var.name, name) == 0) return &op->reduce_axis[i];
  return NULL;
}

static bool reads_placeholder(const tsl_te_op *op, const char *name) {
  for (int i = 0; i < op->ninputs; i++)
    if (op->inputs[i]->op->kind == TSL_TE_PLACEHOLDER && strcmp(op->inputs[i]->buf->name, name) == 0) return true;
  return false;
}

static const tsl_expr *strip_casts(const tsl_expr *e) {
  while (e->kind == TSL_E_CAST) e = e->un.a;
  return e;
}

static bool is_float_const(const tsl_expr *e, double *v) {
  e = strip_casts(e);
  if (e->kind != TSL_E_FLOAT) return false;
  *v = e->float_value;
  return true;
}

static const char *activation_of(tsl_expr *body) {
  /* the op's `act == 1 ? ... : ...` chain is constant once instantiated: simplify folds it */
  const tsl_expr *e = strip_casts(tsl_simplify(body, NULL));
  double lo, hi;
  if (e->kind == TSL_E_MAX && (is_float_const(e->bin.b, &lo) || is_float_const(e->bin.a, &lo)) && lo == 0.0)
    return "relu";
  if (e->kind == TSL_E_MIN && is_float_const(e->bin.b, &hi)) {
    const tsl_expr *m = strip_casts(e->bin.a);
    if (m->kind == TSL_E_MAX && is_float_const(m->bin.b, &lo)) return lo == 0.0 && hi == 6.0 ? "relu6" : "clip";
  }
  return "";
}

/* The comparisons `e >= 0` of a condition (an && tree), in text order. */
static int ge_zero_terms(const tsl_expr *c, const tsl_expr **out, int max, int n) {
  if (!c || n >= max) return n;
  if (c->kind == TSL_E_AND) return ge_zero_terms(c->bin.b, out, max, ge_zero_terms(c->bin.a, out, max, n));
  int64_t z;
  if (c->kind == TSL_E_GE && tsl_expr_is_const_int(strip_casts(c->bin.b), &z) && z == 0) out[n++] = c->bin.a;
  return n;
}

/* An im2col conv's pad_bottom / pad_right: the padding below / right that its output
 * extents OH, OW reach (the floor division may drop a few rows of the stated padding;
 * those rows are never read). */
static void set_reached_pads(tpl_conv_geometry *g) {
  g->pad_bottom = tpl_max(0, (g->OH - 1) * g->stride_h + g->dilation_h * (g->R - 1) + 1 - g->data->shape[2] - g->pad_top);
  g->pad_right = tpl_max(0, (g->OW - 1) * g->stride_w + g->dilation_w * (g->S - 1) + 1 - g->data->shape[3] - g->pad_left);
}

/* An im2col conv (ops/conv2d/im2col.c): the col stage's select guards hold the input row
 * and column of a tap, y_in = (p / OW)*sh + r*dh - pad_top with p = po*pack_rows + pi
 * (likewise x_in with p % OW): their values at chosen points give the geometry. */
static tsl_status im2col_geometry(const tsl_te_program *p, const tsl_te_op *col, const char *who,
                                  tpl_conv_geometry *g) {
  const tsl_expr *body = strip_casts(col->body);
  const tsl_expr *terms[4];
  int nt = body->kind == TSL_E_SELECT ? ge_zero_terms(body->select.cond, terms, 4, 0) : 0;
  if (nt != 2 || col->naxis != 6)
    return tsl_error(TSL_ERR_INVALID, "%s: cannot read the geometry of %s from its im2col stage", who,
                     p->name ? p->name : "?");
  tsl_expr *vars[6];
  for (int i = 0; i < 6; i++) vars[i] = col->axis[i].var;
  tsl_expr *pi = vars[5], *r = vars[3], *s = vars[4];
  int64_t P = g->conv->axis[2].extent, y0, y1, x0, x1, yr, xs;
  tsl_expr *ye = (tsl_expr *)terms[0], *xe = (tsl_expr *)terms[1];
  /* OW: the first pixel whose input row differs from pixel 0's (P when there is one row) */
  int64_t OW = P;
  if (!eval_at_value(ye, 6, vars, NULL, 0, &y0))
    return tsl_error(TSL_ERR_INVALID, "%s: cannot evaluate the im2col taps of %s", who, p->name ? p->name : "?");
  for (int64_t q = 1; q < P; q++) {
    if (!eval_at_value(ye, 6, vars, pi, q, &y1))
      return tsl_error(TSL_ERR_INVALID, "%s: cannot evaluate the im2col taps of %s", who, p->name ? p->name : "?");
    if (y1 != y0) {
      OW = q;
      break;
    }
  }
  g->OW = OW;
  g->OH = P / OW;
  /* p = OW (pi = OW, po = 0) is the first pixel of the second output row */
  if (!eval_at_value(ye, 6, vars, NULL, 0, &y0) || !eval_at_value(ye, 6, vars, pi, OW, &y1) ||
      !eval_at_value(ye, 6, vars, r, 1, &yr) || !eval_at_value(xe, 6, vars, NULL, 0, &x0) ||
      !eval_at_value(xe, 6, vars, pi, 1, &x1) || !eval_at_value(xe, 6, vars, s, 1, &xs))
    return tsl_error(TSL_ERR_INVALID, "%s: cannot evaluate the im2col taps of %s", who, p->name ? p->name : "?");
  g->stride_h = y1 - y0;
  g->stride_w = OW > 1 ? x1 - x0 : 1;
  g->dilation_h = yr - y0;
  g->dilation_w = xs - x0;
  g->pad_top = -y0;
  g->pad_left = -x0;
  set_reached_pads(g);
  return TSL_OK;
}

/* The kernel-name word of the layer's activation (the epilogue's act parameter). */
static const char *activation_name(const tsl_conv2d_layer *l) {
  if (l->act == TSL_CONV2D_ACT_RELU) return "relu";
  if (l->act == TSL_CONV2D_ACT_CLIP) return l->clip_min == 0.0 && l->clip_max == 6.0 ? "relu6" : "clip";
  return "";
}

/* The strides, dilations and leading pads a program states (its parameters, read into l). */
static void set_stated_window(tpl_conv_geometry *g, const tsl_conv2d_layer *l) {
  g->stride_h = l->stride_h;
  g->stride_w = l->stride_w;
  g->dilation_h = l->dilation_h;
  g->dilation_w = l->dilation_w;
  g->pad_top = l->pad_top;
  g->pad_left = l->pad_left;
}

/* An im2col conv's geometry from its parameters: the output extents of the window
 * formula, the bottom/right padding the last output row / column reaches. */
static tsl_status im2col_geometry_of_params(const tsl_te_program *p, const tsl_conv2d_layer *l, const char *who,
                                           tpl_conv_geometry *g) {
  int64_t H = g->data->shape[2], W = g->data->shape[3], OH, OW;
  tsl_status st = tsl_window_out_extent(H, l->pad_top, l->pad_bottom, g->R, l->stride_h, l->dilation_h, false, &OH);
  if (st == TSL_OK)
    st = tsl_window_out_extent(W, l->pad_left, l->pad_right, g->S, l->stride_w, l->dilation_w, false, &OW);
  if (st != TSL_OK || OH * OW != g->conv->axis[2].extent)
    return tsl_error(TSL_ERR_INVALID, "%s: the parameters of %s do not give its %lld output pixels", who,
                     p->name ? p->name : "?", (long long)g->conv->axis[2].extent);
  g->OH = OH;
  g->OW = OW;
  set_stated_window(g, l);
  if (OW == 1) g->stride_w = 1;
  set_reached_pads(g);
  return TSL_OK;
}

tsl_status tpl_conv_geometry_of(const tsl_te_program *p, const char *tag, const char *who, tpl_conv_geometry *g) {
  memset(g, 0, sizeof *g);
  if (!p || p->ninputs < 1 || p->noutputs != 1)
    return tsl_error(TSL_ERR_INVALID, "%s: program %s is not a window operator (needs data and one output)", who,
                     p && p->name ? p->name : "?");
  const tsl_te_op *conv = tpl_find_tagged(p, tag);
  if (!conv || (conv->naxis != 5 && conv->naxis != 4) || conv->body->kind != TSL_E_REDUCE)
    return tsl_error(TSL_ERR_INVALID,
                     "%s: program %s has no reduction stage tagged \"%s\" over [n, kb, y, x, k] or [n, kb, p, k]", who,
                     p->name ? p->name : "?", tag);
  g->conv = conv;
  g->out = p->outputs[0]->op;
  g->data = p->inputs[0]->buf;
  g->weight = p->ninputs >= 2 ? p->inputs[1]->buf : NULL;
  if (g->data->ndim != 5 && !(g->data->ndim == 4 && conv->naxis == 4))
    return tsl_error(TSL_ERR_INVALID, "%s: the data of %s is not NCHW[x]c (rank %d)", who, p->name ? p->name : "?",
                     g->data->ndim);
  const tsl_te_op *padded = tpl_find_named(p, "padded");
  g->padded = padded && padded->naxis == 5 ? padded : NULL;
  g->X = g->data->shape[g->data->ndim - 1];
  g->Y = conv->axis[conv->naxis - 1].extent;
  g->flat = conv->naxis == 4;
  const tsl_iter_var *r = reduce_axis_named(conv, "r"), *s = reduce_axis_named(conv, "s");
  g->R = r ? r->extent : 1;
  g->S = s ? s->extent : 1;

  g->has_epilogue = g->out != conv;
  g->has_bias = g->has_epilogue && reads_placeholder(g->out, "bias");
  g->has_residual = g->has_epilogue && reads_placeholder(g->out, "residual");
  /* the library's window operators state their window and activation as parameters
   * (ops/conv2d/conv2d_layer.h reads them); a program without them (a conv written
   * directly in the DSL) has them read off its stages */
  tsl_conv2d_layer L;
  memset(&L, 0, sizeof L);
  bool stated = tsl_conv2d_params_have_window(p->nparams, p->params) &&
                tsl_conv2d_layer_read_params(p->nparams, p->params, &L) == TSL_OK;
  g->act = !g->has_epilogue ? "" : stated ? activation_name(&L) : activation_of(g->out->body);
  const tsl_te_op *col = tpl_find_tagged(p, "im2col");
  if (col) return stated ? im2col_geometry_of_params(p, &L, who, g) : im2col_geometry(p, col, who, g);
  g->stride_h = g->stride_w = g->dilation_h = g->dilation_w = 1;
  if (g->flat) {
    /* a 1x1 conv as a GEMM over flattened pixels: no window, no padding */
    g->OH = conv->axis[2].extent;
    g->OW = 1;
    return TSL_OK;
  }
  g->OH = conv->axis[2].extent;
  g->OW = conv->axis[3].extent;
  if (stated) {
    set_stated_window(g, &L);
    /* the padding the padding stage holds below / right of the input (a pooling op's
     * stage has a stride more than its pad_bottom / pad_right: ceil mode's last window) */
    g->pad_bottom = g->padded ? g->padded->axis[2].extent - g->data->shape[2] - g->pad_top : L.pad_bottom;
    g->pad_right = g->padded ? g->padded->axis[3].extent - g->data->shape[3] - g->pad_left : L.pad_right;
    return TSL_OK;
  }

  /* strides and dilations from the conv's spatial read */
  const tsl_buffer *src = g->padded ? g->padded->output->buf : g->data;
  const tsl_expr *ld = find_load(conv->body, src);
  tsl_expr *vars[16];
  int nv = 0;
  for (int i = 0; i < conv->naxis && nv < 16; i++) vars[nv++] = conv->axis[i].var;
  for (int i = 0; i < conv->nreduce && nv < 16; i++) vars[nv++] = conv->reduce_axis[i].var;
  if (!ld || ld->load.nindex != 5 || !coefficient(ld->load.index[2], nv, vars, conv->axis[2].var, &g->stride_h) ||
      !coefficient(ld->load.index[3], nv, vars, conv->axis[3].var, &g->stride_w) ||
      (r && !coefficient(ld->load.index[2], nv, vars, r->var, &g->dilation_h)) ||
      (s && !coefficient(ld->load.index[3], nv, vars, s->var, &g->dilation_w)))
    return tsl_error(TSL_ERR_INVALID, "%s: cannot read the strides of %s from its read of %s", who,
                     p->name ? p->name : "?", src->name);

  /* paddings from the padding stage's read of the data */
  if (g->padded) {
    const tsl_expr *dl = find_load(g->padded->body, g->data);
    tsl_expr *pv[5];
    for (int i = 0; i < 5; i++) pv[i] = g->padded->axis[i].var;
    int64_t t0, l0;
    if (!dl || dl->load.nindex != 5 || !eval_at(dl->load.index[2], 5, pv, NULL, &t0) ||
        !eval_at(dl->load.index[3], 5, pv, NULL, &l0))
      return tsl_error(TSL_ERR_INVALID, "%s: cannot read the paddings of %s", who, p->name ? p->name : "?");
    g->pad_top = -t0;
    g->pad_left = -l0;
    g->pad_bottom = g->padded->axis[2].extent - g->data->shape[2] - g->pad_top;
    g->pad_right = g->padded->axis[3].extent - g->data->shape[3] - g->pad_left;
  }
  return TSL_OK;
}

bool tpl_conv_input_varies_with_lane(const tpl_conv_geometry *g) {
  const tsl_te_op *conv = g->conv;
  const tsl_buffer *src = g->padded ? g->padded->output->buf : g->data;
  const tsl_expr *ld = find_load(conv->body, src);
  if (!ld) return true;
  tsl_var_ranges *ranges = tsl_var_ranges_new();
  for (int i = 0; i < conv->naxis; i++)
    tsl_var_ranges_set(ranges, conv->axis[i].var, tsl_interval_range(0, conv->axis[i].extent - 1));
  for (int i = 0; i < conv->nreduce; i++)
    tsl_var_ranges_set(ranges, conv->reduce_axis[i].var,
                       tsl_interval_range(conv->reduce_axis[i].min,
                                          conv->reduce_axis[i].min + conv->reduce_axis[i].extent - 1));
  const tsl_expr *lane = conv->axis[conv->naxis - 1].var;
  bool varies = false;
  for (int d = 0; d < ld->load.nindex && !varies; d++)
    varies = tsl_expr_uses_var(tsl_simplify(ld->load.index[d], ranges), lane);
  return varies;
}

double tpl_conv_tile_input_blocks(const tpl_conv_geometry *g, int64_t oc) {
  const tsl_te_op *conv = g->conv;
  const tsl_buffer *src = g->padded ? g->padded->output->buf : g->data;
  const tsl_expr *ld = find_load(conv->body, src);
  if (!ld || ld->load.nindex < 2 || conv->naxis < 2 || oc < 1 ||
      !tsl_expr_uses_var(ld->load.index[1], conv->axis[1].var))
    return 1.0;
  tsl_expr *vars[16];
  int nv = 0;
  for (int i = 0; i < conv->naxis && nv < 16; i++) vars[nv++] = conv->axis[i].var;
  for (int i = 0; i < conv->nreduce && nv < 16; i++) vars[nv++] = conv->reduce_axis[i].var;
  int64_t KB = conv->axis[1].extent, tiles = 0, distinct = 0;
  for (int64_t k0 = 0; k0 < KB; k0 += oc, tiles++) {
    int64_t prev = 0, v;
    for (int64_t kb = k0; kb < k0 + oc && kb < KB; kb++) {
      /* the read's block at the first reduction step of output block kb */
      if (!eval_at_value(ld->load.index[1], nv, vars, conv->axis[1].var, kb, &v)) return (double)oc;
      distinct += kb == k0 || v != prev;
      prev = v;
    }
  }
  return tiles ? (double)distinct / (double)tiles : 1.0;
}

/* ---- kernel names ------------------------------------------------------------ */

static void put(char *buf, size_t n, size_t *o, const char *fmt, long long a, long long b, long long c,
                long long d) {
  if (*o >= n) return;
  int w = snprintf(buf + *o, n - *o, fmt, a, b, c, d);
  if (w > 0) *o += (size_t)w;
}

const char *tpl_conv_kernel_name(const tpl_conv_geometry *g, const char *prefix, const char *variant, uint64_t hash,
                                 char *buf, size_t n) {
  size_t o = 0;
  if (!n) return buf;
  o = (size_t)snprintf(buf, n, "%s", prefix);
  if (o >= n) return buf;
  if (g->X == g->Y) put(buf, n, &o, "_nchw%lldc", (long long)g->X, 0, 0, 0);
  else put(buf, n, &o, "_nchw%lldc_o%lldc", (long long)g->X, (long long)g->Y, 0, 0);
  put(buf, n, &o, "_%lldx%lld", (long long)g->R, (long long)g->S, 0, 0);
  if (g->stride_h == g->stride_w) put(buf, n, &o, "_s%lld", (long long)g->stride_h, 0, 0, 0);
  else put(buf, n, &o, "_s%lldx%lld", (long long)g->stride_h, (long long)g->stride_w, 0, 0);
  if (g->pad_top == g->pad_left && g->pad_top == g->pad_bottom && g->pad_top == g->pad_right)
    put(buf, n, &o, "_p%lld", (long long)g->pad_top, 0, 0, 0);
  else
    put(buf, n, &o, "_p%lld_%lld_%lld_%lld", (long long)g->pad_top, (long long)g->pad_left, (long long)g->pad_bottom,
        (long long)g->pad_right);
  if (g->dilation_h != 1 || g->dilation_w != 1) {
    if (g->dilation_h == g->dilation_w) put(buf, n, &o, "_d%lld", (long long)g->dilation_h, 0, 0, 0);
    else put(buf, n, &o, "_d%lldx%lld", (long long)g->dilation_h, (long long)g->dilation_w, 0, 0);
  }
  put(buf, n, &o, "_f32", 0, 0, 0, 0);
  if (o < n && variant && *variant) o += (size_t)snprintf(buf + o, n - o, "_%s", variant);
  if (g->has_bias) put(buf, n, &o, "_bias", 0, 0, 0, 0);
  if (g->has_residual) put(buf, n, &o, "_add", 0, 0, 0, 0);
  if (o < n && g->act && *g->act) o += (size_t)snprintf(buf + o, n - o, "_%s", g->act);
  if (o < n) snprintf(buf + o, n - o, "__%08llx", (unsigned long long)(hash & 0xffffffffull));
  return buf;
}

/* ---- the register-tile loop nest --------------------------------------------- */

static tsl_expr *note_transcendental(tsl_mutator *m, tsl_expr *e) {
  if (e->kind == TSL_E_CALL && (e->call.op == TSL_CALL_EXP || e->call.op == TSL_CALL_LOG ||
                                e->call.op == TSL_CALL_TANH || e->call.op == TSL_CALL_ERF))
    *(bool *)m->ud = true;
  return tsl_mutate_expr_children(m, e);
}

bool tpl_conv_epilogue_transcendental(const tpl_conv_geometry *g) {
  bool found = false;
  if (!g->has_epilogue || !g->out || !g->out->body) return false;
  tsl_mutator m = {note_transcendental, NULL, &found};
  tsl_mutate_expr(&m, g->out->body);
  return found;
}

typedef struct tile_axes {
  tpl_name n, kbo, kbi, yo, yi, xo, xi, k;
  int64_t ext_n, ext_kbo, ext_yo, ext_xo;
  bool clean_kbo, clean_yo, clean_xo; /* the split leaves no tail */
} tile_axes;

/* Splits axis by factor when 1 < factor < extent; outer/inner get the leaf names, ""
 * for a part that does not exist (factor 1: no inner; factor >= extent: no outer). */
static void blocked(tpl_builder *b, const char *stage, const char *axis, int64_t factor, int64_t extent,
                    tpl_name outer, tpl_name inner) {
  outer[0] = inner[0] = '\0';
  if (factor <= 1) {
    snprintf(outer, TPL_NAME_LEN, "%s", axis);
  } else if (factor >= extent) {
    snprintf(inner, TPL_NAME_LEN, "%s", axis);
  } else {
    tpl_split(b, stage, axis, factor);
    tpl_cat(outer, axis, ".outer");
    tpl_cat(inner, axis, ".inner");
  }
}

/* Names of a stage's root iters 0..4 (output axes) copied before any step moves them. */
static bool root_names(const tpl_builder *b, const char *stage, int n, tpl_name names[5]) {
  const tsl_stage *st = tsl_schedule_stage(b->s, stage);
  if (!st || st->nroot < n || n > 5) return false;
  for (int i = 0; i < n; i++) snprintf(names[i], TPL_NAME_LEN, "%s", st->iters[i].name);
  return true;
}

static void make_tile_axes(tpl_builder *b, const char *stage, const tpl_conv_tile *t, int64_t N, tile_axes *a) {
  tpl_name r[5];
  if (b->st != TSL_OK) return;
  const tsl_stage *st = tsl_schedule_stage(b->s, stage);
  int nax = st ? st->op->naxis : 0;
  if ((nax != 4 && nax != 5) || !root_names(b, stage, nax, r)) {
    b->st = tsl_error(TSL_ERR_INVALID, "%s: stage %s does not have the axes [n, kb, y, x, k] or [n, kb, p, k]", b->who,
                      stage);
    return;
  }
  snprintf(a->n, TPL_NAME_LEN, "%s", r[0]);
  snprintf(a->k, TPL_NAME_LEN, "%s", r[nax - 1]);
  a->ext_n = N;
  blocked(b, stage, r[1], t->oc_blocks, t->KB, a->kbo, a->kbi);
  a->ext_kbo = tpl_ceil_div(t->KB, t->oc_blocks);
  a->clean_kbo = t->KB % t->oc_blocks == 0 || t->oc_blocks >= t->KB;
  if (nax == 4) {
    /* [n, kb, p, k]: the pixel axis is tiled like x */
    a->yo[0] = a->yi[0] = '\0';
    a->ext_yo = 1;
    a->clean_yo = true;
    blocked(b, stage, r[2], t->ow_block, t->OW, a->xo, a->xi);
    a->ext_xo = tpl_ceil_div(t->OW, t->ow_block);
    a->clean_xo = t->OW % t->ow_block == 0 || t->ow_block >= t->OW;
  } else {
    blocked(b, stage, r[2], t->oh_block, t->OH, a->yo, a->yi);
    blocked(b, stage, r[3], t->ow_block, t->OW, a->xo, a->xi);
    a->ext_yo = tpl_ceil_div(t->OH, t->oh_block);
    a->ext_xo = tpl_ceil_div(t->OW, t->ow_block);
    a->clean_yo = t->OH % t->oh_block == 0 || t->oh_block >= t->OH;
    a->clean_xo = t->OW % t->ow_block == 0 || t->ow_block >= t->OW;
  }
}

static void push(const char **list, int *n, const char *name) {
  if (name && name[0]) list[(*n)++] = name;
}

void tpl_elementwise_root(tpl_builder *b, const char *stage, int64_t lanes, bool parallel) {
  if (b->st != TSL_OK) return;
  const tsl_stage *st = tsl_schedule_stage(b->s, stage);
  if (!st) {
    b->st = tsl_error(TSL_ERR_INVALID, "%s: no stage %s", b->who, stage);
    return;
  }
  int nd = st->op->naxis;
  if (nd < 1 || nd > 7) return;
  tpl_name names[8];
  for (int i = 0; i < nd; i++) snprintf(names[i], TPL_NAME_LEN, "%s", st->iters[i].name);
  int64_t last = st->iters[nd - 1].extent;
  if (last > 1 && lanes > 1) {
    tpl_name inner;
    snprintf(inner, TPL_NAME_LEN, "%s", names[nd - 1]);
    if (last > lanes) {
      tpl_split(b, stage, names[nd - 1], lanes);
      tpl_cat(inner, names[nd - 1], ".inner");
      tpl_cat(names[nd - 1], names[nd - 1], ".outer");
      snprintf(names[nd], TPL_NAME_LEN, "%s", inner);
      nd++;
    }
    tpl_vectorize(b, stage, inner);
    nd--; /* the vectorized leaf is not fused */
  } else {
    nd--; /* keep the innermost loop serial */
  }
  if (parallel && nd >= 1) {
    const char *outer[3];
    int no = 0;
    for (int i = 0; i < nd && no < 3; i++) outer[no++] = names[i];
    tpl_name fused;
    tpl_fuse_all(b, stage, no, outer, fused);
    tpl_parallel(b, stage, fused);
  }
}

/* The loops of a stage over the conv's output axes (the output stage, or the row
 * buffer of the epilogue pass): outer loops, then the tile kb.inner, y.inner, x.inner, k
 * (kb.inner and y.inner unrolled, x.inner too when unroll_x, k vectorized). `inner`: the
 * stage is computed inside another stage's loop, so no parallel loop and x.outer stays
 * its own loop. Writes the innermost outer loop and the tile's attach loop (x.outer when
 * it exists) to innermost_outer and attach. Returns whether x.outer joined the parallel
 * loop or is it (then the tile's loops share it: no loop runs once per image and channel
 * tile). */
static bool output_nest(tpl_builder *b, const char *stage, const tpl_conv_tile *t, int64_t N, int64_t Y, bool chunked,
                        bool inner, bool unroll_x, tpl_name innermost_outer, tpl_name attach) {
  tile_axes o;
  memset(&o, 0, sizeof o);
  make_tile_axes(b, stage, t, N, &o);
  /* Outer loops: n, kb.outer, y.outer (loop_order 1: y.outer first). The ones whose split
   * leaves a tail go after the others: a tail guard on a loop fused with others is on a
   * division/modulo of the fused index, which loop partitioning cannot cut out, so it
   * would stay in the innermost loops (measured: a 2x slowdown, the accumulators
   * spilled around the branches). */
  const char *cand[2] = {t->loop_order == 0 ? o.kbo : o.yo, t->loop_order == 0 ? o.yo : o.kbo};
  int64_t cand_ext[2] = {t->loop_order == 0 ? o.ext_kbo : o.ext_yo, t->loop_order == 0 ? o.ext_yo : o.ext_kbo};
  bool cand_clean[2] = {t->loop_order == 0 ? o.clean_kbo : o.clean_yo, t->loop_order == 0 ? o.clean_yo : o.clean_kbo};
  const char *clean[4], *unclean[2];
  int nclean = 0, nunclean = 0;
  int64_t work = o.ext_n;
  push(clean, &nclean, o.n);
  for (int i = 0; i < 2; i++) {
    if (!cand[i][0]) continue;
    if (cand_clean[i]) {
      clean[nclean++] = cand[i];
      work *= cand_ext[i];
    } else {
      unclean[nunclean++] = cand[i];
    }
  }
  /* x.outer joins the parallel loop when that is all the parallelism there is, the whole
   * reduction sits in the tile and it has no tail */
  bool few = !inner && !chunked && o.xo[0] && nunclean == 0 && work < 4;
  bool take_xo = few && o.clean_xo;
  /* ... and when its split leaves a tail, x.outer is the parallel loop on its own,
   * outside the fused clean loops: its guard stays linear in it (SqueezeNet's 1x1
   * convs on 55 x 55 pixels, one channel tile: one thread idled) */
  bool outer_xo = few && !o.clean_xo && o.ext_xo > work;
  if (take_xo) clean[nclean++] = o.xo;
  const char *order[16];
  int no = 0;
  if (outer_xo) push(order, &no, o.xo);
  for (int i = 0; i < nclean; i++) push(order, &no, clean[i]);
  for (int i = 0; i < nunclean; i++) push(order, &no, unclean[i]);
  if (!take_xo && !outer_xo) push(order, &no, o.xo);
  /* y = 1 lane (plain NCHW): the columns of the tile are the vector instead of the
   * channel lanes (shared/cases C01: a row of 13 vectorized by 8 masks its tail) */
  bool vector_x = Y == 1 && o.xi[0];
  push(order, &no, o.kbi);
  push(order, &no, o.yi);
  if (!vector_x) push(order, &no, o.xi);
  push(order, &no, o.k);
  if (vector_x) push(order, &no, o.xi);
  tpl_reorder(b, stage, no, order);

  /* the parallel loop: the fused clean loops when they hold enough iterations, else the
   * first loop with a tail on its own (its guard stays linear) */
  tpl_name outer_fused;
  tpl_fuse_all(b, stage, nclean, clean, outer_fused);
  if (t->parallel && !inner) {
    if (outer_xo) tpl_parallel(b, stage, o.xo);
    else if (work >= 4 || nunclean == 0 || take_xo) tpl_parallel(b, stage, outer_fused);
    else tpl_parallel(b, stage, unclean[0]);
  }
  snprintf(innermost_outer, TPL_NAME_LEN, "%s", nunclean ? unclean[nunclean - 1] : outer_fused);
  if (!chunked && o.xo[0] && !take_xo && !outer_xo) snprintf(attach, TPL_NAME_LEN, "%s", o.xo);
  else snprintf(attach, TPL_NAME_LEN, "%s", innermost_outer);
  if (o.kbi[0]) tpl_unroll(b, stage, o.kbi);
  if (o.yi[0]) tpl_unroll(b, stage, o.yi);
  if (vector_x) tpl_vectorize(b, stage, o.xi);
  else if (o.xi[0] && unroll_x) tpl_unroll(b, stage, o.xi);
  if (Y > 1) tpl_vectorize(b, stage, o.k);
  return take_xo || outer_xo;
}

void tpl_conv_tile_schedule(tpl_builder *b, const tsl_te_program *p, const char *tag, const tpl_conv_tile *t) {
  if (b->st != TSL_OK) return;
  tpl_conv_geometry g;
  if ((b->st = tpl_conv_geometry_of(p, tag, b->who, &g)) != TSL_OK) return;
  tpl_name ostage, acc;
  snprintf(ostage, TPL_NAME_LEN, "%s", g.out->name);
  if (!g.has_epilogue) tpl_cache_write(b, ostage, acc);
  else snprintf(acc, TPL_NAME_LEN, "%s", g.conv->name);

  if (g.padded) {
    if (t->pad_stage == TPL_PAD_INLINE) tpl_compute_inline(b, g.padded->name);
    else if (t->pad_stage == TPL_PAD_ROOT) tpl_elementwise_root(b, g.padded->name, t->pad_vector ? g.X : 1, t->parallel);
  }
  bool chunked = t->chunk_axis && t->ic_chunk < t->CB;
  int64_t N = g.conv->axis[0].extent;

  /* the output stage: outer loops, then the tile (epilogue), or with the epilogue pass
   * the rows of tiles: the tile stage (a copy of the accumulators) computed per row of
   * the output's outer loops, the epilogue a loop over that row's columns */
  bool row_pass = t->epilogue_pass && g.has_epilogue && g.Y > 1 && !chunked;
  tpl_name tstage, innermost_outer, attach;
  bool take_xo = false;
  snprintf(tstage, TPL_NAME_LEN, "%s", ostage);
  if (row_pass) {
    const char *readers[1] = {ostage};
    tpl_cache_read(b, acc, 1, readers, tstage);
    tpl_conv_tile row = *t;
    row.ow_block = t->OW; /* the whole row: no x.outer */
    take_xo = output_nest(b, ostage, &row, N, g.Y, false, false, false, innermost_outer, attach);
    tpl_name row_outer, unused;
    snprintf(row_outer, TPL_NAME_LEN, "%s", innermost_outer);
    output_nest(b, tstage, t, N, g.Y, false, true, true, unused, attach);
    tpl_compute_at(b, tstage, ostage, row_outer);
  } else {
    take_xo = output_nest(b, ostage, t, N, g.Y, chunked, false, true, innermost_outer, attach);
  }
  bool vector_x = g.Y == 1 && t->ow_block > 1;

  /* the accumulating stage */
  tile_axes a;
  memset(&a, 0, sizeof a);
  make_tile_axes(b, acc, t, N, &a);
  tpl_name cbo = "", cbi = "";
  if (chunked) {
    tpl_split(b, acc, t->chunk_axis, t->ic_chunk);
    tpl_cat(cbo, t->chunk_axis, ".outer");
    tpl_cat(cbi, t->chunk_axis, ".inner");
  }
  const char *order[16];
  int no = 0;
  push(order, &no, a.n);
  push(order, &no, t->loop_order == 0 ? a.kbo : a.yo);
  push(order, &no, t->loop_order == 0 ? a.yo : a.kbo);
  push(order, &no, cbo);
  push(order, &no, a.xo);
  for (int i = 0; i < t->nreduce; i++)
    push(order, &no, chunked && strcmp(t->reduce_names[i], t->chunk_axis) == 0 ? cbi : t->reduce_names[i]);
  if (t->oc_major || vector_x) push(order, &no, a.kbi);
  push(order, &no, a.yi);
  if (!vector_x) push(order, &no, a.xi);
  if (!t->oc_major && !vector_x) push(order, &no, a.kbi);
  push(order, &no, a.k);
  if (vector_x) push(order, &no, a.xi);
  tpl_reorder(b, acc, no, order);
  if (a.kbi[0]) tpl_unroll(b, acc, a.kbi);
  if (a.yi[0]) tpl_unroll(b, acc, a.yi);
  if (vector_x) tpl_vectorize(b, acc, a.xi);
  else if (a.xi[0]) tpl_unroll(b, acc, a.xi);
  for (int i = 0; i < 2; i++)
    if (t->unroll_names[i]) {
      const char *u = t->unroll_names[i];
      if (chunked && strcmp(u, t->chunk_axis) == 0) u = cbi;
      tpl_unroll(b, acc, u);
    }
  if (g.Y > 1) tpl_vectorize(b, acc, a.k);
  tpl_compute_at(b, acc, tstage, attach);
  /* a weight scaled per image (conv_weight_scale, the channel-scaled 1x1 GEMM): once per
   * image and output-channel tile, in the outer loop the tile's loops run in; at root
   * (once per image, before them) when the pixel tiles share that loop, which would
   * scale the tile's weight again for each pixel tile (measured: EfficientNet-B0's
   * 56 x 56 projections 1.5x slower) */
  const tsl_te_op *scaled = tpl_find_tagged(p, "conv_weight_scale");
  if (scaled) {
    if (!take_xo) tpl_compute_at(b, scaled->name, ostage, innermost_outer);
    const tsl_stage *ss = b->st == TSL_OK ? tsl_schedule_stage(b->s, scaled->name) : NULL;
    if (ss && g.Y > 1) tpl_vectorize(b, scaled->name, ss->iters[ss->leaf[ss->nleaf - 1]].name);
  }
  /* after the conv is inside the output's loops: compute_at needs its consumers there */
  if (g.padded && t->pad_stage == TPL_PAD_OUTER) {
    tpl_compute_at(b, g.padded->name, ostage, innermost_outer);
    const tsl_stage *ps = b->st == TSL_OK ? tsl_schedule_stage(b->s, g.padded->name) : NULL;
    if (ps && t->pad_vector && g.X > 1) tpl_vectorize(b, g.padded->name, ps->iters[4].name);
  }
}

/* ---- the register tile as one knob ------------------------------------------- */

int64_t tpl_tile_value(int64_t ow, int64_t oh, int64_t oc) { return oc * 10000 + oh * 100 + ow; }

void tpl_tile_parts(int64_t v, int64_t *ow, int64_t *oh, int64_t *oc) {
  *ow = tpl_max(1, v % 100);
  *oh = tpl_max(1, v / 100 % 100);
  *oc = tpl_max(1, v / 10000);
}

int64_t tpl_tile_registers(const tpl_tile_limits *l, int64_t ow, int64_t oh, int64_t oc) {
  return l->vector_x ? oh * oc * tpl_ceil_div(ow, tpl_max(1, l->lanes)) : ow * oh * oc * tpl_max(1, l->acc_regs);
}

int64_t tpl_tile_copies(const tpl_tile_limits *l, int64_t ow, int64_t oh, int64_t oc) {
  /* lowering splits a vector of more lanes than the target's into native vectors by an
   * unrolled loop: one copy per register, so copies = accumulator registers */
  return tpl_tile_registers(l, ow, oh, oc);
}

bool tpl_unroll_fits(int64_t copies) { return copies >= 1 && copies <= TSL_UNROLL_MAX_ITERATIONS; }

bool tpl_tile_fits(const tpl_tile_limits *l, int64_t ow, int64_t oh, int64_t oc) {
  return tpl_tile_registers(l, ow, oh, oc) <= l->max_acc &&
         tpl_unroll_fits(tpl_tile_copies(l, ow, oh, oc) * tpl_max(1, l->unroll));
}

tsl_status tpl_tile_knob(tsl_config_space *s, const tpl_tile_limits *l, int64_t dflt) {
  int64_t v[TSL_MAX_KNOB_VALUES], regs[TSL_MAX_KNOB_VALUES];
  int n = 0, cap = TSL_MAX_KNOB_VALUES - 1; /* one place for the default */
  for (int64_t oc = 1; oc <= tpl_min(l->max_oc, 99); oc++)
    for (int64_t oh = 1; oh <= tpl_min(l->max_oh, 99); oh++)
      for (int64_t ow = 1; ow <= tpl_min(l->max_ow, 99); ow++) {
        if (!tpl_tile_fits(l, ow, oh, oc)) continue;
        int64_t r = tpl_tile_registers(l, ow, oh, oc), val = tpl_tile_value(ow, oh, oc);
        if (n < cap) {
          v[n] = val;
          regs[n++] = r;
          continue;
        }
        /* full: replace the tile with the fewest accumulators if this one has more */
        int worst = 0;
        for (int i = 1; i < n; i++)
          if (regs[i] < regs[worst]) worst = i;
        if (r > regs[worst]) {
          v[worst] = val;
          regs[worst] = r;
        }
      }
  return tpl_knob(s, "tile", TSL_KNOB_SPLIT, n, v, dflt);
}

/* ---- the window templates' shared knobs -------------------------------------- */

static tpl_tile_limits window_limits(const tsl_target *t, const tpl_window_dims *w, int64_t unroll) {
  tpl_tile_limits l;
  memset(&l, 0, sizeof l);
  l.max_ow = tpl_min(16, w->OW);
  l.max_oh = tpl_min(4, w->OH);
  l.max_oc = tpl_min(4, w->KB);
  l.lanes = tsl_target_f32_lanes(t);
  l.acc_regs = tpl_max(1, tpl_ceil_div(w->Y, l.lanes));
  l.vector_x = w->Y == 1;
  l.max_acc = tsl_target_vector_registers(t) - 2;
  l.unroll = unroll;
  return l;
}

bool tpl_window_unroll_fits(const tsl_target *t, const tpl_window_dims *w, int64_t ow, int64_t oh, int64_t oc) {
  tpl_tile_limits l = window_limits(t, w, 1);
  return tpl_unroll_fits(tpl_tile_copies(&l, ow, oh, oc) * w->R * w->S);
}

tsl_status tpl_window_knobs(tsl_config_space *s, const tsl_target *t, const tpl_window_dims *w, int64_t d_ow,
                            int64_t d_oh, int64_t d_oc, bool d_unroll, int d_pad) {
  bool unroll = tpl_window_unroll_fits(t, w, d_ow, d_oh, d_oc);
  tpl_tile_limits l = window_limits(t, w, unroll ? w->R * w->S : 1);
  tsl_status st = tpl_tile_knob(s, &l, tpl_tile_value(d_ow, d_oh, d_oc));
  static const int64_t bools[] = {0, 1}, pads[] = {0, 1, 2};
  if (st == TSL_OK) st = tpl_knob(s, "unroll_kernel", TSL_KNOB_ANNOTATE, unroll ? 2 : 1, bools, d_unroll);
  if (st == TSL_OK && w->padded) st = tpl_knob(s, "pad_mode", TSL_KNOB_OTHER, 3, pads, d_pad);
  return st;
}

void tpl_window_read(const tsl_config_space *s, const tsl_config *c, int64_t *ow, int64_t *oh, int64_t *oc,
                     bool *unroll, int *pad) {
  tpl_tile_parts(tsl_config_get(s, c, "tile", tpl_tile_value(*ow, *oh, *oc)), ow, oh, oc);
  *unroll = tsl_config_get(s, c, "unroll_kernel", *unroll) != 0;
  *pad = (int)tsl_config_get(s, c, "pad_mode", *pad);
}

tsl_status tpl_tile_knobs_check(const char *who, int64_t ow, int64_t oh, int64_t oc, int pad_mode) {
  const struct {
    const char *name;
    int64_t v;
  } pos[] = {{"ow_block", ow}, {"oh_block", oh}, {"oc_blocks", oc}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < 1)
      return tsl_error(TSL_ERR_INVALID, "%s: knob %s = %lld (must be >= 1)", who, pos[i].name, (long long)pos[i].v);
  if (pad_mode < 0 || pad_mode > 2)
    return tsl_error(TSL_ERR_INVALID, "%s: knob pad_mode = %d (must be 0, 1 or 2)", who, pad_mode);
  return TSL_OK;
}

tpl_conv_tile tpl_window_tile(const tpl_window_dims *w, int64_t ow, int64_t oh, int64_t oc, bool unroll, int pad_mode,
                              int loop_order, bool parallel, const char *first_reduce) {
  tpl_conv_tile t;
  memset(&t, 0, sizeof t);
  t.oc_blocks = oc;
  t.oh_block = oh;
  t.ow_block = ow;
  t.ic_chunk = 1;
  t.loop_order = loop_order;
  t.parallel = parallel;
  if (first_reduce) t.reduce_names[t.nreduce++] = first_reduce;
  t.reduce_names[t.nreduce++] = "r";
  t.reduce_names[t.nreduce++] = "s";
  t.unroll_names[0] = unroll ? "r" : NULL;
  t.unroll_names[1] = unroll ? "s" : NULL;
  t.KB = w->KB;
  t.OH = w->OH;
  t.OW = w->OW;
  t.pad_stage = w->padded ? (tpl_pad_mode)pad_mode : TPL_PAD_INLINE;
  t.pad_vector = true;
  return t;
}

uint64_t tpl_knob_hash(int n, const int64_t *v) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; i++) h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
  return h;
}
