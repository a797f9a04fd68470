/*
 * spaces/cuda/cuda_space.cu - the Cuda execution space: device selection, device memory, pinned
 * host memory, streams for the engine, and the host side of kernel launches. Host code only:
 * kernels are instantiated in the translation unit that defines them (parex/kernel_cuda.h) and
 * reached through px_kernel.device->run. Compiled by nvcc as C++; everything the rest of parex
 * sees has C linkage (the ops table, the px_cuda_* functions, the registration anchor).
 *
 * Streams. The space owns one non-blocking stream (created at initialize); launches without an
 * engine stream and px_deep_copy run on it, so a deep copy after an asynchronous px_parallel_for
 * sees its results. Engine workers create their own streams (stream_create) and pass them in
 * pxi_launch.stream; px_fence synchronizes the whole device, which covers all of them.
 *
 * Reductions and scans need per-launch scratch: device memory for one value per block and a
 * pinned host mirror to bring them back. Scratch blocks come from a small free list (pool_lock),
 * so concurrent launches on different streams never share one and steady-state launches do no
 * CUDA allocation (cudaMalloc/cudaMallocHost synchronize and cost tens of microseconds).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "parex/cuda.h"
#include "parex/kernel.h"

extern "C" {
#include "base/alloc.h"
#include "base/log.h"
#include "core/registry.h"
}
#include "spaces/cuda/cuda_common.h"
#include "spaces/cuda/cuda_team.h"

#ifndef PXI_CUDA_ARCHS
#define PXI_CUDA_ARCHS "unknown"
#endif

namespace
{

/* Space state: written by cuda_initialize / cuda_finalize, which core calls with no launch in
 * flight; read by ops in between. `up` is the only field read outside that window (by the
 * px_cuda_* calls), hence atomic. It is accessed with the compiler's __atomic builtins (what C11
 * <stdatomic.h> compiles to) rather than C++ atomics, whose out-of-line helpers would be
 * exported from libparex.so in unoptimized builds. */
struct cuda_state {
    int device;
    int sm_count;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int max_grid;        /* values per scratch block: sm_count * max_blocks_per_sm */
    cudaStream_t stream; /* the space's own stream */
    px_cuda_device_info info;
    int up; /* 1 while the space is up (atomic builtins) */
};

cuda_state g;
/* Reduction scratch: max_grid * PX_REDUCER_MAX_VALUE_BYTES per pair (set at initialize). */
pxi_cuda_buffers scratch_pool = PXI_CUDA_BUFFERS_INIT("reduction scratch");

/* A device that is present but cannot be brought up (busy, exclusive-process mode taken, driver
 * trouble) makes the space unavailable rather than failing px_initialize for the host spaces:
 * warn, name the CUDA error, return PX_ENODEV. */
__attribute__((format(printf, 2, 3))) int unusable(cudaError_t e, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    (void)cudaGetLastError();
    PXI_WARN("cuda: space unavailable: %s failed: %s (%s)", what, cudaGetErrorString(e),
             cudaGetErrorName(e));
    return PX_ENODEV;
}

/* Threads start with device 0 current; every entry point that talks to the device first makes
 * the space's device current on the calling thread (cheap when it already is). */
cudaError_t use_device(void)
{
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e == cudaSuccess && cur != g.device)
        e = cudaSetDevice(g.device);
    return e;
}

cudaStream_t stream_or_default(void *s)
{
    return s ? (cudaStream_t)s : g.stream;
}

/* A launch's stream: the engine worker's, else an instance's own (parex/instance.h: its impl is
 * its stream), else the space's. */
