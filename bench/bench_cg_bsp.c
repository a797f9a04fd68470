/*
 * bench/bench_cg_bsp.c - the bulk-synchronous MPI+OpenMP baseline for parex's distributed CG
 * (issue 15, "Benchmarks and the model"): the HPCG problem on a 3-D process grid, a blocking
 * halo exchange completed before every SpMV, MPI_Allreduce for the dot products and OpenMP
 * loops (static schedules) for the local work. Nothing overlaps: that is the point of it.
 *
 *   mpirun -np P bench_cg_bsp [--grid N | --local NX,NY,NZ] [--procs PX,PY,PZ]
 *                             [--iters K | --tol X [--max-iters M]] [--json]
 *   mpirun -np P bench_cg_bsp --matrix FILE.mtx [--partition block|metis] [...]
 *   mpirun -np P bench_cg_bsp --independent [--grid N | --local NX,NY,NZ] [...]
 *
 *   --grid N          each rank owns N^3 points (weak scaling, as HPCG and parex-cg --grid);
 *                     --grid NXxNYxNZ is --local NX,NY,NZ
 *   --local NX,NY,NZ  each rank owns an NX x NY x NZ box
 *   --procs PX,PY,PZ  a check only: the process grid must be cgp_process_grid's for P ranks
 *                     (the one parex-cg uses), else exit status 2
 *   --iters K         exactly K iterations, whatever the residual (for timing)
 *   --tol X           stop when ||r||/||b|| < X (default 1e-8), at most --max-iters (20000)
 *   --matrix FILE     a Matrix Market file (square) instead of HPCG, read by every rank and
 *                     split by --partition: block (default; contiguous row blocks) or metis
 *                     (METIS_PartGraphKway). b = A * ones, x0 = 0 as for HPCG. Strong scaling
 *                     of the HPCG G^3 problem: its Matrix Market file with --partition block
 *                     (run_dcg.sh writes it), as parex-cg.
 *   --cg VARIANT      plain (default: the loop below), pipelined or pipelined-nb: Ghysels and
 *                     Vanroose's pipelined CG, one allreduce of {r.r, w.r} an iteration started
 *                     before the halo exchange and the SpMV, blocking (pipelined) or an
 *                     MPI_Iallreduce waited for after the SpMV (pipelined-nb); see
 *                     solve_pipelined. An experiment on the cost of synchronization points
 *                     (bench/RESULTS.md, session 12), not what parex-cg runs. Its recurrences
 *                     lose accuracy: past convergence (--iters) and on ill-conditioned matrices
 *                     (1138_bus) they can break down (exit status 1, "breakdown" message).
 *   --omp-one-thread  enter the OpenMP regions on one thread too, and the small halo's
 *                     pack region (the program before session 24: "Loops" below); JSON
 *                     omp_regions says whether the loops ran in regions
 *   --independent     every rank solves its own single-rank HPCG box (MPI_COMM_SELF: no halo,
 *                     allreduces of one rank), the P loops started together after a barrier:
 *                     the single-rank rate while P such ranks load the node, bound as mpirun
 *                     binds them (bench/run_dcg.sh's calibration of bench/cg_model.py). The
 *                     JSON's ranks is 1, instances P, seconds_per_iter the slowest instance's
 *                     and instance_seconds_per_iter every instance's. Not with --matrix/--procs.
 *
 * Same partition, same code: the rows, the local numbering (interior rows first, then boundary
 * rows; halo values after the owned ones, one block per neighbour) and the halo maps come from
 * examples/cg/partition.c (cgp_hpcg: the HPCG problem on cgp_process_grid's 3-D process grid,
 * 27-point stencil, 26 on the diagonal, -1 off it; cgp_from_csr: block or METIS parts of a
 * general matrix), the very functions parex-cg calls. Plain CG, the same fused kernels and
 * stopping rule as examples/cg/cg.c and bench/bench_cg_omp.c: SpMV folding p.Ap, residual update
 * folding r.r, x and p updated together; two allreduces of one double per iteration.
 *
 * Halo: each iteration posts every MPI_Irecv (neighbour k's values land in its halo block),
 * packs the send lists (OpenMP when large), MPI_Isend, MPI_Waitall, then the whole SpMV.
 *
 * Output (rank 0 only): one line of text and, with --json, a JSON object as the last line:
 * cg (the variant), ranks, threads_per_rank, omp_regions (the loops ran in OpenMP regions), procs,
 * local, global, n (global rows), nnz, iterations, converged, relres, max_abs_err, seconds
 * (iteration loop, slowest rank), seconds_per_iter, first_iters_seconds (rank 0's first 8
 * iterations' times, or as many as ran, each from the end of the one before), halo_seconds and
 * allreduce_seconds (time inside the halo exchange / the allreduces over the loop, mean over ranks;
 * _max: slowest rank; both include waiting for the slower peers), halo_seconds_per_iter,
 * allreduce_seconds_per_iter, compute_seconds_per_iter (the rest), halo_bytes and halo_messages
 * (sent per iteration, all ranks together), halo_bytes_max_rank, setup_seconds.
 *
 * Loops. With two or more threads every loop is an OpenMP parallel for (static schedule). On one
 * thread (omp_get_max_threads() == 1) the set-up's and the solve's run as plain loops on the
 * master, outside any OpenMP region, as an MPI-only code runs them: libgomp ends every region,
 * also a one-thread one or one whose if clause is false, with a futex wake, a system call, and
 * under the hypervisor of session 24's VM a system call costs about 1 us and a one-thread
 * region 1.2-2 (bench/RESULTS.md): the 4 regions of a plain iteration (the small halo's pack, whose
 * if clause is false, among them) took a one-rank 1138_bus iteration from 3.5 to 8-12 us. A
 * baseline should not lose time that parex, whose pool makes no system call on this path, does not.
 * --omp-one-thread keeps the regions (the program as it was), to compare.
 *
 * Exit status: 0 converged (or --iters done); 1 error; 2 bad command line; 3 not converged.
 * MPI thread level: MPI_THREAD_FUNNELED (only the master thread calls MPI).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cg_spmv_rows.h"
#include "mmio.h"
#include "partition.h"

#define PROG "bench_cg_bsp"

static int g_rank = 0;
/* The loops run inside OpenMP regions (BSP_FOR): more than one thread, or --omp-one-thread
 * (g_omp_always, which also keeps the small halo's one-thread pack region). */
