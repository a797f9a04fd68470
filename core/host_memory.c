/* core/host_memory.c - the host memory space shared by every host execution space (serial,
 * threads): cache-line aligned blocks and plain copies. Backends point their ops table here
 * (core/registry.h) instead of each carrying a copy. */
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "core/registry.h"

void *pxi_host_malloc(size_t bytes)
{
    return pxi_malloc_aligned(bytes ? bytes : 1, PXI_CACHE_LINE);
}

int pxi_host_free(void *p)
{
    pxi_free_aligned(p);
    return PX_OK;
}

int pxi_host_deep_copy(void *dst, int dst_host, const void *src, int src_host, size_t bytes)
{
    if (!dst_host || !src_host) {
        PXI_ERROR("px_deep_copy: a host space cannot reach device memory");
        return PX_EINVAL;
    }
    memmove(dst, src, bytes);
    return PX_OK;
}
