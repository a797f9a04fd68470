/* bench/bench_rng.c - counter-based random numbers (issue 14): uniform doubles per second, one
 * contender per process (bench/run_rng.sh alternates their order between rounds).
 *
 *   bench_rng --impl parex|r123omp [--items N] [--draws K] [--reps R] [--warmup W]
 *             [--seed S] [--space NAME]
 *
 * Work: N items; item i draws K uniform doubles in [0, 1) from its own stream and the sum of all
 * N K draws is the result (a reduction, so no draw can be optimized away). Both contenders here
 * compute exactly the same numbers: Philox4x32-10 (Random123) with key = seed and counter
 * {i_lo, i_hi, block_lo, block_hi}, blocks 0, 1, ... of four 32-bit words, each double from two
 * consecutive words a, b as ((a << 21) | (b >> 11)) 2^-53 (the stream of parex/rng.h):
 *   parex    a PX_REDUCE kernel, px_parallel_reduce with px_sum_f64 over px_range(0, N) on
 *            the threads space (PX_NUM_THREADS threads), per item px_rng_at(seed, i) and K
 *            px_rng_uniform_f64 calls.
 *   r123omp  Random123's philox4x32_R(10, ctr, key) called directly from an OpenMP loop,
 *            `parallel for reduction(+:sum) schedule(static)` (OMP_NUM_THREADS threads).
 * Same work: both make ceil(K / 2) philox4x32_R(10) calls per item (one block gives two
 * doubles; px_rng_uniform_f64 takes words 0, 1 and then 2, 3 of each block, as r123_item does),
 * one int-to-double conversion and multiply per double, and the same serial sum per item.
 * The Kokkos contender (Random_XorShift64_Pool, a different generator) is
 * bench/kokkos/bench_rng_kokkos.cpp, same options and output.
 *
 * Check before timing: each contender's sum must equal, to 1e-12 relative (only the summation
 * order differs), a serial sum of the same stream computed here with Random123 directly, and the
 * mean must be within 5 standard deviations of 1/2; a wrong result exits 1. Then W warm-up and
 * R timed runs; one line:
 *
 *   RESULT impl=parex threads=2 items=N draws=K reps=R seconds=<median> best=<fastest>
 *          draws_per_s=<N K / median> mean=<sum / (N K)>
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Random123/philox.h>

#include "bench_util.h"

#include "parex.h"

#define MAX_REPS 1000

typedef struct {
    uint64_t seed;
    int64_t draws;
} rng_args;

PX_REDUCE(bench_rng_sum, rng_args, double, i, a, acc)
{
    px_rng r = px_rng_at(a->seed, (uint64_t)i);
    double s = 0.0;
    for (int64_t d = 0; d < a->draws; d++)
        s += px_rng_uniform_f64(&r);
    *acc += s;
}

/* Item i's K draws straight from Random123: the stream of parex/rng.h. */
static inline double r123_item(uint64_t seed, uint64_t i, int64_t draws)
{
    philox4x32_key_t k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    double s = 0.0;
    for (int64_t d = 0; d < draws; d += 2) {
        uint64_t b = (uint64_t)d / 2;
        philox4x32_ctr_t c = {{(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)b, (uint32_t)(b >> 32)}};
        philox4x32_ctr_t o = philox4x32_R(10, c, k);
        s += (double)(((uint64_t)o.v[0] << 21) | (o.v[1] >> 11)) * 0x1p-53;
        if (d + 1 < draws)
            s += (double)(((uint64_t)o.v[2] << 21) | (o.v[3] >> 11)) * 0x1p-53;
    }
    return s;
}

static double run_r123omp(uint64_t seed, int64_t items, int64_t draws)
{
    double sum = 0.0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (int64_t i = 0; i < items; i++)
        sum += r123_item(seed, (uint64_t)i, draws);
    return sum;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_rng --impl parex|r123omp [--items N] [--draws K] [--reps R] "
                    "[--warmup W] [--seed S] [--space NAME]\n");
    return 2;
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return 0;
    *out = (int64_t)v;
    return 1;
}

