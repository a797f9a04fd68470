/*
 * parex/kernel_cuda.h - the device half of PX_FOR / PX_REDUCE / PX_SCAN, generated when the
 * defining file is compiled by nvcc. Included by parex/kernel.h under __CUDACC__ only; do not
 * include it directly. Everything here is C++ (nvcc compiles .cu files as C++) and internal
 * (pxi_ / PXI_), except the two public macros PX_HOST_DEVICE and PX_REDUCER_DEVICE, which
 * parex/cuda.h also defines, as no-ops, for plain C compilers.
 *
 * How a launch reaches the GPU. For each kernel NAME the macros generate, in the user's
 * translation unit:
 *   - a tag struct NAME_pxdk whose static __device__ functions call the inlined body
 *     (NAME_pxbody, the same function the host loop calls);
 *   - instantiations of the __global__ templates below for that tag;
 *   - a `px_kernel_device` (NAME_pxdev) with a glue function `run` that picks the launch
 *     configuration from the occupancy API (cached per kernel and device) and launches with
 *     cudaLaunchKernel on the stream the cuda space hands it.
 * The launch therefore happens in the same translation unit, and against the same CUDA runtime,
 * as the kernel's registration: a program may link the CUDA runtime statically or dynamically.
 * The cuda space (spaces/cuda/) owns everything else: device selection, scratch buffers, the
 * final combine of reductions on the host, synchronization and errors.
 *
 * Kernel shapes (Kokkos' CUDA backend does the same jobs with its ParallelFor/Reduce/Scan):
 *   - for: a grid-stride loop, one index per thread per step, so warps read consecutive
 *     elements (coalesced). The grid is capped at the resident blocks of the device.
 *   - reduce: the range is cut into warp tiles of 32 * PXI_CUDA_ITEMS consecutive indices;
 *     each lane folds PXI_CUDA_ITEMS consecutive indices from the identity, a warp combines its
 *     lanes with a shuffle tree in index order, blocks own contiguous runs of tiles and warps
 *     contiguous runs inside them. Block results (one per block, in index order) are combined
 *     on the host by the space. Every join keeps the lower range on the left, so non-commutative
 *     reducers get the sequential answer and the result is bitwise reproducible for a device.
 *   - scan (reduce, then scan): pass 1 is the reduce kernel with the body run as a non-final
 *     pass; pass 2 gives every block its exact prefix (the ordered fold of the block results
 *     before it) and walks the block's range in block-wide tiles: a non-final pass for each
 *     thread's items, an ordered block scan of those sums, then the final pass. The body thus
 *     runs three times per index on cuda (twice non-final, once final).
 *
 * Reducers on the device: builtin reducers (px_sum_f64, px_minloc_f64, ...) combine with native
 * code chosen by the reducer's op for the kernel's value type. A custom reducer needs its join
 * on the device too: write the join once with PX_HOST_DEVICE and name it in PX_REDUCER_DEVICE
 * before the kernels that use it (see parex/cuda.h). The identity is always computed on the host
 * and passed to the kernel.
 */
#ifndef PAREX_KERNEL_CUDA_H
#define PAREX_KERNEL_CUDA_H

#if !defined(__CUDACC__) && !defined(PXI_CUDA_EMULATE)
#error "parex/kernel_cuda.h is for nvcc; include parex/kernel.h instead"
#endif

/* PXI_CUDA_EMULATE: tests/cuda/check_cuda_emulated.cpp compiles the device algorithms below with
 * the host C++ compiler, running each CUDA thread as a pthread, to test them without a GPU.
 * It provides the CUDA built-ins itself and gets no host glue. */
#ifndef PXI_CUDA_EMULATE
#include <cuda_runtime.h>
#endif
#include <stdint.h>
#include <string.h>

#include <atomic>

/* Functions the body and user reducer joins may be compiled for: host and device. */
#define PXI_HD         __host__ __device__
#define PX_HOST_DEVICE __host__ __device__

/* Version of the glue interface between a kernel's translation unit and the cuda space; a
 * kernel built against other headers is refused at launch rather than misread. */
#define PXI_CUDA_ABI 0x50584302u
/* Consecutive indices one thread folds in reduce and scan tiles. */
#define PXI_CUDA_ITEMS 4
/* Devices whose occupancy results a kernel caches (larger ordinals recompute per launch). */
#define PXI_CUDA_MAX_DEVICES 64

