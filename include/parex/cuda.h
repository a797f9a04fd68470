/*
 * parex/cuda.h - what is specific to the Cuda execution space: pinned host memory, the device
 * in use, the space's stream, and the device half of custom reducers.
 *
 * The "cuda" space (px_space_by_name("cuda")) runs PX_FOR / PX_REDUCE / PX_SCAN kernels whose
 * defining file was compiled by nvcc; px_malloc on it returns device memory and px_deep_copy
 * moves bytes between it and any host space. This header adds what Kokkos keeps in
 * Kokkos::Cuda and Kokkos::CudaHostPinnedSpace.
 *
 * Launch semantics on cuda (see also parex/kernel.h): a policy's chunk_size and schedule are
 * accepted and ignored (the GPU's block scheduler balances the load); px_parallel_for returns
 * once the kernel is queued on the space's stream; reduce and scan return with the result in
 * host memory. Reductions are bitwise reproducible on one device: lanes fold consecutive
 * indices, warps and blocks combine in index order, and the block results are joined on the
 * host in order, so a non-commutative join gives the sequential answer, as on the host spaces.
 *
 * Building your own .cu kernels against an installed parex (see tests/cuda/consumer/): compile
 * them with nvcc (C++17 or later, nvcc's default), for the architectures in the package's
 * Parex_CUDA_ARCHITECTURES, and link the shared CUDA runtime, the one libparex uses
 * (CMAKE_CUDA_RUNTIME_LIBRARY Shared; nvcc -cudart shared). Kernels are launched from your
 * translation unit, so each kernel file only needs parex.h.
 *
 * This header compiles in plain C and C++ with or without
 * CUDA: the functions exist when the library was built with CUDA (PX_HAVE_CUDA is 1 in
 * parex/config.h); the macros always exist, and do nothing outside nvcc.
 *
 * Custom reducers on the device. A reducer's join runs on the GPU too, so write it once for
 * host and device and name it in PX_REDUCER_DEVICE, at file scope, before the kernels that fold
 * its value type (one device join per value type per translation unit):
 *
 *     typedef struct { double lo, hi; } range_f64;
 *     static PX_HOST_DEVICE void range_join(void *d, const void *s)
 *     {
 *         range_f64 *a = (range_f64 *)d;
 *         const range_f64 *b = (const range_f64 *)s;
 *         if (b->lo < a->lo) a->lo = b->lo;
 *         if (b->hi > a->hi) a->hi = b->hi;
 *     }
 *     static void range_identity(void *v) { range_f64 r = {HUGE_VAL, -HUGE_VAL}; *(range_f64 *)v =
 * r; } static const px_reducer range_reducer = PX_REDUCER_INIT(range_f64, range_identity,
 * range_join, "range"); PX_REDUCER_DEVICE(range_f64, range_join);
 *
 * T may be any value type, a scalar such as double included (for a custom reducer over it);
 * builtin reducers never use it. The identity runs on the host only (the space passes it to
 * the kernel). On cuda, a launch
 * with a custom reducer whose value type has no PX_REDUCER_DEVICE where the kernel was defined
 * returns PX_EINVAL. Caller must: use one custom reducer per value type with cuda kernels of a
 * translation unit (the device join belongs to the type; the host join to the reducer).
 */
#ifndef PAREX_CUDA_H
#define PAREX_CUDA_H

#include <stddef.h>

#include "parex/config.h"
#include "parex/core.h"
#include "parex/kernel.h"
#include "parex/space.h"

/* Under nvcc, parex/kernel_cuda.h (from kernel.h) already defined both macros. */
#ifndef PX_HOST_DEVICE
/** Marks a function compiled for host and device (`__host__ __device__` under nvcc). */
#define PX_HOST_DEVICE
/** Names the device join of a custom reducer's value type; see the file comment. A no-op (a
 *  harmless declaration that takes the semicolon) outside nvcc. */
#define PX_REDUCER_DEVICE(T, join_fn) extern int pxi_reducer_device_unused_
#endif

#if PX_HAVE_CUDA

#ifdef __cplusplus
extern "C" {
#endif

/** Properties of the device the cuda space runs on (cudaDeviceProp, the fields that matter). */
typedef struct px_cuda_device_info {
    int device_id;                     /**< CUDA ordinal (PX_DEVICE_ID, default 0). */
    char name[256];                    /**< Marketing name, e.g. "NVIDIA H100 80GB HBM3". */
    int cc_major, cc_minor;            /**< Compute capability. */
    int sm_count;                      /**< Streaming multiprocessors. */
    int max_threads_per_sm;            /**< Resident threads per multiprocessor. */
    int max_blocks_per_sm;             /**< Resident blocks per multiprocessor. */
    int warp_size;                     /**< Threads per warp (32). */
    size_t global_mem_bytes;           /**< Device memory. */
    size_t shared_mem_per_block_bytes; /**< Default shared memory limit per block. */
    int l2_cache_bytes;                /**< L2 cache size. */
    int memory_bus_width_bits;         /**< Global memory bus width. */
    int runtime_version;               /**< cudaRuntimeGetVersion, e.g. 13000. */
    int driver_version;                /**< cudaDriverGetVersion. */
} px_cuda_device_info;

/**
 * Describe the device of the cuda space.
 *
 * @param out  receives the properties.
 * @return PX_OK; PX_EFAULT for out NULL; PX_ENOTINIT when the runtime is not initialized;
 *         PX_ENODEV when the cuda space is unavailable (no device: the log said why at
 *         initialize).
 * Thread-safe.
 */
PX_API int px_cuda_device_info_get(px_cuda_device_info *out);

/**
 * Allocate @p bytes of page-locked (pinned) host memory, as Kokkos::CudaHostPinnedSpace does:
 * host code reads and writes it directly, and px_deep_copy and engine copy ops from and to it
 * run at full PCIe/NVLink speed and overlap with kernels. bytes == 0 returns a unique block.
 *
 * @return the block (aligned to at least 256 bytes), or NULL when the runtime is not
 *         initialized, the cuda space is unavailable, or the CUDA runtime failed (logged with
 *         cudaGetErrorString). Thread-safe. Pinning is slow (milliseconds): allocate once and
 *         reuse.
 */
PX_API void *px_cuda_malloc_host(size_t bytes);

/**
 * Free a block from px_cuda_malloc_host.
 * @return PX_OK (also for p NULL); PX_ENOTINIT when the runtime is not initialized; PX_ENODEV
 *         when the cuda space is unavailable; PX_ECUDA when the CUDA runtime rejects p (logged).
 * Caller must: free each block once, before px_finalize, and not while a copy still uses it.
 * Thread-safe.
 */
PX_API int px_cuda_free_host(void *p);

/**
 * The cuda space's own stream (a cudaStream_t, created non-blocking at initialize), on which
 * launches without an engine stream run. Use it to order your own CUDA work (cuBLAS, CUB,
 * kernels launched by hand) with parex launches, like Kokkos::Cuda::cuda_stream().
 *
 * The stream does not synchronize with the legacy default stream (stream 0): after an
 * asynchronous px_parallel_for, order plain cudaMemcpy or <<<...>>> work on this stream, or
 * call px_fence first. px_deep_copy is ordered on it already.
 *
 * @return the stream, or NULL when the runtime is not initialized or the space is
 *         unavailable. Valid until px_finalize. Thread-safe.
 */
PX_API void *px_cuda_stream(void);

#ifdef __cplusplus
}
#endif

#endif /* PX_HAVE_CUDA */
#endif /* PAREX_CUDA_H */
