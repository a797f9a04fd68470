/* bench/bench_util.h - the clock and the median every benchmark in bench/ reports with.
 * Header-only (static inline), so each benchmark, C or CUDA, stays one translation unit. The
 * includer needs clock_gettime: _POSIX_C_SOURCE >= 199309L (the build defines 200809L). */
#ifndef PAREX_BENCH_UTIL_H
#define PAREX_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC (the origin is arbitrary: subtract two readings). */
static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n >= 1; sorts v in place. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
