/* tests/check_dcg.c - distributed parex-cg (examples/cg/dcg.c, partition.c) under mpirun.
 *
 * Each test runs `mpirun -np P parex-cg ... --json` (P and the threads per rank come from
 * PX_DCG_NP and PX_NUM_THREADS, one ctest per combination, tests/cg.cmake) and the same problem
 * on one process without mpirun, and compares: the iteration count within 2% and max_abs_err of
 * the same size. The suite itself never initializes MPI (Check forks each test); mpirun is a
 * child process, so its ranks run beside the forked test. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, WEXITSTATUS */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "px_test.h"

static char dir_path[256], out_path[300], err_path[300];
static char *run_out, *run_err; /* the last run's stdout/stderr (malloc'd; freed at teardown) */

static void setup(void)
{
    snprintf(dir_path, sizeof dir_path, "%s", "/tmp/check_dcg.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir_path));
    snprintf(out_path, sizeof out_path, "%s/out", dir_path);
    snprintf(err_path, sizeof err_path, "%s/err", dir_path);
}

static void teardown(void)
{
    free(run_out);
    free(run_err);
    run_out = run_err = NULL;
    unlink(out_path);
    unlink(err_path);
    rmdir(dir_path);
}

static int nranks(void)
{
    return px_test_env_int("PX_DCG_NP", 2);
}

/* Usage errors come from argument parsing, before any thread runs: checked where ranks have
 * one thread (2 ranks: tests/cg.cmake), not again with two (CI time). */
static int checks_usage(void)
{
    return px_test_env_int("PX_NUM_THREADS", 1) == 1;
}

/* The binaries are a sanitizer build's (PX_DCG_SANITIZER, tests/cg.cmake): each run takes
 * seconds, so the tests that only repeat code another run covers leave such runs out. */
static int sanitized(void)
{
    return px_test_env_int("PX_DCG_SANITIZER", 0) != 0;
}

/* The captured stderr of the last run holds no sanitizer report: the runs' output goes to
 * files, where ctest's FAIL_REGULAR_EXPRESSION (tests/CMakeLists.txt, px_mpi_test_env) does
 * not look, and a failure test accepts any non-zero status. */
static void no_sanitizer_report(const char *cmd)
{
    static const char *const marks[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                        "WARNING: ThreadSanitizer", "runtime error:"};
    for (size_t k = 0; k < sizeof marks / sizeof *marks; ++k)
        ck_assert_msg(strstr(run_err, marks[k]) == NULL, "%s: a sanitizer report: %s", cmd,
                      run_err);
}

/* Run parex-cg with @p args on @p np ranks (0: without mpirun), each rank started through
 * @p wrap (shell words before the binary under mpirun, e.g. an `sh -c` that sets a per-rank
 * variable; "" for none); returns the exit status or -1 (after a SKIP line) when the binary or
 * mpirun is not configured. */
static int run_via(int np, const char *wrap, const char *args)
{
    const char *bin = getenv("PX_CG_BIN"), *mpirun = getenv("PX_MPIRUN");
    if (!bin || !*bin || (np > 0 && (!mpirun || !*mpirun))) {
        fprintf(stderr, "check_dcg: SKIP: PX_CG_BIN or PX_MPIRUN unset\n");
        return -1;
    }
    char cmd[4096];
    if (np > 0)
        snprintf(cmd, sizeof cmd,
                 "'%s' --allow-run-as-root --oversubscribe -np %d %s '%s' %s >'%s' 2>'%s'", mpirun,
                 np, wrap, bin, args, out_path, err_path);
    else
        snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", bin, args, out_path, err_path);
    int st = system(cmd);
    px_test_capture(&run_out, out_path);
    px_test_capture(&run_err, err_path);
    no_sanitizer_report(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st), "%s did not exit normally", cmd);
    ck_assert_msg(WEXITSTATUS(st) < 126, "%s crashed (status %d): %s", cmd, WEXITSTATUS(st),
                  run_err);
    return WEXITSTATUS(st);
}

static int run(int np, const char *args)
{
    return run_via(np, "", args);
}

/* Run parex-cg with @p args on @p np ranks (0: without mpirun), which must be a usage error:
 * exit status 2 with @p what on stderr. Returns where @p what starts in run_err, or NULL when
 * the run was skipped (run_via). */
static const char *usage_error(int np, const char *args, const char *what)
{
    const int st = run(np, args);
    if (st < 0)
        return NULL;
    ck_assert_msg(st == 2, "'%s' exited %d, not 2: %s", args, st, run_err);
    const char *m = strstr(run_err, what);
    ck_assert_msg(m != NULL, "'%s': stderr lacks \"%s\": %s", args, what, run_err);
    return m;
}

/* The last non-empty line of the captured stdout. */
static const char *last_line(void)
{
    size_t n = strlen(run_out);
    while (n > 0 && run_out[n - 1] == '\n')
        run_out[--n] = '\0';
    const char *nl = strrchr(run_out, '\n');
    return nl ? nl + 1 : run_out;
}

static double json_num(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    ck_assert_msg(p != NULL, "JSON '%s' lacks key %s", json, key);
    if (strncmp(p + strlen(pat), "null", 4) == 0)
        return NAN;
    return strtod(p + strlen(pat), NULL);
}

typedef struct {
    double iterations, max_abs_err, ranks, threads, halo_bytes, comm_seconds, overlap, n;
    double message, window;            /* message_ and window_seconds_per_iter */
    double window_max;                 /* window_seconds_per_iter_max */
    double replacements;               /* the pipelined CG's residual replacements */
    double clock_every, clock_samples; /* the clock sampling (dcg.h, dcg_params.clock_every) */
    char engine[16];                   /* "none", "push" or "graph" */
    char dots[16];                     /* "compensated" or "plain" */
    char cg[16];                       /* "plain" or "pipelined" (--cg) */
} outcome;

/* Copy string field @key of JSON line @j into @buf (at most @size - 1 characters). */
static void json_str(const char *j, const char *key, char *buf, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *e = strstr(j, pat);
    ck_assert_msg(e != NULL, "JSON '%s' lacks %s", j, key);
    e += strlen(pat);
    size_t k = 0;
    while (e[k] && e[k] != '"' && k + 1 < size) {
        buf[k] = e[k];
        k++;
    }
    buf[k] = '\0';
}

/* The first launches' times of JSON line @j (first_iters_seconds): each positive, together
 * within the solve's seconds, as many as the solve's first launches up to eight: its
 * iterations in plain CG (and in the one-process solver), in the pipelined CG its launches,
 * which also count those that make no step (at least the last, which stops). */
static void check_first_iters(const char *j, double iterations, const char *cg)
{
    static const char pat[] = "\"first_iters_seconds\": [";
    const char *p = strstr(j, pat);
    ck_assert_msg(p != NULL, "JSON '%s' lacks first_iters_seconds", j);
    p += strlen(pat);
    double sum = 0.0;
    int n = 0;
    while (*p != ']') {
        char *end;
        const double t = strtod(p, &end);
        ck_assert_msg(end != p && t > 0.0, "first_iters_seconds entry %d of '%s' is not positive",
                      n, j);
        sum += t;
        n++;
        p = end;
        if (*p == ',')
            p += 2;
    }
    const double seconds = json_num(j, "seconds");
    ck_assert_msg(sum <= seconds * (1.0 + 1e-5) + 1e-6,
                  "the first %d launches took %g s, the whole solve %g s", n, sum, seconds);
    const int want_min = iterations < 8 ? (int)iterations : 8;
    if (strcmp(cg, "pipelined") == 0)
        ck_assert_msg(n <= 8 && n >= (iterations + 1 < 8 ? (int)iterations + 1 : 8),
                      "%d first launches timed for %g pipelined iterations", n, iterations);
    else
        ck_assert_msg(n == want_min, "%d first iterations timed of %g", n, iterations);
}

