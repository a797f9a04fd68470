/* tests/cuda/portable_kernels.h - one kernel file (portable_kernels.inc) compiled twice: by the
 * C compiler (portable_host.c, kernels named host_*) and by nvcc (portable_device.cu, dev_*).
 * check_cuda_portable.c runs both builds' host paths everywhere and the nvcc build on cuda. */
#ifndef PX_TEST_PORTABLE_KERNELS_H
#define PX_TEST_PORTABLE_KERNELS_H

#include <stdint.h>

#include "parex.h"

typedef struct {
    double alpha;
    const double *x;
    double *y;
} pk_axpy_args;

typedef struct {
    const double *x, *y;
} pk_dot_args;

typedef struct {
    const int64_t *in;
    int64_t *out;
} pk_scan_args;

/* Custom reducer value: smallest and largest element. */
typedef struct {
    double lo, hi;
} pk_range;

#define PK_DECLARE_ALL(prefix)                                                                     \
    PX_KERNEL_DECLARE(prefix##_axpy);                                                              \
    PX_KERNEL_DECLARE(prefix##_dot);                                                               \
    PX_KERNEL_DECLARE(prefix##_xscan);                                                             \
    PX_KERNEL_DECLARE(prefix##_range);                                                             \
    extern const px_reducer prefix##_range_reducer

PK_DECLARE_ALL(host);
PK_DECLARE_ALL(dev);

#endif
