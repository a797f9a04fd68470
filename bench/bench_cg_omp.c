/*
 * bench/bench_cg_omp.c - the OpenMP baseline for parex-cg: the same CSR CG (same fused
 * kernels, same stopping rule, same byte and flop models as examples/cg/cg.c) written as plain
 * `#pragma omp parallel for` loops with static schedules, plus a STREAM triad.
 *
 *   bench_cg_omp [--matrix FILE | --grid N] [--precond none|jacobi] [--tol X]
 *                [--max-iters N] [--json]
 *   bench_cg_omp --stream [--stream-n N]        STREAM triad a = b + s c, best of 10
 *
 * Run it with OMP_NUM_THREADS, OMP_PROC_BIND and OMP_PLACES set; bench_cg drives it next to
 * parex-cg. With --json the last line is a JSON object with the fields parex-cg prints
 * (iterations, relres, max_abs_err, seconds, seconds_per_iter, gflops, gbs) or, for --stream,
 * triad_gbs.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "mmio.h"

static void *xmalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) {
        fprintf(stderr, "bench_cg_omp: out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

typedef struct {
    int64_t n, nnz;
    int64_t *rp;
    int32_t *col;
    double *val;
} csr;

#define CNT(k, N)    (1 + ((k) > 0) + ((k) < (N)-1))
#define PREFIX(k, N) ((k) + ((k) > 0 ? (k)-1 : 0) + ((k) < (N)-1 ? (k) : (N)-1))

/* The HPCG 27-point matrix, rows filled in parallel (first touch as in the solver). */
static void hpcg(int64_t g, csr *A)
{
    const int64_t n = g * g * g, t = PREFIX(g, g);
    A->n = n;
    A->nnz = t * t * t;
    A->rp = xmalloc((size_t)(n + 1) * sizeof *A->rp);
    A->col = xmalloc((size_t)A->nnz * sizeof *A->col);
    A->val = xmalloc((size_t)A->nnz * sizeof *A->val);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        const int64_t ix = i % g, iy = (i / g) % g, iz = i / (g * g);
        int64_t k = t * t * PREFIX(iz, g) + t * PREFIX(iy, g) * CNT(iz, g) +
                    PREFIX(ix, g) * CNT(iy, g) * CNT(iz, g);
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
        if (i == n - 1)
            A->rp[n] = k;
    }
}

/* Read a file; copy into arrays first-touched by the OpenMP threads. */
static void load(const char *path, csr *A)
{
    mm_csr m;
    char err[512];
    if (mm_read_csr(path, MM_REQUIRE_SQUARE, &m, err, sizeof err) != MM_OK) {
        fprintf(stderr, "bench_cg_omp: %s\n", err);
        exit(1);
    }
    A->n = m.n_rows;
    A->nnz = m.nnz;
    A->rp = xmalloc((size_t)(A->n + 1) * sizeof *A->rp);
    A->col = xmalloc((size_t)A->nnz * sizeof *A->col);
    A->val = xmalloc((size_t)A->nnz * sizeof *A->val);
    const int64_t n = A->n;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        A->rp[i] = m.row_ptr[i];
        for (int64_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; k++) {
            A->col[k] = m.col[k];
            A->val[k] = m.val[k];
        }
    }
    A->rp[n] = m.row_ptr[n];
    mm_csr_free(&m);
}

typedef struct {
    int64_t iterations;
    int converged;
    double relres, max_abs_err, seconds, min_iter_seconds, bytes, flops;
} result;

static int solve(const csr *A, int jacobi, double tol, int64_t max_iters, result *res)
{
    const int64_t n = A->n;
    const int64_t *restrict rp = A->rp;
    const int32_t *restrict col = A->col;
    const double *restrict val = A->val;
    double *restrict b = xmalloc((size_t)n * sizeof(double));
    double *restrict x = xmalloc((size_t)n * sizeof(double));
    double *restrict r = xmalloc((size_t)n * sizeof(double));
    double *restrict p = xmalloc((size_t)n * sizeof(double));
    double *restrict ap = xmalloc((size_t)n * sizeof(double));
    double *restrict dinv = xmalloc((size_t)n * sizeof(double));
    double dmin = INFINITY, bb = 0.0, rz = 0.0;
#pragma omp parallel for schedule(static) reduction(min : dmin) reduction(+ : bb)
    for (int64_t i = 0; i < n; i++) {
        double s = 0.0, d = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            s += val[k];
            if (col[k] == i)
                d += val[k];
        }
        b[i] = s;
        dinv[i] = d > 0.0 ? 1.0 / d : 0.0;
        dmin = d < dmin ? d : dmin;
        bb += s * s;
    }
    if ((jacobi && !(dmin > 0.0)) || !(bb > 0.0)) {
        fprintf(stderr, "bench_cg_omp: matrix unsuitable (min diagonal %g, ||b||^2 %g)\n", dmin,
                bb);
        return 1;
    }
