/*
 * bench/bench_cg_bsp.c - the bulk-synchronous MPI+OpenMP baseline for parex's distributed CG
 * (issue 15, "Benchmarks and the model"): the HPCG problem on a 3-D process grid, a blocking
 * halo exchange completed before every SpMV, MPI_Allreduce for the dot products and OpenMP
 * loops (static schedules) for the local work. Nothing overlaps: that is the point of it.
 *
 *   mpirun -np P bench_cg_bsp [--grid N | --local NX,NY,NZ] [--procs PX,PY,PZ]
 *                             [--iters K | --tol X [--max-iters M]] [--json]
 *   mpirun -np P bench_cg_bsp --matrix FILE.mtx [--partition block|metis] [...]
 *
 *   --grid N          each rank owns N^3 points (weak scaling, as HPCG and parex-cg --grid);
 *                     --grid NXxNYxNZ is --local NX,NY,NZ
 *   --local NX,NY,NZ  each rank owns an NX x NY x NZ box (strong scaling: e.g. G,G,G/P with
 *                     --procs 1,1,P is the contiguous row-block partition of the global G^3
 *                     matrix, what parex-cg --matrix --partition block gives)
 *   --procs PX,PY,PZ  process grid (product P); default HPCG's ComputeOptimalShapeXYZ
 *   --iters K         exactly K iterations, whatever the residual (for timing)
 *   --tol X           stop when ||r||/||b|| < X (default 1e-8), at most --max-iters (20000)
 *   --matrix FILE     a Matrix Market file (square, symmetric pattern) instead of HPCG, read by
 *                     every rank and split by --partition: block (default; contiguous rows
 *                     [r N / P, (r + 1) N / P)) or metis (METIS_PartGraphKway, seed 1); see
 *                     bench/dcg_matrix.c. b = A * ones, x0 = 0 as for HPCG.
 *
 * Problem (HPCG): the global grid is (PX NX) x (PY NY) x (PZ NZ); rank r sits at
 * (r % PX, (r / PX) % PY, r / (PX PY)) and numbers its points x fastest. Row i couples point i
 * with its up to 26 neighbours inside the global grid: 26 on the diagonal, -1 off it;
 * b = A * ones, x0 = 0, so the exact solution is all ones. Plain CG, the same fused kernels and
 * stopping rule as examples/cg/cg.c and bench/bench_cg_omp.c: SpMV folding p.Ap, residual update
 * folding r.r, x and p updated together; two allreduces of one double per iteration.
 *
 * Halo (as HPCG's SetupHalo): the CSR matrix has local columns [0, n) and ghost columns
 * [n, n + ghosts); the ghosts from the neighbour in direction d (one of 26 faces, edges and
 * corners) are contiguous and ordered as the neighbour's send list, so a receive lands in place.
 * Each iteration: post every MPI_Irecv, pack the send lists (OpenMP), MPI_Isend, MPI_Waitall,
 * then the SpMV.
 *
 * Output (rank 0 only): one line of text and, with --json, a JSON object as the last line:
 * ranks, threads_per_rank, procs, local, global, n (global rows), nnz, iterations, converged,
 * relres, max_abs_err, seconds (iteration loop, slowest rank), seconds_per_iter,
 * halo_seconds and allreduce_seconds (time inside the halo exchange / the allreduces over the
 * loop, mean over ranks; _max: slowest rank; both include waiting for the slower peers),
 * halo_seconds_per_iter, allreduce_seconds_per_iter, compute_seconds_per_iter (the rest),
 * halo_bytes and halo_messages (sent per iteration, all ranks together), halo_bytes_max_rank,
 * setup_seconds.
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
#include "dcg_bsp.h"

#define PROG     "bench_cg_bsp"
#define NDIR     27 /* directions (dx, dy, dz) in {-1,0,1}^3; 13 is (0,0,0), not a neighbour */
#define SELF_DIR 13

static int g_rank = 0;

/* ---- geometry ---------------------------------------------------------------------------- */

