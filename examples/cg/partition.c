/*
 * examples/cg/partition.c - row partitions and halo maps (partition.h).
 *
 * Both entry points reduce to one builder: every rank holds its owned rows in a "natural"
 * order (ascending global row) with global column numbers, plus two functions that give, for
 * any global row, its owner and its natural index there. The builder finds the halo columns,
 * renumbers the rows interior-first, translates the columns into local indices and asks each
 * owner (MPI_Alltoall + MPI_Alltoallv) which of its rows to send.
 */
#include "partition.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(CGP_HAVE_METIS) && CGP_HAVE_METIS
#include <metis.h>
#endif

/* ---- helpers ----------------------------------------------------------------------------- */

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* malloc that never returns NULL for a zero size (so NULL always means out of memory). */
static void *xmalloc(size_t n)
{
    return malloc(n ? n : 1);
}

/* Agree on a status over comm: the most negative one wins (CGP_OK when all succeeded). */
static int agree(MPI_Comm comm, int rc)
{
    int all = rc;
    if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return CGP_EMPI;
    return all;
}

int cgp_have_metis(void)
{
#if defined(CGP_HAVE_METIS) && CGP_HAVE_METIS
    return 1;
#else
    return 0;
#endif
}

int64_t cgp_halo_count(const cgp_part *p)
{
    return p ? p->n_ext - p->n_local : 0;
}

void cgp_free(cgp_part *p)
{
    if (!p)
        return;
    free(p->row_ptr);
    free(p->col);
    free(p->val);
    free(p->global_row);
    free(p->neighbor);
    free(p->send_ptr);
    free(p->send_idx);
    free(p->recv_ptr);
    memset(p, 0, sizeof *p);
}

int cgp_process_grid(int nranks, int dims[3])
{
    if (nranks < 1 || !dims)
        return CGP_EINVAL;
    int best = -1;
    for (int a = 1; a <= nranks; a++) {
        if (nranks % a)
            continue;
        for (int b = 1; b <= a; b++) {
            if ((nranks / a) % b)
                continue;
            const int c = nranks / a / b;
            if (c > b)
                continue; /* a >= b >= c */
            const int spread = a - c;
            if (best < 0 || spread < best) {
                best = spread;
                dims[0] = a;
                dims[1] = b;
                dims[2] = c;
            }
        }
    }
    return CGP_OK;
}

/* ---- the builder ------------------------------------------------------------------------- */

/* Where a global row lives: its owner rank and its index in the owner's natural order. */
typedef struct {
    int (*owner)(int64_t g, const void *ctx);
    int64_t (*natural)(int64_t g, const void *ctx);
    const void *ctx;
} owner_map;

/* One halo column: owner, then global row (the sort key of the halo). */
typedef struct {
    int64_t owner, g;
} halo_key;

static int halo_cmp(const void *a, const void *b)
{
    const halo_key *x = (const halo_key *)a, *y = (const halo_key *)b;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return (x->g > y->g) - (x->g < y->g);
}

/* Input of the builder: n rows in natural order with global numbers and global columns. */
typedef struct {
    int64_t n;
    const int64_t *grow, *row_ptr, *gcol;
    const double *val;
} natural_rows;

/* Collect the sorted, unique halo columns of @p in. */
static int find_halo(const cgp_part *p, const natural_rows *in, const owner_map *om, halo_key **out,
                     int64_t *count)
{
    const int64_t nnz = in->row_ptr[in->n];
    halo_key *h = (halo_key *)xmalloc((size_t)nnz * sizeof *h);
    if (!h)
        return CGP_ENOMEM;
    int64_t k = 0;
    for (int64_t e = 0; e < nnz; e++) {
        const int o = om->owner(in->gcol[e], om->ctx);
        if (o != p->rank) {
            h[k].owner = o;
            h[k].g = in->gcol[e];
            k++;
        }
    }
    qsort(h, (size_t)k, sizeof *h, halo_cmp);
    int64_t u = 0;
    for (int64_t e = 0; e < k; e++)
        if (u == 0 || halo_cmp(&h[u - 1], &h[e]) != 0)
            h[u++] = h[e];
    *out = h;
    *count = u;
    return CGP_OK;
}

