/* The TE builder (dsl/te.h): validation of compute bodies, inputs in first-read order,
 * topological stage order, the bounds check, and the printer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_tests.h"

static tsl_te_program *c_matmul(int64_t M, int64_t N, int64_t K) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){M, K});
  tsl_te_tensor *B = tsl_te_placeholder("B", TSL_F32, 2, (int64_t[]){K, N});
  tsl_iter_var *ax = tsl_te_axes(2, (int64_t[]){M, N}, (const char *[]){"i", "j"});
  tsl_iter_var k = tsl_te_reduce_axis("k", 0, K);
  tsl_expr *i = ax[0].var, *j = ax[1].var;
  tsl_expr *a = tsl_te_read(A, 2, (tsl_expr *[]){i, k.var});
  tsl_expr *b = tsl_te_read(B, 2, (tsl_expr *[]){k.var, j});
  tsl_te_tensor *C = tsl_te_compute("C", 2, ax, tsl_te_sum(tsl_mul(a, b), 1, &k, NULL), "matmul");
  return tsl_te_program_new("matmul", 2, (tsl_te_tensor *[]){A, B}, 1, &C);
}

static void test_builder_matmul_records_axes_inputs_and_shape(void) {
  tsl_te_program *p = c_matmul(64, 48, 32);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  tsl_te_op *op = p->outputs[0]->op;
  CU_ASSERT_EQUAL(op->kind, TSL_TE_COMPUTE);
  CU_ASSERT_STRING_EQUAL(op->tag, "matmul");
  CU_ASSERT_EQUAL(op->naxis, 2);
  CU_ASSERT_EQUAL(op->nreduce, 1);
  CU_ASSERT_EQUAL(op->reduce_axis[0].extent, 32);
  CU_ASSERT_TRUE(op->reduce_axis[0].is_reduce);
  CU_ASSERT_EQUAL(op->ninputs, 2);
  CU_ASSERT_PTR_EQUAL(op->inputs[0], p->inputs[0]);
  CU_ASSERT_PTR_EQUAL(op->inputs[1], p->inputs[1]);
  const tsl_buffer *out = p->outputs[0]->buf;
  CU_ASSERT_EQUAL(out->kind, TSL_BUF_TENSOR);
  CU_ASSERT_EQUAL(out->ndim, 2);
  CU_ASSERT_EQUAL(out->shape[0], 64);
  CU_ASSERT_EQUAL(out->shape[1], 48);
  CU_ASSERT_PTR_EQUAL(tsl_te_tensor_of(out), p->outputs[0]);
  CU_ASSERT_PTR_EQUAL(tsl_te_tensor_of(p->inputs[0]->buf), p->inputs[0]);
  CU_ASSERT_EQUAL(tsl_te_check(p), TSL_OK);
}

static void test_compute_inputs_in_first_read_order_once_each(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_te_tensor *B = tsl_te_placeholder("B", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){8}, NULL);
  tsl_expr *i = ax[0].var;
  tsl_expr *body = tsl_add(tsl_mul(tsl_te_read(B, 1, &i), tsl_te_read(A, 1, &i)), tsl_te_read(B, 1, &i));
  tsl_te_tensor *out = tsl_te_compute("out", 1, ax, body, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_EQUAL(out->op->ninputs, 2);
  CU_ASSERT_PTR_EQUAL(out->op->inputs[0], B);
  CU_ASSERT_PTR_EQUAL(out->op->inputs[1], A);
  CU_ASSERT_STRING_EQUAL(out->op->tag, "injective");
  CU_ASSERT_STRING_EQUAL(ax[0].var->var.name, "i0");
}

static void test_compute_refuses_reduction_inside_expression(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){1}, NULL);
  tsl_iter_var k = tsl_te_reduce_axis("k", 0, 8);
  tsl_expr *s = tsl_te_sum(tsl_te_read(A, 1, &k.var), 1, &k, NULL);
  CU_ASSERT_PTR_NULL(tsl_te_compute("out", 1, ax, tsl_mul(s, tsl_f32(2.0f)), NULL));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "whole body"));
  tsl_te_tensor *ok = tsl_te_compute("out", 1, ax, s, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ok);
  CU_ASSERT_STRING_EQUAL(ok->op->tag, "reduce");
}

static void test_compute_refuses_non_tensor_buffer_and_vector_lanes(void) {
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){4}, NULL);
  tsl_buffer *arg = tsl_buffer_new("raw", TSL_F32, 1, (int64_t[]){4}, TSL_BUF_ARG);
  tsl_expr *i = ax[0].var;
  CU_ASSERT_PTR_NULL(tsl_te_compute("out", 1, ax, tsl_load(arg, 1, &i, NULL), NULL));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "not a TE tensor"));
  tsl_expr *vec = tsl_broadcast(tsl_f32(1.0f), 4);
  CU_ASSERT_PTR_NULL(tsl_te_compute("out", 1, ax, vec, NULL));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "lanes"));
}

static void test_compute_refuses_foreign_variable(void) {
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){4}, (const char *[]){"i"});
  tsl_expr *stray = tsl_var("q", TSL_I64);
  CU_ASSERT_PTR_NULL(tsl_te_compute("out", 1, ax, tsl_cast(TSL_F32, tsl_add(ax[0].var, stray)), NULL));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "variable q"));
}

static void test_read_wrong_index_count_and_bad_shapes(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 2, (int64_t[]){4, 4});
  tsl_expr *i = tsl_var("i", TSL_I64);
  CU_ASSERT_PTR_NULL(tsl_te_read(A, 1, &i));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "1 indices for 2 dimensions"));
  CU_ASSERT_PTR_NULL(tsl_te_placeholder("Z", TSL_F32, 2, (int64_t[]){4, 0}));
  CU_ASSERT_PTR_NULL(tsl_te_sum(tsl_f32(1.0f), 1, (tsl_iter_var[]){tsl_te_reduce_axis("k", 0, 0)}, NULL));
  /* an i32 index becomes an i64 index (index arithmetic is i64) */
  tsl_expr *j = tsl_var("j", TSL_I32);
  tsl_expr *rd = tsl_te_read(A, 2, (tsl_expr *[]){j, j});
  CU_ASSERT_PTR_NOT_NULL_FATAL(rd);
  CU_ASSERT_TRUE(tsl_type_eq(rd->load.index[0]->type, TSL_I64));
}

