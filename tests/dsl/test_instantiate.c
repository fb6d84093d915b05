/* Instantiating the built-in conv2d and matmul: output shapes against the convolution
 * size formula (written here), values against the naive references of tests/ref through
 * an independent TE interpreter, and the parameters' defaults and checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_tests.h"
#include "ref/ref_ops.h"
#include "te_eval.h"

typedef struct conv_case {
  int64_t N, C, H, W, K, R, S;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw;
} conv_case;

/* floor((H + pt + pb - dh*(R - 1) - 1) / sh) + 1, or 0 when the dilated kernel does not
 * fit in the padded input. */
static int64_t expected_extent(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t k, int64_t stride, int64_t dil) {
  int64_t span = in + pad_lo + pad_hi - dil * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

static tsl_status conv_instantiate(const conv_case *c, tsl_te_program **p) {
  const int64_t data[] = {c->N, c->C, c->H, c->W}, weight[] = {c->K, c->C, c->R, c->S};
  const int64_t *shapes[] = {data, weight};
  const int ndims[] = {4, 4};
  const tsl_dsl_param_value params[] = {
      tsl_dsl_int_param("stride_h", c->sh),   tsl_dsl_int_param("stride_w", c->sw),
      tsl_dsl_int_param("pad_top", c->pt),    tsl_dsl_int_param("pad_left", c->pl),
      tsl_dsl_int_param("pad_bottom", c->pb), tsl_dsl_int_param("pad_right", c->pr),
      tsl_dsl_int_param("dilation_h", c->dh), tsl_dsl_int_param("dilation_w", c->dw),
  };
  return tsl_op_instantiate("conv2d", 2, shapes, ndims, 8, params, p);
}

static void check_conv_shape(const conv_case *c) {
  tsl_te_program *p = NULL;
  tsl_status st = conv_instantiate(c, &p);
  int64_t oh = expected_extent(c->H, c->pt, c->pb, c->R, c->sh, c->dh);
  int64_t ow = expected_extent(c->W, c->pl, c->pr, c->S, c->sw, c->dw);
  if (oh < 1 || ow < 1) {
    CU_ASSERT_EQUAL(st, TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "(must be >= 1)"));
    return;
  }
  if (st != TSL_OK) fprintf(stderr, "\nconv2d %lldx%lld k%lldx%lld: %s\n", (long long)c->H, (long long)c->W,
                            (long long)c->R, (long long)c->S, tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK); /* includes tsl_te_check: every read proven in bounds */
  const tsl_buffer *out = p->outputs[0]->buf;
  CU_ASSERT_EQUAL(out->ndim, 4);
  CU_ASSERT_EQUAL(out->shape[0], c->N);
  CU_ASSERT_EQUAL(out->shape[1], c->K);
  CU_ASSERT_EQUAL(out->shape[2], oh);
  CU_ASSERT_EQUAL(out->shape[3], ow);
}

static void test_conv2d_output_shapes_match_formula(void) {
  uint64_t seed = 12345;
  for (int it = 0; it < 300; it++) {
    conv_case c = {1 + (int64_t)(dsl_rand(&seed) % 2), 1 + (int64_t)(dsl_rand(&seed) % 4), 1 + (int64_t)(dsl_rand(&seed) % 17),
                   1 + (int64_t)(dsl_rand(&seed) % 17), 1 + (int64_t)(dsl_rand(&seed) % 4), 1 + (int64_t)(dsl_rand(&seed) % 5),
                   1 + (int64_t)(dsl_rand(&seed) % 5), 1 + (int64_t)(dsl_rand(&seed) % 3), 1 + (int64_t)(dsl_rand(&seed) % 3),
                   (int64_t)(dsl_rand(&seed) % 4), (int64_t)(dsl_rand(&seed) % 4), (int64_t)(dsl_rand(&seed) % 4),
                   (int64_t)(dsl_rand(&seed) % 4), 1 + (int64_t)(dsl_rand(&seed) % 3), 1 + (int64_t)(dsl_rand(&seed) % 3)};
    check_conv_shape(&c);
  }
}

/* Runs the instantiated conv2d through the TE interpreter and compares with
 * ref_conv2d_nchw (float64 accumulation). */
