/*
 * examples/fem/main.c - parex-fem: P1 finite elements for -Laplace(u) = f on the unit square,
 * assembled on any parex execution space with scatter-add or element colouring, solved by
 * parex's CG (examples/cg), checked against u = sin(pi x) sin(pi y).
 *
 *   parex-fem                                      n = 32, 3 levels, auto assembly
 *   parex-fem --n 64 --assembly all --space threads --json
 *
 * Exit status: 0 success; 1 bad input or a runtime error; 2 bad command line; 3 CG did not
 * converge; 4 an L2 order fell outside --expect-order.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "fem.h"

#define EXIT_USAGE 2
#define PROG       "parex-fem"
#if EXIT_USAGE != EX_CLI_EXIT_USAGE
#error "EXIT_USAGE must be the shared usage status (examples/common/cli.h)"
#endif
#define EXIT_NOT_CONVERGED 3
#define EXIT_ORDER         4
#define MAX_LEVELS         8

static const char usage[] =
    "usage: parex-fem [--n N] [--seed S] [--refinements R] [--space serial|threads|cuda]\n"
    "                 [--assembly atomic|duplicated|colored|auto|all] [--tol X]\n"
    "                 [--expect-order LO,HI] [--progress S] [--json] [--px-* runtime flags]\n"
    "\n"
    "Solves -Laplace(u) = 2 pi^2 sin(pi x) sin(pi y) on the unit square, u = 0 on the\n"
    "boundary, with linear triangles on a perturbed, randomly cut grid of N x N cells (then\n"
    "2N, 4N, ...: R levels), by Jacobi-preconditioned CG, and reports the L2 error against\n"
    "u = sin(pi x) sin(pi y) and its order of convergence between levels (2 for P1).\n"
    "\n"
    "  --n N              cells per side on the coarsest level, 2..16384 (default 32)\n"
    "  --seed S           mesh seed (Philox key), unsigned 64-bit (default 1)\n"
    "  --refinements R    levels N, 2N, ..., 1..8 (default 3); the finest must be <= 16384\n"
    "  --space NAME       execution space (default: the runtime's default space)\n"
    "  --assembly KIND    atomic: px_scatter ATOMIC; duplicated: px_scatter DUPLICATED (one\n"
    "                     replica per thread, bitwise repeatable; host spaces); colored:\n"
    "                     element colouring, one launch per colour, no atomics; auto:\n"
    "                     px_scatter AUTO (default); all: each mode the space has, timed and\n"
    "                     compared (max_mode_difference), the colored result solved\n"
    "  --tol X            CG relative residual target, 0 < X < 1 (default 1e-10)\n"
    "  --expect-order LO,HI  exit 4 unless every L2 order lies in [LO, HI]\n"
    "  --progress S       seconds between CG progress lines (default 2; 0: none)\n"
    "  --json             print one JSON object as the last line of output\n"
    "\n"
    "JSON fields: space, threads, seed, assembly, levels (array; per level: n, elements,\n"
    "nodes, nnz, colors, assembly_seconds {mode: seconds}, max_mode_difference (all),\n"
    "cg_iterations, cg_relres, l2_error, l2_order (from the level before; null on the first)).\n"
    "\n"
    "Exit status: 0 ok, 1 error, 2 bad command line, 3 CG not converged, 4 order out of range.\n";

typedef struct {
    int64_t n;
    uint64_t seed;
    int64_t levels;
    const char *space;
    int all;
    fem_assembly assembly;
    double tol;
    double order_lo, order_hi;
    int expect_order;
    double progress_s;
    int json;
} cli;

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end != '\0' || errno == ERANGE)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

/* Returns 0 on success (or a help request: *help set), else an exit status. */
static int parse_cli(int argc, char **argv, cli *c, int *help)
{
    memset(c, 0, sizeof *c);
    c->n = 32;
    c->seed = 1;
    c->levels = 3;
    c->assembly = FEM_ASSEMBLY_AUTO;
    c->tol = 1e-10;
    c->progress_s = 2.0;
    *help = 0;
    static const char *const valued[] = {"--n",        "--seed", "--refinements",  "--space",
                                         "--assembly", "--tol",  "--expect-order", "--progress"};
    const size_t n_valued = sizeof valued / sizeof valued[0];
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
        const char *val = NULL;
        const int which = ex_cli_valued_option(PROG, argc, argv, &i, valued, n_valued, &val);
        if (which < 0)
            return EX_CLI_EXIT_USAGE;
        switch (which) {
        case 0:
            if (!ex_cli_parse_int(val, 2, FEM_MESH_MAX_N, &c->n))
                return ex_cli_usage_error(PROG, "--n '%s' is not an integer in 2..%d", val,
                                          FEM_MESH_MAX_N);
            break;
        case 1:
            if (!parse_u64(val, &c->seed))
                return ex_cli_usage_error(PROG, "--seed '%s' is not an unsigned 64-bit integer",
                                          val);
            break;
        case 2:
            if (!ex_cli_parse_int(val, 1, MAX_LEVELS, &c->levels))
                return ex_cli_usage_error(PROG, "--refinements '%s' is not an integer in 1..%d",
                                          val, MAX_LEVELS);
            break;
        case 3:
            c->space = val;
            break;
        case 4:
            if (strcmp(val, "all") == 0)
                c->all = 1;
            else if (fem_assembly_parse(val, &c->assembly) != PX_OK)
                return ex_cli_usage_error(
                    PROG,
                    "--assembly '%s' is not atomic, duplicated, colored, auto or "
                    "all",
                    val);
            break;
        case 5:
            if (!ex_cli_parse_double(val, &c->tol) || !(c->tol > 0.0 && c->tol < 1.0))
                return ex_cli_usage_error(PROG, "--tol '%s' is not a number in (0, 1)", val);
            break;
        case 6: {
            char buf[128];
            char *comma;
            snprintf(buf, sizeof buf, "%s", val);
            comma = strchr(buf, ',');
            if (!comma)
                return ex_cli_usage_error(PROG, "--expect-order '%s' is not LO,HI", val);
            *comma = '\0';
            if (!ex_cli_parse_double(buf, &c->order_lo) ||
                !ex_cli_parse_double(comma + 1, &c->order_hi) || c->order_lo > c->order_hi)
                return ex_cli_usage_error(PROG, "--expect-order '%s' is not LO,HI with LO <= HI",
                                          val);
            c->expect_order = 1;
            break;
        }
        default:
            if (!ex_cli_parse_double(val, &c->progress_s) || c->progress_s < 0.0)
                return ex_cli_usage_error(PROG, "--progress '%s' is not a number of seconds >= 0",
                                          val);
            break;
        }
    }
    if ((c->n << (c->levels - 1)) > FEM_MESH_MAX_N)
        return ex_cli_usage_error(PROG,
                                  "--n %lld with %lld refinements gives a finest level above %d",
                                  (long long)c->n, (long long)c->levels, FEM_MESH_MAX_N);
    return 0;
}

