/*
 * examples/stencil/stencil.c - parex-stencil: the 3-D heat equation with a 7-point stencil on
 * MDRange policies and views, one source for every execution space.
 *
 *   parex-stencil                                 128^3 grid, 100 steps, default space
 *   parex-stencil --n 256 --steps 50 --space threads --tile 0x4x256 --json
 *
 * u_t = u_xx + u_yy + u_zz on the unit cube, u = 0 on the boundary, with the separable initial
 * condition u(x, y, z, 0) = sin(pi x) sin(pi y) sin(pi z). The grid has n^3 interior points
 * (h = 1 / (n + 1)) inside a zero boundary layer, stored in two (n + 2)^3 views (LayoutRight)
 * that are swapped by pointer after each explicit Euler step
 *
 *     v = u + dt / h^2 * (u[i-1] + u[i+1] + u[j-1] + u[j+1] + u[k-1] + u[k+1] - 6 u),
 *
 * a PX_FOR_3D kernel launched on an MDRange policy over the interior box [1, n + 1)^3.
 *
 * The check. The initial field f is an eigenvector of the discrete Laplacian with eigenvalue
 * -lambda_h, lambda_h = 3 (4 / h^2) sin^2(pi h / 2), so after S steps the discrete solution is
 * exactly (1 - dt lambda_h)^S f: the difference from it is rounding only, and the program fails
 * (exit status 3) when its maximum exceeds the tolerance. The error against the continuous
 * solution exp(-3 pi^2 t) f, which shrinks as O(h^2), is reported beside it. Both maxima and
 * the discrete L2 norm are PX_REDUCE_3D kernels (px_max_f64, px_sum_f64).
 *
 * When the Cuda space is built this file is compiled by nvcc (it keeps to the common subset of
 * C and C++), so every kernel also has its device half and --space cuda runs on the GPU.
 *
 * Exit status: 0 check passed; 1 runtime error; 2 bad command line; 3 check failed.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/cli.h"
#include "parex.h"

#define EXIT_USAGE 2
#define PROG       "parex-stencil"
#if EXIT_USAGE != EX_CLI_EXIT_USAGE
#error "EXIT_USAGE must be the shared usage status (examples/common/cli.h)"
#endif
#define EXIT_CHECK_FAILED 3

/* Bytes one interior point moves per step in the GB/s figure (see the usage text). */
#define BYTES_PER_POINT 16.0

static const char usage[] =
    "usage: parex-stencil [--n N] [--steps S] [--space serial|threads|cuda] [--tile AxBxC]\n"
    "                     [--dt X] [--tol X] [--progress S] [--json]\n"
    "                     [--px-* runtime flags, see --px-help]\n"
    "\n"
    "Solves the heat equation u_t = u_xx + u_yy + u_zz on the unit cube (u = 0 on the\n"
    "boundary, u(x,y,z,0) = sin(pi x) sin(pi y) sin(pi z)) by explicit Euler steps with the\n"
    "7-point stencil on an N^3 interior grid, h = 1/(N+1), and checks the result against the\n"
    "exact discrete solution (1 - dt lambda_h)^S u0, lambda_h = 12/h^2 sin^2(pi h/2).\n"
    "\n"
    "  --n N          interior points per dimension, 2..4096 (default 128)\n"
    "  --steps S      time steps, >= 1 (default 100)\n"
    "  --space NAME   execution space (default: the runtime's default space)\n"
    "  --tile AxBxC   MDRange tile extents (i x j x k, k fastest); 0 in a dimension, or\n"
    "                 a single 0, lets the space choose (default 0)\n"
    "  --dt X         time step, 0 < X <= h^2/6 (default 0.9 h^2/6)\n"
    "  --tol X        largest accepted max|u - exact discrete| relative to the exact\n"
    "                 amplitude (default 64 eps (S + 1), eps = 2.2e-16)\n"
    "  --progress S   seconds between progress lines (default 2; 0: none)\n"
    "  --json         print one JSON object as the last line of stdout (human-readable\n"
    "                 lines then go to stderr)\n"
    "\n"
    "JSON fields: n, steps, space, threads, tile, dt, t, seconds (step loop only),\n"
    "points_per_s, gbs, bytes_per_point, amplitude, err_discrete, rel_err_discrete, tol,\n"
    "err_continuous, rel_err_continuous, l2_norm, l2_norm_exact, passed.\n"
    "gbs counts 16 bytes per interior point per step: u read once and v written once\n"
    "(8-byte doubles; neighbour reads are taken to hit cache, writes allocate nothing,\n"
    "as STREAM counts): gbs = 16 N^3 S / seconds / 1e9.\n"
    "\n"
    "Exit status: 0 check passed, 1 runtime error, 2 bad command line, 3 check failed.\n";

