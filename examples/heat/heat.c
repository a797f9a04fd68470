/* examples/heat/heat.c - parex-heat: the 2-D heat equation on MPI ranks x a parex space.
 *
 * u_t = u_xx + u_yy on the unit square with u = 0 on the boundary and
 * u(x, y, 0) = sin(pi x) sin(pi y), whose exact solution is that shape decaying as
 * exp(-2 pi^2 t). Explicit Euler on an n x n interior grid with h = 1 / (n + 1) and
 * dt = 0.2 h^2 (stable below 0.25 h^2).
 *
 * Distribution: the rows are split in contiguous blocks over the MPI ranks; each step exchanges
 * one halo row with each neighbour (MPI_Sendrecv), then the rank's rows are updated by a PX_FOR
 * kernel on the chosen space (threads by default: MPI ranks x Threads), and the largest change
 * is a PX_REDUCE with px_max_f64 followed by MPI_Allreduce. The field update does not depend on
 * the number of ranks or threads, so results agree bit for bit across decompositions.
 *
 * Usage: mpirun -np R parex-heat [--n N] [--steps S] [--space NAME] [--json]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parex.h"

typedef struct {
    const double *u; /* rows 0 .. nrows+1 (halos at 0 and nrows+1), n + 2 columns each */
    double *v;
    int64_t n;       /* interior columns */
    double r;        /* dt / h^2 */
} step_args;

/* One interior row per index: rows 1 .. nrows of the local block. */
PX_FOR(heat_step, step_args, row, a)
{
    int64_t w = a->n + 2;
    const double *up = a->u + (row - 1) * w, *mid = a->u + row * w, *dn = a->u + (row + 1) * w;
    double *out = a->v + row * w;
    for (int64_t j = 1; j <= a->n; ++j)
        out[j] = mid[j] + a->r * (up[j] + dn[j] + mid[j - 1] + mid[j + 1] - 4.0 * mid[j]);
}

typedef struct {
    const double *u, *v;
    int64_t n;
} diff_args;

PX_REDUCE(heat_change, diff_args, double, row, a, acc)
{
    int64_t w = a->n + 2;
    for (int64_t j = 1; j <= a->n; ++j) {
        double d = fabs(a->v[row * w + j] - a->u[row * w + j]);
        if (d > *acc)
            *acc = d;
    }
}

