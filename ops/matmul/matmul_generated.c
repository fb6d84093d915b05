/* The matmul family's generated operators (ops/op_call.h): matrix products written per
 * instance as DSL text (docs/dsl.md).
 *
 * "gemm": a [M, K] (or [K, M] with attribute transA), w [K, N] (or [N, K] with transB),
 *   optional c broadcast to [M, N] (rank <= 2), y [M, N]; attributes transA, transB,
 *   alpha, beta (default 1): y = alpha * a w + beta * c. The product stage is tagged
 *   "matmul".
 * "dense_packed": the same product with the weight packed [N/Y, K, Y]
 *   (models/passes/pack_dense.h): a [..., K] flattened to [M, K] (or a 2-D [K, M] with
 *   transA), w [N/Y, K, Y], optional c as for gemm, y viewed [M, N/Y, Y]; attributes
 *   transA, alpha, beta. Tagged "dense_packed": the dense template's GEMV schedule
 *   (ops/nn/default_schedule.h).
 * "matmul": ONNX MatMul of a [..., M, K] by a 2-D w [K, N] (a's leading axes flattened
 *   into M), or of two batches of equal leading axes [B..., M, K] x [B..., K, N].
 * Each takes an activation epilogue y = f(...) (attribute "epilogue", ops/epilogue.h):
 *   the fused tsl.Activation of models/passes/fuse_conv.h. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include <stdlib.h>

#include "ops/epilogue.h"
#include "ops/families.h"
#include "ops/op_text.h"

/* alpha and beta (finite); 2 or 3 inputs (the bias last), all plain. */
static tsl_status gemm_scalars(const tsl_op_call *c, const char *name, double *alpha, double *beta) {
  *alpha = tsl_op_call_float(c, "alpha", 1.0);
  *beta = tsl_op_call_float(c, "beta", 1.0);
  if (!isfinite(*alpha) || !isfinite(*beta))
    return tsl_error(TSL_ERR_UNSUPPORTED, "%s: non-finite alpha or beta", name);
  return tsl_op_check_plain_counts(c, name, c->ninputs == 3 ? 3 : 2, 1);
}

/* "  OUT = f(V)\n" onto t's text (V the value's text, freed here). */
static tsl_status put_output(tsl_op_text *t, const char *out, tsl_text_buf *v, const tsl_epilogue *e) {
  bool oom = v->oom;
  tsl_text_put(&t->text, "  %s = ", out);
  if (!oom) tsl_epilogue_put_dsl(e, v->s, &t->text);
  tsl_text_put(&t->text, "\n");
  free(v->s);
  return oom ? tsl_error(TSL_ERR_NOMEM, "matmul: out of memory") : TSL_OK;
}

/* The epilogue after the product stage acc of rank `nd` (output extents `shape`):
 * out = f(acc * alpha + c * beta), c (argument 2, when the call has 3 inputs) broadcast,
 * f the epilogue (none: the value itself). */
static tsl_status put_gemm_epilogue(tsl_op_text *t, int ninputs, double alpha, double beta, int nd,
                                    const int64_t *shape, const tsl_epilogue *e) {
  tsl_text_buf v = {0}, *b = &v;
  tsl_text_put(b, nd == 3 ? "acc[i0, i1, i2]" : "acc[i0, i1]");
  if (alpha != 1.0) {
    tsl_text_put(b, " * ");
    tsl_text_put_float(b, alpha);
  }
  if (ninputs == 3) {
    tsl_text_put(b, " + ");
    tsl_op_put_bcast_read(b, t, 2, nd, shape);
    if (beta != 1.0) {
      tsl_text_put(b, " * ");
      tsl_text_put_float(b, beta);
    }
  }
  return put_output(t, nd == 3 ? "out[i0, i1, i2]" : "out[i0, i1]", &v, e);
}

