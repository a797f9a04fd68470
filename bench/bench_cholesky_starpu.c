/*
 * bench/bench_cholesky_starpu.c - the same tiled double-precision Cholesky DAG as
 * examples/cholesky, submitted to StarPU instead of the parex engine: same tile storage, same
 * single-threaded OpenBLAS tile kernels, same priorities. Debian's own StarPU example
 * (cholesky_implicit) computes in single precision, so this is the like-for-like runtime
 * comparison. Workers come from StarPU's environment (STARPU_NCPU; the driver sets
 * STARPU_NCUDA=0 STARPU_NOPENCL=0).
 *
 *   STARPU_NCPU=2 bench_cholesky_starpu [--n 4096] [--tile 256] [--reps 5]
 *
 * Prints the median GFLOP/s (n^3/3 flops) and GFLOP per CPU-second; the last line is JSON.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <lapacke.h>
#include <math.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cblas.h>

#include "bench_util.h"

#include "chol.h"

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* StarPU matrix interface: NX is the contiguous (row) count of a column-major tile. */
#define TILE_PTR(b)  ((double *)STARPU_MATRIX_GET_PTR(b))
#define TILE_ROWS(b) ((int)STARPU_MATRIX_GET_NX(b))
#define TILE_COLS(b) ((int)STARPU_MATRIX_GET_NY(b))
#define TILE_LD(b)   ((int)STARPU_MATRIX_GET_LD(b))

/* cl_arg of POTRF and TRSM: the matrix (for its diagonal-inverse buffers) and the column. */
static void tile_arg(void *arg, chol_matrix **m, int64_t *k)
{
    starpu_codelet_unpack_args(arg, m, k);
}

static void potrf_cpu(void *buffers[], void *arg)
{
    chol_matrix *m;
    int64_t k;
    tile_arg(arg, &m, &k);
    int nb = TILE_ROWS(buffers[0]), use_inv = 0;
    /* The same POTRF and diagonal inverse as parex's potrf op (chol.c), ordered for this
     * column's TRSMs by the diagonal tile's handle, as parex orders them by its Var. */
    (void)chol_potrf_tile(nb, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), chol_dinv_block(m, k), nb,
                          &use_inv);
    m->dinv_ok[k] = (unsigned char)use_inv;
}

static void trsm_cpu(void *buffers[], void *arg)
{
    chol_matrix *m;
    int64_t k;
    tile_arg(arg, &m, &k);
    int nb = TILE_ROWS(buffers[0]), mb = TILE_ROWS(buffers[1]);
    /* The same TRSM kernel parex's trsm op runs, so the runtimes compare like for like. */
    chol_trsm_tile(mb, nb, TILE_PTR(buffers[0]), TILE_LD(buffers[0]), chol_dinv_for_trsm(m, k), nb,
                   TILE_PTR(buffers[1]), TILE_LD(buffers[1]));
}

static void syrk_cpu(void *buffers[], void *arg)
{
    (void)arg;
    int nj = TILE_ROWS(buffers[0]), nk = TILE_COLS(buffers[0]);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, nj, nk, -1.0, TILE_PTR(buffers[0]),
                TILE_LD(buffers[0]), 1.0, TILE_PTR(buffers[1]), TILE_LD(buffers[1]));
}

static void gemm_cpu(void *buffers[], void *arg)
{
    (void)arg;
    int mi = TILE_ROWS(buffers[0]), nk = TILE_COLS(buffers[0]), nj = TILE_ROWS(buffers[1]);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, mi, nj, nk, -1.0, TILE_PTR(buffers[0]),
                TILE_LD(buffers[0]), TILE_PTR(buffers[1]), TILE_LD(buffers[1]), 1.0,
                TILE_PTR(buffers[2]), TILE_LD(buffers[2]));
}

static struct starpu_codelet cl_potrf = {
    .cpu_funcs = {potrf_cpu}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "potrf"};
static struct starpu_codelet cl_trsm = {
    .cpu_funcs = {trsm_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_RW}, .name = "trsm"};
static struct starpu_codelet cl_syrk = {
    .cpu_funcs = {syrk_cpu}, .nbuffers = 2, .modes = {STARPU_R, STARPU_RW}, .name = "syrk"};
static struct starpu_codelet cl_gemm = {.cpu_funcs = {gemm_cpu},
                                        .nbuffers = 3,
                                        .modes = {STARPU_R, STARPU_R, STARPU_RW},
                                        .name = "gemm"};