cudaStream_t launch_stream(const pxi_launch *l)
{
    return stream_or_default(l->stream ? l->stream : l->space->impl);
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

int read_info(int dev)
{
    px_cuda_device_info *in = &g.info;
    memset(in, 0, sizeof *in);
    in->device_id = dev;
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, dev);
    if (e != cudaSuccess)
        return unusable(e, "cudaGetDeviceProperties(%d)", dev);
    snprintf(in->name, sizeof in->name, "%s", prop.name);
    in->global_mem_bytes = prop.totalGlobalMem;
    in->shared_mem_per_block_bytes = prop.sharedMemPerBlock;
    struct {
        int *dst;
        cudaDeviceAttr attr;
    } attrs[] = {
        {&in->cc_major, cudaDevAttrComputeCapabilityMajor},
        {&in->cc_minor, cudaDevAttrComputeCapabilityMinor},
        {&in->sm_count, cudaDevAttrMultiProcessorCount},
        {&in->max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor},
        {&in->max_blocks_per_sm, cudaDevAttrMaxBlocksPerMultiprocessor},
        {&in->warp_size, cudaDevAttrWarpSize},
        {&in->l2_cache_bytes, cudaDevAttrL2CacheSize},
        {&in->memory_bus_width_bits, cudaDevAttrGlobalMemoryBusWidth},
    };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; ++k) {
        e = cudaDeviceGetAttribute(attrs[k].dst, attrs[k].attr, dev);
        if (e != cudaSuccess)
            return unusable(e, "cudaDeviceGetAttribute(%d, device %d)", (int)attrs[k].attr, dev);
    }
    (void)cudaRuntimeGetVersion(&in->runtime_version);
    (void)cudaDriverGetVersion(&in->driver_version);
    return PX_OK;
}

int cuda_initialize(const pxi_space_config *cfg)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        /* Not an error: this machine has no usable GPU, so the space is simply absent. */
        PXI_INFO("cuda: space unavailable: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found");
        (void)cudaGetLastError();
        return PX_ENODEV;
    }
    int dev = cfg->device_id;
    if (dev < 0)
        dev = 0;
    if (dev >= count) {
        PXI_ERROR("cuda: PX_DEVICE_ID=%d but this machine has %d CUDA device%s (0..%d)", dev, count,
                  count == 1 ? "" : "s", count - 1);
        return PX_EINVAL;
    }
    g.device = dev;
    e = cudaSetDevice(dev);
    if (e != cudaSuccess)
        return unusable(e, "cudaSetDevice(%d)", dev);
    int rc = read_info(dev);
    if (rc != PX_OK)
        return rc;
    g.sm_count = g.info.sm_count > 0 ? g.info.sm_count : 1;
    g.max_threads_per_sm = g.info.max_threads_per_sm > 0 ? g.info.max_threads_per_sm : 1;
    g.max_blocks_per_sm = g.info.max_blocks_per_sm > 0 ? g.info.max_blocks_per_sm : 1;
    g.max_grid = g.sm_count * g.max_blocks_per_sm;
    scratch_pool.bytes = (size_t)g.max_grid * PX_REDUCER_MAX_VALUE_BYTES;
    rc = pxi_cuda_team_init(dev, g.sm_count); /* team launches (cuda_team.cu) */
    if (rc != PX_OK)
        return rc;
    e = cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        g.stream = NULL;
        return unusable(e, "cudaStreamCreateWithFlags on device %d", dev);
    }
    /* Release: px_cuda_* callers that see up == 1 also see the fields above. */
    __atomic_store_n(&g.up, 1, __ATOMIC_RELEASE);
    PXI_INFO("cuda: device %d (%s), %d SMs", dev, g.info.name, g.sm_count);
    return PX_OK;
}

/* The device chosen at initialize (PX_DEVICE_ID, default 0). */
int cuda_device_id(void)
{
    return g.device;
}

int cuda_finalize(void)
{
    int rc = PX_OK;
    __atomic_store_n(&g.up, 0, __ATOMIC_RELAXED);
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        rc = pxi_cuda_fail(e, "cudaDeviceSynchronize at finalize");
    pxi_cuda_buffers_drain(&scratch_pool);
    pxi_cuda_team_fini();
    if (g.stream) {
        (void)cudaStreamDestroy(g.stream);
        g.stream = NULL;
    }
    return rc;
}

int cuda_concurrency(void)
{
    return g.sm_count * g.max_threads_per_sm;
}

int cuda_fence(void)
{
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "px_fence(cuda): cudaDeviceSynchronize on device %d", g.device);
    return PX_OK;
}