/* What the space asks a kernel's glue to launch. */
typedef enum {
    PXI_CUDA_FOR = 1,   /* the grid-stride for kernel */
    PXI_CUDA_REDUCE,    /* block results of a reduce into partials; sets grid */
    PXI_CUDA_SCAN_UP,   /* block sums of a scan (non-final pass) into partials; sets grid */
    PXI_CUDA_SCAN_DOWN, /* final pass of a scan, grid blocks reading the block sums */
    PXI_CUDA_TEAM_QUERY /* team kernels: fill the kernel's limits into r->team, launch nothing */
} pxi_cuda_phase;

/* An MDRange launch as the device sees it (filled by the cuda space from the mdrange policy's
 * tiling and its CUDA block map; passed to the kernels by value). Tiles are numbered in the tile
 * order of the iterate direction; the block's threads are laid out as block[0] x block[1] x
 * block[2] over the dimensions dim[0] (fastest, threadIdx.x order), dim[1], dim[2], on a 1-D block
 * of `threads` threads (the product rounded up to whole warps; the extra threads idle). */
typedef struct pxi_cuda_md {
    int rank;
    int iterate; /* px_iterate */
    int64_t lower[PX_MAX_RANK], upper[PX_MAX_RANK];
    int64_t tile[PX_MAX_RANK], ntiles[PX_MAX_RANK];
    int64_t total;     /* tiles, >= 1 */
    int dim[3];        /* the dimension on block axis 0, 1, 2; -1: none */
    unsigned block[3]; /* threads along each axis */
    unsigned threads;  /* blockDim.x: block[0] * block[1] * block[2] rounded up to 32 */
    int64_t grid;      /* blocks of a for launch (grid-stride over tiles) */
} pxi_cuda_md;

/* One launch request from the cuda space (spaces/cuda/) to a kernel's glue. */
typedef struct pxi_cuda_run {
    int phase;                  /* pxi_cuda_phase */
    int device;                 /* CUDA ordinal the space runs on; the glue makes it current */
    int sm_count;               /* multiprocessors of that device */
    int max_grid;               /* REDUCE/SCAN_UP: capacity of partials, in values (>= 1) */
    int64_t begin, end;         /* the validated range, begin < end */
    const void *args;           /* host copy of ARGS; cudaLaunchKernel copies it into the launch */
    cudaStream_t stream;        /* stream to launch on */
    int op;                     /* px_reducer_op of the reducer */
    const void *identity;       /* host memory: the reducer's identity (value_size bytes) */
    void *partials;             /* device memory: max_grid values */
    int grid;                   /* out for REDUCE/SCAN_UP (blocks used), in for SCAN_DOWN */
    const pxi_cuda_md *md;      /* MDRange kernels (FOR and REDUCE phases): the tiling; else NULL */
    struct pxi_cuda_team *team; /* team kernels (parex/kernel_cuda_team.h); else NULL */
} pxi_cuda_run;

/* The device half of a px_kernel (kernel.h declares the type). Read-only, static storage. */
struct px_kernel_device {
    uint32_t abi;                /* PXI_CUDA_ABI */
    px_kernel_kind kind;         /* matches the px_kernel */
    px_value_type value_type;    /* builtin type of VALUE, PX_VALUE_CUSTOM otherwise or for for */
    int has_device_join;         /* a PX_REDUCER_DEVICE join for VALUE was visible */
    int (*run)(pxi_cuda_run *r); /* launch one phase; returns a cudaError_t */
};

/* ---- value types and joins ------------------------------------------------------------- */

/* Which px_value_type a C type is, so the space can refuse a builtin reducer whose value type
 * differs from the kernel's (px_sum_i64 on a double kernel has the right size and the wrong
 * bits). 64-bit integers are matched by size and signedness, whatever their spelling. */
template <class V> struct pxi_cuda_vtype {
    enum { value = PX_VALUE_CUSTOM };
};
template <> struct pxi_cuda_vtype<double> {
    enum { value = PX_VALUE_F64 };
};
template <> struct pxi_cuda_vtype<float> {
    enum { value = PX_VALUE_F32 };
};
template <> struct pxi_cuda_vtype<int> {
    enum { value = PX_VALUE_INT };
};
template <> struct pxi_cuda_vtype<long> {
    enum { value = sizeof(long) == 8 ? PX_VALUE_I64 : PX_VALUE_CUSTOM };
};
template <> struct pxi_cuda_vtype<long long> {
    enum { value = sizeof(long long) == 8 ? PX_VALUE_I64 : PX_VALUE_CUSTOM };
};
template <> struct pxi_cuda_vtype<unsigned long> {
    enum { value = sizeof(unsigned long) == 8 ? PX_VALUE_U64 : PX_VALUE_CUSTOM };
};
template <> struct pxi_cuda_vtype<unsigned long long> {
    enum { value = sizeof(unsigned long long) == 8 ? PX_VALUE_U64 : PX_VALUE_CUSTOM };
};
template <> struct pxi_cuda_vtype<px_valloc_f64> {
    enum { value = PX_VALUE_VALLOC_F64 };
};

