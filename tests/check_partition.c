/* tests/check_partition.c - examples/cg/partition.{c,h} under mpirun (1-4 ranks).
 *
 * A plain MPI program (Check's fork per test does not mix with MPI, as tests/check_mpi.c):
 * every rank runs every check; a failed check prints rank, line and what, and the program
 * exits 1 on every rank (MPI_Allreduce of the failure count). The halo maps are checked by
 * exchanging a vector whose owned values are their global row numbers: after the exchange,
 * local column c of local row i must hold the global column number of that entry, for every
 * entry of every local row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

static int failures, rank_, nranks_;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "check_partition: rank %d line %d: %s: ", rank_, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* One blocking exchange with the maps: x[n_local ..] from the neighbours. */
static void exchange(const cgp_part *p, double *x)
{
    const int nb = p->n_neighbors;
    MPI_Request *req = malloc(2 * (size_t)(nb + 1) * sizeof *req);
    double *sbuf = malloc((size_t)(p->send_ptr[nb] + 1) * sizeof(double));
    for (int64_t j = 0; j < p->send_ptr[nb]; j++)
        sbuf[j] = x[p->send_idx[j]];
    int nr = 0;
    for (int k = 0; k < nb; k++) {
        MPI_Irecv(x + p->n_local + p->recv_ptr[k], (int)(p->recv_ptr[k + 1] - p->recv_ptr[k]),
                  MPI_DOUBLE, p->neighbor[k], 7, MPI_COMM_WORLD, &req[nr++]);
        MPI_Isend(sbuf + p->send_ptr[k], (int)(p->send_ptr[k + 1] - p->send_ptr[k]), MPI_DOUBLE,
                  p->neighbor[k], 7, MPI_COMM_WORLD, &req[nr++]);
    }
    MPI_Waitall(nr, req, MPI_STATUSES_IGNORE);
    free(sbuf);
    free(req);
}

/* The structural checks every part must pass; @p expect(g, e) is the e-th global column of
 * global row g (ascending), @p count(g) its length. */