/* Rows renumbered interior-first; local CSR with extended column indices. */
static int build_local_rows(cgp_part *p, const natural_rows *in, const owner_map *om,
                            const halo_key *h, int64_t nh, int64_t *perm)
{
    const int64_t n = in->n;
    unsigned char *bnd = (unsigned char *)xmalloc((size_t)n);
    if (!bnd)
        return CGP_ENOMEM;
    int64_t n_int = 0;
    for (int64_t i = 0; i < n; i++) {
        bnd[i] = 0;
        for (int64_t e = in->row_ptr[i]; e < in->row_ptr[i + 1]; e++)
            if (om->owner(in->gcol[e], om->ctx) != p->rank)
                bnd[i] = 1;
        n_int += !bnd[i];
    }
    int64_t ni = 0, nb = n_int;
    for (int64_t i = 0; i < n; i++)
        perm[i] = bnd[i] ? nb++ : ni++;
    free(bnd);
    p->n_local = n;
    p->n_interior = n_int;
    p->n_ext = n + nh;
    p->nnz = in->row_ptr[n];
    p->row_ptr = (int64_t *)xmalloc((size_t)(n + 1) * sizeof(int64_t));
    p->col = (int32_t *)xmalloc((size_t)p->nnz * sizeof(int32_t));
    p->val = (double *)xmalloc((size_t)p->nnz * sizeof(double));
    p->global_row = (int64_t *)xmalloc((size_t)n * sizeof(int64_t));
    if (!p->row_ptr || !p->col || !p->val || !p->global_row)
        return CGP_ENOMEM;
    /* Row lengths by new index, then offsets, then fill. */
    for (int64_t i = 0; i < n; i++) {
        p->row_ptr[perm[i] + 1] = in->row_ptr[i + 1] - in->row_ptr[i];
        p->global_row[perm[i]] = in->grow[i];
    }
    p->row_ptr[0] = 0;
    for (int64_t i = 0; i < n; i++)
        p->row_ptr[i + 1] += p->row_ptr[i];
    for (int64_t i = 0; i < n; i++) {
        int64_t k = p->row_ptr[perm[i]];
        for (int64_t e = in->row_ptr[i]; e < in->row_ptr[i + 1]; e++, k++) {
            const int64_t g = in->gcol[e];
            const int o = om->owner(g, om->ctx);
            int64_t c;
            if (o == p->rank) {
                c = perm[om->natural(g, om->ctx)];
            } else {
                halo_key key;
                key.owner = o;
                key.g = g;
                const halo_key *f =
                    (const halo_key *)bsearch(&key, h, (size_t)nh, sizeof *h, halo_cmp);
                c = n + (f - h);
            }
            p->col[k] = (int32_t)c;
            p->val[k] = in->val[e];
        }
    }
    return CGP_OK;
}

