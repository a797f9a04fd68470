/*
 * examples/cg/dcg_kernels.h - the kernels of the distributed CG (dcg.c) beyond cg.c's, and the
 * compensated sums that make its dot products independent of how the rows are split.
 *
 * The compensated sums themselves (the cg_dd type, its reducers, the kernels on cg.c's
 * argument structs) are in cg_dd.h, which says why the distributed solver needs them; this
 * file adds the MPI op that joins them over ranks and the kernels on dcg's own arguments.
 */
#ifndef PAREX_EXAMPLES_CG_DCG_KERNELS_H
#define PAREX_EXAMPLES_CG_DCG_KERNELS_H

#include <stdint.h>

#include "cg_dd.h"
#include "cg_kernels.h"
#include "parex.h"
#include "partition.h" /* <mpi.h>, without the MPI-2 C++ bindings under nvcc */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Create the MPI datatype of one cg_dd (two doubles) and the commutative MPI_Op that joins
 * arrays of them (cg_dd_join), for MPI_Allreduce / px_engine_push_mpi_allreduce.
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

/**
 * The pipelined CG's vectors on the local rows (dcg.h, DCG_CG_PIPELINED; Ghysels and
 * Vanroose's names). With Jacobi (dinv non-NULL) m = M^-1 w is the exchanged vector (owned
 * part plus halo) and u, q are their own vectors; without a preconditioner u is r, q is s and
 * m is w, so the kernels leave u and q alone and keep w in m (the exchanged vector).
 */
typedef struct {
    const double *coef; /* [alpha, beta], read at run time */
    const double *n;    /* A m (dcg_pipe_start: A u, which becomes w; dcg_pipe_residual: A x) */
    const double *dinv; /* NULL: no preconditioner */
    const double *b;    /* the right-hand side (dcg_pipe_residual only) */
    double *x, *r, *u, *w, *m, *z, *q, *s, *p;
} dcg_pipe_args;

/** The three sums one pipelined iteration reduces: gamma = r.u, delta = w.u and r.r (without
 * a preconditioner gamma is r.r and rr stays 0). */
typedef struct {
    cg_dd gamma, delta, rr;
} dcg_pipe_sums;

/** Joins dcg_pipe_sums (host spaces only: a custom reducer). */
extern const px_reducer dcg_pipe_sum;
/** Joins dcg_pipe_sums as plain sums: the hi halves add, lo stays 0 (host spaces only). */
extern const px_reducer dcg_pipe_sum_plain;

/* The kernels (dcg_kernels.c). Args in brackets; "dd": compensated (host spaces only). */
extern const px_kernel dcg_pack;             /* [pack_args]   out[j] = v[idx[j]] */
extern const px_kernel dcg_update_r;         /* [dcg_r_args]  r -= alpha Ap, r.r */
extern const px_kernel dcg_update_r_rz;      /* [dcg_r_args]  ... r.M^-1 r */
extern const px_kernel dcg_update_xp;        /* [dcg_xp_args] x += alpha p, p = r + beta p */
extern const px_kernel dcg_update_xp_jacobi; /* [dcg_xp_args] ... p = M^-1 r + beta p */
extern const px_kernel dcg_update_r_dd;      /* [dcg_r_args]  r -= alpha Ap, r.r (cg_dd) */
extern const px_kernel dcg_update_r_pair_dd; /* [dcg_r_args]  ... {r.M^-1 r, r.r} (cg_dd2) */
/* Pipelined CG (dcg_pipe_args): the start, w = A u (from n), m = M^-1 w, u = M^-1 r (from
 * p, which holds it after cg_init), z = q = s = p = 0; and the update of dcg.h's op sequence,
 * plain (the sums then by cg_dot) or folding its sums (dcg_pipe_sums, compensated). */
extern const px_kernel dcg_pipe_start;
/* The residual replacement's first step (dcg.c, push_replace): r = b - A x (A x in n) and
 * u = M^-1 r into p, where dcg_pipe_start takes it from, as after cg_init. */
extern const px_kernel dcg_pipe_residual;
extern const px_kernel dcg_pipe_update;
extern const px_kernel dcg_pipe_update_jacobi;
extern const px_kernel dcg_pipe_update_sum;        /* plain {r.r, w.r} (dcg_pipe_sum_plain) */
extern const px_kernel dcg_pipe_update_jacobi_sum; /* plain {r.u, w.u, r.r} */
extern const px_kernel dcg_pipe_update_dd;         /* {r.r, w.r} */
extern const px_kernel dcg_pipe_update_jacobi_dd;  /* {r.u, w.u, r.r} */

#ifdef __cplusplus
}
#endif

#endif
