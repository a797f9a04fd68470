/* bench/bench_kernel.c - the single-source macro path (PX_FOR / PX_REDUCE) against the
 * equivalent host function kernel (_fn), on the same space in the same run. The macro's host
 * entry inlines the body into the chunk loop; the _fn kernel is a hand-written chunk loop, which
 * is what a C programmer would write without the macros. Both should run at memory speed; the
 * ratio macro/_fn must be <= 1.0 (within noise). A plain serial loop is the baseline for the
 * serial space.
 *
 * Usage: bench_kernel [n] [reps]   (env: PX_* settings, e.g. PX_NUM_THREADS=2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#include "parex.h"

typedef struct {
    double alpha;
    const double *x;
    double *y;
} axpy_args;

PX_FOR(bench_axpy, axpy_args, i, a)
{
    a->y[i] += a->alpha * a->x[i];
}

typedef struct {
    const double *x;
    const double *y;
} dot_args;

PX_REDUCE(bench_dot, dot_args, double, i, a, acc)
{
    *acc += a->x[i] * a->y[i];
}

static void axpy_fn(int64_t b, int64_t e, void *ctx)
{
    axpy_args *a = ctx;
    double alpha = a->alpha;
    const double *x = a->x;
    double *y = a->y;
    for (int64_t i = b; i < e; ++i)
        y[i] += alpha * x[i];
}

static void dot_fn(int64_t b, int64_t e, void *ctx, void *acc)
{
    dot_args *a = ctx;
    double s = *(double *)acc;
    for (int64_t i = b; i < e; ++i)
        s += a->x[i] * a->y[i];
    *(double *)acc = s;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAX_REPS 101

int main(int argc, char **argv)
{
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    int64_t n = argc > 1 ? atoll(argv[1]) : (1 << 22);
    int reps = argc > 2 ? atoi(argv[2]) : 31;
    if (n < 1 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: bench_kernel [n >= 1] [1 <= reps <= %d]\n", MAX_REPS);
        px_finalize();
        return 2;
    }
    const char *names[] = {"serial", "threads"};
    printf("# bench_kernel n=%lld reps=%d: median (and fastest) seconds per launch;\n"
           "# ratio = macro / _fn of the medians, ratio_min of the fastest runs (the estimator\n"
           "# of the intrinsic cost on a machine shared with other work)\n",
           (long long)n, reps);
    printf("%-8s %-5s %22s %22s %22s %6s %9s\n", "space", "kernel", "macro_s", "fn_s", "plain_s",
           "ratio", "ratio_min");
    for (int si = 0; si < 2; ++si) {
        px_space *s = px_space_by_name(names[si]);
        if (!s)
            continue;
        double *x = px_malloc(s, (size_t)n * sizeof(double));
        double *y = px_malloc(s, (size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; ++i) {
            x[i] = 1.0 + (double)(i % 7);
            y[i] = 0.5;
        }
        axpy_args aa = {1e-9, x, y};
        dot_args da = {x, y};
        double tm[3][MAX_REPS], td[3][MAX_REPS];
        double sink = 0;
        /* Rotate the order of the variants from one repetition to the next, so that cache
         * state and drift hit all three equally. */
        for (int r = 0; r < reps; ++r) {
            for (int j = 0; j < 3; ++j) {
                int k = (j + r) % 3;
                double t0 = bench_now_s();
                if (k == 0)
                    px_parallel_for(s, "axpy_macro", px_range(0, n), &bench_axpy, &aa, sizeof aa);
                else if (k == 1)
                    px_parallel_for_fn(s, "axpy_fn", px_range(0, n), axpy_fn, &aa);
                else
                    for (int64_t i = 0; i < n; ++i)
                        y[i] += aa.alpha * x[i];
                tm[k][r] = bench_now_s() - t0;
            }
            for (int j = 0; j < 3; ++j) {
                int k = (j + r) % 3;
                double d = 0, t0 = bench_now_s();
                if (k == 0)
                    px_parallel_reduce(s, "dot_macro", px_range(0, n), &bench_dot, &da, sizeof da,
                                       &px_sum_f64, &d);
                else if (k == 1)
                    px_parallel_reduce_fn(s, "dot_fn", px_range(0, n), dot_fn, &da, &px_sum_f64,
                                          &d);
                else
                    for (int64_t i = 0; i < n; ++i)
                        d += x[i] * y[i];
                td[k][r] = bench_now_s() - t0;
                sink += d;
            }
        }
        for (int k = 0; k < 3; ++k) {
            qsort(tm[k], (size_t)reps, sizeof(double), cmp);
            qsort(td[k], (size_t)reps, sizeof(double), cmp);
        }
        int m = reps / 2;
        printf("%-8s %-5s %10.6f (%9.6f) %10.6f (%9.6f) %10.6f (%9.6f) %6.3f %9.3f\n", names[si],
               "axpy", tm[0][m], tm[0][0], tm[1][m], tm[1][0], tm[2][m], tm[2][0],
               tm[0][m] / tm[1][m], tm[0][0] / tm[1][0]);
        printf("%-8s %-5s %10.6f (%9.6f) %10.6f (%9.6f) %10.6f (%9.6f) %6.3f %9.3f\n", names[si],
               "dot", td[0][m], td[0][0], td[1][m], td[1][0], td[2][m], td[2][0],
               td[0][m] / td[1][m], td[0][0] / td[1][0]);
        if (sink == 42.0)
            printf("#\n");
        px_free(s, x);
        px_free(s, y);
    }
    px_finalize();
    return 0;
}
