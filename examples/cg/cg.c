/*
 * examples/cg/cg.c - the HPCG generator and the (Jacobi-preconditioned) CG solver.
 *
 * Every vector operation is a parex single-source kernel (PX_FOR / PX_REDUCE). The file is
 * kept in the common subset of C11 and C++ so that a build with the Cuda space can compile it
 * with nvcc, which adds the device half of each kernel.
 *
 * Algorithm (x0 = 0, r = b, z = M^-1 r with M = diag(A) or I, p = z):
 *
 *   loop:  Ap = A p,  pAp = p.Ap                       kernel cg_spmv_dot   (one reduce)
 *          alpha = rz / pAp
 *          r -= alpha Ap,  rz' = r.M^-1 r,  rr = r.r     kernel cg_update_r   (one reduce)
 *          stop if sqrt(rr) / ||b|| < tol               (then x += alpha p, cg_axpy)
 *          beta = rz' / rz
 *          x += alpha p,  p = M^-1 r + beta p            kernel cg_update_xp  (one for)
 *
 * Fusions and why: the SpMV writes Ap and folds p.Ap while p[i] and Ap[i] are in registers,
 * saving a 16n-byte dot pass. The residual update folds r.r (and r.z) while r[i] is in a
 * register, saving another 16n (24n with z). z is never stored: M^-1 r is recomputed where it
 * is needed. The x update is deferred to the p update of the same iteration, where p[i] is
 * read anyway: x += alpha p would otherwise read p a second time (saves 8n per iteration).
 * On host spaces the SpMV runs four rows at a time (cg_spmv_dot_host: four independent
 * addition chains instead of one, bitwise the same sums).
 *
 * Byte model per iteration (what --json's gbs uses). Doubles are 8 bytes, column indices 4,
 * row offsets 8. Each array element a kernel reads counts once, each element it writes counts
 * once (no write-allocate traffic), and the gathered p[col[k]] counts as n reads (the stencil
 * and banded matrices reuse p from cache):
 *   cg_spmv_dot   8(n+1) + 12 nnz + 8n (p) + 8n (Ap write)                = 12 nnz + 24n + 8
 *   cg_update_r   Ap, r read, r write: 24n            (+8n dinv with Jacobi)
 *   cg_update_xp  p, x, r read; p, x write: 40n       (+8n dinv with Jacobi)
 *   last iteration: cg_axpy (x, p read; x write: 24n) instead of cg_update_xp.
 * Plain CG moves 12 nnz + 88n + 8 bytes per iteration, Jacobi 12 nnz + 104n + 8.
 * Flop model: spmv 2 nnz, p.Ap 2n; r update 2n, r.r 2n (Jacobi: + r.M^-1 r 3n); x update 2n,
 * p update 2n (Jacobi +1n); final axpy 2n. Plain: 2 nnz + 10n per iteration, Jacobi 2 nnz + 14n.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "cg.h"
#include "cg_kernels.h"
#include "cg_spmv_rows.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

double cg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cg_note_iteration(cg_result *res, double seconds)
{
    if (res->n_first_iters < CG_FIRST_ITERS)
        res->first_iters_seconds[res->n_first_iters++] = seconds;
}

/* ---- HPCG generator ---------------------------------------------------------------------- */

/* Neighbours of coordinate k along an axis of length N (itself included): 1, 2 or 3. */
#define CG_CNT(k, N) (1 + ((k) > 0) + ((k) < (N)-1))
/* Sum of CG_CNT(i, N) for i in [0, k): k (itself) + k - 1 left neighbours (none for i = 0)
 * + min(k, N - 1) right neighbours (none for i = N - 1). */
#define CG_PREFIX(k, N) ((k) + ((k) > 0 ? (k)-1 : 0) + ((k) < (N)-1 ? (k) : (N)-1))

