/*
 * parex/kernel_cuda_team.h - the device half of team kernels (PX_TEAM_FOR, PX_TEAM_REDUCE) and
 * the member calls of team bodies under nvcc. Included by parex/team.h under __CUDACC__ only;
 * do not include it directly. C++ and internal (pxi_ / PXI_), like parex/kernel_cuda.h, whose
 * joins, warp shuffles and occupancy helpers it uses.
 *
 * A team on the device (Kokkos' Cuda TeamPolicy):
 *   - block = team: blockDim = (vector_length, team_size); member r is threadIdx.y == r, its
 *     vector lanes are threadIdx.x (a power of two <= 32, so a member's lanes sit in one warp
 *     and a warp holds 32 / vector_length whole members);
 *   - the grid is at most the blocks resident on the device at once (occupancy with the launch's
 *     dynamic shared memory); block b runs the contiguous run of teams pxi_cuda_split(league,
 *     grid, b) in league order, with a __syncthreads between teams (scratch reuse);
 *   - team scratch and then every member's thread scratch live in dynamic shared memory, each
 *     part 64-byte aligned;
 *   - px_team_barrier is __syncthreads; px_team_reduce joins the members' values (vector lane 0's
 *     of each member) in team-rank order: an ordered shuffle tree over the members of each warp,
 *     then the warps' values in warp order by thread 0 through shared memory;
 *   - PX_TEAM_THREAD_FOR gives member r the indices b + r, b + r + team_size, ... (strided, so
 *     consecutive members touch consecutive elements); PX_THREAD_VECTOR_FOR gives lane x the
 *     indices b + x, b + x + vector_length, ...;
 *   - code outside a vector loop runs on every lane of the member (the same values, as Kokkos'
 *     lanes do); a launch reduction takes lane 0's *acc of each member, so each member
 *     contributes once, exactly as a host member does.
 * The launch reduction: each team's value is the px_team_reduce of its members' values; block b
 * joins its teams in league order into partials[b]; the cuda space joins partials in block
 * order on the host. Every join keeps the lower ranks on the left: bitwise reproducible for a
 * fixed device and policy, and a non-commutative join gives the sequential answer.
 *
 * Reducers in bodies: the builtin reducers (px_sum_f64, ...) are host objects the device cannot
 * name. In nvcc's device pass each builtin name stands for a typed device tag
 * (pxi_cuda_dev_reducer<T, OP>, derived from px_reducer, so host code of that pass still type
 * checks), and px_team_reduce on the device joins with the tag's op; a reducer whose value type
 * differs from the values' is a compile error. Custom reducers cannot be named in device code
 * (nvcc: "identifier ... is undefined in device code"): combine their values through team
 * scratch and px_team_barrier, or reduce them as the launch's reducer (PX_TEAM_REDUCE with
 * PX_REDUCER_DEVICE).
 */
#ifndef PAREX_KERNEL_CUDA_TEAM_H
#define PAREX_KERNEL_CUDA_TEAM_H

#if !defined(__CUDACC__) && !defined(PXI_CUDA_EMULATE)
#error "parex/kernel_cuda_team.h is for nvcc; include parex/team.h instead"
#endif

/* The team's dynamic shared memory. PXI_CUDA_EMULATE (tests/cuda/check_cuda_emulated.cpp, which
 * includes this header after parex/kernel_cuda.h) provides pxi_cuda_emulated_shared(). */
#ifdef PXI_CUDA_EMULATE
#define PXI_CUDA_TEAM_SMEM(name) unsigned char *name = pxi_cuda_emulated_shared()
#else
#define PXI_CUDA_TEAM_SMEM(name) extern __shared__ __align__(64) unsigned char name[]
#endif

/* A team launch as the device sees it (filled by spaces/cuda/cuda_team.cu; passed by value). */
struct pxi_cuda_team {
    int64_t league;          /* teams, >= 1 */
    unsigned team_size;      /* blockDim.y */
    unsigned vector_length;  /* blockDim.x: a power of two <= 32 */
    unsigned scratch_team;   /* team scratch bytes (multiple of 64) */
    unsigned scratch_thread; /* each member's scratch bytes (multiple of 64) */
    unsigned shmem;          /* dynamic shared bytes: scratch_team + team_size * scratch_thread */
    /* Filled by the PXI_CUDA_TEAM_QUERY phase (cudaFuncGetAttributes of the kernel): */
    int max_threads;      /* maxThreadsPerBlock (registers may bound it below 1024) */
    size_t static_shared; /* sharedSizeBytes: the kernel's own __shared__ arrays */
};