/* Ask every owner for our halo columns; build send lists from what the others ask of us. */
static int exchange_maps(MPI_Comm comm, cgp_part *p, const owner_map *om, const halo_key *h,
                         int64_t nh, const int64_t *perm)
{
    const int P = p->nranks;
    int *cnt = (int *)calloc((size_t)(4 * P + 4), sizeof(int));
    int64_t *want = (int64_t *)xmalloc((size_t)nh * sizeof(int64_t));
    if (!cnt || !want) {
        free(cnt);
        free(want);
        return CGP_ENOMEM;
    }
    int *rcnt = cnt + P, *sdis = cnt + 2 * P, *rdis = cnt + 3 * P;
    for (int64_t k = 0; k < nh; k++) {
        cnt[h[k].owner]++;
        want[k] = h[k].g;
    }
    int rc = CGP_OK;
    if (MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm) != MPI_SUCCESS)
        rc = CGP_EMPI;
    int64_t total = 0;
    for (int q = 0; q < P; q++) {
        sdis[q] = q ? sdis[q - 1] + cnt[q - 1] : 0;
        rdis[q] = (int)total;
        total += rcnt[q];
    }
    int64_t *asked = (int64_t *)xmalloc((size_t)total * sizeof(int64_t));
    if (rc == CGP_OK && !asked)
        rc = CGP_ENOMEM;
    rc = agree(comm, rc);
    if (rc == CGP_OK && MPI_Alltoallv(want, cnt, sdis, MPI_INT64_T, asked, rcnt, rdis, MPI_INT64_T,
                                      comm) != MPI_SUCCESS)
        rc = CGP_EMPI;
    int nb = 0;
    for (int q = 0; q < P; q++)
        nb += (cnt[q] > 0 || rcnt[q] > 0);
    p->n_neighbors = nb;
    p->neighbor = (int *)xmalloc((size_t)nb * sizeof(int));
    p->send_ptr = (int64_t *)xmalloc((size_t)(nb + 1) * sizeof(int64_t));
    p->recv_ptr = (int64_t *)xmalloc((size_t)(nb + 1) * sizeof(int64_t));
    p->send_idx = (int32_t *)xmalloc((size_t)total * sizeof(int32_t));
    if (rc == CGP_OK && (!p->neighbor || !p->send_ptr || !p->recv_ptr || !p->send_idx))
        rc = CGP_ENOMEM;
    if (rc == CGP_OK) {
        int k = 0;
        p->send_ptr[0] = 0;
        p->recv_ptr[0] = 0;
        for (int q = 0; q < P; q++) {
            if (!(cnt[q] > 0 || rcnt[q] > 0))
                continue;
            p->neighbor[k] = q;
            p->recv_ptr[k + 1] = p->recv_ptr[k] + cnt[q];
            p->send_ptr[k + 1] = p->send_ptr[k] + rcnt[q];
            for (int e = 0; e < rcnt[q]; e++) {
                const int64_t g = asked[rdis[q] + e];
                p->send_idx[p->send_ptr[k] + e] = (int32_t)perm[om->natural(g, om->ctx)];
            }
            k++;
        }
    }
    free(asked);
    free(want);
    free(cnt);
    return rc;
}

static int build(MPI_Comm comm, cgp_part *p, const natural_rows *in, const owner_map *om, char *err,
                 size_t errlen)
{
    halo_key *h = NULL;
    int64_t nh = 0;
    int64_t *perm = (int64_t *)xmalloc((size_t)in->n * sizeof(int64_t));
    int rc = perm ? find_halo(p, in, om, &h, &nh) : CGP_ENOMEM;
    if (rc == CGP_OK)
        rc = build_local_rows(p, in, om, h, nh, perm);
    rc = agree(comm, rc);
    if (rc == CGP_OK)
        rc = exchange_maps(comm, p, om, h, nh, perm);
    rc = agree(comm, rc);
    free(h);
    free(perm);
    if (rc != CGP_OK) {
        cgp_free(p);
        return fail(err, errlen, rc, "building the halo maps failed on some rank: %s",
                    rc == CGP_ENOMEM ? "out of memory" : "an MPI call failed");
    }
    return CGP_OK;
}

/* ---- HPCG -------------------------------------------------------------------------------- */

typedef struct {
    int64_t nx, ny, nz; /* per rank */
    int64_t gx, gy, gz; /* global */
    int px, py;         /* process grid (pz implied) */
} hpcg_geom;

static int hpcg_owner(int64_t g, const void *ctx)
{
    const hpcg_geom *G = (const hpcg_geom *)ctx;
    const int64_t x = g % G->gx, y = (g / G->gx) % G->gy, z = g / (G->gx * G->gy);
    return (int)(x / G->nx + G->px * (y / G->ny + G->py * (z / G->nz)));
}

static int64_t hpcg_natural(int64_t g, const void *ctx)
{
    const hpcg_geom *G = (const hpcg_geom *)ctx;
    const int64_t x = g % G->gx, y = (g / G->gx) % G->gy, z = g / (G->gx * G->gy);
    return x % G->nx + G->nx * (y % G->ny + G->ny * (z % G->nz));
}

