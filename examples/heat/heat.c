/* examples/heat/heat.c - parex-heat: the 2-D heat equation on MPI ranks x a parex space.
 *
 * u_t = u_xx + u_yy on the unit square with u = 0 on the boundary and
 * u(x, y, 0) = sin(pi x) sin(pi y), whose exact solution is that shape decaying as
 * exp(-2 pi^2 t). Explicit Euler on an n x n interior grid with h = 1 / (n + 1) and
 * dt = 0.2 h^2 (stable below 0.25 h^2).
 *
 * Distribution: the rows are split in contiguous blocks over the MPI ranks. With --halo engine
 * (the default) every step is a handful of engine ops ordered by Vars (parex/mpi.h): receives
 * of the two halo rows and sends of the two edge rows are posted as MPI ops, the interior rows
 * (2 .. nrows-1, which need no halo) are updated by a PX_FOR kernel op while the messages fly,
 * and the two edge rows by kernel ops that the engine starts once the halos arrived. The loop
 * only pushes; the engine and its MPI progress thread run it. With --halo sendrecv each step
 * exchanges the halos with blocking MPI_Sendrecv through a host buffer, then updates all rows
 * (the bulk-synchronous baseline; any space, cuda too). Every 100 steps the largest change is
 * a PX_REDUCE with px_max_f64 and an allreduce (an engine op with --halo engine). The field
 * update does not depend on the number of ranks, threads or the halo mode, so results agree bit
 * for bit across decompositions.
 *
 * Usage: mpirun -np R parex-heat [--n N] [--steps S] [--space NAME] [--halo engine|sendrecv]
 *        [--json] [--help]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parex.h"

typedef struct {
    const double *u; /* rows 0 .. nrows+1 (halos at 0 and nrows+1), n + 2 columns each */
    double *v;
    int64_t n; /* interior columns */
    double r;  /* dt / h^2 */
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

static const char usage_text[] =
    "usage: mpirun -np R parex-heat [--n N] [--steps S] [--space serial|threads|cuda]\n"
    "                               [--halo engine|sendrecv] [--json]\n"
    "  --n N        interior grid points per side, 2..100000 and at least R (default 256)\n"
    "  --steps S    explicit Euler steps, 1..1000000000 (default 500)\n"
    "  --space NAME execution space of the field (default threads)\n"
    "  --halo MODE  engine: halo rows as parex engine MPI ops overlapping the interior rows\n"
    "               (default; host-accessible spaces); sendrecv: blocking MPI_Sendrecv\n"
    "  --json       one JSON object on rank 0 (n, steps, ranks, space, threads, halo, seconds,\n"
    "               comm_seconds, max_abs_err against the exact solution, last_change)\n"
    "Exit status: 0 done, 1 error, 2 bad command line.\n";

static int usage(int rank, const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "parex-heat: %s\n%s", msg, usage_text);
    return 2;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Halo message time, measured by two tiny ops around each step's receives: one before them
 * (it writes the halo Vars, so it runs before they are posted) notes the time, one after them
 * (it reads the halo Vars) adds the time since to the total. Both write `clock_var`, so the
 * adds never run concurrently. */
typedef struct {
    double t_post[2]; /* by parity of the step */
    double total;     /* seconds from posting a step's receives to both halos being in */
} comm_clock;

typedef struct {
    comm_clock *c;
    int parity;
} clock_args;

static int clock_post(const px_run_context *rc, void *arg)
{
    (void)rc;
    clock_args *a = arg;
    a->c->t_post[a->parity] = now_s();
    return PX_OK;
}

static int clock_arrived(const px_run_context *rc, void *arg)
{
    (void)rc;
    clock_args *a = arg;
    a->c->total += now_s() - a->c->t_post[a->parity];
    return PX_OK;
}

