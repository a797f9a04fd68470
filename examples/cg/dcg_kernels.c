/*
 * examples/cg/dcg_kernels.c - the distributed CG's own kernels and compensated sums
 * (dcg_kernels.h has why).
 *
 * Kept in the common subset of C11 and C++ (nvcc compiles it with the Cuda space, which adds
 * the device half of each kernel; the dd kernels are launched on host spaces only, where their
 * custom reducers run).
 */
#include "dcg_kernels.h"

#include "cg_spmv_rows.h"

/* out[j] = v[idx[j]]: the boundary values each neighbour needs, in send-list order. */
PX_FOR(dcg_pack, pack_args, j, a)
{
    a->out[j] = a->v[a->idx[j]];
}

PX_REDUCE(dcg_update_r, dcg_r_args, double, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    *acc += ri * ri;
}

PX_REDUCE(dcg_update_r_rz, dcg_r_args, double, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    *acc += ri * ri * a->dinv[i];
}

PX_FOR(dcg_update_xp, dcg_xp_args, i, a)
{
    const double pi = a->p[i];
    a->x[i] += a->coef[0] * pi;
    a->p[i] = a->r[i] + a->coef[1] * pi;
}

PX_FOR(dcg_update_xp_jacobi, dcg_xp_args, i, a)
{
    const double pi = a->p[i];
    a->x[i] += a->coef[0] * pi;
    a->p[i] = a->dinv[i] * a->r[i] + a->coef[1] * pi;
}

/* ---- compensated sums on dcg's arguments (alpha read at run time) ---------------------- */

PX_REDUCE(dcg_update_r_dd, dcg_r_args, cg_dd, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    cg_dd_add(acc, ri * ri);
}

PX_REDUCE(dcg_update_r_pair_dd, dcg_r_args, cg_dd2, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    cg_dd_add(&acc->rz, ri * ri * a->dinv[i]);
    cg_dd_add(&acc->rr, ri * ri);
}

/* Rows per block of dcg_spmv_dot_dd: their Ap (2 KiB) is still in L1 when p.Ap is folded. */
#define SPMV_DD_BLOCK 256

/* The host entry of dcg_spmv_dot_dd: rows [b, e) in blocks, each through cg_spmv_rows (four
 * rows at a time, every row summed from 0 in entry order: the Ap of cg_spmv_dot_dd, bitwise),
 * then p[i] * Ap[i] folded compensated in row order (cg_spmv_dot_dd's fold, bitwise). The
 * row-at-a-time loop of cg_spmv_dot_dd ran 1.66 M instructions per HPCG 32x32x8 rank and
 * iteration, 37 % more than bench_cg_bsp's 1.21 M (callgrind; bench/RESULTS.md, Session 8). */
static void spmv_dot_dd_host(int64_t b, int64_t e, void *args, void *accp)
{
    const spmv_args *a = (const spmv_args *)args;
    cg_dd acc = *(cg_dd *)accp;
    for (int64_t lo = b; lo < e; lo += SPMV_DD_BLOCK) {
        const int64_t hi = e - lo > SPMV_DD_BLOCK ? lo + SPMV_DD_BLOCK : e;
        (void)cg_spmv_rows(lo, hi, a->row_ptr, a->col, a->val, a->p, a->ap, 0.0);
        for (int64_t i = lo; i < hi; i++)
            cg_dd_add(&acc, a->p[i] * a->ap[i]);
    }
    *(cg_dd *)accp = acc;
}

/* A hand-made px_kernel (parex/kernel.h: the fields as PX_REDUCE fills them), host only. */
const px_kernel dcg_spmv_dot_dd = {PX_KERNEL_MAGIC,
                                   PX_KERNEL_REDUCE,
                                   "dcg_spmv_dot_dd",
                                   sizeof(spmv_args),
                                   sizeof(cg_dd),
                                   NULL,
                                   spmv_dot_dd_host,
                                   NULL,
                                   NULL,
                                   PX_VALUE_CUSTOM,
                                   0,
                                   {NULL, NULL},
                                   {NULL, NULL}};

/* MPI user function: inout[k] += in[k] for @p len cg_dd values. */
static void dd_mpi_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const cg_dd *s = (const cg_dd *)in;
    cg_dd *d = (cg_dd *)inout;
    for (int k = 0; k < *len; k++)
        cg_dd_join(&d[k], &s[k]);
}

int dcg_dd_mpi_create(MPI_Datatype *type, MPI_Op *op)
{
    *type = MPI_DATATYPE_NULL;
    *op = MPI_OP_NULL;
    if (MPI_Type_contiguous(2, MPI_DOUBLE, type) != MPI_SUCCESS ||
        MPI_Type_commit(type) != MPI_SUCCESS ||
        MPI_Op_create(dd_mpi_sum, 1 /* commutative: cg_dd_join is, bit for bit */, op) !=
            MPI_SUCCESS) {
        dcg_dd_mpi_free(type, op);
        return PX_EMPI;
    }
    return PX_OK;
}

void dcg_dd_mpi_free(MPI_Datatype *type, MPI_Op *op)
{
    if (*op != MPI_OP_NULL)
        MPI_Op_free(op);
    if (*type != MPI_DATATYPE_NULL)
        MPI_Type_free(type);
    *op = MPI_OP_NULL;
    *type = MPI_DATATYPE_NULL;
}