/* Generate this rank's rows (natural order: x fastest in the box) with global columns. */
static int hpcg_rows(const hpcg_geom *G, int rank, int64_t *grow, int64_t *row_ptr, int64_t *gcol,
                     double *val)
{
    const int dims0 = G->px, dims1 = G->py;
    const int64_t ox = (rank % dims0) * G->nx, oy = ((rank / dims0) % dims1) * G->ny,
                  oz = (rank / (dims0 * dims1)) * G->nz;
    int64_t k = 0, i = 0;
    for (int64_t lz = 0; lz < G->nz; lz++)
        for (int64_t ly = 0; ly < G->ny; ly++)
            for (int64_t lx = 0; lx < G->nx; lx++, i++) {
                const int64_t x = ox + lx, y = oy + ly, z = oz + lz;
                const int64_t g = x + G->gx * (y + G->gy * z);
                grow[i] = g;
                row_ptr[i] = k;
                for (int64_t dz = -1; dz <= 1; dz++)
                    for (int64_t dy = -1; dy <= 1; dy++)
                        for (int64_t dx = -1; dx <= 1; dx++) {
                            const int64_t cx = x + dx, cy = y + dy, cz = z + dz;
                            if (cx < 0 || cx >= G->gx || cy < 0 || cy >= G->gy || cz < 0 ||
                                cz >= G->gz)
                                continue;
                            const int64_t c = cx + G->gx * (cy + G->gy * cz);
                            gcol[k] = c;
                            val[k] = c == g ? 26.0 : -1.0;
                            k++;
                        }
            }
    row_ptr[i] = k;
    return CGP_OK;
}

int cgp_hpcg(MPI_Comm comm, int64_t nx, int64_t ny, int64_t nz, cgp_part *p, char *err,
             size_t errlen)
{
    if (!p)
        return fail(err, errlen, CGP_EINVAL, "cgp_hpcg: part is NULL");
    memset(p, 0, sizeof *p);
    if (MPI_Comm_rank(comm, &p->rank) != MPI_SUCCESS ||
        MPI_Comm_size(comm, &p->nranks) != MPI_SUCCESS)
        return fail(err, errlen, CGP_EMPI, "cgp_hpcg: MPI_Comm_rank/size failed");
    int dims[3] = {1, 1, 1};
    cgp_process_grid(p->nranks, dims);
    hpcg_geom G;
    G.nx = nx;
    G.ny = ny;
    G.nz = nz;
    G.px = dims[0];
    G.py = dims[1];
    if (nx < 1 || ny < 1 || nz < 1 || nx > INT32_MAX / dims[0] || ny > INT32_MAX / dims[1] ||
        nz > INT32_MAX / dims[2])
        return fail(err, errlen, CGP_EINVAL, "HPCG grid %lldx%lldx%lld per rank is invalid",
                    (long long)nx, (long long)ny, (long long)nz);
    G.gx = nx * dims[0];
    G.gy = ny * dims[1];
    G.gz = nz * dims[2];
    if (G.gx > INT32_MAX / G.gy || G.gx * G.gy > INT32_MAX / G.gz)
        return fail(err, errlen, CGP_EINVAL,
                    "HPCG global grid %lldx%lldx%lld has more than 2^31 - 1 rows", (long long)G.gx,
                    (long long)G.gy, (long long)G.gz);
    p->n_global = G.gx * G.gy * G.gz;
    /* Entries per axis: 3 per point, less one at each global end. */
    p->nnz_global = (3 * G.gx - 2) * (3 * G.gy - 2) * (3 * G.gz - 2);
    const int64_t n = nx * ny * nz;
    natural_rows in;
    int64_t *grow = (int64_t *)xmalloc((size_t)n * sizeof(int64_t));
    int64_t *rp = (int64_t *)xmalloc((size_t)(n + 1) * sizeof(int64_t));
    int64_t *gcol = (int64_t *)xmalloc((size_t)(27 * n) * sizeof(int64_t));
    double *val = (double *)xmalloc((size_t)(27 * n) * sizeof(double));
    int rc = (grow && rp && gcol && val) ? CGP_OK : CGP_ENOMEM;
    if (rc == CGP_OK)
        rc = hpcg_rows(&G, p->rank, grow, rp, gcol, val);
    rc = agree(comm, rc);
    if (rc == CGP_OK) {
        in.n = n;
        in.grow = grow;
        in.row_ptr = rp;
        in.gcol = gcol;
        in.val = val;
        owner_map om;
        om.owner = hpcg_owner;
        om.natural = hpcg_natural;
        om.ctx = &G;
        rc = build(comm, p, &in, &om, err, errlen);
    } else {
        fail(err, errlen, rc, "out of memory for %lld HPCG rows", (long long)n);
    }
    free(grow);
    free(rp);
    free(gcol);
    free(val);
    return rc;
}