/* ---------------------------------------------------------------------------------------------
 * Kernels (single source: host tiled loops and CUDA device halves from the same bodies)
 * ------------------------------------------------------------------------------------------- */

/* The 1-D factor of the initial field: s[i] = sin(pi i h), i = 0 .. n + 1. */
typedef struct {
    px_view s;
    double h;
} sine_args;

PX_FOR(stencil_sine, sine_args, i, a)
{
    PX_VIEW_AT1(a->s, double, i) = sin(M_PI * (double)i * a->h);
}

/* u = s_i s_j s_k on the interior and v = 0 there: both views are first touched by the
 * ranks (and with the tiles) that later update them. */
typedef struct {
    px_view u, v, s;
} init_args;

PX_FOR_3D(stencil_init, init_args, i, j, k, a)
{
    PX_VIEW_AT3(a->u, double, i, j, k) =
        PX_VIEW_AT1(a->s, double, i) * PX_VIEW_AT1(a->s, double, j) * PX_VIEW_AT1(a->s, double, k);
    PX_VIEW_AT3(a->v, double, i, j, k) = 0.0;
}

/* One explicit Euler step of the 7-point Laplacian: v = u + r (sum of 6 neighbours - 6 u). */
typedef struct {
    px_view u, v;
    double r; /* dt / h^2 */
} step_args;

PX_FOR_3D(stencil_step, step_args, i, j, k, a)
{
    const double c = PX_VIEW_AT3(a->u, double, i, j, k);
    PX_VIEW_AT3(a->v, double, i, j, k) =
        c +
        a->r * (PX_VIEW_AT3(a->u, double, i - 1, j, k) + PX_VIEW_AT3(a->u, double, i + 1, j, k) +
                PX_VIEW_AT3(a->u, double, i, j - 1, k) + PX_VIEW_AT3(a->u, double, i, j + 1, k) +
                PX_VIEW_AT3(a->u, double, i, j, k - 1) + PX_VIEW_AT3(a->u, double, i, j, k + 1) -
                6.0 * c);
}

/* max |u - amp * s_i s_j s_k| over the interior (the field's error against amp times u0). */
typedef struct {
    px_view u, s;
    double amp;
} error_args;

PX_REDUCE_3D(stencil_error, error_args, double, i, j, k, a, acc)
{
    const double f =
        PX_VIEW_AT1(a->s, double, i) * PX_VIEW_AT1(a->s, double, j) * PX_VIEW_AT1(a->s, double, k);
    const double d = fabs(PX_VIEW_AT3(a->u, double, i, j, k) - a->amp * f);
    if (d > *acc)
        *acc = d;
}

/* sum of u^2 over the interior. */
typedef struct {
    px_view u;
} sumsq_args;

PX_REDUCE_3D(stencil_sumsq, sumsq_args, double, i, j, k, a, acc)
{
    const double x = PX_VIEW_AT3(a->u, double, i, j, k);
    *acc += x * x;
}