static int g_omp = 1, g_omp_always = 0;

#define BSP_STR(x) #x
/* for (int64_t I = 0; I < N; I++) BODY (the remaining arguments: a compound statement, commas
 * allowed), as an OpenMP parallel for with a static schedule and CLAUSES (e.g.
 * reduction(+ : s), or nothing) when g_omp, else on the calling thread with no region (the
 * header's "Loops"). */
#define BSP_FOR(CLAUSES, I, N, ...)                                                                \
    do {                                                                                           \
        if (g_omp) {                                                                               \
            _Pragma(BSP_STR(omp parallel for schedule(static) CLAUSES)) for (int64_t I = 0;        \
                                                                             I < (N); I++)         \
                __VA_ARGS__                                                                        \
        } else {                                                                                   \
            for (int64_t I = 0; I < (N); I++)                                                      \
                __VA_ARGS__                                                                        \
        }                                                                                          \
    } while (0)
/* The solve's communicator: MPI_COMM_WORLD, or MPI_COMM_SELF with --independent. */
static MPI_Comm g_comm = MPI_COMM_WORLD;

/* posix_memalign(64) or MPI_Abort with a message; never NULL. */
static void *xmalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) {
        fprintf(stderr, PROG ": out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* ---- the partition (examples/cg/partition.h, as parex-cg) ------------------------------- */

/* This rank's rows and halo map (part) and the exchange's buffers: neighbour m's values land
 * in p[n_local + recv_ptr[m] ..], it gets p[send_idx[send_ptr[m] ..]] packed into send_buf. */
typedef struct {
    cgp_part part;
    double *send_buf;
    MPI_Request *req; /* 2 n_neighbors */
} halo;

/* ---- communication ----------------------------------------------------------------------- */

typedef struct {
    double halo_s, allreduce_s;
} comm_times;

/* Blocking halo exchange of p (n_local owned values followed by the halo). */
static void exchange(halo *h, double *p, comm_times *t)
{
    const cgp_part *pt = &h->part;
    const int nnb = pt->n_neighbors;
    const double t0 = bench_now_s();
    for (int m = 0; m < nnb; m++)
        MPI_Irecv(p + pt->n_local + pt->recv_ptr[m], (int)(pt->recv_ptr[m + 1] - pt->recv_ptr[m]),
                  MPI_DOUBLE, pt->neighbor[m], 0, g_comm, &h->req[m]);
    const int64_t ns = pt->send_ptr[nnb];
    const int32_t *restrict idx = pt->send_idx;
    double *restrict buf = h->send_buf;
    /* A fork-join costs more than packing a few thousand values: a small halo is packed by
     * the master alone, outside any region (a baseline should not lose time the parex version
     * does not; a false if clause still enters a one-thread region: "Loops" above), except
     * with --omp-one-thread, which keeps the region of the program before session 24. */
    if (g_omp && (ns >= 8192 || g_omp_always)) {
#pragma omp parallel for schedule(static) if (ns >= 8192)
        for (int64_t s = 0; s < ns; s++)
            buf[s] = p[idx[s]];
    } else {
        for (int64_t s = 0; s < ns; s++)
            buf[s] = p[idx[s]];
    }
    for (int m = 0; m < nnb; m++)
        MPI_Isend(buf + pt->send_ptr[m], (int)(pt->send_ptr[m + 1] - pt->send_ptr[m]), MPI_DOUBLE,
                  pt->neighbor[m], 0, g_comm, &h->req[nnb + m]);
    MPI_Waitall(2 * nnb, h->req, MPI_STATUSES_IGNORE);
    t->halo_s += bench_now_s() - t0;
}

static double allreduce_sum(double v, comm_times *t)
{
    const double t0 = bench_now_s();
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, g_comm);
    t->allreduce_s += bench_now_s() - t0;
    return v;
}

/* ---- solver ------------------------------------------------------------------------------ */

/* How many of the first iterations a solve times one by one (JSON first_iters_seconds, as
 * parex-cg's). */
#define FIRST_ITERS 8

typedef struct {
    int64_t iterations;
    int converged, breakdown;
    double relres, max_abs_err, seconds;
    comm_times comm;
    double first[FIRST_ITERS]; /* the first n_first iterations' times, seconds */
    int n_first;
    double t_mark; /* the clock at the last iteration's end (or the solve's start) */
} result;

/* Keep the iteration that ends now among the first ones' times. */
static void note_iteration(result *res)
{
    if (res->n_first >= FIRST_ITERS)
        return;
    const double t = bench_now_s();
    res->first[res->n_first++] = t - res->t_mark;
    res->t_mark = t;
}

typedef struct {
    double *b, *x, *r, *p, *ap;
} vectors;

/* b = A * ones (rows sums: the halo columns stand for ones too), x = 0, r = p = b;
 * returns the global ||b||^2. */
static double cg_init(const cgp_part *A, vectors *v, comm_times *t)
{
    const int64_t n = A->n_local, nghost = A->n_ext - A->n_local;
    v->b = xmalloc((size_t)n * sizeof(double));
    v->x = xmalloc((size_t)n * sizeof(double));
    v->r = xmalloc((size_t)n * sizeof(double));
    v->ap = xmalloc((size_t)n * sizeof(double));
    v->p = xmalloc((size_t)(n + nghost) * sizeof(double));
    double bb = 0.0;
    BSP_FOR(reduction(+ : bb), i, n, {
        double s = 0.0;
        for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
            s += A->val[k];
        v->b[i] = s;
        v->x[i] = 0.0;
        v->r[i] = s;
        v->p[i] = s;
        bb += s * s;
    });
    for (int64_t i = n; i < n + nghost; i++)
        v->p[i] = 0.0;
    return allreduce_sum(bb, t);
}

/* y = A v on the local rows; returns this rank's v.y. parex-cg's host SpMV loop
 * (cg_spmv_rows.h, four rows at a time) on each thread's static block of rows, so that both
 * programs run the same loop and the comparison measures the runtime; the per-row sums are
 * bitwise those of the one-row-at-a-time loop. */
static double spmv(const cgp_part *A, const double *v, double *y)
{
    const int64_t n = A->n_local;
    if (!g_omp)
        return cg_spmv_rows(0, n, A->row_ptr, A->col, A->val, v, y, 0.0);
    double vy = 0.0;
#pragma omp parallel reduction(+ : vy)
    {
        const int64_t nt = omp_get_num_threads(), me = omp_get_thread_num();
        vy += cg_spmv_rows(n * me / nt, n * (me + 1) / nt, A->row_ptr, A->col, A->val, v, y, 0.0);
    }
    return vy;
}

/* One SpMV with the fused p.Ap, after the blocking halo exchange of p; returns global p.Ap. */
static double spmv_dot(halo *h, vectors *v, comm_times *t)
{
    exchange(h, v->p, t);
    return allreduce_sum(spmv(&h->part, v->p, v->ap), t);
}

/* max |x - 1| over the ranks into res, then free the vectors. */
static void finish_solve(vectors *v, int64_t n, result *res)
{
    const double *restrict x = v->x;
    double err = 0.0;
    /* after the clock: one region even on one thread */
#pragma omp parallel for schedule(static) reduction(max : err)
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs(x[i] - 1.0);
        err = d > err ? d : err;
    }
    MPI_Allreduce(&err, &res->max_abs_err, 1, MPI_DOUBLE, MPI_MAX, g_comm);
    free(v->b);
    free(v->x);
    free(v->r);
    free(v->p);
    free(v->ap);
}