static tsl_status gemm_text(const tsl_op_call *c, tsl_op_text *t) {
  double alpha, beta;
  tsl_status st = gemm_scalars(c, "gemm", &alpha, &beta);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *a = &c->args[0], *w = &c->args[1], *y = &c->args[c->nargs - 1];
  bool ta = tsl_op_call_int(c, "transA", 0) != 0, tb = tsl_op_call_int(c, "transB", 0) != 0;
  if (a->ndim != 2 || w->ndim != 2 || y->ndim != 2 || (c->ninputs == 3 && c->args[2].ndim > 2))
    return tsl_error(TSL_ERR_INVALID, "gemm: a, w and y of ranks %d, %d, %d (2 each; c of rank <= 2)", a->ndim, w->ndim,
                     y->ndim);
  tsl_op_text_view(t, 0, 2, a->shape);
  tsl_op_text_view(t, 1, 2, w->shape);
  if (c->ninputs == 3) {
    const tsl_op_tensor *bias = &c->args[2];
    if (bias->ndim == 0) tsl_op_text_view(t, 2, 1, (const int64_t[]){1});
    else tsl_op_text_view(t, 2, bias->ndim, bias->shape);
  }
  tsl_op_text_view(t, c->ninputs, 2, y->shape);
  tsl_epilogue e;
  if ((st = tsl_op_call_epilogue(c, "gemm", &e)) != TSL_OK) return st;
  snprintf(t->label, sizeof t->label, "dense%s%s%s", c->ninputs == 3 ? "_bias" : "", e.fn ? "_" : "",
           e.fn ? e.fn->label : "");
  tsl_op_text_header(t, c->ninputs);
  int64_t K = ta ? a->shape[0] : a->shape[1];
  bool epi = c->ninputs == 3 || alpha != 1.0 || e.fn;
  tsl_text_put(&t->text, "  @tag(\"matmul\")\n  %s[i0, i1] = sum(k: x0[%s] * x1[%s])\n    where i0 < %lld, i1 < %lld, k < %lld\n",
               epi ? "acc" : "out", ta ? "k, i0" : "i0, k", tb ? "i1, k" : "k, i1", (long long)y->shape[0],
               (long long)y->shape[1], (long long)K);
  return epi ? put_gemm_epilogue(t, c->ninputs, alpha, beta, 2, y->shape, &e) : TSL_OK;
}

/* acc[i0, i1, i2] = sum(k: a[i0, k] w[i1, k, i2]) over the output viewed [M, N/Y, Y],
 * with the gemm epilogue (a bias broadcast to [M, N] seen [M or 1, N/Y or 1, Y or 1]). */
static tsl_status dense_packed_text(const tsl_op_call *c, tsl_op_text *t) {
  double alpha, beta;
  tsl_status st = gemm_scalars(c, "dense_packed", &alpha, &beta);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *a = &c->args[0], *w = &c->args[1], *y = &c->args[c->nargs - 1];
  bool ta = tsl_op_call_int(c, "transA", 0) != 0;
  if (w->ndim != 3 || a->ndim < (ta ? 2 : 1) || (ta && a->ndim != 2))
    return tsl_error(TSL_ERR_INVALID, "dense_packed: a packed weight of rank %d (3: [N/Y, K, Y]), an input of rank %d",
                     w->ndim, a->ndim);
  int64_t OB = w->shape[0], K = w->shape[1], Y = w->shape[2], last = a->shape[a->ndim - 1];
  if (last == 0) return tsl_error(TSL_ERR_UNSUPPORTED, "dense_packed: an empty input");
  int64_t M = ta ? a->shape[1] : tsl_op_tensor_numel(a) / last;
  if (tsl_op_tensor_numel(a) != M * K || tsl_op_tensor_numel(y) != M * OB * Y)
    return tsl_error(TSL_ERR_INVALID, "dense_packed: an input of %lld elements and an output of %lld for M %lld, K %lld, "
                     "N %lld", (long long)tsl_op_tensor_numel(a), (long long)tsl_op_tensor_numel(y), (long long)M,
                     (long long)K, (long long)(OB * Y));
  tsl_op_text_view(t, 0, 2, ta ? (const int64_t[]){K, M} : (const int64_t[]){M, K});
  tsl_op_text_view(t, 1, 3, w->shape);
  if (c->ninputs == 3) {
    const tsl_op_tensor *bias = &c->args[2];
    int64_t cm = bias->ndim == 2 ? bias->shape[0] : 1, cn = bias->ndim >= 1 ? bias->shape[bias->ndim - 1] : 1;
    bool full = cn == OB * Y;
    tsl_op_text_view(t, 2, 3, (const int64_t[]){cm, full ? OB : 1, full ? Y : 1});
  }
  int64_t view[3] = {M, OB, Y};
  tsl_op_text_view(t, c->ninputs, 3, view);
  tsl_epilogue e;
  if ((st = tsl_op_call_epilogue(c, "dense_packed", &e)) != TSL_OK) return st;
  snprintf(t->label, sizeof t->label, "dense_packed%s%s%s", c->ninputs == 3 ? "_bias" : "", e.fn ? "_" : "",
           e.fn ? e.fn->label : "");
  tsl_op_text_header(t, c->ninputs);
  bool epi = c->ninputs == 3 || alpha != 1.0 || e.fn;
  tsl_text_put(&t->text, "  @tag(\"dense_packed\")\n  %s[i0, i1, i2] = sum(k: x0[%s] * x1[i1, k, i2])\n"
                         "    where i0 < %lld, i1 < %lld, i2 < %lld, k < %lld\n",
               epi ? "acc" : "out", ta ? "k, i0" : "i0, k", (long long)M, (long long)OB, (long long)Y, (long long)K);
  return epi ? put_gemm_epilogue(t, c->ninputs, alpha, beta, 3, view, &e) : TSL_OK;
}

