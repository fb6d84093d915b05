/* Winograd F(m x m, r x r) operators: DSL text generated from exact transform matrices,
 * the registry family (m = 2, 4, 6 for r = 3, m = 2, 4 for r = 4, 5, with tessel's
 * points), workload checks and instantiation. See winograd.h for the operators and their stages. */
#include "ops/conv2d/winograd.h"
#include "ops/conv2d/winograd_schedule.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/families.h"
#include "dsl/parser.h"
#include "dsl/text_buf.h"

double tsl_winograd_error_bound(int m) {
  switch (m) {
  case 2: return 2e-6;
  case 4: return 1e-5;
  case 6: return 5e-5;
  default: return 0.0;
  }
}

double tsl_winograd_error_bound_r(int m, int r) {
  if (r == 3) return tsl_winograd_error_bound(m);
  /* 2-3x the measured maxima (tests/winograd/test_accuracy.c, the error study: C = K = 64
   * and 256 at 28x28, scales 1 and 100; AVX-512 Zen 5): F(2,4) 4.6e-6, F(4,4) 1.2e-5,
   * F(2,5) 2.9e-6, F(4,5) 1.3e-5. F(2,4)'s fourth point changes little (-2: 5.5e-6, 2:
   * 4.4e-6, -1/2: 4.6e-6) */
  if (r == 4 && m == 2) return 1e-5;
  if (r == 4 && m == 4) return 3e-5;
  if (r == 5 && m == 2) return 1e-5;
  if (r == 5 && m == 4) return 4e-5;
  return 0.0;
}

static tsl_status sb_finish(tsl_text_buf *b, char **out) {
  if (b->oom || !b->s) {
    free(b->s);
    return tsl_error(TSL_ERR_NOMEM, "winograd: out of memory writing the operator text");
  }
  *out = b->s;
  return TSL_OK;
}

/* ---- linear combinations with constant coefficients ----------------------- */

/* Writes sum_i coef[i] * term(i) for the nonzero coefficients: +-1 as a plain sum or
 * difference, others as a float literal times the term. `term` writes operand i. */
typedef void (*term_fn)(tsl_text_buf *b, int i);

static void write_coef_literal(tsl_text_buf *b, double v) {
  char lit[64];
  snprintf(lit, sizeof lit, "%.17g", v);
  /* a FLOAT token needs a '.' or an exponent; an integer literal would adapt as well,
   * but the text reads better with one kind of constant */
  bool is_float = strpbrk(lit, ".eE") != NULL;
  tsl_text_put(b, "%s%s", lit, is_float ? "" : ".0");
}

/* The first positive term is written first so the sum does not start with a negation. */
static void write_combination(tsl_text_buf *b, int n, const tsl_rational *coef, term_fn term) {
  bool first = true;
  int lead = -1;
  for (int i = 0; i < n && lead < 0; i++)
    if (coef[i].num > 0) lead = i;
  for (int k = -1; k < n; k++) {
    int i = k < 0 ? lead : k;
    if (i < 0 || (k >= 0 && k == lead) || tsl_rational_is_zero(coef[i])) continue;
    double v = tsl_rational_to_double(coef[i]);
    bool neg = v < 0;
    double mag = fabs(v);
    if (!first) tsl_text_put(b, "%s", neg ? " - " : " + ");
    else if (neg) tsl_text_put(b, "-");
    if (mag != 1.0) {
      write_coef_literal(b, mag);
      tsl_text_put(b, " * ");
    }
    term(b, i);
    first = false;
  }
  if (first) tsl_text_put(b, "0.0");
}

/* select(var == 0, row 0, select(var == 1, row 1, ... row n-1)) where row k is the
 * combination of `rows` (stride `stride`) row k with ncols terms. */
static void write_select_chain(tsl_text_buf *b, const char *var, int nrows, int ncols, const tsl_rational *rows, int stride,
                               term_fn term, const char *indent) {
  for (int k = 0; k < nrows; k++) {
    if (k < nrows - 1) tsl_text_put(b, "select(%s == %d,\n%s  ", var, k, indent);
    write_combination(b, ncols, rows + (size_t)k * (size_t)stride, term);
    if (k < nrows - 1) tsl_text_put(b, ",\n%s", indent);
  }
  for (int k = 0; k < nrows - 1; k++) tsl_text_put(b, ")");
}

/* ---- the conv text -------------------------------------------------------- */