/* ---- member calls in team bodies (host pass: the library's functions) ----------------------- */

static PXI_HD __forceinline__ int64_t pxi_team_league_rank_hd(const px_team *t)
{
    return t->pxi_league_rank;
}
static PXI_HD __forceinline__ int64_t pxi_team_league_size_hd(const px_team *t)
{
    return t->pxi_league_size;
}
static PXI_HD __forceinline__ int pxi_team_rank_hd(const px_team *t)
{
    return t->pxi_team_rank;
}
static PXI_HD __forceinline__ int pxi_team_size_hd(const px_team *t)
{
    return t->pxi_team_size;
}
static PXI_HD __forceinline__ void *pxi_team_scratch_hd(const px_team *t)
{
    return t->pxi_scratch;
}
static PXI_HD __forceinline__ void *pxi_team_thread_scratch_hd(const px_team *t)
{
    return t->pxi_thread_scratch;
}
static PXI_HD __forceinline__ void pxi_team_barrier_hd(const px_team *t)
{
#ifdef __CUDA_ARCH__
    (void)t;
    __syncthreads();
#else
    (px_team_barrier)(t);
#endif
}

/* A builtin reducer as device code names it: value type T, op OP (see the file comment). */
template <class T, int OP> struct pxi_cuda_dev_reducer : px_reducer {
    typedef T value_type;
    enum { op = OP };
};

/* Shuffle down within the lanes of @mask (a partial last warp of the block). */
template <class V>
__device__ __forceinline__ V pxi_cuda_shfl_down_mask(const V &v, unsigned d, unsigned mask)
{
    enum { N = (sizeof(V) + 3) / 4 };
    unsigned w[N];
    w[N - 1] = 0;
    memcpy(w, &v, sizeof(V));
#pragma unroll
    for (int k = 0; k < N; ++k)
        w[k] = __shfl_down_sync(mask, w[k], d);
    V r;
    memcpy(&r, w, sizeof(V));
    return r;
}

/* The members' values (vector lane 0's of each) joined in team-rank order; every thread of the
 * block gets the result. Called by every thread of the block (two __syncthreads). */
template <class V> __device__ V pxi_cuda_team_fold(int op, V v)
{
    __shared__ V vals[33];
    const unsigned vl = blockDim.x, tid = threadIdx.x + blockDim.x * threadIdx.y;
    const unsigned nthreads = blockDim.x * blockDim.y;
    const unsigned lane = tid & 31u, warp = tid >> 5, nwarps = (nthreads + 31u) / 32u;
    const unsigned cnt = nthreads - warp * 32u < 32u ? nthreads - warp * 32u : 32u;
    const unsigned mask = cnt == 32u ? 0xffffffffu : ((1u << cnt) - 1u);
    /* Members of this warp start at lanes 0, vl, 2 vl, ...: a tree of adjacent members, the
     * lower member on the left. */
    for (unsigned d = vl; d < 32u; d <<= 1) {
        V o = pxi_cuda_shfl_down_mask(v, d, mask);
        if ((lane & (2u * d - 1u)) == 0 && lane + d < cnt)
            pxi_cuda_join(op, &v, &o);
    }
    if (lane == 0)
        vals[warp] = v;
    __syncthreads();
    if (tid == 0) {
        V a = vals[0];
        for (unsigned w = 1; w < nwarps; ++w)
            pxi_cuda_join(op, &a, &vals[w]);
        vals[32] = a;
    }
    __syncthreads();
    return vals[32];
}

/* What device code knows of a reducer: a builtin tag's op and value size; op -1 for any other
 * (a custom reducer, which only host functions of an nvcc-compiled file can name). */
template <class R> struct pxi_cuda_red_traits {
    enum { op = -1, size = 0 };
};
template <class T, int OP> struct pxi_cuda_red_traits<pxi_cuda_dev_reducer<T, OP>> {
    enum { op = OP, size = sizeof(T) };
};

