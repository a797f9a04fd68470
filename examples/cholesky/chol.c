/*
 * examples/cholesky/chol.c - tile storage, test matrix, tile kernels as engine ops, the
 * factorization DAG and the residual checks. See chol.h for the algorithm and priorities.
 */
#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE (Linux), on top of _POSIX_C_SOURCE */
#include "chol.h"

#include <cblas.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Tiles start on 64-byte boundaries so BLAS kernels see cache-line aligned columns 0. */
enum { CHOL_ALIGN_DOUBLES = 8 };

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

/* Transparent huge pages are 2 MiB on x86-64 and arm64 with 4 KiB base pages. */
enum { CHOL_HUGE_PAGE = 2u << 20 };

void *chol_alloc_huge(size_t bytes)
{
    if (bytes == 0 || bytes > SIZE_MAX - CHOL_HUGE_PAGE)
        return NULL;
    size_t len = round_up(bytes, CHOL_HUGE_PAGE);
    void *p = aligned_alloc(CHOL_HUGE_PAGE, len);
#ifdef MADV_HUGEPAGE
    /* Advice only: with THP "never" (or a kernel without it) this fails and 4 KiB pages
     * serve, with the same results and only the TLB cost measured in bench/RESULTS.md. */
    if (p)
        (void)madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

int chol_matrix_init(chol_matrix *m, int64_t n, int64_t tile)
{
    memset(m, 0, sizeof *m);
    atomic_init(&m->notspd_order, 0);
    /* BLAS and LAPACKE take int sizes; one tile row of the whole matrix must fit one. */
    if (n < 1 || tile < 1 || n > INT_MAX)
        return PX_EINVAL;
    if (tile > n)
        tile = n;
    m->n = n;
    m->tile = tile;
    m->nt = (n + tile - 1) / tile;
    size_t ntiles = chol_tid(m->nt, 0);
    m->offset = calloc(ntiles, sizeof *m->offset);
    if (!m->offset)
        return PX_ENOMEM;
    size_t total = 0;
    for (int64_t i = 0; i < m->nt; i++) {
        for (int64_t j = 0; j <= i; j++) {
            m->offset[chol_tid(i, j)] = total;
            size_t elems = (size_t)chol_tsize(m, i) * (size_t)chol_tsize(m, j);
            if (total > SIZE_MAX / sizeof(double) - elems - CHOL_ALIGN_DOUBLES) {
                chol_matrix_fini(m);
                return PX_ENOMEM;
            }
            total += round_up(elems, CHOL_ALIGN_DOUBLES);
        }
    }
    /* One tile-update op streams three 512 KiB tiles (tile 256) through the core: on 4 KiB
     * pages that is 384 TLB entries per op, more than the L1 TLB and a good part of the L2
     * TLB, so a GEMM on cold tiles ran about 6% slower than on 2 MiB pages (bench/RESULTS.md). */
    m->data = chol_alloc_huge(total * sizeof(double));
    if (!m->data) {
        chol_matrix_fini(m);
        return PX_ENOMEM;
    }
    memset(m->data, 0, total * sizeof(double));
    return PX_OK;
}

void chol_matrix_fini(chol_matrix *m)
{
    if (m->vars) {
        size_t ntiles = chol_tid(m->nt, 0);
        for (size_t t = 0; t < ntiles; t++) {
            if (m->vars[t])
                (void)px_var_delete(m->eng, m->vars[t]);
        }
        free(m->vars);
    }
    free(m->data);
    free(m->offset);
    free(m->dinv);
    free(m->dinv_ok);
    memset(m, 0, sizeof *m);
}

int chol_matrix_attach(chol_matrix *m, px_engine *e)
{
    size_t ntiles = chol_tid(m->nt, 0);
    m->vars = calloc(ntiles, sizeof *m->vars);
    if (!m->vars)
        return PX_ENOMEM;
    m->eng = e;
    for (size_t t = 0; t < ntiles; t++) {
        m->vars[t] = px_var_new(e);
        if (!m->vars[t])
            return PX_ENOMEM;
    }
    return PX_OK;
}

double *chol_at(const chol_matrix *m, int64_t r, int64_t c)
{
    int64_t i = r / m->tile, j = c / m->tile;
    int64_t ld = chol_tsize(m, i);
    return chol_tile(m, i, j) + (c - j * m->tile) * ld + (r - i * m->tile);
}

void chol_matrix_copy(chol_matrix *dst, const chol_matrix *src)
{
    size_t last = chol_tid(src->nt - 1, src->nt - 1);
    size_t total = src->offset[last] +
                   (size_t)chol_tsize(src, src->nt - 1) * (size_t)chol_tsize(src, src->nt - 1);
    memcpy(dst->data, src->data, total * sizeof(double));
}

/* ---- deterministic test matrix ------------------------------------------------------------ */

/* splitmix64 finalizer: a counter-based generator, so entry (r, c) needs no sequential
 * state and tiles can be filled in any order on any worker with identical results. */
static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unit_uniform(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-53; /* [0, 1) with 53 random bits */
}

static double gen_entry(uint64_t seed, int64_t n, int64_t r, int64_t c)
{
    if (r < c) {
        int64_t t = r;
        r = c;
        c = t;
    }
    uint64_t h = mix64(seed ^ mix64((uint64_t)r * (uint64_t)n + (uint64_t)c));
    double v = 2.0 * unit_uniform(h) - 1.0;
    return r == c ? v + (double)n : v;
}

typedef struct gen_task {
    chol_matrix *m;
    uint64_t seed;
    int64_t i, j;
} gen_task;

static void gen_tile(const gen_task *g)
{
    const chol_matrix *m = g->m;
    int64_t rows = chol_tsize(m, g->i), cols = chol_tsize(m, g->j);
    int64_t r0 = g->i * m->tile, c0 = g->j * m->tile;
    double *t = chol_tile(m, g->i, g->j);
    /* Diagonal tiles are filled whole (both triangles): A keeps a full symmetric block. */
    for (int64_t c = 0; c < cols; c++)
        for (int64_t r = 0; r < rows; r++)
            t[c * rows + r] = gen_entry(g->seed, m->n, r0 + r, c0 + c);
}

static int gen_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    gen_tile(arg);
    return PX_OK;
}