/* Run and parse the JSON line; the run must converge (exit 0). Returns 0 when skipped. */
static int solve(int np, const char *args, outcome *o)
{
    char full[2048];
    snprintf(full, sizeof full, "%s --progress 0 --json", args);
    const int st = run(np, full);
    if (st < 0)
        return 0;
    ck_assert_msg(st == 0, "np %d '%s' exit %d: %s", np, args, st, run_err);
    const char *j = last_line();
    ck_assert_msg(j[0] == '{', "np %d '%s': last line not JSON: %s", np, args, j);
    ck_assert_ptr_nonnull(strstr(j, "\"converged\": true"));
    o->iterations = json_num(j, "iterations");
    o->max_abs_err = json_num(j, "max_abs_err");
    o->ranks = json_num(j, "ranks");
    o->threads = json_num(j, "threads_per_rank");
    o->halo_bytes = json_num(j, "halo_bytes");
    o->comm_seconds = json_num(j, "comm_seconds");
    o->overlap = json_num(j, "overlap");
    o->message = json_num(j, "message_seconds_per_iter");
    o->window = json_num(j, "window_seconds_per_iter");
    o->window_max = json_num(j, "window_seconds_per_iter_max");
    o->n = json_num(j, "n");
    o->replacements = json_num(j, "replacements");
    o->clock_every = json_num(j, "clock_every");
    o->clock_samples = json_num(j, "clock_samples");
    ck_assert_ptr_nonnull(strstr(j, "\"stagnated\": false"));
    json_str(j, "engine", o->engine, sizeof o->engine);
    json_str(j, "dots", o->dots, sizeof o->dots);
    json_str(j, "cg", o->cg, sizeof o->cg);
    check_first_iters(j, o->iterations, o->cg);
    return 1;
}

/* The distributed outcome against the single-process one. */
static void compare(const outcome *ref, const outcome *d, int np, int threads, const char *what)
{
    fprintf(stderr,
            "check_dcg: %s: 1 process %.0f iterations (err %.2e), %d ranks %.0f (err "
            "%.2e), halo %.0f B/iteration, comm %.4f s, overlap %.3f\n",
            what, ref->iterations, ref->max_abs_err, np, d->iterations, d->max_abs_err,
            d->halo_bytes, d->comm_seconds, d->overlap);
    ck_assert_double_eq(d->n, ref->n);
    ck_assert_double_eq(d->ranks, (double)np);
    ck_assert_double_eq(d->threads, (double)threads);
    ck_assert_msg(fabs(d->iterations - ref->iterations) <= 0.02 * ref->iterations,
                  "%s: %d ranks took %.0f iterations, one process %.0f (more than 2%% apart)", what,
                  np, d->iterations, ref->iterations);
    /* The same error up to the rounding of another summation order. */
    ck_assert_msg(d->max_abs_err <= 10.0 * ref->max_abs_err + 1e-12,
                  "%s: max_abs_err %.3e on %d ranks, %.3e on one process", what, d->max_abs_err, np,
                  ref->max_abs_err);
    if (np > 1) {
        ck_assert_double_gt(d->halo_bytes, 0.0);
        ck_assert_double_ge(d->comm_seconds, 0.0);
        ck_assert_msg(d->overlap >= 0.0 && d->overlap <= 1.0, "overlap %g", d->overlap);
        ck_assert_msg(d->message > 0.0 && d->window >= 0.0, "message %g s, window %g s", d->message,
                      d->window);
        /* Each iteration's exposed wait max(0, in - interior) is at least (in - posted) -
         * (interior - posted), so overlap cannot hide more than the window: (1 - overlap)
         * message >= message - window, up to the JSON's 6 digits. */
        ck_assert_msg((1.0 - d->overlap) * d->message >=
                          d->message - d->window - 1e-5 * (d->message + d->window),
                      "overlap %g of %g s a message hides more than the window %g s", d->overlap,
                      d->message, d->window);
        /* The longest rank's window is at least the mean and at most all ranks' together. */
        ck_assert_msg(d->window_max >= d->window * (1.0 - 1e-5) &&
                          d->window_max <= d->window * d->ranks * (1.0 + 1e-5),
                      "window %g s a rank on average, %g s on the longest of %g ranks", d->window,
                      d->window_max, d->ranks);
    } else {
        ck_assert_double_eq(d->halo_bytes, 0.0);
        ck_assert_msg(isnan(d->overlap), "one rank has no messages: overlap null");
        ck_assert_msg(isnan(d->message) && isnan(d->window) && isnan(d->window_max),
                      "one rank has no messages: message and windows null");
    }
}

static int matrix_path(const char *file, char *p, size_t n)
{
    const char *dir = getenv("PX_CG_MATRICES");
    snprintf(p, n, "%s/%s", dir ? dir : "", file);
    if (!dir || access(p, R_OK) != 0) {
        fprintf(stderr, "check_dcg: SKIP %s: not found\n", p);
        return 0;
    }
    return 1;
}

static void check_bcsstk16(const char *partition)
{
    char p[1024], args[1400];
    if (!matrix_path("bcsstk16.mtx", p, sizeof p))
        return;
    outcome ref, d;
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads", p);
    if (!solve(0, args, &ref))
        return;
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads --partition %s", p,
             partition);
    if (!solve(nranks(), args, &d))
        return;
    compare(&ref, &d, nranks(), px_test_env_int("PX_NUM_THREADS", 1), partition);
    ck_assert_double_ge(ref.iterations, 190); /* the README's 197 */
    ck_assert_double_le(ref.iterations, 205);
}

START_TEST(test_dcg_bcsstk16_jacobi_metis_matches_one_process)
{
    check_bcsstk16("metis");
}
END_TEST

START_TEST(test_dcg_bcsstk16_jacobi_block_matches_one_process)
{
    check_bcsstk16("block");
}
END_TEST

/* The device path (host staging buffers, copy ops, no custom reducer) forced on threads. */
START_TEST(test_dcg_staging_path_matches_one_process)
{
    char p[1024], args[1400];
    if (!matrix_path("bcsstk16.mtx", p, sizeof p))
        return;
    outcome ref, d;
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads", p);
    if (!solve(0, args, &ref))
        return;
    ck_assert_int_eq(setenv("PX_CG_HOST_STAGING", "1", 1), 0);
    const int ok = solve(nranks(), args, &d);
    unsetenv("PX_CG_HOST_STAGING");
    if (ok)
        compare(&ref, &d, nranks(), px_test_env_int("PX_NUM_THREADS", 1), "host staging");
}
END_TEST

/* HPCG 16^3 per rank: the global grid is the process grid times 16 (2 -> 32x16x16,
 * 4 -> 32x32x16), solved whole by one process for the reference. */
