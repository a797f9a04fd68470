/*
 * spaces/cuda/cuda_common.cu - the host pieces cuda_space.cu (range and MDRange launches) and
 * cuda_team.cu (team launches) share: CUDA error logging, the free list of device/pinned-host
 * buffer pairs reductions fold into, and the reducer check of a folding launch.
 */
#include <stdarg.h>
#include <stdio.h>

#include <cuda_runtime.h>

#include "parex/cuda.h"
#include "parex/kernel.h"

extern "C" {
#include "base/alloc.h"
#include "base/log.h"
}
#include "spaces/cuda/cuda_common.h"

int pxi_cuda_fail(cudaError_t e, const char *fmt, ...)
{
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    (void)cudaGetLastError();
    PXI_ERROR("cuda: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return PX_ECUDA;
}

pxi_cuda_buffer *pxi_cuda_buffers_get(pxi_cuda_buffers *p)
{
    pthread_mutex_lock(&p->lock);
    pxi_cuda_buffer *b = p->free;
    if (b)
        p->free = b->next;
    pthread_mutex_unlock(&p->lock);
    if (b)
        return b;
    b = (pxi_cuda_buffer *)pxi_calloc(1, sizeof *b);
    if (!b) {
        PXI_ERROR("cuda: out of memory for %s", p->what);
        return NULL;
    }
    cudaError_t e = cudaMalloc(&b->dev, p->bytes);
    if (e == cudaSuccess)
        e = cudaMallocHost(&b->host, p->bytes);
    if (e != cudaSuccess) {
        (void)pxi_cuda_fail(e, "allocating %zu bytes of %s", p->bytes, p->what);
        if (b->dev)
            (void)cudaFree(b->dev);
        pxi_free(b);
        return NULL;
    }
    return b;
}

void pxi_cuda_buffers_put(pxi_cuda_buffers *p, pxi_cuda_buffer *b)
{
    pthread_mutex_lock(&p->lock);
    b->next = p->free;
    p->free = b;
    pthread_mutex_unlock(&p->lock);
}

void pxi_cuda_buffers_drain(pxi_cuda_buffers *p)
{
    pthread_mutex_lock(&p->lock);
    pxi_cuda_buffer *b = p->free;
    p->free = NULL;
    pthread_mutex_unlock(&p->lock);
    while (b) {
        pxi_cuda_buffer *next = b->next;
        (void)cudaFree(b->dev);
        (void)cudaFreeHost(b->host);
        pxi_free(b);
        b = next;
    }
}

/* The builtin (op, value type) pairs the device joins implement (parex/kernel_cuda.h). */
static int builtin_ok(px_reducer_op op, px_value_type t)
{
    switch (t) {
    case PX_VALUE_F64:
    case PX_VALUE_F32:
        return op == PX_REDUCER_SUM || op == PX_REDUCER_PROD || op == PX_REDUCER_MIN ||
               op == PX_REDUCER_MAX;
    case PX_VALUE_I64:
    case PX_VALUE_U64:
    case PX_VALUE_INT:
        return op == PX_REDUCER_SUM || op == PX_REDUCER_PROD || op == PX_REDUCER_MIN ||
               op == PX_REDUCER_MAX || op == PX_REDUCER_LAND || op == PX_REDUCER_LOR ||
               op == PX_REDUCER_BAND || op == PX_REDUCER_BOR;
    case PX_VALUE_VALLOC_F64:
        return op == PX_REDUCER_MINLOC || op == PX_REDUCER_MAXLOC;
    default:
        return 0;
    }
}

int pxi_cuda_check_reducer(const px_reducer *r, const px_kernel_device *d, const char *kind,
                           const char *label, const char *kernel)
{
    const char *rname = r->name ? r->name : "(unnamed)";
    if (r->op == PX_REDUCER_CUSTOM) {
        if (d->has_device_join)
            return PX_OK;
        PXI_ERROR("cuda: %s \"%s\": custom reducer '%s' has no device join for kernel '%s' "
                  "(write PX_REDUCER_DEVICE(T, join) before the kernel; see parex/cuda.h)",
                  kind, label, rname, kernel);
        return PX_EINVAL;
    }
    if ((int)r->type != (int)d->value_type || !builtin_ok(r->op, r->type)) {
        PXI_ERROR("cuda: %s \"%s\": reducer '%s' (op %d, value type %d) does not match the "
                  "value type of kernel '%s' (%d)",
                  kind, label, rname, (int)r->op, (int)r->type, kernel, (int)d->value_type);
        return PX_EINVAL;
    }
    return PX_OK;
}