/* fixed_iters > 0: exactly that many iterations; else until relres < tol or max_iters. */
static void solve(halo *h, double tol, int64_t max_iters, int64_t fixed_iters, result *res)
{
    vectors v;
    const int64_t n = h->part.n_local;
    const double bb = cg_init(&h->part, &v, &res->comm);
    double *restrict x = v.x, *restrict r = v.r, *restrict p = v.p;
    const double *restrict ap = v.ap;
    const double bnorm = sqrt(bb);
    double rr = bb;
    res->relres = sqrt(rr) / bnorm;
    memset(&res->comm, 0, sizeof res->comm);
    const int64_t limit = fixed_iters > 0 ? fixed_iters : max_iters;
    int64_t it = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = bench_now_s();
    res->t_mark = t0;
    while ((fixed_iters > 0 || res->relres >= tol) && it < limit) {
        const double pap = spmv_dot(h, &v, &res->comm);
        if (!(pap > 0.0)) {
            res->breakdown = 1;
            if (g_rank == 0)
                fprintf(stderr, PROG ": breakdown, p.Ap = %g at iteration %lld\n", pap,
                        (long long)it + 1);
            break;
        }
        const double alpha = rr / pap;
        double rr_loc = 0.0;
        BSP_FOR(reduction(+ : rr_loc), i, n, {
            const double ri = r[i] - alpha * ap[i];
            r[i] = ri;
            rr_loc += ri * ri;
        });
        const double rr_new = allreduce_sum(rr_loc, &res->comm);
        it++;
        res->relres = sqrt(rr_new) / bnorm;
        /* rr == 0: solved exactly (tiny grids), a further step would divide by zero */
        if ((fixed_iters == 0 && res->relres < tol) || it == limit || !(rr_new > 0.0)) {
            BSP_FOR(, i, n, { x[i] += alpha * p[i]; });
            note_iteration(res);
            break;
        }
        const double beta = rr_new / rr;
        rr = rr_new;
        BSP_FOR(, i, n, {
            const double pi = p[i];
            x[i] += alpha * pi;
            p[i] = r[i] + beta * pi;
        });
        note_iteration(res);
    }
    res->seconds = bench_now_s() - t0;
    res->iterations = it;
    res->converged = res->relres < tol;
    finish_solve(&v, n, res);
}

