/*
 * parex/memory.h - memory spaces: allocation and copies (Kokkos::kokkos_malloc and
 * Kokkos::deep_copy on raw buffers).
 *
 * Each execution space owns a memory space: serial and threads share host memory (64-byte
 * aligned), cuda allocates device memory. px_deep_copy moves bytes between any two spaces.
 * Where the pages of a host block land (first touch) and how to initialize data in parallel so
 * that they land near the threads that use them: see px_malloc.
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
 * Allocate @p bytes in the memory space of @p s (Kokkos::kokkos_malloc<MemorySpace>). Host
 * spaces return PX_MALLOC_ALIGNMENT-aligned memory; cuda returns device memory. bytes == 0
 * returns a unique non-NULL block. Tools see allocate_data.
 *
 * Page placement (host spaces). px_malloc does not touch the memory: it comes from the C library
 * (aligned_alloc), and a large block (glibc: above the mmap threshold, 128 KiB at start, raised up
 * to 32 MiB as large blocks are freed) gets fresh pages that Linux places, under its default
 * first-touch policy, on the NUMA node of the thread that first writes each page; a smaller block
 * may reuse heap pages that are already placed. So whoever writes the data first decides where it
 * lives: a serial loop on the main thread (or px_deep_copy, memset, calloc-style zeroing) puts
 * every page on the main thread's node, and the other threads then read across sockets. Initialize
 * instead with a px_parallel_for on the threads space using the same static policy as the kernels
 * that later use the data (the same range and chunk size, e.g. px_range(0, n) both times, and the
 * same PX_NUM_THREADS): a static schedule gives rank r the same contiguous block on every launch
 * (it depends only on the range, the chunk size and the number of ranks), and with PX_BIND=close or
 * spread (the default is close; binding needs hwloc) rank r always runs on the same core, so each
 * rank first-touches the pages it later works on (OpenMP's and Kokkos' first-touch idiom):
 *
 *     double *x = px_malloc(threads, n * sizeof *x);
 *     px_parallel_for(threads, "init", px_range(0, n), &init_x, &args, sizeof args);
 *     px_parallel_for(threads, "axpy", px_range(0, n), &axpy, &args2, sizeof args2);
 *
 * parallel_reduce with a static policy uses the same blocks as parallel_for; a dynamic schedule and
 * parallel_scan do not (chunks go to whichever rank claims them, and scan blocks are weighted
 * towards rank 0), and with PX_BIND=none the OS may move ranks between cores. px_view_alloc
 * (parex/view.h) zeroes a host view this way, with a static parallel_for over its pages, so each
 * page lands near the rank whose block covers it (to within a page at block edges). Device memory
 * (cuda) has no such choice: it lives on the device.
 *
 * @param s      the space owning the memory (not NULL: there is no default here).
 * @param bytes  size in bytes.
 * @return the block, or NULL (no status code; the log says which) when s is NULL, the runtime
 *         is not initialized, s is not available, or memory ran out.
 * Thread-safe.
 */
PX_API void *px_malloc(px_space *s, size_t bytes);

/**
 * Free a block from px_malloc on the same space (Kokkos::kokkos_free). Tools see
 * deallocate_data.
 *
 * @param s  the space the block came from.
 * @param p  the block, or NULL (nothing to do).
 * @return PX_OK (also for p == NULL);
 *         PX_EFAULT   s is NULL;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   s is not available in this runtime lifetime;
 *         PX_ECUDA    a device error (the log names it).
 * Caller must: pass a block of this space, once; not free while a kernel still uses it.
 * Thread-safe.
 */
PX_API int px_free(px_space *s, void *p);

/**
 * Copy @p bytes from @p src in @p src_s to @p dst in @p dst_s, in any direction between host and
 * device; returns when the copy is complete (Kokkos::deep_copy on raw buffers). Tools see
 * begin/end_deep_copy.
 *
 * @param dst_s, src_s  spaces owning dst and src (host memory not from px_malloc counts as the
 *                      memory of any host space).
 * @param bytes         size in bytes; 0 copies nothing.
 * @return PX_OK;
 *         PX_EFAULT   a NULL space, or a NULL pointer with bytes > 0;
 *         PX_ENOTINIT the runtime is not initialized;
 *         PX_ENODEV   a space is not available in this runtime lifetime;
 *         PX_ECUDA    a device error (the log names it).
 * Caller must: pass regions that do not overlap (host-to-host copies tolerate it) and that
 * hold bytes bytes. Thread-safe.
 */
PX_API int px_deep_copy(px_space *dst_s, void *dst, px_space *src_s, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* PAREX_MEMORY_H */
