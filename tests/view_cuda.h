/* tests/view_cuda.h - kernels of tests/check_view_cuda.c: views passed by value in kernel
 * arguments and indexed with PX_VIEW_AT* in bodies compiled by nvcc (tests/view_cuda.cu) and,
 * bounds-checked, with PX_DEBUG_CHECK (tests/view_cuda_debug.cu). */
#ifndef VIEW_CUDA_H
#define VIEW_CUDA_H

#include "parex.h"

typedef struct {
    px_view u; /* rank 2, read */
    px_view w; /* rank 2, same extents, written: w = 2 u + 1 */
    int64_t ny;
} view_axpy_args;

typedef struct {
    px_view w;     /* rank 3 */
    int64_t shift; /* index added in dimension 1: out of bounds when > 0 */
} view_shift_args;

#ifdef __cplusplus
extern "C" {
#endif
PX_KERNEL_DECLARE(view_k_axpy);        /* over [0, nx * ny) */
PX_KERNEL_DECLARE(view_k_shift_store); /* over [0, extent0), PX_DEBUG_CHECK */
#ifdef __cplusplus
}
#endif

#endif