/* ---- pipelined CG (--cg pipelined | pipelined-nb) ----------------------------------------- */

/* The variant's loop (--cg), named as cg_variant_names spells it on the command line and in the
 * JSON. */
typedef enum { CG_PLAIN = 0, CG_PIPELINED, CG_PIPELINED_NB } cg_variant;
static const char *const cg_variant_names[] = {"plain", "pipelined", "pipelined-nb"};

/* The pipelined recurrences' vectors besides x, r and p (vectors): w = A r with its halo
 * (n_ext), z = A s, s = A p, and nw = A w (the SpMV the allreduce overlaps). */
typedef struct {
    double *w, *z, *s, *nw;
} pipe_vectors;

/* One pipelined update (Ghysels and Vanroose's p-CG, lines 9-16) with the next iteration's
 * local sums {r.r, w.r} in loc. */
static void pipe_update(int64_t n, double alpha, double beta, vectors *v, pipe_vectors *q,
                        double loc[2])
{
    double *restrict x = v->x, *restrict r = v->r, *restrict p = v->p;
    double *restrict w = q->w, *restrict z = q->z, *restrict s = q->s;
    const double *restrict nw = q->nw;
    double rr = 0.0, wr = 0.0;
    BSP_FOR(reduction(+ : rr, wr), i, n, {
        const double zi = nw[i] + beta * z[i], si = w[i] + beta * s[i], pi = r[i] + beta * p[i];
        z[i] = zi;
        s[i] = si;
        p[i] = pi;
        x[i] += alpha * pi;
        const double ri = r[i] - alpha * si, wi = w[i] - alpha * zi;
        r[i] = ri;
        w[i] = wi;
        rr += ri * ri;
        wr += wi * ri;
    });
    loc[0] = rr;
    loc[1] = wr;
}

