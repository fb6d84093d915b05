/* Size bounds of shapes: tsl_shape_check and the tensor constructors built on it.
 *
 * A zero extent makes a tensor empty, but its compact strides still multiply the other
 * extents: an empty tensor beside extents whose product (or whose strides, in elements
 * or in bytes) overflows int64 must be refused with an error, never built with wrapped
 * strides. Every bound and stride expected here is written out by hand from the
 * powers of two involved, never computed with the code under test. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime_tests.h"
#include "tessel/tensor.h"

#define P2(k) (INT64_C(1) << (k))

static bool msg_has(const char *want) {
  bool ok = strstr(tsl_last_error(), want) != NULL;
  if (!ok) printf("\n  message lacks '%s': %s\n", want, tsl_last_error());
  return ok;
}

/* Both constructors refuse the shape with TSL_ERR_INVALID, a message naming the zero
 * extent rule, and leave *out alone. */
static void expect_refused(tsl_dtype dt, int ndim, const int64_t *shape) {
  tsl_tensor *t = NULL;
  float byte = 0;
  CU_ASSERT_EQUAL(tsl_tensor_new(dt, ndim, shape, &t), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("tsl_tensor_new"));
  CU_ASSERT(msg_has("zero extents count as 1"));
  CU_ASSERT_PTR_NULL(t);
  CU_ASSERT_EQUAL(tsl_tensor_wrap(dt, ndim, shape, NULL, &byte, &t), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("tsl_tensor_wrap"));
  CU_ASSERT_PTR_NULL(t);
}

/* 2^32 * 2^32 = 2^64 elements: the product overflows int64 whatever the element size,
 * wherever the zero stands. */
static void test_tensor_empty_beside_extents_whose_product_overflows_is_refused(void) {
  static const tsl_dtype dts[] = {TSL_DTYPE_BOOL, TSL_DTYPE_I8, TSL_DTYPE_F16, TSL_DTYPE_F32, TSL_DTYPE_F64};
  const int64_t cases[3][3] = {{0, P2(32), P2(32)}, {P2(32), 0, P2(32)}, {P2(32), P2(32), 0}};
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
    for (int c = 0; c < 3; c++) expect_refused(dts[d], 3, cases[c]);
  /* the case fuzzing found: a zero beside two huge extents of an ONNX initializer */
  const int64_t onnx_case[3] = {0, P2(62), P2(62)};
  expect_refused(TSL_DTYPE_F32, 3, onnx_case);
  /* INT64_MAX beside a zero: the product fits int64 but its bytes do not */
  const int64_t max_case[2] = {INT64_MAX, 0};
  expect_refused(TSL_DTYPE_F32, 2, max_case);
  expect_refused(TSL_DTYPE_U8, 3, (const int64_t[]){INT64_MAX, 0, 2});
}

/* Strides that overflow: in elements, [0, 2^62, 4] has stride 2^64 on dimension 0; in
 * bytes, [0, 2^31, 2^31] of f32 has element stride 2^62 (fits) but 2^64 bytes. */
static void test_tensor_empty_beside_extents_whose_strides_overflow_is_refused(void) {
  expect_refused(TSL_DTYPE_I8, 3, (const int64_t[]){0, P2(62), 4});
  expect_refused(TSL_DTYPE_F32, 3, (const int64_t[]){0, P2(31), P2(31)});
  expect_refused(TSL_DTYPE_F32, 4, (const int64_t[]){3, 0, P2(40), P2(40)});
  /* the edge: 2^61 f32 elements are 2^63 bytes, one past INT64_MAX */
  expect_refused(TSL_DTYPE_F32, 3, (const int64_t[]){0, P2(30), P2(31)});
  /* i8: 2^63 elements, one past INT64_MAX */
  expect_refused(TSL_DTYPE_I8, 4, (const int64_t[]){0, P2(31), P2(31), 2});
  /* the message names the bound: for f32, 2^63 bytes / 4 - 1 elements = 2^61 - 1 */
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, 3, (const int64_t[]){0, P2(30), P2(31)}, &t), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("2^61 - 1 elements"));
  CU_ASSERT(msg_has("dimension 2"));
}