void cuda_print_configuration(FILE *out)
{
    const px_cuda_device_info *in = &g.info;
    fprintf(out, "  cuda device %d: %s, compute capability %d.%d\n", in->device_id, in->name,
            in->cc_major, in->cc_minor);
    fprintf(out,
            "  cuda %d SMs x %d threads (%d blocks/SM), warp %d, %.1f GiB memory, %d-bit bus, "
            "L2 %d KiB, %zu KiB shared/block\n",
            in->sm_count, in->max_threads_per_sm, in->max_blocks_per_sm, in->warp_size,
            (double)in->global_mem_bytes / (1024.0 * 1024.0 * 1024.0), in->memory_bus_width_bits,
            in->l2_cache_bytes / 1024, in->shared_mem_per_block_bytes / 1024);
    fprintf(out, "  cuda runtime %d.%d, driver %d.%d, library built for %s\n",
            in->runtime_version / 1000, in->runtime_version % 1000 / 10, in->driver_version / 1000,
            in->driver_version % 1000 / 10, PXI_CUDA_ARCHS);
}

/* ---- launches ------------------------------------------------------------------------------ */

/* Reduce or scan: pass 1 writes one value per block to scratch, scan adds pass 2; then the
 * block values come back and are joined on the host in block (= index) order. */
int launch_folding(const pxi_launch *l, pxi_cuda_run *run)
{
    const px_kernel_device *d = l->kernel->device;
    const px_reducer *r = l->reducer;
    int rc = pxi_cuda_check_reducer(l->reducer, d, "launch", l->label, l->kernel->name);
    if (rc != PX_OK)
        return rc;
    const size_t vs = r->value_size;
    alignas(64) unsigned char ident[PX_REDUCER_MAX_VALUE_BYTES];
    alignas(64) unsigned char acc[PX_REDUCER_MAX_VALUE_BYTES];
    r->identity(ident);
    pxi_cuda_buffer *s = pxi_cuda_buffers_get(&scratch_pool);
    if (!s)
        return PX_ENOMEM;
    size_t cap = scratch_pool.bytes / vs;
    run->max_grid = cap < (size_t)g.max_grid ? (int)cap : g.max_grid;
    run->op = (int)r->op;
    run->identity = ident;
    run->partials = s->dev;
    const int scan = l->kind == PX_KERNEL_SCAN;
    run->phase = scan ? PXI_CUDA_SCAN_UP : PXI_CUDA_REDUCE;
    cudaError_t e = (cudaError_t)d->run(run);
    if (e != cudaSuccess) {
        rc = pxi_cuda_fail(e, "launch \"%s\" (kernel '%s', pass 1)", l->label, l->kernel->name);
        goto out;
    }
    if (scan) {
        run->phase = PXI_CUDA_SCAN_DOWN;
        e = (cudaError_t)d->run(run);
        if (e != cudaSuccess) {
            rc = pxi_cuda_fail(e, "launch \"%s\" (kernel '%s', pass 2)", l->label, l->kernel->name);
            goto out;
        }
    }
    if (l->result) {
        e = cudaMemcpyAsync(s->host, s->dev, (size_t)run->grid * vs, cudaMemcpyDeviceToHost,
                            run->stream);
        if (e != cudaSuccess) {
            rc = pxi_cuda_fail(e, "launch \"%s\": copying %d block results", l->label, run->grid);
            goto out;
        }
    }
    /* The result must be in host memory on return, and the scratch free for the next launch. */
    e = cudaStreamSynchronize(run->stream);
    if (e != cudaSuccess) {
        rc = pxi_cuda_fail(e, "launch \"%s\" (kernel '%s')", l->label, l->kernel->name);
        goto out;
    }
    if (l->result) {
        memcpy(acc, ident, vs);
        for (int b = 0; b < run->grid; ++b)
            r->join(acc, (const unsigned char *)s->host + (size_t)b * vs);
        memcpy(l->result, acc, vs);
    }
out:
    /* After a failed pass an earlier pass may still be using the scratch: drain the stream
     * before another launch may take it (the status was already reported). */
    if (rc != PX_OK)
        (void)cudaStreamSynchronize(run->stream);
    pxi_cuda_buffers_put(&scratch_pool, s);
    return rc;
}

/* Threads per block of an MDRange launch: the map's block stays within it (policy/mdrange.h). */
#define CUDA_MD_MAX_THREADS 256
/* The cache budget automatic device tiles are sized for (px_mdrange_auto_tile's l2_bytes). */
#define CUDA_MD_TILE_BUDGET (128 * 1024)

/* An MDRange kernel (PX_FOR_<N>D / PX_REDUCE_<N>D; the launch path checked the kernel's rank):
 * the device plan's tiles (explicit ones kept, automatic ones by the rule for a 128 KiB budget)
 * mapped to blocks by pxi_mdrange_cuda_map, fastest dimension on threadIdx.x. */