static int usage(int rank, const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "parex-heat: %s\nusage: parex-heat [--n N>=2] [--steps S>=1] "
                        "[--space serial|threads|cuda] [--json]\n",
                msg);
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-heat: px_initialize: %s\n", px_strerror(rc));
        MPI_Finalize();
        return 1;
    }
    int64_t n = 256;
    long steps = 500;
    const char *space_name = "threads";
    int json = 0, status = 0;
    for (int i = 1; i < argc && status == 0; ++i) {
        char *end = NULL;
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            n = strtoll(argv[++i], &end, 10);
            if (*end || n < 2 || n > 100000)
                status = usage(rank, "--n must be an integer in [2, 100000]");
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = strtol(argv[++i], &end, 10);
            if (*end || steps < 1)
                status = usage(rank, "--steps must be a positive integer");
        } else if (strcmp(argv[i], "--space") == 0 && i + 1 < argc) {
            space_name = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else {
            status = usage(rank, "unknown or incomplete argument");
        }
    }
    px_space *s = status ? NULL : px_space_by_name(space_name);
    if (!status && !s) {
        if (rank == 0)
            fprintf(stderr, "parex-heat: space '%s' is not available\n", space_name);
        status = 1;
    }
    if (!status && n < nranks) {
        status = usage(rank, "--n must be at least the number of MPI ranks");
    }
    if (status) {
        px_finalize();
        MPI_Finalize();
        return status;
    }

    /* Rows [row0, row0 + nrows) of the global interior rows [0, n). */
    int64_t nrows = n / nranks + (rank < n % nranks), row0 = 0;
    for (int r = 0; r < rank; ++r)
        row0 += n / nranks + (r < n % nranks);
    int64_t w = n + 2;
    size_t bytes = (size_t)((nrows + 2) * w) * sizeof(double);
    px_space *host = px_space_by_name("serial");
    double *hu = px_malloc(host, bytes);
    double *u = px_malloc(s, bytes), *v = px_malloc(s, bytes);
    if (!hu || !u || !v) {
        fprintf(stderr, "parex-heat: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double h = 1.0 / (double)(n + 1), dt = 0.2 * h * h;
    memset(hu, 0, bytes);
    for (int64_t i = 1; i <= nrows; ++i)
        for (int64_t j = 1; j <= n; ++j)
            hu[i * w + j] = sin(M_PI * (double)(row0 + i) * h) * sin(M_PI * (double)j * h);
    px_deep_copy(s, u, host, hu, bytes);
    px_deep_copy(s, v, host, hu, bytes);

    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;
    double *halo = px_malloc(host, 4 * (size_t)w * sizeof(double));
    double t0 = MPI_Wtime(), change = 0;
    for (long step = 0; step < steps; ++step) {
        /* Halo rows travel through host buffers so any space works. */
        px_deep_copy(host, halo, s, u + w, (size_t)w * sizeof(double));
        px_deep_copy(host, halo + w, s, u + nrows * w, (size_t)w * sizeof(double));
        memset(halo + 2 * w, 0, 2 * (size_t)w * sizeof(double));
        MPI_Sendrecv(halo, (int)w, MPI_DOUBLE, up, 0, halo + 3 * w, (int)w, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(halo + w, (int)w, MPI_DOUBLE, down, 1, halo + 2 * w, (int)w, MPI_DOUBLE, up,
                     1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        px_deep_copy(s, u, host, halo + 2 * w, (size_t)w * sizeof(double));
        px_deep_copy(s, u + (nrows + 1) * w, host, halo + 3 * w, (size_t)w * sizeof(double));
        step_args sa = {u, v, n, dt / (h * h)};
        rc = px_parallel_for(s, "heat_step", px_range(1, nrows + 1), &heat_step, &sa, sizeof sa);
        if (rc == PX_OK && (step + 1) % 100 == 0) {
            diff_args da = {u, v, n};
            double local = 0;
            rc = px_parallel_reduce(s, "heat_change", px_range(1, nrows + 1), &heat_change, &da,
                                    sizeof da, &px_max_f64, &local);
            MPI_Allreduce(&local, &change, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        if (rc != PX_OK) {
            fprintf(stderr, "parex-heat: rank %d: launch failed: %s\n", rank, px_strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double *t = u;
        u = v;
        v = t;
    }
    px_fence(s);
    double seconds = MPI_Wtime() - t0;

    /* Error against the exact solution at t = steps * dt. */
    px_deep_copy(host, hu, s, u, bytes);
    double decay = exp(-2.0 * M_PI * M_PI * dt * (double)steps), err = 0, gerr = 0;
    for (int64_t i = 1; i <= nrows; ++i)
        for (int64_t j = 1; j <= n; ++j) {
            double exact = decay * sin(M_PI * (double)(row0 + i) * h) * sin(M_PI * (double)j * h);
            double d = fabs(hu[i * w + j] - exact);
            err = d > err ? d : err;
        }
    MPI_Reduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (json)
            printf("{\"n\": %lld, \"steps\": %ld, \"ranks\": %d, \"space\": \"%s\", "
                   "\"threads\": %d, \"seconds\": %.6f, \"max_abs_err\": %.6e, "
                   "\"last_change\": %.6e}\n",
                   (long long)n, steps, nranks, px_space_name(s), px_space_concurrency(s), seconds,
                   gerr, change);
        else
            printf("parex-heat: %lld x %lld grid, %ld steps on %d rank(s) x %s(%d): %.3f s, "
                   "max error vs exact %.3e\n",
                   (long long)n, (long long)n, steps, nranks, px_space_name(s),
                   px_space_concurrency(s), seconds, gerr);
    }
    px_free(host, halo);
    px_free(host, hu);
    px_free(s, u);
    px_free(s, v);
    px_finalize();
    MPI_Finalize();
    return 0;
}
