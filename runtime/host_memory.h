/* Host memory for large buffers: the weights and the activation arena of a compiled model.
 *
 * A model's weights are read once per inference, and the deep layers' tensors are tens of
 * MiB (ResNet-18's 512-channel Winograd filters are 16.8 MB each) streamed from L3 or DRAM.
 * On 4 KiB pages such a stream walks a new page every 64 cache lines and misses the TLB
 * (a 16.8 MB tensor spans about 4100 pages against the 1.5-2K entries of an x86 STLB).
 * Buffers of at least TSL_HOST_HUGE_BYTES are therefore aligned to that size and advised
 * to the kernel as transparent huge pages (Linux madvise(MADV_HUGEPAGE); with the common
 * "madvise" THP setting only advised ranges get them). The advice is best effort: where
 * the kernel has no THP, or no huge page is free, the buffer is the same memory on small
 * pages, so nothing depends on it but speed. */
#ifndef TSL_RUNTIME_HOST_MEMORY_H
#define TSL_RUNTIME_HOST_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/* The size of an x86-64 / AArch64 (4 KiB granule) transparent huge page: 2 MiB. */
#define TSL_HOST_HUGE_BYTES ((size_t)2 << 20)

/* `bytes` bytes (rounded up to a multiple of `align`; 0 allocates `align`), aligned to
 * `align` (a power of two, at least sizeof(void *)), not zeroed; released with free().
 * At least TSL_HOST_HUGE_BYTES long: aligned to TSL_HOST_HUGE_BYTES and advised as huge
 * pages before anything touches it. Returns NULL when out of memory or on a bad `align`. */
void *tsl_host_alloc(size_t bytes, size_t align);

/* Whether this process can advise huge pages at all: Linux with transparent huge pages
 * not set to "never" (/sys/kernel/mm/transparent_hugepage/enabled). For tests. */
bool tsl_host_huge_pages_available(void);

#endif