#pragma omp parallel for schedule(static) reduction(+ : rz)
    for (int64_t i = 0; i < n; i++) {
        const double bi = b[i], zi = jacobi ? dinv[i] * bi : bi;
        x[i] = 0.0;
        r[i] = bi;
        p[i] = zi;
        rz += bi * zi;
    }
    const double bnorm = sqrt(bb);
    double rr = bb;
    res->relres = sqrt(rr) / bnorm;
    int64_t it = 0, n_xp = 0;
    const double t0 = bench_now_s();
    double t_iter = t0; /* fastest single iteration, as parex-cg measures it */
    res->min_iter_seconds = INFINITY;
    while (res->relres >= tol && it < max_iters) {
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
        if (!(pap > 0.0)) {
            fprintf(stderr, "bench_cg_omp: breakdown, p.Ap = %g\n", pap);
            return 1;
        }
        const double alpha = rz / pap;
        double rz_new = 0.0;
        rr = 0.0;
        if (!jacobi) {
#pragma omp parallel for schedule(static) reduction(+ : rr)
            for (int64_t i = 0; i < n; i++) {
                const double ri = r[i] - alpha * ap[i];
                r[i] = ri;
                rr += ri * ri;
            }
            rz_new = rr;
        } else {
#pragma omp parallel for schedule(static) reduction(+ : rr, rz_new)
            for (int64_t i = 0; i < n; i++) {
                const double ri = r[i] - alpha * ap[i];
                r[i] = ri;
                rz_new += ri * ri * dinv[i];
                rr += ri * ri;
            }
        }
        it++;
        res->relres = sqrt(rr) / bnorm;
        if (res->relres < tol || it == max_iters) {
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; i++)
                x[i] += alpha * p[i];
            const double t_end = bench_now_s();
            if (t_end - t_iter < res->min_iter_seconds)
                res->min_iter_seconds = t_end - t_iter;
            break;
        }
        const double beta = rz_new / rz;
        rz = rz_new;
        if (!jacobi) {
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; i++) {
                const double pi = p[i];
                x[i] += alpha * pi;
                p[i] = r[i] + beta * pi;
            }
        } else {
#pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < n; i++) {
                const double pi = p[i];
                x[i] += alpha * pi;
                p[i] = dinv[i] * r[i] + beta * pi;
            }
        }
        n_xp++;
        const double t_end = bench_now_s();
        if (t_end - t_iter < res->min_iter_seconds)
            res->min_iter_seconds = t_end - t_iter;
        t_iter = t_end;
    }
    res->seconds = bench_now_s() - t0;
    if (it == 0)
        res->min_iter_seconds = 0.0;
    res->iterations = it;
    res->converged = res->relres < tol;
    const double dn = (double)n, dnnz = (double)A->nnz, di = (double)it;
    const double extra = jacobi ? 8.0 * dn : 0.0;
    res->bytes = di * (12.0 * dnnz + 24.0 * dn + 8.0 + 24.0 * dn + extra) +
                 (double)n_xp * (40.0 * dn + extra) + (it > 0 ? 24.0 * dn : 0.0);
    res->flops = di * (2.0 * dnnz + 2.0 * dn + (jacobi ? 7.0 : 4.0) * dn) +
                 (double)n_xp * (jacobi ? 5.0 : 4.0) * dn + (it > 0 ? 2.0 * dn : 0.0);
    double err = 0.0;
#pragma omp parallel for schedule(static) reduction(max : err)
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs(x[i] - 1.0);
        err = d > err ? d : err;
    }
    res->max_abs_err = err;
    free(b);
    free(x);
    free(r);
    free(p);
    free(ap);
    free(dinv);
    return 0;
}

/* STREAM triad a = b + s c over n doubles, best of 10 timed repetitions; GB/s counting
 * 24 bytes per element (two reads, one write, no write-allocate), as STREAM does. */
