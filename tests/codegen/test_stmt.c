/* Codegen of statements: serial and parallel loops (outlined tasks, captures,
 * nesting, failures), allocation on the stack and the heap, if/else, let, seq, and
 * scalar kernel arguments of every type. */
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel_abi.h"
#include "codegen/llvm.h"
#include "codegen/machine.h"
#include "tessel/runtime.h"
#include "tests/codegen/cg_util.h"

/* ASan aborts on a failing huge allocation instead of returning NULL (unless
 * allocator_may_return_null=1), so the failure paths are only run without it. */
#if defined(__SANITIZE_ADDRESS__)
#define CAN_RUN_FAILING_ALLOCATION 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAN_RUN_FAILING_ALLOCATION 0
#endif
#endif
#ifndef CAN_RUN_FAILING_ALLOCATION
#define CAN_RUN_FAILING_ALLOCATION 1
#endif

static tsl_arg buf_arg(tsl_buffer *b) { return (tsl_arg){.is_buffer = true, .buf = b}; }
static tsl_arg var_arg(tsl_expr *v) { return (tsl_arg){.is_buffer = false, .var = v}; }

/* ---- serial loops ---- */

static void test_serial_for_min_extent_and_empty_loops(void) {
  tsl_buffer *out = cg_buf("out", TSL_I64, 16), *out32 = cg_buf("out32", TSL_I32, 8);
  tsl_expr *n = tsl_var("n", TSL_I64);
  tsl_expr *i = tsl_var("i", TSL_I64), *j = tsl_var("j", TSL_I64), *k = tsl_var("k", TSL_I64);
  tsl_expr *m = tsl_var("m", TSL_I64), *q = tsl_var("q", TSL_I32);
  tsl_stmt *body[5] = {
      tsl_for(i, tsl_i64(3), tsl_i64(5), TSL_FOR_SERIAL, cg_st(out, i, tsl_mul(i, tsl_i64(2)))),
      tsl_for(j, tsl_i64(0), tsl_i64(0), TSL_FOR_SERIAL, cg_st(out, j, tsl_i64(-1))),
      tsl_for(k, tsl_i64(0), tsl_i64(-3), TSL_FOR_SERIAL, cg_st(out, k, tsl_i64(-2))),
      tsl_for(m, tsl_i64(1), n, TSL_FOR_SERIAL, cg_st(out, m, tsl_i64(-3))),
      /* an i32 loop variable from a negative min */
      tsl_for(q, tsl_i32(-2), tsl_i32(8), TSL_FOR_SERIAL, cg_st(out32, tsl_cast(TSL_I64, tsl_add(q, tsl_i32(2))), q)),
  };
  tsl_arg args[3] = {buf_arg(out), buf_arg(out32), var_arg(n)};
  tsl_func *f = tsl_func_new("loops", 3, args, tsl_seq(5, body));
  int64_t *o = cg_alloc(16 * 8), nv = -4;
  int32_t *o32 = cg_alloc(8 * 4);
  for (int x = 0; x < 16; x++) o[x] = 100 + x;
  void *p[2] = {o, o32};
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&p[0], &p[1], &nv}), TSL_OK);
  for (int x = 0; x < 16; x++) CU_ASSERT_EQUAL(o[x], x >= 3 && x < 8 ? 2 * x : 100 + x);
  for (int x = 0; x < 8; x++) CU_ASSERT_EQUAL(o32[x], x - 2);
  nv = 3; /* now the variable-extent loop runs for m = 1, 2, 3 */
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&p[0], &p[1], &nv}), TSL_OK);
  for (int x = 1; x < 4; x++) CU_ASSERT_EQUAL(o[x], -3);
  CU_ASSERT_EQUAL(o[4], 8);
  free(o), free(o32);
}

static void test_vectorized_and_unrolled_kinds_run_as_serial(void) {
  tsl_buffer *out = cg_buf("out", TSL_I32, 8);
  tsl_expr *i = tsl_var("i", TSL_I64), *j = tsl_var("j", TSL_I64);
  tsl_stmt *a = tsl_for(i, tsl_i64(0), tsl_i64(4), TSL_FOR_VECTORIZED, cg_st(out, i, tsl_i32(1)));
  tsl_stmt *b = tsl_for(j, tsl_i64(4), tsl_i64(4), TSL_FOR_UNROLLED, cg_st(out, j, tsl_i32(2)));
  int32_t *o = cg_alloc(8 * 4);
  void *p = o;
  CU_ASSERT_EQUAL_FATAL(cg_run(cg_func("kinds", 1, &out, tsl_seq2(a, b)), (void *[]){&p}), TSL_OK);
  for (int x = 0; x < 8; x++) CU_ASSERT_EQUAL(o[x], x < 4 ? 1 : 2);
  free(o);
}

