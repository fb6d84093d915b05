/* Layout transforms, dense, softmax and flatten of the operator library (batch norm,
 * broadcasting, concat and channel shuffle are generated operators: test_generators*.c), against the naive references in
 * tests/ref (ref_ops2.h, ref_nn.h), with the templates' default and random configs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/ops_util.h"
#include "ref/ref_nn.h"
#include "ref/ref_ops2.h"
#include "ops/nn/nn_schedule.h"

typedef struct op_run {
  const char *op;
  int ninputs;
  int ndims[4];
  int64_t shapes[4][6];
  int nparams;
  tsl_dsl_param_value params[8];
  const float *inputs[4];
} op_run;

static int64_t numel(const tsl_buffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
  return n;
}

/* Instantiates r->op, runs it with the library's default schedule and `nrandom` random
 * configs of its template, and checks every run against want (n values, tolerance tol
 * relative to the magnitude; 0: bit-exact). Returns false (printing why) on failure. */
static bool run_and_check(const op_run *r, int nrandom, const double *want, int64_t n, double tol) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  const int64_t *shapes[4];
  for (int i = 0; i < r->ninputs; i++) shapes[i] = r->shapes[i];
  tsl_te_program *p = NULL;
  bool ok = true;
  if (tsl_op_instantiate(r->op, r->ninputs, shapes, r->ndims, r->nparams, r->params, &p) != TSL_OK) {
    printf("\n  %s: %s\n", r->op, tsl_last_error());
    ok = false;
  }
  float *bufs[5] = {0};
  if (ok) {
    for (int i = 0; i < r->ninputs; i++) {
      bufs[i] = ops_alloc(numel(p->inputs[i]->buf));
      memcpy(bufs[i], r->inputs[i], sizeof(float) * (size_t)numel(p->inputs[i]->buf));
    }
    bufs[r->ninputs] = ops_alloc(numel(p->outputs[0]->buf));
    if (numel(p->outputs[0]->buf) != n) {
      printf("\n  %s: %lld outputs, the reference has %lld\n", r->op, (long long)numel(p->outputs[0]->buf),
             (long long)n);
      ok = false;
    }
  }
  const tsl_template *tpl = ok ? ops_template(r->op, NULL) : NULL;
  tsl_config cfgs[8];
  int ncfg = tpl ? ops_random_configs(tpl, p, 31, nrandom < 8 ? nrandom : 8, 24, cfgs) : 0;
  for (int i = -1; ok && i < ncfg; i++) {
    tsl_schedule *s = NULL;
    if (i < 0) {
      if (tsl_oplib_default_schedule(r->op, p, ops_target(), &s) != TSL_OK)
        printf("\n  %s: %s\n", r->op, tsl_last_error());
    } else {
      s = ops_schedule_config(tpl, p, &cfgs[i]);
    }
    float *out = bufs[r->ninputs];
    for (int64_t e = 0; e < n; e++) out[e] = -777.0f;
    ok = s && ops_build_run(s, r->op, bufs);
    for (int b = 0; ok && b <= r->ninputs; b++) ok = ops_check_guard(bufs[b]);
    if (ok) {
      double err = ops_rel_error(out, want, n);
      bool exact = true;
      for (int64_t e = 0; tol == 0.0 && e < n; e++) exact = exact && (isnan(want[e]) ? isnan(out[e]) : out[e] == want[e]);
      if (!(err <= tol) || !exact) {
        printf("\n  %s (config %d): error %g%s\n", r->op, i, err, exact ? "" : " (not bit-exact)");
        for (int64_t e = 0, shown = 0; e < n && shown < 3; e++)
          if (!(fabs(out[e] - want[e]) <= tol * fmax(1.0, fabs(want[e])))) {
            printf("    [%lld] got %.7g want %.7g\n", (long long)e, out[e], want[e]);
            shown++;
          }
        ok = false;
      }
    }
    tsl_schedule_free(s);
  }
  for (int i = 0; i <= r->ninputs; i++) ops_free(bufs[i]);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return ok;
}

static double *to_double(const float *f, int64_t n) {
  double *d = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) d[i] = f[i];
  return d;
}

static float *randoms(int64_t n, uint64_t seed) {
  float *f = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
  ops_fill(f, n, seed, -1.0f, 1.0f);
  return f;
}

/* Class 2 and 19: NCHW -> NCHW[x]c with C = 1, 3, 9, 33 (not multiples of x) and x = 4,
 * 8, 16: the padding lanes are 0; back to NCHW drops them; re-blocking 8 -> 4 -> 16 keeps
 * every channel and zero padding. */
