/* Runtime tensors: allocation, alignment, strides, copies, dtypes, random fill and the
 * errors on bad shapes. Expected strides, sizes and half-precision bit patterns are
 * written out by hand, never computed with the code under test. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime_tests.h"
#include "tessel/tensor.h"

static bool aligned64(const void *p) { return ((uintptr_t)p & 63) == 0; }

static void test_tensor_new_compact_strides_aligned_zeroed(void) {
  int64_t shape[3] = {2, 3, 5};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 3, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL(t->ndim, 3);
  CU_ASSERT_EQUAL(t->strides[0], 15);
  CU_ASSERT_EQUAL(t->strides[1], 5);
  CU_ASSERT_EQUAL(t->strides[2], 1);
  CU_ASSERT_EQUAL(t->shape[1], 3);
  CU_ASSERT(aligned64(t->data));
  CU_ASSERT(t->owns_data);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), 30);
  CU_ASSERT_EQUAL(tsl_tensor_nbytes(t), 120);
  CU_ASSERT(tsl_tensor_is_contiguous(t));
  const unsigned char *b = t->data;
  int nonzero = 0;
  for (int i = 0; i < 120; i++) nonzero += b[i] != 0;
  CU_ASSERT_EQUAL(nonzero, 0);
  tsl_tensor_free(t);
}

static void test_tensor_new_rank0_is_one_element(void) {
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F64, 0, NULL, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), 1);
  CU_ASSERT_EQUAL(tsl_tensor_nbytes(t), 8);
  CU_ASSERT_PTR_NOT_NULL(t->data);
  CU_ASSERT(aligned64(t->data));
  *(double *)t->data = 2.5; /* the one element is really there */
  tsl_tensor_free(t);
}

static void test_tensor_new_zero_extent_is_empty_with_valid_data(void) {
  int64_t shape[3] = {3, 0, 5};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_I32, 3, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), 0);
  CU_ASSERT_EQUAL(tsl_tensor_nbytes(t), 0);
  CU_ASSERT_PTR_NOT_NULL(t->data);
  CU_ASSERT(tsl_tensor_is_contiguous(t));
  CU_ASSERT_EQUAL(tsl_tensor_copy_to(t, &shape, 0), TSL_OK);
  tsl_tensor_free(t);
  /* An empty tensor may have large other extents, as far as its strides stay in
   * range (test_tensor_bounds.c has the limits). */
  int64_t large[2] = {INT64_C(1) << 40, 0};
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 2, large, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), 0);
  CU_ASSERT_EQUAL(t->strides[0], 1);
  tsl_tensor_free(t);
}

static void test_tensor_new_rank8_every_dtype_size(void) {
  static const struct {
    tsl_dtype dt;
    size_t bytes;
  } cases[] = {{TSL_DTYPE_BOOL, 1}, {TSL_DTYPE_I8, 1},  {TSL_DTYPE_I16, 2}, {TSL_DTYPE_I32, 4},
               {TSL_DTYPE_I64, 8},  {TSL_DTYPE_U8, 1},  {TSL_DTYPE_U16, 2}, {TSL_DTYPE_U32, 4},
               {TSL_DTYPE_U64, 8},  {TSL_DTYPE_F16, 2}, {TSL_DTYPE_F32, 4}, {TSL_DTYPE_F64, 8}};
  int64_t shape[8] = {1, 2, 1, 3, 1, 2, 1, 2};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tsl_tensor *t = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(cases[i].dt, 8, shape, &t), TSL_OK);
    CU_ASSERT_EQUAL(tsl_dtype_bytes(cases[i].dt), cases[i].bytes);
    CU_ASSERT_EQUAL(tsl_tensor_nbytes(t), 24 * cases[i].bytes);
    CU_ASSERT_EQUAL(t->strides[0], 24);
    CU_ASSERT_EQUAL(t->strides[3], 4);
    CU_ASSERT_EQUAL(t->strides[7], 1);
    CU_ASSERT(aligned64(t->data));
    tsl_tensor_free(t);
  }
}

