/* Large host buffers on transparent huge pages (runtime/host_memory.h). */
#include "runtime/host_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

void *tsl_host_alloc(size_t bytes, size_t align) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0) return NULL;
  if (bytes == 0) bytes = align;
  if (bytes >= TSL_HOST_HUGE_BYTES && align < TSL_HOST_HUGE_BYTES) align = TSL_HOST_HUGE_BYTES;
  if (bytes > (size_t)-1 - align) return NULL;
  size_t size = (bytes + align - 1) / align * align;
  void *p = NULL;
  if (posix_memalign(&p, align, size) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  /* advice only: EINVAL where the kernel has no THP leaves small pages, which is correct */
  if (size >= TSL_HOST_HUGE_BYTES) (void)madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

bool tsl_host_huge_pages_available(void) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return false;
  char line[128] = {0};
  bool ok = fgets(line, sizeof line, f) != NULL && strstr(line, "[never]") == NULL;
  fclose(f);
  return ok;
#else
  return false;
#endif
}
