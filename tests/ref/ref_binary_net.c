/* Reference executor of binarized models (ref_binary_net.h). */
#include "ref_binary_net.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct rv {
  bool set;
  bool is_int;
  int64_t n, c, h, w; /* logical NCHW (true channels), or [n, c] with h = w = 1 */
  float *f;
  int64_t *q;
} rv;

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t clip(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }
static int64_t numel(const rv *v) { return v->n * v->c * v->h * v->w; }

static bool alloc(rv *v, bool is_int, int64_t n, int64_t c, int64_t h, int64_t w) {
  *v = (rv){true, is_int, n, c, h, w, NULL, NULL};
  size_t cnt = (size_t)(n * c * h * w);
  if (is_int) v->q = calloc(cnt ? cnt : 1, sizeof *v->q);
  else v->f = calloc(cnt ? cnt : 1, sizeof *v->f);
  return is_int ? v->q != NULL : v->f != NULL;
}

static int64_t attr(const tsl_node *n, const char *name, int64_t dflt) { return tsl_node_attr_int(n, name, dflt); }

/* The +-1 weight of output k, input channel ci, tap (r, s) of a [CW, R, S, K] u64 tensor:
 * bit 1 is -1. */
static int wbit(const tsl_tensor *t, int64_t k, int64_t ci, int64_t r, int64_t s) {
  const uint64_t *w = t->data;
  int64_t R = t->shape[1], S = t->shape[2], K = t->shape[3];
  uint64_t word = w[((ci / 64 * R + r) * S + s) * K + k];
  return (word >> (ci % 64)) & 1 ? -1 : 1;
}

/* The unipolar conv's integer dot product with the glue applied (before clipping). */
static void bconv(const tsl_graph *g, const tsl_node *n, const rv *x, rv *y, int out_bits) {
  const tsl_tensor *wt = g->values[n->inputs[1]].constant;
  const int32_t *shift = g->values[n->inputs[2]].constant->data, *bias = g->values[n->inputs[3]].constant->data;
  int64_t R = wt->shape[1], S = wt->shape[2], K = wt->shape[3];
  int64_t sh = attr(n, "stride_h", 1), sw = attr(n, "stride_w", 1), ph = attr(n, "pad_h", 0), pw = attr(n, "pad_w", 0);
  int64_t OH = (x->h + 2 * ph - R) / sh + 1, OW = (x->w + 2 * pw - S) / sw + 1;
  alloc(y, true, x->n, K, OH, OW);
  for (int64_t b = 0; b < x->n; b++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          int64_t dot = 0;
          for (int64_t ci = 0; ci < x->c; ci++)
            for (int64_t r = 0; r < R; r++)
              for (int64_t s = 0; s < S; s++) {
                int64_t iy = oy * sh + r - ph, ix = ox * sw + s - pw;
                if (iy < 0 || iy >= x->h || ix < 0 || ix >= x->w) continue;
                dot += x->q[((b * x->c + ci) * x->h + iy) * x->w + ix] * wbit(wt, k, ci, r, s);
              }
          int64_t v = floor_div(dot + bias[k], (int64_t)1 << shift[k]);
          int64_t idx = ((b * K + k) * OH + oy) * OW + ox;
          y->q[idx] = out_bits ? clip(v, 0, (1 << out_bits) - 1) : v;
        }
}

static int level(float x, int bits) {
  int L = (1 << bits) - 1, q = 0;
  float xl = x * (float)L;
  for (int k = 0; k < L; k++) q += xl >= (float)k + 0.5f;
  return q;
}

