/*
 * examples/cuda/saxpy_dot.cu - one source, every space: kernels written once with PX_FOR /
 * PX_REDUCE / PX_SCAN, compiled by nvcc, run on the default space (cuda when a GPU is present,
 * else threads or serial: the same kernels carry their host loops too).
 *
 *   px_cuda_saxpy_dot [n] [--px-default-space=NAME] [--px-device-id=N]
 *
 * Fills x and y, computes y += a * x, the dot product x . y, and the exclusive prefix sum of a
 * bucket count, then checks every result against its closed form. Exit status 0 when correct.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parex.h"

typedef struct {
    double *x, *y;
} fill_args;

PX_FOR(fill, fill_args, i, a)
{
    a->x[i] = 1.0;
    a->y[i] = (double)(i % 8);
}

typedef struct {
    double alpha;
    const double *x;
    double *y;
} axpy_args;

PX_FOR(axpy, axpy_args, i, a)
{
    a->y[i] += a->alpha * a->x[i];
}

typedef struct {
    const double *x, *y;
} dot_args;

PX_REDUCE(dot, dot_args, double, i, a, acc)
{
    *acc += a->x[i] * a->y[i];
}

/* offsets[i] = number of elements before i whose bucket (i % 3 + 1 slots) precede it. */
typedef struct {
    int64_t *offsets;
} offsets_args;

PX_SCAN(offsets, offsets_args, int64_t, i, a, partial, final_pass)
{
    if (final_pass)
        a->offsets[i] = *partial;
    *partial += i % 3 + 1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != PX_OK) {                                                                        \
            fprintf(stderr, "%s failed: %s\n", #call, px_strerror(rc_));                           \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    CHECK(px_initialize(&argc, &argv));
    int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : (int64_t)1 << 22;
    if (n < 1) {
        fprintf(stderr, "n must be >= 1\n");
        px_finalize();
        return 2;
    }
    px_space *s = px_default_space();
    px_space *host = px_space_by_name("serial");
    printf("space %s (concurrency %d), n = %" PRId64 "\n", px_space_name(s),
           px_space_concurrency(s), n);
    if (!px_space_by_name("cuda"))
        printf("no CUDA device here: the nvcc-built kernels run their host loops\n");

    size_t bytes = (size_t)n * sizeof(double);
    double *x = (double *)px_malloc(s, bytes), *y = (double *)px_malloc(s, bytes);
    int64_t *off = (int64_t *)px_malloc(s, (size_t)n * sizeof(int64_t));
    if (!x || !y || !off) {
        fprintf(stderr, "out of memory in space %s\n", px_space_name(s));
        return 1;
    }

    double t0 = now_s();
    fill_args fa = {x, y};
    CHECK(px_parallel_for(s, "fill", px_range(0, n), &fill, &fa, sizeof fa));
    axpy_args aa = {2.0, x, y};
    CHECK(px_parallel_for(s, "axpy", px_range(0, n), &axpy, &aa, sizeof aa));
    dot_args da = {x, y};
    double d = 0;
    CHECK(px_parallel_reduce(s, "dot", px_range(0, n), &dot, &da, sizeof da, &px_sum_f64, &d));
    offsets_args oa = {off};
    int64_t total = 0;
    CHECK(px_parallel_scan(s, "offsets", px_range(0, n), &offsets, &oa, sizeof oa, &px_sum_i64,
                           &total));
    CHECK(px_fence(s));
    double t1 = now_s();

    /* y[i] = i % 8 + 2, so x . y = sum(i % 8) + 2n. */
    double want = 2.0 * (double)n;
    int64_t full = n / 8, rest = n % 8;
    want += 28.0 * (double)full + (double)(rest * (rest - 1) / 2);
    int64_t want_total = 0;
    for (int64_t k = 0; k < 3; ++k)
        want_total += (n / 3 + (k < n % 3 ? 1 : 0)) * (k + 1);

    int64_t last = 0;
    CHECK(px_deep_copy(host, &last, s, off + (n - 1), sizeof last));
    int64_t want_last = want_total - ((n - 1) % 3 + 1);
    int ok = d == want && total == want_total && last == want_last;
    printf("dot = %.1f (want %.1f), scan total = %" PRId64 " (want %" PRId64 "), "
           "last offset = %" PRId64 " (want %" PRId64 "): %s in %.3f ms\n",
           d, want, total, want_total, last, want_last, ok ? "correct" : "WRONG", (t1 - t0) * 1e3);

    px_free(s, x);
    px_free(s, y);
    px_free(s, off);
    CHECK(px_finalize());
    return ok ? 0 : 1;
}
