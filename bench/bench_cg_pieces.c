/* bench/bench_cg_pieces.c - what cutting the CG's SpMV into pieces costs, and where the pieces
 * start: the compensated SpMV of the distributed CG (cg_dd.c's cg_spmv_dot_dd, whose host
 * entry takes rows four at a time, examples/cg/cg_spmv_rows.h) over an HPCG matrix, in one call
 * and cut into pieces (px_range_chunked, one call a piece), all in one process.
 *
 * Why: dcg.c cuts the interior SpMV into pieces so that a one-core rank tests its messages
 * between them (parex-cg --interior-chunk). Session 15 measured the pieces 4-10 % slower on
 * shared memory and could not say why; session 16 found that the cost is where the pieces
 * start, not how many there are: a piece that starts 1 or 2 rows past a multiple of 4 forms
 * other groups of four rows than one call does, and those ran slower. So the cases:
 *
 *   one call      px_range(0, n): the reference every ratio is taken against
 *   pieces 4096   pieces of 4,096 rows: every piece starts on a group boundary
 *   pieces 4097   pieces of 4,097 rows: piece k starts k rows past one (k mod 4)
 *   shift 1, 2    one call over [1, n) and [2, n): every group shifted by 1 or 2 rows
 *   plain sum     one call of cg.c's cg_spmv_dot (the same row loop, p.Ap as a plain double
 *                 sum, as bench_cg_bsp folds it): what the compensated fold costs
 *
 * Every round runs each case once, the order rotated round by round (the first of a pair runs
 * slower on these VMs), and the table gives the median and minimum microseconds a call and the
 * ratio of the medians to one call's (the shifted cases skip 1 or 2 rows of ~10^5, which is
 * not what they measure).
 *
 * --offset K starts the vectors p and Ap K doubles past a 64-byte boundary (px_malloc's
 * alignment is 64 bytes; malloc's large blocks start 16 bytes past one, K = 2): where a group's
 * four values fall in the cache lines is what the cuts change.
 *
 *   bench_cg_pieces [--grid N] [--rounds R] [--space serial|threads] [--offset K]
 *   e.g. PX_NUM_THREADS=1 taskset -c 0 build-rel/bench/bench_cg_pieces --grid 48 --rounds 300
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cg.h"
#include "cg_dd.h"
#include "parex.h"

enum { N_CASES = 6, CASE_PLAIN = 5 };

static const char *const case_name[N_CASES] = {"one call", "pieces 4096", "pieces 4097",
                                               "shift 1",  "shift 2",     "plain sum"};

static px_range_policy case_policy(int c, int64_t n)
{
    switch (c) {
    case 1:
        return px_range_chunked(0, n, 4096, PX_SCHEDULE_STATIC);
    case 2:
        return px_range_chunked(0, n, 4097, PX_SCHEDULE_STATIC);
    case 3:
        return px_range(1, n);
    case 4:
        return px_range(2, n);
    default:
        return px_range(0, n);
    }
}

static int usage(const char *why)
{
    fprintf(stderr,
            "bench_cg_pieces: %s\nusage: bench_cg_pieces [--grid N (4..256, default 48)] "
            "[--rounds R (3..100000, default 300)] [--space serial|threads] "
            "[--offset K (0..7 doubles, default 0)]\n",
            why);
    return 2;
}

int main(int argc, char **argv)
{
    long grid = 48, rounds = 300, offset = 0;
    const char *space = "threads";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(argv[i], "--grid") && v) {
            grid = strtol(v, &end, 10);
            if (*end || grid < 4 || grid > 256)
                return usage("--grid wants 4..256");
        } else if (!strcmp(argv[i], "--rounds") && v) {
            rounds = strtol(v, &end, 10);
            if (*end || rounds < 3 || rounds > 100000)
                return usage("--rounds wants 3..100000");
        } else if (!strcmp(argv[i], "--offset") && v) {
            offset = strtol(v, &end, 10);
            if (*end || offset < 0 || offset > 7)
                return usage("--offset wants 0..7");
        } else if (!strcmp(argv[i], "--space") && v) {
            space = v; /* a host space: the kernel's host entry is what is measured */
            if (strcmp(space, "serial") && strcmp(space, "threads"))
                return usage("--space wants serial or threads");
        } else {
            return usage("unknown argument");
        }
        i++;
    }
    int rc = px_initialize(NULL, NULL);
    if (rc != PX_OK) {
        fprintf(stderr, "bench_cg_pieces: px_initialize: %s\n", px_strerror(rc));
        return 1;
    }
    px_space *s = px_space_by_name(space);
    if (!s) {
        fprintf(stderr, "bench_cg_pieces: no space '%s' in this build\n", space);
        px_finalize();
        return 2;
    }
    cg_matrix A;
    rc = cg_hpcg_generate(s, grid, grid, grid, &A);
    double *p_block = px_malloc(s, (size_t)(A.n + offset) * sizeof(double));
    double *ap_block = px_malloc(s, (size_t)(A.n + offset) * sizeof(double));
    double *p = p_block ? p_block + offset : NULL, *ap = ap_block ? ap_block + offset : NULL;
    double *t = malloc((size_t)N_CASES * (size_t)rounds * sizeof(double));
    if (rc != PX_OK || !p || !ap || !t) {
        fprintf(stderr, "bench_cg_pieces: out of memory for the %ld^3 problem\n", grid);
        return 1;
    }
    for (int64_t i = 0; i < A.n; i++)
        p[i] = 1.0 + 1e-3 * (double)(i % 17);
    spmv_args sa = {.row_ptr = A.row_ptr, .col = A.col, .val = A.val, .p = p, .ap = ap};
    cg_dd sum;
    double plain;
    for (long r = 0; r < rounds; r++)
        for (int k = 0; k < N_CASES; k++) {
            const int c = (int)((r + k) % N_CASES);
            const double t0 = bench_now_s();
            if (c == CASE_PLAIN)
                rc = px_parallel_reduce(s, "cg_pieces", px_range(0, A.n), &cg_spmv_dot, &sa,
                                        sizeof sa, &px_sum_f64, &plain);
            else
                rc = px_parallel_reduce(s, "cg_pieces", case_policy(c, A.n), &cg_spmv_dot_dd, &sa,
                                        sizeof sa, &cg_dd_sum, &sum);
            t[c * rounds + r] = bench_now_s() - t0;
            if (rc != PX_OK) {
                fprintf(stderr, "bench_cg_pieces: launch: %s\n", px_strerror(rc));
                return 1;
            }
        }
    printf("## bench_cg_pieces: HPCG %ld^3 (%lld rows), space %s (%d threads), vectors %ld "
           "doubles past 64 bytes, %ld rounds\n\n",
           grid, (long long)A.n, space, px_space_concurrency(s), offset, rounds);
    printf("| case | median us | min us | ratio to one call |\n|---|---:|---:|---:|\n");
    double ref = 0.0;
    for (int c = 0; c < N_CASES; c++) {
        double *v = t + c * rounds;
        const double med = bench_median(v, (int)rounds); /* sorts v: v[0] is the minimum */
        if (c == 0)
            ref = med;
        printf("| %s | %.1f | %.1f | %.3f |\n", case_name[c], 1e6 * med, 1e6 * v[0], med / ref);
    }
    free(t);
    px_free(s, ap_block);
    px_free(s, p_block);
    cg_matrix_free(&A);
    px_finalize();
    return 0;
}