int launch_md(const pxi_launch *l, const px_kernel_device *d)
{
    /* Automatic tiles: a block's points within a 128 KiB budget (L1/shared size class, not the
     * host's L2), and at least 8 tiles (blocks) per multiprocessor while the box allows. */
    pxi_md_hint hint;
    memset(&hint, 0, sizeof hint);
    hint.l2_bytes = CUDA_MD_TILE_BUDGET;
    hint.min_tiles = 8 * (int64_t)g.sm_count;
    const pxi_md_plan pl = pxi_plan_md(l->md, l->kind, 1, PXI_PLAN_DEVICE, &hint);
    const pxi_md_tiling *t = &pl.tiling;
    pxi_md_cuda_map map;
    pxi_mdrange_cuda_map(t, CUDA_MD_MAX_THREADS, &map);
    pxi_cuda_md md;
    memset(&md, 0, sizeof md);
    md.rank = t->rank;
    md.iterate = (int)t->iterate;
    for (int k = 0; k < t->rank; ++k) {
        md.lower[k] = t->lower[k];
        md.upper[k] = t->upper[k];
        md.tile[k] = t->tile[k];
        md.ntiles[k] = t->ntiles[k];
    }
    md.total = t->total;
    unsigned prod = 1;
    for (int a = 0; a < 3; ++a) {
        md.dim[a] = map.dim[a];
        md.block[a] = map.block[a] > 0 ? map.block[a] : 1;
        prod *= md.block[a];
    }
    md.threads = (prod + 31u) / 32u * 32u;
    md.grid = map.grid;
    pxi_cuda_run run;
    memset(&run, 0, sizeof run);
    run.device = g.device;
    run.sm_count = g.sm_count;
    run.begin = 0;
    run.end = t->total;
    run.args = l->ctx;
    run.md = &md;
    run.stream = launch_stream(l);
    cudaError_t e = use_device();
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "launch \"%s\": selecting device %d", l->label, g.device);
    if (l->kind == PX_KERNEL_FOR) {
        run.phase = PXI_CUDA_FOR;
        e = (cudaError_t)d->run(&run);
        if (e != cudaSuccess)
            return pxi_cuda_fail(e, "launch \"%s\" (kernel '%s')", l->label, l->kernel->name);
        return PX_OK;
    }
    if (l->kind != PX_KERNEL_REDUCE) {
        PXI_ERROR("cuda: launch \"%s\": MDRange launches are for or reduce", l->label);
        return PX_EINVAL;
    }
    return launch_folding(l, &run);
}

int cuda_launch(const pxi_launch *l)
{
    if (l->policy_kind == PXI_POLICY_TEAM) /* team launches: cuda_team.cu */
        return pxi_cuda_team_launch(l, (void *)launch_stream(l));
    const px_kernel *k = l->kernel;
    if (!k) {
        PXI_ERROR("cuda: launch \"%s\": host function kernels (px_parallel_*_fn) cannot run on "
                  "the cuda space; use PX_FOR/PX_REDUCE/PX_SCAN in a file compiled by nvcc",
                  l->label);
        return PX_EINVAL;
    }
    if (l->policy_kind != PXI_POLICY_RANGE && l->policy_kind != PXI_POLICY_MDRANGE) {
        PXI_ERROR("cuda: launch \"%s\": unknown policy kind %d", l->label, (int)l->policy_kind);
        return PX_EINVAL;
    }
    const px_kernel_device *d = k->device;
    if (!d) {
        PXI_ERROR("cuda: launch \"%s\": kernel '%s' was compiled without nvcc; compile its file "
                  "with nvcc to run it on the cuda space",
                  l->label, k->name);
        return PX_EINVAL;
    }
    if (d->abi != PXI_CUDA_ABI || d->kind != k->kind || !d->run) {
        PXI_ERROR("cuda: launch \"%s\": kernel '%s' was built against other parex headers "
                  "(device ABI %#x, expected %#x)",
                  l->label, k->name, d->abi, PXI_CUDA_ABI);
        return PX_EINVAL;
    }
    if (l->policy_kind == PXI_POLICY_MDRANGE)
        return launch_md(l, d);
    pxi_cuda_run run;
    memset(&run, 0, sizeof run);
    run.device = g.device;
    run.sm_count = g.sm_count;
    /* The device plan (policy/plan.h): one index per device thread over [begin, end); the
     * policy's chunk size and schedule do not apply on the device. */
    const pxi_range_plan pl =
        pxi_plan_range(l->range, l->kind, cuda_concurrency(), PXI_PLAN_DEVICE);
    run.begin = pl.begin;
    run.end = pl.end;
    run.args = l->ctx;
    run.stream = launch_stream(l);
    cudaError_t e = use_device();
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "launch \"%s\": selecting device %d", l->label, g.device);
    if (l->kind == PX_KERNEL_FOR) {
        run.phase = PXI_CUDA_FOR;
        e = (cudaError_t)d->run(&run);
        if (e != cudaSuccess)
            return pxi_cuda_fail(e, "launch \"%s\" (kernel '%s')", l->label, k->name);
        return PX_OK;
    }
    return launch_folding(l, &run);
}