START_TEST(test_dcg_hpcg_16_per_rank_matches_one_process)
{
    const int np = nranks();
    const int dims[5][3] = {{1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 1}};
    ck_assert_int_le(np, 4);
    char args[256];
    snprintf(args, sizeof args, "--grid %dx%dx%d --space threads", 16 * dims[np][0],
             16 * dims[np][1], 16 * dims[np][2]);
    outcome ref, d;
    if (!solve(0, args, &ref))
        return;
    if (!solve(np, "--grid 16 --space threads", &d))
        return;
    compare(&ref, &d, np, px_test_env_int("PX_NUM_THREADS", 1), "hpcg");
}
END_TEST

START_TEST(test_dcg_hpcg_jacobi_matches_one_process)
{
    const int np = nranks();
    const int dims[5][3] = {{1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 1}};
    char args[256];
    snprintf(args, sizeof args, "--grid %dx%dx%d --space serial --precond jacobi", 8 * dims[np][0],
             12 * dims[np][1], 10 * dims[np][2]);
    outcome ref, d;
    if (!solve(0, args, &ref))
        return;
    if (!solve(np, "--grid 8x12x10 --space serial --precond jacobi", &d))
        return;
    compare(&ref, &d, np, 1, "hpcg jacobi 8x12x10"); /* serial */
}
END_TEST

/* A bad --partition is a usage error (exit 2) on every rank count it runs on (checks_usage),
 * named on stderr once. */
START_TEST(test_dcg_bad_partition_flag_exits_2)
{
    if (!checks_usage())
        return;
    const char *m = usage_error(nranks(), "--grid 4 --partition rows",
                                "--partition 'rows' is not metis or block");
    if (!m)
        return;
    ck_assert_msg(strstr(m + 1, "--partition 'rows'") == NULL, "printed by more than rank 0: %s",
                  run_err);
}
END_TEST

/* More ranks than rows: a clear error on every partition, exit 1, no hang. */
START_TEST(test_dcg_more_ranks_than_rows_fails_cleanly)
{
    const int np = nranks();
    if (np < 2)
        return;
    char mtx[400], args[600];
    snprintf(mtx, sizeof mtx, "%s/small.mtx", dir_path);
    FILE *f = fopen(mtx, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", np - 1, np - 1,
            np - 1);
    for (int i = 1; i < np; i++)
        fprintf(f, "%d %d 4.0\n", i, i);
    fclose(f);
    static const char *const parts[] = {"block", "metis"};
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "--matrix '%s' --partition %s", mtx, parts[k]);
        const int st = run(np, args);
        if (st < 0)
            break;
        ck_assert_msg(st == 1, "%s: exit %d", args, st);
        ck_assert_msg(strstr(run_err, "cannot be split over") != NULL, "stderr: %s", run_err);
    }
    unlink(mtx);
}
END_TEST

/* Solve diag(d[0], ..., d[nd - 1], d[0], ...) of 4 np rows with plain and pipelined CG: each
 * must fail (exit 1) with "breakdown at iteration N" (N: @p at_plain, @p at_pipe) on every
 * rank, none alone. */
static void diag_breaks_down(const char *mtx, const char *const *d, int nd, int at_plain,
                             int at_pipe)
{
    const int np = nranks(), n = 4 * np;
    FILE *f = fopen(mtx, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n, n);
    for (int i = 0; i < n; i++)
        fprintf(f, "%d %d %s\n", i + 1, i + 1, d[i % nd]);
    fclose(f);
    char args[600], expect[64];
    static const char *const variants[] = {"plain", "pipelined"};
    for (int v = 0; v < 2; v++) {
        snprintf(expect, sizeof expect, "breakdown at iteration %d", v ? at_pipe : at_plain);
        snprintf(args, sizeof args, "--matrix '%s' --partition block --space threads --cg %s", mtx,
                 variants[v]);
        const int st = run(np, args);
        if (st < 0)
            break;
        ck_assert_msg(st == 1, "%s: exit %d for a breakdown; stderr: %s", variants[v], st, run_err);
        ck_assert_msg(strstr(run_err, expect) != NULL, "%s: stderr: %s", variants[v], run_err);
        ck_assert_msg(strstr(run_err, "failed alone") == NULL, "%s: stderr: %s", variants[v],
                      run_err);
    }
    unlink(mtx);
}

/* An indefinite matrix breaks CG down at the first p.Ap, a value every rank computes alike
 * (dcg_alpha, an engine op): every rank fails with the message and no rank aborts alone. The
 * pipelined CG's first alpha = r.r / r.Ar is negative too (r = b = A 1). On diag(1, 2, -1, 3,
 * ...) the first step is fine (r.Ar = sum d^3 > 0) and plain CG breaks down on the second;
 * the pipelined CG replaces its residual there (the first replacement has no reference, so it
 * cannot find no progress), restarts, takes step 2 again, breaks down on step 3, and that
 * replacement's true residual is larger than the last one's: a breakdown (dcg.h), not a
 * stagnation. */
START_TEST(test_dcg_indefinite_matrix_is_a_breakdown_on_every_rank)
{
    char mtx[400];
    snprintf(mtx, sizeof mtx, "%s/indefinite.mtx", dir_path);
    static const char *const first[] = {"1.0", "-3.0"}; /* p.Ap = n/2 (1 - 27) < 0 */
    diag_breaks_down(mtx, first, 2, 1, 1);
    static const char *const later[] = {"1.0", "2.0", "-1.0", "3.0"};
    diag_breaks_down(mtx, later, 4, 2, 3);
}
END_TEST

/* Ranks with unusual parts: a matrix whose last rows are uncoupled (under block partitions
 * the last ranks have no neighbour, others only boundary rows), and HPCG with one point per
 * rank (no interior rows at all); both on the host path and on the staging path, against
 * one process. */
START_TEST(test_dcg_ranks_without_neighbours_or_interior_rows_match_one_process)
{
    const int np = nranks();
    char mtx[400], args[700];
    snprintf(mtx, sizeof mtx, "%s/mixed.mtx", dir_path);
    FILE *f = fopen(mtx, "w");
    ck_assert_ptr_nonnull(f);
    const int n = 4 * np; /* a tridiagonal block on the first 2 np rows, then a diagonal */
    fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n,
            n + 2 * np - 1);
    for (int i = 1; i <= n; i++)
        fprintf(f, "%d %d 4.0\n", i, i);
    for (int i = 1; i < 2 * np; i++)
        fprintf(f, "%d %d -1.0\n", i + 1, i);
    fclose(f);
    for (int staging = 0; staging <= 1; staging++) {
        ck_assert_int_eq(setenv("PX_CG_HOST_STAGING", staging ? "1" : "0", 1), 0);
        outcome ref, d;
        snprintf(args, sizeof args, "--matrix '%s' --partition block --space serial", mtx);
        if (!solve(0, args, &ref) || !solve(np, args, &d))
            break;
        ck_assert_double_eq(d.n, ref.n);
        ck_assert_double_eq(d.iterations, ref.iterations);
        ck_assert_double_le(d.max_abs_err, 1e-12);
        snprintf(args, sizeof args, "--grid 1 --space serial --precond jacobi");
        if (!solve(np, args, &d))
            break;
        /* One point per rank on the process grid (1, 2x1x1, 3x1x1, 2x2x1): every rank is
         * coupled with every other one of its 27-point neighbourhood: 0, 2, 4, 12 halo values. */
        static const double halo_values[5] = {0, 0, 2, 4, 12};
        ck_assert_double_eq(d.n, (double)np);
        ck_assert_double_le(d.max_abs_err, 1e-12);
        if (np <= 4)
            ck_assert_double_eq(d.halo_bytes, 8.0 * halo_values[np]);
    }
    unsetenv("PX_CG_HOST_STAGING");
    unlink(mtx);
}
END_TEST