typedef struct {
    int64_t nx, ny, nz;
    int64_t tx, ty; /* CG_PREFIX(nx, nx), CG_PREFIX(ny, ny): entries per x line, per y column */
    int64_t *row_ptr;
    int32_t *col;
    double *val;
} hpcg_args;

/*
 * Row i = ix + nx (iy + ny iz). Its offset counts the entries of all earlier rows: the whole
 * z-planes below (tx ty per plane-of-counts, weighted by the z counts), the y-lines before it
 * in its plane, and the points before it on its line. The count is separable,
 * cnt(ix) cnt(iy) cnt(iz), which gives the closed form below.
 */
PX_FOR(cg_hpcg_fill, hpcg_args, i, a)
{
    const int64_t nx = a->nx, ny = a->ny, nz = a->nz;
    const int64_t ix = i % nx, iy = (i / nx) % ny, iz = i / (nx * ny);
    const int64_t cy = CG_CNT(iy, ny), cz = CG_CNT(iz, nz);
    int64_t k = a->tx * a->ty * CG_PREFIX(iz, nz) + a->tx * CG_PREFIX(iy, ny) * cz +
                CG_PREFIX(ix, nx) * cy * cz;
    a->row_ptr[i] = k;
    /* (dz, dy, dx) in lexicographic order gives ascending columns. */
    for (int64_t dz = -1; dz <= 1; dz++) {
        const int64_t z = iz + dz;
        if (z < 0 || z >= nz)
            continue;
        for (int64_t dy = -1; dy <= 1; dy++) {
            const int64_t y = iy + dy;
            if (y < 0 || y >= ny)
                continue;
            for (int64_t dx = -1; dx <= 1; dx++) {
                const int64_t x = ix + dx;
                if (x < 0 || x >= nx)
                    continue;
                const int64_t c = x + nx * (y + ny * z);
                a->col[k] = (int32_t)c;
                a->val[k] = c == i ? 26.0 : -1.0;
                k++;
            }
        }
    }
    if (i == nx * ny * nz - 1)
        a->row_ptr[i + 1] = k;
}

void cg_matrix_free(cg_matrix *A)
{
    if (!A)
        return;
    if (A->space && !A->borrowed) {
        (void)px_free(A->space, A->row_ptr);
        (void)px_free(A->space, A->col);
        (void)px_free(A->space, A->val);
    }
    memset(A, 0, sizeof *A);
}

static int matrix_alloc(px_space *s, int64_t n, int64_t nnz, cg_matrix *A)
{
    memset(A, 0, sizeof *A);
    A->space = s;
    A->n = n;
    A->nnz = nnz;
    A->row_ptr = (int64_t *)px_malloc(s, (size_t)(n + 1) * sizeof(int64_t));
    A->col = (int32_t *)px_malloc(s, (size_t)nnz * sizeof(int32_t));
    A->val = (double *)px_malloc(s, (size_t)nnz * sizeof(double));
    if (!A->row_ptr || !A->col || !A->val) {
        cg_matrix_free(A);
        return PX_ENOMEM;
    }
    return PX_OK;
}

int cg_hpcg_generate(px_space *s, int64_t nx, int64_t ny, int64_t nz, cg_matrix *A)
{
    if (!A)
        return PX_EFAULT;
    memset(A, 0, sizeof *A);
    if (nx < 1 || ny < 1 || nz < 1 || nx > INT32_MAX / ny || nx * ny > INT32_MAX / nz)
        return PX_EINVAL;
    const int64_t n = nx * ny * nz;
    hpcg_args a;
    a.nx = nx;
    a.ny = ny;
    a.nz = nz;
    a.tx = CG_PREFIX(nx, nx);
    a.ty = CG_PREFIX(ny, ny);
    const int64_t nnz = a.tx * a.ty * CG_PREFIX(nz, nz);
    int rc = matrix_alloc(s, n, nnz, A);
    if (rc != PX_OK)
        return rc;
    a.row_ptr = A->row_ptr;
    a.col = A->col;
    a.val = A->val;
    rc = px_parallel_for(s, "cg_hpcg_fill", px_range(0, n), &cg_hpcg_fill, &a, sizeof a);
    if (rc == PX_OK)
        rc = px_fence(s);
    if (rc != PX_OK)
        cg_matrix_free(A);
    return rc;
}

