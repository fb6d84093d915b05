/* Golden text of the IR printer, one test per node kind. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir_tests.h"

static tsl_expr *v64(const char *n) { return tsl_var(n, TSL_I64); }
static tsl_expr *c64(int64_t v) { return tsl_i64(v); }

static void test_print_constants_of_each_type(void) {
  CHECK_EXPR(c64(-7), "-7");
  CHECK_EXPR(tsl_i32(5), "5i32");
  CHECK_EXPR(tsl_int(TSL_U8, 255), "255u8");
  CHECK_EXPR(tsl_int(TSL_U64, -1), "18446744073709551615u64");
  CHECK_EXPR(tsl_bool(true), "true");
  CHECK_EXPR(tsl_bool(false), "false");
  CHECK_EXPR(tsl_f32(0.5f), "0.5f");
  CHECK_EXPR(tsl_float(TSL_F64, 2.0), "2.0");
  CHECK_EXPR(tsl_float(TSL_F64, 0.1), "0.10000000000000001");
  CHECK_EXPR(tsl_f32(0.1f), "0.100000001f");
  CHECK_EXPR(tsl_f32(-INFINITY), "-inf" "f");
  CHECK_EXPR(tsl_float(TSL_F64, NAN), "nan");
}

static void test_print_arithmetic_parenthesizes_nested_infix(void) {
  tsl_expr *i = v64("i"), *j = v64("j");
  CHECK_EXPR(tsl_add(tsl_mul(i, c64(16)), j), "(i*16) + j");
  CHECK_EXPR(tsl_sub(i, tsl_sub(j, c64(1))), "i - (j - 1)");
  CHECK_EXPR(tsl_div(i, c64(8)), "i/8");
  CHECK_EXPR(tsl_mod(tsl_add(i, j), c64(8)), "(i + j) % 8");
  CHECK_EXPR(tsl_min(i, tsl_max(j, c64(0))), "min(i, max(j, 0))");
}

static void test_print_compare_and_logic(void) {
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_expr *c = tsl_and(tsl_lt(i, j), tsl_not(tsl_eq(i, c64(0))));
  CHECK_EXPR(c, "(i < j) && !(i == 0)");
  CHECK_EXPR(tsl_or(tsl_ge(i, j), tsl_ne(i, j)), "(i >= j) || (i != j)");
  CHECK_EXPR(tsl_or(tsl_le(i, j), tsl_gt(i, j)), "(i <= j) || (i > j)");
}

static void test_print_select_cast_call(void) {
  tsl_expr *i = v64("i");
  CHECK_EXPR(tsl_select(tsl_lt(i, c64(8)), i, c64(0)), "select(i < 8, i, 0)");
  CHECK_EXPR(tsl_cast(TSL_F32, i), "f32(i)");
  tsl_expr *a = tsl_var("a", TSL_F32), *b = tsl_var("b", TSL_F32), *c = tsl_var("c", TSL_F32);
  tsl_expr *args[3] = {a, b, c};
  CHECK_EXPR(tsl_call(TSL_CALL_FMA, TSL_F32, 3, args), "fma(a, b, c)");
}

static void test_print_broadcast_and_ramp(void) {
  tsl_expr *i = v64("i");
  CHECK_EXPR(tsl_broadcast(tsl_f32(1.5f), 4), "x4(1.5f)");
  CHECK_EXPR(tsl_ramp(tsl_mul(i, c64(4)), c64(1), 4), "ramp(i*4, 1, 4)");
  tsl_expr *v = tsl_cast(TSL_F32, tsl_ramp(i, c64(1), 8));
  CHECK_EXPR(v, "f32x8(ramp(i, 1, 8))");
}

static void test_print_loads_multi_dim_and_flat(void) {
  int64_t shape[2] = {16, 16};
  tsl_buffer *A = tsl_buffer_new("A", TSL_F32, 2, shape, TSL_BUF_ARG);
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_expr *ij[2] = {i, j};
  CHECK_EXPR(tsl_load(A, 2, ij, NULL), "A[i, j]");
  tsl_expr *flat = tsl_add(tsl_mul(i, c64(16)), j);
  CHECK_EXPR(tsl_load(A, 1, &flat, NULL), "A[(i*16) + j]");
  tsl_expr *r = tsl_ramp(i, c64(1), 4);
  tsl_expr *pred = tsl_lt(r, tsl_broadcast(c64(13), 4));
  CHECK_EXPR(tsl_load(A, 1, &r, pred), "(A[ramp(i, 1, 4)] if (ramp(i, 1, 4) < x4(13)))");
}

static void test_print_let_and_reduce(void) {
  tsl_expr *i = v64("i"), *x = v64("x");
  CHECK_EXPR(tsl_let(x, tsl_add(i, c64(1)), tsl_mul(x, x)), "(let x = i + 1 in x*x)");
  int64_t shape[2] = {4, 16};
  tsl_buffer *A = tsl_buffer_new("A", TSL_F32, 2, shape, TSL_BUF_TENSOR);
  tsl_iter_var k = {v64("k"), 0, 16, true};
  tsl_expr *ik[2] = {i, k.var};
  CHECK_EXPR(tsl_reduce(TSL_REDUCE_SUM, tsl_load(A, 2, ik, NULL), 1, &k, NULL), "sum(k in [0,16): A[i, k])");
  tsl_iter_var ax[2] = {{v64("r"), 0, 3, true}, {v64("s"), 1, 3, true}};
  tsl_expr *cond = tsl_lt(ax[0].var, ax[1].var);
  CHECK_EXPR(tsl_reduce(TSL_REDUCE_MAX, tsl_cast(TSL_F32, ax[0].var), 2, ax, cond),
             "max(r in [0,3), s in [1,4) where r < s: f32(r))");
}

static void test_print_loop_nest_with_store(void) {
  int64_t n = 256;
  tsl_buffer *out = tsl_buffer_new("out", TSL_F32, 1, &n, TSL_BUF_ARG);
  tsl_expr *i = v64("i"), *j = v64("j");
  tsl_expr *idx = tsl_add(tsl_mul(i, c64(16)), j);
  tsl_stmt *st = tsl_store(out, 1, &idx, tsl_f32(0.0f), NULL);
  tsl_stmt *inner = tsl_for(j, c64(0), c64(16), TSL_FOR_VECTORIZED, st);
  tsl_stmt *outer = tsl_for(i, c64(0), c64(16), TSL_FOR_PARALLEL, inner);
  CHECK_STMT(outer,
             "for (i, 0, 16) parallel {\n"
             "  for (j, 0, 16) vectorized {\n"
             "    out[(i*16) + j] = 0.0f\n"
             "  }\n"
             "}\n");
  tsl_stmt *serial = tsl_for(i, c64(0), c64(4), TSL_FOR_SERIAL, st);
  CHECK_STMT(serial, "for (i, 0, 4) {\n  out[(i*16) + j] = 0.0f\n}\n");
}

static void test_print_if_let_allocate_seq_evaluate(void) {
  int64_t n = 8;
  tsl_buffer *out = tsl_buffer_new("out", TSL_I64, 1, &n, TSL_BUF_ARG);
  int64_t shape[2] = {2, 4};
  tsl_buffer *tmp = tsl_buffer_new("tmp", TSL_F32, 2, shape, TSL_BUF_LOCAL);
  tsl_expr *i = v64("i"), *t = v64("t");
  tsl_stmt *s1 = tsl_store(out, 1, &i, c64(1), NULL);
  tsl_stmt *s2 = tsl_store(out, 1, &i, c64(2), NULL);
  tsl_stmt *iff = tsl_if(tsl_lt(i, c64(4)), s1, s2);
  CHECK_STMT(iff, "if (i < 4) {\n  out[i] = 1\n} else {\n  out[i] = 2\n}\n");
  CHECK_STMT(tsl_if(tsl_lt(i, c64(4)), s1, NULL), "if (i < 4) {\n  out[i] = 1\n}\n");
  tsl_stmt *let = tsl_let_stmt(t, tsl_mul(i, c64(2)), tsl_store(out, 1, &t, i, NULL));
  CHECK_STMT(let, "let t = i*2 in\nout[t] = i\n");
  tsl_expr *z = c64(0);
  tsl_expr *zz[2] = {z, z};
  tsl_stmt *alloc = tsl_allocate(tmp, tsl_seq2(tsl_store(tmp, 2, zz, tsl_f32(1.0f), NULL), s1));
  CHECK_STMT(alloc, "allocate tmp: f32[2, 4] {\n  tmp[0, 0] = 1.0f\n  out[i] = 1\n}\n");
  tsl_expr *ld = tsl_load(tmp, 2, zz, NULL);
  tsl_stmt *ev = tsl_evaluate(tsl_call(TSL_CALL_PREFETCH, TSL_I32, 1, &ld));
  CHECK_STMT(ev, "prefetch(tmp[0, 0])\n");
  tsl_expr *r = tsl_ramp(c64(0), c64(1), 4);
  tsl_expr *p = tsl_lt(r, tsl_broadcast(c64(3), 4));
  CHECK_STMT(tsl_store(out, 1, &r, tsl_broadcast(c64(7), 4), p), "out[ramp(0, 1, 4)] = x4(7) if (ramp(0, 1, 4) < x4(3))\n");
}

static void test_print_func_signature(void) {
  int64_t shape[2] = {16, 16};
  tsl_buffer *A = tsl_buffer_new("A", TSL_F32, 2, shape, TSL_BUF_ARG);
  tsl_expr *n = tsl_var("n", TSL_I32);
  tsl_arg args[2] = {{true, A, NULL}, {false, NULL, n}};
  tsl_expr *z = c64(0);
  tsl_expr *zz[2] = {z, z};
  tsl_func *fn = tsl_func_new("k", 2, args, tsl_store(A, 2, zz, tsl_f32(2.0f), NULL));
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  tsl_print_func(f, fn);
  fclose(f);
  CU_ASSERT_STRING_EQUAL(buf, "func k(A: f32*[16, 16], n: i32) {\n  A[0, 0] = 2.0f\n}\n");
  free(buf);
}

static void test_print_to_string_matches_file_output(void) {
  tsl_expr *e = tsl_add(tsl_mul(v64("i"), c64(3)), c64(-2));
  char *s = tsl_expr_to_string(e);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  tsl_print_expr(f, e);
  fclose(f);
  CU_ASSERT_STRING_EQUAL(s, buf);
  CU_ASSERT_STRING_EQUAL(s, "(i*3) + -2");
  free(s);
  free(buf);
}

void tsl_tests_ir_printer(void) {
  static const ir_test tests[] = {
      {"test_print_constants_of_each_type", test_print_constants_of_each_type},
      {"test_print_arithmetic_parenthesizes_nested_infix", test_print_arithmetic_parenthesizes_nested_infix},
      {"test_print_compare_and_logic", test_print_compare_and_logic},
      {"test_print_select_cast_call", test_print_select_cast_call},
      {"test_print_broadcast_and_ramp", test_print_broadcast_and_ramp},
      {"test_print_loads_multi_dim_and_flat", test_print_loads_multi_dim_and_flat},
      {"test_print_let_and_reduce", test_print_let_and_reduce},
      {"test_print_loop_nest_with_store", test_print_loop_nest_with_store},
      {"test_print_if_let_allocate_seq_evaluate", test_print_if_let_allocate_seq_evaluate},
      {"test_print_func_signature", test_print_func_signature},
      {"test_print_to_string_matches_file_output", test_print_to_string_matches_file_output},
      {NULL, NULL}};
  ir_add_suite("ir_printer", tests);
}