/* px_team_reduce in a body: the device joins with the builtin tag's op; the host pass calls the
 * library. The device branch of a call from host code (a custom reducer, or void pointers)
 * never runs: it returns PX_EINVAL. */
template <class R, class V>
static PXI_HD __forceinline__ int pxi_team_reduce_hd(const px_team *t, const R *r, const V *mine,
                                                     V *result)
{
#ifdef __CUDA_ARCH__
    typedef pxi_cuda_red_traits<R> tr;
    static_assert(tr::op < 0 || tr::size == sizeof(V),
                  "px_team_reduce: the reducer's value type differs from the values' type");
    (void)t;
    (void)r;
    if (tr::op < 0)
        return PX_EINVAL;
    *result = pxi_cuda_team_fold((int)tr::op, *mine);
    return PX_OK;
#else
    return (px_team_reduce)(t, r, mine, result);
#endif
}
template <class R>
static PXI_HD __forceinline__ int pxi_team_reduce_hd(const px_team *t, const R *r, const void *mine,
                                                     void *result)
{
#ifdef __CUDA_ARCH__
    (void)t;
    (void)r;
    (void)mine;
    (void)result;
    return PX_EINVAL;
#else
    return (px_team_reduce)(t, r, mine, result);
#endif
}

/* (Under PXI_CUDA_EMULATE parex/team.h defined its host versions first.) */
#undef px_team_league_rank
#undef px_team_league_size
#undef px_team_rank
#undef px_team_size
#undef px_team_scratch
#undef px_team_thread_scratch
#undef px_team_barrier
#define px_team_league_rank(t)     pxi_team_league_rank_hd(t)
#define px_team_league_size(t)     pxi_team_league_size_hd(t)
#define px_team_rank(t)            pxi_team_rank_hd(t)
#define px_team_size(t)            pxi_team_size_hd(t)
#define px_team_scratch(t)         pxi_team_scratch_hd(t)
#define px_team_thread_scratch(t)  pxi_team_thread_scratch_hd(t)
#define px_team_barrier(t)         pxi_team_barrier_hd(t)
#define px_team_reduce(t, r, m, v) pxi_team_reduce_hd((t), (r), (m), (v))

/* The builtin reducers' device tags (device pass only; host code of that pass converts them to
 * const px_reducer * as before). */
#define PXI_CUDA_DEV_REDUCER(name, T, OP)                                                          \
    static __device__ const pxi_cuda_dev_reducer<T, OP> pxi_dev_##name = {};                       \
    static PXI_HD __forceinline__ const pxi_cuda_dev_reducer<T, OP> *pxi_dev_ptr_##name(void)      \
    {                                                                                              \
        return &pxi_dev_##name;                                                                    \
    }
PXI_CUDA_DEV_REDUCER(px_sum_f64, double, PX_REDUCER_SUM)
PXI_CUDA_DEV_REDUCER(px_sum_f32, float, PX_REDUCER_SUM)
PXI_CUDA_DEV_REDUCER(px_sum_i64, int64_t, PX_REDUCER_SUM)
PXI_CUDA_DEV_REDUCER(px_prod_f64, double, PX_REDUCER_PROD)
PXI_CUDA_DEV_REDUCER(px_min_f64, double, PX_REDUCER_MIN)
PXI_CUDA_DEV_REDUCER(px_max_f64, double, PX_REDUCER_MAX)
PXI_CUDA_DEV_REDUCER(px_min_i64, int64_t, PX_REDUCER_MIN)
PXI_CUDA_DEV_REDUCER(px_max_i64, int64_t, PX_REDUCER_MAX)
PXI_CUDA_DEV_REDUCER(px_minloc_f64, px_valloc_f64, PX_REDUCER_MINLOC)
PXI_CUDA_DEV_REDUCER(px_maxloc_f64, px_valloc_f64, PX_REDUCER_MAXLOC)
PXI_CUDA_DEV_REDUCER(px_land, int, PX_REDUCER_LAND)
PXI_CUDA_DEV_REDUCER(px_lor, int, PX_REDUCER_LOR)
PXI_CUDA_DEV_REDUCER(px_band_u64, uint64_t, PX_REDUCER_BAND)
PXI_CUDA_DEV_REDUCER(px_bor_u64, uint64_t, PX_REDUCER_BOR)
#ifdef __CUDA_ARCH__
#define px_sum_f64    (*pxi_dev_ptr_px_sum_f64())
#define px_sum_f32    (*pxi_dev_ptr_px_sum_f32())
#define px_sum_i64    (*pxi_dev_ptr_px_sum_i64())
#define px_prod_f64   (*pxi_dev_ptr_px_prod_f64())
#define px_min_f64    (*pxi_dev_ptr_px_min_f64())
#define px_max_f64    (*pxi_dev_ptr_px_max_f64())
#define px_min_i64    (*pxi_dev_ptr_px_min_i64())
#define px_max_i64    (*pxi_dev_ptr_px_max_i64())
#define px_minloc_f64 (*pxi_dev_ptr_px_minloc_f64())
#define px_maxloc_f64 (*pxi_dev_ptr_px_maxloc_f64())
#define px_land       (*pxi_dev_ptr_px_land())
#define px_lor        (*pxi_dev_ptr_px_lor())
#define px_band_u64   (*pxi_dev_ptr_px_band_u64())
#define px_bor_u64    (*pxi_dev_ptr_px_bor_u64())
#endif

