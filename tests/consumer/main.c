/*
 * A downstream program built against an installed parex (tests/consumer/run.sh builds it with
 * find_package(Parex) and with pkg-config). It reduces on the default space with a single-source
 * kernel and with a host function, and checks both against the closed form.
 */
#include <stdio.h>
#include <stdlib.h>

#include <parex.h>

typedef struct {
    const double *x;
} sumsq_args;

/* sum of x[i]^2 with x[i] = i: a PX_REDUCE kernel compiled in the user's own file. */
PX_REDUCE(sumsq, sumsq_args, double, i, a, acc)
{
    *acc += a->x[i] * a->x[i];
}

static void count_fn(int64_t begin, int64_t end, void *ctx, void *acc)
{
    (void)ctx;
    *(int64_t *)acc += end - begin;
}

int main(int argc, char **argv)
{
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "px_initialize: %s\n", px_strerror(rc));
        return 1;
    }
    px_space *host = px_space_by_name("serial");
    px_space *space = px_default_space();
    if (!px_space_host_accessible(space))
        space = px_space_by_name("threads") ? px_space_by_name("threads") : host;
    const int64_t n = 1000;
    double *x = px_malloc(space, (size_t)n * sizeof *x);
    if (!x) {
        fprintf(stderr, "px_malloc failed\n");
        return 1;
    }
    for (int64_t i = 0; i < n; ++i)
        x[i] = (double)i;

    double s = -1.0;
    int64_t count = -1;
    sumsq_args args = {x};
    rc = px_parallel_reduce(space, "sumsq", px_range(0, n), &sumsq, &args, sizeof args, &px_sum_f64,
                            &s);
    if (rc == PX_OK)
        rc = px_parallel_reduce_fn(space, "count", px_range(0, n), count_fn, NULL, &px_sum_i64,
                                   &count);
    const double want = (double)(n - 1) * (double)n * (double)(2 * n - 1) / 6.0;
    int ok = rc == PX_OK && s == want && count == n;
    printf("parex %s consumer: sum of squares %.1f (expected %.1f), count %lld on %s: %s\n",
           PX_VERSION_STRING, s, want, (long long)count, px_space_name(space), ok ? "ok" : "WRONG");
    px_free(space, x);
    rc = px_finalize();
    return ok && rc == PX_OK ? 0 : 1;
}
