/*
 * examples/cholesky/chol.h - tiled Cholesky factorization on the parex dependency engine.
 *
 * A symmetric positive definite matrix A (n x n) is stored as its lower triangle of tiles:
 * nt = ceil(n / tile) tile rows, tile (i, j) for i >= j, each tile a contiguous column-major
 * block of rows(i) x cols(j) doubles (leading dimension rows(i)), 64-byte aligned. The last
 * tile row and column are ragged when tile does not divide n. Every tile is one px_var.
 *
 * chol_factor() pushes the right-looking algorithm (lower, A = L * L^T) to an engine, one op
 * per tile kernel, each with the Vars it reads and writes:
 *
 *   for k in 0..nt-1:
 *     POTRF  A(k,k)                 = chol(A(k,k))             writes (k,k)
 *            (and inv(L(k,k)) for the column's TRSMs, see chol_potrf_tile / chol_trsm_tile)
 *     TRSM   A(i,k) = A(i,k) L(k,k)^-T          for i > k      reads (k,k), writes (i,k)
 *     SYRK   A(j,j) -= L(j,k) L(j,k)^T          for j > k      reads (j,k), writes (j,j)
 *     GEMM   A(i,j) -= L(i,k) L(j,k)^T          for i > j > k  reads (i,k),(j,k), writes (i,j)
 *
 * and the engine runs every op whose inputs are ready, on any worker. Tile kernels are
 * single-threaded OpenBLAS calls (the caller of chol_factor must have set OpenBLAS to one
 * thread, see chol_blas_single_thread()): parallelism comes from the DAG, not from BLAS.
 *
 * Priorities (critical path first). Tile column c becomes the panel at step c, so work on
 * lower columns is always closer to the critical path POTRF(0) -> TRSM -> SYRK -> POTRF(1)
 * -> ... . Every op gets
 *
 *     priority = 4 * (nt - 1 - c) + kind,   kind: POTRF 3, TRSM 2, SYRK 1, GEMM 0
 *
 * where c is the tile column the op writes. So POTRF > TRSM > SYRK > GEMM within a column,
 * and the updates of the next panel (column k+1) outrank the rest of step k's trailing
 * update: that is the classic look-ahead order, expressed as engine priorities.
 *
 * Everything here is example code on top of the public parex API, not library code.
 */
#ifndef PAREX_EXAMPLE_CHOL_H
#define PAREX_EXAMPLE_CHOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "parex.h"

/** Status of a POTRF whose tile is not positive definite (a user op code, see PX_EUSER). */
#define CHOL_ENOTSPD (PX_EUSER - 1)

/** Dense symmetric matrix stored as lower tiles (see the file comment). */
typedef struct chol_matrix {
    int64_t n;      /**< order of the matrix */
    int64_t tile;   /**< tile size (rows and columns of every full tile) */
    int64_t nt;     /**< number of tile rows/columns, ceil(n / tile) */
    double *data;   /**< all tiles, one aligned allocation */
    size_t *offset; /**< offset (in doubles) of tile (i, j) in data, index chol_tid(i, j) */
    px_var **vars;  /**< one Var per tile (NULL until chol_matrix_attach) */
    px_engine *eng; /**< engine owning the Vars */
    /** Property of the tile ops chol_factor pushes (PX_FN_NORMAL after init). */
    px_fn_property prop;
    /** First failing global pivot (1-based) written by a failed POTRF; 0 when none. */
    _Atomic int64_t notspd_order;
    /** Inverses of the diagonal L tiles of columns 0 .. nt-2, one tile x tile block each
     *  (leading dimension tile), written by that column's POTRF op and read by its TRSM ops;
     *  NULL until chol_matrix_alloc_inverses (chol_factor calls it), and for nt == 1. */
    double *dinv;
    /** dinv_ok[k] != 0 when dinv holds column k's inverse (its condition passed); written by
     *  every POTRF op of every factorization. */
    unsigned char *dinv_ok;
} chol_matrix;

/** Index of tile (i, j), i >= j, in the packed lower-triangle tile arrays. */
static inline size_t chol_tid(int64_t i, int64_t j)
{
    return (size_t)(i * (i + 1) / 2 + j);
}

/** Rows of tile row i (columns of tile column i). */
static inline int64_t chol_tsize(const chol_matrix *m, int64_t i)
{
    return i == m->nt - 1 ? m->n - i * m->tile : m->tile;
}

/** Pointer to tile (i, j), column-major with leading dimension chol_tsize(m, i). */
static inline double *chol_tile(const chol_matrix *m, int64_t i, int64_t j)
{
    return m->data + m->offset[chol_tid(i, j)];
}

/** Where column k's POTRF writes inv(L_kk) (leading dimension tile): NULL for the last column,
 *  which has no TRSM. m->dinv must be allocated (chol_matrix_alloc_inverses). */
