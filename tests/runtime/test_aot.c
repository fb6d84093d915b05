/* Loading AOT kernel objects: the shared modules built from aot_kernels.c stand in for
 * what codegen emits for a device. */
#include <CUnit/Basic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/aot_test_paths.h"
#include "runtime/module.h"
#include "runtime_tests.h"

static void test_aot_load_by_path_and_call(void) {
  tsl_module *m = NULL;
  tsl_status st = tsl_module_load_so(TSL_AOT_GOOD_SO, &m);
  if (st != TSL_OK) fprintf(stderr, "\n  load: %s\n", tsl_last_error());
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), 2);
  const tsl_kernel *k = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "aot_scale", &k), TSL_OK);
  CU_ASSERT_EQUAL(tsl_kernel_signature(k)->nargs, 3);
  CU_ASSERT_EQUAL(tsl_kernel_signature(k)->args[2], TSL_ARG_F32);
  float x[5] = {1, 2, 3, 4, 5};
  void *p = x;
  int64_t n = 4; /* the fifth element must stay as it is */
  float s = -2.0f;
  void *args[3] = {&p, &n, &s};
  CU_ASSERT_EQUAL(tsl_kernel_call(k, args, 3), TSL_OK);
  CU_ASSERT_EQUAL(x[0], -2.0f);
  CU_ASSERT_EQUAL(x[3], -8.0f);
  CU_ASSERT_EQUAL(x[4], 5.0f);
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "aot_fail", &k), TSL_OK);
  CU_ASSERT_EQUAL(tsl_kernel_call(k, NULL, 0), TSL_ERR_RUNTIME);
  CU_ASSERT_STRING_EQUAL(tsl_last_error(), "kernel aot_fail returned 42");
  tsl_module_free(m);
}

/* A bare file name means the current directory, never the library search path. */
static void test_aot_load_bare_name_is_relative_to_cwd(void) {
  char cwd[PATH_MAX];
  CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", TSL_AOT_GOOD_SO);
  char *slash = strrchr(dir, '/');
  CU_ASSERT_PTR_NOT_NULL_FATAL(slash);
  *slash = '\0';
  const char *base = slash + 1;
  CU_ASSERT_EQUAL_FATAL(chdir(dir), 0);
  tsl_module *m = NULL;
  tsl_status st = tsl_module_load_so(base, &m);
  CU_ASSERT_EQUAL(st, TSL_OK);
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), 2);
  tsl_module_free(m);
  CU_ASSERT_EQUAL_FATAL(chdir(cwd), 0);
  /* libc is on the search path but not in this directory. */
  CU_ASSERT_EQUAL(tsl_module_load_so("libc.so.6", &m), TSL_ERR_IO);
}

static void test_aot_missing_file_is_io_error_naming_it(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_module_load_so("/nonexistent/dir/kernels.so", &m), TSL_ERR_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "/nonexistent/dir/kernels.so"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "No such file"));
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_EQUAL(tsl_module_load_so(NULL, &m), TSL_ERR_INVALID);
}

static void test_aot_not_a_shared_object_is_io_error(void) {
  char path[] = "/tmp/tessel_not_so_XXXXXX";
  int fd = mkstemp(path);
  CU_ASSERT_FATAL(fd >= 0);
  const char junk[] = "this is not an ELF file\n";
  CU_ASSERT_EQUAL(write(fd, junk, sizeof junk - 1), (ssize_t)(sizeof junk - 1));
  close(fd);
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_module_load_so(path, &m), TSL_ERR_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), path));
  unlink(path);
  CU_ASSERT_EQUAL(tsl_module_load_so("/tmp", &m), TSL_ERR_IO); /* a directory */
  CU_ASSERT_PTR_NULL(m);
}

static void test_aot_object_without_table_is_invalid(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_NOTABLE_SO, &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "tsl_aot_kernels"));
  CU_ASSERT_PTR_NULL(m);
}

static void test_aot_bad_rows_are_invalid_naming_the_row(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_BADSIG_SO, &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "aot_too_many"));
  char many[32];
  snprintf(many, sizeof many, "%d arguments", TSL_MAX_KERNEL_ARGS + 8);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), many));
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_DUPLICATE_SO, &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "row 1"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "aot_scale"));
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_NULLFN_SO, &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "row 0"));
  CU_ASSERT_PTR_NULL(m);
}

/* An object whose table layout is unknown (no tsl_aot_abi: an older writer) or another
 * one (a different argument-array width) is refused before any row is read. */
static void test_aot_object_of_another_table_layout_is_refused(void) {
  tsl_module *m = NULL;
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_NOABI_SO, &m), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "tsl_aot_abi"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "recompile"));
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_OLDABI_SO, &m), TSL_ERR_INVALID);
  char want[64];
  snprintf(want, sizeof want, "layout %d", 1032);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), want));
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_EQUAL(tsl_module_load_so(TSL_AOT_GOOD_SO, &m), TSL_OK); /* the same table with the version loads */
  tsl_module_free(m);
}

void tsl_tests_runtime_aot(void) {
  CU_pSuite s = CU_add_suite("runtime_aot", NULL, NULL);
  CU_add_test(s, "test_aot_load_by_path_and_call", test_aot_load_by_path_and_call);
  CU_add_test(s, "test_aot_load_bare_name_is_relative_to_cwd", test_aot_load_bare_name_is_relative_to_cwd);
  CU_add_test(s, "test_aot_missing_file_is_io_error_naming_it", test_aot_missing_file_is_io_error_naming_it);
  CU_add_test(s, "test_aot_object_of_another_table_layout_is_refused",
              test_aot_object_of_another_table_layout_is_refused);
  CU_add_test(s, "test_aot_not_a_shared_object_is_io_error", test_aot_not_a_shared_object_is_io_error);
  CU_add_test(s, "test_aot_object_without_table_is_invalid", test_aot_object_without_table_is_invalid);
  CU_add_test(s, "test_aot_bad_rows_are_invalid_naming_the_row", test_aot_bad_rows_are_invalid_naming_the_row);
}