/* The operands of the transforms' sums. */
static void term_input(tsl_text_buf *b, int i) {
  tsl_text_put(b, "tile_in[n, t, %d, j, cb, cx]", i);
}
static void term_vr(tsl_text_buf *b, int j) {
  tsl_text_put(b, "Vr[e, %d, n, t, cb, cx]", j);
}
static void term_m(tsl_text_buf *b, int e) {
  tsl_text_put(b, "M[%d, nu, n, t, kb, kx]", e);
}
static void term_ya(tsl_text_buf *b, int nu) {
  tsl_text_put(b, "tile_out[n, oh, ow, %d, kb, kx]", nu);
}

static bool is_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (const char *p = s; *p; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_')) return false;
  return strlen(s) < 100;
}

static tsl_status check_transform(const tsl_winograd_transform *T, const char *name) {
  if (!T) return tsl_error(TSL_ERR_INVALID, "winograd: NULL transform");
  if (T->r < 2 || T->r > TSL_WINOGRAD_MAX_R || T->m < 1 || T->alpha != T->m + T->r - 1 ||
      T->alpha > TSL_WINOGRAD_MAX_ALPHA)
    return tsl_error(TSL_ERR_INVALID, "winograd: the transform is F(%d, %d) with alpha %d; the operators need F(m, r), "
                     "2 <= r <= %d, alpha = m + r - 1 <= %d",
                     T->m, T->r, T->alpha, TSL_WINOGRAD_MAX_R, TSL_WINOGRAD_MAX_ALPHA);
  if (!is_identifier(name)) return tsl_error(TSL_ERR_INVALID, "winograd: op name '%s' is not an identifier", name ? name : "");
  return TSL_OK;
}

/* "0, 1, -1, 1/2" for the op's comment */
static void write_points(tsl_text_buf *b, const tsl_winograd_transform *T) {
  for (int i = 0; i < T->npoints; i++) {
    char r[48];
    tsl_text_put(b, "%s%s", i ? ", " : "", tsl_rational_str(T->points[i], r, sizeof r));
  }
  tsl_text_put(b, ", inf");
}

