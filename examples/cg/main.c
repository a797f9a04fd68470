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
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "cg.h"
#include "mmio.h"

#define EXIT_USAGE 2
#define PROG       "parex-cg"
#if EXIT_USAGE != EX_CLI_EXIT_USAGE
#error "EXIT_USAGE must be the shared usage status (examples/common/cli.h)"
#endif
#define EXIT_NOT_CONVERGED 3

static const char usage[] =
    "usage: parex-cg [--matrix FILE | --grid N] [--space serial|threads|cuda]\n"
    "                [--precond none|jacobi] [--tol X] [--max-iters N] [--progress S]\n"
    "                [--json] [--px-* runtime flags, see --px-help]\n"
    "\n"
    "Solves A x = b by Conjugate Gradient with b = A * ones and x0 = 0, stopping when\n"
    "||r||/||b|| < tol. Without --matrix it generates the HPCG problem (27-point stencil,\n"
    "26 on the diagonal, -1 off it) on an N x N x N grid.\n"
    "\n"
    "  --matrix FILE      Matrix Market coordinate file (real|integer|pattern,\n"
    "                     general|symmetric), square, symmetric positive definite\n"
    "  --grid N           HPCG grid size, 1..1290 (default 64, when no --matrix)\n"
    "  --space NAME       execution space (default: the runtime's default space)\n"
    "  --precond KIND     none (default) or jacobi\n"
    "  --tol X            relative residual target, 0 < X < 1 (default 1e-8)\n"
    "  --max-iters N      iteration limit (default 20000)\n"
    "  --progress S       seconds between progress lines (default 2; 0: none)\n"
    "  --json             print one JSON object as the last line of output\n"
    "\n"
    "JSON fields: matrix, n, nnz, space, threads, precond, iterations, converged, relres,\n"
    "true_relres, max_abs_err, seconds (iteration loop), seconds_per_iter, min_iter_seconds\n"
    "(fastest single iteration), setup_seconds, gflops, gbs. gbs counts the bytes each\n"
    "kernel must move once: per iteration\n"
    "12 nnz + 88 n + 8 bytes for plain CG and 12 nnz + 104 n + 8 with Jacobi (8-byte values\n"
    "and row offsets, 4-byte column indices, the SpMV's gathered vector counted once).\n"
    "\n"
    "Exit status: 0 converged, 1 error, 2 bad command line, 3 not converged.\n";

typedef struct {
    const char *matrix;
    int64_t grid;
    const char *space;
    int jacobi;
    double tol;
    int64_t max_iters;
    double progress_s;
    int json;
} cli;

/* Returns 0 on success (or a help request: *help set), else an exit status. */
static int parse_cli(int argc, char **argv, cli *c, int *help)
{
    c->matrix = NULL;
    c->grid = 0;
    c->space = NULL;
    c->jacobi = 0;
    c->tol = 1e-8;
    c->max_iters = 20000;
    c->progress_s = 2.0;
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
        static const char *const valued[] = {"--matrix", "--grid",      "--space",   "--precond",
                                             "--tol",    "--max-iters", "--progress"};
        const char *val = NULL;
        size_t which = sizeof valued / sizeof valued[0];
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) {
            size_t len = strlen(valued[k]);
            if (strncmp(arg, valued[k], len) == 0 && (arg[len] == '\0' || arg[len] == '=')) {
                which = k;
                if (arg[len] == '=') {
                    val = arg + len + 1;
                } else {
                    if (i + 1 >= argc)
                        return ex_cli_usage_error(PROG, "option %s needs a value", valued[k]);
                    val = argv[++i];
                }
                break;
            }
        }
        if (which == sizeof valued / sizeof valued[0])
            return ex_cli_usage_error(PROG, "unknown argument '%s'", arg);
        switch (which) {
        case 0:
            if (*val == '\0')
                return ex_cli_usage_error(PROG, "--matrix needs a file name");
            c->matrix = val;
            break;
        case 1:
            if (!ex_cli_parse_int(val, 1, 1290, &c->grid))
                return ex_cli_usage_error(PROG, "--grid '%s' is not an integer in 1..1290", val);
            break;
        case 2:
            c->space = val;
            break;
        case 3:
            if (strcmp(val, "none") == 0)
                c->jacobi = 0;
            else if (strcmp(val, "jacobi") == 0)
                c->jacobi = 1;
            else
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
        default:
            if (!ex_cli_parse_double(val, &c->progress_s) || c->progress_s < 0.0)
                return ex_cli_usage_error(PROG, "--progress '%s' is not a number of seconds >= 0",
                                          val);
            break;
        }
    }
    if (c->matrix && c->grid)
        return ex_cli_usage_error(PROG, "--matrix and --grid exclude each other");
    if (!c->matrix && !c->grid)
        c->grid = 64;
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

