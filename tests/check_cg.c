/* tests/check_cg.c - examples/cg: the HPCG generator against a sequential reference, the CG
 * solver on serial and threads (HPCG grid, bcsstk09 plain, bcsstk16 Jacobi, error paths), and
 * the parex-cg command line (--json output, bad flags and bad input give error exits). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, WEXITSTATUS */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cg.h"
#include "cg_dd.h"
#include "cg_kernels.h"
#include "mmio.h"
#include "px_test.h"

/* Loop index -> space name. */
static const char *const space_names[] = {"serial", "threads"};

static px_space *space_or_skip(int i)
{
    px_space *s = px_space_by_name(space_names[i]);
    if (!s)
        fprintf(stderr, "check_cg: SKIP space %s: not available\n", space_names[i]);
    return s;
}

/* ---- HPCG generator ---- */

/* Compare the generated matrix with a sequential, obviously-correct construction. */
static void check_hpcg(px_space *s, int64_t nx, int64_t ny, int64_t nz)
{
    cg_matrix A;
    ck_assert_int_eq(cg_hpcg_generate(s, nx, ny, nz, &A), PX_OK);
    const int64_t n = nx * ny * nz;
    ck_assert_int_eq(A.n, n);
    int64_t k = 0;
    for (int64_t iz = 0; iz < nz; iz++)
        for (int64_t iy = 0; iy < ny; iy++)
            for (int64_t ix = 0; ix < nx; ix++) {
                const int64_t row = ix + nx * (iy + ny * iz);
                ck_assert_int_eq(A.row_ptr[row], k);
                for (int64_t dz = -1; dz <= 1; dz++)
                    for (int64_t dy = -1; dy <= 1; dy++)
                        for (int64_t dx = -1; dx <= 1; dx++) {
                            const int64_t x = ix + dx, y = iy + dy, z = iz + dz;
                            if (x < 0 || x >= nx || y < 0 || y >= ny || z < 0 || z >= nz)
                                continue;
                            const int64_t c = x + nx * (y + ny * z);
                            ck_assert_int_eq(A.col[k], c);
                            ck_assert_double_eq(A.val[k], c == row ? 26.0 : -1.0);
                            k++;
                        }
            }
    ck_assert_int_eq(A.row_ptr[n], k);
    ck_assert_int_eq(A.nnz, k);
    cg_matrix_free(&A);
    ck_assert_ptr_null(A.row_ptr);
}

START_TEST(test_hpcg_matches_sequential_stencil)
{
    px_space *s = space_or_skip(_i);
    if (!s)
        return;
    check_hpcg(s, 1, 1, 1);
    check_hpcg(s, 2, 1, 1);
    check_hpcg(s, 1, 3, 2);
    check_hpcg(s, 5, 4, 3);
    check_hpcg(s, 8, 8, 8);
    check_hpcg(s, 3, 17, 2);
}
END_TEST

START_TEST(test_hpcg_rejects_bad_dimensions)
{
    cg_matrix A;
    px_space *s = px_space_by_name("serial");
    ck_assert_int_eq(cg_hpcg_generate(s, 0, 4, 4, &A), PX_EINVAL);
    ck_assert_int_eq(cg_hpcg_generate(s, 4, -1, 4, &A), PX_EINVAL);
    ck_assert_int_eq(cg_hpcg_generate(s, 2000, 2000, 2000, &A), PX_EINVAL);
    ck_assert_int_eq(cg_hpcg_generate(s, 4, 4, 4, NULL), PX_EFAULT);
}
END_TEST

/* ---- kernels ---- */

/* Next value of a 64-bit LCG (Knuth's MMIX constants); deterministic test data. */
static uint64_t lcg_next(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 11;
}

/* A double in [-0.5, 0.5) times 10^-3 .. 10^3: sums of these round differently when
 * reassociated, so a bitwise comparison sees any change of summation order. */
static double lcg_double(uint64_t *state)
{
    const double u = (double)lcg_next(state) / 9007199254740992.0 - 0.5;
    return u * pow(10.0, (double)(lcg_next(state) % 7) - 3.0);
}

/* A random CSR matrix of @n rows (lengths 0..40, every 9th row empty), a vector p and two
 * output vectors, from @seed; rcsr_free releases them. */