/* ---- memory ----------------------------------------------------------------------------- */

void *cuda_malloc(size_t bytes)
{
    void *p = NULL;
    cudaError_t e = use_device();
    /* cudaMalloc(0) yields NULL; px_malloc promises a unique block, so take one byte. */
    if (e == cudaSuccess)
        e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        (void)pxi_cuda_fail(e, "cudaMalloc(%zu bytes) on device %d", bytes, g.device);
        return NULL;
    }
    return p;
}

int cuda_free(void *p)
{
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaFree(p);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "cudaFree(%p)", p);
    return PX_OK;
}

/* Every direction through unified addressing (cudaMemcpyDefault), ordered after earlier
 * launches on the space's stream, complete on return. */
int cuda_deep_copy(void *dst, int dst_host, const void *src, int src_host, size_t bytes)
{
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, g.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g.stream);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "px_deep_copy(%zu bytes, %s %p -> %s %p)", bytes,
                             src_host ? "host" : "device", src, dst_host ? "host" : "device", dst);
    return PX_OK;
}

/* ---- streams (engine queues) ------------------------------------------------------------- */

int cuda_stream_create(void **stream)
{
    cudaStream_t s = NULL;
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "cudaStreamCreateWithFlags on device %d", g.device);
    *stream = (void *)s;
    return PX_OK;
}

int cuda_stream_destroy(void *stream)
{
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaStreamDestroy((cudaStream_t)stream);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "cudaStreamDestroy(%p)", stream);
    return PX_OK;
}

struct then_ctx {
    void (*fn)(void *arg, int status);
    void *arg;
};

/* Stream callback: runs on a CUDA runtime thread once the stream's earlier work is done, also
 * when it failed (status then carries the error), so an engine op always completes.
 * cudaLaunchHostFunc would skip the call after a device error and leave the op pending. */
void CUDART_CB then_trampoline(cudaStream_t, cudaError_t status, void *p)
{
    then_ctx c = *(then_ctx *)p;
    pxi_free(p);
    int rc = PX_OK;
    if (status != cudaSuccess) {
        PXI_ERROR("cuda: stream work failed: %s (%s)", cudaGetErrorString(status),
                  cudaGetErrorName(status));
        rc = PX_ECUDA;
    }
    c.fn(c.arg, rc);
}

int cuda_stream_then(void *stream, void (*fn)(void *arg, int status), void *arg)
{
    then_ctx *c = (then_ctx *)pxi_malloc(sizeof *c);
    if (!c) {
        PXI_ERROR("cuda: out of memory queuing a stream callback");
        return PX_ENOMEM;
    }
    c->fn = fn;
    c->arg = arg;
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaStreamAddCallback(stream_or_default(stream), then_trampoline, c, 0);
    if (e != cudaSuccess) {
        pxi_free(c);
        return pxi_cuda_fail(e, "cudaStreamAddCallback(%p)", stream);
    }
    return PX_OK;
}

int cuda_stream_synchronize(void *stream)
{
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream_or_default(stream));
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "cudaStreamSynchronize(%p)", stream);
    return PX_OK;
}

int cuda_copy_async(void *dst, int dst_host, const void *src, int src_host, size_t bytes,
                    void *stream)
{
    if (bytes == 0)
        return PX_OK;
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_or_default(stream));
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "cudaMemcpyAsync(%zu bytes, %s %p -> %s %p)", bytes,
                             src_host ? "host" : "device", src, dst_host ? "host" : "device", dst);
    return PX_OK;
}

