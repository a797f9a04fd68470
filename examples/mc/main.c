/*
 * examples/mc/main.c - parex-mc: Monte Carlo particle transport through a 1-D slab on any
 * parex execution space, checked against the rod model's closed form (mc.h, README.md).
 *
 *   parex-mc                                         1e6 particles, c = 0.5, default space
 *   parex-mc --c 0 --space threads --json            pure absorber: T = exp(-sigma_t L)
 *
 * Exit status: 0 the analytic check passed; 1 a runtime error; 2 bad command line;
 * 3 the analytic check failed (an estimate more than 5 standard deviations off).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cli.h"
#include "mc.h"

#define EXIT_USAGE 2
#define PROG       "parex-mc"
#if EXIT_USAGE != EX_CLI_EXIT_USAGE
#error "EXIT_USAGE must be the shared usage status (examples/common/cli.h)"
#endif
#define EXIT_CHECK_FAIL 3
/* |z| above this fails the analytic check */
#define Z_LIMIT 5.0
/* a histogram bin is checked (c = 0) when it expects at least this many absorptions */
#define BIN_MIN_EXPECTED 25.0

static const char usage[] =
    "usage: parex-mc [--particles N] [--seed S] [--space serial|threads|cuda]\n"
    "                [--sigma-t X] [--c X] [--thickness X] [--bins B]\n"
    "                [--mode atomic|duplicated|auto] [--batch N] [--progress S] [--json]\n"
    "                [--px-* runtime flags, see --px-help]\n"
    "\n"
    "Analog Monte Carlo through a slab 0 <= x < L in rod geometry (directions +1 and -1,\n"
    "isotropic scattering: +1 or -1 with probability 1/2). Every particle enters at x = 0\n"
    "moving in +x. Tallies transmitted, reflected and absorbed particles and a histogram of\n"
    "absorption depth, and compares transmission T and reflection R with the rod model's\n"
    "closed form (c = 0: T = exp(-sigma_t L)); fails when either is more than 5 standard\n"
    "deviations off (and, for c = 0, when a histogram bin expecting >= 25 absorptions is).\n"
    "\n"
    "  --particles N   particles (histories), 1..2^53 (default 1000000)\n"
    "  --seed S        Philox key, 0..2^64-1 (default 20261124)\n"
    "  --space NAME    execution space (default: the runtime's default space)\n"
    "  --sigma-t X     total cross-section, > 0, 1/length (default 1)\n"
    "  --c X           scattering ratio sigma_s/sigma_t, 0..1 (default 0.5)\n"
    "  --thickness X   slab thickness L, > 0 (default 2); sigma_t L <= 1000\n"
    "  --bins B        absorption-depth histogram bins, 1..1000000 (default 20)\n"
    "  --mode M        scatter mode of the tallies: atomic, duplicated or auto (default:\n"
    "                  duplicated on host spaces, auto on cuda)\n"
    "  --batch N       particles per launch, >= 1 (default max(N/10, 100000)); the totals do\n"
    "                  not depend on it\n"
    "  --progress S    seconds between progress lines (default 1; 0: none)\n"
    "  --json          print one JSON object as the last line of output\n"
    "\n"
    "JSON fields: particles, seed, space, threads, mode, sigma_t, c, thickness, bins,\n"
    "transmitted, reflected, absorbed, collisions, transmission, stderr (of the transmission\n"
    "estimate), analytic, z_score, reflection, reflection_stderr, reflection_analytic,\n"
    "reflection_z_score, hist_max_z (c = 0, else null), histogram_checksum (FNV-1a 64 of the\n"
    "bin counts as little-endian int64), pass, seconds (transport), particles_per_s.\n"
    "Every field but space, threads, mode, seconds and particles_per_s is identical on every\n"
    "space, thread count and mode for the same problem and seed.\n"
    "\n"
    "Exit status: 0 check passed, 1 error, 2 bad command line, 3 check failed.\n";

typedef struct {
    mc_problem prob;
    int64_t particles;
    int64_t batch; /* 0: automatic */
    const char *space;
    int mode; /* -1: default */
    double progress_s;
    int json;
} cli;

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s == '-' || *s == '+' || *s == '\0')
        return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end != '\0' || errno == ERANGE)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