/* Run tests/dcg_fail_rank on 2 ranks with the environment assignments @p env (e.g.
 * "PX_DCG_MODE=push") under timeout(1), which turns a hang into exit 124 well before the
 * case's own timeout; its stdout and stderr land in run_out and run_err. Returns system()'s
 * status, or -2 where the case does not run here (said on stderr with @p what): it runs once,
 * on the 2-rank ctests, which pass the helper and mpirun. */
static int run_fail_rank(const char *env, const char *what)
{
    const char *helper = getenv("PX_DCG_FAIL_BIN"), *mpirun = getenv("PX_MPIRUN");
    if (nranks() != 2 || !helper || !*helper || !mpirun || !*mpirun) {
        fprintf(stderr, "check_dcg: SKIP %s: runs once, on the 2-rank ctests\n", what);
        return -2;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s timeout -k 5 40 '%s' --allow-run-as-root --oversubscribe -np 2 '%s' >'%s' "
             "2>'%s'",
             env, mpirun, helper, out_path, err_path);
    const int st = system(cmd);
    px_test_capture(&run_out, out_path);
    px_test_capture(&run_err, err_path);
    no_sanitizer_report(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st), "%s did not exit normally", cmd);
    return st;
}

/* A rank that fails alone mid-solve (here a truncated halo message, MPI_ERR_TRUNCATE on the
 * last rank only) ends the whole job through MPI_Abort with its message, instead of leaving
 * the other rank waiting for its allreduce forever (dcg.h; tests/dcg_fail_rank.c). */
START_TEST(test_dcg_one_rank_failing_alone_aborts_the_job)
{
    /* Both ways of issuing iterations (dcg_fail_rank.c reads PX_DCG_MODE). */
    static const char *const modes[] = {"PX_DCG_MODE=graph", "PX_DCG_MODE=push"};
    for (int m = 0; m < 2; m++) {
        const int st = run_fail_rank(modes[m], "failing rank");
        if (st == -2)
            return;
        ck_assert_msg(WEXITSTATUS(st) != 124 && WEXITSTATUS(st) != 137,
                      "%s: the job hung after one rank failed: %s", modes[m], run_err);
        ck_assert_msg(WEXITSTATUS(st) != 0, "%s: exit 0: stdout %s", modes[m], run_out);
        ck_assert_msg(strstr(run_err, "dcg_solve: rank 1 of 2 failed alone") != NULL,
                      "%s: stderr: %s", modes[m], run_err);
        ck_assert_msg(strstr(run_out, "dcg_solve returned") == NULL,
                      "%s: a rank returned from dcg_solve: %s", modes[m], run_out);
    }
}
END_TEST

/* A rank whose recording of the iteration fails (PX_DCG_FAIL=record: dcg_fail_rank.c's last
 * rank records a graph of its own, so dcg_solve's px_graph_begin is PX_EBUSY there) makes
 * every rank return that status, with "another rank failed to record its iteration" on the
 * others: the ranks agree on the recording before the first iteration (dcg.c, iterate), so
 * nobody aborts and nobody waits. */
START_TEST(test_dcg_one_rank_failing_to_record_fails_every_rank)
{
    const int st = run_fail_rank("PX_DCG_FAIL=record PX_DCG_MODE=graph", "failing record");
    if (st == -2)
        return;
    ck_assert_msg(WEXITSTATUS(st) == 0, "status %d: %s %s", st, run_out, run_err);
    ck_assert_msg(strstr(run_err, "failed alone") == NULL, "a rank aborted: %s", run_err);
    char want[128];
    snprintf(want, sizeof want, "rank 1: dcg_solve returned %s (px_graph_begin",
             px_strerror(PX_EBUSY));
    ck_assert_msg(strstr(run_out, want) != NULL, "want '%s' in: %s", want, run_out);
    snprintf(want, sizeof want,
             "rank 0: dcg_solve returned %s (another rank failed to record its iteration",
             px_strerror(PX_EBUSY));
    ck_assert_msg(strstr(run_out, want) != NULL, "want '%s' in: %s", want, run_out);
}
END_TEST

/* The pipelined CG's first exchange is part of its start (dcg.c, pipe_setup), before the
 * ranks agree to iterate: the truncated halo message of dcg_fail_rank's last rank (PX_EMPI
 * there alone) then makes every rank return that status, with "another rank failed to start
 * or record its iteration" on the others, in both ways of issuing iterations; nobody aborts,
 * nobody waits. */
START_TEST(test_dcg_pipelined_start_failing_on_one_rank_fails_every_rank)
{
    static const char *const modes[] = {"PX_DCG_CG=pipelined PX_DCG_MODE=graph",
                                        "PX_DCG_CG=pipelined PX_DCG_MODE=push"};
    for (int m = 0; m < 2; m++) {
        const int st = run_fail_rank(modes[m], "failing pipelined start");
        if (st == -2)
            return;
        ck_assert_msg(WEXITSTATUS(st) == 0, "%s: status %d: %s %s", modes[m], st, run_out, run_err);
        ck_assert_msg(strstr(run_err, "failed alone") == NULL, "%s: a rank aborted: %s", modes[m],
                      run_err);
        char want[160];
        snprintf(want, sizeof want, "rank 1: dcg_solve returned %s (px_engine_wait_for_all",
                 px_strerror(PX_EMPI));
        ck_assert_msg(strstr(run_out, want) != NULL, "%s: want '%s' in: %s", modes[m], want,
                      run_out);
        snprintf(want, sizeof want,
                 "rank 0: dcg_solve returned %s (another rank failed to start or record its "
                 "iteration",
                 px_strerror(PX_EMPI));
        ck_assert_msg(strstr(run_out, want) != NULL, "%s: want '%s' in: %s", modes[m], want,
                      run_out);
    }
}
END_TEST

/* --engine graph and --engine push run the same ops in the same dependency order, so the
 * same arithmetic: equal iterations and errors (bit for bit: the JSON's %.6g of them), and
 * both as one process within 2% (on 1 rank too: mpirun -np 1 --engine graph is dcg.c). */
static void check_graph_equals_push(const char *args, const char *what)
{
    const int np = nranks(), t = px_test_env_int("PX_NUM_THREADS", 1);
    char full[1600];
    outcome ref, g, p;
    if (!solve(0, args, &ref))
        return;
    ck_assert_str_eq(ref.engine, "none");
    snprintf(full, sizeof full, "%s --engine graph", args);
    if (!solve(np, full, &g))
        return;
    snprintf(full, sizeof full, "%s --engine push", args);
    if (!solve(np, full, &p))
        return;
    ck_assert_str_eq(g.engine, "graph");
    ck_assert_str_eq(p.engine, "push");
    ck_assert_double_eq(g.iterations, p.iterations);
    ck_assert_double_eq(g.max_abs_err, p.max_abs_err);
    ck_assert_double_eq(g.halo_bytes, p.halo_bytes);
    compare(&ref, &g, np, t, what);
}

START_TEST(test_dcg_graph_equals_push_bcsstk16_jacobi)
{
    char p[1024], args[1400];
    if (!matrix_path("bcsstk16.mtx", p, sizeof p))
        return;
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads", p);
    check_graph_equals_push(args, "bcsstk16 graph/push");
}
END_TEST

