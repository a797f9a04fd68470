/* bench/bench_team.c - team launches (issue 14) against range launches and OpenMP, all
 * contenders interleaved in one process run (round k runs every contender once, the order
 * rotating from round to round), so their ratios share the machine's state.
 *
 *   bench_team --kernel spmv [--matrix PATH | --grid G] [--rows-per-team R] [--team T]
 *   bench_team --kernel batched|lu [--bs 8|16] [--count N] [--team T]
 *              [--reps R] [--warmup W] [--space NAME]
 *
 * Kernels (double precision):
 *   spmv     y = A x, A in CSR: bcsstk16 (--matrix, default ../shared/data/matrices/
 *            bcsstk16.mtx, read with examples/cg's mmio) or the HPCG 27-point matrix of a G^3
 *            grid (--grid G, built here as bench_cg_omp builds it). Flops: 2 nnz.
 *   batched  N (default 100000) independent bs x bs products y_b = A_b x_b (bs 8 or 16). Flops:
 *            2 N bs^2.
 *   lu       N (default 100000) independent solves A_b x_b = r_b (bs 8 or 16) by LU without
 *            pivoting: the matrices are strictly diagonally dominant by rows (off-diagonal
 *            entries in [-1, 2], diagonal 2 bs + 1), for which Gaussian elimination without
 *            pivoting is stable, as batched solvers for such blocks (block-Jacobi
 *            preconditioners) do it. Elimination to U, then back substitution. Flops: the exact
 *            count, about N (2/3 bs^3 + 2 bs^2). The sequential solve's residual is checked
 *            first (max |A x - r| / |r| <= 1e-12).
 * Contenders:
 *   omp         OpenMP: `parallel for schedule(static)` over rows (spmv) or systems (batched,
 *               lu).
 *   parex-range PX_FOR over rows (spmv) or systems (batched, lu): one index per row / system.
 *   parex-team  PX_TEAM_FOR: spmv, one team per block of R rows (default 64), members take rows
 *               of the block with PX_TEAM_THREAD_FOR; batched, one team per batch, which loads
 *               A_b and x_b into team scratch, meets at a team barrier and computes its rows'
 *               share from scratch; lu, one team per system: A_b and r_b copied to scratch, then
 *               per elimination step the members take the rows below the pivot (row updates
 *               as vector loops) and meet, then per back-substitution step likewise. Team size
 *               --team (0 = the space's choice: one member on threads, no barrier at all).
 * Threads: OMP_NUM_THREADS for OpenMP, PX_NUM_THREADS for parex (set both the same).
 *
 * Every contender is first checked against a sequential product (max relative error printed;
 * above 1e-12 exits 1). Output, one line per contender:
 *   RESULT impl=parex-team kernel=spmv matrix=bcsstk16 n=4884 nnz=290378 threads=2 team=2
 *          reps=20 seconds=<median> best=<fastest> gflops=<flops / median / 1e9> maxerr=<e>
 * This program is for measurement by the coordinator; smoke runs check correctness only. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "mmio.h"
#include "parex.h"

#ifndef PX_TEAM_MATRICES
#define PX_TEAM_MATRICES "../shared/data/matrices"
#endif

typedef struct {
    int64_t n, nnz;
    int64_t *rp;
    int32_t *col;
    double *val;
} csr;

static void *xmalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) {
        fprintf(stderr, "bench_team: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

#define CNT(k, N)    (1 + ((k) > 0) + ((k) < (N)-1))
#define PREFIX(k, N) ((k) + ((k) > 0 ? (k)-1 : 0) + ((k) < (N)-1 ? (k) : (N)-1))

/* The HPCG 27-point matrix of a g^3 grid (bench/bench_cg_omp.c's construction). */
static void hpcg(int64_t g, csr *A)
{
    const int64_t n = g * g * g, t = PREFIX(g, g);
    A->n = n;
    A->nnz = t * t * t;
    A->rp = xmalloc((size_t)(n + 1) * sizeof *A->rp);
    A->col = xmalloc((size_t)A->nnz * sizeof *A->col);
    A->val = xmalloc((size_t)A->nnz * sizeof *A->val);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t ix = i % g, iy = (i / g) % g, iz = i / (g * g);
        A->rp[i] = k;
        for (int64_t z = iz - 1; z <= iz + 1; z++)
            for (int64_t y = iy - 1; y <= iy + 1; y++)
                for (int64_t x = ix - 1; x <= ix + 1; x++) {
                    if (x < 0 || x >= g || y < 0 || y >= g || z < 0 || z >= g)
                        continue;
                    const int64_t c = x + g * (y + g * z);
                    A->col[k] = (int32_t)c;
                    A->val[k] = c == i ? 26.0 : -1.0;
                    k++;
                }
    }
    A->rp[n] = k;
}