/* ---------------------------------------------------------------------------------------------
 * Command line
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    int64_t n, steps;
    const char *space;
    int64_t tile[3];
    double dt;  /* 0: 0.9 h^2 / 6 */
    double tol; /* 0: 64 eps (steps + 1) */
    double progress_s;
    int json;
} cli;

/* "0" (all automatic) or "AxBxC" with each part an integer in 0..65536. */
static int parse_tile(const char *s, int64_t tile[3])
{
    if (strcmp(s, "0") == 0) {
        tile[0] = tile[1] = tile[2] = 0;
        return 1;
    }
    const char *p = s;
    for (int d = 0; d < 3; d++) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9')
            return 0;
        long long v = strtoll(p, &end, 10);
        if (errno == ERANGE || v < 0 || v > 65536)
            return 0;
        tile[d] = (int64_t)v;
        if (d < 2) {
            if (*end != 'x')
                return 0;
            p = end + 1;
        } else if (*end != '\0') {
            return 0;
        }
    }
    return 1;
}

/* Returns 0 on success (or a help request: *help set), else an exit status. */
static int parse_cli(int argc, char **argv, cli *c, int *help)
{
    c->n = 128;
    c->steps = 100;
    c->space = NULL;
    c->tile[0] = c->tile[1] = c->tile[2] = 0;
    c->dt = 0.0;
    c->tol = 0.0;
    c->progress_s = 2.0;
    c->json = 0;
    *help = 0;
    static const char *const valued[] = {"--n",  "--steps", "--space",   "--tile",
                                         "--dt", "--tol",   "--progress"};
    const size_t nvalued = sizeof valued / sizeof valued[0];
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
        const int which = ex_cli_valued_option(PROG, argc, argv, &i, valued, nvalued, &val);
        if (which < 0)
            return EX_CLI_EXIT_USAGE;
        switch (which) {
        case 0:
            if (!ex_cli_parse_int(val, 2, 4096, &c->n))
                return ex_cli_usage_error(PROG, "--n '%s' is not an integer in 2..4096", val);
            break;
        case 1:
            if (!ex_cli_parse_int(val, 1, INT64_MAX, &c->steps))
                return ex_cli_usage_error(PROG, "--steps '%s' is not a positive integer", val);
            break;
        case 2:
            c->space = val;
            break;
        case 3:
            if (!parse_tile(val, c->tile))
                return ex_cli_usage_error(
                    PROG, "--tile '%s' is not 0 or AxBxC with integers in 0..65536", val);
            break;
        case 4:
            if (!ex_cli_parse_double(val, &c->dt) || !(c->dt > 0.0))
                return ex_cli_usage_error(PROG, "--dt '%s' is not a positive number", val);
            break;
        case 5:
            if (!ex_cli_parse_double(val, &c->tol) || !(c->tol > 0.0))
                return ex_cli_usage_error(PROG, "--tol '%s' is not a positive number", val);
            break;
        default:
            if (!ex_cli_parse_double(val, &c->progress_s) || c->progress_s < 0.0)
                return ex_cli_usage_error(PROG, "--progress '%s' is not a number of seconds >= 0",
                                          val);
            break;
        }
    }
    /* Stability of explicit Euler for the 7-point Laplacian: dt lambda_max <= 2 with
     * lambda_max < 12 / h^2, so dt <= h^2 / 6 always suffices. */
    const double h = 1.0 / (double)(c->n + 1);
    if (c->dt > h * h / 6.0)
        return ex_cli_usage_error(PROG,
                                  "--dt %g exceeds the stability limit h^2/6 = %g for --n %lld",
                                  c->dt, h * h / 6.0, (long long)c->n);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Output helpers
 * ------------------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
        fprintf(f, "\"%s\": %.9g%s", key, v, last ? "" : ", ");
    else
        fprintf(f, "\"%s\": null%s", key, last ? "" : ", ");
}