int chol_generate(chol_matrix *m, uint64_t seed)
{
    size_t ntiles = chol_tid(m->nt, 0);
    gen_task *tasks = malloc(ntiles * sizeof *tasks);
    if (!tasks)
        return PX_ENOMEM;
    int rc = PX_OK;
    px_context cpu = {PX_DEV_CPU, 0};
    for (int64_t i = 0; i < m->nt; i++) {
        for (int64_t j = 0; j <= i; j++) {
            gen_task *g = &tasks[chol_tid(i, j)];
            *g = (gen_task){m, seed, i, j};
            if (!m->vars) {
                gen_tile(g);
                continue;
            }
            rc = px_engine_push(m->eng, &(px_op){.fn = gen_op,
                                                 .arg = g,
                                                 .writes = PX_VARS(m->vars[chol_tid(i, j)]),
                                                 .ctx = cpu,
                                                 .property = m->prop,
                                                 .name = "chol_generate"});
            if (rc != PX_OK)
                goto done;
        }
    }
done:
    if (m->vars) {
        int wrc = px_engine_wait_for_all(m->eng);
        if (rc == PX_OK)
            rc = wrc;
    }
    free(tasks);
    return rc;
}

/* ---- tile kernels ------------------------------------------------------------------------- */

enum { K_GEMM = 0, K_SYRK = 1, K_TRSM = 2, K_POTRF = 3 };

static int potrf_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    chol_task *t = arg;
    chol_matrix *m = t->m;
    int nb = (int)chol_tsize(m, t->k);
    int use_inv = 0;
    int info =
        chol_potrf_tile(nb, chol_tile(m, t->k, t->k), nb, chol_dinv_block(m, t->k), nb, &use_inv);
    /* Read by this column's TRSM ops, which the engine runs after this op (they read the
     * diagonal tile's Var this op writes), so a plain store is ordered for them. */
    m->dinv_ok[t->k] = (unsigned char)use_inv;
    if (info > 0) {
        /* The leading minor of order k*tile + info is not positive: A is not SPD. Relaxed
         * suffices: the caller reads it after px_engine_wait_for_all, which orders it. */
        int64_t expected = 0;
        atomic_compare_exchange_strong_explicit(&m->notspd_order, &expected, t->k * m->tile + info,
                                                memory_order_relaxed, memory_order_relaxed);
        return CHOL_ENOTSPD;
    }
    return info == 0 ? PX_OK : PX_EINVAL;
}

/* Below this order the recursive inversion calls LAPACK's dtrtri directly. */
enum { CHOL_TRTRI_LEAF = 32 };