/* Native joins of the builtin reducers, the same expressions as core/reducer.c: min/max keep
 * dst on ties, minloc/maxloc let the lower index win ties. The space only launches (op, type)
 * pairs listed in spaces/cuda (pxi_cuda_builtin_ok); other ops leave dst unchanged. */
template <class T> __device__ __forceinline__ void pxi_cuda_arith_join(int op, T *d, const T *s)
{
    const T a = *d, b = *s;
    switch (op) {
    case PX_REDUCER_SUM:
        *d = a + b;
        break;
    case PX_REDUCER_PROD:
        *d = a * b;
        break;
    case PX_REDUCER_MIN:
        *d = (b < a) ? b : a;
        break;
    case PX_REDUCER_MAX:
        *d = (b > a) ? b : a;
        break;
    default:
        break;
    }
}
template <class T> __device__ __forceinline__ void pxi_cuda_bits_join(int op, T *d, const T *s)
{
    /* Integer sums and products wrap (computed unsigned), as core/reducer.c does. */
    typedef unsigned long long U;
    const T a = *d, b = *s;
    switch (op) {
    case PX_REDUCER_SUM:
        *d = (T)((U)a + (U)b);
        break;
    case PX_REDUCER_PROD:
        *d = (T)((U)a * (U)b);
        break;
    case PX_REDUCER_MIN:
        *d = (b < a) ? b : a;
        break;
    case PX_REDUCER_MAX:
        *d = (b > a) ? b : a;
        break;
    case PX_REDUCER_LAND:
        *d = (a && b) ? 1 : 0;
        break;
    case PX_REDUCER_LOR:
        *d = (a || b) ? 1 : 0;
        break;
    case PX_REDUCER_BAND:
        *d = a & b;
        break;
    case PX_REDUCER_BOR:
        *d = a | b;
        break;
    default:
        break;
    }
}
template <class V> __device__ __forceinline__ void pxi_cuda_builtin_join(int, V *, const V *)
{
    /* A custom value type never reaches here with a builtin op: the space refuses the launch. */
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, double *d, const double *s)
{
    pxi_cuda_arith_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, float *d, const float *s)
{
    pxi_cuda_arith_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, int *d, const int *s)
{
    pxi_cuda_bits_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, long *d, const long *s)
{
    pxi_cuda_bits_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, long long *d, const long long *s)
{
    pxi_cuda_bits_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, unsigned long *d,
                                                      const unsigned long *s)
{
    pxi_cuda_bits_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, unsigned long long *d,
                                                      const unsigned long long *s)
{
    pxi_cuda_bits_join(op, d, s);
}
__device__ __forceinline__ void pxi_cuda_builtin_join(int op, px_valloc_f64 *d,
                                                      const px_valloc_f64 *s)
{
    if (op == PX_REDUCER_MINLOC) {
        if (s->val < d->val || (s->val == d->val && s->loc < d->loc))
            *d = *s;
    } else if (op == PX_REDUCER_MAXLOC) {
        if (s->val > d->val || (s->val == d->val && s->loc < d->loc))
            *d = *s;
    }
}

/* Custom joins, found by argument-dependent lookup on pxi_tag<V> at the kernel's point of
 * instantiation. PX_REDUCER_DEVICE adds a non-template overload for its type, which wins over
 * these fallbacks. pxi_reducer_device_has tells the space (at launch) whether one was visible
 * where the kernel was defined. */
template <class V> struct pxi_tag {
};
template <class V>
__device__ __forceinline__ void pxi_reducer_device_join(pxi_tag<V>, V *, const V *)
{
}
template <class V> constexpr int pxi_reducer_device_has(pxi_tag<V>)
{
    return 0;
}

