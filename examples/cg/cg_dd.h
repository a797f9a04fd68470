/*
 * examples/cg/cg_dd.h - compensated (double-double) dot products for the CG solvers, so that
 * the iterations do not depend on how the rows are split over threads or ranks.
 *
 * Why compensated sums. A dot product summed in a different order (other threads, other
 * ranks, rows renumbered by a partition) rounds differently, and plain CG on an
 * ill-conditioned matrix amplifies those last-bit differences: 1138_bus took 2118 to 2204
 * iterations depending on the rank count and partition, bcsstk01 130 to 135 (issue 15 asks for
 * 2%). Everything else in an iteration is elementwise or a row of the SpMV summed in the
 * matrix's own entry order, which no partition changes. So the dots are the one
 * order-dependent step, and they are accumulated here as a double-double (Ogita, Rump and
 * Oishi's Sum2: Knuth's TwoSum folds each term's rounding error into a second double) and
 * joined (threads by cg_dd_sum, ranks by dcg_dd_mpi_create's MPI op) without losing those errors.
 * The value, hi + lo rounded once, is the correctly rounded sum of the (rounded) terms unless the
 * exact sum lies within about n^2 eps^2 sum|terms| of a rounding boundary, so every split of the
 * rows gives the same bits in practice and the same iterations. Cost: 3 extra adds per
 * term (12% more instructions per CG iteration on a cache-resident HPCG 16^3; within the noise
 * on memory-bound sizes). Mirrors ReproBLAS / ExBLAS reproducible reductions (which
 * guarantee it with more work) and Kokkos' custom reducers (value_type with init and join).
 * Needs IEEE double arithmetic without reassociation or contraction of the sums (no
 * -ffast-math; the build is -std=c11, where GCC contracts nothing).
 *
 * The distributed solver (dcg.c) uses them on host spaces; cg.c can take the same kernels
 * (cg_dot_dd, cg_init_dd, cg_spmv_dot_dd, cg_update_r_dd, cg_update_r_pair_dd below, on its
 * own argument structs) to compute the very same numbers on one process.
 */
#ifndef PAREX_EXAMPLES_CG_CG_DD_H
#define PAREX_EXAMPLES_CG_CG_DD_H

#include "cg_kernels.h"
#include "parex.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compensated sum: the running sum and the sum of its rounding errors. */
typedef struct {
    double hi, lo;
} cg_dd;

/** Two compensated sums (Jacobi's r.M^-1 r and r.r, in that order). */
typedef struct {
    cg_dd rz, rr;
} cg_dd2;

/** Add @p x to @p a (TwoSum: the rounding error of hi + x goes to lo exactly). */
static inline PX_HOST_DEVICE void cg_dd_add(cg_dd *a, double x)
{
    const double t = a->hi + x;
    const double z = t - a->hi;
    a->lo += (a->hi - (t - z)) + (x - z);
    a->hi = t;
}

/** Add compensated sum @p s to @p d (commutative bit for bit). */
static inline PX_HOST_DEVICE void cg_dd_join(cg_dd *d, const cg_dd *s)
{
    const double t = d->hi + s->hi;
    const double z = t - d->hi;
    d->lo = (d->lo + s->lo) + ((d->hi - (t - z)) + (s->hi - z));
    d->hi = t;
}

/** The value of a compensated sum, rounded once. */
static inline PX_HOST_DEVICE double cg_dd_value(const cg_dd *a)
{
    return a->hi + a->lo;
}

/** Reducers of cg_dd and cg_dd2 (host spaces: custom reducers). */
extern const px_reducer cg_dd_sum;
extern const px_reducer cg_dd2_sum;

/* Compensated variants of cg.c's reducing kernels (cg_dd.c; host spaces: custom reducers).
 * Each computes what its cg_kernels.h namesake does and folds its sum(s) as cg_dd (cg_dd2
 * for the pair {r.M^-1 r, r.r}). */
extern const px_kernel cg_dot_dd;           /* [dot_args]      u.v */
extern const px_kernel cg_init_dd;          /* [init_args]     x=0 r=b p=M^-1 b ap=0, r.p */
extern const px_kernel cg_spmv_dot_dd;      /* [spmv_args]     ap = A p, p.ap (host: 4 rows) */
extern const px_kernel cg_spmv_dot_dd_row;  /* [spmv_args]     the same, one row an index */
extern const px_kernel cg_update_r_dd;      /* [update_r_args] r -= alpha ap, r.r */
extern const px_kernel cg_update_r_pair_dd; /* [update_r_args] ... {r.M^-1 r, r.r} */

#ifdef __cplusplus
}
#endif

#endif
