/* The Winograd error study (shared/cases C03, class 5): each F(m,3) in float32 against
 * the float64 direct convolution of the same inputs, on C = K = 64, 56x56, pad 1, with
 * inputs of scale 1, 10, 100 and 1000. Asserted: every error within the documented
 * bound (tsl_winograd_error_bound, docs/winograd.md), F(6,3) of the order of F(4,3)
 * (at most 10x) at every scale, and that the points are what makes it so: a worse choice
 * of points for F(6,3) is several times less accurate. Then the larger kernels (F(2/4, 4),
 * F(2/4, 5)): against the reference on odd shapes, every epilogue, 8 and 16 lanes, 1 and 2
 * threads, and their own error study.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>

#include "target/target.h"
#include "winograd/wino_util.h"
#include "winograd/winograd_tests.h"

static tsl_jit *jit;

static int suite_init(void) { return wino_host_jit_new(&jit); }

static int suite_clean(void) { return wino_jit_free(&jit); }

enum { NSCALES = 4, NM = 3 };
static const double scales[NSCALES] = {1.0, 10.0, 100.0, 1000.0};

static void test_C03_error_of_every_m_at_every_input_scale(void) {
  wino_case c = {1, 64, 56, 56, 64, 1, 1, 1, 1, 4, 0, false, 0, 0};
  wino_kernel k[NM];
  bool built[NM];
  for (int i = 0; i < NM; i++) {
    c.m = 2 + 2 * i;
    built[i] = wino_kernel_build(jit, &c, NULL, NULL, &k[i]);
    CU_ASSERT(built[i]);
  }
  double err[NM][NSCALES], rms[NM][NSCALES];
  printf("\n  C=K=64 56x56 pad 1, max|err|/max|ref| (rms) vs float64 direct:");
  for (int s = 0; s < NSCALES; s++) {
    wino_data d;
    wino_data_make(&c, scales[s], 1000 + (uint64_t)s, &d);
    for (int i = 0; i < NM; i++) {
      wino_result r = built[i] ? wino_kernel_run(&k[i], &d, 1, NULL) : (wino_result){false, INFINITY, INFINITY, false};
      CU_ASSERT(r.ok);
      err[i][s] = r.max_err;
      rms[i][s] = r.rms_err;
    }
    wino_data_free(&d);
    printf("\n    scale %-5g F(2) %.2e (%.1e)  F(4) %.2e (%.1e)  F(6) %.2e (%.1e)", scales[s], err[0][s], rms[0][s],
           err[1][s], rms[1][s], err[2][s], rms[2][s]);
  }
  printf("\n");
  for (int s = 0; s < NSCALES; s++) {
    for (int i = 0; i < NM; i++) CU_ASSERT(err[i][s] <= tsl_winograd_error_bound(2 + 2 * i));
    CU_ASSERT(err[0][s] <= err[1][s]);        /* more points, more rounding */
    CU_ASSERT(err[2][s] <= 10.0 * err[1][s]); /* C03: F(6)'s error of the order of F(4)'s */
  }
  for (int i = 0; i < NM; i++) wino_kernel_free(&k[i]);
}

/* The same F(6,3) with -3 instead of -1/2 among its points: larger entries in A^T and
 * B^T, and an error several times the default points' (C03: the points matter). */
static void test_C03_choice_of_points_matters_for_F6(void) {
  wino_case c = {1, 32, 24, 24, 32, 1, 1, 1, 1, 6, 0, false, 0, 0};
  tsl_rational pts[7];
  int n = 0;
  CU_ASSERT_EQUAL_FATAL(tsl_winograd_parse_points("0, 1, -1, 2, -2, 1/2, -3", pts, 7, &n), TSL_OK);
  tsl_winograd_transform worse;
  CU_ASSERT_EQUAL_FATAL(tsl_winograd_make(6, 3, n, pts, &worse), TSL_OK);
  wino_data d;
  wino_data_make(&c, 100.0, 77, &d);
  wino_result good = wino_run(jit, &c, &d, NULL, NULL, 1, NULL);
  wino_result bad = wino_run(jit, &c, &d, &worse, NULL, 1, NULL);
  wino_data_free(&d);
  CU_ASSERT(good.ok && bad.ok);
  printf("\n  F(6,3) points 0,+-1,+-2,+-1/2: %.2e; 0,+-1,+-2,1/2,-3: %.2e\n", good.max_err, bad.max_err);
  CU_ASSERT(good.max_err <= tsl_winograd_error_bound(6));
  CU_ASSERT(bad.max_err >= 3.0 * good.max_err);
}

/* A deeper layer: 28x28, C = K = 128 (more terms per output), large inputs. */
static void test_error_bound_holds_on_a_deeper_layer(void) {
  wino_case c = {1, 128, 28, 28, 128, 1, 1, 1, 1, 4, 0, false, 0, 0};
  wino_data d;
  wino_data_make(&c, 100.0, 99, &d);
  for (int i = 0; i < NM; i++) {
    c.m = 2 + 2 * i;
    wino_result r = wino_run(jit, &c, &d, NULL, NULL, 1, NULL);
    CU_ASSERT(r.ok);
    CU_ASSERT(r.max_err <= tsl_winograd_error_bound(c.m));
  }
  wino_data_free(&d);
}