/* Report a failed parex call; returns EXIT_FAILURE. */
static int failed(const char *what, int rc)
{
    fprintf(stderr, "parex-stencil: %s failed: %s\n", what, px_strerror(rc));
    return EXIT_FAILURE;
}

/* ---------------------------------------------------------------------------------------------
 * The solver
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    double seconds;        /* step loop, fenced */
    double err_discrete;   /* max |u - (1 - dt lambda_h)^S u0| */
    double err_continuous; /* max |u - exp(-3 pi^2 t) u0| */
    double l2_norm;        /* sqrt(h^3 sum u^2) */
} run_result;

/* Initializes, runs c->steps steps and checks, on the allocated views bufs[2] (zeroed) and
 * sine (n + 2 doubles). Returns an exit status. */
static int solve(px_space *s, const cli *c, px_mdrange_policy p, double dt, double amp_d,
                 double amp_c, FILE *info, px_view bufs[2], const px_view *sine, run_result *r)
{
    const int64_t n = c->n, m = n + 2;
    const double h = 1.0 / (double)(n + 1);
    int rc;
    px_view *u = &bufs[0], *v = &bufs[1];

    sine_args sa;
    sa.s = *sine;
    sa.h = h;
    if ((rc = px_parallel_for(s, "stencil_sine", px_range(0, m), &stencil_sine, &sa, sizeof sa)) !=
        PX_OK)
        return failed("px_parallel_for(stencil_sine)", rc);
    init_args ia;
    ia.u = *u;
    ia.v = *v;
    ia.s = *sine;
    if ((rc = px_parallel_for_md(s, "stencil_init", p, &stencil_init, &ia, sizeof ia)) != PX_OK)
        return failed("px_parallel_for_md(stencil_init)", rc);
    if ((rc = px_fence(s)) != PX_OK)
        return failed("px_fence", rc);

    const double points = (double)n * (double)n * (double)n;
    const double t0 = now_s();
    double next_progress = t0 + c->progress_s;
    step_args st;
    st.r = dt / (h * h);
    for (int64_t step = 0; step < c->steps; step++) {
        st.u = *u;
        st.v = *v;
        if ((rc = px_parallel_for_md(s, "stencil_step", p, &stencil_step, &st, sizeof st)) != PX_OK)
            return failed("px_parallel_for_md(stencil_step)", rc);
        px_view *tmp = u; /* double buffering: the new field becomes the current one */
        u = v;
        v = tmp;
        if (c->progress_s > 0.0 && now_s() >= next_progress) {
            if ((rc = px_fence(s)) != PX_OK)
                return failed("px_fence", rc);
            const double now = now_s();
            fprintf(info, "  step %8lld / %lld  elapsed %.1f s  %.3g points/s\n",
                    (long long)(step + 1), (long long)c->steps, now - t0,
                    points * (double)(step + 1) / (now - t0));
            fflush(info);
            next_progress = now + c->progress_s;
        }
    }
    if ((rc = px_fence(s)) != PX_OK)
        return failed("px_fence", rc);
    r->seconds = now_s() - t0;

    error_args ea;
    ea.u = *u;
    ea.s = *sine;
    ea.amp = amp_d;
    r->err_discrete = 0.0;
    if ((rc = px_parallel_reduce_md(s, "stencil_error", p, &stencil_error, &ea, sizeof ea,
                                    &px_max_f64, &r->err_discrete)) != PX_OK)
        return failed("px_parallel_reduce_md(stencil_error)", rc);
    ea.amp = amp_c;
    r->err_continuous = 0.0;
    if ((rc = px_parallel_reduce_md(s, "stencil_error", p, &stencil_error, &ea, sizeof ea,
                                    &px_max_f64, &r->err_continuous)) != PX_OK)
        return failed("px_parallel_reduce_md(stencil_error)", rc);
    sumsq_args qa;
    qa.u = *u;
    double sumsq = 0.0;
    if ((rc = px_parallel_reduce_md(s, "stencil_sumsq", p, &stencil_sumsq, &qa, sizeof qa,
                                    &px_sum_f64, &sumsq)) != PX_OK)
        return failed("px_parallel_reduce_md(stencil_sumsq)", rc);
    r->l2_norm = sqrt(h * h * h * sumsq);
    return 0;
}

