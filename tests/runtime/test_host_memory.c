/* Large host buffers (runtime/host_memory.h): alignment, the huge-page advice as the kernel
 * records it (the mapping in /proc/self/smaps, read here independently of the code under
 * test: it must start at the buffer, so the advice is this buffer's own, and carry the
 * "hg" flag), bad alignments, and model tensors that take the path. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/host_memory.h"
#include "runtime_tests.h"
#include "tessel/tensor.h"

typedef struct smaps_entry {
  bool found;          /* a mapping holds the address */
  uintptr_t start;     /* its first byte */
  bool advised_huge;   /* VmFlags has "hg" */
  bool has_vm_flags;   /* the kernel prints VmFlags at all */
} smaps_entry;

static smaps_entry smaps_of(const void *p) {
  smaps_entry e = {false, 0, false, false};
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return e;
  char line[512];
  bool inside = false;
  uintptr_t a = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char *dash = strchr(line, '-'), *space = strchr(line, ' ');
    if (dash && space && dash < space && sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
      inside = a >= lo && a < hi;
      if (inside) {
        e.found = true;
        e.start = lo;
      }
      continue;
    }
    if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      e.has_vm_flags = true;
      e.advised_huge = strstr(line, " hg") != NULL;
      break;
    }
  }
  fclose(f);
  return e;
}

/* Where the kernel can advise huge pages, the mapping holding p starts at p (madvise split
 * it there: the advice is p's own) and carries "hg". */
static void assert_own_advised_mapping(const void *p) {
  if (!tsl_host_huge_pages_available()) {
    printf("\n    (no transparent huge pages here: the advice is not checked)");
    return;
  }
  smaps_entry e = smaps_of(p);
  CU_ASSERT_FATAL(e.found && e.has_vm_flags);
  CU_ASSERT_EQUAL(e.start, (uintptr_t)p);
  CU_ASSERT(e.advised_huge);
}

static void test_host_alloc_small_keeps_requested_alignment(void) {
  size_t aligns[4] = {8, 64, 4096, (size_t)2 << 20};
  for (int i = 0; i < 4; i++) {
    unsigned char *p = tsl_host_alloc(1000, aligns[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % aligns[i], 0);
    memset(p, 0xab, 1000); /* the whole length is writable (ASan checks the bounds) */
    CU_ASSERT_EQUAL(p[999], 0xab);
    tsl_host_free(p);
  }
  unsigned char *z = tsl_host_alloc(0, 64); /* 0 bytes: one alignment unit */
  CU_ASSERT_PTR_NOT_NULL_FATAL(z);
  z[63] = 1;
  tsl_host_free(z);
  tsl_host_free(NULL);
}

static void test_host_alloc_large_is_2mib_aligned_zero_and_advised_huge(void) {
  size_t bytes = (size_t)5 << 20 | 12345; /* 5 MiB and change: not a multiple of 2 MiB */
  for (int round = 0; round < 2; round++) { /* the second after a large block was freed */
    unsigned char *p = tsl_host_alloc(bytes, 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % ((size_t)2 << 20), 0);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; i += 4096) nonzero += p[i] != 0;
    nonzero += p[bytes - 1] != 0;
    CU_ASSERT_EQUAL(nonzero, 0); /* fresh pages of its own, never the heap's */
    assert_own_advised_mapping(p);
    memset(p, 0x5a, bytes);
    CU_ASSERT_EQUAL(p[bytes - 1], 0x5a);
    tsl_host_free(p);
  }
}

/* tsl_host_alloc_zeroed reads as zeros at both sizes, also where the heap has just held
 * other bytes (a small block of the same size freed dirty right before) */
static void test_host_alloc_zeroed_small_and_large(void) {
  size_t sizes[2] = {3000, ((size_t)3 << 20) + 100};
  for (int i = 0; i < 2; i++) {
    unsigned char *dirty = tsl_host_alloc(sizes[i], 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dirty);
    memset(dirty, 0xff, sizes[i]);
    tsl_host_free(dirty);
    unsigned char *p = tsl_host_alloc_zeroed(sizes[i], 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    size_t nonzero = 0;
    for (size_t k = 0; k < sizes[i]; k++) nonzero += p[k] != 0;
    CU_ASSERT_EQUAL(nonzero, 0);
    tsl_host_free(p);
  }
}

static void test_host_alloc_rejects_bad_alignment_and_overflow(void) {
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 0));
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 3));
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 96)); /* not a power of two */
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, 2)); /* below sizeof(void *): posix_memalign's rule */
  CU_ASSERT_PTR_NULL(tsl_host_alloc(100, (size_t)4 << 20)); /* beyond a huge page */
  CU_ASSERT_PTR_NULL(tsl_host_alloc(SIZE_MAX - 10, 64));
}

static void test_tensor_new_large_on_huge_pages_zeroed(void) {
  int64_t shape[2] = {3, 1 << 20}; /* 12 MiB of f32: a deep layer's filters */
  tsl_tensor *t = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_tensor_new(TSL_DTYPE_F32, 2, shape, &t), TSL_OK);
  CU_ASSERT_EQUAL((uintptr_t)t->data % ((size_t)2 << 20), 0);
  assert_own_advised_mapping(t->data);
  const float *d = t->data;
  int64_t nonzero = 0;
  for (int64_t i = 0; i < 3 << 20; i++) nonzero += d[i] != 0.0f;
  CU_ASSERT_EQUAL(nonzero, 0);
  tsl_tensor_free(t);
}

void tsl_tests_runtime_host_memory(void) {
  CU_pSuite s = CU_add_suite("runtime_host_memory", NULL, NULL);
  CU_add_test(s, "test_host_alloc_small_keeps_requested_alignment", test_host_alloc_small_keeps_requested_alignment);
  CU_add_test(s, "test_host_alloc_large_is_2mib_aligned_zero_and_advised_huge",
              test_host_alloc_large_is_2mib_aligned_zero_and_advised_huge);
  CU_add_test(s, "test_host_alloc_zeroed_small_and_large", test_host_alloc_zeroed_small_and_large);
  CU_add_test(s, "test_host_alloc_rejects_bad_alignment_and_overflow",
              test_host_alloc_rejects_bad_alignment_and_overflow);
  CU_add_test(s, "test_tensor_new_large_on_huge_pages_zeroed", test_tensor_new_large_on_huge_pages_zeroed);
}