typedef struct {
    int64_t *row_ptr;
    int32_t *col;
    double *val, *p, *ap1, *ap2;
} rcsr;

static rcsr rcsr_make(int64_t n, uint64_t seed)
{
    rcsr m;
    m.row_ptr = malloc((size_t)(n + 1) * sizeof *m.row_ptr);
    ck_assert_ptr_nonnull(m.row_ptr);
    m.row_ptr[0] = 0;
    for (int64_t i = 0; i < n; i++)
        m.row_ptr[i + 1] = m.row_ptr[i] + (i % 9 == 4 ? 0 : (int64_t)(lcg_next(&seed) % 41));
    const int64_t nnz = m.row_ptr[n];
    m.col = malloc((size_t)nnz * sizeof *m.col);
    m.val = malloc((size_t)nnz * sizeof *m.val);
    m.p = malloc((size_t)n * sizeof *m.p);
    m.ap1 = malloc((size_t)n * sizeof *m.ap1);
    m.ap2 = malloc((size_t)n * sizeof *m.ap2);
    ck_assert(m.col && m.val && m.p && m.ap1 && m.ap2);
    for (int64_t k = 0; k < nnz; k++) {
        m.col[k] = (int32_t)(lcg_next(&seed) % (uint64_t)n);
        m.val[k] = lcg_double(&seed);
    }
    for (int64_t i = 0; i < n; i++)
        m.p[i] = lcg_double(&seed);
    return m;
}

static void rcsr_free(rcsr *m)
{
    free(m->row_ptr);
    free(m->col);
    free(m->val);
    free(m->p);
    free(m->ap1);
    free(m->ap2);
}

/*
 * cg_spmv_dot (host entry: four rows interleaved) against cg_spmv_dot_row (one row per index,
 * the reference order) on a random CSR matrix whose row lengths are 0..40 in every mix (empty
 * rows, groups of four of equal and of unequal lengths), over ranges whose ends are not
 * multiples of four: Ap and p.Ap bitwise equal, rows outside the range untouched. On serial,
 * p.Ap is also the sequential row-order fold.
 */
START_TEST(test_spmv_dot_is_bitwise_the_row_at_a_time_kernel)
{
    px_space *s = space_or_skip(_i);
    if (!s)
        return;
    enum { N = 203 };
    rcsr m = rcsr_make(N, 12345);
    const int64_t *row_ptr = m.row_ptr;
    const int32_t *col = m.col;
    const double *val = m.val, *p = m.p;
    double *ap1 = m.ap1, *ap2 = m.ap2;
    static const int64_t ranges[][2] = {{0, N},  {1, N}, {2, N - 1}, {3, N - 2}, {5, 6},
                                        {7, 10}, {0, 4}, {4, 4},     {N - 3, N}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        const int64_t b = ranges[r][0], e = ranges[r][1];
        for (int64_t i = 0; i < N; i++)
            ap1[i] = ap2[i] = -7.0;
        spmv_args a1 = {row_ptr, col, val, p, ap1}, a2 = {row_ptr, col, val, p, ap2};
        double d1 = 1.0, d2 = 2.0;
        ck_assert_int_eq(px_parallel_reduce(s, NULL, px_range(b, e), &cg_spmv_dot, &a1, sizeof a1,
                                            &px_sum_f64, &d1),
                         PX_OK);
        ck_assert_int_eq(px_parallel_reduce(s, NULL, px_range(b, e), &cg_spmv_dot_row, &a2,
                                            sizeof a2, &px_sum_f64, &d2),
                         PX_OK);
        ck_assert_msg(memcmp(ap1, ap2, N * sizeof *ap1) == 0, "Ap differs on rows [%lld, %lld)",
                      (long long)b, (long long)e);
        ck_assert_msg(memcmp(&d1, &d2, sizeof d1) == 0, "p.Ap %.17g vs %.17g on rows [%lld, %lld)",
                      d1, d2, (long long)b, (long long)e);
        for (int64_t i = 0; i < N; i++)
            if (i < b || i >= e)
                ck_assert_double_eq(ap1[i], -7.0);
        if (strcmp(space_names[_i], "serial") == 0) {
            double ref = 0.0;
            for (int64_t i = b; i < e; i++) {
                double t = 0.0;
                for (int64_t k = row_ptr[i]; k < row_ptr[i + 1]; k++)
                    t += val[k] * p[col[k]];
                ck_assert(memcmp(&t, &ap1[i], sizeof t) == 0);
                ref += p[i] * t;
            }
            ck_assert(memcmp(&ref, &d1, sizeof ref) == 0);
        }
    }
    rcsr_free(&m);
}
END_TEST