/* Returns 0 on success (or a help request: *help set), else an exit status. */
static int parse_cli(int argc, char **argv, cli *c, int *help)
{
    c->prob.sigma_t = 1.0;
    c->prob.c = 0.5;
    c->prob.thickness = 2.0;
    c->prob.bins = 20;
    c->prob.seed = 20261124u;
    c->particles = 1000000;
    c->batch = 0;
    c->space = NULL;
    c->mode = -1;
    c->progress_s = 1.0;
    c->json = 0;
    *help = 0;
    static const char *const valued[] = {"--particles", "--seed",      "--space", "--sigma-t",
                                         "--c",         "--thickness", "--bins",  "--mode",
                                         "--batch",     "--progress"};
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
            if (!ex_cli_parse_int(val, 1, MC_MAX_PARTICLES, &c->particles))
                return ex_cli_usage_error(PROG, "--particles '%s' is not an integer in 1..2^53",
                                          val);
            break;
        case 1:
            if (!parse_u64(val, &c->prob.seed))
                return ex_cli_usage_error(PROG, "--seed '%s' is not an integer in 0..2^64-1", val);
            break;
        case 2:
            if (*val == '\0')
                return ex_cli_usage_error(PROG, "--space needs a name");
            c->space = val;
            break;
        case 3:
            if (!ex_cli_parse_double(val, &c->prob.sigma_t) || !(c->prob.sigma_t > 0.0))
                return ex_cli_usage_error(PROG, "--sigma-t '%s' is not a number > 0", val);
            break;
        case 4:
            if (!ex_cli_parse_double(val, &c->prob.c) || !(c->prob.c >= 0.0 && c->prob.c <= 1.0))
                return ex_cli_usage_error(PROG, "--c '%s' is not a number in [0, 1]", val);
            break;
        case 5:
            if (!ex_cli_parse_double(val, &c->prob.thickness) || !(c->prob.thickness > 0.0))
                return ex_cli_usage_error(PROG, "--thickness '%s' is not a number > 0", val);
            break;
        case 6:
            if (!ex_cli_parse_int(val, 1, MC_MAX_BINS, &c->prob.bins))
                return ex_cli_usage_error(PROG, "--bins '%s' is not an integer in 1..%d", val,
                                          MC_MAX_BINS);
            break;
        case 7: {
            static const char *const names[] = {"atomic", "duplicated", "auto"};
            static const px_scatter_mode modes[] = {PX_SCATTER_ATOMIC, PX_SCATTER_DUPLICATED,
                                                    PX_SCATTER_AUTO};
            const int k = ex_cli_choice(val, names, 3);
            if (k < 0)
                return ex_cli_usage_error(PROG, "--mode '%s' is not atomic, duplicated or auto",
                                          val);
            c->mode = modes[k];
            break;
        }
        case 8:
            if (!ex_cli_parse_int(val, 1, INT64_MAX, &c->batch))
                return ex_cli_usage_error(PROG, "--batch '%s' is not a positive integer", val);
            break;
        default:
            if (!ex_cli_parse_double(val, &c->progress_s) || c->progress_s < 0.0)
                return ex_cli_usage_error(PROG, "--progress '%s' is not a number of seconds >= 0",
                                          val);
            break;
        }
    }
    double tau = c->prob.sigma_t * c->prob.thickness;
    if (!(tau <= MC_MAX_OPTICAL_THICKNESS))
        return ex_cli_usage_error(PROG, "optical thickness sigma_t * L = %g exceeds %g", tau,
                                  MC_MAX_OPTICAL_THICKNESS);
    return 0;
}

static const char *mode_name(int m)
{
    switch (m) {
    case PX_SCATTER_ATOMIC:
        return "atomic";
    case PX_SCATTER_DUPLICATED:
        return "duplicated";
    case PX_SCATTER_AUTO:
        return "auto";
    default:
        return "?";
    }
}

/* FNV-1a 64 over the counts as little-endian 8-byte integers. */
static uint64_t hist_checksum(const int64_t *h, int64_t bins)
{
    uint64_t x = 14695981039346656037u;
    for (int64_t k = 0; k < bins; k++) {
        uint64_t v = (uint64_t)h[k];
        for (int b = 0; b < 8; b++) {
            x ^= (v >> (8 * b)) & 0xffu;
            x *= 1099511628211u;
        }
    }
    return x;
}

/* z of an observed count against a binomial(n, p) expectation; 0 when both agree exactly
 * with zero variance, +-HUGE_VAL when they disagree with zero variance. */
