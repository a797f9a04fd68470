/* tests/cuda/consumer/main.cu - a downstream .cu program using parex's kernel macros: runs on
 * cuda when a GPU is present, on a host space otherwise; exit 0 when the results are right. */
#include <stdio.h>

#include "parex.h"

typedef struct {
    double *x;
} fill_args;

PX_FOR(consumer_fill, fill_args, i, a)
{
    a->x[i] = (double)i;
}

typedef struct {
    const double *x;
} sum_args;

PX_REDUCE(consumer_sum, sum_args, double, i, a, acc)
{
    *acc += a->x[i];
}

int main(int argc, char **argv)
{
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    px_space *s = px_default_space();
    const int64_t n = 4096;
    double *x = (double *)px_malloc(s, (size_t)n * sizeof(double));
    fill_args fa = {x};
    sum_args sa = {x};
    double sum = -1;
    int rc = px_parallel_for(s, "fill", px_range(0, n), &consumer_fill, &fa, sizeof fa);
    if (rc == PX_OK)
        rc = px_parallel_reduce(s, "sum", px_range(0, n), &consumer_sum, &sa, sizeof sa,
                                &px_sum_f64, &sum);
    printf("cuda consumer on %s: sum = %.1f (%s)\n", px_space_name(s), sum, px_strerror(rc));
    px_free(s, x);
    px_finalize();
    return rc == PX_OK && sum == (double)(n * (n - 1) / 2) ? 0 : 1;
}
