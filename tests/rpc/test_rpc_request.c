/* The server's request decoder (device/rpc_request.h) without a server: a well-formed
 * MEASURE request decodes to the fields written, every truncation of it is refused with
 * a message, the key is checked before the body, and the argument checks (kinds,
 * shapes, data sizes) refuse what docs/rpc.md forbids. Expected sizes and offsets are
 * counted here by hand from the encoding. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "device/rpc_proto.h"
#include "device/rpc_request.h"
#include "rpc_tests.h"
#include "tessel/tensor.h"

#define KEY "decoder-key"

/* MEASURE with an f32 input of extents in_dims[0..2) and data_bytes bytes of data (24
 * for a consistent 2x3), a 2x3 f32 output and an i32 7. */
static void measure_request(tsl_rpc_buf *b, const char *key, const uint64_t *in_dims, size_t data_bytes) {
  static const float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  tsl_rpc_buf_init(b);
  tsl_rpc_put_header(b, TSL_RPC_MEASURE);
  tsl_rpc_put_str(b, key);
  tsl_rpc_put_u32(b, 9);          /* handle */
  tsl_rpc_put_str(b, "matmul_k"); /* kernel */
  tsl_rpc_put_u32(b, 2);          /* number */
  tsl_rpc_put_u32(b, 3);          /* repeat */
  tsl_rpc_put_f64(b, 1.5);        /* min_repeat_ms */
  tsl_rpc_put_f64(b, 4.0);        /* timeout */
  tsl_rpc_put_u32(b, 1);          /* threads */
  tsl_rpc_put_u8(b, 1);           /* want_outputs */
  tsl_rpc_put_u32(b, 3);
  tsl_rpc_put_u8(b, TSL_RPC_ARG_INPUT);
  tsl_rpc_put_u8(b, TSL_DT_FLOAT);
  tsl_rpc_put_u8(b, 32);
  tsl_rpc_put_u8(b, 2);
  tsl_rpc_put_u64(b, in_dims[0]);
  tsl_rpc_put_u64(b, in_dims[1]);
  tsl_rpc_put_blob(b, data, data_bytes);
  tsl_rpc_put_u8(b, TSL_RPC_ARG_OUTPUT);
  tsl_rpc_put_u8(b, TSL_DT_FLOAT);
  tsl_rpc_put_u8(b, 32);
  tsl_rpc_put_u8(b, 2);
  tsl_rpc_put_u64(b, 2);
  tsl_rpc_put_u64(b, 3);
  tsl_rpc_put_u8(b, TSL_RPC_ARG_I32);
  tsl_rpc_put_u64(b, 7);
}

static void test_rpc_decode_measure_request_fields(void) {
  tsl_rpc_buf b;
  measure_request(&b, KEY, (const uint64_t[]){2, 3}, 24);
  CU_ASSERT_FATAL(b.ok);
  tsl_rpc_request req;
  char msg[256];
  CU_ASSERT_EQUAL_FATAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), 0);
  CU_ASSERT_EQUAL(req.type, TSL_RPC_MEASURE);
  CU_ASSERT_EQUAL(req.handle, 9u);
  CU_ASSERT_STRING_EQUAL(req.kernel, "matmul_k");
  CU_ASSERT(req.number == 2 && req.repeat == 3 && req.threads == 1 && req.want_outputs);
  CU_ASSERT(req.min_repeat_ms == 1.5 && req.timeout_s == 4.0);
  CU_ASSERT_EQUAL_FATAL(req.nargs, 3u);
  CU_ASSERT_EQUAL(req.args[0].bytes, 24u);
  /* the input data sits after header 8, key 4+11, handle 4, kernel 4+8, 3 u32 + 2 f64
   * + u8 + u32 = 33, kind/code/bits/ndim 4, dims 16, blob length 8: byte 100 */
  CU_ASSERT_PTR_EQUAL(req.args[0].data, b.data + 100);
  CU_ASSERT_EQUAL(req.args[1].bytes, 24u);
  CU_ASSERT_EQUAL(req.args[1].dims[1], 3u);
  CU_ASSERT_EQUAL(req.args[2].scalar, 7);
  CU_ASSERT_EQUAL(req.buffer_bytes, 48u);
  CU_ASSERT_EQUAL(req.output_bytes, 24u);
  /* every truncation is refused, with a message */
  for (size_t n = 0; n < b.len; n++) {
    uint32_t code = tsl_rpc_decode_request(b.data, n, KEY, &req, msg, sizeof msg);
    CU_ASSERT(code == TSL_RPC_E_BAD_MESSAGE || code == TSL_RPC_E_KEY);
    CU_ASSERT(msg[0] != '\0');
  }
  tsl_rpc_buf_free(&b);
}

static void test_rpc_decode_checks_key_before_body(void) {
  tsl_rpc_buf b;
  /* a wrong key with a malformed body: the key decides */
  measure_request(&b, "wrong", (const uint64_t[]){2, 3}, 5);
  tsl_rpc_request req;
  char msg[256];
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), TSL_RPC_E_KEY);
  CU_ASSERT_STRING_EQUAL(msg, "key refused");
  CU_ASSERT(req.key_given);
  tsl_rpc_buf_free(&b);
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_HELLO);
  tsl_rpc_put_str(&b, "");
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), TSL_RPC_E_KEY);
  CU_ASSERT_FALSE(req.key_given);
  tsl_rpc_buf_free(&b);
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, 77);
  tsl_rpc_put_str(&b, KEY);
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), TSL_RPC_E_BAD_MESSAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "unknown request type 77"));
  tsl_rpc_buf_free(&b);
}

static void test_rpc_decode_refuses_bad_shapes_and_data_sizes(void) {
  tsl_rpc_buf b;
  tsl_rpc_request req;
  char msg[256];
  /* data of 20 bytes for a 2x3 f32 input */
  measure_request(&b, KEY, (const uint64_t[]){2, 3}, 20);
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), TSL_RPC_E_BAD_MESSAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "argument 0: data of the wrong size"));
  tsl_rpc_buf_free(&b);
  /* 2^21 x 2^20 elements: past 2^40 */
  measure_request(&b, KEY, (const uint64_t[]){UINT64_C(1) << 21, UINT64_C(1) << 20}, 0);
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), TSL_RPC_E_BAD_MESSAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, "malformed arguments"));
  tsl_rpc_buf_free(&b);
  /* an empty input beside an extent of 2^62: refused too (zero extents count as 1) */
  measure_request(&b, KEY, (const uint64_t[]){0, UINT64_C(1) << 62}, 0);
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), TSL_RPC_E_BAD_MESSAGE);
  tsl_rpc_buf_free(&b);
  /* an empty input within the bound decodes, with no data */
  measure_request(&b, KEY, (const uint64_t[]){0, UINT64_C(1) << 40}, 0);
  CU_ASSERT_EQUAL(tsl_rpc_decode_request(b.data, b.len, KEY, &req, msg, sizeof msg), 0);
  CU_ASSERT_EQUAL(req.args[0].bytes, 0u);
  tsl_rpc_buf_free(&b);
}

void tsl_tests_rpc_request(void) {
  CU_pSuite s = CU_add_suite("rpc_request", NULL, NULL);
  CU_add_test(s, "test_rpc_decode_measure_request_fields", test_rpc_decode_measure_request_fields);
  CU_add_test(s, "test_rpc_decode_checks_key_before_body", test_rpc_decode_checks_key_before_body);
  CU_add_test(s, "test_rpc_decode_refuses_bad_shapes_and_data_sizes", test_rpc_decode_refuses_bad_shapes_and_data_sizes);
}