static void test_tensor_new_rejects_bad_rank_extent_dtype_overflow(void) {
  int64_t shape[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, 9, shape, &t), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "ndim 9"));
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, -1, shape, &t), TSL_ERR_INVALID);
  int64_t neg[2] = {4, -2};
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, 2, neg, &t), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "negative extent -2"));
  int64_t big[2] = {(int64_t)1 << 62, 4};
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, 2, big, &t), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "overflow"));
  int64_t big2[3] = {(int64_t)1 << 31, (int64_t)1 << 31, (int64_t)1 << 2};
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_I8, 3, big2, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_new((tsl_dtype){TSL_DT_FLOAT, 8}, 1, shape, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_new((tsl_dtype){TSL_DT_BOOL, 1}, 1, shape, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_new((tsl_dtype){9, 32}, 1, shape, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, 2, NULL, &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_new(TSL_DTYPE_F32, 1, shape, NULL), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NULL(t); /* never set on failure */
}

/* Class 21: element counts beyond 2^31 are int64 everywhere (metadata only here). */
static void test_class21_numel_beyond_int32_range(void) {
  unsigned char byte = 0;
  int64_t shape[2] = {65536, 32769};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_U8, 2, shape, NULL, &byte, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_numel(t), INT64_C(2147549184));
  CU_ASSERT_EQUAL(tsl_tensor_nbytes(t), (size_t)INT64_C(2147549184));
  CU_ASSERT_EQUAL(t->strides[0], 32769);
  CU_ASSERT_FALSE(t->owns_data);
  tsl_tensor_free(t);
}

static void test_tensor_wrap_rejects_null_data_unless_empty(void) {
  int64_t shape[1] = {4};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL(tsl_tensor_wrap(TSL_DTYPE_F32, 1, shape, NULL, NULL, &t), TSL_ERR_INVALID);
  int64_t empty[1] = {0};
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 1, empty, NULL, NULL, &t), TSL_OK);
  tsl_tensor_free(t);
}

/* A transposed view over caller memory: the copies walk it in logical row-major order. */
static void test_tensor_wrap_strided_view_copies_logical_order(void) {
  float buf[12]; /* a 3x4 row-major matrix */
  for (int i = 0; i < 12; i++) buf[i] = (float)i;
  int64_t shape[2] = {4, 3}, strides[2] = {1, 4};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 2, shape, strides, buf, &t), TSL_OK);
  CU_ASSERT_FALSE(tsl_tensor_is_contiguous(t));
  float out[12];
  CU_ASSERT_EQUAL(tsl_tensor_copy_to(t, out, sizeof out), TSL_OK);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(out[i * 3 + j], buf[j * 4 + i]);
  float in[12];
  for (int i = 0; i < 12; i++) in[i] = 100.0f + (float)i;
  CU_ASSERT_EQUAL(tsl_tensor_copy_from(t, in, sizeof in), TSL_OK);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) CU_ASSERT_EQUAL(buf[j * 4 + i], in[i * 3 + j]);
  tsl_tensor_free(t); /* leaves buf alone (a stack array: freeing it would crash) */
}

static void test_tensor_copy_checks_sizes(void) {
  int64_t shape[2] = {4, 6};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 2, shape, &t), TSL_OK);
  float host[24];
  for (int i = 0; i < 24; i++) host[i] = (float)i * 0.5f;
  CU_ASSERT_EQUAL(tsl_tensor_copy_from(t, host, 95), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "95"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "96"));
  CU_ASSERT_EQUAL(tsl_tensor_copy_to(t, host, 100), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_copy_from(t, NULL, 96), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_copy_from(t, host, sizeof host), TSL_OK);
  float back[24] = {0};
  CU_ASSERT_EQUAL(tsl_tensor_copy_to(t, back, sizeof back), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(host, back, sizeof host), 0);
  CU_ASSERT_EQUAL(((float *)t->data)[23], 11.5f);
  tsl_tensor_free(t);
}

static void test_tensor_contiguous_ignores_unit_extent_strides(void) {
  float buf[8] = {0};
  int64_t shape[2] = {1, 4}, strides[2] = {999, 1};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 2, shape, strides, buf, &t), TSL_OK);
  CU_ASSERT(tsl_tensor_is_contiguous(t));
  tsl_tensor_free(t);
  int64_t shape2[2] = {2, 2}, padded[2] = {4, 1};
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 2, shape2, padded, buf, &t), TSL_OK);
  CU_ASSERT_FALSE(tsl_tensor_is_contiguous(t));
  tsl_tensor_free(t);
}

