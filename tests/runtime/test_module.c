/* Modules: adding and finding kernels, owners, and calls through libffi with plain C
 * functions of mixed signatures standing in for generated kernels. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/module.h"
#include "runtime_tests.h"

/* What the mixed-signature kernel saw. */
typedef struct seen {
  int32_t a;
  int64_t b;
  float c;
  double d;
  int calls;
} seen;

static int32_t k_mixed(void *out, int32_t a, int64_t b, float c, double d) {
  seen *s = out;
  s->a = a;
  s->b = b;
  s->c = c;
  s->d = d;
  s->calls++;
  return 0;
}

static int32_t k_return(int32_t code) { return code; }

static int k_noargs_calls;
static int32_t k_noargs(void) {
  k_noargs_calls++;
  return 0;
}

/* More arguments than any ABI passes in registers, interleaving classes, so some go on
 * the stack: the weighted sum shows each one arrived in its place. */
static int32_t k_many(double *out, float f1, int32_t i1, double d1, int64_t l1, float f2, int32_t i2, double d2,
                      int64_t l2, float f3, int32_t i3, double d3, int64_t l3, float f4, int32_t i4, double d4,
                      int64_t l4, float f5, int32_t i5, double d5, int64_t l5) {
  double v[20] = {f1, i1, d1, (double)l1, f2, i2, d2, (double)l2, f3, i3,
                  d3, (double)l3, f4, i4, d4, (double)l4, f5, i5, d5, (double)l5};
  double sum = 0;
  for (int k = 0; k < 20; k++) sum += (k + 1) * v[k];
  *out = sum;
  return 0;
}

static int32_t k_add(float *a, float *b, float *c) {
  for (int i = 0; i < 16; i++) c[i] = a[i] + b[i];
  return 0;
}

static tsl_kernel_sig sig_of(int n, const tsl_arg_type *types) {
  tsl_kernel_sig s;
  memset(&s, 0, sizeof s);
  s.nargs = n;
  for (int i = 0; i < n; i++) s.args[i] = types[i];
  return s;
}

static tsl_module *module_with_kernels(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  tsl_arg_type mixed[5] = {TSL_ARG_PTR, TSL_ARG_I32, TSL_ARG_I64, TSL_ARG_F32, TSL_ARG_F64};
  tsl_kernel_sig s = sig_of(5, mixed);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "k_mixed", (void *)k_mixed, &s), TSL_OK);
  tsl_arg_type one_i32[1] = {TSL_ARG_I32};
  s = sig_of(1, one_i32);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "k_return", (void *)k_return, &s), TSL_OK);
  s = sig_of(0, NULL);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "k_noargs", (void *)k_noargs, &s), TSL_OK);
  tsl_arg_type many[21] = {TSL_ARG_PTR};
  static const tsl_arg_type cycle[4] = {TSL_ARG_F32, TSL_ARG_I32, TSL_ARG_F64, TSL_ARG_I64};
  for (int i = 1; i < 21; i++) many[i] = cycle[(i - 1) % 4];
  s = sig_of(21, many);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "k_many", (void *)k_many, &s), TSL_OK);
  tsl_arg_type ptr3[3] = {TSL_ARG_PTR, TSL_ARG_PTR, TSL_ARG_PTR};
  s = sig_of(3, ptr3);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "k_add", (void *)k_add, &s), TSL_OK);
  return m;
}

static void test_module_add_get_and_enumerate(void) {
  tsl_module *m = module_with_kernels();
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), 5);
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k_mixed", &k), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tsl_kernel_name(k), "k_mixed");
  CU_ASSERT_PTR_EQUAL(tsl_kernel_fn(k), (void *)k_mixed);
  CU_ASSERT_EQUAL(tsl_kernel_signature(k)->nargs, 5);
  CU_ASSERT_EQUAL(tsl_kernel_signature(k)->args[4], TSL_ARG_F64);
  CU_ASSERT_PTR_EQUAL(tsl_module_kernel_at(m, 0), k);
  CU_ASSERT_STRING_EQUAL(tsl_kernel_name(tsl_module_kernel_at(m, 4)), "k_add");
  CU_ASSERT_PTR_NULL(tsl_module_kernel_at(m, 5));
  CU_ASSERT_PTR_NULL(tsl_module_kernel_at(m, -1));
  tsl_module_free(m);
}

static void test_module_name_is_copied(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  char name[16] = "scratch_name";
  tsl_kernel_sig s = sig_of(0, NULL);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, name, (void *)k_noargs, &s), TSL_OK);
  strcpy(name, "overwritten!");
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL(tsl_module_get_kernel(m, "scratch_name", &k), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tsl_kernel_name(k), "scratch_name");
  tsl_module_free(m);
}