/* Pipelined CG (Ghysels and Vanroose 2014, unpreconditioned p-CG; PETSc's KSPPIPECG): one
 * allreduce of {r.r, w.r} per iteration instead of two, started before the halo exchange and
 * the SpMV nw = A w, so that it can overlap them. CG_PIPELINED calls MPI_Allreduce there
 * (bulk-synchronous, one synchronization point fewer than plain CG); CG_PIPELINED_NB posts
 * MPI_Iallreduce and waits for it after the SpMV (Open MPI, which has no progress thread,
 * advances it inside the exchange's MPI_Waitall and the final MPI_Wait). Same stopping rule as
 * solve() on the recursively updated residual, tested when the allreduce of r_i.r_i arrives
 * (so the last iteration's SpMV is spent); in exact arithmetic the iterates are plain CG's. */
static void solve_pipelined(halo *h, cg_variant var, double tol, int64_t max_iters,
                            int64_t fixed_iters, result *res)
{
    vectors v;
    pipe_vectors q;
    const cgp_part *A = &h->part;
    const int64_t n = A->n_local, nx = A->n_ext;
    const double bnorm = sqrt(cg_init(A, &v, &res->comm));
    q.w = xmalloc((size_t)nx * sizeof(double));
    q.z = xmalloc((size_t)n * sizeof(double));
    q.s = xmalloc((size_t)n * sizeof(double));
    q.nw = xmalloc((size_t)n * sizeof(double));
    exchange(h, v.p, &res->comm); /* p = r = b: w = A r */
    spmv(A, v.p, q.w);
    for (int64_t i = n; i < nx; i++)
        q.w[i] = 0.0;
    /* z = s = p = 0 so that the first update (beta = 0) starts the directions afresh */
    memset(q.z, 0, (size_t)n * sizeof(double));
    memset(q.s, 0, (size_t)n * sizeof(double));
    memset(v.p, 0, (size_t)n * sizeof(double));
    const double *restrict r = v.r, *restrict w = q.w;
    double rr = 0.0, wr = 0.0;
    BSP_FOR(reduction(+ : rr, wr), i, n, {
        rr += r[i] * r[i];
        wr += w[i] * r[i];
    });
    double loc[2] = {rr, wr}, glob[2];
    memset(&res->comm, 0, sizeof res->comm);
    const int64_t limit = fixed_iters > 0 ? fixed_iters : max_iters;
    int64_t it = 0;
    double gamma_old = 1.0, alpha_old = 1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = bench_now_s();
    res->t_mark = t0;
    for (;;) {
        MPI_Request rq = MPI_REQUEST_NULL;
        double ta = bench_now_s();
        if (var == CG_PIPELINED_NB)
            MPI_Iallreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, g_comm, &rq);
        else
            MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, g_comm);
        res->comm.allreduce_s += bench_now_s() - ta;
        exchange(h, q.w, &res->comm);
        spmv(A, q.w, q.nw);
        ta = bench_now_s();
        MPI_Wait(&rq, MPI_STATUS_IGNORE); /* MPI_REQUEST_NULL: returns at once */
        res->comm.allreduce_s += bench_now_s() - ta;
        const double gamma = glob[0], delta = glob[1];
        res->relres = sqrt(gamma) / bnorm;
        /* gamma == 0: solved exactly (tiny grids), a further step would divide by zero */
        if ((fixed_iters == 0 && res->relres < tol) || it == limit || !(gamma > 0.0))
            break;
        const double beta = it > 0 ? gamma / gamma_old : 0.0;
        const double alpha = gamma / (it > 0 ? delta - beta * gamma / alpha_old : delta);
        if (!(alpha > 0.0) || !isfinite(alpha)) {
            res->breakdown = 1;
            if (g_rank == 0)
                fprintf(stderr, PROG ": breakdown, alpha = %g at iteration %lld\n", alpha,
                        (long long)it + 1);
            break;
        }
        gamma_old = gamma;
        alpha_old = alpha;
        pipe_update(n, alpha, beta, &v, &q, loc);
        it++;
        note_iteration(res);
    }
    res->seconds = bench_now_s() - t0;
    res->iterations = it;
    res->converged = res->relres < tol;
    finish_solve(&v, n, res);
    free(q.w);
    free(q.z);
    free(q.s);
    free(q.nw);
}

/* ---- command line ------------------------------------------------------------------------ */

typedef struct {
    const char *matrix; /* NULL: the HPCG problem */
    int metis;
    int64_t local[3];
    int procs[3];
    int have_procs, json, independent, omp_one_thread;
    cg_variant variant;
    int64_t fixed_iters, max_iters;
    double tol;
} cli;

/* Rank 0 prints "bench_cg_bsp: <message> (usage ...)"; returns the usage status 2. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    if (g_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, PROG ": ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, " (usage in bench/bench_cg_bsp.c's header)\n");
        va_end(ap);
    }
    return 2;
}

/* Strict integer in [lo, hi]: the whole string, no sign games, no overflow. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    if (!s || !*s)
        return 0;
    const long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* "A<sep>B<sep>C" with each in [lo, hi]. */
