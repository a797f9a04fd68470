/*
 * parex/kernel_cuda_md.h - the MDRange kernels of the device half (PX_FOR_<N>D, PX_REDUCE_<N>D).
 * Included by parex/kernel_cuda.h only (split from it to keep files small); C++, internal.
 */
#ifndef PAREX_KERNEL_CUDA_MD_H
#define PAREX_KERNEL_CUDA_MD_H

/* ---- MDRange kernels (PX_FOR_<N>D, PX_REDUCE_<N>D) --------------------------------------------
 *
 * One block per tile (for: grid-stride over tiles; reduce: each block a contiguous run of tiles,
 * pxi_cuda_split). Inside a tile thread (x, y, z) starts at lo + (x, y, z) along dim[0..2] and
 * steps by the block's extents there, and by 1 along the other dimensions, walking its points in
 * the iterate order, so a warp's consecutive lanes touch consecutive points of the fastest
 * dimension (coalesced for a view of the matching layout). */

/* Tile t's box [lo, hi). */
__device__ __forceinline__ void pxi_cuda_md_box(const pxi_cuda_md &m, int64_t t, int64_t *lo,
                                                int64_t *hi)
{
    for (int s = 0; s < m.rank; ++s) {
        const int d = m.iterate == PX_ITERATE_RIGHT ? m.rank - 1 - s : s;
        const int64_t c = t % m.ntiles[d];
        t /= m.ntiles[d];
        lo[d] = m.lower[d] + c * m.tile[d];
        const int64_t e = lo[d] + m.tile[d];
        hi[d] = e < m.upper[d] ? e : m.upper[d];
    }
}

/* This thread's coordinates on the block axes; false for the padding threads. */
__device__ __forceinline__ bool pxi_cuda_md_tid(const pxi_cuda_md &m, unsigned *tid)
{
    const unsigned t = threadIdx.x;
    tid[0] = t % m.block[0];
    tid[1] = (t / m.block[0]) % m.block[1];
    tid[2] = t / (m.block[0] * m.block[1]);
    return tid[2] < m.block[2];
}

/* A thread's walk over its points of one tile. */
typedef struct pxi_cuda_md_walk {
    int64_t x[PX_MAX_RANK], start[PX_MAX_RANK], step[PX_MAX_RANK], end[PX_MAX_RANK];
} pxi_cuda_md_walk;

/* Start the walk of box [lo, hi); false when this thread has no point in it. */
__device__ __forceinline__ bool pxi_cuda_md_begin(const pxi_cuda_md &m, const unsigned *tid,
                                                  const int64_t *lo, const int64_t *hi,
                                                  pxi_cuda_md_walk *w)
{
    for (int d = 0; d < m.rank; ++d) {
        w->start[d] = lo[d];
        w->step[d] = 1;
        w->end[d] = hi[d];
    }
    for (int a = 0; a < 3; ++a) {
        const int d = m.dim[a];
        if (d >= 0) {
            w->start[d] = lo[d] + (int64_t)tid[a];
            w->step[d] = (int64_t)m.block[a];
        }
    }
    bool any = true;
    for (int d = 0; d < m.rank; ++d) {
        any = any && w->start[d] < w->end[d];
        w->x[d] = w->start[d];
    }
    return any;
}

/* Step to this thread's next point in the iterate order; false after the last. */
__device__ __forceinline__ bool pxi_cuda_md_next(const pxi_cuda_md &m, pxi_cuda_md_walk *w)
{
    for (int s = 0; s < m.rank; ++s) {
        const int d = m.iterate == PX_ITERATE_RIGHT ? m.rank - 1 - s : s;
        w->x[d] += w->step[d];
        if (w->x[d] < w->end[d])
            return true;
        w->x[d] = w->start[d];
    }
    return false;
}

template <class K, class Args> __global__ void pxi_cuda_kfor_md(const Args a, const pxi_cuda_md m)
{
    unsigned tid[3];
    if (!pxi_cuda_md_tid(m, tid))
        return;
    for (int64_t t = blockIdx.x; t < m.total; t += gridDim.x) {
        int64_t lo[PX_MAX_RANK], hi[PX_MAX_RANK];
        pxi_cuda_md_box(m, t, lo, hi);
        pxi_cuda_md_walk w;
        if (!pxi_cuda_md_begin(m, tid, lo, hi, &w))
            continue;
        do
            K::fold(w.x, &a);
        while (pxi_cuda_md_next(m, &w));
    }
}

/* Block b folds its contiguous run of tiles: each thread its points, tile after tile, from the
 * identity; then the block's threads are joined in thread order (warp trees, then warps in
 * order) into partials[b]. The space joins partials in block order: a fixed order for a fixed
 * device and policy. */
template <class K, class Args, class V>
__global__ void pxi_cuda_kreduce_md(const Args a, const pxi_cuda_md m, int op, const V ident,
                                    V *partials)
{
    __shared__ V warp_vals[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned nwarps = blockDim.x >> 5;
    unsigned tid[3];
    const bool active = pxi_cuda_md_tid(m, tid);
    int64_t t0, t1;
    pxi_cuda_split(m.total, gridDim.x, blockIdx.x, &t0, &t1);
    V v = ident;
    if (active) {
        for (int64_t t = t0; t < t1; ++t) {
            int64_t lo[PX_MAX_RANK], hi[PX_MAX_RANK];
            pxi_cuda_md_box(m, t, lo, hi);
            pxi_cuda_md_walk w;
            if (!pxi_cuda_md_begin(m, tid, lo, hi, &w))
                continue;
            do
                K::fold(w.x, &a, &v);
            while (pxi_cuda_md_next(m, &w));
        }
    }
    pxi_cuda_warp_reduce(op, v, lane);
    if (lane == 0)
        warp_vals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        V u = lane < nwarps ? warp_vals[lane] : ident;
        pxi_cuda_warp_reduce(op, u, lane);
        if (lane == 0)
            partials[blockIdx.x] = u;
    }
}

#endif /* PAREX_KERNEL_CUDA_MD_H */
