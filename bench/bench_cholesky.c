/*
 * bench/bench_cholesky.c - tiled Cholesky on the parex engine against OpenBLAS, same run.
 *
 *   bench_cholesky [--n 4096] [--tile 256] [--workers 2] [--engine per_device] [--reps 5]
 *                  [--fifo 0|1] [--gemm 0|1]
 *
 * Measures, alternating within each repetition so drift hits all sides alike:
 *   lapacke  LAPACKE_dpotrf (lower, column-major n x n) with OpenBLAS on `workers` threads;
 *   parex    the example's tiled DAG (examples/cholesky) on chol_engine_create(kind, workers):
 *            `workers` threads run tile ops (per_device: through its priority queue unless
 *            --fifo 1), every tile kernel a single-threaded OpenBLAS call;
 * and, once (unless --gemm 0), the dgemm rate for reference: n x n x n with `workers` threads, and
 * one tile (tile^3) on one thread (the per-core rate the tile kernels can reach). Prints medians,
 * GFLOP/s with n^3/3 flops for Cholesky, the ratio parex / lapacke (> 1 means parex is faster) and
 * parex's fraction of the threaded dgemm rate; the last line is JSON.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep, setenv */

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"

#include "chol.h"

/* CPU seconds used by every thread of the process so far (user + system). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Let OpenBLAS's helper threads finish their busy-wait before the next phase measures. */
static void settle(void)
{
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Dense column-major copy of the lower triangle (and the whole diagonal tiles). */
static void to_dense(const chol_matrix *m, double *d)
{
    int64_t n = m->n;
    for (int64_t c = 0; c < n; c++)
        for (int64_t r = c; r < n; r++)
            d[c * n + r] = *chol_at(m, r, c);
}

static double gemm_rate(int n, int threads)
{
    double *a = malloc((size_t)n * (size_t)n * sizeof *a);
    double *b = malloc((size_t)n * (size_t)n * sizeof *b);
    double *c = malloc((size_t)n * (size_t)n * sizeof *c);
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return NAN;
    }
    for (size_t e = 0; e < (size_t)n * (size_t)n; e++) {
        a[e] = (double)(e % 7) * 0.1;
        b[e] = (double)(e % 5) * 0.2;
        c[e] = 0.0;
    }
    chol_blas_set_threads(threads);
    double best = INFINITY;
    /* Small problems repeat until the timing is well above clock resolution. */
    int inner = n >= 1024 ? 1 : (int)(1 + (1 << 27) / ((double)n * n * n));
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_now_s();
        for (int it = 0; it < inner; it++)
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, n, -1.0, a, n, b, n, 1.0, c,
                        n);
        double t = (bench_now_s() - t0) / inner;
        if (t < best)
            best = t;
    }
    chol_blas_single_thread();
    free(a);
    free(b);
    free(c);
    return 2.0 * (double)n * n * n / best * 1e-9;
}