tsl_status tsl_winograd_conv_text(const tsl_winograd_transform *T, const char *name, bool residual, char **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "winograd: NULL output");
  *out = NULL;
  tsl_status st = check_transform(T, name);
  if (st != TSL_OK) return st;
  int m = T->m, a = T->alpha, r = T->r;
  tsl_text_buf b = {0};
  tsl_rational bt[TSL_WINOGRAD_MAX_ALPHA * TSL_WINOGRAD_MAX_ALPHA], at[TSL_WINOGRAD_MAX_M * TSL_WINOGRAD_MAX_ALPHA];
  for (int i = 0; i < a; i++)
    for (int j = 0; j < a; j++) bt[i * a + j] = T->BT[i][j];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < a; j++) at[i * a + j] = T->AT[i][j];

  /* the kernel transform's registry name, for the comment and the U assertion */
  char wname[48];
  if (r == 3) snprintf(wname, sizeof wname, "winograd_weight_f%d", m);
  else snprintf(wname, sizeof wname, "winograd_weight_f%d_r%d", m, r);
  tsl_text_put(&b, "// Winograd F(%dx%d, %dx%d), points ", m, m, r, r);
  write_points(&b, T);
  tsl_text_put(&b, "; NCHW[x]c data, U = G g G^T from %s%s\n", wname,
               residual ? "; out = act(conv + bias + residual)" : "");
  tsl_text_put(&b, "op %s(data: f32[N, CB, H, W, X], U: f32[A1, A2, KB, CP, X], bias: f32[KB, X],\n", name);
  if (residual)
    tsl_text_put(&b, "    residual: f32[N, KB, H + pad_top + pad_bottom - %d, W + pad_left + pad_right - %d, X],\n", r - 1,
                 r - 1);
  tsl_text_put(&b, "    pad_top: int = 0, pad_left: int = 0, pad_bottom: int = 0, pad_right: int = 0,\n"
                   "    stride_h: int = 1, stride_w: int = 1, dilation_h: int = 1, dilation_w: int = 1,\n"
                   "    act: int = 0, clip_min: float = 0.0, clip_max: float = 6.0, in_channels: int = 0)\n");
  tsl_text_put(&b,
               "  assert stride_h == 1 && stride_w == 1, \"winograd F(%dx%d, %dx%d) needs stride 1 (use a direct convolution)\"\n"
               "  assert dilation_h == 1 && dilation_w == 1, \"winograd F(%dx%d, %dx%d) needs dilation 1 (use a direct convolution)\"\n"
               "  assert pad_top >= 0 && pad_left >= 0 && pad_bottom >= 0 && pad_right >= 0, \"paddings must be >= 0\"\n"
               "  assert A1 == %d && A2 == %d, \"U must be %d x %d x KB x CP x X (%s of %dx%d weights)\"\n"
               "  assert CP == CB * X, \"U has CP input channels, data has CB * X\"\n"
               "  assert in_channels >= 0 && in_channels <= CP, \"in_channels is 0 (all CP) or the channels that are not zero "
               "padding, at most CP\"\n"
               "  assert H + pad_top + pad_bottom >= %d && W + pad_left + pad_right >= %d, \"the padded input is smaller than %dx%d\"\n"
               "  assert act >= 0 && act <= 2, \"act is 0 (none), 1 (relu) or 2 (clip to [clip_min, clip_max])\"\n",
               m, m, r, r, m, m, r, r, a, a, a, a, wname, r, r, r, r, r, r);
  /* TH = ceil(OH / m) with OH = H + pad_top + pad_bottom - (r - 1); the sizes are spelled
   * out because the DSL has no local constants */
  char th[128], tw[128];
  snprintf(th, sizeof th, "((H + pad_top + pad_bottom - %d + %d) / %d)", r, m, m);
  snprintf(tw, sizeof tw, "((W + pad_left + pad_right - %d + %d) / %d)", r, m, m);
  tsl_text_put(&b,
               "  padded[n, cb, y, x, cx] = select(y >= pad_top && y < H + pad_top && x >= pad_left && x < W + pad_left,\n"
               "                                   data[n, cb, y - pad_top, x - pad_left, cx], 0.0)\n"
               "    where y < %s * %d + %d, x < %s * %d + %d\n",
               th, m, r - 1, tw, m, r - 1);
  tsl_text_put(&b,
               "  tile_in[n, t, i, j, cb, cx] = padded[n, cb, t / TW * %d + i, t %% TW * %d + j, cx]\n"
               "    where t < TH * TW, i < %d, j < %d\n",
               m, m, a, a);
  tsl_text_buf body = {0};
  write_select_chain(&body, "e", a, a, bt, a, term_input, "      ");
  tsl_text_put(&b, "  @tag(\"winograd_input_rows\")\n  Vr[e, j, n, t, cb, cx] =\n      %s\n    where e < %d, j < %d\n", body.s ? body.s : "",
               a, a);
  free(body.s);
  body = (tsl_text_buf){0};
  write_select_chain(&body, "nu", a, a, bt, a, term_vr, "      ");
  tsl_text_put(&b, "  @tag(\"winograd_input\")\n  V[e, nu, n, t, cb, cx] =\n      %s\n    where nu < %d\n", body.s ? body.s : "",
               a);
  free(body.s);
  /* the reduction runs over the input channels that are not zero padding (in_channels,
   * default all CP): 12 of a 16-lane block for a 3-channel conv's phases, 20 of 32 */
  tsl_text_put(&b, "  @tag(\"winograd_gemm\")\n  M[e, nu, n, t, kb, kx] = sum(c: V[e, nu, n, t, c / X, c %% X] * U[e, nu, kb, c, kx])\n"
                   "    where c < (in_channels > 0 ? in_channels : CP)\n");
  body = (tsl_text_buf){0};
  write_select_chain(&body, "i", m, a, at, a, term_m, "      ");
  tsl_text_put(&b, "  @tag(\"winograd_output_rows\")\n  Ya[i, nu, n, t, kb, kx] =\n      %s\n    where i < %d\n", body.s ? body.s : "", m);
  free(body.s);
  tsl_text_put(&b,
               "  tile_out[n, oh, ow, nu, kb, kx] = Ya[oh %% %d, nu, n, oh / %d * TW + ow / %d, kb, kx]\n"
               "    where n < N, oh < H + pad_top + pad_bottom - %d, ow < W + pad_left + pad_right - %d, nu < %d\n",
               m, m, m, r - 1, r - 1, a);
  body = (tsl_text_buf){0};
  char var[32];
  snprintf(var, sizeof var, "ow %% %d", m);
  write_select_chain(&body, var, m, a, at, a, term_ya, "      ");
  tsl_text_put(&b,
               "  Y[n, kb, oh, ow, kx] =\n      %s\n      + bias[kb, kx]%s\n"
               "    where n < N, kb < KB, oh < H + pad_top + pad_bottom - %d, ow < W + pad_left + pad_right - %d, kx < X\n",
               body.s ? body.s : "", residual ? " + residual[n, kb, oh, ow, kx]" : "", r - 1, r - 1);
  free(body.s);
  tsl_text_put(&b, "  @tag(\"conv2d_winograd\")\n"
                   "  out[n, kb, oh, ow, kx] = select(act == 1, max(Y[n, kb, oh, ow, kx], 0.0),\n"
                   "                           select(act == 2, min(max(Y[n, kb, oh, ow, kx], clip_min), clip_max),\n"
                   "                                  Y[n, kb, oh, ow, kx]))\n");
  char *text = NULL;
  if ((st = sb_finish(&b, &text)) != TSL_OK) return st;
  /* TH and TW are macros in the text above: expand them */
  tsl_text_buf x = {0};
  for (const char *p = text; *p;) {
    if ((p[0] == 'T') && (p[1] == 'H' || p[1] == 'W') && !isalnum((unsigned char)p[2]) && p[2] != '_' &&
        (p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
      tsl_text_put(&x, "%s", p[1] == 'H' ? th : tw);
      p += 2;
    } else {
      tsl_text_put(&x, "%c", *p++);
    }
  }
  free(text);
  return sb_finish(&x, out);
}