START_TEST(test_dcg_graph_equals_push_hpcg_16)
{
    /* One rank: --grid 16 is the whole problem; more: the single run solves their union. */
    const int np = nranks();
    const int dims[5][3] = {{1, 1, 1}, {1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 1}};
    char args[256];
    snprintf(args, sizeof args, "--grid %dx%dx%d --space threads", 16 * dims[np][0],
             16 * dims[np][1], 16 * dims[np][2]);
    const int t = px_test_env_int("PX_NUM_THREADS", 1);
    outcome ref, g, p;
    if (!solve(0, args, &ref) || !solve(np, "--grid 16 --space threads --engine graph", &g) ||
        !solve(np, "--grid 16 --space threads --engine push", &p))
        return;
    ck_assert_str_eq(g.engine, "graph");
    ck_assert_double_eq(g.iterations, p.iterations);
    ck_assert_double_eq(g.max_abs_err, p.max_abs_err);
    compare(&ref, &g, np, t, "hpcg 16 graph/push");
}
END_TEST

/* Issue 15: the iteration count must not depend on how the rows are split. Plain CG on
 * 1138_bus and bcsstk01 (where plain sums gave 2118-2204 and 130-135 iterations by rank
 * count and partition): the compensated dots (cg_dd.h) make every split compute the
 * same numbers, so 1 rank and this run's ranks under both partitions agree exactly. */
START_TEST(test_dcg_iterations_do_not_depend_on_the_partition)
{
    if (nranks() < 2) /* one rank: the same run three times */
        return;
    static const char *const files[] = {"1138_bus.mtx", "bcsstk01.mtx"};
    static const char *const parts[] = {"metis", "block"};
    for (int f = 0; f < 2; f++) {
        char p[1024], args[1400];
        if (!matrix_path(files[f], p, sizeof p))
            continue;
        outcome one, d;
        snprintf(args, sizeof args, "--matrix '%s' --space serial --engine graph", p);
        if (!solve(1, args, &one))
            return;
        for (int k = 0; k < 2; k++) {
            snprintf(args, sizeof args,
                     "--matrix '%s' --space serial --engine graph --partition %s", p, parts[k]);
            if (!solve(nranks(), args, &d))
                return;
            fprintf(stderr, "check_dcg: %s %s: 1 rank %.0f iterations, %d ranks %.0f\n", files[f],
                    parts[k], one.iterations, nranks(), d.iterations);
            ck_assert_double_eq(d.iterations, one.iterations);
            ck_assert_double_eq(d.max_abs_err, one.max_abs_err);
        }
    }
}
END_TEST

/* --interior-chunk cuts the interior SpMV into pieces (between which a one-core rank tests its
 * messages): the same solve as one call a thread (--interior-chunk 0), to the bit (each thread
 * folds its pieces in order, and the compensated dots make any split of the rows give the same
 * sums). 250 rows is not a whole number of the SpMV's 4-row groups, so the pieces are rounded
 * up to 252 (dcg.c, interior_policy). A bad value is a usage error. */
START_TEST(test_dcg_interior_chunks_give_the_same_solve)
{
    outcome whole, pieces;
    if (!solve(nranks(), "--grid 16 --space threads --interior-chunk 0", &whole) ||
        !solve(nranks(), "--grid 16 --space threads --interior-chunk 250", &pieces))
        return;
    fprintf(
        stderr,
        "check_dcg: interior in one call %.0f iterations (err %.3e), in pieces %.0f (err %.3e)\n",
        whole.iterations, whole.max_abs_err, pieces.iterations, pieces.max_abs_err);
    ck_assert_double_eq(pieces.iterations, whole.iterations);
    ck_assert_double_eq(pieces.max_abs_err, whole.max_abs_err);
    if (checks_usage())
        usage_error(nranks(), "--grid 4 --interior-chunk -1",
                    "--interior-chunk '-1' is not a number of rows >= 0");
}
END_TEST

/* --clock-every K issues the clock ops behind the message statistics in launches 0, K, 2K, ...
 * only (dcg.h, dcg_params.clock_every; default 8): the same arithmetic whatever K, so the same
 * iterations and error to the bit, pushed or recorded (whose unsampled launches run two more
 * graphs; an even K samples launches of one halo tag only, and K = 2 leaves the other tag's
 * launches all unsampled: dcg.c records only the graphs some launch takes), with every launch
 * sampled at K = 1. The plain CG launches once an iteration, so it samples ceil(iterations / K)
 * of them; the statistics stay within compare's bounds. A K below 1 is a usage error. */
START_TEST(test_dcg_clock_sampling_keeps_the_solve)
{
    static const char *const variants[] = {"--cg plain", "--cg pipelined --dots plain"};
    static const char *const engines[] = {"graph", "push"};
    /* All four pairs on 2 one-thread ranks of the default engine; elsewhere two: each CG and
     * each engine once (plain pushed, pipelined recorded), 8 mpiruns instead of 16 (the 2 x 2
     * runs of every engine kind included: CI time, session 26); under a sanitizer
     * (PX_DCG_SANITIZER, tests/cg.cmake) the pipelined CG recorded alone, whose graphs carry
     * the most ops, every launch clocked and 1 in 8 (1 in 2 and 1 in 3 are the same ops,
     * sampled at other counts). */
    const char *kind = getenv("PX_ENGINE");
    const int two_pairs = nranks() != 2 || px_test_env_int("PX_NUM_THREADS", 1) != 1 ||
                          (kind && *kind) || sanitized();
    for (int v = 0; v < 2; v++)
        for (int k = 0; k < 2; k++) {
            if ((two_pairs && v == k) || (sanitized() && v == 0))
                continue;
            char args[256];
            outcome all, every2, every3, dflt;
            snprintf(args, sizeof args, "--grid 12 --space threads %s --engine %s", variants[v],
                     engines[k]);
            char a1[320], a2[320], a3[320];
            snprintf(a1, sizeof a1, "%s --clock-every 1", args);
            snprintf(a2, sizeof a2, "%s --clock-every 2", args);
            snprintf(a3, sizeof a3, "%s --clock-every 3", args);
            if (!solve(nranks(), a1, &all) || !solve(nranks(), args, &dflt))
                return;
            fprintf(stderr,
                    "check_dcg: %s: every launch clocked %.0f iterations (%.0f samples, overlap "
                    "%.3f), 1 in 8 %.0f (%.0f, overlap %.3f)\n",
                    args, all.iterations, all.clock_samples, all.overlap, dflt.iterations,
                    dflt.clock_samples, dflt.overlap);
            ck_assert_double_eq(dflt.iterations, all.iterations);
            ck_assert_double_eq(dflt.max_abs_err, all.max_abs_err);
            ck_assert_double_eq(all.clock_every, 1);
            ck_assert_double_eq(dflt.clock_every, 8);
            /* launches: the plain CG's iterations; the pipelined CG's also count its launches
             * that make no step (at least the last, which stops) */
            const double launches = all.clock_samples;
            if (v == 0)
                ck_assert_double_eq(launches, all.iterations);
            else
                ck_assert_double_gt(launches, all.iterations);
            ck_assert_double_eq(dflt.clock_samples, ceil(launches / 8.0));
            compare(&all, &dflt, nranks(), px_test_env_int("PX_NUM_THREADS", 1), "1 in 8");
            if (sanitized())
                continue;
            if (!solve(nranks(), a2, &every2) || !solve(nranks(), a3, &every3))
                return;
            fprintf(stderr,
                    "check_dcg: %s: 1 in 2 %.0f iterations (%.0f samples), 1 in 3 %.0f (%.0f)\n",
                    args, every2.iterations, every2.clock_samples, every3.iterations,
                    every3.clock_samples);
            ck_assert_double_eq(every2.iterations, all.iterations);
            ck_assert_double_eq(every3.iterations, all.iterations);
            ck_assert_double_eq(every2.max_abs_err, all.max_abs_err);
            ck_assert_double_eq(every3.max_abs_err, all.max_abs_err);
            ck_assert_double_eq(every2.clock_every, 2);
            ck_assert_double_eq(every3.clock_every, 3);
            ck_assert_double_eq(every2.clock_samples, ceil(launches / 2.0));
            ck_assert_double_eq(every3.clock_samples, ceil(launches / 3.0));
            compare(&all, &every2, nranks(), px_test_env_int("PX_NUM_THREADS", 1), "1 in 2");
            compare(&all, &every3, nranks(), px_test_env_int("PX_NUM_THREADS", 1), "1 in 3");
        }
    if (checks_usage())
        usage_error(nranks(), "--grid 4 --clock-every 0",
                    "--clock-every '0' is not a positive integer");
}
END_TEST