/*
 * PX_REDUCER_DEVICE(T, join_fn): make the custom reducer join @join_fn (a PX_HOST_DEVICE
 * function with the px_reducer_join_fn signature) the device join for value type T in this
 * translation unit. Write it at file scope, after join_fn and before the kernels folding T.
 * One device join per value type per translation unit.
 */
#define PX_REDUCER_DEVICE(T, join_fn)                                                              \
    static __device__ __forceinline__ void pxi_reducer_device_join(pxi_tag<T>, T *pxd_,            \
                                                                   const T *pxs_)                  \
    {                                                                                              \
        join_fn(pxd_, pxs_);                                                                       \
    }                                                                                              \
    static constexpr int pxi_reducer_device_has(pxi_tag<T>)                                        \
    {                                                                                              \
        return 1;                                                                                  \
    }                                                                                              \
    extern int pxi_reducer_device_unused_

template <class V> __device__ __forceinline__ void pxi_cuda_join(int op, V *d, const V *s)
{
    if (op == PX_REDUCER_CUSTOM)
        pxi_reducer_device_join(pxi_tag<V>(), d, s);
    else
        pxi_cuda_builtin_join(op, d, s);
}

/* ---- warp primitives on any trivially copyable value ----------------------------------------- */

enum { PXI_SHFL_DOWN, PXI_SHFL_UP, PXI_SHFL_IDX };

/* Shuffle a value of any size as 32-bit words (64 words at most: PX_REDUCER_MAX_VALUE_BYTES). */
template <class V, int Mode> __device__ __forceinline__ V pxi_cuda_shfl(const V &v, unsigned arg)
{
    enum { N = (sizeof(V) + 3) / 4 };
    unsigned w[N];
    w[N - 1] = 0;
    memcpy(w, &v, sizeof(V));
#pragma unroll
    for (int k = 0; k < N; ++k) {
        if (Mode == PXI_SHFL_DOWN)
            w[k] = __shfl_down_sync(0xffffffffu, w[k], arg);
        else if (Mode == PXI_SHFL_UP)
            w[k] = __shfl_up_sync(0xffffffffu, w[k], arg);
        else
            w[k] = __shfl_sync(0xffffffffu, w[k], (int)arg);
    }
    V r;
    memcpy(&r, w, sizeof(V));
    return r;
}

/* Ordered warp reduction: lane 0 ends with v_0 (+) v_1 (+) ... (+) v_31, combined as a balanced
 * tree of adjacent pairs, so the lower lane is always on the left. */
template <class V> __device__ __forceinline__ void pxi_cuda_warp_reduce(int op, V &v, unsigned lane)
{
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        V o = pxi_cuda_shfl<V, PXI_SHFL_DOWN>(v, d);
        if ((lane & (2 * d - 1)) == 0)
            pxi_cuda_join(op, &v, &o);
    }
}

/* Ordered inclusive warp scan: lane j ends with v_0 (+) ... (+) v_j. */
template <class V> __device__ __forceinline__ void pxi_cuda_warp_scan(int op, V &v, unsigned lane)
{
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        V o = pxi_cuda_shfl<V, PXI_SHFL_UP>(v, d);
        if (lane >= d) {
            pxi_cuda_join(op, &o, &v);
            v = o;
        }
    }
}

/* Part @k of [0, n) cut into @parts nearly equal runs (the first n % parts one longer). */
__device__ __forceinline__ void pxi_cuda_split(int64_t n, int64_t parts, int64_t k, int64_t *b,
                                               int64_t *e)
{
    const int64_t q = n / parts, r = n % parts;
    *b = k * q + (k < r ? k : r);
    *e = *b + q + (k < r ? 1 : 0);
}

/* ---- kernels ------------------------------------------------------------------------------- */

/* Grid-stride for: K::fold(i, &a) for every i in [begin, begin + n). */
template <class K, class Args> __global__ void pxi_cuda_kfor(const Args a, int64_t begin, int64_t n)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride)
        K::fold(begin + k, &a);
}

/* Warp tile: 32 lanes times PXI_CUDA_ITEMS consecutive indices. */
#define PXI_CUDA_TILE ((int64_t)32 * PXI_CUDA_ITEMS)

/* Fold the PXI_CUDA_ITEMS indices at offset @off (relative to begin) into v, in order. */
template <class K, class Args, class V>
__device__ __forceinline__ void pxi_cuda_fold_items(const Args *a, int64_t begin, int64_t n,
                                                    int64_t off, V *v)
{
    if (off + PXI_CUDA_ITEMS <= n) {
#pragma unroll
        for (int k = 0; k < PXI_CUDA_ITEMS; ++k)
            K::fold(begin + off + k, a, v);
    } else {
        for (int k = 0; k < PXI_CUDA_ITEMS; ++k)
            if (off + k < n)
                K::fold(begin + off + k, a, v);
    }
}

