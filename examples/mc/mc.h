/*
 * examples/mc/mc.h - parex-mc: analog Monte Carlo transport through a 1-D slab (rod model).
 *
 * Physics (see README.md): a slab 0 <= x < L of a homogeneous medium with total cross-section
 * sigma_t (1/length) and scattering ratio c = sigma_s / sigma_t in [0, 1]. Rod geometry:
 * particles move along x only, with direction +1 or -1; a scattering sends the particle on in
 * direction +1 or -1 with probability 1/2 each (isotropic in one dimension). Every particle
 * enters at x = 0 moving in +x (normal incidence) and is followed until it leaves (x >= L:
 * transmitted; x < 0: reflected) or is absorbed (its depth is tallied into a histogram of
 * `bins` equal bins over [0, L)).
 *
 * Work decomposition: particle i is loop index i of one PX_FOR kernel; its random numbers are
 * the stream px_rng_at(seed, i), so a particle's history depends on (seed, i) only, never on
 * the space, the thread count or the batch that ran it. Tallies are px_scatter_add's of whole
 * numbers into one px_scatter over a double array (see mc_tally_index); every partial sum is
 * an integer below 2^53, hence exact, so the totals are bitwise identical on every space,
 * thread count and scatter mode.
 *
 * The file mc.c is kept in the common subset of C11 and C++, so a build with the Cuda space
 * compiles it with nvcc and the kernel gets its device half (`--space cuda`).
 */
#ifndef PAREX_EXAMPLE_MC_H
#define PAREX_EXAMPLE_MC_H

#include <stdint.h>

#include "parex.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest optical thickness sigma_t * L accepted (keeps a c = 1 history's expected length,
 * about sigma_t * L collisions, bounded). */
#define MC_MAX_OPTICAL_THICKNESS 1000.0
/** Largest histogram bin count. */
#define MC_MAX_BINS 1000000
/** Largest particle count: every tally stays an exact integer in a double. */
#define MC_MAX_PARTICLES ((int64_t)1 << 53)

/** Slots of the tally array: four counters, then the histogram's bins. */
enum {
    MC_TRANSMITTED = 0, /**< particles that left through x = L */
    MC_REFLECTED = 1,   /**< particles that left through x = 0 */
    MC_ABSORBED = 2,    /**< particles absorbed inside the slab */
    MC_COLLISIONS = 3,  /**< collisions (scatterings and absorptions) of all particles */
    MC_HIST = 4         /**< MC_HIST + k: absorptions in [k L / bins, (k + 1) L / bins) */
};

/** The problem: medium, geometry, seed. */
typedef struct {
    double sigma_t;   /**< total cross-section, > 0 (1 / length unit) */
    double c;         /**< scattering ratio sigma_s / sigma_t, in [0, 1] */
    double thickness; /**< slab thickness L, > 0 (length unit) */
    int64_t bins;     /**< absorption-depth histogram bins, 1 .. MC_MAX_BINS */
    uint64_t seed;    /**< Philox key of every particle's stream */
} mc_problem;

/** A transport run in progress: the tally array on the space and its scatter. */
typedef struct {
    px_space *space;
    mc_problem prob;
    int64_t n;      /**< tally slots: MC_HIST + bins */
    double *tally;  /**< n doubles in the space's memory */
    px_scatter *sc; /**< scatter-add into tally */
} mc_run;

/** Final tallies, read back to the host. */
typedef struct {
    int64_t transmitted, reflected, absorbed, collisions;
    int64_t *hist; /**< bins counts (malloc'd; mc_result_free) */
    int64_t bins;
} mc_result;

/**
 * Allocate and zero the tally array on @p s and make its scatter in mode @p m.
 * @return PX_OK or the status of px_malloc (PX_ENOMEM), px_deep_copy or px_scatter_create
 *         (e.g. PX_EINVAL for DUPLICATED on cuda); on failure nothing is left allocated.
 */
int mc_run_init(mc_run *run, px_space *s, const mc_problem *p, px_scatter_mode m);

/**
 * Transport particles [first, first + count) (one PX_FOR launch over that index range) and
 * contribute their tallies. Batches in any order and size give the same totals.
 * @return PX_OK or the launch's / px_scatter_contribute's status.
 */
int mc_run_batch(mc_run *run, int64_t first, int64_t count);

/** Copy the tallies to the host into @p out (out->hist malloc'd). @return PX_OK, PX_ENOMEM or
 * px_deep_copy's status. */
int mc_run_read(const mc_run *run, mc_result *out);

/** Destroy the scatter and free the tally array. */
void mc_run_free(mc_run *run);

/** Free out->hist. */
void mc_result_free(mc_result *out);

/**
 * Exact transmission and reflection probabilities of the rod model for a particle entering at
 * x = 0 in +x (two-stream / Kubelka-Munk closed form, README.md):
 *   a = sigma_t (1 - c/2), b = sigma_t c / 2, kappa = sigma_t sqrt(1 - c),
 *   C = cosh(kappa L), S = sinh(kappa L) / kappa (S = L when kappa = 0),
 *   T = 1 / (C + a S),  R = b S / (C + a S),
 * evaluated divided through by C (no overflow for thick slabs). For c = 0, T = exp(-sigma_t L)
 * and R = 0 exactly; for c = 1, T = 1 / (1 + sigma_t L / 2) and R = 1 - T.
 */
void mc_rod_analytic(const mc_problem *p, double *T, double *R);

/**
 * Expected fraction of particles absorbed in histogram bin k for the pure absorber (c = 0):
 * exp(-sigma_t x_k) - exp(-sigma_t x_{k+1}), x_k = k L / bins. Only meaningful for c = 0.
 */
double mc_absorber_bin_fraction(const mc_problem *p, int64_t k);

/** Seconds on CLOCK_MONOTONIC. */
double mc_now(void);

#ifdef __cplusplus
}
#endif

#endif