typedef struct {
    int P, rank;
    int px, py, pz;    /* process grid */
    int ipx, ipy, ipz; /* this rank's place in it */
    int64_t nx, ny, nz, n;
} geom;

/*
 * HPCG's ComputeOptimalShapeXYZ: a prime power p^k becomes p^(k/3 + (k%3 >= 1)) x
 * p^(k/3 + (k%3 >= 2)) x p^(k/3) (2 -> 2x1x1, 4 -> 2x2x1, 8 -> 2x2x2); any other P the
 * factorization of least surface x y + y z + z x (HPCG's search; its order among equal
 * surfaces may differ, which for cubic local boxes changes no halo size).
 */
static void hpcg_shape(int P, int *x, int *y, int *z)
{
    int p = 2;
    while (p <= P && P % p != 0)
        p++;
    int k = 0, q = P;
    while (q > 1 && q % p == 0) {
        q /= p;
        k++;
    }
    if (P == 1 || q == 1) {
        int a = 1, b = 1, c = 1;
        for (int i = 0; i < k / 3 + (k % 3 >= 1); i++)
            a *= p;
        for (int i = 0; i < k / 3 + (k % 3 >= 2); i++)
            b *= p;
        for (int i = 0; i < k / 3; i++)
            c *= p;
        *x = a, *y = b, *z = c;
        return;
    }
    double best = INFINITY;
    for (int a = 1; a <= P; a++) {
        if (P % a)
            continue;
        for (int b = 1; b <= P / a; b++) {
            if ((P / a) % b)
                continue;
            const int c = P / a / b;
            const double area = (double)a * b + (double)b * c + (double)a * c;
            if (area < best) {
                best = area;
                *x = a, *y = b, *z = c;
            }
        }
    }
}

/* ---- halo maps ----------------------------------------------------------------------------- */

typedef dcg_halo halo;

/* The HPCG box's ghost slots per direction (face, edge, corner). */
typedef struct {
    int64_t ghost_base[NDIR]; /* first ghost slot (from n), -1 without a neighbour */
    int64_t count[NDIR];      /* points sent = points received */
} hpcg_dirs;

static void dir_split(int k, int *dx, int *dy, int *dz)
{
    *dx = k % 3 - 1;
    *dy = (k / 3) % 3 - 1;
    *dz = k / 9 - 1;
}

/* The region of a direction: size 1 along an axis where d != 0, the whole axis where d == 0. */
static int64_t region_extent(int d, int64_t n)
{
    return d == 0 ? n : 1;
}

/* Neighbours in direction order; the HPCG ghost layout of each direction. */
static void build_halo(const geom *g, halo *h, hpcg_dirs *d)
{
    int dirs[NDIR], nnb = 0;
    memset(h, 0, sizeof *h);
    for (int k = 0; k < NDIR; k++) {
        d->ghost_base[k] = -1;
        d->count[k] = 0;
        if (k == SELF_DIR)
            continue;
        int dx, dy, dz;
        dir_split(k, &dx, &dy, &dz);
        const int qx = g->ipx + dx, qy = g->ipy + dy, qz = g->ipz + dz;
        if (qx >= 0 && qx < g->px && qy >= 0 && qy < g->py && qz >= 0 && qz < g->pz)
            dirs[nnb++] = k;
    }
    dcg_halo_alloc(h, nnb);
    for (int m = 0; m < nnb; m++) {
        const int k = dirs[m];
        int dx, dy, dz;
        dir_split(k, &dx, &dy, &dz);
        d->count[k] =
            region_extent(dx, g->nx) * region_extent(dy, g->ny) * region_extent(dz, g->nz);
        d->ghost_base[k] = h->nghost;
        h->peer[m] = (g->ipx + dx) + g->px * ((g->ipy + dy) + g->py * (g->ipz + dz));
        h->recv_off[m] = h->nghost;
        h->send_off[m] = h->nsend;
        h->nghost += d->count[k];
        h->nsend += d->count[k];
    }
    h->recv_off[nnb] = h->nghost;
    h->send_off[nnb] = h->nsend;
    h->send_idx = dcg_xmalloc((size_t)h->nsend * sizeof *h->send_idx);
    h->send_buf = dcg_xmalloc((size_t)h->nsend * sizeof *h->send_buf);
    /* Send list towards direction d: the local points on that face / edge / corner, z, y, x
     * loops with x fastest: the order the receiver's ghost slots of direction -d use. */
    for (int m = 0; m < nnb; m++) {
        int dx, dy, dz;
        dir_split(dirs[m], &dx, &dy, &dz);
        int64_t s = h->send_off[m];
        for (int64_t z = 0; z < g->nz; z++)
            for (int64_t y = 0; y < g->ny; y++)
                for (int64_t x = 0; x < g->nx; x++) {
                    if ((dx < 0 && x != 0) || (dx > 0 && x != g->nx - 1) || (dy < 0 && y != 0) ||
                        (dy > 0 && y != g->ny - 1) || (dz < 0 && z != 0) ||
                        (dz > 0 && z != g->nz - 1))
                        continue;
                    h->send_idx[s++] = (int32_t)(x + g->nx * (y + g->ny * z));
                }
    }
}