/* Every (m, r) on odd shapes: 13x11 (border tiles for m = 2 and 4), pads from 0 to r - 1
 * and asymmetric, C and K off the block, N = 2, relu / clip / residual, the NCHW[x]c block
 * at 8 lanes and at the target's, 1 and 2 threads. */
static void test_larger_kernels_match_reference(void) {
  static const struct {
    int64_t N, C, H, W, K, pt, pl, pb, pr;
    int act;
    bool residual;
    int64_t lanes;
  } shapes[] = {
      {1, 9, 13, 11, 7, 1, 2, 2, 1, 1, false, 8},  /* OH = 13 + 3 - (r - 1) */
      {2, 16, 12, 12, 24, 0, 0, 0, 0, 0, false, 0}, /* no padding */
      {1, 12, 16, 16, 20, 2, 2, 1, 1, 2, true, 0},  /* the 7x7 s2 stem's phase conv at r = 4 */
      {1, 5, 9, 14, 16, 3, 0, 1, 3, 0, true, 8},    /* one-sided pads */
      {1, 7, 10, 9, 12, 4, 0, 0, 4, 1, false, 0},   /* pads of 4 (r - 1 at r = 5, past it at 4) */
  };
  for (int r = 4; r <= 5; r++)
    for (int m = 2; m <= 4; m += 2)
      for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int threads = 1; threads <= 2; threads++) {
          wino_case c = {shapes[i].N,  shapes[i].C,  shapes[i].H,   shapes[i].W,        shapes[i].K,
                         shapes[i].pt, shapes[i].pl, shapes[i].pb,  shapes[i].pr,       m,
                         shapes[i].act, shapes[i].residual, shapes[i].lanes, r};
          wino_data d;
          wino_data_make(&c, 1.0, 500 + (uint64_t)(10 * r + m + (int)i), &d);
          wino_result res = wino_run(jit, &c, &d, NULL, NULL, threads, NULL);
          CU_ASSERT(res.ok);
          CU_ASSERT(res.max_err <= tsl_winograd_error_bound_r(m, r));
          CU_ASSERT(res.pad_channels_zero);
          if (!(res.ok && res.max_err <= tsl_winograd_error_bound_r(m, r) && res.pad_channels_zero)) {
            char b[160];
            printf("\n  %s, %d threads: error %.3g (bound %.1g)%s\n", wino_case_str(&c, b, sizeof b), threads,
                   res.max_err, tsl_winograd_error_bound_r(m, r), res.pad_channels_zero ? "" : ", padding not 0");
          }
          wino_data_free(&d);
        }
}

/* The error study behind tsl_winograd_error_bound_r (C03's class for the larger kernels): the largest relative error over
 * random layers (C = K = 64 and 256, 28x28, pad r / 2, inputs at scales 1 and 100) stays
 * within the bound, and F(4, r) is less accurate than F(2, r) (its larger alpha), as for
 * r = 3. */
static void test_C03_error_of_larger_kernels(void) {
  for (int r = 4; r <= 5; r++) {
    double worst[2] = {0.0, 0.0};
    for (int mi = 0; mi < 2; mi++)
      for (int ch = 64; ch <= 256; ch *= 4)
        for (int sc = 0; sc < 2; sc++) {
          int64_t p = r / 2;
          wino_case c = {1, ch, 28, 28, ch, p, p, r - 1 - p, r - 1 - p, 2 + 2 * mi, 0, false, 0, r};
          wino_data d;
          wino_data_make(&c, sc ? 100.0 : 1.0, 900 + (uint64_t)(r * 7 + mi * 3 + ch + sc), &d);
          wino_result res = wino_run(jit, &c, &d, NULL, NULL, 2, NULL);
          CU_ASSERT(res.ok);
          if (res.max_err > worst[mi]) worst[mi] = res.max_err;
          wino_data_free(&d);
        }
    printf("\n  F(2,%d) max error %.3g (bound %.1g), F(4,%d) %.3g (bound %.1g)", r, worst[0],
           tsl_winograd_error_bound_r(2, r), r, worst[1], tsl_winograd_error_bound_r(4, r));
    CU_ASSERT(worst[0] <= tsl_winograd_error_bound_r(2, r));
    CU_ASSERT(worst[1] <= tsl_winograd_error_bound_r(4, r));
    CU_ASSERT(worst[0] < worst[1]);
  }
}

void tsl_tests_winograd_accuracy(void) {
  CU_pSuite s = CU_add_suite("winograd_accuracy", suite_init, suite_clean);
  CU_add_test(s, "test_C03_error_of_every_m_at_every_input_scale", test_C03_error_of_every_m_at_every_input_scale);
  CU_add_test(s, "test_C03_choice_of_points_matters_for_F6", test_C03_choice_of_points_matters_for_F6);
  CU_add_test(s, "test_error_bound_holds_on_a_deeper_layer", test_error_bound_holds_on_a_deeper_layer);
  CU_add_test(s, "test_larger_kernels_match_reference", test_larger_kernels_match_reference);
  CU_add_test(s, "test_C03_error_of_larger_kernels", test_C03_error_of_larger_kernels);
}
