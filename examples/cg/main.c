/*
 * examples/cg/main.c - parex-cg: Conjugate Gradient on a Matrix Market file or the HPCG
 * problem, on any parex execution space.
 *
 *   parex-cg                                   HPCG 27-point stencil, 64^3 grid, default space
 *   parex-cg --matrix bcsstk16.mtx --precond jacobi --space threads --json
 *
 * The right-hand side is b = A * ones and x0 = 0, so the exact solution is all ones and the
 * error is reported. The iteration stops when ||r||_2 / ||b||_2 < tol.
 *
 * Exit status: 0 converged; 1 bad input or a runtime error; 2 bad command line;
 * 3 ran --max-iters iterations without converging.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* dup, dup2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/cli.h"
#include "cg.h"
#include "mmio.h"
#if PX_HAVE_MPI
#include "dcg.h"
#include "partition.h"
#endif

#define EXIT_USAGE 2
#define PROG       "parex-cg"
#if EXIT_USAGE != EX_CLI_EXIT_USAGE
#error "EXIT_USAGE must be the shared usage status (examples/common/cli.h)"
#endif
#define EXIT_NOT_CONVERGED 3

static const char usage[] =
    "usage: parex-cg [--matrix FILE | --grid N|NXxNYxNZ]   (or: mpirun -np P parex-cg ...)\n"
    "                [--space serial|threads|cuda] [--precond none|jacobi] [--tol X]\n"
    "                [--max-iters N] [--progress S] [--partition metis|block]\n"
    "                [--engine graph|push|none] [--interior-chunk R]\n"
    "                [--dots compensated|plain] [--cg plain|pipelined] [--clock-every K]\n"
    "                [--json]\n"
    "                [--px-* runtime flags, see --px-help]\n"
    "\n"
    "Solves A x = b by Conjugate Gradient with b = A * ones and x0 = 0, stopping when\n"
    "||r||/||b|| < tol. Without --matrix it generates the HPCG problem (27-point stencil,\n"
    "26 on the diagonal, -1 off it) on an N x N x N grid.\n"
    "Under mpirun with P > 1 ranks the solve is distributed: the HPCG grid is per rank on a\n"
    "3-D process grid (global (px N) x (py N) x (pz N)), a matrix is read on every rank and\n"
    "its rows partitioned; halo messages are parex engine ops overlapping the interior SpMV.\n"
    "\n"
    "  --matrix FILE      Matrix Market coordinate file (real|integer|pattern,\n"
    "                     general|symmetric), square, symmetric positive definite\n"
    "  --grid N           HPCG grid size, 1..1290 (default 64, when no --matrix); or\n"
    "                     NXxNYxNZ, each 1..1290; per rank under mpirun\n"
    "  --space NAME       execution space (default: the runtime's default space)\n"
    "  --precond KIND     none (default) or jacobi\n"
    "  --tol X            relative residual target, 0 < X < 1 (default 1e-8)\n"
    "  --max-iters N      iteration limit (default 20000)\n"
    "  --progress S       seconds between progress lines (default 2; 0: none)\n"
    "  --partition KIND   rows of a --matrix over MPI ranks: metis (default, needs METIS)\n"
    "                     or block (contiguous row blocks); ignored on one rank\n"
    "  --engine MODE      how the distributed solver issues an iteration to the parex\n"
    "                     engine: graph (default under mpirun with P > 1: one recorded\n"
    "                     iteration graph launched per iteration), push (its ops pushed one\n"
    "                     by one), or none (the shared-memory solver, one rank only;\n"
    "                     the default on one rank). graph and push need mpirun, also for\n"
    "                     one rank (mpirun -np 1)\n"
    "  --interior-chunk R distributed solve: the interior SpMV in pieces of about R rows,\n"
    "                     0..2^40 (default 4096; 0: one call a thread); a rank bound to one\n"
    "                     core tests its halo messages between the pieces, which overlaps\n"
    "                     them on transports that need the host to move a message (TCP,\n"
    "                     large messages; include/parex/mpi.h, \"Progress\")\n"
    "  --dots KIND        distributed solve on a host space: compensated (default: dot\n"
    "                     products as double-double sums, iterations independent of the\n"
    "                     split over ranks) or plain (double sums, as the bulk-synchronous\n"
    "                     baseline bench_cg_bsp: the same arithmetic, for comparisons)\n"
    "  --cg VARIANT       distributed solve: plain (default) or pipelined (Ghysels-\n"
    "                     Vanroose: one allreduce an iteration, overlapping the halo\n"
    "                     exchange and SpMV, and b - A x in place of r where it would\n"
    "                     stop or break down); needs mpirun and --engine push|graph\n"
    "  --clock-every K    distributed solve: one launch in K (default 8; 1: all) runs\n"
    "                     the clock ops behind comm_seconds and overlap, which are\n"
    "                     scaled from those samples\n"
    "  --json             print one JSON object as the last line of output (rank 0)\n"
    "\n";

/* The help's second half (apart: one string stays under C's 4095 characters). */
static const char usage_fields[] =
    "JSON fields: matrix, n, nnz, space, threads, precond, iterations, converged, tol,\n"
    "relres, true_relres, max_abs_err, seconds (iteration loop), seconds_per_iter,\n"
    "min_iter_seconds (fastest single iteration), first_iters_seconds (the first 8, one by\n"
    "one), setup_seconds, gflops, gbs, ranks,\n"
    "threads_per_rank, halo_bytes, comm_seconds, overlap, message_seconds_per_iter,\n"
    "window_seconds_per_iter, window_seconds_per_iter_max, engine, dots, cg, replacements,\n"
    "stagnated, clock_every, clock_samples (see the README).\n"
    "gbs counts the bytes each kernel must move once: per iteration 12 nnz + 88 n + 8\n"
    "bytes for plain CG and 12 nnz + 104 n + 8 with Jacobi (8-byte values and row offsets,\n"
    "4-byte column indices, the SpMV's gathered vector counted once; --cg pipelined: README).\n"
    "\n"
    "Exit status: 0 converged, 1 error, 2 bad command line, 3 not converged.\n";