/* ---- general matrices -------------------------------------------------------------------- */

typedef struct {
    const int *part;    /* owner of every global row */
    const int64_t *nat; /* natural index of every global row on its owner */
} table_map;

static int table_owner(int64_t g, const void *ctx)
{
    return ((const table_map *)ctx)->part[g];
}

static int64_t table_natural(int64_t g, const void *ctx)
{
    return ((const table_map *)ctx)->nat[g];
}

#if defined(CGP_HAVE_METIS) && CGP_HAVE_METIS
/* METIS_PartGraphKway on the graph of A + A^T without the diagonal (rank 0 only). */
static int metis_partition(int64_t n, const int64_t *row_ptr, const int32_t *col, int nparts,
                           int *part, char *err, size_t errlen)
{
    idx_t *deg = (idx_t *)calloc((size_t)n + 1, sizeof(idx_t));
    if (!deg)
        return fail(err, errlen, CGP_ENOMEM, "out of memory for the METIS graph");
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = row_ptr[i]; e < row_ptr[i + 1]; e++)
            if (col[e] != i) {
                deg[i + 1]++;
                deg[col[e] + 1]++;
            }
    for (int64_t i = 0; i < n; i++)
        deg[i + 1] += deg[i];
    idx_t *adj = (idx_t *)xmalloc((size_t)deg[n] * sizeof(idx_t));
    idx_t *fill = (idx_t *)xmalloc(((size_t)n + 1) * sizeof(idx_t));
    idx_t *where = (idx_t *)xmalloc((size_t)n * sizeof(idx_t));
    int rc = CGP_OK;
    if (!adj || !fill || !where) {
        rc = fail(err, errlen, CGP_ENOMEM, "out of memory for the METIS graph");
        goto out;
    }
    memcpy(fill, deg, ((size_t)n + 1) * sizeof(idx_t));
    for (int64_t i = 0; i < n; i++)
        for (int64_t e = row_ptr[i]; e < row_ptr[i + 1]; e++)
            if (col[e] != i) {
                adj[fill[i]++] = col[e];
                adj[fill[col[e]]++] = (idx_t)i;
            }
    /* Sort and deduplicate each vertex's list (a symmetric file gives each edge twice once
     * mirrored), compacting in place. */
    idx_t out_k = 0;
    for (int64_t i = 0; i < n; i++) {
        const idx_t b = deg[i], e = deg[i + 1];
        for (idx_t a = b + 1; a < e; a++) { /* insertion sort: rows are short */
            const idx_t v = adj[a];
            idx_t c = a;
            while (c > b && adj[c - 1] > v) {
                adj[c] = adj[c - 1];
                c--;
            }
            adj[c] = v;
        }
        const idx_t start = out_k;
        for (idx_t a = b; a < e; a++)
            if (a == b || adj[a] != adj[a - 1])
                adj[out_k++] = adj[a];
        deg[i] = start;
    }
    deg[n] = out_k;
    idx_t nv = (idx_t)n, ncon = 1, np = nparts, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_NUMBERING] = 0;
    const int mrc = METIS_PartGraphKway(&nv, &ncon, deg, adj, NULL, NULL, NULL, &np, NULL, NULL,
                                        options, &objval, where);
    if (mrc != METIS_OK) {
        rc = fail(err, errlen, CGP_ENOMETIS, "METIS_PartGraphKway failed (status %d)", mrc);
        goto out;
    }
    for (int64_t i = 0; i < n; i++)
        part[i] = (int)where[i];
