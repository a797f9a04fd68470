/*
 * spaces/cuda/cuda_team.cu - team launches on the cuda space (parex/team.h): limits, launch
 * configuration, and the host side of team reductions. Host code only: the kernels are
 * instantiated in the translation unit of each PX_TEAM_FOR / PX_TEAM_REDUCE
 * (parex/kernel_cuda_team.h) and reached through px_team_kernel.device->run, as range kernels
 * are (spaces/cuda/cuda_space.cu).
 *
 * A launch: vector_length must be a power of two (a member's lanes in one warp); team_size 0
 * becomes 128 / vector_length threads' worth of members (Kokkos' Cuda team_size_recommended for
 * simple kernels is of that order), clipped to the kernel's threads per block. The kernel's own
 * limits come from a query phase of its glue (cudaFuncGetAttributes): team_size x vector_length
 * above maxThreadsPerBlock, or scratch plus the kernel's static shared memory above the device's
 * opt-in shared memory per block, is PX_EINVAL naming the limit. Reductions: block results
 * (one per block, each the ordered fold of a contiguous run of teams) come back to pinned host
 * memory and are joined here in block order, so the result is bitwise reproducible for a
 * device and policy. Partials buffers come from a free list of buffer pairs (cuda_common.h, as
 * cuda_space.cu's scratch), so concurrent launches on different streams never share one.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "parex/cuda.h"
#include "parex/kernel.h"
#include "parex/team.h"

extern "C" {
#include "base/alloc.h"
#include "base/log.h"
#include "core/registry.h"
}
#include "spaces/cuda/cuda_common.h"
#include "spaces/cuda/cuda_team.h"

namespace
{

/* Members of a team_size 0 launch: this many threads per block, divided by vector_length. */
const int kDefaultTeamThreads = 128;
/* Blocks per multiprocessor a reduce's partials buffer has room for (the hardware's largest
 * resident count is 32). */
const int kPartialBlocksPerSm = 32;

/* Written at initialize / finalize (no launch in flight), read by launches in between. */
struct team_state {
    int device;
    int sm_count;
    int max_threads;      /* cudaDevAttrMaxThreadsPerBlock */
    int max_shared_optin; /* cudaDevAttrMaxSharedMemoryPerBlockOptin */
};

team_state tg;
/* Team reduction partials: sm_count * kPartialBlocksPerSm * PX_REDUCER_MAX_VALUE_BYTES per pair
 * (set at initialize). */
pxi_cuda_buffers partials_pool = PXI_CUDA_BUFFERS_INIT("team reduction partials");

const char *kname(const px_team_kernel *k)
{
    return k->name ? k->name : "(unnamed)";
}

/* Resolve team size, lanes and shared memory of @l for kernel half @d into @tp; checks them
 * against the kernel's and the device's limits. */
int configure(const pxi_launch *l, const px_kernel_device *d, pxi_cuda_team *tp)
{
    const pxi_team_plan *pl = l->team_plan;
    const int vl = pl->vector_length;
    if (vl < 1 || vl > PX_TEAM_MAX_VECTOR_LENGTH || (vl & (vl - 1)) != 0) {
        PXI_ERROR("cuda: team launch \"%s\": vector_length %d is not a power of two up to %d "
                  "(a member's lanes share one warp on the cuda space)",
                  l->label, vl, PX_TEAM_MAX_VECTOR_LENGTH);
        return PX_EINVAL;
    }
    memset(tp, 0, sizeof *tp);
    tp->league = pl->league_size;
    tp->vector_length = (unsigned)vl;
    tp->scratch_team = (unsigned)pl->scratch_team;
    tp->scratch_thread = (unsigned)pl->scratch_thread;
    pxi_cuda_run q;
    memset(&q, 0, sizeof q);
    q.phase = PXI_CUDA_TEAM_QUERY;
    q.device = tg.device;
    q.team = tp;
    cudaError_t e = (cudaError_t)d->run(&q);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "team launch \"%s\": reading kernel '%s''s attributes", l->label,
                             kname(l->team_kernel));
    int cap = tp->max_threads < tg.max_threads ? tp->max_threads : tg.max_threads;
    int ts = l->team->team_size > 0 ? pl->team_size : kDefaultTeamThreads / vl;
    if (l->team->team_size <= 0 && ts * vl > cap)
        ts = cap / vl;
    if (ts < 1)
        ts = 1;
    if ((int64_t)ts * vl > cap) {
        PXI_ERROR("cuda: team launch \"%s\": team_size %d x vector_length %d = %lld threads is "
                  "above kernel '%s''s limit of %d threads per block on device %d "
                  "(maxThreadsPerBlock)",
                  l->label, ts, vl, (long long)ts * vl, kname(l->team_kernel), cap, tg.device);
        return PX_EINVAL;
    }
    tp->team_size = (unsigned)ts;
    size_t shmem = pl->scratch_team + (size_t)ts * pl->scratch_thread;
    if (shmem + tp->static_shared > (size_t)tg.max_shared_optin) {
        PXI_ERROR("cuda: team launch \"%s\": %zu bytes of scratch (team %zu + %d members x %zu) "
                  "plus kernel '%s''s %zu bytes of static shared memory is above device %d's "
                  "limit of %d bytes of shared memory per block (sharedMemPerBlockOptin)",
                  l->label, shmem, pl->scratch_team, ts, pl->scratch_thread, kname(l->team_kernel),
                  tp->static_shared, tg.device, tg.max_shared_optin);
        return PX_EINVAL;
    }
    tp->shmem = (unsigned)shmem;
    return PX_OK;
}