/* ---- kernels -------------------------------------------------------------------------------- */

/* This thread's member of team @lr (see the file comment for the layout). */
__device__ __forceinline__ void pxi_cuda_team_member(px_team *t, const pxi_cuda_team &tp,
                                                     unsigned char *smem)
{
    t->pxi_league_size = tp.league;
    t->pxi_team_rank = (int)threadIdx.y;
    t->pxi_team_size = (int)blockDim.y;
    t->pxi_vector_length = (int)blockDim.x;
    t->pxi_reduce_seq = 0;
    t->pxi_scratch = tp.scratch_team ? smem : NULL;
    t->pxi_thread_scratch =
        tp.scratch_thread ? smem + tp.scratch_team + (size_t)threadIdx.y * tp.scratch_thread : NULL;
    t->pxi_sync = NULL;
}

template <class K, class Args>
__global__ void pxi_cuda_kteam_for(const Args a, const pxi_cuda_team tp)
{
    PXI_CUDA_TEAM_SMEM(pxi_team_smem);
    px_team t;
    pxi_cuda_team_member(&t, tp, pxi_team_smem);
    int64_t b, e;
    pxi_cuda_split(tp.league, gridDim.x, blockIdx.x, &b, &e);
    for (int64_t lr = b; lr < e; ++lr) {
        t.pxi_league_rank = lr;
        K::team(&t, &a);
        __syncthreads(); /* the next team may overwrite scratch */
    }
}

template <class K, class Args, class V>
__global__ void pxi_cuda_kteam_reduce(const Args a, const pxi_cuda_team tp, int op, const V ident,
                                      V *partials)
{
    PXI_CUDA_TEAM_SMEM(pxi_team_smem);
    px_team t;
    pxi_cuda_team_member(&t, tp, pxi_team_smem);
    int64_t b, e;
    pxi_cuda_split(tp.league, gridDim.x, blockIdx.x, &b, &e);
    V run = ident; /* meaningful on thread 0 */
    for (int64_t lr = b; lr < e; ++lr) {
        t.pxi_league_rank = lr;
        V v = ident;
        K::team(&t, &a, &v);
        /* The fold's barriers also end the team's use of scratch. */
        V tv = pxi_cuda_team_fold(op, v);
        if (threadIdx.x == 0 && threadIdx.y == 0)
            pxi_cuda_join(op, &run, &tv);
    }
    if (threadIdx.x == 0 && threadIdx.y == 0)
        partials[blockIdx.x] = run;
}

#ifndef PXI_CUDA_EMULATE
/* ---- host glue (the kernel's translation unit) --------------------------------------------- */

/* QUERY: the kernel's limits into r->team. FOR / REDUCE: raise the kernel's dynamic shared
 * limit when needed, pick the grid (resident blocks, at most one per team and, for REDUCE, per
 * partial), store it in r->grid and launch. */
