/* bench/dcg_bsp.h - the local matrix and halo map of bench_cg_bsp (the bulk-synchronous
 * distributed CG of issue 15), shared by its HPCG generator (bench_cg_bsp.c) and its Matrix
 * Market partitioner (dcg_matrix.c). */
#ifndef PAREX_BENCH_DCG_BSP_H
#define PAREX_BENCH_DCG_BSP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* This rank's rows in CSR: columns [0, n) are its own rows, [n, n + nghost) the ghost slots. */
typedef struct {
    int64_t n, nnz;
    int64_t *rp;
    int32_t *col;
    double *val;
} dcg_csr;

/* One message each way per neighbour and exchange: neighbour m's values land in the ghost
 * slots [recv_off[m], recv_off[m + 1]) (counted from n), in the order of its send list; it
 * gets the local values send_idx[send_off[m] .. send_off[m + 1]). */
typedef struct {
    int nnb;
    int *peer;         /* nnb ranks */
    int64_t *recv_off; /* nnb + 1 */
    int64_t *send_off; /* nnb + 1 */
    int64_t nghost, nsend;
    int32_t *send_idx;
    double *send_buf;
    MPI_Request *req; /* 2 nnb */
} dcg_halo;

/* posix_memalign(64) or MPI_Abort with a message; never NULL. */
void *dcg_xmalloc(size_t bytes);

/* Allocates h's per-neighbour arrays for nnb neighbours (send_idx, send_buf: by the caller). */
void dcg_halo_alloc(dcg_halo *h, int nnb);

void dcg_halo_free(dcg_halo *h);

/*
 * Reads the Matrix Market file at path on every rank (it must be square with a symmetric
 * pattern, as CG needs), gives each of the P ranks a part of the rows, contiguous blocks
 * (metis = 0: rows [r N / P, (r + 1) N / P)) or METIS_PartGraphKway's parts of the matrix graph
 * (metis = 1, computed on rank 0 and broadcast), numbers them in global order, and builds this
 * rank's CSR and halo map. *n_global receives N. Returns 0, or 1 with a message in err (the
 * same on every rank where the file is bad; MPI errors abort).
 */
int dcg_matrix_setup(const char *path, int metis, int P, int rank, dcg_csr *A, dcg_halo *h,
                     int64_t *n_global, char *err, size_t err_bytes);

#endif