typedef struct {
    const char *matrix;
    int64_t grid;    /* nonzero when the HPCG problem is asked for */
    int64_t gdim[3]; /* its NX, NY, NZ */
    int partition;   /* -1: default (metis), 0: block, 1: metis */
    int engine;      /* -1: default (none on one rank, else graph), 0: none, 1: push, 2: graph */
    const char *space;
    int jacobi;
    double tol;
    int64_t max_iters;
    double progress_s;
    int64_t interior_chunk; /* --interior-chunk R: rows a piece of the interior SpMV; 0: one call */
    int plain_dots;         /* --dots plain: 1; compensated (default): 0 */
    int pipelined;          /* --cg pipelined: 1; plain (default): 0 */
    int64_t clock_every;    /* --clock-every K: one launch in K carries the clock ops (dcg.h) */
    int json;
} cli;

/* "N" (a cube) or "NXxNYxNZ", every size in 1..1290. Returns 1 when valid. */
static int parse_grid(const char *val, int64_t dim[3])
{
    char buf[64];
    if (strlen(val) >= sizeof buf)
        return 0;
    strcpy(buf, val);
    char *parts[3] = {buf, NULL, NULL};
    int np = 1;
    for (char *q = buf; *q; q++)
        if (*q == 'x') {
            if (np == 3)
                return 0;
            *q = '\0';
            parts[np++] = q + 1;
        }
    if (np == 2)
        return 0;
    for (int k = 0; k < np; k++)
        if (!ex_cli_parse_int(parts[k], 1, 1290, &dim[k]))
            return 0;
    if (np == 1)
        dim[1] = dim[2] = dim[0];
    return 1;
}

/* Store option number @p which (index in parse_cli's table) with value @p val; 0 or the
 * usage exit status. */
