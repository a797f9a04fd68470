/* tests/cuda/cuda_md_kernels.h - MDRange kernels of the Cuda MDRange suite (cuda_md_kernels.cu,
 * compiled by nvcc), declared for the C driver (check_cuda_md.c). Argument structs are plain C.
 * The same file's bodies run on the host entries too (the kernels are launched on serial as the
 * reference). */
#ifndef PX_TEST_CUDA_MD_KERNELS_H
#define PX_TEST_CUDA_MD_KERNELS_H

#include <stdint.h>

#include "parex.h"

/* Counts visits of a box: cnt[row-major index relative to lower] += 1 (device or host memory). */
typedef struct {
    int32_t *cnt;
    int64_t lower[PX_MAX_RANK], ext[PX_MAX_RANK];
} md_count_args;
PX_KERNEL_DECLARE(k_md_count2);
PX_KERNEL_DECLARE(k_md_count3);
PX_KERNEL_DECLARE(k_md_count4);

/* Sum over the box of an exact value per point (integers in doubles, so any order is exact). */
typedef struct {
    int rank;
} md_val_args;
PX_KERNEL_DECLARE(k_md_sum2);
PX_KERNEL_DECLARE(k_md_sum3);
/* A float sum whose value depends on the order: bitwise repeatability run to run. */
PX_KERNEL_DECLARE(k_md_fsum3);
/* 3-D 7-point stencil over a view (interior points), the shape of examples/stencil. */
typedef struct {
    px_view in, out;
} md_stencil_args;
PX_KERNEL_DECLARE(k_md_stencil);

#endif
