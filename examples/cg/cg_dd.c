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

/* Ap = A p (each row in its entry order, as cg.c's cg_spmv_dot) and p.Ap compensated: the
 * per-row reference of cg_spmv_dot_dd below. */
PX_REDUCE(cg_spmv_dot_dd_row, spmv_args, cg_dd, i, a, acc)
{
    double s = 0.0;
    const int64_t e = a->row_ptr[i + 1];
    for (int64_t k = a->row_ptr[i]; k < e; k++)
        s += a->val[k] * a->p[a->col[k]];
    a->ap[i] = s;
    cg_dd_add(acc, a->p[i] * s);
}

#ifdef __cplusplus
#define CG_DD_EXTERN_C extern "C"
#else
#define CG_DD_EXTERN_C
#endif

/* Rows per block of the host entry: their Ap (2 KiB) is still in L1 when the fold reads it. */
#define CG_DD_SPMV_BLOCK 256

/* The host entry of cg_spmv_dot_dd: each block of rows through cg_spmv_rows.h (four rows at a
 * time, the loop cg.c and bench_cg_bsp.c run), then p.Ap folded compensated in row order from
 * the Ap just written. Bitwise cg_spmv_dot_dd_row's results: each row is summed from 0.0 in
 * entry order, and p[i] * Ap[i] is added in row order. One row at a time, the SpMV ran at the
 * adder's latency: perf on 4 oversubscribed ranks x 2 threads (bcsstk16) put 1.45x bsp's
 * SpMV cycles per iteration in it (bench/RESULTS.md, Session 8). */
static void cg_spmv_dot_dd_host(int64_t b, int64_t e, void *args, void *accp)
{
    const spmv_args *a = (const spmv_args *)args;
    cg_dd acc = *(cg_dd *)accp;
    for (int64_t s = b; s < e; s += CG_DD_SPMV_BLOCK) {
        const int64_t t = e - s < CG_DD_SPMV_BLOCK ? e : s + CG_DD_SPMV_BLOCK;
        (void)cg_spmv_rows(s, t, a->row_ptr, a->col, a->val, a->p, a->ap, 0.0);
        for (int64_t i = s; i < t; ++i)
            cg_dd_add(&acc, a->p[i] * a->ap[i]);
    }
    *(cg_dd *)accp = acc;
}

/* cg_spmv_dot_dd: a host-only kernel (custom reducer; dcg.c uses cg_spmv_dot off host), made
 * by hand with the fields PX_REDUCE fills (parex/kernel.h), as cg.c's cg_spmv_dot. */
CG_DD_EXTERN_C const px_kernel cg_spmv_dot_dd = {PX_KERNEL_MAGIC,
                                                 PX_KERNEL_REDUCE,
                                                 "cg_spmv_dot_dd",
                                                 sizeof(spmv_args),
                                                 sizeof(cg_dd),
                                                 NULL,
                                                 cg_spmv_dot_dd_host,
                                                 NULL,
                                                 NULL,
                                                 PX_VALUE_CUSTOM,
                                                 0,
                                                 {NULL, NULL},
                                                 {NULL, NULL}};

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

/* cg.c's cg_init (x = 0, r = b, p = M^-1 b) folding r.p compensated. */
PX_REDUCE(cg_init_dd, init_args, cg_dd, i, a, acc)
{
    const double bi = a->b[i];
    const double zi = a->dinv ? a->dinv[i] * bi : bi;
    a->x[i] = 0.0;
    a->r[i] = bi;
    a->p[i] = zi;
    cg_dd_add(acc, bi * zi);
}

PX_REDUCE(cg_dot_dd, dot_args, cg_dd, i, a, acc)
{
    cg_dd_add(acc, a->u[i] * a->v[i]);
}