static void load(const char *path, csr *A)
{
    mm_csr m;
    char err[512];
    if (mm_read_csr(path, MM_REQUIRE_SQUARE, &m, err, sizeof err) != MM_OK) {
        fprintf(stderr, "bench_team: %s\n", err);
        exit(1);
    }
    A->n = m.n_rows;
    A->nnz = m.nnz;
    A->rp = xmalloc((size_t)(A->n + 1) * sizeof *A->rp);
    A->col = xmalloc((size_t)A->nnz * sizeof *A->col);
    A->val = xmalloc((size_t)A->nnz * sizeof *A->val);
    memcpy(A->rp, m.row_ptr, (size_t)(A->n + 1) * sizeof *A->rp);
    memcpy(A->col, m.col, (size_t)A->nnz * sizeof *A->col);
    memcpy(A->val, m.val, (size_t)A->nnz * sizeof *A->val);
    mm_csr_free(&m);
}

/* ---- kernels ----------------------------------------------------------------------------------
 */

typedef struct {
    const int64_t *rp;
    const int32_t *col;
    const double *val, *x;
    double *y;
    int64_t n, rows_per_team;
} spmv_args;

static inline double row_dot(const spmv_args *a, int64_t i)
{
    double s = 0;
    for (int64_t k = a->rp[i]; k < a->rp[i + 1]; ++k)
        s += a->val[k] * a->x[a->col[k]];
    return s;
}

PX_FOR(spmv_range, spmv_args, i, a)
{
    a->y[i] = row_dot(a, i);
}

PX_TEAM_FOR(spmv_team, spmv_args, t, a)
{
    int64_t b = px_team_league_rank(t) * a->rows_per_team;
    int64_t e = b + a->rows_per_team < a->n ? b + a->rows_per_team : a->n;
    PX_TEAM_THREAD_FOR(t, i, b, e)
    {
        double s = 0;
        PX_THREAD_VECTOR_FOR(t, k, a->rp[i], a->rp[i + 1])
        {
            s += a->val[k] * a->x[a->col[k]];
        }
        a->y[i] = s;
    }
}

typedef struct {
    const double *A, *x; /* count x bs x bs, count x bs */
    double *y;
    int64_t bs;
} batch_args;

PX_FOR(batch_range, batch_args, b, a)
{
    const int64_t bs = a->bs;
    const double *M = a->A + b * bs * bs, *x = a->x + b * bs;
    for (int64_t r = 0; r < bs; ++r) {
        double s = 0;
        for (int64_t c = 0; c < bs; ++c)
            s += M[r * bs + c] * x[c];
        a->y[b * bs + r] = s;
    }
}

/* Team per batch: the team copies A_b and x_b into scratch (members take rows), meets, and
 * each member computes its rows from scratch. */
PX_TEAM_FOR(batch_team, batch_args, t, a)
{
    const int64_t bs = a->bs, b = px_team_league_rank(t);
    double *sm = px_team_scratch(t), *sx = sm + bs * bs;
    const double *M = a->A + b * bs * bs, *x = a->x + b * bs;
    PX_TEAM_THREAD_FOR(t, r, 0, bs)
    {
        for (int64_t c = 0; c < bs; ++c)
            sm[r * bs + c] = M[r * bs + c];
        sx[r] = x[r];
    }
    px_team_barrier(t);
    PX_TEAM_THREAD_FOR(t, r, 0, bs)
    {
        double s = 0;
        PX_THREAD_VECTOR_FOR(t, c, 0, bs)
        {
            s += sm[r * bs + c] * sx[c];
        }
        a->y[b * bs + r] = s;
    }
}