int main(int argc, char **argv)
{
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "bench_rng: px_initialize: %s\n", px_strerror(rc));
        return 1;
    }
    const char *impl = NULL, *space_name = "threads";
    int64_t items = (int64_t)1 << 22, draws = 16, reps = 10, warmup = 2, seed = 12345;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (strcmp(argv[i], "--impl") == 0 && ok)
            impl = v;
        else if (strcmp(argv[i], "--space") == 0 && ok)
            space_name = v;
        else if (strcmp(argv[i], "--items") == 0 && ok)
            ok = parse_i64(v, 1, (int64_t)1 << 40, &items);
        else if (strcmp(argv[i], "--draws") == 0 && ok)
            ok = parse_i64(v, 1, 1 << 20, &draws);
        else if (strcmp(argv[i], "--reps") == 0 && ok)
            ok = parse_i64(v, 1, MAX_REPS, &reps);
        else if (strcmp(argv[i], "--warmup") == 0 && ok)
            ok = parse_i64(v, 0, 100, &warmup);
        else if (strcmp(argv[i], "--seed") == 0 && ok)
            ok = parse_i64(v, 0, INT64_MAX, &seed);
        else
            ok = 0;
        if (!ok) {
            px_finalize();
            return usage();
        }
        i++;
    }
    int is_px = impl && strcmp(impl, "parex") == 0;
    if (!impl || (!is_px && strcmp(impl, "r123omp") != 0)) {
        px_finalize();
        return usage();
    }
    px_space *s = px_space_by_name(space_name);
    if (is_px && !s) {
        fprintf(stderr, "bench_rng: no space '%s'\n", space_name);
        px_finalize();
        return 1;
    }
    const int threads = is_px ? px_space_concurrency(s) : omp_get_max_threads();
    const rng_args args = {(uint64_t)seed, draws};

    /* reference: the same stream, serially */
    double ref = 0.0;
    for (int64_t i = 0; i < items; i++)
        ref += r123_item((uint64_t)seed, (uint64_t)i, draws);

    double t[MAX_REPS], sum = 0.0;
    for (int64_t r = -warmup - 1; r < reps; r++) {
        double t0 = bench_now_s();
        if (is_px) {
            rc = px_parallel_reduce(s, "bench_rng", px_range(0, items), &bench_rng_sum, &args,
                                    sizeof args, &px_sum_f64, &sum);
            if (rc != PX_OK) {
                fprintf(stderr, "bench_rng: px_parallel_reduce: %s\n", px_strerror(rc));
                px_finalize();
                return 1;
            }
        } else {
            sum = run_r123omp((uint64_t)seed, items, draws);
        }
        double dt = bench_now_s() - t0;
        if (r == -warmup - 1) { /* the checked run */
            double total = (double)items * (double)draws, mean = sum / total;
            double sd = sqrt(1.0 / 12.0 / total);
            if (fabs(sum - ref) > 1e-12 * fabs(ref) || fabs(mean - 0.5) > 5.0 * sd) {
                fprintf(stderr,
                        "bench_rng: %s: wrong sum %.17g (serial Random123 %.17g, mean %.9f)\n",
                        impl, sum, ref, mean);
                px_finalize();
                return 1;
            }
        }
        if (r >= 0)
            t[r] = dt;
    }
    double best = t[0];
    for (int64_t r = 1; r < reps; r++)
        best = t[r] < best ? t[r] : best;
    double med = bench_median(t, (int)reps);
    printf("RESULT impl=%s threads=%d items=%" PRId64 " draws=%" PRId64 " reps=%" PRId64
           " seconds=%.6g best=%.6g draws_per_s=%.6g mean=%.9f\n",
           impl, threads, items, draws, reps, med, best, (double)items * (double)draws / med,
           sum / ((double)items * (double)draws));
    rc = px_finalize();
    return rc == PX_OK ? 0 : 1;
}