/* JSON has no NaN or Inf: print null for them. */
static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

/* One level's results. */
typedef struct {
    int64_t n, elements, nodes, nnz;
    int colors;
    double seconds[4]; /* per fem_assembly; < 0: not run */
    double max_diff;   /* --assembly all: max |a - b| / max |b| over modes, values and load */
    int64_t cg_iterations;
    double cg_relres;
    double l2;
    double order;
} level;

/* Copy n doubles from the problem's space to host memory (malloc). NULL on failure. */
static double *to_host(px_space *s, const double *src, int64_t n)
{
    double *h = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (h &&
        px_deep_copy(px_space_by_name("serial"), h, s, src, (size_t)n * sizeof(double)) != PX_OK) {
        free(h);
        h = NULL;
    }
    return h;
}

/* max |a - b| relative to max |b|, over n values. */
static double rel_diff(const double *a, const double *b, int64_t n)
{
    double d = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (fabs(a[i] - b[i]) > d || a[i] != a[i])
            d = a[i] != a[i] ? HUGE_VAL : fabs(a[i] - b[i]);
        if (fabs(b[i]) > m)
            m = fabs(b[i]);
    }
    return m > 0.0 ? d / m : d;
}

/* Assemble @p p by @p how, timing it; with ref_val/ref_load, fold the difference to them into
 * *diff. Returns a parex status (printed). */
static int assemble_timed(fem_problem *p, fem_assembly how, double *seconds, const double *ref_val,
                          const double *ref_load, double *diff)
{
    fem_assembler as;
    int rc = fem_assembler_init(&as, p, how);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: %s assembly on space '%s' is not possible: %s\n",
                fem_assembly_name(how), px_space_name(p->space), px_strerror(rc));
        return rc;
    }
    const double t0 = cg_now();
    rc = fem_assemble(&as);
    *seconds = cg_now() - t0;
    fem_assembler_fini(&as);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: %s assembly failed: %s\n", fem_assembly_name(how),
                px_strerror(rc));
        return rc;
    }
    if (ref_val) {
        double *v = to_host(p->space, p->A.val, p->A.nnz);
        double *l = to_host(p->space, p->load, p->n_nodes);
        if (!v || !l) {
            free(v);
            free(l);
            fprintf(stderr, "parex-fem: copying the matrix to the host failed\n");
            return PX_ENOMEM;
        }
        const double dv = rel_diff(v, ref_val, p->A.nnz), dl = rel_diff(l, ref_load, p->n_nodes);
        if (dv > *diff)
            *diff = dv;
        if (dl > *diff)
            *diff = dl;
        free(v);
        free(l);
    }
    return PX_OK;
}