typedef struct {
    const double *A, *r; /* count x bs x bs, count x bs */
    double *x;           /* count x bs */
    int64_t bs;
} lu_args;

/* One solve without pivoting (reference, omp and range): U and z in @w (bs^2 + bs doubles). */
static inline void lu_solve_one(const double *A, const double *r, double *x, int64_t bs, double *w)
{
    double *U = w, *z = w + bs * bs;
    for (int64_t k = 0; k < bs * bs; ++k)
        U[k] = A[k];
    for (int64_t i = 0; i < bs; ++i)
        z[i] = r[i];
    for (int64_t k = 0; k < bs; ++k) {
        const double p = U[k * bs + k];
        for (int64_t i = k + 1; i < bs; ++i) {
            const double l = U[i * bs + k] / p;
            for (int64_t j = k + 1; j < bs; ++j)
                U[i * bs + j] -= l * U[k * bs + j];
            z[i] -= l * z[k];
        }
    }
    for (int64_t k = bs - 1; k >= 0; --k) {
        const double xk = z[k] / U[k * bs + k];
        x[k] = xk;
        for (int64_t i = 0; i < k; ++i)
            z[i] -= U[i * bs + k] * xk;
    }
}

PX_FOR(lu_range, lu_args, b, a)
{
    double w[16 * 16 + 16];
    const int64_t bs = a->bs;
    lu_solve_one(a->A + b * bs * bs, a->r + b * bs, a->x + b * bs, bs, w);
}

/* Team per system: the same operations per element in the same order as lu_solve_one, the
 * rows of each step shared by the members, a barrier after each step (free for one member). */
PX_TEAM_FOR(lu_team, lu_args, t, a)
{
    const int64_t bs = a->bs, b = px_team_league_rank(t);
    double *U = px_team_scratch(t), *z = U + bs * bs;
    const double *A = a->A + b * bs * bs, *r = a->r + b * bs;
    PX_TEAM_THREAD_FOR(t, i, 0, bs)
    {
        PX_THREAD_VECTOR_FOR(t, j, 0, bs)
        {
            U[i * bs + j] = A[i * bs + j];
        }
        z[i] = r[i];
    }
    px_team_barrier(t);
    for (int64_t k = 0; k < bs; ++k) {
        const double p = U[k * bs + k];
        PX_TEAM_THREAD_FOR(t, i, k + 1, bs)
        {
            const double l = U[i * bs + k] / p;
            PX_THREAD_VECTOR_FOR(t, j, k + 1, bs)
            {
                U[i * bs + j] -= l * U[k * bs + j];
            }
            z[i] -= l * z[k];
        }
        px_team_barrier(t);
    }
    for (int64_t k = bs - 1; k >= 0; --k) {
        const double xk = z[k] / U[k * bs + k];
        PX_TEAM_THREAD_FOR(t, i, 0, k)
        {
            z[i] -= U[i * bs + k] * xk;
        }
        if (px_team_rank(t) == 0)
            a->x[b * bs + k] = xk;
        px_team_barrier(t);
    }
}

/* ---- driver ---------------------------------------------------------------------------------- */

enum { IMPL_OMP, IMPL_RANGE, IMPL_TEAM, N_IMPL };
static const char *impl_names[N_IMPL] = {"omp", "parex-range", "parex-team"};

static px_space *space;
static int team_size;
static csr A;
static spmv_args sa;
static batch_args ba;
static lu_args la;
static int64_t count = 100000;
enum { K_SPMV, K_BATCHED, K_LU };
static int kernel = K_SPMV;
static const char *kernel_names[] = {"spmv", "batched", "lu"};