static void test_dtype_str_parse_round_trip(void) {
  static const char *names[] = {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    tsl_dtype dt = {0, 0};
    CU_ASSERT_EQUAL_FATAL(tsl_dtype_parse(names[i], &dt), TSL_OK);
    CU_ASSERT(tsl_dtype_valid(dt));
    CU_ASSERT_STRING_EQUAL(tsl_dtype_str(dt), names[i]);
  }
  tsl_dtype dt;
  CU_ASSERT_EQUAL(tsl_dtype_parse("float32", &dt), TSL_OK);
  CU_ASSERT(tsl_dtype_equal(dt, TSL_DTYPE_F32));
  CU_ASSERT_EQUAL(tsl_dtype_parse("uint8", &dt), TSL_OK);
  CU_ASSERT(tsl_dtype_equal(dt, TSL_DTYPE_U8));
  CU_ASSERT_EQUAL(tsl_dtype_parse("f8", &dt), TSL_ERR_PARSE);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "'f8'"));
  CU_ASSERT_EQUAL(tsl_dtype_parse("", &dt), TSL_ERR_PARSE);
  CU_ASSERT_STRING_EQUAL(tsl_dtype_str((tsl_dtype){TSL_DT_INT, 12}), "invalid");
  CU_ASSERT_EQUAL(tsl_dtype_bytes((tsl_dtype){TSL_DT_INT, 12}), 0);
}

static tsl_tensor *new1d(tsl_dtype dt, int64_t n) {
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL(tsl_tensor_new(dt, 1, &n, &t), TSL_OK);
  return t;
}

static void test_fill_random_deterministic_per_seed(void) {
  tsl_tensor *a = new1d(TSL_DTYPE_F32, 1000), *b = new1d(TSL_DTYPE_F32, 1000), *c = new1d(TSL_DTYPE_F32, 1000);
  CU_ASSERT_FATAL(a && b && c);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(a, 42, -1.0, 1.0), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(b, 42, -1.0, 1.0), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(c, 43, -1.0, 1.0), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(a->data, b->data, 4000), 0);
  CU_ASSERT_NOT_EQUAL(memcmp(a->data, c->data, 4000), 0);
  tsl_tensor_free(a);
  tsl_tensor_free(b);
  tsl_tensor_free(c);
}

static void test_fill_random_float_range_and_mean(void) {
  tsl_tensor *t = new1d(TSL_DTYPE_F32, 10000);
  CU_ASSERT_FATAL(t != NULL);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 7, -1.0, 1.0), TSL_OK);
  const float *x = t->data;
  double sum = 0;
  int out = 0, distinct_first = 0;
  for (int i = 0; i < 10000; i++) {
    out += !(x[i] >= -1.0f && x[i] <= 1.0f);
    sum += x[i];
    distinct_first += x[i] != x[0];
  }
  CU_ASSERT_EQUAL(out, 0);
  CU_ASSERT(fabs(sum / 10000) < 0.05);
  CU_ASSERT(distinct_first > 9990);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 7, 3.25, 3.25), TSL_OK);
  CU_ASSERT_EQUAL(x[0], 3.25f);
  CU_ASSERT_EQUAL(x[9999], 3.25f);
  tsl_tensor_free(t);
}

static void test_fill_random_int_inclusive_range_hits_every_value(void) {
  tsl_tensor *t = new1d(TSL_DTYPE_I8, 5000);
  CU_ASSERT_FATAL(t != NULL);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 1, -3.0, 3.0), TSL_OK);
  int seen[7] = {0}, out = 0;
  const int8_t *x = t->data;
  for (int i = 0; i < 5000; i++) {
    if (x[i] < -3 || x[i] > 3)
      out++;
    else
      seen[x[i] + 3]++;
  }
  CU_ASSERT_EQUAL(out, 0);
  for (int v = 0; v < 7; v++) CU_ASSERT(seen[v] > 500); /* ~714 expected each */
  /* Fractional bounds: [ceil(0.5), floor(2.5)] = {1, 2}. */
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 2, 0.5, 2.5), TSL_OK);
  int ones = 0, twos = 0;
  for (int i = 0; i < 5000; i++) {
    ones += x[i] == 1;
    twos += x[i] == 2;
  }
  CU_ASSERT_EQUAL(ones + twos, 5000);
  CU_ASSERT(ones > 2000 && twos > 2000);
  tsl_tensor_free(t);
}