/* --dots plain folds the dots as plain double sums (bench_cg_bsp's arithmetic): the solve
 * still converges to the same accuracy within 2 % of the compensated run's iterations (the
 * issue's bound across rank counts), and the JSON says which folds ran (one rank without the
 * engine runs cg.c, whose sums are plain). A bad value is a usage error. */
START_TEST(test_dcg_plain_dots_keep_the_iterations)
{
    outcome dd, plain;
    if (!solve(nranks(), "--grid 16 --space threads", &dd) ||
        !solve(nranks(), "--grid 16 --space threads --dots plain", &plain))
        return;
    fprintf(stderr,
            "check_dcg: %d ranks, compensated dots (%s) %.0f iterations (err %.3e), plain %.0f "
            "(err %.3e)\n",
            nranks(), dd.dots, dd.iterations, dd.max_abs_err, plain.iterations, plain.max_abs_err);
    ck_assert_str_eq(dd.dots, strcmp(dd.engine, "none") == 0 ? "plain" : "compensated");
    ck_assert_str_eq(plain.dots, "plain");
    ck_assert_msg(fabs(plain.iterations - dd.iterations) <= 0.02 * dd.iterations,
                  "plain dots: %.0f iterations, compensated %.0f", plain.iterations, dd.iterations);
    ck_assert_double_lt(plain.max_abs_err, 1e-6);
    if (checks_usage())
        usage_error(nranks(), "--grid 4 --dots fancy",
                    "--dots 'fancy' is not compensated or plain");
}
END_TEST

/* --cg pipelined (dcg.h, DCG_CG_PIPELINED: one allreduce an iteration, posted before the halo
 * exchange and the SpMV) on HPCG 16^3 a rank: the iterations and the error of plain CG within
 * compare's bounds (in exact arithmetic the same iterates; measured equal on 1-4 ranks),
 * pushed and recorded alike to the bit, with plain sums (--dots plain: folded in the update's
 * pass) as well, and the JSON says which loop ran. An iteration limit ends it as plain
 * CG's does: exit 3 after exactly that many steps. */
START_TEST(test_dcg_pipelined_hpcg_matches_plain)
{
    const int np = nranks(), thr = px_test_env_int("PX_NUM_THREADS", 1);
    outcome plain, graph, push, sums;
    if (!solve(np, "--grid 16 --space threads", &plain) ||
        !solve(np, "--grid 16 --space threads --cg pipelined", &graph) ||
        !solve(np, "--grid 16 --space threads --cg pipelined --engine push", &push))
        return;
    ck_assert_str_eq(plain.cg, "plain");
    ck_assert_str_eq(graph.cg, "pipelined");
    ck_assert_str_eq(push.engine, "push");
    compare(&plain, &graph, np, thr, "pipelined hpcg 16");
    /* Plain sums: other arithmetic in the same ops; not under a sanitizer (PX_DCG_SANITIZER). */
    if (!sanitized()) {
        if (!solve(np, "--grid 16 --space threads --cg pipelined --dots plain", &sums))
            return;
        ck_assert_str_eq(sums.dots, "plain");
        compare(&plain, &sums, np, thr, "pipelined hpcg 16, plain sums");
    }
    ck_assert_double_eq(push.iterations, graph.iterations);
    ck_assert_double_eq(push.max_abs_err, graph.max_abs_err);
    ck_assert_double_lt(graph.max_abs_err, 1e-6);
    ck_assert_double_eq(plain.replacements, 0.0);
    ck_assert_double_eq(graph.replacements, 1.0);
    ck_assert_double_eq(push.replacements, 1.0);
    /* The iteration limits below run the same code as the solves above, which is what a
     * sanitizer (PX_DCG_SANITIZER) looks at: checked by the uninstrumented runs only. */
    if (sanitized())
        return;
    const int st = run(np, "--grid 16 --space threads --cg pipelined --max-iters 10 --progress 0 "
                           "--json");
    ck_assert_msg(st == 3, "--max-iters 10: exit %d, not 3: %s", st, run_err);
    ck_assert_double_eq(json_num(last_line(), "iterations"), 10.0);
    /* the limit stops it: no replacement, not stagnated; a converged one checked b - A x once */
    ck_assert_double_eq(json_num(last_line(), "replacements"), 0.0);
    ck_assert_ptr_nonnull(strstr(last_line(), "\"stagnated\": false"));
    /* A limit of exactly the K steps the solve takes: the recursive residual falls below the
     * tolerance on the last allowed step, and the check of b - A x still runs past the limit
     * (it makes no step), so the solve converges after K with its one replacement, as
     * unlimited; the limit K - 1 stops it first, without one. */
    const int k = (int)graph.iterations;
    char args[200];
    snprintf(args, sizeof args, "--grid 16 --space threads --cg pipelined --max-iters %d", k);
    outcome at_k;
    if (!solve(np, args, &at_k))
        return;
    ck_assert_double_eq(at_k.iterations, graph.iterations);
    ck_assert_double_eq(at_k.max_abs_err, graph.max_abs_err);
    ck_assert_double_eq(at_k.replacements, 1.0);
    snprintf(args, sizeof args,
             "--grid 16 --space threads --cg pipelined --max-iters %d --progress 0 --json", k - 1);
    ck_assert_int_eq(run(np, args), 3);
    ck_assert_double_eq(json_num(last_line(), "iterations"), (double)(k - 1));
    ck_assert_double_eq(json_num(last_line(), "replacements"), 0.0);
}
END_TEST

/* The pipelined CG with Jacobi on bcsstk16 (METIS parts): within 2 % of the one-process plain
 * CG's iterations with its error, and, its three sums being compensated, the same iterations
 * and error to the bit as on one rank (mpirun -np 1); on the staging path (the device's: plain
 * sums by separate dot ops) within 2 % as well. */