int main(int argc, char **argv)
{
    /* The runtime takes its --px-* flags first; everything left is ours. */
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cg: px_initialize failed: %s\n", px_strerror(rc));
        return rc == PX_EINVAL ? EXIT_USAGE : EXIT_FAILURE;
    }
    cli c;
    int help = 0;
    int status = parse_cli(argc, argv, &c, &help);
    cg_matrix A;
    memset(&A, 0, sizeof A);
    char name[256];
    if (status != 0)
        goto out;
    if (help) {
        fputs(usage, stdout);
        goto out;
    }
    px_space *s = c.space ? px_space_by_name(c.space) : px_default_space();
    if (!s) {
        fprintf(stderr,
                "parex-cg: execution space '%s' is not available (unknown name, not built, "
                "or no device on this machine; see --px-print-configuration)\n",
                c.space ? c.space : "(default)");
        status = EXIT_FAILURE;
        goto out;
    }
    FILE *info = c.json ? stderr : stdout;
    const double t_setup = cg_now();
    if (c.matrix) {
        mm_csr m;
        char err[512];
        rc = mm_read_csr(c.matrix, MM_REQUIRE_SQUARE, &m, err, sizeof err);
        if (rc != MM_OK) {
            fprintf(stderr, "parex-cg: %s\n", err);
            status = EXIT_FAILURE;
            goto out;
        }
        rc = cg_matrix_upload(s, m.n_rows, m.nnz, m.row_ptr, m.col, m.val, &A);
        mm_csr_free(&m);
        snprintf(name, sizeof name, "%s", base_name(c.matrix));
    } else {
        /* Generate on the space itself when it is host memory (parallel first touch by the
         * ranks that will run the SpMV); for a device space, on the host then copy. */
        if (px_space_host_accessible(s)) {
            rc = cg_hpcg_generate(s, c.grid, c.grid, c.grid, &A);
        } else {
            px_space *h = px_space_by_name("threads");
            if (!h)
                h = px_space_by_name("serial");
            cg_matrix hA;
            rc = cg_hpcg_generate(h, c.grid, c.grid, c.grid, &hA);
            if (rc == PX_OK)
                rc = cg_matrix_upload(s, hA.n, hA.nnz, hA.row_ptr, hA.col, hA.val, &A);
            cg_matrix_free(&hA);
        }
        snprintf(name, sizeof name, "hpcg-%lldx%lldx%lld", (long long)c.grid, (long long)c.grid,
                 (long long)c.grid);
    }
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cg: setting up the matrix on space '%s' failed: %s\n",
                px_space_name(s), px_strerror(rc));
        status = EXIT_FAILURE;
        goto out;
    }
    const double setup_s = cg_now() - t_setup;
    const int threads = px_space_concurrency(s);
    fprintf(info, "parex-cg: %s, n = %lld, nnz = %lld, space %s (%d), %s CG, tol %.1e\n", name,
            (long long)A.n, (long long)A.nnz, px_space_name(s), threads,
            c.jacobi ? "Jacobi-preconditioned" : "plain", c.tol);
    fflush(info);

    cg_options o;
    o.tol = c.tol;
    o.max_iters = c.max_iters;
    o.jacobi = c.jacobi;
    o.progress_s = c.progress_s;
    o.progress = info;
    cg_result r;
    rc = cg_solve(&A, &o, &r);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-cg: %s: %s\n", name, r.message);
        status = EXIT_FAILURE;
        goto out;
    }
    const double gflops = r.seconds > 0 ? r.flops / r.seconds * 1e-9 : 0.0;
    const double gbs = r.seconds > 0 ? r.bytes / r.seconds * 1e-9 : 0.0;
    const double per_iter = r.iterations > 0 ? r.seconds / (double)r.iterations : 0.0;
    fprintf(info,
            "parex-cg: %s after %lld iterations: relres %.3e (true %.3e), max|x-1| %.3e\n"
            "parex-cg: %.3f s (%.3f ms/iteration), %.2f GFLOP/s, %.2f GB/s effective; "
            "setup %.3f s\n",
            r.converged ? "converged" : "NOT converged", (long long)r.iterations, r.relres,
            r.true_relres, r.max_abs_err, r.seconds, per_iter * 1e3, gflops, gbs, setup_s);
    if (c.json) {
        fflush(stderr);
        printf("{\"matrix\": ");
        json_string(stdout, name);
        printf(", \"n\": %lld, \"nnz\": %lld, \"space\": ", (long long)A.n, (long long)A.nnz);
        json_string(stdout, px_space_name(s));
        printf(", \"threads\": %d, \"precond\": \"%s\", \"iterations\": %lld, "
               "\"converged\": %s, ",
               threads, c.jacobi ? "jacobi" : "none", (long long)r.iterations,
               r.converged ? "true" : "false");
        json_number(stdout, "tol", c.tol, 0);
        json_number(stdout, "relres", r.relres, 0);
        json_number(stdout, "true_relres", r.true_relres, 0);
        json_number(stdout, "max_abs_err", r.max_abs_err, 0);
        json_number(stdout, "seconds", r.seconds, 0);
        json_number(stdout, "seconds_per_iter", per_iter, 0);
        json_number(stdout, "min_iter_seconds", r.min_iter_seconds, 0);
        json_number(stdout, "setup_seconds", setup_s, 0);
        json_number(stdout, "gflops", gflops, 0);
        json_number(stdout, "gbs", gbs, 1);
        printf("}\n");
    }
    status = r.converged ? 0 : EXIT_NOT_CONVERGED;
out:
    cg_matrix_free(&A);
    rc = px_finalize();
    if (rc != PX_OK && status == 0) {
        fprintf(stderr, "parex-cg: px_finalize failed: %s\n", px_strerror(rc));
        status = EXIT_FAILURE;
    }
    fflush(stdout);
    return status;
}