static void test_fill_random_whole_type_ranges(void) {
  tsl_tensor *u = new1d(TSL_DTYPE_U8, 20000);
  CU_ASSERT_FATAL(u != NULL);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(u, 3, -1e30, 1e30), TSL_OK);
  const uint8_t *x = u->data;
  bool has0 = false, has255 = false;
  for (int i = 0; i < 20000; i++) {
    has0 |= x[i] == 0;
    has255 |= x[i] == 255;
  }
  CU_ASSERT(has0 && has255);
  tsl_tensor_free(u);

  tsl_tensor *l = new1d(TSL_DTYPE_I64, 1000);
  CU_ASSERT_FATAL(l != NULL);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(l, 4, -1e30, 1e30), TSL_OK);
  const int64_t *y = l->data;
  int neg = 0, beyond32 = 0;
  for (int i = 0; i < 1000; i++) {
    neg += y[i] < 0;
    beyond32 += y[i] > INT32_MAX || y[i] < INT32_MIN;
  }
  CU_ASSERT(neg > 400 && neg < 600);
  CU_ASSERT(beyond32 > 990);
  tsl_tensor_free(l);

  tsl_tensor *b = new1d(TSL_DTYPE_BOOL, 1000);
  CU_ASSERT_FATAL(b != NULL);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(b, 5, 0, 1), TSL_OK);
  const uint8_t *z = b->data;
  int count[2] = {0, 0}, other = 0;
  for (int i = 0; i < 1000; i++) {
    if (z[i] > 1)
      other++;
    else
      count[z[i]]++;
  }
  CU_ASSERT_EQUAL(other, 0);
  CU_ASSERT(count[0] > 400 && count[1] > 400);
  tsl_tensor_free(b);
}

static void test_fill_random_rejects_bad_bounds(void) {
  tsl_tensor *t = new1d(TSL_DTYPE_U8, 4), *h = new1d(TSL_DTYPE_F16, 4);
  CU_ASSERT_FATAL(t && h);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 1, 2.0, 1.0), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 1, NAN, 1.0), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 1, 0.0, INFINITY), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 1, -5.0, -1.0), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "u8"));
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(t, 1, 0.2, 0.8), TSL_ERR_INVALID); /* no integer inside */
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(h, 1, 0.0, 1e5), TSL_ERR_INVALID);  /* beyond f16 */
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(NULL, 1, 0.0, 1.0), TSL_ERR_INVALID);
  tsl_tensor_free(t);
  tsl_tensor_free(h);
}

static void test_fill_random_strided_view_gets_logical_values(void) {
  int64_t shape[2] = {4, 3};
  tsl_tensor *a = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 2, shape, &a), TSL_OK);
  float buf[12];
  int64_t strides[2] = {1, 4};
  tsl_tensor *v = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 2, shape, strides, buf, &v), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(a, 9, 0.0, 10.0), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(v, 9, 0.0, 10.0), TSL_OK);
  float la[12], lv[12];
  CU_ASSERT_EQUAL(tsl_tensor_copy_to(a, la, sizeof la), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_copy_to(v, lv, sizeof lv), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(la, lv, sizeof la), 0);
  tsl_tensor_free(a);
  tsl_tensor_free(v);
}

/* Naive binary16 decoding, independent of the encoder under test. */
static double half_value(uint16_t h) {
  int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? m * pow(2, -24) : (1024 + m) * pow(2, e - 25);
  return sign ? -v : v;
}

static void test_fill_random_f16_rounds_to_nearest_half(void) {
  static const struct {
    double v;
    uint16_t bits;
  } cases[] = {{1.0, 0x3c00},          {1.5, 0x3e00},          {-2.0, 0xc000},
               {65504.0, 0x7bff},      {0x1p-14, 0x0400},      {0x1p-24, 0x0001},
               {1.0 / 3.0, 0x3555},    {0.1, 0x2e66},          {1.0 + 0x1p-11, 0x3c00} /* tie: to even */,
               {1.0 + 3 * 0x1p-11, 0x3c02} /* tie: to even */, {0x1p-25, 0x0000} /* tie: to even */};
  tsl_tensor *h = new1d(TSL_DTYPE_F16, 3);
  CU_ASSERT_FATAL(h != NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CU_ASSERT_EQUAL(tsl_tensor_fill_random(h, 1, cases[i].v, cases[i].v), TSL_OK);
    CU_ASSERT_EQUAL(((uint16_t *)h->data)[2], cases[i].bits);
  }
  tsl_tensor_free(h);
  h = new1d(TSL_DTYPE_F16, 2000);
  CU_ASSERT_FATAL(h != NULL);
  CU_ASSERT_EQUAL(tsl_tensor_fill_random(h, 11, -4.0, 4.0), TSL_OK);
  int out = 0, neg = 0;
  for (int i = 0; i < 2000; i++) {
    double v = half_value(((uint16_t *)h->data)[i]);
    out += !(v >= -4.0 && v <= 4.0);
    neg += v < 0;
  }
  CU_ASSERT_EQUAL(out, 0);
  CU_ASSERT(neg > 800 && neg < 1200);
  tsl_tensor_free(h);
}