/* Just inside the bound an empty tensor is still made, with the strides of the extents
 * with its zero made 1. */
static void test_tensor_empty_within_bounds_keeps_its_strides(void) {
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 3, (const int64_t[]){0, P2(30), P2(30)}, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), 0);
  CU_ASSERT_EQUAL(tsl_tensor_nbytes(t), 0);
  CU_ASSERT_EQUAL(t->strides[0], P2(60));
  CU_ASSERT_EQUAL(t->strides[1], P2(30));
  CU_ASSERT_EQUAL(t->strides[2], 1);
  tsl_tensor_free(t);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_I8, 3, (const int64_t[]){P2(31), 0, P2(31)}, &t), TSL_OK);
  CU_ASSERT_EQUAL(t->strides[0], P2(31));
  CU_ASSERT_EQUAL(t->strides[1], P2(31));
  CU_ASSERT_EQUAL(t->strides[2], 1);
  tsl_tensor_free(t);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F64, 2, (const int64_t[]){P2(59), 0}, NULL, NULL, &t), TSL_OK);
  CU_ASSERT_EQUAL(t->strides[0], 1);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), 0);
  tsl_tensor_free(t);
}

static void test_shape_check_bounds_span_with_zeros_as_one(void) {
  int64_t n = -1;
  CU_ASSERT_EQUAL(tsl_shape_check("here", 2, (const int64_t[]){3, 5}, 15, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 15);
  CU_ASSERT_EQUAL(tsl_shape_check("here", 0, NULL, 1, &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT_EQUAL(tsl_shape_check("here", 3, (const int64_t[]){0, P2(20), P2(20)}, P2(40), &n), TSL_OK);
  CU_ASSERT_EQUAL(n, 0);
  CU_ASSERT_EQUAL(tsl_shape_check("here", 2, (const int64_t[]){3, 5}, 14, &n), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("here: shape [3x5] is too large"));
  CU_ASSERT_EQUAL(tsl_shape_check("here", 3, (const int64_t[]){0, P2(20), P2(21)}, P2(40), NULL), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("passes 2^40 elements at dimension 2"));
  CU_ASSERT(msg_has("zero extents count as 1"));
  /* the product would wrap to 0 in 64 bits: still refused */
  CU_ASSERT_EQUAL(tsl_shape_check("here", 2, (const int64_t[]){P2(32), P2(32)}, INT64_MAX, NULL), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("2^63 - 1 elements"));
  CU_ASSERT_EQUAL(tsl_shape_check("here", 2, (const int64_t[]){2, -1}, P2(40), NULL), TSL_ERR_INVALID);
  CU_ASSERT(msg_has("negative extent -1 in dimension 1"));
  CU_ASSERT_EQUAL(tsl_shape_check("here", 9, (const int64_t[9]){1}, P2(40), NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_shape_check("here", 1, NULL, P2(40), NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_shape_check("here", 1, (const int64_t[]){1}, 0, NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(n, 0); /* untouched by the failures */
}

void tsl_tests_runtime_tensor_bounds(void) {
  CU_pSuite s = CU_add_suite("runtime_tensor_bounds", NULL, NULL);
  CU_add_test(s, "test_tensor_empty_beside_extents_whose_product_overflows_is_refused",
              test_tensor_empty_beside_extents_whose_product_overflows_is_refused);
  CU_add_test(s, "test_tensor_empty_beside_extents_whose_strides_overflow_is_refused",
              test_tensor_empty_beside_extents_whose_strides_overflow_is_refused);
  CU_add_test(s, "test_tensor_empty_within_bounds_keeps_its_strides", test_tensor_empty_within_bounds_keeps_its_strides);
  CU_add_test(s, "test_shape_check_bounds_span_with_zeros_as_one", test_shape_check_bounds_span_with_zeros_as_one);
}