static void run_lu(int impl)
{
    int rc = PX_OK;
    const int64_t bs = la.bs;
    switch (impl) {
    case IMPL_OMP: {
        const lu_args *a = &la;
#pragma omp parallel for schedule(static)
        for (int64_t b = 0; b < count; ++b) {
            double w[16 * 16 + 16];
            lu_solve_one(a->A + b * bs * bs, a->r + b * bs, a->x + b * bs, bs, w);
        }
        break;
    }
    case IMPL_RANGE:
        rc = px_parallel_for(space, "lu-range", px_range(0, count), &lu_range, &la, sizeof la);
        break;
    default: {
        px_team_policy p = px_team_policy_scratch(px_team_policy_make(count, team_size, 0),
                                                  (size_t)(bs * bs + bs) * sizeof(double), 0);
        rc = px_parallel_for_team(space, "lu-team", p, &lu_team, &la, sizeof la);
    }
    }
    if (rc != PX_OK) {
        fprintf(stderr, "bench_team: %s failed: %s\n", impl_names[impl], px_strerror(rc));
        exit(1);
    }
}

/* Set up the lu systems; the sequential solutions go to @ref, checked by their residual. */
static double setup_lu(int64_t bs, double *y, double *ref)
{
    double *M = xmalloc((size_t)(count * bs * bs) * sizeof *M);
    double *r = xmalloc((size_t)(count * bs) * sizeof *r);
    for (int64_t k = 0; k < count * bs * bs; ++k)
        M[k] =
            (k / bs) % bs == k % bs ? 2.0 * (double)bs + 1.0 : (double)((k * 7) % 13) * 0.25 - 1.0;
    for (int64_t k = 0; k < count * bs; ++k)
        r[k] = (double)(k % 11) * 0.5 + 1.0;
    la = (lu_args){M, r, y, bs};
    double w[16 * 16 + 16], res = 0;
    for (int64_t b = 0; b < count; ++b) {
        lu_solve_one(M + b * bs * bs, r + b * bs, ref + b * bs, bs, w);
        for (int64_t i = 0; i < bs; ++i) {
            double s = 0;
            for (int64_t j = 0; j < bs; ++j)
                s += M[(b * bs + i) * bs + j] * ref[b * bs + j];
            double d = fabs(s - r[b * bs + i]) / fabs(r[b * bs + i]);
            res = d > res ? d : res;
        }
    }
    if (res > 1e-12) {
        fprintf(stderr, "bench_team: the sequential LU solve is wrong (residual %g)\n", res);
        exit(1);
    }
    double f = 0; /* exact flops of one solve */
    for (int64_t k = 0; k < bs; ++k)
        f +=
            (double)(bs - k - 1) * (1.0 + 2.0 * (double)(bs - k - 1) + 2.0) + 1.0 + 2.0 * (double)k;
    return f * (double)count;
}

static void run_once(int impl)
{
    int rc = PX_OK;
    if (kernel == K_LU) {
        run_lu(impl);
        return;
    }
    if (kernel == K_SPMV) {
        switch (impl) {
        case IMPL_OMP: {
            const spmv_args *a = &sa;
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < a->n; ++i)
                a->y[i] = row_dot(a, i);
            break;
        }
        case IMPL_RANGE:
            rc = px_parallel_for(space, "spmv-range", px_range(0, sa.n), &spmv_range, &sa,
                                 sizeof sa);
            break;
        default: {
            int64_t league = (sa.n + sa.rows_per_team - 1) / sa.rows_per_team;
            rc = px_parallel_for_team(space, "spmv-team", px_team_policy_make(league, team_size, 0),
                                      &spmv_team, &sa, sizeof sa);
        }
        }
    } else {
        switch (impl) {
        case IMPL_OMP: {
            const batch_args *a = &ba;
            const int64_t bs = a->bs;
#pragma omp parallel for schedule(static)
            for (int64_t b = 0; b < count; ++b) {
                const double *M = a->A + b * bs * bs, *x = a->x + b * bs;
                for (int64_t r = 0; r < bs; ++r) {
                    double s = 0;
                    for (int64_t c = 0; c < bs; ++c)
                        s += M[r * bs + c] * x[c];
                    a->y[b * bs + r] = s;
                }
            }
            break;
        }
        case IMPL_RANGE:
            rc = px_parallel_for(space, "batch-range", px_range(0, count), &batch_range, &ba,
                                 sizeof ba);
            break;
        default: {
            px_team_policy p = px_team_policy_make(count, team_size, 0);
            p.scratch_per_team = (size_t)(ba.bs * ba.bs + ba.bs) * sizeof(double);
            rc = px_parallel_for_team(space, "batch-team", p, &batch_team, &ba, sizeof ba);
        }
        }
    }
    if (rc != PX_OK) {
        fprintf(stderr, "bench_team: %s failed: %s\n", impl_names[impl], px_strerror(rc));
        exit(1);
    }
}