static void check_conv_values(const conv_case *c) {
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(conv_instantiate(c, &p), TSL_OK);
  int64_t nin = c->N * c->C * c->H * c->W, nw = c->K * c->C * c->R * c->S;
  int64_t nout = tsl_buffer_numel(p->outputs[0]->buf);
  float *in = malloc(sizeof(float) * (size_t)nin), *w = malloc(sizeof(float) * (size_t)nw);
  float *ref = malloc(sizeof(float) * (size_t)nout), *got = malloc(sizeof(float) * (size_t)nout);
  double *din = malloc(sizeof(double) * (size_t)nin), *dw = malloc(sizeof(double) * (size_t)nw);
  double *dout = malloc(sizeof(double) * (size_t)nout);
  ref_fill_uniform(in, nin, 7, -1.0f, 1.0f);
  ref_fill_uniform(w, nw, 8, -1.0f, 1.0f);
  for (int64_t i = 0; i < nin; i++) din[i] = in[i];
  for (int64_t i = 0; i < nw; i++) dw[i] = w[i];
  ref_conv2d_params rp = {c->N, c->C, c->H, c->W, c->K, c->R, c->S, c->sh, c->sw, c->pt, c->pl, c->pb, c->pr, c->dh, c->dw, 1};
  CU_ASSERT_EQUAL(ref_conv2d_out_h(&rp), p->outputs[0]->buf->shape[2]);
  CU_ASSERT_EQUAL(ref_conv2d_out_w(&rp), p->outputs[0]->buf->shape[3]);
  ref_conv2d_nchw(&rp, in, w, NULL, ref);
  const double *inputs[] = {din, dw};
  CU_ASSERT_TRUE(te_eval_program(p, inputs, &dout));
  for (int64_t i = 0; i < nout; i++) got[i] = (float)dout[i];
  CU_ASSERT(ref_max_rel_error(got, ref, nout) < 1e-5);
  free(in), free(w), free(ref), free(got), free(din), free(dw), free(dout);
}

static void test_conv2d_values_match_reference(void) {
  const conv_case cases[] = {
      {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 2, 9, 7, 3, 3, 2, 2, 1, 0, 2, 1, 0, 1, 2},
      {1, 1, 6, 6, 2, 1, 1, 3, 3, 0, 0, 0, 0, 1, 1},
      {1, 2, 7, 7, 2, 3, 3, 1, 2, 3, 3, 3, 3, 2, 2}, /* padding >= kernel, dilation */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_conv_values(&cases[i]);
}

/* shared/cases C06: kernel 2x4, stride (2,1), pad top 0 bottom 0 left 1 right 2 on 32x64 */
static void test_C06_asymmetric_padding_output_and_values(void) {
  conv_case c = {1, 1, 32, 64, 1, 2, 4, 2, 1, 0, 1, 0, 2, 1, 1};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(conv_instantiate(&c, &p), TSL_OK);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[2], 16);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[3], 64);
  check_conv_values(&c);
}

/* shared/cases C02: 73x73, 3x3, stride 1, pad 0 -> 71x71 (no pad 1 assumed anywhere) */
static void test_C02_unpadded_3x3_output_shape(void) {
  conv_case c = {1, 80, 73, 73, 192, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(conv_instantiate(&c, &p), TSL_OK);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[1], 192);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[2], 71);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[3], 71);
}

/* shared/cases C05 (regular conv part): 5x5, 3x3, dilation 2, stride 1, pad 2 keeps 5x5,
 * and the dilated taps are really used. */
static void test_C05_dilation_is_honoured(void) {
  conv_case c = {1, 4, 5, 5, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(conv_instantiate(&c, &p), TSL_OK);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[2], 5);
  CU_ASSERT_EQUAL(p->outputs[0]->buf->shape[3], 5);
  check_conv_values(&c);
}

