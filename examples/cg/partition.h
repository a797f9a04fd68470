/*
 * examples/cg/partition.h - row partitions and halo maps for distributed sparse solvers.
 *
 * Pure C11 + MPI, no parex kernels inside, so that bench/ (the bulk-synchronous MPI+OpenMP CG)
 * compiles the same file and runs on exactly the same partition as parex-cg.
 *
 * A partition gives every rank of a communicator a set of owned rows of a square sparse matrix
 * and a local CSR copy of them, renumbered:
 *
 *   local rows   [0, n_interior)           interior rows: every column is owned by this rank
 *                [n_interior, n_local)     boundary rows: at least one column is a halo column
 *   local vector [0, n_local)              owned values, in the row order above
 *                [n_local, n_ext)          halo: values owned by neighbours, received each
 *                                          exchange; neighbour k's values land at
 *                                          n_local + recv_ptr[k] .. n_local + recv_ptr[k + 1]
 *
 * Within each group the rows keep their global order; within a neighbour's halo block and its
 * send list the values are in ascending global row order, so one exchange is: for each
 * neighbour k, pack x[send_idx[send_ptr[k] .. send_ptr[k+1])] and send it to neighbour[k];
 * receive recv_ptr[k+1] - recv_ptr[k] doubles from neighbour[k] into the halo block k.
 * Neighbours are in ascending rank order. Column indices of the local CSR are local
 * (extended) indices, in the global column order of each row; the diagonal entry of local row
 * i has column i.
 *
 * The maps are built once, with one MPI_Alltoall and one MPI_Alltoallv of the requested global
 * row numbers (so structurally non-symmetric matrices are handled as well).
 *
 * Mirrors the distributed-matrix setup of the HPCG reference (GenerateProblem / SetupHalo) and
 * of Trilinos' Tpetra::Map / Import (owned + ghost columns, send lists per neighbour).
 */
#ifndef PAREX_EXAMPLES_CG_PARTITION_H
#define PAREX_EXAMPLES_CG_PARTITION_H

#if defined(__cplusplus) && !defined(OMPI_SKIP_MPICXX)
#define OMPI_SKIP_MPICXX 1 /* a C API: no MPI-2 C++ bindings under nvcc */
#endif
#if defined(__cplusplus) && !defined(MPICH_SKIP_MPICXX)
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes of the cgp_* functions (0 is success). */
enum {
    CGP_OK = 0,
    CGP_EINVAL = -1,  /**< Bad argument (message says which). */
    CGP_ENOMEM = -2,  /**< Out of memory. */
    CGP_EMPI = -3,    /**< An MPI call failed. */
    CGP_ENOMETIS = -4 /**< METIS asked for but not built in, or METIS failed. */
};

/** How a general matrix's rows are distributed over the ranks. */
typedef enum {
    CGP_BLOCK, /**< Contiguous blocks of rows, sizes differing by at most one. */
    CGP_METIS  /**< METIS_PartGraphKway on the symmetric graph without the diagonal. */
} cgp_method;

/** One rank's part of a distributed square matrix (see the top of the file). All arrays are
 *  plain malloc'ed host memory owned by the struct (cgp_free). */
typedef struct cgp_part {
    int rank, nranks;    /**< This rank and the size of the communicator. */
    int64_t n_global;    /**< Rows (= columns) of the whole matrix. */
    int64_t nnz_global;  /**< Stored entries of the whole matrix. */
    int64_t n_local;     /**< Rows owned here. */
    int64_t n_interior;  /**< The first n_interior local rows need no halo value. */
    int64_t n_ext;       /**< n_local + halo values: length of an extended local vector. */
    int64_t nnz;         /**< Entries of the local rows. */
    int64_t *row_ptr;    /**< n_local + 1 offsets. */
    int32_t *col;        /**< nnz local (extended) column indices. */
    double *val;         /**< nnz values. */
    int64_t *global_row; /**< n_local: the global row number of each local row. */
    int n_neighbors;     /**< Ranks this one exchanges halo values with. */
    int *neighbor;       /**< n_neighbors ranks, ascending. */
    int64_t *send_ptr;   /**< n_neighbors + 1 offsets into send_idx. */
    int32_t *send_idx;   /**< send_ptr[n_neighbors] local rows, packed in this order. */
    int64_t *recv_ptr;   /**< n_neighbors + 1 offsets into the halo (add n_local). */
} cgp_part;