static double max_rel_err(const double *y, const double *ref, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; ++i) {
        double d = fabs(y[i] - ref[i]) / (fabs(ref[i]) > 1e-300 ? fabs(ref[i]) : 1.0);
        m = d > m ? d : m;
    }
    return m;
}

/* main: options, then each kernel's data and reference, then the interleaved rounds; kept in
 * one function (over 80 lines) so the measured sequence reads top to bottom. */
int main(int argc, char **argv)
{
    const char *matrix = NULL, *space_name = NULL;
    int64_t grid = 0, rows_per_team = 64, bs = 8;
    int reps = 20, warmup = 3;
    for (int k = 1; k < argc; ++k) {
        const char *o = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_team: option %s needs a value\n", o);
            return 2;
        }
        ++k;
        if (!strcmp(o, "--kernel"))
            kernel = !strcmp(v, "spmv")      ? K_SPMV
                     : !strcmp(v, "batched") ? K_BATCHED
                     : !strcmp(v, "lu")      ? K_LU
                                             : -1;
        else if (!strcmp(o, "--matrix"))
            matrix = v;
        else if (!strcmp(o, "--grid"))
            grid = atoll(v);
        else if (!strcmp(o, "--rows-per-team"))
            rows_per_team = atoll(v);
        else if (!strcmp(o, "--team"))
            team_size = atoi(v);
        else if (!strcmp(o, "--bs"))
            bs = atoll(v);
        else if (!strcmp(o, "--count"))
            count = atoll(v);
        else if (!strcmp(o, "--reps"))
            reps = atoi(v);
        else if (!strcmp(o, "--warmup"))
            warmup = atoi(v);
        else if (!strcmp(o, "--space"))
            space_name = v;
        else {
            fprintf(stderr, "bench_team: unknown option %s\n", o);
            return 2;
        }
    }
    if (kernel < 0 || rows_per_team < 1 || (bs != 8 && bs != 16) || count < 1 || reps < 1 ||
        warmup < 0 || team_size < 0 || grid < 0 || grid > 1000) {
        fprintf(stderr, "bench_team: bad option value (see the file comment)\n");
        return 2;
    }
    if (px_initialize(&argc, &argv) != PX_OK)
        return 1;
    space = space_name ? px_space_by_name(space_name) : px_default_space();
    if (!space) {
        fprintf(stderr, "bench_team: no space '%s'\n", space_name ? space_name : "(default)");
        return 1;
    }
    char what[1400];
    double *y, *ref, flops;
    int64_t ny;
    if (kernel == K_LU) {
        ny = count * bs;
        y = xmalloc((size_t)ny * sizeof *y);
        ref = xmalloc((size_t)ny * sizeof *ref);
        flops = setup_lu(bs, y, ref);
        snprintf(what, sizeof what, "bs=%lld count=%lld", (long long)bs, (long long)count);
    } else if (kernel == K_SPMV) {
        char path[1024];
        if (grid > 0) {
            hpcg(grid, &A);
            snprintf(what, sizeof what, "matrix=hpcg-%lld^3", (long long)grid);
        } else {
            if (!matrix) {
                snprintf(path, sizeof path, "%s/bcsstk16.mtx", PX_TEAM_MATRICES);
                matrix = path;
            }
            load(matrix, &A);
            const char *base = strrchr(matrix, '/');
            snprintf(what, sizeof what, "matrix=%s", base ? base + 1 : matrix);
        }
        ny = A.n;
        double *x = xmalloc((size_t)A.n * sizeof *x);
        y = xmalloc((size_t)A.n * sizeof *y);
        ref = xmalloc((size_t)A.n * sizeof *ref);
        for (int64_t i = 0; i < A.n; ++i)
            x[i] = 1.0 + (double)(i % 17) * 0.125;
        sa = (spmv_args){A.rp, A.col, A.val, x, y, A.n, rows_per_team};
        for (int64_t i = 0; i < A.n; ++i)
            ref[i] = row_dot(&sa, i);
        flops = 2.0 * (double)A.nnz;
        size_t len = strlen(what);
        snprintf(what + len, sizeof what - len, " n=%lld nnz=%lld rows_per_team=%lld",
                 (long long)A.n, (long long)A.nnz, (long long)rows_per_team);
    } else {
        ny = count * bs;
        double *M = xmalloc((size_t)(count * bs * bs) * sizeof *M);
        double *x = xmalloc((size_t)ny * sizeof *x);
        y = xmalloc((size_t)ny * sizeof *y);
        ref = xmalloc((size_t)ny * sizeof *ref);
        for (int64_t k = 0; k < count * bs * bs; ++k)
            M[k] = (double)((k * 7) % 13) * 0.25 - 1.0;
        for (int64_t k = 0; k < ny; ++k)
            x[k] = (double)(k % 11) * 0.5;
        ba = (batch_args){M, x, y, bs};
        for (int64_t b = 0; b < count; ++b)
            for (int64_t r = 0; r < bs; ++r) {
                double s = 0;
                for (int64_t c = 0; c < bs; ++c)
                    s += M[(b * bs + r) * bs + c] * x[b * bs + c];
                ref[b * bs + r] = s;
            }
        flops = 2.0 * (double)count * (double)(bs * bs);
        snprintf(what, sizeof what, "bs=%lld count=%lld", (long long)bs, (long long)count);
    }

    double err[N_IMPL];
    for (int i = 0; i < N_IMPL; ++i) {
        memset(y, 0, (size_t)ny * sizeof *y);
        run_once(i);
        err[i] = max_rel_err(y, ref, ny);
        if (err[i] > 1e-12) {
            fprintf(stderr, "bench_team: %s gives a wrong result (max relative error %g)\n",
                    impl_names[i], err[i]);
            return 1;
        }
    }
    double *t[N_IMPL];
    for (int i = 0; i < N_IMPL; ++i)
        t[i] = xmalloc((size_t)reps * sizeof(double));
    for (int round = 0; round < warmup + reps; ++round) {
        for (int k = 0; k < N_IMPL; ++k) {
            int i = (k + round) % N_IMPL;
            double t0 = bench_now_s();
            run_once(i);
            double dt = bench_now_s() - t0;
            if (round >= warmup)
                t[i][round - warmup] = dt;
        }
    }
    int threads = px_space_concurrency(space);
    for (int i = 0; i < N_IMPL; ++i) {
        double best = t[i][0];
        for (int r = 1; r < reps; ++r)
            best = t[i][r] < best ? t[i][r] : best;
        double med = bench_median(t[i], reps);
        printf("RESULT impl=%s kernel=%s %s space=%s threads=%d omp_threads=%d team=%d reps=%d "
               "seconds=%.6e best=%.6e gflops=%.4f maxerr=%.3e\n",
               impl_names[i], kernel_names[kernel], what, px_space_name(space), threads,
               omp_get_max_threads(), team_size, reps, med, best, flops / med / 1e9, err[i]);
        free(t[i]);
    }
    return px_finalize() == PX_OK ? 0 : 1;
}
