/* Large host buffers (runtime/host_memory.h): alignment, the huge-page advice as the kernel
 * records it (the "hg" flag of the mapping in /proc/self/smaps, read here independently of
 * the code under test), bad alignments, and model tensors that take the path. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/host_memory.h"
#include "runtime_tests.h"
#include "tessel/tensor.h"

/* 1 if the mapping holding `p` carries the kernel's huge-page advice flag "hg", 0 if it
 * does not, -1 if /proc/self/smaps has no mapping for it (or cannot be read). */
static int smaps_advised_huge(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int found = -1;
  bool inside = false;
  uintptr_t a = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      found = strstr(line, " hg") != NULL;
      break;
    }
  }
  fclose(f);
  return found;
}

static void test_host_alloc_small_keeps_requested_alignment(void) {
  size_t aligns[3] = {8, 64, 4096};
  for (int i = 0; i < 3; i++) {
    unsigned char *p = tsl_host_alloc(1000, aligns[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % aligns[i], 0);
    memset(p, 0xab, 1000); /* the whole length is writable (ASan checks the bounds) */
    CU_ASSERT_EQUAL(p[999], 0xab);
    free(p);
  }
  unsigned char *z = tsl_host_alloc(0, 64); /* 0 bytes: one alignment unit */
  CU_ASSERT_PTR_NOT_NULL_FATAL(z);
  z[63] = 1;
  free(z);
}

static void test_host_alloc_large_is_2mib_aligned_and_advised_huge(void) {
  size_t bytes = (size_t)5 << 20 | 12345; /* 5 MiB and change: not a multiple of 2 MiB */
  unsigned char *p = tsl_host_alloc(bytes, 64);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL((uintptr_t)p % ((size_t)2 << 20), 0);
  memset(p, 0x5a, bytes);
  CU_ASSERT_EQUAL(p[bytes - 1], 0x5a);
  if (tsl_host_huge_pages_available()) CU_ASSERT_EQUAL(smaps_advised_huge(p), 1);
  free(p);
}

static void test_host_alloc_rejects_bad_alignment_and_overflow(void) {
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 0));
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 3));
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 96)); /* not a power of two */
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 2)); /* below sizeof(void *): posix_memalign's rule */
  CU_ASSERT_PTR_NULL(tsl_host_alloc(SIZE_MAX - 10, 64));
}

static void test_tensor_new_large_on_huge_pages_zeroed(void) {
  int64_t shape[2] = {3, 1 << 20}; /* 12 MiB of f32: a deep layer's filters */
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 2, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL((uintptr_t)t->data % ((size_t)2 << 20), 0);
  const float *d = t->data;
  int64_t nonzero = 0;
  for (int64_t i = 0; i < 3 << 20; i++) nonzero += d[i] != 0.0f;
  CU_ASSERT_EQUAL(nonzero, 0);
  if (tsl_host_huge_pages_available()) CU_ASSERT_EQUAL(smaps_advised_huge(t->data), 1);
  tsl_tensor_free(t);
}

void tsl_tests_runtime_host_memory(void) {
  CU_pSuite s = CU_add_suite("runtime_host_memory", NULL, NULL);
  CU_add_test(s, "test_host_alloc_small_keeps_requested_alignment", test_host_alloc_small_keeps_requested_alignment);
  CU_add_test(s, "test_host_alloc_large_is_2mib_aligned_and_advised_huge",
              test_host_alloc_large_is_2mib_aligned_and_advised_huge);
  CU_add_test(s, "test_host_alloc_rejects_bad_alignment_and_overflow",
              test_host_alloc_rejects_bad_alignment_and_overflow);
  CU_add_test(s, "test_tensor_new_large_on_huge_pages_zeroed", test_tensor_new_large_on_huge_pages_zeroed);
}
