/* base/alloc.h - internal allocation (base/alloc.c). Every internal allocation goes through
 * these so tests can count calls and fail the Nth one (see pxi_alloc_fail_at), in the manner
 * of Argobots' test/leakcheck/rtrace.h. */
#ifndef PXI_ALLOC_H
#define PXI_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "parex/core.h"

/* malloc/calloc/free with the test hook; pxi_malloc returns NULL on failure (and logs nothing:
 * the caller reports PX_ENOMEM with context). */
void *pxi_malloc(size_t bytes);
void *pxi_calloc(size_t n, size_t bytes);
void pxi_free(void *p);
/* Allocation aligned to @align bytes (a power of two; smaller than a pointer is rounded up;
 * otherwise NULL), typically 64 (a cache line); free with pxi_free_aligned. bytes == 0 gives a
 * unique block. NULL on failure or when rounding bytes up to the alignment overflows. */
void *pxi_malloc_aligned(size_t bytes, size_t align);
void pxi_free_aligned(void *p);
/* Give the calling thread its C library arena and cache now, with one malloc and free that
 * bypass the test hook (pxi_alloc_count does not see them): glibc makes a thread's arena (an
 * mmap, an mprotect) and its tcache (a page fault) at the thread's first malloc, which would
 * otherwise fall in its first op. Threads the runtime starts call it in their preamble
 * (base/wait.h, start gates). */
void pxi_alloc_thread_warm(void);
/* strdup through pxi_malloc. */
char *pxi_strdup(const char *s);

/* Test hooks, exported for the test suites (they are px_-free internal symbols, reachable only
 * from the static library or the object files). pxi_alloc_count: calls since process start.
 * pxi_alloc_fail_at(n): the n-th call from now fails (n = 1 fails the next); 0 disables. */
uint64_t pxi_alloc_count(void);
void pxi_alloc_fail_at(uint64_t n);

#endif