/**
 * Factor @p nranks into a 3-D process grid dims[0] * dims[1] * dims[2] (x, y, z) as close to
 * a cube as possible (the smallest max - min over all factorizations, then dims[0] >= dims[1]
 * >= dims[2]), as HPCG's ComputeOptimalShapeXYZ aims for. 1 -> 1x1x1, 2 -> 2x1x1,
 * 4 -> 2x2x1, 8 -> 2x2x2, 12 -> 3x2x2. Rank r sits at (r % dims[0], (r / dims[0]) % dims[1],
 * r / (dims[0] dims[1])), as in HPCG.
 * @param nranks >= 1. @param dims [out] three factors.
 * @return CGP_OK; CGP_EINVAL for nranks < 1 or dims NULL. Thread-safe.
 */
int cgp_process_grid(int nranks, int dims[3]);

/**
 * Build this rank's part of the HPCG problem (27-point stencil, 26 on the diagonal, -1 for
 * every neighbour inside the global grid) on the process grid of cgp_process_grid: every rank
 * owns an nx x ny x nz box, the global grid is (px nx) x (py ny) x (pz nz), global rows are
 * numbered x fastest over the global grid. Collective over @p comm (every rank passes the same
 * sizes).
 * @param nx, ny, nz  points per rank along each axis, >= 1; the global row count must fit
 *                    int32 (and the local one too).
 * @param p     [out] the part; zeroed on failure.
 * @param err   [out] message on failure (may be NULL); @param errlen its size.
 * @return CGP_OK; CGP_EINVAL (sizes); CGP_ENOMEM; CGP_EMPI. Not thread-safe against other MPI
 *         collectives on @p comm.
 */
int cgp_hpcg(MPI_Comm comm, int64_t nx, int64_t ny, int64_t nz, cgp_part *p, char *err,
             size_t errlen);

/**
 * Partition a general square matrix, given whole (as CSR with global column indices) on
 * every rank, and build this rank's part. With CGP_METIS, rank 0 runs METIS_PartGraphKway
 * (default options, seed fixed by METIS) on the graph of A + A^T without the diagonal and
 * broadcasts the owner of every row, so every rank uses the same partition; with one rank
 * every row is owned by rank 0 and METIS is not called. Collective over @p comm.
 * @param n, row_ptr, col, val  the matrix: n rows, row_ptr[n + 1], col/val[row_ptr[n]],
 *                              identical on every rank; n >= 1 and n >= the number of ranks.
 * @param m     CGP_BLOCK or CGP_METIS. @param p [out], @param err, errlen as cgp_hpcg.
 * @return CGP_OK; CGP_EINVAL (n < ranks, column out of range, a bad method; checked on every
 *         rank and agreed, so a matrix bad on some ranks only, or of another size there,
 *         fails every rank: "another rank rejected its copy of the matrix", "the ranks hold
 *         matrices of different sizes"); CGP_ENOMETIS (built without METIS, or METIS
 *         returned an error); CGP_ENOMEM; CGP_EMPI. Every rank returns the same status.
 */
int cgp_from_csr(MPI_Comm comm, int64_t n, const int64_t *row_ptr, const int32_t *col,
                 const double *val, cgp_method m, cgp_part *p, char *err, size_t errlen);

/** 1 when this build has METIS (CGP_METIS usable), else 0. Thread-safe. */
int cgp_have_metis(void);

/** Halo doubles this rank receives per exchange (n_ext - n_local). */
int64_t cgp_halo_count(const cgp_part *p);

/** Free a part's arrays and zero it (NULL and a zeroed part are fine). */
void cgp_free(cgp_part *p);

#ifdef __cplusplus
}
#endif

#endif