/* ---- if / let / seq ---- */

static void test_if_else_let_and_seq(void) {
  enum { W = 12 };
  tsl_buffer *out = cg_buf("out", TSL_I32, W * W), *flags = cg_buf("flags", TSL_I32, W * W);
  tsl_expr *y = tsl_var("y", TSL_I32), *x = tsl_var("x", TSL_I32), *t = tsl_var("t", TSL_I64);
  tsl_expr *at = tsl_cast(TSL_I64, tsl_add(tsl_mul(y, tsl_i32(W)), x));
  tsl_stmt *ifelse = tsl_if(tsl_lt(x, y), cg_st(out, t, tsl_sub(y, x)),
                            cg_st(out, t, tsl_mul(tsl_add(x, y), tsl_i32(10))));
  tsl_stmt *if_only = tsl_if(tsl_eq(tsl_mod(x, tsl_i32(3)), tsl_i32(0)), cg_st(flags, t, tsl_i32(1)), NULL);
  tsl_stmt *body = tsl_let_stmt(t, at, tsl_seq2(ifelse, if_only));
  tsl_stmt *loops = tsl_for(y, tsl_i32(0), tsl_i32(W), TSL_FOR_SERIAL, tsl_for(x, tsl_i32(0), tsl_i32(W), TSL_FOR_SERIAL, body));
  int32_t *o = cg_alloc(W * W * 4), *fl = cg_alloc(W * W * 4);
  void *p[2] = {o, fl};
  CU_ASSERT_EQUAL_FATAL(cg_run(cg_func("branches", 2, (tsl_buffer *[]){out, flags}, loops), (void *[]){&p[0], &p[1]}),
                        TSL_OK);
  for (int yy = 0; yy < W; yy++)
    for (int xx = 0; xx < W; xx++) {
      CU_ASSERT_EQUAL(o[yy * W + xx], xx < yy ? yy - xx : (xx + yy) * 10);
      CU_ASSERT_EQUAL(fl[yy * W + xx], xx % 3 == 0);
    }
  free(o), free(fl);
}

/* ---- scalar arguments ---- */

static void test_scalar_arguments_of_every_type(void) {
  tsl_type types[7] = {TSL_I32, TSL_I64, TSL_F32, TSL_F64, TSL_BOOL, TSL_U8, TSL_I16};
  tsl_arg args[8];
  tsl_buffer *out = cg_buf("out", TSL_F64, 7);
  args[0] = buf_arg(out);
  tsl_stmt *stores[7];
  for (int k = 0; k < 7; k++) {
    tsl_expr *v = tsl_var("s", types[k]);
    args[k + 1] = var_arg(v);
    stores[k] = cg_st(out, tsl_i64(k), tsl_cast(TSL_F64, v));
  }
  tsl_func *f = tsl_func_new("scalars", 8, args, tsl_seq(7, stores));
  tsl_kernel_sig sig;
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_kernel_sig(f, &sig), TSL_OK);
  tsl_arg_type want[8] = {TSL_ARG_PTR, TSL_ARG_I32, TSL_ARG_I64, TSL_ARG_F32, TSL_ARG_F64, TSL_ARG_I32, TSL_ARG_I32, TSL_ARG_I32};
  CU_ASSERT_EQUAL(sig.nargs, 8);
  for (int k = 0; k < 8; k++) CU_ASSERT_EQUAL(sig.args[k], want[k]);
  double *o = cg_alloc(7 * 8);
  void *po = o;
  int32_t a = -7, e = 1, u8 = 250, i16 = -1234;
  int64_t b = -5000000000ll;
  float c = 2.5f;
  double d = -0.125;
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&po, &a, &b, &c, &d, &e, &u8, &i16}), TSL_OK);
  double expect[7] = {-7, -5000000000.0, 2.5, -0.125, 1, 250, -1234};
  for (int k = 0; k < 7; k++) CU_ASSERT_EQUAL(o[k], expect[k]);
  free(o);
}