/* Reduce (and pass 1 of scan): block b writes the ordered fold of its contiguous run of warp
 * tiles to partials[b]. blockDim.x is a multiple of 32, at most 1024. */
template <class K, class Args, class V>
__global__ void pxi_cuda_kreduce(const Args a, int64_t begin, int64_t end, int op, const V ident,
                                 V *partials)
{
    __shared__ V warp_vals[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned nwarps = blockDim.x >> 5;
    const int64_t n = end - begin;
    const int64_t ntiles = n / PXI_CUDA_TILE + (n % PXI_CUDA_TILE != 0);
    int64_t t0, t1, w0, w1;
    pxi_cuda_split(ntiles, gridDim.x, blockIdx.x, &t0, &t1);
    pxi_cuda_split(t1 - t0, nwarps, warp, &w0, &w1);
    V acc = ident; /* meaningful on lane 0 */
    for (int64_t t = t0 + w0; t < t0 + w1; ++t) {
        V v = ident;
        pxi_cuda_fold_items<K>(&a, begin, n, t * PXI_CUDA_TILE + (int64_t)lane * PXI_CUDA_ITEMS,
                               &v);
        pxi_cuda_warp_reduce(op, v, lane);
        if (lane == 0)
            pxi_cuda_join(op, &acc, &v);
    }
    if (lane == 0)
        warp_vals[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        V v = lane < nwarps ? warp_vals[lane] : ident;
        pxi_cuda_warp_reduce(op, v, lane);
        if (lane == 0)
            partials[blockIdx.x] = v;
    }
}

/* Scan pass 2: block b starts from the ordered fold of partials[0..b) and walks its run of warp
 * tiles (the same split as pass 1) nwarps tiles at a time. */
template <class K, class Args, class V>
__global__ void pxi_cuda_kscan(const Args a, int64_t begin, int64_t end, int op, const V ident,
                               const V *partials)
{
    __shared__ V warp_vals[32];
    __shared__ V carry;
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned nwarps = blockDim.x >> 5;
    const int64_t n = end - begin;
    const int64_t ntiles = n / PXI_CUDA_TILE + (n % PXI_CUDA_TILE != 0);
    int64_t t0, t1;
    pxi_cuda_split(ntiles, gridDim.x, blockIdx.x, &t0, &t1);

    if (warp == 0) {
        V acc = ident;
        for (unsigned base = 0; base < blockIdx.x; base += 32) {
            V v = base + lane < blockIdx.x ? partials[base + lane] : ident;
            pxi_cuda_warp_reduce(op, v, lane);
            if (lane == 0)
                pxi_cuda_join(op, &acc, &v);
        }
        if (lane == 0)
            carry = acc;
    }
    __syncthreads();

    for (int64_t t = t0; t < t1; t += nwarps) {
        const int64_t wt = t + warp;
        const int64_t off = wt * PXI_CUDA_TILE + (int64_t)lane * PXI_CUDA_ITEMS;
        const bool active = wt < t1;
        V s = ident;
        if (active)
            pxi_cuda_fold_items<typename K::sum_pass>(&a, begin, n, off, &s);
        pxi_cuda_warp_scan(op, s, lane);
        V excl = pxi_cuda_shfl<V, PXI_SHFL_UP>(s, 1);
        if (lane == 0)
            excl = ident;
        if (lane == 31)
            warp_vals[warp] = s;
        __syncthreads();
        if (warp == 0) {
            /* Every lane reads carry before the shuffles below; lane 0 writes it only after
             * them, and __shfl_sync orders the warp's lanes at each shuffle. */
            V c = carry;
            V v = lane < nwarps ? warp_vals[lane] : ident;
            pxi_cuda_warp_scan(op, v, lane);
            V before = pxi_cuda_shfl<V, PXI_SHFL_UP>(v, 1);
            const V tile_total = pxi_cuda_shfl<V, PXI_SHFL_IDX>(v, nwarps - 1);
            V wp = c;
            if (lane > 0)
                pxi_cuda_join(op, &wp, &before);
            if (lane < nwarps)
                warp_vals[lane] = wp;
            if (lane == 0) {
                pxi_cuda_join(op, &c, &tile_total);
                carry = c;
            }
        }
        __syncthreads();
        if (active) {
            V p = warp_vals[warp];
            pxi_cuda_join(op, &p, &excl);
            if (off + PXI_CUDA_ITEMS <= n) {
#pragma unroll
                for (int k = 0; k < PXI_CUDA_ITEMS; ++k)
                    K::scan(begin + off + k, &a, &p, 1);
            } else {
                for (int k = 0; k < PXI_CUDA_ITEMS; ++k)
                    if (off + k < n)
                        K::scan(begin + off + k, &a, &p, 1);
            }
        }
        __syncthreads();
    }
}

#include "parex/kernel_cuda_md.h" /* MDRange kernels */

#ifndef PXI_CUDA_EMULATE
/* ---- host glue (runs in the kernel's translation unit) ----------------------------------- */

/* Make @device current on the calling thread (engine workers and user threads start on 0). */
static inline cudaError_t pxi_cuda_use_device(int device)
{
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e == cudaSuccess && cur != device)
        e = cudaSetDevice(device);
    return e;
}

