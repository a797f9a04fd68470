/* spaces/cuda/cuda_common.h - what the cuda space's host files (cuda_space.cu, cuda_team.cu)
 * share: logging a CUDA error, the device/pinned-host buffer pairs reductions fold into, and the
 * reducer check of a folding launch. nvcc only. */
#ifndef PXI_CUDA_COMMON_H
#define PXI_CUDA_COMMON_H

#include <pthread.h>
#include <stddef.h>

#include <cuda_runtime.h>

#include "parex/kernel.h"
#include "parex/reducer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Log a CUDA error with its name and text ("cuda: <what>: <text> (<name>)"), clear it if it is
 * not sticky, return PX_ECUDA. */
__attribute__((format(printf, 2, 3))) int pxi_cuda_fail(cudaError_t e, const char *fmt, ...);

/* A device buffer of a pool's size and its pinned host mirror. */
typedef struct pxi_cuda_buffer {
    void *dev;
    void *host;
    struct pxi_cuda_buffer *next; /* free-list link, under the pool's lock */
} pxi_cuda_buffer;

/* A free list of buffer pairs, so concurrent launches on different streams never share one.
 * @bytes is set at initialize (no launch in flight); @what names the buffers in messages. */
typedef struct pxi_cuda_buffers {
    pthread_mutex_t lock;
    pxi_cuda_buffer *free; /* under lock */
    size_t bytes;
    const char *what;
} pxi_cuda_buffers;

#define PXI_CUDA_BUFFERS_INIT(what)                                                                \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, NULL, 0, (what)                                                 \
    }

/* A free pair, or a new one of @p->bytes on the current device; NULL (logged) when out of
 * memory. */
pxi_cuda_buffer *pxi_cuda_buffers_get(pxi_cuda_buffers *p);
/* Give @b back to @p. */
void pxi_cuda_buffers_put(pxi_cuda_buffers *p, pxi_cuda_buffer *b);
/* At finalize: free every pair on the free list. */
void pxi_cuda_buffers_drain(pxi_cuda_buffers *p);

/* Can a kernel whose device half is @d fold with reducer @r on the device? PX_OK, or
 * PX_EINVAL logged as "cuda: <kind> \"<label>\": ..." naming @kernel: a custom reducer needs a
 * device join (PX_REDUCER_DEVICE), a builtin one the kernel's value type and an (op, type) pair
 * the device joins implement (parex/kernel_cuda.h). */
int pxi_cuda_check_reducer(const px_reducer *r, const px_kernel_device *d, const char *kind,
                           const char *label, const char *kernel);

#ifdef __cplusplus
}
#endif

#endif
