/* bench/bench_spin.h - a calibrated amount of work for the overhead benchmarks
 * (bench/bench_overhead.c, bench/bench_overhead_taskflow.cpp): a dependent chain of integer
 * multiply-adds on a counter private to the op (a register), so an op of "W us of work" touches
 * no memory another op touches and its time does not depend on the cache. Calibrated once per
 * process: the fastest of several timed runs (the least disturbed by other processes) gives the
 * iterations per nanosecond. Header-only, C and C++; needs bench_util.h's clock. */
#ifndef PAREX_BENCH_SPIN_H
#define PAREX_BENCH_SPIN_H

#include <stdint.h>

#include "bench_util.h"

/* Run @iters steps of a 64-bit LCG on a private counter; returns it (the empty asm keeps every
 * step: the compiler can neither fold the loop nor drop it). */
static inline uint64_t bench_spin(uint64_t iters)
{
    uint64_t x = iters;
    for (uint64_t i = 0; i < iters; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ __volatile__("" : "+r"(x));
    }
    return x;
}

/* Iterations of bench_spin per nanosecond on this core: the fastest of 21 runs of 2^20
 * iterations (about 1 ms each), after one warm-up run. */
static inline double bench_spin_calibrate(void)
{
    const uint64_t iters = (uint64_t)1 << 20;
    double best = 1e30;
    (void)bench_spin(iters);
    for (int t = 0; t < 21; ++t) {
        double t0 = bench_now_s();
        (void)bench_spin(iters);
        double dt = bench_now_s() - t0;
        if (dt < best)
            best = dt;
    }
    return (double)iters / (best * 1e9);
}

/* Iterations for @ns nanoseconds of work at @per_ns iterations per nanosecond (at least 1). */
static inline uint64_t bench_spin_iters(double ns, double per_ns)
{
    double it = ns * per_ns;
    return it < 1.0 ? 1u : (uint64_t)(it + 0.5);
}

#endif