static int parse_triple(const char *s, char sep, int64_t lo, int64_t hi, int64_t out[3])
{
    char buf[96];
    if (!s || strlen(s) >= sizeof buf)
        return 0;
    strcpy(buf, s);
    char *a = buf, *b = strchr(a, sep);
    if (!b)
        return 0;
    *b++ = '\0';
    char *c = strchr(b, sep);
    if (!c)
        return 0;
    *c++ = '\0';
    return parse_int(a, lo, hi, &out[0]) && parse_int(b, lo, hi, &out[1]) &&
           parse_int(c, lo, hi, &out[2]);
}

static int parse_cli(int argc, char **argv, cli *c)
{
    memset(c, 0, sizeof *c);
    c->local[0] = c->local[1] = c->local[2] = 16;
    c->max_iters = 20000;
    c->tol = 1e-8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t t[3];
        if (strcmp(a, "--json") == 0) {
            c->json = 1;
            continue;
        }
        if (strcmp(a, "--independent") == 0) {
            c->independent = 1;
            continue;
        }
        if (strcmp(a, "--omp-one-thread") == 0) {
            c->omp_one_thread = 1;
            continue;
        }
        if (!v)
            return usage_error("bad or valueless argument '%s'", a);
        i++;
        if (strcmp(a, "--matrix") == 0) {
            c->matrix = v;
        } else if (strcmp(a, "--cg") == 0) {
            int k = CG_PIPELINED_NB;
            while (k >= 0 && strcmp(v, cg_variant_names[k]) != 0)
                k--;
            if (k < 0)
                return usage_error("--cg '%s' is not plain, pipelined or pipelined-nb", v);
            c->variant = (cg_variant)k;
        } else if (strcmp(a, "--partition") == 0) {
            if (strcmp(v, "block") != 0 && strcmp(v, "metis") != 0)
                return usage_error("--partition '%s' is not block or metis", v);
            c->metis = strcmp(v, "metis") == 0;
        } else if (strcmp(a, "--grid") == 0) {
            if (strchr(v, 'x')) {
                if (!parse_triple(v, 'x', 1, 1290, c->local))
                    return usage_error("--grid '%s' is not NXxNYxNZ with each in 1..1290", v);
            } else if (!parse_int(v, 1, 1290, &t[0])) {
                return usage_error("--grid '%s' is not an integer in 1..1290", v);
            } else {
                c->local[0] = c->local[1] = c->local[2] = t[0];
            }
        } else if (strcmp(a, "--local") == 0) {
            if (!parse_triple(v, ',', 1, 1290, c->local))
                return usage_error("--local '%s' is not NX,NY,NZ with each in 1..1290", v);
        } else if (strcmp(a, "--procs") == 0) {
            if (!parse_triple(v, ',', 1, 1 << 20, t))
                return usage_error("--procs '%s' is not PX,PY,PZ of positive integers", v);
            c->procs[0] = (int)t[0], c->procs[1] = (int)t[1], c->procs[2] = (int)t[2];
            c->have_procs = 1;
        } else if (strcmp(a, "--iters") == 0) {
            if (!parse_int(v, 1, INT32_MAX, &c->fixed_iters))
                return usage_error("--iters '%s' is not a positive integer", v);
        } else if (strcmp(a, "--max-iters") == 0) {
            if (!parse_int(v, 1, INT32_MAX, &c->max_iters))
                return usage_error("--max-iters '%s' is not a positive integer", v);
        } else if (strcmp(a, "--tol") == 0) {
            char *end = NULL;
            c->tol = strtod(v, &end);
            if (*end != '\0' || !(c->tol > 0.0 && c->tol < 1.0))
                return usage_error("--tol '%s' is not a number in (0, 1)", v);
        } else {
            return usage_error("unknown argument '%s'", a);
        }
    }
    if (c->independent && (c->matrix || c->have_procs))
        return usage_error("--independent solves HPCG boxes: not with --matrix or --procs");
    return 0;
}

/* ---- main -------------------------------------------------------------------------------- */

/* The process grid of the partition (cgp_process_grid); 0, or 2 (message printed) when
 * --procs names another one. */