static inline double *chol_dinv_block(const chol_matrix *m, int64_t k)
{
    return k + 1 < m->nt ? m->dinv + (size_t)k * (size_t)(m->tile * m->tile) : NULL;
}

/** The inverse column k's TRSMs multiply by, or NULL when they solve by substitution. */
static inline const double *chol_dinv_for_trsm(const chol_matrix *m, int64_t k)
{
    return m->dinv_ok[k] ? chol_dinv_block(m, k) : NULL;
}

/**
 * Allocate an n x n tiled matrix, zero-filled, without Vars.
 * @return PX_OK; PX_EINVAL for n < 1, tile < 1; PX_ENOMEM.
 */
int chol_matrix_init(chol_matrix *m, int64_t n, int64_t tile);

/**
 * Allocate bytes (> 0) aligned to 2 MiB and advise the kernel to back them with transparent
 * huge pages (madvise MADV_HUGEPAGE; ignored where unsupported). Free with free(). NULL when
 * out of memory or bytes is 0. Used for the tiles and for the dense LAPACKE baseline alike.
 */
void *chol_alloc_huge(size_t bytes);

/**
 * Triangular solve X L^T = B in place (B := X): B is mb x nb column-major with leading
 * dimension ldb, L is nb x nb lower triangular (non-unit) with leading dimension ldl. The
 * TRSM tile kernel; recursive, so most of its flops run in dgemm (see chol.c).
 */
void chol_trsm_rlt(int mb, int nb, const double *l, int ldl, double *b, int ldb);

/**
 * Largest 1-norm condition number kappa_1(L_kk) = ||L_kk||_1 ||inv(L_kk)||_1 of a diagonal
 * tile for which the TRSMs below it multiply by the inverse (dtrmm) instead of solving.
 * Multiplying by a computed inverse instead of solving adds a backward error of order
 * u * kappa_1 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., chapter 14
 * on matrix inversion: the use of an inverse to solve, and triangular inverses), so at 1e3 the
 * added term is about 1e-13, an order of magnitude under the 1e-12 residual the tests require. A
 * worse conditioned tile keeps the substitution TRSM (chol_trsm_rlt). Measured, the bound is loose:
 * with every bcsstk13 tile forced onto its inverse (kappa_1 up to 8.5e4) the residual was 1.1e-16
 * (bench/RESULTS.md).
 */
#define CHOL_INV_COND_MAX 1e3

/**
 * X := inv(L) for L n x n lower triangular non-unit (leading dimension ldl >= n); X is n x n
 * with leading dimension ldx >= n, only its lower triangle is written. Recursive (halving) so
 * that its flops run in dtrmm. Thread-safe for distinct X.
 * @return kappa_1(L) = ||L||_1 ||X||_1; INFINITY when L has a zero on its diagonal (X is then
 *         unusable), when the product overflows or when L holds a NaN.
 */
double chol_inverse_lower(int n, const double *l, int ldl, double *x, int ldx);

/**
 * POTRF tile kernel: a := L with a = L L^T (lower, LAPACKE_dpotrf; a is nb x nb, leading
 * dimension lda >= nb). When @p inv is not NULL and the factorization succeeded, also writes
 * inv(L) into inv (leading dimension ldinv >= nb). Always writes *use_inv: 1 when the inverse
 * was formed and kappa_1(L) <= CHOL_INV_COND_MAX, else 0 (inv NULL, failure, or worse
 * conditioned). Thread-safe for distinct tiles.
 * @return LAPACK's info: 0; k > 0 when the leading minor of order k is not positive; < 0 for
 *         an illegal argument (nb < 0 or lda < nb).
 */
int chol_potrf_tile(int nb, double *a, int lda, double *inv, int ldinv, int *use_inv);

/**
 * TRSM tile kernel, B := B L^-T (B mb x nb, leading dimension ldb >= mb; L nb x nb lower
 * non-unit, ldl >= nb): with @p inv (the lower triangle of inv(L), leading dimension
 * ldinv >= nb) one dtrmm B := B inv^T, which OpenBLAS runs at GEMM-like rates; with inv NULL
 * the substitution chol_trsm_rlt on l. Thread-safe for distinct B.
 */
void chol_trsm_tile(int mb, int nb, const double *l, int ldl, const double *inv, int ldinv,
                    double *b, int ldb);

/**
 * Allocate m->dinv (one tile x tile block for each of the nt - 1 columns that have TRSMs, on
 * 2 MiB pages; none when nt == 1) and m->dinv_ok (nt flags, all 0) if not yet there.
 * chol_factor calls it; a driver that times chol_factor or submits the DAG elsewhere (the
 * StarPU benchmark) calls it once before, so the allocation is not timed. Not thread-safe.
 * @return PX_OK; PX_ENOMEM (nothing allocated then).
 */
int chol_matrix_alloc_inverses(chol_matrix *m);

/** Free the storage and delete the Vars (if attached). Safe on a zeroed struct. */
void chol_matrix_fini(chol_matrix *m);