static int apply_option(size_t which, const char *val, cli *c)
{
    static const char *const
        precond[] = {"none", "jacobi"},
        *const dots[] = {"compensated", "plain"}, *const engine[] = {"none", "push", "graph"},
        *const variant[] = {"plain", "pipelined"}, *const partition[] = {"block", "metis"};
    switch (which) {
    case 0:
        if (*val == '\0')
            return ex_cli_usage_error(PROG, "--matrix needs a file name");
        c->matrix = val;
        break;
    case 1:
        if (!parse_grid(val, c->gdim))
            return ex_cli_usage_error(
                PROG, "--grid '%s' is not an integer in 1..1290 or NXxNYxNZ of such", val);
        c->grid = 1;
        break;
    case 2:
        c->space = val;
        break;
    case 3:
        if ((c->jacobi = ex_cli_choice(val, precond, 2)) < 0)
            return ex_cli_usage_error(PROG, "--precond '%s' is not none or jacobi", val);
        break;
    case 4:
        if (!ex_cli_parse_double(val, &c->tol) || !(c->tol > 0.0 && c->tol < 1.0))
            return ex_cli_usage_error(PROG, "--tol '%s' is not a number in (0, 1)", val);
        break;
    case 5:
        if (!ex_cli_parse_int(val, 1, INT64_MAX, &c->max_iters))
            return ex_cli_usage_error(PROG, "--max-iters '%s' is not a positive integer", val);
        break;
    case 6:
        if (!ex_cli_parse_double(val, &c->progress_s) || c->progress_s < 0.0)
            return ex_cli_usage_error(PROG, "--progress '%s' is not a number of seconds >= 0", val);
        break;
    case 9:
        if (!ex_cli_parse_int(val, 0, (int64_t)1 << 40, &c->interior_chunk))
            return ex_cli_usage_error(PROG, "--interior-chunk '%s' is not a number of rows >= 0",
                                      val);
        break;
    case 10:
        if ((c->plain_dots = ex_cli_choice(val, dots, 2)) < 0)
            return ex_cli_usage_error(PROG, "--dots '%s' is not compensated or plain", val);
        break;
    case 11:
        if ((c->pipelined = ex_cli_choice(val, variant, 2)) < 0)
            return ex_cli_usage_error(PROG, "--cg '%s' is not plain or pipelined", val);
        break;
    case 12:
        if (!ex_cli_parse_int(val, 1, INT64_MAX, &c->clock_every))
            return ex_cli_usage_error(PROG, "--clock-every '%s' is not a positive integer", val);
        break;
    case 8:
        if ((c->engine = ex_cli_choice(val, engine, 3)) < 0)
            return ex_cli_usage_error(PROG, "--engine '%s' is not graph, push or none", val);
        break;
    default:
        if ((c->partition = ex_cli_choice(val, partition, 2)) < 0)
            return ex_cli_usage_error(PROG, "--partition '%s' is not metis or block", val);
        break;
    }
    return 0;
}

/* Returns 0 on success (or a help request: *help set), else an exit status. */
static int parse_cli(int argc, char **argv, cli *c, int *help)
{
    c->matrix = NULL;
    c->grid = 0;
    c->partition = -1;
    c->engine = -1;
    c->space = NULL;
    c->jacobi = 0;
    c->tol = 1e-8;
    c->max_iters = 20000;
    c->progress_s = 2.0;
#if PX_HAVE_MPI
    c->interior_chunk = DCG_INTERIOR_CHUNK_DEFAULT;
#else
    c->interior_chunk = 0; /* parsed, unused: this build has no distributed solve */
#endif
    c->plain_dots = 0;
    c->pipelined = 0;
#if PX_HAVE_MPI
    c->clock_every = DCG_CLOCK_EVERY_DEFAULT;
#else
    c->clock_every = 1;    /* parsed, unused */
#endif
    c->json = 0;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = 1;
            return 0;
        }
        if (strcmp(arg, "--json") == 0) {
            c->json = 1;
            continue;
        }
        static const char *const valued[] = {
            "--matrix",    "--grid",     "--space",      "--precond", "--tol",
            "--max-iters", "--progress", "--partition",  "--engine",  "--interior-chunk",
            "--dots",      "--cg",       "--clock-every"};
        const char *val = NULL;
        const int which = ex_cli_valued_option(PROG, argc, argv, &i, valued,
                                               sizeof valued / sizeof valued[0], &val);
        if (which < 0)
            return EX_CLI_EXIT_USAGE;
        const int st = apply_option((size_t)which, val, c);
        if (st != 0)
            return st;
    }
    if (c->matrix && c->grid)
        return ex_cli_usage_error(PROG, "--matrix and --grid exclude each other");
    if (!c->matrix && !c->grid) {
        c->grid = 1;
        c->gdim[0] = c->gdim[1] = c->gdim[2] = 64;
    }
    return 0;
}