static void test_module_duplicate_name_is_invalid(void) {
  tsl_module *m = module_with_kernels();
  tsl_kernel_sig s = sig_of(0, NULL);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "k_noargs", (void *)k_noargs, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "k_noargs"));
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), 5);
  tsl_module_free(m);
}

static void test_module_not_found_names_the_kernel(void) {
  tsl_module *m = module_with_kernels();
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL(tsl_module_get_kernel(m, "conv2d_missing", &k), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "conv2d_missing"));
  CU_ASSERT_PTR_NULL(k);
  tsl_module_free(m);
}

static void test_module_rejects_bad_signatures(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  tsl_kernel_sig s = sig_of(0, NULL);
  s.nargs = TSL_MAX_KERNEL_ARGS + 1;
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "too_many", (void *)k_noargs, &s), TSL_ERR_INVALID);
  s.nargs = -1;
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "negative", (void *)k_noargs, &s), TSL_ERR_INVALID);
  s.nargs = 1;
  s.args[0] = (tsl_arg_type)17;
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "bad_type", (void *)k_noargs, &s), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "bad_type"));
  s = sig_of(0, NULL);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "", (void *)k_noargs, &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "nofn", NULL, &s), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "nosig", (void *)k_noargs, NULL), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), 0);
  /* The full 32 arguments are allowed. */
  tsl_arg_type ptrs[TSL_MAX_KERNEL_ARGS];
  for (int i = 0; i < TSL_MAX_KERNEL_ARGS; i++) ptrs[i] = TSL_ARG_PTR;
  s = sig_of(TSL_MAX_KERNEL_ARGS, ptrs);
  CU_ASSERT_EQUAL(tsl_module_add_kernel(m, "max_args", (void *)k_noargs, &s), TSL_OK);
  tsl_module_free(m);
}

static int release_calls;
static void *released_owner;
static void count_release(void *owner) {
  release_calls++;
  released_owner = owner;
}

static void test_module_free_releases_owner_once(void) {
  tsl_module *m = module_with_kernels();
  int token = 0;
  release_calls = 0;
  tsl_module_set_owner(m, &token, count_release);
  tsl_module_free(m);
  CU_ASSERT_EQUAL(release_calls, 1);
  CU_ASSERT_PTR_EQUAL(released_owner, &token);
  tsl_module_free(NULL);
  CU_ASSERT_EQUAL(release_calls, 1);
}

static void test_kernel_call_mixed_args_arrive_intact(void) {
  tsl_module *m = module_with_kernels();
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k_mixed", &k), TSL_OK);
  seen s = {0};
  void *p = &s;
  int32_t a = -123456789;
  int64_t b = INT64_C(0x123456789ABCDEF0);
  float c = 1.5f;
  double d = -2.25e300;
  void *args[5] = {&p, &a, &b, &c, &d};
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 5), TSL_OK);
  CU_ASSERT_EQUAL(s.calls, 1);
  CU_ASSERT_EQUAL(s.a, -123456789);
  CU_ASSERT_EQUAL(s.b, INT64_C(0x123456789ABCDEF0));
  CU_ASSERT_EQUAL(s.c, 1.5f);
  CU_ASSERT_EQUAL(s.d, -2.25e300);
  /* The cached call interface serves a second call with other values. */
  a = INT32_MIN;
  b = INT64_MIN;
  c = -0.0f;
  d = 1e-310; /* subnormal */
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 5), TSL_OK);
  CU_ASSERT_EQUAL(s.calls, 2);
  CU_ASSERT_EQUAL(s.a, INT32_MIN);
  CU_ASSERT_EQUAL(s.b, INT64_MIN);
  CU_ASSERT(s.c == 0.0f && signbit(s.c));
  CU_ASSERT_EQUAL(s.d, 1e-310);
  tsl_module_free(m);
}

static void test_kernel_call_many_args_spill_to_stack(void) {
  tsl_module *m = module_with_kernels();
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k_many", &k), TSL_OK);
  double out = 0;
  void *p = &out;
  float f[5] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
  int32_t i[5] = {-1, -2, -3, -4, -5};
  double d[5] = {10.25, 20.25, 30.25, 40.25, 50.25};
  int64_t l[5] = {100, 200, 300, 400, 500};
  void *args[21] = {&p};
  double expect = 0;
  for (int g = 0; g < 5; g++) {
    args[1 + 4 * g] = &f[g];
    args[2 + 4 * g] = &i[g];
    args[3 + 4 * g] = &d[g];
    args[4 + 4 * g] = &l[g];
    expect += (4 * g + 1) * (double)f[g] + (4 * g + 2) * (double)i[g] + (4 * g + 3) * d[g] + (4 * g + 4) * (double)l[g];
  }
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 21), TSL_OK);
  CU_ASSERT_DOUBLE_EQUAL(out, expect, 1e-9);
  tsl_module_free(m);
}

