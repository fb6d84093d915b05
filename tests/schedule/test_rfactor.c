/* rfactor (schedule/sched_rfactor.c): the stages it makes, its text form, and results
 * against independent references (tests/ref's naive matmul, the TE interpreter); a
 * parallel rfactored reduction against the serial one. Refusals are in test_illegal.c,
 * random schedules with rfactor in test_fuzz.c. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/ref_ops.h"
#include "sched_tests.h"
#include "tessel/runtime.h"

/* Parses text on p (must apply), checks its text round-trips, lowers (partitioned tails)
 * and runs it on data; the output (data[nargs-1]) is NaN-filled first. */
static bool run_text(const tsl_te_program *p, const char *text, const char *name, void *const *data, float *out,
                     int64_t nout) {
  tsl_schedule *s = NULL;
  tsl_status rc = tsl_schedule_from_text(p, text, &s);
  if (rc != TSL_OK) fprintf(stderr, "\n%s: %s\n", name, tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(rc, TSL_OK);
  char *back = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(back, text);
  free(back);
  tsl_func *f = st_lower_host(s, name, TSL_TAIL_PARTITION);
  for (int64_t i = 0; i < nout; i++) out[i] = NAN;
  bool ok = f && st_run(f, data);
  tsl_schedule_free(s);
  return ok;
}

static void test_rfactor_makes_partial_stage(void) {
  st_arena a = st_arena_begin();
  tsl_te_program *p = st_matmul(5, 7, 16);
  tsl_schedule *s = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_new(p, &s), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_split(s, "C", "k", 4), TSL_OK);
  const char *rf = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_schedule_rfactor(s, "C", "k.outer", &rf), TSL_OK);
  CU_ASSERT_STRING_EQUAL(rf, "C.rf");
  CU_ASSERT_EQUAL_FATAL(s->nstages, 2);
  const tsl_stage *r = s->stages[0], *c = s->stages[1];
  CU_ASSERT_STRING_EQUAL(r->name, "C.rf");
  CU_ASSERT_STRING_EQUAL(c->name, "C");
  CU_ASSERT_FALSE(r->is_output);
  CU_ASSERT_TRUE(c->is_output);
  /* C.rf[i, j, k.outer] = sum(k.inner: ...), C[i, j] = sum(k.outer: C.rf[i, j, k.outer]) */
  CU_ASSERT_EQUAL_FATAL(r->nroot, 4);
  const char *rnames[4] = {"i", "j", "k.outer", "k.inner"};
  const bool rred[4] = {false, false, false, true};
  const int64_t rext[4] = {5, 7, 4, 4};
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_STRING_EQUAL(r->iters[i].name, rnames[i]);
    CU_ASSERT_EQUAL(r->iters[i].is_reduce, rred[i]);
    CU_ASSERT_EQUAL(r->iters[i].extent, rext[i]);
  }
  CU_ASSERT_EQUAL_FATAL(c->nroot, 3);
  CU_ASSERT_STRING_EQUAL(c->iters[2].name, "k.outer");
  CU_ASSERT_TRUE(c->iters[2].is_reduce);
  CU_ASSERT_EQUAL(c->iters[2].extent, 4);
  CU_ASSERT_EQUAL(c->nrels, 0);
  /* the factored axis is spatial now: C.rf may run it in parallel */
  CU_ASSERT_EQUAL(tsl_schedule_parallel(s, "C.rf", "k.outer"), TSL_OK);
  char *text = tsl_schedule_to_string(s);
  CU_ASSERT_STRING_EQUAL(text, "split(C, k, 4)\nrfactor(C, k.outer)\nparallel(C.rf, k.outer)\n");
  free(text);
  tsl_schedule_free(s);
  st_arena_end(a);
}

/* matmul with rfactor on either half of k, dividing or not, by factor or nparts, with
 * more steps on both stages after it: equals the naive matmul of tests/ref. */