/* A diamond: s1 and s2 read A, s3 reads s2 then s1. Producers come before consumers,
 * each stage once. */
static void test_program_stages_topological_and_unique(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){4});
  tsl_iter_var *a1 = tsl_te_axes(1, (int64_t[]){4}, NULL);
  tsl_te_tensor *s1 = tsl_te_compute("s1", 1, a1, tsl_te_read(A, 1, &a1[0].var), NULL);
  tsl_iter_var *a2 = tsl_te_axes(1, (int64_t[]){4}, NULL);
  tsl_te_tensor *s2 = tsl_te_compute("s2", 1, a2, tsl_te_read(A, 1, &a2[0].var), NULL);
  tsl_iter_var *a3 = tsl_te_axes(1, (int64_t[]){4}, NULL);
  tsl_expr *i = a3[0].var;
  tsl_te_tensor *s3 = tsl_te_compute("s3", 1, a3, tsl_add(tsl_te_read(s2, 1, &i), tsl_te_read(s1, 1, &i)), NULL);
  tsl_te_program *p = tsl_te_program_new("diamond", 1, &A, 1, &s3);
  int n;
  tsl_te_op **st = tsl_te_program_stages(p, &n);
  CU_ASSERT_EQUAL_FATAL(n, 3);
  CU_ASSERT_PTR_EQUAL(st[0], s2->op);
  CU_ASSERT_PTR_EQUAL(st[1], s1->op);
  CU_ASSERT_PTR_EQUAL(st[2], s3->op);
  /* two outputs sharing a producer */
  tsl_te_program *q = tsl_te_program_new("two", 1, &A, 2, (tsl_te_tensor *[]){s3, s1});
  st = tsl_te_program_stages(q, &n);
  CU_ASSERT_EQUAL(n, 3);
  CU_ASSERT_PTR_NULL(tsl_te_program_new("bad", 1, &s1, 1, &s3)); /* an input must be a placeholder */
}

static void test_check_flags_out_of_bounds_read(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){8}, (const char *[]){"i"});
  tsl_expr *idx = tsl_add(ax[0].var, tsl_i64(1));
  tsl_te_tensor *out = tsl_te_compute("shift", 1, ax, tsl_te_read(A, 1, &idx), NULL);
  tsl_te_program *p = tsl_te_program_new("shift", 1, &A, 1, &out);
  CU_ASSERT_EQUAL(tsl_te_check(p), TSL_ERR_INVALID);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "shift: read of A[dim 0] may reach [1, 8] outside [0, 8)");
}