static void test_kernel_call_nonzero_return_is_runtime_error(void) {
  tsl_module *m = module_with_kernels();
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k_return", &k), TSL_OK);
  int32_t code = 0;
  void *args[1] = {&code};
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 1), TSL_OK);
  code = -7;
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 1), TSL_ERR_RUNTIME);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "kernel k_return returned -7");
  code = 3;
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 1), TSL_ERR_RUNTIME);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "kernel k_return returned 3");
  tsl_module_free(m);
}

static void test_kernel_call_checks_argument_count(void) {
  tsl_module *m = module_with_kernels();
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k_return", &k), TSL_OK);
  int32_t code = 0;
  void *args[2] = {&code, &code};
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 2), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "k_return"));
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 0), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_kernel_call(k, NULL, 1), TSL_ERR_INVALID);
  void *holes[1] = {NULL};
  CU_ASSERT_EQUAL(tsl_kernel_call(k, holes, 1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_module_get_kernel(m, "k_noargs", &k), TSL_OK);
  k_noargs_calls = 0;
  CU_ASSERT_EQUAL(tsl_kernel_call(k, NULL, 0), TSL_OK);
  CU_ASSERT_EQUAL(k_noargs_calls, 1);
  tsl_module_free(m);
}

static void test_kernel_call_tensors_passes_data_pointers(void) {
  tsl_module *m = module_with_kernels();
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k_add", &k), TSL_OK);
  int64_t n = 16;
  tsl_tensor *t[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 1, &n, &t[i]), TSL_OK);
  for (int i = 0; i < 16; i++) {
    ((float *)t[0]->data)[i] = (float)i;
    ((float *)t[1]->data)[i] = 0.25f * (float)i;
  }
  CU_ASSERT_EQUAL(tsl_kernel_call_tensors(k, t, 3), TSL_OK);
  for (int i = 0; i < 16; i++) CU_ASSERT_EQUAL(((float *)t[2]->data)[i], 1.25f * (float)i);
  CU_ASSERT_EQUAL(tsl_kernel_call_tensors(k, t, 2), TSL_ERR_INVALID);
  tsl_tensor *with_null[3] = {t[0], NULL, t[2]};
  CU_ASSERT_EQUAL(tsl_kernel_call_tensors(k, with_null, 3), TSL_ERR_INVALID);
  /* A signature with scalars cannot be called with tensors. */
  CU_ASSERT_EQUAL(tsl_module_get_kernel(m, "k_return", &k), TSL_OK);
  CU_ASSERT_EQUAL(tsl_kernel_call_tensors(k, t, 1), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "i32"));
  for (int i = 0; i < 3; i++) tsl_tensor_free(t[i]);
  tsl_module_free(m);
}

void tsl_tests_runtime_module(void) {
  CU_pSuite s = CU_add_suite("runtime_module", NULL, NULL);
  CU_add_test(s, "test_module_add_get_and_enumerate", test_module_add_get_and_enumerate);
  CU_add_test(s, "test_module_name_is_copied", test_module_name_is_copied);
  CU_add_test(s, "test_module_duplicate_name_is_invalid", test_module_duplicate_name_is_invalid);
  CU_add_test(s, "test_module_not_found_names_the_kernel", test_module_not_found_names_the_kernel);
  CU_add_test(s, "test_module_rejects_bad_signatures", test_module_rejects_bad_signatures);
  CU_add_test(s, "test_module_free_releases_owner_once", test_module_free_releases_owner_once);
  CU_add_test(s, "test_kernel_call_mixed_args_arrive_intact", test_kernel_call_mixed_args_arrive_intact);
  CU_add_test(s, "test_kernel_call_many_args_spill_to_stack", test_kernel_call_many_args_spill_to_stack);
  CU_add_test(s, "test_kernel_call_nonzero_return_is_runtime_error", test_kernel_call_nonzero_return_is_runtime_error);
  CU_add_test(s, "test_kernel_call_checks_argument_count", test_kernel_call_checks_argument_count);
  CU_add_test(s, "test_kernel_call_tensors_passes_data_pointers", test_kernel_call_tensors_passes_data_pointers);
}
