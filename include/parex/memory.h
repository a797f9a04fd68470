/*
 * parex/memory.h - memory spaces: allocation and copies (Kokkos::kokkos_malloc and
 * Kokkos::deep_copy on raw buffers).
 *
 * Each execution space owns a memory space: serial and threads share host memory (64-byte
 * aligned), cuda allocates device memory. px_deep_copy moves bytes between any two spaces.
 */
#ifndef PAREX_MEMORY_H
#define PAREX_MEMORY_H

#include <stddef.h>

#include "parex/core.h"
#include "parex/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Alignment of every px_malloc block, in bytes (one cache line). */
#define PX_MALLOC_ALIGNMENT 64

/**
 * Allocate @p bytes in the memory space of @p s. Host spaces return PX_MALLOC_ALIGNMENT-aligned
 * memory; cuda returns device memory. bytes == 0 returns a unique non-NULL block.
 * @return the block, or NULL when s is NULL, the runtime is not initialized, or memory ran out
 *         (the log says which). Thread-safe. Tools see allocate_data.
 */
PX_API void *px_malloc(px_space *s, size_t bytes);

/**
 * Free a block from px_malloc on the same space.
 * @return PX_OK (also for p == NULL); PX_EFAULT for s == NULL; PX_ENOTINIT when not
 *         initialized; PX_ECUDA for a device error.
 * Caller must: pass a block of this space, once; not free while a kernel still uses it.
 * Thread-safe.
 */
PX_API int px_free(px_space *s, void *p);

/**
 * Copy @p bytes from @p src in @p src_s to @p dst in @p dst_s, in any direction between host and
 * device; returns when the copy is complete. Regions must not overlap.
 * @return PX_OK (bytes == 0 copies nothing); PX_EFAULT for a NULL space, or a NULL pointer with
 *         bytes > 0; PX_ENOTINIT when not initialized; PX_ECUDA for a device error.
 * Thread-safe. Tools see begin/end_deep_copy.
 */
PX_API int px_deep_copy(px_space *dst_s, void *dst, px_space *src_s, const void *src,
                        size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_MEMORY_H */
