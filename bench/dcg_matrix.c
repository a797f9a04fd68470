/*
 * bench/dcg_matrix.c - bench_cg_bsp's Matrix Market path: every rank reads the whole file,
 * the rows are split into contiguous blocks or METIS parts, and each rank builds its CSR with
 * local columns first and ghost slots after them, grouped by owner (owners ascending) and, per
 * owner, in ascending global order. The owner's send list to a rank is its rows, ascending,
 * that touch that rank's rows: with a symmetric pattern exactly the ghosts the rank expects, in
 * the same order, so no index lists travel (an MPI_Alltoall of the counts checks it).
 */
#define _POSIX_C_SOURCE 200809L
#if DCG_HAVE_METIS
#include <metis.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcg_bsp.h"
#include "mmio.h"

void *dcg_xmalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0) {
        fprintf(stderr, "bench_cg_bsp: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Zeroed dcg_xmalloc. */
static void *zalloc(size_t bytes)
{
    void *p = dcg_xmalloc(bytes);
    memset(p, 0, bytes);
    return p;
}

void dcg_halo_alloc(dcg_halo *h, int nnb)
{
    h->nnb = nnb;
    h->peer = dcg_xmalloc((size_t)nnb * sizeof *h->peer);
    h->recv_off = dcg_xmalloc(((size_t)nnb + 1) * sizeof *h->recv_off);
    h->send_off = dcg_xmalloc(((size_t)nnb + 1) * sizeof *h->send_off);
    h->req = dcg_xmalloc(2 * (size_t)nnb * sizeof *h->req);
}

void dcg_halo_free(dcg_halo *h)
{
    free(h->peer);
    free(h->recv_off);
    free(h->send_off);
    free(h->req);
    free(h->send_idx);
    free(h->send_buf);
    memset(h, 0, sizeof *h);
}

/* Is (j, i) stored for every stored (i, j)? Columns ascend within a row: binary search. */
static int pattern_symmetric(const mm_csr *m)
{
    for (int64_t i = 0; i < m->n_rows; i++)
        for (int64_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
            const int64_t j = m->col[k];
            int64_t lo = m->row_ptr[j], hi = m->row_ptr[j + 1];
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (m->col[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == m->row_ptr[j + 1] || m->col[lo] != i)
                return 0;
        }
    return 1;
}

#if DCG_HAVE_METIS
/* METIS k-way parts of the matrix graph (no self loops), fixed seed; rank 0 only. */
static int metis_parts(const mm_csr *m, int P, int32_t *part)
{
    const int64_t N = m->n_rows;
    idx_t nv = (idx_t)N, ncon = 1, nparts = (idx_t)P, objval = 0;
    idx_t *xadj = dcg_xmalloc((size_t)(N + 1) * sizeof *xadj);
    idx_t *adj = dcg_xmalloc((size_t)m->nnz * sizeof *adj);
    idx_t *where = dcg_xmalloc((size_t)N * sizeof *where);
    int64_t e = 0;
    xadj[0] = 0;
    for (int64_t i = 0; i < N; i++) {
        for (int64_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++)
            if (m->col[k] != i)
                adj[e++] = (idx_t)m->col[k];
        xadj[i + 1] = (idx_t)e;
    }
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;
    const int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, NULL, NULL, NULL, &nparts, NULL, NULL,
                                       options, &objval, where);
    for (int64_t i = 0; rc == METIS_OK && i < N; i++)
        part[i] = (int32_t)where[i];
    free(xadj);
    free(adj);
    free(where);
    return rc == METIS_OK ? 0 : 1;
}
#else
static int metis_parts(const mm_csr *m, int P, int32_t *part)
{
    (void)m, (void)P, (void)part;
    return 1; /* built without METIS (metis.h or libmetis not found) */
}
#endif

/* part[i] for every row, the same on every rank; 0, or 1 with a message. */
static int partition(const mm_csr *m, int metis, int P, int rank, int32_t *part, char *err,
                     size_t err_bytes)
{
    const int64_t N = m->n_rows;
    if (!metis || P == 1) {
        for (int64_t r = 0; r < P; r++)
            for (int64_t i = r * N / P; i < (r + 1) * N / P; i++)
                part[i] = (int32_t)r;
        return 0;
    }
    int bad = 0;
    if (rank == 0)
        bad = metis_parts(m, P, part);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad) {
        snprintf(err, err_bytes, "%s on %lld rows into %d parts",
                 DCG_HAVE_METIS ? "METIS_PartGraphKway failed" : "built without METIS",
                 (long long)N, P);
        return 1;
    }
    MPI_Bcast(part, (int)N, MPI_INT32_T, 0, MPI_COMM_WORLD);
    return 0;
}

/* Ghost slots: slot[j] for every column j another rank owns that this rank's rows touch;
 * rcnt[q]: how many from owner q. */
static void ghost_slots(const mm_csr *m, const int32_t *part, int P, int rank, int64_t *slot,
                        int64_t *rcnt)
{
    const int64_t N = m->n_rows;
    for (int64_t j = 0; j < N; j++)
        slot[j] = -1;
    for (int64_t i = 0; i < N; i++) {
        if (part[i] != rank)
            continue;
        for (int64_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
            const int64_t j = m->col[k];
            if (part[j] != rank && slot[j] == -1) {
                slot[j] = -2;
                rcnt[part[j]]++;
            }
        }
    }
    int64_t *next = dcg_xmalloc((size_t)P * sizeof *next);
    int64_t off = 0;
    for (int q = 0; q < P; q++) {
        next[q] = off;
        off += rcnt[q];
    }
    for (int64_t j = 0; j < N; j++)
        if (slot[j] == -2)
            slot[j] = next[part[j]]++;
    free(next);
}

/* The halo map: neighbours (owners ascending), receive offsets, send lists (local indices). */
static int build_map(const mm_csr *m, const int32_t *part, const int64_t *loc, int P, int rank,
                     const int64_t *rcnt, dcg_halo *h)
{
    const int64_t N = m->n_rows;
    int64_t *scnt = zalloc((size_t)P * sizeof *scnt), *stamp = dcg_xmalloc((size_t)P * 8);
    int64_t *expect = dcg_xmalloc((size_t)P * sizeof *expect);
    for (int q = 0; q < P; q++)
        stamp[q] = -1;
    for (int pass = 0; pass < 2; pass++) {
        int64_t *fill = pass ? dcg_xmalloc((size_t)P * sizeof *fill) : NULL;
        for (int q = 0, mm = 0; pass && q < P; q++)
            if (rcnt[q] > 0 || scnt[q] > 0)
                fill[q] = h->send_off[mm++];
        for (int q = 0; q < P; q++)
            stamp[q] = -1;
        for (int64_t i = 0; i < N; i++) {
            if (part[i] != rank)
                continue;
            for (int64_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
                const int q = part[m->col[k]];
                if (q == rank || stamp[q] == i)
                    continue;
                stamp[q] = i;
                if (pass)
                    h->send_idx[fill[q]++] = (int32_t)loc[i];
                else
                    scnt[q]++;
            }
        }
        free(fill);
        if (pass)
            break;
        int nnb = 0;
        for (int q = 0; q < P; q++)
            nnb += rcnt[q] > 0 || scnt[q] > 0;
        dcg_halo_alloc(h, nnb);
        h->nghost = h->nsend = 0;
        for (int q = 0, mm = 0; q < P; q++) {
            if (!(rcnt[q] > 0 || scnt[q] > 0))
                continue;
            h->peer[mm] = q;
            h->recv_off[mm] = h->nghost;
            h->send_off[mm] = h->nsend;
            h->nghost += rcnt[q];
            h->nsend += scnt[q];
            mm++;
        }
        h->recv_off[nnb] = h->nghost;
        h->send_off[nnb] = h->nsend;
        h->send_idx = dcg_xmalloc((size_t)h->nsend * sizeof *h->send_idx);
        h->send_buf = dcg_xmalloc((size_t)h->nsend * sizeof *h->send_buf);
    }
    /* What each owner expects from this rank must be what this rank sends it. */
    MPI_Alltoall(rcnt, 1, MPI_INT64_T, expect, 1, MPI_INT64_T, MPI_COMM_WORLD);
    int bad = 0;
    for (int q = 0; q < P; q++)
        bad |= expect[q] != scnt[q];
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(scnt);
    free(stamp);
    free(expect);
    return bad;
}

/* This rank's rows in global order, columns renumbered: own rows by loc, others by slot. */
static void local_csr(const mm_csr *m, const int32_t *part, const int64_t *loc, const int64_t *slot,
                      int rank, int64_t n, dcg_csr *A)
{
    A->n = n;
    A->rp = dcg_xmalloc((size_t)(n + 1) * sizeof *A->rp);
    A->rp[0] = 0;
    int64_t r = 0, nnz = 0;
    for (int64_t i = 0; i < m->n_rows; i++)
        if (part[i] == rank) {
            nnz += m->row_ptr[i + 1] - m->row_ptr[i];
            A->rp[++r] = nnz;
        }
    A->nnz = nnz;
    A->col = dcg_xmalloc((size_t)nnz * sizeof *A->col);
    A->val = dcg_xmalloc((size_t)nnz * sizeof *A->val);
    int64_t e = 0;
    for (int64_t i = 0; i < m->n_rows; i++) {
        if (part[i] != rank)
            continue;
        for (int64_t k = m->row_ptr[i]; k < m->row_ptr[i + 1]; k++) {
            const int64_t j = m->col[k];
            A->col[e] = (int32_t)(part[j] == rank ? loc[j] : n + slot[j]);
            A->val[e++] = m->val[k];
        }
    }
}

int dcg_matrix_setup(const char *path, int metis, int P, int rank, dcg_csr *A, dcg_halo *h,
                     int64_t *n_global, char *err, size_t err_bytes)
{
    mm_csr m;
    memset(h, 0, sizeof *h);
    if (mm_read_csr(path, MM_REQUIRE_SQUARE, &m, err, err_bytes) != MM_OK)
        return 1;
    const int64_t N = m.n_rows;
    *n_global = N;
    if (N < P || !pattern_symmetric(&m)) {
        snprintf(err, err_bytes, "%s: %s", path,
                 N < P ? "fewer rows than ranks" : "pattern not symmetric (CG needs SPD)");
        mm_csr_free(&m);
        return 1;
    }
    int32_t *part = dcg_xmalloc((size_t)N * sizeof *part);
    int64_t *loc = dcg_xmalloc((size_t)N * sizeof *loc), *slot = dcg_xmalloc((size_t)N * 8);
    int64_t *cnt = zalloc((size_t)P * sizeof *cnt), *rcnt = zalloc((size_t)P * sizeof *rcnt);
    int rc = partition(&m, metis, P, rank, part, err, err_bytes);
    if (rc == 0) {
        for (int64_t i = 0; i < N; i++)
            loc[i] = cnt[part[i]]++;
        ghost_slots(&m, part, P, rank, slot, rcnt);
        rc = build_map(&m, part, loc, P, rank, rcnt, h);
        if (rc)
            snprintf(err, err_bytes, "%s: halo counts disagree between ranks", path);
        else
            local_csr(&m, part, loc, slot, rank, cnt[rank], A);
    }
    free(part);
    free(loc);
    free(slot);
    free(cnt);
    free(rcnt);
    mm_csr_free(&m);
    return rc;
}