/* X := inv(X) for X n x n lower triangular (non-unit), in place, by halving:
 *   inv([L11 0; L21 L22]) = [X11 0; -X22 L21 X11  X22],  X11 = inv(L11), X22 = inv(L22),
 * so all but the leaves' flops run in dtrmm (40-46 GFLOP/s for a 256 tile, single thread,
 * against 6-9 for LAPACKE_dtrtri on the whole tile: bench/RESULTS.md). */
static int trtri_lower_rec(int n, double *x, int ldx)
{
    if (n <= CHOL_TRTRI_LEAF)
        return (int)LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'L', 'N', n, x, ldx);
    int n1 = n / 2, n2 = n - n1;
    double *x21 = x + n1, *x22 = x + n1 + (size_t)n1 * (size_t)ldx;
    int info = trtri_lower_rec(n1, x, ldx);
    if (info == 0)
        info = trtri_lower_rec(n2, x22, ldx);
    if (info != 0)
        return info;
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, n2, n1, 1.0, x,
                ldx, x21, ldx);
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n2, n1, -1.0, x22,
                ldx, x21, ldx);
    return 0;
}

/* 1-norm (largest column sum of absolute values) of the lower triangle of an n x n matrix;
 * NaN when the triangle holds a NaN. */
static double norm1_lower(int n, const double *a, int lda)
{
    double best = 0.0;
    for (int c = 0; c < n; c++) {
        double sum = 0.0;
        for (int r = c; r < n; r++)
            sum += fabs(a[(size_t)c * (size_t)lda + r]);
        if (isnan(sum))
            return sum;
        best = sum > best ? sum : best;
    }
    return best;
}

double chol_inverse_lower(int n, const double *l, int ldl, double *x, int ldx)
{
    for (int c = 0; c < n; c++)
        memcpy(x + (size_t)c * (size_t)ldx + c, l + (size_t)c * (size_t)ldl + c,
               (size_t)(n - c) * sizeof(double));
    if (trtri_lower_rec(n, x, ldx) != 0)
        return INFINITY;
    double kappa = norm1_lower(n, l, ldl) * norm1_lower(n, x, ldx);
    return isfinite(kappa) ? kappa : INFINITY; /* overflow, or NaN from NaN input */
}

int chol_potrf_tile(int nb, double *a, int lda, double *inv, int ldinv, int *use_inv)
{
    *use_inv = 0;
    int info = (int)LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nb, a, lda);
    if (info == 0 && inv)
        *use_inv = chol_inverse_lower(nb, a, lda, inv, ldinv) <= CHOL_INV_COND_MAX;
    return info;
}

void chol_trsm_tile(int mb, int nb, const double *l, int ldl, const double *inv, int ldinv,
                    double *b, int ldb)
{
    if (inv)
        cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, mb, nb, 1.0,
                    inv, ldinv, b, ldb);
    else
        chol_trsm_rlt(mb, nb, l, ldl, b, ldb);
}

/* Below this many columns the recursive TRSM calls OpenBLAS's dtrsm directly. */
enum { CHOL_TRSM_LEAF = 32 };

void chol_trsm_rlt(int mb, int nb, const double *l, int ldl, double *b, int ldb)
{
    /* Solve X L^T = B for X (B is mb x nb, L nb x nb lower) by halving L:
     *   [X1 X2] [L11^T L21^T; 0 L22^T] = [B1 B2]
     *   X1 = B1 L11^-T,   X2 = (B2 - X1 L21^T) L22^-T.
     * Single-threaded OpenBLAS dtrsm runs this shape at 23-28 GFLOP/s for a 256 tile, its
     * dgemm at 45-48; recursing to 32 columns moves 7/8 of the flops into dgemm and runs the
     * whole solve at 33-40 GFLOP/s (bench/RESULTS.md). Same operation, same rounding class as
     * the blocked dtrsm (both are sums of the same products in a different order). */
    while (nb > CHOL_TRSM_LEAF) {
        int n1 = nb / 2, n2 = nb - n1;
        chol_trsm_rlt(mb, n1, l, ldl, b, ldb);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, mb, n2, n1, -1.0, b, ldb, l + n1, ldl,
                    1.0, b + (size_t)n1 * (size_t)ldb, ldb);
        l += n1 + (size_t)n1 * (size_t)ldl;
        b += (size_t)n1 * (size_t)ldb;
        nb = n2;
    }
    cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, mb, nb, 1.0, l,
                ldl, b, ldb);
}