/* ---- execution-space instances (parex/instance.h): one stream each --------------------- */

int cuda_instance_create(int, int, void **impl)
{
    return cuda_stream_create(impl);
}

/* Finish the instance's queued work, then drop its stream; the stream goes also after an
 * error (the first status is returned). */
int cuda_instance_destroy(void *impl)
{
    int rc = cuda_stream_synchronize(impl);
    int rd = cuda_stream_destroy(impl);
    return rc != PX_OK ? rc : rd;
}

int cuda_instance_copy(void *impl, void *dst, int dst_host, const void *src, int src_host,
                       size_t bytes)
{
    return cuda_copy_async(dst, dst_host, src, src_host, bytes, impl);
}

/* px_cuda_* precondition: the runtime is up and so is this space. */
int require_up(const char *caller)
{
    if (!px_is_initialized()) {
        PXI_ERROR("%s: parex is not initialized", caller);
        return PX_ENOTINIT;
    }
    if (!__atomic_load_n(&g.up, __ATOMIC_ACQUIRE)) {
        PXI_INFO("%s: the cuda space is not available", caller);
        return PX_ENODEV;
    }
    return PX_OK;
}

} // namespace

/* ---- registration and public API (C linkage) -------------------------------------------- */

extern "C" {

static const pxi_space_ops cuda_ops = {
    "cuda",                   /* name */
    20,                       /* priority: above threads (10) and serial (0) */
    2,                        /* kokkos_device_type: Cuda */
    0,                        /* host_accessible: device memory */
    cuda_initialize,          /* initialize */
    cuda_finalize,            /* finalize */
    cuda_concurrency,         /* concurrency */
    cuda_fence,               /* fence */
    cuda_print_configuration, /* print_configuration */
    cuda_launch,              /* launch */
    cuda_malloc,              /* malloc */
    cuda_free,                /* free */
    cuda_deep_copy,           /* deep_copy */
    NULL,                     /* in_kernel: device kernels never run host code */
    cuda_device_id,           /* device_id */
    cuda_stream_create,       /* stream_create */
    cuda_stream_destroy,      /* stream_destroy */
    cuda_stream_then,         /* stream_then */
    cuda_stream_synchronize,  /* stream_synchronize */
    cuda_copy_async,          /* copy_async */
    pxi_cuda_team_limits,     /* team_limits (cuda_team.cu) */
    0,                        /* instance_splits: each instance is a stream on the device */
    cuda_instance_create,     /* instance_create */
    cuda_instance_destroy,    /* instance_destroy */
    NULL,                     /* instance_concurrency: the device's */
    cuda_stream_synchronize,  /* instance_fence: its stream */
    NULL,                     /* instance_team_limits */
    cuda_instance_copy,       /* instance_copy: on its stream */
};

PX_REGISTER_SPACE(cuda_ops, pxi_space_anchor_cuda)

int px_cuda_device_info_get(px_cuda_device_info *out)
{
    if (!out) {
        PXI_ERROR("px_cuda_device_info_get: out is NULL");
        return PX_EFAULT;
    }
    int rc = require_up("px_cuda_device_info_get");
    if (rc != PX_OK)
        return rc;
    *out = g.info;
    return PX_OK;
}

void *px_cuda_malloc_host(size_t bytes)
{
    if (require_up("px_cuda_malloc_host") != PX_OK)
        return NULL;
    void *p = NULL;
    cudaError_t e = use_device();
    if (e == cudaSuccess)
        e = cudaMallocHost(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        (void)pxi_cuda_fail(e, "px_cuda_malloc_host(%zu bytes)", bytes);
        return NULL;
    }
    return p;
}

int px_cuda_free_host(void *p)
{
    int rc = require_up("px_cuda_free_host");
    if (rc != PX_OK)
        return rc;
    if (!p)
        return PX_OK;
    cudaError_t e = cudaFreeHost(p);
    if (e != cudaSuccess)
        return pxi_cuda_fail(e, "px_cuda_free_host(%p)", p);
    return PX_OK;
}

void *px_cuda_stream(void)
{
    if (require_up("px_cuda_stream") != PX_OK)
        return NULL;
    return (void *)g.stream;
}

} /* extern "C" */
