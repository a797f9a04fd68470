/* tests/cuda/blocks_kernels.h - kernels of the kernel-building-block suite on cuda
 * (blocks_kernels.cu, nvcc), declared for the C driver check_cuda_blocks.c: atomics, random
 * numbers and scatter-add in single-source bodies. The same bodies compiled by the C compiler
 * run on the serial space for the reference. */
#ifndef PX_TEST_BLOCKS_KERNELS_H
#define PX_TEST_BLOCKS_KERNELS_H

#include <stdint.h>

#include "parex.h"

/* Device cells every index of k_atomics updates (one struct in device memory). */
typedef struct {
    double f64_sum, f64_min, f64_max, f64_xchg;
    float f32_sum, f32_min, f32_max;
    int32_t i32_sum, i32_min, i32_max, i32_cas;
    int64_t i64_sum, i64_min, i64_max, i64_cas;
    uint64_t u64_sum, u64_min, u64_max, u64_xchg_count;
} blocks_cells;

typedef struct {
    blocks_cells *c;
} atomics_args;
/* index i: sums of i (exact), min/max of i-dependent values, CAS-loop increments */
PX_KERNEL_DECLARE(k_blocks_atomics);

#define BLOCKS_RNG_DRAWS 5 /* u32, u32 (as double), uniform_f64, normal, normal */
typedef struct {
    uint64_t seed;
    double *out; /* BLOCKS_RNG_DRAWS per index */
} rng_args;
PX_KERNEL_DECLARE(k_blocks_rng);

typedef struct {
    px_scatter *sc;
    int64_t n;
} deposit_args;
/* index k adds (k % 5 + 1) to cells (k * 7919) % n and k % n */
PX_KERNEL_DECLARE(k_blocks_deposit);

#endif