static inline int pxi_cuda_glue_team(pxi_cuda_run *r, const void *fn, void **params)
{
    pxi_cuda_team *tp = r->team;
    if (!tp)
        return (int)cudaErrorInvalidValue;
    cudaError_t e = pxi_cuda_use_device(r->device);
    if (e != cudaSuccess)
        return (int)e;
    if (r->phase == PXI_CUDA_TEAM_QUERY) {
        cudaFuncAttributes fa;
        e = cudaFuncGetAttributes(&fa, fn);
        if (e == cudaSuccess) {
            tp->max_threads = fa.maxThreadsPerBlock;
            tp->static_shared = fa.sharedSizeBytes;
        }
        return (int)e;
    }
    if (tp->shmem > 48u * 1024u) {
        e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tp->shmem);
        if (e != cudaSuccess)
            return (int)e;
    }
    const int threads = (int)(tp->team_size * tp->vector_length);
    int bps = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fn, threads, tp->shmem);
    if (e != cudaSuccess)
        return (int)e;
    int64_t grid = pxi_cuda_min64(tp->league, (int64_t)(bps > 0 ? bps : 1) * r->sm_count);
    if (r->phase == PXI_CUDA_REDUCE)
        grid = pxi_cuda_min64(grid, r->max_grid);
    if (grid < 1)
        grid = 1;
    r->grid = (int)grid;
    return (int)cudaLaunchKernel(fn, dim3((unsigned)grid), dim3(tp->vector_length, tp->team_size),
                                 params, tp->shmem, r->stream);
}

template <class K, class Args> static int pxi_cuda_glue_team_for(pxi_cuda_run *r)
{
    if (r->phase != PXI_CUDA_FOR && r->phase != PXI_CUDA_TEAM_QUERY)
        return (int)cudaErrorInvalidValue;
    void *params[2] = {(void *)r->args, (void *)r->team};
    return pxi_cuda_glue_team(r, (const void *)&pxi_cuda_kteam_for<K, Args>, params);
}

template <class K, class Args, class V> static int pxi_cuda_glue_team_reduce(pxi_cuda_run *r)
{
    if (r->phase != PXI_CUDA_REDUCE && r->phase != PXI_CUDA_TEAM_QUERY)
        return (int)cudaErrorInvalidValue;
    void *params[5] = {(void *)r->args, (void *)r->team, &r->op, (void *)r->identity, &r->partials};
    return pxi_cuda_glue_team(r, (const void *)&pxi_cuda_kteam_reduce<K, Args, V>, params);
}

/* What parex/team.h's macros expand to under nvcc. */
#define PXI_DEVICE_TEAM_FOR(name, Args)                                                            \
    struct name##_pxtdk {                                                                          \
        static __device__ __forceinline__ void team(const px_team *pxt_, const Args *pxa_)         \
        {                                                                                          \
            name##_pxtbody(pxt_, pxa_);                                                            \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxtdev = {PXI_CUDA_ABI, PX_KERNEL_FOR, PX_VALUE_CUSTOM,   \
                                                   0,                                              \
                                                   &pxi_cuda_glue_team_for<name##_pxtdk, Args>};
#define PXI_DEVICE_TEAM_REDUCE(name, Args, Value)                                                  \
    struct name##_pxtdk {                                                                          \
        static __device__ __forceinline__ void team(const px_team *pxt_, const Args *pxa_,         \
                                                    Value *pxv_)                                   \
        {                                                                                          \
            name##_pxtbody(pxt_, pxa_, pxv_);                                                      \
        }                                                                                          \
    };                                                                                             \
    static const px_kernel_device name##_pxtdev = {                                                \
        PXI_CUDA_ABI, PX_KERNEL_REDUCE, (px_value_type)pxi_cuda_vtype<Value>::value,               \
        pxi_reducer_device_has(pxi_tag<Value>()),                                                  \
        &pxi_cuda_glue_team_reduce<name##_pxtdk, Args, Value>};
#define PXI_DEVICE_TEAM_PTR(name) (&name##_pxtdev)
#endif /* !PXI_CUDA_EMULATE */

#endif /* PAREX_KERNEL_CUDA_TEAM_H */