static tsl_status matmul_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_plain_counts(c, "matmul", 2, 1);
  tsl_epilogue e;
  if (st == TSL_OK) st = tsl_op_call_epilogue(c, "matmul", &e);
  if (st != TSL_OK) return st;
  const tsl_op_tensor *a = &c->args[0], *w = &c->args[1];
  if (a->ndim >= 3 && w->ndim == a->ndim) {
    /* a batch of products: equal batch dimensions (ONNX's broadcast of them is not) */
    int64_t B = 1;
    for (int d = 0; d + 2 < a->ndim; d++) {
      if (a->shape[d] != w->shape[d])
        return tsl_error(TSL_ERR_UNSUPPORTED, "matmul: batch dimensions that broadcast are not compiled");
      B *= a->shape[d];
    }
    int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = w->shape[w->ndim - 1];
    tsl_op_text_view(t, 0, 3, (const int64_t[]){B, M, K});
    tsl_op_text_view(t, 1, 3, (const int64_t[]){B, K, N});
    tsl_op_text_view(t, 2, 3, (const int64_t[]){B, M, N});
    snprintf(t->label, sizeof t->label, "batch_matmul%s%s", e.fn ? "_" : "", e.fn ? e.fn->label : "");
    tsl_op_text_header(t, 2);
    tsl_text_put(&t->text, "  %s[bb, i, j] = sum(k: x0[bb, i, k] * x1[bb, k, j])\n", e.fn ? "acc" : "out");
    if (!e.fn) return TSL_OK;
    tsl_text_buf v = {0};
    tsl_text_put(&v, "acc[bb, i, j]");
    return put_output(t, "out[bb, i, j]", &v, &e);
  }
  if (a->ndim < 2 || w->ndim != 2)
    return tsl_error(TSL_ERR_UNSUPPORTED, "matmul: compiled for A of rank >= 2 times a 2-D B, or equal batch dimensions "
                     "only (ranks %d and %d)", a->ndim, w->ndim);
  int64_t K = a->shape[a->ndim - 1], N = w->shape[1];
  if (K == 0) return tsl_error(TSL_ERR_UNSUPPORTED, "matmul: an empty product (K = 0)");
  int64_t M = tsl_op_tensor_numel(a) / K;
  tsl_op_text_view(t, 0, 2, (const int64_t[]){M, K});
  tsl_op_text_view(t, 1, 2, w->shape);
  tsl_op_text_view(t, 2, 2, (const int64_t[]){M, N});
  snprintf(t->label, sizeof t->label, "matmul%s%s", e.fn ? "_" : "", e.fn ? e.fn->label : "");
  tsl_op_text_header(t, 2);
  tsl_text_put(&t->text, "  @tag(\"matmul\")\n  %s[i, j] = sum(k: x0[i, k] * x1[k, j])\n", e.fn ? "acc" : "out");
  if (!e.fn) return TSL_OK;
  tsl_text_buf v = {0};
  tsl_text_put(&v, "acc[i, j]");
  return put_output(t, "out[i, j]", &v, &e);
}

static const tsl_op_generator matmul_generators[] = {
    {"gemm", "y = alpha * op(a) op(w) + beta * c (attributes transA, transB, alpha, beta)", gemm_text},
    {"dense_packed", "gemm with the weight packed [N/Y, K, Y] (attributes transA, alpha, beta)", dense_packed_text},
    {"matmul", "ONNX MatMul: [..., M, K] x [K, N], or batches of equal leading axes", matmul_text},
};

const tsl_op_generator *tsl_ops_matmul_generators(int *n) {
  *n = (int)(sizeof matmul_generators / sizeof matmul_generators[0]);
  return matmul_generators;
}