static double triad(int64_t n)
{
    double *restrict a = xmalloc((size_t)n * sizeof(double));
    double *restrict b = xmalloc((size_t)n * sizeof(double));
    double *restrict c = xmalloc((size_t)n * sizeof(double));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    double best = INFINITY;
    const double s = 3.0;
    for (int rep = 0; rep < 11; rep++) {
        const double t0 = bench_now_s();
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++)
            a[i] = b[i] + s * c[i];
        const double t = bench_now_s() - t0;
        if (rep > 0 && t < best) /* the first touches the pages and warms up */
            best = t;
    }
    if (a[n / 2] != 7.0)
        fprintf(stderr, "bench_cg_omp: triad check failed\n");
    free(a);
    free(b);
    free(c);
    return 24.0 * (double)n / best * 1e-9;
}

int main(int argc, char **argv)
{
    const char *matrix = NULL;
    int64_t grid = 64, max_iters = 20000, stream_n = 0;
    int jacobi = 0, json = 0, stream = 0;
    double tol = 1e-8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--stream") == 0) {
            stream = 1;
        } else if (v && strcmp(a, "--matrix") == 0) {
            matrix = v;
            i++;
        } else if (v && strcmp(a, "--grid") == 0) {
            grid = atoll(v);
            i++;
        } else if (v && strcmp(a, "--precond") == 0) {
            jacobi = strcmp(v, "jacobi") == 0;
            i++;
        } else if (v && strcmp(a, "--tol") == 0) {
            tol = atof(v);
            i++;
        } else if (v && strcmp(a, "--max-iters") == 0) {
            max_iters = atoll(v);
            i++;
        } else if (v && strcmp(a, "--stream-n") == 0) {
            stream_n = atoll(v);
            i++;
        } else {
            fprintf(stderr, "bench_cg_omp: bad argument '%s' (see the file comment)\n", a);
            return 2;
        }
    }
    if (grid < 1 || grid > 1290 || !(tol > 0.0) || max_iters < 1) {
        fprintf(stderr, "bench_cg_omp: bad --grid, --tol or --max-iters\n");
        return 2;
    }
    const int threads = omp_get_max_threads();
    if (stream) {
        /* Default: 2^23 doubles per array, 192 MiB in all, 6x this machine's 32 MiB L3. */
        const int64_t n = stream_n > 0 ? stream_n : (int64_t)1 << 23;
        const double gbs = triad(n);
        printf("bench_cg_omp: STREAM triad, %d threads, n %lld: %.2f GB/s\n", threads, (long long)n,
               gbs);
        if (json)
            printf("{\"threads\": %d, \"triad_n\": %lld, \"triad_gbs\": %.6g}\n", threads,
                   (long long)n, gbs);
        return 0;
    }
    csr A;
    char name[256];
    if (matrix) {
        load(matrix, &A);
        const char *bn = strrchr(matrix, '/');
        snprintf(name, sizeof name, "%s", bn ? bn + 1 : matrix);
    } else {
        hpcg(grid, &A);
        snprintf(name, sizeof name, "hpcg-%lldx%lldx%lld", (long long)grid, (long long)grid,
                 (long long)grid);
    }
    result r;
    memset(&r, 0, sizeof r);
    if (solve(&A, jacobi, tol, max_iters, &r) != 0)
        return 1;
    const double per = r.iterations ? r.seconds / (double)r.iterations : 0.0;
    printf("bench_cg_omp: %s, %d threads, %lld iterations, relres %.3e, max|x-1| %.3e, "
           "%.3f ms/iteration, %.2f GB/s\n",
           name, threads, (long long)r.iterations, r.relres, r.max_abs_err, per * 1e3,
           r.bytes / r.seconds * 1e-9);
    if (json)
        printf("{\"matrix\": \"%s\", \"n\": %lld, \"nnz\": %lld, \"space\": \"openmp\", "
               "\"threads\": %d, \"iterations\": %lld, \"converged\": %s, \"relres\": %.6g, "
               "\"max_abs_err\": %.6g, \"seconds\": %.6g, \"seconds_per_iter\": %.6g, "
               "\"min_iter_seconds\": %.6g, "
               "\"gflops\": %.6g, \"gbs\": %.6g}\n",
               name, (long long)A.n, (long long)A.nnz, threads, (long long)r.iterations,
               r.converged ? "true" : "false", r.relres, r.max_abs_err, r.seconds, per,
               r.min_iter_seconds, r.flops / r.seconds * 1e-9, r.bytes / r.seconds * 1e-9);
    free(A.rp);
    free(A.col);
    free(A.val);
    return r.converged ? 0 : 3;
}