static int check_procs(const cli *c, int P, int dims[3])
{
    cgp_process_grid(P, dims);
    if (!c->have_procs)
        return 0;
    if ((int64_t)c->procs[0] * c->procs[1] * c->procs[2] != P)
        return usage_error("--procs %dx%dx%d does not make %d ranks", c->procs[0], c->procs[1],
                           c->procs[2], P);
    if (c->matrix)
        return usage_error("--procs applies to the HPCG problem, not to --matrix");
    if (c->procs[0] != dims[0] || c->procs[1] != dims[1] || c->procs[2] != dims[2])
        return usage_error("--procs %dx%dx%d is not the process grid %dx%dx%d of %d ranks that "
                           "examples/cg/partition.c (and parex-cg) use",
                           c->procs[0], c->procs[1], c->procs[2], dims[0], dims[1], dims[2], P);
    return 0;
}

/* Rank 0 prints the text line and the JSON. */
static void report(const cli *c, const int dims[3], const halo *h, const result *res,
                   double setup_s)
{
    const cgp_part *pt = &h->part;
    double loc[6] = {res->comm.halo_s,
                     res->comm.allreduce_s,
                     res->seconds,
                     (double)pt->send_ptr[pt->n_neighbors] * 8.0,
                     (double)pt->n_neighbors,
                     (double)pt->nnz};
    double sum[6], mx[6];
    MPI_Reduce(loc, sum, 6, MPI_DOUBLE, MPI_SUM, 0, g_comm);
    MPI_Reduce(loc, mx, 6, MPI_DOUBLE, MPI_MAX, 0, g_comm);
    /* The first iterations' times are rank 0's: a largest over ranks entry by entry could add
     * up to more than seconds, each entry's maximum on another rank. */
    const double *first = res->first;
    char firsts[FIRST_ITERS * 16 + 4] = "";
    for (int k = 0, len = 0; k < res->n_first && len >= 0 && (size_t)len < sizeof firsts; k++)
        len +=
            snprintf(firsts + len, sizeof firsts - (size_t)len, "%s%.6g", k ? ", " : "", first[k]);
    const double P = pt->nranks, it = res->iterations ? (double)res->iterations : 1.0;
    /* --independent: every instance's seconds per iteration, the slowest taken as the rate */
    char inst[4096] = "";
    if (c->independent) {
        int w = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &w);
        double mine = res->seconds / it, *all = xmalloc((size_t)w * sizeof(double));
        MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        int len =
            snprintf(inst, sizeof inst, "\"instances\": %d, \"instance_seconds_per_iter\": [", w);
        for (int k = 0; g_rank == 0 && k < w; k++) { /* stops short of the buffer's end */
            mx[2] = all[k] * it > mx[2] ? all[k] * it : mx[2];
            if (len > 0 && (size_t)len < sizeof inst - 40)
                len += snprintf(inst + len, sizeof inst - (size_t)len, "%s%.6g", k ? ", " : "",
                                all[k]);
        }
        if (len > 0 && (size_t)len < sizeof inst - 4)
            snprintf(inst + len, sizeof inst - (size_t)len, "], ");
        free(all);
    }
    if (g_rank != 0)
        return;
    const double per = mx[2] / it, halo_s = sum[0] / P, ar = sum[1] / P;
    const int threads = omp_get_max_threads();
    char name[256], geo[256];
    if (c->matrix) {
        const char *bn = strrchr(c->matrix, '/');
        snprintf(name, sizeof name, "%s", bn ? bn + 1 : c->matrix);
        snprintf(geo, sizeof geo,
                 "\"partition\": \"%s\", \"procs\": null, \"local\": null, "
                 "\"global\": null",
                 c->metis ? "metis" : "block");
    } else {
        const long long gx = dims[0] * c->local[0], gy = dims[1] * c->local[1],
                        gz = dims[2] * c->local[2];
        snprintf(name, sizeof name, "hpcg-%lldx%lldx%lld", gx, gy, gz);
        snprintf(geo, sizeof geo,
                 "\"procs\": [%d, %d, %d], \"local\": [%lld, %lld, %lld], "
                 "\"global\": [%lld, %lld, %lld]",
                 dims[0], dims[1], dims[2], (long long)c->local[0], (long long)c->local[1],
                 (long long)c->local[2], gx, gy, gz);
    }
    printf(PROG ": %s on %d ranks x %d threads, %lld iterations, relres %.3e, max|x-1| %.3e, "
                "%.3f ms/iteration (halo %.3f, allreduce %.3f)\n",
           name, pt->nranks, threads, (long long)res->iterations, res->relres, res->max_abs_err,
           per * 1e3, halo_s / it * 1e3, ar / it * 1e3);
    if (!c->json)
        return;
    printf("{\"impl\": \"bsp\", \"cg\": \"%s\", \"matrix\": \"%s\", \"ranks\": %d, "
           "%s\"threads_per_rank\": %d, \"omp_regions\": %s, %s, "
           "\"n\": %lld, \"nnz\": %.0f, \"iterations\": %lld, \"converged\": %s, "
           "\"relres\": %.6g, \"max_abs_err\": %.6g, \"seconds\": %.6g, "
           "\"seconds_per_iter\": %.6g, \"first_iters_seconds\": [%s], "
           "\"halo_seconds\": %.6g, \"halo_seconds_max\": %.6g, "
           "\"allreduce_seconds\": %.6g, \"allreduce_seconds_max\": %.6g, "
           "\"halo_seconds_per_iter\": %.6g, \"allreduce_seconds_per_iter\": %.6g, "
           "\"compute_seconds_per_iter\": %.6g, \"halo_bytes\": %.0f, \"halo_messages\": %.0f, "
           "\"halo_bytes_max_rank\": %.0f, \"setup_seconds\": %.6g}\n",
           cg_variant_names[c->variant], name, pt->nranks, inst, threads, g_omp ? "true" : "false",
           geo, (long long)pt->n_global, sum[5], (long long)res->iterations,
           res->converged ? "true" : "false", res->relres, res->max_abs_err, mx[2], per, firsts,
           halo_s, mx[0], ar, mx[1], halo_s / it, ar / it, per - (halo_s + ar) / it, sum[3], sum[4],
           mx[3], setup_s);
}

