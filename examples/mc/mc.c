/*
 * examples/mc/mc.c - the transport kernel of parex-mc and the rod model's closed form.
 *
 * One particle per index of a single-source PX_FOR; random numbers from px_rng_at(seed, i)
 * (Philox4x32-10, Random123); tallies by px_scatter_add. Kept in the common subset of C11 and
 * C++ so that nvcc can compile it for `--space cuda` (see mc.h).
 *
 * A particle's history, and the words of its stream each step uses:
 *   x = 0, dir = +1
 *   loop:  flight distance d = -ln(1 - u) / sigma_t, u = px_rng_uniform_f64 (2 words; 1 - u
 *          is in (0, 1], so d is finite and >= 0); x += dir * d
 *          x >= L: transmitted, stop;  x < 0: reflected, stop
 *          collision: u' = px_rng_uniform_f64 (2 words); u' >= c: absorbed at x (histogram bin
 *          floor(x bins / L)), stop; else scattered: dir = +1 if the next word's top bit is 0,
 *          else -1 (1 word)
 * and at the end the particle's collision count is added to MC_COLLISIONS.
 *
 * Every value added is a whole number (1 or the collision count), so the double tallies are
 * exact sums of integers (each below 2^53: mc.h bounds the particle count; a history with 2^53
 * collisions is not reachable in practice) and therefore independent of the order of the adds.
 * Only the flight distance uses a rounded function (log): the host spaces share the host libm,
 * so serial and threads give bitwise the same histories; CUDA's log may differ from glibc's in
 * the last bit, which changes a history only if a particle lands within an ulp of a boundary.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "mc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double mc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    double sigma_t, c, thickness;
    double bins_per_length; /* bins / L */
    int64_t bins;
    uint64_t seed;
    px_scatter *sc;
} mc_args;

PX_FOR(mc_transport, mc_args, i, a)
{
    px_rng r = px_rng_at(a->seed, (uint64_t)i);
    double x = 0.0;
    double dir = 1.0;
    double collisions = 0.0;
    for (;;) {
        x += dir * (-log(1.0 - px_rng_uniform_f64(&r)) / a->sigma_t);
        if (x >= a->thickness) {
            px_scatter_add(a->sc, MC_TRANSMITTED, 1.0);
            break;
        }
        if (x < 0.0) {
            px_scatter_add(a->sc, MC_REFLECTED, 1.0);
            break;
        }
        collisions += 1.0;
        if (px_rng_uniform_f64(&r) >= a->c) {
            int64_t k = (int64_t)(x * a->bins_per_length);
            if (k >= a->bins) /* x just below L can round up to bins */
                k = a->bins - 1;
            px_scatter_add(a->sc, MC_ABSORBED, 1.0);
            px_scatter_add(a->sc, MC_HIST + k, 1.0);
            break;
        }
        dir = (px_rng_u32(&r) >> 31) ? -1.0 : 1.0;
    }
    px_scatter_add(a->sc, MC_COLLISIONS, collisions);
}

int mc_run_init(mc_run *run, px_space *s, const mc_problem *p, px_scatter_mode m)
{
    memset(run, 0, sizeof *run);
    run->space = s;
    run->prob = *p;
    run->n = MC_HIST + p->bins;
    size_t bytes = (size_t)run->n * sizeof(double);
    run->tally = (double *)px_malloc(s, bytes);
    if (!run->tally)
        return PX_ENOMEM;
    double *zeros = (double *)calloc((size_t)run->n, sizeof(double));
    if (!zeros) {
        mc_run_free(run);
        return PX_ENOMEM;
    }
    int rc = px_deep_copy(s, run->tally, px_space_by_name("serial"), zeros, bytes);
    free(zeros);
    if (rc == PX_OK)
        rc = px_scatter_create(&run->sc, s, run->tally, run->n, m);
    if (rc != PX_OK)
        mc_run_free(run);
    return rc;
}

int mc_run_batch(mc_run *run, int64_t first, int64_t count)
{
    mc_args a;
    a.sigma_t = run->prob.sigma_t;
    a.c = run->prob.c;
    a.thickness = run->prob.thickness;
    a.bins_per_length = (double)run->prob.bins / run->prob.thickness;
    a.bins = run->prob.bins;
    a.seed = run->prob.seed;
    a.sc = run->sc;
    int rc = px_parallel_for(run->space, "mc_transport", px_range(first, first + count),
                             &mc_transport, &a, sizeof a);
    if (rc != PX_OK)
        return rc;
    return px_scatter_contribute(run->sc);
}

int mc_run_read(const mc_run *run, mc_result *out)
{
    memset(out, 0, sizeof *out);
    double *h = (double *)malloc((size_t)run->n * sizeof(double));
    out->hist = (int64_t *)malloc((size_t)run->prob.bins * sizeof(int64_t));
    if (!h || !out->hist) {
        free(h);
        mc_result_free(out);
        return PX_ENOMEM;
    }
    int rc = px_fence(run->space);
    if (rc == PX_OK)
        rc = px_deep_copy(px_space_by_name("serial"), h, run->space, run->tally,
                          (size_t)run->n * sizeof(double));
    if (rc != PX_OK) {
        free(h);
        mc_result_free(out);
        return rc;
    }
    out->transmitted = (int64_t)h[MC_TRANSMITTED];
    out->reflected = (int64_t)h[MC_REFLECTED];
    out->absorbed = (int64_t)h[MC_ABSORBED];
    out->collisions = (int64_t)h[MC_COLLISIONS];
    out->bins = run->prob.bins;
    for (int64_t k = 0; k < run->prob.bins; k++)
        out->hist[k] = (int64_t)h[MC_HIST + k];
    free(h);
    return PX_OK;
}

void mc_run_free(mc_run *run)
{
    if (run->sc)
        (void)px_scatter_destroy(run->sc);
    if (run->tally)
        (void)px_free(run->space, run->tally);
    run->sc = NULL;
    run->tally = NULL;
}

void mc_result_free(mc_result *out)
{
    free(out->hist);
    out->hist = NULL;
}

void mc_rod_analytic(const mc_problem *p, double *T, double *R)
{
    const double st = p->sigma_t, c = p->c, L = p->thickness;
    const double a = st * (1.0 - 0.5 * c), b = 0.5 * st * c;
    if (c == 0.0) { /* the pure absorber: the textbook form, exactly */
        *T = exp(-st * L);
        *R = 0.0;
        return;
    }
    const double kappa = st * sqrt(1.0 - c), kl = kappa * L;
    /* Divided through by C = cosh(kappa L), which overflows beyond kappa L = 710:
     * T = sech(kl) / (1 + a t), R = b t / (1 + a t), t = S / C = tanh(kl) / kappa
     * (t -> L as kappa -> 0; the series is exact to rounding below kl = 1e-8). */
    const double t = kl < 1e-8 ? L * (1.0 - kl * kl / 3.0) : tanh(kl) / kappa;
    const double den = 1.0 + a * t;
    *T = 1.0 / (cosh(kl) * den);
    *R = b * t / den;
}

double mc_absorber_bin_fraction(const mc_problem *p, int64_t k)
{
    const double w = p->thickness / (double)p->bins;
    return exp(-p->sigma_t * w * (double)k) - exp(-p->sigma_t * w * (double)(k + 1));
}