static tsl_status run_binary(const tsl_graph *g, const tsl_node *n, rv *vals) {
  const tsl_attr *ka = tsl_node_attr(n, "kernel");
  const char *kn = ka ? ka->s : "";
  rv *x = &vals[n->inputs[0]], *y = &vals[n->outputs[0]];
  if (strcmp(kn, "quantize_unipolar_i32") == 0 || strcmp(kn, "bitpack_unipolar64") == 0) {
    int bits = (int)attr(n, "bits", 1);
    alloc(y, true, x->n, x->c, x->h, x->w);
    for (int64_t i = 0; i < numel(x); i++) y->q[i] = level(x->f[i], bits);
  } else if (strcmp(kn, "bitpack_unipolar64_i32") == 0) {
    int64_t L = (1 << attr(n, "bits", 1)) - 1, shift = attr(n, "shift", 0);
    alloc(y, true, x->n, x->c, x->h, x->w);
    for (int64_t i = 0; i < numel(x); i++) y->q[i] = clip(floor_div(x->q[i], (int64_t)1 << shift), 0, L);
  } else if (strcmp(kn, "bitserial_conv2d_unipolar64_packed") == 0) {
    bconv(g, n, x, y, (int)attr(n, "bits", 1));
  } else if (strcmp(kn, "bitserial_conv2d_unipolar64_requant") == 0 ||
             strcmp(kn, "bitserial_conv2d_unipolar64_requant_add") == 0) {
    bconv(g, n, x, y, 0);
    const rv *res = n->n_inputs > 4 ? &vals[n->inputs[4]] : NULL;
    int64_t qmax = attr(n, "qmax", 2147483647);
    for (int64_t i = 0; i < numel(y); i++) y->q[i] = clip(y->q[i] + (res ? res->q[i] : 0), 0, qmax);
  } else if (strcmp(kn, "concat_packed64") == 0) {
    const rv *b = &vals[n->inputs[1]];
    alloc(y, true, x->n, x->c + b->c, x->h, x->w);
    int64_t hw = x->h * x->w;
    for (int64_t i = 0; i < x->n; i++) {
      memcpy(y->q + i * y->c * hw, x->q + i * x->c * hw, (size_t)(x->c * hw) * sizeof *y->q);
      memcpy(y->q + (i * y->c + x->c) * hw, b->q + i * b->c * hw, (size_t)(b->c * hw) * sizeof *y->q);
    }
  } else if (strcmp(kn, "maxpool_packed_planes64") == 0) {
    int64_t k = attr(n, "size", 2), st = attr(n, "stride", 2);
    int64_t OH = (x->h - k) / st + 1, OW = (x->w - k) / st + 1;
    alloc(y, true, x->n, x->c, OH, OW);
    for (int64_t p = 0; p < x->n * x->c; p++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          int64_t m = 0;
          for (int64_t r = 0; r < k; r++)
            for (int64_t s = 0; s < k; s++) {
              int64_t v = x->q[(p * x->h + oy * st + r) * x->w + ox * st + s];
              m = v > m ? v : m;
            }
          y->q[(p * OH + oy) * OW + ox] = m;
        }
  } else if (strcmp(kn, "bitunpack_unipolar64") == 0) {
    int64_t planes = g->values[n->inputs[0]].shape[1];
    alloc(y, false, x->n, x->c, x->h, x->w);
    for (int64_t i = 0; i < numel(x); i++) y->f[i] = (float)x->q[i] / (float)((1 << planes) - 1);
  } else if (strcmp(kn, "binary_global_avgpool_i32") == 0) {
    double scale = tsl_node_attr_float(n, "scale", 1.0);
    alloc(y, false, x->n, x->c, 1, 1);
    for (int64_t p = 0; p < x->n * x->c; p++) {
      int64_t s = 0;
      for (int64_t i = 0; i < x->h * x->w; i++) s += x->q[p * x->h * x->w + i];
      y->f[p] = (float)s * (float)scale / (float)(x->h * x->w);
    }
  } else {
    return tsl_error(TSL_ERR_UNSUPPORTED, "ref_binary_net: kernel '%s' unknown", kn);
  }
  return y->set && (y->is_int ? y->q != NULL : y->f != NULL) ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "ref: out of memory");
}