static void test_layout_round_trips_zero_padding(void) {
  static const int64_t chans[] = {1, 3, 9, 33}, blocks[] = {4, 8, 16};
  for (int ci = 0; ci < 4; ci++)
    for (int bi = 0; bi < 3; bi++) {
      int64_t N = 2, C = chans[ci], H = 3, W = 5, x = blocks[bi], CB = (C + x - 1) / x;
      float *nchw = randoms(N * C * H * W, 500 + (uint64_t)(ci * 3 + bi));
      float *blocked = malloc(sizeof(float) * (size_t)(N * CB * H * W * x));
      ref2_to_nchwc(nchw, N, C, H, W, x, 0.0f, blocked);
      op_run to = {"nchw_to_nchwc", 1, {4}, {{N, C, H, W}}, 1, {tsl_dsl_int_param("block", x)}, {nchw}};
      double *want = to_double(blocked, N * CB * H * W * x);
      CU_ASSERT(run_and_check(&to, 1, want, N * CB * H * W * x, 0.0));
      free(want);
      op_run back = {"nchwc_to_nchw", 1, {5}, {{N, CB, H, W, x}}, 1, {tsl_dsl_int_param("channels", C)}, {blocked}};
      want = to_double(nchw, N * C * H * W);
      CU_ASSERT(run_and_check(&back, 1, want, N * C * H * W, 0.0));
      free(want);
      int64_t y = blocks[(bi + 1) % 3], OB = (C + y - 1) / y;
      float *re = malloc(sizeof(float) * (size_t)(N * OB * H * W * y));
      ref2_to_nchwc(nchw, N, C, H, W, y, 0.0f, re);
      op_run rb = {"nchwc_reblock", 1, {5}, {{N, CB, H, W, x}}, 2,
                   {tsl_dsl_int_param("channels", C), tsl_dsl_int_param("block", y)}, {blocked}};
      want = to_double(re, N * OB * H * W * y);
      CU_ASSERT(run_and_check(&rb, 0, want, N * OB * H * W * y, 0.0));
      free(want);
      free(re);
      free(nchw);
      free(blocked);
    }
}

static void test_weight_relayouts(void) {
  int64_t K = 11, C = 9, R = 3, S = 2, x = 8, y = 4;
  float *w = randoms(K * C * R * S, 600);
  int64_t KB = (K + y - 1) / y, CB = (C + x - 1) / x;
  float *exp = malloc(sizeof(float) * (size_t)(KB * CB * R * S * x * y));
  ref2_weight_nchwc(w, K, C, R, S, x, y, exp);
  op_run a = {"weight_to_nchwc", 1, {4}, {{K, C, R, S}}, 2,
              {tsl_dsl_int_param("in_block", x), tsl_dsl_int_param("out_block", y)}, {w}};
  double *want = to_double(exp, KB * CB * R * S * x * y);
  CU_ASSERT(run_and_check(&a, 1, want, KB * CB * R * S * x * y, 0.0));
  free(want);
  ref2_weight_oblocked(w, K, C, R, S, y, exp);
  op_run g = {"weight_to_grouped", 1, {4}, {{K, C, R, S}}, 1, {tsl_dsl_int_param("out_block", y)}, {w}};
  want = to_double(exp, KB * C * R * S * y);
  CU_ASSERT(run_and_check(&g, 1, want, KB * C * R * S * y, 0.0));
  free(want);
  ref2_weight_depthwise(w, K, R, S, x, exp); /* the first K*R*S values as a K x 1 x R x S weight */
  op_run d = {"weight_to_depthwise", 1, {4}, {{K, 1, R, S}}, 1, {tsl_dsl_int_param("block", x)}, {w}};
  want = to_double(exp, (K + x - 1) / x * R * S * x);
  CU_ASSERT(run_and_check(&d, 1, want, (K + x - 1) / x * R * S * x, 0.0));
  free(want);
  /* dense: (O, K) -> (O/y, K, y) is the grouped layout with R = S = 1 */
  ref2_weight_oblocked(w, K, C, 1, 1, y, exp);
  op_run de = {"weight_to_dense", 1, {2}, {{K, C}}, 1, {tsl_dsl_int_param("block", y)}, {w}};
  want = to_double(exp, KB * C * y);
  CU_ASSERT(run_and_check(&de, 1, want, KB * C * y, 0.0));
  free(want);
  /* block-diagonal: 12 output channels in 3 groups of 3 input channels (C = 9), blocks of
   * 4: output block 1 (channels 4..7, groups 1 and 2) reaches input blocks 0..2 */
  {
    int64_t K3 = 12, G = 3, CG = 3, xb = 4, band = 3, KB3 = 3;
    ref2_weight_blockdiag(w, K3, G * CG, G, R, S, xb, band, exp);
    op_run bd = {"weight_to_blockdiag", 1, {4}, {{K3, CG, R, S}}, 4,
                 {tsl_dsl_int_param("groups", G), tsl_dsl_int_param("in_block", xb), tsl_dsl_int_param("out_block", xb),
                  tsl_dsl_int_param("band", band)},
                 {w}};
    want = to_double(exp, KB3 * band * R * S * xb * xb);
    CU_ASSERT(run_and_check(&bd, 1, want, KB3 * band * R * S * xb * xb, 0.0));
    free(want);
  }
  ref2_vector_blocks(w, K, x, exp);
  op_run v = {"vector_to_blocks", 1, {1}, {{K}}, 1, {tsl_dsl_int_param("block", x)}, {w}};
  want = to_double(exp, (K + x - 1) / x * x);
  CU_ASSERT(run_and_check(&v, 1, want, (K + x - 1) / x * x, 0.0));
  free(want);
  free(exp);
  free(w);
}