/* Column of point (x, y, z) in local coordinates, one step outside the box allowed: the local
 * index, a ghost slot n + ..., or -1 outside the global grid. */
static int64_t column_of(const geom *g, const hpcg_dirs *h, int64_t x, int64_t y, int64_t z)
{
    const int sx = x < 0 ? -1 : x >= g->nx, sy = y < 0 ? -1 : y >= g->ny;
    const int sz = z < 0 ? -1 : z >= g->nz;
    if (sx == 0 && sy == 0 && sz == 0)
        return x + g->nx * (y + g->ny * z);
    const int k = (sz + 1) * 9 + (sy + 1) * 3 + (sx + 1);
    if (h->ghost_base[k] < 0)
        return -1;
    const int64_t lx = sx == 0 ? x : 0, ly = sy == 0 ? y : 0, lz = sz == 0 ? z : 0;
    const int64_t rx = region_extent(sx, g->nx), ry = region_extent(sy, g->ny);
    return g->n + h->ghost_base[k] + lx + rx * (ly + ry * lz);
}

/* ---- matrix ------------------------------------------------------------------------------ */

typedef dcg_csr csr;

/* Rows filled in parallel (first touch as in the solver); two passes: count, then fill. */
static void build_matrix(const geom *g, const hpcg_dirs *h, csr *A)
{
    const int64_t n = g->n;
    A->n = n;
    A->rp = dcg_xmalloc((size_t)(n + 1) * sizeof *A->rp);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        const int64_t ix = i % g->nx, iy = (i / g->nx) % g->ny, iz = i / (g->nx * g->ny);
        int64_t c = 0;
        for (int64_t z = iz - 1; z <= iz + 1; z++)
            for (int64_t y = iy - 1; y <= iy + 1; y++)
                for (int64_t x = ix - 1; x <= ix + 1; x++)
                    c += column_of(g, h, x, y, z) >= 0;
        A->rp[i + 1] = c;
    }
    A->rp[0] = 0;
    for (int64_t i = 0; i < n; i++)
        A->rp[i + 1] += A->rp[i];
    A->nnz = A->rp[n];
    A->col = dcg_xmalloc((size_t)A->nnz * sizeof *A->col);
    A->val = dcg_xmalloc((size_t)A->nnz * sizeof *A->val);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        const int64_t ix = i % g->nx, iy = (i / g->nx) % g->ny, iz = i / (g->nx * g->ny);
        int64_t k = A->rp[i];
        for (int64_t z = iz - 1; z <= iz + 1; z++)
            for (int64_t y = iy - 1; y <= iy + 1; y++)
                for (int64_t x = ix - 1; x <= ix + 1; x++) {
                    const int64_t c = column_of(g, h, x, y, z);
                    if (c < 0)
                        continue;
                    A->col[k] = (int32_t)c;
                    A->val[k] = c == i ? 26.0 : -1.0;
                    k++;
                }
    }
}

