/*
 * examples/cg/dcg_kernels.c - the distributed CG's own kernels and compensated sums
 * (dcg_kernels.h has why).
 *
 * Kept in the common subset of C11 and C++ (nvcc compiles it with the Cuda space, which adds
 * the device half of each kernel; the dd kernels are launched on host spaces only, where their
 * custom reducers run).
 */
#include "dcg_kernels.h"

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

/* ---- compensated sums ------------------------------------------------------------------- */

static void dd_identity(void *v)
{
    dcg_dd *d = (dcg_dd *)v;
    d->hi = 0.0;
    d->lo = 0.0;
}

static void dd_join(void *dst, const void *src)
{
    dcg_dd_join((dcg_dd *)dst, (const dcg_dd *)src);
}

static void dd2_identity(void *v)
{
    dcg_dd2 *d = (dcg_dd2 *)v;
    dd_identity(&d->rz);
    dd_identity(&d->rr);
}

static void dd2_join(void *dst, const void *src)
{
    dcg_dd2 *d = (dcg_dd2 *)dst;
    const dcg_dd2 *s = (const dcg_dd2 *)src;
    dcg_dd_join(&d->rz, &s->rz);
    dcg_dd_join(&d->rr, &s->rr);
}

const px_reducer dcg_dd_sum = PX_REDUCER_INIT(dcg_dd, dd_identity, dd_join, "dcg_dd_sum");
const px_reducer dcg_dd2_sum = PX_REDUCER_INIT(dcg_dd2, dd2_identity, dd2_join, "dcg_dd2_sum");

/* Ap = A p (each row in its entry order, as cg.c's cg_spmv_dot) and p.Ap compensated. */
PX_REDUCE(dcg_spmv_dot_dd, spmv_args, dcg_dd, i, a, acc)
{
    double s = 0.0;
    const int64_t e = a->row_ptr[i + 1];
    for (int64_t k = a->row_ptr[i]; k < e; k++)
        s += a->val[k] * a->p[a->col[k]];
    a->ap[i] = s;
    dcg_dd_add(acc, a->p[i] * s);
}

PX_REDUCE(dcg_update_r_dd, dcg_r_args, dcg_dd, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    dcg_dd_add(acc, ri * ri);
}

PX_REDUCE(dcg_update_r_pair_dd, dcg_r_args, dcg_dd2, i, a, acc)
{
    const double ri = a->r[i] - a->coef[0] * a->ap[i];
    a->r[i] = ri;
    dcg_dd_add(&acc->rz, ri * ri * a->dinv[i]);
    dcg_dd_add(&acc->rr, ri * ri);
}

/* cg.c's cg_init (x = 0, r = b, p = M^-1 b) folding r.p compensated. */
PX_REDUCE(dcg_init_dd, init_args, dcg_dd, i, a, acc)
{
    const double bi = a->b[i];
    const double zi = a->dinv ? a->dinv[i] * bi : bi;
    a->x[i] = 0.0;
    a->r[i] = bi;
    a->p[i] = zi;
    dcg_dd_add(acc, bi * zi);
}

PX_REDUCE(dcg_dot_dd, dot_args, dcg_dd, i, a, acc)
{
    dcg_dd_add(acc, a->u[i] * a->v[i]);
}

/* MPI user function: inout[k] += in[k] for @p len dcg_dd values. */
static void dd_mpi_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const dcg_dd *s = (const dcg_dd *)in;
    dcg_dd *d = (dcg_dd *)inout;
    for (int k = 0; k < *len; k++)
        dcg_dd_join(&d[k], &s[k]);
}

int dcg_dd_mpi_create(MPI_Datatype *type, MPI_Op *op)
{
    *type = MPI_DATATYPE_NULL;
    *op = MPI_OP_NULL;
    if (MPI_Type_contiguous(2, MPI_DOUBLE, type) != MPI_SUCCESS ||
        MPI_Type_commit(type) != MPI_SUCCESS ||
        MPI_Op_create(dd_mpi_sum, 1 /* commutative: dcg_dd_join is, bit for bit */, op) !=
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