/* Allocates the views on s (zeroed in parallel there; the boundary layer stays 0 for the
 * whole run), solves, frees. Returns an exit status. */
static int run(px_space *s, const cli *c, px_mdrange_policy p, double dt, double amp_d,
               double amp_c, FILE *info, run_result *r)
{
    const int64_t m = c->n + 2;
    const int64_t ext3[3] = {m, m, m}, ext1[1] = {m};
    px_view bufs[2], sine;
    int status = 0, rc;
    memset(bufs, 0, sizeof bufs);
    memset(&sine, 0, sizeof sine);
    if ((rc = px_view_alloc(&bufs[0], s, "stencil_u", sizeof(double), PX_LAYOUT_RIGHT, 3, ext3)) !=
            PX_OK ||
        (rc = px_view_alloc(&bufs[1], s, "stencil_v", sizeof(double), PX_LAYOUT_RIGHT, 3, ext3)) !=
            PX_OK ||
        (rc = px_view_alloc(&sine, s, "stencil_sine", sizeof(double), PX_LAYOUT_RIGHT, 1, ext1)) !=
            PX_OK)
        status = failed("px_view_alloc (2 x (n+2)^3 + (n+2) doubles)", rc);
    else
        status = solve(s, c, p, dt, amp_d, amp_c, info, bufs, &sine, r);
    px_view_free(&sine);
    px_view_free(&bufs[1]);
    px_view_free(&bufs[0]);
    return status;
}