/* ---- communication ----------------------------------------------------------------------- */

typedef struct {
    double halo_s, allreduce_s;
} comm_times;

/* Blocking halo exchange of p (n local values followed by the ghost slots). */
static void exchange(int64_t n, halo *h, double *p, comm_times *t)
{
    const double t0 = bench_now_s();
    for (int m = 0; m < h->nnb; m++)
        MPI_Irecv(p + n + h->recv_off[m], (int)(h->recv_off[m + 1] - h->recv_off[m]), MPI_DOUBLE,
                  h->peer[m], 0, MPI_COMM_WORLD, &h->req[m]);
    const int64_t ns = h->nsend;
    const int32_t *restrict idx = h->send_idx;
    double *restrict buf = h->send_buf;
    /* A fork-join costs more than packing a few thousand values: a small halo is packed by
     * the master alone (a baseline should not lose time the parex version does not). */
#pragma omp parallel for schedule(static) if (ns >= 8192)
    for (int64_t s = 0; s < ns; s++)
        buf[s] = p[idx[s]];
    for (int m = 0; m < h->nnb; m++)
        MPI_Isend(buf + h->send_off[m], (int)(h->send_off[m + 1] - h->send_off[m]), MPI_DOUBLE,
                  h->peer[m], 0, MPI_COMM_WORLD, &h->req[h->nnb + m]);
    MPI_Waitall(2 * h->nnb, h->req, MPI_STATUSES_IGNORE);
    t->halo_s += bench_now_s() - t0;
}

static double allreduce_sum(double v, comm_times *t)
{
    const double t0 = bench_now_s();
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t->allreduce_s += bench_now_s() - t0;
    return v;
}

/* ---- solver ------------------------------------------------------------------------------ */

typedef struct {
    int64_t iterations;
    int converged, breakdown;
    double relres, max_abs_err, seconds;
    comm_times comm;
} result;

typedef struct {
    double *b, *x, *r, *p, *ap;
} vectors;

/* b = A * ones (rows sums: the ghost columns stand for ones too), x = 0, r = p = b;
 * returns the global ||b||^2. */
static double cg_init(const csr *A, int64_t nghost, vectors *v, comm_times *t)
{
    const int64_t n = A->n;
    v->b = dcg_xmalloc((size_t)n * sizeof(double));
    v->x = dcg_xmalloc((size_t)n * sizeof(double));
    v->r = dcg_xmalloc((size_t)n * sizeof(double));
    v->ap = dcg_xmalloc((size_t)n * sizeof(double));
    v->p = dcg_xmalloc((size_t)(n + nghost) * sizeof(double));
    double bb = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : bb)
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
            s += A->val[k];
        v->b[i] = s;
        v->x[i] = 0.0;
        v->r[i] = s;
        v->p[i] = s;
        bb += s * s;
    }
    for (int64_t i = n; i < n + nghost; i++)
        v->p[i] = 0.0;
    return allreduce_sum(bb, t);
}

/* One SpMV with the fused p.Ap, after the blocking halo exchange of p; returns global p.Ap. */
static double spmv_dot(halo *h, const csr *A, vectors *v, comm_times *t)
{
    exchange(A->n, h, v->p, t);
    const int64_t n = A->n;
    const int64_t *restrict rp = A->rp;
    const int32_t *restrict col = A->col;
    const double *restrict val = A->val, *restrict p = v->p;
    double *restrict ap = v->ap;
    double pap = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : pap)
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0;
        const int64_t e = rp[i + 1];
        for (int64_t k = rp[i]; k < e; k++)
            s += val[k] * p[col[k]];
        ap[i] = s;
        pap += p[i] * s;
    }
    return allreduce_sum(pap, t);
}