/*
 * cg_spmv_dot_dd (host entry: four rows at a time, each row's p[i] Ap[i] folded compensated as
 * it comes), the compensated SpMV dcg.c runs on host spaces, against cg_spmv_dot_dd_row (one
 * row per index) on a random CSR matrix of 700 rows (lengths 0..40, every 9th row empty), over
 * ranges that start and end anywhere (and across 256-row blocks, which an earlier version had):
 * Ap and both halves of the compensated p.Ap bitwise equal, rows outside the range untouched.
 */
START_TEST(test_compensated_spmv_dot_is_bitwise_the_row_at_a_time_kernel)
{
    px_space *s = space_or_skip(_i);
    if (!s)
        return;
    enum { N = 700 };
    rcsr m = rcsr_make(N, 777);
    const int64_t *row_ptr = m.row_ptr;
    const int32_t *col = m.col;
    const double *val = m.val, *p = m.p;
    double *ap1 = m.ap1, *ap2 = m.ap2;
    static const int64_t ranges[][2] = {{0, N},     {1, N},   {3, 259}, {255, 257},
                                        {256, 512}, {5, 6},   {4, 4},   {N - 3, N},
                                        {100, 613}, {0, 256}, {0, 255}, {2, N - 1}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        const int64_t b = ranges[r][0], e = ranges[r][1];
        for (int64_t i = 0; i < N; i++)
            ap1[i] = ap2[i] = -7.0;
        spmv_args a1 = {row_ptr, col, val, p, ap1}, a2 = {row_ptr, col, val, p, ap2};
        cg_dd d1 = {1.0, 1.0}, d2 = {2.0, 2.0};
        ck_assert_int_eq(px_parallel_reduce(s, NULL, px_range(b, e), &cg_spmv_dot_dd, &a1,
                                            sizeof a1, &cg_dd_sum, &d1),
                         PX_OK);
        ck_assert_int_eq(px_parallel_reduce(s, NULL, px_range(b, e), &cg_spmv_dot_dd_row, &a2,
                                            sizeof a2, &cg_dd_sum, &d2),
                         PX_OK);
        ck_assert_msg(memcmp(ap1, ap2, N * sizeof *ap1) == 0, "Ap differs on rows [%lld, %lld)",
                      (long long)b, (long long)e);
        ck_assert_msg(memcmp(&d1, &d2, sizeof d1) == 0,
                      "p.Ap (%.17g, %.17g) vs (%.17g, %.17g) on rows [%lld, %lld)", d1.hi, d1.lo,
                      d2.hi, d2.lo, (long long)b, (long long)e);
        for (int64_t i = 0; i < N; i++)
            if (i < b || i >= e)
                ck_assert_double_eq(ap1[i], -7.0);
    }
    rcsr_free(&m);
}
END_TEST

/* ---- solver ---- */

static cg_options options(int jacobi, int64_t max_iters)
{
    cg_options o;
    o.tol = 1e-8;
    o.max_iters = max_iters;
    o.jacobi = jacobi;
    o.progress_s = 0.0;
    o.progress = NULL;
    return o;
}

START_TEST(test_cg_converges_on_hpcg_grid_8)
{
    px_space *s = space_or_skip(_i);
    if (!s)
        return;
    for (int jacobi = 0; jacobi <= 1; jacobi++) {
        cg_matrix A;
        ck_assert_int_eq(cg_hpcg_generate(s, 8, 8, 8, &A), PX_OK);
        cg_options o = options(jacobi, 1000);
        cg_result r;
        ck_assert_int_eq(cg_solve(&A, &o, &r), PX_OK);
        ck_assert_int_eq(r.converged, 1);
        ck_assert_double_lt(r.relres, 1e-8);
        ck_assert_double_lt(r.true_relres, 1e-7);
        ck_assert_double_lt(r.max_abs_err, 1e-6);
        ck_assert_int_gt(r.iterations, 5);
        ck_assert_int_lt(r.iterations, 100);
        ck_assert_double_gt(r.bytes, 0.0);
        ck_assert_double_gt(r.flops, 0.0);
        cg_matrix_free(&A);
    }
}
END_TEST