int main(int argc, char **argv)
{
    /* The runtime takes its --px-* flags first; everything left is ours. */
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-stencil: px_initialize failed: %s\n", px_strerror(rc));
        return rc == PX_EINVAL ? EXIT_USAGE : EXIT_FAILURE;
    }
    cli c;
    int help = 0;
    int status = parse_cli(argc, argv, &c, &help);
    if (status != 0)
        goto out;
    if (help) {
        fputs(usage, stdout);
        goto out;
    }
    {
        px_space *s = c.space ? px_space_by_name(c.space) : px_default_space();
        if (!s) {
            fprintf(stderr,
                    "parex-stencil: execution space '%s' is not available (unknown name, not "
                    "built, or no device on this machine; see --px-print-configuration)\n",
                    c.space ? c.space : "(default)");
            status = EXIT_FAILURE;
            goto out;
        }
        const int64_t n = c.n;
        const double h = 1.0 / (double)(n + 1);
        const double dt = c.dt > 0.0 ? c.dt : 0.9 * h * h / 6.0;
        const double t_end = dt * (double)c.steps;
        const double sh = sin(M_PI * h / 2.0);
        const double lambda_h = 3.0 * (4.0 / (h * h)) * sh * sh;
        const double amp_d = pow(1.0 - dt * lambda_h, (double)c.steps);
        const double amp_c = exp(-3.0 * M_PI * M_PI * t_end);
        const double tol = c.tol > 0.0 ? c.tol : 64.0 * DBL_EPSILON * (double)(c.steps + 1);
        /* sum_{i=1..n} sin^2(pi i h) = (n + 1) / 2, so h^3 sum u0^2 = 1/8 exactly. */
        const double l2_exact = fabs(amp_d) / sqrt(8.0);

        const int64_t lo[3] = {1, 1, 1}, hi[3] = {n + 1, n + 1, n + 1};
        px_mdrange_policy p = px_mdrange_tiled(3, lo, hi, c.tile);
        const int threads = px_space_concurrency(s);
        char tile[64];
        snprintf(tile, sizeof tile, "%lldx%lldx%lld", (long long)c.tile[0], (long long)c.tile[1],
                 (long long)c.tile[2]);

        FILE *info = c.json ? stderr : stdout;
        fprintf(info,
                "parex-stencil: %lld^3 interior points, %lld steps, dt %.4g (t = %.4g), space %s "
                "(%d), tile %s%s\n",
                (long long)n, (long long)c.steps, dt, t_end, px_space_name(s), threads, tile,
                (c.tile[0] && c.tile[1] && c.tile[2]) ? "" : " (0: automatic)");
        fflush(info);

        run_result r;
        memset(&r, 0, sizeof r);
        status = run(s, &c, p, dt, amp_d, amp_c, info, &r);
        if (status != 0)
            goto out;

        const double updates = (double)n * (double)n * (double)n * (double)c.steps;
        const double pps = r.seconds > 0 ? updates / r.seconds : 0.0;
        const double gbs = r.seconds > 0 ? BYTES_PER_POINT * updates / r.seconds * 1e-9 : 0.0;
        const double rel_d = amp_d != 0.0 ? r.err_discrete / fabs(amp_d) : r.err_discrete;
        const double rel_c = amp_c != 0.0 ? r.err_continuous / amp_c : r.err_continuous;
        const int passed = rel_d <= tol; /* false for NaN too */

        fprintf(info,
                "parex-stencil: %.3f s, %.3g points/s, %.2f GB/s (16 bytes per point and step)\n"
                "parex-stencil: amplitude %.12f; max error vs exact discrete %.3e (relative "
                "%.3e, tolerance %.1e): %s\n"
                "parex-stencil: max error vs continuous exp(-3 pi^2 t) %.3e (relative %.3e, "
                "O(h^2)); L2 norm %.12f (exact discrete %.12f)\n",
                r.seconds, pps, gbs, amp_d, r.err_discrete, rel_d, tol,
                passed ? "PASSED" : "FAILED", r.err_continuous, rel_c, r.l2_norm, l2_exact);
        if (c.json) {
            fflush(stderr);
            printf("{\"n\": %lld, \"steps\": %lld, \"space\": ", (long long)n, (long long)c.steps);
            json_string(stdout, px_space_name(s));
            printf(", \"threads\": %d, \"tile\": ", threads);
            json_string(stdout, tile);
            printf(", ");
            json_number(stdout, "dt", dt, 0);
            json_number(stdout, "t", t_end, 0);
            json_number(stdout, "seconds", r.seconds, 0);
            json_number(stdout, "points_per_s", pps, 0);
            json_number(stdout, "gbs", gbs, 0);
            json_number(stdout, "bytes_per_point", BYTES_PER_POINT, 0);
            json_number(stdout, "amplitude", amp_d, 0);
            json_number(stdout, "err_discrete", r.err_discrete, 0);
            json_number(stdout, "rel_err_discrete", rel_d, 0);
            json_number(stdout, "tol", tol, 0);
            json_number(stdout, "err_continuous", r.err_continuous, 0);
            json_number(stdout, "rel_err_continuous", rel_c, 0);
            json_number(stdout, "l2_norm", r.l2_norm, 0);
            json_number(stdout, "l2_norm_exact", l2_exact, 0);
            printf("\"passed\": %s}\n", passed ? "true" : "false");
        }
        if (!passed)
            status = EXIT_CHECK_FAILED;
        /* Built with -DPX_DEBUG_CHECK, every PX_VIEW_AT* is bounds-checked on host. */
        if (px_view_bounds_errors() > 0) {
            fprintf(stderr, "parex-stencil: %lld out-of-bounds view accesses (see the log)\n",
                    (long long)px_view_bounds_errors());
            status = EXIT_FAILURE;
        }
    }
out:
    rc = px_finalize();
    if (rc != PX_OK && status == 0) {
        fprintf(stderr, "parex-stencil: px_finalize failed: %s\n", px_strerror(rc));
        status = EXIT_FAILURE;
    }
    fflush(stdout);
    return status;
}