static void test_conv2d_stage_structure(void) {
  conv_case c = {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(conv_instantiate(&c, &p), TSL_OK);
  int n;
  tsl_te_op **st = tsl_te_program_stages(p, &n);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_STRING_EQUAL(st[0]->name, "padded");
  CU_ASSERT_STRING_EQUAL(st[0]->tag, "injective");
  CU_ASSERT_EQUAL(st[0]->output->buf->shape[2], 10);
  CU_ASSERT_STRING_EQUAL(st[1]->tag, "conv2d");
  CU_ASSERT_EQUAL(st[1]->nreduce, 3);
  CU_ASSERT_STRING_EQUAL(st[1]->reduce_axis[0].var->var.name, "c");
  CU_ASSERT_EQUAL(st[1]->reduce_axis[1].extent, 3);
  CU_ASSERT_EQUAL(p->ninputs, 2);
  CU_ASSERT_STRING_EQUAL(p->inputs[0]->buf->name, "data");
  CU_ASSERT_STRING_EQUAL(p->inputs[1]->buf->name, "weight");
}

static void test_conv2d_refuses_bad_attributes(void) {
  conv_case zero_stride = {1, 1, 8, 8, 1, 3, 3, 0, 1, 0, 0, 0, 0, 1, 1};
  tsl_te_program *p;
  CU_ASSERT_EQUAL(conv_instantiate(&zero_stride, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "assertion failed: strides must be >= 1"));
  conv_case neg_pad = {1, 1, 8, 8, 1, 3, 3, 1, 1, -1, 0, 0, 0, 1, 1};
  CU_ASSERT_EQUAL(conv_instantiate(&neg_pad, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "paddings must be >= 0"));
  conv_case big_kernel = {1, 1, 4, 4, 1, 6, 3, 1, 1, 0, 0, 0, 0, 1, 1};
  CU_ASSERT_EQUAL(conv_instantiate(&big_kernel, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "the extent of axis y of stage out is -1 (must be >= 1)"));
  /* channel mismatch: C of data vs C of weight */
  const int64_t data[] = {1, 3, 8, 8}, weight[] = {4, 2, 3, 3};
  const int64_t *shapes[] = {data, weight};
  CU_ASSERT_EQUAL(tsl_op_instantiate("conv2d", 2, shapes, (const int[]){4, 4}, 0, NULL, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "size C is 2 here (weight, dimension 1) but 3 at"));
}

static void test_matmul_and_dense_values_match_reference(void) {
  const int64_t M = 5, N = 7, K = 6;
  const int64_t a[] = {M, K}, b[] = {K, N};
  tsl_te_program *p = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("matmul", 2, (const int64_t *[]){a, b}, (const int[]){2, 2}, 0, NULL, &p), TSL_OK);
  float A[5 * 6], B[6 * 7], ref[5 * 7], got[5 * 7];
  double dA[5 * 6], dB[6 * 7], dBt[7 * 6], dout[5 * 7], *outs[] = {dout};
  ref_fill_uniform(A, M * K, 1, -2.0f, 2.0f);
  ref_fill_uniform(B, K * N, 2, -2.0f, 2.0f);
  for (int i = 0; i < M * K; i++) dA[i] = A[i];
  for (int i = 0; i < K * N; i++) dB[i] = B[i];
  ref_matmul(M, N, K, A, B, ref);
  CU_ASSERT_TRUE(te_eval_program(p, (const double *[]){dA, dB}, outs));
  for (int i = 0; i < M * N; i++) got[i] = (float)dout[i];
  CU_ASSERT(ref_max_rel_error(got, ref, M * N) < 1e-5);
  /* dense(data, weight) = data x weight^T */
  for (int k = 0; k < K; k++)
    for (int n = 0; n < N; n++) dBt[n * K + k] = B[k * N + n];
  const int64_t wt[] = {N, K};
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("dense", 2, (const int64_t *[]){a, wt}, (const int[]){2, 2}, 0, NULL, &p), TSL_OK);
  CU_ASSERT_TRUE(te_eval_program(p, (const double *[]){dA, dBt}, outs));
  for (int i = 0; i < M * N; i++) got[i] = (float)dout[i];
  CU_ASSERT(ref_max_rel_error(got, ref, M * N) < 1e-5);
}

static void test_float_params_defaults_and_int_to_float(void) {
  const char *text = "op scale(a: f32[N], s: float = 0.5, t: float) out[i] = a[i] * s + t\n";
  tsl_dsl_module *m = dsl_parse_ok(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  const tsl_dsl_op *def = tsl_dsl_module_find(m, "scale");
  const int64_t a[] = {3};
  tsl_te_program *p = NULL;
  tsl_dsl_param_value t = tsl_dsl_int_param("t", 2); /* an int value for a float parameter */
  CU_ASSERT_EQUAL_FATAL(tsl_dsl_instantiate(def, 1, (const int64_t *[]){a}, (const int[]){1}, 1, &t, &p), TSL_OK);
  tsl_expr *body = p->outputs[0]->op->body; /* (a*0.5) + 2.0 */
  CU_ASSERT_DOUBLE_EQUAL(body->bin.a->bin.b->float_value, 0.5, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(body->bin.b->float_value, 2.0, 0.0);
  CU_ASSERT_TRUE(tsl_type_eq(body->bin.b->type, TSL_F32));
  tsl_dsl_module_free(m);
}

void tsl_tests_dsl_instantiate(void) {
  CU_pSuite s = dsl_suite("dsl_instantiate");
  CU_add_test(s, "conv2d_output_shapes_match_formula", test_conv2d_output_shapes_match_formula);
  CU_add_test(s, "conv2d_values_match_reference", test_conv2d_values_match_reference);
  CU_add_test(s, "C06_asymmetric_padding_output_and_values", test_C06_asymmetric_padding_output_and_values);
  CU_add_test(s, "C02_unpadded_3x3_output_shape", test_C02_unpadded_3x3_output_shape);
  CU_add_test(s, "C05_dilation_is_honoured", test_C05_dilation_is_honoured);
  CU_add_test(s, "conv2d_stage_structure", test_conv2d_stage_structure);
  CU_add_test(s, "conv2d_refuses_bad_attributes", test_conv2d_refuses_bad_attributes);
  CU_add_test(s, "matmul_and_dense_values_match_reference", test_matmul_and_dense_values_match_reference);
  CU_add_test(s, "float_params_defaults_and_int_to_float", test_float_params_defaults_and_int_to_float);
}