static double binomial_z(int64_t count, int64_t n, double p)
{
    double mean = (double)n * p, sd = sqrt((double)n * p * (1.0 - p));
    double d = (double)count - mean;
    if (sd > 0.0)
        return d / sd;
    return fabs(d) < 0.5 ? 0.0 : (d > 0 ? HUGE_VAL : -HUGE_VAL);
}

static void json_number(double v)
{
    if (isfinite(v))
        printf("%.17g", v);
    else
        printf("null");
}

int main(int argc, char **argv)
{
    int rc = px_initialize(&argc, &argv);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-mc: px_initialize: %s\n", px_strerror(rc));
        return 1;
    }
    cli c;
    int help = 0;
    int st = parse_cli(argc, argv, &c, &help);
    if (st != 0 || help) {
        if (help)
            fputs(usage, stdout);
        px_finalize();
        return st;
    }
    px_space *s = c.space ? px_space_by_name(c.space) : px_default_space();
    if (!s) {
        fprintf(stderr, "parex-mc: no space '%s' (built and available: see --px-help)\n",
                c.space ? c.space : "default");
        px_finalize();
        return EXIT_USAGE;
    }
    int threads = px_space_concurrency(s);
    px_scatter_mode mode = c.mode >= 0                   ? (px_scatter_mode)c.mode
                           : px_space_host_accessible(s) ? PX_SCATTER_DUPLICATED
                                                         : PX_SCATTER_AUTO;
    mc_run run;
    rc = mc_run_init(&run, s, &c.prob, mode);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-mc: tallies on %s in mode %s: %s\n", px_space_name(s),
                mode_name((int)mode), px_strerror(rc));
        px_finalize();
        return 1;
    }
    int resolved = px_scatter_get_mode(run.sc);
    double T, R;
    mc_rod_analytic(&c.prob, &T, &R);
    printf("parex-mc: %" PRId64 " particles, slab L = %g, sigma_t = %g, c = %g (rod model), "
           "seed %" PRIu64 "\n",
           c.particles, c.prob.thickness, c.prob.sigma_t, c.prob.c, c.prob.seed);
    printf("parex-mc: space %s (concurrency %d), scatter mode %s, analytic T = %.6f, "
           "R = %.6f\n",
           px_space_name(s), threads, mode_name(resolved), T, R);

    int64_t batch = c.batch;
    if (batch == 0)
        batch = c.particles / 10 > 100000 ? c.particles / 10 : 100000;
    double t0 = mc_now(), last_print = t0;
    for (int64_t first = 0; first < c.particles; first += batch) {
        int64_t count = c.particles - first < batch ? c.particles - first : batch;
        rc = mc_run_batch(&run, first, count);
        if (rc != PX_OK) {
            fprintf(stderr, "parex-mc: transport of particles %" PRId64 "..%" PRId64 ": %s\n",
                    first, first + count - 1, px_strerror(rc));
            mc_run_free(&run);
            px_finalize();
            return 1;
        }
        double now = mc_now();
        if (c.progress_s > 0.0 && now - last_print >= c.progress_s && first + count < c.particles) {
            (void)px_fence(s);
            printf("progress: %" PRId64 "/%" PRId64 " particles (%.0f%%), %.2f s, %.3g "
                   "particles/s\n",
                   first + count, c.particles,
                   100.0 * (double)(first + count) / (double)c.particles, now - t0,
                   (double)(first + count) / (now - t0));
            fflush(stdout);
            last_print = now;
        }
    }
    rc = px_fence(s);
    double seconds = mc_now() - t0;
    mc_result res;
    if (rc == PX_OK)
        rc = mc_run_read(&run, &res);
    mc_run_free(&run);
    if (rc != PX_OK) {
        fprintf(stderr, "parex-mc: reading the tallies: %s\n", px_strerror(rc));
        px_finalize();
        return 1;
    }

    const int64_t n = c.particles;
    const double That = (double)res.transmitted / (double)n;
    const double Rhat = (double)res.reflected / (double)n;
    const double t_se = sqrt(That * (1.0 - That) / (double)n);
    const double r_se = sqrt(Rhat * (1.0 - Rhat) / (double)n);
    const double zt = binomial_z(res.transmitted, n, T);
    const double zr = binomial_z(res.reflected, n, R);
    double hist_max_z = NAN;
    if (c.prob.c == 0.0) {
        hist_max_z = 0.0;
        for (int64_t k = 0; k < res.bins; k++) {
            double p = mc_absorber_bin_fraction(&c.prob, k);
            if ((double)n * p < BIN_MIN_EXPECTED)
                continue;
            double z = fabs(binomial_z(res.hist[k], n, p));
            if (z > hist_max_z)
                hist_max_z = z;
        }
    }
    const int consistent = res.transmitted + res.reflected + res.absorbed == n;
    int64_t hist_total = 0;
    for (int64_t k = 0; k < res.bins; k++)
        hist_total += res.hist[k];
    const int pass = consistent && hist_total == res.absorbed && fabs(zt) <= Z_LIMIT &&
                     fabs(zr) <= Z_LIMIT && !(hist_max_z > Z_LIMIT);
    const uint64_t checksum = hist_checksum(res.hist, res.bins);

    printf("transmitted %" PRId64 ", reflected %" PRId64 ", absorbed %" PRId64
           ", collisions %" PRId64 "\n",
           res.transmitted, res.reflected, res.absorbed, res.collisions);
    printf("transmission %.6f +- %.6f (analytic %.6f, z = %+.2f)\n", That, t_se, T, zt);
    printf("reflection   %.6f +- %.6f (analytic %.6f, z = %+.2f)\n", Rhat, r_se, R, zr);
    printf("absorption depth histogram (%" PRId64 " bins over [0, %g), checksum %016" PRIx64 "):\n",
           res.bins, c.prob.thickness, checksum);
    int64_t show = res.bins <= 20 ? res.bins : 20;
    for (int64_t k = 0; k < show; k++)
        printf("  [%8.4f, %8.4f) %12" PRId64 "\n", c.prob.thickness * (double)k / (double)res.bins,
               c.prob.thickness * (double)(k + 1) / (double)res.bins, res.hist[k]);
    if (show < res.bins)
        printf("  ... %" PRId64 " more bins\n", res.bins - show);
    if (c.prob.c == 0.0)
        printf("histogram vs exp(-sigma_t x) (bins expecting >= %g): max |z| = %.2f\n",
               BIN_MIN_EXPECTED, hist_max_z);
    if (!consistent || hist_total != res.absorbed)
        printf("INCONSISTENT tallies: T + R + A = %" PRId64 " of %" PRId64
               ", histogram total %" PRId64 "\n",
               res.transmitted + res.reflected + res.absorbed, n, hist_total);
    printf("analytic check (|z| <= %g): %s; %.3f s, %.4g particles/s\n", Z_LIMIT,
           pass ? "PASS" : "FAIL", seconds, (double)n / seconds);

    if (c.json) {
        printf("{\"particles\": %" PRId64 ", \"seed\": %" PRIu64 ", \"space\": \"%s\", "
               "\"threads\": %d, \"mode\": \"%s\", \"sigma_t\": ",
               n, c.prob.seed, px_space_name(s), threads, mode_name(resolved));
        json_number(c.prob.sigma_t);
        printf(", \"c\": ");
        json_number(c.prob.c);
        printf(", \"thickness\": ");
        json_number(c.prob.thickness);
        printf(", \"bins\": %" PRId64 ", \"transmitted\": %" PRId64 ", \"reflected\": %" PRId64
               ", \"absorbed\": %" PRId64 ", \"collisions\": %" PRId64 ", \"transmission\": ",
               res.bins, res.transmitted, res.reflected, res.absorbed, res.collisions);
        json_number(That);
        printf(", \"stderr\": ");
        json_number(t_se);
        printf(", \"analytic\": ");
        json_number(T);
        printf(", \"z_score\": ");
        json_number(zt);
        printf(", \"reflection\": ");
        json_number(Rhat);
        printf(", \"reflection_stderr\": ");
        json_number(r_se);
        printf(", \"reflection_analytic\": ");
        json_number(R);
        printf(", \"reflection_z_score\": ");
        json_number(zr);
        printf(", \"hist_max_z\": ");
        json_number(hist_max_z);
        printf(", \"histogram_checksum\": \"%016" PRIx64 "\", \"pass\": %s, \"seconds\": ",
               checksum, pass ? "true" : "false");
        json_number(seconds);
        printf(", \"particles_per_s\": ");
        json_number((double)n / seconds);
        printf("}\n");
    }
    mc_result_free(&res);
    rc = px_finalize();
    if (rc != PX_OK) {
        fprintf(stderr, "parex-mc: px_finalize: %s\n", px_strerror(rc));
        return 1;
    }
    return pass ? 0 : EXIT_CHECK_FAIL;
}