static void test_dense_packed(void) {
  static const int64_t dims[][3] = {{1, 512, 1000}, {3, 37, 13}, {2, 9, 4}};
  int64_t y = ops_lanes();
  for (int i = 0; i < 3; i++) {
    int64_t B = dims[i][0], K = dims[i][1], O = dims[i][2], OB = (O + y - 1) / y;
    float *d = randoms(B * K, 1100 + (uint64_t)i), *w = randoms(O * K, 1110 + (uint64_t)i),
          *bias = randoms(O, 1120 + (uint64_t)i), *ref = malloc(sizeof(float) * (size_t)(B * O));
    int act = i % 2;
    ref2_dense(d, w, bias, B, K, O, act, ref);
    float *pw = malloc(sizeof(float) * (size_t)(OB * K * y)), *pb = malloc(sizeof(float) * (size_t)(OB * y));
    ref2_weight_oblocked(w, O, K, 1, 1, y, pw);
    ref2_vector_blocks(bias, O, y, pb);
    double *want = malloc(sizeof(double) * (size_t)(B * OB * y));
    for (int64_t b = 0; b < B; b++)
      for (int64_t o = 0; o < OB * y; o++) want[b * OB * y + o] = o < O ? ref[b * O + o] : 0.0;
    op_run r = {"dense_packed", 3, {2, 3, 2}, {{B, K}, {OB, K, y}, {OB, y}}, 1, {tsl_dsl_int_param("act", act)},
                {d, pw, pb}};
    CU_ASSERT(run_and_check(&r, 2, want, B * OB * y, 2e-6));
    free(want);
    free(d);
    free(w);
    free(bias);
    free(ref);
    free(pw);
    free(pb);
  }
}

/* Softmax over rows of 1, 7, 8 and 1000 values, with large inputs (the max is
 * subtracted, so exp never overflows). */
static void test_softmax(void) {
  static const int64_t dims[][2] = {{3, 1}, {2, 7}, {4, 8}, {1, 1000}};
  for (int i = 0; i < 4; i++) {
    int64_t N = dims[i][0], C = dims[i][1];
    float *d = malloc(sizeof(float) * (size_t)(N * C)), *ref = malloc(sizeof(float) * (size_t)(N * C));
    ops_fill(d, N * C, 1200 + (uint64_t)i, -50.0f, 80.0f);
    ref_nn_softmax(d, N, C, 1, ref);
    double *want = to_double(ref, N * C);
    op_run r = {"softmax", 1, {2}, {{N, C}}, 0, {{0}}, {d}};
    CU_ASSERT(run_and_check(&r, 0, want, N * C, 1e-6));
    free(want);
    free(d);
    free(ref);
  }
}

static void test_flatten(void) {
  int64_t N = 2, C = 13, H = 3, W = 2, x = ops_lanes(), CB = (C + x - 1) / x;
  float *d = randoms(N * C * H * W, 1300), *bd = malloc(sizeof(float) * (size_t)(N * CB * H * W * x));
  ref2_to_nchwc(d, N, C, H, W, x, 0.0f, bd);
  double *want = to_double(d, N * C * H * W);
  op_run r = {"flatten_nchwc", 1, {5}, {{N, CB, H, W, x}}, 1, {tsl_dsl_int_param("channels", C)}, {bd}};
  CU_ASSERT(run_and_check(&r, 1, want, N * C * H * W, 0.0));
  op_run f = {"flatten", 1, {4}, {{N, C, H, W}}, 0, {{0}}, {d}};
  CU_ASSERT(run_and_check(&f, 1, want, N * C * H * W, 0.0));
  free(want);
  free(d);
  free(bd);
}

void ops_tests_nn(CU_pSuite s) {
  CU_add_test(s, "test_layout_round_trips_zero_padding", test_layout_round_trips_zero_padding);
  CU_add_test(s, "test_weight_relayouts", test_weight_relayouts);
  CU_add_test(s, "test_dense_packed", test_dense_packed);
  CU_add_test(s, "test_softmax", test_softmax);
  CU_add_test(s, "test_flatten", test_flatten);
}