int cg_matrix_upload(px_space *s, int64_t n, int64_t nnz, const int64_t *row_ptr,
                     const int32_t *col, const double *val, cg_matrix *A)
{
    int rc = matrix_alloc(s, n, nnz, A);
    if (rc != PX_OK)
        return rc;
    px_space *host = px_space_by_name("serial");
    rc = px_deep_copy(s, A->row_ptr, host, row_ptr, (size_t)(n + 1) * sizeof(int64_t));
    if (rc == PX_OK)
        rc = px_deep_copy(s, A->col, host, col, (size_t)nnz * sizeof(int32_t));
    if (rc == PX_OK)
        rc = px_deep_copy(s, A->val, host, val, (size_t)nnz * sizeof(double));
    if (rc != PX_OK)
        cg_matrix_free(A);
    return rc;
}

int cg_matrix_wrap(px_space *s, int64_t n, int64_t nnz, int64_t *row_ptr, int32_t *col, double *val,
                   cg_matrix *A)
{
    if (!A)
        return PX_EINVAL;
    memset(A, 0, sizeof *A);
    if (!s || px_space_host_accessible(s) != 1 || !row_ptr || (nnz > 0 && (!col || !val)))
        return PX_EINVAL;
    A->space = s;
    A->n = n;
    A->nnz = nnz;
    A->row_ptr = row_ptr;
    A->col = col;
    A->val = val;
    A->borrowed = 1;
    return PX_OK;
}

/* ---- CG kernels -------------------------------------------------------------------------- */

static void cg_pair_identity(void *v)
{
    cg_pair *p = (cg_pair *)v;
    p->rz = 0.0;
    p->rr = 0.0;
}

static void cg_pair_join(void *dst, const void *src)
{
    cg_pair *d = (cg_pair *)dst;
    const cg_pair *s = (const cg_pair *)src;
    d->rz += s->rz;
    d->rr += s->rr;
}

const px_reducer cg_pair_sum =
    PX_REDUCER_INIT(cg_pair, cg_pair_identity, cg_pair_join, "cg_pair_sum");

/* b = A * ones: the row sums. */
PX_FOR(cg_row_sum, rowop_args, i, a)
{
    double s = 0.0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
        s += a->val[k];
    a->y[i] = s;
}

/* dinv = 1 / diag(A); folds the smallest diagonal entry (0 when one is missing). */
PX_REDUCE(cg_diag_inv, rowop_args, double, i, a, acc)
{
    double d = 0.0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; k++)
        if (a->col[k] == i)
            d += a->val[k];
    a->y[i] = d > 0.0 ? 1.0 / d : 0.0;
    if (d < *acc)
        *acc = d;
}

/* x = 0, r = b, p = M^-1 b, ap = 0 (its first touch: init_args); folds r.p (= r.M^-1 r). */
PX_REDUCE(cg_init, init_args, double, i, a, acc)
{
    const double bi = a->b[i];
    const double zi = a->dinv ? a->dinv[i] * bi : bi;
    a->x[i] = 0.0;
    a->r[i] = bi;
    a->p[i] = zi;
    a->ap[i] = 0.0;
    *acc += bi * zi;
}

PX_REDUCE(cg_dot, dot_args, double, i, a, acc)
{
    *acc += a->u[i] * a->v[i];
}

/* Ap = A p and p.Ap in one pass: the per-row body. It is the device half of cg_spmv_dot
 * (one row per device thread) and the reference order of the host entry below. */