/* Load a SuiteSparse matrix onto s; returns 0 (after a SKIP line) when the folder is absent. */
static int load_matrix(px_space *s, const char *file, cg_matrix *A)
{
    const char *dir = getenv("PX_CG_MATRICES");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir ? dir : "", file);
    if (!dir || !*dir || access(path, R_OK) != 0) {
        fprintf(stderr, "check_cg: SKIP %s: not found (PX_CG_MATRICES=%s)\n", file,
                dir ? dir : "unset");
        return 0;
    }
    mm_csr m;
    char err[512];
    int rc = mm_read_csr(path, MM_REQUIRE_SQUARE, &m, err, sizeof err);
    ck_assert_msg(rc == MM_OK, "%s", err);
    ck_assert_int_eq(cg_matrix_upload(s, m.n_rows, m.nnz, m.row_ptr, m.col, m.val, A), PX_OK);
    mm_csr_free(&m);
    return 1;
}

/* Reference counts from ../shared/data/matrices/README.md; a few percent of slack for other
 * summation orders (thread counts). */
START_TEST(test_cg_bcsstk09_plain_converges_in_about_208_iterations)
{
    px_space *s = space_or_skip(_i);
    cg_matrix A;
    if (!s || !load_matrix(s, "bcsstk09.mtx", &A))
        return;
    cg_options o = options(0, 2000);
    cg_result r;
    ck_assert_int_eq(cg_solve(&A, &o, &r), PX_OK);
    ck_assert_int_eq(r.converged, 1);
    ck_assert_int_ge(r.iterations, 200);
    ck_assert_int_le(r.iterations, 216);
    ck_assert_double_lt(r.max_abs_err, 1e-4);
    cg_matrix_free(&A);
}
END_TEST

START_TEST(test_cg_bcsstk16_jacobi_converges_in_about_197_iterations)
{
    px_space *s = space_or_skip(_i);
    cg_matrix A;
    if (!s || !load_matrix(s, "bcsstk16.mtx", &A))
        return;
    cg_options o = options(1, 2000);
    cg_result r;
    ck_assert_int_eq(cg_solve(&A, &o, &r), PX_OK);
    ck_assert_int_eq(r.converged, 1);
    ck_assert_int_ge(r.iterations, 190);
    ck_assert_int_le(r.iterations, 205);
    /* The README's figure for Jacobi is 5e-7 (plain CG leaves an error of 1.0). */
    ck_assert_double_lt(r.max_abs_err, 1e-5);
    cg_matrix_free(&A);
}
END_TEST

/* A small host matrix uploaded to serial. */
static void upload_small(int64_t n, const int64_t *rp, const int32_t *col, const double *val,
                         cg_matrix *A)
{
    ck_assert_int_eq(cg_matrix_upload(px_space_by_name("serial"), n, rp[n], rp, col, val, A),
                     PX_OK);
}

START_TEST(test_cg_jacobi_rejects_nonpositive_diagonal)
{
    const int64_t rp[] = {0, 2, 4};
    const int32_t col[] = {0, 1, 0, 1};
    const double val[] = {1.0, 0.5, 0.5, -2.0};
    cg_matrix A;
    upload_small(2, rp, col, val, &A);
    cg_options o = options(1, 10);
    cg_result r;
    ck_assert_int_eq(cg_solve(&A, &o, &r), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.message, "positive diagonal"));
    cg_matrix_free(&A);
}
END_TEST

START_TEST(test_cg_indefinite_matrix_is_breakdown_einval)
{
    /* diag(1, -3): b = (1, -3), p.Ap = 1 - 27 < 0 at the first step. */
    const int64_t rp[] = {0, 1, 2};
    const int32_t col[] = {0, 1};
    const double val[] = {1.0, -3.0};
    cg_matrix A;
    upload_small(2, rp, col, val, &A);
    cg_options o = options(0, 10);
    cg_result r;
    ck_assert_int_eq(cg_solve(&A, &o, &r), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.message, "breakdown"));
    cg_matrix_free(&A);
}
END_TEST