/* Print s as a JSON string (quotes, backslashes and control characters escaped). */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* JSON has no NaN or Inf: print null for them. */
static void json_number(FILE *f, const char *key, double v, int last)
{
    if (isfinite(v))
        fprintf(f, "\"%s\": %.6g%s", key, v, last ? "" : ", ");
    else
        fprintf(f, "\"%s\": null%s", key, last ? "" : ", ");
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* What the run adds to the JSON line beyond cg_result (one rank: no messages). */
typedef struct {
    int ranks, threads_per_rank;
    double halo_bytes, comm_seconds, overlap;
    /* per iteration, averaged over ranks: t(halos in) - t(posted), t(interior done) -
     * t(posted) (dcg_stats' message_seconds and window_seconds), and the window of the rank
     * where it was longest (window_seconds_max); NaN where overlap is */
    double message_s, window_s, window_max_s;
    const char *engine;   /* "none", "push" or "graph" (--engine) */
    const char *dots;     /* "compensated" or "plain" (--dots; the staging path's are plain) */
    const char *cg;       /* "plain" or "pipelined" (--cg) */
    int64_t replacements; /* --cg pipelined: residual replacements (dcg_stats) */
    int stagnated;        /* --cg pipelined stopped on a stagnating true residual (dcg_stats) */
    int64_t clock_every, clock_samples; /* the clock sampling (dcg_stats); 0, 0 on one rank */
} run_extra;

/* The human-readable summary and (with --json) the JSON line, on rank 0 only. */
static void report(const cli *c, FILE *info, const char *name, int64_t n, int64_t nnz, px_space *s,
                   const cg_result *r, double setup_s, const run_extra *x)
{
    const double gflops = r->seconds > 0 ? r->flops / r->seconds * 1e-9 : 0.0;
    const double gbs = r->seconds > 0 ? r->bytes / r->seconds * 1e-9 : 0.0;
    const double per_iter = r->iterations > 0 ? r->seconds / (double)r->iterations : 0.0;
    fprintf(info,
            "parex-cg: %s after %lld iterations: relres %.3e (true %.3e), max|x-1| %.3e\n"
            "parex-cg: %.3f s (%.3f ms/iteration), %.2f GFLOP/s, %.2f GB/s effective; "
            "setup %.3f s\n",
            r->converged ? "converged" : "NOT converged", (long long)r->iterations, r->relres,
            r->true_relres, r->max_abs_err, r->seconds, per_iter * 1e3, gflops, gbs, setup_s);
    if (x->ranks > 1) {
        fprintf(info, "parex-cg: %d ranks x %d threads, halo %.0f bytes/iteration, comm %.3f s",
                x->ranks, x->threads_per_rank, x->halo_bytes, x->comm_seconds);
        if (isfinite(x->overlap))
            fprintf(info, ", overlap %.2f", x->overlap);
        fputc('\n', info);
    }
    if (x->replacements > 0)
        fprintf(info, "parex-cg: %lld residual replacement%s (r = b - A x)\n",
                (long long)x->replacements, x->replacements == 1 ? "" : "s");
    if (x->stagnated)
        fprintf(info, "parex-cg: stopped: the true residual after a replacement was not 10 %% "
                      "below the last one's (rounding limits the attainable accuracy)\n");
    if (!c->json)
        return;
    fflush(stderr);
    printf("{\"matrix\": ");
    json_string(stdout, name);
    printf(", \"n\": %lld, \"nnz\": %lld, \"space\": ", (long long)n, (long long)nnz);
    json_string(stdout, px_space_name(s));
    printf(", \"threads\": %d, \"precond\": \"%s\", \"iterations\": %lld, \"converged\": %s, ",
           x->threads_per_rank, c->jacobi ? "jacobi" : "none", (long long)r->iterations,
           r->converged ? "true" : "false");
    json_number(stdout, "tol", c->tol, 0);
    json_number(stdout, "relres", r->relres, 0);
    json_number(stdout, "true_relres", r->true_relres, 0);
    json_number(stdout, "max_abs_err", r->max_abs_err, 0);
    json_number(stdout, "seconds", r->seconds, 0);
    json_number(stdout, "seconds_per_iter", per_iter, 0);
    json_number(stdout, "min_iter_seconds", r->min_iter_seconds, 0);
    printf("\"first_iters_seconds\": [");
    for (int k = 0; k < r->n_first_iters; k++)
        printf("%s%.6g", k ? ", " : "", r->first_iters_seconds[k]);
    printf("], ");
    json_number(stdout, "setup_seconds", setup_s, 0);
    json_number(stdout, "gflops", gflops, 0);
    json_number(stdout, "gbs", gbs, 0);
    printf("\"ranks\": %d, \"threads_per_rank\": %d, ", x->ranks, x->threads_per_rank);
    json_number(stdout, "halo_bytes", x->halo_bytes, 0);
    json_number(stdout, "comm_seconds", x->comm_seconds, 0);
    json_number(stdout, "overlap", x->overlap, 0);
    json_number(stdout, "message_seconds_per_iter", x->message_s, 0);
    json_number(stdout, "window_seconds_per_iter", x->window_s, 0);
    json_number(stdout, "window_seconds_per_iter_max", x->window_max_s, 0);
    printf("\"engine\": \"%s\", \"dots\": \"%s\", \"cg\": \"%s\", \"replacements\": %lld, "
           "\"stagnated\": %s, \"clock_every\": %lld, \"clock_samples\": %lld}\n",
           x->engine, x->dots, x->cg, (long long)x->replacements, x->stagnated ? "true" : "false",
           (long long)x->clock_every, (long long)x->clock_samples);
}

static void fill_options(const cli *c, FILE *info, cg_options *o)
{
    o->tol = c->tol;
    o->max_iters = c->max_iters;
    o->jacobi = c->jacobi;
    o->progress_s = c->progress_s;
    o->progress = info;
}

/* One process: the matrix on space s, cg_solve. Returns the exit status. */
static int run_single(const cli *c, px_space *s, FILE *info)
{
    cg_matrix A;
    memset(&A, 0, sizeof A);
    char name[256];
    int rc;
    const double t_setup = cg_now();
    if (c->matrix) {
        mm_csr m;
        char err[512];
        rc = mm_read_csr(c->matrix, MM_REQUIRE_SQUARE | MM_REQUIRE_SYMMETRIC, &m, err, sizeof err);
        if (rc != MM_OK) {
            fprintf(stderr, "parex-cg: %s\n", err);
            return EXIT_FAILURE;
        }
        rc = cg_matrix_upload(s, m.n_rows, m.nnz, m.row_ptr, m.col, m.val, &A);
        mm_csr_free(&m);
        snprintf(name, sizeof name, "%s", base_name(c->matrix));
    } else {
        const int64_t *g = c->gdim;
        /* Generate on the space itself when it is host memory (parallel first touch by the
         * ranks that will run the SpMV); for a device space, on the host then copy. */
        if (px_space_host_accessible(s)) {
            rc = cg_hpcg_generate(s, g[0], g[1], g[2], &A);
        } else {
            px_space *h = px_space_by_name("threads");
            if (!h)
                h = px_space_by_name("serial");
            cg_matrix hA;
            rc = cg_hpcg_generate(h, g[0], g[1], g[2], &hA);
            if (rc == PX_OK)
                rc = cg_matrix_upload(s, hA.n, hA.nnz, hA.row_ptr, hA.col, hA.val, &A);
            cg_matrix_free(&hA);
        }
        snprintf(name, sizeof name, "hpcg-%lldx%lldx%lld", (long long)g[0], (long long)g[1],
                 (long long)g[2]);
    }
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cg: setting up the matrix on space '%s' failed: %s\n",
                px_space_name(s), px_strerror(rc));
        return EXIT_FAILURE;
    }
    const double setup_s = cg_now() - t_setup;
    const int threads = px_space_concurrency(s);
    fprintf(info, "parex-cg: %s, n = %lld, nnz = %lld, space %s (%d), %s CG, tol %.1e\n", name,
            (long long)A.n, (long long)A.nnz, px_space_name(s), threads,
            c->jacobi ? "Jacobi-preconditioned" : "plain", c->tol);
    fflush(info);
    cg_options o;
    fill_options(c, info, &o);
    cg_result r;
    rc = cg_solve(&A, &o, &r);
    int status;
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cg: %s: %s\n", name, r.message);
        status = EXIT_FAILURE;
    } else {
        run_extra x = {1,      threads, 0.0,     0.0, NAN, NAN, NAN, NAN,
                       "none", "plain", "plain", 0,   0,   0,   0};
        report(c, info, name, A.n, A.nnz, s, &r, setup_s, &x);
        status = r.converged ? 0 : EXIT_NOT_CONVERGED;
    }
    cg_matrix_free(&A);
    return status;
}