START_TEST(test_dcg_pipelined_bcsstk16_jacobi_matches_one_process)
{
    char p[1024], args[1400];
    if (!matrix_path("bcsstk16.mtx", p, sizeof p))
        return;
    const int np = nranks(), thr = px_test_env_int("PX_NUM_THREADS", 1);
    outcome ref, one, d, staged;
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads", p);
    if (!solve(0, args, &ref))
        return;
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads --cg pipelined", p);
    if (!solve(1, args, &one) || !solve(np, args, &d))
        return;
    compare(&ref, &d, np, thr, "pipelined bcsstk16 jacobi");
    ck_assert_double_eq(d.iterations, one.iterations);
    ck_assert_double_eq(d.max_abs_err, one.max_abs_err);
    ck_assert_str_eq(d.dots, "compensated");
    outcome sums; /* the Jacobi update folding plain sums (dcg_pipe_update_jacobi_sum) */
    snprintf(args, sizeof args,
             "--matrix '%s' --precond jacobi --space threads --cg pipelined --dots plain", p);
    if (!solve(np, args, &sums))
        return;
    ck_assert_str_eq(sums.dots, "plain");
    compare(&ref, &sums, np, thr, "pipelined bcsstk16 jacobi, plain sums");
    snprintf(args, sizeof args, "--matrix '%s' --precond jacobi --space threads --cg pipelined", p);
    ck_assert_int_eq(setenv("PX_CG_HOST_STAGING", "1", 1), 0);
    const int ok = solve(np, args, &staged);
    unsetenv("PX_CG_HOST_STAGING");
    if (!ok)
        return;
    ck_assert_str_eq(staged.dots, "plain");
    compare(&ref, &staged, np, thr, "pipelined bcsstk16 jacobi, host staging");
}
END_TEST

/* The pipelined CG's residual replacement (dcg.h, DCG_CG_PIPELINED) on 1138_bus without a
 * preconditioner, whose recursive residual drifts from b - A x: the solve stops only on a true
 * residual below the tolerance (without the replacement it stopped on its recursive residual
 * with a true one of 2.8e-8, which fails this test), after at least one replacement (2 on this
 * machine: a breakdown and the check), pushed and recorded alike to the bit. */
START_TEST(test_dcg_pipelined_stops_on_the_true_residual)
{
    char p[1024], args[1400];
    if (!matrix_path("1138_bus.mtx", p, sizeof p))
        return;
    static const char *const engines[] = {"graph", "push"};
    double it[2], rel[2], rep[2];
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args,
                 "--matrix '%s' --space threads --cg pipelined --engine %s --progress 0 --json", p,
                 engines[k]);
        const int st = run(nranks(), args);
        if (st < 0)
            return;
        ck_assert_msg(st == 0, "%s: exit %d: %s", engines[k], st, run_err);
        const char *j = last_line();
        it[k] = json_num(j, "iterations");
        rel[k] = json_num(j, "true_relres");
        rep[k] = json_num(j, "replacements");
        fprintf(stderr,
                "check_dcg: pipelined 1138_bus (%s): %.0f iterations, true relres %.2e, "
                "%.0f replacements\n",
                engines[k], it[k], rel[k], rep[k]);
        ck_assert_msg(rel[k] < 1e-8, "%s: true relres %g above the tolerance", engines[k], rel[k]);
        ck_assert_double_ge(rep[k], 1.0);
    }
    ck_assert_double_eq(it[0], it[1]);
    ck_assert_double_eq(rel[0], rel[1]);
    ck_assert_double_eq(rep[0], rep[1]);
}
END_TEST

/* Past the attainable accuracy (--tol 1e-300) the pipelined CG used to break down (alpha <= 0
 * on rounding noise: exit 1); it now replaces the residual at each such point and stops as
 * stagnated (exit 3, not converged, JSON stagnated) once a replacement's true residual is not
 * 10 % below the last one's, at about the accuracy plain CG reaches, long before the
 * iteration limit: recorded and pushed, and on the staging path (whose halo copies each
 * replacement's exchanges of x and p once sent to the wrong vector). */
START_TEST(test_dcg_pipelined_stagnates_past_the_attainable_accuracy)
{
    static const char *const engines[] = {"graph", "push"};
    for (int k = 0; k < 4; k++) {
        char args[256];
        snprintf(args, sizeof args,
                 "--grid 16 --space threads --cg pipelined --engine %s --tol 1e-300 "
                 "--max-iters 3000 --progress 0 --json",
                 engines[k & 1]);
        if (k >= 2)
            ck_assert_int_eq(setenv("PX_CG_HOST_STAGING", "1", 1), 0);
        const int st = run(nranks(), args);
        unsetenv("PX_CG_HOST_STAGING");
        if (st < 0)
            return;
        const char *what = k >= 2 ? "staging" : "host";
        ck_assert_msg(st == 3, "%s %s: exit %d, not 3: %s", what, engines[k & 1], st, run_err);
        ck_assert_msg(strstr(run_err, "rounding limits the attainable accuracy") != NULL,
                      "stderr: %s", run_err);
        const char *j = last_line();
        ck_assert_ptr_nonnull(strstr(j, "\"converged\": false"));
        ck_assert_ptr_nonnull(strstr(j, "\"stagnated\": true"));
        const double it = json_num(j, "iterations"), rel = json_num(j, "true_relres");
        const double rep = json_num(j, "replacements");
        fprintf(stderr,
                "check_dcg: pipelined hpcg 16, tol 1e-300, %s %s: %.0f iterations, true relres "
                "%.2e, %.0f replacements\n",
                what, engines[k & 1], it, rel, rep);
        ck_assert_double_lt(it, 3000.0);
        ck_assert_double_lt(rel, 1e-13);
        ck_assert_double_ge(rep, 2.0);
    }
}
END_TEST

/* --cg: a bad value, pipelined with --engine none or without mpirun: usage errors. */
START_TEST(test_dcg_cg_flag_misuse_exits_2)
{
    if (!checks_usage() ||
        !usage_error(nranks(), "--grid 4 --cg fast", "--cg 'fast' is not plain or pipelined"))
        return;
    usage_error(nranks(), "--grid 4 --cg pipelined --engine none",
                "--cg pipelined runs on the distributed solver: --engine push or graph");
    usage_error(0, "--grid 4 --cg pipelined", "start parex-cg under mpirun");
}
END_TEST

/* --engine: a bad value, none on several ranks, push/graph without mpirun: usage errors. */
START_TEST(test_dcg_engine_flag_misuse_exits_2)
{
    if (!checks_usage() || !usage_error(nranks(), "--grid 4 --engine maybe",
                                        "--engine 'maybe' is not graph, push or none"))
        return;
    if (nranks() > 1)
        usage_error(nranks(), "--grid 4 --engine none",
                    "--engine none runs the shared-memory solver");
    usage_error(0, "--grid 4 --engine graph", "start parex-cg under mpirun");
}
END_TEST

/* An op span of a PX_PROFILE trace: its start and which of the three ops below it is. */
typedef struct {
    double ts;
    int kind; /* 0 dcg_pack, 1 mpi_isend, 2 dcg_spmv_interior */
} op_span;

static int by_start(const void *a, const void *b)
{
    const double x = ((const op_span *)a)->ts, y = ((const op_span *)b)->ts;
    return (x > y) - (x < y);
}

/* The dcg_pack, mpi_isend and dcg_spmv_interior op spans of trace file @p path (one event a
 * line, as core/trace.c writes them), sorted by start; returns how many (at most @p cap). */