/* Run one level: mesh, problem, assembly (one mode or all), CG, L2 error. Returns an exit
 * status. */
static int run_level(const cli *c, px_space *s, FILE *info, level *L)
{
    fem_mesh m;
    fem_problem p;
    double *x = NULL, *ref_val = NULL, *ref_load = NULL;
    int status = EXIT_FAILURE;
    memset(&p, 0, sizeof p);
    for (int k = 0; k < 4; k++)
        L->seconds[k] = -1.0;
    L->max_diff = 0.0;
    int rc = fem_mesh_generate(L->n, c->seed, &m);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: generating the %lld x %lld mesh failed: %s\n", (long long)L->n,
                (long long)L->n, px_strerror(rc));
        return EXIT_FAILURE;
    }
    rc = fem_problem_create(s, &m, &p);
    fem_mesh_free(&m);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: setting up the problem on space '%s' failed: %s\n",
                px_space_name(s), px_strerror(rc));
        return EXIT_FAILURE;
    }
    L->elements = p.n_elems;
    L->nodes = p.n_nodes;
    L->nnz = p.A.nnz;
    L->colors = p.n_colors;
    fprintf(info, "parex-fem: level n = %lld: %lld elements, %lld nodes, nnz %lld, %d colours\n",
            (long long)L->n, (long long)p.n_elems, (long long)p.n_nodes, (long long)p.A.nnz,
            p.n_colors);
    fflush(info);
    if (c->all) {
        /* colored first (the reference, bitwise the same everywhere), the others compared to
         * it, then colored again so that the matrix solved is the reference. */
        if (assemble_timed(&p, FEM_ASSEMBLY_COLORED, &L->seconds[FEM_ASSEMBLY_COLORED], NULL, NULL,
                           NULL) != PX_OK)
            goto out;
        ref_val = to_host(s, p.A.val, p.A.nnz);
        ref_load = to_host(s, p.load, p.n_nodes);
        if (!ref_val || !ref_load) {
            fprintf(stderr, "parex-fem: copying the matrix to the host failed\n");
            goto out;
        }
        const fem_assembly others[] = {FEM_ASSEMBLY_ATOMIC, FEM_ASSEMBLY_DUPLICATED,
                                       FEM_ASSEMBLY_AUTO};
        for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
            if (others[k] == FEM_ASSEMBLY_DUPLICATED && !px_space_host_accessible(s))
                continue; /* no replicas in device memory */
            if (assemble_timed(&p, others[k], &L->seconds[others[k]], ref_val, ref_load,
                               &L->max_diff) != PX_OK)
                goto out;
        }
        double again;
        if (assemble_timed(&p, FEM_ASSEMBLY_COLORED, &again, NULL, NULL, NULL) != PX_OK)
            goto out;
    } else {
        if (assemble_timed(&p, c->assembly, &L->seconds[c->assembly], NULL, NULL, NULL) != PX_OK)
            goto out;
    }
    for (int k = 0; k < 4; k++)
        if (L->seconds[k] >= 0.0)
            fprintf(info, "parex-fem:   assembly %-10s %.3f ms\n",
                    fem_assembly_name((fem_assembly)k), 1e3 * L->seconds[k]);
    if (c->all)
        fprintf(info, "parex-fem:   modes differ by at most %.2e (relative)\n", L->max_diff);

    x = (double *)px_malloc(s, (size_t)p.n_nodes * sizeof(double));
    if (!x) {
        fprintf(stderr, "parex-fem: out of memory for the solution\n");
        goto out;
    }
    cg_options o;
    o.tol = c->tol;
    o.max_iters = 100000;
    o.jacobi = 1;
    o.progress_s = c->progress_s;
    o.progress = info;
    cg_result r;
    rc = cg_solve_rhs(&p.A, p.load, x, &o, &r);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: CG failed: %s\n", r.message);
        goto out;
    }
    L->cg_iterations = r.iterations;
    L->cg_relres = r.relres;
    rc = fem_l2_error(&p, x, &L->l2);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: the L2 error kernel failed: %s\n", px_strerror(rc));
        goto out;
    }
    fprintf(info, "parex-fem:   CG %s after %lld iterations (relres %.2e), L2 error %.4e\n",
            r.converged ? "converged" : "NOT converged", (long long)r.iterations, r.relres, L->l2);
    fflush(info);
    status = r.converged ? 0 : EXIT_NOT_CONVERGED;