/**
 * Create one Var per tile on @p e.
 * @return PX_OK; PX_ENOMEM when a Var could not be created.
 */
int chol_matrix_attach(chol_matrix *m, px_engine *e);

/** Element (r, c), for r / tile >= c / tile (lower tiles; diagonal tiles whole). */
double *chol_at(const chol_matrix *m, int64_t r, int64_t c);

/**
 * Fill @p m with the deterministic SPD test matrix: a(r, c) = a(c, r) uniform in [-1, 1)
 * from a counter-based hash of (seed, r, c), plus n on the diagonal (strictly diagonally
 * dominant, hence SPD). The values do not depend on the tile size. When Vars are attached,
 * one generation op per tile is pushed to the engine (tiles fill in parallel) and the call
 * waits for them.
 * @return PX_OK or the engine's failure status.
 */
int chol_generate(chol_matrix *m, uint64_t seed);

/** Copy every tile of @p src into @p dst (same n and tile). */
void chol_matrix_copy(chol_matrix *dst, const chol_matrix *src);

/** One tile op of the factorization DAG: what an op's argument points to. */
typedef struct chol_task {
    chol_matrix *m;
    int kind;        /**< 3 POTRF, 2 TRSM, 1 SYRK, 0 GEMM (the priority rule's kind) */
    int64_t i, j, k; /**< POTRF (k,k); TRSM (i,k); SYRK (j,j) by k; GEMM (i,j) by k */
} chol_task;

/**
 * Push the factorization DAG of @p m (Vars attached, m->dinv allocated) to its engine
 * without waiting: chol_task_count(m->nt) ops, in the sequential right-looking order, whose
 * arguments are the entries of @p tasks (that many, filled here). @p tasks must stay valid
 * until the ops ran, or, when the calling thread records a graph (px_graph_begin), as long
 * as the graph may be launched. Does not reset m->notspd_order.
 * @return PX_OK; the status of the first push that failed (no further op is pushed then).
 */
int chol_push_factor(chol_matrix *m, chol_task *tasks);

/**
 * Push the whole factorization DAG of @p m (Vars attached) to its engine and wait for it.
 * On return the lower tiles hold L. The first call allocates m->dinv (see
 * chol_matrix_alloc_inverses); one factorization of a given matrix at a time.
 * @return PX_OK; CHOL_ENOTSPD when a POTRF found a non-positive pivot (the failure passes
 *         to every op that depends on it; m->notspd_order names the pivot); PX_ENOMEM;
 *         or an engine status.
 */
int chol_factor(chol_matrix *m);

/**
 * Create the engine the factorization runs on: @p workers threads execute tile ops.
 *
 * per_device (unless @p fifo): ops are pushed as PX_FN_CPU_PRIORITIZED so the engine's CPU
 * priority queue applies the priority rule above; that queue has half the engine's CPU
 * workers (parex/engine.h), so the engine is created with 2 * workers CPU workers, whose
 * plain FIFO lane stays idle (its threads sleep). pooled, naive, or @p fifo: PX_FN_NORMAL,
 * ready ops run in the order they became ready (these lanes do not look at priorities).
 *
 * @param prop  receives the property to set in chol_matrix.prop.
 * @return the engine (destroy with px_engine_destroy), or NULL (the runtime logged why).
 */
px_engine *chol_engine_create(px_engine_kind kind, int workers, int fifo, px_fn_property *prop);

/** Number of tile ops chol_factor pushes for nt tile rows. */
int64_t chol_task_count(int64_t nt);

/** Priority of an op writing tile column c (see the file comment); kind 3 POTRF .. 0 GEMM. */
int chol_priority(int64_t nt, int64_t c, int kind);

/** Frobenius norm of the symmetric matrix held as lower tiles. */
double chol_norm_fro(const chol_matrix *a);

/**
 * ||A - L L^T||_F computed exactly, tile by tile (cost ~ n^3 / 3 flops).
 * @p a holds A, @p l holds L (same shape).
 */
double chol_residual_exact(const chol_matrix *a, const chol_matrix *l);

/**
 * Estimate of ||A - L L^T||_F from @p nvec Gaussian random vectors x:
 * E ||(A - L L^T) x||^2 = ||A - L L^T||_F^2, so sqrt(mean ||A x - L (L^T x)||^2) estimates
 * the norm (relative spread about 1 / sqrt(2 nvec)). Cost ~ 3 n^2 flops per vector.
 */
double chol_residual_estimate(const chol_matrix *a, const chol_matrix *l, int nvec, uint64_t seed);

/** Limit OpenBLAS to one thread (tile kernels run concurrently on engine workers). */
void chol_blas_single_thread(void);

/** Set the number of OpenBLAS threads (baselines in the benchmark). */
void chol_blas_set_threads(int n);

#endif /* PAREX_EXAMPLE_CHOL_H */