/* ---- the weight transform text -------------------------------------------- */

static void term_weight(tsl_text_buf *b, int r) {
  tsl_text_put(b, "weight[kb * lanes + kx, c, %d, s]", r);
}
static void term_gw(tsl_text_buf *b, int s) {
  tsl_text_put(b, "Gw[e, %d, kb, c, kx]", s);
}

tsl_status tsl_winograd_weight_text(const tsl_winograd_transform *T, const char *name, char **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "winograd: NULL output");
  *out = NULL;
  tsl_status st = check_transform(T, name);
  if (st != TSL_OK) return st;
  int a = T->alpha, r = T->r;
  tsl_rational g[TSL_WINOGRAD_MAX_ALPHA * TSL_WINOGRAD_MAX_R];
  for (int i = 0; i < a; i++)
    for (int j = 0; j < r; j++) g[i * r + j] = T->G[i][j];
  tsl_text_buf b = {0};
  tsl_text_put(&b, "// kernel transform U = G g G^T of Winograd F(%dx%d, %dx%d), points ", T->m, T->m, r, r);
  write_points(&b, T);
  tsl_text_put(&b, "\n// channels padded with zeros to a multiple of lanes (the NCHW[x]c block)\n");
  tsl_text_put(&b,
               "op %s(weight: f32[K, C, R, S], lanes: int = 1)\n"
               "  assert R == %d && S == %d, \"winograd F(m, %d) needs a %dx%d kernel\"\n"
               "  assert lanes >= 1, \"lanes must be >= 1\"\n",
               name, r, r, r, r, r);
  tsl_text_buf body = {0};
  write_select_chain(&body, "e", a, r, g, r, term_weight, "        ");
  tsl_text_put(&b,
               "  Gw[e, s, kb, c, kx] = select(c < C && kb * lanes + kx < K,\n        %s,\n        0.0)\n"
               "    where e < %d, s < %d, kb < (K + lanes - 1) / lanes, c < (C + lanes - 1) / lanes * lanes, kx < lanes\n",
               body.s ? body.s : "", a, r);
  free(body.s);
  body = (tsl_text_buf){0};
  write_select_chain(&body, "nu", a, r, g, r, term_gw, "      ");
  tsl_text_put(&b, "  @tag(\"winograd_weight\")\n  U[e, nu, kb, c, kx] =\n      %s\n    where nu < %d\n", body.s ? body.s : "", a);
  free(body.s);
  return sb_finish(&b, out);
}

/* ---- the registry's variants ------------------------------------------------ */

static const int rank_conv[] = {5, 5, 2, 5};
static const int rank_weight[] = {4};
static const int64_t ex_weight3[] = {16, 8, 3, 3}, ex_weight4[] = {16, 8, 4, 4}, ex_weight5[] = {16, 8, 5, 5};
static const int64_t *const ex_weight3_shapes[] = {ex_weight3}, *const ex_weight4_shapes[] = {ex_weight4},
                           *const ex_weight5_shapes[] = {ex_weight5};