PX_REDUCE(cg_spmv_dot_row, spmv_args, double, i, a, acc)
{
    double s = 0.0;
    const int64_t e = a->row_ptr[i + 1];
    for (int64_t k = a->row_ptr[i]; k < e; k++)
        s += a->val[k] * a->p[a->col[k]];
    a->ap[i] = s;
    *acc += a->p[i] * s;
}

/* The host entry of cg_spmv_dot: rows [b, e) four at a time through cg_spmv_rows.h, the loop
 * bench_cg_bsp.c runs too; bitwise the same sums as cg_spmv_dot_row (see that header). */
static void cg_spmv_dot_host(int64_t b, int64_t e, void *args, void *accp)
{
    const spmv_args *a = (const spmv_args *)args;
    *(double *)accp = cg_spmv_rows(b, e, a->row_ptr, a->col, a->val, a->p, a->ap, *(double *)accp);
}

/* cg_spmv_dot: cg_spmv_dot_row's kernel with the host entry above (cg_kernels.h). */
CG_REDUCE_WITH_HOST(cg_spmv_dot, spmv_args, double, PX_VALUE_F64, cg_spmv_dot_host,
                    cg_spmv_dot_row);

/* Plain CG: r -= alpha Ap, folding r.r. */
PX_REDUCE(cg_update_r, update_r_args, double, i, a, acc)
{
    const double ri = a->r[i] - a->alpha * a->ap[i];
    a->r[i] = ri;
    *acc += ri * ri;
}

/* Jacobi on host spaces: r -= alpha Ap, folding r.M^-1 r and r.r with one custom reducer. */
PX_REDUCE(cg_update_r_pair, update_r_args, cg_pair, i, a, acc)
{
    const double ri = a->r[i] - a->alpha * a->ap[i];
    a->r[i] = ri;
    acc->rz += ri * ri * a->dinv[i];
    acc->rr += ri * ri;
}

/* Jacobi elsewhere (custom reducers need a device half there): fold r.M^-1 r only; r.r
 * follows as a cg_dot. */
PX_REDUCE(cg_update_r_rz, update_r_args, double, i, a, acc)
{
    const double ri = a->r[i] - a->alpha * a->ap[i];
    a->r[i] = ri;
    *acc += ri * ri * a->dinv[i];
}

/* x += alpha p (deferred from the residual update), then p = M^-1 r + beta p. */
PX_FOR(cg_update_xp, update_xp_args, i, a)
{
    const double pi = a->p[i];
    a->x[i] += a->alpha * pi;
    a->p[i] = a->r[i] + a->beta * pi;
}

PX_FOR(cg_update_xp_jacobi, update_xp_args, i, a)
{
    const double pi = a->p[i];
    a->x[i] += a->alpha * pi;
    a->p[i] = a->dinv[i] * a->r[i] + a->beta * pi;
}

/* x += alpha p: the last iteration's deferred x update. */
PX_FOR(cg_axpy, update_xp_args, i, a)
{
    a->x[i] += a->alpha * a->p[i];
}

/* ||b - A x||^2 with ax = A x. */
PX_REDUCE(cg_resid2, check_args, double, i, a, acc)
{
    const double d = a->b[i] - a->ax[i];
    *acc += d * d;
}

/* max |x_i - 1|. */
PX_REDUCE(cg_max_err, check_args, double, i, a, acc)
{
    const double d = fabs(a->x[i] - 1.0);
    if (d > *acc || d != d) /* NaN propagates */
        *acc = d;
}

/* ---- solver ------------------------------------------------------------------------------ */