/* Block size with the best occupancy for @fn (multiple of 32, <= 1024) and how many such blocks
 * are resident per multiprocessor, cached per device in @cache as (block << 8 | blocks). The
 * values are a pure function of kernel and device, so racing threads store the same word and
 * relaxed order is enough. */
static inline cudaError_t pxi_cuda_config(const void *fn, std::atomic<int> *cache, int device,
                                          int *block, int *blocks_per_sm)
{
    int packed = (device >= 0 && device < PXI_CUDA_MAX_DEVICES)
                     ? cache[device].load(std::memory_order_relaxed)
                     : 0;
    if (packed == 0) {
        int min_grid = 0, b = 0, bps = 0;
        cudaError_t e = cudaOccupancyMaxPotentialBlockSize(&min_grid, &b, fn, 0, 1024);
        if (e != cudaSuccess)
            return e;
        b = b / 32 * 32;
        if (b < 32)
            b = 32;
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fn, b, 0);
        if (e != cudaSuccess)
            return e;
        if (bps < 1)
            bps = 1;
        if (bps > 255)
            bps = 255;
        packed = (b << 8) | bps;
        if (device >= 0 && device < PXI_CUDA_MAX_DEVICES)
            cache[device].store(packed, std::memory_order_relaxed);
    }
    *block = packed >> 8;
    *blocks_per_sm = packed & 255;
    return cudaSuccess;
}

static inline int64_t pxi_cuda_min64(int64_t x, int64_t y)
{
    return x < y ? x : y;
}

template <class K, class Args> static int pxi_cuda_glue_for(pxi_cuda_run *r)
{
    static std::atomic<int> cache[PXI_CUDA_MAX_DEVICES];
    const void *fn = (const void *)&pxi_cuda_kfor<K, Args>;
    int block = 0, bps = 0;
    cudaError_t e = pxi_cuda_use_device(r->device);
    if (e == cudaSuccess)
        e = pxi_cuda_config(fn, cache, r->device, &block, &bps);
    if (e != cudaSuccess)
        return (int)e;
    int64_t n = r->end - r->begin;
    int64_t grid = pxi_cuda_min64(n / block + (n % block != 0), (int64_t)bps * r->sm_count);
    if (grid < 1)
        grid = 1;
    void *params[3] = {(void *)r->args, &r->begin, &n};
    return (int)cudaLaunchKernel(fn, dim3((unsigned)grid), dim3((unsigned)block), params, 0,
                                 r->stream);
}

/* Pass 1 of reduce and scan: picks the grid (at most one block per max_grid partial, per
 * resident block, and per warp tile per warp) and stores it in r->grid. */
template <class K, class Args, class V>
static int pxi_cuda_glue_partials(pxi_cuda_run *r, std::atomic<int> *cache)
{
    const void *fn = (const void *)&pxi_cuda_kreduce<K, Args, V>;
    int block = 0, bps = 0;
    cudaError_t e = pxi_cuda_use_device(r->device);
    if (e == cudaSuccess)
        e = pxi_cuda_config(fn, cache, r->device, &block, &bps);
    if (e != cudaSuccess)
        return (int)e;
    const int64_t n = r->end - r->begin;
    const int64_t ntiles = n / PXI_CUDA_TILE + (n % PXI_CUDA_TILE != 0);
    const int64_t wpb = block / 32;
    int64_t grid = pxi_cuda_min64(ntiles / wpb + (ntiles % wpb != 0), (int64_t)bps * r->sm_count);
    grid = pxi_cuda_min64(grid, r->max_grid);
    if (grid < 1)
        grid = 1;
    r->grid = (int)grid;
    void *params[6] = {(void *)r->args, &r->begin,           &r->end,
                       &r->op,          (void *)r->identity, &r->partials};
    return (int)cudaLaunchKernel(fn, dim3((unsigned)grid), dim3((unsigned)block), params, 0,
                                 r->stream);
}