/* fixed_iters > 0: exactly that many iterations; else until relres < tol or max_iters. */
static void solve(halo *h, const csr *A, double tol, int64_t max_iters, int64_t fixed_iters,
                  result *res)
{
    vectors v;
    const int64_t n = A->n;
    const double bb = cg_init(A, h->nghost, &v, &res->comm);
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
    while ((fixed_iters > 0 || res->relres >= tol) && it < limit) {
        const double pap = spmv_dot(h, A, &v, &res->comm);
        if (!(pap > 0.0)) {
            res->breakdown = 1;
            if (g_rank == 0)
                fprintf(stderr, PROG ": breakdown, p.Ap = %g at iteration %lld\n", pap,
                        (long long)it + 1);
            break;
        }
        const double alpha = rr / pap;
        double rr_loc = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : rr_loc)
        for (int64_t i = 0; i < n; i++) {
            const double ri = r[i] - alpha * ap[i];
            r[i] = ri;
            rr_loc += ri * ri;
        }
        const double rr_new = allreduce_sum(rr_loc, &res->comm);
        it++;
        res->relres = sqrt(rr_new) / bnorm;
        /* rr == 0: solved exactly (tiny grids), a further step would divide by zero */
        if ((fixed_iters == 0 && res->relres < tol) || it == limit || !(rr_new > 0.0)) {
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; i++)
                x[i] += alpha * p[i];
            break;
        }
        const double beta = rr_new / rr;
        rr = rr_new;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            const double pi = p[i];
            x[i] += alpha * pi;
            p[i] = r[i] + beta * pi;
        }
    }
    res->seconds = bench_now_s() - t0;
    res->iterations = it;
    res->converged = res->relres < tol;
    double err = 0.0;
#pragma omp parallel for schedule(static) reduction(max : err)
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs(x[i] - 1.0);
        err = d > err ? d : err;
    }
    MPI_Allreduce(&err, &res->max_abs_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(v.b);
    free(v.x);
    free(v.r);
    free(v.p);
    free(v.ap);
}

/* ---- command line ------------------------------------------------------------------------ */

