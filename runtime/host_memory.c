/* Large host buffers on transparent huge pages (runtime/host_memory.h). */
#include "runtime/host_memory.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define HOST_HUGE 1
#else
#define HOST_HUGE 0
#endif

/* Every buffer is preceded by this record, in the HEADER_BYTES before its data: how to
 * release it. */
typedef struct block_header {
  void *base;  /* what posix_memalign or mmap returned */
  size_t len;  /* the mapping's length (0: a posix_memalign block) */
  uint64_t magic;
} block_header;

#define HEADER_BYTES ((size_t)64)
#define BLOCK_MAGIC UINT64_C(0x74736c686f737431) /* "tslhost1" */

static block_header *header_of(void *p) { return (block_header *)((unsigned char *)p - sizeof(block_header)); }

void *tsl_host_alloc(size_t bytes, size_t align) {
  if (align < sizeof(void *) || (align & (align - 1)) != 0 || align > TSL_HOST_HUGE_BYTES) return NULL;
  if (bytes == 0) bytes = align;
  size_t hdr = align > HEADER_BYTES ? align : HEADER_BYTES; /* keeps the data aligned */
  if (bytes > SIZE_MAX - hdr - 2 * TSL_HOST_HUGE_BYTES) return NULL;
#if HOST_HUGE
  if (bytes >= TSL_HOST_HUGE_BYTES) {
    /* room for the header page before a 2 MiB boundary, then the data from it */
    size_t len = bytes + TSL_HOST_HUGE_BYTES + hdr;
    void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    uintptr_t first = (uintptr_t)base + hdr;
    uintptr_t data = (first + TSL_HOST_HUGE_BYTES - 1) & ~(uintptr_t)(TSL_HOST_HUGE_BYTES - 1);
    /* the data's pages only (the slack after them stays unadvised, so no huge page is
     * made of it); advice only: EINVAL where the kernel has no THP leaves small pages */
    size_t page = 4096, advised = (bytes + page - 1) / page * page;
    (void)madvise((void *)data, advised, MADV_HUGEPAGE);
    block_header *h = header_of((void *)data);
    *h = (block_header){base, len, BLOCK_MAGIC};
    return (void *)data;
  }
#endif
  void *base = NULL;
  if (posix_memalign(&base, align, hdr + bytes) != 0) return NULL;
  void *p = (unsigned char *)base + hdr;
  *header_of(p) = (block_header){base, 0, BLOCK_MAGIC};
  return p;
}

void *tsl_host_alloc_zeroed(size_t bytes, size_t align) {
  void *p = tsl_host_alloc(bytes, align);
  if (p && header_of(p)->len == 0) memset(p, 0, bytes ? bytes : align); /* not a fresh mapping */
  return p;
}

void tsl_host_free(void *p) {
  if (!p) return;
  block_header h = *header_of(p);
  if (h.magic != BLOCK_MAGIC) {
    fprintf(stderr, "tessel: tsl_host_free of %p, not a tsl_host_alloc buffer\n", p);
    abort();
  }
  header_of(p)->magic = 0; /* a second free of the same buffer is caught above while it is mapped */
#if HOST_HUGE
  if (h.len > 0) {
    (void)munmap(h.base, h.len);
    return;
  }
#endif
  free(h.base);
}

bool tsl_host_huge_pages_available(void) {
#if HOST_HUGE
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