START_TEST(test_cg_zero_rhs_is_einval)
{
    const int64_t rp[] = {0, 2, 4};
    const int32_t col[] = {0, 1, 0, 1};
    const double val[] = {1.0, -1.0, -1.0, 1.0};
    cg_matrix A;
    upload_small(2, rp, col, val, &A);
    cg_options o = options(0, 10);
    cg_result r;
    ck_assert_int_eq(cg_solve(&A, &o, &r), PX_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.message, "right-hand side"));
    cg_matrix_free(&A);
    ck_assert_int_eq(cg_solve(NULL, &o, &r), PX_EFAULT);
}
END_TEST

START_TEST(test_cg_stops_at_max_iters_unconverged)
{
    cg_matrix A;
    ck_assert_int_eq(cg_hpcg_generate(px_space_by_name("serial"), 6, 6, 6, &A), PX_OK);
    cg_options o = options(0, 3);
    cg_result r;
    ck_assert_int_eq(cg_solve(&A, &o, &r), PX_OK);
    ck_assert_int_eq(r.converged, 0);
    ck_assert_int_eq(r.iterations, 3);
    ck_assert_double_gt(r.relres, 1e-8);
    cg_matrix_free(&A);
}
END_TEST

/* ---- parex-cg command line ---- */

static char out_path[600], err_path[600], tmpdir[512];
/* The last run_cli's stdout and stderr (malloc'd; replaced by the next run, freed at teardown). */
static char *cli_out, *cli_err;