template <class K, class Args, class V> static int pxi_cuda_glue_reduce(pxi_cuda_run *r)
{
    static std::atomic<int> cache[PXI_CUDA_MAX_DEVICES];
    if (r->phase != PXI_CUDA_REDUCE)
        return (int)cudaErrorInvalidValue;
    return pxi_cuda_glue_partials<K, Args, V>(r, cache);
}

template <class K, class Args, class V> static int pxi_cuda_glue_scan(pxi_cuda_run *r)
{
    static std::atomic<int> cache_up[PXI_CUDA_MAX_DEVICES];
    static std::atomic<int> cache_down[PXI_CUDA_MAX_DEVICES];
    if (r->phase == PXI_CUDA_SCAN_UP)
        return pxi_cuda_glue_partials<typename K::sum_pass, Args, V>(r, cache_up);
    if (r->phase != PXI_CUDA_SCAN_DOWN || r->grid < 1)
        return (int)cudaErrorInvalidValue;
    const void *fn = (const void *)&pxi_cuda_kscan<K, Args, V>;
    int block = 0, bps = 0;
    cudaError_t e = pxi_cuda_use_device(r->device);
    if (e == cudaSuccess)
        e = pxi_cuda_config(fn, cache_down, r->device, &block, &bps);
    if (e != cudaSuccess)
        return (int)e;
    void *params[6] = {(void *)r->args, &r->begin,           &r->end,
                       &r->op,          (void *)r->identity, &r->partials};
    return (int)cudaLaunchKernel(fn, dim3((unsigned)r->grid), dim3((unsigned)block), params, 0,
                                 r->stream);
}

/* MDRange glue: FOR launches m->grid blocks of m->threads threads; REDUCE picks a grid of at most
 * one block per tile, per max_grid partial and 16 per multiprocessor, and stores it in r->grid. */
template <class K, class Args> static int pxi_cuda_glue_for_md(pxi_cuda_run *r)
{
    const pxi_cuda_md *m = r->md;
    if (!m || r->phase != PXI_CUDA_FOR || m->threads < 32 || m->threads > 1024)
        return (int)cudaErrorInvalidValue;
    const void *fn = (const void *)&pxi_cuda_kfor_md<K, Args>;
    cudaError_t e = pxi_cuda_use_device(r->device);
    if (e != cudaSuccess)
        return (int)e;
    int64_t grid = m->grid < 1 ? 1 : m->grid;
    void *params[2] = {(void *)r->args, (void *)m};
    return (int)cudaLaunchKernel(fn, dim3((unsigned)grid), dim3(m->threads), params, 0, r->stream);
}

template <class K, class Args, class V> static int pxi_cuda_glue_reduce_md(pxi_cuda_run *r)
{
    const pxi_cuda_md *m = r->md;
    if (!m || r->phase != PXI_CUDA_REDUCE || m->threads < 32 || m->threads > 1024)
        return (int)cudaErrorInvalidValue;
    const void *fn = (const void *)&pxi_cuda_kreduce_md<K, Args, V>;
    cudaError_t e = pxi_cuda_use_device(r->device);
    if (e != cudaSuccess)
        return (int)e;
    int64_t grid = pxi_cuda_min64(m->total, (int64_t)r->max_grid);
    grid = pxi_cuda_min64(grid, (int64_t)16 * (r->sm_count > 0 ? r->sm_count : 1));
    if (grid < 1)
        grid = 1;
    r->grid = (int)grid;
    void *params[5] = {(void *)r->args, (void *)m, &r->op, (void *)r->identity, &r->partials};
    return (int)cudaLaunchKernel(fn, dim3((unsigned)grid), dim3(m->threads), params, 0, r->stream);
}

/* ---- what kernel.h's macros expand to under nvcc -------------------------------------------- */