static const tsl_dsl_param_value ex_weight_params[] = {{"lanes", TSL_DSL_PARAM_INT, 8, 0.0}};
static const tsl_dsl_param_value ex_conv_params[] = {
    {"pad_top", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_left", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_bottom", TSL_DSL_PARAM_INT, 1, 0.0},
    {"pad_right", TSL_DSL_PARAM_INT, 1, 0.0},
    {"act", TSL_DSL_PARAM_INT, 1, 0.0},
};
/* 14 x 14 is a multiple of no tile size: the example has border tiles for every m (the
 * output is 17 - r on a side with the example's padding of 1) */
static const int64_t ex_data[] = {1, 1, 14, 14, 8}, ex_bias[] = {2, 8}, ex_res3[] = {1, 2, 14, 14, 8},
                     ex_res4[] = {1, 2, 13, 13, 8}, ex_res5[] = {1, 2, 12, 12, 8};
static const int64_t ex_u4[] = {4, 4, 2, 8, 8}, ex_u5[] = {5, 5, 2, 8, 8}, ex_u6[] = {6, 6, 2, 8, 8},
                     ex_u7[] = {7, 7, 2, 8, 8}, ex_u8[] = {8, 8, 2, 8, 8};
static const int64_t *const ex_f2r3[] = {ex_data, ex_u4, ex_bias, ex_res3};
static const int64_t *const ex_f4r3[] = {ex_data, ex_u6, ex_bias, ex_res3};
static const int64_t *const ex_f6r3[] = {ex_data, ex_u8, ex_bias, ex_res3};
static const int64_t *const ex_f2r4[] = {ex_data, ex_u5, ex_bias, ex_res4};
static const int64_t *const ex_f4r4[] = {ex_data, ex_u7, ex_bias, ex_res4};
static const int64_t *const ex_f2r5[] = {ex_data, ex_u6, ex_bias, ex_res5};
static const int64_t *const ex_f4r5[] = {ex_data, ex_u8, ex_bias, ex_res5};

/* The (m, r) of the registry, with their operators' names written out (workload keys in
 * records files, found with grep): the conv, the conv with a residual and the kernel
 * transform. F(m, 3) keeps its names from before larger kernels were offered. */
static const struct {
  int m, r;
  const char *conv, *add, *weight;
  const int64_t *const *conv_shapes, *const *weight_shapes;
} variants[] = {
    {2, 3, "conv2d_winograd_f2", "conv2d_winograd_f2_add", "winograd_weight_f2", ex_f2r3, ex_weight3_shapes},
    {4, 3, "conv2d_winograd_f4", "conv2d_winograd_f4_add", "winograd_weight_f4", ex_f4r3, ex_weight3_shapes},
    {6, 3, "conv2d_winograd_f6", "conv2d_winograd_f6_add", "winograd_weight_f6", ex_f6r3, ex_weight3_shapes},
    {2, 4, "conv2d_winograd_f2_r4", "conv2d_winograd_f2_r4_add", "winograd_weight_f2_r4", ex_f2r4, ex_weight4_shapes},
    {4, 4, "conv2d_winograd_f4_r4", "conv2d_winograd_f4_r4_add", "winograd_weight_f4_r4", ex_f4r4, ex_weight4_shapes},
    {2, 5, "conv2d_winograd_f2_r5", "conv2d_winograd_f2_r5_add", "winograd_weight_f2_r5", ex_f2r5, ex_weight5_shapes},
    {4, 5, "conv2d_winograd_f4_r5", "conv2d_winograd_f4_r5_add", "winograd_weight_f4_r5", ex_f4r5, ex_weight5_shapes},
};
enum { NVARIANTS = sizeof variants / sizeof variants[0], NFAMILY = 3 * NVARIANTS };

/* ---- workloads ------------------------------------------------------------ */

/* The checks of tsl_winograd_supports (any_kernel false: 3x3 only) and
 * tsl_winograd_supports_kernel (any_kernel: every r x r of the registry). */