#if PX_HAVE_MPI
/* A dcg_stats time @p sum of @p st, summed over @p over ranks and over iterations, as
 * seconds per rank and iteration (over = st->ranks for the sums over ranks, 1 for a one-rank
 * figure such as window_seconds_max); NaN where no halo message was sent (one rank, or ranks
 * whose rows do not couple) or no iteration ran, as overlap is. */
static double per_rank_iter(double sum, int over, const dcg_stats *st, int64_t iterations)
{
    return st->halo_bytes > 0.0 && iterations > 0 ? sum / (double)over / (double)iterations : NAN;
}

/* Count the ranks for which @p failed is set (collective over MPI_COMM_WORLD) and say whether
 * this rank speaks about its failure: rank 0 when every rank failed alike (the same input),
 * else every rank that failed alone (a file or device only it lacks). */
static int failed_ranks(int failed, int rank, int nranks, int *speak)
{
    int n = failed ? 1 : 0, all = n;
    if (MPI_Allreduce(&n, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
        all = nranks; /* cannot tell: treat as everyone's failure */
    *speak = failed && (all < nranks || rank == 0);
    return all;
}

/* Build this rank's part: the HPCG box of the process grid, or the partitioned matrix. */
static int build_part(const cli *c, int rank, cgp_part *part, char *name, size_t namelen)
{
    char err[512];
    int rc;
    if (c->matrix) {
        mm_csr m;
        rc = mm_read_csr(c->matrix, MM_REQUIRE_SQUARE | MM_REQUIRE_SYMMETRIC, &m, err, sizeof err);
        int speak, nranks;
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        const int nfail = failed_ranks(rc != MM_OK, rank, nranks, &speak);
        if (nfail > 0) {
            if (speak && nfail < nranks)
                fprintf(stderr, "parex-cg: rank %d: %s\n", rank, err);
            else if (speak)
                fprintf(stderr, "parex-cg: %s\n", err);
            if (rc == MM_OK)
                mm_csr_free(&m);
            return EXIT_FAILURE;
        }
        rc = cgp_from_csr(MPI_COMM_WORLD, m.n_rows, m.row_ptr, m.col, m.val,
                          c->partition == 0 ? CGP_BLOCK : CGP_METIS, part, err, sizeof err);
        mm_csr_free(&m);
        snprintf(name, namelen, "%s", base_name(c->matrix));
    } else {
        rc = cgp_hpcg(MPI_COMM_WORLD, c->gdim[0], c->gdim[1], c->gdim[2], part, err, sizeof err);
        int dims[3];
        cgp_process_grid(part->nranks > 0 ? part->nranks : 1, dims);
        snprintf(name, namelen, "hpcg-%lldx%lldx%lld", (long long)(c->gdim[0] * dims[0]),
                 (long long)(c->gdim[1] * dims[1]), (long long)(c->gdim[2] * dims[2]));
    }
    if (rc != CGP_OK) {
        if (rank == 0)
            fprintf(stderr, "parex-cg: %s\n", err);
        return EXIT_FAILURE;
    }
    return 0;
}

/* P > 1 ranks, or --engine push|graph on one: partition, then dcg_solve through the engine.
 * Returns the exit status. */
static int run_distributed(const cli *c, px_space *s, FILE *info, int rank, int nranks)
{
    if (c->matrix && c->partition != 0 && !cgp_have_metis()) {
        if (rank == 0)
            fprintf(stderr,
                    "parex-cg: --partition metis (the default on %d ranks) needs METIS, "
                    "which this build lacks (install libmetis-dev and reconfigure); "
                    "use --partition block\n",
                    nranks);
        return EXIT_FAILURE;
    }
    cgp_part part;
    char name[256];
    const double t_setup = cg_now();
    int status = build_part(c, rank, &part, name, sizeof name);
    if (status != 0)
        return status;
    const double setup_s = cg_now() - t_setup;
    if (rank == 0) {
        fprintf(info,
                "parex-cg: %s, n = %lld, nnz = %lld, %d ranks x space %s (%d), %s%s CG, "
                "tol %.1e\n",
                name, (long long)part.n_global, (long long)part.nnz_global, nranks,
                px_space_name(s), px_space_concurrency(s),
                c->jacobi ? "Jacobi-preconditioned" : "plain", c->pipelined ? " pipelined" : "",
                c->tol);
        fflush(info);
    }
    cg_options o;
    fill_options(c, rank == 0 ? info : NULL, &o);
    cg_result r;
    dcg_stats st;
    /* --engine: graph unless push was asked for (none never gets here). */
    dcg_params prm;
    prm.mode = c->engine == 1 ? DCG_PUSH : DCG_GRAPH;
    prm.interior_chunk = c->interior_chunk;
    prm.plain_dots = c->plain_dots;
    prm.variant = c->pipelined ? DCG_CG_PIPELINED : DCG_CG_PLAIN;
    prm.clock_every = c->clock_every;
    const int rc = dcg_solve(s, MPI_COMM_WORLD, &part, &o, &prm, &r, &st);
    if (rc != PX_OK) {
        if (rank == 0)
            fprintf(stderr, "parex-cg: %s: %s\n", name, r.message);
        status = EXIT_FAILURE;
    } else {
        run_extra x = {st.ranks,
                       st.threads_per_rank,
                       st.halo_bytes,
                       st.comm_seconds,
                       st.overlap,
                       per_rank_iter(st.message_seconds, st.ranks, &st, r.iterations),
                       per_rank_iter(st.window_seconds, st.ranks, &st, r.iterations),
                       per_rank_iter(st.window_seconds_max, 1, &st, r.iterations),
                       prm.mode == DCG_PUSH ? "push" : "graph",
                       st.compensated ? "compensated" : "plain",
                       c->pipelined ? "pipelined" : "plain",
                       st.replacements,
                       st.stagnated,
                       st.clock_every,
                       st.clock_samples};
        if (rank == 0)
            report(c, info, name, part.n_global, part.nnz_global, s, &r, setup_s, &x);
        status = r.converged ? 0 : EXIT_NOT_CONVERGED;
    }
    cgp_free(&part);
    return status;
}

/* Under mpirun (or another launcher that sets these), parex-cg initializes MPI; started
 * alone it does not, so a plain run needs no MPI runtime at all. */
static int launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE") ||
           getenv("PMI_RANK");
}
#endif

/* silence_stderr(1): send stderr (fd 2) to /dev/null, keeping the real one; (0): restore
 * it (nothing to do when it was not silenced). Returns 0, or -1 when a dup fails. */
static int silence_stderr(int on)
{
    static int saved = -1;
    fflush(stderr);
    if (on) {
        const int nul = open("/dev/null", O_WRONLY);
        saved = dup(STDERR_FILENO);
        if (nul < 0 || saved < 0 || dup2(nul, STDERR_FILENO) < 0)
            return -1;
        close(nul);
        return 0;
    }
    if (saved < 0)
        return 0;
    const int rc = dup2(saved, STDERR_FILENO) < 0 ? -1 : 0;
    close(saved);
    saved = -1;
    return rc;
}

/* The space of --space (or the default), or NULL after a message. Under MPI every rank gets
 * NULL when the space is missing on any (a node without a GPU), so none waits for the others. */
static px_space *pick_space(const cli *c, int mpi, int rank, int nranks)
{
    px_space *s = c->space ? px_space_by_name(c->space) : px_default_space();
    int speak = !s;
#if PX_HAVE_MPI
    if (mpi && failed_ranks(!s, rank, nranks, &speak) > 0)
        s = NULL;
#else
    (void)mpi;
    (void)rank;
    (void)nranks;
#endif
    if (speak)
        fprintf(stderr,
                "parex-cg: execution space '%s' is not available (unknown name, not built, or "
                "no device on this machine; see --px-print-configuration)\n",
                c->space ? c->space : "(default)");
    return s;
}

/* --engine against the launch: none needs one rank, push and graph need MPI (mpirun, also
 * for one rank), and so does --cg pipelined (the distributed solver's), which excludes none.
 * 0 or the usage exit status (rank 0 alone speaks: stderr is silenced on the others until the
 * options are checked). */
static int check_engine_mode(const cli *c, int mpi, int nranks)
{
    if (c->pipelined && c->engine == 0)
        return ex_cli_usage_error(PROG, "--cg pipelined runs on the distributed solver: "
                                        "--engine push or graph, not none");
    if (c->pipelined && !mpi)
        return ex_cli_usage_error(PROG,
                                  "--cg pipelined runs on the distributed solver: start parex-cg "
                                  "under mpirun (mpirun -np 1 for one rank)%s",
                                  PX_HAVE_MPI ? "" : "; this build has no MPI");
    if (c->engine == 0 && nranks > 1)
        return ex_cli_usage_error(PROG,
                                  "--engine none runs the shared-memory solver: one rank "
                                  "only (this run has %d)",
                                  nranks);
    if (c->engine > 0 && !mpi)
        return ex_cli_usage_error(PROG,
                                  "--engine %s runs the distributed solver: start parex-cg under "
                                  "mpirun (mpirun -np 1 for one rank)%s",
                                  c->engine == 1 ? "push" : "graph",
                                  PX_HAVE_MPI ? "" : "; this build has no MPI");
    return 0;
}

#if PX_HAVE_MPI
/* The distributed solver's allreduces (dcg.c: 2 compensated sums, 32 bytes, twice an
 * iteration; the pipelined CG's 3, 48 bytes, once) are nonblocking engine ops: MPI_Iallreduce
 * when pushed (--engine push), persistent allreduces started every iteration when recorded (the
 * default; parex/mpi.h), both run by Open MPI's libnbc. libnbc runs every one under 64 KiB as a
 * binomial reduce to rank 0, then a binomial broadcast: 2 log2 P message steps, each of which,
 * with ranks sharing cores, waits until its peer is scheduled; recursive doubling, which the
 * blocking MPI_Allreduce of bench_cg_bsp (coll/tuned) runs at this size, takes log2 P. Asked
 * for before MPI_Init unless the user chose (the environment, or mpirun's --mca, which sets
 * it); other MPI libraries ignore the name. bench/RESULTS.md, "Session 8: oversubscribed
 * one-thread ranks": 4 ranks on 2 cores, bcsstk16, sched_yield per iteration and rank
 * 4.2 -> 2.7. */
static void prefer_recursive_doubling(void)
{
    (void)setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "4", 0);
}
#endif