/* A team reduce: block values into partials, back to the host, joined in block order. */
int launch_reduce(const pxi_launch *l, const px_kernel_device *d, pxi_cuda_run *run)
{
    const px_reducer *r = l->reducer;
    int rc = pxi_cuda_check_reducer(l->reducer, d, "team launch", l->label, kname(l->team_kernel));
    if (rc != PX_OK)
        return rc;
    const size_t vs = r->value_size;
    alignas(64) unsigned char ident[PX_REDUCER_MAX_VALUE_BYTES];
    alignas(64) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    r->identity(ident);
    pxi_cuda_buffer *p = pxi_cuda_buffers_get(&partials_pool);
    if (!p)
        return PX_ENOMEM;
    run->phase = PXI_CUDA_REDUCE;
    run->max_grid = (int)(partials_pool.bytes / vs);
    run->op = (int)r->op;
    run->identity = ident;
    run->partials = p->dev;
    cudaError_t e = (cudaError_t)d->run(run);
    if (e != cudaSuccess)
        rc = pxi_cuda_fail(e, "team launch \"%s\" (kernel '%s')", l->label, kname(l->team_kernel));
    if (rc == PX_OK && l->result) {
        e = cudaMemcpyAsync(p->host, p->dev, (size_t)run->grid * vs, cudaMemcpyDeviceToHost,
                            run->stream);
        if (e != cudaSuccess)
            rc = pxi_cuda_fail(e, "team launch \"%s\": copying %d block results", l->label,
                               run->grid);
    }
    /* The result must be in host memory on return, and the partials free for the next launch
     * (also after a failure: an earlier step may still use them). */
    e = cudaStreamSynchronize(run->stream);
    if (rc == PX_OK && e != cudaSuccess)
        rc = pxi_cuda_fail(e, "team launch \"%s\" (kernel '%s')", l->label, kname(l->team_kernel));
    if (rc == PX_OK && l->result) {
        memcpy(acc, ident, vs);
        for (int b = 0; b < run->grid; ++b)
            r->join(acc, (const unsigned char *)p->host + (size_t)b * vs);
        memcpy(l->result, acc, vs);
    }
    pxi_cuda_buffers_put(&partials_pool, p);
    return rc;
}

} // namespace

extern "C" {

int pxi_cuda_team_init(int device, int sm_count)
{
    memset(&tg, 0, sizeof tg);
    tg.device = device;
    tg.sm_count = sm_count > 0 ? sm_count : 1;
    cudaError_t e = cudaDeviceGetAttribute(&tg.max_threads, cudaDevAttrMaxThreadsPerBlock, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&tg.max_shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                   device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        PXI_WARN("cuda: space unavailable: reading device %d's block limits failed: %s (%s)",
                 device, cudaGetErrorString(e), cudaGetErrorName(e));
        return PX_ENODEV;
    }
    partials_pool.bytes =
        (size_t)tg.sm_count * kPartialBlocksPerSm * (size_t)PX_REDUCER_MAX_VALUE_BYTES;
    return PX_OK;
}

void pxi_cuda_team_fini(void)
{
    pxi_cuda_buffers_drain(&partials_pool);
}

int pxi_cuda_team_limits(pxi_team_limits *out)
{
    memset(out, 0, sizeof *out);
    out->max_team_size = tg.max_threads > 0 ? tg.max_threads : 1;
    out->default_team_size =
        kDefaultTeamThreads < out->max_team_size ? kDefaultTeamThreads : out->max_team_size;
    out->max_vector_length = PX_TEAM_MAX_VECTOR_LENGTH;
    out->default_vector_length = 1;
    out->max_scratch = tg.max_shared_optin > 0 ? (size_t)tg.max_shared_optin : 0;
    out->team_limit_why = "the device's threads per block, maxThreadsPerBlock";
    return PX_OK;
}

int pxi_cuda_team_launch(const pxi_launch *l, void *stream)
{
    const px_team_kernel *tk = l->team_kernel;
    if (!tk) {
        PXI_ERROR("cuda: team launch \"%s\": host function bodies (px_parallel_*_team_fn) cannot "
                  "run on the cuda space; use PX_TEAM_FOR/PX_TEAM_REDUCE in a file compiled by "
                  "nvcc",
                  l->label);
        return PX_EINVAL;
    }
    const px_kernel_device *d = tk->device;
    if (!d) {
        PXI_ERROR("cuda: team launch \"%s\": kernel '%s' was compiled without nvcc; compile its "
                  "file with nvcc to run it on the cuda space",
                  l->label, kname(tk));
        return PX_EINVAL;
    }
    if (d->abi != PXI_CUDA_ABI || d->kind != tk->kind || !d->run) {
        PXI_ERROR("cuda: team launch \"%s\": kernel '%s' was built against other parex headers "
                  "(device ABI %#x, expected %#x)",
                  l->label, kname(tk), d->abi, PXI_CUDA_ABI);
        return PX_EINVAL;
    }
    if (l->kind != PX_KERNEL_FOR && l->kind != PX_KERNEL_REDUCE) {
        PXI_ERROR("cuda: team launch \"%s\" of unsupported kind %d", l->label, (int)l->kind);
        return PX_EINVAL;
    }
    pxi_cuda_team tp;
    int rc = configure(l, d, &tp);
    if (rc != PX_OK)
        return rc;
    pxi_cuda_run run;
    memset(&run, 0, sizeof run);
    run.device = tg.device;
    run.sm_count = tg.sm_count;
    run.args = l->ctx;
    run.stream = (cudaStream_t)stream;
    run.team = &tp;
    if (l->kind == PX_KERNEL_REDUCE)
        return launch_reduce(l, d, &run);
    run.phase = PXI_CUDA_FOR;
    cudaError_t e = (cudaError_t)d->run(&run);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "team launch \"%s\" (kernel '%s')", l->label, kname(tk));
    return PX_OK;
}

} /* extern "C" */