out:
    free(ref_val);
    free(ref_load);
    if (x)
        (void)px_free(s, x);
    fem_problem_free(&p);
    return status;
}

static void print_json(const cli *c, px_space *s, const level *L, int64_t n_levels)
{
    printf("{\"space\": \"%s\", \"threads\": %d, \"seed\": %llu, \"assembly\": \"%s\", "
           "\"levels\": [",
           px_space_name(s), px_space_concurrency(s), (unsigned long long)c->seed,
           c->all ? "all" : fem_assembly_name(c->assembly));
    for (int64_t k = 0; k < n_levels; k++) {
        const level *l = L + k;
        printf("%s{\"n\": %lld, \"elements\": %lld, \"nodes\": %lld, \"nnz\": %lld, "
               "\"colors\": %d, \"assembly_seconds\": {",
               k ? ", " : "", (long long)l->n, (long long)l->elements, (long long)l->nodes,
               (long long)l->nnz, l->colors);
        int first = 1;
        for (int m = 0; m < 4; m++) {
            if (l->seconds[m] < 0.0)
                continue;
            printf("%s\"%s\": ", first ? "" : ", ", fem_assembly_name((fem_assembly)m));
            json_number(stdout, l->seconds[m]);
            first = 0;
        }
        printf("}, ");
        if (c->all) {
            printf("\"max_mode_difference\": ");
            json_number(stdout, l->max_diff);
            printf(", ");
        }
        printf("\"cg_iterations\": %lld, \"cg_relres\": ", (long long)l->cg_iterations);
        json_number(stdout, l->cg_relres);
        printf(", \"l2_error\": ");
        json_number(stdout, l->l2);
        printf(", \"l2_order\": ");
        json_number(stdout, k ? l->order : NAN);
        printf("}");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-fem: px_initialize failed: %s\n", px_strerror(rc));
        return rc == PX_EINVAL ? EXIT_USAGE : EXIT_FAILURE;
    }
    cli c;
    int help = 0;
    level L[MAX_LEVELS];
    int status = parse_cli(argc, argv, &c, &help);
    if (status != 0)
        goto out;
    if (help) {
        fputs(usage, stdout);
        goto out;
    }
    px_space *s = c.space ? px_space_by_name(c.space) : px_default_space();
    if (!s) {
        fprintf(stderr,
                "parex-fem: execution space '%s' is not available (unknown name, not built, "
                "or no device on this machine; see --px-print-configuration)\n",
                c.space ? c.space : "(default)");
        status = EXIT_FAILURE;
        goto out;
    }
    FILE *info = c.json ? stderr : stdout;
    fprintf(info,
            "parex-fem: -Laplace(u) = f on the unit square, P1, seed %llu, space %s (%d), "
            "assembly %s, %lld levels from n = %lld\n",
            (unsigned long long)c.seed, px_space_name(s), px_space_concurrency(s),
            c.all ? "all" : fem_assembly_name(c.assembly), (long long)c.levels, (long long)c.n);
    fflush(info);
    int out_of_range = 0;
    for (int64_t k = 0; k < c.levels; k++) {
        L[k].n = c.n << k;
        status = run_level(&c, s, info, &L[k]);
        if (status != 0)
            goto out;
        L[k].order = NAN;
        if (k > 0) {
            L[k].order = log(L[k - 1].l2 / L[k].l2) / log(2.0);
            fprintf(info, "parex-fem:   L2 order %.3f (n %lld -> %lld)\n", L[k].order,
                    (long long)L[k - 1].n, (long long)L[k].n);
            if (c.expect_order && !(L[k].order >= c.order_lo && L[k].order <= c.order_hi))
                out_of_range = 1;
        }
    }
    if (c.json) {
        fflush(stderr);
        print_json(&c, s, L, c.levels);
    }
    if (out_of_range) {
        fprintf(stderr, "parex-fem: an L2 order lies outside [%g, %g]\n", c.order_lo, c.order_hi);
        status = EXIT_ORDER;
    }
out:
    rc = px_finalize();
    if (rc != PX_OK && status == 0) {
        fprintf(stderr, "parex-fem: px_finalize failed: %s\n", px_strerror(rc));
        status = EXIT_FAILURE;
    }
    fflush(stdout);
    return status;
}