static int trsm_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    chol_task *t = arg;
    chol_matrix *m = t->m;
    int mb = (int)chol_tsize(m, t->i), nb = (int)chol_tsize(m, t->k);
    chol_trsm_tile(mb, nb, chol_tile(m, t->k, t->k), nb, chol_dinv_for_trsm(m, t->k), nb,
                   chol_tile(m, t->i, t->k), mb);
    return PX_OK;
}

static int syrk_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    chol_task *t = arg;
    chol_matrix *m = t->m;
    int nj = (int)chol_tsize(m, t->j), nk = (int)chol_tsize(m, t->k);
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, nj, nk, -1.0, chol_tile(m, t->j, t->k), nj,
                1.0, chol_tile(m, t->j, t->j), nj);
    return PX_OK;
}

static int gemm_op(const px_run_context *rc, void *arg)
{
    (void)rc;
    chol_task *t = arg;
    chol_matrix *m = t->m;
    int mi = (int)chol_tsize(m, t->i), nj = (int)chol_tsize(m, t->j);
    int nk = (int)chol_tsize(m, t->k);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, mi, nj, nk, -1.0, chol_tile(m, t->i, t->k),
                mi, chol_tile(m, t->j, t->k), nj, 1.0, chol_tile(m, t->i, t->j), mi);
    return PX_OK;
}

px_engine *chol_engine_create(px_engine_kind kind, int workers, int fifo, px_fn_property *prop)
{
    int prioritized = kind == PX_ENGINE_PER_DEVICE && !fifo;
    if (workers < 1 || workers > 2048)
        return NULL;
    *prop = prioritized ? PX_FN_CPU_PRIORITIZED : PX_FN_NORMAL;
    return px_engine_create(kind, prioritized ? 2 * workers : workers);
}

int chol_matrix_alloc_inverses(chol_matrix *m)
{
    if (m->dinv_ok)
        return PX_OK;
    /* The last tile column has no tile below its diagonal, hence no TRSM: nt - 1 blocks, and
     * none for a one-tile matrix. Sizes cannot overflow: chol_matrix_init already allocated
     * the diagonal tiles, which are at least this large. */
    size_t blocks = (size_t)(m->nt - 1) * (size_t)(m->tile * m->tile);
    m->dinv_ok = calloc((size_t)m->nt, 1);
    m->dinv = blocks ? chol_alloc_huge(blocks * sizeof(double)) : NULL;
    if (!m->dinv_ok || (blocks && !m->dinv)) {
        free(m->dinv);
        free(m->dinv_ok);
        m->dinv = NULL;
        m->dinv_ok = NULL;
        return PX_ENOMEM;
    }
    return PX_OK;
}

int64_t chol_task_count(int64_t nt)
{
    /* nt POTRF, nt(nt-1)/2 TRSM, nt(nt-1)/2 SYRK, nt(nt-1)(nt-2)/6 GEMM */
    return nt + nt * (nt - 1) + nt * (nt - 1) * (nt - 2) / 6;
}

int chol_priority(int64_t nt, int64_t c, int kind)
{
    return (int)(4 * (nt - 1 - c) + kind);
}

