/* Host memory for large buffers: the weights and the activation arena of a compiled model.
 *
 * A model's weights are read once per inference, and the deep layers' tensors are tens of
 * MiB (ResNet-18's 512-channel Winograd filters are 16.8 MB each) streamed from L3 or DRAM.
 * On 4 KiB pages such a stream walks a new page every 64 cache lines and misses the TLB
 * (a 16.8 MB tensor spans about 4100 pages against the 1.5-2K entries of an x86 STLB).
 * Buffers of at least TSL_HOST_HUGE_BYTES therefore get a mapping of their own (Linux
 * mmap), their data starting on a TSL_HOST_HUGE_BYTES boundary and advised to the kernel as
 * transparent huge pages (madvise(MADV_HUGEPAGE); with the common "madvise" THP setting
 * only advised ranges get them) before anything touches it: never memory the C heap
 * already used, and no advice left behind on the heap. The advice is best effort: where
 * the kernel has no THP, or no huge page is free, the buffer is the same memory on small
 * pages, so nothing depends on it but speed. Smaller buffers (and every buffer where
 * MADV_HUGEPAGE does not exist) come from posix_memalign. */
#ifndef TSL_RUNTIME_HOST_MEMORY_H
#define TSL_RUNTIME_HOST_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/* The size of an x86-64 / AArch64 (4 KiB granule) transparent huge page: 2 MiB. */
#define TSL_HOST_HUGE_BYTES ((size_t)2 << 20)

/* `bytes` bytes (0: `align` bytes), aligned to `align` (a power of two, at least
 * sizeof(void *)); not zeroed, except that a buffer of at least TSL_HOST_HUGE_BYTES
 * (fresh pages of its own mapping, aligned to TSL_HOST_HUGE_BYTES) reads as zeros.
 * Released with tsl_host_free only (not free()). Returns NULL when out of memory or on a
 * bad `align` or size. */
void *tsl_host_alloc(size_t bytes, size_t align);

/* tsl_host_alloc with every byte zero: a large buffer's fresh pages already are (no
 * memset touches them), a small one is cleared. */
void *tsl_host_alloc_zeroed(size_t bytes, size_t align);

/* Releases a buffer of tsl_host_alloc or tsl_host_alloc_zeroed; NULL is a no-op. */
void tsl_host_free(void *p);

/* Whether this process can advise huge pages at all: Linux with transparent huge pages
 * not set to "never" (/sys/kernel/mm/transparent_hugepage/enabled). For tests. */
bool tsl_host_huge_pages_available(void);

#endif