int main(int argc, char **argv)
{
    int rank = 0, nranks = 1, mpi = 0;
#if PX_HAVE_MPI
    if (launched_by_mpi()) {
        prefer_recursive_doubling();
        /* MPI_THREAD_MULTIPLE: the engine posts messages from its threads (parex/mpi.h). */
        if (px_mpi_init(&argc, &argv) != PX_OK) {
            fprintf(stderr, "parex-cg: MPI could not be initialized at MPI_THREAD_MULTIPLE\n");
            return EXIT_FAILURE;
        }
        mpi = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        /* Every rank parses the same command line and fails the same way: only rank 0 speaks
         * until the options are parsed (silence_stderr); after that a rank's own failure (a
         * file or space it alone lacks, dcg_solve's "failed alone") must be seen. */
        if (rank != 0 && silence_stderr(1) != 0)
            return EXIT_FAILURE;
    }
#endif
    /* The runtime takes its --px-* flags first; everything left is ours. */
    int rc = px_initialize(&argc, &argv);
    int status = 0;
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cg: px_initialize failed: %s\n", px_strerror(rc));
        status = rc == PX_EINVAL ? EXIT_USAGE : EXIT_FAILURE;
        goto out_mpi;
    }
    cli c;
    int help = 0;
    status = parse_cli(argc, argv, &c, &help);
    if (status == 0 && !help)
        status = check_engine_mode(&c, mpi, nranks);
    if (status != 0)
        goto out;
    if (help) {
        if (rank == 0) {
            fputs(usage, stdout);
            fputs(usage_fields, stdout);
        }
        goto out;
    }
    if (silence_stderr(0) != 0) {
        status = EXIT_FAILURE;
        goto out;
    }
    px_space *s = pick_space(&c, mpi, rank, nranks);
    if (!s) {
        status = EXIT_FAILURE;
        goto out;
    }
    FILE *info = c.json ? stderr : stdout;
#if PX_HAVE_MPI
    if (nranks > 1 || c.engine > 0 || c.pipelined)
        status = run_distributed(&c, s, info, rank, nranks);
    else
#endif
        status = run_single(&c, s, info);
out:
    rc = px_finalize();
    if (rc != PX_OK && status == 0) {
        fprintf(stderr, "parex-cg: px_finalize failed: %s\n", px_strerror(rc));
        status = EXIT_FAILURE;
    }
out_mpi:
    fflush(stdout);
#if PX_HAVE_MPI
    if (mpi)
        px_mpi_finalize();
#endif
    return status;
}