/* Submit the right-looking DAG in the same order and with the same priorities as chol.c. */
static int submit(chol_matrix *m, starpu_data_handle_t *h)
{
    int64_t nt = m->nt;
    int rc = 0;
    for (int64_t k = 0; k < nt && rc == 0; k++) {
        rc |= starpu_task_insert(&cl_potrf, STARPU_RW, h[chol_tid(k, k)], STARPU_PRIORITY,
                                 chol_priority(nt, k, 3), STARPU_VALUE, &m, sizeof m, STARPU_VALUE,
                                 &k, sizeof k, 0);
        for (int64_t i = k + 1; i < nt; i++)
            rc |= starpu_task_insert(&cl_trsm, STARPU_R, h[chol_tid(k, k)], STARPU_RW,
                                     h[chol_tid(i, k)], STARPU_PRIORITY, chol_priority(nt, k, 2),
                                     STARPU_VALUE, &m, sizeof m, STARPU_VALUE, &k, sizeof k, 0);
        for (int64_t j = k + 1; j < nt; j++) {
            rc |=
                starpu_task_insert(&cl_syrk, STARPU_R, h[chol_tid(j, k)], STARPU_RW,
                                   h[chol_tid(j, j)], STARPU_PRIORITY, chol_priority(nt, j, 1), 0);
            for (int64_t i = j + 1; i < nt; i++)
                rc |= starpu_task_insert(&cl_gemm, STARPU_R, h[chol_tid(i, k)], STARPU_R,
                                         h[chol_tid(j, k)], STARPU_RW, h[chol_tid(i, j)],
                                         STARPU_PRIORITY, chol_priority(nt, j, 0), 0);
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    long n = 4096, tile = 256, reps = 5;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--n") == 0)
            n = strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--tile") == 0)
            tile = strtol(argv[a + 1], NULL, 10);
        else if (strcmp(argv[a], "--reps") == 0)
            reps = strtol(argv[a + 1], NULL, 10);
        else
            n = -1;
    }
    if (n < 1 || tile < 1 || reps < 1 || reps > 100 || n > 65536) {
        fprintf(stderr, "usage: bench_cholesky_starpu [--n N] [--tile T] [--reps R]\n");
        return 2;
    }
    chol_blas_single_thread();
    chol_matrix a, l;
    if (chol_matrix_init(&a, n, tile) != PX_OK || chol_matrix_init(&l, n, tile) != PX_OK ||
        chol_matrix_alloc_inverses(&l) != PX_OK) {
        fprintf(stderr, "bench_cholesky_starpu: cannot allocate %ld x %ld\n", n, n);
        return 1;
    }
    chol_generate(&a, 1); /* no Vars attached: filled serially, same values as parex's */
    if (starpu_init(NULL) != 0) {
        fprintf(stderr, "bench_cholesky_starpu: starpu_init failed\n");
        return 1;
    }
    size_t ntiles = chol_tid(l.nt, 0);
    starpu_data_handle_t *h = malloc(ntiles * sizeof *h);
    double t[100], c[100];
    double flops = (double)n * (double)n * (double)n / 3.0;
    for (long r = -1; r < reps; r++) { /* r = -1: untimed warm-up */
        chol_matrix_copy(&l, &a);
        for (int64_t i = 0; i < l.nt; i++)
            for (int64_t j = 0; j <= i; j++)
                starpu_matrix_data_register(
                    &h[chol_tid(i, j)], STARPU_MAIN_RAM, (uintptr_t)chol_tile(&l, i, j),
                    (uint32_t)chol_tsize(&l, i), (uint32_t)chol_tsize(&l, i),
                    (uint32_t)chol_tsize(&l, j), sizeof(double));
        double c0 = cpu_s(), t0 = bench_now_s();
        int rc = submit(&l, h);
        starpu_task_wait_for_all();
        if (r >= 0) {
            t[r] = bench_now_s() - t0;
            c[r] = cpu_s() - c0;
        }
        for (size_t e = 0; e < ntiles; e++)
            starpu_data_unregister(h[e]);
        if (rc != 0) {
            fprintf(stderr, "bench_cholesky_starpu: task submission failed\n");
            return 1;
        }
    }
    double res = chol_residual_estimate(&a, &l, 4, 99) / chol_norm_fro(&a);
    int workers = (int)starpu_cpu_worker_get_count();
    starpu_shutdown();
    double tm = bench_median(t, (int)reps), cm = bench_median(c, (int)reps);
    printf("starpu tiled (same DAG and kernels), n=%ld tile=%ld cpu workers=%d reps=%ld\n", n,
           l.tile, workers, reps);
    printf("  %8.4f s %8.2f GFLOP/s %8.2f GFLOP/cpu-s  residual %.1e\n", tm, flops / tm * 1e-9,
           flops / cm * 1e-9, res);
    printf("{\"bench\": \"cholesky_starpu\", \"n\": %ld, \"tile\": %ld, \"workers\": %d, "
           "\"starpu_s\": %.6f, \"starpu_gflops\": %.3f, \"starpu_gflops_per_cpu_s\": %.3f, "
           "\"residual\": %.3e}\n",
           n, l.tile, workers, tm, flops / tm * 1e-9, flops / cm * 1e-9, res);
    free(h);
    chol_matrix_fini(&l);
    chol_matrix_fini(&a);
    return res < 1e-12 ? 0 : 1;
}