static void check_push(int rc, int rank, const char *what)
{
    if (rc != PX_OK) {
        fprintf(stderr, "parex-heat: rank %d: %s failed: %s\n", rank, what, px_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* The engine time loop (see the top of the file). arr[0], arr[1]: the two fields (u is
 * arr[step & 1]); each has four Vars: its top and bottom halo rows, its edge rows (1 and
 * nrows) and its inner rows (2 .. nrows-1). Returns seconds spent, *comm the halo time. */
static double run_engine(px_space *s, double *arr[2], int64_t n, int64_t nrows, long steps,
                         double r, int up, int down, int rank, double *change, double *comm)
{
    px_engine *e = px_engine_default();
    int64_t w = n + 2;
    px_var *halo_top[2], *halo_bot[2], *edge[2], *inner[2];
    for (int c = 0; c < 2; ++c) {
        halo_top[c] = px_var_new(e);
        halo_bot[c] = px_var_new(e);
        edge[c] = px_var_new(e);
        inner[c] = px_var_new(e);
    }
    px_var *loc_var = px_var_new(e), *chg_var = px_var_new(e), *clock_var = px_var_new(e);
    comm_clock clk = {{0, 0}, 0};
    clock_args ca[2] = {{&clk, 0}, {&clk, 1}};
    px_context cpu = {PX_DEV_CPU, 0};
    double local = 0;
    *change = 0;
    double t0 = MPI_Wtime();
    for (long step = 0; step < steps; ++step) {
        int c = (int)(step & 1), d = 1 - c;
        double *u = arr[c], *v = arr[d];
        /* Tags by parity: a step's messages never match the next step's (parex/mpi.h). */
        int tag_down = 2 * c, tag_up = 2 * c + 1;
        px_var *halos[2] = {halo_top[c], halo_bot[c]};
        check_push(px_engine_push_sync(e, clock_post, &ca[c], cpu, NULL, 0, halos, 2, PX_FN_ASYNC,
                                       0, "halo_clock_post"),
                   rank, "push clock");
        if (up != MPI_PROC_NULL) {
            check_push(px_engine_push_mpi_irecv(e, u, (int)w, MPI_DOUBLE, up, tag_down,
                                                MPI_COMM_WORLD, halo_top[c]),
                       rank, "push irecv");
            check_push(px_engine_push_mpi_isend(e, u + w, (int)w, MPI_DOUBLE, up, tag_up,
                                                MPI_COMM_WORLD, edge[c]),
                       rank, "push isend");
        }
        if (down != MPI_PROC_NULL) {
            check_push(px_engine_push_mpi_irecv(e, u + (nrows + 1) * w, (int)w, MPI_DOUBLE, down,
                                                tag_up, MPI_COMM_WORLD, halo_bot[c]),
                       rank, "push irecv");
            check_push(px_engine_push_mpi_isend(e, u + nrows * w, (int)w, MPI_DOUBLE, down,
                                                tag_down, MPI_COMM_WORLD, edge[c]),
                       rank, "push isend");
        }
        px_var *clock_reads[2] = {halo_top[c], halo_bot[c]};
        check_push(px_engine_push_sync(e, clock_arrived, &ca[c], cpu, clock_reads, 2, &clock_var, 1,
                                       PX_FN_ASYNC, 0, "halo_clock_arrived"),
                   rank, "push clock");
        step_args sa = {u, v, n, r};
        /* Interior rows while the halos travel: they read the edge and inner rows only. */
        if (nrows > 2) {
            px_var *reads[2] = {edge[c], inner[c]};
            check_push(px_engine_push_parallel_for(e, s, "heat_interior", px_range(2, nrows),
                                                   &heat_step, &sa, sizeof sa, reads, 2, &inner[d],
                                                   1),
                       rank, "push interior");
        }
        /* Edge rows once the halos are in. */
        px_var *reads[4] = {halo_top[c], halo_bot[c], edge[c], inner[c]};
        check_push(px_engine_push_parallel_for(e, s, "heat_edge", px_range(1, 2), &heat_step, &sa,
                                               sizeof sa, reads, 4, &edge[d], 1),
                   rank, "push edge");
        if (nrows > 1)
            check_push(px_engine_push_parallel_for(e, s, "heat_edge", px_range(nrows, nrows + 1),
                                                   &heat_step, &sa, sizeof sa, reads, 4, &edge[d],
                                                   1),
                       rank, "push edge");
        if ((step + 1) % 100 == 0) {
            diff_args da = {u, v, n};
            px_var *all[4] = {edge[c], inner[c], edge[d], inner[d]};
            check_push(px_engine_push_parallel_reduce(e, s, "heat_change", px_range(1, nrows + 1),
                                                      &heat_change, &da, sizeof da, &px_max_f64,
                                                      &local, all, 4, &loc_var, 1),
                       rank, "push change");
            check_push(px_engine_push_mpi_allreduce(e, &local, change, 1, MPI_DOUBLE, MPI_MAX,
                                                    MPI_COMM_WORLD, loc_var, chg_var),
                       rank, "push allreduce");
        }
    }
    int rc = px_engine_wait_for_all(e);
    double seconds = MPI_Wtime() - t0;
    check_push(rc, rank, "the time loop");
    for (int c = 0; c < 2; ++c) {
        px_var_delete(e, halo_top[c]);
        px_var_delete(e, halo_bot[c]);
        px_var_delete(e, edge[c]);
        px_var_delete(e, inner[c]);
    }
    px_var_delete(e, loc_var);
    px_var_delete(e, chg_var);
    px_var_delete(e, clock_var);
    *comm = clk.total;
    return seconds;
}

int main(int argc, char **argv)
{
    /* MPI_THREAD_MULTIPLE: the engine posts messages from its threads (parex/mpi.h). */
    if (px_mpi_init(&argc, &argv) != PX_OK) {
        fprintf(stderr, "parex-heat: MPI could not be initialized at MPI_THREAD_MULTIPLE\n");
        return 1;
    }
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-heat: px_initialize: %s\n", px_strerror(rc));
        px_mpi_finalize();
        return 1;
    }
    int64_t n = 256;
    long steps = 500;
    const char *space_name = "threads", *halo_mode = "engine";
    int json = 0, status = 0;
    for (int i = 1; i < argc && status == 0; ++i) {
        char *end = NULL;
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            n = strtoll(argv[++i], &end, 10);
            if (*end || n < 2 || n > 100000)
                status = usage(rank, "--n must be an integer in [2, 100000]");
        } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps = strtol(argv[++i], &end, 10);
            if (*end || steps < 1 || steps > 1000000000L)
                status = usage(rank, "--steps must be an integer in [1, 1000000000]");
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (rank == 0)
                fputs(usage_text, stdout);
            px_finalize();
            px_mpi_finalize();
            return 0;
        } else if (strcmp(argv[i], "--space") == 0 && i + 1 < argc) {
            space_name = argv[++i];
        } else if (strcmp(argv[i], "--halo") == 0 && i + 1 < argc) {
            halo_mode = argv[++i];
            if (strcmp(halo_mode, "engine") != 0 && strcmp(halo_mode, "sendrecv") != 0)
                status = usage(rank, "--halo must be engine or sendrecv");
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
    int use_engine = strcmp(halo_mode, "engine") == 0;
    if (!status && use_engine && px_space_host_accessible(s) != 1) {
        /* MPI reads and writes the halo rows in place: not assuming a CUDA-aware MPI. */
        if (rank == 0)
            fprintf(stderr,
                    "parex-heat: --halo engine needs a host-accessible space; '%s' is "
                    "not (use --halo sendrecv)\n",
                    space_name);
        status = 1;
    }
    if (status) {
        px_finalize();
        px_mpi_finalize();
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

    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL,
        down = rank < nranks - 1 ? rank + 1 : MPI_PROC_NULL;
    double *halo = px_malloc(host, 4 * (size_t)w * sizeof(double));
    double change = 0, comm = 0, seconds = 0;
    if (use_engine) {
        double *arr[2] = {u, v};
        seconds = run_engine(s, arr, n, nrows, steps, dt / (h * h), up, down, rank, &change, &comm);
        u = arr[steps & 1];
        v = arr[1 - (steps & 1)];
    }
    double t0 = MPI_Wtime();
    for (long step = 0; !use_engine && step < steps; ++step) {
        double c0 = MPI_Wtime();
        /* Halo rows travel through host buffers so any space works. */
        px_deep_copy(host, halo, s, u + w, (size_t)w * sizeof(double));
        px_deep_copy(host, halo + w, s, u + nrows * w, (size_t)w * sizeof(double));
        memset(halo + 2 * w, 0, 2 * (size_t)w * sizeof(double));
        MPI_Sendrecv(halo, (int)w, MPI_DOUBLE, up, 0, halo + 3 * w, (int)w, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(halo + w, (int)w, MPI_DOUBLE, down, 1, halo + 2 * w, (int)w, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        px_deep_copy(s, u, host, halo + 2 * w, (size_t)w * sizeof(double));
        px_deep_copy(s, u + (nrows + 1) * w, host, halo + 3 * w, (size_t)w * sizeof(double));
        comm += MPI_Wtime() - c0;
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
    if (!use_engine)
        seconds = MPI_Wtime() - t0;

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
                   "\"threads\": %d, \"halo\": \"%s\", \"seconds\": %.6f, "
                   "\"comm_seconds\": %.6f, \"max_abs_err\": %.17e, \"last_change\": %.17e}\n",
                   (long long)n, steps, nranks, px_space_name(s), px_space_concurrency(s),
                   halo_mode, seconds, comm, gerr, change);
        else
            printf("parex-heat: %lld x %lld grid, %ld steps on %d rank(s) x %s(%d), %s halos: "
                   "%.3f s (halo messages %.3f s), max error vs exact %.3e\n",
                   (long long)n, (long long)n, steps, nranks, px_space_name(s),
                   px_space_concurrency(s), halo_mode, seconds, comm, gerr);
    }
    px_free(host, halo);
    px_free(host, hu);
    px_free(s, u);
    px_free(s, v);
    px_finalize();
    px_mpi_finalize();
    return 0;
}