static void cli_setup(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/px_cg_XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    snprintf(out_path, sizeof out_path, "%s/out", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/err", tmpdir);
}

static void cli_teardown(void)
{
    char p[700];
    free(cli_out);
    free(cli_err);
    cli_out = cli_err = NULL;
    unlink(out_path);
    unlink(err_path);
    snprintf(p, sizeof p, "%s/bad.mtx", tmpdir);
    unlink(p);
    rmdir(tmpdir);
}

/* Run parex-cg with @p args; returns its exit status, or -1 (after SKIP) with no binary.
 * A death by signal fails the test. */
static int run_cli(const char *args)
{
    const char *bin = getenv("PX_CG_BIN");
    if (!bin || !*bin) {
        fprintf(stderr, "check_cg: SKIP command-line test: PX_CG_BIN unset\n");
        return -1;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", bin, args, out_path, err_path);
    int st = system(cmd);
    px_test_capture(&cli_out, out_path);
    px_test_capture(&cli_err, err_path);
    ck_assert_msg(st != -1 && WIFEXITED(st), "parex-cg %s did not exit normally", args);
    /* The shell reports a child killed by a signal as 128 + signal. */
    ck_assert_msg(WEXITSTATUS(st) < 126, "parex-cg %s crashed (status %d): %s", args,
                  WEXITSTATUS(st), cli_err);
    return WEXITSTATUS(st);
}

/* The last non-empty line of the captured stdout. */
static const char *last_line(void)
{
    size_t n = strlen(cli_out);
    while (n > 0 && cli_out[n - 1] == '\n')
        cli_out[--n] = '\0';
    const char *nl = strrchr(cli_out, '\n');
    return nl ? nl + 1 : cli_out;
}

static double json_num(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    ck_assert_msg(p != NULL, "JSON '%s' lacks key %s", json, key);
    return strtod(p + strlen(pat), NULL);
}

START_TEST(test_cli_json_last_line_has_every_field)
{
    int st = run_cli("--grid 8 --space serial --json");
    if (st < 0)
        return;
    ck_assert_msg(st == 0, "exit %d: %s", st, cli_err);
    const char *j = last_line();
    ck_assert_msg(j[0] == '{' && j[strlen(j) - 1] == '}', "last line not JSON: %s", j);
    static const char *const keys[] = {"matrix",  "n",          "nnz",    "space",
                                       "threads", "iterations", "relres", "max_abs_err",
                                       "seconds", "gflops",     "gbs"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char pat[64];
        snprintf(pat, sizeof pat, "\"%s\": ", keys[k]);
        ck_assert_msg(strstr(j, pat) != NULL, "JSON lacks %s: %s", keys[k], j);
    }
    ck_assert_ptr_nonnull(strstr(j, "\"matrix\": \"hpcg-8x8x8\""));
    ck_assert_ptr_nonnull(strstr(j, "\"space\": \"serial\""));
    ck_assert_ptr_nonnull(strstr(j, "\"converged\": true"));
    ck_assert_double_eq(json_num(j, "n"), 512.0);
    ck_assert_double_eq(json_num(j, "nnz"), 10648.0); /* (3*8-2)^3 */
    ck_assert_double_lt(json_num(j, "relres"), 1e-8);
}
END_TEST

/* --grid NXxNYxNZ: a box, named as such; the JSON carries the distribution fields. */
START_TEST(test_cli_grid_box_and_one_rank_fields)
{
    int st = run_cli("--grid 8x4x2 --space serial --partition block --json");
    if (st < 0)
        return;
    ck_assert_msg(st == 0, "exit %d: %s", st, cli_err);
    const char *j = last_line();
    ck_assert_ptr_nonnull(strstr(j, "\"matrix\": \"hpcg-8x4x2\""));
    ck_assert_double_eq(json_num(j, "n"), 64.0);
    ck_assert_double_eq(json_num(j, "nnz"), 22.0 * 10.0 * 4.0); /* (3N-2) per axis */
    ck_assert_double_eq(json_num(j, "ranks"), 1.0);
    ck_assert_double_eq(json_num(j, "threads_per_rank"), 1.0);
    ck_assert_double_eq(json_num(j, "halo_bytes"), 0.0);
    ck_assert_double_eq(json_num(j, "comm_seconds"), 0.0);
    ck_assert_ptr_nonnull(strstr(j, "\"overlap\": null"));
}
END_TEST

START_TEST(test_cli_bcsstk09_json_iterations)
{
    const char *dir = getenv("PX_CG_MATRICES");
    char p[1024], args[1200];
    snprintf(p, sizeof p, "%s/bcsstk09.mtx", dir ? dir : "");
    if (!dir || access(p, R_OK) != 0) {
        fprintf(stderr, "check_cg: SKIP %s: not found\n", p);
        return;
    }
    snprintf(args, sizeof args, "--matrix '%s' --json", p);
    int st = run_cli(args);
    if (st < 0)
        return;
    ck_assert_msg(st == 0, "exit %d: %s", st, cli_err);
    const char *j = last_line();
    const double it = json_num(j, "iterations");
    ck_assert_double_ge(it, 200);
    ck_assert_double_le(it, 216);
    ck_assert_ptr_nonnull(strstr(j, "\"matrix\": \"bcsstk09.mtx\""));
}
END_TEST

/* Each bad command line: exit 2, a message on stderr naming the problem. */
static const struct {
    const char *args, *needle;
} bad_flags[] = {
    {"--bogus", "unknown argument '--bogus'"},
    {"--grid", "needs a value"},
    {"--grid 0", "--grid '0'"},
    {"--grid abc", "--grid 'abc'"},
    {"--grid 5000", "--grid '5000'"},
    {"--tol 2", "--tol '2'"},
    {"--tol=nan", "--tol 'nan'"},
    {"--tol -1e-3", "--tol '-1e-3'"},
    {"--precond ilu", "--precond 'ilu'"},
    {"--max-iters 0", "--max-iters '0'"},
    {"--max-iters 12x", "--max-iters '12x'"},
    {"--progress -1", "--progress '-1'"},
    {"--grid 4x4", "--grid '4x4'"},
    {"--grid 4x4x4x4", "--grid '4x4x4x4'"},
    {"--grid 4x0x4", "--grid '4x0x4'"},
    {"--partition rows", "--partition 'rows' is not metis or block"},
    {"--partition", "needs a value"},
    {"--matrix x.mtx --grid 4", "exclude each other"},
    {"--matrix=", "needs a file name"},
    {"positional", "unknown argument 'positional'"},
    {"--px-bogus=1", "px_initialize failed"},
    {"--px-num-threads=abc", "px_initialize failed"},
};

START_TEST(test_cli_bad_flags_exit_2_with_message)
{
    int st = run_cli(bad_flags[_i].args);
    if (st < 0)
        return;
    ck_assert_msg(st == 2, "'%s' gave exit %d", bad_flags[_i].args, st);
    ck_assert_msg(strstr(cli_err, bad_flags[_i].needle) != NULL, "'%s': stderr '%s' lacks '%s'",
                  bad_flags[_i].args, cli_err, bad_flags[_i].needle);
}
END_TEST

START_TEST(test_cli_malformed_matrix_exits_1_naming_file_and_line)
{
    char p[700], args[800];
    snprintf(p, sizeof p, "%s/bad.mtx", tmpdir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 4\n3 1 1\n", f);
    fclose(f);
    snprintf(args, sizeof args, "--matrix '%s' --space serial", p);
    int st = run_cli(args);
    if (st < 0)
        return;
    ck_assert_int_eq(st, 1);
    char needle[800];
    snprintf(needle, sizeof needle, "%s:4: row index 3 out of range", p);
    ck_assert_msg(strstr(cli_err, needle) != NULL, "stderr '%s' lacks '%s'", cli_err, needle);
    /* A missing file too. */
    snprintf(args, sizeof args, "--matrix '%s/none.mtx'", tmpdir);
    ck_assert_int_eq(run_cli(args), 1);
    ck_assert_ptr_nonnull(strstr(cli_err, "cannot open"));
}
END_TEST

START_TEST(test_cli_unavailable_space_exits_1)
{
    int st = run_cli("--grid 4 --space nosuchspace");
    if (st < 0)
        return;
    ck_assert_int_eq(st, 1);
    ck_assert_ptr_nonnull(strstr(cli_err, "'nosuchspace' is not available"));
    if (!PX_HAVE_CUDA) { /* no Cuda space built: the flag must fail cleanly */
        ck_assert_int_eq(run_cli("--grid 4 --space cuda"), 1);
        ck_assert_ptr_nonnull(strstr(cli_err, "'cuda' is not available"));
    }
}
END_TEST

START_TEST(test_cli_not_converged_exits_3)
{
    int st = run_cli("--grid 6 --space serial --max-iters 2 --json");
    if (st < 0)
        return;
    ck_assert_int_eq(st, 3);
    ck_assert_ptr_nonnull(strstr(last_line(), "\"converged\": false"));
}
END_TEST

START_TEST(test_cli_help_exits_0)
{
    int st = run_cli("--help");
    if (st < 0)
        return;
    ck_assert_int_eq(st, 0);
    ck_assert_ptr_nonnull(strstr(cli_out, "usage: parex-cg"));
}
END_TEST

static Suite *cg_suite(void)
{
    Suite *s = suite_create("cg");
    TCase *tc = tcase_create("generator");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_hpcg_matches_sequential_stencil, 0, 2);
    tcase_add_test(tc, test_hpcg_rejects_bad_dimensions);
    suite_add_tcase(s, tc);

    tc = tcase_create("kernels");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_spmv_dot_is_bitwise_the_row_at_a_time_kernel, 0, 2);
    tcase_add_loop_test(tc, test_compensated_spmv_dot_is_bitwise_the_row_at_a_time_kernel, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("solver");
    tcase_add_checked_fixture(tc, px_test_setup, px_test_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_cg_converges_on_hpcg_grid_8, 0, 2);
    tcase_add_loop_test(tc, test_cg_bcsstk09_plain_converges_in_about_208_iterations, 0, 2);
    tcase_add_loop_test(tc, test_cg_bcsstk16_jacobi_converges_in_about_197_iterations, 0, 2);
    tcase_add_test(tc, test_cg_jacobi_rejects_nonpositive_diagonal);
    tcase_add_test(tc, test_cg_indefinite_matrix_is_breakdown_einval);
    tcase_add_test(tc, test_cg_zero_rhs_is_einval);
    tcase_add_test(tc, test_cg_stops_at_max_iters_unconverged);
    suite_add_tcase(s, tc);

    tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, cli_setup, cli_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cli_json_last_line_has_every_field);
    tcase_add_test(tc, test_cli_bcsstk09_json_iterations);
    tcase_add_test(tc, test_cli_grid_box_and_one_rank_fields);
    tcase_add_loop_test(tc, test_cli_bad_flags_exit_2_with_message, 0,
                        (int)(sizeof bad_flags / sizeof bad_flags[0]));
    tcase_add_test(tc, test_cli_malformed_matrix_exits_1_naming_file_and_line);
    tcase_add_test(tc, test_cli_unavailable_space_exits_1);
    tcase_add_test(tc, test_cli_not_converged_exits_3);
    tcase_add_test(tc, test_cli_help_exits_0);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return px_test_run(cg_suite());
}