/* ---- allocation ---- */

static void test_allocate_small_on_stack_and_large_on_heap(void) {
  enum { N = 256, BIG = 20000 }; /* 1 KiB scratch; 80000 bytes > 64 KiB */
  tsl_buffer *in = cg_buf("in", TSL_F32, N), *out = cg_buf("out", TSL_F32, 2 * N);
  int64_t nsmall = N, nbig = BIG;
  tsl_buffer *small = tsl_buffer_new("small", TSL_F32, 1, &nsmall, TSL_BUF_LOCAL);
  tsl_buffer *big = tsl_buffer_new("big", TSL_F32, 1, &nbig, TSL_BUF_LOCAL);
  tsl_expr *i = tsl_var("i", TSL_I64), *j = tsl_var("j", TSL_I64), *k = tsl_var("k", TSL_I64), *l = tsl_var("l", TSL_I64);
  tsl_stmt *fill_small = tsl_for(i, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL,
                                 cg_st(small, i, tsl_mul(cg_ld(in, i), tsl_f32(2.0f))));
  tsl_stmt *use_small = tsl_for(j, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL,
                                cg_st(out, j, cg_ld(small, tsl_sub(tsl_i64(N - 1), j))));
  tsl_stmt *fill_big = tsl_for(k, tsl_i64(0), tsl_i64(BIG), TSL_FOR_SERIAL, cg_st(big, k, tsl_cast(TSL_F32, k)));
  tsl_stmt *use_big = tsl_for(l, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL,
                              cg_st(out, tsl_add(l, tsl_i64(N)), cg_ld(big, tsl_mul(l, tsl_i64(77)))));
  tsl_stmt *body = tsl_seq2(tsl_allocate(small, tsl_seq2(fill_small, use_small)),
                            tsl_allocate(big, tsl_seq2(fill_big, use_big)));
  tsl_func *f = cg_func("scratch", 2, (tsl_buffer *[]){in, out}, body);
  float *a = cg_alloc(N * 4), *o = cg_alloc(2 * N * 4);
  for (int x = 0; x < N; x++) a[x] = (float)x - 0.5f;
  void *p[2] = {a, o};
  CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&p[0], &p[1]}), TSL_OK);
  for (int x = 0; x < N; x++) {
    CU_ASSERT_EQUAL(o[x], 2.0f * a[N - 1 - x]);
    CU_ASSERT_EQUAL(o[N + x], (float)(x * 77));
  }
  /* Where each went: an entry-block alloca for one, the runtime's allocator for the other. */
  tsl_target host;
  char *ir = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_llvm_ir(f, &host, false, &ir), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "alloca [1024 x i8], align 64"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "@tsl_kernel_alloc(i64 80000)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "@tsl_kernel_free("));
  free(ir), free(a), free(o);
}

/* A copy of the second basic block labelled "fail..." in LLVM IR text (blocks end at
 * a blank line), or NULL. */
static char *second_fail_block(const char *ir) {
  const char *p = strstr(ir, "\nfail");
  if (p) p = strstr(p + 1, "\nfail");
  if (!p) return NULL;
  size_t len = 0;
  while (p[len] && !(p[len] == '\n' && p[len + 1] == '\n')) len++;
  return strndup(p, len);
}