/* This rank's part of the HPCG box or the partitioned file, built by examples/cg/partition.c
 * exactly as parex-cg builds it; 0, or 1 with a message (rank 0, or the failing ranks). */
static int setup(const cli *c, halo *h)
{
    char err[512];
    int rc;
    memset(h, 0, sizeof *h);
    if (c->matrix) {
        mm_csr m;
        const int bad = mm_read_csr(c->matrix, MM_REQUIRE_SQUARE, &m, err, sizeof err) != MM_OK;
        int any = bad;
        MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) { /* every rank reads the same file: one message, or each failing rank's */
            if (bad && (g_rank == 0 || any != bad))
                fprintf(stderr, PROG ": %s\n", err);
            else if (g_rank == 0)
                fprintf(stderr, PROG ": another rank could not read %s\n", c->matrix);
            if (!bad)
                mm_csr_free(&m);
            return 1;
        }
        rc = cgp_from_csr(g_comm, m.n_rows, m.row_ptr, m.col, m.val,
                          c->metis ? CGP_METIS : CGP_BLOCK, &h->part, err, sizeof err);
        mm_csr_free(&m);
    } else {
        rc = cgp_hpcg(g_comm, c->local[0], c->local[1], c->local[2], &h->part, err, sizeof err);
    }
    if (rc != CGP_OK) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    const int nnb = h->part.n_neighbors;
    h->send_buf = xmalloc((size_t)h->part.send_ptr[nnb] * sizeof(double));
    h->req = xmalloc(2 * (size_t)nnb * sizeof(MPI_Request));
    return 0;
}

static void halo_free(halo *h)
{
    cgp_free(&h->part);
    free(h->send_buf);
    free(h->req);
    memset(h, 0, sizeof *h);
}

int main(int argc, char **argv)
{
    int provided = 0, P = 1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, PROG ": MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (provided < MPI_THREAD_FUNNELED) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": MPI gives thread level %d, MPI_THREAD_FUNNELED needed\n",
                    provided);
        MPI_Finalize();
        return 1;
    }
    cli c;
    int dims[3];
    int rc = parse_cli(argc, argv, &c);
    if (rc == 0 && c.independent)
        g_comm = MPI_COMM_SELF;
    g_omp_always = rc == 0 && c.omp_one_thread;
    g_omp = omp_get_max_threads() > 1 || g_omp_always;
    if (rc == 0)
        rc = check_procs(&c, c.independent ? 1 : P, dims);
    if (rc != 0) {
        MPI_Finalize();
        return rc;
    }
    const double t_setup = bench_now_s();
    halo h;
    if (setup(&c, &h) != 0) {
        halo_free(&h);
        MPI_Finalize();
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double setup_s = bench_now_s() - t_setup;
    result res;
    memset(&res, 0, sizeof res);
    if (c.variant == CG_PLAIN)
        solve(&h, c.tol, c.max_iters, c.fixed_iters, &res);
    else
        solve_pipelined(&h, c.variant, c.tol, c.max_iters, c.fixed_iters, &res);
    report(&c, dims, &h, &res, setup_s);
    halo_free(&h);
    MPI_Finalize();
    if (res.breakdown)
        return 1;
    return c.fixed_iters > 0 || res.converged ? 0 : 3;
}