/* Launch helper for solve_with: on failure, say which call failed and return its status. */
#define CG_TRY(call)                                                                               \
    do {                                                                                           \
        const int rc_ = (call);                                                                    \
        if (rc_ != PX_OK) {                                                                        \
            snprintf(res->message, sizeof res->message, "%s failed: %s", #call, px_strerror(rc_)); \
            return rc_;                                                                            \
        }                                                                                          \
    } while (0)

/* The solver's work vectors, all on the matrix's space. dinv is NULL without Jacobi. */
typedef struct {
    double *b, *x, *r, *p, *ap, *dinv;
    int given_b; /* cg_solve_rhs: b is the caller's (read only) and the exact x unknown */
} cg_vectors;

/* The solve proper (cg_solve owns the vectors). Early returns only, no cleanup here. */
static int solve_with(const cg_matrix *A, const cg_options *o, cg_result *res, const cg_vectors *v)
{
    px_space *s = A->space;
    const int64_t n = A->n;
    const px_range_policy all = px_range(0, n);
    double *b = v->b, *x = v->x, *r = v->r, *p = v->p, *ap = v->ap, *dinv = v->dinv;
    /* Custom reducers run on host spaces; elsewhere Jacobi uses two builtin sums. */
    const int pair_ok = px_space_host_accessible(s);

    /* Setup: b = A 1, dinv, x = 0, r = b, p = z. */
    rowop_args ro;
    ro.row_ptr = A->row_ptr;
    ro.col = A->col;
    ro.val = A->val;
    ro.y = b;
    if (!v->given_b)
        CG_TRY(px_parallel_for(s, "cg_row_sum", all, &cg_row_sum, &ro, sizeof ro));
    if (o->jacobi) {
        double dmin = 0.0;
        ro.y = dinv;
        CG_TRY(px_parallel_reduce(s, "cg_diag_inv", all, &cg_diag_inv, &ro, sizeof ro, &px_min_f64,
                                  &dmin));
        if (!(dmin > 0.0)) {
            snprintf(res->message, sizeof res->message,
                     "Jacobi preconditioning needs a positive diagonal; smallest diagonal "
                     "entry is %g",
                     dmin);
            return PX_EINVAL;
        }
    }
    dot_args da;
    da.u = b;
    da.v = b;
    double bb = 0.0;
    CG_TRY(px_parallel_reduce(s, "cg_dot", all, &cg_dot, &da, sizeof da, &px_sum_f64, &bb));
    if (!(bb > 0.0) || !isfinite(bb)) {
        snprintf(res->message, sizeof res->message,
                 "%s has norm^2 %g; CG needs a nonzero finite right-hand side",
                 v->given_b ? "b" : "b = A * ones", bb);
        return PX_EINVAL;
    }
    const double bnorm = sqrt(bb);
    init_args ia;
    ia.b = b;
    ia.dinv = dinv;
    ia.x = x;
    ia.r = r;
    ia.p = p;
    ia.ap = ap;
    double rz = 0.0;
    CG_TRY(px_parallel_reduce(s, "cg_init", all, &cg_init, &ia, sizeof ia, &px_sum_f64, &rz));
    double rr = bb;

    spmv_args sa;
    sa.row_ptr = A->row_ptr;
    sa.col = A->col;
    sa.val = A->val;
    sa.p = p;
    sa.ap = ap;
    update_r_args ua;
    ua.alpha = 0.0;
    ua.ap = ap;
    ua.dinv = dinv;
    ua.r = r;
    update_xp_args xa;
    xa.alpha = 0.0;
    xa.beta = 0.0;
    xa.r = r;
    xa.dinv = dinv;
    xa.x = x;
    xa.p = p;
    dot_args ra;
    ra.u = r;
    ra.v = r;

    res->relres = sqrt(rr) / bnorm;
    const double t0 = cg_now();
    double next_progress = t0 + o->progress_s;
    int64_t it = 0;
    int64_t n_xp = 0; /* cg_update_xp launches, for the byte model */
    /* The fastest single iteration: a load-robust estimate of the solver's own speed on a
     * shared machine (one quiet 0.3 ms window is far likelier than a quiet whole run). */
    double t_iter = t0;
    res->min_iter_seconds = HUGE_VAL;
    res->n_first_iters = 0;
    while (res->relres >= o->tol && it < o->max_iters) {
        double pap = 0.0;
        CG_TRY(px_parallel_reduce(s, "cg_spmv_dot", all, &cg_spmv_dot, &sa, sizeof sa, &px_sum_f64,
                                  &pap));
        if (!(pap > 0.0) || !isfinite(pap)) {
            snprintf(res->message, sizeof res->message,
                     "breakdown at iteration %lld: p.Ap = %g (the matrix is not symmetric "
                     "positive definite)",
                     (long long)(it + 1), pap);
            return PX_EINVAL;
        }
        const double alpha = rz / pap;
        ua.alpha = alpha;
        double rz_new;
        if (!o->jacobi) {
            CG_TRY(px_parallel_reduce(s, "cg_update_r", all, &cg_update_r, &ua, sizeof ua,
                                      &px_sum_f64, &rr));
            rz_new = rr;
        } else if (pair_ok) {
            cg_pair pr;
            CG_TRY(px_parallel_reduce(s, "cg_update_r_pair", all, &cg_update_r_pair, &ua, sizeof ua,
                                      &cg_pair_sum, &pr));
            rz_new = pr.rz;
            rr = pr.rr;
        } else {
            CG_TRY(px_parallel_reduce(s, "cg_update_r_rz", all, &cg_update_r_rz, &ua, sizeof ua,
                                      &px_sum_f64, &rz_new));
            CG_TRY(px_parallel_reduce(s, "cg_dot", all, &cg_dot, &ra, sizeof ra, &px_sum_f64, &rr));
        }
        it++;
        res->relres = sqrt(rr) / bnorm;
        if (!isfinite(res->relres)) {
            snprintf(res->message, sizeof res->message, "residual became %g at iteration %lld",
                     res->relres, (long long)it);
            return PX_EINVAL;
        }
        xa.alpha = alpha;
        if (res->relres < o->tol || it == o->max_iters) {
            CG_TRY(px_parallel_for(s, "cg_axpy", all, &cg_axpy, &xa, sizeof xa));
            CG_TRY(px_fence(s));
            const double t_end = cg_now();
            if (t_end - t_iter < res->min_iter_seconds)
                res->min_iter_seconds = t_end - t_iter;
            cg_note_iteration(res, t_end - t_iter);
            break;
        }
        xa.beta = rz_new / rz;
        rz = rz_new;
        CG_TRY(px_parallel_for(s, "cg_update_xp", all,
                               o->jacobi ? &cg_update_xp_jacobi : &cg_update_xp, &xa, sizeof xa));
        n_xp++;
        const double t_end = cg_now();
        if (t_end - t_iter < res->min_iter_seconds)
            res->min_iter_seconds = t_end - t_iter;
        cg_note_iteration(res, t_end - t_iter);
        t_iter = t_end;
        if (o->progress && o->progress_s > 0.0) {
            const double now = t_end;
            if (now >= next_progress) {
                fprintf(o->progress, "  iteration %6lld  relres %.3e  elapsed %.1f s\n",
                        (long long)it, res->relres, now - t0);
                fflush(o->progress);
                next_progress = now + o->progress_s;
            }
        }
    }
    CG_TRY(px_fence(s));
    res->seconds = cg_now() - t0;
    if (it == 0)
        res->min_iter_seconds = 0.0;
    res->iterations = it;
    res->converged = res->relres < o->tol;
    {
        const double dn = (double)n, dnnz = (double)A->nnz, di = (double)it;
        const double extra = o->jacobi ? 8.0 * dn : 0.0;
        res->bytes = di * (12.0 * dnnz + 24.0 * dn + 8.0 + 24.0 * dn + extra) +
                     (double)n_xp * (40.0 * dn + extra) + (it > 0 ? 24.0 * dn : 0.0);
        res->flops = di * (2.0 * dnnz + 2.0 * dn + (o->jacobi ? 7.0 : 4.0) * dn) +
                     (double)n_xp * (o->jacobi ? 5.0 : 4.0) * dn + (it > 0 ? 2.0 * dn : 0.0);
    }

    /* Verification: true residual and error against the exact solution (all ones). */
    sa.p = x;
    double xax = 0.0;
    CG_TRY(
        px_parallel_reduce(s, "cg_spmv_dot", all, &cg_spmv_dot, &sa, sizeof sa, &px_sum_f64, &xax));
    check_args ca;
    ca.b = b;
    ca.ax = ap;
    ca.x = x;
    double res2 = 0.0;
    CG_TRY(px_parallel_reduce(s, "cg_resid2", all, &cg_resid2, &ca, sizeof ca, &px_sum_f64, &res2));
    res->true_relres = sqrt(res2) / bnorm;
    if (v->given_b)
        res->max_abs_err = NAN;
    else
        CG_TRY(px_parallel_reduce(s, "cg_max_err", all, &cg_max_err, &ca, sizeof ca, &px_max_f64,
                                  &res->max_abs_err));
    return PX_OK;
}

int cg_solve(const cg_matrix *A, const cg_options *o, cg_result *res)
{
    if (!A || !o || !res || !A->space)
        return PX_EFAULT;
    memset(res, 0, sizeof *res);
    px_space *s = A->space;
    const size_t vbytes = (size_t)A->n * sizeof(double);
    cg_vectors v;
    v.b = (double *)px_malloc(s, vbytes);
    v.x = (double *)px_malloc(s, vbytes);
    v.r = (double *)px_malloc(s, vbytes);
    v.p = (double *)px_malloc(s, vbytes);
    v.ap = (double *)px_malloc(s, vbytes);
    v.dinv = o->jacobi ? (double *)px_malloc(s, vbytes) : NULL;
    v.given_b = 0;
    int rc;
    if (!v.b || !v.x || !v.r || !v.p || !v.ap || (o->jacobi && !v.dinv)) {
        rc = PX_ENOMEM;
        snprintf(res->message, sizeof res->message, "out of memory for vectors of %lld doubles",
                 (long long)A->n);
    } else {
        rc = solve_with(A, o, res, &v);
    }
    (void)px_free(s, v.b);
    (void)px_free(s, v.x);
    (void)px_free(s, v.r);
    (void)px_free(s, v.p);
    (void)px_free(s, v.ap);
    if (v.dinv)
        (void)px_free(s, v.dinv);
    return rc;
}

int cg_solve_rhs(const cg_matrix *A, const double *b, double *x, const cg_options *o,
                 cg_result *res)
{
    if (!A || !b || !x || !o || !res || !A->space)
        return PX_EFAULT;
    memset(res, 0, sizeof *res);
    px_space *s = A->space;
    const size_t vbytes = (size_t)A->n * sizeof(double);
    cg_vectors v;
    v.b = (double *)(uintptr_t)b; /* only read: given_b skips the cg_row_sum that writes it */
    v.x = x;
    v.r = (double *)px_malloc(s, vbytes);
    v.p = (double *)px_malloc(s, vbytes);
    v.ap = (double *)px_malloc(s, vbytes);
    v.dinv = o->jacobi ? (double *)px_malloc(s, vbytes) : NULL;
    v.given_b = 1;
    int rc;
    if (!v.r || !v.p || !v.ap || (o->jacobi && !v.dinv)) {
        rc = PX_ENOMEM;
        snprintf(res->message, sizeof res->message, "out of memory for vectors of %lld doubles",
                 (long long)A->n);
    } else {
        rc = solve_with(A, o, res, &v);
    }
    (void)px_free(s, v.r);
    (void)px_free(s, v.p);
    (void)px_free(s, v.ap);
    if (v.dinv)
        (void)px_free(s, v.dinv);
    return rc;
}