int chol_push_factor(chol_matrix *m, chol_task *tasks)
{
    int64_t nt = m->nt;
    px_context cpu = {PX_DEV_CPU, 0};
    px_var **v = m->vars;
    int64_t next = 0;
    int rc = PX_OK;
    /* Push in the sequential right-looking order: the engine's result equals running the
     * ops one by one in push order, so this order is the specification of the DAG. */
    for (int64_t k = 0; k < nt && rc == PX_OK; k++) {
        chol_task *t = &tasks[next++];
        *t = (chol_task){m, K_POTRF, k, k, k};
        rc = px_engine_push(m->eng, &(px_op){.fn = potrf_op,
                                             .arg = t,
                                             .writes = PX_VARS(v[chol_tid(k, k)]),
                                             .ctx = cpu,
                                             .property = m->prop,
                                             .priority = chol_priority(nt, k, K_POTRF),
                                             .name = "potrf"});
        for (int64_t i = k + 1; i < nt && rc == PX_OK; i++) {
            t = &tasks[next++];
            *t = (chol_task){m, K_TRSM, i, k, k};
            rc = px_engine_push(m->eng, &(px_op){.fn = trsm_op,
                                                 .arg = t,
                                                 .reads = PX_VARS(v[chol_tid(k, k)]),
                                                 .writes = PX_VARS(v[chol_tid(i, k)]),
                                                 .ctx = cpu,
                                                 .property = m->prop,
                                                 .priority = chol_priority(nt, k, K_TRSM),
                                                 .name = "trsm"});
        }
        for (int64_t j = k + 1; j < nt && rc == PX_OK; j++) {
            t = &tasks[next++];
            *t = (chol_task){m, K_SYRK, j, j, k};
            rc = px_engine_push(m->eng, &(px_op){.fn = syrk_op,
                                                 .arg = t,
                                                 .reads = PX_VARS(v[chol_tid(j, k)]),
                                                 .writes = PX_VARS(v[chol_tid(j, j)]),
                                                 .ctx = cpu,
                                                 .property = m->prop,
                                                 .priority = chol_priority(nt, j, K_SYRK),
                                                 .name = "syrk"});
            for (int64_t i = j + 1; i < nt && rc == PX_OK; i++) {
                t = &tasks[next++];
                *t = (chol_task){m, K_GEMM, i, j, k};
                rc = px_engine_push(m->eng,
                                    &(px_op){.fn = gemm_op,
                                             .arg = t,
                                             .reads = PX_VARS(v[chol_tid(i, k)], v[chol_tid(j, k)]),
                                             .writes = PX_VARS(v[chol_tid(i, j)]),
                                             .ctx = cpu,
                                             .property = m->prop,
                                             .priority = chol_priority(nt, j, K_GEMM),
                                             .name = "gemm"});
            }
        }
    }
    return rc;
}

int chol_factor(chol_matrix *m)
{
    chol_task *tasks = malloc((size_t)chol_task_count(m->nt) * sizeof *tasks);
    if (!tasks)
        return PX_ENOMEM;
    atomic_store_explicit(&m->notspd_order, 0, memory_order_relaxed);
    if (chol_matrix_alloc_inverses(m) != PX_OK) {
        free(tasks);
        return PX_ENOMEM;
    }
    int rc = chol_push_factor(m, tasks);
    /* Always drain before freeing the task descriptors the ops point to. */
    int wrc = px_engine_wait_for_all(m->eng);
    if (rc == PX_OK)
        rc = wrc;
    free(tasks);
    return rc;
}

/* ---- residuals ---------------------------------------------------------------------------- */

static double sumsq(const double *x, size_t len)
{
    double s = 0.0;
    for (size_t e = 0; e < len; e++)
        s += x[e] * x[e];
    return s;
}

double chol_norm_fro(const chol_matrix *a)
{
    double s = 0.0;
    for (int64_t i = 0; i < a->nt; i++) {
        for (int64_t j = 0; j <= i; j++) {
            size_t len = (size_t)chol_tsize(a, i) * (size_t)chol_tsize(a, j);
            double t = sumsq(chol_tile(a, i, j), len);
            s += i == j ? t : 2.0 * t; /* an off-diagonal tile stands for itself and A(j,i) */
        }
    }
    return sqrt(s);
}

/* Copy the lower triangle of diagonal tile k of L into buf (nb x nb), zeroing the strict
 * upper triangle, which POTRF leaves holding A. */
static void lower_copy(const chol_matrix *l, int64_t k, double *buf)
{
    int64_t nb = chol_tsize(l, k);
    const double *src = chol_tile(l, k, k);
    for (int64_t c = 0; c < nb; c++)
        for (int64_t r = 0; r < nb; r++)
            buf[c * nb + r] = r >= c ? src[c * nb + r] : 0.0;
}

double chol_residual_exact(const chol_matrix *a, const chol_matrix *l)
{
    int64_t tile = a->tile, nt = a->nt;
    double *t = malloc((size_t)(tile * tile) * sizeof *t);
    double *li = malloc((size_t)(tile * tile) * sizeof *li);
    double *lj = malloc((size_t)(tile * tile) * sizeof *lj);
    if (!t || !li || !lj) {
        free(t);
        free(li);
        free(lj);
        return NAN;
    }
    double s = 0.0;
    for (int64_t i = 0; i < nt; i++) {
        int mi = (int)chol_tsize(a, i);
        for (int64_t j = 0; j <= i; j++) {
            int nj = (int)chol_tsize(a, j);
            size_t len = (size_t)mi * (size_t)nj;
            memcpy(t, chol_tile(a, i, j), len * sizeof *t);
            /* (L L^T)(i,j) = sum_{k <= j} L(i,k) L(j,k)^T; L(k,k) is lower triangular. */
            for (int64_t k = 0; k <= j; k++) {
                int nk = (int)chol_tsize(a, k);
                const double *pi = chol_tile(l, i, k), *pj = chol_tile(l, j, k);
                if (i == k) {
                    lower_copy(l, k, li);
                    pi = li;
                }
                if (j == k) {
                    lower_copy(l, k, lj);
                    pj = lj;
                }
                cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, mi, nj, nk, -1.0, pi, mi, pj,
                            nj, 1.0, t, mi);
            }
            double ss = sumsq(t, len);
            s += i == j ? ss : 2.0 * ss;
        }
    }
    free(t);
    free(li);
    free(lj);
    return sqrt(s);
}