/* Found by fuzzing (tests/fuzz/fuzz_dsl.c): integer division by a zero that only the
 * run time sees gives 0 (ir/ir.h), so x[N - 1 / i] reads x[N] at i = 0; the interval
 * analysis took the zero divisor for undefined, left the 0 out of 1 / i and let the
 * read through. The TE interpreter, run on the same program, reads out of bounds. */
static void test_check_flags_read_past_end_through_division_by_zero(void) {
  const char *text = "op two(x: i16[N])\n  @output\n  a[i] = x[i] * 2\n  @output\n  b[i] = max(a[i], x[N - 1 / i])\n";
  for (int64_t n = 2; n <= 3; n++) {
    tsl_te_program *p = dsl_instantiate_text(text, "two", n, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL(tsl_te_check(p), TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "read of x[dim 0] may reach"));
  }
  /* a divisor that cannot be 0 keeps the read in bounds: i / 2 <= N - 1 */
  tsl_te_program *ok = dsl_instantiate_text("op half(x: i16[N])\n  b[i] = x[i / 2]\n    where i < N\n", "half", 3, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ok);
  CU_ASSERT_EQUAL(tsl_te_check(ok), TSL_OK);
}

static void test_check_accepts_reads_guarded_by_select_and_reduce_condition(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){8}, (const char *[]){"i"});
  tsl_expr *i = ax[0].var;
  tsl_expr *im1 = tsl_sub(i, tsl_i64(1));
  tsl_expr *guarded = tsl_select(tsl_ge(i, tsl_i64(1)), tsl_te_read(A, 1, &im1), tsl_f32(0.0f));
  tsl_te_tensor *ok = tsl_te_compute("ok", 1, ax, guarded, NULL);
  CU_ASSERT_EQUAL(tsl_te_check(tsl_te_program_new("ok", 1, &A, 1, &ok)), TSL_OK);

  /* the same read in the false branch is not guarded */
  tsl_iter_var *bx = tsl_te_axes(1, (int64_t[]){8}, (const char *[]){"i"});
  tsl_expr *jm1 = tsl_sub(bx[0].var, tsl_i64(1));
  tsl_expr *wrong = tsl_select(tsl_ge(bx[0].var, tsl_i64(1)), tsl_f32(0.0f), tsl_te_read(A, 1, &jm1));
  tsl_te_tensor *bad = tsl_te_compute("bad", 1, bx, wrong, NULL);
  CU_ASSERT_EQUAL(tsl_te_check(tsl_te_program_new("bad", 1, &A, 1, &bad)), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "may reach [-1, -1]"));

  /* sum(k: A[k - 1] if k >= 1): the condition guards the read */
  tsl_iter_var *cx = tsl_te_axes(1, (int64_t[]){1}, NULL);
  tsl_iter_var k = tsl_te_reduce_axis("k", 0, 9);
  tsl_expr *km1 = tsl_sub(k.var, tsl_i64(1));
  tsl_expr *cond = tsl_and(tsl_ge(k.var, tsl_i64(1)), tsl_not(tsl_gt(k.var, tsl_i64(8))));
  tsl_te_tensor *r = tsl_te_compute("r", 1, cx, tsl_te_sum(tsl_te_read(A, 1, &km1), 1, &k, cond), NULL);
  CU_ASSERT_EQUAL(tsl_te_check(tsl_te_program_new("r", 1, &A, 1, &r)), TSL_OK);

  /* a disjunction guards nothing on its own: (k >= 1 || k == 0) */
  tsl_iter_var *dx = tsl_te_axes(1, (int64_t[]){1}, NULL);
  tsl_iter_var k2 = tsl_te_reduce_axis("k", 0, 9);
  tsl_expr *k2m1 = tsl_sub(k2.var, tsl_i64(1));
  tsl_expr *weak = tsl_or(tsl_ge(k2.var, tsl_i64(1)), tsl_eq(k2.var, tsl_i64(0)));
  tsl_te_tensor *r2 = tsl_te_compute("r2", 1, dx, tsl_te_sum(tsl_te_read(A, 1, &k2m1), 1, &k2, weak), NULL);
  CU_ASSERT_EQUAL(tsl_te_check(tsl_te_program_new("r2", 1, &A, 1, &r2)), TSL_ERR_INVALID);
}