static tsl_status run_f32(const tsl_graph *g, const tsl_node *n, rv *vals) {
  rv *x = &vals[n->inputs[0]], *y = &vals[n->outputs[0]];
  switch (n->op) {
  case TSL_OP_RELU:
    alloc(y, false, x->n, x->c, x->h, x->w);
    for (int64_t i = 0; i < numel(x); i++) y->f[i] = x->f[i] > 0.0f ? x->f[i] : 0.0f;
    return TSL_OK;
  case TSL_OP_DROPOUT:
  case TSL_OP_FLATTEN:
    alloc(y, false, x->n, x->c * x->h * x->w, 1, 1);
    memcpy(y->f, x->f, (size_t)numel(x) * sizeof *y->f);
    return TSL_OK;
  case TSL_OP_GLOBAL_AVERAGE_POOL:
    alloc(y, false, x->n, x->c, 1, 1);
    for (int64_t p = 0; p < x->n * x->c; p++) {
      double s = 0.0;
      for (int64_t i = 0; i < x->h * x->w; i++) s += x->f[p * x->h * x->w + i];
      y->f[p] = (float)(s / (double)(x->h * x->w));
    }
    return TSL_OK;
  case TSL_OP_GEMM: { /* y = x W^T + b (transB = 1, alpha = beta = 1) */
    const tsl_tensor *w = g->values[n->inputs[1]].constant, *b = g->values[n->inputs[2]].constant;
    int64_t O = w->shape[0], I = w->shape[1];
    const float *wf = w->data, *bf = b->data;
    alloc(y, false, x->n, O, 1, 1);
    for (int64_t i = 0; i < x->n; i++)
      for (int64_t o = 0; o < O; o++) {
        double s = bf[o];
        for (int64_t k = 0; k < I; k++) s += (double)x->f[i * I + k] * wf[o * I + k];
        y->f[i * O + o] = (float)s;
      }
    return TSL_OK;
  }
  case TSL_OP_CONV: { /* 1x1, stride 1, with bias: the f32 classifier */
    const tsl_tensor *w = g->values[n->inputs[1]].constant, *b = g->values[n->inputs[2]].constant;
    if (w->shape[2] != 1 || w->shape[3] != 1) return tsl_error(TSL_ERR_UNSUPPORTED, "ref: conv other than 1x1");
    int64_t O = w->shape[0], hw = x->h * x->w;
    const float *wf = w->data, *bf = b->data;
    alloc(y, false, x->n, O, x->h, x->w);
    for (int64_t i = 0; i < x->n; i++)
      for (int64_t o = 0; o < O; o++)
        for (int64_t p = 0; p < hw; p++) {
          double s = bf[o];
          for (int64_t c = 0; c < x->c; c++) s += (double)x->f[(i * x->c + c) * hw + p] * wf[o * x->c + c];
          y->f[(i * O + o) * hw + p] = (float)s;
        }
    return TSL_OK;
  }
  default:
    return tsl_error(TSL_ERR_UNSUPPORTED, "ref_binary_net: operator %s", tsl_op_name(n->op));
  }
}

tsl_status ref_binary_net_run(const tsl_graph *g, const float *input, float *output, int64_t n_out) {
  if (g->n_inputs != 1 || g->n_outputs != 1) return tsl_error(TSL_ERR_INVALID, "ref: one input and output");
  rv *vals = calloc((size_t)g->n_values, sizeof *vals);
  if (!vals) return tsl_error(TSL_ERR_NOMEM, "ref: out of memory");
  const tsl_value *in = &g->values[g->inputs[0]];
  tsl_status st = TSL_OK;
  if (!alloc(&vals[g->inputs[0]], false, in->shape[0], in->shape[1], in->shape[2], in->shape[3]))
    st = tsl_error(TSL_ERR_NOMEM, "ref: out of memory");
  else
    memcpy(vals[g->inputs[0]].f, input, (size_t)numel(&vals[g->inputs[0]]) * sizeof(float));
  for (int i = 0; i < g->n_nodes && st == TSL_OK; i++)
    st = g->nodes[i].op == TSL_OP_BINARY ? run_binary(g, &g->nodes[i], vals) : run_f32(g, &g->nodes[i], vals);
  const rv *o = &vals[g->outputs[0]];
  if (st == TSL_OK && (o->is_int || numel(o) != n_out)) st = tsl_error(TSL_ERR_INVALID, "ref: output size");
  if (st == TSL_OK) memcpy(output, o->f, (size_t)n_out * sizeof *output);
  for (int v = 0; v < g->n_values; v++) {
    free(vals[v].f);
    free(vals[v].q);
  }
  free(vals);
  return st;
}