static void check_part(const cgp_part *p, int64_t (*count)(int64_t, const void *),
                       int64_t (*expect)(int64_t, int64_t, const void *), const void *ctx)
{
    CHECK(p->n_ext >= p->n_local && p->n_interior <= p->n_local, "sizes");
    CHECK(p->n_ext - p->n_local == p->recv_ptr[p->n_neighbors], "halo %lld vs receives %lld",
          (long long)(p->n_ext - p->n_local), (long long)p->recv_ptr[p->n_neighbors]);
    for (int k = 1; k < p->n_neighbors; k++)
        CHECK(p->neighbor[k - 1] < p->neighbor[k], "neighbours ascending");
    int64_t nnz = p->nnz;
    MPI_Allreduce(MPI_IN_PLACE, &nnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(nnz == p->nnz_global, "nnz %lld summed, %lld global", (long long)nnz,
          (long long)p->nnz_global);
    int64_t rows = p->n_local;
    MPI_Allreduce(MPI_IN_PLACE, &rows, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rows == p->n_global, "rows %lld summed", (long long)rows);
    double *x = malloc((size_t)(p->n_ext + 1) * sizeof(double));
    for (int64_t i = 0; i < p->n_ext; i++)
        x[i] = i < p->n_local ? (double)p->global_row[i] : -1.0;
    exchange(p, x);
    for (int64_t i = 0; i < p->n_local; i++) {
        const int64_t g = p->global_row[i];
        CHECK(p->row_ptr[i + 1] - p->row_ptr[i] == count(g, ctx), "row %lld length", (long long)g);
        int halo = 0;
        for (int64_t k = p->row_ptr[i], e = 0; k < p->row_ptr[i + 1]; k++, e++) {
            CHECK(p->col[k] >= 0 && p->col[k] < p->n_ext, "column index %d", (int)p->col[k]);
            halo |= p->col[k] >= p->n_local;
            CHECK(x[p->col[k]] == (double)expect(g, e, ctx), "row %lld entry %lld: %g, not %lld",
                  (long long)g, (long long)e, x[p->col[k]], (long long)expect(g, e, ctx));
            if (p->col[k] == i)
                CHECK((double)expect(g, e, ctx) == (double)g, "diagonal at local column i");
        }
        CHECK(halo == (i >= p->n_interior), "row %lld interior/boundary order", (long long)g);
    }
    free(x);
}

/* ---- HPCG ---- */
typedef struct {
    int64_t gx, gy, gz;
} box;

static void hpcg_cols(int64_t g, const box *b, int64_t *out, int64_t *n)
{
    const int64_t x = g % b->gx, y = (g / b->gx) % b->gy, z = g / (b->gx * b->gy);
    *n = 0;
    for (int64_t dz = -1; dz <= 1; dz++)
        for (int64_t dy = -1; dy <= 1; dy++)
            for (int64_t dx = -1; dx <= 1; dx++) {
                const int64_t cx = x + dx, cy = y + dy, cz = z + dz;
                if (cx >= 0 && cx < b->gx && cy >= 0 && cy < b->gy && cz >= 0 && cz < b->gz)
                    out[(*n)++] = cx + b->gx * (cy + b->gy * cz);
            }
}

static int64_t hpcg_count(int64_t g, const void *ctx)
{
    int64_t c[27], n;
    hpcg_cols(g, (const box *)ctx, c, &n);
    return n;
}

static int64_t hpcg_expect(int64_t g, int64_t e, const void *ctx)
{
    int64_t c[27], n;
    hpcg_cols(g, (const box *)ctx, c, &n);
    return e < n ? c[e] : -1;
}

static void check_hpcg(int64_t nx, int64_t ny, int64_t nz)
{
    cgp_part p;
    char err[256];
    CHECK(cgp_hpcg(MPI_COMM_WORLD, nx, ny, nz, &p, err, sizeof err) == CGP_OK, "%s", err);
    int d[3];
    cgp_process_grid(nranks_, d);
    box b = {nx * d[0], ny * d[1], nz * d[2]};
    CHECK(p.n_global == b.gx * b.gy * b.gz, "n_global");
    CHECK(p.n_local == nx * ny * nz, "n_local");
    /* Interior: the points with all 26 neighbours on this rank or outside the global grid. */
    check_part(&p, hpcg_count, hpcg_expect, &b);
    cgp_free(&p);
    CHECK(p.row_ptr == NULL && p.n_local == 0, "cgp_free zeroes");
}

/* ---- a general matrix: 5-point Laplacian on an a x b grid, CSR with sorted columns ---- */
typedef struct {
    int64_t n;
    int64_t *rp;
    int32_t *col;
    double *val;
} csr;

static void laplace(int64_t a, int64_t b, csr *m)
{
    m->n = a * b;
    m->rp = malloc((size_t)(m->n + 1) * sizeof(int64_t));
    m->col = malloc((size_t)(5 * m->n) * sizeof(int32_t));
    m->val = malloc((size_t)(5 * m->n) * sizeof(double));
    int64_t k = 0;
    for (int64_t i = 0; i < m->n; i++) {
        const int64_t x = i % a, y = i / a;
        m->rp[i] = k;
        const int64_t nb[5] = {y > 0 ? i - a : -1, x > 0 ? i - 1 : -1, i, x < a - 1 ? i + 1 : -1,
                               y < b - 1 ? i + a : -1};
        for (int e = 0; e < 5; e++)
            if (nb[e] >= 0) {
                m->col[k] = (int32_t)nb[e];
                m->val[k++] = nb[e] == i ? 4.0 : -1.0;
            }
    }
    m->rp[m->n] = k;
}

static int64_t csr_count(int64_t g, const void *ctx)
{
    const csr *m = (const csr *)ctx;
    return m->rp[g + 1] - m->rp[g];
}

static int64_t csr_expect(int64_t g, int64_t e, const void *ctx)
{
    const csr *m = (const csr *)ctx;
    return m->col[m->rp[g] + e];
}

/* A matrix bad on the last rank only, or of another size there: every rank fails with a
 * message (it used to return at once on that rank alone, leaving the others in a collective
 * of the partition). */
static void check_bad_on_one_rank(csr *m, cgp_method method)
{
    const int last = rank_ == nranks_ - 1;
    char err[256] = "";
    cgp_part p;
    const int32_t keep = m->col[5];
    if (last)
        m->col[5] = -1;
    int rc = cgp_from_csr(MPI_COMM_WORLD, m->n, m->rp, m->col, m->val, method, &p, err, sizeof err);
    m->col[5] = keep;
    CHECK(rc == CGP_EINVAL, "column bad on rank %d only: status %d", nranks_ - 1, rc);
    CHECK(strstr(err, last ? "out of range" : "another rank rejected") != NULL, "message: %s", err);
    if (nranks_ < 2 || nranks_ > 30)
        return;
    /* A diagonal matrix of 2P rows, one row more on the last rank: valid everywhere alone. */
    const int64_t n = 2 * nranks_ + (last ? 1 : 0);
    int64_t rp[64];
    int32_t col[64];
    double val[64];
    for (int64_t i = 0; i <= n; i++) {
        rp[i] = i;
        col[i] = (int32_t)i;
        val[i] = 2.0;
    }
    err[0] = '\0';
    rc = cgp_from_csr(MPI_COMM_WORLD, n, rp, col, val, method, &p, err, sizeof err);
    CHECK(rc == CGP_EINVAL && strstr(err, "different sizes"), "sizes differ: %d %s", rc, err);
}

static void check_general(cgp_method method)
{
    csr m;
    laplace(23, 17, &m);
    cgp_part p;
    char err[256];
    const int rc =
        cgp_from_csr(MPI_COMM_WORLD, m.n, m.rp, m.col, m.val, method, &p, err, sizeof err);
    if (method == CGP_METIS && !cgp_have_metis()) {
        CHECK(rc == CGP_ENOMETIS && strstr(err, "--partition block"), "no METIS: %s", err);
    } else {
        CHECK(rc == CGP_OK, "%s", err);
        if (method == CGP_BLOCK) {
            const int64_t q = m.n / nranks_;
            CHECK(p.n_local == q || p.n_local == q + 1, "block of %lld rows", (long long)p.n_local);
            int64_t lo = m.n, hi = -1; /* contiguous: max - min + 1 == n_local */
            for (int64_t i = 0; i < p.n_local; i++) {
                lo = p.global_row[i] < lo ? p.global_row[i] : lo;
                hi = p.global_row[i] > hi ? p.global_row[i] : hi;
            }
            CHECK(hi - lo + 1 == p.n_local, "block rows %lld..%lld", (long long)lo, (long long)hi);
        }
        if (rc == CGP_OK)
            check_part(&p, csr_count, csr_expect, &m);
        cgp_free(&p);
    }
    /* Bad input: every rank returns the same status with a message. */
    err[0] = '\0';
    CHECK(cgp_from_csr(MPI_COMM_WORLD, m.n, m.rp, m.col, m.val, (cgp_method)7, &p, err,
                       sizeof err) == CGP_EINVAL &&
              strstr(err, "method"),
          "bad method: %s", err);
    const int32_t col3 = m.col[3];
    m.col[3] = (int32_t)m.n;
    CHECK(cgp_from_csr(MPI_COMM_WORLD, m.n, m.rp, m.col, m.val, method, &p, err, sizeof err) ==
                  CGP_EINVAL &&
              strstr(err, "out of range"),
          "bad column: %s", err);
    if (nranks_ > 1)
        CHECK(cgp_from_csr(MPI_COMM_WORLD, nranks_ - 1, m.rp, m.col, m.val, method, &p, err,
                           sizeof err) == CGP_EINVAL &&
                  strstr(err, "cannot be split"),
              "too few rows: %s", err);
    m.col[3] = col3;
    check_bad_on_one_rank(&m, method);
    free(m.rp);
    free(m.col);
    free(m.val);
}

static void check_process_grid(void)
{
    static const int cases[][4] = {{1, 1, 1, 1}, {2, 2, 1, 1}, {3, 3, 1, 1},  {4, 2, 2, 1},
                                   {6, 3, 2, 1}, {8, 2, 2, 2}, {12, 3, 2, 2}, {64, 4, 4, 4}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int d[3] = {0, 0, 0};
        CHECK(cgp_process_grid(cases[k][0], d) == CGP_OK, "grid %d", cases[k][0]);
        CHECK(d[0] == cases[k][1] && d[1] == cases[k][2] && d[2] == cases[k][3],
              "%d ranks -> %dx%dx%d", cases[k][0], d[0], d[1], d[2]);
    }
    int d[3];
    CHECK(cgp_process_grid(0, d) == CGP_EINVAL, "0 ranks");
    CHECK(cgp_process_grid(2, NULL) == CGP_EINVAL, "NULL dims");
    char err[256];
    cgp_part p;
    CHECK(cgp_hpcg(MPI_COMM_WORLD, 0, 4, 4, &p, err, sizeof err) == CGP_EINVAL &&
              strstr(err, "invalid"),
          "grid 0: %s", err);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
    check_process_grid();
    check_hpcg(4, 4, 4);
    check_hpcg(3, 5, 2);
    check_hpcg(1, 1, 1);
    check_general(CGP_BLOCK);
    check_general(CGP_METIS);
    int all = failures;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0)
        printf("check_partition: %d ranks, %d failed checks\n", nranks_, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