typedef struct {
    const char *matrix; /* NULL: the HPCG problem */
    int metis;
    int64_t local[3];
    int procs[3];
    int have_procs, json;
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
        if (!v)
            return usage_error("bad or valueless argument '%s'", a);
        i++;
        if (strcmp(a, "--matrix") == 0) {
            c->matrix = v;
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
    return 0;
}

/* ---- main -------------------------------------------------------------------------------- */

/* The process grid and this rank's box; 0, or 2 (message printed) when they do not fit. */
static int make_geom(const cli *c, int P, int rank, geom *g)
{
    memset(g, 0, sizeof *g);
    g->P = P;
    g->rank = rank;
    if (c->have_procs) {
        g->px = c->procs[0], g->py = c->procs[1], g->pz = c->procs[2];
        if ((int64_t)g->px * g->py * g->pz != P) {
            return usage_error("--procs %dx%dx%d does not make %d ranks", g->px, g->py, g->pz, P);
        }
    } else {
        hpcg_shape(P, &g->px, &g->py, &g->pz);
    }
    g->ipx = rank % g->px;
    g->ipy = (rank / g->px) % g->py;
    g->ipz = rank / (g->px * g->py);
    g->nx = c->local[0], g->ny = c->local[1], g->nz = c->local[2];
    g->n = g->nx * g->ny * g->nz;
    /* int32 columns: local points plus at most 2 (xy + yz + xz) + 4 (x + y + z) + 8 ghosts */
    const int64_t ghosts =
        2 * (g->nx * g->ny + g->ny * g->nz + g->nx * g->nz) + 4 * (g->nx + g->ny + g->nz) + 8;
    if (g->n + ghosts >= INT32_MAX)
        return usage_error("local box too large for 32-bit column indices");
    return 0;
}

/* Rank 0 prints the text line and the JSON; name and geo describe the problem. */
static void report(const cli *c, const geom *g, const halo *h, const csr *A, const result *res,
                   double setup_s, int64_t n_global)
{
    double loc[6] = {res->comm.halo_s,       res->comm.allreduce_s, res->seconds,
                     (double)h->nsend * 8.0, (double)h->nnb,        (double)A->nnz};
    double sum[6], mx[6];
    MPI_Reduce(loc, sum, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(loc, mx, 6, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g->rank != 0)
        return;
    const double P = g->P, it = res->iterations ? (double)res->iterations : 1.0;
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
        const long long gx = g->px * g->nx, gy = g->py * g->ny, gz = g->pz * g->nz;
        snprintf(name, sizeof name, "hpcg-%lldx%lldx%lld", gx, gy, gz);
        snprintf(geo, sizeof geo,
                 "\"procs\": [%d, %d, %d], \"local\": [%lld, %lld, %lld], "
                 "\"global\": [%lld, %lld, %lld]",
                 g->px, g->py, g->pz, (long long)g->nx, (long long)g->ny, (long long)g->nz, gx, gy,
                 gz);
    }
    printf(PROG ": %s on %d ranks x %d threads, %lld iterations, relres %.3e, max|x-1| %.3e, "
                "%.3f ms/iteration (halo %.3f, allreduce %.3f)\n",
           name, g->P, threads, (long long)res->iterations, res->relres, res->max_abs_err,
           per * 1e3, halo_s / it * 1e3, ar / it * 1e3);
    if (!c->json)
        return;
    printf("{\"impl\": \"bsp\", \"matrix\": \"%s\", \"ranks\": %d, \"threads_per_rank\": %d, %s, "
           "\"n\": %lld, \"nnz\": %.0f, \"iterations\": %lld, \"converged\": %s, "
           "\"relres\": %.6g, \"max_abs_err\": %.6g, \"seconds\": %.6g, "
           "\"seconds_per_iter\": %.6g, \"halo_seconds\": %.6g, \"halo_seconds_max\": %.6g, "
           "\"allreduce_seconds\": %.6g, \"allreduce_seconds_max\": %.6g, "
           "\"halo_seconds_per_iter\": %.6g, \"allreduce_seconds_per_iter\": %.6g, "
           "\"compute_seconds_per_iter\": %.6g, \"halo_bytes\": %.0f, \"halo_messages\": %.0f, "
           "\"halo_bytes_max_rank\": %.0f, \"setup_seconds\": %.6g}\n",
           name, g->P, threads, geo, (long long)n_global, sum[5], (long long)res->iterations,
           res->converged ? "true" : "false", res->relres, res->max_abs_err, mx[2], per, halo_s,
           mx[0], ar, mx[1], halo_s / it, ar / it, per - (halo_s + ar) / it, sum[3], sum[4], mx[3],
           setup_s);
}

/* The local matrix and halo map of the HPCG box or the partitioned file; 0, or 1 with a
 * message (rank 0). */
static int setup(const cli *c, const geom *g, csr *A, halo *h, int64_t *n_global)
{
    if (c->matrix) {
        char err[512];
        if (dcg_matrix_setup(c->matrix, c->metis, g->P, g->rank, A, h, n_global, err, sizeof err) ==
            0)
            return 0;
        if (g->rank == 0)
            fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    hpcg_dirs d;
    build_halo(g, h, &d);
    build_matrix(g, &d, A);
    *n_global = (int64_t)g->P * g->n;
    return 0;
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
    geom g;
    int rc = parse_cli(argc, argv, &c);
    if (rc == 0)
        rc = make_geom(&c, P, g_rank, &g);
    if (rc != 0) {
        MPI_Finalize();
        return rc;
    }
    const double t_setup = bench_now_s();
    halo h;
    csr A;
    int64_t n_global = 0;
    memset(&A, 0, sizeof A);
    if (setup(&c, &g, &A, &h, &n_global) != 0) {
        dcg_halo_free(&h);
        MPI_Finalize();
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double setup_s = bench_now_s() - t_setup;
    result res;
    memset(&res, 0, sizeof res);
    solve(&h, &A, c.tol, c.max_iters, c.fixed_iters, &res);
    report(&c, &g, &h, &A, &res, setup_s, n_global);
    free(A.rp);
    free(A.col);
    free(A.val);
    dcg_halo_free(&h);
    MPI_Finalize();
    if (res.breakdown)
        return 1;
    return c.fixed_iters > 0 || res.converged ? 0 : 3;
}
