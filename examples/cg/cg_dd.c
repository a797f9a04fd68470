/*
 * examples/cg/cg_dd.c - compensated dot products for the CG solvers (cg_dd.h has why).
 *
 * Kept in the common subset of C11 and C++ (nvcc compiles it with the Cuda space); the
 * kernels are meant for host spaces, where their custom reducers run.
 */
#include "cg_dd.h"
#include "cg_spmv_rows.h"

static void dd_identity(void *v)
{
    cg_dd *d = (cg_dd *)v;
    d->hi = 0.0;
    d->lo = 0.0;
}

static void dd_join(void *dst, const void *src)
{
    cg_dd_join((cg_dd *)dst, (const cg_dd *)src);
}

static void dd2_identity(void *v)
{
    cg_dd2 *d = (cg_dd2 *)v;
    dd_identity(&d->rz);
    dd_identity(&d->rr);
}

static void dd2_join(void *dst, const void *src)
{
    cg_dd2 *d = (cg_dd2 *)dst;
    const cg_dd2 *s = (const cg_dd2 *)src;
    cg_dd_join(&d->rz, &s->rz);
    cg_dd_join(&d->rr, &s->rr);
}

const px_reducer cg_dd_sum = PX_REDUCER_INIT(cg_dd, dd_identity, dd_join, "cg_dd_sum");
const px_reducer cg_dd2_sum = PX_REDUCER_INIT(cg_dd2, dd2_identity, dd2_join, "cg_dd2_sum");

/* Ap = A p and p.Ap compensated, one row: the device half of cg_spmv_dot_dd (one row per
 * device thread) and the reference order of its host entry below. */
PX_REDUCE(cg_spmv_dot_dd_row, spmv_args, cg_dd, i, a, acc)
{
    double s = 0.0;
    const int64_t e = a->row_ptr[i + 1];
    for (int64_t k = a->row_ptr[i]; k < e; k++)
        s += a->val[k] * a->p[a->col[k]];
    a->ap[i] = s;
    cg_dd_add(acc, a->p[i] * s);
}

/* The host entry of cg_spmv_dot_dd: rows [b, e) four at a time through cg_spmv_rows.h's row
 * loop (the one cg.c's cg_spmv_dot and bench_cg_bsp.c run; a row at a time it is
 * latency-bound and about 1.3x slower), p[i] * ap[i] folded in row order: bitwise the same
 * as cg_spmv_dot_dd_row. */
static void cg_spmv_dot_dd_host(int64_t b, int64_t e, void *args, void *accp)
{
    const spmv_args *a = (const spmv_args *)args;
    cg_dd acc = *(cg_dd *)accp;
    const double *p = a->p;
    int64_t i = b;
    for (; i + CG_SPMV_GROUP <= e; i += CG_SPMV_GROUP) {
        double s[CG_SPMV_GROUP];
        cg_spmv_rows4(i, a->row_ptr, a->col, a->val, p, a->ap, s);
        for (int j = 0; j < CG_SPMV_GROUP; ++j)
            cg_dd_add(&acc, p[i + j] * s[j]);
    }
    for (; i < e; ++i)
        cg_dd_add(&acc, p[i] * cg_spmv_row1(i, a->row_ptr, a->col, a->val, p, a->ap));
    *(cg_dd *)accp = acc;
}

/* cg_spmv_dot_dd: cg_spmv_dot_dd_row's kernel with the host entry above (cg_kernels.h). */
CG_REDUCE_WITH_HOST(cg_spmv_dot_dd, spmv_args, cg_dd, PX_VALUE_CUSTOM, cg_spmv_dot_dd_host,
                    cg_spmv_dot_dd_row);

PX_REDUCE(cg_update_r_dd, update_r_args, cg_dd, i, a, acc)
{
    const double ri = a->r[i] - a->alpha * a->ap[i];
    a->r[i] = ri;
    cg_dd_add(acc, ri * ri);
}

PX_REDUCE(cg_update_r_pair_dd, update_r_args, cg_dd2, i, a, acc)
{
    const double ri = a->r[i] - a->alpha * a->ap[i];
    a->r[i] = ri;
    cg_dd_add(&acc->rz, ri * ri * a->dinv[i]);
    cg_dd_add(&acc->rr, ri * ri);
}

/* cg.c's cg_init (x = 0, r = b, p = M^-1 b, ap = 0) folding r.p compensated. */
PX_REDUCE(cg_init_dd, init_args, cg_dd, i, a, acc)
{
    const double bi = a->b[i];
    const double zi = a->dinv ? a->dinv[i] * bi : bi;
    a->x[i] = 0.0;
    a->r[i] = bi;
    a->p[i] = zi;
    a->ap[i] = 0.0;
    cg_dd_add(acc, bi * zi);
}

PX_REDUCE(cg_dot_dd, dot_args, cg_dd, i, a, acc)
{
    cg_dd_add(acc, a->u[i] * a->v[i]);
}
