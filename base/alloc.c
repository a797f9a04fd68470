/* base/alloc.c - internal allocation with a counting, failure-injecting test hook. */
#include "base/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Calls so far, and the call number that must fail (0: none). Relaxed: the counter is a
 * statistic and the failure point is set by a test before the code under test runs. */
static atomic_uint_fast64_t n_calls;
static atomic_uint_fast64_t fail_at;

static int should_fail(void)
{
    uint64_t n = atomic_fetch_add_explicit(&n_calls, 1, memory_order_relaxed) + 1;
    uint64_t f = atomic_load_explicit(&fail_at, memory_order_relaxed);
    return f != 0 && n == f;
}

uint64_t pxi_alloc_count(void)
{
    return atomic_load_explicit(&n_calls, memory_order_relaxed);
}

void pxi_alloc_fail_at(uint64_t n)
{
    uint64_t now = atomic_load_explicit(&n_calls, memory_order_relaxed);
    atomic_store_explicit(&fail_at, n ? now + n : 0, memory_order_relaxed);
}

void *pxi_malloc(size_t bytes)
{
    if (should_fail())
        return NULL;
    return malloc(bytes ? bytes : 1);
}

void *pxi_calloc(size_t n, size_t bytes)
{
    if (should_fail())
        return NULL;
    return calloc(n ? n : 1, bytes ? bytes : 1);
}

void pxi_free(void *p)
{
    free(p);
}

void pxi_alloc_thread_warm(void)
{
    /* volatile: a malloc whose block is freed unread may be elided by the compiler */
    void *volatile p = malloc(64);
    free(p);
}

void *pxi_malloc_aligned(size_t bytes, size_t align)
{
    if (should_fail())
        return NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (align & (align - 1)) /* aligned_alloc needs a power of two; internal misuse, no crash */
        return NULL;
    /* aligned_alloc needs a size that is a multiple of the alignment. */
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded < bytes)
        return NULL;
    return aligned_alloc(align, rounded ? rounded : align);
}

void pxi_free_aligned(void *p)
{
    free(p);
}

char *pxi_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = pxi_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
