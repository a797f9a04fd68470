/* tests/cuda/cuda_kernels.h - kernels of the Cuda conformance suite (cuda_kernels.cu, compiled
 * by nvcc), declared for the C test driver (check_cuda.c). Argument structs are plain C. */
#ifndef PX_TEST_CUDA_KERNELS_H
#define PX_TEST_CUDA_KERNELS_H

#include <stdint.h>

#include "parex.h"

/* Counts visits: cnt[i - base] += 1. */
typedef struct {
    int32_t *cnt;
    int64_t base;
} visit_args;
PX_KERNEL_DECLARE(k_visit);

/* Reads nothing, writes nothing: launch overhead and empty-kernel tests. */
typedef struct {
    int unused;
} empty_args;
PX_KERNEL_DECLARE(k_empty);

/* Fill x[i - base] = f(i) for the reduce tests (device memory). */
typedef struct {
    double *x;
    int64_t base;
} fill_args;
PX_KERNEL_DECLARE(k_fill);

/* Folds over the index itself (no memory): values chosen so sums are exact. */
typedef struct {
    int64_t base;
} idx_args;
PX_KERNEL_DECLARE(k_sum_f64);  /* acc += (double)i */
PX_KERNEL_DECLARE(k_sum_f32);  /* acc += 1.0f */
PX_KERNEL_DECLARE(k_sum_i64);  /* acc += i */
PX_KERNEL_DECLARE(k_prod_f64); /* acc *= (i % 10 == 3 ? 2.0 : 1.0) */
PX_KERNEL_DECLARE(k_min_f64);  /* acc = min(acc, v(i)) with v(i) = |i - 777| + 0.5 */
PX_KERNEL_DECLARE(k_max_i64);  /* acc = max(acc, (i * 37) % 1009) */
PX_KERNEL_DECLARE(k_min_i64);  /* acc = min(acc, (i * 37) % 1009) */
PX_KERNEL_DECLARE(k_max_f64);  /* acc = max(acc, -|i - 777|) */
PX_KERNEL_DECLARE(k_minloc);   /* value (i % 100) with its index: ties at lowest index */
PX_KERNEL_DECLARE(k_maxloc);   /* value (i % 100) with its index */
PX_KERNEL_DECLARE(k_land);     /* acc = acc && (i != base + 500) */
PX_KERNEL_DECLARE(k_lor);      /* acc = acc || (i == base + 500) */
PX_KERNEL_DECLARE(k_band);     /* acc &= ~(1 << (i % 64)) */
PX_KERNEL_DECLARE(k_bor);      /* acc |= 1 << (i % 64) */
PX_KERNEL_DECLARE(k_sum_mem);  /* acc += x[i - base] (device memory from k_fill) */

/* Order checker: a value is the run [lo, hi) of indices it covers; the join fails (ok = 0)
 * unless the left run ends where the right one starts. Associative, not commutative. */
typedef struct {
    int64_t lo, hi;
    int64_t ok;
} run_value;
extern const px_reducer run_reducer;
PX_KERNEL_DECLARE(k_run);       /* element i is the run [i, i + 1) */
PX_KERNEL_DECLARE(k_run_nodev); /* the same over a value type without a device join */

/* Exclusive prefix sums: out[i - base] = in(0..i-1) with in(i) = i % 7 + 1. */
typedef struct {
    int64_t *out;
    int64_t base;
} scan_args;
PX_KERNEL_DECLARE(k_scan_i64);
/* Scan with the order checker: out[i - base] = the prefix run's hi (must equal i). */
typedef struct {
    int64_t *out;
    int64_t base;
} scan_run_args;
PX_KERNEL_DECLARE(k_scan_run);

/* x[i - base] = y[i - base] + s * z[i - base], for the memory/engine tests. */
typedef struct {
    double *x;
    const double *y, *z;
    double s;
    int64_t base;
} triad_args;
PX_KERNEL_DECLARE(k_triad);

#endif