static void test_allocate_failure_returns_nonzero(void) {
  int64_t n_mid = 100000, n_huge = (int64_t)1 << 50;
  tsl_buffer *out = cg_buf("out", TSL_F32, 1);
  tsl_buffer *mid = tsl_buffer_new("mid", TSL_F32, 1, &n_mid, TSL_BUF_LOCAL);
  tsl_buffer *huge = tsl_buffer_new("huge", TSL_F32, 1, &n_huge, TSL_BUF_LOCAL);
  /* The outer workspace is live when the inner allocation fails: it must be freed
   * on the way out (LeakSanitizer would report it otherwise). */
  tsl_stmt *inner = tsl_allocate(huge, tsl_seq2(cg_st(huge, tsl_i64(0), tsl_f32(1.0f)),
                                                cg_st(out, tsl_i64(0), cg_ld(huge, tsl_i64(0)))));
  tsl_stmt *body = tsl_allocate(mid, tsl_seq2(cg_st(mid, tsl_i64(5), tsl_f32(3.0f)), inner));
  tsl_func *f = cg_func("alloc_fail", 1, &out, body);
  /* The failure path frees the live workspace, then returns the error code. */
  tsl_target host;
  char *ir = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_llvm_ir(f, &host, false, &ir), TSL_OK);
  char *block = second_fail_block(ir); /* the inner allocation's failure path */
  CU_ASSERT_PTR_NOT_NULL_FATAL(block);
  const char *freed = strstr(block, "call void @tsl_kernel_free("), *ret = strstr(block, "ret i32 1");
  CU_ASSERT(freed && ret && freed < ret);
  free(block);
  free(ir);
  if (CAN_RUN_FAILING_ALLOCATION) {
    float *o = cg_alloc(4);
    o[0] = -1.0f;
    void *p = o;
    CU_ASSERT_EQUAL(cg_run(f, (void *[]){&p}), TSL_ERR_RUNTIME);
    CU_ASSERT_EQUAL(o[0], -1.0f);
    free(o);
  }
}

/* ---- parallel loops ---- */

/* for k in 0..2 (serial) { let t = s * k { for i in min..min+37 (kind) { for j in 0..64:
 *   out[(k*37 + i - min)*64 + j] = i*1000 + j + t + in[j] } } } */
static tsl_func *par_kernel(const char *name, tsl_for_kind kind, int64_t min, tsl_buffer **bufs, tsl_expr **s) {
  tsl_buffer *in = cg_buf("in", TSL_I64, 64), *out = cg_buf("out", TSL_I64, 2 * 37 * 64);
  tsl_expr *sv = tsl_var("s", TSL_I64), *k = tsl_var("k", TSL_I64), *t = tsl_var("t", TSL_I64);
  tsl_expr *i = tsl_var("i", TSL_I64), *j = tsl_var("j", TSL_I64);
  tsl_expr *row = tsl_add(tsl_mul(k, tsl_i64(37)), tsl_sub(i, tsl_i64(min)));
  tsl_expr *v = tsl_add(tsl_add(tsl_mul(i, tsl_i64(1000)), j), tsl_add(t, cg_ld(in, j)));
  tsl_stmt *inner = tsl_for(j, tsl_i64(0), tsl_i64(64), TSL_FOR_SERIAL,
                            cg_st(out, tsl_add(tsl_mul(row, tsl_i64(64)), j), v));
  tsl_stmt *par = tsl_for(i, tsl_i64(min), tsl_i64(37), kind, inner);
  tsl_stmt *body = tsl_for(k, tsl_i64(0), tsl_i64(2), TSL_FOR_SERIAL, tsl_let_stmt(t, tsl_mul(sv, k), par));
  tsl_arg args[3] = {buf_arg(in), buf_arg(out), var_arg(sv)};
  bufs[0] = in, bufs[1] = out, *s = sv;
  return tsl_func_new(name, 3, args, body);
}