#define PXI_DEVICE_FOR(name, Args)                                                                 \
    struct name##_pxdk {                                                                           \
        static __device__ __forceinline__ void fold(int64_t pxi_, const Args *pxa_)                \
        {                                                                                          \
            name##_pxbody(pxi_, pxa_);                                                             \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxdev = {PXI_CUDA_ABI, PX_KERNEL_FOR, PX_VALUE_CUSTOM, 0, \
                                                  &pxi_cuda_glue_for<name##_pxdk, Args>};
#define PXI_DEVICE_FOR_PTR(name) (&name##_pxdev)

#define PXI_DEVICE_REDUCE(name, Args, Value)                                                       \
    struct name##_pxdk {                                                                           \
        static __device__ __forceinline__ void fold(int64_t pxi_, const Args *pxa_, Value *pxv_)   \
        {                                                                                          \
            name##_pxbody(pxi_, pxa_, pxv_);                                                       \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxdev = {                                                 \
        PXI_CUDA_ABI, PX_KERNEL_REDUCE, (px_value_type)pxi_cuda_vtype<Value>::value,               \
        pxi_reducer_device_has(pxi_tag<Value>()),                                                  \
        &pxi_cuda_glue_reduce<name##_pxdk, Args, Value>};
#define PXI_DEVICE_REDUCE_PTR(name) (&name##_pxdev)

#define PXI_DEVICE_SCAN(name, Args, Value)                                                         \
    struct name##_pxdk {                                                                           \
        struct sum_pass {                                                                          \
            static __device__ __forceinline__ void fold(int64_t pxi_, const Args *pxa_,            \
                                                        Value *pxv_)                               \
            {                                                                                      \
                name##_pxbody(pxi_, pxa_, pxv_, 0);                                                \
            }                                                                                      \
        };                                                                                         \
        static __device__ __forceinline__ void scan(int64_t pxi_, const Args *pxa_, Value *pxv_,   \
                                                    int pxf_)                                      \
        {                                                                                          \
            name##_pxbody(pxi_, pxa_, pxv_, pxf_);                                                 \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxdev = {                                                 \
        PXI_CUDA_ABI, PX_KERNEL_SCAN, (px_value_type)pxi_cuda_vtype<Value>::value,                 \
        pxi_reducer_device_has(pxi_tag<Value>()), &pxi_cuda_glue_scan<name##_pxdk, Args, Value>};
#define PXI_DEVICE_SCAN_PTR(name) (&name##_pxdev)
/* MDRange kernels: the tag unpacks the point's coordinates into the body's named indices. */
#define PXI_MD_X2(x) x[0], x[1]
#define PXI_MD_X3(x) PXI_MD_X2(x), x[2]
#define PXI_MD_X4(x) PXI_MD_X3(x), x[3]
#define PXI_MD_X5(x) PXI_MD_X4(x), x[4]
#define PXI_MD_X6(x) PXI_MD_X5(x), x[5]
#define PXI_DEVICE_FOR_MD(name, Args, N)                                                           \
    struct name##_pxdk {                                                                           \
        static __device__ __forceinline__ void fold(const int64_t *pxx_, const Args *pxa_)         \
        {                                                                                          \
            name##_pxbody(PXI_MD_X##N(pxx_), pxa_);                                                \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxdev = {PXI_CUDA_ABI, PX_KERNEL_FOR, PX_VALUE_CUSTOM, 0, \
                                                  &pxi_cuda_glue_for_md<name##_pxdk, Args>};
#define PXI_DEVICE_FOR_MD_PTR(name) (&name##_pxdev)
#define PXI_DEVICE_REDUCE_MD(name, Args, Value, N)                                                 \
    struct name##_pxdk {                                                                           \
        static __device__ __forceinline__ void fold(const int64_t *pxx_, const Args *pxa_,         \
                                                    Value *pxv_)                                   \
        {                                                                                          \
            name##_pxbody(PXI_MD_X##N(pxx_), pxa_, pxv_);                                          \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxdev = {                                                 \
        PXI_CUDA_ABI, PX_KERNEL_REDUCE, (px_value_type)pxi_cuda_vtype<Value>::value,               \
        pxi_reducer_device_has(pxi_tag<Value>()),                                                  \
        &pxi_cuda_glue_reduce_md<name##_pxdk, Args, Value>};
#define PXI_DEVICE_REDUCE_MD_PTR(name) (&name##_pxdev)
#endif /* !PXI_CUDA_EMULATE */

#endif /* PAREX_KERNEL_CUDA_H */