static void test_rfactor_matmul_matches_reference(void) {
  static const struct {
    int64_t M, N, K;
    const char *text;
  } cases[] = {
      {5, 7, 16, "split(C, k, 4)\nrfactor(C, k.outer)\n"},
      {5, 7, 13, "split(C, k, 5)\nrfactor(C, k.inner)\n"},
      {3, 9, 11, "split(C, k, nparts=4)\nrfactor(C, k.outer)\nparallel(C.rf, k.outer)\n"},
      {6, 19, 23,
       "split(C, k, 3)\nrfactor(C, k.outer)\nreorder(C.rf, k.outer, i, k.inner, j)\nparallel(C.rf, k.outer)\n"
       "split(C.rf, j, 8)\nvectorize(C.rf, j.inner)\nsplit(C, j, 4)\nvectorize(C, j.inner)\n"},
      {4, 17, 29,
       "split(C, k, 8)\nrfactor(C, k.inner)\ncache_write(C.rf, local)\ncompute_at(C.rf.local, C.rf, j)\n"
       "reorder(C.rf.local, k.outer, k.inner)\nvectorize(C.rf.local, k.inner)\nvectorize(C.rf, k.inner)\n"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    st_arena a = st_arena_begin();
    int64_t M = cases[c].M, N = cases[c].N, K = cases[c].K;
    tsl_te_program *p = st_matmul(M, N, K);
    float *A = st_alloc_f32(M * K), *B = st_alloc_f32(K * N), *C = st_alloc_f32(M * N), *R = st_alloc_f32(M * N);
    ref_fill_uniform(A, M * K, 11 + c, -1.0f, 1.0f);
    ref_fill_uniform(B, K * N, 12 + c, -1.0f, 1.0f);
    ref_matmul(M, N, K, A, B, R);
    char name[32];
    snprintf(name, sizeof name, "rfactor_mm_%zu", c);
    CU_ASSERT_TRUE(run_text(p, cases[c].text, name, (void *[]){A, B, C}, C, M * N));
    double err = ref_max_rel_error(C, R, M * N);
    if (!(err < 1e-5)) fprintf(stderr, "\ncase %zu: error %g\n%s", c, err, cases[c].text);
    CU_ASSERT_TRUE(err < 1e-5);
    free(A);
    free(B);
    free(C);
    free(R);
    st_arena_end(a);
  }
}

/* A long row sum split into 16 parallel partial sums (a prime length: a tail) equals the
 * serial sum within float rounding, both near the interpreter's float64 sum; the same
 * bits on 1 and 4 threads. A row max (exact) gives the serial result bit for bit. */
static void test_rfactor_parallel_equals_serial(void) {
  st_arena a = st_arena_begin();
  int saved = tsl_get_num_threads();
  const int64_t M = 3, N = 100003;
  float *A = st_alloc_f32(M * N), *ser = st_alloc_f32(M), *par = st_alloc_f32(M), *par1 = st_alloc_f32(M);
  float *want = st_alloc_f32(M);
  ref_fill_uniform(A, M * N, 77, -1.0f, 1.0f);
  for (int kind = 0; kind < 2; kind++) {
    tsl_te_program *p = kind == 0 ? st_row_sum(M, N) : st_row_max(M, N);
    const char *st = kind == 0 ? "rsum" : "rmax";
    char text[512];
    snprintf(text, sizeof text,
             "split(%s, j, nparts=16)\nrfactor(%s, j.outer)\nreorder(%s.rf, j.outer, i)\nparallel(%s.rf, j.outer)\n",
             st, st, st, st);
    CU_ASSERT_TRUE(run_text(p, "", kind ? "serial_max" : "serial_sum", (void *[]){A, ser}, ser, M));
    CU_ASSERT_EQUAL(tsl_set_num_threads(4), TSL_OK);
    CU_ASSERT_TRUE(run_text(p, text, kind ? "par_max" : "par_sum", (void *[]){A, par}, par, M));
    CU_ASSERT_EQUAL(tsl_set_num_threads(1), TSL_OK);
    CU_ASSERT_TRUE(run_text(p, text, kind ? "par1_max" : "par1_sum", (void *[]){A, par1}, par1, M));
    CU_ASSERT_TRUE(st_interpret_f32(p, (float *[]){A}, want));
    CU_ASSERT_EQUAL(memcmp(par, par1, sizeof(float) * (size_t)M), 0);
    if (kind == 0) {
      /* |error| of an N-term float sum <= N * eps * sum|a| ~ 6e-3 here; observed ~1e-4 */
      for (int64_t i = 0; i < M; i++) {
        CU_ASSERT_DOUBLE_EQUAL(par[i], ser[i], 1e-2);
        CU_ASSERT_DOUBLE_EQUAL(par[i], want[i], 1e-2);
        CU_ASSERT_DOUBLE_EQUAL(ser[i], want[i], 1e-2);
      }
    } else {
      CU_ASSERT_EQUAL(memcmp(par, ser, sizeof(float) * (size_t)M), 0);
      CU_ASSERT_EQUAL(memcmp(par, want, sizeof(float) * (size_t)M), 0);
    }
  }
  tsl_set_num_threads(saved);
  free(A);
  free(ser);
  free(par);
  free(par1);
  free(want);
  st_arena_end(a);
}

/* conv2d: rfactor of the input-channel axis, partial sums vectorized over it. */
static void test_rfactor_conv_channels(void) {
  st_arena a = st_arena_begin();
  ref_conv2d_params prm = {1, 10, 6, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  int64_t OH = ref_conv2d_out_h(&prm), OW = ref_conv2d_out_w(&prm);
  tsl_te_program *p = st_conv_padded(1, 10, 6, 7, 3, 3, 3, 1, 1);
  int64_t nd = 10 * 6 * 7, nw = 3 * 10 * 9, no = 3 * OH * OW;
  float *d = st_alloc_f32(nd), *w = st_alloc_f32(nw), *o = st_alloc_f32(no), *ref = st_alloc_f32(no);
  ref_fill_uniform(d, nd, 5, -1.0f, 1.0f);
  ref_fill_uniform(w, nw, 6, -1.0f, 1.0f);
  ref_conv2d_nchw(&prm, d, w, NULL, ref);
  const char *text = "split(out, rc, 4)\nrfactor(out, rc.inner)\nreorder(out.rf, n, k, y, rc.outer, ry, rx, x, rc.inner)\n"
                     "vectorize(out.rf, rc.inner)\n";
  CU_ASSERT_TRUE(run_text(p, text, "rfactor_conv", (void *[]){d, w, o}, o, no));
  CU_ASSERT_TRUE(ref_max_rel_error(o, ref, no) < 1e-5);
  free(d);
  free(w);
  free(o);
  free(ref);
  st_arena_end(a);
}

static int cleanup(void) {
  st_jit_release();
  return 0;
}

void tsl_tests_schedule_rfactor(void) {
  CU_pSuite s = CU_add_suite("schedule/rfactor", NULL, cleanup);
  CU_add_test(s, "test_rfactor_makes_partial_stage", test_rfactor_makes_partial_stage);
  CU_add_test(s, "test_rfactor_matmul_matches_reference", test_rfactor_matmul_matches_reference);
  CU_add_test(s, "test_rfactor_parallel_equals_serial", test_rfactor_parallel_equals_serial);
  CU_add_test(s, "test_rfactor_conv_channels", test_rfactor_conv_channels);
}