static void test_parallel_loop_with_captures_equals_serial(void) {
  int threads = tsl_get_num_threads();
  CU_ASSERT_EQUAL(tsl_set_num_threads(2), TSL_OK);
  tsl_buffer *bufs[2];
  tsl_expr *s;
  int64_t min = 5, sval = 17;
  tsl_func *fp = par_kernel("par", TSL_FOR_PARALLEL, min, bufs, &s);
  tsl_func *fs = par_kernel("ser", TSL_FOR_SERIAL, min, bufs, &s);
  int64_t *in = cg_alloc(64 * 8), *op = cg_alloc(2 * 37 * 64 * 8), *os = cg_alloc(2 * 37 * 64 * 8);
  for (int j = 0; j < 64; j++) in[j] = j * j;
  void *pp[2] = {in, op}, *ps[2] = {in, os};
  CU_ASSERT_EQUAL_FATAL(cg_run(fp, (void *[]){&pp[0], &pp[1], &sval}), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run(fs, (void *[]){&ps[0], &ps[1], &sval}), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(op, os, 2 * 37 * 64 * 8), 0);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 37; i++)
      for (int j = 0; j < 64; j++)
        CU_ASSERT_EQUAL(op[(k * 37 + i) * 64 + j], (i + min) * 1000 + j + sval * k + in[j]);
  /* one thread gives the same bytes */
  memset(op, 0, 2 * 37 * 64 * 8);
  CU_ASSERT_EQUAL(tsl_set_num_threads(1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(cg_run(fp, (void *[]){&pp[0], &pp[1], &sval}), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(op, os, 2 * 37 * 64 * 8), 0);
  tsl_set_num_threads(threads);
  free(in), free(op), free(os);
}

/* Captured values of every shape: a 16-lane vector let (64-byte aligned in the
 * closure), a bool and an f64 argument; the parallel variable is i32. */
static void test_parallel_captures_vectors_bools_and_narrow_loop_variables(void) {
  enum { L = 16, ROWS = 9 };
  tsl_buffer *in = cg_buf("in", TSL_F32, L), *out = cg_buf("out", TSL_F32, ROWS * L);
  tsl_type vt = tsl_type_with_lanes(TSL_F32, L);
  tsl_expr *v = tsl_var("v", vt), *flag = tsl_var("flag", TSL_BOOL), *scale = tsl_var("scale", TSL_F64);
  tsl_expr *i = tsl_var("i", TSL_I32);
  tsl_expr *row = cg_bc(tsl_cast(TSL_F32, tsl_mul(tsl_cast(TSL_F64, i), scale)), L);
  tsl_expr *val = tsl_select(flag, tsl_add(v, row), tsl_sub(v, row));
  tsl_stmt *par = tsl_for(i, tsl_i32(1), tsl_i32(ROWS), TSL_FOR_PARALLEL,
                          cg_stv(out, tsl_mul(tsl_cast(TSL_I64, tsl_sub(i, tsl_i32(1))), tsl_i64(L)), L, val));
  tsl_stmt *body = tsl_let_stmt(v, tsl_mul(cg_ldv(in, tsl_i64(0), L), cg_bc(tsl_f32(2.0f), L)), par);
  tsl_arg args[4] = {buf_arg(in), buf_arg(out), var_arg(flag), var_arg(scale)};
  tsl_func *f = tsl_func_new("par_captures", 4, args, body);
  float *a = cg_alloc(L * 4), *o = cg_alloc(ROWS * L * 4);
  for (int k = 0; k < L; k++) a[k] = (float)k + 0.25f;
  void *p[2] = {a, o};
  for (int32_t fl = 0; fl < 2; fl++) {
    double sc = 1.5;
    CU_ASSERT_EQUAL_FATAL(cg_run(f, (void *[]){&p[0], &p[1], &fl, &sc}), TSL_OK);
    for (int r = 0; r < ROWS - 1; r++)
      for (int k = 0; k < L; k++) {
        float rowv = (float)((r + 1) * 1.5);
        CU_ASSERT_EQUAL(o[r * L + k], fl ? 2.0f * a[k] + rowv : 2.0f * a[k] - rowv);
      }
  }
  free(a), free(o);
}

static void test_nested_parallel_and_per_task_scratch(void) {
  enum { A = 6, B = 5, M = 64 };
  tsl_buffer *in = cg_buf("in", TSL_F32, A * B * M), *out = cg_buf("out", TSL_F32, A * B * M);
  int64_t m = M;
  tsl_buffer *scratch = tsl_buffer_new("scratch", TSL_F32, 1, &m, TSL_BUF_LOCAL);
  tsl_expr *a = tsl_var("a", TSL_I64), *b = tsl_var("b", TSL_I64), *j = tsl_var("j", TSL_I64), *l = tsl_var("l", TSL_I64);
  tsl_expr *base = tsl_mul(tsl_add(tsl_mul(a, tsl_i64(B)), b), tsl_i64(M));
  /* each (a, b) reverses its row through a private scratch buffer */
  tsl_stmt *fill = tsl_for(j, tsl_i64(0), tsl_i64(M), TSL_FOR_SERIAL,
                           cg_st(scratch, j, tsl_add(cg_ld(in, tsl_add(base, j)), tsl_cast(TSL_F32, a))));
  tsl_stmt *drain = tsl_for(l, tsl_i64(0), tsl_i64(M), TSL_FOR_SERIAL,
                            cg_st(out, tsl_add(base, l), cg_ld(scratch, tsl_sub(tsl_i64(M - 1), l))));
  tsl_stmt *inner = tsl_for(b, tsl_i64(0), tsl_i64(B), TSL_FOR_PARALLEL, tsl_allocate(scratch, tsl_seq2(fill, drain)));
  tsl_stmt *outer = tsl_for(a, tsl_i64(0), tsl_i64(A), TSL_FOR_PARALLEL, inner);
  float *x = cg_alloc(A * B * M * 4), *o = cg_alloc(A * B * M * 4);
  for (int k = 0; k < A * B * M; k++) x[k] = (float)(k % 1000);
  void *p[2] = {x, o};
  CU_ASSERT_EQUAL_FATAL(cg_run(cg_func("nested_par", 2, (tsl_buffer *[]){in, out}, outer), (void *[]){&p[0], &p[1]}),
                        TSL_OK);
  for (int aa = 0; aa < A; aa++)
    for (int bb = 0; bb < B; bb++)
      for (int k = 0; k < M; k++)
        CU_ASSERT_EQUAL(o[(aa * B + bb) * M + k], x[(aa * B + bb) * M + (M - 1 - k)] + (float)aa);
  free(x), free(o);
}

static void test_parallel_empty_extent_and_failure_propagates(void) {
  int64_t n_huge = (int64_t)1 << 50;
  tsl_buffer *out = cg_buf("out", TSL_I32, 8);
  tsl_buffer *huge = tsl_buffer_new("huge", TSL_I32, 1, &n_huge, TSL_BUF_LOCAL);
  tsl_expr *n = tsl_var("n", TSL_I64), *i = tsl_var("i", TSL_I64);
  /* for i in parallel(0, n): allocate huge (fails) { out[i] = 1 } */
  tsl_stmt *body = tsl_for(i, tsl_i64(0), n, TSL_FOR_PARALLEL,
                           tsl_allocate(huge, tsl_seq2(cg_st(huge, i, tsl_i32(1)), cg_st(out, i, cg_ld(huge, i)))));
  tsl_arg args[2] = {buf_arg(out), var_arg(n)};
  tsl_func *f = tsl_func_new("par_fail", 2, args, body);
  int32_t *o = cg_alloc(8 * 4);
  void *p = o;
  int64_t zero = 0, eight = 8, minus = -3;
  CU_ASSERT_EQUAL(cg_run(f, (void *[]){&p, &zero}), TSL_OK);
  CU_ASSERT_EQUAL(cg_run(f, (void *[]){&p, &minus}), TSL_OK);
  if (CAN_RUN_FAILING_ALLOCATION) CU_ASSERT_EQUAL(cg_run(f, (void *[]){&p, &eight}), TSL_ERR_RUNTIME);
  for (int k = 0; k < 8; k++) CU_ASSERT_EQUAL(o[k], 0);
  free(o);
}

void cg_add_stmt_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_stmt", cg_suite_init, cg_suite_clean);
  CU_add_test(s, "test_serial_for_min_extent_and_empty_loops", test_serial_for_min_extent_and_empty_loops);
  CU_add_test(s, "test_vectorized_and_unrolled_kinds_run_as_serial", test_vectorized_and_unrolled_kinds_run_as_serial);
  CU_add_test(s, "test_if_else_let_and_seq", test_if_else_let_and_seq);
  CU_add_test(s, "test_scalar_arguments_of_every_type", test_scalar_arguments_of_every_type);
  CU_add_test(s, "test_allocate_small_on_stack_and_large_on_heap", test_allocate_small_on_stack_and_large_on_heap);
  CU_add_test(s, "test_allocate_failure_returns_nonzero", test_allocate_failure_returns_nonzero);
  CU_add_test(s, "test_parallel_loop_with_captures_equals_serial", test_parallel_loop_with_captures_equals_serial);
  CU_add_test(s, "test_parallel_captures_vectors_bools_and_narrow_loop_variables",
              test_parallel_captures_vectors_bools_and_narrow_loop_variables);
  CU_add_test(s, "test_nested_parallel_and_per_task_scratch", test_nested_parallel_and_per_task_scratch);
  CU_add_test(s, "test_parallel_empty_extent_and_failure_propagates", test_parallel_empty_extent_and_failure_propagates);
}