static size_t read_op_spans(const char *path, op_span *spans, size_t cap)
{
    static const char *const names[] = {"{\"name\":\"dcg_pack\",\"cat\":\"op\"",
                                        "{\"name\":\"mpi_isend\",\"cat\":\"op\"",
                                        "{\"name\":\"dcg_spmv_interior\",\"cat\":\"op\""};
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no trace %s", path);
    char line[1024];
    size_t n = 0;
    while (n < cap && fgets(line, sizeof line, f)) {
        const char *ts = strstr(line, "\"ts\":");
        for (int k = 0; ts && k < 3; k++) {
            if (strncmp(line, names[k], strlen(names[k])) != 0)
                continue;
            spans[n].ts = strtod(ts + 5, NULL);
            spans[n++].kind = k;
        }
    }
    fclose(f);
    qsort(spans, n, sizeof *spans, by_start);
    return n;
}

/* Overlap on one thread a rank: the thread that packs the halo posts the sends before it
 * starts the interior rows (the engine runs an MPI op, PX_FN_ASYNC, at once on the thread whose
 * finished op made it ready, ahead of the ready ops queued in the lane: engine.h), so the
 * messages travel while the interior rows are computed. Before session 12 the interior SpMV,
 * queued beside the pack, ran first and the messages left only after it; session 12 ordered
 * it behind the sends in dcg.c, session 14 in the engine for every user. Checked on each rank's
 * PX_PROFILE trace (2 ranks, PX_NUM_THREADS=1): after every dcg_pack, the first of mpi_isend and
 * dcg_spmv_interior to start is mpi_isend. */
START_TEST(test_dcg_one_thread_posts_the_sends_before_the_interior_rows)
{
    if (nranks() != 2 || px_test_env_int("PX_NUM_THREADS", 1) != 1) {
        fprintf(stderr, "check_dcg: the send order is checked by the np2_t1 run only\n");
        return;
    }
    char trace[320], wrap[512];
    snprintf(trace, sizeof trace, "%s/trace", dir_path);
    snprintf(
        wrap, sizeof wrap,
        "sh -c 'PX_NUM_THREADS=1 PX_PROFILE=\"$0.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\" exec "
        "\"$@\"' '%s'",
        trace);
    const int st = run_via(2, wrap,
                           "--space threads --engine graph --grid 6 --max-iters 20 --tol 1e-300 "
                           "--progress 0");
    if (st < 0)
        return;
    /* exit status 3: not converged, as asked (20 iterations to a tolerance of 1e-300) */
    ck_assert_msg(st == 3, "status %d: %s", st, run_err);
    static op_span spans[4096];
    for (int r = 0; r < 2; r++) {
        char path[340];
        snprintf(path, sizeof path, "%s.%d", trace, r);
        const size_t n = read_op_spans(path, spans, sizeof spans / sizeof spans[0]);
        unlink(path);
        int packs = 0;
        for (size_t i = 0; i < n; i++) {
            if (spans[i].kind != 0)
                continue;
            size_t j = i + 1;
            while (j < n && spans[j].kind == 0)
                j++;
            ck_assert_msg(j < n, "rank %d: a dcg_pack with no send or interior rows after it", r);
            ck_assert_msg(spans[j].kind == 1,
                          "rank %d, exchange %d: the interior rows started before the sends", r,
                          packs + 1);
            packs++;
        }
        /* 20 iterations and the verification's exchange */
        ck_assert_int_eq(packs, 21);
    }
}
END_TEST

/* A tcase of @p s named and tagged @p name (the ctests pick tcases by CK_RUN_CASE or
 * CK_EXCLUDE_TAGS, tests/cg.cmake), each test in a fresh temporary folder. */
static TCase *dcg_tcase(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_set_tags(tc, name);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *dcg_suite(void)
{
    Suite *s = suite_create("dcg");
    /* What depends on how the rows are split over the ranks (the partitions, the process
     * grid, ranks with few rows or none coupled): the one tcase that the 3-rank run takes
     * (tests/cg.cmake, CK_RUN_CASE=grid), whose middle rank has two neighbours. */
    TCase *tg = dcg_tcase(s, "grid");
    tcase_add_test(tg, test_dcg_bcsstk16_jacobi_metis_matches_one_process);
    tcase_add_test(tg, test_dcg_bcsstk16_jacobi_block_matches_one_process);
    tcase_add_test(tg, test_dcg_hpcg_16_per_rank_matches_one_process);
    tcase_add_test(tg, test_dcg_hpcg_jacobi_matches_one_process);
    tcase_add_test(tg, test_dcg_more_ranks_than_rows_fails_cleanly);
    tcase_add_test(tg, test_dcg_ranks_without_neighbours_or_interior_rows_match_one_process);
    tcase_add_test(tg, test_dcg_iterations_do_not_depend_on_the_partition);
    /* The solver's variants and its command line, on the same partitions. */
    TCase *tc = dcg_tcase(s, "distributed");
    tcase_add_test(tc, test_dcg_staging_path_matches_one_process);
    tcase_add_test(tc, test_dcg_bad_partition_flag_exits_2);
    tcase_add_test(tc, test_dcg_indefinite_matrix_is_a_breakdown_on_every_rank);
    tcase_add_test(tc, test_dcg_graph_equals_push_bcsstk16_jacobi);
    tcase_add_test(tc, test_dcg_engine_flag_misuse_exits_2);
    tcase_add_test(tc, test_dcg_interior_chunks_give_the_same_solve);
    tcase_add_test(tc, test_dcg_plain_dots_keep_the_iterations);
    tcase_add_test(tc, test_dcg_pipelined_bcsstk16_jacobi_matches_one_process);
    tcase_add_test(tc, test_dcg_cg_flag_misuse_exits_2);
    tcase_add_test(tc, test_dcg_one_thread_posts_the_sends_before_the_interior_rows);
    /* The pipelined CG's own numerics (residual replacement, stagnation): properties of the
     * recurrences, not of the split, so on 2 ranks only (tests/cg.cmake: the 4-rank run leaves
     * it out, CK_EXCLUDE_TAGS). */
    TCase *tn = dcg_tcase(s, "numerics");
    tcase_add_test(tn, test_dcg_pipelined_stops_on_the_true_residual);
    tcase_add_test(tn, test_dcg_pipelined_stagnates_past_the_attainable_accuracy);
    /* The engine's paths (graph and push, the pipelined CG's ops pushed from inside ops, the
     * sampled clock ops, a rank's failure reaching the others): the tcase that the sanitizer
     * builds and the other engine kinds run (tests/cg.cmake, CK_RUN_CASE) and the 4-rank run
     * leaves out (CK_EXCLUDE_TAGS) as the numerics, on solves small enough for ThreadSanitizer's
     * pace. */
    TCase *te = dcg_tcase(s, "engine");
    tcase_add_test(te, test_dcg_graph_equals_push_hpcg_16);
    tcase_add_test(te, test_dcg_pipelined_hpcg_matches_plain);
    tcase_add_test(te, test_dcg_clock_sampling_keeps_the_solve);
    tcase_add_test(te, test_dcg_one_rank_failing_alone_aborts_the_job);
    tcase_add_test(te, test_dcg_one_rank_failing_to_record_fails_every_rank);
    tcase_add_test(te, test_dcg_pipelined_start_failing_on_one_rank_fails_every_rank);
    return s;
}

int main(void)
{
    return px_test_run(dcg_suite());
}