out:
    free(deg);
    free(adj);
    free(fill);
    free(where);
    return rc;
}
#endif

/* The owner of every row: blocks, or METIS on rank 0 broadcast to all. */
static int owners(MPI_Comm comm, const cgp_part *p, int64_t n, const int64_t *row_ptr,
                  const int32_t *col, cgp_method m, int *part, char *err, size_t errlen)
{
    if (m == CGP_BLOCK || p->nranks == 1) {
        const int64_t q = n / p->nranks, r = n % p->nranks;
        for (int64_t i = 0; i < n; i++) /* the first r blocks have q + 1 rows */
            part[i] = (int)(i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q);
        return CGP_OK;
    }
#if defined(CGP_HAVE_METIS) && CGP_HAVE_METIS
    int rc = CGP_OK;
    char msg[256] = "";
    if (p->rank == 0)
        rc = metis_partition(n, row_ptr, col, p->nranks, part, msg, sizeof msg);
    if (MPI_Bcast(&rc, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        return fail(err, errlen, CGP_EMPI, "MPI_Bcast of the METIS status failed");
    if (rc != CGP_OK) {
        MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm);
        return fail(err, errlen, rc, "%s", msg);
    }
    if (MPI_Bcast(part, (int)n, MPI_INT, 0, comm) != MPI_SUCCESS)
        return fail(err, errlen, CGP_EMPI, "MPI_Bcast of the METIS partition failed");
    return CGP_OK;
#else
    (void)comm;
    (void)row_ptr;
    (void)col;
    (void)part;
    return fail(err, errlen, CGP_ENOMETIS,
                "--partition metis: this build has no METIS (install libmetis-dev and "
                "reconfigure), use --partition block");
#endif
}

/* This rank's rows (owner part[i] == rank) in natural order, with global columns, then the
 * builder. */
static int extract_and_build(MPI_Comm comm, cgp_part *p, int64_t n, const int64_t *row_ptr,
                             const int32_t *col, const double *val, const int *part,
                             const int64_t *nat, int64_t nl, char *err, size_t errlen)
{
    int64_t nnz = 0;
    for (int64_t i = 0; i < n; i++)
        if (part[i] == p->rank)
            nnz += row_ptr[i + 1] - row_ptr[i];
    int64_t *grow = (int64_t *)xmalloc((size_t)nl * sizeof(int64_t));
    int64_t *rp = (int64_t *)xmalloc((size_t)(nl + 1) * sizeof(int64_t));
    int64_t *gcol = (int64_t *)xmalloc((size_t)nnz * sizeof(int64_t));
    double *lval = (double *)xmalloc((size_t)nnz * sizeof(double));
    int rc = agree(comm, (grow && rp && gcol && lval) ? CGP_OK : CGP_ENOMEM);
    if (rc == CGP_OK) {
        int64_t k = 0, r = 0;
        rp[0] = 0;
        for (int64_t i = 0; i < n; i++) {
            if (part[i] != p->rank)
                continue;
            grow[r] = i;
            for (int64_t e = row_ptr[i]; e < row_ptr[i + 1]; e++, k++) {
                gcol[k] = col[e];
                lval[k] = val[e];
            }
            rp[++r] = k;
        }
        natural_rows in;
        in.n = nl;
        in.grow = grow;
        in.row_ptr = rp;
        in.gcol = gcol;
        in.val = lval;
        table_map tm;
        tm.part = part;
        tm.nat = nat;
        owner_map om;
        om.owner = table_owner;
        om.natural = table_natural;
        om.ctx = &tm;
        rc = build(comm, p, &in, &om, err, errlen);
    } else {
        fail(err, errlen, rc, "out of memory for the local rows");
    }
    free(grow);
    free(rp);
    free(gcol);
    free(lval);
    return rc;
}

/* Validate cgp_from_csr's input on this rank, then agree over @p comm, so that a matrix that
 * is bad (or of another size) on some ranks only fails every rank instead of leaving the
 * others in the next collective. */
static int check_input(MPI_Comm comm, const cgp_part *p, int64_t n, const int64_t *row_ptr,
                       const int32_t *col, cgp_method m, char *err, size_t errlen)
{
    int rc = CGP_OK;
    if (m != CGP_BLOCK && m != CGP_METIS)
        rc = fail(err, errlen, CGP_EINVAL, "unknown partition method %d", (int)m);
    else if (n < p->nranks || n > INT32_MAX)
        rc = fail(err, errlen, CGP_EINVAL,
                  "a matrix of %lld rows cannot be split over %d ranks (each needs a row)",
                  (long long)n, p->nranks);
    for (int64_t e = 0; rc == CGP_OK && e < row_ptr[n]; e++)
        if (col[e] < 0 || col[e] >= n)
            rc = fail(err, errlen, CGP_EINVAL, "column index %d out of range 0..%lld", (int)col[e],
                      (long long)n - 1);
    /* {status, n, -n}: the smallest status, and n's minimum and maximum over the ranks. */
    int64_t mine[3] = {rc, n, -n}, all[3];
    if (MPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return fail(err, errlen, CGP_EMPI, "cgp_from_csr: MPI_Allreduce failed");
    if (rc != CGP_OK)
        return rc;
    if (all[0] != CGP_OK)
        return fail(err, errlen, (int)all[0], "another rank rejected its copy of the matrix");
    if (all[1] != -all[2])
        return fail(err, errlen, CGP_EINVAL,
                    "the ranks hold matrices of different sizes (%lld to %lld rows)",
                    (long long)all[1], (long long)-all[2]);
    return CGP_OK;
}

int cgp_from_csr(MPI_Comm comm, int64_t n, const int64_t *row_ptr, const int32_t *col,
                 const double *val, cgp_method m, cgp_part *p, char *err, size_t errlen)
{
    if (!p || !row_ptr || (!col && n > 0) || (!val && n > 0))
        return fail(err, errlen, CGP_EINVAL, "cgp_from_csr: NULL argument");
    memset(p, 0, sizeof *p);
    if (MPI_Comm_rank(comm, &p->rank) != MPI_SUCCESS ||
        MPI_Comm_size(comm, &p->nranks) != MPI_SUCCESS)
        return fail(err, errlen, CGP_EMPI, "cgp_from_csr: MPI_Comm_rank/size failed");
    int rc = check_input(comm, p, n, row_ptr, col, m, err, errlen);
    if (rc != CGP_OK) {
        memset(p, 0, sizeof *p);
        return rc;
    }
    p->n_global = n;
    p->nnz_global = row_ptr[n];
    int *part = (int *)xmalloc((size_t)n * sizeof(int));
    int64_t *nat = (int64_t *)xmalloc((size_t)n * sizeof(int64_t));
    int64_t *cnt = (int64_t *)calloc((size_t)p->nranks, sizeof(int64_t));
    rc = agree(comm, (part && nat && cnt) ? CGP_OK : CGP_ENOMEM);
    if (rc != CGP_OK)
        fail(err, errlen, rc, "out of memory for the row owners of %lld rows", (long long)n);
    if (rc == CGP_OK)
        rc = owners(comm, p, n, row_ptr, col, m, part, err, errlen);
    if (rc == CGP_OK) {
        for (int64_t i = 0; i < n; i++)
            nat[i] = cnt[part[i]]++;
        rc = extract_and_build(comm, p, n, row_ptr, col, val, part, nat, cnt[p->rank], err, errlen);
    }
    free(part);
    free(nat);
    free(cnt);
    if (rc != CGP_OK)
        cgp_free(p);
    return rc;
}