int main(int argc, char **argv)
{
    chol_blas_single_thread();
    /* The LAPACKE_dpotrf and dgemm baselines run OpenBLAS threads created by this thread after
     * px_initialize; with PX_BIND=close|spread this thread is bound to Threads rank 0's core,
     * and threads it creates inherit that one core (as under OMP_PROC_BIND). Leave it unbound
     * so the baselines get both cores, unless the user chose a binding. */
    setenv("PX_BIND", "none", 0);
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "bench_cholesky: px_initialize: %s\n", px_strerror(rc));
        return 2;
    }
    long n = 4096, tile = 256, workers = 2, reps = 5;
    const char *engine = "per_device";
    int fifo = 0, gemm = 1, parex_first = 0;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--n") == 0)
            n = strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--tile") == 0)
            tile = strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--workers") == 0)
            workers = strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--reps") == 0)
            reps = strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--engine") == 0)
            engine = argv[a + 1];
        else if (strcmp(argv[a], "--gemm") == 0)
            gemm = (int)strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--fifo") == 0)
            fifo = (int)strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--parex-first") == 0)
            parex_first = (int)strtol(argv[a + 1], NULL, 10);
        else
            n = -1;
    }
    px_engine_kind kind = PX_ENGINE_PER_DEVICE;
    if (strcmp(engine, "naive") == 0)
        kind = PX_ENGINE_NAIVE;
    else if (strcmp(engine, "pooled") == 0)
        kind = PX_ENGINE_POOLED;
    else if (strcmp(engine, "per_device") != 0)
        n = -1;
    if (n < 1 || tile < 1 || workers < 1 || reps < 1 || reps > 100 || n > 65536) {
        fprintf(stderr, "usage: bench_cholesky [--n N] [--tile T] [--workers W] [--reps R]"
                        " [--engine naive|pooled|per_device] [--fifo 0|1] [--gemm 0|1]"
                        " [--parex-first 0|1]\n");
        (void)px_finalize();
        return 2;
    }

    chol_matrix a, l;
    px_fn_property prop;
    px_engine *e = chol_engine_create(kind, (int)workers, fifo, &prop);
    if (!e || chol_matrix_init(&a, n, tile) != PX_OK || chol_matrix_init(&l, n, tile) != PX_OK ||
        chol_matrix_attach(&l, e) != PX_OK) {
        fprintf(stderr, "bench_cholesky: setup failed (engine or %ld x %ld matrix)\n", n, n);
        return 1;
    }
    l.prop = prop;
    chol_generate(&a, 1);
    size_t nn = (size_t)n * (size_t)n;
    /* The baseline gets the same 2 MiB pages as parex's tiles (chol_alloc_huge). */
    double *dense = chol_alloc_huge(nn * sizeof *dense), *work = chol_alloc_huge(nn * sizeof *work);
    if (!dense || !work) {
        fprintf(stderr, "bench_cholesky: out of memory\n");
        return 1;
    }
    memset(dense, 0, nn * sizeof *dense);
    to_dense(&a, dense);

    double gemm_mt = gemm ? gemm_rate(n < 2048 ? (int)n : 2048, (int)workers) : NAN;
    double gemm_tile = gemm ? gemm_rate((int)l.tile, 1) : NAN;
    if (gemm)
        settle();

    double t_lap[100], t_px[100], c_lap[100], c_px[100];
    double flops = (double)n * (double)n * (double)n / 3.0;
    int info = 0;
    /* r = -1 is an untimed warm-up of both (OpenBLAS buffers, engine threads, page faults).
     * The order alternates between repetitions, starting with LAPACKE first unless
     * --parex-first 1 (bench_cholesky.sh runs one repetition per process and alternates the
     * flag), so an order effect (the first of a back-to-back pair of runs was slower on this
     * VM, bench/RESULTS.md ## CG) cancels. */
    for (int r = -1; r < reps; r++) {
        for (int half = 0; half < 2; half++) {
            /* Repetition r runs LAPACKE first when parex_first XOR (r odd) is 0. */
            int lapacke_now = (half == 0) == ((parex_first ^ (r & 1)) == 0);
            if (lapacke_now) {
                memcpy(work, dense, nn * sizeof *work);
                chol_blas_set_threads((int)workers);
                double c0 = cpu_s(), t0 = bench_now_s();
                info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int)n, work, (int)n);
                if (r >= 0) {
                    t_lap[r] = bench_now_s() - t0;
                    c_lap[r] = cpu_s() - c0;
                }
                chol_blas_single_thread();
            } else {
                chol_matrix_copy(&l, &a);
                double c0 = cpu_s(), t0 = bench_now_s();
                rc = chol_factor(&l);
                if (r >= 0) {
                    t_px[r] = bench_now_s() - t0;
                    c_px[r] = cpu_s() - c0;
                }
            }
            settle();
        }
        if (rc != PX_OK || info != 0) {
            fprintf(stderr, "bench_cholesky: factorization failed (parex %s, dpotrf info %d)\n",
                    px_strerror(rc), info);
            return 1;
        }
    }
    double res = chol_residual_estimate(&a, &l, 4, 99) / chol_norm_fro(&a);
    double lap = bench_median(t_lap, (int)reps), px = bench_median(t_px, (int)reps);
    double g_lap = flops / lap * 1e-9, g_px = flops / px * 1e-9;
    /* GFLOP per CPU-second: what the cores this process got did with their time (spinning
     * counts, sleeping does not). Robust to other load on the machine, unlike wall time. */
    double cg_lap = flops / bench_median(c_lap, (int)reps) * 1e-9;
    double cg_px = flops / bench_median(c_px, (int)reps) * 1e-9;
    const char *queue = prop == PX_FN_CPU_PRIORITIZED ? "priority" : "fifo";
    printf("cholesky n=%ld tile=%ld workers=%ld engine=%s queue=%s reps=%ld (medians)\n", n, l.tile,
           workers, engine, queue, reps);
    if (gemm) {
        printf("  dgemm %d threads (n=%ld)     %8.2f GFLOP/s\n", (int)workers, n < 2048 ? n : 2048L,
               gemm_mt);
        printf("  dgemm 1 thread (tile %ld)     %8.2f GFLOP/s\n", l.tile, gemm_tile);
    }
    printf("  LAPACKE_dpotrf %ld threads    %8.4f s %8.2f GFLOP/s %8.2f GFLOP/cpu-s\n", workers,
           lap, g_lap, cg_lap);
    printf("  parex tiled, %ld workers      %8.4f s %8.2f GFLOP/s %8.2f GFLOP/cpu-s  residual "
           "%.1e\n",
           workers, px, g_px, cg_px, res);
    printf("  ratio parex/lapacke %.3fx", g_px / g_lap);
    if (gemm)
        printf("   parex/dgemm(%ld threads) %.1f%%", workers, 100.0 * g_px / gemm_mt);
    printf("\n{\"bench\": \"cholesky\", \"n\": %ld, \"tile\": %ld, \"workers\": %ld, "
           "\"engine\": \"%s\", \"queue\": \"%s\", \"parex_s\": %.6f, \"parex_gflops\": %.3f, "
           "\"lapacke_s\": %.6f, \"lapacke_gflops\": %.3f, ",
           n, l.tile, workers, engine, queue, px, g_px, lap, g_lap);
    if (gemm)
        printf("\"dgemm_gflops\": %.3f, \"dgemm_tile_gflops\": %.3f, ", gemm_mt, gemm_tile);
    printf("\"parex_gflops_per_cpu_s\": %.3f, \"lapacke_gflops_per_cpu_s\": %.3f, ", cg_px, cg_lap);
    printf("\"ratio_vs_lapacke\": %.4f, \"residual\": %.3e}\n", g_px / g_lap, res);
    free(dense);
    free(work);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
    px_engine_destroy(e);
    px_finalize();
    return 0;
}