static tsl_status supports(const tsl_conv2d_layer *l, int m, bool any_kernel) {
  if (!l) return tsl_error(TSL_ERR_INVALID, "winograd: NULL layer");
  if (tsl_conv2d_layer_check(l) != TSL_OK) return tsl_error(TSL_ERR_INVALID, "winograd: %s", tsl_last_error());
  if (l->act == TSL_CONV2D_ACT_CLIP && !(l->clip_min <= l->clip_max))
    return tsl_error(TSL_ERR_INVALID, "winograd: clip range [%g, %g] is empty", l->clip_min, l->clip_max);
  if (!any_kernel && (l->R != 3 || l->S != 3))
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: kernel %" PRId64 "x%" PRId64
                                          " (F(m x m, 3 x 3) needs a 3x3 kernel; use a direct convolution)",
                     l->R, l->S);
  if (l->R != l->S || l->R < 3 || l->R > 5)
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: kernel %" PRId64 "x%" PRId64
                                          " (F(m x m, r x r) needs an r x r kernel with r = 3, 4 or 5; use a direct "
                                          "convolution)",
                     l->R, l->S);
  int r = (int)l->R;
  if (l->stride_h != 1 || l->stride_w != 1)
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: stride %" PRId64 "x%" PRId64
                                          " (F(m x m, %d x %d) needs stride 1; use a direct convolution)",
                     l->stride_h, l->stride_w, r, r);
  if (l->dilation_h != 1 || l->dilation_w != 1)
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: dilation %" PRId64 "x%" PRId64
                                          " (F(m x m, %d x %d) needs dilation 1; use a direct convolution)",
                     l->dilation_h, l->dilation_w, r, r);
  if (l->groups != 1)
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: groups %" PRId64 " (only groups = 1; use a grouped convolution)",
                     l->groups);
  if (!tsl_winograd_default_points_r(m, r, NULL))
    return tsl_error(TSL_ERR_UNSUPPORTED, "winograd: F(%dx%d, %dx%d) is not provided (m is 2, 4 or 6 for 3x3, 2 or 4 "
                     "for 4x4 and 5x5)",
                     m, m, r, r);
  return TSL_OK;
}

const char *tsl_winograd_op_name(int m, int r, bool residual) {
  for (int i = 0; i < NVARIANTS; i++)
    if (variants[i].m == m && variants[i].r == r) return residual ? variants[i].add : variants[i].conv;
  return NULL;
}

tsl_status tsl_winograd_supports(const tsl_conv2d_layer *l, int m) { return supports(l, m, false); }

tsl_status tsl_winograd_supports_kernel(const tsl_conv2d_layer *l, int m) { return supports(l, m, true); }

static tsl_status instantiate_text(const char *text, const char *name, int ninputs, const int64_t *const *shapes,
                                   const int *ndims, int nparams, const tsl_dsl_param_value *params,
                                   tsl_te_program **out) {
  tsl_dsl_module *mod = NULL;
  tsl_status st = tsl_dsl_parse(text, name, &mod);
  if (st != TSL_OK) return st;
  const tsl_dsl_op *def = tsl_dsl_module_find(mod, name);
  if (!def) st = tsl_error(TSL_ERR_INVALID, "winograd: text does not define %s", name);
  if (st == TSL_OK) st = tsl_dsl_instantiate(def, ninputs, shapes, ndims, nparams, params, out);
  if (st == TSL_OK) st = tsl_te_check(*out);
  tsl_dsl_module_free(mod);
  return st;
}