/* out[y] = max over r of (y*2 + r - 1 in [0, 8) ? A[y*2 + r - 1] : -inf): only the joint
 * constraint on y*2 + r proves the read; each variable's own range does not. */
static void test_check_uses_linear_constraint_of_several_variables(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){8});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){5}, (const char *[]){"y"});
  tsl_iter_var r = tsl_te_reduce_axis("r", 0, 3);
  tsl_expr *pos = tsl_add(tsl_mul(ax[0].var, tsl_i64(2)), r.var);
  tsl_expr *inside = tsl_and(tsl_ge(pos, tsl_i64(1)), tsl_lt(pos, tsl_i64(9)));
  tsl_expr *idx = tsl_sub(pos, tsl_i64(1));
  tsl_expr *v = tsl_select(inside, tsl_te_read(A, 1, &idx), tsl_float(TSL_F32, -INFINITY));
  tsl_te_tensor *out = tsl_te_compute("pool", 1, ax, tsl_te_max(v, 1, &r, NULL), NULL);
  CU_ASSERT_EQUAL(tsl_te_check(tsl_te_program_new("pool", 1, &A, 1, &out)), TSL_OK);
}

static void test_check_refuses_placeholder_not_in_inputs(void) {
  tsl_te_tensor *A = tsl_te_placeholder("A", TSL_F32, 1, (int64_t[]){4});
  tsl_te_tensor *B = tsl_te_placeholder("B", TSL_F32, 1, (int64_t[]){4});
  tsl_iter_var *ax = tsl_te_axes(1, (int64_t[]){4}, NULL);
  tsl_expr *i = ax[0].var;
  tsl_te_tensor *out = tsl_te_compute("out", 1, ax, tsl_add(tsl_te_read(A, 1, &i), tsl_te_read(B, 1, &i)), NULL);
  CU_ASSERT_EQUAL(tsl_te_check(tsl_te_program_new("p", 1, &A, 1, &out)), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "placeholder B, which is not an input"));
}

/* docs/dsl.md shows the printed form of the C-built matmul; the printer must give exactly it. */
static void test_print_of_builder_matmul_matches_docs(void) {
  int n;
  char **ex = dsl_doc_examples(&n);
  if (!ex) {
    fprintf(stderr, "\n  (skipped: docs/dsl.md not found)\n");
    return;
  }
  CU_ASSERT_FATAL(n >= 1);
  char *text = dsl_print_to_string(c_matmul(64, 48, 32));
  CU_ASSERT_STRING_EQUAL(text, ex[n - 1]);
  free(text);
  dsl_free_strings(ex, n);
}

void tsl_tests_dsl_te(void) {
  CU_pSuite s = dsl_suite("dsl_te");
  CU_add_test(s, "builder_matmul_records_axes_inputs_and_shape", test_builder_matmul_records_axes_inputs_and_shape);
  CU_add_test(s, "compute_inputs_in_first_read_order_once_each", test_compute_inputs_in_first_read_order_once_each);
  CU_add_test(s, "compute_refuses_reduction_inside_expression", test_compute_refuses_reduction_inside_expression);
  CU_add_test(s, "compute_refuses_non_tensor_buffer_and_vector_lanes", test_compute_refuses_non_tensor_buffer_and_vector_lanes);
  CU_add_test(s, "compute_refuses_foreign_variable", test_compute_refuses_foreign_variable);
  CU_add_test(s, "read_wrong_index_count_and_bad_shapes", test_read_wrong_index_count_and_bad_shapes);
  CU_add_test(s, "program_stages_topological_and_unique", test_program_stages_topological_and_unique);
  CU_add_test(s, "check_flags_out_of_bounds_read", test_check_flags_out_of_bounds_read);
  CU_add_test(s, "check_flags_read_past_end_through_division_by_zero",
              test_check_flags_read_past_end_through_division_by_zero);
  CU_add_test(s, "check_accepts_reads_guarded_by_select_and_reduce_condition",
              test_check_accepts_reads_guarded_by_select_and_reduce_condition);
  CU_add_test(s, "check_uses_linear_constraint_of_several_variables", test_check_uses_linear_constraint_of_several_variables);
  CU_add_test(s, "check_refuses_placeholder_not_in_inputs", test_check_refuses_placeholder_not_in_inputs);
  CU_add_test(s, "print_of_builder_matmul_matches_docs", test_print_of_builder_matmul_matches_docs);
}