/* tsl_tensor_get_f64: values written by hand in each dtype, a transposed strided view,
 * and f16 bit patterns decoded (1.0 = 0x3c00, -2.5 = 0xc100, smallest subnormal 0x0001,
 * +inf 0x7c00). */
static void test_get_f64_reads_every_dtype_and_strides(void) {
  int16_t i16[3] = {-32768, 7, 32767};
  uint32_t u32[2] = {4000000000u, 1u};
  float f32[6] = {0, 1, 2, 3, 4, 5}; /* 2x3 row-major */
  uint16_t f16[4] = {0x3c00, 0xc100, 0x0001, 0x7c00};
  int64_t n3[1] = {3}, n2[1] = {2}, n4[1] = {4};
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_I16, 1, n3, NULL, i16, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 0), -32768.0);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 2), 32767.0);
  tsl_tensor_free(t);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_U32, 1, n2, NULL, u32, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 0), 4000000000.0);
  tsl_tensor_free(t);
  int64_t shape_t[2] = {3, 2}, strides_t[2] = {1, 3}; /* the transpose of the 2x3 */
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F32, 2, shape_t, strides_t, f32, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 1), 3.0); /* [0][1] of the transpose = [1][0] */
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 4), 2.0); /* [2][0] = [0][2] */
  tsl_tensor_free(t);
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_wrap(TSL_DTYPE_F16, 1, n4, NULL, f16, &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 0), 1.0);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 1), -2.5);
  CU_ASSERT_EQUAL(tsl_tensor_get_f64(t, 2), 0x1p-24);
  CU_ASSERT(isinf(tsl_tensor_get_f64(t, 3)));
  tsl_tensor_free(t);
}

void tsl_tests_runtime_tensor(void) {
  CU_pSuite s = CU_add_suite("runtime_tensor", NULL, NULL);
  CU_add_test(s, "test_tensor_new_compact_strides_aligned_zeroed", test_tensor_new_compact_strides_aligned_zeroed);
  CU_add_test(s, "test_tensor_new_rank0_is_one_element", test_tensor_new_rank0_is_one_element);
  CU_add_test(s, "test_tensor_new_zero_extent_is_empty_with_valid_data",
              test_tensor_new_zero_extent_is_empty_with_valid_data);
  CU_add_test(s, "test_tensor_new_rank8_every_dtype_size", test_tensor_new_rank8_every_dtype_size);
  CU_add_test(s, "test_tensor_new_rejects_bad_rank_extent_dtype_overflow",
              test_tensor_new_rejects_bad_rank_extent_dtype_overflow);
  CU_add_test(s, "test_class21_numel_beyond_int32_range", test_class21_numel_beyond_int32_range);
  CU_add_test(s, "test_tensor_wrap_rejects_null_data_unless_empty", test_tensor_wrap_rejects_null_data_unless_empty);
  CU_add_test(s, "test_tensor_wrap_strided_view_copies_logical_order",
              test_tensor_wrap_strided_view_copies_logical_order);
  CU_add_test(s, "test_tensor_copy_checks_sizes", test_tensor_copy_checks_sizes);
  CU_add_test(s, "test_tensor_contiguous_ignores_unit_extent_strides",
              test_tensor_contiguous_ignores_unit_extent_strides);
  CU_add_test(s, "test_dtype_str_parse_round_trip", test_dtype_str_parse_round_trip);
  CU_add_test(s, "test_fill_random_deterministic_per_seed", test_fill_random_deterministic_per_seed);
  CU_add_test(s, "test_fill_random_float_range_and_mean", test_fill_random_float_range_and_mean);
  CU_add_test(s, "test_fill_random_int_inclusive_range_hits_every_value",
              test_fill_random_int_inclusive_range_hits_every_value);
  CU_add_test(s, "test_fill_random_whole_type_ranges", test_fill_random_whole_type_ranges);
  CU_add_test(s, "test_fill_random_rejects_bad_bounds", test_fill_random_rejects_bad_bounds);
  CU_add_test(s, "test_fill_random_strided_view_gets_logical_values",
              test_fill_random_strided_view_gets_logical_values);
  CU_add_test(s, "test_fill_random_f16_rounds_to_nearest_half", test_fill_random_f16_rounds_to_nearest_half);
  CU_add_test(s, "test_get_f64_reads_every_dtype_and_strides", test_get_f64_reads_every_dtype_and_strides);
}