tsl_status tsl_winograd_instantiate(const tsl_conv2d_layer *w, int m, const tsl_winograd_transform *T,
                                    tsl_te_program **conv, tsl_te_program **weights) {
  if (conv) *conv = NULL;
  if (weights) *weights = NULL;
  tsl_status st = tsl_winograd_supports_kernel(w, m);
  if (st != TSL_OK) return st;
  int r = (int)w->R;
  tsl_winograd_transform def;
  if (!T) {
    if ((st = tsl_winograd_default_r(m, r, &def)) != TSL_OK) return st;
    T = &def;
  }
  if (T->m != m || T->r != r)
    return tsl_error(TSL_ERR_INVALID, "winograd: the workload asks for F(%d, %d), the transform is F(%d, %d)", m, r,
                     T->m, T->r);
  tsl_winograd_shape ws = tsl_winograd_layer_shape(w, m);
  int64_t X = ws.X, CB = ws.CB, CP = ws.CP, KP = ws.KP, a = T->alpha;
  char *text = NULL;
  if (conv && st == TSL_OK) st = tsl_winograd_conv_text(T, "conv2d_winograd", w->has_residual, &text);
  if (conv && st == TSL_OK) {
    int64_t OH = ws.OH, OW = ws.OW;
    const int64_t sd[5] = {w->N, CB, w->H, w->W, X}, su[5] = {a, a, KP / X, CP, X}, sb[2] = {KP / X, X},
                  sr[5] = {w->N, KP / X, OH, OW, X};
    const int64_t *shapes[4] = {sd, su, sb, sr};
    const int nd[4] = {5, 5, 2, 5};
    /* the pads and the epilogue (stride and dilation are 1: their defaults) */
    tsl_dsl_param_value params[TSL_CONV2D_LAYER_MAX_PARAMS];
    int np = tsl_conv2d_layer_params(w, TSL_CONV2D_PARAMS_WINDOW | TSL_CONV2D_PARAMS_EPILOGUE, params);
    /* the GEMM skips the zero-padding channels of a partial last block */
    int64_t in_channels = tsl_winograd_in_channels(w);
    if (in_channels > 0) params[np++] = tsl_dsl_int_param("in_channels", in_channels);
    st = instantiate_text(text, "conv2d_winograd", w->has_residual ? 4 : 3, shapes, nd, np, params, conv);
  }
  free(text);
  text = NULL;
  if (weights && st == TSL_OK) st = tsl_winograd_weight_text(T, "winograd_weight", &text);
  if (weights && st == TSL_OK) {
    const int64_t sw[4] = {w->K, w->C, r, r};
    const int64_t *shapes[1] = {sw};
    const int nd[1] = {4};
    tsl_dsl_param_value lanes = tsl_dsl_int_param("lanes", X);
    st = instantiate_text(text, "winograd_weight", 1, shapes, nd, 1, &lanes, weights);
  }
  free(text);
  if (st != TSL_OK) {
    if (conv) *conv = NULL;
    if (weights) *weights = NULL;
  }
  return st;
}

/* ---- the registry family -------------------------------------------------- */

static tsl_op_source family[NFAMILY];
static pthread_once_t family_once = PTHREAD_ONCE_INIT;

/* The built-in texts are generated once; a failure here is a tessel bug (the default
 * points are fixed), reported like an unparsable built-in text. */
static void family_init(void) {
  static char descriptions[NFAMILY][160];
  for (int i = 0; i < NVARIANTS; i++) {
    int m = variants[i].m, r = variants[i].r;
    tsl_winograd_transform T;
    char *conv = NULL, *add = NULL, *weight = NULL;
    const char *n_conv = variants[i].conv, *n_add = variants[i].add, *n_weight = variants[i].weight;
    if (tsl_winograd_default_r(m, r, &T) != TSL_OK || tsl_winograd_conv_text(&T, n_conv, false, &conv) != TSL_OK ||
        tsl_winograd_conv_text(&T, n_add, true, &add) != TSL_OK ||
        tsl_winograd_weight_text(&T, n_weight, &weight) != TSL_OK) {
      fprintf(stderr, "tessel op registry: winograd F(%d,%d) texts: %s\n", m, r, tsl_last_error());
      abort();
    }
    snprintf(descriptions[3 * i], sizeof descriptions[0],
             "Winograd F(%dx%d, %dx%d) conv, NCHW[x]c data, kernel-transformed weights U, bias, act (f32)", m, m, r, r);
    snprintf(descriptions[3 * i + 1], sizeof descriptions[0],
             "Winograd F(%dx%d, %dx%d) conv as %s, out = act(conv + bias + residual) (f32)", m, m, r, r, n_conv);
    snprintf(descriptions[3 * i + 2], sizeof descriptions[0],
             "kernel transform U = G g G^T of Winograd F(%dx%d, %dx%d), channels zero-padded to lanes (f32)", m, m, r,
             r);
    const int64_t *const *cs = variants[i].conv_shapes;
    family[3 * i] = (tsl_op_source){n_conv, descriptions[3 * i], conv, {3, rank_conv, cs, 5, ex_conv_params}};
    family[3 * i + 1] = (tsl_op_source){n_add, descriptions[3 * i + 1], add, {4, rank_conv, cs, 5, ex_conv_params}};
    family[3 * i + 2] = (tsl_op_source){n_weight, descriptions[3 * i + 2], weight,
                                        {1, rank_weight, variants[i].weight_shapes, 1, ex_weight_params}};
  }
}

const tsl_op_source *tsl_ops_winograd_family(int *n) {
  pthread_once(&family_once, family_init);
  *n = NFAMILY;
  return family;
}
