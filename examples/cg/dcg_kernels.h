/*
 * examples/cg/dcg_kernels.h - the kernels of the distributed CG (dcg.c) beyond cg.c's, and the
 * compensated sums that make its dot products independent of how the rows are split.
 *
 * Why compensated sums. A dot product summed in a different order (other threads, other
 * ranks, rows renumbered by a partition) rounds differently, and plain CG on an
 * ill-conditioned matrix amplifies those last-bit differences: 1138_bus took 2118 to 2204
 * iterations depending on the rank count and partition, bcsstk01 130 to 135 (issue 15 asks for
 * 2%). Everything else in an iteration is elementwise or a row of the SpMV summed in the
 * matrix's own entry order, which no partition changes. So the dots are the one
 * order-dependent step, and they are accumulated here as a double-double (Ogita, Rump and
 * Oishi's Sum2: Knuth's TwoSum folds each term's rounding error into a second double) and
 * joined (threads, then ranks through dcg_dd_mpi_op) without losing those errors. The value,
 * hi + lo rounded once, is the correctly rounded sum of the (rounded) terms unless the exact
 * sum lies within about n^2 eps^2 sum|terms| of a rounding boundary, so every split of the
 * rows gives the same bits in practice and the same iterations. Cost: 3 extra adds per
 * term in memory-bound kernels. Mirrors ReproBLAS / ExBLAS reproducible reductions (which
 * guarantee it with more work) and Kokkos' custom reducers (value_type with init and join).
 * Needs IEEE double arithmetic without reassociation or contraction of the sums (no
 * -ffast-math; the build is -std=c11, where GCC contracts nothing).
 */
#ifndef PAREX_EXAMPLES_CG_DCG_KERNELS_H
#define PAREX_EXAMPLES_CG_DCG_KERNELS_H

#include <mpi.h>
#include <stdint.h>

#include "cg_kernels.h"
#include "parex.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compensated sum: the running sum and the sum of its rounding errors. */
typedef struct {
    double hi, lo;
} dcg_dd;

/** Two compensated sums (Jacobi's r.M^-1 r and r.r, in that order). */
typedef struct {
    dcg_dd rz, rr;
} dcg_dd2;

/** Add @p x to @p a (TwoSum: the rounding error of hi + x goes to lo exactly). */
static inline PX_HOST_DEVICE void dcg_dd_add(dcg_dd *a, double x)
{
    const double t = a->hi + x;
    const double z = t - a->hi;
    a->lo += (a->hi - (t - z)) + (x - z);
    a->hi = t;
}

/** Add compensated sum @p s to @p d (commutative bit for bit). */
static inline PX_HOST_DEVICE void dcg_dd_join(dcg_dd *d, const dcg_dd *s)
{
    const double t = d->hi + s->hi;
    const double z = t - d->hi;
    d->lo = (d->lo + s->lo) + ((d->hi - (t - z)) + (s->hi - z));
    d->hi = t;
}

/** The value of a compensated sum, rounded once. */
static inline PX_HOST_DEVICE double dcg_dd_value(const dcg_dd *a)
{
    return a->hi + a->lo;
}

/** Reducers of dcg_dd and dcg_dd2 (host spaces: custom reducers). */
extern const px_reducer dcg_dd_sum;
extern const px_reducer dcg_dd2_sum;

/**
 * Create the MPI datatype of one dcg_dd (two doubles) and the commutative MPI_Op that joins
 * arrays of them (dcg_dd_join), for MPI_Allreduce / px_engine_push_mpi_allreduce.
 * @param type [out] committed datatype; free with dcg_dd_mpi_free.
 * @param op   [out] the sum; free with dcg_dd_mpi_free.
 * @return PX_OK; PX_EMPI when MPI refused (nothing left to free).
 * Needs MPI initialized; thread-safe as the MPI calls it makes.
 */
int dcg_dd_mpi_create(MPI_Datatype *type, MPI_Op *op);

/** Free what dcg_dd_mpi_create made (MPI_DATATYPE_NULL / MPI_OP_NULL are skipped). */
void dcg_dd_mpi_free(MPI_Datatype *type, MPI_Op *op);

/** Arguments of dcg_pack. */
typedef struct {
    const int32_t *idx;
    const double *v;
    double *out;
} pack_args;

/* The update kernels of cg.c with alpha and beta read at run time from @coef (space memory, a
 * scalar op writes them: dcg_alpha / dcg_beta) instead of copied at push, so a whole iteration
 * is pushed before its scalars are known. */
typedef struct {
    const double *coef; /* [alpha, beta] */
    const double *ap;
    const double *dinv;
    double *r;
} dcg_r_args;

typedef struct {
    const double *coef; /* [alpha, beta] */
    const double *r;
    const double *dinv;
    double *x, *p;
} dcg_xp_args;

/* The kernels (dcg_kernels.c). Args in brackets; "dd": compensated (host spaces only). */
extern const px_kernel dcg_pack;             /* [pack_args]   out[j] = v[idx[j]] */
extern const px_kernel dcg_update_r;         /* [dcg_r_args]  r -= alpha Ap, r.r */
extern const px_kernel dcg_update_r_rz;      /* [dcg_r_args]  ... r.M^-1 r */
extern const px_kernel dcg_update_xp;        /* [dcg_xp_args] x += alpha p, p = r + beta p */
extern const px_kernel dcg_update_xp_jacobi; /* [dcg_xp_args] ... p = M^-1 r + beta p */
extern const px_kernel dcg_spmv_dot_dd;      /* [spmv_args]   ap = A p, p.ap (dcg_dd) */
extern const px_kernel dcg_update_r_dd;      /* [dcg_r_args]  r -= alpha Ap, r.r (dcg_dd) */
extern const px_kernel dcg_update_r_pair_dd; /* [dcg_r_args]  ... {r.M^-1 r, r.r} (dcg_dd2) */
extern const px_kernel dcg_init_dd;          /* [init_args]   cg_init with r.p as dcg_dd */
extern const px_kernel dcg_dot_dd;           /* [dot_args]    u.v (dcg_dd) */

#ifdef __cplusplus
}
#endif

#endif