/* Standard normal sample from two counter-based uniforms (Box-Muller). */
static double gauss(uint64_t seed, uint64_t idx)
{
    double u1 = unit_uniform(mix64(seed ^ mix64(2 * idx)));
    double u2 = unit_uniform(mix64(seed ^ mix64(2 * idx + 1)));
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

double chol_residual_estimate(const chol_matrix *a, const chol_matrix *l, int nvec, uint64_t seed)
{
    int64_t n = a->n, nt = a->nt, tile = a->tile;
    double *x = malloc((size_t)n * sizeof *x);
    double *y = malloc((size_t)n * sizeof *y);
    double *z = malloc((size_t)n * sizeof *z);
    if (!x || !y || !z || nvec < 1) {
        free(x);
        free(y);
        free(z);
        return NAN;
    }
    double s = 0.0;
    for (int v = 0; v < nvec; v++) {
        for (int64_t e = 0; e < n; e++)
            x[e] = gauss(seed + (uint64_t)v, (uint64_t)e);
        memset(y, 0, (size_t)n * sizeof *y);
        memset(z, 0, (size_t)n * sizeof *z);
        /* y = A x from the lower tiles (diagonal tiles of A are full). */
        for (int64_t i = 0; i < nt; i++) {
            int mi = (int)chol_tsize(a, i);
            for (int64_t j = 0; j <= i; j++) {
                int nj = (int)chol_tsize(a, j);
                const double *t = chol_tile(a, i, j);
                cblas_dgemv(CblasColMajor, CblasNoTrans, mi, nj, 1.0, t, mi, x + j * tile, 1, 1.0,
                            y + i * tile, 1);
                if (i != j)
                    cblas_dgemv(CblasColMajor, CblasTrans, mi, nj, 1.0, t, mi, x + i * tile, 1, 1.0,
                                y + j * tile, 1);
            }
        }
        /* z = L^T x, column block j: sum_{i >= j} L(i,j)^T x_i, done in place per block. */
        for (int64_t j = 0; j < nt; j++) {
            int nj = (int)chol_tsize(l, j);
            double *zj = z + j * tile;
            memcpy(zj, x + j * tile, (size_t)nj * sizeof *zj);
            cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, nj, chol_tile(l, j, j),
                        nj, zj, 1);
            for (int64_t i = j + 1; i < nt; i++) {
                int mi = (int)chol_tsize(l, i);
                cblas_dgemv(CblasColMajor, CblasTrans, mi, nj, 1.0, chol_tile(l, i, j), mi,
                            x + i * tile, 1, 1.0, zj, 1);
            }
        }
        /* y -= L z, row block i: sum_{j <= i} L(i,j) z_j; x is free to hold L(i,i) z_i. */
        for (int64_t i = 0; i < nt; i++) {
            int mi = (int)chol_tsize(l, i);
            for (int64_t j = 0; j < i; j++) {
                int nj = (int)chol_tsize(l, j);
                cblas_dgemv(CblasColMajor, CblasNoTrans, mi, nj, -1.0, chol_tile(l, i, j), mi,
                            z + j * tile, 1, 1.0, y + i * tile, 1);
            }
        }
        for (int64_t i = 0; i < nt; i++) {
            int mi = (int)chol_tsize(l, i);
            memcpy(x + i * tile, z + i * tile, (size_t)mi * sizeof *x);
            cblas_dtrmv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, mi,
                        chol_tile(l, i, i), mi, x + i * tile, 1);
            cblas_daxpy(mi, -1.0, x + i * tile, 1, y + i * tile, 1);
        }
        s += sumsq(y, (size_t)n);
    }
    free(x);
    free(y);
    free(z);
    return sqrt(s / nvec);
}

void chol_blas_single_thread(void)
{
    openblas_set_num_threads(1);
}

void chol_blas_set_threads(int n)
{
    openblas_set_num_threads(n);
}
