/*
 * examples/cg/cg.h - Conjugate Gradient on parex: the HPCG problem generator and the solver.
 *
 * Every vector operation is a parex kernel launched on one execution space, so the same code
 * runs on serial, threads and cuda. The kernels are fused where that saves memory traffic;
 * the byte and flop models that turn timings into GB/s and GFLOP/s are in cg.c and in the
 * README text of main.c (--help).
 */
#ifndef PAREX_EXAMPLES_CG_CG_H
#define PAREX_EXAMPLES_CG_CG_H

#include <stdint.h>
#include <stdio.h>

#include "parex.h"

#ifdef __cplusplus
extern "C" { /* cg.c is compiled by nvcc (C++) when the Cuda space is built */
#endif

/** A CSR matrix whose arrays live in one parex memory space (px_malloc). */
typedef struct cg_matrix {
    int64_t n;        /**< Rows and columns (square). */
    int64_t nnz;      /**< Stored entries. */
    int64_t *row_ptr; /**< n + 1 offsets. */
    int32_t *col;     /**< nnz column indices, sorted within a row. */
    double *val;      /**< nnz values. */
    px_space *space;  /**< Where the arrays live; NULL when empty. */
    int borrowed;     /**< 1: the arrays are the caller's (cg_matrix_wrap), not freed here. */
} cg_matrix;

/** Solver options. */
typedef struct cg_options {
    double tol;        /**< Stop when ||r||_2 / ||b||_2 < tol. */
    int64_t max_iters; /**< Give up after this many iterations (>= 1). */
    int jacobi;        /**< Nonzero: Jacobi (diagonal) preconditioning. */
    double progress_s; /**< Seconds between progress lines; <= 0: none. */
    FILE *progress;    /**< Stream for progress lines; NULL: none. */
} cg_options;

/** How many of a solve's first iterations cg_result keeps one by one (first_iters_seconds). */
#define CG_FIRST_ITERS 8

/** Solver outcome. */
typedef struct cg_result {
    int64_t iterations;      /**< Iterations run (SpMVs after the initial residual). */
    int converged;           /**< 1 when relres < tol was reached. */
    double relres;           /**< Recurrence residual ||r||_2 / ||b||_2 at exit. */
    double true_relres;      /**< ||b - A x||_2 / ||b||_2 recomputed at exit. */
    double max_abs_err;      /**< max_i |x_i - 1| (the exact solution is all ones). */
    double seconds;          /**< Wall time of the iteration loop (setup excluded). */
    double min_iter_seconds; /**< Fastest single iteration (0 when none ran). */
    /** The first n_first_iters (at most CG_FIRST_ITERS) iterations' times, seconds, each from
     * the end of the one before (or the clock's start) to its own end: what a short solve pays
     * beyond its steady iterations (the library's and MPI's first uses) shows there. */
    double first_iters_seconds[CG_FIRST_ITERS];
    int n_first_iters; /**< Entries of first_iters_seconds set. */
    double flops;      /**< Floating-point operations of the loop (model in cg.c). */
    double bytes;      /**< Bytes moved by the loop (model in cg.c). */
    char message[256]; /**< Why the solve failed, when it returns an error. */
} cg_result;

/**
 * Generate the HPCG matrix on @p s: the 27-point stencil on an nx x ny x nz grid, 26 on the
 * diagonal and -1 for every neighbour inside the grid (as HPCG's GenerateProblem). Rows are
 * numbered x fastest. Row offsets come in closed form per row, so one PX_FOR fills all rows in
 * parallel (first touch by the ranks that later run the SpMV on them).
 * @p s must be host-accessible or have the kernel compiled for it.
 * @return PX_OK; PX_EINVAL for a dimension < 1 or n above INT32_MAX; PX_ENOMEM; or a launch
 *         status.
 */
int cg_hpcg_generate(px_space *s, int64_t nx, int64_t ny, int64_t nz, cg_matrix *A);

/**
 * Copy host CSR arrays into a new matrix on @p s (px_malloc + px_deep_copy).
 * @return PX_OK, PX_ENOMEM or a copy status.
 */
int cg_matrix_upload(px_space *s, int64_t n, int64_t nnz, const int64_t *row_ptr,
                     const int32_t *col, const double *val, cg_matrix *A);

/**
 * Make @p A name host CSR arrays the caller keeps (no copy), for a space whose memory the host
 * reaches (px_space_host_accessible). The solvers only read a matrix; the arrays must outlive
 * @p A, and cg_matrix_free leaves them alone.
 * @return PX_OK; PX_EINVAL where @p s is not host-accessible or an array is NULL.
 */
int cg_matrix_wrap(px_space *s, int64_t n, int64_t nnz, int64_t *row_ptr, int32_t *col, double *val,
                   cg_matrix *A);

/** Free a matrix's arrays (px_free on its space; not a wrapped matrix's) and zero it. */
void cg_matrix_free(cg_matrix *A);

/**
 * Solve A x = b with b = A * ones, x0 = 0, by (Jacobi-preconditioned) CG on A->space.
 * @return PX_OK when the solve ran (converged or not: see res->converged); PX_EINVAL when the
 *         matrix is unsuitable (non-positive diagonal with Jacobi, b == 0, breakdown p.Ap <= 0
 *         or a non-finite residual: the matrix is not SPD) with res->message saying which;
 *         PX_ENOMEM; or the status of a failed launch.
 */
int cg_solve(const cg_matrix *A, const cg_options *o, cg_result *res);

/**
 * Solve A x = b for a given right-hand side by (Jacobi-preconditioned) CG on A->space, x0 = 0
 * (what cg_solve does with b = A * ones; added for examples/fem, which assembles its own b).
 * @param b  [in] A->n doubles on A->space, not all zero.
 * @param x  [out] A->n doubles on A->space: the solution; may not alias b.
 * res->max_abs_err is NaN (no exact solution is known here); the other fields as cg_solve.
 * @return as cg_solve; PX_EFAULT when an argument is NULL.
 */
int cg_solve_rhs(const cg_matrix *A, const double *b, double *x, const cg_options *o,
                 cg_result *res);

/** Monotonic wall clock in seconds. */
double cg_now(void);

/**
 * Keep one iteration's time in @p res->first_iters_seconds while fewer than CG_FIRST_ITERS
 * are kept (the solvers call it at each iteration's end, in order).
 * @param res      [in,out] the solve's result; n_first_iters counts what it holds.
 * @param seconds  [in] the iteration's time.
 */
void cg_note_iteration(cg_result *res, double seconds);

#ifdef __cplusplus
}
#endif

#endif
